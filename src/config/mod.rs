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
//!
//! # Layout
//!
//! - `mod.rs`: the validated types ([`Config`] and its sections), and the
//!   re-exports that keep every type at `crate::config::*`.
//! - `raw.rs`: [`RawConfig`], the file as written, and the built-in
//!   defaults in the same form ([`RawConfig::defaults`], [`RawConfig::over`]).
//! - `file.rs`: which file ([`ConfigLocation`]), reading it
//!   ([`Config::load`], [`Config::from_json`]), and the errors it can end in.
//! - `overrides.rs`: the environment layer over the file
//!   ([`Config::with_environment`], [`Override`], [`EnvError`]).
//! - `sections.rs`: [`RawConfig::validate`], one function per section.
//! - `stages.rs`: the sections the query pipeline's stages run with: the
//!   guard's `protection`, `hooks`, `error_prompts`, `sanitization`.

mod curated;
mod databases;
mod file;
pub(crate) mod mistake;
mod overrides;
mod raw;
mod sections;
mod stages;

pub use databases::password_variable;
pub use file::{ConfigError, ConfigLocation, LoadError};
pub use overrides::{EnvError, Override};
pub use raw::{
    RawConfig, RawDuckdb, RawErrorPrompt, RawHook, RawHooks, RawLogging, RawPool, RawProtection, RawQuery,
    RawSanitization, RawServer, RawSqlite, RawToolsEnabled,
};

use std::path::PathBuf;
use std::time::Duration;

use crate::backend::duckdb::DuckdbConfig;
use crate::backend::postgres::ConnectionConfig;
use crate::guard::Policy;
use crate::pipeline::error_prompts::ErrorPrompt;
use crate::pipeline::hooks::Hook;
use crate::pipeline::sanitize::SanitizeRule;
use crate::pipeline::timeouts::TimeoutRule;
use crate::toolbox::CuratedTool;

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
    /// What the guard allows. Read-only mode is not in it: it is
    /// `read_only`, the setting, which the engine gives the guard as its
    /// mode (`Engine::new`), so no second copy needs keeping equal.
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
    /// The `databases` entry this is the config of, which hooks are told
    /// (`PGMCP_DATABASE_NAME`); `None` for the file's own.
    pub name: Option<String>,
    /// `databases`, in the file's order (the first is the default), each
    /// with the whole config it runs under. Empty: the one database
    /// `database`, `connection` and the environment name.
    pub databases: Vec<NamedDatabase>,
    /// The curated tools (`tools`), in the file's order.
    pub tools: Vec<CuratedTool>,
    /// Which built-in tools are served (`tools_enabled`).
    pub tools_enabled: ToolsEnabled,
    /// `data_boundary`: every answer's text puts what came from the
    /// database between tags with a marker of its own (`door::boundary`).
    pub data_boundary: bool,
    /// `confirm` and `confirm_timeout_seconds`: which statements a person
    /// accepts before they run (`crate::pipeline::confirm`).
    pub confirm: Confirm,
    /// `grid`: `query` names the data grid a client that renders MCP Apps
    /// shows its answers in (`door::mcp::grid`).
    pub grid: bool,
}

/// Which statements a person confirms before they run (`confirm`), in
/// read-write mode, and how long the question waits for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirm {
    pub when: ConfirmWhen,
    pub timeout: Duration,
}

/// The values of `confirm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmWhen {
    /// Statements the guard classifies as writing (the default).
    Writes,
    /// Every statement.
    All,
    /// None: statements run as sent.
    Never,
}

/// One entry of `databases`.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedDatabase {
    pub name: String,
    /// What it holds, as the model reads it when choosing one.
    pub description: Option<String>,
    /// The config calls on it run under: the file's sections with the
    /// entry's layered over them; its `database` is the entry's `url`.
    pub config: Config,
    /// The entry says nothing of `read_only`: its mode is the file's
    /// top-level one, and `PGMCP_READ_ONLY` reaches it either way.
    pub inherits_read_only: bool,
}

/// Which built-in tools are served; each on unless `tools_enabled` says
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolsEnabled {
    pub query: bool,
    pub list_tables: bool,
    pub describe_table: bool,
    pub explain: bool,
    pub diagnose: bool,
}

impl ToolsEnabled {
    /// Whether the built-in tool `name` is served.
    pub fn serves(&self, name: &str) -> bool {
        match name {
            "query" => self.query,
            "list_tables" => self.list_tables,
            "describe_table" => self.describe_table,
            "explain" => self.explain,
            "diagnose" => self.diagnose,
            _ => false,
        }
    }
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
    /// parameters are bounded together too: `crate::pipeline::WAITING_BYTES`).
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
    /// at once across all clients. `None`: the default, `DEFAULT_BODY_MEMORY`
    /// or one longest request, whichever is larger.
    pub max_body_memory: Option<usize>,
}

/// `server.max_body_memory_mb`'s default, in bytes.
pub const DEFAULT_BODY_MEMORY: usize = 64 << 20;

/// The longest message a client may send, in bytes: a call at the query
/// limits, written as JSON. A character is up to 4 bytes; JSON escapes a
/// byte in at most 6.
pub fn longest_message(query: &QueryConfig) -> usize {
    let sql = query.max_sql_length.saturating_mul(4 * 6);
    let params = query.max_params_bytes.saturating_mul(6);
    sql.saturating_add(params).saturating_add(64 << 10).max(1 << 20)
}

impl Config {
    /// The longest message a client may send, in bytes: one call at the
    /// largest limits any of its databases accepts.
    pub fn longest_message(&self) -> usize {
        self.databases
            .iter()
            .map(|d| longest_message(&d.config.query))
            .fold(longest_message(&self.query), usize::max)
    }

    /// The protection the process's file sandbox is entered with: the top
    /// level's, with every switch any of `databases` turns on turned on too.
    /// The sandbox is one for the whole process, so it fences as the most
    /// any database allows needs (`crate::process::sandbox`).
    pub fn process_protection(&self) -> Policy {
        let mut policy = self.protection.clone();
        for database in &self.databases {
            for (rule, _) in crate::guard::Rule::switches() {
                if database.config.protection.allows(rule) {
                    policy.allow(rule, true);
                }
            }
        }
        policy
    }

    /// The request-body memory `pgmcp serve --http` holds at most, in bytes:
    /// `server.max_body_memory_mb`, or by default `DEFAULT_BODY_MEMORY`
    /// or one longest message, whichever is larger.
    pub fn body_memory(&self) -> usize {
        self.http
            .max_body_memory
            .unwrap_or_else(|| DEFAULT_BODY_MEMORY.max(self.longest_message()))
    }

    /// What pgmcp runs with when no config file exists: `RawConfig::defaults`
    /// alone, validated like a file (read-only, 30 s queries, 10 s catalog
    /// calls, 4 connections, 500 rows).
    pub fn builtin() -> Config {
        match RawConfig::default().validate(None) {
            Ok(config) => config,
            // The defaults are constants, and a unit test validates them.
            Err(e) => unreachable!("the built-in defaults are invalid: {e}"),
        }
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

/// What the tests of every file here read a config with.
#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{Config, ConfigError};

    pub(super) const MINIMAL: &str = r#"{"query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10}}"#;

    pub(super) fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_json(text, Some(Path::new("/etc/pgmcp.json")))
    }
}
