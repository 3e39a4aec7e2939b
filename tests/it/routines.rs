//! The catalog facts the guard judges functions with, read from a real
//! PostgreSQL: the fixtures the pure tests use are what the server answers,
//! and on a database where another user planted look-alike functions,
//! operators, a cast and a domain (`fixtures/guard/planted.sql`), every route
//! to them is refused in read-only mode and none of them runs.

use serde_json::Value;

use crate::support::engine::{engine_for, rows, run, writable};
use crate::support::pg::{self, TestDb};
use pgmcp::Error;
use pgmcp::guard::{FunctionPattern, Rule};

const ROUTINES_SQL: &str = include_str!("../../src/backend/postgres/routines.sql");
const PLANTED_SQL: &str = include_str!("../../fixtures/guard/planted.sql");

/// The facts as the backend reads them, less the catalog's version (the
/// newest object IDs, which differ between clusters).
fn facts(db: &TestDb) -> Value {
    let sql = ROUTINES_SQL.replace("%VERSION%", "''");
    let mut facts: Value = serde_json::from_str(&db.psql(&sql)).expect("routines.sql returns one JSON document");
    facts["version"] = Value::Null;
    facts
}

fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/guard/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut facts: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    facts["version"] = Value::Null;
    facts
}

/// The fixtures are PostgreSQL 15's answers; on another major version the
/// built-in functions differ, and only the planted ones can be compared.
#[test]
fn the_fixtures_are_what_the_server_answers() {
    let db = pg::server().database();
    let fresh = facts(&db);
    db.psql(PLANTED_SQL);
    let planted = facts(&db);
    if db.major() == 15 {
        assert!(
            fresh == fixture("pg15-routines.json"),
            "pg15-routines.json is stale: {fresh}"
        );
        assert!(
            planted == fixture("planted-routines.json"),
            "planted-routines.json is stale: {planted}"
        );
    }
    assert_eq!(planted["functions"]["evil"], "untrusted");
    assert_eq!(planted["functions"]["lower"], "untrusted");
    assert_eq!(planted["operators"]["==="], serde_json::json!(["pg_read_file"]));
    assert_eq!(
        planted["casts"]["checked_text"],
        serde_json::json!([{"function": "evil_text", "via": "the constraint checked_text_check of domain public.checked_text"}])
    );
}

/// The facts name every built-in operator, cast and support function only
/// when it is not PostgreSQL's own: on a fresh database there are none, which
/// is what lets the guard skip them (routines.rs).
#[test]
fn built_in_operators_casts_and_support_functions_are_all_postgres_own() {
    let db = pg::server().database();
    let count = db.psql(
        "SELECT (SELECT count(*) FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode \
                 WHERE p.provolatile = 'v' OR p.pronamespace <> 'pg_catalog'::regnamespace) \
              + (SELECT count(*) FROM pg_cast c JOIN pg_proc p ON p.oid = c.castfunc \
                 WHERE p.provolatile = 'v' OR p.pronamespace <> 'pg_catalog'::regnamespace) \
              + (SELECT count(*) FROM pg_amproc a JOIN pg_proc p ON p.oid = a.amproc \
                 WHERE p.provolatile = 'v' OR p.pronamespace <> 'pg_catalog'::regnamespace)",
    );
    assert_eq!(count, "0");
}

