//! Curated tools and several databases, end to end: the real binary over
//! stdio, on the harness's PostgreSQL and real SQLite files, every call's
//! effect read back through psql or rusqlite.

use serde_json::{Value, json};

use crate::support::curated::{bare_url, check, param, tool};
use crate::support::files::sqlite::{make_db, scalar, url as sqlite_url};
use crate::support::pg;
use crate::support::pgmcp;
// Writes run as the guard allows, with no one asked: the person's word
// before a write has its own tests (confirm.rs, confirm_attacks.rs).
use crate::support::served::write_unconfirmed_config;
use crate::support::stdio::{McpProcess, is_error, tool_json, tool_names, tool_text};

/// A table with a column of each parameter type.
const ITEMS: &str = "
    CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric NOT NULL, active boolean NOT NULL,
                        added date NOT NULL, seen timestamptz NOT NULL);
    INSERT INTO items VALUES
        (1, 'apple', 1.50, true, '2024-01-10', '2024-01-10 09:00:00+00'),
        (2, 'pear', 2.25, false, '2024-02-01', '2024-02-01 12:30:00+00'),
        (3, 'plum', 0.75, true, '2024-03-15', '2024-03-15 18:45:00+00');";

fn serve(config: &str, envs: &[(&str, &str)]) -> McpProcess {
    let mut mcp = McpProcess::spawn(&["serve", "--config", config], envs);
    mcp.initialize();
    mcp
}

/// Every parameter type bound to PostgreSQL, the answers as PostgreSQL
/// computed them; the tool listed with its schema and annotations.
#[test]
fn every_parameter_type_on_postgres() {
    let db = pg::server().database();
    db.psql(ITEMS);
    let dir = tempfile::tempdir().unwrap();
    let statement = "SELECT id, name FROM items WHERE id = ANY($7::int[]) AND price >= $2 AND name <> $3 \
                     AND active = $4 AND added >= $5 AND seen < $6::timestamptz AND id >= $1 ORDER BY id";
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "tools": [
                tool("find_items", statement, json!([
                    param("min_id", "integer"), param("min_price", "number"), param("not_named", "string"),
                    param("active", "boolean"), param("added_since", "date"), param("seen_before", "timestamp"),
                    {"name": "ids", "type": "array", "items": "integer", "description": "ids"}
                ])),
                tool("by_name", "SELECT count(*) AS n FROM items WHERE name = $1", json!([param("name", "string")])),
            ]
        }),
    );
    let mut mcp = serve(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(
        tool_names(&list["result"]),
        [
            "by_name",
            "describe_table",
            "diagnose",
            "explain",
            "find_items",
            "list_tables",
            "query"
        ]
    );
    let find = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "find_items")
        .unwrap();
    assert_eq!(
        find["inputSchema"]["properties"]["added_since"],
        json!({"type": "string", "format": "date", "description": "the added_since"})
    );
    assert_eq!(find["inputSchema"]["required"].as_array().unwrap().len(), 7);
    assert_eq!(find["annotations"]["readOnlyHint"], json!(true));
    assert!(
        find["outputSchema"]["properties"]["rows"].is_object(),
        "the query tool's output schema: {find}"
    );

    let args = json!({"min_id": 1, "min_price": 1.0, "not_named": "pear", "active": true,
                      "added_since": "2024-01-01", "seen_before": "2024-03-15T18:00:00Z", "ids": [1, 2, 3]});
    let got = mcp.call_tool("find_items", args.clone());
    assert!(!is_error(&got), "{got}");
    assert_eq!(tool_json(&got)["rows"], json!([{"id": 1, "name": "apple"}]));
    assert_eq!(got["structuredContent"]["rows"], json!([{"id": 1, "name": "apple"}]));
    let mut later = args.clone();
    later["seen_before"] = json!("2024-03-16 00:00");
    later["min_price"] = json!(0.5);
    let got = mcp.call_tool("find_items", later);
    assert_eq!(
        tool_json(&got)["rows"],
        json!([{"id": 1, "name": "apple"}, {"id": 3, "name": "plum"}])
    );

    // Missing, unknown and wrong-typed arguments: refused before any SQL,
    // naming the argument.
    let mut wrong = args.clone();
    wrong["added_since"] = json!("2024-02-30");
    let mut missing = args.clone();
    missing.as_object_mut().unwrap().remove("ids");
    let mut unknown = args.clone();
    unknown["sql"] = json!("DROP TABLE items");
    let mut stringly = args.clone();
    stringly["min_id"] = json!("1");
    for (given, says) in [
        (
            wrong,
            "find_items: argument added_since: expected a date written YYYY-MM-DD",
        ),
        (missing, "find_items: argument ids is required: expected an array"),
        (unknown, "find_items: unknown argument \"sql\""),
        (stringly, "find_items: argument min_id: expected a whole number"),
    ] {
        let got = mcp.call_tool("find_items", given);
        assert!(is_error(&got) && tool_text(&got).starts_with(says), "{got}");
    }

    // A value is bound, never written into the SQL: quotes, a second
    // statement and a comment are only a name no item has.
    for attack in [
        "x'; DROP TABLE items; --",
        "pear' OR '1'='1",
        "$1",
        "'); DELETE FROM items; --",
    ] {
        let got = mcp.call_tool("by_name", json!({"name": attack}));
        assert_eq!(tool_json(&got)["rows"], json!([{"n": 0}]), "{attack}: {got}");
    }
    let got = mcp.call_tool("by_name", json!({"name": "pear"}));
    assert_eq!(tool_json(&got)["rows"], json!([{"n": 1}]));
    assert_eq!(db.psql("SELECT count(*) FROM items"), "3", "the table is whole");
}

