//! The client's JSON file as text: the merge that sets one server and keeps
//! every other key in its order ([`merge`]), what makes a file one pgmcp
//! will not write ([`Malformed`], [`duplicate_keys`]), the database an entry
//! already there names ([`named_database`], [`same_database`], shown without
//! a password by [`shown_database`]) and a server name still free
//! ([`free_name`]). Pure.

use std::fmt;

use serde_json::{Map, Value};

use crate::backend::location::{DbFile, Target};
use crate::backend::postgres::params;

/// What is wrong with a client config file that is not merged into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    NotUtf8,
    /// serde_json's message: what, at which line and column.
    NotJson(String),
    NotAnObject,
    ServersNotAnObject,
    /// Keys that appear more than once in one object, each with where (as
    /// [`duplicate_keys`] writes it). A JSON reader keeps one of them and
    /// loses the others without a word, and so would the file pgmcp wrote.
    DuplicateKeys(Vec<String>),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::NotUtf8 => write!(f, "not UTF-8 text"),
            Malformed::NotJson(e) => write!(f, "not valid JSON ({e})"),
            Malformed::NotAnObject => write!(f, "the top level is not a JSON object"),
            Malformed::ServersNotAnObject => write!(f, "\"mcpServers\" is not a JSON object"),
            Malformed::DuplicateKeys(keys) => write!(
                f,
                "it has the same key twice in one object: {}; a client reads only one of each (which one \
                 depends on the client), and rewriting the file would drop the others",
                keys.join(", ")
            ),
        }
    }
}

/// The key both clients keep their servers under.
pub(super) const SERVERS: &str = "mcpServers";

/// A client config with the entry merged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The whole new file: pretty JSON and a final newline.
    pub text: String,
    /// Whether a server of that name was there before (and is replaced in
    /// place).
    pub replaced: bool,
    /// That server's entry, as it was.
    pub previous: Option<Value>,
    /// Every server's name in the new file, in its order.
    pub servers: Vec<String>,
}

/// `existing` (the file's text; `None` when there is no file) with
/// `mcpServers.<name>` set to `entry`. Every other key stays, in its order;
/// an entry of the same name is replaced where it stands, so running this
/// again on its own output gives the same text. A file that is empty (or
/// only whitespace) is taken as `{}`: it holds nothing to lose.
pub fn merge(existing: Option<&str>, name: &str, entry: &Value) -> Result<Merged, Malformed> {
    let mut doc = match existing.filter(|t| !t.trim().is_empty()) {
        Some(text) => {
            let doc = serde_json::from_str(text).map_err(|e| Malformed::NotJson(e.to_string()))?;
            let twice = duplicate_keys(text).map_err(|e| Malformed::NotJson(e.to_string()))?;
            if !twice.is_empty() {
                return Err(Malformed::DuplicateKeys(twice));
            }
            doc
        }
        None => Value::Object(Map::new()),
    };
    let top = doc.as_object_mut().ok_or(Malformed::NotAnObject)?;
    let servers = top
        .entry(SERVERS)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or(Malformed::ServersNotAnObject)?;
    // `insert` on a key that exists keeps its place (preserve_order).
    let previous = servers.insert(name.to_owned(), entry.clone());
    let names = servers.keys().cloned().collect();
    let text = serde_json::to_string_pretty(&doc).map_err(|e| Malformed::NotJson(e.to_string()))? + "\n";
    Ok(Merged {
        text,
        replaced: previous.is_some(),
        previous,
        servers: names,
    })
}

/// A server name for `database` (an entry's `PGMCP_DATABASE`) that is not
/// in `taken`: the database's own name (a file's stem, PostgreSQL's
/// `dbname`) in the characters a name needs no quoting for, numbered from
/// 2 while taken; `pgmcp` when the database gives no name.
pub fn free_name(database: Option<&str>, taken: &[String]) -> String {
    let base = database
        .and_then(database_name)
        .map(|name| {
            let word: String = name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' })
                .collect();
            word.trim_matches('-').to_owned()
        })
        .filter(|word| !word.is_empty())
        .unwrap_or_else(|| "pgmcp".to_owned());
    let is_taken = |candidate: &str| taken.iter().any(|t| t == candidate);
    if !is_taken(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|candidate| !is_taken(candidate))
        .unwrap_or(base)
}

