//! The `database` answer, the one that may hold a secret: a PostgreSQL
//! connection string is taken as typed only when it holds no password,
//! one pgmcp does not read is refused without being echoed, and anything
//! else is a file path, written as the URL of the file it names. Apart
//! because every rule here keeps a password out of the file and the
//! prompt.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::questions::Kind;
use crate::backend::named::{self, FileKind};

/// Why a connection string cannot be the `database` value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// It holds a password, which the config file never keeps.
    Password,
    /// It is no connection string pgmcp reads: why.
    Malformed(String),
}

/// The `database` value for what a person typed: a PostgreSQL connection
/// string or a `sqlite:`/`duckdb:` URL as it is; anything else is a file
/// path, made absolute from where the wizard runs (the config's relative
/// paths are taken from the config's directory, which is not where the
/// person is) and written as the URL of the kind its header, or for a file
/// not there yet its name, says. Nothing refused is echoed as typed: it may
/// hold a password.
pub(super) fn database(text: &str) -> Result<String, String> {
    match connection(text) {
        Some(Ok(())) => return Ok(text.to_owned()),
        Some(Err(Refusal::Password)) => {
            return Err(
                "the URL holds a password, and the config file keeps none: give it without the \
                        password, and set PGPASSWORD in your client's config or use ~/.pgpass"
                    .to_owned(),
            );
        }
        Some(Err(Refusal::Malformed(why))) => return Err(why),
        None => {}
    }
    if text.starts_with("sqlite:") || text.starts_with("duckdb:") {
        return Ok(text.to_owned());
    }
    let typed = match (text.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(text),
    };
    let path = std::path::absolute(&typed).unwrap_or(typed);
    let path_text = path.to_string_lossy();
    // A path with an `@` may still be a connection string in disguise.
    let shown = crate::backend::location::shown_path(&path_text);
    let kind = match FileKind::of_file(&path) {
        Ok(Some(kind)) => kind,
        Ok(None) => {
            return Err(format!(
                "{shown} is neither an SQLite nor a DuckDB database file (its first bytes say neither)"
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => FileKind::of_extension(&path).ok_or_else(|| {
            format!(
                "no file at {shown}: give a PostgreSQL URL (postgresql://user@host/db), or the path to an \
                 SQLite or DuckDB file (.sqlite, .db, .duckdb)"
            )
        })?,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    Ok(named::url(kind, &path_text))
}

/// Whether `text` is a PostgreSQL connection string, and if so whether the
/// config may keep it; `None`: it is not one (a path, or a file URL).
///
/// A `postgres://` or `postgresql://` URL, or `key=value` words, is read
/// as pgmcp reads it. Anything else that starts like a URL (a word and a
/// colon: `POSTGRESQL://`, `postgresql:/`, `postgresq://`, `user:`) with an
/// `@` after it, or two slashes, is a connection string pgmcp does not
/// read, not a file path: taken for one, it would be written into the file as a path, and
/// its password with it.
fn connection(text: &str) -> Option<Result<(), Refusal>> {
    let is_url = text.starts_with("postgres://") || text.starts_with("postgresql://");
    // As `pgmcp serve` tells them: in lower case, from the first character.
    let file_url = text.starts_with("sqlite:") || text.starts_with("duckdb:");
    // A drive letter (`C:\...`) is a path's, not a scheme.
    let scheme_like = text.trim_start().split_once(':').is_some_and(|(word, rest)| {
        (word.len() > 1 || cfg!(not(windows)))
            && word.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && (rest.starts_with("//") || text.contains('@'))
    });
    if !is_url && !file_url && scheme_like {
        return Some(Err(Refusal::Malformed(
            "this looks like a connection string, but not one pgmcp reads (not shown: it may hold a \
             password): a PostgreSQL URL starts with postgresql:// or postgres://, in lower case, and \
             holds no password (that goes in ~/.pgpass)"
                .to_owned(),
        )));
    }
    if !is_url && !text.contains('=') {
        return None;
    }
    Some(
        match crate::backend::postgres::params::split_password("database", text) {
            Ok(split) if split.password.is_some() => Err(Refusal::Password),
            Ok(_) => Ok(()),
            Err(e) => Err(Refusal::Malformed(e.message)),
        },
    )
}

/// What to say of a database file the wizard wrote the URL of when there
/// is no file there (yet): `pgmcp check` would fail.
pub(super) fn missing_file(url: &str) -> Option<String> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("duckdb://"))?;
    let path = crate::backend::percent::decode(path).ok()?;
    (!Path::new(&path).exists()).then(|| {
        format!(
            "no file at {} yet: pgmcp check says so until there is one",
            crate::backend::location::shown_path(&path)
        )
    })
}

/// Why the current `database` value cannot be kept, in words for after
/// `database: the current value `; `None` when it can. A password in it is
/// the file's mistake to undo, not to keep by pressing Enter.
pub(super) fn unkept(kind: Kind, current: Option<&Value>) -> Option<String> {
    let text = current?.as_str()?;
    if kind != Kind::Database {
        return None;
    }
    match connection(text)? {
        Ok(()) => None,
        Err(Refusal::Password) => Some(
            "holds a password: move it to ~/.pgpass (a line host:port:database:user:password, mode 0600) \
             or to PGPASSWORD in your client's config, and give the URL without it"
                .to_owned(),
        ),
        Err(Refusal::Malformed(why)) => Some(format!("is not a connection string pgmcp reads: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cli::wizard::answer::show;

    #[test]
    fn a_database_is_a_url_or_a_file_path() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = dir.path().join("shop.data");
        std::fs::write(&sqlite, b"SQLite format 3\0 and the rest").unwrap();
        let neither = dir.path().join("notes.db");
        std::fs::write(&neither, "just text").unwrap();
        let d = dir.path().display();
        for (typed, expected) in [
            (
                "postgresql://agent@db.example.com:5432/shop",
                Ok("postgresql://agent@db.example.com:5432/shop".to_owned()),
            ),
            ("host=db dbname=shop", Ok("host=db dbname=shop".to_owned())),
            ("sqlite:shop.db", Ok("sqlite:shop.db".to_owned())),
            // Its header says SQLite, whatever its name.
            (&*sqlite.to_string_lossy(), Ok(format!("sqlite://{d}/shop.data"))),
            // Not there yet: its name says.
            (&format!("{d}/new.duckdb"), Ok(format!("duckdb://{d}/new.duckdb"))),
            (&format!("{d}/new.sqlite"), Ok(format!("sqlite://{d}/new.sqlite"))),
            (
                &*neither.to_string_lossy(),
                Err(format!(
                    "{d}/notes.db is neither an SQLite nor a DuckDB database file (its first bytes say neither)"
                )),
            ),
            (
                &format!("{d}/shop"),
                Err(format!(
                    "no file at {d}/shop: give a PostgreSQL URL (postgresql://user@host/db), or the path to an \
                     SQLite or DuckDB file (.sqlite, .db, .duckdb)"
                )),
            ),
            (
                "postgresql://agent:secret@db/shop",
                Err(
                    "the URL holds a password, and the config file keeps none: give it without the password, \
                     and set PGPASSWORD in your client's config or use ~/.pgpass"
                        .to_owned(),
                ),
            ),
        ] {
            assert_eq!(database(typed), expected, "{typed}");
        }
        // Connection strings pgmcp does not read are refused as such, never
        // taken for a path (which would write the password into the file)
        // nor echoed.
        let malformed = "this looks like a connection string, but not one pgmcp reads (not shown: it may hold a \
                         password): a PostgreSQL URL starts with postgresql:// or postgres://, in lower case, and \
                         holds no password (that goes in ~/.pgpass)";
        for typed in [
            "postgresql:/u:WzPwDD@h/shop.db",
            "POSTGRESQL://u:WzPwEE@h/db",
            "Postgres://u@h/db",
            "postgresq://u:WzPwFF@h/db",
            "postgres:u:WzPwGG@h/db",
            "u:WzPwHH@h/db",
            " postgresql://u:WzPwII@h/db",
            "SQLITE:/u:WzPwJJ@h/x.db",
        ] {
            assert_eq!(database(typed), Err(malformed.to_owned()), "{typed}");
        }
        // A URL pgmcp reads but cannot take the password out of: its own
        // words, which never quote it.
        let refused = database("postgresql://u:Wz PwKK@h/db").unwrap_err();
        assert!(!refused.contains("PwKK"), "{refused}");
        // A path with an `@` is shown redacted in what is said of it.
        let odd = database(&format!("{d}/u:WzPwLL@h/shop")).unwrap_err();
        assert!(
            odd.starts_with("no file at /***@h/shop") && !odd.contains("WzPwLL"),
            "{odd}"
        );
        // A relative path is taken from where the wizard runs.
        let relative = database("no-such-dir/shop.db").unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(relative, format!("sqlite://{}/no-such-dir/shop.db", cwd.display()));
        assert!(missing_file(&relative).is_some_and(|note| note.starts_with("no file at /")));
        assert_eq!(missing_file(&format!("sqlite://{d}/shop.data")), None);
    }

    /// (kind, the file's value, as the prompt shows it, why Enter cannot
    /// keep it)
    #[test]
    fn current_values_are_shown_without_a_password() {
        let holds = "holds a password: move it to ~/.pgpass (a line host:port:database:user:password, mode \
                     0600) or to PGPASSWORD in your client's config, and give the URL without it";
        let cases: &[(Kind, Value, &str, Option<&str>)] = &[
            (
                Kind::Database,
                json!("postgresql://u@h/db"),
                "postgresql://u@h/db",
                None,
            ),
            (
                Kind::Database,
                json!("postgresql://u:ExistWzPwAA@h/db"),
                "postgresql://u@h/db",
                Some(holds),
            ),
            (
                Kind::Database,
                json!("host=h password=ExistWzPwAA"),
                "host=h",
                Some(holds),
            ),
            (
                Kind::Database,
                json!("postgresql:/u:ExistWzPwAA@h/db"),
                "postgresql:***@h/db",
                Some("is not a connection string pgmcp reads: this looks like a connection string"),
            ),
            (
                Kind::Database,
                json!("sqlite:///srv/shop.db"),
                "sqlite:///srv/shop.db",
                None,
            ),
            (Kind::Text, json!("db.example.com"), "db.example.com", None),
            (Kind::Text, json!("u:ExistWzPwAA@h"), "***@h", None),
            (Kind::Bool, json!(true), "yes", None),
        ];
        for (kind, value, shown, why) in cases {
            assert_eq!(show(*kind, value), *shown, "{value}");
            let unkept = unkept(*kind, Some(value));
            match why {
                Some(why) => assert!(
                    unkept.as_deref().is_some_and(|u| u.starts_with(why)),
                    "{value}: {unkept:?}"
                ),
                None => assert_eq!(unkept, None, "{value}"),
            }
        }
    }
}
