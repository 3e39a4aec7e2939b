//! The file as written: [`RawConfig`] and its sections, plain serde types
//! that refuse unknown fields, and the built-in defaults in the same form
//! ([`RawConfig::defaults`]), which a file is layered over
//! ([`RawConfig::over`]). Validated into a `Config` in `sections.rs`.

use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::{DEFAULT_HTTP_HOST, DEFAULT_MAX_SESSIONS, LogOutput, default_log_output};
use crate::backend::postgres::RawConnection;
use crate::guard::{RULES, Rule};

/// The file as written. Every section is optional; unknown fields are errors.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// A database URL: `sqlite:...` for an SQLite file, `duckdb:...` for a
    /// DuckDB file, else a PostgreSQL connection string. Environment variables and `--database` win over it.
    #[serde(default)]
    pub database: Option<String>,
    /// PostgreSQL's connection settings: the backend's own section type.
    #[serde(default)]
    pub connection: RawConnection,
    #[serde(default)]
    pub sqlite: RawSqlite,
    #[serde(default)]
    pub duckdb: RawDuckdb,
    #[serde(default)]
    pub pool: RawPool,
    #[serde(default)]
    pub server: RawServer,
    #[serde(default)]
    pub logging: RawLogging,
    #[serde(default)]
    pub query: RawQuery,
    #[serde(default)]
    pub protection: RawProtection,
    #[serde(default)]
    pub error_prompts: Vec<RawErrorPrompt>,
    #[serde(default)]
    pub sanitization: Vec<RawSanitization>,
    #[serde(default)]
    pub hooks: RawHooks,
    /// Several databases by name, each with its own rules; the first is
    /// the default. Replaces `database`/`connection` when given.
    #[serde(default, skip_serializing_if = "RawDatabases::is_empty")]
    pub databases: RawDatabases,
    /// Curated tools: named, parameterized statements served as MCP tools.
    #[serde(default)]
    pub tools: Vec<RawTool>,
    /// Which built-in tools are served.
    #[serde(default)]
    pub tools_enabled: RawToolsEnabled,
    /// Whether the text of every answer puts what came from the database
    /// between two tags with a marker drawn for that answer.
    #[serde(default)]
    pub data_boundary: Option<bool>,
    /// Which statements a person confirms before they run, in read-write
    /// mode: `writes`, `all` or `never`.
    #[serde(default)]
    pub confirm: Option<String>,
    /// How long a confirmation may wait for the person's answer.
    #[serde(default)]
    pub confirm_timeout_seconds: Option<i64>,
    /// Whether `query` offers clients that render MCP Apps the data grid
    /// (`ui://pgmcp/grid`).
    #[serde(default)]
    pub grid: Option<bool>,
}

/// The `databases` map, in the order the file lists it (the first entry is
/// the default).
pub type RawDatabases = serde_json::Map<String, serde_json::Value>;

/// One entry of `databases`, read from its JSON value (so its errors name
/// `databases.NAME.field`). Each section given is layered over the file's
/// top-level section of the same name; the connection is the entry's own.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDatabase {
    /// What the database holds, for the model choosing one.
    pub description: Option<String>,
    /// `sqlite:...`, `duckdb:...`, or a PostgreSQL connection string
    /// (URL or `key=value`); without it, PostgreSQL from `connection`.
    pub url: Option<String>,
    #[serde(default)]
    pub connection: RawConnection,
    pub read_only: Option<bool>,
    pub protection: Option<RawProtection>,
    pub query: Option<RawQuery>,
    pub pool: Option<RawPool>,
    pub duckdb: Option<RawDuckdb>,
}

/// One curated tool as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTool {
    pub name: String,
    pub description: String,
    pub database: Option<String>,
    pub statement: String,
    #[serde(default)]
    pub parameters: Vec<RawParameter>,
    pub read_only: Option<bool>,
}

/// One parameter of a curated tool as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParameter {
    pub name: String,
    /// `integer`, `number`, `string`, `boolean`, `date`, `timestamp` or `array`.
    #[serde(rename = "type")]
    pub kind: String,
    /// With `type: array`: the type of its items.
    pub items: Option<String>,
    pub description: String,
    pub required: Option<bool>,
    pub default: Option<serde_json::Value>,
    #[serde(rename = "enum")]
    pub allowed: Option<Vec<serde_json::Value>>,
}

