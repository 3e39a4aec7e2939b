//! Every stage of the query pipeline against the real PostgreSQL and real hook
//! processes: the reference query cases pgmcp was designed against, then
//! stress (many calls at once) and races (calls against shutdown and cancel).

use std::sync::Arc;
use std::time::Duration;

use pgmcp::{Config, Engine, Error, ErrorPrompt, Hook, HooksConfig, QueryInput, SanitizeRule, TimeoutRule};
use regex::Regex;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, err_text as err, rows, run, writable};
use crate::support::hook_scripts::script;
use crate::support::pg;

fn hook(name: &str, pattern: &str) -> Hook {
    Hook {
        pattern: Regex::new(pattern).unwrap(),
        command: script(name),
        args: vec![],
        timeout: Duration::from_secs(5),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn before_hook_rewrites_and_the_guard_checks_the_rewrite() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.hooks.before_query = vec![hook("modify_query.sh", ".*")]);
    assert_eq!(rows(&engine, "SELECT 'original'").await, json!([{"modified": 1}]));

    // A hook that rewrites into something the guard refuses is refused.
    let dir = tempfile::tempdir().unwrap();
    let evil = dir.path().join("evil.sh");
    std::fs::write(
        &evil,
        "#!/bin/bash\ncat > /dev/null\necho '{\"accept\": true, \"modified_query\": \"DROP TABLE t\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    db.psql("CREATE TABLE t (x int)");
    let engine = engine_for(&db, |c| {
        c.read_only = false;
        c.hooks.before_query = vec![Hook {
            command: evil.clone(),
            ..hook("accept.sh", ".*")
        }];
    });
    match run(&engine, "SELECT 1").await {
        Err(Error::Guard(v)) => assert!(v.message.starts_with("DROP statements are not allowed")),
        other => panic!("expected the guard to refuse the rewrite, got {other:?}"),
    }
    assert_eq!(db.psql("SELECT count(*) FROM pg_tables WHERE tablename = 't'"), "1");

    // The length limit holds for the SQL the hooks made, not only for what
    // was sent.
    let long = dir.path().join("long.sh");
    std::fs::write(
        &long,
        format!(
            "#!/bin/bash\ncat > /dev/null\necho '{{\"accept\": true, \"modified_query\": \"SELECT {}1\"}}'\n",
            "0 + ".repeat(100)
        ),
    )
    .unwrap();
    std::fs::set_permissions(&long, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let engine = engine_for(&db, |c| {
        c.query.max_sql_length = 100;
        c.hooks.before_query = vec![Hook {
            command: long.clone(),
            ..hook("accept.sh", ".*")
        }];
    });
    let text = err(run(&engine, "SELECT 1").await);
    assert!(
        text.starts_with(
            "the query as the before_query hooks rewrote it is 408 characters long, more than the 100 allowed"
        ),
        "{text}"
    );
}

/// A failing hook stops the pipeline before the query runs.
#[tokio::test(flavor = "multi_thread")]
async fn failing_hooks_stop_the_query_before_it_runs() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int)");
    for (name, expected) in [
        ("crash.sh", "hook failed"),
        ("bad_json.sh", "unparseable response"),
        ("reject.sh", "rejected by test hook"),
        ("slow.sh", "hook timed out"),
    ] {
        let engine = engine_for(&db, |c| {
            c.read_only = false;
            c.hooks.before_query = vec![Hook {
                timeout: Duration::from_secs(1),
                ..hook(name, ".*")
            }];
        });
        let text = err(run(&engine, "INSERT INTO t VALUES (1)").await);
        assert!(text.contains(expected), "{name}: {text}");
        assert_eq!(db.psql("SELECT count(*) FROM t"), "0", "{name}: the query ran");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn after_hook_rewrites_the_result_and_keeps_every_digit() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.hooks.after_query = vec![hook("modify_result.sh", ".*")]);
    let out = run(&engine, "SELECT 1 AS n").await.unwrap();
    assert_eq!(serde_json::to_value(&out.rows).unwrap(), json!([{"modified": true}]));
    assert_eq!(out.columns[0].name, "modified");

    // The result goes to the hook as JSON and comes back: 2^53+1 survives.
    let engine = engine_for(&db, |c| c.hooks.after_query = vec![hook("accept.sh", ".*")]);
    let out = run(
        &engine,
        "SELECT 9007199254740993::bigint AS big, 12345678901234567890.12345::numeric AS n",
    )
    .await
    .unwrap();
    assert_eq!(
        serde_json::to_string(&out.rows).unwrap(),
        r#"[{"big":9007199254740993,"n":"12345678901234567890.12345"}]"#
    );

    let engine = engine_for(&db, |c| c.hooks.after_query = vec![hook("reject.sh", ".*")]);
    assert_eq!(err(run(&engine, "SELECT 1").await), "rejected by test hook");
}

