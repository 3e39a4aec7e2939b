//! PostgreSQL's text output → JSON, for one value. Pure.
//!
//! The rule: a value keeps PostgreSQL's own text form unless JSON has a native
//! form for it. Integers and floats become JSON numbers with every digit kept
//! (serde_json's `arbitrary_precision` holds the server's digits verbatim);
//! `NaN`/`Infinity` stay strings. `numeric` is a string with every digit.
//! Booleans become booleans. `json`/`jsonb` are embedded as JSON. `timestamptz`
//! is RFC 3339 in UTC, `timestamp` RFC 3339 without an offset. Arrays of any
//! type and dimension become nested JSON arrays whose elements follow these same
//! rules; an array whose lower bounds are not all 1 becomes
//! `{"lower_bounds": [...], "elements": [...]}` so they are not lost. Everything
//! else is the exact text PostgreSQL printed. Sessions pin the settings that
//! shape that text (`DateStyle`, `IntervalStyle`, `TimeZone`,
//! `extra_float_digits`, `bytea_output`, `lc_monetary`), so it never depends on
//! the server's configuration.

use serde_json::{Map, Number, Value};

use crate::json_depth::nesting_depth;

/// Built-in type OIDs the rule treats specially (from `pg_type.dat`).
// `DATE` and `NUMERIC` are read as text, so nothing names them.
#[allow(dead_code)]
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

/// How a column's text is read: its scalar kind, or an array of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    Bool,
    Integer,
    Float,
    Json,
    Timestamp,
    TimestampTz,
    /// Everything else, `numeric` and `date` included: the text as printed.
    Text,
    /// An array; `delimiter` separates elements (`,` for all but `box`).
    Array {
        element: Box<Shape>,
        delimiter: u8,
    },
}

impl Shape {
    /// The shape of a scalar built-in type (domains already resolved to their base).
    pub fn of_scalar(type_oid: u32) -> Shape {
        match type_oid {
            oid::BOOL => Shape::Bool,
            oid::INT2 | oid::INT4 | oid::INT8 | oid::OID => Shape::Integer,
            oid::FLOAT4 | oid::FLOAT8 => Shape::Float,
            oid::JSON | oid::JSONB => Shape::Json,
            oid::TIMESTAMP => Shape::Timestamp,
            oid::TIMESTAMPTZ => Shape::TimestampTz,
            _ => Shape::Text,
        }
    }
}

/// Convert one non-NULL value from its text form. Never fails: text that does
/// not fit the expected shape is returned as a JSON string, unchanged.
pub fn from_text(shape: &Shape, text: &str) -> Value {
    match shape {
        Shape::Bool => match text {
            "t" => Value::Bool(true),
            "f" => Value::Bool(false),
            _ => Value::String(text.to_owned()),
        },
        // Every integer type PostgreSQL has fits an i64: read it as one,
        // which is several times quicker than reading JSON number text.
        Shape::Integer => text.parse::<i64>().map_or_else(|_| number(text), Value::from),
        Shape::Float => match text {
            "NaN" | "Infinity" | "-Infinity" => Value::String(text.to_owned()),
            _ => number(text),
        },
        Shape::Json => json(text).unwrap_or_else(|| Value::String(text.to_owned())),
        Shape::Timestamp => Value::String(rfc3339(text, false)),
        Shape::TimestampTz => Value::String(rfc3339(text, true)),
        Shape::Text => Value::String(text.to_owned()),
        Shape::Array { element, delimiter } => {
            array(element, *delimiter, text).unwrap_or_else(|| Value::String(text.to_owned()))
        }
    }
}

/// Deepest JSON value embedded as JSON; deeper ones come back as their text,
/// because reading, sanitizing, encoding and dropping a value all recurse.
pub const MAX_JSON_DEPTH: usize = 600;

/// Parse JSON text of bounded depth (measured first, without recursing).
fn json(text: &str) -> Option<Value> {
    if nesting_depth(text) > MAX_JSON_DEPTH {
        return None;
    }
    crate::json_depth::read_measured(text).ok()
}

fn number(text: &str) -> Value {
    text.parse::<Number>()
        .map_or_else(|_| Value::String(text.to_owned()), Value::Number)
}

