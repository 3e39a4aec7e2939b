//! A mistake in JSON a person wrote, in their words: which field, what it
//! should be ("a whole number", "true or false", "text", "a list of text")
//! and what was found there, or where the text stops being JSON (line and
//! column in their file). Pure.
//!
//! serde's own messages speak of Rust (`expected i64`, `struct RawQuery`)
//! and of a position in the text being read, which for the wizard is JSON
//! the person never wrote. So when a file does not read, it is read again
//! from its parsed form by [`read`], through a deserializer whose error keeps
//! the mistake's parts apart ([`Fault`]), and [`Misread`] puts them in words.

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::Value;

/// What a field holds, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// A whole number within the field's type's range.
    Whole {
        min: i128,
        max: i128,
    },
    /// Any number (a fraction allowed).
    Number,
    TrueOrFalse,
    Text,
    /// A list, with what each item is when known.
    List(Option<Box<Expected>>),
    Object,
    /// A kind serde names that has no words here, as serde names it.
    Other(String),
}

impl Expected {
    /// A whole number from `min` to `max`.
    pub fn whole(min: i64, max: i64) -> Expected {
        Expected::Whole {
            min: min.into(),
            max: max.into(),
        }
    }

    /// The kind behind what serde's visitors say they expect: `i64`, `u16`,
    /// `a boolean`, `a string`, `a sequence`, `struct RawQuery`.
    pub fn from_serde(expecting: &str) -> Expected {
        let range = |min: i128, max: i128| Expected::Whole { min, max };
        match expecting {
            "a boolean" => Expected::TrueOrFalse,
            "a string" | "a borrowed string" | "a character" => Expected::Text,
            "a sequence" => Expected::List(None),
            "a map" => Expected::Object,
            "f32" | "f64" => Expected::Number,
            "i8" => range(i8::MIN.into(), i8::MAX.into()),
            "i16" => range(i16::MIN.into(), i16::MAX.into()),
            "i32" => range(i32::MIN.into(), i32::MAX.into()),
            "i64" | "isize" => range(i64::MIN.into(), i64::MAX.into()),
            "u8" => range(0, u8::MAX.into()),
            "u16" => range(0, u16::MAX.into()),
            "u32" => range(0, u32::MAX.into()),
            "u64" | "usize" => range(0, u64::MAX.into()),
            other if other.starts_with("struct ") => Expected::Object,
            other => Expected::Other(other.to_owned()),
        }
    }

    /// The same kind, many of them: what a list of them holds.
    fn plural(&self) -> String {
        match self {
            Expected::Whole { .. } => "whole numbers".into(),
            Expected::Number => "numbers".into(),
            Expected::TrueOrFalse => "true or false values".into(),
            Expected::Text => "text".into(),
            Expected::List(_) => "lists".into(),
            Expected::Object => "objects { ... }".into(),
            Expected::Other(kind) => kind.clone(),
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The range of a 64-bit number is no one's concern: only a
            // narrower one (a port's) or a lower bound of 0 is worth saying.
            Expected::Whole { min, max } if *min == i128::from(i64::MIN) && *max >= i128::from(i64::MAX) => {
                f.write_str("a whole number")
            }
            Expected::Whole { min: 0, max } if *max >= i128::from(i64::MAX) => f.write_str("a whole number, 0 or more"),
            Expected::Whole { min, max } => write!(f, "a whole number from {min} to {max}"),
            Expected::Number => f.write_str("a number"),
            Expected::TrueOrFalse => f.write_str("true or false"),
            Expected::Text => f.write_str("text"),
            Expected::List(None) => f.write_str("a list [ ... ]"),
            Expected::List(Some(item)) => write!(f, "a list of {}", item.plural()),
            Expected::Object => f.write_str("an object { ... }"),
            Expected::Other(kind) => f.write_str(kind),
        }
    }
}

/// A JSON value as a person would name it in a sentence: `the text "abc"`,
/// `-5`, `true`, `a list`. Text is shown as [`quoted`] shows it: long text
/// cut, and never what may be a password.
pub fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("the text {}", quoted(s)),
        Value::Array(items) if items.is_empty() => "an empty list".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// What [`quoted`] shows instead of a text that may hold a password.
pub const NOT_SHOWN: &str = "<not shown: it may hold a password>";

/// Words that say a text may hold a secret (`password=`, `?key=`,
/// `motherduck_token=`), in lower case.
const SECRET_WORDS: &[&str] = &["password", "passwd", "pwd", "secret", "token", "key="];

