//! Malformed lines on stdin get an error answer, through the real binary: a
//! request nested 1,000+ levels deep is answered with its own id; lines that
//! are not JSON, batches, bare values and requests that are not well formed
//! get a JSON-RPC error (with their id, or null when none can be read) rather
//! than silence; notifications get none; and the session goes on.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::pg;
use crate::support::stdio::{McpProcess, tool_json};

fn start() -> McpProcess {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::writable_config::write_config(dir.path(), "");
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

/// Waits for the answers `expected` ((id, code) pairs, id null for none),
/// each from its own line on stdout.
fn answered(mcp: &mut McpProcess, line: &str, expected: &[(serde_json::Value, i64)]) {
    for (id, code) in expected {
        let reply = if id.is_null() {
            mcp.recv_error_without_id(Duration::from_secs(10))
        } else {
            mcp.recv_response(id, Duration::from_secs(10))
        };
        assert_eq!(
            reply["error"]["code"],
            *code,
            "{}: {reply}",
            &line[..line.len().min(100)]
        );
        assert_eq!(reply["id"], *id, "the id is there, null when unreadable: {reply}");
        assert!(reply["error"]["message"].is_string(), "{reply}");
    }
}

#[test]
fn malformed_lines_get_an_error_not_silence() {
    let mut mcp = start();
    let null = serde_json::Value::Null;
    let cases: Vec<(String, Vec<(serde_json::Value, i64)>)> = vec![
        ("{not json".into(), vec![(null.clone(), -32700)]),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping""#.into(),
            vec![(null.clone(), -32700)],
        ),
        ("not json at all".into(), vec![(null.clone(), -32700)]),
        (
            format!("{{{}", "garbage ".repeat(200_000)),
            vec![(null.clone(), -32700)],
        ),
        ("[]".into(), vec![(null.clone(), -32600)]),
        (
            r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#.into(),
            vec![(json!(6), -32600)],
        ),
        (
            r#"[{"jsonrpc":"2.0","id":61,"method":"ping"},{"jsonrpc":"2.0","id":"62","method":"tools/list"}]"#.into(),
            vec![(json!(61), -32600), (json!("62"), -32600)],
        ),
        ("[1,2]".into(), vec![(null.clone(), -32600)]),
        ("42".into(), vec![(null.clone(), -32600)]),
        (r#""x""#.into(), vec![(null.clone(), -32600)]),
        ("null".into(), vec![(null.clone(), -32600)]),
        (r#"{"jsonrpc":"2.0","id":7}"#.into(), vec![(json!(7), -32600)]),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":5}"#.into(),
            vec![(json!(8), -32600)],
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#.into(),
            vec![(null.clone(), -32600)],
        ),
        (
            r#"{"jsonrpc":"2.0","id":[9],"method":"ping"}"#.into(),
            vec![(null.clone(), -32600)],
        ),
        (
            r#"{"jsonrpc":"2.0","id":false,"method":"ping"}"#.into(),
            vec![(null.clone(), -32600)],
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"ping","params":[1]}"#.into(),
            vec![(json!(10), -32600)],
        ),
        (
            r#"{"jsonrpc":"2.0","id":11,"id":12,"method":"ping"}"#.into(),
            vec![(json!(12), -32600)],
        ),
        // Notifications and responses, malformed or not: no answer.
        (r#"{"jsonrpc":"2.0","method":5}"#.into(), vec![]),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#.into(),
            vec![],
        ),
        (r#"{"jsonrpc":"2.0","result":{}}"#.into(), vec![]),
        ("   \t ".into(), vec![]),
    ];
    for (line, expected) in &cases {
        mcp.send_raw(line);
        answered(&mut mcp, line, expected);
        still_serves(&mut mcp);
    }
    // Not UTF-8.
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\",\"x\":\"\xff\xfe\"}");
    answered(&mut mcp, "not UTF-8", &[(null.clone(), -32700)]);
    still_serves(&mut mcp);
    // A byte order mark (or two) in front of a good request changes nothing.
    for (id, line) in [
        (14, "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\"}"),
        (
            15,
            "\u{feff}\u{feff} {\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}\r",
        ),
    ] {
        mcp.send_raw(line);
        let reply = mcp.recv_response(&json!(id), Duration::from_secs(10));
        assert!(reply.get("result").is_some(), "{reply}");
    }
    // A _meta that is not an object: answered with the request's id.
    mcp.send_raw(r#"{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"_meta":"x"}}"#);
    let reply = mcp.recv_response(&json!(16), Duration::from_secs(10));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["message"], "params._meta must be an object");
    still_serves(&mut mcp);
    // Nothing else was said: one answer per malformed request, none to
    // notifications, responses or blank lines.
    let left = mcp.take_pending();
    assert!(
        left.iter().all(|m| m.get("error").is_none()),
        "unexpected answers: {left:?}"
    );
}

#[test]
fn a_line_past_the_length_limit_is_answered_and_skipped() {
    let mut mcp = start();
    // 33 MiB of SQL: over the 32 MiB line limit. The id comes first, so the
    // answer carries it.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"query","arguments":{{"sql":"SELECT '{}'"}}}}}}"#,
        "x".repeat(33 << 20)
    );
    mcp.send_raw(&line);
    drop(line);
    let reply = mcp.recv_response(&json!("big"), Duration::from_secs(60));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("longer than"),
        "{reply}"
    );
    still_serves(&mut mcp);
    // Garbage past the limit, with no id to read.
    mcp.send_raw(&"z".repeat(33 << 20));
    let reply = mcp.recv_error_without_id(Duration::from_secs(60));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    still_serves(&mut mcp);
}

/// A flood of requests with 64 KiB ids for a method that does not exist:
/// each is answered with its whole id and -32601, the process stays within
/// the README's 100 MB bound, and the session goes on.
#[test]
fn a_flood_of_long_id_requests_is_answered_in_bounded_memory() {
    let mut mcp = McpProcess::spawn(&["serve", "--database", "sqlite::memory:"], &[]);
    mcp.initialize();
    // 64 KiB ids: each answer echoes its whole id.
    let pad = "i".repeat(64 * 1024);
    let ids: Vec<String> = (0..400).map(|n| format!("{n:04}{pad}")).collect();
    let start = Instant::now();
    for id in &ids {
        mcp.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"no/such"}}"#));
    }
    assert!(start.elapsed() < Duration::from_secs(60));
    // 400 answers of 64 KiB would be 26 MB if pgmcp queued them.
    for id in &ids {
        let got = mcp.recv_response(&json!(id), Duration::from_secs(30));
        assert_eq!(got["error"]["code"], json!(-32601), "{}", &got["error"]);
    }
    assert!(mcp.peak_memory_kb() < 100 * 1024, "peak {} kB", mcp.peak_memory_kb());
    let alive = mcp.request("ping", json!({}));
    assert_eq!(alive["result"], json!({}));
}
