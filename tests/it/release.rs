//! What people download, end to end: `cargo xtask` packages the binary under
//! test exactly as a release does (the packaging code is the same; only the
//! binary is the test build, so DuckDB is not compiled a second time), the
//! official MCP Bundle tool (`@anthropic-ai/mcpb` from the npm registry)
//! unpacks and validates the bundle, and the bundle's own command — its
//! `user_config` substituted the way Claude Desktop does — serves PostgreSQL
//! and an SQLite file over a real stdio session. `dist`'s own release build
//! runs too, in a stand-in workspace, to show it rebuilds nothing a
//! `cargo build --release` built.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::support::pg;
use crate::support::stdio::{McpProcess, tool_json, tool_text};
use crate::support::xtask::{ok, workspace, xtask};

/// The `@anthropic-ai/mcpb` release the tests validate with.
const MCPB_PACKAGE: &str = "@anthropic-ai/mcpb@2.1.2";

/// The official `mcpb` command: `PGMCP_TEST_MCPB`, else the copy in
/// `~/.cache/pgmcp-tools`, installed there from the npm registry on first use.
fn mcpb() -> &'static Path {
    static MCPB: OnceLock<PathBuf> = OnceLock::new();
    MCPB.get_or_init(|| crate::support::tools::npm("PGMCP_TEST_MCPB", "", MCPB_PACKAGE, "mcpb"))
}

/// One bundle of the binary under test, built once, and the official tool's
/// unpacking of it (what Claude Desktop unpacks on install).
struct Bundle {
    file: PathBuf,
    unpacked: PathBuf,
    manifest: Value,
}

fn bundle() -> &'static Bundle {
    static BUNDLE: OnceLock<Bundle> = OnceLock::new();
    BUNDLE.get_or_init(|| {
        let dir = crate::support::scratch("bundle");
        let out_dir = dir.join("dist");
        let stdout = ok(
            xtask(&[
                "mcpb",
                "--binary",
                env!("CARGO_BIN_EXE_pgmcp"),
                "--out-dir",
                out_dir.to_str().unwrap(),
            ]),
            "cargo xtask mcpb",
        );
        let file = PathBuf::from(stdout.trim());
        let expected = format!("pgmcp-{}-linux-x64.mcpb", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            file,
            out_dir.join(&expected),
            "cargo xtask mcpb prints the bundle it wrote"
        );
        let unpacked = dir.join("unpacked");
        ok(
            Command::new(mcpb())
                .arg("unpack")
                .arg(&file)
                .arg(&unpacked)
                .output()
                .unwrap(),
            "mcpb unpack",
        );
        let manifest = serde_json::from_slice(&std::fs::read(unpacked.join("manifest.json")).unwrap()).unwrap();
        Bundle {
            file,
            unpacked,
            manifest,
        }
    })
}

/// What Claude Desktop puts for an optional setting the person left empty
/// and the manifest gives no default: "" as the bundle format says, or the
/// `${user_config.KEY}` text itself, passed through (seen in released
/// versions: modelcontextprotocol/mcpb#250). Both must read as unset.
#[derive(Clone, Copy)]
enum LeftEmpty {
    Blank,
    Literal,
}

