//! The catalog queries behind `list_tables` and `describe_table`. Each returns a
//! single `json` value built by PostgreSQL, so one round trip answers the whole
//! call. Names only ever arrive as parameters, never as SQL text.
//!
//! Every function and operator in pgmcp's own SQL is written `pg_catalog.`-
//! qualified (`OPERATOR(pg_catalog.=)`), and no syntax that looks an operator
//! up by name (`IN`, `LIKE`, `CASE x WHEN`, `BETWEEN`) is used: a database user
//! who can create objects in a schema on the role's `search_path` could
//! otherwise define a better-matching `quote_ident(name)` or `=` and have
//! pgmcp run it with its own rights. A test parses every statement here, in
//! `routines.sql` and in `role.rs` and refuses anything unqualified. The
//! output keeps the session's `search_path` on purpose, so type names and
//! definitions read as the person's own `psql` would print them.
//!
//! Which relations the tools show: those the role (the effective one:
//! `connection.role` when set, since every catalog query runs after its
//! `SET LOCAL ROLE`) can SELECT from, the whole table or some of its columns
//! (`has_any_column_privilege`), and of those only the columns it can read.
//! `list_tables`, `describe_table`, where a table is when no schema was given,
//! and every "did you mean" name use that one rule, so a table the role cannot
//! read is absent from all of them alike: described, it is "does not exist",
//! exactly like a name nobody created.

use std::sync::LazyLock;

/// What `pgmcp check` shows of a session: server version, user, database,
/// the transaction's read-only state and TLS as the server sees them.
pub const SESSION_REPORT: &str = "SELECT pg_catalog.current_setting('server_version') AS version, current_user AS usr, \
    pg_catalog.current_database() AS db, \
    pg_catalog.current_setting('transaction_read_only') AS read_only, \
    coalesce((SELECT s.ssl FROM pg_catalog.pg_stat_ssl s \
              WHERE s.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()), false) AS ssl";

/// Table-like relations the role can SELECT from, outside system schemas,
/// with comments and size hints. $1 = schema or NULL for all, $2 = ILIKE
/// pattern on the name or NULL, $3 = most rows to return (one more is fetched
/// to know whether there are more).
const LIST_TABLES_TEMPLATE: &str = r#"
SELECT pg_catalog.json_build_object('tables', coalesce(pg_catalog.json_agg(t ORDER BY t.schema, t.name), '[]'))
FROM (
    SELECT n.nspname AS schema,
           c.relname AS name,
           CASE
               WHEN c.relkind OPERATOR(pg_catalog.=) 'r' THEN 'table'
               WHEN c.relkind OPERATOR(pg_catalog.=) 'v' THEN 'view'
               WHEN c.relkind OPERATOR(pg_catalog.=) 'm' THEN 'materialized_view'
               WHEN c.relkind OPERATOR(pg_catalog.=) 'f' THEN 'foreign_table'
               WHEN c.relkind OPERATOR(pg_catalog.=) 'p' THEN 'partitioned_table'
           END AS type,
           pg_catalog.pg_get_userbyid(c.relowner) AS owner,
           NOT pg_catalog.has_schema_privilege(n.oid, 'USAGE') AS schema_access_limited,
           pgmcp_text(pg_catalog.obj_description(c.oid, 'pg_class')) AS comment,
           CASE WHEN c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'm', 'p']) AND c.reltuples OPERATOR(pg_catalog.>=) 0 THEN c.reltuples::bigint END AS estimated_rows,
           CASE WHEN c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'm', 'p']) THEN pg_catalog.pg_total_relation_size(c.oid) END AS size_bytes,
           c.relispartition AS is_partition
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'v', 'm', 'f', 'p'])
      AND n.nspname OPERATOR(pg_catalog.<>) ALL (ARRAY['pg_catalog', 'information_schema', 'pg_toast'])
      AND NOT (n.nspname OPERATOR(pg_catalog.~~) 'pg_temp_%') AND NOT (n.nspname OPERATOR(pg_catalog.~~) 'pg_toast_temp_%')
      AND pg_catalog.has_any_column_privilege(c.oid, 'SELECT')
      AND ($1::pg_catalog.text IS NULL OR n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text)
      AND ($2::pg_catalog.text IS NULL OR c.relname OPERATOR(pg_catalog.~~*) $2::pg_catalog.text)
    ORDER BY n.nspname, c.relname
    LIMIT $3::int OPERATOR(pg_catalog.+) 1
) t
"#;

