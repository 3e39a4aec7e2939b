//! `list_tables` and `describe_table` for DuckDB, from `duckdb_tables()`,
//! `duckdb_views()`, `duckdb_columns()`, `duckdb_constraints()` and
//! `duckdb_indexes()` of the database's own catalog (not `temp`, not the
//! system schemas). Names match case-insensitively, as DuckDB matches them.
//! DuckDB has no roles or grants: every table in the database is shown.

use duckdb::{Connection, params};

use super::db_error;
use crate::error::{Error, NotFound};
use crate::pipeline::catalog::{
    ColumnInfo, ConstraintInfo, ForeignKeyInfo, IndexInfo, TableDescription, TableEntry, TableFilter, TableList,
};

/// The tables and views of the opened database, internal ones left out.
const RELATIONS: &str = "
    SELECT schema_name, table_name AS name, 'table' AS kind, estimated_size, comment, sql
    FROM system.main.duckdb_tables() WHERE NOT internal AND database_name = system.main.current_database()
    UNION ALL
    SELECT schema_name, view_name, 'view', NULL, comment, sql
    FROM system.main.duckdb_views() WHERE NOT internal AND database_name = system.main.current_database()";

/// Up to `filter.limit + 1` tables and views, by schema and name (the
/// pipeline trims the extra one and says the list was truncated).
pub fn list_tables(conn: &Connection, filter: &TableFilter) -> duckdb::Result<TableList> {
    let sql = format!(
        "SELECT schema_name, name, kind, estimated_size, comment FROM ({RELATIONS})
         WHERE (?1::VARCHAR IS NULL OR system.main.lower(schema_name) = system.main.lower(?1))
           AND (?2::VARCHAR IS NULL OR system.main.ilike_escape(name, ?2, '\\'))
         ORDER BY schema_name, name LIMIT ?3"
    );
    let limit = i64::try_from(filter.limit.saturating_add(1)).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare(&sql)?;
    let tables = stmt
        .query_map(params![filter.schema, filter.like_pattern(), limit], |row| {
            let comment: Option<String> = row.get(4)?;
            Ok(TableEntry {
                schema: row.get(0)?,
                name: row.get(1)?,
                kind: row.get(2)?,
                owner: None,
                schema_access_limited: false,
                comment: comment.filter(|c| !c.is_empty()),
                estimated_rows: row.get(3)?,
                size_bytes: None,
                is_partition: false,
            })
        })?
        .collect::<duckdb::Result<Vec<_>>>()?;
    Ok(TableList {
        tables,
        truncated: false,
        hint: None,
    })
}

/// One table or view found by name: (schema, name, kind, comment, sql).
type Found = (String, String, String, Option<String>, Option<String>);

