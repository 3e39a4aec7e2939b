//! The guard for SQLite. SQLite's dialect is not PostgreSQL's, so its own
//! parser decides what a statement does: the backend prepares the statement
//! with an authorizer that hands every action SQLite reports to [`authorize`],
//! and checks [`statement()`] on the prepared statement. The protection flags
//! mean what they mean on PostgreSQL; only the evidence comes from SQLite.
//!
//! Every function call comes from the authorizer (`SQLITE_FUNCTION`, at any
//! depth, in any syntax SQLite accepts), never from the text. SQLite's
//! authorizer does not say whether a `DELETE` or `UPDATE` has a `WHERE`, or
//! which statement a `VACUUM` is; [`Outline`] reads that from the tokens of
//! the one statement SQLite accepted, split the way SQLite's own tokenizer
//! splits them (`super::lexer::sqlite`). All of it is pure.

mod boundaries;
mod pragma;
mod statement;

use rusqlite::ffi::{SQLITE_ATTACH, SQLITE_DETACH};
use rusqlite::hooks::AuthAction;

pub use self::boundaries::statements;
pub(in crate::guard) use self::pragma::only_reports;
use self::pragma::pragma;
pub use self::statement::statement;
pub use super::outline::{Operand, Outline};
use super::{Finding, Judge, Rule, Violation, violation};

/// Report one action SQLite reported while preparing the statement.
/// `accessor` is the trigger or view the action comes from (`None` for the
/// statement itself): a trigger's own `DELETE` is part of the schema, not of
/// the query.
pub fn authorize(
    judge: &Judge,
    outline: &Outline,
    action: &AuthAction<'_>,
    accessor: Option<&str>,
) -> Result<(), Violation> {
    let top = accessor.is_none();
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    // A file of pgmcp's own process (its stdin carries the protocol), however
    // the name was computed: no switch allows it.
    if let AuthAction::Attach { filename } = *action {
        let rule = match outline.verb.as_str() {
            "VACUUM" => Rule::VacuumInto,
            _ => Rule::Attach,
        };
        super::own_process(rule, filename)?;
    }
    // In read-only mode a write is refused as a write, before the rule of
    // its kind: that rule's switch would only lead to this refusal. SQLite
    // reports a write before the functions in it, so those no setting
    // allows are looked for in the text first, to be named first as on the
    // other engines (the statement is refused either way).
    if judge.read_only() && writes(outline, action) {
        outline.calls.iter().try_for_each(|name| function(judge, name))?;
        crate::guard::write_in_read_only(judge, outline)?;
    }
    match *action {
        AuthAction::DropTable { .. }
        | AuthAction::DropIndex { .. }
        | AuthAction::DropTrigger { .. }
        | AuthAction::DropView { .. }
        | AuthAction::DropTempTable { .. }
        | AuthAction::DropTempIndex { .. }
        | AuthAction::DropTempTrigger { .. }
        | AuthAction::DropTempView { .. }
        | AuthAction::DropVtable { .. } => judge.decide(Finding::drop()),
        AuthAction::AlterTable { .. } if outline.has("DROP") => judge.decide(Finding::drop_column()),
        AuthAction::Delete { table_name }
            if top && outline.verb == "DELETE" && !outline.has_where() && !table_name.starts_with("sqlite_") =>
        {
            judge.decide(Finding::delete_without_where())
        }
        // UPDATE OR REPLACE (or an UPDATE of a table that replaces on
        // conflict) deletes the rows its new values collide with, which its
        // WHERE does not name.
        AuthAction::Update { table_name, .. }
            if top && outline.verb == "UPDATE" && (outline.says_or_replace() || outline.replaces_in(table_name)) =>
        {
            decide(
                Rule::UpdateWithoutWhere,
                "UPDATE OR REPLACE, or an UPDATE of a table that replaces on conflict, is not allowed",
                "it deletes every row its new values collide with, which its WHERE does not name",
            )
        }
        AuthAction::Update { .. } if top && outline.verb == "UPDATE" && !outline.has_where() => {
            judge.decide(Finding::update_without_where())
        }
        // SQLite reports an upsert's DO UPDATE as updates inside the INSERT,
        // and a REPLACE as an insert: fed by a query, either overwrites
        // every row the query names (fed the table itself, every row).
        AuthAction::Update { table_name, .. } | AuthAction::Insert { table_name }
            if top
                && matches!(outline.verb.as_str(), "INSERT" | "REPLACE")
                && (matches!(action, AuthAction::Update { .. })
                    || outline.says_overwrite()
                    || outline.replaces_in(table_name))
                && !outline.fed_by_values() =>
        {
            judge.decide(Finding::overwrite_from_query(
                "REPLACE, INSERT OR REPLACE and INSERT ... ON CONFLICT DO UPDATE fed by a query are not allowed",
            ))
        }
        // CREATE INDEX fills its index through SQLite's REINDEX action: only
        // the REINDEX statement is maintenance.
        AuthAction::Analyze { .. } | AuthAction::Reindex { .. }
            if outline.verb == "REINDEX" || matches!(action, AuthAction::Analyze { .. }) =>
        {
            judge.decide(Finding::maintenance(if matches!(action, AuthAction::Analyze { .. }) {
                "ANALYZE is not allowed"
            } else {
                "REINDEX is not allowed"
            }))
        }
        // VACUUM attaches its scratch database itself; VACUUM INTO is judged
        // as a statement. A computed file name reaches the authorizer as
        // NULL (rusqlite's `Unknown` of SQLite's ATTACH and DETACH codes):
        // the statement rules refuse it by name.
        AuthAction::Attach { .. }
        | AuthAction::Detach { .. }
        | AuthAction::Unknown {
            code: SQLITE_ATTACH | SQLITE_DETACH,
            ..
        } if outline.verb != "VACUUM" => judge.decide(Finding::attach()),
        AuthAction::CreateTrigger { .. } | AuthAction::CreateTempTrigger { .. } => decide(
            Rule::CreateFunction,
            "CREATE TRIGGER is not allowed",
            "a trigger's body runs later, on other statements, where the guard does not check it",
        ),
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => pragma(judge, pragma_name, pragma_value),
        AuthAction::Function { function_name } => function(judge, function_name),
        // What ordinary reads and writes report, each judged above where a
        // rule applies to it.
        AuthAction::Select
        | AuthAction::Read { .. }
        | AuthAction::Recursive
        | AuthAction::Insert { .. }
        | AuthAction::Update { .. }
        | AuthAction::Delete { .. }
        | AuthAction::Transaction { .. }
        | AuthAction::Savepoint { .. }
        | AuthAction::CreateTable { .. }
        | AuthAction::CreateTempTable { .. }
        | AuthAction::CreateIndex { .. }
        | AuthAction::CreateTempIndex { .. }
        | AuthAction::CreateView { .. }
        | AuthAction::CreateTempView { .. }
        | AuthAction::CreateVtable { .. }
        | AuthAction::AlterTable { .. }
        | AuthAction::Reindex { .. }
        | AuthAction::Attach { .. }
        | AuthAction::Detach { .. }
        | AuthAction::Unknown {
            code: SQLITE_ATTACH | SQLITE_DETACH,
            ..
        } => Ok(()),
        // An action this version of the guard does not know: no rule says
        // it may run, so it does not.
        _ => super::unsupported("SQLite", action),
    }
}

