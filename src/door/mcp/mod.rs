//! The MCP face of the library: tool schemas, and translation between the wire
//! and [`Engine`] calls. No policy lives here.

mod confirm;
mod curated;
mod grid;
mod health;
mod instructions;
mod prompts;
pub(crate) mod resources;
mod schemas;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse,
    RequestMetaObject, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::backend::Dialect;
use crate::door::boundary;
use crate::error::Error;
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList};
use crate::pipeline::shape::QueryOutput;
use crate::pipeline::{Engine, QueryInput};
use crate::service::Service;

/// Arguments of the `query` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct QueryArgs {
    /// One SQL statement (the description the model reads is the engine's
    /// own: see `query_arguments`).
    pub sql: String,
    /// Values for the statement's placeholders, in order.
    #[serde(default)]
    pub params: Option<Vec<Value>>,
    /// Return at most this many rows (at most the server's row cap). Use it with
    /// ORDER BY and OFFSET to page through a large result.
    #[serde(default, deserialize_with = "whole_number")]
    pub limit: Option<usize>,
    /// SQLite servers with a database directory only: the file to query, as a
    /// path inside that directory (e.g. `sales/2024.db`). Servers with
    /// several databases: which one (see `curated::database_property`).
    #[serde(default)]
    pub database: Option<String>,
}

/// `limit` as a JSON number or as a string of digits (`"3"`): some clients
/// send every argument as a string, and a count written in digits means
/// only one thing. Anything else is refused naming the field and what it
/// takes, where serde alone would name neither.
fn whole_number<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    use serde::de::Error as _;
    // Through `Value`: numbers stay whole with `arbitrary_precision`, which
    // an untagged enum would turn into a map.
    let refuse = |got: &str| {
        D::Error::custom(format!(
            "limit: expected a whole number of rows, such as 50 (or \"50\"), got {got}"
        ))
    };
    match Option::<Value>::deserialize(deserializer)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| refuse(&n.to_string())),
        Some(Value::String(text)) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            text.parse().map(Some).map_err(|_| refuse("a number too large"))
        }
        // Not quoted back: it may be long, and it is the client's own.
        Some(Value::String(_)) => Err(refuse("a string that is not a whole number")),
        Some(Value::Bool(b)) => Err(refuse(&b.to_string())),
        Some(Value::Array(_)) => Err(refuse("an array")),
        Some(Value::Object(_)) => Err(refuse("an object")),
    }
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
    /// SQLite servers with a database directory only: the file, as a path
    /// inside that directory.
    #[serde(default)]
    pub database: Option<String>,
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
    /// SQLite servers with a database directory only: the file, as a path
    /// inside that directory.
    #[serde(default)]
    pub database: Option<String>,
}

/// The MCP server: the built-in tools the config serves and its curated
/// tools, over a [`Service`]'s databases.
#[derive(Clone)]
pub struct Server {
    service: Arc<Service>,
    /// The default database's engine: resources, prompts and the server's
    /// title speak of it.
    engine: Arc<Engine>,
    answers: Answers,
    tool_router: ToolRouter<Server>,
    /// The confirmations waiting for a client's retry (2026-07-28); shared
    /// by every session of an HTTP server, whose retries may come on
    /// another.
    confirmations: Arc<confirm::Pending>,
    /// This session's number among those sharing `confirmations`.
    asker: usize,
}

/// How a `query` answer's structured content reaches the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// Marked for the transport to splice the answer's text in
    /// (`crate::door::stdio::transport`, stdio): the rows are encoded once.
    Spliced,
    /// Built here from the text, for a transport that writes what rmcp
    /// hands it (HTTP).
    Built,
}

/// The `query` tool's description on an SQLite server.
const SQLITE_QUERY: &str = "Run one SQL statement against the SQLite database and get the rows back as JSON: columns \
     (with their declared types), rows as objects, rows_affected, returned_rows and truncated. Results are capped; \
     when truncated is true, add LIMIT/OFFSET or WHERE to page. Only one statement per call. Pass values through \
     params (? or ?1, ?2, ...), never by pasting them into the SQL. Call list_tables and describe_table first to \
     learn the schema.";

