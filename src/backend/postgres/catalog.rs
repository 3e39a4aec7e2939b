//! The catalog queries behind `list_tables` and `describe_table`. Each returns a
//! single `json` value built by PostgreSQL, so one round trip answers the whole
//! call. Names only ever arrive as parameters, never as SQL text.

/// Table-like relations the role can SELECT from, outside system schemas,
/// with comments and size hints. $1 = schema or NULL for all, $2 = ILIKE
/// pattern on the name or NULL, $3 = most rows to return (one more is fetched
/// to know whether there are more).
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
           NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE') AS schema_access_limited,
           pg_catalog.obj_description(c.oid, 'pg_class') AS comment,
           CASE WHEN c.relkind IN ('r', 'm', 'p') AND c.reltuples >= 0 THEN c.reltuples::bigint END AS estimated_rows,
           CASE WHEN c.relkind IN ('r', 'm', 'p') THEN pg_catalog.pg_total_relation_size(c.oid) END AS size_bytes,
           c.relispartition AS is_partition
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p')
      AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
      AND n.nspname NOT LIKE 'pg_temp_%' AND n.nspname NOT LIKE 'pg_toast_temp_%'
      AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
      AND ($1::text IS NULL OR n.nspname = $1::text)
      AND ($2::text IS NULL OR c.relname ILIKE $2::text)
    ORDER BY n.nspname, c.relname
    LIMIT $3::int + 1
) t
"#;

/// The schemas holding a table-like relation named $1, for telling a caller
/// where a table is when it did not say, or said wrong.
pub const SCHEMAS_WITH_TABLE: &str = r#"
SELECT coalesce(json_agg(n.nspname ORDER BY n.nspname), '[]')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = $1 AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
"#;

/// Every table-like relation's qualified name the role can see, for
/// suggesting a close match to a misspelled one.
pub const RELATION_NAMES: &str = r#"
SELECT coalesce(json_agg(json_build_array(n.nspname, c.relname)), '[]')
FROM (
    SELECT c.relnamespace, c.relname FROM pg_catalog.pg_class c
    WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
    LIMIT 20000
) c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp_%'
"#;

/// The columns of the relations named in $1 (names, any schema), for
/// suggesting a close match to a misspelled column.
pub const COLUMN_NAMES: &str = r#"
SELECT coalesce(json_agg(json_build_array(c.relname, a.attname)), '[]')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relname = ANY ($1::text[]) AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
"#;

/// One relation ($1 = schema, $2 = name): columns, indexes, constraints,
/// foreign keys and, for views, the definition. No row when it does not exist.
pub const DESCRIBE_TABLE: &str = r#"
WITH rel AS (
    SELECT c.oid, n.nspname, c.relname, c.relkind, c.relispartition
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
    'comment', pg_catalog.obj_description(rel.oid, 'pg_class'),
    'partition', CASE
        WHEN rel.relkind = 'p' THEN (
            SELECT json_build_object(
                       'strategy', CASE pt.partstrat WHEN 'r' THEN 'range' WHEN 'l' THEN 'list' WHEN 'h' THEN 'hash' END,
                       'partition_key', pg_catalog.pg_get_partkeydef(rel.oid),
                       'partitions', (SELECT coalesce(json_agg(quote_ident(cn.nspname) || '.' || quote_ident(cc.relname) ORDER BY cc.relname), '[]')
                                      FROM pg_catalog.pg_inherits i
                                      JOIN pg_catalog.pg_class cc ON cc.oid = i.inhrelid
                                      JOIN pg_catalog.pg_namespace cn ON cn.oid = cc.relnamespace
                                      WHERE i.inhparent = rel.oid))
            FROM pg_catalog.pg_partitioned_table pt WHERE pt.partrelid = rel.oid)
        WHEN rel.relispartition THEN (
            SELECT json_build_object(
                       'parent_table', quote_ident(pn.nspname) || '.' || quote_ident(pc.relname),
                       'bound', pg_catalog.pg_get_expr(child.relpartbound, child.oid))
            FROM pg_catalog.pg_inherits i
            JOIN pg_catalog.pg_class pc ON pc.oid = i.inhparent
            JOIN pg_catalog.pg_namespace pn ON pn.oid = pc.relnamespace
            JOIN pg_catalog.pg_class child ON child.oid = rel.oid
            WHERE i.inhrelid = rel.oid)
    END,
    'columns', (
        SELECT coalesce(json_agg(json_build_object(
                   'name', a.attname,
                   'type', pg_catalog.format_type(a.atttypid, a.atttypmod),
                   'nullable', NOT a.attnotnull,
                   'default', CASE WHEN a.attgenerated = '' THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid) END,
                   'is_primary_key', EXISTS (SELECT 1 FROM pg_catalog.pg_constraint pk
                                             WHERE pk.conrelid = rel.oid AND pk.contype = 'p' AND a.attnum = ANY (pk.conkey)),
                   'comment', pg_catalog.col_description(rel.oid, a.attnum),
                   'identity', CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END,
                   'generated', CASE WHEN a.attgenerated = 's' THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid) END,
                   'sequence', pg_catalog.pg_get_serial_sequence(quote_ident(rel.nspname) || '.' || quote_ident(rel.relname), a.attname),
                   'enum_values', (SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder)
                                   FROM pg_catalog.pg_enum e
                                   WHERE e.enumtypid = (SELECT CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
                                                        FROM pg_catalog.pg_type t WHERE t.oid = a.atttypid))
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
