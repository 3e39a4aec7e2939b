//! The guard's verdict on a statement before any database is open: what a
//! curated tool's statement gets when the config loads, so a tool the guard
//! would refuse, or one that writes on a read-only database, stops the
//! config rather than its first call. Every call is judged again in full,
//! with the engine's own evidence, as a `query` call is; this is the early
//! word, never the last. Pure.
//!
//! - PostgreSQL: the whole guard over PostgreSQL's parse tree, without the
//!   catalog's facts ([`Routines::unread`]): every rule but whether a
//!   function only reads, which the call judges with the catalog.
//! - SQLite and DuckDB: their engines report what a statement does only as
//!   they prepare it against the database, so here the engine's own
//!   tokenizer tells the statements apart and their verbs ([`Outline`]),
//!   and the rules the tokens decide apply (DuckDB's file functions, the
//!   blocked functions called by name).

use super::outline::{self, Outline};
use super::{Judge, Mode, Policy, Routines, Violation};
use crate::backend::Dialect;

/// What the early look found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The statement may write: PostgreSQL's guard refuses it in read-only
    /// mode, or (SQLite, DuckDB) its verb is not one that only reads.
    pub writes: bool,
    /// PostgreSQL: the highest `$n` it uses. `None` where the count is the
    /// engine's to say (SQLite's and DuckDB's placeholders are counted as
    /// they prepare the statement).
    pub placeholders: Option<usize>,
}

/// Judge `sql` in `dialect` under `policy` in `mode`, before any database
/// is open.
pub fn preview(policy: &Policy, mode: Mode, dialect: Dialect, sql: &str) -> Result<Preview, Violation> {
    let judge = Judge::new(policy.clone(), mode);
    let reading = Judge::new(policy.clone(), Mode::ReadOnly);
    match dialect {
        Dialect::Postgres => {
            let routines = Routines::unread();
            let checked = super::check(&judge, &routines, sql)?;
            Ok(Preview {
                writes: super::check(&reading, &routines, sql).is_err(),
                placeholders: Some(checked.param_count()),
            })
        }
        Dialect::Sqlite => {
            let statements = super::sqlite::statements(sql);
            super::one_statement(statements.len())?;
            let outline = Outline::sqlite(statements[0]);
            outline
                .calls
                .iter()
                .try_for_each(|name| super::sqlite::function(&judge, name))?;
            // A pragma that only reports reads; what any other does is
            // SQLite's to say at the call, and until then it may write.
            let pragma = outline.calls.first().map(String::as_str).or(outline.object());
            let reads =
                reads(&outline) || (outline.verb == "PRAGMA" && pragma.is_some_and(super::sqlite::only_reports));
            if matches!(outline.verb.as_str(), "ATTACH" | "DETACH") {
                judge.decide(super::Finding::attach())?;
            }
            super::sqlite::statement(&judge, &outline, reads)?;
            Ok(Preview {
                writes: !reads,
                placeholders: None,
            })
        }
        Dialect::DuckDb => {
            let text = outline::without_final_semicolon(sql);
            super::one_statement(outline::statement_count(text, outline::Dialect::DuckDb))?;
            let outline = Outline::duckdb(text);
            super::duckdb::text(&judge, &outline)?;
            let reads = reads(&outline);
            // As on SQLite, what a PRAGMA does is DuckDB's to report.
            if !reads && outline.verb != "PRAGMA" {
                super::write_in_read_only(&judge, &outline)?;
            }
            Ok(Preview {
                writes: !reads,
                placeholders: None,
            })
        }
    }
}