/// The `query` tool's description on a DuckDB server.
const DUCKDB_QUERY: &str = "Run one SQL statement against the DuckDB database (an analytical engine: aggregate \
     with GROUP BY rather than reading raw rows) and get the rows back as JSON: columns (with DuckDB type names), rows \
     as objects, returned_rows, total_rows when the whole result was read, and truncated. Results are capped; when \
     truncated is true, aggregate, filter with WHERE or page with ORDER BY plus LIMIT/OFFSET. Only one statement per \
     call. Files, COPY, EXPORT, ATTACH and extensions are blocked. Pass values through params (? or $1, $2, ...), \
     never by pasting them into the SQL. Call list_tables and describe_table first to learn the schema.";

/// The `query` tool's `sql` and `params` descriptions, in the words of the
/// engine the session runs on: its SQL and its placeholders.
fn query_arguments(dialect: Dialect) -> [(&'static str, &'static str); 2] {
    match dialect {
        Dialect::Postgres => [
            (
                "sql",
                "One PostgreSQL SQL statement. Use $1, $2, ... for values and pass them in `params` instead of \
                 writing them into the SQL.",
            ),
            (
                "params",
                "Values for $1, $2, ... in order: strings, numbers, booleans or null. PostgreSQL infers each \
                 one's type from where it is used; add a cast such as `$1::date` when it cannot.",
            ),
        ],
        Dialect::Sqlite => [
            (
                "sql",
                "One SQLite SQL statement. Use ? (or ?1, ?2, ...) for values and pass them in `params` instead \
                 of writing them into the SQL.",
            ),
            (
                "params",
                "Values for the ? placeholders (or ?1, ?2, ...) in order: strings, numbers, booleans or null. \
                 SQLite stores each as it is given (booleans as 1 and 0); compare dates as ISO text \
                 ('2024-01-31').",
            ),
        ],
        Dialect::DuckDb => [
            (
                "sql",
                "One DuckDB SQL statement. Use ? (or $1, $2, ...) for values and pass them in `params` instead \
                 of writing them into the SQL.",
            ),
            (
                "params",
                "Values for the ? placeholders (or $1, $2, ...) in order: strings, numbers, booleans or null. \
                 Add a cast such as `CAST(? AS DATE)` where a string stands for another type.",
            ),
        ],
    }
}

/// Whether a session's statements may write, as its tools' hints say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writing {
    /// Read-only mode.
    Never,
    /// Read-write, and a person accepts a model's writes first (`confirm`):
    /// `explain`, which asks no one, runs only what reads.
    Asked,
    /// Read-write, `confirm` off.
    Unasked,
}

impl Writing {
    fn of(config: &crate::config::Config) -> Writing {
        match (config.read_only, config.confirm.when) {
            (true, _) => Writing::Never,
            (false, crate::config::ConfirmWhen::Never) => Writing::Unasked,
            (false, _) => Writing::Asked,
        }
    }
}

