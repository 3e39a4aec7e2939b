//! Every PostgreSQL type family through the whole pipeline (`Engine::query` on
//! the harness's server), asserting the exact JSON text of the rows and each
//! column's type name: the rule of `src/backend/postgres/value.rs`, checked
//! against what the server really prints. Then three properties of that rule:
//! the output does not move when the database's own settings do, every value
//! goes back in as a parameter and means the same thing, and sanitization
//! reaches the strings the conversion made but never its numbers.
//!
//! Each family collects every mismatch before it panics, so one run shows
//! every problem: the SQL, the value, what was expected and what came back.

use pgmcp::{Config, Engine, QueryInput, QueryOutput, SanitizeRule};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use regex::Regex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::support::engine::engine_for;
use crate::support::pg::{self, TestDb};

// ---------------------------------------------------------------- the check

/// What one query must return.
enum Case {
    /// A table with one column `v` declared `declared`, one row per
    /// `(SQL expression, expected JSON text)` pair, inserted in that order and
    /// read back with `SELECT v ... ORDER BY id`. The column's reported type
    /// must be `type_name`.
    Column {
        declared: String,
        type_name: String,
        values: Vec<(String, String)>,
    },
    /// A query and the exact JSON text of each row it must return.
    Query {
        sql: String,
        types: Vec<String>,
        rows: Vec<String>,
    },
    /// A case for a type or value the server has only from this major
    /// version on (multiranges and numeric infinities came in 14).
    Since(u32, Box<Case>),
}

fn column(declared: &str, type_name: &str, values: &[(&str, &str)]) -> Case {
    Case::Column {
        declared: declared.to_owned(),
        type_name: type_name.to_owned(),
        values: values.iter().map(|(e, j)| (e.to_string(), j.to_string())).collect(),
    }
}

fn query(sql: &str, types: &[&str], rows: &[&str]) -> Case {
    Case::Query {
        sql: sql.to_owned(),
        types: types.iter().map(|t| t.to_string()).collect(),
        rows: rows.iter().map(|r| r.to_string()).collect(),
    }
}

impl Case {
    /// This case only on PostgreSQL `major` and later.
    fn since(self, major: u32) -> Case {
        Case::Since(major, Box::new(self))
    }

    /// What the case is about, for the line that says it was left out.
    fn subject(&self) -> String {
        match self {
            Case::Column { declared, values, .. } => {
                let exprs: Vec<&str> = values.iter().map(|(e, _)| e.as_str()).collect();
                format!("{declared} {}", exprs.join(", "))
            }
            Case::Query { sql, .. } => sql.clone(),
            Case::Since(_, case) => case.subject(),
        }
    }

    /// One more `(SQL expression, expected JSON)` row, for values built in code.
    fn and(mut self, expr: impl Into<String>, expected: impl Into<String>) -> Case {
        if let Case::Column { values, .. } = &mut self {
            values.push((expr.into(), expected.into()));
        }
        self
    }
}

/// One family's database and engine, and every mismatch seen so far.
struct Family {
    name: &'static str,
    db: TestDb,
    engine: Engine,
    tables: usize,
    problems: Vec<String>,
}

impl Family {
    /// A fresh database with `setup` run in it by psql, and an engine on it
    /// with built-in defaults.
    fn new(name: &'static str, setup: &str) -> Family {
        Family::with_config(name, setup, |_| {})
    }

    fn with_config(name: &'static str, setup: &str, edit: impl FnOnce(&mut Config)) -> Family {
        let db = pg::server().database();
        if !setup.is_empty() {
            db.psql(setup);
        }
        let engine = engine_for(&db, edit);
        Family {
            name,
            db,
            engine,
            tables: 0,
            problems: Vec::new(),
        }
    }

    /// Run every case, recording (not panicking on) each mismatch.
    async fn check(&mut self, cases: Vec<Case>) {
        // All tables in one psql run: one process instead of one per case.
        let mut script = String::new();
        let mut planned = Vec::new();
        let major = self.db.major();
        let cases = cases.into_iter().filter_map(|case| match case {
            Case::Since(since, case) if major < since => {
                println!("{}: PostgreSQL {major} has no {}", self.name, case.subject());
                None
            }
            Case::Since(_, case) => Some(*case),
            case => Some(case),
        });
        for case in cases {
            match case {
                Case::Column {
                    declared,
                    type_name,
                    values,
                } => {
                    self.tables += 1;
                    let table = format!("c{}", self.tables);
                    script.push_str(&format!(
                        "CREATE TABLE {table} (id serial PRIMARY KEY, v {declared});\n"
                    ));
                    for (expr, _) in &values {
                        script.push_str(&format!("INSERT INTO {table} (v) VALUES ({expr});\n"));
                    }
                    let labels = values.iter().map(|(e, _)| format!("{e} as {declared}")).collect();
                    let rows = values.iter().map(|(_, j)| format!(r#"{{"v":{j}}}"#)).collect();
                    planned.push((
                        format!("SELECT v FROM {table} ORDER BY id"),
                        vec![type_name],
                        rows,
                        labels,
                    ));
                }
                Case::Query { sql, types, rows } => planned.push((sql, types, rows, Vec::new())),
                Case::Since(..) => unreachable!("unwrapped above"),
            }
        }
        if !script.is_empty() {
            self.db.psql(&script);
        }
        for (sql, types, rows, labels) in planned {
            self.expect(&sql, &types, &rows, &labels).await;
        }
    }

    /// Compare one query's column types and the JSON text of its rows.
    /// `labels` name each expected row (the SQL that made it) in messages.
    async fn expect(&mut self, sql: &str, types: &[String], rows: &[String], labels: &[String]) {
        let out = match run(&self.engine, sql, vec![]).await {
            Ok(out) => out,
            Err(e) => {
                self.problems.push(format!("{sql}\n  failed: {e}"));
                return;
            }
        };
        let mut found = Vec::new();
        let got_types: Vec<&str> = out.columns.iter().map(|c| c.type_name.as_str()).collect();
        if got_types != types {
            found.push(format!("  types: expected {types:?}\n            got {got_types:?}"));
        }
        let got_rows: Vec<String> = out.rows.iter().map(|r| serde_json::to_string(r).unwrap()).collect();
        for i in 0..rows.len().max(got_rows.len()) {
            let (expected, got) = (rows.get(i), got_rows.get(i));
            if expected != got {
                let label = labels
                    .get(i)
                    .map(|l| format!(" ({})", shorten(l, 160)))
                    .unwrap_or_default();
                found.push(format!(
                    "  row {}{label}:\n    expected {}\n         got {}",
                    i + 1,
                    expected.map_or("(no row)".into(), |s| shorten(s, 1000)),
                    got.map_or("(no row)".into(), |s| shorten(s, 1000))
                ));
            }
        }
        // The rows' JSON text as a whole, exactly as a caller serializes it.
        let whole = serde_json::to_string(&out.rows).unwrap();
        if found.is_empty() && whole != format!("[{}]", rows.join(",")) {
            found.push(format!("  rows as a whole differ: got {whole}"));
        }
        if !found.is_empty() {
            self.problems.push(format!("{sql}\n{}", found.join("\n")));
        }
    }

    /// Run more SQL as the admin, through psql.
    fn setup(&self, sql: &str) -> String {
        self.db.psql(sql)
    }

    fn finish(self) {
        if !self.problems.is_empty() {
            panic!(
                "{}: {} mismatch(es)\n\n{}\n",
                self.name,
                self.problems.len(),
                self.problems.join("\n\n")
            );
        }
    }
}

async fn run(engine: &Engine, sql: &str, params: Vec<Value>) -> Result<QueryOutput, pgmcp::Error> {
    let input = QueryInput {
        database: None,
        sql: sql.into(),
        params,
        limit: None,
    };
    engine.query(&input, CancellationToken::new()).await
}

/// `s`, or its start and how long it is when it would flood the report.
fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}... ({} bytes)", &s[..cut], s.len()),
        None => s.to_owned(),
    }
}

/// `s` as an SQL string literal (sessions pin `standard_conforming_strings=on`).
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Create contrib extensions, or fail saying how to install them.
fn require_extensions(db: &TestDb, names: &[&str]) {
    let list: Vec<String> = names.iter().map(|n| literal(n)).collect();
    let have = db.psql(&format!(
        "SELECT name FROM pg_available_extensions WHERE name IN ({}) ORDER BY name",
        list.join(", ")
    ));
    let missing: Vec<&&str> = names.iter().filter(|n| !have.lines().any(|h| h == **n)).collect();
    assert!(
        missing.is_empty(),
        "the test server lacks the PostgreSQL extension(s) {missing:?}. They are PostgreSQL's contrib modules: \
         on Debian/Ubuntu they ship with the postgresql-NN package (or `apt-get install postgresql-contrib`), \
         on RHEL/Fedora `dnf install postgresql-contrib`; Homebrew and the official Docker images include them"
    );
    let script: String = names.iter().map(|n| format!("CREATE EXTENSION {n};\n")).collect();
    db.psql(&script);
}

// ---------------------------------------------------------------- one test per type family

