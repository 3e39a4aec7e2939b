//! Faults: the real binary against a real PostgreSQL when things go wrong.
//! PostgreSQL restarted or killed under it, the session ended (stdin closed,
//! SIGTERM) while a query or a hook is running, calls cancelled by the client,
//! malformed input, hundreds of calls in flight, and a short soak that watches
//! memory, file descriptors and connections for growth.
//!
//! What PostgreSQL is doing is read from `pg_stat_activity`, narrowed to one
//! session by the `application_name` each test puts in its connection string;
//! what the process holds is read from `/proc`.

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::hook_scripts::script;
use crate::support::pg::{self, PgServer, TestDb};
use crate::support::stdio::{McpProcess, tool_json, tool_text};
use crate::support::writable_config::write_config;

/// How long a session may take to exit once its stdin is closed or it gets SIGTERM.
const EXIT_LIMIT: Duration = Duration::from_secs(2);

/// How long after the process exits (or a cancellation is sent) a query may
/// still be running on the server.
const STOP_LIMIT: Duration = Duration::from_secs(1);

/// One `pgmcp serve` under test, with its own `application_name` and temp dir.
struct Session {
    mcp: McpProcess,
    app: String,
    dir: tempfile::TempDir,
}

impl Session {
    /// Starts `pgmcp serve` on `db` with `writable_config::write_config`'s
    /// config plus `extra` (merged section by section), and initializes it.
    fn start(db: &TestDb, extra: Value) -> Session {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let app = format!(
            "pgmcp_fault_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path(), extra);
        let separator = if db.url.contains('?') { '&' } else { '?' };
        let url = format!("{}{separator}application_name={app}", db.url);
        let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &url)]);
        mcp.initialize();
        Session { mcp, app, dir }
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.mcp.pid()).unwrap()
    }

    /// The last lines of pgmcp's log file, for failure messages.
    fn log_tail(&self) -> String {
        let log = fs::read_to_string(self.dir.path().join("pgmcp.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail: Vec<&str> = lines[lines.len().saturating_sub(25)..]
            .iter()
            .map(|line| clip(line))
            .collect();
        tail.join("\n")
    }

    /// The lines of pgmcp's log that mention `needle`.
    fn log_lines(&self, needle: &str) -> String {
        let log = fs::read_to_string(self.dir.path().join("pgmcp.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().filter(|line| line.contains(needle)).map(clip).collect();
        lines.join("\n")
    }

    /// Waits until this session's connection runs a statement containing `marker`.
    fn await_running(&self, db: &TestDb, marker: &str) {
        if !wait_until(Duration::from_secs(10), || running(db, &self.app, marker) > 0) {
            panic!(
                "the query marked {marker} never showed up in pg_stat_activity\n\npgmcp log:\n{}",
                self.log_tail()
            );
        }
    }

    /// Sends a `tools/call` without waiting for its response.
    fn send_call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.mcp.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }));
    }

    fn cancel(&mut self, id: u64) {
        self.mcp.send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "user"},
        }));
    }

    /// The `result` of the `tools/call` with `id`; panics on a JSON-RPC error.
    fn result(&mut self, id: u64, timeout: Duration) -> Value {
        let response = self.mcp.recv_response(&json!(id), timeout);
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!(
                "tools/call {id} got no result: {response}\n\npgmcp log:\n{}",
                self.log_tail()
            ),
        }
    }

    /// Waits for the process to exit within `limit` and returns its status and
    /// how long that took; on timeout, kills it and says what it was doing.
    fn exit_within(&mut self, limit: Duration) -> (ExitStatus, Duration) {
        let started = Instant::now();
        if !wait_until(limit, || proc_state(self.pid()).is_none_or(|state| state == 'Z')) {
            let log = self.log_tail();
            self.mcp.kill();
            panic!("pgmcp did not exit within {limit:?} (killed it)\n\npgmcp log:\n{log}");
        }
        let took = started.elapsed();
        (self.mcp.wait_exit(Duration::from_secs(5)), took)
    }
}

