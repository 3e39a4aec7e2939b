//! The rules pgmcp adds to the reference table's, each row a statement, the
//! settings it runs under, and the verdict and start of the message. Apart
//! from `reference`, which stays as it was given.

use super::{Case, run};

/// Rules pgmcp adds to the reference table's.
const BEYOND: &[Case] = &[
    (
        "CopyTo_File",
        "COPY users TO '/tmp/data.csv'",
        "default",
        Some(
            "COPY TO a server file or program is not allowed: it writes files or runs shell commands on the database server. COPY ... TO STDOUT is allowed; set protection.allow_copy_to_file to true to allow the rest",
        ),
    ),
    (
        "CopyTo_Program",
        "COPY (SELECT 1) TO PROGRAM 'id'",
        "default",
        Some("COPY TO a server file or program is not allowed"),
    ),
    (
        "CopyTo_FileAllowed",
        "COPY users TO '/tmp/data.csv'",
        "allow_copy_to_file",
        None,
    ),
    (
        "CopyTo_QueryWithDelete",
        "COPY (DELETE FROM users RETURNING *) TO STDOUT",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "AlterSystem",
        "ALTER SYSTEM SET work_mem = '1GB'",
        "default",
        Some(
            "ALTER SYSTEM is not allowed: it changes the server's configuration for every session. Set protection.allow_alter_system to true to allow it",
        ),
    ),
    (
        "Load",
        "LOAD 'auto_explain'",
        "default",
        Some(
            "LOAD is not allowed: extensions and shared libraries are native code loaded into the server process. Set protection.allow_load to true to allow it",
        ),
    ),
    (
        "CreateRule",
        "CREATE RULE r AS ON SELECT TO t DO INSTEAD NOTHING",
        "default",
        Some(
            "CREATE RULE is not allowed: rules rewrite later statements and can hide writes behind reads. Set protection.allow_create_rule to true to allow it",
        ),
    ),
    (
        "CreateRule_ActionChecked",
        "CREATE RULE r AS ON INSERT TO t DO ALSO DELETE FROM audit",
        "allow_create_rule",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "SetTransactionReadWrite",
        "SET TRANSACTION READ WRITE",
        "read_only+allow_set",
        Some("SET TRANSACTION READ WRITE is blocked in read-only mode: cannot start a read-write transaction"),
    ),
    (
        "SetSessionReadWrite",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "read_only+allow_set",
        Some("SET SESSION CHARACTERISTICS READ WRITE is blocked in read-only mode"),
    ),
    (
        "SetTransactionReadOnlyAllowed",
        "SET TRANSACTION READ ONLY",
        "read_only+allow_set",
        None,
    ),
    (
        "AlterRoleSetReadOnly",
        "ALTER ROLE app SET default_transaction_read_only = off",
        "read_only+allow_role_changes",
        Some("SET default_transaction_read_only is blocked in read-only mode"),
    ),
    (
        "Function_ReadFile",
        "SELECT pg_read_file('/etc/passwd')",
        "default",
        Some(
            "function pg_read_file() is not allowed: it reads files on the database server. Remove it from protection.blocked_functions to allow it",
        ),
    ),
    (
        "Function_Qualified",
        "SELECT pg_catalog.pg_read_file('/etc/passwd')",
        "default",
        Some("function pg_read_file() is not allowed"),
    ),
    (
        "Function_Quoted",
        r#"SELECT "pg_read_file"('/etc/passwd')"#,
        "default",
        Some("function pg_read_file() is not allowed"),
    ),
    (
        "Function_InFrom",
        "SELECT * FROM pg_ls_dir('.')",
        "default",
        Some("function pg_ls_dir() is not allowed: it lists files on the database server"),
    ),
    (
        "Function_InWhere",
        "SELECT 1 WHERE pg_terminate_backend(1234)",
        "default",
        Some("function pg_terminate_backend() is not allowed: it stops other sessions' work"),
    ),
    (
        "Function_Lateral",
        "SELECT * FROM t, LATERAL lo_import('/etc/passwd') x",
        "default",
        Some("function lo_import() is not allowed"),
    ),
    (
        "Function_RowsFrom",
        "SELECT * FROM ROWS FROM (generate_series(1,2), pg_ls_waldir())",
        "default",
        Some("function pg_ls_waldir() is not allowed"),
    ),
    (
        "Function_Nested",
        "SELECT length(upper(pg_read_binary_file('x')::text))",
        "default",
        Some("function pg_read_binary_file() is not allowed"),
    ),
    (
        "Function_Default",
        "CREATE TABLE t (x text DEFAULT pg_read_file('/etc/hostname'))",
        "default",
        Some("function pg_read_file() is not allowed"),
    ),
    (
        "Function_Dblink",
        "SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(x int)",
        "default",
        Some("function dblink() is not allowed: it opens connections to other databases"),
    ),
    (
        "Function_SetConfig",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "default",
        Some("function set_config() is not allowed: it changes session settings, which protection.allow_set governs"),
    ),
    (
        "Function_QueryToXml",
        "SELECT query_to_xml('DELETE FROM users RETURNING 1', true, false, '')",
        "default",
        Some("function query_to_xml() is not allowed: it runs SQL given as text, which the guard cannot check"),
    ),
    (
        "Function_InCte",
        "WITH x AS (SELECT pg_reload_conf()) SELECT * FROM x",
        "default",
        Some("function pg_reload_conf() is not allowed: it controls the database server"),
    ),
    (
        "Function_Allowed",
        "SELECT lower('X'), now(), pg_sleep(0)",
        "default",
        None,
    ),
    (
        "Function_UnblockedWhenListEmpty",
        "SELECT pg_read_file('x')",
        "all",
        None,
    ),
    (
        "DropRole",
        "DROP ROLE app",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "DropOwned",
        "DROP OWNED BY app",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "DropColumn",
        "ALTER TABLE t DROP COLUMN c",
        "default",
        Some("ALTER TABLE ... DROP COLUMN is not allowed"),
    ),
    ("AddColumnAllowed", "ALTER TABLE t ADD COLUMN c int", "default", None),
    (
        "Merge",
        "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE",
        "default",
        Some(
            "MERGE is not allowed: its UPDATE and DELETE actions can change every row, with no WHERE clause to check. Set protection.allow_merge to true to allow it",
        ),
    ),
    (
        "MergeAllowed",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET x = s.x",
        "allow_merge",
        None,
    ),
    (
        "UpdatePgSettings",
        "UPDATE pg_settings SET setting = 'off' WHERE name = 'default_transaction_read_only'",
        "default",
        Some("UPDATE pg_settings is not allowed"),
    ),
    (
        "CreateOperator",
        "CREATE OPERATOR public.<<< (RIGHTARG = text, FUNCTION = pg_read_file)",
        "default",
        Some("CREATE OPERATOR is not allowed: it runs a function through syntax the guard does not see as a call"),
    ),
    (
        "CreateAggregate",
        "CREATE AGGREGATE a(int) (sfunc = int4pl, stype = int)",
        "default",
        Some("CREATE AGGREGATE is not allowed"),
    ),
    (
        "CreateCast",
        "CREATE CAST (text AS int) WITH FUNCTION f(text)",
        "default",
        Some("CREATE CAST ... WITH FUNCTION is not allowed"),
    ),
    (
        "AlterFunction",
        "ALTER FUNCTION f() SECURITY DEFINER",
        "default",
        Some("ALTER FUNCTION is not allowed"),
    ),
    (
        "RenameFunction",
        "ALTER FUNCTION pg_catalog.pg_read_file(text) RENAME TO innocent_read",
        "default",
        Some("renaming or moving a function is not allowed"),
    ),
    ("RenameTableAllowed", "ALTER TABLE a RENAME TO b", "default", None),
    (
        "CreateExtension",
        "CREATE EXTENSION file_fdw",
        "default",
        Some("extensions, foreign data and subscriptions are not allowed"),
    ),
    (
        "CreateForeignTable",
        "CREATE FOREIGN TABLE f (l text) SERVER files OPTIONS (program 'id')",
        "default",
        Some("extensions, foreign data and subscriptions are not allowed"),
    ),
    (
        "CreateExtensionAllowed",
        "CREATE EXTENSION hstore",
        "allow_create_extension",
        None,
    ),
    (
        "PrepareTransaction",
        "PREPARE TRANSACTION 'x'",
        "default",
        Some("PREPARE TRANSACTION is not allowed"),
    ),
    (
        "Function_ReplicationSlot",
        "SELECT pg_create_physical_replication_slot('s', true)",
        "default",
        Some(
            "function pg_create_physical_replication_slot() is not allowed: it changes replication or WAL state on the server",
        ),
    ),
    (
        "Function_Collations",
        "SELECT pg_import_system_collations('public')",
        "default",
        Some("function pg_import_system_collations() is not allowed: it writes into the system catalog"),
    ),
    (
        "Function_StatReset",
        "SELECT pg_stat_reset()",
        "default",
        Some("function pg_stat_reset() is not allowed: it resets the server's statistics"),
    ),
    (
        "CallBlocked",
        "CALL pg_read_file('/etc/passwd')",
        "default",
        Some("function pg_read_file() is not allowed"),
    ),
    ("CallAllowed", "CALL my_proc(1)", "default", None),
    (
        "TsRewrite",
        "SELECT ts_rewrite('a'::tsquery, 'SELECT 1')",
        "default",
        Some("function ts_rewrite() is not allowed: it runs SQL given as text"),
    ),
    (
        "Crosstab",
        "SELECT * FROM crosstab('SELECT 1') AS t(a text)",
        "default",
        Some("function crosstab() is not allowed: it runs SQL given as text"),
    ),
    (
        "Subscription",
        "CREATE SUBSCRIPTION s CONNECTION 'host=x' PUBLICATION p WITH (connect = false)",
        "default",
        Some("extensions, foreign data and subscriptions are not allowed"),
    ),
    (
        "AlterSystemWithItsFlagOnly",
        "ALTER SYSTEM SET work_mem = '1GB'",
        "allow_alter_system",
        None,
    ),
    (
        "AlterSystemReadOnlySetting",
        "ALTER SYSTEM SET default_transaction_read_only = off",
        "read_only+allow_alter_system",
        Some("SET default_transaction_read_only is blocked in read-only mode"),
    ),
    (
        "CreateRoleSuperuser",
        "CREATE ROLE r SUPERUSER",
        "default",
        Some("changing roles, role membership or row security policies is not allowed"),
    ),
    (
        "GrantRole",
        "GRANT pg_execute_server_program TO r",
        "default",
        Some("changing roles, role membership or row security policies is not allowed"),
    ),
    ("AlterRole", "ALTER ROLE r SUPERUSER", "default", Some("changing roles")),
    ("AlterRoleAllowed", "ALTER ROLE r SUPERUSER", "allow_role_changes", None),
    (
        "GrantTableAllowed",
        "GRANT SELECT ON users TO readonly_user",
        "default",
        None,
    ),
    // In read-only mode a write is refused as a write: the switch of its
    // kind would only lead to that refusal, so it is not named.
    (
        "ReadOnly_DropIsAWrite",
        "DROP TABLE users",
        "read_only",
        Some("DROP is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_DeleteIsAWrite",
        "DELETE FROM users",
        "read_only",
        Some("DELETE is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_DeleteInACteIsAWrite",
        "WITH d AS (DELETE FROM users RETURNING id) SELECT * FROM d",
        "read_only",
        Some("DELETE is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_TruncateIsAWrite",
        "TRUNCATE users",
        "read_only",
        Some("TRUNCATE is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_AlterDropColumnIsAWrite",
        "ALTER TABLE users DROP COLUMN email",
        "read_only",
        Some("ALTER TABLE is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_CreateFunctionIsAWrite",
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "read_only",
        Some("CREATE FUNCTION is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_CopyToFileIsAWrite",
        "COPY users TO '/tmp/users.csv'",
        "read_only",
        Some("COPY is not allowed in read-only mode"),
    ),
    (
        "ReadOnly_LockIsRefusedAsAStatementThatDoesNotRead",
        "LOCK TABLE users",
        "read_only",
        Some("LOCK is not allowed in read-only mode"),
    ),
    // Read-only mode runs SET with its switch on, so its switch is named.
    (
        "ReadOnly_SetNamesItsSwitch",
        "SET work_mem = '64MB'",
        "read_only",
        Some("SET statements are not allowed: SET work_mem"),
    ),
    (
        "ReadOnly_SetWithItsSwitchRuns",
        "SET work_mem = '64MB'",
        "read_only+allow_set",
        None,
    ),
    // What no setting allows is named first, inside a write too.
    (
        "ReadOnly_BlockedFunctionInAWrite",
        "DELETE FROM users WHERE id = length(pg_read_file('/etc/passwd'))",
        "read_only",
        Some("function pg_read_file() is not allowed"),
    ),
    (
        "ReadOnly_BlockedFunctionInCreateTableAs",
        "CREATE TABLE t AS SELECT pg_read_file('/etc/passwd')",
        "read_only",
        Some("function pg_read_file() is not allowed"),
    ),
];

#[test]
fn rules_beyond_the_reference_table() {
    run(BEYOND);
}
