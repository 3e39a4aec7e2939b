//! SQLite files. Each call opens its own connection on a blocking thread (an
//! open is tens of microseconds, and no session state can leak between calls),
//! prepares the one statement with an authorizer that asks
//! [`crate::guard::sqlite`], steps it until the row cap, and closes.
//!
//! Timeouts and cancellation reach SQLite through its progress handler, which
//! interrupts the statement; `busy_timeout` is bounded by the same deadline.
//! Read-only mode opens the file read-only and sets `query_only`: no byte of the
//! file changes, and no `-journal` file is created. (A database in WAL mode
//! cannot be read without its `-shm` index, which SQLite creates if missing.)

mod catalog;
/// Where the SQLite files are; shared with DuckDB, kept at this path too.
pub use crate::backend::location;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rusqlite::hooks::Authorization;
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use self::location::{DbFile, PathMask, Root, Target};
use super::embedded::{self, Stop, hex};
use super::{Column, Deadline, Rows, SessionReport, Statement};
use crate::error::{ConnectionError, DbError, Error, ErrorCode, InputError};
use crate::guard::{self, Judge, Rule, Violation, sqlite::Outline};
use crate::pipeline::budget::{self, ReadBudget};
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList};

/// How often (in SQLite virtual machine steps) the deadline is checked.
const PROGRESS_STEPS: i32 = 1000;

/// SQLite databases: the connection's own file, and/or files inside a root.
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    default: Option<Target>,
    root: Option<Root>,
    read_only: bool,
}

impl SqliteBackend {
    pub fn new(default: Option<Target>, root: Option<Root>, read_only: bool) -> SqliteBackend {
        SqliteBackend {
            default,
            root,
            read_only,
        }
    }

    /// The file a call uses: `database` inside the root, else the default.
    fn target(&self, database: Option<&str>) -> Result<Target, Error> {
        match (database, &self.root, &self.default) {
            (Some(given), Some(root), _) => root.resolve(given),
            (Some(_), None, _) => Err(InputError::DatabaseNeedsRoot.into()),
            (None, _, Some(default)) => Ok(default.clone()),
            (None, Some(_), None) => Err(InputError::NoDatabaseGiven.into()),
            (None, None, None) => Err(InputError::NoDatabaseConfigured.into()),
        }
    }

    /// Run `stmt`, its actions reported to `judge` as SQLite prepares it.
    pub async fn execute(&self, stmt: Statement<'_>, judge: &Judge, deadline: &Deadline) -> Result<Rows, Error> {
        let target = self.target(stmt.database)?;
        let sql = stmt.sql.to_owned();
        let params = stmt.params.to_vec();
        let judge = judge.clone();
        let limit = stmt.fetch_limit;
        let budget = stmt.budget;
        let read_only = self.read_only;
        blocking(deadline, move |stop| {
            // Open errors already name the file as it was given.
            let mut conn = open(&target, read_only, stop)?;
            // SQLite shows the file's full path (pragma_database_list, PRAGMA
            // database_list): answers show the name the call gave instead.
            let mask = PathMask::new(&target, conn.path());
            mask.result(run(&mut conn, &judge, &sql, &params, limit, budget))
        })
        .await
    }

    /// What `stmt` would change: prepared and judged as [`Self::execute`]
    /// does, with the tables SQLite's authorizer reports; never stepped.
    pub async fn change(
        &self,
        stmt: Statement<'_>,
        judge: &Judge,
        deadline: &Deadline,
    ) -> Result<super::Change, Error> {
        let target = self.target(stmt.database)?;
        let sql = stmt.sql.to_owned();
        let params = stmt.params.to_vec();
        let judge = judge.clone();
        let read_only = self.read_only;
        blocking(deadline, move |stop| {
            let mut conn = open(&target, read_only, stop)?;
            let mask = PathMask::new(&target, conn.path());
            change(&mut conn, &judge, &sql, &params).map_err(|e| mask.error(e))
        })
        .await
    }

