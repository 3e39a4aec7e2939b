//! `explain` end to end on the harness's PostgreSQL: plans of real
//! statements, `analyze` that runs and keeps nothing (read back through
//! psql), the guard as `query` applies it, and the timeout stopping an
//! `analyze` on the server.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::served::{serve_at, tools_on_sqlite};
use crate::support::stdio::{McpProcess, is_error, tool_json, tool_names, tool_text};

/// Two tables of 1,000 customers and 5,000 orders, analyzed.
const SHOP: &str = "
    CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL);
    INSERT INTO customers SELECT i, 'c' || i FROM generate_series(1, 1000) i;
    CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers, total numeric NOT NULL);
    INSERT INTO orders SELECT i, 1 + i % 1000, i % 97 FROM generate_series(1, 5000) i;
    ANALYZE customers; ANALYZE orders;";

const JOIN: &str = "SELECT c.name, sum(o.total) AS spent FROM customers c JOIN orders o ON o.customer_id = c.id \
                    GROUP BY c.name ORDER BY spent DESC";

fn serve(db: &pg::TestDb, extra: Value) -> (tempfile::TempDir, McpProcess) {
    serve_at(&db.url, extra)
}

#[test]
fn a_join_explained_and_analyzed() {
    let db = pg::server().database();
    db.psql(SHOP);
    let (_dir, mut mcp) = serve(&db, json!({}));
    let list = mcp.request("tools/list", json!({}));
    assert!(tool_names(&list["result"]).contains(&"explain"));
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "explain")
        .unwrap();
    assert_eq!(tool["annotations"]["readOnlyHint"], json!(true));

    let got = mcp.call_tool("explain", json!({"sql": JOIN}));
    assert!(!is_error(&got), "{got}");
    let plan = tool_json(&got);
    assert_eq!(plan["analyzed"], json!(false));
    assert!(plan["total_cost"].as_f64().unwrap() > 0.0, "{plan}");
    assert!(plan.get("execution_ms").is_none(), "nothing ran: {plan}");
    let nodes: Vec<&str> = plan["slowest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert!(nodes.iter().any(|n| n.contains("orders")), "{nodes:?}");
    assert!(plan["plan"][0]["Plan"].is_object(), "the whole plan fits: {plan}");
    assert_eq!(got["structuredContent"], plan);

    let got = mcp.call_tool("explain", json!({"sql": JOIN, "analyze": true}));
    let plan = tool_json(&got);
    assert_eq!(plan["analyzed"], json!(true), "{plan}");
    assert!(plan["execution_ms"].as_f64().unwrap() > 0.0, "{plan}");
    assert_eq!(plan["actual_rows"], json!(1000.0), "{plan}");
    assert!(plan["slowest"][0]["self_ms"].is_number(), "{plan}");
    // What a model reads, without the whole plan, is a few hundred tokens.
    let mut summary = plan.clone();
    summary.as_object_mut().unwrap().remove("plan");
    assert!(
        summary.to_string().len() < 4096,
        "{} bytes: {summary}",
        summary.to_string().len()
    );

    // A filter the statistics cannot foresee is flagged as a misestimate.
    let got = mcp.call_tool(
        "explain",
        json!({"sql": "SELECT * FROM orders WHERE total::int % 97 = total::int AND customer_id > $1", "params": [0], "analyze": true}),
    );
    let findings = tool_json(&got)["findings"].to_string();
    assert!(
        findings.contains("expected") && findings.contains("rows and got"),
        "{got}"
    );
}

/// With `analyze`, the statement runs, and nothing of it is kept: an
/// INSERT in read-write mode leaves the table as it was; in read-only
/// mode it is refused as `query` refuses it.
#[test]
fn analyze_keeps_nothing_and_follows_the_mode() {
    let db = pg::server().database();
    db.psql(SHOP);
    let insert = "INSERT INTO customers SELECT i, 'new' FROM generate_series(2001, 2100) i";
    let (_dir, mut mcp) = serve(&db, json!({"server": {"read_only": false}, "confirm": "never"}));
    let got = mcp.call_tool("explain", json!({"sql": insert, "analyze": true}));
    assert!(!is_error(&got), "{got}");
    assert_eq!(
        tool_json(&got)["actual_rows"],
        json!(0.0),
        "an INSERT returns no rows: {got}"
    );
    assert_eq!(db.psql("SELECT count(*) FROM customers"), "1000", "rolled back");
    // The same through query does land: the tool, not the server, rolled it back.
    let got = mcp.call_tool("query", json!({"sql": "INSERT INTO customers VALUES (5000, 'kept')"}));
    assert!(!is_error(&got), "{got}");
    assert_eq!(db.psql("SELECT count(*) FROM customers"), "1001");

    let (_dir, mut mcp) = serve(&db, json!({}));
    for (sql, analyze) in [(insert, true), (insert, false)] {
        let got = mcp.call_tool("explain", json!({"sql": sql, "analyze": analyze}));
        assert!(is_error(&got) && tool_text(&got).contains("read-only mode"), "{got}");
    }
    assert_eq!(db.psql("SELECT count(*) FROM customers"), "1001");
}

