//! Variants of "every door through the same fences": memory that follows the
//! data rather than the answer's cap, through doors the read budget does not
//! watch (column names, NULLs, errors, notices, COPY, catalog answers), and
//! other fences, each against the real binary.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::stdio::{McpProcess, tool_json, tool_text};
use crate::support::{PEAK_BOUND_KB, pg};

fn write_config(dir: &Path, extra: Value) -> String {
    let path = dir.join("config.json");
    let mut text = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {
            "default_timeout_seconds": 60,
            "list_tables_timeout_seconds": 60,
            "describe_table_timeout_seconds": 60,
        },
    });
    if let (Some(base), Some(more)) = (text.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            match (base.get_mut(k), v) {
                (Some(Value::Object(b)), Value::Object(m)) => b.extend(m.clone()),
                _ => {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
    }
    std::fs::write(&path, text.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn pg_session(db: &pg::TestDb, config: &str) -> McpProcess {
    let mut mcp = McpProcess::spawn(&["serve", "--config", config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    mcp.initialize();
    let warm = mcp.call_tool("query", json!({ "sql": "SELECT 1 AS one" }));
    assert_eq!(tool_json(&warm)["rows"], json!([{"one": 1}]));
    mcp
}

fn sqlite_session(file: &Path, config: &str) -> McpProcess {
    let url = format!("sqlite://{}", file.display());
    let mut mcp = McpProcess::spawn(&["serve", "--config", config, "--database", &url], &[]);
    mcp.initialize();
    let warm = mcp.call_tool("query", json!({ "sql": "SELECT 1 AS one" }));
    assert_eq!(tool_json(&warm)["rows"], json!([{"one": 1}]));
    mcp
}

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

// ---------------------------------------------------------------------------
// Memory: doors the read budget does not count.

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

// ---------------------------------------------------------------------------
// pgmcp's own SQL and the search path: type names in casts.

/// The database's owner puts a schema before `pg_catalog` on the search path
/// (`ALTER DATABASE ... SET search_path`) and plants a domain named `text`
/// there, whose CHECK calls a function of theirs. The catalog SQL writes
/// `$1::text` and `length(v)::text` unqualified: a cast resolves its type name
/// through the search path, so every cast to "text" would run the planted
/// function in `list_tables` with pgmcp's role. It must never run.
#[test]
fn planted_text_domain_never_runs_in_catalog_calls() {
    let db = pg::server().database();
    db.psql(&format!(
        "CREATE SCHEMA evil;
         CREATE FUNCTION evil.f(pg_catalog.text) RETURNS boolean LANGUAGE plpgsql AS
           $$BEGIN RAISE EXCEPTION 'PLANTED-CAST-RAN on %', $1; END$$;
         CREATE DOMAIN evil.text AS pg_catalog.text CHECK (evil.f(VALUE));
         CREATE TABLE public.t (a int);
         COMMENT ON TABLE public.t IS '{}';
         ALTER DATABASE {} SET search_path = evil, pg_catalog, public;",
        "c".repeat(5000),
        db.name
    ));
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut mcp = pg_session(&db, &config);
    for args in [json!({}), json!({"schema": "public"}), json!({"pattern": "t"})] {
        let result = mcp.call_tool("list_tables", args.clone());
        let text = tool_text(&result).to_owned();
        assert!(!text.contains("PLANTED-CAST-RAN"), "{args}: a planted cast ran: {text}");
        assert_ne!(result["isError"], true, "{args}: {text}");
        let out = tool_json(&result);
        assert_eq!(out["tables"][0]["name"], "t", "{args}: {out:#}");
    }
    let result = mcp.call_tool("describe_table", json!({"table": "t"}));
    let text = tool_text(&result).to_owned();
    assert!(
        !text.contains("PLANTED-CAST-RAN"),
        "describe_table: a planted cast ran: {text}"
    );
    assert_ne!(result["isError"], true, "{text}");
}

// ---------------------------------------------------------------------------
// Variants that held.

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

/// At `debug`, the log holds neither a parameter, nor a value from a row, nor
/// an error message that quotes a value (errors by kind only); and it is 0600.
#[test]
fn debug_log_holds_no_values_parameters_or_error_texts() {
    use std::os::unix::fs::PermissionsExt;
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"logging": {"level": "debug"}}));
    let mut mcp = pg_session(&db, &config);
    let r = mcp.call_tool(
        "query",
        json!({"sql": "SELECT $1::text AS p", "params": ["PARAM-SECRET-1"]}),
    );
    assert_eq!(tool_json(&r)["rows"], json!([{"p": "PARAM-SECRET-1"}]));
    let r = mcp.call_tool(
        "query",
        json!({"sql": "SELECT $1::int AS n", "params": ["ERRPARAM-SECRET-2"]}),
    );
    assert!(
        tool_text(&r).contains("ERRPARAM-SECRET-2"),
        "the error quotes it: {}",
        tool_text(&r)
    );
    let r = mcp.call_tool("query", json!({"sql": "SELECT upper(md5('x')) || 'rowvalue' AS v"}));
    assert_ne!(r["isError"], true);
    let r = mcp.call_tool("describe_table", json!({"table": "DESCRIBE-SECRET-3"}));
    assert_eq!(r["isError"], true);
    mcp.close_stdin();
    mcp.wait_exit(std::time::Duration::from_secs(10));
    let log_path = dir.path().join("pgmcp.log");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(!log.is_empty());
    // upper(md5('x')) || 'rowvalue', as the query above computes it.
    let row_value = "9DD4E461268C8034F5C8564E155C67A6rowvalue";
    for secret in ["PARAM-SECRET-1", "ERRPARAM-SECRET-2", "invalid input syntax", row_value] {
        assert!(
            !log.to_uppercase().contains(&secret.to_uppercase()),
            "{secret} in the log:\n{log}"
        );
    }
    let mode = std::fs::metadata(&log_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