/// The tools as a session on `dialect` lists them: `query` marked read-only
/// only in read-only mode (`writing`), its arguments described in the engine's words,
/// the `database` argument only when calls may choose a file (`files`:
/// `sqlite.root`), every schema in the portable spelling. Also what a
/// `pgmcp serve` that could not start lists (`crate::door::start_failure`),
/// so a client shows the same tools either way. With `bounded` (the
/// boundary around data), each description says what the tags mean.
fn tools(dialect: Dialect, writing: Writing, files: bool, bounded: bool) -> ToolRouter<Server> {
    let mut tool_router = Server::tool_router() + Server::health_router();
    // `query` only promises not to write when the session is read-only.
    for (name, title, reads_only) in [
        ("query", "Run SQL", writing == Writing::Never),
        ("list_tables", "List tables", true),
        ("describe_table", "Describe a table", true),
        // With `analyze` the statement runs, and is rolled back; but a
        // rollback keeps a sequence's step, a file: unless `confirm` makes
        // it run only what reads, it may write.
        ("explain", "Explain a query's plan", writing != Writing::Unasked),
        ("diagnose", "Check the database's health", true),
    ] {
        if let Some(route) = tool_router.map.get_mut(name) {
            let mut hints = ToolAnnotations::new();
            hints.title = Some(title.to_owned());
            hints.read_only_hint = Some(reads_only);
            hints.destructive_hint = Some(!reads_only);
            hints.open_world_hint = Some(false);
            route.attr = route.attr.clone().with_title(title).with_annotations(hints);
        }
    }
    let query_description = match dialect {
        Dialect::Postgres => None,
        Dialect::Sqlite => Some(SQLITE_QUERY),
        Dialect::DuckDb => Some(DUCKDB_QUERY),
    };
    if let Some(description) = query_description
        && let Some(route) = tool_router.map.get_mut("query")
    {
        route.attr.description = Some(description.into());
    }
    let arguments = query_arguments(dialect);
    for (name, route) in tool_router.map.iter_mut() {
        if bounded && let Some(description) = route.attr.description.as_mut() {
            *description = format!("{description}{}", boundary::SAID).into();
        }
        let mut schema = (*route.attr.input_schema).clone();
        if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
            // The database argument means nothing unless calls may choose a file.
            if !files {
                properties.remove("database");
            }
            if name == "query" {
                for (argument, description) in arguments {
                    if let Some(serde_json::Value::Object(property)) = properties.get_mut(argument) {
                        property.insert("description".to_owned(), description.into());
                    }
                }
            }
        }
        route.attr.input_schema = Arc::new(schemas::portable(&schema));
        route.attr.output_schema = route
            .attr
            .output_schema
            .as_ref()
            .map(|schema| Arc::new(schemas::portable(schema)));
    }
    tool_router
}

/// [`tools`], as `tools/list` lists them.
pub fn tool_list(dialect: Dialect, writing: Writing, files: bool, bounded: bool) -> Vec<rmcp::model::Tool> {
    tools(dialect, writing, files, bounded).list_all()
}

/// How often a long call reports progress, when the client asked for it.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

#[tool_router]
impl Server {
    pub fn new(service: Arc<Service>, answers: Answers) -> Server {
        let engine = service.default_engine().clone();
        let mut tool_router = tools(
            engine.dialect(),
            Writing::of(engine.config()),
            engine.config().sqlite_root.is_some() && !service.named(),
            engine.config().data_boundary,
        );
        curated::fit(&mut tool_router, &service);
        grid::fit(&mut tool_router, &service);
        Server {
            service,
            engine,
            answers,
            tool_router,
            confirmations: Arc::default(),
            asker: confirm::asker(),
        }
    }

    /// The engine a built-in call's `database` argument names: on a server
    /// with several databases, one of them by name (the default when not
    /// given); else the one engine, the argument being an SQLite file
    /// inside `sqlite.root` (passed on in the call's input).
    // rmcp turns the `Err` of a tool into an `isError` result.
    #[allow(clippy::result_large_err)]
    fn engine_for(&self, database: &mut Option<String>) -> Result<Arc<Engine>, CallToolResult> {
        if !self.service.named() {
            return Ok(self.engine.clone());
        }
        let name = database.take();
        self.service
            .engine(name.as_deref())
            .cloned()
            .map_err(|e| failed(&self.engine, e))
    }

