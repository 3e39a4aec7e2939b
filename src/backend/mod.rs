//! Database engines. A backend only connects, executes and hands back neutral
//! rows (JSON values plus column names and type names); every policy decision
//! (guard, timeouts, caps) is made once, above, in [`crate::pipeline`]. The
//! embedded engines' parsers report what a statement does while the backend
//! prepares it: the backend hands each report to its dialect's guard, which
//! asks the [`Judge`] the pipeline gave it. No backend reads a policy.

pub(crate) mod demo;
#[cfg(feature = "duckdb")]
pub mod duckdb;
/// Without the `duckdb` feature, only the settings a DuckDB database opens
/// with: the config's `duckdb` section is still checked, so a file valid for
/// one build is valid for the other.
#[cfg(not(feature = "duckdb"))]
pub mod duckdb {
    mod settings;
    pub use self::settings::{DuckdbConfig, memory_size};
}
mod embedded;
pub mod location;
pub mod named;
pub mod percent;
pub mod postgres;
pub mod sqlite;

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{DbError, Error, InputError};
use crate::guard::Judge;
use crate::pipeline::budget::ReadBudget;
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList};

/// A result column: its name and its type as the engine spells it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
}

/// What a statement produced, already converted to JSON values.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
    /// Rows inserted/updated/deleted (or returned), when the engine reports it.
    pub rows_affected: Option<u64>,
    /// True when reading stopped at the fetch limit and more rows may exist.
    pub more: bool,
    /// True when the read budget was spent before the result's end: a value
    /// was cut (its text ends with a marker, see [`crate::pipeline::budget`]), or rows
    /// were left unread or dropped.
    pub spent: bool,
    /// The first value each of [`Statement::prelude`]'s statements returned.
    pub prelude: Vec<Option<String>>,
}

/// One statement to run, after the guard accepted it.
#[derive(Debug, Clone, Copy)]
pub struct Statement<'a> {
    pub sql: &'a str,
    /// Positional parameters `$1..$n`: strings, numbers, booleans or null.
    pub params: &'a [Value],
    /// Stop reading after this many rows.
    pub fetch_limit: usize,
    /// Stop reading once this much of the values is held; cut a value larger
    /// than it as it is read.
    pub budget: ReadBudget,
    /// A database file inside `sqlite.root` named by the call (SQLite only).
    pub database: Option<&'a str>,
    /// End the transaction with `ROLLBACK`, whatever the statement did
    /// (PostgreSQL: `explain` with `analyze` runs the statement it
    /// explains, and keeps nothing of it).
    pub rollback: bool,
    /// pgmcp's own statements (PostgreSQL), run in the statement's
    /// transaction before it, under its timeout and as the role statements
    /// run as: after the catalog check, just before the statement is
    /// planned (where they may run a user's function, as hypopg does with an
    /// index's predicate, the catalog is the one the guard judged), or,
    /// [`OwnStatement::before_parse`], before the statement is parsed. The
    /// first value each returns comes back in [`Rows::prelude`]. Their text
    /// is pgmcp's, and the caller judged their parameters.
    pub prelude: &'a [OwnStatement],
    /// pgmcp's own statements (PostgreSQL), run on the same session once
    /// the statement's transaction has ended, whatever it did: in the
    /// message that ends it, in a read-only transaction of their own, as
    /// the role statements run as. What undoes what the prelude did that
    /// ending a transaction does not (hypopg keeps its indexes in the
    /// session). A call with an epilogue that fails in any way retires its
    /// connection: the session, and anything an unfinished epilogue left
    /// in it, ends with the connection (behind a pooler too, while its
    /// transaction is open).
    pub epilogue: &'a [String],
}

/// What an SQLite or DuckDB statement would change, as its engine
/// reports while preparing it ([`Backend::change`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// The engine says it writes (SQLite: not `sqlite3_stmt_readonly`;
    /// DuckDB: its statement type is not a query).
    pub writes: bool,
    /// The tables it changes: SQLite's authorizer reports each (triggers'
    /// too); DuckDB's plan names the table a `DELETE` or `UPDATE` reads.
    pub tables: Vec<String>,
    /// DuckDB's plan estimate of the rows it touches; SQLite has none.
    pub estimated_rows: Option<u64>,
}

