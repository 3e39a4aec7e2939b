//! Connecting like psql: the password file with libpq's rules, Unix sockets,
//! and the errors a person sees when a connection fails, each without the
//! password. Against the harness's real, password-authenticated PostgreSQL.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use pgmcp::testing::postgres::params;
use pgmcp::{Engine, Error};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::pg::{self, PgServer};
use crate::support::stdio::{McpProcess, tool_text};

/// An engine for `connstring`, the environment being only `env`.
fn engine(connstring: &str, env: &[(&str, &str)]) -> Engine {
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let lookup = move |k: &str| env.iter().find(|(name, _)| name == k).map(|(_, v)| v.clone());
    let mut config = crate::support::engine::builtin_for_server();
    config.query.default_timeout = Duration::from_secs(20);
    let params = params::resolve(Some(connstring), &config.connection, &lookup).expect("resolves");
    Engine::postgres(config, params)
}

async fn session(connstring: &str, env: &[(&str, &str)]) -> Result<pgmcp::SessionReport, Error> {
    let engine = engine(connstring, env);
    let result = engine.session_report(CancellationToken::new()).await;
    engine.close().await;
    result
}

/// `postgres://admin@127.0.0.1:port/postgres`: no password.
fn url_without_password(server: &PgServer) -> String {
    format!(
        "postgres://{}@127.0.0.1:{}/postgres",
        server.admin_user(),
        server.port()
    )
}

fn write_passfile(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn password_file_in_home_pgpassfile_and_passfile() {
    let server = pg::server();
    let home = tempfile::tempdir().unwrap();
    let home_str = home.path().to_str().unwrap();
    let (port, user, pw) = (server.port(), server.admin_user(), server.admin_password());
    // The first line does not match (another port); a wildcard line after it does.
    let good = format!("# pgmcp test\n127.0.0.1:1:*:{user}:wrong\n127.0.0.1:{port}:*:{user}:{pw}\n");
    let pgpass = home.path().join(".pgpass");
    write_passfile(&pgpass, &good, 0o600);
    let r = session(&url_without_password(server), &[("HOME", home_str)])
        .await
        .unwrap();
    assert_eq!(r.password_from, Some(format!("the password file {}", pgpass.display())));

    // PGPASSFILE replaces ~/.pgpass, and the passfile parameter replaces both.
    let other = home.path().join("other.pgpass");
    write_passfile(&other, &format!("*:*:postgres:{user}:{pw}\n"), 0o600);
    write_passfile(&pgpass, "*:*:*:*:wrong\n", 0o600);
    let r = session(
        &url_without_password(server),
        &[("HOME", home_str), ("PGPASSFILE", other.to_str().unwrap())],
    )
    .await
    .unwrap();
    assert_eq!(r.password_from, Some(format!("the password file {}", other.display())));
    let kv = format!(
        "host=127.0.0.1 port={port} user={user} dbname=postgres passfile={}",
        other.display()
    );
    session(&kv, &[("HOME", home_str)]).await.unwrap();

    // A wrong password from the file says where it came from, not what it was.
    let text = session(&url_without_password(server), &[("HOME", home_str)])
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        text,
        format!(
            "cannot reach the database: could not connect to 127.0.0.1:{port}: password authentication failed for user \"{user}\" (SQLSTATE 28P01); the password on line 1 of the password file {} is not the password of role \"{user}\", or there is no role \"{user}\" (with password authentication the server does not say which): correct that line (the first line matching 127.0.0.1:{port}:postgres:{user} is the one used), or check the user name (user in the connection string, connection.user, or PGUSER)",
            pgpass.display()
        )
    );

    // A password given another way wins over the file.
    let r = session(&url_without_password(server), &[("HOME", home_str), ("PGPASSWORD", pw)])
        .await
        .unwrap();
    assert_eq!(r.password_from.as_deref(), Some("PGPASSWORD"));
}

#[tokio::test(flavor = "multi_thread")]
async fn password_file_readable_by_others_is_ignored() {
    let server = pg::server();
    let home = tempfile::tempdir().unwrap();
    let pgpass = home.path().join(".pgpass");
    write_passfile(&pgpass, &format!("*:*:*:*:{}\n", server.admin_password()), 0o644);
    let err = session(
        &url_without_password(server),
        &[("HOME", home.path().to_str().unwrap())],
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "could not connect to 127.0.0.1:{1}: the server asks user \"{2}\" for a password (scram-sha-256), and none was given: the connection string and PGPASSWORD hold none, and the password file {0} has group or world access and was ignored; permissions should be u=rw (0600) or less: chmod 0600 {0}",
            pgpass.display(),
            server.port(),
            server.admin_user()
        )
    );
}