/// The bundle's `mcp_config` with `user_config` substituted as Claude Desktop
/// does: `${__dirname}` is the unpacked bundle, each `${user_config.KEY}` the
/// person's value as a string (booleans `true`/`false`), an optional setting
/// left empty as `left_empty` says, and the platform's override applies.
fn client_entry(
    bundle: &Bundle,
    settings: &[(&str, Value)],
    left_empty: LeftEmpty,
) -> (String, Vec<String>, Vec<(String, String)>) {
    let config = &bundle.manifest["server"]["mcp_config"];
    let mut config = config.as_object().unwrap().clone();
    if let Some(overrides) = config.get("platform_overrides").and_then(|o| o.get("linux")).cloned() {
        for (key, value) in overrides.as_object().unwrap() {
            config.insert(key.clone(), value.clone());
        }
    }
    let declared = bundle.manifest["user_config"].as_object().unwrap();
    let mut values = Map::new();
    for (key, option) in declared {
        let given = settings.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let unset = match left_empty {
            LeftEmpty::Blank => json!(""),
            LeftEmpty::Literal => json!(format!("${{user_config.{key}}}")),
        };
        let value = given.or_else(|| option.get("default").cloned()).unwrap_or(unset);
        let text = match value {
            Value::String(s) => s,
            other => other.to_string(),
        };
        values.insert(key.clone(), Value::String(text));
    }
    for (key, _) in settings {
        assert!(
            declared.contains_key(*key),
            "the manifest declares no user_config {key}"
        );
    }
    let dirname = bundle.unpacked.to_str().unwrap();
    let substitute = |text: &str| {
        let text = text.replace("${__dirname}", dirname);
        let Some(key) = text.strip_prefix("${user_config.").and_then(|t| t.strip_suffix('}')) else {
            assert!(
                !text.contains("${"),
                "a variable Claude Desktop does not know in {text}"
            );
            return text;
        };
        values[key].as_str().unwrap().to_owned()
    };
    let command = substitute(config["command"].as_str().unwrap());
    let args = config["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| substitute(a.as_str().unwrap()))
        .collect();
    let env = config["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), substitute(v.as_str().unwrap())))
        .collect();
    (command, args, env)
}

/// Start the bundle's command exactly as written, and complete `initialize`.
fn start(bundle: &Bundle, settings: &[(&str, Value)]) -> McpProcess {
    start_with(bundle, settings, LeftEmpty::Blank)
}

fn start_with(bundle: &Bundle, settings: &[(&str, Value)], left_empty: LeftEmpty) -> McpProcess {
    let mut server = spawn(bundle, settings, left_empty, &[]);
    let init = server.initialize();
    assert_eq!(init["serverInfo"]["name"], "pgmcp", "{init}");
    server
}

/// The bundle's command as Claude Desktop starts it, in an environment that
/// also holds `around` (what the person's own environment may hold: a
/// config or cache directory).
fn spawn(bundle: &Bundle, settings: &[(&str, Value)], left_empty: LeftEmpty, around: &[(&str, &str)]) -> McpProcess {
    let (command, args, env) = client_entry(bundle, settings, left_empty);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.extend(around.iter().copied());
    McpProcess::spawn_program(&command, &args, &env)
}

/// A setting's title in the bundle's form.
fn title(key: &str) -> &'static str {
    bundle().manifest["user_config"][key]["title"]
        .as_str()
        .unwrap_or_else(|| panic!("the manifest has no user_config {key}"))
}

/// A bundle whose settings cannot be used still shows in Claude Desktop as
/// pgmcp with its tools, and says why in every tool call's answer (and its
/// instructions), in the form's words: each of `expected`, and where the
/// form is.
fn explained(settings: &[(&str, Value)], around: &[(&str, &str)], expected: &[&str]) {
    let bundle = bundle();
    let mut server = spawn(bundle, settings, LeftEmpty::Blank, around);
    let init = server.initialize_unstarted();
    assert_eq!(init["serverInfo"]["name"], "pgmcp", "{init}");
    let instructions = init["instructions"].as_str().unwrap();
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        crate::support::stdio::tool_names(&listed["result"]),
        crate::support::stdio::tool_names(&bundle.manifest)
    );
    for tool in ["query", "list_tables"] {
        let answer = server.call_tool(tool, json!({"sql": "SELECT count(*) FROM customers"}));
        assert_eq!(answer["isError"], true, "{answer}");
        let text = tool_text(&answer);
        assert!(text.starts_with("pgmcp could not start: "), "{text}");
        assert!(instructions.starts_with(text), "{instructions}");
        for words in expected
            .iter()
            .chain(&["in Claude Desktop → Settings → Extensions → pgmcp"])
        {
            assert!(text.contains(words), "no {words:?} in: {text}");
        }
    }
    server.close_stdin();
    assert_eq!(server.wait_exit(Duration::from_secs(10)).code(), Some(2));
}

