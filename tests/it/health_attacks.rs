//! Red-team attacks on `explain`'s `hypothetical_indexes` (hypopg) and on
//! `diagnose`, end to end through the real binary on the harness's
//! PostgreSQL 15. Every test asserts the SAFE outcome: a passing test means
//! the attack failed. After each attempt the test looks at the database
//! (a tripwire table written through dblink, so that even a write from a
//! rolled-back READ ONLY transaction shows), at the session pgmcp keeps
//! (pool of one: does the next plain `explain` see a hypothetical index?),
//! at other clients of a pooler, and at what the answer shows.
//!
//! The attacker is the model calling the tools and, where said, another
//! database user (`mallory`, no superuser) who may create objects in
//! schemas it is allowed to.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::bouncer::Bouncer;
use crate::support::pg;
use crate::support::psql_session::Session;
use crate::support::served::write_config;
use crate::support::stdio::{McpProcess, is_error, tool_json, tool_text};

/// The statement whose plan shows a leftover hypothetical index on `t (a)`.
const BY_A: &str = "SELECT * FROM t WHERE a = 7";

/// A database with hypopg, dblink, a table `t`, the tripwire `trip(text)`
/// (an `IMMUTABLE` plpgsql function that records its argument in
/// `tripped` through a dblink connection of its own: it survives any
/// rollback and any READ ONLY transaction), and a non-superuser `mallory`
/// that may create objects in `public`.
struct Victim {
    db: pg::TestDb,
    mallory: String,
}

fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn victim() -> Victim {
    victim_on(pg::server())
}

fn victim_on(server: &pg::PgServer) -> Victim {
    let db = server.database();
    let conn = format!(
        "host={} port={} user={} password={} dbname={}",
        server.host(),
        server.port(),
        server.admin_user(),
        server.admin_password(),
        db.name
    );
    let mallory = format!("{}_mallory", db.name);
    db.psql(&format!(
        "CREATE EXTENSION hypopg;
         CREATE EXTENSION dblink;
         CREATE TABLE t (id int PRIMARY KEY, a int NOT NULL, b text NOT NULL, v varchar NOT NULL);
         INSERT INTO t SELECT g, g % 500, 'b' || g, 'v' || g FROM generate_series(1, 20000) g;
         ANALYZE t;
         CREATE TABLE tripped (what text NOT NULL);
         CREATE TABLE counter (n int NOT NULL); INSERT INTO counter VALUES (0);
         CREATE SEQUENCE s;
         CREATE FUNCTION trip(what text) RETURNS int LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER AS $f$
           BEGIN PERFORM dblink_exec({conn}, format('INSERT INTO tripped VALUES (%L)', what)); RETURN 1; END $f$;
         CREATE ROLE {mallory} LOGIN PASSWORD 'pw';
         GRANT CREATE, USAGE ON SCHEMA public TO {mallory};
         GRANT SELECT ON t TO {mallory};",
        conn = literal(&conn)
    ));
    // The tripwire works from a READ ONLY transaction that is rolled back.
    db.psql("BEGIN READ ONLY; SELECT trip('selftest'); ROLLBACK;");
    assert_eq!(db.psql("SELECT string_agg(what, ',') FROM tripped"), "selftest");
    db.psql("TRUNCATE tripped");
    Victim { db, mallory }
}

impl Victim {
    /// What the tripwire recorded, comma-separated ("" when nothing ran).
    fn tripped(&self) -> String {
        self.db
            .psql("SELECT coalesce(string_agg(what, ',' ORDER BY what), '') FROM tripped")
    }

    /// Rows, counter, sequence, real indexes: what a write would change.
    fn state(&self) -> String {
        self.db.psql(
            "SELECT (SELECT count(*) FROM t) || '/' || (SELECT n FROM counter) || '/' || \
             (SELECT last_value FROM s) || '/' || (SELECT count(*) FROM pg_indexes WHERE schemaname = 'public')",
        )
    }

    /// `sql` as mallory.
    fn as_mallory(&self, sql: &str) -> String {
        self.db.psql(&format!("SET ROLE {}; {sql}", self.mallory))
    }
}

fn serve_url(url: &str, extra: Value) -> (tempfile::TempDir, McpProcess) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), extra);
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", url)]);
    mcp.initialize();
    (dir, mcp)
}

