//! The guard never panics and always returns a verdict, whatever string it is
//! given: arbitrary bytes, SQL-shaped token soup, random edits of the corpus,
//! and inputs built to exhaust the parser (size, nesting, a NUL byte). Two
//! properties go further and check verdicts: a blocked call anywhere in a
//! random expression is refused, and so is a `DELETE`/`UPDATE` without `WHERE`
//! however deep it is wrapped. Pure: no database, nothing written to disk.

use pgmcp::testing::guard::{self, Judge, Mode};
use pgmcp::{Policy, Rule, Violation};
static FACTS: std::sync::LazyLock<guard::Routines> = std::sync::LazyLock::new(crate::support::pg15_routines);

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::TestRunner;

/// Enough cases to reach every shape below, few enough that the file runs in
/// seconds in a debug build. `failure_persistence: None`: nothing on disk.
/// A fixed seed makes every run (and CI) test the same inputs, so a failure
/// is reproducible rather than an occasional red build; change the seed to
/// explore new inputs locally.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 512,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5047_4d43_5000),
        ..ProptestConfig::default()
    }
}

/// The default policy's verdict on `sql`, after asserting what must hold for
/// any input: the same verdict twice (the guard is pure), a known rule with a
/// message, and the permissive policy refusing only by the always-on rules
/// (parse, multi-statement), with the same verdict the default policy gets for
/// those.
fn verdict(sql: &str) -> Result<(), Violation> {
    let strict = guard::check(&Judge::new(Policy::default(), Mode::ReadWrite), &FACTS, sql).map(|_| ());
    let again = guard::check(&Judge::new(Policy::default(), Mode::ReadWrite), &FACTS, sql).map(|_| ());
    assert_eq!(strict, again, "two verdicts for {sql:?}");
    if let Err(v) = &strict {
        assert!(
            Rule::ALL.contains(&v.rule) && !v.message.is_empty(),
            "{v:?} for {sql:?}"
        );
    }
    let loose = guard::check(&Judge::new(Policy::permissive(), Mode::ReadWrite), &FACTS, sql).map(|_| ());
    if let Err(v) = &loose {
        assert!(always_on(v.rule), "the permissive policy refused {sql:?} with {v:?}");
    }
    if loose.is_err() || rule_of(&strict).is_some_and(always_on) {
        assert_eq!(strict, loose, "an always-on rule depends on the policy for {sql:?}");
    }
    strict
}

/// [`verdict`], for inputs where any verdict will do.
fn gets_a_verdict(sql: &str) {
    let _ = verdict(sql);
}

fn always_on(rule: Rule) -> bool {
    matches!(rule, Rule::Parse | Rule::MultiStatement)
}

fn rule_of(result: &Result<(), Violation>) -> Option<Rule> {
    result.as_ref().err().map(|v| v.rule)
}

// ---------------------------------------------------------------- any input

proptest! {
    #![proptest_config(config())]

    /// Bytes, including invalid UTF-8 (replaced by U+FFFD) and NUL.
    #[test]
    fn arbitrary_bytes_get_a_verdict(bytes in vec(any::<u8>(), 0..400)) {
        let sql = String::from_utf8_lossy(&bytes);
        let got = verdict(&sql);
        if sql.contains('\0') {
            prop_assert_eq!(rule_of(&got), Some(Rule::Parse));
        }
    }

    /// Any characters, control and non-ASCII ones included.
    #[test]
    fn arbitrary_text_gets_a_verdict(sql in proptest::string::string_regex("(?s).{0,300}").unwrap()) {
        gets_a_verdict(&sql);
    }

    /// Keywords, punctuation, quotes, comments and dollar quotes in any order:
    /// mostly broken SQL, some of it valid, much of it with unbalanced quotes.
    #[test]
    fn token_soup_gets_a_verdict(tokens in vec((select(VOCABULARY), select(SEPARATORS)), 0..48)) {
        let sql: String = tokens.iter().flat_map(|(token, sep)| [*token, *sep]).collect();
        gets_a_verdict(&sql);
    }
}

