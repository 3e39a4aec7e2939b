//! The log file, through the real binary: private to its owner, never stdout
//! under another name, never a FIFO or socket, and free of what the MCP
//! library would log about each request below `trace`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::served::{pg_session, write_config};
use crate::support::stdio::{McpProcess, tool_json, tool_text};
use crate::support::{pg, pgmcp, pgmcp_std};

/// A config in `dir` logging to `output` at `level`.
fn config(dir: &Path, output: &str, level: &str) -> PathBuf {
    let path = dir.join("config.json");
    let doc = json!({
        "logging": {"output": output, "level": level},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10}
    });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_log_file_is_private() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("logs/new/pgmcp.log");
    let path = config(home.path(), log.to_str().unwrap(), "info");
    let run = || {
        let out = pgmcp(home.path())
            .arg("--config")
            .arg(&path)
            .args(["--database", "sqlite::memory:", "query", "SELECT 1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run();
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    // One that others could read is narrowed, and keeps its lines.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o664)).unwrap();
    let before = std::fs::read_to_string(&log).unwrap();
    run();
    assert_eq!(mode(&log), 0o600);
    assert!(std::fs::read_to_string(&log).unwrap().starts_with(&before));
    // The built-in default location too.
    let out = pgmcp(home.path())
        .args(["--database", "sqlite::memory:", "query", "SELECT 1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mode(&home.path().join("state/pgmcp/pgmcp.log")), 0o600);
    assert_eq!(mode(&home.path().join("state/pgmcp")), 0o700);
}

/// stdout under any name is refused before anything is logged: by name, by
/// its /proc path, through a symlink, or as the file stdout is redirected to.
#[test]
fn stdout_under_any_name_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let link = home.path().join("innocent.log");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let redirected = home.path().join("stdout.txt");
    std::fs::write(&redirected, "").unwrap();
    for output in [
        "/dev/stdout".to_owned(),
        "/proc/self/fd/1".to_owned(),
        link.display().to_string(),
        redirected.display().to_string(),
    ] {
        let path = config(home.path(), &output, "debug");
        let stdout = std::fs::OpenOptions::new().append(true).open(&redirected).unwrap();
        let out = pgmcp_std(home.path())
            .arg("--config")
            .arg(&path)
            .args(["--database", "sqlite::memory:", "serve"])
            .stdin(Stdio::null())
            .stdout(stdout)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{output}: {stderr}");
        assert!(
            stderr.contains(&format!("config {}: logging.output: ", path.display()))
                && stderr.contains("same file as stdout"),
            "{output}: {stderr}"
        );
        assert_eq!(std::fs::read_to_string(&redirected).unwrap(), "", "{output}");
    }
    // stderr is refused only when it goes where stdout goes; `serve` then
    // says why only over the protocol (`start_failure_mode::`), never on
    // stderr, which would put a stray line in it.
    let path = config(home.path(), "stderr", "debug");
    // `command` with stdout and stderr both appended to `redirected`.
    let sharing = |command: &str| {
        let shared = std::fs::OpenOptions::new().append(true).open(&redirected).unwrap();
        pgmcp_std(home.path())
            .arg("--config")
            .arg(&path)
            .args(["--database", "sqlite::memory:", command])
            .stdin(Stdio::null())
            .stdout(shared.try_clone().unwrap())
            .stderr(shared)
            .status()
            .unwrap()
    };
    assert_eq!(sharing("serve").code(), Some(2));
    assert_eq!(std::fs::read_to_string(&redirected).unwrap(), "");
    // `check` is no protocol: it says so on stderr.
    assert_eq!(sharing("check").code(), Some(2));
    let text = std::fs::read_to_string(&redirected).unwrap();
    assert!(
        text.contains("logging.output: stderr: goes to the same place as stdout"),
        "{text}"
    );
}

/// A FIFO, a socket or a directory is refused at once, never opened: a FIFO
/// used to hang the server before `initialize`. Started by a client, the
/// server then answers at once and says why in every tool call
/// (`start_failure::`), on stderr too.
#[test]
fn only_a_regular_file_can_be_the_log() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("fifo.log");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let socket = home.path().join("socket.log");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let dir = home.path().join("dir.log");
    std::fs::create_dir(&dir).unwrap();
    for (output, what) in [(&fifo, "a FIFO"), (&socket, "a socket"), (&dir, "a directory")] {
        let path = config(home.path(), output.to_str().unwrap(), "info");
        let mut server = McpProcess::spawn(
            &[
                "--config",
                path.to_str().unwrap(),
                "--database",
                "sqlite::memory:",
                "serve",
            ],
            &[],
        );
        let started = Instant::now();
        server.initialize_unstarted();
        assert!(started.elapsed() < Duration::from_secs(10), "{}", output.display());
        let said = format!(
            "logging.output: {}: is {what}: the log must be a regular file",
            output.display()
        );
        let answer = server.call_tool("query", json!({"sql": "SELECT 1"}));
        assert_eq!(answer["isError"], true, "{answer}");
        let text = crate::support::stdio::tool_text(&answer);
        assert!(text.contains(&said), "{text}");
        assert!(server.stderr().contains(&said), "{}", server.stderr());
        server.close_stdin();
        assert_eq!(server.wait_exit(Duration::from_secs(10)).code(), Some(2));
    }
}

/// At `debug`, pgmcp's own events are logged, but not rmcp's copy of every
/// request and result (query text, rows); `trace` asks for them.
#[test]
fn the_mcp_library_logs_only_warnings_below_trace() {
    for (level, logged) in [("debug", false), ("trace", true)] {
        let home = tempfile::tempdir().unwrap();
        let log = home.path().join("pgmcp.log");
        let path = config(home.path(), log.to_str().unwrap(), level);
        let mut server = McpProcess::spawn(
            &[
                "--config",
                path.to_str().unwrap(),
                "--database",
                "sqlite::memory:",
                "serve",
            ],
            &[],
        );
        server.initialize();
        server.call_tool("query", json!({"sql": "SELECT 'marker-7431' AS m"}));
        server.close_stdin();
        server.wait_exit(Duration::from_secs(10));
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("serving MCP on stdio"), "{text}");
        assert_eq!(text.contains("marker-7431"), logged, "{level}:\n{text}");
    }
}

/// A log path someone else prepared is refused: a symlink planted in its
/// place (pgmcp would append to what it points to) or a file they own (they
/// could read it).
#[test]
fn a_prepared_log_file_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let victim = home.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let planted = home.path().join("planted.log");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let mut cases = vec![(planted.clone(), "is a symlink: name the file it points to".to_owned())];
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        // Only root can give a file away.
        let owned = home.path().join("owned.log");
        std::fs::write(&owned, "").unwrap();
        std::os::unix::fs::chown(&owned, Some(65534), None).unwrap();
        cases.push((owned, "it belongs to user id 65534, not to you (user id 0)".to_owned()));
    }
    for (output, why) in cases {
        let path = config(home.path(), output.to_str().unwrap(), "info");
        let out = pgmcp(home.path())
            .arg("--config")
            .arg(&path)
            .args(["--database", "sqlite::memory:", "query", "SELECT 1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("logging.output: {}: ", output.display())) && stderr.contains(&why),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// Failed calls are logged by kind, never by message: an error message can
/// quote row values and parameters that sanitization masks in the answer.
#[test]
fn failed_calls_log_no_values_or_parameters() {
    let db = crate::support::pg::server().database();
    db.psql("CREATE TABLE cards (n text); INSERT INTO cards VALUES ('4111-1111-1111-1111')");
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("pgmcp.log");
    let path = config(home.path(), log.to_str().unwrap(), "debug");
    let mut server = McpProcess::spawn(
        &["--config", path.to_str().unwrap(), "serve"],
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    server.initialize();
    let calls = [
        json!({"sql": "SELECT n::int FROM cards"}),
        json!({"sql": "SELECT $1::int", "params": ["param-secret-9"]}),
        json!({"sql": "SELECT * FROM \"table-secret-3\""}),
        json!({"sql": "DELETE FROM cards WHERE n = 'sql-secret-5'"}),
    ];
    for args in calls {
        let result = server.call_tool("query", args);
        assert_eq!(result["isError"], true, "{result:#}");
    }
    server.close_stdin();
    server.wait_exit(Duration::from_secs(10));
    let text = std::fs::read_to_string(&log).unwrap();
    for secret in ["4111", "param-secret-9", "table-secret-3", "sql-secret-5"] {
        assert!(!text.contains(secret), "{secret} logged:\n{text}");
    }
    assert!(text.contains("database error (SQLSTATE 22P02)"), "{text}");
    assert!(text.contains("refused by the guard"), "{text}");
}

/// An error that stops `serve` before the session starts is in the log the
/// config names, not only on stderr (which desktop clients hide).
#[test]
fn a_config_that_cannot_load_is_reported_in_the_default_log() {
    // Its own log setting is unknown, so the error goes where the log is
    // when no file says otherwise, as well as to stderr.
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.json");
    std::fs::write(&path, r#"{"query": {"default_timeout_seconds": 0}}"#).unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("serve")
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let expected = "query.default_timeout_seconds: must be greater than 0";
    assert!(String::from_utf8_lossy(&out.stderr).contains(expected));
    let log = home.path().join("state/pgmcp/pgmcp.log");
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    assert!(
        text.contains("cannot start: config ") && text.contains(expected),
        "{text}"
    );
}

#[test]
fn errors_before_the_session_reach_the_log() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("pgmcp.log");
    let path = config(home.path(), log.to_str().unwrap(), "info");
    let cases = [
        (
            vec![("PGMCP_DATABASE", "/srv/shop.db")],
            "cannot start: PGMCP_DATABASE: \"/srv/shop.db\" looks like a file path, not a PostgreSQL connection string: use sqlite:///srv/shop.db",
        ),
        (
            vec![("PGMCP_MAX_ROWS", "lots")],
            "cannot start: PGMCP_MAX_ROWS: \"lots\" is not a whole number greater than 0",
        ),
    ];
    for (vars, expected) in cases {
        std::fs::remove_file(&log).ok();
        let mut cmd = pgmcp(home.path());
        cmd.arg("--config").arg(&path).arg("serve");
        for (k, v) in &vars {
            cmd.env(k, v);
        }
        let out = cmd.write_stdin("").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{vars:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains(&format!("ERROR {expected}")) || text.contains(expected),
            "{vars:?}: {text}"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(expected.split_once(": ").map_or(expected, |(_, rest)| rest)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
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
