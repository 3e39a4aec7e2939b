//! A person confirms a model's writing statement before it runs
//! (`confirm`), end to end on the real binary: the official MCP Python SDK
//! as the client, its elicitation callback as the person (accept, decline,
//! cancel, no answer), the table read back with psql after each; a client
//! without elicitation; the 2026-07-28 form (`input_required`, a retry with
//! the answer), its state used once and tied to the statement; SQLite and
//! DuckDB files too.

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::python_sdk::{PYTHON_SDK, confirm_session, shown, stateless_meta};
use crate::support::served::write_config;
use crate::support::stdio::{McpProcess, inside_boundary, raw_text};
use crate::support::tools;

fn call(sql: &str, params: Value, answer: &str) -> Value {
    json!({"name": "query", "arguments": {"sql": sql, "params": params}, "answer": answer})
}

fn pets(db: &pg::TestDb) -> String {
    db.psql("SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM pets")
        .trim()
        .to_owned()
}

/// Accept, decline, cancel and silence, each read back with psql: only
/// what the person accepted changed; reads run unasked; the person sees
/// the statement, its values, the table and PostgreSQL's estimate.
#[test]
fn a_person_accepts_declines_or_cancels_a_write_on_postgres() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); \
         INSERT INTO pets SELECT i, 'pet' || i FROM generate_series(1, 40) i; ANALYZE pets",
    );
    let before = pets(&db);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        json!({"server": {"read_only": false}, "confirm_timeout_seconds": 3}),
    );
    let rename = "UPDATE pets SET name = $1 WHERE id <= $2";
    let steps = confirm_session(
        json!({"steps": [
            call("SELECT count(*) AS n FROM pets", json!([]), "decline"),
            call(rename, json!(["declined", 10]), "decline"),
            call(rename, json!(["cancelled", 10]), "cancel"),
            call(rename, json!(["silent", 10]), "wait"),
        ]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    // A read runs unasked.
    assert_eq!(steps[0]["isError"], false, "{}", steps[0]);
    assert_eq!(steps[0]["structured"]["rows"], json!([{"n": 40}]));
    assert!(shown(&steps[0]).is_empty(), "{}", steps[0]);
    // Declined, dismissed, unanswered: each asked once, nothing ran.
    for (step, says) in steps[1..]
        .iter()
        .zip(["declined", "dismissed", "no answer came within 3s"])
    {
        assert_eq!(step["isError"], true, "{step}");
        let text = step["text"].as_str().unwrap();
        assert!(text.contains(says) && text.contains("nothing changed"), "{text}");
        assert_eq!(step["asked"].as_array().unwrap().len(), 1, "{step}");
    }
    assert_eq!(pets(&db), before, "nothing the person did not accept ran");
    let message = shown(&steps[1]);
    for part in [
        "changes data",
        rename,
        "$1 = \"declined\", $2 = 10",
        "Tables it changes: pets",
        "Estimated rows: about ",
        "nothing has run",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert!(
        steps[1]["asked"][0]["schema"]["properties"] == json!({}),
        "{}",
        steps[1]
    );

    let steps = confirm_session(
        json!({"steps": [call(rename, json!(["accepted", 2]), "accept")]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    assert_eq!(steps[0]["isError"], false, "{}", steps[0]);
    assert_eq!(steps[0]["structured"]["rows_affected"], 2, "{}", steps[0]);
    assert!(pets(&db).starts_with("1:accepted,2:accepted,3:pet3"), "{}", pets(&db));
}

/// What the guard classifies as writing is asked about wherever it
/// hides: a function that writes behind a SELECT, `nextval`, a write in
/// a CTE. With `confirm: "all"` reads are asked too; with `"never"`
/// nothing is; in read-only mode nothing is (nothing can write).
#[test]
fn what_is_asked_follows_the_guard_and_the_setting() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'); \
         CREATE SEQUENCE tickets; \
         CREATE FUNCTION adopt(n text) RETURNS int LANGUAGE sql AS \
         $$ INSERT INTO pets VALUES (100, n) RETURNING id $$",
    );
    let dir = tempfile::tempdir().unwrap();
    let env = [("PGMCP_PG_CONNSTRING", db.url.as_str())];
    let writes = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [
            call("SELECT adopt('hidden')", json!([]), "decline"),
            call("SELECT nextval('tickets')", json!([]), "decline"),
            call("WITH gone AS (DELETE FROM pets WHERE id = 1 RETURNING id) SELECT * FROM gone", json!([]), "decline"),
            call("SELECT name FROM pets", json!([]), "decline"),
        ]}),
        &writes,
        None,
        &env,
    );
    for step in &steps[..3] {
        assert_eq!(step["isError"], true, "{step}");
        assert!(shown(step).contains("changes data"), "{step}");
    }
    assert!(shown(&steps[2]).contains("Tables it changes: pets"), "{}", steps[2]);
    assert_eq!(steps[3]["isError"], false, "{}", steps[3]);
    assert!(shown(&steps[3]).is_empty());
    assert_eq!(db.psql("SELECT string_agg(name, ',') FROM pets").trim(), "rex");
    assert_eq!(
        db.psql("SELECT last_value || ':' || is_called::int FROM tickets")
            .trim(),
        "1:0"
    );

    let dir = tempfile::tempdir().unwrap();
    let all = write_config(dir.path(), json!({"server": {"read_only": false}, "confirm": "all"}));
    let steps = confirm_session(
        json!({"steps": [call("SELECT name FROM pets", json!([]), "accept")]}),
        &all,
        None,
        &env,
    );
    assert_eq!(steps[0]["structured"]["rows"], json!([{"name": "rex"}]), "{}", steps[0]);
    let message = shown(&steps[0]);
    assert!(
        message.contains("SELECT name FROM pets") && !message.contains("changes data"),
        "{message}"
    );

    let dir = tempfile::tempdir().unwrap();
    let never = write_config(dir.path(), json!({"server": {"read_only": false}, "confirm": "never"}));
    let steps = confirm_session(
        json!({"steps": [call("SELECT adopt('unasked')", json!([]), "decline")]}),
        &never,
        None,
        &env,
    );
    assert_eq!(steps[0]["isError"], false, "{}", steps[0]);
    assert!(shown(&steps[0]).is_empty());
    assert_eq!(db.psql("SELECT name FROM pets WHERE id = 100").trim(), "unasked");

    let dir = tempfile::tempdir().unwrap();
    let reading = write_config(dir.path(), json!({"confirm": "all"}));
    let steps = confirm_session(
        json!({"steps": [call("SELECT count(*) AS n FROM pets", json!([]), "decline")]}),
        &reading,
        None,
        &env,
    );
    assert_eq!(steps[0]["structured"]["rows"], json!([{"n": 2}]), "{}", steps[0]);
    assert!(shown(&steps[0]).is_empty(), "read-only mode asks nothing");
}

/// A client that cannot ask its person gets a refusal that names the
/// setting; nothing ran.
#[test]
fn a_client_without_elicitation_is_refused_naming_the_setting() {
    let db = pg::server().database();
    db.psql("CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex')");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"elicitation": false, "steps": [
            call("DELETE FROM pets WHERE id = $1", json!([1]), "accept"),
            call("SELECT name FROM pets", json!([]), "accept"),
        ]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    assert_eq!(steps[0]["isError"], true, "{}", steps[0]);
    let text = steps[0]["text"].as_str().unwrap();
    assert!(
        text.contains("cannot ask") && text.contains("\"confirm\": \"never\"") && text.contains("nothing ran"),
        "{text}"
    );
    assert_eq!(
        steps[1]["structured"]["rows"],
        json!([{"name": "rex"}]),
        "reads still run"
    );
    assert_eq!(pets(&db), "1:rex");
}

/// The 2026-07-28 form: the call answers `input_required` with the
/// elicitation and an opaque state; the retry carrying the person's
/// answer and the state runs the statement. The state answers once, is
/// tied to the statement (other arguments are asked about anew), and a
/// made-up one runs nothing.
#[test]
fn the_stateless_form_asks_with_input_required() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'), (2, 'tom')",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let meta = stateless_meta(json!({"elicitation": {"form": {}}}));
    let delete = json!({"sql": "DELETE FROM pets WHERE id = $1", "params": [1]});
    let mut call = |arguments: &Value, retry: Option<(&str, Value)>| {
        let mut params = json!({"_meta": meta, "name": "query", "arguments": arguments});
        if let Some((state, answer)) = retry {
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"confirm": answer});
        }
        mcp.request("tools/call", params)["result"].clone()
    };

    let asked = call(&delete, None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let request = &asked["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    assert!(
        request["params"]["message"]
            .as_str()
            .unwrap()
            .contains("DELETE FROM pets WHERE id = $1"),
        "{asked}"
    );
    let state = asked["requestState"].as_str().unwrap().to_owned();
    assert_eq!(pets(&db), "1:rex,2:tom", "asking ran nothing");

    // Declined: nothing ran, and the state is spent.
    let declined = call(&delete, Some((&state, json!({"action": "decline"}))));
    assert_eq!(declined["isError"], true, "{declined}");
    assert!(raw_text(&declined).contains("declined"), "{declined}");
    let again = call(&delete, Some((&state, json!({"action": "accept", "content": {}}))));
    assert_eq!(again["isError"], true, "{again}");
    assert!(raw_text(&again).contains("not one pgmcp is waiting for"), "{again}");
    let forged = call(
        &delete,
        Some(("00112233445566778899aabbccddeeff", json!({"action": "accept"}))),
    );
    assert_eq!(forged["isError"], true, "{forged}");
    assert_eq!(pets(&db), "1:rex,2:tom");

    // Accepted for one statement, retried with another: asked anew.
    let asked = call(&delete, None);
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let other = json!({"sql": "DELETE FROM pets WHERE id = $1", "params": [2]});
    let swapped = call(&other, Some((&state, json!({"action": "accept", "content": {}}))));
    assert_eq!(swapped["resultType"], "input_required", "{swapped}");
    assert_eq!(pets(&db), "1:rex,2:tom");

    // Accepted: it runs, once.
    let asked = call(&delete, None);
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let ran = call(&delete, Some((&state, json!({"action": "accept", "content": {}}))));
    assert!(ran.get("isError").is_none_or(|e| e == false), "{ran}");
    let answer: Value = serde_json::from_str(inside_boundary(raw_text(&ran))).unwrap();
    assert_eq!(answer["rows_affected"], 1, "{ran}");
    assert_eq!(pets(&db), "2:tom");

    // Without the capability: refused, naming the setting.
    let meta = stateless_meta(json!({}));
    let refused = mcp.request(
        "tools/call",
        json!({"_meta": meta, "name": "query", "arguments": other}),
    )["result"]
        .clone();
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(raw_text(&refused).contains("\"confirm\": \"never\""), "{refused}");
    assert_eq!(pets(&db), "2:tom");
}

