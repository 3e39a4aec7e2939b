//! `diagnose` end to end on the harness's PostgreSQL (which preloads
//! pg_stat_statements where the server has it): each check on a database
//! in a known state — a lock held by another session, an index never
//! scanned, a table with dead rows and free space, a large table read by
//! sequential scans, statements recorded — seen by a role with
//! pg_monitor and by one without; slow_queries without the extension; a
//! standby and its primary; the guard applying to the checks' statements;
//! the tool listed, annotated and switched off like the other built-ins.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::psql_session::Session;
use crate::support::served::{serve_at, tools_on_sqlite};
use crate::support::stdio::{McpProcess, is_error, tool_json, tool_names, tool_text};

/// `orders`: 20,000 rows, a tenth left after a delete (no autovacuum), an
/// index on `note` nothing scans. `events`: 30,000 rows read by
/// sequential scans.
const STATE: &str = "
    CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
    CREATE TABLE orders (id int PRIMARY KEY, note text NOT NULL, total int NOT NULL) WITH (autovacuum_enabled = false);
    INSERT INTO orders SELECT g, repeat('n', 40) || g, g % 97 FROM generate_series(1, 20000) g;
    CREATE INDEX orders_note_idx ON orders (note);
    DELETE FROM orders WHERE id % 10 <> 0;
    ANALYZE orders;
    CREATE TABLE events (id int, kind text) WITH (autovacuum_enabled = false);
    INSERT INTO events SELECT g, 'k' || g % 7 FROM generate_series(1, 30000) g;
    ANALYZE events;
    SELECT count(*) FROM events WHERE kind = 'k3';
    SELECT count(*) FROM events WHERE kind = 'k4';
    SELECT count(*) FROM events WHERE kind = 'k5';";

/// A login with pg_monitor (which sees every session's details) that
/// reads the database's tables.
fn monitor_url(server: &pg::PgServer, db: &pg::TestDb) -> String {
    let login = format!("{}_mon", db.name);
    db.psql(&format!(
        "CREATE ROLE {login} LOGIN PASSWORD 'pw' IN ROLE pg_monitor;
         GRANT CONNECT ON DATABASE {db} TO {login}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {login};",
        db = db.name
    ));
    format!("postgres://{login}:pw@{}:{}/{}", server.host(), server.port(), db.name)
}

/// Every check, in the order the README documents them.
pub(crate) const CHECKS: [&str; 9] = [
    "slow_queries",
    "unused_indexes",
    "missing_indexes",
    "bloat",
    "locks",
    "connections",
    "cache_hit",
    "vacuum",
    "replication",
];

