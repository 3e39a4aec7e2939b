//! What PostgreSQL runs on a statement's behalf without the SQL naming it:
//! a domain's CHECK reached through an array, a row, a range or a policy, a
//! user's cast into json that `to_json` applies by itself, an operator over a
//! user's type. A second, unprivileged database user plants each one as a
//! function that reads a table only the agent can read and sends it out with
//! `pg_notify` (which a READ ONLY transaction allows); a LISTENer must hear
//! nothing, read-only mode must refuse every statement that reaches one,
//! naming the function and what runs it, and nothing else: the same database
//! stays usable for statements that reach none.

use pgmcp::{Error, FunctionPattern, Rule};

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

// ---------------------------------------------------------------------------
// What the planner itself evaluates, and operator resolution.
//
// Third red-team round on what a read-only statement makes PostgreSQL run
// without naming it. A second, unprivileged database user plants each
// object; its function reads a table only the agent can read and sends it
// out with `pg_notify` (a READ ONLY transaction allows it), tagged with the
// route. For every case: read-only mode refuses the agent's statement naming
// the planted function, a LISTENer hears nothing; then writable mode (which
// judges functions only by `protection.blocked_functions`) runs the same
// statement and the LISTENer hears the tag, so each case is a live route,
// not a guess. Statements that reach no planted object still run.
//
// Routes found open in this round, now closed:
// - the planner folds an `IMMUTABLE` function with constant arguments in a
//   relation's index expressions and predicates, extended statistics
//   expressions and partition key, and, reading a parent, in its inheritance
//   children's and partitions' `CHECK` constraints (constraint exclusion);
// - an operator with a built-in name whose argument is a domain, a composite
//   or a type with an implicit cast into it, or whose other argument is one
//   of PostgreSQL's own types, is chosen by overload resolution where no
//   value of the user's type is (`text_col = 1` coerces `1` to a domain over
//   int; `'ok' @@ 5` makes the unknown literal a user's enum).

/// One attack: what the planting user makes, the agent's statement, the
/// function the refusal must name, and the tag the function sends when it
/// runs (writable mode proves the route live with it).
struct Attack {
    plant: &'static str,
    query: &'static str,
    function: &'static str,
    tag: &'static str,
    /// The oldest PostgreSQL major the plant works on.
    since: u32,
}

const fn attack(plant: &'static str, query: &'static str, function: &'static str, tag: &'static str) -> Attack {
    Attack {
        plant,
        query,
        function,
        tag,
        since: 13,
    }
}

