//! Read-only mode with a login that can do more than read: without
//! `connection.role`, a superuser login (or one with `REPLICATION`, or a
//! member of `pg_execute_server_program`, `pg_read_server_files` or
//! `pg_write_server_files`) runs read-only queries as `pg_read_all_data`, so
//! code the guard cannot look into (a vouched-for function here) cannot run a
//! program, write or read a server file or make a replication slot; it still
//! reads every table. Before PostgreSQL 14 there is no `pg_read_all_data`:
//! such a login is refused with what to do. The opt-out runs as the login;
//! read-write mode and an ordinary login run as the login.
//!
//! The harness's login is a superuser. Roles belong to the cluster: every
//! name here carries the test database's name.

use std::time::Duration;

use pgmcp::testing::postgres::{PgBackend, PgOptions, params};
use pgmcp::{Config, Engine, FunctionPattern, TableFilter};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::engine::{err_text, rows, run, writable};
use crate::support::pg::{self, TestDb};
use crate::support::unguarded::exec_unguarded;

/// An engine on `db` with built-in defaults, adjusted by `edit`: unlike
/// `support::engine::engine_for`, without the opt-out on any version.
fn engine_for(db: &TestDb, edit: impl FnOnce(&mut Config)) -> Engine {
    crate::support::engine::engine_for(db, |c| {
        c.connection.read_only_as_login = false;
        edit(c);
    })
}

/// `mine` (the login's), `theirs` (another role's, not granted to anyone)
/// with an enum column, so results take the type lookup path too.
fn tables(db: &TestDb) -> String {
    let owner = format!("{}_owner", db.name);
    db.psql(&format!(
        "CREATE TABLE mine (id int PRIMARY KEY); INSERT INTO mine VALUES (1);
         CREATE ROLE {owner} NOLOGIN;
         CREATE TYPE mood AS ENUM ('ok', 'sad');
         CREATE TABLE theirs (m mood); INSERT INTO theirs VALUES ('sad');
         ALTER TABLE theirs OWNER TO {owner}; ALTER TYPE mood OWNER TO {owner};
         REVOKE ALL ON theirs FROM PUBLIC;"
    ));
    owner
}

/// An engine on `db` as `login` (password `pw`), with `edit`.
fn engine_as(db: &TestDb, login: &str, edit: impl FnOnce(&mut Config)) -> Engine {
    let server = pg::server();
    let url = format!("postgres://{login}:pw@{}:{}/{}", server.host(), server.port(), db.name);
    let mut config = Config::builtin();
    edit(&mut config);
    let params = params::resolve(Some(&url), &config.connection, &|_| None).unwrap();
    Engine::postgres(config, params)
}

fn as_login(c: &mut Config) {
    c.connection.read_only_as_login = true;
}

