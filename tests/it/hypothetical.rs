//! `explain`'s `hypothetical_indexes` on the harness's PostgreSQL with the
//! hypopg extension (Debian's `postgresql-<version>-hypopg`, which `.ci/run`
//! installs) and without it: an index the plan would use, one it would
//! not, nothing left in the session afterwards (behind PgBouncer's
//! transaction pooling too), only `CREATE INDEX` accepted and its parts
//! judged as a query's, and what to do when the extension is missing. Not
//! among the groups run again on PostgreSQL 13 and 18: the npm packages of
//! those versions carry no hypopg.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::bouncer::Bouncer;
use crate::support::pg;
use crate::support::served::serve_at;
use crate::support::stdio::{McpProcess, is_error, tool_json, tool_text};
use pgmcp::testing::postgres::params;
use pgmcp::{Config, Engine};

/// 20,000 orders over 1,000 customers, analyzed, with no index but the key.
const SHOP: &str = "
    CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL);
    INSERT INTO customers SELECT i, 'c' || i FROM generate_series(1, 1000) i;
    CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status text NOT NULL, total int NOT NULL);
    INSERT INTO orders SELECT i, 1 + i % 1000, CASE WHEN i % 50 = 0 THEN 'open' ELSE 'done' END, i % 97
      FROM generate_series(1, 20000) i;
    ANALYZE customers; ANALYZE orders;";

const BY_CUSTOMER: &str = "SELECT * FROM orders WHERE customer_id = 42";

/// A database with hypopg installed (by the harness's superuser, as an
/// administrator would).
fn with_hypopg() -> pg::TestDb {
    let db = pg::server().database();
    db.psql("CREATE EXTENSION hypopg");
    db.psql(SHOP);
    db
}

fn serve(db: &pg::TestDb, extra: Value) -> (tempfile::TempDir, McpProcess) {
    serve_at(&db.url, extra)
}

fn scanned(plan: &Value) -> String {
    plan["plan"].to_string()
}

#[test]
fn the_plan_says_which_hypothetical_index_it_would_use() {
    let db = with_hypopg();
    // One connection: the next call runs in the session this one used.
    let (_dir, mut mcp) = serve(&db, json!({"pool": {"max_conns": 1}}));
    let before = tool_json(&mcp.call_tool("explain", json!({"sql": BY_CUSTOMER})));
    assert!(scanned(&before).contains("Seq Scan"), "{before}");

    let got = mcp.call_tool(
        "explain",
        json!({"sql": BY_CUSTOMER, "hypothetical_indexes": [
            "CREATE INDEX ON orders (customer_id)",
            "CREATE INDEX ON customers (name)",
        ]}),
    );
    assert!(!is_error(&got), "{got}");
    let plan = tool_json(&got);
    let indexes = plan["hypothetical_indexes"].as_array().unwrap();
    assert_eq!(indexes.len(), 2, "{plan}");
    assert_eq!(indexes[0]["definition"], "CREATE INDEX ON orders (customer_id)");
    let name = indexes[0]["name"].as_str().unwrap();
    assert!(name.starts_with('<') && name.contains("orders_customer_id"), "{plan}");
    assert_eq!(indexes[0]["used"], json!(true), "{plan}");
    assert_eq!(indexes[1]["used"], json!(false), "{plan}");
    assert!(scanned(&plan).contains(name), "the plan scans it: {plan}");
    assert!(
        plan["total_cost"].as_f64().unwrap() < before["total_cost"].as_f64().unwrap(),
        "cheaper with the index: {plan}"
    );
    // A partial index, on the rows the statement asks for.
    let got = mcp.call_tool(
        "explain",
        json!({"sql": "SELECT * FROM orders WHERE status = 'open' AND total = 3",
               "hypothetical_indexes": ["CREATE INDEX ON orders (total) WHERE status = 'open'"]}),
    );
    assert_eq!(tool_json(&got)["hypothetical_indexes"][0]["used"], json!(true), "{got}");
    // The last call's index is one the next plan would use, if it were left.
    let got = mcp.call_tool(
        "explain",
        json!({"sql": BY_CUSTOMER, "hypothetical_indexes": ["CREATE INDEX ON orders (customer_id)"]}),
    );
    assert_eq!(tool_json(&got)["hypothetical_indexes"][0]["used"], json!(true), "{got}");
    // One whose plan fails: the epilogue still runs.
    let got = mcp.call_tool(
        "explain",
        json!({"sql": "SELECT nope FROM orders WHERE customer_id = 42",
               "hypothetical_indexes": ["CREATE INDEX ON orders (customer_id)"]}),
    );
    assert!(is_error(&got) && tool_text(&got).contains("nope"), "{got}");

    // Nothing is left in the session: the same plan as before, no index of
    // hypopg's, and none on the table.
    let after = tool_json(&mcp.call_tool("explain", json!({"sql": BY_CUSTOMER})));
    assert!(
        !scanned(&after).contains('<') && scanned(&after).contains("Seq Scan"),
        "{after}"
    );
    assert!(after.get("hypothetical_indexes").is_none(), "{after}");
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_indexes WHERE tablename IN ('orders', 'customers')"),
        "2",
        "only the primary keys: nothing was built"
    );
}

