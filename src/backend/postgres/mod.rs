//! The PostgreSQL backend: a small pool of `wire::Connection`s, one round trip
//! per call, and the cancel request that makes timeouts stop work on the server.

mod catalog;
mod diagnosis;
pub mod hba;
pub mod login;
pub mod params;
pub mod passfile;
mod role;
mod routines;
mod tls;
mod types;
pub mod value;
mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use diagnosis::Failure;
pub use login::{HbaFacts, NewLogin, Place};
pub use params::{
    ConnectParams, ConnectionConfig, ConnectionSettingError, Host, ParamsError, PasswordSource, RawConnection,
    RootCert, SessionAttrs, SslMode,
};
use role::SessionRole;
pub use role::{quote_ident, suggest_role_sql};
use types::TypeCatalog;
use wire::{CancelTarget, Connection, Exchange, Prepared, StatementResult, WireError};

use super::{Column, Deadline, Rows, SessionReport, Statement};
use crate::error::{DbError, Error};
use crate::pipeline::budget;
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList};

/// After the deadline, how long we let the server's own `statement_timeout`
/// report before sending a cancel request ourselves.
const SERVER_FIRST: Duration = Duration::from_millis(150);
/// After a cancel request, how long we wait for the server to answer before
/// giving up on the connection.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How often the cancel request is repeated until the server answers.
const CANCEL_REPEAT: Duration = Duration::from_millis(100);

/// Session settings sent at connect time. They make text output independent of
/// the server's configuration, and `RESET ALL` (part of [`RESET`]) returns
/// to them, because startup parameters are the session's defaults.
const PINNED: &[(&str, &str)] = &[
    ("client_encoding", "UTF8"),
    ("DateStyle", "ISO, YMD"),
    ("IntervalStyle", "postgres"),
    ("TimeZone", "UTC"),
    ("extra_float_digits", "3"),
    ("bytea_output", "hex"),
    // The guard's parser treats backslashes in '...' literally. A server (or
    // database, or role) set to `off` would read `'a\'` as an escaped quote and
    // see code where the guard saw a string, so every session pins `on`.
    ("standard_conforming_strings", "on"),
    // money's text form follows lc_monetary.
    ("lc_monetary", "C"),
];

/// The pinned settings a connection pooler carries from its client to
/// whichever server connection runs the client's transaction. PgBouncer
/// tracks these (and `application_name`) and refuses a connection that sends
/// any other startup parameter.
const POOLER_TRACKED: &[&str] = &[
    "client_encoding",
    "DateStyle",
    "TimeZone",
    "standard_conforming_strings",
];

/// What PgBouncer answers a startup parameter it does not track with.
const UNTRACKED_PARAMETER: &str = "unsupported startup parameter";

/// The name the settings statement is kept prepared under.
const SETTINGS_NAME: &str = "pgmcp_settings";

/// Every pinned setting but the encoding (which poolers track, and which a
/// statement cannot change mid-transaction without confusing them) is set
/// again at the start of each transaction, `SET LOCAL`-style: behind a
/// pooler the server connection running it may have been another client's
/// a moment before, or the pooler may have dropped the startup parameters.
/// With them, the statement timeout (`$1`, in milliseconds). One statement,
/// kept prepared like the catalog check: planned once per connection, not
/// at every call.
fn settings(timeout_ms: &[Option<String>; 1], named: bool) -> Prepared<'_> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let calls: Vec<String> = PINNED
            .iter()
            .filter(|(name, _)| *name != "client_encoding")
            .map(|(name, value)| format!("pg_catalog.set_config('{name}', '{value}', true)"))
            .collect();
        format!(
            "SELECT {}, pg_catalog.set_config('statement_timeout', $1::pg_catalog.text, true)",
            calls.join(", ")
        )
    });
    Prepared {
        name: if named { SETTINGS_NAME } else { "" },
        sql: SQL.as_str(),
        params: timeout_ms,
        after_parse: false,
    }
}

/// Whether `db`, the error of one of pgmcp's own statements, says one of
/// pgmcp's named statements is not where pgmcp prepared it
/// (`invalid_sql_statement_name`), or is there already without pgmcp having
/// prepared it (`duplicate_prepared_statement`): either the connection
/// reaches different server connections from one transaction to the next,
/// as through a transaction pooler, or a statement of the caller's
/// deallocated it ([`PgBackend::statement_lost`] tells which). Never asked
/// of the caller's statement's own error: `DEALLOCATE pgmcp_settings` failing
/// is the caller's answer, not news about the server.
fn names_a_statement_of_pgmcps(db: &DbError) -> bool {
    matches!(db.code(), "26000" | "42P05")
        && routines::NAMES
            .iter()
            .chain([&SETTINGS_NAME])
            .any(|name| db.message.contains(&format!("\"{name}\"")))
}

// The text of [`RESET`], a macro so that [`FINISH_POOLED`] can be built
// from it at compile time.
macro_rules! reset_sql {
    () => {
        "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; UNLISTEN *; \
         SELECT pg_catalog.pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES"
    };
}

/// What returns the session to its startup state after each call, sent with
/// the call and read before the connection's next use: `DISCARD ALL` but for
/// `DEALLOCATE ALL` and `DISCARD PLANS`, which would throw away pgmcp's own
/// prepared catalog check. A caller's `PREPARE` makes the connection
/// deallocate everything before its next call (`wire::Connection`).
const RESET: &str = reset_sql!();

/// Behind a pooler, [`RESET`] follows `COMMIT` in the same query message: a
/// pooler hands the server connection on only when a message is done, so
/// the reset runs on the session the call ran in, and never on one that
/// may be another client's by the connection's next use. After `COMMIT`,
/// not before it: what a failed statement leaves that rolling back does
/// not undo (an advisory lock, a sequence's `currval`) is undone too. (A
/// `COMMIT` that fails itself, on a deferred constraint, skips the rest of
/// the message; the transaction is rolled back.)
const FINISH_POOLED: &[&str] = &[concat!("COMMIT; ", reset_sql!())];

/// How long looking at the role's privileges for the log may take.
const AUDIT_BUDGET: Duration = Duration::from_secs(2);

