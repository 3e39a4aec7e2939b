//! The result of a `query` call as the model sees it, and the pure step that
//! builds it from backend rows. Reading already stopped at the row cap (the
//! backend fetched at most one row more); this step says so honestly.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::backend::{Column, Rows};

/// A successful `query` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryOutput {
    /// Result columns in order, with their PostgreSQL type names. Column names
    /// are made unique (`a`, `a_2`) so every row can be a JSON object.
    pub columns: Vec<Column>,
    /// One JSON object per row, keyed by column name.
    pub rows: Vec<Map<String, Value>>,
    /// Rows inserted, updated or deleted (or selected), as the server reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_affected: Option<u64>,
    /// How many rows are in `rows`.
    pub returned_rows: usize,
    /// True when more rows existed than were returned.
    pub truncated: bool,
    /// What to do about a truncated result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Build the output from backend rows; `max_rows` is the cap that was applied.
pub fn query_output(rows: Rows, max_rows: usize) -> QueryOutput {
    let columns = unique_names(rows.columns);
    let returned: Vec<Map<String, Value>> = rows
        .rows
        .into_iter()
        .map(|values| columns.iter().map(|c| c.name.clone()).zip(values).collect())
        .collect();
    let hint = rows.more.then(|| {
        format!(
            "Only the first {max_rows} rows were returned. Add a LIMIT (and ORDER BY) to page through the rest, filter with WHERE, or aggregate."
        )
    });
    QueryOutput {
        returned_rows: returned.len(),
        rows: returned,
        columns,
        rows_affected: rows.rows_affected,
        truncated: rows.more,
        hint,
    }
}

/// `SELECT 1 AS a, 2 AS a` would lose a value in a JSON object; suffix repeats.
fn unique_names(columns: Vec<Column>) -> Vec<Column> {
    let mut seen = std::collections::HashSet::new();
    columns
        .into_iter()
        .map(|mut c| {
            if !seen.insert(c.name.clone()) {
                let base = c.name.clone();
                let mut n = 2;
                while !seen.insert(format!("{base}_{n}")) {
                    n += 1;
                }
                c.name = format!("{base}_{n}");
            }
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str) -> Column {
        Column {
            name: name.into(),
            type_name: "integer".into(),
        }
    }

    #[test]
    fn rows_become_objects_and_duplicates_get_suffixes() {
        let rows = Rows {
            columns: vec![col("a"), col("a"), col("a_2"), col("b")],
            rows: vec![vec![1.into(), 2.into(), 3.into(), Value::Null]],
            rows_affected: Some(1),
            more: false,
        };
        let out = query_output(rows, 500);
        let names: Vec<_> = out.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "a_2", "a_2_2", "b"]);
        assert_eq!(
            serde_json::to_string(&out.rows).unwrap(),
            r#"[{"a":1,"a_2":2,"a_2_2":3,"b":null}]"#
        );
        assert!(!out.truncated);
        assert_eq!(out.hint, None);
        assert_eq!(out.returned_rows, 1);
    }

    #[test]
    fn truncation_is_reported() {
        let rows = Rows {
            columns: vec![col("n")],
            rows: vec![vec![1.into()], vec![2.into()]],
            rows_affected: None,
            more: true,
        };
        let out = query_output(rows, 2);
        assert!(out.truncated);
        assert_eq!(out.returned_rows, 2);
        assert!(out.hint.unwrap().starts_with("Only the first 2 rows were returned"));
    }
}
