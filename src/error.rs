//! The library's error type: every way a tool call can fail, each with a message
//! written for the model that will read it and act on it.

use std::fmt;
use std::time::Duration;

use crate::guard::Violation;
use crate::pipeline::hooks::HookError;

/// Why a query, `list_tables` or `describe_table` call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The guard refused the SQL before it reached the database.
    #[error(transparent)]
    Guard(#[from] Violation),
    /// PostgreSQL (or another engine) refused or failed the statement.
    #[error(transparent)]
    Db(Box<DbError>),
    /// The call ran past its timeout; the work was stopped on the server.
    #[error("query timed out after {}: it was cancelled on the server. Add a LIMIT, filter with WHERE, or ask for fewer columns", seconds(*.after))]
    Timeout { after: Duration },
    /// The client cancelled the call; the work was stopped on the server.
    #[error("query cancelled by the client")]
    Cancelled,
    /// Every connection slot stayed busy until the call's deadline.
    #[error("failed to acquire query slot: all {slots} connection slots are in use, gave up after waiting {}", seconds(*.waited))]
    NoSlot { slots: usize, waited: Duration },
    /// Too many calls were already waiting for a connection slot: the call
    /// was refused at once rather than held (its arguments with it).
    #[error(
        "too many calls at once: {waiting} are already waiting for the {slots} connection slots \
         (pool.max_waiting, and at most 16 MiB of SQL and parameters among them). \
         Send the next call when one has answered"
    )]
    Busy { waiting: usize, slots: usize },
    /// The server asked for a password and none was found; `message` says
    /// where one was looked for and what to do (never a password).
    #[error("{message}")]
    PasswordRequired { message: String },
    /// The session could not switch to the role statements run as (it does
    /// not exist, or the login may not switch to it), so nothing ran.
    /// `target`: `connection.role`, or `pg_read_all_data` for read-only mode
    /// with a login that can do more than read. `code` is the SQLSTATE;
    /// `advice` says what to do, when the backend knows the names.
    #[error(
        "cannot run as {target}: {message} (SQLSTATE {code}){}",
        .advice.as_ref().map(|a| format!("; {a}")).unwrap_or_default()
    )]
    Role {
        target: &'static str,
        code: String,
        message: String,
        advice: Option<String>,
    },
    /// The database's catalog changed between the guard's check and the
    /// statement (a function, type, view or rule was created or replaced), so
    /// the statement did not run; the pipeline checks it again once.
    #[error("the database's catalog changed while the query was being checked, so it did not run: send it again")]
    CatalogChanged,
    /// Something committed on the server since the connection last checked
    /// the catalog in full, so the statement did not run: the PostgreSQL
    /// backend runs it again after the full check. Never reaches a caller.
    #[error("the database changed while the query was being checked, so it did not run: send it again")]
    CatalogUnconfirmed,
    /// One of pgmcp's own prepared statements was not on the server
    /// session where pgmcp prepared it, so the call's statement did not
    /// run: the PostgreSQL backend finds out why (a pooler, or a statement
    /// of the caller's that deallocated it) and runs it again. Never
    /// reaches a caller.
    #[error(transparent)]
    StatementLost(Box<DbError>),
    /// The database could not be reached or opened, or the connection broke.
    #[error("cannot reach the database: {0}")]
    Connection(#[from] ConnectionError),
    /// The call's arguments were unusable: the caller changes them and
    /// calls again.
    #[error(transparent)]
    Input(#[from] InputError),
    /// What the call names (a table, a schema, a database file) is not
    /// there, or not only once.
    #[error(transparent)]
    NotFound(#[from] NotFound),
    /// The database answered one of pgmcp's own queries in a way pgmcp
    /// does not read: a server it does not know, never the caller's doing.
    /// `what` names the query.
    #[error("unexpected reply from the database to {what}: {detail}")]
    UnexpectedReply { what: &'static str, detail: String },
    /// A failure of pgmcp's own that no argument caused (an answer it could
    /// not encode, a statement that reached a backend without its guard
    /// stage): a bug to report, with what failed.
    #[error("internal error: {0}")]
    Internal(String),
    /// A hook refused, failed or timed out.
    #[error(transparent)]
    Hook(#[from] HookError),
    /// The statement waits for a person's confirmation (`confirm`): nothing
    /// ran. The door asks the person, and calls again with the proposal
    /// accepted (`crate::pipeline::confirm`).
    #[error(
        "this statement {} and waits for a person to accept it (confirm is on): nothing ran",
        match .0.writes { true => "changes data", false => "is one that confirm: \"all\" covers" }
    )]
    Unconfirmed(Box<crate::pipeline::confirm::Proposal>),
    /// Any of the above, with the configured error prompts that matched it.
    #[error("{source}\n\n{prompts}")]
    Prompted { source: Box<Error>, prompts: String },
    /// Any of the above as the model reads it: `text` is the whole message,
    /// sanitized and capped by `crate::pipeline::fence::error`.
    #[error("{text}")]
    Fenced { source: Box<Error>, text: String },
}

impl Error {
    /// Whether the error's text can carry what a database holds: its own
    /// messages (which quote values), names from its catalog (a "did you
    /// mean", a function the guard refused by what it reached), a server's
    /// words, a hook's (which read the result). Such a text goes inside the
    /// boundary around data (`door::boundary`).
    pub fn quotes_data(&self) -> bool {
        match self.kind() {
            Error::Guard(_)
            | Error::Db(_)
            | Error::Role { .. }
            | Error::StatementLost(_)
            | Error::Connection(_)
            | Error::NotFound(_)
            | Error::UnexpectedReply { .. }
            | Error::Internal(_)
            | Error::Hook(_) => true,
            Error::Timeout { .. }
            | Error::Cancelled
            | Error::NoSlot { .. }
            | Error::Busy { .. }
            | Error::PasswordRequired { .. }
            | Error::CatalogChanged
            | Error::CatalogUnconfirmed
            | Error::Unconfirmed(_)
            | Error::Input(_) => false,
            Error::Prompted { source, .. } | Error::Fenced { source, .. } => source.quotes_data(),
        }
    }

    /// Whether the call itself is at fault: its arguments were unusable, or
    /// name what is not there. The caller changes the call; nothing failed.
    pub fn is_the_callers(&self) -> bool {
        matches!(self.kind(), Error::Input(_) | Error::NotFound(_))
    }

    /// The error itself, without any prompts appended or fencing.
    pub fn kind(&self) -> &Error {
        match self {
            Error::Prompted { source, .. } | Error::Fenced { source, .. } => source.kind(),
            other => other,
        }
    }
}

impl Error {
    /// What kind of failure this was, in words safe to log: never the
    /// message, which can quote row values, parameters or the SQL
    /// (`invalid input syntax for type integer: "<a value>"`).
    pub fn label(&self) -> String {
        match self.kind() {
            Error::Guard(v) => format!("refused by the guard (rule {})", v.rule.name()),
            Error::Db(db) => format!("database error ({})", db.code),
            Error::Timeout { .. } => "timed out".to_owned(),
            Error::Cancelled => "cancelled".to_owned(),
            Error::NoSlot { .. } => "no connection slot".to_owned(),
            Error::Busy { .. } => "too many calls waiting".to_owned(),
            Error::PasswordRequired { .. } => "password required".to_owned(),
            Error::Role { target, code, .. } => format!("cannot run as {target} (SQLSTATE {code})"),
            Error::CatalogChanged => "catalog changed".to_owned(),
            Error::CatalogUnconfirmed => "catalog unconfirmed".to_owned(),
            Error::StatementLost(db) => format!("prepared statement lost ({})", db.code),
            Error::Connection(_) => "connection failed".to_owned(),
            Error::Input(_) => "unusable arguments".to_owned(),
            Error::NotFound(_) => "not found".to_owned(),
            Error::UnexpectedReply { what, .. } => format!("unexpected reply to {what}"),
            Error::Internal(_) => "internal error".to_owned(),
            Error::Hook(h) => format!("hook: {}", h.label()),
            Error::Unconfirmed(_) => "waits for a person's confirmation".to_owned(),
            Error::Prompted { .. } | Error::Fenced { .. } => "error".to_owned(),
        }
    }
}

/// Why a call's arguments were unusable. Each says what was wrong and what
/// to send instead.
// More kinds may come: an embedder matches the ones it handles.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// `how` says which text was measured: the SQL as sent (empty), or as
    /// the `before_query` hooks rewrote it.
    #[error("the query{how} is {length} characters long, more than the {max} allowed (query.max_sql_length)")]
    SqlTooLong {
        how: &'static str,
        length: usize,
        max: usize,
    },
    #[error("the parameters take {bytes} bytes, more than the {max} allowed (query.max_params_bytes)")]
    ParamsTooLarge { bytes: usize, max: usize },
    #[error("limit must be at least 1")]
    ZeroLimit,
    /// The parameters do not match the statement's placeholders, or one is
    /// not a scalar; the guard's words say which and how to pass it.
    #[error("{0}")]
    Params(String),
    /// A parameter that is not a string, number, boolean or null reached a
    /// backend (the guard refuses them first; a backend refuses them again).
    #[error(
        "params[{index}] is not a string, number, boolean or null: pass arrays and objects as JSON text in a string"
    )]
    NotScalar { index: usize },
    /// An integer SQLite cannot store.
    #[error("params[{index}] = {value} is outside SQLite's integer range; pass it as a string")]
    OutOfRange { index: usize, value: String },
    /// `describe_table`'s `table` (with `schema`) names no table: the words
    /// say why.
    #[error("{0}")]
    TableName(String),
    /// The `database` argument of a server without `sqlite.root`: `connected`
    /// says what it serves instead.
    #[error("the database argument names an SQLite file inside sqlite.root; this server is connected to {connected}")]
    DatabaseNotServed { connected: &'static str },
    #[error("the database argument needs sqlite.root in the server's config; this server has one database")]
    DatabaseNeedsRoot,
    #[error("no database given: pass database, a path inside the configured directory")]
    NoDatabaseGiven,
    #[error("no SQLite database is configured")]
    NoDatabaseConfigured,
    /// The `database` argument is not a path inside `sqlite.root`: the words
    /// say why.
    #[error("{0}")]
    DatabasePath(String),
    #[error("database roles are a PostgreSQL feature: SQLite and DuckDB files have none")]
    NoRoles,
    /// A curated tool's argument that is missing, unknown or not of its
    /// parameter's type: the words name the tool and the argument.
    #[error("{0}")]
    Argument(String),
    /// The `database` argument names no database of the config's.
    #[error("no database is named {given:?}: this server's databases are {}", .known.join(", "))]
    UnknownDatabase { given: String, known: Vec<String> },
}