/// A statement the guard refuses, or one that writes on a read-only
/// database, makes the config unusable, naming the tool and the field;
/// `check` and `serve` both say so.
#[test]
fn the_guard_judges_each_statement_when_the_config_loads() {
    let db = pg::server().database();
    db.psql(ITEMS);
    let cases = [
        (
            json!({"tools": [tool("wipe", "DELETE FROM items", json!([]))]}),
            "tools[0].statement",
            "tool wipe: the guard refuses it",
        ),
        (
            json!({"tools": [tool("grow", "UPDATE items SET price = price * $1 WHERE id = $2", json!([param("f", "number"), param("id", "integer")]))]}),
            "tools[0].statement",
            "read-only mode",
        ),
        (
            json!({"tools": [json!({"name": "w", "description": "d", "statement": "SELECT 1", "read_only": false})]}),
            "tools[0].read_only",
            "tool w: it is marked as writing, but the database is read-only",
        ),
        (
            json!({"tools": [tool("files", "SELECT pg_read_file($1)", json!([param("p", "string")]))]}),
            "tools[0].statement",
            "pg_read_file",
        ),
        (
            json!({"tools": [tool("two", "SELECT $1::int + $2::int", json!([param("a", "integer")]))]}),
            "tools[0].statement",
            "tool two: the statement uses $1..$2 but the tool lists 1 parameter",
        ),
        (
            json!({"server": {"read_only": false},
                   "tools": [json!({"name": "ro", "description": "d", "read_only": true,
                                    "statement": "INSERT INTO items VALUES (9, 'x', 1, true, '2024-01-01', now())"})]}),
            "tools[0].statement",
            "(the tool is marked read_only)",
        ),
    ];
    for (extra, field, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let config = write_unconfirmed_config(dir.path(), extra.clone());
        let (code, text) = check(&config, &[("PGMCP_PG_CONNSTRING", &db.url)]);
        assert_ne!(code, 0, "{extra}: {text}");
        assert!(text.contains(field) && text.contains(says), "{extra}: {text}");
        // A client that starts it gets the same words from every call.
        let mut mcp = McpProcess::spawn(&["serve", "--config", &config], &[("PGMCP_PG_CONNSTRING", &db.url)]);
        mcp.initialize_unstarted();
        let list = mcp.request("tools/list", json!({}));
        let any = list["result"]["tools"][0]["name"].as_str().unwrap().to_owned();
        let got = mcp.call_tool(&any, json!({}));
        assert!(is_error(&got) && tool_text(&got).contains(says), "{extra}: {got}");
    }
    assert_eq!(db.psql("SELECT count(*) FROM items"), "3");
}