/// The schemas holding a table-like relation named $1 that the role can
/// read, for telling a caller where a table is when it did not say, or said
/// wrong.
pub const SCHEMAS_WITH_TABLE: &str = r#"
SELECT coalesce(pg_catalog.json_agg(n.nspname ORDER BY n.nspname), '[]')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.=) $1 AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'v', 'm', 'f', 'p'])
  AND n.nspname OPERATOR(pg_catalog.<>) ALL (ARRAY['pg_catalog', 'information_schema', 'pg_toast'])
  AND pg_catalog.has_any_column_privilege(c.oid, 'SELECT')
"#;

/// Every table-like relation's qualified name the role can read, for
/// suggesting a close match to a misspelled one.
pub const RELATION_NAMES: &str = r#"
SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_array(n.nspname, c.relname)), '[]')
FROM (
    SELECT c.relnamespace, c.relname FROM pg_catalog.pg_class c
    WHERE c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'v', 'm', 'f', 'p']) AND pg_catalog.has_any_column_privilege(c.oid, 'SELECT')
    LIMIT 20000
) c
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
WHERE n.nspname OPERATOR(pg_catalog.<>) ALL (ARRAY['pg_catalog', 'information_schema', 'pg_toast']) AND NOT (n.nspname OPERATOR(pg_catalog.~~) 'pg_temp_%')
"#;

/// The columns the role can read of the relations named in $1 (names, any
/// schema), for suggesting a close match to a misspelled column.
pub const COLUMN_NAMES: &str = r#"
SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_array(c.relname, a.attname)), '[]')
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
WHERE c.relname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.text[]) AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'v', 'm', 'f', 'p'])
  AND pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT')
"#;

