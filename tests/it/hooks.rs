//! Hooks as real processes: the reference hook cases (allow, reject, rewrite,
//! fail, time out) against the scripts in
//! `fixtures/hooks/`, plus the bounds pgmcp adds (output size, killing what a
//! timed-out hook started).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pgmcp::testing::hooks::run_chain;
use pgmcp::{Hook, HookError, Stage};
use regex::Regex;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::confdir::{chmod, private_dir, write_config};
use crate::support::hook_scripts::script;
use crate::support::pg;
use crate::support::stdio::{McpProcess, is_error, tool_json, tool_text};

fn hook(name: &str, pattern: &str, timeout_secs: u64) -> Hook {
    Hook {
        pattern: Regex::new(pattern).unwrap(),
        command: script(name),
        args: vec![],
        timeout: Duration::from_secs(timeout_secs),
    }
}

async fn before(hooks: &[Hook], sql: &str) -> Result<String, HookError> {
    run_chain(
        Stage::BeforeQuery,
        "query",
        hooks,
        sql.to_owned(),
        &CancellationToken::new(),
    )
    .await
}

async fn after(hooks: &[Hook], result: &str) -> Result<String, HookError> {
    run_chain(
        Stage::AfterQuery,
        "query",
        hooks,
        result.to_owned(),
        &CancellationToken::new(),
    )
    .await
}

fn message(r: Result<String, HookError>) -> String {
    match r {
        Err(e) => e.to_string(),
        Ok(text) => panic!("expected the hook to stop the call, got {text:?}"),
    }
}

const RESULT: &str = r#"{"columns":[{"name":"n","type":"integer"}],"rows":[{"n":1}]}"#;

#[tokio::test]
async fn before_query_table() {
    let slow = script("slow.sh");
    let crash = script("crash.sh");
    let bad = script("bad_json.sh");
    assert_eq!(
        before(&[hook("accept.sh", ".*", 5)], "SELECT 1").await.unwrap(),
        "SELECT 1"
    );
    assert_eq!(
        message(before(&[hook("reject.sh", ".*", 5)], "SELECT 1").await),
        "rejected by test hook"
    );
    assert_eq!(
        before(&[hook("modify_query.sh", ".*", 5)], "SELECT 2").await.unwrap(),
        "SELECT 1 AS modified"
    );
    assert_eq!(
        before(&[hook("reject.sh", "NEVER_MATCH", 5)], "SELECT 1")
            .await
            .unwrap(),
        "SELECT 1"
    );
    // Chaining: the second hook sees the first one's rewrite, and its pattern
    // is matched against it.
    assert_eq!(
        message(
            before(
                &[hook("modify_query.sh", ".*", 5), hook("reject.sh", "modified", 5)],
                "SELECT 2"
            )
            .await
        ),
        "rejected by test hook"
    );
    assert_eq!(
        before(
            &[hook("modify_query.sh", ".*", 5), hook("accept.sh", ".*", 5)],
            "SELECT 2"
        )
        .await
        .unwrap(),
        "SELECT 1 AS modified"
    );
    assert_eq!(
        message(before(&[hook("slow.sh", ".*", 1)], "SELECT 1").await),
        format!("before_query hook error: hook timed out: {}", slow.display())
    );
    assert_eq!(
        message(before(&[hook("crash.sh", ".*", 5)], "SELECT 1").await),
        format!(
            "before_query hook error: hook failed (command: {}): exit status 1",
            crash.display()
        )
    );
    assert!(
        message(before(&[hook("bad_json.sh", ".*", 5)], "SELECT 1").await).starts_with(&format!(
            "before_query hook returned unparseable response (command: {}): ",
            bad.display()
        ))
    );
}

#[tokio::test]
async fn after_query_table() {
    let slow = script("slow.sh");
    let crash = script("crash.sh");
    let bad = script("bad_json.sh");
    assert_eq!(after(&[hook("accept.sh", ".*", 5)], RESULT).await.unwrap(), RESULT);
    assert_eq!(
        message(after(&[hook("reject.sh", ".*", 5)], RESULT).await),
        "rejected by test hook"
    );
    let modified = r#"{"columns":["modified"],"rows":[{"modified":true}]}"#;
    assert_eq!(
        after(&[hook("modify_result.sh", ".*", 5)], RESULT).await.unwrap(),
        modified
    );
    assert_eq!(
        after(
            &[hook("modify_result.sh", ".*", 5), hook("accept.sh", "modified", 5)],
            RESULT
        )
        .await
        .unwrap(),
        modified
    );
    assert_eq!(
        message(after(&[hook("slow.sh", ".*", 1)], RESULT).await),
        format!("after_query hook error: hook timed out: {}", slow.display())
    );
    assert_eq!(
        message(after(&[hook("crash.sh", ".*", 5)], RESULT).await),
        format!(
            "after_query hook error: hook failed (command: {}): exit status 1",
            crash.display()
        )
    );
    assert!(
        message(after(&[hook("bad_json.sh", ".*", 5)], RESULT).await).starts_with(&format!(
            "after_query hook returned unparseable response (command: {}): ",
            bad.display()
        ))
    );
}

