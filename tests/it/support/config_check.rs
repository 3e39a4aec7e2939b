//! `pgmcp check` on the demo shop with a config file's text: how a mistake
//! in the file is reported. Here, not in `check::`, because the command
//! line's tests check the example config the same way.

use std::path::Path;

use crate::support::pgmcp_as_configured as pgmcp;

/// `pgmcp check` on the demo shop, with `text` written as the config file
/// at `path`: its exit code and what it said on stderr.
pub fn check_config(home: &Path, path: &Path, text: &str) -> (Option<i32>, String) {
    std::fs::write(path, text).unwrap();
    let demo = format!("sqlite:{}/fixtures/demo.db", env!("CARGO_MANIFEST_DIR"));
    let out = pgmcp(home)
        .arg("--config")
        .arg(path)
        .args(["--database", &demo, "check"])
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}
