//! The catalog facts the guard judges functions with, read from a real
//! PostgreSQL: the fixtures the pure tests use are what the server answers,
//! and on a database where another user planted look-alike functions,
//! operators, a cast and a domain (`fixtures/guard/planted.sql`), every route
//! to them is refused in read-only mode and none of them runs.

use pgmcp::{Engine, QueryInput, QueryOutput};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, rows, run, writable};
use crate::support::findings::{Findings, verdict};
use crate::support::pg::{self, TestDb};
use crate::support::served::{pg_session, write_config};
use crate::support::stdio::{tool_json, tool_text};
use pgmcp::Error;
use pgmcp::{FunctionPattern, Rule};

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
        .list_tables(&pgmcp::TableFilter::default(), cancel())
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

// ---------------------------------------------------------------------------
// Planted objects, end to end through [`Engine::query`] against the harness's
// real PostgreSQL (connected as a superuser, the worst case): attacks that
// reach a function by a route the guard does not judge.
//
// The threat: a database user who may create objects in `public` (domains,
// views, types, casts, aggregates: no superuser needed) plants them
// beforehand; the agent then only sends SQL text. The guard promises that
// every function a statement can run, by any route, is judged: blocked
// functions in both modes, and in read-only mode only functions known to
// change nothing. Each case checks the guard's verdict and what the database
// shows afterwards (large objects, the bystander session, leaked file
// contents, settings). A case that gets through is a finding; all findings are
// reported at once.

async fn call(engine: &Engine, sql: &str) -> Result<QueryOutput, Error> {
    engine.query(&QueryInput::new(sql), CancellationToken::new()).await
}

/// What the planted objects could change: large objects in this database,
/// and whether the bystander session still exists.
fn state(db: &TestDb, bystanders: &[i64]) -> String {
    let pids: Vec<String> = bystanders.iter().map(i64::to_string).collect();
    db.psql(&format!(
        "SELECT 'large_objects=' || (SELECT count(*) FROM pg_largeobject_metadata) \
             || ' bystanders_alive=' || (SELECT count(*) FROM pg_stat_activity WHERE pid IN ({}))",
        pids.join(",")
    ))
}

/// An engine whose one connection sits idle: a session for
/// `pg_terminate_backend` to aim at. Returned with its backend's pid.
async fn bystander(db: &TestDb) -> (Engine, i64) {
    let engine = engine_for(db, |_| {});
    let pid = rows(&engine, "SELECT pg_backend_pid() AS pid").await[0]["pid"]
        .as_i64()
        .expect("a pid");
    (engine, pid)
}

/// The objects a hostile database user plants. Every function they end up
/// running is either blocked by default (`lo_import`, `lo_from_bytea`,
/// `pg_read_file`, `pg_terminate_backend`) or a user's own function that
/// writes (imports a server file as a large object, which a superuser's READ
/// ONLY transaction allows).
const PLANT: &str = r#"
CREATE FUNCTION public.plant(int) RETURNS bool LANGUAGE sql
    AS $$ SELECT pg_catalog.lo_import('/etc/hostname') > 0 $$;
-- Domains whose CHECK calls a built-in directly: routines.sql lists a
-- domain's functions only when they are not built-in (`WHERE NOT f.builtin`).
CREATE DOMAIN public.lo_path AS text CHECK (pg_catalog.lo_import(VALUE) > 0);
CREATE DOMAIN public.leak_path AS text CHECK (pg_catalog.pg_read_file(VALUE)::int > 0);
CREATE DOMAIN public.victim_pid AS int CHECK (pg_catalog.pg_terminate_backend(VALUE));
-- A domain over a domain: the cast facts name only the inner domain.
CREATE DOMAIN public.checked AS int CHECK (public.plant(VALUE));
CREATE DOMAIN public.rechecked AS public.checked;
-- A view: reading it runs its functions.
CREATE VIEW public.report AS SELECT pg_catalog.lo_import('/etc/hostname') AS id;
CREATE VIEW public.report2 AS SELECT public.plant(1) AS ok;
-- An implicit cast from a composite type the user owns to text.
CREATE TYPE public.pair AS (a int);
CREATE FUNCTION public.pair_text(public.pair) RETURNS text LANGUAGE sql
    AS $$ SELECT pg_catalog.lo_import('/etc/hostname')::text $$;
