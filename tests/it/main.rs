//! The one integration-test crate: a real PostgreSQL, the real `pgmcp` binary over stdio, one module per feature.

mod catalog_fences;
mod check;
mod cli;
mod configure;
mod connect;
mod connstring_secrets;
mod demo;
mod doors_red_team;
mod doors_red_team_2;
#[cfg(feature = "duckdb")]
mod duckdb;
mod engine;
mod faults;
mod guard_attacks;
mod guard_corpus;
mod guard_fuzz;
mod harness;
mod hooks;
mod intake;
mod introspection;
mod lexical;
mod log_file;
mod memory;
mod msrv;
mod output_fences;
mod pipeline;
mod red_team;
mod role;
mod routines;
mod serve;
mod sqlite;
mod support;
mod tls;
mod trust;
mod values;
