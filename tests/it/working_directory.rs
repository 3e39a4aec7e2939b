//! Nothing is taken from, or written into, the working directory: desktop
//! clients start pgmcp in whatever project is open. Where config, hook,
//! certificate and log paths resolve from, each against the real binary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::support::confdir::{chmod, marking_hook, private_dir, write_config};
use crate::support::pgmcp;

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
