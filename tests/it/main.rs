//! The one integration-test crate: a real PostgreSQL, the real `pgmcp` binary over stdio, one module per feature.

mod check;
mod cli;
mod configure;
mod connect;
mod demo;
#[cfg(feature = "duckdb")]
mod duckdb;
mod engine;
mod faults;
mod guard_attacks;
mod guard_corpus;
mod guard_fuzz;
mod harness;
mod hooks;
mod introspection;
mod lexical;
mod pipeline;
mod serve;
mod sqlite;
mod support;
mod tls;
mod values;
