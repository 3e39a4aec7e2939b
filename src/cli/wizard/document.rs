//! The config being written, as the JSON document the wizard edits: a
//! setting read and set by its dotted path ([`get`], [`set`]), and whether
//! the whole loads as a config ([`validate`]). Apart because it is the
//! one place the answers meet the file's shape and the loader's checks.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::config::{Config, ConfigError};

/// A config that is valid except for what is set on it: a hook timeout, the
/// one field without a default that a hook entry checked alone needs.
pub(super) fn base() -> Value {
    json!({"hooks": {"default_timeout_seconds": 1}})
}

/// Whether the config `doc` loads. Its text is built here, so a mistake
/// in it is the person's answer, never a position in JSON they did not write.
pub(super) fn validate(doc: &Value, path: Option<&Path>) -> Result<(), ConfigError> {
    Config::from_json(&doc.to_string(), path).map(drop)
}

pub(super) fn get<'v>(doc: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(doc, |v, key| v.get(key))
}

/// Set (or with `None`, remove) the value at a dotted path, creating sections
/// as needed and dropping sections left empty.
pub(super) fn set(doc: &mut Value, path: &str, value: Option<Value>) {
    fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
        match value {
            Some(v) => {
                map.insert(key.to_owned(), v);
            }
            None => {
                map.shift_remove(key);
            }
        }
    }
    let Some(root) = doc.as_object_mut() else {
        return;
    };
    // `section.key`, a top-level list, or a `databases` entry's field
    // (`databases.NAME.section.key`).
    match path.split_once('.') {
        None => put(root, path, value),
        Some((section, rest)) => {
            let entry = root.entry(section.to_owned()).or_insert_with(|| json!({}));
            if entry.is_object() {
                set(entry, rest, value);
                if entry.as_object().is_some_and(Map::is_empty) {
                    root.shift_remove(section);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_creates_and_prunes_sections() {
        let mut doc = json!({});
        set(&mut doc, "connection.host", Some(json!("db")));
        assert_eq!(doc, json!({"connection": {"host": "db"}}));
        set(&mut doc, "connection.host", None);
        assert_eq!(doc, json!({}));
        set(&mut doc, "error_prompts", Some(json!([])));
        assert_eq!(get(&doc, "error_prompts"), Some(&json!([])));
        set(&mut doc, "databases.shop.query.max_rows", Some(json!(5)));
        assert_eq!(get(&doc, "databases.shop.query.max_rows"), Some(&json!(5)));
        set(&mut doc, "databases.shop.query.max_rows", None);
        assert_eq!(get(&doc, "databases"), None, "emptied sections go, to the top");
    }
}