/// A copy of the demo shop, as a person's own SQLite file.
fn shop_file(dir: &Path) -> String {
    let db = dir.join("shop.db");
    std::fs::copy(workspace().join("fixtures/demo.db"), &db).unwrap();
    db.to_str().unwrap().to_owned()
}

fn query(server: &mut McpProcess, sql: &str) -> Value {
    server.call_tool("query", json!({ "sql": sql }))
}

#[test]
fn the_bundle_passes_the_official_validation() {
    let bundle = bundle();
    let output = Command::new(mcpb())
        .arg("validate")
        .arg(bundle.unpacked.join("manifest.json"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "mcpb validate refused the manifest:\n{said}");
    assert!(said.contains("schema validation passes"), "{said}");
    assert!(!said.contains("ERROR"), "{said}");

    let manifest = &bundle.manifest;
    assert!(manifest["manifest_version"].as_str().unwrap() >= "0.3");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["server"]["type"], "binary");
    assert_eq!(manifest["compatibility"]["platforms"], json!(["linux"]));
    // The binary inside is the one packaged, still executable after the
    // official unpacking.
    let entry = bundle
        .unpacked
        .join(manifest["server"]["entry_point"].as_str().unwrap());
    let packaged = std::fs::metadata(&entry).unwrap();
    assert_eq!(
        packaged.len(),
        std::fs::metadata(env!("CARGO_BIN_EXE_pgmcp")).unwrap().len()
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        packaged.permissions().mode() & 0o111,
        0o111,
        "the binary lost its x bits"
    );
    assert!(bundle.unpacked.join(manifest["icon"].as_str().unwrap()).is_file());
    // The .sha256 beside the bundle is its sum, in sha256sum's format.
    let check = Command::new("sha256sum")
        .arg("-c")
        .arg(format!("{}.sha256", bundle.file.file_name().unwrap().to_str().unwrap()))
        .current_dir(bundle.file.parent().unwrap())
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
}

#[test]
fn secrets_are_asked_for_as_secrets_and_never_passed_as_arguments() {
    let manifest = &bundle().manifest;
    let options = manifest["user_config"].as_object().unwrap();
    for key in ["connection_string", "password"] {
        assert_eq!(options[key]["sensitive"], true, "{key} must be kept in the keychain");
    }
    assert_eq!(options["database_file"]["type"], "file");
    assert_eq!(options["read_only"]["type"], "boolean");
    assert_eq!(
        options["read_only"]["default"], true,
        "read-only is on unless turned off"
    );
    assert_eq!(options["max_rows"]["type"], "number");
    assert_eq!(options["demo"]["type"], "boolean");
    assert_eq!(options["demo"]["default"], false, "the demo is off unless turned on");
    // Arguments show in `ps` for every user of the machine: no setting goes
    // there, and every declared setting reaches pgmcp through its environment.
    let config = &manifest["server"]["mcp_config"];
    let args = config["args"].to_string();
    assert!(!args.contains("user_config"), "settings in args: {args}");
    let env = config["env"].to_string();
    for key in options.keys() {
        assert!(
            env.contains(&format!("${{user_config.{key}}}")),
            "{key} never reaches pgmcp"
        );
    }
}

#[test]
fn the_declared_tools_are_the_ones_the_server_lists() {
    let bundle = bundle();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    std::fs::copy(workspace().join("fixtures/demo.db"), &db).unwrap();
    // The manifest declares PostgreSQL's tools (what `the_bundle_serves_postgres_…`
    // checks whole); on the demo's SQLite file the same, but `explain`.
    assert_eq!(
        crate::support::stdio::tool_names(&bundle.manifest),
        ["describe_table", "diagnose", "explain", "list_tables", "query"]
    );
    let mut server = start(bundle, &[("database_file", json!(db.to_str().unwrap()))]);
    let listed = server.request("tools/list", json!({}));
    assert_eq!(
        crate::support::stdio::tool_names(&listed["result"]),
        ["describe_table", "list_tables", "query"]
    );
}