#[tokio::test]
async fn input_arrives_on_stdin_and_args_are_passed_without_a_shell() {
    assert_eq!(
        message(before(&[hook("echo_stdin.sh", ".*", 5)], "SELECT 42").await),
        "stdin was: SELECT 42"
    );
    let mut with_args = hook("echo_args.sh", ".*", 5);
    with_args.args = vec!["--flag".into(), "value; rm -rf /".into()];
    assert_eq!(
        before(&[with_args], "SELECT 1").await.unwrap(),
        "ARGS: --flag value; rm -rf /"
    );
    let no_args = hook("accept.sh", ".*", 5);
    assert!(no_args.args.is_empty());
    assert_eq!(before(&[no_args], "SELECT 1").await.unwrap(), "SELECT 1");
}

#[tokio::test]
async fn a_missing_hook_program_stops_the_call() {
    let missing = Hook {
        command: PathBuf::from("/nonexistent/hook"),
        ..hook("accept.sh", ".*", 5)
    };
    assert!(
        message(before(&[missing], "SELECT 1").await)
            .starts_with("before_query hook error: hook failed (command: /nonexistent/hook): ")
    );
}

#[tokio::test]
async fn a_hook_that_floods_stdout_fails_cleanly() {
    let flood = script("flood.sh");
    assert_eq!(
        message(before(&[hook("flood.sh", ".*", 10)], "SELECT 1").await),
        format!(
            "before_query hook error: hook failed (command: {}): wrote more than 1048576 bytes to stdout",
            flood.display()
        )
    );
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// A timed-out hook is killed with everything it started.
#[tokio::test]
async fn a_timed_out_hook_and_its_children_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let mut hanging = hook("spawn_and_hang.sh", ".*", 1);
    hanging.args = vec![pid_file.display().to_string()];
    let started = Instant::now();
    let err = message(before(&[hanging], "SELECT 1").await);
    assert!(err.starts_with("before_query hook error: hook timed out"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the hook was not stopped at its timeout"
    );
    let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // Killed processes are reaped by init; give that a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(child) && !is_zombie(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !alive(child) || is_zombie(child),
        "the hook's child {child} is still running"
    );
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

#[tokio::test]
async fn cancelling_the_call_stops_the_hook() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let r = run_chain(
        Stage::BeforeQuery,
        "query",
        &[hook("slow.sh", ".*", 60)],
        "SELECT 1".into(),
        &cancel,
    )
    .await;
    assert_eq!(
        r,
        Err(HookError::Cancelled {
            stage: Stage::BeforeQuery
        })
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Concurrent chains never see each other's input or output.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_hooks_do_not_cross_talk() {
    let hooks = vec![hook("echo_stdin.sh", ".*", 10)];
    let mut tasks = Vec::new();
    for i in 0..20 {
        let hooks = hooks.clone();
        tasks.push(tokio::spawn(async move {
            (i, before(&hooks, &format!("SELECT {i}")).await)
        }));
    }
    for task in tasks {
        let (i, r) = task.await.unwrap();
        assert_eq!(message(r), format!("stdin was: SELECT {i}"));
    }
}

/// A config in `dir` whose one `before_query` hook is the shell script `body`,
/// given `args`.
fn config_with_hook(dir: &Path, body: &str, args: &[String]) -> PathBuf {
    let hook = dir.join("hook.sh");
    std::fs::write(&hook, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.join("config.json");
    let doc = serde_json::json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
        "hooks": {"default_timeout_seconds": 10, "before_query": [{"pattern": ".*", "command": hook, "args": args}]}
    });
    std::fs::write(&config, doc.to_string()).unwrap();
    config
}

