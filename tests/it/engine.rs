//! The library pipeline against the harness's real PostgreSQL.

use std::time::{Duration, Instant};

use pgmcp::testing::postgres::params;
use pgmcp::testing::statement::{Deadline, Statement};
use pgmcp::{Config, Engine, Error, QueryInput, Rule};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, rows, run, writable};
use crate::support::pg;

#[tokio::test(flavor = "multi_thread")]
async fn select_returns_columns_types_and_rows() {
    let db = pg::server().database();
    db.psql("CREATE TABLE users (id serial PRIMARY KEY, name text NOT NULL, score numeric(10,2), born date); INSERT INTO users (name, score, born) VALUES ('ada', 12.50, '1815-12-10'), ('alan', NULL, '1912-06-23')");
    let engine = engine_for(&db, |_| {});
    let out = run(&engine, "SELECT id, name, score, born FROM users ORDER BY id")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&out.columns).unwrap(),
        json!([{"name": "id", "type": "integer"}, {"name": "name", "type": "text"}, {"name": "score", "type": "numeric(10,2)"}, {"name": "born", "type": "date"}])
    );
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"id": 1, "name": "ada", "score": "12.50", "born": "1815-12-10"}, {"id": 2, "name": "alan", "score": null, "born": "1912-06-23"}])
    );
    assert_eq!(out.rows_affected, Some(2));
    assert_eq!(out.returned_rows, 2);
    assert!(!out.truncated);
}

#[tokio::test(flavor = "multi_thread")]
async fn parameters_are_bound_not_interpolated() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    let input = QueryInput {
        database: None,
        sql: "SELECT $1::text AS s, $2::int + 1 AS n, $3::boolean AS b, $4::text IS NULL AS is_null".into(),
        params: vec![json!("x'); DROP TABLE users; --"), json!(41), json!(true), Value::Null],
        limit: None,
    };
    let out = engine.query(&input, CancellationToken::new()).await.unwrap();
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"s": "x'); DROP TABLE users; --", "n": 42, "b": true, "is_null": true}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_carry_postgres_message_and_code() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    match run(&engine, "SELECT * FROM no_such_table").await {
        Err(Error::Db(e)) => {
            assert_eq!(e.code(), "42P01");
            assert_eq!(e.message, "relation \"no_such_table\" does not exist");
            assert_eq!(e.position, Some(15));
        }
        other => panic!("expected a database error, got {other:?}"),
    }
    // The connection that saw the error is still good for the next call.
    assert_eq!(rows(&engine, "SELECT 1 AS one").await, json!([{"one": 1}]));
}

