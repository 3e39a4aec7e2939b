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

/// What the password file holds for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The first matching line's password, and that line's number (from 1).
    Found { password: String, line: usize },
    /// There is no file at the path.
    Missing,
    /// No line matches; `near` lists the lines one field away from matching,
    /// which usually say what is wrong with the connection settings.
    NoMatch { near: Vec<Near> },
}

/// A line that would match but for one field: which field, and the line's
/// number. Never what the line holds: a field's value can be a password (a
/// line with the user and password swapped, or a file that is no password
/// file at all, named by `PGPASSFILE`), and what is said about a connection
/// reaches the MCP client. The person who can open the file needs only the
/// line number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Near {
    pub field: Field,
    /// The line's number, from 1.
    pub line: usize,
}

/// One of the four fields a line is matched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Host,
    Port,
    Database,
    User,
}

impl Field {
    const ALL: [Field; 4] = [Field::Host, Field::Port, Field::Database, Field::User];

    pub fn name(self) -> &'static str {
        match self {
            Field::Host => "host",
            Field::Port => "port",
            Field::Database => "database",
            Field::User => "user",
        }
    }
}

/// What the file at `path` holds for `target`.
pub fn lookup(path: &Path, target: Target<'_>) -> Result<Lookup, Ignored> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Lookup::Missing),
        Err(e) => return Err(Ignored::Unreadable(path.to_owned(), e.to_string())),
    };
    if !meta.is_file() {
        return Err(Ignored::NotAFile(path.to_owned()));
    }
    if !private(&meta) {
        return Err(Ignored::Permissions(path.to_owned()));
    }
    let text = fs::read_to_string(path).map_err(|e| Ignored::Unreadable(path.to_owned(), e.to_string()))?;
    Ok(match find(&text, target) {
        Some((line, password)) => Lookup::Found { password, line },
        None => Lookup::NoMatch {
            near: near(&text, target),
        },
    })
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

/// The host field a line must hold to match `target`.
fn host_field(host: &Host) -> String {
    match host {
        Host::Tcp(name) => name.clone(),
        Host::Unix(dir) if dir == Path::new(DEFAULT_SOCKET_DIR) => "localhost".to_owned(),
        Host::Unix(dir) => dir.display().to_string(),
    }
}

/// The four fields of `text`'s lines that can match, with each line's number
/// (from 1) and password; comments, blank lines, lines with fewer than five
/// fields and lines with an empty password (no password) are left out.
fn entries(text: &str) -> impl Iterator<Item = (usize, Vec<String>)> + '_ {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix('\r').unwrap_or(line)))
        .filter(|(_, line)| !line.starts_with('#') && !line.is_empty())
        .filter_map(|(number, line)| {
            let mut fields = split(line);
            if fields.len() < 5 {
                return None;
            }
            // Anything after a fifth unescaped colon is part of the password.
            let password = fields.split_off(4).join(":");
            fields.push(password);
            (!fields[4].is_empty()).then_some((number, fields))
        })
}

/// Which of `fields`' first four do not match `target`.
fn mismatches(fields: &[String], target: Target<'_>) -> Vec<Field> {
    let host = host_field(target.host);
    let port = target.port.to_string();
    let wanted = [host.as_str(), port.as_str(), target.dbname, target.user];
    Field::ALL
        .into_iter()
        .zip(fields.iter().zip(wanted))
        .filter(|(_, (field, want))| field.as_str() != "*" && field.as_str() != *want)
        .map(|(which, _)| which)
        .collect()
}

/// The first line of `text` that matches `target`: its number (from 1) and
/// its password.
pub fn find(text: &str, target: Target<'_>) -> Option<(usize, String)> {
    entries(text)
        .find(|(_, fields)| mismatches(fields, target).is_empty())
        .map(|(number, mut fields)| (number, fields.swap_remove(4)))
}

/// The first line of `text` that misses `target` by each field alone, in
/// the file's order: a line for another database of the same host, port and
/// user says more about a mistyped database name than "no password".
pub fn near(text: &str, target: Target<'_>) -> Vec<Near> {
    let mut out: Vec<Near> = Vec::new();
    for (line, fields) in entries(text) {
        if let [field] = mismatches(&fields, target)[..]
            && !out.iter().any(|n| n.field == field)
        {
            out.push(Near { field, line });
        }
    }
    out
}

/// `text` as a field of a password file line: `:` and `\` escaped.
pub fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace(':', "\\:")
}

/// What a line must start with to match `target` exactly:
/// `host:port:database:user`.
pub fn key(target: Target<'_>) -> String {
    format!(
        "{}:{}:{}:{}",
        escape(&host_field(target.host)),
        target.port,
        escape(target.dbname),
        escape(target.user)
    )
}

