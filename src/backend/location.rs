//! Which database file a call uses: the connection's own (`sqlite:` and
//! `duckdb:` forms), or an SQLite file a call names inside the configured root
//! directory. Error texts show paths as they were given, never the server's
//! absolute paths.

use std::path::{Component, Path, PathBuf};

/// A database file to open, and how to name it in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub file: DbFile,
    /// The path as the person or model wrote it.
    pub shown: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbFile {
    /// `sqlite::memory:` (a private, empty database per call) or
    /// `duckdb::memory:` (one empty database for the session).
    Memory,
    Path(PathBuf),
}

impl Target {
    /// Parse a connection string of `scheme` (`sqlite` or `duckdb`):
    /// `sqlite:///abs/path.db`, `sqlite:/abs/path.db`, `sqlite:relative/path.db`
    /// (relative to the working directory) or `sqlite::memory:`, and the same
    /// with `duckdb:`. The `scheme://` form is percent-decoded.
    pub fn parse(scheme: &str, url: &str) -> Result<Target, String> {
        let rest = url
            .strip_prefix(scheme)
            .and_then(|r| r.strip_prefix(':'))
            .ok_or_else(|| {
                let article = if scheme == "sqlite" { "an" } else { "a" };
                format!("\"{url}\" is not {article} {scheme}: connection string")
            })?;
        if rest == ":memory:" {
            return Ok(Target {
                file: DbFile::Memory,
                shown: ":memory:".to_owned(),
            });
        }
        if rest.contains('?') {
            return Err(format!(
                "\"{url}\": options after ? are not supported; read-only mode comes from server.read_only"
            ));
        }
        let path = match rest.strip_prefix("//") {
            Some(abs) if abs.starts_with('/') => percent_decode(abs)?,
            Some(_) => {
                let ext = if scheme == "sqlite" { "db" } else { scheme };
                return Err(format!(
                    "\"{url}\": {scheme}:// takes an absolute path (three slashes: {scheme}:///path/to/file.{ext}); use {scheme}:relative/path.{ext} for a relative one"
                ));
            }
            None => rest.to_owned(),
        };
        if path.is_empty() {
            return Err(format!("\"{url}\" names no file"));
        }
        Ok(Target {
            shown: path.clone(),
            file: DbFile::Path(PathBuf::from(path)),
        })
    }
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid percent-encoding in \"{text}\""))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("\"{text}\" does not decode to UTF-8"))
}

/// A directory whose SQLite files calls may name (`sqlite.root`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Canonical: symlinks resolved, so containment can be checked.
    dir: PathBuf,
}

pub const TRAVERSAL: &str = "Path traversal detected";

impl Root {
    pub fn new(dir: &Path) -> Result<Root, String> {
        let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
        if !dir.is_dir() {
            return Err(format!("{} is not a directory", dir.display()));
        }
        Ok(Root { dir })
    }

    /// The file `given` names inside the root. Absolute paths, `..` and
    /// symlinks that lead outside are refused alike, without saying where the
    /// root is.
    pub fn resolve(&self, given: &str) -> Result<Target, String> {
        let relative = Path::new(given);
        if given.is_empty() {
            return Err("database is empty: give a path inside the configured directory".to_owned());
        }
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(TRAVERSAL.to_owned());
        }
        let joined = self.dir.join(relative);
        let real = match joined.canonicalize() {
            Ok(real) => real,
            // A dangling symlink is missing too; only an existing file can
            // be checked for containment.
            Err(_) => return Err(format!("Database not found: {given}")),
        };
        if !real.starts_with(&self.dir) {
            return Err(TRAVERSAL.to_owned());
        }
        if !real.is_file() {
            return Err(format!("Database not found: {given}"));
        }
        Ok(Target {
            file: DbFile::Path(real),
            shown: given.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_strings() {
        let path = |p: &str| DbFile::Path(PathBuf::from(p));
        let cases = [
            ("sqlite:///abs/path.db", Ok(path("/abs/path.db"))),
            ("sqlite:///my%20dir/x.db", Ok(path("/my dir/x.db"))),
            ("sqlite:/abs/path.db", Ok(path("/abs/path.db"))),
            ("sqlite:fixtures/demo.db", Ok(path("fixtures/demo.db"))),
            ("sqlite:demo.db", Ok(path("demo.db"))),
            ("sqlite::memory:", Ok(DbFile::Memory)),
            ("sqlite://host/x.db", Err("sqlite:// takes an absolute path")),
            ("sqlite:x.db?mode=rw", Err("options after ? are not supported")),
            ("sqlite:", Err("names no file")),
            ("sqlite:///bad%zz", Err("invalid percent-encoding")),
            ("postgres://x", Err("is not an sqlite: connection string")),
            ("sqlitex:y.db", Err("is not an sqlite: connection string")),
            ("duckdb:///abs/w.duckdb", Ok(path("/abs/w.duckdb"))),
            ("duckdb:rel/w.duckdb", Ok(path("rel/w.duckdb"))),
            ("duckdb::memory:", Ok(DbFile::Memory)),
            ("duckdb://host/w.duckdb", Err("duckdb:// takes an absolute path")),
        ];
        for (url, want) in cases {
            let scheme = if url.starts_with("duckdb") { "duckdb" } else { "sqlite" };
            match (Target::parse(scheme, url), want) {
                (Ok(t), Ok(file)) => assert_eq!(t.file, file, "{url}"),
                (Err(e), Err(part)) => assert!(e.contains(part), "{url}: {e}"),
                (got, want) => panic!("{url}: got {got:?}, want {want:?}"),
            }
        }
    }
}