/// Actions that change the database: SQLite never calls a statement that
/// reports one read-only (`sqlite3_stmt_readonly`), so read-only mode refuses
/// it whichever rule is asked first. `CREATE INDEX` reports a REINDEX too,
/// and writes as well.
fn writes(outline: &Outline, action: &AuthAction<'_>) -> bool {
    match action {
        AuthAction::Reindex { .. } => outline.verb == "REINDEX",
        _ => matches!(
            action,
            AuthAction::Insert { .. }
                | AuthAction::Update { .. }
                | AuthAction::Delete { .. }
                | AuthAction::AlterTable { .. }
                | AuthAction::Analyze { .. }
                | AuthAction::CreateTable { .. }
                | AuthAction::CreateTempTable { .. }
                | AuthAction::CreateIndex { .. }
                | AuthAction::CreateTempIndex { .. }
                | AuthAction::CreateTrigger { .. }
                | AuthAction::CreateTempTrigger { .. }
                | AuthAction::CreateView { .. }
                | AuthAction::CreateTempView { .. }
                | AuthAction::CreateVtable { .. }
                | AuthAction::DropTable { .. }
                | AuthAction::DropIndex { .. }
                | AuthAction::DropTrigger { .. }
                | AuthAction::DropView { .. }
                | AuthAction::DropTempTable { .. }
                | AuthAction::DropTempIndex { .. }
                | AuthAction::DropTempTrigger { .. }
                | AuthAction::DropTempView { .. }
                | AuthAction::DropVtable { .. }
        ),
    }
}