    pub async fn list_tables(&self, filter: &TableFilter, deadline: &Deadline) -> Result<TableList, Error> {
        let target = self.target(filter.database.as_deref())?;
        let filter = filter.clone();
        blocking(deadline, move |stop| {
            let conn = open(&target, true, stop)?;
            catalog::list_tables(&conn, &filter).map_err(db_error)
        })
        .await
    }

    pub async fn describe_table(
        &self,
        database: Option<&str>,
        schema: Option<&str>,
        table: &str,
        deadline: &Deadline,
    ) -> Result<TableDescription, Error> {
        let target = self.target(database)?;
        let schema = schema.map(str::to_owned);
        let table = table.to_owned();
        blocking(deadline, move |stop| {
            let conn = open(&target, true, stop)?;
            catalog::describe_table(&conn, schema.as_deref(), &table)
        })
        .await
    }

    /// What `pgmcp check` shows: the SQLite version, the file, and whether
    /// the connection refuses writes (`query_only`), read from SQLite itself.
    /// With only a root configured there is no one file to open.
    pub async fn session_report(&self, deadline: &Deadline) -> Result<SessionReport, Error> {
        let Some(target) = self.default.clone() else {
            return Ok(SessionReport {
                server: format!("SQLite {}", rusqlite::version()),
                endpoint: "files inside sqlite.root".to_owned(),
                user: String::new(),
                role: String::new(),
                role_reason: String::new(),
                role_warnings: Vec::new(),
                database: String::new(),
                encryption: None,
                read_only: self.read_only,
                password_from: None,
                read_only_setting: "server.read_only",
                file: true,
                pooler: false,
            });
        };
        let read_only = self.read_only;
        blocking(deadline, move |stop| {
            let conn = open(&target, read_only, stop)?;
            let (version, query_only, journal): (String, bool, String) = conn
                .query_row(
                    "SELECT sqlite_version(), (SELECT query_only FROM pragma_query_only), \
                     (SELECT journal_mode FROM pragma_journal_mode)",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .map_err(db_error)?;
            Ok(SessionReport {
                server: format!("SQLite {version} (journal_mode {journal})"),
                endpoint: target.shown.clone(),
                user: String::new(),
                role: String::new(),
                role_reason: String::new(),
                role_warnings: Vec::new(),
                database: target.shown,
                encryption: None,
                read_only: query_only,
                password_from: None,
                read_only_setting: "PRAGMA query_only",
                file: true,
                pooler: false,
            })
        })
        .await
    }

    /// Close names for "no such table" / "no such column". Best effort.
    pub async fn suggest(&self, error: &DbError, database: Option<&str>, deadline: &Deadline) -> Vec<String> {
        let Ok(target) = self.target(database) else {
            return Vec::new();
        };
        let message = error.message.clone();
        blocking(deadline, move |stop| {
            let conn = open(&target, true, stop)?;
            Ok(catalog::suggest(&conn, &message))
        })
        .await
        .unwrap_or_default()
    }
}

/// SQLite work on a blocking thread ([`embedded::blocking`]). The progress
/// handler ends a statement whose stop fired with `SQLITE_INTERRUPT`; a lock
/// waited for until the deadline is a timeout too (`busy_timeout` ends with
/// the deadline).
async fn blocking<T: Send + 'static>(
    deadline: &Deadline,
    work: impl FnOnce(Stop) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let interrupted = |e: &Error, _: &Stop| matches!(e, Error::Db(db) if db.code() == "SQLITE_INTERRUPT");
    match embedded::blocking("SQLite", deadline, work, interrupted).await {
        Err(Error::Db(db)) if db.code() == "SQLITE_BUSY" && Instant::now() >= deadline.at => Err(Error::Timeout {
            after: deadline.timeout,
        }),
        other => other,
    }
}

