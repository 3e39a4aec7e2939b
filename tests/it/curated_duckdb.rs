//! Curated tools and several databases with DuckDB: a read-only analytics
//! file beside a writable SQLite one, and the README's worked example run
//! as written (`fixtures/curated`), every effect read back from the files.

use std::path::Path;
use std::process::Output;

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::support::files::duckdb::{make_db as make_duckdb, url as duckdb_url};
use crate::support::files::sqlite::{make_db, scalar, url as sqlite_url};
use crate::support::pgmcp;
// Writes run as the guard allows, with no one asked: the person's word
// before a write has its own tests (confirm.rs, confirm_attacks.rs).
use crate::support::served::write_unconfirmed_config;
use crate::support::stdio::{McpProcess, is_error, raw_text, tool_json, tool_names, tool_text};

/// One row of the analytics file a day, through 2024.
const DAILY: &str = "CREATE TABLE daily_revenue AS SELECT DATE '2024-01-01' + CAST(i AS INTEGER) AS day, \
                     1000 + (i * 37) % 500 * 100 AS revenue_cents FROM range(366) t(i)";

/// What [`DAILY`] stores for the day `i` days after 2024-01-01.
fn revenue(i: i64) -> i64 {
    1000 + (i * 37) % 500 * 100
}

/// DuckDB's date and array parameters, bound through a curated tool on a
/// read-only DuckDB file beside a writable SQLite one; a write on the
/// DuckDB file is refused, on the SQLite file it lands.
#[test]
fn a_read_only_duckdb_beside_a_writable_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let (warehouse, shop) = (dir.path().join("w.duckdb"), dir.path().join("shop.db"));
    make_duckdb(&warehouse, DAILY);
    make_db(&shop, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);");
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {
                "shop": {"url": sqlite_url(&shop), "read_only": false},
                "warehouse": {"url": duckdb_url(&warehouse), "read_only": true, "description": "Revenue by day."},
            },
            "tools": [
                {"name": "days", "description": "Revenue on the given days.", "database": "warehouse",
                 "statement": "SELECT day, revenue_cents FROM daily_revenue WHERE list_contains(CAST(? AS DATE[]), day) AND day >= CAST(? AS DATE) ORDER BY day",
                 "parameters": [
                     {"name": "days", "type": "array", "items": "date", "description": "days"},
                     {"name": "from", "type": "date", "description": "first day", "default": "2024-01-01"}
                 ]},
                {"name": "names", "description": "Names among the given ones.", "database": "warehouse",
                 "statement": "SELECT unnest(CAST(? AS VARCHAR[])) AS name",
                 "parameters": [{"name": "names", "type": "array", "items": "string", "description": "names"}]}
            ],
        }),
    );
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[]);
    mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    let days = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "days")
        .unwrap();
    assert_eq!(days["annotations"]["readOnlyHint"], json!(true));
    let got = mcp.call_tool("days", json!({"days": ["2024-01-02", "2024-03-01", "2023-12-31"]}));
    assert!(!is_error(&got), "{got}");
    assert_eq!(
        tool_json(&got)["rows"],
        json!([{"day": "2024-01-02", "revenue_cents": revenue(1)}, {"day": "2024-03-01", "revenue_cents": revenue(60)}])
    );
    // Quotes, commas and brackets inside a string stay one string.
    let tricky = ["a'b", "c, d", "[e]", "f\"g", "NULL"];
    let got = mcp.call_tool("names", json!({"names": tricky}));
    let names: Vec<Value> = tool_json(&got)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(names, tricky.iter().map(|n| json!(n)).collect::<Vec<_>>(), "{got}");
    let got = mcp.call_tool(
        "query",
        json!({"sql": "DELETE FROM daily_revenue WHERE day < DATE '2024-02-01'", "database": "warehouse"}),
    );
    assert!(is_error(&got) && tool_text(&got).contains("read-only"), "{got}");
    let got = mcp.call_tool(
        "query",
        json!({"sql": "INSERT INTO notes (body) VALUES (?)", "params": ["kept"], "database": "shop"}),
    );
    assert!(!is_error(&got), "{got}");
    assert_eq!(scalar(&shop, "SELECT count(*) FROM notes"), 1);
    mcp.close_stdin();
    mcp.wait_exit(std::time::Duration::from_secs(10));
    let conn = duckdb::Connection::open(&warehouse).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM daily_revenue", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 366, "the warehouse is whole");

    // A tool that writes on the read-only DuckDB file stops the config.
    let bad = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {"warehouse": {"url": duckdb_url(&warehouse)}},
            "tools": [{"name": "trim", "description": "d", "statement": "DELETE FROM daily_revenue WHERE day < ?",
                       "parameters": [{"name": "before", "type": "date", "description": "d"}]}],
        }),
    );
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path()).args(["check", "--config", &bad]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("tools[0].statement") && text.contains("tool trim"),
        "{text}"
    );
}

