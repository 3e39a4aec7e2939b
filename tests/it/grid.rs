//! The grid (an MCP App, `ui://pgmcp/grid`) end to end: the real binary
//! on real engines, a host made of the official MCP SDK and ext-apps'
//! `AppBridge` (`fixtures/clients/grid_host.mjs`), the grid itself in
//! Debian's headless Chromium. The grid shows the rows the database gives,
//! pages and sorts in the database's own order, copies a cell, exports a
//! page, shows values as text, fetches nothing, and its calls meet the
//! same guard as the model's. `grid: false` takes it all away.
//!
//! Set `PGMCP_UPDATE_GRID_SCREENSHOTS=1` to copy the SQLite run's
//! screenshots over the README's (`docs/grid.png`, `docs/grid-sorted.png`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::served::write_config;
use crate::support::stdio::McpProcess;
use crate::support::{files, pg, png, tools};

/// The host's packages, pinned: ext-apps 1.x is the line that works with
/// the `@modelcontextprotocol/sdk` 1.x client (2.x needs the SDK's 2.x
/// split packages); zod is its peer.
const HOST_PACKAGES: &[&str] = &[
    "@modelcontextprotocol/ext-apps@1.7.5",
    "@modelcontextprotocol/sdk@1.32.2",
    "playwright-core@1.65.1",
    "zod@4.1.12",
];

/// The grid's frame in the host page, and so its screenshots.
const SIZE: (usize, usize) = (960, 640);

/// Rows per page in the grid, unless the person picks another.
const PAGE: usize = 50;

/// 120 rows, every score different (37 and 1000 share no factor), two
/// names that CSV must quote and one that is markup.
const ITEMS: &str = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 120)
INSERT INTO items SELECT i,
  CASE i WHEN 3 THEN 'item, \"three\"' WHEN 7 THEN '<img src=x onerror=alert(1)>'
    ELSE 'item <b>' || CAST(i AS VARCHAR) || '</b>' END,
  (i * 37) % 1000 FROM s;";

/// [`ITEMS`] in DuckDB's words (`range` for the recursive CTE).
#[cfg(feature = "duckdb")]
const DUCKDB_ITEMS: &str = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
INSERT INTO items SELECT i,
  CASE i WHEN 3 THEN 'item, \"three\"' WHEN 7 THEN '<img src=x onerror=alert(1)>'
    ELSE 'item <b>' || CAST(i AS VARCHAR) || '</b>' END,
  (i * 37) % 1000 FROM range(1, 121) AS r(i);";

/// The model's call the grid starts from.
const CALL: &str = "SELECT id, name, score FROM items ORDER BY id";

/// One engine's run: how to serve it, what the database itself says, and
/// a statement its guard refuses.
pub(crate) struct Case {
    pub(crate) serve: Vec<String>,
    pub(crate) envs: Vec<(String, String)>,
    /// Every row as the grid writes it (id, name, score), `ORDER BY id`
    /// and `ORDER BY score`, read straight from the database.
    pub(crate) by_id: Vec<Vec<String>>,
    pub(crate) by_score: Vec<Vec<String>>,
    pub(crate) refused: &'static str,
    /// What the refusal says.
    pub(crate) refusal: &'static str,
}

