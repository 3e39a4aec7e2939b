//! `list_tables` and `describe_table` against the real PostgreSQL: the
//! reference catalog cases pgmcp was designed against, plus comments, size hints, filters, caps, name forms, and the
//! "did you mean" suggestions on failed queries.

use std::sync::Arc;
use std::time::Duration;

use pgmcp::{Engine, Error, QueryInput, TableDescription, TableFilter};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::engine::{engine_for, err_text};
use crate::support::pg;

async fn describe(engine: &Engine, table: &str, schema: Option<&str>) -> Result<TableDescription, Error> {
    engine.describe_table(table, schema, CancellationToken::new()).await
}

async fn list(engine: &Engine, schema: Option<&str>, pattern: Option<&str>) -> Vec<String> {
    let filter = TableFilter {
        schema: schema.map(Into::into),
        pattern: pattern.map(Into::into),
        ..Default::default()
    };
    let list = engine.list_tables(&filter, CancellationToken::new()).await.unwrap();
    list.tables.iter().map(|t| format!("{}.{}", t.schema, t.name)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn list_tables_kinds_comments_sizes_and_filters() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE users (id int PRIMARY KEY, email text);
         COMMENT ON TABLE users IS 'People who can log in';
         INSERT INTO users SELECT g, 'u' || g FROM generate_series(1, 1000) g; ANALYZE users;
         CREATE TABLE orders (id int); CREATE TABLE order_items (id int);
         CREATE VIEW active_users AS SELECT * FROM users;
         CREATE MATERIALIZED VIEW user_count AS SELECT count(*) FROM users;
         CREATE TABLE events (id int, at date) PARTITION BY RANGE (at);
         CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE SCHEMA sales; CREATE TABLE sales.orders (id int);
         CREATE EXTENSION IF NOT EXISTS file_fdw; CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
         CREATE FOREIGN TABLE ext_log (line text) SERVER files OPTIONS (filename '/dev/null');",
    );
    let engine = engine_for(&db, |_| {});
    let all = engine
        .list_tables(&TableFilter::default(), CancellationToken::new())
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = all
        .tables
        .iter()
        .map(|t| (format!("{}.{}", t.schema, t.name), t.kind.clone()))
        .collect();
    let expect = |n: &str, k: &str| (n.to_owned(), k.to_owned());
    assert_eq!(
        kinds,
        vec![
            expect("public.active_users", "view"),
            expect("public.events", "partitioned_table"),
            expect("public.events_2024", "table"),
            expect("public.ext_log", "foreign_table"),
            expect("public.order_items", "table"),
            expect("public.orders", "table"),
            expect("public.user_count", "materialized_view"),
            expect("public.users", "table"),
            expect("sales.orders", "table"),
        ]
    );
    assert!(!all.truncated);
    let users = all.tables.iter().find(|t| t.name == "users").unwrap();
    assert_eq!(users.comment.as_deref(), Some("People who can log in"));
    assert_eq!(users.estimated_rows, Some(1000));
    assert!(users.size_bytes.unwrap() > 8192, "{:?}", users.size_bytes);
    assert!(!users.schema_access_limited);
    // PostgreSQL has owners: the role that created it (SQLite and DuckDB
    // leave the field out).
    assert_eq!(users.owner.as_deref(), Some(pg::server().admin_user()));
    let view = all.tables.iter().find(|t| t.name == "active_users").unwrap();
    assert_eq!(
        (view.estimated_rows, view.size_bytes),
        (None, None),
        "views have no size"
    );
    assert!(
        all.tables
            .iter()
            .find(|t| t.name == "events_2024")
            .unwrap()
            .is_partition
    );

    assert_eq!(list(&engine, Some("sales"), None).await, ["sales.orders"]);
    assert_eq!(
        list(&engine, None, Some("order")).await,
        ["public.order_items", "public.orders", "sales.orders"]
    );
    assert_eq!(
        list(&engine, None, Some("ORDER%")).await,
        ["public.order_items", "public.orders", "sales.orders"]
    );
    assert_eq!(
        list(&engine, Some("public"), Some("%s")).await,
        [
            "public.active_users",
            "public.events",
            "public.order_items",
            "public.orders",
            "public.users"
        ]
    );
    assert!(list(&engine, Some("nope"), None).await.is_empty());
    // A pattern is a value, never SQL.
    assert!(list(&engine, None, Some("'; DROP TABLE users; --")).await.is_empty());
    assert_eq!(db.psql("SELECT count(*) FROM users"), "1000");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_tables_on_an_empty_database_and_access_limits() {
    let db = pg::server().database();
    let engine = engine_for(&db, |_| {});
    assert!(
        engine
            .list_tables(&TableFilter::default(), CancellationToken::new())
            .await
            .unwrap()
            .tables
            .is_empty()
    );

    // A role that may SELECT from a table but lacks USAGE on its schema.
    let role = format!("{}_limited", db.name);
    db.psql(&format!(
        "CREATE SCHEMA locked; CREATE TABLE locked.secrets (x int); CREATE TABLE open_t (x int);
         CREATE ROLE {role} LOGIN PASSWORD 'pw'; GRANT SELECT ON locked.secrets, open_t TO {role};
         REVOKE ALL ON SCHEMA locked FROM PUBLIC;"
    ));
    let url = db.url.replacen(
        &format!("{}:{}", pg::server().admin_user(), pg::server().admin_password()),
        &format!("{role}:pw"),
        1,
    );
    let params = pgmcp::testing::postgres::params::resolve(Some(&url), &Default::default(), &|_| None).unwrap();
    let limited = Engine::postgres(pgmcp::Config::builtin(), params);
    let tables = limited
        .list_tables(&TableFilter::default(), CancellationToken::new())
        .await
        .unwrap()
        .tables;
    let flags: Vec<(String, bool)> = tables
        .iter()
        .map(|t| (format!("{}.{}", t.schema, t.name), t.schema_access_limited))
        .collect();
    assert_eq!(
        flags,
        vec![("locked.secrets".to_owned(), true), ("public.open_t".to_owned(), false)]
    );
}

/// 5,000 tables do not flood the context: the list is capped and says so.
#[tokio::test(flavor = "multi_thread")]
async fn five_thousand_tables_are_capped() {
    let db = pg::server().database();
    db.psql("DO $$ BEGIN FOR i IN 1..5000 LOOP EXECUTE format('CREATE TABLE t_%s (x int)', i); END LOOP; END $$");
    let engine = engine_for(&db, |c| c.query.max_rows = 200);
    let list = engine
        .list_tables(&TableFilter::default(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(list.tables.len(), 200);
    assert!(list.truncated);
    assert!(list.hint.unwrap().contains("Pass schema, or a pattern"));
    let narrowed = engine
        .list_tables(
            &TableFilter {
                pattern: Some("t\\_499_".into()),
                ..Default::default()
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(narrowed.tables.len(), 10);
    assert!(!narrowed.truncated);
}

#[tokio::test(flavor = "multi_thread")]
async fn describe_table_shows_what_an_agent_plans_from() {
    let db = pg::server().database();
    db.psql(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
         CREATE TABLE users (
             id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
             serial_no serial,
             email varchar(255) NOT NULL UNIQUE,
             age int CHECK (age >= 0),
             feeling mood DEFAULT 'ok',
             email_domain text GENERATED ALWAYS AS (split_part(email, '@', 2)) STORED,
             created timestamptz DEFAULT now());
         COMMENT ON TABLE users IS 'People'; COMMENT ON COLUMN users.email IS 'Login address, unique';
         CREATE INDEX users_age ON users (age) WHERE age > 17;
         CREATE TABLE orders (id int PRIMARY KEY, user_id bigint REFERENCES users(id) ON UPDATE CASCADE ON DELETE SET NULL);",
    );
    let engine = engine_for(&db, |_| {});
    let users = describe(&engine, "users", None).await.unwrap();
    assert_eq!(
        (users.schema.as_str(), users.kind.as_str(), users.comment.as_deref()),
        ("public", "table", Some("People"))
    );
    let cols = serde_json::to_value(&users.columns).unwrap();
    assert_eq!(
        cols[0],
        json!({"name": "id", "type": "bigint", "nullable": false, "is_primary_key": true, "identity": "ALWAYS", "sequence": "public.users_id_seq"})
    );
    assert_eq!(cols[1]["default"], json!("nextval('users_serial_no_seq'::regclass)"));
    assert_eq!(cols[1]["sequence"], json!("public.users_serial_no_seq"));
    assert_eq!(
        cols[2],
        json!({"name": "email", "type": "character varying(255)", "nullable": false, "is_primary_key": false, "comment": "Login address, unique"})
    );
    assert_eq!(cols[4]["type"], json!("mood"));
    assert_eq!(cols[4]["enum_values"], json!(["sad", "ok", "happy"]));
    assert_eq!(cols[4]["default"], json!("'ok'::mood"));
    assert_eq!(cols[5]["generated"], json!("split_part((email)::text, '@'::text, 2)"));
    assert!(
        cols[5].get("default").is_none(),
        "a generated column has no default: {}",
        cols[5]
    );
    let check = users.constraints.iter().find(|c| c.kind == "CHECK").unwrap();
    assert_eq!(check.definition, "CHECK (age >= 0)");
    let partial = users.indexes.iter().find(|i| i.name == "users_age").unwrap();
    assert_eq!(
        partial.definition,
        "CREATE INDEX users_age ON public.users USING btree (age) WHERE (age > 17)"
    );

    let orders = describe(&engine, "orders", Some("public")).await.unwrap();
    let fk = &orders.foreign_keys[0];
    assert_eq!((fk.on_update.as_str(), fk.on_delete.as_str()), ("CASCADE", "SET NULL"));
}

#[tokio::test(flavor = "multi_thread")]
async fn describe_views_matviews_and_partitions() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE users (id int, active boolean);
         CREATE VIEW active AS SELECT id FROM users WHERE active;
         CREATE MATERIALIZED VIEW counts AS SELECT count(*) AS n FROM users; CREATE INDEX counts_n ON counts (n);
         CREATE TABLE events (id int, at date, region text) PARTITION BY RANGE (at);
         CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
         CREATE TABLE by_region (id int, region text) PARTITION BY LIST (region);
         CREATE TABLE by_hash (id int) PARTITION BY HASH (id);
         CREATE EXTENSION IF NOT EXISTS file_fdw; CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
         CREATE FOREIGN TABLE ext_log (line text) SERVER files OPTIONS (filename '/dev/null');",
    );
    let engine = engine_for(&db, |_| {});
    let foreign = describe(&engine, "ext_log", None).await.unwrap();
    assert_eq!(
        (
            foreign.kind.as_str(),
            foreign.columns.len(),
            foreign.columns[0].name.as_str()
        ),
        ("foreign_table", 1, "line")
    );

    let view = describe(&engine, "active", None).await.unwrap();
    assert_eq!(view.kind, "view");
    // PostgreSQL's own text of it: before 18 it qualifies the column.
    let definition = view.definition.as_deref().unwrap();
    assert!(
        definition.contains("FROM users") && definition.contains("active"),
        "{definition}"
    );
    assert!(view.indexes.is_empty() && view.constraints.is_empty() && view.foreign_keys.is_empty());

    let mv = describe(&engine, "counts", None).await.unwrap();
    assert_eq!(
        (
            mv.kind.as_str(),
            mv.columns[0].name.as_str(),
            mv.columns[0].type_name.as_str()
        ),
        ("materialized_view", "n", "bigint")
    );
    assert_eq!(mv.indexes[0].name, "counts_n");
    assert!(mv.definition.unwrap().contains("count(*)"));

    let events = describe(&engine, "events", None).await.unwrap();
    assert_eq!(events.kind, "partitioned_table");
    assert_eq!(
        serde_json::to_value(&events.partition).unwrap(),
        json!({"strategy": "range", "partition_key": "RANGE (at)", "partitions": ["public.events_2024", "public.events_2025"]})
    );
    let child = describe(&engine, "events_2024", None).await.unwrap();
    assert_eq!(child.kind, "table");
    assert_eq!(
        serde_json::to_value(&child.partition).unwrap(),
        json!({"parent_table": "public.events", "bound": "FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')"})
    );
    assert_eq!(
        describe(&engine, "by_region", None)
            .await
            .unwrap()
            .partition
            .unwrap()
            .strategy
            .as_deref(),
        Some("list")
    );
    assert_eq!(
        describe(&engine, "by_hash", None)
            .await
            .unwrap()
            .partition
            .unwrap()
            .strategy
            .as_deref(),
        Some("hash")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn describe_table_name_forms_and_helpful_errors() {
    let db = pg::server().database();
    db.psql(
        r#"CREATE SCHEMA sales; CREATE TABLE sales.deals (id int);
           CREATE SCHEMA "Odd Schema"; CREATE TABLE "Odd Schema"."Mixed Case" (id int);
           CREATE TABLE public.accounts (id int); CREATE SCHEMA archive; CREATE TABLE archive.accounts (id int, old boolean);
           CREATE SCHEMA a; CREATE SCHEMA b; CREATE TABLE a.shared (x int); CREATE TABLE b.shared (y int);"#,
    );
    let engine = engine_for(&db, |_| {});
    // Qualified in `table`, or with `schema`, or found in its only schema.
    for (table, schema) in [
        ("sales.deals", None),
        ("deals", Some("sales")),
        ("deals", None),
        ("SALES.DEALS", None),
    ] {
        let d = describe(&engine, table, schema)
            .await
            .unwrap_or_else(|e| panic!("{table} {schema:?}: {e}"));
        assert_eq!(
            (d.schema.as_str(), d.name.as_str()),
            ("sales", "deals"),
            "{table} {schema:?}"
        );
    }
    let odd = describe(&engine, r#""Odd Schema"."Mixed Case""#, None).await.unwrap();
    assert_eq!((odd.schema.as_str(), odd.name.as_str()), ("Odd Schema", "Mixed Case"));
    let odd = describe(&engine, r#""Mixed Case""#, Some(r#""Odd Schema""#))
        .await
        .unwrap();
    assert_eq!(odd.name, "Mixed Case");
    // public wins when the name is in public and elsewhere.
    assert_eq!(describe(&engine, "accounts", None).await.unwrap().columns.len(), 1);
    assert_eq!(
        describe(&engine, "accounts", Some("archive"))
            .await
            .unwrap()
            .columns
            .len(),
        2
    );

    assert_eq!(
        err_text(describe(&engine, "shared", None).await),
        "table \"shared\" exists in several schemas: a, b. Pass schema to say which."
    );
    assert_eq!(
        err_text(describe(&engine, "deals", Some("public")).await),
        "table \"public\".\"deals\" does not exist; a table named \"deals\" exists in schema sales. Pass that schema."
    );
    assert_eq!(
        err_text(describe(&engine, "deal", None).await),
        "table \"deal\" does not exist, or the role cannot read it. Did you mean: sales.deals?"
    );
    assert_eq!(
        err_text(describe(&engine, "zzzqqq", None).await),
        "table \"zzzqqq\" does not exist, or the role cannot read it. Call list_tables to see what exists."
    );
    assert!(err_text(describe(&engine, "a.b.c", None).await).contains("is not a table name"));
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_queries_point_to_close_names() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE users (id int, email text, created_at timestamptz);
         CREATE SCHEMA auth; CREATE TABLE auth.user_accounts (id int);
         CREATE TABLE invoices (id int);",
    );
    let engine = engine_for(&db, |_| {});
    let run = |sql: &'static str| {
        let engine = &engine;
        async move {
            err_text(
                engine
                    .query(
                        &QueryInput {
                            database: None,
                            sql: sql.into(),
                            params: vec![],
                            limit: None,
                        },
                        CancellationToken::new(),
                    )
                    .await,
            )
        }
    };
    assert_eq!(
        run("SELECT * FROM usr").await,
        "relation \"usr\" does not exist (SQLSTATE 42P01)\nDid you mean: public.users?\nat character 15 of the query"
    );
    assert_eq!(
        run("SELECT * FROM \"user\"").await,
        "relation \"user\" does not exist (SQLSTATE 42P01)\nDid you mean: public.users, auth.user_accounts?\nat character 15 of the query"
    );
    assert_eq!(
        run("SELECT emial FROM users").await,
        "column \"emial\" does not exist (SQLSTATE 42703)\nDid you mean: users.email?\nHINT: Perhaps you meant to reference the column \"users.email\".\nat character 8 of the query"
    );
    let hinted = run("SELECT u.create_at FROM users u").await;
    assert!(
        hinted.starts_with("column u.create_at does not exist (SQLSTATE 42703)\nDid you mean: users.created_at?"),
        "{hinted}"
    );
    // PostgreSQL's own HINT is kept beside ours.
    assert!(
        hinted.contains("HINT: Perhaps you meant to reference the column \"u.created_at\"."),
        "{hinted}"
    );
    assert_eq!(
        run("SELECT * FROM zzzqqq").await,
        "relation \"zzzqqq\" does not exist (SQLSTATE 42P01)\nat character 15 of the query",
        "nothing close: no suggestion"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn catalog_calls_have_their_own_timeouts_and_share_the_slots() {
    let db = pg::server().database();
    db.psql("CREATE TABLE t (x int)");
    let engine = Arc::new(engine_for(&db, |c| {
        c.pool.max_conns = 1;
        c.query.list_tables_timeout = Duration::from_secs(1);
        c.query.describe_table_timeout = Duration::from_secs(1);
    }));
    // Hold the only slot with a slow query: both catalog calls wait, then give up.
    let busy = engine.clone();
    let holder = tokio::spawn(async move {
        busy.query(
            &QueryInput {
                database: None,
                sql: "SELECT pg_sleep(2.5)".into(),
                params: vec![],
                limit: None,
            },
            CancellationToken::new(),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let text = err_text(
        engine
            .list_tables(&TableFilter::default(), CancellationToken::new())
            .await,
    );
    assert!(
        text.starts_with("failed to acquire query slot: all 1 connection slots are in use"),
        "{text}"
    );
    let text = err_text(describe(&engine, "t", None).await);
    assert!(text.starts_with("failed to acquire query slot"), "{text}");
    holder.await.unwrap().unwrap();
    // Free again: both work.
    assert_eq!(describe(&engine, "t", None).await.unwrap().columns.len(), 1);

    // A catalog that cannot be read in time: the timeout stops it.
    let locker = std::process::Command::new("psql")
        .args([
            "-X",
            "-q",
            "-d",
            &db.url,
            "-c",
            "BEGIN; LOCK TABLE pg_catalog.pg_class IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT;",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    let text = err_text(
        engine
            .list_tables(&TableFilter::default(), CancellationToken::new())
            .await,
    );
    let mut locker = locker;
    let _ = locker.wait();
    assert!(text.starts_with("query timed out after 1s"), "{text}");
}
