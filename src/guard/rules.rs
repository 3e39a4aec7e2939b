//! The rule table: one `match` on the node type. Each arm reads the node's
//! fields as libpg_query's JSON spells them (fields at their default value,
//! such as `false` or `0`, are left out of the JSON).

use serde_json::{Map, Value};

use super::{Policy, Rule, Violation};

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
    // Settings: set_config would bypass protection.allow_set.
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

    pub(super) fn matches(&self, name: &str) -> bool {
        match self.pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == self.pattern,
        }
    }
}

/// Why a default-blocked function is dangerous, for the message.
pub(super) fn function_reason(name: &str) -> &'static str {
    match name {
        n if n.starts_with("pg_ls_") || n == "pg_logdir_ls" => "lists files on the database server",
        "pg_read_file" | "pg_read_binary_file" | "pg_stat_file" => "reads files on the database server",
        n if n.starts_with("pg_file_") => "writes files on the database server",
        n if n.starts_with("lo_") || n == "loread" || n == "lowrite" => {
            "reads or writes large objects, which can import and export server files"
        }
        n if n.starts_with("dblink") => "opens connections to other databases, outside this guard",
        "pg_terminate_backend" | "pg_cancel_backend" | "pg_signal_backend" => "stops other sessions' work",
        "pg_log_backend_memory_contexts" => "signals another session",
        n if n.starts_with("pg_logical_slot_get_") => {
            "consumes a replication slot's changes, which its real consumer then never sees"
        }
        "pg_reload_conf" | "pg_rotate_logfile" | "pg_promote" => "controls the database server",
        "set_config" => "changes session settings, which protection.allow_set governs",
        n if n.contains("replication") || n.starts_with("pg_logical_") || n.starts_with("pg_wal_") => {
            "changes replication or WAL state on the server, even in a read-only transaction"
        }
        "pg_switch_wal" | "pg_create_restore_point" | "pg_backup_start" | "pg_backup_stop" => {
            "changes WAL or backup state on the server, even in a read-only transaction"
        }
        n if n.starts_with("pg_stat_reset") => "resets the server's statistics, even in a read-only transaction",
        "pg_import_system_collations" => "writes into the system catalog, even in a read-only transaction",
        n if n.starts_with("table_to_xml") || n.starts_with("schema_to_xml") || n.starts_with("database_to_xml") => {
            "runs queries of its own, which the guard and the row cap cannot bound"
        }
        n if n.starts_with("query_to_xml") || n.starts_with("cursor_to_xml") => {
            "runs SQL given as text, which the guard cannot check"
        }
        "ts_stat" | "ts_rewrite" | "connectby" | "xpath_table" | "pg_background_launch" => {
            "runs SQL given as text, which the guard cannot check"
        }
        n if n.starts_with("crosstab") => "runs SQL given as text, which the guard cannot check",
        _ => "is listed in protection.blocked_functions",
    }
}

pub(super) fn violation(rule: Rule, message: String) -> Result<(), Violation> {
    Err(Violation { rule, message })
}

/// A statement the embedded engine (SQLite, DuckDB) says would write, in
/// read-only mode: refused before it runs, though the file is read-only too.
pub(super) fn write_in_read_only(outline: &super::outline::Outline) -> Result<(), Violation> {
    let verb = if outline.verb.is_empty() {
        "this statement"
    } else {
        outline.verb.as_str()
    };
    violation(
        Rule::ReadOnly,
        format!("cannot execute {verb} in read-only mode: the database is opened read-only (server.read_only)"),
    )
}

pub(super) fn flag(rule: Rule, what: &str, why: &str, flag: &str) -> Result<(), Violation> {
    violation(
        rule,
        format!("{what}: {why}. Set protection.{flag} to true to allow it"),
    )
}

fn text<'a>(fields: &'a Map<String, Value>, key: &str) -> &'a str {
    fields.get(key).and_then(Value::as_str).unwrap_or("")
}