/// A host starting with `/` is the server's Unix-socket directory; the
/// password file matches it by that path.
#[tokio::test(flavor = "multi_thread")]
async fn unix_socket_hosts() {
    let server = pg::server();
    let Some(dir) = server.socket_dir() else {
        return; // PGMCP_TEST_DATABASE_URL: no socket of ours to reach
    };
    let kv = format!(
        "host={} port={} user={} dbname=postgres",
        dir.display(),
        server.port(),
        server.admin_user()
    );
    let r = session(&kv, &[]).await.unwrap();
    assert_eq!(r.endpoint, format!("{}/.s.PGSQL.{}", dir.display(), server.port()));
    assert_eq!(r.encryption, None, "no TLS over a Unix socket, whatever sslmode says");
    let url = format!(
        "postgresql:///postgres?host={}&port={}&user={}&sslmode=require",
        dir.display().to_string().replace('/', "%2F"),
        server.port(),
        server.admin_user()
    );
    session(&url, &[]).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_say_what_to_fix() {
    let server = pg::server();
    let (port, user, pw) = (server.port(), server.admin_user(), server.admin_password());
    // A port where nothing listens.
    let closed = crate::support::net::free_port();
    // A port that accepts connections (the kernel does, into the backlog) but
    // never answers: the connect timeout must end the wait.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let cases = [
        (
            format!("postgres://{user}:{pw}@127.0.0.1:{closed}/postgres"),
            format!(
                "cannot reach the database: could not connect to 127.0.0.1:{closed}: Connection refused (os error 111); nothing accepts connections there: is PostgreSQL running on that host, and on port {closed}? Check the host and port (the connection string, connection.host and connection.port, PGHOST, PGPORT); a server on another machine must also listen on its network address (listen_addresses)"
            ),
        ),
        (
            format!("postgres://{user}:{pw}@127.0.0.1:{silent_port}/postgres?connect_timeout=2"),
            format!(
                "cannot reach the database: could not connect to 127.0.0.1:{silent_port}: timed out after 2 s (connect_timeout); check the host and that PostgreSQL accepts TCP connections there"
            ),
        ),
        (
            format!("postgres://{user}:not-the-password@127.0.0.1:{port}/postgres"),
            format!(
                "cannot reach the database: could not connect to 127.0.0.1:{port}: password authentication failed for user \"{user}\" (SQLSTATE 28P01); the password in PGMCP_PG_CONNSTRING is not the password of role \"{user}\", or there is no role \"{user}\" (with password authentication the server does not say which): correct it in PGMCP_PG_CONNSTRING, or check the user name (user in the connection string, connection.user, or PGUSER)"
            ),
        ),
        (
            format!("postgres://{user}:{pw}@127.0.0.1:{port}/nope"),
            format!(
                "cannot reach the database: could not connect to 127.0.0.1:{port}: database \"nope\" does not exist (SQLSTATE 3D000); the login was accepted, but that server has no such database: check the name (dbname or /name in the connection string, connection.dbname, or PGDATABASE; names are case-sensitive): `psql -l` lists the databases"
            ),
        ),
        (
            format!("postgres://{user}@127.0.0.1:{port}/postgres"),
            format!(
                "could not connect to 127.0.0.1:{port}: the server asks user \"{user}\" for a password (scram-sha-256), and none was given: the connection string and PGPASSWORD hold none, and there is no password file to read (HOME is not set): set PGPASSWORD, or name a password file with PGPASSFILE holding the line 127.0.0.1:{port}:postgres:{user}:<password>"
            ),
        ),
    ];
    for (url, expected) in cases {
        let text = session(&url, &[]).await.unwrap_err().to_string();
        assert_eq!(text, expected, "{url}");
        assert!(!text.contains(pw) && !text.contains("not-the-password"), "{text}");
    }
    drop(silent);
}

/// `home/.pgpass` (0600) with the test server's admin password.
fn admin_passfile(home: &Path, server: &PgServer) {
    let line = format!(
        "127.0.0.1:{}:*:{}:{}\n",
        server.port(),
        server.admin_user(),
        server.admin_password()
    );
    write_passfile(&home.join(".pgpass"), &line, 0o600);
}

