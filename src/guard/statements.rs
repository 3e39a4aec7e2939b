//! What each PostgreSQL statement and clause is, for the rules: one `match`
//! on the node type, reporting to the judge every rule the node falls under,
//! in order (the judge refuses the first one not allowed). Each arm reads the
//! node's fields as libpg_query's JSON spells them (fields at their default
//! value, such as `false` or `0`, are left out of the JSON).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Finding, Judge, Remedy, Rule, Violation};

/// Why a default-blocked function is dangerous, for the message.
pub(super) fn function_reason(name: &str) -> Cow<'static, str> {
    Cow::Borrowed(match name {
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
        "set_config" => {
            return Cow::Owned(format!(
                "changes session settings, which protection.{} governs",
                Rule::Set.flag().unwrap_or_default()
            ));
        }
        _ => "is listed in protection.blocked_functions",
    })
}

/// A statement the embedded engine (SQLite, DuckDB) says would write, in
/// read-only mode: refused before it runs, though the file is read-only too.
pub(super) fn write_in_read_only(judge: &Judge, outline: &super::outline::Outline) -> Result<(), Violation> {
    judge.write(|| {
        let verb = if outline.verb.is_empty() {
            "this statement"
        } else {
            outline.verb.as_str()
        };
        format!("cannot execute {verb} in read-only mode: the database is opened read-only (server.read_only)")
    })
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

/// A `VariableSetStmt` that could change the transaction's read-only state:
/// a write in read-only mode. Judged before the switch for SET.
pub(super) fn check_read_only_set(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let name = text(fields, "name");
    let set_kind = text(fields, "kind");
    if set_kind == "VAR_RESET_ALL" {
        return judge.write(|| {
            format!(
                "RESET ALL is blocked in read-only mode: could disable read-only transaction setting ({READ_ONLY_NOTE})"
            )
        });
    }
    if is_read_only_setting(name) {
        return judge.write(|| {
            if set_kind == "VAR_RESET" {
                format!("RESET {name} is blocked in read-only mode ({READ_ONLY_NOTE})")
            } else {
                format!(
                    "SET {name} is blocked in read-only mode: cannot change transaction read-only setting ({READ_ONLY_NOTE})"
                )
            }
        });
    }
    if set_kind == "VAR_SET_MULTI" && sets_read_write(fields.get("args")) {
        return judge.write(|| {
            format!(
                "SET {name} READ WRITE is blocked in read-only mode: cannot start a read-write transaction ({READ_ONLY_NOTE})"
            )
        });
    }
    Ok(())
}

/// `SET`, `RESET`: a setting, and perhaps a way out of the role pgmcp set.
fn variable_set(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    check_read_only_set(judge, fields)?;
    let name = text(fields, "name");
    let reset = text(fields, "kind");
    let what = match reset {
        "VAR_RESET_ALL" => Cow::Borrowed("RESET ALL is not allowed"),
        "VAR_RESET" => Cow::Owned(format!("RESET statements are not allowed: RESET {name}")),
        _ => Cow::Owned(format!("SET statements are not allowed: SET {name}")),
    };
    judge.decide(Finding::new(
        Rule::Set,
        what,
        "session settings outlive the statement and can weaken the guard or later calls",
    ))?;
    // Allowing SET must not open this door: leaving the role set by
    // connection.role (or taking another identity) would undo the
    // least-privilege layer under the guard. GUC names are case-insensitive
    // (`SET "ROLE" = x` is `SET ROLE x`).
    if ["role", "session_authorization"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
    {
        let what = match reset {
            "VAR_RESET" => format!("RESET {name} is not allowed"),
            _ => format!("SET {name} is not allowed"),
        };
        judge.decide(Finding::new(
            Rule::RoleChanges,
            what,
            "it switches the role queries run as, leaving the one pgmcp set (connection.role)",
        ))?;
    }
    Ok(())
}

/// Report every rule a node of type `kind` falls under.
pub(super) fn check_node(judge: &Judge, kind: &str, fields: &Map<String, Value>) -> Result<(), Violation> {
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    match kind {
        "VariableSetStmt" => return variable_set(judge, fields),
        "TransactionStmt" => {
            if matches!(
                text(fields, "kind"),
                "TRANS_STMT_PREPARE" | "TRANS_STMT_COMMIT_PREPARED" | "TRANS_STMT_ROLLBACK_PREPARED"
            ) {
                decide(
                    Rule::Prepare,
                    "PREPARE TRANSACTION is not allowed",
                    "a prepared transaction outlives the session and keeps its locks",
                )?;
            }
            if sets_read_write(fields.get("options")) {
                judge.write(|| {
                    format!(
                        "BEGIN READ WRITE is blocked in read-only mode: cannot start a read-write transaction ({READ_ONLY_NOTE})"
                    )
                })?;
            }
        }
        "DropStmt"
        | "DropRoleStmt"
        | "DropTableSpaceStmt"
        | "DropOwnedStmt"
        | "DropSubscriptionStmt"
        | "DropUserMappingStmt" => decide(
            Rule::Drop,
            "DROP statements are not allowed",
            "they destroy objects and the data in them",
        )?,
        "AlterTableCmd" => match text(fields, "subtype") {
            "AT_DropColumn" => decide(
                Rule::Drop,
                "ALTER TABLE ... DROP COLUMN is not allowed",
                "it destroys the column and the data in it",
            )?,
            "AT_DropIdentity" => decide(
                Rule::Drop,
                "ALTER TABLE ... DROP IDENTITY is not allowed",
                "it drops the column's sequence and the position it had reached",
            )?,
            // Changing a column's type rewrites every row with the USING
            // expression (or a cast): an UPDATE of the whole table.
            "AT_AlterColumnType" | "AT_SetExpression" => decide(
                Rule::UpdateWithoutWhere,
                "ALTER TABLE ... ALTER COLUMN ... TYPE (or SET EXPRESSION) is not allowed",
                "it rewrites the column in every row, like an UPDATE without WHERE",
            )?,
            _ => {}
        },
        "DropdbStmt" => decide(
            Rule::Drop,
            "DROP DATABASE is not allowed",
            "it destroys a whole database",
        )?,
        "TruncateStmt" => decide(
            Rule::Truncate,
            "TRUNCATE statements are not allowed",
            "TRUNCATE removes every row at once",
        )?,
        "DoStmt" => decide(
            Rule::Do,
            "DO $$ blocks are not allowed",
            "DO blocks can execute arbitrary SQL bypassing protection checks",
        )?,
        "DeleteStmt" if !fields.contains_key("whereClause") => judge.decide(
            Finding::new(
                Rule::DeleteWithoutWhere,
                "DELETE without WHERE clause is not allowed",
                "it would delete every row",
            )
            .remedy(Remedy::AddWhere),
        )?,
        "MergeStmt" => decide(
            Rule::Merge,
            "MERGE is not allowed",
            "its UPDATE and DELETE actions can change every row, with no WHERE clause to check",
        )?,
        "UpdateStmt" => {
            // Writing pg_settings is set_config() by another name.
            if relation_name(fields) == Some("pg_settings") {
                decide(
                    Rule::Set,
                    "UPDATE pg_settings is not allowed",
                    "it changes session settings like SET does",
                )?;
            }
            if !fields.contains_key("whereClause") {
                judge.decide(
                    Finding::new(
                        Rule::UpdateWithoutWhere,
                        "UPDATE without WHERE clause is not allowed",
                        "it would change every row",
                    )
                    .remedy(Remedy::AddWhere),
                )?;
            }
        }
        "CopyStmt" if truthy(fields, "is_from") => decide(
            Rule::CopyFrom,
            "COPY FROM is not allowed",
            "it loads data from files or programs on the database server",
        )?,
        "CopyStmt" if truthy(fields, "is_program") || fields.contains_key("filename") => judge.decide(
            Finding::new(
                Rule::CopyToFile,
                "COPY TO a server file or program is not allowed",
                "it writes files or runs shell commands on the database server",
            )
            .remedy(Remedy::ToStdout),
        )?,
        "CreateFunctionStmt" => {
            let what = if truthy(fields, "is_procedure") {
                "CREATE PROCEDURE is not allowed"
            } else {
                "CREATE FUNCTION is not allowed"
            };
            decide(
                Rule::CreateFunction,
                what,
                "can contain arbitrary SQL bypassing protection checks",
            )?;
        }
        // Each of these makes an existing function callable in a way the guard
        // does not see as a call (an operator, an aggregate, a cast), or
        // changes a function so its name no longer says what it does.
        "DefineStmt" if matches!(text(fields, "kind"), "OBJECT_OPERATOR" | "OBJECT_AGGREGATE") => {
            let what = if text(fields, "kind") == "OBJECT_OPERATOR" {
                "CREATE OPERATOR is not allowed"
            } else {
                "CREATE AGGREGATE is not allowed"
            };
            decide(
                Rule::CreateFunction,
                what,
                "it runs a function through syntax the guard does not see as a call",
            )?;
        }
        "CreateCastStmt" if fields.contains_key("func") => decide(
            Rule::CreateFunction,
            "CREATE CAST ... WITH FUNCTION is not allowed",
            "it runs a function through syntax the guard does not see as a call",
        )?,
        "AlterFunctionStmt" => decide(
            Rule::CreateFunction,
            "ALTER FUNCTION is not allowed",
            "it changes what a function does",
        )?,
        "RenameStmt" | "AlterObjectSchemaStmt" | "AlterOwnerStmt" if is_routine(fields) => decide(
            Rule::CreateFunction,
            "renaming or moving a function is not allowed",
            "protection.blocked_functions matches functions by name",
        )?,
        "CreateExtensionStmt"
        | "AlterExtensionStmt"
        | "AlterExtensionContentsStmt"
        | "CreateFdwStmt"
        | "AlterFdwStmt"
        | "CreateForeignServerStmt"
        | "AlterForeignServerStmt"
        | "CreateForeignTableStmt"
        | "ImportForeignSchemaStmt"
        | "CreateUserMappingStmt"
        | "AlterUserMappingStmt"
        | "CreateSubscriptionStmt"
        | "AlterSubscriptionStmt" => decide(
            Rule::CreateExtension,
            "extensions, foreign data and subscriptions are not allowed",
            "CREATE EXTENSION loads code into the server, foreign tables and servers can read files, run programs and reach other servers, and a subscription writes what another server sends",
        )?,
        "CreateRoleStmt" | "AlterRoleStmt" | "GrantRoleStmt" | "CreatePolicyStmt" | "AlterPolicyStmt"
        | "ReassignOwnedStmt" => decide(
            Rule::RoleChanges,
            "changing roles, role membership or row security policies is not allowed",
            "it changes who may do what, including this session's own privileges",
        )?,
        "PrepareStmt" => decide(
            Rule::Prepare,
            "PREPARE statements are not allowed",
            "prepared statements can be executed later bypassing protection checks",
        )?,
        "AlterSystemStmt" => decide(
            Rule::AlterSystem,
            "ALTER SYSTEM is not allowed",
            "it changes the server's configuration for every session",
        )?,
        "LoadStmt" => decide(
            Rule::Load,
            "LOAD is not allowed",
            "it loads a shared library into the server process",
        )?,
        "RuleStmt" => decide(
            Rule::CreateRule,
            "CREATE RULE is not allowed",
            "rules rewrite later statements and can hide writes behind reads",
        )?,
        // Maintenance rewrites or scans whole tables under strong locks, and
        // runs inside a READ ONLY transaction all the same.
        "VacuumStmt" | "ClusterStmt" | "ReindexStmt" | "CheckPointStmt" | "RefreshMatViewStmt" => {
            let what = match kind {
                "VacuumStmt" if truthy(fields, "is_vacuumcmd") => "VACUUM is not allowed",
                "VacuumStmt" => "ANALYZE is not allowed",
                "ClusterStmt" => "CLUSTER is not allowed",
                "ReindexStmt" => "REINDEX is not allowed",
                "CheckPointStmt" => "CHECKPOINT is not allowed",
                _ => "REFRESH MATERIALIZED VIEW is not allowed",
            };
            decide(
                Rule::Maintenance,
                what,
                "maintenance rewrites or scans whole tables and locks them while it runs",
            )?;
        }
        // LOCK's mode: 1 is ACCESS SHARE (what a read takes); the default,
        // omitted from the JSON as 0, means ACCESS EXCLUSIVE.
        "LockStmt" if fields.get("mode").and_then(Value::as_i64).unwrap_or(0) != 1 => decide(
            Rule::Lock,
            "LOCK TABLE in a mode stronger than ACCESS SHARE is not allowed",
            "it blocks other sessions' reads or writes of the table",
        )?,
        // An upsert fed by a query can overwrite every row of the table (fed
        // the table itself, it does); only a VALUES list bounds it to the
        // rows it names.
        "InsertStmt"
            if fields.get("onConflictClause").is_some_and(|c| {
                c.get("action").and_then(Value::as_str) == Some("ONCONFLICT_UPDATE") && c.get("whereClause").is_none()
            }) && fields
                .get("selectStmt")
                .and_then(|s| s.get("SelectStmt"))
                .is_none_or(|s| s.get("valuesLists").is_none()) =>
        {
            decide(
                Rule::UpdateWithoutWhere,
                "INSERT ... SELECT ... ON CONFLICT DO UPDATE without a WHERE in DO UPDATE is not allowed",
                "it can overwrite every row the query names, like an UPDATE without WHERE",
            )?
        }
        _ => {}
    }
    // CREATE OR REPLACE drops what it replaces: a view, a trigger, a
    // transform, a language. (Functions, aggregates and rules have rules of
    // their own, which already cover replacing them.)
    if truthy(fields, "replace") && !matches!(kind, "CreateFunctionStmt" | "DefineStmt" | "RuleStmt") {
        decide(
            Rule::Drop,
            "CREATE OR REPLACE is not allowed",
            "it replaces, and so drops, the existing object",
        )?;
    }
    Ok(())
}
