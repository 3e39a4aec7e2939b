//! What each PostgreSQL statement and clause is, for the rules: one `match`
//! on the node type, reporting to the judge every rule the node falls under,
//! in order (the judge refuses the first one not allowed). Each arm reads the
//! node's fields as libpg_query's JSON spells them (fields at their default
//! value, such as `false` or `0`, are left out of the JSON).

mod alter_table;
mod objects;
mod rows;
mod settings;

use serde_json::{Map, Value};

use self::alter_table::alter_table_cmd;
use self::objects::{define, grant, owner, rename, renamed_function, set_schema};
pub(super) use self::rows::copies_to_client;
use self::rows::{copy, insert, update};
pub(super) use self::settings::check_read_only_set;
use self::settings::{transaction, variable_set};
use super::{Finding, Judge, Rule, Violation};

fn text<'a>(fields: &'a Map<String, Value>, key: &str) -> &'a str {
    fields.get(key).and_then(Value::as_str).unwrap_or("")
}

fn truthy(fields: &Map<String, Value>, key: &str) -> bool {
    fields.get(key).and_then(Value::as_bool).unwrap_or(false)
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
        "DeleteStmt" if !fields.contains_key("whereClause") => judge.decide(Finding::delete_without_where())?,
        "DeleteStmt" => {}
        "MergeStmt" => judge.decide(Finding::merge())?,
        "CopyStmt" => copy(judge, fields)?,
        "TruncateStmt" => judge.decide(Finding::truncate())?,
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
            judge.decide(Finding::create_function(what))?;
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
        "PrepareStmt" => judge.decide(Finding::prepare("PREPARE statements are not allowed"))?,
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
        "LoadStmt" => judge.decide(Finding::load("LOAD is not allowed"))?,
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
        judge.decide(Finding::create_or_replace())?;
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
