//! Memory follows the answer's cap, not the data: huge values and many rows
//! of them are read within the read budget, on every engine, through the
//! real binary, with its peak memory read from `/proc`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::stdio::{McpProcess, tool_json, tool_text};
use crate::support::{PEAK_BOUND_KB, pg};

/// What reading a huge result may add to the peak of a session that only
/// computed the same values (the reference, measured in the same run): the
/// read budget, its conversions and, on DuckDB, the text the outer query
/// cut for one chunk of 150 rows.
const ADDED_BOUND_KB: u64 = 40 * 1024;

fn config(dir: &Path) -> String {
    let path = dir.join("config.json");
    let text = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {
            "default_timeout_seconds": 60,
            "list_tables_timeout_seconds": 10,
            "describe_table_timeout_seconds": 10,
        },
    });
    std::fs::write(&path, text.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The peak memory of a fresh session that ran `sql`, and its answer.
fn peak_after(spawn: &dyn Fn() -> McpProcess, sql: &str) -> (u64, Value) {
    let mut mcp = spawn();
    mcp.initialize();
    // Warm up: the first call opens the database.
    let _ = mcp.call_tool("query", json!({ "sql": "SELECT 1" }));
    let result = mcp.call_tool("query", json!({ "sql": sql }));
    (mcp.peak_memory_kb(), result)
}

/// Run `sql`, which makes 150 rows of one 10,000,000-byte value, in a fresh
/// session, and `reference`, which computes the same values but answers only
/// their lengths, in another. Check the answer (one row, its value cut and
/// marked with its whole size, within the cap) and what reading it added to
/// the peak memory; with `bound`, the whole peak too.
fn huge_values(spawn: &dyn Fn() -> McpProcess, sql: &str, reference: &str, engine: &str, bound: Option<u64>) {
    let (reference_peak, _) = peak_after(spawn, reference);
    let (peak, result) = peak_after(spawn, sql);
    assert_ne!(result["isError"], true, "{engine}: {result:#}");
    let text = tool_text(&result);
    assert!(text.len() <= 50_000, "{engine}: a {}-byte answer", text.len());
    let out = tool_json(&result);
    assert_eq!(out["truncated"], true, "{engine}: {out:#}");
    assert_eq!(out["returned_rows"], 1, "{engine}");
    let value = out["rows"][0].as_object().unwrap().values().next().unwrap();
    let value = value.as_str().unwrap();
    assert!(value.starts_with("xxxxxxxx"), "{engine}");
    assert!(
        value.ends_with(" of 10000000 bytes shown]"),
        "{engine}: the marker states the whole size: {}",
        &value[value.len() - 60..]
    );
    assert!(out["total_rows"].is_null(), "{engine}: the total is not known");
    let hint = out["hint"].as_str().unwrap();
    assert!(hint.contains("value cut"), "{engine}: {hint}");
    assert!(
        peak < reference_peak + ADDED_BOUND_KB,
        "{engine}: peak {peak} kB, {reference_peak} kB computing the values alone"
    );
    if let Some(bound) = bound {
        assert!(
            peak < bound,
            "{engine}: peak resident memory {peak} kB, over the {bound} kB bound"
        );
    }
}

#[test]
fn huge_values_stay_within_the_memory_bound_on_postgres() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let spawn = || McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    huge_values(
        &spawn,
        "SELECT repeat('x', 10000000) AS big FROM generate_series(1, 150)",
        "SELECT length(repeat('x', 10000000)) AS big FROM generate_series(1, 150)",
        "postgres",
        Some(PEAK_BOUND_KB),
    );
    // The connection went back to the pool in step: the next call works.
    let mut mcp = spawn();
    mcp.initialize();
    let result = mcp.call_tool(
        "query",
        json!({ "sql": "SELECT repeat('x', 10000000) AS big FROM generate_series(1, 3)" }),
    );
    assert_eq!(tool_json(&result)["truncated"], true);
    let result = mcp.call_tool("query", json!({ "sql": "SELECT 1 AS one" }));
    assert_eq!(tool_json(&result)["rows"], json!([{"one": 1}]));
}

#[test]
fn huge_values_stay_within_the_memory_bound_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.db");
    rusqlite::Connection::open(&file).unwrap();
    let config = config(dir.path());
    let url = format!("sqlite://{}", file.display());
    let spawn = || McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    let rows = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150)";
    huge_values(
        &spawn,
        &format!("{rows} SELECT printf('%.*c', 10000000, 'x') AS big FROM n"),
        &format!("{rows} SELECT length(printf('%.*c', 10000000, 'x')) AS big FROM n"),
        "sqlite",
        Some(PEAK_BOUND_KB),
    );
}

/// DuckDB computes the values 2,048 rows at a time and holds them itself;
/// what pgmcp adds to that is bounded. The whole peak is not asserted here:
/// in a debug build, DuckDB's unoptimised code alone is about 60 MB of it.
#[cfg(feature = "duckdb")]
#[test]
fn huge_values_stay_within_the_memory_bound_on_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let file = dir.path().join("data.duckdb");
    drop(duckdb::Connection::open(&file).unwrap());
    let url = format!("duckdb://{}", file.display());
    let spawn = || McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    huge_values(
        &spawn,
        "SELECT repeat('x', 10000000) AS big FROM generate_series(1, 150)",
        "SELECT length(repeat('x', 10000000)) AS big FROM generate_series(1, 150)",
        "duckdb",
        None,
    );
}

