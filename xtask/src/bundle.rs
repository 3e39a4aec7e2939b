//! `cargo xtask mcpb`: the MCP Bundle (`.mcpb`, formerly DXT) Claude Desktop
//! installs with a double click: a zip of `manifest.json`, an icon and the
//! binary. A bundle cannot pick a binary by CPU architecture, so there is one
//! bundle per OS and architecture (macOS: one universal binary).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::archive::{self, EXECUTABLE, Entry, READABLE};
use crate::project::{Project, megabytes};

/// Where the bundle is meant to run, in the bundle format's own names.
pub struct Platform {
    /// `darwin`, `linux` or `win32` (Node's `process.platform`).
    pub os: &'static str,
    /// `x64`, `arm64` or `universal`.
    pub arch: &'static str,
}

impl Platform {
    /// The named platform, or the host's for what is not named.
    pub fn choose(os: Option<&str>, arch: Option<&str>) -> Result<Platform> {
        let os = match os.unwrap_or(std::env::consts::OS) {
            "darwin" | "macos" => "darwin",
            "linux" => "linux",
            "win32" | "windows" => "win32",
            other => bail!("unknown --os {other:?}: darwin, linux or win32"),
        };
        let arch = match arch.unwrap_or(std::env::consts::ARCH) {
            "x64" | "x86_64" => "x64",
            "arm64" | "aarch64" => "arm64",
            "universal" => "universal",
            other => bail!("unknown --arch {other:?}: x64, arm64 or universal"),
        };
        if arch == "universal" && os != "darwin" {
            bail!("--arch universal is for macOS bundles (--os darwin) only");
        }
        Ok(Platform { os, arch })
    }

    fn executable(&self) -> &'static str {
        if self.os == "win32" { "pgmcp.exe" } else { "pgmcp" }
    }
}

/// The bundle's file name, e.g. `pgmcp-0.1.0-darwin-universal.mcpb`.
pub fn file_name(version: &str, platform: &Platform) -> String {
    format!("pgmcp-{version}-{}-{}.mcpb", platform.os, platform.arch)
}

/// Write the bundle and its `.sha256`; returns the bundle's path.
pub fn write(project: &Project, binary: &Path, platform: &Platform, out_dir: &Path) -> Result<PathBuf> {
    let tools = crate::tools::list(binary)?;
    let manifest = manifest(&project.version, platform, tools);
    let executable = format!("server/{}", platform.executable());
    let entries = vec![
        Entry {
            name: "manifest.json".to_owned(),
            data: serde_json::to_vec_pretty(&manifest)?,
            mode: READABLE,
        },
        Entry::file("icon.png", &project.file("xtask/assets/icon.png"), READABLE)?,
        Entry::file("README.md", &project.file("README.md"), READABLE)?,
        Entry::file("LICENSE", &project.file("LICENSE"), READABLE)?,
        Entry::file(&executable, binary, EXECUTABLE)?,
    ];
    let path = out_dir.join(file_name(&project.version, platform));
    archive::write_zip(&path, &entries)?;
    let sum = archive::write_sha256(&path)?;
    eprintln!(
        "xtask: wrote {} ({}; binary {}), sha256 {sum}",
        path.display(),
        megabytes(&path)?,
        megabytes(binary)?
    );
    Ok(path)
}

/// The manifest (MCPB manifest version 0.3).
///
/// Every setting reaches pgmcp through an environment variable, never the
/// command line: the keychain-held secrets stay out of `ps`, and an optional
/// setting left empty (Claude Desktop substitutes "") is read by pgmcp as
/// unset. `PGMCP_BUNDLE` tells pgmcp its settings are in this form, so a
/// start it cannot make is explained with the form's titles
/// (`src/door/start_failure.rs` holds them: keep the two in step).
pub fn manifest(version: &str, platform: &Platform, tools: Vec<Value>) -> Value {
    let command = format!("${{__dirname}}/server/{}", platform.executable());
    json!({
        "manifest_version": "0.3",
        "name": "pgmcp",
        "display_name": "pgmcp",
        "version": version,
        "description": "Lets Claude query your PostgreSQL database, SQLite or DuckDB file safely: read-only by default, every statement checked by PostgreSQL's own parser.",
        "long_description": "pgmcp gives the agent its tools (query, list_tables, describe_table, and on PostgreSQL explain and diagnose) over one guarded pipeline: each SQL statement is parsed with PostgreSQL's own parser and checked before it reaches the database, runs in its own read-only transaction with a deadline that stops it on the server, and comes back with a row cap and a size cap. Values that look like secrets (card numbers, keys) can be masked before the model sees them. Give it a PostgreSQL connection string, or pick an SQLite or DuckDB file; or turn on \"Try the demo shop\" to try it first on a small sample shop that comes with it.",
        "author": {"name": "The pgmcp developers"},
        "license": "MIT",
        "icon": "icon.png",
        "keywords": ["postgresql", "sqlite", "duckdb", "sql", "database", "read-only"],
        "server": {
            "type": "binary",
            "entry_point": format!("server/{}", platform.executable()),
            "mcp_config": {
                "command": command,
                "args": ["serve"],
                "env": {
                    "PGMCP_PG_CONNSTRING": "${user_config.connection_string}",
                    "PGPASSWORD": "${user_config.password}",
                    "PGMCP_DATABASE_FILE": "${user_config.database_file}",
                    "PGMCP_READ_ONLY": "${user_config.read_only}",
                    "PGMCP_MAX_ROWS": "${user_config.max_rows}",
                    "PGMCP_DEMO": "${user_config.demo}",
                    "PGMCP_BUNDLE": "1"
                },
                // The same bundle layout on every OS; only Windows names its
                // executable differently.
                "platform_overrides": {
                    "win32": {"command": "${__dirname}/server/pgmcp.exe"}
                }
            }
        },
        "tools": tools,
        "compatibility": {
            "platforms": [platform.os]
        },
        "user_config": {
            "demo": {
                "type": "boolean",
                "title": "Try the demo shop",
                "description": "Try pgmcp before giving it a database: Claude queries a small sample shop (customers, products, orders) that comes with pgmcp, read-only. Leave the connection string and the file empty while this is on.",
                "required": false,
                "default": false
            },
            "connection_string": {
                "type": "string",
                "title": "PostgreSQL connection string",
                "description": "postgresql://user@host:5432/database (or host=... user=... dbname=...). Put the password in the field below, not here. Leave empty to use a database file instead.",
                "required": false,
                "sensitive": true
            },
            "password": {
                "type": "string",
                "title": "PostgreSQL password",
                "description": "Kept in your system's keychain. Leave empty when the server needs none, or when ~/.pgpass holds it.",
                "required": false,
                "sensitive": true
            },
            "database_file": {
                "type": "file",
                "title": "Or: an SQLite or DuckDB file",
                "description": "A database file to query instead of PostgreSQL (pgmcp tells SQLite and DuckDB apart by the file's contents).",
                "required": false
            },
            "read_only": {
                "type": "boolean",
                "title": "Read-only",
                "description": "Run every statement in a read-only transaction and refuse anything that writes. Turn off only for a database you can afford to lose.",
                "required": false,
                "default": true
            },
            "max_rows": {
                "type": "number",
                "title": "Row cap",
                "description": "The most rows one query returns to Claude. Leave empty for pgmcp's default.",
                "required": false,
                "min": 1,
                "max": 100000
            }
        }
    })
}