/// How long a pooled connection may take to answer its deferred session reset.
const SETTLE: Duration = Duration::from_secs(2);

/// The most tables `list_tables` asks the catalog for: its query takes the
/// cap as an `int` and asks for one more, to tell that the list was cut.
const LIST_LIMIT_MAX: usize = 2_147_483_646;

/// How connections are kept.
#[derive(Debug, Clone)]
pub struct PgOptions {
    pub read_only: bool,
    pub max_conn_lifetime: Duration,
    pub max_conn_idle: Duration,
    /// `connection.role`: every exchange switches to it (`SET LOCAL ROLE`).
    pub role: Option<String>,
    /// `connection.read_only_as_login`: in read-only mode without
    /// `connection.role`, run as the login even when it can do more than
    /// read (see [`role::LOGIN_POWERS`]), instead of as `pg_read_all_data`.
    pub read_only_as_login: bool,
}

pub struct PgBackend {
    params: ConnectParams,
    options: PgOptions,
    /// Idle connections with the time they were returned. The pipeline's
    /// semaphore bounds how many calls run at once, so there are never more
    /// connections than slots: the pool only has to remember idle ones.
    idle: Mutex<Vec<(Connection, Instant)>>,
    /// Column type names and shapes, learned from the catalog as they appear.
    types: TypeCatalog,
    /// What the catalog says about functions, for the guard.
    routines: routines::Cache,
    /// `connection.role`, with the statement that switches to it.
    role: Option<SessionRole>,
    /// Set once the role's privileges have been looked at for the log.
    audited: AtomicBool,
    /// Set when the server turned a pinned startup parameter away as a
    /// pooler does (PgBouncer), or pgmcp's prepared check went missing
    /// between transactions: from then on connections send only what
    /// poolers carry, the check goes unnamed, and every call keeps its
    /// session changes inside its own transaction (see [`FINISH_POOLED`]).
    pooler: AtomicBool,
}

impl PgBackend {
    /// No connection is made here: the first call connects, so the server
    /// starts (and answers MCP) even while the database is down.
    pub fn new(params: ConnectParams, options: PgOptions) -> PgBackend {
        PgBackend {
            params,
            role: options.role.as_deref().map(SessionRole::new),
            options,
            idle: Mutex::new(Vec::new()),
            types: TypeCatalog::default(),
            routines: routines::Cache::default(),
            audited: AtomicBool::new(false),
            pooler: AtomicBool::new(false),
        }
    }

    /// Whether pgmcp found out it is talking to a connection pooler.
    pub fn behind_pooler(&self) -> bool {
        self.pooler.load(Ordering::Relaxed)
    }