/// A config in `dir` whose one hook writes its environment to the file
/// returned beside it, and accepts.
fn config_with_env_hook(dir: &Path) -> (PathBuf, PathBuf) {
    let seen = dir.join("env.txt");
    let config = config_with_hook(
        dir,
        "cat > /dev/null\nenv > \"$1\"\necho '{\"accept\": true}'\n",
        &[seen.display().to_string()],
    );
    (config, seen)
}

/// A hook gets a short, fixed environment: none of the secrets pgmcp itself
/// was started with (the connection string, `PGPASSWORD`, anything else).
#[test]
fn hooks_see_no_secret_from_the_environment() {
    let home = tempfile::tempdir().unwrap();
    let (config, seen) = config_with_env_hook(home.path());
    let out = crate::support::pgmcp(home.path())
        .arg("--config")
        .arg(&config)
        .args(["--database", "sqlite::memory:", "query", "SELECT 1"])
        .env("PGPASSWORD", "pw-from-pgpassword")
        .env(
            "PGMCP_PG_CONNSTRING",
            "postgresql://agent:pw-in-connstring@db.example.com/shop",
        )
        .env(
            "PGMCP_DATABASE",
            "postgresql://agent:pw-in-database@db.example.com/shop",
        )
        .env("PGPASSFILE", "/home/agent/.pgpass-secret")
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env = std::fs::read_to_string(&seen).unwrap();
    for secret in ["pw-from", "pw-in", "pgpass-secret", "aws-secret"] {
        assert!(!env.contains(secret), "{secret} reached the hook:\n{env}");
    }
    let names: Vec<&str> = env.lines().filter_map(|l| l.split_once('=').map(|(n, _)| n)).collect();
    // What the shell itself adds (PWD, SHLVL, _) is not pgmcp's doing.
    let shell = ["PWD", "OLDPWD", "SHLVL", "_"];
    for name in &names {
        assert!(
            pgmcp::testing::hooks::ENV_ALLOWED.contains(name)
                || ["PGMCP_HOOK_STAGE", "PGMCP_TOOL", "PGMCP_DATABASE_NAME"].contains(name)
                || shell.contains(name),
            "{name} reached the hook:\n{env}"
        );
    }
    for expected in [
        "PATH=",
        "HOME=",
        "LANG=C.UTF-8",
        "PGMCP_HOOK_STAGE=before_query",
        "PGMCP_TOOL=query",
    ] {
        assert!(
            env.lines().any(|l| l.starts_with(expected)),
            "{expected} missing:\n{env}"
        );
    }
}

