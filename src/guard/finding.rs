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
    // with its rule, so the engines cannot drift apart. Where the engines
    // truly differ, the difference is a parameter (`what` names the
    // statement as the engine spells it) or the caller's remedy
    // (PostgreSQL's `COPY ... TO STDOUT`), never a second sentence. A
    // refusal only one dialect has stays with its guard.

    /// `SET` and `RESET` (PostgreSQL, DuckDB): `what` names the statement.
    pub fn setting(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::Set,
            what,
            "session settings outlive the statement and can weaken the guard or later calls",
        )
    }

    /// `DROP` of any object (every engine).
    pub fn drop() -> Finding<'a> {
        Finding::new(
            Rule::Drop,
            "DROP statements are not allowed",
            "they destroy objects and the data in them",
        )
    }

    /// `ALTER TABLE ... DROP COLUMN` (PostgreSQL, SQLite).
    pub fn drop_column() -> Finding<'a> {
        Finding::new(
            Rule::Drop,
            "ALTER TABLE ... DROP COLUMN is not allowed",
            "it destroys the column and the data in it",
        )
    }

    /// `CREATE OR REPLACE` (PostgreSQL, DuckDB): what it replaces is dropped.
    pub fn create_or_replace() -> Finding<'a> {
        Finding::new(
            Rule::Drop,
            "CREATE OR REPLACE is not allowed",
            "it drops the object it replaces, and any data in it",
        )
    }

    /// `TRUNCATE` (PostgreSQL, DuckDB).
    pub fn truncate() -> Finding<'a> {
        Finding::new(
            Rule::Truncate,
            "TRUNCATE statements are not allowed",
            "it deletes every row of the table",
        )
    }

    /// `COPY ... FROM` (PostgreSQL, DuckDB).
    pub fn copy_from() -> Finding<'a> {
        Finding::new(
            Rule::CopyFrom,
            "COPY FROM is not allowed",
            "it loads data from files or programs on the database server",
        )
    }

    /// `COPY ... TO` a file or program (PostgreSQL, DuckDB). The remedy is
    /// the caller's: only PostgreSQL's `COPY ... TO STDOUT` stays allowed
    /// (DuckDB's standard streams are pgmcp's own).
    pub fn copy_to_file() -> Finding<'a> {
        Finding::new(
            Rule::CopyToFile,
            "COPY TO a server file or program is not allowed",
            "it writes files or runs shell commands on the database server",
        )
    }

    /// A function or macro whose body runs later (PostgreSQL, DuckDB): `what`
    /// names the statement.
    pub fn create_function(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::CreateFunction,
            what,
            "can contain arbitrary SQL bypassing protection checks",
        )
    }

    /// `PREPARE` (PostgreSQL; DuckDB's `EXECUTE` too): `what` names the statement.
    pub fn prepare(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::Prepare,
            what,
            "prepared statements can be executed later bypassing protection checks",
        )
    }

    /// `DELETE` without `WHERE` (every engine): a `WHERE` would let it run.
    pub fn delete_without_where() -> Finding<'a> {
        Finding::new(
            Rule::DeleteWithoutWhere,
            "DELETE without WHERE clause is not allowed",
            "it deletes every row of the table",
        )
        .remedy(Remedy::AddWhere)
    }

    /// `UPDATE` without `WHERE` (every engine): a `WHERE` would let it run.
    pub fn update_without_where() -> Finding<'a> {
        Finding::new(
            Rule::UpdateWithoutWhere,
            "UPDATE without WHERE clause is not allowed",
            "it changes every row of the table",
        )
        .remedy(Remedy::AddWhere)
    }

    /// An upsert or a `REPLACE` fed by a query (every engine): `what` names
    /// the forms the engine has.
    pub fn overwrite_from_query(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::UpdateWithoutWhere,
            what,
            "an upsert fed by a query can overwrite every row the query names, like an UPDATE without WHERE; a VALUES list names its rows",
        )
    }

    /// A column's type changed (PostgreSQL, DuckDB): `what` names the
    /// statement.
    pub fn column_rewrite(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::UpdateWithoutWhere,
            what,
            "it rewrites the column in every row, like an UPDATE without WHERE",
        )
    }

    /// Native code loaded into the server (PostgreSQL's `LOAD`, DuckDB's
    /// `INSTALL` and `LOAD`): `what` names the statement.
    pub fn load(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::Load,
            what,
            "extensions and shared libraries are native code loaded into the server process",
        )
    }

    /// `MERGE` (PostgreSQL, DuckDB).
    pub fn merge() -> Finding<'a> {
        Finding::new(
            Rule::Merge,
            "MERGE is not allowed",
            "its UPDATE and DELETE actions can change every row, with no WHERE clause to check",
        )
    }

    /// Maintenance (every engine): `what` names the statement, `VACUUM is not allowed`.
    pub fn maintenance(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::Maintenance,
            what,
            "maintenance rewrites or scans whole tables and locks them while it runs",
        )
    }

    /// `ATTACH` and `DETACH` (SQLite, DuckDB).
    pub fn attach() -> Finding<'a> {
        Finding::new(
            Rule::Attach,
            "ATTACH and DETACH are not allowed",
            "ATTACH opens, and can create, any database file the server can reach",
        )
    }

    /// A `PRAGMA` that sets a value or acts (SQLite, DuckDB): `what` names
    /// it.
    pub fn pragma(what: impl Into<Cow<'a, str>>) -> Finding<'a> {
        Finding::new(
            Rule::Pragma,
            what,
            "a writing PRAGMA changes how the database file is stored or how the connection behaves",
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

/// Why a function that runs SQL given as text is refused (PostgreSQL's
/// blocked `query_to_xml` family, DuckDB's `query()`), after "it".
pub(super) const RUNS_SQL_TEXT: &str = "runs SQL given as text, which the guard cannot check";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Judge, Mode, Policy};

    /// Each sentence the dialects share, as every engine words it: what,
    /// why, and the setting that allows it. The DuckDB and SQLite corpora
    /// and `tests/it` pin some of them too (DuckDB's need the `duckdb`
    /// build).
    #[test]
    fn shared_refusals_say_what_why_and_the_setting() {
        let judge = Judge::new(Policy::default(), Mode::ReadWrite);
        let cases = [
            (
                Finding::setting("SET and RESET are not allowed"),
                "SET and RESET are not allowed: session settings outlive the statement and can weaken the guard or later calls. Set protection.allow_set to true to allow it",
            ),
            (
                Finding::drop(),
                "DROP statements are not allowed: they destroy objects and the data in them. Set protection.allow_drop to true to allow it",
            ),
            (
                Finding::drop_column(),
                "ALTER TABLE ... DROP COLUMN is not allowed: it destroys the column and the data in it. Set protection.allow_drop to true to allow it",
            ),
            (
                Finding::create_or_replace(),
                "CREATE OR REPLACE is not allowed: it drops the object it replaces, and any data in it. Set protection.allow_drop to true to allow it",
            ),
            (
                Finding::truncate(),
                "TRUNCATE statements are not allowed: it deletes every row of the table. Set protection.allow_truncate to true to allow it",
            ),
            (
                Finding::copy_from(),
                "COPY FROM is not allowed: it loads data from files or programs on the database server. Set protection.allow_copy_from to true to allow it",
            ),
            (
                Finding::copy_to_file(),
                "COPY TO a server file or program is not allowed: it writes files or runs shell commands on the database server. Set protection.allow_copy_to_file to true to allow it",
            ),
            (
                Finding::copy_to_file().remedy(Remedy::ToStdout),
                "COPY TO a server file or program is not allowed: it writes files or runs shell commands on the database server. COPY ... TO STDOUT is allowed; set protection.allow_copy_to_file to true to allow the rest",
            ),
            (
                Finding::create_function("CREATE FUNCTION is not allowed"),
                "CREATE FUNCTION is not allowed: can contain arbitrary SQL bypassing protection checks. Set protection.allow_create_function to true to allow it",
            ),
            (
                Finding::prepare("PREPARE statements are not allowed"),
                "PREPARE statements are not allowed: prepared statements can be executed later bypassing protection checks. Set protection.allow_prepare to true to allow it",
            ),
            (
                Finding::delete_without_where(),
                "DELETE without WHERE clause is not allowed: it deletes every row of the table. Add a WHERE clause, or set protection.allow_delete_without_where to true",
            ),
            (
                Finding::update_without_where(),
                "UPDATE without WHERE clause is not allowed: it changes every row of the table. Add a WHERE clause, or set protection.allow_update_without_where to true",
            ),
            (
                Finding::overwrite_from_query("INSERT OR REPLACE fed by a query is not allowed"),
                "INSERT OR REPLACE fed by a query is not allowed: an upsert fed by a query can overwrite every row the query names, like an UPDATE without WHERE; a VALUES list names its rows. Set protection.allow_update_without_where to true to allow it",
            ),
            (
                Finding::column_rewrite("ALTER COLUMN ... TYPE is not allowed"),
                "ALTER COLUMN ... TYPE is not allowed: it rewrites the column in every row, like an UPDATE without WHERE. Set protection.allow_update_without_where to true to allow it",
            ),
            (
                Finding::load("LOAD is not allowed"),
                "LOAD is not allowed: extensions and shared libraries are native code loaded into the server process. Set protection.allow_load to true to allow it",
            ),
            (
                Finding::merge(),
                "MERGE is not allowed: its UPDATE and DELETE actions can change every row, with no WHERE clause to check. Set protection.allow_merge to true to allow it",
            ),
            (
                Finding::maintenance("VACUUM is not allowed"),
                "VACUUM is not allowed: maintenance rewrites or scans whole tables and locks them while it runs. Set protection.allow_maintenance to true to allow it",
            ),
            (
                Finding::attach(),
                "ATTACH and DETACH are not allowed: ATTACH opens, and can create, any database file the server can reach. Set protection.allow_attach to true to allow it",
            ),
            (
                Finding::pragma("PRAGMA optimize is not allowed"),
                "PRAGMA optimize is not allowed: a writing PRAGMA changes how the database file is stored or how the connection behaves. Set protection.allow_pragma_write to true to allow it",
            ),
        ];
        for (finding, message) in cases {
            assert_eq!(judge.decide(finding).unwrap_err().message, message);
        }
    }
}
