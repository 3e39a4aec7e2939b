//! Attacks on `confirm` (a person accepts a model's writing statement
//! before it runs), end to end on the real binary: the model controls only
//! a tool's arguments (and the order of its calls); after each attack the
//! database is read back with psql, rusqlite or the file system. Attacks
//! pgmcp resists are kept as regression tests; the ones that got through
//! when they were written assert the safe behaviour, and fail until fixed
//! (each says so, with the reproduction).

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::python_sdk::{confirm_session, shown, stateless_meta};
use crate::support::served::write_config;
use crate::support::stdio::{McpProcess, raw_text};

/// A `query` call the person answers with "decline" if asked.
fn declined(sql: &str) -> Value {
    json!({"name": "query", "arguments": {"sql": sql, "params": []}, "answer": "decline"})
}

/// A 2026-07-28 `tools/call` of `query` with `arguments`, retrying with
/// `(state, answer)` when given; the result.
fn stateless_call(mcp: &mut McpProcess, arguments: &Value, retry: Option<(&str, Value)>) -> Value {
    let mut params =
        json!({"_meta": stateless_meta(json!({"elicitation": {"form": {}}})), "name": "query", "arguments": arguments});
    if let Some((state, answer)) = retry {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({"confirm": answer});
    }
    mcp.request("tools/call", params)["result"].clone()
}

fn accept() -> Value {
    json!({"action": "accept", "content": {}})
}

fn sqlite_file(dir: &std::path::Path, name: &str, sql: &str) -> std::path::PathBuf {
    let file = dir.join(name);
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    file
}

fn sqlite_text(file: &std::path::Path, sql: &str) -> String {
    let conn = rusqlite::Connection::open(file).unwrap();
    conn.query_row(sql, [], |r| r.get::<_, Option<String>>(0))
        .unwrap()
        .unwrap_or_default()
}

/// Found when written, now resisted. On a server with several databases (`databases`),
/// the `database` argument picks an engine and is then dropped from the
/// proposal (`engine_for` takes it; `Proposal::database` stays `None`), and
/// the 2026-07-28 pending states are one map for the whole server. So a
/// state the person accepted for `DELETE FROM t WHERE id = ?` on database
/// `a` runs that statement on database `b` when the retry names `b`: the
/// person was never asked about `b`, and the estimate they saw was `a`'s.
/// Safe: the retry on `b` is asked about anew (or refused); `b` unchanged.
#[test]
fn a_stateless_acceptance_counts_only_on_the_database_it_was_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let rows = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');";
    let a = sqlite_file(dir.path(), "a.db", rows);
    let b = sqlite_file(dir.path(), "b.db", rows);
    let config = write_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "databases": {
                "a": {"url": format!("sqlite:{}", a.display()), "read_only": false, "description": "scratch"},
                "b": {"url": format!("sqlite:{}", b.display()), "read_only": false, "description": "production"},
            },
        }),
    );
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[]);
    let on = |database: &str| json!({"sql": "DELETE FROM t WHERE id = ?", "params": [1], "database": database});
    let asked = stateless_call(&mut mcp, &on("a"), None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let swapped = stateless_call(&mut mcp, &on("b"), Some((&state, accept())));
    let ids = |file: &std::path::Path| sqlite_text(file, "SELECT group_concat(id, ',') FROM t");
    assert_eq!(ids(&a), "1,2", "nothing ran on a");
    assert_eq!(
        ids(&b),
        "1,2",
        "an acceptance given for database a ran on database b: {swapped}"
    );
}

