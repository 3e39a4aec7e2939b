//! Connection strings as people paste them, each read the way libpq reads
//! it: `psql` with the same string (and no PG* variables) connects as the
//! same user to the same database with the same settings, or fails where
//! pgmcp fails. A table of URL and key=value forms: passwords with
//! `@ : / ? # % & + =` and spaces, an IPv6 host, several hosts (the first
//! down) with `target_session_attrs`, `options=-c ...`, and `sslmode`.

use std::process::Command;

use crate::support::pg::{self, clear_pg_env, percent_encode};
use crate::support::pgmcp_std;

/// What a session sees of itself, in both tools.
const WHO: &str = "SELECT session_user AS u, current_database() AS d, current_setting('work_mem') AS w, \
                   pg_is_in_recovery() AS r";

/// `psql`'s answer: `u|d|w|r`, or `None` when it could not connect.
fn psql(conn: &str) -> Option<String> {
    let mut cmd = Command::new("psql");
    cmd.args(["-X", "-q", "-A", "-t", "-d", conn, "-c", WHO]);
    clear_pg_env(&mut cmd);
    let out = cmd.output().expect("run psql");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// pgmcp's answer in the same shape, or `None` when it could not connect.
fn pgmcp(home: &std::path::Path, conn: &str) -> (Option<String>, String) {
    let mut cmd = pgmcp_std(home);
    cmd.arg("--database").arg(conn).arg("query").arg(WHO);
    clear_pg_env(&mut cmd);
    let out = cmd.output().expect("run pgmcp");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return (None, stderr);
    }
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pgmcp query prints JSON");
    let row = &doc["rows"][0];
    let r = if row["r"] == serde_json::json!(true) { "t" } else { "f" };
    (
        Some(format!(
            "{}|{}|{}|{r}",
            row["u"].as_str().unwrap_or_default(),
            row["d"].as_str().unwrap_or_default(),
            row["w"].as_str().unwrap_or_default()
        )),
        stderr,
    )
}

