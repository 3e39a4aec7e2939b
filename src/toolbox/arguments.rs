//! A curated tool's call: its arguments checked against the tool's
//! parameters ([`bind`]) and turned into the statement's parameter values,
//! one per parameter in the order the tool lists them. Every refusal names
//! the argument and says what it takes. Pure.

use serde_json::{Map, Value};

use super::{CuratedTool, ParamType, Parameter, Scalar};
use crate::backend::Dialect;

/// The parameter values for `tool`'s statement from a call's `arguments`:
/// every required argument given, none unknown, each of its type (and one
/// of its `enum`, when the tool lists values). An optional argument left
/// out is its default, or `NULL`.
pub fn bind(
    tool: &CuratedTool,
    arguments: Option<&Map<String, Value>>,
    dialect: Dialect,
) -> Result<Vec<Value>, String> {
    let empty = Map::new();
    let arguments = arguments.unwrap_or(&empty);
    if let Some(unknown) = arguments.keys().find(|k| tool.parameter(k).is_none()) {
        return Err(format!(
            "{}: unknown argument {unknown:?}; it takes {}",
            tool.name,
            match tool.parameters.len() {
                0 => "no arguments".to_owned(),
                _ => tool
                    .parameters
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        ));
    }
    tool.parameters
        .iter()
        .map(|parameter| {
            let given = arguments.get(&parameter.name).filter(|v| !v.is_null());
            match (given, &parameter.default) {
                (Some(value), _) => {
                    check(parameter, value).map_err(|e| format!("{}: argument {}: {e}", tool.name, parameter.name))?;
                    // One of an `enum`: the administrator's value is bound,
                    // never the caller's spelling of it.
                    let value = parameter
                        .allowed
                        .as_ref()
                        .and_then(|allowed| allowed.iter().find(|a| same(a, value)))
                        .unwrap_or(value);
                    Ok(bound(parameter.kind, value, dialect))
                }
                (None, Some(default)) => Ok(bound(parameter.kind, default, dialect)),
                (None, None) if parameter.required => Err(format!(
                    "{}: argument {} is required: {}",
                    tool.name,
                    parameter.name,
                    expected(parameter.kind)
                )),
                (None, None) => Ok(Value::Null),
            }
        })
        .collect()
}

/// Whether `value` is one `parameter` takes: its type, and one of its
/// `enum` when it has one. Also what the config's `default` and `enum`
/// values are checked with.
pub fn check(parameter: &Parameter, value: &Value) -> Result<(), String> {
    match parameter.kind {
        ParamType::Scalar(scalar) => scalar_check(scalar, value)?,
        ParamType::Array(scalar) => match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    scalar_check(scalar, item).map_err(|e| format!("item {i}: {e}"))?;
                }
            }
            _ => return Err(format!("{}, got {}", expected(parameter.kind), kind_of(value))),
        },
    }
    if let Some(allowed) = &parameter.allowed
        && !allowed.iter().any(|a| same(a, value))
    {
        let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!("must be one of {}", listed.join(", ")));
    }
    Ok(())
}

/// What an argument of `kind` is, for messages.
pub fn expected(kind: ParamType) -> String {
    match kind {
        ParamType::Scalar(scalar) => scalar_expected(scalar).to_owned(),
        ParamType::Array(scalar) => format!(
            "expected an array, each item {}",
            &scalar_expected(scalar)["expected ".len()..]
        ),
    }
}

fn scalar_expected(scalar: Scalar) -> &'static str {
    match scalar {
        Scalar::Integer => "expected a whole number, such as 42",
        Scalar::Number => "expected a number, such as 4.5",
        Scalar::String => "expected a string",
        Scalar::Boolean => "expected true or false",
        Scalar::Date => "expected a date written YYYY-MM-DD, such as \"2024-01-31\"",
        Scalar::Timestamp => {
            "expected a timestamp written YYYY-MM-DDTHH:MM:SS, optionally with fractions and an offset, such as \"2024-01-31T09:30:00Z\""
        }
    }
}

fn scalar_check(scalar: Scalar, value: &Value) -> Result<(), String> {
    // A whole number past what every engine stores as an integer.
    if let (Scalar::Integer, Value::Number(n)) = (scalar, value)
        && n.as_i64().is_none()
        && n.to_string()
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        return Err(format!(
            "expected a whole number from {} to {} (a 64-bit integer), got {n}",
            i64::MIN,
            i64::MAX
        ));
    }
    let fits = match (scalar, value) {
        // What every engine stores as an integer: a 64-bit signed one.
        (Scalar::Integer, Value::Number(n)) => n.as_i64().is_some(),
        (Scalar::Number, Value::Number(_)) => true,
        (Scalar::String, Value::String(_)) => true,
        (Scalar::Boolean, Value::Bool(_)) => true,
        (Scalar::Date, Value::String(s)) => is_date(s),
        (Scalar::Timestamp, Value::String(s)) => is_timestamp(s),
        _ => false,
    };
    match fits {
        true => Ok(()),
        // A string is not quoted back: it may be long, and it is the caller's own.
        false => Err(format!("{}, got {}", scalar_expected(scalar), kind_of(value))),
    }
}

