//! `pgmcp serve`: the real binary, spoken to over stdio as a desktop client would.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::pg::{self, TestDb};
use crate::support::stdio::{McpProcess, tool_json, tool_names, tool_text};
use crate::support::writable_config::write_config;

fn start(db: &TestDb, dir: &Path) -> McpProcess {
    let config = write_config(dir, "");
    McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)])
}

#[test]
fn a_full_session_transcript() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL); INSERT INTO users VALUES (1, 'ada'), (2, 'alan')",
    );
    let dir = tempfile::tempdir().unwrap();
    let mut mcp = start(&db, dir.path());

    let init = mcp.initialize();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "pgmcp");
    assert!(init["capabilities"]["tools"].is_object());
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("This session may write"), "{instructions}");
    assert!(
        instructions.contains("at most 500 rows") && instructions.contains("truncated: true"),
        "{instructions}"
    );

    let tools = mcp.request("tools/list", json!({}));
    assert_eq!(
        tool_names(&tools["result"]),
        ["describe_table", "diagnose", "explain", "list_tables", "query"]
    );
    let query_tool = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query")
        .unwrap();
    assert_eq!(query_tool["inputSchema"]["required"], json!(["sql"]));
    assert!(query_tool["inputSchema"]["properties"]["params"].is_object());
    assert!(
        query_tool["description"]
            .as_str()
            .unwrap()
            .contains("one SQL statement")
    );
    // Writes are allowed in this session, so `query` does not claim to be read-only.
    assert_eq!(query_tool["annotations"]["readOnlyHint"], false);
    assert_eq!(query_tool["annotations"]["destructiveHint"], true);
    assert_eq!(query_tool["title"], "Run SQL");
    let schemas: std::collections::HashMap<String, Value> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t["outputSchema"].clone()))
        .collect();
    for (name, schema) in &schemas {
        assert_eq!(schema["type"], "object", "{name} declares an object output schema");
    }

    let result = mcp.call_tool(
        "query",
        json!({"sql": "SELECT id, name FROM users WHERE id = $1", "params": [2]}),
    );
    assert_eq!(result["isError"], false);
    check_schema(&schemas["query"], &result["structuredContent"]);
    let out = tool_json(&result);
    assert_eq!(out["rows"], json!([{"id": 2, "name": "alan"}]));
    assert_eq!(
        out["columns"],
        json!([{"name": "id", "type": "integer"}, {"name": "name", "type": "text"}])
    );
    assert_eq!(result["structuredContent"], out);

    let result = mcp.call_tool("list_tables", json!({}));
    assert_eq!(tool_json(&result)["tables"][0]["name"], "users");
    check_schema(&schemas["list_tables"], &result["structuredContent"]);

    let result = mcp.call_tool("describe_table", json!({"table": "users"}));
    check_schema(&schemas["describe_table"], &result["structuredContent"]);
    let desc = tool_json(&result);
    assert_eq!(
        desc["columns"][0],
        json!({"name": "id", "type": "integer", "nullable": false, "is_primary_key": true})
    );

    // A failing query is a tool result the model can read, not a protocol error.
    let result = mcp.call_tool("query", json!({"sql": "SELECT * FROM userz"}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        tool_text(&result),
        "relation \"userz\" does not exist (SQLSTATE 42P01)\nDid you mean: public.users?\nat character 15 of the query"
    );

    let result = mcp.call_tool("query", json!({"sql": "SELECT 1; SELECT 2"}));
    assert_eq!(result["isError"], true);
    assert!(tool_text(&result).starts_with("multi-statement queries are not allowed"));

    // Arguments of the wrong type are a tool error the model can correct
    // (MCP 2025-11-25 moved input validation errors out of JSON-RPC errors).
    let result = mcp.call_tool("query", json!({"sql": 42}));
    assert_eq!(result["isError"], true);
    assert!(
        tool_text(&result).contains("invalid type: number, expected a string"),
        "{result}"
    );
    // An unknown tool is a malformed request: a JSON-RPC error.
    let response = mcp.request("tools/call", json!({"name": "drop_database", "arguments": {}}));
    assert!(response["error"].is_object(), "{response}");

    // Closing stdin ends the session promptly with status 0.
    mcp.close_stdin();
    let status = mcp.wait_exit(Duration::from_secs(5));
    assert!(status.success(), "exit status {status}");

    // Logs went to the configured file, not stdout.
    let log = std::fs::read_to_string(dir.path().join("pgmcp.log")).unwrap();
    assert!(log.contains("serving MCP on stdio"), "{log}");
    assert!(!log.contains(pg::server().admin_password()), "password in the log");
}

