//! The output fence: the last stage every text passes before it reaches the
//! model. A query result is sanitized (values, keys, column names, hint) and
//! capped as a whole; an error of any kind, with its detail, hint,
//! suggestions and error prompts, is sanitized and capped as the one text the
//! model reads. An error message can echo its input
//! (`SELECT repeat('x', 30000000)::int`, `SELECT email::int`), so errors need
//! the same fence as rows. Pure.

use std::borrow::Cow;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::Error;
use crate::pipeline::answer::{self, QueryAnswer};
use crate::pipeline::sanitize::{self, SanitizeRule};
use crate::pipeline::shape::Shaped;

/// Sanitize every text of a query result, then write its answer within
/// `max_bytes`. Sanitizing comes first: a cut through the middle of an
/// address would leave a piece no rule matches.
pub fn output(rules: &[SanitizeRule], max_bytes: usize, mut shaped: Shaped) -> QueryAnswer {
    sanitize::shaped(rules, &mut shaped);
    answer::encode(shaped, max_bytes)
}

/// The output stage of every answer that is not a query result
/// (`list_tables`, `describe_table`, and any tool to come): every string
/// value sanitized (comments, view definitions, CHECK expressions and
/// defaults can hold data) and cut to an eighth of `max_bytes`, so one long
/// view definition cannot flood the answer; then the whole answer kept
/// within `max_bytes` by leaving out the last items of its longest lists,
/// with `truncated` set and a hint saying what was left out. Field names are
/// the schema's and are left alone. The answer goes through JSON and back.
pub fn answer<T: Serialize + DeserializeOwned>(
    rules: &[SanitizeRule],
    max_bytes: usize,
    answer: T,
) -> Result<T, Error> {
    let mut json =
        serde_json::to_value(&answer).map_err(|e| Error::Internal(format!("cannot encode the answer: {e}")))?;
    let longest = (max_bytes / 8).max(64);
    let before = json.clone();
    strings(&mut json, &mut |s: &mut String| {
        let clean = shorten(&sanitize::text(rules, s), longest, "text").into_owned();
        *s = clean;
    });
    cap_lists(&mut json, max_bytes);
    if json == before {
        return Ok(answer);
    }
    serde_json::from_value(json).map_err(|e| Error::Internal(format!("cannot encode the answer: {e}")))
}

/// Bytes kept for `truncated` and the hint [`cap_lists`] writes.
const NOTE_ROOM: usize = 400;

/// Leave out the last items of the longest top-level lists of `json` (an
/// object) until it fits in `max_bytes`, then say so in its `truncated` and
/// `hint` fields. Items go whole, never cut in the middle.
fn cap_lists(json: &mut Value, max_bytes: usize) {
    let Value::Object(fields) = json else { return };
    let size = answer::json_len::<Value>;
    let mut total = fields.values().map(size).sum::<usize>() + fields.keys().map(|k| k.len() + 4).sum::<usize>();
    let room = max_bytes.saturating_sub(NOTE_ROOM);
    if total <= max_bytes {
        return;
    }
    let mut left_out: Vec<(String, usize, usize)> = Vec::new();
    while total > room {
        // The longest list left, by its JSON size.
        let Some((name, _)) = fields
            .iter()
            .filter_map(|(k, v)| v.as_array().filter(|a| !a.is_empty()).map(|_| (k.clone(), size(v))))
            .max_by_key(|(_, bytes)| *bytes)
        else {
            break;
        };
        let Some(Value::Array(items)) = fields.get_mut(&name) else {
            break;
        };
        let count = items.len();
        while total > room {
            let Some(item) = items.pop() else { break };
            total -= size(&item) + 1;
        }
        left_out.push((name, count - items.len(), count));
    }
    let said: Vec<String> = left_out
        .iter()
        .map(|(name, out, of)| format!("the last {out} of {of} {name}"))
        .collect();
    let note = format!(
        "The answer was cut to fit the {max_bytes}-byte result limit (query.max_result_length): {} left out.",
        said.join(", ")
    );
    fields.insert("truncated".to_owned(), Value::Bool(true));
    let hint = match fields.get("hint").and_then(Value::as_str) {
        Some(hint) => format!("{} {note}", shorten(hint, NOTE_ROOM / 2, "hint")),
        None => note,
    };
    fields.insert("hint".to_owned(), Value::String(hint));
}