/// `2024-01-15 10:30:00.5+00` → `2024-01-15T10:30:00.5Z` (ISO DateStyle, UTC
/// session). `infinity`, BC dates and years past 9999, which RFC 3339 cannot
/// express, stay as PostgreSQL wrote them.
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
    if !with_zone {
        out.push_str(rest);
        return out;
    }
    // PostgreSQL prints the offset as +HH, +HH:MM or +HH:MM:SS; sessions pin UTC
    // (+00 → Z), but a statement may set its own TimeZone.
    match rest.rfind(['+', '-']) {
        Some(at) => {
            let (time, offset) = rest.split_at(at);
            out.push_str(time);
            match offset {
                "+00" | "-00" => out.push('Z'),
                _ if offset.len() == 3 => {
                    out.push_str(offset);
                    out.push_str(":00");
                }
                _ => out.push_str(offset),
            }
        }
        None => out.push_str(rest),
    }
    out
}

/// Parse PostgreSQL's array output: `{1,2}`, `{{1,NULL},{"a b",c}}`,
/// `[0:1]={7,8}`. `None` when the text is not a well-formed array.
fn array(element: &Shape, delimiter: u8, text: &str) -> Option<Value> {
    let (bounds, body) = match text.strip_prefix('[') {
        Some(_) => {
            let (dims, body) = text.split_once('=')?;
            let lower: Vec<i64> = dims
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split("][")
                .map(|d| d.split_once(':').and_then(|(lo, _)| lo.parse().ok()))
                .collect::<Option<_>>()?;
            (Some(lower), body)
        }
        None => (None, text),
    };
    let mut parser = ArrayParser {
        bytes: body.as_bytes(),
        pos: 0,
        element,
        delimiter,
    };
    let value = parser.list()?;
    if parser.pos != parser.bytes.len() {
        return None;
    }
    Some(match bounds {
        Some(lower) if lower.iter().any(|&b| b != 1) => {
            let mut object = Map::new();
            object.insert(
                "lower_bounds".to_owned(),
                Value::Array(lower.into_iter().map(Value::from).collect()),
            );
            object.insert("elements".to_owned(), value);
            Value::Object(object)
        }
        _ => value,
    })
}

struct ArrayParser<'a> {
    bytes: &'a [u8],
    pos: usize,
    element: &'a Shape,
    delimiter: u8,
}

