//! Validation of `databases`: several databases by name, each validated
//! into a whole [`Config`] of its own: the file's top-level sections with
//! the entry's own layered over them (`read_only`, `protection`, `query`,
//! `pool`, `duckdb`), and the entry's own connection. Hooks, error prompts,
//! sanitization, logging and the HTTP server are the file's, shared.

use std::collections::HashMap;
use std::path::Path;

use super::raw::{RawDatabase, layered};
use super::sections::fail;
use super::{ConfigError, NamedDatabase, RawConfig};
use crate::config::mistake;
use crate::toolbox::is_name;

/// `databases`, in the file's order. `file_raw`: the file as written (to
/// refuse a top-level `database` or `connection` beside it); `raw`: the
/// file layered over the defaults, the sections each entry layers over.
pub(super) fn databases(
    file_raw: &RawConfig,
    raw: &RawConfig,
    file: Option<&Path>,
) -> Result<Vec<NamedDatabase>, ConfigError> {
    if raw.databases.is_empty() {
        return Ok(Vec::new());
    }
    if file_raw.database.is_some() {
        return Err(fail(
            file,
            "database",
            "the config also names databases in `databases`: move this one there, under a name".into(),
        ));
    }
    let default_connection = serde_json::to_value(crate::backend::postgres::RawConnection::default()).ok();
    if serde_json::to_value(&file_raw.connection).ok() != default_connection {
        return Err(fail(
            file,
            "connection",
            "the config names databases in `databases`: give each its own `connection` there".into(),
        ));
    }
    if file_raw.sqlite.root.is_some() {
        return Err(fail(
            file,
            "sqlite.root",
            "a directory of SQLite files cannot be one of several databases: name each file in `databases` (\"url\": \"sqlite:PATH\")".into(),
        ));
    }
    let mut variables: HashMap<String, &str> = HashMap::new();
    raw.databases
        .iter()
        .map(|(name, value)| {
            let field = format!("databases.{name}");
            if !is_name(name) {
                return Err(fail(
                    file,
                    &field,
                    format!("{name:?} cannot name a database: use a letter, then letters, digits, _ or -"),
                ));
            }
            let variable = password_variable(name);
            if let Some(other) = variables.insert(variable.clone(), name) {
                return Err(fail(
                    file,
                    &field,
                    format!("{other:?} and {name:?} would share the password variable {variable}: rename one"),
                ));
            }
            let entry: RawDatabase = mistake::read(value).map_err(|m| {
                let at = match m.path.is_empty() {
                    true => field.clone(),
                    false => format!("{field}.{}", m.path),
                };
                fail(file, &at, m.message)
            })?;
            if entry.url.as_deref().is_some_and(|u| u.trim().is_empty()) {
                return Err(fail(
                    file,
                    &format!("{field}.url"),
                    "is empty: remove it or give a URL".into(),
                ));
            }
            let description = entry.description.clone().filter(|d| !d.trim().is_empty());
            let inherits_read_only = entry.read_only.is_none();
            let mut config = entry_config(entry, raw).validate(file).map_err(|e| ConfigError {
                field: Some(match e.field {
                    Some(inner) => format!("{field}.{inner}"),
                    None => field.clone(),
                }),
                ..e
            })?;
            config.name = Some(name.clone());
            Ok(NamedDatabase {
                name: name.clone(),
                description,
                config,
                inherits_read_only,
            })
        })
        .collect()
}

/// The raw config one entry runs with: the file's sections, the entry's
/// own layered over them, its own connection, and no `databases` or
/// `tools` of its own.
fn entry_config(entry: RawDatabase, raw: &RawConfig) -> RawConfig {
    let mut config = raw.clone();
    config.databases = Default::default();
    config.tools = Vec::new();
    config.tools_enabled = RawConfig::defaults().tools_enabled;
    config.database = entry.url;
    config.connection = layered(entry.connection, RawConfig::defaults().connection);
    // The `server` section is the file's, the HTTP door's settings checked
    // once there: an entry takes only its mode from it.
    config.server = super::RawServer {
        read_only: entry.read_only.or(config.server.read_only),
        ..super::RawServer::default()
    };
    if let Some(protection) = entry.protection {
        config.protection = layered(protection, config.protection);
    }
    if let Some(query) = entry.query {
        config.query = layered(query, config.query);
    }
    if let Some(pool) = entry.pool {
        config.pool = layered(pool, config.pool);
    }
    if let Some(duckdb) = entry.duckdb {
        config.duckdb = layered(duckdb, config.duckdb);
    }
    config
}