/// What `query` refuses, `explain` refuses, whether or not it would run:
/// the guard judges the statement as `query` would, and the EXPLAIN
/// around it too. Each attempt leaves the database as it was.
#[test]
fn the_guard_judges_what_explain_would_run() {
    let db = pg::server().database();
    db.psql(SHOP);
    let (_dir, mut mcp) = serve(&db, json!({"server": {"read_only": false}, "confirm": "never"}));
    let cases = [
        ("DELETE FROM orders", "DELETE without WHERE"),
        ("DROP TABLE orders", "DROP"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
        ("SELECT 1; DELETE FROM orders WHERE id > 0", "multi-statement"),
        // Closing EXPLAIN's own parenthesis from the statement is not a statement.
        ("SELECT 1) SELECT 2", "parse error"),
        ("SELECT 1 -- ) , ANALYZE", ""),
    ];
    for (sql, says) in cases {
        for analyze in [false, true] {
            let got = mcp.call_tool("explain", json!({"sql": sql, "analyze": analyze}));
            match says {
                "" => assert!(!is_error(&got), "{sql}: {got}"),
                says => assert!(
                    is_error(&got) && tool_text(&got).contains(says),
                    "{sql} ({analyze}): {got}"
                ),
            }
        }
    }
    assert_eq!(db.psql("SELECT count(*) FROM orders"), "5000");
}

/// A slow `analyze` is stopped on the server at the query timeout, as a
/// `query` is: the call answers, and no backend is left running it.
#[test]
fn a_slow_analyze_is_stopped_on_the_server() {
    let db = pg::server().database();
    let (_dir, mut mcp) = serve(&db, json!({"query": {"default_timeout_seconds": 2}}));
    let started = Instant::now();
    let got = mcp.call_tool(
        "explain",
        json!({"sql": "SELECT pg_sleep(60) AS slept", "analyze": true}),
    );
    assert!(is_error(&got) && tool_text(&got).contains("timed out after"), "{got}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(30),
        "answered at the timeout: {took:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = db.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'EXPLAIN%pg_sleep(60)%'");
        if left == "0" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the EXPLAIN ANALYZE still runs on the server"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `explain` is PostgreSQL's: not listed on a server of SQLite files, and
/// switched off like the other built-ins.
#[test]
fn explain_is_listed_where_it_can_answer() {
    let tools = tools_on_sqlite();
    assert!(!tools.iter().any(|t| t == "explain"), "{tools:?}");

    let db = pg::server().database();
    let (_dir, mut mcp) = serve(&db, json!({"tools_enabled": {"explain": false}}));
    let list = mcp.request("tools/list", json!({}));
    assert!(!tool_names(&list["result"]).contains(&"explain"), "{list}");
}

/// An attacker's variants, each checked afterwards on the database: what
/// tries to leave EXPLAIN's options, to keep a write past the rollback, or
/// to run a second statement gets nothing kept, in either mode.
#[test]
fn attacks_leave_the_database_as_it_was() {
    let db = pg::server().database();
    db.psql(SHOP);
    db.psql(
        "CREATE TABLE counter (n int NOT NULL); INSERT INTO counter VALUES (0);
         CREATE FUNCTION bump() RETURNS int LANGUAGE sql AS 'UPDATE counter SET n = n + 1 RETURNING n';",
    );
    let state = || {
        db.psql(
            "SELECT (SELECT count(*) FROM orders) || '/' || (SELECT count(*) FROM customers) || '/' || \
             (SELECT n FROM counter)",
        )
    };
    let before = state();
    assert_eq!(before, "5000/1000/0");
    // (sql, params, runs in read-write mode: analyzed, then rolled back)
    let variants: &[(&str, Value, bool)] = &[
        // Runs, and is rolled back: a data-modifying CTE, a writing function.
        (
            "WITH d AS (DELETE FROM orders WHERE id < 100 RETURNING *) SELECT count(*) FROM d",
            json!([]),
            true,
        ),
        ("SELECT bump()", json!([]), true),
        ("UPDATE customers SET name = $1 WHERE id > 0", json!(["x"]), true),
        // Refused: a second statement, a transaction's end, options of its own.
        ("SELECT 1; DELETE FROM orders WHERE id > 0", json!([]), false),
        ("COMMIT", json!([]), false),
        ("SELECT 1; COMMIT; DELETE FROM orders WHERE id > 0", json!([]), false),
        ("(ANALYZE) DELETE FROM orders WHERE id > 0", json!([]), false),
        (
            "SELECT 1) DELETE FROM orders WHERE id > 0; EXPLAIN (ANALYZE",
            json!([]),
            false,
        ),
        ("EXPLAIN ANALYZE DELETE FROM orders WHERE id > 0", json!([]), false),
        ("DELETE FROM orders", json!([]), false),
        ("TRUNCATE orders", json!([]), false),
        // A value is a value.
        (
            "SELECT count(*) FROM customers WHERE name = $1",
            json!(["x'); DELETE FROM orders; --"]),
            true,
        ),
    ];
    // Read-write mode with `confirm` off runs what the guard allows;
    // with it on (the default), explain asks no one, so it runs only what
    // reads, as read-only mode does.
    for (read_only, confirm) in [(false, "never"), (false, "writes"), (true, "writes")] {
        let (_dir, mut mcp) = serve(&db, json!({"server": {"read_only": read_only}, "confirm": confirm}));
        let reads_only = read_only || confirm != "never";
        for (sql, params, runs) in variants {
            let got = mcp.call_tool("explain", json!({"sql": sql, "params": params, "analyze": true}));
            assert_eq!(state(), before, "read_only={read_only}: {sql} left something: {got}");
            // What runs ran (and was rolled back), not failed; the rest is
            // refused.
            let ran = *runs && (!reads_only || sql.starts_with("SELECT count"));
            match ran {
                true => assert!(
                    !is_error(&got) && tool_json(&got)["analyzed"] == json!(true),
                    "{sql}: {got}"
                ),
                false => assert!(is_error(&got), "read_only={read_only}: {sql}: {got}"),
            }
        }
    }
}