CREATE CAST (public.pair AS text) WITH FUNCTION public.pair_text(public.pair) AS IMPLICIT;
CREATE TABLE public.pairs (p public.pair);
INSERT INTO public.pairs VALUES (ROW(1));
-- An enum with a cast to json: to_json() and json_agg() use a cast to json
-- for a type defined outside pg_catalog, though the query holds no cast.
CREATE TYPE public.feel AS ENUM ('ok');
CREATE FUNCTION public.feel_json(public.feel) RETURNS json LANGUAGE sql
    AS $$ SELECT pg_catalog.to_json(pg_catalog.lo_import('/etc/hostname')) $$;
CREATE CAST (public.feel AS json) WITH FUNCTION public.feel_json(public.feel);
CREATE TABLE public.feels (f public.feel);
INSERT INTO public.feels VALUES ('ok');
-- A composite type and a table with a domain-typed attribute.
CREATE TYPE public.wrap AS (c public.checked);
CREATE TABLE public.files (p public.lo_path);
-- A table whose column default calls a blocked built-in.
CREATE TABLE public.inbox (id oid DEFAULT pg_catalog.lo_import('/etc/hostname'), note text);
-- An aggregate whose transition function is a blocked built-in.
CREATE AGGREGATE public.collect(bytea) (sfunc = pg_catalog.lo_from_bytea, stype = oid, initcond = '0');
"#;

/// One attack: the SQL, read-only mode or not, and the rule that must refuse it.
struct Attack {
    sql: String,
    read_only: bool,
    rule: Rule,
    route: &'static str,
}