/// `pgmcp query` finds the password in ~/.pgpass, as psql would.
#[test]
fn the_binary_reads_the_password_file() {
    let server = pg::server();
    let home = tempfile::tempdir().unwrap();
    admin_passfile(home.path(), server);
    let out = Command::cargo_bin("pgmcp")
        .unwrap()
        .env_clear()
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("PGMCP_PG_CONNSTRING", url_without_password(server))
        .current_dir(home.path())
        .args(["query", "SELECT 1 AS one"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["rows"], json!([{"one": 1}]));
}

/// `serve` starts while PostgreSQL is down, reports the connection error on
/// each call, and answers once the database is back, without a restart.
#[test]
fn serve_recovers_when_the_database_comes_back() {
    let server = pg::private_server();
    server.stop();
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::writable_config::write_config(dir.path(), "");
    let url = format!(
        "postgres://{}:{}@127.0.0.1:{}/postgres",
        server.admin_user(),
        server.admin_password(),
        server.port()
    );
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &url)]);
    mcp.initialize();
    let down = mcp.call_tool("query", json!({"sql": "SELECT 1 AS n"}));
    assert_eq!(down["isError"], true, "{down}");
    assert!(
        tool_text(&down).starts_with(&format!(
            "cannot reach the database: could not connect to 127.0.0.1:{}",
            server.port()
        )),
        "{down}"
    );
    server.start();
    let up = mcp.call_tool("query", json!({"sql": "SELECT 1 AS n"}));
    assert_ne!(up["isError"], true, "{up}");
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(5)).success());
}

