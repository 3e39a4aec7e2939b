//! `connection.role` against the real PostgreSQL: with a superuser login,
//! every statement pgmcp sends (queries, catalog queries, type lookups, the
//! check report) runs as the reader role; the guard keeps it there; a role that
//! cannot be used is a clear error; `check` warns about a role that can do
//! more than read; and `check --suggest-role` prints SQL that makes a role
//! that works.
//!
//! Roles belong to the cluster, not a database: every name here carries the
//! test database's name, so tests sharing the server do not collide.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pgmcp::testing::login::hba_facts;
use pgmcp::{Config, Engine, FunctionPattern, Rule, TableFilter};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, err_text, rows, run};
use crate::support::pg::{self, TestDb};
use crate::support::pgmcp_as_configured as pgmcp;
use crate::support::stdio::{McpProcess, tool_json};

/// Tables `shown` (with an enum column, so results need a type lookup) and
/// `hidden`, and a NOLOGIN role that may read `shown` only. The role's name
/// has upper case, a space and a double quote: it must be quoted exactly.
fn reader(db: &TestDb) -> String {
    let role = format!("Rdr \"{}\"", db.name);
    let quoted = pgmcp::testing::postgres::quote_ident(&role);
    db.psql(&format!(
        "CREATE TYPE mood AS ENUM ('ok', 'sad');
         CREATE TABLE shown (id int PRIMARY KEY, m mood);
         INSERT INTO shown VALUES (1, 'ok');
         CREATE TABLE hidden (secret text);
         INSERT INTO hidden VALUES ('s3cret');
         CREATE ROLE {quoted} NOLOGIN;
         GRANT SELECT ON shown TO {quoted};"
    ));
    role
}

fn with_role(role: &str) -> impl FnOnce(&mut Config) + '_ {
    move |c: &mut Config| {
        c.connection.role = Some(role.to_owned());
        unguarded_pg_ls_dir(c);
    }
}

/// The guard out of pg_ls_dir's way (not blocked, vouched for in read-only
/// mode), so PostgreSQL's own privilege check is what refuses it below.
fn unguarded_pg_ls_dir(c: &mut Config) {
    c.protection.blocked_functions.clear();
    c.protection.read_only_functions.extend([
        FunctionPattern::new("pg_catalog.pg_ls_dir(text)"),
        FunctionPattern::new("pg_catalog.pg_ls_dir(text, boolean, boolean)"),
    ]);
}