fn truthy(fields: &Map<String, Value>, key: &str) -> bool {
    fields.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Does a list of `DefElem` options set `transaction_read_only` to false
/// (`READ WRITE`)? The value is an `A_Const` integer; 0 is omitted in JSON.
fn sets_read_write(options: Option<&Value>) -> bool {
    let Some(Value::Array(options)) = options else {
        return false;
    };
    options.iter().any(|opt| {
        let Some(def) = opt.get("DefElem") else { return false };
        if def.get("defname").and_then(Value::as_str) != Some("transaction_read_only") {
            return false;
        }
        let constant = def.get("arg").and_then(|a| a.get("A_Const"));
        let ival = constant
            .and_then(|c| c.get("ival"))
            .map(|i| i.get("ival").and_then(Value::as_i64).unwrap_or(0));
        let bval = constant
            .and_then(|c| c.get("boolval"))
            .map(|b| b.get("boolval").and_then(Value::as_bool).unwrap_or(false));
        ival == Some(0) || bval == Some(false)
    })
}

fn is_read_only_setting(name: &str) -> bool {
    name.eq_ignore_ascii_case("default_transaction_read_only") || name.eq_ignore_ascii_case("transaction_read_only")
}

/// The target table's name of an INSERT/UPDATE/DELETE (its `relation` RangeVar).
fn relation_name(fields: &Map<String, Value>) -> Option<&str> {
    fields.get("relation")?.get("relname")?.as_str()
}

/// Does a rename/move/owner statement target a function, procedure or routine?
fn is_routine(fields: &Map<String, Value>) -> bool {
    ["renameType", "objectType"].iter().any(|k| {
        matches!(
            text(fields, k),
            "OBJECT_FUNCTION" | "OBJECT_PROCEDURE" | "OBJECT_ROUTINE" | "OBJECT_AGGREGATE"
        )
    })
}

const READ_ONLY_NOTE: &str = "server.read_only is on";

/// In read-only mode, refuse a `VariableSetStmt` that could change the
/// transaction's read-only state. Runs before `allow_set` is considered.
pub(super) fn check_read_only_set(policy: &Policy, fields: &Map<String, Value>) -> Result<(), Violation> {
    if !policy.read_only {
        return Ok(());
    }
    let name = text(fields, "name");
    let set_kind = text(fields, "kind");
    if set_kind == "VAR_RESET_ALL" {
        return violation(
            Rule::ReadOnly,
            format!(
                "RESET ALL is blocked in read-only mode: could disable read-only transaction setting ({READ_ONLY_NOTE})"
            ),
        );
    }
    if is_read_only_setting(name) {
        return violation(
            Rule::ReadOnly,
            if set_kind == "VAR_RESET" {
                format!("RESET {name} is blocked in read-only mode ({READ_ONLY_NOTE})")
            } else {
                format!(
                    "SET {name} is blocked in read-only mode: cannot change transaction read-only setting ({READ_ONLY_NOTE})"
                )
            },
        );
    }
    if set_kind == "VAR_SET_MULTI" && sets_read_write(fields.get("args")) {
        return violation(
            Rule::ReadOnly,
            format!(
                "SET {name} READ WRITE is blocked in read-only mode: cannot start a read-write transaction ({READ_ONLY_NOTE})"
            ),
        );
    }
    Ok(())
}

/// Apply every rule that concerns a node of type `kind`.
pub(super) fn check_node(policy: &Policy, kind: &str, fields: &Map<String, Value>) -> Result<(), Violation> {
    match kind {
        "VariableSetStmt" => {
            check_read_only_set(policy, fields)?;
            let name = text(fields, "name");
            if !policy.allow_set {
                let why = "session settings outlive the statement and can weaken the guard or later calls";
                return match text(fields, "kind") {
                    "VAR_RESET_ALL" => flag(Rule::Set, "RESET ALL is not allowed", why, "allow_set"),
                    "VAR_RESET" => flag(Rule::Set, &format!("RESET statements are not allowed: RESET {name}"), why, "allow_set"),
                    _ => flag(Rule::Set, &format!("SET statements are not allowed: SET {name}"), why, "allow_set"),
                };
            }
            // allow_set must not open this door: leaving the role set by
            // connection.role (or taking another identity) would undo the
            // least-privilege layer under the guard. GUC names are
            // case-insensitive (`SET "ROLE" = x` is `SET ROLE x`).
            if !policy.allow_role_changes
                && ["role", "session_authorization"]
                    .iter()
                    .any(|n| name.eq_ignore_ascii_case(n))
            {
                let what = match text(fields, "kind") {
                    "VAR_RESET" => format!("RESET {name} is not allowed"),
                    _ => format!("SET {name} is not allowed"),
                };
                return flag(
                    Rule::RoleChanges,
                    &what,
                    "it switches the role queries run as, leaving the one pgmcp set (connection.role)",
                    "allow_role_changes",
                );
            }
            Ok(())
        }
        "TransactionStmt"
            if !policy.allow_prepare
                && matches!(
                    text(fields, "kind"),
                    "TRANS_STMT_PREPARE" | "TRANS_STMT_COMMIT_PREPARED" | "TRANS_STMT_ROLLBACK_PREPARED"
                ) =>
        {
            flag(
                Rule::Prepare,
                "PREPARE TRANSACTION is not allowed",
                "a prepared transaction outlives the session and keeps its locks",
                "allow_prepare",
            )
        }
        "TransactionStmt" if policy.read_only && sets_read_write(fields.get("options")) => violation(
            Rule::ReadOnly,
            format!("BEGIN READ WRITE is blocked in read-only mode: cannot start a read-write transaction ({READ_ONLY_NOTE})"),
        ),
        "DropStmt" | "DropRoleStmt" | "DropTableSpaceStmt" | "DropOwnedStmt" | "DropSubscriptionStmt"
        | "DropUserMappingStmt"
            if !policy.allow_drop =>
        {
            flag(Rule::Drop, "DROP statements are not allowed", "they destroy objects and the data in them", "allow_drop")
        }
        "AlterTableCmd" if !policy.allow_drop && text(fields, "subtype") == "AT_DropColumn" => flag(
            Rule::Drop,
            "ALTER TABLE ... DROP COLUMN is not allowed",
            "it destroys the column and the data in it",
            "allow_drop",
        ),
        "AlterTableCmd" if !policy.allow_drop && text(fields, "subtype") == "AT_DropIdentity" => flag(
            Rule::Drop,
            "ALTER TABLE ... DROP IDENTITY is not allowed",
            "it drops the column's sequence and the position it had reached",
            "allow_drop",
        ),
        "DropdbStmt" if !policy.allow_drop => {
            flag(Rule::Drop, "DROP DATABASE is not allowed", "it destroys a whole database", "allow_drop")
        }
        "TruncateStmt" if !policy.allow_truncate => {
            flag(Rule::Truncate, "TRUNCATE statements are not allowed", "TRUNCATE removes every row at once", "allow_truncate")
        }
        "DoStmt" if !policy.allow_do => violation(
            Rule::Do,
            "DO $$ blocks are not allowed: DO blocks can execute arbitrary SQL bypassing protection checks. Set protection.allow_do to true to allow it".to_owned(),
        ),
        "DeleteStmt" if !policy.allow_delete_without_where && !fields.contains_key("whereClause") => violation(
            Rule::DeleteWithoutWhere,
            "DELETE without WHERE clause is not allowed: it would delete every row. Add a WHERE clause, or set protection.allow_delete_without_where to true".to_owned(),
        ),
        "MergeStmt" if !policy.allow_merge => flag(
            Rule::Merge,
            "MERGE is not allowed",
            "its UPDATE and DELETE actions can change every row, with no WHERE clause to check",
            "allow_merge",
        ),
        // Writing pg_settings is set_config() by another name.
        "UpdateStmt" if !policy.allow_set && relation_name(fields) == Some("pg_settings") => flag(
            Rule::Set,
            "UPDATE pg_settings is not allowed",
            "it changes session settings like SET does",
            "allow_set",
        ),
        "UpdateStmt" if !policy.allow_update_without_where && !fields.contains_key("whereClause") => violation(
            Rule::UpdateWithoutWhere,
            "UPDATE without WHERE clause is not allowed: it would change every row. Add a WHERE clause, or set protection.allow_update_without_where to true".to_owned(),
        ),
        "CopyStmt" if truthy(fields, "is_from") && !policy.allow_copy_from => flag(
            Rule::CopyFrom,
            "COPY FROM is not allowed",
            "it loads data from files or programs on the database server",
            "allow_copy_from",
        ),
        "CopyStmt"
            if !truthy(fields, "is_from")
                && (truthy(fields, "is_program") || fields.contains_key("filename"))
                && !policy.allow_copy_to_file =>
        {
            violation(
                Rule::CopyToFile,
                "COPY TO a server file or program is not allowed: it writes files or runs shell commands on the database server. COPY ... TO STDOUT is allowed; set protection.allow_copy_to_file to true to allow the rest".to_owned(),
            )
        }
        "CreateFunctionStmt" if !policy.allow_create_function => {
            let what = if truthy(fields, "is_procedure") { "CREATE PROCEDURE" } else { "CREATE FUNCTION" };
            violation(
                Rule::CreateFunction,
                format!("{what} is not allowed: can contain arbitrary SQL bypassing protection checks. Set protection.allow_create_function to true to allow it"),
            )
        }
        // Each of these makes an existing function callable in a way the guard
        // does not see as a call (an operator, an aggregate, a cast), or
        // changes a function so its name no longer says what it does.
        "DefineStmt"
            if !policy.allow_create_function && matches!(text(fields, "kind"), "OBJECT_OPERATOR" | "OBJECT_AGGREGATE") =>
        {
            let what = if text(fields, "kind") == "OBJECT_OPERATOR" { "CREATE OPERATOR" } else { "CREATE AGGREGATE" };
            flag(
                Rule::CreateFunction,
                &format!("{what} is not allowed"),
                "it runs a function through syntax the guard does not see as a call",
                "allow_create_function",
            )
        }
        "CreateCastStmt" if !policy.allow_create_function && fields.contains_key("func") => flag(
            Rule::CreateFunction,
            "CREATE CAST ... WITH FUNCTION is not allowed",
            "it runs a function through syntax the guard does not see as a call",
            "allow_create_function",
        ),
        "AlterFunctionStmt" if !policy.allow_create_function => {
            flag(Rule::CreateFunction, "ALTER FUNCTION is not allowed", "it changes what a function does", "allow_create_function")
        }
        "RenameStmt" | "AlterObjectSchemaStmt" | "AlterOwnerStmt"
            if !policy.allow_create_function && is_routine(fields) =>
        {
            flag(
                Rule::CreateFunction,
                "renaming or moving a function is not allowed",
                "protection.blocked_functions matches functions by name",
                "allow_create_function",
            )
        }
        "CreateExtensionStmt" | "AlterExtensionStmt" | "AlterExtensionContentsStmt" | "CreateFdwStmt"
        | "AlterFdwStmt" | "CreateForeignServerStmt" | "AlterForeignServerStmt" | "CreateForeignTableStmt"
        | "ImportForeignSchemaStmt" | "CreateUserMappingStmt" | "AlterUserMappingStmt" | "CreateSubscriptionStmt"
        | "AlterSubscriptionStmt"
            if !policy.allow_create_extension =>
        {
            flag(
                Rule::CreateExtension,
                "extensions, foreign data and subscriptions are not allowed",
                "CREATE EXTENSION loads code into the server, foreign tables and servers can read files, run programs and reach other servers, and a subscription writes what another server sends",
                "allow_create_extension",
            )
        }
        "CreateRoleStmt" | "AlterRoleStmt" | "GrantRoleStmt" | "CreatePolicyStmt" | "AlterPolicyStmt"
        | "ReassignOwnedStmt"
            if !policy.allow_role_changes =>
        {
            flag(
                Rule::RoleChanges,
                "changing roles, role membership or row security policies is not allowed",
                "it changes who may do what, including this session's own privileges",
                "allow_role_changes",
            )
        }
        "PrepareStmt" if !policy.allow_prepare => violation(
            Rule::Prepare,
            "PREPARE statements are not allowed: prepared statements can be executed later bypassing protection checks. Set protection.allow_prepare to true to allow it".to_owned(),
        ),
        "AlterSystemStmt" if !policy.allow_alter_system => flag(
            Rule::AlterSystem,
            "ALTER SYSTEM is not allowed",
            "it changes the server's configuration for every session",
            "allow_alter_system",
        ),
        "LoadStmt" if !policy.allow_load => {
            flag(Rule::Load, "LOAD is not allowed", "it loads a shared library into the server process", "allow_load")
        }
        "RuleStmt" if !policy.allow_create_rule => flag(
            Rule::CreateRule,
            "CREATE RULE is not allowed",
            "rules rewrite later statements and can hide writes behind reads",
            "allow_create_rule",
        ),
        // Maintenance rewrites or scans whole tables under strong locks, and
        // runs inside a READ ONLY transaction all the same.
        "VacuumStmt" | "ClusterStmt" | "ReindexStmt" | "CheckPointStmt" | "RefreshMatViewStmt"
            if !policy.allow_maintenance =>
        {
            let what = match kind {
                "VacuumStmt" if truthy(fields, "is_vacuumcmd") => "VACUUM",
                "VacuumStmt" => "ANALYZE",
                "ClusterStmt" => "CLUSTER",
                "ReindexStmt" => "REINDEX",
                "CheckPointStmt" => "CHECKPOINT",
                _ => "REFRESH MATERIALIZED VIEW",
            };
            flag(
                Rule::Maintenance,
                &format!("{what} is not allowed"),
                "maintenance rewrites or scans whole tables and locks them while it runs",
                "allow_maintenance",
            )
        }
        // LOCK's mode: 1 is ACCESS SHARE (what a read takes); the default,
        // omitted from the JSON as 0, means ACCESS EXCLUSIVE.
        "LockStmt" if !policy.allow_lock && fields.get("mode").and_then(Value::as_i64).unwrap_or(0) != 1 => flag(
            Rule::Lock,
            "LOCK TABLE in a mode stronger than ACCESS SHARE is not allowed",
            "it blocks other sessions' reads or writes of the table",
            "allow_lock",
        ),
        // Changing a column's type rewrites every row with the USING
        // expression (or a cast): an UPDATE of the whole table.
        "AlterTableCmd"
            if !policy.allow_update_without_where
                && matches!(text(fields, "subtype"), "AT_AlterColumnType" | "AT_SetExpression") =>
        {
            flag(
                Rule::UpdateWithoutWhere,
                "ALTER TABLE ... ALTER COLUMN ... TYPE (or SET EXPRESSION) is not allowed",
                "it rewrites the column in every row, like an UPDATE without WHERE",
                "allow_update_without_where",
            )
        }
        // CREATE OR REPLACE drops what it replaces: a view, a trigger, a
        // transform, a language. (Functions, aggregates and rules have flags
        // of their own, which already cover replacing them.)
        k if !policy.allow_drop
            && truthy(fields, "replace")
            && !matches!(k, "CreateFunctionStmt" | "DefineStmt" | "RuleStmt") =>
        {
            flag(
                Rule::Drop,
                "CREATE OR REPLACE is not allowed",
                "it replaces, and so drops, the existing object",
                "allow_drop",
            )
        }
        // An upsert fed by a query can overwrite every row of the table (fed
        // the table itself, it does); only a VALUES list bounds it to the
        // rows it names.
        "InsertStmt"
            if !policy.allow_update_without_where
                && fields.get("onConflictClause").is_some_and(|c| {
                    c.get("action").and_then(Value::as_str) == Some("ONCONFLICT_UPDATE") && c.get("whereClause").is_none()
                })
                && fields
                    .get("selectStmt")
                    .and_then(|s| s.get("SelectStmt"))
                    .is_none_or(|s| s.get("valuesLists").is_none()) =>
        {
            flag(
                Rule::UpdateWithoutWhere,
                "INSERT ... SELECT ... ON CONFLICT DO UPDATE without a WHERE in DO UPDATE is not allowed",
                "it can overwrite every row the query names, like an UPDATE without WHERE",
                "allow_update_without_where",
            )
        }
        _ => Ok(()),
    }
}
