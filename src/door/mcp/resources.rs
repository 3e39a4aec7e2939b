//! Tables and views as MCP resources: one resource per table `list_tables`
//! shows, at `pgmcp://table/{schema}/{table}`, whose text is the JSON
//! `describe_table` answers. Both go through the engine's own catalog calls
//! (hooks, sanitization, caps), asked afresh each time, so a changed schema
//! shows on the next list and nothing here is cached.

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::pipeline::Engine;
use crate::pipeline::catalog::{TableEntry, TableFilter};

/// Where every table resource lives; also the one resource template.
pub const TEMPLATE: &str = "pgmcp://table/{schema}/{table}";

/// What comes before the schema in a table's URI.
const PREFIX: &str = "pgmcp://table/";

/// The type of a resource's text.
pub const MIME: &str = "application/json";

/// Resources per `resources/list` page.
pub const PAGE: usize = 50;

/// Why a resource call cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// The URI is not a table URI of this server.
    #[error("{uri} is not a table resource: expected {TEMPLATE}")]
    NotOurs { uri: String },
    /// A cursor this server did not hand out.
    #[error("invalid cursor {cursor:?}: pass the nextCursor of the previous page, or none")]
    Cursor { cursor: String },
    /// The engine's answer, as its tools would give it.
    #[error(transparent)]
    Engine(#[from] Error),
}

/// One page of the tables as resources, from `cursor` (none: the first).
/// Tables past the server's listing cap (`query.max_rows`) are not listed;
/// the template still reaches them.
pub async fn list(
    engine: &Engine,
    cursor: Option<&str>,
    cancel: CancellationToken,
) -> Result<ListResourcesResult, ResourceError> {
    let start = match cursor {
        None => 0,
        Some(text) => text.parse::<usize>().map_err(|_| ResourceError::Cursor {
            cursor: text.to_owned(),
        })?,
    };
    let tables = tables(engine, &TableFilter::default(), cancel).await?;
    if start > tables.len() {
        return Err(ResourceError::Cursor {
            cursor: start.to_string(),
        });
    }
    let end = (start + PAGE).min(tables.len());
    let mut result = ListResourcesResult::with_all_items(tables[start..end].iter().map(resource).collect());
    result.next_cursor = (end < tables.len()).then(|| end.to_string());
    Ok(result)
}

/// The tables `filter` selects, as `list_tables` gives them. A server with a
/// database directory and no default file has no tables of its own (each
/// call names its file): none, rather than an error a client would show
/// for a list it asked for unprompted.
pub async fn tables(
    engine: &Engine,
    filter: &TableFilter,
    cancel: CancellationToken,
) -> Result<Vec<TableEntry>, Error> {
    match engine.list_tables(filter, cancel).await {
        Ok(list) => Ok(list.tables),
        Err(e) if engine.config().sqlite_root.is_some() && e.is_the_callers() => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The table template, so a client can name any table, listed or not.
pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(TEMPLATE, "table")
            .with_title("A table or view")
            .with_description(
                "The description of one table or view (columns, keys, indexes, constraints, comments) as \
                 describe_table gives it. Percent-encode a schema or table name that holds / or other \
                 reserved characters.",
            )
            .with_mime_type(MIME),
    ])
}

/// The description of the table `uri` names, as `describe_table` gives it.
pub async fn read(engine: &Engine, uri: &str, cancel: CancellationToken) -> Result<ReadResourceResult, ResourceError> {
    let (schema, table) = parse(uri).ok_or_else(|| ResourceError::NotOurs { uri: uri.to_owned() })?;
    let description = engine.describe_table(&qualified(&schema, &table), None, cancel).await?;
    let text = serde_json::to_string(&description)
        .map_err(|e| Error::Internal(format!("cannot encode the description: {e}")))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(MIME),
    ]))
}

/// The URI of `schema`.`table`.
pub fn uri(schema: &str, table: &str) -> String {
    format!("{PREFIX}{}/{}", encode(schema), encode(table))
}

/// `schema.table` quoted, so the engine looks up exactly these names
/// (unquoted, it would fold them to lower case).
pub fn qualified(schema: &str, table: &str) -> String {
    format!(
        "{}.{}",
        crate::identifier::quoted(schema),
        crate::identifier::quoted(table)
    )
}

fn resource(table: &TableEntry) -> Resource {
    let kind = table.kind.replace('_', " ");
    let description = match &table.comment {
        Some(comment) => format!("{kind}: {comment}"),
        None => kind,
    };
    Resource::new(
        uri(&table.schema, &table.name),
        format!("{}.{}", table.schema, table.name),
    )
    .with_title(table.name.clone())
    .with_description(description)
    .with_mime_type(MIME)
}

/// (schema, table) of a table URI, decoded; `None` for any other URI.
pub fn parse(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (schema, table) = rest.split_once('/')?;
    let schema = decode(schema)?;
    let table = decode(table)?;
    (!schema.is_empty() && !table.is_empty()).then_some((schema, table))
}

/// Percent-encode all but RFC 3986's unreserved characters.
fn encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Undo percent-encoding; `None` for a malformed escape, a `/` left raw, or
/// bytes that are not UTF-8.
fn decode(part: &str) -> Option<String> {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'/' => return None,
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_any_name() {
        for (schema, table) in [
            ("public", "orders"),
            ("main", "Order Items"),
            ("we/ird", "a%b\"c"),
            ("schéma", "tåble.x"),
        ] {
            let uri = uri(schema, table);
            assert!(uri.starts_with("pgmcp://table/"), "{uri}");
            assert_eq!(uri.matches('/').count(), 4, "{uri}");
            assert_eq!(parse(&uri), Some((schema.to_owned(), table.to_owned())), "{uri}");
        }
        assert_eq!(uri("main", "Order Items"), "pgmcp://table/main/Order%20Items");
    }

    #[test]
    fn other_uris_are_not_tables() {
        for uri in [
            "file:///etc/passwd",
            "pgmcp://table/public",
            "pgmcp://table//orders",
            "pgmcp://table/public/",
            "pgmcp://table/a/b/c",
            "pgmcp://table/a/%zz",
            "pgmcp://table/a/%ff",
            "pgmcp://view/public/orders",
        ] {
            assert_eq!(parse(uri), None, "{uri}");
        }
    }

    #[test]
    fn names_are_quoted_for_the_engine() {
        assert_eq!(qualified("Sales", "Order \"x\""), r#""Sales"."Order ""x""""#);
        assert_eq!(
            crate::pipeline::catalog::parse_table_name(&qualified("Sales", "Order \"x\""), None),
            Ok((Some("Sales".to_owned()), "Order \"x\"".to_owned()))
        );
    }
}