#[test]
fn the_bundle_serves_postgres_as_claude_desktop_starts_it() {
    let server_pg = pg::server();
    let db = server_pg.database();
    db.psql("CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 3)");
    // What a person types: the connection string without the password, the
    // password in its own (keychain) field; the file left empty.
    let connection = format!(
        "postgresql://{}@{}:{}/{}",
        server_pg.admin_user(),
        server_pg.host(),
        server_pg.port(),
        db.name
    );
    let mut server = start(
        bundle(),
        &[
            ("connection_string", json!(connection)),
            ("password", json!(server_pg.admin_password())),
            ("max_rows", json!(2)),
        ],
    );
    // What it lists is what the bundle declares, name and description.
    let tools = server.request("tools/list", json!({}));
    let listed: Vec<Value> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!({"name": t["name"], "description": t["description"]}))
        .collect();
    assert_eq!(Value::Array(listed), bundle().manifest["tools"]);
    let answer = query(&mut server, "SELECT n FROM t ORDER BY n");
    let rows = tool_json(&answer);
    assert_eq!(rows["rows"], json!([{"n": 1}, {"n": 2}]), "{}", tool_text(&answer));
    assert_eq!(rows["truncated"], true, "max_rows 2 cut the third row");
    let write = query(&mut server, "INSERT INTO t VALUES (4)");
    assert_eq!(write["isError"], true, "read-only by default: {write}");
    assert_eq!(db.psql("SELECT count(*) FROM t"), "3");
}

#[test]
fn the_bundle_serves_an_sqlite_file_with_empty_optional_settings_unset() {
    // Claude Desktop substitutes "" for every optional field left empty:
    // the connection string, the password, the row cap, and (explicitly
    // here) read-only. Each must act as unset: no PostgreSQL, no empty
    // password, pgmcp's own row cap, read-only on.
    serves_sqlite_with_settings_left_empty(
        &[
            ("connection_string", json!("")),
            ("password", json!("")),
            ("max_rows", json!("")),
            ("read_only", json!("")),
        ],
        LeftEmpty::Blank,
    );
}

#[test]
fn the_bundle_serves_an_sqlite_file_when_empty_settings_come_through_unsubstituted() {
    serves_sqlite_with_settings_left_empty(&[], LeftEmpty::Literal);
}

fn serves_sqlite_with_settings_left_empty(empty: &[(&str, Value)], left_empty: LeftEmpty) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    std::fs::copy(workspace().join("fixtures/demo.db"), &db).unwrap();
    let mut settings = vec![("database_file", json!(db.to_str().unwrap()))];
    settings.extend(empty.iter().cloned());
    let mut server = start_with(bundle(), &settings, left_empty);
    let answer = query(&mut server, "SELECT count(*) AS n FROM customers");
    let n = tool_json(&answer)["rows"][0]["n"].as_i64().unwrap();
    assert!(n > 0, "{}", tool_text(&answer));
    // 600 rows asked for; the default cap (500) applies.
    let answer = query(
        &mut server,
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 600) SELECT i FROM s",
    );
    let rows = tool_json(&answer);
    assert_eq!(rows["rows"].as_array().unwrap().len(), 500, "{}", tool_text(&answer));
    assert_eq!(rows["truncated"], true);
    let write = query(&mut server, "DELETE FROM customers");
    assert_eq!(write["isError"], true, "read-only by default: {write}");
    let again = query(&mut server, "SELECT count(*) AS n FROM customers");
    assert_eq!(tool_json(&again)["rows"][0]["n"].as_i64().unwrap(), n);
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(10)).success());
}

#[test]
fn a_connection_string_and_a_file_both_set_are_explained_in_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let file = shop_file(dir.path());
    explained(
        &[
            ("connection_string", json!("postgresql://me@db.example:5432/shop")),
            ("database_file", json!(file)),
        ],
        &[],
        &[
            "both a PostgreSQL connection string and a database file are set in pgmcp's settings",
            &format!("\"{}\"", title("connection_string")),
            &format!("\"{}\"", title("database_file")),
            "Clear one of them",
            "then restart pgmcp.",
        ],
    );
}