/// Found when written, now resisted. On a server with several databases the person is
/// not told which one the statement runs on: the message has no
/// `Database file:` (nor any) line for a named database, so "DELETE FROM t
/// WHERE id = ?" on `production` reads the same as on `scratch`.
/// Safe: the message names the database.
#[test]
fn the_person_is_told_which_named_database_a_statement_changes() {
    let dir = tempfile::tempdir().unwrap();
    let rows = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');";
    let a = sqlite_file(dir.path(), "a.db", rows);
    let b = sqlite_file(dir.path(), "b.db", rows);
    let config = write_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "databases": {
                "scratch": {"url": format!("sqlite:{}", a.display()), "read_only": false},
                "production": {"url": format!("sqlite:{}", b.display()), "read_only": false},
            },
        }),
    );
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[]);
    let asked = stateless_call(
        &mut mcp,
        &json!({"sql": "DELETE FROM t WHERE id = ?", "params": [1], "database": "production"}),
        None,
    );
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let message = asked["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("production"), "{message}");
}

/// Resisted. The 2026-07-28 state counts only for the exact values it was
/// issued for (`1` is not `1.0` nor `"1"`, which SQLite would compare
/// alike), answers once, and expires with `confirm_timeout_seconds`; a
/// retry for a statement in the same file by another spelling is asked
/// anew.
#[test]
fn a_stateless_state_is_not_stretched_by_value_spellings_reuse_or_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');",
    );
    let config = write_config(
        dir.path(),
        json!({"server": {"read_only": false}, "confirm_timeout_seconds": 1}),
    );
    let url = format!("sqlite:{}", file.display());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    let delete = |param: Value| json!({"sql": "DELETE FROM t WHERE id = ?", "params": [param]});
    let ids = || sqlite_text(&file, "SELECT group_concat(id, ',') FROM t");
    for other in [json!(1.0), json!("1"), json!(true)] {
        let asked = stateless_call(&mut mcp, &delete(json!(1)), None);
        let state = asked["requestState"].as_str().unwrap().to_owned();
        let retried = stateless_call(&mut mcp, &delete(other.clone()), Some((&state, accept())));
        assert_eq!(retried["resultType"], "input_required", "{other}: {retried}");
        assert_eq!(ids(), "1,2", "{other}");
    }
    // The same SQL spelled otherwise is another statement.
    let asked = stateless_call(&mut mcp, &delete(json!(1)), None);
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let spelled = json!({"sql": "DELETE FROM t WHERE id = ? OR 1", "params": [1]});
    let retried = stateless_call(&mut mcp, &spelled, Some((&state, accept())));
    assert_ne!(retried.get("isError"), Some(&json!(false)), "{retried}");
    assert_eq!(ids(), "1,2");
    // Late: expired.
    let asked = stateless_call(&mut mcp, &delete(json!(1)), None);
    let state = asked["requestState"].as_str().unwrap().to_owned();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let late = stateless_call(&mut mcp, &delete(json!(1)), Some((&state, accept())));
    assert_eq!(late["isError"], true, "{late}");
    assert!(raw_text(&late).contains("nothing ran"), "{late}");
    assert_eq!(ids(), "1,2");
    // An acceptance smuggled into the tool's arguments, with a state that
    // is waiting, is not one: the call is asked about (or refused as
    // arguments the tool does not take), and the state still answers.
    let asked = stateless_call(&mut mcp, &delete(json!(1)), None);
    let waiting = asked["requestState"].as_str().unwrap().to_owned();
    let smuggled = json!({"sql": "DELETE FROM t WHERE id = ?", "params": [1],
                          "requestState": waiting, "inputResponses": {"confirm": accept()}});
    let got = stateless_call(&mut mcp, &smuggled, None);
    assert!(got["resultType"] == "input_required" || got["isError"] == true, "{got}");
    assert_eq!(ids(), "1,2");
}

