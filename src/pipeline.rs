//! The query pipeline: every stage of a call, in order, in one place.
//!
//! ```text
//! query:          guard → timeout → slot → backend (own transaction) → shape
//! list_tables:              timeout → slot → backend catalog query
//! describe_table:           timeout → slot → backend catalog query
//! ```
//!
//! [`Engine`] is the library's entry point: build one from a [`Config`] and call
//! it from Rust directly, or serve it over MCP with [`crate::mcp`].

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::backend::postgres::{self, ConnectParams, PgBackend, PgOptions};
use crate::backend::{Backend, Deadline, Statement};
use crate::catalog::{TableDescription, TableList};
use crate::config::Config;
use crate::error::Error;
use crate::guard;
use crate::shape::{self, QueryOutput};

/// Arguments of a `query` call.
#[derive(Debug, Clone, Default)]
pub struct QueryInput {
    pub sql: String,
    /// Bound to `$1..$n` in order; never interpolated into the SQL.
    pub params: Vec<Value>,
}

/// Runs calls against one database under one configuration. Cheap to share
/// behind an `Arc`; every method may run concurrently.
pub struct Engine {
    config: Config,
    /// `config.protection` with `read_only` taken from `config.read_only`, the
    /// one place read-only mode is set.
    policy: guard::Policy,
    backend: Backend,
    /// Bounds calls in flight to `pool.max_conns`, and so the connections used.
    slots: Semaphore,
}

impl Engine {
    /// An engine for PostgreSQL. Does not connect: the first call does.
    pub fn postgres(config: Config, params: ConnectParams) -> Engine {
        let options = PgOptions {
            read_only: config.read_only,
            max_conn_lifetime: config.pool.max_conn_lifetime,
            max_conn_idle: config.pool.max_conn_idle,
        };
        let policy = guard::Policy {
            read_only: config.read_only,
            ..config.protection.clone()
        };
        Engine {
            slots: Semaphore::new(config.pool.max_conns),
            backend: Backend::Postgres(PgBackend::new(params, options)),
            policy,
            config,
        }
    }

    /// Resolve the PostgreSQL connection the usual way (`PGMCP_PG_CONNSTRING`,
    /// else the config's `connection` section, then the `PG*` variables).
    pub fn postgres_from_env(config: Config) -> Result<Engine, postgres::ParamsError> {
        let connstring = std::env::var("PGMCP_PG_CONNSTRING").ok().filter(|s| !s.is_empty());
        let params = postgres::params::resolve(connstring.as_deref(), &config.connection, &|k| std::env::var(k).ok())?;
        Ok(Engine::postgres(config, params))
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Run one query through every stage.
    pub async fn query(&self, input: &QueryInput, cancel: CancellationToken) -> Result<QueryOutput, Error> {
        guard::check(&self.policy, &input.sql)?;
        let deadline = self.deadline(self.config.query.default_timeout, cancel);
        let _slot = self.slot(&deadline).await?;
        let max_rows = self.config.query.max_rows;
        let rows = self
            .backend
            .execute(
                Statement {
                    sql: &input.sql,
                    params: &input.params,
                    fetch_limit: max_rows,
                },
                &deadline,
            )
            .await?;
        Ok(shape::query_output(rows, max_rows))
    }

    /// Every table, view and materialized view the role can read.
    pub async fn list_tables(&self, cancel: CancellationToken) -> Result<TableList, Error> {
        let deadline = self.deadline(self.config.query.list_tables_timeout, cancel);
        let _slot = self.slot(&deadline).await?;
        self.backend.list_tables(&deadline).await
    }

    /// Columns, keys, indexes and constraints of one table; `schema` defaults to `public`.
    pub async fn describe_table(
        &self,
        table: &str,
        schema: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<TableDescription, Error> {
        let schema = schema.filter(|s| !s.is_empty()).unwrap_or("public");
        let deadline = self.deadline(self.config.query.describe_table_timeout, cancel);
        let _slot = self.slot(&deadline).await?;
        self.backend.describe_table(schema, table, &deadline).await
    }

    /// Close idle connections. Calls still running finish on their own.
    pub async fn close(&self) {
        self.backend.close().await;
    }

    fn deadline(&self, timeout: Duration, cancel: CancellationToken) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            timeout,
            cancel,
        }
    }

    /// Wait for a free slot until the deadline, or until the caller cancels.
    async fn slot(&self, deadline: &Deadline) -> Result<SemaphorePermit<'_>, Error> {
        let started = Instant::now();
        tokio::select! {
            permit = tokio::time::timeout_at(deadline.at.into(), self.slots.acquire()) => match permit {
                Ok(Ok(permit)) => Ok(permit),
                // The semaphore is never closed; treat it like a timeout anyway.
                Ok(Err(_)) | Err(_) => Err(Error::NoSlot { slots: self.config.pool.max_conns, waited: started.elapsed() }),
            },
            _ = deadline.cancel.cancelled() => Err(Error::Cancelled),
        }
    }
}