#[tokio::test(flavor = "multi_thread")]
async fn guard_rejects_multiple_statements_before_the_database() {
    let db = pg::server().database();
    db.psql("CREATE TABLE keep (x int)");
    let engine = engine_for(&db, writable);
    match run(&engine, "SELECT 1; DROP TABLE keep").await {
        Err(Error::Guard(v)) => assert_eq!(
            v.message,
            "multi-statement queries are not allowed: found 2 statements. Send one statement per call"
        ),
        other => panic!("expected a guard violation, got {other:?}"),
    }
    assert_eq!(db.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'keep'"), "1");
}

/// Even with the guard out of the way, PostgreSQL itself refuses a second
/// statement, because queries go through the extended protocol.
#[tokio::test(flavor = "multi_thread")]
async fn server_refuses_multiple_statements_without_the_guard() {
    let db = pg::server().database();
    db.psql("CREATE TABLE keep (x int)");
    let params = params::resolve(Some(&db.url), &Default::default(), &|_| None).unwrap();
    let backend = pgmcp::testing::postgres::PgBackend::new(
        params,
        pgmcp::testing::postgres::PgOptions {
            read_only: false,
            max_conn_lifetime: Duration::from_secs(60),
            max_conn_idle: Duration::from_secs(60),
            role: None,
            read_only_as_login: false,
        },
    );
    let deadline = Deadline {
        at: Instant::now() + Duration::from_secs(10),
        timeout: Duration::from_secs(10),
        cancel: CancellationToken::new(),
    };
    let result = backend
        .execute(
            Statement {
                database: None,
                sql: "SELECT 1; DROP TABLE keep",
                params: &[],
                fetch_limit: 10,
                budget: pgmcp::testing::statement::ReadBudget::for_answer(100_000),
                rollback: false,
                prelude: &[],
                epilogue: &[],
            },
            // No catalog version: nothing was judged.
            None,
            &deadline,
        )
        .await;
    match result {
        Err(Error::Db(e)) => assert_eq!(e.code(), "42601", "{e}"),
        other => panic!("expected 42601 from the server, got {other:?}"),
    }
    assert_eq!(db.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'keep'"), "1");
}

/// Read-only mode's allowlist refuses a write before PostgreSQL sees it, and
/// the session PostgreSQL runs calls in is read-only too (the write refused
/// by PostgreSQL itself, with no guard, is in guard_attacks.rs).
#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_is_enforced_by_postgres() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int)");
    let engine = engine_for(&db, |_| {});
    match run(&engine, "INSERT INTO t VALUES (1)").await {
        Err(Error::Guard(v)) => {
            assert_eq!(v.rule, pgmcp::Rule::ReadOnly);
            assert!(v.message.starts_with("INSERT is not allowed in read-only mode"), "{v}");
        }
        other => panic!("expected a read-only error, got {other:?}"),
    }
    assert_eq!(rows(&engine, "SELECT current_setting('default_transaction_read_only') AS d, current_setting('transaction_read_only') AS t").await, json!([{"d": "on", "t": "on"}]));
    assert_eq!(db.psql("SELECT count(*) FROM t"), "0");
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_report_rows_affected_when_allowed() {
    let db = pg::server().database();
    db.psql("CREATE TABLE users (id serial PRIMARY KEY, name text, active boolean DEFAULT false)");
    let engine = engine_for(&db, writable);
    let out = run(&engine, "INSERT INTO users (name) VALUES ('a'), ('b'), ('c')")
        .await
        .unwrap();
    assert_eq!(
        (out.rows_affected, out.returned_rows, out.columns.len()),
        (Some(3), 0, 0)
    );
    let out = run(&engine, "UPDATE users SET active = true WHERE id <= 2")
        .await
        .unwrap();
    assert_eq!(out.rows_affected, Some(2));
    let out = run(&engine, "DELETE FROM users WHERE id = 3 RETURNING name")
        .await
        .unwrap();
    assert_eq!(
        (out.rows_affected, serde_json::to_value(&out.rows).unwrap()),
        (Some(1), json!([{"name": "c"}]))
    );
    // Each call committed its own transaction.
    assert_eq!(
        db.psql("SELECT string_agg(name || ':' || active, ',' ORDER BY id) FROM users"),
        "a:true,b:true"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn results_stop_at_the_row_cap_and_say_so() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.query.max_rows = 10);
    let out = run(&engine, "SELECT g FROM generate_series(1, 100000) g")
        .await
        .unwrap();
    assert_eq!(out.returned_rows, 10);
    assert!(out.truncated);
    assert!(out.hint.as_deref().unwrap().contains("first 10 rows"));
    assert_eq!(out.rows.last().unwrap()["g"], json!(10));
    // Exactly at the cap is not truncated.
    let out = run(&engine, "SELECT g FROM generate_series(1, 10) g").await.unwrap();
    assert_eq!((out.returned_rows, out.truncated), (10, false));
}

/// The timeout stops the work on the server, not just our wait.
#[tokio::test(flavor = "multi_thread")]
async fn timeout_cancels_the_query_on_the_server() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.query.default_timeout = Duration::from_secs(1));
    let started = Instant::now();
    let marker = "SELECT pg_sleep(30) /* timeout-marker */";
    match run(&engine, marker).await {
        Err(Error::Timeout { after }) => assert_eq!(after, Duration::from_secs(1)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "returned only after {:?}",
        started.elapsed()
    );
    let running = db.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%timeout-marker%' AND state = 'active' AND pid <> pg_backend_pid()");
    assert_eq!(running, "0", "a backend is still running the timed-out query");
    // The pool recovers: the next call works.
    assert_eq!(rows(&engine, "SELECT 2 AS two").await, json!([{"two": 2}]));
}

/// Cancelling the call sends PostgreSQL a cancel request.
#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_call_stops_the_query_on_the_server() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let input = QueryInput {
        database: None,
        sql: "SELECT pg_sleep(30) /* cancel-marker */".into(),
        params: vec![],
        limit: None,
    };
    match engine.query(&input, cancel).await {
        Err(Error::Cancelled) => {}
        other => panic!("expected cancellation, got {other:?}"),
    }
    let running = db.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%cancel-marker%' AND state = 'active' AND pid <> pg_backend_pid()");
    assert_eq!(running, "0", "a backend is still running the cancelled query");
}

