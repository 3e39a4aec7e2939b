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

/// Bytes kept for the hint when the result is measured: the hints this
/// module writes are shorter, and a hook's hint is cut to it.
const HINT_ROOM: usize = 400;

/// Bytes kept for the counts (`returned_rows`, `total_rows`, `truncated`),
/// whose digits change as rows are dropped.
const COUNT_ROOM: usize = 48;

/// Keep the whole result's JSON within `max_bytes`: column names and types
/// longer than a quarter of it are shortened (an alias can be as long as a
/// value in SQLite and DuckDB), a hook's hint is cut, then only the leading
/// rows that fit are kept, cutting at whole rows, and the hint says so.
pub fn cap_bytes(output: &mut QueryOutput, max_bytes: usize) {
    cap_names(output, max_bytes / 4);
    if let Some(hint) = &mut output.hint {
        *hint = crate::fence::shorten(hint, HINT_ROOM, "hint").into_owned();
    }
    let frame = QueryOutput {
        columns: output.columns.clone(),
        rows: Vec::new(),
        hint: Some("x".repeat(HINT_ROOM)),
        ..*output
    };
    let frame = serde_json::to_vec(&frame).map_or(usize::MAX, |v| v.len()) + COUNT_ROOM;
    let budget = max_bytes.saturating_sub(frame);
    let mut used = 0;
    let mut keep = 0;
    for row in &output.rows {
        let size = serde_json::to_vec(row).map_or(usize::MAX, |v| v.len()) + usize::from(keep > 0);
        if used + size > budget {
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

/// Shorten column names and types when together they take more than
/// `budget` bytes, and rename the row keys to match.
fn cap_names(output: &mut QueryOutput, budget: usize) {
    let total: usize = output.columns.iter().map(|c| c.name.len() + c.type_name.len()).sum();
    if total <= budget || output.columns.is_empty() {
        return;
    }
    // Never shorter than a few characters plus the marker: a name must stay
    // recognisable.
    let each = (budget / (2 * output.columns.len())).max(24);
    let old: Vec<String> = output.columns.iter().map(|c| c.name.clone()).collect();
    for column in &mut output.columns {
        column.name = crate::fence::shorten(&column.name, each, "name").into_owned();
        column.type_name = crate::fence::shorten(&column.type_name, each, "type").into_owned();
    }
    output.columns = unique_names(std::mem::take(&mut output.columns));
    let renamed: std::collections::HashMap<&str, &str> = old
        .iter()
        .map(String::as_str)
        .zip(output.columns.iter().map(|c| c.name.as_str()))
        .collect();
    for row in &mut output.rows {
        *row = std::mem::take(row)
            .into_iter()
            .map(|(key, value)| {
                let key = match renamed.get(key.as_str()) {
                    Some(new) => (*new).to_owned(),
                    None => crate::fence::shorten(&key, each, "name").into_owned(),
                };
                (key, value)
            })
            .collect();
    }
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
pub(crate) fn unique_names(columns: Vec<Column>) -> Vec<Column> {
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
        let full = query_output(rows, 500);
        let one_row = serde_json::to_vec(&full.rows[0]).unwrap().len();
        // Whatever the cap, the whole result fits in it and holds as many
        // whole rows as fit.
        for cap in [600, 700, 800, 900, 1000, 2000] {
            let mut out = full.clone();
            cap_bytes(&mut out, cap);
            let json = serde_json::to_vec(&out).unwrap();
            assert!(json.len() <= cap, "{cap}: {} bytes", json.len());
            assert_eq!(out.truncated, out.rows.len() < 10, "{cap}");
            assert_eq!(out.total_rows, Some(10), "every row was read: the total is known");
            assert_eq!(out.rows.len(), out.returned_rows);
            // No room was left for one more row.
            let mut frame = out.clone();
            frame.hint = Some("x".repeat(HINT_ROOM));
            let measured = serde_json::to_vec(&frame).unwrap().len() + COUNT_ROOM;
            assert!(
                out.rows.len() == 10 || measured + one_row + 1 > cap,
                "{cap}: {measured}"
            );
        }
        let mut out = full.clone();
        cap_bytes(&mut out, 800);
        assert!(out.returned_rows > 0);
        let hint = out.hint.as_deref().unwrap();
        assert!(
            hint.starts_with(&format!("Only the first {} rows fit in the", out.returned_rows)),
            "{hint}"
        );

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

    /// Column names count against the cap: an SQLite alias can be 1 MB long.
    #[test]
    fn long_column_names_are_shortened_and_rows_follow() {
        let long = format!("{}@example.com", "a".repeat(100_000));
        let rows = Rows {
            columns: vec![col(&long), col(&format!("{long}2")), col("id")],
            rows: vec![vec![1.into(), 2.into(), 3.into()]],
            rows_affected: None,
            more: false,
        };
        let mut out = query_output(rows, 500);
        cap_bytes(&mut out, 2000);
        let json = serde_json::to_vec(&out).unwrap();
        assert!(json.len() <= 2000, "{} bytes", json.len());
        let names: Vec<&str> = out.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[2], "id");
        assert!(
            names[0].starts_with("aaa") && names[0].contains("[name cut:"),
            "{names:?}"
        );
        assert_ne!(names[0], names[1], "names stay distinct");
        let keys: Vec<&str> = out.rows[0].keys().map(String::as_str).collect();
        assert_eq!(keys, names, "row keys follow the shortened names");
        assert_eq!(out.returned_rows, 1);
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