/// What PostgreSQL 13 answers a read-only call of a login that can do more
/// than read, `why` saying what it can do.
fn refused_without_reader(why: &str) -> String {
    format!(
        "cannot run as pg_read_all_data: role \"pg_read_all_data\" does not exist (SQLSTATE 22023); {why}, so \
         read-only mode runs queries as pg_read_all_data rather than with the login's rights, and this server has \
         no pg_read_all_data (PostgreSQL 14 added it): set connection.role to a role that only reads (`pgmcp check \
         --suggest-role` prints the SQL that creates one), or set connection.read_only_as_login to true to run them \
         as the login, with all its rights"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_superusers_read_only_queries_run_as_a_reader() {
    let server = pg::server();
    let db = server.database();
    tables(&db);
    let admin = server.admin_user().to_owned();
    let engine = engine_for(&db, |_| {});

    if db.major() < 14 {
        // Never the superuser, silently: every call is refused, catalog
        // calls too, with what to do.
        let expected = refused_without_reader(&format!("the login \"{admin}\" is a superuser"));
        assert_eq!(err_text(run(&engine, "SELECT 1").await), expected);
        let e = err_text(
            engine
                .list_tables(&TableFilter::default(), CancellationToken::new())
                .await,
        );
        assert_eq!(e, expected);
    } else {
        assert_eq!(
            rows(&engine, "SELECT current_user AS r, session_user AS l").await,
            json!([{"r": "pg_read_all_data", "l": admin}])
        );
        // It reads every table: the login's, and another role's it was
        // granted nothing on.
        assert_eq!(
            rows(
                &engine,
                "SELECT (SELECT id FROM mine) AS id, (SELECT m FROM theirs) AS m"
            )
            .await,
            json!([{"id": 1, "m": "sad"}])
        );
        let out = run(&engine, "SELECT m FROM theirs").await.unwrap();
        assert_eq!(serde_json::to_value(&out.columns).unwrap()[0]["type"], "mood");
        let list = engine
            .list_tables(&TableFilter::default(), CancellationToken::new())
            .await
            .unwrap();
        let names: Vec<String> = list.tables.iter().map(|t| t.name.clone()).collect();
        assert_eq!(names, ["mine", "theirs"]);
        let theirs = engine
            .describe_table("theirs", None, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(theirs.name, "theirs");
        // Still the reader on the pooled connection's next call.
        assert_eq!(
            rows(&engine, "SELECT current_user AS r").await,
            json!([{"r": "pg_read_all_data"}])
        );
    }

    // The opt-out runs as the login, on every version.
    let login = engine_for(&db, as_login);
    assert_eq!(rows(&login, "SELECT current_user AS r").await, json!([{"r": admin}]));
    // Read-write mode is the login's, as before: it was given writes on purpose.
    let write = engine_for(&db, writable);
    assert_eq!(rows(&write, "SELECT current_user AS r").await, json!([{"r": admin}]));
}

/// Functions of the login's that reach outside the database, vouched for so
/// the guard lets them run (standing for any code the guard misses): each is
/// refused by PostgreSQL, and nothing happened on the server.
#[tokio::test(flavor = "multi_thread")]
async fn code_the_guard_misses_cannot_reach_outside_the_database() {
    let server = pg::server();
    let db = server.database();
    let program_made = format!("/tmp/pgmcp-{}-program", db.name);
    let file_written = format!("/tmp/pgmcp-{}-file", db.name);
    let slot = format!("{}_slot", db.name);
    db.psql(&format!(
        "CREATE FUNCTION run_program() RETURNS int LANGUAGE plpgsql AS $$
         BEGIN COPY (SELECT 1) TO PROGRAM 'cat > /dev/null; touch {program_made}'; RETURN 1; END $$;
         CREATE FUNCTION write_file() RETURNS int LANGUAGE plpgsql AS $$
         BEGIN COPY (SELECT 'x') TO '{file_written}'; RETURN 1; END $$;
         CREATE FUNCTION read_file() RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.pg_read_file('PG_VERSION') $$;
         CREATE FUNCTION make_slot() RETURNS int LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_catalog.pg_create_physical_replication_slot('{slot}'); RETURN 1; END $$;"
    ));
    let vouched = |c: &mut Config| {
        for f in [
            "public.run_program()",
            "public.write_file()",
            "public.read_file()",
            "public.make_slot()",
        ] {
            c.protection.read_only_functions.push(FunctionPattern::new(f));
        }
    };
    let missing = |path: &str| db.psql(&format!("SELECT pg_catalog.pg_stat_file('{path}', true) IS NULL"));
    let engine = engine_for(&db, vouched);
    // Each is PostgreSQL's privilege check (insufficient_privilege), worded
    // differently from version to version.
    let cases = [
        ("SELECT run_program()", "external program"),
        ("SELECT write_file()", "COPY to a file"),
        ("SELECT read_file()", "permission denied for function pg_read_file"),
        ("SELECT make_slot()", "replication"),
    ];
    for (sql, refusal) in cases {
        let e = err_text(run(&engine, sql).await);
        if db.major() < 14 {
            let prefix = "cannot run as pg_read_all_data: role \"pg_read_all_data\" does not exist";
            assert!(e.starts_with(prefix), "{sql}: {e}");
        } else {
            assert!(e.contains(refusal) && e.contains("(SQLSTATE 42501)"), "{sql}: {e}");
        }
    }
    assert_eq!(missing(&program_made), "t", "the program ran");
    assert_eq!(missing(&file_written), "t", "the file was written");
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{slot}'"
        )),
        "0"
    );

    // The same function as the login (the opt-out) does run the program
    // (which reads what COPY sends, or COPY may write to a closed pipe):
    // the plant works, and the reader is what stopped it.
    let login = engine_for(&db, |c| {
        vouched(c);
        as_login(c);
    });
    run(&login, "SELECT run_program()").await.unwrap();
    assert_eq!(missing(&program_made), "f");
    db.psql(&format!(
        "CREATE TEMP TABLE out (x text); COPY out FROM PROGRAM 'rm -f {program_made}'"
    ));
    assert_eq!(missing(&program_made), "t");
}

