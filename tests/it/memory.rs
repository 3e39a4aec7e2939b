//! Memory follows the answer's cap, not the data: huge values and many rows
//! of them are read within the read budget, on every engine, through the
//! real binary, with its peak memory read from `/proc`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::served::{pg_session, sqlite_session, write_config};
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

// ---------------------------------------------------------------------------
// Doors the read budget does not count: column names, NULLs, errors,
// notices, COPY, catalog answers.

/// The answer is within the default 50,000-byte cap, and the server is
/// still there and still answers.
fn assert_capped_and_alive(mcp: &mut McpProcess, result: &Value, what: &str) {
    let text = tool_text(result);
    assert!(text.len() <= 50_000, "{what}: a {}-byte answer", text.len());
    let again = mcp.call_tool("query", json!({ "sql": "SELECT 2 AS two" }));
    assert_eq!(
        tool_json(&again)["rows"],
        json!([{"two": 2}]),
        "{what}: the session goes on"
    );
}

fn assert_peak(mcp: &McpProcess, what: &str) {
    let peak = mcp.peak_memory_kb();
    assert!(
        peak < PEAK_BOUND_KB,
        "{what}: peak resident memory {peak} kB, over the {PEAK_BOUND_KB} kB bound"
    );
}

/// A SQLite file (the data, not the operator, chose it) whose one column has
/// a 1 MB name, and 500 rows of NULL. The read budget counts values, not
/// names: every row's JSON object would hold its own copy of the name.
#[test]
fn sqlite_long_column_name_over_many_rows_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.db");
    {
        let conn = rusqlite::Connection::open(&file).unwrap();
        let name = "n".repeat(1 << 20);
        conn.execute_batch(&format!(
            "CREATE TABLE t(\"{name}\"); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) \
             INSERT INTO t SELECT NULL FROM n;"
        ))
        .unwrap();
    }
    let config = write_config(dir.path(), json!({}));
    let mut mcp = sqlite_session(&file, &config);
    let result = mcp.call_tool("query", json!({ "sql": "SELECT * FROM t" }));
    assert_ne!(result["isError"], true, "{}", &result.to_string()[..300]);
    assert_capped_and_alive(&mut mcp, &result, "1 MB column name");
    assert_peak(&mcp, "1 MB column name x 500 rows");
}

/// PostgreSQL names are at most 63 bytes, but a table may have 1,600
/// columns: 500 rows of NULLs cost the budget nothing, while every row's
/// object holds 1,600 keys.
#[test]
fn postgres_wide_rows_of_nulls_stay_bounded() {
    let db = pg::server().database();
    let cols: Vec<String> = (0..1600).map(|i| format!("c{i:04}_{}", "w".repeat(57))).collect();
    db.psql(&format!(
        "CREATE TABLE wide ({}); INSERT INTO wide SELECT FROM generate_series(1, 500);",
        cols.iter().map(|c| format!("{c} int")).collect::<Vec<_>>().join(", ")
    ));
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut mcp = pg_session(&db, &config);
    let result = mcp.call_tool("query", json!({ "sql": "SELECT * FROM wide" }));
    assert_ne!(
        result["isError"],
        true,
        "{}",
        &result.to_string()[..300.min(result.to_string().len())]
    );
    let out = tool_json(&result);
    assert_eq!(out["truncated"], true);
    assert_capped_and_alive(&mut mcp, &result, "wide NULL rows");
    assert_peak(&mcp, "1,600 NULL columns x 500 rows");
}

/// PostgreSQL quotes the input in `invalid input syntax` errors: a 150 MB
/// value cast to integer makes a 150 MB ErrorResponse.
#[test]
fn postgres_huge_error_message_stays_bounded() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut mcp = pg_session(&db, &config);
    let result = mcp.call_tool("query", json!({ "sql": "SELECT repeat('e', 150000000)::int AS n" }));
    assert_eq!(result["isError"], true);
    assert!(
        tool_text(&result).contains("invalid input syntax"),
        "{}",
        &tool_text(&result)[..200]
    );
    assert_capped_and_alive(&mut mcp, &result, "huge error");
    assert_peak(&mcp, "150 MB error message");
}

