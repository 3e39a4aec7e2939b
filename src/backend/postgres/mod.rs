//! The PostgreSQL backend: a small pool of `wire::Connection`s, one round trip
//! per call, and the cancel request that makes timeouts stop work on the server.
//!
//! # Layout
//!
//! - `mod.rs`: [`PgBackend`], the backend's face: `execute` (one statement
//!   in a transaction of its own, checked against the catalog version the
//!   guard judged it with), `routines`, `session_report`.
//! - `session.rs`: what every session is pinned to, how each transaction
//!   begins and ends.
//! - `pool.rs`: idle connections, and connecting to the hosts in turn.
//! - `pooler.rs`: finding out a connection pooler is in between.
//! - `deadline.rs`: `run`: one exchange within the call's deadline.
//! - `acting_role.rs`: whom statements act as, and why.
//! - `introspection.rs`: catalog queries and the answers built from them.
//! - `rows.rs`: parameters in, [`Rows`] out.
//! - the rest, each on its own: `wire/` (the protocol), `params/` (where
//!   and as whom to connect), `tls.rs`, `passfile.rs`, `diagnosis.rs`,
//!   `hba.rs`, `login.rs`, `role.rs`, `routines.rs`, `catalog.rs` (SQL),
//!   `types.rs`, `value.rs`.

mod acting_role;
mod catalog;
mod deadline;
mod diagnosis;
pub mod hba;
mod introspection;
pub mod login;
pub mod params;
pub mod passfile;
mod pool;
mod pooler;
mod role;
mod routines;
mod rows;
mod session;
mod tls;
mod types;
pub mod value;
mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use deadline::run;
pub use login::{HbaFacts, NewLogin, Place};
pub use params::{
    ConnectParams, ConnectionConfig, Host, ParamsError, PasswordSource, RawConnection, RootCert, SessionAttrs, SslMode,
};
use pooler::surfaced;
use role::SessionRole;
pub use role::{quote_ident, suggest_role_sql};
use rows::param_text;
use session::timeout_ms;
use types::TypeCatalog;
use wire::{Connection, Exchange, Prepared};

use super::{Column, Deadline, OwnStatement, Rows, SessionReport, Statement};
use crate::error::Error;

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
    /// read (see `role::LOGIN_POWERS`), instead of as `pg_read_all_data`.
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
    /// session changes inside its own transaction (see `finish` in
    /// `session.rs`).
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

    /// One try at [`Self::execute`]. `quick`: the catalog check may be the
    /// quick one (`routines::Check`).
    async fn execute_once(
        &self,
        stmt: Statement<'_>,
        catalog_version: Option<&str>,
        quick: bool,
        deadline: &Deadline,
    ) -> Result<Rows, Error> {
        let params: Vec<Option<String>> = stmt
            .params
            .iter()
            .enumerate()
            .map(param_text)
            .collect::<Result<_, _>>()?;
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
        let (finish, deferred) = self.finish(stmt.rollback, stmt.epilogue, self.role_set(&conn));
        // Behind a pooler, the next transaction may run on a server
        // connection that never saw pgmcp's statements: they go unnamed.
        let named = !self.behind_pooler();
        // The settings; the caller's own statements that decide how names
        // resolve; the catalog check; then the caller's others, which may
        // run a user's code: after the check (`Statement::prelude`). All
        // after the settings, so under the statement timeout and as the
        // role statements run as.
        fn own(own: &OwnStatement, after_parse: bool) -> Prepared<'_> {
            Prepared {
                name: "",
                sql: &own.sql,
                params: &own.params,
                after_parse,
                // What it runs is the call's: its error is the call's own.
                signals: false,
            }
        }
        let mut prepared = vec![self.settings(&timeout)];
        // Where each of the prelude's statements, and the check, sit among
        // `prepared`: their answers come back in that order.
        let mut at = vec![0; stmt.prelude.len()];
        for (i, o) in stmt.prelude.iter().enumerate().filter(|(_, o)| o.before_parse) {
            at[i] = prepared.len();
            prepared.push(own(o, false));
        }
        let check_at = check.as_ref().map(|check| {
            prepared.push(check.statement(named));
            prepared.len() - 1
        });
        for (i, o) in stmt.prelude.iter().enumerate().filter(|(_, o)| !o.before_parse) {
            at[i] = prepared.len();
            prepared.push(own(o, true));
        }
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
                finish: &[&finish],
                deferred,
                prepared: &prepared,
            },
            deadline,
        )
        .await;
        let rows = match result {
            Ok(mut result) => {
                let mut answers = std::mem::take(&mut result.prepared_answers);
                answers.resize(prepared.len(), None);
                if let (Some(check), Some(i)) = (&check, check_at) {
                    conn.catalog_seen = check.seen_after(conn.catalog_seen.take(), answers[i].take());
                }
                let prelude = at.iter().map(|i| answers[*i].take()).collect();
                let rows = self
                    .to_rows(&mut conn, result, stmt.fetch_limit, deadline)
                    .await
                    .map(|rows| Rows { prelude, ..rows });
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
        // Whether the epilogue ran is not known: the session goes, and
        // what the prelude made with it (`Statement::epilogue`).
        if rows.is_err() && !stmt.epilogue.is_empty() {
            conn.retire();
        }
        self.checkin(conn);
        rows
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
                    rollback: false,
                    prelude: &[],
                    epilogue: &[],
                },
                None,
                deadline,
            )
            .await?;
        let row = rows.rows.first().ok_or_else(|| Error::UnexpectedReply {
            what: "the session report query",
            detail: "no row".to_owned(),
        })?;
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
}
