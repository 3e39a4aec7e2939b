//! The guard reads SQL the way each engine does (security review, kind 4).
//!
//! For SQLite and DuckDB the guard's `WHERE` test and DuckDB's function checks
//! come from tokens ([`Outline`]); a tokenizer that reads comments, strings,
//! quoted names or spaces differently from the engine lets a `DELETE` that
//! removes every row look like it has a `WHERE`. These tests generate
//! statements (deterministically) with separators that one reading or another
//! takes for space, comment, string or name — unicode spaces, nested and
//! unterminated comments, `--` ended by `\r`, dollar quotes, `E'\''`,
//! backticks, brackets, blobs, a NUL byte — run each on the real engine, and
//! compare what the engine did with what the guard believed:
//!
//! - a `DELETE`/`UPDATE` touched every row exactly when the outline says it
//!   has no `WHERE` (the engine is the judge; the generated `WHERE` is never
//!   true for every row);
//! - DuckDB called `error(...)` exactly when the outline lists the call.
//!
//! Then, end to end through the [`Engine`] in read-write mode with
//! `allow_delete_without_where` off, the review's examples and their variants
//! are refused and the table keeps its rows.

use pgmcp::testing::guard::Outline;
use pgmcp::{Engine, Error, Rule};
use rusqlite::Connection;

use crate::support::engine::run;
use crate::support::files;

/// A small deterministic generator (xorshift64*): the same statements on
/// every run, so a failure is reproducible from its printed text.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What may stand between two tokens. Half of these are space or a comment
/// to every engine; the others are space to one reading and part of a name,
/// a comment or a string to another.
const SEPARATORS: &[&str] = &[
    " ",
    " ",
    " ",
    "\n",
    "\t",
    "\r",
    "\x0c",
    "\u{b}",
    " \u{b}",
    "\u{a0}",
    " \u{a0}",
    "\u{2000}",
    "\u{2003}",
    "\u{3000}",
    "\u{85}",
    "\u{feff}",
    " \u{feff}",
    "/* c */",
    "/**/",
    "/* /* */ */",
    " /* /* */ ",
    " /*",
    " */",
    "/*/",
    "-- c\n",
    " -- c\r",
    " --",
    " $$",
    " $a$",
    " '",
    " E'\\'",
    " \"",
    " `",
    " [",
    " ]",
    " {",
    " }",
    " x'",
    " \0",
];

/// Names an alias may take.
const ALIASES: &[&str] = &["x", "\"x\"", "[x]", "`x`", "x\u{a0}y", "\"a b\""];

/// Expressions a `RETURNING` may return.
const RETURNED: &[&str] = &[
    "id", "'a'", "$$a$$", "$a$b$a$", "E'\\''", "x'00'", "X'0A'", "[1]", "{'a': 1}", "'it''s'",
];

/// `atoms` joined by generated separators, sometimes with a trailing one.
fn join(rng: &mut Gen, atoms: &[&str]) -> String {
    let mut sql = String::new();
    for (i, atom) in atoms.iter().enumerate() {
        if i > 0 {
            sql.push_str(if rng.chance(55) { " " } else { rng.pick(SEPARATORS) });
        }
        sql.push_str(atom);
    }
    if rng.chance(30) {
        sql.push_str(rng.pick(SEPARATORS));
    }
    sql
}

/// A generated `DELETE` or `UPDATE` of `t`, with or without a `WHERE`
/// (`id = 2`, never true for every row), an alias, a `RETURNING`.
fn write_statement(rng: &mut Gen) -> String {
    let mut atoms: Vec<&str> = if rng.chance(50) {
        vec!["DELETE", "FROM", "t"]
    } else {
        vec!["UPDATE", "t"]
    };
    if rng.chance(40) {
        atoms.push("AS");
        atoms.push(rng.pick(ALIASES));
    }
    if atoms[0] == "UPDATE" {
        atoms.extend(["SET", "v", "=", "1"]);
    }
    // The condition is one atom: separators inside it could cut it down to
    // `WHERE id`, true for every row, and the engine could no longer tell.
    let condition = rng.chance(50);
    if condition {
        atoms.push(rng.pick(&["WHERE id = 2", "WHERE id=2", "WHERE (id = 2)", "WHERE\tid = 2"]));
    }
    if rng.chance(30) {
        atoms.push("RETURNING");
        atoms.push(rng.pick(RETURNED));
    } else if !condition && rng.chance(30) {
        // A bare `WHERE` at the end: the engine accepts the statement only if
        // it read the `WHERE` as part of something else (a name, a comment).
        atoms.push("WHERE");
    }
    join(rng, &atoms)
}