/// Routes through what the planner itself evaluates, and the type routes
/// of the brief (which held before this round: kept against regressions).
const ATTACKS: &[Attack] = &[
    // The planner folds IMMUTABLE calls with constant arguments in a
    // relation's index expressions as it plans any statement reading it.
    attack(
        "CREATE TABLE public.idx (id int, note text); INSERT INTO public.idx VALUES (1, 'a');
         CREATE INDEX ON public.idx ((note || public.leak_imm('index expression')));",
        "SELECT count(*) FROM idx",
        "leak_imm",
        "index expression",
    ),
    attack(
        "CREATE TABLE public.pidx (id int, note text); INSERT INTO public.pidx VALUES (1, 'a');
         CREATE INDEX ON public.pidx (id) WHERE note <> public.leak_imm('index predicate');",
        "SELECT id FROM pidx WHERE id = 1",
        "leak_imm",
        "index predicate",
    ),
    // A view over such a table reaches it too.
    attack(
        "CREATE VIEW public.idx_view AS SELECT id FROM public.idx;",
        "SELECT * FROM idx_view",
        "leak_imm",
        "index expression",
    ),
    Attack {
        since: 14,
        ..attack(
            "CREATE TABLE public.stx (a int, b int);
             CREATE STATISTICS public.stx_s ON (a + pg_catalog.length(public.leak_imm('statistics'))), b FROM public.stx;",
            "SELECT * FROM stx WHERE a = 1 AND b = 1",
            "leak_imm",
            "statistics",
        )
    },
    // Reading a parent plans its children: constraint exclusion folds
    // their CHECK constraints.
    attack(
        "CREATE TABLE public.parent (id int, note text);
         CREATE TABLE public.child (CHECK (note <> public.leak_imm('child check'))) INHERITS (public.parent);
         INSERT INTO public.child VALUES (1, 'a');",
        "SELECT * FROM parent WHERE id = 1",
        "leak_imm",
        "child check",
    ),
    attack(
        "CREATE TABLE public.parted (id int, note text) PARTITION BY LIST (id);
         CREATE TABLE public.part1 PARTITION OF public.parted (CHECK (note <> public.leak_imm('partition check'))) FOR VALUES IN (1);",
        "SELECT * FROM parted WHERE id = 1",
        "leak_imm",
        "partition check",
    ),
    // A sub-partition's index, two levels down.
    attack(
        "CREATE TABLE public.deep (id int, note text) PARTITION BY LIST (id);
         CREATE TABLE public.deep1 PARTITION OF public.deep FOR VALUES IN (1) PARTITION BY LIST (note);
         CREATE TABLE public.deep1a PARTITION OF public.deep1 FOR VALUES IN ('a');
         CREATE INDEX ON public.deep1a ((note || public.leak_imm('sub-partition index')));",
        "SELECT * FROM deep",
        "leak_imm",
        "sub-partition index",
    ),
    attack(
        "CREATE TABLE public.pkey (id int, note text) PARTITION BY LIST ((note || public.leak_imm('partition key')));
         CREATE TABLE public.pkey1 PARTITION OF public.pkey FOR VALUES IN ('a');",
        "SELECT * FROM pkey",
        "leak_imm",
        "partition key",
    ),
    // Type routes (held before this round).
    attack(
        "CREATE DOMAIN public.d AS text CHECK (public.leak(VALUE));
         CREATE TYPE public.rec AS (c public.d);
         CREATE TABLE public.recs (c public.d); INSERT INTO public.recs VALUES ('a');
         CREATE TABLE public.arrs (arr public.d[]); INSERT INTO public.arrs VALUES (ARRAY['a']);
         CREATE FUNCTION public.mk() RETURNS SETOF public.rec LANGUAGE sql STABLE AS $$ SELECT ROW('f')::public.rec $$;",
        "SELECT ROW('row')::rec",
        "leak",
        "row",
    ),
    attack("", "SELECT * FROM mk()", "leak", "f"),
    attack(
        "",
        "SELECT * FROM jsonb_populate_recordset(null::rec, '[{\"c\": \"recordset\"}]')",
        "leak",
        "recordset",
    ),
    attack(
        "",
        "SELECT * FROM json_to_record('{\"a\": \"to_record\"}') AS x(a d)",
        "leak",
        "to_record",
    ),
    attack(
        "",
        "SELECT array_position(array_agg(c), 'array_agg') FROM recs",
        "leak",
        "array_agg",
    ),
    attack(
        "",
        "SELECT array_position(ARRAY(SELECT unnest(arr) FROM arrs), 'unnest')",
        "leak",
        "unnest",
    ),
    attack(
        "",
        "SELECT COALESCE(c, 'coalesce') FROM recs WHERE false UNION SELECT 'union'::text",
        "leak",
        "",
    ),
    attack("", "SELECT format('%s', r) FROM recs r", "leak", ""),
    // The agent's "$user" schema, searched before public: a view with the
    // name of the table the agent reads (facts are by relation name, so
    // public.notes is refused too).
    attack(
        "CREATE TABLE public.notes (id int); INSERT INTO public.notes VALUES (1);
         CREATE SCHEMA pgmcp_admin; GRANT USAGE ON SCHEMA pgmcp_admin TO PUBLIC;
         CREATE VIEW pgmcp_admin.notes AS SELECT id FROM public.notes WHERE public.leak('user schema');",
        "SELECT id FROM notes",
        "leak",
        "user schema",
    ),
];

