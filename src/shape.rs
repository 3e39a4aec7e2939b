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

impl QueryOutput {
    /// The output as JSON, its rows moved rather than copied; the same
    /// value, key for key and in the same order, as serializing it.
    pub fn into_value(self) -> Value {
        let mut map = Map::with_capacity(7);
        map.insert(
            "columns".to_owned(),
            serde_json::to_value(&self.columns).unwrap_or_default(),
        );
        map.insert(
            "rows".to_owned(),
            Value::Array(self.rows.into_iter().map(Value::Object).collect()),
        );
        if let Some(n) = self.rows_affected {
            map.insert("rows_affected".to_owned(), Value::from(n));
        }
        map.insert("returned_rows".to_owned(), Value::from(self.returned_rows));
        if let Some(n) = self.total_rows {
            map.insert("total_rows".to_owned(), Value::from(n));
        }
        map.insert("truncated".to_owned(), Value::Bool(self.truncated));
        if let Some(hint) = self.hint {
            map.insert("hint".to_owned(), Value::String(hint));
        }
        Value::Object(map)
    }
}

/// Build the output from backend rows; `max_rows` is the row cap that was
/// applied (the backend read at most one row more, to know).
pub fn query_output(rows: Rows, max_rows: usize) -> QueryOutput {
    let columns = unique_names(rows.columns);
    let returned: Vec<Map<String, Value>> = rows
        .rows
        .into_iter()
        .map(|values| {
            let mut row = Map::with_capacity(columns.len());
            row.extend(columns.iter().map(|c| c.name.clone()).zip(values));
            row
        })
        .collect();
    let hint = if rows.spent {
        Some(format!(
            "Reading stopped after {} rows: the result is larger than the result limit \
             (query.max_result_length); values too long for it end in \"… [value cut: N of M bytes shown]\". \
             Select fewer or smaller columns (e.g. left(col, 200)), filter with WHERE, or add a LIMIT \
             (and ORDER BY) to page through the rest.",
            returned.len()
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
    QueryOutput {
        returned_rows: returned.len(),
        total_rows: whole.then_some(returned.len() as u64),
        rows: returned,
        columns,
        rows_affected: rows.rows_affected,
        truncated: !whole,
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
    // Columns that take more than half the answer leave too little for any
    // row (their names are already as short as they go).
    if json_len(&output.columns) > max_bytes / 2 {
        return too_many_columns(output, max_bytes);
    }
    let frame = json_len(&frame) + COUNT_ROOM;
    let budget = max_bytes.saturating_sub(frame);
    let mut used = 0;
    let mut keep = 0;
    for row in &output.rows {
        let size = json_len(row) + usize::from(keep > 0);
        if used + size > budget {
            break;
        }
        used += size;
        keep += 1;
    }
    if keep == output.rows.len() {
        return;
    }
    // The first row alone is too large: show it with its longest values cut,
    // rather than nothing.
    let first_cut = keep == 0 && fit_row(&mut output.rows[0], budget);
    if first_cut {
        keep = 1;
    }
    output.rows.truncate(keep);
    output.returned_rows = keep;
    output.truncated = true;
    output.hint = Some(if first_cut {
        format!(
            "The first row alone is larger than the {max_bytes}-byte result limit (query.max_result_length): \
             its longest values were cut, each ending in \"… [value cut: N of M bytes shown]\". \
             Select fewer or smaller columns (e.g. left(col, 200))."
        )
    } else if keep == 0 {
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

/// The column list alone, names already shortened, is larger than the cap
/// (PostgreSQL allows 1,600 columns): list the leading columns that fit, and
/// no rows, since every row is keyed by all of them.
fn too_many_columns(output: &mut QueryOutput, max_bytes: usize) {
    let total = output.columns.len();
    // Half the answer, as in `cap_bytes`; the rest holds the field names,
    // the counts and the hint.
    let mut used = max_bytes - max_bytes / 2;
    let keep = output
        .columns
        .iter()
        .take_while(|c| {
            used += json_len(c) + 1;
            used <= max_bytes
        })
        .count();
    output.columns.truncate(keep);
    output.rows.clear();
    output.returned_rows = 0;
    output.truncated = true;
    output.hint = Some(format!(
        "The result's {total} columns alone are larger than the {max_bytes}-byte result limit \
         (query.max_result_length): the first {keep} are listed, and no rows. Select fewer columns."
    ));
}

/// Bytes a cut value's marker may add.
const MARKER_ROOM: usize = 48;

/// Cut the longest values of `row` until its JSON fits in `room` bytes: each
/// value longer than a common level is cut to it (its head, then a marker
/// stating its whole size), shorter ones stay whole. False when even that
/// does not fit (too many columns for the room).
fn fit_row(row: &mut Map<String, Value>, room: usize) -> bool {
    // JSON escapes make a value's text longer than its bytes: measure, cut,
    // measure again.
    for _ in 0..4 {
        let size = json_len(row);
        if size <= room {
            return true;
        }
        let sizes: Vec<usize> = row.values().map(json_len).collect();
        let total: usize = sizes.iter().sum();
        let target = total.saturating_sub(size - room + MARKER_ROOM * sizes.len());
        let level = water_level(&sizes, target);
        for (value, size) in row.values_mut().zip(sizes) {
            if size > level {
                *value = cut_value(std::mem::take(value), level);
            }
        }
    }
    json_len(row) <= room
}

/// The largest level `l` such that the sizes, each capped at `l`, sum to at
/// most `target`.
fn water_level(sizes: &[usize], target: usize) -> usize {
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    let mut left = target;
    for (i, &size) in sorted.iter().enumerate() {
        let share = left / (sorted.len() - i);
        if size > share {
            return share;
        }
        left -= size;
    }
    usize::MAX
}

/// `value` as text cut to about `max` bytes, with a marker stating its whole
/// size: a value already cut at read keeps the size its marker states.
fn cut_value(value: Value, max: usize) -> Value {
    let text = match value {
        Value::String(s) => s,
        other => other.to_string(),
    };
    let (head, len) = match crate::budget::stated_size(&text) {
        Some((start, len)) => (&text[..start], len),
        None => (text.as_str(), text.len()),
    };
    crate::budget::cut_value(json_prefix(head, max), len)
}

/// The longest prefix of `text` whose JSON string form (escapes counted,
/// quotes not) takes at most `max` bytes.
fn json_prefix(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        };
        if used > max {
            return &text[..i];
        }
    }
    text
}

/// The bytes of `value`'s JSON, counted as they are written: nothing is
/// kept.
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
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
    use serde_json::json;

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
            spent: false,
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
            spent: false,
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
                spent: false,
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
                spent: false,
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
            spent: false,
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

    /// A first row larger than the cap is shown with its longest values cut
    /// and marked, its short values whole; a value cut at read keeps the
    /// whole size its marker states.
    #[test]
    fn a_first_row_too_large_is_shown_with_its_longest_values_cut() {
        let read_cut = crate::budget::cut_value(&"r".repeat(5_000), 10_000_000);
        // (values of the one row, cap, whole sizes the markers must state)
        let cases: Vec<(Vec<Value>, usize, Vec<Option<usize>>)> = vec![
            (vec!["x".repeat(5_000).into(), 7.into()], 2_000, vec![Some(5_000), None]),
            (
                vec!["a".repeat(3_000).into(), "b".repeat(900).into(), "short".into()],
                3_000,
                vec![Some(3_000), None, None],
            ),
            (
                vec![read_cut, "y".repeat(4_000).into()],
                3_000,
                vec![Some(10_000_000), Some(4_000)],
            ),
            // Quotes double when escaped: measured, cut again.
            (vec!["\"".repeat(4_000).into()], 1_500, vec![Some(4_000)]),
            // Not a string: cut as its JSON text.
            (
                vec![serde_json::json!({"k": "z".repeat(4_000)})],
                1_500,
                vec![Some(4_008)],
            ),
        ];
        for (values, cap, stated) in cases {
            let columns: Vec<Column> = (0..values.len()).map(|i| col(&format!("c{i}"))).collect();
            let mut out = query_output(
                Rows {
                    columns,
                    rows: vec![values.clone(), values.iter().map(|_| Value::Null).collect()],
                    rows_affected: None,
                    more: false,
                    spent: false,
                },
                500,
            );
            cap_bytes(&mut out, cap);
            assert!(serde_json::to_vec(&out).unwrap().len() <= cap, "{cap}");
            assert_eq!((out.returned_rows, out.truncated), (1, true));
            assert!(out.hint.as_deref().unwrap().contains("its longest values were cut"));
            for (i, want) in stated.iter().enumerate() {
                let got = &out.rows[0][&format!("c{i}")];
                match want {
                    None => assert_eq!(got, &values[i], "a short value stays whole"),
                    Some(len) => {
                        let text = got.as_str().unwrap();
                        assert_eq!(crate::budget::stated_size(text).map(|(_, l)| l), Some(*len), "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_spent_read_budget_is_reported() {
        let out = query_output(
            Rows {
                columns: vec![col("n")],
                rows: vec![vec![1.into()]],
                rows_affected: None,
                more: false,
                spent: true,
            },
            500,
        );
        assert!(out.truncated);
        assert_eq!(out.total_rows, None);
        assert!(out.hint.unwrap().starts_with("Reading stopped after 1 rows"));
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

    /// More columns than the cap holds, even with short names: the leading
    /// ones that fit, no rows, and a hint; the answer stays within the cap.
    #[test]
    fn a_column_list_larger_than_the_cap_is_cut() {
        let columns: Vec<Column> = (0..1600).map(|i| col(&format!("c{i:04}_{}", "w".repeat(57)))).collect();
        let rows = Rows {
            rows: vec![vec![Value::Null; 1600]; 3],
            columns,
            rows_affected: Some(3),
            more: false,
            spent: false,
        };
        let mut out = query_output(rows, 500);
        cap_bytes(&mut out, 50_000);
        assert!(json_len(&out) <= 50_000, "{} bytes", json_len(&out));
        assert!(
            out.columns.len() > 100 && out.columns.len() < 1600,
            "{}",
            out.columns.len()
        );
        assert!(out.rows.is_empty() && out.truncated && out.returned_rows == 0);
        assert!(
            out.hint.as_deref().unwrap().contains("1600 columns alone"),
            "{:?}",
            out.hint
        );
    }

    /// The moved value is the serialized one, key for key and in order, with
    /// and without the optional fields.
    #[test]
    fn into_value_is_what_serializing_gives() {
        let rows = Rows {
            columns: vec![col("a"), col("a"), col("b")],
            rows: vec![
                vec![json!(1), json!("x"), Value::Null],
                vec![json!(2.5), json!([1]), json!({"k": true})],
            ],
            rows_affected: Some(2),
            more: true,
            spent: false,
        };
        let full = query_output(rows.clone(), 2);
        let bare = query_output(
            Rows {
                rows_affected: None,
                more: false,
                ..rows
            },
            2,
        );
        for out in [full, bare] {
            let serialized = serde_json::to_string(&out).unwrap();
            assert_eq!(out.clone().into_value().to_string(), serialized);
            assert_eq!(out.clone().into_value(), serde_json::to_value(&out).unwrap());
        }
    }

    #[test]
    fn truncation_is_reported() {
        let rows = Rows {
            columns: vec![col("n")],
            rows: vec![vec![1.into()], vec![2.into()]],
            rows_affected: None,
            more: true,
            spent: false,
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