/// With the built-ins off, `tools/list` is the curated tools alone, and a
/// built-in's name is no tool at all.
#[test]
fn only_curated_tools_when_the_built_ins_are_off() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.db");
    make_db(
        &file,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "tools_enabled": {"query": false, "list_tables": false, "describe_table": false},
            "tools": [tool("names", "SELECT name FROM t WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
                           json!([{"name": "ids", "type": "array", "items": "integer", "description": "ids"}]))],
        }),
    );
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &sqlite_url(&file)], &[]);
    mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(tool_names(&list["result"]), ["names"]);
    let got = mcp.call_tool("names", json!({"ids": [2, 1]}));
    assert_eq!(tool_json(&got)["rows"], json!([{"name": "a"}, {"name": "b"}]));
    let refused = mcp.request("tools/call", json!({"name": "query", "arguments": {"sql": "SELECT 1"}}));
    assert_eq!(refused["error"]["code"], json!(-32602), "no such tool: {refused}");
    // Resources and prompts are the catalog's answers too: none, so the
    // schema shows nowhere.
    let resources = mcp.request("resources/list", json!({}));
    assert_eq!(resources["result"]["resources"], json!([]), "{resources}");
    let templates = mcp.request("resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"], json!([]), "{templates}");
    let read = mcp.request("resources/read", json!({"uri": "pgmcp://table/main/t"}));
    assert_eq!(read["error"]["code"], json!(-32002), "{read}");
    let prompts = mcp.request("prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"], json!([]), "{prompts}");
    let prompt = mcp.request(
        "prompts/get",
        json!({"name": "explain_table", "arguments": {"table": "t"}}),
    );
    assert!(
        prompt["error"].is_object() && !prompt.to_string().contains("\"name\""),
        "{prompt}"
    );
    // Only listed built-ins are switched off.
    let partial = write_unconfirmed_config(dir.path(), json!({"tools_enabled": {"query": false}}));
    let mut mcp = McpProcess::spawn(&["serve", "--config", &partial, "--database", &sqlite_url(&file)], &[]);
    mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(tool_names(&list["result"]), ["describe_table", "list_tables"]);
    // Nothing sends the model to a tool that is not served.
    let no_catalog = write_unconfirmed_config(
        dir.path(),
        json!({"tools_enabled": {"list_tables": false, "describe_table": false}}),
    );
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", &no_catalog, "--database", &sqlite_url(&file)],
        &[],
    );
    let init = mcp.initialize();
    let list = mcp.request("tools/list", json!({}));
    assert_eq!(tool_names(&list["result"]), ["query"]);
    let said = format!("{} {}", init["instructions"], list["result"]["tools"][0]["description"]);
    assert!(
        !said.contains("list_tables") && !said.contains("describe_table"),
        "{said}"
    );
    assert!(said.contains("Pass values as params"), "{said}");
}