/// Every attack is refused naming its function, the LISTENer hears nothing;
/// each is live in writable mode; plain reads still run.
#[tokio::test(flavor = "multi_thread")]
async fn what_the_planner_and_types_run_is_refused() {
    let db = pg::server().database();
    plant_leak(&db);
    let attacks: Vec<&Attack> = ATTACKS.iter().filter(|a| db.major() >= a.since).collect();
    for a in &attacks {
        if !a.plant.is_empty() {
            as_planter(&db, a.plant);
        }
    }
    let engine = engine_for(&db, |_| {});
    let listener = Listener::start(&db);
    let mut through = Vec::new();
    for a in &attacks {
        match run(&engine, a.query).await {
            Err(Error::Guard(v)) if v.rule == Rule::ReadOnly && v.message.contains(&format!("{}()", a.function)) => {}
            other => through.push(format!("{}: {other:?}", a.query)),
        }
    }
    // Ordinary analytic reads that reach no planted object.
    let reads = [
        "SELECT id, note FROM public.plain WHERE id = 1",
        "SELECT note, count(*) AS n FROM public.plain GROUP BY note ORDER BY n DESC, note",
        "SELECT DISTINCT note FROM public.plain ORDER BY 1",
        "SELECT a.id FROM public.plain a JOIN public.plain b USING (id) WHERE a.note IN ('a', 'b')",
        "SELECT id, sum(id) OVER (ORDER BY id) AS s, rank() OVER (PARTITION BY note ORDER BY id) AS r FROM public.plain",
        "SELECT to_json(p) AS j FROM public.plain p",
        "SELECT COALESCE(note, 'x') AS n FROM public.plain UNION SELECT 'y' ORDER BY 1",
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY id) AS m FROM public.plain",
        "SELECT count(*) AS n FROM pg_catalog.pg_class",
    ];
    for sql in reads {
        if let Err(e) = run(&engine, sql).await {
            through.push(format!("{sql} was refused: {e}"));
        }
    }
    let heard = listener.heard_checked(&db);
    assert!(through.is_empty(), "{}", through.join("\n"));
    assert!(!heard.contains("the-secret"), "a planted function ran: {heard}");

    // Each route is live: writable mode runs it, and the tag goes out.
    let writable = engine_for(&db, crate::support::engine::writable);
    let listener = Listener::start(&db);
    for a in &attacks {
        // Errors are fine here (a domain CHECK may fail the statement after
        // the function ran); what counts is what the listener hears.
        let _ = run(&writable, a.query).await;
    }
    let heard = listener.heard_checked(&db);
    let dead: Vec<&str> = attacks
        .iter()
        .filter(|a| !heard.contains(&format!("the-secret via {}", a.tag)))
        .map(|a| a.query)
        .collect();
    assert!(dead.is_empty(), "not live: {dead:?}\nheard: {heard}");
}

