//! The tool list a [`Service`] asks for: the built-in tools `tools_enabled`
//! keeps, their `database` argument listing the databases when there are
//! several, and a tool per curated tool, with its own input schema, the
//! `query` tool's output schema and annotations that say whether it can
//! write. Curated calls run through the service (`Service::call`), so
//! through the same pipeline as `query`.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::model::{CallToolResponse, JsonObject, Tool, ToolAnnotations};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::{Server, schemas, with_progress};
use crate::backend::Dialect;
use crate::service::Service;
use crate::toolbox::schema::input_schema;

/// Make `router` (the built-in tools) what `service` serves.
pub(super) fn fit(router: &mut ToolRouter<Server>, service: &Service) {
    let output_schema = router.map.get("query").and_then(|r| r.attr.output_schema.clone());
    for name in crate::toolbox::BUILT_IN_TOOLS {
        if !service.enabled().serves(name) {
            router.remove_route(name);
        }
    }
    // `explain` and `diagnose` read PostgreSQL's plans and statistics:
    // listed where a database has them.
    if !service.databases().iter().any(|d| d.dialect() == Dialect::Postgres) {
        router.remove_route("explain");
        router.remove_route("diagnose");
    }
    if service.named() {
        let property = database_property(service);
        let all_read_only = service.databases().iter().all(|d| d.engine.config().read_only);
        let mixed = service
            .databases()
            .iter()
            .any(|d| d.dialect() != service.databases()[0].dialect());
        for (name, route) in router.map.iter_mut() {
            let mut schema = (*route.attr.input_schema).clone();
            if let Some(Value::Object(properties)) = schema.get_mut("properties") {
                properties.insert("database".into(), property.clone());
                if name == "query" && mixed {
                    properties.insert("sql".into(), json!({"type": "string", "description": MIXED_SQL}));
                    properties.insert(
                        "params".into(),
                        json!({"type": ["array", "null"], "items": {}, "description": MIXED_PARAMS}),
                    );
                }
            }
            route.attr.input_schema = Arc::new(schemas::portable(&schema));
            if name == "query" {
                if mixed {
                    let said = match service.default_engine().config().data_boundary {
                        true => crate::door::boundary::SAID,
                        false => "",
                    };
                    route.attr.description = Some(format!("{MIXED_QUERY}{said}").into());
                }
                if let Some(hints) = route.attr.annotations.as_mut() {
                    hints.read_only_hint = Some(all_read_only);
                    hints.destructive_hint = Some(!all_read_only);
                }
            }
        }
    }
    // `query` sends the model to the catalog tools only while they are served.
    let enabled = service.enabled();
    if !(enabled.list_tables && enabled.describe_table)
        && let Some(route) = router.map.get_mut("query")
        && let Some(description) = route.attr.description.as_mut()
    {
        *description = description
            .replace(" Call list_tables and describe_table first to learn the schema.", "")
            .into();
    }
    let bounded = service.default_engine().config().data_boundary;
    for curated in service.tools() {
        let tool = &curated.tool;
        let description = match bounded {
            true => format!("{}{}", tool.description, crate::door::boundary::SAID),
            false => tool.description.clone(),
        };
        let mut hints = ToolAnnotations::new();
        hints.read_only_hint = Some(curated.read_only);
        hints.destructive_hint = Some(!curated.read_only);
        hints.open_world_hint = Some(false);
        let mut attr = Tool::new(tool.name.clone(), description, Arc::new(input_schema(tool))).with_annotations(hints);
        attr.output_schema = output_schema.clone();
        router.add_route(ToolRoute::new_dyn(attr, |context| {
            Box::pin(async move {
                let server = context.service;
                let retry = super::confirm::Retry {
                    state: context.request_state,
                    responses: context.input_responses,
                };
                call(server, &context.name, context.arguments, context.request_context, retry).await
            })
        }));
    }
}

