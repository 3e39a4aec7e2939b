-- The catalog facts the guard judges functions with (guard/routines.rs).
-- Objects with an OID below 16384 were made by initdb: PostgreSQL's own.
WITH RECURSIVE fn AS (
    SELECT p.oid,
           p.proname::pg_catalog.text AS name,
           p.provolatile OPERATOR(pg_catalog.<>) 'v' AS stable,
           n.nspname OPERATOR(pg_catalog.=) 'pg_catalog' AS builtin,
           -- Trusted: PostgreSQL's own, or an extension's, and owned by a
           -- superuser (a non-superuser can add their own function to an
           -- extension they created).
           ((n.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog', 'information_schema']::pg_catalog.name[])
             OR e.objid IS NOT NULL)
            AND coalesce(r.rolsuper, false)) AS trusted
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
    LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) p.proowner
    LEFT JOIN (SELECT DISTINCT d.objid FROM pg_catalog.pg_depend d
               WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                 AND d.deptype OPERATOR(pg_catalog.=) 'e') e ON e.objid OPERATOR(pg_catalog.=) p.oid
),
-- The stored expressions that run functions: constraints (a table's CHECK,
-- a domain's), column defaults, row security policies, and the rules of
-- views and tables: a user's, and PostgreSQL's own that act on writes.
-- pg_depend cannot tell which built-in functions they call (dependencies on
-- built-in objects are not recorded), so the expressions themselves are read.
exprs AS (
    SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass AS classid, c.oid AS objid, c.conbin::pg_catalog.text AS expr
    FROM pg_catalog.pg_constraint c WHERE c.conbin IS NOT NULL AND c.oid OPERATOR(pg_catalog.>=) 16384
    UNION ALL
    SELECT 'pg_catalog.pg_attrdef'::pg_catalog.regclass, d.oid, d.adbin::pg_catalog.text
    FROM pg_catalog.pg_attrdef d WHERE d.oid OPERATOR(pg_catalog.>=) 16384
    UNION ALL
    SELECT 'pg_catalog.pg_policy'::pg_catalog.regclass, p.oid,
           pg_catalog.concat(p.polqual::pg_catalog.text, p.polwithcheck::pg_catalog.text)
    FROM pg_catalog.pg_policy p
    UNION ALL
    SELECT 'pg_catalog.pg_rewrite'::pg_catalog.regclass, w.oid,
           pg_catalog.concat(w.ev_action::pg_catalog.text, w.ev_qual::pg_catalog.text)
    FROM pg_catalog.pg_rewrite w
    WHERE w.ev_class OPERATOR(pg_catalog.>=) 16384 OR w.ev_type OPERATOR(pg_catalog.<>) '1'
),
-- The functions each expression calls: by function, by operator, as an
-- aggregate or window function.
calls AS (
    SELECT e.classid, e.objid, m[2]::pg_catalog.oid AS func
    FROM exprs e,
         pg_catalog.regexp_matches(e.expr, ':(funcid|opfuncid|aggfnoid|winfnoid) (\d+)', 'g') m
    WHERE m[2] OPERATOR(pg_catalog.<>) '0'
    UNION
    SELECT e.classid, e.objid, o.oprcode
    FROM exprs e,
         pg_catalog.regexp_matches(e.expr, ':opno (\d+)', 'g') m
    JOIN pg_catalog.pg_operator o ON o.oid OPERATOR(pg_catalog.=) m[1]::pg_catalog.oid
),
foreign_operator AS (
    SELECT o.oprname::pg_catalog.text AS op, f.name
    FROM pg_catalog.pg_operator o
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) o.oprnamespace
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) o.oprcode
    WHERE NOT (n.nspname OPERATOR(pg_catalog.=) 'pg_catalog' AND f.builtin)
),
-- Functions a value runs on its way into a type: a domain's constraints,
-- and those of every type it holds: a domain its base type's, an array its
-- element's, a composite its attributes' ...
domain_own AS (
    SELECT con.contypid AS type, k.func
    FROM pg_catalog.pg_constraint con
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) con.oid
    WHERE con.contypid OPERATOR(pg_catalog.<>) 0
),
domain_fn(type, func) AS (
    SELECT type, func FROM domain_own
    UNION
    SELECT outer_type.oid, t.func
    FROM domain_fn t
    JOIN LATERAL (
        SELECT d.oid FROM pg_catalog.pg_type d
        WHERE d.typtype OPERATOR(pg_catalog.=) 'd' AND d.typbasetype OPERATOR(pg_catalog.=) t.type
        UNION ALL
        SELECT e.typarray FROM pg_catalog.pg_type e
        WHERE e.oid OPERATOR(pg_catalog.=) t.type AND e.typarray OPERATOR(pg_catalog.<>) 0
        UNION ALL
        SELECT c.reltype FROM pg_catalog.pg_attribute a
        JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
        WHERE a.atttypid OPERATOR(pg_catalog.=) t.type AND a.attnum OPERATOR(pg_catalog.>) 0
          AND NOT a.attisdropped
    ) outer_type ON true
),
-- ... and the casts a user made into it (an explicit cast into this type).
type_fn(type, func) AS (
    SELECT type, func FROM domain_fn
    UNION
    SELECT c.casttarget, c.castfunc
    FROM pg_catalog.pg_cast c
    WHERE c.oid OPERATOR(pg_catalog.>=) 16384 AND c.castfunc OPERATOR(pg_catalog.<>) 0
    UNION
    SELECT type, func FROM implicit_cast
),
-- Casts a user made that PostgreSQL applies by itself (implicit, or in
-- assignment): they run where a value of their source type appears, so they
-- belong to that type and to the relations with columns of it.
implicit_cast AS (
    SELECT c.castsource AS type, c.castfunc AS func
    FROM pg_catalog.pg_cast c
    WHERE c.oid OPERATOR(pg_catalog.>=) 16384 AND c.castfunc OPERATOR(pg_catalog.<>) 0
      AND c.castcontext OPERATOR(pg_catalog.=) ANY (ARRAY['i', 'a']::pg_catalog."char"[])
),
-- Functions that run without being named: comparison operators and
-- operator-class support functions defined outside pg_catalog.
implicit AS (
    SELECT f.name FROM foreign_operator o JOIN fn f ON f.name OPERATOR(pg_catalog.=) o.name
    WHERE o.op OPERATOR(pg_catalog.=) ANY (ARRAY['=', '<>', '<', '>', '<=', '>=']::pg_catalog.text[])
    UNION
    SELECT f.name FROM pg_catalog.pg_amproc a JOIN fn f ON f.oid OPERATOR(pg_catalog.=) a.amproc
    WHERE NOT f.builtin
),
-- Casts a user made into json or jsonb, which to_json, json_agg and the
-- other json functions apply by themselves.
json_casts AS (
    SELECT f.name FROM pg_catalog.pg_cast c JOIN fn f ON f.oid OPERATOR(pg_catalog.=) c.castfunc
    WHERE c.oid OPERATOR(pg_catalog.>=) 16384
      AND c.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.json', 'pg_catalog.jsonb']::pg_catalog.regtype[])
),
-- Functions a relation runs when read (a view's query, row security
-- policies) or written (defaults, triggers, CHECK constraints, rules,
-- policies), through the relations a view or rule reads or writes.
rel_own AS (
    SELECT w.ev_class AS rel, k.func, w.ev_type OPERATOR(pg_catalog.=) '1' AS on_read
    FROM pg_catalog.pg_rewrite w
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) w.oid
    UNION
    -- A policy for SELECT runs on reads, one for a write command on writes,
    -- one for ALL on both.
    SELECT p.polrelid, k.func, side.on_read
    FROM pg_catalog.pg_policy p
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) p.oid
    JOIN (VALUES (true), (false)) side(on_read)
        ON (side.on_read AND p.polcmd OPERATOR(pg_catalog.=) ANY (ARRAY['r', '*']::pg_catalog."char"[]))
        OR (NOT side.on_read AND p.polcmd OPERATOR(pg_catalog.<>) 'r')
    UNION
    SELECT ad.adrelid, k.func, false
    FROM pg_catalog.pg_attrdef ad
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) ad.oid
    UNION
    SELECT con.conrelid, k.func, false
    FROM pg_catalog.pg_constraint con
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) con.oid
    WHERE con.conrelid OPERATOR(pg_catalog.<>) 0
    UNION
    SELECT t.tgrelid, t.tgfoid, false FROM pg_catalog.pg_trigger t WHERE NOT t.tgisinternal
    UNION
    SELECT a.attrelid, i.func, true
    FROM pg_catalog.pg_attribute a JOIN implicit_cast i ON i.type OPERATOR(pg_catalog.=) a.atttypid
    WHERE a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
    UNION
    -- A value written into a column of a domain runs the domain's checks.
    SELECT a.attrelid, d.func, false
    FROM pg_catalog.pg_attribute a JOIN domain_fn d ON d.type OPERATOR(pg_catalog.=) a.atttypid
    WHERE a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
),
-- Which relation reads or writes which: the relations a view's or rule's
-- query names.
rel_uses AS (
    SELECT DISTINCT w.ev_class AS rel, m[1]::pg_catalog.oid AS used
    FROM pg_catalog.pg_rewrite w,
         pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':relid (\d+)', 'g') m
    WHERE (w.ev_class OPERATOR(pg_catalog.>=) 16384 OR w.ev_type OPERATOR(pg_catalog.<>) '1')
      AND m[1]::pg_catalog.oid OPERATOR(pg_catalog.<>) w.ev_class
),
-- A relation's read functions; PostgreSQL's own views read through
-- PostgreSQL's own functions, which read-only mode does not second-guess.
rel_read(rel, func) AS (
    SELECT rel, func FROM rel_own WHERE on_read AND rel OPERATOR(pg_catalog.>=) 16384
    UNION
    SELECT u.rel, r.func FROM rel_read r JOIN rel_uses u ON u.used OPERATOR(pg_catalog.=) r.rel
),
-- Writes reach the relations a view or rule writes through, PostgreSQL's
-- own included (an UPDATE of pg_settings runs set_config).
rel_write(rel, func) AS (
    SELECT rel, func FROM rel_own WHERE NOT on_read
    UNION
    SELECT u.rel, r.func FROM rel_write r JOIN rel_uses u ON u.used OPERATOR(pg_catalog.=) r.rel
),
named AS (
    SELECT c.relname::pg_catalog.text AS rel, f.name, true AS on_read
    FROM rel_read r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.rel
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) r.func
    UNION
    SELECT c.relname::pg_catalog.text, f.name, false
    FROM rel_write r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.rel
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) r.func
)
SELECT pg_catalog.json_build_object(
    'version', %VERSION%,
    'functions', (SELECT pg_catalog.json_object_agg(name, trust) FROM (
        SELECT name, CASE WHEN pg_catalog.bool_and(trusted AND stable) THEN 'read-only'
                          WHEN pg_catalog.bool_and(builtin AND trusted) THEN 'built-in'
                          ELSE 'untrusted' END AS trust
        FROM fn GROUP BY name) x),
    -- A user's aggregate runs its support functions.
    'runs', (SELECT pg_catalog.json_object_agg(name, fns) FROM (
        SELECT p.proname::pg_catalog.text AS name,
               pg_catalog.to_json(pg_catalog.array_agg(DISTINCT s.proname::pg_catalog.text)) AS fns
        FROM pg_catalog.pg_aggregate a
        JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) a.aggfnoid
        JOIN pg_catalog.pg_proc s ON s.oid OPERATOR(pg_catalog.=) ANY (ARRAY[a.aggtransfn, a.aggfinalfn,
            a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]::pg_catalog.oid[])
        WHERE a.aggfnoid OPERATOR(pg_catalog.>=) 16384
        GROUP BY 1) x),
    'operators', (SELECT pg_catalog.json_object_agg(op, fns) FROM (
        SELECT o.oprname::pg_catalog.text AS op,
               pg_catalog.to_json(pg_catalog.array_remove(pg_catalog.array_agg(DISTINCT f.name), NULL)) AS fns
        FROM pg_catalog.pg_operator o LEFT JOIN foreign_operator f ON f.op OPERATOR(pg_catalog.=) o.oprname
        GROUP BY 1) x),
    'casts', (SELECT pg_catalog.json_object_agg(type, fns) FROM (
        SELECT t.typname::pg_catalog.text AS type, pg_catalog.to_json(pg_catalog.array_agg(DISTINCT f.name)) AS fns
        FROM type_fn x JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) x.type
        JOIN fn f ON f.oid OPERATOR(pg_catalog.=) x.func
        GROUP BY 1) x),
    'implicit', (SELECT pg_catalog.to_json(pg_catalog.array_agg(DISTINCT name)) FROM implicit),
    'json_casts', (SELECT pg_catalog.to_json(pg_catalog.array_agg(DISTINCT name)) FROM json_casts),
    'relations', (SELECT pg_catalog.json_object_agg(rel, pg_catalog.json_build_object(
            'read', pg_catalog.to_json(coalesce(rd, ARRAY[]::pg_catalog.text[])),
            'write', pg_catalog.to_json(coalesce(wr, ARRAY[]::pg_catalog.text[]))))
        FROM (SELECT rel, pg_catalog.array_agg(DISTINCT name) FILTER (WHERE on_read) AS rd,
                     pg_catalog.array_agg(DISTINCT name) FILTER (WHERE NOT on_read) AS wr
              FROM named GROUP BY rel) x)
)
