//! Tables and views as MCP resources, through the official MCP Python SDK
//! over stdio against the real binary, on PostgreSQL and SQLite: listed a
//! page at a time, read as `describe_table` answers them (through the same
//! fences), reached by the template, and seen afresh after a schema change.
//! Also: what the server declares is what it answers.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::files::sqlite::{fixture, url};
use crate::support::masking_config::write_config;
use crate::support::pg;
use crate::support::python_sdk::session;
use crate::support::stdio::McpProcess;

/// Resources per `resources/list` page (README, "Resources and prompts").
const PAGE: usize = 50;

/// The URIs of a `list_resources` step.
fn uris(step: &Value) -> BTreeSet<String> {
    step["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{step}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        // The grid is listed beside the tables (`grid::`).
        .filter(|uri| uri != "ui://pgmcp/grid")
        .collect()
}

/// The JSON text of a `read` step's one content.
fn read_text(step: &Value) -> Value {
    let contents = step.as_array().unwrap_or_else(|| panic!("{step}"));
    assert_eq!(contents.len(), 1, "{step}");
    assert_eq!(contents[0]["mimeType"], "application/json");
    serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap()
}

/// The whole catalog of an engine, as resources: `tables` (with their
/// schema) listed over more than one page, `mixed` read by its URI the same
/// as `describe_table` answers it, `created` seen after creating it in the
/// session and `dropped` gone after dropping it.
struct Case<'a> {
    schema: &'a str,
    mixed: &'a str,
    describe: Value,
    create: &'a str,
    drop: &'a str,
    created: &'a str,
    dropped: &'a str,
}

fn check(case: Case, expected: BTreeSet<String>, config: &str, database: Option<&str>, envs: &[(&str, &str)]) {
    let mixed_uri = format!("pgmcp://table/{}/{}", case.schema, case.mixed.replace(' ', "%20"));
    let plan = json!([
        {"op": "list_resources"},
        {"op": "first_page"},
        {"op": "templates"},
        {"op": "read", "uri": mixed_uri},
        {"op": "tool", "name": "describe_table", "arguments": case.describe},
        {"op": "tool", "name": "query", "arguments": {"sql": case.create}},
        {"op": "tool", "name": "query", "arguments": {"sql": case.drop}},
        {"op": "list_resources"},
        {"op": "read", "uri": format!("pgmcp://table/{}/{}", case.schema, case.created)},
        {"op": "read", "uri": format!("pgmcp://table/{}/{}", case.schema, case.dropped)},
        {"op": "read", "uri": "file:///etc/passwd"},
        {"op": "first_page", "cursor": "not-a-cursor"},
    ]);
    let (steps, capabilities) = session(plan, config, database, envs);
    for declared in ["tools", "resources", "prompts", "completions"] {
        assert!(capabilities[declared].is_object(), "{declared}: {capabilities}");
    }

    // Every table once, over as many pages as it takes.
    assert_eq!(uris(&steps[0]), expected);
    assert_eq!(
        steps[0]["pages"],
        expected.len().div_ceil(PAGE),
        "{}",
        steps[0]["pages"]
    );
    assert_eq!(steps[1]["count"], PAGE);
    assert!(steps[1]["nextCursor"].is_string(), "{}", steps[1]);
    assert_eq!(
        steps[2],
        json!([{"uriTemplate": "pgmcp://table/{schema}/{table}", "name": "table", "mimeType": "application/json"}])
    );

    // The resource is describe_table's answer, fences included: the e-mail
    // in the comment is masked in both.
    let read = read_text(&steps[3]);
    assert_eq!(steps[4]["isError"], false, "{}", steps[4]);
    assert_eq!(read, steps[4]["structured"], "{}", steps[3]);
    assert_eq!(read["name"], case.mixed);
    let text = steps[3].to_string();
    assert!(text.contains("[email]") && !text.contains("ada@example.com"), "{text}");

    // A changed schema shows on the next list, and reads follow it.
    assert_eq!(steps[5]["isError"], false, "{}", steps[5]);
    assert_eq!(steps[6]["isError"], false, "{}", steps[6]);
    let after = uris(&steps[7]);
    let created = format!("pgmcp://table/{}/{}", case.schema, case.created);
    let dropped = format!("pgmcp://table/{}/{}", case.schema, case.dropped);
    assert!(after.contains(&created) && !after.contains(&dropped), "{after:?}");
    assert_eq!(after.len(), expected.len());
    assert_eq!(read_text(&steps[8])["name"], case.created);
    assert_eq!(steps[9]["error"]["code"], -32002, "{}", steps[9]);
    assert_eq!(steps[10]["error"]["code"], -32002, "{}", steps[10]);
    assert_eq!(steps[11]["error"]["code"], -32602, "{}", steps[11]);
}

