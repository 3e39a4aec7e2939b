//! What PostgreSQL runs on a statement's behalf without the SQL naming it:
//! a domain's CHECK reached through an array, a row, a range or a policy, a
//! user's cast into json that `to_json` applies by itself, an operator over a
//! user's type. A second, unprivileged database user plants each one as a
//! function that reads a table only the agent can read and sends it out with
//! `pg_notify` (which a READ ONLY transaction allows); a LISTENer must hear
//! nothing, read-only mode must refuse every statement that reaches one,
//! naming the function and what runs it, and nothing else: the same database
//! stays usable for statements that reach none.

use pgmcp::Error;
use pgmcp::guard::{FunctionPattern, Rule};

use crate::support::engine::{engine_for, rows, run};
use crate::support::pg;
use crate::support::planter::{Listener, as_planter, plant_leak};

/// Every example of the review and our own variants; then what must still
/// run on the same database.
#[tokio::test(flavor = "multi_thread")]
async fn what_a_type_runs_is_refused_where_a_statement_reaches_it() {
    let db = pg::server().database();
    plant_leak(&db);
    let multirange = db.major() >= 14;
    as_planter(
        &db,
        "CREATE DOMAIN public.d AS text CHECK (public.leak(VALUE));
         CREATE DOMAIN public.dd AS public.d;
         CREATE TABLE public.arrs (arr public.d[]); INSERT INTO public.arrs VALUES (ARRAY['a']);
         CREATE TYPE public.rec AS (c public.d);
         CREATE TABLE public.recs (c public.d); INSERT INTO public.recs VALUES ('a');
         CREATE TABLE public.dds (v public.dd); INSERT INTO public.dds VALUES ('a');
         CREATE TYPE public.wrap AS (c public.d);
         CREATE TABLE public.wraps (w public.wrap[]); INSERT INTO public.wraps VALUES (ARRAY[ROW('a')::public.wrap]);
         CREATE TYPE public.drange AS RANGE (subtype = public.d);
         CREATE TABLE public.rngs (r public.drange); INSERT INTO public.rngs VALUES (public.drange('a', 'b'));
         CREATE VIEW public.casting AS SELECT ('x'::text)::public.d AS c;
         CREATE VIEW public.casting_text AS SELECT (('x'::text)::public.d)::text AS c;
         CREATE TABLE public.guarded (id int); INSERT INTO public.guarded VALUES (1);
         ALTER TABLE public.guarded ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
         CREATE POLICY casts ON public.guarded USING ((('x'::text)::public.dd)::text IS NOT NULL);
         CREATE TABLE public.guarded2 (id int); INSERT INTO public.guarded2 VALUES (1);
         ALTER TABLE public.guarded2 ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
         CREATE POLICY reads ON public.guarded2 USING (EXISTS (SELECT FROM public.casting_text));
         CREATE TYPE public.feel AS ENUM ('ok');
         CREATE FUNCTION public.feel_json(public.feel) RETURNS json LANGUAGE plpgsql STABLE
             AS $$ BEGIN PERFORM public.leak('json'); RETURN '\"ok\"'::json; END $$;
         CREATE CAST (public.feel AS json) WITH FUNCTION public.feel_json(public.feel);
         CREATE TABLE public.feels (f public.feel); INSERT INTO public.feels VALUES ('ok');
         CREATE VIEW public.feelings AS SELECT pg_catalog.to_json(f) AS j FROM public.feels;
         CREATE TYPE public.tone AS ENUM ('ok');
         CREATE TABLE public.tones (t public.tone); INSERT INTO public.tones VALUES ('ok');
         CREATE FUNCTION public.tone_eq(public.tone, public.tone) RETURNS bool LANGUAGE plpgsql IMMUTABLE
             AS $$ BEGIN RETURN public.leak('tone ='); END $$;
         CREATE OPERATOR public.= (LEFTARG = public.tone, RIGHTARG = public.tone, FUNCTION = public.tone_eq);
         -- Over built-in types: pg_catalog's own int4 = is searched first,
         -- so only OPERATOR(public.=) finds it; in a schema off the search
         -- path, only OPERATOR(ops.=).
         CREATE FUNCTION public.int_eq(int, int) RETURNS bool LANGUAGE plpgsql IMMUTABLE
             AS $$ BEGIN RETURN public.leak('int ='); END $$;
         CREATE OPERATOR public.= (LEFTARG = int, RIGHTARG = int, FUNCTION = public.int_eq);
         CREATE SCHEMA ops;
         CREATE OPERATOR ops.= (LEFTARG = int, RIGHTARG = int, FUNCTION = public.int_eq);
         CREATE FUNCTION public.made() RETURNS int LANGUAGE plpgsql STABLE
             AS $$ BEGIN PERFORM public.leak('matview'); RETURN 7; END $$;
         CREATE MATERIALIZED VIEW public.stored AS SELECT public.made() AS n;",
    );
    if multirange {
        as_planter(
            &db,
            "CREATE TABLE public.mrngs (m public.dmultirange);
             INSERT INTO public.mrngs VALUES (public.dmultirange(public.drange('a', 'b')));",
        );
    }
    let engine = engine_for(&db, |_| {});
    let listener = Listener::start(&db);
    let domain = "the constraint d_check of domain public.d";
    let json_cast = "the cast from public.feel to pg_catalog.json";
    let mut attacks: Vec<(&str, &str, &str)> = vec![
        // (statement, the function the refusal names, what runs it)
        ("SELECT array_position(arr, 'x') FROM arrs", "leak", domain),
        (
            "SELECT json_populate_record(r, '{\"c\": \"x\"}') FROM recs r",
            "leak",
            domain,
        ),
        (
            "SELECT json_populate_record(null::rec, '{\"c\": \"x\"}')",
            "leak",
            domain,
        ),
        (
            "SELECT json_populate_record(x, '{\"v\": \"y\"}') FROM dds x",
            "leak",
            domain,
        ),
        ("SELECT array_position(w, '(x)') FROM wraps", "leak", domain),
        ("SELECT lower(r) FROM rngs", "leak", domain),
        ("SELECT 'x'::dd", "leak", domain),
        ("SELECT * FROM casting", "leak", domain),
        ("SELECT * FROM casting_text", "leak", domain),
        ("SELECT * FROM guarded", "leak", domain),
        ("SELECT * FROM guarded2", "leak", domain),
        ("SELECT domain_in('x', 'public.d'::regtype, -1)", "leak", domain),
        ("SELECT * FROM feelings", "feel_json", json_cast),
        ("SELECT row_to_json(x) FROM feels x", "feel_json", json_cast),
        ("SELECT json_agg(f) FROM feels", "feel_json", json_cast),
        ("SELECT jsonb_build_object('a', f) FROM feels", "feel_json", json_cast),
        ("SELECT to_json('ok'::feel)", "feel_json", json_cast),
        ("SELECT t = 'ok' FROM tones", "tone_eq", "the operator public.="),
        ("SELECT 'ok'::tone = 'ok'", "tone_eq", "the operator public.="),
        // Under the schema-qualified name: every public = (tone_eq, int_eq).
        ("SELECT 1 WHERE 1 OPERATOR(public.=) 1", "", ""),
        ("SELECT 1 WHERE 1 OPERATOR(ops.=) 1", "int_eq", ""),
    ];
    if multirange {
        attacks.push(("SELECT m FROM mrngs", "leak", domain));
        attacks.push(("SELECT '{}'::dmultirange", "leak", domain));
    }
    let mut through = Vec::new();
    for (sql, function, via) in &attacks {
        match run(&engine, sql).await {
            Err(Error::Guard(v))
                if v.rule == Rule::ReadOnly
                    && v.message.contains(&format!("{function}()"))
                    && v.message.contains(via) => {}
            other => through.push(format!("{sql}: {other:?}")),
        }
    }
    // Nothing that reaches none of them is refused.
    let reads = [
        "SELECT to_json(1) AS j",
        "SELECT json_agg(p) AS j FROM plain p",
        "SELECT row_to_json(p) AS j FROM plain p",
        "SELECT jsonb_build_object('a', note) AS j FROM plain",
        "SELECT '{\"a\": 1}'::json AS j",
        "SELECT id FROM plain WHERE id = 1",
        "SELECT 1 = 1 AS t",
        "SELECT CASE id WHEN 1 THEN 'one' END AS c FROM plain",
        "SELECT a.id FROM plain a JOIN plain b USING (id)",
        "SELECT 1 IN (1, 2) AS i, NULLIF(1, 2) AS n, 1 IS DISTINCT FROM 2 AS d",
        "SELECT note, count(*) AS n FROM plain GROUP BY note ORDER BY 1",
        "SELECT n FROM stored",
    ];
    for sql in reads {
        if let Err(e) = run(&engine, sql).await {
            through.push(format!("{sql} was refused: {e}"));
        }
    }
    db.psql("NOTIFY leak, 'control'");
    let heard = listener.heard();
    assert!(through.is_empty(), "{}", through.join("\n"));
    assert!(heard.contains("control"), "the listener hears: {heard}");
    assert!(!heard.contains("the-secret"), "a planted function ran: {heard}");

    // The plants are live: writable mode (which judges functions only by
    // protection.blocked_functions) runs one, and the secret goes out.
    let listener = Listener::start(&db);
    let writable = engine_for(&db, crate::support::engine::writable);
    assert!(
        run(&writable, "SELECT array_position(arr, 'x') FROM arrs")
            .await
            .is_ok()
    );
    let heard = listener.heard();
    assert!(heard.contains("the-secret via x"), "the listener hears: {heard}");
}