/// One of pgmcp's own statements, with the text of its parameters (`$1`,
/// ...; `None` is NULL), never written into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnStatement {
    pub sql: String,
    pub params: Vec<Option<String>>,
    /// Run before the statement is parsed (and before the catalog check):
    /// only for what runs nothing of a user's and decides how the
    /// statement's names resolve (a `search_path`).
    pub before_parse: bool,
}

/// The guard stage, as the statement's engine needs it.
#[derive(Debug, Clone, Copy)]
pub enum Guard<'a> {
    /// PostgreSQL: the guard judged the whole parse tree before the backend,
    /// with the catalog's facts at `catalog_version`. The statement runs only
    /// while the catalog is still at it, else the call fails with
    /// [`Error::CatalogChanged`].
    Checked { catalog_version: &'a str },
    /// SQLite and DuckDB: their own parser reports what the statement does
    /// while the backend prepares it ([`crate::guard::sqlite`],
    /// [`crate::guard::duckdb`]); each report goes to this judge.
    WhilePreparing(&'a Judge),
}

/// When the work must stop, and how the caller can stop it sooner.
#[derive(Debug, Clone)]
pub struct Deadline {
    pub at: Instant,
    /// The configured timeout the deadline came from, for error messages.
    pub timeout: Duration,
    pub cancel: CancellationToken,
}

/// What `pgmcp check` shows about a live session, as the engine reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionReport {
    /// The server product and version, e.g. `PostgreSQL 15.8`.
    pub server: String,
    /// Where the session is connected: `host:port` or a socket path.
    pub endpoint: String,
    /// The login: who the session authenticated as.
    pub user: String,
    /// Who statements run as: `connection.role` when set, else the login.
    /// Empty for files.
    pub role: String,
    /// Why statements run as `role`: `connection.role`, the login (and why
    /// that is fine), or `pg_read_all_data` (and what the login can do that
    /// made it so). Empty for files.
    pub role_reason: String,
    /// What `role` can do beyond reading (a superuser, an owner, ...), one
    /// sentence each; empty for a least-privilege reader, and for files.
    pub role_warnings: Vec<String>,
    pub database: String,
    /// How the connection is encrypted (`TLSv1.3, TLS13_AES_256_GCM_SHA384`); `None` when it is not.
    pub encryption: Option<String>,
    /// Whether the server reports the transaction a query runs in as read-only.
    pub read_only: bool,
    /// Where the password came from; `None` when none was needed.
    pub password_from: Option<String>,
    /// The setting `read_only` was read from, as the engine names it.
    pub read_only_setting: &'static str,
    /// A database file opened directly (no server, user, TLS or password).
    pub file: bool,
    /// Connected through a connection pooler that pgmcp could tell
    /// (PgBouncer turns away the startup parameters it does not track).
    pub pooler: bool,
}

/// An extension installed in a PostgreSQL database.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Extension {
    /// The schema its objects were created in.
    pub schema: String,
    pub version: String,
    /// Its functions, as `name(argument types)`.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub functions: Vec<String>,
}

/// `json_agg` over no rows is NULL: an empty list.
fn null_as_empty<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    use serde::Deserialize as _;
    Ok(Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default())
}

/// The engine behind a session. A closed enum: one `match` per operation.
// One engine per process: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Backend {
    Postgres(postgres::PgBackend),
    Sqlite(sqlite::SqliteBackend),
    #[cfg(feature = "duckdb")]
    DuckDb(duckdb::DuckDbBackend),
}

/// Whose SQL a backend speaks, which decides where the guard reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
    DuckDb,
}

