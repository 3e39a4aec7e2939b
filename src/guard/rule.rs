//! The rules and their one table. Every rule is a row of [`RULES`]: its
//! stable name, the `protection.*` switch that allows it (if any), whether it
//! is allowed by default, which engines it applies to, and what the switch
//! allows, as the README's settings table says it. Config keys, the wizard's
//! questions, `pgmcp check`'s list of switches and the README's table all come
//! from here: adding a rule is one row here and the place that detects it.

/// Which rule refused a query. The kebab-case names are stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The string is not valid SQL for its engine, is empty, or is too deeply
    /// nested to check.
    Parse,
    MultiStatement,
    /// A write, or a change to the transaction's read-only state, while
    /// `server.read_only` is on.
    ReadOnly,
    Set,
    Drop,
    Truncate,
    Do,
    CopyFrom,
    CopyToFile,
    CreateFunction,
    Prepare,
    DeleteWithoutWhere,
    UpdateWithoutWhere,
    AlterSystem,
    Load,
    CreateRule,
    Merge,
    CreateExtension,
    RoleChanges,
    /// A function on `protection.blocked_functions`, or one that runs SQL
    /// given as text.
    BlockedFunction,
    Maintenance,
    Lock,
    /// Triggers: creating them (and event triggers), and turning them on or off.
    Triggers,
    /// Publications: the tables logical replication sends to subscribers.
    Publications,
    /// A statement kind, or an `ALTER TABLE` action, that no setting allows:
    /// read-write mode is an allowlist too, and a kind not on it is refused.
    Unlisted,
    Attach,
    Pragma,
    VacuumInto,
    /// DuckDB's `EXPORT DATABASE` / `IMPORT DATABASE`.
    Export,
    /// DuckDB's file-reading table functions, and files named as tables.
    FileFunction,
}

/// Where a rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engines {
    Every,
    /// SQLite and DuckDB only: PostgreSQL has no such statements.
    Embedded,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub rule: Rule,
    pub name: &'static str,
    /// The `protection.*` key that allows what the rule refuses; `None` for
    /// rules no switch turns off (or that another setting governs:
    /// `server.read_only`, `protection.blocked_functions`).
    pub flag: Option<&'static str>,
    /// Allowed when the config does not say.
    pub default: bool,
    pub engines: Engines,
    /// What the switch allows, for the README's settings table (Markdown).
    pub allows: &'static str,
}

const fn always(rule: Rule, name: &'static str) -> Spec {
    Spec {
        rule,
        name,
        flag: None,
        default: false,
        engines: Engines::Every,
        allows: "",
    }
}

const fn switch(rule: Rule, name: &'static str, flag: &'static str, engines: Engines, allows: &'static str) -> Spec {
    Spec {
        rule,
        name,
        flag: Some(flag),
        default: false,
        engines,
        allows,
    }
}

use Engines::{Embedded, Every};

