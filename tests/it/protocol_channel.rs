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
    every_switch_on_with(dir, false)
}

/// [`every_switch_on`], read-only mode on or off.
fn every_switch_on_with(dir: &Path, read_only: bool) -> String {
    let switches: serde_json::Map<String, Value> = Rule::switches()
        .map(|(_, flag)| (flag.to_owned(), json!(true)))
        .collect();
    let path = dir.join("config.json");
    let doc = json!({
        "server": {"read_only": read_only},
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
        // Red team: spellings that are seen.
        "ATTACH 'file:///proc/self/fd/3?mode=ro' AS x",
        "ATTACH 'file:/proc/self/fd/3%3Fmode=ro' AS x",
        "ATTACH \"/proc/self/fd/3\" AS x",
        "ATTACH [/proc/self/fd/3] AS x",
        "ATTACH `/dev/fd/3` AS x",
        "VACUUM INTO 'file://localhost/dev/fd/1'",
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
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    for (sql, says) in [
        ("COPY (SELECT 42 AS x) TO STDOUT", "COPY ... STDOUT is not allowed"),
        ("COPY t TO STDOUT (FORMAT csv)", "COPY ... STDOUT is not allowed"),
        ("COPY t FROM STDIN", "COPY ... STDIN is not allowed"),
        ("COPY t TO '/dev/stdout'", "names pgmcp's own process"),
        ("COPY t TO '/proc/self/fd/1' (FORMAT json)", "names pgmcp's own process"),
        ("SELECT * FROM read_csv('/dev/stdin')", "names pgmcp's own process"),
        ("SELECT * FROM '/dev/fd/0'", "names pgmcp's own process"),
        ("ATTACH '/dev/stdin' AS x", "names pgmcp's own process"),
        // Red team: spellings that are seen.
        (
            "SELECT * FROM read_text($$/proc/self/fd/3$$)",
            "names pgmcp's own process",
        ),
        (
            "SELECT size FROM read_blob('file:///proc/self/fd/3')",
            "names pgmcp's own process",
        ),
        (
            "SELECT size FROM read_blob('\\proc\\self\\fd\\3')",
            "names pgmcp's own process",
        ),
        (
            "SELECT size FROM read_blob('/proc/self/fd/../fd/3')",
            "names pgmcp's own process",
        ),
        (
            "SELECT * FROM read_csv(['/tmp/a.csv', '/dev/fd/0'])",
            "names pgmcp's own process",
        ),
        (
            "SELECT * FROM sqlite_scan('/proc/self/fd/3', 't')",
            "names pgmcp's own process",
        ),
        ("SELECT * FROM '/proc/self/fd/3'", "names pgmcp's own process"),
        ("COPY t FROM \"/proc/self/fd/0\"", "names pgmcp's own process"),
        ("COPY t TO '/dev//stdout' (FORMAT json)", "names pgmcp's own process"),
        (
            "COPY t TO '/proc/self/fd/1' (FORMAT csv, PARTITION_BY (a))",
            "names pgmcp's own process",
        ),
        ("ATTACH '/proc/self/fd/3' (TYPE sqlite)", "names pgmcp's own process"),
        ("EXPORT DATABASE '/proc/self/fd'", "names pgmcp's own process"),
        ("LOAD '/proc/self/fd/3'", "names pgmcp's own process"),
        ("INSTALL x FROM '/proc/self/fd'", "names pgmcp's own process"),
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

// ---------------------------------------------------------------------------
// Red team: spellings of pgmcp's own descriptors the guard does not see.
// ---------------------------------------------------------------------------

/// A served DuckDB file made by `sql`, every switch on; its directory holds
/// the config and the log.
#[cfg(feature = "duckdb")]
fn duckdb_session(sql: &str) -> (tempfile::TempDir, McpProcess) {
    let (dir, db) = files::duckdb::fixture(sql);
    let config = every_switch_on(dir.path());
    let mcp = serve(&config, &files::duckdb::url(&db));
    (dir, mcp)
}

/// pgmcp's protocol descriptors: (input, output), found as the close-on-exec
/// pipes it holds besides 0-2 (the harness gives it a file for stderr), told
/// apart by their access mode in fdinfo.
#[cfg(feature = "duckdb")]
fn protocol_fds(pid: u32) -> (u32, u32) {
    let (mut input, mut output) = (None, None);
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap() {
        let entry = entry.unwrap();
        let fd: u32 = entry.file_name().to_string_lossy().parse().unwrap();
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if fd <= 2 || !target.to_string_lossy().starts_with("pipe:") {
            continue;
        }
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .map(|f| u32::from_str_radix(f.trim(), 8).unwrap())
            .unwrap();
        // The channel's own are close-on-exec; a pipe inherited from the
        // test runner (cargo's jobserver) is not.
        if flags & 0o2000000 == 0 {
            continue;
        }
        match flags & 3 {
            0 => input = Some(fd),
            _ => output = Some(fd),
        }
    }
    (
        input.expect("the protocol's input pipe"),
        output.expect("the protocol's output pipe"),
    )
}

/// The descriptor pgmcp holds on `path` (its log file).
fn fd_of(pid: u32, path: &Path) -> u32 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| std::fs::read_link(e.path()).is_ok_and(|t| t == path))
        .map(|e| e.file_name().to_string_lossy().parse().unwrap())
        .unwrap_or_else(|| panic!("pgmcp holds no descriptor on {}", path.display()))
}

/// Must be refused; and must not have written a stray line into stdout
/// (`refused` and `still_answers` panic on one).
fn refused_as_own_process(mcp: &mut McpProcess, sql: &str) {
    let text = refused(mcp, sql);
    assert!(own_process_refusal(&text), "{sql}: {text}");
    still_answers(mcp);
}

/// The guard's refusal, or — for a name only the engine resolves (computed,
/// a glob) — DuckDB's: its file access allows every directory but `/proc`,
/// `/dev` and `/sys`.
fn own_process_refusal(text: &str) -> bool {
    text.contains("names pgmcp's own process")
        || text.contains("Permission Error: Cannot access") && text.contains("disabled by configuration")
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_copy_to_a_double_quoted_name_never_reaches_the_protocol_output() {
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let (_, output) = protocol_fds(mcp.pid());
    // Found open: the line "INJECTED" landed on stdout between two answers.
    refused_as_own_process(
        &mut mcp,
        &format!("COPY (SELECT 'INJECTED' AS x) TO \"/proc/self/fd/{output}\" (FORMAT csv, HEADER false)"),
    );
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_copy_to_joined_string_literals_never_reaches_the_protocol_output() {
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let (_, output) = protocol_fds(mcp.pid());
    // A whole forged JSON-RPC answer to a later request id works just as well.
    refused_as_own_process(
        &mut mcp,
        &format!("COPY (SELECT 'INJECTED' AS x) TO '/pro'\n'c/self/fd/{output}' (FORMAT csv, HEADER false)"),
    );
}

/// A read of the protocol's input pipe blocks in DuckDB and takes the
/// client's next requests (or tears one in half: pgmcp then answers a parse
/// error with no id). Sent without waiting; the requests after it must still
/// be answered, and the read itself refused.
#[cfg(feature = "duckdb")]
fn input_is_not_stolen(mcp: &mut McpProcess, sql: &str) {
    let short = std::time::Duration::from_secs(10);
    mcp.send(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
        "params": {"name": "query", "arguments": {"sql": sql}}}));
    std::thread::sleep(std::time::Duration::from_millis(500));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 901, "method": "tools/list"}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 902, "method": "tools/call",
        "params": {"name": "query", "arguments": {"sql": "SELECT 41 + 1 AS n"}}}));
    // Found open: no answer to 901 (DuckDB took it) and a parse error instead.
    let listed = mcp.recv_response(&json!(901), short);
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let answered = mcp.recv_response(&json!(902), short);
    assert_eq!(tool_json(&answered["result"])["rows"][0]["n"], 42, "{answered}");
    let read = mcp.recv_response(&json!(900), short);
    assert_eq!(read["result"]["isError"], true, "{sql} ran: {read}");
    assert!(own_process_refusal(tool_text(&read["result"])), "{read}");
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_read_csv_of_a_computed_path_never_steals_the_protocol_input() {
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let (input, _) = protocol_fds(mcp.pid());
    input_is_not_stolen(
        &mut mcp,
        &format!(
            "SELECT line FROM read_csv('/pro' || 'c/self/fd/{input}', columns = {{'line': 'VARCHAR'}}, \
             delim = '|', quote = '', header = false, buffer_size = 64) LIMIT 1"
        ),
    );
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_copy_from_joined_string_literals_never_steals_the_protocol_input() {
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t (line VARCHAR)");
    let (input, _) = protocol_fds(mcp.pid());
    input_is_not_stolen(
        &mut mcp,
        &format!("COPY t FROM '/pro'\n'c/self/fd/{input}' (DELIMITER '|', QUOTE '', HEADER false, BUFFER_SIZE 64)"),
    );
}

/// Names only DuckDB resolves — globs, concatenations, functions of
/// strings — reach none of pgmcp's descriptors under `/proc` or `/dev`:
/// DuckDB's own file access allows every directory but those. (A regular
/// file pgmcp has open, such as its log, stays readable by its own name, as
/// any file is with `allow_file_functions`.)
#[cfg(feature = "duckdb")]
#[test]
fn duckdb_globs_and_computed_paths_reach_no_descriptor_of_pgmcps() {
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let (input, output) = protocol_fds(mcp.pid());
    for fd in [input, output] {
        for sql in [
            format!("SELECT content FROM read_text('/pro?/self/fd/{fd}')"),
            format!("SELECT content FROM read_text('/de[v]/fd/{fd}')"),
            format!("SELECT content FROM read_text('/pro' || 'c/self/fd/{fd}')"),
            format!("SELECT size FROM read_blob(concat('/dev/', 'fd/{fd}'))"),
            format!("SELECT * FROM sniff_csv('/pro' || 'c/self/fd/{fd}')"),
        ] {
            refused_as_own_process(&mut mcp, &sql);
        }
    }
    for sql in [
        "SELECT * FROM glob('/pro[c]/self/fd/*')",
        "SELECT * FROM glob('/' || 'proc/self/fd/*')",
        "SELECT * FROM glob('/de?/*')",
    ] {
        let result = mcp.call_tool("query", json!({"sql": sql}));
        let listed = match result["isError"] == true {
            true => Vec::new(),
            false => tool_json(&result)["rows"].as_array().cloned().unwrap_or_default(),
        };
        assert!(listed.is_empty(), "{sql} listed {listed:?}");
        still_answers(&mut mcp);
    }
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_attach_of_a_double_quoted_name_never_opens_pgmcps_own_descriptor() {
    let (dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let log = fd_of(mcp.pid(), &dir.path().join("pgmcp.log"));
    // Found open: DuckDB opened the log (it "is not a valid DuckDB database file").
    refused_as_own_process(&mut mcp, &format!("ATTACH \"/proc/self/fd/{log}\" AS x"));
    refused_as_own_process(&mut mcp, &format!("ATTACH \"/proc/self/fd/{log}\" AS x (TYPE sqlite)"));
}

#[test]
fn sqlite_attach_of_a_percent_encoded_uri_never_opens_pgmcps_own_descriptor() {
    let (dir, db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let config = every_switch_on(dir.path());
    let mut mcp = serve(&config, &files::sqlite::url(&db));
    let log = fd_of(mcp.pid(), &dir.path().join("pgmcp.log"));
    // Found open: SQLite opened and read the log ("file is not a database").
    refused_as_own_process(&mut mcp, &format!("ATTACH 'file:/%70roc/self/fd/{log}?mode=ro' AS x"));
    refused_as_own_process(&mut mcp, &format!("ATTACH 'file:/dev/%66d/{log}?mode=ro' AS x"));
    refused_as_own_process(&mut mcp, &format!("ATTACH 'file:%2Fproc%2Fself%2Ffd%2F{log}' AS x"));
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_copy_to_the_protocol_input_never_forges_client_requests() {
    let (_dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let (input, _) = protocol_fds(mcp.pid());
    let forged = r#"{"jsonrpc":"2.0","id":"forged","method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT 666 AS evil"}}}"#;
    // Found open: it ran, and pgmcp answered id "forged" (rows [{"evil":666}]),
    // a request the client never sent.
    refused_as_own_process(
        &mut mcp,
        &format!(
            "COPY (SELECT '{forged}' AS x) TO \"/proc/self/fd/{input}\" \
             (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '|')"
        ),
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    let stray = mcp.take_pending();
    assert!(stray.is_empty(), "answers to requests the client never sent: {stray:?}");
}

/// A symlink into `/dev` followed by `..` (`/run/shm/../fd/N` on a stock
/// Debian; any link someone planted in `/tmp` does the same): DuckDB
/// collapses `..` in the text before it resolves links, so its check sees an
/// allowed directory while the kernel opens `/proc/self/fd/N` — the MCP
/// channel's pipe. Open until the channel holds no descriptor a path can
/// reopen (a relay process holding the pipes, talking to pgmcp over a socket).
#[cfg(feature = "duckdb")]
#[test]
#[ignore = "hole: DuckDB resolves '..' before symlinks: <link to /dev/shm>/../fd/N reaches the protocol's pipes"]
fn duckdb_dot_dot_after_a_symlink_never_reaches_the_protocol_output() {
    let (dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let link = dir.path().join("shm");
    std::os::unix::fs::symlink("/dev/shm", &link).unwrap();
    let (_, output) = protocol_fds(mcp.pid());
    refused_as_own_process(
        &mut mcp,
        &format!(
            "COPY (SELECT 'INJECTED' AS x) TO '{}/../fd/{output}' (FORMAT csv, HEADER false)",
            link.display()
        ),
    );
}

/// Read-only mode changes nothing of it: reads of pgmcp's own descriptors,
/// written or computed, on both embedded engines, are refused, and the
/// session still answers.
#[test]
fn read_only_mode_keeps_pgmcps_own_descriptors_out_of_reach() {
    let (dir, db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let config = every_switch_on_with(dir.path(), true);
    let mut mcp = serve(&config, &files::sqlite::url(&db));
    for sql in [
        "ATTACH '/proc/self/fd/0' AS x",
        "ATTACH 'file:/%70roc/self/fd/0?mode=ro' AS x",
    ] {
        refused_as_own_process(&mut mcp, sql);
    }
    #[cfg(feature = "duckdb")]
    {
        let (dir, db) = files::duckdb::fixture("CREATE TABLE t AS SELECT 1 AS a");
        let config = every_switch_on_with(dir.path(), true);
        let mut mcp = serve(&config, &files::duckdb::url(&db));
        let (input, output) = protocol_fds(mcp.pid());
        for fd in [input, output] {
            for sql in [
                format!("SELECT content FROM read_text('/proc/self/fd/{fd}')"),
                format!("SELECT content FROM read_text('/pro' || 'c/self/fd/{fd}')"),
                format!("SELECT * FROM read_csv(\"/dev/fd/{fd}\")"),
            ] {
                refused_as_own_process(&mut mcp, &sql);
            }
        }
    }
}