/// Which built-in tools are served; each defaults to on.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToolsEnabled {
    pub query: Option<bool>,
    pub list_tables: Option<bool>,
    pub describe_table: Option<bool>,
    pub explain: Option<bool>,
    pub diagnose: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawErrorPrompt {
    pub pattern: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSanitization {
    pub pattern: String,
    pub replacement: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHooks {
    pub default_timeout_seconds: Option<i64>,
    #[serde(default)]
    pub before_query: Vec<RawHook>,
    #[serde(default)]
    pub after_query: Vec<RawHook>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHook {
    pub pattern: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub timeout_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTimeoutRule {
    pub pattern: String,
    pub timeout_seconds: i64,
}

/// The guard's switches, by their `protection.*` names in the rule table
/// ([`crate::guard::RULES`]), and its function lists. Everything is blocked
/// unless allowed here.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RawProtection {
    /// What the file says of each rule's switch, by rule (`None`: not said).
    pub switches: [Option<bool>; RULES.len()],
    /// Replaces the default list when given. `*` at the end matches a prefix.
    pub blocked_functions: Option<Vec<String>>,
    /// Functions read-only mode may run although the catalog cannot show they
    /// only read (the database's own functions). `*` at the end matches a prefix.
    pub read_only_functions: Option<Vec<String>>,
}

/// Every key of the `protection` section, for the unknown-field message.
static PROTECTION_FIELDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    Rule::switches()
        .map(|(_, flag)| flag)
        .chain(["blocked_functions", "read_only_functions"])
        .collect()
});

impl Serialize for RawProtection {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (rule, flag) in Rule::switches() {
            map.serialize_entry(flag, &self.switches[rule as usize])?;
        }
        map.serialize_entry("blocked_functions", &self.blocked_functions)?;
        map.serialize_entry("read_only_functions", &self.read_only_functions)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for RawProtection {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RawProtection, D::Error> {
        struct Section;
        impl<'de> serde::de::Visitor<'de> for Section {
            type Value = RawProtection;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct RawProtection")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawProtection, A::Error> {
                use serde::de::Error;
                let mut raw = RawProtection::default();
                let mut seen = std::collections::HashSet::new();
                while let Some(field) = map.next_key_seed(Key)? {
                    if !seen.insert(field) {
                        return Err(A::Error::duplicate_field(field));
                    }
                    match (field, Rule::from_flag(field)) {
                        (_, Some(rule)) => raw.switches[rule as usize] = map.next_value()?,
                        ("blocked_functions", _) => raw.blocked_functions = map.next_value()?,
                        _ => raw.read_only_functions = map.next_value()?,
                    }
                }
                Ok(raw)
            }
        }
        /// A key of the section, refused while it is read (so the error's
        /// path names it) when the section has no such field.
        struct Key;
        impl<'de> serde::de::DeserializeSeed<'de> for Key {
            type Value = &'static str;

            fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<&'static str, D::Error> {
                deserializer.deserialize_identifier(self)
            }
        }
        impl serde::de::Visitor<'_> for Key {
            type Value = &'static str;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("field identifier")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<&'static str, E> {
                PROTECTION_FIELDS
                    .iter()
                    .find(|f| **f == key)
                    .copied()
                    .ok_or_else(|| E::unknown_field(key, &PROTECTION_FIELDS))
            }
        }
        deserializer.deserialize_struct("RawProtection", &PROTECTION_FIELDS, Section)
    }
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSqlite {
    /// A directory whose SQLite files calls may name with the `database`
    /// argument. Relative to the config file's directory.
    pub root: Option<String>,
}