/// Resisted. PostgreSQL writes hidden behind what does not look like one,
/// and writes that a `READ ONLY` transaction allows, each declined: the
/// rows, the sequence, the catalog, the settings and the locks read back
/// unchanged. Each step was either asked about (and declined), refused by
/// the guard, or ran unasked and changed nothing.
#[test]
fn postgres_writes_in_disguise_never_run_unasked() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); \
         INSERT INTO pets VALUES (1, 'rex'), (2, 'tom'); \
         CREATE SEQUENCE tickets; \
         CREATE FUNCTION adopt() RETURNS int LANGUAGE plpgsql AS \
           $$ BEGIN INSERT INTO pets VALUES (100, 'adopted'); RETURN 1; END $$; \
         CREATE FUNCTION sneaky() RETURNS int LANGUAGE plpgsql STABLE AS \
           $$ BEGIN RETURN adopt(); END $$; \
         CREATE PROCEDURE purge() LANGUAGE sql AS $$ DELETE FROM pets $$; \
         CREATE VIEW pet_names AS SELECT id, name FROM pets; \
         CREATE RULE wipe AS ON UPDATE TO pet_names DO INSTEAD DELETE FROM pets; \
         CREATE TABLE log (at timestamptz DEFAULT now()); \
         CREATE FUNCTION note() RETURNS trigger LANGUAGE plpgsql AS \
           $$ BEGIN INSERT INTO log DEFAULT VALUES; RETURN NEW; END $$; \
         CREATE TRIGGER noted BEFORE UPDATE ON pets FOR EACH ROW EXECUTE FUNCTION note()",
    );
    let snapshot = || {
        db.psql(
            "SELECT (SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM pets) || ' | ' || \
             (SELECT last_value || ':' || is_called FROM tickets) || ' | ' || \
             (SELECT count(*) FROM log) || ' | ' || \
             (SELECT count(*) FROM pg_class WHERE relname IN ('copied', 'made', 'kept')) || ' | ' || \
             (SELECT count(*) FROM pg_prepared_statements) || ' | ' || \
             (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory')",
        )
    };
    let before = snapshot();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let attacks = [
        "SELECT adopt()",
        "SELECT sneaky()",
        "SELECT * FROM pets WHERE id = sneaky()",
        "SELECT nextval('tickets')",
        "SELECT setval('tickets', 99)",
        "SELECT pg_advisory_lock(7)",
        "SELECT pg_try_advisory_lock(8)",
        "SELECT pg_notify('pets', 'x')",
        "SELECT set_config('search_path', 'pg_temp', false)",
        "SELECT * FROM pets WHERE id = 1 FOR UPDATE",
        "SELECT * INTO copied FROM pets",
        "CREATE TEMP TABLE made AS SELECT * FROM pets",
        "CREATE UNLOGGED TABLE kept (id int)",
        "WITH gone AS (DELETE FROM pets WHERE id = 1 RETURNING id) SELECT count(*) FROM gone",
        "EXPLAIN ANALYZE DELETE FROM pets WHERE id = 1",
        "EXPLAIN (ANALYZE, FORMAT JSON) UPDATE pets SET name = 'x' WHERE id = 2",
        "DO $$ BEGIN DELETE FROM pets; END $$",
        "CALL purge()",
        "UPDATE pet_names SET name = 'x' WHERE id = 1",
        "MERGE INTO pets p USING (SELECT 1 AS id) s ON p.id = s.id WHEN MATCHED THEN DELETE",
        "INSERT INTO pets VALUES (3, 'new') ON CONFLICT (id) DO UPDATE SET name = excluded.name",
        "PREPARE wipe AS DELETE FROM pets",
        "DECLARE c CURSOR WITH HOLD FOR SELECT adopt()",
        "COPY pets FROM PROGRAM 'true'",
        "NOTIFY pets",
        "LISTEN pets",
        "SET search_path = pg_temp",
        "SET SESSION AUTHORIZATION DEFAULT",
        "TRUNCATE pets",
        "LOCK TABLE pets IN ACCESS EXCLUSIVE MODE",
        "VACUUM pets",
        "ANALYZE pets",
        "COMMENT ON TABLE pets IS 'x'",
        "SELECT * FROM pets FOR NO KEY UPDATE SKIP LOCKED",
        "SELECT lo_create(0)",
        "SELECT txid_current()",
    ];
    let steps = confirm_session(
        json!({"steps": attacks.iter().map(|sql| declined(sql)).collect::<Vec<_>>()}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let mut report = Vec::new();
    for (sql, step) in attacks.iter().zip(&steps) {
        let asked = !shown(step).is_empty();
        let how = match (asked, step["isError"].as_bool().unwrap()) {
            (true, _) => "asked, declined".to_owned(),
            (false, true) => format!("refused: {}", step["text"].as_str().unwrap_or_default()),
            (false, false) => "ran unasked".to_owned(),
        };
        report.push(format!("{sql} → {how}"));
    }
    let report = report.join("\n");
    assert_eq!(snapshot(), before, "something changed:\n{report}");
    // The statements a READ ONLY transaction would let change the server
    // or other sessions are asked about, never run unasked.
    for (sql, step) in attacks.iter().zip(&steps) {
        if sql.contains("advisory") || sql.contains("pg_notify") || sql.starts_with("NOTIFY") {
            assert!(
                !shown(step).is_empty() || step["isError"] == true,
                "{sql} ran unasked:\n{report}"
            );
        }
    }
}

/// Found when written, now resisted. Before asking, pgmcp plans the statement with
/// PostgreSQL's `EXPLAIN` for the estimate; the planner folds IMMUTABLE
/// functions with constant arguments (and evaluates STABLE ones for its
/// estimates), so a database function runs before the person answers,
/// and whatever it does that a rolled-back `READ ONLY` transaction keeps
/// (a server file written with `COPY ... TO`, a signal to another
/// session, a dblink call, a session advisory lock held until the
/// connection's deferred reset) happens even when the person declines.
/// Repro: `CREATE FUNCTION leak() ... VOLATILE` doing `COPY (SELECT 'ran')
/// TO '/tmp/…'`, `CREATE FUNCTION folded() ... IMMUTABLE` doing `PERFORM
/// leak()`; the model sends `SELECT folded()`, the person declines: the
/// file exists. Safe: nothing of the statement runs before acceptance
/// (no estimate for statements that call database-defined functions, or
/// `EXPLAIN` under `SET LOCAL` settings that stop folding are not
/// available: skip the estimate when the guard saw an untrusted function).
#[test]
fn the_postgres_estimate_runs_no_function_before_the_person_answers() {
    let db = pg::server().database();
    let path = format!("/tmp/pgmcp-confirm-estimate-{}-{}", std::process::id(), db.name);
    db.psql(&format!(
        "CREATE FUNCTION leak() RETURNS int LANGUAGE plpgsql AS \
           $$ BEGIN COPY (SELECT 'ran before the person answered') TO '{path}'; RETURN 1; END $$; \
         CREATE FUNCTION folded() RETURNS int LANGUAGE plpgsql IMMUTABLE AS \
           $$ BEGIN PERFORM leak(); RETURN 1; END $$",
    ));
    // `change` is NULL on Unix: the whole record is never IS NOT NULL.
    let exists = || db.psql(&format!("SELECT (pg_stat_file('{path}', true)).size IS NOT NULL"));
    assert_eq!(exists(), "f");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [declined("SELECT folded()")]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    assert!(!shown(&steps[0]).is_empty(), "asked: {}", steps[0]);
    let ran = exists();
    // Clean up whatever happened (the server's user wrote it).
    db.psql(&format!(
        "DO $$ BEGIN IF (pg_stat_file('{path}', true)).size IS NOT NULL THEN \
         COPY (SELECT 1) TO PROGRAM 'cat > /dev/null; rm -f {path}'; END IF; END $$"
    ));
    assert_eq!(
        ran, "f",
        "the estimate ran folded() (and leak()) before the person declined: {}",
        steps[0]
    );
}

/// Resisted. SQLite statements that write however they are spelled, each
/// declined: the file reads back unchanged, no other file appears.
#[test]
fn sqlite_writes_in_disguise_never_run_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two'); \
         CREATE TABLE log (n TEXT); CREATE INDEX t_by_v ON t (v); \
         CREATE VIEW tv AS SELECT * FROM t; \
         CREATE TRIGGER tv_del INSTEAD OF DELETE ON tv BEGIN DELETE FROM t; END; \
         CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('x'); END;",
    );
    let snapshot = || {
        sqlite_text(
            &file,
            "SELECT (SELECT group_concat(id || ':' || v, ',') FROM t) || ' | ' || \
             (SELECT count(*) FROM log) || ' | ' || (SELECT count(*) FROM sqlite_schema) || ' | ' || \
             (SELECT user_version FROM pragma_user_version) || ' | ' || \
             (SELECT journal_mode FROM pragma_journal_mode)",
        )
    };
    let before = snapshot();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let attacks = [
        "REPLACE INTO t VALUES (1, 'replaced')",
        "INSERT INTO t VALUES (3, 'three') RETURNING *",
        "INSERT OR REPLACE INTO t VALUES (2, 'x')",
        "INSERT INTO t VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET v = excluded.v",
        "DELETE FROM tv WHERE id = 1",
        "WITH x AS (SELECT 1) DELETE FROM t WHERE id IN (SELECT * FROM x)",
        "UPDATE t SET v = 'x' WHERE id = 1 RETURNING v",
        "CREATE TEMP TABLE scratch AS SELECT * FROM t",
        "CREATE TABLE made AS SELECT * FROM t",
        "CREATE INDEX t_v ON t (v)",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = WAL",
        "PRAGMA optimize",
        "PRAGMA wal_checkpoint",
        "PRAGMA incremental_vacuum",
        "SELECT * FROM pragma_user_version",
        "VACUUM",
        "VACUUM INTO 'copy.db'",
        "ANALYZE",
        "REINDEX",
        "ATTACH 'other.db' AS o",
        "BEGIN IMMEDIATE",
        "SAVEPOINT s",
        "SELECT load_extension('x')",
    ];
    let steps = confirm_session(
        json!({"steps": attacks.iter().map(|sql| declined(sql)).collect::<Vec<_>>()}),
        &config,
        Some(&url),
        &[],
    );
    let report: Vec<String> = attacks
        .iter()
        .zip(&steps)
        .map(|(sql, step)| {
            let asked = !shown(step).is_empty();
            format!("{sql} → asked {asked}, error {}", step["isError"])
        })
        .collect();
    assert_eq!(snapshot(), before, "something changed:\n{}", report.join("\n"));
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".json") && !n.ends_with(".toml") && !n.ends_with(".log") && !n.starts_with("shop.db"))
        .collect();
    assert!(files.is_empty(), "{files:?}\n{}", report.join("\n"));
}