/// What a call names that is not there, or not only once.
// More kinds may come: an embedder matches the ones it handles.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotFound {
    /// `what` is the table as the engine names it (`table "a"`, `table
    /// "s"."a"`); `unreadable`: on PostgreSQL a table the role may not read
    /// looks the same as one that does not exist; `advice` names close
    /// tables or says how to list them.
    #[error("{what} does not exist{}. {advice}", if *.unreadable { ", or the role cannot read it" } else { "" })]
    Table {
        what: String,
        unreadable: bool,
        advice: String,
    },
    /// The table is not in the schema given, but in `others`.
    #[error("table \"{schema}\".\"{name}\" does not exist; a table named \"{name}\" exists in schema {}. Pass that schema.", .others.join(", "))]
    TableElsewhere {
        schema: String,
        name: String,
        others: Vec<String>,
    },
    /// No schema was given and several have the table.
    #[error("table \"{name}\" exists in several schemas: {}. Pass schema to say which.", .schemas.join(", "))]
    AmbiguousTable { name: String, schemas: Vec<String> },
    /// SQLite has one schema.
    #[error("schema \"{schema}\" does not exist: an SQLite database has one schema, main")]
    SqliteSchema { schema: String },
    /// The database file; `shown` is the name as the person or the call
    /// gave it, never the resolved path, which would show the server's
    /// directories.
    #[error("Database not found: {shown}")]
    DatabaseFile { shown: String },
}

