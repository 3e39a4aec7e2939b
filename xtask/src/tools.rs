//! The tools a bundle declares, asked of the binary being packaged: its
//! `tools/list` answer is the only source, so the manifest cannot drift from
//! what the server offers.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// How long the binary may take to answer; it starts in milliseconds.
const PATIENCE: Duration = Duration::from_secs(30);

/// `[{"name", "description"}]` from an MCP session with `binary serve`.
pub fn list(binary: &Path) -> Result<Vec<Value>> {
    // A scratch home: no config or log of the person running the task is read
    // or written. A PostgreSQL URL nothing answers stands in for a database:
    // listing tools connects to none, and PostgreSQL's are every tool (an
    // SQLite or DuckDB file has no `explain`).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let scratch = std::env::temp_dir().join(format!("pgmcp-xtask-tools-{}-{nanos}", std::process::id()));
    // create_dir, not create_dir_all: a directory someone else made at this
    // name in a shared temp directory is refused, never used.
    std::fs::create_dir(&scratch).with_context(|| format!("cannot create {}", scratch.display()))?;
    let result = session(binary, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn session(binary: &Path, scratch: &Path) -> Result<Vec<Value>> {
    let mut command = Command::new(binary);
    command
        .arg("serve")
        .arg("--database")
        .arg("postgres://pgmcp@127.0.0.1:1/none")
        .env("HOME", scratch)
        .env("XDG_CONFIG_HOME", scratch)
        .env("XDG_STATE_HOME", scratch)
        .env("APPDATA", scratch)
        .env("LOCALAPPDATA", scratch)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("PGMCP_")) {
            command.env_remove(name);
        }
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let (lines, answers) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pgmcp-xtask", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let mut tools = None;
    for request in requests {
        writeln!(stdin, "{request}").context("the binary closed its stdin")?;
        stdin.flush()?;
        let Some(id) = request.get("id") else { continue };
        loop {
            let Ok(line) = answers.recv_timeout(PATIENCE) else {
                let _ = child.kill();
                let output = child.wait_with_output()?;
                bail!(
                    "{} serve gave no answer to request {id}; it said: {}",
                    binary.display(),
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            };
            let answer: Value = serde_json::from_str(&line).with_context(|| format!("not JSON-RPC: {line}"))?;
            if answer.get("id") != Some(id) {
                continue;
            }
            if let Some(error) = answer.get("error") {
                bail!("request {id} failed: {error}");
            }
            // A pgmcp that could not start still lists its tools, to say
            // why in the client: a bundle must not be built from one.
            if id == 1
                && let Some(said) = answer["result"]["instructions"].as_str()
                && said.starts_with("pgmcp could not start")
            {
                let _ = child.kill();
                bail!("{} serve could not start: {said}", binary.display());
            }
            if id == 2 {
                tools = answer["result"]["tools"].as_array().cloned();
            }
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    let tools = tools.context("tools/list returned no tools array")?;
    tools
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().context("a tool without a name")?;
            let description = tool["description"].as_str().unwrap_or_default();
            Ok(json!({"name": name, "description": description}))
        })
        .collect()
}