/// The limit of the switch: PostgreSQL decides who may `SET ROLE` by the
/// login, so code written to switch back regains a superuser login's rights.
/// Only a login that is not a superuser closes that (README, Least privilege).
#[tokio::test(flavor = "multi_thread")]
async fn a_function_that_switches_back_is_the_limit() {
    let server = pg::server();
    let db = server.database();
    if db.major() < 14 {
        // Nothing runs as the superuser there without the opt-out.
        let e = err_text(run(&engine_for(&db, |_| {}), "SELECT 1").await);
        assert!(e.starts_with("cannot run as pg_read_all_data"), "{e}");
        return;
    }
    db.psql(
        "CREATE FUNCTION back() RETURNS text LANGUAGE plpgsql AS $$
         BEGIN RESET ROLE; RETURN current_user; END $$;",
    );
    let engine = engine_for(&db, |c| {
        c.protection
            .read_only_functions
            .push(FunctionPattern::new("public.back()"))
    });
    assert_eq!(
        rows(&engine, "SELECT current_user AS before, back() AS after").await,
        json!([{"before": "pg_read_all_data", "after": server.admin_user()}])
    );
    // The guard refuses the switch where it can see it.
    for sql in [
        "RESET ROLE",
        "SET ROLE NONE",
        "SELECT pg_catalog.set_config('role', 'none', false)",
    ] {
        match run(&engine, sql).await {
            Err(pgmcp::Error::Guard(_)) => {}
            other => panic!("{sql}: {other:?}"),
        }
    }
}

