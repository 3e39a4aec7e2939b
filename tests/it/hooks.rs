//! Hooks as real processes: the seed's hook table (6.3) against the scripts in
//! `fixtures/hooks/`, plus the bounds pgmcp adds (output size, killing what a
//! timed-out hook started).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pgmcp::hooks::{Hook, HookError, Stage, run_chain};
use regex::Regex;
use tokio_util::sync::CancellationToken;

pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hooks")
        .join(name)
}

fn hook(name: &str, pattern: &str, timeout_secs: u64) -> Hook {
    Hook {
        pattern: Regex::new(pattern).unwrap(),
        command: script(name),
        args: vec![],
        timeout: Duration::from_secs(timeout_secs),
    }
}

async fn before(hooks: &[Hook], sql: &str) -> Result<String, HookError> {
    run_chain(Stage::BeforeQuery, hooks, sql.to_owned(), &CancellationToken::new()).await
}

async fn after(hooks: &[Hook], result: &str) -> Result<String, HookError> {
    run_chain(Stage::AfterQuery, hooks, result.to_owned(), &CancellationToken::new()).await
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