/// Why the database could not be reached or opened, or the connection
/// broke. Each message says what happened and, where pgmcp can tell, why
/// and what to do.
// More kinds may come: an embedder matches the ones it handles.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// Connecting to the server failed; the backend worded it for people
    /// (what happened, the likeliest cause, what to do next).
    #[error("{0}")]
    Connect(String),
    /// No host answered in time.
    #[error(
        "could not connect to {target}: timed out after {seconds} s ({limit}); check the host and that PostgreSQL accepts TCP connections there"
    )]
    TimedOut {
        target: String,
        seconds: u64,
        limit: String,
    },
    /// No host was the kind of server `target_session_attrs` asks for.
    #[error("{0}")]
    NoSuitableHost(String),
    /// The SQLite or DuckDB file could not be opened: `shown` is its name as
    /// given, `reason` the engine's.
    #[error("cannot open {shown}: {reason}")]
    Open { shown: String, reason: String },
    /// The DuckDB file's path cannot be handed to DuckDB.
    #[error("{shown}: the path is not UTF-8")]
    PathNotUtf8 { shown: String },
    /// The thread running an SQLite or DuckDB call failed.
    #[error("the {engine} worker failed: {reason}")]
    Worker { engine: &'static str, reason: String },
}

impl InputError {
    /// The same error with `mask` applied to every text it carries.
    pub fn masked(self, mask: impl Fn(&str) -> String) -> InputError {
        match self {
            InputError::Params(text) => InputError::Params(mask(&text)),
            InputError::TableName(text) => InputError::TableName(mask(&text)),
            InputError::DatabasePath(text) => InputError::DatabasePath(mask(&text)),
            InputError::Argument(text) => InputError::Argument(mask(&text)),
            InputError::UnknownDatabase { given, known } => InputError::UnknownDatabase {
                given: mask(&given),
                known,
            },
            InputError::OutOfRange { index, value } => InputError::OutOfRange {
                index,
                value: mask(&value),
            },
            // Every other kind carries no text but numbers and pgmcp's own
            // words; listed, so a new kind with a text is masked on purpose.
            other @ (InputError::SqlTooLong { .. }
            | InputError::ParamsTooLarge { .. }
            | InputError::ZeroLimit
            | InputError::NotScalar { .. }
            | InputError::DatabaseNotServed { .. }
            | InputError::DatabaseNeedsRoot
            | InputError::NoDatabaseGiven
            | InputError::NoDatabaseConfigured
            | InputError::NoRoles) => other,
        }
    }
}

