//! pgmcp: a guarded MCP server that lets desktop AI agents query PostgreSQL
//! (and SQLite and DuckDB files).
//!
//! Desktop agents (Claude Desktop, Cursor) start `pgmcp serve` as a child
//! process and speak MCP to it over stdin/stdout. Every SQL statement goes
//! through one pipeline ([`Engine::query`]): the guard checks the real
//! PostgreSQL parse tree, the call gets a deadline and a connection slot, and
//! the statement runs in its own transaction (read-only by default) with a row
//! cap. The same pipeline is usable from Rust without MCP.
//!
//! # Example
//!
//! ```
//! use pgmcp::{Config, Engine, Error, InputError, QueryInput, Rule};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The same settings as the command line: a URL, else PGMCP_DATABASE and
//! // the rest. Read-only unless the config says otherwise.
//! let engine = Engine::from_env(Config::builtin(), Some("sqlite::memory:"))?;
//! let out = engine.query(&QueryInput::new("SELECT 1 AS one"), CancellationToken::new()).await?;
//! assert_eq!(out.rows[0]["one"], 1);
//!
//! // Every way a call fails is a variant to match: a refusal names its rule,
//! // an unusable argument its kind.
//! match engine.query(&QueryInput::new("CREATE TABLE t (x int)"), CancellationToken::new()).await {
//!     Err(Error::Guard(refusal)) => assert_eq!(refusal.rule, Rule::ReadOnly),
//!     other => panic!("expected a refusal, got {other:?}"),
//! }
//! let mut zero = QueryInput::new("SELECT 1");
//! zero.limit = Some(0);
//! let refused = engine.query(&zero, CancellationToken::new()).await;
//! assert!(matches!(refused, Err(Error::Input(InputError::ZeroLimit))));
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! | Feature | Default | What it adds |
//! | --- | --- | --- |
//! | `duckdb` | off | DuckDB files (`duckdb:` URLs), with DuckDB compiled in: a C++ build of about 20 minutes on two cores. |
//!
//! # The API
//!
//! Everything public is re-exported here, at the crate root; every module is
//! private, so the layout below can change without breaking an embedder.
//!
//! - The engine: [`Engine`], one call's [`QueryInput`], its result as Rust
//!   values ([`QueryOutput`], with [`Column`]s) or as the JSON text a client
//!   receives ([`QueryAnswer`]), the [`Dialect`] it speaks and the
//!   [`SessionReport`] that describes its connection.
//! - Where the database is: [`Engine::from_env`] reads the same settings as
//!   the command line; [`Engine::postgres`], [`Engine::sqlite`] and (with
//!   `duckdb`) `Engine::duckdb` take [`ConnectParams`], or a [`Target`] and a
//!   [`Root`], directly.
//! - The settings: [`Config`] and the types of its sections, each a public
//!   field an embedder may set before building an [`Engine`].
//! - The guard's [`Policy`] (in [`Config::protection`]): which [`Rule`]s it
//!   applies, and the [`Violation`] a refused statement reports.
//! - What `list_tables` and `describe_table` return: [`TableList`] and
//!   [`TableDescription`], asked for with a [`TableFilter`].
//! - The errors: [`Error`] (with [`ErrorCode`] and [`DbError`]), and those of
//!   loading a config ([`ConfigError`]) or picking a database
//!   ([`ChoiceError`]).
//!
//! The binary's door (`binary`) and the test surface (`testing`) are public
//! only so `src/main.rs`, and `tests/`, `benches/` and `examples/`, can reach
//! them: hidden from these docs, and no part of the API.
//!
//! # Layout
//!
//! The modules, all private:
//!
//! - `pipeline`: [`Engine`], the one place that shows every stage of a call,
//!   and the pure per-call rules beside it: hooks (external programs that
//!   accept, rewrite or reject queries and results), timeouts, sanitizing,
//!   error prompts, the result's shape and its encoding as JSON within the
//!   byte cap, the output fence (the last stage of every answer), and what
//!   `list_tables`/`describe_table` return.
//! - `guard`: the pure SQL check: the rule table, the judge that applies a
//!   policy, and each dialect's guard (PostgreSQL's parse tree, what SQLite's
//!   and DuckDB's parsers report).
//! - `backend`: database engines; they connect, execute and return neutral
//!   rows (PostgreSQL text output → JSON is pure, in `backend::postgres::value`).
//! - `config`: the settings, layered (defaults → file → environment) and
//!   validated into [`Config`]; a mistake in a config file is worded for the
//!   person who wrote it.
//! - `door`: how an MCP client reaches the engine: over stdio (stdin screened
//!   before anything parses it) and over HTTP, the MCP face both serve (tool
//!   schemas and wire translation only), and the one that says why `serve`
//!   could not start.
//! - `cli`: the command line (`serve`, `query`, `check`, `configure`,
//!   `install`), `pgmcp configure`'s questions among them.
//! - `process`: the process guarding itself: environment variables (an empty
//!   value read as unset), who may change the config file and hook programs,
//!   logging (never stdout), the sandbox around SQL that may name files.
//! - Beside them: how deeply JSON text nests (measured before anything parses
//!   it), identifiers as pgmcp quotes them, and the "did you mean"
//!   suggestions.

#![deny(clippy::print_stdout)]

mod backend;
mod cli;
mod config;
mod door;
mod error;
mod guard;
mod identifier;
mod json_depth;
mod pipeline;
mod process;
mod service;
mod suggest;
#[doc(hidden)]
pub mod testing;
mod toolbox;

// The engine, one call, and what it returns.
pub use backend::{Column, Dialect, SessionReport};
pub use pipeline::answer::QueryAnswer;
pub use pipeline::explain::{ExplainAnswer, ExplainInput};
pub use pipeline::plan::{PlanNode, PlanSummary};
pub use pipeline::shape::QueryOutput;
pub use pipeline::{Engine, QueryInput};

// Several databases and curated tools: what a server offers.
pub use config::{NamedDatabase, ToolsEnabled};
pub use service::{Curated, Database, OpenError, Service};
pub use toolbox::{CuratedTool, ParamType, Parameter, Scalar};

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
pub use error::{ConnectionError, InputError, NotFound};
pub use error::{DbError, Error, ErrorCode};
pub use pipeline::hooks::HookError;

/// The `pgmcp` binary's door (`src/main.rs`): not for embedders, and no
/// part of the API. The command line's types stay private: what comes back
/// is an exit code, or an error to print as a chain.
#[doc(hidden)]
pub mod binary {
    use std::process::ExitCode;

    use clap::Parser;

    /// Parse the command line (clap prints `--help` or a usage mistake and
    /// exits) and run the command.
    pub fn run() -> Result<ExitCode, impl std::error::Error + Send + Sync + 'static> {
        crate::cli::run(crate::cli::Cli::parse())
    }
}