/// Nothing one call does to its session is seen by the next call on the same
/// connection: settings, temp tables, prepared statements.
#[tokio::test(flavor = "multi_thread")]
async fn session_state_does_not_leak_between_calls() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| {
        c.read_only = false;
        c.pool.max_conns = 1;
        c.protection.allow(Rule::Set, true);
        c.protection.allow(Rule::Prepare, true);
    });
    let pid = rows(&engine, "SELECT pg_backend_pid() AS pid").await;

    run(&engine, "SET work_mem = '77MB'").await.unwrap();
    assert_eq!(
        rows(&engine, "SELECT current_setting('work_mem') AS w").await,
        json!([{"w": "4MB"}])
    );

    run(&engine, "SET TimeZone = 'Asia/Tokyo'").await.unwrap();
    assert_eq!(
        rows(&engine, "SELECT current_setting('TimeZone') AS tz").await,
        json!([{"tz": "UTC"}])
    );

    run(&engine, "CREATE TEMP TABLE scratch (x int)").await.unwrap();
    match run(&engine, "SELECT * FROM scratch").await {
        Err(Error::Db(e)) => assert_eq!(e.code(), "42P01"),
        other => panic!("temp table leaked: {other:?}"),
    }

    run(&engine, "PREPARE leaked AS SELECT 1").await.unwrap();
    match run(&engine, "EXECUTE leaked").await {
        Err(Error::Db(e)) => assert_eq!(e.code(), "26000"),
        other => panic!("prepared statement leaked: {other:?}"),
    }
    // pgmcp's own statements are the only ones kept prepared, and calls go
    // on after the caller's were deallocated. (`pgmcp_statement` is the
    // statement asking: the call's own, closed before the call ends.)
    for _ in 0..3 {
        let names = rows(&engine, "SELECT name FROM pg_prepared_statements ORDER BY name").await;
        let names: Vec<&str> = names
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"pgmcp_settings"), "{names:?}");
        for name in names {
            assert!(
                [
                    "pgmcp_catalog_unchanged",
                    "pgmcp_catalog_version",
                    "pgmcp_settings",
                    "pgmcp_statement"
                ]
                .contains(&name),
                "{name} kept prepared"
            );
        }
    }

    // All of the above ran on one connection, so reset really happened.
    assert_eq!(rows(&engine, "SELECT pg_backend_pid() AS pid").await, pid);
}

