//! The query pipeline: every stage of a call, in order, in one place.
//!
//! ```text
//! query:          size check → slot → before_query hooks → timeout rule → guard → parameters
//!                 → confirm (a model's statement `confirm` covers stops here with
//!                 its proposal until a person accepts it; what runs unasked
//!                 runs under the reading judge)
//!                 → backend (own transaction, reading stops at the row cap) → shape
//!                 (SQLite: the guard's rules and the parameter check run as
//!                 SQLite prepares the statement, through its authorizer)
//!                 → after_query hooks → sanitize → byte cap
//!                 (any error: error prompts appended)
//!                 (undefined table/column: close catalog names suggested)
//! list_tables:    slot → backend catalog query (its own timeout, capped)
//!                 → after_query hooks → sanitize → byte cap
//! describe_table: name parsing → slot → backend catalog query (its own timeout)
//!                 → after_query hooks → sanitize → byte cap
//! ```
//!
//! [`Engine`] is the library's entry point: build one from a [`Config`] and call
//! it from Rust directly, or serve it over MCP with `crate::door::mcp`.

pub mod answer;
pub mod budget;
pub mod catalog;
pub mod confirm;
pub mod diagnose;
// `annotate`: only its tests call it; the pipeline appends the prompts itself.
#[cfg_attr(not(test), allow(dead_code))]
pub mod error_prompts;
pub mod explain;
pub(crate) mod fence;
pub mod hooks;
pub mod plan;
pub mod sanitize;
pub mod shape;
mod size;
pub mod timeouts;

use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::backend::location::{Root, Target};
use crate::backend::named::Named;
use crate::backend::postgres::{self, ConnectParams, PgBackend, PgOptions};
use crate::backend::sqlite::SqliteBackend;
use crate::backend::{self, Backend, Choice, ChoiceError, Deadline, Dialect, Guard, SessionReport, Statement};
use crate::config::Config;
use crate::error::{Error, InputError};
use crate::guard;
use crate::pipeline::budget::ReadBudget;
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList, parse_table_name};
use answer::QueryAnswer;
use confirm::Consent;
use hooks::{HookError, Stage};
use shape::QueryOutput;
use size::{check_input, check_length, param_bytes};

/// How long looking up "did you mean" names may take after a failed query.
const SUGGESTION_BUDGET: Duration = Duration::from_secs(2);

/// Arguments of a `query` call.
#[derive(Debug, Clone, Default)]
pub struct QueryInput {
    pub sql: String,
    /// Bound to `$1..$n` in order; never interpolated into the SQL.
    pub params: Vec<Value>,
    /// Return at most this many rows; can lower `query.max_rows`, never raise it.
    pub limit: Option<usize>,
    /// An SQLite file inside the configured `sqlite.root` (SQLite only).
    pub database: Option<String>,
}

impl QueryInput {
    /// A query with no parameters and the configured row cap.
    pub fn new(sql: impl Into<String>) -> QueryInput {
        QueryInput {
            sql: sql.into(),
            params: Vec::new(),
            limit: None,
            database: None,
        }
    }
}

/// Runs calls against one database under one configuration. Cheap to share
/// behind an `Arc`; every method may run concurrently.
pub struct Engine {
    config: Config,
    /// Applies `config.protection` in the mode `config.read_only` says
    /// (`Engine::new`): the one place the guard's read-only mode is set.
    judge: guard::Judge,
    backend: Backend,
    /// Bounds calls in flight to `pool.max_conns`, and so the connections used.
    slots: Semaphore,
    /// Calls waiting for a slot, bounded by `pool.max_waiting`, and the
    /// bytes of their arguments, bounded by [`WAITING_BYTES`]: each holds its
    /// arguments, so an unbounded queue is unbounded memory.
    waiting: AtomicUsize,
    waiting_bytes: AtomicUsize,
    /// The calls in flight, so [`Engine::shutdown`] can cancel them and wait.
    calls: Mutex<Calls>,
    /// Woken when the last call in flight ends.
    idle: Notify,
}

