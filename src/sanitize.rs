//! Sanitization: regex replacements applied to every string value of a result,
//! recursing into JSON objects and arrays. Numbers, booleans and null are never
//! touched. Pure.

use regex::Regex;
use serde_json::{Map, Value};

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

/// Apply every rule, in order, to every string in every row.
pub fn rows(rules: &[SanitizeRule], rows: &mut [Map<String, Value>]) {
    if rules.is_empty() {
        return;
    }
    for row in rows {
        for value in row.values_mut() {
            self::value(rules, value);
        }
    }
}

/// Apply every rule, in order, to every string inside `value`.
pub fn value(rules: &[SanitizeRule], value: &mut Value) {
    match value {
        Value::String(s) => {
            for rule in rules {
                if let std::borrow::Cow::Owned(replaced) = rule.pattern.replace_all(s, rule.replacement.as_str()) {
                    *s = replaced;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| self::value(rules, item)),
        Value::Object(map) => map.values_mut().for_each(|item| self::value(rules, item)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
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

    /// The seed's sanitization table (6.2): (input, rules, expected).
    #[test]
    fn seed_table() {
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

    #[test]
    fn only_string_fields_of_rows_change() {
        let mut data: Vec<Map<String, Value>> = vec![
            serde_json::from_value(
                json!({"id": 1, "phone": "+62821233447", "ok": true, "meta": {"p": ["+62899887766"]}, "n": null}),
            )
            .unwrap(),
        ];
        rows(&[phone()], &mut data);
        assert_eq!(
            Value::Object(data[0].clone()),
            json!({"id": 1, "phone": "+62xxx447", "ok": true, "meta": {"p": ["+62xxx766"]}, "n": null})
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