/// Only `CREATE INDEX` is accepted there, and its columns, expressions and
/// predicate are judged as a query reading them would be; nothing is left
/// on the database by any attempt, in either mode.
#[test]
fn only_create_index_and_parts_a_query_may_read() {
    let db = with_hypopg();
    db.psql(
        "CREATE TABLE counter (n int NOT NULL); INSERT INTO counter VALUES (0);
         CREATE FUNCTION bump() RETURNS int LANGUAGE plpgsql IMMUTABLE AS
           'BEGIN UPDATE counter SET n = n + 1; RETURN 1; END';
         CREATE SEQUENCE s;",
    );
    let state = || {
        db.psql(
            "SELECT (SELECT count(*) FROM orders) || '/' || (SELECT n FROM counter) || '/' || \
             (SELECT count(*) FROM pg_class WHERE relname = 'orders') || '/' || \
             (SELECT count(*) FROM pg_indexes WHERE tablename = 'orders') || '/' || (SELECT last_value FROM s)",
        )
    };
    let before = state();
    assert_eq!(before, "20000/0/1/1/1");
    // (definitions, what the refusal says)
    let refused: &[(Value, &str)] = &[
        (json!(["DROP TABLE orders"]), "CREATE INDEX statements only"),
        (json!(["SELECT 1"]), "CREATE INDEX statements only"),
        (
            json!(["DELETE FROM orders WHERE id > 0"]),
            "CREATE INDEX statements only",
        ),
        (
            json!(["CREATE INDEX ON orders (id); DROP TABLE orders"]),
            "multi-statement",
        ),
        (
            json!(["CREATE INDEX ON orders (id)", "TRUNCATE orders"]),
            "CREATE INDEX statements only",
        ),
        (
            json!(["CREATE TABLE x AS SELECT * FROM orders"]),
            "CREATE INDEX statements only",
        ),
        // What the planner would fold in a predicate: blocked functions,
        // and a function that writes, whatever volatility it claims.
        (
            json!(["CREATE INDEX ON orders (id) WHERE pg_terminate_backend(1)"]),
            "pg_terminate_backend",
        ),
        (json!(["CREATE INDEX ON orders (id) WHERE id > bump()"]), "bump"),
        (json!(["CREATE INDEX ON orders ((bump()))"]), "bump"),
        (
            json!(["CREATE INDEX ON orders (id) WHERE id > nextval('s')"]),
            "nextval",
        ),
        (json!(["CREATE INDEX ON orders (id) WHERE id > $1"]), "placeholder"),
    ];
    for read_only in [true, false] {
        let (_dir, mut mcp) = serve(&db, json!({"server": {"read_only": read_only}}));
        // A definition's own error is the call's, said as the server said
        // it: never "the database changed, send it again".
        for (definition, says) in [
            ("CREATE INDEX ON orders (id) WHERE total > 1/0", "division by zero"),
            (
                "CREATE INDEX ON orders (id) WHERE total > '99999999999'::int",
                "out of range",
            ),
            ("CREATE INDEX ON nosuch (id)", "does not exist"),
        ] {
            let got = mcp.call_tool(
                "explain",
                json!({"sql": "SELECT * FROM orders WHERE id = 7", "hypothetical_indexes": [definition]}),
            );
            let text = tool_text(&got);
            assert!(
                is_error(&got) && text.contains(says) && !text.contains("again"),
                "{definition}: {got}"
            );
        }
        for (definitions, says) in refused {
            let got = mcp.call_tool(
                "explain",
                json!({"sql": "SELECT * FROM orders WHERE id = 7", "hypothetical_indexes": definitions}),
            );
            assert_eq!(
                state(),
                before,
                "read_only={read_only}: {definitions} left something: {got}"
            );
            assert!(
                is_error(&got) && tool_text(&got).contains(says),
                "read_only={read_only}: {definitions}: {got}"
            );
        }
        // Quotes and backslashes in a definition are the definition's: it
        // reaches hypopg as a parameter, whole.
        for definition in [
            "CREATE INDEX ON orders (id) WHERE status = 'x'') ; DROP TABLE orders; --'",
            "CREATE INDEX ON orders (id) WHERE status = E'\\'), pg_sleep(9) --'",
            "CREATE INDEX ON orders (id) WHERE status = E'\\\\'",
        ] {
            let got = mcp.call_tool(
                "explain",
                json!({"sql": "SELECT * FROM orders WHERE id = 7", "hypothetical_indexes": [definition]}),
            );
            assert!(!is_error(&got), "{definition}: {got}");
            let made = &tool_json(&got)["hypothetical_indexes"][0];
            assert!(
                made["name"].as_str().unwrap().contains("btree_orders_id"),
                "{definition}: {got}"
            );
            assert_eq!(state(), before, "{definition}");
        }
        // Hypothetical indexes live only in plain plans.
        let got = mcp.call_tool(
            "explain",
            json!({"sql": BY_CUSTOMER, "analyze": true,
                   "hypothetical_indexes": ["CREATE INDEX ON orders (customer_id)"]}),
        );
        assert!(is_error(&got) && tool_text(&got).contains("Leave analyze off"), "{got}");
    }
}

