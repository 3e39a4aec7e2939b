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
        let shown = redacted(url);
        let rest = url
            .strip_prefix(scheme)
            .and_then(|r| r.strip_prefix(':'))
            .ok_or_else(|| {
                let article = if scheme == "sqlite" { "an" } else { "a" };
                format!("\"{shown}\" is not {article} {scheme}: connection string")
            })?;
        if rest == ":memory:" {
            return Ok(Target {
                file: DbFile::Memory,
                shown: ":memory:".to_owned(),
            });
        }
        if rest.contains('?') {
            return Err(format!(
                "\"{shown}\": options after ? are not supported; read-only mode comes from server.read_only"
            ));
        }
        let path = match rest.strip_prefix("//") {
            Some(abs) if abs.starts_with('/') => {
                drive_path(percent_decode(abs).map_err(|e| format!("\"{shown}\": {e}"))?)
            }
            Some(_) => {
                let ext = if scheme == "sqlite" { "db" } else { scheme };
                return Err(format!(
                    "\"{shown}\": {scheme}:// takes an absolute path (three slashes: {scheme}:///path/to/file.{ext}); use {scheme}:relative/path.{ext} for a relative one"
                ));
            }
            None => rest.to_owned(),
        };
        if path.is_empty() {
            return Err(format!("\"{shown}\" names no file"));
        }
        Ok(Target {
            shown: shown_path(&path).into_owned(),
            file: DbFile::Path(PathBuf::from(path)),
        })
    }
}

/// On Windows, `sqlite:///C:/data/shop.db` names `C:/data/shop.db`, as a file
/// URL does: the slash before a drive letter belongs to the URL, not the path.
fn drive_path(path: String) -> String {
    match path.as_bytes() {
        [b'/', drive, b':', ..] if cfg!(windows) && drive.is_ascii_alphabetic() => path[1..].to_owned(),
        _ => path,
    }
}

/// `url` as an error may show it: when it has an `@`, everything from the
/// scheme to the last `@` is hidden. That is where a user name and password
/// go (`duckdb://user:pw@host/...` is no file URL, but someone may write it),
/// and a stray `/`, `?` or `#` in a password must not make part of it look
/// like a path worth showing. Everything after a `?` is hidden too: options
/// are where a file URL carries a secret (`?password=`, SQLCipher's `?key=`,
/// MotherDuck's `?motherduck_token=`). A `?` before the last `@` leaves no
/// telling a password's `@` from a host's: only the scheme is shown.
pub fn redacted(url: &str) -> std::borrow::Cow<'_, str> {
    let query = url.find('?');
    let Some(at) = url.rfind('@') else {
        return match query {
            Some(q) => format!("{}?***", &url[..q]).into(),
            None => url.into(),
        };
    };
    let start = match url.find("://") {
        Some(slashes) if slashes < at => slashes + 3,
        _ => url.find(':').filter(|colon| *colon < at).map_or(0, |colon| colon + 1),
    };
    match query {
        None => format!("{}***{}", &url[..start], &url[at..]).into(),
        Some(q) if q > at => format!("{}***{}?***", &url[..start], &url[at..q]).into(),
        Some(_) => format!("{}***", &url[..start]).into(),
    }
}

/// A file path as a message may show it (`check`, "Database not found: ..."
/// in a tool answer): a path holding an `@` is most likely a connection
/// string written where a path goes (`sqlite:/user:pw@host/db`), so it is
/// shown with everything before its last `@` hidden but a leading `/` (a
/// path has no scheme to keep; the slash keeps an absolute path absolute
/// for what is said of where it was looked for). A true path with an `@`
/// loses its start to that, which costs less than a password shown.
pub fn shown_path(path: &str) -> std::borrow::Cow<'_, str> {
    let root = if path.starts_with('/') { "/" } else { "" };
    match path.rfind('@') {
        Some(at) => format!("{root}***{}", &path[at..]).into(),
        None => path.into(),
    }
}