/// Over Streamable HTTP (a team's server), the question reaches the
/// person on the call's own stream: declined runs nothing, accepted runs.
#[test]
fn a_person_confirms_over_http() {
    let db = crate::support::http::db();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = crate::support::http::start(&db.url, dir.path(), &[("PGMCP_HTTP_TOKEN", "c0nfirm")]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/clients/python_sdk_confirm.py");
    let plan = json!({"steps": [
        call("DELETE FROM pets WHERE id = $1", json!([1]), "decline"),
        call("INSERT INTO pets VALUES ($1, $2)", json!([2, "tom"]), "accept"),
    ]});
    let out = std::process::Command::new(tools::python("PGMCP_TEST_PYTHON", "py", &[PYTHON_SDK]))
        .arg(script)
        .arg(plan.to_string())
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg("c0nfirm")
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    let steps = seen["steps"].as_array().unwrap_or_else(|| panic!("{seen}"));
    assert_eq!(steps[0]["isError"], true, "{}", steps[0]);
    assert!(
        shown(&steps[0]).contains("DELETE FROM pets WHERE id = $1"),
        "{}",
        steps[0]
    );
    assert_eq!(steps[1]["isError"], false, "{}", steps[1]);
    assert!(shown(&steps[1]).contains("INSERT INTO pets"), "{}", steps[1]);
    assert_eq!(pets(&db), "1:rex,2:tom");
    server.kill();
}

/// SQLite: the tables SQLite's authorizer reports (a trigger's too), and
/// the answer each time read back from the file.
#[test]
fn sqlite_writes_wait_for_the_person() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.db");
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT); INSERT INTO orders VALUES (1, 'new'), (2, 'new');
         CREATE TABLE audit (note TEXT);
         CREATE TRIGGER log AFTER UPDATE ON orders BEGIN INSERT INTO audit VALUES ('changed'); END;",
    )
    .unwrap();
    let statuses = || {
        let conn = rusqlite::Connection::open(&file).unwrap();
        conn.query_row("SELECT group_concat(status, ',') FROM orders", [], |r| {
            r.get::<_, String>(0)
        })
        .unwrap()
    };
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let ship = "UPDATE orders SET status = ? WHERE id = ?";
    let steps = confirm_session(
        json!({"steps": [
            call(ship, json!(["declined", 1]), "decline"),
            call(ship, json!(["shipped", 1]), "accept"),
            call("SELECT count(*) AS n FROM audit", json!([]), "decline"),
        ]}),
        &config,
        Some(&url),
        &[],
    );
    assert_eq!(steps[0]["isError"], true, "{}", steps[0]);
    let message = shown(&steps[0]);
    assert!(message.contains("Tables it changes: orders, audit"), "{message}");
    assert!(message.contains("Estimated rows: none, SQLite makes none"), "{message}");
    assert_eq!(steps[1]["structured"]["rows_affected"], 1, "{}", steps[1]);
    assert_eq!(steps[2]["structured"]["rows"], json!([{"n": 1}]), "{}", steps[2]);
    assert!(shown(&steps[2]).is_empty());
    assert_eq!(statuses(), "shipped,new");
}

