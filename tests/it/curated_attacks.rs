//! Red team of curated tools, several databases and `tools_enabled`: an
//! agent that controls only tool names and arguments, or a config or an
//! environment that is confused, trying to get around the rules. Every
//! attack runs the real binary over stdio on the harness's PostgreSQL or on
//! real SQLite files, and reads the database back (psql, rusqlite)
//! afterwards: the call must have been refused or harmless.
//!
//! A case that got through when it was written says so in a `// FOUND:`
//! comment, with what closed it (`Closed:`); it asserts the safe behaviour,
//! so it fails again if the hole reopens.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::curated::{array_param, bare_url, check, param, tool};
use crate::support::files::sqlite::{make_db, scalar, text as sqlite_text, url as sqlite_url};
use crate::support::pg;
// Writes run as the guard allows, with no one asked: the person's word
// before a write has its own tests (confirm.rs, confirm_attacks.rs).
use crate::support::served::write_unconfirmed_config;
use crate::support::stdio::{McpProcess, UNSTARTED, is_error, tool_json, tool_names, tool_text};

// ---------------------------------------------------------------- helpers

/// `pgmcp serve --config config` (plus `args`), handshake done. `Ok`: it
/// started; `Err`: it could not start, and says why.
fn start(config: &str, args: &[&str], envs: &[(&str, &str)]) -> (McpProcess, Result<(), String>) {
    let mut all = vec!["serve", "--config", config];
    all.extend_from_slice(args);
    let mut mcp = McpProcess::spawn(&all, envs);
    let response = mcp.request(
        "initialize",
        json!({
            "protocolVersion": crate::support::stdio::PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "pgmcp-redteam", "version": "0.0.0"},
        }),
    );
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let instructions = response["result"]["instructions"].as_str().unwrap_or("").to_owned();
    let started = match instructions.starts_with(UNSTARTED) {
        true => Err(instructions),
        false => Ok(()),
    };
    (mcp, started)
}

/// A session that must start.
fn serve(config: &str, envs: &[(&str, &str)]) -> McpProcess {
    let (mcp, started) = start(config, &[], envs);
    if let Err(why) = started {
        panic!("the server did not start: {why}");
    }
    mcp
}

/// `tools/call` as it comes back, a JSON-RPC error or a result.
fn call(mcp: &mut McpProcess, name: &str, arguments: Value) -> Value {
    mcp.request("tools/call", json!({"name": name, "arguments": arguments}))
}

/// `tools/call` with `arguments` written as raw JSON text: numbers no f64
/// holds (1e400, -0, whole numbers past u64) reach the server as written.
fn call_raw(mcp: &mut McpProcess, name: &str, arguments: &str) -> Value {
    let id = mcp.next_id();
    mcp.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    ));
    mcp.recv_response(&json!(id), std::time::Duration::from_secs(60))
}

/// Whether a `tools/call` response is a refusal: a JSON-RPC error, or a
/// result with `isError`.
fn refused(response: &Value) -> bool {
    response.get("error").is_some() || is_error(&response["result"])
}

/// What a refusal says: the JSON-RPC error's message or the tool's text.
fn said(response: &Value) -> String {
    match response.get("error") {
        Some(error) => error["message"].as_str().unwrap_or_default().to_owned(),
        None => tool_text(&response["result"]).to_owned(),
    }
}

/// The result's JSON answer, when the call succeeded.
fn answer(response: &Value) -> Value {
    assert!(!refused(response), "expected an answer: {response}");
    tool_json(&response["result"])
}

/// The counter a writing function bumps, and the functions.
const COUNTER: &str = "
    CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL);
    INSERT INTO counter VALUES (1, 0);
    CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL);
    INSERT INTO t VALUES (1, 'apple'), (2, 'pear'), (3, 'NULL'), (4, '}'), (5, 'a\",\"b');
    CREATE FUNCTION bump() RETURNS int LANGUAGE sql AS 'UPDATE counter SET n = n + 1 RETURNING n';
    CREATE FUNCTION escape_read_only() RETURNS int LANGUAGE plpgsql AS $$
        BEGIN
            SET LOCAL transaction_read_only = off;
            UPDATE counter SET n = n + 100;
            RETURN 1;
        END $$;";

/// Everything in `t` and `counter`, as one line, to compare before and after.
fn pg_state(db: &pg::TestDb) -> String {
    db.psql(
        "SELECT (SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM t) || ' / ' || \
         (SELECT string_agg(id || ':' || n, ',' ORDER BY id) FROM counter) || ' / ' || \
         (SELECT count(*) FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace)",
    )
}

const PG_STATE: &str = "1:apple,2:pear,3:NULL,4:},5:a\",\"b / 1:0 / 2";

fn sqlite_state(file: &Path) -> String {
    sqlite_text(
        file,
        "SELECT coalesce((SELECT group_concat(id || ':' || name, ',') FROM (SELECT * FROM t ORDER BY id)), '') \
         || ' / ' || (SELECT count(*) FROM sqlite_master)",
    )
}

// ------------------------------------------------- 1. parameter injection

