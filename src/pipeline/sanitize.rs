//! Sanitization: regex replacements applied to every text of a result that
//! can carry data: string values and object keys (recursing into JSON objects
//! and arrays), column names and types, the hint, and error texts (see
//! `crate::pipeline::fence`). Numbers, booleans and null are never touched. Pure.

use std::borrow::Cow;

use regex::Regex;
use serde_json::{Map, Value};

use crate::pipeline::shape::Shaped;

/// One `sanitization` entry: every match of `pattern` in a string value is
/// replaced by `replacement` (`$1`, `${name}` refer to capture groups).
#[derive(Debug, Clone)]
pub struct SanitizeRule {
    pub pattern: Regex,
    pub replacement: String,
    pub description: String,
}

impl PartialEq for SanitizeRule {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.as_str() == other.pattern.as_str()
            && self.replacement == other.replacement
            && self.description == other.description
    }
}

/// Apply every rule, in order, to every text of a query result: column names
/// and types, values (keys inside JSON values too), and the hint. A column
/// alias or a JSON key is as much data as a value
/// (`SELECT 1 AS "alice@example.com"`, `json_object_agg(email, 1)`); the
/// column names are each row's keys.
pub fn shaped(rules: &[SanitizeRule], shaped: &mut Shaped) {
    if rules.is_empty() {
        return;
    }
    for column in &mut shaped.columns {
        column.name = text(rules, &column.name).into_owned();
        column.type_name = text(rules, &column.type_name).into_owned();
    }
    // Two names may now read the same; suffix them as repeated names are.
    shaped.columns = crate::pipeline::shape::unique_names(std::mem::take(&mut shaped.columns));
    for row in &mut shaped.rows {
        for cell in row {
            value(rules, cell);
        }
    }
    if let Some(hint) = &mut shaped.hint {
        *hint = text(rules, hint).into_owned();
    }
}

