//! Statements on schema objects whose use another switch governs: renaming
//! or moving them (`ALTER ... RENAME`, `SET SCHEMA`), their owner, `GRANT`
//! on them, and the objects `DefineStmt` creates (operators, aggregates,
//! types with support functions). Apart from the statement table because
//! each reads which kind of object the statement names.

use serde_json::{Map, Value};

use super::{HIDDEN_CALL_WHY, PUBLICATION_WHY, RULE_WHY, TRIGGER_WHY, is_routine, never, text};
use crate::guard::{Finding, Judge, Rule, Violation};

/// `ALTER FUNCTION ... RENAME TO` or `OWNER TO`: the blocked functions are
/// matched by name.
pub(super) fn renamed_function(judge: &Judge) -> Result<(), Violation> {
    judge.decide(Finding::new(
        Rule::CreateFunction,
        "renaming or moving a function is not allowed",
        "protection.blocked_functions matches functions by name",
    ))
}

/// `OWNER TO`: who owns an object decides who may change or drop it.
pub(super) fn owner(judge: &Judge) -> Result<(), Violation> {
    judge.decide(Finding::new(
        Rule::RoleChanges,
        "changing an object's owner is not allowed",
        "the owner may change, drop and grant the object: it changes who may do what",
    ))
}

/// `DefineStmt`: `CREATE AGGREGATE`, `OPERATOR`, `TYPE`, `COLLATION` and the
/// text search objects.
pub(super) fn define(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
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
pub(super) fn grant(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
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
pub(super) fn rename(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
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
pub(super) fn set_schema(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
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