/// The environment variable a named database's password comes from:
/// `PGMCP_DB_<NAME>_PASSWORD`, the name upper-cased with `-` as `_`.
pub fn password_variable(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| match c {
            '-' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    format!("PGMCP_DB_{name}_PASSWORD")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::config::tests::load;
    use crate::guard::Rule;

    #[test]
    fn each_database_layers_its_own_sections_over_the_files() {
        let c = load(
            r#"{
              "server": {"read_only": false},
              "query": {"max_rows": 100, "default_timeout_seconds": 7,
                        "timeout_rules": [{"pattern": "slow", "timeout_seconds": 60}]},
              "protection": {"allow_drop": true},
              "databases": {
                "orders": {"url": "postgres://app@db/orders", "description": "The shop's orders",
                           "protection": {"allow_truncate": true}},
                "warehouse": {"url": "duckdb:w.duckdb", "read_only": true, "query": {"max_rows": 20},
                              "pool": {"max_conns": 1}}
              }
            }"#,
        )
        .unwrap();
        let names: Vec<&str> = c.databases.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            ["orders", "warehouse"],
            "the file's order: the first is the default"
        );
        let (orders, warehouse) = (&c.databases[0].config, &c.databases[1].config);
        assert_eq!(c.databases[0].description.as_deref(), Some("The shop's orders"));
        assert_eq!(orders.database.as_deref(), Some("postgres://app@db/orders"));
        assert!(!orders.read_only && warehouse.read_only);
        assert!(orders.protection.allows(Rule::Drop) && orders.protection.allows(Rule::Truncate));
        assert!(warehouse.protection.allows(Rule::Drop) && !warehouse.protection.allows(Rule::Truncate));
        assert_eq!((orders.query.max_rows, warehouse.query.max_rows), (100, 20));
        assert_eq!(warehouse.query.default_timeout, Duration::from_secs(7));
        assert_eq!(
            warehouse.query.timeout_rules.len(),
            1,
            "an entry's query keeps the file's rules"
        );
        assert_eq!((orders.pool.max_conns, warehouse.pool.max_conns), (4, 1));
    }

    #[test]
    fn mistakes_name_the_database_and_field() {
        let cases = [
            (
                r#"{"databases": {"a": {"url": "sqlite:a.db", "read_only": "no"}}}"#,
                "databases.a.read_only",
            ),
            (
                r#"{"databases": {"a": {"url": "sqlite:a.db", "query": {"max_rows": 0}}}}"#,
                "databases.a.query.max_rows",
            ),
            (r#"{"databases": {"a": {"uri": "sqlite:a.db"}}}"#, "databases.a.uri"),
            (r#"{"databases": {"a": {"url": " "}}}"#, "databases.a.url"),
            (r#"{"databases": {"a b": {"url": "sqlite:a.db"}}}"#, "databases.a b"),
            (
                r#"{"databases": {"a-b": {"url": "sqlite:a.db"}, "a_b": {"url": "sqlite:b.db"}}}"#,
                "databases.a_b",
            ),
            (
                r#"{"database": "sqlite:x.db", "databases": {"a": {"url": "sqlite:a.db"}}}"#,
                "database",
            ),
            (
                r#"{"connection": {"host": "h"}, "databases": {"a": {"url": "sqlite:a.db"}}}"#,
                "connection",
            ),
            // The HTTP door's body budget is the file's, held to the longest
            // message any database accepts.
            (
                r#"{"server": {"max_body_memory_mb": 64},
                    "databases": {"b": {"url": "sqlite:b.db", "query": {"max_params_bytes": 16777216}}}}"#,
                "server.max_body_memory_mb",
            ),
        ];
        for (text, field) in cases {
            let e = load(text).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{text}: {e}");
        }
    }

    /// `PGMCP_READ_ONLY=true` makes every database read-only; `false`
    /// reaches only those that take the file's mode, never one the file
    /// makes read-only itself. `PGMCP_MAX_ROWS` reaches every one.
    #[test]
    fn the_environment_reaches_each_database() {
        let c = load(
            r#"{"databases": {"own": {"url": "sqlite:a.db", "read_only": true},
                              "inherits": {"url": "sqlite:b.db"},
                              "writes": {"url": "sqlite:c.db", "read_only": false}}}"#,
        )
        .unwrap();
        let with = |vars: &'static [(&'static str, &'static str)]| {
            c.clone()
                .with_environment(&|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned()))
                .unwrap()
        };
        let modes = |c: &crate::config::Config| c.databases.iter().map(|d| d.config.read_only).collect::<Vec<_>>();
        assert_eq!(modes(&c), [true, true, false]);
        assert_eq!(modes(&with(&[("PGMCP_READ_ONLY", "false")])), [true, false, false]);
        assert_eq!(modes(&with(&[("PGMCP_READ_ONLY", "true")])), [true, true, true]);
        let capped = with(&[("PGMCP_MAX_ROWS", "7")]);
        assert!(capped.databases.iter().all(|d| d.config.query.max_rows == 7));
    }

    /// One sandbox for the process: it fences for a file switch any
    /// database turns on; and one message limit, the largest any allows.
    #[test]
    fn what_the_process_takes_from_every_database() {
        let c = load(
            r#"{"databases": {"a": {"url": "sqlite:a.db"},
                              "b": {"url": "sqlite:b.db", "protection": {"allow_attach": true},
                                    "query": {"max_params_bytes": 16777216}}}}"#,
        )
        .unwrap();
        assert!(!c.protection.allows(Rule::Attach) && c.process_protection().allows(Rule::Attach));
        assert!(!c.process_protection().allows(Rule::FileFunction));
        assert_eq!(c.longest_message(), c.databases[1].config.longest_message());
        assert!(c.longest_message() > crate::config::longest_message(&c.query));
    }

    #[test]
    fn password_variables() {
        assert_eq!(super::password_variable("orders"), "PGMCP_DB_ORDERS_PASSWORD");
        assert_eq!(super::password_variable("stage-2"), "PGMCP_DB_STAGE_2_PASSWORD");
    }
}