/// Open `target` for one call. Never creates a file: a missing one is an error.
fn open(target: &Target, read_only: bool, stop: Stop) -> Result<Connection, Error> {
    let access = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    };
    let flags = access | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let opened = match &target.file {
        // A private in-memory database cannot be opened read-only (SQLite
        // leaves READ_ONLY with CREATE undefined); query_only guards it instead.
        DbFile::Memory => Connection::open_in_memory_with_flags(
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        ),
        DbFile::Path(path) if !path.is_file() => {
            return Err(super::location::not_found(&target.shown));
        }
        DbFile::Path(path) => Connection::open_with_flags(path, flags),
    };
    // SQLite's open errors name the full path; say it as the caller gave it.
    let mut conn = opened.map_err(|e| {
        Error::Connection(ConnectionError::Open {
            shown: target.shown.clone(),
            reason: code_name(&e).to_string(),
        })
    })?;
    // busy_timeout counts whole milliseconds: round up, so a lock wait ends
    // after the deadline and is reported as the timeout it is.
    let remaining = stop.at().saturating_duration_since(Instant::now()) + std::time::Duration::from_millis(1);
    conn.busy_timeout(remaining).map_err(db_error)?;
    if read_only {
        conn.pragma_update(None, "query_only", true).map_err(db_error)?;
    }
    // The clock as well as the flag: the statement stops the moment the
    // deadline passes, whenever the runner's timer wakes.
    let at = stop.at();
    conn.progress_handler(PROGRESS_STEPS, Some(move || stop.fired() || Instant::now() >= at))
        .map_err(db_error)?;
    Ok(conn)
}

/// Whether `action` reads a column that holds the database file's absolute
/// path (`pragma_database_list.file`).
fn shows_file_path(action: &rusqlite::hooks::AuthAction<'_>) -> bool {
    matches!(
        action,
        rusqlite::hooks::AuthAction::Read { table_name, column_name }
            if table_name.eq_ignore_ascii_case("pragma_database_list") && column_name.eq_ignore_ascii_case("file")
    )
}

/// Guard, prepare, bind, step up to `limit` rows (and one more, to know
/// whether there are more) or until `budget` is spent, convert.
fn run(
    conn: &mut Connection,
    judge: &Judge,
    sql: &str,
    params: &[Value],
    limit: usize,
    mut budget: ReadBudget,
) -> Result<Rows, Error> {
    guard::one_statement(guard::sqlite::statements(sql).len())?;
    // SQLite builds a value whole before pgmcp reads any of it: without a
    // limit, `printf('%.*c', 999999999, 'x')` holds a gigabyte, and the one
    // step that builds it does not reach the progress handler in time.
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, value_limit(&budget))
        .map_err(db_error)?;
    let Guarded {
        mut stmt,
        refused,
        changed: _,
    } = guarded(conn, judge, sql, params)?;
    // The authorizer may refuse while preparing or, for statements SQLite
    // runs in steps of its own (VACUUM), while stepping: its reason wins.
    let fail = |e: rusqlite::Error| match refused.lock().ok().and_then(|mut slot| slot.take()) {
        Some(violation) => Error::from(violation),
        None => db_error(e),
    };
    for (i, param) in params.iter().enumerate() {
        bind(&mut stmt, i + 1, param)?;
    }
    let writes = !stmt.readonly();
    let mut columns: Vec<Column> = stmt
        .columns()
        .map(|c| Column {
            name: c.name().to_owned(),
            type_name: c.decl_type().unwrap_or_default().to_owned(),
        })
        .collect();
    let width = columns.len();
    let row_cost = budget::row_cost(columns.iter().map(|c| c.name.as_str()));
    let mut out = Vec::new();
    let mut more = false;
    let mut spent = false;
    {
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next().map_err(fail)? {
            if out.len() == limit {
                more = true;
                break;
            }
            // Another row, and the budget is spent: stop here.
            if !budget.admit(row_cost) {
                spent = true;
                break;
            }
            let mut values = Vec::with_capacity(width);
            for (i, column) in columns.iter_mut().enumerate() {
                let value = row.get_ref(i).map_err(db_error)?;
                // An expression has no declared type: name it by the first
                // value's storage class, as typeof() would.
                if column.type_name.is_empty() {
                    column.type_name = storage_class(value).unwrap_or_default().to_owned();
                }
                values.push(within(value, &mut budget));
            }
            out.push(values);
        }
    }
    spent |= budget.cut_any();
    drop(stmt);
    // Only NULLs seen: typeof() would say "null". With no rows there is nothing
    // to name, and the type stays empty.
    if !out.is_empty() {
        columns
            .iter_mut()
            .filter(|c| c.type_name.is_empty())
            .for_each(|c| c.type_name = "null".to_owned());
    }
    Ok(Rows {
        columns,
        rows: out,
        rows_affected: writes.then(|| conn.changes()),
        more,
        spent,
        prelude: Vec::new(),
    })
}

