//! The tools that answer "why is it slow?" and "is it healthy?" on
//! PostgreSQL: `explain` (a statement's plan) and `diagnose` (one health
//! check over the statistics views). Both are read-only: `explain`'s
//! `analyze` is always rolled back.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::schemars::{self, JsonSchema};
use rmcp::{Peer, RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{RequestMetaObject, Server, tool_result, with_progress};
use crate::pipeline::diagnose::{Check, DiagnoseAnswer};
use crate::pipeline::explain::{ExplainAnswer, ExplainInput};

/// Arguments of the `explain` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExplainArgs {
    /// One PostgreSQL statement, as `query` takes it. Use $1, $2, ... for
    /// values and pass them in `params`.
    pub sql: String,
    /// Values for $1, $2, ... in order.
    #[serde(default)]
    pub params: Option<Vec<Value>>,
    /// Run the statement to measure it (actual rows, time, buffers), inside
    /// a transaction that is always rolled back. Default false: the plan
    /// alone, nothing runs.
    #[serde(default)]
    pub analyze: Option<bool>,
    /// What-if indexes, e.g. ["CREATE INDEX ON orders (customer_id)"]:
    /// made with the hypopg extension for this plan only (nothing is built;
    /// not with analyze), and the answer says whether the plan uses each.
    #[serde(default)]
    pub hypothetical_indexes: Option<Vec<String>>,
    /// Servers with several databases: which one.
    #[serde(default)]
    pub database: Option<String>,
}

/// Arguments of the `diagnose` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiagnoseArgs {
    /// Which check: slow_queries (the statements that took the most time,
    /// from pg_stat_statements), unused_indexes, missing_indexes (large
    /// tables read by sequential scans), bloat (estimated free space),
    /// locks (who waits for whom), connections, cache_hit, vacuum (dead
    /// rows, last vacuum, transaction ID age) or replication.
    pub check: Check,
    /// Servers with several databases: which one.
    #[serde(default)]
    pub database: Option<String>,
}

#[tool_router(router = health_router, vis = "pub(super)")]
impl Server {
    #[tool(
        name = "explain",
        description = "Show how PostgreSQL runs one statement and why it may be slow: total cost and time, the \
                       slowest plan nodes with estimated against actual rows, and what looks wrong (row estimates \
                       far off, sequential scans of large tables, sorts and hashes that spilled to disk), plus the \
                       whole plan when it fits. The statement is checked exactly as query checks it. With analyze: \
                       true it runs, to measure it, inside a transaction that is always rolled back, under the same \
                       timeout as query. With hypothetical_indexes (and the hypopg extension) it says whether the \
                       plan would use indexes that do not exist. PostgreSQL databases only.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<ExplainAnswer>()
    )]
    async fn explain(
        &self,
        Parameters(args): Parameters<ExplainArgs>,
        ct: CancellationToken,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, CallToolResult> {
        let mut database = args.database;
        let engine = self.engine_for(&mut database)?;
        let input = ExplainInput {
            sql: args.sql,
            params: args.params.unwrap_or_default(),
            analyze: args.analyze.unwrap_or(false),
            hypothetical_indexes: args.hypothetical_indexes.unwrap_or_default(),
        };
        tool_result(
            &engine,
            with_progress(
                &meta,
                &peer,
                Box::pin(engine.explain_from(&input, crate::pipeline::confirm::Consent::Model, ct)),
            )
            .await,
        )
    }

    #[tool(
        name = "diagnose",
        description = "Check one aspect of a PostgreSQL database's health and get the facts with a one-line \
                       reading: slow_queries (the statements that took the most time in all and per call, from \
                       pg_stat_statements), unused_indexes, missing_indexes (large tables read mostly by \
                       sequential scans), bloat, locks (blocked sessions and who blocks them), connections, \
                       cache_hit, vacuum or replication. It only reads PostgreSQL's statistics views, and sees what \
                       the connected role may see. PostgreSQL databases only.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<DiagnoseAnswer>()
    )]
    async fn diagnose(
        &self,
        Parameters(args): Parameters<DiagnoseArgs>,
        ct: CancellationToken,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, CallToolResult> {
        let mut database = args.database;
        let engine = self.engine_for(&mut database)?;
        tool_result(
            &engine,
            with_progress(&meta, &peer, Box::pin(engine.diagnose(args.check, ct))).await,
        )
    }
}
