//! `pgmcp serve` that cannot start, started by a client: the handshake
//! completes, the same tools are listed, and every tool call answers
//! `isError` with the reason and where to fix it, in the words of a client's
//! config entry (the bundle's words are tested in `release::`). At a
//! terminal and over HTTP it still stops at once, saying the same on
//! stderr. The real binary over stdio, and once through the MCP Python SDK.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::stdio::{McpProcess, tool_text};

/// The tools a session that started lists (PostgreSQL, read-only: startup
/// never connects, so no server is needed), less the grid's `_meta` on
/// `query`: a server that could not start offers no grid, every answer
/// being why.
fn started_tools() -> Value {
    let mut mcp = McpProcess::spawn(&["serve"], &[("PGMCP_PG_CONNSTRING", "postgres://u@127.0.0.1:1/x")]);
    mcp.initialize();
    let mut tools = mcp.request("tools/list", json!({}))["result"]["tools"].clone();
    assert_eq!(tools.as_array().map(Vec::len), Some(5), "{tools}");
    for tool in tools.as_array_mut().unwrap() {
        if tool["name"] == "query" {
            let meta = tool.as_object_mut().unwrap().remove("_meta");
            assert_eq!(meta.unwrap()["ui"]["resourceUri"], "ui://pgmcp/grid");
        }
    }
    tools
}