/// One relation ($1 = schema, $2 = name): columns (those the role can read),
/// indexes, constraints, foreign keys and, for views, the definition. No row
/// when it does not exist or the role cannot read it.
const DESCRIBE_TABLE_TEMPLATE: &str = r#"
WITH rel AS (
    SELECT c.oid, n.nspname, c.relname, c.relkind, c.relispartition
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE n.nspname OPERATOR(pg_catalog.=) $1 AND c.relname OPERATOR(pg_catalog.=) $2 AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'v', 'm', 'f', 'p'])
      AND pg_catalog.has_any_column_privilege(c.oid, 'SELECT')
)
SELECT pg_catalog.json_build_object(
    'schema', rel.nspname,
    'name', rel.relname,
    'type', CASE
                WHEN rel.relkind OPERATOR(pg_catalog.=) 'r' THEN 'table' WHEN rel.relkind OPERATOR(pg_catalog.=) 'v' THEN 'view' WHEN rel.relkind OPERATOR(pg_catalog.=) 'm' THEN 'materialized_view'
                WHEN rel.relkind OPERATOR(pg_catalog.=) 'f' THEN 'foreign_table' WHEN rel.relkind OPERATOR(pg_catalog.=) 'p' THEN 'partitioned_table' END,
    'definition', CASE WHEN rel.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['v', 'm']) THEN pgmcp_text(pg_catalog.pg_get_viewdef(rel.oid, true)) END,
    'comment', pgmcp_text(pg_catalog.obj_description(rel.oid, 'pg_class')),
    'partition', CASE
        WHEN rel.relkind OPERATOR(pg_catalog.=) 'p' THEN (
            SELECT pg_catalog.json_build_object(
                       'strategy', CASE WHEN pt.partstrat OPERATOR(pg_catalog.=) 'r' THEN 'range' WHEN pt.partstrat OPERATOR(pg_catalog.=) 'l' THEN 'list' WHEN pt.partstrat OPERATOR(pg_catalog.=) 'h' THEN 'hash' END,
                       'partition_key', pgmcp_text(pg_catalog.pg_get_partkeydef(rel.oid)),
                       'partitions', (SELECT coalesce(pg_catalog.json_agg(pg_catalog.quote_ident(cn.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(cc.relname) ORDER BY cc.relname), '[]')
                                      FROM pg_catalog.pg_inherits i
                                      JOIN pg_catalog.pg_class cc ON cc.oid OPERATOR(pg_catalog.=) i.inhrelid
                                      JOIN pg_catalog.pg_namespace cn ON cn.oid OPERATOR(pg_catalog.=) cc.relnamespace
                                      WHERE i.inhparent OPERATOR(pg_catalog.=) rel.oid))
            FROM pg_catalog.pg_partitioned_table pt WHERE pt.partrelid OPERATOR(pg_catalog.=) rel.oid)
        WHEN rel.relispartition THEN (
            SELECT pg_catalog.json_build_object(
                       'parent_table', pg_catalog.quote_ident(pn.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(pc.relname),
                       'bound', pgmcp_text(pg_catalog.pg_get_expr(child.relpartbound, child.oid)))
            FROM pg_catalog.pg_inherits i
            JOIN pg_catalog.pg_class pc ON pc.oid OPERATOR(pg_catalog.=) i.inhparent
            JOIN pg_catalog.pg_namespace pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace
            JOIN pg_catalog.pg_class child ON child.oid OPERATOR(pg_catalog.=) rel.oid
            WHERE i.inhrelid OPERATOR(pg_catalog.=) rel.oid)
    END,
    'columns', (
        SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_object(
                   'name', a.attname,
                   'type', pg_catalog.format_type(a.atttypid, a.atttypmod),
                   'nullable', NOT a.attnotnull,
                   'default', CASE WHEN a.attgenerated OPERATOR(pg_catalog.=) '' THEN pgmcp_text(pg_catalog.pg_get_expr(d.adbin, d.adrelid)) END,
                   'is_primary_key', EXISTS (SELECT 1 FROM pg_catalog.pg_constraint pk
                                             WHERE pk.conrelid OPERATOR(pg_catalog.=) rel.oid AND pk.contype OPERATOR(pg_catalog.=) 'p' AND a.attnum OPERATOR(pg_catalog.=) ANY (pk.conkey)),
                   'comment', pgmcp_text(pg_catalog.col_description(rel.oid, a.attnum)),
                   'identity', CASE WHEN a.attidentity OPERATOR(pg_catalog.=) 'a' THEN 'ALWAYS' WHEN a.attidentity OPERATOR(pg_catalog.=) 'd' THEN 'BY DEFAULT' END,
                   'generated', CASE WHEN a.attgenerated OPERATOR(pg_catalog.=) 's' THEN pgmcp_text(pg_catalog.pg_get_expr(d.adbin, d.adrelid)) END,
                   'sequence', pg_catalog.pg_get_serial_sequence(pg_catalog.quote_ident(rel.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(rel.relname), a.attname),
                   'enum_values', (SELECT pg_catalog.json_agg(l.enumlabel ORDER BY l.enumsortorder)
                                   FROM (SELECT e.enumlabel, e.enumsortorder FROM pg_catalog.pg_enum e
                                         WHERE e.enumtypid OPERATOR(pg_catalog.=) (SELECT CASE WHEN t.typtype OPERATOR(pg_catalog.=) 'd' THEN t.typbasetype ELSE t.oid END
                                                              FROM pg_catalog.pg_type t WHERE t.oid OPERATOR(pg_catalog.=) a.atttypid)
                                         ORDER BY e.enumsortorder LIMIT 100) l)
               ) ORDER BY a.attnum), '[]')
        FROM pg_catalog.pg_attribute a
        LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum
        WHERE a.attrelid OPERATOR(pg_catalog.=) rel.oid AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
          AND pg_catalog.has_column_privilege(rel.oid, a.attnum, 'SELECT')
    ),
    'indexes', (
        SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_object(
                   'name', ic.relname,
                   'definition', pgmcp_text(pg_catalog.pg_get_indexdef(i.indexrelid)),
                   'is_unique', i.indisunique,
                   'is_primary', i.indisprimary
               ) ORDER BY ic.relname), '[]')
        FROM pg_catalog.pg_index i
        JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.indexrelid
        WHERE i.indrelid OPERATOR(pg_catalog.=) rel.oid
    ),
    'constraints', (
        SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_object(
                   'name', con.conname,
                   'type', CASE
                               WHEN con.contype OPERATOR(pg_catalog.=) 'p' THEN 'PRIMARY KEY' WHEN con.contype OPERATOR(pg_catalog.=) 'f' THEN 'FOREIGN KEY'
                               WHEN con.contype OPERATOR(pg_catalog.=) 'u' THEN 'UNIQUE' WHEN con.contype OPERATOR(pg_catalog.=) 'c' THEN 'CHECK' WHEN con.contype OPERATOR(pg_catalog.=) 'x' THEN 'EXCLUDE'
                               ELSE con.contype::pg_catalog.text END,
                   'definition', pgmcp_text(pg_catalog.pg_get_constraintdef(con.oid, true))
               ) ORDER BY con.conname), '[]')
        FROM pg_catalog.pg_constraint con
        WHERE con.conrelid OPERATOR(pg_catalog.=) rel.oid AND con.contype OPERATOR(pg_catalog.=) ANY (ARRAY['p', 'f', 'u', 'c', 'x'])
    ),
    'foreign_keys', (
        SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_object(
                   'name', con.conname,
                   'columns', (SELECT pg_catalog.json_agg(a.attname ORDER BY k.ord)
                               FROM pg_catalog.unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                               JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) con.conrelid AND a.attnum OPERATOR(pg_catalog.=) k.attnum),
                   'referenced_table', (SELECT pg_catalog.quote_ident(fn.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(fc.relname)
                                        FROM pg_catalog.pg_class fc JOIN pg_catalog.pg_namespace fn ON fn.oid OPERATOR(pg_catalog.=) fc.relnamespace
                                        WHERE fc.oid OPERATOR(pg_catalog.=) con.confrelid),
                   'referenced_columns', (SELECT pg_catalog.json_agg(a.attname ORDER BY k.ord)
                                          FROM pg_catalog.unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                                          JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) con.confrelid AND a.attnum OPERATOR(pg_catalog.=) k.attnum),
                   'on_update', CASE WHEN con.confupdtype OPERATOR(pg_catalog.=) 'a' THEN 'NO ACTION' WHEN con.confupdtype OPERATOR(pg_catalog.=) 'r' THEN 'RESTRICT'
                                    WHEN con.confupdtype OPERATOR(pg_catalog.=) 'c' THEN 'CASCADE' WHEN con.confupdtype OPERATOR(pg_catalog.=) 'n' THEN 'SET NULL' WHEN con.confupdtype OPERATOR(pg_catalog.=) 'd' THEN 'SET DEFAULT' END,
                   'on_delete', CASE WHEN con.confdeltype OPERATOR(pg_catalog.=) 'a' THEN 'NO ACTION' WHEN con.confdeltype OPERATOR(pg_catalog.=) 'r' THEN 'RESTRICT'
                                    WHEN con.confdeltype OPERATOR(pg_catalog.=) 'c' THEN 'CASCADE' WHEN con.confdeltype OPERATOR(pg_catalog.=) 'n' THEN 'SET NULL' WHEN con.confdeltype OPERATOR(pg_catalog.=) 'd' THEN 'SET DEFAULT' END
               ) ORDER BY con.conname), '[]')
        FROM pg_catalog.pg_constraint con
        WHERE con.conrelid OPERATOR(pg_catalog.=) rel.oid AND con.contype OPERATOR(pg_catalog.=) 'f'
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
            WHERE u.rel OPERATOR(pg_catalog.<>) 0 AND a.attrelid OPERATOR(pg_catalog.=) u.rel AND a.attnum OPERATOR(pg_catalog.=) u.col AND NOT a.attisdropped),
           pg_catalog.format_type(u.o, u.m))