/// A string argument is one bound value: quotes, placeholders of either
/// dialect, a second statement, comments, NUL, right-to-left marks and a
/// megabyte of text are only a name no row has (or a value PostgreSQL
/// refuses); nothing else runs.
#[test]
fn pg_string_arguments_are_only_values() {
    let db = pg::server().database();
    db.psql(COUNTER);
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [
                tool("by_name", "SELECT count(*) AS n FROM t WHERE name = $1", json!([param("name", "string")])),
                tool("echo", "SELECT $1::text AS v", json!([param("v", "string")])),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let long = "x'; DROP TABLE t; --".repeat(50_000);
    let attacks = [
        "x'; DROP TABLE t; --",
        "' OR '1'='1",
        "$1",
        "$2",
        "?",
        "'); UPDATE counter SET n = 99; --",
        "apple'::text; DELETE FROM t WHERE '1'='1",
        "\\'; DROP TABLE counter; --",
        "E'\\x27'; DROP TABLE t; --",
        "$$; DROP TABLE t; $$",
        "apple\u{202e}",
        "ａｐｐｌｅ",
        "apple\u{0}; DROP TABLE t",
        "/* */ apple",
        &long,
    ];
    for attack in attacks {
        // by_name: a count of rows named exactly so, or PostgreSQL's refusal
        // of the value (NUL); never a second statement.
        let got = call(&mut mcp, "by_name", json!({"name": attack}));
        if refused(&got) {
            assert!(attack.contains('\u{0}'), "{:.60}: refused: {}", attack, said(&got));
        } else {
            assert_eq!(answer(&got)["rows"], json!([{"n": 0}]), "{attack:.60}");
        }
        // echo: the value comes back exactly as it was sent.
        let got = call(&mut mcp, "echo", json!({"v": attack}));
        if !attack.contains('\u{0}') {
            let rows = answer(&got)["rows"].clone();
            let back = rows[0]["v"].as_str().unwrap_or_default().to_owned();
            // A long value may be cut by the result cap, never changed.
            let shown = back.split("… [value cut:").next().unwrap_or_default();
            assert!(
                attack.starts_with(shown) && (shown.len() == attack.len() || back.contains("[value cut:")),
                "{attack:.60}: {back:.60}"
            );
        }
    }
    // `apple` is there: the tool does find a real name.
    let got = call(&mut mcp, "by_name", json!({"name": "apple"}));
    assert_eq!(answer(&got)["rows"], json!([{"n": 1}]));
    assert_eq!(pg_state(&db), PG_STATE, "nothing beyond the tool's statement ran");
}

/// Array elements cannot leave the PostgreSQL array literal: every element
/// comes back, through `$1::text[]`, exactly as it was sent, and matches
/// only a row of exactly that name.
#[test]
fn pg_array_elements_cannot_leave_the_literal() {
    let db = pg::server().database();
    db.psql(COUNTER);
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [
                tool("names", "SELECT count(*) AS n, array_length($1::text[], 1) AS len FROM t WHERE name = ANY($1::text[])",
                     json!([array_param("names", "string")])),
                tool("each", "SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i",
                     json!([array_param("names", "string")])),
                tool("ids", "SELECT count(*) AS n FROM t WHERE id = ANY($1::int[])",
                     json!([array_param("ids", "integer")])),
                tool("amounts", "SELECT $1::numeric[] AS a", json!([array_param("amounts", "number")])),
                tool("days", "SELECT count(*) AS n FROM t WHERE DATE '2024-01-01' = ANY($1::date[])",
                     json!([array_param("days", "date")])),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    // (elements, rows of t they name exactly)
    let cases: Vec<(Value, i64)> = vec![
        (json!(["a\",\"b"]), 1),
        (json!(["a", "b"]), 0),
        (json!(["}"]), 1),
        (json!(["NULL"]), 1),
        (json!(["null"]), 0),
        (json!(["\\"]), 0),
        (json!(["\\\""]), 0),
        (json!(["\"}, {\"apple"]), 0),
        (json!(["apple\"}'); DROP TABLE t; --"]), 0),
        (json!(["{apple}"]), 0),
        (json!(["{", "}", ","]), 1),
        (json!([" apple "]), 0),
        (json!(["apple", "pear"]), 2),
        (json!([""]), 0),
        (json!([]), 0),
        (json!(["ap\\ple"]), 0),
        (json!(["$1", "?"]), 0),
    ];
    for (elements, n) in cases {
        let got = call(&mut mcp, "names", json!({"names": elements}));
        let rows = answer(&got)["rows"].clone();
        assert_eq!(rows[0]["n"], json!(n), "{elements}: {rows}");
        let count = elements.as_array().unwrap().len();
        let len = if count == 0 { json!(null) } else { json!(count) };
        assert_eq!(rows[0]["len"], len, "{elements}: one element per item: {rows}");
        let got = call(&mut mcp, "each", json!({"names": elements}));
        let back: Vec<Value> = answer(&got)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["x"].clone())
            .collect();
        assert_eq!(Value::Array(back), elements, "each element back as sent");
    }
    // Items of the wrong type, nested arrays and objects: refused before
    // any SQL, naming the argument and the item.
    for (tool_name, arg, given) in [
        ("names", "names", json!([["apple"]])),
        ("names", "names", json!([{"name": "apple"}])),
        ("names", "names", json!([null])),
        ("names", "names", json!([1])),
        ("names", "names", json!("{apple,pear}")),
        ("names", "names", json!({"0": "apple"})),
        ("ids", "ids", json!(["1}"])),
        ("ids", "ids", json!([1.5])),
        ("ids", "ids", json!([[1, 2]])),
        ("ids", "ids", json!([true])),
        ("days", "days", json!(["2024-01-01\"}"])),
        ("days", "days", json!(["2024-01-01", "infinity"])),
    ] {
        let got = call(&mut mcp, tool_name, json!({arg: given}));
        assert!(refused(&got), "{tool_name} {given}: {got}");
        let text = said(&got);
        assert!(
            text.contains(&format!("argument {arg}")),
            "{given}: names the argument: {text}"
        );
    }
    for arguments in [
        r#"{"ids": [1e400]}"#,
        r#"{"ids": [99999999999999999999999]}"#,
        r#"{"ids": [1E0]}"#,
    ] {
        let got = call_raw(&mut mcp, "ids", arguments);
        assert!(
            refused(&got) && said(&got).contains("argument ids"),
            "{arguments}: {got}"
        );
    }
    // Numbers stay numbers, whatever their size: 1e400 and -0 are numerics,
    // each one element.
    let got = call_raw(&mut mcp, "amounts", r#"{"amounts": [1e400, -0, 0.1]}"#);
    let a = answer(&got)["rows"][0]["a"].to_string();
    assert_eq!(a.matches(',').count(), 2, "three elements: {a}");
    let got = call(&mut mcp, "ids", json!({"ids": [1, 2, 99999]}));
    assert_eq!(answer(&got)["rows"], json!([{"n": 2}]));
    assert_eq!(pg_state(&db), PG_STATE);
}

/// Numbers at the edges, for integer and number parameters: refused
/// naming the argument when they are not whole, out of PostgreSQL's range
/// refused by PostgreSQL, never written into the SQL.
#[test]
fn pg_numbers_at_the_edges() {
    let db = pg::server().database();
    db.psql(COUNTER);
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [
                tool("by_id", "SELECT count(*) AS n FROM t WHERE id = $1", json!([param("id", "integer")])),
                tool("big", "SELECT $1::bigint AS v", json!([param("v", "integer")])),
                tool("real", "SELECT $1::float8 AS v", json!([param("v", "number")])),
                tool("exact", "SELECT $1::numeric AS v", json!([param("v", "number")])),
                tool("flag", "SELECT count(*) AS n FROM t WHERE (id = 1) = $1", json!([param("b", "boolean")])),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    // Not whole numbers, or not numbers: refused before any SQL.
    for given in [
        json!(1.5),
        json!(1e2),
        json!(1.0),
        json!("1"),
        json!("1; DROP TABLE t"),
        json!(99999999999999999999999_f64),
        json!(true),
        json!([1]),
        json!({"id": 1}),
    ] {
        let got = call(&mut mcp, "by_id", json!({"id": given}));
        assert!(refused(&got), "{given}: {got}");
        assert!(said(&got).contains("argument id"), "{given}: {}", said(&got));
    }
    for arguments in [
        r#"{"id": 99999999999999999999999}"#,
        r#"{"id": 1e400}"#,
        r#"{"id": 1E0}"#,
        r#"{"id": 1.0e0}"#,
        r#"{"id": -0.0}"#,
    ] {
        let got = call_raw(&mut mcp, "by_id", arguments);
        assert!(
            refused(&got) && said(&got).contains("argument id"),
            "{arguments}: {got}"
        );
    }
    // Whole numbers PostgreSQL cannot hold: its own refusal, nothing run.
    for given in ["18446744073709551615", "9223372036854775808", "-9223372036854775809"] {
        let got = call_raw(&mut mcp, "big", &format!(r#"{{"v": {given}}}"#));
        assert!(refused(&got), "{given}: {got}");
    }
    // -0 is 0; the edges of bigint are themselves.
    let got = call_raw(&mut mcp, "by_id", r#"{"id": -0}"#);
    assert_eq!(answer(&got)["rows"], json!([{"n": 0}]));
    let got = call(&mut mcp, "big", json!({"v": i64::MIN}));
    assert_eq!(answer(&got)["rows"][0]["v"].to_string(), i64::MIN.to_string());
    // 1e400: past float8, refused by PostgreSQL; a numeric holds it.
    let got = call_raw(&mut mcp, "real", r#"{"v": 1e400}"#);
    assert!(refused(&got), "1e400 as float8: {got}");
    let got = call_raw(&mut mcp, "exact", r#"{"v": -1e-400}"#);
    assert!(!refused(&got), "{got}");
    for given in [json!(1), json!("true"), json!(null)] {
        let got = call(&mut mcp, "flag", json!({"b": given}));
        assert!(refused(&got), "{given}: {got}");
    }
    assert_eq!(pg_state(&db), PG_STATE);
}

/// Dates and timestamps are checked before they reach the database: text
/// that is not one, with SQL after it or PostgreSQL's special words, is
/// refused naming the argument.
#[test]
fn pg_dates_and_timestamps_are_checked() {
    let db = pg::server().database();
    db.psql(COUNTER);
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "tools": [
                tool("day", "SELECT $1::date AS d", json!([param("d", "date")])),
                tool("at", "SELECT $1::timestamptz AS t", json!([param("t", "timestamp")])),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let mut holes = Vec::new();
    for given in [
        "2024-01-31'; DROP TABLE t; --",
        "2024-01-31 ",
        " 2024-01-31",
        "infinity",
        "epoch",
        "today",
        "2024-02-30",
        "0000-00-00",
        "２０２４-01-31",
        "2024-01-3\u{0}",
        "20240131",
    ] {
        let got = call(&mut mcp, "day", json!({"d": given}));
        assert!(refused(&got), "{given:?}: {got}");
        assert!(said(&got).contains("argument d"), "{given:?}: {}", said(&got));
    }
    for given in [
        "2024-01-31T09:30:00'; DROP TABLE t; --",
        "2024-01-31T09:30:00Z; DROP TABLE t",
        "now",
        "infinity",
        "2024-01-31T24:00:00",
        "2024-01-31T09:30:00+25:00",
        "2024-01-31T09:30:00 America/New_York",
        "2024-01-31T09:30:00.",
        "2024-01-31T09:30:00.1234567890",
        "2024-01-31T09:30:00+02:00:00",
        // A `Z` followed by an offset: not a timestamp in any of the forms
        // the parameter takes.
        "2024-01-31T09:30Z12:34",
        "2024-01-31T09:30:00Z12:34",
        "2024-01-31T09:30:00-",
    ] {
        let got = call(&mut mcp, "at", json!({"t": given}));
        // FOUND (minor): "2024-01-31T09:30Z12:34" and
        // "2024-01-31T09:30:00Z12:34" pass the timestamp check
        // (`is_timestamp` splits at the first Z and then takes "Z12:34" for
        // an offset: it checks the offset's first byte is one of Z, z, +, -
        // and its shape, not that a Z stands alone). PostgreSQL then reads
        // it as 2024-01-31T22:04:00Z, a time nobody wrote.
        // Closed: an offset starts with + or -.
        if !(refused(&got) && said(&got).contains("argument t")) {
            holes.push(format!("{given:?}: {got}"));
        }
    }
    let got = call(&mut mcp, "at", json!({"t": "2024-01-31T09:30:00.5+02:00"}));
    assert!(!refused(&got), "{got}");
    assert_eq!(pg_state(&db), PG_STATE);
    assert!(holes.is_empty(), "not timestamps, taken as ones:\n{}", holes.join("\n"));
}

/// An `enum` is the only values a call may give. Numbers are compared as
/// f64, so a whole number past 2^53 that rounds to the same double as an
/// allowed one gets through, and so does a decimal that only differs past
/// f64's precision.
#[test]
fn pg_enum_admits_only_its_values() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE vault (id bigint PRIMARY KEY, amount numeric, secret text);
         INSERT INTO vault VALUES (9007199254740992, 0.1000000000000000000001, 'someone else''s'),
                                  (9007199254740993, 0.1, 'mine');",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "tools": [
                json!({"name": "my_secret", "description": "Read my own secret.",
                       "statement": "SELECT secret FROM vault WHERE id = $1",
                       "parameters": [{"name": "id", "type": "integer", "description": "my id",
                                       "enum": [9007199254740993_u64]}]}),
                json!({"name": "by_amount", "description": "The secret at an allowed amount.",
                       "statement": "SELECT secret FROM vault WHERE amount = $1",
                       "parameters": [{"name": "amount", "type": "number", "description": "an amount",
                                       "enum": [0.1]}]}),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let got = call(&mut mcp, "my_secret", json!({"id": 9007199254740993_u64}));
    assert_eq!(answer(&got)["rows"], json!([{"secret": "mine"}]), "the allowed value");
    let got = call(&mut mcp, "by_amount", json!({"amount": 0.1}));
    assert_eq!(answer(&got)["rows"], json!([{"secret": "mine"}]), "the allowed amount");
    let mut holes = Vec::new();
    // FOUND: arguments::same compares numbers with as_f64, and
    // 9007199254740992 and 9007199254740993 are the same f64: the call
    // passes the enum and reads the other row's secret.
    // FOUND: the same for a number: 0.1000000000000000000001 is 0.1 as an
    // f64, but it is bound as written (arbitrary_precision), and matches
    // the other row in the numeric column.
    // Closed: enum values are compared digit for digit, and the
    // administrator's value is the one bound.
    for (tool_name, arguments) in [
        ("my_secret", r#"{"id": 9007199254740992}"#),
        ("my_secret", r#"{"id": 9007199254740994}"#),
        ("by_amount", r#"{"amount": 0.1000000000000000000001}"#),
        ("by_amount", r#"{"amount": 0.10000000000000000001}"#),
    ] {
        let got = call_raw(&mut mcp, tool_name, arguments);
        if !(refused(&got) && said(&got).contains("must be one of")) {
            holes.push(format!("{tool_name} {arguments}: passed the enum: {got}"));
        }
    }
    assert_eq!(db.psql("SELECT count(*) FROM vault"), "2");
    assert!(
        holes.is_empty(),
        "values outside the enum got through:\n{}",
        holes.join("\n")
    );
}

// --------------------------------------------------- 2. mode confusion

/// A tool marked read_only on a writable PostgreSQL database, whose
/// statement calls a function that writes: the config loads (the early
/// look has no catalog), but every call fails and the counter stays at 0;
/// so does a function that tries to lift the transaction's read-only mode.
/// A data-modifying CTE is refused when the config loads.
#[test]
fn pg_read_only_tool_calling_a_writing_function() {
    let db = pg::server().database();
    db.psql(COUNTER);
    let dir = tempfile::tempdir().unwrap();
    let ro = |name: &str, statement: &str| json!({"name": name, "description": "Reads, they say.", "read_only": true, "statement": statement});
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [
                ro("peek", "SELECT bump() AS n"),
                ro("peek_from", "SELECT * FROM bump()"),
                ro("lift", "SELECT escape_read_only() AS n"),
                ro("lift_where", "SELECT id FROM t WHERE id = 1 AND bump() > 0"),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let list = mcp.request("tools/list", json!({}));
    for t in list["result"]["tools"].as_array().unwrap() {
        if ["peek", "peek_from", "lift", "lift_where"].contains(&t["name"].as_str().unwrap()) {
            assert_eq!(t["annotations"]["readOnlyHint"], json!(true), "{t}");
        }
    }
    for name in ["peek", "peek_from", "lift", "lift_where"] {
        for _ in 0..2 {
            let got = call(&mut mcp, name, json!({}));
            assert!(refused(&got), "{name}: {got}");
        }
    }
    assert_eq!(db.psql("SELECT n FROM counter"), "0", "no call wrote");
    // The built-in query on the same writable database may call it: the
    // database allows writes, and it is the tool that asked for read-only.
    let got = call(&mut mcp, "query", json!({"sql": "SELECT bump() AS n"}));
    assert_eq!(answer(&got)["rows"], json!([{"n": 1}]));
    db.psql("UPDATE counter SET n = 0");

    // A data-modifying CTE, or a write hidden in a subquery: refused when
    // the config loads, naming the tool.
    for statement in [
        "WITH w AS (UPDATE counter SET n = n + 1 RETURNING n) SELECT n FROM w",
        "WITH w AS (DELETE FROM t WHERE id = 1 RETURNING id) SELECT * FROM w",
        "SELECT * FROM t WHERE id IN (WITH x AS (INSERT INTO t VALUES (9, 'x') RETURNING id) SELECT id FROM x)",
        "SELECT nextval('counter_seq')",
        "SELECT set_config('transaction_read_only', 'off', true)",
        "SELECT pg_advisory_lock(1)",
        "SELECT * FROM t FOR UPDATE",
        "SELECT 1; UPDATE counter SET n = 5",
    ] {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({"server": {"read_only": false}, "tools": [ro("sneaky", statement)]}),
        );
        let (code, text) = check(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
        let (mut mcp, started) = start(&config, &[], &[("PGMCP_PG_CONNSTRING", &db.url)]);
        match started {
            Err(why) => {
                assert_ne!(code, 0, "{statement}: {text}");
                assert!(why.contains("sneaky"), "{statement}: names the tool: {why}");
            }
            // A statement the early look cannot judge must fail at the call.
            Ok(()) => {
                let got = call(&mut mcp, "sneaky", json!({}));
                assert!(refused(&got), "{statement}: loaded and ran: {got}");
                eprintln!("{statement}: loads, every call refused: {}", said(&got));
            }
        }
    }
    assert_eq!(pg_state(&db), PG_STATE);
}

/// A tool on the read-only default database that calls a writing
/// function: loads, fails at every call, writes nothing.
#[test]
fn pg_tool_on_a_read_only_database() {
    let db = pg::server().database();
    db.psql(COUNTER);
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "tools": [
                tool("peek", "SELECT bump() AS n", json!([])),
                tool("peek2", "SELECT escape_read_only() AS n", json!([])),
                json!({"name": "peek3", "description": "d", "read_only": true, "statement": "SELECT bump() AS n"}),
            ],
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    for name in ["peek", "peek2", "peek3"] {
        let got = call(&mut mcp, name, json!({}));
        assert!(refused(&got), "{name}: {got}");
    }
    let got = call(&mut mcp, "query", json!({"sql": "SELECT bump()"}));
    assert!(refused(&got), "{got}");
    assert_eq!(pg_state(&db), PG_STATE);
}

/// The annotations a client may trust to run a tool without asking: a
/// tool announced as read-only never writes. The early look has no catalog,
/// so a statement that writes only through a function (one of the
/// database's own, or a built-in that changes state) looks like a read:
/// left unmarked on a writable database, it runs on read-only sessions,
/// where every call is refused and nothing changes. Marked
/// `read_only: false`, it writes, and is announced as writing, in
/// tools/list and in `check`.
#[test]
fn pg_annotations_of_tools_whose_functions_write() {
    let server = pg::server();
    let db = server.database();
    db.psql(COUNTER);
    db.psql("CREATE SEQUENCE ids;");
    let dir = tempfile::tempdir().unwrap();
    let mark = |mut tool: Value, read_only: Option<bool>| {
        if let Some(read_only) = read_only {
            tool["read_only"] = json!(read_only);
        }
        tool
    };
    let tools = |read_only: Option<bool>| {
        json!([
            mark(tool("report", "SELECT bump() AS n", json!([])), read_only),
            mark(tool("next_id", "SELECT nextval('ids') AS n", json!([])), read_only),
            mark(
                tool(
                    "reset_ids",
                    "SELECT setval('ids', $1) AS n",
                    json!([param("to", "integer")])
                ),
                read_only
            ),
            // The control: a tool that does write plainly is announced so.
            tool(
                "rename",
                "UPDATE t SET name = $2 WHERE id = $1",
                json!([param("id", "integer"), param("name", "string")])
            ),
        ])
    };
    let annotations = |list: &Value, name: &str| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["annotations"].clone())
            .unwrap()
    };
    let state = || db.psql("SELECT (SELECT n FROM counter) || '/' || (SELECT last_value FROM ids)");

    // Unmarked: announced as reading, and held to it.
    let config = write_unconfirmed_config(
        dir.path(),
        json!({"server": {"read_only": false}, "tools": tools(None)}),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let list = mcp.request("tools/list", json!({}));
    let before = state();
    for (name, args) in [
        ("report", json!({})),
        ("next_id", json!({})),
        ("reset_ids", json!({"to": 100})),
    ] {
        assert_eq!(annotations(&list, name)["readOnlyHint"], json!(true), "{name}");
        let got = call(&mut mcp, name, args);
        // The refusal says why the tool runs read-only, and what to do.
        assert!(
            refused(&got) && said(&got).contains("mark it \"read_only\": false"),
            "{name}: {got}"
        );
    }
    assert_eq!(state(), before, "a tool announced as reading wrote");
    assert_eq!(
        annotations(&list, "rename")["readOnlyHint"],
        json!(false),
        "the control"
    );

    // Marked as writing: they write, and say so, in tools/list and `check`.
    let config = write_unconfirmed_config(
        dir.path(),
        json!({"server": {"read_only": false}, "tools": tools(Some(false))}),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let list = mcp.request("tools/list", json!({}));
    let got = call(&mut mcp, "report", json!({}));
    assert_eq!(answer(&got)["rows"], json!([{"n": 1}]));
    let got = call(&mut mcp, "reset_ids", json!({"to": 100}));
    assert!(!refused(&got), "{got}");
    assert_eq!(state(), "1/100");
    let named = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {"main": {"url": bare_url(server, &db.name), "read_only": false}},
            "tools": tools(Some(false)),
        }),
    );
    let (_, text) = check(&named, &[("PGMCP_DB_MAIN_PASSWORD", server.admin_password())]);
    for name in ["report", "next_id", "reset_ids", "rename"] {
        let a = annotations(&list, name);
        assert_eq!(
            (&a["readOnlyHint"], &a["destructiveHint"]),
            (&json!(false), &json!(true)),
            "{name}: {a}"
        );
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} (")))
            .unwrap_or_default();
        assert!(line.contains("may write"), "{name}: {text}");
    }
}

// ---------------------------------------- 3. the database argument itself

/// Two SQLite databases by name (main writable, archive read-only) and a
/// third file nobody configured: names of another case, paths, the empty
/// string, numbers, null, arrays and objects reach neither another file
/// nor another database; the error lists the configured names.
#[test]
fn database_argument_tricks() {
    let dir = tempfile::tempdir().unwrap();
    let (main, archive, other) = (
        dir.path().join("main.db"),
        dir.path().join("archive.db"),
        dir.path().join("other.db"),
    );
    let schema = "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');";
    make_db(&main, schema);
    make_db(&archive, schema);
    make_db(&other, &format!("{schema} CREATE TABLE hidden (x INTEGER);"));
    let before_other = std::fs::read(&other).unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {
                "main": {"url": sqlite_url(&main), "read_only": false},
                "archive": {"url": sqlite_url(&archive)},
            },
        }),
    );
    let mut mcp = serve(&config, &[]);
    let other_path = other.display().to_string();
    let names = [
        "Archive",
        "ARCHIVE",
        "archive ",
        " archive",
        "archive\u{0}",
        "archive.db",
        "other",
        "../other.db",
        "./other.db",
        other_path.as_str(),
        "sqlite:other.db",
        &sqlite_url(&other),
        "",
        "main,archive",
        "*",
    ];
    for name in names {
        for (tool_name, args) in [
            ("query", json!({"sql": "DELETE FROM t WHERE id = 1", "database": name})),
            ("query", json!({"sql": "SELECT name FROM hidden", "database": name})),
            ("list_tables", json!({"database": name})),
            ("describe_table", json!({"table": "hidden", "database": name})),
        ] {
            let got = call(&mut mcp, tool_name, args);
            assert!(refused(&got), "{tool_name} {name:?}: {got}");
            let text = said(&got);
            assert!(
                text.contains("this server's databases are main, archive"),
                "{tool_name} {name:?}: lists the names: {text}"
            );
        }
    }
    // Values that are not a name at all.
    for value in [json!(7), json!(true), json!(["archive"]), json!({"name": "archive"})] {
        let got = call(
            &mut mcp,
            "query",
            json!({"sql": "DELETE FROM t WHERE id = 1", "database": value}),
        );
        assert!(refused(&got), "{value}: {got}");
    }
    // null is "not given": the default, main; nothing in archive changes.
    let got = call(
        &mut mcp,
        "query",
        json!({"sql": "SELECT count(*) AS n FROM t", "database": null}),
    );
    assert_eq!(answer(&got)["rows"], json!([{"n": 2}]));
    assert_eq!(
        std::fs::read(&other).unwrap(),
        before_other,
        "the other file is untouched"
    );
    assert_eq!(sqlite_state(&main), "1:a,2:b / 1");
    assert_eq!(sqlite_state(&archive), "1:a,2:b / 1");
}

/// A read-only SQLite database beside a writable one: every way to write
/// to it through every tool is refused, and its file is unchanged.
#[test]
fn read_only_database_beside_a_writable_one() {
    let dir = tempfile::tempdir().unwrap();
    let (main, archive) = (dir.path().join("main.db"), dir.path().join("archive.db"));
    let schema = "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');";
    make_db(&main, schema);
    make_db(&archive, &format!("{schema} CREATE INDEX by_name ON t (name);"));
    let before = std::fs::read(&archive).unwrap();
    let outside = dir.path().join("copy.db");
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {
                "main": {"url": sqlite_url(&main), "read_only": false,
                         "protection": {"allow_drop": true, "allow_truncate": true, "allow_delete_without_where": true}},
                "archive": {"url": sqlite_url(&archive)},
            },
            "tools": [
                // A reading tool on archive: its arguments cannot make it write.
                json!({"name": "find", "description": "Find in the archive.", "database": "archive",
                       "statement": "SELECT name FROM t WHERE id = ?1", "parameters": [param("id", "integer")]}),
            ],
        }),
    );
    let mut mcp = serve(&config, &[]);
    for sql in [
        "INSERT INTO t VALUES (3, 'c')",
        "UPDATE t SET name = 'x' WHERE id = 1",
        "DELETE FROM t WHERE id = 1",
        "DELETE FROM t",
        "DROP TABLE t",
        "REPLACE INTO t VALUES (1, 'x')",
        "WITH x AS (SELECT 1) INSERT INTO t SELECT 9, 'x' FROM x",
        "INSERT INTO t VALUES (4, 'd') RETURNING id",
        "CREATE TABLE u (x)",
        "CREATE TEMP TABLE u (x)",
        "PRAGMA query_only = 0",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = DELETE",
        &format!("VACUUM INTO '{}'", outside.display()),
        "VACUUM",
        &format!("ATTACH '{}' AS m", main.display()),
        "ANALYZE",
    ] {
        let got = call(&mut mcp, "query", json!({"sql": sql, "database": "archive"}));
        assert!(refused(&got), "{sql}: {got}");
    }
    // Transaction statements only frame writes: allowed or not, nothing
    // stays open past the call and archive does not change.
    // REINDEX rebuilds nothing SQLite would write on a read-only file.
    for sql in [
        "BEGIN",
        "BEGIN IMMEDIATE",
        "BEGIN EXCLUSIVE",
        "COMMIT",
        "SAVEPOINT s",
        "REINDEX",
        "REINDEX by_name",
    ] {
        call(&mut mcp, "query", json!({"sql": sql, "database": "archive"}));
        let got = call(
            &mut mcp,
            "query",
            json!({"sql": "INSERT INTO t VALUES (7, 'g')", "database": "archive"}),
        );
        assert!(refused(&got), "after {sql}: {got}");
    }
    for args in [
        json!({"id": 1, "database": "main"}),
        json!({"id": "1; DELETE FROM t"}),
        json!({"id": 1, "sql": "DELETE FROM t"}),
    ] {
        let got = call(&mut mcp, "find", args.clone());
        assert!(refused(&got), "{args}: {got}");
    }
    let got = call(&mut mcp, "find", json!({"id": 2}));
    assert_eq!(answer(&got)["rows"], json!([{"name": "b"}]));
    // The writable one does take writes, through the same tool: the
    // refusals above were archive's rules.
    let got = call(
        &mut mcp,
        "query",
        json!({"sql": "INSERT INTO t VALUES (3, 'c')", "database": "main"}),
    );
    assert!(!refused(&got), "{got}");
    assert_eq!(scalar(&main, "SELECT count(*) FROM t"), 3);
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        before,
        "archive is byte for byte as it was"
    );
    assert!(!outside.exists(), "no copy was written");
    assert_eq!(sqlite_state(&archive), "1:a,2:b / 2");

    // A curated tool that writes to archive: refused when the config loads.
    for extra in [
        json!({"name": "w", "description": "d", "database": "archive", "read_only": false,
               "statement": "SELECT 1"}),
        json!({"name": "w", "description": "d", "database": "archive",
               "statement": "INSERT INTO t VALUES (?1, 'x')", "parameters": [param("id", "integer")]}),
        json!({"name": "w", "description": "d", "database": "archive",
               "statement": "WITH x AS (SELECT 1) DELETE FROM t WHERE id IN x"}),
        json!({"name": "w", "description": "d", "database": "archive",
               "statement": "REPLACE INTO t VALUES (1, 'x')"}),
    ] {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({
                "databases": {
                    "main": {"url": sqlite_url(&main), "read_only": false},
                    "archive": {"url": sqlite_url(&archive)},
                },
                "tools": [extra.clone()],
            }),
        );
        let (code, text) = check(&config, &[]);
        assert_ne!(code, 0, "{extra}: {text}");
        assert!(text.contains("tools[0]") && text.contains("tool w"), "{extra}: {text}");
        let (mut mcp, started) = start(&config, &[], &[]);
        assert!(started.is_err(), "{extra}");
        let got = call(&mut mcp, "w", json!({"id": 1}));
        assert!(refused(&got), "{got}");
    }
    assert_eq!(std::fs::read(&archive).unwrap(), before);
}

/// Without `databases`, the `database` argument is the SQLite directory's
/// alone: on a server of one file it reaches no other file.
#[test]
fn database_argument_on_a_server_of_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let (main, other) = (dir.path().join("main.db"), dir.path().join("other.db"));
    make_db(
        &main,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a');",
    );
    make_db(
        &other,
        "CREATE TABLE hidden (x INTEGER); INSERT INTO hidden VALUES (42);",
    );
    let before = std::fs::read(&other).unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [tool("names", "SELECT name FROM t", json!([]))],
        }),
    );
    let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&main)], &[]);
    started.unwrap();
    for name in [
        other.display().to_string(),
        "other.db".to_owned(),
        "../other.db".to_owned(),
    ] {
        for (tool_name, args) in [
            ("query", json!({"sql": "SELECT x FROM hidden", "database": name})),
            (
                "query",
                json!({"sql": "DELETE FROM hidden WHERE x = 42", "database": name}),
            ),
            ("list_tables", json!({"database": name})),
            ("describe_table", json!({"table": "hidden", "database": name})),
            ("names", json!({"database": name})),
        ] {
            let got = call(&mut mcp, tool_name, args.clone());
            assert!(refused(&got), "{tool_name} {args}: {got}");
            assert!(!said(&got).contains("42"), "{got}");
        }
    }
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

