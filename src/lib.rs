//! pgmcp: a guarded MCP server that lets desktop AI agents query PostgreSQL
//! (and SQLite and DuckDB files).
//!
//! Desktop agents (Claude Desktop, Cursor) start `pgmcp serve` as a child
//! process and speak MCP to it over stdin/stdout. Every SQL statement goes
//! through one pipeline ([`pipeline::Engine::query`]): the guard checks the real
//! PostgreSQL parse tree, the call gets a deadline and a connection slot, and
//! the statement runs in its own transaction (read-only by default) with a row
//! cap. The same pipeline is usable from Rust without MCP.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use pgmcp::{Config, Engine, QueryInput};
//! use tokio_util::sync::CancellationToken;
//!
//! let engine = Engine::from_env(Config::builtin(), None)?;
//! let input = QueryInput::new("SELECT now() AS t");
//! let out = engine.query(&input, CancellationToken::new()).await?;
//! println!("{}", serde_json::to_string(&out)?);
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! | Feature | Default | What it adds |
//! | --- | --- | --- |
//! | `duckdb` | off | DuckDB files (`duckdb:` URLs), with DuckDB compiled in: a C++ build of about 20 minutes on two cores. |
//!
//! # Layout
//!
//! The library API is what an embedder needs: [`Engine`] and [`QueryInput`]
//! ([`pipeline`]), [`Config`] ([`config`]), [`QueryOutput`] ([`shape`]) and
//! [`QueryAnswer`], the same result as the JSON text a client receives
//! ([`answer`]),
//! [`Error`] ([`error`]), the guard's [`guard::Policy`] and [`guard::Rule`],
//! and what `list_tables`/`describe_table` return ([`catalog`]).
//!
//! - [`pipeline`]: [`Engine`], the one place that shows every stage of a call.
//! - [`guard`]: the pure SQL check: the rule table, the judge that applies a
//!   policy, and each dialect's guard (PostgreSQL's parse tree, what SQLite's
//!   and DuckDB's parsers report).
//! - [`hooks`]: external programs that accept, rewrite or reject queries and results.
//! - [`timeouts`], [`sanitize`], [`error_prompts`]: the pure per-call rules.
//! - [`backend`]: database engines; they connect, execute and return neutral
//!   rows ([`backend::postgres::value`]: PostgreSQL text output → JSON, pure).
//! - [`shape`]: the `query` result and its truncation metadata (pure).
//! - [`answer`]: the `query` result written as JSON in one pass, within the
//!   byte cap (pure).
//! - [`catalog`]: what `list_tables` and `describe_table` return.
//! - [`config`]: the settings, layered (defaults → file → environment) and
//!   validated into [`Config`].
//! - [`cli`]: the command line (`serve`, `query`, `check`, `configure`,
//!   `install`); [`wizard`]: `pgmcp configure`'s questions.
//!
//! Internal to the crate: the output fence (the last stage of every answer),
//! the MCP server (tool schemas and wire translation) and the one that says
//! why `serve` could not start, stdin screening and
//! how deeply JSON text nests (measured before anything parses it),
//! logging, `pgmcp check`'s report, `pgmcp install`, environment variables
//! (an empty value read as unset), who may change the config file and hook
//! programs, mistakes in a config file worded for the person who wrote it,
//! and the "did you mean" suggestions.

#![deny(clippy::print_stdout)]

pub mod backend;
pub mod cli;
pub mod config;
mod door;
pub mod error;
pub mod guard;
mod identifier;
mod json_depth;
pub mod pipeline;
mod process;
mod suggest;
#[doc(hidden)]
pub mod testing;

// The engine, one call, and what it returns.
pub use backend::{Column, Dialect, SessionReport};
pub use pipeline::answer::QueryAnswer;
pub use pipeline::shape::QueryOutput;
pub use pipeline::{Engine, QueryInput};

// Where the database is: what `Engine::postgres`, `Engine::sqlite` and
// `Engine::duckdb` take.
pub use backend::location::{DbFile, Root, Target};
pub use backend::postgres::{ConnectParams, Host, PasswordSource, RootCert, SessionAttrs, SslMode};

// The settings: `Config` and the types of its public fields.
pub use backend::duckdb::DuckdbConfig;
pub use backend::postgres::ConnectionConfig;
pub use config::{
    Config, HooksConfig, HttpConfig, LogFormat, LogLevel, LogOutput, LoggingConfig, Override, PoolConfig, QueryConfig,
};
pub use pipeline::error_prompts::ErrorPrompt;
pub use pipeline::hooks::{Hook, Stage};
pub use pipeline::sanitize::SanitizeRule;
pub use pipeline::timeouts::TimeoutRule;

// The guard's policy and what it reports.
pub use guard::{Engines, FunctionPattern, Policy, Rule, Spec, Violation};

// What `list_tables` and `describe_table` return.
pub use pipeline::catalog::{
    ColumnInfo, ConstraintInfo, ForeignKeyInfo, IndexInfo, PartitionInfo, TableDescription, TableEntry, TableFilter,
    TableList,
};

// The errors, and what they carry.
pub use backend::ChoiceError;
pub use backend::named::Setting;
pub use backend::postgres::ParamsError;
pub use config::{ConfigError, EnvError};
pub use error::{DbError, Error, ErrorCode};
pub use pipeline::hooks::HookError;
