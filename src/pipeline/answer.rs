//! A `query` answer, encoded: the JSON object the client receives, written in
//! one pass from the shaped rows, and kept within the answer's byte cap as it
//! is written. Pure.
//!
//! Each row is written straight from its values in column order, with every
//! column's key escaped once for all rows: no JSON object per row, no
//! `serde_json::Value` tree of the result, and no second serialization to
//! measure it, since the text's length is the count. The cap cuts at whole
//! rows: a row that would pass it is taken back off the end of the text.
//!
//! The MCP layer sends this text as the tool's text content, and as its
//! structured content the same bytes (spliced in by
//! `crate::door::stdio::transport` on stdio, so the rows are encoded once).

use serde::Serialize;
use serde_json::Value;

use crate::backend::Column;
use crate::pipeline::shape::{QueryOutput, Shaped, unique_names};

/// The answer to one `query` call, as the JSON text the client receives.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryAnswer {
    json: String,
    returned_rows: usize,
    truncated: bool,
    /// The guard judged the statement one that only reads.
    reads: bool,
}

impl QueryAnswer {
    /// The answer's JSON: a [`QueryOutput`] object, at most the cap long.
    pub fn json(&self) -> &str {
        &self.json
    }

    pub fn into_json(self) -> String {
        self.json
    }

    /// How many rows the answer holds.
    pub fn returned_rows(&self) -> usize {
        self.returned_rows
    }

    /// Whether more rows existed than the answer holds.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Whether the guard judged the statement one that only reads, so
    /// running it again (the grid's pages) changes nothing. `false` where
    /// nobody judged it so (read-write mode with `confirm` off, SQLite and
    /// DuckDB: it ran under the whole guard only).
    pub fn reads(&self) -> bool {
        self.reads
    }

    pub(crate) fn judged_reading(mut self, reads: bool) -> QueryAnswer {
        self.reads = reads;
        self
    }

    /// The answer as Rust values, read from its text: exactly what the client
    /// reads, every digit of every number kept.
    pub fn output(&self) -> Result<QueryOutput, serde_json::Error> {
        // Values nest as deep as the backends allow (`MAX_JSON_DEPTH`).
        crate::json_depth::read_measured(&self.json)
    }
}

/// The most reserved ahead for rows: the first row's size times the row
/// count guesses, and an uncapped answer (the one a hook reads) must not
/// ask for more than the rows can hold.
const MAX_RESERVE: usize = 16 << 20;

/// Bytes kept for the hint's JSON string: the hints this module writes are
/// shorter, and a hook's hint is cut to fit.
const HINT_ROOM: usize = 400;

/// Bytes the fields after the rows take besides the hint, at their widest:
/// `],"rows_affected":N,"returned_rows":N,"total_rows":N,"truncated":false,"hint":`
/// and the closing brace, each count up to 20 digits.
const TAIL_ROOM: usize = 2 + (17 + 20) + (17 + 20) + (14 + 20) + 18 + 8;