#[test]
fn settings_that_are_no_value_are_explained_by_their_titles() {
    let dir = tempfile::tempdir().unwrap();
    let file = shop_file(dir.path());
    for (key, value, variable, problem) in [
        (
            "max_rows",
            "abc",
            "PGMCP_MAX_ROWS",
            "\"abc\" is not a whole number greater than 0",
        ),
        (
            "read_only",
            "maybe",
            "PGMCP_READ_ONLY",
            "\"maybe\" is not true or false",
        ),
        ("demo", "maybe", "PGMCP_DEMO", "\"maybe\" is not true or false"),
    ] {
        explained(
            &[("database_file", json!(file)), (key, json!(value))],
            &[],
            &[&format!(
                "the setting \"{}\" ({variable}) cannot be used: {problem}",
                title(key)
            )],
        );
    }
}

/// The bundle's pgmcp reads the person's config file like any other: one
/// that does not load is explained, naming the file and the field.
#[test]
fn an_invalid_config_file_is_explained_to_a_bundle_user() {
    let dir = tempfile::tempdir().unwrap();
    let file = shop_file(dir.path());
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(config_dir.join("pgmcp")).unwrap();
    let config = config_dir.join("pgmcp/config.json");
    std::fs::write(&config, r#"{"query": {"max_row": 5}}"#).unwrap();
    let bundle = bundle();
    let mut server = spawn(
        bundle,
        &[("database_file", json!(file))],
        LeftEmpty::Blank,
        &[("XDG_CONFIG_HOME", config_dir.to_str().unwrap())],
    );
    server.initialize_unstarted();
    let answer = query(&mut server, "SELECT 1");
    assert_eq!(answer["isError"], true, "{answer}");
    let text = tool_text(&answer);
    assert!(
        text.starts_with(&format!(
            "pgmcp could not start: the config file {}: query.max_row: unknown field: did you mean max_rows?",
            config.display()
        )),
        "{text}"
    );
    assert!(
        text.ends_with("Correct it in that file (`pgmcp check` says what is wrong), then restart pgmcp."),
        "{text}"
    );
}

/// "Try the demo shop": a person with no database asks about the shop
/// pgmcp carries, read-only, kept in pgmcp's cache directory.
#[test]
fn the_demo_setting_serves_the_shop() {
    let cache = tempfile::tempdir().unwrap();
    let bundle = bundle();
    let mut server = spawn(
        bundle,
        &[("demo", json!(true)), ("read_only", json!(false))],
        LeftEmpty::Literal,
        &[("XDG_CACHE_HOME", cache.path().to_str().unwrap())],
    );
    server.initialize();
    let answer = query(
        &mut server,
        "SELECT customer, sum(total) AS spent FROM order_totals GROUP BY customer ORDER BY spent DESC LIMIT 3",
    );
    let rows = tool_json(&answer);
    assert_eq!(rows["rows"].as_array().map(Vec::len), Some(3), "{}", tool_text(&answer));
    let write = query(&mut server, "UPDATE products SET price = 0");
    assert_eq!(write["isError"], true, "read-only whatever the setting says: {write}");
    assert_eq!(
        std::fs::read(cache.path().join("pgmcp/demo.db")).unwrap(),
        std::fs::read(workspace().join("fixtures/demo.db")).unwrap()
    );
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(10)).success());
}

#[test]
fn the_demo_with_a_database_file_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let file = shop_file(dir.path());
    explained(
        &[("demo", json!(true)), ("database_file", json!(file))],
        &[("XDG_CACHE_HOME", dir.path().join("cache").to_str().unwrap())],
        &[
            &format!(
                "\"{}\" and \"{}\"), and each names a database",
                title("database_file"),
                title("demo")
            ),
            &format!(
                "Turn \"{}\" off, or clear \"{}\"",
                title("demo"),
                title("database_file")
            ),
        ],
    );
    assert!(!dir.path().join("cache").exists(), "the demo shop was written");
}