/// A tool marked read-only on a writable DuckDB file is refused when the
/// config loads: DuckDB opens a file once per process, and a second,
/// read-only instance beside the writable one reads stale data (a row the
/// first deleted still shows), so there is no read-only session to give
/// it. Without the mark, the tool runs on the writable file, its statement
/// judged at every call, and announced as able to write.
#[test]
fn a_read_only_tool_on_a_writable_duckdb_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("w.duckdb");
    make_duckdb(&warehouse, DAILY);
    let tool = |read_only: Option<bool>| {
        let mut tool = json!({"name": "total", "description": "Revenue in all.",
                              "statement": "SELECT sum(revenue_cents)::BIGINT AS total FROM daily_revenue"});
        if let Some(read_only) = read_only {
            tool["read_only"] = json!(read_only);
        }
        tool
    };
    let marked = write_unconfirmed_config(
        dir.path(),
        json!({"server": {"read_only": false}, "tools": [tool(Some(true))]}),
    );
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path())
        .args(["check", "--config", &marked, "--database", &duckdb_url(&warehouse)])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("tools[0].read_only") && text.contains("writable DuckDB file"),
        "{text}"
    );

    let plain = write_unconfirmed_config(
        dir.path(),
        json!({"server": {"read_only": false}, "tools": [tool(None)]}),
    );
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", &plain, "--database", &duckdb_url(&warehouse)],
        &[],
    );
    mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    let total = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "total")
        .unwrap();
    // Its statement only reads, but on a writable DuckDB file nothing holds
    // it to that (no read-only session), so it promises nothing.
    assert_eq!(total["annotations"]["readOnlyHint"], json!(false), "{total}");
    let got = mcp.call_tool(
        "query",
        json!({"sql": "DELETE FROM daily_revenue WHERE day >= DATE '2024-07-01'"}),
    );
    assert!(!is_error(&got), "{got}");
    let got = mcp.call_tool("total", json!({}));
    let half: i64 = (0..182).map(revenue).sum();
    assert_eq!(tool_json(&got)["rows"], json!([{"total": half}]), "{got}");
}