/// Encode `shaped` within `max_bytes`: column names and types longer than a
/// quarter of it are shortened (an alias can be as long as a value in SQLite
/// and DuckDB), a hook's hint is cut, then the rows are written in order
/// until the next one would not fit, and the hint says so. A first row too
/// large alone is shown with its longest values cut rather than not at all.
pub fn encode(mut shaped: Shaped, max_bytes: usize) -> QueryAnswer {
    shaped.columns = capped_names(std::mem::take(&mut shaped.columns), max_bytes / 4);
    if let Some(hint) = &mut shaped.hint {
        short_hint(hint);
    }
    // Columns that take more than half the answer leave too little for any
    // row (their names are already as short as they go).
    if json_len(&shaped.columns) > max_bytes / 2 {
        return too_many_columns(shaped, max_bytes);
    }
    let keys: Vec<String> = shaped.columns.iter().map(|c| key(&c.name)).collect();
    let mut out = Vec::with_capacity(max_bytes.min(1 << 16));
    out.extend_from_slice(b"{\"columns\":");
    write(&mut out, &shaped.columns);
    out.extend_from_slice(b",\"rows\":[");
    let head = out.len();
    let budget = max_bytes.saturating_sub(head + TAIL_ROOM + HINT_ROOM);
    let mut kept = 0;
    for row in &shaped.rows {
        let start = out.len();
        if kept > 0 {
            out.push(b',');
        }
        write_row(&mut out, &keys, row);
        if out.len() - head > budget {
            out.truncate(start);
            break;
        }
        kept += 1;
        if kept == 1 {
            // Room for rows like the first, within the cap: one allocation
            // instead of a copy at every doubling.
            let rows = (out.len() - head + 1).saturating_mul(shaped.rows.len());
            out.reserve(rows.min(budget).min(MAX_RESERVE) + TAIL_ROOM + HINT_ROOM);
        }
    }
    if kept < shaped.rows.len() {
        // The first row alone is too large: show it with its longest values
        // cut, rather than nothing.
        let first_cut = kept == 0 && fit_row(&keys, &mut shaped.rows[0], budget);
        if first_cut {
            write_row(&mut out, &keys, &shaped.rows[0]);
            kept = 1;
        }
        shaped.truncated = true;
        shaped.hint = Some(if first_cut {
            format!(
                "The first row alone is larger than the {max_bytes}-byte result limit (query.max_result_length): \
                 its longest values were cut, each ending in \"… [value cut: N of M bytes shown]\". \
                 Select fewer or smaller columns (e.g. left(col, 200))."
            )
        } else if kept == 0 {
            format!(
                "The first row alone is larger than the {max_bytes}-byte result limit (query.max_result_length). \
                 Select fewer or smaller columns (e.g. left(col, 200))."
            )
        } else {
            format!(
                "Only the first {kept} rows fit in the {max_bytes}-byte result limit (query.max_result_length). \
                 Select fewer columns, or add a LIMIT (and ORDER BY) to page through the rest."
            )
        });
    }
    out.push(b']');
    finish(out, &shaped, kept)
}

/// Cut `hint` so its JSON string, escapes and quotes counted, takes at most
/// [`HINT_ROOM`] bytes: the hints this module writes are shorter; a hook's
/// may not be.
fn short_hint(hint: &mut String) {
    if json_len(hint.as_str()) <= HINT_ROOM {
        return;
    }
    let head = json_prefix(hint, HINT_ROOM - MARKER_ROOM - 2);
    *hint = format!("{head}… [hint cut: {} of {} bytes shown]", head.len(), hint.len());
}

/// The fields after the rows, and the answer whole.
fn finish(mut out: Vec<u8>, shaped: &Shaped, returned_rows: usize) -> QueryAnswer {
    if let Some(n) = shaped.rows_affected {
        out.extend_from_slice(b",\"rows_affected\":");
        write(&mut out, &n);
    }
    out.extend_from_slice(b",\"returned_rows\":");
    write(&mut out, &returned_rows);
    if let Some(n) = shaped.total_rows {
        out.extend_from_slice(b",\"total_rows\":");
        write(&mut out, &n);
    }
    out.extend_from_slice(b",\"truncated\":");
    write(&mut out, &shaped.truncated);
    if let Some(hint) = &shaped.hint {
        out.extend_from_slice(b",\"hint\":");
        write(&mut out, hint);
    }
    out.push(b'}');
    QueryAnswer {
        // serde_json writes UTF-8 only, and so does every literal above.
        json: String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        returned_rows,
        truncated: shaped.truncated,
        reads: false,
    }
}