/// Apply `f` to every string value inside `value` (not to object keys).
fn strings(value: &mut Value, f: &mut impl FnMut(&mut String)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter_mut().for_each(|v| strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| strings(v, f)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `error` as the model will read it: its whole text (message, detail, hint,
/// suggestions, prompts) sanitized, then cut to `max_bytes`. The error's kind
/// stays readable through [`Error::kind`]. Fencing twice changes nothing.
pub fn error(rules: &[SanitizeRule], max_bytes: usize, error: Error) -> Error {
    if matches!(error, Error::Fenced { .. }) {
        return error;
    }
    let full = error.to_string();
    let text = shorten(&sanitize::text(rules, &full), max_bytes, "error").into_owned();
    Error::Fenced {
        source: Box::new(error),
        text,
    }
}

/// `text` if it fits in `max_bytes`, else its beginning, cut on a character
/// boundary, with a marker saying that and how much was cut, the whole within
/// `max_bytes` (for `max_bytes` shorter than the marker, the marker is cut).
pub fn shorten<'a>(text: &'a str, max_bytes: usize, what: &str) -> Cow<'a, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let marker = format!("… [{what} cut: {} of {} bytes shown]", "{}", text.len());
    // The count's digits are known only after the cut; reserve the widest.
    let room = max_bytes.saturating_sub(marker.len() - 2 + text.len().to_string().len());
    let head = prefix(text, room);
    let mut out = format!("{head}{}", marker.replace("{}", &head.len().to_string()));
    if out.len() > max_bytes {
        out = prefix(&out, max_bytes).to_owned();
    }
    Cow::Owned(out)
}

/// The longest prefix of `text` of at most `max_bytes` that ends on a
/// character boundary.
fn prefix(text: &str, max_bytes: usize) -> &str {
    let mut end = max_bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DbError;
    use regex::Regex;

    fn email() -> SanitizeRule {
        SanitizeRule {
            pattern: Regex::new(r"[\w.+-]+@[\w-]+\.[\w.]+").unwrap(),
            replacement: "[email]".into(),
            description: String::new(),
        }
    }

    #[test]
    fn catalog_answers_are_sanitized_and_long_texts_cut() {
        use crate::pipeline::catalog::{TableEntry, TableList};
        let list: TableList = serde_json::from_value(serde_json::json!({
            "tables": [{"schema": "public", "name": "people", "type": "table", "owner": "me",
                        "comment": format!("ask alice@example.com {}", "z".repeat(1000))}],
            "truncated": false,
        }))
        .unwrap();
        let out = answer(&[email()], 800, list.clone()).unwrap();
        let entry: &TableEntry = &out.tables[0];
        let comment = serde_json::to_value(entry).unwrap()["comment"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(comment.starts_with("ask [email] zzz"), "{comment}");
        assert!(comment.len() <= 100 && comment.ends_with("bytes shown]"), "{comment}");
        assert_eq!(serde_json::to_value(entry).unwrap()["name"], "people");
        // Nothing to change: the same answer.
        let plain: TableList = serde_json::from_value(serde_json::json!({"tables": [], "truncated": false})).unwrap();
        assert_eq!(answer(&[email()], 800, plain.clone()).unwrap(), plain);
    }

    #[test]
    fn shorten_cuts_on_char_boundaries_within_the_cap() {
        // (text, max_bytes, expected)
        let cases: Vec<(String, usize, String)> = vec![
            ("short".into(), 10, "short".into()),
            ("exactly10!".into(), 10, "exactly10!".into()),
            (
                "x".repeat(100),
                60,
                format!("{}… [error cut: 21 of 100 bytes shown]", "x".repeat(21)),
            ),
            // 'é' is two bytes: the cut never splits it.
            (
                "é".repeat(50),
                60,
                format!("{}… [error cut: 20 of 100 bytes shown]", "é".repeat(10)),
            ),
            // A cap shorter than the marker: the marker itself is cut.
            ("x".repeat(100), 5, "… [".into()),
        ];
        for (text, max, expected) in cases {
            let out = shorten(&text, max, "error");
            assert_eq!(out, expected, "{max}");
            assert!(out.len() <= max, "{} > {max}", out.len());
        }
    }

    #[test]
    fn errors_are_sanitized_and_capped_as_one_text() {
        let db = |message: &str, detail: Option<&str>, hint: Option<&str>| {
            Error::from(DbError {
                detail: detail.map(Into::into),
                hint: hint.map(Into::into),
                suggestions: vec!["mallory@example.com".into()],
                ..DbError::new(crate::error::ErrorCode::SqlState("22P02".into()), message.into())
            })
        };
        // (error, max_bytes, expected text)
        let cases = vec![
            (
                db(
                    "invalid input syntax for type integer: \"alice@example.com\"",
                    Some("key bob@example.com"),
                    Some("see carol@example.com"),
                ),
                1000,
                "invalid input syntax for type integer: \"[email]\" (SQLSTATE 22P02)\nDid you mean: [email]?\n\
                 DETAIL: key [email]\nHINT: see [email]"
                    .to_owned(),
            ),
            (
                Error::Prompted {
                    source: Box::new(Error::Connection(crate::error::ConnectionError::Connect(
                        "dave@example.com refused".into(),
                    ))),
                    prompts: "write to erin@example.com".into(),
                },
                1000,
                "cannot reach the database: [email] refused\n\nwrite to [email]".to_owned(),
            ),
            (
                Error::Input(crate::error::InputError::Params("x".repeat(10_000))),
                100,
                format!("{}… [error cut: 57 of 10000 bytes shown]", "x".repeat(57)),
            ),
            // Sanitized before the cut: no piece of the address survives.
            (
                Error::Input(crate::error::InputError::Params(format!(
                    "{} frank@example.com",
                    "y".repeat(120)
                ))),
                100,
                format!("{}… [error cut: 61 of 128 bytes shown]", "y".repeat(61)),
            ),
        ];
        for (err, max, expected) in cases {
            let kind = std::mem::discriminant(err.kind());
            let fenced = error(&[email()], max, err);
            assert_eq!(fenced.to_string(), expected);
            assert!(fenced.to_string().len() <= max);
            assert_eq!(std::mem::discriminant(fenced.kind()), kind, "the kind stays readable");
            let again = error(&[email()], 10, fenced);
            assert_eq!(again.to_string(), expected, "fencing twice changes nothing");
        }
    }
}
