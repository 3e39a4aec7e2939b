//! The one integration-test crate: a real PostgreSQL, the real `pgmcp` binary over stdio, one module per feature.
//!
//! Unix only, as a whole: the harness runs PostgreSQL under `runuser` in its
//! own process group, and most features are tested through modes, owners,
//! symlinks, signals and `/proc`. On Windows this crate is empty rather than
//! half ported; the library's own unit tests still build there.

#![cfg(unix)]

mod allowlist;
mod analytic;
mod architecture;
mod boundary;
mod catalog_fences;
mod check;
mod cli;
mod configure;
mod confirm;
mod confirm_attacks;
mod confirm_attacks2;
mod conformance;
mod connect;
mod connstring_secrets;
mod connstrings;
mod curated;
mod curated_attacks;
#[cfg(feature = "duckdb")]
mod curated_duckdb;
mod demo;
mod diagnose;
#[cfg(feature = "duckdb")]
mod duckdb;
mod embedded_corpus;
mod embedded_evidence;
mod engine;
mod environment;
mod explain;
mod faults;
mod grid;
mod grid_attacks;
mod guard_attacks;
mod guard_corpus;
mod guard_fuzz;
mod harness;
mod health_attacks;
mod hooks;
mod http;
mod http_doors;
mod hypothetical;
mod install;
mod intake;
mod introspection;
mod lexical;
mod log_file;
mod memory;
mod msrv;
mod newcomer;
mod output_fences;
mod pipeline;
mod pooler;
mod prompts;
mod protocol_channel;
mod reach_types;
mod reader;
mod release;
mod resources;
mod role;
mod routines;
mod serve;
mod sqlite;
mod start_failure;
mod support;
mod tls;
mod tool_schemas;
mod trust;
mod values;
mod versions;
mod working_directory;