/// `result` is a guard refusal by one of `rules`.
fn assert_refused<T: std::fmt::Debug>(result: Result<T, Error>, sql: &str, rules: &[Rule]) {
    match result {
        Err(e) => match e.kind() {
            Error::Guard(v) => assert!(
                rules.contains(&v.rule),
                "{sql:?}: refused by {:?}: {}",
                v.rule,
                v.message
            ),
            other => panic!("{sql:?}: expected a guard refusal, got {other:?}"),
        },
        Ok(out) => panic!("{sql:?} ran: {out:?}"),
    }
}

/// Every mismatch, printed, or nothing.
fn report(engine: &str, ran: usize, both: (usize, usize), least: usize, mismatches: &[String]) {
    assert!(
        mismatches.is_empty(),
        "{engine}: {} of {ran} statements read differently by the guard:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // The generator must reach both outcomes often, or the test says nothing.
    assert!(ran >= 300, "{engine}: only {ran} generated statements ran");
    assert!(both.0 >= least && both.1 >= least, "{engine}: outcomes {both:?}");
}

/// Rows of `t` (id, v) that `sql` changed on SQLite, or `None` when SQLite
/// refuses the statement.
fn sqlite_changed(sql: &str) -> Option<usize> {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE t (id INTEGER, v INTEGER); INSERT INTO t VALUES (1, 0), (2, 0), (3, 0);")
        .unwrap();
    {
        let mut stmt = conn.prepare(sql).ok()?;
        let mut rows = stmt.query([]).ok()?;
        while rows.next().ok()?.is_some() {}
    }
    let left: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
    let set: i64 = conn
        .query_row("SELECT count(*) FROM t WHERE v = 1", [], |r| r.get(0))
        .unwrap();
    Some((3 - left + set) as usize)
}

#[test]
fn sqlite_where_matches_what_sqlite_runs() {
    let mut rng = Gen(0x5eed_0004);
    let (mut ran, mut every, mut some) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for _ in 0..6000 {
        let sql = write_statement(&mut rng);
        let Some(changed) = sqlite_changed(&sql) else { continue };
        ran += 1;
        let all = changed == 3;
        if all {
            every += 1
        } else {
            some += 1
        }
        let guard_sees_where = Outline::sqlite(&sql).has_where();
        if guard_sees_where == all {
            mismatches.push(format!(
                "  {sql:?}: SQLite changed {changed} of 3 rows, guard sees a WHERE: {guard_sees_where}"
            ));
        }
    }
    report("SQLite", ran, (every, some), 50, &mismatches);
}

/// A writable SQLite engine on a fresh `t` of three rows, with the default
/// protection (`allow_delete_without_where` and `allow_update_without_where`
/// off).
fn sqlite_engine() -> (tempfile::TempDir, std::path::PathBuf, Engine) {
    let (dir, path) =
        files::sqlite::fixture("CREATE TABLE t (id INTEGER, v INTEGER); INSERT INTO t VALUES (1, 0), (2, 0), (3, 0);");
    let engine = files::sqlite::engine_on(&path, |config| {
        config.read_only = false;
        config.protection.blocked_functions = vec![pgmcp::FunctionPattern::new("random")];
    });
    (dir, path, engine)
}

/// The review's SQLite examples and their variants: each would change every
/// row, and each is refused.
const SQLITE_EVERY_ROW: &[&str] = &[
    "DELETE FROM t AS x\u{a0}WHERE",
    "DELETE FROM t AS x\u{3000}WHERE",
    "DELETE FROM t AS x\u{2000}WHERE",
    "DELETE FROM t AS x\u{85}WHERE",
    "DELETE FROM t AS x\u{feff}WHERE",
    "DELETE FROM t AS [x WHERE]",
    "DELETE FROM t AS `x WHERE`",
    "DELETE FROM t AS \"x WHERE\"",
    "DELETE FROM t -- WHERE id = 2",
    "DELETE FROM t -- x\r WHERE id = 2",
    "DELETE FROM t /* WHERE id = 2",
    "DELETE FROM t\0 WHERE id = 2",
    "DELETE FROM t RETURNING $$ AS \"WHERE\"",
    "UPDATE t SET v = 1 -- WHERE id = 2",
    "UPDATE t AS x\u{a0}WHERE SET v = 1",
    "UPDATE t SET v = x'01' /* WHERE id = 2 */",
];

#[tokio::test]
async fn sqlite_engine_refuses_every_row_variants_and_keeps_the_rows() {
    let (_dir, path, engine) = sqlite_engine();
    for sql in SQLITE_EVERY_ROW {
        assert_refused(
            run(&engine, sql).await,
            sql,
            &[Rule::DeleteWithoutWhere, Rule::UpdateWithoutWhere],
        );
        let conn = Connection::open(&path).unwrap();
        let (left, set): (i64, i64) = conn
            .query_row("SELECT count(*), count(*) FILTER (WHERE v = 1) FROM t", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((left, set), (3, 0), "{sql:?} changed rows");
    }
    // A real WHERE still runs.
    let out = run(&engine, "DELETE FROM t AS x WHERE\u{a0}id = 2").await;
    assert!(out.is_err(), "SQLite reads `WHERE\u{a0}id` as one name");
    let out = run(&engine, "DELETE FROM t /* c */ WHERE id = 2").await.unwrap();
    assert_eq!(out.rows_affected, Some(1));
}

#[tokio::test]
async fn sqlite_function_checks_come_from_the_authorizer() {
    let (_dir, _path, engine) = sqlite_engine();
    // However the call is spelled, SQLite reports it and the guard refuses it.
    for sql in [
        "SELECT random()",
        "SELECT \"random\"()",
        "SELECT `random`()",
        "SELECT [random]()",
        "SELECT random /* */ ()",
        "SELECT RANDOM\t()",
        "SELECT 1 FROM t WHERE id = abs(random())",
    ] {
        assert_refused(run(&engine, sql).await, sql, &[Rule::BlockedFunction]);
    }
    // Text that only looks like a call is not one.
    run(&engine, "SELECT 'random()' AS [random(]").await.unwrap();
}

#[cfg(feature = "duckdb")]
mod duckdb_engine {
    use super::*;

    /// Rows of `t` that `sql` changed on DuckDB, or `None` when DuckDB refuses it.
    fn changed(conn: &duckdb::Connection, sql: &str) -> Option<usize> {
        conn.execute_batch("CREATE OR REPLACE TABLE t AS SELECT * FROM (VALUES (1, 0), (2, 0), (3, 0)) v(id, v)")
            .unwrap();
        {
            let mut stmt = conn.prepare(sql).ok()?;
            let mut rows = stmt.query([]).ok()?;
            while rows.next().ok()?.is_some() {}
        }
        let (left, set): (i64, i64) = conn
            .query_row("SELECT count(*), count(*) FILTER (WHERE v = 1) FROM t", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        Some((3 - left + set) as usize)
    }

    #[test]
    fn duckdb_where_matches_what_duckdb_runs() {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        let mut rng = Gen(0x5eed_d0c4);
        let (mut ran, mut every, mut some) = (0, 0, 0);
        let mut mismatches = Vec::new();
        for _ in 0..3000 {
            let sql = write_statement(&mut rng);
            // The guard never hands DuckDB a NUL byte (a C string ends there).
            if sql.contains('\0') {
                continue;
            }
            let Some(n) = changed(&conn, &sql) else { continue };
            ran += 1;
            let all = n == 3;
            if all {
                every += 1
            } else {
                some += 1
            }
            let guard_sees_where = Outline::duckdb(&sql).has_where();
            if guard_sees_where == all {
                mismatches.push(format!(
                    "  {sql:?}: DuckDB changed {n} of 3 rows, guard sees a WHERE: {guard_sees_where}"
                ));
            }
        }
        report("DuckDB", ran, (every, some), 50, &mismatches);
    }

    /// `SELECT 1, <a call of error('hi' || 't!'), maybe in a list or struct>`.
    fn call_statement(rng: &mut Gen) -> String {
        let mut atoms = vec!["SELECT", "1", ","];
        // The message DuckDB raises ("hit!") is not in the text, so a
        // syntax error quoting the text cannot pass for a call.
        let call = ["error", "(", "'hi' || 't!'", ")"];
        match rng.below(4) {
            0 => atoms.extend(call),
            1 => {
                atoms.push("[");
                atoms.extend(call);
                atoms.push("]");
            }
            2 => {
                atoms.extend(["{", "'a'", ":"]);
                atoms.extend(call);
                atoms.push("}");
            }
            _ => {
                atoms.extend(["\"error\"", "(", "'hi' || 't!'", ")"]);
            }
        }
        if rng.chance(30) {
            atoms.extend(["AS", "a"]);
        }
        join(rng, &atoms)
    }

    #[test]
    fn duckdb_calls_match_what_duckdb_calls() {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        let mut rng = Gen(0x5eed_ca11);
        let (mut ran, mut called, mut not_called) = (0, 0, 0);
        let mut mismatches = Vec::new();
        for _ in 0..3000 {
            let sql = call_statement(&mut rng);
            if sql.contains('\0') {
                continue;
            }
            let outcome = conn.prepare(&sql).and_then(|mut stmt| {
                let mut rows = stmt.query([])?;
                while rows.next()?.is_some() {}
                Ok(())
            });
            let hit = match outcome {
                Ok(()) => false,
                Err(e) if e.to_string().contains("hit!") => true,
                // A syntax or binder error: the statement never ran.
                Err(_) => continue,
            };
            ran += 1;
            if hit {
                called += 1
            } else {
                not_called += 1
            }
            let guard_sees_call = Outline::duckdb(&sql).calls.iter().any(|c| c == "error");
            if guard_sees_call != hit {
                mismatches.push(format!(
                    "  {sql:?}: DuckDB called error(): {hit}, guard sees the call: {guard_sees_call}"
                ));
            }
        }
        // Text DuckDB accepts with the call hidden (in a comment, a string, a
        // name) is rarer than text where it runs: 3000 statements give ~40.
        report("DuckDB calls", ran, (called, not_called), 25, &mismatches);
    }

    /// The review's DuckDB examples and their variants.
    const DUCKDB_EVERY_ROW: &[&str] = &[
        "DELETE FROM t /* /* */ WHERE */",
        "DELETE FROM t /* /* /* */ */ WHERE id = 2 */",
        "DELETE FROM t RETURNING $$ WHERE id = 2 $$",
        "DELETE FROM t RETURNING $q$ WHERE id = 2 $q$",
        "DELETE FROM t RETURNING E'\\' WHERE id = 2 '",
        "DELETE FROM t AS `x WHERE`",
        "DELETE FROM t AS x\u{85}WHERE",
        "DELETE FROM t /* ' */ AS x\u{a0}WHERE",
        "DELETE FROM t RETURNING E'\\'' AS x\u{3000}WHERE",
        "DELETE FROM t RETURNING [id, 2] -- WHERE id = 2",
        "UPDATE t SET v = 1 /* /* */ WHERE id = 2 */",
        "UPDATE t SET v = length($$ WHERE id = 2 $$) * 0 + 1",
    ];

    #[tokio::test]
    async fn duckdb_engine_refuses_every_row_variants_and_keeps_the_rows() {
        let (_dir, path) = files::duckdb::fixture(
            "CREATE TABLE t (id INTEGER, v INTEGER); INSERT INTO t VALUES (1, 0), (2, 0), (3, 0);",
        );
        let engine = files::duckdb::engine_on(&path, |config| {
            config.read_only = false;
            config.protection.blocked_functions = vec![pgmcp::FunctionPattern::new("random")];
        });
        for sql in DUCKDB_EVERY_ROW {
            assert_refused(
                run(&engine, sql).await,
                sql,
                &[Rule::DeleteWithoutWhere, Rule::UpdateWithoutWhere],
            );
            let out = run(
                &engine,
                "SELECT count(*) AS n, count(*) FILTER (WHERE v = 1) AS s FROM t",
            )
            .await
            .unwrap();
            assert_eq!(
                serde_json::to_value(&out.rows).unwrap(),
                serde_json::json!([{"n": 3, "s": 0}]),
                "{sql:?} changed rows"
            );
        }
        for sql in [
            "SELECT [random()]",
            "SELECT {'a': random()}",
            "SELECT [1, [random /* */ ()]]",
            "SELECT \"random\"()",
        ] {
            assert_refused(run(&engine, sql).await, sql, &[Rule::BlockedFunction]);
        }
        let out = run(&engine, "DELETE FROM t /* /* */ */ WHERE id = 2").await.unwrap();
        assert_eq!(out.rows_affected, Some(1));
    }
}
