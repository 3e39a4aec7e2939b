//! Read-write mode is an allowlist, end to end: with every switch off, the
//! statements the review found running (a trigger created, triggers
//! disabled, a constraint dropped, a publication made) are refused and the
//! database is as it was; each runs once its switch is on. Also read-only
//! mode's `COPY ... TO STDOUT`, whose lines come back as rows, and the
//! built-in diagnostics read-only mode runs.

use pgmcp::{Config, Error, Rule};
use serde_json::json;

use crate::support::engine::{engine_for, err_text, rows, run, writable};
use crate::support::pg::{self, TestDb};

/// Table `t` with a CHECK constraint, a trigger that counts inserts into
/// `audit`, and a row security policy.
fn target() -> TestDb {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE t (x int CONSTRAINT t_x_positive CHECK (x > 0)); \
         INSERT INTO t VALUES (1), (2), (3); \
         CREATE TABLE audit (n int); \
         CREATE FUNCTION count_insert() RETURNS trigger LANGUAGE plpgsql AS \
           $$BEGIN INSERT INTO audit VALUES (1); RETURN NEW; END$$; \
         CREATE TRIGGER t_audit AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION count_insert(); \
         CREATE FUNCTION on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$BEGIN END$$; \
         ALTER TABLE t ENABLE ROW LEVEL SECURITY",
    );
    db
}

/// Everything the review's statements would change, on one line.
fn state(db: &TestDb) -> String {
    db.psql(
        "SELECT concat_ws(' ', \
           'triggers=' || (SELECT string_agg(tgname || ':' || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger WHERE tgrelid = 't'::regclass AND NOT tgisinternal), \
           'constraints=' || (SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE conrelid = 't'::regclass), \
           'publications=' || (SELECT count(*) FROM pg_publication), \
           'event_triggers=' || (SELECT count(*) FROM pg_event_trigger), \
           'rls=' || (SELECT relrowsecurity::text || relforcerowsecurity::text FROM pg_class WHERE oid = 't'::regclass), \
           'replica_identity=' || (SELECT relreplident::text FROM pg_class WHERE oid = 't'::regclass), \
           'comments=' || (SELECT count(*) FROM pg_description WHERE objoid = 't'::regclass), \
           'rows=' || (SELECT string_agg(x::text, ',' ORDER BY x) FROM t))",
    )
}

fn rule_of(result: &Result<pgmcp::QueryOutput, Error>) -> Option<Rule> {
    match result {
        Err(Error::Guard(v)) => Some(v.rule),
        _ => None,
    }
}

/// Each of the review's statements, and the rule that governs it.
const REVIEW: &[(&str, Rule)] = &[
    (
        "CREATE TRIGGER t_more AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION count_insert()",
        Rule::Triggers,
    ),
    (
        "CREATE SCHEMA s CREATE TABLE a (x int) CREATE TRIGGER a_audit AFTER INSERT ON a FOR EACH ROW EXECUTE FUNCTION public.count_insert()",
        Rule::Triggers,
    ),
    ("ALTER TABLE t DISABLE TRIGGER ALL", Rule::Triggers),
    ("ALTER TABLE t DISABLE TRIGGER t_audit", Rule::Triggers),
    ("ALTER TABLE t DISABLE ROW LEVEL SECURITY", Rule::RoleChanges),
    ("ALTER TABLE t FORCE ROW LEVEL SECURITY", Rule::RoleChanges),
    ("ALTER TABLE t DROP CONSTRAINT t_x_positive", Rule::Drop),
    ("CREATE PUBLICATION p FOR ALL TABLES", Rule::Publications),
    ("CREATE PUBLICATION p2 FOR TABLE t", Rule::Publications),
    ("ALTER TABLE t REPLICA IDENTITY FULL", Rule::Publications),
    (
        "CREATE EVENT TRIGGER e ON ddl_command_start EXECUTE FUNCTION on_ddl()",
        Rule::Triggers,
    ),
];

