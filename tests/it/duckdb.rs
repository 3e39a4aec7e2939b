//! The DuckDB backend end to end: real database files in
//! temp dirs, built and read back with the `duckdb` crate, the library
//! [`Engine`], the real binary over stdio, and `pgmcp check`.
#![cfg(feature = "duckdb")]

use std::time::Duration;

use pgmcp::{Config, Dialect, Engine, Error, QueryInput, QueryOutput, Rule, TableFilter};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::engine::{err_text, rows, run};
use crate::support::files::duckdb::{allowing, engine_on, fixture, scalar, url};
use crate::support::files::{listing, snapshot};
use crate::support::pgmcp;
use crate::support::stdio::{McpProcess, tool_json, tool_text};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Users, their roles and their orders.
const SHOP: &str = "
    CREATE TABLE users (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, score DOUBLE);
    INSERT INTO users VALUES (1, 'ada', 12.5), (2, 'alan', NULL), (3, 'grace', 7);
    CREATE TABLE user_roles (user_id INTEGER REFERENCES users(id), role_name VARCHAR);
    INSERT INTO user_roles VALUES (1, 'admin');
    CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER, total DECIMAL(10,2));
    INSERT INTO orders VALUES (10, 1, 99.50), (11, 3, 5);
";

/// A query that runs for hours: a trillion-row cross join.
const RUNAWAY: &str = "SELECT count(*) FROM range(1000000) a(x), range(1000000) b(y) WHERE a.x + b.y = -1";

async fn run_with(engine: &Engine, sql: &str, params: Value, limit: Option<usize>) -> Result<QueryOutput, Error> {
    let input = QueryInput {
        sql: sql.into(),
        params: params.as_array().expect("params is an array").clone(),
        limit,
        database: None,
    };
    engine.query(&input, CancellationToken::new()).await
}

/// The rule and message of a guard refusal; panics on anything else.
fn refusal<T: std::fmt::Debug>(result: Result<T, Error>) -> (Rule, String) {
    match result {
        Err(e) => match e.kind() {
            Error::Guard(v) => (v.rule, v.message.clone()),
            other => panic!("expected a guard refusal, got {other:?}"),
        },
        Ok(v) => panic!("expected a guard refusal, got {v:?}"),
    }
}

/// A DuckDB error: its code and message; panics on anything else.
fn db_error<T: std::fmt::Debug>(result: Result<T, Error>) -> pgmcp::DbError {
    match result {
        Err(e) => match e.kind() {
            Error::Db(db) => (**db).clone(),
            other => panic!("expected a DuckDB error, got {other:?}"),
        },
        Ok(v) => panic!("expected a DuckDB error, got {v:?}"),
    }
}

fn ct() -> CancellationToken {
    CancellationToken::new()
}

// ---------------------------------------------------------------------------
// Queries: rows, limits, totals
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn select_returns_row_objects_with_duckdb_types() {
    let (_dir, path) = fixture(SHOP);
    // from_env with an explicit URL: the path the binary takes.
    let engine = Engine::from_env(Config::builtin(), Some(&url(&path))).unwrap();
    assert_eq!(engine.dialect(), Dialect::DuckDb);
    let out = run(&engine, "SELECT id, name, score FROM users ORDER BY id")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&out.columns).unwrap(),
        json!([{"name": "id", "type": "INTEGER"}, {"name": "name", "type": "VARCHAR"}, {"name": "score", "type": "DOUBLE"}])
    );
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([
            {"id": 1, "name": "ada", "score": 12.5},
            {"id": 2, "name": "alan", "score": null},
            {"id": 3, "name": "grace", "score": 7.0}
        ])
    );
    assert_eq!((out.returned_rows, out.total_rows, out.truncated), (3, Some(3), false));
    assert_eq!(out.rows_affected, None);
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["total_rows"], 3);
}

/// With `query.default_limit: 100` and `query.max_rows: 1000`: `limit`
/// defaults to 100 and cannot go past 1000; a cut result
/// says so and omits the total, which would cost running the query to its end.
#[tokio::test(flavor = "multi_thread")]
async fn default_limit_100_and_max_1000() {
    let (_dir, path) = fixture("CREATE TABLE n AS SELECT range AS x FROM range(5000)");
    let engine = engine_on(&path, |c| {
        c.query.max_rows = 1000;
        c.query.default_limit = Some(100);
    });
    let sql = "SELECT x FROM n ORDER BY x";
    let cases: [(Option<usize>, usize); 4] = [(None, 100), (Some(5000), 1000), (Some(1000), 1000), (Some(7), 7)];
    for (limit, returned) in cases {
        let out = run_with(&engine, sql, json!([]), limit).await.unwrap();
        assert_eq!(out.returned_rows, returned, "{limit:?}");
        assert_eq!(out.rows.len(), returned, "{limit:?}");
        assert!(out.truncated, "{limit:?}");
        assert_eq!(out.total_rows, None, "{limit:?}");
        assert_eq!(out.rows[returned - 1]["x"], json!(returned - 1));
        let json = serde_json::to_value(&out).unwrap();
        assert!(json.get("total_rows").is_none(), "{json}");
        assert_eq!(
            out.hint.as_deref(),
            Some(
                format!(
                    "Only the first {returned} rows were returned. Add a LIMIT (and ORDER BY) to page through the rest, filter with WHERE, or aggregate."
                )
                .as_str()
            )
        );
    }
    // A result that fits is whole, and its total is known.
    let out = run_with(&engine, "SELECT x FROM n WHERE x < 42", json!([]), None)
        .await
        .unwrap();
    assert_eq!(
        (out.returned_rows, out.total_rows, out.truncated),
        (42, Some(42), false)
    );
    // Exactly the limit: nothing more exists, so it is not truncated.
    let out = run_with(&engine, "SELECT x FROM n WHERE x < 100", json!([]), None)
        .await
        .unwrap();
    assert_eq!(
        (out.returned_rows, out.total_rows, out.truncated),
        (100, Some(100), false)
    );
}

/// Reading stops at the cap: ten million rows come back as 500 in no time,
/// and a trillion (which no machine could read within the 30 s timeout) too.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_result_stops_at_the_cap() {
    let (_dir, path) = fixture("CREATE TABLE t (a INTEGER)");
    let engine = engine_on(&path, |_| {});
    for rows in ["10000000", "1000000000000"] {
        let out = run(&engine, &format!("SELECT x FROM range({rows}) t(x)"))
            .await
            .unwrap();
        assert_eq!(
            (out.returned_rows, out.truncated, out.total_rows),
            (500, true, None),
            "{rows}"
        );
        assert_eq!(out.rows[499]["x"], 499);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_million_row_aggregate_answers() {
    let (_dir, path) = fixture("CREATE TABLE t (a INTEGER)");
    let engine = engine_on(&path, |_| {});
    let out = run(&engine, "SELECT count(*) AS n, sum(x) AS s FROM range(10000000) t(x)")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"n": 10_000_000, "s": 49_999_995_000_000i64}])
    );
    assert_eq!(
        serde_json::to_value(&out.columns).unwrap(),
        json!([{"name": "n", "type": "BIGINT"}, {"name": "s", "type": "HUGEINT"}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn parameters_bind_in_order_and_stay_data() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |_| {});
    let out = run_with(
        &engine,
        "SELECT name FROM users WHERE id = ? OR name = ?",
        json!([1, "grace"]),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"name": "ada"}, {"name": "grace"}])
    );
    let out = run_with(
        &engine,
        "SELECT $2 || $1 AS s, $1 IS NULL AS n",
        json!([null, "x"]),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"s": null, "n": true}])
    );
    // A parameter is a value, never SQL.
    let out = run_with(
        &engine,
        "SELECT count(*) AS n FROM users WHERE name = ?",
        json!(["x' OR 1=1 --"]),
        None,
    )
    .await
    .unwrap();
    assert_eq!(out.rows[0]["n"], 0);
    assert_eq!(
        err_text(run_with(&engine, "SELECT ? + ?", json!([1]), None).await),
        "the query uses 2 placeholders, but 1 parameter was given"
    );
}

