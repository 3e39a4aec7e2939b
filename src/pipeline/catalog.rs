//! What `list_tables` and `describe_table` return, whatever the engine. The
//! catalog queries that fill these live with each backend.

use serde::{Deserialize, Serialize};

/// One table-like object the connected role can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TableEntry {
    pub schema: String,
    pub name: String,
    /// `table`, `view`, `materialized_view`, `foreign_table` or `partitioned_table`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The owning role (PostgreSQL). Absent on engines without owners
    /// (SQLite, DuckDB), rather than an empty name that reads as a role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// True when the role may read the table but lacks USAGE on its schema, so
    /// queries against it will likely fail.
    #[serde(default)]
    pub schema_access_limited: bool,
    /// `COMMENT ON TABLE`, often the best documentation there is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The planner's row estimate (tables and materialized views; absent until
    /// the table was first analyzed). Tells an agent which tables need a LIMIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_rows: Option<i64>,
    /// On-disk size including indexes and TOAST.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<i64>,
    /// True for a partition of a partitioned table.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_partition: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TableList {
    pub tables: Vec<TableEntry>,
    /// True when more tables matched than were returned.
    #[serde(default)]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Which tables `list_tables` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableFilter {
    /// Only this schema.
    pub schema: Option<String>,
    /// A case-insensitive LIKE pattern on the name (`%` any run, `_` one
    /// character); without either wildcard, names containing it match.
    pub pattern: Option<String>,
    /// Most tables returned; 0 means the configured cap (`query.max_rows`),
    /// which a larger value cannot exceed either.
    pub limit: usize,
    /// An SQLite file inside the configured `sqlite.root` (SQLite only).
    pub database: Option<String>,
}

impl TableFilter {
    /// The pattern as an ILIKE pattern: wildcard-free text matches as a substring.
    pub fn like_pattern(&self) -> Option<String> {
        self.pattern.as_deref().filter(|p| !p.is_empty()).map(|p| {
            if p.contains('%') || p.contains('_') {
                p.to_owned()
            } else {
                format!("%{p}%")
            }
        })
    }
}

/// `table` as a person or model writes it, `schema` as given separately:
/// `users`, `sales.orders`, `"Mixed Case"`, `"my schema"."My Table"`. Unquoted
/// parts fold to lower case, as PostgreSQL folds them. Returns (schema, name);
/// the schema is `None` when neither gave one.
pub fn parse_table_name(table: &str, schema: Option<&str>) -> Result<(Option<String>, String), String> {
    let parts = split_identifier(table.trim())?;
    let (from_table, name) = match parts.as_slice() {
        [name] => (None, name.clone()),
        [schema, name] => (Some(schema.clone()), name.clone()),
        _ => return Err(format!("\"{table}\" is not a table name: use table or schema.table")),
    };
    let schema = schema.map(str::trim).filter(|s| !s.is_empty());
    match (from_table, schema) {
        (Some(a), Some(b)) if a != fold(b) && a != b => Err(format!(
            "\"{table}\" names schema {a}, but schema was given as {b}: give one"
        )),
        (Some(a), _) => Ok((Some(a), name)),
        (None, Some(b)) => Ok((Some(split_identifier(b)?.concat()), name)),
        (None, None) => Ok((None, name)),
    }
}

fn fold(part: &str) -> String {
    part.to_lowercase()
}

/// Split a possibly qualified, possibly quoted identifier on unquoted dots.
fn split_identifier(text: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    Some('"') => break,
                    Some(c) => part.push(c),
                    None => return Err(format!("unterminated quote in \"{text}\"")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != '.') {
                part.push(c);
            }
            part = fold(part.trim());
        }
        if part.is_empty() {
            return Err(format!("\"{text}\" is not a table name"));
        }
        parts.push(part);
        match chars.next() {
            None => return Ok(parts),
            Some('.') => {}
            Some(c) => return Err(format!("unexpected {c:?} in \"{text}\"")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ColumnInfo {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub nullable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    pub is_primary_key: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// `ALWAYS` or `BY DEFAULT` for identity columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The expression of a generated column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
    /// The sequence behind a serial or identity column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<String>,
    /// The labels of an enum-typed column, in order: the first 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
}

/// How a partitioned table is split, or where a partition belongs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PartitionInfo {
    /// `range`, `list` or `hash`, for a partitioned table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_key: Option<String>,
    /// Its partitions, qualified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<String>>,
    /// For a partition: its parent, qualified, and its bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_table: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IndexInfo {
    pub name: String,
    pub definition: String,
    pub is_unique: bool,
    pub is_primary: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConstraintInfo {
    pub name: String,
    /// `PRIMARY KEY`, `FOREIGN KEY`, `UNIQUE`, `CHECK` or `EXCLUDE`.
    #[serde(rename = "type")]
    pub kind: String,
    pub definition: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForeignKeyInfo {
    pub name: String,
    pub columns: Vec<String>,
    pub referenced_table: String,
    pub referenced_columns: Vec<String>,
    pub on_update: String,
    pub on_delete: String,
}

/// The shape of one table, view or materialized view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TableDescription {
    pub schema: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The SQL of a view or materialized view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<PartitionInfo>,
    pub columns: Vec<ColumnInfo>,
    pub indexes: Vec<IndexInfo>,
    pub constraints: Vec<ConstraintInfo>,
    pub foreign_keys: Vec<ForeignKeyInfo>,
    /// True when the description was cut to fit the result limit: the last
    /// items of its longest lists were left out (the hint says which).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names() {
        let ok = |t: &str, s: Option<&str>| parse_table_name(t, s).unwrap();
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(ok("users", None), (None, "users".into()));
        assert_eq!(ok("Users", None), (None, "users".into()));
        assert_eq!(ok("users", Some("sales")), (some("sales"), "users".into()));
        assert_eq!(ok("sales.orders", None), (some("sales"), "orders".into()));
        assert_eq!(ok("Sales.Orders", Some("sales")), (some("sales"), "orders".into()));
        assert_eq!(ok(r#""Mixed Case""#, None), (None, "Mixed Case".into()));
        assert_eq!(
            ok(r#""my schema"."My.Table""#, None),
            (some("my schema"), "My.Table".into())
        );
        assert_eq!(ok(r#""a""b""#, Some(r#""Odd""#)), (some("Odd"), "a\"b".into()));
        assert_eq!(ok(" users ", Some("")), (None, "users".into()));
        for bad in ["", "a.b.c", "a..b", r#""open"#, r#""x"y"#] {
            assert!(parse_table_name(bad, None).is_err(), "{bad:?}");
        }
        assert!(parse_table_name("sales.orders", Some("public")).is_err());
    }

    #[test]
    fn patterns() {
        let f = |p: &str| {
            TableFilter {
                pattern: Some(p.into()),
                ..Default::default()
            }
            .like_pattern()
        };
        assert_eq!(f("user"), Some("%user%".into()));
        assert_eq!(f("user%"), Some("user%".into()));
        assert_eq!(f("u_er"), Some("u_er".into()));
        assert_eq!(f(""), None);
    }
}
