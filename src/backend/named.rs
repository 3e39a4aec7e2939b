//! Which setting names the database, and what a value it holds can be. The
//! first that is set wins: `--database`, then `PGMCP_DATABASE` or
//! `PGMCP_DATABASE_FILE` (never both), then `PGMCP_PG_CONNSTRING`, then the
//! config's `database`. `PGMCP_DEMO=true` names pgmcp's demo shop, and
//! goes with none of the others but the config's `database`, which it wins
//! over like every variable. Every error names the setting the value came
//! from, since that is what the person has to fix.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::ChoiceError;
use super::location::{DbFile, Target};

/// Where the database setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// `--database`.
    Flag,
    /// `PGMCP_DATABASE`: a URL of any kind.
    Database,
    /// `PGMCP_DATABASE_FILE`: a path to an SQLite or DuckDB file.
    DatabaseFile,
    /// `PGMCP_PG_CONNSTRING`: a PostgreSQL connection string.
    PgConnstring,
    /// The config file's `database` (the file, when there is one).
    Config(Option<PathBuf>),
    /// `PGMCP_DEMO=true`: the demo shop pgmcp carries
    /// (`crate::backend::demo::served_path`).
    Demo,
}

impl Setting {
    /// The setting's name as a person sets it.
    pub fn name(&self) -> &'static str {
        match self {
            Setting::Flag => "--database",
            Setting::Database => "PGMCP_DATABASE",
            Setting::DatabaseFile => "PGMCP_DATABASE_FILE",
            Setting::PgConnstring => "PGMCP_PG_CONNSTRING",
            Setting::Config(_) => "the config's \"database\"",
            Setting::Demo => "PGMCP_DEMO",
        }
    }

    /// The directory a relative file path in this setting is taken from:
    /// the config file's for the config, else the working directory.
    fn base(&self) -> Base {
        match self {
            Setting::Config(Some(file)) => {
                let file = std::path::absolute(file).unwrap_or_else(|_| file.clone());
                Base::ConfigDir(file.parent().map(Path::to_owned).unwrap_or_default())
            }
            _ => Base::WorkingDir,
        }
    }
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Setting::Config(Some(file)) => write!(f, "config {}: database", file.display()),
            Setting::Config(None) => write!(f, "config: database"),
            other => f.write_str(other.name()),
        }
    }
}

/// What a relative path is taken from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Base {
    WorkingDir,
    ConfigDir(PathBuf),
}

/// The database setting in effect and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub value: String,
    pub setting: Setting,
}

/// Apply the order of settings. `flag` is `--database`; `env` reads a
/// variable, an empty one being unset. Two variables that each name a
/// database on their own are refused: a person filled in two fields, and
/// picking one would hide the mistake. So is the demo with any other
/// database given by flag or variable.
pub fn named(
    flag: Option<&str>,
    config_database: Option<&str>,
    config_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Named>, ChoiceError> {
    let file = env("PGMCP_DATABASE_FILE");
    if file.is_some() {
        for (other, setting) in [
            ("PGMCP_DATABASE", Setting::Database),
            ("PGMCP_PG_CONNSTRING", Setting::PgConnstring),
        ] {
            if env(other).is_some() {
                return Err(ChoiceError::Both(Setting::DatabaseFile, setting));
            }
        }
    }
    if demo(env)? {
        let given = [
            (flag.is_some(), Setting::Flag),
            (env("PGMCP_DATABASE").is_some(), Setting::Database),
            (file.is_some(), Setting::DatabaseFile),
            (env("PGMCP_PG_CONNSTRING").is_some(), Setting::PgConnstring),
        ];
        if let Some((_, other)) = given.into_iter().find(|(set, _)| *set) {
            return Err(ChoiceError::Both(Setting::Demo, other));
        }
        let path = crate::backend::demo::served_path().ok_or_else(|| ChoiceError::Setting {
            setting: Setting::Demo.name().to_owned(),
            message: "no cache directory to keep the demo shop in (HOME is not set)".to_owned(),
        })?;
        return Ok(Some(Named {
            value: path.to_string_lossy().into_owned(),
            setting: Setting::Demo,
        }));
    }
    let named = |setting: Setting, value: String| Some(Named { value, setting });
    Ok(match flag {
        Some(value) => named(Setting::Flag, value.to_owned()),
        None => match (env("PGMCP_DATABASE"), file, env("PGMCP_PG_CONNSTRING")) {
            (Some(value), _, _) => named(Setting::Database, value),
            (None, Some(value), _) => named(Setting::DatabaseFile, value),
            (None, None, Some(value)) => named(Setting::PgConnstring, value),
            (None, None, None) => config_database
                .and_then(|value| named(Setting::Config(config_file.map(Path::to_owned)), value.to_owned())),
        },
    })
}

/// Whether `PGMCP_DEMO` is on. Config's environment layer refuses a value
/// that is neither `true` nor `false` first; this refuses it too, for a
/// caller that chose without that layer (`Engine::from_env`).
fn demo(env: &dyn Fn(&str) -> Option<String>) -> Result<bool, ChoiceError> {
    let Some(text) = env(Setting::Demo.name()) else {
        return Ok(false);
    };
    crate::process::environment::switch(&text).ok_or_else(|| ChoiceError::Setting {
        setting: Setting::Demo.name().to_owned(),
        message: format!("\"{text}\" is not true or false"),
    })
}

/// An engine's database file, as its first bytes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Sqlite,
    DuckDb,
}