/// A call waiting for a connection slot gives up when the client cancels.
#[tokio::test(flavor = "multi_thread")]
async fn waiting_for_a_slot_respects_cancellation() {
    let db = pg::server().database();
    let engine = std::sync::Arc::new(engine_for(&db, |c| c.pool.max_conns = 1));
    let busy = engine.clone();
    let holder = tokio::spawn(async move { run(&busy, "SELECT pg_sleep(1.5)").await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let waited = engine
        .query(
            &QueryInput {
                database: None,
                sql: "SELECT 1".into(),
                params: vec![],
                limit: None,
            },
            cancel,
        )
        .await;
    assert!(matches!(waited, Err(Error::Cancelled)), "{waited:?}");
    holder.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn list_and_describe_tables() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE users (id serial PRIMARY KEY, email text UNIQUE NOT NULL, age int CHECK (age >= 0), created timestamptz DEFAULT now());
         CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES users(id) ON DELETE CASCADE);
         CREATE VIEW adults AS SELECT id, email FROM users WHERE age >= 18;
         CREATE MATERIALIZED VIEW user_count AS SELECT count(*) AS n FROM users;
         CREATE SCHEMA sales; CREATE TABLE sales.deals (id int);",
    );
    let engine = engine_for(&db, |_| {});
    let list = engine
        .list_tables(&Default::default(), CancellationToken::new())
        .await
        .unwrap();
    let names: Vec<(String, String, String)> = list
        .tables
        .iter()
        .map(|t| (t.schema.clone(), t.name.clone(), t.kind.clone()))
        .collect();
    let expect = |s: &str, n: &str, k: &str| (s.to_owned(), n.to_owned(), k.to_owned());
    assert_eq!(
        names,
        vec![
            expect("public", "adults", "view"),
            expect("public", "orders", "table"),
            expect("public", "user_count", "materialized_view"),
            expect("public", "users", "table"),
            expect("sales", "deals", "table"),
        ]
    );

    let users = engine
        .describe_table("users", None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((users.schema.as_str(), users.kind.as_str()), ("public", "table"));
    let cols: Vec<(&str, &str, bool, bool)> = users
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.type_name.as_str(), c.nullable, c.is_primary_key))
        .collect();
    assert_eq!(
        cols,
        vec![
            ("id", "integer", false, true),
            ("email", "text", false, false),
            ("age", "integer", true, false),
            ("created", "timestamp with time zone", true, false)
        ]
    );
    assert_eq!(users.columns[3].default.as_deref(), Some("now()"));
    let kinds: Vec<&str> = users.constraints.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(kinds, vec!["CHECK", "UNIQUE", "PRIMARY KEY"]);
    assert_eq!(users.indexes.len(), 2);

    let orders = engine
        .describe_table("orders", Some("public"), CancellationToken::new())
        .await
        .unwrap();
    let fk = &orders.foreign_keys[0];
    assert_eq!(
        (
            fk.columns.clone(),
            fk.referenced_table.as_str(),
            fk.referenced_columns.clone(),
            fk.on_delete.as_str()
        ),
        (
            vec!["user_id".to_owned()],
            "public.users",
            vec!["id".to_owned()],
            "CASCADE"
        )
    );

    let view = engine
        .describe_table("adults", None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(view.kind, "view");
    // PostgreSQL's own text of it: before 18 it qualifies the column.
    let definition = view.definition.unwrap();
    assert!(
        definition.contains("FROM users") && definition.contains("age >= 18"),
        "{definition}"
    );

    let deals = engine
        .describe_table("deals", Some("sales"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(deals.columns.len(), 1);

    match engine.describe_table("nope", None, CancellationToken::new()).await {
        Err(e) => assert!(e.to_string().contains("does not exist"), "{e}"),
        Ok(d) => panic!("described a missing table: {d:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_database_is_a_clear_error() {
    let db = pg::server().database();
    // A port where nothing listens.
    let port = crate::support::net::free_port();
    let mut config = Config::builtin();
    config.query.default_timeout = Duration::from_secs(5);
    let url = db
        .url
        .replace(&format!(":{}/", pg::server().port()), &format!(":{port}/"));
    let params = params::resolve(Some(&url), &config.connection, &|_| None).unwrap();
    let engine = Engine::postgres(config, params);
    let err = run(&engine, "SELECT 1").await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "cannot reach the database: could not connect to 127.0.0.1:{port}"
        )),
        "{text}"
    );
    assert!(!text.contains(pg::server().admin_password()), "password leaked: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_password_is_a_clear_error_without_the_password() {
    let db = pg::server().database();
    let url = db.url.replace(pg::server().admin_password(), "not-the-password");
    let params = params::resolve(Some(&url), &Default::default(), &|_| None).unwrap();
    let engine = Engine::postgres(Config::builtin(), params);
    let text = run(&engine, "SELECT 1").await.unwrap_err().to_string();
    assert!(text.contains("password authentication failed"), "{text}");
    assert!(
        text.contains("the password in PGMCP_PG_CONNSTRING is not the password of role"),
        "{text}"
    );
    assert!(!text.contains("not-the-password"), "{text}");
}

/// The caller's statement runs as the named statement `pgmcp_statement`
/// through the portal `pgmcp_portal` (so pgmcp's catalog check can run
/// between its `Parse` and its `Bind`). A caller who names them, from the
/// statement itself, gets an error or changes nothing that lasts: the next
/// calls on the same connection run, the statement is gone after each call,
/// and the table is untouched. An error in the statement's `Parse` (now
/// before the check), and one in its planning or run with the check's
/// SQLSTATE (`division_by_zero`), are the statement's own, not a changed
/// catalog.
#[tokio::test(flavor = "multi_thread")]
async fn the_statements_own_names_are_no_handle() {
    let db = pg::server().database();
    db.psql("CREATE TABLE kept (id int); INSERT INTO kept VALUES (1)");
    let engine = engine_for(&db, |c| {
        writable(c);
        c.protection.allow(Rule::Prepare, true);
        c.pool.max_conns = 1;
    });
    let own_error = |sql: &str, result: Result<pgmcp::QueryOutput, Error>, code: &str| match result {
        Err(Error::Db(e)) => assert_eq!(e.code(), code, "{sql}: {e:?}"),
        other => panic!("{sql}: {other:?}"),
    };
    for (sql, code) in [
        ("DEALLOCATE pgmcp_statement", None),
        ("CLOSE ALL", None),
        ("CLOSE pgmcp_portal", Some("24000")),
        ("FETCH ALL FROM pgmcp_portal", Some("55000")),
        ("EXECUTE pgmcp_statement", Some("54001")),
        (
            "PREPARE pgmcp_statement AS DELETE FROM kept WHERE id = 1",
            Some("42P05"),
        ),
        // Folded to a constant by the planner, at `Bind`; then the same
        // while the statement runs.
        ("SELECT 1/0", Some("22012")),
        ("SELECT 1/(id - 1) FROM kept", Some("22012")),
        // Name resolution, at `Parse`.
        ("SELECT nosuchcolumn FROM kept", Some("42703")),
    ] {
        match code {
            None => assert!(run(&engine, sql).await.is_ok(), "{sql}"),
            Some(code) => own_error(sql, run(&engine, sql).await, code),
        }
        for _ in 0..2 {
            assert_eq!(
                rows(&engine, "SELECT id FROM kept").await,
                json!([{"id": 1}]),
                "after {sql}"
            );
        }
        // From a call of its own, `pgmcp_statement` is that call's: the one
        // before is gone, or this call's Parse would have failed.
        own_error(sql, run(&engine, "EXECUTE pgmcp_statement").await, "54001");
    }
    assert_eq!(db.psql("SELECT count(*) FROM kept"), "1");
}
