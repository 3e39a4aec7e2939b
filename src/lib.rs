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
//! - [`pipeline`]: [`Engine`], the one place that shows every stage of a call.
//! - [`guard`]: the pure SQL check on PostgreSQL's parse tree (and on what
//!   SQLite's and DuckDB's parsers report).
//! - [`hooks`]: external programs that accept, rewrite or reject queries and results.
//! - [`timeouts`], [`sanitize`], [`error_prompts`]: the pure per-call rules.
//! - [`fence`]: the last stage of every answer: sanitize and cap results and
//!   errors alike.
//! - [`backend`]: database engines; they connect, execute and return neutral
//!   rows ([`backend::postgres::value`]: PostgreSQL text output → JSON, pure).
//! - [`shape`]: the `query` result and its truncation metadata (pure).
//! - [`catalog`]: what `list_tables` and `describe_table` return.
//! - [`config`]: the settings, layered (defaults → file → environment) and
//!   validated into [`Config`]; [`environment`]: variables read with an
//!   empty value as unset.
//! - [`trust`]: who may change the config file and hook programs; refused
//!   when anyone but their owner could.
//! - [`mcp`]: the MCP server: tool schemas and wire translation only.
//! - [`check`]: what `pgmcp check` reports; [`wizard`]: `pgmcp configure`;
//!   [`install`]: `pgmcp install`, the entry a desktop client's config needs.
//! - [`cli`], [`logging`]: the command line and where logs go.
//! - [`intake`]: stdin lines screened before rmcp reads them, so malformed
//!   requests get a JSON-RPC error answer rather than silence, written
//!   through the stdout writer rmcp shares; [`json_depth`]: how deeply JSON
//!   text nests, measured before anything parses it.

#![deny(clippy::print_stdout)]

pub mod backend;
pub mod budget;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod config;
pub mod environment;
pub mod error;
pub mod error_prompts;
pub mod fence;
pub mod guard;
pub mod hooks;
pub mod install;
pub mod intake;
pub mod json_depth;
pub mod logging;
pub mod mcp;
pub mod pipeline;
pub mod sanitize;
pub mod shape;
pub mod suggest;
pub mod timeouts;
pub mod trust;
pub mod wizard;

pub use config::Config;
pub use error::{DbError, Error, ErrorCode};
pub use pipeline::{Engine, QueryInput};
pub use shape::QueryOutput;
