//! The first hour, as the README tells it, with the binary under test.
//!
//! It follows, in order: "Install" → "Any client: download the program,
//! then `pgmcp install`" (the archive `cargo xtask dist` makes of this
//! binary, its sum checked, unpacked, the program installed: the README's
//! own lines, with `~/bin` for `/usr/local/bin` and no `sudo`); "Quick
//! start" (`pgmcp demo`, then the two lines it prints, as printed); and
//! "Add it with `pgmcp install`" (Claude Desktop's own file, found where
//! the README says on Linux; the same install twice; the README's install
//! line for one's own PostgreSQL, then for a second database, refused under
//! the same name, and the line the refusal prints run as printed). Every
//! entry is then started exactly as written (command, args, env) by the
//! official MCP Python SDK, as a client starts it, and asked a question.
//!
//! Each command runs through `sh -c`, as typed, in a shell whose HOME is a
//! temp dir. Where the README's words and what happens disagree, one of
//! them is wrong: fix that, not this script.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::python_sdk::PYTHON_SDK;
use crate::support::xtask::{ok, xtask};
use crate::support::{pg, tools};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// The first ```sh block after `heading` in the README, one command a line
/// (comments and blank lines left out).
fn sh_block(heading: &str) -> Vec<String> {
    let text = readme();
    let after = &text[text
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"))..];
    let block = after
        .split("```sh\n")
        .nth(1)
        .expect("a sh block")
        .split("```")
        .next()
        .unwrap();
    block
        .lines()
        .map(|line| line.split(" #").next().unwrap().trim().to_owned())
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// A person's shell: HOME a temp dir, `~/bin` first on the PATH.
struct Newcomer {
    _dir: tempfile::TempDir,
    /// The temp dir with symlinks resolved, as pgmcp writes paths.
    home: PathBuf,
}

impl Newcomer {
    fn new() -> Newcomer {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        Newcomer { _dir: dir, home }
    }

    fn home(&self) -> &Path {
        &self.home
    }

    fn bin(&self) -> PathBuf {
        self.home().join("bin")
    }

    fn path(&self) -> String {
        format!("{}:{}", self.bin().display(), std::env::var("PATH").unwrap_or_default())
    }

    /// `line` as typed, in `dir`.
    fn sh(&self, dir: &Path, line: &str) -> Output {
        let mut shell = Command::new("sh");
        shell
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", self.home())
            .current_dir(dir)
            .args(["-c", line]);
        crate::support::read_as_login_where_told(&mut shell);
        shell.output().unwrap()
    }

    /// `line`, which must exit with `code`; its stdout and stderr.
    fn run(&self, dir: &Path, line: &str, code: i32) -> (String, String) {
        let out = self.sh(dir, line);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "$ {line}\n(in {})\nstdout: {stdout}\nstderr: {stderr}",
            dir.display()
        );
        (stdout, stderr)
    }

    /// Claude Desktop's file on Linux, as the README names it.
    fn claude_file(&self) -> PathBuf {
        self.home().join(".config/Claude/claude_desktop_config.json")
    }

    fn servers(&self) -> Value {
        let text = std::fs::read_to_string(self.claude_file()).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["mcpServers"].clone()
    }

    /// Start `entry` as Claude Desktop does (its command, args and env,
    /// over this person's environment) with the official Python SDK, and
    /// call `query` with `sql`: the tool's result.
    fn ask(&self, entry: &Value, sql: &str) -> Value {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/clients/python_sdk_catalog.py");
        let plan = json!([{"op": "tool", "name": "query", "arguments": {"sql": sql}}]);
        let mut client = Command::new(tools::python("PGMCP_TEST_PYTHON", "py", &[PYTHON_SDK]));
        client
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", self.home())
            .arg(script)
            .arg(plan.to_string())
            .arg(entry["command"].as_str().unwrap());
        for arg in entry["args"].as_array().unwrap() {
            client.arg(arg.as_str().unwrap());
        }
        for (name, value) in entry["env"].as_object().into_iter().flatten() {
            client.env(name, value.as_str().unwrap());
        }
        crate::support::read_as_login_where_told(&mut client);
        let out = client.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let seen: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        let answer = &seen["steps"][0];
        assert_eq!(answer["isError"], false, "{entry}: {seen}");
        answer["structured"].clone()
    }
}

/// The line of `said` that starts with `  pgmcp <verb>`, as a shell line.
fn printed_line(said: &str, verb: &str) -> String {
    let start = format!("pgmcp {verb} ");
    let lines: Vec<&str> = said
        .lines()
        .filter(|line| line.starts_with("  ") && line.trim_start().starts_with(&start))
        .collect();
    assert_eq!(lines.len(), 1, "one `{start}` line in: {said}");
    lines[0].trim().to_owned()
}

#[test]
fn the_first_hour_from_the_release_archive_to_three_servers_in_claude_desktop() {
    let person = Newcomer::new();
    let downloads = person.home().join("Downloads");
    let work = person.home().join("shop");
    for dir in [&downloads, &work, &person.bin()] {
        std::fs::create_dir_all(dir).unwrap();
    }

    // Install, "Any client": the archive of this binary, as a release makes
    // it, downloaded with its .sha256.
    let stdout = ok(
        xtask(&[
            "dist",
            "--binary",
            env!("CARGO_BIN_EXE_pgmcp"),
            "--out-dir",
            downloads.to_str().unwrap(),
        ]),
        "cargo xtask dist",
    );
    let archive = PathBuf::from(stdout.trim());
    let archive_name = archive.file_name().unwrap().to_str().unwrap();
    let stem = archive_name.strip_suffix(".tar.gz").expect("a .tar.gz on Linux");
    let steps = sh_block("### Any client: download the program");
    assert_eq!(steps.len(), 4, "{steps:?}");
    let example = "pgmcp-0.1.0-x86_64-unknown-linux-gnu";
    for step in &steps[..3] {
        assert!(step.contains(example), "{step}");
        let line = step
            .replace(example, stem)
            .replace("sudo ", "")
            .replace("/usr/local/bin/", "~/bin/");
        person.run(&downloads, &line, 0);
    }
    let installed = person.bin().join("pgmcp");
    let (found, _) = person.run(&work, "command -v pgmcp", 0);
    assert_eq!(found.trim(), installed.to_str().unwrap());

    // Quick start: `pgmcp demo` writes the shop here and prints the two
    // lines to run next.
    assert!(sh_block("## Quick start").contains(&"pgmcp demo".to_owned()));
    let (said, _) = person.run(&work, "pgmcp demo", 0);
    let demo_db = work.join("pgmcp-demo.db");
    assert!(demo_db.is_file(), "{said}");
    let written = std::fs::read(&demo_db).unwrap();
    let query_line = printed_line(&said, "query");
    let install_line = printed_line(&said, "install");
    // "never over an existing file"
    let (_, refused) = person.run(&work, "pgmcp demo", 2);
    assert!(refused.contains("already exists"), "{refused}");
    assert_eq!(std::fs::read(&demo_db).unwrap(), written);

    // The query through the guarded pipeline, as printed.
    let (answer, _) = person.run(&work, &query_line, 0);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let rows = answer["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{answer}");
    assert!(
        rows.iter()
            .all(|row| row["customer"].is_string() && row["spent"].is_number()),
        "{answer}"
    );

    // The install line, as printed: into Claude Desktop's own file.
    assert!(
        install_line.starts_with("pgmcp install claude-desktop "),
        "{install_line}"
    );
    let file = person.claude_file();
    let (said, _) = person.run(&work, &install_line, 0);
    assert!(
        said.contains(&format!("Added the \"pgmcp-demo\" entry to {}", file.display())),
        "{said}"
    );
    assert!(said.contains("Restart Claude Desktop"), "{said}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let demo_entry = person.servers()["pgmcp-demo"].clone();
    assert_eq!(
        demo_entry,
        json!({
            "command": installed.to_str().unwrap(),
            "args": ["serve"],
            "env": {"PGMCP_DATABASE": format!("sqlite:{}", demo_db.display())},
        })
    );
    let shop = person.ask(
        &demo_entry,
        "SELECT customer, sum(total) AS spent FROM order_totals GROUP BY customer ORDER BY spent DESC LIMIT 3",
    );
    assert_eq!(shop["rows"].as_array().unwrap().len(), 3, "{shop}");
    assert_eq!(shop["rows"][0]["spent"], rows[0]["spent"], "{shop}");

    // The same install again: nothing changes, and it says so.
    let before = std::fs::read(&file).unwrap();
    let (said, _) = person.run(&work, &install_line, 0);
    assert!(
        said.contains("already has this \"pgmcp-demo\" entry: nothing changed"),
        "{said}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // One's own PostgreSQL, with the README's install line: the password in
    // ~/.pgpass, as the README advises, so the URL holds none.
    let server = pg::server();
    let sales = server.database();
    sales.psql("CREATE TABLE customers (name text); INSERT INTO customers VALUES ('Ada'), ('Grace')");
    let stock = server.database();
    stock.psql("CREATE TABLE products (sku text); INSERT INTO products VALUES ('mug'), ('pen'), ('tea')");
    let pgpass = person.home().join(".pgpass");
    let field = |text: &str| text.replace('\\', "\\\\").replace(':', "\\:");
    std::fs::write(
        &pgpass,
        format!(
            "*:*:*:{}:{}\n",
            field(server.admin_user()),
            field(server.admin_password())
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let url = |db: &pg::TestDb| {
        format!(
            "postgresql://{}@{}:{}/{}",
            server.admin_user(),
            server.host(),
            server.port(),
            db.name
        )
    };
    let readme_example = "'postgresql://agent_readonly@localhost:5432/shop'";
    assert!(steps[3].starts_with("pgmcp install claude-desktop --database ") && steps[3].ends_with(readme_example));
    let (said, _) = person.run(
        &work,
        &steps[3].replace(readme_example, &format!("'{}'", url(&sales))),
        0,
    );
    assert!(said.contains("Added the \"pgmcp\" entry"), "{said}");
    assert!(said.contains(&format!("kept as {}.bak", file.display())), "{said}");

    // A second database with the same line: refused, the file untouched,
    // and the line that keeps both printed.
    let before = std::fs::read(&file).unwrap();
    let (_, refused) = person.run(
        &work,
        &steps[3].replace(readme_example, &format!("'{}'", url(&stock))),
        2,
    );
    for expected in [
        "already has a \"pgmcp\" entry, for another database: ".to_owned(),
        url(&sales),
        format!("This install is for {}", url(&stock)),
        "left unchanged".to_owned(),
        "--replace".to_owned(),
    ] {
        assert!(refused.contains(&expected), "no {expected:?} in: {refused}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let keep_both = printed_line(&refused, "install");
    assert!(keep_both.contains(&format!("--name {} ", stock.name)), "{keep_both}");
    let (said, _) = person.run(&work, &keep_both, 0);
    assert!(said.contains(&format!("Added the \"{}\" entry", stock.name)), "{said}");

    // Three servers, the first two as they were, each answering from its
    // own database.
    let servers = person.servers();
    let names: Vec<&str> = servers.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(names, ["pgmcp-demo", "pgmcp", stock.name.as_str()]);
    assert_eq!(servers["pgmcp-demo"], demo_entry);
    for (name, db) in [("pgmcp", &sales), (stock.name.as_str(), &stock)] {
        assert_eq!(
            servers[name],
            json!({"command": installed.to_str().unwrap(), "args": ["serve"], "env": {"PGMCP_DATABASE": url(db)}})
        );
    }
    let shop = person.ask(&servers["pgmcp-demo"], "SELECT count(*) AS n FROM customers");
    assert!(shop["rows"][0]["n"].as_i64().unwrap() > 2, "{shop}");
    let sold = person.ask(&servers["pgmcp"], "SELECT name FROM customers ORDER BY name");
    assert_eq!(sold["rows"], json!([{"name": "Ada"}, {"name": "Grace"}]));
    let stocked = person.ask(&servers[stock.name.as_str()], "SELECT sku FROM products ORDER BY sku");
    assert_eq!(stocked["rows"], json!([{"sku": "mug"}, {"sku": "pen"}, {"sku": "tea"}]));
}