#[tokio::test(flavor = "multi_thread")]
async fn sanitization_masks_strings_everywhere_and_leaves_numbers() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE contacts (id bigint, phone text, data jsonb, tags text[]);
         INSERT INTO contacts VALUES (62821233447, '+62821233447', '{\"phone\": \"+62899887766\", \"n\": 62821233447}', ARRAY['+62811111111'])",
    );
    let engine = engine_for(&db, |c| {
        c.sanitization = vec![SanitizeRule {
            pattern: Regex::new(r"(\+62)(\d{2})(\d+)(\d{3})").unwrap(),
            replacement: "${1}xxx${4}".into(),
            description: "phone".into(),
        }]
    });
    let out = rows(&engine, "SELECT id, phone, data FROM contacts").await;
    assert_eq!(
        out,
        json!([{"id": 62821233447_i64, "phone": "+62xxx447", "data": {"phone": "+62xxx766", "n": 62821233447_i64}}])
    );

    // It applies to what an after_query hook returned too.
    let engine = engine_for(&db, |c| {
        c.sanitization = vec![SanitizeRule {
            pattern: Regex::new("modified").unwrap(),
            replacement: "masked".into(),
            description: String::new(),
        }];
        c.hooks.after_query = vec![hook("modify_result.sh", ".*")];
    });
    let out = run(&engine, "SELECT 1").await.unwrap();
    // Keys are sanitized like values: a column alias or a JSON key can
    // carry data as well as a value can.
    assert_eq!(serde_json::to_value(&out.rows).unwrap(), json!([{"masked": true}]));
    assert_eq!(out.columns[0].name, "masked");
}

