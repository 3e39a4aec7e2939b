//! What a guard found, for the judge to decide: a [`Finding`] names the rule,
//! what would be refused, why, and how the refusal says what to do
//! ([`Remedy`]). The refusals more than one dialect words are constructors
//! here, each sentence once. Apart from the [`Judge`](super::Judge), which
//! reads the policy and the mode, because these are the words, not the
//! verdict.

use std::borrow::Cow;

use super::rule::Rule;

/// What a guard found that a rule with a switch governs.
#[derive(Debug, Clone)]
pub struct Finding<'a> {
    pub rule: Rule,
    /// What would be refused: `DROP statements are not allowed`.
    pub what: Cow<'a, str>,
    /// Why it is dangerous: `they destroy objects and the data in them`.
    pub why: &'a str,
    pub remedy: Remedy,
}

impl<'a> Finding<'a> {
    pub fn new(rule: Rule, what: impl Into<Cow<'a, str>>, why: &'a str) -> Finding<'a> {
        Finding {
            rule,
            what: what.into(),
            why,
            remedy: Remedy::Switch,
        }
    }

    pub fn remedy(self, remedy: Remedy) -> Finding<'a> {
        Finding { remedy, ..self }
    }

    // The refusals more than one dialect words alike: each sentence once,
    // with its rule, so the engines cannot drift apart. A dialect's own
    // wording stays with its guard; the remedy stays the caller's.

    /// `DROP` of any object (every engine).
    pub fn drop() -> Finding<'a> {
        Finding::new(
            Rule::Drop,
            "DROP statements are not allowed",
            "they destroy objects and the data in them",
        )
    }

    /// `DELETE` without `WHERE` (SQLite and DuckDB; PostgreSQL says "WHERE clause").
    pub fn delete_without_where() -> Finding<'a> {
        Finding::new(
            Rule::DeleteWithoutWhere,
            "DELETE without WHERE is not allowed",
            "it deletes every row of the table",
        )
    }

    /// `UPDATE` without `WHERE` (SQLite and DuckDB; PostgreSQL says "WHERE clause").
    pub fn update_without_where() -> Finding<'a> {
        Finding::new(
            Rule::UpdateWithoutWhere,
            "UPDATE without WHERE is not allowed",
            "it changes every row of the table",
        )
    }

    /// An upsert or a `REPLACE` fed by a query (SQLite and DuckDB): `what`
    /// names the forms the engine has.
    pub fn overwrite_from_query(what: &'a str) -> Finding<'a> {
        Finding::new(
            Rule::UpdateWithoutWhere,
            what,
            "they can overwrite every row the query names, like an UPDATE without WHERE; a VALUES list names its rows",
        )
    }

    /// Maintenance (every engine): `what` names the statement, `VACUUM is not allowed`.
    pub fn maintenance(what: &'a str) -> Finding<'a> {
        Finding::new(
            Rule::Maintenance,
            what,
            "maintenance rewrites or scans whole tables and locks them while it runs",
        )
    }
}

/// How a refusal tells the person what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// `Set protection.allow_x to true to allow it`.
    Switch,
    /// A statement that names its rows could run: `Add a WHERE clause, or set ...`.
    AddWhere,
    /// Part of the statement's kind stays allowed: `COPY ... TO STDOUT is allowed; set ...`.
    ToStdout,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Judge, Mode, Policy};

    /// The sentences the dialects share, as every engine words them: the
    /// DuckDB corpus, which pins some of them too, needs the `duckdb` build.
    #[test]
    fn shared_refusals_read_as_before() {
        let judge = Judge::new(Policy::default(), Mode::ReadWrite);
        let cases = [
            (
                Finding::drop(),
                "DROP statements are not allowed: they destroy objects and the data in them. Set protection.allow_drop to true to allow it",
            ),
            (
                Finding::delete_without_where().remedy(Remedy::AddWhere),
                "DELETE without WHERE is not allowed: it deletes every row of the table. Add a WHERE clause, or set protection.allow_delete_without_where to true",
            ),
            (
                Finding::update_without_where(),
                "UPDATE without WHERE is not allowed: it changes every row of the table. Set protection.allow_update_without_where to true to allow it",
            ),
            (
                Finding::overwrite_from_query("INSERT OR REPLACE fed by a query is not allowed"),
                "INSERT OR REPLACE fed by a query is not allowed: they can overwrite every row the query names, like an UPDATE without WHERE; a VALUES list names its rows. Set protection.allow_update_without_where to true to allow it",
            ),
            (
                Finding::maintenance("VACUUM is not allowed"),
                "VACUUM is not allowed: maintenance rewrites or scans whole tables and locks them while it runs. Set protection.allow_maintenance to true to allow it",
            ),
        ];
        for (finding, message) in cases {
            assert_eq!(judge.decide(finding).unwrap_err().message, message);
        }
    }
}
