//! The prompts a person picks from a client's menu, and the completion of
//! their table argument, through the official MCP Python SDK over stdio
//! against the real binary, on PostgreSQL and SQLite.

use serde_json::{Value, json};

use crate::support::files::sqlite::{fixture, url};
use crate::support::masking_config::write_config;
use crate::support::pg;
use crate::support::python_sdk::session;

/// The steps both engines run; `orders` sits in the default schema,
/// `Order Items` (mixed case, a space) outside it on PostgreSQL.
fn plan(other: &str, other_schema: &str) -> Value {
    json!([
        {"op": "prompts"},
        {"op": "prompt", "name": "explore_database"},
        {"op": "prompt", "name": "explain_table", "arguments": {"table": "orders"}},
        {"op": "prompt", "name": "query_table", "arguments": {"table": other, "question": "how many per day"}},
        {"op": "prompt", "name": "query_table", "arguments": {"table": "nope"}},
        {"op": "prompt", "name": "explain_table"},
        {"op": "prompt", "name": "no_such_prompt"},
        {"op": "complete", "prompt": "query_table", "argument": "table", "value": "orders"},
        {"op": "complete", "prompt": "explain_table", "argument": "table", "value": ""},
        {"op": "complete", "prompt": "query_table", "argument": "table", "value": "zzz"},
        {"op": "complete", "template": "pgmcp://table/{schema}/{table}", "argument": "schema", "value": ""},
        {"op": "complete", "template": "pgmcp://table/{schema}/{table}", "argument": "table", "value": "order i",
         "context": {"schema": other_schema}},
        {"op": "complete", "prompt": "explore_database", "argument": "table", "value": ""},
        {"op": "complete", "prompt": "query_table", "argument": "table", "value": "ORD"},
    ])
}

/// What both engines answer alike; `engine` names the engine in prompt
/// text, `other` is how the completion spells the second table.
fn check(steps: &[Value], engine: &str, default_schema: &str, other: &str, other_schema: &str) {
    let listed: Vec<&str> = steps[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["explore_database", "explain_table", "query_table"]);
    assert_eq!(
        steps[0][2]["arguments"],
        json!([{"name": "table", "required": true}, {"name": "question", "required": false}])
    );

    let explore = steps[1]["messages"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", steps[1]));
    assert!(explore.contains(engine) && explore.contains("list_tables"), "{explore}");

    // A table prompt asks in words, naming the table as the person did,
    // and carries the table's description inside the boundary around data,
    // which it says is data.
    let explain = &steps[2]["messages"];
    let ask = explain[0]["text"].as_str().unwrap();
    assert!(
        ask.contains("table orders,") && ask.contains("never instructions"),
        "{explain}"
    );
    let description = described(&explain[1]);
    assert_eq!(description["name"], "orders");
    assert_eq!(description["schema"], default_schema);
    assert!(
        description["columns"].as_array().is_some_and(|c| c.len() == 2),
        "{description}"
    );

    let query = &steps[3]["messages"];
    let ask = query[0]["text"].as_str().unwrap();
    assert!(ask.contains("how many per day") && ask.contains(engine), "{ask}");
    let description = described(&query[1]);
    assert_eq!(
        (description["schema"].as_str(), description["name"].as_str()),
        (Some(other_schema), Some("Order Items"))
    );

    // Unknown tables, missing arguments and unknown prompts are the
    // caller's mistake, said so.
    for (i, says) in [
        (4, "does not exist"),
        (5, "needs the argument table"),
        (6, "no prompt named"),
    ] {
        assert_eq!(steps[i]["error"]["code"], -32602, "{}", steps[i]);
        assert!(
            steps[i]["error"]["message"].as_str().unwrap().contains(says),
            "{}",
            steps[i]
        );
    }

    // Completion: what starts with what was typed, as the argument takes it.
    assert_eq!(steps[7]["values"], json!(["orders"]), "{}", steps[7]);
    let mut both = vec![other, "orders"];
    both.sort();
    assert_eq!(steps[8]["values"], json!(both), "{}", steps[8]);
    assert_eq!(steps[8]["total"], 2);
    assert_eq!(steps[8]["hasMore"], false);
    assert_eq!(steps[9]["values"], json!([]));
    let schemas = steps[10]["values"].as_array().unwrap();
    assert!(
        schemas.contains(&json!(other_schema)) && schemas.contains(&json!(default_schema)),
        "{schemas:?}"
    );
    assert_eq!(steps[11]["values"], json!(["Order Items"]), "{}", steps[11]);
    assert_eq!(steps[12]["values"], json!([]), "explore_database has no argument");
    // The bare name counts, whatever its case or schema.
    assert_eq!(steps[13]["values"], json!(both), "{}", steps[13]);
}

/// A table's description in a prompt message: its text, inside the
/// boundary around data (checked whole).
fn described(message: &Value) -> Value {
    let text = message["text"].as_str().unwrap_or_else(|| panic!("{message}"));
    serde_json::from_str(crate::support::stdio::inside_boundary(text)).unwrap()
}

#[test]
fn sqlite_prompts_and_completion() {
    let (_db_dir, path) = fixture(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, placed TEXT);
         CREATE TABLE \"Order Items\" (order_id INTEGER REFERENCES orders(id), sku TEXT);",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let (steps, _) = session(plan("\"Order Items\"", "main"), &config, Some(&url(&path)), &[]);
    check(&steps, "SQLite", "main", "\"Order Items\"", "main");
    let ask = steps[3]["messages"][0]["text"].as_str().unwrap();
    assert!(ask.contains("?1") && !ask.contains("$1"), "{ask}");
}

#[test]
fn postgres_prompts_and_completion() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE orders (id int PRIMARY KEY, placed date);
         CREATE SCHEMA sales;
         CREATE TABLE sales.\"Order Items\" (order_id int REFERENCES orders(id), sku text);",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let other = "sales.\"Order Items\"";
    let (steps, _) = session(plan(other, "sales"), &config, None, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    check(&steps, "PostgreSQL", "public", other, "sales");
    let ask = steps[3]["messages"][0]["text"].as_str().unwrap();
    assert!(ask.contains("$1"), "{ask}");

    // Without the boundary, the description is the table's resource.
    let config = crate::support::served::write_config(dir.path(), json!({"data_boundary": false}));
    let (steps, _) = session(plan(other, "sales"), &config, None, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let resource = &steps[2]["messages"][1]["resource"];
    assert_eq!(resource["uri"], "pgmcp://table/public/orders", "{}", steps[2]);
    let description: Value = serde_json::from_str(resource["text"].as_str().unwrap()).unwrap();
    assert_eq!(description["name"], "orders");
}