/// Three databases in one server: a writable PostgreSQL one (its password
/// from its own variable), a read-only SQLite file and a writable one.
/// Each call runs under its own database's rules, read back through psql
/// and rusqlite.
#[test]
fn three_databases_each_under_its_own_rules() {
    let server = pg::server();
    let db = server.database();
    db.psql(ITEMS);
    let dir = tempfile::tempdir().unwrap();
    let (archive, scratch) = (dir.path().join("archive.db"), dir.path().join("scratch.db"));
    make_db(
        &archive,
        "CREATE TABLE old (id INTEGER PRIMARY KEY); INSERT INTO old VALUES (1), (2);",
    );
    make_db(&scratch, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);");
    let pg_url = bare_url(server, &db.name);
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "server": {"read_only": true},
            "databases": {
                "main": {"url": pg_url, "read_only": false, "description": "Items on sale."},
                "archive": {"url": sqlite_url(&archive), "description": "Last year's ids."},
                "scratch": {"url": sqlite_url(&scratch), "read_only": false, "query": {"max_rows": 2}},
            },
            "tools": [
                json!({"name": "note", "description": "Keep a note.", "database": "scratch", "read_only": false,
                       "statement": "INSERT INTO notes (body) VALUES (?1)",
                       "parameters": [param("body", "string")]}),
                tool("cheap", "SELECT name FROM items WHERE price < $1 ORDER BY name", json!([param("below", "number")])),
            ],
        }),
    );
    let envs = [("PGMCP_DB_MAIN_PASSWORD", server.admin_password())];
    let (code, text) = check(&config, &envs);
    assert_eq!(code, 0, "{text}");
    for name in [
        "== database main ==",
        "== database archive ==",
        "== database scratch ==",
        "note (on scratch, may write)",
        "cheap (on main, reads only)",
    ] {
        assert!(text.contains(name), "{name}: {text}");
    }
    let mut mcp = serve(&config, &envs);
    let init_list = mcp.request("tools/list", json!({}));
    let query_tool = init_list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query")
        .unwrap();
    assert_eq!(
        query_tool["inputSchema"]["properties"]["database"]["enum"],
        json!(["main", "archive", "scratch"])
    );
    assert_eq!(
        query_tool["inputSchema"]["properties"]["database"]["default"],
        json!("main")
    );
    assert_eq!(
        query_tool["annotations"]["readOnlyHint"],
        json!(false),
        "one database may write"
    );

    // The default is the first: PostgreSQL, writable.
    let got = mcp.call_tool(
        "query",
        json!({"sql": "UPDATE items SET price = 9 WHERE id = $1", "params": [1]}),
    );
    assert!(!is_error(&got), "{got}");
    assert_eq!(db.psql("SELECT price FROM items WHERE id = 1"), "9");
    let got = mcp.call_tool(
        "query",
        json!({"sql": "SELECT current_database() AS d", "database": "main"}),
    );
    assert_eq!(tool_json(&got)["rows"][0]["d"], json!(db.name));
    // The archive stays read-only although main may write.
    let got = mcp.call_tool(
        "query",
        json!({"sql": "DELETE FROM old WHERE id = 1", "database": "archive"}),
    );
    assert!(is_error(&got) && tool_text(&got).contains("read-only"), "{got}");
    assert_eq!(scalar(&archive, "SELECT count(*) FROM old"), 2);
    let got = mcp.call_tool("list_tables", json!({"database": "archive"}));
    assert_eq!(tool_json(&got)["tables"][0]["name"], json!("old"), "{got}");
    // Scratch may write, through the curated tool, and caps rows at 2.
    for body in ["a", "b", "c"] {
        let got = mcp.call_tool("note", json!({"body": body}));
        assert!(!is_error(&got), "{got}");
    }
    assert_eq!(scalar(&scratch, "SELECT count(*) FROM notes"), 3);
    let got = mcp.call_tool("query", json!({"sql": "SELECT * FROM notes", "database": "scratch"}));
    assert_eq!(
        (
            tool_json(&got)["returned_rows"].clone(),
            tool_json(&got)["truncated"].clone()
        ),
        (json!(2), json!(true))
    );
    let got = mcp.call_tool("cheap", json!({"below": 2}));
    assert_eq!(tool_json(&got)["rows"], json!([{"name": "plum"}]));
    // A name the config does not have lists the ones it has.
    let got = mcp.call_tool("describe_table", json!({"table": "old", "database": "archve"}));
    assert!(is_error(&got), "{got}");
    assert_eq!(
        tool_text(&got),
        "no database is named \"archve\": this server's databases are main, archive, scratch"
    );
}

/// A database nothing answers for stops only the calls that name it.
#[test]
fn an_unreachable_database_leaves_the_others_answering() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ok.db");
    make_db(&file, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (42);");
    let port = crate::support::net::free_port();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "query": {"default_timeout_seconds": 10},
            "databases": {
                "gone": {"url": format!("postgres://nobody@127.0.0.1:{port}/none"), "connection": {"connect_timeout_seconds": 2}},
                "here": {"url": sqlite_url(&file)},
            },
        }),
    );
    let mut mcp = serve(&config, &[]);
    let got = mcp.call_tool("query", json!({"sql": "SELECT 1", "database": "gone"}));
    assert!(is_error(&got), "{got}");
    // The advice names the entry's settings, not PG* variables it ignores.
    let text = tool_text(&got);
    assert!(
        text.contains("databases.gone.url") && !text.contains("PGHOST"),
        "{text}"
    );
    let got = mcp.call_tool("query", json!({"sql": "SELECT x FROM t", "database": "here"}));
    assert_eq!(tool_json(&got)["rows"], json!([{"x": 42}]));
    // `check` reports both: the unreachable one is a problem, the other fine.
    let (code, text) = check(&config, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("== database gone ==") && text.contains("== database here =="),
        "{text}"
    );
}