/// [`STATE`] in `db`, once the statistics show it: a session's counts
/// reach the statistics views when it ends, a moment after psql returns.
fn known_state(db: &pg::TestDb) {
    db.psql(STATE);
    let until = Instant::now() + Duration::from_secs(30);
    while db.psql(
        "SELECT (SELECT seq_scan >= 3 FROM pg_stat_user_tables WHERE relname = 'events') \
         AND (SELECT n_dead_tup > 0 FROM pg_stat_user_tables WHERE relname = 'orders')",
    ) != "t"
    {
        assert!(Instant::now() < until, "the statistics never showed the known state");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn diagnose(mcp: &mut McpProcess, check: &str) -> Value {
    let got = mcp.call_tool("diagnose", json!({"check": check}));
    assert!(!is_error(&got), "{check}: {got}");
    let answer = tool_json(&got);
    assert_eq!(answer["check"], check, "{answer}");
    assert_eq!(got["structuredContent"], answer);
    // Small enough for a model to read whole.
    let size = answer.to_string().len();
    assert!(size < 4096, "{check}: {size} bytes: {answer}");
    answer
}

#[test]
fn each_check_reads_a_database_in_a_known_state() {
    let db = pg::server().database();
    known_state(&db);
    let url = monitor_url(pg::server(), &db);
    let (_dir, mut mcp) = serve_at(&url, json!({}));
    let list = mcp.request("tools/list", json!({}));
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "diagnose")
        .expect("diagnose is listed")
        .clone();
    assert_eq!(tool["annotations"]["readOnlyHint"], json!(true), "{tool}");
    let checks: Vec<&str> = tool["inputSchema"]["properties"]["check"]["enum"]
        .as_array()
        .map(|e| e.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(checks, CHECKS, "{tool}");

    let unused = diagnose(&mut mcp, "unused_indexes");
    let names: Vec<&str> = unused["facts"]["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["index"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["orders_note_idx"], "the primary keys are not counted: {unused}");
    assert!(unused["reading"].as_str().unwrap().starts_with("1 index ("), "{unused}");

    let missing = diagnose(&mut mcp, "missing_indexes");
    assert_eq!(missing["facts"]["tables"][0]["table"], "events", "{missing}");
    assert!(
        missing["facts"]["tables"][0]["sequential_scans"].as_i64().unwrap() >= 3,
        "{missing}"
    );
    assert!(
        missing["reading"].as_str().unwrap().contains("public.events"),
        "{missing}"
    );

    let vacuum = diagnose(&mut mcp, "vacuum");
    assert_eq!(vacuum["facts"]["tables"][0]["table"], "orders", "{vacuum}");
    assert!(
        vacuum["facts"]["tables"][0]["dead_rows"].as_i64().unwrap() >= 17_000,
        "{vacuum}"
    );
    assert!(
        vacuum["reading"].as_str().unwrap().contains("public.orders"),
        "{vacuum}"
    );

    let bloat = diagnose(&mut mcp, "bloat");
    let tables: Vec<&str> = bloat["facts"]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["table"].as_str().unwrap())
        .collect();
    assert_eq!(tables, ["orders"], "events is not bloated: {bloat}");
    assert!(
        bloat["facts"]["tables"][0]["wasted_percent"].as_f64().unwrap() >= 80.0,
        "{bloat}"
    );

    let cache = diagnose(&mut mcp, "cache_hit");
    let hit = cache["facts"]["database_hit_percent"].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&hit), "{cache}");

    let replication = diagnose(&mut mcp, "replication");
    assert_eq!(replication["facts"]["standby"], json!(false), "{replication}");
    assert!(
        replication["reading"].as_str().unwrap().starts_with("A primary"),
        "{replication}"
    );

    // The statements psql ran are there, with their text (pg_monitor sees
    // every user's); pgmcp's own are not.
    let slow = diagnose(&mut mcp, "slow_queries");
    assert_eq!(slow["available"], json!(true), "{slow}");
    let texts: Vec<&str> = slow["facts"]["by_total_time"]
        .as_array()
        .unwrap()
        .iter()
        .chain(slow["facts"]["also_slow_per_call"].as_array().unwrap())
        .map(|s| s["query"].as_str().expect("the role sees every text"))
        .collect();
    assert!(!texts.is_empty(), "{slow}");
    assert!(texts.iter().any(|t| t.contains("orders")), "{texts:?}");
    for text in &texts {
        assert!(
            !text.contains("pgmcp") && !text.contains("OPERATOR(pg_catalog.") && !text.contains("set_config"),
            "pgmcp's own statement listed: {text}"
        );
    }
    assert_eq!(slow["facts"]["sees_all_sessions"], json!(true), "{slow}");

    // A lock held by another session, and one waiting for it.
    let mut holder = Session::open(&db);
    let pid = holder.send("SELECT pg_backend_pid();", Some("pid"))[0].clone();
    holder.send("BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE;", Some("locked"));
    let mut waiter = Session::open(&db);
    waiter.send("SELECT count(*) FROM orders;", None);
    let until = Instant::now() + Duration::from_secs(20);
    while db.psql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'orders' AND NOT l.granted") == "0" {
        assert!(Instant::now() < until, "the second session never waited");
        std::thread::sleep(Duration::from_millis(100));
    }
    let locks = diagnose(&mut mcp, "locks");
    assert_eq!(locks["facts"]["waiting"], json!(1), "{locks}");
    let blocked = &locks["facts"]["blocked"];
    assert_eq!(blocked.as_array().unwrap().len(), 1, "{locks}");
    assert_eq!(blocked[0]["blocking_pid"].to_string(), pid, "{locks}");
    assert_eq!(blocked[0]["blocking_state"], "idle in transaction", "{locks}");
    assert!(
        blocked[0]["blocked_query"].as_str().unwrap().contains("FROM orders"),
        "{locks}"
    );
    let reading = locks["reading"].as_str().unwrap();
    assert!(
        reading.starts_with("1 session waits for locks") && reading.contains(&pid),
        "{reading}"
    );

    let connections = diagnose(&mut mcp, "connections");
    let facts = &connections["facts"];
    assert!(facts["in_this_database"].as_i64().unwrap() >= 3, "{connections}");
    assert!(facts["idle_in_transaction"].as_i64().unwrap() >= 1, "{connections}");
    assert!(facts["waiting_for_locks"].as_i64().unwrap() >= 1, "{connections}");
    assert_eq!(facts["state_hidden"], json!(0), "{connections}");
    assert!(
        connections["reading"]
            .as_str()
            .unwrap()
            .contains("idle in a transaction"),
        "{connections}"
    );
    drop(waiter);
    drop(holder);
}