/// The database a session uses, as the configuration and environment name it:
/// `sqlite:` forms select SQLite, `duckdb:` forms DuckDB, anything else is a
/// PostgreSQL connection.
#[derive(Debug)]
// Made once per process, then consumed: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Choice {
    Postgres(postgres::ConnectParams),
    Sqlite {
        /// The connection's own file; calls without `database` use it.
        default: Option<location::Target>,
        /// `sqlite.root`: calls may name files inside it.
        root: Option<location::Root>,
    },
    #[cfg(feature = "duckdb")]
    DuckDb {
        /// The database file, or `duckdb::memory:`.
        target: location::Target,
    },
}

/// Why the database settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    // Not a `source`: the message is already in the text, and an error
    // chain printed whole would say it twice.
    #[error("connection settings: {0}")]
    Postgres(postgres::ParamsError),
    /// A value of `setting` (`--database`, `PGMCP_DATABASE_FILE`,
    /// `sqlite.root`, ...) that cannot be used.
    #[error("{setting}: {message}")]
    Setting { setting: String, message: String },
    /// Two settings that each name a database, both given: a person filled
    /// in two fields, and picking one would hide the mistake.
    #[error("{0} and {1}: both are set, and each names a database: keep one and leave the other empty")]
    Both(named::Setting, named::Setting),
}

impl Choice {
    /// Pick the database: what `named` holds (see [`named::named`] for the
    /// order of settings), else a root-only SQLite server when `sqlite_root`
    /// is set, else PostgreSQL from the config's `connection` section and the
    /// `PG*` variables. A file path in the config's `database` is taken from
    /// the config file's directory.
    pub fn resolve(
        named: Option<&named::Named>,
        sqlite_root: Option<&std::path::Path>,
        connection: &postgres::ConnectionConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Choice, ChoiceError> {
        let root = sqlite_root
            .map(location::Root::new)
            .transpose()
            .map_err(|message| ChoiceError::Setting {
                setting: "sqlite.root".to_owned(),
                message,
            })?;
        let Some(named) = named else {
            if root.is_some() {
                return Ok(Choice::Sqlite { default: None, root });
            }
            return Ok(Choice::Postgres(
                postgres::params::resolve(None, connection, env).map_err(ChoiceError::Postgres)?,
            ));
        };
        let setting = &named.setting;
        let fail = |message: String| ChoiceError::Setting {
            setting: setting.to_string(),
            message,
        };
        let url = named.value.as_str();
        let file = |scheme: &str| -> Result<location::Target, ChoiceError> {
            let mut target = location::Target::parse(scheme, url).map_err(fail)?;
            if let location::DbFile::Path(path) = &mut target.file {
                *path = named::relocate(setting, path);
            }
            Ok(target)
        };
        match setting {
            named::Setting::Demo => {
                let path = std::path::PathBuf::from(url);
                crate::backend::demo::refresh(&path).map_err(|e| fail(e.to_string()))?;
                Ok(Choice::Sqlite {
                    default: Some(location::Target {
                        shown: path.display().to_string(),
                        file: location::DbFile::Path(path),
                    }),
                    root,
                })
            }
            named::Setting::DatabaseFile => match named::database_file(url)? {
                (named::FileKind::Sqlite, target) => Ok(Choice::Sqlite {
                    default: Some(target),
                    root,
                }),
                (named::FileKind::DuckDb, target) => Self::duckdb(target).map_err(fail),
            },
            _ if url.starts_with("duckdb:") => Self::duckdb(file("duckdb")?).map_err(fail),
            _ if url.starts_with("sqlite:") => Ok(Choice::Sqlite {
                default: Some(file("sqlite")?),
                root,
            }),
            _ => match named::file_path_hint(url) {
                Some(hint) => Err(fail(hint)),
                None => Ok(Choice::Postgres(
                    postgres::params::resolve_from(Some(url), setting.name(), connection, env)
                        .map_err(ChoiceError::Postgres)?,
                )),
            },
        }
    }

    /// Where the connection's own database file was looked for, when it is
    /// not there and its path was relative: for a person reading `check`,
    /// `query` or the log (never for the model, whose answers hide paths).
    pub fn missing_file_note(&self, named: Option<&named::Named>) -> Option<String> {
        let target = match self {
            Choice::Sqlite {
                default: Some(target), ..
            } => target,
            #[cfg(feature = "duckdb")]
            Choice::DuckDb { target } => target,
            _ => return None,
        };
        let location::DbFile::Path(path) = &target.file else {
            return None;
        };
        named::missing_note(&named?.setting, std::path::Path::new(&target.shown), path)
    }

    #[cfg(feature = "duckdb")]
    fn duckdb(target: location::Target) -> Result<Choice, String> {
        Ok(Choice::DuckDb { target })
    }

    #[cfg(not(feature = "duckdb"))]
    fn duckdb(_target: location::Target) -> Result<Choice, String> {
        Err("this pgmcp was built without DuckDB support: build with --features duckdb".to_owned())
    }
}

impl Backend {
    pub fn dialect(&self) -> Dialect {
        match self {
            Backend::Postgres(_) => Dialect::Postgres,
            Backend::Sqlite(_) => Dialect::Sqlite,
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(_) => Dialect::DuckDb,
        }
    }