/// A named database takes no PG* variable and no database-naming setting:
/// each would reach every database alike, or hide which one is meant.
#[test]
fn settings_that_name_one_database_are_refused_beside_databases() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.db");
    make_db(&file, "CREATE TABLE t (x INTEGER);");
    let config = write_unconfirmed_config(dir.path(), json!({"databases": {"a": {"url": sqlite_url(&file)}}}));
    let (code, text) = check(&config, &[("PGMCP_DATABASE", "sqlite::memory:")]);
    assert_ne!(code, 0);
    assert!(
        text.contains("PGMCP_DATABASE: it names one database") && text.contains("unset PGMCP_DATABASE"),
        "{text}"
    );
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path())
        .args(["query", "--config", &config, "--database", "b", "SELECT 1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no database is named \"b\": this server's databases are a"),
        "{err}"
    );
    let out = pgmcp(home.path())
        .args([
            "query",
            "--config",
            &config,
            "--database",
            "a",
            "SELECT count(*) AS n FROM t",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"n\": 0"), "{out:?}");
}

/// A named database's password is its own variable's: PGPASSWORD, which
/// would reach every database alike, is not read, and the message says
/// which variable to set.
#[test]
fn a_named_database_takes_its_password_from_its_own_variable() {
    let server = pg::server();
    let db = server.database();
    let dir = tempfile::tempdir().unwrap();
    let pg_url = bare_url(server, &db.name);
    let config = write_unconfirmed_config(dir.path(), json!({"databases": {"stage-2": {"url": pg_url}}}));
    let mut mcp = serve(&config, &[("PGPASSWORD", server.admin_password())]);
    let got = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
    assert!(
        is_error(&got) && tool_text(&got).contains("PGMCP_DB_STAGE_2_PASSWORD"),
        "{got}"
    );
    assert!(!tool_text(&got).contains("PGPASSWORD,"), "{got}");
    let mut mcp = serve(&config, &[("PGMCP_DB_STAGE_2_PASSWORD", server.admin_password())]);
    let got = mcp.call_tool("query", json!({"sql": "SELECT 1 AS one"}));
    assert_eq!(tool_json(&got)["rows"], json!([{"one": 1}]), "{got}");
    let (code, text) = check(&config, &[("PGMCP_DB_STAGE_2_PASSWORD", server.admin_password())]);
    assert_eq!(code, 0, "{text}");
}

