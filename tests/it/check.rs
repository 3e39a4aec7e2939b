//! `pgmcp check`, the real binary against the real PostgreSQL: what it prints
//! when everything works, and its exit codes when something does not.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::config_check::check_config;
use crate::support::pg;
use crate::support::pgmcp_as_configured as pgmcp;

fn hook(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hooks")
        .join(name)
        .display()
        .to_string()
}

/// A config in `dir` with `read_only`, one allowed flag and the given hooks.
fn config(dir: &Path, read_only: bool, hooks: &[String]) -> std::path::PathBuf {
    let path = dir.join("config.json");
    let before: Vec<_> = hooks.iter().map(|c| json!({"pattern": ".*", "command": c})).collect();
    let doc = json!({
        "server": {"read_only": read_only},
        "logging": {"output": dir.join("pgmcp.log")},
        "protection": {"allow_drop": true},
        "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
        "hooks": {"default_timeout_seconds": 5, "before_query": before}
    });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// The config at `path` with `connection` set to `section`.
fn with_connection(path: &Path, section: Value) {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["connection"] = section;
    std::fs::write(path, doc.to_string()).unwrap();
}

/// `pgmcp check` with the config at `path` on `url`, its exit code and stdout.
fn check(home: &Path, path: &Path, url: &str) -> (Option<i32>, String) {
    let out = pgmcp(home)
        .arg("--config")
        .arg(path)
        .arg("check")
        .env("PGMCP_PG_CONNSTRING", url)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn reports_what_is_in_effect() {
    let server = pg::server();
    let db = server.database();
    if db.major() < 15 {
        // PostgreSQL 15's default, which pg_read_all_data would otherwise
        // be warned about on 14.
        db.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    }
    let home = tempfile::tempdir().unwrap();
    let path = config(home.path(), true, &[hook("accept.sh")]);
    let url = format!(
        "postgres://{}@127.0.0.1:{}/{}",
        server.admin_user(),
        server.port(),
        db.name
    );
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("check")
        .env("PGMCP_PG_CONNSTRING", &url)
        .env("PGPASSWORD", server.admin_password())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let version = server.psql("postgres", "SHOW server_version");
    if db.major() < 14 {
        // No pg_read_all_data: refused, with what to do (the reader test
        // has the whole message), and what follows is the opt-out's.
        assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
        assert!(
            stdout.contains("  FAILED:     cannot run as pg_read_all_data: role \"pg_read_all_data\" does not exist"),
            "{stdout}"
        );
        return;
    }
    let expected = format!(
        "config file:  {config}\n\
         log file:     {log}\n\
         database:     127.0.0.1:{port}, user \"{user}\", database \"{db}\", sslmode=prefer (from PGMCP_PG_CONNSTRING)\n\
         \x20 server:     PostgreSQL {version} at 127.0.0.1:{port}\n\
         \x20 connected:  as user \"{user}\" to database \"{db}\"\n\
         \x20 runs as:    role \"pg_read_all_data\" (read-only mode, and the login \"{user}\" is a superuser; set connection.role to choose the role, or connection.read_only_as_login to run as the login)\n\
         \x20 TLS:        no\n\
         \x20 password:   from PGPASSWORD\n\
         read-only:    on (verified: transaction_read_only = on)\n\
         protection:   allowed: allow_drop; {blocked} blocked function patterns\n\
         hooks:        before_query {hook} (executable)\n\
         result:       OK\n",
        config = path.display(),
        log = home.path().join("pgmcp.log").display(),
        port = server.port(),
        user = server.admin_user(),
        db = db.name,
        blocked = pgmcp::Policy::default().blocked_functions.len(),
        hook = hook("accept.sh"),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, expected);
    assert!(!stdout.contains(server.admin_password()) && !stderr.contains(server.admin_password()));
}

#[test]
fn writable_mode_is_reported_as_the_server_sees_it() {
    let db = pg::server().database();
    let home = tempfile::tempdir().unwrap();
    let path = config(home.path(), false, &[]);
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("check")
        .env("PGMCP_PG_CONNSTRING", &db.url)
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(
        stdout.contains("read-only:    off: writes allowed (transaction_read_only = off)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("hooks:        none\n"), "{stdout}");
    assert!(stdout.contains("  password:   from PGMCP_PG_CONNSTRING\n"), "{stdout}");
}

/// Each failure exits 1 and names the problem; the password never shows.
#[test]
fn failures_exit_1_with_the_reason() {
    let server = pg::server();
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("no-such-hook.sh");
    let not_executable = home.path().join("plain.sh");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let path = config(
        home.path(),
        true,
        &[missing.display().to_string(), not_executable.display().to_string()],
    );
    let closed = crate::support::net::free_port();
    let url = format!(
        "postgres://{}:{}@127.0.0.1:{closed}/postgres",
        server.admin_user(),
        server.admin_password()
    );
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("check")
        .env("PGMCP_PG_CONNSTRING", &url)
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 1);
    let refused = format!("cannot reach the database: could not connect to 127.0.0.1:{closed}: Connection refused");
    assert!(stdout.contains(&format!("  FAILED:     {refused}")), "{stdout}");
    assert!(
        stdout.contains("read-only:    on (not verified: no connection)"),
        "{stdout}"
    );
    assert!(stdout.contains("result:       3 problem(s)\n"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "  - before_query hook {}: not executable (chmod +x {})",
            not_executable.display(),
            not_executable.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  - before_query hook {}: not found", missing.display())),
        "{stdout}"
    );
    assert!(!stdout.contains(server.admin_password()), "{stdout}");
}

#[test]
fn an_invalid_config_exits_2_naming_the_field() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"connection": {"sslmode": "sometimes"}, "query": {"default_timeout_seconds": 1, "list_tables_timeout_seconds": 1, "describe_table_timeout_seconds": 1}}"#,
    )
    .unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(&format!(
            "pgmcp: config {}: connection.sslmode: unknown sslmode \"sometimes\"",
            path.display()
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A config file with a mistake a person makes by hand: `check` names the
/// file, the field by its path, what it should hold in words and what it
/// holds; or the line and column where the text stops being JSON.
#[test]
fn mistakes_in_the_file_are_named_in_words() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("bad.json");
    for (text, expected) in [
        (
            r#"{"query": {"max_rows": "500"}}"#,
            "query.max_rows: expected a whole number, found the text \"500\"",
        ),
        (
            r#"{"connection": {"port": -5432}}"#,
            "connection.port: expected a whole number from 0 to 65535, found -5432",
        ),
        (
            r#"{"query": {"max_rowz": 100}}"#,
            "query.max_rowz: unknown field: did you mean max_rows?",
        ),
        (
            r#"{"server": {"allowed_origins": ["https://app.example.com", 8080]}}"#,
            "server.allowed_origins[1]: expected text, found 8080",
        ),
        (
            r#"{"server": {"read_only": "yes"}}"#,
            "server.read_only: expected true or false, found the text \"yes\"",
        ),
        (
            "{\n  \"server\": {\"read_only\": true},\n  \"query\": {\"max_rows\": 100,}\n}\n",
            "line 3, column 29: not valid JSON: a comma before } or ] (JSON allows none there)",
        ),
    ] {
        let (code, stderr) = check_config(home.path(), &path, text);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert_eq!(
            stderr.lines().next(),
            Some(format!("pgmcp: config {}: {expected}", path.display()).as_str()),
            "{text}"
        );
        for rust in ["i64", "u16", "invalid type", "struct Raw", "expected `"] {
            assert!(!stderr.contains(rust), "{text}: {stderr}");
        }
    }
}

/// An SQLite file: what SQLite itself reports, with read-only mode read back
/// from the connection (`PRAGMA query_only`), and a missing file as a failure.
#[test]
fn sqlite_files_are_checked_too() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("shop.db");
    rusqlite::Connection::open(&data)
        .unwrap()
        .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        .unwrap();
    for (read_only, verdict) in [
        (true, "read-only:    on (verified: PRAGMA query_only = on)\n"),
        (false, "read-only:    off: writes allowed (PRAGMA query_only = off)\n"),
    ] {
        let path = config(home.path(), read_only, &[]);
        let out = pgmcp(home.path())
            .arg("--config")
            .arg(&path)
            .arg("--database")
            .arg(format!("sqlite://{}", data.display()))
            .arg("check")
            .output()
            .unwrap();
        let stdout = crate::support::stdout_of(&out, 0);
        assert!(
            stdout.contains(&format!(
                "database:     SQLite file {} (from --database)\n",
                data.display()
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains("  engine:     SQLite 3.") && stdout.contains("(journal_mode delete)"),
            "{stdout}"
        );
        assert!(stdout.contains(verdict), "{stdout}");
        assert!(!stdout.contains("TLS:"), "{stdout}");
    }
    let out = pgmcp(home.path())
        .args(["--database", "sqlite:missing.db", "check"])
        .current_dir(home.path())
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 1);
    assert!(
        stdout.contains("FAILED:     Database not found: missing.db"),
        "{stdout}"
    );
    assert!(!home.path().join("missing.db").exists());
}

/// A config `database` that is a connection string written where a file
/// URL's path goes, or one pgmcp does not read: `check` names it without
/// its password, in what it shows of the database and in the failure.
#[test]
fn check_shows_a_config_database_without_its_password() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config.json");
    for (database, shown) in [
        (
            "sqlite:/u:ChkSecretAA@h/missing.db",
            "Database not found: /***@h/missing.db",
        ),
        (
            "sqlite:u:ChkSecretAA@h/missing.db",
            "Database not found: ***@h/missing.db",
        ),
        ("postgresql:/u:ChkSecretAA@h/db", "the config's \"database\""),
        ("POSTGRESQL://u:ChkSecretAA@h/db", "the config's \"database\""),
    ] {
        std::fs::write(&config, json!({ "database": database }).to_string()).unwrap();
        let out = pgmcp(home.path())
            .arg("--config")
            .arg(&config)
            .arg("check")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_ne!(out.status.code(), Some(0), "{database}: {said}");
        assert!(said.contains(shown), "{database}: no {shown:?} in: {said}");
        assert!(!said.contains("ChkSecretAA"), "{database}: {said}");
    }
}

/// `./.pgmcp/config.json` is never read unless named; `check` says so, as a
/// warning that leaves the exit code alone.
#[test]
fn an_ignored_working_directory_config_is_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let local = home.path().join(".pgmcp");
    std::fs::create_dir(&local).unwrap();
    config(&local, false, &[]);
    let check = |named: bool| {
        let mut cmd = pgmcp(home.path());
        if named {
            cmd.args(["--config", ".pgmcp/config.json"]);
        }
        let out = cmd.args(["--database", "sqlite::memory:", "check"]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        stdout
    };
    let stdout = check(false);
    assert!(
        stdout.contains(
            "config file:  none found; using built-in defaults\n\
             WARNING:      .pgmcp/config.json is ignored: pgmcp never reads a config from the working directory"
        ) && stdout.contains("pass --config .pgmcp/config.json"),
        "{stdout}"
    );
    assert!(stdout.contains("result:       OK (1 warning, above)"), "{stdout}");
    let stdout = check(true);
    assert!(!stdout.contains("WARNING"), "{stdout}");
    assert!(stdout.contains("config file:  .pgmcp/config.json\n"), "{stdout}");
}

/// What a desktop bundle passes as variables: a database file told apart by
/// its header, read-only mode and the row cap over the config, and empty
/// strings for the settings left empty, which count as unset.
#[test]
fn settings_a_bundle_passes_through_the_environment() {
    let home = tempfile::tempdir().unwrap();
    // A real SQLite file under a name that says nothing about its kind.
    let data = home.path().join("shop.data");
    std::fs::copy(format!("{}/fixtures/demo.db", env!("CARGO_MANIFEST_DIR")), &data).unwrap();
    let data = data.to_str().unwrap();
    let config = home.path().join("c.json");
    std::fs::write(&config, r#"{"server": {"read_only": true}, "query": {"max_rows": 20}}"#).unwrap();
    let run = |vars: &[(&str, &str)], args: &[&str]| {
        let mut cmd = pgmcp(home.path());
        cmd.arg("--config").arg(&config).args(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };

    let out = run(
        &[
            ("PGMCP_DATABASE_FILE", data),
            ("PGMCP_READ_ONLY", "false"),
            ("PGMCP_MAX_ROWS", "3"),
        ],
        &["check"],
    );
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(
        stdout.contains(&format!(
            "database:     SQLite file {data} (from PGMCP_DATABASE_FILE)\n"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("environment:  PGMCP_READ_ONLY=false (server.read_only), PGMCP_MAX_ROWS=3 (query.max_rows)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("read-only:    off: writes allowed"), "{stdout}");

    let rows = |vars: &[(&str, &str)]| {
        let out = run(vars, &["query", "SELECT id FROM customers"]);
        assert!(
            out.status.success(),
            "{vars:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        json["returned_rows"].as_u64().unwrap()
    };
    assert_eq!(rows(&[("PGMCP_DATABASE_FILE", data), ("PGMCP_MAX_ROWS", "3")]), 3);
    // Empty: the config's 20 applies.
    assert_eq!(rows(&[("PGMCP_DATABASE_FILE", data), ("PGMCP_MAX_ROWS", "")]), 20);

    let write = "CREATE TABLE t (x int)";
    let out = run(
        &[("PGMCP_DATABASE_FILE", data), ("PGMCP_READ_ONLY", "")],
        &["query", write],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "empty is unset: the config's read-only mode holds"
    );
    let out = run(
        &[("PGMCP_DATABASE_FILE", data), ("PGMCP_READ_ONLY", "false")],
        &["query", write],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Refused, naming the variable (and the path).
    let missing = home.path().join("nope.db");
    let not_a_db = config.to_str().unwrap();
    let cases = [
        (vec![("PGMCP_MAX_ROWS", "abc")], "pgmcp: PGMCP_MAX_ROWS: \"abc\" is not a whole number greater than 0\n".to_owned()),
        (vec![("PGMCP_MAX_ROWS", "0")], "pgmcp: PGMCP_MAX_ROWS: \"0\" is not a whole number greater than 0\n".to_owned()),
        (vec![("PGMCP_READ_ONLY", "no")], "pgmcp: PGMCP_READ_ONLY: \"no\" is not true or false\n".to_owned()),
        (
            vec![("PGMCP_DATABASE_FILE", missing.to_str().unwrap())],
            format!("pgmcp: PGMCP_DATABASE_FILE: no file at {}\n", missing.display()),
        ),
        (
            vec![("PGMCP_DATABASE_FILE", not_a_db)],
            format!(
                "pgmcp: PGMCP_DATABASE_FILE: {not_a_db} is neither an SQLite nor a DuckDB database file (its first bytes say neither)\n"
            ),
        ),
        (
            vec![("PGMCP_DATABASE_FILE", data), ("PGMCP_PG_CONNSTRING", "host=db")],
            "pgmcp: PGMCP_DATABASE_FILE and PGMCP_PG_CONNSTRING: both are set, and each names a database: keep one and leave the other empty\n".to_owned(),
        ),
        (
            vec![("PGMCP_DATABASE_FILE", data), ("PGMCP_DATABASE", "sqlite::memory:")],
            "pgmcp: PGMCP_DATABASE_FILE and PGMCP_DATABASE: both are set, and each names a database: keep one and leave the other empty\n".to_owned(),
        ),
    ];
    for (vars, expected) in cases {
        let out = run(&vars, &["check"]);
        assert_eq!(out.status.code(), Some(2), "{vars:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{vars:?}");
    }
    // --database wins over PGMCP_DATABASE_FILE.
    let out = run(
        &[("PGMCP_DATABASE_FILE", data)],
        &["--database", "sqlite::memory:", "query", "SELECT 1 AS one"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Nothing names a database and PostgreSQL's defaults lead nowhere: `check`
/// says so, and what to set, and exits 1 (something failed, as `--help`
/// says; 2 is for an invalid config, and this one is fine), whether or not
/// the defaults could be tried.
#[test]
fn check_says_when_no_database_is_given() {
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path()).arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pgmcp: no database given: name one with --database URL, or set PGMCP_DATABASE (a URL), \
         PGMCP_DATABASE_FILE (an SQLite or DuckDB file) or PGMCP_PG_CONNSTRING (a PostgreSQL connection), \
         or the config's \"database\" or \"connection\" section\n"
    );
    // --help says the same.
    let help = pgmcp(home.path()).args(["check", "--help"]).output().unwrap();
    let help = crate::support::stdout_of(&help, 0);
    assert!(help.contains("1 when something failed (no database given,"), "{help}");
    // With a user name the defaults can be tried; their failure says the same.
    let out = pgmcp(home.path())
        .env("USER", "nobody_here")
        .env("PGMCP_DATABASE", "")
        .arg("check")
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 1);
    assert!(
        stdout.contains("FAILED:     no database given: name one with --database URL")
            && stdout.contains("(PostgreSQL's defaults were tried: "),
        "{stdout}"
    );
}

/// Which role queries run as, and why, for each way of setting it up: the
/// opt-out runs as the superuser login (and warns, naming the way back),
/// read-write mode runs as the login, an ordinary login runs as itself.
#[test]
fn says_which_role_queries_run_as_and_why() {
    let server = pg::server();
    let db = server.database();
    let home = tempfile::tempdir().unwrap();
    let user = server.admin_user();

    let path = config(home.path(), true, &[]);
    with_connection(&path, json!({"read_only_as_login": true}));
    let (code, stdout) = check(home.path(), &path, &db.url);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "  runs as:    role \"{user}\" (the login, with all its rights: connection.read_only_as_login is on)\n"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  fix: remove connection.read_only_as_login (read-only queries then run as pg_read_all_data), or set \
             connection.role to a reader role; `pgmcp check --suggest-role` prints the SQL that creates one\n"
        ),
        "{stdout}"
    );

    let path = config(home.path(), false, &[]);
    let (code, stdout) = check(home.path(), &path, &db.url);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "  runs as:    role \"{user}\" (the login; connection.role is not set, and read-write mode runs as the login)\n"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("  fix: set connection.role to a reader role;"),
        "{stdout}"
    );

    let plain = format!("{}_plain", db.name);
    db.psql(&format!(
        "CREATE ROLE {plain} LOGIN PASSWORD 'pw'; GRANT CONNECT ON DATABASE {} TO {plain};",
        db.name
    ));
    let url = format!("postgres://{plain}:pw@{}:{}/{}", server.host(), server.port(), db.name);
    let path = config(home.path(), true, &[]);
    let (code, stdout) = check(home.path(), &path, &url);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "  runs as:    role \"{plain}\" (the login, which is not a superuser and has no REPLICATION, \
             pg_execute_server_program, pg_read_server_files or pg_write_server_files; connection.role is not set)\n"
        )),
        "{stdout}"
    );
}
