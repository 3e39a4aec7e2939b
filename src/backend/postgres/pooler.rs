//! Finding out pgmcp talks to a connection pooler (PgBouncer), and what
//! changes then: a startup parameter turned away as PgBouncer turns it away
//! (`connect_to`), or one of pgmcp's prepared statements missing from a
//! session that is not the one the connection started with
//! (`statement_lost`). From then on every connection works as behind a
//! pooler. Apart from the session's shape (`session.rs`), which it switches.

use std::sync::atomic::Ordering;

use super::deadline::run;
use super::session::SETTINGS_NAME;
use super::wire::{Connection, Exchange, WireError};
use super::{ConnectParams, Deadline, PgBackend, routines};
use crate::error::{DbError, Error};

/// What PgBouncer answers a startup parameter it does not track with.
const UNTRACKED_PARAMETER: &str = "unsupported startup parameter";

/// Whether `db`, the error of one of pgmcp's own statements, says one of
/// pgmcp's named statements is not where pgmcp prepared it
/// (`invalid_sql_statement_name`), or is there already without pgmcp having
/// prepared it (`duplicate_prepared_statement`): either the connection
/// reaches different server connections from one transaction to the next,
/// as through a transaction pooler, or a statement of the caller's
/// deallocated it ([`PgBackend::statement_lost`] tells which). Never asked
/// of the caller's statement's own error: `DEALLOCATE pgmcp_settings` failing
/// is the caller's answer, not news about the server.
pub(super) fn names_a_statement_of_pgmcps(db: &DbError) -> bool {
    matches!(db.code(), "26000" | "42P05")
        && routines::NAMES
            .iter()
            .chain([&SETTINGS_NAME])
            .any(|name| db.message.contains(&format!("\"{name}\"")))
}

impl PgBackend {
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
    pub(super) async fn statement_lost(&self, conn: &mut Connection, deadline: &Deadline) {
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

    /// One connection to the host `params` names, as a pooler in front of it
    /// allows.
    pub(super) async fn connect_to(&self, params: &ConnectParams) -> Result<Connection, WireError> {
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
}

/// A lost statement twice in a row is an error like any other.
pub(super) fn surfaced(e: Error) -> Error {
    match e {
        Error::StatementLost(db) => Error::Db(db),
        other => other,
    }
}