/// `pgmcp configure --add-database NAME` moves the file's one database
/// into `databases` under a name, adds the new one, and the file serves
/// both.
#[test]
fn configure_adds_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("a.db"), dir.path().join("b.db"));
    make_db(&first, "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);");
    make_db(&second, "CREATE TABLE b (y INTEGER); INSERT INTO b VALUES (2);");
    let path = dir.path().join("config.json");
    std::fs::write(
        &path,
        json!({"database": sqlite_url(&first), "logging": {"output": dir.path().join("log")}}).to_string(),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let input = format!("\n{}\nSales by day.\nno\n", second.display());
    let out = pgmcp(home.path())
        .args([
            "configure",
            "--config",
            path.to_str().unwrap(),
            "--add-database",
            "sales",
        ])
        .write_stdin(input)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains("moved to databases.main") && said.contains("PGMCP_DB_SALES_PASSWORD"),
        "{said}"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written.get("database"), None);
    assert_eq!(written["databases"]["main"]["url"], json!(sqlite_url(&first)));
    assert_eq!(written["databases"]["sales"]["description"], json!("Sales by day."));
    assert_eq!(written["databases"]["sales"]["read_only"], json!(false));
    let mut mcp = serve(path.to_str().unwrap(), &[]);
    let got = mcp.call_tool("query", json!({"sql": "SELECT y FROM b", "database": "sales"}));
    assert_eq!(tool_json(&got)["rows"], json!([{"y": 2}]), "{got}");
    let got = mcp.call_tool("query", json!({"sql": "SELECT x FROM a"}));
    assert_eq!(tool_json(&got)["rows"], json!([{"x": 1}]), "{got}");
    // A name already there is refused, and the file is left as it was.
    let before = std::fs::read_to_string(&path).unwrap();
    let out = pgmcp(home.path())
        .args([
            "configure",
            "--config",
            path.to_str().unwrap(),
            "--add-database",
            "sales",
        ])
        .write_stdin("")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("databases.sales"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

/// Over HTTP too, each session lists and runs the curated tools, in both
/// protocol eras' stateless form.
#[test]
fn curated_tools_over_http() {
    use crate::support::http::{ACCEPT, JSON, db as pets, meta, rpc, send, start_with};
    let db = pets();
    let dir = tempfile::tempdir().unwrap();
    let tools = json!([tool(
        "pet",
        "SELECT name FROM pets WHERE id = $1",
        json!([param("id", "integer")])
    )]);
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], |text| {
        let mut config: Value = serde_json::from_str(&text).unwrap();
        config["tools"] = tools.clone();
        config["tools_enabled"] = json!({"query": false});
        config.to_string()
    });
    let headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "pet"),
    ];
    let call = rpc(
        1,
        "tools/call",
        json!({"_meta": meta(), "name": "pet", "arguments": {"id": 1}}),
    );
    let reply = send(port, "POST", "/mcp", &headers, &call);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.message()["result"]["structuredContent"]["rows"],
        json!([{"name": "rex"}]),
        "{}",
        reply.body
    );
    let list_headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let reply = send(
        port,
        "POST",
        "/mcp",
        &list_headers,
        &rpc(2, "tools/list", json!({"_meta": meta()})),
    );
    assert_eq!(
        tool_names(&reply.message()["result"]),
        ["describe_table", "list_tables", "pet"],
        "{}",
        reply.body
    );
    let wrong = rpc(
        3,
        "tools/call",
        json!({"_meta": meta(), "name": "pet", "arguments": {"id": "1; DROP TABLE pets"}}),
    );
    let reply = send(port, "POST", "/mcp", &headers, &wrong);
    let result = &reply.message()["result"];
    assert!(
        is_error(result) && tool_text(result).starts_with("pet: argument id: expected a whole number"),
        "{}",
        reply.body
    );
    assert_eq!(db.psql("SELECT count(*) FROM pets"), "1");
    mcp.kill();
}

/// The official MCP Python SDK, as a desktop client: it lists the curated
/// tools beside the databases' built-ins, calls one (checking its answer
/// against the output schema the tool declares), and reads an argument
/// error as a tool error.
#[test]
fn the_python_sdk_calls_curated_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (shop, archive) = (dir.path().join("shop.db"), dir.path().join("archive.db"));
    make_db(
        &shop,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    make_db(&archive, "CREATE TABLE old (id INTEGER);");
    let config = write_unconfirmed_config(
        dir.path(),
        json!({
            "databases": {"shop": {"url": sqlite_url(&shop)}, "archive": {"url": sqlite_url(&archive)}},
            "tools": [tool("name_of", "SELECT name FROM t WHERE id = ?1", json!([param("id", "integer")]))],
        }),
    );
    let plan = json!([
        {"op": "tools"},
        {"op": "tool", "name": "name_of", "arguments": {"id": 2}},
        {"op": "tool", "name": "name_of", "arguments": {"id": "two"}},
        {"op": "tool", "name": "list_tables", "arguments": {"database": "archive"}},
    ]);
    let (steps, _) = crate::support::python_sdk::session(plan, &config, None, &[]);
    assert_eq!(steps[0], json!(["describe_table", "list_tables", "name_of", "query"]));
    assert_eq!(steps[1]["structured"]["rows"], json!([{"name": "b"}]), "{}", steps[1]);
    assert_eq!(steps[2]["isError"], json!(true), "{}", steps[2]);
    assert!(
        steps[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("name_of: argument id: expected a whole number"),
        "{}",
        steps[2]
    );
    assert_eq!(
        steps[3]["structured"]["tables"][0]["name"],
        json!("old"),
        "{}",
        steps[3]
    );
}

/// The file sandbox is one for the process: a file switch on in one
/// database's own `protection` fences the process as it does at the top
/// level. Through a link to `/proc/self`, an ATTACH of pgmcp's environment
/// (which holds each database's password variable) reaches nothing.
#[test]
fn a_file_switch_in_one_database_fences_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.db");
    make_db(&file, "CREATE TABLE t (x INTEGER);");
    let link = dir.path().join("p");
    std::os::unix::fs::symlink("/proc/self", &link).unwrap();
    let config = write_unconfirmed_config(
        dir.path(),
        json!({"databases": {"a": {"url": sqlite_url(&file), "read_only": false, "protection": {"allow_attach": true}}}}),
    );
    let mut mcp = serve(&config, &[("PGMCP_DB_A_PASSWORD", "not-for-the-model")]);
    let got = mcp.call_tool(
        "query",
        json!({"sql": format!("ATTACH '{}/environ' AS e", link.display())}),
    );
    assert!(is_error(&got), "the environment was attached: {got}");
    let got = mcp.call_tool("query", json!({"sql": "SELECT name FROM pragma_database_list"}));
    assert!(
        !tool_json(&got)["rows"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "e"})),
        "{got}"
    );
    let log = std::fs::read_to_string(dir.path().join("pgmcp.log")).unwrap();
    assert!(log.contains("file sandbox entered"), "{log}");
}