/// A change between two calls that keeps every object's ID: a function
/// renamed onto a trusted name (a better match for `lower(varchar)` than
/// PostgreSQL's own), a view moved into the schema and the name a call
/// reads. Each changes the facts' version, so the second call is judged
/// with new facts: refused, and the LISTENer hears nothing. Several calls
/// first, so the connection is quiet and makes the quick check.
#[tokio::test(flavor = "multi_thread")]
async fn renames_and_moves_between_calls_are_seen() {
    let db = pg::server().database();
    plant_leak(&db);
    as_planter(
        &db,
        "CREATE FUNCTION public.sneaky(varchar) RETURNS text LANGUAGE plpgsql STABLE
             AS $$ BEGIN PERFORM public.leak('renamed'); RETURN 'x'; END $$;
         CREATE VIEW public.report AS SELECT 1 AS one;
         CREATE SCHEMA hidden;
         CREATE VIEW hidden.evil AS SELECT 1 AS one WHERE public.leak('moved');",
    );
    let engine = engine_for(&db, |c| c.pool.max_conns = 1);
    let listener = Listener::start(&db);
    for _ in 0..3 {
        assert_eq!(
            rows(
                &engine,
                "SELECT lower('X'::varchar) AS l, (SELECT one FROM report) AS one"
            )
            .await,
            serde_json::json!([{"l": "x", "one": 1}])
        );
    }
    as_planter(&db, "ALTER FUNCTION public.sneaky(varchar) RENAME TO lower");
    match run(&engine, "SELECT lower('X'::varchar) AS l").await {
        Err(Error::Guard(v)) => assert!(v.message.contains("lower()"), "{v}"),
        other => panic!("the renamed function ran: {other:?}"),
    }
    as_planter(
        &db,
        "BEGIN; ALTER VIEW public.report RENAME TO gone; ALTER VIEW hidden.evil RENAME TO report;
         ALTER VIEW hidden.report SET SCHEMA public; COMMIT;",
    );
    match run(&engine, "SELECT one FROM report").await {
        Err(Error::Guard(v)) => assert!(v.message.contains("leak()"), "{v}"),
        other => panic!("the moved view was read: {other:?}"),
    }
    db.psql("NOTIFY leak, 'control'");
    let heard = listener.heard();
    assert!(heard.contains("control"), "the listener hears: {heard}");
    assert!(!heard.contains("the-secret"), "a planted function ran: {heard}");
}

