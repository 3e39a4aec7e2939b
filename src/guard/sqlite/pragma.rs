//! SQLite's pragmas, as the guard sorts them: those that only read, those
//! that change only the connection, those that act without a value, and the
//! rule for the rest. Apart from `authorize`, which hands each `PRAGMA`
//! action here, because the lists are SQLite's own and are re-read when the
//! bundled SQLite is upgraded.

use crate::guard::{Finding, Judge, Violation};

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

/// A pragma that only reports (`PRAGMA table_info(t)`): the ones the
/// guard's early look (before any database is open) lets through in
/// read-only mode, where the call will judge the rest as SQLite reports them.
pub(in crate::guard) fn only_reports(name: &str) -> bool {
    READING_PRAGMAS.contains(&name.to_ascii_lowercase().as_str())
}

pub(super) fn pragma(judge: &Judge, name: &str, value: Option<&str>) -> Result<(), Violation> {
    let name = name.to_ascii_lowercase();
    let writes = match value {
        Some(_) => !READING_PRAGMAS.contains(&name.as_str()),
        None => ACTING_PRAGMAS.contains(&name.as_str()),
    };
    if !writes {
        return Ok(());
    }
    if name == "query_only" {
        judge.lift_read_only(|| "PRAGMA query_only".to_owned(), "it would lift read-only protection")?;
    }
    let named = match value {
        Some(_) => format!("PRAGMA {name} with a value"),
        None => format!("PRAGMA {name}"),
    };
    if !CONNECTION_PRAGMAS.contains(&name.as_str()) {
        judge.write(
            || named.clone(),
            "it may change the database file, which is opened read-only",
        )?;
    }
    judge.decide(Finding::pragma(format!("{named} is not allowed")))
}