/// Each of `reads` sent in one session (the person declines if asked):
/// the ones that were asked about or refused, with what the model read.
fn asked_or_refused(reads: &[&str], config: &str, database: Option<&str>, envs: &[(&str, &str)]) -> Vec<String> {
    let steps = confirm_session(
        json!({"steps": reads.iter().map(|sql| declined(sql)).collect::<Vec<_>>()}),
        config,
        database,
        envs,
    );
    reads
        .iter()
        .zip(&steps)
        .filter(|(_, step)| !shown(step).is_empty() || step["isError"] == true)
        .map(|(sql, step)| format!("{sql}: {}", step["text"]))
        .collect()
}

/// False positives: what only reads runs unasked, on PostgreSQL and SQLite.
#[test]
fn reads_are_not_asked_about() {
    let db = pg::server().database();
    db.psql("CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex')");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let reads = [
        "SELECT * FROM pets",
        "WITH p AS (SELECT * FROM pets) SELECT count(*) FROM p",
        "EXPLAIN SELECT * FROM pets",
        "EXPLAIN (FORMAT JSON) SELECT * FROM pets WHERE id = 1",
        "SHOW work_mem",
        "SELECT now(), random() < 2 AS r, gen_random_uuid() IS NOT NULL AS u",
        "VALUES (1), (2)",
        "TABLE pets",
    ];
    let asked = asked_or_refused(&reads, &config, None, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    assert!(asked.is_empty(), "reads asked about or refused:\n{}", asked.join("\n"));

    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');",
    );
    let url = format!("sqlite:{}", file.display());
    let reads = [
        "SELECT * FROM t",
        "WITH x AS (SELECT * FROM t) SELECT count(*) FROM x",
        "PRAGMA table_info(t)",
        "PRAGMA index_list(t)",
        "PRAGMA user_version",
        "SELECT * FROM pragma_table_info('t')",
        "EXPLAIN QUERY PLAN SELECT * FROM t WHERE id = 1",
        "EXPLAIN SELECT * FROM t",
        "SELECT random(), datetime('now')",
    ];
    let asked = asked_or_refused(&reads, &config, Some(&url), &[]);
    assert!(asked.is_empty(), "reads asked about or refused:\n{}", asked.join("\n"));
}