#[test]
fn negotiates_the_newest_version_and_accepts_older_clients() {
    let db = pg::server().database();
    for (asked, expected) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut mcp = start(&db, dir.path());
        let init = mcp.initialize_with_version(asked);
        assert_eq!(init["protocolVersion"], expected, "asked for {asked}");
        let result = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
        assert_eq!(tool_json(&result)["rows"], json!([{"one": 1}]));
        mcp.close_stdin();
        assert!(mcp.wait_exit(Duration::from_secs(5)).success());
    }
}

/// MCP's stateless protocol (2026-07-28): no `initialize`; every request
/// names its version and the client's capabilities in `_meta`. `server/discover`
/// tells the versions pgmcp speaks, and each tool answers as in a session,
/// a `query` result's structured content the same JSON as its text.
#[test]
fn the_stateless_protocol_needs_no_session() {
    let db = pg::server().database();
    db.psql("CREATE TABLE pets (id int PRIMARY KEY, name text); INSERT INTO pets VALUES (1, 'rex')");
    let dir = tempfile::tempdir().unwrap();
    let mut mcp = start(&db, dir.path());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "pgmcp-it", "version": "0.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });

    let discover = mcp.request("server/discover", json!({"_meta": meta}));
    let versions = &discover["result"]["supportedVersions"];
    assert!(
        versions.as_array().unwrap().contains(&json!("2026-07-28")),
        "{discover}"
    );
    assert!(
        versions.as_array().unwrap().contains(&json!("2025-11-25")),
        "{discover}"
    );
    assert!(discover["result"]["capabilities"]["tools"].is_object(), "{discover}");
    assert!(
        discover["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("read-only")
            || discover["result"]["instructions"]
                .as_str()
                .unwrap()
                .contains("may write"),
        "{discover}"
    );

    let tools = mcp.request("tools/list", json!({"_meta": meta}));
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 5, "{tools}");

    let call = |mcp: &mut McpProcess, name: &str, arguments: Value| {
        let response = mcp.request(
            "tools/call",
            json!({"_meta": meta, "name": name, "arguments": arguments}),
        );
        response["result"].clone()
    };
    let result = call(&mut mcp, "query", json!({"sql": "SELECT id, name FROM pets"}));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["resultType"], "complete", "{result}");
    let out = tool_json(&result);
    assert_eq!(out["rows"], json!([{"id": 1, "name": "rex"}]));
    assert_eq!(result["structuredContent"], out);
    let result = call(&mut mcp, "list_tables", json!({}));
    assert_eq!(tool_json(&result)["tables"][0]["name"], "pets");
    let result = call(&mut mcp, "query", json!({"sql": "SELECT * FROM petz"}));
    assert_eq!(result["isError"], true);
    assert!(tool_text(&result).contains("Did you mean: public.pets?"), "{result}");

    // Without the version in `_meta`, a request is refused with its id: the
    // client learns what to send.
    let refused = mcp.request("tools/call", json!({"name": "query", "arguments": {"sql": "SELECT 1"}}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion"),
        "{refused}"
    );

    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(5)).success());
}