/// A log line cut to 400 bytes: requests are logged with their whole SQL.
fn clip(line: &str) -> &str {
    let mut end = line.len().min(400);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// `writable_config::write_config`'s file with `extra` merged in.
fn config(dir: &Path, extra: Value) -> String {
    fn merge(into: &mut Value, from: Value) {
        match (into, from) {
            (Value::Object(into), Value::Object(from)) => {
                for (key, value) in from {
                    merge(into.entry(key).or_insert(Value::Null), value);
                }
            }
            (slot, value) => *slot = value,
        }
    }
    let path = write_config(dir, "");
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    merge(&mut doc, extra);
    fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

/// Polls `done` every 20 ms until it holds or `timeout` passes.
fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Backends of session `app` running a statement that contains `marker`.
fn running(db: &TestDb, app: &str, marker: &str) -> usize {
    count(
        db,
        &format!("state = 'active' AND query LIKE '%{marker}%' AND application_name = '{app}'"),
    )
}

/// Every backend of session `app`, idle or not.
fn connections(db: &TestDb, app: &str) -> usize {
    count(db, &format!("application_name = '{app}'"))
}

fn count(db: &TestDb, condition: &str) -> usize {
    let sql = format!("SELECT count(*) FROM pg_stat_activity WHERE {condition}");
    db.psql(&sql).parse().unwrap()
}

/// Stops what a failed test left running on the shared server, and says how much.
fn terminate(db: &TestDb, app: &str, marker: &str) -> usize {
    let sql = format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE query LIKE '%{marker}%' AND application_name = '{app}'"
    );
    db.psql(&sql).parse().unwrap()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// A tool error about the connection: "cannot reach the database: ...", or
/// PostgreSQL's "terminating connection ..." for a connection it cut.
fn is_connection_error(result: &Value) -> bool {
    is_error(result) && tool_text(result).to_lowercase().contains("connect")
}

/// `SELECT $1::int AS n` came back with `n`.
fn check_n(result: &Value, n: u64) -> Result<(), String> {
    match (is_error(result), tool_json(result)["rows"][0]["n"].as_u64()) {
        (false, Some(got)) if got == n => Ok(()),
        _ => Err(format!("expected n = {n}, got {result}")),
    }
}

/// The state letter from `/proc/<pid>/stat` (`R`, `S`, `Z`, ...); `None` once reaped.
fn proc_state(pid: i32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// A process as `/proc` shows it.
#[derive(Debug)]
struct Proc {
    pid: i32,
    ppid: i32,
    pgid: i32,
    state: char,
    /// Arguments joined by spaces.
    cmdline: String,
}

fn processes() -> Vec<Proc> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgid = fields.next()?.parse().ok()?;
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline)
            .replace('\0', " ")
            .trim_end()
            .to_string();
        Some(Proc {
            pid,
            ppid,
            pgid,
            state,
            cmdline,
        })
    })
    .collect()
}

/// `VmRSS` of `pid`, in kB.
fn rss_kb(pid: i32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/{pid}/status:\n{status}"))
}

fn fd_count(pid: i32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count()
}

fn signal(pid: i32, signal: i32) {
    // SAFETY: kill(2) only sends a signal; `pid` is a process this test started
    // (pgmcp, or the PostgreSQL of a private cluster).
    let rc = unsafe { libc::kill(pid, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal}): {}", std::io::Error::last_os_error());
}

/// Fills the pool: `n` calls at once, so `n` connections are made and then
/// kept idle.
fn fill_pool(s: &mut Session, db: &TestDb, n: usize) {
    for i in 0..n as u64 {
        s.send_call(
            500 + i,
            "query",
            json!({"sql": "SELECT $1::int AS n, pg_sleep(0.5)", "params": [i]}),
        );
    }
    for i in 0..n as u64 {
        let result = s.result(500 + i, Duration::from_secs(30));
        check_n(&result, i).unwrap();
    }
    assert!(
        wait_until(Duration::from_secs(5), || connections(db, &s.app) == n),
        "expected {n} pooled connections, PostgreSQL shows {}",
        connections(db, &s.app)
    );
}