    /// Only SQLite opens files a call names (`sqlite.root`); the other
    /// engines have one database, and refuse the `database` argument here.
    fn serves_files(&self) -> bool {
        matches!(self, Backend::Sqlite(_))
    }

    fn no_files(&self) -> Error {
        let connected = match self {
            Backend::Postgres(_) => "PostgreSQL",
            Backend::Sqlite(_) => "SQLite",
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(_) => "one DuckDB database",
        };
        InputError::DatabaseNotServed { connected }.into()
    }

    pub async fn execute(&self, stmt: Statement<'_>, guard: Guard<'_>, deadline: &Deadline) -> Result<Rows, Error> {
        match (self, guard) {
            _ if stmt.database.is_some() && !self.serves_files() => Err(self.no_files()),
            (Backend::Postgres(pg), Guard::Checked { catalog_version }) => {
                pg.execute(stmt, Some(catalog_version), deadline).await
            }
            (Backend::Sqlite(lite), Guard::WhilePreparing(judge)) => lite.execute(stmt, judge, deadline).await,
            #[cfg(feature = "duckdb")]
            (Backend::DuckDb(duck), Guard::WhilePreparing(judge)) => duck.execute(stmt, judge, deadline).await,
            // The pipeline picks the stage by the engine's dialect; refuse
            // rather than run a statement no guard saw.
            _ => Err(Error::Internal(format!(
                "a statement reached the {:?} backend without its guard stage",
                self.dialect()
            ))),
        }
    }

    /// What `stmt` would change, as SQLite or DuckDB reports while preparing
    /// it with every report judged by `judge`: nothing runs. PostgreSQL's
    /// come from its parse tree and plan (`crate::pipeline::confirm`).
    pub async fn change(&self, stmt: Statement<'_>, judge: &Judge, deadline: &Deadline) -> Result<Change, Error> {
        match self {
            _ if stmt.database.is_some() && !self.serves_files() => Err(self.no_files()),
            Backend::Sqlite(lite) => lite.change(stmt, judge, deadline).await,
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(duck) => duck.change(stmt, judge, deadline).await,
            Backend::Postgres(_) => Err(Error::Internal(
                "a PostgreSQL statement's change is read from its parse tree, not prepared".to_owned(),
            )),
        }
    }

    /// The catalog's facts about functions for the PostgreSQL guard; the
    /// embedded engines' guards ask their own engine instead, and get none.
    pub async fn routines(&self, deadline: &Deadline) -> Result<std::sync::Arc<crate::guard::Routines>, Error> {
        match self {
            Backend::Postgres(pg) => pg.routines(deadline).await,
            _ => Ok(std::sync::Arc::default()),
        }
    }

