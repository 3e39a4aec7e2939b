//! Database files for the embedded engines: a fresh file in a temp dir, built
//! by the engine's own crate (not through pgmcp), its URL, a library
//! [`Engine`](pgmcp::Engine) on it, values read back through the engine's crate
//! ([`sqlite`], [`duckdb`]), and a [`Snapshot`] of everything that would show
//! a write.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pgmcp::Config;
use tempfile::TempDir;

use super::protection;

/// A fresh directory holding `name`, made by `make` from `sql` and closed
/// before this returns.
fn fixture_named(name: &str, sql: &str, make: fn(&Path, &str)) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    make(&path, sql);
    (dir, path)
}

/// `SCHEME:///abs/path` for an absolute `path`.
fn url_with(scheme: &str, path: &Path) -> String {
    assert!(path.is_absolute(), "{}", path.display());
    format!("{scheme}://{}", path.display())
}

/// Built-in defaults (read-only, 500 rows, 30 s), adjusted by `edit`.
fn config(edit: impl FnOnce(&mut Config)) -> Config {
    let mut config = Config::builtin();
    edit(&mut config);
    config
}

/// Writes allowed, and the protection flags of `spec` on: one flag
/// (`allow_attach`) or several joined by `+` ([`protection::apply`]).
fn allow(c: &mut Config, spec: &str) {
    c.read_only = false;
    protection::apply(&mut c.protection, spec).unwrap_or_else(|e| panic!("{e}"));
}

/// SQLite files, built and read with rusqlite.
pub mod sqlite {
    use std::path::{Path, PathBuf};

    use pgmcp::{Config, Engine, Target};
    use rusqlite::Connection;
    use tempfile::TempDir;

    /// A fresh directory holding `data.db`, built by `sql` through rusqlite
    /// (not through pgmcp). The connection is closed before this returns.
    pub fn fixture(sql: &str) -> (TempDir, PathBuf) {
        super::fixture_named("data.db", sql, make_db)
    }

    /// Create the SQLite file `path` with `sql`, and close it.
    pub fn make_db(path: &Path, sql: &str) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(sql).unwrap();
        conn.close().unwrap();
    }

    /// `sqlite:///abs/path.db` for an absolute `path`.
    pub fn url(path: &Path) -> String {
        super::url_with("sqlite", path)
    }

    /// An engine on the file `path` with built-in defaults (read-only, 500
    /// rows, 30 s), adjusted by `edit`.
    pub fn engine_on(path: &Path, edit: impl FnOnce(&mut Config)) -> Engine {
        Engine::sqlite(
            super::config(edit),
            Some(Target::parse("sqlite", &url(path)).unwrap()),
            None,
        )
    }

    /// A writable engine with the protection flags of `spec` on.
    pub fn allowing(path: &Path, spec: &str) -> Engine {
        engine_on(path, |c| super::allow(c, spec))
    }

    /// One integer from `sql`, read straight from the file with rusqlite.
    pub fn scalar(path: &Path, sql: &str) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    }

    /// One text value from `sql`, read straight from the file with rusqlite.
    pub fn text(path: &Path, sql: &str) -> String {
        Connection::open(path)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    }
}

/// DuckDB files, built and read with the duckdb crate.
#[cfg(feature = "duckdb")]
pub mod duckdb {
    use std::path::{Path, PathBuf};

    use pgmcp::{Config, Engine, Target};
    use tempfile::TempDir;

    /// A fresh directory holding `data.duckdb`, built by `sql` with the duckdb
    /// crate (not through pgmcp) and closed before this returns.
    pub fn fixture(sql: &str) -> (TempDir, PathBuf) {
        super::fixture_named("data.duckdb", sql, make_db)
    }

    /// Create the DuckDB file `path` with `sql`, and close it.
    pub fn make_db(path: &Path, sql: &str) {
        let conn = duckdb::Connection::open(path).unwrap();
        conn.execute_batch(sql).unwrap();
        conn.close().unwrap();
    }

    /// `duckdb:///abs/path.duckdb` for an absolute `path`.
    pub fn url(path: &Path) -> String {
        super::url_with("duckdb", path)
    }

    /// An engine on `path` with built-in defaults (read-only, 500 rows, 30
    /// s), adjusted by `edit`.
    pub fn engine_on(path: &Path, edit: impl FnOnce(&mut Config)) -> Engine {
        Engine::duckdb(super::config(edit), Target::parse("duckdb", &url(path)).unwrap())
    }

    /// A writable engine with the protection flags of `spec` on.
    pub fn allowing(path: &Path, spec: &str) -> Engine {
        engine_on(path, |c| super::allow(c, spec))
    }

    /// One value read straight from the file with the duckdb crate (no engine
    /// may have it open).
    pub fn scalar(path: &Path, sql: &str) -> i64 {
        let conn = duckdb::Connection::open(path).unwrap();
        let value = conn.query_row(sql, [], |r| r.get(0)).unwrap();
        conn.close().unwrap();
        value
    }
}

/// The names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Everything that would show a write: every byte of the file, its mtime, and
/// the names beside it (SQLite's `-journal`, `-wal` or `-shm` file, DuckDB's
/// `.wal`).
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub bytes: Vec<u8>,
    pub modified: SystemTime,
    pub dir: Vec<String>,
}

pub fn snapshot(path: &Path) -> Snapshot {
    Snapshot {
        bytes: std::fs::read(path).unwrap(),
        modified: std::fs::metadata(path).unwrap().modified().unwrap(),
        dir: listing(path.parent().unwrap()),
    }
}

/// The directories of the machine no answer of an embedded engine may show,
/// as given and with symbolic links resolved: the home directory `home`
/// the server runs with, the working directory of the server process `pid`,
/// and the directory of its database file `db` (if any).
pub fn private_places(pid: u32, home: &Path, db: Option<&Path>) -> Vec<String> {
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).expect("the server's working directory");
    let dirs = [
        Some(home.to_owned()),
        Some(cwd),
        db.and_then(Path::parent).map(Path::to_owned),
    ];
    let mut places: Vec<String> = Vec::new();
    for dir in dirs.into_iter().flatten() {
        for form in [Some(dir.clone()), dir.canonicalize().ok()].into_iter().flatten() {
            let form = form.to_string_lossy().into_owned();
            assert!(form.len() > 5, "a directory too short to look for: {form}");
            if !places.contains(&form) {
                places.push(form);
            }
        }
    }
    places
}

/// Panics when the whole `tools/call` result (text and structured content,
/// answer or error) names any of `places`.
pub fn assert_shows_none(result: &serde_json::Value, places: &[String], what: &str) {
    let text = result.to_string();
    for place in places {
        assert!(!text.contains(place.as_str()), "{what} shows {place}:\n{text}");
    }
}