#[tokio::test]
async fn read_write_mode_refuses_what_no_switch_allows() {
    let db = target();
    let before = state(&db);
    let engine = engine_for(&db, writable);
    let mut got_through = Vec::new();
    for (sql, rule) in REVIEW {
        let result = run(&engine, sql).await;
        if rule_of(&result) != Some(*rule) {
            got_through.push(format!("{sql}: {result:?}"));
        }
    }
    for sql in [
        "SECURITY LABEL ON TABLE t IS 'x'",
        "CREATE TABLESPACE ts LOCATION '/tmp'",
        "ALTER DATABASE postgres ALLOW_CONNECTIONS false",
    ] {
        let result = run(&engine, sql).await;
        if rule_of(&result) != Some(Rule::Unlisted) {
            got_through.push(format!("{sql}: {result:?}"));
        }
    }
    assert!(
        got_through.is_empty(),
        "not refused as expected:\n{}",
        got_through.join("\n")
    );
    assert_eq!(state(&db), before, "a refused statement changed the database");
    // The trigger still runs: an insert is counted.
    run(&engine, "INSERT INTO t VALUES (4)").await.unwrap();
    assert_eq!(db.psql("SELECT count(*) FROM audit"), "1");
    // The constraint still holds.
    let refused = err_text(run(&engine, "INSERT INTO t VALUES (-1)").await);
    assert!(refused.contains("t_x_positive"), "{refused}");

    let message = err_text(run(&engine, REVIEW[0].0).await);
    assert!(
        message.contains("Set protection.allow_triggers to true"),
        "the refusal names the switch: {message}"
    );
    let message = err_text(run(&engine, "SECURITY LABEL ON TABLE t IS 'x'").await);
    assert!(message.ends_with("No setting allows it"), "{message}");
}

#[tokio::test]
async fn each_switch_allows_its_statements() {
    let db = target();
    let mut refused = Vec::new();
    for (sql, rule) in REVIEW {
        let flag = rule.flag().expect("a switch");
        let engine = engine_for(&db, |c: &mut Config| {
            writable(c);
            c.protection.set_flag(flag, true).unwrap();
        });
        if let Err(e) = run(&engine, sql).await {
            refused.push(format!("{sql} ({flag}): {e}"));
        }
    }
    assert!(
        refused.is_empty(),
        "refused with the switch on:\n{}",
        refused.join("\n")
    );
    let after = state(&db);
    for change in [
        "t_audit:D",
        "t_more:D",
        "publications=2",
        "event_triggers=1",
        "rls=falsetrue",
        "replica_identity=f",
    ] {
        assert!(after.contains(change), "{change} in {after}");
    }
    assert!(!after.contains("t_x_positive"), "{after}");
    assert_eq!(db.psql("SELECT count(*) FROM pg_trigger WHERE tgname = 'a_audit'"), "1");
}

#[tokio::test]
async fn ordinary_schema_changes_run_with_every_switch_off() {
    let db = target();
    let engine = engine_for(&db, writable);
    for sql in [
        "CREATE TABLE u (id int PRIMARY KEY, t_x int)",
        "CREATE INDEX u_t_x ON u (t_x)",
        "ALTER TABLE u ADD COLUMN note text DEFAULT 'n'",
        "ALTER TABLE u ALTER COLUMN note SET DEFAULT 'm'",
        "ALTER TABLE u ADD CONSTRAINT u_note CHECK (note <> '')",
        "CREATE VIEW v AS SELECT id FROM u",
        "CREATE SEQUENCE q",
        "CREATE TYPE mood AS ENUM ('ok')",
        "CREATE DOMAIN pos AS int CHECK (VALUE > 0)",
        "CREATE STATISTICS u_stats ON id, t_x FROM u",
        "COMMENT ON TABLE t IS 'numbers'",
        "GRANT SELECT ON u TO PUBLIC",
        "CREATE TABLE w AS SELECT * FROM u",
    ] {
        if let Err(e) = run(&engine, sql).await {
            panic!("{sql}: {e}");
        }
    }
    assert_eq!(db.psql("SELECT obj_description('t'::regclass)"), "numbers");
}