/// Restarts PostgreSQL under a session whose pool holds `pooled` idle
/// connections: the first call after may fail with a connection error, the
/// one after must succeed, and the same process keeps serving.
fn check_restart(pooled: usize) {
    let server = pg::private_server();
    let db = server.database();
    let mut s = Session::start(&db, json!({"pool": {"max_conns": 4}}));
    let pid = s.pid();
    fill_pool(&mut s, &db, pooled);

    server.restart();

    let first = s.mcp.call_tool("query", json!({"sql": "SELECT 1 AS n"}));
    eprintln!(
        "{pooled} pooled: first call after the restart: {}",
        if is_error(&first) { tool_text(&first) } else { "ok" }
    );
    assert!(
        !is_error(&first) || is_connection_error(&first),
        "the first call after the restart failed, but not with a connection error: {first}"
    );
    let mut after = vec![s.mcp.call_tool("query", json!({"sql": "SELECT 2 AS n"}))];
    if is_error(&after[0]) {
        // Not yet the assertion: count how many calls fail before one
        // succeeds, to say what is wrong.
        while after.len() < 6 && is_error(after.last().unwrap()) {
            after.push(s.mcp.call_tool("query", json!({"sql": "SELECT 2 AS n"})));
        }
        let failed = after.iter().filter(|r| is_error(r)).count();
        let texts: Vec<&str> = after.iter().map(tool_text).collect();
        panic!(
            "with {pooled} pooled connection(s), the second call after a PostgreSQL restart failed: \
             {failed} calls in a row failed after the first (which {}):\n{texts:#?}\n\npgmcp log:\n{}",
            if is_error(&first) { "failed too" } else { "succeeded" },
            s.log_tail()
        );
    }
    check_n(&after[0], 2).unwrap();
    let tables = s.mcp.call_tool("list_tables", json!({}));
    assert!(!is_error(&tables), "{tables}");
    assert_eq!(s.pid(), pid);
    assert_eq!(proc_state(pid).map(|state| state != 'Z'), Some(true), "pgmcp died");
}

#[test]
fn postgres_restarted_between_two_calls() {
    check_restart(1);
}

/// Every idle connection in the pool is dead after a restart; only the first
/// call may pay for that.
#[test]
fn postgres_restarted_with_a_full_pool() {
    check_restart(4);
}

/// The postmaster's pid, from `postmaster.pid` in the data directory the
/// server itself reports.
fn postmaster_pid(server: &PgServer) -> (i32, std::path::PathBuf) {
    let data_dir = server.psql("postgres", "SHOW data_directory");
    let pid_file = Path::new(&data_dir).join("postmaster.pid");
    let text = fs::read_to_string(&pid_file).unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()));
    let pid = text.lines().next().unwrap().trim().parse().unwrap();
    (pid, pid_file)
}

#[test]
fn postgres_killed_during_a_call() {
    let server = pg::private_server();
    let db = server.database();
    let mut s = Session::start(&db, json!({"query": {"default_timeout_seconds": 5}}));
    let marker = format!("killed-{}", s.app);
    let (postmaster, pid_file) = postmaster_pid(&server);

    let sent = Instant::now();
    s.send_call(
        10,
        "query",
        json!({"sql": format!("SELECT pg_sleep(20) /* {marker} */")}),
    );
    s.await_running(&db, &marker);
    // What `pg_ctl stop -m immediate` does: SIGQUIT to the postmaster, which
    // takes every backend down at once, then wait for its pid file to go.
    signal(postmaster, libc::SIGQUIT);
    assert!(
        wait_until(Duration::from_secs(10), || !pid_file.exists()),
        "PostgreSQL did not stop after SIGQUIT"
    );

    let result = s.result(10, Duration::from_secs(10));
    let took = sent.elapsed();
    eprintln!(
        "call under a killed server failed after {took:.2?}: {}",
        tool_text(&result)
    );
    assert!(is_error(&result), "the call survived its server: {result}");
    assert!(
        took < Duration::from_secs(6),
        "the call took {took:?} to fail, more than its 5 s timeout: {result}"
    );

    // Still serving: the protocol answers, and a call says why it cannot run.
    let ping = s.mcp.request("ping", json!({}));
    assert!(ping["result"].is_object(), "{ping}");
    let tools = s.mcp.request("tools/list", json!({}));
    assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(5), "{tools}");
    let down = s.mcp.call_tool("query", json!({"sql": "SELECT 1 AS n"}));
    assert!(is_connection_error(&down), "{down}");

    server.start();
    let up = s.mcp.call_tool("query", json!({"sql": "SELECT 1 AS n"}));
    check_n(&up, 1).unwrap_or_else(|e| panic!("after PostgreSQL came back: {e}\n\npgmcp log:\n{}", s.log_tail()));
}