    /// How a transaction ends: `COMMIT`, with the session reset deferred to
    /// the connection's next use, or, behind a pooler, the reset first.
    fn finish(&self) -> (&'static [&'static str], &'static [&'static str]) {
        if self.behind_pooler() {
            (FINISH_POOLED, &[])
        } else {
            (&["COMMIT"], &[RESET])
        }
    }

    /// The statements that open every exchange's transaction on `conn`:
    /// `begin`, then the switch to the role statements run as (before
    /// anything else runs, so nothing runs as the login). [`Self::settings`]
    /// follows them.
    fn setup<'a>(&'a self, begin: &'a str, conn: &Connection) -> Vec<&'a str> {
        let mut setup = vec![begin];
        setup.extend(self.role_set(conn));
        setup
    }

    /// The switch to the role statements run as on `conn`: `connection.role`,
    /// else `pg_read_all_data` when the connection's login can do more than
    /// read in read-only mode ([`Self::learn_login`]), else none: the login.
    fn role_set(&self, conn: &Connection) -> Option<&str> {
        match (&self.role, &conn.reader) {
            (Some(role), _) => Some(role.set.as_str()),
            (None, Some(_)) => Some(role::SET_READER),
            (None, None) => None,
        }
    }

    /// Whether a connection's login is to be asked what it can do: only in
    /// read-only mode, with no `connection.role` and no opt-out.
    fn reads_as_reader(&self) -> bool {
        self.options.read_only && self.role.is_none() && !self.options.read_only_as_login
    }

    /// On a new connection, in read-only mode without `connection.role`:
    /// whether its login can do more than read in ways that reach outside
    /// the database, in which case its exchanges run as `pg_read_all_data`.
    /// A superuser is known from the startup (`is_superuser`); anyone else
    /// is asked about once per connection, as the login, before any
    /// statement of the caller's runs on it.
    async fn learn_login(&self, conn: &mut Connection, deadline: &Deadline) -> Result<(), Error> {
        if !self.reads_as_reader() {
            return Ok(());
        }
        let powers = if conn.superuser == Some(true) {
            role::LoginPowers::superuser(&self.params.user)
        } else {
            let ex = Exchange::alone(role::LOGIN_POWERS, 2);
            let result = run(conn, &ex, deadline).await?;
            json_cell(&result)
                .and_then(|v| serde_json::from_value::<role::LoginPowers>(v).ok())
                .ok_or_else(|| Error::Connection("unexpected reply about the login's privileges".to_owned()))?
        };
        conn.reader = powers.any().then_some(powers);
        Ok(())
    }

    /// The pinned settings and the statement timeout, whatever became of
    /// the startup parameters: a pooler may have dropped them (PgBouncer's
    /// ignore_startup_parameters) or handed this transaction a server
    /// connection another client changed. Behind a pooler the statement
    /// goes unnamed: the next transaction may run on a server connection
    /// that never saw it.
    fn settings<'a>(&self, timeout_ms: &'a [Option<String>; 1]) -> Prepared<'a> {
        settings(timeout_ms, !self.behind_pooler())
    }

    /// A refused switch to `connection.role`, or to `pg_read_all_data` for
    /// `reader` (the connection's [`Connection::reader`]), with what to do
    /// about it.
    fn explain(&self, e: Error, reader: Option<&role::LoginPowers>) -> Error {
        match (e, &self.role, reader) {
            (Error::Role { code, message, .. }, Some(role), _) => Error::Role {
                advice: Some(role::refusal_advice(&code, &role.name, &self.params.user)),
                target: "connection.role",
                code,
                message,
            },
            (Error::Role { code, message, .. }, None, Some(powers)) => Error::Role {
                advice: Some(role::reader_advice(&code, powers)),
                target: role::READER,
                code,
                message,
            },
            (e, _, _) => e,
        }
    }

    /// The catalog's facts about functions, operators and casts, for the
    /// guard: read on first use, again when a statement found the catalog
    /// changed (its version check), and at least every minute.
    pub async fn routines(&self, deadline: &Deadline) -> Result<Arc<crate::guard::Routines>, Error> {
        if let Some(routines) = self.routines.get() {
            return Ok(routines);
        }
        let doc = self.catalog_json(routines::sql(), &[], deadline).await?;
        let routines = Arc::new(routines::from_json(doc)?);
        self.routines.put(Arc::clone(&routines));
        Ok(routines)
    }

    /// Run `stmt` in a transaction of its own. `catalog_version`: the
    /// catalog version the guard's facts describe (`None` for pgmcp's own
    /// SQL, which no guard judges).
    pub async fn execute(
        &self,
        stmt: Statement<'_>,
        catalog_version: Option<&str>,
        deadline: &Deadline,
    ) -> Result<Rows, Error> {
        let mut quick = true;
        let mut lost = false;
        loop {
            match self.execute_once(stmt, catalog_version, quick, deadline).await {
                // Something committed since the connection last checked the
                // catalog in full: the statement did not run, and runs now
                // after the full check.
                Err(Error::CatalogUnconfirmed) if quick => quick = false,
                // The statement did not run; why pgmcp's was missing has
                // been found out and dealt with (`statement_lost`).
                Err(Error::StatementLost(_)) if !lost => lost = true,
                other => return other.map_err(surfaced),
            }
        }
    }

    /// After [`Error::StatementLost`] on `conn`: why pgmcp's prepared
    /// statement was not where pgmcp left it, asked of the server rather
    /// than guessed from the error, which a caller's statement can cause
    /// (`DEALLOCATE ALL` inside a function, where no command tag shows it).
    /// Connected directly, the session is still the one the connection
    /// started with, its process id the one the server gave at startup: a
    /// statement of the caller's deallocated pgmcp's, which this connection
    /// prepares again, and nothing else changes. Another process id means a
    /// pooler (it hands out cancel keys of its own) that ran the
    /// transaction on another server connection: from now on, every
    /// connection works as behind a pooler. No answer: the connection is
    /// dropped, and nothing is concluded.
    async fn statement_lost(&self, conn: &mut Connection, deadline: &Deadline) {
        let ex = Exchange::alone("SELECT pg_catalog.pg_backend_pid()", 1);
        let pid = match run(conn, &ex, deadline).await {
            Ok(result) => result
                .rows
                .first()
                .and_then(|row| row.first())
                .and_then(|cell| cell.as_deref())
                .and_then(|text| std::str::from_utf8(text).ok())
                .and_then(|text| text.parse::<i32>().ok()),
            Err(_) => None,
        };
        match pid {
            Some(pid) if pid == conn.startup_pid() => {
                tracing::debug!(
                    "a statement of the caller's deallocated pgmcp's prepared statements: preparing them again"
                );
                conn.forget_prepared();
            }
            Some(_) => {
                if !self.pooler.swap(true, Ordering::Relaxed) {
                    tracing::info!(
                        "talking to a connection pooler (pgmcp's prepared statement was missing, and the server session is not the one the connection started with): each call's session changes are undone inside its transaction"
                    );
                }
            }
            None => conn.retire(),
        }
    }

    /// One try at [`Self::execute`]. `quick`: the catalog check may be the
    /// quick one (`routines::Check`).
    async fn execute_once(
        &self,
        stmt: Statement<'_>,
        catalog_version: Option<&str>,
        quick: bool,
        deadline: &Deadline,
    ) -> Result<Rows, Error> {
        let params: Vec<Option<String>> = stmt.params.iter().map(param_text).collect::<Result<_, _>>()?;
        let mut conn = self.checkout(deadline).await?;
        let begin = if self.options.read_only {
            "BEGIN READ ONLY"
        } else {
            "BEGIN"
        };
        let timeout = timeout_ms(deadline);
        // The guard judged the statement with facts of one catalog version:
        // the statement runs only if the catalog is still at it.
        let check = catalog_version
            .filter(|v| !v.is_empty())
            .map(|v| routines::Check::for_call(conn.catalog_seen.as_ref(), v, quick));
        let (finish, deferred) = self.finish();
        // Behind a pooler, the next transaction may run on a server
        // connection that never saw pgmcp's statements: they go unnamed.
        let named = !self.behind_pooler();
        let mut prepared = vec![self.settings(&timeout)];
        prepared.extend(check.as_ref().map(|check| check.statement(named)));
        let setup = self.setup(begin, &conn);
        let result = run(
            &mut conn,
            &Exchange {
                setup: &setup,
                sql: stmt.sql,
                params: &params,
                // One row past the limit tells us whether more exist.
                max_rows: u32::try_from(stmt.fetch_limit.saturating_add(1)).unwrap_or(u32::MAX),
                budget: Some(stmt.budget),
                finish,
                deferred,
                prepared: &prepared,
            },
            deadline,
        )
        .await;
        let rows = match result {
            Ok(mut result) => {
                if let Some(check) = &check {
                    conn.catalog_seen = check.seen_after(conn.catalog_seen.take(), result.prepared_answer.take());
                }
                let rows = self.to_rows(&mut conn, result, stmt.fetch_limit, deadline).await;
                self.audit_once(&mut conn).await;
                rows
            }
            Err(Error::CatalogChanged) => {
                self.routines.clear();
                Err(Error::CatalogChanged)
            }
            Err(Error::CatalogUnconfirmed) => {
                // Not worth trying here again until two calls in a row find
                // nothing committed between them.
                if let Some(seen) = conn.catalog_seen.as_mut() {
                    seen.quiet = false;
                }
                Err(Error::CatalogUnconfirmed)
            }
            Err(Error::StatementLost(db)) => {
                self.statement_lost(&mut conn, deadline).await;
                Err(Error::StatementLost(db))
            }
            Err(e) => Err(self.explain(e, conn.reader.as_ref())),
        };
        self.checkin(conn);
        rows
    }

    /// Log a warning, once per process, when the role statements run as can
    /// do more than read. Done after the first call that worked, on its
    /// connection, so starting up never needs the database.
    async fn audit_once(&self, conn: &mut Connection) {
        if self.audited.swap(true, Ordering::Relaxed) {
            return;
        }
        let deadline = Deadline {
            at: Instant::now() + AUDIT_BUDGET,
            timeout: AUDIT_BUDGET,
            cancel: tokio_util::sync::CancellationToken::new(),
        };
        let timeout = timeout_ms(&deadline);
        let ask = async |conn: &mut Connection| {
            let ex = Exchange {
                setup: &self.setup("BEGIN READ ONLY", conn),
                sql: role::PRIVILEGES,
                params: &[],
                max_rows: 2,
                budget: None,
                finish: &["COMMIT"],
                deferred: &[],
                prepared: &[self.settings(&timeout)],
            };
            run(conn, &ex, &deadline).await
        };
        let result = match ask(conn).await {
            Err(Error::StatementLost(_)) => {
                self.statement_lost(conn, &deadline).await;
                ask(conn).await
            }
            other => other,
        };
        let privileges = match result {
            Ok(result) => json_cell(&result).and_then(|v| serde_json::from_value::<role::Privileges>(v).ok()),
            Err(_) => None,
        };
        if let Some(powers) = &conn.reader {
            tracing::info!(
                "read-only queries run as {}: {}; connection.role names another role to run as, connection.read_only_as_login turns this off",
                role::READER,
                powers.reason()
            );
        }
        match privileges {
            None => tracing::debug!("could not read the privileges of the role queries run as"),
            Some(p) => {
                let findings = p.findings();
                if !findings.is_empty() {
                    let advice = match &self.role {
                        Some(_) => "give connection.role only SELECT on the tables the agent needs",
                        None => "set connection.role to a reader role (`pgmcp check --suggest-role` prints the SQL)",
                    };
                    tracing::warn!(
                        role = %p.role,
                        login = %p.login,
                        "queries run as role \"{}\", which can do more than read: {}; {advice}",
                        p.role,
                        findings.join("; ")
                    );
                }
            }
        }
    }

    /// Why statements run as the role they do, for `check`; `reader`: a
    /// connection's [`Connection::reader`].
    fn role_reason(&self, reader: Option<&role::LoginPowers>) -> String {
        match (&self.role, reader) {
            (Some(_), _) => "connection.role".to_owned(),
            (None, Some(powers)) => format!(
                "read-only mode, and {}; set connection.role to choose the role, or connection.read_only_as_login to run as the login",
                powers.reason()
            ),
            (None, None) if !self.options.read_only => {
                "the login; connection.role is not set, and read-write mode runs as the login".to_owned()
            }
            (None, None) if self.options.read_only_as_login => {
                "the login, with all its rights: connection.read_only_as_login is on".to_owned()
            }
            (None, None) => "the login, which is not a superuser and has no REPLICATION, pg_execute_server_program, \
                             pg_read_server_files or pg_write_server_files; connection.role is not set"
                .to_owned(),
        }
    }

    /// SQL that creates `role` as a least-privilege reader of this database,
    /// with its schemas, table owners and the login filled in; with
    /// `login`, and that login as its member. `psql` is the shell line that
    /// runs it, for its comment.
    pub async fn suggest_role(
        &self,
        role: &str,
        login: Option<&NewLogin>,
        psql: Option<&str>,
        deadline: &Deadline,
    ) -> Result<String, Error> {
        let facts: role::SuggestFacts = self.catalog(role::SUGGEST_FACTS, &[], deadline).await?;
        Ok(suggest_role_sql(role, Some(&facts), login, psql))
    }

    /// What the server says about pg_hba.conf for a login connecting as this
    /// connection did: where the connection comes from, and the file's rules,
    /// or why they could not be read (the server's refusal: only a superuser
    /// may read them), and the roles `reader` is a member of, for
    /// `+group` lines.
    pub async fn hba_facts(&self, reader: &str, deadline: &Deadline) -> Result<HbaFacts, Error> {
        let client: hba::Client = self.catalog(hba::CLIENT, &[], deadline).await?;
        let rules = self
            .catalog::<hba::Rules>(hba::RULES, &[], deadline)
            .await
            .map_err(|e| e.to_string());
        // Unanswered, memberships are unknown: `+group` lines are then
        // "cannot tell", never guessed.
        let reader_groups = self
            .catalog::<hba::ReaderGroups>(hba::READER_GROUPS, &[Some(reader.to_owned())], deadline)
            .await
            .ok()
            .and_then(|g| g.of_new_login());
        Ok(HbaFacts {
            origin: hba::Origin::of(&client),
            rules,
            reader_groups,
        })
    }

    /// What `pgmcp check` shows about a live session: the server's version, who
    /// we are connected as, TLS, and whether the server itself sees the
    /// transaction a query runs in as read-only (asked inside exactly that
    /// kind of transaction, through the same path as every query).
    pub async fn session_report(&self, deadline: &Deadline) -> Result<SessionReport, Error> {
        let conn = self.checkout(deadline).await?;
        let tls = conn.tls().map(|t| t.to_string());
        let password_from = conn.password_from().map(|p| p.to_string());
        let role_reason = self.role_reason(conn.reader.as_ref());
        self.checkin(conn);
        let rows = self
            .execute(
                Statement {
                    sql: catalog::SESSION_REPORT,
                    params: &[],
                    fetch_limit: 1,
                    budget: crate::pipeline::budget::ReadBudget::for_answer(100_000),
                    database: None,
                },
                None,
                deadline,
            )
            .await?;
        let row = rows
            .rows
            .first()
            .ok_or_else(|| Error::Connection("the session report query returned no row".to_owned()))?;
        let text = |i: usize| row.get(i).and_then(Value::as_str).unwrap_or_default().to_owned();
        let server_ssl = row.get(4).and_then(Value::as_bool).unwrap_or(false);
        let privileges: role::Privileges = self.catalog(role::PRIVILEGES, &[], deadline).await?;
        Ok(SessionReport {
            server: format!("PostgreSQL {}", text(0)),
            endpoint: self.params.target(),
            user: privileges.login.clone(),
            role: text(1),
            role_reason,
            role_warnings: privileges.findings(),
            database: text(2),
            read_only: text(3) == "on",
            // The server's own view (pg_stat_ssl) must agree with ours.
            encryption: match (tls, server_ssl) {
                (Some(tls), true) => Some(tls),
                (Some(tls), false) => Some(format!("{tls} (but the server reports no TLS)")),
                (None, _) => None,
            },
            password_from,
            read_only_setting: "transaction_read_only",
            file: false,
            pooler: self.behind_pooler(),
        })
    }

    pub async fn list_tables(&self, filter: &TableFilter, deadline: &Deadline) -> Result<TableList, Error> {
        let params = [
            filter.schema.clone(),
            filter.like_pattern(),
            // The catalog query reads it as `int` and adds 1: a cap past
            // that (`query.max_rows` or `PGMCP_MAX_ROWS` may be any size)
            // would fail every call with "integer out of range".
            Some(filter.limit.min(LIST_LIMIT_MAX).to_string()),
        ];
        self.catalog(&catalog::LIST_TABLES, &params, deadline).await
    }

    /// Describe `name` in `schema`; with no schema, in `public` if it is there,
    /// else in the one schema that has it. Errors say where it is instead.
    pub async fn describe_table(
        &self,
        schema: Option<&str>,
        name: &str,
        deadline: &Deadline,
    ) -> Result<TableDescription, Error> {
        let holders: Vec<String> = self
            .catalog(catalog::SCHEMAS_WITH_TABLE, &[Some(name.to_owned())], deadline)
            .await?;
        let asked = schema;
        let schema = match (schema, holders.as_slice()) {
            (Some(schema), _) if holders.iter().any(|h| h == schema) => schema.to_owned(),
            (_, []) => return Err(self.no_such_table(asked, name, deadline).await),
            (Some(schema), others) => {
                return Err(Error::Input(format!(
                    "table \"{schema}\".\"{name}\" does not exist; a table named \"{name}\" exists in schema {}. Pass that schema.",
                    others.join(", ")
                )));
            }
            (None, holders) if holders.iter().any(|h| h == "public") => "public".to_owned(),
            (None, [only]) => only.clone(),
            (None, several) => {
                return Err(Error::Input(format!(
                    "table \"{name}\" exists in several schemas: {}. Pass schema to say which.",
                    several.join(", ")
                )));
            }
        };
        let doc: Option<TableDescription> = self
            .catalog(
                &catalog::DESCRIBE_TABLE,
                &[Some(schema.clone()), Some(name.to_owned())],
                deadline,
            )
            .await?;
        match doc {
            Some(doc) => Ok(doc),
            // Dropped, or its grant revoked, since the first query: the same
            // answer as if it had never been there.
            None => Err(self.no_such_table(asked, name, deadline).await),
        }
    }

    /// The one answer for a table the role cannot read, whether it exists or
    /// not (the catalog queries show only readable ones): nothing in it may
    /// tell the two apart.
    async fn no_such_table(&self, schema: Option<&str>, name: &str, deadline: &Deadline) -> Error {
        let target = schema.map_or_else(|| format!("\"{name}\""), |s| format!("\"{s}\".\"{name}\""));
        let advice = crate::suggest::table_advice(&self.similar_tables(name, deadline).await);
        Error::Input(format!(
            "table {target} does not exist, or the role cannot read it. {advice}"
        ))
    }

    /// Close names from the catalog for an undefined table (42P01) or column
    /// (42703); `relations` are the tables the failed statement mentions. Best
    /// effort: any failure means no suggestions.
    pub async fn suggest(&self, error: &DbError, relations: &[String], deadline: &Deadline) -> Vec<String> {
        match error.code() {
            "42P01" => match quoted_name(&error.message, "relation ") {
                Some(name) => {
                    self.similar_tables(name.rsplit('.').next().unwrap_or(&name), deadline)
                        .await
                }
                None => Vec::new(),
            },
            "42703" if !relations.is_empty() => {
                let Some(column) = quoted_name(&error.message, "column ") else {
                    return Vec::new();
                };
                let column = column.rsplit('.').next().unwrap_or(&column).to_owned();
                let list = Some(format!(
                    "{{{}}}",
                    relations
                        .iter()
                        .map(|r| format!("\"{}\"", r.replace('"', "\\\"")))
                        .collect::<Vec<_>>()
                        .join(",")
                ));
                let pairs: Vec<(String, String)> = self
                    .catalog(catalog::COLUMN_NAMES, &[list], deadline)
                    .await
                    .unwrap_or_default();
                let qualified: Vec<String> = pairs.iter().map(|(t, c)| format!("{t}.{c}")).collect();
                let names: Vec<&str> = pairs.iter().map(|(_, c)| c.as_str()).collect();
                let close = crate::suggest::closest(&column, names.iter().copied(), 3);
                close
                    .iter()
                    .filter_map(|c| names.iter().position(|n| n == c).map(|i| qualified[i].clone()))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    async fn similar_tables(&self, name: &str, deadline: &Deadline) -> Vec<String> {
        let pairs: Vec<(String, String)> = self
            .catalog(catalog::RELATION_NAMES, &[], deadline)
            .await
            .unwrap_or_default();
        let qualified: Vec<String> = pairs.iter().map(|(s, t)| format!("{s}.{t}")).collect();
        let names: Vec<&str> = pairs.iter().map(|(_, t)| t.as_str()).collect();
        let mut out = Vec::new();
        for close in crate::suggest::closest(name, names.iter().copied(), 3) {
            for (i, n) in names.iter().enumerate() {
                if *n == close && !out.contains(&qualified[i]) && out.len() < 3 {
                    out.push(qualified[i].clone());
                }
            }
        }
        out
    }

    /// Run a catalog query returning one `json` value and read it as `T`
    /// (`T::default()`-like `null` when there is no row).
    async fn catalog<T: serde::de::DeserializeOwned>(
        &self,
        sql: &str,
        params: &[Option<String>],
        deadline: &Deadline,
    ) -> Result<T, Error> {
        let doc = self.catalog_json(sql, params, deadline).await?;
        serde_json::from_value(doc.unwrap_or(Value::Null))
            .map_err(|e| Error::Connection(format!("unexpected catalog reply: {e}")))
    }

    /// Run a catalog query that returns one `json` value (or no row).
    async fn catalog_json(
        &self,
        sql: &str,
        params: &[Option<String>],
        deadline: &Deadline,
    ) -> Result<Option<Value>, Error> {
        match self.catalog_json_once(sql, params, deadline).await {
            Err(Error::StatementLost(_)) => self.catalog_json_once(sql, params, deadline).await.map_err(surfaced),
            other => other,
        }
    }

    async fn catalog_json_once(
        &self,
        sql: &str,
        params: &[Option<String>],
        deadline: &Deadline,
    ) -> Result<Option<Value>, Error> {
        let mut conn = self.checkout(deadline).await?;
        let timeout = timeout_ms(deadline);
        // JIT compiling a catalog query costs more (up to seconds for the
        // function facts) than running it.
        let setup = [self.setup("BEGIN READ ONLY", &conn), vec!["SET LOCAL jit = off"]].concat();
        let result = run(
            &mut conn,
            &Exchange {
                setup: &setup,
                sql,
                params,
                max_rows: 2,
                budget: None,
                finish: &["COMMIT"],
                deferred: &[],
                prepared: &[self.settings(&timeout)],
            },
            deadline,
        )
        .await;
        match &result {
            Ok(_) => self.audit_once(&mut conn).await,
            Err(Error::StatementLost(_)) => self.statement_lost(&mut conn, deadline).await,
            Err(_) => {}
        }
        let result = result.map_err(|e| self.explain(e, conn.reader.as_ref()));
        self.checkin(conn);
        let result = result?;
        let text = result
            .rows
            .first()
            .and_then(|row| row.first())
            .and_then(|cell| cell.as_ref());
        match text {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(bytes)
                .map(Some)
                .map_err(|e| Error::Connection(format!("unexpected catalog reply: {e}"))),
        }
    }

    /// Column names and types, and every value converted by [`value::from_text`].
    async fn to_rows(
        &self,
        conn: &mut Connection,
        result: StatementResult,
        limit: usize,
        deadline: &Deadline,
    ) -> Result<Rows, Error> {
        let role = self.role_set(conn);
        let described = self.types.describe(conn, &result.columns, role, deadline).await;
        let columns: Vec<Column> = result
            .columns
            .iter()
            .zip(&described)
            .map(|(c, (type_name, _))| Column {
                name: c.name.clone(),
                type_name: type_name.clone(),
            })
            .collect();
        // Rows dropped after the budget was spent still count towards the cap.
        let seen = result.rows.len() + result.skipped;
        let more = seen > limit || result.suspended && seen >= limit;
        let spent = result.skipped > 0 || !result.cuts.is_empty();
        let mut cuts = result.cuts.iter().peekable();
        let rows = result
            .rows
            .iter()
            .take(limit)
            .enumerate()
            .map(|(r, row)| {
                row.iter()
                    .zip(&described)
                    .enumerate()
                    .map(|(c, (cell, (_, shape)))| {
                        let cut = cuts.next_if(|cut| (cut.row, cut.column) == (r, c));
                        match (cell, cut) {
                            (None, _) => Value::Null,
                            (Some(bytes), Some(cut)) => budget::cut_value(&budget::head_text(bytes), cut.len),
                            // The session's encoding is UTF8: checking is all
                            // a value needs (lossy reading walks it slower).
                            (Some(bytes), None) => match std::str::from_utf8(bytes) {
                                Ok(text) => value::from_text(shape, text),
                                Err(_) => value::from_text(shape, &String::from_utf8_lossy(bytes)),
                            },
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(Rows {
            columns,
            rows,
            rows_affected: result.command_tag.as_deref().and_then(rows_affected),
            more,
            spent,
        })
    }

    /// An idle connection that is still fresh, or a new one.
    async fn checkout(&self, deadline: &Deadline) -> Result<Connection, Error> {
        loop {
            let candidate = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            match candidate {
                Some((mut conn, since)) if self.is_fresh(&conn, since) => {
                    // The previous call's session reset must have succeeded, and
                    // the server must not have closed the connection since (a
                    // restart ends every session).
                    match tokio::time::timeout(SETTLE, conn.read_deferred()).await {
                        Ok(Ok(())) if conn.is_alive().await => {
                            if self.behind_pooler() && !conn.pooled {
                                conn.pool_from_now();
                            }
                            return Ok(conn);
                        }
                        _ => tracing::debug!("dropping a pooled connection that is no longer usable"),
                    }
                }
                Some((conn, _)) => {
                    tokio::spawn(conn.terminate());
                }
                None => break,
            }
        }
        let connect = async {
            let hosts = self.params.each_host();
            let passes: &[SessionAttrs] = match self.params.target_session_attrs {
                SessionAttrs::PreferStandby => &[SessionAttrs::Standby, SessionAttrs::Any],
                attrs => &[attrs],
            };
            let mut failed: Option<Error> = None;
            let mut unsuitable: Vec<String> = Vec::new();
            for &pass in passes {
                for params in &hosts {
                    // libpq's connect_timeout holds for each host.
                    let left = deadline.at.saturating_duration_since(Instant::now());
                    let budget = left.min(params.connect_timeout);
                    let attempt = tokio::time::timeout(budget, self.connect_to(params));
                    let mut conn = match attempt.await {
                        Ok(Ok(conn)) => conn,
                        Ok(Err(e)) => {
                            failed = Some(connect_error(params, e));
                            continue;
                        }
                        Err(_) => {
                            let limit = if budget >= params.connect_timeout {
                                "connect_timeout"
                            } else {
                                "the call's timeout"
                            };
                            failed = Some(Error::Connection(format!(
                                "could not connect to {}: timed out after {} s ({limit}); check the host and that PostgreSQL accepts TCP connections there",
                                params.target(),
                                budget.as_secs_f32().ceil()
                            )));
                            continue;
                        }
                    };
                    match self.suits(&mut conn, pass, deadline).await {
                        Ok(true) => match self.learn_login(&mut conn, deadline).await {
                            Ok(()) => return Ok(conn),
                            Err(e) => failed = Some(e),
                        },
                        Ok(false) => {
                            unsuitable.push(params.target());
                            tokio::spawn(conn.terminate());
                        }
                        Err(e) => failed = Some(e),
                    }
                }
            }
            Err(match (failed, unsuitable.is_empty()) {
                (Some(e), true) => e,
                (failed, _) => Error::Connection(format!(
                    "none of the hosts is a {attrs} server (target_session_attrs={attrs}): {} answered as {}{}",
                    unsuitable.join(", "),
                    match self.params.target_session_attrs {
                        SessionAttrs::Standby | SessionAttrs::ReadOnly => "primaries",
                        _ => "standbys",
                    },
                    failed.map(|e| format!("; the others: {e}")).unwrap_or_default(),
                    attrs = self.params.target_session_attrs.name(),
                )),
            })
        };
        tokio::select! {
            r = connect => r,
            _ = deadline.cancel.cancelled() => Err(Error::Cancelled),
        }
    }

    /// One connection to the host `params` names, as a pooler in front of it
    /// allows.
    async fn connect_to(&self, params: &ConnectParams) -> Result<Connection, WireError> {
        let conn = match Connection::connect(params, &self.startup()).await {
            Err(WireError::Refused { db, .. })
                if db.message.starts_with(UNTRACKED_PARAMETER) && !self.behind_pooler() =>
            {
                tracing::info!(refused = %db.message, "talking to a connection pooler: connecting with only the startup parameters poolers carry");
                self.pooler.store(true, Ordering::Relaxed);
                Connection::connect(params, &self.startup()).await
            }
            other => other,
        };
        conn.map(|mut conn| {
            conn.pooled = self.behind_pooler();
            conn
        })
    }

    /// Whether a new connection is to the kind of server
    /// `target_session_attrs` asks for: a primary or a standby, as
    /// `pg_is_in_recovery()` says.
    async fn suits(&self, conn: &mut Connection, attrs: SessionAttrs, deadline: &Deadline) -> Result<bool, Error> {
        let want_standby = match attrs {
            SessionAttrs::Any | SessionAttrs::PreferStandby => return Ok(true),
            SessionAttrs::ReadWrite | SessionAttrs::Primary => false,
            SessionAttrs::ReadOnly | SessionAttrs::Standby => true,
        };
        let ex = Exchange::alone("SELECT pg_catalog.pg_is_in_recovery()", 1);
        let result = run(conn, &ex, deadline).await?;
        let in_recovery =
            result.rows.first().and_then(|r| r.first()).and_then(|v| v.as_deref()) == Some(b"t".as_slice());
        Ok(in_recovery == want_standby)
    }

    /// The startup parameters: every pinned setting, and read-only as the
    /// session's default; behind a pooler, only what it carries.
    fn startup(&self) -> Vec<(&str, &str)> {
        let mut startup: Vec<(&str, &str)> = PINNED.to_vec();
        if self.behind_pooler() {
            startup.retain(|(name, _)| POOLER_TRACKED.contains(name));
        } else if self.options.read_only {
            startup.push(("default_transaction_read_only", "on"));
        }
        // The server reads these before the other startup parameters, so
        // none of them can undo a pinned setting.
        if let Some(options) = &self.params.options {
            startup.push(("options", options.as_str()));
        }
        startup
    }

    fn is_fresh(&self, conn: &Connection, idle_since: Instant) -> bool {
        conn.created().elapsed() < self.options.max_conn_lifetime && idle_since.elapsed() < self.options.max_conn_idle
    }

    fn checkin(&self, conn: Connection) {
        if conn.is_reusable() && conn.created().elapsed() < self.options.max_conn_lifetime {
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((conn, Instant::now()));
        }
        // Otherwise the connection is dropped here, which closes its socket.
    }

    pub async fn close(&self) {
        let idle: Vec<_> = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for (conn, _) in idle {
            conn.terminate().await;
        }
    }
}

/// The time left, in milliseconds, as [`settings`] takes it for the
/// transaction's `statement_timeout`: the server stops the statement itself
/// even if our cancel request never arrives.
fn timeout_ms(deadline: &Deadline) -> [Option<String>; 1] {
    let ms = deadline.at.saturating_duration_since(Instant::now()).as_millis().max(1);
    [Some(ms.to_string())]
}

/// Run an exchange until it finishes, the deadline passes, or the caller
/// cancels. On the last two, ask the server to cancel and wait briefly for it
/// to say so, which leaves the connection reusable; if it does not answer, the
/// connection stays marked in flight and is discarded.
pub(super) async fn run(
    conn: &mut Connection,
    ex: &Exchange<'_>,
    deadline: &Deadline,
) -> Result<StatementResult, Error> {
    // A call cancelled before its statement is sent sends nothing.
    if deadline.cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    // If this future is dropped before the exchange is read to its end (its
    // caller went away), the guard still asks the server to stop the work.
    let mut guard = CancelOnDrop(Some(conn.cancel_target()));
    let stopped_by = {
        let work = conn.exchange(ex);
        tokio::pin!(work);
        let stopped_by = tokio::select! {
            r = &mut work => {
                guard.0 = None;
                return r.map_err(|e| query_error(e, deadline.timeout));
            }
            _ = tokio::time::sleep_until((deadline.at + SERVER_FIRST).into()) => Error::Timeout { after: deadline.timeout },
            _ = deadline.cancel.cancelled() => Error::Cancelled,
        };
        // A cancel request only stops a statement that is running: one sent
        // while the statement is still on its way in is ignored. So repeat it
        // until the server answers, within the grace period.
        if let Some(target) = guard.0.take() {
            let keep_cancelling = async {
                loop {
                    let _ = tokio::time::timeout(CANCEL_GRACE, target.cancel()).await;
                    tokio::time::sleep(CANCEL_REPEAT).await;
                }
            };
            let _ = tokio::time::timeout(CANCEL_GRACE, async {
                tokio::select! {
                    _ = &mut work => {}
                    _ = keep_cancelling => {}
                }
            })
            .await;
        }
        stopped_by
    };
    // The last cancel request may still be on its way to the server (the
    // exchange can end while one is sent): on this connection it would stop
    // the next call's statement.
    conn.retire();
    Err(stopped_by)
}

/// Sends a cancel request for a connection's running statement when dropped
/// while still armed.
struct CancelOnDrop(Option<CancelTarget>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let (Some(target), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(CANCEL_GRACE, target.cancel()).await;
            });
        }
    }
}

fn query_error(e: WireError, timeout: Duration) -> Error {
    match e {
        // 57014 is query_canceled: by statement_timeout (ours) or a cancel request.
        WireError::Db(db) if db.code.sqlstate() == Some("57014") && db.message.contains("statement timeout") => {
            Error::Timeout { after: timeout }
        }
        WireError::Db(db) => Error::Db(db),
        // Only the switch to connection.role can fail this way among the
        // setup statements; PgBackend::explain adds what to do about it.
        WireError::Setup(db) if role::is_role_refusal(db.code(), &db.message) => Error::Role {
            target: "connection.role",
            code: db.code().to_owned(),
            message: db.message,
            advice: None,
        },
        WireError::Setup(db) if db.code.sqlstate() == Some(routines::CHANGED) => Error::CatalogChanged,
        WireError::Setup(db) if db.code.sqlstate() == Some(routines::MOVED) => Error::CatalogUnconfirmed,
        WireError::Setup(db) if names_a_statement_of_pgmcps(&db) => Error::StatementLost(db),
        WireError::Setup(db) => Error::Db(db),
        other => Error::Connection(other.to_string()),
    }
}

/// A failed connection attempt, worded so a person knows what to fix
/// ([`diagnosis::explain`]). Never contains the password: only where it
/// came from.
fn connect_error(params: &ConnectParams, e: WireError) -> Error {
    let attempt = diagnosis::Attempt {
        host: &params.host,
        port: params.port,
        user: &params.user,
        dbname: params.dbname.as_deref(),
        os_user: params.os_user,
        sslmode: params.sslmode,
    };
    let text = match e {
        WireError::Connect { source, .. } => diagnosis::explain(&attempt, &Failure::Socket(&source)),
        WireError::Refused { db, password_from } => diagnosis::explain(
            &attempt,
            &Failure::Refused {
                code: db.code(),
                message: &db.message,
                password: password_from.as_ref(),
            },
        ),
        WireError::PasswordRequired { asked, search } => {
            let message = diagnosis::explain(&attempt, &Failure::NoPassword { asked, search: &search });
            return Error::PasswordRequired { message };
        }
        WireError::TlsSetup(e) => e.to_string(),
        other => format!("could not connect to {}: {other}", params.target()),
    };
    Error::Connection(text)
}

/// A lost statement twice in a row is an error like any other.
fn surfaced(e: Error) -> Error {
    match e {
        Error::StatementLost(db) => Error::Db(db),
        other => other,
    }
}

/// The one `json` cell of a catalog reply, if there is one.
fn json_cell(result: &StatementResult) -> Option<Value> {
    let bytes = result.rows.first()?.first()?.as_ref()?;
    serde_json::from_slice(bytes).ok()
}

/// The name in `relation "x" does not exist` or `column t.x does not exist`:
/// what follows `prefix`, unquoted, up to the next space.
fn quoted_name(message: &str, prefix: &str) -> Option<String> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    let name = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split(' ').next()?,
    };
    (!name.is_empty()).then(|| name.to_owned())
}

/// A JSON parameter in PostgreSQL's text input form; the server infers its type.
fn param_text(value: &Value) -> Result<Option<String>, Error> {
    match value {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Array(_) | Value::Object(_) => Err(Error::Input(
            "parameters must be strings, numbers, booleans or null; pass arrays and objects as JSON text in a string"
                .to_owned(),
        )),
    }
}

/// The row count in a command tag: `INSERT 0 3` → 3, `UPDATE 2` → 2, `SELECT 5` → 5.
fn rows_affected(tag: &str) -> Option<u64> {
    let mut words = tag.split_whitespace();
    match words.next()? {
        "INSERT" | "UPDATE" | "DELETE" | "SELECT" | "MERGE" | "COPY" | "FETCH" | "MOVE" => words.last()?.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_error_messages() {
        assert_eq!(
            quoted_name("relation \"user\" does not exist", "relation "),
            Some("user".into())
        );
        assert_eq!(
            quoted_name("relation \"sales.ordrs\" does not exist", "relation "),
            Some("sales.ordrs".into())
        );
        assert_eq!(
            quoted_name("column \"emial\" does not exist", "column "),
            Some("emial".into())
        );
        assert_eq!(
            quoted_name("column u.emial does not exist", "column "),
            Some("u.emial".into())
        );
        assert_eq!(
            quoted_name("column \"x\" of relation \"t\" does not exist", "column "),
            Some("x".into())
        );
        assert_eq!(quoted_name("syntax error", "column "), None);
    }

    #[test]
    fn command_tags() {
        let cases = [
            ("INSERT 0 3", Some(3)),
            ("UPDATE 2", Some(2)),
            ("DELETE 0", Some(0)),
            ("SELECT 5", Some(5)),
            ("MERGE 1", Some(1)),
            ("CREATE TABLE", None),
            ("BEGIN", None),
        ];
        for (tag, expected) in cases {
            assert_eq!(rows_affected(tag), expected, "{tag}");
        }
    }

    #[test]
    fn parameters_in_text_form() {
        let v: Vec<Value> = serde_json::from_str(r#"[null, true, 12345678901234567890, 1.5, "x"]"#).unwrap();
        let got: Vec<_> = v.iter().map(|p| param_text(p).unwrap()).collect();
        assert_eq!(
            got,
            vec![
                None,
                Some("true".into()),
                Some("12345678901234567890".into()),
                Some("1.5".into()),
                Some("x".into())
            ]
        );
        assert!(param_text(&serde_json::json!([1])).is_err());
    }
}
