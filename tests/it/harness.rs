//! Tests of the test harness itself: the throwaway PostgreSQL is real, shared,
//! isolated per test, not root, and says what went wrong when SQL fails.

use std::{
    fs,
    os::unix::fs::MetadataExt as _,
    panic::{self, AssertUnwindSafe},
    path::Path,
    process::Command,
};

use crate::support::pg;

/// The message of the panic `f` causes; panics if it doesn't.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = panic::catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .expect("a panic with a message")
}

fn our_uid() -> u32 {
    let out = Command::new("id").arg("-u").output().expect("run id -u");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("id -u prints a number")
}

#[test]
fn shared_server_answers() {
    let server = pg::server();
    assert_eq!(server.psql("postgres", "SELECT 1"), "1");
    assert_eq!(server.psql("postgres", "SELECT current_user"), server.admin_user());
    // Same process, same server.
    assert!(std::ptr::eq(server, pg::server()));
}

#[test]
fn admin_url_reaches_the_server() {
    let server = pg::server();
    let url = server.admin_url();
    assert!(
        url.starts_with(&format!("postgres://{}:", server.admin_user())),
        "{url}"
    );
    // Not `ends_with`: a PGMCP_TEST_DATABASE_URL may carry `?sslmode=...`.
    assert!(url.contains(&format!(":{}/", server.port())), "{url}");
    if let Some(dir) = server.socket_dir() {
        let socket = dir.join(format!(".s.PGSQL.{}", server.port()));
        assert!(socket.exists(), "no socket at {}", socket.display());
        assert!(server.log_path().is_some_and(Path::exists));
    }
}

#[test]
fn databases_are_fresh_and_isolated() {
    let server = pg::server();
    let a = server.database();
    let b = server.database();
    assert_ne!(a.name, b.name);
    assert_eq!(a.psql("SELECT current_database()"), a.name);
    assert!(a.url.contains(&format!("/{}", a.name)), "{}", a.url);
    assert!(a.keyvalue().contains(&format!("dbname={}", a.name)), "{}", a.keyvalue());
    assert!(
        // Quoted when it has to be, so not `password=<it>`.
        a.keyvalue().contains(server.admin_password()),
        "{}",
        a.keyvalue()
    );

    a.psql("CREATE TABLE only_in_a (x int); INSERT INTO only_in_a VALUES (42), (7)");
    assert_eq!(a.psql("SELECT x FROM only_in_a ORDER BY x"), "7\n42");
    assert_eq!(b.psql("SELECT to_regclass('only_in_a') IS NULL"), "t");
    // Fresh: nothing but the system catalogs.
    assert_eq!(
        b.psql("SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
        "0"
    );
}

#[test]
fn psql_failure_says_what_failed() {
    let db = pg::server().database();
    let message = panic_message(|| {
        db.psql("SELECT * FROM no_such_table");
    });
    for needle in [
        "psql failed",
        "command:",
        "status:",
        "stderr:",
        "SELECT * FROM no_such_table",
        r#"relation "no_such_table" does not exist"#,
    ] {
        assert!(message.contains(needle), "no {needle:?} in:\n{message}");
    }
    // The password goes through PGPASSWORD, never the command line.
    assert!(
        !message.contains(pg::server().admin_password()),
        "password leaked:\n{message}"
    );

    // ON_ERROR_STOP: nothing after the failing statement runs.
    let _ = panic_message(|| {
        db.psql("CREATE TABLE t (x int); SELECT 1/0; CREATE TABLE after_error (x int)");
    });
    assert_eq!(db.psql("SELECT to_regclass('t') IS NOT NULL"), "t");
    assert_eq!(db.psql("SELECT to_regclass('after_error') IS NULL"), "t");
}

#[test]
fn server_does_not_run_as_root() {
    let server = pg::server();
    if server.socket_dir().is_none() {
        eprintln!("PGMCP_TEST_DATABASE_URL: not our server, nothing to check");
        return;
    }
    let data = server.psql("postgres", "SELECT current_setting('data_directory')");
    let postmaster_pid = fs::read_to_string(Path::new(&data).join("postmaster.pid"))
        .expect("read postmaster.pid")
        .lines()
        .next()
        .expect("postmaster.pid starts with the pid")
        .to_string();
    let out = Command::new("ps")
        .args(["-o", "uid=", "-p", &postmaster_pid])
        .output()
        .expect("run ps");
    let server_uid: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("ps prints the postmaster's uid");
    let data_owner = fs::metadata(&data).expect("stat the data directory").uid();
    assert_eq!(server_uid, data_owner);
    if our_uid() == 0 {
        assert_ne!(server_uid, 0, "PostgreSQL runs as root");
    } else {
        assert_eq!(server_uid, our_uid());
    }
}

/// Also covers what the shared server relies on at exit: dropping a private
/// server runs the same watchdog, which must stop PostgreSQL and remove its files.
#[test]
fn private_server_stops_starts_restarts_and_cleans_up() {
    let server = pg::private_server();
    assert_ne!(server.port(), pg::server().port());
    let db = server.database();
    db.psql("CREATE TABLE kept (x int); INSERT INTO kept VALUES (1)");

    server.restart();
    assert_eq!(db.psql("SELECT x FROM kept"), "1");

    server.stop();
    let message = panic_message(|| {
        db.psql("SELECT 1");
    });
    assert!(message.contains("Connection refused"), "{message}");

    server.start();
    assert_eq!(db.psql("SELECT x FROM kept"), "1");

    let data = server.psql("postgres", "SELECT current_setting('data_directory')");
    let dir = Path::new(&data)
        .parent()
        .expect("data is in the temp dir")
        .to_path_buf();
    drop(db);
    drop(server);
    assert!(!dir.exists(), "{} is still there", dir.display());
    let out = Command::new("ps").args(["-eo", "args"]).output().expect("run ps");
    let processes = String::from_utf8_lossy(&out.stdout);
    assert!(
        !processes.lines().any(|line| line.contains(&data)),
        "PostgreSQL still runs:\n{processes}"
    );
}