/// A function the database's owner wrote raises a 150 MB NOTICE; the agent
/// only calls it.
#[test]
fn postgres_huge_notice_stays_bounded() {
    let db = pg::server().database();
    db.psql(
        "CREATE FUNCTION noisy() RETURNS int LANGUAGE plpgsql STABLE AS \
         $$BEGIN RAISE NOTICE '%', repeat('n', 150000000); RETURN 1; END$$",
    );
    let dir = tempfile::tempdir().unwrap();
    // The operator vouched that it only reads, as the refusal says to.
    let config = write_config(
        dir.path(),
        json!({"protection": {"read_only_functions": ["public.noisy()"]}}),
    );
    let mut mcp = pg_session(&db, &config);
    let result = mcp.call_tool("query", json!({ "sql": "SELECT noisy() AS n" }));
    assert_eq!(
        tool_json(&result)["rows"],
        json!([{"n": 1}]),
        "{}",
        &result.to_string()[..300.min(result.to_string().len())]
    );
    assert_capped_and_alive(&mut mcp, &result, "huge notice");
    assert_peak(&mcp, "150 MB notice");
}

/// `COPY (...) TO STDOUT`: each CopyData message is one whole line of
/// output, returned as a row: read piece by piece, kept as far as the read
/// budget allows and the rest dropped as it arrives.
#[test]
fn postgres_huge_copy_to_stdout_stays_bounded() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    // Read-write mode here; read-only mode below.
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let mut mcp = pg_session(&db, &config);
    let result = mcp.call_tool(
        "query",
        json!({ "sql": "COPY (SELECT repeat('c', 150000000)) TO STDOUT" }),
    );
    eprintln!(
        "COPY answer: {}",
        &result.to_string()[..400.min(result.to_string().len())]
    );
    assert!(
        !tool_text(&result).contains("not allowed"),
        "COPY ran: {}",
        tool_text(&result)
    );
    assert_capped_and_alive(&mut mcp, &result, "huge COPY line");
    assert_peak(&mcp, "150 MB COPY line");
}

/// `describe_table` of a table whose 60 columns share an enum of 10,000
/// labels: each column carries every label, and the catalog's one JSON row
/// is read whole, with no budget.
#[test]
fn postgres_describe_table_with_many_enum_labels_stays_bounded() {
    let db = pg::server().database();
    let labels: Vec<String> = (0..10_000).map(|i| format!("'l{i:05}_{}'", "e".repeat(54))).collect();
    let cols: Vec<String> = (0..60).map(|i| format!("c{i} big_enum")).collect();
    db.psql(&format!(
        "CREATE TYPE big_enum AS ENUM ({}); CREATE TABLE enums ({});",
        labels.join(", "),
        cols.join(", ")
    ));
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut mcp = pg_session(&db, &config);
    let result = mcp.call_tool("describe_table", json!({ "table": "enums" }));
    assert_ne!(
        result["isError"],
        true,
        "{}",
        &result.to_string()[..300.min(result.to_string().len())]
    );
    assert_eq!(tool_json(&result)["truncated"], true);
    assert_capped_and_alive(&mut mcp, &result, "enum labels");
    assert_peak(&mcp, "describe_table, 60 columns x 10,000 enum labels");
}

/// Read-only mode runs `COPY ... TO STDOUT` too (it reads): the huge line
/// is read within the read budget and answered as a SELECT of it is.
#[test]
fn copy_to_stdout_in_read_only_mode_stays_bounded() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut mcp = pg_session(&db, &config);
    let result = mcp.call_tool(
        "query",
        json!({ "sql": "COPY (SELECT repeat('c', 150000000)) TO STDOUT" }),
    );
    assert_ne!(result["isError"], true, "{}", tool_text(&result));
    // Like a SELECT of the same value: the one row is larger than the
    // answer may be, so the answer says so instead of holding it.
    let answer = tool_json(&result);
    assert_eq!(answer["columns"], json!([{"name": "line", "type": "text"}]), "{answer}");
    assert_eq!(answer["truncated"], true, "{answer}");
    assert!(
        answer["hint"]
            .as_str()
            .is_some_and(|h| h.contains("first row alone is larger")),
        "{answer}"
    );
    assert_capped_and_alive(&mut mcp, &result, "COPY in read-only mode");
    assert_peak(&mcp, "150 MB COPY line in read-only mode");
}