impl NotFound {
    /// The same error with `mask` applied to every text it carries.
    pub fn masked(self, mask: impl Fn(&str) -> String) -> NotFound {
        match self {
            NotFound::Table {
                what,
                unreadable,
                advice,
            } => NotFound::Table {
                what: mask(&what),
                unreadable,
                advice: mask(&advice),
            },
            NotFound::TableElsewhere { schema, name, others } => NotFound::TableElsewhere {
                schema: mask(&schema),
                name: mask(&name),
                others: others.iter().map(|o| mask(o)).collect(),
            },
            NotFound::AmbiguousTable { name, schemas } => NotFound::AmbiguousTable {
                name: mask(&name),
                schemas: schemas.iter().map(|s| mask(s)).collect(),
            },
            NotFound::SqliteSchema { schema } => NotFound::SqliteSchema { schema: mask(&schema) },
            NotFound::DatabaseFile { shown } => NotFound::DatabaseFile { shown: mask(&shown) },
        }
    }
}

impl ConnectionError {
    /// The same error with `mask` applied to every text it carries (an
    /// engine's message can name its file, a person's setting its path).
    pub fn masked(self, mask: impl Fn(&str) -> String) -> ConnectionError {
        match self {
            ConnectionError::Connect(text) => ConnectionError::Connect(mask(&text)),
            ConnectionError::NoSuitableHost(text) => ConnectionError::NoSuitableHost(mask(&text)),
            ConnectionError::TimedOut { target, seconds, limit } => ConnectionError::TimedOut {
                target: mask(&target),
                seconds,
                limit: mask(&limit),
            },
            // `shown` is the name as given: a path when the server's
            // configuration named the file, which the mask shows bare.
            ConnectionError::Open { shown, reason } => ConnectionError::Open {
                shown: mask(&shown),
                reason: mask(&reason),
            },
            ConnectionError::PathNotUtf8 { shown } => ConnectionError::PathNotUtf8 { shown: mask(&shown) },
            ConnectionError::Worker { engine, reason } => ConnectionError::Worker {
                engine,
                reason: mask(&reason),
            },
        }
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Error {
        Error::Db(Box::new(e))
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

/// Which engine's code an error carries: each engine names its errors its
/// own way, and only the backend that made the error reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCode {
    /// PostgreSQL's SQLSTATE, e.g. `42P01` for an undefined table.
    SqlState(String),
    /// SQLite's primary result code name, e.g. `SQLITE_CONSTRAINT`.
    Sqlite(String),
    /// DuckDB's error kind, e.g. `DUCKDB_CATALOG`.
    DuckDb(String),
}

impl ErrorCode {
    /// The code as its engine spells it.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::SqlState(code) | ErrorCode::Sqlite(code) | ErrorCode::DuckDb(code) => code,
        }
    }

