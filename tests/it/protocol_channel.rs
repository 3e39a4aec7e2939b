//! stdin and stdout carry the MCP protocol and nothing else: the served
//! process points descriptors 0 and 1 at /dev/null once the protocol has
//! taken them, and no statement may name pgmcp's own streams or open files
//! (`COPY ... TO STDOUT`, `/dev/stdout`, `/proc/self/fd/1`), whatever the
//! protection switches allow. Against the real binary and real engines;
//! after each refusal the session must still answer.

use std::path::Path;

use pgmcp::Rule;
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
        // What the guard alone does: the person's word has its own tests.
        "confirm": "never",
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
/// pipes or sockets it holds besides 0-2 (the harness gives it a file for
/// stderr), told apart by their access mode in fdinfo (a socket is both).
#[cfg(feature = "duckdb")]
fn protocol_fds(pid: u32) -> (u32, u32) {
    let (mut input, mut output) = (None, None);
    let mut fds: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap())
        .collect();
    fds.sort();
    for fd in fds {
        let Ok(target) = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) else {
            continue;
        };
        let target = target.to_string_lossy().into_owned();
        if fd <= 2 || !(target.starts_with("pipe:") || target.starts_with("socket:")) {
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
        match (flags & 3, target.starts_with("socket:")) {
            (0, false) => input = Some(fd),
            (_, false) => output = Some(fd),
            (_, true) if input.is_none() => input = Some(fd),
            (_, true) => output = output.or(Some(fd)),
        }
    }
    (
        input.expect("the protocol's input descriptor"),
        output.expect("the protocol's output descriptor"),
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
        || text.contains("goes back up with '..'")
        || text.contains("Permission Error: Cannot access") && text.contains("disabled by configuration")
        || kernel_refusal(text)
}

/// The kernel's answer to an open the file sandbox stops (Landlock), or of a
/// socket, which no path reopens.
fn kernel_refusal(text: &str) -> bool {
    text.contains("Permission denied") || text.contains("No such device or address")
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
/// Debian; any link someone planted in `/tmp` does the same): DuckDB's check
/// of the text sees an allowed directory while the kernel opens
/// `/proc/self/fd/N`. Found open: "INJECTED" on the protocol's output. Now
/// the guard refuses the literal `..`; computed, the kernel does
/// (`duckdb_computed_dot_dot_routes_reach_nothing_the_kernel_fences`).
#[cfg(feature = "duckdb")]
#[test]
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
        "ATTACH '/var/run/../proc/self/fd/2' AS x",
        "ATTACH 'file:/var/run/%2E%2E/proc/self/environ?mode=ro' AS x",
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
        // The kernel's fence holds in read-only mode too: `..` after a link,
        // computed, to every pipe of the session, stderr and the environment.
        let mut targets = session_pipes(&mcp);
        targets.extend(["/proc/self/fd/2", "/proc/self/environ"].map(str::to_owned));
        for target in targets {
            let rest = target.trim_start_matches("/proc/");
            let sql = format!("SELECT content FROM read_text('/var/run/' || repeat('.', 2) || '/pro' || 'c/{rest}')");
            let result = mcp.call_tool("query", json!({"sql": sql}));
            if result["isError"] == true {
                let text = tool_text(&result);
                assert!(own_process_refusal(text), "{sql}: {text}");
            } else {
                assert_eq!(tool_json(&result)["rows"], json!([]), "{sql} read: {result}");
            }
            still_answers(&mut mcp);
        }
    }
}

// ---------------------------------------------------------------------------
// The kernel's fence (src/process/sandbox.rs): with a file switch on, whatever the
// spelling, no statement reaches the channel's pipes (held by the relay), the
// client's, the environment, devices or another process.
// ---------------------------------------------------------------------------

/// The relay `pgmcp serve` started: its pid, a child of `server`.
fn relay_of(server: u32) -> u32 {
    let children = std::fs::read_to_string(format!("/proc/{server}/task/{server}/children")).unwrap();
    children
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .find(|pid: &u32| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"relay"))
        })
        .unwrap_or_else(|| panic!("pgmcp {server} started no relay: children {children:?}"))
}

/// Every pipe `pid` holds, as `/proc/<pid>/fd/<n>` paths.
fn pipes_of(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("pipe:")))
        .map(|e| format!("/proc/{pid}/fd/{}", e.file_name().to_string_lossy()))
        .collect()
}