/// Every rule, in [`Rule`]'s order (a test holds the two together); the
/// switches in the order the README and the wizard list them.
pub const RULES: [Spec; 30] = [
    always(Rule::Parse, "parse"),
    always(Rule::MultiStatement, "multi-statement"),
    always(Rule::ReadOnly, "read-only"),
    switch(
        Rule::Set,
        "set",
        "allow_set",
        Every,
        "`SET`, `RESET`, `RESET ALL`, `UPDATE pg_settings` (session settings could weaken later checks).",
    ),
    switch(
        Rule::Drop,
        "drop",
        "allow_drop",
        Every,
        "`DROP` of any object, `DROP DATABASE`, `DROP ROLE`, `DROP OWNED`, `ALTER TABLE ... DROP COLUMN`, `DROP CONSTRAINT`, `ALTER COLUMN ... DROP NOT NULL` (and `ALTER DOMAIN`'s), `ALTER CONSTRAINT ... NOT ENFORCED`, `SET UNLOGGED` (a crash empties an unlogged table), and what drops by replacing: `CREATE OR REPLACE VIEW` (DuckDB: `CREATE OR REPLACE` of any object).",
    ),
    switch(Rule::Truncate, "truncate", "allow_truncate", Every, "`TRUNCATE`."),
    switch(
        Rule::Do,
        "do",
        "allow_do",
        Every,
        "`DO $$ ... $$` blocks (they run arbitrary SQL the guard cannot see).",
    ),
    switch(
        Rule::CopyFrom,
        "copy-from",
        "allow_copy_from",
        Every,
        "`COPY ... FROM` a file, program or STDIN (DuckDB: `COPY ... FROM 'file'`).",
    ),
    switch(
        Rule::CopyToFile,
        "copy-to-file",
        "allow_copy_to_file",
        Every,
        "`COPY ... TO` a server file or `PROGRAM` (a shell command on the database server). `COPY ... TO STDOUT` is always allowed, in read-only mode too: its lines come back as rows of one text column, `line`. DuckDB: `COPY ... TO 'file'`.",
    ),
    switch(
        Rule::CreateFunction,
        "create-function",
        "allow_create_function",
        Every,
        "`CREATE FUNCTION`, `CREATE PROCEDURE`, and what lets an existing function run or hide: `CREATE OPERATOR`, `CREATE AGGREGATE`, `CREATE CAST ... WITH FUNCTION`, operator classes and families, `CREATE TRANSFORM`, a type's or a range's support functions, `ALTER FUNCTION`, `ALTER OPERATOR/TYPE ... SET`, renaming or moving a function or operator.",
    ),
    switch(
        Rule::Prepare,
        "prepare",
        "allow_prepare",
        Every,
        "`PREPARE` (a prepared statement runs later, unchecked), `PREPARE TRANSACTION`, `COMMIT/ROLLBACK PREPARED`.",
    ),
    switch(
        Rule::DeleteWithoutWhere,
        "delete-without-where",
        "allow_delete_without_where",
        Every,
        "`DELETE` with no `WHERE` clause.",
    ),
    switch(
        Rule::UpdateWithoutWhere,
        "update-without-where",
        "allow_update_without_where",
        Every,
        "`UPDATE` with no `WHERE` clause, and what rewrites a column in every row: `ALTER TABLE ... ALTER COLUMN ... TYPE` (with or without `USING`), `SET EXPRESSION`, `ALTER TYPE ... ALTER ATTRIBUTE ... TYPE`; upserts (`ON CONFLICT DO UPDATE`) and SQLite's and DuckDB's `REPLACE`/`INSERT OR REPLACE` fed by a query rather than a `VALUES` list; SQLite's `UPDATE OR REPLACE` and writes to a table that replaces on conflict.",
    ),
    switch(
        Rule::AlterSystem,
        "alter-system",
        "allow_alter_system",
        Every,
        "`ALTER SYSTEM`, `ALTER DATABASE ... SET`, and `GRANT` on server parameters (each changes settings for later sessions).",
    ),
    switch(
        Rule::Load,
        "load",
        "allow_load",
        Every,
        "`LOAD` of a shared library. DuckDB: `INSTALL`, `LOAD`, `UPDATE EXTENSIONS`.",
    ),
    switch(
        Rule::CreateRule,
        "create-rule",
        "allow_create_rule",
        Every,
        "`CREATE RULE` and `ALTER TABLE ... ENABLE/DISABLE RULE` (rules rewrite later statements).",
    ),
    switch(
        Rule::Merge,
        "merge",
        "allow_merge",
        Every,
        "`MERGE` (its `UPDATE`/`DELETE` actions have no `WHERE` clause to check).",
    ),
    switch(
        Rule::CreateExtension,
        "create-extension",
        "allow_create_extension",
        Every,
        "`CREATE/ALTER EXTENSION`, `CREATE LANGUAGE`, `ALTER ... DEPENDS ON EXTENSION`, foreign data (`CREATE SERVER`, `CREATE/ALTER FOREIGN TABLE`, `IMPORT FOREIGN SCHEMA`, user mappings, `GRANT` on foreign servers) and subscriptions (they can load code, read files, run programs, reach other servers, or write what another server sends).",
    ),
    switch(
        Rule::RoleChanges,
        "role-changes",
        "allow_role_changes",
        Every,
        "`CREATE/ALTER ROLE`/`USER` (also `... SET`), granting or revoking role membership (`GRANT pg_execute_server_program TO ...`), row security (policies, `ALTER TABLE ... ENABLE/DISABLE/FORCE ROW LEVEL SECURITY`), an object's owner (`OWNER TO`), and switching roles: `SET [LOCAL] ROLE`, `RESET ROLE`, `SET`/`RESET SESSION AUTHORIZATION` (refused even when `allow_set` is on, which they need as well). Privileges on objects (`GRANT SELECT ON t TO r`) are not role changes.",
    ),
    always(Rule::BlockedFunction, "blocked-function"),
    switch(
        Rule::Maintenance,
        "maintenance",
        "allow_maintenance",
        Every,
        "`VACUUM`, `ANALYZE`, `CLUSTER`, `REINDEX`, `CHECKPOINT`, `REFRESH MATERIALIZED VIEW`, `ALTER TABLE ... SET LOGGED`, `SET TABLESPACE`, `SET ACCESS METHOD` (they rewrite or scan whole tables under strong locks; never in read-only mode).",
    ),
    switch(
        Rule::Lock,
        "lock",
        "allow_lock",
        Every,
        "`LOCK TABLE` in a mode stronger than `ACCESS SHARE` (it blocks other sessions; never in read-only mode).",
    ),
    switch(
        Rule::Triggers,
        "triggers",
        "allow_triggers",
        Every,
        "`CREATE TRIGGER` (also inside `CREATE SCHEMA`), `CREATE/ALTER EVENT TRIGGER`, renaming a trigger, and `ALTER TABLE ... ENABLE/DISABLE TRIGGER` (a trigger runs an existing function on every later write, by every session; disabling one turns off what it enforces). SQLite's `CREATE TRIGGER`, whose body is SQL of its own, needs `allow_create_function`.",
    ),
    switch(
        Rule::Publications,
        "publications",
        "allow_publications",
        Every,
        "`CREATE/ALTER PUBLICATION` and `ALTER TABLE ... REPLICA IDENTITY` (a publication sends tables' rows to any server that subscribes).",
    ),
    always(Rule::Unlisted, "unlisted"),
    switch(
        Rule::Attach,
        "attach",
        "allow_attach",
        Embedded,
        "SQLite and DuckDB: `ATTACH`/`DETACH` (DuckDB: and `COPY FROM DATABASE`); on Linux, inside [the file sandbox](#the-file-sandbox).",
    ),
    switch(
        Rule::Pragma,
        "pragma",
        "allow_pragma_write",
        Embedded,
        "SQLite and DuckDB: a `PRAGMA` that sets a value or acts (`optimize`, `wal_checkpoint`, ...).",
    ),
    switch(
        Rule::VacuumInto,
        "vacuum-into",
        "allow_vacuum_into",
        Embedded,
        "SQLite: `VACUUM INTO`, which writes a copy of the database to any path; on Linux, inside [the file sandbox](#the-file-sandbox).",
    ),
    switch(
        Rule::Export,
        "export",
        "allow_export",
        Embedded,
        "DuckDB: `EXPORT DATABASE` and `IMPORT DATABASE`.",
    ),
    switch(
        Rule::FileFunction,
        "file-function",
        "allow_file_functions",
        Embedded,
        "DuckDB: file-reading table functions (`read_csv`, `read_parquet`, `glob`, ...) and files named as tables (`FROM 'data.csv'`); also lets DuckDB open files, which every file a query touches needs: any file the pgmcp process can, in every top-level directory but `/proc`, `/dev` and `/sys`, as the kernel resolves it ([the file sandbox](#the-file-sandbox); Linux only: refused at startup elsewhere).",
    ),
];