    /// The SQLSTATE, for a PostgreSQL error.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            ErrorCode::SqlState(code) => Some(code),
            _ => None,
        }
    }
}

/// The code with the name its engine gives that kind of code, for a label:
/// `SQLSTATE 42P01`, `SQLite result code SQLITE_ERROR`, `DuckDB error kind
/// DUCKDB_CATALOG`.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::SqlState(code) => write!(f, "SQLSTATE {code}"),
            ErrorCode::Sqlite(code) => write!(f, "SQLite result code {code}"),
            ErrorCode::DuckDb(code) => write!(f, "DuckDB error kind {code}"),
        }
    }
}

/// An error reported by the database, with the fields a person (or model) needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    pub severity: String,
    pub code: ErrorCode,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the query where the error was found.
    pub position: Option<u32>,
    /// Close names from the catalog, for an undefined table or column.
    pub suggestions: Vec<String>,
    /// The error is about a table or column that does not exist, as the
    /// backend that made it tells from its engine's code and wording: close
    /// names can be suggested.
    pub undefined_name: bool,
}

impl DbError {
    /// An error with only a code and a message (severity `ERROR`).
    pub fn new(code: ErrorCode, message: String) -> DbError {
        DbError {
            severity: "ERROR".to_owned(),
            code,
            message,
            detail: None,
            hint: None,
            position: None,
            suggestions: Vec::new(),
            undefined_name: false,
        }
    }

    /// The SQLSTATE code, e.g. `57014` for a cancelled statement, SQLite's
    /// result code name, e.g. `SQLITE_CONSTRAINT`, or DuckDB's error kind,
    /// e.g. `DUCKDB_CATALOG`.
    pub fn code(&self) -> &str {
        self.code.as_str()
    }

