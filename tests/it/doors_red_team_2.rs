//! Variants of "every door through the same fences" for the doors around
//! the pipeline: where config, hook, certificate and log paths resolve from
//! (never the working directory), what a hook can reach (its program, its
//! script, its descriptors, its environment), the config wizard's target,
//! and framing under a client that stops reading. Each against the real
//! binary; a test marked `#[ignore = "hole: ..."]` shows a hole still open.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::pgmcp;
use crate::support::stdio::{McpProcess, tool_json, tool_text};

/// A user id that is neither root nor the one running the tests.
const STRANGER: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn running_as_root() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A private directory (0700) for one case.
fn private_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    chmod(&dir, 0o700);
    dir
}

/// A valid, private config at `dir/config.json` with `extra` merged in at
/// the top level, logging to `dir/pgmcp.log`.
fn write_config(dir: &Path, extra: Value) -> PathBuf {
    let path = dir.join("config.json");
    let mut doc = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 20, "list_tables_timeout_seconds": 20,
                  "describe_table_timeout_seconds": 20},
    });
    let base = doc.as_object_mut().unwrap();
    for (k, v) in extra.as_object().unwrap() {
        base.insert(k.clone(), v.clone());
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    chmod(&path, 0o600);
    path
}

/// A `before_query` hook script that records `what` in `marker` and accepts.
fn marking_hook(marker: &Path, what: &str) -> String {
    format!(
        "#!/bin/sh\ncat > /dev/null\n{what} > '{}' 2>&1\necho '{{\"accept\": true}}'\n",
        marker.display()
    )
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

// ---------------------------------------------------------------------------
// Hooks: the file run is the file checked.
// ---------------------------------------------------------------------------

/// A hook program missing at startup is not checked then ("fails when the
/// hook runs"); if it appears later, in a shared sticky directory, owned by
/// someone else (or writable by others), it must not be run: what would
/// have been refused at startup is refused at run time too.
#[test]
fn a_hook_program_that_appears_after_startup_is_checked_before_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let conf = private_dir(home.path(), "conf");
    // A shared directory like /tmp: anyone may create files, the sticky bit
    // keeps them from replacing others' files (accepted by the trust rules).
    let shared = home.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let program = shared.join("approve.sh");
    let marker = conf.join("ran");
    let config = write_config(
        &conf,
        json!({"hooks": {"default_timeout_seconds": 5,
                         "before_query": [{"pattern": ".*", "command": program}]}}),
    );
    let mut mcp = McpProcess::spawn(
        &[
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--database",
            "sqlite::memory:",
        ],
        &[],
    );
    mcp.initialize();
    // Before the file exists the call fails, as documented.
    let before = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
    assert!(is_error(&before), "{before}");
    // Now someone else drops a program there.
    std::fs::write(&program, marking_hook(&marker, "id")).unwrap();
    if running_as_root() {
        std::os::unix::fs::lchown(&program, Some(STRANGER), None).unwrap();
        chmod(&program, 0o755);
    } else {
        chmod(&program, 0o777);
    }
    let after = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
    assert!(
        !marker.exists(),
        "a hook program nobody checked ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert!(is_error(&after), "the call went through an unchecked hook: {after}");
}

/// A script handed to an interpreter by a relative path (`"command":
/// "/bin/sh", "args": ["hooks/guard.sh"]`) must not be the one the working
/// directory holds: desktop clients start pgmcp in whatever project is open,
/// the one place pgmcp never takes configuration from. (A relative `command`
/// is taken from the config file's directory; a relative script argument
/// is resolved by the interpreter against the working directory, and the
/// trust check accepts the cwd's file because it belongs to the user.)
#[test]
fn a_relative_hook_script_is_never_taken_from_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let conf = private_dir(home.path(), "conf");
    let repo = private_dir(home.path(), "cloned-repo");
    let outside = private_dir(home.path(), "markers");
    for (i, arg) in ["hooks/guard.sh", "./guard.sh", "guard.sh"].iter().enumerate() {
        let marker = outside.join(format!("ran-{i}"));
        let planted = repo.join(arg);
        std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
        std::fs::write(&planted, marking_hook(&marker, "pwd")).unwrap();
        chmod(&planted, 0o755);
        let config = write_config(
            &conf,
            json!({"hooks": {"default_timeout_seconds": 5,
                             "before_query": [{"pattern": ".*", "command": "/bin/sh", "args": [arg]}]}}),
        );
        let out = pgmcp(home.path())
            .current_dir(&repo)
            .arg("--config")
            .arg(&config)
            .args(["--database", "sqlite::memory:", "query", "SELECT 1 AS one"])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "args [{arg:?}]: the working directory's script ran (exit {:?}):\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout)
        );
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

// ---------------------------------------------------------------------------
// Paths that would resolve against the working directory.
// ---------------------------------------------------------------------------

/// Garbage that is no PEM certificate: if pgmcp reads it, it says so.
const NOT_PEM: &str = "planted by the repository\n";

/// With a relative `HOME` (a client entry with `"HOME": "."`, say), libpq's
/// default files (`~/.postgresql/root.crt`) must not come from the working
/// directory: a planted root certificate there would decide whom TLS trusts.
/// The config lookup already refuses a relative HOME for the same reason.
#[test]
fn a_relative_home_takes_no_tls_file_from_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let repo = private_dir(home.path(), "cloned-repo");
    let planted = repo.join("h/.postgresql");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::write(planted.join("root.crt"), NOT_PEM).unwrap();
    let out = pgmcp(home.path())
        .current_dir(&repo)
        .env("HOME", "h")
        .args([
            "--database",
            "postgresql://u@127.0.0.1:1/db?sslmode=verify-full",
            "check",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        !shown.contains("no PEM certificates") && !shown.contains("h/.postgresql"),
        "the working directory's root certificate was read:\n{shown}"
    );
}

/// The same relative `HOME` must not put the default log file in the working
/// directory (a cloned repository: the log would be committed with it, and a
/// directory symlink planted there would decide where pgmcp writes).
#[test]
fn a_relative_home_puts_no_log_in_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let repo = private_dir(home.path(), "cloned-repo");
    let out = pgmcp(home.path())
        .current_dir(&repo)
        .env("HOME", "h")
        .env_remove("XDG_STATE_HOME")
        .args(["--database", "sqlite::memory:", "check"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let created: Vec<_> = walk(&repo);
    assert!(
        created.is_empty(),
        "pgmcp wrote into the working directory {created:?} (exit {:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A relative `XDG_STATE_HOME` or `XDG_CONFIG_HOME` is ignored, as the XDG
/// spec says: no log in the working directory, no config read from it.
#[test]
fn relative_xdg_dirs_are_not_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let repo = private_dir(home.path(), "cloned-repo");
    let planted = repo.join("xdg/pgmcp");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::write(
        planted.join("config.json"),
        json!({"server": {"read_only": false},
               "query": {"default_timeout_seconds": 1, "list_tables_timeout_seconds": 1,
                         "describe_table_timeout_seconds": 1}})
        .to_string(),
    )
    .unwrap();
    let out = pgmcp(home.path())
        .current_dir(&repo)
        .env("XDG_CONFIG_HOME", "xdg")
        .env("XDG_STATE_HOME", "state")
        .args(["--database", "sqlite::memory:", "check"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("config file:  none found"), "{shown}");
    assert!(shown.contains("read-only:    on"), "{shown}");
    assert!(
        !repo.join("state").exists(),
        "a log under the working directory:\n{shown}"
    );
}

/// A relative `connection.sslrootcert` in a config file is taken from the
/// config's directory, as relative hook commands and `sqlite.root` are, not
/// from the working directory.
#[test]
fn a_relative_certificate_in_the_config_is_not_taken_from_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let conf = private_dir(home.path(), "conf");
    let repo = private_dir(home.path(), "cloned-repo");
    std::fs::write(repo.join("root.crt"), NOT_PEM).unwrap();
    let config = write_config(
        &conf,
        json!({"connection": {"host": "127.0.0.1", "port": 1, "user": "u",
                              "sslmode": "verify-full", "sslrootcert": "root.crt"}}),
    );
    let out = pgmcp(home.path())
        .current_dir(&repo)
        .arg("--config")
        .arg(&config)
        .arg("check")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        !shown.contains("no PEM certificates"),
        "the working directory's root.crt was read:\n{shown}"
    );
}

/// Files under `dir`, relative, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        found.push(path.strip_prefix(dir).unwrap().to_owned());
        if path.is_dir() {
            found.extend(walk(&path).into_iter().map(|p| path.strip_prefix(dir).unwrap().join(p)));
        }
    }
    found
}