/// Found when written (by reading the code and DuckDB 1.5's Python
/// package), now resisted: `nextval` is a write in DuckDB's guard, and a
/// statement calling it is not prepared before the person answers. DuckDB's
/// statement type for `SELECT nextval('s')` is SELECT, which
/// `backend::duckdb::change` and the reading judge take as a read, and
/// the DuckDB guard names `nextval` as no write (`guard::duckdb::text`'s
/// `function` gives no risk; read-only mode relies on DuckDB's read-only
/// access mode, which read-write mode with `confirm` does not have). So
/// the sequence advances, committed, unasked. Worse, DuckDB evaluates a
/// table function's arguments while binding: preparing or `EXPLAIN`ing
/// `SELECT * FROM range(nextval('s'))` advances the sequence, so even the
/// judging (and the estimate for a statement that is asked about) changes
/// it before the person answers.
/// Safe: `nextval` (and any function DuckDB marks as having side effects)
/// counts as a write; the statement is asked about; the sequence unchanged.
#[cfg(feature = "duckdb")]
#[test]
fn duckdb_nextval_waits_for_the_person() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.duckdb");
    crate::support::files::duckdb::make_db(&file, "CREATE SEQUENCE s; CREATE TABLE t (id INTEGER)");
    let url = format!("duckdb:{}", file.display());
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [
            declined("SELECT nextval('s') AS n"),
            declined("SELECT * FROM range(nextval('s'))"),
            declined("SELECT * FROM t WHERE id = nextval('s')"),
        ]}),
        &config,
        Some(&url),
        &[],
    );
    let conn = ::duckdb::Connection::open(&file).unwrap();
    let last: Option<i64> = conn
        .query_row(
            "SELECT last_value FROM duckdb_sequences() WHERE sequence_name = 's'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(last, None, "the sequence advanced unasked: {steps:?}");
    for step in &steps {
        assert!(shown(step).contains("changes data"), "asked about as a write: {step}");
    }
}