/// Ends a session with `end` while `SELECT pg_sleep(30) /* marker */` runs:
/// the process must exit promptly with status 0 and leave nothing running on
/// the server.
fn check_ends_mid_query(name: &str, end: impl FnOnce(&mut Session)) {
    let db = pg::server().database();
    let mut s = Session::start(&db, json!({}));
    let marker = format!("{name}-{}", s.app);
    s.send_call(
        10,
        "query",
        json!({"sql": format!("SELECT pg_sleep(30) /* {marker} */")}),
    );
    s.await_running(&db, &marker);

    end(&mut s);
    let (status, took) = s.exit_within(EXIT_LIMIT);
    let stop_started = Instant::now();
    let stopped = wait_until(STOP_LIMIT, || running(&db, &s.app, &marker) == 0);
    eprintln!(
        "{name}: exited ({status}) after {took:.2?}, query gone {:.2?} later",
        stop_started.elapsed()
    );
    let left = terminate(&db, &s.app, &marker);
    assert!(
        status.success(),
        "exit status {status} after {took:?}\n\npgmcp log:\n{}",
        s.log_tail()
    );
    assert!(
        stopped,
        "pgmcp exited ({status}, after {took:?}) but its query was still running on the server \
         {STOP_LIMIT:?} later ({left} backend(s) terminated by the test)\n\npgmcp log:\n{}",
        s.log_tail()
    );
}

#[test]
fn stdin_closed_mid_call() {
    check_ends_mid_query("stdin-closed", |s| s.mcp.close_stdin());
}

#[test]
fn sigterm_mid_call() {
    check_ends_mid_query("sigterm", |s| signal(s.pid(), libc::SIGTERM));
}

/// SIGTERM while a `before_query` hook (`slow.sh`: `sleep 30`) runs: the hook
/// and what it started must not outlive pgmcp.
#[test]
fn sigterm_with_a_hook_running() {
    let db = pg::server().database();
    let slow = script("slow.sh").display().to_string();
    // An argument slow.sh ignores, so this test's hook can be told from another's.
    let nanos = std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos();
    let tag = format!("fault-hook-{}-{nanos}", std::process::id());
    let mut s = Session::start(
        &db,
        json!({"hooks": {
            "default_timeout_seconds": 60,
            "before_query": [{"pattern": ".*", "command": slow, "args": [tag], "timeout_seconds": 60}],
        }}),
    );
    let pid = s.pid();
    s.send_call(10, "query", json!({"sql": "SELECT 1"}));

    let mut hook = None;
    let started = wait_until(Duration::from_secs(10), || {
        let procs = processes();
        hook = procs
            .iter()
            .find(|p| p.ppid == pid && p.cmdline.contains(&slow) && p.cmdline.contains(&tag))
            .map(|p| p.pid);
        hook.is_some_and(|group| procs.iter().any(|p| p.pgid == group && p.cmdline.starts_with("sleep")))
    });
    assert!(
        started,
        "the hook and its `sleep 30` never started\n\npgmcp log:\n{}",
        s.log_tail()
    );
    let group = hook.unwrap();

    signal(pid, libc::SIGTERM);
    let (status, took) = s.exit_within(EXIT_LIMIT);
    eprintln!("sigterm with a hook running: exited ({status}) after {took:.2?}");

    let leftovers = || -> Vec<Proc> {
        processes()
            .into_iter()
            .filter(|p| p.state != 'Z' && (p.pgid == group || p.cmdline.contains(&tag)))
            .collect()
    };
    let clean = wait_until(STOP_LIMIT, || leftovers().is_empty());
    let left = leftovers();
    for p in &left {
        // SAFETY: kill(2) only sends a signal, to a process the hook started.
        unsafe {
            libc::kill(p.pid, libc::SIGKILL);
        }
    }
    assert!(status.success(), "exit status {status} after {took:?}");
    assert!(
        clean,
        "pgmcp exited ({status}, after {took:?}) but its hook's processes were still running \
         {STOP_LIMIT:?} later (killed by the test): {left:#?}\n\npgmcp log:\n{}",
        s.log_tail()
    );
}