/// Start `pgmcp serve args` with `envs`, complete the handshake, check it
/// says it could not start with `expected` (in the instructions, every
/// tool's answer and stderr), lists the tools a started session lists, and
/// ends with exit code 2 when the client closes stdin. Returns all it said
/// (the instructions, every answer, stderr), for what must not be in it.
fn explains(args: &[&str], envs: &[(&str, &str)], expected: &[&str]) -> String {
    let mut mcp = McpProcess::spawn(args, envs);
    let init = mcp.initialize_unstarted();
    assert_eq!(init["serverInfo"]["name"], "pgmcp", "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let instructions = init["instructions"].as_str().unwrap();
    let mut said = format!("{init}\n");
    let tools = mcp.request("tools/list", json!({}));
    assert_eq!(tools["result"]["tools"], started_tools(), "the same tools as ever");
    for (tool, arguments) in [
        ("query", json!({"sql": "SELECT 1"})),
        ("list_tables", json!({})),
        ("describe_table", json!({"table": "t"})),
        // Arguments it could not read are no reason to hide the reason.
        ("query", json!({"sql": 5})),
    ] {
        let answer = mcp.call_tool(tool, arguments);
        said.push_str(&format!("{answer}\n"));
        assert_eq!(answer["isError"], true, "{answer}");
        let text = tool_text(&answer);
        assert!(text.starts_with("pgmcp could not start: "), "{text}");
        assert!(instructions.starts_with(text), "{instructions}\n{text}");
        for words in expected {
            assert!(text.contains(words), "no {words:?} in: {text}");
        }
    }
    // An unknown tool is a malformed call, as in a session that started.
    let unknown = mcp.request("tools/call", json!({"name": "drop_everything", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // Resources and prompts are not declared: nothing to show.
    let resources = mcp.request("resources/read", json!({"uri": "pgmcp://table/public/t"}));
    assert!(resources["error"].is_object(), "{resources}");
    let stderr = mcp.stderr();
    assert!(
        stderr.contains("every tool call answers: pgmcp could not start: "),
        "{stderr}"
    );
    mcp.close_stdin();
    assert_eq!(mcp.wait_exit(Duration::from_secs(10)).code(), Some(2));
    said + &mcp.stderr()
}

#[test]
fn two_database_settings_are_explained_naming_both() {
    explains(
        &["serve"],
        &[
            ("PGMCP_PG_CONNSTRING", "postgres://me@db.example/shop"),
            ("PGMCP_DATABASE_FILE", "/srv/shop.db"),
        ],
        &[
            "both PGMCP_DATABASE_FILE and PGMCP_PG_CONNSTRING are set, and each names a database",
            "Remove one of them from pgmcp's entry in your MCP client's config file",
            "then restart pgmcp.",
        ],
    );
}

#[test]
fn an_invalid_config_file_is_explained_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"query": {"max_rows": 0}}"#).unwrap();
    let said = format!("the config file {}: query.max_rows: ", config.display());
    explains(
        &["serve", "--config", config.to_str().unwrap()],
        &[],
        &[
            &said,
            "Correct it in that file (`pgmcp check` says what is wrong), then restart pgmcp.",
        ],
    );
}

#[test]
fn a_setting_that_is_no_value_is_explained_naming_the_variable() {
    explains(
        &["serve"],
        &[("PGMCP_MAX_ROWS", "abc"), ("PGMCP_DATABASE_FILE", "/srv/shop.db")],
        &[
            "PGMCP_MAX_ROWS: \"abc\" is not a whole number greater than 0",
            "Correct PGMCP_MAX_ROWS in the \"env\" of pgmcp's entry in your MCP client's config file",
        ],
    );
}

#[test]
fn a_missing_database_file_is_explained() {
    explains(
        &["serve"],
        &[("PGMCP_DATABASE_FILE", "/nowhere/shop.db")],
        &[
            "PGMCP_DATABASE_FILE: no file at /nowhere/shop.db",
            "Correct PGMCP_DATABASE_FILE in the \"env\"",
        ],
    );
}

/// A password pasted into the wrong setting is not said back: not in the
/// instructions, the tool answers (the model reads both) or stderr. What
/// is wrong still is, with the value redacted.
#[test]
fn a_password_in_a_setting_is_not_said_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        r#"{"server": {"read_only": "postgresql://u:CfgSecretAA@h/db"}}"#,
    )
    .unwrap();
    let said = explains(
        &["serve", "--config", config.to_str().unwrap()],
        &[],
        &["server.read_only: expected true or false, found the text \"postgresql://***@h/db\""],
    );
    assert!(!said.contains("CfgSecretAA"), "{said}");
    // The same for a switch given in the environment, and for a database
    // file whose path is a connection string.
    let said = explains(
        &["serve"],
        &[
            ("PGMCP_READ_ONLY", "host=h password=EnvSecretBB"),
            ("PGMCP_DATABASE_FILE", "/srv/shop.db"),
        ],
        &["PGMCP_READ_ONLY: <not shown: it may hold a password> is not true or false"],
    );
    assert!(!said.contains("EnvSecretBB"), "{said}");
    let said = explains(
        &["serve"],
        &[("PGMCP_DATABASE_FILE", "/nowhere/u:FileSecretCC@h/shop.db")],
        &["PGMCP_DATABASE_FILE: no file at /***@h/shop.db"],
    );
    assert!(!said.contains("FileSecretCC"), "{said}");
}

/// A log file that cannot be used: said over the protocol, and logged to
/// stderr instead, never to the file refused.
#[test]
fn a_log_file_that_cannot_be_used_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    let log = dir.path().join("a-directory.log");
    std::fs::create_dir(&log).unwrap();
    std::fs::write(&config, json!({"logging": {"output": log}}).to_string()).unwrap();
    explains(
        &[
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--database",
            "sqlite::memory:",
        ],
        &[],
        &["logging.output: ", "is a directory: the log must be a regular file"],
    );
    assert!(log.is_dir());
}

/// The demo with a file: the conflict named, and the demo's file never
/// written.
#[test]
fn the_demo_with_a_database_is_explained() {
    let cache = tempfile::tempdir().unwrap();
    explains(
        &["serve"],
        &[
            ("PGMCP_DEMO", "true"),
            ("PGMCP_DATABASE_FILE", "/srv/shop.db"),
            ("XDG_CACHE_HOME", cache.path().to_str().unwrap()),
        ],
        &["both PGMCP_DEMO and PGMCP_DATABASE_FILE are set"],
    );
    assert!(!cache.path().join("pgmcp").exists());
}