/// A false positive, found when written: reading SQLite's settings with
/// the pragma's query form (no value) is asked about as a statement that
/// "changes data", because SQLite marks `PRAGMA journal_mode` (whose
/// opcode may change the mode) as not read-only even when it only reports
/// it. Safe: a pragma without a value that only reports runs unasked.
#[test]
fn sqlite_pragmas_that_only_report_are_not_asked_about() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(dir.path(), "shop.db", "CREATE TABLE t (id INTEGER PRIMARY KEY);");
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let reads = [
        "PRAGMA journal_mode",
        "PRAGMA page_count",
        "PRAGMA freelist_count",
        "PRAGMA encoding",
        "PRAGMA foreign_keys",
        "PRAGMA schema_version",
        "PRAGMA data_version",
        "SELECT * FROM pragma_journal_mode",
    ];
    let asked = asked_or_refused(&reads, &config, Some(&url), &[]);
    assert!(asked.is_empty(), "reads asked about or refused:\n{}", asked.join("\n"));
}

/// PostgreSQL built-ins that only read but are VOLATILE: asked about as
/// writes (found when written: `currval`, `pg_sleep`, `clock_timestamp`
/// and the like are listed as harmless or not; this pins which).
#[test]
fn postgres_volatile_reads_are_not_asked_about() {
    let db = pg::server().database();
    db.psql("CREATE SEQUENCE tickets; SELECT nextval('tickets')");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let reads = [
        "SELECT clock_timestamp() IS NOT NULL AS t",
        "SELECT pg_backend_pid() > 0 AS p",
        "SELECT timeofday() IS NOT NULL AS t",
        "SELECT pg_sleep(0)",
        "SELECT last_value FROM tickets",
        "SELECT pg_sequence_last_value('tickets')",
    ];
    let asked = asked_or_refused(&reads, &config, None, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    assert!(asked.is_empty(), "reads asked about or refused:\n{}", asked.join("\n"));
}

/// Found when written: what the person reads is the statement's text
/// verbatim, so a model can pad it (blank lines, a long comment, Unicode
/// bidirectional overrides) until what a confirmation dialog shows first
/// is a harmless statement and the part that widens it sits far below:
/// `UPDATE t SET v = 'x' WHERE id = 1` + 300 newlines + `OR true`. SQLite
/// gives no estimate to give it away. Safe: the message shows line breaks
/// and invisible or direction-changing characters in a form that cannot
/// hide text (runs of blank lines collapsed or counted, controls escaped).
#[test]
fn the_person_sees_the_whole_statement_not_a_padded_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');",
    );
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let padded = format!("UPDATE t SET v = 'x' WHERE id = 1{}OR true", "\n".repeat(300));
    let flipped = "UPDATE t SET v = 'x' WHERE id = 1 /* \u{202E} */ OR true";
    let steps = confirm_session(
        json!({"steps": [declined(&padded), declined(flipped)]}),
        &config,
        Some(&url),
        &[],
    );
    let padded_message = shown(&steps[0]);
    let flipped_message = shown(&steps[1]);
    assert!(!padded_message.is_empty() && !flipped_message.is_empty(), "{steps:?}");
    let padded_hides = padded_message.contains("\n\n\n\n");
    let flipped_hides = flipped_message.contains('\u{202E}');
    assert!(
        !padded_hides && !flipped_hides,
        "blank lines hide the widening part: {padded_hides}; a bidi override is shown raw: {flipped_hides}"
    );
}