/// DuckDB's resource settings, fixed when the database opens.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDuckdb {
    /// DuckDB's `memory_limit`, e.g. `"1GB"` or `"512MiB"`.
    pub memory_limit: Option<String>,
    /// Worker threads a query may use.
    pub threads: Option<i64>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPool {
    pub max_conns: Option<i64>,
    pub max_waiting: Option<i64>,
    pub max_conn_lifetime_seconds: Option<i64>,
    pub max_conn_idle_seconds: Option<i64>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    pub read_only: Option<bool>,
    pub host: Option<String>,
    pub port: Option<i64>,
    pub health_check_enabled: Option<bool>,
    pub health_check_path: Option<String>,
    pub auth_tokens_file: Option<String>,
    pub allowed_origins: Option<Vec<String>>,
    pub max_sessions: Option<i64>,
    pub max_body_memory_mb: Option<i64>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLogging {
    pub level: Option<String>,
    pub format: Option<String>,
    pub output: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuery {
    pub default_timeout_seconds: Option<i64>,
    pub list_tables_timeout_seconds: Option<i64>,
    pub describe_table_timeout_seconds: Option<i64>,
    pub max_rows: Option<i64>,
    pub default_limit: Option<i64>,
    pub max_result_length: Option<i64>,
    pub max_sql_length: Option<i64>,
    pub max_params_bytes: Option<i64>,
    /// Not written when empty, so an empty list in a section layered over
    /// another (a `databases` entry's `query`) keeps the rules under it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeout_rules: Vec<RawTimeoutRule>,
}

impl RawConfig {
    /// The built-in defaults, written as a file would spell them out: the one
    /// place a default is set. A file is layered over them ([`RawConfig::over`]),
    /// so it needs only what its author cares about, and running without a
    /// file uses them alone. Fields left `None` have no default: unset means
    /// something of its own (libpq's rules for `connection`, DuckDB's own
    /// resource settings, no hooks, no `default_limit`).
    pub fn defaults() -> RawConfig {
        RawConfig {
            pool: RawPool {
                max_conns: Some(4),
                max_waiting: Some(1000),
                max_conn_lifetime_seconds: Some(3600),
                max_conn_idle_seconds: Some(600),
            },
            server: RawServer {
                read_only: Some(true),
                host: Some(DEFAULT_HTTP_HOST.into()),
                health_check_enabled: Some(true),
                health_check_path: Some("/health".into()),
                max_sessions: Some(DEFAULT_MAX_SESSIONS as i64),
                ..RawServer::default()
            },
            logging: RawLogging {
                level: Some("info".to_owned()),
                format: Some("text".to_owned()),
                output: Some(match default_log_output() {
                    LogOutput::Stderr => "stderr".to_owned(),
                    LogOutput::File(path) => path.to_string_lossy().into_owned(),
                }),
            },
            query: RawQuery {
                default_timeout_seconds: Some(30),
                list_tables_timeout_seconds: Some(10),
                describe_table_timeout_seconds: Some(10),
                max_rows: Some(500),
                default_limit: None,
                max_result_length: Some(50_000),
                max_sql_length: Some(100_000),
                max_params_bytes: Some(1 << 20),
                timeout_rules: Vec::new(),
            },
            connection: RawConnection {
                read_only_as_login: Some(false),
                ..RawConnection::default()
            },
            tools_enabled: RawToolsEnabled {
                query: Some(true),
                list_tables: Some(true),
                describe_table: Some(true),
                // Not set: as `query` (see `curated::enabled`).
                explain: None,
                diagnose: None,
            },
            protection: RawProtection {
                switches: RULES.map(|spec| spec.flag.map(|_| spec.default)),
                // `None`: the guard's own list (`Policy::default`).
                blocked_functions: None,
                read_only_functions: None,
            },
            data_boundary: Some(true),
            confirm: Some("writes".to_owned()),
            confirm_timeout_seconds: Some(300),
            grid: Some(true),
            ..RawConfig::default()
        }
    }

    /// `self` layered over `base`: every field `self` sets wins, section by
    /// section; a list is replaced whole, never merged.
    pub fn over(self, base: RawConfig) -> RawConfig {
        layered(self, base)
    }
}

/// `top` layered over `base`, section by section, as [`RawConfig::over`]
/// layers a file over the defaults; for a `databases` entry's sections too.
pub(super) fn layered<T: Serialize + serde::de::DeserializeOwned>(top: T, base: T) -> T {
    {
        // Layered as JSON, where "not set" is `null` in every section alike,
        // so no field can be forgotten here when one is added.
        fn layer(top: serde_json::Value, base: serde_json::Value) -> serde_json::Value {
            use serde_json::Value;
            match (top, base) {
                (Value::Null, base) => base,
                (Value::Object(top), Value::Object(mut base)) => {
                    for (key, value) in top {
                        let under = base.remove(&key).unwrap_or(Value::Null);
                        base.insert(key, layer(value, under));
                    }
                    Value::Object(base)
                }
                (top, _) => top,
            }
        }
        let (top_json, under) = match (serde_json::to_value(&top), serde_json::to_value(&base)) {
            (Ok(top), Ok(under)) => (top, under),
            // Plain structs of options, strings and numbers always serialize.
            _ => return top,
        };
        serde_json::from_value(layer(top_json, under)).unwrap_or(top)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::config::Config;
    use crate::config::tests::{MINIMAL, load};

    #[test]
    fn minimal_file_gets_safe_defaults() {
        let c = load(MINIMAL).unwrap();
        assert!(c.read_only, "read-only unless the file says otherwise");
        assert_eq!(c.pool.max_conns, 4);
        assert_eq!(c.query.default_timeout, Duration::from_secs(30));
        assert_eq!(c.query.max_rows, 500);
        assert_eq!(c.source.as_deref(), Some(Path::new("/etc/pgmcp.json")));
        assert_eq!(
            c.confirm.when,
            crate::config::ConfirmWhen::Writes,
            "a person confirms writes"
        );
        assert_eq!(c.confirm.timeout, Duration::from_secs(300));
    }

    /// `confirm` and its timeout: the three values, and errors that name
    /// the field and what it takes.
    #[test]
    fn confirm_settings() {
        use crate::config::ConfirmWhen;
        for (text, when) in [
            (r#"{"confirm": "all"}"#, ConfirmWhen::All),
            (r#"{"confirm": "never"}"#, ConfirmWhen::Never),
            (
                r#"{"confirm": "writes", "confirm_timeout_seconds": 86400}"#,
                ConfirmWhen::Writes,
            ),
        ] {
            assert_eq!(load(text).unwrap().confirm.when, when, "{text}");
        }
        for (text, field, says) in [
            (r#"{"confirm": "sometimes"}"#, "confirm", "\"writes\""),
            (r#"{"confirm_timeout_seconds": 0}"#, "confirm_timeout_seconds", ""),
            (
                r#"{"confirm_timeout_seconds": 86401}"#,
                "confirm_timeout_seconds",
                "at most 86400",
            ),
            (
                r#"{"confirm_timeout_seconds": 9223372036854775807}"#,
                "confirm_timeout_seconds",
                "at most 86400",
            ),
        ] {
            let error = load(text).unwrap_err();
            assert_eq!(error.field.as_deref(), Some(field), "{text}: {error}");
            assert!(error.to_string().contains(says), "{text}: {error}");
        }
    }
    /// A file layers over the same defaults as no file: it needs only what
    /// its author cares about.
    #[test]
    fn a_file_layers_over_the_builtin_defaults() {
        let builtin = Config::builtin();
        let empty = load("{}").unwrap();
        assert_eq!(Config { source: None, ..empty }, builtin);
        assert_eq!(
            (
                builtin.query.default_timeout,
                builtin.query.list_tables_timeout,
                builtin.query.describe_table_timeout
            ),
            (
                Duration::from_secs(30),
                Duration::from_secs(10),
                Duration::from_secs(10)
            )
        );
        let c = load(r#"{"protection": {"allow_drop": true}, "query": {"list_tables_timeout_seconds": 3}}"#).unwrap();
        assert!(c.protection.allows(Rule::Drop) && !c.protection.allows(Rule::Truncate));
        assert_eq!(c.query.list_tables_timeout, Duration::from_secs(3));
        assert_eq!(c.query.default_timeout, builtin.query.default_timeout);
        assert_eq!((c.pool.clone(), c.read_only), (builtin.pool.clone(), true));
        // An explicit null is "not set", as leaving the field out is.
        let c = load(r#"{"query": {"max_rows": null}, "logging": {"output": null}}"#).unwrap();
        assert_eq!((c.query.max_rows, &c.logging.output), (500, &builtin.logging.output));
        // A list replaces, never merges.
        let rules = RawConfig {
            error_prompts: vec![RawErrorPrompt {
                pattern: "a".into(),
                message: "b".into(),
            }],
            ..RawConfig::default()
        };
        assert_eq!(rules.clone().over(RawConfig::defaults()).error_prompts.len(), 1);
        assert_eq!(RawConfig::default().over(rules).error_prompts.len(), 0);
    }
}
