//! Configuration: a JSON file read into [`RawConfig`] (serde, unknown fields
//! rejected), then validated once into [`Config`] (typed, durations, defaults
//! applied). Every error names the file and the field.
//!
//! Where the file comes from, first match wins: `--config PATH`,
//! `PGMCP_CONFIG_PATH`, `<config dir>/pgmcp/config.json`. When the last does
//! not exist, built-in defaults are used (see [`Config::builtin`]); a path
//! given by flag or variable must exist. The working directory is never
//! searched: editors start pgmcp inside whatever repository is open, and a
//! config planted there could switch read-only mode off and name its own
//! hook. A `./.pgmcp/config.json` is read only when named
//! ([`ConfigLocation::ignored_local`] lets `check` say it was not).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use regex::Regex;

use crate::backend::duckdb::{DuckdbConfig, memory_size};
use crate::backend::postgres::{ConnectionConfig, SslMode};
use crate::error_prompts::ErrorPrompt;
use crate::guard::{FunctionPattern, Policy, RULES, Rule};
use crate::hooks::Hook;
use crate::mistake;
use crate::sanitize::SanitizeRule;
use crate::timeouts::TimeoutRule;
use crate::trust;

/// A config that cannot be used, naming the file and field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub file: Option<PathBuf>,
    /// Dotted path of the offending field, e.g. `query.default_timeout_seconds`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "config {}", file.display())?,
            None => write!(f, "config")?,
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A setting from the environment that cannot be used, naming the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {message}")]
pub struct EnvError {
    pub variable: &'static str,
    pub message: String,
}

/// Why the settings cannot be loaded: the file, or the environment over it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    File(#[from] ConfigError),
    #[error(transparent)]
    Environment(#[from] EnvError),
}

/// A config field an environment variable set, over the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub variable: &'static str,
    /// The dotted config field it stands for, e.g. `query.max_rows`.
    pub field: &'static str,
    pub value: String,
}

/// The file as written. Every section is optional; unknown fields are errors.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// A database URL: `sqlite:...` for an SQLite file, `duckdb:...` for a
    /// DuckDB file, else a PostgreSQL connection string. Environment variables and `--database` win over it.
    #[serde(default)]
    pub database: Option<String>,
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

/// Where to connect when `PGMCP_PG_CONNSTRING` is not set. Unset fields fall back
/// to the libpq environment variables (`PGHOST`, ...) and then libpq's defaults.
/// There is deliberately no password field: use `PGPASSWORD` or the connection string.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConnection {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub dbname: Option<String>,
    pub user: Option<String>,
    pub sslmode: Option<String>,
    pub application_name: Option<String>,
    pub connect_timeout_seconds: Option<u64>,
    /// PEM file of the CAs to trust, or `system`. See the README's TLS section.
    pub sslrootcert: Option<String>,
    /// Client certificate (PEM) and its key, for servers that ask for one.
    pub sslcert: Option<String>,
    pub sslkey: Option<String>,
    /// The password file to read instead of `~/.pgpass`.
    pub passfile: Option<String>,
    /// A role every statement runs as (`SET LOCAL ROLE` in each transaction),
    /// whoever the login is: give it only the rights the agent needs. The
    /// login must be a member of it (`GRANT role TO login`). PostgreSQL only;
    /// applies however the connection is given (`PGMCP_PG_CONNSTRING` too).
    pub role: Option<String>,
    /// Without `role`, read-only mode runs the queries of a login that can
    /// do more than read (a superuser, `REPLICATION`, a member of
    /// `pg_execute_server_program`, `pg_read_server_files` or
    /// `pg_write_server_files`) as `pg_read_all_data`. `true` runs them as
    /// the login, with all its rights.
    pub read_only_as_login: Option<bool>,
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
    #[serde(default)]
    pub timeout_rules: Vec<RawTimeoutRule>,
}

/// The validated configuration the library runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file this came from; `None` for built-in defaults.
    pub source: Option<PathBuf>,
    /// The config file's `database` URL, if any.
    pub database: Option<String>,
    /// `sqlite.root`, resolved against the config file's directory.
    pub sqlite_root: Option<PathBuf>,
    /// The `duckdb` section: settings a DuckDB database opens with.
    pub duckdb: DuckdbConfig,
    pub connection: ConnectionConfig,
    pub pool: PoolConfig,
    /// Every query runs in a `READ ONLY` transaction on sessions with
    /// `default_transaction_read_only = on`. Default: true. The one setting
    /// of read-only mode: what the engine and the backends are given.
    pub read_only: bool,
    pub logging: LoggingConfig,
    pub query: QueryConfig,
    /// What the guard allows. Its `read_only` stays off here: read-only mode
    /// is `read_only`, the setting, and the engine puts it into the policy it
    /// gives the guard (`Engine::new`), so no second copy needs keeping equal.
    pub protection: Policy,
    /// Prompts appended to matching error messages.
    pub error_prompts: Vec<ErrorPrompt>,
    /// Replacements applied to every string value of a result.
    pub sanitization: Vec<SanitizeRule>,
    pub hooks: HooksConfig,
    /// `pgmcp serve --http`'s settings (the `server` section).
    pub http: HttpConfig,
    /// The fields environment variables set over the file, in the order
    /// applied (see [`Config::with_environment`]).
    pub overrides: Vec<Override>,
}