// --------------------------------------------- 4. per-database protection

/// Database a allows DROP, b does not (nor does the file): DROP on b is
/// refused through every door, on a it runs; each database caps its own
/// rows, a read-only curated tool on a included.
#[test]
fn protection_and_caps_are_each_databases_own() {
    let server = pg::server();
    let (a, b) = (server.database(), server.database());
    for db in [&a, &b] {
        db.psql(
            "CREATE TABLE doomed (x int); CREATE TABLE many (x int); \
             INSERT INTO many SELECT generate_series(1, 10);",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let databases = json!({
        "a": {"url": bare_url(server, &a.name), "read_only": false,
              "protection": {"allow_drop": true}, "query": {"max_rows": 2}},
        "b": {"url": bare_url(server, &b.name), "read_only": false, "query": {"max_rows": 100}},
    });
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": databases,
            "tools": [
                json!({"name": "few", "description": "d", "database": "a", "read_only": true,
                       "statement": "SELECT x FROM many ORDER BY x"}),
                json!({"name": "all_of_b", "description": "d", "database": "b",
                       "statement": "SELECT x FROM many ORDER BY x"}),
            ],
        }),
    );
    let envs = [
        ("PGMCP_DB_A_PASSWORD", server.admin_password()),
        ("PGMCP_DB_B_PASSWORD", server.admin_password()),
    ];
    let mut mcp = serve(&config, &envs);
    for sql in [
        "DROP TABLE doomed",
        "DROP TABLE IF EXISTS doomed",
        "DROP TABLE many, doomed",
        "TRUNCATE doomed",
        "DELETE FROM many",
    ] {
        let got = call(&mut mcp, "query", json!({"sql": sql, "database": "b"}));
        assert!(refused(&got), "{sql} on b: {got}");
    }
    assert_eq!(
        b.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
        "2"
    );
    assert_eq!(b.psql("SELECT count(*) FROM many"), "10");
    // On a, DROP is allowed: the rule is a's.
    let got = call(&mut mcp, "query", json!({"sql": "DROP TABLE doomed", "database": "a"}));
    assert!(!refused(&got), "{got}");
    assert_eq!(a.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'doomed'"), "0");
    // Caps: a's 2 rows, through query and through its read-only tool; b's 100.
    let got = call(&mut mcp, "query", json!({"sql": "SELECT x FROM many", "database": "a"}));
    assert_eq!(answer(&got)["returned_rows"], json!(2));
    let got = call(
        &mut mcp,
        "query",
        json!({"sql": "SELECT x FROM many", "database": "a", "limit": 50}),
    );
    assert_eq!(answer(&got)["returned_rows"], json!(2), "a limit cannot lift the cap");
    let got = call(&mut mcp, "few", json!({}));
    assert_eq!(
        answer(&got)["returned_rows"],
        json!(2),
        "the read-only tool keeps a's cap"
    );
    let got = call(&mut mcp, "all_of_b", json!({}));
    assert_eq!(answer(&got)["returned_rows"], json!(10));

    // A tool that drops on b: refused when the config loads; on a it loads.
    for (database, refused_at_load) in [("b", true), ("a", false)] {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({
                "databases": databases.clone(),
                "tools": [json!({"name": "drop_it", "description": "d", "database": database,
                                 "statement": "DROP TABLE IF EXISTS nothing_here"})],
            }),
        );
        let (code, text) = check(&config, &envs);
        assert_eq!(
            code != 0 && text.contains("tool drop_it"),
            refused_at_load,
            "{database}: {text}"
        );
    }
    // The file allows DROP, b says no: b's word wins for b.
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "protection": {"allow_drop": true},
            "databases": {
                "a": {"url": bare_url(server, &a.name), "read_only": false},
                "b": {"url": bare_url(server, &b.name), "read_only": false, "protection": {"allow_drop": false}},
            },
        }),
    );
    let mut mcp = serve(&config, &envs);
    let got = call(&mut mcp, "query", json!({"sql": "DROP TABLE doomed", "database": "b"}));
    assert!(refused(&got), "{got}");
    assert_eq!(b.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'doomed'"), "1");
}