pub fn describe_table(conn: &Connection, schema: Option<&str>, table: &str) -> Result<TableDescription, Error> {
    let sql = format!(
        "SELECT schema_name, name, kind, comment, sql FROM ({RELATIONS})
         WHERE system.main.lower(name) = system.main.lower(?1) AND (?2::VARCHAR IS NULL OR system.main.lower(schema_name) = system.main.lower(?2))
         ORDER BY schema_name <> 'main', schema_name"
    );
    let found: Vec<Found> = conn
        .prepare(&sql)
        .and_then(|mut stmt| {
            stmt.query_map(params![table, schema], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect()
        })
        .map_err(db_error)?;
    let found = match found.as_slice() {
        [] => {
            let names = relation_names(conn).map_err(db_error)?;
            let advice =
                crate::suggest::table_advice(&crate::suggest::closest(table, names.iter().map(String::as_str), 3));
            let what = match schema {
                Some(schema) => format!("table \"{schema}.{table}\""),
                None => format!("table \"{table}\""),
            };
            return Err(NotFound::Table {
                what,
                unreadable: false,
                advice,
            }
            .into());
        }
        [one] => one.clone(),
        // Several schemas have it and none was given: main if it is one of
        // them (sorted first), else say which.
        [first, ..] if first.0 == "main" => first.clone(),
        many => {
            return Err(NotFound::AmbiguousTable {
                name: table.to_owned(),
                schemas: many.iter().map(|f| f.0.clone()).collect(),
            }
            .into());
        }
    };
    describe(conn, found).map_err(db_error)
}

fn describe(conn: &Connection, found: Found) -> duckdb::Result<TableDescription> {
    let (schema, name, kind, comment, sql) = found;
    // (name, type, nullable, default, comment, generated expression)
    type Col = (String, String, bool, Option<String>, Option<String>, Option<String>);
    let cols: Vec<Col> = conn
        .prepare(
            "SELECT column_name, data_type, is_nullable, column_default, comment,
                    CASE WHEN is_generated THEN generation_expression END
             FROM system.main.duckdb_columns()
             WHERE database_name = system.main.current_database() AND schema_name = ?1 AND table_name = ?2
             ORDER BY column_index",
        )?
        .query_map(params![schema, name], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<duckdb::Result<_>>()?;

    // (type, text, name, columns, referenced table, referenced columns)
    type Con = (String, String, String, Vec<String>, Option<String>, Vec<String>);
    let cons: Vec<Con> = conn
        .prepare(
            "SELECT constraint_type, constraint_text, constraint_name,
                    constraint_column_names::VARCHAR[],
                    referenced_table, coalesce(referenced_column_names, [])::VARCHAR[]
             FROM system.main.duckdb_constraints()
             WHERE database_name = system.main.current_database() AND schema_name = ?1 AND table_name = ?2
               AND constraint_type <> 'NOT NULL'
             ORDER BY constraint_index",
        )?
        .query_map(params![schema, name], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                strings(r.get(3)?),
                r.get(4)?,
                strings(r.get(5)?),
            ))
        })?
        .collect::<duckdb::Result<_>>()?;

    let primary: Vec<String> = cons
        .iter()
        .find(|c| c.0 == "PRIMARY KEY")
        .map(|c| c.3.clone())
        .unwrap_or_default();
    let columns = cols
        .into_iter()
        .map(|(col, ty, nullable, default, comment, generated)| ColumnInfo {
            is_primary_key: primary.contains(&col),
            nullable: nullable && !primary.contains(&col),
            name: col,
            type_name: ty,
            // DuckDB reports a generated column's expression as its default too.
            default: default.filter(|_| generated.is_none()),
            comment: comment.filter(|c| !c.is_empty()),
            identity: None,
            generated,
            sequence: None,
            enum_values: None,
        })
        .collect();

    let mut constraints = Vec::new();
    let mut foreign_keys = Vec::new();
    for (kind, text, constraint, cols, referenced, referenced_cols) in cons {
        if kind == "FOREIGN KEY"
            && let Some(parent) = referenced
        {
            foreign_keys.push(ForeignKeyInfo {
                name: constraint.clone(),
                columns: cols,
                referenced_table: parent,
                referenced_columns: referenced_cols,
                // DuckDB has no referential actions: a referenced row cannot
                // be deleted or its key changed while referenced.
                on_update: "NO ACTION".to_owned(),
                on_delete: "NO ACTION".to_owned(),
            });
        }
        constraints.push(ConstraintInfo {
            name: constraint,
            kind,
            definition: text,
        });
    }

    let indexes = conn
        .prepare(
            "SELECT index_name, coalesce(sql, ''), is_unique, is_primary FROM system.main.duckdb_indexes()
             WHERE database_name = system.main.current_database() AND schema_name = ?1 AND table_name = ?2
             ORDER BY index_name",
        )?
        .query_map(params![schema, name], |r| {
            Ok(IndexInfo {
                name: r.get(0)?,
                definition: r.get(1)?,
                is_unique: r.get(2)?,
                is_primary: r.get(3)?,
            })
        })?
        .collect::<duckdb::Result<_>>()?;

    Ok(TableDescription {
        schema,
        name,
        kind,
        definition: sql,
        comment: comment.filter(|c| !c.is_empty()),
        partition: None,
        columns,
        indexes,
        constraints,
        foreign_keys,
        truncated: false,
        hint: None,
    })
}

