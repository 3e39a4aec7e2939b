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
    run("python_sdk_catalog.py", plan, config, database, envs)
}

/// Run `plan` (see fixtures/clients/python_sdk_confirm.py: a client whose
/// person answers elicitations as each step says) in one session with
/// `pgmcp serve --config <config> [--database <database>]`; the steps'
/// answers, each with what the person was asked.
pub fn confirm_session(plan: Value, config: &str, database: Option<&str>, envs: &[(&str, &str)]) -> Vec<Value> {
    let seen = run("python_sdk_confirm.py", plan, config, database, envs);
    seen["steps"].as_array().unwrap().clone()
}

/// What the person was shown in a step of [`confirm_session`], as one
/// text (empty: not asked).
pub fn shown(step: &Value) -> String {
    step["asked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["message"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The `_meta` of a 2026-07-28 request from a client with `capabilities`.
pub fn stateless_meta(capabilities: Value) -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "pgmcp-it", "version": "0.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// The fixture `script` run with `plan` against the real binary serving
/// `config`, in a clean environment holding only `envs`: what it printed.
fn run(script: &str, plan: Value, config: &str, database: Option<&str>, envs: &[(&str, &str)]) -> Value {
    let home = tempfile::tempdir().unwrap();
    let script = format!("{}/fixtures/clients/{script}", env!("CARGO_MANIFEST_DIR"));
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