/// A statement SQLite prepared with every action it reported judged, and
/// its parameter count checked: nothing has run.
struct Guarded<'c> {
    stmt: rusqlite::Statement<'c>,
    /// A refusal the authorizer keeps for a step SQLite takes later.
    refused: Arc<Mutex<Option<Violation>>>,
    /// The tables SQLite reported it changes (triggers' actions too).
    changed: Arc<Mutex<Vec<String>>>,
}

/// Prepare `sql` on `conn`, every action SQLite reports judged by `judge`.
fn guarded<'c>(conn: &'c mut Connection, judge: &Judge, sql: &str, params: &[Value]) -> Result<Guarded<'c>, Error> {
    let mut outline = Outline::sqlite(sql);
    outline.replacing_tables = replacing_tables(conn)?;
    let refused: Arc<Mutex<Option<Violation>>> = Arc::default();
    let changed: Arc<Mutex<Vec<String>>> = Arc::default();
    let reports: Arc<Mutex<bool>> = Arc::default();
    {
        let (judge, outline, refused, changed, reports) = (
            judge.clone(),
            outline.clone(),
            Arc::clone(&refused),
            Arc::clone(&changed),
            Arc::clone(&reports),
        );
        conn.authorizer(Some(move |ctx: rusqlite::hooks::AuthContext<'_>| {
            if let rusqlite::hooks::AuthAction::Pragma {
                pragma_name,
                pragma_value: None,
            } = ctx.action
                && REPORTING_PRAGMAS.iter().any(|p| p.eq_ignore_ascii_case(pragma_name))
                && let Ok(mut reports) = reports.lock()
            {
                *reports = true;
            }
            if let Some(table) = changes(&ctx.action)
                && let Ok(mut tables) = changed.lock()
                && !tables.iter().any(|t| t == table)
            {
                tables.push(table.to_owned());
            }
            match guard::sqlite::authorize(&judge, &outline, &ctx.action, ctx.accessor) {
                // The file's absolute path reads as NULL: an answer could
                // show it rewritten (substr, hex...), past the PathMask.
                Ok(()) if shows_file_path(&ctx.action) => Authorization::Ignore,
                Ok(()) => Authorization::Allow,
                Err(violation) => {
                    if let Ok(mut slot) = refused.lock() {
                        slot.get_or_insert(violation);
                    }
                    Authorization::Deny
                }
            }
        }))
        .map_err(db_error)?;
    }
    let stmt = match conn.prepare(sql) {
        Ok(stmt) => stmt,
        Err(e) => {
            return Err(match refused.lock().ok().and_then(|mut slot| slot.take()) {
                Some(violation) => violation.into(),
                None => prepare_error(sql, e),
            });
        }
    };
    let reports = reports.lock().map(|r| *r).unwrap_or(false);
    guard::sqlite::statement(judge, &outline, stmt.readonly() || reports)?;
    guard::check_params(stmt.parameter_count(), params, guard::Placeholders::Positional)
        .map_err(|e| Error::Input(InputError::Params(e)))?;
    Ok(Guarded { stmt, refused, changed })
}