/// README's table of the bundle's settings is the manifest's: each setting
/// by its title, and the variable it reaches pgmcp as.
#[test]
fn the_readme_lists_the_bundles_settings_as_the_manifest_declares_them() {
    let manifest = &bundle().manifest;
    let env = manifest["server"]["mcp_config"]["env"].as_object().unwrap();
    let mut declared: Vec<(String, String)> = manifest["user_config"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, option)| {
            let placeholder = json!(format!("${{user_config.{key}}}"));
            let variable = env.iter().find(|(_, v)| **v == placeholder).unwrap().0;
            (option["title"].as_str().unwrap().to_owned(), variable.clone())
        })
        .collect();
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let mut listed: Vec<(String, String)> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| Setting | What to give | Reaches pgmcp as |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            (cells[0].to_owned(), cells[cells.len() - 1].trim_matches('`').to_owned())
        })
        .collect();
    declared.sort();
    listed.sort();
    assert_eq!(listed, declared);
}

#[test]
fn dist_archive_holds_the_binary_and_its_documents() {
    let dir = tempfile::tempdir().unwrap();
    let target = "x86_64-unknown-linux-gnu";
    let stdout = ok(
        xtask(&[
            "dist",
            "--binary",
            env!("CARGO_BIN_EXE_pgmcp"),
            "--target",
            target,
            "--out-dir",
            dir.path().to_str().unwrap(),
        ]),
        "cargo xtask dist",
    );
    let stem = format!("pgmcp-{}-{target}", env!("CARGO_PKG_VERSION"));
    let archive = dir.path().join(format!("{stem}.tar.gz"));
    assert_eq!(PathBuf::from(stdout.trim()), archive);
    let sums = Command::new("sha256sum")
        .args(["-c", &format!("{stem}.tar.gz.sha256")])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(sums.status.success(), "{}", String::from_utf8_lossy(&sums.stdout));
    let unpack = Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(unpack.success());
    let top = dir.path().join(&stem);
    for doc in ["README.md", "LICENSE", "claude_desktop_config.example.json"] {
        assert_eq!(
            std::fs::read(top.join(doc)).unwrap(),
            std::fs::read(workspace().join(doc)).unwrap(),
            "{doc}"
        );
    }
    // The unpacked binary runs.
    let version = Command::new(top.join("pgmcp")).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("pgmcp {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn registry_entry_carries_the_sum_of_every_bundle_it_names() {
    let bundle = bundle();
    let server: Value = serde_json::from_slice(&std::fs::read(workspace().join("server.json")).unwrap()).unwrap();
    let names: Vec<String> = server["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["registryType"] == "mcpb")
        .map(|p| p["identifier"].as_str().unwrap().rsplit('/').next().unwrap().to_owned())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("-darwin-universal.mcpb")));
    assert!(names.iter().any(|n| n.ends_with("-win32-x64.mcpb")));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // Missing bundles are named, and nothing is written.
    let refused = xtask(&["registry", "--out-dir", out]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    for name in &names {
        assert!(said.contains(name.as_str()), "{said}");
    }
    assert!(!dir.path().join("server.json").exists());
    // This test has one platform's bundle; the others are the same bytes under
    // their release names, which is all the registry entry looks at.
    for name in &names {
        std::fs::hard_link(&bundle.file, dir.path().join(name)).unwrap();
    }
    let written = PathBuf::from(ok(xtask(&["registry", "--out-dir", out]), "cargo xtask registry").trim());
    let entry: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    let sum = std::fs::read_to_string(format!("{}.sha256", bundle.file.display())).unwrap();
    let sum = sum.split_whitespace().next().unwrap();
    for package in entry["packages"].as_array().unwrap() {
        if package["registryType"] == "mcpb" {
            assert_eq!(package["fileSha256"], sum, "{package}");
        } else {
            assert_eq!(package["registryType"], "cargo");
            assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
        }
    }
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn release_workflow_parses_and_calls_only_tasks_that_exist() {
    ok(xtask(&["check-workflow"]), "cargo xtask check-workflow");
    // The check can fail: a misspelt task in a copy of the workflow.
    let dir = tempfile::tempdir().unwrap();
    let workflow = std::fs::read_to_string(workspace().join(".github/workflows/release.yml")).unwrap();
    assert!(workflow.contains("cargo xtask mcpb"));
    let broken = dir.path().join("release.yml");
    std::fs::write(&broken, workflow.replace("cargo xtask mcpb", "cargo xtask bundle")).unwrap();
    let refused = xtask(&["check-workflow", "--file", broken.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("`cargo xtask bundle` is not a task"));
}

/// What ring's build script watches (`rerun-if-env-changed`) among the
/// variables `cargo run` sets for the program it runs: a nested `cargo
/// build` that inherits their xtask values reruns it.
const WATCHED: &[&str] = &[
    "CARGO_PKG_NAME",
    "CARGO_PKG_VERSION",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
];

#[test]
fn dist_builds_nothing_the_release_build_already_built() {
    // A stand-in workspace whose build script watches what ring's does, so
    // the real task's real nested `cargo build` runs in seconds (the real
    // one compiles DuckDB). It is named pgmcp, has a `duckdb` feature and
    // the shipped documents, as the task expects.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("workspace");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"pgmcp\"\nversion = \"0.0.1\"\nedition = \"2021\"\n\
         repository = \"https://example.invalid/pgmcp\"\npublish = false\n\n\
         [features]\nduckdb = []\n\n[workspace]\n",
    )
    .unwrap();
    let watches: String = WATCHED
        .iter()
        .map(|name| format!("    println!(\"cargo:rerun-if-env-changed={name}\");\n"))
        .collect();
    std::fs::write(root.join("build.rs"), format!("fn main() {{\n{watches}}}\n")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    for doc in ["README.md", "LICENSE", "claude_desktop_config.example.json"] {
        std::fs::write(root.join(doc), "stand-in\n").unwrap();
    }
    let target = dir.path().join("target");
    // A person's shell in that workspace: none of what `cargo test` set
    // for this test, their own CARGO_TARGET_DIR.
    let shell = |args: &[&str]| {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.current_dir(&root).env("CARGO_TARGET_DIR", &target).args(args);
        for name in WATCHED {
            cargo.env_remove(name);
        }
        cargo
    };
    let compiled = |output: &Output| String::from_utf8_lossy(&output.stderr).contains("Compiling pgmcp");

    // The README's release build, then `cargo xtask dist` (the alias: `cargo
    // run` of the xtask package) in the same shell.
    let built = shell(&["build", "--release", "--features", "duckdb"]).output().unwrap();
    assert!(compiled(&built), "{}", String::from_utf8_lossy(&built.stderr));
    let xtask_target = Path::new(env!("CARGO_BIN_EXE_pgmcp"))
        .ancestors()
        .nth(2)
        .unwrap()
        .join("xtask-target");
    let manifest = workspace().join("Cargo.toml");
    let out_dir = dir.path().join("dist");
    let dist = shell(&[
        "run",
        "--quiet",
        "--profile",
        "xtask",
        "--package",
        "xtask",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "--target-dir",
        xtask_target.to_str().unwrap(),
        "--",
        "dist",
        "--out-dir",
        out_dir.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let said = String::from_utf8_lossy(&dist.stderr).into_owned();
    assert!(!compiled(&dist), "dist rebuilt what the release build built:\n{said}");
    let stdout = ok(dist, "cargo xtask dist");
    assert!(said.contains("Finished `release` profile"), "{said}");
    // The person's CARGO_TARGET_DIR reached the nested build: the binary it
    // packaged is the one built there.
    assert!(
        said.contains(&target.join("release/pgmcp").display().to_string()),
        "{said}"
    );
    let archive = PathBuf::from(stdout.trim());
    assert!(archive.starts_with(&out_dir) && archive.is_file(), "{stdout}");
    // And the next release build has nothing to rebuild back.
    let again = shell(&["build", "--release", "--features", "duckdb"]).output().unwrap();
    assert!(!compiled(&again), "{}", String::from_utf8_lossy(&again.stderr));

    // The stand-in can tell: a build that inherits the task's description of
    // itself, as the nested build did before, reruns its build script.
    let inherited = shell(&["build", "--release", "--features", "duckdb"])
        .env("CARGO_PKG_NAME", "xtask")
        .output()
        .unwrap();
    assert!(compiled(&inherited), "{}", String::from_utf8_lossy(&inherited.stderr));
}