/// The column list alone, names already shortened, is larger than the cap
/// (PostgreSQL allows 1,600 columns): list the leading columns that fit, and
/// no rows, since every row is keyed by all of them.
fn too_many_columns(mut shaped: Shaped, max_bytes: usize) -> QueryAnswer {
    let total = shaped.columns.len();
    // Half the answer, as in `encode`; the rest holds the field names, the
    // counts and the hint.
    let mut used = max_bytes - max_bytes / 2;
    let keep = shaped
        .columns
        .iter()
        .take_while(|c| {
            used += json_len(c) + 1;
            used <= max_bytes
        })
        .count();
    shaped.columns.truncate(keep);
    shaped.truncated = true;
    shaped.hint = Some(format!(
        "The result's {total} columns alone are larger than the {max_bytes}-byte result limit \
         (query.max_result_length): the first {keep} are listed, and no rows. Select fewer columns."
    ));
    let mut out = Vec::new();
    out.extend_from_slice(b"{\"columns\":");
    write(&mut out, &shaped.columns);
    out.extend_from_slice(b",\"rows\":[]");
    finish(out, &shaped, 0)
}

/// `"name":`, escaped once for every row.
fn key(name: &str) -> String {
    let mut key = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".to_owned());
    key.push(':');
    key
}

/// One row as a JSON object, keyed by the columns' names.
fn write_row(out: &mut Vec<u8>, keys: &[String], row: &[Value]) {
    out.push(b'{');
    for (i, (key, value)) in keys.iter().zip(row).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(key.as_bytes());
        write(out, value);
    }
    out.push(b'}');
}

/// Append `value`'s JSON. Serializing into memory fails only for maps with
/// keys that are not strings, which no value here has.
fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let before = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(before);
        out.extend_from_slice(b"null");
    }
}

fn row_len(keys: &[String], row: &[Value]) -> usize {
    let mut out = Vec::new();
    write_row(&mut out, keys, row);
    out.len()
}

/// Bytes a cut value's marker may add.
const MARKER_ROOM: usize = 48;