/// A database user plants functions that create a large object (which a
/// READ ONLY transaction allows) behind every route; read-only mode refuses
/// each route, and no large object appears.
#[tokio::test(flavor = "multi_thread")]
async fn planted_functions_do_not_run_in_read_only_mode() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE t (x text); INSERT INTO t VALUES ('a');
         CREATE FUNCTION public.plant() RETURNS oid LANGUAGE sql STABLE AS 'SELECT pg_catalog.lo_create(0)';
         CREATE FUNCTION public.plant_text(text) RETURNS text LANGUAGE sql IMMUTABLE
             AS 'SELECT pg_catalog.lo_create(0)::text';
         CREATE FUNCTION public.plant_cmp(text, text) RETURNS bool LANGUAGE sql IMMUTABLE
             AS 'SELECT pg_catalog.lo_create(0) > 0';
         CREATE FUNCTION public.lower(varchar) RETURNS text LANGUAGE sql STABLE
             AS 'SELECT pg_catalog.lo_create(0)::text';
         CREATE OPERATOR public.<<< (LEFTARG = text, RIGHTARG = text, FUNCTION = public.plant_cmp);
         CREATE OPERATOR public.=== (RIGHTARG = text, FUNCTION = pg_catalog.pg_read_file);
         CREATE TYPE public.mood AS ENUM ('ok');
         CREATE FUNCTION public.mood_text(public.mood) RETURNS text LANGUAGE sql IMMUTABLE
             AS 'SELECT pg_catalog.lo_create(0)::text';
         CREATE CAST (public.mood AS text) WITH FUNCTION public.mood_text(public.mood);
         CREATE DOMAIN public.checked AS text CHECK (public.plant_text(VALUE) IS NOT NULL);",
    );
    let objects = || db.psql("SELECT count(*) FROM pg_largeobject_metadata");
    let engine = engine_for(&db, |_| {});
    let attacks = [
        "SELECT plant()",
        "SELECT public.plant()",
        "SELECT ('x'::text).plant_text",
        "SELECT (t.x).plant_text FROM t",
        "SELECT lower('X'::varchar)",
        "SELECT 'a' <<< 'b'",
        "SELECT 'a' OPERATOR(public.<<<) 'b'",
        "SELECT 1 WHERE 'a' <<< ANY (ARRAY['b'])",
        "SELECT x FROM t ORDER BY x USING <<<",
        "SELECT 'ok'::mood::text",
        "SELECT CAST('x' AS checked)",
        "SELECT checked 'x'",
    ];
    let mut through = Vec::new();
    for sql in attacks {
        match run(&engine, sql).await {
            Err(Error::Guard(v)) if v.rule == Rule::ReadOnly => {}
            other => through.push(format!("{sql}: {other:?}")),
        }
    }
    assert!(through.is_empty(), "not refused:\n{}", through.join("\n"));
    assert_eq!(objects(), "0", "a planted function ran");

    // An operator backed by a blocked built-in is refused in both modes.
    for engine in [engine_for(&db, |_| {}), engine_for(&db, writable)] {
        match run(&engine, "SELECT === '/etc/hostname'").await {
            Err(Error::Guard(v)) => assert_eq!(v.rule, Rule::BlockedFunction, "{v}"),
            other => panic!("=== ran: {other:?}"),
        }
    }

    // Reads that use only PostgreSQL's own functions still work here.
    assert_eq!(
        rows(
            &engine,
            "SELECT upper(x) AS u, count(*) AS n FROM t GROUP BY 1 ORDER BY 1"
        )
        .await,
        serde_json::json!([{"u": "A", "n": 1}])
    );
    // A user's function the person vouches for runs.
    let vouched = engine_for(&db, |c| {
        c.protection
            .read_only_functions
            .push(FunctionPattern::new("public.plant_text(text)"))
    });
    match run(&vouched, "SELECT plant_text('x') IS NOT NULL AS ok").await {
        Ok(_) => assert_eq!(objects(), "1", "the vouched-for function ran once"),
        // Newer servers (18, and late minor releases of 16 and 17) refuse
        // lo_create in a read-only transaction themselves: the function ran
        // as far as that.
        Err(Error::Db(e)) if e.code() == "25006" => {
            assert!(e.to_string().contains("lo_create"), "{e}");
        }
        Err(e) => panic!("the vouched-for function did not run: {e}"),
    }
}

/// A function created after pgmcp read the catalog is unknown, and refused in
/// read-only mode (it could be a new overload of anything), even one the
/// person vouched for by its signature: vouching names a function the facts
/// know. Once a call has found the catalog changed and the facts are read
/// again, the vouched-for function runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_function_created_later_is_refused_until_the_facts_know_it() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| {
        c.protection
            .read_only_functions
            .push(FunctionPattern::new("public.later()"))
    });
    assert!(run(&engine, "SELECT 1").await.is_ok());
    db.psql("CREATE FUNCTION public.sneaky() RETURNS int LANGUAGE sql STABLE AS 'SELECT 1'");
    match run(&engine, "SELECT sneaky()").await {
        Err(Error::Guard(v)) => {
            assert_eq!(v.rule, Rule::ReadOnly);
            assert!(v.message.contains("not in the database's catalog"), "{v}");
        }
        other => panic!("sneaky() ran: {other:?}"),
    }
    db.psql("CREATE FUNCTION public.later() RETURNS int LANGUAGE sql STABLE AS 'SELECT 7'");
    match run(&engine, "SELECT later()").await {
        Err(Error::Guard(v)) => assert!(v.message.contains("not in the database's catalog"), "{v}"),
        other => panic!("later() ran on facts that do not know it: {other:?}"),
    }
    // Any call finds the catalog changed, and the facts are read again.
    assert!(run(&engine, "SELECT 1").await.is_ok());
    assert_eq!(
        rows(&engine, "SELECT later() AS l").await,
        serde_json::json!([{"l": 7}])
    );
}