/// `pgmcp` in `dir` with `args` and `envs`; what it did.
fn run_in(dir: &Path, home: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    // The demo shop is written into the directory the person is in.
    let mut cmd = crate::support::pgmcp_std(home);
    cmd.env("XDG_CACHE_HOME", home.join("cache"))
        .current_dir(dir)
        .args(args);
    cmd.envs(envs.iter().copied());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "pgmcp {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The README's worked example, command for command, in a copy of
/// `fixtures/curated`; then a session that uses every tool it lists.
#[test]
fn the_readme_example_runs_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    // pgmcp never creates a DuckDB file: the README builds it with
    // DuckDB's own command-line tool, run here as the same SQL through the
    // same engine (the duckdb crate).
    let create = format!("duckdb analytics.duckdb \"{DAILY}\"");
    for line in [
        "cp -r fixtures/curated /tmp/shop && cd /tmp/shop",
        "pgmcp demo",
        &create,
        "pgmcp check --config config.json",
        "pgmcp serve --config config.json",
    ] {
        assert!(
            readme.lines().any(|l| l.trim() == line),
            "the README's example runs {line:?}"
        );
    }
    let fixture = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/curated"));
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let dir = dir.path();
    run_in(dir, home.path(), &["demo"], &[]);
    make_duckdb(&dir.join("analytics.duckdb"), DAILY);
    let out = run_in(dir, home.path(), &["check", "--config", "config.json"], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("== database orders ==") && text.contains("== database analytics =="),
        "{text}"
    );
    // What the README shows of it is what it prints, and the config it
    // shows is the fixture's.
    let section = readme
        .split("### A worked example")
        .nth(1)
        .and_then(|rest| rest.split("\n### ").next())
        .expect("the README's worked example");
    let shown: Vec<&str> = section
        .lines()
        .map(str::trim)
        .skip_while(|l| *l != "== curated tools ==")
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert_eq!(shown.len(), 5, "{section}");
    assert!(
        shown.iter().all(|l| text.lines().any(|t| t == *l)),
        "{shown:?} in {text}"
    );
    let json_block = section
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the config in the README");
    let in_readme: Value = serde_json::from_str(json_block).unwrap();
    let fixture_config: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("config.json")).unwrap()).unwrap();
    assert_eq!(in_readme, fixture_config, "the README shows the fixture's config");

    let config = dir.join("config.json");
    let mut mcp = McpProcess::spawn(&["serve", "--config", config.to_str().unwrap()], &[]);
    mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(
        tool_names(&list["result"]),
        [
            "describe_table",
            "list_tables",
            "mark_shipped",
            "orders_in_status",
            "orders_of_customer",
            "revenue_between"
        ]
    );
    let shop = dir.join("pgmcp-demo.db");
    let db = Connection::open(&shop).unwrap();
    let email: String = db
        .query_row("SELECT email FROM customers WHERE id = 2", [], |r| r.get(0))
        .unwrap();
    let got = mcp.call_tool("orders_of_customer", json!({"email": email, "since": "2024-03-01"}));
    let expected: Vec<i64> = db
        .prepare("SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.email = ?1 AND o.ordered_at >= '2024-03-01' AND EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id) ORDER BY o.ordered_at DESC")
        .unwrap()
        .query_map([&email], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let ids: Vec<i64> = tool_json(&got)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert!(!ids.is_empty());
    assert_eq!(ids, expected, "{got}");
    let got = mcp.call_tool("orders_in_status", json!({"statuses": ["cancelled", "pending"]}));
    let listed = tool_json(&got)["rows"].as_array().unwrap().len() as i64;
    let counted: i64 = db
        .query_row(
            "SELECT count(*) FROM orders WHERE status IN ('cancelled', 'pending')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(listed, counted.min(500));
    let paid: i64 = db
        .query_row("SELECT min(id) FROM orders WHERE status = 'paid'", [], |r| r.get(0))
        .unwrap();
    // A write waits for the person: this client cannot ask, and is told so;
    // one whose person accepts runs it.
    let status = || -> String {
        db.query_row("SELECT status FROM orders WHERE id = ?1", [paid], |r| r.get(0))
            .unwrap()
    };
    let got = mcp.call_tool("mark_shipped", json!({"order_id": paid}));
    assert!(
        is_error(&got) && raw_text(&got).contains("\"confirm\": \"never\""),
        "{got}"
    );
    assert_eq!(status(), "paid");
    let steps = crate::support::python_sdk::confirm_session(
        json!({"steps": [{"name": "mark_shipped", "arguments": {"order_id": paid}, "answer": "accept"}]}),
        config.to_str().unwrap(),
        None,
        &[],
    );
    assert_eq!(steps[0]["structured"]["rows_affected"], json!(1), "{}", steps[0]);
    assert!(
        crate::support::python_sdk::shown(&steps[0]).contains("│ UPDATE orders SET status = 'shipped'"),
        "{}",
        steps[0]
    );
    assert_eq!(status(), "shipped");
    let got = mcp.call_tool("revenue_between", json!({"from": "2024-02-28", "to": "2024-03-01"}));
    assert_eq!(
        tool_json(&got)["rows"],
        json!([
            {"day": "2024-02-28", "revenue_cents": revenue(58)},
            {"day": "2024-02-29", "revenue_cents": revenue(59)},
            {"day": "2024-03-01", "revenue_cents": revenue(60)}
        ]),
        "{got}"
    );
    // Raw SQL is switched off: no tool answers to `query`.
    let refused = mcp.request(
        "tools/call",
        json!({"name": "query", "arguments": {"sql": "DELETE FROM orders WHERE 1 = 1"}}),
    );
    assert_eq!(refused["error"]["code"], json!(-32602), "{refused}");
    let left: i64 = db.query_row("SELECT count(*) FROM orders", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 200);
}

/// An attacker's arguments on a DuckDB file that may write: strings and
/// array items that try to close a quote, a bracket or the statement are
/// only values, and the file is whole afterwards.
#[test]
fn arguments_on_a_writable_duckdb_file_are_only_values() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.duckdb");
    make_duckdb(
        &file,
        "CREATE TABLE t (name VARCHAR); INSERT INTO t VALUES ('a'), ('b');",
    );
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [
                {"name": "by_name", "description": "d", "statement": "SELECT count(*) AS n FROM t WHERE name = ?",
                 "parameters": [{"name": "name", "type": "string", "description": "d"}]},
                {"name": "among", "description": "d",
                 "statement": "SELECT count(*) AS n FROM t WHERE list_contains(CAST(? AS VARCHAR[]), name)",
                 "parameters": [{"name": "names", "type": "array", "items": "string", "description": "d"}]}
            ],
        }),
    );
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &duckdb_url(&file)], &[]);
    mcp.initialize();
    let attacks = [
        "a'; DROP TABLE t; --",
        "a' OR '1'='1",
        "$1",
        "?",
        "a\"); DELETE FROM t; --",
        "]",
    ];
    for attack in attacks {
        let got = mcp.call_tool("by_name", json!({"name": attack}));
        assert_eq!(tool_json(&got)["rows"], json!([{"n": 0}]), "{attack}: {got}");
        let got = mcp.call_tool("among", json!({"names": [attack]}));
        assert_eq!(tool_json(&got)["rows"], json!([{"n": 0}]), "{attack}: {got}");
    }
    let got = mcp.call_tool("among", json!({"names": ["b", "zz"]}));
    assert_eq!(tool_json(&got)["rows"], json!([{"n": 1}]), "{got}");
    mcp.close_stdin();
    mcp.wait_exit(std::time::Duration::from_secs(10));
    let conn = duckdb::Connection::open(&file).unwrap();
    let n: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 2, "the table is whole");
}
