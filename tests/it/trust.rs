//! Who may change what pgmcp runs on: a config file, or a hook program it
//! names, that anyone but its owner could change is refused at load, by the
//! real binary, with the file named and the command that fixes it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::confdir::{marking_hook, private_dir, write_config};
use crate::support::pgmcp;
use crate::support::stdio::{McpProcess, is_error};

/// A user id that is neither root nor the one running the tests.
const STRANGER: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), None).unwrap();
}

fn running_as_root() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A valid config at `path` whose `before_query` hook is `hook` with `args`.
fn config(path: &Path, hook: Option<&Path>, args: &[&str]) {
    let hooks: Vec<_> = hook
        .map(|h| json!({"pattern": ".*", "command": h, "args": args}))
        .into_iter()
        .collect();
    let doc = json!({
        "logging": {"output": path.with_extension("log")},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
        "hooks": {"default_timeout_seconds": 5, "before_query": hooks}
    });
    std::fs::write(path, doc.to_string()).unwrap();
    chmod(path, 0o600);
}

/// A hook that accepts everything, at `path`.
fn hook(path: &Path) {
    std::fs::write(path, "#!/bin/sh\ncat > /dev/null\necho '{\"accept\": true}'\n").unwrap();
    chmod(path, 0o755);
}

/// Run `pgmcp <how to name config> check` on an SQLite memory database:
/// exit code and stderr.
fn check(home: &Path, config: &Path, by_variable: bool) -> (Option<i32>, String) {
    let mut cmd = pgmcp(home);
    if by_variable {
        cmd.env("PGMCP_CONFIG_PATH", config);
    } else {
        cmd.arg("--config").arg(config);
    }
    let out = cmd.args(["--database", "sqlite::memory:", "check"]).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_refused(home: &Path, config: &Path, expected: &[String]) {
    for by_variable in [false, true] {
        let (code, stderr) = check(home, config, by_variable);
        assert_eq!(code, Some(2), "accepted; expected {expected:?}\n{stderr}");
        assert!(
            stderr.starts_with(&format!("pgmcp: config {}: ", config.display())),
            "{stderr}"
        );
        for part in expected {
            assert!(stderr.contains(part.as_str()), "missing {part:?} in:\n{stderr}");
        }
    }
}

fn assert_accepted(home: &Path, config: &Path) {
    let (code, stderr) = check(home, config, false);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A private directory for one case, inside the test's temp dir.
fn case_dir(home: &Path, name: &str) -> PathBuf {
    let dir = home.join(name);
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    dir
}

#[test]
fn a_config_others_could_change_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // The file itself: any write bit beyond the owner's.
    for (mode, who) in [(0o620, "its group"), (0o602, "others"), (0o666, "group and others")] {
        let dir = case_dir(home, &format!("file-{mode:o}"));
        let path = dir.join("config.json");
        config(&path, None, &[]);
        chmod(&path, mode);
        assert_refused(
            home,
            &path,
            &[format!(
                "{} can be written by {who}, who could make pgmcp do anything: chmod go-w {}",
                path.display(),
                path.display()
            )],
        );
        chmod(&path, 0o644);
        assert_accepted(home, &path);
    }
    // The directory holding it, and one further up.
    let up = case_dir(home, "up");
    let dir = case_dir(&up, "pgmcp");
    let path = dir.join("config.json");
    config(&path, None, &[]);
    for writable in [&dir, &up] {
        chmod(writable, 0o777);
        assert_refused(
            home,
            &path,
            &[format!(
                "the directory {} above {} can be written by group and others, who could replace the file: chmod go-w {}",
                writable.display(),
                path.display(),
                writable.display()
            )],
        );
        // The sticky bit (as on /tmp) lets only a file's owner replace it.
        chmod(writable, 0o1777);
        assert_accepted(home, &path);
        chmod(writable, 0o700);
    }
    // A symlink in a private directory, to a file in a directory others can write.
    let open = case_dir(home, "open");
    let target = open.join("real.json");
    config(&target, None, &[]);
    chmod(&open, 0o777);
    let link = case_dir(home, "linked").join("config.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_refused(home, &link, &[format!("the directory {} above", open.display())]);
}

#[test]
fn a_config_owned_by_someone_else_is_refused() {
    if !running_as_root() {
        // Only root can give a file away; the rule is the same for everyone.
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let dir = case_dir(home, "owned");
    let path = dir.join("config.json");
    config(&path, None, &[]);
    chown(&path, STRANGER);
    assert_refused(
        home,
        &path,
        &[format!(
            "{} is owned by user id {STRANGER}, who could make pgmcp do anything; it must belong to you (user id 0) or root: chown 0 {}",
            path.display(),
            path.display()
        )],
    );
    chown(&path, 0);
    chown(&dir, STRANGER);
    assert_refused(
        home,
        &path,
        &[format!("{} is owned by user id {STRANGER}", dir.display())],
    );
}

#[test]
fn a_hook_others_could_change_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let field = "hooks.before_query[0].command: ";
    // The program itself.
    let dir = case_dir(home, "program");
    let program = dir.join("hook.sh");
    hook(&program);
    let path = dir.join("config.json");
    config(&path, Some(&program), &[]);
    assert_accepted(home, &path);
    chmod(&program, 0o777);
    assert_refused(
        home,
        &path,
        &[
            field.to_owned(),
            format!("{} can be written by group and others", program.display()),
            format!("chmod go-w {}", program.display()),
        ],
    );
    chmod(&program, 0o775);
    assert_refused(
        home,
        &path,
        &[format!("{field}{} can be written by its group", program.display())],
    );
    chmod(&program, 0o755);
    // The directory holding it, given relative to the config file.
    let hooks = case_dir(&dir, "hooks");
    hook(&hooks.join("relative.sh"));
    config(&path, Some(Path::new("hooks/relative.sh")), &[]);
    assert_accepted(home, &path);
    chmod(&hooks, 0o777);
    assert_refused(
        home,
        &path,
        &[format!("{field}the directory {} above", hooks.display())],
    );
    chmod(&hooks, 0o700);
    // A bare name is the program found on PATH.
    let bin = case_dir(home, "bin");
    hook(&bin.join("pgmcp-test-hook"));
    config(&path, Some(Path::new("pgmcp-test-hook")), &[]);
    chmod(&bin.join("pgmcp-test-hook"), 0o757);
    let path_var = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = pgmcp(home)
        .env("PATH", &path_var)
        .arg("--config")
        .arg(&path)
        .args(["--database", "sqlite::memory:", "check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{field}{}/pgmcp-test-hook can be written by others",
            bin.display()
        )),
        "{stderr}"
    );
    // A script handed to an interpreter is the hook too.
    let script = dir.join("script.sh");
    hook(&script);
    chmod(&script, 0o666);
    config(&path, Some(Path::new("/bin/sh")), &[script.to_str().unwrap()]);
    assert_refused(
        home,
        &path,
        &[format!(
            "hooks.before_query[0].args[0]: {} can be written by group and others",
            script.display()
        )],
    );
    if running_as_root() {
        chmod(&script, 0o755);
        assert_accepted(home, &path);
        chown(&program, STRANGER);
        config(&path, Some(&program), &[]);
        assert_refused(
            home,
            &path,
            &[format!("{field}{} is owned by user id {STRANGER}", program.display())],
        );
    }
}

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
