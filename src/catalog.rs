//! What `list_tables` and `describe_table` return, whatever the engine. The
//! catalog queries that fill these live with each backend.

use serde::{Deserialize, Serialize};

/// One table-like object the connected role can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableEntry {
    pub schema: String,
    pub name: String,
    /// `table`, `view`, `materialized_view`, `foreign_table` or `partitioned_table`.
    #[serde(rename = "type")]
    pub kind: String,
    pub owner: String,
    /// True when the role may read the table but lacks USAGE on its schema, so
    /// queries against it will likely fail.
    #[serde(default)]
    pub schema_access_limited: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableList {
    pub tables: Vec<TableEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub nullable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    pub is_primary_key: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexInfo {
    pub name: String,
    pub definition: String,
    pub is_unique: bool,
    pub is_primary: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintInfo {
    pub name: String,
    /// `PRIMARY KEY`, `FOREIGN KEY`, `UNIQUE`, `CHECK` or `EXCLUDE`.
    #[serde(rename = "type")]
    pub kind: String,
    pub definition: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKeyInfo {
    pub name: String,
    pub columns: Vec<String>,
    pub referenced_table: String,
    pub referenced_columns: Vec<String>,
    pub on_update: String,
    pub on_delete: String,
}

/// The shape of one table, view or materialized view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableDescription {
    pub schema: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The SQL of a view or materialized view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
    pub columns: Vec<ColumnInfo>,
    pub indexes: Vec<IndexInfo>,
    pub constraints: Vec<ConstraintInfo>,
    pub foreign_keys: Vec<ForeignKeyInfo>,
}
