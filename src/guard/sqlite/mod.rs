//! The guard for SQLite. SQLite's dialect is not PostgreSQL's, so its own
//! parser decides what a statement does: the backend prepares the statement
//! with an authorizer that hands every action SQLite reports to [`authorize`],
//! and checks [`statement`] on the prepared statement. The protection flags
//! mean what they mean on PostgreSQL; only the evidence comes from SQLite.
//!
//! Every function call comes from the authorizer (`SQLITE_FUNCTION`, at any
//! depth, in any syntax SQLite accepts), never from the text. SQLite's
//! authorizer does not say whether a `DELETE` or `UPDATE` has a `WHERE`, or
//! which statement a `VACUUM` is; [`Outline`] reads that from the tokens of
//! the one statement SQLite accepted, split the way SQLite's own tokenizer
//! splits them (`super::lexer::sqlite`). All of it is pure.

use rusqlite::ffi::{SQLITE_ATTACH, SQLITE_DETACH};
use rusqlite::hooks::AuthAction;

use super::outline::{Dialect, Token, tokens};
pub use super::outline::{Operand, Outline};
use super::{Finding, Judge, Rule, Violation, statements, violation};

/// Read-only pragmas that take an argument: `PRAGMA table_info(t)` reports
/// `t` as the pragma's value, which is not a write.
const READING_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_info",
    "index_xinfo",
    "index_list",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
    "function_list",
    "module_list",
    "pragma_list",
    "collation_list",
    "database_list",
    "compile_options",
];

/// Writing pragmas that change only the connection, never the file: on a
/// read-only connection `protection.allow_pragma_write` lets them run. Any
/// other writing pragma may change the file, so in read-only mode it is
/// refused as a write, and no switch is named that would only lead there.
const CONNECTION_PRAGMAS: &[&str] = &[
    "analysis_limit",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "case_sensitive_like",
    "cell_size_check",
    "defer_foreign_keys",
    "foreign_keys",
    "hard_heap_limit",
    "ignore_check_constraints",
    "journal_size_limit",
    "legacy_alter_table",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "secure_delete",
    "shrink_memory",
    "soft_heap_limit",
    "synchronous",
    "temp_store",
    "threads",
    "trusted_schema",
    "wal_autocheckpoint",
    "writable_schema",
];

/// Pragmas that change the database or the connection even without a value.
const ACTING_PRAGMAS: &[&str] = &["optimize", "wal_checkpoint", "incremental_vacuum", "shrink_memory"];

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
        statements::write_in_read_only(judge, outline)?;
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
        AuthAction::AlterTable { .. } if outline.has("DROP") => decide(
            Rule::Drop,
            "ALTER TABLE ... DROP COLUMN is not allowed",
            "it destroys the column's data",
        ),
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
        } if outline.verb != "VACUUM" => decide(
            Rule::Attach,
            "ATTACH and DETACH are not allowed",
            "ATTACH opens, and can create, any file the server can reach",
        ),
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
        _ => violation(
            Rule::Parse,
            format!("this kind of SQLite statement is not supported (SQLite reports {action:?}, which no rule covers)"),
        ),
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

fn pragma(judge: &Judge, name: &str, value: Option<&str>) -> Result<(), Violation> {
    let name = name.to_ascii_lowercase();
    let writes = match value {
        Some(_) => !READING_PRAGMAS.contains(&name.as_str()),
        None => ACTING_PRAGMAS.contains(&name.as_str()),
    };
    if !writes {
        return Ok(());
    }
    if name == "query_only" {
        judge.write(|| {
            "PRAGMA query_only is blocked in read-only mode: it would lift read-only protection (server.read_only)"
                .to_owned()
        })?;
    }
    let what = match value {
        Some(_) => format!("PRAGMA {name} with a value is not allowed"),
        None => format!("PRAGMA {name} is not allowed"),
    };
    if !CONNECTION_PRAGMAS.contains(&name.as_str()) {
        judge.write(|| {
            format!("{what} in read-only mode: it may change the database file, which is opened read-only (server.read_only)")
        })?;
    }
    judge.decide(Finding::new(
        Rule::Pragma,
        what,
        "a writing PRAGMA changes how the database file is stored or how the connection behaves",
    ))
}

