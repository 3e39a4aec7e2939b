//! `pgmcp demo`: the small SQLite shop the README's quick start runs on,
//! carried inside the binary, so a person with only the release archive or
//! the bundle can try pgmcp without a database server.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `fixtures/demo.db`, built from `fixtures/demo.sql` (a test checks the two
/// agree): customers, products, orders, order_items and an `order_totals`
/// view.
pub const DATABASE: &[u8] = include_bytes!("../fixtures/demo.db");

/// Why the demo database was not written.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(
        "{0} already exists: pgmcp never overwrites a file. Name another path (pgmcp demo FILE), or use that one: pgmcp query --database sqlite:{0} \"SELECT 1\""
    )]
    Exists(String),
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
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
    fn the_embedded_database_is_an_sqlite_file() {
        assert!(DATABASE.starts_with(b"SQLite format 3\0"));
    }
}