/// A text a person wrote in a setting, in double quotes, as a message may
/// show it: what is wrong with a setting is said in a tool answer, the
/// server's instructions and stderr, and a person pastes a connection
/// string into the wrong field. So a text with an `@` or options after a
/// `?` is shown
/// [`redacted`](crate::backend::location::redacted) (what is before its
/// last `@`, and after a `?`, hidden), and one that still names a password,
/// key or token is not shown at all ([`NOT_SHOWN`]). Long text is cut at
/// 60 characters.
pub fn quoted(text: &str) -> String {
    // A `?` alone is no sign of a URL (a regular expression, a question):
    // only one with options after it is.
    let options = text.split_once('?').is_some_and(|(_, after)| after.contains('='));
    let shown = if text.contains('@') || options {
        crate::backend::location::redacted(text)
    } else {
        text.into()
    };
    let lower = shown.to_lowercase();
    if SECRET_WORDS.iter().any(|word| lower.contains(word)) {
        return NOT_SHOWN.to_owned();
    }
    let cut: String = shown.chars().take(60).collect();
    let more = if cut.len() < shown.len() { "…" } else { "" };
    format!("{}{more}", Value::String(cut))
}

/// Where text stops being JSON, and why, in words: `line 3, column 18: a
/// comma before } or ] (JSON allows none there)`. Lines and columns count
/// from 1, as editors show them.
pub fn syntax(e: &serde_json::Error) -> String {
    // serde_json's message is its error code's text, then the position.
    let text = e.to_string();
    let code = text
        .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
        .unwrap_or(&text);
    let words = match code {
        "trailing comma" => "a comma before } or ] (JSON allows none there)".to_owned(),
        "key must be a string" => "a field name must be in double quotes".to_owned(),
        "expected `,` or `}`" => "expected , or } here (a comma missing between two fields?)".to_owned(),
        "expected `,` or `]`" => "expected , or ] here (a comma missing between two items?)".to_owned(),
        "expected `:`" => "expected : after the field name".to_owned(),
        "expected value" => {
            "expected a value here: text in double quotes, a number, true, false, null, a list [ ... ] or an object { ... }"
                .to_owned()
        }
        "trailing characters" => "more text after the end of the JSON".to_owned(),
        "recursion limit exceeded" => "nested too deeply".to_owned(),
        code if code.starts_with("EOF while parsing") => {
            "the text ends before the JSON does (a } or ] missing?)".to_owned()
        }
        code => code.to_owned(),
    };
    format!("line {}, column {}: not valid JSON: {words}", e.line(), e.column())
}

/// A value that does not fit its field: where (`query.max_rows`, empty for
/// the document itself) and what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misread {
    pub path: String,
    pub message: String,
}

/// Read `doc` as a `T`, or say in words which field does not fit and how.
pub fn read<T: DeserializeOwned>(doc: &Value) -> Result<T, Misread> {
    let e = match serde_path_to_error::deserialize(Node(doc)) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let mut path = dotted(e.path());
    let at = |path: &str| value_at(doc, path);
    let message = match e.into_inner() {
        Fault::Kind { expected } => {
            let mut expected = Expected::from_serde(&expected);
            if expected == Expected::List(None) {
                expected = Expected::List(item_of::<T>(doc, &path).map(Box::new));
            }
            match at(&path) {
                Some(value) => format!("expected {expected}, found {}", found(value)),
                None => format!("expected {expected}"),
            }
        }
        Fault::Unknown { field, fields } => {
            // The closest names, all of them when several are as close.
            let mut close = crate::suggest::closest(&field, fields.iter().copied(), 3);
            let far = |name: &str| crate::suggest::distance(&field.to_lowercase(), &name.to_lowercase());
            let best = close.first().map(|name| far(name));
            close.retain(|name| Some(far(name)) == best);
            let within = match path.rsplit_once('.') {
                Some((section, _)) => format!("{section}'s fields are"),
                None if path.contains('[') => "its fields are".to_owned(),
                None => "the file's fields are".to_owned(),
            };
            match close.as_slice() {
                [] => format!("unknown field: {within} {}", fields.join(", ")),
                names => format!("unknown field: did you mean {}?", names.join(" or ")),
            }
        }
        Fault::Missing(field) => {
            path = join(&path, field);
            "required, and missing".to_owned()
        }
        Fault::Twice(field) => {
            if !path.ends_with(field) {
                path = join(&path, field);
            }
            "given more than once: keep one".to_owned()
        }
        Fault::Other(message) => message,
    };
    Err(Misread { path, message })
}

