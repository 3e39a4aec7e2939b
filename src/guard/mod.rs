//! The guard: decides from PostgreSQL's own parse tree whether a SQL string may
//! run. Pure (no IO): the same input always gets the same verdict.
//!
//! Today it enforces what can never be switched off: the string must parse, and
//! it must hold exactly one statement. PostgreSQL enforces the second rule again
//! on its side, because pgmcp sends queries with the extended protocol.

mod tree;

use std::fmt;

pub use tree::{ParseError, Tree, parse};

/// Which rule refused a query. Stable names, usable in logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The string is not valid PostgreSQL SQL (or is empty).
    Parse,
    /// More than one statement in one call.
    MultiStatement,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Parse => "parse",
            Rule::MultiStatement => "multi-statement",
        }
    }
}

/// A refusal: which rule, and a message that says what was blocked and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Violation {}

/// A query the guard accepted, with its parse tree for later stages.
#[derive(Debug, Clone)]
pub struct Checked {
    pub tree: Tree,
}

/// Parse `sql` and apply every rule.
pub fn check(sql: &str) -> Result<Checked, Violation> {
    let tree = parse(sql).map_err(|e| Violation {
        rule: Rule::Parse,
        message: match e.position {
            Some(pos) => format!("SQL parse error: {} (at character {pos})", e.message),
            None => format!("SQL parse error: {}", e.message),
        },
    })?;
    match tree.stmts.len() {
        0 => Err(Violation {
            rule: Rule::Parse,
            message: "SQL parse error: the query is empty".to_owned(),
        }),
        1 => Ok(Checked { tree }),
        n => Err(Violation {
            rule: Rule::MultiStatement,
            message: format!(
                "multi-statement queries are not allowed: found {n} statements. Send one statement per call"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (sql, expected: None = allowed, Some(message prefix))
    const CASES: &[(&str, Option<&str>)] = &[
        ("SELECT 1", None),
        ("SELECT 1;", None),
        (
            "SELECT 1; SELECT 2",
            Some("multi-statement queries are not allowed: found 2 statements"),
        ),
        (
            "SELECT 1; DROP TABLE users",
            Some("multi-statement queries are not allowed: found 2 statements"),
        ),
        (
            "SELECT 1; SELECT 2; SELECT 3",
            Some("multi-statement queries are not allowed: found 3 statements"),
        ),
        (
            "SELECT * FROM users; DROP TABLE users",
            Some("multi-statement queries are not allowed: found 2 statements"),
        ),
        // The seed expects "found 3" here, but a trailing comment is not a
        // statement: PostgreSQL's grammar drops empty statements.
        (
            "SELECT 1; DELETE FROM users; --",
            Some("multi-statement queries are not allowed: found 2 statements"),
        ),
        ("SELECT ';' AS semicolon", None),
        ("SELECT $$a;b$$", None),
        ("", Some("SQL parse error")),
        ("   ", Some("SQL parse error")),
        (";", Some("SQL parse error")),
        (";;", Some("SQL parse error")),
        ("NOT VALID SQL @#$", Some("SQL parse error")),
    ];

    #[test]
    fn verdicts() {
        for (sql, expected) in CASES {
            match (check(sql), expected) {
                (Ok(_), None) => {}
                (Err(v), Some(prefix)) => assert!(v.message.starts_with(prefix), "{sql:?}: got {:?}", v.message),
                (got, want) => panic!("{sql:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
