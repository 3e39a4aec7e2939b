//! `list_tables` and `describe_table` answers pass the same output stage as
//! query results, on every engine, through the real binary: within the byte
//! cap with an honest `truncated`, sanitized, and given to `after_query`
//! hooks.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::stdio::{McpProcess, tool_json, tool_text};

/// The cap these tests configure, in bytes.
const CAP: usize = 10_000;

/// A config with a card-number and an e-mail rule, a `CAP`-byte cap, and
/// the given `after_query` hooks.
fn write_config(dir: &Path, after_query: Value) -> String {
    let path = dir.join("config.json");
    let text = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {
            "max_result_length": CAP,
            "default_timeout_seconds": 30,
            "list_tables_timeout_seconds": 10,
            "describe_table_timeout_seconds": 10,
        },
        "sanitization": [
            {"pattern": r"\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}\b", "replacement": "[card]"},
            {"pattern": r"[\w.+-]+@[\w-]+\.[\w.]+", "replacement": "[email]"},
        ],
        "hooks": {"default_timeout_seconds": 5, "after_query": after_query},
    });
    std::fs::write(&path, text.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A comment or default long enough that a few hundred of them flood any cap,
/// holding a card number and an address.
fn long_text(i: usize) -> String {
    format!(
        "col {i}: card 4111 1111 1111 1111, ask alice@example.com. {}",
        "z".repeat(600)
    )
}

/// The answer of a successful call, checked: within the cap as the model
/// reads it, nothing unmasked, cut with `truncated` and a hint naming what
/// was left out.
fn capped(result: &Value, what: &str, list: &str) -> Value {
    assert_ne!(result["isError"], true, "{what}: {result:#}");
    let text = tool_text(result);
    assert!(text.len() <= CAP, "{what}: a {}-byte answer", text.len());
    for secret in ["4111", "alice@", "example.com"] {
        assert!(!text.contains(secret), "{what}: {secret} shown");
        assert!(!result["structuredContent"].to_string().contains(secret), "{what}");
    }
    let out = tool_json(result);
    assert_eq!(out["truncated"], true, "{what}: {out:#}");
    let hint = out["hint"].as_str().unwrap_or_default();
    assert!(hint.contains(&format!(" {list} left out")), "{what}: {hint}");
    assert!(!out[list].as_array().unwrap().is_empty(), "{what}: some {list} remain");
    out
}

fn spawn(config: &str, database: &str) -> McpProcess {
    let mut mcp = McpProcess::spawn(&["serve", "--config", config, "--database", database], &[]);
    mcp.initialize();
    mcp
}

#[test]
fn postgres_catalog_answers_are_capped_and_sanitized() {
    let db = pg::server().database();
    let mut sql = String::from("CREATE TABLE wide (");
    sql += &(0..300).map(|i| format!("c{i} text")).collect::<Vec<_>>().join(", ");
    sql += ");";
    for i in 0..300 {
        sql += &format!("COMMENT ON COLUMN wide.c{i} IS '{}';", long_text(i));
        sql += &format!(
            "CREATE TABLE t{i} (x int); COMMENT ON TABLE t{i} IS '{}';",
            long_text(i)
        );
    }
    // A 50 MB comment: the server cuts it, pgmcp never holds it.
    sql += "DO $$ BEGIN EXECUTE pg_catalog.format('COMMENT ON TABLE wide IS %L', repeat('w', 50000000)); END $$;";
    db.psql(&sql);
    let dir = tempfile::tempdir().unwrap();
    let mut mcp = spawn(&write_config(dir.path(), json!([])), &db.url);
    let out = capped(
        &mcp.call_tool("describe_table", json!({"table": "wide"})),
        "describe_table",
        "columns",
    );
    let comment = out["comment"].as_str().unwrap();
    assert!(
        comment.starts_with("www") && comment.ends_with("bytes shown]"),
        "{comment}"
    );
    capped(
        &mcp.call_tool("list_tables", json!({"limit": 500})),
        "list_tables",
        "tables",
    );
    let peak = mcp.peak_memory_kb();
    assert!(peak < crate::support::PEAK_BOUND_KB, "peak {peak} kB");
}

#[test]
fn sqlite_catalog_answers_are_capped_and_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.db");
    let conn = rusqlite::Connection::open(&file).unwrap();
    let columns: Vec<String> = (0..300)
        .map(|i| format!("c{i} TEXT DEFAULT '{}'", long_text(i)))
        .collect();
    conn.execute_batch(&format!("CREATE TABLE wide ({});", columns.join(", ")))
        .unwrap();
    for i in 0..300 {
        conn.execute_batch(&format!("CREATE TABLE \"t{i} {}\" (x);", long_text(i)))
            .unwrap();
    }
    drop(conn);
    let mut mcp = spawn(
        &write_config(dir.path(), json!([])),
        &format!("sqlite://{}", file.display()),
    );
    capped(
        &mcp.call_tool("describe_table", json!({"table": "wide"})),
        "describe_table",
        "columns",
    );
    capped(
        &mcp.call_tool("list_tables", json!({"limit": 500})),
        "list_tables",
        "tables",
    );
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_catalog_answers_are_capped_and_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.duckdb");
    let conn = duckdb::Connection::open(&file).unwrap();
    let columns: Vec<String> = (0..300).map(|i| format!("c{i} VARCHAR")).collect();
    let mut sql = format!("CREATE TABLE wide ({});", columns.join(", "));
    for i in 0..300 {
        sql += &format!("COMMENT ON COLUMN wide.c{i} IS '{}';", long_text(i));
        sql += &format!(
            "CREATE TABLE t{i} (x INTEGER); COMMENT ON TABLE t{i} IS '{}';",
            long_text(i)
        );
    }
    conn.execute_batch(&sql).unwrap();
    drop(conn);
    let mut mcp = spawn(
        &write_config(dir.path(), json!([])),
        &format!("duckdb://{}", file.display()),
    );
    capped(
        &mcp.call_tool("describe_table", json!({"table": "wide"})),
        "describe_table",
        "columns",
    );
    capped(
        &mcp.call_tool("list_tables", json!({"limit": 500})),
        "list_tables",
        "tables",
    );
}