    #[tool(
        name = "query",
        description = "Run one SQL statement against the PostgreSQL database and get the rows back as JSON: \
                       columns (with PostgreSQL type names), rows as objects, rows_affected, returned_rows and \
                       truncated. Results are capped; when truncated is true, add LIMIT/OFFSET or WHERE to page. \
                       Only one statement per call. Pass values through params ($1, $2, ...), never by pasting \
                       them into the SQL. Call list_tables and describe_table first to learn the schema.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<QueryOutput>()
    )]
    async fn query(
        &self,
        Parameters(args): Parameters<QueryArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, CallToolResult> {
        let mut database = args.database;
        let engine = self.engine_for(&mut database)?;
        let input = QueryInput {
            sql: args.sql,
            params: args.params.unwrap_or_default(),
            limit: args.limit,
            database,
        };
        let retry = confirm::Retry { state, responses };
        let run = |consent| {
            // Boxed: the pipeline's future is several kilobytes, which rmcp
            // would otherwise copy into each of its own wrappers per call.
            let work = Box::pin(engine.query_answer_from(&input, consent, context.ct.clone()));
            with_progress(&context.meta, &context.peer, work)
        };
        Ok(self.consented(&engine, &context, retry, run).await)
    }

    #[tool(
        name = "list_tables",
        description = "List the tables, views, materialized views, foreign tables and partitioned tables the \
                       connected role can read (PostgreSQL: SELECT on the table or on some of its columns; an \
                       SQLite or DuckDB file: every table): schema, name, type, owner, comment, estimated row \
                       count and size on disk (use them to decide which tables need a LIMIT). Narrow it with \
                       schema and a name pattern; when truncated is true, narrow it further. Start here to learn \
                       what exists.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<TableList>()
    )]
    async fn list_tables(
        &self,
        Parameters(args): Parameters<ListTablesArgs>,
        ct: CancellationToken,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, CallToolResult> {
        let mut database = args.database;
        let engine = self.engine_for(&mut database)?;
        let filter = TableFilter {
            schema: args.schema,
            pattern: args.pattern,
            limit: 0,
            database,
        };
        tool_result(
            &engine,
            with_progress(&meta, &peer, engine.list_tables(&filter, ct)).await,
        )
    }

    #[tool(
        name = "describe_table",
        description = "Describe one table or view: its columns (type, nullability, default, primary key, comment, \
                       identity or generated expression, enum values), indexes, constraints with their expressions, \
                       foreign keys, partitioning, the table's comment, and the SQL of a view. Use it before \
                       writing a query against a table you have not seen. It describes exactly the tables \
                       list_tables shows, with the columns the role can read; any other name is answered \
                       \"does not exist, or the role cannot read it\".",
        output_schema = rmcp::handler::server::tool::schema_for_output::<TableDescription>()
    )]
    async fn describe_table(
        &self,
        Parameters(args): Parameters<DescribeTableArgs>,
        ct: CancellationToken,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, CallToolResult> {
        let mut database = args.database;
        let engine = self.engine_for(&mut database)?;
        let work = engine.describe_table_in(database.as_deref(), &args.table, args.schema.as_deref(), ct);
        tool_result(&engine, with_progress(&meta, &peer, work).await)
    }
}

