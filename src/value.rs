//! PostgreSQL's text output → JSON, for one value. Pure.
//!
//! The rule: a value keeps PostgreSQL's own text form unless JSON has a native
//! form for it. Integers and floats become JSON numbers with every digit kept
//! (serde_json's `arbitrary_precision` holds the server's digits verbatim),
//! booleans become booleans, `json`/`jsonb` are embedded as JSON, timestamps
//! become RFC 3339, and everything else is the exact text PostgreSQL printed.
//! Sessions pin `DateStyle=ISO`, `IntervalStyle=postgres`, `TimeZone=UTC`,
//! `extra_float_digits=3` and `bytea_output=hex`, so that text never depends on
//! server settings.

use serde_json::{Number, Value};

/// Built-in type OIDs the rule treats specially (from `pg_type.dat`).
pub mod oid {
    pub const BOOL: u32 = 16;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const OID: u32 = 26;
    pub const JSON: u32 = 114;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const DATE: u32 = 1082;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const NUMERIC: u32 = 1700;
    pub const JSONB: u32 = 3802;
}

/// Convert one non-NULL value from its text form. Never fails: text that does
/// not fit the expected shape is returned as a JSON string, unchanged.
pub fn from_pg_text(type_oid: u32, text: &str) -> Value {
    match type_oid {
        oid::BOOL => match text {
            "t" => Value::Bool(true),
            "f" => Value::Bool(false),
            _ => Value::String(text.to_owned()),
        },
        oid::INT2 | oid::INT4 | oid::INT8 | oid::OID => number(text),
        oid::FLOAT4 | oid::FLOAT8 => match text {
            "NaN" | "Infinity" | "-Infinity" => Value::String(text.to_owned()),
            _ => number(text),
        },
        oid::JSON | oid::JSONB => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
        oid::TIMESTAMP => Value::String(rfc3339(text, false)),
        oid::TIMESTAMPTZ => Value::String(rfc3339(text, true)),
        _ => Value::String(text.to_owned()),
    }
}

fn number(text: &str) -> Value {
    text.parse::<Number>()
        .map_or_else(|_| Value::String(text.to_owned()), Value::Number)
}

/// `2024-01-15 10:30:00.5+00` → `2024-01-15T10:30:00.5Z` (ISO DateStyle, UTC
/// session). `infinity`, `-infinity` and BC dates stay as PostgreSQL wrote them.
fn rfc3339(text: &str, with_zone: bool) -> String {
    let bytes = text.as_bytes();
    let shaped = bytes.len() >= 19 && bytes[4] == b'-' && bytes[10] == b' ' && !text.ends_with(" BC");
    if !shaped {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 1);
    out.push_str(&text[..10]);
    out.push('T');
    let rest = &text[11..];
    if with_zone {
        match rest.strip_suffix("+00") {
            Some(time) => {
                out.push_str(time);
                out.push('Z');
            }
            None => out.push_str(rest),
        }
    } else {
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (type, PostgreSQL text, expected JSON text)
    const CASES: &[(u32, &str, &str)] = &[
        (oid::BOOL, "t", "true"),
        (oid::BOOL, "f", "false"),
        (oid::INT2, "-32768", "-32768"),
        (oid::INT4, "2147483647", "2147483647"),
        (oid::INT8, "9223372036854775807", "9223372036854775807"),
        (oid::INT8, "9007199254740993", "9007199254740993"),
        (oid::OID, "4294967295", "4294967295"),
        (oid::FLOAT8, "1.5", "1.5"),
        (oid::FLOAT8, "1e+300", "1e+300"),
        (oid::FLOAT8, "0.1", "0.1"),
        (oid::FLOAT4, "NaN", "\"NaN\""),
        (oid::FLOAT8, "-Infinity", "\"-Infinity\""),
        (
            oid::NUMERIC,
            "12345678901234567890.123456789",
            "\"12345678901234567890.123456789\"",
        ),
        (oid::NUMERIC, "NaN", "\"NaN\""),
        (
            oid::JSONB,
            r#"{"big": 9007199254740993, "a": [1, null]}"#,
            r#"{"big":9007199254740993,"a":[1,null]}"#,
        ),
        (oid::JSON, r#"{"z": 1e400, "a": 2}"#, r#"{"z":1e+400,"a":2}"#),
        (oid::TIMESTAMPTZ, "2024-01-15 05:00:00+00", "\"2024-01-15T05:00:00Z\""),
        (
            oid::TIMESTAMPTZ,
            "2024-01-15 05:00:00.123456+00",
            "\"2024-01-15T05:00:00.123456Z\"",
        ),
        (oid::TIMESTAMP, "2024-01-15 10:30:00", "\"2024-01-15T10:30:00\""),
        (oid::TIMESTAMP, "infinity", "\"infinity\""),
        (oid::TIMESTAMP, "0044-03-15 00:00:00 BC", "\"0044-03-15 00:00:00 BC\""),
        (oid::DATE, "2024-01-15", "\"2024-01-15\""),
        (25, "héllo 🎉", "\"héllo 🎉\""),
        (17, "\\xdeadbeef", "\"\\\\xdeadbeef\""),
    ];

    #[test]
    fn conversions() {
        for (ty, text, expected) in CASES {
            let got = serde_json::to_string(&from_pg_text(*ty, text)).unwrap();
            assert_eq!(got, *expected, "type {ty}, text {text:?}");
        }
    }
}
