//! What the person running pgmcp allows: which rules are switched off, and
//! which functions may not run. Data only; the [`Judge`](super::Judge)
//! applies it, in the [`Mode`](super::Mode) the engine gives it (read-only
//! mode is `server.read_only`, not a protection switch).

use super::rule::{RULES, Rule};

/// Functions blocked by default, wherever they are called. A trailing `*`
/// matches any suffix.
pub const DEFAULT_BLOCKED_FUNCTIONS: &[&str] = &[
    // Server file access.
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_*",
    "pg_stat_file",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_file_sync",
    "pg_logdir_ls",
    // Large objects: lo_import/lo_export read and write server files.
    "lo_*",
    "loread",
    "lowrite",
    // Connections to other databases.
    "dblink*",
    // Process and server control.
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_signal_backend",
    "pg_log_backend_memory_contexts",
    // Settings: set_config would bypass the switch for SET.
    "set_config",
    // Replication, WAL and statistics: these change the server even inside a
    // READ ONLY transaction.
    "pg_create_physical_replication_slot",
    "pg_create_logical_replication_slot",
    "pg_copy_physical_replication_slot",
    "pg_copy_logical_replication_slot",
    "pg_drop_replication_slot",
    "pg_replication_slot_advance",
    // They consume a logical slot's changes, which its real consumer then
    // never sees.
    "pg_logical_slot_get_*",
    "pg_replication_origin_*",
    "pg_logical_emit_message",
    "pg_switch_wal",
    "pg_create_restore_point",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_wal_replay_pause",
    "pg_wal_replay_resume",
    "pg_stat_reset*",
    "pg_import_system_collations",
    // Functions that run SQL given as text, which the guard cannot see, or
    // run queries of their own past the row cap (the *_to_xml family).
    "query_to_xml*",
    "cursor_to_xml*",
    "table_to_xml*",
    "schema_to_xml*",
    "database_to_xml*",
    "ts_stat",
    "ts_rewrite",
    // contrib's tablefunc and xml2, and pg_background: they run SQL from text too.
    "crosstab*",
    "connectby",
    "xpath_table",
    "pg_background_launch",
    // hypopg: its indexes live in the session past any rollback, where every
    // later plan sees them, and behind a pooler the next client's. explain's
    // hypothetical_indexes makes them and drops them again, as pgmcp's own.
    "hypopg*",
];

/// Built-in diagnostics read-only mode runs although PostgreSQL marks them
/// `VOLATILE` (their answer changes from call to call; none writes): where
/// the WAL is, a sequence's last value, the lock table, the control file,
/// replay's state. Like the catalog's other harmless volatile built-ins,
/// only PostgreSQL's own (`pg_catalog`, owned by a superuser) are run: a
/// database user's function of the same name makes the name untrusted. The
/// writers beside them (`pg_switch_wal`, `pg_create_restore_point`,
/// replication slots) are blocked functions.
pub const READ_ONLY_DIAGNOSTICS: &[&str] = &[
    "pg_current_wal_insert_lsn",
    "pg_current_wal_flush_lsn",
    "pg_sequence_last_value",
    "pg_lock_status",
    "pg_safe_snapshot_blocking_pids",
    "pg_control_checkpoint",
    "pg_control_system",
    "pg_control_init",
    "pg_control_recovery",
    "pg_is_wal_replay_paused",
    "pg_get_wal_replay_pause_state",
];

/// One entry of `protection.blocked_functions`: an exact name, or a prefix
/// when it ends in `*`. Matched case-insensitively against the called
/// function's own name, whatever schema qualifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionPattern {
    pattern: String,
}

impl FunctionPattern {
    pub fn new(pattern: &str) -> FunctionPattern {
        FunctionPattern {
            pattern: pattern.to_ascii_lowercase(),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// `name` must already be lower case.
    pub(super) fn matches(&self, name: &str) -> bool {
        match self.pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == self.pattern,
        }
    }
}

/// What the guard allows. Every rule with a `protection.*` switch is blocked
/// unless its switch is on; the others are always applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// By rule, in [`Rule`]'s order: is what it refuses allowed?
    allowed: [bool; RULES.len()],
    /// Functions that may not be called anywhere in a statement, by any route.
    pub blocked_functions: Vec<FunctionPattern>,
    /// Functions the person running pgmcp vouches only read, which read-only
    /// mode then runs although the catalog cannot show it (their own
    /// functions, or built-in volatile ones).
    pub read_only_functions: Vec<FunctionPattern>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            allowed: RULES.map(|spec| spec.flag.is_some() && spec.default),
            blocked_functions: DEFAULT_BLOCKED_FUNCTIONS
                .iter()
                .map(|p| FunctionPattern::new(p))
                .collect(),
            read_only_functions: Vec::new(),
        }
    }
}

impl Policy {
    /// Every switch on and no blocked functions. For tests and for people
    /// who want only the always-on rules.
    pub fn permissive() -> Policy {
        Policy {
            allowed: RULES.map(|spec| spec.flag.is_some()),
            blocked_functions: Vec::new(),
            read_only_functions: Vec::new(),
        }
    }

    /// Is what `rule` refuses allowed? Never for a rule without a switch.
    pub fn allows(&self, rule: Rule) -> bool {
        self.allowed[rule as usize]
    }

    /// Turn `rule`'s switch on or off. A rule without a switch stays applied.
    pub fn allow(&mut self, rule: Rule, allowed: bool) {
        self.allowed[rule as usize] = allowed && rule.flag().is_some();
    }

    /// This policy with `rules` allowed.
    pub fn allowing(mut self, rules: &[Rule]) -> Policy {
        rules.iter().for_each(|rule| self.allow(*rule, true));
        self
    }

    /// A switch by its config name (`allow_drop`, ...); `None` for an
    /// unknown name.
    pub fn flag(&self, name: &str) -> Option<bool> {
        Rule::from_flag(name).map(|rule| self.allows(rule))
    }

    /// Set a switch by its config name (`allow_drop`, ...).
    pub fn set_flag(&mut self, name: &str, value: bool) -> Result<(), String> {
        let rule = Rule::from_flag(name).ok_or_else(|| format!("unknown protection flag \"{name}\""))?;
        self.allow(rule, value);
        Ok(())
    }

    /// The switches that are on, by config name, in the table's order.
    pub fn allowed_flags(&self) -> Vec<&'static str> {
        Rule::switches()
            .filter(|(rule, _)| self.allows(*rule))
            .map(|(_, flag)| flag)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_by_name() {
        let mut p = Policy::default();
        assert_eq!(p.flag("allow_drop"), Some(false));
        p.set_flag("allow_drop", true).unwrap();
        assert!(p.allows(Rule::Drop) && p.flag("allow_drop") == Some(true));
        assert_eq!(p.allowed_flags(), ["allow_drop"]);
        // Read-only mode is `server.read_only`, the judge's mode: no switch.
        assert!(p.set_flag("read_only", true).is_err());
        assert_eq!(p.flag("read_only"), None);
        assert!(p.set_flag("allow_everything", true).is_err());
        // No switch turns an always-on rule off.
        p.allow(Rule::Parse, true);
        assert!(!p.allows(Rule::Parse));
        assert!(!Policy::permissive().allows(Rule::MultiStatement));
        assert_eq!(Policy::permissive().allowed_flags().len(), Rule::switches().count());
    }
}