#[tokio::test(flavor = "multi_thread")]
async fn planted_objects_cannot_run_functions_past_the_guard() {
    let db = pg::server().database();
    db.psql(PLANT);
    // One bystander per mode, so each mode's attack has a session to kill.
    let (_ro_bystander, ro_pid) = bystander(&db).await;
    let (_rw_bystander, rw_pid) = bystander(&db).await;
    let pids = [ro_pid, rw_pid];
    // Engines made after the plants: their catalog facts include them.
    let read_only = engine_for(&db, |_| {});
    let read_write = engine_for(&db, writable);

    let attack = |sql: String, read_only: bool, rule: Rule, route: &'static str| Attack {
        sql,
        read_only,
        rule,
        route,
    };
    let mut attacks = Vec::new();
    for ro in [true, false] {
        // In read-only mode a blocked function is refused as blocked-function
        // (judged before volatility); a user's function as read-only.
        attacks.push(attack(
            "SELECT '/etc/hostname'::lo_path".into(),
            ro,
            Rule::BlockedFunction,
            "domain CHECK calling lo_import",
        ));
        attacks.push(attack(
            "SELECT '/etc/hostname'::leak_path".into(),
            ro,
            Rule::BlockedFunction,
            "domain CHECK calling pg_read_file (contents leak in the error)",
        ));
        let pid = if ro { ro_pid } else { rw_pid };
        attacks.push(attack(
            format!("SELECT {pid}::victim_pid"),
            ro,
            Rule::BlockedFunction,
            "domain CHECK calling pg_terminate_backend",
        ));
        attacks.push(attack(
            "SELECT * FROM report".into(),
            ro,
            Rule::BlockedFunction,
            "view calling lo_import",
        ));
        attacks.push(attack(
            "SELECT public.collect('\\x41'::bytea)".into(),
            ro,
            // The support function is judged in both modes, and is blocked.
            Rule::BlockedFunction,
            "aggregate whose sfunc is lo_from_bytea",
        ));
    }
    attacks.push(attack(
        "SELECT 1::rechecked".into(),
        true,
        Rule::ReadOnly,
        "domain over a domain whose CHECK writes",
    ));
    attacks.push(attack(
        "SELECT '{1}'::_checked".into(),
        true,
        Rule::ReadOnly,
        "array of a domain whose CHECK writes",
    ));
    attacks.push(attack(
        "SELECT ARRAY[1]::_checked".into(),
        true,
        Rule::ReadOnly,
        "array of a domain whose CHECK writes",
    ));
    attacks.push(attack(
        "SELECT * FROM report2".into(),
        true,
        Rule::ReadOnly,
        "view calling a user's writing function",
    ));
    attacks.push(attack(
        "SELECT lower(p) FROM pairs".into(),
        true,
        Rule::ReadOnly,
        "implicit cast pair -> text",
    ));
    attacks.push(attack(
        "SELECT '(1)'::wrap".into(),
        true,
        Rule::ReadOnly,
        "cast into a composite type with a domain attribute",
    ));
    attacks.push(attack(
        "SELECT ROW(1)::wrap".into(),
        true,
        Rule::ReadOnly,
        "row constructor cast into a composite type with a domain attribute",
    ));
    attacks.push(attack(
        "SELECT * FROM json_to_record('{\"a\": 1}') AS x(a checked)".into(),
        true,
        Rule::ReadOnly,
        "column definition list typed with the domain",
    ));
    attacks.push(attack(
        "SELECT * FROM XMLTABLE('/a' PASSING ('<a>1</a>'::xml) COLUMNS a checked PATH '.')".into(),
        true,
        Rule::ReadOnly,
        "XMLTABLE column typed with the domain",
    ));
    attacks.push(attack(
        "INSERT INTO files VALUES ('/etc/hostname')".into(),
        false,
        Rule::BlockedFunction,
        "assignment into a domain column whose CHECK calls lo_import",
    ));
    attacks.push(attack(
        "SELECT to_json(f) FROM feels".into(),
        true,
        Rule::ReadOnly,
        "to_json() runs the type's cast to json",
    ));
    attacks.push(attack(
        "SELECT json_agg(f) FROM feels".into(),
        true,
        Rule::ReadOnly,
        "json_agg() runs the type's cast to json",
    ));
    attacks.push(attack(
        "INSERT INTO inbox (note) VALUES ('hi')".into(),
        false,
        Rule::BlockedFunction,
        "a planted column DEFAULT calling lo_import",
    ));
    // Held routes, kept as controls: the same plants named directly.
    attacks.push(attack(
        "SELECT 1::checked".into(),
        true,
        Rule::ReadOnly,
        "control: the domain itself",
    ));
    attacks.push(attack(
        "SELECT public.plant(1)".into(),
        true,
        Rule::ReadOnly,
        "control: the function itself",
    ));
    attacks.push(attack(
        "SELECT ROW(1)::pair::text".into(),
        true,
        Rule::ReadOnly,
        "control: explicit cast into text",
    ));

    let mut findings = Findings::default();
    for a in &attacks {
        let engine = if a.read_only { &read_only } else { &read_write };
        let before = state(&db, &pids);
        let result = call(engine, &a.sql).await;
        let after = state(&db, &pids);
        let mut problems = Vec::new();
        match &result {
            Err(Error::Guard(v)) if v.rule == a.rule => {}
            Err(Error::Guard(v)) => problems.push(format!(
                "refused, but by rule `{}` where `{}` was expected: {}",
                v.rule.name(),
                a.rule.name(),
                v.message
            )),
            other => problems.push(format!(
                "expected: refused by `{}`\n  got: {}",
                a.rule.name(),
                verdict(other)
            )),
        }
        if let Err(Error::Db(e)) = &result
            && e.message.contains("invalid input syntax for type integer")
        {
            problems.push(format!(
                "the server file's contents came back in the error: {}",
                e.message
            ));
        }
        if before != after {
            problems.push(format!(
                "changed the database:\n    before: {before}\n    after:  {after}"
            ));
        }
        let mode = if a.read_only { "read-only" } else { "read-write" };
        findings.case(&format!("[{mode}] {} ({})", a.sql, a.route), problems);
    }
    findings.assert_none("planted routes got past the guard");
}

/// The catalog facts are read once per connection and reused for up to a
/// minute. A call to a function name the facts do not know is refused in
/// read-only mode, and so is an operator the facts do not know ("it may have
/// been defined after the catalog was read"); but attribute notation with an
/// unknown name is taken for a column, and a cast into a type the facts do not
/// list runs unjudged. A user who creates the function or domain after
/// pgmcp's connection read the catalog gets it run.
#[tokio::test(flavor = "multi_thread")]
async fn objects_created_after_the_catalog_was_read_are_not_run() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
    let engine = engine_for(&db, |_| {});
    // The connection opens and reads the catalog.
    rows(&engine, "SELECT 1 AS warm").await;
    db.psql(
        "CREATE FUNCTION public.late(t) RETURNS oid LANGUAGE sql AS $$ SELECT pg_catalog.lo_import('/etc/hostname') $$; \
         CREATE FUNCTION public.late_check(int) RETURNS bool LANGUAGE sql AS $$ SELECT pg_catalog.lo_import('/etc/hostname') > 0 $$; \
         CREATE DOMAIN public.late_domain AS int CHECK (public.late_check(VALUE))",
    );
    let large_objects = || db.psql("SELECT count(*) FROM pg_largeobject_metadata");
    let mut findings = Findings::default();
    for (sql, what) in [
        ("SELECT late(t) FROM t", "control: the same function called by name"),
        (
            "SELECT t.late FROM t",
            "attribute notation, function created after the catalog was read",
        ),
        ("SELECT (t).late FROM t", "attribute notation on the row, same"),
        (
            "SELECT 1::late_domain",
            "cast into a domain created after the catalog was read",
        ),
    ] {
        let before = large_objects();
        let result = call(&engine, sql).await;
        let after = large_objects();
        let mut problems = Vec::new();
        if !matches!(&result, Err(Error::Guard(v)) if v.rule == Rule::ReadOnly) {
            problems.push(format!("expected: refused by `read-only`\n  got: {}", verdict(&result)));
        }
        if before != after {
            problems.push(format!("large objects: {before} before, {after} after"));
        }
        findings.case(&format!("{sql} ({what})"), problems);
    }
    findings.assert_none("late objects ran in read-only mode");
}

