//! Tool schemas every client can read. schemars writes valid JSON Schema,
//! but in spellings some clients reject or silently weaken: nullable fields
//! as type lists (`["string", "null"]`), "any value" as a bare `true` or an
//! empty object, and Rust-specific formats (`uint`, `int64`). Strict clients
//! (the MCP Inspector's `--strict`, model providers that map tool schemas
//! onto a one-`type` dialect) refuse or drop those, so every schema the
//! tools publish passes through [`portable`] once, at startup.

use serde_json::{Map, Value, json};

/// The formats JSON Schema 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords that constrain a value: a schema with none of them accepts
/// anything, which strict clients flag as an untyped schema.
const CONSTRAINING: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "$ref",
];

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
];

/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "$defs", "definitions"];

/// Keywords where `true`/`false` is the usual spelling, not a stand-in for a
/// schema.
const BOOLEAN_ALLOWED: &[&str] = &["additionalProperties"];

/// `schema` rewritten in the portable spelling, meaning the same:
/// - a type list becomes `anyOf` branches with one `type` each;
/// - a bare `true`, or a schema that constrains nothing, becomes `anyOf`
///   over every JSON type (still any value, now said explicitly);
/// - a format JSON Schema does not define is dropped (an unsigned one
///   keeps its meaning as `minimum: 0`).
pub fn portable(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut value = Value::Object(schema.clone());
    rewrite(&mut value, None);
    match value {
        Value::Object(map) => map,
        _ => schema.clone(),
    }
}

fn rewrite(node: &mut Value, keyword: Option<&str>) {
    if let Value::Bool(accepts) = node {
        if keyword.is_some_and(|k| BOOLEAN_ALLOWED.contains(&k)) {
            return;
        }
        *node = if *accepts {
            any_value()
        } else {
            json!({"not": any_value()})
        };
        return;
    }
    let Value::Object(map) = node else {
        return;
    };
    for key in ONE_SCHEMA {
        if let Some(child) = map.get_mut(*key) {
            rewrite(child, Some(key));
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(children)) = map.get_mut(*key) {
            for child in children {
                rewrite(child, Some(key));
            }
        }
    }
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(children)) = map.get_mut(*key) {
            for child in children.values_mut() {
                rewrite(child, Some(key));
            }
        }
    }
    if let Some(Value::String(format)) = map.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        let unsigned = format.starts_with('u');
        map.remove("format");
        if unsigned && !map.contains_key("minimum") {
            map.insert("minimum".to_owned(), json!(0));
        }
    }
    if let Some(Value::Array(types)) = map.get("type").cloned() {
        map.remove("type");
        let branches = types.into_iter().map(|t| json!({"type": t})).collect::<Vec<_>>();
        match map.get_mut("anyOf") {
            // Both a type list and anyOf: the value must satisfy both.
            Some(_) => {
                let existing = map.remove("anyOf").unwrap_or(Value::Null);
                map.insert("allOf".to_owned(), json!([{"anyOf": branches}, {"anyOf": existing}]));
            }
            None => {
                map.insert("anyOf".to_owned(), Value::Array(branches));
            }
        }
    }
    // Below the root (which always has a type): a schema that constrains
    // nothing says "any value" without saying it.
    if keyword.is_some() && !map.keys().any(|k| CONSTRAINING.contains(&k.as_str())) {
        map.insert("anyOf".to_owned(), any_value()["anyOf"].clone());
    }
}

/// Any JSON value, said with one `type` per branch.
fn any_value() -> Value {
    json!({"anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "object"},
        {"type": "array"},
        {"type": "null"},
    ]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: Value, expected: Value) {
        let Value::Object(map) = input else { panic!("an object") };
        assert_eq!(Value::Object(portable(&map)), expected);
    }

    #[test]
    fn rewrites_what_strict_clients_reject() {
        let any = any_value()["anyOf"].clone();
        check(
            json!({"type": "object", "properties": {
                "s": {"type": ["string", "null"], "default": null, "description": "d"},
                "p": {"type": ["array", "null"], "items": true},
                "n": {"type": "integer", "format": "uint", "minimum": 0},
                "m": {"type": "integer", "format": "uint64"},
                "i": {"type": "integer", "format": "int64"},
                "t": {"type": "string", "format": "date-time"},
                "v": {"description": "anything"},
                "o": {"type": "object", "additionalProperties": true},
            }}),
            json!({"type": "object", "properties": {
                "s": {"default": null, "description": "d", "anyOf": [{"type": "string"}, {"type": "null"}]},
                "p": {"items": {"anyOf": any}, "anyOf": [{"type": "array"}, {"type": "null"}]},
                "n": {"type": "integer", "minimum": 0},
                "m": {"type": "integer", "minimum": 0},
                "i": {"type": "integer"},
                "t": {"type": "string", "format": "date-time"},
                "v": {"description": "anything", "anyOf": any},
                "o": {"type": "object", "additionalProperties": true},
            }}),
        );
    }

    #[test]
    fn nested_definitions_are_rewritten_too() {
        check(
            json!({"type": "object", "$defs": {"A": {"type": "object", "properties": {
                "x": {"type": ["string", "null"]}
            }}}}),
            json!({"type": "object", "$defs": {"A": {"type": "object", "properties": {
                "x": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            }}}}),
        );
    }
}