-- ROWS FROM: a qualified unnest takes one array (the bare name's
-- several-array form is resolved through the search path).
FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.oid[]), pg_catalog.unnest($2::pg_catalog.int4[]),
                pg_catalog.unnest($3::pg_catalog.oid[]), pg_catalog.unnest($4::pg_catalog.int2[])) WITH ORDINALITY AS u(o, m, rel, col, n)
ORDER BY u.n";

/// How to read values of types that are not built in ($1 = type OIDs): whether
/// it is an array, the built-in type beneath its (element's) domains, and the
/// element delimiter. One row per type.
pub const TYPE_SHAPES: &str = "
WITH RECURSIVE input AS (
    SELECT t.oid AS o,
           (t.typcategory OPERATOR(pg_catalog.=) 'A' AND t.typelem OPERATOR(pg_catalog.<>) 0) AS is_array,
           CASE WHEN t.typcategory OPERATOR(pg_catalog.=) 'A' AND t.typelem OPERATOR(pg_catalog.<>) 0 THEN t.typelem ELSE t.oid END AS start
    FROM pg_catalog.pg_type t
    WHERE t.oid OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.oid[])
), chain AS (
    SELECT o, is_array, start AS cur, 0 AS depth FROM input
    UNION ALL
    SELECT c.o, c.is_array, t.typbasetype, c.depth OPERATOR(pg_catalog.+) 1
    FROM chain c JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) c.cur
    WHERE t.typtype OPERATOR(pg_catalog.=) 'd' AND c.depth OPERATOR(pg_catalog.<) 16
)
SELECT DISTINCT ON (c.o) c.o, c.is_array, c.cur,
       (SELECT e.typdelim FROM input i JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) i.start WHERE i.o OPERATOR(pg_catalog.=) c.o)
