//! The catalog queries behind `list_tables` and `describe_table`. Each returns a
//! single `json` value built by PostgreSQL, so one round trip answers the whole
//! call. Names only ever arrive as parameters, never as SQL text.

/// Every table-like relation the role can SELECT from, outside system schemas.
pub const LIST_TABLES: &str = r#"
SELECT json_build_object('tables', coalesce(json_agg(t ORDER BY t.schema, t.name), '[]'))
FROM (
    SELECT n.nspname AS schema,
           c.relname AS name,
           CASE c.relkind
               WHEN 'r' THEN 'table'
               WHEN 'v' THEN 'view'
               WHEN 'm' THEN 'materialized_view'
               WHEN 'f' THEN 'foreign_table'
               WHEN 'p' THEN 'partitioned_table'
           END AS type,
           pg_catalog.pg_get_userbyid(c.relowner) AS owner,
           NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE') AS schema_access_limited
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p')
      AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
      AND n.nspname NOT LIKE 'pg_temp_%' AND n.nspname NOT LIKE 'pg_toast_temp_%'
      AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
) t
"#;

/// One relation ($1 = schema, $2 = name): columns, indexes, constraints,
/// foreign keys and, for views, the definition. No row when it does not exist.
pub const DESCRIBE_TABLE: &str = r#"
WITH rel AS (
    SELECT c.oid, n.nspname, c.relname, c.relkind
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
)
SELECT json_build_object(
    'schema', rel.nspname,
    'name', rel.relname,
    'type', CASE rel.relkind
                WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized_view'
                WHEN 'f' THEN 'foreign_table' WHEN 'p' THEN 'partitioned_table' END,
    'definition', CASE WHEN rel.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(rel.oid, true) END,
    'columns', (
        SELECT coalesce(json_agg(json_build_object(
                   'name', a.attname,
                   'type', pg_catalog.format_type(a.atttypid, a.atttypmod),
                   'nullable', NOT a.attnotnull,
                   'default', pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                   'is_primary_key', EXISTS (SELECT 1 FROM pg_catalog.pg_constraint pk
                                             WHERE pk.conrelid = rel.oid AND pk.contype = 'p' AND a.attnum = ANY (pk.conkey))
               ) ORDER BY a.attnum), '[]')
        FROM pg_catalog.pg_attribute a
        LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
    ),
    'indexes', (
        SELECT coalesce(json_agg(json_build_object(
                   'name', ic.relname,
                   'definition', pg_catalog.pg_get_indexdef(i.indexrelid),
                   'is_unique', i.indisunique,
                   'is_primary', i.indisprimary
               ) ORDER BY ic.relname), '[]')
        FROM pg_catalog.pg_index i
        JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = rel.oid
    ),
    'constraints', (
        SELECT coalesce(json_agg(json_build_object(
                   'name', con.conname,
                   'type', CASE con.contype
                               WHEN 'p' THEN 'PRIMARY KEY' WHEN 'f' THEN 'FOREIGN KEY'
                               WHEN 'u' THEN 'UNIQUE' WHEN 'c' THEN 'CHECK' WHEN 'x' THEN 'EXCLUDE'
                               ELSE con.contype::text END,
                   'definition', pg_catalog.pg_get_constraintdef(con.oid, true)
               ) ORDER BY con.conname), '[]')
        FROM pg_catalog.pg_constraint con
        WHERE con.conrelid = rel.oid AND con.contype IN ('p', 'f', 'u', 'c', 'x')
    ),
    'foreign_keys', (
        SELECT coalesce(json_agg(json_build_object(
                   'name', con.conname,
                   'columns', (SELECT json_agg(a.attname ORDER BY k.ord)
                               FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                               JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum),
                   'referenced_table', (SELECT quote_ident(fn.nspname) || '.' || quote_ident(fc.relname)
                                        FROM pg_catalog.pg_class fc JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
                                        WHERE fc.oid = con.confrelid),
                   'referenced_columns', (SELECT json_agg(a.attname ORDER BY k.ord)
                                          FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                                          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum),
                   'on_update', CASE con.confupdtype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT'
                                    WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT' END,
                   'on_delete', CASE con.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT'
                                    WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT' END
               ) ORDER BY con.conname), '[]')
        FROM pg_catalog.pg_constraint con
        WHERE con.conrelid = rel.oid AND con.contype = 'f'
    )
)
FROM rel
"#;

/// Each result column's type as PostgreSQL spells it, in order: for a table
/// column its declared type (a domain keeps its name), else `format_type` of
/// the reported type and modifier. $1 type OIDs, $2 typmods, $3 table OIDs
/// (0 for computed columns), $4 column numbers.
pub const COLUMN_TYPE_NAMES: &str = "
SELECT coalesce(
           (SELECT pg_catalog.format_type(a.atttypid, a.atttypmod)
            FROM pg_catalog.pg_attribute a
            WHERE u.rel <> 0 AND a.attrelid = u.rel AND a.attnum = u.col AND NOT a.attisdropped),
           pg_catalog.format_type(u.o, u.m))
FROM unnest($1::oid[], $2::int4[], $3::oid[], $4::int2[]) WITH ORDINALITY AS u(o, m, rel, col, n)
ORDER BY u.n";

/// How to read values of types that are not built in ($1 = type OIDs): whether
/// it is an array, the built-in type beneath its (element's) domains, and the
/// element delimiter. One row per type.
pub const TYPE_SHAPES: &str = "
WITH RECURSIVE input AS (
    SELECT t.oid AS o,
           (t.typcategory = 'A' AND t.typelem <> 0) AS is_array,
           CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN t.typelem ELSE t.oid END AS start
    FROM pg_catalog.pg_type t
    WHERE t.oid = ANY ($1::oid[])
), chain AS (
    SELECT o, is_array, start AS cur, 0 AS depth FROM input
    UNION ALL
    SELECT c.o, c.is_array, t.typbasetype, c.depth + 1
    FROM chain c JOIN pg_catalog.pg_type t ON t.oid = c.cur
    WHERE t.typtype = 'd' AND c.depth < 16
)
SELECT DISTINCT ON (c.o) c.o, c.is_array, c.cur,
       (SELECT e.typdelim FROM input i JOIN pg_catalog.pg_type e ON e.oid = i.start WHERE i.o = c.o)
FROM chain c
ORDER BY c.o, c.depth DESC";