/// Logins that are not superusers: one with a power that reaches outside
/// runs as the reader once it may switch to it (and is refused with what to
/// do until then); an ordinary one, though it owns tables, runs as itself,
/// and the read-only transaction stops its writes.
#[tokio::test(flavor = "multi_thread")]
async fn other_logins() {
    let server = pg::server();
    let db = server.database();
    let n = &db.name;
    let (prog, repl, via, mid, plain) = (
        format!("{n}_prog"),
        format!("{n}_repl"),
        format!("{n}_via"),
        format!("{n}_mid"),
        format!("{n}_plain"),
    );
    db.psql(&format!(
        "CREATE ROLE {prog} LOGIN PASSWORD 'pw'; GRANT pg_execute_server_program TO {prog};
         CREATE ROLE {repl} LOGIN REPLICATION PASSWORD 'pw';
         CREATE ROLE {mid} NOLOGIN NOINHERIT; GRANT pg_write_server_files TO {mid};
         CREATE ROLE {via} LOGIN PASSWORD 'pw'; GRANT {mid} TO {via};
         CREATE ROLE {plain} LOGIN PASSWORD 'pw';
         GRANT CONNECT ON DATABASE {n} TO {prog}, {repl}, {via}, {plain};
         GRANT CREATE ON SCHEMA public TO {plain};
         CREATE TABLE owned (x int); ALTER TABLE owned OWNER TO {plain};
         CREATE FUNCTION put() RETURNS int LANGUAGE sql AS $$ INSERT INTO owned VALUES (1) RETURNING x $$;"
    ));
    for (login, why) in [
        (
            &prog,
            format!("the login \"{prog}\" is a member of pg_execute_server_program"),
        ),
        (&repl, format!("the login \"{repl}\" has REPLICATION")),
        (
            &via,
            format!("the login \"{via}\" is a member of pg_write_server_files"),
        ),
    ] {
        let engine = engine_as(&db, login, |_| {});
        let e = err_text(run(&engine, "SELECT current_user").await);
        if db.major() < 14 {
            assert_eq!(e, refused_without_reader(&why));
            continue;
        }
        assert_eq!(
            e,
            format!(
                "cannot run as pg_read_all_data: permission denied to set role \"pg_read_all_data\" (SQLSTATE 42501); \
                 {why}, so read-only mode runs queries as pg_read_all_data rather than with the login's rights, and \
                 the login may not switch to it: as a superuser run GRANT pg_read_all_data TO \"{login}\", or set \
                 connection.role to a role that only reads (`pgmcp check --suggest-role` prints the SQL that creates \
                 one), or set connection.read_only_as_login to true to run them as the login, with all its rights"
            )
        );
        // Doing what it says works without a restart.
        db.psql(&format!("GRANT pg_read_all_data TO {login}"));
        assert_eq!(
            rows(&engine, "SELECT current_user AS r").await,
            json!([{"r": "pg_read_all_data"}]),
            "{login}"
        );
        let as_itself = engine_as(&db, login, as_login);
        assert_eq!(
            rows(&as_itself, "SELECT current_user AS r").await,
            json!([{"r": login}])
        );
    }

    // An owner with CREATE on a schema: itself, and READ ONLY refuses the
    // write its own function tries.
    let engine = engine_as(&db, &plain, |c| {
        c.protection
            .read_only_functions
            .push(FunctionPattern::new("public.put()"))
    });
    assert_eq!(rows(&engine, "SELECT current_user AS r").await, json!([{"r": plain}]));
    let e = err_text(run(&engine, "SELECT put()").await);
    assert!(e.starts_with("cannot execute INSERT in a read-only transaction"), "{e}");
    assert_eq!(db.psql("SELECT count(*) FROM owned"), "0");
}

/// No guard at all, the statements sent straight to the backend in
/// read-only mode: what the READ ONLY transaction lets a superuser do
/// (`guard_attacks::without_the_guard_...`), the reader cannot.
#[tokio::test(flavor = "multi_thread")]
async fn without_the_guard_the_reader_still_stops_a_superusers_side_effects() {
    let server = pg::server();
    let db = server.database();
    let program_made = format!("/tmp/pgmcp-{}-unguarded", db.name);
    let params = params::resolve(Some(&db.url), &Default::default(), &|_| None).unwrap();
    let backend = PgBackend::new(
        params,
        PgOptions {
            read_only: true,
            max_conn_lifetime: Duration::from_secs(60),
            max_conn_idle: Duration::from_secs(60),
            role: None,
            read_only_as_login: false,
        },
    );
    let exec = async |sql: &str| {
        exec_unguarded(&backend, sql)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    for sql in [
        format!("COPY (SELECT 1) TO PROGRAM 'touch {program_made}'"),
        format!("COPY (SELECT 1) TO '{program_made}'"),
        "SELECT pg_catalog.pg_read_file('PG_VERSION')".to_owned(),
        "SELECT pg_catalog.lo_import('/etc/hostname')".to_owned(),
        format!(
            "SELECT pg_catalog.pg_create_physical_replication_slot('{}_slot')",
            db.name
        ),
    ] {
        let e = exec(&sql).await.expect_err(&sql);
        if db.major() < 14 {
            assert!(e.starts_with("cannot run as pg_read_all_data"), "{sql}: {e}");
        } else {
            assert!(e.contains("(SQLSTATE 42501)"), "{sql}: {e}");
        }
    }
    assert_eq!(
        db.psql(&format!(
            "SELECT pg_catalog.pg_stat_file('{program_made}', true) IS NULL"
        )),
        "t"
    );
    assert_eq!(db.psql("SELECT count(*) FROM pg_largeobject_metadata"), "0");
    assert_eq!(
        db.psql(&format!(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{}_slot'",
            db.name
        )),
        "0"
    );
    backend.close().await;
}