/// Cut the longest values of `row` until its JSON fits in `room` bytes: each
/// value longer than a common level is cut to it (its head, then a marker
/// stating its whole size), shorter ones stay whole. False when even that
/// does not fit (too many columns for the room).
fn fit_row(keys: &[String], row: &mut [Value], room: usize) -> bool {
    // JSON escapes make a value's text longer than its bytes: measure, cut,
    // measure again.
    for _ in 0..4 {
        let size = row_len(keys, row);
        if size <= room {
            return true;
        }
        let sizes: Vec<usize> = row.iter().map(json_len).collect();
        let total: usize = sizes.iter().sum();
        let target = total.saturating_sub(size - room + MARKER_ROOM * sizes.len());
        let level = water_level(&sizes, target);
        for (value, size) in row.iter_mut().zip(sizes) {
            if size > level {
                *value = cut_value(std::mem::take(value), level);
            }
        }
    }
    row_len(keys, row) <= room
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
    let (head, len) = match crate::pipeline::budget::stated_size(&text) {
        Some((start, len)) => (&text[..start], len),
        None => (text.as_str(), text.len()),
    };
    crate::pipeline::budget::cut_value(json_prefix(head, max), len)
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
/// `budget` bytes; rows are keyed by position, so they follow.
fn capped_names(mut columns: Vec<Column>, budget: usize) -> Vec<Column> {
    let total: usize = columns.iter().map(|c| c.name.len() + c.type_name.len()).sum();
    if total <= budget || columns.is_empty() {
        return columns;
    }
    // Never shorter than a few characters plus the marker: a name must stay
    // recognisable.
    let each = (budget / (2 * columns.len())).max(24);
    for column in &mut columns {
        column.name = crate::pipeline::fence::shorten(&column.name, each, "name").into_owned();
        column.type_name = crate::pipeline::fence::shorten(&column.type_name, each, "type").into_owned();
    }
    unique_names(columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Rows;
    use crate::pipeline::shape::shaped;
    use crate::pipeline::shape::tests::col;
    use serde_json::{Map, json};

    fn rows_of(columns: Vec<Column>, rows: Vec<Vec<Value>>) -> Shaped {
        shaped(
            Rows {
                columns,
                rows,
                rows_affected: None,
                more: false,
                spent: false,
                prelude: Vec::new(),
            },
            500,
        )
    }

    /// What serializing the result as objects gives, the way a client reads it.
    fn as_objects(shaped: &Shaped) -> QueryOutput {
        QueryOutput {
            columns: shaped.columns.clone(),
            rows: shaped
                .rows
                .iter()
                .map(|row| {
                    shaped
                        .columns
                        .iter()
                        .map(|c| c.name.clone())
                        .zip(row.iter().cloned())
                        .collect::<Map<_, _>>()
                })
                .collect(),
            rows_affected: shaped.rows_affected,
            returned_rows: shaped.rows.len(),
            total_rows: shaped.total_rows,
            truncated: shaped.truncated,
            hint: shaped.hint.clone(),
        }
    }

    /// Uncapped, the text is byte for byte what serde writes for the same
    /// result as objects, with and without the optional fields, and reads
    /// back as it.
    #[test]
    fn the_text_is_what_serializing_objects_gives() {
        let rows = Rows {
            columns: vec![col("a"), col("a"), col("b \"q\"")],
            rows: vec![
                vec![json!(1), json!("x\n\u{1}é"), Value::Null],
                vec![
                    serde_json::from_str("12345678901234567890.5").unwrap(),
                    json!([1, {"k": [true]}]),
                    json!({"k": true, "a": null}),
                ],
            ],
            rows_affected: Some(2),
            more: true,
            spent: false,
            prelude: Vec::new(),
        };
        let full = shaped(rows.clone(), 2);
        let bare = shaped(
            Rows {
                rows_affected: None,
                more: false,
                ..rows
            },
            2,
        );
        let empty = rows_of(vec![], vec![]);
        for s in [full, bare, empty] {
            let answer = encode(s.clone(), usize::MAX);
            let expected = as_objects(&s);
            assert_eq!(answer.json(), serde_json::to_string(&expected).unwrap());
            assert_eq!(answer.output().unwrap(), expected);
            assert_eq!(
                (answer.returned_rows(), answer.truncated()),
                (s.rows.len(), s.truncated)
            );
        }
    }

    #[test]
    fn the_cap_cuts_at_whole_rows() {
        let full = rows_of(
            vec![col("s")],
            (0..10)
                .map(|i| vec![Value::String(format!("row-{i}-{}", "x".repeat(20)))])
                .collect(),
        );
        let one_row = json_len(&json!({"s": full.rows[0][0]}));
        // Whatever the cap, the whole answer fits in it and holds as many
        // whole rows as fit.
        for cap in [600, 700, 800, 900, 1000, 2000] {
            let answer = encode(full.clone(), cap);
            assert!(answer.json().len() <= cap, "{cap}: {} bytes", answer.json().len());
            let out = answer.output().unwrap();
            assert_eq!(out.truncated, out.rows.len() < 10, "{cap}");
            assert_eq!(out.total_rows, Some(10), "every row was read: the total is known");
            assert_eq!(out.rows.len(), out.returned_rows);
            assert_eq!(out.rows[..], as_objects(&full).rows[..out.rows.len()], "{cap}");
            // No room was left for one more row: with it, and the room
            // kept for the longest hint and counts, the answer could pass
            // the cap.
            let rows_end = answer.json().find("],\"returned_rows\"").unwrap();
            assert!(
                out.rows.len() == 10 || rows_end + 1 + one_row + TAIL_ROOM + HINT_ROOM > cap,
                "{cap}: {rows_end}"
            );
        }
        let out = encode(full.clone(), 800).output().unwrap();
        assert!(out.returned_rows > 0);
        let hint = out.hint.as_deref().unwrap();
        assert!(
            hint.starts_with(&format!("Only the first {} rows fit in the", out.returned_rows)),
            "{hint}"
        );

        let out = encode(rows_of(vec![col("s")], vec![vec!["x".repeat(500).into()]]), 100)
            .output()
            .unwrap();
        assert_eq!((out.returned_rows, out.truncated), (0, true));
        assert!(out.hint.unwrap().starts_with("The first row alone is larger"));

        let out = encode(rows_of(vec![col("n")], vec![vec![1.into()]]), 100_000)
            .output()
            .unwrap();
        assert_eq!((out.returned_rows, out.truncated, out.hint), (1, false, None));
    }

    /// Column names count against the cap: an SQLite alias can be 1 MB long.
    #[test]
    fn long_column_names_are_shortened_and_rows_follow() {
        let long = format!("{}@example.com", "a".repeat(100_000));
        let answer = encode(
            rows_of(
                vec![col(&long), col(&format!("{long}2")), col("id")],
                vec![vec![1.into(), 2.into(), 3.into()]],
            ),
            2000,
        );
        assert!(answer.json().len() <= 2000, "{} bytes", answer.json().len());
        let out = answer.output().unwrap();
        let names: Vec<&str> = out.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[2], "id");
        assert!(
            names[0].starts_with("aaa") && names[0].contains("[name cut:"),
            "{names:?}"
        );
        assert_ne!(names[0], names[1], "names stay distinct");
        let keys: Vec<&str> = out.rows[0].keys().map(String::as_str).collect();
        assert_eq!(keys, names, "row keys follow the shortened names");
        assert_eq!(out.rows[0]["id"], json!(3));
        assert_eq!(out.returned_rows, 1);
    }

    /// A first row larger than the cap is shown with its longest values cut
    /// and marked, its short values whole; a value cut at read keeps the
    /// whole size its marker states.
    #[test]
    fn a_first_row_too_large_is_shown_with_its_longest_values_cut() {
        let read_cut = crate::pipeline::budget::cut_value(&"r".repeat(5_000), 10_000_000);
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
            (vec![json!({"k": "z".repeat(4_000)})], 1_500, vec![Some(4_008)]),
        ];
        for (values, cap, stated) in cases {
            let columns: Vec<Column> = (0..values.len()).map(|i| col(&format!("c{i}"))).collect();
            let nulls = values.iter().map(|_| Value::Null).collect();
            let answer = encode(rows_of(columns, vec![values.clone(), nulls]), cap);
            assert!(answer.json().len() <= cap, "{cap}");
            let out = answer.output().unwrap();
            assert_eq!((out.returned_rows, out.truncated), (1, true));
            assert!(out.hint.as_deref().unwrap().contains("its longest values were cut"));
            for (i, want) in stated.iter().enumerate() {
                let got = &out.rows[0][&format!("c{i}")];
                match want {
                    None => assert_eq!(got, &values[i], "a short value stays whole"),
                    Some(len) => {
                        let text = got.as_str().unwrap();
                        assert_eq!(
                            crate::pipeline::budget::stated_size(text).map(|(_, l)| l),
                            Some(*len),
                            "{text}"
                        );
                    }
                }
            }
        }
    }

    /// More columns than the cap holds, even with short names: the leading
    /// ones that fit, no rows, and a hint; the answer stays within the cap.
    #[test]
    fn a_column_list_larger_than_the_cap_is_cut() {
        let columns: Vec<Column> = (0..1600).map(|i| col(&format!("c{i:04}_{}", "w".repeat(57)))).collect();
        let answer = encode(rows_of(columns, vec![vec![Value::Null; 1600]; 3]), 50_000);
        assert!(answer.json().len() <= 50_000, "{} bytes", answer.json().len());
        let out = answer.output().unwrap();
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

    /// A hook's hint longer than the room kept for it is cut, and the answer
    /// still fits.
    #[test]
    fn a_long_hint_is_cut() {
        let mut s = rows_of(vec![col("n")], (0..50).map(|i| vec![json!(i)]).collect());
        s.hint = Some("\"".repeat(5_000));
        let answer = encode(s, 1_000);
        assert!(answer.json().len() <= 1_000, "{}", answer.json().len());
        assert!(answer.returned_rows() > 0 && answer.truncated());
    }
}
