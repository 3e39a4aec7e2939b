//! The settings read from the environment, through the binary:
//! `PGMCP_DATABASE`, `PGMCP_DATABASE_FILE` (files that are pipes, values that
//! look like options), values that only look empty or were never
//! substituted, `PGMCP_MAX_ROWS` past what an engine's LIMIT takes, and
//! `PGMCP_READ_ONLY`, on every engine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::process::{mkfifo, run, text, within};
use crate::support::stdio::{McpProcess, tool_json};
use crate::support::{pg, pgmcp_std};

/// `PGMCP_DATABASE_FILE` (and a `--database` that looks like a path) is
/// opened to read its header: a FIFO held `open` until a writer came, so
/// pgmcp hung at start, before any log line, with the client showing only
/// "starting".
#[test]
fn a_pipe_named_as_the_database_file_is_refused_not_waited_on() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("shop.db");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 3] = [
        (
            &["check"],
            &[("PGMCP_DATABASE_FILE", fifo)],
            "PGMCP_DATABASE_FILE: cannot read",
        ),
        (&["serve"], &[("PGMCP_DATABASE_FILE", fifo)], "not a regular file"),
        (&["--database", fifo, "check"], &[("USER", "me")], "--database"),
    ];
    for (args, env, said) in cases {
        let mut cmd = pgmcp_std(home.path());
        cmd.args(args).envs(env.iter().copied());
        let out =
            within(cmd, Duration::from_secs(10)).unwrap_or_else(|| panic!("pgmcp {args:?} {env:?} hung on the FIFO"));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(said), "{args:?}: {}", text(&out));
    }
    // A directory, a device and a symlink to the FIFO: refused by name too.
    let dir = home.path().join("dir.db");
    std::fs::create_dir(&dir).unwrap();
    let link = home.path().join("link.db");
    std::os::unix::fs::symlink(fifo, &link).unwrap();
    for path in [dir.to_str().unwrap(), "/dev/null", link.to_str().unwrap()] {
        let out = run(home.path(), &["check"], &[("PGMCP_DATABASE_FILE", path)]);
        assert_eq!(out.status.code(), Some(2), "{path}: {}", text(&out));
        assert!(text(&out).contains("PGMCP_DATABASE_FILE"), "{path}: {}", text(&out));
    }
}

/// An SQLite file for `check`.
fn sqlite_file(dir: &Path) -> PathBuf {
    let path = dir.join("shop.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE t (x int)").unwrap();
    path
}

/// A value of spaces looks empty in a client's settings field but was
/// taken as given: `PGMCP_DATABASE=" "` hid `PGMCP_PG_CONNSTRING` and named
/// PostgreSQL's defaults (the local socket, the login's database) instead,
/// and `PGMCP_DATABASE_FILE=" "` was refused as set together with it.
#[test]
fn a_variable_of_spaces_is_unset() {
    let home = tempfile::tempdir().unwrap();
    let db = sqlite_file(home.path());
    let url = format!("sqlite:{}", db.display());
    for (blank, value) in [
        ("PGMCP_DATABASE", " "),
        ("PGMCP_DATABASE", "\t \n"),
        ("PGMCP_DATABASE_FILE", "  "),
        ("PGMCP_READ_ONLY", " "),
        ("PGMCP_MAX_ROWS", " "),
    ] {
        let out = run(
            home.path(),
            &["check"],
            &[(blank, value), ("PGMCP_PG_CONNSTRING", &url), ("USER", "me")],
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(0), "{blank}={value:?}: {said}");
        assert!(said.contains("from PGMCP_PG_CONNSTRING"), "{blank}={value:?}: {said}");
        assert!(!said.contains("PGMCP_MAX_ROWS="), "{blank}={value:?}: {said}");
        let read_only = said.lines().find(|l| l.starts_with("read-only:")).unwrap_or_default();
        assert!(read_only.contains("on"), "{blank}={value:?}: {said}");
    }
}