/// Resisted. A curated tool that writes is asked about with the model's
/// values, and a declined one changes nothing; its acceptance (a
/// 2026-07-28 state) does not carry over to the `query` tool with other
/// SQL, nor to the same tool with other values.
#[test]
fn curated_writes_wait_for_the_person_and_their_state_stays_theirs() {
    use crate::support::curated::param;
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT); INSERT INTO orders VALUES (1, 'new'), (2, 'new');",
    );
    let config = write_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [{"name": "ship", "description": "Ship an order.", "read_only": false,
                       "statement": "UPDATE orders SET status = 'shipped' WHERE id = ?1",
                       "parameters": [param("id", "integer")]}],
        }),
    );
    let url = format!("sqlite:{}", file.display());
    let statuses = || sqlite_text(&file, "SELECT group_concat(status, ',') FROM orders");
    let steps = confirm_session(
        json!({"steps": [{"name": "ship", "arguments": {"id": 1}, "answer": "decline"}]}),
        &config,
        Some(&url),
        &[],
    );
    assert_eq!(steps[0]["isError"], true, "{}", steps[0]);
    assert!(shown(&steps[0]).contains("?1 = 1"), "{}", steps[0]);
    assert_eq!(statuses(), "new,new");

    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
    let tool_call = |mcp: &mut McpProcess, name: &str, arguments: Value, retry: Option<(&str, Value)>| {
        let mut params = json!({"_meta": stateless_meta(json!({"elicitation": {"form": {}}})), "name": name, "arguments": arguments});
        if let Some((state, answer)) = retry {
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"confirm": answer});
        }
        mcp.request("tools/call", params)["result"].clone()
    };
    let asked = tool_call(&mut mcp, "ship", json!({"id": 1}), None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let other = tool_call(&mut mcp, "ship", json!({"id": 2}), Some((&state, accept())));
    assert_eq!(other["resultType"], "input_required", "{other}");
    let asked = tool_call(&mut mcp, "ship", json!({"id": 1}), None);
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let query = tool_call(
        &mut mcp,
        "query",
        json!({"sql": "DELETE FROM orders WHERE id = ?", "params": [1]}),
        Some((&state, accept())),
    );
    assert_eq!(query["resultType"], "input_required", "{query}");
    assert_eq!(statuses(), "new,new");
}

