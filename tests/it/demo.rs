//! The embedded demo database, the README's quick start that uses it, and
//! `PGMCP_DEMO`, which serves it.

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use rusqlite::Connection;
use serde_json::{Value, json};

use crate::support::stdio::{McpProcess, tool_text};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every object's SQL and every row of every table, as SQLite quotes them.
fn dump(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    let objects: Vec<(String, String, String)> = conn
        .prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (kind, name, sql) in objects {
        out.push(format!("{kind} {name}: {sql}"));
        if kind != "table" {
            continue;
        }
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{name}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let quoted = columns
            .iter()
            .map(|c| format!("quote(\"{c}\")"))
            .collect::<Vec<_>>()
            .join(" || ',' || ");
        let rows: Vec<String> = conn
            .prepare(&format!("SELECT {quoted} FROM \"{name}\" ORDER BY rowid"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        out.extend(rows.into_iter().map(|r| format!("{name}: {r}")));
    }
    out
}

#[test]
fn demo_db_is_built_from_demo_sql() {
    let script = std::fs::read_to_string(root().join("fixtures/demo.sql")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fresh = Connection::open(dir.path().join("demo.db")).unwrap();
    fresh.execute_batch(&script).unwrap();
    let committed = Connection::open_with_flags(
        root().join("fixtures/demo.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let (want, got) = (dump(&fresh), dump(&committed));
    assert!(
        want.len() > 400,
        "the demo should hold a few hundred rows, has {}",
        want.len()
    );
    assert_eq!(
        got, want,
        "fixtures/demo.db differs from fixtures/demo.sql: rebuild it (see the script's header)"
    );
}

/// Split a README command line into arguments: words, and "double-quoted"
/// strings (the README's commands use no escapes).
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.trim().chars().peekable();
    while chars.peek().is_some() {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut word = String::new();
        if chars.next_if_eq(&'"').is_some() {
            word.extend(chars.by_ref().take_while(|c| *c != '"'));
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                word.push(c);
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

#[test]
fn the_readme_quick_start_runs_on_the_demo_database() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- query"))
        .expect("README has a `cargo run --release -- query ...` quick start line");
    let words = shell_words(line);
    let args = &words[words.iter().position(|w| w == "--").unwrap() + 1..];
    assert!(args.iter().any(|a| a.contains("sqlite:fixtures/demo.db")), "{line}");
    let dir = tempfile::tempdir().unwrap();
    let output = Command::cargo_bin("pgmcp")
        .unwrap()
        .current_dir(root())
        .args(args)
        // A fresh machine: no config file, logs somewhere harmless.
        .env_remove("PGMCP_CONFIG_PATH")
        .env_remove("PGMCP_DATABASE")
        .env_remove("PGMCP_PG_CONNSTRING")
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = result["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{result}");
    assert_eq!(result["truncated"], false);
}

/// `pgmcp demo` as a person with only the binary runs it, in a directory
/// whose name needs quoting: the file is the demo database, the printed
/// query runs as printed (through a shell) and answers, the printed install
/// line writes an entry, and a second `demo` leaves the file alone.
#[test]
fn pgmcp_demo_writes_the_shop_and_its_next_steps_work_as_printed() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("my work");
    std::fs::create_dir(&work).unwrap();
    let run = |args: &[&str]| {
        crate::support::pgmcp(home.path())
            .current_dir(&work)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["demo"]);
    let stdout = crate::support::stdout_of(&out, 0);
    let file = work.join("pgmcp-demo.db");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(root().join("fixtures/demo.db")).unwrap()
    );
    assert!(stdout.contains(&file.display().to_string()), "{stdout}");

    // Every command it prints, run by a shell with this pgmcp on PATH.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_pgmcp")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let shell = |line: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(line)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .current_dir(home.path())
            .output()
            .unwrap()
    };
    let commands: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pgmcp "))
        .collect();
    assert_eq!(commands.len(), 2, "{stdout}");
    let answer = shell(commands[0]);
    let result: Value = serde_json::from_slice(&answer.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&answer.stderr)));
    assert_eq!(result["rows"].as_array().map(Vec::len), Some(5), "{result}");
    let client = home.path().join("claude_desktop_config.json");
    let installed = shell(&format!("{} --client-config '{}'", commands[1], client.display()));
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let entry: Value = serde_json::from_str(&std::fs::read_to_string(&client).unwrap()).unwrap();
    assert_eq!(
        entry["mcpServers"]["pgmcp-demo"]["env"]["PGMCP_DATABASE"],
        format!("sqlite:{}", file.display())
    );

    // Never over an existing file, whatever it holds.
    std::fs::write(&file, b"mine").unwrap();
    let again = run(&["demo"]);
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("already exists") && stderr.contains("pgmcp demo FILE"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    // Elsewhere, by name.
    let other = run(&["demo", "shop.db"]);
    crate::support::stdout_of(&other, 0);
    assert!(work.join("shop.db").exists());
}

/// `PGMCP_DEMO=true pgmcp serve`: the demo shop, read-only whatever
/// PGMCP_READ_ONLY says, kept in pgmcp's cache directory and nowhere else.
#[test]
fn the_demo_setting_serves_the_shop_read_only() {
    let cache = tempfile::tempdir().unwrap();
    let cwd_files = |mcp: &McpProcess| std::fs::read_dir(format!("/proc/{}/cwd", mcp.pid())).unwrap().count();
    let mut mcp = McpProcess::spawn(
        &["serve"],
        &[
            ("PGMCP_DEMO", "true"),
            ("PGMCP_READ_ONLY", "false"),
            ("XDG_CACHE_HOME", cache.path().to_str().unwrap()),
        ],
    );
    let before = cwd_files(&mcp);
    let init = mcp.initialize();
    assert_eq!(init["serverInfo"]["title"], "SQLite (pgmcp)", "{init}");
    let answer = mcp.call_tool(
        "query",
        json!({"sql": "SELECT count(*) AS n FROM orders JOIN customers ON customers.id = orders.customer_id"}),
    );
    assert_eq!(answer["isError"], false, "{answer}");
    assert!(
        answer["structuredContent"]["rows"][0]["n"].as_i64().unwrap() > 0,
        "{answer}"
    );
    let write = mcp.call_tool("query", json!({"sql": "DELETE FROM orders WHERE id = 1"}));
    assert_eq!(write["isError"], true, "{write}");
    assert!(tool_text(&write).contains("read-only"), "{write}");
    let kept = cache.path().join("pgmcp/demo.db");
    let shop = std::fs::read(root().join("fixtures/demo.db")).unwrap();
    assert_eq!(std::fs::read(&kept).unwrap(), shop);
    assert_eq!(std::fs::read_dir(cache.path().join("pgmcp")).unwrap().count(), 1);
    assert_eq!(cwd_files(&mcp), before, "nothing written where pgmcp was started");
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(10)).success());

    // A copy someone changed is the shop again at the next start.
    std::fs::write(&kept, b"not the shop").unwrap();
    let mut mcp = McpProcess::spawn(
        &["serve"],
        &[
            ("PGMCP_DEMO", "true"),
            ("XDG_CACHE_HOME", cache.path().to_str().unwrap()),
        ],
    );
    mcp.initialize();
    let answer = mcp.call_tool("list_tables", json!({}));
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(std::fs::read(&kept).unwrap(), shop);
}