impl Engine {
    /// An engine for PostgreSQL. Does not connect: the first call does.
    pub fn postgres(config: Config, params: ConnectParams) -> Engine {
        let options = PgOptions {
            read_only: config.read_only,
            max_conn_lifetime: config.pool.max_conn_lifetime,
            max_conn_idle: config.pool.max_conn_idle,
            role: config.connection.role.clone(),
            read_only_as_login: config.connection.read_only_as_login,
        };
        Engine::new(config, Backend::Postgres(PgBackend::new(params, options)))
    }

    /// An engine for SQLite: `default` is the file calls use unless they name
    /// one inside `root`. Opens nothing until a call.
    pub fn sqlite(config: Config, default: Option<Target>, root: Option<Root>) -> Engine {
        let backend = SqliteBackend::new(default, root, config.read_only);
        Engine::new(config, Backend::Sqlite(backend))
    }

    /// An engine for a DuckDB file (or `duckdb::memory:`). Opens the database
    /// at the first call, with the sandbox settings of `config`.
    #[cfg(feature = "duckdb")]
    pub fn duckdb(config: Config, target: Target) -> Engine {
        let backend = crate::backend::duckdb::DuckDbBackend::new(
            target,
            config.read_only,
            config.protection.allows(guard::Rule::FileFunction),
            config.duckdb.clone(),
        );
        Engine::new(config, Backend::DuckDb(backend))
    }

    pub(crate) fn from_choice(config: Config, choice: Choice) -> Engine {
        match choice {
            Choice::Postgres(params) => Engine::postgres(config, params),
            Choice::Sqlite { default, root } => Engine::sqlite(config, default, root),
            #[cfg(feature = "duckdb")]
            Choice::DuckDb { target } => Engine::duckdb(config, target),
        }
    }

    fn new(config: Config, backend: Backend) -> Engine {
        let mode = match config.read_only {
            true => guard::Mode::ReadOnly,
            false => guard::Mode::ReadWrite,
        };
        let judge = guard::Judge::new(config.protection.clone(), mode);
        Engine {
            slots: Semaphore::new(config.pool.max_conns),
            waiting: AtomicUsize::new(0),
            waiting_bytes: AtomicUsize::new(0),
            backend,
            judge,
            config,
            calls: Mutex::new(Calls::default()),
            idle: Notify::new(),
        }
    }