/// A database user who can create objects in `public` (on every role's
/// search path) plants better-matching look-alikes of the functions and
/// operators pgmcp's own catalog SQL uses, each creating a large object when
/// it runs. Every tool still answers, and none of them ran.
#[tokio::test(flavor = "multi_thread")]
async fn look_alikes_on_the_search_path_never_run_in_pgmcp_own_sql() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE public.orders (id int PRIMARY KEY, note text DEFAULT 'x', CHECK (id > 0));
         COMMENT ON TABLE public.orders IS 'orders';
         CREATE VIEW public.recent AS SELECT id FROM public.orders;
         CREATE TYPE public.mood AS ENUM ('ok');
         CREATE TABLE public.moods (m public.mood);
         CREATE FUNCTION public.plant() RETURNS oid LANGUAGE sql AS 'SELECT pg_catalog.lo_create(0)';
         CREATE FUNCTION public.quote_ident(name) RETURNS text LANGUAGE sql
             AS 'SELECT public.plant()::text';
         CREATE FUNCTION public.json_build_object(text, text) RETURNS json LANGUAGE sql
             AS 'SELECT pg_catalog.json_build_object(''planted'', public.plant())';
         CREATE FUNCTION public.json_agg(anyelement) RETURNS json LANGUAGE sql AS 'SELECT NULL::json';
         CREATE FUNCTION public.unnest(oid[]) RETURNS SETOF oid LANGUAGE sql AS 'SELECT public.plant()';
         CREATE FUNCTION public.format_type(oid, int) RETURNS text LANGUAGE sql AS 'SELECT public.plant()::text';
         CREATE FUNCTION public.name_eq(name, text) RETURNS bool LANGUAGE sql
             AS 'SELECT public.plant() IS NOT NULL';
         CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = text, FUNCTION = public.name_eq);
         CREATE FUNCTION public.char_eq(\"char\", text) RETURNS bool LANGUAGE sql
             AS 'SELECT public.plant() IS NOT NULL';
         CREATE OPERATOR public.= (LEFTARG = \"char\", RIGHTARG = text, FUNCTION = public.char_eq);",
    );
    let objects = || db.psql("SELECT count(*) FROM pg_largeobject_metadata");
    let engine = engine_for(&db, |_| {});
    let cancel = tokio_util::sync::CancellationToken::new;
    let list = engine
        .list_tables(&pgmcp::catalog::TableFilter::default(), cancel())
        .await
        .expect("list_tables");
    let names: Vec<&str> = list.tables.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"orders") && names.contains(&"recent"), "{names:?}");
    let described = engine
        .describe_table("orders", None, cancel())
        .await
        .expect("describe_table");
    let json = serde_json::to_value(&described).unwrap();
    assert_eq!(json["columns"][0]["name"], "id", "{json}");
    assert!(engine.describe_table("recent", None, cancel()).await.is_ok());
    // The agent's own queries: read-only mode refuses them while a user's
    // = could run in any comparison, and in read-write mode they run (a
    // type lookup for mood, close names for a misspelled table) without any
    // look-alike in pgmcp's part.
    let refused = run(&engine, "SELECT m FROM moods").await;
    assert!(
        matches!(&refused, Err(Error::Guard(v)) if v.rule == Rule::ReadOnly),
        "{refused:?}"
    );
    let writable = engine_for(&db, writable);
    assert!(run(&writable, "SELECT m FROM moods").await.is_ok());
    assert!(run(&writable, "SELECT * FROM ordrs").await.is_err());
    assert!(engine.session_report(cancel()).await.is_ok());
    assert_eq!(objects(), "0", "a look-alike ran inside pgmcp's own SQL");
}