/// Pragmas SQLite marks as writing even without a value, where they only
/// report the setting (`PRAGMA journal_mode` answers `delete`; the same
/// opcode changes the mode when given one).
const REPORTING_PRAGMAS: &[&str] = &["journal_mode"];

/// The table an action SQLite reports changes, if it changes one (its
/// own bookkeeping tables, `sqlite_*`, are not the person's concern).
fn changes<'a>(action: &rusqlite::hooks::AuthAction<'a>) -> Option<&'a str> {
    use rusqlite::hooks::AuthAction;
    let table = match *action {
        AuthAction::Insert { table_name }
        | AuthAction::Delete { table_name }
        | AuthAction::Update { table_name, .. }
        | AuthAction::CreateTable { table_name }
        | AuthAction::CreateTempTable { table_name }
        | AuthAction::DropTable { table_name }
        | AuthAction::DropTempTable { table_name }
        | AuthAction::AlterTable { table_name, .. }
        | AuthAction::CreateIndex { table_name, .. }
        | AuthAction::CreateTempIndex { table_name, .. }
        | AuthAction::DropIndex { table_name, .. }
        | AuthAction::DropTempIndex { table_name, .. }
        | AuthAction::CreateTrigger { table_name, .. }
        | AuthAction::CreateTempTrigger { table_name, .. }
        | AuthAction::DropTrigger { table_name, .. }
        | AuthAction::DropTempTrigger { table_name, .. } => table_name,
        AuthAction::CreateView { view_name }
        | AuthAction::CreateTempView { view_name }
        | AuthAction::DropView { view_name }
        | AuthAction::DropTempView { view_name } => view_name,
        _ => return None,
    };
    (!table.to_ascii_lowercase().starts_with("sqlite_")).then_some(table)
}

/// What `sql` would change (see [`SqliteBackend::change`]): prepared and
/// judged exactly as [`run`] does, never stepped.
fn change(conn: &mut Connection, judge: &Judge, sql: &str, params: &[Value]) -> Result<super::Change, Error> {
    guard::one_statement(guard::sqlite::statements(sql).len())?;
    let Guarded { stmt, changed, .. } = guarded(conn, judge, sql, params)?;
    let writes = !stmt.readonly();
    drop(stmt);
    let tables = changed.lock().map(|t| t.clone()).unwrap_or_default();
    Ok(super::Change {
        writes,
        tables,
        estimated_rows: None,
    })
}

