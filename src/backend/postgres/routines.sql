-- The catalog facts the guard judges functions with (guard/routines.rs).
-- Objects with an OID below 16384 were made by initdb: PostgreSQL's own.
WITH RECURSIVE fn AS (
    SELECT p.oid,
           p.proname::pg_catalog.text AS name,
           p.provolatile OPERATOR(pg_catalog.<>) 'v' AS stable,
           n.nspname OPERATOR(pg_catalog.=) 'pg_catalog' AS builtin,
           -- Trusted: PostgreSQL's own, or an extension's in the
           -- extension's own schema, and owned by a superuser (a
           -- non-superuser can add their own function to an extension they
           -- created; `ALTER EXTENSION plpgsql ADD FUNCTION public.f()`
           -- makes any function a member, outside the extension's schema).
           ((n.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog', 'information_schema']::pg_catalog.name[])
             OR coalesce(e.extnamespace OPERATOR(pg_catalog.=) p.pronamespace, false))
            AND coalesce(r.rolsuper, false))
           -- The constructors PostgreSQL itself makes for a range type and
           -- its multirange, in the creator's schema: C code of its own
           -- (only a superuser can write a function in language internal).
           OR (l.lanname OPERATOR(pg_catalog.=) 'internal'
               AND p.prosrc OPERATOR(pg_catalog.=) ANY (ARRAY['range_constructor2', 'range_constructor3',
                   'multirange_constructor0', 'multirange_constructor1', 'multirange_constructor2']::pg_catalog.text[]))
           AS trusted
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
    JOIN pg_catalog.pg_language l ON l.oid OPERATOR(pg_catalog.=) p.prolang
    LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) p.proowner
    LEFT JOIN (SELECT DISTINCT d.objid, x.extnamespace FROM pg_catalog.pg_depend d
               JOIN pg_catalog.pg_extension x ON x.oid OPERATOR(pg_catalog.=) d.refobjid
               WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                 AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                 AND d.deptype OPERATOR(pg_catalog.=) 'e') e ON e.objid OPERATOR(pg_catalog.=) p.oid
),
-- The stored expressions that run functions: constraints (a table's CHECK,
-- a domain's), column and domain defaults, row security policies, the rules of
-- views and tables (a user's, and PostgreSQL's own that act on writes), and
-- the expressions the planner folds as it plans a statement reading a table:
-- its indexes' expressions and predicates, its extended statistics'
-- expressions, its partition key (an IMMUTABLE function with constant
-- arguments runs there, as the user planning the statement).
-- pg_depend cannot tell which built-in functions they call (dependencies on
-- built-in objects are not recorded), so the expressions themselves are read.
exprs AS (
    SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass AS classid, c.oid AS objid, c.conbin::pg_catalog.text AS expr
    FROM pg_catalog.pg_constraint c WHERE c.conbin IS NOT NULL AND c.oid OPERATOR(pg_catalog.>=) 16384
    UNION ALL
    SELECT 'pg_catalog.pg_attrdef'::pg_catalog.regclass, d.oid, d.adbin::pg_catalog.text
    FROM pg_catalog.pg_attrdef d WHERE d.oid OPERATOR(pg_catalog.>=) 16384
    UNION ALL
    SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid, t.typdefaultbin::pg_catalog.text
    FROM pg_catalog.pg_type t WHERE t.typdefaultbin IS NOT NULL AND t.oid OPERATOR(pg_catalog.>=) 16384
    UNION ALL
    SELECT 'pg_catalog.pg_policy'::pg_catalog.regclass, p.oid,
           pg_catalog.concat(p.polqual::pg_catalog.text, p.polwithcheck::pg_catalog.text)
    FROM pg_catalog.pg_policy p
    UNION ALL
    SELECT 'pg_catalog.pg_rewrite'::pg_catalog.regclass, w.oid,
           pg_catalog.concat(w.ev_action::pg_catalog.text, w.ev_qual::pg_catalog.text)
    FROM pg_catalog.pg_rewrite w
    WHERE w.ev_class OPERATOR(pg_catalog.>=) 16384 OR w.ev_type OPERATOR(pg_catalog.<>) '1'
    UNION ALL
    SELECT 'pg_catalog.pg_index'::pg_catalog.regclass, i.indexrelid,
           pg_catalog.concat(i.indexprs::pg_catalog.text, i.indpred::pg_catalog.text)
    FROM pg_catalog.pg_index i
    WHERE i.indrelid OPERATOR(pg_catalog.>=) 16384 AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL)
    UNION ALL
    -- pg_statistic_ext.stxexprs exists from PostgreSQL 14 on: read as
    -- jsonb, it is NULL before.
    SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid,
           pg_catalog.to_jsonb(x) OPERATOR(pg_catalog.->>) 'stxexprs'
    FROM pg_catalog.pg_statistic_ext x
    WHERE x.stxrelid OPERATOR(pg_catalog.>=) 16384
    UNION ALL
    SELECT 'pg_catalog.pg_partitioned_table'::pg_catalog.regclass, p.partrelid, p.partexprs::pg_catalog.text
    FROM pg_catalog.pg_partitioned_table p WHERE p.partexprs IS NOT NULL
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
-- A type's qualified name, for the refusal (as text, not as SQL: a
-- keyword stays unquoted).
typ AS (
    SELECT t.oid,
           n.nspname::pg_catalog.text OPERATOR(pg_catalog.||) '.'
               OPERATOR(pg_catalog.||) t.typname::pg_catalog.text AS name
    FROM pg_catalog.pg_type t
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
),
-- A database user's types no value of another type becomes by itself: not
-- a domain (its base type's values become it), not a composite (a ROW()
-- becomes it), none with an implicit cast into it; an array of such a type.
-- Overload resolution gives an operator over one only a value of it (or an
-- unknown literal, where a value of another type cannot fit).
closed_type AS (
    SELECT t.oid FROM pg_catalog.pg_type t
    LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
        AND t.typcategory OPERATOR(pg_catalog.=) 'A'
    WHERE t.oid OPERATOR(pg_catalog.>=) 16384
      AND t.typtype OPERATOR(pg_catalog.=) ANY (ARRAY['b', 'e', 'r', 'm']::pg_catalog."char"[])
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_cast c WHERE c.casttarget OPERATOR(pg_catalog.=) t.oid
                          AND c.castcontext OPERATOR(pg_catalog.=) 'i')
      AND (e.oid IS NULL
           OR (e.oid OPERATOR(pg_catalog.>=) 16384
               AND e.typtype OPERATOR(pg_catalog.=) ANY (ARRAY['b', 'e', 'r', 'm']::pg_catalog."char"[])
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_cast c WHERE c.casttarget OPERATOR(pg_catalog.=) e.oid
                                   AND c.castcontext OPERATOR(pg_catalog.=) 'i')))
),
-- Operators defined outside pg_catalog, and whether each of its arguments
-- is a closed type a database user made: such an operator runs only where a
-- value of that type is, and so belongs to the type. One with an argument
-- of PostgreSQL's own types, or an open one, can be picked where an
-- unknown literal or a value of another type stands in for its user's type
-- (`'ok' @@ 5`, `text_col = 1` for a domain over int): it is found by name.
foreign_op AS (
    SELECT o.oid, o.oprname::pg_catalog.text AS op, o.oprcode AS func, o.oprleft, o.oprright,
           ((o.oprleft OPERATOR(pg_catalog.=) 0 OR o.oprleft OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT oid FROM closed_type)))
            AND (o.oprright OPERATOR(pg_catalog.=) 0
                 OR o.oprright OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT oid FROM closed_type)))) AS on_user_type,
           EXISTS (SELECT FROM pg_catalog.pg_operator b
                   WHERE b.oprnamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace
                     AND b.oprname OPERATOR(pg_catalog.=) o.oprname) AS builtin_name,
           -- An unqualified use never finds it: its schema is not on the
           -- search path, or PostgreSQL's own operator of the same name and
           -- argument types is searched first.
           (pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname) IS NULL
            OR (EXISTS (SELECT FROM pg_catalog.pg_operator b
                        WHERE b.oprnamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace
                          AND b.oprname OPERATOR(pg_catalog.=) o.oprname
                          AND b.oprleft OPERATOR(pg_catalog.=) o.oprleft
                          AND b.oprright OPERATOR(pg_catalog.=) o.oprright)
                AND pg_catalog.array_position(pg_catalog.current_schemas(true), 'pg_catalog'::pg_catalog.name)
                    OPERATOR(pg_catalog.<) pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)))
             AS shadowed,
           n.nspname::pg_catalog.text OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) o.oprname::pg_catalog.text AS qualified
    FROM pg_catalog.pg_operator o
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) o.oprnamespace
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) o.oprcode
    WHERE NOT (n.nspname OPERATOR(pg_catalog.=) 'pg_catalog' AND f.builtin)
),
-- What a value of a type may run, and why: a domain's constraints and
-- default, a user's cast from or into it (to_json and the other json
-- functions apply a user's cast into json by themselves), a range's
-- support functions, an operator over it.
type_own(type, func, via) AS (
    SELECT con.contypid, k.func,
           'the constraint ' OPERATOR(pg_catalog.||) con.conname::pg_catalog.text
               OPERATOR(pg_catalog.||) ' of domain ' OPERATOR(pg_catalog.||) y.name
    FROM pg_catalog.pg_constraint con
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) con.oid
    JOIN typ y ON y.oid OPERATOR(pg_catalog.=) con.contypid
    WHERE con.contypid OPERATOR(pg_catalog.<>) 0
    UNION
    SELECT k.objid, k.func, 'the default of domain ' OPERATOR(pg_catalog.||) y.name
    FROM calls k JOIN typ y ON y.oid OPERATOR(pg_catalog.=) k.objid
    WHERE k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass
    UNION
    SELECT side.type, c.castfunc,
           'the cast from ' OPERATOR(pg_catalog.||) s.name OPERATOR(pg_catalog.||) ' to ' OPERATOR(pg_catalog.||) t.name
    FROM pg_catalog.pg_cast c
    JOIN typ s ON s.oid OPERATOR(pg_catalog.=) c.castsource
    JOIN typ t ON t.oid OPERATOR(pg_catalog.=) c.casttarget
    CROSS JOIN LATERAL (VALUES (c.castsource), (c.casttarget)) side(type)
    WHERE c.oid OPERATOR(pg_catalog.>=) 16384 AND c.castfunc OPERATOR(pg_catalog.<>) 0
      AND side.type OPERATOR(pg_catalog.>=) 16384
    UNION
    SELECT r.rngtypid, f.func, 'a support function of range type ' OPERATOR(pg_catalog.||) y.name
    FROM pg_catalog.pg_range r
    JOIN typ y ON y.oid OPERATOR(pg_catalog.=) r.rngtypid
    CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[r.rngcanonical, r.rngsubdiff]::pg_catalog.oid[]) f(func)
    WHERE r.rngtypid OPERATOR(pg_catalog.>=) 16384 AND f.func OPERATOR(pg_catalog.<>) 0
    UNION
    SELECT side.type, o.func, 'the operator ' OPERATOR(pg_catalog.||) o.qualified
    FROM foreign_op o
    CROSS JOIN LATERAL (VALUES (o.oprleft), (o.oprright)) side(type)
    WHERE side.type OPERATOR(pg_catalog.>=) 16384
),
-- A value holds values of other types, whose checks run as it is made:
-- a domain its base type's, an array its element's, a composite (a table's
-- row too) its attributes', a range its subtype's, a multirange its
-- range's. So what a type runs reaches every type built on it, however
-- deeply (a domain over a domain, an array of a composite of a range).
type_fn(type, func, via) AS (
    SELECT type, func, via FROM type_own
    UNION
    SELECT outer_type.oid, t.func, t.via
    FROM type_fn t
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
          AND NOT a.attisdropped AND c.reltype OPERATOR(pg_catalog.<>) 0
        UNION ALL
        SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngsubtype OPERATOR(pg_catalog.=) t.type
        UNION ALL
        -- pg_range.rngmultitypid exists from PostgreSQL 14 on: read as
        -- jsonb, it is NULL before.
        SELECT (pg_catalog.to_jsonb(r) OPERATOR(pg_catalog.->>) 'rngmultitypid')::pg_catalog.oid
        FROM pg_catalog.pg_range r WHERE r.rngtypid OPERATOR(pg_catalog.=) t.type
    ) outer_type ON outer_type.oid IS NOT NULL
),
-- Casts between two of PostgreSQL's own types can only be a superuser's;
-- they may run anywhere, in any statement.
builtin_cast AS (
    SELECT c.castfunc AS func FROM pg_catalog.pg_cast c
    WHERE c.oid OPERATOR(pg_catalog.>=) 16384 AND c.castfunc OPERATOR(pg_catalog.<>) 0
      AND c.castsource OPERATOR(pg_catalog.<) 16384 AND c.casttarget OPERATOR(pg_catalog.<) 16384
),
-- What an unqualified operator name can find: an operator whose name
-- PostgreSQL's own operators do not have, by its name; one that shares a
-- built-in name but takes a user's type, only where a value of that type is
-- (type_fn: `'a' = 'b'` prefers text, a preferred type); one over
-- PostgreSQL's own types can capture any comparison of them, unless it is
-- shadowed (foreign_op). OPERATOR(schema.op) finds any (the operators
-- fact lists each under its qualified name too).
foreign_operator AS (
    SELECT o.op, f.name FROM foreign_op o JOIN fn f ON f.oid OPERATOR(pg_catalog.=) o.func
    WHERE NOT o.shadowed AND (NOT o.builtin_name OR NOT o.on_user_type)
    UNION
    -- An operator over a user's type found by name also runs what the
    -- type's values run (a domain's checks on a literal it coerces).
    SELECT o.op, f.name FROM foreign_op o
    JOIN type_fn t ON t.type OPERATOR(pg_catalog.=) ANY (ARRAY[o.oprleft, o.oprright])
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) t.func
    WHERE NOT o.builtin_name
),
-- Functions that run without being named: comparison operators over
-- PostgreSQL's own types defined outside pg_catalog (CASE and JOIN USING
-- find = by name), operator-class support functions defined outside
-- pg_catalog, and a superuser's casts between built-in types.
implicit AS (
    SELECT name FROM foreign_operator
    WHERE op OPERATOR(pg_catalog.=) ANY (ARRAY['=', '<>', '<', '>', '<=', '>=']::pg_catalog.text[])
    UNION
    SELECT f.name FROM pg_catalog.pg_amproc a JOIN fn f ON f.oid OPERATOR(pg_catalog.=) a.amproc
    WHERE NOT f.builtin
    UNION
    SELECT f.name FROM builtin_cast c JOIN fn f ON f.oid OPERATOR(pg_catalog.=) c.func
),
-- The objects that read other relations, and the types their stored
-- expressions use, as PostgreSQL records them (pg_depend: a view's or
-- rule's query, a policy's expressions, a constraint, a default).
expr_deps AS (
    SELECT d.classid, d.objid, d.refclassid, d.refobjid
    FROM pg_catalog.pg_depend d
    WHERE d.classid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.pg_rewrite', 'pg_catalog.pg_policy',
              'pg_catalog.pg_constraint', 'pg_catalog.pg_attrdef']::pg_catalog.regclass[])
      AND d.refclassid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.pg_type', 'pg_catalog.pg_class']::pg_catalog.regclass[])
      AND d.refobjid OPERATOR(pg_catalog.>=) 16384
      AND d.deptype OPERATOR(pg_catalog.=) 'n'
),
-- A materialized view's query ran when it was refreshed: reading it reads
-- stored rows, and runs nothing of its query.
matview AS (
    SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relkind OPERATOR(pg_catalog.=) 'm'
),
-- The types a relation reaches (its own row type, and the types its views,
-- policies, constraints and defaults use), read or written.
rel_type(rel, type, on_read) AS (
    SELECT c.oid, c.reltype, side.on_read
    FROM pg_catalog.pg_class c CROSS JOIN (VALUES (true), (false)) side(on_read)
    WHERE c.oid OPERATOR(pg_catalog.>=) 16384 AND c.reltype OPERATOR(pg_catalog.<>) 0
    UNION
    SELECT w.ev_class, d.refobjid, w.ev_type OPERATOR(pg_catalog.=) '1'
    FROM expr_deps d JOIN pg_catalog.pg_rewrite w ON w.oid OPERATOR(pg_catalog.=) d.objid
    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
      AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass
      AND w.ev_class OPERATOR(pg_catalog.<>) ALL (ARRAY(SELECT oid FROM matview))
    UNION
    SELECT p.polrelid, d.refobjid, side.on_read
    FROM expr_deps d JOIN pg_catalog.pg_policy p ON p.oid OPERATOR(pg_catalog.=) d.objid
    JOIN (VALUES (true), (false)) side(on_read)
        ON (side.on_read AND p.polcmd OPERATOR(pg_catalog.=) ANY (ARRAY['r', '*']::pg_catalog."char"[]))
        OR (NOT side.on_read AND p.polcmd OPERATOR(pg_catalog.<>) 'r')
    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass
      AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass
    UNION
    SELECT coalesce(con.conrelid, ad.adrelid), d.refobjid, false
    FROM expr_deps d
    LEFT JOIN pg_catalog.pg_constraint con ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND con.oid OPERATOR(pg_catalog.=) d.objid
    LEFT JOIN pg_catalog.pg_attrdef ad ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
        AND ad.oid OPERATOR(pg_catalog.=) d.objid
    WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass
      AND coalesce(con.conrelid, ad.adrelid) OPERATOR(pg_catalog.<>) 0
),
-- Functions a relation runs when read (a view's query, row security
-- policies, what the types it reaches run) or written (defaults,
-- triggers, CHECK constraints, rules, policies), through the relations a
-- view, rule or policy reads or writes.
rel_own AS (
    SELECT w.ev_class AS rel, k.func, w.ev_type OPERATOR(pg_catalog.=) '1' AS on_read, NULL::pg_catalog.text AS via
    FROM pg_catalog.pg_rewrite w
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) w.oid
    WHERE w.ev_class OPERATOR(pg_catalog.<>) ALL (ARRAY(SELECT oid FROM matview))
    UNION
    -- A policy for SELECT runs on reads, one for a write command on writes,
    -- one for ALL on both.
    SELECT p.polrelid, k.func, side.on_read, NULL
    FROM pg_catalog.pg_policy p
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) p.oid
    JOIN (VALUES (true), (false)) side(on_read)
        ON (side.on_read AND p.polcmd OPERATOR(pg_catalog.=) ANY (ARRAY['r', '*']::pg_catalog."char"[]))
        OR (NOT side.on_read AND p.polcmd OPERATOR(pg_catalog.<>) 'r')
    UNION
    SELECT ad.adrelid, k.func, false, NULL
    FROM pg_catalog.pg_attrdef ad
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) ad.oid
    UNION
    -- A table's CHECK constraints run on writes, and the planner folds
    -- them on reads too (constraint exclusion, for a parent's children).
    SELECT con.conrelid, k.func, side.on_read, NULL
    FROM pg_catalog.pg_constraint con
    JOIN calls k ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass
        AND k.objid OPERATOR(pg_catalog.=) con.oid
    JOIN (VALUES (true), (false)) side(on_read)
        ON NOT side.on_read OR con.contype OPERATOR(pg_catalog.=) 'c'
    WHERE con.conrelid OPERATOR(pg_catalog.<>) 0
    UNION
    -- What the planner folds as it plans a read (exprs).
    SELECT coalesce(i.indrelid, x.stxrelid, p.partrelid), k.func, true, NULL
    FROM calls k
    LEFT JOIN pg_catalog.pg_index i ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_index'::pg_catalog.regclass
        AND i.indexrelid OPERATOR(pg_catalog.=) k.objid
    LEFT JOIN pg_catalog.pg_statistic_ext x ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass
        AND x.oid OPERATOR(pg_catalog.=) k.objid
    LEFT JOIN pg_catalog.pg_partitioned_table p
        ON k.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_partitioned_table'::pg_catalog.regclass
        AND p.partrelid OPERATOR(pg_catalog.=) k.objid
    WHERE coalesce(i.indrelid, x.stxrelid, p.partrelid) IS NOT NULL
    UNION
    SELECT t.tgrelid, t.tgfoid, false, NULL FROM pg_catalog.pg_trigger t WHERE NOT t.tgisinternal
    UNION
    -- What the types a relation reaches run: a domain's checks when a value
    -- of it is made (written, or made from the row as json_populate_record
    -- or array_position do), a user's cast into json for to_json.
    SELECT r.rel, t.func, r.on_read, t.via
    FROM rel_type r JOIN type_fn t ON t.type OPERATOR(pg_catalog.=) r.type
),
-- Which relation reads or writes which: the relations a view's or rule's
-- query names (not a materialized view's: its rows are stored), and a
-- parent's inheritance children and partitions (reading or writing it
-- plans and scans them).
rel_uses AS (
    SELECT DISTINCT w.ev_class AS rel, m[1]::pg_catalog.oid AS used
    FROM pg_catalog.pg_rewrite w,
         pg_catalog.regexp_matches(w.ev_action::pg_catalog.text, ':relid (\d+)', 'g') m
    WHERE (w.ev_class OPERATOR(pg_catalog.>=) 16384 OR w.ev_type OPERATOR(pg_catalog.<>) '1')
      AND m[1]::pg_catalog.oid OPERATOR(pg_catalog.<>) w.ev_class
      AND w.ev_class OPERATOR(pg_catalog.<>) ALL (ARRAY(SELECT oid FROM matview))
    UNION
    SELECT h.inhparent, h.inhrelid FROM pg_catalog.pg_inherits h
),
-- The relations a row security policy's expressions read: reading (or
-- writing) the policy's table reads them, their policies and view queries
-- included.
policy_uses AS (
    SELECT DISTINCT p.polrelid AS rel, d.refobjid AS used
    FROM expr_deps d JOIN pg_catalog.pg_policy p ON p.oid OPERATOR(pg_catalog.=) d.objid
    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass
      AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
      AND d.refobjid OPERATOR(pg_catalog.<>) p.polrelid
),
-- A relation's read functions; PostgreSQL's own views read through
-- PostgreSQL's own functions, which read-only mode does not second-guess.
rel_read(rel, func, via) AS (
    SELECT rel, func, via FROM rel_own WHERE on_read AND rel OPERATOR(pg_catalog.>=) 16384
    UNION
    SELECT u.rel, r.func, r.via FROM rel_read r
    JOIN (SELECT rel, used FROM rel_uses UNION SELECT rel, used FROM policy_uses) u
        ON u.used OPERATOR(pg_catalog.=) r.rel
),
-- Writes reach the relations a view or rule writes through, PostgreSQL's
-- own included (an UPDATE of pg_settings runs set_config).
rel_write(rel, func, via) AS (
    SELECT rel, func, via FROM rel_own WHERE NOT on_read
    UNION
    SELECT u.rel, r.func, r.via FROM rel_write r JOIN rel_uses u ON u.used OPERATOR(pg_catalog.=) r.rel
),
-- What reading or writing a relation runs, each function with what runs
-- it when that is not the relation's own expressions.
named AS (
    SELECT c.relname::pg_catalog.text AS rel, f.name, r.via, true AS on_read
    FROM rel_read r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.rel
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) r.func
    UNION
    SELECT c.relname::pg_catalog.text, f.name, r.via, false
    FROM rel_write r JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.rel
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) r.func
),
-- A user's aggregate runs its support functions; a function defined
-- outside pg_catalog also runs what its argument and result types run.
runs(name, item) AS (
    SELECT p.proname::pg_catalog.text, pg_catalog.to_jsonb(s.proname::pg_catalog.text)
    FROM pg_catalog.pg_aggregate a
    JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) a.aggfnoid
    JOIN pg_catalog.pg_proc s ON s.oid OPERATOR(pg_catalog.=) ANY (ARRAY[a.aggtransfn, a.aggfinalfn,
        a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]::pg_catalog.oid[])
    WHERE a.aggfnoid OPERATOR(pg_catalog.>=) 16384
    UNION
    SELECT p.proname::pg_catalog.text, pg_catalog.jsonb_build_object('function', f.name, 'via', t.via)
    FROM pg_catalog.pg_proc p
    JOIN type_fn t ON t.type OPERATOR(pg_catalog.=) ANY (
        coalesce(p.proallargtypes, p.proargtypes::pg_catalog.oid[]) OPERATOR(pg_catalog.||) p.prorettype)
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) t.func
    WHERE p.pronamespace OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
      AND t.func OPERATOR(pg_catalog.<>) p.oid
),
-- Every operator name, with what the ones defined outside pg_catalog run,
-- and each of those again under its schema-qualified name
-- (OPERATOR(schema.op) finds it whatever the search path).
operators(op, item) AS (
    SELECT o.oprname::pg_catalog.text, NULL::pg_catalog.jsonb FROM pg_catalog.pg_operator o
    UNION
    SELECT op, pg_catalog.to_jsonb(name) FROM foreign_operator
    UNION
    SELECT o.qualified, pg_catalog.to_jsonb(f.name)
    FROM foreign_op o JOIN fn f ON f.oid OPERATOR(pg_catalog.=) o.func
    UNION
    SELECT o.qualified, pg_catalog.jsonb_build_object('function', f.name, 'via', t.via)
    FROM foreign_op o
    JOIN type_fn t ON t.type OPERATOR(pg_catalog.=) ANY (ARRAY[o.oprleft, o.oprright])
    JOIN fn f ON f.oid OPERATOR(pg_catalog.=) t.func
)
SELECT pg_catalog.json_build_object(
    'version', %VERSION%,
    'functions', (SELECT pg_catalog.json_object_agg(name, trust) FROM (
        SELECT name, CASE WHEN pg_catalog.bool_and(trusted AND stable) THEN 'read-only'
                          WHEN pg_catalog.bool_and(builtin AND trusted) THEN 'built-in'
                          ELSE 'untrusted' END AS trust
        FROM fn GROUP BY name) x),
    -- Name → the full signature of each function of that name not known
    -- to only read: what protection.read_only_functions vouches for.
    'signatures', (SELECT pg_catalog.json_object_agg(name, sigs) FROM (
        SELECT p.proname::pg_catalog.text AS name,
               pg_catalog.to_json(pg_catalog.array_agg(n.nspname::pg_catalog.text OPERATOR(pg_catalog.||) '.'
                   OPERATOR(pg_catalog.||) p.proname::pg_catalog.text OPERATOR(pg_catalog.||) '('
                   OPERATOR(pg_catalog.||) pg_catalog.oidvectortypes(p.proargtypes) OPERATOR(pg_catalog.||) ')'
                   ORDER BY p.oid)) AS sigs
        FROM fn f
        JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) f.oid
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
        WHERE NOT (f.trusted AND f.stable)
        GROUP BY 1) x),
    'runs', (SELECT pg_catalog.json_object_agg(name, items) FROM (
        SELECT name, pg_catalog.to_jsonb(pg_catalog.array_agg(DISTINCT item)) AS items FROM runs GROUP BY 1) x),
    'operators', (SELECT pg_catalog.json_object_agg(op, items) FROM (
        SELECT op, pg_catalog.to_jsonb(coalesce(pg_catalog.array_agg(DISTINCT item) FILTER (WHERE item IS NOT NULL),
                                                 ARRAY[]::pg_catalog.jsonb[])) AS items
        FROM operators GROUP BY 1) x),
    -- Type name → what a value of it runs (type_fn).
    'casts', (SELECT pg_catalog.json_object_agg(type, items) FROM (
        SELECT t.typname::pg_catalog.text AS type,
               pg_catalog.to_jsonb(pg_catalog.array_agg(DISTINCT pg_catalog.jsonb_build_object('function', f.name, 'via', x.via))) AS items
        FROM type_fn x JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) x.type
        JOIN fn f ON f.oid OPERATOR(pg_catalog.=) x.func
        GROUP BY 1) x),
    'implicit', (SELECT pg_catalog.to_json(pg_catalog.array_agg(DISTINCT name)) FROM implicit),
    -- PostgreSQL's own functions that make a value of a type given by its
    -- oid or name (domain_in, record_recv's kin, pg_input_is_valid): they
    -- reach any type.
    'any_type', (SELECT pg_catalog.to_json(pg_catalog.array_agg(DISTINCT p.proname::pg_catalog.text))
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace
          AND ((p.proargtypes[0] OPERATOR(pg_catalog.=) 'pg_catalog.cstring'::pg_catalog.regtype
                AND 'pg_catalog.oid'::pg_catalog.regtype OPERATOR(pg_catalog.=) ANY (p.proargtypes::pg_catalog.oid[]))
               OR p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_input_is_valid', 'pg_input_error_info']::pg_catalog.name[]))),
    'relations', (SELECT pg_catalog.json_object_agg(rel, pg_catalog.json_build_object(
            'read', pg_catalog.to_jsonb(coalesce(rd, ARRAY[]::pg_catalog.jsonb[])),
            'write', pg_catalog.to_jsonb(coalesce(wr, ARRAY[]::pg_catalog.jsonb[]))))
        FROM (SELECT rel, pg_catalog.array_agg(DISTINCT item) FILTER (WHERE on_read) AS rd,
                     pg_catalog.array_agg(DISTINCT item) FILTER (WHERE NOT on_read) AS wr
              FROM (SELECT rel, on_read, CASE WHEN via IS NULL THEN pg_catalog.to_jsonb(name)
                          ELSE pg_catalog.jsonb_build_object('function', name, 'via', via) END AS item
                    FROM named) n
              GROUP BY rel) x)
)
