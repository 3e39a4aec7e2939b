//! The result of a `query` call as the model sees it, and the pure step that
//! shapes it from backend rows. Reading already stopped at the row cap (the
//! backend fetched at most one row more); this step says so honestly.
//!
//! A shaped result keeps its rows as the backend handed them: values in
//! column order, never a JSON object per row. The answer is written from
//! them in one pass (`crate::pipeline::answer`); [`QueryOutput`], the same answer as
//! Rust values, is read back from that text for callers of the library.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::backend::{Column, Rows};

/// A successful `query` result, as Rust values: what [`crate::Engine::query`]
/// returns, read from the JSON the MCP client receives
/// ([`crate::pipeline::answer::QueryAnswer`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueryOutput {
    /// Result columns in order, with their type names as the engine spells them. Column names
    /// are made unique (`a`, `a_2`) so every row can be a JSON object.
    pub columns: Vec<Column>,
    /// One JSON object per row, keyed by column name.
    pub rows: Vec<Map<String, Value>>,
    /// Rows inserted, updated or deleted (or selected), as the server reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_affected: Option<u64>,
    /// How many rows are in `rows`.
    pub returned_rows: usize,
    /// How many rows the statement produced, when that is known without more
    /// work: reading reached the end of the result. Absent when reading stopped
    /// at the row cap (the rest was never computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_rows: Option<u64>,
    /// True when more rows existed than were returned.
    pub truncated: bool,
    /// What to do about a truncated result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A result between the backend and the encoder: the columns, and each
/// row's values in column order.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    /// Names made unique, so each row reads as an object.
    pub columns: Vec<Column>,
    /// One value per column, in order.
    pub rows: Vec<Vec<Value>>,
    pub rows_affected: Option<u64>,
    /// Known when every row was read, whatever the byte cap keeps later.
    pub total_rows: Option<u64>,
    pub truncated: bool,
    pub hint: Option<String>,
}

/// Shape backend rows; `max_rows` is the row cap that was applied (the
/// backend read at most one row more, to know).
pub fn shaped(rows: Rows, max_rows: usize) -> Shaped {
    let returned = rows.rows.len();
    let hint = if rows.spent {
        Some(format!(
            "Reading stopped after {returned} rows: the result is larger than the result limit \
             (query.max_result_length); values too long for it end in \"… [value cut: N of M bytes shown]\". \
             Select fewer or smaller columns (e.g. left(col, 200)), filter with WHERE, or add a LIMIT \
             (and ORDER BY) to page through the rest."
        ))
    } else {
        rows.more.then(|| {
            format!(
                "Only the first {max_rows} rows were returned. Add a LIMIT (and ORDER BY) to page through the rest, \
                 filter with WHERE, or aggregate."
            )
        })
    };
    // Every row was read unless reading stopped at the cap or the read
    // budget; a byte cap applied later returns fewer, but the total stays
    // known.
    let whole = !rows.more && !rows.spent;
    Shaped {
        columns: unique_names(rows.columns),
        rows: rows.rows,
        rows_affected: rows.rows_affected,
        total_rows: whole.then_some(returned as u64),
        truncated: !whole,
        hint,
    }
}

/// Most columns a result an `after_query` hook returns may have: as many as
/// a PostgreSQL result can.
pub const MAX_HOOK_COLUMNS: usize = 1600;

/// Read back a result an `after_query` hook rewrote. Missing fields get
/// defaults, and a column may be given as just its name. Rows are read
/// against the columns: a key no column names becomes a column of its own
/// (after the listed ones, in the order first seen), and a row without a
/// column's key holds null there.
pub fn from_hook_json(text: &str) -> Result<Shaped, serde_json::Error> {
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
    let mut columns: Vec<Column> = out
        .columns
        .into_iter()
        .map(|c| match c {
            ColumnIn::Name(name) => Column {
                name,
                type_name: String::new(),
            },
            ColumnIn::Full { name, type_name } => Column { name, type_name },
        })
        .collect();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, column) in columns.iter().enumerate() {
        at.entry(column.name.clone()).or_insert(i);
    }
    let mut rows: Vec<Vec<(usize, Value)>> = Vec::with_capacity(out.rows.len());
    for row in out.rows {
        let mut cells = Vec::with_capacity(row.len());
        for (key, value) in row {
            let i = match at.get(&key) {
                Some(i) => *i,
                None => {
                    columns.push(Column {
                        name: key.clone(),
                        type_name: String::new(),
                    });
                    at.insert(key, columns.len() - 1);
                    columns.len() - 1
                }
            };
            cells.push((i, value));
        }
        rows.push(cells);
    }
    // Rows with scattered keys make a grid as wide as every key seen: past
    // PostgreSQL's own limit of columns the result cannot be one anyway.
    if columns.len() > MAX_HOOK_COLUMNS {
        return Err(serde::de::Error::custom(format!(
            "{} columns (listed, or keys of rows): at most {MAX_HOOK_COLUMNS}",
            columns.len()
        )));
    }
    let width = columns.len();
    let rows = rows
        .into_iter()
        .map(|cells| {
            let mut row = vec![Value::Null; width];
            for (i, value) in cells {
                row[i] = value;
            }
            row
        })
        .collect();
    Ok(Shaped {
        // A hook may list a name twice; each row can hold it once.
        columns: unique_names(columns),
        rows,
        rows_affected: out.rows_affected,
        total_rows: out.total_rows,
        truncated: out.truncated,
        hint: out.hint,
    })
}