#[test]
fn cancelled_call_frees_its_backend_and_slot() {
    let db = pg::server().database();
    let mut s = Session::start(
        &db,
        json!({"pool": {"max_conns": 1}, "query": {"default_timeout_seconds": 5}}),
    );
    let marker = format!("cancel-marker-{}", s.app);
    s.send_call(
        10,
        "query",
        json!({"sql": format!("SELECT pg_sleep(30) /* {marker} */")}),
    );
    s.await_running(&db, &marker);

    s.cancel(10);
    let cancelled = Instant::now();
    let stopped = wait_until(STOP_LIMIT, || running(&db, &s.app, &marker) == 0);
    let took = cancelled.elapsed();
    eprintln!("cancelled query gone from the server after {took:.2?}");
    let left = terminate(&db, &s.app, &marker);
    assert!(
        stopped,
        "the cancelled query still ran {took:?} after notifications/cancelled \
         ({left} backend(s) terminated by the test)\n\npgmcp log:\n{}",
        s.log_tail()
    );

    // The only slot is free again. (A response to the cancelled call is
    // allowed but not required; it is not waited for.)
    let started = Instant::now();
    let next = s
        .mcp
        .call_tool("query", json!({"sql": "SELECT $1::int AS n", "params": [7]}));
    check_n(&next, 7).unwrap_or_else(|e| panic!("{e}\n\npgmcp log:\n{}", s.log_tail()));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

/// A cancellation that arrives just as a call starts (while it waits for its
/// slot, before its exchange is written, while the backend has not read it
/// yet) must stop it like any other. PostgreSQL discards a cancel request
/// that reaches a backend waiting for input, so a cancel request sent before
/// the statement has started is lost. Hundreds of calls are cancelled over
/// their first milliseconds, four at a time (one per slot, so that calls also
/// wait for slots); any statement still running afterwards is a lost cancel.
///
/// The window is narrow: a broken build fails this most runs, not every run.
#[test]
fn cancellations_racing_the_start_of_calls() {
    const TRIES: u64 = 400;
    let db = pg::server().database();
    let mut s = Session::start(&db, json!({"query": {"default_timeout_seconds": 20}}));
    let warm = s.mcp.call_tool("query", json!({"sql": "SELECT 1 AS n"}));
    check_n(&warm, 1).unwrap();
    let prefix = format!("race-{}-", s.app);
    let mut delays = Vec::new();
    // In batches of four, one per connection slot: backends woken together
    // wait for a CPU before they read what was written to them, which widens
    // the window a cancel request can fall into.
    for batch in 0..TRIES / 4 {
        let delay = Duration::from_micros(batch % 20 * 250);
        for k in batch * 4..batch * 4 + 4 {
            delays.push(delay);
            let sql = format!("SELECT pg_sleep(10) /* {prefix}{k}. */");
            s.send_call(4000 + k, "query", json!({"sql": sql}));
        }
        thread::sleep(delay);
        for k in batch * 4..batch * 4 + 4 {
            s.cancel(4000 + k);
        }
        thread::sleep(Duration::from_millis(20));
    }
    // A statement written after its cancel request starts a moment later,
    // and then runs its 10 s.
    thread::sleep(Duration::from_millis(300));
    let sql = format!(
        "SELECT query FROM pg_stat_activity WHERE state = 'active' AND application_name = '{}' \
         AND query LIKE '%{prefix}%'",
        s.app
    );
    let still = db.psql(&sql);
    terminate(&db, &s.app, &prefix);
    let lost: Vec<String> = still
        .lines()
        .filter_map(|query| {
            let k: u64 = query.split(&prefix).nth(1)?.split('.').next()?.parse().ok()?;
            let id = 4000 + k;
            Some(format!(
                "call {id}, cancelled {:?} after it was sent; pgmcp logged:\n{}",
                delays[k as usize],
                s.log_lines(&format!("id={id}"))
            ))
        })
        .collect();
    eprintln!(
        "{} of {TRIES} cancels racing the start of their call were lost",
        lost.len()
    );
    assert!(
        lost.is_empty(),
        "{} of {TRIES} cancelled calls were still running on the server 300 ms after the last \
         notifications/cancelled (terminated by the test):\n{}",
        lost.len(),
        lost.join("\n"),
    );
}

/// The response to `id` if one arrives within `wait`.
fn try_response(mcp: &mut McpProcess, id: &Value, wait: Duration) -> Option<Value> {
    // recv_response panics when nothing comes; here nothing is an answer.
    panic::catch_unwind(AssertUnwindSafe(|| mcp.recv_response(id, wait))).ok()
}

/// What a malformed message must get back.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Nothing required: there is no id to answer to. (rmcp ignores a line
    /// that is not JSON and answers other JSON that is not a message with an
    /// Invalid Request error without `id`, which `McpProcess` cannot see.)
    Silent,
    /// An Invalid Request: if a response carries the id, it is an error. An
    /// error without the id is also right (JSON-RPC answers an Invalid
    /// Request with `id: null`; rmcp leaves `id` out, and `McpProcess` cannot
    /// see a message with neither `id` nor `method`), so nothing is required.
    NoSuccess,
    /// A JSON-RPC error with the request's id, with this code.
    RpcError(i64),
    /// A tool result with `isError: true`, or a JSON-RPC error, for the id.
    Refused,
}