/// Claude Desktop passes `${user_config.KEY}` on as written when an optional
/// bundle setting without a default is left empty (mcpb#250). The bundle's
/// password, connection string, file and row cap have no default: a person
/// who picked only a file got "PGMCP_DATABASE_FILE and PGMCP_PG_CONNSTRING:
/// both are set", and the placeholder would have been sent as a password.
#[test]
fn a_bundle_placeholder_left_unsubstituted_is_unset() {
    let home = tempfile::tempdir().unwrap();
    let db = sqlite_file(home.path());
    let out = run(
        home.path(),
        &["check"],
        &[
            ("PGMCP_PG_CONNSTRING", "${user_config.connection_string}"),
            ("PGPASSWORD", "${user_config.password}"),
            ("PGMCP_DATABASE_FILE", db.to_str().unwrap()),
            ("PGMCP_READ_ONLY", "true"),
            ("PGMCP_MAX_ROWS", "${user_config.max_rows}"),
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("from PGMCP_DATABASE_FILE"), "{said}");
    assert!(!said.contains("user_config"), "{said}");
}

/// `PGMCP_READ_ONLY` takes `true` or `false` only (any case, spaces around):
/// a typo or another spelling stops pgmcp, naming the variable, and never
/// turns read-only off.
#[test]
fn read_only_takes_only_clear_values() {
    let home = tempfile::tempdir().unwrap();
    let db = sqlite_file(home.path());
    let url = format!("sqlite:{}", db.display());
    for value in [
        "1",
        "0",
        "yes",
        "no",
        "off",
        "on",
        "flase",
        "ture",
        "false!",
        "f",
        "t",
        "\u{FF54}rue",
    ] {
        let out = run(
            home.path(),
            &["--database", &url, "check"],
            &[("PGMCP_READ_ONLY", value)],
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{value:?}: {said}");
        assert!(
            said.contains("PGMCP_READ_ONLY:") && said.contains("is not true or false"),
            "{value:?}: {said}"
        );
    }
    for (value, on) in [("TRUE", true), (" true ", true), ("False", false), ("false\n", false)] {
        let out = run(
            home.path(),
            &["--database", &url, "check"],
            &[("PGMCP_READ_ONLY", value)],
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(0), "{value:?}: {said}");
        let line = said.lines().find(|l| l.starts_with("read-only:")).unwrap();
        assert_eq!(line.contains(" on"), on, "{value:?}: {said}");
    }
}

/// `PGMCP_MAX_ROWS` out of bounds is refused, naming the variable.
#[test]
fn max_rows_out_of_bounds_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let db = sqlite_file(home.path());
    let url = format!("sqlite:{}", db.display());
    for value in [
        "0",
        "-1",
        "1e3",
        "1.5",
        "0x10",
        "18446744073709551616",
        "99999999999999999999999",
        "１０",
    ] {
        let out = run(
            home.path(),
            &["--database", &url, "check"],
            &[("PGMCP_MAX_ROWS", value)],
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{value:?}: {said}");
        assert!(said.contains("PGMCP_MAX_ROWS:"), "{value:?}: {said}");
    }
}

/// A row cap past `int` (the bundle's field says at most 100000, but the
/// variable and `query.max_rows` take any size) broke `list_tables` on
/// PostgreSQL: the catalog query reads the cap as `int` and adds 1.
#[test]
fn a_huge_row_cap_still_lists_tables_on_postgres() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t1 (x int); CREATE TABLE t2 (x int)");
    for cap in ["2147483647", "3000000000", "18446744073709551615"] {
        let mut mcp = McpProcess::spawn(&["serve"], &[("PGMCP_PG_CONNSTRING", &db.url), ("PGMCP_MAX_ROWS", cap)]);
        mcp.initialize();
        let result = mcp.call_tool("list_tables", json!({}));
        assert_eq!(result["isError"], false, "PGMCP_MAX_ROWS={cap}: {result}");
        let names: Vec<Value> = tool_json(&result)["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, [json!("t1"), json!("t2")], "PGMCP_MAX_ROWS={cap}");
    }
}

/// The bundle's file setting reaches pgmcp in a variable, never an argument:
/// a value that looks like an option is a file name that is not there.
#[test]
fn a_database_file_that_looks_like_an_option_is_a_missing_file() {
    let home = tempfile::tempdir().unwrap();
    for value in ["--help", "-x", "--database=sqlite::memory:", "--config=/etc/passwd"] {
        let out = run(home.path(), &["serve"], &[("PGMCP_DATABASE_FILE", value)]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{value:?}: {said}");
        assert!(said.contains("PGMCP_DATABASE_FILE: no file at"), "{value:?}: {said}");
    }
}

/// One database a variant runs on, with table `t` of three rows: the
/// variables that name it, and how many rows `t` has now, read past pgmcp.
struct Engine {
    name: &'static str,
    env: Vec<(&'static str, String)>,
    count: Box<dyn Fn() -> i64>,
}

/// PostgreSQL (the harness server), an SQLite file and, when built in, a
/// DuckDB file; the files live in the directory returned, the PostgreSQL
/// database as long as its handle.
fn every_engine() -> (tempfile::TempDir, pg::TestDb, Vec<Engine>) {
    let pg = pg::server().database();
    pg.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3)");
    let url = pg.url.clone();
    let pg_count = {
        let name = pg.name.clone();
        move || pg::server().psql(&name, "SELECT count(*) FROM t").parse().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("shop.db");
    rusqlite::Connection::open(&sqlite)
        .unwrap()
        .execute_batch("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3)")
        .unwrap();
    let sqlite_count = {
        let path = sqlite.clone();
        move || {
            rusqlite::Connection::open(&path)
                .unwrap()
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap()
        }
    };
    #[allow(unused_mut)]
    let mut engines = vec![
        Engine {
            name: "PostgreSQL",
            env: vec![("PGMCP_PG_CONNSTRING", url)],
            count: Box::new(pg_count),
        },
        Engine {
            name: "SQLite",
            env: vec![("PGMCP_DATABASE_FILE", sqlite.to_str().unwrap().to_owned())],
            count: Box::new(sqlite_count),
        },
    ];
    #[cfg(feature = "duckdb")]
    {
        let duck = dir.path().join("shop.duckdb");
        let conn = duckdb::Connection::open(&duck).unwrap();
        conn.execute_batch("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3)")
            .unwrap();
        conn.close().unwrap();
        let path = duck.clone();
        engines.push(Engine {
            name: "DuckDB",
            env: vec![("PGMCP_DATABASE_FILE", duck.to_str().unwrap().to_owned())],
            count: Box::new(move || {
                duckdb::Connection::open(&path)
                    .unwrap()
                    .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                    .unwrap()
            }),
        });
    }
    (dir, pg, engines)
}

/// A row cap past what any engine's own LIMIT takes (32-bit, 64-bit signed,
/// the largest unsigned) lists tables and answers queries whole on every
/// engine, as a cap should; it never fails a call or wraps to "no rows".
#[test]
fn a_huge_row_cap_lists_and_queries_on_every_engine() {
    let (_dir, _pg, engines) = every_engine();
    for engine in engines {
        for cap in ["2147483647", "9223372036854775808", "18446744073709551615"] {
            let mut env: Vec<(&str, &str)> = engine.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            env.push(("PGMCP_MAX_ROWS", cap));
            let mut mcp = McpProcess::spawn(&["serve"], &env);
            mcp.initialize();
            let listed = mcp.call_tool("list_tables", json!({}));
            assert_eq!(listed["isError"], false, "{} cap {cap}: {listed}", engine.name);
            let tables = tool_json(&listed)["tables"].as_array().unwrap().clone();
            assert!(
                tables.iter().any(|t| t["name"] == "t"),
                "{} cap {cap}: {listed}",
                engine.name
            );
            let rows = mcp.call_tool("query", json!({"sql": "SELECT x FROM t ORDER BY x"}));
            assert_eq!(rows["isError"], false, "{} cap {cap}: {rows}", engine.name);
            let answer = tool_json(&rows);
            assert_eq!(
                answer["rows"].as_array().unwrap().len(),
                3,
                "{} cap {cap}: {answer}",
                engine.name
            );
            assert_eq!(answer["truncated"], false, "{} cap {cap}", engine.name);
        }
    }
}

/// `PGMCP_READ_ONLY=true` over a config file that turned read-only off
/// holds on every engine, for every route to a write the bundle user could
/// be exposed to (a plain write, a write without WHERE, a DDL statement):
/// each is refused and the table is as it was, read past pgmcp. And the
/// other way, a blank or unsubstituted value never turns read-only off.
#[test]
fn read_only_from_the_environment_holds_on_every_engine() {
    let home = tempfile::tempdir().unwrap();
    let writable = home.path().join("writable.json");
    std::fs::write(&writable, r#"{"server": {"read_only": false}}"#).unwrap();
    let writes = [
        "INSERT INTO t VALUES (4)",
        "DELETE FROM t WHERE x = 1",
        "UPDATE t SET x = 9 WHERE x = 2",
        "DROP TABLE t",
    ];
    let (_dir, _pg, engines) = every_engine();
    for engine in engines {
        let base: Vec<(&str, &str)> = engine.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let cases: [(Option<&Path>, Option<&str>); 3] = [
            // The file says writable; the bundle's setting says read-only.
            (Some(&writable), Some("true")),
            // No file: read-only by default, whatever a blank setting says.
            (None, Some("")),
            (None, Some("${user_config.read_only}")),
        ];
        for (config, read_only) in cases {
            let mut env = base.clone();
            if let Some(value) = read_only {
                env.push(("PGMCP_READ_ONLY", value));
            }
            let config_arg;
            let mut args = vec![];
            if let Some(path) = config {
                config_arg = path.to_str().unwrap().to_owned();
                args.extend(["--config", config_arg.as_str()]);
            }
            args.push("serve");
            let mut mcp = McpProcess::spawn(&args, &env);
            mcp.initialize();
            for sql in writes {
                let result = mcp.call_tool("query", json!({ "sql": sql }));
                assert_eq!(
                    result["isError"], true,
                    "{} {config:?} PGMCP_READ_ONLY={read_only:?}: {sql}: {result}",
                    engine.name
                );
            }
            // DuckDB locks its file while pgmcp has it open: end the session first.
            mcp.close_stdin();
            assert!(mcp.wait_exit(Duration::from_secs(10)).success());
            assert_eq!(
                (engine.count)(),
                3,
                "{} {config:?} {read_only:?}: t changed",
                engine.name
            );
        }
    }
}