/// A role without pg_read_all_stats sees its own sessions only: the
/// checks still answer, and the reading says what is hidden and which
/// grant shows it.
#[test]
fn a_role_that_sees_less_is_told_what_is_hidden() {
    let db = pg::server().database();
    known_state(&db);
    let server = pg::server();
    let login = format!("{}_plain", db.name);
    db.psql(&format!(
        "CREATE ROLE {login} LOGIN PASSWORD 'pw'; GRANT CONNECT ON DATABASE {db} TO {login};
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO {login};",
        db = db.name
    ));
    let url = format!("postgres://{login}:pw@{}:{}/{}", server.host(), server.port(), db.name);
    let (_dir, mut mcp) = serve_at(&url, json!({}));
    let mut other = Session::open(&db);
    other.send("BEGIN; SELECT 1;", Some("open"));
    let connections = diagnose(&mut mcp, "connections");
    assert!(
        connections["facts"]["state_hidden"].as_i64().unwrap() >= 1,
        "{connections}"
    );
    let reading = connections["reading"].as_str().unwrap();
    assert!(
        reading.contains(&format!("hidden from role {login}")) && reading.contains("pg_read_all_stats"),
        "{reading}"
    );
    let slow = diagnose(&mut mcp, "slow_queries");
    assert!(slow["facts"]["texts_hidden"].as_i64().unwrap() >= 1, "{slow}");
    assert!(
        slow["reading"].as_str().unwrap().contains("pg_read_all_stats"),
        "{slow}"
    );
    drop(other);
}

/// Without pg_stat_statements in the database (its library preloaded),
/// slow_queries says to create the extension; the other checks answer as
/// ever, in either mode.
#[test]
fn slow_queries_without_the_extension_says_how_to_install_it() {
    let db = pg::server().database();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve_at(&db.url, json!({"server": {"read_only": read_only}}));
        let slow = diagnose(&mut mcp, "slow_queries");
        assert_eq!(slow["available"], json!(false), "{slow}");
        let reading = slow["reading"].as_str().unwrap();
        assert!(
            reading.contains("CREATE EXTENSION pg_stat_statements") && !reading.contains("shared_preload_libraries"),
            "{slow}"
        );
        assert_eq!(diagnose(&mut mcp, "vacuum")["available"], json!(true));
    }
}