/// At a terminal, `pgmcp query` and `check` ask for a named database's
/// password when the server wants one and none was given, as psql does;
/// the typed password reaches that database alone.
#[test]
fn a_named_database_password_is_asked_at_a_terminal() {
    use crate::support::terminal::Terminal;
    let server = pg::server();
    let db = server.database();
    let dir = tempfile::tempdir().unwrap();
    let pg_url = bare_url(server, &db.name);
    let config = write_unconfirmed_config(dir.path(), json!({"databases": {"main": {"url": pg_url}}}));
    let home = tempfile::tempdir().unwrap();
    let mut cmd = crate::support::pgmcp_std(home.path());
    cmd.args([
        "query",
        "--config",
        &config,
        "--database",
        "main",
        "SELECT 41 + 1 AS answer",
    ]);
    let mut terminal = Terminal::spawn(cmd);
    terminal.expect("Password for database main: ");
    terminal.type_line(server.admin_password());
    let (status, screen) = terminal.finish();
    assert!(status.success() && screen.contains("\"answer\": 42"), "{screen}");
    assert!(
        !screen.contains(server.admin_password()),
        "the password is not echoed: {screen}"
    );

    let mut cmd = crate::support::pgmcp_std(home.path());
    cmd.args(["check", "--config", &config]);
    let mut terminal = Terminal::spawn(cmd);
    terminal.expect("Password for database main: ");
    terminal.type_line(server.admin_password());
    let (status, screen) = terminal.finish();
    assert!(status.success(), "{screen}");
    assert!(
        screen.contains("== database main ==") && screen.contains("the password typed at the prompt"),
        "{screen}"
    );
}

/// `PGMCP_READ_ONLY=true`, a bundle's read-only switch, makes every
/// database read-only, one the file lets write included; `PGMCP_MAX_ROWS`
/// caps every one.
#[test]
fn the_environment_reaches_every_database() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.db");
    make_db(&file, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);");
    let config = write_unconfirmed_config(
        dir.path(),
        json!({"databases": {"w": {"url": sqlite_url(&file), "read_only": false}}}),
    );
    let mut mcp = serve(&config, &[("PGMCP_READ_ONLY", "true"), ("PGMCP_MAX_ROWS", "2")]);
    let got = mcp.call_tool("query", json!({"sql": "DELETE FROM t WHERE x = 1"}));
    assert!(is_error(&got) && tool_text(&got).contains("read-only"), "{got}");
    let got = mcp.call_tool("query", json!({"sql": "SELECT x FROM t"}));
    assert_eq!(tool_json(&got)["returned_rows"], json!(2), "{got}");
    assert_eq!(scalar(&file, "SELECT count(*) FROM t"), 3);
}