/// The tables whose definition replaces on conflict (`ON CONFLICT REPLACE`
/// on a column or constraint), read before the authorizer is installed.
fn replacing_tables(conn: &Connection) -> Result<Vec<String>, Error> {
    let mut stmt = conn
        .prepare(
            "SELECT name, sql FROM main.sqlite_schema WHERE type = 'table' AND sql LIKE '%replace%' \
             UNION ALL SELECT name, sql FROM temp.sqlite_schema WHERE type = 'table' AND sql LIKE '%replace%'",
        )
        .map_err(db_error)?;
    let rows = stmt
        .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))
        .map_err(db_error)?;
    let mut out = Vec::new();
    for row in rows {
        let (name, sql) = row.map_err(db_error)?;
        if guard::outline::defines_replace(&sql) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The least SQLite may build for one value, whatever the answer's cap.
const VALUE_FLOOR: usize = 16 << 20;

/// The most SQLite may build for one string or blob in a call: 256 times what
/// an answer keeps of a value (room for values computed from others), and at
/// least [`VALUE_FLOOR`]. Past it, SQLite stops the statement with
/// `SQLITE_TOOBIG`, which [`db_error`] explains.
fn value_limit(budget: &ReadBudget) -> i32 {
    let limit = budget.value_cap().saturating_mul(256).max(VALUE_FLOOR);
    i32::try_from(limit).unwrap_or(i32::MAX)
}

fn bind(stmt: &mut rusqlite::Statement<'_>, index: usize, param: &Value) -> Result<(), Error> {
    let bound = match param {
        Value::Null => stmt.raw_bind_parameter(index, rusqlite::types::Null),
        Value::Bool(b) => stmt.raw_bind_parameter(index, i64::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => stmt.raw_bind_parameter(index, i),
            (None, Some(f)) if n.is_f64() || n.as_u64().is_none() => stmt.raw_bind_parameter(index, f),
            _ => {
                return Err(InputError::OutOfRange {
                    index: index - 1,
                    value: n.to_string(),
                }
                .into());
            }
        },
        Value::String(s) => stmt.raw_bind_parameter(index, s.as_str()),
        // check_params refused these already.
        Value::Array(_) | Value::Object(_) => {
            return Err(InputError::NotScalar { index: index - 1 }.into());
        }
    };
    bound.map_err(db_error)
}

/// [`to_json`], within the read budget: text and blobs longer than it allows
/// are cut, copying only their head out of SQLite's memory.
fn within(value: ValueRef<'_>, budget: &mut ReadBudget) -> Value {
    match value {
        ValueRef::Text(bytes) => {
            let keep = budget.take(bytes.len());
            if keep < bytes.len() {
                return budget::cut_value(&budget::head_text(&bytes[..keep]), bytes.len());
            }
        }
        // Shown as hex: two characters a byte, after `\x`.
        ValueRef::Blob(bytes) => {
            let keep = budget.take(bytes.len() * 2 + 2);
            if keep < bytes.len() * 2 + 2 {
                return budget::cut_value(&hex(&bytes[..keep.saturating_sub(2) / 2]), bytes.len() * 2 + 2);
            }
        }
        ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_) => {
            budget.take(8);
        }
    }
    to_json(value)
}

/// SQLite values as JSON: integers exact, reals as numbers (infinities as
/// strings), text as text, blobs as `\x` hex, NULL as null.
fn to_json(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) if f.is_nan() => Value::String("NaN".to_owned()),
        ValueRef::Real(f) if f.is_infinite() => {
            Value::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned())
        }
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        // Text that is not UTF-8 cannot be a JSON string without losing bytes.
        ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => Value::String(hex(bytes)),
        },
        ValueRef::Blob(bytes) => Value::String(hex(bytes)),
    }
}

fn storage_class(value: ValueRef<'_>) -> Option<&'static str> {
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(_) => Some("integer"),
        ValueRef::Real(_) => Some("real"),
        ValueRef::Text(_) => Some("text"),
        ValueRef::Blob(_) => Some("blob"),
    }
}

/// A prepare failure: a syntax error is the guard's to report (SQLite's parser
/// is the guard's parser here); anything else is the database's.
fn prepare_error(sql: &str, e: rusqlite::Error) -> Error {
    match e {
        rusqlite::Error::SqlInputError { msg, offset, .. } if is_syntax(&msg) => {
            let at = usize::try_from(offset)
                .ok()
                .and_then(|o| sql.get(..o))
                .map(|s| s.chars().count() + 1);
            let message = match at {
                Some(at) => format!("SQL syntax error: {msg} (at character {at})"),
                None => format!("SQL syntax error: {msg}"),
            };
            Violation {
                rule: Rule::Parse,
                message,
            }
            .into()
        }
        rusqlite::Error::SqliteFailure(_, Some(ref msg)) if is_syntax(msg) => Violation {
            rule: Rule::Parse,
            message: format!("SQL syntax error: {msg}"),
        }
        .into(),
        rusqlite::Error::MultipleStatement => Violation {
            rule: Rule::MultiStatement,
            message: "multi-statement queries are not allowed. Send one statement per call".to_owned(),
        }
        .into(),
        other => db_error(other),
    }
}