impl Server {
    /// A `query` or curated tool's answer as its result: the encoded
    /// answer is the text, and the structured content the same JSON,
    /// spliced in by the transport or built from it.
    #[allow(clippy::result_large_err)]
    fn answered(
        &self,
        engine: &Engine,
        answer: Result<crate::pipeline::answer::QueryAnswer, Error>,
    ) -> Result<CallToolResult, CallToolResult> {
        let answer = answer.map_err(|e| failed(engine, e))?;
        let reads = answer.reads();
        let mut result = CallToolResult::success(vec![ContentBlock::text(bounded(engine, answer.into_json()))]);
        // The grid pages only what the guard judged to only read.
        if reads {
            let mut meta = rmcp::model::MetaObject::new();
            meta.insert(grid::READS.to_owned(), Value::Bool(true));
            result.meta = Some(meta);
        }
        result.structured_content = match self.answers {
            Answers::Spliced => Some(crate::door::stdio::transport::SPLICE),
            Answers::Built => crate::door::stdio::transport::built(&result),
        };
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        // Declared: exactly what is answered below. Any other method (logging,
        // subscriptions, tasks, ...) answers -32601 from rmcp's defaults.
        let mut capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        capabilities.extensions = grid::extensions(&self.service);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("pgmcp", env!("CARGO_PKG_VERSION")).with_title(
                match self.engine.dialect() {
                    Dialect::Postgres => "PostgreSQL (pgmcp)",
                    Dialect::Sqlite => "SQLite (pgmcp)",
                    Dialect::DuckDb => "DuckDB (pgmcp)",
                },
            ))
            .with_instructions(curated::instructions(
                &self.service,
                instructions::instructions(
                    self.engine.config(),
                    self.engine.dialect(),
                    self.service.enabled(),
                    self.service.named(),
                ),
            ))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let mut list = match self.catalog_served() {
            true => resources::list(&self.engine, cursor, context.ct)
                .await
                .map_err(|e| self.resource_error(e))?,
            false => ListResourcesResult::with_all_items(Vec::new()),
        };
        // After the tables, on the last page: the first pages stay whole.
        if list.next_cursor.is_none() && grid::offered(&self.service) {
            list.resources.push(grid::resource());
        }
        Ok(list)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        match self.catalog_served() {
            true => Ok(resources::templates()),
            false => Ok(ListResourceTemplatesResult::with_all_items(Vec::new())),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if grid::is_ours(&request.uri) && grid::offered(&self.service) {
            return Ok(grid::read().into());
        }
        if !self.catalog_served() {
            return Err(McpError::resource_not_found(
                format!("{} is not a resource of this server", request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        }
        resources::read(&self.engine, &request.uri, context.ct)
            .await
            .map(ReadResourceResponse::from)
            .map_err(|e| {
                let mut error = self.resource_error(e);
                // The spec asks a not-found error to say which URI it was.
                if error.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND {
                    error.data = Some(serde_json::json!({"uri": request.uri}));
                }
                error
            })
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        match self.prompts_served() {
            true => Ok(prompts::list()),
            false => Ok(ListPromptsResult::with_all_items(Vec::new())),
        }
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if !self.prompts_served() {
            return Err(McpError::invalid_params(
                format!("no prompt named {:?}: this server offers none", request.name),
                None,
            ));
        }
        prompts::get(&self.engine, &request.name, request.arguments.as_ref(), context.ct)
            .await
            .map(GetPromptResponse::from)
            .map_err(|e| self.prompt_error(e))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        if !self.catalog_served() {
            return Ok(CompleteResult::default());
        }
        prompts::complete(&self.engine, &request, context.ct)
            .await
            .map_err(|e| self.prompt_error(e))
    }
}

impl Server {
    /// The tables as resources (and completions of their names): the same
    /// catalog answers as `list_tables` and `describe_table`, so only while
    /// both are served; a deployment that switches them off shows no schema.
    fn catalog_served(&self) -> bool {
        let enabled = self.service.enabled();
        enabled.list_tables && enabled.describe_table
    }

    /// The prompts: they send the model to `list_tables`, `describe_table`
    /// and `query`, so only while all three are served.
    fn prompts_served(&self) -> bool {
        self.catalog_served() && self.service.enabled().query
    }

    /// A resource call's failure as a JSON-RPC error: an unknown URI or a
    /// table the role cannot read is "resource not found"; a bad cursor is
    /// invalid params; anything else, the engine's error. Engine errors
    /// pass the output fence first, as tool errors do.
    fn resource_error(&self, error: resources::ResourceError) -> McpError {
        use resources::ResourceError;
        match error {
            ResourceError::NotOurs { .. } => McpError::resource_not_found(error.to_string(), None),
            ResourceError::Cursor { .. } => McpError::invalid_params(error.to_string(), None),
            ResourceError::Engine(e) => self.engine_error(e, McpError::resource_not_found),
        }
    }

    /// A prompt call's failure as a JSON-RPC error: unknown prompts and
    /// missing or unknown tables are invalid params.
    fn prompt_error(&self, error: prompts::PromptError) -> McpError {
        use prompts::PromptError;
        match error {
            PromptError::Unknown { .. } | PromptError::Missing { .. } => {
                McpError::invalid_params(error.to_string(), None)
            }
            PromptError::Engine(e) => self.engine_error(e, McpError::invalid_params),
        }
    }

    /// `error`, fenced, under `unusable` when the caller's input was the
    /// problem (a table that does not exist, or the role cannot read), else
    /// as an internal error.
    fn engine_error(&self, error: Error, unusable: fn(String, Option<Value>) -> McpError) -> McpError {
        tracing::info!(error = %error.label(), "resource or prompt call failed");
        let input = error.is_the_callers();
        let text = error_text(&self.engine, error);
        if input {
            unusable(text, None)
        } else {
            McpError::internal_error(text, None)
        }
    }
}

/// Run `work`; when the client sent a progress token, report the time spent
/// every few seconds until it finishes.
async fn with_progress<T>(meta: &RequestMetaObject, peer: &Peer<RoleServer>, work: impl Future<Output = T>) -> T {
    let Some(token) = meta.get_progress_token() else {
        return work.await;
    };
    tokio::pin!(work);
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            out = &mut work => return out,
            _ = ticks.tick() => {
                let seconds = started.elapsed().as_secs();
                let note = ProgressNotificationParam::new(token.clone(), seconds as f64)
                    .with_message(format!("still running after {seconds}s"));
                let _ = peer.notify_progress(note).await;
            }
        }
    }
}

/// Success becomes structured JSON (plus the same JSON as text for older
/// clients); failure becomes a tool result with `isError: true` whose text the
/// model can act on.
// rmcp turns the `Err` of a tool into an `isError` result; a CallToolResult is
// what it expects there, large or not.
#[allow(clippy::result_large_err)]
fn tool_result<T: serde::Serialize>(
    engine: &Engine,
    result: Result<T, Error>,
) -> Result<CallToolResult, CallToolResult> {
    let answer = result.map_err(|e| failed(engine, e))?;
    let value = serde_json::to_value(&answer)
        .map_err(|e| failed(engine, Error::Internal(format!("cannot encode the answer: {e}"))))?;
    let mut result = CallToolResult::success(vec![ContentBlock::text(bounded(engine, value.to_string()))]);
    result.structured_content = Some(value);
    Ok(result)
}

/// An answer's JSON text as the model reads it: inside the boundary around
/// data (`door::boundary`), unless `data_boundary` is off.
fn bounded(engine: &Engine, json: String) -> String {
    match engine.config().data_boundary {
        true => boundary::wrap(&json, &boundary::marker()),
        false => json,
    }
}

/// The one place tool errors become text: every error the model reads
/// passes the output fence of `engine` here, whatever its kind. The
/// database's own errors can quote values (`invalid input syntax for type
/// integer: "..."`): their text goes inside the boundary around data.
fn failed(engine: &Engine, error: Error) -> CallToolResult {
    // The log says what kind of failure it was, never the message:
    // messages can quote values that sanitization masks only in answers.
    tracing::info!(error = %error.label(), "tool call failed");
    CallToolResult::error(vec![ContentBlock::text(error_text(engine, error))])
}

/// An error as the model reads it: fenced (sanitized, capped); when it can
/// quote what the database holds, inside the boundary around data, with
/// the operator's error prompts after it, outside: they are guidance.
fn error_text(engine: &Engine, error: Error) -> String {
    if !(engine.config().data_boundary && error.quotes_data()) {
        return engine.fenced(error).to_string();
    }
    let (source, prompts) = match error {
        Error::Prompted { source, prompts } => (*source, Some(prompts)),
        other => (other, None),
    };
    // Capped with the boundary and the prompts: the whole text within
    // query.max_result_length, the error first.
    let max = engine.config().query.max_result_length;
    let fenced = engine.fenced_within(source, max.saturating_sub(boundary::OVERHEAD));
    let mut text = boundary::wrap_text(&fenced.to_string());
    if let Some(prompts) = prompts {
        let prompts = engine.fenced_text(&prompts, max.saturating_sub(text.len() + 2));
        if !prompts.is_empty() {
            text.push_str("\n\n");
            text.push_str(&prompts);
        }
    }
    text
}