/// Hooks by stage, each with its effective timeout.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HooksConfig {
    pub before_query: Vec<Hook>,
    pub after_query: Vec<Hook>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PoolConfig {
    /// Most connections, and so most calls running at once. Default 4.
    pub max_conns: usize,
    /// Most calls waiting for a connection at once; a call past it is
    /// refused at once rather than held. Default 1,000 (their SQL and
    /// parameters are bounded together too: [`crate::pipeline::WAITING_BYTES`]).
    pub max_waiting: usize,
    /// A connection older than this is closed instead of reused. Default 1 h.
    pub max_conn_lifetime: Duration,
    /// An idle connection unused for this long is closed. Default 10 min.
    pub max_conn_idle: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogOutput {
    Stderr,
    File(PathBuf),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoggingConfig {
    pub level: LogLevel,
    pub format: LogFormat,
    pub output: LogOutput,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueryConfig {
    pub default_timeout: Duration,
    pub list_tables_timeout: Duration,
    pub describe_table_timeout: Duration,
    /// Most rows a `query` call returns; reading stops there. Default 500.
    pub max_rows: usize,
    /// Rows a `query` call without `limit` returns; `None` means `max_rows`.
    /// Never more than `max_rows`.
    pub default_limit: Option<usize>,
    /// Most bytes of JSON any tool's answer holds, the whole answer counted
    /// (a `query` result is cut at whole rows). Default 50,000: a client
    /// such as Claude Code shows a tool result of up to 50,000 characters to
    /// the model, and saves a longer one to a file instead.
    pub max_result_length: usize,
    /// Longest SQL text accepted, in characters. Default 100,000.
    pub max_sql_length: usize,
    /// Most bytes of parameter values one call may send. Default 1 MiB.
    pub max_params_bytes: usize,
    /// Per-query timeouts by pattern; the first match wins.
    pub timeout_rules: Vec<TimeoutRule>,
}

/// The per-directory config older versions found on their own; now only read
/// when named by `--config` or `PGMCP_CONFIG_PATH`.
pub const LOCAL_CONFIG: &str = ".pgmcp/config.json";

/// Which file to read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigLocation {
    /// Named by `--config` or `PGMCP_CONFIG_PATH`: it must exist.
    Explicit(PathBuf),
    /// Found at a default location.
    Found(PathBuf),
    /// Nothing found: built-in defaults.
    BuiltIn,
}

impl ConfigLocation {
    /// Apply the resolution order. `flag` is `--config`, `env_path` is
    /// `PGMCP_CONFIG_PATH`.
    pub fn resolve(flag: Option<&Path>, env_path: Option<&str>) -> ConfigLocation {
        if let Some(path) = flag {
            return ConfigLocation::Explicit(path.to_owned());
        }
        if let Some(path) = env_path.filter(|p| !p.is_empty()) {
            return ConfigLocation::Explicit(PathBuf::from(path));
        }
        Self::candidates()
            .into_iter()
            .find(|p| p.is_file())
            .map_or(ConfigLocation::BuiltIn, ConfigLocation::Found)
    }

    /// The default locations, in the order they are tried: the person's own
    /// config dir, never the working directory.
    pub fn candidates() -> Vec<PathBuf> {
        // A relative HOME would make the config dir relative to the working
        // directory, the one place never searched.
        dirs::config_dir()
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join("pgmcp").join("config.json"))
            .into_iter()
            .collect()
    }

    /// `./.pgmcp/config.json` when it exists and is not the file `used`: older
    /// versions read it, so its owner may expect it to apply.
    pub fn ignored_local(used: Option<&Path>) -> Option<PathBuf> {
        let local = Path::new(LOCAL_CONFIG);
        if !local.is_file() {
            return None;
        }
        let same = |used: &Path| match (std::fs::canonicalize(used), std::fs::canonicalize(local)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        match used {
            Some(used) if same(used) => None,
            _ => Some(local.to_owned()),
        }
    }

    /// The settings in effect, layered in their one order: the built-in
    /// defaults, then the file (if any), then the environment. `env` reads
    /// a variable, an empty one being unset (`crate::environment::var`).
    pub fn load(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, LoadError> {
        Ok(self.load_file()?.with_environment(env)?)
    }

    /// The defaults and the file, without the environment: what logging is
    /// set up from when the environment layer fails.
    pub fn load_file(&self) -> Result<Config, ConfigError> {
        match self {
            ConfigLocation::Explicit(path) | ConfigLocation::Found(path) => Config::load(path),
            ConfigLocation::BuiltIn => Ok(Config::builtin()),
        }
    }
}

/// The longest message a client may send, in bytes: a call at the query
/// limits, written as JSON. A character is up to 4 bytes; JSON escapes a
/// byte in at most 6.
pub fn longest_message(query: &QueryConfig) -> usize {
    let sql = query.max_sql_length.saturating_mul(4 * 6);
    let params = query.max_params_bytes.saturating_mul(6);
    sql.saturating_add(params).saturating_add(64 << 10).max(1 << 20)
}

impl Config {
    /// The longest message a client may send, in bytes.
    pub fn longest_message(&self) -> usize {
        longest_message(&self.query)
    }

    /// The request-body memory `pgmcp serve --http` holds at most, in bytes:
    /// `server.max_body_memory_mb`, or by default [`DEFAULT_BODY_MEMORY`]
    /// or one longest message, whichever is larger.
    pub fn body_memory(&self) -> usize {
        self.http
            .max_body_memory
            .unwrap_or_else(|| DEFAULT_BODY_MEMORY.max(self.longest_message()))
    }

    /// What pgmcp runs with when no config file exists: [`RawConfig::defaults`]
    /// alone, validated like a file (read-only, 30 s queries, 10 s catalog
    /// calls, 4 connections, 500 rows).
    pub fn builtin() -> Config {
        match RawConfig::default().validate(None) {
            Ok(config) => config,
            // The defaults are constants, and a unit test validates them.
            Err(e) => unreachable!("the built-in defaults are invalid: {e}"),
        }
    }

    /// The environment layer, over the file: the settings a desktop bundle
    /// passes as variables. `PGMCP_READ_ONLY` (`true`/`false`) sets
    /// `server.read_only`; `PGMCP_READ_ONLY_AS_LOGIN` (`true`/`false`) sets
    /// `connection.read_only_as_login`; `PGMCP_MAX_ROWS` (a whole number above 0) sets
    /// `query.max_rows`, and lowers `query.default_limit` to it when the file
    /// set that higher; `PGMCP_DEMO` (`true`/`false`), when on, sets
    /// `server.read_only` whatever `PGMCP_READ_ONLY` says (the database it
    /// names is chosen by `crate::backend::named`). Each one applied is
    /// recorded in `overrides`.
    pub fn with_environment(mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, EnvError> {
        // `true`/`false` variables: the setting each sets, recorded.
        let switch = |variable: &'static str, field: &'static str, overrides: &mut Vec<Override>| {
            let Some(text) = env(variable) else {
                return Ok(None);
            };
            let value = crate::environment::switch(&text).ok_or_else(|| EnvError {
                variable,
                message: format!("{} is not true or false", mistake::quoted(&text)),
            })?;
            overrides.push(Override {
                variable,
                field,
                value: value.to_string(),
            });
            Ok(Some(value))
        };
        if let Some(read_only) = switch("PGMCP_READ_ONLY", "server.read_only", &mut self.overrides)? {
            self.read_only = read_only;
        }
        // The demo shop is served read-only whatever PGMCP_READ_ONLY says:
        // it is there to look at (see `crate::demo`).
        if let Some(text) = env("PGMCP_DEMO") {
            let demo = crate::environment::switch(&text).ok_or_else(|| EnvError {
                variable: "PGMCP_DEMO",
                message: format!("{} is not true or false", mistake::quoted(&text)),
            })?;
            if demo {
                self.read_only = true;
                self.overrides.push(Override {
                    variable: "PGMCP_DEMO",
                    field: "server.read_only",
                    value: true.to_string(),
                });
            }
        }
        // With connection.role set, queries run as that role either way.
        if let Some(as_login) = switch(
            "PGMCP_READ_ONLY_AS_LOGIN",
            "connection.read_only_as_login",
            &mut self.overrides,
        )? {
            self.connection.read_only_as_login = as_login;
        }
        if let Some(text) = env("PGMCP_MAX_ROWS") {
            let max_rows = text
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| EnvError {
                    variable: "PGMCP_MAX_ROWS",
                    message: format!("{} is not a whole number greater than 0", mistake::quoted(&text)),
                })?;
            self.query.max_rows = max_rows;
            // The cap wins: a call without `limit` never gets more than one with it.
            self.query.default_limit = self.query.default_limit.map(|limit| limit.min(max_rows));
            self.overrides.push(Override {
                variable: "PGMCP_MAX_ROWS",
                field: "query.max_rows",
                value: max_rows.to_string(),
            });
        }
        Ok(self)
    }

    /// Read and validate a config file, refusing it, or a hook program it
    /// names, when someone other than its owner could have changed it (see
    /// `crate::trust`).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let fail = |field: Option<String>, message: String| ConfigError {
            file: Some(path.to_owned()),
            field,
            message,
        };
        let unreadable = |e: std::io::Error| fail(None, format!("cannot read the file: {e}"));
        let mut file = std::fs::File::open(path).map_err(unreadable)?;
        trust::check_file(&file, path).map_err(|e| fail(None, e.to_string()))?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(unreadable)?;
        // What the config names is found next to it: from an absolute
        // path, so hooks (which run in `/`) find it too.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let mut config = Config::from_json(&text, Some(&absolute))?;
        config.source = Some(path.to_owned());
        for (stage, hooks) in [
            ("before_query", &mut config.hooks.before_query),
            ("after_query", &mut config.hooks.after_query),
        ] {
            for (i, hook) in hooks.iter_mut().enumerate() {
                // A program that is not there fails when the hook runs (and
                // `check` reports it); one that is there must be trusted, and
                // is what runs (a bare name is not looked up again).
                if let Some(program) = hook.program() {
                    trust::check_path(&program)
                        .map_err(|e| fail(Some(format!("hooks.{stage}[{i}].command")), e.to_string()))?;
                    hook.command = program;
                }
                // A script handed to an interpreter (`"command": "python3",
                // "args": ["hooks/check.py"]`) is as much the hook as the
                // program: a relative argument naming a file next to the
                // config becomes that file's path (hooks run in `/`, never
                // in the directory pgmcp was started in), and an argument
                // naming an existing file is checked too.
                for (j, arg) in hook.args.iter_mut().enumerate() {
                    let beside = absolute.parent().map(|dir| dir.join(&*arg));
                    if Path::new(arg).is_relative()
                        && let Some(beside) = beside.filter(|b| b.is_file())
                    {
                        *arg = beside.to_string_lossy().into_owned();
                    }
                    let named = Path::new(arg);
                    if named.is_absolute() && named.is_file() {
                        trust::check_path(named)
                            .map_err(|e| fail(Some(format!("hooks.{stage}[{i}].args[{j}]")), e.to_string()))?;
                    }
                }
            }
        }
        Ok(config)
    }

    /// Parse and validate config text; `file` is only used in error messages.
    pub fn from_json(text: &str, file: Option<&Path>) -> Result<Config, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw = serde_path_to_error::deserialize::<_, RawConfig>(&mut *de).map_err(|e| misread(text, &e, file))?;
        // Text after the object is a mistake too (a second object pasted in).
        de.end().map_err(|e| ConfigError {
            file: file.map(Path::to_owned),
            field: None,
            message: mistake::syntax(&e),
        })?;
        raw.validate(file)
    }
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
            protection: RawProtection {
                switches: RULES.map(|spec| spec.flag.map(|_| spec.default)),
                // `None`: the guard's own list (`Policy::default`).
                blocked_functions: None,
                read_only_functions: None,
            },
            ..RawConfig::default()
        }
    }

    /// `self` layered over `base`: every field `self` sets wins, section by
    /// section; a list is replaced whole, never merged.
    pub fn over(self, base: RawConfig) -> RawConfig {
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
        let (top, under) = match (serde_json::to_value(&self), serde_json::to_value(&base)) {
            (Ok(top), Ok(under)) => (top, under),
            // Plain structs of options, strings and numbers always serialize.
            _ => return self,
        };
        serde_json::from_value(layer(top, under)).unwrap_or(self)
    }

    /// Layer the file's contents over [`RawConfig::defaults`] and turn them
    /// into a [`Config`], or name the first bad field. Each section is
    /// validated on its own, in the order a file's errors have always been
    /// reported, so the first bad field named is the same.
    pub fn validate(self, file: Option<&Path>) -> Result<Config, ConfigError> {
        let raw = self.over(RawConfig::defaults());
        let pool = pool(raw.pool, file)?;
        let query = query(raw.query, file)?;
        let error_prompts = error_prompts(&raw.error_prompts, file)?;
        let sanitization = sanitization(&raw.sanitization, file)?;
        let hooks = hooks(&raw.hooks, file)?;
        let connection = connection(raw.connection, file)?;
        let logging = logging(&raw.logging, file)?;
        let read_only = server(&raw.server);
        let http = http(&raw.server, file)?;
        let protection = protection(raw.protection, file)?;
        let database = database(raw.database, file)?;
        let sqlite_root = sqlite(&raw.sqlite, file)?;
        let duckdb = duckdb(raw.duckdb, file)?;
        let longest = longest_message(&query);
        if let Some(budget) = http.max_body_memory.filter(|b| *b < longest) {
            return Err(fail(
                file,
                "server.max_body_memory_mb",
                format!(
                    "{} MiB cannot hold one request of the longest size query.max_sql_length and \
                     query.max_params_bytes allow ({longest} bytes): set it to at least {}",
                    budget >> 20,
                    longest.div_ceil(1 << 20)
                ),
            ));
        }
        Ok(Config {
            source: file.map(Path::to_owned),
            database,
            sqlite_root,
            duckdb,
            connection,
            pool,
            read_only,
            logging,
            query,
            protection,
            error_prompts,
            sanitization,
            hooks,
            http,
            overrides: Vec::new(),
        })
    }
}