// ---------------------------------------------------------------------------
// Passwords: forms the earlier suites do not try, and the log file too.
// ---------------------------------------------------------------------------

/// Percent-encoded passwords (shown neither encoded nor decoded), a
/// password in the URL's query string, a key=value password with escaped
/// quotes: no piece of it on stdout, stderr, or in a trace-level log.
#[test]
fn no_piece_of_a_password_in_any_form_reaches_output_or_log() {
    let home = tempfile::tempdir().unwrap();
    let conf = private_dir(home.path(), "conf");
    let log = conf.join("pgmcp.log");
    let config = write_config(&conf, json!({"logging": {"output": log, "level": "trace"}}));
    // (connection string, the secret as it must never appear)
    let cases: &[(&str, &[&str])] = &[
        (
            "postgresql://u:Xq7%2FZk9%40Wm4@127.0.0.1:1/db",
            &["Xq7%2FZk9", "Xq7/Zk9@Wm4"],
        ),
        ("postgresql://u@127.0.0.1:1/db?password=Fw5Gd2Ys9", &["Fw5Gd2Ys9"]),
        (
            "postgresql://u@127.0.0.1:1/db?password=Fw5%3FGd2&sslmode=bogus",
            &["Fw5%3FGd2", "Fw5?Gd2"],
        ),
        (
            "host=127.0.0.1 port=1 user=u password='Jx2\\' Kq4Wz7'",
            &["Jx2", "Kq4Wz7"],
        ),
        (
            "host=127.0.0.1 port=1 user=u password='Jx2\\\\ Kq4Wz7",
            &["Jx2", "Kq4Wz7"],
        ),
        ("postgresql://u:Vb3%ZZHn5@127.0.0.1:1/db", &["Vb3%ZZHn5", "Vb3", "Hn5"]),
        ("postgresql://u:Vb3Hn5Tg6@127.0.0.1:1:2/db", &["Vb3Hn5Tg6"]),
        ("postgresql://u:Vb3Hn5Tg6@[::1/db", &["Vb3Hn5Tg6"]),
    ];
    for (connstring, secrets) in cases {
        let _ = std::fs::remove_file(&log);
        for args in [&["query", "SELECT 1"][..], &["check"][..]] {
            let out = pgmcp(home.path())
                .arg("--config")
                .arg(&config)
                .args(args)
                .env("PGMCP_PG_CONNSTRING", connstring)
                .env("PGCONNECT_TIMEOUT", "2")
                .timeout(Duration::from_secs(30))
                .output()
                .unwrap();
            assert!(!out.status.success(), "{connstring}: {args:?} succeeded");
            let shown = format!(
                "{}{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            for secret in *secrets {
                assert!(
                    !shown.contains(secret),
                    "{connstring} ({args:?}) shows {secret:?}:\n{shown}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// `pgmcp configure`
// ---------------------------------------------------------------------------

/// A `config.json` that is a symlink (planted, or pointing into a place
/// others share) is replaced by a private file, never written through.
#[test]
fn configure_never_writes_through_a_config_symlink() {
    let home = tempfile::tempdir().unwrap();
    let dir = private_dir(home.path(), "conf");
    let victim = home.path().join("victim.json");
    let precious = r#"{"query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}}"#;
    std::fs::write(&victim, precious).unwrap();
    chmod(&victim, 0o644);
    let path = dir.join("config.json");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin("\n".repeat(200))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), precious);
    assert_eq!(std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o644);
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_file(), "config.json is still a symlink");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}

// ---------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------

/// A flood of requests with 64 KiB ids for a method that does not exist:
/// each is answered with its whole id and -32601, the process stays within
/// the README's 100 MB bound, and the session goes on.
#[test]
fn a_flood_of_long_id_requests_is_answered_in_bounded_memory() {
    let mut mcp = McpProcess::spawn(&["serve", "--database", "sqlite::memory:"], &[]);
    mcp.initialize();
    // 64 KiB ids: each answer echoes its whole id.
    let pad = "i".repeat(64 * 1024);
    let ids: Vec<String> = (0..400).map(|n| format!("{n:04}{pad}")).collect();
    let start = Instant::now();
    for id in &ids {
        mcp.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"no/such"}}"#));
    }
    assert!(start.elapsed() < Duration::from_secs(60));
    // 400 answers of 64 KiB would be 26 MB if pgmcp queued them.
    for id in &ids {
        let got = mcp.recv_response(&json!(id), Duration::from_secs(30));
        assert_eq!(got["error"]["code"], json!(-32601), "{}", &got["error"]);
    }
    assert!(mcp.peak_memory_kb() < 100 * 1024, "peak {} kB", mcp.peak_memory_kb());
    let alive = mcp.request("ping", json!({}));
    assert_eq!(alive["result"], json!({}));
}