fn kind_of(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => "a string that is not one".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Equal as written: numbers digit for digit (as `f64` two numbers a
/// database tells apart, `9007199254740993` and `9007199254740992`, would
/// be one), so `1` and `1.0` are two values too.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.to_string() == y.to_string(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        _ => a == b,
    }
}

/// `YYYY-MM-DD`, a day that exists.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = &text[range];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// A date, `T` or a space, `HH:MM` or `HH:MM:SS` with optional fractions,
/// then optionally `Z` or an offset `±HH:MM`.
fn is_timestamp(text: &str) -> bool {
    if text.len() < 16 || !text.is_char_boundary(10) || !is_date(&text[..10]) {
        return false;
    }
    let rest = &text[10..];
    let Some(time) = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' ')) else {
        return false;
    };
    let (time, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => (time, ""),
    };
    let offset_ok = match offset {
        "" | "Z" | "z" => true,
        o => {
            let b = o.as_bytes();
            b.len() == 6 && matches!(b[0], b'+' | b'-') && b[3] == b':' && two(&o[1..3], 23) && two(&o[4..6], 59)
        }
    };
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (time, None),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let clock_ok = match parts.as_slice() {
        [h, m] => fraction.is_none() && two(h, 23) && two(m, 59),
        [h, m, s] => two(h, 23) && two(m, 59) && two(s, 60),
        _ => false,
    };
    let fraction_ok = fraction.is_none_or(|f| !f.is_empty() && f.len() <= 9 && f.bytes().all(|c| c.is_ascii_digit()));
    offset_ok && clock_ok && fraction_ok
}

/// Two digits, at most `max`.
fn two(text: &str, max: u32) -> bool {
    text.len() == 2 && text.bytes().all(|c| c.is_ascii_digit()) && text.parse::<u32>().is_ok_and(|n| n <= max)
}

/// A checked value as the statement's parameter: scalars as they are, an
/// array as one value the dialect can read (see [`ParamType::Array`]).
fn bound(kind: ParamType, value: &Value, dialect: Dialect) -> Value {
    match (kind, value) {
        (ParamType::Array(_), Value::Array(items)) => Value::String(match dialect {
            Dialect::Postgres => postgres_array(items),
            Dialect::Sqlite | Dialect::DuckDb => Value::Array(items.clone()).to_string(),
        }),
        _ => value.clone(),
    }
}

