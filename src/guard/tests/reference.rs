//! The reference protection table pgmcp was designed against, row by row:
//! each statement, the settings it runs under, the verdict and the start of
//! the message. Apart from the rules pgmcp adds (`additions`) so the reference
//! stays as it was given.

use super::{Case, run};

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

#[test]
fn reference_protection_table() {
    run(REFERENCE);
}
