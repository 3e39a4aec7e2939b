//! The config the catalog's sessions run with: writes allowed, DROP allowed
//! (so a test can change the schema mid-session), and e-mail addresses
//! masked. Here, not in `resources::`, because the prompts' tests run with
//! it too.

use std::path::Path;

use serde_json::json;

/// A writable config with an e-mail masking rule; DROP allowed, so a test
/// can change the schema mid-session.
pub fn write_config(dir: &Path) -> String {
    let path = dir.join("config.json");
    let text = json!({
        "server": {"read_only": false},
        "protection": {"allow_drop": true},
        // The schema changes mid-session from a client that asks no one;
        // a person's word before a write has its own tests (confirm.rs).
        "confirm": "never",
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
        "sanitization": [{"pattern": r"[\w.+-]+@[\w-]+\.[\w.]+", "replacement": "[email]"}],
    });
    std::fs::write(&path, text.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}