/// The official MCP Python SDK, as a desktop client uses it: the session
/// opens, the tools are listed, and a call's result is an error whose text
/// says why.
#[test]
fn the_python_sdk_reads_the_reason_as_a_tool_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"query": {"max_rows": "many"}}"#).unwrap();
    let plan = json!([
        {"op": "tools"},
        {"op": "tool", "name": "query", "arguments": {"sql": "SELECT 1"}},
    ]);
    let seen = crate::support::python_sdk::session_seen(plan, config.to_str().unwrap(), None, &[]);
    assert_eq!(seen["capabilities"], json!({"tools": {}}), "{seen}");
    let instructions = seen["instructions"].as_str().unwrap();
    assert!(instructions.starts_with("pgmcp could not start: "), "{instructions}");
    let steps = seen["steps"].as_array().unwrap();
    assert_eq!(
        steps[0],
        json!(["describe_table", "diagnose", "explain", "list_tables", "query"])
    );
    assert_eq!(steps[1]["isError"], true, "{}", steps[1]);
    let text = steps[1]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "the config file {}: query.max_rows: expected a whole number, found the text \"many\"",
            config.display()
        )),
        "{text}"
    );
}

/// `serve --http` is started by a person or a service manager: it stops at
/// once, saying what is wrong and what to do on stderr.
#[test]
fn over_http_it_stops_saying_what_to_do() {
    let cases: [(&[(&str, &str)], &str); 2] = [
        (
            &[("PGMCP_MAX_ROWS", "abc")],
            "pgmcp: could not start: PGMCP_MAX_ROWS: \"abc\" is not a whole number greater than 0. Correct or \
             unset PGMCP_MAX_ROWS in the environment pgmcp starts with, then start pgmcp again.\n",
        ),
        (
            &[
                ("PGMCP_DATABASE_FILE", "/srv/shop.db"),
                ("PGMCP_PG_CONNSTRING", "host=db"),
            ],
            "pgmcp: could not start: both PGMCP_DATABASE_FILE and PGMCP_PG_CONNSTRING are set, and each names a \
             database. Leave one of them out, then start pgmcp again.\n",
        ),
    ];
    for (envs, said) in cases {
        let mut mcp = McpProcess::spawn(&["serve", "--http", "127.0.0.1:0"], envs);
        assert_eq!(mcp.wait_exit(Duration::from_secs(10)).code(), Some(2), "{envs:?}");
        assert_eq!(mcp.stderr(), said);
    }
}

/// Run by hand at a terminal (a pty from util-linux's `script`), `serve`
/// with a setting it cannot use says why at once and ends, rather than
/// wait for a client that is not there.
#[test]
fn at_a_terminal_it_stops_saying_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let err = home.path().join("stderr.txt");
    let bin = env!("CARGO_BIN_EXE_pgmcp");
    let line = format!("'{bin}' serve 2>'{}'", err.display());
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("PGMCP_MAX_ROWS", "lots")
        .current_dir(home.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux's `script` (for a pty) is not installed");
    assert_eq!(out.status.code(), Some(2));
    let said = std::fs::read_to_string(&err).unwrap();
    assert!(
        said.ends_with(
            "pgmcp: could not start: PGMCP_MAX_ROWS: \"lots\" is not a whole number greater than 0. Correct or \
             unset PGMCP_MAX_ROWS in the environment pgmcp starts with, then start pgmcp again.\n"
        ),
        "{said}"
    );
}

/// `query` and `check` are not servers: they still exit with the error.
#[test]
fn query_and_check_still_exit_with_the_error() {
    let home = tempfile::tempdir().unwrap();
    for args in [&["query", "SELECT 1"][..], &["check"]] {
        let out = crate::support::pgmcp(home.path())
            .args(args)
            .env("PGMCP_DEMO", "true")
            .env("PGMCP_PG_CONNSTRING", "host=db")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "pgmcp: PGMCP_DEMO and PGMCP_PG_CONNSTRING: both are set, and each names a database: keep one and \
             leave the other empty\n"
        );
        assert!(out.stdout.is_empty());
    }
}