/// One connection, in the mode asked for: the next call runs in the
/// session the previous one used.
fn serve(db: &pg::TestDb, read_only: bool, extra: Value) -> (tempfile::TempDir, McpProcess) {
    let mut config = json!({"server": {"read_only": read_only}, "pool": {"max_conns": 1}});
    if let (Some(base), Some(more)) = (config.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            match (base.get_mut(k), v) {
                (Some(Value::Object(b)), Value::Object(m)) => b.extend(m.clone()),
                _ => {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
    }
    serve_url(&db.url, config)
}

fn explain(mcp: &mut McpProcess, sql: &str, hypothetical: &[&str]) -> Value {
    let got = mcp.call_tool("explain", json!({"sql": sql, "hypothetical_indexes": hypothetical}));
    // What each attempt got, for the run's log (`--nocapture`).
    let said = match is_error(&got) {
        true => format!("refused: {}", tool_text(&got)),
        false => format!("planned: {}", tool_json(&got)["hypothetical_indexes"]),
    };
    eprintln!("{hypothetical:?} -> {}", said.chars().take(300).collect::<String>());
    got
}

/// Whether a plain plan in the session pgmcp keeps shows a hypothetical
/// index (hypopg names them `<oid>...`).
fn leftover(mcp: &mut McpProcess) -> Option<String> {
    let got = mcp.call_tool("explain", json!({"sql": BY_A}));
    assert!(!is_error(&got), "{got}");
    let plan = tool_json(&got)["plan"].to_string();
    plan.contains("btree_").then_some(plan)
}

// ---------------------------------------------------------------------------
// hypothetical_indexes
// ---------------------------------------------------------------------------

/// The guard judges a definition with catalog facts up to a minute old;
/// the statement only runs once the catalog is confirmed to be at the
/// facts' version. hypopg's `hypopg_create_index` folds `IMMUTABLE` calls
/// with constant arguments in the predicate: it must run after that check
/// too (it once ran before it, in the same round trip). Mallory creates
/// `public.lower(varchar)` after pgmcp read the catalog: PostgreSQL's
/// resolution now picks it (exact match) where the guard's stale facts see
/// only `pg_catalog.lower`.
#[test]
fn the_prelude_runs_only_after_the_catalog_check() {
    let v = victim();
    let definition = "CREATE INDEX ON t (b) WHERE b > lower('x'::varchar)";
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        // Facts read now, with only PostgreSQL's lower(): allowed, harmless.
        let got = explain(&mut mcp, "SELECT * FROM t WHERE b > 'y'", &[definition]);
        assert!(!is_error(&got), "{got}");
        v.as_mallory(
            "CREATE FUNCTION public.lower(varchar) RETURNS text LANGUAGE plpgsql IMMUTABLE AS \
             $$BEGIN PERFORM trip('shadowing lower ran as ' || current_user); RETURN 'x'; END$$",
        );
        let got = explain(&mut mcp, "SELECT * FROM t WHERE b > 'y'", &[definition]);
        let tripped = v.tripped();
        if !tripped.is_empty() {
            failures.push(format!("read_only={read_only}: tripped [{tripped}]; answer {got}"));
        }
        // A query, judged with fresh facts, is refused.
        if read_only {
            let again = mcp.call_tool("query", json!({"sql": "SELECT lower('x'::varchar)"}));
            assert!(is_error(&again), "{again}");
        }
        v.db.psql("DROP FUNCTION public.lower(varchar); TRUNCATE tripped");
    }
    assert!(
        failures.is_empty(),
        "a function the guard refuses ran:\n{}",
        failures.join("\n")
    );
}

/// Definitions that reach a function a query may not run, by every route a
/// definition has; and a user's collation, opclass, operator and domain.
/// Nothing may run, in either mode; nothing is left.
#[test]
fn definitions_run_nothing_a_query_may_not() {
    let v = victim();
    v.as_mallory(
        "CREATE FUNCTION public.f_int(int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('f_int'); RETURN $1; END$$;
         CREATE FUNCTION public.f_row(t) RETURNS int LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('f_row'); RETURN 1; END$$;
         CREATE FUNCTION public.f_sql(int) RETURNS int LANGUAGE sql IMMUTABLE AS \
           $$SELECT trip('f_sql') + $1$$;
         CREATE DOMAIN public.dpos AS int CHECK (trip('domain check') = 1);
         CREATE TYPE public.box1 AS (x int);
         CREATE FUNCTION public.to_box1(int) RETURNS public.box1 LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('cast'); RETURN ROW($1); END$$;
         CREATE CAST (int AS public.box1) WITH FUNCTION public.to_box1(int);
         CREATE COLLATION public.mcoll (provider = libc, locale = 'C');",
    );
    let before = v.state();
    let definitions: &[&str] = &[
        "CREATE INDEX ON t (a) WHERE a > f_int(1)",
        "CREATE INDEX ON t ((f_int(1) + a))",
        "CREATE INDEX ON t (a) WHERE a > public.f_int(1)",
        "CREATE INDEX ON t (a) WHERE a > \"f_int\"(1)",
        "CREATE INDEX ON t (a) WHERE a > f_sql(1)",
        "CREATE INDEX ON t ((f_row(t)))",
        "CREATE INDEX ON t ((t.f_row))",
        "CREATE INDEX ON t (a) WHERE (t).f_row > 0",
        "CREATE INDEX ON t (a) WHERE a = 1::dpos",
        "CREATE INDEX ON t (a) WHERE a = CAST(1 AS dpos)",
        "CREATE INDEX ON t (a) WHERE (1::box1).x = a",
        "CREATE INDEX ON t (a) INCLUDE (b) WHERE trip('include') = 1",
        "CREATE INDEX ON t USING hash ((trip('hash')))",
        "CREATE INDEX ON t (a) WHERE pg_terminate_backend(pg_backend_pid())",
        "CREATE INDEX ON t (a) WHERE set_config('default_transaction_read_only', 'off', false) = 'off'",
        "CREATE INDEX ON t (a) WHERE a > nextval('s')",
        "CREATE INDEX ON t ((dblink_exec('dbname=postgres', 'SELECT 1')))",
        "CREATE INDEX ON t (a) WHERE pg_read_file('/etc/passwd') IS NOT NULL",
        "CREATE INDEX ON t (b COLLATE mcoll)",
        "CREATE INDEX ON t (a) WHERE a IN (SELECT trip('subquery'))",
        "CREATE INDEX ON t (a) WHERE a > (WITH x AS (SELECT trip('cte')) SELECT 1)",
        "CREATE INDEX ON t (a) WHERE lower(b) > 'a' /* ; */ AND a > f_int(2)",
        "CREATE INDEX ON t (a) WHERE b = $$;$$ AND a > f_int(3)",
    ];
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        for definition in definitions {
            let got = explain(&mut mcp, BY_A, &[definition]);
            let tripped = v.tripped();
            if !tripped.is_empty() {
                failures.push(format!(
                    "read_only={read_only}: {definition}: tripped [{tripped}]: {got}"
                ));
                v.db.psql("TRUNCATE tripped");
            }
            if v.state() != before {
                failures.push(format!(
                    "read_only={read_only}: {definition}: state {} != {before}",
                    v.state()
                ));
            }
            if let Some(plan) = leftover(&mut mcp) {
                failures.push(format!("read_only={read_only}: {definition}: left an index: {plan}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The definition travels inside `E'...'`: backslashes, quotes, escapes of
/// other string syntaxes, a NUL, line breaks, unicode. None may end the
/// literal early and run what follows; none may leave anything.
#[test]
fn the_definition_stays_inside_its_literal() {
    let v = victim();
    let before = v.state();
    let definitions: Vec<String> = vec![
        r"CREATE INDEX ON t (a) WHERE b = 'x\'') ; SELECT trip('bs1') --'".into(),
        r"CREATE INDEX ON t (a) WHERE b = E'x\'') ; SELECT trip(''bs2'') --'".into(),
        r"CREATE INDEX ON t (a) WHERE b = E'\\' AND b = ') AS h; SELECT trip(''bs3''); --'".into(),
        r"CREATE INDEX ON t (a) WHERE b = U&'\0027) AS h; SELECT trip(''uesc'') --'".into(),
        r"CREATE INDEX ON t (a) WHERE b = U&'!0027' UESCAPE '!'".into(),
        r"CREATE INDEX ON t (a) WHERE b = $q$') AS h; SELECT trip('dollar'); --$q$".into(),
        "CREATE INDEX ON t (a) WHERE b = 'x\u{0}'') AS h; SELECT trip(''nul'') --'".into(),
        "CREATE INDEX ON t (a) WHERE b = 'x'\n') AS h; SELECT trip(''newline'') --'".into(),
        "CREATE INDEX ON t (a) WHERE b = 'x\r\n'' ; SELECT trip(''crlf'') --'".into(),
        "CREATE INDEX ON t (a) WHERE b = 'ʼ\u{2019}\u{FF07}' -- \u{2028}'); SELECT trip('unicode')".into(),
        r"CREATE INDEX ON t (a) WHERE b = '\x27) AS h; SELECT trip(''hex'') --'".into(),
        r"CREATE INDEX ON t (a) WHERE b = '\\\\\\\'' ".into(),
        "CREATE INDEX ON t (a) WHERE b = 'x' /* ') AS h; SELECT trip('comment'); -- */".into(),
        "CREATE INDEX ON t (a);".into(),
        "CREATE INDEX ON t (a); CREATE INDEX ON t ((trip('second')))".into(),
        "CREATE INDEX ON t (a) -- \n; SELECT trip('after comment')".into(),
    ];
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        for definition in &definitions {
            let got = explain(&mut mcp, BY_A, &[definition]);
            let tripped = v.tripped();
            if !tripped.is_empty() {
                failures.push(format!(
                    "read_only={read_only}: {definition:?}: tripped [{tripped}]: {got}"
                ));
                v.db.psql("TRUNCATE tripped");
            }
            if v.state() != before {
                failures.push(format!("read_only={read_only}: {definition:?}: state changed"));
            }
            if let Some(plan) = leftover(&mut mcp) {
                failures.push(format!("read_only={read_only}: {definition:?}: left an index: {plan}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// PostgreSQL 16 and 17 made `JSON_ARRAY(...)`, `JSON_SCALAR(...)`,
/// `JSON_VALUE(...)`, `JSON(...)` SQL syntax; pgmcp's parser (PostgreSQL
/// 18's) reads them as constructor nodes that name no function, while
/// PostgreSQL 15's grammar reads them as ordinary calls, resolved by name
/// along the search path: to mallory's functions of those names.
#[test]
fn sql_json_syntax_is_read_as_the_server_reads_it() {
    let v = victim();
    v.as_mallory(
        "CREATE FUNCTION public.json_array(int, int) RETURNS json LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_array'); RETURN '[]'; END$$;
         CREATE FUNCTION public.json_scalar(int) RETURNS json LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_scalar'); RETURN '1'; END$$;
         CREATE FUNCTION public.json_serialize(json) RETURNS text LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_serialize'); RETURN ''; END$$;
         CREATE FUNCTION public.json_value(jsonb, text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_value'); RETURN ''; END$$;
         CREATE FUNCTION public.json_query(jsonb, text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_query'); RETURN '1'; END$$;
         CREATE FUNCTION public.json_exists(jsonb, text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_exists'); RETURN true; END$$;
         CREATE FUNCTION public.json(text) RETURNS json LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json'); RETURN '1'; END$$;
         CREATE FUNCTION public.json_objectagg(int) RETURNS json LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_objectagg'); RETURN '1'; END$$;",
    );
    let definitions: &[&str] = &[
        "CREATE INDEX ON t (a) WHERE JSON_ARRAY(1, 2) IS NOT NULL",
        "CREATE INDEX ON t (a) WHERE JSON_SCALAR(1) IS NOT NULL",
        "CREATE INDEX ON t (a) WHERE JSON_SERIALIZE('1'::json) IS NOT NULL",
        "CREATE INDEX ON t (a) WHERE JSON_VALUE('{}'::jsonb, '$.a') IS NOT NULL",
        "CREATE INDEX ON t (a) WHERE JSON_QUERY('{}'::jsonb, '$.a') IS NOT NULL",
        "CREATE INDEX ON t (a) WHERE JSON_EXISTS('{}'::jsonb, '$.a')",
        "CREATE INDEX ON t (a) WHERE JSON('1') IS NOT NULL",
    ];
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        for definition in definitions {
            let got = explain(&mut mcp, BY_A, &[definition]);
            let tripped = v.tripped();
            if !tripped.is_empty() {
                failures.push(format!(
                    "read_only={read_only}: {definition}: tripped [{tripped}]: {got}"
                ));
                v.db.psql("TRUNCATE tripped");
            }
            if let Some(plan) = leftover(&mut mcp) {
                failures.push(format!("read_only={read_only}: {definition}: left an index: {plan}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same SQL/JSON syntax in a plain `query` and in `explain`'s own
/// statement (read-only mode): is the divergence the guard's, everywhere?
#[test]
fn sql_json_syntax_in_a_query() {
    let v = victim();
    v.as_mallory(
        "CREATE FUNCTION public.json_array(int, int) RETURNS json LANGUAGE plpgsql IMMUTABLE AS \
           $$BEGIN PERFORM trip('json_array ' || current_user); RETURN '[]'; END$$;",
    );
    let (_dir, mut mcp) = serve(&v.db, true, json!({}));
    let got = mcp.call_tool("query", json!({"sql": "SELECT JSON_ARRAY(1, 2) AS j"}));
    let by_query = v.tripped();
    v.db.psql("TRUNCATE tripped");
    let got2 = mcp.call_tool(
        "explain",
        json!({"sql": "SELECT * FROM t WHERE JSON_ARRAY(1, 2) IS NOT NULL"}),
    );
    let by_explain = v.tripped();
    assert!(
        by_query.is_empty() && by_explain.is_empty(),
        "query: [{by_query}] {got}\nexplain: [{by_explain}] {got2}"
    );

    // A function the operator blocks is blocked behind the syntax too, in
    // either mode: in read-write mode mallory's function would otherwise
    // be one a query may run.
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(
            &v.db,
            read_only,
            json!({"protection": {"blocked_functions": ["json_array"]}}),
        );
        for (tool, args) in [
            ("query", json!({"sql": "SELECT JSON_ARRAY(1, 2) AS j"})),
            (
                "explain",
                json!({"sql": "SELECT * FROM t WHERE JSON_ARRAY(1, 2) IS NOT NULL", "analyze": true}),
            ),
        ] {
            let got = mcp.call_tool(tool, args);
            let tripped = v.tripped();
            assert!(
                tripped.is_empty() && is_error(&got) && tool_text(&got).contains("json_array"),
                "read_only={read_only} {tool}: [{tripped}] {got}"
            );
        }
    }
}

/// hypopg installed in a schema mallory owns: mallory adds overloads of
/// its functions there. The prelude's and the epilogue's calls are
/// qualified and take a text parameter: they must never reach hers (the
/// epilogue runs in a transaction of its own, as the statements' role).
#[test]
fn hypopg_in_a_schema_the_attacker_owns() {
    let v = victim();
    let schema = format!("{}_hypo", v.mallory);
    v.db.psql(&format!(
        "DROP EXTENSION hypopg; CREATE SCHEMA {schema} AUTHORIZATION {m}; CREATE EXTENSION hypopg SCHEMA {schema};",
        m = v.mallory
    ));
    let overloads: &[&str] = &[
        "CREATE FUNCTION {s}.hypopg_create_index(varchar, OUT indexrelid oid, OUT indexname text) RETURNS SETOF record \
         LANGUAGE plpgsql AS $$BEGIN PERFORM trip('create(varchar) as ' || current_user); END$$",
        "CREATE FUNCTION {s}.hypopg_create_index(name, OUT indexrelid oid, OUT indexname text) RETURNS SETOF record \
         LANGUAGE plpgsql AS $$BEGIN PERFORM trip('create(name) as ' || current_user); END$$",
        "CREATE FUNCTION {s}.hypopg_create_index(VARIADIC text[], OUT indexrelid oid, OUT indexname text) RETURNS SETOF record \
         LANGUAGE plpgsql AS $$BEGIN PERFORM trip('create(variadic) as ' || current_user); END$$",
        "CREATE FUNCTION {s}.hypopg_reset(VARIADIC int[]) RETURNS void \
         LANGUAGE plpgsql AS $$BEGIN PERFORM trip('reset(variadic) as ' || current_user); END$$",
        "CREATE FUNCTION {s}.hypopg_reset(x int DEFAULT 0) RETURNS void \
         LANGUAGE plpgsql AS $$BEGIN PERFORM trip('reset(default) as ' || current_user); END$$",
    ];
    let mut failures = Vec::new();
    for overload in overloads {
        v.as_mallory(&overload.replace("{s}", &schema));
        for read_only in [true, false] {
            let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
            let got = explain(&mut mcp, BY_A, &["CREATE INDEX ON t (a)"]);
            let tripped = v.tripped();
            if !tripped.is_empty() {
                failures.push(format!("read_only={read_only}: {overload}: tripped [{tripped}]: {got}"));
                v.db.psql("TRUNCATE tripped");
            }
            if let Some(plan) = leftover(&mut mcp) {
                failures.push(format!("read_only={read_only}: {overload}: left an index: {plan}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A model calling hypopg's own functions through `query` makes indexes the
/// session keeps (hypopg's state is not undone by a rollback nor by pgmcp's
/// session reset): the next plain `explain` of the same session would plan
/// with them. Read-only mode refuses hypopg's VOLATILE functions; read-write
/// mode must not let them outlive the call either.
#[test]
fn hypopg_through_query_does_not_outlive_the_call() {
    let v = victim();
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        for sql in [
            "SELECT * FROM hypopg_create_index('CREATE INDEX ON t (a)')",
            "SELECT * FROM public.hypopg_create_index('CREATE INDEX ON t (a)')",
            "SELECT 1 FROM t WHERE id = 1 AND (SELECT indexrelid FROM hypopg_create_index('CREATE INDEX ON t (a)')) > 0",
            "EXPLAIN ANALYZE SELECT * FROM hypopg_create_index('CREATE INDEX ON t (a)')",
        ] {
            let got = mcp.call_tool("query", json!({"sql": sql}));
            if let Some(plan) = leftover(&mut mcp) {
                failures.push(format!(
                    "read_only={read_only}: {sql} ({}) left an index for the next call: {plan}",
                    if is_error(&got) { "refused" } else { "ran" }
                ));
                let _ = explain(&mut mcp, BY_A, &["CREATE INDEX ON t (id)"]);
            }
            // The same statement under explain's analyze.
            let body = sql.trim_start_matches("EXPLAIN ANALYZE ");
            let got = mcp.call_tool("explain", json!({"sql": body, "analyze": true}));
            if let Some(plan) = leftover(&mut mcp) {
                failures.push(format!(
                    "read_only={read_only}: explain analyze {body} ({}) left an index for the next call: {plan}",
                    if is_error(&got) { "refused" } else { "ran" }
                ));
                // Clean up so the next case starts fresh.
                let _ = explain(&mut mcp, BY_A, &["CREATE INDEX ON t (id)"]);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same through PgBouncer's transaction pooling, where the session is
/// the next client's: an index made through `query` (read-write mode) must
/// not be seen by another client of the pooler.
#[test]
fn hypopg_through_query_behind_a_pooler_reaches_no_other_client() {
    let server = pg::server();
    let v = victim_on(server);
    let bouncer = Bouncer::with_pool_size(server, "transaction", 1);
    let (_dir, mut mcp) = serve_url(
        &bouncer.url(&v.db),
        json!({"server": {"read_only": false}, "pool": {"max_conns": 1}}),
    );
    // Twice: the first call may be the one that finds out about the pooler.
    for _ in 0..2 {
        let got = mcp.call_tool(
            "query",
            json!({"sql": "SELECT indexname FROM hypopg_create_index('CREATE INDEX ON t (a)')"}),
        );
        let _ = got;
    }
    let seen = bouncer.psql(&v.db.name, "SELECT count(*) FROM hypopg()");
    assert_eq!(
        seen, "0",
        "another client of the pooler sees pgmcp's hypothetical indexes"
    );
}

/// PgBouncer told to ignore the startup parameters it does not track (as
/// many managed services are): pgmcp learns it is behind a pooler only
/// when a prepared statement goes missing (or is found where another
/// process left it). Until then a round-robin pooler may give each message
/// to another server connection: the indexes must be dropped in the
/// message that ends the plan's transaction, whatever failed before it.
#[test]
fn hypothetical_indexes_behind_a_pooler_that_ignores_startup_parameters() {
    let server = pg::server();
    let v = victim_on(server);
    let bouncer = Bouncer::configured(
        server,
        "transaction",
        2,
        "min_pool_size = 2\nserver_round_robin = 1\n\
         ignore_startup_parameters = extra_float_digits, IntervalStyle, intervalstyle, bytea_output, lc_monetary, \
         default_transaction_read_only, options",
    );
    let mut failures = Vec::new();
    for read_only in [true, false] {
        // Let PgBouncer open its minimum of server connections.
        let _ = bouncer.psql(&v.db.name, "SELECT 1");
        std::thread::sleep(Duration::from_millis(500));
        let (dir, mut mcp) = serve_url(
            &bouncer.url(&v.db),
            json!({"server": {"read_only": read_only}, "pool": {"max_conns": 1}}),
        );
        let got = explain(&mut mcp, BY_A, &["CREATE INDEX ON t (a)", "CREATE INDEX ON t (b)"]);
        assert!(!is_error(&got), "{got}");
        eprintln!(
            "server connections: {}; pgmcp log: {}",
            v.db.psql(&format!(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND backend_type = 'client backend'",
                v.db.name
            )),
            std::fs::read_to_string(dir.path().join("pgmcp.log"))
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains("pooler"))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        // Every server connection, through other clients.
        for i in 0..6 {
            let seen = bouncer.psql(&v.db.name, "SELECT count(*) FROM hypopg()");
            if seen != "0" {
                failures.push(format!(
                    "read_only={read_only}: client {i} of the pooler sees {seen} hypothetical indexes"
                ));
                let _ = bouncer.psql(&v.db.name, "SELECT hypopg_reset()");
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Limits: at most 16 definitions, each within query.max_sql_length; a
/// definition that makes the planner work hard is stopped by the timeout
/// and leaves nothing.
#[test]
fn limits_hold() {
    let v = victim();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(
            &v.db,
            read_only,
            json!({"query": {"max_sql_length": 2000, "default_timeout_seconds": 3}}),
        );
        let many: Vec<String> = (0..17).map(|i| format!("CREATE INDEX ON t ((a + {i}))")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let got = explain(&mut mcp, BY_A, &many);
        assert!(is_error(&got) && tool_text(&got).contains("at most 16"), "{got}");
        let long = format!("CREATE INDEX ON t (a) WHERE b <> '{}'", "x".repeat(2100));
        let got = explain(&mut mcp, BY_A, &[&long]);
        assert!(is_error(&got) && tool_text(&got).contains("max_sql_length"), "{got}");
        // Deep nesting: refused or harmless, never a crash.
        let deep = format!(
            "CREATE INDEX ON t (a) WHERE a > {}1{}",
            "(".repeat(900),
            ")".repeat(900)
        );
        let got = explain(&mut mcp, BY_A, &[&deep]);
        let _ = got;
        // Sixteen wide indexes whose predicates fold large constants.
        let heavy: Vec<String> = (0..16)
            .map(|i| {
                format!("CREATE INDEX ON t (a, b, v, id) WHERE length(repeat(b, 1)) > {i} AND b <> repeat('y', 1900)")
            })
            .collect();
        let heavy: Vec<&str> = heavy.iter().map(String::as_str).collect();
        let started = Instant::now();
        let got = explain(&mut mcp, BY_A, &heavy);
        assert!(started.elapsed() < Duration::from_secs(20), "{got}");
        assert!(leftover(&mut mcp).is_none(), "read_only={read_only}");
        // A predicate that takes long to fold: stopped by the timeout.
        let slow =
            "CREATE INDEX ON t (a) WHERE a > length(regexp_replace(repeat('ab', 10000000), 'a(b)', '\\1x', 'g'))";
        let started = Instant::now();
        let got = explain(&mut mcp, BY_A, &[slow]);
        assert!(started.elapsed() < Duration::from_secs(20), "{got}");
        assert!(leftover(&mut mcp).is_none(), "read_only={read_only}");
        // Still serving.
        let got = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
        assert!(!is_error(&got), "{got}");
    }
    assert_eq!(v.tripped(), "");
}

/// `protection.blocked_functions` applies to a definition's parts in both
/// modes as it applies to a query reading them: whatever the query is
/// refused, the definition is refused too.
#[test]
fn a_definition_obeys_the_configured_protection() {
    let v = victim();
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(
            &v.db,
            read_only,
            json!({"protection": {"blocked_functions": ["md5", "upper", "textcat"]}}),
        );
        // (definition, the query that reads the same parts)
        for (definition, query) in [
            ("CREATE INDEX ON t ((md5(b)))", "SELECT md5(b) FROM t"),
            (
                "CREATE INDEX ON t (a) WHERE md5(b) > 'a'",
                "SELECT a FROM t WHERE md5(b) > 'a'",
            ),
            (
                "CREATE INDEX ON t (a) INCLUDE (b) WHERE pg_catalog.upper(b) > 'a'",
                "SELECT a, b FROM t WHERE pg_catalog.upper(b) > 'a'",
            ),
            (
                "CREATE INDEX ON t (a) WHERE (b).upper > 'a'",
                "SELECT a FROM t WHERE (b).upper > 'a'",
            ),
            (
                "CREATE INDEX ON t (a) WHERE (b || 'x') > 'a'",
                "SELECT a FROM t WHERE (b || 'x') > 'a'",
            ),
            (
                "CREATE INDEX ON t ((b OPERATOR(pg_catalog.||) 'x'))",
                "SELECT b OPERATOR(pg_catalog.||) 'x' FROM t",
            ),
        ] {
            let by_query = mcp.call_tool("query", json!({"sql": query}));
            let got = explain(&mut mcp, BY_A, &[definition]);
            if is_error(&by_query) && !is_error(&got) {
                failures.push(format!(
                    "read_only={read_only}: {definition} planned where {query} is refused"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// diagnose
// ---------------------------------------------------------------------------

/// The tripwire in a function named like pg_stat_statements' own, wherever
/// mallory can put one: an overload in the extension's schema (which she
/// owns), the same signature in a schema whose name differs only in case
/// or by a space (the vouching compares signatures without case or
/// spaces). pgmcp vouches for exactly the extension's own function: none
/// of hers may run.
#[test]
fn diagnose_vouches_for_no_function_but_the_extensions_own() {
    let v = victim();
    let m = v.mallory.clone();
    let stats = format!("{m}_stats");
    v.db.psql(&format!(
        "CREATE SCHEMA {stats} AUTHORIZATION {m};
         CREATE EXTENSION pg_stat_statements SCHEMA {stats};
         ALTER DATABASE {db} OWNER TO {m};
         SELECT count(*) FROM t WHERE b = 'seen';",
        db = v.db.name
    ));
    let sig = "(showtext boolean, OUT userid oid, OUT dbid oid, OUT toplevel bool, OUT queryid bigint, OUT query text, \
               OUT calls int8, OUT total_exec_time float8, OUT mean_exec_time float8, OUT rows int8) RETURNS SETOF record";
    let attempts: Vec<String> = vec![
        // An overload in the extension's own schema.
        format!(
            "CREATE FUNCTION {stats}.pg_stat_statements(int) RETURNS SETOF record LANGUAGE plpgsql AS \
             $$BEGIN PERFORM trip('overload'); END$$"
        ),
        // The same signature, in a schema whose name folds to the same.
        format!(
            "CREATE SCHEMA \"{}\"; CREATE FUNCTION \"{}\".pg_stat_statements{sig} LANGUAGE plpgsql AS \
             $$BEGIN PERFORM trip('case-folded schema'); END$$",
            stats.to_uppercase(),
            stats.to_uppercase()
        ),
        format!(
            "CREATE SCHEMA \" {stats}\"; CREATE FUNCTION \" {stats}\".pg_stat_statements{sig} LANGUAGE plpgsql AS \
             $$BEGIN PERFORM trip('spaced schema'); END$$"
        ),
    ];
    let mut failures = Vec::new();
    for attempt in &attempts {
        v.as_mallory(attempt);
        for read_only in [true, false] {
            let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
            let got = mcp.call_tool("diagnose", json!({"check": "slow_queries"}));
            let tripped = v.tripped();
            if !tripped.is_empty() {
                failures.push(format!("read_only={read_only}: {attempt}: tripped [{tripped}]: {got}"));
                v.db.psql("TRUNCATE tripped");
            }
            for check in [
                "locks",
                "connections",
                "bloat",
                "vacuum",
                "unused_indexes",
                "missing_indexes",
                "cache_hit",
                "replication",
            ] {
                let got = mcp.call_tool("diagnose", json!({"check": check}));
                let tripped = v.tripped();
                if !tripped.is_empty() {
                    failures.push(format!(
                        "read_only={read_only}: {check} after {attempt}: tripped [{tripped}]: {got}"
                    ));
                    v.db.psql("TRUNCATE tripped");
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Mallory owns the database: she may set its search_path, and put her
/// schema before pg_catalog. The checks' statements qualify every function
/// with `pg_catalog.` but write their operators bare (`=`, `LIKE`, `NOT
/// LIKE`), which would resolve to hers: pgmcp resolves its checks' names in
/// pg_catalog alone. pgmcp's own statement must run nothing of hers, in
/// either mode (in read-write mode the statement runs as the login, here a
/// superuser).
#[test]
fn diagnose_statements_resolve_no_operator_of_the_search_path() {
    let v = victim();
    let m = v.mallory.clone();
    v.db.psql(&format!(
        "CREATE EXTENSION pg_stat_statements;
         CREATE TABLE padded (x int) WITH (fillfactor = 50, autovacuum_enabled = false);
         INSERT INTO padded SELECT generate_series(1, 5000); DELETE FROM padded WHERE x % 2 = 0; ANALYZE padded;
         ALTER DATABASE {db} OWNER TO {m};",
        db = v.db.name
    ));
    v.as_mallory(&format!(
        "CREATE SCHEMA {m}_first;
         CREATE FUNCTION {m}_first.eq_name(name, name) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
           $$BEGIN PERFORM trip('name = name as ' || current_user); RETURN $1::text OPERATOR(pg_catalog.=) $2::text; END$$;
         CREATE FUNCTION {m}_first.eq_text(text, text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
           $$BEGIN PERFORM trip('text = text as ' || current_user); RETURN $1 OPERATOR(pg_catalog.=) $2; END$$;
         CREATE FUNCTION {m}_first.like_text(text, text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
           $$BEGIN PERFORM trip('text LIKE text as ' || current_user); RETURN $1 OPERATOR(pg_catalog.~~) $2; END$$;
         CREATE FUNCTION {m}_first.notlike_text(text, text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
           $$BEGIN PERFORM trip('text NOT LIKE text as ' || current_user); RETURN $1 OPERATOR(pg_catalog.!~~) $2; END$$;
         CREATE OPERATOR {m}_first.= (LEFTARG = name, RIGHTARG = name, FUNCTION = {m}_first.eq_name);
         CREATE OPERATOR {m}_first.= (LEFTARG = text, RIGHTARG = text, FUNCTION = {m}_first.eq_text);
         CREATE OPERATOR {m}_first.~~ (LEFTARG = text, RIGHTARG = text, FUNCTION = {m}_first.like_text);
         CREATE OPERATOR {m}_first.!~~ (LEFTARG = text, RIGHTARG = text, FUNCTION = {m}_first.notlike_text);
         ALTER DATABASE {db} SET search_path = {m}_first, pg_catalog, public;",
        db = v.db.name
    ));
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        for check in crate::diagnose::CHECKS {
            let got = mcp.call_tool("diagnose", json!({"check": check}));
            let tripped = v.tripped();
            eprintln!(
                "read_only={read_only} {check}: {} [{tripped}]",
                tool_text(&got).chars().take(160).collect::<String>()
            );
            if !tripped.is_empty() {
                failures.push(format!(
                    "read_only={read_only}: {check}: ran mallory's operators: [{tripped}]"
                ));
                v.db.psql("TRUNCATE tripped");
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The extension's function moved out of the extension's schema (an
/// administrator's ALTER FUNCTION ... SET SCHEMA), and mallory's function
/// of the same signature put where it was: the catalog still says the
/// extension has `pg_stat_statements(boolean)`, and lives in her schema.
#[test]
fn diagnose_does_not_vouch_for_a_function_put_where_the_extensions_was() {
    let v = victim();
    let m = v.mallory.clone();
    let stats = format!("{m}_stats");
    v.db.psql(&format!(
        "CREATE SCHEMA {stats} AUTHORIZATION {m};
         CREATE SCHEMA elsewhere;
         CREATE EXTENSION pg_stat_statements SCHEMA {stats};
         ALTER FUNCTION {stats}.pg_stat_statements(boolean) SET SCHEMA elsewhere;"
    ));
    v.as_mallory(&format!(
        "CREATE FUNCTION {stats}.pg_stat_statements(showtext boolean, OUT userid oid, OUT dbid oid, OUT toplevel bool, \
         OUT queryid bigint, OUT query text, OUT calls int8, OUT total_exec_time float8, OUT mean_exec_time float8, \
         OUT rows int8) RETURNS SETOF record LANGUAGE plpgsql AS $$BEGIN PERFORM trip('moved ' || current_user); END$$"
    ));
    let mut failures = Vec::new();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        let got = mcp.call_tool("diagnose", json!({"check": "slow_queries"}));
        let tripped = v.tripped();
        if !tripped.is_empty() {
            failures.push(format!("read_only={read_only}: tripped [{tripped}]: {got}"));
            v.db.psql("TRUNCATE tripped");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Other users' query texts stay hidden from a role without
/// pg_read_all_stats: a superuser login in read-only mode (which reads as
/// pg_read_all_data), and a pg_monitor login whose `connection.role` is a
/// plain reader, in both modes; through slow_queries, locks and
/// connections.
#[test]
fn diagnose_shows_no_query_text_the_role_may_not_see() {
    let server = pg::server();
    let v = victim();
    let db = &v.db;
    let secret = format!("sekrit_{}", db.name);
    db.psql(&format!(
        "CREATE EXTENSION pg_stat_statements;
         /* {secret} */ SELECT count(*) FROM t WHERE a = 3;"
    ));
    let monitor = format!("{}_mon", db.name);
    let reader = format!("{}_reader", db.name);
    db.psql(&format!(
        "CREATE ROLE {monitor} LOGIN PASSWORD 'pw' IN ROLE pg_monitor;
         CREATE ROLE {reader} NOLOGIN; GRANT {reader} TO {monitor};
         GRANT CONNECT ON DATABASE {d} TO {monitor}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader};",
        d = db.name
    ));
    let monitor_url = format!(
        "postgres://{monitor}:pw@{}:{}/{}",
        server.host(),
        server.port(),
        db.name
    );
    // A lock held and waited for, with the secret in both sessions' texts.
    let mut holder = Session::open(db);
    holder.send(
        &format!("BEGIN; LOCK TABLE counter IN ACCESS EXCLUSIVE MODE /* {secret} */;"),
        Some("locked"),
    );
    let mut waiter = Session::open(db);
    waiter.send(&format!("SELECT n FROM counter /* {secret} */;"), None);
    let until = Instant::now() + Duration::from_secs(20);
    while db.psql("SELECT count(*) FROM pg_locks WHERE NOT granted") == "0" {
        assert!(Instant::now() < until, "the second session never waited");
        std::thread::sleep(Duration::from_millis(100));
    }
    let setups: Vec<(String, String, Value)> = vec![
        ("superuser login, read-only".into(), db.url.clone(), json!({})),
        (
            "pg_monitor login with connection.role, read-only".into(),
            monitor_url.clone(),
            json!({"connection": {"role": reader}}),
        ),
        (
            "pg_monitor login with connection.role, read-write".into(),
            monitor_url.clone(),
            json!({"connection": {"role": reader}, "server": {"read_only": false}}),
        ),
    ];
    let mut failures = Vec::new();
    for (what, url, config) in &setups {
        let (_dir, mut mcp) = serve_url(url, config.clone());
        for check in ["slow_queries", "locks", "connections"] {
            let got = mcp.call_tool("diagnose", json!({"check": check}));
            if got.to_string().contains(&secret) {
                failures.push(format!("{what}: {check} shows another user's text: {got}"));
            }
        }
    }
    drop(waiter);
    drop(holder);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// diagnose runs its own statement and nothing else: arguments beyond
/// `check` are not SQL, and a check name is one of the nine.
#[test]
fn diagnose_runs_nothing_it_is_handed() {
    let v = victim();
    v.db.psql("CREATE EXTENSION pg_stat_statements");
    let before = v.state();
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&v.db, read_only, json!({}));
        for arguments in [
            json!({"check": "locks", "sql": "SELECT trip('extra sql')"}),
            json!({"check": "locks", "params": ["x"], "hypothetical_indexes": ["CREATE INDEX ON t ((trip('hyp')))"]}),
            json!({"check": "slow_queries; SELECT trip('name')"}),
            json!({"check": "slow_queries\u{0}"}),
            json!({"check": "SLOW_QUERIES"}),
            json!({"check": ["slow_queries", "locks"]}),
        ] {
            let response = mcp.request("tools/call", json!({"name": "diagnose", "arguments": arguments}));
            let _ = response;
        }
    }
    assert_eq!(v.tripped(), "");
    assert_eq!(v.state(), before);
}