/// A bundle puts `PGPASSWORD=""` in the environment for a password left
/// empty: that is no password, as if unset, so ~/.pgpass still answers; and
/// a `PGMCP_DATABASE_FILE=""` beside a real connection string is unset too.
#[test]
fn empty_variables_are_unset() {
    let server = pg::server();
    let home = tempfile::tempdir().unwrap();
    admin_passfile(home.path(), server);
    let out = crate::support::pgmcp(home.path())
        .env("PGMCP_PG_CONNSTRING", url_without_password(server))
        .env("PGPASSWORD", "")
        .env("PGMCP_DATABASE_FILE", "")
        .env("PGMCP_DATABASE", "")
        .env("PGHOST", "")
        .env("PGSSLMODE", "")
        .arg("check")
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(
        stdout.contains(&format!(
            "  password:   from the password file {}\n",
            home.path().join(".pgpass").display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("(from PGMCP_PG_CONNSTRING)"), "{stdout}");
}

/// What `pgmcp check` and `pgmcp query` say when the connection fails, with
/// `home` as HOME and `env` on top of a clean environment: check's `FAILED`
/// line (exit 1) and query's `error:` line (exit 1), which must say the
/// same.
fn both_fail(home: &Path, env: &[(&str, &str)]) -> String {
    let run = |args: &[&str]| {
        let mut cmd = crate::support::pgmcp(home);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(args).output().unwrap()
    };
    let check = run(&["check"]);
    let stdout = crate::support::stdout_of(&check, 1);
    let failed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  FAILED:     "))
        .unwrap_or_else(|| panic!("no FAILED line:\n{stdout}"))
        .to_owned();
    let query = run(&["query", "SELECT 1"]);
    let stderr = String::from_utf8_lossy(&query.stderr).into_owned();
    assert_eq!(query.status.code(), Some(1), "{stderr}");
    let error = stderr
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error line:\n{stderr}"));
    assert_eq!(error, failed, "check and query word the same failure alike");
    failed
}

/// Each common way a first connection fails, through the real binary: the
/// message says what happened, the likeliest cause (from the SQLSTATE the
/// server sent and the password source that was tried) and what to do
/// next, and never the password.
#[test]
fn connection_errors_name_the_likeliest_cause() {
    let server = pg::server();
    let (port, admin, pw) = (server.port(), server.admin_user(), server.admin_password());
    let home = tempfile::tempdir().unwrap();
    let pgpass = home.path().join(".pgpass");
    let url = |user: &str, db: &str| format!("postgres://{user}@127.0.0.1:{port}/{db}");
    let closed = crate::support::net::free_port();
    let nobody = format!("nobody_{}", std::process::id());

    // No password anywhere, and the server asks for one.
    let text = both_fail(home.path(), &[("PGMCP_PG_CONNSTRING", &url(admin, "postgres"))]);
    assert_eq!(
        text,
        format!(
            "could not connect to 127.0.0.1:{port}: the server asks user \"{admin}\" for a password (scram-sha-256), and none was given: the connection string and PGPASSWORD hold none, and there is no password file {0}: create it with the line 127.0.0.1:{port}:postgres:{admin}:<password>, readable by you alone (chmod 0600 {0}), or set PGPASSWORD",
            pgpass.display()
        )
    );

    // A wrong password, from PGPASSWORD.
    let text = both_fail(
        home.path(),
        &[
            ("PGMCP_PG_CONNSTRING", &url(admin, "postgres")),
            ("PGPASSWORD", "not-the-password"),
        ],
    );
    assert_eq!(
        text,
        format!(
            "cannot reach the database: could not connect to 127.0.0.1:{port}: password authentication failed for user \"{admin}\" (SQLSTATE 28P01); the password in PGPASSWORD is not the password of role \"{admin}\", or there is no role \"{admin}\" (with password authentication the server does not say which): correct PGPASSWORD (it is used before the password file), or check the user name (user in the connection string, connection.user, or PGUSER)"
        )
    );

    // An unknown role: with password authentication the server answers as
    // for a wrong password, and the message says both.
    let text = both_fail(
        home.path(),
        &[("PGMCP_PG_CONNSTRING", &url(&nobody, "postgres")), ("PGPASSWORD", "x")],
    );
    assert!(
        text.contains(&format!(
            "password authentication failed for user \"{nobody}\" (SQLSTATE 28P01); the password in PGPASSWORD is not the password of role \"{nobody}\", or there is no role \"{nobody}\""
        )),
        "{text}"
    );
    // Where the server lets everyone in (the harness's Unix socket: trust),
    // it says the role does not exist, and that is what is blamed.
    if let Some(dir) = server.socket_dir() {
        let kv = format!("host={} port={port} user={nobody} dbname=postgres", dir.display());
        let text = both_fail(home.path(), &[("PGMCP_PG_CONNSTRING", &kv)]);
        assert_eq!(
            text,
            format!(
                "cannot reach the database: could not connect to {}/.s.PGSQL.{port}: role \"{nobody}\" does not exist (SQLSTATE 28000); the user name is wrong, or the login was not created yet: check it (user in the connection string, connection.user, or PGUSER); to create it as a least-privilege login, `pgmcp check --suggest-role --login {nobody}`, connected as a superuser, prints the SQL",
                dir.display()
            )
        );
        assert!(!text.contains("pg_hba"), "{text}");
    }

    // A mistyped database name, with a password file line for the right one:
    // the server asks for the password before it looks at the database.
    write_passfile(&pgpass, &format!("127.0.0.1:{port}:postgres:{admin}:{pw}\n"), 0o600);
    let text = both_fail(home.path(), &[("PGMCP_PG_CONNSTRING", &url(admin, "postgers"))]);
    assert_eq!(
        text,
        format!(
            "could not connect to 127.0.0.1:{port}: the server asks user \"{admin}\" for a password (scram-sha-256), and the password file {0} has no line matching 127.0.0.1:{port}:postgers:{admin}, though line 1 is for another database: is the database name right (dbname or /name in the connection string, connection.dbname, or PGDATABASE)? If it is, add the line 127.0.0.1:{port}:postgers:{admin}:<password> to {0} (the connection string and PGPASSWORD hold none)",
            pgpass.display()
        )
    );

    // A database that does not exist, the password having been accepted.
    write_passfile(&pgpass, &format!("127.0.0.1:{port}:*:{admin}:{pw}\n"), 0o600);
    let text = both_fail(home.path(), &[("PGMCP_PG_CONNSTRING", &url(admin, "no_such_db"))]);
    assert_eq!(
        text,
        format!(
            "cannot reach the database: could not connect to 127.0.0.1:{port}: database \"no_such_db\" does not exist (SQLSTATE 3D000); the login was accepted, but that server has no such database: check the name (dbname or /name in the connection string, connection.dbname, or PGDATABASE; names are case-sensitive): `psql -l` lists the databases"
        )
    );

    // No server on that port.
    let text = both_fail(
        home.path(),
        &[(
            "PGMCP_PG_CONNSTRING",
            &format!("postgres://{admin}@127.0.0.1:{closed}/postgres"),
        )],
    );
    assert!(
        text.starts_with(&format!(
            "cannot reach the database: could not connect to 127.0.0.1:{closed}: Connection refused (os error 111); nothing accepts connections there: is PostgreSQL running on that host, and on port {closed}?"
        )),
        "{text}"
    );
}

/// A password file line one field away from matching is named by its
/// number and the field that differs, never by what it holds: with the
/// user and the password swapped, the differing field is a password, and
/// what `check` and `query` say about a failed connection is also what a
/// tool answer tells the MCP client. The same for a file that is no password
/// file at all (a root's `PGPASSFILE` naming any private colon-separated
/// file): nothing of it is echoed.
#[test]
fn a_password_file_line_one_field_away_is_named_not_quoted() {
    let server = pg::server();
    let (port, admin) = (server.port(), server.admin_user());
    let home = tempfile::tempdir().unwrap();
    let url = format!("postgres://{admin}@127.0.0.1:{port}/postgres");
    // (file name, its text, the secrets it holds, the line and field named)
    let swapped = format!("# mine\n127.0.0.1:{port}:*:NearPw2Swapped:{admin}\n");
    let shadow = format!("root:$6$ShadowHashAA$x:19000:0:99999:7:::\nShadowHostBB:{port}:*:{admin}:ShadowPwCC\n");
    let cases = [
        (
            ".pgpass",
            swapped.as_str(),
            &["NearPw2Swapped"][..],
            "line 2 is for another user",
        ),
        (
            "shadow",
            shadow.as_str(),
            &["ShadowHashAA", "ShadowHostBB", "ShadowPwCC"][..],
            "line 2 is for another host",
        ),
    ];
    for (name, text, secrets, named) in cases {
        let path = home.path().join(name);
        write_passfile(&path, text, 0o600);
        let path_str = path.to_str().unwrap();
        for args in [&["check"][..], &["query", "SELECT 1"][..]] {
            let out = crate::support::pgmcp(home.path())
                .env("PGMCP_PG_CONNSTRING", &url)
                .env("PGPASSFILE", path_str)
                .args(args)
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.status.code(), Some(1), "{args:?}: {all}");
            assert!(
                all.contains(&format!("the password file {path_str} has no line matching")),
                "{args:?}: {all}"
            );
            assert!(all.contains(named), "{args:?}: {all}");
            for secret in secrets {
                assert!(!all.contains(secret), "{args:?} shows {secret}: {all}");
            }
        }
    }
}

/// A server whose pg_hba.conf has no line for the login: the message says
/// so (not "wrong password", not "no such role"), and gives the line to add.
#[test]
fn a_pg_hba_refusal_gives_the_line_to_add() {
    let server = pg::private_server();
    let admin = server.admin_user().to_owned();
    server.psql("postgres", "CREATE ROLE hba_agent LOGIN PASSWORD 'agent-pw'");
    server.set_hba(&format!(
        "local all all trust\nhost all {admin} 127.0.0.1/32 scram-sha-256\nhost all {admin} ::1/128 scram-sha-256\n"
    ));
    let home = tempfile::tempdir().unwrap();
    let url = format!("postgres://hba_agent@127.0.0.1:{}/postgres", server.port());
    let text = both_fail(
        home.path(),
        &[("PGMCP_PG_CONNSTRING", &url), ("PGPASSWORD", "agent-pw")],
    );
    // The server's own words end in "no encryption" (PostgreSQL 14 and
    // later) or "SSL off" (13).
    let (said, advice) = text
        .split_once(" (SQLSTATE 28000); ")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        said.starts_with(&format!(
            "cannot reach the database: could not connect to 127.0.0.1:{}: no pg_hba.conf entry for host \"127.0.0.1\", user \"hba_agent\", database \"postgres\", ",
            server.port()
        )),
        "{text}"
    );
    assert_eq!(
        advice,
        "the server's pg_hba.conf has no line that lets user \"hba_agent\" into database \"postgres\" from this address: a superuser adds a line that lets it in (such as `host   postgres   hba_agent   127.0.0.1/32   scram-sha-256`) above any line that would match first, and reloads the server (SELECT pg_reload_conf(); SHOW hba_file says where the file is)"
    );
    assert!(!text.contains("agent-pw"), "{text}");
}