/// A database setting (`--database`, `PGMCP_DATABASE`, the config's
/// `database`, a client entry's) as a message may show it: nothing shown
/// that is not known to hold no password. A connection string pgmcp reads
/// loses its password; a `sqlite:`/`duckdb:` URL, a malformed URL (any
/// case, a missing slash, a mistyped scheme, a leading space) or a path
/// with an `@` is [`redacted`]; a `key=value` string that does not read is
/// not shown at all, since any part of it may be the password.
pub fn shown_setting(text: &str) -> String {
    let lower = text.trim_start().to_ascii_lowercase();
    if lower.starts_with("sqlite:") || lower.starts_with("duckdb:") {
        // A file URL's options may carry a key (SQLCipher's `?key=`).
        return redacted(text).into_owned();
    }
    match crate::backend::postgres::params::split_password("the setting", text) {
        Ok(split) => split.connstring,
        // No `=`: no `password=` either; a path, or a URL that does not
        // read, whose password would sit before its last `@`.
        Err(_) if !text.contains('=') || text.contains("://") => redacted(text).into_owned(),
        Err(_) => "a connection string pgmcp cannot read (not shown: it may hold a password)".to_owned(),
    }
}

/// The answer for a database file that is not there: `shown` is the name as
/// the person (or the call) gave it, never the resolved path, which would
/// show the model the server's directories.
pub fn not_found(shown: &str) -> crate::error::Error {
    crate::error::NotFound::DatabaseFile {
        shown: shown.to_owned(),
    }
    .into()
}

/// Decode `%XX` escapes. Errors do not quote the text: the caller names the
/// URL, redacted.
fn percent_decode(text: &str) -> Result<String, String> {
    super::percent::decode(text).map_err(|e| match e {
        super::percent::PercentError::Invalid => "invalid percent-encoding".to_owned(),
        super::percent::PercentError::NotUtf8 => "the percent-encoding does not decode to UTF-8".to_owned(),
    })
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
    pub fn resolve(&self, given: &str) -> Result<Target, crate::error::Error> {
        use crate::error::InputError::DatabasePath;
        let relative = Path::new(given);
        if given.is_empty() {
            return Err(
                DatabasePath("database is empty: give a path inside the configured directory".to_owned()).into(),
            );
        }
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(DatabasePath(TRAVERSAL.to_owned()).into());
        }
        let joined = self.dir.join(relative);
        let real = match joined.canonicalize() {
            Ok(real) => real,
            // A dangling symlink is missing too; only an existing file can
            // be checked for containment.
            Err(_) => return Err(not_found(given)),
        };
        if !real.starts_with(&self.dir) {
            return Err(DatabasePath(TRAVERSAL.to_owned()).into());
        }
        if !real.is_file() {
            return Err(not_found(given));
        }
        Ok(Target {
            file: DbFile::Path(real),
            shown: given.to_owned(),
        })
    }
}

/// Where a database file really lives, and the other directories of the
/// machine an engine may name, with what answers say instead. SQLite and
/// DuckDB show the absolute path of the open file through ordinary queries
/// (`pragma_database_list`, `duckdb_databases()`, the default
/// `temp_directory`); DuckDB also derives directories of its own from the
/// home directory (`secret_directory`, the extension directory that
/// `duckdb_extensions()` and `LOAD` errors name) and resolves `:memory:`
/// against the working directory (`allowed_paths`). Rather than chase each
/// setting and message, every text of an answer passes through
/// [`PathMask::rows`] or [`PathMask::error`], which replace the database's
/// file and directory, the home directory and the working directory
/// wherever they appear: none of those routes, and none found later, shows
/// where the server runs or whose account it runs under. A text mask does
/// not see a value the statement itself rewrote (`reverse(...)`); SQLite's
/// authorizer reads the file's path as NULL for that reason.
#[derive(Debug, Clone, Default)]
pub struct PathMask {
    /// (path, shown instead), longest path first, so a file's path is
    /// replaced before its directory's.
    pairs: Vec<(String, String)>,
}

