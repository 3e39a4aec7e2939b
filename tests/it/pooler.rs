//! pgmcp through PgBouncer, in session and in transaction pooling mode, as
//! Supabase, Neon and most managed services put it in front of PostgreSQL:
//! it connects (PgBouncer refuses startup parameters it does not track),
//! every tool answers exactly what it answers without the pooler, calls stay
//! isolated when each transaction may run on another server connection, a
//! timeout still stops the statement on the server, and calls go on after
//! the pooler restarts.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::bouncer::Bouncer;
use crate::support::engine::{rows, run};
use crate::support::pg::{self, TestDb};
use pgmcp::testing::postgres::params;
use pgmcp::{Config, Engine, Error, Rule};

const MODES: [&str; 2] = ["session", "transaction"];

/// An engine on `url` with built-in defaults, adjusted by `edit`; before
/// PostgreSQL 14, as the login (see `support::engine::engine_for`).
fn engine_at(url: &str, edit: impl FnOnce(&mut Config)) -> Engine {
    let mut config = Config::builtin();
    let version: u32 = pg::server()
        .psql("postgres", "SHOW server_version_num")
        .parse()
        .unwrap();
    config.connection.read_only_as_login = version < 140_000;
    edit(&mut config);
    let params = params::resolve(Some(url), &config.connection, &|_| None).expect("the URL resolves");
    Engine::postgres(config, params)
}

/// Values whose text form depends on every pinned setting.
const PINNED_VALUES: &str = "SELECT interval '1 day 02:03:04' AS i, '\\x0102'::bytea AS b, \
     0.1::float8 AS f, 12.5::money AS m, timestamptz '2024-05-06 07:08:09+02' AS t, \
     date '2024-05-06' AS d, 'a\\b' AS s";

fn shop(db: &TestDb) {
    db.psql(
        "CREATE TABLE orders (id int PRIMARY KEY, note text NOT NULL DEFAULT 'x');
         INSERT INTO orders SELECT g, 'n' || g FROM generate_series(1, 30) g;
         COMMENT ON TABLE orders IS 'the orders';",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_answers_through_pgbouncer_as_without_it() {
    let server = pg::server();
    let db = server.database();
    shop(&db);
    // Defaults that differ from every pinned setting: pgmcp's answers must
    // not follow them, with or without the pooler.
    db.psql(&format!(
        "ALTER DATABASE {0} SET IntervalStyle = 'iso_8601'; ALTER DATABASE {0} SET bytea_output = 'escape';
         ALTER DATABASE {0} SET DateStyle = 'SQL, DMY'; ALTER DATABASE {0} SET TimeZone = 'Asia/Tokyo';
         ALTER DATABASE {0} SET extra_float_digits = -3;",
        db.name
    ));
    let direct = engine_at(&db.url, |_| {});
    let expected_values = rows(&direct, PINNED_VALUES).await;
    assert_eq!(
        expected_values,
        json!([{"i": "1 day 02:03:04", "b": "\\x0102", "f": 0.1, "m": "$12.50",
                "t": "2024-05-06T05:08:09Z", "d": "2024-05-06", "s": "a\\b"}])
    );
    let expected_tables = direct
        .list_tables(&Default::default(), CancellationToken::new())
        .await
        .unwrap();
    let expected_orders = direct
        .describe_table("orders", None, CancellationToken::new())
        .await
        .unwrap();
    for mode in MODES {
        let bouncer = Bouncer::start(server, mode);
        let engine = engine_at(&bouncer.url(&db), |c| c.pool.max_conns = 2);
        // More calls than server connections, so transaction pooling moves
        // them between server connections.
        for _ in 0..6 {
            assert_eq!(rows(&engine, PINNED_VALUES).await, expected_values, "{mode} pooling");
            // The superuser login's read-only calls run as the reader
            // (SET LOCAL ROLE: inside the transaction, which the pooler
            // keeps on one server connection); before 14, see `reader::`.
            if db.major() >= 14 {
                assert_eq!(
                    rows(&engine, "SELECT current_user AS r").await,
                    json!([{"r": "pg_read_all_data"}]),
                    "{mode} pooling"
                );
            }
            assert_eq!(
                rows(&engine, "SELECT count(*) AS n, max(note) AS top FROM orders").await,
                json!([{"n": 30, "top": "n9"}]),
                "{mode} pooling"
            );
        }
        let tables = engine
            .list_tables(&Default::default(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&tables).unwrap(),
            serde_json::to_value(&expected_tables).unwrap(),
            "{mode} pooling"
        );
        let orders = engine
            .describe_table("orders", None, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&orders).unwrap(),
            serde_json::to_value(&expected_orders).unwrap(),
            "{mode} pooling"
        );
        // Read-only still holds: the transaction is read-only whatever the
        // server connection's defaults.
        match run(&engine, "DELETE FROM orders").await {
            Err(Error::Guard(_)) => {}
            other => panic!("{mode} pooling: DELETE was not refused: {other:?}"),
        }
        let log = bouncer.log();
        assert!(
            log.contains(&format!("login attempt: db={}", db.name)),
            "{mode} pooling: the calls did not go through PgBouncer:\n{log}"
        );
        engine.close().await;
    }
    assert_eq!(db.psql("SELECT count(*) FROM orders"), "30");
}

