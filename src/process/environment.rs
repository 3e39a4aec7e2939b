//! The process environment as pgmcp reads it. An empty value is no value:
//! desktop clients' MCP bundles pass every user setting as a variable and put
//! an empty string in one the user left empty, which must mean "not set"
//! (`PGPASSWORD=""` is no password, not an empty one). Two other values are
//! just as empty:
//!
//! - spaces alone, which look empty in a settings field: `PGMCP_DATABASE=" "`
//!   must not win over `PGMCP_PG_CONNSTRING` and name PostgreSQL's defaults;
//! - the bundle's own placeholder, `${user_config.password}`, which Claude
//!   Desktop passes on as written when an optional setting without a default
//!   is left empty (modelcontextprotocol/mcpb#250): taken as set, it would be
//!   sent as the password, and would make `PGMCP_DATABASE_FILE` and
//!   `PGMCP_PG_CONNSTRING` both look given.
//!
//! Every variable pgmcp reads, `PGMCP_*` and libpq's `PG*` alike, is read
//! through [`var`].

/// The variable's value, or `None` when it is unset, empty, only
/// whitespace, an unsubstituted `${user_config.KEY}`, or not UTF-8.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !is_empty(v))
}

/// A `true`/`false` setting's value (any case, spaces around), `None` for
/// anything else: no other spelling (`1`, `yes`, `on`) is read as either,
/// so a typo never turns read-only mode off.
pub fn switch(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Whether a variable's value means "not set".
fn is_empty(value: &str) -> bool {
    let placeholder = value
        .strip_prefix("${user_config.")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|key| !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    value.trim().is_empty() || placeholder
}

#[cfg(test)]
mod tests {
    #[test]
    fn empty_values() {
        let cases = [
            ("", true),
            (" ", true),
            ("\t\n ", true),
            ("${user_config.password}", true),
            ("${user_config.max_rows}", true),
            ("x", false),
            (" true ", false),
            ("${user_config.}", false),
            ("${user_config.a b}", false),
            ("pre${user_config.password}", false),
            ("${HOME}", false),
        ];
        for (value, empty) in cases {
            assert_eq!(super::is_empty(value), empty, "{value:?}");
        }
    }
}