/// With a file switch on, pgmcp itself holds no pipe: the client's are the
/// relay's (its 0 and 1), and pgmcp's channel is a socket. Without one,
/// no relay: pgmcp reads the client's pipes itself.
#[test]
fn with_a_file_switch_on_the_channel_is_a_socket_and_the_pipes_are_the_relays() {
    let (dir, db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let config = every_switch_on(dir.path());
    let mut mcp = serve(&config, &files::sqlite::url(&db));
    still_answers(&mut mcp);
    assert_eq!(pipes_of(mcp.pid()), Vec::<String>::new(), "pgmcp holds a pipe");
    // stderr too (red team: the client's stderr pipe, reopened, forged and
    // swallowed messages of clients that merge it into stdout).
    let stderr = std::fs::read_link(format!("/proc/{}/fd/2", mcp.pid())).unwrap();
    assert!(
        stderr.to_string_lossy().starts_with("socket:"),
        "pgmcp's stderr: {stderr:?}"
    );
    let relay = relay_of(mcp.pid());
    for fd in [0, 1] {
        let target = std::fs::read_link(format!("/proc/{relay}/fd/{fd}")).unwrap();
        assert!(
            target.to_string_lossy().starts_with("pipe:"),
            "relay's {fd}: {target:?}"
        );
    }
    let log = std::fs::read_to_string(dir.path().join("pgmcp.log")).unwrap();
    assert!(log.contains("file sandbox entered"), "{log}");

    let (plain_dir, plain_db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let plain = plain_dir.path().join("config.json");
    std::fs::write(
        &plain,
        json!({"logging": {"output": plain_dir.path().join("pgmcp.log")}}).to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&plain, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut mcp = serve(&plain.display().to_string(), &files::sqlite::url(&plain_db));
    still_answers(&mut mcp);
    assert!(pipes_of(mcp.pid()).len() >= 2, "pgmcp reads the client's pipes itself");
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", mcp.pid())).unwrap();
    assert_eq!(children.trim(), "", "no relay without a file switch");
}

/// Paths to every pipe that carries the session: the relay's and this test
/// process's (the client's ends).
#[cfg(feature = "duckdb")]
fn session_pipes(mcp: &McpProcess) -> Vec<String> {
    let mut pipes = pipes_of(relay_of(mcp.pid()));
    pipes.extend(pipes_of(std::process::id()));
    assert!(pipes.len() >= 4, "{pipes:?}");
    pipes
}

/// `..` after a link, in names only DuckDB computes (the guard sees no
/// literal): `/var/run` is `/run` on Debian and Ubuntu, so
/// `/var/run/../proc` is `/proc` to the kernel and `/var/proc` to DuckDB's
/// check of the text. Every pipe of the session, the environment, a device
/// and `/sys` stay out of reach, reading and writing.
#[cfg(feature = "duckdb")]
#[test]
fn duckdb_computed_dot_dot_routes_reach_nothing_the_kernel_fences() {
    let (dir, mut mcp) = duckdb_session("CREATE TABLE t AS SELECT 1 AS a");
    let link = dir.path().join("up");
    std::os::unix::fs::symlink("/", &link).unwrap();
    let shm = dir.path().join("shm");
    std::os::unix::fs::symlink("/dev/shm", &shm).unwrap();
    let (input, output) = protocol_fds(mcp.pid());
    let mut targets: Vec<String> = session_pipes(&mcp);
    targets.extend([format!("/proc/self/fd/{input}"), format!("/proc/self/fd/{output}")]);
    targets.extend(
        [
            // Red team: stderr, and an endless device that filled memory.
            "/proc/self/fd/2",
            "/dev/stderr",
            "/proc/self/environ",
            "/proc/self/cmdline",
            "/dev/shm",
            "/dev/urandom",
            "/sys/devices/system/cpu/online",
        ]
        .map(str::to_owned),
    );
    // Split so that no literal names /proc, /dev or /sys: the guard, which
    // would refuse those, sees nothing; the kernel alone answers.
    let hidden = |path: &str| {
        path.replace("proc", "pro' || 'c")
            .replace("dev", "de' || 'v")
            .replace("sys", "sy' || 's")
    };
    // DuckDB's own check stops some (it resolves what exists); the rest
    // pass it, as before the sandbox, and meet the kernel.
    let mut by_kernel = 0;
    for target in &targets {
        let rest = hidden(target.trim_start_matches('/'));
        let rest_after_dev = hidden(target.trim_start_matches("/dev/").trim_start_matches('/'));
        // repeat('.', 2) is `..` the guard never reads.
        for spelled in [
            format!("'/var/run/' || repeat('.', 2) || '/{rest}'"),
            format!("'{}/' || repeat('.', 2) || '/{rest}'", link.display()),
            format!("'{}/' || repeat('../', 2) || '{rest}'", shm.display()),
            format!(
                "concat('{}', '/', repeat('.', 2), '/', '{rest_after_dev}')",
                shm.display()
            ),
        ] {
            for sql in [
                format!("SELECT content FROM read_text({spelled})"),
                format!("SELECT content FROM read_blob({spelled})"),
            ] {
                let result = mcp.call_tool("query", json!({"sql": sql}));
                // A name DuckDB cannot even see (another process's, to the
                // kernel) is a pattern that matches no file: no rows.
                if result["isError"] != true {
                    assert_eq!(tool_json(&result)["rows"], json!([]), "{sql} read: {result}");
                    continue;
                }
                let text = tool_text(&result);
                assert!(
                    kernel_refusal(text)
                        || text.contains("No files found")
                        || text.contains("disabled by configuration"),
                    "{sql}: {text}"
                );
                by_kernel += usize::from(kernel_refusal(text));
            }
        }
        still_answers(&mut mcp);
    }
    assert!(
        by_kernel > 0,
        "no route got past DuckDB's own check: the kernel was never tried"
    );
    // Writing: COPY's target is a literal the guard reads (`..` refused);
    // through a link with no `..`, the kernel refuses.
    // A link planted to pgmcp's own stderr, named plainly.
    let err_link = dir.path().join("err");
    std::os::unix::fs::symlink("/proc/self/fd/2", &err_link).unwrap();
    let text = refused(
        &mut mcp,
        &format!(
            "COPY (SELECT 'INJECTED' AS x) TO '{}' (FORMAT csv, HEADER false)",
            err_link.display()
        ),
    );
    assert!(kernel_refusal(&text) || text.contains("File exists"), "{text}");
    still_answers(&mut mcp);
    let fd_link = dir.path().join("fds");
    std::os::unix::fs::symlink(format!("/proc/{}/fd", relay_of(mcp.pid())), &fd_link).unwrap();
    for sql in [
        "COPY (SELECT 'INJECTED' AS x) TO '/var/run/../proc/self/fd/1' (FORMAT csv, HEADER false)".to_owned(),
        format!(
            "COPY (SELECT 'INJECTED' AS x) TO '{}/1' (FORMAT csv, HEADER false)",
            fd_link.display()
        ),
        format!(
            "COPY (SELECT 'INJECTED' AS x) TO '{}/0' (FORMAT csv, HEADER false)",
            fd_link.display()
        ),
        format!("SELECT content FROM read_text('{}/0')", fd_link.display()),
    ] {
        let text = refused(&mut mcp, &sql);
        assert!(own_process_refusal(&text), "{sql}: {text}");
        still_answers(&mut mcp);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let stray = mcp.take_pending();
    assert!(stray.is_empty(), "answers to requests the client never sent: {stray:?}");
}

/// SQLite takes literal names: `..` after a name is refused by the guard,
/// and a planted link into `/proc` by the kernel, for every pipe of the
/// session; the session still answers, and files named plainly attach.
#[test]
fn sqlite_attach_through_links_reaches_no_pipe_of_the_session() {
    let (dir, db) = files::sqlite::fixture("CREATE TABLE t (a int)");
    let config = every_switch_on(dir.path());
    let mut mcp = serve(&config, &files::sqlite::url(&db));
    let relay = relay_of(mcp.pid());
    let proc_link = dir.path().join("p");
    std::os::unix::fs::symlink("/proc", &proc_link).unwrap();
    let mut pipes = pipes_of(relay);
    pipes.extend(pipes_of(std::process::id()));
    for pipe in &pipes {
        let rest = pipe.trim_start_matches("/proc/");
        for sql in [
            format!("ATTACH '/var/run/../proc/{rest}' AS x"),
            format!("ATTACH '{}/{rest}' AS x", proc_link.display()),
            format!("VACUUM INTO '{}/{rest}'", proc_link.display()),
        ] {
            let text = refused(&mut mcp, &sql);
            assert!(
                own_process_refusal(&text) || text.contains("unable to open"),
                "{sql}: {text}"
            );
            still_answers(&mut mcp);
        }
    }
    let text = refused(&mut mcp, &format!("ATTACH '{}/self/environ' AS x", proc_link.display()));
    assert!(text.contains("unable to open") || kernel_refusal(&text), "{text}");
    still_answers(&mut mcp);
}
