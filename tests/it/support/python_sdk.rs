//! The official MCP Python SDK as a desktop client uses it: one session with
//! the real binary over stdio, running a plan of steps
//! (`fixtures/clients/python_sdk_catalog.py`). Here, not in `resources::`,
//! because the tests of prompts and of a failed start run the same client.

use serde_json::Value;

use crate::support::tools;

/// The MCP Python SDK (as `http::`'s tests pin it).
pub const PYTHON_SDK: &str = "mcp==1.30.0";

/// Run `plan` (see fixtures/clients/python_sdk_catalog.py) in one session
/// with `pgmcp serve --config <config> [--database <database>]`, the
/// environment holding only `envs`. Returns the steps' answers, and the
/// capabilities the server declared.
pub fn session(plan: Value, config: &str, database: Option<&str>, envs: &[(&str, &str)]) -> (Vec<Value>, Value) {
    let seen = session_seen(plan, config, database, envs);
    (seen["steps"].as_array().unwrap().clone(), seen["capabilities"].clone())
}

/// [`session`], whole: the capabilities, the instructions and the steps.
pub fn session_seen(plan: Value, config: &str, database: Option<&str>, envs: &[(&str, &str)]) -> Value {
    let home = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/clients/python_sdk_catalog.py");
    let mut cmd = std::process::Command::new(tools::python("PGMCP_TEST_PYTHON", "py", &[PYTHON_SDK]));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .envs(envs.iter().copied())
        .arg(script)
        .arg(plan.to_string())
        .arg(env!("CARGO_BIN_EXE_pgmcp"))
        .args(["serve", "--config", config]);
    if let Some(database) = database {
        cmd.args(["--database", database]);
    }
    let out = cmd.output().expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(
        seen.get("error").is_none(),
        "{seen}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    seen
}
