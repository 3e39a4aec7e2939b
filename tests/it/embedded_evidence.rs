//! The embedded engines' guards judge what the engine says it will run, not a
//! reading of the text: DuckDB's statement type for every statement an
//! `EXPLAIN` may explain, DuckDB's plan for whether a change reaches every
//! row, SQLite's authorizer for upserts and maintenance. Each attack runs
//! end to end on a real file, and the file is read back with the engine's own
//! crate afterwards: the rows are still there.

use crate::support::engine::run;
use crate::support::files::sqlite;
use pgmcp::{Error, Rule};

/// The rule of a guard refusal; panics on anything else.
fn refused_by<T: std::fmt::Debug>(sql: &str, result: Result<T, Error>) -> Rule {
    match result {
        Err(e) => match e.kind() {
            Error::Guard(v) => v.rule,
            other => panic!("{sql}: expected a guard refusal, got {other:?}"),
        },
        Ok(v) => panic!("{sql}: expected a guard refusal, got {v:?}"),
    }
}

const SQLITE_ROWS: &str = "
    CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
    INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
    CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
    INSERT INTO u VALUES (1, 'u1'), (2, 'u2'), (3, 'u3');
";

/// What the three rows of `t` say, read with rusqlite.
fn sqlite_t(path: &std::path::Path) -> String {
    sqlite::text(
        path,
        "SELECT group_concat(id || v, ',') FROM (SELECT * FROM t ORDER BY id)",
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_upserts_and_replace_fed_by_a_query_are_updates_without_where() {
    let (_dir, path) = sqlite::fixture(SQLITE_ROWS);
    let engine = sqlite::allowing(&path, "default");
    for sql in [
        "REPLACE INTO t SELECT id, 'x' FROM u",
        "INSERT OR REPLACE INTO t SELECT id, 'x' FROM u",
        "insert or replace into t select * from t",
        "WITH s AS (SELECT id, 'x' AS v FROM u) REPLACE INTO t SELECT * FROM s",
        "INSERT INTO t SELECT id, 'x' FROM u WHERE true ON CONFLICT(id) DO UPDATE SET v = excluded.v",
        "INSERT INTO t SELECT id, 'x' FROM u WHERE true ON CONFLICT DO UPDATE SET v = 'y'",
    ] {
        let rule = refused_by(sql, run(&engine, sql).await);
        assert_eq!(rule, Rule::UpdateWithoutWhere, "{sql}");
        assert_eq!(sqlite_t(&path), "1a,2b,3c", "{sql} changed rows");
    }
    // A VALUES list names its rows: allowed, and it changes just those.
    run(&engine, "INSERT OR REPLACE INTO t VALUES (1, 'z')").await.unwrap();
    // A VALUES row computed by a query is still one row.
    run(
        &engine,
        "INSERT INTO t VALUES ((SELECT min(id) FROM u), 'w') ON CONFLICT(id) DO UPDATE SET v = excluded.v",
    )
    .await
    .unwrap();
    assert_eq!(sqlite_t(&path), "1w,2b,3c");
    run(
        &engine,
        "INSERT INTO t VALUES (2, 'q') ON CONFLICT(id) DO UPDATE SET v = excluded.v",
    )
    .await
    .unwrap();
    assert_eq!(sqlite_t(&path), "1w,2q,3c");
    // The switch allows the rest.
    let allowed = sqlite::allowing(&path, "allow_update_without_where");
    run(&allowed, "REPLACE INTO t SELECT id, v FROM u").await.unwrap();
    assert_eq!(sqlite_t(&path), "1u1,2u2,3u3");
}

/// A table whose own definition replaces on conflict overwrites rows on a
/// plain INSERT, and an UPDATE OR REPLACE deletes rows outside its WHERE:
/// both are updates without WHERE, with no REPLACE word in the INSERT.
#[tokio::test(flavor = "multi_thread")]
async fn sqlite_tables_that_replace_on_conflict() {
    let (_dir, path) = sqlite::fixture(
        "CREATE TABLE t (id INTEGER PRIMARY KEY ON CONFLICT REPLACE, v TEXT NOT NULL);
         INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
         CREATE TABLE w (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v TEXT);
         INSERT INTO w VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z');
         CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
         INSERT INTO u VALUES (1, 'u1'), (2, 'u2'), (3, 'u3');",
    );
    let engine = sqlite::allowing(&path, "default");
    for sql in [
        "INSERT INTO t SELECT id, 'x' FROM u",
        "UPDATE t SET id = 1 WHERE id = 3",
        "UPDATE OR REPLACE w SET k = 'a' WHERE id = 3",
        "update or replace w set k = 'a' where id = 3",
    ] {
        let rule = refused_by(sql, run(&engine, sql).await);
        assert_eq!(rule, Rule::UpdateWithoutWhere, "{sql}");
    }
    assert_eq!(sqlite_t(&path), "1a,2b,3c");
    assert_eq!(sqlite::scalar(&path, "SELECT count(*) FROM w"), 3);
    // Rows named by VALUES, and plain writes elsewhere, still run.
    run(&engine, "INSERT INTO t VALUES (1, 'z')").await.unwrap();
    run(&engine, "UPDATE w SET v = 'q' WHERE id = 3").await.unwrap();
    assert_eq!(sqlite_t(&path), "1z,2b,3c");
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_maintenance_needs_its_switch() {
    let (_dir, path) = sqlite::fixture(&format!("{SQLITE_ROWS} CREATE INDEX tv ON t (v);"));
    let engine = sqlite::allowing(&path, "default");
    for sql in ["VACUUM", "vacuum main", "ANALYZE", "ANALYZE t", "REINDEX", "REINDEX tv"] {
        assert_eq!(refused_by(sql, run(&engine, sql).await), Rule::Maintenance, "{sql}");
    }
    // ANALYZE writes sqlite_stat1 when it runs: refused, it never did.
    assert_eq!(
        sqlite::scalar(&path, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'"),
        0
    );
    let allowed = sqlite::allowing(&path, "allow_maintenance");
    for sql in ["VACUUM", "ANALYZE", "REINDEX tv"] {
        run(&allowed, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(
        sqlite::scalar(&path, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'"),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_values_are_bounded_inside_sqlite() {
    let (_dir, path) = sqlite::fixture(SQLITE_ROWS);
    let engine = sqlite::engine_on(&path, |_| {});
    // A gigabyte of 'x', three times: SQLite stops building it at the
    // limit, long before the memory or the deadline.
    let started = std::time::Instant::now();
    let sql = "SELECT printf('%.*c', 999999999, 'x') AS a, printf('%.*c', 999999999, 'y') AS b, printf('%.*c', 999999999, 'z') AS c";
    let err = run(&engine, sql).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("SQLITE_TOOBIG") || text.contains("too big"), "{text}");
    assert!(text.contains("query.max_result_length"), "{text}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // What fits is computed whole: a megabyte is within the limit.
    let out = run(&engine, "SELECT length(printf('%.*c', 1000000, 'x')) AS n")
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&out.rows).unwrap()[0]["n"], 1_000_000);
}

#[cfg(feature = "duckdb")]
mod duckdb {
    use super::refused_by;
    use crate::support::engine::{rows, run};
    use crate::support::files::duckdb::{allowing, engine_on, fixture, scalar};
    use pgmcp::Rule;
    use serde_json::json;

    const ROWS: &str = "
        CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR, s STRUCT(\"where\" VARCHAR));
        INSERT INTO t VALUES (1, 'a', {'where': 'w'}), (2, 'b', {'where': 'w'}), (3, 'c', {'where': 'w'});
        CREATE TABLE u (id INTEGER, c VARCHAR, x INTEGER);
        INSERT INTO u VALUES (1, 'p', 10), (2, 'q', 20), (3, 'p', 30);
    ";

    /// `t`'s rows as one text, read with the duckdb crate: `1a,2b,3c` untouched.
    fn t_rows(path: &std::path::Path) -> String {
        let conn = ::duckdb::Connection::open(path).unwrap();
        let text: String = conn
            .query_row("SELECT string_agg(id || v, ',' ORDER BY id) FROM t", [], |r| r.get(0))
            .unwrap();
        conn.close().unwrap();
        text
    }

    /// Every spelling of EXPLAIN ANALYZE runs its statement; each is judged as
    /// that statement, in writable mode with every switch off and in
    /// read-only mode.
    #[tokio::test(flavor = "multi_thread")]
    async fn explain_analyze_is_judged_as_what_it_runs() {
        let (dir, path) = fixture(ROWS);
        let cases = [
            "EXPLAIN ANALYZE DELETE FROM t",
            "EXPLAIN ANALYSE DELETE FROM t",
            "EXPLAIN (ANALYZE) DELETE FROM t",
            "EXPLAIN (ANALYZE, FORMAT JSON) DELETE FROM t",
            "EXPLAIN (FORMAT JSON, ANALYZE TRUE) DELETE FROM t",
            "explain/**/analyse\ndelete from t",
            "EXPLAIN ANALYZE DELETE FROM t RETURNING id AS where",
            "EXPLAIN ANALYZE UPDATE t SET v = 'x'",
            "EXPLAIN ANALYZE UPDATE t SET v = s.where",
            "EXPLAIN ANALYZE INSERT OR REPLACE INTO t SELECT id, 'x', s FROM t",
            "EXPLAIN ANALYZE DROP TABLE t",
            "EXPLAIN (ANALYZE) CREATE MACRO evil(x) AS x",
        ];
        for mode in ["writable", "read-only"] {
            let engine = match mode {
                "writable" => allowing(&path, "default"),
                _ => engine_on(&path, |_| {}),
            };
            for sql in cases {
                let result = run(&engine, sql).await;
                assert!(result.is_err(), "{sql} ran in {mode} mode: {result:?}");
                if let Err(e) = &result {
                    assert!(matches!(e.kind(), pgmcp::Error::Guard(_)), "{sql}: {e:?}");
                }
            }
            drop(engine);
            assert_eq!(t_rows(&path), "1a,2b,3c", "{mode}");
            assert_eq!(
                scalar(
                    &path,
                    "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'evil'"
                ),
                0
            );
        }
        // Writing a file through EXPLAIN ANALYZE COPY, with only file
        // functions allowed, in read-only mode: COPY's own rule refuses it.
        let target = dir.path().join("config.json");
        let engine = engine_on(&path, |c| {
            c.protection.set_flag("allow_file_functions", true).unwrap();
        });
        for sql in [
            format!(
                "EXPLAIN ANALYZE COPY (SELECT 1 AS read_only) TO '{}' (FORMAT json)",
                target.display()
            ),
            format!("EXPLAIN (ANALYZE) COPY t TO '{}'", target.display()),
        ] {
            assert_eq!(refused_by(&sql, run(&engine, &sql).await), Rule::CopyToFile, "{sql}");
        }
        assert!(!target.exists());
        drop(engine);
        // Reads explain, analysed or not, in read-only mode.
        let reader = engine_on(&path, |_| {});
        for sql in [
            "EXPLAIN SELECT * FROM t",
            "EXPLAIN ANALYZE SELECT count(*) FROM t",
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1",
        ] {
            run(&reader, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        // With its switch, the statement an EXPLAIN ANALYZE runs is allowed.
        drop(reader);
        let deletes = allowing(&path, "allow_delete_without_where");
        run(&deletes, "EXPLAIN ANALYSE DELETE FROM t").await.unwrap();
        drop(deletes);
        assert_eq!(scalar(&path, "SELECT count(*) FROM t"), 0);
    }

    /// Whether a DELETE or UPDATE reaches every row is what DuckDB's plan
    /// shows, with the words: a WHERE that is a word of something else, or
    /// one that keeps every row, is no WHERE.
    #[tokio::test(flavor = "multi_thread")]
    async fn where_rules_read_duckdbs_plan() {
        let (_dir, path) = fixture(ROWS);
        let engine = allowing(&path, "default");
        for (sql, rule) in [
            ("DELETE FROM t RETURNING id AS where", Rule::DeleteWithoutWhere),
            ("DELETE FROM t RETURNING s.where", Rule::DeleteWithoutWhere),
            ("DELETE FROM t WHERE true", Rule::DeleteWithoutWhere),
            ("DELETE FROM t WHERE 1 = 1", Rule::DeleteWithoutWhere),
            ("UPDATE t SET v = {'where': 'x'}.where", Rule::UpdateWithoutWhere),
            ("UPDATE t SET v = s.where", Rule::UpdateWithoutWhere),
            ("UPDATE t SET v = 'x' WHERE true", Rule::UpdateWithoutWhere),
            ("UPDATE t SET v = 'x' RETURNING v AS where", Rule::UpdateWithoutWhere),
        ] {
            assert_eq!(refused_by(sql, run(&engine, sql).await), rule, "{sql}");
        }
        drop(engine);
        assert_eq!(t_rows(&path), "1a,2b,3c");
        // Bounded changes run, with parameters too.
        let engine = allowing(&path, "default");
        run(&engine, "UPDATE t SET v = 'z' WHERE id = 1").await.unwrap();
        let out = engine
            .query(
                &pgmcp::QueryInput {
                    sql: "DELETE FROM t WHERE id = ?".into(),
                    params: vec![json!(3)],
                    limit: None,
                    database: None,
                },
                tokio_util::sync::CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(out.rows_affected, Some(1));
        run(&engine, "DELETE FROM t WHERE id IN (SELECT id FROM u WHERE c = 'q')")
            .await
            .unwrap();
        drop(engine);
        assert_eq!(t_rows(&path), "1z");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn upserts_fed_by_a_query_are_updates_without_where() {
        let (_dir, path) = fixture(ROWS);
        let engine = allowing(&path, "default");
        for sql in [
            "INSERT OR REPLACE INTO t SELECT id, 'x', s FROM t",
            "INSERT OR REPLACE INTO t (id, v) SELECT id, c FROM u",
            "INSERT INTO t SELECT id, 'x', s FROM t ON CONFLICT DO UPDATE SET v = excluded.v",
            "INSERT INTO t BY NAME (SELECT id, 'x' AS v FROM u) ON CONFLICT (id) DO UPDATE SET v = 'y'",
        ] {
            assert_eq!(
                refused_by(sql, run(&engine, sql).await),
                Rule::UpdateWithoutWhere,
                "{sql}"
            );
        }
        drop(engine);
        assert_eq!(t_rows(&path), "1a,2b,3c");
        let engine = allowing(&path, "default");
        run(&engine, "INSERT OR REPLACE INTO t (id, v) VALUES (1, 'z')")
            .await
            .unwrap();
        run(&engine, "INSERT INTO t (id, v) SELECT id + 10, c || '!' FROM u")
            .await
            .unwrap();
        drop(engine);
        assert_eq!(scalar(&path, "SELECT count(*) FROM t"), 6);
        let allowed = allowing(&path, "allow_update_without_where");
        run(&allowed, "INSERT OR REPLACE INTO t (id, v) SELECT id, c FROM u")
            .await
            .unwrap();
        drop(allowed);
        assert_eq!(scalar(&path, "SELECT count(*) FROM t WHERE v IN ('p', 'q')"), 3);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn maintenance_needs_its_switch() {
        let (_dir, path) = fixture(ROWS);
        let engine = allowing(&path, "default");
        for sql in [
            "VACUUM",
            "VACUUM t",
            "ANALYZE",
            "ANALYZE t",
            "CHECKPOINT",
            "FORCE CHECKPOINT",
        ] {
            assert_eq!(refused_by(sql, run(&engine, sql).await), Rule::Maintenance, "{sql}");
        }
        let allowed = allowing(&path, "allow_maintenance");
        for sql in ["VACUUM", "ANALYZE t", "CHECKPOINT"] {
            run(&allowed, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    /// DuckDB's pragmas also exist as table functions, and a view or a table
    /// macro in the file can call one the text never names: the plan's
    /// table functions are judged as the text's are.
    #[tokio::test(flavor = "multi_thread")]
    async fn table_functions_are_judged_from_the_plan() {
        let (_dir, path) = fixture(&format!(
            "{ROWS}
            CREATE VIEW quiet AS SELECT * FROM checkpoint();
            CREATE MACRO tidy() AS TABLE SELECT * FROM force_checkpoint();"
        ));
        let engine = allowing(&path, "default");
        for (sql, rule) in [
            ("CALL checkpoint()", Rule::Maintenance),
            ("FROM force_checkpoint()", Rule::Maintenance),
            ("SELECT * FROM quiet", Rule::Maintenance),
            ("CALL enable_profiling()", Rule::Pragma),
            ("SELECT * FROM tidy()", Rule::Maintenance),
            (
                "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
                Rule::BlockedFunction,
            ),
        ] {
            assert_eq!(refused_by(sql, run(&engine, sql).await), rule, "{sql}");
        }
        let allowed = allowing(&path, "allow_maintenance");
        run(&allowed, "SELECT * FROM quiet").await.unwrap();
        // Reading table functions stay allowed.
        drop((engine, allowed));
        let reader = engine_on(&path, |_| {});
        for sql in [
            "SELECT count(*) AS n FROM range(10)",
            "SELECT table_name FROM duckdb_tables() ORDER BY 1",
            "CALL pragma_version()",
            "SELECT * FROM pragma_table_info('t')",
        ] {
            run(&reader, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    /// PIVOT without an IN list is two statements to DuckDB (the values,
    /// then the query): a read, allowed in read-only mode, with the rows of
    /// the same pivot with its values listed.
    #[tokio::test(flavor = "multi_thread")]
    async fn pivot_without_in_reads() {
        let (_dir, path) = fixture(ROWS);
        let engine = engine_on(&path, |_| {});
        let listed = rows(
            &engine,
            "PIVOT u ON c IN ('p', 'q') USING sum(x) GROUP BY id ORDER BY id",
        )
        .await;
        let found = rows(&engine, "PIVOT u ON c USING sum(x) GROUP BY id ORDER BY id").await;
        assert_eq!(found, listed);
        assert_eq!(found[0], json!({"id": 1, "p": 10, "q": null}));
    }
}