pub(super) fn function(judge: &Judge, name: &str) -> Result<(), Violation> {
    let name = name.to_ascii_lowercase();
    // No switch allows it: the connection never enables extension loading.
    if name == "load_extension" {
        return violation(
            Rule::Load,
            "function load_extension() is not allowed: loading extensions is always off for SQLite".to_owned(),
        );
    }
    judge.call(&name, || format!("function {name}()"), || None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Mode, Policy};

    /// A judge of `policy` in read-write mode.
    pub(super) fn read_write(policy: Policy) -> Judge {
        Judge::new(policy, Mode::ReadWrite)
    }

    #[test]
    fn actions() {
        let default = read_write(Policy::default());
        let mut permissive = Policy::permissive();
        permissive.blocked_functions = vec![super::super::FunctionPattern::new("random")];
        let permissive = read_write(permissive);
        let read_only = Judge::new(Policy::permissive(), Mode::ReadOnly);
        let default_read_only = Judge::new(Policy::default(), Mode::ReadOnly);
        // (judge, sql, action, accessor, refusing rule)
        type Case<'a> = (&'a Judge, &'a str, AuthAction<'a>, Option<&'a str>, Option<Rule>);
        let upserts = read_write(Policy::default().allowing(&[Rule::UpdateWithoutWhere]));
        let cases: Vec<Case<'_>> = vec![
            (
                &default,
                "DROP TABLE t",
                AuthAction::DropTable { table_name: "t" },
                None,
                Some(Rule::Drop),
            ),
            (
                &permissive,
                "DROP TABLE t",
                AuthAction::DropTable { table_name: "t" },
                None,
                None,
            ),
            (
                &default,
                "DROP VIEW v",
                AuthAction::DropView { view_name: "v" },
                None,
                Some(Rule::Drop),
            ),
            (
                &default,
                "DROP INDEX i",
                AuthAction::DropIndex {
                    index_name: "i",
                    table_name: "t",
                },
                None,
                Some(Rule::Drop),
            ),
            (
                &default,
                "ALTER TABLE t DROP COLUMN c",
                AuthAction::AlterTable {
                    database_name: "main",
                    table_name: "t",
                },
                None,
                Some(Rule::Drop),
            ),
            (
                &default,
                "ALTER TABLE t ADD COLUMN c",
                AuthAction::AlterTable {
                    database_name: "main",
                    table_name: "t",
                },
                None,
                None,
            ),
            (
                &default,
                "DELETE FROM t",
                AuthAction::Delete { table_name: "t" },
                None,
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                &default,
                "DELETE FROM t WHERE id = 1",
                AuthAction::Delete { table_name: "t" },
                None,
                None,
            ),
            (
                &permissive,
                "DELETE FROM t",
                AuthAction::Delete { table_name: "t" },
                None,
                None,
            ),
            // A trigger's DELETE is the schema's, not the query's.
            (
                &default,
                "DELETE FROM t WHERE id = 1",
                AuthAction::Delete { table_name: "log" },
                Some("trg"),
                None,
            ),
            // DROP TABLE deletes its row from sqlite_schema.
            (
                &permissive,
                "DROP TABLE t",
                AuthAction::Delete {
                    table_name: "sqlite_master",
                },
                None,
                None,
            ),
            (
                &default,
                "UPDATE t SET a = 1",
                AuthAction::Update {
                    table_name: "t",
                    column_name: "a",
                },
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "UPDATE t SET a = 1 WHERE id = 2",
                AuthAction::Update {
                    table_name: "t",
                    column_name: "a",
                },
                None,
                None,
            ),
            (
                &default,
                "ATTACH 'x.db' AS x",
                AuthAction::Attach { filename: "x.db" },
                None,
                Some(Rule::Attach),
            ),
            (
                &default,
                "DETACH x",
                AuthAction::Detach { database_name: "x" },
                None,
                Some(Rule::Attach),
            ),
            // VACUUM attaches its own scratch database.
            (&default, "VACUUM", AuthAction::Attach { filename: "" }, None, None),
            // Upserts and REPLACE fed by a query: updates without WHERE.
            (
                &default,
                "INSERT INTO t SELECT * FROM u WHERE true ON CONFLICT DO UPDATE SET v = 1",
                AuthAction::Update {
                    table_name: "t",
                    column_name: "v",
                },
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "INSERT INTO t VALUES (1, 2) ON CONFLICT DO UPDATE SET v = 1",
                AuthAction::Update {
                    table_name: "t",
                    column_name: "v",
                },
                None,
                None,
            ),
            (
                &default,
                "REPLACE INTO t SELECT * FROM u",
                AuthAction::Insert { table_name: "t" },
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "INSERT OR REPLACE INTO t SELECT * FROM u",
                AuthAction::Insert { table_name: "t" },
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "INSERT OR REPLACE INTO t VALUES (1, 2)",
                AuthAction::Insert { table_name: "t" },
                None,
                None,
            ),
            (
                &default,
                "INSERT INTO t SELECT * FROM u",
                AuthAction::Insert { table_name: "t" },
                None,
                None,
            ),
            // A trigger's own REPLACE is part of the schema.
            (
                &default,
                "INSERT INTO t VALUES (1, 2)",
                AuthAction::Insert { table_name: "log" },
                Some("g"),
                None,
            ),
            (
                &upserts,
                "REPLACE INTO t SELECT * FROM u",
                AuthAction::Insert { table_name: "t" },
                None,
                None,
            ),
            (
                &default,
                "ANALYZE",
                AuthAction::Analyze { table_name: "t" },
                None,
                Some(Rule::Maintenance),
            ),
            (
                &default,
                "REINDEX",
                AuthAction::Reindex { index_name: "i" },
                None,
                Some(Rule::Maintenance),
            ),
            (
                &default,
                "CREATE INDEX i ON t (v)",
                AuthAction::Reindex { index_name: "i" },
                None,
                None,
            ),
            (
                &permissive,
                "REINDEX",
                AuthAction::Reindex { index_name: "i" },
                None,
                None,
            ),
            // ATTACH of a computed name: SQLite reports no file name.
            (
                &default,
                "ATTACH '/dev/' || 'stdin' AS x",
                AuthAction::Unknown {
                    code: 24,
                    arg1: None,
                    arg2: None,
                },
                None,
                Some(Rule::Attach),
            ),
            (
                &permissive,
                "ATTACH '/dev/' || 'stdin' AS x",
                AuthAction::Unknown {
                    code: 24,
                    arg1: None,
                    arg2: None,
                },
                None,
                None,
            ),
            (
                &default,
                "UPDATE OR REPLACE t SET id = 1 WHERE id = 3",
                AuthAction::Update {
                    table_name: "t",
                    column_name: "id",
                },
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "UPDATE t SET v = 1 WHERE a OR replace(b, 'x', 'y') = 'z'",
                AuthAction::Update {
                    table_name: "t",
                    column_name: "v",
                },
                None,
                None,
            ),
            // An action no rule covers does not run.
            (
                &permissive,
                "SELECT 1",
                AuthAction::Unknown {
                    code: 99,
                    arg1: None,
                    arg2: None,
                },
                None,
                Some(Rule::Parse),
            ),
            (
                &default,
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN UPDATE t SET v = 1; END",
                AuthAction::CreateTrigger {
                    trigger_name: "g",
                    table_name: "t",
                },
                None,
                Some(Rule::CreateFunction),
            ),
            (
                &permissive,
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN UPDATE t SET v = 1; END",
                AuthAction::CreateTrigger {
                    trigger_name: "g",
                    table_name: "t",
                },
                None,
                None,
            ),
            (
                &permissive,
                "ATTACH 'x.db' AS x",
                AuthAction::Attach { filename: "x.db" },
                None,
                None,
            ),
            (
                &default,
                "PRAGMA journal_mode = delete",
                AuthAction::Pragma {
                    pragma_name: "journal_mode",
                    pragma_value: Some("delete"),
                },
                None,
                Some(Rule::Pragma),
            ),
            (
                &default,
                "PRAGMA journal_mode",
                AuthAction::Pragma {
                    pragma_name: "journal_mode",
                    pragma_value: None,
                },
                None,
                None,
            ),
            (
                &default,
                "PRAGMA table_info(t)",
                AuthAction::Pragma {
                    pragma_name: "table_info",
                    pragma_value: Some("t"),
                },
                None,
                None,
            ),
            (
                &default,
                "PRAGMA optimize",
                AuthAction::Pragma {
                    pragma_name: "optimize",
                    pragma_value: None,
                },
                None,
                Some(Rule::Pragma),
            ),
            (
                &permissive,
                "PRAGMA user_version = 3",
                AuthAction::Pragma {
                    pragma_name: "user_version",
                    pragma_value: Some("3"),
                },
                None,
                None,
            ),
            (
                &read_only,
                "PRAGMA query_only = 0",
                AuthAction::Pragma {
                    pragma_name: "query_only",
                    pragma_value: Some("0"),
                },
                None,
                Some(Rule::ReadOnly),
            ),
            // The pragma switch on: query_only is refused only in read-only
            // mode, and there before the pragma rule.
            (
                &permissive,
                "PRAGMA query_only = 0",
                AuthAction::Pragma {
                    pragma_name: "query_only",
                    pragma_value: Some("0"),
                },
                None,
                None,
            ),
            (
                &default_read_only,
                "PRAGMA query_only = 0",
                AuthAction::Pragma {
                    pragma_name: "query_only",
                    pragma_value: Some("0"),
                },
                None,
                Some(Rule::ReadOnly),
            ),
            (
                &permissive,
                "PRAGMA journal_mode = WAL",
                AuthAction::Pragma {
                    pragma_name: "journal_mode",
                    pragma_value: Some("WAL"),
                },
                None,
                None,
            ),
            (
                &permissive,
                "SELECT load_extension('x')",
                AuthAction::Function {
                    function_name: "load_extension",
                },
                None,
                Some(Rule::Load),
            ),
            (
                &permissive,
                "SELECT random()",
                AuthAction::Function {
                    function_name: "random",
                },
                None,
                Some(Rule::BlockedFunction),
            ),
            (
                &default,
                "SELECT lower('A')",
                AuthAction::Function { function_name: "lower" },
                None,
                None,
            ),
            (
                &default,
                "SELECT a FROM t",
                AuthAction::Read {
                    table_name: "t",
                    column_name: "a",
                },
                None,
                None,
            ),
            // In read-only mode a write is refused as a write, before the
            // rule of its kind, whose switch would only lead here.
            (
                &default_read_only,
                "DROP TABLE t",
                AuthAction::DropTable { table_name: "t" },
                None,
                Some(Rule::ReadOnly),
            ),
            (
                &default_read_only,
                "DELETE FROM t",
                AuthAction::Delete { table_name: "t" },
                None,
                Some(Rule::ReadOnly),
            ),
            (
                &default_read_only,
                "ALTER TABLE t DROP COLUMN c",
                AuthAction::AlterTable {
                    database_name: "main",
                    table_name: "t",
                },
                None,
                Some(Rule::ReadOnly),
            ),
            (
                &default_read_only,
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN UPDATE t SET v = 1; END",
                AuthAction::CreateTrigger {
                    trigger_name: "g",
                    table_name: "t",
                },
                None,
                Some(Rule::ReadOnly),
            ),
            (
                &default_read_only,
                "REINDEX",
                AuthAction::Reindex { index_name: "i" },
                None,
                Some(Rule::ReadOnly),
            ),
            // A function no setting allows is named first, as on the other
            // engines, though SQLite reports the write before it.
            (
                &default_read_only,
                "INSERT INTO t VALUES (load_extension('x'))",
                AuthAction::Insert { table_name: "t" },
                None,
                Some(Rule::Load),
            ),
            // Read-only mode can run these with their switches on: their
            // own rules speak.
            (
                &default_read_only,
                "ATTACH 'x.db' AS x",
                AuthAction::Attach { filename: "x.db" },
                None,
                Some(Rule::Attach),
            ),
            (
                &default_read_only,
                "PRAGMA cache_size = 10",
                AuthAction::Pragma {
                    pragma_name: "cache_size",
                    pragma_value: Some("10"),
                },
                None,
                Some(Rule::Pragma),
            ),
            // A pragma that may change the file: allow_pragma_write cannot
            // make it run on a read-only file, so read-only mode speaks.
            (
                &default_read_only,
                "PRAGMA journal_mode = delete",
                AuthAction::Pragma {
                    pragma_name: "journal_mode",
                    pragma_value: Some("delete"),
                },
                None,
                Some(Rule::ReadOnly),
            ),
            (
                &default_read_only,
                "PRAGMA optimize",
                AuthAction::Pragma {
                    pragma_name: "optimize",
                    pragma_value: None,
                },
                None,
                Some(Rule::ReadOnly),
            ),
        ];
        for (judge, sql, action, accessor, want) in cases {
            let got = authorize(judge, &Outline::sqlite(sql), &action, accessor)
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{sql} / {action:?}");
        }
    }
}
