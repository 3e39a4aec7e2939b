//! What the tests of curated tools and several databases write and run:
//! a tool and its parameters as the config spells them, `pgmcp check` on a
//! config, and a URL for a named database without its password.

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::pgmcp;

/// A curated tool as the config's `tools` spells it.
pub fn tool(name: &str, statement: &str, parameters: Value) -> Value {
    json!({"name": name, "description": format!("The {name} tool."), "statement": statement, "parameters": parameters})
}

/// A parameter of type `kind`.
pub fn param(name: &str, kind: &str) -> Value {
    json!({"name": name, "type": kind, "description": format!("the {name}")})
}

/// A parameter that is an array of `items`.
pub fn array_param(name: &str, items: &str) -> Value {
    json!({"name": name, "type": "array", "items": items, "description": format!("the {name}")})
}

/// `pgmcp check --config config`: its exit code and everything it printed.
pub fn check(config: &str, envs: &[(&str, &str)]) -> (i32, String) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = pgmcp(home.path());
    cmd.args(["check", "--config", config]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// A URL for `db` on the harness's server, without a password: a named
/// database takes its own from `PGMCP_DB_<NAME>_PASSWORD`.
pub fn bare_url(server: &pg::PgServer, db: &str) -> String {
    let host = server.host();
    let host = match host.contains(':') {
        true => format!("[{host}]"),
        false => host.to_owned(),
    };
    format!("postgres://{}@{}:{}/{}", server.admin_user(), host, server.port(), db)
}
