//! Database engines. A backend only connects, executes and hands back neutral
//! rows (JSON values plus column names and type names); every policy decision
//! (guard, timeouts, caps) is made once, above, in [`crate::pipeline`].

pub mod postgres;

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::catalog::{TableDescription, TableFilter, TableList};
use crate::error::{DbError, Error};

/// A result column: its name and its type as the engine spells it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
}

/// One statement to run, after the guard accepted it.
#[derive(Debug, Clone, Copy)]
pub struct Statement<'a> {
    pub sql: &'a str,
    /// Positional parameters `$1..$n`: strings, numbers, booleans or null.
    pub params: &'a [Value],
    /// Stop reading after this many rows.
    pub fetch_limit: usize,
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
    pub user: String,
    pub database: String,
    /// How the connection is encrypted (`TLSv1.3, TLS13_AES_256_GCM_SHA384`); `None` when it is not.
    pub encryption: Option<String>,
    /// Whether the server reports the transaction a query runs in as read-only.
    pub read_only: bool,
    /// Where the password came from; `None` when none was needed.
    pub password_from: Option<String>,
}

/// The engine behind a session. A closed enum: one `match` per operation.
pub enum Backend {
    Postgres(postgres::PgBackend),
}

impl Backend {
    pub async fn execute(&self, stmt: Statement<'_>, deadline: &Deadline) -> Result<Rows, Error> {
        match self {
            Backend::Postgres(pg) => pg.execute(stmt, deadline).await,
        }
    }

    pub async fn list_tables(&self, filter: &TableFilter, deadline: &Deadline) -> Result<TableList, Error> {
        match self {
            Backend::Postgres(pg) => pg.list_tables(filter, deadline).await,
        }
    }

    pub async fn describe_table(
        &self,
        schema: Option<&str>,
        table: &str,
        deadline: &Deadline,
    ) -> Result<TableDescription, Error> {
        match self {
            Backend::Postgres(pg) => pg.describe_table(schema, table, deadline).await,
        }
    }

    /// Close catalog names for an undefined table or column error.
    pub async fn suggest(&self, error: &DbError, relations: &[String], deadline: &Deadline) -> Vec<String> {
        match self {
            Backend::Postgres(pg) => pg.suggest(error, relations, deadline).await,
        }
    }

    pub async fn session_report(&self, deadline: &Deadline) -> Result<SessionReport, Error> {
        match self {
            Backend::Postgres(pg) => pg.session_report(deadline).await,
        }
    }

    /// Close idle connections; called on shutdown.
    pub async fn close(&self) {
        match self {
            Backend::Postgres(pg) => pg.close().await,
        }
    }
}
