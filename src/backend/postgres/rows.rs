//! What crosses between the caller's JSON and PostgreSQL's text for one
//! statement: parameters in text form (`param_text`), and the result read
//! into the pipeline's neutral [`Rows`] (`to_rows`: each value by its
//! column's `Shape`, cut values and the row cap kept). Apart from the
//! exchange, which moves text; this gives it meaning.

use serde_json::Value;

use super::wire::{Connection, StatementResult};
use super::{Column, Deadline, PgBackend, Rows, value};
use crate::error::{Error, InputError};
use crate::pipeline::budget;

impl PgBackend {
    /// Column names and types, and every value converted by [`value::from_text`].
    pub(super) async fn to_rows(
        &self,
        conn: &mut Connection,
        result: StatementResult,
        limit: usize,
        deadline: &Deadline,
    ) -> Result<Rows, Error> {
        let role = self.role_set(conn);
        let described = self.types.describe(conn, &result.columns, role, deadline).await;
        let columns: Vec<Column> = result
            .columns
            .iter()
            .zip(&described)
            .map(|(c, (type_name, _))| Column {
                name: c.name.clone(),
                type_name: type_name.clone(),
            })
            .collect();
        // Rows dropped after the budget was spent still count towards the cap.
        let seen = result.rows.len() + result.skipped;
        let more = seen > limit || result.suspended && seen >= limit;
        let spent = result.skipped > 0 || !result.cuts.is_empty();
        let mut cuts = result.cuts.iter().peekable();
        let rows = result
            .rows
            .iter()
            .take(limit)
            .enumerate()
            .map(|(r, row)| {
                row.iter()
                    .zip(&described)
                    .enumerate()
                    .map(|(c, (cell, (_, shape)))| {
                        let cut = cuts.next_if(|cut| (cut.row, cut.column) == (r, c));
                        match (cell, cut) {
                            (None, _) => Value::Null,
                            (Some(bytes), Some(cut)) => budget::cut_value(&budget::head_text(bytes), cut.len),
                            // The session's encoding is UTF8: checking is all
                            // a value needs (lossy reading walks it slower).
                            (Some(bytes), None) => match std::str::from_utf8(bytes) {
                                Ok(text) => value::from_text(shape, text),
                                Err(_) => value::from_text(shape, &String::from_utf8_lossy(bytes)),
                            },
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(Rows {
            columns,
            rows,
            rows_affected: result.command_tag.as_deref().and_then(rows_affected),
            more,
            spent,
            prelude: Vec::new(),
        })
    }
}

/// A JSON parameter in PostgreSQL's text input form; the server infers its type.
pub(super) fn param_text((index, value): (usize, &Value)) -> Result<Option<String>, Error> {
    match value {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Array(_) | Value::Object(_) => Err(InputError::NotScalar { index }.into()),
    }
}

/// The row count in a command tag: `INSERT 0 3` → 3, `UPDATE 2` → 2, `SELECT 5` → 5.
fn rows_affected(tag: &str) -> Option<u64> {
    let mut words = tag.split_whitespace();
    match words.next()? {
        "INSERT" | "UPDATE" | "DELETE" | "SELECT" | "MERGE" | "COPY" | "FETCH" | "MOVE" => words.last()?.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tags() {
        let cases = [
            ("INSERT 0 3", Some(3)),
            ("UPDATE 2", Some(2)),
            ("DELETE 0", Some(0)),
            ("SELECT 5", Some(5)),
            ("MERGE 1", Some(1)),
            ("CREATE TABLE", None),
            ("BEGIN", None),
        ];
        for (tag, expected) in cases {
            assert_eq!(rows_affected(tag), expected, "{tag}");
        }
    }

    #[test]
    fn parameters_in_text_form() {
        let v: Vec<Value> = serde_json::from_str(r#"[null, true, 12345678901234567890, 1.5, "x"]"#).unwrap();
        let got: Vec<_> = v.iter().enumerate().map(|p| param_text(p).unwrap()).collect();
        assert_eq!(
            got,
            vec![
                None,
                Some("true".into()),
                Some("12345678901234567890".into()),
                Some("1.5".into()),
                Some("x".into())
            ]
        );
        assert!(param_text((0, &serde_json::json!([1]))).is_err());
    }
}
