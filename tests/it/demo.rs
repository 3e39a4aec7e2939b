//! The embedded demo database and the README's quick start that uses it.

use std::path::Path;

use assert_cmd::Command;
use rusqlite::Connection;
use serde_json::Value;

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