// ---------------------------------------------------------- 5. secrets

/// A named database takes its password from its own variable only: the
/// right password in PGPASSWORD, or in another database's variable,
/// connects nothing; PGHOST, PGPORT, PGDATABASE, PGUSER and PGOPTIONS
/// redirect nothing.
#[test]
fn named_database_secrets_come_from_its_own_variable() {
    let server = pg::server();
    let (db, elsewhere) = (server.database(), server.database());
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1);");
    elsewhere.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (2);");
    let dir = tempfile::tempdir().unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {
                "main": {"url": bare_url(server, &db.name), "connection": {"connect_timeout_seconds": 5}},
                "other": {"url": "sqlite::memory:"},
            },
        }),
    );
    let password = server.admin_password();
    // A libpq password file naming this very server, database and user.
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!("*:{}:*:{}:{}\n", server.port(), server.admin_user(), password),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let passfile = passfile.display().to_string();
    for envs in [
        vec![("PGPASSWORD", password)],
        vec![("PGPASSFILE", passfile.as_str())],
        vec![("PGMCP_DB_OTHER_PASSWORD", password)],
        vec![("PGMCP_PASSWORD", password), ("PGMCP_PG_PASSWORD", password)],
    ] {
        let mut mcp = serve(&config, &envs);
        let got = call(&mut mcp, "query", json!({"sql": "SELECT x FROM t"}));
        assert!(refused(&got), "{envs:?} connected: {got}");
        assert!(!said(&got).contains(password), "{envs:?}: the password shows: {got}");
    }
    // Its own variable: connects (the control).
    let mut mcp = serve(&config, &[("PGMCP_DB_MAIN_PASSWORD", password)]);
    let got = call(&mut mcp, "query", json!({"sql": "SELECT x FROM t"}));
    assert_eq!(answer(&got)["rows"], json!([{"x": 1}]));

    // A URL without a database or a host: the PG* variables fill nothing
    // in, so nothing reaches the elsewhere database.
    let host = server.host();
    let redirect: Vec<(&str, String)> = vec![
        ("PGHOST", host.to_owned()),
        ("PGPORT", server.port().to_string()),
        ("PGDATABASE", elsewhere.name.clone()),
        ("PGUSER", server.admin_user().to_owned()),
        ("PGPASSWORD", password.to_owned()),
        ("PGMCP_DB_MAIN_PASSWORD", password.to_owned()),
    ];
    let envs: Vec<(&str, &str)> = redirect.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let host_url = match host.contains(':') {
        true => format!("[{host}]"),
        false => host.to_owned(),
    };
    for url in [
        format!("postgres://{}@{}:{}", server.admin_user(), host_url, server.port()),
        format!("postgres:///{}", db.name),
        "postgres://".to_owned(),
    ] {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({"databases": {"main": {"url": url, "connection": {"connect_timeout_seconds": 3}}}}),
        );
        let (mut mcp, started) = start(&config, &[], &envs);
        if started.is_ok() {
            let got = call(
                &mut mcp,
                "query",
                json!({"sql": "SELECT current_database() AS d, x FROM t"}),
            );
            eprintln!("{url}: {:.300}", got.to_string());
            if !refused(&got) {
                let rows = answer(&got)["rows"].clone();
                assert_ne!(rows[0]["d"], json!(elsewhere.name), "{url}: redirected by PGDATABASE");
                assert_ne!(rows[0]["x"], json!(2), "{url}: redirected");
            }
        }
    }
    // PGOPTIONS cannot lift a named read-only database's mode.
    let config = write_unconfirmed_config(
        dir.path(),
        json!({"databases": {"main": {"url": bare_url(server, &db.name)}}}),
    );
    let mut mcp = serve(
        &config,
        &[
            ("PGMCP_DB_MAIN_PASSWORD", password),
            ("PGOPTIONS", "-c default_transaction_read_only=off"),
        ],
    );
    let got = call(&mut mcp, "query", json!({"sql": "INSERT INTO t VALUES (3)"}));
    assert!(refused(&got), "{got}");
    assert_eq!(db.psql("SELECT string_agg(x::text, ',' ORDER BY x) FROM t"), "1");
    assert_eq!(elsewhere.psql("SELECT string_agg(x::text, ',' ORDER BY x) FROM t"), "2");
}