/// DuckDB: the table its plan names for a DELETE, and its estimate.
#[cfg(feature = "duckdb")]
#[test]
fn duckdb_writes_wait_for_the_person() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.duckdb");
    crate::support::files::duckdb::make_db(&file, "CREATE TABLE events AS SELECT range AS id FROM range(100)");
    let url = format!("duckdb:{}", file.display());
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [
            {"name": "query", "arguments": {"sql": "CREATE TABLE notes (body VARCHAR)"}, "answer": "accept"},
            call("DELETE FROM events WHERE id < ?", json!([10]), "decline"),
            call("DELETE FROM events WHERE id < ?", json!([10]), "accept"),
            call("SELECT count(*) AS n FROM events", json!([]), "decline"),
        ]}),
        &config,
        Some(&url),
        &[],
    );
    assert_eq!(steps[0]["isError"], false, "{}", steps[0]);
    assert!(shown(&steps[0]).contains("CREATE TABLE notes"), "{}", steps[0]);
    assert_eq!(steps[1]["isError"], true, "{}", steps[1]);
    let message = shown(&steps[1]);
    assert!(
        message.contains("Tables it changes: ") && message.contains("events"),
        "{message}"
    );
    assert!(message.contains("Estimated rows: about "), "{message}");
    assert_eq!(steps[2]["isError"], false, "{}", steps[2]);
    assert_eq!(steps[3]["structured"]["rows"], json!([{"n": 90}]), "{}", steps[3]);
}