#[test]
fn malformed_input_in_one_session() {
    let db = pg::server().database();
    let mut s = Session::start(&db, json!({}));
    let call = |id: u64, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let huge_sql = format!("SELECT '{}'", "x".repeat(20 << 20));
    let cases: Vec<(&str, String, u64, Expect)> = vec![
        (
            "a line that is not JSON",
            "this is not json {".into(),
            0,
            Expect::Silent,
        ),
        ("a JSON array", "[1, 2, 3]".into(), 0, Expect::Silent),
        ("a JSON number", "42".into(), 0, Expect::Silent),
        (
            "an object without jsonrpc",
            json!({"id": 21, "method": "ping"}).to_string(),
            21,
            Expect::NoSuccess,
        ),
        (
            "an unknown method",
            json!({"jsonrpc": "2.0", "id": 22, "method": "tables/drop", "params": {}}).to_string(),
            22,
            Expect::RpcError(-32601),
        ),
        (
            "an unknown notification",
            json!({"jsonrpc": "2.0", "method": "notifications/no_such_thing"}).to_string(),
            0,
            Expect::Silent,
        ),
        (
            "an unknown tool",
            call(23, json!({"name": "drop_database", "arguments": {}})).to_string(),
            23,
            Expect::RpcError(-32602),
        ),
        (
            "arguments of the wrong type",
            call(24, json!({"name": "query", "arguments": {"sql": 42}})).to_string(),
            24,
            Expect::Refused,
        ),
        (
            "params a string",
            call(25, json!("SELECT 1")).to_string(),
            25,
            Expect::NoSuccess,
        ),
        (
            "params an array",
            call(26, json!(["query", {"sql": "SELECT 1"}])).to_string(),
            26,
            Expect::NoSuccess,
        ),
        (
            "a 20 MB line",
            call(27, json!({"name": "query", "arguments": {"sql": huge_sql}})).to_string(),
            27,
            Expect::Refused,
        ),
    ];

    let mut failures = Vec::new();
    for (what, line, id, expect) in cases {
        s.mcp.send_raw(&line);
        // The next valid request is answered whatever came before it.
        let ping = s.mcp.request("ping", json!({}));
        if !ping["result"].is_object() {
            failures.push(format!("{what}: the ping after it got {ping}"));
        }
        let id = json!(id);
        // Handlers run concurrently: a response may come after the ping's.
        let wait = match expect {
            Expect::Silent | Expect::NoSuccess => Duration::ZERO,
            Expect::RpcError(_) | Expect::Refused => Duration::from_secs(5),
        };
        let own = match expect {
            Expect::Silent => None,
            _ => try_response(&mut s.mcp, &id, wait),
        };
        let verdict = match (expect, &own) {
            (Expect::Silent, _) => Ok(()),
            (Expect::NoSuccess, None) => Ok(()),
            (Expect::NoSuccess, Some(r)) if r["error"].is_object() => Ok(()),
            (Expect::RpcError(code), Some(r)) if r["error"]["code"] == code => Ok(()),
            (Expect::Refused, Some(r)) if r["error"].is_object() || is_error(&r["result"]) => Ok(()),
            (_, None) => Err("no response".to_string()),
            (_, Some(r)) => Err(format!("got {r}")),
        };
        if let Err(why) = verdict {
            failures.push(format!("{what} (expected {expect:?}): {why}"));
        }
    }

    // After all of it, a valid call is answered correctly.
    let result = s
        .mcp
        .call_tool("query", json!({"sql": "SELECT $1::int AS n", "params": [41]}));
    if let Err(e) = check_n(&result, 41) {
        failures.push(format!("the valid call after the malformed input: {e}"));
    }
    assert!(
        failures.is_empty(),
        "malformed input was mishandled:\n- {}\n\npgmcp log:\n{}",
        failures.join("\n- "),
        s.log_tail()
    );
}

