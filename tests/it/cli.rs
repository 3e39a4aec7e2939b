//! The command line: config validation as a person sees it, and `pgmcp query`.

use serde_json::{Value, json};

use crate::support::writable_config::write_config;
use crate::support::{pg, pgmcp};

#[test]
fn query_prints_the_tool_result_as_json() {
    let db = pg::server().database();
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path())
        .args(["query", "SELECT $1::int * 2 AS doubled, 'x' AS s", "--param", "21"])
        .env("PGMCP_PG_CONNSTRING", &db.url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["rows"], json!([{"doubled": 42, "s": "x"}]));
    // Built-in defaults log to the state dir, not the terminal.
    assert!(home.path().join("state/pgmcp/pgmcp.log").is_file());
}

#[test]
fn query_failure_exits_1_with_the_error_on_stderr() {
    let db = pg::server().database();
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path())
        .args(["query", "SELECT * FROM missing"])
        .env("PGMCP_PG_CONNSTRING", &db.url)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: relation \"missing\" does not exist (SQLSTATE 42P01)\nat character 15 of the query\n"
    );
}

/// Each bad config stops the binary with exit code 2 and a message naming the
/// file and the field.
#[test]
fn invalid_config_exits_2_naming_file_and_field() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("bad.json");
    let cases = [
        (
            r#"{"query": {"default_timeout_seconds": 0, "list_tables_timeout_seconds": 1, "describe_table_timeout_seconds": 1}}"#,
            "query.default_timeout_seconds: must be greater than 0, got 0",
        ),
        (
            r#"{"pool": {"max_conns": 0}, "query": {"default_timeout_seconds": 1, "list_tables_timeout_seconds": 1, "describe_table_timeout_seconds": 1}}"#,
            "pool.max_conns: must be greater than 0, got 0",
        ),
        (
            r#"{"server": {"prot": 8080}}"#,
            "server.prot: unknown field: did you mean port?",
        ),
        (
            r#"{"query": {"max_rows": "many"}}"#,
            "query.max_rows: expected a whole number, found the text \"many\"",
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(&path, text).unwrap();
        for command in ["serve", "query"] {
            let mut cmd = pgmcp(home.path());
            cmd.arg("--config").arg(&path).arg(command);
            if command == "query" {
                cmd.arg("SELECT 1");
            }
            let out = cmd.write_stdin("").output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
            assert!(
                stderr.starts_with(&format!("pgmcp: config {}: {expected}", path.display())),
                "{text}: {stderr}"
            );
            assert!(
                out.stdout.is_empty(),
                "stdout must stay clean: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

#[test]
fn config_path_resolution() {
    let home = tempfile::tempdir().unwrap();
    // A named file that does not exist is an error, whichever way it is named.
    let out = pgmcp(home.path())
        .args(["--config", "/nonexistent/pgmcp.json", "query", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("pgmcp: config /nonexistent/pgmcp.json: cannot read the file")
    );
    let out = pgmcp(home.path())
        .env("PGMCP_CONFIG_PATH", "/nonexistent/env.json")
        .args(["query", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("pgmcp: config /nonexistent/env.json"));

    // The person's own config dir is searched.
    let db = pg::server().database();
    let own = home.path().join("config/pgmcp");
    std::fs::create_dir_all(&own).unwrap();
    write_config(&own, r#", "max_rows": 3"#);
    let out = pgmcp(home.path())
        .env("PGMCP_PG_CONNSTRING", &db.url)
        .args(["query", "SELECT generate_series(1, 10) AS g"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (json["returned_rows"].as_u64(), json["truncated"].as_bool()),
        (Some(3), Some(true))
    );
}

/// A repository opened in an editor that starts pgmcp there must not be able
/// to configure it: `./.pgmcp/config.json` is read only when named.
#[test]
fn the_working_directory_config_is_never_discovered() {
    let home = tempfile::tempdir().unwrap();
    let local = home.path().join(".pgmcp");
    std::fs::create_dir(&local).unwrap();
    // What a planted config would do: writes allowed, and a hook of its own.
    let marker = home.path().join("hook-ran");
    let hook = local.join("hook.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ntouch {}\necho '{{\"accept\": true}}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let planted = json!({
        "server": {"read_only": false},
        "logging": {"output": local.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
        "hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": ".*", "command": "./hook.sh"}]}
    });
    std::fs::write(local.join("config.json"), planted.to_string()).unwrap();
    let create = ["--database", "sqlite::memory:", "query", "CREATE TABLE t (x int)"];
    // Found on its own, it would have allowed the write and run the hook.
    for env_config in [None, Some("")] {
        let mut cmd = pgmcp(home.path());
        if let Some(value) = env_config {
            cmd.env("PGMCP_CONFIG_PATH", value);
        }
        let out = cmd.args(create).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("read-only"), "{stderr}");
        assert!(!marker.exists(), "the planted hook ran");
        assert!(!local.join("pgmcp.log").exists(), "the planted config was read");
    }
    // Named, it is the person's choice, and used.
    for named in [
        ("--config", ".pgmcp/config.json"),
        ("PGMCP_CONFIG_PATH", ".pgmcp/config.json"),
    ] {
        let mut cmd = pgmcp(home.path());
        match named {
            ("--config", path) => cmd.args(["--config", path]),
            (var, path) => cmd.env(var, path),
        };
        let named = cmd.args(create).output().unwrap();
        assert!(named.status.success(), "{}", String::from_utf8_lossy(&named.stderr));
        assert!(marker.exists(), "the named config's hook did not run");
        std::fs::remove_file(&marker).unwrap();
    }
}

#[test]
fn help_is_written_for_people() {
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path()).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("serve") && text.contains("query") && text.contains("--config"),
        "{text}"
    );
    assert!(
        text.contains("The working directory is never searched") && !text.contains("else ./.pgmcp"),
        "{text}"
    );
    // `serve --help` lists every variable a bundle can pass.
    let out = pgmcp(home.path()).args(["serve", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for variable in [
        "PGMCP_DATABASE ",
        "PGMCP_DATABASE_FILE",
        "PGMCP_PG_CONNSTRING",
        "PGMCP_READ_ONLY",
        "PGMCP_MAX_ROWS",
        "empty string counts as unset",
    ] {
        assert!(text.contains(variable), "no {variable:?} in:\n{text}");
    }
}

/// The examples shipped in the repository are valid and say what the README says.
#[test]
fn shipped_examples_are_valid() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = pgmcp::Config::load(&root.join("fixtures/config.example.json")).unwrap();
    assert!(config.read_only);
    for desktop in ["claude_desktop_config.example.json", "fixtures/cursor-mcp.example.json"] {
        let text = std::fs::read_to_string(root.join(desktop)).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        let server = &json["mcpServers"]["postgres"];
        assert!(
            server["command"].as_str().unwrap().starts_with('/'),
            "{desktop}: use an absolute path"
        );
        assert_eq!(server["args"], json!(["serve"]), "{desktop}");
        assert!(
            server["env"]["PGMCP_PG_CONNSTRING"]
                .as_str()
                .unwrap()
                .starts_with("postgresql://"),
            "{desktop}"
        );
    }
}

/// A file that sets only what its author cares about layers over the same
/// defaults as no file; a value that is wrong is still refused, naming the
/// file and the field.
#[test]
fn a_partial_config_layers_over_the_defaults() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("partial.json");
    std::fs::write(&path, r#"{"protection": {"allow_drop": true}}"#).unwrap();
    let demo = format!("sqlite:{}/fixtures/demo.db", env!("CARGO_MANIFEST_DIR"));
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .args(["--database", &demo, "query", "SELECT count(*) AS n FROM products"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["rows"][0]["n"].as_u64().is_some_and(|n| n > 0), "{json}");

    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .args(["--database", &demo, "check"])
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(stdout.contains("protection:   allowed: allow_drop;"), "{stdout}");
    assert!(stdout.contains("read-only:    on"), "{stdout}");

    for (text, expected) in [
        (
            r#"{"query": {"default_timeout_seconds": 0}}"#,
            "query.default_timeout_seconds: must be greater than 0, got 0",
        ),
        (
            r#"{"query": {"list_tables_timeout_seconds": -3}}"#,
            "query.list_tables_timeout_seconds: must be greater than 0, got -3",
        ),
        (
            r#"{"query": {"describe_table_timeout_seconds": "ten"}}"#,
            "query.describe_table_timeout_seconds: expected a whole number, found the text \"ten\"",
        ),
    ] {
        let (code, stderr) = crate::support::config_check::check_config(home.path(), &path, text);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(
            stderr.starts_with(&format!("pgmcp: config {}: {expected}", path.display())),
            "{text}: {stderr}"
        );
    }
}

/// A bare path given as the database is not read as a PostgreSQL connection
/// string: the error names the setting it came from, once, and gives the
/// value to use instead.
#[test]
fn a_bare_file_path_gets_the_url_to_use() {
    let home = tempfile::tempdir().unwrap();
    let demo = format!("{}/fixtures/demo.db", env!("CARGO_MANIFEST_DIR"));
    let expected =
        format!("pgmcp: --database: \"{demo}\" is a file, not a PostgreSQL connection string: use sqlite://{demo}\n");
    for command in ["query", "check"] {
        let mut cmd = pgmcp(home.path());
        cmd.args(["--database", &demo, command]);
        if command == "query" {
            cmd.arg("SELECT 1");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected);
    }
    let cases = [
        (
            "PGMCP_DATABASE",
            "shop.sqlite",
            "pgmcp: PGMCP_DATABASE: \"shop.sqlite\" looks like a file path, not a PostgreSQL connection string: use sqlite:shop.sqlite\n",
        ),
        (
            "PGMCP_PG_CONNSTRING",
            "/srv/w.duckdb",
            "pgmcp: PGMCP_PG_CONNSTRING: \"/srv/w.duckdb\" looks like a file path, not a PostgreSQL connection string: use duckdb:///srv/w.duckdb\n",
        ),
    ];
    for (variable, value, expected) in cases {
        let out = pgmcp(home.path()).env(variable, value).arg("check").output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected);
    }
    // From the config, named with its file.
    let path = home.path().join("c.json");
    std::fs::write(&path, r#"{"database": "./data/x"}"#).unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "pgmcp: config {}: database: \"./data/x\" looks like a file path, not a PostgreSQL connection string: use sqlite:./data/x for an SQLite file, duckdb:./data/x for a DuckDB file\n",
            path.display()
        )
    );
    // A malformed connection string is named by its setting, once.
    let out = pgmcp(home.path())
        .args(["--database", "host=db port", "check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("pgmcp: connection settings: --database: "),
        "{stderr}"
    );
    assert_eq!(stderr.matches("--database").count(), 1, "{stderr}");
}

/// A missing file named with a relative path says where it was looked for:
/// the working directory, or the config file's directory for the config's
/// `database`.
#[test]
fn a_missing_database_file_shows_where_it_was_looked_for() {
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path())
        .args(["--database", "sqlite:missing.db", "check"])
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 1);
    assert!(
        stdout.contains(&format!(
            "FAILED:     Database not found: missing.db (looked for {}, relative to the working directory {})",
            home.path().join("missing.db").display(),
            home.path().display()
        )),
        "{stdout}"
    );
    let conf = home.path().join("conf");
    std::fs::create_dir(&conf).unwrap();
    let path = conf.join("c.json");
    std::fs::write(&path, r#"{"database": "sqlite:data/shop.db"}"#).unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .args(["query", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: Database not found: data/shop.db\nnote: the database file is not there: looked for {}, relative to the config file's directory {}\n",
            conf.join("data/shop.db").display(),
            conf.display()
        )
    );
    // Found there, whatever the working directory.
    std::fs::create_dir(conf.join("data")).unwrap();
    std::fs::copy(
        format!("{}/fixtures/demo.db", env!("CARGO_MANIFEST_DIR")),
        conf.join("data/shop.db"),
    )
    .unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .args(["query", "SELECT count(*) AS n FROM customers"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
