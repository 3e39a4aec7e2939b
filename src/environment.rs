//! The process environment as pgmcp reads it. An empty value is no value:
//! desktop clients' MCP bundles pass every user setting as a variable and put
//! an empty string in one the user left empty, which must mean "not set"
//! (`PGPASSWORD=""` is no password, not an empty one). Every variable pgmcp
//! reads, `PGMCP_*` and libpq's `PG*` alike, is read through [`var`].

/// The variable's value, or `None` when it is unset, empty, or not UTF-8.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
