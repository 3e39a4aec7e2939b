//! The result of a `query` call as the model sees it, and the pure step that
//! builds it from backend rows. Reading already stopped at the row cap (the
//! backend fetched at most one row more); this step says so honestly.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::backend::{Column, Rows};

/// A successful `query` result.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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
    /// How many rows the statement produced, when that is known without more
    /// work: reading reached the end of the result. Absent when reading stopped
    /// at the row cap (the rest was never computed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_rows: Option<u64>,
    /// True when more rows existed than were returned.
    pub truncated: bool,
    /// What to do about a truncated result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Build the output from backend rows; `max_rows` is the row cap that was
/// applied (the backend read at most one row more, to know).
pub fn query_output(rows: Rows, max_rows: usize) -> QueryOutput {
    let columns = unique_names(rows.columns);
    let returned: Vec<Map<String, Value>> = rows
        .rows
        .into_iter()
        .map(|values| columns.iter().map(|c| c.name.clone()).zip(values).collect())
        .collect();
    let hint = rows.more.then(|| {
        format!(
            "Only the first {max_rows} rows were returned. Add a LIMIT (and ORDER BY) to page through the rest, \
             filter with WHERE, or aggregate."
        )
    });
    // Every row was read unless reading stopped at the cap; a byte cap applied
    // later returns fewer, but the total stays known.
    let total_rows = (!rows.more).then_some(returned.len() as u64);
    QueryOutput {
        returned_rows: returned.len(),
        total_rows,
        rows: returned,
        columns,
        rows_affected: rows.rows_affected,
        truncated: rows.more,
        hint,
    }
}

/// Keep only the leading rows whose JSON fits in `max_bytes` (the rows array as
/// serialized), cutting at whole rows, and say so.
pub fn cap_bytes(output: &mut QueryOutput, max_bytes: usize) {
    let mut used = 2; // the array's brackets
    let mut keep = 0;
    for row in &output.rows {
        let size = serde_json::to_vec(row).map_or(usize::MAX, |v| v.len()) + usize::from(keep > 0);
        if used + size > max_bytes {
            break;
        }
        used += size;
        keep += 1;
    }
    if keep == output.rows.len() {
        return;
    }
    output.rows.truncate(keep);
    output.returned_rows = keep;
    output.truncated = true;
    output.hint = Some(if keep == 0 {
        format!(
            "The first row alone is larger than the {max_bytes}-byte result limit (query.max_result_length). \
             Select fewer or smaller columns (e.g. left(col, 200))."
        )
    } else {
        format!(
            "Only the first {keep} rows fit in the {max_bytes}-byte result limit (query.max_result_length). \
             Select fewer columns, or add a LIMIT (and ORDER BY) to page through the rest."
        )
    });
}

/// Read back a result an `after_query` hook rewrote. Missing fields get
/// defaults, and a column may be given as just its name.
pub fn from_hook_json(text: &str) -> Result<QueryOutput, serde_json::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ColumnIn {
        Name(String),
        Full {
            name: String,
            #[serde(rename = "type", default)]
            type_name: String,
        },
    }
    #[derive(Deserialize)]
    struct HookOutput {
        #[serde(default)]
        columns: Vec<ColumnIn>,
        #[serde(default)]
        rows: Vec<Map<String, Value>>,
        #[serde(default)]
        rows_affected: Option<u64>,
        #[serde(default)]
        total_rows: Option<u64>,
        #[serde(default)]
        truncated: bool,
        #[serde(default)]
        hint: Option<String>,
    }
    let out: HookOutput = serde_json::from_str(text)?;
    Ok(QueryOutput {
        columns: out
            .columns
            .into_iter()
            .map(|c| match c {
                ColumnIn::Name(name) => Column {
                    name,
                    type_name: String::new(),
                },
                ColumnIn::Full { name, type_name } => Column { name, type_name },
            })
            .collect(),
        returned_rows: out.rows.len(),
        total_rows: out.total_rows,
        rows: out.rows,
        rows_affected: out.rows_affected,
        truncated: out.truncated,
        hint: out.hint,
    })
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
        assert_eq!((out.returned_rows, out.total_rows), (1, Some(1)));
    }

    #[test]
    fn byte_cap_cuts_at_whole_rows() {
        let rows = Rows {
            columns: vec![col("s")],
            rows: (0..10)
                .map(|i| vec![Value::String(format!("row-{i}-{}", "x".repeat(20)))])
                .collect(),
            rows_affected: Some(10),
            more: false,
        };
        let mut out = query_output(rows, 500);
        let one_row = serde_json::to_vec(&out.rows[0]).unwrap().len();
        cap_bytes(&mut out, 2 + one_row * 3 + 2);
        assert_eq!(out.returned_rows, 3);
        assert_eq!(out.total_rows, Some(10), "every row was read: the total is known");
        assert_eq!(out.rows.len(), 3);
        assert!(out.truncated);
        assert!(
            out.hint
                .as_deref()
                .unwrap()
                .starts_with("Only the first 3 rows fit in the"),
            "{:?}",
            out.hint
        );
        let json = serde_json::to_vec(&out.rows).unwrap();
        assert!(json.len() <= 2 + one_row * 3 + 2, "{}", json.len());

        let mut out = query_output(
            Rows {
                columns: vec![col("s")],
                rows: vec![vec!["x".repeat(500).into()]],
                rows_affected: None,
                more: false,
            },
            500,
        );
        cap_bytes(&mut out, 100);
        assert_eq!((out.returned_rows, out.truncated), (0, true));
        assert!(out.hint.unwrap().starts_with("The first row alone is larger"));

        let mut out = query_output(
            Rows {
                columns: vec![col("n")],
                rows: vec![vec![1.into()]],
                rows_affected: None,
                more: false,
            },
            500,
        );
        cap_bytes(&mut out, 100_000);
        assert_eq!((out.returned_rows, out.truncated, out.hint), (1, false, None));
    }

    #[test]
    fn hook_results_are_read_leniently_and_exactly() {
        let out = from_hook_json(r#"{"columns":["modified"],"rows":[{"modified":true}]}"#).unwrap();
        assert_eq!(
            out.columns,
            vec![Column {
                name: "modified".into(),
                type_name: String::new()
            }]
        );
        assert_eq!(out.returned_rows, 1);
        let out = from_hook_json(
            r#"{"columns":[{"name":"id","type":"bigint"}],"rows":[{"id":9007199254740993}],"rows_affected":1}"#,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&out.rows).unwrap(),
            r#"[{"id":9007199254740993}]"#
        );
        assert!(from_hook_json("not json").is_err());
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
        assert_eq!(out.total_rows, None, "reading stopped at the cap: the total is unknown");
        let json = serde_json::to_value(&out).unwrap();
        assert!(json.get("total_rows").is_none(), "{json}");
        assert!(out.hint.unwrap().starts_with("Only the first 2 rows were returned"));
    }
}
