//! DuckDB files. The database opens once, lazily, on a blocking thread, with
//! DuckDB's own sandbox settings locked for the session (`lock_configuration`):
//! external access off (no file, URL or extension outside the database file)
//! unless `allow_file_functions`, extension autoloading off, `READ_ONLY` access
//! mode and no spilling to disk (`temp_directory = ''`) when `server.read_only`,
//! no persistent secrets (their `secret_directory` naming no home directory),
//! and `memory_limit`/`threads` from the config. Every answer and error passes
//! the [`PathMask`].
//!
//! Each call gets its own connections on a blocking thread. DuckDB's parser
//! counts the statements and prepares the one statement on a raw connection
//! ([`native`]), so the guard ([`crate::guard::duckdb`]) decides by the
//! statement type DuckDB reports; the statement then runs, streaming, on the
//! `duckdb` crate's connection, and reading stops at the row cap. A deadline
//! or a cancellation interrupts it (`duckdb_interrupt`), repeatedly until the
//! work ends.
//!
//! Values come through the crate's Arrow reader and are converted by
//! [`value`], guided by the types DuckDB declared for the columns.

mod catalog;
mod native;
mod settings;
pub mod value;

use std::sync::{Arc, Mutex, MutexGuard};

use duckdb::types::ValueRef;
use serde_json::Value;

use self::native::{Database, Session};
pub use self::settings::{DuckdbConfig, memory_size};
use self::value::{DuckType, to_json};
use super::embedded::{self, Stop};
use super::location::{DbFile, PathMask, Target};
use super::{Change, Column, Deadline, Rows, SessionReport, Statement};
use crate::error::{ConnectionError, DbError, Error, ErrorCode, InputError};
use crate::guard::duckdb::{Evidence, Kind, Plan};
use crate::guard::outline::{self, Outline, without_final_semicolon};
use crate::guard::{self, Judge, Placeholders};
use crate::pipeline::budget::{self, ReadBudget};
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList};

/// A DuckDB database file (or `duckdb::memory:`).
#[derive(Clone)]
pub struct DuckDbBackend {
    shared: Arc<Shared>,
}

struct Shared {
    target: Target,
    /// `server.read_only`: the file opens in `READ_ONLY` access mode.
    read_only: bool,
    /// `protection.allow_file_functions`: external access stays on.
    file_access: bool,
    settings: DuckdbConfig,
    /// Opened by the first call that needs it.
    db: Mutex<Option<Arc<Database>>>,
}

impl DuckDbBackend {
    pub fn new(target: Target, read_only: bool, file_access: bool, settings: DuckdbConfig) -> DuckDbBackend {
        DuckDbBackend {
            shared: Arc::new(Shared {
                target,
                read_only,
                file_access,
                settings,
                db: Mutex::new(None),
            }),
        }
    }

    /// Run `stmt`, judged by `judge` as DuckDB's parser reports it.
    pub async fn execute(&self, stmt: Statement<'_>, judge: &Judge, deadline: &Deadline) -> Result<Rows, Error> {
        let sql = stmt.sql.to_owned();
        let params = stmt.params.to_vec();
        let judge = judge.clone();
        let limit = stmt.fetch_limit;
        let budget = stmt.budget;
        let result = self
            .blocking(deadline, move |session, stop| {
                run(session, stop, &judge, &sql, &params, limit, budget)
            })
            .await;
        // duckdb_databases(), PRAGMA database_list and the default
        // temp_directory (the file's path plus `.tmp`) show where the file
        // lives, secret_directory and extension errors the home directory:
        // answers show the name the file was given, and `~`, instead.
        PathMask::new(&self.shared.target, None).result(result)
    }

    /// What `stmt` would change: prepared and judged as [`Self::execute`]
    /// does, with what DuckDB's plan shows of it; nothing runs.
    pub async fn change(&self, stmt: Statement<'_>, judge: &Judge, deadline: &Deadline) -> Result<Change, Error> {
        let sql = stmt.sql.to_owned();
        let params = stmt.params.to_vec();
        let judge = judge.clone();
        let result = self
            .blocking(deadline, move |session, _| change(session, &judge, &sql, &params))
            .await;
        result.map_err(|e| PathMask::new(&self.shared.target, None).error(e))
    }