#[tokio::test(flavor = "multi_thread")]
async fn integers_are_exact_json_numbers() {
    let mut f = Family::new("integers", "");
    f.check(vec![
        column(
            "smallint",
            "smallint",
            &[
                ("0", "0"),
                ("1", "1"),
                ("-1", "-1"),
                ("32767", "32767"),
                ("-32768", "-32768"),
                ("NULL", "null"),
            ],
        ),
        column(
            "integer",
            "integer",
            &[
                ("0", "0"),
                ("1", "1"),
                ("-1", "-1"),
                ("2147483647", "2147483647"),
                ("-2147483648", "-2147483648"),
                ("NULL", "null"),
            ],
        ),
        column(
            "bigint",
            "bigint",
            &[
                ("0", "0"),
                ("1", "1"),
                ("-1", "-1"),
                ("9007199254740993", "9007199254740993"),
                ("9223372036854775807", "9223372036854775807"),
                ("-9223372036854775808", "-9223372036854775808"),
                ("NULL", "null"),
            ],
        ),
        column("serial", "integer", &[("DEFAULT", "1"), ("DEFAULT", "2")]),
        column(
            "bigserial",
            "bigint",
            &[("DEFAULT", "1"), ("9223372036854775807", "9223372036854775807")],
        ),
        column(
            "oid",
            "oid",
            &[("0", "0"), ("4294967295", "4294967295"), ("NULL", "null")],
        ),
        // Computed columns, and the oid alias types, which print names and so stay text.
        query(
            "SELECT 32767::int2 AS a, 2147483647 AS b, 9223372036854775807 AS c, (-9223372036854775808)::int8 AS d, \
             'pg_class'::regclass::oid AS e, 'pg_class'::regclass AS f, 'integer'::regtype AS g",
            &["smallint", "integer", "bigint", "bigint", "oid", "regclass", "regtype"],
            &[
                r#"{"a":32767,"b":2147483647,"c":9223372036854775807,"d":-9223372036854775808,"e":1259,"f":"pg_class","g":"integer"}"#,
            ],
        ),
        query(
            "SELECT ARRAY[9223372036854775807, -9223372036854775808]::int8[] AS a, ARRAY[4294967295]::oid[] AS o",
            &["bigint[]", "oid[]"],
            &[r#"{"a":[9223372036854775807,-9223372036854775808],"o":[4294967295]}"#],
        ),
        // The vector types are arrays to the catalog, but print as psql shows them.
        query(
            "SELECT '1 2'::int2vector AS iv, '23 25'::oidvector AS ov",
            &["int2vector", "oidvector"],
            &[r#"{"iv":"1 2","ov":"23 25"}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn numeric_is_a_string_with_every_digit() {
    let mut f = Family::new("numeric", "");
    f.check(vec![
        column(
            "numeric(20,5)",
            "numeric(20,5)",
            &[
                ("12345.67890", r#""12345.67890""#),
                ("0", r#""0.00000""#),
                ("-99999.99999", r#""-99999.99999""#),
                ("0.00001", r#""0.00001""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "numeric",
            "numeric",
            &[
                ("123456789012345678901234567890", r#""123456789012345678901234567890""#),
                ("0.000000000000000001", r#""0.000000000000000001""#),
                ("1.50", r#""1.50""#),
                ("-0.0", r#""0.0""#),
                ("1.5e3", r#""1500""#),
                ("'NaN'", r#""NaN""#),
                ("NULL", "null"),
            ],
        )
        .and("1e400", format!("\"1{}\"", "0".repeat(400)))
        .and("1e-400", format!("\"0.{}1\"", "0".repeat(399))),
        column(
            "numeric",
            "numeric",
            &[("'Infinity'", r#""Infinity""#), ("'-Infinity'", r#""-Infinity""#)],
        )
        .since(14),
        query(
            "SELECT 1.50 AS a, 12345678901234567890.123456789::numeric(40,9) AS b, 1.5::numeric(10,2) AS c",
            &["numeric", "numeric(40,9)", "numeric(10,2)"],
            &[r#"{"a":"1.50","b":"12345678901234567890.123456789","c":"1.50"}"#],
        ),
    ])
    .await;
    f.finish();
}

/// SQL of newer servers goes through the guard and comes back converted
/// like any other: SQL/JSON (16, 17), `uuidv7` (18). Each case runs on the
/// servers that have it (the suite runs on 13 and 18 as well as the
/// machine's own).
#[tokio::test(flavor = "multi_thread")]
async fn newer_servers_sql_is_read_like_any_other() {
    let mut f = Family::new("newer SQL", "");
    f.check(vec![
        query("SELECT '[1]' IS JSON ARRAY AS a", &["boolean"], &[r#"{"a":true}"#]).since(16),
        query("SELECT JSON_OBJECT('a': 1) AS o", &["json"], &[r#"{"o":{"a":1}}"#]).since(16),
        query(
            "SELECT JSON_VALUE('{\"a\":5}', '$.a' RETURNING int) AS v",
            &["integer"],
            &[r#"{"v":5}"#],
        )
        .since(17),
        query(
            "SELECT x FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (x int PATH '$')) t",
            &["integer"],
            &[r#"{"x":1}"#, r#"{"x":2}"#],
        )
        .since(17),
        query(
            "SELECT uuid_extract_version(uuidv7()) AS v",
            &["smallint"],
            &[r#"{"v":7}"#],
        )
        .since(18),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn floats_are_shortest_exact_numbers_and_specials_strings() {
    let mut f = Family::new("floats", "");
    f.check(vec![
        column(
            "real",
            "real",
            &[
                ("0", "0"),
                ("1.5", "1.5"),
                ("-1.5", "-1.5"),
                ("3.4028235e+38", "3.4028235e+38"),
                ("-3.4028235e+38", "-3.4028235e+38"),
                ("1.17549435e-38", "1.1754944e-38"),
                ("1e-45", "1e-45"),
                ("0.1", "0.1"),
                ("16777217", "1.6777216e+07"),
                ("'-0'", "-0"),
                ("'NaN'", r#""NaN""#),
                ("'Infinity'", r#""Infinity""#),
                ("'-Infinity'", r#""-Infinity""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "double precision",
            "double precision",
            &[
                ("0", "0"),
                ("1.5", "1.5"),
                ("-1.5", "-1.5"),
                ("1.7976931348623157e+308", "1.7976931348623157e+308"),
                ("-1.7976931348623157e+308", "-1.7976931348623157e+308"),
                ("2.2250738585072014e-308", "2.2250738585072014e-308"),
                ("5e-324", "5e-324"),
                ("0.1", "0.1"),
                ("1/3.0", "0.3333333333333333"),
                ("0.1::float8 + 0.2", "0.30000000000000004"),
                ("1e300", "1e+300"),
                ("1e-5", "1e-05"),
                ("123456789012345678", "1.2345678901234568e+17"),
                ("9007199254740993", "9.007199254740992e+15"),
                ("'-0'", "-0"),
                ("'NaN'", r#""NaN""#),
                ("'Infinity'", r#""Infinity""#),
                ("'-Infinity'", r#""-Infinity""#),
                ("NULL", "null"),
            ],
        ),
        query(
            "SELECT 0.1::float4 AS r, 0.1::float8 AS d, 'NaN'::float8 AS n, 1e300::float8 * 10 AS big",
            &["real", "double precision", "double precision", "double precision"],
            &[r#"{"r":0.1,"d":0.1,"n":"NaN","big":1e+301}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn money_keeps_its_c_locale_text() {
    let mut f = Family::new("money", "");
    f.check(vec![
        column(
            "money",
            "money",
            &[
                ("'0'", r#""$0.00""#),
                ("'1234.56'", r#""$1,234.56""#),
                ("'-99.99'", r#""-$99.99""#),
                ("'999999999.99'", r#""$999,999,999.99""#),
                ("'92233720368547758.07'", r#""$92,233,720,368,547,758.07""#),
                ("'-92233720368547758.08'", r#""-$92,233,720,368,547,758.08""#),
                ("NULL", "null"),
            ],
        ),
        query(
            "SELECT ARRAY['1.5'::money, '1000'] AS m",
            &["money[]"],
            &[r#"{"m":["$1.50","$1,000.00"]}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn character_types_are_strings_unchanged() {
    let mut f = Family::new("character types", "");
    f.check(vec![
        column(
            "char(10)",
            "character(10)",
            &[
                ("'hello'", r#""hello     ""#),
                ("''", r#""          ""#),
                ("'ñ'", r#""ñ         ""#),
                ("'日本語'", r#""日本語       ""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "varchar(255)",
            "character varying(255)",
            &[
                ("'hello'", r#""hello""#),
                ("''", r#""""#),
                ("'ñoño'", r#""ñoño""#),
                ("'日本語テスト'", r#""日本語テスト""#),
                ("NULL", "null"),
            ],
        ),
        column("varchar", "character varying", &[("'x'", r#""x""#)]),
        column(
            "text",
            "text",
            &[
                ("'hello'", r#""hello""#),
                ("''", r#""""#),
                (r"E'line1\nline2\r\n'", r#""line1\nline2\r\n""#),
                (
                    r#"E'q"uote back\\slash tab\t ctl\x01 bell\x07 del\x7f <>&'''"#,
                    // JSON escapes control characters, not DEL.
                    "\"q\\\"uote back\\\\slash tab\\t ctl\\u0001 bell\\u0007 del\u{7f} <>&'\"",
                ),
                ("'🎉🚀'", r#""🎉🚀""#),
                ("'héllo 🎉 日本語 مرحبا'", r#""héllo 🎉 日本語 مرحبا""#),
                (
                    "U&'e\\0301 \\+01F468\\200D\\+01F469\\200D\\+01F467'",
                    "\"e\u{301} \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\"",
                ),
                ("E'\\u2028\\uFEFF'", "\"\u{2028}\u{feff}\""),
                // Text that looks like JSON, an array, a number or a keyword stays text.
                (r#"'{"a":1}'"#, r#""{\"a\":1}""#),
                ("'{1,2}'", r#""{1,2}""#),
                ("'123'", r#""123""#),
                ("'true'", r#""true""#),
                ("'NULL'", r#""NULL""#),
                ("NULL", "null"),
            ],
        )
        .and("repeat('x', 10000)", format!("\"{}\"", "x".repeat(10000)))
        .and("repeat('🎉', 2500)", format!("\"{}\"", "🎉".repeat(2500))),
        column("\"char\"", "\"char\"", &[("'a'", r#""a""#), ("NULL", "null")]),
        column("name", "name", &[("'pg_class'", r#""pg_class""#)]),
        query(
            "SELECT 'x'::varchar(3) AS a, 'y'::char(2) AS b, 'z' AS c",
            &["character varying(3)", "character(2)", "text"],
            &[r#"{"a":"x","b":"y ","c":"z"}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn bytea_is_hex_text() {
    let mut f = Family::new("bytea", "");
    f.check(vec![column(
        "bytea",
        "bytea",
        &[
            (r"'\xdeadbeef'", r#""\\xdeadbeef""#),
            ("decode('deadbeef', 'hex')", r#""\\xdeadbeef""#),
            ("decode('', 'hex')", r#""\\x""#),
            (r#"'{"not":"json"}'::bytea"#, r#""\\x7b226e6f74223a226a736f6e227d""#),
            ("decode('00ff7f80', 'hex')", r#""\\x00ff7f80""#),
            ("convert_to('é🎉', 'UTF8')", r#""\\xc3a9f09f8e89""#),
            ("NULL", "null"),
        ],
    )])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn dates_and_times_are_rfc3339_or_postgres_text() {
    let mut f = Family::new("date/time", "");
    f.check(vec![
        column(
            "timestamptz",
            "timestamp with time zone",
            &[
                ("'2024-01-15 10:30:00+05:30'", r#""2024-01-15T05:00:00Z""#),
                ("'epoch'", r#""1970-01-01T00:00:00Z""#),
                ("'9999-12-31 23:59:59.999999+00'", r#""9999-12-31T23:59:59.999999Z""#),
                ("'2024-01-15 05:00:00.5+00'", r#""2024-01-15T05:00:00.5Z""#),
                ("'2024-07-01 12:00:00 America/New_York'", r#""2024-07-01T16:00:00Z""#),
                ("'0001-01-01 00:00:00+00'", r#""0001-01-01T00:00:00Z""#),
                ("'infinity'", r#""infinity""#),
                ("'-infinity'", r#""-infinity""#),
                ("'0044-03-15 12:00:00+00 BC'", r#""0044-03-15 12:00:00+00 BC""#),
                ("'10000-01-01 00:00:00+00'", r#""10000-01-01 00:00:00+00""#),
                (
                    "'294276-12-31 23:59:59.999999+00'",
                    r#""294276-12-31 23:59:59.999999+00""#,
                ),
                ("NULL", "null"),
            ],
        ),
        column(
            "timestamptz(3)",
            "timestamp(3) with time zone",
            &[("'2024-01-15 05:00:00.123456+00'", r#""2024-01-15T05:00:00.123Z""#)],
        ),
        column(
            "timestamp",
            "timestamp without time zone",
            &[
                ("'2024-01-15 10:30:00'", r#""2024-01-15T10:30:00""#),
                ("'2024-01-15 10:30:00+05:30'", r#""2024-01-15T10:30:00""#),
                ("'epoch'", r#""1970-01-01T00:00:00""#),
                ("'9999-12-31 23:59:59.999999'", r#""9999-12-31T23:59:59.999999""#),
                ("'2024-01-15 10:30:00.123'", r#""2024-01-15T10:30:00.123""#),
                ("'infinity'", r#""infinity""#),
                ("'-infinity'", r#""-infinity""#),
                ("'0044-03-15 12:00:00 BC'", r#""0044-03-15 12:00:00 BC""#),
                ("'10000-01-01 00:00:00'", r#""10000-01-01 00:00:00""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "date",
            "date",
            &[
                ("'2024-01-15'", r#""2024-01-15""#),
                ("'epoch'", r#""1970-01-01""#),
                ("'9999-12-31'", r#""9999-12-31""#),
                ("'infinity'", r#""infinity""#),
                ("'-infinity'", r#""-infinity""#),
                ("'0044-03-15 BC'", r#""0044-03-15 BC""#),
                ("'10000-01-01'", r#""10000-01-01""#),
                ("'5874897-12-31'", r#""5874897-12-31""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "time",
            "time without time zone",
            &[
                ("'10:30:00'", r#""10:30:00""#),
                ("'00:00:00'", r#""00:00:00""#),
                ("'23:59:59.999999'", r#""23:59:59.999999""#),
                ("'24:00:00'", r#""24:00:00""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "time(2)",
            "time(2) without time zone",
            &[("'10:30:00.456'", r#""10:30:00.46""#)],
        ),
        column(
            "timetz",
            "time with time zone",
            &[
                ("'10:30:00+05:30'", r#""10:30:00+05:30""#),
                ("'00:00:00+00'", r#""00:00:00+00""#),
                ("'23:59:59.999999-07'", r#""23:59:59.999999-07""#),
                ("'12:00:00+05:45:30'", r#""12:00:00+05:45:30""#),
                ("NULL", "null"),
            ],
        ),
        query(
            "SELECT '2024-01-15 10:30:00+05:30'::timestamptz AS tz, '2024-01-15 10:30:00'::timestamp AS ts, \
             '2024-01-15'::date AS d, 'infinity'::timestamptz AS inf",
            &[
                "timestamp with time zone",
                "timestamp without time zone",
                "date",
                "timestamp with time zone",
            ],
            &[r#"{"tz":"2024-01-15T05:00:00Z","ts":"2024-01-15T10:30:00","d":"2024-01-15","inf":"infinity"}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn intervals_are_postgres_style_text() {
    let mut f = Family::new("interval", "");
    f.check(vec![
        column(
            "interval",
            "interval",
            &[
                (
                    "'1 year 2 months 3 days 4 hours 5 minutes 6 seconds'",
                    r#""1 year 2 mons 3 days 04:05:06""#,
                ),
                ("'-3 days -2 hours'", r#""-3 days -02:00:00""#),
                ("'0 seconds'", r#""00:00:00""#),
                ("'1 month -5 days 3 hours'", r#""1 mon -5 days +03:00:00""#),
                ("'1 year 2 months'", r#""1 year 2 mons""#),
                ("'1 day 0.000001 seconds'", r#""1 day 00:00:00.000001""#),
                ("'P1Y2M3DT4H5M6S'", r#""1 year 2 mons 3 days 04:05:06""#),
                ("'@ 1 minute ago'", r#""-00:01:00""#),
                ("'2 weeks'", r#""14 days""#),
                ("'-178000000 years'", r#""-178000000 years""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "interval hour to minute",
            "interval hour to minute",
            &[("'1 day 04:05:06'", r#""1 day 04:05:00""#)],
        ),
        column("interval(2)", "interval(2)", &[("'1.234 seconds'", r#""00:00:01.23""#)]),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn booleans_are_json_booleans() {
    let mut f = Family::new("boolean", "");
    f.check(vec![
        column(
            "boolean",
            "boolean",
            &[
                ("true", "true"),
                ("false", "false"),
                ("'yes'", "true"),
                ("'off'", "false"),
                ("NULL", "null"),
            ],
        ),
        query(
            "SELECT 1 < 2 AS t, NULL::bool AS n, ARRAY[true, NULL, false] AS a",
            &["boolean", "boolean", "boolean[]"],
            &[r#"{"t":true,"n":null,"a":[true,null,false]}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn uuids_are_canonical_text() {
    let mut f = Family::new("uuid", "CREATE TABLE random_id AS SELECT gen_random_uuid() AS v");
    f.check(vec![column(
        "uuid",
        "uuid",
        &[
            (
                "'00000000-0000-0000-0000-000000000000'",
                r#""00000000-0000-0000-0000-000000000000""#,
            ),
            (
                "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
                r#""ffffffff-ffff-ffff-ffff-ffffffffffff""#,
            ),
            (
                "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'",
                r#""a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11""#,
            ),
            (
                "'{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}'",
                r#""a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11""#,
            ),
            ("NULL", "null"),
        ],
    )])
    .await;
    // A random one: whatever psql prints, as a string.
    let printed = f.setup("SELECT v FROM random_id");
    let expected = format!(r#"{{"v":"{printed}"}}"#);
    f.expect("SELECT v FROM random_id", &["uuid".into()], &[expected], &[])
        .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn network_addresses_are_postgres_text() {
    let mut f = Family::new("network", "");
    f.check(vec![
        column(
            "inet",
            "inet",
            &[
                ("'192.168.1.1/24'", r#""192.168.1.1/24""#),
                ("'192.168.1.1'", r#""192.168.1.1""#),
                ("'192.168.1.1/32'", r#""192.168.1.1""#),
                ("'::1/128'", r#""::1""#),
                ("'fe80::1/64'", r#""fe80::1/64""#),
                ("'0.0.0.0/0'", r#""0.0.0.0/0""#),
                ("'::ffff:1.2.3.4'", r#""::ffff:1.2.3.4""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "cidr",
            "cidr",
            &[
                ("'10.0.0.0/8'", r#""10.0.0.0/8""#),
                ("'192.168.0.0/16'", r#""192.168.0.0/16""#),
                ("'::1/128'", r#""::1/128""#),
                ("'2001:db8::/32'", r#""2001:db8::/32""#),
                ("'10'", r#""10.0.0.0/8""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "macaddr",
            "macaddr",
            &[
                ("'08:00:2b:01:02:03'", r#""08:00:2b:01:02:03""#),
                ("'ff:ff:ff:ff:ff:ff'", r#""ff:ff:ff:ff:ff:ff""#),
                ("'08-00-2B-01-02-03'", r#""08:00:2b:01:02:03""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "macaddr8",
            "macaddr8",
            &[
                ("'08:00:2b:01:02:03:04:05'", r#""08:00:2b:01:02:03:04:05""#),
                ("'08:00:2b:01:02:03'", r#""08:00:2b:ff:fe:01:02:03""#),
                ("NULL", "null"),
            ],
        ),
        query(
            "SELECT ARRAY['10.0.0.1'::inet, '::1/64'] AS a",
            &["inet[]"],
            &[r#"{"a":["10.0.0.1","::1/64"]}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn json_and_jsonb_are_embedded_with_exact_numbers() {
    let mut f = Family::new("json/jsonb", "");
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    f.check(vec![
        column(
            "jsonb",
            "jsonb",
            &[
                // jsonb orders keys: shorter first, then bytewise.
                (r#"'{"name":"test","age":30}'"#, r#"{"age":30,"name":"test"}"#),
                (r#"'{"b":1,"aa":2,"a":3}'"#, r#"{"a":3,"b":1,"aa":2}"#),
                ("'[1,2,3]'", "[1,2,3]"),
                (r#"'{"a":{"b":{"c":[1,true,null]}}}'"#, r#"{"a":{"b":{"c":[1,true,null]}}}"#),
                ("'null'", "null"),
                (r#"'"just a string"'"#, r#""just a string""#),
                (r#"'"{\"a\":1}"'"#, r#""{\"a\":1}""#),
                ("'42'", "42"),
                ("'true'", "true"),
                ("'false'", "false"),
                (r#"'{"id":9007199254740993}'"#, r#"{"id":9007199254740993}"#),
                ("'{}'", "{}"),
                ("'[]'", "[]"),
                (
                    "'[1.0, 1E2, 1e-5, -0, 0.1, 1.50, 12345678901234567890123456789, -9223372036854775809]'",
                    "[1.0,100,0.00001,0,0.1,1.50,12345678901234567890123456789,-9223372036854775809]",
                ),
                (
                    r#"'{"s":"héllo 🎉","e":"\u00e9\n\"","z":"\u0001","k🎉":"v"}'"#,
                    r#"{"e":"é\n\"","s":"héllo 🎉","z":"\u0001","k🎉":"v"}"#,
                ),
                ("NULL", "null"),
            ],
        )
        .and(
            r#"'{"a": 1e400}'"#,
            format!(r#"{{"a":1{}}}"#, "0".repeat(400)),
        )
        // jsonb nests as deep as the server's stack allows (over 10,000 levels
        // with the default max_stack_depth). pgmcp embeds up to 600 levels as
        // JSON (every step that handles a value recurses); deeper values come
        // back as PostgreSQL's text, which is still every character of it.
        .and(literal(&deep(127)), deep(127))
        .and(literal(&deep(128)), deep(128))
        .and(literal(&deep(600)), deep(600))
        .and(literal(&deep(10_000)), format!("{:?}", deep(10_000))),
        column(
            "json",
            "json",
            &[
                (r#"'{"key":"value"}'"#, r#"{"key":"value"}"#),
                ("'[1,2]'", "[1,2]"),
                ("'null'", "null"),
                // json keeps the text as written: key order, every digit.
                (r#"'{"b" : 1, "a" : [1.0, 2, 9007199254740993]}'"#, r#"{"b":1,"a":[1.0,2,9007199254740993]}"#),
                (r#"'{"big": 123456789012345678901234567890.5}'"#, r#"{"big":123456789012345678901234567890.5}"#),
                // Every digit stays; serde_json spells exponents its own way (`e+`).
                (r#"'{"huge": 1e400, "e": 1E+2, "f": 1.5e-3, "z": -0}'"#, r#"{"huge":1e+400,"e":1e+2,"f":1.5e-3,"z":-0}"#),
                (r#"'{"nul": "\u0000", "esc": "\u00e9\t"}'"#, r#"{"nul":"\u0000","esc":"é\t"}"#),
                ("NULL", "null"),
            ],
        ),
        query(
            r#"SELECT '{"a":1}'::json AS j, '{"a":1}'::jsonb AS b, jsonb_build_object('n', 9007199254740993::int8, 'x', 0.1::numeric) AS o"#,
            &["json", "jsonb", "jsonb"],
            &[r#"{"j":{"a":1},"b":{"a":1},"o":{"n":9007199254740993,"x":0.1}}"#],
        ),
    ])
    .await;
    f.finish();
}

/// `json` is stored as written, so it can hold what a parsed JSON value cannot:
/// repeated keys and unpaired surrogate escapes.
#[tokio::test(flavor = "multi_thread")]
async fn json_text_pgmcp_cannot_embed_as_written() {
    // A JSON object holds each key once, so a `json` value with a repeated key
    // keeps the last one (as jsonb and JavaScript's JSON.parse do), and a lone
    // surrogate escape, which JSON parsers refuse, comes back as PostgreSQL's
    // text. Both are documented in README.md.
    let mut f = Family::new("json pgmcp cannot embed as written", "");
    f.check(vec![column(
        "json",
        "json",
        &[
            (r#"'{"a":1,"a":2}'"#, r#"{"a":2}"#),
            (r#"'["\ud800"]'"#, r#""[\"\\ud800\"]""#),
        ],
    )])
    .await;
    f.finish();
}

/// Types used by the array, enum, composite and domain families.
const USER_TYPES: &str = r#"
CREATE TYPE mood AS ENUM ('happy', 'sad', 'neutral', 'très 🎉', 'with space', '42', 'true');
CREATE TYPE address AS (street text, city text, zip text);
CREATE TYPE pair AS (a int, b address);
CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);
CREATE DOMAIN posint2 AS positive_int;
CREATE DOMAIN amount AS numeric(10,2);
CREATE DOMAIN doc AS jsonb;
CREATE DOMAIN stamp AS timestamptz;
CREATE DOMAIN label AS text;
CREATE DOMAIN shortname AS varchar(20);
CREATE DOMAIN flag AS boolean;
CREATE DOMAIN ratio AS float8;
CREATE DOMAIN big AS bigint;
CREATE DOMAIN intlist AS int[];
CREATE DOMAIN dmood AS mood;
CREATE DOMAIN boxd AS box;
"#;

#[tokio::test(flavor = "multi_thread")]
async fn arrays_nest_and_convert_their_elements() {
    let mut f = Family::new("arrays", USER_TYPES);
    f.check(vec![
        column(
            "text[]",
            "text[]",
            &[
                ("ARRAY['a','b','c']", r#"["a","b","c"]"#),
                ("'{}'", "[]"),
                (
                    r#"ARRAY['a b', 'q"uote', 'back\slash', 'NULL', 'null', '', 'comma,', '{brace}', ' lead', 'é🎉', E'tab\there', E'new\nline', 'semi;colon']"#,
                    r#"["a b","q\"uote","back\\slash","NULL","null","","comma,","{brace}"," lead","é🎉","tab\there","new\nline","semi;colon"]"#,
                ),
                ("ARRAY['a',NULL,'c']", r#"["a",null,"c"]"#),
                ("ARRAY[NULL]::text[]", "[null]"),
                ("ARRAY[['a','b'],['c d',NULL]]", r#"[["a","b"],["c d",null]]"#),
                (r#"'[0:1]={"a=b","{x}"}'"#, r#"{"lower_bounds":[0],"elements":["a=b","{x}"]}"#),
                ("NULL", "null"),
            ],
        ),
        column(
            "int[]",
            "integer[]",
            &[
                ("ARRAY[1,2,3]", "[1,2,3]"),
                ("'{}'", "[]"),
                ("ARRAY[2147483647,-2147483648]", "[2147483647,-2147483648]"),
                ("ARRAY[[1,NULL],[NULL,4]]", "[[1,null],[null,4]]"),
                ("ARRAY[[[1,2],[3,4]],[[5,6],[7,8]]]", "[[[1,2],[3,4]],[[5,6],[7,8]]]"),
                ("'[0:1]={7,8}'", r#"{"lower_bounds":[0],"elements":[7,8]}"#),
                (
                    "'[-2:-1][3:4]={{1,2},{3,4}}'",
                    r#"{"lower_bounds":[-2,3],"elements":[[1,2],[3,4]]}"#,
                ),
                ("'[1:1][0:1]={{1,2}}'", r#"{"lower_bounds":[1,0],"elements":[[1,2]]}"#),
                ("'[0:0]={NULL}'", r#"{"lower_bounds":[0],"elements":[null]}"#),
                ("NULL", "null"),
            ],
        ),
        column(
            "int[][]",
            "integer[]",
            &[("ARRAY[[1,2],[3,4]]", "[[1,2],[3,4]]")],
        ),
        column(
            "bigint[]",
            "bigint[]",
            &[
                ("ARRAY[9007199254740993, 9223372036854775807, -9223372036854775808]", "[9007199254740993,9223372036854775807,-9223372036854775808]"),
                ("NULL", "null"),
            ],
        ),
        column("smallint[]", "smallint[]", &[("ARRAY[1,-32768]", "[1,-32768]")]),
        column(
            "boolean[]",
            "boolean[]",
            &[("ARRAY[true,false,true]", "[true,false,true]"), ("NULL", "null")],
        ),
        column(
            "uuid[]",
            "uuid[]",
            &[
                (
                    "ARRAY['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, '00000000-0000-0000-0000-000000000000']",
                    r#"["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","00000000-0000-0000-0000-000000000000"]"#,
                ),
                ("NULL", "null"),
            ],
        ),
        column(
            "numeric[]",
            "numeric[]",
            &[(
                "ARRAY[1.50, 'NaN', 123456789012345678901234567890]",
                r#"["1.50","NaN","123456789012345678901234567890"]"#,
            )],
        ),
        column(
            "numeric[]",
            "numeric[]",
            &[("ARRAY['-Infinity'::numeric, 'Infinity']", r#"["-Infinity","Infinity"]"#)],
        )
        .since(14),
        column(
            "numeric(5,2)[]",
            "numeric(5,2)[]",
            &[("ARRAY[1.5]", r#"["1.50"]"#)],
        ),
        column(
            "varchar(3)[]",
            "character varying(3)[]",
            &[("ARRAY['abc', 'é']", r#"["abc","é"]"#)],
        ),
        column(
            "double precision[]",
            "double precision[]",
            &[(
                "ARRAY[1.5, 'NaN', 'Infinity', '-Infinity', '-0'::float8, 1e300, 0.1, NULL]",
                r#"[1.5,"NaN","Infinity","-Infinity",-0,1e+300,0.1,null]"#,
            )],
        ),
        column("real[]", "real[]", &[("ARRAY[1.5, 0.1, 'NaN']", r#"[1.5,0.1,"NaN"]"#)]),
        column(
            "jsonb[]",
            "jsonb[]",
            &[(
                r#"ARRAY['{"a": [1, "x,y"]}'::jsonb, '"s"', '{"n":9007199254740993}', '{"b":1,"a":"q\"b\\c"}', NULL]"#,
                r#"[{"a":[1,"x,y"]},"s",{"n":9007199254740993},{"a":"q\"b\\c","b":1},null]"#,
            )],
        )
        .and(r#"ARRAY['{"z":1e400}'::jsonb]"#, format!(r#"[{{"z":1{}}}]"#, "0".repeat(400))),
        column(
            "json[]",
            "json[]",
            &[(r#"ARRAY['{"b": 1, "a": 2}'::json, '[1.0]']"#, r#"[{"b":1,"a":2},[1.0]]"#)],
        ),
        column(
            "timestamptz[]",
            "timestamp with time zone[]",
            &[(
                "ARRAY['2024-01-15 10:30:00+05:30'::timestamptz, 'infinity', NULL, '0044-03-15 12:00:00+00 BC', '2024-01-15 05:00:00.25+00']",
                r#"["2024-01-15T05:00:00Z","infinity",null,"0044-03-15 12:00:00+00 BC","2024-01-15T05:00:00.25Z"]"#,
            )],
        ),
        column(
            "timestamp[]",
            "timestamp without time zone[]",
            &[(
                "ARRAY['2024-01-15 10:30:00.25'::timestamp, '-infinity']",
                r#"["2024-01-15T10:30:00.25","-infinity"]"#,
            )],
        ),
        column(
            "date[]",
            "date[]",
            &[(
                "ARRAY['2024-01-15'::date, 'infinity', '0044-03-15 BC']",
                r#"["2024-01-15","infinity","0044-03-15 BC"]"#,
            )],
        ),
        column(
            "bytea[]",
            "bytea[]",
            &[(r"ARRAY['\xdead'::bytea, '']", r#"["\\xdead","\\x"]"#)],
        ),
        column(
            "interval[]",
            "interval[]",
            &[(
                "ARRAY['1 day'::interval, '-3 days -2 hours']",
                r#"["1 day","-3 days -02:00:00"]"#,
            )],
        ),
        // box is the one type whose array delimiter is ';'.
        column(
            "box[]",
            "box[]",
            &[
                ("ARRAY['(1,1),(0,0)'::box, '(3,3),(2,2)']", r#"["(1,1),(0,0)","(3,3),(2,2)"]"#),
                (
                    "ARRAY[ARRAY['(1,1),(0,0)'::box], ARRAY['(2,2),(0,0)'::box]]",
                    r#"[["(1,1),(0,0)"],["(2,2),(0,0)"]]"#,
                ),
            ],
        ),
        column(
            "boxd[]",
            "boxd[]",
            &[("ARRAY['(1,1),(0,0)'::box, '(3,3),(2,2)']", r#"["(1,1),(0,0)","(3,3),(2,2)"]"#)],
        ),
        column("point[]", "point[]", &[("ARRAY['(1,2)'::point]", r#"["(1,2)"]"#)]),
        column("line[]", "line[]", &[("ARRAY['{1,2,3}'::line]", r#"["{1,2,3}"]"#)]),
        column(
            "int4range[]",
            "int4range[]",
            &[("ARRAY['[1,3)'::int4range, 'empty']", r#"["[1,3)","empty"]"#)],
        ),
        column(
            "int4multirange[]",
            "int4multirange[]",
            &[("ARRAY['{[1,2), [4,5)}'::int4multirange]", r#"["{[1,2),[4,5)}"]"#)],
        )
        .since(14),
        column(
            "address[]",
            "address[]",
            &[(
                "ARRAY[ROW('1 Main','X','1')::address, ROW('2 Main','Y',NULL)::address, NULL]",
                r#"["(\"1 Main\",X,1)","(\"2 Main\",Y,)",null]"#,
            )],
        ),
        column(
            "pair[]",
            "pair[]",
            &[(
                "ARRAY[ROW(1, ROW('a b','c','d'))::pair]",
                r#"["(1,\"(\"\"a b\"\",c,d)\")"]"#,
            )],
        ),
        column(
            "mood[]",
            "mood[]",
            &[(
                "ARRAY['happy'::mood, 'très 🎉', 'with space', '42', 'true', NULL]",
                r#"["happy","très 🎉","with space","42","true",null]"#,
            )],
        ),
        column(
            "positive_int[]",
            "positive_int[]",
            &[
                ("ARRAY[1,2]::positive_int[]", "[1,2]"),
                ("'[0:1]={7,8}'", r#"{"lower_bounds":[0],"elements":[7,8]}"#),
            ],
        ),
        column("big[]", "big[]", &[("ARRAY[9223372036854775807::big]", "[9223372036854775807]")]),
        column(
            "doc[]",
            "doc[]",
            &[(r#"ARRAY['{"b":2,"a":9007199254740993}'::doc]"#, r#"[{"a":9007199254740993,"b":2}]"#)],
        ),
        column(
            "stamp[]",
            "stamp[]",
            &[("ARRAY['2024-01-15 10:30:00+05:30'::stamp]", r#"["2024-01-15T05:00:00Z"]"#)],
        ),
        column("flag[]", "flag[]", &[("ARRAY[true::flag, false]", "[true,false]")]),
        column("amount[]", "amount[]", &[("ARRAY[1.5::amount]", r#"["1.50"]"#)]),
        column("ratio[]", "ratio[]", &[("ARRAY[0.1::ratio, 'NaN']", r#"[0.1,"NaN"]"#)]),
        column("dmood[]", "dmood[]", &[("ARRAY['sad'::dmood]", r#"["sad"]"#)]),
        column("intlist", "intlist", &[("'{1,2}'", "[1,2]"), ("'{}'", "[]")]),
        // Anonymous records: `record[]` is a pseudo-type, but its values are arrays.
        query(
            "SELECT array_agg(ROW(i, 'x y')) AS r, ARRAY[ROW(1, 2), NULL] AS a FROM generate_series(1, 2) i",
            &["record[]", "record[]"],
            &[r#"{"r":["(1,\"x y\")","(2,\"x y\")"],"a":["(1,2)",null]}"#],
        ),
        query(
            "SELECT ARRAY[1,2]::positive_int[] AS p, '{1,2}'::intlist AS l, ARRAY['x']::varchar(3)[] AS v",
            &["positive_int[]", "integer[]", "character varying(3)[]"],
            &[r#"{"p":[1,2],"l":[1,2],"v":["x"]}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn enums_are_their_label_text() {
    let mut f = Family::new(
        "enum",
        &format!("{USER_TYPES}\nCREATE SCHEMA elsewhere; CREATE TYPE elsewhere.color AS ENUM ('red', 'green');"),
    );
    f.check(vec![
        column(
            "mood",
            "mood",
            &[
                ("'happy'", r#""happy""#),
                ("'sad'", r#""sad""#),
                ("'neutral'", r#""neutral""#),
                ("'très 🎉'", r#""très 🎉""#),
                ("'42'", r#""42""#),
                ("'true'", r#""true""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "mood[]",
            "mood[]",
            &[("ARRAY['happy','très 🎉',NULL]::mood[]", r#"["happy","très 🎉",null]"#)],
        ),
        column("elsewhere.color", "elsewhere.color", &[("'red'", r#""red""#)]),
        column(
            "elsewhere.color[]",
            "elsewhere.color[]",
            &[("ARRAY['green'::elsewhere.color, NULL]", r#"["green",null]"#)],
        ),
        column("dmood", "dmood", &[("'sad'", r#""sad""#)]),
        query(
            "SELECT 'sad'::mood AS m, 'green'::elsewhere.color AS c",
            &["mood", "elsewhere.color"],
            &[r#"{"m":"sad","c":"green"}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn ranges_and_multiranges_are_postgres_text() {
    let mut f = Family::new("ranges", "CREATE TYPE floatrange AS RANGE (subtype = float8);");
    f.check(vec![
        column(
            "int4range",
            "int4range",
            &[
                ("'[1,10)'", r#""[1,10)""#),
                ("'(,)'", r#""(,)""#),
                ("'[5,5]'", r#""[5,6)""#),
                ("'(1,10]'", r#""[2,11)""#),
                ("'empty'", r#""empty""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "int8range",
            "int8range",
            &[
                ("'[1,9223372036854775807)'", r#""[1,9223372036854775807)""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "numrange",
            "numrange",
            &[
                ("'[1.5,10.5)'", r#""[1.5,10.5)""#),
                ("'(,1.50]'", r#""(,1.50]""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "tsrange",
            "tsrange",
            &[
                (
                    "'[2024-01-01,2024-12-31)'",
                    r#""[\"2024-01-01 00:00:00\",\"2024-12-31 00:00:00\")""#,
                ),
                ("NULL", "null"),
            ],
        ),
        column(
            "tstzrange",
            "tstzrange",
            &[
                (
                    "'[2024-01-01 00:00:00+00,2024-12-31 23:59:59+00)'",
                    r#""[\"2024-01-01 00:00:00+00\",\"2024-12-31 23:59:59+00\")""#,
                ),
                (
                    "'[2024-01-01 10:00+05,infinity)'",
                    r#""[\"2024-01-01 05:00:00+00\",infinity)""#,
                ),
                ("NULL", "null"),
            ],
        ),
        column(
            "daterange",
            "daterange",
            &[
                ("'[2024-01-01,2024-12-31)'", r#""[2024-01-01,2024-12-31)""#),
                ("'[2024-01-01,2024-12-31]'", r#""[2024-01-01,2025-01-01)""#),
                ("NULL", "null"),
            ],
        ),
        column("floatrange", "floatrange", &[("'[0.1,2.5)'", r#""[0.1,2.5)""#)]),
        // Multiranges print like arrays but are not: they stay text.
        column(
            "int4multirange",
            "int4multirange",
            &[
                ("'{[1,3), [5,7)}'", r#""{[1,3),[5,7)}""#),
                ("'{}'", r#""{}""#),
                ("NULL", "null"),
            ],
        )
        .since(14),
        column(
            "nummultirange",
            "nummultirange",
            &[("'{[1.5,2.5]}'", r#""{[1.5,2.5]}""#)],
        )
        .since(14),
        column(
            "datemultirange",
            "datemultirange",
            &[("'{[2024-01-01,2024-02-01)}'", r#""{[2024-01-01,2024-02-01)}""#)],
        )
        .since(14),
        column(
            "tstzmultirange",
            "tstzmultirange",
            &[(
                "'{[2024-01-01 10:00+05,infinity)}'",
                r#""{[\"2024-01-01 05:00:00+00\",infinity)}""#,
            )],
        )
        .since(14),
        column("floatmultirange", "floatmultirange", &[("'{[1,2)}'", r#""{[1,2)}""#)]).since(14),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn geometric_types_are_postgres_text() {
    let mut f = Family::new("geometric", "");
    f.check(vec![
        column(
            "point",
            "point",
            &[
                ("'(1.5,2.5)'", r#""(1.5,2.5)""#),
                ("'(0,0)'", r#""(0,0)""#),
                ("'(-1.5,-2.5)'", r#""(-1.5,-2.5)""#),
                ("point(0.1, 1/3.0)", r#""(0.1,0.3333333333333333)""#),
                ("NULL", "null"),
            ],
        ),
        column("line", "line", &[("'{1,2,3}'", r#""{1,2,3}""#), ("NULL", "null")]),
        column(
            "lseg",
            "lseg",
            &[("'[(0,0),(1,1)]'", r#""[(0,0),(1,1)]""#), ("NULL", "null")],
        ),
        column(
            "box",
            "box",
            &[
                ("'(1,1),(0,0)'", r#""(1,1),(0,0)""#),
                ("'(0,0),(1,1)'", r#""(1,1),(0,0)""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "path",
            "path",
            &[
                ("'((0,0),(1,1),(2,0))'", r#""((0,0),(1,1),(2,0))""#),
                ("'[(0,0),(1,1)]'", r#""[(0,0),(1,1)]""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "polygon",
            "polygon",
            &[
                ("'((0,0),(1,0),(1,1),(0,1))'", r#""((0,0),(1,0),(1,1),(0,1))""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "circle",
            "circle",
            &[("'<(1,1),5>'", r#""<(1,1),5>""#), ("NULL", "null")],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn bit_strings_are_their_digits_as_text() {
    let mut f = Family::new("bit strings", "");
    f.check(vec![
        column(
            "bit(8)",
            "bit(8)",
            &[
                ("B'10101010'", r#""10101010""#),
                ("B'00000000'", r#""00000000""#),
                ("B'11111111'", r#""11111111""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "varbit(16)",
            "bit varying(16)",
            &[
                ("B'1'", r#""1""#),
                ("B'10101010'", r#""10101010""#),
                ("B'1010101010101010'", r#""1010101010101010""#),
                ("NULL", "null"),
            ],
        ),
        column("varbit", "bit varying", &[("B''", r#""""#)]),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn text_search_types_are_postgres_text() {
    let mut f = Family::new("text search", "");
    f.check(vec![
        column(
            "tsvector",
            "tsvector",
            &[
                (
                    "to_tsvector('english', 'the quick brown fox')",
                    r#""'brown':3 'fox':4 'quick':2""#,
                ),
                ("'a:1A b:2'", r#""'a':1A 'b':2""#),
                (
                    "to_tsvector('simple', 'héllo wörld 🎉')",
                    r#""'héllo':1 'wörld':2 '🎉':3""#,
                ),
                ("''", r#""""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "tsquery",
            "tsquery",
            &[
                ("to_tsquery('english', 'quick & fox')", r#""'quick' & 'fox'""#),
                ("$$'it''s' & !x | y:*$$", r#""'it''s' & !'x' | 'y':*""#),
                ("NULL", "null"),
            ],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn xml_is_its_text() {
    let mut f = Family::new("xml", "");
    f.check(vec![column(
        "xml",
        "xml",
        &[
            (
                "'<root><item>test</item></root>'",
                r#""<root><item>test</item></root>""#,
            ),
            ("'<a>é &amp; 🎉</a>'", r#""<a>é &amp; 🎉</a>""#),
            ("'just text'", r#""just text""#),
            ("NULL", "null"),
        ],
    )])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn composites_are_their_record_text() {
    let mut f = Family::new(
        "composite",
        &format!(
            "{USER_TYPES}\nCREATE TYPE wrapped AS (j jsonb, n int, t timestamptz);\n\
             CREATE TABLE pt (x int, y text); INSERT INTO pt VALUES (1, 'hi'), (2, NULL);"
        ),
    );
    f.check(vec![
        column(
            "address",
            "address",
            &[
                (
                    "ROW('123 Main St','Springfield','62701')",
                    r#""(\"123 Main St\",Springfield,62701)""#,
                ),
                ("NULL", "null"),
                ("ROW(NULL,NULL,NULL)", r#""(,,)""#),
                (
                    r#"ROW('q"uote','back\slash','')"#,
                    r#""(\"q\"\"uote\",\"back\\\\slash\",\"\")""#,
                ),
                ("ROW('é 🎉', NULL, '42')", r#""(\"é 🎉\",,42)""#),
            ],
        ),
        column(
            "pair",
            "pair",
            &[("ROW(1, ROW('a b','c','d'))", r#""(1,\"(\"\"a b\"\",c,d)\")""#)],
        ),
        // Fields are never converted on their own: the whole value is text.
        column(
            "wrapped",
            "wrapped",
            &[(
                r#"ROW('{"a": 1}', 7, '2024-01-15 10:30:00+05:30')"#,
                r#""(\"{\"\"a\"\": 1}\",7,\"2024-01-15 05:00:00+00\")""#,
            )],
        ),
        column(
            "address[]",
            "address[]",
            &[(
                "ARRAY[ROW('1 Main','X','1')::address, NULL]",
                r#"["(\"1 Main\",X,1)",null]"#,
            )],
        ),
        query(
            "SELECT ROW(1, 'a b', NULL) AS r, p FROM pt p ORDER BY x",
            &["record", "pt"],
            &[
                r#"{"r":"(1,\"a b\",)","p":"(1,hi)"}"#,
                r#"{"r":"(1,\"a b\",)","p":"(2,)"}"#,
            ],
        ),
        query(
            "SELECT array_agg(p ORDER BY x) AS a FROM pt p",
            &["pt[]"],
            &[r#"{"a":["(1,hi)","(2,)"]}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn domains_follow_their_base_type_and_keep_their_name() {
    let mut f = Family::new("domain", USER_TYPES);
    f.check(vec![
        column(
            "positive_int",
            "positive_int",
            &[("1", "1"), ("100", "100"), ("NULL", "null")],
        ),
        column("posint2", "posint2", &[("5", "5")]),
        column("big", "big", &[("9223372036854775807", "9223372036854775807")]),
        column("amount", "amount", &[("1.5", r#""1.50""#)]),
        column(
            "doc",
            "doc",
            &[(r#"'{"b":1,"a":9007199254740993}'"#, r#"{"a":9007199254740993,"b":1}"#)],
        ),
        column(
            "stamp",
            "stamp",
            &[
                ("'2024-01-15 10:30:00+05:30'", r#""2024-01-15T05:00:00Z""#),
                ("'infinity'", r#""infinity""#),
            ],
        ),
        column("label", "label", &[("'hi 🎉'", r#""hi 🎉""#)]),
        column("shortname", "shortname", &[("'x'", r#""x""#)]),
        column("flag", "flag", &[("true", "true"), ("false", "false")]),
        column("ratio", "ratio", &[("0.1", "0.1"), ("'NaN'", r#""NaN""#)]),
        column("intlist", "intlist", &[("'{1,2}'", "[1,2]")]),
        column("dmood", "dmood", &[("'happy'", r#""happy""#)]),
        column("boxd", "boxd", &[("'(1,1),(0,0)'", r#""(1,1),(0,0)""#)]),
        column(
            "positive_int[]",
            "positive_int[]",
            &[("ARRAY[1,2]::positive_int[]", "[1,2]")],
        ),
        column("doc[]", "doc[]", &[(r#"ARRAY['{"a":1}'::doc]"#, r#"[{"a":1}]"#)]),
        // A computed column has no declared type: the protocol names the base type
        // (with the domain's modifier, so `amount` reads as numeric(10,2)).
        query(
            r#"SELECT 5::positive_int AS p, '{"a":1}'::doc AS d, 1.5::amount AS a, true::flag AS b"#,
            &["integer", "jsonb", "numeric(10,2)", "boolean"],
            &[r#"{"p":5,"d":{"a":1},"a":"1.50","b":true}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn extension_types_are_their_text() {
    let mut f = Family::new("extension types", "");
    require_extensions(&f.db, &["citext", "hstore", "ltree"]);
    f.setup("CREATE DOMAIN email AS citext;");
    f.check(vec![
        column(
            "citext",
            "citext",
            &[
                ("'Hello'", r#""Hello""#),
                ("'ÄÖ é 🎉'", r#""ÄÖ é 🎉""#),
                ("NULL", "null"),
            ],
        ),
        column("citext[]", "citext[]", &[("ARRAY['A','b c']", r#"["A","b c"]"#)]),
        column("email", "email", &[("'A@B.example'", r#""A@B.example""#)]),
        column(
            "hstore",
            "hstore",
            &[
                (r#"'"a"=>"1", "b"=>NULL'"#, r#""\"a\"=>\"1\", \"b\"=>NULL""#),
                (r#"'a=>1,b=>"x y"'"#, r#""\"a\"=>\"1\", \"b\"=>\"x y\"""#),
                ("NULL", "null"),
            ],
        ),
        column(
            "hstore[]",
            "hstore[]",
            &[(
                r#"ARRAY['a=>1'::hstore, 'b=>"x,y"']"#,
                r#"["\"a\"=>\"1\"","\"b\"=>\"x,y\""]"#,
            )],
        ),
        column(
            "ltree",
            "ltree",
            &[
                ("'Top.Science.Astronomy'", r#""Top.Science.Astronomy""#),
                ("NULL", "null"),
            ],
        ),
        column("ltree[]", "ltree[]", &[("ARRAY['a.b'::ltree]", r#"["a.b"]"#)]),
        query(
            "SELECT 'x'::citext AS c, 'k=>v'::hstore AS h",
            &["citext", "hstore"],
            &[r#"{"c":"x","h":"\"k\"=>\"v\""}"#],
        ),
    ])
    .await;
    f.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_of_nulls_is_all_null() {
    let mut f = Family::new(
        "all-NULL row",
        "CREATE TABLE n (a smallint, b integer, c bigint, d numeric(10,2), e real, f double precision, g money, \
         h text, i varchar(10), j bytea, k boolean, l date, m timestamp, o timestamptz, p interval, q uuid, \
         r inet, s jsonb, t json, u integer[], w text[], x int4range, y point, z xml, bb bit(3), tv tsvector);
         INSERT INTO n DEFAULT VALUES;",
    );
    f.check(vec![
        query("SELECT NULL AS x, NULL::int AS y", &["text", "integer"], &[r#"{"x":null,"y":null}"#]),
        query(
        "SELECT * FROM n",
        &[
            "smallint",
            "integer",
            "bigint",
            "numeric(10,2)",
            "real",
            "double precision",
            "money",
            "text",
            "character varying(10)",
            "bytea",
            "boolean",
            "date",
            "timestamp without time zone",
            "timestamp with time zone",
            "interval",
            "uuid",
            "inet",
            "jsonb",
            "json",
            "integer[]",
            "text[]",
            "int4range",
            "point",
            "xml",
            "bit(3)",
            "tsvector",
        ],
        &[
            r#"{"a":null,"b":null,"c":null,"d":null,"e":null,"f":null,"g":null,"h":null,"i":null,"j":null,"k":null,"l":null,"m":null,"o":null,"p":null,"q":null,"r":null,"s":null,"t":null,"u":null,"w":null,"x":null,"y":null,"z":null,"bb":null,"tv":null}"#,
        ],
    ),
    ])
    .await;
    f.finish();
}

// ---------------------------------------------------------------- settings do not leak into the output

/// Values whose text depends on session settings, stored with the defaults.
const SETTINGS_TABLE: &str = r"
CREATE TABLE s (tz timestamptz, ts timestamp, d date, i interval, f1 float8, f2 float8, f3 real, b bytea,
                m money, arr timestamptz[], r tstzrange, bx box, tt timetz, pt point, ba bytea[], ia interval[]);
INSERT INTO s VALUES ('2024-01-15 10:30:00.123456+05:30', '2024-01-15 10:30:00.5', '2024-01-15',
                      '1 year 2 mons 3 days 04:05:06.789', 0.1, 1/3.0, 0.1, '\xdeadbeef00', 1234.56,
                      ARRAY['2024-01-15 10:30:00+05:30'::timestamptz, 'infinity'],
                      '[2024-01-15 10:30:00+05:30,)', '(1.5,0.1),(0,0)', '10:30:00+05:30', point(1/3.0, 0.1),
                      ARRAY['\x00ff'::bytea], ARRAY['-3 days -2 hours'::interval]);
";

const SETTINGS_QUERY: &str = r"SELECT tz, ts, d, i, f1, f2, f3, b, m, arr, r, bx, tt, pt, ba, ia, 0.1::float8 + 0.2 AS sum,
       '2024-01-15 10:30:00+05:30'::timestamptz AS lit, 'a\b' AS backslash FROM s";

const SETTINGS_ROW: &str = r#"{"tz":"2024-01-15T05:00:00.123456Z","ts":"2024-01-15T10:30:00.5","d":"2024-01-15","i":"1 year 2 mons 3 days 04:05:06.789","f1":0.1,"f2":0.3333333333333333,"f3":0.1,"b":"\\xdeadbeef00","m":"$1,234.56","arr":["2024-01-15T05:00:00Z","infinity"],"r":"[\"2024-01-15 05:00:00+00\",)","bx":"(1.5,0.1),(0,0)","tt":"10:30:00+05:30","pt":"(0.3333333333333333,0.1)","ba":["\\x00ff"],"ia":["-3 days -02:00:00"],"sum":0.30000000000000004,"lit":"2024-01-15T05:00:00Z","backslash":"a\\b"}"#;

const SESSION_QUERY: &str = "SELECT current_setting('DateStyle') AS datestyle, current_setting('IntervalStyle') AS intervalstyle, \
     current_setting('TimeZone') AS timezone, current_setting('extra_float_digits') AS extra_float_digits, \
     current_setting('bytea_output') AS bytea_output, \
     current_setting('standard_conforming_strings') AS standard_conforming_strings, \
     current_setting('lc_monetary') AS lc_monetary";

const SESSION_ROW: &str = r#"{"datestyle":"ISO, YMD","intervalstyle":"postgres","timezone":"UTC","extra_float_digits":"3","bytea_output":"hex","standard_conforming_strings":"on","lc_monetary":"C"}"#;

/// A locale the server accepts for `lc_monetary` whose money text differs
/// from C's, if the machine has one.
fn other_monetary_locale(db: &TestDb) -> Option<String> {
    let mut candidates: Vec<String> = std::process::Command::new("locale")
        .arg("-a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().map(str::to_owned).collect())
        .unwrap_or_default();
    candidates.extend(
        db.psql("SELECT collcollate FROM pg_collation WHERE collprovider = 'c'")
            .lines()
            .map(str::to_owned),
    );
    candidates.retain(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || "_.@-".contains(c)));
    candidates.sort();
    candidates.dedup();
    if candidates.is_empty() {
        return None;
    }
    let list: Vec<String> = candidates.iter().map(|l| literal(l)).collect();
    let found = db.psql(&format!(
        "CREATE FUNCTION pg_temp.money_in(loc text) RETURNS text LANGUAGE plpgsql AS $$
         BEGIN
             PERFORM set_config('lc_monetary', loc, true);
             RETURN (-1234.56)::money::text;
         EXCEPTION WHEN others THEN RETURN NULL;
         END $$;
         SELECT l FROM unnest(ARRAY[{}]) AS l
         WHERE pg_temp.money_in(l) IS DISTINCT FROM '-$1,234.56' AND pg_temp.money_in(l) IS NOT NULL
         LIMIT 1;",
        list.join(", ")
    ));
    (!found.is_empty()).then_some(found)
}

#[tokio::test(flavor = "multi_thread")]
async fn output_does_not_depend_on_database_settings() {
    let plain = pg::server().database();
    let odd = pg::server().database();
    plain.psql(SETTINGS_TABLE);
    odd.psql(SETTINGS_TABLE);
    let mut settings = vec![
        "DateStyle = 'SQL, DMY'".to_owned(),
        "IntervalStyle = 'iso_8601'".to_owned(),
        "TimeZone = 'America/New_York'".to_owned(),
        "extra_float_digits = 0".to_owned(),
        "bytea_output = 'escape'".to_owned(),
        "standard_conforming_strings = off".to_owned(),
    ];
    match other_monetary_locale(&odd) {
        Some(locale) => settings.push(format!("lc_monetary = {}", literal(&locale))),
        None => eprintln!(
            "values: no locale besides C changes money's text on this machine (locale -a, pg_collation); \
             lc_monetary is not varied"
        ),
    }
    let script: String = settings
        .iter()
        .map(|s| format!("ALTER DATABASE {} SET {s};\n", odd.name))
        .collect();
    odd.psql(&script);

    // The settings are real: a plain client of `odd` sees different text.
    let psql_text = "SELECT tz, i, f2, b, m FROM s";
    assert_ne!(
        plain.psql(psql_text),
        odd.psql(psql_text),
        "ALTER DATABASE SET changed nothing for psql, so this test would prove nothing"
    );

    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for db in [&plain, &odd] {
        let engine = engine_for(db, |_| {});
        for (sql, expected) in [(SETTINGS_QUERY, SETTINGS_ROW), (SESSION_QUERY, SESSION_ROW)] {
            match run(&engine, sql, vec![]).await {
                Ok(out) => {
                    let got = serde_json::to_string(&out.rows).unwrap();
                    if got != format!("[{expected}]") {
                        problems.push(format!(
                            "{} ({sql}):\n  expected [{expected}]\n       got {got}",
                            db.name
                        ));
                    }
                    seen.push(got);
                }
                Err(e) => problems.push(format!("{} ({sql}): {e}", db.name)),
            }
        }
    }
    if problems.is_empty() && seen.len() == 4 && (seen[0] != seen[2] || seen[1] != seen[3]) {
        problems.push(format!("the two databases differ:\n  {}\n  {}", seen[0], seen[2]));
    }
    assert!(
        problems.is_empty(),
        "database settings leaked into the output ({}):\n\n{}",
        settings.join(", "),
        problems.join("\n\n")
    );
}

// ---------------------------------------------------------------- values go back in as parameters

/// How a returned value is sent back as a parameter.
#[derive(Clone, Copy)]
enum Pass {
    /// As it came: numbers as numbers, strings as strings, booleans as booleans.
    AsIs,
    /// Its JSON text, as a string (how objects and arrays are passed, and
    /// the only way a jsonb string or null keeps its meaning).
    JsonText,
}

/// `SELECT (expr)::ty` through pgmcp, then the value back as `$1::ty`: it
/// must be the same value with the same text. Returns the value, or what went wrong.
async fn round_trip(engine: &Engine, ty: &str, expr: &str, pass: Pass) -> Result<Value, String> {
    let sql = format!("SELECT ({expr})::{ty} AS v");
    let out = run(engine, &sql, vec![]).await.map_err(|e| format!("{sql}: {e}"))?;
    let value = out
        .rows
        .first()
        .and_then(|r| r.get("v"))
        .cloned()
        .unwrap_or(Value::Null);
    let param = match pass {
        Pass::AsIs => value.clone(),
        Pass::JsonText => Value::String(serde_json::to_string(&value).unwrap()),
    };
    let check = format!(
        "SELECT $1::{ty} IS NOT DISTINCT FROM ({expr})::{ty} AS same, ($1::{ty})::text AS back, (({expr})::{ty})::text AS orig"
    );
    let out = run(engine, &check, vec![param.clone()])
        .await
        .map_err(|e| format!("{ty} {expr}: came back as {value}, sent back as {param}: {e}"))?;
    let row = &out.rows[0];
    if row["same"] != Value::Bool(true) || row["back"] != row["orig"] {
        return Err(format!(
            "{ty} {expr}: came back as {value}, sent back as {param}: equal = {}, text {} vs original {}",
            row["same"], row["back"], row["orig"]
        ));
    }
    Ok(value)
}

#[tokio::test(flavor = "multi_thread")]
async fn returned_values_round_trip_as_parameters() {
    use Pass::{AsIs, JsonText};
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    let cases: &[(&str, &str, Pass)] = &[
        ("int2", "'0'", AsIs),
        ("int2", "'32767'", AsIs),
        ("int2", "'-32768'", AsIs),
        ("int4", "'2147483647'", AsIs),
        ("int4", "'-2147483648'", AsIs),
        ("int8", "'9007199254740993'", AsIs),
        ("int8", "'9223372036854775807'", AsIs),
        ("int8", "'-9223372036854775808'", AsIs),
        ("oid", "'4294967295'", AsIs),
        ("numeric", "'12345.67890'", AsIs),
        ("numeric", "'123456789012345678901234567890.000000000000000001'", AsIs),
        ("numeric", "'-0.00100'", AsIs),
        ("numeric", "'1e400'", AsIs),
        ("numeric", "'NaN'", AsIs),
        ("numeric(20,5)", "'0.00001'", AsIs),
        ("float4", "'1.5'", AsIs),
        ("float4", "'0.1'", AsIs),
        ("float4", "'3.4028235e+38'", AsIs),
        ("float4", "'1e-45'", AsIs),
        ("float4", "'16777217'", AsIs),
        ("float4", "'-0'", AsIs),
        ("float4", "'NaN'", AsIs),
        ("float4", "'Infinity'", AsIs),
        ("float4", "'-Infinity'", AsIs),
        ("float8", "'0.1'", AsIs),
        ("float8", "1/3.0", AsIs),
        ("float8", "'0.30000000000000004'", AsIs),
        ("float8", "'5e-324'", AsIs),
        ("float8", "'1.7976931348623157e+308'", AsIs),
        ("float8", "'1e300'", AsIs),
        ("float8", "'123456789012345678'", AsIs),
        ("float8", "'-0'", AsIs),
        ("float8", "'NaN'", AsIs),
        ("float8", "'Infinity'", AsIs),
        ("float8", "'-Infinity'", AsIs),
        ("text", "'héllo 🎉 日本語'", AsIs),
        ("text", "''", AsIs),
        ("text", r#"'q"uote back\slash'"#, AsIs),
        ("text", r"E'tab\tnew\nline\x01'", AsIs),
        ("text", "'{1,2}'", AsIs),
        ("text", "'NULL'", AsIs),
        ("text", "U&'\\+01F468\\200D\\+01F469\\200D\\+01F467'", AsIs),
        ("varchar(20)", "'ñoño'", AsIs),
        ("bool", "true", AsIs),
        ("bool", "false", AsIs),
        ("date", "'2024-01-15'", AsIs),
        ("date", "'infinity'", AsIs),
        ("date", "'0044-03-15 BC'", AsIs),
        ("date", "'10000-01-01'", AsIs),
        ("timestamp", "'2024-01-15 10:30:00.123456'", AsIs),
        ("timestamp", "'-infinity'", AsIs),
        ("timestamp", "'0044-03-15 12:00:00 BC'", AsIs),
        ("timestamp", "'10000-01-01 00:00:00'", AsIs),
        ("timestamptz", "'2024-01-15 10:30:00.5+05:30'", AsIs),
        ("timestamptz", "'1900-01-01 00:00:00 America/New_York'", AsIs),
        ("timestamptz", "'infinity'", AsIs),
        ("timestamptz", "'0044-03-15 12:00:00+00 BC'", AsIs),
        ("timestamptz", "'294276-12-31 23:59:59.999999+00'", AsIs),
        ("interval", "'1 year 2 mons 3 days 04:05:06'", AsIs),
        ("interval", "'-3 days -2 hours'", AsIs),
        ("interval", "'1 month -5 days 3 hours'", AsIs),
        ("interval", "'1 day 0.000001 seconds'", AsIs),
        ("interval", "'-178000000 years'", AsIs),
        ("time", "'23:59:59.999999'", AsIs),
        ("timetz", "'12:00:00+05:45:30'", AsIs),
        ("uuid", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", AsIs),
        ("inet", "'192.168.1.1/24'", AsIs),
        ("inet", "'::1'", AsIs),
        ("cidr", "'2001:db8::/32'", AsIs),
        ("macaddr", "'08:00:2b:01:02:03'", AsIs),
        ("bytea", r"'\xdeadbeef'", AsIs),
        ("bytea", r"'\x'", AsIs),
        ("bytea", r#"'{"not":"json"}'"#, AsIs),
        ("money", "'1234.56'", AsIs),
        ("money", "'-92233720368547758.08'", AsIs),
        ("int4range", "'[1,10)'", AsIs),
        (
            "jsonb",
            r#"'{"a":1e400,"b":9007199254740993,"c":[1.50,"é🎉",null,true],"k":{"z":-0.0}}'"#,
            JsonText,
        ),
        ("jsonb", r#"'"s"'"#, JsonText),
        ("jsonb", "'42'", JsonText),
        ("jsonb", "'null'", JsonText),
    ];
    // Numeric infinities came in PostgreSQL 14.
    let since_14: &[(&str, &str, Pass)] = &[("numeric", "'Infinity'", AsIs), ("numeric", "'-Infinity'", AsIs)];
    let newer = if db.major() >= 14 { since_14 } else { &[] };
    let mut problems = Vec::new();
    for (ty, expr, send) in cases.iter().chain(newer) {
        if let Err(e) = round_trip(&engine, ty, expr, *send).await {
            problems.push(e);
        }
    }
    assert!(
        problems.is_empty(),
        "{} value(s) did not round-trip:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// Each case is two database round trips: keep them few.
fn prop_config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Run a property whose cases are async, from inside a multi-thread runtime.
fn run_property<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), String>)
where
    S::Value: std::fmt::Debug,
{
    let mut runner = TestRunner::new(prop_config());
    let result = tokio::task::block_in_place(|| runner.run(&strategy, |v| test(v).map_err(TestCaseError::fail)));
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn text_value() -> impl Strategy<Value = String> {
    // Any Unicode scalar value but NUL, which PostgreSQL text cannot hold.
    vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..24).prop_map(|cs| cs.into_iter().collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn random_values_convert_exactly_and_round_trip() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    let rt = tokio::runtime::Handle::current();

    run_property(any::<i64>(), |n| {
        let v = rt.block_on(round_trip(&engine, "int8", &format!("'{n}'"), Pass::AsIs))?;
        // The JSON text is exactly the decimal digits.
        let exact = matches!(&v, Value::Number(x) if x.to_string() == n.to_string());
        ensure(exact, || format!("int8 {n} came back as {v}"))
    });

    run_property(any::<f64>(), |x| {
        let expr = if x.is_finite() {
            format!("'{x:e}'")
        } else {
            literal(&pg_special(x))
        };
        let v = rt.block_on(round_trip(&engine, "float8", &expr, Pass::AsIs))?;
        let exact = match &v {
            Value::Number(n) => n.to_string().parse::<f64>().is_ok_and(|y| y.to_bits() == x.to_bits()),
            Value::String(s) => !x.is_finite() && *s == pg_special(x),
            _ => false,
        };
        ensure(exact, || format!("float8 {x:e} came back as {v}"))
    });

    run_property(any::<f32>(), |x| {
        let expr = if x.is_finite() {
            format!("'{x:e}'")
        } else {
            literal(&pg_special(f64::from(x)))
        };
        let v = rt.block_on(round_trip(&engine, "float4", &expr, Pass::AsIs))?;
        let exact = match &v {
            Value::Number(n) => n.to_string().parse::<f32>().is_ok_and(|y| y.to_bits() == x.to_bits()),
            Value::String(s) => !x.is_finite() && *s == pg_special(f64::from(x)),
            _ => false,
        };
        ensure(exact, || format!("float4 {x:e} came back as {v}"))
    });

    run_property(text_value(), |s| {
        let v = rt.block_on(round_trip(&engine, "text", &literal(&s), Pass::AsIs))?;
        ensure(v == Value::String(s.clone()), || format!("text {s:?} came back as {v}"))
    });

    // Random strings and NULLs inside a text[]: the array parser's escapes.
    run_property(vec(proptest::option::of(text_value()), 0..6), |items| {
        let exprs: Vec<String> = items
            .iter()
            .map(|i| i.as_deref().map_or("NULL".to_owned(), literal))
            .collect();
        let sql = format!("SELECT ARRAY[{}]::text[] AS v", exprs.join(", "));
        let out = rt
            .block_on(run(&engine, &sql, vec![]))
            .map_err(|e| format!("{sql}: {e}"))?;
        let expected = Value::Array(
            items
                .iter()
                .map(|i| i.clone().map_or(Value::Null, Value::String))
                .collect(),
        );
        let got = &out.rows[0]["v"];
        ensure(*got == expected, || format!("{sql}: expected {expected}, got {got}"))
    });
}

fn ensure(ok: bool, problem: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(problem()) }
}

/// PostgreSQL's spelling of a non-finite float.
fn pg_special(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x > 0.0 {
        "Infinity".into()
    } else {
        "-Infinity".into()
    }
}

// ---------------------------------------------------------------- sanitization

#[tokio::test(flavor = "multi_thread")]
async fn sanitization_reaches_converted_strings_but_never_numbers() {
    let mut f = Family::with_config("sanitization", USER_TYPES, |c| {
        c.sanitization = vec![SanitizeRule {
            pattern: Regex::new("7").unwrap(),
            replacement: "X".into(),
            description: "sevens".into(),
        }];
    });
    f.check(vec![
        query(
            "SELECT 7 AS i, 77::int8 AS b, 7.7::float8 AS f, 77::numeric AS n, ARRAY[7, 77] AS ia, \
             ARRAY['a7', NULL] AS ta, '2007-07-07 07:07:07+00'::timestamptz AS ts, '\\x77'::bytea AS bytes, \
             'seven 7' AS t, 'sad'::mood AS e",
            &[
                "integer",
                "bigint",
                "double precision",
                "numeric",
                "integer[]",
                "text[]",
                "timestamp with time zone",
                "bytea",
                "text",
                "mood",
            ],
            &[
                r#"{"i":7,"b":77,"f":7.7,"n":"XX","ia":[7,77],"ta":["aX",null],"ts":"200X-0X-0XT0X:0X:0XZ","bytes":"\\xXX","t":"seven X","e":"sad"}"#,
            ],
        ),
        // Inside jsonb: strings and keys are sanitized (a key can carry data:
        // json_object_agg(email, 1)), numbers never.
        query(
            r#"SELECT '{"s":"x7","n":7,"a":["7",7,77.7],"k7":true,"o":{"p":"+7 77"}}'::jsonb AS j, ARRAY['{"q":"7"}'::jsonb] AS ja"#,
            &["jsonb", "jsonb[]"],
            &[r#"{"j":{"a":["X",7,77.7],"n":7,"o":{"p":"+X XX"},"s":"xX","kX":true},"ja":[{"q":"X"}]}"#],
        ),
    ])
    .await;
    f.finish();
}