/// A password written in a named database's URL never shows: not in
/// tools/list, the instructions, a failed call, nor `check`; neither for a
/// database that answers, one nothing answers for, nor one whose URL the
/// config cannot use.
#[test]
fn a_named_databases_password_never_shows() {
    let server = pg::server();
    let db = server.database();
    let dir = tempfile::tempdir().unwrap();
    let secret = "Sup3rS3cretPw";
    let host = server.host();
    let host = match host.contains(':') {
        true => format!("[{host}]"),
        false => host.to_owned(),
    };
    let (port, user) = (server.port(), server.admin_user());
    let configs = [
        json!({
            "main": {"url": format!("postgres://{user}:{secret}@{host}:{port}/{}", db.name),
                     "description": "The main one."},
            "wrong": {"url": format!("postgres://{user}:{secret}@{host}:{port}/{}", db.name), "read_only": false},
            "gone": {"url": format!("postgres://someone:{secret}@127.0.0.1:1/none"),
                     "connection": {"connect_timeout_seconds": 2}},
        }),
        json!({
            "broken": {"url": format!("postgres://someone:{secret}@{host}:{port}/{}?sslmode=bogus", db.name)},
        }),
        json!({
            "broken": {"url": format!("postgres://someone:{secret}@{host}:{port}/{}?nosuchoption=1", db.name)},
        }),
        json!({
            "broken": {"url": format!("postgres://someone:{secret}@{host}:notaport/{}", db.name)},
        }),
    ];
    for databases in configs {
        let first = databases.as_object().unwrap().keys().next().unwrap().clone();
        let config = write_unconfirmed_config(
            dir.path(),
            json!({
                "databases": databases,
                "tools": [json!({"name": "t", "description": "d", "database": first, "statement": "SELECT 1 AS one"})],
            }),
        );
        let (_, text) = check(&config, &[]);
        assert!(!text.contains(secret), "check shows the password: {text}");
        let (mut mcp, started) = start(&config, &[], &[]);
        let list = mcp.request("tools/list", json!({}));
        assert!(!list.to_string().contains(secret), "{list}");
        if let Err(why) = &started {
            assert!(!why.contains(secret), "{why}");
        }
        // (The agent's own text is quoted back when it names no database;
        // that is not the config's secret, so it is not tried here.)
        for name in ["main", "wrong", "gone", "broken"] {
            let got = call(&mut mcp, "query", json!({"sql": "SELECT 1", "database": name}));
            assert!(!got.to_string().contains(secret), "{name}: {got}");
        }
        let got = call(&mut mcp, "t", json!({}));
        assert!(!got.to_string().contains(secret), "{got}");
        assert!(!mcp.stderr().contains(secret), "stderr: {}", mcp.stderr());
    }
}