/// Operators with a built-in name that overload resolution picks where no
/// value of the user's type is. Each makes every comparison suspect, so
/// each gets a database of its own.
#[tokio::test(flavor = "multi_thread")]
async fn an_operator_resolution_can_pick_is_judged_where_it_can_be_picked() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // (plant, the agent's statement, the function, the tag)
        (
            "CREATE DOMAIN public.dint AS int;
             CREATE FUNCTION public.text_dint_eq(text, public.dint) RETURNS bool LANGUAGE plpgsql IMMUTABLE
                 AS $$ BEGIN RETURN public.leak('domain operand'); END $$;
             CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = public.dint, FUNCTION = public.text_dint_eq);",
            "SELECT id FROM plain WHERE note = 1",
            "text_dint_eq",
            "domain operand",
        ),
        (
            "CREATE TYPE public.tone AS ENUM ('ok');
             CREATE FUNCTION public.tone_int(public.tone, int) RETURNS bool LANGUAGE plpgsql IMMUTABLE
                 AS $$ BEGIN RETURN public.leak('unknown literal'); END $$;
             CREATE OPERATOR public.@@ (LEFTARG = public.tone, RIGHTARG = int, FUNCTION = public.tone_int);",
            "SELECT 'ok' @@ 5",
            "tone_int",
            "unknown literal",
        ),
        (
            "CREATE TYPE public.mood AS ENUM ('ok');
             CREATE FUNCTION public.mood_of(int) RETURNS public.mood LANGUAGE plpgsql IMMUTABLE
                 AS $$ BEGIN PERFORM public.leak('implicit cast'); RETURN 'ok'; END $$;
             CREATE CAST (int AS public.mood) WITH FUNCTION public.mood_of(int) AS IMPLICIT;
             CREATE FUNCTION public.mood_text(public.mood, text) RETURNS bool LANGUAGE plpgsql IMMUTABLE
                 AS $$ BEGIN RETURN public.leak('implicit cast'); END $$;
             CREATE OPERATOR public.= (LEFTARG = public.mood, RIGHTARG = text, FUNCTION = public.mood_text);",
            "SELECT id FROM plain WHERE id = note",
            "mood_",
            "implicit cast",
        ),
        (
            "CREATE TYPE public.pair AS (a int, b int);
             CREATE FUNCTION public.pair_int(public.pair, int) RETURNS bool LANGUAGE plpgsql IMMUTABLE
                 AS $$ BEGIN RETURN public.leak('row operand'); END $$;
             CREATE OPERATOR public.< (LEFTARG = public.pair, RIGHTARG = int, FUNCTION = public.pair_int);",
            "SELECT id FROM plain WHERE ROW(id, id) < 3",
            "pair_int",
            "row operand",
        ),
    ];
    for (plant, query, function, tag) in cases {
        let db = pg::server().database();
        plant_leak(&db);
        as_planter(&db, plant);
        let engine = engine_for(&db, |_| {});
        let listener = Listener::start(&db);
        let got = run(&engine, query).await;
        let heard = listener.heard_checked(&db);
        match got {
            Err(Error::Guard(v)) if v.rule == Rule::ReadOnly && v.message.contains(function) => {}
            other => panic!("{query}: {other:?}"),
        }
        assert!(
            !heard.contains("the-secret"),
            "{query}: a planted function ran: {heard}"
        );
        let writable = engine_for(&db, crate::support::engine::writable);
        let listener = Listener::start(&db);
        let _ = run(&writable, query).await;
        let heard = listener.heard_checked(&db);
        assert!(
            heard.contains(&format!("the-secret via {tag}")),
            "{query} is not live: {heard}"
        );
    }
}

/// Changes between two calls that add a route without a new relation,
/// type or function: statistics on a table, a table becoming a child of
/// the one the agent reads. The facts' version sees each.
#[tokio::test(flavor = "multi_thread")]
async fn planner_routes_added_between_calls_are_seen() {
    let db = pg::server().database();
    plant_leak(&db);
    let statistics = db.major() >= 14;
    as_planter(
        &db,
        "CREATE TABLE public.base (id int, note text); INSERT INTO public.base VALUES (1, 'a');
         CREATE TABLE public.other (id int, note text);
         CREATE TABLE public.stray (id int, note text, CHECK (note <> public.leak_imm('adopted child')));
         CREATE TABLE public.stats (a int, b int);
         -- base already has a child, so adopting another leaves its pg_class row alone.
         CREATE TABLE public.first_child () INHERITS (public.base);",
    );
    let engine = engine_for(&db, |c| c.pool.max_conns = 1);
    let listener = Listener::start(&db);
    for _ in 0..3 {
        assert_eq!(
            rows(&engine, "SELECT count(*) AS n FROM base WHERE id = 1").await,
            serde_json::json!([{"n": 1}])
        );
        assert_eq!(
            rows(&engine, "SELECT count(*) AS n FROM stats WHERE a = 1 AND b = 1").await,
            serde_json::json!([{"n": 0}])
        );
    }
    as_planter(&db, "ALTER TABLE public.stray INHERIT public.base");
    match run(&engine, "SELECT count(*) AS n FROM base WHERE id = 1").await {
        Err(Error::Guard(v)) => assert!(v.message.contains("leak_imm()"), "{v}"),
        other => panic!("the adopted child's CHECK ran: {other:?}"),
    }
    if statistics {
        as_planter(
            &db,
            "CREATE STATISTICS public.late ON (a + pg_catalog.length(public.leak_imm('late statistics'))), b FROM public.stats",
        );
        match run(&engine, "SELECT count(*) AS n FROM stats WHERE a = 1 AND b = 1").await {
            Err(Error::Guard(v)) => assert!(v.message.contains("leak_imm()"), "{v}"),
            other => panic!("the new statistics ran: {other:?}"),
        }
    }
    let heard = listener.heard_checked(&db);
    assert!(!heard.contains("the-secret"), "a planted function ran: {heard}");
}