/// What a masked directory reads as.
pub const HIDDEN_DIR: &str = "<database directory>";

/// What the home directory reads as: what it means to a person, and what
/// DuckDB itself expands in a path.
pub const HOME_DIR: &str = "~";

/// What the process's working directory reads as.
pub const WORKING_DIR: &str = "<working directory>";

impl PathMask {
    /// A mask for `target`'s file; `opened` is the path the engine reports
    /// for it (SQLite resolves symlinks), when known. The file reads as the
    /// name the call gave, or its bare file name when that was absolute (the
    /// server's configuration); its directory reads as [`HIDDEN_DIR`]. The
    /// home and working directories read as [`HOME_DIR`] and
    /// [`WORKING_DIR`], for an in-memory database too.
    pub fn new(target: &Target, opened: Option<&str>) -> PathMask {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut add = |path: &Path, shown: &str| {
            let path = path.to_string_lossy().into_owned();
            // The root directory alone would mask every slash. A path
            // already masked keeps its first, most telling, name.
            if path.len() > 1 && !pairs.iter().any(|(p, _)| *p == path) {
                pairs.push((path, shown.to_owned()));
            }
        };
        if let DbFile::Path(given) = &target.file {
            for (file, name) in file_names(target, given, opened) {
                add(&file, &name);
                if let Some(dir) = file.parent() {
                    add(dir, HIDDEN_DIR);
                }
            }
        }
        // The home directory as the environment gives it (DuckDB reads
        // `HOME`) and as the system does, and the working directory, each
        // also with symbolic links resolved.
        let homes = [std::env::var_os("HOME").map(PathBuf::from), dirs::home_dir()];
        let places = homes
            .into_iter()
            .map(|home| (home, HOME_DIR))
            .chain([(std::env::current_dir().ok(), WORKING_DIR)]);
        for (dir, shown) in places {
            let Some(dir) = dir.filter(|d| d.is_absolute()) else {
                continue;
            };
            add(&dir, shown);
            if let Ok(real) = dir.canonicalize() {
                add(&real, shown);
            }
        }
        pairs.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        PathMask { pairs }
    }

    /// `text` with every masked path replaced.
    pub fn text<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for (path, shown) in &self.pairs {
            if out.contains(path.as_str()) {
                out = std::borrow::Cow::Owned(out.replace(path.as_str(), shown));
            }
        }
        out
    }

    /// Mask every text of `rows`: column names, strings and object keys.
    pub fn rows(&self, rows: &mut super::Rows) {
        if self.pairs.is_empty() {
            return;
        }
        for column in &mut rows.columns {
            column.name = self.text(&column.name).into_owned();
        }
        rows.rows.iter_mut().flatten().for_each(|v| self.value(v));
    }

    fn value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => *s = self.text(s).into_owned(),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, mut v)| {
                        self.value(&mut v);
                        (self.text(&k).into_owned(), v)
                    })
                    .collect();
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Mask the texts of an error (an engine's message can name its file).
    pub fn error(&self, error: crate::error::Error) -> crate::error::Error {
        use crate::error::Error;
        if self.pairs.is_empty() {
            return error;
        }
        match error {
            Error::Db(mut db) => {
                db.message = self.text(&db.message).into_owned();
                db.detail = db.detail.map(|d| self.text(&d).into_owned());
                db.hint = db.hint.map(|h| self.text(&h).into_owned());
                Error::Db(db)
            }
            Error::Connection(e) => Error::Connection(e.masked(|t| self.text(t).into_owned())),
            Error::Input(e) => Error::Input(e.masked(|t| self.text(t).into_owned())),
            Error::NotFound(e) => Error::NotFound(e.masked(|t| self.text(t).into_owned())),
            Error::UnexpectedReply { what, detail } => Error::UnexpectedReply {
                what,
                detail: self.text(&detail).into_owned(),
            },
            Error::Internal(text) => Error::Internal(self.text(&text).into_owned()),
            other => other,
        }
    }

    /// Mask the result of a statement.
    pub fn result(&self, result: Result<super::Rows, crate::error::Error>) -> Result<super::Rows, crate::error::Error> {
        match result {
            Ok(mut rows) => {
                self.rows(&mut rows);
                Ok(rows)
            }
            Err(e) => Err(self.error(e)),
        }
    }
}