/// `explain` with `analyze` behind a transaction pooler: the statement runs
/// and is rolled back in the same message as the session's reset, and the
/// next call on the pool finds nothing of it.
#[tokio::test(flavor = "multi_thread")]
async fn an_analyzed_write_is_rolled_back_behind_a_pooler() {
    let server = pg::server();
    let db = server.database();
    shop(&db);
    let bouncer = Bouncer::start(server, "transaction");
    let engine = engine_at(&bouncer.url(&db), |c| {
        c.read_only = false;
        c.pool.max_conns = 1;
    });
    let input = pgmcp::ExplainInput {
        sql: "INSERT INTO orders SELECT g FROM generate_series(100, 199) g".into(),
        params: Vec::new(),
        analyze: true,
        hypothetical_indexes: Vec::new(),
    };
    let answer = engine.explain(&input, CancellationToken::new()).await.unwrap();
    assert!(answer.analyzed && answer.summary.execution_ms.is_some(), "{answer:?}");
    assert_eq!(db.psql("SELECT count(*) FROM orders"), "30", "rolled back");
    assert_eq!(
        rows(&engine, "SELECT count(*) AS n FROM orders").await,
        json!([{"n": 30}])
    );
    assert!(bouncer.log().contains(&format!("login attempt: db={}", db.name)));
    engine.close().await;
}

/// What one call changes in its session never reaches the next, though the
/// next may run on another server connection and this one's goes to some
/// other client: pgmcp resets inside its own transaction.
#[tokio::test(flavor = "multi_thread")]
async fn calls_stay_isolated_behind_a_transaction_pooler() {
    let server = pg::server();
    let db = server.database();
    let bouncer = Bouncer::start(server, "transaction");
    let engine = engine_at(&bouncer.url(&db), |c| {
        c.read_only = false;
        c.pool.max_conns = 1;
        c.protection.allow(Rule::Set, true);
    });
    run(&engine, "SET work_mem = '77MB'").await.unwrap();
    run(&engine, "SET TimeZone = 'Asia/Tokyo'").await.unwrap();
    run(&engine, "SET IntervalStyle = 'iso_8601'").await.unwrap();
    run(&engine, "CREATE TEMP TABLE scratch (x int)").await.unwrap();
    run(&engine, "SELECT pg_advisory_lock(42)").await.unwrap();
    assert_eq!(
        rows(
            &engine,
            "SELECT current_setting('work_mem') AS w, current_setting('TimeZone') AS tz, interval '1 day' AS i"
        )
        .await,
        json!([{"w": "4MB", "tz": "UTC", "i": "1 day"}])
    );
    match run(&engine, "SELECT * FROM scratch").await {
        Err(Error::Db(e)) => assert_eq!(e.code(), "42P01"),
        other => panic!("temp table leaked: {other:?}"),
    }
    // Nobody, through the pooler or not, still holds the lock.
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"),
        "0"
    );
    // Another client of the pooler sees the server's defaults.
    let other = engine_at(&bouncer.url(&db), |_| {});
    assert_eq!(
        rows(&other, "SELECT current_setting('work_mem') AS w").await,
        json!([{"w": "4MB"}])
    );
}