impl FileKind {
    fn scheme(self) -> &'static str {
        match self {
            FileKind::Sqlite => "sqlite",
            FileKind::DuckDb => "duckdb",
        }
    }

    /// Which engine wrote a file that begins with `head`: SQLite's header
    /// string, or DuckDB's magic `DUCK` after its 8-byte checksum.
    pub fn of_header(head: &[u8]) -> Option<FileKind> {
        if head.starts_with(b"SQLite format 3\0") {
            Some(FileKind::Sqlite)
        } else if head.get(8..12) == Some(b"DUCK") {
            Some(FileKind::DuckDb)
        } else {
            None
        }
    }

    /// The kind a file's name suggests: `.db`, `.sqlite`, `.sqlite3` for
    /// SQLite, `.duckdb` for DuckDB. For a file not there yet, which has
    /// no header to read.
    pub fn of_extension(path: &Path) -> Option<FileKind> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase) {
            Some(ext) if matches!(ext.as_str(), "db" | "sqlite" | "sqlite3") => Some(FileKind::Sqlite),
            Some(ext) if ext == "duckdb" => Some(FileKind::DuckDb),
            _ => None,
        }
    }

    /// The kind of the file at `path`, read from its header. Only a regular
    /// file is read: a FIFO would hold `open` (and pgmcp's start) until some
    /// writer came, a terminal or socket would hold the read.
    pub fn of_file(path: &Path) -> std::io::Result<Option<FileKind>> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
        let file = options.open(path)?;
        if !file.metadata()?.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a directory, pipe or device is no database file)",
            ));
        }
        let mut head = Vec::with_capacity(16);
        file.take(16).read_to_end(&mut head)?;
        Ok(FileKind::of_header(&head))
    }
}