/// Whatever a hook started in the background ends with it, whether the hook
/// accepted, rejected or failed.
#[test]
fn a_finished_hook_leaves_no_background_child() {
    for (ending, exit) in [
        ("echo '{\"accept\": true}'", Some(0)),
        ("echo '{\"accept\": false, \"error_message\": \"no\"}'", Some(1)),
        ("exit 3", Some(1)),
    ] {
        let home = tempfile::tempdir().unwrap();
        let pid_file = home.path().join("child.pid");
        let config = config_with_hook(
            home.path(),
            // The sleeper's output goes elsewhere, so the hook's stdout closes
            // when the hook exits: nothing waits for the sleeper.
            &format!("cat > /dev/null\nsleep 300 > /dev/null 2>&1 &\necho $! > \"$1\"\n{ending}\n"),
            &[pid_file.display().to_string()],
        );
        let started = Instant::now();
        let out = crate::support::pgmcp(home.path())
            .arg("--config")
            .arg(&config)
            .args(["--database", "sqlite::memory:", "query", "SELECT 1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), exit, "{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "the call waited for the sleeper"
        );
        let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(child) && !is_zombie(child) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = alive(child) && !is_zombie(child);
        if left {
            // SAFETY: the test's own sleeper; do not leave it behind.
            unsafe { libc::kill(child, libc::SIGKILL) };
        }
        assert!(!left, "{ending}: the hook's background child {child} outlived it");
    }
}

/// A hook named without a path is never found in the working directory, even
/// when `PATH` holds `.` or an empty entry: that directory is whatever project
/// the editor has open.
#[test]
fn a_bare_hook_name_is_never_found_in_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("conf");
    std::fs::create_dir(&dir).unwrap();
    let marker = home.path().join("planted-ran");
    let planted = home.path().join("pgmcp-planted-hook");
    std::fs::write(
        &planted,
        format!("#!/bin/sh\ntouch {}\necho '{{\"accept\": true}}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.join("config.json");
    let doc = serde_json::json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
        "hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": ".*", "command": "pgmcp-planted-hook"}]}
    });
    std::fs::write(&config, doc.to_string()).unwrap();
    let system = std::env::var("PATH").unwrap_or_default();
    for path in [format!(".:{system}"), format!(":{system}"), format!("{system}:")] {
        let out = crate::support::pgmcp(home.path())
            .env("PATH", &path)
            .arg("--config")
            .arg(&config)
            .args(["--database", "sqlite::memory:", "query", "SELECT 1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "PATH={path}: {stderr}");
        assert!(stderr.contains("hook failed (command: pgmcp-planted-hook)"), "{stderr}");
        assert!(!marker.exists(), "PATH={path}: the working directory's hook ran");
    }
}

/// A hook holds none of pgmcp's descriptors (the PostgreSQL socket, the log
/// file, pgmcp's stderr), and neither its environment nor its command line
/// holds the connection string or password pgmcp was given.
#[test]
fn a_hook_inherits_no_descriptor_and_no_secret() {
    let db = pg::server().database();
    let home = tempfile::tempdir().unwrap();
    let conf = private_dir(home.path(), "conf");
    let report = conf.join("report");
    let script = conf.join("inspect.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > /dev/null\n\
             {{ for fd in /proc/$$/fd/*; do echo \"fd $fd -> $(readlink $fd)\"; done; \
             echo ENV; tr '\\0' '\\n' < /proc/$$/environ; \
             echo CMDLINE; tr '\\0' ' ' < /proc/$$/cmdline; echo; }} > '{}' 2>&1\n\
             echo '{{\"accept\": true}}'\n",
            report.display()
        ),
    )
    .unwrap();
    chmod(&script, 0o700);
    let log = conf.join("pgmcp.log");
    let config = write_config(
        &conf,
        json!({"logging": {"output": log, "level": "trace"},
               "hooks": {"default_timeout_seconds": 5,
                         "before_query": [{"pattern": "marker", "command": script}]}}),
    );
    let password = "Hq4Pz8SecretWx2";
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", config.to_str().unwrap()],
        &[
            ("PGMCP_PG_CONNSTRING", &db.url),
            ("PGPASSWORD", password),
            ("PGMCP_DATABASE", ""),
        ],
    );
    mcp.initialize();
    // A pooled connection is open while the hook runs.
    let warm = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
    assert_eq!(tool_json(&warm)["rows"], json!([{"one": 1}]));
    let call = mcp.call_tool("query", json!({"sql": "SELECT 'marker' AS m"}));
    assert!(!is_error(&call), "{}", tool_text(&call));
    let seen = std::fs::read_to_string(&report).unwrap();
    let fds: Vec<&str> = seen.lines().filter(|l| l.starts_with("fd ")).collect();
    assert!(!fds.is_empty(), "{seen}");
    for line in &fds {
        assert!(!line.contains("socket:"), "a socket reached the hook: {line}\n{seen}");
        assert!(!line.contains("pgmcp.log"), "the log file reached the hook: {line}");
        assert!(
            !line.contains("pgmcp.stderr"),
            "pgmcp's stderr reached the hook: {line}"
        );
    }
    let db_password = db.url.split('@').next().unwrap().rsplit(':').next().unwrap();
    for secret in [
        password,
        db_password,
        db.url.as_str(),
        "PGMCP_PG_CONNSTRING",
        "PGPASSWORD",
    ] {
        assert!(!seen.contains(secret), "the hook sees {secret:?}:\n{seen}");
    }
}

/// On a server with several databases, a hook is told which one the call
/// runs on (`PGMCP_DATABASE_NAME`), and sees none of their passwords.
#[test]
fn hooks_are_told_which_database() {
    let home = tempfile::tempdir().unwrap();
    let (config, seen) = config_with_env_hook(home.path());
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    doc["databases"] = serde_json::json!({"first": {"url": "sqlite::memory:"}, "second": {"url": "sqlite::memory:"}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let out = crate::support::pgmcp(home.path())
        .arg("--config")
        .arg(&config)
        .args(["query", "--database", "second", "SELECT 1"])
        .env("PGMCP_DB_FIRST_PASSWORD", "pw-of-first")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env = std::fs::read_to_string(&seen).unwrap();
    assert!(env.lines().any(|l| l == "PGMCP_DATABASE_NAME=second"), "{env}");
    assert!(!env.contains("pw-of-first"), "{env}");
}