/// `after_query` hooks see catalog answers as they see query results: a
/// hook that rejects any answer naming a table `payroll` stops both tools,
/// and one that rewrites an answer is obeyed (then fenced). Hooks are told
/// whose answer they read (`PGMCP_TOOL`).
#[test]
fn after_query_hooks_see_catalog_answers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.db");
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch("CREATE TABLE payroll (salary INTEGER); CREATE TABLE orders (id INTEGER);")
        .unwrap();
    drop(conn);
    let reject = dir.path().join("reject.sh");
    std::fs::write(
        &reject,
        "#!/bin/sh\ncat > /dev/null\necho '{\"accept\": false, \"error_message\": \"payroll is not for agents\"}'\n",
    )
    .unwrap();
    let rewrite = dir.path().join("rewrite.sh");
    std::fs::write(
        &rewrite,
        "#!/bin/sh\ncat > /dev/null\n\
         [ \"$PGMCP_TOOL\" = list_tables ] || { echo '{\"accept\": false, \"error_message\": \"not a list\"}'; exit 0; }\n\
         echo '{\"accept\": true, \"modified_result\": \"{\\\"tables\\\": [{\\\"schema\\\": \\\"main\\\", \\\"name\\\": \\\"bob@example.com\\\", \\\"type\\\": \\\"table\\\", \\\"owner\\\": \\\"\\\"}]}\"}'\n",
    )
    .unwrap();
    for script in [&reject, &rewrite] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let hooks = json!([
        {"pattern": "payroll", "command": reject, "timeout_seconds": 5},
        {"pattern": "\"tables\"", "command": rewrite, "timeout_seconds": 5},
    ]);
    let mut mcp = spawn(
        &write_config(dir.path(), hooks),
        &format!("sqlite://{}", file.display()),
    );
    // The whole list names payroll: rejected.
    let result = mcp.call_tool("list_tables", json!({}));
    assert_eq!(result["isError"], true, "{result:#}");
    assert!(tool_text(&result).contains("payroll is not for agents"));
    let result = mcp.call_tool("describe_table", json!({"table": "payroll"}));
    assert_eq!(result["isError"], true, "{result:#}");
    assert!(tool_text(&result).contains("payroll is not for agents"));
    // A list without payroll is rewritten by the second hook, then sanitized.
    let result = mcp.call_tool("list_tables", json!({"pattern": "ord"}));
    assert_ne!(result["isError"], true, "{result:#}");
    assert_eq!(tool_json(&result)["tables"][0]["name"], "[email]");
    // The answer of a query is untouched by the catalog rules: the hooks
    // match on its text as before.
    let result = mcp.call_tool("query", json!({"sql": "SELECT id FROM orders"}));
    assert_ne!(result["isError"], true, "{result:#}");
}