/// Run the curated tool `name`, with progress as `query` reports it.
async fn call(
    server: &Server,
    name: &str,
    arguments: Option<JsonObject>,
    context: RequestContext<RoleServer>,
    retry: super::confirm::Retry,
) -> Result<CallToolResponse, McpError> {
    let Some((_, engine)) = server.service.tool(name) else {
        return Err(McpError::invalid_params(format!("no tool is named {name:?}"), None));
    };
    let run = |consent| {
        let work = server
            .service
            .call(name, arguments.as_ref(), consent, context.ct.clone());
        let answered = with_progress(&context.meta, &context.peer, Box::pin(work));
        async move {
            match answered.await {
                Some((_, answer)) => answer,
                None => Err(crate::error::Error::Internal(format!(
                    "the curated tool {name:?} went away"
                ))),
            }
        }
    };
    Ok(server.consented(engine, &context, retry, run).await)
}

/// The `database` argument of a server with several databases: their
/// names (an `enum`), each described, the first the default.
fn database_property(service: &Service) -> Value {
    let databases = service.databases();
    let described: Vec<String> = databases.iter().map(described).collect();
    json!({
        "type": "string",
        "enum": databases.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
        "default": databases[0].name,
        "description": format!(
            "Which database to use (default {}): {}.",
            databases[0].name,
            described.join("; ")
        ),
    })
}

/// `orders (PostgreSQL, may write): The shop's orders`.
fn described(database: &crate::service::Database) -> String {
    let engine = match database.dialect() {
        Dialect::Postgres => "PostgreSQL",
        Dialect::Sqlite => "SQLite",
        Dialect::DuckDb => "DuckDB",
    };
    let mode = match database.engine.config().read_only {
        true => "read-only",
        false => "may write",
    };
    match &database.description {
        // Joined with "; " and ended with ".": its own full stop would double it.
        Some(description) => format!(
            "{} ({engine}, {mode}): {}",
            database.name,
            description.trim_end().trim_end_matches('.')
        ),
        None => format!("{} ({engine}, {mode})", database.name),
    }
}

/// What the model is told at `initialize`, after `base` (the default
/// database's instructions): the databases, when there are several, and
/// the curated tools.
pub(super) fn instructions(service: &Service, base: String) -> String {
    let mut text = base;
    if service.named() {
        let described: Vec<String> = service.databases().iter().map(described).collect();
        let enabled = service.enabled();
        let choosing = match enabled.query || enabled.list_tables || enabled.describe_table {
            true => format!(
                "; the built-in tools take `database` to choose one (default {})",
                service.databases()[0].name
            ),
            false => String::new(),
        };
        text.push_str(&format!(
            " This server has several databases{choosing}, and each runs under its own rules and caps: {}. The \
             limits above are the default database's.",
            described.join("; ")
        ));
    }
    if !service.tools().is_empty() {
        let names: Vec<&str> = service.tools().iter().map(|t| t.tool.name.as_str()).collect();
        text.push_str(&format!(
            " Prefer the curated tools when one fits: {}; each runs one reviewed statement with the arguments you give.",
            names.join(", ")
        ));
    }
    text
}

/// The `query` tool's description on a server whose databases speak more
/// than one dialect.
const MIXED_QUERY: &str = "Run one SQL statement against one of this server's databases (the `database` argument; \
     each speaks its own engine's SQL, named in that argument's description) and get the rows back as JSON: columns, \
     rows as objects, returned_rows and truncated. Results are capped; when truncated is true, add LIMIT/OFFSET or \
     WHERE to page. Only one statement per call. Pass values through params, never by pasting them into the SQL. \
     Call list_tables and describe_table first to learn the schema.";

const MIXED_SQL: &str = "One SQL statement in the chosen database's dialect. Use placeholders for values ($1, $2, ... on \
     PostgreSQL; ? on SQLite and DuckDB) and pass them in `params`.";

const MIXED_PARAMS: &str = "Values for the placeholders, in order: strings, numbers, booleans or null.";
