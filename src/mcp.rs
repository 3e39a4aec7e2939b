//! The MCP face of the library: tool schemas, and translation between the wire
//! and [`Engine`] calls. No policy lives here.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::catalog::TableFilter;
use crate::error::Error;
use crate::pipeline::{Engine, QueryInput};

/// Arguments of the `query` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct QueryArgs {
    /// One PostgreSQL SQL statement. Use $1, $2, ... for values and pass them in
    /// `params` instead of writing them into the SQL.
    pub sql: String,
    /// Values for $1, $2, ... in order: strings, numbers, booleans or null.
    /// PostgreSQL infers each one's type from where it is used; add a cast such
    /// as `$1::date` when it cannot.
    #[serde(default)]
    pub params: Option<Vec<Value>>,
    /// Return at most this many rows (at most the server's row cap). Use it with
    /// ORDER BY and OFFSET to page through a large result.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Arguments of the `list_tables` tool.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListTablesArgs {
    /// Only tables in this schema.
    #[serde(default)]
    pub schema: Option<String>,
    /// Only tables whose name matches, case-insensitively: a LIKE pattern
    /// (`order%`, `%_log`) or plain text the name must contain (`order`).
    #[serde(default)]
    pub pattern: Option<String>,
}

/// Arguments of the `describe_table` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DescribeTableArgs {
    /// The table, view or materialized view: `orders`, `sales.orders`, or a
    /// quoted name for mixed case or spaces (`"Order Items"`).
    pub table: String,
    /// The schema that holds it, when not given in `table`. Without one,
    /// `public` is used if the table is there, else the only schema that has it.
    #[serde(default)]
    pub schema: Option<String>,
}

/// The MCP server: three tools over one [`Engine`].
#[derive(Clone)]
pub struct Server {
    engine: Arc<Engine>,
    tool_router: ToolRouter<Server>,
}

#[tool_router]
impl Server {
    pub fn new(engine: Arc<Engine>) -> Server {
        Server {
            engine,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "query",
        description = "Run one SQL statement against the PostgreSQL database and get the rows back as JSON: \
                       columns (with PostgreSQL type names), rows as objects, rows_affected, returned_rows and \
                       truncated. Results are capped; when truncated is true, add LIMIT/OFFSET or WHERE to page. \
                       Only one statement per call. Pass values through params ($1, $2, ...), never by pasting \
                       them into the SQL. Call list_tables and describe_table first to learn the schema."
    )]
    async fn query(&self, Parameters(args): Parameters<QueryArgs>, ct: CancellationToken) -> CallToolResult {
        let input = QueryInput {
            sql: args.sql,
            params: args.params.unwrap_or_default(),
            limit: args.limit,
        };
        tool_result(self.engine.query(&input, ct).await)
    }

    #[tool(
        name = "list_tables",
        description = "List the tables, views, materialized views, foreign tables and partitioned tables the \
                       connected role can read: schema, name, type, owner, comment, estimated row count and size \
                       on disk (use them to decide which tables need a LIMIT). Narrow it with schema and a name \
                       pattern; when truncated is true, narrow it further. Start here to learn what exists."
    )]
    async fn list_tables(&self, Parameters(args): Parameters<ListTablesArgs>, ct: CancellationToken) -> CallToolResult {
        let filter = TableFilter {
            schema: args.schema,
            pattern: args.pattern,
            limit: 0,
        };
        tool_result(self.engine.list_tables(&filter, ct).await)
    }

    #[tool(
        name = "describe_table",
        description = "Describe one table or view: its columns (type, nullability, default, primary key, comment, \
                       identity or generated expression, enum values), indexes, constraints with their expressions, \
                       foreign keys, partitioning, the table's comment, and the SQL of a view. Use it before \
                       writing a query against a table you have not seen."
    )]
    async fn describe_table(
        &self,
        Parameters(args): Parameters<DescribeTableArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        tool_result(
            self.engine
                .describe_table(&args.table, args.schema.as_deref(), ct)
                .await,
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let config = self.engine.config();
        let mode = if config.read_only {
            "read-only: every query runs in a READ ONLY transaction"
        } else {
            "read-write"
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("pgmcp", env!("CARGO_PKG_VERSION")).with_title("PostgreSQL (pgmcp)"))
            .with_instructions(format!(
                "pgmcp runs SQL against a PostgreSQL database through a guard. This session is {mode}. \
                 Each query call runs one statement in its own transaction, returns at most {} rows \
                 (truncated: true says more exist: page with LIMIT/OFFSET), and is stopped on the server after {}s. \
                 Use list_tables and describe_table to learn the schema before querying.",
                config.query.max_rows,
                config.query.default_timeout.as_secs()
            ))
    }
}

/// Success becomes JSON (structured and as text); failure becomes a tool
/// result with `isError: true` whose text the model can act on.
fn tool_result<T: Serialize>(result: Result<T, Error>) -> CallToolResult {
    match result.map(|value| serde_json::to_value(value)) {
        Ok(Ok(value)) => CallToolResult::structured(value),
        Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(format!(
            "internal error: cannot encode the result: {e}"
        ))]),
        Err(e) => {
            tracing::info!(error = %e, "tool call failed");
            CallToolResult::error(vec![ContentBlock::text(e.to_string())])
        }
    }
}