/// Many values that each fit, in many rows: reading stops once the budget is
/// spent, and the answer says the result goes on.
#[test]
fn many_rows_of_large_values_stop_at_the_budget() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    mcp.initialize();
    let result = mcp.call_tool(
        "query",
        json!({ "sql": "SELECT i, repeat('y', 30000) AS v FROM generate_series(1, 400) i", "limit": 400 }),
    );
    let out = tool_json(&result);
    assert_eq!(out["truncated"], true, "{out:#}");
    assert!(out["total_rows"].is_null());
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one 30,000-byte row fits in the default 50,000 bytes");
    assert_eq!(
        rows[0]["v"].as_str().map(str::len),
        Some(30_000),
        "a value that fits is whole"
    );
    assert!(mcp.peak_memory_kb() < PEAK_BOUND_KB);
}

/// Calls that each bring 25 MB of parameters, sent at once: each is answered
/// with an error (a line longer than any call the limits accept, or
/// parameters over `query.max_params_bytes`), and memory stays bounded.
#[test]
fn many_calls_with_huge_parameters_stay_within_the_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.db");
    rusqlite::Connection::open(&file).unwrap();
    let config = config(dir.path());
    let url = format!("sqlite://{}", file.display());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    mcp.initialize();
    let huge = "p".repeat(25 << 20);
    let call = |id: u64, param: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "query", "arguments": {"sql": "SELECT length($1) AS n", "params": [param]}}})
    };
    for id in 100..130 {
        mcp.send(&call(id, &huge));
    }
    // Parameters within the line limit but over max_params_bytes.
    mcp.send(&call(130, &"q".repeat(2 << 20)));
    for id in 100..131 {
        let answer = mcp.recv_response(&json!(id), std::time::Duration::from_secs(60));
        let refused = answer.get("error").is_some() || answer["result"]["isError"] == true;
        let text = answer.to_string();
        assert!(refused, "{id}: {}", &text[..200.min(text.len())]);
        if id == 130 {
            assert!(
                text.contains("(query.max_params_bytes)"),
                "{}",
                &text[..300.min(text.len())]
            );
        }
    }
    let result = mcp.call_tool("query", json!({"sql": "SELECT length($1) AS n", "params": ["ok"]}));
    assert_eq!(tool_json(&result)["rows"], json!([{"n": 2}]));
    let peak = mcp.peak_memory_kb();
    assert!(peak < PEAK_BOUND_KB, "peak resident memory {peak} kB");
}

/// Calls past `pool.max_waiting` are refused at once, with a reason, rather
/// than held with their arguments; those within it run.
#[test]
fn calls_past_the_waiting_bound_are_refused_at_once() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let text = json!({
        "logging": {"output": dir.path().join("pgmcp.log")},
        "pool": {"max_conns": 1, "max_waiting": 2},
        "query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
    });
    std::fs::write(&path, text.to_string()).unwrap();
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", path.to_str().unwrap()],
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    mcp.initialize();
    for id in 200..206 {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "query", "arguments": {"sql": "SELECT pg_sleep(1)::text AS s"}}}));
    }
    let mut refused = 0;
    for id in 200..206 {
        let answer = mcp.recv_response(&json!(id), std::time::Duration::from_secs(30));
        if answer["result"]["isError"] == true {
            let text = tool_text(&answer["result"]);
            assert!(
                text.starts_with("too many calls at once: 2 are already waiting"),
                "{text}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 3, "one runs, two wait, three are refused");
}

/// The calls waiting for a slot hold at most 16 MiB of SQL and parameters
/// together: past that, a call is refused at once, and memory stays bounded.
#[test]
fn waiting_calls_hold_a_bounded_amount_of_arguments() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let text = json!({
        "logging": {"output": dir.path().join("pgmcp.log")},
        "pool": {"max_conns": 1},
        "query": {"default_timeout_seconds": 60, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
    });
    std::fs::write(&path, text.to_string()).unwrap();
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", path.to_str().unwrap()],
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    mcp.initialize();
    // The one slot is busy while the others arrive.
    mcp.send(&json!({"jsonrpc": "2.0", "id": 299, "method": "tools/call",
                     "params": {"name": "query", "arguments": {"sql": "SELECT pg_sleep(15)::text AS s"}}}));
    let param = "m".repeat(1 << 20);
    for id in 300..330 {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "query", "arguments": {
                             "sql": "SELECT pg_sleep(0.05)::text AS s, length($1) AS n", "params": [param]}}}));
    }
    let (mut ran, mut refused) = (0, 0);
    for id in 300..330 {
        let answer = mcp.recv_response(&json!(id), std::time::Duration::from_secs(60));
        if answer["result"]["isError"] == true {
            let text = tool_text(&answer["result"]);
            assert!(text.starts_with("too many calls at once: "), "{text}");
            assert!(text.contains("16 MiB"), "{text}");
            refused += 1;
        } else {
            assert_eq!(tool_json(&answer["result"])["rows"][0]["n"], 1 << 20);
            ran += 1;
        }
    }
    // At most 16 MiB (fifteen calls) wait; the rest are refused.
    assert_eq!((ran, refused), (15, 15));
    let first = mcp.recv_response(&json!(299), std::time::Duration::from_secs(60));
    assert_ne!(first["result"]["isError"], true, "{first}");
    let peak = mcp.peak_memory_kb();
    assert!(peak < PEAK_BOUND_KB, "peak resident memory {peak} kB");
}
