//! The config most tests of a served binary start from: writes allowed,
//! debug logging into the case's directory, 10 s timeouts. Here, not in
//! `serve::`, because the tests of every door and command use it.

use std::path::Path;

/// A config file in `dir` (writes allowed, logs to `dir/pgmcp.log`).
pub fn write_config(dir: &Path, extra_query: &str) -> String {
    let path = dir.join("config.json");
    let log = dir.join("pgmcp.log");
    let text = format!(
        r#"{{
            "server": {{"read_only": false}},
            "logging": {{"level": "debug", "output": {log:?}}},
            "query": {{"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10{extra_query}}}
        }}"#
    );
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}