/// A `VARCHAR[]` read through the crate: a list of text values.
fn strings(value: duckdb::types::Value) -> Vec<String> {
    match value {
        duckdb::types::Value::List(items) => items
            .into_iter()
            .filter_map(|v| match v {
                duckdb::types::Value::Text(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Every table and view name, qualified by schema unless it is `main`.
fn relation_names(conn: &Connection) -> duckdb::Result<Vec<String>> {
    conn.prepare(&format!(
        "SELECT CASE WHEN schema_name = 'main' THEN name ELSE system.main.concat(schema_name, '.', name) END
         FROM ({RELATIONS}) ORDER BY 1 LIMIT 5000"
    ))?
    .query_map([], |r| r.get(0))?
    .collect()
}

/// The name DuckDB could not find, from its message: `Table with name x does
/// not exist!` or `Referenced column "x" not found ...`.
fn missing_name(message: &str) -> Option<(bool, String)> {
    if let Some(rest) = message.split("Table with name ").nth(1) {
        let name = rest.split(" does not exist").next()?.trim_matches('"');
        return Some((true, name.to_owned()));
    }
    if let Some(rest) = message.split("Referenced column \"").nth(1) {
        return Some((false, rest.split('"').next()?.to_owned()));
    }
    None
}

/// Close names for an unknown table or column, leaving out those DuckDB's
/// message already names (it adds "Did you mean" and "Candidate bindings" of
/// its own).
pub fn suggest(conn: &Connection, message: &str) -> Vec<String> {
    let Some((is_table, missing)) = missing_name(message) else {
        return Vec::new();
    };
    let last = missing.rsplit('.').next().unwrap_or(&missing).to_owned();
    let offered = |name: &str| {
        let bare = name.rsplit('.').next().unwrap_or(name);
        message.contains(&format!("\"{name}\"")) || message.contains(&format!("\"{bare}\""))
    };
    if is_table {
        let names = relation_names(conn).unwrap_or_default();
        let bare: Vec<&str> = names.iter().map(|n| n.rsplit('.').next().unwrap_or(n)).collect();
        return crate::suggest::closest(&last, bare.iter().copied(), 3)
            .into_iter()
            .filter_map(|b| names.iter().find(|n| n.rsplit('.').next() == Some(b)))
            .filter(|n| !offered(n))
            .cloned()
            .collect();
    }
    let pairs: Vec<(String, String)> = conn
        .prepare(
            "SELECT table_name, column_name FROM system.main.duckdb_columns()
             WHERE NOT internal AND database_name = system.main.current_database() LIMIT 5000",
        )
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .unwrap_or_default();
    let names: Vec<&str> = pairs.iter().map(|(_, c)| c.as_str()).collect();
    crate::suggest::closest(&last, names.iter().copied(), 3)
        .into_iter()
        .filter_map(|c| pairs.iter().find(|(_, n)| n == c).map(|(t, n)| format!("{t}.{n}")))
        .filter(|n| !offered(n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_names() {
        let cases = [
            (
                "Catalog Error: Table with name userz does not exist!\nDid you mean \"users\"?",
                Some((true, "userz")),
            ),
            (
                "Binder Error: Referenced column \"nme\" not found in FROM clause!\nCandidate bindings: \"name\"",
                Some((false, "nme")),
            ),
            ("Parser Error: syntax error at or near \"x\"", None),
        ];
        for (message, want) in cases {
            assert_eq!(missing_name(message), want.map(|(t, n)| (t, n.to_owned())), "{message}");
        }
    }
}
