//! Attacks on the guard, end to end: every call goes through [`Engine::query`]
//! to the harness's real PostgreSQL, and every test then looks at the database
//! itself (tables, rows, catalogs, files on the server, other sessions) to see
//! that nothing changed.
//!
//! pgmcp has three layers, and each test takes some away to show what the
//! rest still hold:
//!
//! - the guard alone: `read_only = false`, so only the parse tree stands
//!   between a statement and the database;
//! - read-only mode alone: a guard rule switched off in config, so
//!   PostgreSQL's `BEGIN READ ONLY` must refuse the write (SQLSTATE 25006);
//! - the extended protocol alone: a string the guard and the server split
//!   differently, which the server still will not run as two statements.
//!
//! The harness connects as a superuser, the worst case: whatever a
//! superuser's READ ONLY transaction allows, only the guard can stop.
//!
//! Tests that hunt for a way through collect every case that got through and
//! fail once with all of them, so one run shows the whole picture.

use std::path::PathBuf;
use std::time::Duration;

use pgmcp::testing::guard;
use pgmcp::testing::postgres::{PgBackend, PgOptions, params};
use pgmcp::{Engine, Error, Policy, QueryInput, QueryOutput, Rule};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, writable};
use crate::support::findings::{Findings, verdict};
use crate::support::pg::{self, TestDb};
use crate::support::unguarded::exec_unguarded;

/// `read_only_sql_transaction`: a write refused by a READ ONLY transaction.
const READ_ONLY_SQL_TRANSACTION: &str = "25006";
/// `active_sql_transaction`: a command that cannot run inside BEGIN ... COMMIT.
const ACTIVE_SQL_TRANSACTION: &str = "25001";

async fn call(engine: &Engine, sql: &str) -> Result<QueryOutput, Error> {
    let input = QueryInput {
        database: None,
        sql: sql.into(),
        params: vec![],
        limit: None,
    };
    engine.query(&input, CancellationToken::new()).await
}