    /// An undefined table or column, for which close names can be suggested.
    pub fn is_undefined_name(&self) -> bool {
        self.undefined_name
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            ErrorCode::Sqlite(code) => write!(f, "{} ({code})", self.message)?,
            // DuckDB's message may go on with the query's line and a caret
            // under the position: the code goes on the first line, so the
            // caret still lines up.
            ErrorCode::DuckDb(code) => match self.message.split_once('\n') {
                Some((first, rest)) => write!(f, "{first} ({code})\n{rest}")?,
                None => write!(f, "{} ({code})", self.message)?,
            },
            ErrorCode::SqlState(code) => write!(f, "{} (SQLSTATE {code})", self.message)?,
        }
        if !self.suggestions.is_empty() {
            write!(f, "\nDid you mean: {}?", self.suggestions.join(", "))?;
        }
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL: {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT: {hint}")?;
        }
        if let Some(position) = self.position {
            write!(f, "\nat character {position} of the query")?;
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let cases: Vec<(Error, &str)> = vec![
            (
                Error::Timeout {
                    after: Duration::from_secs(30),
                },
                "query timed out after 30s: it was cancelled on the server. Add a LIMIT, filter with WHERE, or ask for fewer columns",
            ),
            (
                Error::NoSlot {
                    slots: 4,
                    waited: Duration::from_millis(2500),
                },
                "failed to acquire query slot: all 4 connection slots are in use, gave up after waiting 2.5s",
            ),
            (
                Error::Db(Box::new(DbError {
                    hint: Some("Check the name.".into()),
                    position: Some(15),
                    suggestions: vec!["public.users".into(), "auth.user_accounts".into()],
                    ..DbError::new(
                        ErrorCode::SqlState("42P01".into()),
                        "relation \"x\" does not exist".into(),
                    )
                })),
                "relation \"x\" does not exist (SQLSTATE 42P01)\nDid you mean: public.users, auth.user_accounts?\nHINT: Check the name.\nat character 15 of the query",
            ),
            (
                Error::Db(Box::new(DbError::new(
                    ErrorCode::DuckDb("DUCKDB_PARSER".into()),
                    "Parser Error: syntax error at or near \"SELEC\"\n\nLINE 1: SELEC 1\n        ^".into(),
                ))),
                "Parser Error: syntax error at or near \"SELEC\" (DUCKDB_PARSER)\n\nLINE 1: SELEC 1\n        ^",
            ),
            (
                NotFound::Table {
                    what: "table \"deal\"".into(),
                    unreadable: true,
                    advice: "Did you mean: sales.deals?".into(),
                }
                .into(),
                "table \"deal\" does not exist, or the role cannot read it. Did you mean: sales.deals?",
            ),
            (
                NotFound::Table {
                    what: "table \"user\"".into(),
                    unreadable: false,
                    advice: "Did you mean: users?".into(),
                }
                .into(),
                "table \"user\" does not exist. Did you mean: users?",
            ),
            (
                NotFound::AmbiguousTable {
                    name: "shared".into(),
                    schemas: vec!["a".into(), "b".into()],
                }
                .into(),
                "table \"shared\" exists in several schemas: a, b. Pass schema to say which.",
            ),
            (
                InputError::SqlTooLong {
                    how: " as the before_query hooks rewrote it",
                    length: 69,
                    max: 50,
                }
                .into(),
                "the query as the before_query hooks rewrote it is 69 characters long, more than the 50 allowed (query.max_sql_length)",
            ),
            (
                InputError::NotScalar { index: 2 }.into(),
                "params[2] is not a string, number, boolean or null: pass arrays and objects as JSON text in a string",
            ),
            (
                ConnectionError::TimedOut {
                    target: "db:5432".into(),
                    seconds: 10,
                    limit: "connect_timeout".into(),
                }
                .into(),
                "cannot reach the database: could not connect to db:5432: timed out after 10 s (connect_timeout); \
                 check the host and that PostgreSQL accepts TCP connections there",
            ),
            (
                Error::UnexpectedReply {
                    what: "a catalog query",
                    detail: "missing field `name`".into(),
                },
                "unexpected reply from the database to a catalog query: missing field `name`",
            ),
        ];
        for (err, expected) in cases {
            assert_eq!(err.to_string(), expected);
        }
    }

    /// Whose doing an error is: the call's (the caller changes it) or not.
    #[test]
    fn the_callers_errors_are_input_and_not_found() {
        let cases: Vec<(Error, bool)> = vec![
            (InputError::ZeroLimit.into(), true),
            (NotFound::DatabaseFile { shown: "a.db".into() }.into(), true),
            (
                Error::Prompted {
                    source: Box::new(InputError::NoRoles.into()),
                    prompts: "see the docs".into(),
                },
                true,
            ),
            (ConnectionError::Connect("refused".into()).into(), false),
            (Error::Internal("cannot encode".into()), false),
            (Error::Cancelled, false),
        ];
        for (err, callers) in cases {
            assert_eq!(err.is_the_callers(), callers, "{err}");
        }
    }

    #[test]
    fn labels() {
        let db = |code: ErrorCode| Error::from(DbError::new(code, "quotes a \"value\"".into()));
        let cases: Vec<(Error, &str)> = vec![
            (
                db(ErrorCode::SqlState("22P02".into())),
                "database error (SQLSTATE 22P02)",
            ),
            (
                db(ErrorCode::Sqlite("SQLITE_ERROR".into())),
                "database error (SQLite result code SQLITE_ERROR)",
            ),
            (
                db(ErrorCode::DuckDb("DUCKDB_CATALOG".into())),
                "database error (DuckDB error kind DUCKDB_CATALOG)",
            ),
            (
                Error::StatementLost(Box::new(DbError::new(
                    ErrorCode::SqlState("26000".into()),
                    "prepared statement \"s1\" does not exist".into(),
                ))),
                "prepared statement lost (SQLSTATE 26000)",
            ),
        ];
        for (err, expected) in cases {
            assert_eq!(err.label(), expected);
        }
    }
}
