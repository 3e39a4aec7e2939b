//! The password file (`~/.pgpass`, `PGPASSFILE`, `passfile=`), read with
//! libpq's rules so one file serves psql and pgmcp alike.
//!
//! Each line is `hostname:port:database:username:password`; `#` starts a
//! comment line; a field may be `*` to match anything; `\:` and `\\` escape a
//! colon and a backslash. The first matching line wins. The host `localhost`
//! also matches a connection over the default Unix socket directory, and the
//! database defaults to the user name. A file that group or others may read is
//! ignored (with a warning), as libpq does, so a password never comes from a
//! file anyone else could have read. On Windows, as in libpq, the default file
//! is `%APPDATA%\postgresql\pgpass.conf` and its permissions are not checked:
//! it is taken to live in a directory only its user can read.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::params::Host;

/// The Unix-socket directory libpq is built with on Debian and Ubuntu; a
/// connection there matches `localhost` lines, as in libpq.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// What one connection is matched on.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub host: &'a Host,
    pub port: u16,
    /// The database connected to (the user name when none was given).
    pub dbname: &'a str,
    pub user: &'a str,
}

/// Why a password file was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ignored {
    #[error(
        "password file {} has group or world access and was ignored; permissions should be u=rw (0600) or less: chmod 0600 {}",
        .0.display(),
        .0.display()
    )]
    Permissions(PathBuf),
    #[error("password file {} is not a plain file and was ignored", .0.display())]
    NotAFile(PathBuf),
    #[error("password file {} could not be read: {}", .0.display(), .1)]
    Unreadable(PathBuf, String),
}

/// The password for `target` from the file at `path`: `Ok(None)` when the file
/// does not exist or no line matches.
pub fn lookup(path: &Path, target: Target<'_>) -> Result<Option<String>, Ignored> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Ignored::Unreadable(path.to_owned(), e.to_string())),
    };
    if !meta.is_file() {
        return Err(Ignored::NotAFile(path.to_owned()));
    }
    if !private(&meta) {
        return Err(Ignored::Permissions(path.to_owned()));
    }
    let text = fs::read_to_string(path).map_err(|e| Ignored::Unreadable(path.to_owned(), e.to_string()))?;
    Ok(find(&text, target))
}

/// Whether neither group nor others may read or write the file.
#[cfg(unix)]
fn private(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o077 == 0
}

/// Windows files have ACLs, not modes; libpq does not check them either.
#[cfg(not(unix))]
fn private(_: &fs::Metadata) -> bool {
    true
}

/// The first line of `text` that matches `target`, and its password.
pub fn find(text: &str, target: Target<'_>) -> Option<String> {
    let host = match target.host {
        Host::Tcp(name) => name.clone(),
        Host::Unix(dir) if dir == Path::new(DEFAULT_SOCKET_DIR) => "localhost".to_owned(),
        Host::Unix(dir) => dir.display().to_string(),
    };
    let port = target.port.to_string();
    let wanted = [host.as_str(), port.as_str(), target.dbname, target.user];
    text.lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .find_map(|line| {
            let fields = split(line);
            // Four fields to match and a password; a line with fewer is skipped.
            if fields.len() < 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field.as_str() == "*" || field.as_str() == want);
            // Anything after a fifth unescaped colon is part of the password.
            matches.then(|| fields[4..].join(":")).filter(|p| !p.is_empty())
        })
}

/// Split a line at unescaped colons, removing the escapes.
fn split(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: &str) -> Host {
        Host::Tcp(host.to_owned())
    }

    /// (file, host, port, dbname, user, expected password)
    #[test]
    fn matching_rules() {
        let file = r"# comment:*:*:*:never
db.example.com:5432:shop:alice:exact
db.example.com:*:*:alice:any-port-any-db
*:6543:*:*:port-6543
localhost:5432:app:bob:local
/tmp/pg\:sock:5432:*:carol:socket-path
esc\\host:5432:*:*:back\\slash
colon:5432:*:*:pass\:word:tail
blank:5432:*:*:
short:5432:*
";
        let cases: &[(Host, u16, &str, &str, Option<&str>)] = &[
            (tcp("db.example.com"), 5432, "shop", "alice", Some("exact")),
            (tcp("db.example.com"), 7777, "other", "alice", Some("any-port-any-db")),
            (tcp("db.example.com"), 5432, "shop", "mallory", None),
            (tcp("anything"), 6543, "x", "y", Some("port-6543")),
            (tcp("localhost"), 5432, "app", "bob", Some("local")),
            // The default socket directory counts as localhost; another does not.
            (Host::Unix(DEFAULT_SOCKET_DIR.into()), 5432, "app", "bob", Some("local")),
            (Host::Unix("/tmp".into()), 5432, "app", "bob", None),
            (
                Host::Unix("/tmp/pg:sock".into()),
                5432,
                "db",
                "carol",
                Some("socket-path"),
            ),
            (tcp(r"esc\host"), 5432, "d", "u", Some(r"back\slash")),
            (tcp("colon"), 5432, "d", "u", Some("pass:word:tail")),
            // An empty password is no password; a short line matches nothing.
            (tcp("blank"), 5432, "d", "u", None),
            (tcp("short"), 5432, "d", "u", None),
        ];
        for (host, port, dbname, user, expected) in cases {
            let target = Target {
                host,
                port: *port,
                dbname,
                user,
            };
            assert_eq!(
                find(file, target).as_deref(),
                *expected,
                "{host:?}:{port}:{dbname}:{user}"
            );
        }
    }

    #[test]
    fn first_match_wins_and_crlf_is_tolerated() {
        let file = "h:5432:*:u:first\r\nh:5432:*:u:second\r\n";
        let target = Target {
            host: &tcp("h"),
            port: 5432,
            dbname: "d",
            user: "u",
        };
        assert_eq!(find(file, target).as_deref(), Some("first"));
    }

    #[cfg(unix)]
    #[test]
    fn files_others_can_read_are_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        fs::write(&path, "*:*:*:*:pw\n").unwrap();
        let target = Target {
            host: &tcp("h"),
            port: 5432,
            dbname: "d",
            user: "u",
        };
        for (mode, expected) in [
            (0o600, Ok(Some("pw".to_owned()))),
            (0o400, Ok(Some("pw".to_owned()))),
            (0o640, Err(Ignored::Permissions(path.clone()))),
            (0o604, Err(Ignored::Permissions(path.clone()))),
        ] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(lookup(&path, target), expected, "{mode:o}");
        }
        assert_eq!(lookup(&dir.path().join("missing"), target), Ok(None));
        assert_eq!(
            lookup(dir.path(), target),
            Err(Ignored::NotAFile(dir.path().to_owned()))
        );
        let text = Ignored::Permissions(path.clone()).to_string();
        assert!(text.contains("chmod 0600"), "{text}");
    }
}