async fn rows(engine: &Engine, sql: &str) -> Value {
    let out = call(engine, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    serde_json::to_value(&out.rows).expect("rows are JSON")
}

fn db_code(result: &Result<QueryOutput, Error>) -> Option<&str> {
    match result {
        Err(Error::Db(e)) => Some(e.code()),
        _ => None,
    }
}

/// A database with something to lose: table `t` holding 1, 2, 3 and a
/// sequence `s`, plus the other things attacks aim at.
struct Target {
    db: TestDb,
    /// Another database on the same server, for `DROP DATABASE`.
    other: TestDb,
    /// An engine whose one connection sits idle in its pool: the backend
    /// `pg_terminate_backend` is pointed at.
    bystander: Engine,
    bystander_pid: i64,
    /// Paths attacks try to make the server write. None may ever exist.
    copy_file: PathBuf,
    program_file: PathBuf,
    from_program_file: PathBuf,
    fdw_file: PathBuf,
}

impl Target {
    async fn new() -> Target {
        let db = pg::server().database();
        db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3); CREATE SEQUENCE s");
        let other = pg::server().database();
        let bystander = engine_for(&db, |_| {});
        let pid = rows(&bystander, "SELECT pg_backend_pid() AS pid").await;
        let bystander_pid = pid[0]["pid"].as_i64().expect("a pid");
        // The database name holds this process's id and a counter, so no two
        // tests (or test runs) share a path.
        let file = |tag: &str| {
            let path = PathBuf::from(format!("/tmp/pgmcp-attack-{}-{tag}", db.name));
            let _ = std::fs::remove_file(&path);
            path
        };
        Target {
            copy_file: file("copy-to"),
            program_file: file("copy-to-program"),
            from_program_file: file("copy-from-program"),
            fdw_file: file("fdw-program"),
            db,
            other,
            bystander,
            bystander_pid,
        }
    }

    /// Everything an attack could change, on one line, so a before/after
    /// mismatch shows what changed.
    fn state(&self) -> String {
        let catalog = self.db.psql(&format!(
            "SELECT concat_ws(' ', \
               'tables=' || coalesce((SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'), '-'), \
               'functions=' || (SELECT count(*) FROM pg_proc WHERE pronamespace = 'public'::regnamespace), \
               'operators=' || (SELECT count(*) FROM pg_operator WHERE oprnamespace = 'public'::regnamespace), \
               'rules=' || (SELECT count(*) FROM pg_rules WHERE schemaname = 'public'), \
               'collations=' || (SELECT count(*) FROM pg_collation WHERE collnamespace = 'public'::regnamespace), \
               'large_objects=' || (SELECT count(*) FROM pg_largeobject_metadata), \
               'extensions=' || (SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension), \
               'sequence=' || coalesce((SELECT coalesce(last_value::text, 'unused') FROM pg_sequences WHERE sequencename = 's'), 'gone'), \
               'other_db=' || (SELECT count(*) FROM pg_database WHERE datname = '{other}'), \
               'alter_system=' || (SELECT count(*) FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'), \
               'bystander=' || (SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}))",
            other = self.other.name,
            pid = self.bystander_pid,
        ));
        let rows = if self.db.psql("SELECT to_regclass('public.t') IS NOT NULL") == "t" {
            self.db
                .psql("SELECT coalesce(string_agg(x::text, ',' ORDER BY x), 'none') FROM t")
        } else {
            "-".to_owned()
        };
        let files: Vec<String> = [
            &self.copy_file,
            &self.program_file,
            &self.from_program_file,
            &self.fdw_file,
        ]
        .into_iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
        format!("{catalog} rows={rows} files_written=[{}]", files.join(","))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        for path in [
            &self.copy_file,
            &self.program_file,
            &self.from_program_file,
            &self.fdw_file,
        ] {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The settings a `SET` or `set_config` would leave behind on the engine's
/// session, read by a later call (on the same connection: `max_conns = 1`).
async fn session_settings(engine: &Engine) -> Value {
    rows(
        engine,
        "SELECT current_setting('search_path') AS search_path, \
                current_setting('default_transaction_read_only') AS default_read_only, \
                current_setting('work_mem') AS work_mem",
    )
    .await
}

/// `Some` when an attack changed what [`Target::state`] (or a test's own
/// state) shows.
fn changed(before: &str, after: &str) -> Option<String> {
    (before != after).then(|| format!("changed the database:\n    before: {before}\n    after:  {after}"))
}

/// One statement the guard must refuse.
struct Attack {
    sql: String,
    /// Under the default `read_only = true` rather than the guard alone; for
    /// the attacks on read-only mode itself.
    read_only: bool,
    rule: Rule,
}

fn guard_alone(sql: impl Into<String>, rule: Rule) -> Attack {
    Attack {
        sql: sql.into(),
        read_only: false,
        rule,
    }
}

fn in_read_only(sql: impl Into<String>, rule: Rule) -> Attack {
    Attack {
        sql: sql.into(),
        read_only: true,
        rule,
    }
}

/// Every category the guard blocks, each with the guard as the only layer
/// wherever read-only mode would otherwise stop it too. Each must be refused
/// by the right rule, and afterwards the tables, rows, catalogs, other
/// database, bystander session, server files and session settings must be
/// exactly as before.
#[tokio::test(flavor = "multi_thread")]
async fn every_blocked_category_is_refused_and_changes_nothing() {
    let target = Target::new().await;
    let other = &target.other.name;
    let pid = target.bystander_pid;
    let attacks = vec![
        guard_alone("DROP TABLE t", Rule::Drop),
        guard_alone(format!("DROP DATABASE {other}"), Rule::Drop),
        guard_alone("TRUNCATE t", Rule::Truncate),
        guard_alone("DELETE FROM t", Rule::DeleteWithoutWhere),
        guard_alone("UPDATE t SET x = 0", Rule::UpdateWithoutWhere),
        guard_alone(
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            Rule::DeleteWithoutWhere,
        ),
        guard_alone(
            "WITH u AS (UPDATE t SET x = 0 RETURNING *) SELECT * FROM u",
            Rule::UpdateWithoutWhere,
        ),
        guard_alone("EXPLAIN ANALYZE DELETE FROM t", Rule::DeleteWithoutWhere),
        guard_alone("COPY (DELETE FROM t RETURNING *) TO STDOUT", Rule::DeleteWithoutWhere),
        guard_alone(format!("COPY t TO '{}'", target.copy_file.display()), Rule::CopyToFile),
        guard_alone(
            format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", target.program_file.display()),
            Rule::CopyToFile,
        ),
        guard_alone(
            format!(
                "COPY t FROM PROGRAM 'touch {}; echo 4'",
                target.from_program_file.display()
            ),
            Rule::CopyFrom,
        ),
        guard_alone("COPY t FROM '/etc/hostname'", Rule::CopyFrom),
        guard_alone("COPY t FROM STDIN", Rule::CopyFrom),
        guard_alone("DO $$ BEGIN DELETE FROM t; END $$", Rule::Do),
        guard_alone(
            "CREATE FUNCTION wipe() RETURNS void LANGUAGE sql AS 'DELETE FROM t'",
            Rule::CreateFunction,
        ),
        guard_alone(
            "CREATE PROCEDURE wipe() LANGUAGE sql AS 'DELETE FROM t'",
            Rule::CreateFunction,
        ),
        guard_alone("PREPARE wipe AS DELETE FROM t", Rule::Prepare),
        guard_alone("SET search_path = pg_temp, public", Rule::Set),
        guard_alone("SET work_mem = '1GB'", Rule::Set),
        guard_alone("RESET ALL", Rule::Set),
        guard_alone("ALTER SYSTEM SET work_mem = '1GB'", Rule::AlterSystem),
        // ALTER DATABASE ... SET keeps a setting for every later session:
        // ALTER SYSTEM's switch governs it (and its SET, SET's).
        guard_alone(
            format!("ALTER DATABASE {} SET search_path = pg_temp", target.db.name),
            Rule::AlterSystem,
        ),
        guard_alone("LOAD 'auto_explain'", Rule::Load),
        guard_alone(
            "CREATE RULE swallow AS ON INSERT TO t DO INSTEAD NOTHING",
            Rule::CreateRule,
        ),
        // Blocked functions, however the call is spelled or wherever it sits.
        guard_alone("SELECT pg_read_file('/etc/hostname')", Rule::BlockedFunction),
        guard_alone("SELECT pg_catalog.PG_READ_FILE('/etc/hostname')", Rule::BlockedFunction),
        guard_alone(r#"SELECT U&"pg\005fread_file"('/etc/hostname')"#, Rule::BlockedFunction),
        guard_alone(
            "SELECT * FROM pg_read_file('/etc/hostname') AS f(contents)",
            Rule::BlockedFunction,
        ),
        guard_alone(
            "SELECT x FROM t WHERE length(pg_read_file('/etc/hostname')) > 0",
            Rule::BlockedFunction,
        ),
        // Read-only mode on: the target is read-only mode itself, checked
        // afterwards by session_settings on the same connection.
        in_read_only(
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            Rule::BlockedFunction,
        ),
        in_read_only("SET default_transaction_read_only = off", Rule::ReadOnly),
        in_read_only("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", Rule::ReadOnly),
        in_read_only("RESET ALL", Rule::ReadOnly),
        in_read_only("BEGIN READ WRITE", Rule::ReadOnly),
        // query_to_xml runs SQL the guard never sees. PostgreSQL happens to
        // refuse DML inside it ("not allowed in a non-volatile function"),
        // but not a SELECT calling a blocked function.
        guard_alone(
            "SELECT query_to_xml('DELETE FROM t RETURNING 1', true, false, '')",
            Rule::BlockedFunction,
        ),
        guard_alone(
            "SELECT query_to_xml('SELECT pg_read_file(''/etc/hostname'')', true, false, '')",
            Rule::BlockedFunction,
        ),
        guard_alone(format!("SELECT pg_terminate_backend({pid})"), Rule::BlockedFunction),
        guard_alone(format!("SELECT pg_cancel_backend({pid})"), Rule::BlockedFunction),
        guard_alone("SELECT lo_import('/etc/hostname')", Rule::BlockedFunction),
        guard_alone("SELECT 1; DROP TABLE t", Rule::MultiStatement),
        guard_alone("SELECT 1 /* ; */ ; DROP TABLE t", Rule::MultiStatement),
        guard_alone("DROP TABLE t; SELECT 1", Rule::MultiStatement),
    ];

    let guard_only = engine_for(&target.db, |c| {
        c.read_only = false;
        c.pool.max_conns = 1;
    });
    let read_only = engine_for(&target.db, |c| c.pool.max_conns = 1);
    let settings = [session_settings(&guard_only).await, session_settings(&read_only).await];
    let mut findings = Findings::default();
    for attack in &attacks {
        let (engine, settings_before) = if attack.read_only {
            (&read_only, &settings[1])
        } else {
            (&guard_only, &settings[0])
        };
        let mut problems = Vec::new();
        let before = target.state();
        let result = call(engine, &attack.sql).await;
        match &result {
            Err(Error::Guard(v)) if v.rule == attack.rule => {}
            _ => problems.push(format!(
                "expected: refused by guard rule `{}`\n  got: {}",
                attack.rule.name(),
                verdict(&result)
            )),
        }
        problems.extend(changed(&before, &target.state()));
        let settings_after = session_settings(engine).await;
        if &settings_after != settings_before {
            problems.push(format!(
                "changed the session's settings: {settings_before} -> {settings_after}"
            ));
        }
        findings.case(&attack.sql, problems);
    }
    // The bystander's connection is not just listed: it still works.
    assert_eq!(
        rows(&target.bystander, "SELECT pg_backend_pid() AS pid").await,
        json!([{ "pid": pid }])
    );
    findings.assert_none("attacks were not refused as expected");
}

/// A write the guard has been told to allow, and the SQLSTATE PostgreSQL
/// must answer it with in read-only mode.
struct Write {
    sql: String,
    allow: fn(&mut Policy),
    code: &'static str,
}

fn write(sql: impl Into<String>, allow: fn(&mut Policy), code: &'static str) -> Write {
    Write {
        sql: sql.into(),
        allow,
        code,
    }
}

/// Read-only mode has two layers: the guard's allowlist refuses every
/// statement that is not a read, and PostgreSQL's READ ONLY transaction
/// refuses table writes. Each write here is refused by the first layer, and,
/// sent straight to the backend with no guard at all, by the second too,
/// with nothing changed.
#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_refuses_writes_the_guard_lets_through() {
    let target = Target::new().await;
    let nothing: fn(&mut Policy) = |_| {};
    let writes = vec![
        write(
            "DELETE FROM t",
            |p| p.allow(Rule::DeleteWithoutWhere, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            |p| p.allow(Rule::DeleteWithoutWhere, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "EXPLAIN ANALYZE DELETE FROM t",
            |p| p.allow(Rule::DeleteWithoutWhere, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "UPDATE t SET x = 0",
            |p| p.allow(Rule::UpdateWithoutWhere, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write("DROP TABLE t", |p| p.allow(Rule::Drop, true), READ_ONLY_SQL_TRANSACTION),
        write(
            "TRUNCATE t",
            |p| p.allow(Rule::Truncate, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        // The program would leave a file behind; state() would show it.
        write(
            format!(
                "COPY t FROM PROGRAM 'touch {}; echo 4'",
                target.from_program_file.display()
            ),
            |p| p.allow(Rule::CopyFrom, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "CREATE FUNCTION wipe() RETURNS void LANGUAGE sql AS 'DELETE FROM t'",
            |p| p.allow(Rule::CreateFunction, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "DO $$ BEGIN DELETE FROM t; INSERT INTO t VALUES (4); END $$",
            |p| p.allow(Rule::Do, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "CREATE RULE swallow AS ON INSERT TO t DO INSTEAD NOTHING",
            |p| p.allow(Rule::CreateRule, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "UPDATE pg_settings SET setting = 'off' WHERE name = 'default_transaction_read_only'",
            |p| p.allow(Rule::Set, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            format!("DROP DATABASE {}", target.other.name),
            |p| p.allow(Rule::Drop, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        // The guard reads ALTER SYSTEM's SET as a SET too, so both switches.
        // It touches no table, so read-only mode lets it be; it cannot run
        // inside a transaction block, and every call runs in one.
        write(
            "ALTER SYSTEM SET work_mem = '1GB'",
            |p| {
                p.allow(Rule::AlterSystem, true);
                p.allow(Rule::Set, true);
            },
            ACTIVE_SQL_TRANSACTION,
        ),
        // Never blocked by the guard: read-only mode is the only layer.
        write("INSERT INTO t VALUES (4)", nothing, READ_ONLY_SQL_TRANSACTION),
        write("CREATE TABLE t2 (x int)", nothing, READ_ONLY_SQL_TRANSACTION),
        write("SELECT nextval('s')", nothing, READ_ONLY_SQL_TRANSACTION),
        write("SELECT setval('s', 42)", nothing, READ_ONLY_SQL_TRANSACTION),
        write(
            "WITH d AS (DELETE FROM t WHERE x > 0 RETURNING *) SELECT count(*) FROM d",
            nothing,
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            "MERGE INTO t USING (SELECT 1) s ON true WHEN MATCHED THEN DELETE",
            |p| p.allow(Rule::Merge, true),
            READ_ONLY_SQL_TRANSACTION,
        ),
        write(
            format!("ALTER DATABASE {} SET search_path = pg_temp", target.db.name),
            |p| {
                p.allow(Rule::AlterSystem, true);
                p.allow(Rule::Set, true);
            },
            READ_ONLY_SQL_TRANSACTION,
        ),
    ];

    let backend = read_only_backend(&target.db);
    let major = target.db.major();
    let mut findings = Findings::default();
    for w in &writes {
        let mut problems = Vec::new();
        // The first layer: even with the rule that names the statement
        // switched off, read-only mode refuses it through the engine.
        let engine = engine_for(&target.db, |c| (w.allow)(&mut c.protection));
        assert!(engine.config().read_only, "the default is read-only");
        let before = target.state();
        match call(&engine, &w.sql).await {
            Err(Error::Guard(v)) if v.rule == Rule::ReadOnly => {}
            other => problems.push(format!(
                "through the engine: expected the read-only rule, got {}",
                verdict(&other)
            )),
        }
        problems.extend(changed(&before, &target.state()));
        // The second layer alone. MERGE came in PostgreSQL 15: an older
        // server does not know the statement at all.
        let result = exec_unguarded(&backend, &w.sql).await;
        let code = if w.sql.starts_with("MERGE") && major < 15 {
            "42601"
        } else {
            w.code
        };
        if db_code(&result) != Some(code) {
            problems.push(format!(
                "expected: refused by PostgreSQL with {code}\n  got: {}",
                verdict(&result)
            ));
        }
        problems.extend(changed(&before, &target.state()));
        findings.case(&w.sql, problems);
    }
    findings.assert_none("writes were not refused by read-only mode");
}

/// The guard refuses every way of turning read-only mode off, even with
/// `allow_set`. And if one reached PostgreSQL anyway (here: straight to the
/// backend, no guard at all), it would not outlive its call: the next call on
/// the same connection starts with `DISCARD ALL` behind it and `BEGIN READ
/// ONLY` in front, so a write is still refused.
#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_survives_tricks_that_skip_the_guard() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3)");
    let tricks: [(&str, Option<Rule>); 9] = [
        ("SET default_transaction_read_only = off", Some(Rule::ReadOnly)),
        ("SET transaction_read_only = off", Some(Rule::ReadOnly)),
        (
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
            Some(Rule::ReadOnly),
        ),
        (
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            Some(Rule::BlockedFunction),
        ),
        ("RESET default_transaction_read_only", Some(Rule::ReadOnly)),
        ("RESET ALL", Some(Rule::ReadOnly)),
        ("BEGIN READ WRITE", Some(Rule::ReadOnly)),
        // Harmless (they would end the call's transaction early, with no
        // statement left to run), but not reads: read-only mode's allowlist
        // refuses them.
        ("COMMIT", Some(Rule::ReadOnly)),
        ("ROLLBACK", Some(Rule::ReadOnly)),
    ];

    let engine = engine_for(&db, |c| c.protection.allow(Rule::Set, true));
    let mut findings = Findings::default();
    for (sql, rule) in tricks {
        let result = call(&engine, sql).await;
        let refused_by = match &result {
            Err(Error::Guard(v)) => Some(v.rule),
            _ => None,
        };
        findings.case(
            &format!("{sql} (through the engine)"),
            (refused_by != rule).then(|| {
                format!(
                    "expected the guard to say {:?}\n  got: {}",
                    rule.map(Rule::name),
                    verdict(&result)
                )
            }),
        );
    }

    let backend = read_only_backend(&db);
    let exec = |sql: &'static str| exec_unguarded(&backend, sql);
    let pid = exec("SELECT pg_backend_pid()").await.expect("pid").rows;
    for (sql, _) in tricks {
        // Whatever the trick itself does (most succeed), the write after it
        // must fail, on the very same connection.
        let trick = exec(sql).await.map(|_| ()).map_err(|e| e.to_string());
        let insert = exec("INSERT INTO t VALUES (4)").await;
        let refused = matches!(&insert, Err(Error::Db(e)) if e.code() == READ_ONLY_SQL_TRANSACTION);
        findings.case(
            &format!("{sql} (straight to the backend: {trick:?})"),
            (!refused).then(|| format!("then INSERT: expected {READ_ONLY_SQL_TRANSACTION}, got {insert:?}")),
        );
        let now = exec("SELECT pg_backend_pid()").await.expect("pid").rows;
        assert_eq!(
            now, pid,
            "after {sql}: not the same connection, so the test proves nothing"
        );
    }
    assert_eq!(db.psql("SELECT string_agg(x::text, ',' ORDER BY x) FROM t"), "1,2,3");
    findings.assert_none("read-only tricks were not contained");
}

/// Where PostgreSQL's READ ONLY transaction is no layer at all: a
/// superuser's still runs programs, reads server files and imports them as
/// large objects. Shown here straight to the backend, with no guard, so that
/// nobody mistakes the transaction for a backstop on these: for them the
/// guard is the only layer in pgmcp, and the real backstop is a role without
/// superuser, `pg_read_server_files` and `pg_execute_server_program`
/// (`connection.role`, or `pg_read_all_data`, which read-only mode runs a
/// superuser login as unless `connection.read_only_as_login` says otherwise,
/// as this backend does). Through the engine, the guard refuses each of them
/// even with every `allow_*` flag on and no blocked functions.
#[tokio::test(flavor = "multi_thread")]
async fn without_the_guard_read_only_mode_does_not_stop_superuser_side_effects() {
    let target = Target::new().await;
    let engine = engine_for(&target.db, |c| c.protection = Policy::permissive());
    assert!(engine.config().read_only);
    let backend = read_only_backend(&target.db);

    let sql = format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", target.program_file.display());
    let refused = call(&engine, &sql).await;
    assert!(
        matches!(&refused, Err(Error::Guard(v)) if v.rule == Rule::ReadOnly),
        "{sql}: {}",
        verdict(&refused)
    );
    assert!(
        !target.program_file.exists(),
        "{sql} ran its program through the engine"
    );
    // The program ran whatever COPY says: touch may exit before COPY writes
    // to it, and then COPY reports a broken pipe.
    let result = exec_unguarded(&backend, &sql).await;
    assert!(
        target.program_file.exists(),
        "{sql} did not run its program: {}",
        verdict(&result)
    );

    let sql = "SELECT length(pg_read_file('/etc/hostname')) > 0 AS read";
    let refused = call(&engine, sql).await;
    assert!(
        matches!(&refused, Err(Error::Guard(v)) if v.rule == Rule::ReadOnly),
        "{sql}: {}",
        verdict(&refused)
    );
    let read = exec_unguarded(&backend, sql).await.expect("read").rows;
    assert_eq!(serde_json::to_value(read).unwrap(), json!([{ "read": true }]));

    let sql = "SELECT lo_import('/etc/hostname')";
    let refused = call(&engine, sql).await;
    assert!(
        matches!(&refused, Err(Error::Guard(v)) if v.rule == Rule::ReadOnly),
        "{sql}: {}",
        verdict(&refused)
    );
    assert_eq!(db_count(&target.db, "pg_largeobject_metadata"), 0);
    let result = exec_unguarded(&backend, sql).await;
    // Newer servers (18, and late minor releases of 16 and 17) refuse
    // large-object writes in a read-only transaction themselves; the guard
    // refuses them on every version.
    if db_code(&result) == Some(READ_ONLY_SQL_TRANSACTION) {
        assert_eq!(db_count(&target.db, "pg_largeobject_metadata"), 0);
    } else {
        assert!(result.is_ok(), "lo_import: {}", verdict(&result));
        assert_eq!(db_count(&target.db, "pg_largeobject_metadata"), 1);
    }
}

/// A read-only PostgreSQL backend with no engine, and so no guard, in front.
/// It runs as the (superuser) login, as `connection.read_only_as_login`
/// does: these tests show what the READ ONLY transaction alone stops. (By
/// default read-only mode would run them as `pg_read_all_data`: see
/// `reader::`.)
fn read_only_backend(db: &TestDb) -> PgBackend {
    let params = params::resolve(Some(&db.url), &Default::default(), &|_| None).expect("test URL resolves");
    PgBackend::new(
        params,
        PgOptions {
            read_only: true,
            max_conn_lifetime: Duration::from_secs(60),
            max_conn_idle: Duration::from_secs(60),
            role: None,
            read_only_as_login: true,
        },
    )
}

fn db_count(db: &TestDb, table: &str) -> u64 {
    db.psql(&format!("SELECT count(*) FROM {table}"))
        .parse()
        .expect("a count")
}

/// Functions outside the default `blocked_functions` list that change the
/// database or the server even inside a READ ONLY transaction, when the role
/// is a superuser (or has REPLICATION). With the default config each must be
/// refused, by the guard or by PostgreSQL, and change nothing.
#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_stops_functions_that_change_the_server() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    // Slots and replication origins belong to the whole cluster: name them
    // after this test's database, and remove whatever the test leaves.
    let victim = format!("{}_victim", db.name);
    let made_slot = format!("{}_made", db.name);
    let made_origin = format!("{}_origin", db.name);
    db.psql(&format!("SELECT pg_create_physical_replication_slot('{victim}')"));
    let state = || {
        db.psql(&format!(
            "SELECT concat_ws(' ', \
               'collations=' || (SELECT count(*) FROM pg_collation WHERE collnamespace = 'public'::regnamespace), \
               'slots=' || coalesce((SELECT string_agg(slot_name, ',' ORDER BY slot_name) FROM pg_replication_slots WHERE slot_name LIKE '{}%'), '-'), \
               'origins=' || (SELECT count(*) FROM pg_replication_origin WHERE roname = '{made_origin}'))",
            db.name
        ))
    };
    let attacks = [
        // Creates hundreds of collations in the catalog.
        "SELECT pg_import_system_collations('public')".to_owned(),
        // A slot that reserves WAL keeps it forever: the disk fills up.
        format!("SELECT pg_create_physical_replication_slot('{made_slot}', true)"),
        // Dropping someone's slot breaks their replication or change capture.
        format!("SELECT pg_drop_replication_slot('{victim}')"),
        format!("SELECT pg_replication_origin_create('{made_origin}')"),
    ];
    let mut findings = Findings::default();
    for sql in &attacks {
        let before = state();
        let result = call(&engine, sql).await;
        let ran = result
            .is_ok()
            .then(|| format!("expected: refused in read-only mode\n  got: {}", verdict(&result)));
        findings.case(sql, ran.into_iter().chain(changed(&before, &state())));
    }
    db.psql(&format!(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE '{}%'; \
         SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE roname = '{made_origin}'",
        db.name
    ));
    findings.assert_none("server changes got through read-only mode");
}

/// An attack made of several calls, built against its own fresh [`Target`].
type Steps = fn(&Target) -> Vec<String>;

/// Attacks that reach what a rule blocks by a way the rule does not look at,
/// with the guard as the only layer (`read_only = false`, default rules).
/// Each gets a fresh database; it is stopped if any of its calls is refused,
/// and either way nothing may change.
#[tokio::test(flavor = "multi_thread")]
async fn writable_mode_rules_cannot_be_sidestepped() {
    let attacks: [(&str, Steps); 6] = [
        ("delete-without-where, as MERGE", |_| {
            vec!["MERGE INTO t USING (SELECT 1) s ON true WHEN MATCHED THEN DELETE".into()]
        }),
        ("update-without-where, as MERGE", |_| {
            vec!["MERGE INTO t USING (SELECT 1) s ON true WHEN MATCHED THEN UPDATE SET x = 0".into()]
        }),
        // An operator calls its function without a FuncCall node in the tree.
        ("blocked-function pg_read_file, as an operator", |_| {
            vec![
                "CREATE OPERATOR public.<<< (RIGHTARG = text, FUNCTION = pg_read_file)".into(),
                "SELECT <<< '/etc/hostname' AS leaked".into(),
            ]
        }),
        ("blocked-function pg_terminate_backend, as an operator", |t| {
            vec![
                "CREATE OPERATOR public.### (LEFTARG = integer, RIGHTARG = bigint, FUNCTION = pg_terminate_backend)"
                    .into(),
                format!("SELECT {} ### 0::bigint AS killed", t.bystander_pid),
            ]
        }),
        // The block list matches names, and a superuser can rename.
        ("blocked-function pg_read_file, renamed", |_| {
            vec![
                "ALTER FUNCTION pg_catalog.pg_read_file(text) RENAME TO innocent_read".into(),
                "SELECT innocent_read('/etc/hostname') AS leaked".into(),
            ]
        }),
        // file_fdw's `program` option is COPY FROM PROGRAM by another name.
        ("copy-to-file, as a file_fdw foreign table", |t| {
            vec![
                "CREATE EXTENSION file_fdw".into(),
                "CREATE SERVER files FOREIGN DATA WRAPPER file_fdw".into(),
                format!(
                    "CREATE FOREIGN TABLE run_me (line text) SERVER files OPTIONS (program 'touch {}')",
                    t.fdw_file.display()
                ),
                "SELECT * FROM run_me".into(),
            ]
        }),
    ];
    let mut findings = Findings::default();
    for (name, steps) in attacks {
        let target = Target::new().await;
        let engine = engine_for(&target.db, |c| c.read_only = false);
        let steps = steps(&target);
        let before = target.state();
        let mut stopped = false;
        for sql in &steps {
            if call(&engine, sql).await.is_err() {
                stopped = true;
                break;
            }
        }
        let ran = (!stopped).then(|| format!("every call ran:\n    {}", steps.join("\n    ")));
        findings.case(name, ran.into_iter().chain(changed(&before, &target.state())));
    }
    findings.assert_none("attacks sidestepped a guard rule");
}

/// libpg_query lexes as if `standard_conforming_strings = on`, where `\` in
/// '...' is an ordinary character. A server set to `off` (here by ALTER
/// DATABASE, which new sessions would inherit) reads `\'` as an escaped quote
/// instead, so the two could disagree about where a string ends. pgmcp pins
/// `standard_conforming_strings = on` in every session's startup packet, which
/// overrides the database setting, so the server always lexes as the guard does.
#[tokio::test(flavor = "multi_thread")]
async fn nonstandard_strings_cannot_smuggle_a_second_statement() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3)");
    db.psql(&format!(
        "ALTER DATABASE {} SET standard_conforming_strings = off",
        db.name
    ));
    let engine = engine_for(&db, |c| {
        c.read_only = false;
        c.protection = Policy::permissive();
    });
    assert_eq!(
        rows(&engine, "SELECT current_setting('standard_conforming_strings') AS scs").await,
        json!([{ "scs": "on" }]),
        "pgmcp's sessions keep standard strings whatever the database says"
    );
    let table_intact = || {
        assert_eq!(db.psql("SELECT string_agg(x::text, ',' ORDER BY x) FROM t"), "1,2,3");
    };

    // Guard: `SELECT 'a\'` ; `DROP TABLE t` ; a comment. Refused.
    let two_for_the_guard = r"SELECT 'a\'; DROP TABLE t; --'";
    assert_eq!(guard::parse(two_for_the_guard).map(|t| t.stmts.len()), Ok(2));
    match call(&engine, two_for_the_guard).await {
        Err(Error::Guard(v)) => assert_eq!(v.rule, Rule::MultiStatement, "{v}"),
        other => panic!("{two_for_the_guard}: expected the guard to refuse, got {other:?}"),
    }
    table_intact();

    // The premise: a session that inherits `off` (psql here) splits this into
    // two statements, where the guard sees one.
    let probe = r"SELECT 'a\' AS x, '; SELECT 2; --'";
    assert_eq!(guard::parse(probe).map(|t| t.stmts.len()), Ok(1));
    assert_eq!(
        db.psql(&format!("{probe}\n")),
        "a' AS x, \n2",
        "psql splits it into two statements"
    );

    // Through pgmcp the server reads it exactly as the guard did: one SELECT of
    // two string literals.
    let smuggled = r"SELECT 'a\' AS x, '; DROP TABLE t; --'";
    assert_eq!(guard::parse(smuggled).map(|t| t.stmts.len()), Ok(1));
    let out = rows(&engine, smuggled).await;
    assert_eq!(out, json!([{ "x": "a\\", "?column?": "; DROP TABLE t; --" }]));
    table_intact();
}

/// The same disagreement inside one statement: what the guard reads as the
/// inside of a string, a server with `standard_conforming_strings = off` would
/// run as code. Because pgmcp pins the setting, each runs as the guard read it
/// (harmless string literals) and nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn nonstandard_strings_cannot_hide_a_call_from_the_guard() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2), (3)");
    db.psql(&format!(
        "ALTER DATABASE {} SET standard_conforming_strings = off",
        db.name
    ));
    let read_only = engine_for(&db, |_| {});
    let writable = engine_for(&db, |c| c.read_only = false);
    let attacks = [
        // The guard sees two string literals, `a\` and ` AS y, pg_read_file(
        // ...) AS z --`: no function call. With `off`, the server would see
        // `a' AS x, ` and then code that calls pg_read_file.
        (
            &read_only,
            r"SELECT 'a\' AS x, ' AS y, pg_read_file($$/etc/hostname$$) AS z --'",
        ),
        // The guard sees `WITH a AS (SELECT <string>, <string>) SELECT 1`; with
        // `off`, the server would see a second CTE that deletes every row.
        (
            &writable,
            r"WITH a AS (SELECT 'a\' AS x, '), d AS (DELETE FROM t RETURNING 1) SELECT 1 --') SELECT 1",
        ),
    ];
    let hostname = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let rows = || db.psql("SELECT coalesce(string_agg(x::text, ',' ORDER BY x), 'none') FROM t");
    let mut findings = Findings::default();
    for (engine, sql) in attacks {
        let before = rows();
        let result = call(engine, sql).await;
        let leaked = match &result {
            Ok(out) => {
                let text = serde_json::to_string(&out.rows).unwrap();
                let hostname = hostname.trim();
                (!hostname.is_empty() && text.contains(hostname))
                    .then(|| format!("the file's contents came back: {text}"))
            }
            Err(_) => None,
        };
        findings.case(sql, leaked.into_iter().chain(changed(&before, &rows())));
    }
    findings.assert_none("calls were hidden from the guard in strings");
}

/// SQL only an older server reads (postfix operators went in PostgreSQL
/// 14: `5 !` is factorial on 13) is refused as unparseable by the guard,
/// which reads SQL as PostgreSQL 18 does, and never reaches the server:
/// where the two grammars differ, pgmcp fails closed.
#[tokio::test(flavor = "multi_thread")]
async fn syntax_only_older_servers_read_is_refused_before_the_server() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.read_only = false);
    match call(&engine, "SELECT 5 !").await {
        Err(Error::Guard(v)) => {
            assert_eq!(v.rule, Rule::Parse, "{v}");
            assert!(v.message.starts_with("SQL parse error"), "{v}");
        }
        other => panic!("SELECT 5 ! was not refused by the guard: {}", verdict(&other)),
    }
    if db.major() < 14 {
        // The server itself would have run it.
        assert_eq!(db.psql("SELECT 5 !"), "120");
    }
}

/// `protection.allow_set` governs `UPDATE pg_settings` (pg_settings' rule
/// turns it into `set_config(..., false)`), but the rule looks only at the
/// relation's name: a plain view over pg_settings, which read-write mode lets
/// the agent create, reaches the same rule.
#[tokio::test(flavor = "multi_thread")]
async fn settings_cannot_be_changed_through_a_view_of_pg_settings() {
    let db = pg::server().database();
    let engine = engine_for(&db, writable);
    let mut findings = Findings::default();
    let create = call(&engine, "CREATE VIEW sv AS SELECT name, setting FROM pg_settings").await;
    assert!(create.is_ok(), "CREATE VIEW: {}", verdict(&create));
    let direct = call(
        &engine,
        "UPDATE pg_settings SET setting = '77MB' WHERE name = 'work_mem'",
    )
    .await;
    findings.case(
        "control: UPDATE pg_settings",
        (!matches!(&direct, Err(Error::Guard(v)) if v.rule == Rule::Set)).then(|| verdict(&direct)),
    );
    let sql = "UPDATE sv SET setting = '77MB' WHERE name = 'work_mem'";
    let result = call(&engine, sql).await;
    let mut problems = Vec::new();
    if !matches!(&result, Err(Error::Guard(v)) if v.rule == Rule::Set) {
        problems.push(format!("expected: refused by `set`\n  got: {}", verdict(&result)));
    }
    // Show that PostgreSQL really runs set_config for it: unguarded, in one
    // psql session, the setting changes.
    let shown = db.psql(&format!("{sql}; SHOW work_mem"));
    if result.is_ok() && shown.lines().any(|l| l.trim() == "77MB") {
        problems.push("PostgreSQL ran set_config for it (psql: work_mem became 77MB)".to_owned());
    }
    findings.case(sql, problems);
    findings.assert_none("settings changes got past allow_set");
}

/// `INSERT ... SELECT ... ON CONFLICT DO UPDATE` with no WHERE of its own
/// overwrites every row the SELECT names: fed the table itself, every row of
/// the table. It amounts to an UPDATE without WHERE.
#[tokio::test(flavor = "multi_thread")]
async fn an_upsert_of_the_whole_table_is_an_update_without_where() {
    let db = pg::server().database();
    db.psql("CREATE TABLE u (id int PRIMARY KEY, v int); INSERT INTO u VALUES (1, 10), (2, 20), (3, 30)");
    let engine = engine_for(&db, writable);
    let values = || db.psql("SELECT string_agg(v::text, ',' ORDER BY id) FROM u");
    let mut findings = Findings::default();
    let control = call(&engine, "UPDATE u SET v = 0").await;
    findings.case(
        "control: UPDATE u SET v = 0",
        (!matches!(&control, Err(Error::Guard(v)) if v.rule == Rule::UpdateWithoutWhere)).then(|| verdict(&control)),
    );
    let sql = "INSERT INTO u SELECT id, 0 FROM u ON CONFLICT (id) DO UPDATE SET v = excluded.v";
    let before = values();
    let result = call(&engine, sql).await;
    let after = values();
    let mut problems = Vec::new();
    if !matches!(&result, Err(Error::Guard(v)) if v.rule == Rule::UpdateWithoutWhere) {
        problems.push(format!(
            "expected: refused by `update-without-where`\n  got: {}",
            verdict(&result)
        ));
    }
    if before != after {
        problems.push(format!("overwrote every row: v was {before}, is {after}"));
    }
    findings.case(sql, problems);
    findings.assert_none("whole-table overwrites got past update-without-where");
}