/// The catalog check runs its lookups only when something has committed
/// since it last found the catalog at its version; otherwise it answers from
/// the server's snapshot. Seen in the server's own statistics: the check's
/// scan of `pg_rewrite` is counted once per lookup, and a fresh engine (one
/// connection: its calls are sequential) is compared with itself:
/// 1 call, 31 calls, and 2 calls with a commit between them.
#[tokio::test(flavor = "multi_thread")]
async fn the_catalog_check_looks_again_only_after_a_commit() {
    // A cluster of its own: any commit anywhere in a shared one (other
    // tests, autovacuum) would rightly bring the lookups back.
    let server = pg::private_server();
    server.configure(&[("autovacuum", "off")]);
    let db = server.database();
    let major = db.major();
    let scans = || -> u64 {
        // A backend's statistics are written when it exits, before it leaves
        // pg_stat_activity: wait for the engine's connection to go.
        let gone = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while db.psql(&format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()",
            db.name
        )) != "0"
        {
            assert!(
                std::time::Instant::now() < gone,
                "the engine's connection did not close"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if major < 15 {
            // Before 15 a statistics collector receives them, and a session
            // may read its file up to 500 ms old: read one written after.
            std::thread::sleep(std::time::Duration::from_millis(700));
        }
        db.psql("SELECT seq_scan FROM pg_stat_sys_tables WHERE relname = 'pg_rewrite'")
            .parse()
            .unwrap()
    };
    let calls = async |n: usize, commit_between: bool| -> u64 {
        let before = scans();
        let engine = engine_for(&db, |_| {});
        for i in 0..n {
            if commit_between && i > 0 {
                db.psql("CREATE TABLE IF NOT EXISTS t (); DROP TABLE t");
            }
            assert_eq!(rows(&engine, "SELECT 1 AS one").await, serde_json::json!([{"one": 1}]));
        }
        drop(engine);
        scans() - before
    };
    let one = calls(1, false).await;
    assert!(one >= 1, "the first call of an engine looks the catalog up");
    assert_eq!(
        calls(31, false).await,
        one,
        "calls while nothing commits look nothing up again"
    );
    assert_eq!(
        calls(2, true).await,
        one + 1,
        "a call after a commit looks the catalog up again"
    );
}

/// While nothing commits, a connection's calls make the quick catalog check
/// (only that the server's snapshot has not moved). The attacker's variants
/// of changing what a read runs while the connection is quiet: a view
/// replaced; a row-level policy added; and a replacement made in a
/// transaction that was already open (prepared, two-phase) while the calls
/// went on, committed only afterwards, so the snapshot the quiet calls saw
/// already held it as in progress; a later transaction committed first, so
/// the commit only takes it off the snapshot's list of transactions in
/// progress and moves nothing else. Each moves the snapshot, so the call
/// makes the full check, finds the catalog changed and is judged again with
/// new facts: refused, and no large object is ever made; in read-only and
/// in writable mode. A cluster of its own, so that nothing else commits.
#[tokio::test(flavor = "multi_thread")]
async fn a_quiet_connection_still_sees_the_catalog_change() {
    let server = pg::private_server();
    server.configure(&[("autovacuum", "off"), ("max_prepared_transactions", "2")]);
    let variants: [(&str, &str, &str, &str); 3] = [
        (
            "a view replaced",
            "CREATE VIEW public.shown AS SELECT 1 AS one",
            "CREATE OR REPLACE VIEW public.shown AS SELECT 1 AS one, pg_catalog.lo_create(0) AS made",
            "",
        ),
        (
            "a policy added",
            "CREATE TABLE public.shown (one int); INSERT INTO public.shown VALUES (1); \
             ALTER TABLE public.shown ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY",
            "CREATE POLICY sneaky ON public.shown USING (pg_catalog.lo_create(0) > 0)",
            "",
        ),
        (
            "a replacement open during the calls, committed after",
            "CREATE VIEW public.shown AS SELECT 1 AS one",
            "BEGIN; CREATE OR REPLACE VIEW public.shown AS SELECT 1 AS one, pg_catalog.lo_create(0) AS made; \
             PREPARE TRANSACTION 'sneaky'; CREATE TABLE public.later ()",
            "COMMIT PREPARED 'sneaky'",
        ),
    ];
    for ((variant, setup, change, commit), read_only) in variants.iter().flat_map(|v| [(v, true), (v, false)]) {
        let variant = format!("{variant} ({})", if read_only { "read-only" } else { "writable" });
        let (setup, change, commit) = (*setup, *change, *commit);
        let db = server.database();
        db.psql(setup);
        let engine = engine_for(&db, |c| {
            c.pool.max_conns = 1;
            c.read_only = read_only;
            // The superuser login itself: pg_read_all_data, which read-only
            // mode would run it as, sees no row of the table whose row
            // security has no policy yet.
            c.connection.read_only_as_login = true;
        });
        let open_during_calls = !commit.is_empty();
        if open_during_calls {
            // The open transaction locks the view: the quiet calls read
            // something else.
            db.psql(change);
        } else {
            assert_eq!(
                rows(&engine, "SELECT one FROM shown").await,
                serde_json::json!([{"one": 1}]),
                "{variant}: read before the change"
            );
        }
        for _ in 0..4 {
            assert_eq!(
                rows(&engine, "SELECT 1 AS one").await,
                serde_json::json!([{"one": 1}]),
                "{variant}"
            );
        }
        let prepared = rows(&engine, "SELECT name FROM pg_prepared_statements ORDER BY name").await;
        assert!(
            prepared.to_string().contains("pgmcp_catalog_unchanged"),
            "{variant}: calls while nothing commits make the quick check: {prepared}"
        );
        db.psql(if open_during_calls { commit } else { change });
        match run(&engine, "SELECT one FROM shown").await {
            Err(Error::Guard(v)) => assert!(v.message.contains("lo_create"), "{variant}: {v}"),
            other => panic!("{variant}: the changed relation was read: {other:?}"),
        }
        assert_eq!(
            db.psql("SELECT count(*) FROM pg_largeobject_metadata"),
            "0",
            "{variant}"
        );
        // And calls that read go on.
        assert_eq!(
            rows(&engine, "SELECT 2 AS two").await,
            serde_json::json!([{"two": 2}]),
            "{variant}"
        );
    }
}

/// A new overload committed while the call is between its catalog check and
/// its statement's name resolution: the statement's `Parse` waits for a
/// lock on the table it reads, which a second session holds while it
/// creates a better-matching `f(int)`, then commits, releasing the lock.
/// The statement's names resolve after that commit, so the check, which
/// runs after them, must see it: the call is judged again and refused in
/// read-only mode (only `f(bigint)` is vouched for), and the new overload
/// never runs. (With the check before the statement's `Parse`, the check
/// passed, and `f(int)` ran on facts that did not know it.)
#[tokio::test(flavor = "multi_thread")]
async fn an_overload_committed_while_the_statement_waits_to_parse_is_seen() {
    use std::io::{BufRead, BufReader, Write};
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE public.t (x int); INSERT INTO public.t VALUES (1);
         CREATE FUNCTION public.f(x bigint) RETURNS bigint LANGUAGE sql STABLE AS 'SELECT x'",
    );
    let engine = engine_for(&db, |c| {
        c.pool.max_conns = 1;
        c.protection
            .read_only_functions
            .push(FunctionPattern::new("public.f(bigint)"));
    });
    let sql = "SELECT f(x) AS v FROM t";
    assert_eq!(rows(&engine, sql).await, serde_json::json!([{"v": 1}]));

    let mut session = db.psql_session().spawn().expect("psql starts");
    let mut stdin = session.stdin.take().expect("stdin is piped");
    let mut stdout = BufReader::new(session.stdout.take().expect("stdout is piped"));
    let mut wait_for = |stdin: &mut std::process::ChildStdin, sql: &str, mark: &str| {
        stdin
            .write_all(format!("{sql}\nSELECT '{mark}';\n").as_bytes())
            .expect("psql reads");
        let mut line = String::new();
        while line.trim() != mark {
            line.clear();
            assert!(stdout.read_line(&mut line).expect("psql answers") > 0, "psql ended");
        }
    };
    wait_for(
        &mut stdin,
        "BEGIN; LOCK TABLE public.t IN ACCESS EXCLUSIVE MODE;",
        "locked",
    );

    let engine = std::sync::Arc::new(engine);
    let call = tokio::spawn({
        let engine = std::sync::Arc::clone(&engine);
        async move { run(&engine, sql).await }
    });
    let waiting = "SELECT count(*) FROM pg_catalog.pg_locks \
                   WHERE relation = 'public.t'::pg_catalog.regclass AND NOT granted";
    let started = std::time::Instant::now();
    while db.psql(waiting) != "1" {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the call never waited for the table"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    wait_for(
        &mut stdin,
        "CREATE FUNCTION public.f(x int) RETURNS bigint LANGUAGE sql STABLE AS 'SELECT 42::bigint'; COMMIT;",
        "committed",
    );
    drop(stdin);
    let _ = session.wait();

    match call.await.expect("the call's task") {
        Err(Error::Guard(v)) => assert!(v.message.contains("public.f(integer)"), "{v}"),
        other => panic!("the new overload was not judged: {other:?}"),
    }
    // Calls go on: nothing of the refused call is left on the connection.
    assert_eq!(
        rows(&engine, "SELECT x AS v FROM t").await,
        serde_json::json!([{"v": 1}])
    );
}