fn is_syntax(msg: &str) -> bool {
    msg.contains("syntax error") || msg.contains("incomplete input") || msg.starts_with("unrecognized token")
}

/// An SQLite error as a [`DbError`] whose code is SQLite's result code name.
fn db_error(e: rusqlite::Error) -> Error {
    let (code, message) = match &e {
        rusqlite::Error::SqliteFailure(err, msg) => (
            primary_code(err.extended_code),
            msg.clone().unwrap_or_else(|| err.to_string()),
        ),
        rusqlite::Error::SqlInputError { error, msg, .. } => (primary_code(error.extended_code), msg.clone()),
        other => ("SQLITE_ERROR", other.to_string()),
    };
    // A message can quote a value ("bad JSON path: '$xxx…'").
    let mut message = budget::bounded_message(message);
    if code == "SQLITE_TOOBIG" {
        message.push_str(
            ": a value grew past what pgmcp lets SQLite build for one value (256 times what an answer keeps of a value, query.max_result_length plus 8 KiB, and at least 16 MiB). Build smaller values, or raise query.max_result_length",
        );
    }
    // SQLite says an undefined name only in its wording.
    let undefined_name =
        code == "SQLITE_ERROR" && (message.starts_with("no such table: ") || message.starts_with("no such column: "));
    Error::Db(Box::new(DbError {
        undefined_name,
        ..DbError::new(ErrorCode::Sqlite(code.to_owned()), message)
    }))
}

fn code_name(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(err, _) => format!("{} ({})", err, primary_code(err.extended_code)),
        other => other.to_string(),
    }
}

/// SQLite's primary result code names (the low byte of an extended code).
fn primary_code(extended: i32) -> &'static str {
    match extended & 0xff {
        1 => "SQLITE_ERROR",
        2 => "SQLITE_INTERNAL",
        3 => "SQLITE_PERM",
        4 => "SQLITE_ABORT",
        5 => "SQLITE_BUSY",
        6 => "SQLITE_LOCKED",
        7 => "SQLITE_NOMEM",
        8 => "SQLITE_READONLY",
        9 => "SQLITE_INTERRUPT",
        10 => "SQLITE_IOERR",
        11 => "SQLITE_CORRUPT",
        13 => "SQLITE_FULL",
        14 => "SQLITE_CANTOPEN",
        18 => "SQLITE_TOOBIG",
        19 => "SQLITE_CONSTRAINT",
        20 => "SQLITE_MISMATCH",
        21 => "SQLITE_MISUSE",
        23 => "SQLITE_AUTH",
        25 => "SQLITE_RANGE",
        26 => "SQLITE_NOTADB",
        _ => "SQLITE_ERROR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let cases: Vec<(ValueRef<'_>, Value)> = vec![
            (ValueRef::Null, Value::Null),
            (ValueRef::Integer(i64::MAX), serde_json::json!(9223372036854775807i64)),
            (ValueRef::Integer(-1), serde_json::json!(-1)),
            (ValueRef::Real(1.5), serde_json::json!(1.5)),
            (ValueRef::Real(f64::INFINITY), serde_json::json!("Infinity")),
            (ValueRef::Real(f64::NEG_INFINITY), serde_json::json!("-Infinity")),
            (ValueRef::Text(b"caf\xc3\xa9"), serde_json::json!("café")),
            (ValueRef::Text(b"\xff\x00"), serde_json::json!("\\xff00")),
            (ValueRef::Blob(b"\x00\x01\xab"), serde_json::json!("\\x0001ab")),
            (ValueRef::Blob(b""), serde_json::json!("\\x")),
        ];
        for (value, want) in cases {
            assert_eq!(to_json(value), want, "{value:?}");
        }
    }
}