#[tokio::test]
async fn copy_to_stdout_returns_its_lines_in_read_only_mode() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int, s text); INSERT INTO t SELECT g, 'r' || g FROM generate_series(1, 5) g");
    let engine = engine_for(&db, |_| {});
    let out = run(&engine, "COPY (SELECT x, s FROM t ORDER BY x) TO STDOUT")
        .await
        .unwrap();
    assert_eq!(out.columns[0].name, "line");
    assert_eq!(out.columns[0].type_name, "text");
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"line": "1\tr1"}, {"line": "2\tr2"}, {"line": "3\tr3"}, {"line": "4\tr4"}, {"line": "5\tr5"}])
    );
    assert!(!out.truncated);
    let csv = rows(&engine, "COPY t (x, s) TO STDOUT WITH (FORMAT csv, HEADER true)").await;
    assert_eq!(csv[0], json!({"line": "x,s"}));
    assert_eq!(csv.as_array().map(Vec::len), Some(6));
    let binary = rows(&engine, "COPY (SELECT 1) TO STDOUT (FORMAT binary)").await;
    assert!(
        binary[0]["line"]
            .as_str()
            .is_some_and(|s| s.starts_with("\\x5047434f5059")),
        "{binary}"
    );

    // The row cap holds as for a SELECT.
    let capped = engine_for(&db, |c: &mut Config| c.query.max_rows = 2);
    let out = run(&capped, "COPY t TO STDOUT").await.unwrap();
    assert_eq!(out.returned_rows, 2);
    assert!(out.truncated, "{out:?}");
    // The connection is left in step: the next call answers.
    assert_eq!(rows(&capped, "SELECT 7 AS n").await, json!([{"n": 7}]));

    // What writes stays refused inside it, and nothing changed.
    for sql in [
        "COPY (DELETE FROM t WHERE x = 1 RETURNING *) TO STDOUT",
        "COPY (SELECT * FROM t FOR UPDATE) TO STDOUT",
        "COPY t TO '/tmp/pgmcp-allowlist-copy'",
        "COPY (SELECT pg_read_file('/etc/hostname')) TO STDOUT",
    ] {
        assert!(matches!(run(&engine, sql).await, Err(Error::Guard(_))), "{sql}");
    }
    assert_eq!(db.psql("SELECT count(*) FROM t"), "5");
    assert!(!std::path::Path::new("/tmp/pgmcp-allowlist-copy").exists());
}

#[tokio::test]
async fn copy_lines_are_bounded_by_the_answer_budget() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    // Lines longer than pgmcp reads whole, and many of them: the answer is
    // cut, not held whole, and the connection stays usable.
    let out = run(
        &engine,
        "COPY (SELECT repeat('x', 3000000) FROM generate_series(1, 3)) TO STDOUT",
    )
    .await
    .unwrap();
    let text = serde_json::to_string(&out.rows).unwrap();
    assert!(text.len() < 2_000_000, "{} bytes held", text.len());
    assert!(!out.rows.is_empty());
    assert_eq!(rows(&engine, "SELECT 1 AS n").await, json!([{"n": 1}]));
}

#[tokio::test]
async fn built_in_diagnostics_run_in_read_only_mode() {
    let db = pg::server().database();
    db.psql("CREATE SEQUENCE s; SELECT nextval('s')");
    let engine = engine_for(&db, |_| {});
    let out = rows(
        &engine,
        "SELECT pg_current_wal_lsn() IS NOT NULL AS lsn, pg_current_wal_insert_lsn() IS NOT NULL AS insert_lsn, \
                pg_current_wal_flush_lsn() IS NOT NULL AS flush_lsn, pg_sequence_last_value('s') AS last, \
                (SELECT count(*) > 0 FROM pg_lock_status()) AS locks",
    )
    .await;
    assert_eq!(
        out,
        json!([{"lsn": true, "insert_lsn": true, "flush_lsn": true, "last": 1, "locks": true}])
    );
    // What writes stays refused, and nothing changed. (The WAL position is
    // not compared: other tests share the server, and their writes move it.)
    for sql in [
        "SELECT pg_switch_wal()",
        "SELECT pg_create_restore_point('x')",
        "SELECT pg_create_physical_replication_slot('slot')",
        "SELECT nextval('s')",
    ] {
        assert!(matches!(run(&engine, sql).await, Err(Error::Guard(_))), "{sql}");
    }
    assert_eq!(db.psql("SELECT count(*) FROM pg_replication_slots"), "0");
    assert_eq!(db.psql("SELECT last_value FROM s"), "1");
    // Only PostgreSQL's own: a look-alike a database user defines makes the
    // name untrusted, and it is refused.
    db.psql("CREATE FUNCTION public.pg_sequence_last_value(regclass) RETURNS bigint LANGUAGE sql AS 'SELECT 42'");
    let refused = run(&engine, "SELECT public.pg_sequence_last_value('s')").await;
    assert!(matches!(refused, Err(Error::Guard(_))), "{refused:?}");
}
