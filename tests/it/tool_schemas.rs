//! The tool list as strict clients read it: schemas in the portable
//! spelling (judged by the newest MCP Inspector's `--strict`), and the
//! `query` arguments described in the words of the engine in use.

use serde_json::Value;

use crate::support::files::sqlite::{fixture, url};
use crate::support::pg;
use crate::support::stdio::McpProcess;
use crate::support::tools;
use crate::support::writable_config::write_config;

/// The newest MCP Inspector on npm, pinned (`PGMCP_TEST_INSPECTOR2` names
/// another copy). Its 2.x line needs Node 22 and lints every tool schema.
pub const INSPECTOR2: &str = "@modelcontextprotocol/inspector@2.12.0";

/// `mcp-inspector --cli` of [`INSPECTOR2`], on Node 22, in a HOME of its own.
pub fn inspector2(home: &std::path::Path) -> std::process::Command {
    let mut cmd = tools::on_node22("PGMCP_TEST_INSPECTOR2", "inspector2", INSPECTOR2, "mcp-inspector");
    cmd.env("HOME", home).arg("--cli");
    cmd
}

const TABLES: &str = "CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, born DATE);";

/// `tools/list --strict` from the real binary over stdio: exit 0, and not
/// one finding (error or warning) on stderr.
#[test]
fn the_newest_inspector_finds_nothing_in_strict_mode() {
    let (_db_dir, path) = fixture(TABLES);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let out = inspector2(dir.path())
        // The Inspector takes `--config` for itself: pgmcp's comes from the
        // environment.
        .args(["-e", &format!("PGMCP_CONFIG_PATH={config}")])
        .arg(env!("CARGO_BIN_EXE_pgmcp"))
        .args(["serve", "--database", &url(&path)])
        .args(["--method", "tools/list", "--strict"])
        .output()
        .expect("run the Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", out.status);
    assert_eq!(stderr.trim(), "", "the Inspector reported findings");
    let listed: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.len(), 3, "{stdout}");
    // The portable spelling still says what the Rust types say.
    let query = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query")
        .unwrap();
    let limit = &query["inputSchema"]["properties"]["limit"];
    assert_eq!(limit["minimum"], 0, "{limit}");
    assert!(limit.get("format").is_none(), "{limit}");
    assert!(!stdout.contains("\"format\": \"uint"), "{stdout}");
}

/// The `query` tool as the client lists it.
fn query_tool(mcp: &mut McpProcess) -> Value {
    mcp.initialize();
    let tools = mcp.request("tools/list", serde_json::json!({}));
    tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query")
        .cloned()
        .unwrap()
}

/// `sql` and `params` speak of the engine the session runs on: its name and
/// its placeholders, never another engine's.
#[test]
fn query_arguments_speak_of_the_engine_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");

    let (_db_dir, path) = fixture(TABLES);
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url(&path)], &[]);
    let query = query_tool(&mut mcp);
    let properties = &query["inputSchema"]["properties"];
    let sql = properties["sql"]["description"].as_str().unwrap();
    let params = properties["params"]["description"].as_str().unwrap();
    assert!(sql.contains("SQLite") && sql.contains('?'), "{sql}");
    assert!(params.contains('?'), "{params}");
    let everything = query.to_string();
    assert!(!everything.contains("PostgreSQL"), "{everything}");
    assert!(!everything.contains("$1"), "{everything}");
    mcp.kill();

    let db = pg::server().database();
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let query = query_tool(&mut mcp);
    let properties = &query["inputSchema"]["properties"];
    let sql = properties["sql"]["description"].as_str().unwrap();
    let params = properties["params"]["description"].as_str().unwrap();
    assert!(sql.contains("PostgreSQL") && sql.contains("$1"), "{sql}");
    assert!(params.contains("$1::date"), "{params}");
    assert!(!query.to_string().contains("SQLite"), "{query}");
    mcp.kill();
}

/// Resources, their template and prompts as the newest Inspector lists them
/// (its `--strict` lints only tools): exit 0, nothing on stderr, and the
/// fixture's table among them.
#[test]
fn the_newest_inspector_lists_resources_and_prompts() {
    let (_db_dir, path) = fixture(TABLES);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let list = |method: &str| -> Value {
        let out = inspector2(dir.path())
            .args(["-e", &format!("PGMCP_CONFIG_PATH={config}")])
            .arg(env!("CARGO_BIN_EXE_pgmcp"))
            .args(["serve", "--database", &url(&path)])
            .args(["--method", method])
            .output()
            .expect("run the Inspector");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{method}: {}: {stderr} {stdout}", out.status);
        assert_eq!(stderr.trim(), "", "{method}: the Inspector reported findings");
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{method}: {e}: {stdout}"))
    };
    let resources = list("resources/list");
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    // The tables, then the grid (`grid::`).
    assert_eq!(uris, ["pgmcp://table/main/pets", "ui://pgmcp/grid"], "{resources}");
    let templates = list("resources/templates/list");
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"], "pgmcp://table/{schema}/{table}",
        "{templates}"
    );
    let prompts = list("prompts/list");
    let names: Vec<&str> = prompts["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"explore_database"), "{prompts}");
}