    pub async fn list_tables(&self, filter: &TableFilter, deadline: &Deadline) -> Result<TableList, Error> {
        let filter = filter.clone();
        self.blocking(deadline, move |session, _| {
            catalog::list_tables(&session.conn, &filter).map_err(db_error)
        })
        .await
    }

    pub async fn describe_table(
        &self,
        schema: Option<&str>,
        table: &str,
        deadline: &Deadline,
    ) -> Result<TableDescription, Error> {
        let schema = schema.map(str::to_owned);
        let table = table.to_owned();
        self.blocking(deadline, move |session, _| {
            catalog::describe_table(&session.conn, schema.as_deref(), &table)
        })
        .await
    }

    /// Close names for DuckDB's unknown table or column errors, leaving out
    /// the ones DuckDB's own message already offers. Best effort.
    pub async fn suggest(&self, error: &DbError, deadline: &Deadline) -> Vec<String> {
        let message = error.message.clone();
        self.blocking(deadline, move |session, _| {
            Ok(catalog::suggest(&session.conn, &message))
        })
        .await
        .unwrap_or_default()
    }

    /// What `pgmcp check` shows: DuckDB's version, the file, and the access
    /// mode DuckDB reports.
    pub async fn session_report(&self, deadline: &Deadline) -> Result<SessionReport, Error> {
        let shown = self.shared.target.shown.clone();
        let memory = self.shared.target.file == DbFile::Memory;
        let read_only = self.shared.read_only;
        self.blocking(deadline, move |session, _| {
            let (version, access, memory_limit, threads): (String, String, String, String) = session
                .conn
                .query_row(
                    "SELECT system.main.version(), system.main.current_setting('access_mode'), system.main.current_setting('memory_limit'), \
                     system.main.current_setting('threads')::VARCHAR",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .map_err(db_error)?;
            // An in-memory database cannot be opened read-only: there the
            // guard alone refuses writes.
            let (read_only, setting) = if memory {
                (read_only, "the guard (an in-memory database is never opened read-only)")
            } else {
                (access.eq_ignore_ascii_case("read_only"), "access_mode = read_only")
            };
            Ok(SessionReport {
                server: format!("DuckDB {version} (memory_limit {memory_limit}, {threads} threads)"),
                endpoint: shown.clone(),
                user: String::new(),
                role: String::new(),
                role_reason: String::new(),
                role_warnings: Vec::new(),
                database: shown,
                encryption: None,
                read_only,
                password_from: None,
                read_only_setting: setting,
                file: true,
                pooler: false,
            })
        })
        .await
    }

    /// Run `work` on a blocking thread ([`embedded::blocking`]) with a
    /// session of its own, whose statement the stop interrupts. Whatever
    /// fails once the stop fired failed because of it: an interrupted
    /// statement, or the work's own [`Stop::check`].
    async fn blocking<T: Send + 'static>(
        &self,
        deadline: &Deadline,
        work: impl FnOnce(&Session, &Stop) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let shared = Arc::clone(&self.shared);
        let work = move |stop: Stop| {
            let db = shared.database()?;
            let session = Session::open(&db).map_err(|reason| {
                Error::Connection(ConnectionError::Open {
                    shown: shared.target.shown.clone(),
                    reason,
                })
            })?;
            let interrupt = session.conn.interrupt_handle();
            stop.on_fire(move || interrupt.interrupt());
            work(&session, &stop)
        };
        // Every call's errors (opening the file included, whose lock
        // conflicts name the file and the process holding it) are masked.
        embedded::blocking("DuckDB", deadline, work, |_, stop| stop.fired())
            .await
            .map_err(|e| PathMask::new(&self.shared.target, None).error(e))
    }
}

