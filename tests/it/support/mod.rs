//! Real parts for the integration tests: a throwaway PostgreSQL ([`pg`]), a
//! JSON-RPC client that drives the real `pgmcp` binary over stdio ([`stdio`]),
//! library engines and calls through them ([`engine`]), SQLite and DuckDB
//! files ([`files`]), protection policies written as specs
//! ([`protection`]), a pseudo-terminal a person's answers are typed
//! into ([`terminal`]), a served binary's config and warmed session
//! ([`served`]), a private directory with its config and hooks
//! ([`confdir`]), and the binary run to its end within a time limit
//! ([`process`]). Shared by several feature modules: the configs served
//! binaries start from ([`writable_config`], [`masking_config`]), `pgmcp
//! serve --http` and a plain HTTP client ([`http`]), the official MCP Python
//! SDK as a client ([`python_sdk`]), the hook programs under
//! `fixtures/hooks/` ([`hook_scripts`]), `pgmcp check` on a config's text
//! ([`config_check`]), `cargo xtask` ([`xtask`]), and a screenshot's
//! pixels ([`png`]).
//!
//! The stdio bench (`benches/stdio.rs`) includes this module too, for the
//! harness and the client: nothing here names a feature module of `tests/it`.

// Not every feature module uses every helper, and a helper nobody uses yet must
// not fail `cargo clippy --all-targets -- -D warnings`.
#![allow(dead_code)]

pub mod bouncer;
pub mod certs;
pub mod confdir;
pub mod config_check;
pub mod curated;
pub mod engine;
pub mod files;
pub mod findings;
pub mod hook_scripts;
pub mod http;
pub mod masking_config;
pub mod net;
pub mod pg;
pub mod planter;
pub mod png;
pub mod process;
pub mod protection;
pub mod psql_session;
pub mod python_sdk;
pub mod served;
pub mod stdio;
pub mod terminal;
pub mod tools;
pub mod unguarded;
pub mod writable_config;
pub mod xtask;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// README, "Memory": the whole process's peak resident memory stays under
/// this on PostgreSQL and SQLite (the default 50,000-byte cap).
pub const PEAK_BOUND_KB: u64 = 100 * 1024;

/// The real `pgmcp` binary in `home`, with a clean environment: no config file
/// unless a test writes one, logs under `home/state`, nothing inherited but
/// `PATH`.
pub fn pgmcp(home: &Path) -> Command {
    Command::from_std(pgmcp_std(home))
}

/// [`pgmcp`] without the versions run's reading as the login before 14: for
/// the tests of what `check` reports, which say themselves what each version
/// of the server shows.
pub fn pgmcp_as_configured(home: &Path) -> Command {
    let mut cmd = pgmcp_std(home);
    cmd.env_remove("PGMCP_READ_ONLY_AS_LOGIN");
    Command::from_std(cmd)
}

/// [`pgmcp`] as a plain `std::process::Command`, so its stdout and stderr
/// can be any file.
pub fn pgmcp_std(home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pgmcp"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .current_dir(home);
    read_as_login_where_told(&mut cmd);
    cmd
}

/// On a server without `pg_read_all_data` (before 14), where the harness's
/// superuser login would make pgmcp refuse read-only calls, the versions
/// run asks the binaries it starts to read as the login
/// (`PGMCP_TEST_READ_ONLY_AS_LOGIN`, set by `versions::`).
pub fn read_as_login_where_told(cmd: &mut std::process::Command) {
    if std::env::var("PGMCP_TEST_READ_ONLY_AS_LOGIN").is_ok_and(|v| v == "true") {
        cmd.env("PGMCP_READ_ONLY_AS_LOGIN", "true");
    }
}

/// What a finished pgmcp printed on stdout, after checking it exited with
/// `code`; a failure shows both streams.
pub fn stdout_of(out: &std::process::Output, code: i32) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The catalog facts of a fresh PostgreSQL 15 database
/// (`fixtures/guard/pg15-routines.json`), for pure guard checks.
pub fn pg15_routines() -> pgmcp::testing::guard::Routines {
    routines_fixture("pg15-routines.json")
}

/// Catalog facts from `fixtures/guard/NAME`.
pub fn routines_fixture(name: &str) -> pgmcp::testing::guard::Routines {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/guard").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    pgmcp::testing::guard::Routines::from_json(serde_json::from_str(&text).unwrap()).unwrap()
}

/// An empty dir named `name` in the target's scratch space, for what a
/// `static` holds for the whole run: a static is never dropped, so a temp dir
/// would be left behind by every run (half a gigabyte for a bundle of a debug
/// binary). This one is replaced by the next run instead.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    match std::fs::remove_dir_all(&dir) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => panic!("cannot clear {}: {err}", dir.display()),
        _ => {}
    }
    std::fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("cannot create {}: {err}", dir.display()));
    dir
}
