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

/// Report every rule a node of type `kind` falls under. Read-write mode is
/// an allowlist as read-only mode is: every statement kind (a node type
/// ending in `Stmt`, wherever it appears: at the top, inside `CREATE SCHEMA`,
/// `EXPLAIN`, `COPY (...)`, a rule action or a `PREPARE` body) and every
/// `ALTER TABLE` action is named below, as ordinary (it runs, under the
/// rules of its parts), governed by a rule with a switch, or refused because
/// no setting allows it; a kind not named is refused too.
pub(super) fn check_node(judge: &Judge, kind: &str, fields: &Map<String, Value>) -> Result<(), Violation> {
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    match kind {
        // Reading, and statements that only show or explain.
        "SelectStmt" | "VariableShowStmt" | "ExplainStmt" | "ReturnStmt" => {}
        // CALL runs a procedure as SELECT runs a function: what it reaches
        // is judged like any call (the procedure through `funccall`).
        "CallStmt" => {}
        // Writing rows: ordinary, but not every row at once.
        "InsertStmt" => insert(judge, fields)?,
        "UpdateStmt" => update(judge, fields)?,
        "DeleteStmt" if !fields.contains_key("whereClause") => judge.decide(
            Finding::new(
                Rule::DeleteWithoutWhere,
                "DELETE without WHERE clause is not allowed",
                "it would delete every row",
            )
            .remedy(Remedy::AddWhere),
        )?,
        "DeleteStmt" => {}
        "MergeStmt" => decide(
            Rule::Merge,
            "MERGE is not allowed",
            "its UPDATE and DELETE actions can change every row, with no WHERE clause to check",
        )?,
        "CopyStmt" => copy(judge, fields)?,
        "TruncateStmt" => decide(
            Rule::Truncate,
            "TRUNCATE statements are not allowed",
            "TRUNCATE removes every row at once",
        )?,
        // What lasts only as long as the call's transaction or session
        // (which pgmcp resets after every call): cursors, a prepared
        // statement's use, deferred constraints, LISTEN. NOTIFY is what
        // pg_notify() does, which read-write mode runs like any function.
        "DeclareCursorStmt" | "FetchStmt" | "ClosePortalStmt" | "ExecuteStmt" | "DeallocateStmt"
        | "ConstraintsSetStmt" | "DiscardStmt" | "ListenStmt" | "UnlistenStmt" | "NotifyStmt" => {}
        "VariableSetStmt" => return variable_set(judge, fields),
        "TransactionStmt" => transaction(judge, fields)?,
        // Ordinary schema objects: tables, indexes, views, schemas,
        // sequences, types, domains, statistics, comments, collations and
        // text search configurations. `CREATE OR REPLACE` is judged below.
        "CreateStmt"
        | "IndexStmt"
        | "ViewStmt"
        | "CreateSchemaStmt"
        | "CreateSeqStmt"
        | "AlterSeqStmt"
        | "CreateTableAsStmt"
        | "CompositeTypeStmt"
        | "CreateEnumStmt"
        | "AlterEnumStmt"
        | "CreateDomainStmt"
        | "CreateStatsStmt"
        | "AlterStatsStmt"
        | "CommentStmt"
        | "AlterCollationStmt"
        | "AlterTSDictionaryStmt"
        | "AlterTSConfigurationStmt" => {}
        // `ALTER TABLE ... REPLICA IDENTITY`'s definition: its action is
        // judged as an `AlterTableCmd`.
        "ReplicaIdentityStmt" => {}
        "AlterTableStmt" if text(fields, "objtype") == "OBJECT_FOREIGN_TABLE" => decide(
            Rule::CreateExtension,
            "ALTER FOREIGN TABLE is not allowed",
            FOREIGN_OPTIONS_WHY,
        )?,
        "AlterTableStmt" => {}
        "AlterTableCmd" => alter_table_cmd(judge, fields)?,
        "AlterDomainStmt" => match text(fields, "subtype") {
            "X" => decide(
                Rule::Drop,
                "ALTER DOMAIN ... DROP CONSTRAINT is not allowed",
                CONSTRAINT_WHY,
            )?,
            "N" => decide(
                Rule::Drop,
                "ALTER DOMAIN ... DROP NOT NULL is not allowed",
                CONSTRAINT_WHY,
            )?,
            _ => {}
        },
        "CreateRangeStmt" if has_option(fields.get("params"), &["canonical", "subtype_diff"]) => decide(
            Rule::CreateFunction,
            "CREATE TYPE ... AS RANGE with a canonical or subtype_diff function is not allowed",
            HIDDEN_CALL_WHY,
        )?,
        "CreateRangeStmt" => {}
        "GrantStmt" => grant(judge, fields)?,
        // A GRANT for objects yet to be created.
        "AlterDefaultPrivilegesStmt" => {}
        "DropStmt"
        | "DropRoleStmt"
        | "DropTableSpaceStmt"
        | "DropOwnedStmt"
        | "DropSubscriptionStmt"
        | "DropUserMappingStmt" => judge.decide(Finding::drop())?,
        "DropdbStmt" => decide(
            Rule::Drop,
            "DROP DATABASE is not allowed",
            "it destroys a whole database",
        )?,
        "DoStmt" => decide(
            Rule::Do,
            "DO $$ blocks are not allowed",
            "DO blocks can execute arbitrary SQL bypassing protection checks",
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
        "DefineStmt" => define(judge, fields)?,
        // Each of these makes an existing function run in a way the guard
        // does not see as a call (a cast, an operator class, a type's
        // support functions, a transform), or changes what one does.
        "CreateCastStmt" if fields.contains_key("func") => decide(
            Rule::CreateFunction,
            "CREATE CAST ... WITH FUNCTION is not allowed",
            HIDDEN_CALL_WHY,
        )?,
        "CreateCastStmt" => {}
        "CreateOpClassStmt" | "CreateOpFamilyStmt" | "AlterOpFamilyStmt" => decide(
            Rule::CreateFunction,
            "CREATE/ALTER OPERATOR CLASS or FAMILY is not allowed",
            "sorting, indexes and comparisons run its functions without naming them",
        )?,
        "AlterOperatorStmt" | "AlterTypeStmt" => decide(
            Rule::CreateFunction,
            "ALTER OPERATOR ... SET or ALTER TYPE ... SET is not allowed",
            "it changes the functions an operator or a type runs without naming them",
        )?,
        "CreateTransformStmt" => decide(
            Rule::CreateFunction,
            "CREATE TRANSFORM is not allowed",
            "it runs functions through syntax the guard does not see as a call",
        )?,
        "AlterFunctionStmt" => decide(
            Rule::CreateFunction,
            "ALTER FUNCTION is not allowed",
            "it changes what a function does",
        )?,
        "RenameStmt" => rename(judge, fields)?,
        "AlterObjectSchemaStmt" => set_schema(judge, fields)?,
        "AlterOwnerStmt" => {
            if is_routine(fields) {
                renamed_function(judge)?;
            }
            owner(judge)?;
        }
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
        // A language's handler is code loaded into the server; an object
        // marked as depending on an extension is dropped with it.
        "CreatePLangStmt" => decide(
            Rule::CreateExtension,
            "CREATE LANGUAGE is not allowed",
            "a language's handler is code loaded into the server",
        )?,
        "AlterObjectDependsStmt" => decide(
            Rule::CreateExtension,
            "ALTER ... DEPENDS ON EXTENSION is not allowed",
            "the object is then dropped whenever the extension is",
        )?,
        "CreateRoleStmt" | "AlterRoleStmt" | "GrantRoleStmt" | "CreatePolicyStmt" | "AlterPolicyStmt"
        | "ReassignOwnedStmt" => decide(
            Rule::RoleChanges,
            "changing roles, role membership or row security policies is not allowed",
            "it changes who may do what, including this session's own privileges",
        )?,
        // In read-only mode, a change to the read-only settings is named as
        // such first, whatever the switches.
        "AlterRoleSetStmt" | "AlterDatabaseSetStmt"
            if let Some(Value::Object(set)) = fields.get("setstmt")
                && let Err(refused) = check_read_only_set(judge, set) =>
        {
            return Err(refused);
        }
        "AlterRoleSetStmt" => decide(
            Rule::RoleChanges,
            "ALTER ROLE ... SET is not allowed",
            "it changes the settings of every later session of the role, this one's included",
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
        "AlterDatabaseSetStmt" => decide(
            Rule::AlterSystem,
            "ALTER DATABASE ... SET is not allowed",
            "it changes the settings of every later session in the database, as ALTER SYSTEM does for the server",
        )?,
        "LoadStmt" => decide(
            Rule::Load,
            "LOAD is not allowed",
            "it loads a shared library into the server process",
        )?,
        "RuleStmt" => decide(Rule::CreateRule, "CREATE RULE is not allowed", RULE_WHY)?,
        // Maintenance rewrites or scans whole tables under strong locks, and
        // runs inside a READ ONLY transaction all the same.
        "VacuumStmt"
        | "ClusterStmt"
        | "ReindexStmt"
        | "CheckPointStmt"
        | "RefreshMatViewStmt"
        | "AlterTableMoveAllStmt" => {
            let what = match kind {
                "VacuumStmt" if truthy(fields, "is_vacuumcmd") => "VACUUM is not allowed",
                "VacuumStmt" => "ANALYZE is not allowed",
                "ClusterStmt" => "CLUSTER is not allowed",
                "ReindexStmt" => "REINDEX is not allowed",
                "CheckPointStmt" => "CHECKPOINT is not allowed",
                "AlterTableMoveAllStmt" => "ALTER ... ALL IN TABLESPACE ... SET TABLESPACE is not allowed",
                _ => "REFRESH MATERIALIZED VIEW is not allowed",
            };
            judge.decide(Finding::maintenance(what))?;
        }
        // LOCK's mode: 1 is ACCESS SHARE (what a read takes); the default,
        // omitted from the JSON as 0, means ACCESS EXCLUSIVE.
        "LockStmt" if fields.get("mode").and_then(Value::as_i64).unwrap_or(0) != 1 => decide(
            Rule::Lock,
            "LOCK TABLE in a mode stronger than ACCESS SHARE is not allowed",
            "it blocks other sessions' reads or writes of the table",
        )?,
        "LockStmt" => {}
        "CreateTrigStmt" => decide(Rule::Triggers, "CREATE TRIGGER is not allowed", TRIGGER_WHY)?,
        "CreateEventTrigStmt" | "AlterEventTrigStmt" => decide(
            Rule::Triggers,
            "CREATE/ALTER EVENT TRIGGER is not allowed",
            "an event trigger runs a function on every later schema change, by every session",
        )?,
        "CreatePublicationStmt" | "AlterPublicationStmt" => decide(
            Rule::Publications,
            "CREATE/ALTER PUBLICATION is not allowed",
            PUBLICATION_WHY,
        )?,
        // What no one expects an agent to do, and no setting allows.
        "CreatedbStmt" => never(
            judge,
            "CREATE DATABASE is not allowed",
            "it copies a whole database, and cannot run inside the transaction every call runs in",
        )?,
        "AlterDatabaseStmt" | "AlterDatabaseRefreshCollStmt" => never(
            judge,
            "ALTER DATABASE is not allowed",
            "it changes how every session connects to the database and where it is stored",
        )?,
        "CreateTableSpaceStmt" | "AlterTableSpaceOptionsStmt" => never(
            judge,
            "CREATE/ALTER TABLESPACE is not allowed",
            "a tablespace is a directory on the database server's file system",
        )?,
        "CreateAmStmt" => never(
            judge,
            "CREATE ACCESS METHOD is not allowed",
            "an access method's handler is C code that stores or indexes every row of the tables using it",
        )?,
        "CreateConversionStmt" => never(
            judge,
            "CREATE CONVERSION is not allowed",
            "a default conversion's C function rewrites the text of every client of that encoding",
        )?,
        "SecLabelStmt" => never(
            judge,
            "SECURITY LABEL is not allowed",
            "security labels feed a label-based access control module (such as sepgsql), which decides who may do what",
        )?,
        other if other.ends_with("Stmt") => never(
            judge,
            &format!("{} is not allowed", super::read_only::sql_words(other)),
            "pgmcp does not know what this kind of statement does",
        )?,
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

const TRIGGER_WHY: &str = "a trigger runs a function on every later write to the table, by every session";
const PUBLICATION_WHY: &str = "a publication sends the tables' rows to any server that subscribes to it";
const CONSTRAINT_WHY: &str = "it drops a constraint the data was checked against";
const HIDDEN_CALL_WHY: &str = "it runs a function through syntax the guard does not see as a call";
const RULE_WHY: &str = "rules rewrite later statements and can hide writes behind reads";
const FOREIGN_OPTIONS_WHY: &str = "a foreign table's options can read files, run programs and reach other servers";

/// A statement kind no setting allows.
fn never(judge: &Judge, what: &str, why: &str) -> Result<(), Violation> {
    judge.decide(Finding::new(Rule::Unlisted, what, why))
}

/// `INSERT`: an upsert fed by a query can overwrite every row of the table
/// (fed the table itself, it does); only a VALUES list bounds it to the rows
/// it names.
fn insert(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let unbounded_update = fields.get("onConflictClause").is_some_and(|c| {
        c.get("action").and_then(Value::as_str) == Some("ONCONFLICT_UPDATE") && c.get("whereClause").is_none()
    });
    let from_query = fields
        .get("selectStmt")
        .and_then(|s| s.get("SelectStmt"))
        .is_none_or(|s| s.get("valuesLists").is_none());
    if unbounded_update && from_query {
        judge.decide(Finding::new(
            Rule::UpdateWithoutWhere,
            "INSERT ... SELECT ... ON CONFLICT DO UPDATE without a WHERE in DO UPDATE is not allowed",
            "it can overwrite every row the query names, like an UPDATE without WHERE",
        ))?;
    }
    Ok(())
}

fn update(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    // Writing pg_settings is set_config() by another name.
    if relation_name(fields) == Some("pg_settings") {
        judge.decide(Finding::new(
            Rule::Set,
            "UPDATE pg_settings is not allowed",
            "it changes session settings like SET does",
        ))?;
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
    Ok(())
}

/// `COPY`: to the client (`TO STDOUT`) it is a read; from anywhere, or to a
/// server file or program, it has a switch.
fn copy(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    if truthy(fields, "is_from") {
        return judge.decide(Finding::new(
            Rule::CopyFrom,
            "COPY FROM is not allowed",
            "it loads data from files or programs on the database server",
        ));
    }
    if !copies_to_client(fields) {
        return judge.decide(
            Finding::new(
                Rule::CopyToFile,
                "COPY TO a server file or program is not allowed",
                "it writes files or runs shell commands on the database server",
            )
            .remedy(Remedy::ToStdout),
        );
    }
    Ok(())
}

/// `COPY ... TO STDOUT`: the rows go to pgmcp, which returns them.
pub(super) fn copies_to_client(fields: &Map<String, Value>) -> bool {
    !truthy(fields, "is_from") && !truthy(fields, "is_program") && !fields.contains_key("filename")
}

fn transaction(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    if matches!(
        text(fields, "kind"),
        "TRANS_STMT_PREPARE" | "TRANS_STMT_COMMIT_PREPARED" | "TRANS_STMT_ROLLBACK_PREPARED"
    ) {
        judge.decide(Finding::new(
            Rule::Prepare,
            "PREPARE TRANSACTION is not allowed",
            "a prepared transaction outlives the session and keeps its locks",
        ))?;
    }
    if sets_read_write(fields.get("options")) {
        judge.write(|| {
            format!(
                "BEGIN READ WRITE is blocked in read-only mode: cannot start a read-write transaction ({READ_ONLY_NOTE})"
            )
        })?;
    }
    Ok(())
}

/// One action of `ALTER TABLE` (also `ALTER INDEX`, `VIEW`, `SEQUENCE`,
/// `MATERIALIZED VIEW` and `TYPE ... ADD ATTRIBUTE`, which share it): each
/// is named, as ordinary, under a rule, or refused.
fn alter_table_cmd(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    let subtype = text(fields, "subtype");
    match subtype {
        // Ordinary changes to a table's shape and settings: columns,
        // defaults, NOT NULL, constraints and indexes added or validated,
        // identity columns, statistics targets and storage options,
        // inheritance and partitions attached or detached (the rows stay
        // in the table).
        "AT_AddColumn"
        | "AT_ColumnDefault"
        | "AT_SetNotNull"
        | "AT_SetStatistics"
        | "AT_SetOptions"
        | "AT_ResetOptions"
        | "AT_SetStorage"
        | "AT_SetCompression"
        | "AT_AddIndex"
        | "AT_AddConstraint"
        | "AT_ValidateConstraint"
        | "AT_AddIndexConstraint"
        | "AT_ClusterOn"
        | "AT_DropCluster"
        | "AT_DropOids"
        | "AT_SetRelOptions"
        | "AT_ResetRelOptions"
        | "AT_ReplaceRelOptions"
        | "AT_AddInherit"
        | "AT_DropInherit"
        | "AT_AddOf"
        | "AT_DropOf"
        | "AT_AttachPartition"
        | "AT_DetachPartition"
        | "AT_DetachPartitionFinalize"
        | "AT_AddIdentity"
        | "AT_SetIdentity" => Ok(()),
        // A generated column becomes a plain one: its stored values stay.
        "AT_DropExpression" => Ok(()),
        // ALTER CONSTRAINT changes deferrability and inheritance; making a
        // constraint NOT ENFORCED stops checking it, as dropping it would.
        "AT_AlterConstraint" => {
            let unenforced = fields
                .get("def")
                .and_then(|d| d.get("ATAlterConstraint"))
                .is_some_and(|c| {
                    c.get("alterEnforceability").and_then(Value::as_bool) == Some(true)
                        && c.get("is_enforced").and_then(Value::as_bool) != Some(true)
                });
            if unenforced {
                decide(
                    Rule::Drop,
                    "ALTER TABLE ... ALTER CONSTRAINT ... NOT ENFORCED is not allowed",
                    "it stops checking the constraint, as dropping it would",
                )?;
            }
            Ok(())
        }
        "AT_DropColumn" => decide(
            Rule::Drop,
            "ALTER TABLE ... DROP COLUMN is not allowed",
            "it destroys the column and the data in it",
        ),
        "AT_DropConstraint" => decide(
            Rule::Drop,
            "ALTER TABLE ... DROP CONSTRAINT is not allowed",
            CONSTRAINT_WHY,
        ),
        "AT_DropNotNull" => decide(
            Rule::Drop,
            "ALTER TABLE ... ALTER COLUMN ... DROP NOT NULL is not allowed",
            CONSTRAINT_WHY,
        ),
        "AT_DropIdentity" => decide(
            Rule::Drop,
            "ALTER TABLE ... DROP IDENTITY is not allowed",
            "it drops the column's sequence and the position it had reached",
        ),
        "AT_SetUnLogged" => decide(
            Rule::Drop,
            "ALTER TABLE ... SET UNLOGGED is not allowed",
            "an unlogged table is emptied by a crash and is missing on replicas",
        ),
        // Changing a column's type rewrites every row with the USING
        // expression (or a cast): an UPDATE of the whole table.
        "AT_AlterColumnType" | "AT_SetExpression" => decide(
            Rule::UpdateWithoutWhere,
            "ALTER TABLE ... ALTER COLUMN ... TYPE (or SET EXPRESSION) is not allowed",
            "it rewrites the column in every row, like an UPDATE without WHERE",
        ),
        "AT_SetLogged" | "AT_SetTableSpace" | "AT_SetAccessMethod" => decide(
            Rule::Maintenance,
            "ALTER TABLE ... SET LOGGED, SET TABLESPACE or SET ACCESS METHOD is not allowed",
            "it rewrites the whole table under a lock that blocks every other session",
        ),
        "AT_EnableTrig"
        | "AT_EnableAlwaysTrig"
        | "AT_EnableReplicaTrig"
        | "AT_DisableTrig"
        | "AT_EnableTrigAll"
        | "AT_DisableTrigAll"
        | "AT_EnableTrigUser"
        | "AT_DisableTrigUser" => decide(
            Rule::Triggers,
            "ALTER TABLE ... ENABLE/DISABLE TRIGGER is not allowed",
            "disabling a trigger turns off what it enforces or records (foreign keys too), and enabling one makes it run on every later write",
        ),
        "AT_EnableRule" | "AT_EnableAlwaysRule" | "AT_EnableReplicaRule" | "AT_DisableRule" => decide(
            Rule::CreateRule,
            "ALTER TABLE ... ENABLE/DISABLE RULE is not allowed",
            "rules rewrite later statements: disabling one turns off what it enforces, enabling one makes it rewrite",
        ),
        "AT_EnableRowSecurity" | "AT_DisableRowSecurity" | "AT_ForceRowSecurity" | "AT_NoForceRowSecurity" => decide(
            Rule::RoleChanges,
            "ALTER TABLE ... ENABLE/DISABLE/FORCE ROW LEVEL SECURITY is not allowed",
            "it changes which rows each role may see and change",
        ),
        "AT_ChangeOwner" => owner(judge),
        "AT_ReplicaIdentity" => decide(
            Rule::Publications,
            "ALTER TABLE ... REPLICA IDENTITY is not allowed",
            "it changes what logical replication sends to subscribers, and NOTHING makes later UPDATEs and DELETEs of a published table fail",
        ),
        "AT_GenericOptions" | "AT_AlterColumnGenericOptions" => decide(
            Rule::CreateExtension,
            "ALTER ... OPTIONS is not allowed",
            FOREIGN_OPTIONS_WHY,
        ),
        other => never(
            judge,
            &format!(
                "ALTER TABLE action {} is not allowed",
                other.strip_prefix("AT_").unwrap_or(other)
            ),
            "pgmcp does not know what this ALTER TABLE action does",
        ),
    }
}

/// `ALTER FUNCTION ... RENAME TO` or `OWNER TO`: the blocked functions are
/// matched by name.
fn renamed_function(judge: &Judge) -> Result<(), Violation> {
    judge.decide(Finding::new(
        Rule::CreateFunction,
        "renaming or moving a function is not allowed",
        "protection.blocked_functions matches functions by name",
    ))
}

/// `OWNER TO`: who owns an object decides who may change or drop it.
fn owner(judge: &Judge) -> Result<(), Violation> {
    judge.decide(Finding::new(
        Rule::RoleChanges,
        "changing an object's owner is not allowed",
        "the owner may change, drop and grant the object: it changes who may do what",
    ))
}

/// `DefineStmt`: `CREATE AGGREGATE`, `OPERATOR`, `TYPE`, `COLLATION` and the
/// text search objects.
fn define(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let what = match text(fields, "kind") {
        "OBJECT_OPERATOR" => "CREATE OPERATOR is not allowed",
        "OBJECT_AGGREGATE" => "CREATE AGGREGATE is not allowed",
        "OBJECT_TSPARSER" => "CREATE TEXT SEARCH PARSER is not allowed",
        "OBJECT_TSTEMPLATE" => "CREATE TEXT SEARCH TEMPLATE is not allowed",
        // A base type names its input and output functions; a shell type
        // (`CREATE TYPE t`) has no definition.
        "OBJECT_TYPE" if fields.contains_key("definition") => "CREATE TYPE with support functions is not allowed",
        "OBJECT_TYPE" | "OBJECT_COLLATION" | "OBJECT_TSDICTIONARY" | "OBJECT_TSCONFIGURATION" => return Ok(()),
        other => {
            return never(
                judge,
                &format!(
                    "CREATE {} is not allowed",
                    other.strip_prefix("OBJECT_").unwrap_or(other)
                ),
                "pgmcp does not know what this kind of object does",
            );
        }
    };
    judge.decide(Finding::new(Rule::CreateFunction, what, HIDDEN_CALL_WHY))
}

/// `GRANT`/`REVOKE` of privileges on objects are ordinary, but for the
/// objects whose use another switch governs.
fn grant(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    match text(fields, "objtype") {
        "OBJECT_FDW" | "OBJECT_FOREIGN_SERVER" => judge.decide(Finding::new(
            Rule::CreateExtension,
            "GRANT or REVOKE on a foreign data wrapper or server is not allowed",
            "foreign servers can read files, run programs and reach other servers",
        )),
        "OBJECT_PARAMETER_ACL" => judge.decide(Finding::new(
            Rule::AlterSystem,
            "GRANT or REVOKE on a server parameter is not allowed",
            "it lets a role change settings only a superuser may, ALTER SYSTEM among them",
        )),
        _ => Ok(()),
    }
}

/// `ALTER ... RENAME`: ordinary for tables, columns and the like; the
/// objects another switch governs are judged by it.
fn rename(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    if is_routine(fields) {
        return renamed_function(judge);
    }
    match text(fields, "renameType") {
        "OBJECT_ROLE" | "OBJECT_POLICY" => decide(
            Rule::RoleChanges,
            "renaming a role or a row security policy is not allowed",
            "it changes who may do what",
        ),
        "OBJECT_TRIGGER" | "OBJECT_EVENT_TRIGGER" => {
            decide(Rule::Triggers, "renaming a trigger is not allowed", TRIGGER_WHY)
        }
        "OBJECT_RULE" => decide(Rule::CreateRule, "renaming a rule is not allowed", RULE_WHY),
        "OBJECT_PUBLICATION" => decide(
            Rule::Publications,
            "renaming a publication is not allowed",
            PUBLICATION_WHY,
        ),
        "OBJECT_FDW" | "OBJECT_FOREIGN_SERVER" | "OBJECT_FOREIGN_TABLE" | "OBJECT_SUBSCRIPTION" | "OBJECT_LANGUAGE" => {
            decide(
                Rule::CreateExtension,
                "renaming foreign data, a subscription or a language is not allowed",
                "they can load code, read files, run programs and reach other servers",
            )
        }
        "OBJECT_OPERATOR" | "OBJECT_OPCLASS" | "OBJECT_OPFAMILY" => decide(
            Rule::CreateFunction,
            "renaming an operator, operator class or family is not allowed",
            "it changes which functions comparisons and sorting run",
        ),
        "OBJECT_DATABASE" | "OBJECT_TABLESPACE" | "OBJECT_CONVERSION" => never(
            judge,
            "renaming a database, tablespace or conversion is not allowed",
            "every session and client that names it by its old name breaks",
        ),
        _ => Ok(()),
    }
}

/// `ALTER ... SET SCHEMA`: moving an operator or function changes what a
/// name resolves to.
fn set_schema(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    if is_routine(fields)
        || matches!(
            text(fields, "objectType"),
            "OBJECT_OPERATOR" | "OBJECT_OPCLASS" | "OBJECT_OPFAMILY"
        )
    {
        return judge.decide(Finding::new(
            Rule::CreateFunction,
            "renaming or moving a function or operator is not allowed",
            "protection.blocked_functions matches functions by name, and a moved operator changes what the same SQL runs",
        ));
    }
    match text(fields, "objectType") {
        "OBJECT_EXTENSION" | "OBJECT_FOREIGN_TABLE" => judge.decide(Finding::new(
            Rule::CreateExtension,
            "moving an extension or a foreign table is not allowed",
            "extensions load code into the server, and foreign tables can read files, run programs and reach other servers",
        )),
        "OBJECT_CONVERSION" => never(
            judge,
            "moving a conversion is not allowed",
            "a conversion's C function rewrites the text of every client of its encoding",
        ),
        _ => Ok(()),
    }
}

/// Does a list of `DefElem` options name any of `names`?
fn has_option(options: Option<&Value>, names: &[&str]) -> bool {
    options.and_then(Value::as_array).into_iter().flatten().any(|opt| {
        opt.get("DefElem")
            .and_then(|d| d.get("defname"))
            .and_then(Value::as_str)
            .is_some_and(|n| names.contains(&n))
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Mode, Policy, Routines, check};
    use super::*;

    /// Read-write mode, every switch off but `allowed`: the verdict on `sql`.
    fn verdict(sql: &str, allowed: &[Rule]) -> Option<Rule> {
        let judge = Judge::new(Policy::default().allowing(allowed), Mode::ReadWrite);
        check(&judge, &Routines::default(), sql).err().map(|v| v.rule)
    }

    /// Read-write mode is an allowlist: each kind is ordinary, governed by
    /// its switch (and then allowed by it), or refused by no setting.
    #[test]
    fn read_write_mode_names_every_kind() {
        let ordinary = [
            "CREATE TABLE t (x int)",
            "CREATE INDEX i ON t (x)",
            "CREATE VIEW v AS SELECT 1",
            "CREATE SCHEMA s CREATE TABLE a (x int)",
            "CREATE SEQUENCE s",
            "ALTER SEQUENCE s RESTART",
            "CREATE TYPE c AS (a int)",
            "CREATE TYPE e AS ENUM ('a')",
            "ALTER TYPE e ADD VALUE 'b'",
            "CREATE TYPE r AS RANGE (subtype = int4)",
            "CREATE TYPE shell",
            "CREATE DOMAIN d AS int CHECK (VALUE > 0)",
            "ALTER DOMAIN d SET DEFAULT 1",
            "CREATE TABLE t2 AS SELECT 1",
            "CREATE MATERIALIZED VIEW m AS SELECT 1",
            "COMMENT ON TABLE t IS 'x'",
            "GRANT SELECT ON t TO r",
            "REVOKE ALL ON SCHEMA s FROM r",
            "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO r",
            "CREATE STATISTICS st ON a, b FROM t",
            "ALTER TABLE t ADD COLUMN y int",
            "ALTER TABLE t ALTER COLUMN y SET DEFAULT 0",
            "ALTER TABLE t ALTER COLUMN y SET NOT NULL",
            "ALTER TABLE t ADD CONSTRAINT c CHECK (y > 0)",
            "ALTER TABLE t ALTER CONSTRAINT c DEFERRABLE",
            "ALTER TABLE t VALIDATE CONSTRAINT c",
            "ALTER TABLE t SET (fillfactor = 90)",
            "ALTER TABLE t NO INHERIT p",
            "ALTER TABLE p DETACH PARTITION c",
            "ALTER TABLE t ALTER COLUMN g DROP EXPRESSION",
            "ALTER TABLE t RENAME TO u",
            "ALTER TABLE t SET SCHEMA s",
            "ALTER INDEX i RENAME TO j",
            "CREATE COLLATION c (provider = icu, locale = 'und')",
            "CREATE TEXT SEARCH CONFIGURATION ts (COPY = english)",
            "EXPLAIN SELECT 1",
            "SHOW work_mem",
            "DECLARE c CURSOR FOR SELECT 1",
            "LISTEN ch",
            "NOTIFY ch",
            "SET CONSTRAINTS ALL DEFERRED",
            "CALL p()",
            "SAVEPOINT a",
            "COPY t TO STDOUT",
            "COPY (SELECT 1) TO STDOUT (FORMAT csv)",
        ];
        for sql in ordinary {
            assert_eq!(verdict(sql, &[]), None, "{sql}");
        }
        let governed = [
            (
                "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()",
                Rule::Triggers,
            ),
            (
                "CREATE CONSTRAINT TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()",
                Rule::Triggers,
            ),
            (
                "CREATE SCHEMA s CREATE TABLE a (x int) CREATE TRIGGER tr BEFORE INSERT ON a FOR EACH ROW EXECUTE FUNCTION f()",
                Rule::Triggers,
            ),
            (
                "CREATE EVENT TRIGGER e ON ddl_command_start EXECUTE FUNCTION f()",
                Rule::Triggers,
            ),
            ("ALTER EVENT TRIGGER e DISABLE", Rule::Triggers),
            ("ALTER TABLE t DISABLE TRIGGER ALL", Rule::Triggers),
            ("ALTER TABLE t DISABLE TRIGGER USER", Rule::Triggers),
            ("ALTER TABLE t ENABLE REPLICA TRIGGER tr", Rule::Triggers),
            ("ALTER TRIGGER tr ON t RENAME TO tr2", Rule::Triggers),
            ("ALTER TABLE t DISABLE RULE r", Rule::CreateRule),
            ("ALTER TABLE t DISABLE ROW LEVEL SECURITY", Rule::RoleChanges),
            ("ALTER TABLE t NO FORCE ROW LEVEL SECURITY", Rule::RoleChanges),
            ("ALTER TABLE t OWNER TO r", Rule::RoleChanges),
            ("ALTER SCHEMA s OWNER TO r", Rule::RoleChanges),
            ("ALTER ROLE r RENAME TO q", Rule::RoleChanges),
            ("ALTER TABLE t DROP CONSTRAINT c", Rule::Drop),
            ("ALTER TABLE t ALTER COLUMN y DROP NOT NULL", Rule::Drop),
            ("ALTER DOMAIN d DROP CONSTRAINT c", Rule::Drop),
            ("ALTER TABLE t SET UNLOGGED", Rule::Drop),
            ("ALTER TABLE t ALTER CONSTRAINT fk NOT ENFORCED", Rule::Drop),
            ("ALTER TABLE t SET LOGGED", Rule::Maintenance),
            ("ALTER TABLE t SET TABLESPACE ts", Rule::Maintenance),
            ("ALTER TABLE t SET ACCESS METHOD heap", Rule::Maintenance),
            ("ALTER TABLE ALL IN TABLESPACE a SET TABLESPACE b", Rule::Maintenance),
            ("CREATE PUBLICATION p FOR ALL TABLES", Rule::Publications),
            ("ALTER PUBLICATION p ADD TABLE t", Rule::Publications),
            ("ALTER TABLE t REPLICA IDENTITY FULL", Rule::Publications),
            (
                "ALTER FOREIGN TABLE f OPTIONS (SET program 'id')",
                Rule::CreateExtension,
            ),
            ("ALTER FOREIGN TABLE f ADD COLUMN y int", Rule::CreateExtension),
            ("CREATE LANGUAGE plperlu", Rule::CreateExtension),
            ("ALTER FUNCTION f() DEPENDS ON EXTENSION e", Rule::CreateExtension),
            ("ALTER INDEX i DEPENDS ON EXTENSION e", Rule::CreateExtension),
            ("GRANT USAGE ON FOREIGN SERVER s TO r", Rule::CreateExtension),
            ("GRANT SET ON PARAMETER work_mem TO r", Rule::AlterSystem),
            (
                "CREATE OPERATOR CLASS c FOR TYPE int USING btree AS OPERATOR 1 <",
                Rule::CreateFunction,
            ),
            ("CREATE OPERATOR FAMILY f USING btree", Rule::CreateFunction),
            ("ALTER OPERATOR = (int, int) SET (RESTRICT = f)", Rule::CreateFunction),
            ("ALTER TYPE t SET (RECEIVE = f)", Rule::CreateFunction),
            ("ALTER OPERATOR + (int, int) SET SCHEMA s", Rule::CreateFunction),
            ("CREATE TYPE b (INPUT = f, OUTPUT = g)", Rule::CreateFunction),
            (
                "CREATE TYPE r AS RANGE (subtype = int4, subtype_diff = f)",
                Rule::CreateFunction,
            ),
            (
                "CREATE TEXT SEARCH PARSER p (START = a, GETTOKEN = b, END = c, LEXTYPES = d)",
                Rule::CreateFunction,
            ),
            (
                "CREATE TRANSFORM FOR int LANGUAGE sql (FROM SQL WITH FUNCTION f(internal))",
                Rule::CreateFunction,
            ),
        ];
        for (sql, rule) in governed {
            assert_eq!(verdict(sql, &[]), Some(rule), "{sql}");
            assert_eq!(verdict(sql, &[rule]), None, "{sql} with {:?} allowed", rule.flag());
        }
        // Settings kept for later sessions need their switch and SET's.
        for (sql, rule) in [
            ("ALTER ROLE r SET work_mem = '1GB'", Rule::RoleChanges),
            ("ALTER DATABASE d SET work_mem = '1GB'", Rule::AlterSystem),
        ] {
            assert_eq!(verdict(sql, &[]), Some(rule), "{sql}");
            assert_eq!(verdict(sql, &[rule]), Some(Rule::Set), "{sql}");
            assert_eq!(verdict(sql, &[rule, Rule::Set]), None, "{sql}");
        }
        let unlisted = [
            "CREATE TABLESPACE ts LOCATION '/tmp/ts'",
            "ALTER TABLESPACE ts SET (seq_page_cost = 2)",
            "CREATE DATABASE d",
            "ALTER DATABASE d ALLOW_CONNECTIONS false",
            "ALTER DATABASE d RENAME TO e",
            "ALTER DATABASE d REFRESH COLLATION VERSION",
            "SECURITY LABEL ON TABLE t IS 'x'",
            "CREATE ACCESS METHOD a TYPE TABLE HANDLER heap_tableam_handler",
            "CREATE DEFAULT CONVERSION c FOR 'LATIN1' TO 'UTF8' FROM f",
        ];
        let every_switch: Vec<Rule> = Rule::switches().map(|(rule, _)| rule).collect();
        for sql in unlisted {
            assert_eq!(verdict(sql, &every_switch), Some(Rule::Unlisted), "{sql}");
        }
    }

    /// A statement kind or ALTER TABLE action the table does not name is
    /// refused, whatever the switches: the fallback fails closed.
    #[test]
    fn an_unknown_kind_is_refused() {
        let judge = Judge::new(Policy::permissive(), Mode::ReadWrite);
        let none = Map::new();
        let refused = check_node(&judge, "FutureThingStmt", &none).unwrap_err();
        assert_eq!(refused.rule, Rule::Unlisted);
        assert_eq!(
            refused.message,
            "FUTURE THING is not allowed: pgmcp does not know what this kind of statement does. No setting allows it"
        );
        let mut cmd = Map::new();
        cmd.insert("subtype".into(), Value::from("AT_SomethingNew"));
        let refused = check_node(&judge, "AlterTableCmd", &cmd).unwrap_err();
        assert_eq!(refused.rule, Rule::Unlisted);
        assert!(refused.message.contains("SomethingNew"), "{}", refused.message);
        // Nodes that are not statements are the walk's, not the table's.
        assert_eq!(check_node(&judge, "A_Const", &none), Ok(()));
    }
}
