//! Every row of the reference protection table pgmcp was designed against
//! (each statement, the settings it runs under, the verdict and the message),
//! plus the rules pgmcp adds. A message is checked as a prefix: pgmcp's
//! messages start with the reference text and then say why and which setting
//! allows it.

use super::*;
use crate::guard::routines::tests::pg15;

/// A judge from a short spec: `default`, `all` (every allow flag on), or
/// `+`-joined terms such as `read_only+allow_set`: `read_only` is read-only
/// mode (`server.read_only`, not a switch), the others flags to turn on.
fn judge(spec: &str) -> Judge {
    let mut p = if spec == "all" {
        Policy::permissive()
    } else {
        Policy::default()
    };
    let mut mode = Mode::ReadWrite;
    for term in spec.split('+').filter(|f| !matches!(*f, "default" | "all")) {
        match term {
            "read_only" => mode = Mode::ReadOnly,
            flag => p.set_flag(flag, true).unwrap(),
        }
    }
    Judge::new(p, mode)
}

/// (test name, SQL, policy spec, None = allowed / Some(message prefix))
type Case = (&'static str, &'static str, &'static str, Option<&'static str>);

const REFERENCE: &[Case] = &[
    // Multi-statement detection (always enforced)
    (
        "TwoSelects",
        "SELECT 1; SELECT 2",
        "default",
        Some("multi-statement queries are not allowed: found 2 statements"),
    ),
    (
        "SelectAndDrop",
        "SELECT 1; DROP TABLE users",
        "default",
        Some("multi-statement queries are not allowed: found 2 statements"),
    ),
    (
        "ThreeStatements",
        "SELECT 1; SELECT 2; SELECT 3",
        "default",
        Some("multi-statement queries are not allowed: found 3 statements"),
    ),
    (
        "CannotBeDisabled",
        "SELECT 1; SELECT 2",
        "all",
        Some("multi-statement queries are not allowed: found 2 statements"),
    ),
    ("SingleAllowed", "SELECT 1", "default", None),
    ("EmptyStatements", ";", "default", Some("SQL parse error")),
    ("EmptyStatements2", ";;", "default", Some("SQL parse error")),
    // DROP
    (
        "Drop_Table",
        "DROP TABLE users",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "Drop_Index",
        "DROP INDEX idx_users",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "Drop_Schema",
        "DROP SCHEMA public",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "Drop_Database",
        "DROP DATABASE mydb",
        "default",
        Some("DROP DATABASE is not allowed"),
    ),
    (
        "Drop_CaseInsensitive",
        "drop table users",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "Drop_WithComments",
        "/* comment */ DROP TABLE users",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "Drop_IfExists",
        "DROP TABLE IF EXISTS users",
        "default",
        Some("DROP statements are not allowed"),
    ),
    (
        "Drop_Cascade",
        "DROP TABLE users CASCADE",
        "default",
        Some("DROP statements are not allowed"),
    ),
    ("Drop_Allowed", "DROP TABLE users", "allow_drop", None),
    ("Drop_DatabaseAllowed", "DROP DATABASE mydb", "allow_drop", None),
    // TRUNCATE
    (
        "Truncate_Basic",
        "TRUNCATE users",
        "default",
        Some("TRUNCATE statements are not allowed"),
    ),
    (
        "Truncate_Multiple",
        "TRUNCATE users, orders",
        "default",
        Some("TRUNCATE statements are not allowed"),
    ),
    (
        "Truncate_Cascade",
        "TRUNCATE users CASCADE",
        "default",
        Some("TRUNCATE statements are not allowed"),
    ),
    ("Truncate_Allowed", "TRUNCATE users", "allow_truncate", None),
    // SET
    (
        "Set_SearchPath",
        "SET search_path TO 'public'",
        "default",
        Some("SET statements are not allowed: SET search_path"),
    ),
    (
        "Set_WorkMem",
        "SET work_mem = '256MB'",
        "default",
        Some("SET statements are not allowed: SET work_mem"),
    ),
    ("Set_ResetAll", "RESET ALL", "default", Some("RESET ALL is not allowed")),
    (
        "Set_ResetSingle",
        "RESET work_mem",
        "default",
        Some("RESET statements are not allowed: RESET work_mem"),
    ),
    ("Set_Allowed", "SET work_mem = '256MB'", "allow_set", None),
    ("Set_ResetAllAllowed", "RESET ALL", "allow_set", None),
    ("Set_ResetSingleAllowed", "RESET work_mem", "allow_set", None),
    // DO
    (
        "Do_Simple",
        "DO $$ BEGIN RAISE NOTICE 'hello'; END $$",
        "default",
        Some("DO $$ blocks are not allowed: DO blocks can execute arbitrary SQL bypassing protection checks"),
    ),
    (
        "Do_WithDrop",
        "DO $$ BEGIN EXECUTE 'DROP TABLE users'; END $$",
        "default",
        Some("DO $$ blocks are not allowed"),
    ),
    (
        "Do_WithLanguage",
        "DO LANGUAGE plpgsql $$ BEGIN NULL; END $$",
        "default",
        Some("DO $$ blocks are not allowed"),
    ),
    ("Do_Allowed", "DO $$ BEGIN NULL; END $$", "allow_do", None),
    // COPY FROM (COPY TO a file is blocked by pgmcp's copy-to-file rule: see below)
    (
        "CopyFrom_Basic",
        "COPY users FROM '/tmp/data.csv'",
        "default",
        Some("COPY FROM is not allowed"),
    ),
    (
        "CopyFrom_WithOptions",
        "COPY users FROM '/tmp/data.csv' WITH (FORMAT csv, HEADER true)",
        "default",
        Some("COPY FROM is not allowed"),
    ),
    (
        "CopyFrom_Stdin",
        "COPY users FROM STDIN",
        "default",
        Some("COPY FROM is not allowed"),
    ),
    (
        "CopyFrom_Allowed",
        "COPY users FROM '/tmp/data.csv'",
        "allow_copy_from",
        None,
    ),
    ("CopyTo_Stdout", "COPY users TO STDOUT", "default", None),
    (
        "CopyTo_WithQuery",
        "COPY (SELECT * FROM users) TO STDOUT",
        "default",
        None,
    ),
    // CREATE FUNCTION / PROCEDURE
    (
        "CreateFunction_Basic",
        "CREATE FUNCTION foo() RETURNS void AS $$ BEGIN NULL; END $$ LANGUAGE plpgsql",
        "default",
        Some("CREATE FUNCTION is not allowed: can contain arbitrary SQL bypassing protection checks"),
    ),
    (
        "CreateFunction_OrReplace",
        "CREATE OR REPLACE FUNCTION foo() RETURNS void AS $$ BEGIN NULL; END $$ LANGUAGE plpgsql",
        "default",
        Some("CREATE FUNCTION is not allowed"),
    ),
    (
        "CreateFunction_WithArgs",
        "CREATE FUNCTION add(a int, b int) RETURNS int AS $$ BEGIN RETURN a + b; END $$ LANGUAGE plpgsql",
        "default",
        Some("CREATE FUNCTION is not allowed"),
    ),
    (
        "CreateFunction_SQL",
        "CREATE FUNCTION foo() RETURNS int AS 'SELECT 1' LANGUAGE sql",
        "default",
        Some("CREATE FUNCTION is not allowed"),
    ),
    (
        "CreateProcedure_Basic",
        "CREATE PROCEDURE do_stuff() LANGUAGE plpgsql AS $$ BEGIN NULL; END $$",
        "default",
        Some("CREATE PROCEDURE is not allowed: can contain arbitrary SQL bypassing protection checks"),
    ),
    (
        "CreateProcedure_OrReplace",
        "CREATE OR REPLACE PROCEDURE do_stuff() LANGUAGE plpgsql AS $$ BEGIN NULL; END $$",
        "default",
        Some("CREATE PROCEDURE is not allowed"),
    ),
    (
        "CreateFunction_Allowed",
        "CREATE FUNCTION foo() RETURNS void AS $$ BEGIN NULL; END $$ LANGUAGE plpgsql",
        "allow_create_function",
        None,
    ),
    (
        "CreateProcedure_Allowed",
        "CREATE PROCEDURE do_stuff() LANGUAGE plpgsql AS $$ BEGIN NULL; END $$",
        "allow_create_function",
        None,
    ),
    // PREPARE
    (
        "Prepare_Basic",
        "PREPARE stmt AS SELECT 1",
        "default",
        Some(
            "PREPARE statements are not allowed: prepared statements can be executed later bypassing protection checks",
        ),
    ),
    (
        "Prepare_WithParams",
        "PREPARE stmt(int) AS SELECT * FROM users WHERE id = $1",
        "default",
        Some("PREPARE statements are not allowed"),
    ),
    (
        "Prepare_WithDML",
        "PREPARE stmt AS DELETE FROM users",
        "default",
        Some("PREPARE statements are not allowed"),
    ),
    ("Prepare_Allowed", "PREPARE stmt AS SELECT 1", "allow_prepare", None),
    // EXPLAIN (always checks the inner statement)
    ("Explain_SelectAllowed", "EXPLAIN SELECT * FROM users", "default", None),
    (
        "Explain_AnalyzeSelectAllowed",
        "EXPLAIN ANALYZE SELECT * FROM users",
        "default",
        None,
    ),
    (
        "Explain_DropBlocked",
        "EXPLAIN DROP TABLE users",
        "default",
        Some("SQL parse error"),
    ),
    (
        "Explain_AnalyzeDropBlocked",
        "EXPLAIN ANALYZE DROP TABLE users",
        "default",
        Some("SQL parse error"),
    ),
    (
        "Explain_DeleteWithoutWhereBlocked",
        "EXPLAIN DELETE FROM users",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "Explain_AnalyzeDeleteWithoutWhereBlocked",
        "EXPLAIN ANALYZE DELETE FROM users",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "Explain_DeleteWithWhereAllowed",
        "EXPLAIN ANALYZE DELETE FROM users WHERE id = 1",
        "default",
        None,
    ),
    (
        "Explain_UpdateWithoutWhereBlocked",
        "EXPLAIN ANALYZE UPDATE users SET active = false",
        "default",
        Some("UPDATE without WHERE clause is not allowed"),
    ),
    (
        "Explain_UpdateWithWhereAllowed",
        "EXPLAIN ANALYZE UPDATE users SET active = false WHERE id = 1",
        "default",
        None,
    ),
    (
        "Explain_TruncateBlocked",
        "EXPLAIN ANALYZE TRUNCATE users",
        "default",
        Some("SQL parse error"),
    ),
    (
        "Explain_DropAllowedWhenConfigured",
        "EXPLAIN DROP TABLE users",
        "allow_drop",
        Some("SQL parse error"),
    ),
    (
        "Explain_AnalyzeInsertAllowed",
        "EXPLAIN ANALYZE INSERT INTO users (name) VALUES ('test')",
        "default",
        None,
    ),
    (
        "Explain_CTEDeleteWithoutWhere",
        "EXPLAIN ANALYZE WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    // DELETE/UPDATE WHERE
    (
        "DeleteWithoutWhere",
        "DELETE FROM users",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    ("DeleteWithWhere", "DELETE FROM users WHERE id = 1", "default", None),
    (
        "DeleteWithComplexWhere",
        "DELETE FROM users WHERE id IN (SELECT id FROM banned)",
        "default",
        None,
    ),
    (
        "DeleteWithExists",
        "DELETE FROM users WHERE EXISTS (SELECT 1 FROM banned WHERE banned.uid = users.id)",
        "default",
        None,
    ),
    (
        "DeleteWithoutWhere_Allowed",
        "DELETE FROM users",
        "allow_delete_without_where",
        None,
    ),
    (
        "UpdateWithoutWhere",
        "UPDATE users SET active = false",
        "default",
        Some("UPDATE without WHERE clause is not allowed"),
    ),
    (
        "UpdateWithWhere",
        "UPDATE users SET active = false WHERE id = 1",
        "default",
        None,
    ),
    (
        "UpdateWithSubqueryWhere",
        "UPDATE users SET active = false WHERE id IN (SELECT id FROM active_users)",
        "default",
        None,
    ),
    (
        "UpdateWithoutWhere_Allowed",
        "UPDATE users SET active = false",
        "allow_update_without_where",
        None,
    ),
    // Read-only mode
    (
        "ReadOnly_BlocksSetTransactionReadOnly",
        "SET default_transaction_read_only = off",
        "read_only+allow_set",
        Some(
            "SET default_transaction_read_only is blocked in read-only mode: cannot change transaction read-only setting",
        ),
    ),
    (
        "ReadOnly_BlocksSetTransactionReadOnly2",
        "SET transaction_read_only = false",
        "read_only+allow_set",
        Some("SET transaction_read_only is blocked in read-only mode: cannot change transaction read-only setting"),
    ),
    (
        "ReadOnly_BlocksResetAll",
        "RESET ALL",
        "read_only+allow_set",
        Some("RESET ALL is blocked in read-only mode: could disable read-only transaction setting"),
    ),
    (
        "ReadOnly_BlocksResetTransactionReadOnly",
        "RESET default_transaction_read_only",
        "read_only+allow_set",
        Some("RESET default_transaction_read_only is blocked in read-only mode"),
    ),
    (
        "ReadOnly_AllowsResetOther",
        "RESET work_mem",
        "read_only+allow_set",
        None,
    ),
    (
        "ReadOnly_BlocksBeginReadWrite",
        "BEGIN READ WRITE",
        "read_only",
        Some("BEGIN READ WRITE is blocked in read-only mode: cannot start a read-write transaction"),
    ),
    (
        "ReadOnly_BlocksStartTransactionReadWrite",
        "START TRANSACTION READ WRITE",
        "read_only",
        Some("BEGIN READ WRITE is blocked in read-only mode: cannot start a read-write transaction"),
    ),
    // The reference allowed these two; read-only mode is an allowlist of
    // statements that read, and each call runs in its own transaction
    // anyway.
    (
        "ReadOnly_RefusesBeginReadOnly",
        "BEGIN READ ONLY",
        "read_only",
        Some("BEGIN, COMMIT or another transaction statement"),
    ),
    (
        "ReadOnly_RefusesBeginDefault",
        "BEGIN",
        "read_only",
        Some("BEGIN, COMMIT or another transaction statement"),
    ),
    (
        "ReadOnly_AllowsOtherSet",
        "SET search_path = 'public'",
        "read_only+allow_set",
        None,
    ),
    (
        "ReadOnly_SetBlockedTakesPriority",
        "SET default_transaction_read_only = off",
        "read_only",
        Some("SET default_transaction_read_only is blocked in read-only mode"),
    ),
    // Allowed statements
    ("AllowSelect", "SELECT * FROM users", "default", None),
    (
        "AllowSelectComplex",
        "WITH cte AS (SELECT * FROM users) SELECT * FROM cte WHERE id > 1",
        "default",
        None,
    ),
    (
        "AllowInsert",
        "INSERT INTO users (name) VALUES ('test')",
        "default",
        None,
    ),
    (
        "AllowInsertReturning",
        "INSERT INTO users (name) VALUES ('test') RETURNING *",
        "default",
        None,
    ),
    (
        "AllowInsertOnConflict",
        "INSERT INTO users (id, name) VALUES (1, 'test') ON CONFLICT (id) DO UPDATE SET name = 'test'",
        "default",
        None,
    ),
    ("AllowCreateTable", "CREATE TABLE test (id int)", "default", None),
    (
        "AllowAlterTable",
        "ALTER TABLE users ADD COLUMN email text",
        "default",
        None,
    ),
    ("AllowExplain", "EXPLAIN ANALYZE SELECT * FROM users", "default", None),
    ("AllowGrant", "GRANT SELECT ON users TO readonly_user", "default", None),
    // Complex SQL / edge cases
    (
        "CTEWithDelete",
        "WITH deleted AS (DELETE FROM users WHERE id = 1 RETURNING *) SELECT * FROM deleted",
        "default",
        None,
    ),
    (
        "CTEWithDeleteNoWhere",
        "WITH deleted AS (DELETE FROM users RETURNING *) SELECT * FROM deleted",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "CTEWithUpdateNoWhere",
        "WITH updated AS (UPDATE users SET active = false RETURNING *) SELECT * FROM updated",
        "default",
        Some("UPDATE without WHERE clause is not allowed"),
    ),
    (
        "CTEWithUpdateWithWhere",
        "WITH updated AS (UPDATE users SET active = false WHERE id = 1 RETURNING *) SELECT * FROM updated",
        "default",
        None,
    ),
    (
        "CTENestedDML",
        "WITH a AS (WITH b AS (DELETE FROM users RETURNING *) SELECT * FROM b) SELECT * FROM a",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "CTEOnInsert",
        "WITH src AS (DELETE FROM old_users RETURNING *) INSERT INTO archive SELECT * FROM src",
        "default",
        Some("DELETE without WHERE clause is not allowed"),
    ),
    (
        "CTEOnUpdate",
        "WITH src AS (SELECT id FROM banned) UPDATE users SET active = false WHERE id IN (SELECT id FROM src)",
        "default",
        None,
    ),
    (
        "CTEOnDelete",
        "WITH src AS (SELECT id FROM banned) DELETE FROM users WHERE id IN (SELECT id FROM src)",
        "default",
        None,
    ),
    (
        "CTESelectOnly",
        "WITH counts AS (SELECT department, COUNT(*) as cnt FROM employees GROUP BY department) SELECT * FROM counts",
        "default",
        None,
    ),
    (
        "CTEMultipleDML",
        "WITH d AS (DELETE FROM old_users WHERE expired = true RETURNING *), i AS (INSERT INTO archive SELECT * FROM d RETURNING *) SELECT * FROM i",
        "default",
        None,
    ),
    (
        "NestedSubquerySelect",
        "SELECT * FROM (SELECT * FROM (SELECT id FROM users) AS a) AS b",
        "default",
        None,
    ),
    (
        "ComplexJoins",
        "SELECT u.*, o.* FROM users u JOIN orders o ON u.id = o.user_id LEFT JOIN items i ON o.id = i.order_id WHERE u.active = true",
        "default",
        None,
    ),
    (
        "WindowFunction",
        "SELECT id, name, ROW_NUMBER() OVER (PARTITION BY department ORDER BY salary DESC) FROM employees",
        "default",
        None,
    ),
    (
        "RecursiveCTE",
        "WITH RECURSIVE tree AS (SELECT id, parent_id FROM categories WHERE parent_id IS NULL UNION ALL SELECT c.id, c.parent_id FROM categories c JOIN tree t ON c.parent_id = t.id) SELECT * FROM tree",
        "default",
        None,
    ),
    (
        "JSONBQuery",
        r#"SELECT data->>'name' AS name, data->'address'->>'city' AS city FROM users WHERE data @> '{"active": true}'"#,
        "default",
        None,
    ),
    (
        "ArrayQuery",
        "SELECT * FROM users WHERE tags @> ARRAY['admin']::text[]",
        "default",
        None,
    ),
    (
        "LateralJoin",
        "SELECT * FROM users u, LATERAL (SELECT * FROM orders o WHERE o.user_id = u.id ORDER BY created_at DESC LIMIT 5) recent_orders",
        "default",
        None,
    ),
    ("ParseError", "NOT VALID SQL @#$", "default", Some("SQL parse error")),
    ("AllProtectionsAllowed", "DROP TABLE users", "all", None),
    (
        "SQLInjection_UnionBased",
        "SELECT * FROM users WHERE id = 1 UNION SELECT * FROM pg_shadow",
        "default",
        None,
    ),
    (
        "SQLInjection_CommentBased",
        "SELECT * FROM users -- WHERE admin = true",
        "default",
        None,
    ),
    (
        "SQLInjection_MultiStatement",
        "SELECT * FROM users; DROP TABLE users",
        "default",
        Some("multi-statement queries are not allowed: found 2 statements"),
    ),
    // The reference expects "found 3" here, but a trailing comment is not a
    // statement: PostgreSQL's grammar drops empty statements.
    (
        "SQLInjection_Stacked",
        "SELECT 1; DELETE FROM users; --",
        "default",
        Some("multi-statement queries are not allowed: found 2 statements"),
    ),
    ("EmptySQL", "", "default", Some("SQL parse error")),
    ("WhitespaceOnlySQL", "   ", "default", Some("SQL parse error")),
];

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
            "LOAD is not allowed: it loads a shared library into the server process. Set protection.allow_load to true to allow it",
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

fn run(cases: &[Case]) {
    let facts = pg15();
    let mut failures = Vec::new();
    for (name, sql, spec, expected) in cases {
        let got = check(&judge(spec), &facts, sql);
        let ok = match (&got, expected) {
            (Ok(_), None) => true,
            (Err(v), Some(prefix)) => v.message.starts_with(prefix),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{name}: {sql:?} [{spec}]\n   want {expected:?}\n   got  {:?}",
                got.map(|_| "allowed")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn reference_protection_table() {
    run(REFERENCE);
}

#[test]
fn rules_beyond_the_reference_table() {
    run(BEYOND);
}

#[test]
fn every_rule_has_a_stable_name() {
    for rule in Rule::ALL {
        assert_eq!(Rule::from_name(rule.name()), Some(rule));
    }
}

/// The checker is shared by concurrent calls: every thread gets its own verdict.
#[test]
fn concurrent_checks() {
    let policy = Judge::new(Policy::default(), Mode::ReadWrite);
    let facts = pg15();
    std::thread::scope(|s| {
        for i in 0..10 {
            let (policy, facts) = (&policy, &facts);
            s.spawn(move || {
                for j in 0..50 {
                    let (sql, allowed) = if (i + j) % 2 == 0 {
                        (format!("SELECT {j}"), true)
                    } else {
                        ("DROP TABLE t".to_owned(), false)
                    };
                    assert_eq!(check(policy, facts, &sql).is_ok(), allowed, "{sql}");
                }
            });
        }
    });
}

/// Leaving the role pgmcp switched to (`connection.role`) is a role change,
/// refused even when `allow_set` lets other settings through.
const ROLE_SWITCHES: &[Case] = &[
    (
        // Without allow_set it is refused as a setting first, as the corpus records.
        "SetRole",
        "SET ROLE postgres",
        "default",
        Some("SET statements are not allowed: SET role"),
    ),
    (
        "SetRoleAllowSet",
        "SET ROLE postgres",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetLocalRole",
        "SET LOCAL ROLE postgres",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetSessionRole",
        "SET SESSION ROLE postgres",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleNone",
        "SET ROLE NONE",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleTo",
        "SET role TO 'postgres'",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleDefault",
        "SET role TO DEFAULT",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleQuotedUpper",
        "SET \"ROLE\" = 'postgres'",
        "allow_set",
        Some("SET ROLE is not allowed"),
    ),
    (
        "ResetRole",
        "RESET ROLE",
        "allow_set",
        Some("RESET role is not allowed"),
    ),
    (
        "SetSessionAuthorization",
        "SET SESSION AUTHORIZATION postgres",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "SetSessionAuthorizationDefault",
        "SET SESSION AUTHORIZATION DEFAULT",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "SetLocalSessionAuthorization",
        "SET LOCAL SESSION AUTHORIZATION postgres",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "ResetSessionAuthorization",
        "RESET SESSION AUTHORIZATION",
        "allow_set",
        Some("RESET session_authorization is not allowed"),
    ),
    (
        "SetSessionAuthorizationByName",
        "SET session_authorization = 'postgres'",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "RoleMessageNamesFlag",
        "SET ROLE postgres",
        "allow_set",
        Some(
            "SET role is not allowed: it switches the role queries run as, leaving the one pgmcp set (connection.role). Set protection.allow_role_changes to true to allow it",
        ),
    ),
    (
        "SetConfigRole",
        "SELECT set_config('role', 'postgres', true)",
        "allow_set",
        Some("function set_config() is not allowed"),
    ),
    // allow_role_changes opens it; allow_set still governs it as a setting.
    (
        "SetRoleAllowed",
        "SET ROLE postgres",
        "allow_set+allow_role_changes",
        None,
    ),
    ("ResetRoleAllowed", "RESET ROLE", "allow_set+allow_role_changes", None),
    (
        "SessionAuthorizationAllowed",
        "SET SESSION AUTHORIZATION postgres",
        "allow_set+allow_role_changes",
        None,
    ),
    (
        "SetRoleNeedsAllowSetToo",
        "SET ROLE postgres",
        "allow_role_changes",
        Some("SET statements are not allowed: SET role"),
    ),
    // Other settings are untouched by the role rule.
    ("SetOtherAllowed", "SET work_mem = '64MB'", "allow_set", None),
    (
        "SetOtherRefused",
        "SET work_mem = '64MB'",
        "default",
        Some("SET statements are not allowed"),
    ),
    ("ResetAllNotARoleChange", "RESET ALL", "allow_set", None),
];

#[test]
fn role_switches_need_allow_role_changes() {
    run(ROLE_SWITCHES);
}