/// One writable SQLite database by name, with a tool that inserts, and
/// three rows.
fn writable_named(dir: &Path) -> (std::path::PathBuf, String) {
    let file = dir.join("w.db");
    make_db(
        &file,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');",
    );
    let config = write_unconfirmed_config(
        dir,
        json!({
            "server": {"read_only": false},
            "databases": {"w": {"url": sqlite_url(&file)}},
            "tools": [json!({"name": "add", "description": "d", "statement": "INSERT INTO t (name) VALUES (?1)",
                             "parameters": [param("name", "string")]})],
        }),
    );
    (file, config)
}

/// PGMCP_READ_ONLY=true is what a desktop bundle's "read-only" switch
/// sets. Beside `databases` it must make every database read-only, or
/// stop the config: never be dropped while the file's writable databases
/// take writes.
#[test]
fn pgmcp_read_only_beside_databases() {
    let dir = tempfile::tempdir().unwrap();
    let (file, config) = writable_named(dir.path());
    let (mut mcp, started) = start(&config, &[], &[("PGMCP_READ_ONLY", "true")]);
    // Applied: every database is read-only, so the config's write tool
    // stops it (the curated INSERT on a now read-only database), or, had
    // the config none, every write is refused. Either way nothing lands.
    if let Err(why) = &started {
        assert!(
            why.contains("tools[0].statement") && why.contains("read-only mode"),
            "{why}"
        );
    }
    let mut holes = Vec::new();
    if started.is_ok() {
        // FOUND: Config::with_environment sets the top-level read_only
        // only; each `databases` entry was validated into a Config of its
        // own before, so PGMCP_READ_ONLY=true is silently dropped (neither
        // applied nor refused, unlike PGMCP_DATABASE beside `databases`)
        // and both the query and the curated tool write.
        // Closed: the environment layer reaches every entry.
        for (name, args) in [
            ("query", json!({"sql": "DELETE FROM t WHERE id = 1"})),
            ("add", json!({"name": "z"})),
        ] {
            let got = call(&mut mcp, name, args);
            if !refused(&got) {
                holes.push(format!("{name} wrote: {got}"));
            }
        }
        let init_list = mcp.request("tools/list", json!({}));
        let query = init_list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "query")
            .cloned()
            .unwrap_or_default();
        if query["annotations"]["readOnlyHint"] != json!(true) {
            holes.push(format!("query is listed as writing: {}", query["annotations"]));
        }
    }
    assert_eq!(
        sqlite_text(&file, "SELECT group_concat(name) FROM t"),
        "a,b,c",
        "PGMCP_READ_ONLY=true, and the rows changed: {holes:#?}"
    );
    assert!(holes.is_empty(), "{holes:#?}");
}