/// Apply every rule, in order, to every key and string inside `value`.
pub fn value(rules: &[SanitizeRule], value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(replaced) = text(rules, s) {
                *s = replaced;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| self::value(rules, item)),
        Value::Object(map) => *map = object(rules, std::mem::take(map)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Apply every rule, in order, to one text.
pub fn text<'a>(rules: &[SanitizeRule], text: &'a str) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for rule in rules {
        if let Cow::Owned(replaced) = rule.pattern.replace_all(&out, rule.replacement.as_str()) {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// Sanitize keys and values, keeping the order. Keys that now read the same
/// get `_2`, `_3`... (like repeated column names), so no value is lost.
fn object(rules: &[SanitizeRule], map: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(map.len());
    for (key, mut item) in map {
        value(rules, &mut item);
        let key = match text(rules, &key) {
            Cow::Borrowed(_) => key,
            Cow::Owned(replaced) => replaced,
        };
        let key = if out.contains_key(&key) {
            (2..)
                .map(|n| format!("{key}_{n}"))
                .find(|k| !out.contains_key(k))
                .unwrap_or(key)
        } else {
            key
        };
        out.insert(key, item);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(pattern: &str, replacement: &str) -> SanitizeRule {
        SanitizeRule {
            pattern: Regex::new(pattern).unwrap(),
            replacement: replacement.into(),
            description: String::new(),
        }
    }

    fn phone() -> SanitizeRule {
        rule(r"(\+62)(\d{2})(\d+)(\d{3})", "${1}xxx${4}")
    }

    /// The reference table of masking rules pgmcp was designed against
    /// (phone numbers, ID numbers, emails, ...): (input, rules, expected).
    #[test]
    fn reference_table() {
        let ktp = rule(r"^(\d{4})\d{8}(\d{4})$", "${1}********${2}");
        let upper = rule("SECRET", "[redacted]");
        let lower = rule(r"\[redacted\]", "[gone]");
        let cases: Vec<(&str, Value, Vec<SanitizeRule>, Value)> = vec![
            ("phone number", json!("+62821233447"), vec![phone()], json!("+62xxx447")),
            ("KTP", json!("3201234567890001"), vec![ktp], json!("3201********0001")),
            ("no match", json!("hello world"), vec![phone()], json!("hello world")),
            (
                "rules apply in order",
                json!("a SECRET b"),
                vec![upper, lower],
                json!("a [gone] b"),
            ),
            (
                "jsonb field",
                json!({"phone": "+62821233447"}),
                vec![phone()],
                json!({"phone": "+62xxx447"}),
            ),
            (
                "nested jsonb",
                json!({"contact": {"phone": "+62821233447"}}),
                vec![phone()],
                json!({"contact": {"phone": "+62xxx447"}}),
            ),
            (
                "array",
                json!(["+62821233447", "+62899887766"]),
                vec![phone()],
                json!(["+62xxx447", "+62xxx766"]),
            ),
            ("null", Value::Null, vec![phone()], Value::Null),
            ("number", json!(12345), vec![rule("1", "x")], json!(12345)),
            (
                "big number",
                serde_json::from_str("9007199254740993").unwrap(),
                vec![rule("9", "x")],
                serde_json::from_str("9007199254740993").unwrap(),
            ),
            ("boolean", json!(true), vec![rule("true", "x")], json!(true)),
            ("no rules", json!("+62821233447"), vec![], json!("+62821233447")),
        ];
        for (name, mut input, rules, expected) in cases {
            value(&rules, &mut input);
            assert_eq!(input, expected, "{name}");
        }
    }

    fn email() -> SanitizeRule {
        rule(r"[\w.+-]+@[\w-]+\.[\w.]+", "[email]")
    }

    /// Keys are data too: JSON object keys, at any depth, and row keys.
    #[test]
    fn keys_are_sanitized_and_kept_distinct() {
        let cases: Vec<(&str, Value, Value)> = vec![
            (
                "json_object_agg(email, 1)",
                json!({"alice@example.com": 1, "bob@example.com": 2, "n": 3}),
                json!({"[email]": 1, "[email]_2": 2, "n": 3}),
            ),
            (
                "nested key and value",
                json!([{"x": {"carol@example.com": "dave@example.com"}}]),
                json!([{"x": {"[email]": "[email]"}}]),
            ),
            (
                "a suffixed key that exists already",
                json!({"[email]_2": 0, "a@b.cc": 1, "c@d.ee": 2}),
                json!({"[email]_2": 0, "[email]": 1, "[email]_3": 2}),
            ),
        ];
        for (name, mut input, expected) in cases {
            value(&[email()], &mut input);
            assert_eq!(input, expected, "{name}");
            assert_eq!(
                serde_json::to_string(&input).unwrap(),
                serde_json::to_string(&expected).unwrap(),
                "{name}: order is kept"
            );
        }
    }

    /// Column names, types, values and the hint of a result are
    /// sanitized; names that now read the same stay distinct.
    #[test]
    fn whole_result() {
        use crate::backend::{Column, Rows};
        let column = |name: &str| Column {
            name: name.into(),
            type_name: "text".into(),
        };
        let mut out = crate::pipeline::shape::shaped(
            Rows {
                columns: vec![column("alice@example.com"), column("bob@example.com"), column("id")],
                rows: vec![vec![json!("x"), json!({"eve@example.com": true}), json!(1)]],
                rows_affected: None,
                more: true,
                spent: false,
                prelude: Vec::new(),
            },
            1,
        );
        out.hint = Some("ask frank@example.com".into());
        shaped(&[email()], &mut out);
        let names: Vec<&str> = out.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["[email]", "[email]_2", "id"]);
        assert_eq!(out.rows[0], [json!("x"), json!({"[email]": true}), json!(1)]);
        assert_eq!(out.hint.as_deref(), Some("ask [email]"));
    }

    #[test]
    fn only_string_values_change() {
        let mut out = crate::pipeline::shape::shaped(
            crate::backend::Rows {
                rows: vec![vec![
                    json!(1),
                    json!("+62821233447"),
                    json!(true),
                    json!({"p": ["+62899887766"]}),
                    Value::Null,
                ]],
                ..Default::default()
            },
            1,
        );
        shaped(&[phone()], &mut out);
        assert_eq!(
            out.rows[0],
            [
                json!(1),
                json!("+62xxx447"),
                json!(true),
                json!({"p": ["+62xxx766"]}),
                Value::Null
            ]
        );
    }

    /// Rules are shared by concurrent calls; each call sanitizes its own rows.
    #[test]
    fn concurrent_use() {
        let rules = vec![phone()];
        std::thread::scope(|s| {
            for i in 0..10 {
                let rules = &rules;
                s.spawn(move || {
                    for _ in 0..100 {
                        let mut v = json!({"i": i, "phone": "+62821233447"});
                        value(rules, &mut v);
                        assert_eq!(v, json!({"i": i, "phone": "+62xxx447"}));
                    }
                });
            }
        });
    }
}