/// The line that gives `target` its password, with `password` (which may be
/// a placeholder) as its last field.
pub fn line_for(target: Target<'_>, password: &str) -> String {
    format!("{}:{}", key(target), escape(password))
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
                find(file, target).map(|(_, password)| password).as_deref(),
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
        assert_eq!(find(file, target), Some((1, "first".to_owned())));
    }

    /// (file, host, port, dbname, user, which lines are one field away, and
    /// in which field)
    #[test]
    fn lines_one_field_away() {
        let file = "\
# the right database is shop
127.0.0.1:5432:shop:app:pw
localhost:5432:wrongdb:app:pw
127.0.0.1:5433:wrongdb:app:pw
127.0.0.1:5432:wrongdb:bob:pw
127.0.0.1:5432:other:app:pw
127.0.0.1:5432:shop:app:again
db.example.com:6543:billing:admin:pw
127.0.0.1:5432:blank:app:
";
        let at =
            |host: &'static str, port: u16, dbname: &'static str, user: &'static str| (tcp(host), port, dbname, user);
        let near_of = |(host, port, dbname, user): (Host, u16, &str, &str)| {
            near(
                file,
                Target {
                    host: &host,
                    port,
                    dbname,
                    user,
                },
            )
            .into_iter()
            .map(|n| format!("{}@{}", n.field.name(), n.line))
            .collect::<Vec<_>>()
        };
        let cases = [
            (
                at("127.0.0.1", 5432, "wrongdb", "app"),
                // Line 6 is for another database too: the first one is named.
                vec!["database@2", "host@3", "port@4", "user@5"],
            ),
            // Two fields away (another server's line) is not near; an empty
            // password is no line at all.
            (at("127.0.0.1", 5432, "billing", "admin"), vec![]),
            (at("127.0.0.1", 5432, "blanc", "app"), vec!["database@2"]),
            (at("localhost", 5432, "shop", "app"), vec!["host@2", "database@3"]),
        ];
        for (target, expected) in cases {
            assert_eq!(near_of(target.clone()), expected, "{target:?}");
        }
    }

    /// A line with the user and the password swapped is one field away from
    /// a connection as the password's user: what is kept of it is which
    /// field differs and the line number, never the field's value.
    #[test]
    fn a_near_line_keeps_no_value() {
        let file = "# mine\n127.0.0.1:54329:*:NearPw2Swapped:pwuser\n";
        let host = tcp("127.0.0.1");
        let target = Target {
            host: &host,
            port: 54329,
            dbname: "shop",
            user: "pwuser",
        };
        let found = near(file, target);
        assert_eq!(
            found,
            vec![Near {
                field: Field::User,
                line: 2
            }]
        );
        assert!(!format!("{found:?}").contains("NearPw2Swapped"));
    }

    #[test]
    fn lines_written_for_a_connection() {
        let cases = [
            (
                tcp("db.example.com"),
                5432,
                "shop",
                "app",
                "s3cret",
                "db.example.com:5432:shop:app:s3cret",
            ),
            (tcp("::1"), 5432, "shop", "app", "pw", r"\:\:1:5432:shop:app:pw"),
            (
                Host::Unix(DEFAULT_SOCKET_DIR.into()),
                5433,
                "my:db",
                r"we\ird",
                "<password>",
                r"localhost:5433:my\:db:we\\ird:<password>",
            ),
            (Host::Unix("/tmp".into()), 5432, "d", "u", "pw", "/tmp:5432:d:u:pw"),
        ];
        for (host, port, dbname, user, password, expected) in cases {
            let target = Target {
                host: &host,
                port,
                dbname,
                user,
            };
            let line = line_for(target, password);
            assert_eq!(line, expected);
            // What is written is what is read back.
            if password != "<password>" {
                assert_eq!(find(&line, target), Some((1, password.to_owned())), "{line}");
            }
        }
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
            (
                0o600,
                Ok(Lookup::Found {
                    password: "pw".to_owned(),
                    line: 1,
                }),
            ),
            (
                0o400,
                Ok(Lookup::Found {
                    password: "pw".to_owned(),
                    line: 1,
                }),
            ),
            (0o640, Err(Ignored::Permissions(path.clone()))),
            (0o604, Err(Ignored::Permissions(path.clone()))),
        ] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(lookup(&path, target), expected, "{mode:o}");
        }
        assert_eq!(lookup(&dir.path().join("missing"), target), Ok(Lookup::Missing));
        assert_eq!(
            lookup(dir.path(), target),
            Err(Ignored::NotAFile(dir.path().to_owned()))
        );
        let text = Ignored::Permissions(path.clone()).to_string();
        assert!(text.contains("chmod 0600"), "{text}");
    }
}
