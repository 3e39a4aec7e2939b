//! The output fence end to end, through the real binary over stdio: every
//! text that reaches the model (rows, JSON keys, column names, errors) is
//! sanitized and capped, on PostgreSQL and on SQLite.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::stdio::{McpProcess, tool_json, tool_text};

/// The cap these tests configure, in bytes.
const CAP: usize = 20_000;

/// A config with an e-mail sanitization rule and a `CAP`-byte result cap.
fn write_config(dir: &Path) -> String {
    let path = dir.join("config.json");
    let log = dir.join("pgmcp.log");
    let text = json!({
        "server": {"read_only": true},
        "logging": {"level": "debug", "output": log},
        "query": {
            "max_result_length": CAP,
            "default_timeout_seconds": 30,
            "list_tables_timeout_seconds": 10,
            "describe_table_timeout_seconds": 10,
        },
        "sanitization": [{"pattern": r"[\w.+-]+@[\w-]+\.[\w.]+", "replacement": "[email]"}],
    });
    std::fs::write(&path, text.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Call `query` with `sql`; the whole `tools/call` result.
fn query(mcp: &mut McpProcess, sql: &str) -> Value {
    mcp.call_tool("query", json!({ "sql": sql }))
}

/// The error text of a failed call, checked to be within the cap and to show
/// no address.
fn error_text(result: &Value, sql: &str) -> String {
    assert_eq!(result["isError"], true, "{sql}: {result:#}");
    let text = tool_text(result).to_owned();
    assert!(text.len() <= CAP, "{sql}: a {}-byte error", text.len());
    assert!(!text.contains("example.com"), "{sql}: {text}");
    text
}

/// A successful result, checked to be within the cap (as the model reads it:
/// the text copy) and to show no address anywhere, keys and names included.
fn ok_json(result: &Value, sql: &str) -> Value {
    assert_ne!(result["isError"], true, "{sql}: {result:#}");
    let text = tool_text(result);
    assert!(text.len() <= CAP, "{sql}: a {}-byte result", text.len());
    assert!(!text.contains("example.com"), "{sql}: {text}");
    assert!(
        !result["structuredContent"].to_string().contains("example.com"),
        "{sql}"
    );
    tool_json(result)
}

#[test]
fn postgres_errors_keys_and_names_are_fenced() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE people (id int, email text);
         INSERT INTO people VALUES (1, 'alice@example.com'), (2, 'bob@example.com')",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    mcp.initialize();

    // A 30 MB error message that echoes its input.
    let sql = "SELECT repeat('x', 30000000)::int";
    let text = error_text(&query(&mut mcp, sql), sql);
    assert!(
        text.starts_with("invalid input syntax for type integer: \"xxx"),
        "{}",
        &text[..80]
    );
    assert!(
        text.ends_with("bytes shown]"),
        "the model is told the text was cut: {}",
        &text[text.len() - 80..]
    );

    // Error texts are sanitized: message, detail and hint.
    for sql in [
        "SELECT email::int FROM people ORDER BY id",
        "SELECT 1 FROM people WHERE id = email::int",
        "SELECT make_date(1, 1, 1) + email::interval FROM people",
        "SELECT * FROM \"alice@example.com\"",
    ] {
        let text = error_text(&query(&mut mcp, sql), sql);
        assert!(text.contains("[email]"), "{sql}: {text}");
    }

    // JSON object keys, at any depth, and column names.
    let sql = "SELECT json_object_agg(email, 1) AS j, jsonb_build_object('k', jsonb_object_agg(email, id)) AS n, \
               1 AS \"erin@example.com\" FROM people";
    let out = ok_json(&query(&mut mcp, sql), sql);
    assert_eq!(
        out["rows"],
        json!([{"j": {"[email]": 1, "[email]_2": 1}, "n": {"k": {"[email]": 2, "[email]_2": 1}}, "[email]": 1}])
    );
    // (jsonb orders keys by length: bob's first.)
    assert_eq!(out["columns"][2]["name"], "[email]");

    // Rows that do not fit are cut at whole rows, the whole answer within the cap.
    let sql = "SELECT g, repeat('y', 1000) AS s FROM generate_series(1, 100) g";
    let out = ok_json(&query(&mut mcp, sql), sql);
    assert_eq!(out["truncated"], true);
    assert!(out["returned_rows"].as_u64().unwrap() > 5, "{}", out["returned_rows"]);

    // Catalog answers too: comments, view definitions, defaults.
    db.psql(
        "COMMENT ON TABLE people IS 'ask frank@example.com';
         CREATE VIEW vip AS SELECT * FROM people WHERE email <> 'grace@example.com';
         ALTER TABLE people ALTER COLUMN email SET DEFAULT 'heidi@example.com'",
    );
    let list = mcp.call_tool("list_tables", json!({}));
    let text = ok_json(&list, "list_tables").to_string();
    assert!(text.contains("ask [email]"), "{text}");
    for table in ["vip", "people"] {
        let described = mcp.call_tool("describe_table", json!({ "table": table }));
        let text = ok_json(&described, table).to_string();
        assert!(text.contains("[email]"), "{text}");
    }

    // The session goes on.
    let out = ok_json(&query(&mut mcp, "SELECT 1 AS one"), "SELECT 1");
    assert_eq!(out["rows"], json!([{"one": 1}]));
}

#[test]
fn sqlite_errors_keys_and_names_are_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.db");
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(
        "CREATE TABLE people (id INTEGER, email TEXT);
         INSERT INTO people VALUES (1, 'alice@example.com'), (2, 'bob@example.com');",
    )
    .unwrap();
    drop(conn);
    let config = write_config(dir.path());
    let url = format!("sqlite://{}", file.display());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    mcp.initialize();

    // An error that echoes a generated 10 MB value (SQLite's length limit
    // stops anything past 16 MiB before it is built).
    let sql = "SELECT json_extract('{}', '$' || printf('%.*c', 10000000, 'x'))";
    let text = error_text(&query(&mut mcp, sql), sql);
    assert!(
        text.ends_with("bytes shown]"),
        "{}",
        &text[text.len().saturating_sub(80)..]
    );

    // Error texts are sanitized.
    for sql in [
        "SELECT json_extract('{}', '$' || email) FROM people",
        "SELECT * FROM \"alice@example.com\"",
        "SELECT \"carol@example.com\".x FROM people",
    ] {
        let text = error_text(&query(&mut mcp, sql), sql);
        assert!(text.contains("[email]"), "{sql}: {text}");
    }

    // JSON keys (SQLite's JSON is text: masked as a string or as keys) and
    // column names.
    let sql = "SELECT json_object(email, 1) AS j, json_group_object(email, id) AS g, 1 AS \"erin@example.com\" \
               FROM people";
    let out = ok_json(&query(&mut mcp, sql), sql);
    assert_eq!(out["columns"][2]["name"], "[email]");
    assert!(out["rows"].to_string().contains("[email]"), "{}", out["rows"]);

    // Column aliases twice as long as the cap (SQLite has no length limit).
    let alias = "a".repeat(2 * CAP);
    let sql = format!("SELECT 1 AS \"{alias}\", 2 AS \"{alias}b\"");
    let out = ok_json(&query(&mut mcp, &sql), "a 40 kB alias");
    let names: Vec<&str> = out["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| n.contains("[name cut:")),
        "{:?}",
        names.iter().map(|n| n.len()).collect::<Vec<_>>()
    );
    assert_ne!(names[0], names[1]);
    assert_eq!(out["rows"][0][names[1]], 2, "row keys follow the shortened names");
}

/// SQLite shows the open file's absolute path through ordinary queries;
/// answers show the name the file was given instead, for the server's own file
/// and for files inside `sqlite.root`.
#[test]
fn sqlite_answers_never_show_the_files_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sales")).unwrap();
    for file in ["data.db", "sales/2024.db"] {
        let conn = rusqlite::Connection::open(dir.path().join(file)).unwrap();
        conn.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
    }
    let config = dir.path().join("config.json");
    let log = dir.path().join("pgmcp.log");
    let text = json!({
        "logging": {"level": "debug", "output": log},
        "query": {
            "default_timeout_seconds": 30,
            "list_tables_timeout_seconds": 10,
            "describe_table_timeout_seconds": 10,
        },
        "sqlite": {"root": dir.path()},
    });
    std::fs::write(&config, text.to_string()).unwrap();
    let url = format!("sqlite://{}", dir.path().join("data.db").display());
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", config.to_str().unwrap(), "--database", &url],
        &[],
    );
    mcp.initialize();
    let hidden: Vec<String> = [dir.path().to_path_buf(), dir.path().canonicalize().unwrap()]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let sqls = [
        "SELECT * FROM pragma_database_list",
        "PRAGMA database_list",
        "SELECT file || '/x', upper(file), json_object(file, 1) FROM pragma_database_list",
        "SELECT name, file AS \"f\" FROM pragma_database_list WHERE file LIKE '/%'",
        "SELECT substr(file, 2) FROM pragma_database_list",
    ];
    let mut shown = Vec::new();
    for database in [None, Some("sales/2024.db")] {
        for sql in sqls {
            let mut args = json!({ "sql": sql });
            if let Some(database) = database {
                args["database"] = json!(database);
            }
            let result = mcp.call_tool("query", args);
            let answer = result.to_string();
            for path in &hidden {
                assert!(!answer.contains(path.as_str()), "{database:?} {sql}: {answer}");
                // Also without its leading slash (substr(file, 2)).
                assert!(!answer.contains(&path[1..]), "{database:?} {sql}: {answer}");
            }
            shown.push(answer);
        }
    }
    // pragma_database_list's file column reads as NULL; PRAGMA database_list
    // names the files as they were given.
    assert!(shown[0].contains(r#""file":null"#), "{}", shown[0]);
    assert!(shown[1].contains(r#""data.db""#), "{}", shown[1]);
    assert!(
        shown[sqls.len() + 1].contains(r#""sales/2024.db""#),
        "{}",
        shown[sqls.len() + 1]
    );
}