/// A statement past its timeout is stopped on the server (PgBouncer passes
/// the cancel request on), and calls go on after PgBouncer restarts.
#[tokio::test(flavor = "multi_thread")]
async fn timeouts_and_restarts_of_the_pooler() {
    let server = pg::server();
    let db = server.database();
    for mode in MODES {
        let mut bouncer = Bouncer::start(server, mode);
        let engine = engine_at(&bouncer.url(&db), |c| c.query.default_timeout = Duration::from_secs(1));
        let started = std::time::Instant::now();
        match run(&engine, "SELECT pg_sleep(30)").await {
            Err(Error::Timeout { .. }) => {}
            other => panic!("{mode} pooling: {other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{mode} pooling: the call waited for the statement"
        );
        let running = || {
            db.psql("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'")
        };
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while running() != "0" {
            assert!(
                std::time::Instant::now() < until,
                "{mode} pooling: the statement still runs on the server"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(rows(&engine, "SELECT 1 AS one").await, json!([{"one": 1}]));

        bouncer.restart();
        // The idle connection died with PgBouncer: the next call sees it
        // closed and connects again.
        assert_eq!(
            rows(&engine, "SELECT 2 AS two").await,
            json!([{"two": 2}]),
            "{mode} pooling: after a restart"
        );
        engine.close().await;
    }
}

/// With one server connection for everybody, another client waiting for it
/// gets it the moment pgmcp's transaction ends: whatever pgmcp's call changed
/// in the session must be undone by then, not by a statement sent after.
#[tokio::test(flavor = "multi_thread")]
async fn the_next_client_of_the_server_connection_finds_it_reset() {
    let server = pg::server();
    let db = server.database();
    let bouncer = std::sync::Arc::new(Bouncer::with_pool_size(server, "transaction", 1));
    let engine = engine_at(&bouncer.url(&db), |c| {
        c.read_only = false;
        c.protection.allow(Rule::Set, true);
        // A session setting changed by a statement that takes a while.
        c.protection.blocked_functions.retain(|f| f.as_str() != "set_config");
    });
    // Connected, so the call below only waits for its statement.
    run(&engine, "SELECT 1").await.unwrap();
    let waiting = {
        let bouncer = std::sync::Arc::clone(&bouncer);
        let name = db.name.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            bouncer.psql(&name, "SELECT current_setting('work_mem')")
        })
    };
    run(&engine, "SELECT set_config('work_mem', '77MB', false), pg_sleep(1)")
        .await
        .unwrap();
    assert_eq!(waiting.join().unwrap(), "4MB");
}

/// `pgmcp check` says it is talking to a pooler, and what that changes.
#[test]
fn check_reports_the_pooler() {
    let server = pg::server();
    let db = server.database();
    let home = tempfile::tempdir().unwrap();
    for (mode, through) in [(Some("transaction"), true), (None, false)] {
        let bouncer = mode.map(|mode| Bouncer::start(server, mode));
        let url = bouncer.as_ref().map_or_else(|| db.url.clone(), |b| b.url(&db));
        let out = crate::support::pgmcp(home.path())
            .arg("check")
            .env("PGMCP_PG_CONNSTRING", &url)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("read-only:    on (verified: transaction_read_only = on)"),
            "{stdout}"
        );
        assert_eq!(
            stdout.contains("  pooler:     yes (it refused a startup parameter, or a statement pgmcp prepared went missing on another server session, as poolers do)"),
            through,
            "{stdout}"
        );
    }
}

