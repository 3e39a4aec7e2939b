//! `pgmcp demo`: the small SQLite shop the README's quick start runs on,
//! carried inside the binary, so a person with only the release archive or
//! the bundle can try pgmcp without a database server.
//!
//! The bundle's person has no terminal to run `pgmcp demo` in: its "Try the
//! demo shop" setting (`PGMCP_DEMO=true`) makes pgmcp serve the shop itself,
//! read-only, from [`served_path`] in pgmcp's own cache directory, which
//! [`refresh`] makes hold exactly the embedded bytes at every start. That
//! file is the only one the setting writes.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `fixtures/demo.db`, built from `fixtures/demo.sql` (a test checks the two
/// agree): customers, products, orders, order_items and an `order_totals`
/// view.
pub const DATABASE: &[u8] = include_bytes!("../../fixtures/demo.db");

/// Why the demo database was not written.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(
        "{0} already exists: pgmcp never overwrites a file. Name another path (pgmcp demo FILE), or use that one: pgmcp query --database sqlite:{0} \"SELECT 1\""
    )]
    Exists(String),
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    /// Someone else could swap the served shop for a file of theirs.
    #[error("pgmcp keeps the demo shop only in a directory nobody else can change: {0}")]
    Untrusted(#[from] crate::process::trust::Untrusted),
}

/// Write the demo database to `path`, never over an existing file; returns
/// its absolute path.
pub fn write(path: &Path) -> Result<PathBuf, DemoError> {
    let shown = || path.display().to_string();
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => DemoError::Exists(shown()),
            _ => DemoError::Write { path: shown(), source },
        })?;
    file.write_all(DATABASE)
        .and_then(|()| file.sync_all())
        .map_err(|source| DemoError::Write { path: shown(), source })?;
    std::path::absolute(path).map_err(|source| DemoError::Write { path: shown(), source })
}

/// Where `PGMCP_DEMO` serves the shop from: `<cache dir>/pgmcp/demo.db`
/// (`~/.cache/pgmcp/demo.db` on Linux, `~/Library/Caches/pgmcp/demo.db` on
/// macOS, `%LOCALAPPDATA%\pgmcp\demo.db` on Windows). A cache, since the
/// binary can always write it again. `None` without an absolute home to
/// find it from: never the working directory.
pub fn served_path() -> Option<PathBuf> {
    dirs::cache_dir()
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("pgmcp").join("demo.db"))
}

/// Make `path` hold exactly the embedded shop: left alone when its bytes
/// are the embedded ones, else written whole beside it and renamed over
/// it, so a pgmcp already serving the old file keeps reading a whole one
/// and one of another version (or a file changed since) is replaced.
/// Anything but a regular file there (a symlink, a directory) is replaced
/// rather than followed. The directory must be one only its owner (or root)
/// can change, as the config's must ([`crate::process::trust`]): whoever else could
/// write it could swap the shop for a file of theirs between this check and
/// SQLite opening it, or point it elsewhere.
pub fn refresh(path: &Path) -> Result<(), DemoError> {
    let shown = || path.display().to_string();
    let fail = |source: std::io::Error| DemoError::Write { path: shown(), source };
    if let Some(dir) = path.parent() {
        create_dir(dir).map_err(fail)?;
        crate::process::trust::check_path(dir)?;
    }
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
    if regular && std::fs::read(path).is_ok_and(|bytes| bytes == DATABASE) {
        return Ok(());
    }
    let (tmp, mut file) = crate::process::private_file::create_temp(path).map_err(fail)?;
    let written = file
        .write_all(DATABASE)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(fail)
}

/// pgmcp's own directory under the cache dir: only its user's, like the
/// log's.
#[cfg(unix)]
fn create_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// What to run next, for the file at `path` (absolute): a query, and the
/// line that gives it to Claude Desktop.
pub fn next_steps(path: &Path) -> String {
    let url = shell_word(&format!("sqlite:{}", path.display()));
    format!(
        "Wrote the demo database, a small shop (customers, products, orders, order_items, order_totals), to {}.\n\
         Ask it something through the guarded pipeline:\n  \
         pgmcp query --database {url} \"SELECT customer, count(*) AS orders, sum(total) AS spent FROM order_totals GROUP BY customer ORDER BY spent DESC LIMIT 5\"\n\
         Give it to Claude Desktop (then restart it; cursor works the same way):\n  \
         pgmcp install claude-desktop --name pgmcp-demo --database {url}\n",
        path.display()
    )
}

/// `word` as one shell word: bare when it holds only safe characters, else
/// single-quoted. (Also the words of the line `install` prints.)
pub(crate) fn shell_word(word: &str) -> String {
    let safe = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-:+@%=,".contains(c));
    if safe {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_one_shell_word() {
        for (word, shown) in [
            ("sqlite:/home/me/pgmcp-demo.db", "sqlite:/home/me/pgmcp-demo.db"),
            ("sqlite:/home/me/my demo.db", "'sqlite:/home/me/my demo.db'"),
            ("sqlite:/tmp/it's.db", r"'sqlite:/tmp/it'\''s.db'"),
            ("sqlite:/tmp/$HOME.db", "'sqlite:/tmp/$HOME.db'"),
        ] {
            assert_eq!(shell_word(word), shown);
        }
    }

    #[test]
    fn refresh_writes_the_shop_and_replaces_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgmcp").join("demo.db");
        refresh(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), DATABASE);
        // A changed file (another version's shop, an edit) is the shop again.
        std::fs::write(&path, b"SQLite format 3\0 but not the shop").unwrap();
        refresh(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), DATABASE);
        // A symlink in its place is replaced, and what it pointed to is left alone.
        #[cfg(unix)]
        {
            let elsewhere = dir.path().join("elsewhere.db");
            std::fs::write(&elsewhere, b"mine").unwrap();
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
            refresh(&path).unwrap();
            assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
            assert_eq!(std::fs::read(&path).unwrap(), DATABASE);
            assert_eq!(std::fs::read(&elsewhere).unwrap(), b"mine");
        }
        // Nothing else is left in the directory: no temporary file.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["demo.db"]);
    }

    /// A directory others can write, or one reached through a directory
    /// others can write, is refused, and nothing is written there.
    #[cfg(unix)]
    #[test]
    fn refresh_refuses_a_directory_others_can_change() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("pgmcp");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = refresh(&open.join("demo.db")).unwrap_err();
        assert!(matches!(refused, DemoError::Untrusted(_)), "{refused}");
        assert!(refused.to_string().contains("chmod go-w"), "{refused}");
        assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
        // Through a symlink whose directory others can write: the target is
        // left alone.
        let shared = dir.path().join("shared");
        let target = dir.path().join("target");
        std::fs::create_dir(&shared).unwrap();
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("demo.db"), b"precious").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::os::unix::fs::symlink(&target, shared.join("pgmcp")).unwrap();
        assert!(matches!(
            refresh(&shared.join("pgmcp").join("demo.db")),
            Err(DemoError::Untrusted(_))
        ));
        assert_eq!(std::fs::read(target.join("demo.db")).unwrap(), b"precious");
    }

    #[test]
    fn the_embedded_database_is_an_sqlite_file() {
        assert!(DATABASE.starts_with(b"SQLite format 3\0"));
    }
}