/// Vouching names one function by its full signature: a new overload of a
/// vouched name, made after the facts were read, is not vouched for.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_overload_of_a_vouched_function_is_not_vouched() {
    let db = pg::server().database();
    plant_leak(&db);
    as_planter(
        &db,
        "CREATE FUNCTION public.my_report(int) RETURNS int LANGUAGE sql STABLE AS 'SELECT $1';",
    );
    let engine = engine_for(&db, |c| {
        c.protection
            .read_only_functions
            .push(FunctionPattern::new("public.my_report(integer)"))
    });
    let listener = Listener::start(&db);
    assert_eq!(
        rows(&engine, "SELECT my_report(3) AS r").await,
        serde_json::json!([{"r": 3}])
    );
    as_planter(
        &db,
        "CREATE FUNCTION public.my_report(text) RETURNS int LANGUAGE plpgsql STABLE
             AS $$ BEGIN PERFORM public.leak('overload'); RETURN 1; END $$;",
    );
    match run(&engine, "SELECT my_report('x') AS r").await {
        Err(Error::Guard(v)) => {
            assert_eq!(v.rule, Rule::ReadOnly);
            assert!(v.message.contains("public.my_report(text)"), "{v}");
        }
        other => panic!("the new overload ran: {other:?}"),
    }
    db.psql("NOTIFY leak, 'control'");
    let heard = listener.heard();
    assert!(heard.contains("control"), "the listener hears: {heard}");
    assert!(!heard.contains("the-secret"), "a planted function ran: {heard}");
}
