//! The embedded engines' adversarial corpus, `fixtures/guard/embedded.jsonl`:
//! SQL written to get past the SQLite and DuckDB guards (and reads they must
//! keep allowing), each run end to end through a library engine on a fresh
//! copy of a real file, and the files looked at afterwards.
//!
//! One JSON object a line:
//!
//! - `engine`: `sqlite` or `duckdb`;
//! - `sql`: the query; `{dir}` stands for the directory the database file
//!   is in (where `config.json`, a stand-in for pgmcp's own config, waits to
//!   be overwritten);
//! - `expect`: `allow`, or the name of the rule that must refuse it;
//! - `policy` (optional, default `default`): `read_only` for read-only mode,
//!   else read-write mode, then `+`-joined switches to turn on
//!   ([`crate::support::protection::apply`]);
//! - `note` (optional): the route it tries.
//!
//! A refused case must leave every byte of the database file, the names in
//! its directory and `config.json` as they were. Every case runs, and a
//! failure lists all of them.

use std::path::Path;
use std::sync::LazyLock;

use pgmcp::{Config, Engine, Error, Rule};
use serde::Deserialize;

use crate::support::engine::run;
use crate::support::files::{self, snapshot};
use crate::support::protection;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/guard/embedded.jsonl");

/// The bait beside the database: what a `COPY ... TO` into pgmcp's config
/// would overwrite.
const BAIT: &str = r#"{"server": {"read_only": true}}"#;

const SQLITE_SETUP: &str = "
    CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
    INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
    CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
    INSERT INTO u VALUES (1, 'u1'), (2, 'u2'), (3, 'u3');
    CREATE TABLE r (id INTEGER PRIMARY KEY ON CONFLICT REPLACE, v TEXT NOT NULL);
    INSERT INTO r VALUES (1, 'a'), (2, 'b'), (3, 'c');
    CREATE TABLE w (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v TEXT);
    INSERT INTO w VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z');
    CREATE INDEX tv ON t (v);
    CREATE VIEW tv_view AS SELECT * FROM t;
";

#[cfg(feature = "duckdb")]
const DUCKDB_SETUP: &str = "
    CREATE TABLE t (id INTEGER PRIMARY KEY, v VARCHAR, s STRUCT(\"where\" VARCHAR));
    INSERT INTO t VALUES (1, 'a', {'where': 'w'}), (2, 'b', {'where': 'w'}), (3, 'c', {'where': 'w'});
    CREATE TABLE u (id INTEGER, c VARCHAR, x INTEGER);
    INSERT INTO u VALUES (1, 'p', 10), (2, 'q', 20), (3, 'p', 30);
    CREATE SEQUENCE seq;
    CREATE VIEW quiet AS SELECT * FROM checkpoint();
    CREATE MACRO tidy() AS TABLE SELECT * FROM force_checkpoint();
    CREATE MACRO twice(x) AS x * 2;
";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    engine: String,
    sql: String,
    expect: String,
    policy: Option<String>,
    #[allow(dead_code)]
    note: Option<String>,
}

static CASES: LazyLock<Vec<Case>> = LazyLock::new(|| {
    let text = std::fs::read_to_string(CORPUS).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("embedded.jsonl:{}: {e}", i + 1)))
        .collect()
});

/// The engine a case's policy describes, on `path`.
fn engine_for(kind: &str, path: &Path, policy: &str) -> Engine {
    let read_only = policy.split('+').any(|t| t == "read_only");
    let switches: Vec<&str> = policy.split('+').filter(|t| *t != "read_only").collect();
    let switches = if switches.is_empty() {
        "default".to_string()
    } else {
        switches.join("+")
    };
    let edit = |c: &mut Config| {
        c.read_only = read_only;
        protection::apply(&mut c.protection, &switches).unwrap_or_else(|e| panic!("{e}"));
    };
    match kind {
        "sqlite" => files::sqlite::engine_on(path, edit),
        #[cfg(feature = "duckdb")]
        "duckdb" => files::duckdb::engine_on(path, edit),
        other => panic!("unknown engine {other}"),
    }
}

/// Runs every case of `kind` on a fresh copy of `template`; the failures.
async fn run_cases(kind: &str, template: &Path) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for case in CASES.iter().filter(|c| c.engine == kind) {
        count += 1;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(template.file_name().unwrap());
        std::fs::copy(template, &path).unwrap();
        let bait = dir.path().join("config.json");
        std::fs::write(&bait, BAIT).unwrap();
        let before = snapshot(&path);
        let sql = case.sql.replace("{dir}", &dir.path().display().to_string());
        let policy = case.policy.as_deref().unwrap_or("default");
        let engine = engine_for(kind, &path, policy);
        let result = run(&engine, &sql).await;
        drop(engine);
        let label = format!("{kind} [{policy}] {sql}");
        match (case.expect.as_str(), &result) {
            ("allow", Ok(_)) => {}
            ("allow", Err(e)) => failures.push(format!("{label}: refused: {e}")),
            (rule, Err(e)) => match e.kind() {
                Error::Guard(v) if Some(v.rule) == Rule::from_name(rule) => {
                    let after = snapshot(&path);
                    if after != before {
                        failures.push(format!("{label}: refused, but the file or its directory changed"));
                    }
                    if std::fs::read_to_string(&bait).ok().as_deref() != Some(BAIT) {
                        failures.push(format!("{label}: refused, but config.json changed"));
                    }
                }
                Error::Guard(v) => {
                    failures.push(format!("{label}: refused by {}, expected {rule}: {e}", v.rule.name()))
                }
                _ => failures.push(format!("{label}: expected {rule}, got another error: {e}")),
            },
            (rule, Ok(out)) => failures.push(format!("{label}: ran ({out:?}), expected {rule}")),
        }
    }
    (count, failures)
}

fn assert_clean(kind: &str, count: usize, failures: &[String]) {
    assert!(count >= 20, "{kind}: only {count} cases in embedded.jsonl");
    assert!(
        failures.is_empty(),
        "{kind}: {} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_case_names_a_known_engine_rule_and_policy() {
    for case in CASES.iter() {
        assert!(matches!(case.engine.as_str(), "sqlite" | "duckdb"), "{case:?}");
        assert!(
            case.expect == "allow" || Rule::from_name(&case.expect).is_some(),
            "{case:?}"
        );
        let policy = case.policy.as_deref().unwrap_or("default");
        protection::policy(policy).unwrap_or_else(|e| panic!("{case:?}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sqlite_corpus() {
    let (_dir, template) = files::sqlite::fixture(SQLITE_SETUP);
    let (count, failures) = run_cases("sqlite", &template).await;
    assert_clean("sqlite", count, &failures);
}

#[cfg(feature = "duckdb")]
#[tokio::test(flavor = "multi_thread")]
async fn the_duckdb_corpus() {
    let (_dir, template) = files::duckdb::fixture(DUCKDB_SETUP);
    let (count, failures) = run_cases("duckdb", &template).await;
    assert_clean("duckdb", count, &failures);
}