    /// Resolve the database the usual way (see `Choice::resolve`): `url`
    /// (the `--database` flag) if given, else `PGMCP_DATABASE`,
    /// `PGMCP_PG_CONNSTRING`, the config's `database`, and finally the config's
    /// `connection` section with the `PG*` variables.
    ///
    /// The convenience for library users: the process environment is read
    /// here, through `crate::process::environment::var` as the command line reads
    /// it. `choose` takes any lookup instead.
    pub fn from_env(config: Config, url: Option<&str>) -> Result<Engine, ChoiceError> {
        let choice = choose(&config, url, &crate::process::environment::var)?;
        Ok(Engine::from_choice(config, choice))
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whose SQL the engine's database speaks.
    pub fn dialect(&self) -> Dialect {
        self.backend.dialect()
    }

    /// Run one query through every stage, and read its answer back as Rust
    /// values: exactly what an MCP client reads. Any error comes back with
    /// the matching `error_prompts` appended.
    pub async fn query(&self, input: &QueryInput, cancel: CancellationToken) -> Result<QueryOutput, Error> {
        let answer = self.query_answer(input, cancel).await?;
        answer
            .output()
            .map_err(|e| Error::Internal(format!("cannot read the encoded result: {e}")))
    }

    /// Run one query through every stage; its answer is the JSON text an
    /// MCP client receives, encoded once and capped as it was written.
    pub async fn query_answer(&self, input: &QueryInput, cancel: CancellationToken) -> Result<QueryAnswer, Error> {
        self.query_answer_from(input, Consent::Caller, cancel).await
    }

    /// [`Self::query_answer`] for a call `consent` speaks for: a model's
    /// statement that `confirm` covers fails with [`Error::Unconfirmed`]
    /// (nothing ran, no prompts appended) until a person accepts its
    /// proposal ([`confirm`]).
    pub async fn query_answer_from(
        &self,
        input: &QueryInput,
        consent: Consent,
        cancel: CancellationToken,
    ) -> Result<QueryAnswer, Error> {
        let call = self.begin(cancel);
        self.run_query(input, &consent, &call.token).await.map_err(|e| match e {
            Error::Unconfirmed(_) => e,
            e => self.prompted(e),
        })
    }

    async fn run_query(
        &self,
        input: &QueryInput,
        consent: &Consent,
        cancel: &CancellationToken,
    ) -> Result<QueryAnswer, Error> {
        let config = &self.config;
        let max_rows = check_input(
            input,
            config.query.max_params_bytes,
            config.query.max_sql_length,
            config.query.max_rows,
            config.query.default_limit,
        )?;
        let size = input.sql.len() + input.params.iter().map(param_bytes).sum::<usize>();
        let _slot = self
            .slot_for(size, &self.deadline(config.query.default_timeout, cancel.clone()))
            .await?;

        let (sql, deadline) = self.hooked_and_timed("query", &input.sql, cancel).await?;

        // Whether a person must accept what the statement does before it
        // runs (`confirm`). What runs unasked runs under the reading judge:
        // a statement that turns out to write is refused, never run.
        let gate = confirm::gate(config, consent, &sql, &input.params, input.database.as_deref());
        let reading = self.judge.reading();
        let unasked_judge = match gate.reading_only() {
            true => &reading,
            false => &self.judge,
        };
        let read_only = [confirm::proposal::read_only_transaction()];
        let statement = |prelude| Statement {
            sql: &sql,
            params: &input.params,
            fetch_limit: max_rows,
            budget: ReadBudget::for_answer(config.query.max_result_length),
            database: input.database.as_deref(),
            rollback: false,
            prelude,
            epilogue: &[],
        };

        // The guard judges PostgreSQL SQL with the catalog's facts of one
        // version; the statement runs only while the catalog is still at it.
        // If something was created or replaced in between, nothing ran: judge
        // the statement again with new facts, once.
        let mut judged_again = false;
        // Whether the guard judged it one that only reads (the grid pages
        // only those).
        let mut reads;
        let (result, checked) = loop {
            // The guard stage. PostgreSQL: the guard reads the whole parse
            // tree, with the catalog's facts. SQLite and DuckDB: their own
            // parsers report what the statement does as the backend prepares
            // it, and their dialect's guard (guard::sqlite, guard::duckdb)
            // asks the same judge.
            let routines = match self.backend.dialect() {
                Dialect::Postgres => Some(self.backend.routines(&deadline).await?),
                Dialect::Sqlite | Dialect::DuckDb => None,
            };
            let result = match routines.as_deref() {
                Some(routines) => {
                    let checked = guard::check(&self.judge, routines, &sql)?;
                    guard::check_params(checked.param_count(), &input.params, guard::Placeholders::Dollar)
                        .map_err(|e| Error::Input(InputError::Params(e)))?;
                    // The reading judge's verdict, only where something
                    // reads it: the gate, and the grid's pages.
                    let verdict = !config.read_only && (gate.reading_only() || config.grid);
                    let writes = verdict && guard::check(&reading, routines, &sql).is_err();
                    reads = config.read_only || (verdict && !writes);
                    let guard = Guard::Checked {
                        catalog_version: routines.version(),
                    };
                    if gate.asks(writes) {
                        let judged = confirm::proposal::PgJudged {
                            checked: &checked,
                            routines,
                            guard,
                            writes,
                        };
                        match self.pg_proposal(&sql, input, judged, &deadline).await {
                            Ok(proposal) => return Err(Error::Unconfirmed(Box::new(proposal))),
                            Err(Error::CatalogChanged) if !judged_again => {
                                judged_again = true;
                                continue;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    // Unasked, it only reads: in a READ ONLY transaction too.
                    let prelude = match gate.reading_only() {
                        true => &read_only[..],
                        false => &[][..],
                    };
                    (
                        self.backend.execute(statement(prelude), guard, &deadline).await,
                        Some(checked),
                    )
                }
                None if gate.asks(false) => {
                    return Err(self.embedded_proposal(&sql, input, &deadline).await);
                }
                None => {
                    reads = config.read_only || gate.reading_only();
                    let guard = Guard::WhilePreparing(unasked_judge);
                    match self.backend.execute(statement(&[]), guard, &deadline).await {
                        // The reading judge refused a write: ask the person
                        // (the whole guard judges it first).
                        Err(Error::Guard(v)) if gate.reading_only() && v.rule == guard::Rule::ReadOnly => {
                            return Err(self.embedded_proposal(&sql, input, &deadline).await);
                        }
                        result => (result, None),
                    }
                }
            };
            match result {
                (Err(Error::CatalogChanged), _) if !judged_again => judged_again = true,
                result => break result,
            }
        };
        let rows = match result {
            // An undefined table or column: point to the closest names in the
            // catalog, within a short budget of its own.
            Err(Error::Db(mut db)) if db.is_undefined_name() => {
                let budget = self.deadline(SUGGESTION_BUDGET, cancel.clone());
                let relations = checked.map(|c| c.relations()).unwrap_or_default();
                db.suggestions = self
                    .backend
                    .suggest(&db, &relations, input.database.as_deref(), &budget)
                    .await;
                return Err(Error::Db(db));
            }
            rows => rows?,
        };
        let mut shaped = shape::shaped(rows, max_rows);

        if !config.hooks.after_query.is_empty() {
            // A hook reads the answer as the client would, uncapped.
            let json = answer::encode(shaped, usize::MAX).into_json();
            let json = hooks::run_chain_on(
                config.name.as_deref(),
                Stage::AfterQuery,
                "query",
                &config.hooks.after_query,
                json,
                cancel,
            )
            .await?;
            shaped = shape::from_hook_json(&json).map_err(|e| {
                Error::Hook(HookError::NotAnAnswer {
                    tool: "query".to_owned(),
                    reason: e.to_string(),
                })
            })?;
        }
        Ok(fence::output(&config.sanitization, config.query.max_result_length, shaped).judged_reading(reads))
    }

    /// The `before_query` hooks, then the timeout rule: the SQL that runs
    /// (the hooks may rewrite it; the length limit holds for what runs, not
    /// only for what was sent) and its deadline. `tool`: what the hooks are
    /// told the call is.
    async fn hooked_and_timed(
        &self,
        tool: &str,
        sent: &str,
        cancel: &CancellationToken,
    ) -> Result<(String, Deadline), Error> {
        let query = &self.config.query;
        let sql = hooks::run_chain_on(
            self.config.name.as_deref(),
            Stage::BeforeQuery,
            tool,
            &self.config.hooks.before_query,
            sent.to_owned(),
            cancel,
        )
        .await?;
        if sql != sent {
            check_length(&sql, query.max_sql_length, " as the before_query hooks rewrote it")?;
        }
        let timeout = timeouts::for_sql(&query.timeout_rules, query.default_timeout, &sql);
        Ok((sql, self.deadline(timeout, cancel.clone())))
    }

    /// Append every matching error prompt.
    fn prompted(&self, error: Error) -> Error {
        let prompts = error_prompts::matching(&self.config.error_prompts, &error.to_string());
        if prompts.is_empty() {
            error
        } else {
            Error::Prompted {
                source: Box::new(error),
                prompts,
            }
        }
    }

    /// The output stage for errors: `error` as the model may read it, its
    /// whole text sanitized and capped like a result (see `fence::error`).
    /// Calls return errors unfenced, so Rust callers can still match on
    /// them; every place that turns an error into text for a model or a
    /// terminal (the MCP tools, `pgmcp query`) passes it through here.
    pub fn fenced(&self, error: Error) -> Error {
        self.fenced_within(error, self.config.query.max_result_length)
    }

    /// [`Self::fenced`] within `max_bytes`, for a text that shares the cap
    /// with more (the boundary around data, the error prompts after it).
    pub fn fenced_within(&self, error: Error, max_bytes: usize) -> Error {
        fence::error(&self.config.sanitization, max_bytes, error)
    }

    /// A text the model reads beside an error (its error prompts, set
    /// apart from it), through the same fence: sanitized and capped at
    /// `max_bytes`.
    pub fn fenced_text(&self, text: &str, max_bytes: usize) -> String {
        fence::shorten(
            &sanitize::text(&self.config.sanitization, text),
            max_bytes,
            "error prompts",
        )
        .into_owned()
    }

    /// The tables, views and materialized views the role can read, filtered and
    /// capped at `query.max_rows`.
    pub async fn list_tables(&self, filter: &TableFilter, cancel: CancellationToken) -> Result<TableList, Error> {
        let call = self.begin(cancel);
        let deadline = self.deadline(self.config.query.list_tables_timeout, call.token.clone());
        let _slot = self.slot(&deadline).await.map_err(|e| self.prompted(e))?;
        let cap = self.config.query.max_rows;
        let filter = TableFilter {
            limit: if filter.limit == 0 { cap } else { filter.limit.min(cap) },
            ..filter.clone()
        };
        let mut list = self
            .backend
            .list_tables(&filter, &deadline)
            .await
            .map_err(|e| self.prompted(e))?;
        // Backends return one table more than the limit, so a full list is
        // known to be cut.
        if list.tables.len() > filter.limit {
            list.tables.truncate(filter.limit);
            list.truncated = true;
            list.hint = Some(format!(
                "Only the first {} tables were listed. Pass schema, or a pattern such as \"order\" or \"fact_%\", to narrow the list.",
                filter.limit
            ));
        }
        self.answer(list, "list_tables", &call.token)
            .await
            .map_err(|e| self.prompted(e))
    }

    /// Columns, keys, indexes and constraints of one table. `table` may be
    /// qualified (`sales.orders`) and quoted; with no schema, `public` if the
    /// table is there, else the one schema that has it.
    pub async fn describe_table(
        &self,
        table: &str,
        schema: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<TableDescription, Error> {
        self.describe_table_in(None, table, schema, cancel).await
    }

    /// [`Engine::describe_table`] in `database`, an SQLite file inside
    /// `sqlite.root`.
    pub async fn describe_table_in(
        &self,
        database: Option<&str>,
        table: &str,
        schema: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<TableDescription, Error> {
        let (schema, name) =
            parse_table_name(table, schema).map_err(|e| self.prompted(InputError::TableName(e).into()))?;
        let call = self.begin(cancel);
        let deadline = self.deadline(self.config.query.describe_table_timeout, call.token.clone());
        let _slot = self.slot(&deadline).await.map_err(|e| self.prompted(e))?;
        let description = self
            .backend
            .describe_table(database, schema.as_deref(), &name, &deadline)
            .await
            .map_err(|e| self.prompted(e))?;
        self.answer(description, "describe_table", &call.token)
            .await
            .map_err(|e| self.prompted(e))
    }

    /// The output stage of every answer but a query result: `after_query`
    /// hooks (they get the answer's JSON, and may rewrite or reject it as
    /// they do a query result), then the fence: sanitized and capped.
    async fn answer<T: Serialize + DeserializeOwned>(
        &self,
        answer: T,
        tool: &str,
        cancel: &CancellationToken,
    ) -> Result<T, Error> {
        let hooks = &self.config.hooks.after_query;
        let answer = if hooks.is_empty() {
            answer
        } else {
            let json = serde_json::to_string(&answer)
                .map_err(|e| Error::Internal(format!("cannot encode the answer: {e}")))?;
            let json = hooks::run_chain_on(
                self.config.name.as_deref(),
                Stage::AfterQuery,
                tool,
                hooks,
                json,
                cancel,
            )
            .await?;
            serde_json::from_str(&json).map_err(|e| {
                Error::Hook(HookError::NotAnAnswer {
                    tool: tool.to_owned(),
                    reason: e.to_string(),
                })
            })?
        };
        fence::answer(&self.config.sanitization, self.config.query.max_result_length, answer)
    }

    /// Stop every call in flight (queries get a cancel request, hooks are
    /// killed), wait up to `grace` for them to finish stopping, and close idle
    /// connections. New calls after this fail as cancelled.
    pub async fn shutdown(&self, grace: Duration) {
        {
            let mut calls = self.calls();
            calls.shut_down = true;
            calls.live.values().for_each(CancellationToken::cancel);
        }
        let _ = tokio::time::timeout(grace, async {
            loop {
                let idle = self.idle.notified();
                if self.calls().live.is_empty() {
                    return;
                }
                idle.await;
            }
        })
        .await;
        self.backend.close().await;
    }

    /// Close idle connections. Calls still running finish on their own.
    pub async fn close(&self) {
        self.backend.close().await;
    }

    /// Connect and describe the session (server, user, database, TLS, and
    /// read-only mode as the server sees it), for `pgmcp check`. Takes a slot
    /// and the `query.default_timeout` like a query.
    pub async fn session_report(&self, cancel: CancellationToken) -> Result<SessionReport, Error> {
        let call = self.begin(cancel);
        let deadline = self.deadline(self.config.query.default_timeout, call.token.clone());
        let _slot = self.slot(&deadline).await?;
        self.backend.session_report(&deadline).await
    }

    /// Whether the database answers within `within`, a call slot included:
    /// a server whose calls all wait is not ready for more.
    pub async fn ready(&self, within: Duration) -> Result<(), Error> {
        let call = self.begin(CancellationToken::new());
        let deadline = self.deadline(within, call.token.clone());
        let _slot = self.slot(&deadline).await?;
        let report = self.backend.session_report(&deadline);
        match tokio::time::timeout(within, report).await {
            Ok(report) => report.map(|_| ()),
            Err(_) => Err(Error::Timeout { after: within }),
        }
    }

    /// SQL that creates `role` as a least-privilege reader of the connected
    /// PostgreSQL database, and `login` as its member when given, for
    /// `pgmcp check --suggest-role`.
    pub(crate) async fn suggest_role(
        &self,
        role: &str,
        login: Option<&postgres::NewLogin>,
        psql: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<String, Error> {
        let call = self.begin(cancel);
        let deadline = self.deadline(self.config.query.default_timeout, call.token.clone());
        let _slot = self.slot(&deadline).await?;
        match &self.backend {
            Backend::Postgres(pg) => pg.suggest_role(role, login, psql, &deadline).await,
            _ => Err(no_roles()),
        }
    }

    /// What the connected PostgreSQL server says about pg_hba.conf for a
    /// login connecting the way this engine does, for `pgmcp check
    /// --suggest-role --login`.
    pub(crate) async fn hba_facts(&self, reader: &str, cancel: CancellationToken) -> Result<postgres::HbaFacts, Error> {
        let call = self.begin(cancel);
        let deadline = self.deadline(self.config.query.default_timeout, call.token.clone());
        let _slot = self.slot(&deadline).await?;
        match &self.backend {
            Backend::Postgres(pg) => pg.hba_facts(reader, &deadline).await,
            _ => Err(no_roles()),
        }
    }

    /// Start a call: its token is a child of the caller's, so the caller's
    /// cancellation reaches it, and it is registered until dropped so shutdown
    /// can cancel it too.
    fn begin(&self, cancel: CancellationToken) -> Call<'_> {
        let token = cancel.child_token();
        let mut calls = self.calls();
        // Checked under the lock that shutdown takes, so no call slips past it.
        if calls.shut_down {
            token.cancel();
        }
        let id = calls.next;
        calls.next += 1;
        calls.live.insert(id, token.clone());
        Call {
            engine: self,
            id,
            token,
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn deadline(&self, timeout: Duration, cancel: CancellationToken) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            timeout,
            cancel,
        }
    }

    /// A slot for a call whose arguments are small (the catalog tools).
    async fn slot(&self, deadline: &Deadline) -> Result<SemaphorePermit<'_>, Error> {
        self.slot_for(0, deadline).await
    }

    /// Wait for a free slot until the deadline, or until the caller cancels.
    /// A call that would wait is refused at once when `pool.max_waiting`
    /// calls already wait, or when its `bytes` of arguments would take those
    /// of the waiting calls past [`WAITING_BYTES`].
    async fn slot_for(&self, bytes: usize, deadline: &Deadline) -> Result<SemaphorePermit<'_>, Error> {
        if let Ok(permit) = self.slots.try_acquire() {
            return Ok(permit);
        }
        let max = self.config.pool.max_waiting;
        let count = self.waiting.fetch_add(1, Ordering::SeqCst);
        let held = self.waiting_bytes.fetch_add(bytes, Ordering::SeqCst);
        let queued = Queued { engine: self, bytes };
        if count >= max || held.saturating_add(bytes) > WAITING_BYTES {
            return Err(Error::Busy {
                waiting: count,
                slots: self.config.pool.max_conns,
            });
        }
        let permit = self.wait_for_slot(deadline).await;
        drop(queued);
        permit
    }

    async fn wait_for_slot(&self, deadline: &Deadline) -> Result<SemaphorePermit<'_>, Error> {
        let started = Instant::now();
        tokio::select! {
            // A call cancelled while it waited must not take the slot.
            biased;
            _ = deadline.cancel.cancelled() => Err(Error::Cancelled),
            permit = tokio::time::timeout_at(deadline.at.into(), self.slots.acquire()) => match permit {
                Ok(Ok(permit)) => Ok(permit),
                // The semaphore is never closed; treat it like a timeout anyway.
                Ok(Err(_)) | Err(_) => Err(Error::NoSlot { slots: self.config.pool.max_conns, waited: started.elapsed() }),
            },
        }
    }
}

/// The database `config` and the environment select; `url` (the `--database`
/// flag) first. `env` reads a variable, an empty one being unset (the
/// command line passes `crate::process::environment::var`): nothing here reads the
/// process environment itself.
pub fn choose(config: &Config, url: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<Choice, ChoiceError> {
    choose_named(config, url, env).map(|(choice, _)| choice)
}

/// [`choose`], and the setting that named the database (`None` when nothing
/// did, and PostgreSQL's defaults apply).
pub fn choose_named(
    config: &Config,
    url: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Choice, Option<Named>), ChoiceError> {
    let named = backend::named::named(url, config.database.as_deref(), config.source.as_deref(), env)?;
    let choice = Choice::resolve(named.as_ref(), config.sqlite_root.as_deref(), &config.connection, env)?;
    Ok((choice, named))
}

/// Most bytes of SQL and parameters the calls waiting for a slot may hold
/// together.
pub const WAITING_BYTES: usize = 16 << 20;

/// A call counted as waiting; uncounted when dropped, however the wait ends.
struct Queued<'a> {
    engine: &'a Engine,
    bytes: usize,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.engine.waiting.fetch_sub(1, Ordering::SeqCst);
        self.engine.waiting_bytes.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

/// The calls in flight, by id.
#[derive(Default)]
struct Calls {
    next: u64,
    live: HashMap<u64, CancellationToken>,
    /// Set by shutdown: calls that begin after it start cancelled.
    shut_down: bool,
}

/// A call in flight; see [`Engine::begin`].
struct Call<'a> {
    engine: &'a Engine,
    id: u64,
    token: CancellationToken,
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        let mut calls = self.engine.calls();
        calls.live.remove(&self.id);
        if calls.live.is_empty() {
            self.engine.idle.notify_waiters();
        }
    }
}

/// What a role-related call answers on a database without roles.
fn no_roles() -> Error {
    InputError::NoRoles.into()
}