/// pgmcp vouches for pg_stat_statements' own function only while the
/// catalog shows it belongs to the extension: once it does not (a
/// superuser took it out of the extension), slow_queries does not call it
/// and says how to mend it.
#[test]
fn slow_queries_calls_only_the_extensions_own_function() {
    let db = pg::server().database();
    known_state(&db);
    let (_dir, mut mcp) = serve_at(&db.url, json!({}));
    assert_eq!(diagnose(&mut mcp, "slow_queries")["available"], json!(true));
    db.psql("ALTER EXTENSION pg_stat_statements DROP FUNCTION pg_stat_statements(boolean)");
    let slow = diagnose(&mut mcp, "slow_queries");
    assert_eq!(slow["available"], json!(false), "{slow}");
    assert!(
        slow["reading"].as_str().unwrap().contains("not the extension's own"),
        "{slow}"
    );
    // As a query, the function is what the catalog says: refused.
    let got = mcp.call_tool("query", json!({"sql": "SELECT count(*) FROM pg_stat_statements(true)"}));
    assert!(is_error(&got) && tool_text(&got).contains("read-only mode"), "{got}");
}

/// The checks' statements pass the same guard as a query: what the
/// configuration blocks, a check may not run either; an unknown check is
/// refused by the tool's schema; and diagnose is switched off like the
/// other built-ins, and not listed where no database is PostgreSQL.
#[test]
fn the_guard_and_the_switches_apply() {
    let db = pg::server().database();
    let (_dir, mut mcp) = serve_at(
        &db.url,
        json!({"protection": {"blocked_functions": ["pg_blocking_pids"]}}),
    );
    let got = mcp.call_tool("diagnose", json!({"check": "locks"}));
    assert!(is_error(&got) && tool_text(&got).contains("pg_blocking_pids"), "{got}");
    let got = mcp.call_tool("diagnose", json!({"check": "vacuum"}));
    assert!(!is_error(&got), "{got}");
    let got = mcp.call_tool("diagnose", json!({"check": "everything"}));
    assert!(is_error(&got) || got.get("error").is_some(), "{got}");

    let (_dir, mut mcp) = serve_at(&db.url, json!({"tools_enabled": {"diagnose": false}}));
    let list = mcp.request("tools/list", json!({}));
    assert!(!tool_names(&list["result"]).contains(&"diagnose"), "{list}");
    let (_dir, mut mcp) = serve_at(&db.url, json!({"tools_enabled": {"query": false}}));
    let list = mcp.request("tools/list", json!({}));
    assert!(
        !tool_names(&list["result"]).contains(&"diagnose"),
        "off with query: {list}"
    );

    let tools = tools_on_sqlite();
    assert!(!tools.iter().any(|t| t == "diagnose"), "{tools:?}");
}

/// A primary with a streaming standby: the primary lists its replica, the
/// standby says it is one.
#[test]
fn replication_seen_from_the_primary_and_the_standby() {
    let primary = pg::private_server();
    let standby = primary.standby();
    let db = primary.database();
    // pg_stat_replication's details are for roles that see every session.
    let url = monitor_url(&primary, &db);
    let until = Instant::now() + Duration::from_secs(30);
    while primary.psql(
        "postgres",
        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
    ) != "1"
        || standby.psql(
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{}'", db.name),
        ) != "1"
    {
        assert!(Instant::now() < until, "the standby never streamed");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (_dir, mut mcp) = serve_at(&url, json!({}));
    let seen = diagnose(&mut mcp, "replication");
    assert_eq!(seen["facts"]["replicas"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(seen["facts"]["replicas"][0]["state"], "streaming", "{seen}");
    assert!(
        seen["reading"].as_str().unwrap().contains("1 replica connected"),
        "{seen}"
    );

    let at_standby = url.replace(&format!(":{}/", primary.port()), &format!(":{}/", standby.port()));
    assert_ne!(at_standby, url);
    let (_dir, mut mcp) = serve_at(&at_standby, json!({}));
    let seen = diagnose(&mut mcp, "replication");
    assert_eq!(seen["facts"]["standby"], json!(true), "{seen}");
    assert!(
        seen["reading"].as_str().unwrap().contains("is a standby with"),
        "{seen}"
    );
}
