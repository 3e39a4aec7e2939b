//! Red team: attacks that reach a function by a route the guard does not
//! judge, end to end through [`Engine::query`] against the harness's real
//! PostgreSQL (connected as a superuser, the worst case).
//!
//! The threat: a database user who may create objects in `public` (domains,
//! views, types, casts, aggregates: no superuser needed) plants them
//! beforehand; the agent then only sends SQL text. The guard promises that
//! every function a statement can run, by any route, is judged: blocked
//! functions in both modes, and in read-only mode only functions known to
//! change nothing. Each case checks the guard's verdict and what the database
//! shows afterwards (large objects, the bystander session, leaked file
//! contents, settings). A case that gets through is a finding; all findings are
//! reported at once.

use pgmcp::guard::Rule;
use pgmcp::{Engine, Error, QueryInput, QueryOutput};
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, rows, writable};
use crate::support::findings::{Findings, verdict};
use crate::support::pg::{self, TestDb};

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

/// `protection.allow_set` governs `UPDATE pg_settings` (pg_settings' rule
/// turns it into `set_config(..., false)`), but the rule looks only at the
/// relation's name: a plain view over pg_settings, which read-write mode lets
/// the agent create, reaches the same rule.
#[tokio::test(flavor = "multi_thread")]
async fn settings_cannot_be_changed_through_a_view_of_pg_settings() {
    let db = pg::server().database();
    let engine = engine_for(&db, writable);
    let mut findings = Findings::default();
    let create = call(&engine, "CREATE VIEW sv AS SELECT name, setting FROM pg_settings").await;
    assert!(create.is_ok(), "CREATE VIEW: {}", verdict(&create));
    let direct = call(
        &engine,
        "UPDATE pg_settings SET setting = '77MB' WHERE name = 'work_mem'",
    )
    .await;
    findings.case(
        "control: UPDATE pg_settings",
        (!matches!(&direct, Err(Error::Guard(v)) if v.rule == Rule::Set)).then(|| verdict(&direct)),
    );
    let sql = "UPDATE sv SET setting = '77MB' WHERE name = 'work_mem'";
    let result = call(&engine, sql).await;
    let mut problems = Vec::new();
    if !matches!(&result, Err(Error::Guard(v)) if v.rule == Rule::Set) {
        problems.push(format!("expected: refused by `set`\n  got: {}", verdict(&result)));
    }
    // Show that PostgreSQL really runs set_config for it: unguarded, in one
    // psql session, the setting changes.
    let shown = db.psql(&format!("{sql}; SHOW work_mem"));
    if result.is_ok() && shown.lines().any(|l| l.trim() == "77MB") {
        problems.push("PostgreSQL ran set_config for it (psql: work_mem became 77MB)".to_owned());
    }
    findings.case(sql, problems);
    findings.assert_none("settings changes got past allow_set");
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

/// `INSERT ... SELECT ... ON CONFLICT DO UPDATE` with no WHERE of its own
/// overwrites every row the SELECT names: fed the table itself, every row of
/// the table. It amounts to an UPDATE without WHERE.
#[tokio::test(flavor = "multi_thread")]
async fn an_upsert_of_the_whole_table_is_an_update_without_where() {
    let db = pg::server().database();
    db.psql("CREATE TABLE u (id int PRIMARY KEY, v int); INSERT INTO u VALUES (1, 10), (2, 20), (3, 30)");
    let engine = engine_for(&db, writable);
    let values = || db.psql("SELECT string_agg(v::text, ',' ORDER BY id) FROM u");
    let mut findings = Findings::default();
    let control = call(&engine, "UPDATE u SET v = 0").await;
    findings.case(
        "control: UPDATE u SET v = 0",
        (!matches!(&control, Err(Error::Guard(v)) if v.rule == Rule::UpdateWithoutWhere)).then(|| verdict(&control)),
    );
    let sql = "INSERT INTO u SELECT id, 0 FROM u ON CONFLICT (id) DO UPDATE SET v = excluded.v";
    let before = values();
    let result = call(&engine, sql).await;
    let after = values();
    let mut problems = Vec::new();
    if !matches!(&result, Err(Error::Guard(v)) if v.rule == Rule::UpdateWithoutWhere) {
        problems.push(format!(
            "expected: refused by `update-without-where`\n  got: {}",
            verdict(&result)
        ));
    }
    if before != after {
        problems.push(format!("overwrote every row: v was {before}, is {after}"));
    }
    findings.case(sql, problems);
    findings.assert_none("whole-table overwrites got past update-without-where");
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
            let params = pgmcp::backend::postgres::params::resolve(Some(&url), &config.connection, &|_| None).unwrap();
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
