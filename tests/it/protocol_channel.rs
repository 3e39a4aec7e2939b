//! stdin and stdout carry the MCP protocol and nothing else: the served
//! process points descriptors 0 and 1 at /dev/null once the protocol has
//! taken them, and no statement may name pgmcp's own streams or open files
//! (`COPY ... TO STDOUT`, `/dev/stdout`, `/proc/self/fd/1`), whatever the
//! protection switches allow. Against the real binary and real engines;
//! after each refusal the session must still answer.

use std::path::Path;

use pgmcp::guard::Rule;
use serde_json::{Value, json};

use crate::support::files;
use crate::support::stdio::{McpProcess, tool_json, tool_text};

/// A private config allowing every switch, writable, logging next to it.
fn every_switch_on(dir: &Path) -> String {
    let switches: serde_json::Map<String, Value> = Rule::switches()
        .map(|(_, flag)| (flag.to_owned(), json!(true)))
        .collect();
    let path = dir.join("config.json");
    let doc = json!({
        "server": {"read_only": false},
        "protection": switches,
        "logging": {"output": dir.join("pgmcp.log")},
    });
    std::fs::write(&path, doc.to_string()).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    path.display().to_string()
}

fn serve(config: &str, database: &str) -> McpProcess {
    let mut mcp = McpProcess::spawn(&["serve", "--config", config], &[("PGMCP_DATABASE", database)]);
    mcp.initialize();
    mcp
}

/// The refusal's text, for a statement that must be refused.
fn refused(mcp: &mut McpProcess, sql: &str) -> String {
    let result = mcp.call_tool("query", json!({"sql": sql}));
    assert_eq!(result["isError"], true, "{sql} ran: {result}");
    tool_text(&result).to_owned()
}

/// The session still answers, one whole JSON line per call.
fn still_answers(mcp: &mut McpProcess) {
    let result = mcp.call_tool("query", json!({"sql": "SELECT 41 + 1 AS n"}));
    assert_eq!(tool_json(&result)["rows"][0]["n"], 42, "{result}");
}

#[test]
fn descriptors_0_and_1_point_at_dev_null_while_the_session_runs() {
    let (dir, db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let config = every_switch_on(dir.path());
    let mut mcp = serve(&config, &files::sqlite::url(&db));
    still_answers(&mut mcp);
    for fd in [0, 1] {
        let target = std::fs::read_link(format!("/proc/{}/fd/{fd}", mcp.pid())).unwrap();
        assert_eq!(target, Path::new("/dev/null"), "descriptor {fd}");
    }
    still_answers(&mut mcp);
}

#[test]
fn no_sqlite_statement_names_pgmcps_own_streams() {
    let (dir, db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let config = every_switch_on(dir.path());
    let mut mcp = serve(&config, &files::sqlite::url(&db));
    for sql in [
        "ATTACH '/dev/stdin' AS x",
        "ATTACH '/proc/self/fd/0' AS x",
        "ATTACH '../../../../../../dev//stdin' AS x",
        "VACUUM INTO '/dev/stdout'",
        "VACUUM INTO 'file:/dev/fd/1'",
    ] {
        let text = refused(&mut mcp, sql);
        assert!(text.contains("names pgmcp's own process"), "{sql}: {text}");
        still_answers(&mut mcp);
    }
    // A computed name is only known when SQLite opens it: refused as such.
    for sql in [
        "ATTACH '/dev/' || 'stdin' AS x",
        "ATTACH DATABASE ('/pr' || 'oc/self/fd/0') AS x",
        "VACUUM INTO '/dev/' || 'stdout'",
        "VACUUM main INTO printf('%s/%s', '/dev', 'stdout')",
    ] {
        let text = refused(&mut mcp, sql);
        assert!(
            text.contains("needs its file name as one string literal"),
            "{sql}: {text}"
        );
        still_answers(&mut mcp);
    }
    // Files named plainly still attach, with the switch on.
    let other = dir.path().join("other.db");
    files::sqlite::make_db(&other, "CREATE TABLE u (b int)");
    let result = mcp.call_tool(
        "query",
        json!({"sql": format!("ATTACH '{}' AS other", other.display())}),
    );
    assert_ne!(result["isError"], true, "{result}");
    still_answers(&mut mcp);
}

#[cfg(feature = "duckdb")]
#[test]
fn no_duckdb_statement_names_pgmcps_own_streams() {
    let (dir, db) = files::duckdb::fixture("CREATE TABLE t AS SELECT 1 AS a");
    let config = every_switch_on(dir.path());
    let mut mcp = serve(&config, &files::duckdb::url(&db));
    for (sql, says) in [
        ("COPY (SELECT 42 AS x) TO STDOUT", "COPY ... STDOUT is not allowed"),
        ("COPY t TO STDOUT (FORMAT csv)", "COPY ... STDOUT is not allowed"),
        ("COPY t FROM STDIN", "COPY ... STDIN is not allowed"),
        ("COPY t TO '/dev/stdout'", "names pgmcp's own process"),
        ("COPY t TO '/proc/self/fd/1' (FORMAT json)", "names pgmcp's own process"),
        ("SELECT * FROM read_csv('/dev/stdin')", "names pgmcp's own process"),
        ("SELECT * FROM '/dev/fd/0'", "names pgmcp's own process"),
        ("ATTACH '/dev/stdin' AS x", "names pgmcp's own process"),
    ] {
        let text = refused(&mut mcp, sql);
        assert!(text.contains(says), "{sql}: {text}");
        still_answers(&mut mcp);
    }
}

/// DuckDB runs COPY FROM DATABASE as a pragma; the pragma switch alone does
/// not let it copy between databases.
#[cfg(feature = "duckdb")]
#[tokio::test(flavor = "multi_thread")]
async fn copy_from_database_needs_the_attach_switch() {
    let (_dir, db) = files::duckdb::fixture("CREATE TABLE t AS SELECT 1 AS a");
    let engine = files::duckdb::allowing(&db, "allow_pragma_write");
    let e = crate::support::engine::err_text(
        crate::support::engine::run(&engine, "COPY FROM DATABASE data TO memory").await,
    );
    assert!(
        e.contains("COPY FROM DATABASE is not allowed") && e.contains("protection.allow_attach"),
        "{e}"
    );
}
