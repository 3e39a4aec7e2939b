//! The prompts a person picks from the client's menu, and the completion of
//! their `table` argument (and of the table template's `schema` and
//! `table`) from the tables the role can read. A prompt that names a table
//! carries that table's description, read through the same path as the
//! resource (`crate::door::mcp::resources`).

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Reference, ResourceContents, Role,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::backend::Dialect;
use crate::door::boundary;
use crate::door::mcp::resources;
use crate::error::Error;
use crate::pipeline::Engine;
use crate::pipeline::catalog::TableFilter;

/// Why a prompt or completion cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("no prompt named {name:?}: the prompts are explore_database, explain_table and query_table")]
    Unknown { name: String },
    #[error("the {prompt} prompt needs the argument {argument}")]
    Missing {
        prompt: &'static str,
        argument: &'static str,
    },
    /// The engine's answer, as its tools would give it.
    #[error(transparent)]
    Engine(#[from] Error),
}

/// The prompts, closed: one `match` in [`get`] answers each.
const EXPLORE: &str = "explore_database";
const EXPLAIN: &str = "explain_table";
const QUERY: &str = "query_table";

/// The prompts on offer.
pub fn list() -> ListPromptsResult {
    let table = || {
        PromptArgument::new("table")
            .with_title("Table")
            .with_description("The table or view: `orders`, or `schema.orders` outside the default schema.")
            .with_required(true)
    };
    ListPromptsResult::with_all_items(vec![
        Prompt::new(
            EXPLORE,
            Some("Find out what this database holds: its tables, how they relate, and what it can answer."),
            None,
        )
        .with_title("Explore this database"),
        Prompt::new(
            EXPLAIN,
            Some("Explain one table: what its rows are, its columns and keys, and how it joins to others."),
            Some(vec![table()]),
        )
        .with_title("Explain a table"),
        Prompt::new(
            QUERY,
            Some("Write and run a query on one table, for a question in plain words."),
            Some(vec![
                table(),
                PromptArgument::new("question")
                    .with_title("Question")
                    .with_description("What you want to know, e.g. \"orders per month in 2024\".")
                    .with_required(false),
            ]),
        )
        .with_title("Query a table"),
    ])
}