/// The file `PGMCP_DATABASE_FILE` names and which engine it is for, from
/// the file's header. A missing file, or one that is neither, is refused.
pub fn database_file(path: &str) -> Result<(FileKind, Target), ChoiceError> {
    let fail = |message: String| ChoiceError::Setting {
        setting: Setting::DatabaseFile.name().to_owned(),
        message,
    };
    let resolved = Base::WorkingDir.resolve(Path::new(path));
    // Said to a person and, as "Database not found", to the model: a path
    // with an `@` may be a connection string given as a path.
    let resolved_text = resolved.to_string_lossy();
    let resolved_shown = super::location::shown_path(&resolved_text);
    match FileKind::of_file(&resolved) {
        Ok(Some(kind)) => Ok((
            kind,
            Target {
                file: DbFile::Path(PathBuf::from(path)),
                shown: super::location::shown_path(path).into_owned(),
            },
        )),
        Ok(None) => Err(fail(format!(
            "{resolved_shown} is neither an SQLite nor a DuckDB database file (its first bytes say neither)"
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(fail(format!(
            "no file at {resolved_shown}{}",
            Base::WorkingDir.relative_note(Path::new(path))
        ))),
        Err(e) => Err(fail(format!("cannot read {resolved_shown}: {e}"))),
    }
}

/// The URL of `kind` for a file path as written.
pub fn url(kind: FileKind, path: &str) -> String {
    let scheme = kind.scheme();
    if Path::new(path).is_absolute() {
        format!("{scheme}://{}", percent_encode(path))
    } else {
        format!("{scheme}:{path}")
    }
}

/// `%`, `?` and `#` encoded, so the `scheme://` form reads back the same path.
fn percent_encode(path: &str) -> String {
    path.replace('%', "%25").replace('?', "%3F").replace('#', "%23")
}

/// Why a value taken as a PostgreSQL connection string is a file path, with
/// the value to use instead; `None` when it does not look like one.
pub fn file_path_hint(value: &str) -> Option<String> {
    let path = Path::new(value);
    let by_extension = FileKind::of_extension(path);
    // The value is quoted back, so anything that could hold a password
    // (`password=` in key=value form, `user:pw@` in a URL) is never taken
    // for a path: connection-string errors never quote the string.
    if value.contains(['=', '@']) || value.contains("://") {
        return None;
    }
    let path_like =
        value.starts_with('/') || value.starts_with("./") || value.starts_with("../") || value.starts_with('~');
    let exists = path.is_file();
    if !(exists || path_like || by_extension.is_some()) {
        return None;
    }
    let kind = FileKind::of_file(path).ok().flatten().or(by_extension);
    let suggestion = match kind {
        Some(kind) => format!("use {}", url(kind, value)),
        None => format!(
            "use {} for an SQLite file, {} for a DuckDB file",
            url(FileKind::Sqlite, value),
            url(FileKind::DuckDb, value)
        ),
    };
    let what = if exists { "is a file" } else { "looks like a file path" };
    Some(format!(
        "\"{value}\" {what}, not a PostgreSQL connection string: {suggestion}"
    ))
}

/// Where a relative file path in `setting` was looked for, when the file is
/// not there: `None` for an absolute path or a file that exists.
pub fn missing_note(setting: &Setting, given: &Path, resolved: &Path) -> Option<String> {
    if resolved.exists() || given.is_absolute() {
        return None;
    }
    let base = setting.base();
    Some(format!(
        "looked for {}{}",
        base.resolve(given).display(),
        base.relative_note(given)
    ))
}

/// A relative path in `setting`, taken from the directory the setting's
/// relative paths are taken from; an absolute one as it is.
pub fn relocate(setting: &Setting, given: &Path) -> PathBuf {
    match setting.base() {
        // The working directory is where the file system starts a relative
        // path anyway; the path stays as written.
        Base::WorkingDir => given.to_owned(),
        base => base.resolve(given),
    }
}

impl Base {
    fn resolve(&self, given: &Path) -> PathBuf {
        match self {
            _ if given.is_absolute() => given.to_owned(),
            Base::WorkingDir => std::path::absolute(given).unwrap_or_else(|_| given.to_owned()),
            Base::ConfigDir(dir) => dir.join(given),
        }
    }

    fn relative_note(&self, given: &Path) -> String {
        match self {
            _ if given.is_absolute() => String::new(),
            Base::WorkingDir => match std::env::current_dir() {
                Ok(dir) => format!(", relative to the working directory {}", dir.display()),
                Err(_) => ", relative to the working directory".to_owned(),
            },
            Base::ConfigDir(dir) => format!(", relative to the config file's directory {}", dir.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn settings_in_order() {
        let all = [("PGMCP_DATABASE", "sqlite:a.db"), ("PGMCP_PG_CONNSTRING", "host=x")];
        let pick = |flag: Option<&str>, vars: &[(&str, &str)]| {
            named(flag, Some("sqlite:c.db"), Some(Path::new("/etc/p.json")), &env(vars))
                .unwrap()
                .map(|n| (n.setting, n.value))
        };
        assert_eq!(
            pick(Some("sqlite:f.db"), &all),
            Some((Setting::Flag, "sqlite:f.db".into()))
        );
        assert_eq!(pick(None, &all), Some((Setting::Database, "sqlite:a.db".into())));
        assert_eq!(pick(None, &all[1..]), Some((Setting::PgConnstring, "host=x".into())));
        assert_eq!(
            pick(None, &[("PGMCP_DATABASE_FILE", "/x.db")]),
            Some((Setting::DatabaseFile, "/x.db".into()))
        );
        assert_eq!(
            pick(None, &[]),
            Some((Setting::Config(Some("/etc/p.json".into())), "sqlite:c.db".into()))
        );
        for other in ["PGMCP_DATABASE", "PGMCP_PG_CONNSTRING"] {
            let e = named(
                None,
                None,
                None,
                &env(&[("PGMCP_DATABASE_FILE", "/x.db"), (other, "v")]),
            )
            .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "PGMCP_DATABASE_FILE and {other}: both are set, and each names a database: keep one and leave the other empty"
                )
            );
        }
    }

    #[test]
    fn the_demo_goes_with_no_other_database_setting() {
        let demo = ("PGMCP_DEMO", "true");
        for (flag, other, name) in [
            (Some("sqlite:f.db"), None, "--database"),
            (None, Some(("PGMCP_DATABASE", "sqlite:a.db")), "PGMCP_DATABASE"),
            (None, Some(("PGMCP_DATABASE_FILE", "/x.db")), "PGMCP_DATABASE_FILE"),
            (None, Some(("PGMCP_PG_CONNSTRING", "host=x")), "PGMCP_PG_CONNSTRING"),
        ] {
            let vars: Vec<_> = std::iter::once(demo).chain(other).collect();
            let e = named(flag, None, None, &env(&vars)).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "PGMCP_DEMO and {name}: both are set, and each names a database: keep one and leave the other empty"
                )
            );
        }
        // The config's database is a default every variable wins over.
        let chosen = named(None, Some("sqlite:c.db"), None, &env(&[demo])).unwrap().unwrap();
        assert_eq!(chosen.setting, Setting::Demo);
        assert!(chosen.value.ends_with("demo.db"), "{}", chosen.value);
        // Off is off, and anything but true or false is refused, named.
        let off = named(
            None,
            None,
            None,
            &env(&[("PGMCP_DEMO", "false"), ("PGMCP_PG_CONNSTRING", "host=x")]),
        );
        assert_eq!(off.unwrap().unwrap().setting, Setting::PgConnstring);
        let e = named(None, None, None, &env(&[("PGMCP_DEMO", "1")])).unwrap_err();
        assert_eq!(e.to_string(), "PGMCP_DEMO: \"1\" is not true or false");
    }

    #[test]
    fn file_kinds_by_header() {
        let mut duck = vec![0u8; 8];
        duck.extend_from_slice(b"DUCK\x40\0\0\0");
        let cases: [(&[u8], Option<FileKind>); 5] = [
            (b"SQLite format 3\0\x10\0", Some(FileKind::Sqlite)),
            (&duck, Some(FileKind::DuckDb)),
            (b"SQLite format 2\0", None),
            (b"DUCK", None),
            (b"", None),
        ];
        for (head, kind) in cases {
            assert_eq!(FileKind::of_header(head), kind, "{head:?}");
        }
    }

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn file_paths_get_the_url_to_use() {
        let cases = [
            ("/abs/demo.db", Some("use sqlite:///abs/demo.db")),
            ("/abs/w.duckdb", Some("use duckdb:///abs/w.duckdb")),
            ("demo.sqlite3", Some("use sqlite:demo.sqlite3")),
            (
                "./data/x",
                Some("use sqlite:./data/x for an SQLite file, duckdb:./data/x for a DuckDB file"),
            ),
            ("host=db user=me", None),
            ("postgresql://me@db/shop.db", None),
            ("dbname=shop.db", None),
            ("postgres:me:secret@db/shop.db", None),
        ];
        for (value, expected) in cases {
            let hint = file_path_hint(value);
            match expected {
                Some(suffix) => assert!(
                    hint.as_deref().is_some_and(|h| h.ends_with(suffix)),
                    "{value}: {hint:?}"
                ),
                None => assert_eq!(hint, None, "{value}"),
            }
        }
    }
}
