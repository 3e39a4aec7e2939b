//! `cargo xtask`, run as a person runs it, and what a command that must
//! succeed printed. Here, not in `release::`, because the first hour's test
//! (`newcomer::`) packages the binary the same way.

use std::path::Path;
use std::process::{Command, Output};

pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo xtask <args>`, run as a person runs it, but built in its own
/// target directory: the one this test binary came from is locked by the
/// `cargo test` that started it.
pub fn xtask(args: &[&str]) -> Output {
    let binary = Path::new(env!("CARGO_BIN_EXE_pgmcp"));
    let target = binary
        .ancestors()
        .nth(2)
        .expect("the test binary lives in <target>/<profile>/")
        .join("xtask-target");
    Command::new(env!("CARGO"))
        .current_dir(workspace())
        .env("CARGO_TARGET_DIR", target)
        .args(["xtask"])
        .args(args)
        .output()
        .expect("run cargo xtask")
}

pub fn ok(output: Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{what} failed ({}):\n{stderr}", output.status);
    String::from_utf8_lossy(&output.stdout).into_owned()
}