/// The name a database goes by: a file's stem, the database a PostgreSQL
/// URL's path or `dbname=` names.
fn database_name(database: &str) -> Option<String> {
    for scheme in ["sqlite", "duckdb"] {
        if database.strip_prefix(scheme).is_some_and(|rest| rest.starts_with(':')) {
            return match Target::parse(scheme, database).ok()?.file {
                DbFile::Path(path) => path.file_stem()?.to_str().map(str::to_owned),
                DbFile::Memory => None,
            };
        }
    }
    if let Some(rest) = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|scheme| database.strip_prefix(scheme))
    {
        let path = rest.split(['?', '#']).next()?.split_once('/')?.1;
        return Some(path.to_owned());
    }
    database
        .split_whitespace()
        .find_map(|pair| pair.strip_prefix("dbname="))
        .map(|name| name.trim_matches('\'').to_owned())
}

/// The database a client entry names, as `pgmcp serve` would take it from
/// the entry: `--database` in its `args`, else `PGMCP_DATABASE` or
/// `PGMCP_DATABASE_FILE` in its `env`, else `PGMCP_PG_CONNSTRING`. An
/// empty value counts as unset, as it does for `serve`. `None`: the entry
/// names no database (pgmcp finds one at each start), or is no pgmcp entry
/// pgmcp can read.
pub fn named_database(entry: &Value) -> Option<String> {
    let given = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let args: Vec<&str> = entry
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let flag = args
        .iter()
        .enumerate()
        .find_map(|(i, arg)| match arg.strip_prefix("--database") {
            Some("") => args.get(i + 1).map(|v| (*v).to_owned()),
            Some(rest) => rest.strip_prefix('=').map(str::to_owned),
            None => None,
        });
    let env = entry.get("env");
    flag.filter(|f| !f.trim().is_empty()).or_else(|| {
        ["PGMCP_DATABASE", "PGMCP_DATABASE_FILE", "PGMCP_PG_CONNSTRING"]
            .into_iter()
            .find_map(|k| given(env.and_then(|e| e.get(k))))
    })
}

/// Whether the database an existing entry names is `new` (the new entry's
/// `PGMCP_DATABASE`, which holds no password): compared without the
/// password, since a new password for the same database is an update, not
/// another database.
pub fn same_database(existing: &str, new: Option<&str>) -> bool {
    let is_file = ["sqlite:", "duckdb:"].iter().any(|s| existing.starts_with(s));
    let existing = if is_file {
        existing.to_owned()
    } else {
        match params::split_password("the entry's database", existing) {
            Ok(split) => split.connstring,
            Err(_) => return false,
        }
    };
    Some(existing.as_str()) == new
}

/// `database` as a message may show it: without any password. Anything
/// not known to hold none (a malformed URL among them, which an entry
/// written by hand may hold) is shown with everything that could hold one
/// hidden: see [`crate::backend::location::shown_setting`].
pub fn shown_database(database: &str) -> String {
    crate::backend::location::shown_setting(database)
}

/// How a message names what an entry is for.
pub(super) fn describe(database: Option<&str>) -> String {
    match database {
        Some(db) => shown_database(db),
        None => "no database of its own (pgmcp finds one at each start)".to_owned(),
    }
}

/// Every key that appears more than once in one object of the JSON `text`,
/// anywhere in it, as the path to it: `"mcpServers"."pgmcp"`. serde_json
/// (like most readers) keeps the last of such keys and drops the rest
/// silently, so the file is walked as it is written rather than as parsed.
pub fn duplicate_keys(text: &str) -> Result<Vec<String>, serde_json::Error> {
    use serde::de::DeserializeSeed as _;
    let mut found = Vec::new();
    let mut reader = serde_json::Deserializer::from_str(text);
    KeyWalk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut reader)?;
    reader.end()?;
    Ok(found)
}