/// Every absolute path `target`'s file may go by (as given, made absolute,
/// with symbolic links resolved, as the engine reports it), each with what
/// it reads as: the name the call gave, or its bare file name when that was
/// absolute (the server's configuration).
fn file_names(target: &Target, given: &Path, opened: Option<&str>) -> Vec<(PathBuf, String)> {
    let name = if Path::new(&target.shown).is_absolute() {
        given
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    } else {
        target.shown.clone()
    };
    let absolute = std::env::current_dir().map(|d| d.join(given)).ok();
    let candidates = [
        Some(given.to_owned()),
        absolute,
        given.canonicalize().ok(),
        opened.map(PathBuf::from),
    ];
    candidates
        .into_iter()
        .flatten()
        .filter(|p| p.is_absolute())
        .map(|file| (file, name.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passwords whose 3-character windows no message contains, each with a
    /// character that cuts a URL short or misleads a parser.
    const SECRETS: &[&str] = &[
        "Xq7/Zk9?Wm4",
        "Qz8@Vb3:Hn5",
        "Jx2#Kq4%zzWz7",
        "Vy3 Pd6'Lr2",
        "Tg6%2Nm5=Bx8",
        "Rk4]Hs7[Qp1",
        "Fw5?Gd2/Ys9@Ct4",
        "Mb3\\Kj8'Zv6",
    ];

    /// Every form a database URL takes (`--database`, `PGMCP_DATABASE`,
    /// `PGMCP_PG_CONNSTRING`, the config's `database`), with `{}` for the
    /// password.
    const FORMS: &[&str] = &[
        "postgresql://u:{}@127.0.0.1:1/db",
        "postgres://u:{}@h:5432/db?sslmode=disable",
        "postgres://u:{}@[::1]:1/db",
        "postgresql://u:{}@/db?host=%2Ftmp",
        "postgresql://{}@h/db",
        "postgresql://u:{}@h/db@x",
        "host=h port=1 user=u password={} dbname=d",
        "password={} host=h",
        "host=h password='{}",
        "host=h password={}' user=u",
        "host=h password = {} user=u",
        "sqlite://u:{}@h/x.db",
        "sqlite:x.db?u:{}@h",
        "sqlite:{}@x.db",
        "duckdb://u:{}@h/x.duckdb",
        "duckdb:///data/x.duckdb?password={}@h",
        "sqlite:///data/x.db?password={}",
        "sqlite:x.db?key={}",
        "sqlite:x.db?a=1&password={}",
        "duckdb:md:shop?motherduck_token={}",
        "duckdb:///data/x.duckdb?access_mode=read_only&password={}",
    ];

    #[test]
    fn no_error_from_a_connection_string_shows_a_piece_of_the_password() {
        let pieces = |secret: &str| -> Vec<String> {
            let chars: Vec<char> = secret.chars().collect();
            chars.windows(3).map(|w| w.iter().collect()).collect()
        };
        for form in FORMS {
            for secret in SECRETS {
                let url = form.replace("{}", secret);
                let named = crate::backend::named::Named {
                    value: url.clone(),
                    setting: crate::backend::named::Setting::Flag,
                };
                let shown = match crate::backend::Choice::resolve(
                    Some(&named),
                    None,
                    &crate::backend::postgres::ConnectionConfig::default(),
                    &|_| None,
                ) {
                    Err(e) => e.to_string(),
                    // Accepted: what later errors and `check` show of it
                    // (where, which database) holds no piece either.
                    Ok(crate::backend::Choice::Postgres(p)) => format!("{} {:?}", p.target(), p.dbname),
                    // A file: the name `check` and "Database not found"
                    // show of it.
                    Ok(crate::backend::Choice::Sqlite {
                        default: Some(target), ..
                    }) => target.shown,
                    Ok(_) => continue,
                };
                for piece in pieces(secret) {
                    assert!(!shown.contains(&piece), "{url:?} shows {piece:?}: {shown}");
                }
            }
        }
    }

    /// (setting, as shown): a password is never shown, whatever shape the
    /// setting has.
    #[test]
    fn settings_are_shown_without_a_password() {
        let cases = [
            ("postgresql://u:pw@h/db", "postgresql://u@h/db"),
            ("postgresql://u@h/db", "postgresql://u@h/db"),
            ("host=h password=pw", "host=h"),
            ("/srv/a.db", "/srv/a.db"),
            ("sqlite:/a.db?key=pw", "sqlite:/a.db?***"),
            // Malformed URLs: a missing slash, another case, a mistyped
            // scheme, no scheme, a leading space, a space in the password.
            ("postgresql:/a:LeakPwAA@h/db", "postgresql:***@h/db"),
            ("POSTGRESQL://a:LeakPwBB@h/db", "POSTGRESQL://***@h/db"),
            ("postgres:a:LeakPwCC@h/db", "postgres:***@h/db"),
            ("postgresq://a:LeakPwDD@h/db", "postgresq://***@h/db"),
            ("a:LeakPwEE@h/db", "a:***@h/db"),
            (" postgresql://a:LeakPwFF@h/db", " postgresql://***@h/db"),
            ("postgresql://u:Leak PwGG@h/db", "postgresql://***@h/db"),
            ("SQLITE:/u:LeakPwHH@h/x.db", "SQLITE:***@h/x.db"),
            (
                "host=h password='LeakPwII",
                "a connection string pgmcp cannot read (not shown: it may hold a password)",
            ),
            ("postgresql://u:LeakPwJJ@h/db?x=1 y", "postgresql://***@h/db?***"),
        ];
        for (setting, expected) in cases {
            assert_eq!(shown_setting(setting), expected, "{setting}");
        }
    }

    /// (path, as shown)
    #[test]
    fn paths_with_an_at_are_shown_redacted() {
        let cases = [
            ("/srv/shop.db", "/srv/shop.db"),
            ("/u:LeakPwAA@h/missing.db", "/***@h/missing.db"),
            ("u:LeakPwBB@h/x.db", "***@h/x.db"),
            ("Qz8@Vb3:LeakPwCC@x.db", "***@x.db"),
            ("/home/me@corp/x.db", "/***@corp/x.db"),
        ];
        for (path, expected) in cases {
            assert_eq!(shown_path(path), expected, "{path}");
        }
    }

    #[test]
    fn redaction_hides_what_comes_between_the_scheme_and_the_last_at() {
        let cases = [
            ("sqlite:///data/x.db", "sqlite:///data/x.db"),
            ("duckdb://u:p/w?x@h/x", "duckdb://***"),
            ("sqlite:x.db?u:p@h", "sqlite:***"),
            ("sqlite:///data/x.db?password=a@b:c", "sqlite://***"),
            ("sqlite:///a@b/c@d.db", "sqlite://***@d.db"),
            ("x@y", "***@y"),
            ("sqlite:///data/x.db?password=s3cret", "sqlite:///data/x.db?***"),
            ("duckdb:md:shop?motherduck_token=t0ken", "duckdb:md:shop?***"),
            ("sqlite:x.db?key=a&key=b", "sqlite:x.db?***"),
            ("duckdb://u:p@h/x.duckdb?token=t0ken", "duckdb://***@h/x.duckdb?***"),
        ];
        for (url, shown) in cases {
            assert_eq!(redacted(url), shown, "{url}");
        }
    }

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

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn masks_hide_the_files_directories() {
        let target = |shown: &str, file: &str| Target {
            file: DbFile::Path(PathBuf::from(file)),
            shown: shown.to_owned(),
        };
        // (target, engine's path, text, expected)
        let cases = [
            (
                target("sales/2024.db", "/srv/data/sales/2024.db"),
                None,
                "main|/srv/data/sales/2024.db; temp /srv/data/sales/2024.db.tmp; /srv/data/sales/x.db",
                "main|sales/2024.db; temp sales/2024.db.tmp; <database directory>/x.db",
            ),
            (
                target("/srv/data/shop.db", "/srv/data/shop.db"),
                Some("/real/disk/shop.db"),
                "/real/disk/shop.db and /srv/data/shop.db in /srv/data",
                "shop.db and shop.db in <database directory>",
            ),
            (target("/x.db", "/x.db"), None, "/x.db at /", "x.db at /"),
        ];
        for (target, opened, text, expected) in cases {
            assert_eq!(PathMask::new(&target, opened).text(text), expected, "{text}");
        }
        let memory = Target {
            file: DbFile::Memory,
            shown: ":memory:".into(),
        };
        assert_eq!(PathMask::new(&memory, None).text("/srv/x"), "/srv/x");
    }

    /// Every text an error carries is masked, as it was when the errors
    /// were strings: a DuckDB file the server's configuration names by its
    /// absolute path is shown bare when it cannot be opened.
    #[cfg(unix)]
    #[test]
    fn masks_hide_the_directories_in_every_error() {
        use crate::error::{ConnectionError, Error, InputError, NotFound};
        let target = Target {
            file: DbFile::Path(PathBuf::from("/srv/data/shop.duckdb")),
            shown: "/srv/data/shop.duckdb".into(),
        };
        let mask = PathMask::new(&target, None);
        let path = "/srv/data/shop.duckdb";
        let errors = [
            Error::Connection(ConnectionError::Open {
                shown: path.into(),
                reason: format!("Could not set lock on file \"{path}\""),
            }),
            Error::Connection(ConnectionError::PathNotUtf8 { shown: path.into() }),
            Error::Connection(ConnectionError::Worker {
                engine: "DuckDB",
                reason: path.into(),
            }),
            Error::Input(InputError::DatabasePath(path.into())),
            Error::NotFound(NotFound::DatabaseFile { shown: path.into() }),
            Error::NotFound(NotFound::AmbiguousTable {
                name: path.into(),
                schemas: vec![path.into()],
            }),
            Error::Internal(path.into()),
        ];
        for error in errors {
            let text = mask.error(error).to_string();
            assert!(!text.contains("/srv/data"), "{text}");
            assert!(text.contains("shop.duckdb"), "{text}");
        }
    }

    // Written in Unix paths.
    #[cfg(unix)]
    #[test]
    fn masks_hide_the_home_and_working_directories() {
        let memory = Target {
            file: DbFile::Memory,
            shown: ":memory:".into(),
        };
        let file = Target {
            file: DbFile::Path(PathBuf::from("/srv/data/shop.db")),
            shown: "shop.db".into(),
        };
        let home = std::env::var("HOME").unwrap_or_default();
        let cwd = std::env::current_dir().unwrap().to_string_lossy().into_owned();
        for target in [&memory, &file] {
            let mask = PathMask::new(target, None);
            if home.len() > 1 && home != cwd {
                assert_eq!(
                    mask.text(&format!("Cannot access \"{home}/.duckdb/extensions/v2\"")),
                    "Cannot access \"~/.duckdb/extensions/v2\""
                );
            }
            if cwd.len() > 1 {
                assert_eq!(
                    mask.text(&format!("['{cwd}/:memory:.wal']")),
                    "['<working directory>/:memory:.wal']"
                );
            }
        }
    }
}
