//! A served `pgmcp` for the tests of its doors: a config with long
//! timeouts (logging into the case's directory), and a warmed session over
//! stdio on the harness's PostgreSQL or on an SQLite file.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::stdio::{McpProcess, tool_json};

pub fn write_config(dir: &Path, extra: Value) -> String {
    let path = dir.join("config.json");
    let mut text = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {
            "default_timeout_seconds": 60,
            "list_tables_timeout_seconds": 60,
            "describe_table_timeout_seconds": 60,
        },
    });
    if let (Some(base), Some(more)) = (text.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            match (base.get_mut(k), v) {
                (Some(Value::Object(b)), Value::Object(m)) => b.extend(m.clone()),
                _ => {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
    }
    std::fs::write(&path, text.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// [`write_config`] for a test of what the guard and the pipeline do with
/// writes from a client that asks no one: `confirm` off. A person's word
/// before a write has its own tests (`confirm.rs`, `confirm_attacks.rs`).
pub fn write_unconfirmed_config(dir: &Path, extra: Value) -> String {
    let mut extra = extra;
    if let Some(map) = extra.as_object_mut() {
        map.entry("confirm").or_insert(json!("never"));
    }
    write_config(dir, extra)
}

pub fn pg_session(db: &pg::TestDb, config: &str) -> McpProcess {
    let mut mcp = McpProcess::spawn(&["serve", "--config", config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    mcp.initialize();
    let warm = mcp.call_tool("query", json!({ "sql": "SELECT 1 AS one" }));
    assert_eq!(tool_json(&warm)["rows"], json!([{"one": 1}]));
    mcp
}

pub fn sqlite_session(file: &Path, config: &str) -> McpProcess {
    let url = format!("sqlite://{}", file.display());
    let mut mcp = McpProcess::spawn(&["serve", "--config", config, "--database", &url], &[]);
    mcp.initialize();
    let warm = mcp.call_tool("query", json!({ "sql": "SELECT 1 AS one" }));
    assert_eq!(tool_json(&warm)["rows"], json!([{"one": 1}]));
    mcp
}

/// `pgmcp serve` on the PostgreSQL at `url`, with `extra` layered over the
/// test config, initialized; the directory holds the config and the log.
pub fn serve_at(url: &str, extra: Value) -> (tempfile::TempDir, McpProcess) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), extra);
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", url)]);
    mcp.initialize();
    (dir, mcp)
}

/// The names `tools/list` gives on a server of one SQLite file.
pub fn tools_on_sqlite() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.db");
    crate::support::files::sqlite::make_db(&file, "CREATE TABLE t (x INTEGER);");
    let config = write_config(dir.path(), json!({}));
    let url = crate::support::files::sqlite::url(&file);
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    crate::support::stdio::tool_names(&list["result"])
        .into_iter()
        .map(str::to_owned)
        .collect()
}