/// Writes the person accepts do run, whatever form they take: the
/// estimate (`EXPLAIN` in a read-only transaction) must not make a
/// statement impossible to confirm.
#[test]
fn postgres_writes_a_person_accepts_run() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'); \
         CREATE SEQUENCE tickets; \
         CREATE PROCEDURE rename(n text) LANGUAGE sql AS $$ UPDATE pets SET name = n WHERE id = 1 $$",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let writes = [
        "CREATE TABLE made AS SELECT * FROM pets",
        "SELECT * INTO copied FROM pets",
        "INSERT INTO pets VALUES (2, 'tom')",
        "SELECT nextval('tickets')",
        "CALL rename('called')",
        "CREATE INDEX pets_by_name ON pets (name)",
        "WITH added AS (INSERT INTO pets VALUES (4, 'cte') RETURNING id) SELECT * FROM added",
    ];
    let steps = confirm_session(
        json!({"steps": writes.iter().map(|sql| json!({"name": "query", "arguments": {"sql": sql}, "answer": "accept"})).collect::<Vec<_>>()}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let failed: Vec<String> = writes
        .iter()
        .zip(&steps)
        .filter(|(_, step)| step["isError"] == true || shown(step).is_empty())
        .map(|(sql, step)| format!("{sql}: asked {}, {}", !shown(step).is_empty(), step["text"]))
        .collect();
    assert!(
        failed.is_empty(),
        "accepted writes that did not run:\n{}",
        failed.join("\n")
    );
    assert_eq!(
        db.psql("SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM pets"),
        "1:called,2:tom,4:cte"
    );
}

/// Found when written: a view's rule rewrites the statement before it
/// runs, and the person is shown the view as the table it changes.
/// `UPDATE pet_names SET name = 'x' WHERE id = 1`, where `pet_names` has
/// `DO INSTEAD DELETE FROM pets`, reads "Tables it changes: pet_names"
/// although it deletes every row of `pets` (the README names triggers
/// and functions as what may change other tables, not rules). Safe: the
/// message names `pets` (PostgreSQL's rewritten query, or the plan's
/// `ModifyTable` relations, say it), or warns that the view's rules decide.
#[test]
fn the_person_is_told_the_tables_a_view_rule_changes() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'), (2, 'tom'); \
         CREATE VIEW pet_names AS SELECT id, name FROM pets; \
         CREATE RULE wipe AS ON UPDATE TO pet_names DO INSTEAD DELETE FROM pets",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [declined("UPDATE pet_names SET name = 'x' WHERE id = 1")]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let message = shown(&steps[0]);
    assert!(!message.is_empty(), "{}", steps[0]);
    assert_eq!(db.psql("SELECT count(*) FROM pets"), "2");
    let tables = message
        .lines()
        .find(|l| l.starts_with("Tables it changes"))
        .unwrap_or_default();
    assert!(
        tables.contains("pets") && tables != "Tables it changes: pet_names",
        "{message}"
    );
}