/// PGMCP_MAX_ROWS beside `databases`: every database's cap, or refused;
/// never dropped.
#[test]
fn pgmcp_max_rows_beside_databases() {
    let dir = tempfile::tempdir().unwrap();
    let (file, config) = writable_named(dir.path());
    let (mut mcp, started) = start(&config, &[], &[("PGMCP_MAX_ROWS", "1")]);
    started.unwrap();
    {
        let got = call(&mut mcp, "query", json!({"sql": "SELECT * FROM t"}));
        // FOUND: the same for PGMCP_MAX_ROWS: the named database keeps the
        // file's cap (500) and answers all 3 rows. Closed with the above.
        assert_eq!(answer(&got)["returned_rows"], json!(1), "PGMCP_MAX_ROWS=1: {got}");
    }
    assert_eq!(scalar(&file, "SELECT count(*) FROM t"), 3);
}

// ------------------------------------------ 6. tool names and arguments

/// Calls a client can send that no schema allows: extra arguments,
/// arguments that are not an object, null for a required argument, a
/// built-in switched off, names that differ in case; and configs whose
/// tool names would shadow a built-in.
#[test]
fn tool_names_and_argument_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.db");
    make_db(
        &file,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools_enabled": {"query": false, "describe_table": false},
            "tools": [
                json!({"name": "rename", "description": "Rename an item.", "read_only": false,
                       "statement": "UPDATE t SET name = ?2 WHERE id = ?1",
                       "parameters": [param("id", "integer"), param("name", "string")]}),
                json!({"name": "Query", "description": "Count items.", "statement": "SELECT count(*) AS n FROM t"}),
                json!({"name": "named", "description": "Find by name.", "statement": "SELECT id FROM t WHERE name = ?1",
                       "parameters": [{"name": "name", "type": "string", "description": "n", "default": "a"}]}),
            ],
        }),
    );
    let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
    started.unwrap();
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(tool_names(&list["result"]), ["Query", "list_tables", "named", "rename"]);
    // Extra arguments: refused, naming the stranger, nothing run.
    for args in [
        json!({"id": 1, "name": "x", "sql": "DELETE FROM t"}),
        json!({"id": 1, "name": "x", "database": "other"}),
        json!({"id": 1, "name": "x", "ID": 2}),
        json!({"id": 1, "name": "x", "": 1}),
        json!({"id": 1, "name": "x", "limit": 1}),
    ] {
        let got = call(&mut mcp, "rename", args.clone());
        assert!(
            refused(&got) && said(&got).contains("unknown argument"),
            "{args}: {got}"
        );
    }
    // Arguments that are not an object, or missing.
    for arguments in [json!([1, "x"]), json!("id=1"), json!(1), json!(true)] {
        let got = mcp.request("tools/call", json!({"name": "rename", "arguments": arguments}));
        assert!(refused(&got), "{arguments}: {got}");
    }
    let got = mcp.request("tools/call", json!({"name": "rename"}));
    assert!(refused(&got) && said(&got).contains("required"), "{got}");
    // null for a required argument is not given; for one with a default,
    // the default.
    let got = call(&mut mcp, "rename", json!({"id": null, "name": "x"}));
    assert!(refused(&got) && said(&got).contains("argument id is required"), "{got}");
    let got = call(&mut mcp, "rename", json!({"id": 1, "name": null}));
    assert!(
        refused(&got) && said(&got).contains("argument name is required"),
        "{got}"
    );
    let got = call(&mut mcp, "named", json!({"name": null}));
    assert_eq!(answer(&got)["rows"], json!([{"id": 1}]));
    // Built-ins switched off, and names that differ only in case or space:
    // no such tool.
    for name in [
        "query",
        "describe_table",
        "QUERY",
        "query ",
        "rename ",
        "RENAME",
        "Rename",
        "",
        "list_tables\u{0}",
    ] {
        let got = mcp.request(
            "tools/call",
            json!({"name": name, "arguments": {"sql": "DELETE FROM t", "table": "t", "id": 1, "name": "x"}}),
        );
        assert!(got.get("error").is_some(), "{name:?}: {got}");
    }
    // "Query" is a curated tool of its own, not the switched-off built-in.
    let got = call(&mut mcp, "Query", json!({"sql": "DELETE FROM t"}));
    assert!(refused(&got), "{got}");
    let got = call(&mut mcp, "Query", json!({}));
    assert_eq!(answer(&got)["rows"], json!([{"n": 2}]));
    assert_eq!(sqlite_text(&file, "SELECT group_concat(name) FROM t"), "a,b");

    // A curated tool named like a built-in: refused, switched off or not.
    for (name, enabled) in [
        ("query", json!({})),
        ("query", json!({"query": false})),
        ("list_tables", json!({"list_tables": false})),
        ("describe_table", json!({})),
    ] {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({
                "tools_enabled": enabled,
                "tools": [json!({"name": name, "description": "d", "statement": "SELECT 1"})],
            }),
        );
        let (code, text) = check(&config, &[]);
        assert!(
            code != 0 && text.contains("a built-in tool has that name"),
            "{name}: {text}"
        );
    }
    // Two tools of one name: the second is refused.
    let config = write_unconfirmed_config(
        dir.path(),
        json!({"tools": [
            json!({"name": "same", "description": "d", "statement": "SELECT 1"}),
            json!({"name": "same", "description": "d", "statement": "SELECT 2"}),
        ]}),
    );
    let (code, text) = check(&config, &[]);
    assert!(code != 0 && text.contains("another tool has the same name"), "{text}");
}

/// With the built-ins switched off, what they would answer must not come
/// by another door: resources and prompts describe tables too.
#[test]
fn switched_off_built_ins_have_no_other_door() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.db");
    make_db(
        &file,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a');
         CREATE TABLE payroll (employee TEXT, salary_secret_column INTEGER);",
    );
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "tools_enabled": {"query": false, "list_tables": false, "describe_table": false},
            "tools": [tool("names", "SELECT name FROM t", json!([]))],
        }),
    );
    let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
    started.unwrap();
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(tool_names(&list["result"]), ["names"]);
    let resources = mcp.request("resources/list", json!({}));
    let read = mcp.request("resources/read", json!({"uri": "pgmcp://table/main/payroll"}));
    let prompt = mcp.request(
        "prompts/get",
        json!({"name": "explain_table", "arguments": {"table": "payroll"}}),
    );
    let completion = mcp.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "explain_table"},
               "argument": {"name": "table", "value": "pay"}}),
    );
    // FOUND: tools_enabled removes the tools, but resources/list lists
    // every table, resources/read and the explain_table prompt answer
    // describe_table's JSON (every column of payroll), and completion
    // offers the table names: the schema the switched-off list_tables and
    // describe_table would show is there for the asking.
    // Closed: resources and completions only while both are on, prompts
    // only while all three built-ins are.
    let mut holes = Vec::new();
    for (door, got) in [
        ("resources/list", &resources),
        ("resources/read", &read),
        ("prompts/get explain_table", &prompt),
        ("completion/complete", &completion),
    ] {
        let text = got.to_string();
        if text.contains("salary_secret_column") || (text.contains("payroll") && got.get("error").is_none()) {
            holes.push(format!("{door}: {text:.400}"));
        }
    }
    // And nothing was written or read past the one curated tool's rows.
    assert_eq!(scalar(&file, "SELECT count(*) FROM t"), 1);
    assert!(
        holes.is_empty(),
        "with list_tables and describe_table off, the schema still shows:\n{}",
        holes.join("\n")
    );
}

// --------------------------------------------------- 7. load time, SQLite

