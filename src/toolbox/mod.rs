//! Curated tools: statements an administrator writes once in the config
//! (`tools`), each served as an MCP tool of its own with typed parameters,
//! so an agent can do exactly those things. A curated tool is not a way
//! around the pipeline: its statement goes through the guard when the
//! databases are opened (`crate::service`, through
//! `crate::guard::preview`) and again, with hooks, timeouts, caps and
//! sanitization, at every call, as a `query` call does. Its arguments are
//! checked against its parameters and bound to the statement's
//! placeholders in the order the parameters are listed ([`arguments`]),
//! never written into the SQL.
//!
//! # Layout
//!
//! - `mod.rs`: the validated definition ([`CuratedTool`], [`Parameter`],
//!   [`ParamType`]).
//! - `arguments.rs`: a call's arguments checked and turned into the
//!   statement's parameter values.
//! - `schema.rs`: the JSON Schema of a tool's arguments, as `tools/list`
//!   shows it.

pub mod arguments;
pub mod schema;

use serde_json::Value;

/// The names no curated tool may take: the built-in tools'.
pub const BUILT_IN_TOOLS: [&str; 5] = ["query", "list_tables", "describe_table", "explain", "diagnose"];

/// One curated tool, as validated from the config's `tools`.
#[derive(Debug, Clone, PartialEq)]
pub struct CuratedTool {
    /// The MCP tool's name: letters, digits, `_` and `-`, starting with a letter.
    pub name: String,
    /// What the model reads to decide when to call it.
    pub description: String,
    /// The database it runs on (a `databases` name); `None`: the default
    /// (the first, or the only database).
    pub database: Option<String>,
    /// One SQL statement in its database's dialect, with a placeholder per
    /// parameter (`$1`…, or `?`), in the order [`CuratedTool::parameters`] lists them.
    pub statement: String,
    pub parameters: Vec<Parameter>,
    /// `Some(true)`: runs in a read-only transaction even on a database that
    /// allows writes. `Some(false)`: the tool writes, which its database
    /// must allow. `None`: read-only on a read-only database; on one that
    /// may write, read-only when the guard finds its statement only reads
    /// (`crate::service`).
    pub read_only: Option<bool>,
}

/// One parameter of a curated tool: an argument of the MCP tool, bound to
/// one placeholder of the statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub description: String,
    pub kind: ParamType,
    /// A call must give it. A parameter with a default never is.
    pub required: bool,
    /// Bound when a call leaves the argument out; an optional parameter
    /// without one is bound as SQL `NULL`.
    pub default: Option<Value>,
    /// The only values a call may give, when set.
    pub allowed: Option<Vec<Value>>,
}

/// A parameter's type, as its JSON Schema says it and as it is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Scalar(Scalar),
    /// A JSON array of one scalar type, bound as one value: a PostgreSQL
    /// array literal (`= ANY($1)`), JSON text on SQLite
    /// (`IN (SELECT value FROM json_each(?))`) and DuckDB
    /// (`list_contains(CAST(? AS INTEGER[]), x)`).
    Array(Scalar),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Integer,
    Number,
    String,
    Boolean,
    /// `YYYY-MM-DD`, bound as that text.
    Date,
    /// `YYYY-MM-DDTHH:MM:SS`, optionally with fractions of a second and an
    /// offset (`Z`, `+02:00`), bound as that text.
    Timestamp,
}

impl Scalar {
    /// The type names the config's `type` and `items` take.
    pub const NAMES: [(&'static str, Scalar); 6] = [
        ("integer", Scalar::Integer),
        ("number", Scalar::Number),
        ("string", Scalar::String),
        ("boolean", Scalar::Boolean),
        ("date", Scalar::Date),
        ("timestamp", Scalar::Timestamp),
    ];

    pub fn named(name: &str) -> Option<Scalar> {
        Scalar::NAMES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
    }

    pub fn name(self) -> &'static str {
        Scalar::NAMES
            .iter()
            .find(|(_, s)| *s == self)
            .map(|(n, _)| *n)
            .unwrap_or("string")
    }
}

impl CuratedTool {
    /// The parameter of that name.
    pub fn parameter(&self, name: &str) -> Option<&Parameter> {
        self.parameters.iter().find(|p| p.name == name)
    }
}

/// Whether `name` may name a tool, a parameter or a database: a letter,
/// then letters, digits, `_` or `-`, 64 characters at most (what MCP
/// clients accept in a tool name).
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