/// Read-only mode trusts the volatility of "functions an extension installed,
/// because only a superuser puts functions there". Not so: a trusted
/// extension (hstore, pgcrypto, citext, ...) may be created by any role with
/// CREATE on the database, which then owns it and may `ALTER EXTENSION ...
/// ADD FUNCTION` any function of its own. That function, declared STABLE,
/// becomes "read-only" to the guard, and pgmcp's role runs whatever it holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_function_added_to_a_trusted_extension_is_not_trusted() {
    let db = pg::server().database();
    let owner = format!("{}_ext_owner", db.name);
    db.psql(&format!(
        "CREATE ROLE {owner} NOLOGIN NOSUPERUSER; GRANT CREATE ON DATABASE {db} TO {owner}; \
         GRANT CREATE ON SCHEMA public TO {owner}; \
         SET ROLE {owner}; \
         CREATE EXTENSION hstore; \
         CREATE FUNCTION public.sneaky() RETURNS oid LANGUAGE sql STABLE \
             AS $$ SELECT pg_catalog.lo_import('/etc/hostname') $$; \
         ALTER EXTENSION hstore ADD FUNCTION public.sneaky(); \
         RESET ROLE",
        db = db.name
    ));
    let engine = engine_for(&db, |_| {});
    let large_objects = || db.psql("SELECT count(*) FROM pg_largeobject_metadata");
    let mut findings = Findings::default();
    // hstore's own functions stay trusted: a control that the extension is there.
    let control = call(&engine, "SELECT 'a=>1'::hstore -> 'a' AS v").await;
    findings.case(
        "control: hstore's own function",
        control
            .is_err()
            .then(|| format!("expected to run, got: {}", verdict(&control))),
    );
    let sql = "SELECT public.sneaky()";
    let before = large_objects();
    let result = call(&engine, sql).await;
    let after = large_objects();
    let mut problems = Vec::new();
    if !matches!(&result, Err(Error::Guard(v)) if v.rule == Rule::ReadOnly) {
        problems.push(format!("expected: refused by `read-only`\n  got: {}", verdict(&result)));
    }
    if before != after {
        problems.push(format!("large objects: {before} before, {after} after"));
    }
    findings.case(sql, problems);
    // The role is the cluster's, not the database's: remove it.
    db.psql(&format!(
        "DROP EXTENSION hstore CASCADE; DROP OWNED BY {owner}; REVOKE ALL ON DATABASE {db} FROM {owner}; DROP ROLE {owner}",
        db = db.name
    ));
    findings.assert_none("self-made extension members were trusted");
}