#[test]
fn connection_strings_read_as_psql_reads_them() {
    let server = pg::server();
    let db = server.database();
    let user = format!("odd user {}", db.name);
    let password = "p@ss:w/o?r#d%&+= x'\\";
    db.psql(&format!(
        "CREATE ROLE \"{user}\" LOGIN PASSWORD '{}'; GRANT ALL ON DATABASE {} TO \"{user}\";",
        password.replace('\'', "''"),
        db.name
    ));
    let port = server.port();
    let down = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let name = &db.name;
    let kv_password = format!("'{}'", password.replace('\\', "\\\\").replace('\'', "\\'"));
    let kv_user = format!("'{user}'");
    let url_auth = format!("{}:{}", percent_encode(&user), percent_encode(password));
    let cases: Vec<(&str, String)> = vec![
        (
            "URL, every special character percent-encoded",
            format!("postgresql://{url_auth}@127.0.0.1:{port}/{name}"),
        ),
        (
            "URL, postgres:// and sslmode=disable",
            format!("postgres://{url_auth}@127.0.0.1:{port}/{name}?sslmode=disable"),
        ),
        ("URL, IPv6 host", format!("postgresql://{url_auth}@[::1]:{port}/{name}")),
        (
            "URL, two hosts, the first down",
            format!("postgresql://{url_auth}@127.0.0.1:{down},127.0.0.1:{port}/{name}"),
        ),
        (
            "URL, options=-c in the query",
            format!("postgresql://{url_auth}@127.0.0.1:{port}/{name}?options=-c%20work_mem%3D7MB"),
        ),
        (
            "URL, target_session_attrs=primary",
            format!("postgresql://{url_auth}@127.0.0.1:{down},127.0.0.1:{port}/{name}?target_session_attrs=primary"),
        ),
        (
            "URL, target_session_attrs=standby with no standby",
            format!("postgresql://{url_auth}@127.0.0.1:{port}/{name}?target_session_attrs=standby"),
        ),
        (
            "URL, target_session_attrs=prefer-standby with no standby",
            format!("postgresql://{url_auth}@127.0.0.1:{port}/{name}?target_session_attrs=prefer-standby"),
        ),
        (
            "URL, sslmode=require from a managed service, server without TLS",
            format!("postgresql://{url_auth}@127.0.0.1:{port}/{name}?sslmode=require"),
        ),
        (
            "key=value, quoted user and password",
            format!("host=127.0.0.1 port={port} user={kv_user} password={kv_password} dbname={name}"),
        ),
        (
            "key=value, IPv6 host",
            format!("host=::1 port={port} user={kv_user} password={kv_password} dbname={name}"),
        ),
        (
            "key=value, two hosts with a port each, the first down",
            format!("host=127.0.0.1,127.0.0.1 port={down},{port} user={kv_user} password={kv_password} dbname={name}"),
        ),
        (
            "key=value, options with two settings",
            format!(
                "host=127.0.0.1 port={port} user={kv_user} password={kv_password} dbname={name} \
                 options='-c work_mem=9MB -c geqo=off'"
            ),
        ),
        (
            "key=value, target_session_attrs=read-write",
            format!(
                "host=127.0.0.1,127.0.0.1 port={down},{port} user={kv_user} password={kv_password} dbname={name} \
                 target_session_attrs=read-write"
            ),
        ),
        (
            "key=value, wrong password",
            format!("host=127.0.0.1 port={port} user={kv_user} password=nope dbname={name}"),
        ),
    ];
    let home = tempfile::tempdir().unwrap();
    let mut mismatches = Vec::new();
    let mut connected = 0;
    for (what, conn) in &cases {
        let expected = psql(conn);
        let (got, stderr) = pgmcp(home.path(), conn);
        if got != expected {
            mismatches.push(format!(
                "{what}:\n  psql:  {expected:?}\n  pgmcp: {got:?}\n  {}",
                stderr.trim()
            ));
        }
        connected += usize::from(expected.is_some());
        // Whatever happened, the password is never shown.
        assert!(!stderr.contains("p@ss"), "{what}: {stderr}");
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
    // The table is not all failures: most strings connect.
    assert_eq!(
        connected,
        cases.len() - 3,
        "psql connected with every string but the three that must fail"
    );
}

/// Several hosts, one of them a streaming standby: `target_session_attrs`
/// settles on the same server in pgmcp as in psql, whichever comes first.
#[test]
fn target_session_attrs_picks_what_psql_picks() {
    let primary = pg::private_server();
    let standby = primary.standby();
    let db = primary.database();
    // The standby replays the new database before anyone can connect to it.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while standby.psql(
        "postgres",
        &format!("SELECT count(*) FROM pg_database WHERE datname = '{}'", db.name),
    ) != "1"
    {
        assert!(
            std::time::Instant::now() < until,
            "the standby did not replay the database"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (p, s) = (primary.port(), standby.port());
    let home = tempfile::tempdir().unwrap();
    let cases = [
        ("any", [s, p], Some("t")),
        ("primary", [s, p], Some("f")),
        ("read-write", [s, p], Some("f")),
        ("standby", [p, s], Some("t")),
        ("read-only", [p, s], Some("t")),
        ("prefer-standby", [p, s], Some("t")),
        ("prefer-standby", [p, p], Some("f")),
        ("standby", [p, p], None),
        ("primary", [s, s], None),
    ];
    let mut mismatches = Vec::new();
    for (attrs, [first, second], in_recovery) in cases {
        let conn = format!(
            "host=127.0.0.1,127.0.0.1 port={first},{second} user={} password={} dbname={} target_session_attrs={attrs}",
            primary.admin_user(),
            primary.admin_password(),
            db.name
        );
        let expected = psql(&conn);
        let (got, stderr) = pgmcp(home.path(), &conn);
        let recovery = got.as_deref().and_then(|g| g.rsplit('|').next());
        if got != expected || recovery != in_recovery {
            mismatches.push(format!(
                "{attrs} ({first},{second}):\n  psql:  {expected:?}\n  pgmcp: {got:?} (expected in recovery: {in_recovery:?})\n  {}",
                stderr.trim()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}
