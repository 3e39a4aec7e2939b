//! `list_tables` and `describe_table` for SQLite, from `sqlite_schema` and the
//! `table_xinfo` / `index_list` / `index_info` / `foreign_key_list` pragmas.
//! SQLite keeps no catalog of CHECK constraints: they are read from the
//! table's CREATE statement, which is also returned as its definition.
//! SQLite has no roles or grants: every table in the file is shown.

use rusqlite::{Connection, OptionalExtension, params};

use super::db_error;
use crate::error::{Error, NotFound};
use crate::pipeline::catalog::{
    ColumnInfo, ConstraintInfo, ForeignKeyInfo, IndexInfo, TableDescription, TableEntry, TableFilter, TableList,
};

/// SQLite has one schema per attached database; pgmcp attaches none.
const SCHEMA: &str = "main";

/// Up to `filter.limit + 1` tables and views, by name (the pipeline trims the
/// extra one and says the list was truncated).
pub fn list_tables(conn: &Connection, filter: &TableFilter) -> rusqlite::Result<TableList> {
    if filter.schema.as_deref().is_some_and(|s| s != SCHEMA) {
        return Ok(TableList {
            tables: Vec::new(),
            truncated: false,
            hint: None,
        });
    }
    let mut stmt = conn.prepare(
        "SELECT name, type, coalesce(sql, '') LIKE 'CREATE VIRTUAL%' FROM sqlite_schema
         WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
           AND (?1 IS NULL OR name LIKE ?1)
         ORDER BY name LIMIT ?2",
    )?;
    let limit = i64::try_from(filter.limit.saturating_add(1)).unwrap_or(i64::MAX);
    let tables = stmt
        .query_map(params![filter.like_pattern(), limit], |row| {
            let kind: String = row.get(1)?;
            let is_virtual: bool = row.get(2)?;
            Ok(TableEntry {
                schema: SCHEMA.to_owned(),
                name: row.get(0)?,
                kind: if is_virtual { "virtual_table".to_owned() } else { kind },
                owner: None,
                schema_access_limited: false,
                comment: None,
                estimated_rows: None,
                size_bytes: None,
                is_partition: false,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(TableList {
        tables,
        truncated: false,
        hint: None,
    })
}

pub fn describe_table(conn: &Connection, schema: Option<&str>, table: &str) -> Result<TableDescription, Error> {
    if let Some(schema) = schema.filter(|s| *s != SCHEMA) {
        return Err(NotFound::SqliteSchema {
            schema: schema.to_owned(),
        }
        .into());
    }
    // SQLite compares names case-insensitively; report the name as created.
    let found: Option<(String, String, Option<String>)> = conn
        .query_row(
            "SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE",
            [table],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()
        .map_err(db_error)?;
    let Some((name, kind, sql)) = found else {
        let names = table_names(conn).map_err(db_error)?;
        let advice = crate::suggest::table_advice(&crate::suggest::closest(table, names.iter().map(String::as_str), 3));
        return Err(NotFound::Table {
            what: format!("table \"{table}\""),
            unreadable: false,
            advice,
        }
        .into());
    };
    describe(conn, name, kind, sql).map_err(db_error)
}

fn describe(conn: &Connection, name: String, kind: String, sql: Option<String>) -> rusqlite::Result<TableDescription> {
    // (name, type, notnull, default, pk position, hidden: 2/3 = generated)
    type Col = (String, String, bool, Option<String>, i64, i64);
    let cols: Vec<Col> = conn
        .prepare("SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?1) ORDER BY cid")?
        .query_map([&name], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let pk_count = cols.iter().filter(|c| c.4 > 0).count();
    let columns = cols
        .iter()
        .map(|(col, ty, notnull, default, pk, hidden)| ColumnInfo {
            name: col.clone(),
            type_name: ty.clone(),
            // An INTEGER PRIMARY KEY is the rowid and never NULL; other
            // primary key columns accept NULL in SQLite unless NOT NULL.
            nullable: !(*notnull || (*pk > 0 && pk_count == 1 && ty.eq_ignore_ascii_case("INTEGER"))),
            default: default.clone(),
            is_primary_key: *pk > 0,
            comment: None,
            identity: None,
            generated: match hidden {
                2 => Some("VIRTUAL".to_owned()),
                3 => Some("STORED".to_owned()),
                _ => None,
            },
            sequence: None,
            enum_values: None,
        })
        .collect();

    let mut constraints = Vec::new();
    let mut primary: Vec<(i64, String)> = cols.iter().filter(|c| c.4 > 0).map(|c| (c.4, c.0.clone())).collect();
    primary.sort();
    if !primary.is_empty() {
        let names: Vec<String> = primary.into_iter().map(|(_, n)| n).collect();
        constraints.push(ConstraintInfo {
            name: format!("{name}_pkey"),
            kind: "PRIMARY KEY".to_owned(),
            definition: format!("PRIMARY KEY ({})", names.join(", ")),
        });
    }

    let mut indexes = Vec::new();
    let list: Vec<(String, bool, String, Option<String>)> = conn
        .prepare(
            "SELECT il.name, il.\"unique\", il.origin, s.sql FROM pragma_index_list(?1) il
             LEFT JOIN sqlite_schema s ON s.type = 'index' AND s.name = il.name ORDER BY il.seq DESC",
        )?
        .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (index, unique, origin, index_sql) in list {
        let cols: Vec<String> = conn
            .prepare("SELECT coalesce(name, '<expression>') FROM pragma_index_info(?1) ORDER BY seqno")?
            .query_map([&index], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let definition = index_sql.unwrap_or_else(|| {
            let what = if origin == "pk" { "PRIMARY KEY" } else { "UNIQUE" };
            format!("{what} ({})", cols.join(", "))
        });
        if origin == "u" {
            constraints.push(ConstraintInfo {
                name: index.clone(),
                kind: "UNIQUE".to_owned(),
                definition: format!("UNIQUE ({})", cols.join(", ")),
            });
        }
        indexes.push(IndexInfo {
            name: index,
            definition,
            is_unique: unique,
            is_primary: origin == "pk",
        });
    }
    for (i, check) in checks(sql.as_deref().unwrap_or_default()).into_iter().enumerate() {
        constraints.push(ConstraintInfo {
            name: check.0.unwrap_or_else(|| format!("{name}_check{}", i + 1)),
            kind: "CHECK".to_owned(),
            definition: check.1,
        });
    }

    let mut foreign_keys: Vec<ForeignKeyInfo> = Vec::new();
    let fks: Vec<(i64, String, String, Option<String>, String, String)> = conn
        .prepare("SELECT id, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(?1) ORDER BY id, seq")?
        .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut last_id = None;
    for (id, parent, from, to, on_update, on_delete) in fks {
        // No target column means the parent's primary key, column by column.
        let to = match to {
            Some(to) => to,
            None => {
                let seq = foreign_keys
                    .last()
                    .filter(|_| last_id == Some(id))
                    .map_or(0, |fk| fk.columns.len());
                primary_key(conn, &parent)?.into_iter().nth(seq).unwrap_or_default()
            }
        };
        if last_id != Some(id) {
            last_id = Some(id);
            foreign_keys.push(ForeignKeyInfo {
                name: String::new(),
                columns: Vec::new(),
                referenced_table: parent,
                referenced_columns: Vec::new(),
                on_update,
                on_delete,
            });
        }
        if let Some(fk) = foreign_keys.last_mut() {
            fk.columns.push(from);
            fk.referenced_columns.push(to);
        }
    }
    for fk in &mut foreign_keys {
        fk.name = format!("{name}_{}_fkey", fk.columns.join("_"));
        constraints.push(ConstraintInfo {
            name: fk.name.clone(),
            kind: "FOREIGN KEY".to_owned(),
            definition: format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                fk.columns.join(", "),
                fk.referenced_table,
                fk.referenced_columns.join(", ")
            ),
        });
    }

    Ok(TableDescription {
        schema: SCHEMA.to_owned(),
        name,
        kind,
        definition: sql,
        comment: None,
        partition: None,
        columns,
        indexes,
        constraints,
        foreign_keys,
        truncated: false,
        hint: None,
    })
}

/// The CHECK constraints of a CREATE TABLE statement: (name, `CHECK (...)`).
fn checks(sql: &str) -> Vec<(Option<String>, String)> {
    let upper = sql.to_ascii_uppercase();
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    let mut last_constraint_name: Option<(usize, String)> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match b {
            b'\'' | b'"' | b'`' => quote = Some(b),
            b'[' => quote = Some(b']'),
            _ if word_at(&upper, i, "CONSTRAINT") => {
                let rest = &sql[i + "CONSTRAINT".len()..];
                let trimmed = rest.trim_start();
                let name: String = trimmed
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '"' || *c == '`')
                    .collect();
                last_constraint_name = Some((i, name.trim_matches(|c| c == '"' || c == '`').to_owned()));
            }
            _ if word_at(&upper, i, "CHECK") => {
                if let Some(open) = sql[i..].find('(').map(|o| i + o)
                    && let Some(close) = matching_paren(bytes, open)
                {
                    let name = last_constraint_name
                        .take()
                        .filter(|(at, name)| !name.is_empty() && sql[*at..i].split_whitespace().count() == 2)
                        .map(|(_, name)| name);
                    out.push((name, format!("CHECK {}", &sql[open..=close])));
                    i = close + 1;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn word_at(upper: &str, i: usize, word: &str) -> bool {
    let bytes = upper.as_bytes();
    let boundary = |j: usize| bytes.get(j).is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
    upper[i..].starts_with(word) && (i == 0 || boundary(i - 1)) && boundary(i + word.len())
}

fn matching_paren(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut quote: Option<u8> = None;
    for (j, &b) in bytes.iter().enumerate().skip(open) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"' | b'`') => quote = Some(b),
            (None, b'(') => depth += 1,
            (None, b')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The primary key columns of `table`, in key order.
fn primary_key(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")?
        .query_map([table], |r| r.get(0))?
        .collect()
}

fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// Close names for SQLite's "no such table: x" and "no such column: x".
pub fn suggest(conn: &Connection, message: &str) -> Vec<String> {
    let last = |m: &str| m.rsplit('.').next().unwrap_or(m).trim().to_owned();
    if let Some(table) = message.strip_prefix("no such table: ") {
        let names = table_names(conn).unwrap_or_default();
        return crate::suggest::closest(&last(table), names.iter().map(String::as_str), 3)
            .into_iter()
            .map(str::to_owned)
            .collect();
    }
    if let Some(column) = message.strip_prefix("no such column: ") {
        let pairs: Vec<(String, String)> = conn
            .prepare(
                "SELECT t.name, c.name FROM sqlite_schema t, pragma_table_info(t.name) c
                 WHERE t.type IN ('table', 'view') AND t.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' LIMIT 5000",
            )
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .unwrap_or_default();
        let names: Vec<&str> = pairs.iter().map(|(_, c)| c.as_str()).collect();
        return crate::suggest::closest(&last(column), names.iter().copied(), 3)
            .into_iter()
            .filter_map(|c| pairs.iter().find(|(_, n)| n == c).map(|(t, n)| format!("{t}.{n}")))
            .collect();
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_constraints() {
        let sql = "CREATE TABLE t (a INT CHECK (a > 0), b TEXT DEFAULT 'CHECK (x)', \
                   CONSTRAINT b_len CHECK (length(b) < (10 + 1)), \"check\" INT, CHECK(a <> b))";
        assert_eq!(
            checks(sql),
            vec![
                (None, "CHECK (a > 0)".to_owned()),
                (Some("b_len".to_owned()), "CHECK (length(b) < (10 + 1))".to_owned()),
                (None, "CHECK (a <> b)".to_owned()),
            ]
        );
        assert!(checks("CREATE TABLE t (a INT)").is_empty());
    }
}