const VOCABULARY: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "WITH",
    "AS",
    "RECURSIVE",
    "DELETE",
    "UPDATE",
    "SET",
    "INSERT",
    "INTO",
    "VALUES",
    "MERGE",
    "USING",
    "ON",
    "WHEN",
    "MATCHED",
    "THEN",
    "DROP",
    "TABLE",
    "TRUNCATE",
    "DO",
    "COPY",
    "TO",
    "STDOUT",
    "STDIN",
    "PROGRAM",
    "CREATE",
    "FUNCTION",
    "RULE",
    "PREPARE",
    "EXPLAIN",
    "ANALYZE",
    "ALTER",
    "SYSTEM",
    "LOAD",
    "RESET",
    "ALL",
    "BEGIN",
    "READ",
    "WRITE",
    "ONLY",
    "TRANSACTION",
    "CALL",
    "RETURNING",
    "LATERAL",
    "UNION",
    "CASE",
    "END",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "t",
    "x",
    "users",
    "pg_read_file",
    "pg_catalog.pg_ls_dir",
    "\"lo_import\"",
    "set_config",
    "lower",
    "default_transaction_read_only",
    "(",
    ")",
    "(",
    ")",
    ",",
    ";",
    ";",
    ".",
    "*",
    "=",
    "+",
    "-",
    "::",
    "[",
    "]",
    "1",
    "0.5",
    "$1",
    "'",
    "''",
    "'x'",
    "E'\\''",
    "E'\\\\'",
    "\"",
    "\"q\"",
    "U&\"\\0070g\"",
    "U&'\\0027'",
    "$$",
    "$$",
    "$t$",
    "$a$",
    "/*",
    "*/",
    "--",
    "\n",
    "\\",
    "\u{0}",
    "é",
    "\u{feff}",
];

const SEPARATORS: &[&str] = &[" ", " ", "", "\n", "\t", "/**/", "--\n"];

// ---------------------------------------------------------------- corpus edits

/// One edit: insert a character before a position, or delete the character at it.
#[derive(Debug, Clone)]
enum Edit {
    Insert(Index, char),
    Delete(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Characters that change how SQL lexes, and any character at all.
    let lexical = select(vec![
        '\'', '"', '$', ';', '-', '/', '*', '(', ')', '\\', '\n', ' ', 'E', 'U', '&', ':', '\0',
    ]);
    let ch = prop_oneof![3 => lexical, 1 => any::<char>()];
    prop_oneof![
        (any::<Index>(), ch).prop_map(|(at, c)| Edit::Insert(at, c)),
        any::<Index>().prop_map(Edit::Delete),
    ]
}

fn apply(seed: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for edit in edits {
        match edit {
            Edit::Insert(at, c) => chars.insert(at.index(chars.len() + 1), *c),
            Edit::Delete(at) if !chars.is_empty() => {
                chars.remove(at.index(chars.len()));
            }
            Edit::Delete(_) => {}
        }
    }
    chars.into_iter().collect()
}

/// The corpus's SQL, as seeds: every kind of statement the guard knows about.
fn corpus_sql() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/guard/corpus.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    let seeds: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|case| case.get("sql")?.as_str().map(str::to_owned))
        .collect();
    assert!(!seeds.is_empty(), "no SQL in {path}");
    seeds
}