/// One value of [`duplicate_keys`]'s walk, at `path`.
struct KeyWalk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> serde::de::DeserializeSeed<'de> for KeyWalk<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeyWalk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(KeyWalk {
                path: format!("{}[{i}]", self.path),
                found: &mut *self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let quoted = Value::String(key.clone()).to_string();
            let path = match self.path.as_str() {
                "" => quoted,
                outer => format!("{outer}.{quoted}"),
            };
            if !seen.insert(key) && !self.found.contains(&path) {
                self.found.push(path.clone());
            }
            map.next_value_seed(KeyWalk {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_database_an_entry_names() {
        let cases: &[(Value, Option<&str>)] = &[
            (json!({"command": "x"}), None),
            (json!({"args": ["serve"], "env": {"PGMCP_DATABASE": " "}}), None),
            (json!({"env": {"PGMCP_DATABASE": "sqlite:/a.db"}}), Some("sqlite:/a.db")),
            (json!({"env": {"PGMCP_DATABASE_FILE": "/a.db"}}), Some("/a.db")),
            (json!({"env": {"PGMCP_PG_CONNSTRING": "host=h"}}), Some("host=h")),
            // `--database` wins over the environment, as in `serve`.
            (
                json!({"args": ["serve", "--database", "sqlite:/b.db"], "env": {"PGMCP_DATABASE": "sqlite:/a.db"}}),
                Some("sqlite:/b.db"),
            ),
            (json!({"args": ["serve", "--database=host=h"]}), Some("host=h")),
            (json!({"args": ["serve", "--database"]}), None),
        ];
        for (entry, want) in cases {
            assert_eq!(named_database(entry).as_deref(), *want, "{entry}");
        }
        let same: &[(&str, Option<&str>, bool)] = &[
            ("postgresql://u:pw@h/db", Some("postgresql://u@h/db"), true),
            ("host=h password=pw user=u", Some("host=h user=u"), true),
            ("sqlite:/a.db", Some("sqlite:/a.db"), true),
            ("sqlite:/a.db", Some("sqlite:/b.db"), false),
            ("postgresql://u@h/db", None, false),
            ("postgresql://u:p w@h/db", Some("postgresql://u@h/db"), false),
        ];
        for (existing, new, want) in same {
            assert_eq!(same_database(existing, *new), *want, "{existing} {new:?}");
        }
        assert_eq!(shown_database("postgresql://u:pw@h/db"), "postgresql://u@h/db");
        assert_eq!(shown_database("host=h password=pw"), "host=h");
        assert!(!shown_database("postgresql://u:p w@h/db").contains("p w"));
        assert!(!shown_database("host=h password='pw").contains("pw"));
        assert!(!shown_database("sqlite:/a.db?key=pw").contains("pw"));
        assert_eq!(shown_database("/srv/a.db"), "/srv/a.db");
        // Malformed URLs an entry written by hand may hold.
        for malformed in [
            "postgresql:/a:LeakPwAA@h/db",
            "POSTGRESQL://a:LeakPwAA@h/db",
            "postgres:a:LeakPwAA@h/db",
            "postgresq://a:LeakPwAA@h/db",
            "a:LeakPwAA@h/db",
            " postgresql://a:LeakPwAA@h/db",
        ] {
            assert!(!shown_database(malformed).contains("LeakPwAA"), "{malformed}");
        }
    }

    #[test]
    fn keys_written_twice() {
        let cases: &[(&str, &[&str])] = &[
            ("{}", &[]),
            (r#"{"mcpServers": {"a": {}, "b": {}}}"#, &[]),
            (
                r#"{"mcpServers": {"pgmcp": {"command": "x"}, "pgmcp": {"command": "y"}}}"#,
                &[r#""mcpServers"."pgmcp""#],
            ),
            (
                r#"{"mcpServers": {}, "zoom": 1, "mcpServers": {}}"#,
                &[r#""mcpServers""#],
            ),
            // Deeper, in arrays, three times (named once), and two at once.
            (
                r#"{"a": [{"x": 1}, {"x": 1, "y": 2, "x": 3, "x": 4}], "b": {"c": {"d": 1, "d": 2}}, "e.f": 0, "e.f": 1}"#,
                &[r#""a"[1]."x""#, r#""b"."c"."d""#, r#""e.f""#],
            ),
            // The same key in different objects is no duplicate; numbers
            // (kept with their digits) are no objects.
            (r#"{"a": {"k": 1.250}, "b": {"k": 1e400}}"#, &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(duplicate_keys(text).unwrap(), *expected, "{text}");
        }
        let twice = r#"{"mcpServers": {"pgmcp": {"command": "x"}, "pgmcp": {"command": "y"}}}"#;
        assert_eq!(
            merge(Some(twice), "other", &json!({})),
            Err(Malformed::DuplicateKeys(vec![r#""mcpServers"."pgmcp""#.to_owned()]))
        );
    }

    #[test]
    fn merging() {
        let pgmcp = json!({"command": "/opt/pgmcp", "args": ["serve"]});
        type Case<'a> = (Option<&'a str>, Result<(&'a str, bool), Malformed>);
        let cases: &[Case] = &[
            (
                None,
                Ok((
                    r#"{"mcpServers":{"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}}}"#,
                    false,
                )),
            ),
            (
                Some("  \n"),
                Ok((
                    r#"{"mcpServers":{"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}}}"#,
                    false,
                )),
            ),
            // Other keys and servers stay, in their order.
            (
                Some(r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}, "z": 1}"#),
                Ok((
                    r#"{"theme":"dark","mcpServers":{"other":{"command":"x"},"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}},"z":1}"#,
                    false,
                )),
            ),
            // Replaced where it stands.
            (
                Some(r#"{"mcpServers": {"a": {}, "pgmcp": {"command": "old"}, "b": {}}}"#),
                Ok((
                    r#"{"mcpServers":{"a":{},"pgmcp":{"command":"/opt/pgmcp","args":["serve"]},"b":{}}}"#,
                    true,
                )),
            ),
            // Numbers keep their digits.
            (
                Some(r#"{"n": 1.50, "mcpServers": {}}"#),
                Ok((
                    r#"{"n":1.50,"mcpServers":{"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}}}"#,
                    false,
                )),
            ),
            (Some("[1]"), Err(Malformed::NotAnObject)),
            (Some(r#"{"mcpServers": []}"#), Err(Malformed::ServersNotAnObject)),
            (Some(r#"{"mcpServers": null}"#), Err(Malformed::ServersNotAnObject)),
        ];
        for (existing, want) in cases {
            let got = merge(*existing, "pgmcp", &pgmcp);
            match (got, want) {
                (Ok(got), Ok((text, replaced))) => {
                    let compact: Value = serde_json::from_str(&got.text).unwrap();
                    assert_eq!(compact.to_string(), *text, "{existing:?}");
                    assert_eq!(got.replaced, *replaced, "{existing:?}");
                    assert!(got.text.ends_with("}\n"));
                    // Idempotent: merging into its own output changes nothing.
                    let again = merge(Some(&got.text), "pgmcp", &pgmcp).unwrap();
                    assert_eq!(again.text, got.text, "{existing:?}");
                }
                (got, want) => assert_eq!(got.map(|m| m.text), want.clone().map(|(t, _)| t.to_owned())),
            }
        }
        let not_json = merge(Some("{\"a\": 1,}"), "pgmcp", &pgmcp).unwrap_err();
        assert!(
            matches!(&not_json, Malformed::NotJson(e) if e.contains("line 1")),
            "{not_json}"
        );
    }

    #[test]
    fn free_names_come_from_the_database() {
        let taken = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        let cases: &[(Option<&str>, &[&str], &str)] = &[
            (Some("sqlite:/home/me/shop.db"), &["pgmcp"], "shop"),
            (Some("sqlite:///srv/my%20shop.db"), &["pgmcp"], "my-shop"),
            (Some("duckdb:/data/trades.duckdb"), &["pgmcp"], "trades"),
            (Some("sqlite:/home/me/shop.db"), &["pgmcp", "shop"], "shop-2"),
            (Some("sqlite:/home/me/shop.db"), &["shop", "shop-2"], "shop-3"),
            (
                Some("postgresql://agent@db.example.com:5432/sales?sslmode=require"),
                &["pgmcp"],
                "sales",
            ),
            (Some("postgres://db.example.com/"), &["pgmcp"], "pgmcp-2"),
            (Some("host=db user=me dbname='orders'"), &["pgmcp"], "orders"),
            (Some("host=db user=me"), &["demo"], "pgmcp"),
            (Some("sqlite::memory:"), &["pgmcp"], "pgmcp-2"),
            (None, &["pgmcp", "pgmcp-2"], "pgmcp-3"),
        ];
        for (database, names, want) in cases {
            assert_eq!(free_name(*database, &taken(names)), *want, "{database:?} {names:?}");
        }
    }
}