// ---------------------------------------------------------------------------
// Values: each DuckDB type family
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn values_of_every_type_family() {
    let (_dir, path) = fixture("CREATE TYPE mood AS ENUM ('sad', 'happy')");
    let engine = engine_on(&path, |_| {});
    // (expression, DuckDB's type name, JSON value)
    let cases: Vec<(&str, &str, Value)> = vec![
        ("true", "BOOLEAN", json!(true)),
        ("(-128)::TINYINT", "TINYINT", json!(-128)),
        ("32767::SMALLINT", "SMALLINT", json!(32767)),
        ("2147483647", "INTEGER", json!(2147483647)),
        ("9223372036854775807::BIGINT", "BIGINT", json!(9223372036854775807i64)),
        ("255::UTINYINT", "UTINYINT", json!(255)),
        (
            "18446744073709551615::UBIGINT",
            "UBIGINT",
            json!(18446744073709551615u64),
        ),
        ("9007199254740992::HUGEINT", "HUGEINT", json!(9007199254740992i64)),
        ("9007199254740993::HUGEINT", "HUGEINT", json!("9007199254740993")),
        (
            "(-170141183460469231731687303715884105727)::HUGEINT - 1",
            "HUGEINT",
            json!("-170141183460469231731687303715884105728"),
        ),
        (
            "340282366920938463463374607431768211455::UHUGEINT",
            "UHUGEINT",
            json!("340282366920938463463374607431768211455"),
        ),
        (
            "12.30::DECIMAL(4,2)",
            "DECIMAL(4,2)",
            serde_json::from_str("12.30").unwrap(),
        ),
        (
            "(-0.005)::DECIMAL(18,3)",
            "DECIMAL(18,3)",
            serde_json::from_str("-0.005").unwrap(),
        ),
        (
            "12345678901234567.891::DECIMAL(38,3)",
            "DECIMAL(38,3)",
            json!("12345678901234567.891"),
        ),
        ("1.5::FLOAT", "FLOAT", json!(1.5)),
        ("0.1::DOUBLE", "DOUBLE", json!(0.1)),
        ("'NaN'::DOUBLE", "DOUBLE", json!("NaN")),
        ("'-Infinity'::DOUBLE", "DOUBLE", json!("-Infinity")),
        ("DATE '2024-01-02'", "DATE", json!("2024-01-02")),
        ("DATE '0044-03-15 (BC)'", "DATE", json!("0044-03-15 BC")),
        ("'infinity'::DATE", "DATE", json!("infinity")),
        ("TIME '04:05:06.789'", "TIME", json!("04:05:06.789")),
        (
            "TIMESTAMP '2024-01-02 03:04:05'",
            "TIMESTAMP",
            json!("2024-01-02 03:04:05"),
        ),
        (
            "TIMESTAMP '2024-01-02 03:04:05.25'",
            "TIMESTAMP",
            json!("2024-01-02 03:04:05.25"),
        ),
        (
            "'2024-01-02 03:04:05'::TIMESTAMP_S",
            "TIMESTAMP_S",
            json!("2024-01-02 03:04:05"),
        ),
        (
            "'2024-01-02 03:04:05.123'::TIMESTAMP_MS",
            "TIMESTAMP_MS",
            json!("2024-01-02 03:04:05.123"),
        ),
        (
            "'2024-01-02 03:04:05.123456789'::TIMESTAMP_NS",
            "TIMESTAMP_NS",
            json!("2024-01-02 03:04:05.123456789"),
        ),
        (
            "TIMESTAMPTZ '2024-01-02 03:04:05+00'",
            "TIMESTAMP WITH TIME ZONE",
            json!("2024-01-02 03:04:05+00"),
        ),
        (
            "INTERVAL '1 year 2 months 3 days 04:05:06'",
            "INTERVAL",
            json!("1 year 2 months 3 days 04:05:06"),
        ),
        ("INTERVAL '90 minutes'", "INTERVAL", json!("01:30:00")),
        ("'\\xAA\\x00'::BLOB", "BLOB", json!("\\xaa00")),
        (
            "'0f2c1a4e-2b3d-4c5e-8f60-718293a4b5c6'::UUID",
            "UUID",
            json!("0f2c1a4e-2b3d-4c5e-8f60-718293a4b5c6"),
        ),
        ("'happy'::mood", "ENUM('sad', 'happy')", json!("happy")),
        ("'héllo'", "VARCHAR", json!("héllo")),
        ("[1, 2, NULL]", "INTEGER[]", json!([1, 2, null])),
        ("[[1], []]", "INTEGER[][]", json!([[1], []])),
        ("[1.5, 2]::DOUBLE[2]", "DOUBLE[2]", json!([1.5, 2.0])),
        (
            "{'a': 1, 'b': 'x'}",
            "STRUCT(a INTEGER, b VARCHAR)",
            json!({"a": 1, "b": "x"}),
        ),
        ("MAP {'k': 1, 'j': 2}", "MAP(VARCHAR, INTEGER)", json!({"k": 1, "j": 2})),
        (
            "MAP {1: 'x'}",
            "MAP(INTEGER, VARCHAR)",
            json!([{"key": 1, "value": "x"}]),
        ),
        (
            "[TIMESTAMPTZ '2024-01-02 03:04:05+00']",
            "TIMESTAMP WITH TIME ZONE[]",
            json!(["2024-01-02 03:04:05+00"]),
        ),
        (
            "[340282366920938463463374607431768211455::UHUGEINT]",
            "UHUGEINT[]",
            json!(["340282366920938463463374607431768211455"]),
        ),
        ("union_value(n := 7)", "UNION(n INTEGER)", json!(7)),
        ("'0101'::BIT", "BIT", json!("0101")),
        ("'04:05:06+02'::TIMETZ", "TIME WITH TIME ZONE", json!("04:05:06+02")),
        (
            "123456789012345678901234567890::BIGNUM",
            "BIGNUM",
            json!("123456789012345678901234567890"),
        ),
        ("NULL", "NULL", json!(null)),
        ("NULL::INTEGER", "INTEGER", json!(null)),
    ];
    // All in one row: the types are per column, as DuckDB declared them.
    let select: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (expr, _, _))| format!("{expr} AS c{i}"))
        .collect();
    let out = run(&engine, &format!("SELECT {}", select.join(", "))).await.unwrap();
    let row = &out.rows[0];
    for (i, (expr, type_name, want)) in cases.iter().enumerate() {
        assert_eq!(out.columns[i].type_name, *type_name, "{expr}");
        assert_eq!(
            serde_json::to_string(&row[&format!("c{i}")]).unwrap(),
            serde_json::to_string(want).unwrap(),
            "{expr}"
        );
    }
}