/// The catalog check skips its lookups while the server's snapshot has not
/// moved. The attacker's variants of changing the catalog behind it, each
/// made after many calls on an otherwise idle database (so the check is
/// answering from the snapshot), directly and through a transaction pooler
/// (where the check is sent unnamed): a view replaced in place to call a
/// planted function, a new look-alike function, a policy added to a table.
/// Every next call is refused and nothing planted runs.
#[tokio::test(flavor = "multi_thread")]
async fn catalog_changes_behind_a_quiet_snapshot_are_seen() {
    let server = pg::server();
    let mut findings = Findings::default();
    for through_pooler in [false, true] {
        let db = server.database();
        db.psql(
            "CREATE TABLE t (x int); INSERT INTO t VALUES (1);
             CREATE FUNCTION public.plant() RETURNS oid LANGUAGE sql AS 'SELECT pg_catalog.lo_create(0)';
             CREATE VIEW v AS SELECT x FROM t;",
        );
        let bouncer = through_pooler.then(|| crate::support::bouncer::Bouncer::start(server, "transaction"));
        let url = bouncer.as_ref().map_or_else(|| db.url.clone(), |b| b.url(&db));
        let engine = {
            let mut config = crate::support::engine::builtin_for_server();
            config.pool.max_conns = 1;
            let params = pgmcp::testing::postgres::params::resolve(Some(&url), &config.connection, &|_| None).unwrap();
            Engine::postgres(config, params)
        };
        let objects = || db.psql("SELECT count(*) FROM pg_largeobject_metadata");
        let changes = [
            (
                "CREATE OR REPLACE VIEW v AS SELECT x, public.plant() AS p FROM t",
                "SELECT * FROM v",
                "a view replaced in place",
            ),
            (
                "CREATE FUNCTION public.lower(int) RETURNS oid LANGUAGE sql AS 'SELECT public.plant()'",
                "SELECT lower(x) FROM t",
                "a better-matching look-alike of a built-in",
            ),
            (
                "ALTER TABLE t ENABLE ROW LEVEL SECURITY; ALTER TABLE t FORCE ROW LEVEL SECURITY; \
                 CREATE POLICY p ON t USING (public.plant() IS NOT NULL)",
                "SELECT x FROM t",
                "a policy that calls a planted function",
            ),
        ];
        for (change, sql, what) in changes {
            // Quiet: the check answers from the snapshot by now.
            for _ in 0..5 {
                let _ = call(&engine, "SELECT 1").await;
            }
            db.psql(change);
            let before = objects();
            let result = call(&engine, sql).await;
            let mut problems = Vec::new();
            if !matches!(&result, Err(Error::Guard(_))) {
                problems.push(format!("expected: refused by the guard\n  got: {}", verdict(&result)));
            }
            if objects() != before {
                problems.push(format!("large objects: {before} before, {} after", objects()));
            }
            let via = if through_pooler {
                "through a transaction pooler"
            } else {
                "directly"
            };
            findings.case(&format!("{what}, {via}: {sql}"), problems);
        }
        engine.close().await;
    }
    findings.assert_none("catalog changes behind a quiet snapshot went unseen");
}

// ---------------------------------------------------------------------------
// pgmcp's own SQL and the search path, through the real binary: type names
// in casts.

/// The database's owner puts a schema before `pg_catalog` on the search path
/// (`ALTER DATABASE ... SET search_path`) and plants a domain named `text`
/// there, whose CHECK calls a function of theirs. The catalog SQL writes
/// `$1::text` and `length(v)::text` unqualified: a cast resolves its type name
/// through the search path, so every cast to "text" would run the planted
/// function in `list_tables` with pgmcp's role. It must never run.
#[test]
fn planted_text_domain_never_runs_in_catalog_calls() {
    let db = pg::server().database();
    db.psql(&format!(
        "CREATE SCHEMA evil;
         CREATE FUNCTION evil.f(pg_catalog.text) RETURNS boolean LANGUAGE plpgsql AS
           $$BEGIN RAISE EXCEPTION 'PLANTED-CAST-RAN on %', $1; END$$;
         CREATE DOMAIN evil.text AS pg_catalog.text CHECK (evil.f(VALUE));
         CREATE TABLE public.t (a int);
         COMMENT ON TABLE public.t IS '{}';
         ALTER DATABASE {} SET search_path = evil, pg_catalog, public;",
        "c".repeat(5000),
        db.name
    ));
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut mcp = pg_session(&db, &config);
    for args in [json!({}), json!({"schema": "public"}), json!({"pattern": "t"})] {
        let result = mcp.call_tool("list_tables", args.clone());
        let text = tool_text(&result).to_owned();
        assert!(!text.contains("PLANTED-CAST-RAN"), "{args}: a planted cast ran: {text}");
        assert_ne!(result["isError"], true, "{args}: {text}");
        let out = tool_json(&result);
        assert_eq!(out["tables"][0]["name"], "t", "{args}: {out:#}");
    }
    let result = mcp.call_tool("describe_table", json!({"table": "t"}));
    let text = tool_text(&result).to_owned();
    assert!(
        !text.contains("PLANTED-CAST-RAN"),
        "describe_table: a planted cast ran: {text}"
    );
    assert_ne!(result["isError"], true, "{text}");
}