/// The server starts and answers MCP even when the database is down; each call
/// then reports the connection error as a tool error.
#[test]
fn starts_without_a_database() {
    let port = crate::support::net::free_port();
    let url = format!("postgres://nobody:secret-pw@127.0.0.1:{port}/nodb");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &url)]);
    mcp.initialize();
    let result = mcp.call_tool("query", json!({"sql": "SELECT 1"}));
    assert_eq!(result["isError"], true);
    let text = tool_text(&result);
    assert!(
        text.starts_with(&format!(
            "cannot reach the database: could not connect to 127.0.0.1:{port}"
        )),
        "{text}"
    );
    assert!(!text.contains("secret-pw"));
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(5)).success());
}

#[test]
fn stdin_closed_before_initialize_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", &config],
        &[("PGMCP_PG_CONNSTRING", "postgres://u@127.0.0.1:1/x")],
    );
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(5)).success());
}

#[test]
fn many_calls_in_flight_each_get_their_answer() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let mut mcp = start(&db, dir.path());
    mcp.initialize();
    let ids: Vec<Value> = (0..40).map(|i| json!(1000 + i)).collect();
    for (i, id) in ids.iter().enumerate() {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "query", "arguments": {"sql": "SELECT $1::int AS n, pg_sleep(0.01)", "params": [i]}}}));
    }
    for (i, id) in ids.iter().enumerate() {
        let response = mcp.recv_response(id, Duration::from_secs(30));
        let out = tool_json(&response["result"]);
        assert_eq!(
            out["rows"][0]["n"],
            json!(i),
            "response {id} carried another call's rows"
        );
    }
}

/// Check `value` against a JSON Schema as schemars writes them: `type` (one or
/// a list), `properties`, `required`, `items`, `$ref` into `$defs`, `anyOf`,
/// `oneOf`, `enum`, and integer formats. Panics with the path of the first
/// mismatch.
fn check_schema(schema: &Value, value: &Value) {
    fn check(root: &Value, schema: &Value, value: &Value, path: &str) -> Result<(), String> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap();
            return check(root, &root["$defs"][name], value, path);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = schema.get(key).and_then(Value::as_array) {
                // A match still leaves the schema's other keywords to check.
                if !options.iter().any(|o| check(root, o, value, path).is_ok()) {
                    return Err(format!("{path}: {value} matches none of {key}"));
                }
            }
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            return Err(format!("{path}: {value} is not one of {allowed:?}"));
        }
        if let Some(types) = schema.get("type") {
            let types: Vec<&str> = match types {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            let fits = |t: &str| match t {
                "null" => value.is_null(),
                "boolean" => value.is_boolean(),
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => false,
            };
            if !types.iter().any(|t| fits(t)) {
                return Err(format!("{path}: {value} is not of type {types:?}"));
            }
        }
        if let (Some(object), Some(properties)) =
            (value.as_object(), schema.get("properties").and_then(Value::as_object))
        {
            for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                let key = required.as_str().unwrap();
                if !object.contains_key(key) {
                    return Err(format!("{path}: missing required {key}"));
                }
            }
            for (key, field) in object {
                if let Some(field_schema) = properties.get(key) {
                    check(root, field_schema, field, &format!("{path}.{key}"))?;
                } else if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                    return Err(format!("{path}: unexpected property {key}"));
                }
            }
        }
        if let (Some(items), Some(item_schema)) = (value.as_array(), schema.get("items")) {
            for (i, item) in items.iter().enumerate() {
                check(root, item_schema, item, &format!("{path}[{i}]"))?;
            }
        }
        Ok(())
    }
    if let Err(e) = check(schema, schema, value, "$") {
        panic!("structuredContent does not match the declared outputSchema: {e}\nschema: {schema}");
    }
}