#[test]
fn edited_corpus_cases_get_a_verdict() {
    let seeds = corpus_sql();
    let mut runner = TestRunner::new(config());
    let result = runner.run(&(any::<Index>(), vec(edit(), 1..8)), |(seed, edits)| {
        gets_a_verdict(&apply(&seeds[seed.index(seeds.len())], &edits));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------- verdicts that must hold

/// A random expression with one `HOLE` somewhere inside it.
fn expression() -> impl Strategy<Value = String> {
    Just("HOLE".to_owned()).prop_recursive(4, 24, 2, |inner| {
        let operand = select(vec!["1", "x", "'s'", "$1", "NULL", "t.c", "now()"]);
        let operator = select(vec![
            "+",
            "||",
            "=",
            "<>",
            "AND",
            "OR",
            "IS DISTINCT FROM",
            "LIKE",
            "->>",
        ]);
        let function = select(vec![
            "lower",
            "upper",
            "md5",
            "length",
            "concat",
            "coalesce",
            "pg_catalog.btrim",
        ]);
        prop_oneof![
            (function, inner.clone()).prop_map(|(f, e)| format!("{f}({e})")),
            (inner.clone(), operator, operand, any::<bool>()).prop_map(|(e, op, o, hole_left)| {
                if hole_left {
                    format!("({e}) {op} {o}")
                } else {
                    format!("{o} {op} ({e})")
                }
            }),
            inner.clone().prop_map(|e| format!("(SELECT {e})")),
            inner
                .clone()
                .prop_map(|e| format!("(SELECT y FROM t WHERE ({e}) IS NOT NULL)")),
            inner
                .clone()
                .prop_map(|e| format!("EXISTS (SELECT 1 FROM t GROUP BY {e})")),
            inner
                .clone()
                .prop_map(|e| format!("CASE WHEN ({e}) IS NULL THEN 1 ELSE 2 END")),
            inner.clone().prop_map(|e| format!("CASE x WHEN 1 THEN {e} END")),
            inner.clone().prop_map(|e| format!("COALESCE(NULL, {e})")),
            inner.clone().prop_map(|e| format!("ARRAY[1, {e}]")),
            inner.clone().prop_map(|e| format!("ROW(1, {e})")),
            inner.clone().prop_map(|e| format!("CAST({e} AS text)")),
            inner.clone().prop_map(|e| format!("({e})::text")),
            inner
                .clone()
                .prop_map(|e| format!("count(*) FILTER (WHERE ({e}) IS NULL)")),
            inner.clone().prop_map(|e| format!("sum(x) OVER (PARTITION BY {e})")),
            inner.clone().prop_map(|e| format!("x IN (1, {e})")),
            inner.clone().prop_map(|e| format!("json_build_object('k', {e})")),
        ]
    })
}

/// Statements with an `EXPR` slot, in every clause an expression can take.
const STATEMENTS: &[&str] = &[
    "SELECT EXPR",
    "SELECT * FROM t WHERE (EXPR) IS NOT NULL",
    "SELECT count(*) FROM t GROUP BY EXPR HAVING (EXPR) IS NULL",
    "SELECT * FROM t ORDER BY EXPR LIMIT 1",
    "SELECT * FROM t, LATERAL (SELECT EXPR) l",
    "SELECT * FROM t JOIN u ON (EXPR) IS NULL",
    "SELECT * FROM ROWS FROM (generate_series(1, 2)) g WHERE g = (EXPR)",
    "WITH c AS (SELECT EXPR) SELECT * FROM c",
    "SELECT 1 UNION ALL SELECT EXPR",
    "VALUES (1, EXPR)",
    "INSERT INTO t (x) VALUES (EXPR) RETURNING *",
    // With a WHERE of its own: a query-fed upsert without one amounts to an
    // UPDATE without WHERE, which the default policy refuses first.
    "INSERT INTO t SELECT EXPR ON CONFLICT (id) DO UPDATE SET x = EXPR WHERE t.id = 1",
    "INSERT INTO t VALUES (EXPR) ON CONFLICT (id) DO UPDATE SET x = EXPR",
    "UPDATE t SET x = EXPR WHERE id = 1",
    "UPDATE t SET x = 1 WHERE id = (EXPR)",
    "DELETE FROM t WHERE id = 1 RETURNING EXPR",
    "CREATE TABLE n (x text DEFAULT (EXPR))",
    "CREATE TABLE n (x text CHECK ((EXPR) IS NOT NULL))",
    "CREATE INDEX i ON t ((EXPR))",
    "CREATE VIEW v AS SELECT EXPR",
    "CREATE TABLE n AS SELECT EXPR",
    "COPY (SELECT EXPR) TO STDOUT",
    "EXPLAIN ANALYZE SELECT EXPR",
    "DECLARE c CURSOR FOR SELECT EXPR",
    "CALL p(EXPR)",
];

/// Blocked calls, spelled every way the guard must see through.
const BLOCKED_CALLS: &[&str] = &[
    "pg_read_file('/etc/passwd')",
    "pg_catalog.pg_read_file('/etc/passwd')",
    "\"pg_catalog\".\"pg_ls_dir\"('.')",
    "PG_STAT_FILE('x')",
    "\"lo_import\"('/etc/passwd')",
    "U&\"\\0070g_read_file\"('/etc/passwd')",
    "dblink_exec('dbname=postgres', 'DROP TABLE t')",
    "set_config('default_transaction_read_only', 'off', false)",
    "query_to_xml('DELETE FROM t RETURNING 1', true, false, '')",
];

proptest! {
    #![proptest_config(config())]

    /// The same random statement refused with a blocked call in its hole and
    /// allowed with a harmless one.
    #[test]
    fn a_blocked_call_anywhere_is_refused(
        statement in select(STATEMENTS),
        expr in expression(),
        call in select(BLOCKED_CALLS),
    ) {
        let harmless = statement.replace("EXPR", &expr.replace("HOLE", "lower('x')"));
        prop_assert_eq!(verdict(&harmless), Ok(()), "{}", harmless);
        let blocked = statement.replace("EXPR", &expr.replace("HOLE", call));
        prop_assert_eq!(rule_of(&verdict(&blocked)), Some(Rule::BlockedFunction), "{}", blocked);
    }

    /// A `DELETE` or `UPDATE` without `WHERE`, wrapped in CTEs, subqueries,
    /// set operations, `COPY`, `EXPLAIN ANALYZE`, `PREPARE`, a view or a
    /// cursor, is still refused, and allowed once it has a `WHERE` clause.
    #[test]
    fn dml_without_where_is_refused_however_wrapped(
        dml in select(vec![
            ("DELETE FROM t", Rule::DeleteWithoutWhere),
            ("UPDATE t SET x = 1", Rule::UpdateWithoutWhere),
        ]),
        queries in vec(select(QUERY_WRAPPERS), 0..4),
        statement in select(STATEMENT_WRAPPERS),
    ) {
        let (body, rule) = dml;
        // Flags that let every wrapper itself through.
        let judge = Judge::new(Policy::default().allowing(&[Rule::Prepare, Rule::CreateRule]), Mode::ReadWrite);
        let wrap = |dml: String| {
            let query = queries.iter().fold(
                format!("WITH d AS ({dml} RETURNING *) SELECT * FROM d"),
                |q, wrapper| wrapper.replace("Q", &q),
            );
            statement.replace("Q", &query)
        };
        let without = wrap(body.to_owned());
        gets_a_verdict(&without);
        let got = guard::check(&judge, &FACTS, &without).map(|_| ());
        prop_assert_eq!(rule_of(&got), Some(rule), "{}", without);
        let with = wrap(format!("{body} WHERE id = 1"));
        prop_assert_eq!(guard::check(&judge, &FACTS, &with).map(|_| ()), Ok(()), "{}", with);
    }
}

/// A query `Q` inside a bigger query.
const QUERY_WRAPPERS: &[&str] = &[
    "WITH w AS (Q) SELECT * FROM w",
    "WITH a AS (SELECT 1), w AS (Q) SELECT * FROM a, w",
    "SELECT * FROM (Q) s",
    "SELECT * FROM t WHERE x IN (Q)",
    "SELECT (SELECT count(*) FROM (Q) s)",
    "Q UNION ALL SELECT 1",
    "SELECT 1 EXCEPT (Q)",
    "SELECT * FROM t, LATERAL (Q) l",
];

/// A statement that runs (or keeps) a query `Q`.
const STATEMENT_WRAPPERS: &[&str] = &[
    "Q",
    "EXPLAIN ANALYZE Q",
    "EXPLAIN (ANALYZE, FORMAT json) Q",
    "COPY (Q) TO STDOUT",
    "PREPARE p AS Q",
    "CREATE TABLE n AS Q",
    "CREATE MATERIALIZED VIEW m AS Q",
    "CREATE VIEW v AS Q",
    "DECLARE c CURSOR FOR Q",
    "CREATE RULE r AS ON INSERT TO t DO ALSO Q",
];

// ---------------------------------------------------------------- inputs built to exhaust the parser

const MB: usize = 1 << 20;

/// Refused only by the always-on `parse` rule, or allowed.
fn parse_or_allowed(name: &str, sql: &str) {
    let got = verdict(sql);
    assert!(
        matches!(rule_of(&got), None | Some(Rule::Parse)),
        "{name}: got {:?}",
        got.map_err(|v| v.rule)
    );
}

/// Refused, by whichever rule: too deep to check, or the blocked call it hides.
fn refused(name: &str, sql: &str) {
    let got = verdict(sql);
    assert!(
        matches!(rule_of(&got), Some(Rule::Parse | Rule::BlockedFunction)),
        "{name}: got {:?}",
        got.map_err(|v| v.rule)
    );
}

fn additions(last: &str) -> String {
    let mut sql = String::from("SELECT 1");
    while sql.len() < MB {
        sql.push_str(" + 1");
    }
    sql.push_str(" + ");
    sql.push_str(last);
    sql
}

fn parentheses(depth: usize, inner: &str) -> String {
    format!("SELECT {}{inner}{}", "(".repeat(depth), ")".repeat(depth))
}

fn subqueries(depth: usize, inner: &str) -> String {
    (0..depth).fold(format!("SELECT {inner}"), |q, i| format!("SELECT * FROM ({q}) s{i}"))
}

#[test]
fn a_megabyte_of_additions() {
    parse_or_allowed("1 + 1 + ...", &additions("1"));
    refused(
        "1 + 1 + ... + pg_read_file()",
        &additions("pg_read_file('/etc/passwd')"),
    );
}

#[test]
fn a_megabyte_string_literal() {
    let sql = format!("SELECT '{}'", "x".repeat(MB));
    assert_eq!(verdict(&sql), Ok(()));
    let sql = format!("SELECT $${}; DROP TABLE t; $$", "x".repeat(MB));
    assert_eq!(verdict(&sql), Ok(()));
}

#[test]
fn ten_thousand_nested_parentheses() {
    parse_or_allowed("10,000 parentheses", &parentheses(10_000, "1"));
    refused(
        "10,000 parentheses around pg_read_file()",
        &parentheses(10_000, "pg_read_file('x')"),
    );
    // Parentheses leave no node behind: a hundred of them hide nothing.
    let got = verdict(&parentheses(100, "pg_read_file('x')"));
    assert_eq!(rule_of(&got), Some(Rule::BlockedFunction));
}

#[test]
fn five_hundred_nested_subqueries() {
    parse_or_allowed("500 subqueries", &subqueries(500, "1"));
    refused(
        "500 subqueries around pg_read_file()",
        &subqueries(500, "pg_read_file('x')"),
    );
}

#[test]
fn a_hundred_thousand_semicolons() {
    let got = verdict(&";".repeat(100_000));
    assert_eq!(rule_of(&got), Some(Rule::Parse), "nothing but empty statements");
    let got = verdict(&format!("{}SELECT 1{}", ";".repeat(50_000), ";".repeat(50_000)));
    assert_eq!(got, Ok(()), "one statement among empty ones");
}

#[test]
fn a_nul_byte_in_the_middle() {
    for sql in [
        "SELECT 1\0; DROP TABLE t",
        "SELECT '\0'",
        "\0",
        "DELETE FROM t WHERE id = 1\0",
    ] {
        let got = verdict(sql);
        assert_eq!(rule_of(&got), Some(Rule::Parse), "{sql:?}");
    }
}