/// What each item of the list at `path` must be: `doc` read again with that
/// list holding one `null`, which each kind of item refuses, saying what it
/// expects.
fn item_of<T: DeserializeOwned>(doc: &Value, path: &str) -> Option<Expected> {
    let mut probe = doc.clone();
    *value_at_mut(&mut probe, path)? = Value::Array(vec![Value::Null]);
    let e = serde_path_to_error::deserialize::<_, T>(Node(&probe)).err()?;
    match (dotted(e.path()) == format!("{path}[0]"), e.into_inner()) {
        (true, Fault::Kind { expected }) => Some(Expected::from_serde(&expected)),
        _ => None,
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// serde_path_to_error's path as config errors spell it: `query.max_rows`,
/// `hooks.before_query[0].command`, empty for the document itself.
fn dotted(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push('?');
            }
        }
    }
    out
}

/// The steps of a [`dotted`] path: keys and list indexes.
fn steps(path: &str) -> impl Iterator<Item = Result<&str, usize>> {
    path.split('.').filter(|part| !part.is_empty()).flat_map(|part| {
        let (key, indexes) = part.split_once('[').map_or((part, ""), |(k, rest)| (k, rest));
        let key = (!key.is_empty()).then_some(Ok(key));
        let indexes = indexes
            .split('[')
            .filter_map(|i| i.trim_end_matches(']').parse::<usize>().ok())
            .map(Err);
        key.into_iter().chain(indexes)
    })
}

fn value_at<'v>(doc: &'v Value, path: &str) -> Option<&'v Value> {
    steps(path).try_fold(doc, |v, step| match step {
        Ok(key) => v.get(key),
        Err(index) => v.get(index),
    })
}

fn value_at_mut<'v>(doc: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    steps(path).try_fold(doc, |v, step| match step {
        Ok(key) => v.get_mut(key),
        Err(index) => v.get_mut(index),
    })
}