#[test]
fn the_grid_pages_and_sorts_an_sqlite_result() {
    let (dir, file) = files::sqlite::fixture(ITEMS);
    let truth = |order: &str| -> Vec<Vec<String>> {
        let conn = rusqlite::Connection::open(&file).unwrap();
        let mut statement = conn
            .prepare(&format!("SELECT id, name, score FROM items ORDER BY {order}"))
            .unwrap();
        statement
            .query_map([], |r| {
                Ok(vec![
                    r.get::<_, i64>(0)?.to_string(),
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?.to_string(),
                ])
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let config = write_config(dir.path(), json!({}));
    let case = Case {
        serve: vec![
            "serve".into(),
            "--config".into(),
            config,
            "--database".into(),
            files::sqlite::url(&file),
        ],
        envs: Vec::new(),
        by_id: truth("id"),
        by_score: truth("score"),
        refused: "SELECT load_extension('x')",
        refusal: "function load_extension() is not allowed",
    };
    check(&case, dir.path());
    if std::env::var_os("PGMCP_UPDATE_GRID_SCREENSHOTS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        for name in ["grid.png", "grid-sorted.png"] {
            std::fs::copy(dir.path().join(name), docs.join(name)).unwrap();
        }
    }
}

#[test]
fn the_grid_pages_and_sorts_a_postgres_result_and_its_calls_meet_the_guard() {
    let db = pg::server().database();
    db.psql(ITEMS);
    let truth = |order: &str| -> Vec<Vec<String>> {
        let json = db.psql(&format!(
            "SELECT json_agg(json_build_array(id::text, name, score::text) ORDER BY {order}) FROM items"
        ));
        serde_json::from_str(&json).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({}));
    let mut envs = vec![("PGMCP_PG_CONNSTRING".to_owned(), db.url.clone())];
    if std::env::var("PGMCP_TEST_READ_ONLY_AS_LOGIN").is_ok_and(|v| v == "true") {
        envs.push(("PGMCP_READ_ONLY_AS_LOGIN".into(), "true".into()));
    }
    let case = Case {
        serve: vec!["serve".into(), "--config".into(), config],
        envs,
        by_id: truth("id"),
        by_score: truth("score"),
        refused: "SELECT pg_read_file('/etc/passwd')",
        refusal: "pg_read_file",
    };
    check(&case, dir.path());
}

#[cfg(feature = "duckdb")]
#[test]
fn the_grid_pages_and_sorts_a_duckdb_result() {
    let (dir, file) = files::duckdb::fixture(DUCKDB_ITEMS);
    // Read before pgmcp opens the file: DuckDB locks it.
    let truth = |order: &str| -> Vec<Vec<String>> {
        let conn = duckdb::Connection::open(&file).unwrap();
        let mut statement = conn
            .prepare(&format!("SELECT id, name, score FROM items ORDER BY {order}"))
            .unwrap();
        statement
            .query_map([], |r| {
                Ok(vec![
                    r.get::<_, i64>(0)?.to_string(),
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?.to_string(),
                ])
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let (by_id, by_score) = (truth("id"), truth("score"));
    let config = write_config(dir.path(), json!({}));
    let case = Case {
        serve: vec![
            "serve".into(),
            "--config".into(),
            config,
            "--database".into(),
            files::duckdb::url(&file),
        ],
        envs: Vec::new(),
        by_id,
        by_score,
        refused: "SELECT * FROM read_csv('/etc/passwd')",
        refusal: "protection.allow_file_functions",
    };
    check(&case, dir.path());
}

/// Run the host on `case`, screenshots into `out`, and check what the
/// grid showed against the database's own answers.
fn check(case: &Case, out: &Path) {
    let plan = json!({
        "call": {"sql": CALL},
        "refused": case.refused,
        "sort_column": 2,
        "out": out,
    });
    let report = host(&plan, case);
    let rows = |key: &str| -> Vec<Vec<String>> {
        serde_json::from_value(report[key].clone()).unwrap_or_else(|e| panic!("{key}: {e}\n{report:#}"))
    };

    // What the host found: the tool names the grid, the resource is an app.
    assert_eq!(
        report["tool_meta"]["ui"]["resourceUri"], "ui://pgmcp/grid",
        "{report:#}"
    );
    assert_eq!(report["tool_meta"]["ui/resourceUri"], "ui://pgmcp/grid");
    assert_eq!(
        report["server_capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );
    assert_eq!(report["resource"]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(report["resource"]["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
    assert_eq!(
        report["listed"][0]["uri"], "ui://pgmcp/grid",
        "listed among the resources"
    );

    // The first page is the database's first rows (markup shown as text);
    // the next page the next ones.
    assert_eq!(report["headers"], json!(["id", "name", "score"]));
    assert_eq!(rows("first_page"), case.by_id[..PAGE], "{report:#}");
    assert_eq!(rows("second_page"), case.by_id[PAGE..2 * PAGE], "{report:#}");
    assert_eq!(report["second_summary"], "Rows 51–100 of 120");

    // Sorted by score, both ways: the database's ORDER BY.
    assert_eq!(rows("sorted_ascending"), case.by_score[..PAGE], "{report:#}");
    let descending: Vec<_> = case.by_score.iter().rev().take(PAGE).cloned().collect();
    assert_eq!(rows("sorted_descending"), descending, "{report:#}");
    assert_eq!(report["headers_after_sort"], json!(["id", "name", "score ▼"]));

    // Every call the grid made was `query`, with the model's statement
    // wrapped, never anything else.
    let calls = report["calls"].as_array().unwrap();
    assert!(calls.len() >= 4, "{report:#}");
    for call in calls {
        assert_eq!(call["name"], "query");
        let sql = call["arguments"]["sql"].as_str().unwrap();
        assert!(
            sql.starts_with("SELECT * FROM (\n") && sql.contains(") AS pgmcp_grid"),
            "{sql}"
        );
    }

    // A cell copied, the page exported as CSV (RFC 4180).
    assert_eq!(report["clipboard"], json!(descending[0][0]), "{report:#}");
    let mut csv = String::from("id,name,score\r\n");
    for row in &descending {
        let fields: Vec<String> = row
            .iter()
            .map(|f| match f.contains([',', '"', '\r', '\n']) {
                true => format!("\"{}\"", f.replace('"', "\"\"")),
                false => f.clone(),
            })
            .collect();
        csv.push_str(&fields.join(","));
        csv.push_str("\r\n");
    }
    assert_eq!(report["downloads"][0], json!(csv));

    // The guard answers the grid as it answers the model: the grid's own
    // sorted call of a refused statement shows the refusal, as does the
    // model's refused call.
    assert!(report["refused_is_error"].as_bool().unwrap());
    for key in ["refusal_after_sort", "refusal_first"] {
        let text = report[key].as_str().unwrap_or_default();
        assert!(text.contains(case.refusal), "{key}: {text:?}\n{report:#}");
    }

    // Nothing fetched: no request left the host page.
    assert_eq!(report["network_requests"], json!([]), "{report:#}");

    // The screenshots are pictures of the grid: its size, not blank.
    for path in report["screenshots"].as_array().unwrap() {
        let path = PathBuf::from(path.as_str().unwrap());
        let picture = png::decode(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!((picture.width, picture.height), SIZE, "{}", path.display());
        assert!(
            picture.colours() >= 16,
            "{}: {} colours",
            path.display(),
            picture.colours()
        );
        assert!(picture.drawn() > 0.05, "{}: {} drawn", path.display(), picture.drawn());
    }
}

/// `fixtures/clients/grid_host.mjs` with `plan`, on Node 22, against
/// `pgmcp` served as `case` says; its report.
pub(crate) fn host(plan: &Value, case: &Case) -> Value {
    let modules = tools::npm_modules("grid-host", HOST_PACKAGES);
    // Beside its node_modules, so its imports are found; written whole and
    // renamed, as two tests may do it at once.
    let script = modules.join("grid_host.mjs");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/clients/grid_host.mjs");
    let staged = modules.join(format!("grid_host.{}.mjs", std::process::id()));
    std::fs::copy(source, &staged).unwrap();
    std::fs::rename(&staged, &script).unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(tools::node22());
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("PGMCP_TEST_CHROMIUM", chromium())
        .envs(case.envs.iter().map(|(k, v)| (k, v)))
        .current_dir(&modules)
        .arg(&script)
        .arg(plan.to_string())
        .arg(env!("CARGO_BIN_EXE_pgmcp"))
        .args(&case.serve);
    let out = cmd.output().expect("run the grid host on Node 22");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(
        report.get("error").is_none() && out.status.success(),
        "{report:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    report
}

/// Debian's Chromium (`PGMCP_TEST_CHROMIUM` names another); no test
/// downloads a browser of its own.
fn chromium() -> PathBuf {
    let path =
        std::env::var_os("PGMCP_TEST_CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        path.exists(),
        "{} is missing: apt-get install chromium (.ci/run does)",
        path.display()
    );
    path
}

/// On by default: `query` names the grid, the grid is a resource next to
/// the tables, the extension is declared; without `query` there is no
/// grid; `grid: false` takes all of it away, and the model's answer is the
/// same either way.
#[test]
fn the_grid_is_offered_unless_switched_off() {
    let (dir, file) = files::sqlite::fixture("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
    let url = files::sqlite::url(&file);
    let session = |extra: Value| {
        let config = write_config(dir.path(), extra);
        let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--database", &url], &[]);
        let init = mcp.initialize();
        (mcp, init)
    };
    let query_meta = |mcp: &mut McpProcess| {
        let list = mcp.request("tools/list", json!({}));
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "query")
            .map(|t| t.get("_meta").cloned().unwrap_or(Value::Null))
    };
    let uis = |mcp: &mut McpProcess| -> Vec<Value> {
        let list = mcp.request("resources/list", json!({}));
        list["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["uri"].as_str().unwrap().starts_with("ui://"))
            .cloned()
            .collect()
    };

    let curated = json!({"tools": [crate::support::curated::tool("all_x", "SELECT x FROM t", json!([]))]});
    let (mut on, init) = session(curated);
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
    );
    assert_eq!(
        query_meta(&mut on),
        Some(json!({"ui": {"resourceUri": "ui://pgmcp/grid"}, "ui/resourceUri": "ui://pgmcp/grid"}))
    );
    let listed = uis(&mut on);
    // A curated tool's answer is shown in the grid too.
    let list = on.request("tools/list", json!({}));
    let all_x = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "all_x")
        .unwrap();
    assert_eq!(all_x["_meta"]["ui"]["resourceUri"], "ui://pgmcp/grid", "{all_x}");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["mimeType"], "text/html;profile=mcp-app");
    let read = on.request("resources/read", json!({"uri": "ui://pgmcp/grid"}));
    let page = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(page.contains("default-src 'none'"), "{read}");
    let answered_on = on.call_tool("query", json!({"sql": "SELECT x FROM t"}));
    let tables = on.request("resources/list", json!({}))["result"]["resources"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(tables, 2, "the grid and the one table");

    let (mut off, init) = session(json!({"grid": false}));
    assert!(init["capabilities"].get("extensions").is_none(), "{init}");
    assert_eq!(query_meta(&mut off), Some(Value::Null));
    assert!(uis(&mut off).is_empty());
    let read = off.request("resources/read", json!({"uri": "ui://pgmcp/grid"}));
    assert!(read.get("error").is_some(), "{read}");
    let answered_off = off.call_tool("query", json!({"sql": "SELECT x FROM t"}));
    assert_eq!(answered_on["structuredContent"], answered_off["structuredContent"]);

    let (mut no_query, init) = session(json!({"tools_enabled": {"query": false}}));
    assert!(init["capabilities"].get("extensions").is_none(), "{init}");
    assert!(uis(&mut no_query).is_empty());
}