FROM chain c
ORDER BY c.o, c.depth DESC";

/// `list_tables`: [`LIST_TABLES_TEMPLATE`] with its texts cut ([`cut_texts`]).
pub static LIST_TABLES: LazyLock<String> = LazyLock::new(|| cut_texts(LIST_TABLES_TEMPLATE));

/// `describe_table`: [`DESCRIBE_TABLE_TEMPLATE`] with its texts cut.
pub static DESCRIBE_TABLE: LazyLock<String> = LazyLock::new(|| cut_texts(DESCRIBE_TABLE_TEMPLATE));

/// The most characters of a free text (a comment, a view's definition, a
/// default) the catalog queries return. Anyone who can comment on a table
/// can write a gigabyte there; the server cuts it, so pgmcp never holds it.
pub const TEXT_LIMIT: usize = 4096;

/// `sql` with every `pgmcp_text(<expr>)` replaced by `<expr>` cut to
/// [`TEXT_LIMIT`] characters by the server, marked when cut (`… [text cut:
/// 4096 of <n> characters shown]`). The expression is computed once.
fn cut_texts(sql: &str) -> String {
    const MARK: &str = "pgmcp_text(";
    let mut out = String::with_capacity(sql.len() * 2);
    let mut rest = sql;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let inner = &rest[at + MARK.len()..];
        let end = closing_paren(inner).unwrap_or(inner.len());
        out.push_str(&format!(
            "(SELECT CASE WHEN pg_catalog.length(v) OPERATOR(pg_catalog.>) {TEXT_LIMIT} \
             THEN pg_catalog.left(v, {TEXT_LIMIT}) OPERATOR(pg_catalog.||) '… [text cut: {TEXT_LIMIT} of ' \
             OPERATOR(pg_catalog.||) pg_catalog.length(v)::pg_catalog.text OPERATOR(pg_catalog.||) ' characters shown]' \
             ELSE v END FROM (SELECT {}) pgmcp_text(v))",
            cut_texts(&inner[..end])
        ));
        rest = inner.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// Where the parenthesis opened just before `text` closes, skipping quoted
/// strings.
fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted && depth == 0 => return Some(i),
            ')' if !quoted => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Every statement pgmcp writes itself and sends on its own behalf.
    fn own_sql() -> Vec<(&'static str, &'static str)> {
        vec![
            ("SESSION_REPORT", super::SESSION_REPORT),
            ("LIST_TABLES", super::LIST_TABLES.as_str()),
            ("SCHEMAS_WITH_TABLE", super::SCHEMAS_WITH_TABLE),
            ("RELATION_NAMES", super::RELATION_NAMES),
            ("COLUMN_NAMES", super::COLUMN_NAMES),
            ("DESCRIBE_TABLE", super::DESCRIBE_TABLE.as_str()),
            ("COLUMN_TYPE_NAMES", super::COLUMN_TYPE_NAMES),
            ("TYPE_SHAPES", super::TYPE_SHAPES),
            ("routines.sql", super::super::routines::sql()),
            ("role::PRIVILEGES", super::super::role::PRIVILEGES),
            ("role::SUGGEST_FACTS", super::super::role::SUGGEST_FACTS),
            ("hba::CLIENT", super::super::hba::CLIENT),
            ("hba::RULES", super::super::hba::RULES),
            ("hba::READER_GROUPS", super::super::hba::READER_GROUPS),
        ]
    }

    fn qualified(names: Option<&Value>) -> bool {
        let parts: Vec<&str> = names
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|n| n.get("String")?.get("sval")?.as_str())
            .collect();
        parts.len() == 2 && parts[0] == "pg_catalog"
    }

    /// Everything in `value` that resolves a function or operator by name
    /// through the search path.
    fn unqualified(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (kind, fields) in map {
                    let found = match kind.as_str() {
                        "FuncCall" if !qualified(fields.get("funcname")) => Some("a function call"),
                        "A_Expr" if !qualified(fields.get("name")) => {
                            Some("an operator (or IN, LIKE, BETWEEN, NULLIF)")
                        }
                        "SubLink" if fields.get("operName").is_some() && !qualified(fields.get("operName")) => {
                            Some("an operator before ANY/ALL")
                        }
                        "CaseExpr" if fields.get("arg").is_some() => Some("CASE x WHEN (it compares with =)"),
                        // A type found through the search path can be a
                        // planted domain whose CHECK runs on every cast.
                        // (libpg_query writes a TypeName as the unwrapped
                        // value of a `typeName` field.)
                        "TypeName" | "typeName" if !qualified(fields.get("names")) => Some("a type name"),
                        _ => None,
                    };
                    if let Some(what) = found {
                        out.push(format!(
                            "{what}: {}",
                            serde_json::to_string(fields)
                                .unwrap_or_default()
                                .chars()
                                .take(160)
                                .collect::<String>()
                        ));
                    }
                    unqualified(fields, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| unqualified(v, out)),
            _ => {}
        }
    }

    #[test]
    fn texts_are_cut_by_the_server() {
        // (template, what the expansion must hold)
        let cases = [
            ("SELECT pgmcp_text(a.b) AS x", "FROM (SELECT a.b) pgmcp_text(v)) AS x"),
            (
                "SELECT pgmcp_text(f(x, ')', g(y))), 1",
                "FROM (SELECT f(x, ')', g(y))) pgmcp_text(v)), 1",
            ),
            ("SELECT 1", "SELECT 1"),
        ];
        for (template, part) in cases {
            let sql = super::cut_texts(template);
            assert!(sql.contains(part), "{sql}");
            assert!(!sql.contains("pgmcp_text(a") && !sql.contains("pgmcp_text(f"), "{sql}");
            crate::guard::parse(&sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        }
        for sql in [super::LIST_TABLES.as_str(), super::DESCRIBE_TABLE.as_str()] {
            assert!(!sql.contains("pgmcp_text(pg_catalog"), "every text is cut");
        }
    }

    #[test]
    fn own_sql_resolves_nothing_through_the_search_path() {
        let mut failures = Vec::new();
        for (name, sql) in own_sql() {
            let tree = crate::guard::parse(sql).unwrap_or_else(|e| panic!("{name} does not parse: {e:?}"));
            let mut found = Vec::new();
            tree.stmts.iter().for_each(|s| unqualified(s, &mut found));
            failures.extend(found.into_iter().map(|f| format!("{name}: {f}")));
        }
        assert!(
            failures.is_empty(),
            "{} unqualified:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