#[tokio::test(flavor = "multi_thread")]
async fn error_prompts_are_appended_to_every_kind_of_error() {
    let db = pg::server().database();
    let prompts = vec![
        ErrorPrompt {
            pattern: Regex::new(r"(?i)relation.*does not exist").unwrap(),
            message: "Call list_tables first.".into(),
        },
        ErrorPrompt {
            pattern: Regex::new(r"(?i)not allowed").unwrap(),
            message: "This server blocks that on purpose.".into(),
        },
        ErrorPrompt {
            pattern: Regex::new(r"(?i)rejected").unwrap(),
            message: "A hook refused it.".into(),
        },
        ErrorPrompt {
            pattern: Regex::new(r"(?i)timed out").unwrap(),
            message: "Make it cheaper.".into(),
        },
        ErrorPrompt {
            pattern: Regex::new(r"(?i)does not exist").unwrap(),
            message: "Check the spelling.".into(),
        },
    ];
    let engine = engine_for(&db, |c| {
        c.error_prompts = prompts.clone();
        c.query.timeout_rules = vec![TimeoutRule {
            pattern: Regex::new("pg_sleep").unwrap(),
            timeout: Duration::from_secs(1),
        }];
    });
    assert_eq!(
        err(run(&engine, "SELECT * FROM nonexistent").await),
        "relation \"nonexistent\" does not exist (SQLSTATE 42P01)\nat character 15 of the query\n\nCall list_tables first.\nCheck the spelling."
    );
    let guard = err(run(&engine, "DROP TABLE x").await);
    assert!(
        guard.starts_with("DROP is not allowed in read-only mode")
            && guard.ends_with("\n\nThis server blocks that on purpose."),
        "{guard}"
    );
    let timeout = err(run(&engine, "SELECT pg_sleep(10)").await);
    assert!(
        timeout.starts_with("query timed out after 1s") && timeout.ends_with("\n\nMake it cheaper."),
        "{timeout}"
    );
    // The error keeps its kind under the prompts.
    match run(&engine, "DROP TABLE x").await {
        Err(e) => assert!(matches!(e.kind(), Error::Guard(_)), "{e:?}"),
        Ok(_) => panic!("DROP ran"),
    }

    let engine = engine_for(&db, |c| {
        c.error_prompts = prompts.clone();
        c.hooks.before_query = vec![hook("reject.sh", ".*")];
    });
    assert_eq!(
        err(run(&engine, "SELECT 1").await),
        "rejected by test hook\n\nA hook refused it."
    );

    // Connection errors too.
    let port = crate::support::net::free_port();
    let mut config = Config::builtin();
    config.error_prompts = vec![ErrorPrompt {
        pattern: Regex::new("cannot reach").unwrap(),
        message: "Is the database up?".into(),
    }];
    let params = pgmcp::testing::postgres::params::resolve(
        Some(&format!("postgres://u:p@127.0.0.1:{port}/x")),
        &config.connection,
        &|_| None,
    )
    .unwrap();
    let engine = Engine::postgres(config, params);
    assert!(err(run(&engine, "SELECT 1").await).ends_with("\n\nIs the database up?"));
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_rules_pick_the_first_match() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| {
        c.query.default_timeout = Duration::from_secs(30);
        c.query.timeout_rules = vec![
            TimeoutRule {
                pattern: Regex::new("quick").unwrap(),
                timeout: Duration::from_secs(1),
            },
            TimeoutRule {
                pattern: Regex::new("pg_sleep").unwrap(),
                timeout: Duration::from_secs(20),
            },
        ];
    });
    match run(&engine, "SELECT pg_sleep(5) /* quick */")
        .await
        .map_err(|e| e.kind().to_string())
    {
        Err(text) => assert!(text.starts_with("query timed out after 1s"), "{text}"),
        Ok(_) => panic!("the 1 s rule did not apply"),
    }
    // The second rule (20 s) lets a 1.2 s sleep finish.
    assert_eq!(
        rows(&engine, "SELECT pg_sleep(1.2)::text AS s").await,
        json!([{"s": ""}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn parameters_and_input_bounds_are_checked_before_execution() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.query.max_sql_length = 50);
    let call = |sql: &str, params: Value| QueryInput {
        database: None,
        sql: sql.into(),
        params: serde_json::from_value(params).unwrap(),
        limit: None,
    };
    let cases = [
        (
            call("SELECT $1::int", json!([])),
            "the query uses $1, but 0 parameters were given",
        ),
        (
            call("SELECT $1::int, $2::text", json!([1])),
            "the query uses $1..$2, but 1 parameter was given",
        ),
        (
            call("SELECT 1", json!([1])),
            "the query uses no placeholders, but 1 parameter was given",
        ),
        (call("SELECT $1::int[]", json!([[1, 2]])), "params[0] is an array"),
        (
            call(&format!("SELECT '{}'", "x".repeat(60)), json!([])),
            "the query is 69 characters long, more than the 50 allowed (query.max_sql_length)",
        ),
    ];
    for (input, expected) in cases {
        match engine.query(&input, CancellationToken::new()).await {
            Err(Error::Input(e)) => assert!(e.to_string().starts_with(expected), "{e}"),
            other => panic!("{}: expected an input error, got {other:?}", input.sql),
        }
    }
    // Right count and types: bound, typed by the server.
    let out = engine
        .query(
            &call(
                "SELECT $1::date + 1 AS d, $2::text IS NULL AS n",
                json!(["2024-02-28", null]),
            ),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&out.rows).unwrap(),
        json!([{"d": "2024-02-29", "n": true}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn limit_lowers_the_row_cap_but_never_raises_it() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.query.max_rows = 100);
    let call = |limit| QueryInput {
        database: None,
        sql: "SELECT g FROM generate_series(1, 1000) g".into(),
        params: vec![],
        limit,
    };
    let out = engine.query(&call(Some(7)), CancellationToken::new()).await.unwrap();
    assert_eq!((out.returned_rows, out.truncated), (7, true));
    assert!(out.hint.unwrap().contains("first 7 rows"));
    let out = engine
        .query(&call(Some(100_000)), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((out.returned_rows, out.truncated), (100, true));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_byte_cap_cuts_at_whole_rows_and_keeps_utf8_and_json_valid() {
    let db = pg::server().database();
    let engine = engine_for(&db, |c| c.query.max_result_length = 1000);
    let out = run(
        &engine,
        "SELECT g, repeat('日本語🎉', 10) AS s FROM generate_series(1, 100) g",
    )
    .await
    .unwrap();
    assert!(out.truncated);
    assert!(
        out.returned_rows > 0 && out.returned_rows < 100,
        "{}",
        out.returned_rows
    );
    let json = serde_json::to_string(&out.rows).unwrap();
    assert!(json.len() <= 1000, "{} bytes", json.len());
    let back: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(back.as_array().unwrap().len(), out.returned_rows);
    assert_eq!(out.rows.last().unwrap()["s"], json!("日本語🎉".repeat(10)));
    assert!(out.hint.unwrap().contains("result limit (query.max_result_length)"));
}

/// Reading stops at the cap: a query that would take ~1,000 s to run to the end
/// returns its first rows well within a 20 s timeout.
#[tokio::test(flavor = "multi_thread")]
async fn reading_stops_at_the_cap_on_a_million_rows() {
    let db = pg::server().database();
    db.psql("CREATE TABLE million AS SELECT g AS id, md5(g::text) AS h FROM generate_series(1, 1000000) g");
    let engine = engine_for(&db, |c| c.query.default_timeout = Duration::from_secs(20));
    let out = run(&engine, "SELECT id, h FROM million ORDER BY id").await.unwrap();
    assert_eq!((out.returned_rows, out.truncated), (500, true));
    assert_eq!(out.rows[499]["id"], json!(500));
    // Each row costs a millisecond to produce; all of them would take 1,000 s.
    let out = run(&engine, "SELECT id, pg_sleep(0.001)::text FROM million")
        .await
        .unwrap();
    assert_eq!((out.returned_rows, out.truncated), (500, true));
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_affected_for_each_kind_of_statement() {
    let db = pg::server().database();
    db.psql("CREATE TABLE users (id serial PRIMARY KEY, name text, active boolean DEFAULT false); INSERT INTO users (name) SELECT 'u' || g FROM generate_series(1, 5) g");
    let engine = engine_for(&db, writable);
    let cases = [
        ("SELECT * FROM users", Some(5), 5),
        ("UPDATE users SET active = true WHERE id <= 3", Some(3), 0),
        ("DELETE FROM users WHERE id <= 2", Some(2), 0),
        ("INSERT INTO users (name) VALUES ('a'), ('b'), ('c')", Some(3), 0),
        ("INSERT INTO users (name) VALUES ('z') RETURNING name", Some(1), 1),
        ("CREATE TABLE other (x int)", None, 0),
    ];
    for (sql, affected, returned) in cases {
        let out = run(&engine, sql).await.unwrap();
        assert_eq!((out.rows_affected, out.returned_rows), (affected, returned), "{sql}");
    }
    let out = run(&engine, "SELECT * FROM users WHERE false").await.unwrap();
    assert_eq!(
        (out.rows.len(), out.columns.len()),
        (0, 3),
        "an empty result still has its columns"
    );
}

/// Every stage in order: a before hook rewrites, the guard passes it, it runs,
/// an after hook passes the result through, sanitization masks it, and an
/// error would carry its prompt.
#[tokio::test(flavor = "multi_thread")]
async fn the_full_pipeline() {
    let db = pg::server().database();
    db.psql("CREATE TABLE contacts (name text, phone text); INSERT INTO contacts VALUES ('ada', '+62821233447')");
    let dir = tempfile::tempdir().unwrap();
    let rewrite = dir.path().join("rewrite.sh");
    std::fs::write(&rewrite, "#!/bin/bash\ncat > /dev/null\necho '{\"accept\": true, \"modified_query\": \"SELECT name, phone FROM contacts\"}'\n").unwrap();
    std::fs::set_permissions(&rewrite, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let engine = engine_for(&db, |c| {
        c.hooks = HooksConfig {
            before_query: vec![Hook {
                command: rewrite.clone(),
                ..hook("accept.sh", "contacts")
            }],
            after_query: vec![hook("accept.sh", "phone")],
        };
        c.sanitization = vec![SanitizeRule {
            pattern: Regex::new(r"\d{6}").unwrap(),
            replacement: "******".into(),
            description: String::new(),
        }];
        c.error_prompts = vec![ErrorPrompt {
            pattern: Regex::new("does not exist").unwrap(),
            message: "Try list_tables.".into(),
        }];
    });
    assert_eq!(
        rows(&engine, "SELECT * FROM contacts").await,
        json!([{"name": "ada", "phone": "+******33447"}])
    );
    assert!(err(run(&engine, "SELECT * FROM nope").await).ends_with("Try list_tables."));
}

/// Stress: many concurrent calls all complete, and never more than
/// `pool.max_conns` run on the server at once.
#[tokio::test(flavor = "multi_thread")]
async fn stress_concurrent_queries_respect_the_slot_limit() {
    let db = pg::server().database();
    let app = format!("stress_{}", db.name);
    let mut config = crate::support::engine::builtin_for_server();
    config.pool.max_conns = 3;
    config.query.default_timeout = Duration::from_secs(60);
    let url = format!("{}?application_name={app}", db.url);
    let params = pgmcp::testing::postgres::params::resolve(Some(&url), &config.connection, &|_| None).unwrap();
    let engine = Arc::new(Engine::postgres(config, params));
    // Sample the server while the burst runs; stopped however the test
    // ends (a failing call must not leave the sampler looping forever).
    let stop = CancellationToken::new();
    let _stop_sampling = stop.clone().drop_guard();
    let sampler = {
        let stop = stop.clone();
        let url = db.url.clone();
        let app = app.clone();
        tokio::task::spawn_blocking(move || {
            let mut max = 0usize;
            while !stop.is_cancelled() {
                let out = std::process::Command::new("psql")
                    .args(["-X", "-At", "-d", &url, "-c"])
                    .arg(format!(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}'"
                    ))
                    .output();
                if let Ok(out) = out {
                    max = max.max(String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0));
                }
            }
            max
        })
    };
    let mut tasks = Vec::new();
    for t in 0..50 {
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            for q in 0..20 {
                let sql = if q % 5 == 0 {
                    "SELECT pg_sleep(0.02), $1::int AS n".to_owned()
                } else {
                    "SELECT $1::int AS n".to_owned()
                };
                let n = t * 100 + q;
                let out = engine
                    .query(
                        &QueryInput {
                            database: None,
                            sql,
                            params: vec![json!(n)],
                            limit: None,
                        },
                        CancellationToken::new(),
                    )
                    .await
                    .unwrap();
                assert_eq!(out.rows[0]["n"], json!(n), "a call got another call's answer");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    stop.cancel();
    let max = sampler.await.unwrap();
    assert!(max >= 1, "the sampler never saw the burst");
    assert!(max <= 3, "{max} connections were open at once with pool.max_conns = 3");
}

/// Stress: queries, list_tables and describe_table mixed, concurrently.
#[tokio::test(flavor = "multi_thread")]
async fn stress_mixed_operations() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (id int PRIMARY KEY, v text)");
    let engine = Arc::new(engine_for(&db, |c| c.pool.max_conns = 2));
    let mut tasks = Vec::new();
    for i in 0..30 {
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            match i % 3 {
                0 => assert_eq!(
                    engine
                        .list_tables(&Default::default(), CancellationToken::new())
                        .await
                        .unwrap()
                        .tables
                        .len(),
                    1
                ),
                1 => assert_eq!(
                    engine
                        .describe_table("t", None, CancellationToken::new())
                        .await
                        .unwrap()
                        .columns
                        .len(),
                    2
                ),
                _ => assert_eq!(
                    run(&engine, "SELECT count(*) AS n FROM t").await.unwrap().rows[0]["n"],
                    json!(0)
                ),
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}