// ---------------------------------------------------------------------------
// Errors: syntax passed through, suggestions
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn syntax_errors_are_passed_through_verbatim() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |_| {});
    let err = db_error(run(&engine, "SELEC * FROM users").await);
    assert_eq!(err.code(), "DUCKDB_PARSER");
    assert_eq!(
        err.message,
        "Parser Error: syntax error at or near \"SELEC\"\n\nLINE 1: SELEC * FROM users\n        ^^^^^"
    );
    assert_eq!(
        err_text(run(&engine, "SELECT * FROM users WHERE").await),
        "Parser Error: syntax error at or near \"WHERE\" (DUCKDB_PARSER)\n\nLINE 1: SELECT * FROM users WHERE\n                            ^^^^^"
    );
    // The query is not echoed back beyond DuckDB's own line.
    let text = err_text(run(&engine, "SELECT 1,\n  2 FROM FROM users").await);
    assert!(
        text.starts_with("Parser Error: syntax error at or near \"FROM\" (DUCKDB_PARSER)\n\nLINE 2:"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tables_and_columns_get_close_names() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |_| {});
    // DuckDB offers "users" itself; pgmcp adds the other close table.
    let err = db_error(run(&engine, "SELECT * FROM user").await);
    assert_eq!(err.code(), "DUCKDB_CATALOG");
    assert!(
        err.message
            .starts_with("Catalog Error: Table with name user does not exist!"),
        "{}",
        err.message
    );
    assert!(err.message.contains("Did you mean \"users\"?"), "{}", err.message);
    assert_eq!(err.suggestions, ["user_roles"]);
    let text = err_text(run(&engine, "SELECT * FROM user").await);
    assert!(text.contains("\nDid you mean: user_roles?"), "{text}");

    let err = db_error(run(&engine, "SELECT * FROM ordrs").await);
    assert!(err.message.contains("Did you mean \"orders\"?"), "{}", err.message);
    assert!(
        !err.suggestions.contains(&"orders".to_owned()),
        "not twice: {:?}",
        err.suggestions
    );

    // A misspelled column: DuckDB names the candidates of the query's tables;
    // pgmcp adds close columns of other tables.
    let err = db_error(run(&engine, "SELECT role FROM users").await);
    assert_eq!(err.code(), "DUCKDB_BINDER");
    assert!(
        err.message
            .starts_with("Binder Error: Referenced column \"role\" not found"),
        "{}",
        err.message
    );
    assert_eq!(err.suggestions, ["user_roles.role_name"]);
    let err = db_error(run(&engine, "SELECT nme FROM users").await);
    assert!(err.message.contains("\"name\""), "{}", err.message);
    assert!(
        err.suggestions.iter().all(|s| !s.ends_with(".name")),
        "{:?}",
        err.suggestions
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_file_is_not_found_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.duckdb");
    for read_only in [true, false] {
        let engine = engine_on(&path, |c| c.read_only = read_only);
        // The answer names the file, never its directory (the model sees it).
        let text = err_text(run(&engine, "SELECT 1").await);
        assert_eq!(text, "Database not found: nope.duckdb");
    }
    assert_eq!(listing(dir.path()), Vec::<String>::new());
}

/// A file DuckDB cannot open, named by its absolute path: every tool's error
/// names the file, never its directory, in both modes, and the file is left
/// as it was. (The open error's texts are masked as every other error's.)
#[tokio::test(flavor = "multi_thread")]
async fn a_file_duckdb_cannot_open_is_named_without_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.duckdb");
    let bytes = b"these are notes, not a DuckDB database\n".repeat(200);
    std::fs::write(&path, &bytes).unwrap();
    let shown_dir = dir.path().display().to_string();
    for read_only in [true, false] {
        let engine = engine_on(&path, |c| c.read_only = read_only);
        let texts = [
            err_text(run(&engine, "SELECT 1").await),
            err_text(engine.list_tables(&TableFilter::default(), ct()).await),
            err_text(engine.describe_table("t", None, ct()).await),
        ];
        for text in texts {
            assert!(text.contains("notes.duckdb"), "read_only {read_only}: {text}");
            assert!(!text.contains(&shown_dir), "read_only {read_only}: {text}");
        }
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(listing(dir.path()), ["notes.duckdb"]);
}

// ---------------------------------------------------------------------------
// Timeouts and cancellation
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_runaway_query_times_out_with_a_helpful_message() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |c| c.query.default_timeout = Duration::from_secs(1));
    let result = run(&engine, RUNAWAY).await;
    assert!(
        matches!(result.as_ref().map_err(Error::kind), Err(Error::Timeout { .. })),
        "{result:?}"
    );
    assert_eq!(
        err_text(result),
        "query timed out after 1s: it was cancelled on the server. Add a LIMIT, filter with WHERE, or ask for fewer columns"
    );
    // The interrupted statement is gone: the next call runs.
    assert_eq!(
        rows(&engine, "SELECT count(*) AS n FROM users").await,
        json!([{"n": 3}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_token_stops_the_query() {
    let (_dir, path) = fixture(SHOP);
    let engine = std::sync::Arc::new(engine_on(&path, |_| {}));
    let token = CancellationToken::new();
    let call = {
        let (engine, token) = (engine.clone(), token.clone());
        tokio::spawn(async move { engine.query(&QueryInput::new(RUNAWAY), token).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    token.cancel();
    let result = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the query stopped")
        .unwrap();
    assert!(
        matches!(result.as_ref().map_err(Error::kind), Err(Error::Cancelled)),
        "{result:?}"
    );
    assert_eq!(
        rows(&engine, "SELECT count(*) AS n FROM users").await,
        json!([{"n": 3}])
    );
}

// ---------------------------------------------------------------------------
// The sandbox: what is blocked, and that the file system is untouched
// ---------------------------------------------------------------------------

/// Every operation the DuckDB guard blocks, refused by default with the flag named,
/// on a writable engine (so read-only mode is not what refuses them), with
/// nothing written anywhere.
#[tokio::test(flavor = "multi_thread")]
async fn each_blocked_operation_is_refused_by_default() {
    let (dir, path) = fixture(SHOP);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let csv = dir.path().join("data.csv");
    std::fs::write(&csv, "a,b\n1,2\n").unwrap();
    let o = out.display();
    let c = csv.display();
    let engine = engine_on(&path, |c| c.read_only = false);
    // (sql, rule, flag named in the message)
    let cases: Vec<(String, Rule, &str)> = vec![
        (
            format!("COPY users TO '{o}/users.csv'"),
            Rule::CopyToFile,
            "allow_copy_to_file",
        ),
        (
            format!("COPY (SELECT * FROM users) TO '{o}/users.parquet' (FORMAT parquet)"),
            Rule::CopyToFile,
            "allow_copy_to_file",
        ),
        (format!("COPY users FROM '{c}'"), Rule::CopyFrom, "allow_copy_from"),
        (format!("EXPORT DATABASE '{o}/export'"), Rule::Export, "allow_export"),
        (format!("IMPORT DATABASE '{o}'"), Rule::Export, "allow_export"),
        (
            format!("ATTACH '{o}/other.duckdb' AS other"),
            Rule::Attach,
            "allow_attach",
        ),
        ("DETACH other".to_owned(), Rule::Attach, "allow_attach"),
        ("INSTALL httpfs".to_owned(), Rule::Load, "allow_load"),
        ("LOAD httpfs".to_owned(), Rule::Load, "allow_load"),
        (
            format!("SELECT * FROM read_csv('{c}')"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        (
            format!("SELECT * FROM read_csv_auto('{c}')"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        (
            format!("SELECT * FROM '{c}'"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        (
            format!("SELECT * FROM read_text('{c}')"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        (
            format!("SELECT * FROM glob('{o}/*')"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        (
            format!("SELECT * FROM read_parquet('{o}/x.parquet')"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        (
            format!("SELECT * FROM users JOIN read_json('{c}') j ON true"),
            Rule::FileFunction,
            "allow_file_functions",
        ),
        ("DROP TABLE orders".to_owned(), Rule::Drop, "allow_drop"),
        (
            "DELETE FROM orders".to_owned(),
            Rule::DeleteWithoutWhere,
            "allow_delete_without_where",
        ),
        (
            "UPDATE orders SET total = 0".to_owned(),
            Rule::UpdateWithoutWhere,
            "allow_update_without_where",
        ),
        ("TRUNCATE orders".to_owned(), Rule::Truncate, "allow_truncate"),
        (
            "CREATE MACRO twice(a) AS a * 2".to_owned(),
            Rule::CreateFunction,
            "allow_create_function",
        ),
        ("SET threads = 1".to_owned(), Rule::Set, "allow_set"),
    ];
    for (sql, rule, flag) in cases {
        let (got, message) = refusal(run(&engine, &sql).await);
        assert_eq!(got, rule, "{sql}: {message}");
        // "Set protection.x to true to allow it", or for a change that
        // reaches every row, "Add a WHERE clause, or set protection.x to true".
        assert!(
            message.ends_with(&format!("Set protection.{flag} to true to allow it"))
                || message.ends_with(&format!("Add a WHERE clause, or set protection.{flag} to true")),
            "{sql}: {message}"
        );
    }
    assert_eq!(listing(&out), Vec::<String>::new(), "nothing was written");
    assert_eq!(listing(dir.path()), ["data.csv", "data.duckdb", "out"]);
    drop(engine);
    assert_eq!(scalar(&path, "SELECT count(*) FROM orders"), 2);
    assert_eq!(
        scalar(&path, "SELECT count(*) FROM duckdb_databases() WHERE NOT internal"),
        1
    );
}

/// One statement under two rules, one switch on: the other rule still
/// refuses it (pinned when the guards began reporting to one judge), and
/// nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn one_switch_on_leaves_the_other_rules() {
    let (dir, path) = fixture(SHOP);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let csv = dir.path().join("data.csv");
    std::fs::write(&csv, "a,b\n1,2\n").unwrap();
    let (o, c) = (out.display(), csv.display());
    let replace_macro = "CREATE OR REPLACE MACRO twice(a) AS a * 2";
    // (read-only, switches on, sql, refusing rule)
    let cases: Vec<(bool, &[&str], String, Rule)> = vec![
        (false, &["allow_create_function"], replace_macro.into(), Rule::Drop),
        (false, &["allow_drop"], replace_macro.into(), Rule::CreateFunction),
        (
            true,
            &["allow_create_function", "allow_drop"],
            replace_macro.into(),
            Rule::ReadOnly,
        ),
        (
            false,
            &["allow_create_function"],
            format!("EXPLAIN ANALYZE {replace_macro}"),
            Rule::Drop,
        ),
        (
            false,
            &["allow_update_without_where"],
            "ALTER TABLE users DROP COLUMN score".into(),
            Rule::Drop,
        ),
        (
            false,
            &["allow_drop"],
            "ALTER TABLE users ALTER COLUMN score TYPE VARCHAR".into(),
            Rule::UpdateWithoutWhere,
        ),
        (
            false,
            &["allow_delete_without_where"],
            "TRUNCATE orders".into(),
            Rule::Truncate,
        ),
        (
            true,
            &["allow_delete_without_where"],
            "EXPLAIN ANALYZE DELETE FROM orders".into(),
            Rule::ReadOnly,
        ),
        (
            false,
            &["allow_pragma_write"],
            format!("IMPORT DATABASE '{o}'"),
            Rule::Export,
        ),
        (
            false,
            &["allow_copy_from"],
            format!("COPY users TO '{o}/users.csv'"),
            Rule::CopyToFile,
        ),
        (
            false,
            &["allow_create_extension"],
            "CREATE OR REPLACE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')".into(),
            Rule::Drop,
        ),
        (
            false,
            &["allow_file_functions"],
            format!("SELECT * FROM read_csv('{c}')"),
            Rule::BlockedFunction,
        ),
    ];
    for (read_only, flags, sql, rule) in cases {
        let engine = engine_on(&path, |config| {
            config.read_only = read_only;
            for flag in flags {
                config.protection.set_flag(flag, true).unwrap();
            }
            config
                .protection
                .blocked_functions
                .push(pgmcp::FunctionPattern::new("read_csv"));
        });
        let (got, message) = refusal(run(&engine, &sql).await);
        assert_eq!(got, rule, "{sql} ({flags:?}, read-only {read_only}): {message}");
    }
    assert_eq!(listing(&out), Vec::<String>::new(), "nothing was written");
    assert_eq!(scalar(&path, "SELECT count(*) FROM orders"), 2);
    assert_eq!(
        scalar(
            &path,
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'users'"
        ),
        3
    );
}

/// Allowed by its flag (and, for anything that touches a file,
/// `allow_file_functions`, which turns DuckDB's external access on), each
/// operation does what it says.
#[tokio::test(flavor = "multi_thread")]
async fn blocked_operations_run_with_their_flags() {
    let (dir, path) = fixture(SHOP);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let csv = dir.path().join("data.csv");
    std::fs::write(&csv, "a,b\n1,2\n3,4\n").unwrap();
    let (o, c) = (out.display(), csv.display());

    let files = allowing(&path, "allow_file_functions");
    assert_eq!(
        rows(&files, &format!("SELECT * FROM read_csv('{c}') ORDER BY a")).await,
        json!([{"a": 1, "b": 2}, {"a": 3, "b": 4}])
    );
    assert_eq!(
        rows(&files, &format!("SELECT sum(b) AS s FROM '{c}'")).await,
        json!([{"s": 6}])
    );
    drop(files);

    let copy = allowing(&path, "allow_copy_to_file+allow_file_functions");
    let done = run(&copy, &format!("COPY users TO '{o}/users.csv'")).await.unwrap();
    assert_eq!(done.rows_affected, Some(3));
    assert_eq!(
        std::fs::read_to_string(out.join("users.csv")).unwrap(),
        "id,name,score\n1,ada,12.5\n2,alan,\n3,grace,7.0\n"
    );
    drop(copy);

    let export = allowing(&path, "allow_export+allow_file_functions");
    run(&export, &format!("EXPORT DATABASE '{o}/export'")).await.unwrap();
    assert!(out.join("export/schema.sql").is_file());
    drop(export);

    let attach = allowing(&path, "allow_attach+allow_file_functions");
    run(&attach, &format!("ATTACH '{o}/other.duckdb' AS other"))
        .await
        .unwrap();
    assert!(out.join("other.duckdb").is_file());
    drop(attach);

    let load = allowing(&path, "allow_copy_from+allow_file_functions");
    let done = run(&load, &format!("COPY user_roles FROM '{c}'")).await.unwrap();
    assert_eq!(done.rows_affected, Some(2));
    drop(load);
    assert_eq!(scalar(&path, "SELECT count(*) FROM user_roles"), 3);
}

/// The guard is the first line; DuckDB's locked settings the second. With a
/// flag on but external access off, DuckDB still refuses, and still writes
/// nothing.
#[tokio::test(flavor = "multi_thread")]
async fn duckdb_refuses_files_even_when_the_guard_allows() {
    let (dir, path) = fixture(SHOP);
    let o = dir.path().display();
    let engine = allowing(&path, "allow_copy_to_file+allow_export+allow_attach+allow_load");
    for sql in [
        format!("COPY users TO '{o}/users.csv'"),
        format!("EXPORT DATABASE '{o}/export'"),
        format!("ATTACH '{o}/other.duckdb' AS other"),
        "INSTALL httpfs".to_owned(),
    ] {
        let err = db_error(run(&engine, &sql).await);
        assert!(err.code().starts_with("DUCKDB_"), "{sql}: {err}");
    }
    assert_eq!(listing(dir.path()), ["data.duckdb"]);
    // And settings cannot be changed by a query, not even with allow_set.
    let engine = allowing(&path, "allow_set");
    for sql in [
        "SET enable_external_access = true",
        "SET memory_limit = '100GB'",
        "SET access_mode = 'READ_WRITE'",
        "RESET enable_external_access",
        "PRAGMA enable_profiling",
    ] {
        let err = db_error(run(&engine, sql).await);
        assert!(
            err.message.contains("the configuration has been locked"),
            "{sql}: {err}"
        );
    }
    assert_eq!(
        rows(&engine, "SELECT current_setting('enable_external_access') AS e").await,
        json!([{"e": false}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_limit_and_threads_come_from_the_config() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |c| {
        c.duckdb.memory_limit = Some("256MiB".into());
        c.duckdb.threads = Some(1);
    });
    assert_eq!(
        rows(
            &engine,
            "SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t"
        )
        .await,
        json!([{"m": "256.0 MiB", "t": 1}])
    );
    // An aggregate that needs more memory than allowed fails, and the server
    // goes on.
    let err = db_error(run(&engine, "SELECT list(x) AS l FROM range(100000000) t(x)").await);
    assert_eq!(err.code(), "DUCKDB_OUT_OF_MEMORY", "{err}");
    assert_eq!(rows(&engine, "SELECT 1 AS one").await, json!([{"one": 1}]));
}

#[tokio::test(flavor = "multi_thread")]
async fn multi_statement_queries_are_refused() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |c| c.read_only = false);
    for sql in [
        "SELECT 1; SELECT 2",
        "SELECT 1; DROP TABLE users",
        "INSERT INTO users VALUES (9, 'x', 1); DELETE FROM users",
        "SELECT ';'; SELECT 2",
    ] {
        let (rule, message) = refusal(run(&engine, sql).await);
        assert_eq!(rule, Rule::MultiStatement, "{sql}");
        assert_eq!(
            message,
            "multi-statement queries are not allowed: found 2 statements. Send one statement per call"
        );
    }
    for sql in ["", "  ", "-- nothing", ";"] {
        assert_eq!(refusal(run(&engine, sql).await).0, Rule::Parse, "{sql:?}");
    }
    // A trailing semicolon is one statement.
    assert_eq!(
        rows(&engine, "SELECT count(*) AS n FROM users;").await,
        json!([{"n": 3}])
    );
}

// ---------------------------------------------------------------------------
// Read-only and writable sessions
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn read_only_refuses_writes_and_leaves_the_file_unchanged() {
    let (_dir, path) = fixture(SHOP);
    let before = snapshot(&path);
    let engine = engine_on(&path, |c| c.protection = pgmcp::Policy::permissive());
    // The guard refuses what DuckDB says writes...
    for sql in [
        "INSERT INTO users VALUES (4, 'x', 1)",
        "UPDATE users SET score = 0 WHERE id = 1",
        "DELETE FROM users WHERE id = 1",
        "CREATE TABLE t (a INTEGER)",
        "ALTER TABLE users ADD COLUMN c INTEGER",
        "DROP TABLE orders",
    ] {
        let (rule, message) = refusal(run(&engine, sql).await);
        assert_eq!(rule, Rule::ReadOnly, "{sql}");
        assert!(message.ends_with("in read-only mode: the database is opened read-only (server.read_only is on)"));
    }
    // ...and DuckDB opened the file in its read-only access mode, which
    // refuses any write that would get past the guard.
    assert_eq!(
        rows(&engine, "SELECT current_setting('access_mode') AS m").await,
        json!([{"m": "read_only"}])
    );
    assert_eq!(
        rows(&engine, "SELECT count(*) AS n FROM users").await,
        json!([{"n": 3}])
    );
    drop(engine);
    assert_eq!(snapshot(&path), before);
}

/// A refusal in read-only mode names only a remedy that works there: a
/// file function inside a write, or a checkpoint, is refused as a write
/// (allow_file_functions or allow_maintenance would only lead there); in a
/// query, or in read-write mode, the file function's own switch is named.
#[tokio::test(flavor = "multi_thread")]
async fn read_only_names_no_switch_that_cannot_help() {
    let (_dir, path) = fixture(SHOP);
    let before = snapshot(&path);
    let writes = [
        ("INSERT INTO users SELECT * FROM read_csv('users.csv')", "INSERT"),
        ("INSERT INTO users SELECT * FROM 'users.csv'", "INSERT"),
        (
            "UPDATE users SET score = (SELECT count(*) FROM glob('*')) WHERE id = 1",
            "UPDATE",
        ),
        (
            "DELETE FROM users WHERE id IN (SELECT id FROM read_parquet('x.parquet'))",
            "DELETE",
        ),
        ("CREATE TABLE t AS FROM read_csv('users.csv')", "CREATE"),
        ("CREATE VIEW v AS SELECT * FROM read_json('x.json')", "CREATE"),
    ];
    // One engine on the file at a time: a writable DuckDB locks it.
    let read_only = engine_on(&path, |_| {});
    for (sql, verb) in writes {
        let (rule, message) = refusal(run(&read_only, sql).await);
        assert_eq!(rule, Rule::ReadOnly, "{sql}: {message}");
        assert_eq!(
            message,
            format!(
                "{verb} is not allowed in read-only mode: the database is opened read-only (server.read_only is on)"
            )
        );
    }
    let (rule, message) = refusal(run(&read_only, "SELECT * FROM read_csv('users.csv')").await);
    assert_eq!(rule, Rule::FileFunction, "{message}");
    let (rule, message) = refusal(run(&read_only, "CHECKPOINT").await);
    assert_eq!(rule, Rule::ReadOnly, "{message}");
    assert!(!message.contains("protection."), "{message}");
    drop(read_only);
    assert_eq!(snapshot(&path), before);
    let read_write = engine_on(&path, |c| c.read_only = false);
    for (sql, _) in writes {
        let (rule, message) = refusal(run(&read_write, sql).await);
        assert_eq!(rule, Rule::FileFunction, "{sql} in read-write mode: {message}");
        assert!(
            message.ends_with("Set protection.allow_file_functions to true to allow it"),
            "{message}"
        );
    }
    let (rule, _) = refusal(run(&read_write, "CHECKPOINT").await);
    assert_eq!(rule, Rule::Maintenance);
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_commit_and_report_rows_affected() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |c| {
        c.read_only = false;
        c.query.max_rows = 5;
    });
    let out = run(&engine, "INSERT INTO users VALUES (4, 'edsger', 1), (5, 'barbara', 2)")
        .await
        .unwrap();
    assert_eq!((out.rows_affected, out.returned_rows), (Some(2), 0));
    let out = run(&engine, "UPDATE users SET score = 3 WHERE id > 3").await.unwrap();
    assert_eq!(out.rows_affected, Some(2));
    let out = run(&engine, "DELETE FROM users WHERE id = 5 RETURNING name")
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&out.rows).unwrap(), json!([{"name": "barbara"}]));
    // A write whose RETURNING rows pass the cap still runs to its end.
    let out = run(
        &engine,
        "INSERT INTO user_roles SELECT 1, 'r' || range FROM range(50) RETURNING role_name",
    )
    .await
    .unwrap();
    assert_eq!((out.returned_rows, out.truncated), (5, true));
    drop(engine);
    assert_eq!(scalar(&path, "SELECT count(*) FROM users"), 4);
    assert_eq!(scalar(&path, "SELECT count(*) FROM user_roles"), 51);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_in_memory_database_is_guarded_in_read_only_mode() {
    let engine = Engine::from_env(Config::builtin(), Some("duckdb::memory:")).unwrap();
    assert_eq!(rows(&engine, "SELECT 42 AS answer").await, json!([{"answer": 42}]));
    assert_eq!(
        refusal(run(&engine, "CREATE TABLE t (a INTEGER)").await).0,
        Rule::ReadOnly
    );
    let writable = Engine::from_env(
        Config {
            read_only: false,
            ..Config::builtin()
        },
        Some("duckdb::memory:"),
    )
    .unwrap();
    run(&writable, "CREATE TABLE t AS SELECT 1 AS a").await.unwrap();
    // One database for the session: the table is there for the next call.
    assert_eq!(rows(&writable, "SELECT a FROM t").await, json!([{"a": 1}]));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_database_argument_is_refused() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |_| {});
    let input = QueryInput {
        database: Some("other.duckdb".into()),
        ..QueryInput::new("SELECT 1")
    };
    let text = err_text(engine.query(&input, ct()).await);
    assert!(
        text.contains("this server is connected to one DuckDB database"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------
// list_tables and describe_table
// ---------------------------------------------------------------------------

const CATALOG: &str = "
    CREATE TABLE users (id INTEGER PRIMARY KEY, name VARCHAR(20) NOT NULL, email VARCHAR UNIQUE,
                        age INTEGER DEFAULT 18 CHECK (age >= 0), tags VARCHAR[],
                        twice INTEGER GENERATED ALWAYS AS (id * 2));
    COMMENT ON TABLE users IS 'people';
    COMMENT ON COLUMN users.name IS 'display name';
    INSERT INTO users (id, name, email) SELECT range, 'u' || range, 'e' || range FROM range(10);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), total DECIMAL(10,2));
    CREATE INDEX orders_by_user ON orders (user_id);
    CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
    CREATE SCHEMA sales;
    CREATE TABLE sales.orders (id INTEGER);
";

#[tokio::test(flavor = "multi_thread")]
async fn list_tables_lists_tables_and_views_filtered_and_capped() {
    let (_dir, path) = fixture(CATALOG);
    let engine = engine_on(&path, |_| {});
    let names = |list: &pgmcp::TableList| {
        list.tables
            .iter()
            .map(|t| format!("{}.{}:{}", t.schema, t.name, t.kind))
            .collect::<Vec<_>>()
    };
    let all = engine.list_tables(&TableFilter::default(), ct()).await.unwrap();
    assert_eq!(
        names(&all),
        [
            "main.big_orders:view",
            "main.orders:table",
            "main.users:table",
            "sales.orders:table"
        ]
    );
    let users = all.tables.iter().find(|t| t.name == "users").unwrap();
    assert_eq!(
        (users.comment.as_deref(), users.estimated_rows),
        (Some("people"), Some(10))
    );
    assert!(!all.truncated);

    let filter = |schema: Option<&str>, pattern: Option<&str>| TableFilter {
        schema: schema.map(Into::into),
        pattern: pattern.map(Into::into),
        ..TableFilter::default()
    };
    let list = engine.list_tables(&filter(None, Some("ORDER")), ct()).await.unwrap();
    assert_eq!(
        names(&list),
        ["main.big_orders:view", "main.orders:table", "sales.orders:table"]
    );
    let list = engine.list_tables(&filter(Some("sales"), None), ct()).await.unwrap();
    assert_eq!(names(&list), ["sales.orders:table"]);

    let capped = engine_on(&path, |c| c.query.max_rows = 2);
    let list = capped.list_tables(&TableFilter::default(), ct()).await.unwrap();
    assert_eq!(list.tables.len(), 2);
    assert!(list.truncated && list.hint.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn describe_table_reports_columns_keys_indexes_and_views() {
    let (_dir, path) = fixture(CATALOG);
    let engine = engine_on(&path, |_| {});
    let users = engine.describe_table("Users", None, ct()).await.unwrap();
    assert_eq!(
        (users.schema.as_str(), users.name.as_str(), users.kind.as_str()),
        ("main", "users", "table")
    );
    assert_eq!(users.comment.as_deref(), Some("people"));
    let columns = serde_json::to_value(&users.columns).unwrap();
    assert_eq!(
        columns,
        json!([
            {"name": "id", "type": "INTEGER", "nullable": false, "is_primary_key": true},
            {"name": "name", "type": "VARCHAR", "nullable": false, "is_primary_key": false, "comment": "display name"},
            {"name": "email", "type": "VARCHAR", "nullable": true, "is_primary_key": false},
            {"name": "age", "type": "INTEGER", "nullable": true, "default": "18", "is_primary_key": false},
            {"name": "tags", "type": "VARCHAR[]", "nullable": true, "is_primary_key": false},
            {"name": "twice", "type": "INTEGER", "nullable": true, "is_primary_key": false, "generated": "CAST((id * 2) AS INTEGER)"}
        ])
    );
    let constraints: Vec<(&str, &str)> = users
        .constraints
        .iter()
        .map(|c| (c.kind.as_str(), c.definition.as_str()))
        .collect();
    assert_eq!(
        constraints,
        [
            ("PRIMARY KEY", "PRIMARY KEY(id)"),
            ("UNIQUE", "UNIQUE(email)"),
            ("CHECK", "CHECK((age >= 0))")
        ]
    );
    assert!(users.definition.as_deref().unwrap().starts_with("CREATE TABLE users("));

    let orders = engine.describe_table("orders", None, ct()).await.unwrap();
    assert_eq!(orders.schema, "main", "main wins over sales");
    assert_eq!(orders.foreign_keys.len(), 1);
    assert_eq!(orders.foreign_keys[0].columns, ["user_id"]);
    assert_eq!(orders.foreign_keys[0].referenced_table, "users");
    assert_eq!(orders.foreign_keys[0].referenced_columns, ["id"]);
    assert_eq!(orders.indexes.len(), 1);
    assert_eq!(orders.indexes[0].name, "orders_by_user");
    assert_eq!(
        orders.indexes[0].definition,
        "CREATE INDEX orders_by_user ON orders(user_id);"
    );
    assert_eq!(orders.columns[2].type_name, "DECIMAL(10,2)");

    let sales = engine.describe_table("sales.orders", None, ct()).await.unwrap();
    assert_eq!((sales.schema.as_str(), sales.columns.len()), ("sales", 1));

    let view = engine.describe_table("big_orders", None, ct()).await.unwrap();
    assert_eq!(view.kind, "view");
    assert!(
        view.definition.as_deref().unwrap().contains("total > 100"),
        "{:?}",
        view.definition
    );

    assert_eq!(
        err_text(engine.describe_table("user", None, ct()).await),
        "table \"user\" does not exist. Did you mean: users?"
    );
    assert_eq!(
        err_text(engine.describe_table("zzzzzzzz", None, ct()).await),
        "table \"zzzzzzzz\" does not exist. Call list_tables to see what exists."
    );
}

// ---------------------------------------------------------------------------
// The real binary: stdio session, check, query
// ---------------------------------------------------------------------------

fn query_tool(tools: &Value) -> &Value {
    tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query")
        .expect("a query tool")
}

#[test]
fn stdio_session_on_a_duckdb_file() {
    let (_db_dir, path) = fixture(CATALOG);
    let before = snapshot(&path);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        json!({
            "logging": {"output": dir.path().join("pgmcp.log")},
            "query": {"default_timeout_seconds": 30, "list_tables_timeout_seconds": 10,
                      "describe_table_timeout_seconds": 10, "max_rows": 1000, "default_limit": 100},
            "duckdb": {"memory_limit": "512MiB", "threads": 2}
        })
        .to_string(),
    )
    .unwrap();
    let database = url(&path);
    let config = config.to_str().unwrap();
    let mut mcp = McpProcess::spawn(&["serve", "--config", config, "--database", &database], &[]);

    let init = mcp.initialize();
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("a DuckDB database"), "{instructions}");
    assert!(
        instructions.contains("at most 100 rows unless it passes a larger limit (up to 1000)"),
        "{instructions}"
    );
    assert!(instructions.contains("? or $1, $2"), "{instructions}");
    assert_eq!(init["serverInfo"]["title"], "DuckDB (pgmcp)");

    let tools = mcp.request("tools/list", json!({}));
    let query = query_tool(&tools);
    assert!(query["description"].as_str().unwrap().contains("DuckDB"), "{query}");
    assert!(query["inputSchema"]["properties"].get("database").is_none(), "{query}");
    assert!(query["outputSchema"]["properties"]["total_rows"].is_object(), "{query}");
    // The arguments speak of DuckDB too, never of another engine.
    let sql = query["inputSchema"]["properties"]["sql"]["description"]
        .as_str()
        .unwrap();
    assert!(sql.contains("DuckDB") && sql.contains('?'), "{sql}");
    assert!(!query.to_string().contains("PostgreSQL"), "{query}");

    let list = mcp.call_tool("list_tables", json!({"pattern": "order"}));
    assert_eq!(list["isError"], false, "{list}");
    let list = tool_json(&list);
    let names: Vec<&str> = list["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["big_orders", "orders", "orders"]);

    let desc = tool_json(&mcp.call_tool("describe_table", json!({"table": "orders"})));
    assert_eq!(
        desc["columns"][2],
        json!({"name": "total", "type": "DECIMAL(10,2)", "nullable": true, "is_primary_key": false})
    );

    let result = mcp.call_tool(
        "query",
        json!({"sql": "SELECT id, name FROM users WHERE id = ?", "params": [1]}),
    );
    assert_eq!(result["isError"], false);
    let out = tool_json(&result);
    assert_eq!(out["rows"], json!([{"id": 1, "name": "u1"}]));
    assert_eq!(
        out["columns"],
        json!([{"name": "id", "type": "INTEGER"}, {"name": "name", "type": "VARCHAR"}])
    );
    assert_eq!(
        (out["returned_rows"].clone(), out["total_rows"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(result["structuredContent"], out);

    let out = tool_json(&mcp.call_tool("query", json!({"sql": "SELECT range AS x FROM range(5000)"})));
    assert_eq!(
        (out["returned_rows"].clone(), out["truncated"].clone()),
        (json!(100), json!(true))
    );
    assert!(out.get("total_rows").is_none(), "{out}");
    let out = tool_json(&mcp.call_tool(
        "query",
        json!({"sql": "SELECT range AS x FROM range(5000)", "limit": 5000}),
    ));
    assert_eq!(out["returned_rows"], 1000);

    let result = mcp.call_tool(
        "query",
        json!({"sql": format!("COPY users TO '{}/leak.csv'", dir.path().display())}),
    );
    assert_eq!(result["isError"], true);
    assert_eq!(
        tool_text(&result),
        "COPY TO a server file or program is not allowed: it writes files or runs shell commands on the database server. Set protection.allow_copy_to_file to true to allow it"
    );
    let result = mcp.call_tool("query", json!({"sql": "SELEC 1"}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        tool_text(&result),
        "Parser Error: syntax error at or near \"SELEC\" (DUCKDB_PARSER)\n\nLINE 1: SELEC 1\n        ^^^^^"
    );

    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(10)).success());
    assert!(!dir.path().join("leak.csv").exists());
    assert_eq!(snapshot(&path), before, "read-only: the file is unchanged");
}

#[test]
fn check_reports_duckdb_as_duckdb_reports_itself() {
    let (dir, path) = fixture(SHOP);
    let home = tempfile::tempdir().unwrap();
    for (read_only, verdict) in [
        (true, "read-only:    on (verified: access_mode = read_only = on)\n"),
        (
            false,
            "read-only:    off: writes allowed (access_mode = read_only = off)\n",
        ),
    ] {
        let config = home.path().join("config.json");
        std::fs::write(
            &config,
            json!({
                "server": {"read_only": read_only},
                "logging": {"output": home.path().join("pgmcp.log")},
                "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10},
                "duckdb": {"threads": 1}
            })
            .to_string(),
        )
        .unwrap();
        let out = pgmcp(home.path())
            .arg("--config")
            .arg(&config)
            .args(["--database", &url(&path), "check"])
            .output()
            .unwrap();
        let stdout = crate::support::stdout_of(&out, 0);
        assert!(
            stdout.contains(&format!(
                "database:     DuckDB file {} (from --database)\n",
                path.display()
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains("  engine:     DuckDB v") && stdout.contains(", 1 threads)"),
            "{stdout}"
        );
        assert!(stdout.contains(verdict), "{stdout}");
    }
    let out = pgmcp(dir.path())
        .args(["--database", "duckdb:missing.duckdb", "check"])
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 1);
    assert!(
        stdout.contains("FAILED:     Database not found: missing.duckdb"),
        "{stdout}"
    );
    assert!(!dir.path().join("missing.duckdb").exists());
}

#[test]
fn cli_query_on_a_relative_duckdb_path() {
    let (dir, _path) = fixture(SHOP);
    let out = pgmcp(dir.path())
        .args(["query", "--database", "duckdb:data.duckdb"])
        .args(["SELECT name, ? * 2 AS doubled FROM users WHERE id = 1", "--param", "21"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["rows"], json!([{"name": "ada", "doubled": 42}]));

    let out = pgmcp(dir.path())
        .args(["query", "--database", "duckdb://relative/x.duckdb", "SELECT 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("duckdb:// takes an absolute path"), "{stderr}");
}

// ---------------------------------------------------------------------------
// Statements that destroy or overwrite data (security review, kind 3), and
// spilling in read-only mode (kind 6)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn replacing_and_retyping_fall_under_the_flags_they_amount_to() {
    let (_dir, path) = fixture(SHOP);
    let engine = engine_on(&path, |c| c.read_only = false);
    let cases = [
        (
            "CREATE OR REPLACE TABLE users AS SELECT 1 AS id",
            Rule::Drop,
            "allow_drop",
        ),
        ("create or replace table users (id INT)", Rule::Drop, "allow_drop"),
        ("CREATE OR REPLACE VIEW users AS SELECT 1", Rule::Drop, "allow_drop"),
        ("CREATE OR REPLACE SEQUENCE s", Rule::Drop, "allow_drop"),
        (
            "ALTER TABLE users ALTER COLUMN name TYPE VARCHAR USING 'x'",
            Rule::UpdateWithoutWhere,
            "allow_update_without_where",
        ),
        (
            "ALTER TABLE users ALTER score SET DATA TYPE INTEGER USING 0",
            Rule::UpdateWithoutWhere,
            "allow_update_without_where",
        ),
    ];
    for (sql, rule, flag) in cases {
        let (got, message) = refusal(run(&engine, sql).await);
        assert_eq!(got, rule, "{sql}: {message}");
        assert!(message.contains(flag), "{sql}: {message}");
    }
    drop(engine);
    // The data is intact, read straight from the file.
    assert_eq!(scalar(&path, "SELECT count(*) FROM users"), 3);
    assert_eq!(scalar(&path, "SELECT count(*) FROM users WHERE name = 'ada'"), 1);
    assert_eq!(scalar(&path, "SELECT count(*) FROM users WHERE score = 12.5"), 1);

    // With the flags on, the same statements run.
    let engine = allowing(&path, "allow_drop+allow_update_without_where");
    run(&engine, "ALTER TABLE orders ALTER total SET DATA TYPE INTEGER USING 0")
        .await
        .unwrap();
    run(&engine, "CREATE OR REPLACE TABLE orders AS SELECT 1 AS id")
        .await
        .unwrap();
    drop(engine);
    assert_eq!(scalar(&path, "SELECT count(*) FROM orders"), 1);
}

#[tokio::test]
async fn read_only_never_spills_beside_the_database() {
    let (dir, path) = fixture("CREATE TABLE n AS SELECT range AS x FROM range(3000000)");
    let engine = engine_on(&path, |c| {
        c.duckdb.memory_limit = Some("48MiB".into());
        c.duckdb.threads = Some(1);
    });
    // A sort of 3 million strings needs far more than 48 MiB.
    let sql = "SELECT count(*) AS n FROM (SELECT x::VARCHAR || 'padding-padding' AS s FROM n ORDER BY s DESC)";
    match run(&engine, sql).await {
        Ok(out) => assert_eq!(serde_json::to_value(&out.rows).unwrap(), json!([{"n": 3000000}])),
        Err(e) => {
            let text = e.to_string();
            assert!(text.to_lowercase().contains("memory"), "{text}");
        }
    }
    // Looked at while the database is still open: DuckDB removes its spill
    // directory when it closes.
    assert_eq!(
        listing(dir.path()),
        ["data.duckdb"],
        "read-only mode wrote beside the database"
    );
    drop(engine);

    // The control: writable, the same query spills beside the database, so
    // the check above would see it.
    let engine = engine_on(&path, |c| {
        c.read_only = false;
        c.duckdb.memory_limit = Some("48MiB".into());
        c.duckdb.threads = Some(1);
    });
    run(&engine, sql).await.unwrap();
    assert!(
        listing(dir.path()).contains(&"data.duckdb.tmp".to_owned()),
        "{:?}",
        listing(dir.path())
    );
}

/// A DuckDB file can define macros with the names of built-in functions and
/// operators (`duckdb_tables`, `lower`, `||`, ILIKE's `~~*`...), and an
/// unqualified name in SQL runs the file's macro. pgmcp's own SQL (catalog,
/// session report, the outer query that cuts long text) names built-ins in
/// full: the look-alikes change nothing.
#[tokio::test(flavor = "multi_thread")]
async fn look_alike_macros_in_the_file_change_nothing_pgmcp_asks() {
    let (_dir, path) = fixture(
        r#"CREATE TABLE orders (id INTEGER, note VARCHAR);
           INSERT INTO orders VALUES (1, 'first');
           CREATE MACRO duckdb_tables() AS TABLE SELECT 'evil' AS table_name;
           CREATE MACRO duckdb_columns() AS TABLE SELECT 'evil' AS column_name;
           CREATE MACRO current_database() AS 'evil';
           CREATE MACRO lower(x) AS 'evil';
           CREATE MACRO concat(a, b, c) AS 'evil';
           CREATE MACRO "~~*"(a, b) AS false;
           CREATE MACRO ilike_escape(a, b, c) AS false;
           CREATE MACRO strlen(x) AS 0;
           CREATE MACRO "left"(a, b) AS 'evil';
           CREATE MACRO version() AS 'evil';
           CREATE MACRO current_setting(x) AS 'evil';"#,
    );
    let engine = engine_on(&path, |_| {});
    let filter = TableFilter {
        pattern: Some("ORD".into()),
        ..TableFilter::default()
    };
    let list = engine.list_tables(&filter, ct()).await.unwrap();
    let names: Vec<&str> = list.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["orders"]);
    let orders = engine.describe_table("ORDERS", None, ct()).await.unwrap();
    let columns: Vec<&str> = orders.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, ["id", "note"]);
    let report = engine.session_report(ct()).await.unwrap();
    assert!(!report.server.contains("evil"), "{report:?}");
    // Long text is cut by the outer query with the real strlen and left.
    let out = run_with(&engine, "SELECT repeat('x', 300000) AS v", json!([]), None)
        .await
        .unwrap();
    let v = out.rows[0]["v"].as_str().unwrap();
    assert!(
        v.starts_with("xxxx") && v.ends_with(" of 300000 bytes shown]"),
        "{}",
        &v[v.len() - 80..]
    );
}

// ---------------------------------------------------------------------------
// Paths of the machine (security review, issue 30)
// ---------------------------------------------------------------------------

/// Statements that make DuckDB name directories of the machine: its own,
/// derived from the home directory (`secret_directory`, the extension
/// directory), the database file's, and the working directory (`:memory:`
/// resolved against it in `allowed_paths`), in answers and in errors.
const PLACES_SHOWN: &[&str] = &[
    "SELECT current_setting('secret_directory') AS d",
    "SELECT name, value FROM duckdb_settings()",
    "SELECT current_setting('home_directory') AS d",
    "SELECT current_setting('temp_directory') AS d",
    "SELECT current_setting('extension_directory') AS d",
    "SELECT current_setting('allowed_paths') AS d",
    "SELECT * FROM duckdb_extensions()",
    "SELECT * FROM duckdb_databases()",
    "PRAGMA database_list",
    "SELECT * FROM duckdb_temporary_files()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM which_secret('s3://bucket/x.csv', 's3')",
    "SELECT * FROM read_csv('~/notes.csv')",
    "SELECT * FROM read_csv('notes.csv')",
    "SELECT * FROM glob('*')",
    "LOAD spatial",
    "INSTALL spatial",
    "SELECT * FROM no_such_table",
];

/// No answer or error shows the home directory, the working directory or
/// the database file's directory, on a file and in memory, with the default
/// protection and with `LOAD` allowed (whose errors name the extension
/// directory under the home directory): they read as `~`,
/// `<working directory>` and `<database directory>`.
#[test]
fn no_answer_shows_the_machine_s_directories() {
    let (_db_dir, path) = fixture(SHOP);
    let home = tempfile::Builder::new().prefix("home-of-alice-").tempdir().unwrap();
    let home_text = home.path().to_str().unwrap().to_owned();
    let database = url(&path);
    for (db, protection) in [
        (database.as_str(), json!({})),
        (database.as_str(), json!({"allow_load": true})),
        ("duckdb::memory:", json!({})),
    ] {
        let config = home.path().join("config.json");
        std::fs::write(
            &config,
            json!({
                "logging": {"output": home.path().join("pgmcp.log")},
                "protection": protection,
                "duckdb": {"threads": 1}
            })
            .to_string(),
        )
        .unwrap();
        let mut mcp = McpProcess::spawn(
            &["serve", "--config", config.to_str().unwrap(), "--database", db],
            &[("HOME", &home_text)],
        );
        mcp.initialize();
        let file = (db != "duckdb::memory:").then_some(path.as_path());
        let places = crate::support::files::private_places(mcp.pid(), home.path(), file);
        let mut masked_home = false;
        for sql in PLACES_SHOWN {
            let result = mcp.call_tool("query", json!({"sql": sql}));
            crate::support::files::assert_shows_none(&result, &places, &format!("{db} {protection}: {sql}"));
            masked_home |= tool_text(&result).contains("~/.duckdb/");
        }
        for (tool, arguments) in [
            ("list_tables", json!({})),
            ("describe_table", json!({"table": "no_such_table"})),
        ] {
            let result = mcp.call_tool(tool, arguments);
            crate::support::files::assert_shows_none(&result, &places, &format!("{db}: {tool}"));
        }
        // DuckDB's own directory is still there to read, under `~`, and
        // rewritten past any text mask it names no home directory either.
        let secrets = mcp.call_tool("query", json!({"sql": PLACES_SHOWN[0]}));
        assert_eq!(
            tool_json(&secrets)["rows"],
            json!([{"d": "~/.duckdb/stored_secrets"}]),
            "{db}"
        );
        let sql = "SELECT reverse(current_setting('secret_directory')) AS d";
        let reversed = mcp.call_tool("query", json!({"sql": sql}));
        assert_eq!(
            tool_json(&reversed)["rows"],
            json!([{"d": "sterces_derots/bdkcud./~"}]),
            "{db}"
        );
        assert!(masked_home, "{db}: no answer named the home directory at all");
    }
}