/// Why `text` does not read as a [`RawConfig`], in the words of the person
/// who wrote it. The text is read straight into the types first (what a
/// file that reads costs); only when that fails is it read again, from its
/// parsed form, to word the mistake: see [`crate::mistake`].
fn misread(text: &str, first: &serde_path_to_error::Error<serde_json::Error>, file: Option<&Path>) -> ConfigError {
    let fail = |field: String, message: String| ConfigError {
        file: file.map(Path::to_owned),
        field: (!field.is_empty()).then_some(field),
        message,
    };
    if !first.inner().is_data() {
        return fail(String::new(), mistake::syntax(first.inner()));
    }
    let doc: serde_json::Value = match serde_json::from_str(text) {
        Ok(doc) => doc,
        // A type mistake before a syntax mistake further on: the syntax first.
        Err(e) => return fail(String::new(), mistake::syntax(&e)),
    };
    match mistake::read::<RawConfig>(&doc) {
        Err(m) => fail(m.path, m.message),
        // Read from the text it fails, read from the parsed value it does
        // not: the value keeps only the last of a key written twice in one
        // object, which the text showed (serde: "duplicate field").
        Ok(_) => {
            let path = first.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let message = first.inner().to_string();
            match message
                .strip_prefix("duplicate field `")
                .and_then(|rest| rest.split('`').next())
            {
                Some(key) if path.is_empty() => fail(key.to_owned(), "given more than once: keep one".into()),
                Some(key) => fail(format!("{path}.{key}"), "given more than once: keep one".into()),
                None => fail(path, message),
            }
        }
    }
}

/// An error naming `field` of the config `file`.
fn fail(file: Option<&Path>, field: &str, message: String) -> ConfigError {
    ConfigError {
        file: file.map(Path::to_owned),
        field: Some(field.to_owned()),
        message,
    }
}

/// A whole number above 0. Only fields without a default can be missing
/// once the file is layered over [`RawConfig::defaults`].
fn positive(file: Option<&Path>, field: &str, value: Option<i64>) -> Result<u64, ConfigError> {
    match value {
        None => Err(fail(
            file,
            field,
            "required: a whole number of seconds greater than 0".into(),
        )),
        Some(v) if v <= 0 => Err(fail(file, field, format!("must be greater than 0, got {v}"))),
        Some(v) => Ok(v as u64),
    }
}

fn regex(file: Option<&Path>, field: &str, pattern: &str) -> Result<Regex, ConfigError> {
    Regex::new(pattern).map_err(|e| fail(file, field, format!("invalid regex {pattern:?}: {e}")))
}

/// The `pool` section.
fn pool(raw: RawPool, file: Option<&Path>) -> Result<PoolConfig, ConfigError> {
    let seconds = |field: &str, value: Option<i64>| positive(file, field, value).map(Duration::from_secs);
    Ok(PoolConfig {
        max_conns: positive(file, "pool.max_conns", raw.max_conns)? as usize,
        max_waiting: positive(file, "pool.max_waiting", raw.max_waiting)? as usize,
        max_conn_lifetime: seconds("pool.max_conn_lifetime_seconds", raw.max_conn_lifetime_seconds)?,
        max_conn_idle: seconds("pool.max_conn_idle_seconds", raw.max_conn_idle_seconds)?,
    })
}

/// The `query` section, its timeout rules included.
fn query(raw: RawQuery, file: Option<&Path>) -> Result<QueryConfig, ConfigError> {
    let seconds = |field: &str, value: Option<i64>| positive(file, field, value).map(Duration::from_secs);
    let count = |field: &str, value: Option<i64>| positive(file, field, value).map(|n| n as usize);
    let query = QueryConfig {
        default_timeout: seconds("query.default_timeout_seconds", raw.default_timeout_seconds)?,
        list_tables_timeout: seconds("query.list_tables_timeout_seconds", raw.list_tables_timeout_seconds)?,
        describe_table_timeout: seconds(
            "query.describe_table_timeout_seconds",
            raw.describe_table_timeout_seconds,
        )?,
        max_rows: count("query.max_rows", raw.max_rows)?,
        default_limit: match raw.default_limit {
            None => None,
            value => Some(count("query.default_limit", value)?),
        },
        max_result_length: count("query.max_result_length", raw.max_result_length)?,
        max_sql_length: count("query.max_sql_length", raw.max_sql_length)?,
        max_params_bytes: count("query.max_params_bytes", raw.max_params_bytes)?,
        timeout_rules: raw
            .timeout_rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let field = format!("query.timeout_rules[{i}]");
                Ok(TimeoutRule {
                    pattern: regex(file, &format!("{field}.pattern"), &r.pattern)?,
                    timeout: seconds(&format!("{field}.timeout_seconds"), Some(r.timeout_seconds))?,
                })
            })
            .collect::<Result<_, ConfigError>>()?,
    };
    if let Some(limit) = query.default_limit
        && limit > query.max_rows
    {
        return Err(fail(
            file,
            "query.default_limit",
            format!(
                "{limit} is more than query.max_rows ({}): a call without limit cannot get more than one with it",
                query.max_rows
            ),
        ));
    }
    Ok(query)
}