    /// An extension installed in the database (PostgreSQL: `CREATE
    /// EXTENSION`); the embedded engines' extensions are none of this.
    pub async fn extension(&self, name: &str, deadline: &Deadline) -> Result<Option<Extension>, Error> {
        match self {
            Backend::Postgres(pg) => pg.extension(name, deadline).await,
            _ => Ok(None),
        }
    }

    /// A server setting's value (PostgreSQL), `None` where it has no such
    /// setting: an extension's own settings exist once its library is loaded.
    pub async fn setting(&self, name: &str, deadline: &Deadline) -> Result<Option<String>, Error> {
        match self {
            Backend::Postgres(pg) => pg.setting(name, deadline).await,
            _ => Ok(None),
        }
    }

    pub async fn list_tables(&self, filter: &TableFilter, deadline: &Deadline) -> Result<TableList, Error> {
        match self {
            _ if filter.database.is_some() && !self.serves_files() => Err(self.no_files()),
            Backend::Postgres(pg) => pg.list_tables(filter, deadline).await,
            Backend::Sqlite(lite) => lite.list_tables(filter, deadline).await,
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(duck) => duck.list_tables(filter, deadline).await,
        }
    }

    pub async fn describe_table(
        &self,
        database: Option<&str>,
        schema: Option<&str>,
        table: &str,
        deadline: &Deadline,
    ) -> Result<TableDescription, Error> {
        match self {
            _ if database.is_some() && !self.serves_files() => Err(self.no_files()),
            Backend::Postgres(pg) => pg.describe_table(schema, table, deadline).await,
            Backend::Sqlite(lite) => lite.describe_table(database, schema, table, deadline).await,
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(duck) => duck.describe_table(schema, table, deadline).await,
        }
    }

    /// Close catalog names for an undefined table or column error.
    pub async fn suggest(
        &self,
        error: &DbError,
        relations: &[String],
        database: Option<&str>,
        deadline: &Deadline,
    ) -> Vec<String> {
        match self {
            Backend::Postgres(pg) => pg.suggest(error, relations, deadline).await,
            Backend::Sqlite(lite) => lite.suggest(error, database, deadline).await,
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(duck) => duck.suggest(error, deadline).await,
        }
    }

    pub async fn session_report(&self, deadline: &Deadline) -> Result<SessionReport, Error> {
        match self {
            Backend::Postgres(pg) => pg.session_report(deadline).await,
            Backend::Sqlite(lite) => lite.session_report(deadline).await,
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(duck) => duck.session_report(deadline).await,
        }
    }

    /// Close idle connections; called on shutdown.
    pub async fn close(&self) {
        match self {
            Backend::Postgres(pg) => pg.close().await,
            // Connections live for one call.
            Backend::Sqlite(_) => {}
            // The database stays open until the engine is dropped; calls
            // still running keep using it.
            #[cfg(feature = "duckdb")]
            Backend::DuckDb(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(url: &str) -> Result<Choice, ChoiceError> {
        let named = named::Named {
            value: url.to_owned(),
            setting: named::Setting::Flag,
        };
        Choice::resolve(Some(&named), None, &postgres::ConnectionConfig::default(), &|_| None)
    }

    #[cfg(feature = "duckdb")]
    #[test]
    fn duckdb_urls_select_duckdb() {
        match resolve("duckdb:///data/w.duckdb") {
            Ok(Choice::DuckDb { target }) => assert_eq!(target.shown, "/data/w.duckdb"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(resolve("duckdb::memory:"), Ok(Choice::DuckDb { .. })));
    }

    #[cfg(not(feature = "duckdb"))]
    #[test]
    fn duckdb_urls_need_the_feature() {
        let e = resolve("duckdb:///data/w.duckdb").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--database: this pgmcp was built without DuckDB support: build with --features duckdb"
        );
    }

    /// A malformed URL is named as such with or without DuckDB support.
    #[test]
    fn malformed_duckdb_urls_are_refused() {
        let e = resolve("duckdb://host/w.duckdb").unwrap_err();
        assert!(e.to_string().contains("duckdb:// takes an absolute path"), "{e}");
    }
}