impl Shared {
    /// The database, opened on first use. Never creates a file.
    fn database(&self) -> Result<Arc<Database>, Error> {
        let mut slot = lock(&self.db);
        if let Some(db) = slot.as_ref() {
            return Ok(Arc::clone(db));
        }
        let path = match &self.target.file {
            DbFile::Memory => ":memory:".to_owned(),
            DbFile::Path(path) if !path.is_file() => {
                return Err(super::location::not_found(&self.target.shown));
            }
            DbFile::Path(path) => path
                .to_str()
                .ok_or_else(|| {
                    Error::Connection(ConnectionError::PathNotUtf8 {
                        shown: self.target.shown.clone(),
                    })
                })?
                .to_owned(),
        };
        let (settings, then) = self.settings();
        let db = Database::open(&path, &settings, &then).map_err(|reason| {
            Error::Connection(ConnectionError::Open {
                shown: self.target.shown.clone(),
                reason,
            })
        })?;
        let db = Arc::new(db);
        *slot = Some(Arc::clone(&db));
        Ok(db)
    }

    /// The settings the database opens with, and the statements run right
    /// after; `lock_configuration` last, so no statement can change any of
    /// them afterwards.
    ///
    /// File access (`allow_file_functions`) is every directory but pgmcp's
    /// own process: DuckDB's external access stays off, and the top-level
    /// directories other than `/proc`, `/dev` and `/sys` are allowed
    /// ([`crate::process::roots`]). DuckDB checks a name as text, which `..` after a
    /// symbolic link walks around: under `pgmcp serve` the kernel checks it
    /// again (`crate::process::sandbox`).
    fn settings(&self) -> (Vec<(&'static str, String)>, String) {
        let mut settings = Vec::new();
        // DuckDB spills what does not fit in memory into `<file>.tmp/`
        // beside the database (hundreds of MB for one large sort). In
        // read-only mode nothing is written: spilling is off, so such a query
        // fails with DuckDB's out-of-memory error instead. First: with
        // external access off DuckDB refuses to change the temp directory.
        if self.read_only {
            settings.push(("temp_directory", String::new()));
        }
        // Persistent secrets are off (below), so the directory they would
        // live in is never used; DuckDB's default spells out the home
        // directory, which an answer could show rewritten (`reverse()`),
        // past the PathMask. It reads as what it means instead. Before
        // external access is turned off, which would refuse the change.
        settings.push(("secret_directory", SECRET_DIRECTORY.to_owned()));
        // allowed_directories is taken only while external access is on, from
        // a started database: set after opening, then access turned off.
        settings.extend([
            ("enable_external_access", self.file_access.to_string()),
            ("autoinstall_known_extensions", "false".to_owned()),
            ("autoload_known_extensions", "false".to_owned()),
            ("allow_community_extensions", "false".to_owned()),
        ]);
        // DuckDB cannot open an in-memory database read-only; the guard
        // refuses its writes instead.
        if self.read_only && self.target.file != DbFile::Memory {
            settings.push(("access_mode", "READ_ONLY".to_owned()));
        }
        if let Some(limit) = &self.settings.memory_limit {
            settings.push(("memory_limit", limit.clone()));
        }
        if let Some(threads) = self.settings.threads {
            settings.push(("threads", threads.to_string()));
        }
        // Persistent secrets would be written under the home directory.
        settings.push(("allow_persistent_secrets", "false".to_owned()));
        if !self.file_access {
            settings.push(("lock_configuration", "true".to_owned()));
            return (settings, String::new());
        }
        let allowed: Vec<String> = crate::process::roots::allowed()
            .iter()
            .filter_map(|path| path.to_str())
            .map(|path| format!("'{}/'", path.replace('\'', "''")))
            .collect();
        let then = format!(
            "SET GLOBAL allowed_directories = [{}]; SET GLOBAL enable_external_access = false; \
             SET GLOBAL lock_configuration = true",
            allowed.join(", ")
        );
        (settings, then)
    }
}

/// `secret_directory` as DuckDB's default reads through the PathMask.
const SECRET_DIRECTORY: &str = "~/.duckdb/stored_secrets";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Count the statements with DuckDB's parser, apply the guard to the one
/// statement as DuckDB prepared it, then run it streaming and read up to
/// `limit` rows (and one more, to know whether there are more).
fn run(
    session: &Session,
    stop: &Stop,
    judge: &Judge,
    sql: &str,
    params: &[Value],
    limit: usize,
    mut budget: ReadBudget,
) -> Result<Rows, Error> {
    let Judged {
        outline,
        kind,
        values,
        types,
        names,
        ..
    } = judged(session, judge, sql, params)?;

    // Columns the crate cannot read come back as DuckDB's own text: a query
    // runs inside one that casts them (`CAST(#2 AS VARCHAR)`); anything else
    // leaves them null. A bare NULL column is null either way.
    //
    // DuckDB hands results over 2,048 rows at a time, converted whole to
    // Arrow: 150 rows of one 10 MB computed value (held once by DuckDB) would
    // become 1.5 GB. So the same outer query also cuts long text inside
    // DuckDB, to what the read budget keeps of a value.
    let known = !types.contains(&DuckType::Unknown);
    let as_text: Vec<bool> = types.iter().map(|t| !t.readable() && *t != DuckType::Null).collect();
    let wrap = (known && kind == Kind::Select)
        && types
            .iter()
            .zip(&as_text)
            .any(|(t, text)| *text || *t == DuckType::Varchar);
    let wrapped = wrap.then(|| outer_query(sql, &types, &as_text, budget.value_cap()));
    stop.check()?;
    let (mut stmt, cast, lengths) = match wrapped.as_ref().map(|w| (session.conn.prepare(&w.sql), w)) {
        Some((Ok(stmt), w)) => (stmt, true, w.lengths.clone()),
        _ => (session.conn.prepare(sql).map_err(db_error)?, false, Vec::new()),
    };
    drop(stmt.stream_arrow(duckdb::params_from_iter(values)).map_err(db_error)?);
    stop.check()?;
    // With parameters DuckDB may know the result's types only once it ran.
    let (names, types) = if known {
        (names, types)
    } else {
        let names = stmt.column_names();
        let types = (0..names.len())
            .map(|i| native::describe_handle(&stmt.column_logical_type(i), &stmt.column_type(i)))
            .collect();
        (names, types)
    };
    let read: Vec<bool> = types
        .iter()
        .map(|t| *t != DuckType::Null && (t.readable() || cast))
        .collect();
    // A write reports how many rows it changed as one row, `Count`.
    let counts_rows = matches!(
        kind,
        Kind::Insert | Kind::Update | Kind::Delete | Kind::MergeInto | Kind::Copy | Kind::Create
    ) && names.len() == 1
        && names[0] == "Count"
        && !outline.has("RETURNING");
    // A statement that changes something must run to its end: DuckDB rolls
    // back one whose streaming result is dropped early. Only its first rows
    // are kept.
    let to_the_end = !matches!(kind, Kind::Select | Kind::Explain | Kind::Pragma | Kind::Call);
    let columns: Vec<Column> = names
        .iter()
        .zip(&types)
        .map(|(name, ty)| Column {
            name: name.clone(),
            type_name: ty.name(),
        })
        .collect();
    // What each row costs beyond its values: a key per column.
    let row_cost = budget::row_cost(columns.iter().map(|c| c.name.as_str()));
    let mut out: Vec<Vec<Value>> = Vec::new();
    let mut more = false;
    let mut spent = false;
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(db_error)? {
        if out.len() == limit {
            more = true;
            if to_the_end {
                continue;
            }
            break;
        }
        // Another row, and the budget is spent: stop here.
        if !budget.admit(row_cost) {
            spent = true;
            if to_the_end {
                continue;
            }
            break;
        }
        let mut values = Vec::with_capacity(columns.len());
        for (i, ty) in types.iter().enumerate() {
            if read[i] {
                // The whole length of a text the outer query may have cut.
                let whole = match lengths.get(i).copied().flatten() {
                    Some(at) => match row.get_ref(at).map_err(db_error)? {
                        ValueRef::BigInt(n) => usize::try_from(n).ok(),
                        _ => None,
                    },
                    None => None,
                };
                values.push(within(row.get_ref(i).map_err(db_error)?, whole, ty, &mut budget));
            } else {
                values.push(Value::Null);
            }
        }
        out.push(values);
    }
    spent |= budget.cut_any();
    if counts_rows {
        let changed = out.first().and_then(|row| row.first()).and_then(Value::as_u64);
        return Ok(Rows {
            columns: Vec::new(),
            rows: Vec::new(),
            rows_affected: changed,
            more: false,
            spent: false,
            prelude: Vec::new(),
        });
    }
    Ok(Rows {
        columns,
        rows: out,
        rows_affected: None,
        more,
        spent,
        prelude: Vec::new(),
    })
}

/// A statement DuckDB prepared and the guard judged with all DuckDB
/// said of it: nothing has run.
struct Judged {
    outline: Outline,
    kind: Kind,
    values: Vec<duckdb::types::Value>,
    evidence: Evidence,
    types: Vec<DuckType>,
    names: Vec<String>,
}

/// Count the statements with DuckDB's parser, prepare the one, and judge
/// it by `judge` with DuckDB's evidence ([`evidence`]).
fn judged(session: &Session, judge: &Judge, sql: &str, params: &[Value]) -> Result<Judged, Error> {
    let outline = Outline::duckdb(sql);
    let extracted = session.extract(sql).map_err(db_error)?;
    guard::one_statement(extracted.count)?;
    guard::duckdb::text(judge, &outline)?;
    let prepared = match extracted.prepare(0) {
        Ok(prepared) => prepared,
        Err(message) => {
            // DuckDB's sandbox refuses some statements while preparing them
            // (a COPY to a file with external access off): the rule that
            // refuses the statement says why, when one does.
            if let Some(kind) = Kind::from_verb(&outline) {
                guard::duckdb::statement(judge, &outline, &Evidence::of(kind))?;
            }
            return Err(db_error(message));
        }
    };
    let kind = Kind::from_code(prepared.kind());
    guard::check_params(prepared.param_count(), params, Placeholders::Positional)
        .map_err(|e| Error::Input(InputError::Params(e)))?;
    let values = params.iter().map(param).collect::<Vec<_>>();
    let evidence = evidence(session, sql, kind, &values, 0);
    guard::duckdb::statement(judge, &outline, &evidence)?;
    let types = prepared.column_types();
    let names = prepared.column_names();
    drop(prepared);
    drop(extracted);
    Ok(Judged {
        outline,
        kind,
        values,
        evidence,
        types,
        names,
    })
}

/// What `sql` would change, as DuckDB reports it (see
/// [`DuckDbBackend::change`]): judged exactly as [`run`] judges it, never
/// run.
fn change(session: &Session, judge: &Judge, sql: &str, params: &[Value]) -> Result<Change, Error> {
    // Preparing it would already advance the sequence: the person is asked
    // on the text's word, and the whole guard judges it when it runs.
    let outline = Outline::duckdb(sql);
    if guard::duckdb::advances_sequence(&outline) {
        guard::one_statement(session.extract(sql).map_err(db_error)?.count)?;
        guard::duckdb::text(judge, &outline)?;
        return Ok(Change {
            writes: true,
            tables: Vec::new(),
            estimated_rows: None,
        });
    }
    let Judged {
        outline,
        kind,
        evidence,
        ..
    } = judged(session, judge, sql, params)?;
    let reads = match kind {
        Kind::Select => true,
        Kind::Explain => !outline.analyze,
        _ => false,
    };
    let plan = evidence.plan.unwrap_or_default();
    Ok(Change {
        writes: !reads,
        tables: plan.changed_table.into_iter().collect(),
        estimated_rows: plan.estimated_rows,
    })
}

/// How many tails of an `EXPLAIN`'s text are asked about: DuckDB's
/// statement begins within its first few tokens outside parentheses
/// (`EXPLAIN`, `ANALYZE`, an option list, then the statement).
const EXPLAINED_STARTS: usize = 6;

/// What DuckDB says about statement `sql` of type `kind`, beyond its type,
/// for the guard: the plan of a statement that changes rows, and for an
/// `EXPLAIN` each statement it may explain. Asking runs nothing: DuckDB
/// prepares and plans (`EXPLAIN` without `ANALYZE`) but does not execute.
fn evidence(session: &Session, sql: &str, kind: Kind, values: &[duckdb::types::Value], depth: usize) -> Evidence {
    let mut evidence = Evidence::of(kind);
    match kind {
        // What changes rows, and what reads: a view or a table macro can
        // run a table function the text never names.
        Kind::Delete | Kind::Update | Kind::Insert | Kind::Select | Kind::Call | Kind::Create => {
            evidence.plan = plan(session, sql, values);
        }
        // EXPLAIN of an EXPLAIN is refused for want of evidence past two.
        Kind::Explain if depth < 2 => {
            for at in outline::explained_starts(sql, outline::Dialect::DuckDb, EXPLAINED_STARTS) {
                let tail = &sql[at..];
                let Ok(extracted) = session.extract(tail) else { continue };
                if extracted.count != 1 {
                    continue;
                }
                let Ok(prepared) = extracted.prepare(0) else { continue };
                let inner = Kind::from_code(prepared.kind());
                drop(prepared);
                drop(extracted);
                evidence.explained.push((
                    Outline::duckdb(tail),
                    self::evidence(session, tail, inner, values, depth + 1),
                ));
            }
        }
        _ => {}
    }
    evidence
}

/// DuckDB's physical plan of `sql` (`EXPLAIN (FORMAT JSON)`), planned with
/// the call's parameters; `None` when DuckDB gives none.
fn plan(session: &Session, sql: &str, values: &[duckdb::types::Value]) -> Option<Plan> {
    let explain = format!("EXPLAIN (FORMAT JSON) {sql}");
    // One statement (an EXPLAIN, as it begins with the word): the crate's
    // `prepare` runs every statement of a text but the last, so nothing
    // else may be in it.
    if session.extract(&explain).ok()?.count != 1 {
        return None;
    }
    let mut stmt = session.conn.prepare(&explain).ok()?;
    let json: String = stmt
        .query_row(duckdb::params_from_iter(values.iter()), |row| row.get(1))
        .ok()?;
    Plan::from_json(&json)
}

/// [`to_json`], within the read budget: text longer than it allows is cut
/// before it is copied out of the result; other values are measured by their
/// JSON text and cut the same way.
/// `whole` is the length of the text before the outer query cut it, when it
/// did ([`outer_query`]).
fn within(value: ValueRef<'_>, whole: Option<usize>, ty: &DuckType, budget: &mut ReadBudget) -> Value {
    if let ValueRef::Text(bytes) = value {
        let len = whole.unwrap_or(bytes.len()).max(bytes.len());
        let keep = budget.take(len);
        if keep < len {
            return budget::cut_value(&budget::head_text(&bytes[..keep.min(bytes.len())]), len);
        }
        return to_json(value.to_owned(), ty);
    }
    let json = to_json(value.to_owned(), ty);
    let size = match &json {
        Value::String(s) => s.len(),
        Value::Array(_) | Value::Object(_) => json.to_string().len(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    };
    let keep = budget.take(size);
    if keep == size {
        return json;
    }
    let text = match json {
        Value::String(s) => s,
        other => other.to_string(),
    };
    budget::cut_value(&budget::head_text(&text.as_bytes()[..keep]), size)
}

/// A query around the statement's, and where it put what.
struct OuterQuery {
    sql: String,
    /// For each column of the statement, the column of the outer query
    /// holding its text's whole length, when the outer query may cut it.
    lengths: Vec<Option<usize>>,
}

/// `sql`, a query, inside one that returns its columns by position: those
/// marked in `as_text` cast to `VARCHAR`, and text longer than `cap` bytes
/// cut to its first `cap` characters (at least `cap` bytes: the read budget
/// then cuts it to its bytes), with each such text's whole length in a
/// column of its own after the statement's. The guard judged `sql`; this
/// adds only casts and built-in functions around it, named in full
/// (`system.main.`): a macro in the file could otherwise take a built-in's
/// name.
fn outer_query(sql: &str, types: &[DuckType], as_text: &[bool], cap: usize) -> OuterQuery {
    let mut columns = Vec::with_capacity(types.len());
    let mut extra = Vec::new();
    let mut lengths = Vec::with_capacity(types.len());
    for (i, (ty, text)) in types.iter().zip(as_text).enumerate() {
        let column = match text {
            true => format!("CAST(#{} AS VARCHAR)", i + 1),
            false => format!("#{}", i + 1),
        };
        if !text && *ty != DuckType::Varchar {
            columns.push(column);
            lengths.push(None);
            continue;
        }
        columns.push(format!(
            "CASE WHEN system.main.strlen({column}) > {cap} THEN system.main.left({column}, {cap}) ELSE {column} END"
        ));
        lengths.push(Some(types.len() + extra.len()));
        extra.push(format!("CAST(system.main.strlen({column}) AS BIGINT)"));
    }
    columns.extend(extra);
    OuterQuery {
        sql: format!(
            "SELECT {} FROM (\n{}\n) AS pgmcp_result",
            columns.join(", "),
            without_final_semicolon(sql)
        ),
        lengths,
    }
}

/// A JSON parameter as a DuckDB value. An integer beyond 64 bits goes as its
/// digits, which DuckDB casts to the type the placeholder needs.
fn param(value: &Value) -> duckdb::types::Value {
    use duckdb::types::Value as Duck;
    match value {
        Value::Null => Duck::Null,
        Value::Bool(b) => Duck::Boolean(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Duck::BigInt(i)
            } else if let Some(u) = n.as_u64() {
                Duck::UBigInt(u)
            } else {
                let text = n.to_string();
                if text.contains(['.', 'e', 'E']) {
                    Duck::Double(n.as_f64().unwrap_or(f64::NAN))
                } else {
                    Duck::Text(text)
                }
            }
        }
        Value::String(s) => Duck::Text(s.clone()),
        // check_params refused these already.
        Value::Array(_) | Value::Object(_) => Duck::Null,
    }
}

/// A DuckDB error as a [`DbError`]: the message verbatim (DuckDB's own
/// wording, with the line and a caret under the position), the code its
/// kind: `Parser Error: ...` → `DUCKDB_PARSER`.
pub(crate) fn db_error(error: impl std::fmt::Display) -> Error {
    // DuckDB quotes whole values in its messages ("Could not convert string
    // 'xxx…' to INT32"): keep no more than any answer could show.
    let message = budget::bounded_message(error.to_string());
    let code = code(&message);
    // DuckDB says an undefined name in its wording, under these kinds.
    let undefined_name = (code == "DUCKDB_CATALOG" && message.contains("Table with name "))
        || (code == "DUCKDB_BINDER" && message.contains("Referenced column \""));
    Error::Db(Box::new(DbError {
        undefined_name,
        ..DbError::new(ErrorCode::DuckDb(code), message)
    }))
}

/// `DUCKDB_<KIND>` from a message's `<Kind> Error:` prefix.
fn code(message: &str) -> String {
    let kind = message
        .split_once(" Error: ")
        .map(|(kind, _)| kind)
        .filter(|kind| !kind.is_empty() && kind.chars().all(|c| c.is_ascii_alphabetic() || c == ' '));
    match kind {
        Some(kind) => format!("DUCKDB_{}", kind.to_ascii_uppercase().replace(' ', "_")),
        None => "DUCKDB_ERROR".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes() {
        let cases = [
            ("Parser Error: syntax error at or near \"SELEC\"", "DUCKDB_PARSER"),
            ("Catalog Error: Table with name x does not exist!", "DUCKDB_CATALOG"),
            ("Binder Error: Referenced column \"y\" not found", "DUCKDB_BINDER"),
            ("Invalid Input Error: bad", "DUCKDB_INVALID_INPUT"),
            ("INTERRUPT Error: Interrupted!", "DUCKDB_INTERRUPT"),
            ("Out of Memory Error: failed to allocate", "DUCKDB_OUT_OF_MEMORY"),
            ("something else", "DUCKDB_ERROR"),
            ("a: b Error: c", "DUCKDB_ERROR"),
        ];
        for (message, want) in cases {
            assert_eq!(code(message), want, "{message}");
        }
    }

    #[test]
    fn params() {
        use duckdb::types::Value as Duck;
        let cases: Vec<(&str, Duck)> = vec![
            ("null", Duck::Null),
            ("true", Duck::Boolean(true)),
            ("-5", Duck::BigInt(-5)),
            ("18446744073709551615", Duck::UBigInt(u64::MAX)),
            (
                "123456789012345678901234567890",
                Duck::Text("123456789012345678901234567890".into()),
            ),
            ("1.5", Duck::Double(1.5)),
            ("\"x\"", Duck::Text("x".into())),
        ];
        for (json, want) in cases {
            let value: Value = serde_json::from_str(json).unwrap();
            assert_eq!(param(&value), want, "{json}");
        }
    }
}