/// The `error_prompts` list.
fn error_prompts(raw: &[RawErrorPrompt], file: Option<&Path>) -> Result<Vec<ErrorPrompt>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            Ok(ErrorPrompt {
                pattern: regex(file, &format!("error_prompts[{i}].pattern"), &r.pattern)?,
                message: r.message.clone(),
            })
        })
        .collect()
}

/// The `sanitization` list.
fn sanitization(raw: &[RawSanitization], file: Option<&Path>) -> Result<Vec<SanitizeRule>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            Ok(SanitizeRule {
                pattern: regex(file, &format!("sanitization[{i}].pattern"), &r.pattern)?,
                replacement: r.replacement.clone(),
                description: r.description.clone(),
            })
        })
        .collect()
}

/// The `hooks` section: each hook with its effective timeout, a relative
/// command taken from the config file's directory.
fn hooks(raw: &RawHooks, file: Option<&Path>) -> Result<HooksConfig, ConfigError> {
    let any_hooks = !raw.before_query.is_empty() || !raw.after_query.is_empty();
    let hook_default = match raw.default_timeout_seconds {
        None if !any_hooks => None,
        value => Some(positive(file, "hooks.default_timeout_seconds", value)?),
    };
    let hook_list = |stage: &str, raw: &[RawHook]| -> Result<Vec<Hook>, ConfigError> {
        raw.iter()
            .enumerate()
            .map(|(i, h)| {
                let field = format!("hooks.{stage}[{i}]");
                if h.command.trim().is_empty() {
                    return Err(fail(
                        file,
                        &format!("{field}.command"),
                        "must name an executable".into(),
                    ));
                }
                let timeout = match h.timeout_seconds {
                    None | Some(0) => hook_default.unwrap_or(0),
                    value => positive(file, &format!("{field}.timeout_seconds"), value)?,
                };
                Ok(Hook {
                    pattern: regex(file, &format!("{field}.pattern"), &h.pattern)?,
                    command: hook_command(&h.command, file),
                    args: h.args.clone(),
                    timeout: Duration::from_secs(timeout),
                })
            })
            .collect()
    };
    Ok(HooksConfig {
        before_query: hook_list("before_query", &raw.before_query)?,
        after_query: hook_list("after_query", &raw.after_query)?,
    })
}

/// The `connection` section, as PostgreSQL's backend takes it: `sslmode`
/// read into an [`SslMode`], the files it names found next to the config
/// file, as its hooks are, never in whatever directory pgmcp was started in.
fn connection(raw: RawConnection, file: Option<&Path>) -> Result<ConnectionConfig, ConfigError> {
    if let Some(port) = raw.port
        && port == 0
    {
        return Err(fail(file, "connection.port", "must be between 1 and 65535".into()));
    }
    let sslmode = match raw.sslmode.as_deref() {
        None => None,
        Some(mode) => Some(SslMode::from_name(mode).ok_or_else(|| {
            let names = SslMode::NAMES.join(", ");
            fail(
                file,
                "connection.sslmode",
                format!("unknown sslmode {}: use {names}", mistake::quoted(mode)),
            )
        })?),
    };
    for (field, value) in [
        ("connection.sslrootcert", &raw.sslrootcert),
        ("connection.sslcert", &raw.sslcert),
        ("connection.sslkey", &raw.sslkey),
        ("connection.passfile", &raw.passfile),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(fail(
                file,
                field,
                "must be a file path (leave the field out for the default)".into(),
            ));
        }
    }
    if let Some(problem) = raw.role.as_deref().and_then(role_name_problem) {
        return Err(fail(file, "connection.role", problem));
    }
    let read_only_as_login = raw.read_only_as_login.unwrap_or(false);
    if read_only_as_login && raw.role.is_some() {
        return Err(fail(
            file,
            "connection.read_only_as_login",
            "is true, but connection.role is set, and queries run as connection.role either way: remove one of them"
                .into(),
        ));
    }
    let beside = |value: Option<String>| match (value, file.and_then(Path::parent)) {
        (Some(v), Some(dir)) if v != "system" && Path::new(&v).is_relative() => {
            Some(dir.join(&v).to_string_lossy().into_owned())
        }
        (value, _) => value,
    };
    Ok(ConnectionConfig {
        host: raw.host,
        port: raw.port,
        dbname: raw.dbname,
        user: raw.user,
        sslmode,
        application_name: raw.application_name,
        connect_timeout_seconds: raw.connect_timeout_seconds,
        sslrootcert: beside(raw.sslrootcert),
        sslcert: beside(raw.sslcert),
        sslkey: beside(raw.sslkey),
        passfile: beside(raw.passfile),
        role: raw.role,
        read_only_as_login,
    })
}

/// The `logging` section.
fn logging(raw: &RawLogging, file: Option<&Path>) -> Result<LoggingConfig, ConfigError> {
    Ok(LoggingConfig {
        level: match raw.level.as_deref() {
            None => LogLevel::Info,
            Some("error") => LogLevel::Error,
            Some("warn") => LogLevel::Warn,
            Some("info") => LogLevel::Info,
            Some("debug") => LogLevel::Debug,
            Some("trace") => LogLevel::Trace,
            Some(other) => {
                return Err(fail(
                    file,
                    "logging.level",
                    format!(
                        "unknown level {}: use error, warn, info, debug or trace",
                        mistake::quoted(other)
                    ),
                ));
            }
        },
        format: match raw.format.as_deref() {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => {
                return Err(fail(
                    file,
                    "logging.format",
                    format!("unknown format {}: use text or json", mistake::quoted(other)),
                ));
            }
        },
        output: match raw.output.as_deref() {
            None | Some("") => default_log_output(),
            Some("stderr") => LogOutput::Stderr,
            Some("stdout") => {
                return Err(fail(
                    file,
                    "logging.output",
                    "stdout carries the MCP protocol and nothing else: use a file path or \"stderr\"".into(),
                ));
            }
            Some(path) => LogOutput::File(PathBuf::from(path)),
        },
    })
}

/// `server.host`'s default: loopback, where no token is required.
const DEFAULT_HTTP_HOST: &str = "127.0.0.1";

/// `server.max_sessions`'s default.
const DEFAULT_MAX_SESSIONS: usize = 100;

/// How `pgmcp serve --http` listens and whom it lets in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// `server.host`: the address to listen on. Default `127.0.0.1`.
    pub host: String,
    /// `server.port`; `--http` can give it instead.
    pub port: Option<u16>,
    /// `GET` this path answers `200 {"status":"ok"}` while pgmcp runs, and
    /// `<path>/ready` whether the database answers. `None`: disabled.
    pub health_check_path: Option<String>,
    /// `server.auth_tokens_file`: bearer tokens, one per line, resolved
    /// against the config file's directory.
    pub auth_tokens_file: Option<PathBuf>,
    /// Browser origins (`https://app.example.com:443`) whose requests are
    /// served; any other `Origin` gets `403`.
    pub allowed_origins: Vec<String>,
    /// `server.max_sessions`: most 2025-protocol sessions open at once.
    /// Default 100.
    pub max_sessions: usize,
    /// `server.max_body_memory_mb`, in bytes: most request-body bytes held
    /// at once across all clients. `None`: the default, [`DEFAULT_BODY_MEMORY`]
    /// or one longest request, whichever is larger.
    pub max_body_memory: Option<usize>,
}

/// `server.max_body_memory_mb`'s default, in bytes.
pub const DEFAULT_BODY_MEMORY: usize = 64 << 20;

/// `server.max_body_memory_mb`'s largest value: 1 TiB, far past any
/// machine's memory, and well within what a semaphore can count.
const MAX_BODY_MEMORY_MB: usize = 1 << 20;