/// Sets the flag when dropped, so a sampling thread stops even if the test panics.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The table the catalog calls of the load tests describe.
const ITEMS: &str = "CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL);
                     INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 10) g";

/// Call `i` of a mixed load: mostly queries with a parameter, some catalog calls.
fn mixed_call(i: u64) -> (&'static str, Value) {
    match i % 8 {
        0 => ("list_tables", json!({})),
        1 => ("describe_table", json!({"table": "items"})),
        _ => (
            "query",
            json!({"sql": "SELECT $1::int AS n, pg_sleep(0.01)", "params": [i]}),
        ),
    }
}

/// Whether `result` is the right answer to [`mixed_call`] `i`.
fn check_mixed(i: u64, result: &Value) -> Result<(), String> {
    match mixed_call(i).0 {
        "list_tables" if !is_error(result) && tool_json(result)["tables"][0]["name"] == "items" => Ok(()),
        "describe_table" if !is_error(result) && tool_json(result)["columns"][1]["name"] == "label" => Ok(()),
        "query" => check_n(result, i),
        tool => Err(format!("{tool} call {i}: got {result}")),
    }
}

#[test]
fn hundreds_of_interleaved_calls() {
    const MAX_CONNS: usize = 4;
    const CALLS: u64 = 400; // 50 clients × 8 calls
    let db = pg::server().database();
    db.psql(ITEMS);
    let mut s = Session::start(&db, json!({"pool": {"max_conns": MAX_CONNS}}));
    let app = s.app.clone();
    let pid = s.pid();

    let stop = AtomicBool::new(false);
    let (most, samples) = thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let (mut most, mut samples) = (0, 0);
            while !stop.load(Ordering::Relaxed) {
                most = connections(&db, &app).max(most);
                samples += 1;
            }
            (most, samples)
        });
        let stop_guard = StopOnDrop(&stop);
        let started = Instant::now();
        for i in 0..CALLS {
            let (tool, arguments) = mixed_call(i);
            s.send_call(1000 + i, tool, arguments);
        }
        let mut wrong = Vec::new();
        for i in 0..CALLS {
            let result = s.result(1000 + i, Duration::from_secs(60));
            if let Err(e) = check_mixed(i, &result) {
                wrong.push(e);
            }
        }
        eprintln!("{CALLS} interleaved calls answered in {:.2?}", started.elapsed());
        assert!(
            wrong.is_empty(),
            "{} of {CALLS} responses were wrong:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
        drop(stop_guard);
        sampler.join().unwrap()
    });
    eprintln!("connections: at most {most} in {samples} samples");
    assert!(most >= 1, "the sampler never saw the session's connections");
    assert!(
        most <= MAX_CONNS,
        "PostgreSQL saw {most} connections, pool.max_conns is {MAX_CONNS}"
    );
    let rss = rss_kb(pid);
    eprintln!("VmRSS after the burst: {rss} kB");
    assert!(rss < 100 * 1024, "VmRSS after the burst is {rss} kB");
}

/// What one soak batch left behind.
#[derive(Debug)]
struct Sample {
    calls: u64,
    rss_kb: u64,
    fds: usize,
    connections: usize,
    /// Cancelled statements still running once the batch's timeouts had answered.
    lost_cancels: usize,
    /// Timed-out statements still running after their call answered.
    lost_timeouts: usize,
}