/// A PgBouncer told to ignore the startup parameters it does not track (a
/// common setting, for drivers that send them) accepts pgmcp's and drops
/// them: pgmcp finds out from its own prepared check, missing on the next
/// transaction's server connection, and from then on works as behind any
/// pooler, with the same answers.
#[tokio::test(flavor = "multi_thread")]
async fn a_pooler_that_ignores_startup_parameters_is_found_out() {
    let server = pg::server();
    let db = server.database();
    db.psql(&format!(
        "ALTER DATABASE {0} SET IntervalStyle = 'iso_8601'; ALTER DATABASE {0} SET bytea_output = 'escape';",
        db.name
    ));
    let expected = rows(&engine_at(&db.url, |_| {}), PINNED_VALUES).await;
    let bouncer = Bouncer::configured(
        server,
        "transaction",
        2,
        "ignore_startup_parameters = IntervalStyle, extra_float_digits, bytea_output, lc_monetary, \
         default_transaction_read_only",
    );
    let engine = std::sync::Arc::new(engine_at(&bouncer.url(&db), |c| c.pool.max_conns = 3));
    // Calls in flight together, so transactions move between the two
    // server connections.
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..12 {
        let engine = std::sync::Arc::clone(&engine);
        calls.spawn(async move { rows(&engine, PINNED_VALUES).await });
    }
    while let Some(answer) = calls.join_next().await {
        assert_eq!(answer.unwrap(), expected);
    }
    let out = crate::support::pgmcp_std(tempfile::tempdir().unwrap().path())
        .arg("--database")
        .arg(bouncer.url(&db))
        .arg("query")
        .arg(PINNED_VALUES)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The attacker's variants of session state outliving a call, for a
/// statement that fails after taking it: advisory locks (exclusive, shared,
/// try) and a sequence's `currval` are not undone by the rollback. Directly
/// and through PgBouncer in both modes (one server connection, so the next
/// client of a transaction pooler gets the very one the call ran on),
/// nothing is left: no advisory lock anywhere on the server, and the next
/// client sees no `currval`.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_statement_leaves_nothing_in_the_session() {
    let server = pg::server();
    let db = server.database();
    db.psql("CREATE SEQUENCE s");
    // A division by zero the planner cannot fold away: it fails when the
    // row is computed, after the call before it in the same row ran.
    let attacks = [
        "SELECT pg_advisory_lock(41), 1/((random() < 2)::int - 1)",
        "SELECT pg_advisory_lock_shared(42), 1/((random() < 2)::int - 1)",
        "SELECT pg_try_advisory_lock(43), 1/((random() < 2)::int - 1)",
        "SELECT nextval('s'), 1/((random() < 2)::int - 1)",
    ];
    for mode in [None, Some("session"), Some("transaction")] {
        let bouncer = mode.map(|mode| Bouncer::with_pool_size(server, mode, 1));
        let url = bouncer.as_ref().map_or_else(|| db.url.clone(), |b| b.url(&db));
        let engine = engine_at(&url, |c| {
            c.read_only = false;
            c.pool.max_conns = 1;
        });
        for sql in attacks {
            match run(&engine, sql).await {
                Err(Error::Db(e)) => assert_eq!(e.code(), "22012", "{mode:?}: {sql}"),
                other => panic!("{mode:?}: {sql} did not fail: {other:?}"),
            }
            // Before pgmcp's next call, which would reset the server
            // connection anyway. In session mode the server connection is
            // pgmcp's until it disconnects; in transaction mode the next
            // client gets it now.
            if let (Some(bouncer), Some("transaction")) = (&bouncer, mode) {
                match bouncer.try_psql(&db.name, "SELECT currval('s')") {
                    Err(said) => assert!(said.contains("is not yet defined in this session"), "{said}"),
                    Ok(value) => panic!("the next client of the server connection saw currval {value}"),
                }
            }
            // Directly, the reset is on its way in the call's own write: give
            // the server a moment to have run it.
            let until = std::time::Instant::now() + Duration::from_secs(2);
            while db.psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") != "0" {
                assert!(
                    std::time::Instant::now() < until,
                    "{mode:?}: {sql} left an advisory lock"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            assert_eq!(rows(&engine, "SELECT 1 AS one").await, json!([{"one": 1}]), "{mode:?}");
        }
        engine.close().await;
    }
}

/// The names of the prepared statements the call's own session holds.
const PREPARED_NAMES: &str =
    "SELECT coalesce(array_agg(name ORDER BY name), '{}')::text AS names FROM pg_prepared_statements";

/// pgmcp's own statements never add a column or a row to an answer: behind
/// a pooler the session reset follows `COMMIT` in the call's own message,
/// and one of its statements answers a row (`pg_advisory_unlock_all`, of
/// type `void`). Directly and through PgBouncer in both modes, an answer has
/// exactly the query's columns and rows, and a statement without columns
/// none.
#[tokio::test(flavor = "multi_thread")]
async fn answers_have_only_the_query_s_columns() {
    let server = pg::server();
    let db = server.database();
    shop(&db);
    for mode in [None, Some("session"), Some("transaction")] {
        let bouncer = mode.map(|mode| Bouncer::start(server, mode));
        let url = bouncer.as_ref().map_or_else(|| db.url.clone(), |b| b.url(&db));
        let engine = engine_at(&url, |c| {
            c.read_only = false;
            c.pool.max_conns = 2;
        });
        let names = |out: &pgmcp::QueryOutput| out.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        for _ in 0..3 {
            let out = run(&engine, "SELECT id, note FROM orders WHERE id <= 2 ORDER BY id")
                .await
                .unwrap();
            assert_eq!(names(&out), ["id", "note"], "{mode:?}");
            assert_eq!(
                serde_json::to_value(&out.rows).unwrap(),
                json!([{"id": 1, "note": "n1"}, {"id": 2, "note": "n2"}]),
                "{mode:?}"
            );
            let out = run(&engine, "SELECT 1 AS one WHERE false").await.unwrap();
            assert_eq!(names(&out), ["one"], "{mode:?}");
            assert!(out.rows.is_empty(), "{mode:?}: {:?}", out.rows);
            let out = run(&engine, "UPDATE orders SET note = note WHERE id = 1")
                .await
                .unwrap();
            assert_eq!(names(&out), Vec::<String>::new(), "{mode:?}");
            assert!(out.rows.is_empty(), "{mode:?}: {:?}", out.rows);
            assert_eq!(out.rows_affected, Some(1), "{mode:?}");
            // A caller's DEALLOCATE changes none of this, pooler or not.
            run(&engine, "DEALLOCATE ALL").await.unwrap();
        }
        // The answers above came the way this test means them to: behind
        // PgBouncer, as behind a pooler.
        let report = engine.session_report(CancellationToken::new()).await.unwrap();
        assert_eq!(report.pooler, mode.is_some(), "{mode:?}");
        if let Some(bouncer) = &bouncer {
            assert!(
                bouncer.log().contains(&format!("login attempt: db={}", db.name)),
                "{mode:?}: the calls did not go through PgBouncer"
            );
        }
        engine.close().await;
    }
}

/// What a caller's statement does to prepared statements cannot change how
/// pgmcp talks to a server it reaches directly. Deallocating pgmcp's
/// (outright, or inside a function where no command tag shows it), or
/// failing on one of their names, used to read as "a pooler lost them" and
/// switched the whole process to working as behind a pooler. Now each
/// following call answers, the connection still keeps pgmcp's statements
/// prepared (as only a direct connection does), and `check` reports no
/// pooler.
#[tokio::test(flavor = "multi_thread")]
async fn a_caller_cannot_make_a_direct_connection_work_as_pooled() {
    let server = pg::server();
    let db = server.database();
    db.psql(
        "CREATE FUNCTION forget_prepared() RETURNS int LANGUAGE plpgsql \
         AS $$ BEGIN EXECUTE 'DEALLOCATE ALL'; RETURN 1; END $$",
    );
    let engine = engine_at(&db.url, |c| {
        c.read_only = false;
        // One connection, so every call runs in the session the attack ran in.
        c.pool.max_conns = 1;
        c.protection.allow(Rule::Prepare, true);
    });
    let kept = |names: &serde_json::Value| names[0]["names"].as_str().is_some_and(|n| n.contains("pgmcp_settings"));
    let before = rows(&engine, PREPARED_NAMES).await;
    assert!(kept(&before), "{before}");
    let attacks = [
        ("DEALLOCATE ALL", None),
        ("DEALLOCATE pgmcp_settings", None),
        ("SELECT forget_prepared()", None),
        // Fails on its own, naming pgmcp's statement: the caller's answer.
        ("PREPARE pgmcp_settings AS SELECT 1", Some("42P05")),
    ];
    for (attack, fails_with) in attacks {
        match (run(&engine, attack).await, fails_with) {
            (Ok(_), None) => {}
            (Err(Error::Db(e)), Some(code)) => assert_eq!(e.code(), code, "{attack}"),
            (other, _) => panic!("{attack}: {other:?}"),
        }
        for _ in 0..2 {
            assert_eq!(rows(&engine, "SELECT 1 AS one").await, json!([{"one": 1}]), "{attack}");
            let names = rows(&engine, PREPARED_NAMES).await;
            assert!(kept(&names), "after {attack}: {names}");
        }
        let report = engine.session_report(CancellationToken::new()).await.unwrap();
        assert!(!report.pooler, "after {attack}, pgmcp works as behind a pooler");
    }
    engine.close().await;
}