fn function(judge: &Judge, name: &str) -> Result<(), Violation> {
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

/// Statement-level rules that need the prepared statement: `VACUUM INTO`
/// writes a new file anywhere; in read-only mode a statement SQLite says writes
/// is refused before it runs (the connection is read-only as well).
pub fn statement(judge: &Judge, outline: &Outline, sqlite_says_read_only: bool) -> Result<(), Violation> {
    let file_rule = match outline.verb.as_str() {
        "VACUUM" => Some(Rule::VacuumInto),
        "ATTACH" => Some(Rule::Attach),
        _ => None,
    };
    if let Some(rule) = file_rule {
        outline
            .strings
            .iter()
            .try_for_each(|path| super::own_process(rule, path))?;
        // A computed name is only known when SQLite opens it, past the
        // guard: it could be pgmcp's own stdin.
        if outline.file == Some(Operand::Computed) {
            return violation(
                rule,
                format!(
                    "{} needs its file name as one string literal ('other.db'): the guard checks the name before SQLite opens it, and cannot see a computed one",
                    if rule == Rule::Attach { "ATTACH" } else { "VACUUM INTO" }
                ),
            );
        }
    }
    // A write is refused as a write in read-only mode, before the rule of
    // its kind (see `authorize`). Transaction statements only frame writes.
    if !sqlite_says_read_only && !matches!(outline.verb.as_str(), "BEGIN" | "COMMIT" | "END" | "ROLLBACK") {
        statements::write_in_read_only(judge, outline)?;
    }
    if outline.verb == "VACUUM" && outline.has("INTO") {
        judge.decide(Finding::new(
            Rule::VacuumInto,
            "VACUUM INTO is not allowed",
            "it writes a copy of the database to any path the server can reach",
        ))?;
    } else if outline.verb == "VACUUM" {
        // SQLite's authorizer reports no action of its own for VACUUM.
        judge.decide(Finding::new(
            Rule::Maintenance,
            "VACUUM is not allowed",
            "it rewrites the whole database file and locks it while it runs",
        ))?;
    }
    Ok(())
}

/// The statements of `sql` as SQLite splits them: the text up to each `;`
/// that completes a statement (`sqlite3_complete`, so a trigger body's own
/// `;` does not split), keeping only pieces that hold more than comments.
pub fn statements(sql: &str) -> Vec<&str> {
    let tokens = tokens(sql, Dialect::Sqlite);
    let mut out = Vec::new();
    let mut start = 0;
    let mut has_content = false;
    for token in &tokens {
        match token {
            Token::Semicolon(end) => {
                if has_content && complete(&sql[start..*end]) {
                    out.push(&sql[start..*end]);
                    start = *end;
                    has_content = false;
                }
            }
            _ => has_content = true,
        }
    }
    if has_content {
        out.push(&sql[start..]);
    }
    out
}

/// SQLite's own test for "this text ends a statement".
fn complete(text: &str) -> bool {
    match std::ffi::CString::new(text) {
        // SAFETY: a valid NUL-terminated string; sqlite3_complete only reads it.
        Ok(c) => unsafe { rusqlite::ffi::sqlite3_complete(c.as_ptr()) != 0 },
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Mode, Policy};

    /// A judge of `policy` in read-write mode.
    fn read_write(policy: Policy) -> Judge {
        Judge::new(policy, Mode::ReadWrite)
    }

    #[test]
    fn splitting() {
        let cases: [(&str, usize); 12] = [
            ("SELECT 1", 1),
            ("SELECT 1;", 1),
            ("SELECT 1; -- done", 1),
            ("SELECT 1; /* c */ ;", 1),
            ("SELECT 1; SELECT 2", 2),
            ("SELECT 1;SELECT 2;", 2),
            ("SELECT ';' AS a", 1),
            ("SELECT 1 -- ; DROP TABLE t", 1),
            (
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN DELETE FROM u; UPDATE v SET a = 1; END",
                1,
            ),
            (
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN DELETE FROM u; END; DROP TABLE t",
                2,
            ),
            ("", 0),
            ("-- nothing\n;", 0),
        ];
        for (sql, n) in cases {
            assert_eq!(statements(sql).len(), n, "{sql}");
        }
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

    #[test]
    fn statement_rules() {
        let default = read_write(Policy::default());
        let read_only = Judge::new(Policy::default(), Mode::ReadOnly);
        let allow_vacuum = read_write(Policy::default().allowing(&[Rule::VacuumInto]));
        let vacuum_read_only = Judge::new(Policy::default().allowing(&[Rule::VacuumInto]), Mode::ReadOnly);
        let all = read_write(Policy::permissive());
        let cases: Vec<(&Judge, &str, bool, Option<Rule>)> = vec![
            (&default, "VACUUM INTO '/tmp/copy.db'", true, Some(Rule::VacuumInto)),
            (&allow_vacuum, "VACUUM INTO '/tmp/copy.db'", true, None),
            (&default, "VACUUM", false, Some(Rule::Maintenance)),
            (&default, "vacuum main", false, Some(Rule::Maintenance)),
            // In read-only mode a write is refused as a write: the switch of
            // its kind would only lead to this refusal.
            (&read_only, "VACUUM", false, Some(Rule::ReadOnly)),
            (&all, "VACUUM", false, None),
            (&read_only, "INSERT INTO t VALUES (1)", false, Some(Rule::ReadOnly)),
            (&read_only, "SELECT 1", true, None),
            (&read_only, "BEGIN", false, None),
            (&default, "INSERT INTO t VALUES (1)", false, None),
            // VACUUM INTO's switch on does not lift read-only mode, so
            // read-only mode names read-only mode, with the switch or not.
            (&read_only, "VACUUM INTO '/tmp/copy.db'", false, Some(Rule::ReadOnly)),
            (
                &vacuum_read_only,
                "VACUUM INTO '/tmp/copy.db'",
                false,
                Some(Rule::ReadOnly),
            ),
            (&allow_vacuum, "VACUUM INTO '/tmp/copy.db'", false, None),
            // pgmcp's own stdin and stdout carry the protocol: no switch
            // lets a statement name them, however spelled.
            (
                &allow_vacuum,
                "VACUUM INTO '/dev/stdout'",
                false,
                Some(Rule::VacuumInto),
            ),
            (
                &allow_vacuum,
                "VACUUM INTO 'file:/proc/self/fd/1'",
                false,
                Some(Rule::VacuumInto),
            ),
            (&all, "ATTACH '/dev/stdin' AS x", false, Some(Rule::Attach)),
            (&all, "ATTACH '../../dev//stdin' AS x", false, Some(Rule::Attach)),
            (&all, "ATTACH 'other.db' AS x", false, None),
            (&all, "ATTACH DATABASE 'other.db' AS x KEY 'k'", false, None),
            (&all, "ATTACH '' AS scratch", false, None),
            (&all, "ATTACH 'a' || '.db' AS x", false, Some(Rule::Attach)),
            (&all, "ATTACH (SELECT 'x.db') AS x", false, Some(Rule::Attach)),
            (&allow_vacuum, "VACUUM main INTO 'copy.db'", false, None),
            (
                &allow_vacuum,
                "VACUUM INTO 'copy' || '.db'",
                false,
                Some(Rule::VacuumInto),
            ),
            (&default, "SELECT '/dev/stdout'", true, None),
        ];
        for (judge, sql, reads, want) in cases {
            let got = statement(judge, &Outline::sqlite(sql), reads).err().map(|v| v.rule);
            assert_eq!(got, want, "{sql}");
        }
        assert_eq!(
            statement(&read_only, &Outline::sqlite("delete from t where 1"), false)
                .unwrap_err()
                .to_string(),
            "cannot execute DELETE in read-only mode: the database is opened read-only (server.read_only)"
        );
    }
}