/// A PostgreSQL array literal: `{1,2}`, `{"a","b \"c\""}`. Every element is
/// quoted (and `"` and `\` escaped), so no element can end the literal or
/// be read as `NULL`.
fn postgres_array(items: &[Value]) -> String {
    let elements: Vec<String> = items
        .iter()
        .map(|item| {
            let text = match item {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
        })
        .collect();
    format!("{{{}}}", elements.join(","))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parameter(kind: ParamType, required: bool, default: Option<Value>, allowed: Option<Vec<Value>>) -> Parameter {
        Parameter {
            name: "p".into(),
            description: String::new(),
            kind,
            required,
            default,
            allowed,
        }
    }

    fn tool(parameters: Vec<Parameter>) -> CuratedTool {
        CuratedTool {
            name: "t".into(),
            description: "d".into(),
            database: None,
            statement: "SELECT $1".into(),
            parameters,
            read_only: None,
        }
    }

    #[test]
    fn values_of_each_type() {
        use ParamType::{Array, Scalar as S};
        let cases: &[(ParamType, Value, bool)] = &[
            (S(Scalar::Integer), json!(42), true),
            (S(Scalar::Integer), json!(-7), true),
            (S(Scalar::Integer), json!(4.5), false),
            (S(Scalar::Integer), json!("42"), false),
            (S(Scalar::Integer), json!(u64::MAX), false),
            (S(Scalar::Number), json!(4.5), true),
            (S(Scalar::Number), json!(4), true),
            (S(Scalar::Number), json!("4.5"), false),
            (S(Scalar::String), json!("x'; DROP TABLE t; --"), true),
            (S(Scalar::String), json!(1), false),
            (S(Scalar::Boolean), json!(true), true),
            (S(Scalar::Boolean), json!("true"), false),
            (S(Scalar::Date), json!("2024-02-29"), true),
            (S(Scalar::Date), json!("2023-02-29"), false),
            (S(Scalar::Date), json!("2024-13-01"), false),
            (S(Scalar::Date), json!("2024-1-01"), false),
            (S(Scalar::Date), json!("2024-01-01'; --"), false),
            (S(Scalar::Timestamp), json!("2024-01-31T09:30:00Z"), true),
            (S(Scalar::Timestamp), json!("2024-01-31 09:30"), true),
            (S(Scalar::Timestamp), json!("2024-01-31T09:30:00.123456+02:00"), true),
            (S(Scalar::Timestamp), json!("2024-01-31T25:00:00"), false),
            (S(Scalar::Timestamp), json!("2024-01-31"), false),
            (S(Scalar::Timestamp), json!("2024-01-31T09:30:00+2"), false),
            (S(Scalar::Timestamp), json!("2024-01-31T09:30Z12:34"), false),
            (S(Scalar::Timestamp), json!("2024-01-31T09:30-05:00"), true),
            (Array(Scalar::Integer), json!([1, 2]), true),
            (Array(Scalar::Integer), json!([]), true),
            (Array(Scalar::Integer), json!([1, "2"]), false),
            (Array(Scalar::Date), json!(["2024-01-01"]), true),
            (Array(Scalar::String), json!("a"), false),
        ];
        for (kind, value, fits) in cases {
            let got = check(&parameter(*kind, true, None, None), value);
            assert_eq!(got.is_ok(), *fits, "{kind:?} {value}: {got:?}");
        }
    }

    #[test]
    fn binding_names_the_argument() {
        let t = tool(vec![
            Parameter {
                name: "id".into(),
                ..parameter(ParamType::Scalar(Scalar::Integer), true, None, None)
            },
            Parameter {
                name: "status".into(),
                ..parameter(
                    ParamType::Scalar(Scalar::String),
                    false,
                    Some(json!("open")),
                    Some(vec![json!("open"), json!("shipped")]),
                )
            },
            Parameter {
                name: "note".into(),
                ..parameter(ParamType::Scalar(Scalar::String), false, None, None)
            },
        ]);
        let args = |v: Value| v.as_object().cloned();
        // A number an f64 cannot tell from the allowed one is not it.
        let big = tool(vec![parameter(
            ParamType::Scalar(Scalar::Integer),
            true,
            None,
            Some(vec![json!(9007199254740993u64)]),
        )]);
        assert!(
            bind(
                &big,
                args(json!({"p": 9007199254740992u64})).as_ref(),
                Dialect::Postgres
            )
            .is_err()
        );
        assert_eq!(
            bind(
                &big,
                args(json!({"p": 9007199254740993u64})).as_ref(),
                Dialect::Postgres
            ),
            Ok(vec![json!(9007199254740993u64)])
        );
        let pg = Dialect::Postgres;
        assert_eq!(
            bind(&t, args(json!({"id": 3})).as_ref(), pg),
            Ok(vec![json!(3), json!("open"), Value::Null])
        );
        assert_eq!(
            bind(
                &t,
                args(json!({"id": 3, "status": "shipped", "note": "n"})).as_ref(),
                pg
            ),
            Ok(vec![json!(3), json!("shipped"), json!("n")])
        );
        let cases = [
            (json!({}), "t: argument id is required: expected a whole number"),
            (
                json!({"id": "3"}),
                "t: argument id: expected a whole number, such as 42, got a string",
            ),
            (
                json!({"id": 3, "status": "lost"}),
                "t: argument status: must be one of \"open\", \"shipped\"",
            ),
            (
                json!({"id": 3, "ID": 4}),
                "t: unknown argument \"ID\"; it takes id, status, note",
            ),
        ];
        for (given, message) in cases {
            let got = bind(&t, args(given.clone()).as_ref(), pg);
            assert!(matches!(&got, Err(e) if e.starts_with(message)), "{given}: {got:?}");
        }
        assert_eq!(bind(&t, None, pg).map_err(|e| e.contains("required")), Err(true));
    }

    #[test]
    fn arrays_are_one_value_the_dialect_reads() {
        let t = tool(vec![parameter(ParamType::Array(Scalar::String), true, None, None)]);
        let args = json!({"p": ["a", "b \"c\" \\", "NULL", "}{,"]});
        let got = bind(&t, args.as_object(), Dialect::Postgres).unwrap();
        assert_eq!(got, vec![json!(r#"{"a","b \"c\" \\","NULL","}{,"}"#)]);
        let got = bind(&t, args.as_object(), Dialect::Sqlite).unwrap();
        assert_eq!(got, vec![json!(r#"["a","b \"c\" \\","NULL","}{,"]"#)]);
        let t = tool(vec![parameter(ParamType::Array(Scalar::Integer), true, None, None)]);
        let got = bind(&t, json!({"p": [1, 2]}).as_object(), Dialect::Postgres).unwrap();
        assert_eq!(got, vec![json!(r#"{"1","2"}"#)]);
    }
}