/// The `server` section's HTTP fields.
fn http(raw: &RawServer, file: Option<&Path>) -> Result<HttpConfig, ConfigError> {
    let port = match raw.port {
        None => None,
        Some(port) => Some(
            u16::try_from(port)
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| fail(file, "server.port", format!("{port} is not a TCP port (1 to 65535)")))?,
        ),
    };
    let health_check_path = match (raw.health_check_enabled, &raw.health_check_path) {
        (Some(false), _) => None,
        (_, Some(path)) if !path.starts_with('/') || path.len() < 2 || path == "/mcp" => {
            return Err(fail(
                file,
                "server.health_check_path",
                format!(
                    "{} must be a path of its own starting with \"/\", such as \"/health\"",
                    mistake::quoted(path)
                ),
            ));
        }
        (_, path) => path.clone(),
    };
    let base = file.and_then(Path::parent).unwrap_or(Path::new(""));
    let allowed_origins = raw.allowed_origins.clone().unwrap_or_default();
    if let Some(bad) = allowed_origins.iter().find(|o| *o != "null" && !o.contains("://")) {
        return Err(fail(
            file,
            "server.allowed_origins",
            format!(
                "{} has no scheme: write it as a browser sends it, such as \"https://app.example.com\"",
                mistake::quoted(bad)
            ),
        ));
    }
    let max_sessions = match raw.max_sessions {
        None => DEFAULT_MAX_SESSIONS,
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| fail(file, "server.max_sessions", format!("must be greater than 0, got {n}")))?,
    };
    let max_body_memory = match raw.max_body_memory_mb {
        None => None,
        Some(n) => Some(
            usize::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_BODY_MEMORY_MB).contains(n))
                .and_then(|n| n.checked_mul(1 << 20))
                .ok_or_else(|| {
                    fail(
                        file,
                        "server.max_body_memory_mb",
                        format!("must be a number of MiB from 1 to {MAX_BODY_MEMORY_MB}, got {n}"),
                    )
                })?,
        ),
    };
    Ok(HttpConfig {
        max_sessions,
        max_body_memory,
        host: raw.host.clone().unwrap_or_else(|| DEFAULT_HTTP_HOST.to_owned()),
        port,
        health_check_path,
        auth_tokens_file: raw.auth_tokens_file.as_ref().map(|f| base.join(f)),
        allowed_origins,
    })
}

/// The `server` section: read-only mode.
fn server(raw: &RawServer) -> bool {
    // Set by the defaults; anything but an explicit `false` fails safe.
    raw.read_only != Some(false)
}

/// The `protection` section: the guard's policy, read-only mode left off
/// (the engine sets it from `server.read_only`).
fn protection(p: RawProtection, file: Option<&Path>) -> Result<Policy, ConfigError> {
    let mut policy = Policy::default();
    if let Some(list) = p.blocked_functions {
        policy.blocked_functions =
            function_patterns("protection.blocked_functions", &list).map_err(|(f, m)| fail(file, &f, m))?;
    }
    policy.read_only_functions = function_signatures(
        "protection.read_only_functions",
        &p.read_only_functions.unwrap_or_default(),
    )
    .map_err(|(f, m)| fail(file, &f, m))?;
    for (rule, _) in Rule::switches() {
        policy.allow(rule, p.switches[rule as usize].unwrap_or(rule.spec().default));
    }
    Ok(policy)
}

/// The `database` URL. What it names is decided with the other database
/// settings (see [`crate::backend::named`]): one given by `--database` or the
/// environment wins, so a URL here is not read further at load.
fn database(raw: Option<String>, file: Option<&Path>) -> Result<Option<String>, ConfigError> {
    if let Some(url) = &raw
        && url.trim().is_empty()
    {
        return Err(fail(file, "database", "is empty: remove it or give a URL".into()));
    }
    Ok(raw)
}

/// The `sqlite` section: `root`, resolved against the config file's directory.
fn sqlite(raw: &RawSqlite, file: Option<&Path>) -> Result<Option<PathBuf>, ConfigError> {
    match raw.root.as_deref() {
        None => Ok(None),
        Some("") => Err(fail(
            file,
            "sqlite.root",
            "is empty: remove it or give a directory".into(),
        )),
        Some(root) => {
            let path = match file.and_then(Path::parent) {
                Some(dir) if Path::new(root).is_relative() => dir.join(root),
                _ => PathBuf::from(root),
            };
            if !path.is_dir() {
                return Err(fail(
                    file,
                    "sqlite.root",
                    format!("{} is not a directory", path.display()),
                ));
            }
            Ok(Some(path))
        }
    }
}

/// The `duckdb` section, as DuckDB's backend takes it.
fn duckdb(raw: RawDuckdb, file: Option<&Path>) -> Result<DuckdbConfig, ConfigError> {
    Ok(DuckdbConfig {
        memory_limit: match raw.memory_limit {
            None => None,
            Some(limit) if memory_size(&limit) => Some(limit.trim().to_owned()),
            Some(limit) => {
                return Err(fail(
                    file,
                    "duckdb.memory_limit",
                    format!(
                        "{} is not a size: use a number and a unit, such as \"1GB\" or \"512MiB\"",
                        mistake::quoted(&limit)
                    ),
                ));
            }
        },
        threads: match raw.threads {
            None => None,
            Some(n) if n > 0 => Some(n as u64),
            Some(n) => {
                return Err(fail(file, "duckdb.threads", format!("must be greater than 0, got {n}")));
            }
        },
    })
}

/// What is wrong with a role name, if anything. It is used exactly as
/// written (case and spaces kept, quoted as an identifier), so the checks are
/// only those PostgreSQL would otherwise fail on, or silently change.
fn role_name_problem(role: &str) -> Option<String> {
    if role.trim().is_empty() {
        Some("is empty: remove it to run as the login, or name a role".to_owned())
    } else if role.contains('\0') {
        Some("contains a NUL character".to_owned())
    } else if role.len() > 63 {
        // PostgreSQL would truncate it (with only a notice) and use another name.
        Some(format!(
            "is {} bytes long; PostgreSQL names are at most 63 bytes",
            role.len()
        ))
    } else {
        None
    }
}

/// A list of function names, each optionally ending in `*` (a prefix).
/// Errors name the entry: (`field[i]`, message).
fn function_patterns(field: &str, list: &[String]) -> Result<Vec<FunctionPattern>, (String, String)> {
    for (i, name) in list.iter().enumerate() {
        let bare = name.strip_suffix('*').unwrap_or(name);
        if bare.is_empty() || !bare.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            return Err((
                format!("{field}[{i}]"),
                format!(
                    "{} is not a function name (letters, digits and _, optionally ending in *)",
                    mistake::quoted(name)
                ),
            ));
        }
    }
    Ok(list.iter().map(|n| FunctionPattern::new(n)).collect())
}

/// Functions vouched for by full signature, `schema.name(argument types)`
/// as pgmcp's refusal writes it: a bare name or a pattern would also vouch
/// for an overload someone creates later, in any schema.
fn function_signatures(field: &str, list: &[String]) -> Result<Vec<FunctionPattern>, (String, String)> {
    for (i, signature) in list.iter().enumerate() {
        let shaped = signature
            .trim()
            .strip_suffix(')')
            .and_then(|s| s.split_once('('))
            .and_then(|(name, _)| name.rsplit_once('.'))
            .is_some_and(|(schema, name)| !schema.trim().is_empty() && !name.trim().is_empty());
        if !shaped || signature.contains('*') {
            return Err((
                format!("{field}[{i}]"),
                format!(
                    "{} is not a function's full signature: write schema.name(argument types), \
                     e.g. \"public.monthly_report(integer)\", as read-only mode's refusal names it \
                     (a bare name or a pattern would vouch for any function of that name, one created later included)",
                    mistake::quoted(signature)
                ),
            ));
        }
    }
    Ok(list.iter().map(|s| FunctionPattern::new(s.trim())).collect())
}

/// A hook command with a `/` in it is a path; a relative one is taken from the
/// config file's directory, since desktop clients start pgmcp from anywhere.
fn hook_command(command: &str, file: Option<&Path>) -> PathBuf {
    let path = PathBuf::from(command);
    match file.and_then(Path::parent) {
        Some(dir) if command.contains('/') && path.is_relative() => dir.join(path),
        _ => path,
    }
}

