//! Third red-team round on what a read-only statement makes PostgreSQL run
//! without naming it. A second, unprivileged database user plants each
//! object; its function reads a table only the agent can read and sends it
//! out with `pg_notify` (a READ ONLY transaction allows it), tagged with the
//! route. For every case: read-only mode refuses the agent's statement naming
//! the planted function, a LISTENer hears nothing; then writable mode (which
//! judges functions only by `protection.blocked_functions`) runs the same
//! statement and the LISTENer hears the tag, so each case is a live route,
//! not a guess. Statements that reach no planted object still run.
//!
//! Routes found open in this round, now closed:
//! - the planner folds an `IMMUTABLE` function with constant arguments in a
//!   relation's index expressions and predicates, extended statistics
//!   expressions and partition key, and, reading a parent, in its inheritance
//!   children's and partitions' `CHECK` constraints (constraint exclusion);
//! - an operator with a built-in name whose argument is a domain, a composite
//!   or a type with an implicit cast into it, or whose other argument is one
//!   of PostgreSQL's own types, is chosen by overload resolution where no
//!   value of the user's type is (`text_col = 1` coerces `1` to a domain over
//!   int; `'ok' @@ 5` makes the unknown literal a user's enum).

use pgmcp::Error;
use pgmcp::guard::Rule;

use crate::support::engine::{engine_for, rows, run};
use crate::support::pg;
use crate::support::planter::{Listener, as_planter, plant_leak};

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
