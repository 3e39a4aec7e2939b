//! Real parts for the integration tests: a throwaway PostgreSQL ([`pg`]) and a
//! JSON-RPC client that drives the real `pgmcp` binary over stdio ([`stdio`]).

// Not every feature module uses every helper, and a helper nobody uses yet must
// not fail `cargo clippy --all-targets -- -D warnings`.
#![allow(dead_code)]

pub mod certs;
pub mod pg;
pub mod stdio;