/// `<state dir>/pgmcp/pgmcp.log`: `~/.local/state` on Linux, `~/Library/Application
/// Support` on macOS, `%LOCALAPPDATA%` on Windows; stderr without one.
pub fn default_log_output() -> LogOutput {
    // A relative directory (HOME=h) would put the log in the directory pgmcp
    // was started in; a shared temp dir is no place for it either: without
    // a home of its own, the log goes to stderr.
    match dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .filter(|dir| dir.is_absolute())
    {
        Some(dir) => LogOutput::File(dir.join("pgmcp").join("pgmcp.log")),
        None => LogOutput::Stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10}}"#;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_json(text, Some(Path::new("/etc/pgmcp.json")))
    }

    #[test]
    fn minimal_file_gets_safe_defaults() {
        let c = load(MINIMAL).unwrap();
        assert!(c.read_only, "read-only unless the file says otherwise");
        assert_eq!(c.pool.max_conns, 4);
        assert_eq!(c.query.default_timeout, Duration::from_secs(30));
        assert_eq!(c.query.max_rows, 500);
        assert_eq!(c.source.as_deref(), Some(Path::new("/etc/pgmcp.json")));
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

    #[test]
    fn the_environment_layers_over_the_file() {
        let file =
            load(r#"{"server": {"read_only": false}, "query": {"max_rows": 900, "default_limit": 800}}"#).unwrap();
        let with = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
            file.clone()
                .with_environment(&|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        let c = with(&[]).unwrap();
        assert_eq!((c.read_only, c.query.max_rows, c.overrides.len()), (false, 900, 0));
        let c = with(&[("PGMCP_READ_ONLY_AS_LOGIN", " true ")]).unwrap();
        assert!(c.connection.read_only_as_login);
        assert_eq!(c.overrides[0].field, "connection.read_only_as_login");
        let c = with(&[("PGMCP_READ_ONLY", "TRUE"), ("PGMCP_MAX_ROWS", "100")]).unwrap();
        assert!(c.read_only);
        assert_eq!((c.query.max_rows, c.query.default_limit), (100, Some(100)));
        let shown: Vec<_> = c
            .overrides
            .iter()
            .map(|o| (o.variable, o.field, o.value.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("PGMCP_READ_ONLY", "server.read_only", "true"),
                ("PGMCP_MAX_ROWS", "query.max_rows", "100")
            ]
        );
        // The demo is read-only whatever PGMCP_READ_ONLY says; off is no override.
        let c = with(&[("PGMCP_READ_ONLY", "false"), ("PGMCP_DEMO", "true")]).unwrap();
        assert!(c.read_only);
        assert_eq!(
            c.overrides.last().map(|o| (o.variable, o.field)),
            Some(("PGMCP_DEMO", "server.read_only"))
        );
        let c = with(&[("PGMCP_DEMO", "False")]).unwrap();
        assert_eq!((c.read_only, c.overrides.len()), (false, 0));
        for (variable, value, message) in [
            ("PGMCP_DEMO", "1", "PGMCP_DEMO: \"1\" is not true or false"),
            (
                "PGMCP_READ_ONLY",
                "yes please",
                "PGMCP_READ_ONLY: \"yes please\" is not true or false",
            ),
            (
                "PGMCP_READ_ONLY_AS_LOGIN",
                "1",
                "PGMCP_READ_ONLY_AS_LOGIN: \"1\" is not true or false",
            ),
            (
                "PGMCP_MAX_ROWS",
                "abc",
                "PGMCP_MAX_ROWS: \"abc\" is not a whole number greater than 0",
            ),
            (
                "PGMCP_MAX_ROWS",
                "0",
                "PGMCP_MAX_ROWS: \"0\" is not a whole number greater than 0",
            ),
            (
                "PGMCP_MAX_ROWS",
                "-5",
                "PGMCP_MAX_ROWS: \"-5\" is not a whole number greater than 0",
            ),
        ] {
            assert_eq!(with(&[(variable, value)]).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn full_file_is_read() {
        let c = load(
            r#"{
            "connection": {"host": "db", "port": 6432, "dbname": "shop", "user": "agent", "sslmode": "disable", "application_name": "me", "connect_timeout_seconds": 5},
            "pool": {"max_conns": 8, "max_conn_lifetime_seconds": 60, "max_conn_idle_seconds": 30},
            "server": {"read_only": false},
            "logging": {"level": "debug", "format": "json", "output": "/tmp/x.log"},
            "query": {"default_timeout_seconds": 5, "list_tables_timeout_seconds": 6, "describe_table_timeout_seconds": 7, "max_rows": 50}
        }"#,
        )
        .unwrap();
        assert_eq!(c.connection.port, Some(6432));
        assert_eq!(c.connection.role, None, "no role: statements run as the login");
        assert!(
            !c.connection.read_only_as_login,
            "a login that can do more than read runs read-only queries as pg_read_all_data"
        );
        assert_eq!(c.pool.max_conns, 8);
        assert!(!c.read_only);
        assert_eq!(c.logging.level, LogLevel::Debug);
        assert_eq!(c.logging.format, LogFormat::Json);
        assert_eq!(c.logging.output, LogOutput::File("/tmp/x.log".into()));
        assert_eq!(c.query.describe_table_timeout, Duration::from_secs(7));
        assert_eq!(c.query.max_rows, 50);
    }

    /// Each bad config, and the exact error a person sees.
    #[test]
    fn validation_errors_name_file_and_field() {
        let q = |extra: &str| {
            format!(
                r#"{{"query": {{"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10{extra}}}}}"#
            )
        };
        let cases: Vec<(String, &str)> = vec![
            (r#"{"query": {"default_timeout_seconds": "thirty"}}"#.into(), "config /etc/pgmcp.json: query.default_timeout_seconds: expected a whole number, found the text \"thirty\""),
            (r#"{"query": {"list_tables_timeout_seconds": 1.5}}"#.into(), "config /etc/pgmcp.json: query.list_tables_timeout_seconds: expected a whole number, found 1.5"),
            (r#"{"query": {"default_timeout_seconds": 0}}"#.into(), "config /etc/pgmcp.json: query.default_timeout_seconds: must be greater than 0, got 0"),
            (r#"{"query": {"default_timeout_seconds": -5}}"#.into(), "config /etc/pgmcp.json: query.default_timeout_seconds: must be greater than 0, got -5"),
            (r#"{"pool": {"max_waiting": -1}}"#.into(), "config /etc/pgmcp.json: pool.max_waiting: must be greater than 0, got -1"),
            (r#"{"query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 0}}"#.into(), "config /etc/pgmcp.json: query.describe_table_timeout_seconds: must be greater than 0, got 0"),
            (q(r#", "max_rows": 0"#), "config /etc/pgmcp.json: query.max_rows: must be greater than 0, got 0"),
            (format!(r#"{{"pool": {{"max_conns": 0}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: pool.max_conns: must be greater than 0, got 0"),
            (format!(r#"{{"logging": {{"level": "loud"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: logging.level: unknown level \"loud\": use error, warn, info, debug or trace"),
            (format!(r#"{{"logging": {{"output": "stdout"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: logging.output: stdout carries the MCP protocol and nothing else: use a file path or \"stderr\""),
            (format!(r#"{{"connection": {{"port": 0}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.port: must be between 1 and 65535"),
            (format!(r#"{{"connection": {{"sslmode": "on"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.sslmode: unknown sslmode \"on\": use disable, allow, prefer, require, verify-ca, verify-full"),
            (format!(r#"{{"connection": {{"sslrootcert": ""}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.sslrootcert: must be a file path (leave the field out for the default)"),
            (format!(r#"{{"connection": {{"read_only_as_login": "yes"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.read_only_as_login: expected true or false, found the text \"yes\""),
            (format!(r#"{{"connection": {{"read_only_as_login": true, "role": "rdr"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.read_only_as_login: is true, but connection.role is set, and queries run as connection.role either way: remove one of them"),
            (format!(r#"{{"connection": {{"role": " "}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.role: is empty: remove it to run as the login, or name a role"),
            (format!(r#"{{"connection": {{"role": "a\u0000b"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: connection.role: contains a NUL character"),
            (format!(r#"{{"connection": {{"role": "{}"}}, {}"#, "r".repeat(64), &MINIMAL[1..]), "config /etc/pgmcp.json: connection.role: is 64 bytes long; PostgreSQL names are at most 63 bytes"),
            (format!(r#"{{"database": " ", {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: database: is empty: remove it or give a URL"),
            (format!(r#"{{"sqlite": {{"root": ""}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: sqlite.root: is empty: remove it or give a directory"),
            (format!(r#"{{"sqlite": {{"root": "/no/such/pgmcp-dir"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: sqlite.root: /no/such/pgmcp-dir is not a directory"),
            (format!(r#"{{"sqlite": {{"path": "/tmp"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: sqlite.path: unknown field: sqlite's fields are root"),
            (q(r#", "default_limit": 0"#), "config /etc/pgmcp.json: query.default_limit: must be greater than 0, got 0"),
            (q(r#", "max_rows": 1000, "default_limit": 1001"#), "config /etc/pgmcp.json: query.default_limit: 1001 is more than query.max_rows (1000): a call without limit cannot get more than one with it"),
            (q(r#", "default_limit": 501"#), "config /etc/pgmcp.json: query.default_limit: 501 is more than query.max_rows (500): a call without limit cannot get more than one with it"),
            (format!(r#"{{"duckdb": {{"memory_limit": "lots"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: duckdb.memory_limit: \"lots\" is not a size: use a number and a unit, such as \"1GB\" or \"512MiB\""),
            (format!(r#"{{"duckdb": {{"memory_limit": "100"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: duckdb.memory_limit: \"100\" is not a size: use a number and a unit, such as \"1GB\" or \"512MiB\""),
            (format!(r#"{{"duckdb": {{"threads": 0}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: duckdb.threads: must be greater than 0, got 0"),
            (format!(r#"{{"server": {{"port": 70000}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.port: 70000 is not a TCP port (1 to 65535)"),
            (format!(r#"{{"server": {{"max_sessions": 0}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.max_sessions: must be greater than 0, got 0"),
            (format!(r#"{{"server": {{"max_body_memory_mb": 0}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.max_body_memory_mb: must be a number of MiB from 1 to 1048576, got 0"),
            (format!(r#"{{"server": {{"max_body_memory_mb": 2199023255552}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.max_body_memory_mb: must be a number of MiB from 1 to 1048576, got 2199023255552"),
            (format!(r#"{{"server": {{"max_body_memory_mb": 4}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.max_body_memory_mb: 4 MiB cannot hold one request of the longest size query.max_sql_length and query.max_params_bytes allow (8756992 bytes): set it to at least 9"),
            (format!(r#"{{"server": {{"health_check_path": "health"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.health_check_path: \"health\" must be a path of its own starting with \"/\", such as \"/health\""),
            (format!(r#"{{"server": {{"health_check_path": "/mcp"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.health_check_path: \"/mcp\" must be a path of its own starting with \"/\", such as \"/health\""),
            (format!(r#"{{"server": {{"allowed_origins": ["app.example.com"]}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: server.allowed_origins: \"app.example.com\" has no scheme: write it as a browser sends it, such as \"https://app.example.com\""),
            (format!(r#"{{"duckdb": {{"temp_directory": "/tmp"}}, {}"#, &MINIMAL[1..]), "config /etc/pgmcp.json: duckdb.temp_directory: unknown field: duckdb's fields are memory_limit, threads"),
        ];
        for (text, expected) in cases {
            assert_eq!(load(&text).unwrap_err().to_string(), expected, "{text}");
        }
    }

    #[test]
    fn http_settings_have_defaults_and_are_read() {
        let c = load(MINIMAL).unwrap();
        assert_eq!(
            c.http,
            HttpConfig {
                host: "127.0.0.1".into(),
                port: None,
                health_check_path: Some("/health".into()),
                auth_tokens_file: None,
                allowed_origins: vec![],
                max_sessions: 100,
                max_body_memory: None,
            }
        );
        let c = load(&format!(
            r#"{{"server": {{"host": "0.0.0.0", "port": 8080, "health_check_path": "/healthz", "auth_tokens_file": "tokens", "allowed_origins": ["https://app.example.com"], "max_sessions": 3, "max_body_memory_mb": 32}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap();
        assert_eq!(
            c.http,
            HttpConfig {
                host: "0.0.0.0".into(),
                port: Some(8080),
                health_check_path: Some("/healthz".into()),
                auth_tokens_file: Some(PathBuf::from("/etc/tokens")),
                allowed_origins: vec!["https://app.example.com".into()],
                max_sessions: 3,
                max_body_memory: Some(32 << 20),
            }
        );
        let c = load(&format!(
            r#"{{"server": {{"health_check_enabled": false}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap();
        assert_eq!(c.http.health_check_path, None);
    }

    /// A file that is not what the config's types read: the field by its
    /// path, what it should be in words, what was found; or where the text
    /// stops being JSON. Never Rust's type names or serde's phrasing.
    #[test]
    fn mistakes_in_the_file_are_worded_for_people() {
        let cases = [
            (
                r#"{"query": {"max_rows": "500"}}"#,
                "query.max_rows: expected a whole number, found the text \"500\"",
            ),
            (
                r#"{"connection": {"port": -1}}"#,
                "connection.port: expected a whole number from 0 to 65535, found -1",
            ),
            (
                r#"{"connection": {"port": "abc"}}"#,
                "connection.port: expected a whole number from 0 to 65535, found the text \"abc\"",
            ),
            (
                r#"{"connection": {"connect_timeout_seconds": -5}}"#,
                "connection.connect_timeout_seconds: expected a whole number, 0 or more, found -5",
            ),
            (
                r#"{"server": {"read_only": "no"}}"#,
                "server.read_only: expected true or false, found the text \"no\"",
            ),
            (
                r#"{"protection": {"allow_drop": 1}}"#,
                "protection.allow_drop: expected true or false, found 1",
            ),
            (
                r#"{"protection": {"allow_dorp": true}}"#,
                "protection.allow_dorp: unknown field: did you mean allow_do or allow_drop?",
            ),
            (r#"{"querry": {}}"#, "querry: unknown field: did you mean query?"),
            (
                r#"{"server": {"allowed_origins": "https://a.example"}}"#,
                "server.allowed_origins: expected a list of text, found the text \"https://a.example\"",
            ),
            (
                r#"{"server": {"allowed_origins": ["https://a.example", 3]}}"#,
                "server.allowed_origins[1]: expected text, found 3",
            ),
            (
                r#"{"protection": {"blocked_functions": [true]}}"#,
                "protection.blocked_functions[0]: expected text, found true",
            ),
            (
                r#"{"query": {"timeout_rules": {"pattern": "x"}}}"#,
                "query.timeout_rules: expected a list of objects { ... }, found an object",
            ),
            (
                r#"{"query": {"timeout_rules": [{"pattern": "x", "timeout_seconds": "5"}]}}"#,
                "query.timeout_rules[0].timeout_seconds: expected a whole number, found the text \"5\"",
            ),
            (
                r#"{"hooks": {"before_query": [{"pattern": "x"}]}}"#,
                "hooks.before_query[0].command: required, and missing",
            ),
            (r#"{"query": 500}"#, "query: expected an object { ... }, found 500"),
            (
                r#"{"query": {"max_rows": 5, "max_rows": 6}}"#,
                "query.max_rows: given more than once: keep one",
            ),
            ("5", "expected an object { ... }, found 5"),
            (
                "{\n  \"query\": {\n    \"max_rows\": 5,\n  }\n}",
                "line 4, column 3: not valid JSON: a comma before } or ] (JSON allows none there)",
            ),
            (
                "{\"query\": {\"max_rows\": 5}} {}",
                "line 1, column 28: not valid JSON: more text after the end of the JSON",
            ),
            (
                "",
                "line 1, column 0: not valid JSON: the text ends before the JSON does (a } or ] missing?)",
            ),
        ];
        for (text, expected) in cases {
            let e = load(text).unwrap_err().to_string();
            assert_eq!(e, format!("config /etc/pgmcp.json: {expected}"), "{text}");
        }
    }

    #[test]
    fn unknown_and_mistyped_fields_are_rejected_by_path() {
        let e = load(r#"{"query": {"default_timeout_seconds": 30, "max_rowz": 5}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("query.max_rowz"));
        assert_eq!(e.message, "unknown field: did you mean max_rows?");

        let e = load(r#"{"server": {"prot": 8080}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("server.prot"), "{e}");

        let e = load(r#"{"pool": {"max_conns": "four"}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("pool.max_conns"));

        let e = load("{not json").unwrap_err();
        assert_eq!(e.file.as_deref(), Some(Path::new("/etc/pgmcp.json")));
        assert_eq!(
            e.to_string(),
            "config /etc/pgmcp.json: line 1, column 2: not valid JSON: a field name must be in double quotes"
        );
    }

    #[test]
    fn protection_defaults_block_everything() {
        let c = load(MINIMAL).unwrap();
        assert_eq!(c.protection, Policy::default());
        assert!(
            !c.protection.allows(Rule::Drop)
                && !c.protection.allows(Rule::Set)
                && !c.protection.allows(Rule::CopyToFile)
        );
        assert!(
            c.protection
                .blocked_functions
                .iter()
                .any(|f| f.as_str() == "pg_read_file")
        );

        let c = load(&format!(
            r#"{{"server": {{"read_only": false}}, "protection": {{"allow_drop": true, "allow_copy_from": true, "allow_create_function": true, "allow_prepare": true, "blocked_functions": ["my_danger", "evil_*"]}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap();
        assert!(
            c.protection.allows(Rule::Drop)
                && c.protection.allows(Rule::CopyFrom)
                && c.protection.allows(Rule::CreateFunction)
                && c.protection.allows(Rule::Prepare)
        );
        assert!(!c.protection.allows(Rule::Set) && !c.protection.allows(Rule::Truncate) && !c.protection.read_only);
        let names: Vec<&str> = c.protection.blocked_functions.iter().map(|f| f.as_str()).collect();
        assert_eq!(names, ["my_danger", "evil_*"]);

        let e = load(&format!(
            r#"{{"protection": {{"blocked_functions": ["ok", "drop table"]}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("protection.blocked_functions[1]"));
        let e = load(&format!(
            r#"{{"protection": {{"allow_everything": true}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("protection.allow_everything"));
    }

    #[test]
    fn pipeline_sections_are_validated() {
        let with = |extra: &str| load(&format!("{{{extra}, {}", &MINIMAL[1..]));
        let c = with(
            r#""error_prompts": [{"pattern": "(?i)denied", "message": "Ask the DBA."}],
               "sanitization": [{"pattern": "\\d{4}", "replacement": "****", "description": "digits"}],
               "hooks": {"default_timeout_seconds": 5,
                         "before_query": [{"pattern": ".*", "command": "hooks/check.sh", "args": ["-v"]}],
                         "after_query": [{"pattern": "x", "command": "/abs/after.sh", "timeout_seconds": 9}]}"#,
        )
        .unwrap();
        assert_eq!(c.error_prompts[0].message, "Ask the DBA.");
        assert_eq!(c.sanitization[0].replacement, "****");
        let before = &c.hooks.before_query[0];
        assert_eq!(
            before.command,
            PathBuf::from("/etc/hooks/check.sh"),
            "relative to the config file"
        );
        assert_eq!(
            (before.timeout, before.args.clone()),
            (Duration::from_secs(5), vec!["-v".to_owned()])
        );
        let after = &c.hooks.after_query[0];
        assert_eq!(
            (after.command.clone(), after.timeout),
            (PathBuf::from("/abs/after.sh"), Duration::from_secs(9))
        );
        assert_eq!((c.query.max_result_length, c.query.max_sql_length), (50_000, 100_000));

        let cases = [
            (
                r#""hooks": {"before_query": [{"pattern": ".*", "command": "a.sh"}]}"#,
                "hooks.default_timeout_seconds: required",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 0, "after_query": [{"pattern": ".*", "command": "a.sh"}]}"#,
                "hooks.default_timeout_seconds: must be greater than 0, got 0",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": "(", "command": "a.sh"}]}"#,
                "hooks.before_query[0].pattern: invalid regex \"(\"",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": ".*", "command": " "}]}"#,
                "hooks.before_query[0].command: must name an executable",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": ".*", "command": "a", "timeout_seconds": -1}]}"#,
                "hooks.before_query[0].timeout_seconds: must be greater than 0, got -1",
            ),
            (
                r#""error_prompts": [{"pattern": "[", "message": "m"}]"#,
                "error_prompts[0].pattern: invalid regex \"[\"",
            ),
            (
                r#""sanitization": [{"pattern": "ok", "replacement": ""}, {"pattern": "(?P<", "replacement": ""}]"#,
                "sanitization[1].pattern: invalid regex",
            ),
        ];
        for (extra, expected) in cases {
            let e = with(extra).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("config /etc/pgmcp.json: {expected}")),
                "{extra}: {e}"
            );
        }
        // hooks.default_timeout_seconds is not needed without hooks.
        assert!(with(r#""hooks": {}"#).is_ok());
        let e = load(r#"{"query": {"default_timeout_seconds": 1, "list_tables_timeout_seconds": 1, "describe_table_timeout_seconds": 1, "timeout_rules": [{"pattern": "x", "timeout_seconds": 0}]}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("query.timeout_rules[0].timeout_seconds"));
    }

    #[test]
    fn duckdb_section_and_default_limit() {
        let c = load(MINIMAL).unwrap();
        assert_eq!(c.duckdb, DuckdbConfig::default());
        assert_eq!(c.query.default_limit, None);
        let c = load(
            r#"{"duckdb": {"memory_limit": " 1.5GB ", "threads": 2}, "query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10, "max_rows": 1000, "default_limit": 100}}"#,
        )
        .unwrap();
        assert_eq!(c.duckdb.memory_limit.as_deref(), Some("1.5GB"));
        assert_eq!(c.duckdb.threads, Some(2));
        assert_eq!((c.query.default_limit, c.query.max_rows), (Some(100), 1000));
        for size in ["1GB", "512MiB", "100 mb", "2TB", "1024B", "1kib"] {
            assert!(memory_size(size), "{size}");
        }
        for size in ["", "GB", "1", "1.GB", ".5GB", "1.2.3GB", "-1GB", "1 PB", "80%"] {
            assert!(!memory_size(size), "{size}");
        }
    }

    #[test]
    fn read_only_as_login_is_read() {
        for (value, expected) in [("true", true), ("false", false)] {
            let text = format!(
                r#"{{"connection": {{"read_only_as_login": {value}}}, {}"#,
                &MINIMAL[1..]
            );
            assert_eq!(load(&text).unwrap().connection.read_only_as_login, expected);
        }
        // Off with a role is no contradiction: the role is what runs.
        let text = format!(
            r#"{{"connection": {{"read_only_as_login": false, "role": "r"}}, {}"#,
            &MINIMAL[1..]
        );
        assert_eq!(load(&text).unwrap().connection.role.as_deref(), Some("r"));
    }

    #[test]
    fn connection_role_is_kept_as_written() {
        for role in ["pgmcp_reader", "Mixed Case", "we\"ird", &"r".repeat(63)] {
            let text = format!(
                r#"{{"connection": {{"role": {}}}, {}"#,
                serde_json::to_string(role).unwrap(),
                &MINIMAL[1..]
            );
            assert_eq!(load(&text).unwrap().connection.role.as_deref(), Some(role));
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = Config::load(Path::new("/nonexistent/pgmcp/config.json")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("config /nonexistent/pgmcp/config.json: cannot read the file"),
            "{e}"
        );
    }

    #[test]
    fn location_order() {
        assert_eq!(
            ConfigLocation::resolve(Some(Path::new("/a.json")), Some("/b.json")),
            ConfigLocation::Explicit("/a.json".into())
        );
        assert_eq!(
            ConfigLocation::resolve(None, Some("/b.json")),
            ConfigLocation::Explicit("/b.json".into())
        );
        let c = ConfigLocation::candidates();
        assert!(c.iter().all(|p| p.is_absolute()), "{c:?}");
    }
}