/// `SELECT 1 AS a, 2 AS a` would lose a value in a JSON object; suffix
/// repeats. Every name as given is kept where it first appears, and a repeat
/// gets the first `_2`, `_3`... that no column is named, so a suffix never
/// takes a name written later (`a, a, a_2` → `a, a_3, a_2`).
pub(crate) fn unique_names(columns: Vec<Column>) -> Vec<Column> {
    use std::collections::{HashMap, HashSet};
    let given: HashSet<String> = columns.iter().map(|c| c.name.clone()).collect();
    let mut taken: HashSet<String> = HashSet::with_capacity(columns.len());
    // The next suffix to try for each name: repeats cost one look each, not
    // one per earlier repeat.
    let mut next: HashMap<String, usize> = HashMap::new();
    columns
        .into_iter()
        .map(|mut c| {
            if !taken.insert(c.name.clone()) {
                let n = next.entry(c.name.clone()).or_insert(2);
                loop {
                    let name = format!("{}_{n}", c.name);
                    *n += 1;
                    if !given.contains(&name) && taken.insert(name.clone()) {
                        c.name = name;
                        break;
                    }
                }
            }
            c
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// An integer column named `name`.
    pub(crate) fn col(name: &str) -> Column {
        Column {
            name: name.into(),
            type_name: "integer".into(),
        }
    }

    #[test]
    fn repeated_names_get_suffixes() {
        let rows = Rows {
            columns: vec![col("a"), col("a"), col("a_2"), col("b")],
            rows: vec![vec![1.into(), 2.into(), 3.into(), Value::Null]],
            rows_affected: Some(1),
            more: false,
            spent: false,
            prelude: Vec::new(),
        };
        let out = shaped(rows, 500);
        // (names, unique names)
        let cases: [(&[&str], &[&str]); 4] = [
            (&["a", "a", "a"], &["a", "a_2", "a_3"]),
            (&["a_2", "a", "a"], &["a_2", "a", "a_3"]),
            (&["x", "x_2", "x", "x_3", "x"], &["x", "x_2", "x_4", "x_3", "x_5"]),
            (&["", ""], &["", "_2"]),
        ];
        for (names, want) in cases {
            let got: Vec<String> = unique_names(names.iter().map(|n| col(n)).collect())
                .into_iter()
                .map(|c| c.name)
                .collect();
            assert_eq!(got, want, "{names:?}");
        }
        let names: Vec<_> = out.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "a_3", "a_2", "b"]);
        assert_eq!(out.rows, [vec![json!(1), json!(2), json!(3), Value::Null]]);
        assert!(!out.truncated);
        assert_eq!(out.hint, None);
        assert_eq!(out.total_rows, Some(1));
    }

    #[test]
    fn a_spent_read_budget_is_reported() {
        let out = shaped(
            Rows {
                columns: vec![col("n")],
                rows: vec![vec![1.into()]],
                rows_affected: None,
                more: false,
                spent: true,
                prelude: Vec::new(),
            },
            500,
        );
        assert!(out.truncated);
        assert_eq!(out.total_rows, None);
        assert!(out.hint.unwrap().starts_with("Reading stopped after 1 rows"));
    }

    #[test]
    fn truncation_is_reported() {
        let rows = Rows {
            columns: vec![col("n")],
            rows: vec![vec![1.into()], vec![2.into()]],
            rows_affected: None,
            more: true,
            spent: false,
            prelude: Vec::new(),
        };
        let out = shaped(rows, 2);
        assert!(out.truncated);
        assert_eq!(out.rows.len(), 2);
        assert_eq!(out.total_rows, None, "reading stopped at the cap: the total is unknown");
        assert!(out.hint.unwrap().starts_with("Only the first 2 rows were returned"));
    }

    /// One case: (hook's JSON, columns read, rows read).
    type HookCase = (&'static str, Vec<Column>, Vec<Vec<Value>>);

    #[test]
    fn hook_results_are_read_leniently_and_exactly() {
        let text = |t: &str| Column {
            name: t.into(),
            type_name: String::new(),
        };
        let cases: Vec<HookCase> = vec![
            (
                r#"{"columns":["modified"],"rows":[{"modified":true}]}"#,
                vec![text("modified")],
                vec![vec![json!(true)]],
            ),
            (
                r#"{"columns":[{"name":"id","type":"bigint"}],"rows":[{"id":9007199254740993}],"rows_affected":1}"#,
                vec![Column {
                    name: "id".into(),
                    type_name: "bigint".into(),
                }],
                vec![vec![serde_json::from_str("9007199254740993").unwrap()]],
            ),
            // Keys no column names become columns; a missing key is null.
            (
                r#"{"columns":["a"],"rows":[{"b":1,"a":2},{"c":3}]}"#,
                vec![text("a"), text("b"), text("c")],
                vec![
                    vec![json!(2), json!(1), Value::Null],
                    vec![Value::Null, Value::Null, json!(3)],
                ],
            ),
            (r#"{"rows":[]}"#, vec![], vec![]),
        ];
        for (json, columns, rows) in cases {
            let out = from_hook_json(json).unwrap();
            assert_eq!((out.columns, out.rows), (columns, rows), "{json}");
        }
        let out = from_hook_json(
            r#"{"columns":["x"],"rows":[],"rows_affected":4,"total_rows":9,"truncated":true,"hint":"h"}"#,
        )
        .unwrap();
        assert_eq!(
            (out.rows_affected, out.total_rows, out.truncated, out.hint.as_deref()),
            (Some(4), Some(9), true, Some("h"))
        );
        assert!(from_hook_json("not json").is_err());
        // Scattered keys past the most columns a result can have.
        let rows: Vec<String> = (0..=MAX_HOOK_COLUMNS).map(|i| format!("{{\"k{i}\":0}}")).collect();
        let e = from_hook_json(&format!("{{\"rows\":[{}]}}", rows.join(","))).unwrap_err();
        assert!(e.to_string().contains("1601 columns"), "{e}");
    }
}