/// SQLite and DuckDB: whether the verb is one that only reads. Any other
/// may write (a `PRAGMA` may or may not: the call tells).
fn reads(outline: &Outline) -> bool {
    match outline.verb.as_str() {
        "SELECT" | "VALUES" | "FROM" | "TABLE" | "SHOW" | "DESCRIBE" | "SUMMARIZE" => true,
        _ if outline.explain => !outline.analyze,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Rule;

    #[test]
    fn each_dialect_before_the_database_opens() {
        use Dialect::{DuckDb, Postgres, Sqlite};
        // (dialect, mode, sql, Ok(writes) or the rule that refuses)
        let cases: &[(Dialect, Mode, &str, Result<bool, Rule>)] = &[
            (
                Postgres,
                Mode::ReadOnly,
                "SELECT * FROM orders WHERE id = $1",
                Ok(false),
            ),
            (Postgres, Mode::ReadOnly, "SELECT my_report($1)", Ok(false)),
            (
                Postgres,
                Mode::ReadOnly,
                "UPDATE orders SET status = $1 WHERE id = $2",
                Err(Rule::ReadOnly),
            ),
            (
                Postgres,
                Mode::ReadWrite,
                "UPDATE orders SET status = $1 WHERE id = $2",
                Ok(true),
            ),
            (
                Postgres,
                Mode::ReadWrite,
                "DELETE FROM orders",
                Err(Rule::DeleteWithoutWhere),
            ),
            (Postgres, Mode::ReadWrite, "DROP TABLE orders", Err(Rule::Drop)),
            (
                Postgres,
                Mode::ReadOnly,
                "SELECT pg_read_file('/etc/passwd')",
                Err(Rule::BlockedFunction),
            ),
            (
                Postgres,
                Mode::ReadOnly,
                "SELECT 1; SELECT 2",
                Err(Rule::MultiStatement),
            ),
            (Postgres, Mode::ReadOnly, "SELEC 1", Err(Rule::Parse)),
            (Sqlite, Mode::ReadOnly, "SELECT * FROM orders WHERE id = ?", Ok(false)),
            (
                Sqlite,
                Mode::ReadOnly,
                "WITH x AS (SELECT 1) DELETE FROM orders WHERE id IN x",
                Err(Rule::ReadOnly),
            ),
            (Sqlite, Mode::ReadWrite, "INSERT INTO orders (id) VALUES (?)", Ok(true)),
            (Sqlite, Mode::ReadOnly, "SELECT 1; SELECT 2", Err(Rule::MultiStatement)),
            (
                Sqlite,
                Mode::ReadOnly,
                "SELECT lo_import('/etc/passwd')",
                Err(Rule::BlockedFunction),
            ),
            (Sqlite, Mode::ReadOnly, "EXPLAIN QUERY PLAN SELECT 1", Ok(false)),
            // A pragma that only reports reads; any other may write.
            (Sqlite, Mode::ReadOnly, "PRAGMA table_info(t)", Ok(false)),
            (Sqlite, Mode::ReadOnly, "PRAGMA query_only = 0", Err(Rule::ReadOnly)),
            (Sqlite, Mode::ReadWrite, "PRAGMA cache_size = 10", Ok(true)),
            (Sqlite, Mode::ReadWrite, "ATTACH ?1 AS other", Err(Rule::Attach)),
            (Sqlite, Mode::ReadWrite, "VACUUM INTO ?1", Err(Rule::VacuumInto)),
            (Sqlite, Mode::ReadWrite, "VACUUM", Err(Rule::Maintenance)),
            (Sqlite, Mode::ReadWrite, "SELECT load_extension(?1)", Err(Rule::Load)),
            (
                DuckDb,
                Mode::ReadOnly,
                "SELECT count(*) FROM events WHERE day >= ?;",
                Ok(false),
            ),
            (DuckDb, Mode::ReadOnly, "FROM events", Ok(false)),
            (
                DuckDb,
                Mode::ReadOnly,
                "SELECT * FROM read_csv('/etc/passwd')",
                Err(Rule::FileFunction),
            ),
            (DuckDb, Mode::ReadOnly, "COPY events TO 'x.csv'", Err(Rule::ReadOnly)),
            (DuckDb, Mode::ReadOnly, "SELECT 1; SELECT 2", Err(Rule::MultiStatement)),
        ];
        let policy = Policy::default();
        for (dialect, mode, sql, expected) in cases {
            let got = preview(&policy, *mode, *dialect, sql);
            match (&got, expected) {
                (Ok(p), Ok(writes)) => assert_eq!(p.writes, *writes, "{dialect:?} {sql}"),
                (Err(v), Err(rule)) => assert_eq!(v.rule, *rule, "{dialect:?} {sql}: {v}"),
                _ => panic!("{dialect:?} {mode:?} {sql}: got {got:?}, want {expected:?}"),
            }
        }
        let p = preview(&policy, Mode::ReadOnly, Postgres, "SELECT $2::int + $1::int").unwrap();
        assert_eq!(p.placeholders, Some(2));
    }
}
