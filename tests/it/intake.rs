//! Malformed lines on stdin get an error answer, through the real binary: a
//! request nested 1,000+ levels deep is answered with its own id, lines that
//! are not JSON, batches and a non-object `_meta` get an error rather than
//! silence, and the session goes on.

use std::time::Duration;

use serde_json::json;

use crate::support::pg;
use crate::support::stdio::{McpProcess, tool_json};

fn start() -> McpProcess {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = crate::serve::write_config(dir.path(), "");
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    mcp.initialize();
    // The config file may go: it was read at start.
    drop(dir);
    mcp
}

/// `tools/call` of `query` with an extra argument nested `levels` deep.
fn nested(id: u64, levels: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"query","arguments":{{"sql":"SELECT 1","x":{}1{}}}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

/// The session still answers a query.
fn still_serves(mcp: &mut McpProcess) {
    let result = mcp.call_tool("query", json!({"sql": "SELECT 41 + 1 AS n"}));
    assert_eq!(tool_json(&result)["rows"], json!([{"n": 42}]));
}

#[test]
fn deeply_nested_requests_are_answered_with_their_id() {
    let mut mcp = start();
    for (id, levels) in [(7001, 1_000), (7002, 100_000), (7003, 65)] {
        mcp.send_raw(&nested(id, levels));
        let reply = mcp.recv_response(&json!(id), Duration::from_secs(10));
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("levels deep; at most 64"), "{message}");
        still_serves(&mut mcp);
    }
    // Within the limit, the extra argument is simply ignored.
    mcp.send_raw(&nested(7004, 20));
    let reply = mcp.recv_response(&json!(7004), Duration::from_secs(10));
    assert!(reply.get("result").is_some(), "{reply}");

    // A string id, and an id after the deep part.
    mcp.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"query","arguments":{{"sql":"SELECT 1","x":{}{}}}}},"id":"deep-1"}}"#,
        "{\"a\":".repeat(2_000) + "1",
        "}".repeat(2_000)
    ));
    let reply = mcp.recv_response(&json!("deep-1"), Duration::from_secs(10));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    still_serves(&mut mcp);
}

#[test]
fn malformed_lines_get_an_error_not_silence() {
    let mut mcp = start();
    // Not JSON, a batch, a bare value: no id to answer with (rmcp leaves it
    // out).
    for line in [
        r#"{"jsonrpc":"2.0","id":5,"method":"ping""#,
        "not json at all",
        r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#,
        "42",
    ] {
        mcp.send_raw(line);
        let reply = mcp.recv_error_without_id(Duration::from_secs(10));
        assert!(reply["error"]["code"].is_i64(), "{line}: {reply}");
        still_serves(&mut mcp);
    }
    // A _meta that is not an object: answered with the request's id.
    mcp.send_raw(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":"x"}}"#);
    let reply = mcp.recv_response(&json!(8), Duration::from_secs(10));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["message"], "params._meta must be an object");
    still_serves(&mut mcp);
}