#[test]
fn sqlite_tables_are_resources() {
    let mut sql = String::from(
        "CREATE TABLE \"Order Items\" (id INTEGER PRIMARY KEY, note TEXT DEFAULT 'ask ada@example.com');
         CREATE VIEW recent AS SELECT * FROM \"Order Items\";",
    );
    for i in 0..60 {
        sql += &format!("CREATE TABLE t{i:02} (x INTEGER);");
    }
    let (_db_dir, path) = fixture(&sql);
    let mut expected: BTreeSet<String> = (0..60).map(|i| format!("pgmcp://table/main/t{i:02}")).collect();
    expected.insert("pgmcp://table/main/Order%20Items".to_owned());
    expected.insert("pgmcp://table/main/recent".to_owned());
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    check(
        Case {
            schema: "main",
            mixed: "Order Items",
            describe: json!({"table": "\"Order Items\""}),
            create: "CREATE TABLE added (x INTEGER)",
            drop: "DROP TABLE t07",
            created: "added",
            dropped: "t07",
        },
        expected,
        &config,
        Some(&url(&path)),
        &[],
    );
}

#[test]
fn postgres_tables_are_resources() {
    let db = pg::server().database();
    let mut sql = String::from(
        "CREATE SCHEMA sales;
         CREATE TABLE sales.\"Order Items\" (id int PRIMARY KEY);
         COMMENT ON TABLE sales.\"Order Items\" IS 'ask ada@example.com';
         CREATE VIEW sales.recent AS SELECT * FROM sales.\"Order Items\";",
    );
    for i in 0..60 {
        sql += &format!("CREATE TABLE sales.t{i:02} (x int);");
    }
    db.psql(&sql);
    let mut expected: BTreeSet<String> = (0..60).map(|i| format!("pgmcp://table/sales/t{i:02}")).collect();
    expected.insert("pgmcp://table/sales/Order%20Items".to_owned());
    expected.insert("pgmcp://table/sales/recent".to_owned());
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    check(
        Case {
            schema: "sales",
            mixed: "Order Items",
            describe: json!({"table": "sales.\"Order Items\""}),
            create: "CREATE TABLE sales.added (x int)",
            drop: "DROP TABLE sales.t07",
            created: "added",
            dropped: "t07",
        },
        expected,
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
}

/// pgmcp declares tools, resources, prompts and completions, and answers
/// each of their methods; the methods of what it does not declare
/// (logging, resource subscriptions, tasks) answer -32601.
#[test]
fn what_is_declared_is_what_is_answered() {
    let (_db_dir, path) = fixture("CREATE TABLE pets (id INTEGER PRIMARY KEY);");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url(&path)], &[]);
    let init = mcp.initialize();
    let declared: BTreeSet<&str> = init["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        declared,
        BTreeSet::from(["completions", "extensions", "prompts", "resources", "tools"]),
        "{init}"
    );
    // The one extension: MCP Apps, for the grid (`grid::`).
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
    );
    assert!(init["capabilities"]["resources"].get("subscribe").is_none(), "{init}");

    let answered = [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "pgmcp://table/main/pets"})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "explore_database"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "query_table"}, "argument": {"name": "table", "value": "p"}}),
        ),
    ];
    for (method, params) in answered {
        let reply = mcp.request(method, params);
        assert!(reply.get("result").is_some(), "{method}: {reply}");
    }
    let completed = mcp.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "query_table"}, "argument": {"name": "table", "value": "p"}}),
    );
    assert_eq!(completed["result"]["completion"]["values"], json!(["pets"]));

    let undeclared = [
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "pgmcp://table/main/pets"})),
        ("resources/unsubscribe", json!({"uri": "pgmcp://table/main/pets"})),
        ("tasks/get", json!({"taskId": "x"})),
        ("tasks/list", json!({})),
    ];
    for (method, params) in undeclared {
        let reply = mcp.request(method, params);
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
    mcp.kill();
}

/// A server with a database directory and no default file has no tables of
/// its own: its resource list and completions are empty, not errors a
/// client would show for a list it asked for unprompted.
#[test]
fn a_directory_without_a_default_file_lists_no_resources() {
    let (db_dir, _path) = fixture("CREATE TABLE pets (id INTEGER PRIMARY KEY);");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let mut text: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    text["sqlite"] = json!({"root": db_dir.path()});
    std::fs::write(&config, text.to_string()).unwrap();
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[]);
    mcp.initialize();
    let listed = mcp.request("resources/list", json!({}));
    // No table, only the grid (`grid::`), which needs no file.
    let listed_uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(listed_uris, ["ui://pgmcp/grid"], "{listed}");
    let completed = mcp.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "explain_table"}, "argument": {"name": "table", "value": ""}}),
    );
    assert_eq!(completed["result"]["completion"]["values"], json!([]), "{completed}");
    // The tools still reach the file by name.
    let result = mcp.call_tool("list_tables", json!({"database": "data.db"}));
    assert_eq!(result["isError"], false, "{result}");
    mcp.kill();
}
