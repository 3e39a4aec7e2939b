//! What the model is told at `initialize` (the server's instructions):
//! what is guarded, the caps, the session's mode and what a person is
//! asked, how to page, and where to start, in the words of the tools
//! served. Apart from the handlers because it is words, not wiring.

use crate::backend::Dialect;
use crate::config::{Config, ConfirmWhen};
use crate::door::boundary;

/// What the model is told at `initialize`: what is guarded, the caps, the
/// session's mode, and how to page.
pub(super) fn instructions(
    config: &Config,
    dialect: Dialect,
    enabled: crate::config::ToolsEnabled,
    named: bool,
) -> String {
    let mode = match (config.read_only, dialect) {
        // With several databases, the list of them says each one's mode;
        // what a person is asked is the file's to say.
        _ if named => match config.confirm.when {
            ConfirmWhen::Never => "",
            ConfirmWhen::Writes => {
                "On a database that may write, a statement that changes data runs only once the person accepts \
                 it (pgmcp asks them). If they decline, nothing ran: do not send it again unless they ask."
            }
            ConfirmWhen::All => {
                "On a database that may write, every statement runs only once the person accepts it (pgmcp asks \
                 them). If they decline, nothing ran: do not send it again unless they ask."
            }
        },
        (true, Dialect::Postgres) => {
            "This session is read-only: every statement runs in a READ ONLY transaction, so writes fail."
        }
        (true, Dialect::Sqlite) => "This session is read-only: the database file is opened read-only, so writes fail.",
        (true, Dialect::DuckDb) => {
            "This session is read-only: the database file is opened in DuckDB's read-only mode, so writes fail."
        }
        (false, _) => match config.confirm.when {
            ConfirmWhen::Never => "This session may write: each statement commits on its own.",
            ConfirmWhen::Writes => {
                "This session may write: each statement commits on its own, and one that changes data runs only \
                 once the person accepts it (pgmcp asks them). If they decline, nothing ran: do not send it again \
                 unless they ask."
            }
            ConfirmWhen::All => {
                "This session may write: each statement commits on its own, and runs only once the person \
                 accepts it (pgmcp asks them). If they decline, nothing ran: do not send it again unless they ask."
            }
        },
    };
    let (engine, guard) = match dialect {
        Dialect::Postgres => ("a PostgreSQL database", "PostgreSQL's own parse tree"),
        Dialect::Sqlite => ("an SQLite database", "what SQLite's own parser reports"),
        Dialect::DuckDb => ("a DuckDB database", "what DuckDB's own parser reports"),
    };
    format!(
        "pgmcp runs SQL on {engine} through a guard that checks {guard}: one \
         statement per call, and statements or functions that could cause damage (DROP, TRUNCATE, DELETE or \
         UPDATE without WHERE, file access, ...) are refused with a message saying why. {}A query returns \
         {} and at most {} bytes of rows, and is stopped on the server after {}s. {}",
        match mode.is_empty() {
            true => String::new(),
            false => format!("{mode} "),
        },
        match config.query.default_limit {
            Some(default) if default < config.query.max_rows => format!(
                "at most {default} rows unless it passes a larger limit (up to {})",
                config.query.max_rows
            ),
            _ => format!("at most {} rows", config.query.max_rows),
        },
        config.query.max_result_length,
        config.query.default_timeout.as_secs(),
        next_steps(dialect, enabled),
    ) + match config.data_boundary {
        true => boundary::SAID,
        false => "",
    }
}

/// How to page and where to start, in the words of the tools served: no
/// SQL advice without `query`, no catalog tool that is switched off.
fn next_steps(dialect: Dialect, enabled: crate::config::ToolsEnabled) -> String {
    let mut text = match enabled.query {
        true => "When a result says truncated: true, page with ORDER BY plus LIMIT/OFFSET, filter with WHERE, \
                 select fewer columns, or aggregate."
            .to_owned(),
        false => "When a result says truncated: true, narrow the call's arguments.".to_owned(),
    };
    let start = match (enabled.list_tables, enabled.describe_table) {
        (true, true) => Some("Start with list_tables and describe_table"),
        (true, false) => Some("Start with list_tables"),
        (false, true) => Some("Use describe_table to learn a table's columns"),
        (false, false) => None,
    };
    let params = enabled.query.then(|| {
        format!(
            "pass values as params ({})",
            match dialect {
                Dialect::Postgres => "$1, $2",
                Dialect::Sqlite => "? or ?1, ?2",
                Dialect::DuckDb => "? or $1, $2",
            }
        )
    });
    match (start, params) {
        (Some(start), Some(params)) => text.push_str(&format!(" {start}; {params}.")),
        (Some(start), None) => text.push_str(&format!(" {start}.")),
        (None, Some(params)) => text.push_str(&format!(
            " Pass values as params{}.",
            &params["pass values as params".len()..]
        )),
        (None, None) => {}
    }
    if enabled.explain && dialect == Dialect::Postgres {
        text.push_str(
            " To learn why a query is slow, explain shows its plan (with analyze it runs the statement, and rolls \
             it back).",
        );
    }
    if enabled.diagnose && dialect == Dialect::Postgres {
        text.push_str(
            " To learn whether the database is healthy, diagnose runs one check (slow_queries, locks, \
             unused_indexes, missing_indexes, bloat, vacuum, connections, cache_hit, replication).",
        );
    }
    text
}