/// The prompt `name` with `arguments`.
pub async fn get(
    engine: &Engine,
    name: &str,
    arguments: Option<&serde_json::Map<String, Value>>,
    cancel: CancellationToken,
) -> Result<GetPromptResult, PromptError> {
    let argument = |key: &str| {
        arguments
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let engine_name = engine_name(engine.dialect());
    let messages = match name {
        EXPLORE => vec![PromptMessage::new_text(
            Role::User,
            format!(
                "Explore this {engine_name} database. Start with list_tables; describe the tables that look \
                 central with describe_table (or read their pgmcp://table/ resources). Then tell me, briefly: \
                 what the data is about, the main tables and how they relate (foreign keys), which tables are \
                 large, and three questions this database could answer, each with the SQL that answers it. \
                 Only read: do not change anything."
            ),
        )],
        EXPLAIN | QUERY => {
            let prompt = if name == EXPLAIN { EXPLAIN } else { QUERY };
            let table = argument("table").ok_or(PromptError::Missing {
                prompt,
                argument: "table",
            })?;
            let description = engine.describe_table(table, None, cancel).await?;
            let uri = resources::uri(&description.schema, &description.name);
            let text = serde_json::to_string(&description)
                .map_err(|e| Error::Internal(format!("cannot encode the description: {e}")))?;
            // The table as the person named it: the catalog's names are data.
            let shown = table;
            let ask = if prompt == EXPLAIN {
                format!(
                    "Explain the {engine_name} table {shown}, described below: what one row stands for, what \
                     each column holds (with its keys and constraints), and how it joins to other tables. If a \
                     few sample rows would help, fetch at most 5 with the query tool."
                )
            } else {
                let question = argument("question").unwrap_or("a useful overview of what it holds");
                format!(
                    "Using the {engine_name} table {shown}, described below, write one read-only SQL query \
                     that answers: {question}. Run it with the query tool (values as params, {}), then show \
                     the SQL and explain the answer.",
                    placeholders(engine.dialect())
                )
            };
            // With the boundary around data, the description is text inside
            // it, as a tool's answer would be; without, the table's resource.
            let described = match engine.config().data_boundary {
                true => PromptMessage::new_text(Role::User, boundary::wrap(&text, &boundary::marker())),
                false => PromptMessage::new(
                    Role::User,
                    rmcp::model::ContentBlock::resource(
                        ResourceContents::text(text, uri).with_mime_type(resources::MIME),
                    ),
                ),
            };
            let ask = match engine.config().data_boundary {
                true => format!("{ask}{}", boundary::SAID),
                false => ask,
            };
            vec![PromptMessage::new_text(Role::User, ask), described]
        }
        _ => return Err(PromptError::Unknown { name: name.to_owned() }),
    };
    let mut result = GetPromptResult::new(messages);
    result.description = list()
        .prompts
        .into_iter()
        .find(|p| p.name == name)
        .and_then(|p| p.description);
    Ok(result)
}

/// Completions for a prompt's `table`, or the table template's `schema` and
/// `table`: the readable tables (or schemas) starting with what was typed,
/// case-insensitively. Anything else completes to nothing.
pub async fn complete(
    engine: &Engine,
    request: &CompleteRequestParams,
    cancel: CancellationToken,
) -> Result<CompleteResult, PromptError> {
    let typed = request.argument.value.to_lowercase();
    let wanted = match (&request.r#ref, request.argument.name.as_str()) {
        (Reference::Prompt(prompt), "table") if prompt.name == EXPLAIN || prompt.name == QUERY => Wanted::Table,
        (Reference::Resource(template), "schema") if template.uri == resources::TEMPLATE => Wanted::Schema,
        (Reference::Resource(template), "table") if template.uri == resources::TEMPLATE => {
            Wanted::TemplateTable(request.context.as_ref().and_then(|c| c.get_argument("schema")).cloned())
        }
        _ => return Ok(CompleteResult::new(CompletionInfo::default())),
    };
    let filter = TableFilter {
        schema: match &wanted {
            Wanted::TemplateTable(schema) => schema.clone(),
            _ => None,
        },
        ..TableFilter::default()
    };
    let tables = resources::tables(engine, &filter, cancel).await?;
    let default_schema = default_schema(engine.dialect());
    let mut values: Vec<String> = tables
        .iter()
        .filter_map(|t| {
            let value = match wanted {
                Wanted::Table if t.schema == default_schema => crate::identifier::as_needed(&t.name),
                Wanted::Table => format!(
                    "{}.{}",
                    crate::identifier::as_needed(&t.schema),
                    crate::identifier::as_needed(&t.name)
                ),
                Wanted::Schema => t.schema.clone(),
                Wanted::TemplateTable(_) => t.name.clone(),
            };
            // What was typed may be the start of the value as the argument
            // takes it, or of the bare name (no quotes, no schema).
            let bare = if matches!(wanted, Wanted::Schema) {
                &t.schema
            } else {
                &t.name
            };
            let fits = [value.as_str(), value.trim_start_matches('"'), bare.as_str()]
                .iter()
                .any(|v| v.to_lowercase().starts_with(&typed));
            fits.then_some(value)
        })
        .collect();
    values.sort();
    values.dedup();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let has_more = total > values.len();
    let info = CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more).map_err(Error::Internal)?;
    Ok(CompleteResult::new(info))
}

/// What a completion request asks for.
enum Wanted {
    /// A prompt's `table`, as a person would type it.
    Table,
    /// The template's `schema`.
    Schema,
    /// The template's `table`, in the schema already chosen (if any).
    TemplateTable(Option<String>),
}

/// The schema a bare table name is looked up in.
fn default_schema(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "public",
        Dialect::Sqlite | Dialect::DuckDb => "main",
    }
}

fn engine_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "PostgreSQL",
        Dialect::Sqlite => "SQLite",
        Dialect::DuckDb => "DuckDB",
    }
}

fn placeholders(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "$1, $2, ...",
        Dialect::Sqlite => "? or ?1, ?2, ...",
        Dialect::DuckDb => "? or $1, $2, ...",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_only_when_folding_would_change_them() {
        for (name, shown) in [
            ("orders", "orders"),
            ("order_items2", "order_items2"),
            ("Orders", "\"Orders\""),
            ("order items", "\"order items\""),
            ("2024", "\"2024\""),
            ("a\"b", "\"a\"\"b\""),
        ] {
            assert_eq!(crate::identifier::as_needed(name), shown);
            assert_eq!(
                crate::pipeline::catalog::parse_table_name(shown, None).map(|(_, n)| n),
                Ok(name.to_owned())
            );
        }
    }

    #[test]
    fn every_listed_prompt_is_answered_by_name() {
        for prompt in list().prompts {
            assert!(
                [EXPLORE, EXPLAIN, QUERY].contains(&prompt.name.as_str()),
                "{}",
                prompt.name
            );
        }
    }
}
