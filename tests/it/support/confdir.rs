//! A private directory for one case of the door tests, the config in it,
//! and a hook script that records that it ran.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A private directory (0700) for one case.
pub fn private_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    chmod(&dir, 0o700);
    dir
}

/// A valid, private config at `dir/config.json` with `extra` merged in at
/// the top level, logging to `dir/pgmcp.log`.
pub fn write_config(dir: &Path, extra: Value) -> PathBuf {
    let path = dir.join("config.json");
    let mut doc = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 20, "list_tables_timeout_seconds": 20,
                  "describe_table_timeout_seconds": 20},
    });
    let base = doc.as_object_mut().unwrap();
    for (k, v) in extra.as_object().unwrap() {
        base.insert(k.clone(), v.clone());
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    chmod(&path, 0o600);
    path
}

/// A `before_query` hook script that records `what` in `marker` and accepts.
pub fn marking_hook(marker: &Path, what: &str) -> String {
    format!(
        "#!/bin/sh\ncat > /dev/null\n{what} > '{}' 2>&1\necho '{{\"accept\": true}}'\n",
        marker.display()
    )
}