/// Without the extension, the answer says so and how to install it.
#[test]
fn without_hypopg_the_answer_says_how_to_install_it() {
    let db = pg::server().database();
    db.psql(SHOP);
    let (_dir, mut mcp) = serve(&db, json!({}));
    let got = mcp.call_tool(
        "explain",
        json!({"sql": BY_CUSTOMER, "hypothetical_indexes": ["CREATE INDEX ON orders (customer_id)"]}),
    );
    let text = tool_text(&got);
    assert!(is_error(&got), "{got}");
    for says in ["hypopg", "CREATE EXTENSION hypopg", "without hypothetical_indexes"] {
        assert!(text.contains(says), "{says:?} in {text}");
    }
    // The plan alone still answers.
    let got = mcp.call_tool("explain", json!({"sql": BY_CUSTOMER}));
    assert!(!is_error(&got), "{got}");
}

/// hypopg's indexes live in the session, which behind a transaction pooler
/// is the next client's once the call is done: they are dropped in the
/// same message as the rollback, and the next plan on that server
/// connection has none.
#[tokio::test(flavor = "multi_thread")]
async fn hypothetical_indexes_do_not_outlive_their_call_behind_a_pooler() {
    let server = pg::server();
    let db = server.database();
    db.psql(
        "CREATE EXTENSION hypopg;
         CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL);
         INSERT INTO orders SELECT g, g % 500 FROM generate_series(1, 20000) g; ANALYZE orders;",
    );
    // One server connection: every client's transaction runs on it.
    let bouncer = Bouncer::with_pool_size(server, "transaction", 1);
    let mut config = Config::builtin();
    config.pool.max_conns = 1;
    let params = params::resolve(Some(&bouncer.url(&db)), &config.connection, &|_| None).expect("the URL resolves");
    let engine = Engine::postgres(config, params);
    let explain = |hypothetical: &[&str]| pgmcp::ExplainInput {
        sql: "SELECT * FROM orders WHERE customer_id = 7".into(),
        params: Vec::new(),
        analyze: false,
        hypothetical_indexes: hypothetical.iter().map(|d| d.to_string()).collect(),
    };
    let answer = engine
        .explain(
            &explain(&["CREATE INDEX ON orders (customer_id)"]),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(answer.hypothetical_indexes[0].used, "{answer:?}");
    let answer = engine.explain(&explain(&[]), CancellationToken::new()).await.unwrap();
    let plan = answer.plan.unwrap().to_string();
    assert!(plan.contains("Seq Scan") && !plan.contains('<'), "{plan}");
    assert!(bouncer.log().contains(&format!("login attempt: db={}", db.name)));
    engine.close().await;
}

/// hypopg installed in a schema only `connection.role` may use, reached by
/// a login that does not inherit it: the indexes are made and dropped as
/// the role, the plan answers, and the next plan on the same session has
/// none of them.
#[test]
fn indexes_are_dropped_as_the_role_that_made_them() {
    let db = pg::server().database();
    let server = pg::server();
    let login = format!("{}_hl", db.name);
    let role = format!("{}_hr", db.name);
    db.psql(&format!(
        "CREATE SCHEMA hypo; CREATE EXTENSION hypopg SCHEMA hypo; {SHOP}
         CREATE ROLE {login} LOGIN NOINHERIT PASSWORD 'pw'; CREATE ROLE {role} NOLOGIN;
         GRANT {role} TO {login}; GRANT CONNECT ON DATABASE {db} TO {login};
         GRANT USAGE ON SCHEMA hypo TO {role}; GRANT SELECT ON orders, customers TO {role};",
        db = db.name
    ));
    let url = format!("postgres://{login}:pw@{}:{}/{}", server.host(), server.port(), db.name);
    let (_dir, mut mcp) = serve_at(&url, json!({"connection": {"role": role}, "pool": {"max_conns": 1}}));
    let got = mcp.call_tool(
        "explain",
        json!({"sql": BY_CUSTOMER, "hypothetical_indexes": ["CREATE INDEX ON orders (customer_id)"]}),
    );
    assert!(!is_error(&got), "{got}");
    assert_eq!(tool_json(&got)["hypothetical_indexes"][0]["used"], json!(true), "{got}");
    let after = tool_json(&mcp.call_tool("explain", json!({"sql": BY_CUSTOMER})));
    assert!(
        !scanned(&after).contains('<') && scanned(&after).contains("Seq Scan"),
        "{after}"
    );
}
