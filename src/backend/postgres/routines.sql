WITH fn AS (
    SELECT p.oid,
           p.proname::pg_catalog.text AS name,
           p.provolatile OPERATOR(pg_catalog.<>) 'v' AS stable,
           n.nspname OPERATOR(pg_catalog.=) 'pg_catalog' AS builtin,
           (n.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog', 'information_schema']::pg_catalog.name[])
            OR e.objid IS NOT NULL) AS trusted
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
    LEFT JOIN (SELECT DISTINCT d.objid FROM pg_catalog.pg_depend d
               WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                 AND d.deptype OPERATOR(pg_catalog.=) 'e') e ON e.objid OPERATOR(pg_catalog.=) p.oid
),
-- Functions that run without their name in the query: behind an operator
-- defined outside pg_catalog, or behind a cast or a domain's constraint
-- into a type, or an operator class's support function, outside pg_catalog.
foreign_operator AS (
    SELECT o.oprname::pg_catalog.text AS op, f.name
    FROM pg_catalog.pg_operator o
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) o.oprnamespace
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) o.oprcode
    WHERE NOT (n.nspname OPERATOR(pg_catalog.=) 'pg_catalog' AND f.builtin)
),
foreign_cast AS (
    SELECT t.typname::pg_catalog.text AS type, f.name
    FROM pg_catalog.pg_cast c
    JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) c.casttarget
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) c.castfunc
    WHERE NOT f.builtin
    UNION
    SELECT t.typname::pg_catalog.text, f.name
    FROM pg_catalog.pg_constraint c
    JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) c.contypid
    JOIN pg_catalog.pg_depend d ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND d.objid OPERATOR(pg_catalog.=) c.oid
        AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) d.refobjid
    WHERE NOT f.builtin
),
implicit AS (
    SELECT f.name FROM foreign_operator o JOIN fn f ON f.name OPERATOR(pg_catalog.=) o.name
    WHERE o.op OPERATOR(pg_catalog.=) ANY (ARRAY['=', '<>', '<', '>', '<=', '>=']::pg_catalog.text[])
    UNION
    SELECT f.name FROM pg_catalog.pg_amproc a JOIN fn f ON f.oid OPERATOR(pg_catalog.=) a.amproc
    WHERE NOT f.builtin
)
SELECT pg_catalog.json_build_object(
    'functions', (SELECT pg_catalog.json_object_agg(name, trust) FROM (
        SELECT name, CASE WHEN pg_catalog.bool_and(trusted AND stable) THEN 'read-only'
                          WHEN pg_catalog.bool_and(builtin) THEN 'built-in'
                          ELSE 'untrusted' END AS trust
        FROM fn GROUP BY name) x),
    'operators', (SELECT pg_catalog.json_object_agg(op, fns) FROM (
        SELECT o.oprname::pg_catalog.text AS op,
               pg_catalog.to_json(pg_catalog.array_remove(pg_catalog.array_agg(DISTINCT f.name), NULL)) AS fns
        FROM pg_catalog.pg_operator o LEFT JOIN foreign_operator f ON f.op OPERATOR(pg_catalog.=) o.oprname
        GROUP BY 1) x),
    'casts', (SELECT pg_catalog.json_object_agg(type, fns) FROM (
        SELECT type, pg_catalog.to_json(pg_catalog.array_agg(DISTINCT name)) AS fns FROM foreign_cast GROUP BY 1) x),
    'implicit', (SELECT pg_catalog.to_json(pg_catalog.array_agg(DISTINCT name)) FROM implicit)
)