impl Rule {
    /// Every rule, in the table's order.
    pub const ALL: [Rule; 30] = {
        let mut all = [Rule::Parse; 30];
        let mut i = 0;
        while i < RULES.len() {
            all[i] = RULES[i].rule;
            i += 1;
        }
        all
    };

    /// This rule's row of the rule table (`RULES`).
    pub fn spec(self) -> &'static Spec {
        // RULES is in the enum's order (tested), so the discriminant is the row.
        &RULES[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn from_name(name: &str) -> Option<Rule> {
        RULES.iter().find(|s| s.name == name).map(|s| s.rule)
    }

    /// The `protection.*` key that allows what this rule refuses.
    pub fn flag(self) -> Option<&'static str> {
        self.spec().flag
    }

    /// Rules only the guards of the embedded engines (SQLite, DuckDB) apply.
    pub fn embedded_only(self) -> bool {
        self.spec().engines == Engines::Embedded
    }

    /// The rules a `protection.*` switch allows, in the table's order.
    pub fn switches() -> impl Iterator<Item = (Rule, &'static str)> {
        RULES.iter().filter_map(|s| Some((s.rule, s.flag?)))
    }

    /// The rule a `protection.*` key (without the prefix) allows.
    pub fn from_flag(flag: &str) -> Option<Rule> {
        Rule::switches().find(|(_, f)| *f == flag).map(|(rule, _)| rule)
    }
}

/// The README's rows for the switches, as the settings table shows them.
pub fn readme_rows() -> String {
    RULES
        .iter()
        .filter_map(|s| {
            let flag = s.flag?;
            Some(format!("| `protection.{flag}` | `{}` | {} |\n", s.default, s.allows))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_enums_order() {
        for (i, spec) in RULES.iter().enumerate() {
            assert_eq!(spec.rule as usize, i, "{} is out of place", spec.name);
            assert_eq!(Rule::ALL[i], spec.rule);
        }
    }

    #[test]
    fn names_and_switches_are_unique_and_well_formed() {
        for (i, a) in RULES.iter().enumerate() {
            assert_eq!(Rule::from_name(a.name), Some(a.rule));
            assert!(a.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{}", a.name);
            if let Some(flag) = a.flag {
                assert!(flag.starts_with("allow_"), "{flag}");
                assert_eq!(Rule::from_flag(flag), Some(a.rule));
                assert!(!a.allows.is_empty(), "{flag} says what it allows");
            }
            for b in &RULES[i + 1..] {
                assert_ne!(a.name, b.name);
                assert!(a.flag.is_none() || a.flag != b.flag, "{:?}", a.flag);
            }
        }
    }

    /// The README's settings table lists every switch as the table does: a
    /// row added, renamed or reworded here must be pasted there.
    #[test]
    fn readme_lists_every_switch() {
        let readme = include_str!("../../README.md");
        let rows = readme_rows();
        assert!(
            readme.contains(&rows),
            "README.md's settings table differs from the rule table; its rows should read:\n{rows}"
        );
        let listed = readme.lines().filter(|l| l.starts_with("| `protection.allow_")).count();
        assert_eq!(
            listed,
            Rule::switches().count(),
            "README.md lists a switch the table does not have"
        );
    }
}
