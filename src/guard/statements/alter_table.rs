//! `ALTER TABLE`'s actions (`AlterTableCmd`, shared by `ALTER INDEX`, `VIEW`,
//! `SEQUENCE`, `MATERIALIZED VIEW` and `TYPE ... ADD ATTRIBUTE`): each named,
//! as ordinary, under a rule, or refused. Apart from the statement table
//! because it is a table of its own, keyed by the action's subtype.

use serde_json::{Map, Value};

use super::objects::owner;
use super::{CONSTRAINT_WHY, FOREIGN_OPTIONS_WHY, never, text};
use crate::guard::{Finding, Judge, Rule, Violation};

/// One action of `ALTER TABLE` (also `ALTER INDEX`, `VIEW`, `SEQUENCE`,
/// `MATERIALIZED VIEW` and `TYPE ... ADD ATTRIBUTE`, which share it): each
/// is named, as ordinary, under a rule, or refused.
pub(super) fn alter_table_cmd(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
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
        "AT_DropColumn" => judge.decide(Finding::drop_column()),
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
        "AT_AlterColumnType" | "AT_SetExpression" => judge.decide(Finding::column_rewrite(
            "ALTER TABLE ... ALTER COLUMN ... TYPE (or SET EXPRESSION) is not allowed",
        )),
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