impl ArrayParser<'_> {
    /// `{ item (delim item)* }` or `{}`.
    fn list(&mut self) -> Option<Value> {
        self.expect(b'{')?;
        let mut items = Vec::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Some(Value::Array(items));
        }
        loop {
            items.push(match self.peek()? {
                b'{' => self.list()?,
                b'"' => {
                    let text = self.quoted()?;
                    from_text(self.element, &text)
                }
                _ => {
                    let element = self.element;
                    let text = self.bare()?;
                    if text == "NULL" {
                        Value::Null
                    } else {
                        from_text(element, text)
                    }
                }
            });
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    return Some(Value::Array(items));
                }
                b if b == self.delimiter => self.pos += 1,
                _ => return None,
            }
        }
    }

    /// A double-quoted element; backslash escapes the next character.
    fn quoted(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => {
                    out.push(*self.bytes.get(self.pos + 1)?);
                    self.pos += 2;
                }
                b => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
    }

    /// An unquoted element: up to the delimiter or a closing brace.
    fn bare(&mut self) -> Option<&str> {
        let start = self.pos;
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == self.delimiter || b == b'}' {
                break;
            }
            self.pos += 1;
        }
        std::str::from_utf8(&self.bytes[start..self.pos]).ok()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.pos += 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(element: Shape) -> Shape {
        Shape::Array {
            element: Box::new(element),
            delimiter: b',',
        }
    }

    fn deep_json(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    /// (shape, PostgreSQL text, expected JSON text)
    #[test]
    fn conversions() {
        let deep300 = deep_json(300);
        let deep700 = deep_json(700);
        let deep700_text = format!("{deep700:?}");
        let cases: Vec<(Shape, &str, &str)> = vec![
            (Shape::Json, &deep300, &deep300),
            (Shape::Json, &deep700, &deep700_text),
            (Shape::Bool, "t", "true"),
            (Shape::Bool, "f", "false"),
            (Shape::Integer, "-32768", "-32768"),
            (Shape::Integer, "9223372036854775807", "9223372036854775807"),
            (Shape::Integer, "-9223372036854775808", "-9223372036854775808"),
            (Shape::Integer, "0", "0"),
            (Shape::Integer, "4294967295", "4294967295"),
            (Shape::Integer, "9007199254740993", "9007199254740993"),
            (Shape::Float, "1.5", "1.5"),
            (Shape::Float, "1e+300", "1e+300"),
            (Shape::Float, "-0", "-0"),
            (Shape::Float, "NaN", "\"NaN\""),
            (Shape::Float, "-Infinity", "\"-Infinity\""),
            (
                Shape::Text,
                "12345678901234567890.123456789",
                "\"12345678901234567890.123456789\"",
            ),
            (
                Shape::Json,
                r#"{"big": 9007199254740993, "a": [1, null]}"#,
                r#"{"big":9007199254740993,"a":[1,null]}"#,
            ),
            (Shape::Json, r#"{"z": 1e400, "a": 2}"#, r#"{"z":1e+400,"a":2}"#),
            (Shape::TimestampTz, "2024-01-15 05:00:00+00", "\"2024-01-15T05:00:00Z\""),
            (
                Shape::TimestampTz,
                "2024-01-15 05:00:00.123456+00",
                "\"2024-01-15T05:00:00.123456Z\"",
            ),
            (Shape::TimestampTz, "infinity", "\"infinity\""),
            (
                Shape::TimestampTz,
                "2024-01-15 00:00:00-05",
                "\"2024-01-15T00:00:00-05:00\"",
            ),
            (
                Shape::TimestampTz,
                "2024-01-15 00:00:00+05:30",
                "\"2024-01-15T00:00:00+05:30\"",
            ),
            (Shape::Timestamp, "2024-01-15 10:30:00", "\"2024-01-15T10:30:00\""),
            (Shape::Timestamp, "0044-03-15 00:00:00 BC", "\"0044-03-15 00:00:00 BC\""),
            (Shape::Timestamp, "10000-01-01 00:00:00", "\"10000-01-01 00:00:00\""),
            (Shape::Text, "héllo 🎉", "\"héllo 🎉\""),
            (Shape::Text, "\\xdeadbeef", "\"\\\\xdeadbeef\""),
            (arr(Shape::Integer), "{}", "[]"),
            (arr(Shape::Integer), "{1,2,NULL}", "[1,2,null]"),
            (arr(Shape::Integer), "{{1,2},{3,4}}", "[[1,2],[3,4]]"),
            (arr(Shape::Integer), "{{{1},{2}},{{3},{4}}}", "[[[1],[2]],[[3],[4]]]"),
            (
                arr(Shape::Integer),
                "[0:1]={7,8}",
                r#"{"lower_bounds":[0],"elements":[7,8]}"#,
            ),
            (
                arr(Shape::Integer),
                "[1:2][3:4]={{1,2},{3,4}}",
                r#"{"lower_bounds":[1,3],"elements":[[1,2],[3,4]]}"#,
            ),
            (
                arr(Shape::Text),
                r#"{a,"b c","NULL",NULL,"q\"uote","back\\slash",""}"#,
                r#"["a","b c","NULL",null,"q\"uote","back\\slash",""]"#,
            ),
            (arr(Shape::Bool), "{t,f}", "[true,false]"),
            (arr(Shape::Float), "{1.5,NaN,-Infinity}", r#"[1.5,"NaN","-Infinity"]"#),
            (arr(Shape::Json), r#"{"{\"a\": 1}","[1, 2]"}"#, r#"[{"a":1},[1,2]]"#),
            (
                arr(Shape::TimestampTz),
                r#"{"2024-01-15 05:00:00+00",infinity}"#,
                r#"["2024-01-15T05:00:00Z","infinity"]"#,
            ),
            (
                Shape::Array {
                    element: Box::new(Shape::Text),
                    delimiter: b';',
                },
                "{(1,1),(0,0);(3,3),(2,2)}",
                r#"["(1,1),(0,0)","(3,3),(2,2)"]"#,
            ),
            (arr(Shape::Integer), "{1,2", "\"{1,2\""),
        ];
        for (shape, text, expected) in cases {
            let got = serde_json::to_string(&from_text(&shape, text)).unwrap();
            assert_eq!(got, expected, "{shape:?}, text {text:?}");
        }
    }
}