async fn list(engine: &Engine) -> Vec<String> {
    let list = engine
        .list_tables(&TableFilter::default(), CancellationToken::new())
        .await
        .unwrap();
    list.tables.iter().map(|t| format!("{}.{}", t.schema, t.name)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_statement_runs_as_the_role() {
    let db = pg::server().database();
    let role = reader(&db);
    let admin = pg::server().admin_user().to_owned();
    let engine = engine_for(&db, with_role(&role));
    // The login itself (the opt-out: otherwise read-only mode would run a
    // superuser login as pg_read_all_data).
    let login = engine_for(&db, |c| {
        unguarded_pg_ls_dir(c);
        c.connection.read_only_as_login = true;
    });

    assert_eq!(
        rows(&engine, "SELECT current_user AS r, session_user AS l").await,
        json!([{"r": role, "l": admin}])
    );
    // The enum column takes the type lookup path, which runs as the role too.
    let out = run(&engine, "SELECT id, m FROM shown").await.unwrap();
    assert_eq!(serde_json::to_value(&out.columns).unwrap()[1]["type"], "mood");
    assert_eq!(serde_json::to_value(&out.rows).unwrap(), json!([{"id": 1, "m": "ok"}]));

    // What the superuser login could do, the role cannot.
    assert_eq!(
        rows(&login, "SELECT secret FROM hidden").await,
        json!([{"secret": "s3cret"}])
    );
    let e = err_text(run(&engine, "SELECT secret FROM hidden").await);
    assert!(
        e.starts_with("permission denied for table hidden (SQLSTATE 42501)"),
        "{e}"
    );
    run(&login, "SELECT pg_catalog.pg_ls_dir('.')").await.unwrap();
    let e = err_text(run(&engine, "SELECT pg_catalog.pg_ls_dir('.')").await);
    assert!(
        e.starts_with("permission denied for function pg_ls_dir (SQLSTATE 42501)"),
        "{e}"
    );

    // The catalog queries run as the role: it lists only what it may read.
    assert_eq!(list(&login).await, ["public.hidden", "public.shown"]);
    assert_eq!(list(&engine).await, ["public.shown"]);
    let shown = engine
        .describe_table("shown", None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((shown.schema.as_str(), shown.name.as_str()), ("public", "shown"));

    // Nothing the login did is left on pooled connections either: the next
    // call on the same engine is still the role.
    assert_eq!(rows(&engine, "SELECT current_user AS r").await, json!([{"r": role}]));
}

/// The guard refuses every way out of the role, even with allow_set.
#[tokio::test(flavor = "multi_thread")]
async fn the_role_cannot_be_left() {
    let db = pg::server().database();
    let role = reader(&db);
    let admin = pg::server().admin_user().to_owned();
    let engine = engine_for(&db, |c| {
        with_role(&role)(c);
        c.protection.allow(Rule::Set, true);
    });
    for sql in [
        format!("SET ROLE {admin}"),
        format!("SET LOCAL ROLE {admin}"),
        "RESET ROLE".to_owned(),
        "SET ROLE NONE".to_owned(),
        format!("SET SESSION AUTHORIZATION {admin}"),
        "RESET SESSION AUTHORIZATION".to_owned(),
    ] {
        let e = err_text(run(&engine, &sql).await);
        assert!(
            e.contains("Set protection.allow_role_changes to true to allow it"),
            "{sql}: {e}"
        );
    }
    // allow_set still lets ordinary settings through.
    run(&engine, "SET work_mem = '8MB'").await.unwrap();
    assert_eq!(rows(&engine, "SELECT current_user AS r").await, json!([{"r": role}]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_that_cannot_be_used_is_a_clear_error() {
    let server = pg::server();
    let db = server.database();
    let missing = format!("{}_missing", db.name);
    let engine = engine_for(&db, |c| c.connection.role = Some(missing.clone()));
    let expected = format!(
        "cannot run as connection.role: role \"{missing}\" does not exist (SQLSTATE 22023); create it (`pgmcp check --suggest-role` prints the SQL) and GRANT it TO \"{}\"",
        server.admin_user()
    );
    let e = err_text(run(&engine, "SELECT 1").await);
    assert!(e.starts_with(&expected), "{e}");
    let e = err_text(
        engine
            .list_tables(&TableFilter::default(), CancellationToken::new())
            .await,
    );
    assert!(e.starts_with(&expected), "{e}");

    // A login that is not a member of the role may not switch to it.
    let login = format!("{}_login", db.name);
    let role = format!("{}_rdr", db.name);
    db.psql(&format!(
        "CREATE ROLE {login} LOGIN PASSWORD 'pw'; CREATE ROLE {role} NOLOGIN; GRANT CONNECT ON DATABASE {} TO {login};",
        db.name
    ));
    let url = format!("postgres://{login}:pw@{}:{}/{}", server.host(), server.port(), db.name);
    let mut config = Config::builtin();
    config.connection.role = Some(role.clone());
    let params = pgmcp::testing::postgres::params::resolve(Some(&url), &config.connection, &|_| None).unwrap();
    let engine = Engine::postgres(config, params);
    let e = err_text(run(&engine, "SELECT 1").await);
    assert_eq!(
        e,
        format!(
            "cannot run as connection.role: permission denied to set role \"{role}\" (SQLSTATE 42501); the login \"{login}\" may not switch to it: as a superuser (or a role with ADMIN OPTION on it) run GRANT \"{role}\" TO \"{login}\"; or change connection.role"
        )
    );
    // Doing what the message says fixes it, without restarting.
    db.psql(&format!("GRANT {role} TO {login}"));
    assert_eq!(rows(&engine, "SELECT current_user AS r").await, json!([{"r": role}]));
}

/// A config for the binary in `dir`, with `connection` as given.
fn config(dir: &Path, connection: serde_json::Value) -> PathBuf {
    let path = dir.join("config.json");
    let doc = json!({
        "connection": connection,
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
    });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// `pgmcp check` (plus `args`) on `url`: exit code, stdout, stderr.
fn check(dir: &Path, config: &Path, url: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = pgmcp(dir)
        .arg("--config")
        .arg(config)
        .arg("check")
        .args(args)
        .env("PGMCP_PG_CONNSTRING", url)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_warns_about_a_role_that_can_do_more_than_read() {
    let server = pg::server();
    let db = server.database();
    if db.major() < 15 {
        // What PostgreSQL 15 does itself, and --suggest-role's note says to.
        db.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    }
    let role = reader(&db);
    let dir = tempfile::tempdir().unwrap();

    // The reader: no warning.
    let path = config(dir.path(), json!({"role": role}));
    let (code, stdout, stderr) = check(dir.path(), &path, &db.url, &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "  connected:  as user \"{}\" to database \"{}\"\n  runs as:    role \"{role}\" (connection.role)\n",
            server.admin_user(),
            db.name
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("WARNING"), "{stdout}");
    assert!(stdout.ends_with("result:       OK\n"), "{stdout}");

    // A non-superuser login that owns a table, may create in a schema and
    // signal other backends: each is named, and check still exits 0.
    let login = format!("{}_owner", db.name);
    db.psql(&format!(
        "CREATE ROLE {login} LOGIN PASSWORD 'pw'; GRANT pg_signal_backend TO {login};
         GRANT CREATE ON SCHEMA public TO {login}; ALTER TABLE hidden OWNER TO {login};"
    ));
    let url = format!("postgres://{login}:pw@{}:{}/{}", server.host(), server.port(), db.name);
    let path = config(dir.path(), json!({}));
    let (code, stdout, stderr) = check(dir.path(), &path, &url, &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let expected = format!(
        "WARNING:      queries run as role \"{login}\", which can do more than read:\n\
         \x20 - it is a member of pg_signal_backend: it can cancel and terminate other sessions\n\
         \x20 - it owns 1 table(s) or view(s) (public.hidden): an owner can change, empty or drop them and grant access to others\n\
         \x20 - it may create objects in schema(s) public: a function or view planted there can run later as whoever calls it\n\
         \x20 fix: set connection.role to a reader role; `pgmcp check --suggest-role` prints the SQL that creates one\n\
         result:       OK (3 warnings, above)\n"
    );
    assert!(stdout.ends_with(&expected), "{stdout}");

    // A role that does not exist: a problem, exit 1.
    let path = config(dir.path(), json!({"role": format!("{}_nobody", db.name)}));
    let (code, stdout, _) = check(dir.path(), &path, &db.url, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "  FAILED:     cannot run as connection.role: role \"{}_nobody\" does not exist",
            db.name
        )),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn suggested_sql_creates_a_role_that_works() {
    let server = pg::server();
    let db = server.database();
    db.psql(
        "CREATE SCHEMA \"Sales\"; CREATE TABLE \"Sales\".orders (id int); INSERT INTO \"Sales\".orders VALUES (7);
         CREATE TABLE public.notes (t text); INSERT INTO notes VALUES ('hi');",
    );
    let dir = tempfile::tempdir().unwrap();
    let role = format!("Reader {}", db.name);
    // connection.role names it, though it does not exist yet: the catalog is
    // then read as the login.
    let path = config(dir.path(), json!({"role": role}));
    let (code, sql, stderr) = check(dir.path(), &path, &db.url, &["--suggest-role"]);
    assert_eq!(code, Some(0), "{sql}\n{stderr}");
    assert!(
        sql.contains(&format!("GRANT USAGE ON SCHEMA \"Sales\", \"public\" TO \"{role}\";\n")),
        "{sql}"
    );
    assert!(
        sql.contains(&format!("--   {}", json!({"connection": {"role": role}}))),
        "{sql}"
    );
    db.psql(&sql);
    if db.major() < 15 {
        assert!(
            sql.contains("--   REVOKE CREATE ON SCHEMA public FROM PUBLIC;"),
            "{sql}"
        );
        // What the note says to do; PostgreSQL 15 does it itself.
        db.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    }

    let (code, stdout, stderr) = check(dir.path(), &path, &db.url, &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("  runs as:    role \"{role}\" (connection.role)\n")),
        "{stdout}"
    );
    assert!(!stdout.contains("WARNING"), "{stdout}");

    // A table created after the SQL ran is readable too (default privileges).
    db.psql("CREATE TABLE \"Sales\".later (n int); INSERT INTO \"Sales\".later VALUES (1);");
    let engine = engine_for(&db, with_role(&role));
    assert_eq!(
        rows(&engine, "SELECT (SELECT id FROM \"Sales\".orders) AS o, (SELECT t FROM notes) AS t, (SELECT n FROM \"Sales\".later) AS n, current_user AS r").await,
        json!([{"o": 7, "t": "hi", "n": 1, "r": role}])
    );
    let e = err_text(run(&engine, "SELECT pg_catalog.pg_ls_dir('.')").await);
    assert!(e.starts_with("permission denied for function pg_ls_dir"), "{e}");

    // Without a database, a template, and exit 1.
    let closed = crate::support::net::free_port();
    let url = format!("postgres://nobody@127.0.0.1:{closed}/x");
    let (code, sql, stderr) = check(dir.path(), &path, &url, &["--suggest-role", "r"]);
    assert_eq!(code, Some(1), "{sql}\n{stderr}");
    assert!(
        sql.starts_with("-- pgmcp could not connect, so this is a template"),
        "{sql}"
    );
    assert!(sql.contains("GRANT \"r\" TO <login>;"), "{sql}");
    assert!(stderr.contains("printed a template"), "{stderr}");
}

/// `serve` says so in its log, once, after the first call that reached the
/// database, not at startup.
#[test]
fn serve_logs_a_superuser_role_once() {
    let db = pg::server().database();
    let dir = tempfile::tempdir().unwrap();
    // Queries run as the superuser login only with the opt-out.
    let path = config(dir.path(), json!({"read_only_as_login": true}));
    let log = dir.path().join("pgmcp.log");
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", path.to_str().unwrap()],
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    mcp.initialize();
    let warnings = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("WARN") && l.contains("which can do more than read"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert!(warnings().is_empty(), "no call yet, no connection, no warning");
    for _ in 0..2 {
        let out = tool_json(&mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"})));
        assert_eq!(out["rows"], json!([{"one": 1}]));
    }
    let started = Instant::now();
    while warnings().is_empty() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let found = warnings();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains(&format!(
            "queries run as role \"{}\", which can do more than read: it is a superuser",
            pg::server().admin_user()
        )),
        "{found:?}"
    );
}

/// One rule for what the catalog tools show, through the real binary: the
/// tables `connection.role` can SELECT from (the whole table or some of its
/// columns). A table it cannot read is missing from `list_tables`, described
/// exactly like a table that was never created, and never suggested.
#[test]
fn unreadable_tables_are_indistinguishable_from_missing_ones() {
    let db = pg::server().database();
    let role = format!("Cat \"{}\"", db.name);
    let quoted = pgmcp::testing::postgres::quote_ident(&role);
    db.psql(&format!(
        "CREATE SCHEMA hr;
         CREATE TABLE shown (id int);
         CREATE TABLE payroll (salary int);
         CREATE TABLE hr.payroll (salary int);
         CREATE TABLE partly (visible int, hidden_col int);
         CREATE ROLE {quoted} NOLOGIN;
         GRANT USAGE ON SCHEMA hr TO {quoted};
         GRANT SELECT ON shown TO {quoted};
         GRANT SELECT (visible) ON partly TO {quoted};
         REVOKE ALL ON payroll, hr.payroll FROM PUBLIC;"
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), json!({"role": role}));
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", path.to_str().unwrap()],
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    mcp.initialize();

    let listed = tool_json(&mcp.call_tool("list_tables", json!({})));
    let names: Vec<String> = listed["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{}.{}", t["schema"].as_str().unwrap(), t["name"].as_str().unwrap()))
        .collect();
    assert_eq!(names, ["public.partly", "public.shown"], "{listed}");

    // Only the columns the role can read.
    let partly = tool_json(&mcp.call_tool("describe_table", json!({"table": "partly"})));
    assert_eq!(partly["columns"].as_array().unwrap().len(), 1, "{partly}");
    assert_eq!(partly["columns"][0]["name"], "visible", "{partly}");

    // Each way of naming an unreadable table, answered as if it were missing.
    let asked = [
        json!({"table": "payroll"}),
        json!({"table": "payroll", "schema": "public"}),
        json!({"table": "hr.payroll"}),
        json!({"table": "payroll", "schema": "hr"}),
        json!({"table": "payrol"}),
    ];
    let unreadable: Vec<String> = asked.iter().map(|a| refused(&mut mcp, a)).collect();
    for text in &unreadable {
        assert!(text.contains("does not exist"), "{text}");
        assert!(!text.contains("hr,") && !text.contains("schema hr"), "{text}");
        assert!(!text.contains("payroll?") && !text.contains(".payroll"), "{text}");
    }
    // Did-you-mean after a failed query names no unreadable table or column.
    let result = mcp.call_tool("query", json!({"sql": "SELECT * FROM payrol"}));
    let text = crate::support::stdio::tool_text(&result).to_owned();
    assert!(!text.contains("payroll"), "{text}");
    // (PostgreSQL's own HINT may name the column: the server says so, not
    // pgmcp's suggestions.)
    let result = mcp.call_tool("query", json!({"sql": "SELECT hidden_co FROM partly"}));
    let text = crate::support::stdio::tool_text(&result).to_owned();
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("Did you mean") && l.contains("hidden_col")),
        "{text}"
    );
    let result = mcp.call_tool("query", json!({"sql": "SELECT visibl FROM partly"}));
    let text = crate::support::stdio::tool_text(&result).to_owned();
    assert!(text.contains("Did you mean: partly.visible?"), "{text}");

    // The same answers once the tables are really gone: nothing told them apart.
    db.psql("DROP TABLE payroll; DROP TABLE hr.payroll;");
    let missing: Vec<String> = asked.iter().map(|a| refused(&mut mcp, a)).collect();
    assert_eq!(unreadable, missing);
}

/// The text of a `describe_table` that failed.
fn refused(mcp: &mut McpProcess, args: &serde_json::Value) -> String {
    let result = mcp.call_tool("describe_table", args.clone());
    assert_eq!(result["isError"], true, "{result}");
    crate::support::stdio::tool_text(&result).to_owned()
}

/// `pgmcp check --suggest-role --login NAME` on `url`, run from `home`: the
/// SQL (stdout) and the steps (stderr), after checking it exited 0.
fn login_recipe(home: &Path, url: &str, login: &str) -> (String, String) {
    let out = pgmcp(home)
        .args(["check", "--suggest-role", "--login", login])
        .env("PGMCP_PG_CONNSTRING", url)
        .output()
        .unwrap();
    let sql = crate::support::stdout_of(&out, 0);
    (sql, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The indented line of `steps` that starts with `start` (after its indent).
fn step_line<'a>(steps: &'a str, start: &str) -> &'a str {
    steps
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in:\n{steps}"))
}

/// The recipe for a password login, followed as a person would: the SQL run
/// by psql as the superuser, the pg_hba.conf line added where the steps say
/// (this server's rules turn everyone but its admin away) and the server
/// reloaded, the password file line saved; then `pgmcp check` and `pgmcp
/// query` as the new login connect, read, and cannot write.
#[test]
fn the_login_recipe_works_end_to_end() {
    let server = pg::private_server();
    let admin = server.admin_user().to_owned();
    server.set_hba(&format!(
        "local all all trust\nhost all {admin} 127.0.0.1/32 scram-sha-256\nhost all {admin} ::1/128 scram-sha-256\n\
         host all all 127.0.0.1/32 reject\n"
    ));
    let db = server.database();
    db.psql("CREATE TABLE notes (t text); INSERT INTO notes VALUES ('hi');");
    if db.major() < 15 {
        // What PostgreSQL 15 does itself, and the SQL's note says to.
        db.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    }
    let home = tempfile::tempdir().unwrap();
    let login = "agent_readonly";
    let (sql, steps) = login_recipe(home.path(), &db.url, login);

    // The password is in the password file line of the steps, and only there.
    let line = step_line(&steps, &format!("127.0.0.1:{}:{}:{login}:", server.port(), db.name));
    let password = line.rsplit(':').next().unwrap();
    assert!(password.len() >= 24, "{line}");
    assert!(!sql.contains(password), "the SQL never holds the password:\n{sql}");
    assert_eq!(steps.matches(password).count(), 1, "{steps}");
    assert!(
        sql.contains(&format!("CREATE ROLE \"{login}\" LOGIN PASSWORD 'SCRAM-SHA-256$4096:")),
        "{sql}"
    );

    // 1. The SQL, as the superuser.
    db.psql(&sql);

    // 3. The password file line (before 2, to see the refusal it fixes).
    let passfile = home.path().join("agent.pgpass");
    std::fs::write(&passfile, format!("{line}\n")).unwrap();
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The lines as a shell reads them: the same URL in both.
    let url = shell_words(home.path(), step_line(&steps, "pgmcp check --database "))[3].clone();
    assert_eq!(
        shell_words(
            home.path(),
            step_line(&steps, "pgmcp install claude-desktop --database ")
        ),
        ["pgmcp", "install", "claude-desktop", "--database", &url]
    );
    let as_agent = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = pgmcp(home.path());
        cmd.arg("--database").arg(&url).args(args).env("PGPASSFILE", &passfile);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let refused = as_agent(&["check"], &[]);
    let stdout = crate::support::stdout_of(&refused, 1);
    assert!(
        stdout.contains("a reject line of the server's pg_hba.conf matches this user, database and address first"),
        "{stdout}"
    );

    // 2. The server's rules turn the login away: the steps say which line
    // decides, in which file, and the line to put above it.
    let hba_file = steps
        .split_once("2. pg_hba.conf: add this line to ")
        .and_then(|(_, rest)| rest.split_once(", above line "))
        .map(|(file, rest)| (PathBuf::from(file), rest))
        .unwrap_or_else(|| panic!("step 2 adds no line:\n{steps}"));
    let (hba_path, rest) = hba_file;
    let above: usize = rest.split(' ').next().unwrap().parse().unwrap();
    assert!(
        rest.contains("(host all all 127.0.0.1/32 reject), which would decide first"),
        "{steps}"
    );
    let hba_line = step_line(&steps, "host   ");
    assert_eq!(
        hba_line,
        format!("host   {}   {login}   127.0.0.1/32   scram-sha-256", db.name)
    );
    let text = std::fs::read_to_string(&hba_path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(above - 1, hba_line);
    std::fs::write(&hba_path, lines.join("\n") + "\n").unwrap();
    server.psql("postgres", "SELECT pg_reload_conf()");

    // 4. It connects (once the server has read the file again), as itself,
    // with the password from the file, and nothing it can do beyond reading.
    let started = Instant::now();
    let checked = loop {
        let out = as_agent(&["check"], &[]);
        if out.status.success() || started.elapsed() > Duration::from_secs(10) {
            break out;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = crate::support::stdout_of(&checked, 0);
    for expected in [
        format!("  connected:  as user \"{login}\" to database \"{}\"\n", db.name),
        format!("  runs as:    role \"{login}\" (the login,"),
        format!("  password:   from the password file {}\n", passfile.display()),
        "result:       OK\n".to_owned(),
    ] {
        assert!(stdout.contains(&expected), "{expected}\nnot in\n{stdout}");
    }
    assert!(!stdout.contains("WARNING"), "{stdout}");

    let read = as_agent(&["query", "SELECT t FROM notes"], &[]);
    let answer: serde_json::Value = serde_json::from_str(&crate::support::stdout_of(&read, 0)).unwrap();
    assert_eq!(answer["rows"], json!([{"t": "hi"}]));
    // A write: refused by read-only mode, and by PostgreSQL itself when
    // read-only mode is off.
    for env in [&[][..], &[("PGMCP_READ_ONLY", "false")][..]] {
        let write = as_agent(&["query", "INSERT INTO notes VALUES ('x')"], env);
        assert_eq!(write.status.code(), Some(1), "{env:?}");
        let stderr = String::from_utf8_lossy(&write.stderr);
        if env.is_empty() {
            assert!(stderr.contains("read-only"), "{stderr}");
        } else {
            assert!(stderr.contains("permission denied for table notes"), "{stderr}");
        }
    }
    assert_eq!(db.psql("SELECT count(*) FROM notes"), "1");
}

/// Where the server's rules already let a password login in (the shared
/// test server's `host all all 127.0.0.1/32 scram-sha-256`), the steps say
/// there is nothing to add, and which line lets it in.
#[test]
fn the_login_recipe_adds_no_pg_hba_line_when_none_is_needed() {
    let server = pg::server();
    if server.log_path().is_none() {
        return; // PGMCP_TEST_DATABASE_URL: its login may not read pg_hba.conf
    }
    let db = server.database();
    let home = tempfile::tempdir().unwrap();
    let (sql, steps) = login_recipe(home.path(), &db.url, "Agent One");
    assert!(
        sql.contains("CREATE ROLE \"Agent One\" LOGIN PASSWORD 'SCRAM-SHA-256$4096:"),
        "{sql}"
    );
    assert!(steps.contains("2. pg_hba.conf: nothing to add: line "), "{steps}");
    assert!(
        steps.contains("(host all all 127.0.0.1/32 scram-sha-256) of "),
        "{steps}"
    );
    assert!(
        steps.contains("lets \"Agent One\" in from 127.0.0.1 with its password.\n"),
        "{steps}"
    );
    // Names are quoted and encoded for each place they go.
    step_line(&steps, &format!("127.0.0.1:{}:{}:Agent One:", server.port(), db.name));
    assert_eq!(
        step_line(&steps, "pgmcp check --database "),
        format!(
            "pgmcp check --database postgresql://Agent%20One@127.0.0.1:{}/{}",
            server.port(),
            db.name
        ),
    );

    // Without a connection: the template, the login in it, and the steps,
    // which say that pg_hba.conf could not be read (exit 1).
    let closed = crate::support::net::free_port();
    let out = pgmcp(home.path())
        .args(["check", "--suggest-role", "--login", "agent"])
        .env(
            "PGMCP_PG_CONNSTRING",
            format!("postgres://nobody@127.0.0.1:{closed}/shop"),
        )
        .output()
        .unwrap();
    let sql = crate::support::stdout_of(&out, 1);
    let steps = String::from_utf8_lossy(&out.stderr);
    assert!(
        sql.starts_with("-- pgmcp could not connect, so this is a template"),
        "{sql}"
    );
    assert!(
        sql.contains("CREATE ROLE \"agent\" LOGIN PASSWORD 'SCRAM-SHA-256$4096:"),
        "{sql}"
    );
    assert!(
        steps.contains(
            "2. pg_hba.conf: pgmcp could not read the server's rules (pgmcp could not read the database). If"
        ),
        "{steps}"
    );
    step_line(&steps, &format!("127.0.0.1:{closed}:shop:agent:"));
    assert!(steps.contains("printed a template"), "{steps}");
}

/// The words a POSIX shell makes of `line`, run in `dir`: printf shows
/// them one a line, and nothing else runs unless the quoting fails.
fn shell_words(dir: &Path, line: &str) -> Vec<String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\n' {line}"))
        .current_dir(dir)
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A line the DBA pastes: run by `sh` in `dir` as the server's superuser
/// (its password in PGPASSWORD, psql on the PATH), which must succeed with
/// no error from psql.
fn run_pasted(server: &pg::PgServer, dir: &Path, line: &str) {
    let psql_dir = server.psql_path().parent().unwrap().to_owned();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env_clear()
        .env(
            "PATH",
            std::env::join_paths([psql_dir, "/usr/bin".into(), "/bin".into()]).unwrap(),
        )
        .env("HOME", dir)
        .env("PGPASSWORD", server.admin_password())
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("ERROR"), "{line}\n{stderr}");
}

/// The red team's names, on a real server: a database and a schema whose
/// names hold a line break and SQL, and a database named with a quote,
/// `$(...)`, backticks and `=`. The printed SQL, run by the psql line it
/// prints, does what it says and nothing else (the canary table is still
/// there, nobody became superuser), and every printed shell line is the
/// intended words, with no command run by pasting it.
#[test]
fn hostile_names_run_nothing_but_the_intended_sql() {
    let server = pg::server();
    if server.log_path().is_none() {
        return; // PGMCP_TEST_DATABASE_URL: its login may not be a superuser
    }
    let db = server.database();
    let home = tempfile::tempdir().unwrap();
    let admin = server.admin_user();
    let enc = crate::support::pg::percent_encode;
    let mallory = format!("m_{}", db.name);
    let schema = format!("x\nALTER ROLE {mallory} SUPERUSER; --");
    let newline_db = format!("evil\nDROP TABLE canary; --{}", db.name);
    let shell_db = format!("it's $(touch m1)`touch m2` host=x dbname=y {}", db.name);
    db.psql(&format!("CREATE ROLE {mallory} NOLOGIN"));
    for name in [&newline_db, &shell_db] {
        let quoted = format!("\"{name}\"");
        db.psql(&format!("CREATE DATABASE {quoted} TEMPLATE template0"));
        server.psql(
            name,
            &format!(
                "CREATE TABLE canary (n int); INSERT INTO canary VALUES (1);
                 CREATE SCHEMA \"{schema}\"; CREATE TABLE \"{schema}\".t (n int);"
            ),
        );
    }
    let url = |database: &str| {
        format!(
            "postgres://{}:{}@{}:{}/{}",
            enc(admin),
            enc(server.admin_password()),
            server.host(),
            server.port(),
            enc(database)
        )
    };
    let at = format!("{}:{}", server.host(), server.port());
    let untouched = |database: &str| {
        assert_eq!(
            server.psql(database, "SELECT count(*) FROM canary"),
            "1",
            "{database:?}"
        );
        assert_eq!(
            db.psql(&format!("SELECT rolsuper FROM pg_roles WHERE rolname = '{mallory}'")),
            "f"
        );
        for marker in ["m1", "m2", "m3"] {
            assert!(
                !home.path().join(marker).exists(),
                "{marker}: a pasted line ran a command"
            );
        }
    };
    // The psql line of the SQL's comment: the checked server, by a URL.
    let psql_words = |database: &str| {
        let words = [
            "psql",
            "-d",
            &format!("postgresql://{admin}@{at}/{}", enc(database)),
            "-f",
            "reader.sql",
        ];
        words.map(str::to_owned).to_vec()
    };
    let commented_psql = |sql: &str| {
        let line = sql.lines().find(|l| l.starts_with("-- Run it as")).unwrap();
        line.split_once(", e.g. ").unwrap().1.to_owned()
    };

    // The database and schema with a line break: the SQL, run by its own
    // psql line, creates the reader and grants it the schema, and that is all.
    let reader = format!("r1_{}", db.name);
    let dir = tempfile::tempdir().unwrap();
    let path = config(dir.path(), json!({}));
    let (code, sql, stderr) = check(dir.path(), &path, &url(&newline_db), &["--suggest-role", &reader]);
    assert_eq!(code, Some(0), "{sql}\n{stderr}");
    assert!(
        !sql.contains('\r') && !sql.contains("\nDROP") && !sql.contains("\nALTER ROLE"),
        "{sql}"
    );
    let line = commented_psql(&sql);
    assert_eq!(shell_words(home.path(), &line), psql_words(&newline_db));
    std::fs::write(home.path().join("reader.sql"), &sql).unwrap();
    run_pasted(server, home.path(), &line);
    untouched(&newline_db);
    let can = |database: &str, role: &str| {
        server.psql(
            database,
            &format!("SELECT has_schema_privilege('{role}', '{schema}', 'USAGE'), has_table_privilege('{role}', '\"{schema}\".t', 'SELECT')"),
        )
    };
    assert_eq!(can(&newline_db, &reader), "t|t");
    // --login would write the name into pg_hba.conf and password file
    // lines: refused, and nothing printed.
    let (code, sql, stderr) = check(
        dir.path(),
        &path,
        &url(&newline_db),
        &["--suggest-role", "r2", "--login", "agent"],
    );
    assert_eq!((code, sql.as_str()), (Some(2), ""), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the database {newline_db:?} cannot be used: it holds the control or invisible character U+000A"
        )),
        "{stderr}"
    );

    // The database named for a shell: every command line is the words meant.
    let reader = format!("r2_{}", db.name);
    let login = format!("a_{}", db.name);
    let passfile = home.path().join("p $(touch m3).pgpass");
    let out = pgmcp(home.path())
        .args(["check", "--suggest-role", &reader, "--login", &login])
        .env("PGMCP_PG_CONNSTRING", url(&shell_db))
        .env("PGPASSFILE", &passfile)
        .output()
        .unwrap();
    let sql = crate::support::stdout_of(&out, 0);
    let steps = String::from_utf8_lossy(&out.stderr).into_owned();
    let agent_url = format!("postgresql://{login}@{at}/{}", enc(&shell_db));
    let step_one = steps
        .lines()
        .find_map(|l| l.split_once("saved as a file: ").map(|(_, psql)| psql.to_owned()))
        .unwrap();
    let chmod = steps
        .split_once("(chmod 0600 ")
        .and_then(|(_, rest)| rest.split_once("), as this line"))
        .map(|(word, _)| format!("chmod 0600 {word}"))
        .unwrap();
    let cases = [
        (commented_psql(&sql), psql_words(&shell_db)),
        (step_one.clone(), psql_words(&shell_db)),
        (
            chmod,
            ["chmod", "0600", &passfile.display().to_string()]
                .map(str::to_owned)
                .to_vec(),
        ),
        (
            step_line(&steps, "pgmcp check --database ").to_owned(),
            ["pgmcp", "check", "--database", &agent_url].map(str::to_owned).to_vec(),
        ),
        (
            step_line(&steps, "pgmcp install claude-desktop --database ").to_owned(),
            ["pgmcp", "install", "claude-desktop", "--database", &agent_url]
                .map(str::to_owned)
                .to_vec(),
        ),
    ];
    for (line, words) in cases {
        assert_eq!(shell_words(home.path(), &line), words, "{line}");
    }
    std::fs::write(home.path().join("reader.sql"), &sql).unwrap();
    run_pasted(server, home.path(), &step_one);
    untouched(&shell_db);
    assert_eq!(can(&shell_db, &reader), "t|t");
    assert_eq!(
        db.psql(&format!(
            "SELECT rolcanlogin, rolsuper, pg_has_role('{login}', '{reader}', 'MEMBER') FROM pg_roles WHERE rolname = '{login}'"
        )),
        "t|f|t"
    );

    for name in [&newline_db, &shell_db] {
        db.psql(&format!("DROP DATABASE \"{name}\" WITH (FORCE)"));
    }
    db.psql(&format!(
        "DROP OWNED BY {login}, \"{reader}\"; DROP ROLE {login}; DROP ROLE {reader}"
    ));
}

/// Names PostgreSQL would cut short or that hold a control character are
/// refused before anything is printed, with the reason.
#[test]
fn names_that_cannot_be_printed_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let long = "r".repeat(64);
    let cases: [(&[&str], &str); 4] = [
        (
            &["--suggest-role", "r", "--login", "x\nSELECT 1/0; --"],
            "--login \"x\\nSELECT 1/0; --\" cannot be used: it holds the control or invisible character U+000A",
        ),
        (
            &["--suggest-role", "r", "--login", "tab\there"],
            "--login \"tab\\there\" cannot be used: it holds the control or invisible character U+0009",
        ),
        (
            &["--suggest-role", &long, "--login", "agent"],
            "cannot be used: it is 64 bytes long: PostgreSQL keeps only the first 63 bytes of a name",
        ),
        (
            &["--suggest-role", "r", "--login", &long],
            "cannot be used: it is 64 bytes long: PostgreSQL keeps only the first 63 bytes of a name",
        ),
    ];
    for (args, refusal) in cases {
        let out = pgmcp(home.path())
            .arg("check")
            .args(args)
            .env("PGMCP_PG_CONNSTRING", "postgres://nobody@127.0.0.1:1/shop")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(crate::support::stdout_of(&out, 2), "", "{stderr}");
        assert!(stderr.contains(refusal), "{args:?}: {stderr}");
    }
}

/// What `+group` lines are judged by: the roles the reader is a member of,
/// nested memberships included, as the server says; none for a reader the
/// SQL has yet to create.
#[tokio::test(flavor = "multi_thread")]
async fn the_readers_memberships_come_from_the_server() {
    let db = pg::server().database();
    let (outer, inner, reader) = (
        format!("g1_{}", db.name),
        format!("g2_{}", db.name),
        format!("rd_{}", db.name),
    );
    db.psql(&format!(
        "CREATE ROLE {outer} NOLOGIN; CREATE ROLE {inner} NOLOGIN IN ROLE {outer}; CREATE ROLE {reader} NOLOGIN IN ROLE {inner};"
    ));
    let engine = engine_for(&db, |_| {});
    let facts = hba_facts(&engine, &reader, CancellationToken::new()).await.unwrap();
    let mut expected = vec![outer.clone(), inner.clone(), reader.clone()];
    expected.sort();
    assert_eq!(facts.reader_groups, Some(expected));
    let facts = hba_facts(&engine, &format!("nobody_{}", db.name), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(facts.reader_groups, Some(vec![]));
    db.psql(&format!("DROP ROLE {reader}; DROP ROLE {inner}; DROP ROLE {outer};"));
}