/// What the early look admits or refuses on SQLite, against what a call
/// does: a refusal when the config loads must be a statement every call
/// would refuse, and a statement every call refuses should not load.
#[test]
fn sqlite_statements_at_load_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    make_db(
        &file,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    let outside = dir.path().join("made.db");
    // (read_only, statement, parameters, loads)
    let cases: Vec<(bool, &str, Value, bool)> = vec![
        (
            true,
            "WITH x AS (SELECT 1) INSERT INTO t SELECT 9, 'x' FROM x",
            json!([]),
            false,
        ),
        (
            true,
            "WITH x AS (SELECT 1) UPDATE t SET name = 'x' WHERE id IN x",
            json!([]),
            false,
        ),
        (true, "REPLACE INTO t VALUES (1, 'x')", json!([]), false),
        (true, "INSERT OR REPLACE INTO t VALUES (1, 'x')", json!([]), false),
        (true, "PRAGMA query_only = 0", json!([]), false),
        (true, "PRAGMA writable_schema = 1", json!([]), false),
        (true, "ATTACH ?1 AS x", json!([param("p", "string")]), false),
        (true, "SELECT 1; DELETE FROM t", json!([]), false),
        (true, "SELECT ';'; DELETE FROM t", json!([]), false),
        (true, "SELECT 1 /* ; */; DELETE FROM t WHERE id = 1", json!([]), false),
        (true, "SELECT '; DELETE FROM t; --' AS s", json!([]), true),
        (true, "SELECT 1 /* ; DELETE FROM t */ AS one", json!([]), true),
        (true, "SELECT 1 AS one -- ; DELETE FROM t", json!([]), true),
        (true, "SELECT 1 AS one;", json!([]), true),
        (true, "SELECT 1 AS one;  ", json!([]), true),
        (true, "EXPLAIN QUERY PLAN DELETE FROM t", json!([]), true),
    ];
    for (read_only, statement, parameters, loads) in cases {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({"server": {"read_only": read_only},
                   "tools": [json!({"name": "probe", "description": "d", "statement": statement,
                                    "parameters": parameters.clone()})]}),
        );
        let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
        assert_eq!(started.is_ok(), loads, "{statement}: {started:?}");
        let args = match parameters.as_array().unwrap().is_empty() {
            true => json!({}),
            false => json!({"p": outside.display().to_string()}),
        };
        let got = call(&mut mcp, "probe", args);
        if !loads {
            assert!(refused(&got), "{statement}: {got}");
        }
    }
    assert_eq!(sqlite_state(&file), "1:a,2:b / 1");
    assert!(!outside.exists());

    // A statement that ends in `;` and a comment is still one statement,
    // as the built-in query takes it.
    // A read-only PRAGMA the built-in query answers on a read-only
    // database.
    let config = write_unconfirmed_config(dir.path(), json!({}));
    let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
    started.unwrap();
    let mut holes = Vec::new();
    for sql in [
        "SELECT 1 AS one; -- the end",
        "SELECT 1 AS one; /* the end */",
        "PRAGMA table_info(t)",
    ] {
        let by_query = call(&mut mcp, "query", json!({"sql": sql}));
        let config = write_unconfirmed_config(
            dir.path(),
            json!({"tools": [json!({"name": "probe", "description": "d", "statement": sql})]}),
        );
        let (mut tool_mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
        // FOUND (wrongly refused): the early look refuses in read-only
        // mode `PRAGMA table_info(t)`, which the built-in query runs on the
        // same read-only database: preview's `embedded` takes only SELECT,
        // VALUES, FROM, TABLE, SHOW, DESCRIBE, SUMMARIZE and EXPLAIN as
        // reading verbs, so every PRAGMA, even one that only reads, stops
        // the config ("PRAGMA is not allowed in read-only mode").
        // Closed: a pragma that only reports reads.
        if started.is_ok() == refused(&by_query) {
            holes.push(format!(
                "wrongly refused at load: {sql}: query says {:.200}, the tool's config {:.300}",
                by_query.to_string(),
                format!("{started:?}")
            ));
        }
        if started.is_ok() {
            let got = call(&mut tool_mcp, "probe", json!({}));
            assert_eq!(refused(&got), refused(&by_query), "{sql}: {got}");
        }
    }

    // On a writable database: statements every call refuses (they write a
    // file the agent names, or are maintenance) should stop the config
    // too, and never write that file.
    for statement in [
        "ATTACH ?1 AS x",
        "VACUUM INTO ?1",
        "VACUUM",
        "SELECT load_extension(?1)",
    ] {
        let config = write_unconfirmed_config(
            dir.path(),
            json!({"server": {"read_only": false},
                   "tools": [json!({"name": "probe", "description": "d", "statement": statement,
                                    "parameters": if statement == "VACUUM" { json!([]) } else { json!([param("p", "string")]) }})]}),
        );
        let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
        let args = if statement == "VACUUM" {
            json!({})
        } else {
            json!({"p": outside.display().to_string()})
        };
        let got = call(&mut mcp, "probe", args);
        assert!(refused(&got), "{statement}: ran: {got}");
        assert!(!outside.exists(), "{statement}: wrote the file the agent named");
        // FOUND (wrongly admitted, minor): the SQLite early look only
        // checks the verb and `protection.blocked_functions`, so ATTACH,
        // VACUUM INTO, VACUUM and load_extension() load on a writable
        // database though the guard refuses them at every call (decidable
        // from the tokens: statement.rs judges VACUUM and ATTACH on the
        // same Outline, and load_extension is refused by name).
        // Closed: the early look applies those statement rules.
        if started.is_ok() {
            holes.push(format!(
                "wrongly admitted at load: {statement}: every call answers {:.200}",
                said(&got)
            ));
        }
    }
    assert_eq!(sqlite_state(&file), "1:a,2:b / 1");
    assert!(
        holes.is_empty(),
        "the early look and the calls disagree:\n{}",
        holes.join("\n")
    );
}

/// SQLite binding: strings with quotes, NUL and `?` are values; arrays
/// are JSON text; placeholders that do not match the parameters fail the
/// call, never run with a missing value.
#[test]
fn sqlite_arguments_are_only_values() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    make_db(
        &file,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": false},
            "tools": [
                tool("echo", "SELECT ?1 AS v", json!([param("v", "string")])),
                tool("by_ids", "SELECT name FROM t WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
                     json!([array_param("ids", "integer")])),
                tool("by_names", "SELECT count(*) AS n FROM t WHERE name IN (SELECT value FROM json_each(?1))",
                     json!([array_param("names", "string")])),
                tool("fewer", "SELECT name FROM t WHERE id = ?1 OR id = ?2", json!([param("a", "integer")])),
                tool("more", "SELECT name FROM t WHERE id = ?1", json!([param("a", "integer"), param("b", "string")])),
                json!({"name": "add", "description": "d", "read_only": false,
                       "statement": "INSERT INTO t (name) VALUES (?1)", "parameters": [param("name", "string")]}),
            ],
        }),
    );
    let (mut mcp, started) = start(&config, &["--database", &sqlite_url(&file)], &[]);
    started.unwrap();
    for attack in [
        "x'); DELETE FROM t; --",
        "?2",
        "?",
        ":name",
        "@x",
        "$1",
        "a\u{0}b",
        "\"]', json('[1,2]')); DELETE FROM t; --",
    ] {
        let got = call(&mut mcp, "echo", json!({"v": attack}));
        assert_eq!(answer(&got)["rows"][0]["v"], json!(attack), "{attack:?}");
    }
    let got = call(&mut mcp, "by_ids", json!({"ids": [2, 1]}));
    assert_eq!(answer(&got)["rows"], json!([{"name": "a"}, {"name": "b"}]));
    for names in [
        json!(["a\"]"]),
        json!(["\"], [\"a"]),
        json!(["a', 'b"]),
        json!(["\\\"", "a\\"]),
    ] {
        let got = call(&mut mcp, "by_names", json!({"names": names}));
        assert_eq!(answer(&got)["rows"], json!([{"n": 0}]), "{names}");
    }
    // A huge array and a huge string: answered or refused, the server
    // still answers afterwards.
    let many: Vec<i64> = (0..300_000).collect();
    let got = call(&mut mcp, "by_ids", json!({"ids": many}));
    assert!(
        refused(&got) || answer(&got)["rows"].is_array(),
        "{:.300}",
        got.to_string()
    );
    let got = call(&mut mcp, "echo", json!({"v": "'".repeat(8 << 20)}));
    assert!(got.is_object(), "{:.300}", got.to_string());
    let got = call(&mut mcp, "by_ids", json!({"ids": [1]}));
    assert_eq!(answer(&got)["rows"], json!([{"name": "a"}]));
    // Placeholders and parameters that do not match: the call fails.
    let got = call(&mut mcp, "fewer", json!({"a": 1}));
    assert!(refused(&got), "a placeholder without a parameter ran: {got}");
    let got = call(&mut mcp, "more", json!({"a": 1, "b": "x"}));
    assert!(refused(&got), "a parameter without a placeholder: {got}");
    // The writing tool writes exactly its value.
    let got = call(&mut mcp, "add", json!({"name": "c'); DROP TABLE t; --"}));
    assert!(!refused(&got), "{got}");
    assert_eq!(
        sqlite_text(
            &file,
            "SELECT group_concat(name, '|') FROM (SELECT name FROM t ORDER BY id)"
        ),
        "a|b|c'); DROP TABLE t; --"
    );
    assert_eq!(scalar(&file, "SELECT count(*) FROM sqlite_master"), 1);
}
