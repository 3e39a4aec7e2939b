//! Validation: [`RawConfig::validate`] turns the file, layered over the
//! defaults, into a [`Config`], one function per section, each naming the
//! field at fault. The sections the query pipeline's stages run with are
//! in `stages.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;

use super::stages::{error_prompts, hooks, protection, sanitization};
use super::{
    Config, ConfigError, DEFAULT_HTTP_HOST, DEFAULT_MAX_SESSIONS, HttpConfig, LogFormat, LogLevel, LogOutput,
    LoggingConfig, PoolConfig, QueryConfig, RawConfig, RawDuckdb, RawLogging, RawPool, RawQuery, RawServer, RawSqlite,
    default_log_output, longest_message,
};
use crate::backend::duckdb::{DuckdbConfig, memory_size};
use crate::backend::postgres::{ConnectionConfig, RawConnection};
use crate::config::mistake;
use crate::pipeline::timeouts::TimeoutRule;

impl RawConfig {
    /// Layer the file's contents over [`RawConfig::defaults`] and turn them
    /// into a [`Config`], or name the first bad field. Each section is
    /// validated on its own, in the order a file's errors have always been
    /// reported, so the first bad field named is the same.
    pub fn validate(self, file: Option<&Path>) -> Result<Config, ConfigError> {
        let written = self.clone();
        let raw = self.over(RawConfig::defaults());
        let pool = pool(raw.pool.clone(), file)?;
        let query = query(raw.query.clone(), file)?;
        let error_prompts = error_prompts(&raw.error_prompts, file)?;
        let sanitization = sanitization(&raw.sanitization, file)?;
        let hooks = hooks(&raw.hooks, file)?;
        let connection = connection(raw.connection.clone(), file)?;
        let logging = logging(&raw.logging, file)?;
        let read_only = server(&raw.server);
        let http = http(&raw.server, file)?;
        let protection = protection(raw.protection.clone(), file)?;
        let database = database(raw.database.clone(), file)?;
        let sqlite_root = sqlite(&raw.sqlite, file)?;
        let duckdb = duckdb(raw.duckdb.clone(), file)?;
        let confirm = confirm(&raw, file)?;
        let databases = super::databases::databases(&written, &raw, file)?;
        let names: Vec<String> = databases.iter().map(|d| d.name.clone()).collect();
        let tools = super::curated::tools(&raw.tools, &names, file)?;
        let tools_enabled = super::curated::enabled(&raw.tools_enabled, tools.len(), file)?;
        // One message at the largest limits any database accepts.
        let longest = databases
            .iter()
            .map(|d| longest_message(&d.config.query))
            .fold(longest_message(&query), usize::max);
        if let Some(budget) = http.max_body_memory.filter(|b| *b < longest) {
            return Err(fail(
                file,
                "server.max_body_memory_mb",
                format!(
                    "{} MiB cannot hold one request of the longest size query.max_sql_length and \
                     query.max_params_bytes allow{} ({longest} bytes): set it to at least {}",
                    budget >> 20,
                    match databases.is_empty() {
                        true => "",
                        false => ", here or in a `databases` entry",
                    },
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
            name: None,
            databases,
            tools,
            tools_enabled,
            data_boundary: raw.data_boundary.unwrap_or(true),
            confirm,
            grid: raw.grid.unwrap_or(true),
        })
    }
}

/// The longest `confirm_timeout_seconds`: a day.
const MOST_CONFIRM_SECONDS: u64 = 86_400;

/// `confirm` and `confirm_timeout_seconds`.
fn confirm(raw: &RawConfig, file: Option<&Path>) -> Result<super::Confirm, ConfigError> {
    use super::ConfirmWhen;
    let when = match raw.confirm.as_deref().unwrap_or("writes") {
        "writes" => ConfirmWhen::Writes,
        "all" => ConfirmWhen::All,
        "never" => ConfirmWhen::Never,
        other => {
            return Err(fail(
                file,
                "confirm",
                format!(
                    "{other:?} is not one of \"writes\" (a person accepts each statement that writes before it runs), \"all\" (every statement) or \"never\""
                ),
            ));
        }
    };
    let timeout = positive(
        file,
        "confirm_timeout_seconds",
        raw.confirm_timeout_seconds.or(Some(300)),
    )?;
    if timeout > MOST_CONFIRM_SECONDS {
        return Err(fail(
            file,
            "confirm_timeout_seconds",
            format!(
                "{timeout} seconds is longer than a person answers a question: set at most {MOST_CONFIRM_SECONDS} \
                 (a day)"
            ),
        ));
    }
    Ok(super::Confirm {
        when,
        timeout: Duration::from_secs(timeout),
    })
}

/// An error naming `field` of the config `file`.
pub(super) fn fail(file: Option<&Path>, field: &str, message: String) -> ConfigError {
    ConfigError {
        file: file.map(Path::to_owned),
        field: Some(field.to_owned()),
        message,
    }
}

/// A whole number above 0. Only fields without a default can be missing
/// once the file is layered over [`RawConfig::defaults`].
pub(super) fn positive(file: Option<&Path>, field: &str, value: Option<i64>) -> Result<u64, ConfigError> {
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

pub(super) fn regex(file: Option<&Path>, field: &str, pattern: &str) -> Result<Regex, ConfigError> {
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

/// The `connection` section, as PostgreSQL's backend takes it
/// ([`RawConnection::validate`]): the files it names are found next to the
/// config file.
fn connection(raw: RawConnection, file: Option<&Path>) -> Result<ConnectionConfig, ConfigError> {
    raw.validate(file.and_then(Path::parent), &mistake::quoted)
        .map_err(|e| fail(file, e.field, e.message))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{MINIMAL, load};

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
}