/// What went wrong reading a value, its parts kept apart for [`read`] to
/// word. serde hands the expected kind over only as text (its visitors'
/// `expecting`), so that part stays text until [`Expected::from_serde`].
#[derive(Debug)]
enum Fault {
    Kind {
        expected: String,
    },
    Unknown {
        field: String,
        fields: &'static [&'static str],
    },
    Missing(&'static str),
    Twice(&'static str),
    Other(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Kind { expected } => write!(f, "expected {expected}"),
            Fault::Unknown { field, .. } => write!(f, "unknown field {field}"),
            Fault::Missing(field) => write!(f, "missing field {field}"),
            Fault::Twice(field) => write!(f, "field {field} given more than once"),
            Fault::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Fault {}

impl de::Error for Fault {
    fn custom<T: fmt::Display>(message: T) -> Fault {
        Fault::Other(message.to_string())
    }

    fn invalid_type(_: de::Unexpected<'_>, expected: &dyn de::Expected) -> Fault {
        Fault::Kind {
            expected: expected.to_string(),
        }
    }

    fn invalid_value(_: de::Unexpected<'_>, expected: &dyn de::Expected) -> Fault {
        Fault::Kind {
            expected: expected.to_string(),
        }
    }

    fn unknown_field(field: &str, fields: &'static [&'static str]) -> Fault {
        Fault::Unknown {
            field: field.to_owned(),
            fields,
        }
    }

    fn missing_field(field: &'static str) -> Fault {
        Fault::Missing(field)
    }

    fn duplicate_field(field: &'static str) -> Fault {
        Fault::Twice(field)
    }
}

/// A parsed JSON value read as serde reads text, with [`Fault`] for errors.
/// An object is read only where an object (a struct, a map) is expected,
/// and a list only where a list is: serde_json would also read a struct
/// from a list of its fields in order, which no person means.
struct Node<'de>(&'de Value);

/// The value is not of the kind `visitor` reads (which [`Fault::Kind`] names).
fn refuse<'de, V: Visitor<'de>, T>(visitor: &V) -> Result<T, Fault> {
    Err(de::Error::invalid_type(de::Unexpected::Other("value"), visitor))
}

impl<'de> de::Deserializer<'de> for Node<'de> {
    type Error = Fault;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Fault> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(f) = n.as_f64() {
                    visitor.visit_f64(f)
                } else {
                    refuse(&visitor)
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Items(items.iter())),
            Value::Object(map) => visitor.visit_map(Entries {
                entries: map.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Fault> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Fault> {
        match self.0 {
            Value::Array(_) => self.deserialize_any(visitor),
            _ => refuse(&visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Fault> {
        match self.0 {
            Value::Object(_) => self.deserialize_any(visitor),
            _ => refuse(&visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Fault> {
        self.deserialize_map(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Fault> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct enum identifier ignored_any
    }
}

struct Items<'de>(std::slice::Iter<'de, Value>);

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = Fault;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Fault> {
        self.0.next().map(|item| seed.deserialize(Node(item))).transpose()
    }
}

struct Entries<'de> {
    entries: serde_json::map::Iter<'de>,
    value: Option<&'de Value>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = Fault;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Fault> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key)).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Fault> {
        match self.value.take() {
            Some(value) => seed.deserialize(Node(value)),
            None => Err(de::Error::custom("a value was read before its key")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        #[serde(default)]
        section: Section,
        #[serde(default)]
        rules: Vec<Entry>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Section {
        count: Option<i64>,
        port: Option<u16>,
        seconds: Option<u64>,
        on: Option<bool>,
        name: Option<String>,
        names: Option<Vec<String>>,
        ratio: Option<f64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Entry {
        pattern: String,
        timeout_seconds: i64,
    }

    /// Each document, and the path and words its mistake is reported with.
    /// (text, as a message quotes it): cut when long, redacted where it
    /// may be a connection string, not shown where it names a secret.
    #[test]
    fn texts_are_quoted_without_a_secret() {
        let long = format!("\"{}\"…", "y".repeat(60));
        let cases: &[(&str, &str)] = &[
            ("yes", "\"yes\""),
            ("a?b", "\"a?b\""),
            ("say \"hi\"", "\"say \\\"hi\\\"\""),
            ("postgresql://u:CfgSecretAA@h/db", "\"postgresql://***@h/db\""),
            ("postgresql:/u:CfgSecretAA@h/db", "\"postgresql:***@h/db\""),
            ("u:CfgSecretAA@h", "\"u:***@h\""),
            ("sqlite:x.db?key=CfgSecretAA", "\"sqlite:x.db?***\""),
            ("sqlite:x.db?mode=ro", "\"sqlite:x.db?***\""),
            ("host=h password=CfgSecretAA", NOT_SHOWN),
            ("PASSWORD CfgSecretAA", NOT_SHOWN),
            ("duckdb:md:shop?motherduck_token=CfgSecretAA", "\"duckdb:md:shop?***\""),
            ("token CfgSecretAA", NOT_SHOWN),
            (
                "postgresql://u@h/db?password=CfgSecretAA",
                "\"postgresql://***@h/db?***\"",
            ),
            (&"y".repeat(100), &long),
        ];
        for (text, expected) in cases {
            assert_eq!(quoted(text), *expected, "{text}");
        }
        assert_eq!(
            found(&json!("postgresql://u:CfgSecretAA@h/db")),
            "the text \"postgresql://***@h/db\""
        );
        assert_eq!(found(&json!("host=h password=x")), format!("the text {NOT_SHOWN}"));
    }

    #[test]
    fn mistakes_are_worded_for_people() {
        let cases = [
            (
                json!({"section": {"count": "abc"}}),
                "section.count",
                "expected a whole number, found the text \"abc\"",
            ),
            (
                json!({"section": {"count": 1.5}}),
                "section.count",
                "expected a whole number, found 1.5",
            ),
            (
                json!({"section": {"count": 99999999999999999999u128}}),
                "section.count",
                "expected a whole number, found 99999999999999999999",
            ),
            (
                json!({"section": {"port": -1}}),
                "section.port",
                "expected a whole number from 0 to 65535, found -1",
            ),
            (
                json!({"section": {"port": 70000}}),
                "section.port",
                "expected a whole number from 0 to 65535, found 70000",
            ),
            (
                json!({"section": {"seconds": -5}}),
                "section.seconds",
                "expected a whole number, 0 or more, found -5",
            ),
            (
                json!({"section": {"on": "yes"}}),
                "section.on",
                "expected true or false, found the text \"yes\"",
            ),
            (
                json!({"section": {"on": 1}}),
                "section.on",
                "expected true or false, found 1",
            ),
            (
                json!({"section": {"name": 5}}),
                "section.name",
                "expected text, found 5",
            ),
            (
                json!({"section": {"name": ["a"]}}),
                "section.name",
                "expected text, found a list",
            ),
            (
                json!({"section": {"names": "a"}}),
                "section.names",
                "expected a list of text, found the text \"a\"",
            ),
            (
                json!({"section": {"names": ["a", 3]}}),
                "section.names[1]",
                "expected text, found 3",
            ),
            (
                json!({"section": {"ratio": "half"}}),
                "section.ratio",
                "expected a number, found the text \"half\"",
            ),
            (json!({"section": 5}), "section", "expected an object { ... }, found 5"),
            (
                json!({"section": []}),
                "section",
                "expected an object { ... }, found an empty list",
            ),
            (
                json!({"rules": {}}),
                "rules",
                "expected a list of objects { ... }, found an object",
            ),
            (json!({"rules": [5]}), "rules[0]", "expected an object { ... }, found 5"),
            (
                json!({"rules": [["x", 1]]}),
                "rules[0]",
                "expected an object { ... }, found a list",
            ),
            (
                json!({"rules": [{"pattern": "x"}]}),
                "rules[0].timeout_seconds",
                "required, and missing",
            ),
            (
                json!({"rules": [{"pattern": "x", "timeout_seconds": "1"}]}),
                "rules[0].timeout_seconds",
                "expected a whole number, found the text \"1\"",
            ),
            (
                json!({"section": {"cont": 1}}),
                "section.cont",
                "unknown field: did you mean count?",
            ),
            (
                json!({"section": {"zzzzzzzz": 1}}),
                "section.zzzzzzzz",
                "unknown field: section's fields are count, port, seconds, on, name, names, ratio",
            ),
            (
                json!({"sections": {}}),
                "sections",
                "unknown field: did you mean section?",
            ),
            (
                json!({"other": 1}),
                "other",
                "unknown field: the file's fields are section, rules",
            ),
            (json!([1]), "", "expected an object { ... }, found a list"),
            (
                json!({"section": {"name": "x".repeat(100)}, "rules": 1}),
                "rules",
                "expected a list of objects { ... }, found 1",
            ),
        ];
        for (doc, path, message) in cases {
            let e = read::<Doc>(&doc).unwrap_err();
            assert_eq!((e.path.as_str(), e.message.as_str()), (path, message), "{doc}");
        }
        let long = json!({"section": {"count": "y".repeat(100)}});
        let e = read::<Doc>(&long).unwrap_err();
        assert_eq!(
            e.message,
            format!("expected a whole number, found the text \"{}\"…", "y".repeat(60))
        );
        assert!(read::<Doc>(&json!({"section": {"port": 5432, "names": []}, "rules": []})).is_ok());
    }

    #[test]
    fn syntax_errors_give_line_and_column_in_words() {
        let cases = [
            (
                "{\"a\": 1,}",
                "line 1, column 9: not valid JSON: a comma before } or ] (JSON allows none there)",
            ),
            (
                "{\n  \"a\": 1\n  \"b\": 2\n}",
                "line 3, column 3: not valid JSON: expected , or } here (a comma missing between two fields?)",
            ),
            (
                "{a: 1}",
                "line 1, column 2: not valid JSON: a field name must be in double quotes",
            ),
            (
                "{\"a\": }",
                "line 1, column 7: not valid JSON: expected a value here: text in double quotes, a number, true, false, null, a list [ ... ] or an object { ... }",
            ),
            (
                "{\"a\": [1 2]}",
                "line 1, column 10: not valid JSON: expected , or ] here (a comma missing between two items?)",
            ),
            (
                "{\"a\": 1",
                "line 1, column 7: not valid JSON: the text ends before the JSON does (a } or ] missing?)",
            ),
            (
                "{} x",
                "line 1, column 4: not valid JSON: more text after the end of the JSON",
            ),
        ];
        for (text, expected) in cases {
            let e = serde_json::from_str::<Value>(text).unwrap_err();
            assert_eq!(syntax(&e), expected, "{text}");
        }
    }

    #[test]
    fn expected_kinds_read_as_words() {
        for (kind, words) in [
            (Expected::from_serde("i64"), "a whole number"),
            (Expected::from_serde("u64"), "a whole number, 0 or more"),
            (Expected::Whole { min: 1, max: 65535 }, "a whole number from 1 to 65535"),
            (Expected::from_serde("u16"), "a whole number from 0 to 65535"),
            (Expected::from_serde("a boolean"), "true or false"),
            (Expected::from_serde("a string"), "text"),
            (Expected::from_serde("struct RawQuery"), "an object { ... }"),
            (Expected::List(Some(Box::new(Expected::Text))), "a list of text"),
            (Expected::from_serde("something else"), "something else"),
        ] {
            assert_eq!(kind.to_string(), words);
        }
    }
}