/// A loop of mixed batches (queries, catalog calls, guard refusals, timeouts,
/// cancellations) for `PGMCP_SOAK_SECONDS` (default 20): memory, descriptors
/// and connections must not grow.
#[test]
fn soak() {
    const MAX_CONNS: usize = 4;
    let seconds: u64 = std::env::var("PGMCP_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let db = pg::server().database();
    db.psql(ITEMS);
    let mut s = Session::start(
        &db,
        json!({
            "pool": {"max_conns": MAX_CONNS},
            "query": {"timeout_rules": [{"pattern": "soak-timeout", "timeout_seconds": 1}]},
        }),
    );
    let pid = s.pid();
    let started = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    let mut next_id = 100_000;
    let mut calls = 0;
    while started.elapsed() < Duration::from_secs(seconds) {
        let batch = next_id;
        // 32 mixed calls, a guard refusal, 2 timeouts, 2 cancellations.
        for i in 0..32 {
            let (tool, arguments) = mixed_call(i);
            s.send_call(batch + i, tool, arguments);
        }
        s.send_call(batch + 40, "query", json!({"sql": "DROP TABLE items"}));
        for i in 41..43 {
            s.send_call(
                batch + i,
                "query",
                json!({"sql": "SELECT pg_sleep(3) /* soak-timeout */"}),
            );
        }
        for i in 43..45 {
            s.send_call(
                batch + i,
                "query",
                json!({"sql": "SELECT pg_sleep(5) /* soak-cancel */"}),
            );
        }
        // Cancelled while most of the batch still waits for a slot.
        thread::sleep(Duration::from_millis(30));
        for i in 43..45 {
            s.cancel(batch + i);
        }
        for i in 0..32 {
            let result = s.result(batch + i, Duration::from_secs(30));
            check_mixed(i, &result).unwrap_or_else(|e| panic!("batch {}: {e}", samples.len()));
        }
        let refused = s.result(batch + 40, Duration::from_secs(30));
        assert!(is_error(&refused), "{refused}");
        for i in 41..43 {
            let result = s.result(batch + i, Duration::from_secs(30));
            assert!(
                is_error(&result) && tool_text(&result).contains("timed out after 1s"),
                "{result}"
            );
        }
        // The cancels went out about a second ago.
        let lost_cancels = running(&db, &s.app, "soak-cancel");
        let lost_timeouts = running(&db, &s.app, "soak-timeout");
        // Measure a settled process: whatever still runs ends within its 5 s.
        assert!(
            wait_until(Duration::from_secs(6), || running(&db, &s.app, "soak-") == 0),
            "batch {}: statements still running 6 s later\n\npgmcp log:\n{}",
            samples.len(),
            s.log_tail()
        );
        calls += 37;
        next_id += 100;
        samples.push(Sample {
            calls,
            rss_kb: rss_kb(pid),
            fds: fd_count(pid),
            connections: connections(&db, &s.app),
            lost_cancels,
            lost_timeouts,
        });
    }

    let elapsed = started.elapsed();
    let every = samples.len().div_ceil(20);
    eprintln!(
        "soak: {} batches, {calls} calls in {elapsed:.1?} ({:.0} calls/s)",
        samples.len(),
        calls as f64 / elapsed.as_secs_f64()
    );
    eprintln!("batch  calls  VmRSS kB  fds  connections  lost cancels  lost timeouts");
    for (i, sample) in samples.iter().enumerate() {
        if i % every == 0 || i + 1 == samples.len() || sample.lost_cancels + sample.lost_timeouts > 0 {
            eprintln!(
                "{i:>5}  {:>5}  {:>8}  {:>3}  {:>11}  {:>12}  {:>13}",
                sample.calls, sample.rss_kb, sample.fds, sample.connections, sample.lost_cancels, sample.lost_timeouts
            );
        }
    }
    let (first, last) = (&samples[0], &samples[samples.len() - 1]);
    let peak = samples.iter().map(|s| s.rss_kb).max().unwrap();
    eprintln!(
        "VmRSS first {} kB, last {} kB, peak {peak} kB; fds first {}, last {}",
        first.rss_kb, last.rss_kb, first.fds, last.fds
    );
    assert!(samples.len() >= 3, "only {} batches ran", samples.len());
    let mut failures = Vec::new();
    if last.rss_kb > first.rss_kb + 10 * 1024 {
        failures.push(format!("VmRSS grew from {} kB to {} kB", first.rss_kb, last.rss_kb));
    }
    if last.fds.abs_diff(first.fds) > 5 {
        failures.push(format!("open fds went from {} to {}", first.fds, last.fds));
    }
    let most = samples.iter().map(|s| s.connections).max().unwrap();
    if most > MAX_CONNS {
        failures.push(format!(
            "{most} connections after a batch, pool.max_conns is {MAX_CONNS}"
        ));
    }
    let lost_cancels: usize = samples.iter().map(|s| s.lost_cancels).sum();
    let lost_timeouts: usize = samples.iter().map(|s| s.lost_timeouts).sum();
    if lost_cancels + lost_timeouts > 0 {
        failures.push(format!(
            "{lost_cancels} of {} cancelled statements were still running about a second after \
             notifications/cancelled, and {lost_timeouts} of {} timed-out ones after their call answered",
            2 * samples.len(),
            2 * samples.len()
        ));
    }
    assert!(failures.is_empty(), "{}\n\n{samples:#?}", failures.join("\n"));
}