/// In read-only mode `query` says it does not write; the catalog tools always do.
#[test]
fn annotations_follow_read_only_mode() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        r#"{"query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10}}"#,
    )
    .unwrap();
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", config.to_str().unwrap()],
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let init = mcp.initialize();
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("This session is read-only")
    );
    let tools = mcp.request("tools/list", json!({}));
    for tool in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        assert_eq!(tool["annotations"]["destructiveHint"], false, "{tool}");
        assert!(tool["title"].is_string(), "{tool}");
    }
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(5)).success());
}

/// A long call reports progress when the client asks for it.
#[test]
fn long_calls_report_progress() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let mut mcp = start(&db, dir.path());
    mcp.initialize();
    let response = mcp.request(
        "tools/call",
        json!({"name": "query", "arguments": {"sql": "SELECT pg_sleep(4.5) IS NULL AS slept"}, "_meta": {"progressToken": "p1"}}),
    );
    assert_eq!(tool_json(&response["result"])["rows"], json!([{"slept": false}]));
    let progress: Vec<Value> = mcp
        .take_notifications()
        .into_iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 2, "expected a progress note every 2 s: {progress:?}");
    assert!(progress.iter().all(|n| n["params"]["progressToken"] == "p1"));
    let values: Vec<f64> = progress
        .iter()
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must increase: {values:?}"
    );
}

/// With the default config, the text an agent reads for a large result stays
/// within the 50,000 characters a client such as Claude Code shows a model
/// (it saves a longer tool result to a file): the whole answer counted, cut
/// at whole rows, saying so; the structured content is the same answer.
#[test]
fn default_answers_fit_what_a_client_shows() {
    let db = pg::server().database();
    let mut mcp = McpProcess::spawn(&["serve"], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    mcp.initialize();
    let wide = "SELECT g, g*2, g::text, md5(g::text), now(), g % 7 = 0, g::numeric/3, repeat('x', 20) \
                FROM generate_series(1,1000) g";
    let result = mcp.call_tool("query", json!({ "sql": wide }));
    let text = tool_text(&result);
    assert!(
        text.chars().count() <= 50_000,
        "a {}-character answer",
        text.chars().count()
    );
    let out = tool_json(&result);
    assert_eq!(out["truncated"], true, "{out}");
    let returned = out["returned_rows"].as_u64().unwrap();
    assert!(returned > 100 && returned < 500, "{returned} rows");
    assert!(out["hint"].as_str().unwrap().contains("result limit"), "{out}");
    assert_eq!(result["structuredContent"], out);
}

/// Run by hand in a terminal, `serve` says on stderr, in one line, what it
/// is and how to add it to a client, and nothing on stdout; started through
/// pipes, as clients start it, it says nothing at all. The terminal is a
/// pty from util-linux's `script`, whose stdin at end of file (ours is
/// /dev/null) reaches pgmcp as a Ctrl-D, which ends it.
#[test]
fn at_a_terminal_it_says_what_it_waits_for() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("x.db"), b"").unwrap();
    let err = home.path().join("stderr.txt");
    let bin = env!("CARGO_BIN_EXE_pgmcp");
    let line = format!("'{bin}' serve --database sqlite:x.db 2>'{}'", err.display());
    let mut script = std::process::Command::new("script");
    script
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .current_dir(home.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = script
        .spawn()
        .expect("util-linux's `script` (for a pty) is not installed");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("pgmcp serve at a terminal did not end at Ctrl-D");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The pty is pgmcp's stdout: nothing there.
    assert!(
        out.stdout.is_empty(),
        "stdout: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let said = std::fs::read_to_string(&err).unwrap();
    assert_eq!(said.lines().count(), 1, "{said}");
    for expected in [
        "pgmcp serve is an MCP server",
        "JSON-RPC on stdin and stdout",
        "waiting for an MCP client",
        "pgmcp install claude-desktop",
        "pgmcp install cursor",
    ] {
        assert!(said.contains(expected), "no {expected:?} in: {said}");
    }

    // Through pipes, as a client starts it: not a word.
    let out = crate::support::pgmcp(home.path())
        .args(["serve", "--database", "sqlite:x.db"])
        .write_stdin("")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}
