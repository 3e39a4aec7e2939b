//! `pgmcp install`, through the binary against real files in temp dirs: what
//! the client's config file holds afterwards (and what it still holds), the
//! password kept out of `args`, `--print` and Cursor's link, and the written
//! entry started exactly as a client starts it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::process::{mkfifo, run, text, within};
use crate::support::stdio::{McpProcess, tool_json};
use crate::support::{pg, pgmcp, pgmcp_std};

/// `pgmcp install <args>` in `home`; panics with everything it printed
/// unless it exits with `code`.
fn install(home: &Path, args: &[&str], code: i32) -> Output {
    let out = pgmcp(home).arg("install").args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "pgmcp install {args:?}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn bak(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap().to_owned();
    name.push(".bak");
    path.with_file_name(name)
}

/// The test build's binary, as the entry must name it.
fn binary() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_pgmcp"))
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const OTHERS: &str = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"DEBUG": "1"}}
  },
  "zoom": 1.250
}"#;

#[test]
fn other_servers_and_keys_are_kept_and_the_previous_file_backed_up() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("claude_desktop_config.json");
    std::fs::write(&file, OTHERS).unwrap();
    let before = read_json(&file);
    let out = install(
        home.path(),
        &["claude-desktop", "--client-config", file.to_str().unwrap()],
        0,
    );

    let after = read_json(&file);
    assert_eq!(keys(&after), ["globalShortcut", "mcpServers", "zoom"]);
    assert_eq!(after["globalShortcut"], before["globalShortcut"]);
    // Numbers keep their digits, not just their value.
    assert!(std::fs::read_to_string(&file).unwrap().contains("1.250"));
    assert_eq!(keys(&after["mcpServers"]), ["filesystem", "pgmcp"]);
    assert_eq!(after["mcpServers"]["filesystem"], before["mcpServers"]["filesystem"]);
    assert_eq!(
        after["mcpServers"]["pgmcp"],
        json!({"command": binary(), "args": ["serve"]})
    );
    assert_eq!(std::fs::read_to_string(bak(&file)).unwrap(), OTHERS);

    let said = stdout(&out);
    assert!(
        said.contains(&format!("Added the \"pgmcp\" entry to {}", file.display())),
        "{said}"
    );
    assert!(said.contains(&format!("kept as {}", bak(&file).display())), "{said}");
    assert!(said.contains("Restart Claude Desktop"), "{said}");
    // No password: no note about one.
    assert!(!stderr(&out).contains("PGPASSWORD"), "{}", stderr(&out));
}

#[test]
fn a_malformed_client_config_is_refused_and_left_as_it_was() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("mcp.json");
    let cases = [
        ("{\"mcpServers\": {},}\n", "not valid JSON"),
        ("// my servers\n{}", "not valid JSON"),
        ("[]", "the top level is not a JSON object"),
        (r#"{"mcpServers": ["pgmcp"]}"#, "\"mcpServers\" is not a JSON object"),
        ("\u{feff}{}", "not valid JSON"),
        // Which of two entries of one name a client starts is the client's
        // guess; pgmcp's rewrite would silently keep only the last.
        (
            r#"{"mcpServers": {"pgmcp": {"command": "/opt/a/pgmcp"}, "other": {"command": "x"}, "pgmcp": {"command": "/opt/b/pgmcp"}}}"#,
            r#"the same key twice in one object: "mcpServers"."pgmcp""#,
        ),
        (
            r#"{"mcpServers": {"a": {"command": "a"}}, "mcpServers": {"b": {"command": "b", "env": {"X": "1", "X": "2"}}}}"#,
            r#"the same key twice in one object: "mcpServers", "mcpServers"."b"."env"."X""#,
        ),
    ];
    for (text, reason) in cases {
        std::fs::write(&file, text).unwrap();
        let out = install(home.path(), &["cursor", "--client-config", file.to_str().unwrap()], 2);
        let said = stderr(&out);
        assert!(said.contains(&file.display().to_string()), "{text:?}: {said}");
        assert!(said.contains(reason), "{text:?}: {said}");
        assert!(said.contains("left unchanged"), "{text:?}: {said}");
        assert_eq!(std::fs::read(&file).unwrap(), text.as_bytes(), "{text:?}");
        assert!(!bak(&file).exists(), "{text:?}");
        assert!(stdout(&out).is_empty(), "{text:?}");
    }
}

#[test]
fn a_password_goes_to_env_never_to_args() {
    let home = tempfile::tempdir().unwrap();
    // (given, PGMCP_DATABASE, PGPASSWORD)
    let cases = [
        (
            "postgresql://agent:p%40ss%2Fw%3Ard%20x@db.example.com:5433/shop?sslmode=require",
            "postgresql://agent@db.example.com:5433/shop?sslmode=require",
            "p@ss/w:rd x",
        ),
        (
            "postgres://agent@db.example.com/shop?password=s%26cret&application_name=desk",
            "postgres://agent@db.example.com/shop?application_name=desk",
            "s&cret",
        ),
        (
            r"host=db.example.com user=agent password='it\'s secret' dbname=shop",
            "host=db.example.com user=agent dbname=shop",
            "it's secret",
        ),
    ];
    for (n, (given, database, password)) in cases.into_iter().enumerate() {
        let file = home.path().join(format!("new-dir-{n}/claude_desktop_config.json"));
        let out = install(
            home.path(),
            &[
                "claude-desktop",
                "--database",
                given,
                "--client-config",
                file.to_str().unwrap(),
            ],
            0,
        );
        let entry = &read_json(&file)["mcpServers"]["pgmcp"];
        assert_eq!(entry["args"], json!(["serve"]), "{given}");
        assert_eq!(
            entry["env"],
            json!({"PGMCP_DATABASE": database, "PGPASSWORD": password}),
            "{given}"
        );
        assert_eq!(keys(&entry["env"]), ["PGMCP_DATABASE", "PGPASSWORD"]);
        // A new file may hold a password: only its owner reads it.
        assert_eq!(mode(&file), 0o600, "{given}");
        let said = stderr(&out);
        assert!(said.contains("~/.pgpass") && said.contains("PGPASSFILE"), "{said}");
        assert!(!said.contains(password) && !stdout(&out).contains(password), "{said}");
    }
}

/// A password is never written into a file others can read: pgmcp refuses,
/// changes nothing (not the file, not its mode, no `.bak`), and says both
/// ways out. The same file takes an entry without a password, keeping its
/// mode; made the owner's alone, it takes the password.
#[test]
fn a_password_is_never_written_where_others_can_read_it() {
    let home = tempfile::tempdir().unwrap();
    let secret = "pw-Zq8SECRETvB3";
    let url = format!("postgresql://u:{secret}@h/db");
    for readable in [0o644, 0o640, 0o604, 0o660] {
        let file = home.path().join(format!("mcp-{readable:o}.json"));
        std::fs::write(&file, OTHERS).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(readable)).unwrap();
        let with_password = ["cursor", "--database", &url, "--client-config", file.to_str().unwrap()];
        let out = install(home.path(), &with_password, 2);
        let said = stderr(&out);
        for expected in [
            file.display().to_string(),
            format!("mode 0{readable:o}"),
            format!("chmod 600 {}", file.display()),
            "~/.pgpass".to_owned(),
            "left unchanged".to_owned(),
        ] {
            assert!(said.contains(&expected), "{readable:o}: no {expected:?} in: {said}");
        }
        assert!(!said.contains(secret) && !stdout(&out).contains(secret), "{said}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), OTHERS, "{readable:o}");
        assert_eq!(mode(&file), readable);
        assert!(!bak(&file).exists(), "{readable:o}");

        // Without a password the file is fine as it is, and keeps its mode.
        install(
            home.path(),
            &[
                "cursor",
                "--database",
                "postgresql://u@h/db",
                "--client-config",
                file.to_str().unwrap(),
            ],
            0,
        );
        assert_eq!(mode(&file), readable);
        assert_eq!(
            read_json(&file)["mcpServers"]["pgmcp"]["env"]["PGMCP_DATABASE"],
            "postgresql://u@h/db"
        );

        // The owner's alone: the password goes in, and the mode stays 0600.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        install(home.path(), &with_password, 0);
        assert_eq!(read_json(&file)["mcpServers"]["pgmcp"]["env"]["PGPASSWORD"], secret);
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&bak(&file)), 0o600);

        // Opened up again afterwards: the same entry is not let stand as
        // "nothing changed"; the file is still left as it is.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(readable)).unwrap();
        let before = std::fs::read(&file).unwrap();
        let said = stderr(&install(home.path(), &with_password, 2));
        assert!(said.contains(&format!("chmod 600 {}", file.display())), "{said}");
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }

    // Through a symlink (dotfiles), the target's mode is what others read.
    let target = home.path().join("dotfiles-mcp.json");
    std::fs::write(&target, "{}\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = home.path().join("linked-mcp.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    install(
        home.path(),
        &["cursor", "--database", &url, "--client-config", link.to_str().unwrap()],
        2,
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}\n");
}

#[test]
fn running_it_again_updates_in_place_and_changes_nothing_more() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("mcp.json");
    let original = r#"{"mcpServers": {"a": {"command": "a"}, "shop": {"command": "/old/pgmcp", "args": ["serve"]}, "b": {"command": "b"}}}"#;
    std::fs::write(&file, original).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let args = [
        "cursor",
        "--name",
        "shop",
        "--database",
        "sqlite:shop.db",
        "--client-config",
        file.to_str().unwrap(),
    ];
    std::fs::write(home.path().join("shop.db"), b"").unwrap();

    let first = install(home.path(), &args, 0);
    assert!(
        stdout(&first).contains("Updated the \"shop\" entry"),
        "{}",
        stdout(&first)
    );
    assert!(stdout(&first).contains("Reload Cursor"), "{}", stdout(&first));
    let once = std::fs::read(&file).unwrap();
    let servers = read_json(&file)["mcpServers"].clone();
    assert_eq!(keys(&servers), ["a", "shop", "b"]);
    assert_eq!(servers["shop"]["command"], binary());
    assert_eq!(mode(&file), 0o640);

    let second = install(home.path(), &args, 0);
    assert_eq!(std::fs::read(&file).unwrap(), once, "a second run changed the file");
    assert!(stdout(&second).contains("nothing changed"), "{}", stdout(&second));
    // The backup is still the file as it was before pgmcp first touched it.
    assert_eq!(std::fs::read_to_string(bak(&file)).unwrap(), original);
    // No temporary files left beside it.
    let mut names: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.') || n.ends_with(".tmp"))
        .collect();
    names.sort();
    assert!(names.is_empty(), "{names:?}");
}

/// A second database never silently takes the first one's entry: under the
/// same name it is refused, saying what is there (without its password)
/// and the line that keeps both, and the file is left byte for byte; with another
/// --name both are there; the same database again is an update; --replace
/// replaces, saying what it replaced.
#[test]
fn a_second_database_under_the_same_name_is_refused_until_named_or_replaced() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("claude_desktop_config.json");
    let f = file.to_str().unwrap();
    std::fs::write(home.path().join("shop.db"), b"").unwrap();
    let sqlite = format!("sqlite:{}", home.path().join("shop.db").display());
    let postgres = [
        "claude-desktop",
        "--database",
        "postgresql://agent:Zq8FIRSTpw@db.example.com/shop",
        "--client-config",
        f,
    ];
    install(home.path(), &postgres, 0);
    let first = std::fs::read(&file).unwrap();
    let pg_entry = read_json(&file)["mcpServers"]["pgmcp"].clone();

    let second = ["claude-desktop", "--database", "sqlite:shop.db", "--client-config", f];
    let refused = install(home.path(), &second, 2);
    let said = stderr(&refused);
    for expected in [
        format!("{} already has a \"pgmcp\" entry, for another database", file.display()),
        "postgresql://agent@db.example.com/shop".to_owned(),
        format!("This install is for {sqlite}"),
        // The line that keeps both, named after the file, ready to run.
        format!("\n  pgmcp install claude-desktop --name shop --database {sqlite} --client-config {f}\n"),
        "--replace".to_owned(),
        "left unchanged".to_owned(),
    ] {
        assert!(said.contains(&expected), "no {expected:?} in: {said}");
    }
    assert!(!said.contains("Zq8FIRSTpw"), "{said}");
    assert!(stdout(&refused).is_empty(), "{}", stdout(&refused));
    assert_eq!(std::fs::read(&file).unwrap(), first, "the refusal changed the file");
    assert!(!bak(&file).exists());

    // Another name: both entries, the first one as it was.
    let named = [
        "claude-desktop",
        "--name",
        "shop-sqlite",
        "--database",
        "sqlite:shop.db",
        "--client-config",
        f,
    ];
    install(home.path(), &named, 0);
    let servers = read_json(&file)["mcpServers"].clone();
    assert_eq!(keys(&servers), ["pgmcp", "shop-sqlite"]);
    assert_eq!(servers["pgmcp"], pg_entry);
    assert_eq!(servers["shop-sqlite"]["env"], json!({"PGMCP_DATABASE": sqlite}));

    // The same database with a new password is the same entry, updated.
    let new_password = [
        "claude-desktop",
        "--database",
        "postgresql://agent:Zq8NEWpw@db.example.com/shop",
        "--client-config",
        f,
    ];
    let updated = install(home.path(), &new_password, 0);
    assert!(
        stdout(&updated).contains("Updated the \"pgmcp\" entry"),
        "{}",
        stdout(&updated)
    );
    assert_eq!(read_json(&file)["mcpServers"]["pgmcp"]["env"]["PGPASSWORD"], "Zq8NEWpw");
    let again = install(home.path(), &new_password, 0);
    assert!(stdout(&again).contains("nothing changed"), "{}", stdout(&again));

    // --replace replaces, and says what was there.
    let replace = [
        "claude-desktop",
        "--database",
        "sqlite:shop.db",
        "--replace",
        "--client-config",
        f,
    ];
    let replaced = install(home.path(), &replace, 0);
    let said = stdout(&replaced);
    assert!(
        said.contains("Replaced the \"pgmcp\" entry") && said.contains("postgresql://agent@db.example.com/shop"),
        "{said}"
    );
    assert!(
        !said.contains("Zq8NEWpw") && !stderr(&replaced).contains("Zq8NEWpw"),
        "{said}"
    );
    let servers = read_json(&file)["mcpServers"].clone();
    assert_eq!(keys(&servers), ["pgmcp", "shop-sqlite"]);
    assert_eq!(servers["pgmcp"]["env"], json!({"PGMCP_DATABASE": sqlite}));

    // An entry written by hand, the database (and its password) in `args`,
    // is another database too, shown without the password.
    std::fs::write(
        &file,
        r#"{"mcpServers": {"pgmcp": {"command": "pgmcp", "args": ["serve", "--database", "postgresql://me:Zq8HANDpw@h/db"]}}}"#,
    )
    .unwrap();
    let before = std::fs::read(&file).unwrap();
    let said = stderr(&install(home.path(), &second, 2));
    assert!(said.contains("another database: postgresql://me@h/db."), "{said}");
    assert!(!said.contains("Zq8HANDpw"), "{said}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

/// An entry written by hand whose database is a malformed URL (another
/// case, a missing slash, a mistyped scheme, no scheme, a leading space):
/// the refusal names it redacted, never with its password, in what it
/// prints and in the file it leaves.
#[test]
fn a_malformed_entry_is_named_without_its_password() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("claude_desktop_config.json");
    let f = file.to_str().unwrap();
    let second = ["claude-desktop", "--database", "sqlite:shop.db", "--client-config", f];
    for (database, shown) in [
        ("postgresql:/a:LeakPwAA@h/db", "postgresql:***@h/db"),
        ("POSTGRESQL://a:LeakPwAA@h/db", "POSTGRESQL://***@h/db"),
        ("postgres:a:LeakPwAA@h/db", "postgres:***@h/db"),
        ("postgresq://a:LeakPwAA@h/db", "postgresq://***@h/db"),
        ("a:LeakPwAA@h/db", "a:***@h/db"),
        (" postgresql://a:LeakPwAA@h/db", " postgresql://***@h/db"),
    ] {
        let entry = json!({"mcpServers": {"pgmcp": {"command": "pgmcp", "args": ["serve"], "env": {"PGMCP_DATABASE": database}}}});
        std::fs::write(&file, entry.to_string()).unwrap();
        let refused = install(home.path(), &second, 2);
        let said = format!("{}{}", stdout(&refused), stderr(&refused));
        assert!(
            said.contains(&format!("another database: {shown}.")),
            "{database}: {said}"
        );
        assert!(!said.contains("LeakPwAA"), "{database}: {said}");
        assert_eq!(read_json(&file), entry, "the refusal changed the file");
    }
}

#[test]
fn the_default_places_are_created_when_missing() {
    let home = tempfile::tempdir().unwrap();
    // `pgmcp` runs with XDG_CONFIG_HOME=<home>/config: Linux's config dir.
    let cases = [
        (
            "claude-desktop",
            home.path().join("config/Claude/claude_desktop_config.json"),
        ),
        ("cursor", home.path().join(".cursor/mcp.json")),
    ];
    for (client, file) in cases {
        let out = install(home.path(), &[client], 0);
        assert_eq!(
            read_json(&file),
            json!({"mcpServers": {"pgmcp": {"command": binary(), "args": ["serve"]}}}),
            "{client}"
        );
        assert!(stdout(&out).contains(&file.display().to_string()), "{}", stdout(&out));
        // Nothing was there before: nothing to back up.
        assert!(!stdout(&out).contains(".bak"), "{}", stdout(&out));
        assert!(!bak(&file).exists());
    }
}

#[test]
fn print_shows_the_entry_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let config = crate::support::writable_config::write_config(home.path(), "");
    let file = home.path().join("claude_desktop_config.json");
    std::fs::write(&file, OTHERS).unwrap();
    let out = install(
        home.path(),
        &[
            "claude-desktop",
            "--print",
            "--name",
            "shop",
            "--config",
            "config.json",
            "--database",
            "postgresql://me:pw@db/shop",
            "--client-config",
            file.to_str().unwrap(),
        ],
        0,
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        printed,
        json!({"mcpServers": {"shop": {
            "command": binary(),
            "args": ["serve", "--config", config],
            "env": {"PGMCP_DATABASE": "postgresql://me@db/shop", "PGPASSWORD": "pw"},
        }}})
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OTHERS);
    assert!(!bak(&file).exists());
    // Nor the default place.
    assert!(!home.path().join("config/Claude").exists());
}

/// The `name` and the entry JSON a Cursor link carries, read the way
/// Cursor reads them: query parameters percent-decoded, the config base64.
fn read_link(link: &str) -> (String, Value) {
    let query = link
        .strip_prefix("cursor://anysphere.cursor-deeplink/mcp/install?")
        .unwrap_or_else(|| panic!("not a Cursor install link: {link}"));
    let decode = |text: &str| {
        let mut bytes = Vec::new();
        let mut i = 0;
        while i < text.len() {
            if &text[i..i + 1] == "%" {
                bytes.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                bytes.push(text.as_bytes()[i]);
                i += 1;
            }
        }
        bytes
    };
    let mut name = None;
    let mut config = None;
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap();
        match key {
            "name" => name = Some(String::from_utf8(decode(value)).unwrap()),
            "config" => config = Some(decode(value)),
            other => panic!("unexpected parameter {other} in {link}"),
        }
    }
    let json = base64::engine::general_purpose::STANDARD
        .decode(config.unwrap())
        .unwrap();
    (name.unwrap(), serde_json::from_slice(&json).unwrap())
}

#[test]
fn the_cursor_link_decodes_to_the_entry_without_the_password() {
    let home = tempfile::tempdir().unwrap();
    let cases = [
        ("postgresql://me:s3cr%3Dt@db/shop", true),
        ("postgresql://me@db/shop", false),
    ];
    for (database, has_password) in cases {
        let out = install(
            home.path(),
            &["cursor", "--print", "--name", "shop db", "--database", database],
            0,
        );
        let text = stdout(&out);
        let (json, rest) = text.split_once("\n\n").unwrap();
        let printed: Value = serde_json::from_str(json).unwrap();
        let link = rest
            .lines()
            .find(|l| l.starts_with("cursor://"))
            .unwrap_or_else(|| panic!("no link in {text}"));
        let (name, entry) = read_link(link);
        assert_eq!(name, "shop db");
        let mut expected = printed["mcpServers"]["shop db"].clone();
        expected["env"].as_object_mut().unwrap().shift_remove("PGPASSWORD");
        assert_eq!(entry, expected, "{database}");
        assert_eq!(entry["env"], json!({"PGMCP_DATABASE": "postgresql://me@db/shop"}));
        assert!(!link.contains("s3cr"), "{link}");
        assert_eq!(text.contains("leaves out PGPASSWORD"), has_password, "{text}");
        assert!(!home.path().join(".cursor").exists());
    }
}

#[test]
fn mistakes_exit_2_saying_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["cursor", "--database", "sqlite://shop.db"], "three slashes"),
        (
            &["cursor", "--database", "host=db user=me sslmode=sometimes"],
            "sslmode",
        ),
        (&["cursor", "--database", ""], "--database: empty"),
        (
            &["cursor", "--database", "postgresql://me:pa ss@db/x"],
            "percent-encode",
        ),
        (&["cursor", "--config", "missing.json"], "missing.json"),
        (&["cursor", "--name", ""], "--name"),
    ];
    for (args, hint) in cases {
        let out = install(home.path(), args, 2);
        let said = stderr(&out);
        assert!(said.contains(hint), "{args:?}: {said}");
        assert!(!said.contains("pa ss"), "{args:?}: {said}");
        assert!(!home.path().join(".cursor").exists(), "{args:?}");
    }
}

/// Start an entry's `command` with its `args` and `env`, exactly as a client
/// does, in a fresh working directory and HOME, and complete the MCP
/// handshake.
fn start_entry(entry: &Value) -> McpProcess {
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let env: Vec<(&str, &str)> = entry["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
        .collect();
    let mut mcp = McpProcess::spawn_program(entry["command"].as_str().unwrap(), &args, &env);
    mcp.initialize();
    mcp
}

/// The whole point: what install writes starts a working server. The entry's
/// command, args and env are run as the client runs them, from another
/// working directory, and answer a query on the demo database.
#[test]
fn the_written_entry_runs_and_answers_a_query() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("data")).unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo.db");
    std::fs::copy(&demo, home.path().join("data/demo.db")).unwrap();
    crate::support::writable_config::write_config(home.path(), "");
    let file = home.path().join("claude_desktop_config.json");
    install(
        home.path(),
        &[
            "claude-desktop",
            "--config",
            "config.json",
            "--database",
            "sqlite:data/demo.db",
            "--client-config",
            file.to_str().unwrap(),
        ],
        0,
    );

    let entry = read_json(&file)["mcpServers"]["pgmcp"].clone();
    let database = home.path().join("data/demo.db");
    assert_eq!(
        entry["env"],
        json!({"PGMCP_DATABASE": format!("sqlite:{}", database.display())})
    );
    let mut mcp = start_entry(&entry);
    let result = mcp.call_tool("query", json!({"sql": "SELECT count(*) AS n FROM customers"}));
    assert_ne!(result["isError"], true, "{result}");

    let expected: i64 = rusqlite::Connection::open(&database)
        .unwrap()
        .query_row("SELECT count(*) FROM customers", [], |row| row.get(0))
        .unwrap();
    assert!(expected > 0);
    assert_eq!(tool_json(&result)["rows"], json!([{"n": expected}]));
    // The config the entry names is the one in use: it logs to this file.
    assert!(home.path().join("pgmcp.log").is_file());
}

/// The password moved out of the connection string still reaches
/// PostgreSQL: through `PGPASSWORD`, in both connection string forms.
#[test]
fn the_written_entry_logs_in_with_the_moved_password() {
    let server = pg::server();
    let db = server.database();
    let home = tempfile::tempdir().unwrap();
    for (n, given) in [db.url.clone(), db.keyvalue()].into_iter().enumerate() {
        // One file each: the two forms are two databases to `install`.
        let file = home.path().join(format!("mcp-{n}.json"));
        install(
            home.path(),
            &[
                "cursor",
                "--database",
                &given,
                "--client-config",
                file.to_str().unwrap(),
            ],
            0,
        );
        let entry = read_json(&file)["mcpServers"]["pgmcp"].clone();
        assert_eq!(entry["env"]["PGPASSWORD"], server.admin_password(), "{given}");
        let database = entry["env"]["PGMCP_DATABASE"].as_str().unwrap();
        assert!(!database.contains(server.admin_password()), "{database}");
        assert!(!entry["args"].to_string().contains(server.admin_password()));

        let mut mcp = start_entry(&entry);
        let result = mcp.call_tool(
            "query",
            json!({"sql": "SELECT session_user AS u, current_database() AS d"}),
        );
        assert_ne!(result["isError"], true, "{given}: {result}");
        assert_eq!(
            tool_json(&result)["rows"],
            json!([{"u": server.admin_user(), "d": db.name}]),
            "{given}"
        );
    }
}

// ---------------------------------------------------------------------------
// Secrets, and files that are not what they seem.

/// Every file under `dir`, read as text (lossily).
fn every_file(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out
}

const SECRET: &str = "Zq8SECRETvB3";

/// A file URL's options are where a secret goes (SQLCipher's `?key=`,
/// MotherDuck's `?motherduck_token=`, `?password=`). pgmcp refuses options,
/// and the refusal quoted the whole URL: on stderr, in `install`'s and
/// `check`'s answer, and in the log file `serve` writes.
#[test]
fn a_secret_in_a_file_urls_options_is_never_shown_or_logged() {
    let forms = [
        format!("sqlite:///data/x.db?password={SECRET}"),
        format!("sqlite:x.db?key={SECRET}"),
        format!("sqlite:x.db?mode=ro&password={SECRET}"),
        format!("duckdb:md:shop?motherduck_token={SECRET}"),
        format!("duckdb:///data/x.duckdb?password=a@{SECRET}"),
    ];
    for url in &forms {
        let home = tempfile::tempdir().unwrap();
        let client = home.path().join("mcp.json");
        let client_arg = client.to_str().unwrap();
        let runs = [
            run(
                home.path(),
                &["--database", url, "install", "cursor", "--client-config", client_arg],
                &[],
            ),
            run(home.path(), &["--database", url, "install", "cursor", "--print"], &[]),
            run(home.path(), &["--database", url, "check"], &[]),
            run(home.path(), &["serve"], &[("PGMCP_DATABASE", url)]),
        ];
        for out in &runs {
            assert_eq!(out.status.code(), Some(2), "{url}: {}", text(out));
            let said = text(out);
            assert!(said.contains("options after ? are not supported"), "{url}: {said}");
            assert!(!said.contains("SECRET"), "{url} shown: {said}");
        }
        assert!(!client.exists(), "{url}: a refused database wrote the client's file");
        let files = every_file(home.path());
        assert!(
            files.iter().any(|(p, _)| p.extension().is_some_and(|e| e == "log")),
            "{url}: serve wrote no log: {files:?}"
        );
        for (path, contents) in files {
            assert!(
                !contents.contains("SECRET"),
                "{url}: {} holds it:\n{contents}",
                path.display()
            );
        }
    }
}

/// `--client-config` naming a FIFO (or a symlink to one) hung `install` in
/// its read; a device node read as an empty file was "merged into" and
/// renamed over. Only a regular file is a client's config.
#[test]
fn install_refuses_a_client_config_that_is_not_a_regular_file() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("mcp.json");
    mkfifo(&fifo);
    let link = home.path().join("link.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let mut targets = vec![fifo.clone(), link];
    // A character device like /dev/null, made in the temp dir (root only).
    let node = home.path().join("null.json");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        targets.push(node.clone());
    }
    for target in &targets {
        let mut cmd = pgmcp_std(home.path());
        cmd.args(["install", "cursor", "--client-config", target.to_str().unwrap()]);
        let out =
            within(cmd, Duration::from_secs(10)).unwrap_or_else(|| panic!("install into {} hung", target.display()));
        assert_eq!(out.status.code(), Some(2), "{}: {}", target.display(), text(&out));
        assert!(text(&out).contains("not a regular file"), "{}", text(&out));
    }
    // Nothing was written beside them: no backup, no temporary file.
    let mut left: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut want = vec!["link.json".to_owned(), "mcp.json".to_owned()];
    if made {
        want.push("null.json".to_owned());
        use std::os::unix::fs::FileTypeExt as _;
        assert!(std::fs::symlink_metadata(&node).unwrap().file_type().is_char_device());
    }
    want.sort();
    assert_eq!(left, want);
    use std::os::unix::fs::FileTypeExt as _;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// Passwords in every form `install` splits: never in `args`, the Cursor
/// link, what it prints (bar `--print`'s JSON), the backup or any other file
/// but the client's own, and always exactly the password `serve` would send.
#[test]
fn install_keeps_every_form_of_password_out_of_sight() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "postgresql://me:Zq8SECRETvB3@db/shop",
            "Zq8SECRETvB3",
            "postgresql://me@db/shop",
        ),
        (
            "postgresql://me@db/shop?password=Zq8SECRETvB3&sslmode=require",
            "Zq8SECRETvB3",
            "postgresql://me@db/shop?sslmode=require",
        ),
        (
            "postgresql://me:first@db/shop?sslmode=require&password=Zq8SECRETvB3",
            "Zq8SECRETvB3",
            "postgresql://me@db/shop?sslmode=require",
        ),
        (
            "postgresql://me@db/shop?pass%77ord=Zq8SECRETvB3",
            "Zq8SECRETvB3",
            "postgresql://me@db/shop",
        ),
        (
            "postgresql://me:Zq8%E2%9C%93SECRET@db/shop",
            "Zq8✓SECRET",
            "postgresql://me@db/shop",
        ),
        (
            "postgresql://me:Zq8SECRET%2F%3F%40@db/shop",
            "Zq8SECRET/?@",
            "postgresql://me@db/shop",
        ),
        (
            "host=db user=me password=Zq8SECRETvB3 dbname=shop",
            "Zq8SECRETvB3",
            "host=db user=me dbname=shop",
        ),
        (
            "host=db password='Zq8 SECRET\\'x' user=me",
            "Zq8 SECRET'x",
            "host=db user=me",
        ),
        (
            "password=old host=db password = Zq8SECRETvB3 user=me",
            "Zq8SECRETvB3",
            "host=db user=me",
        ),
        ("host=db user=me password=Zq8\\ SECRET", "Zq8 SECRET", "host=db user=me"),
        (
            "host=db user=me passfile=/p password=Zq8SECRETvB3",
            "Zq8SECRETvB3",
            "host=db user=me passfile=/p",
        ),
    ];
    for (given, password, kept) in cases {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("mcp.json");
        std::fs::write(&file, r#"{"mcpServers": {"other": {"command": "x"}}}"#).unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        let f = file.to_str().unwrap();
        let written = run(
            home.path(),
            &["--database", given, "install", "cursor", "--client-config", f],
            &[],
        );
        assert_eq!(written.status.code(), Some(0), "{given}: {}", text(&written));
        let printed = run(home.path(), &["--database", given, "install", "cursor", "--print"], &[]);
        assert_eq!(printed.status.code(), Some(0), "{given}: {}", text(&printed));
        let entry: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let entry = &entry["mcpServers"]["pgmcp"];
        assert_eq!(entry["env"]["PGPASSWORD"], *password, "{given}");
        assert_eq!(entry["env"]["PGMCP_DATABASE"], *kept, "{given}");
        assert!(!entry["args"].to_string().contains("SECRET"), "{given}: {entry}");
        assert!(!text(&written).contains("SECRET"), "{given}: {}", text(&written));
        // --print: the JSON holds the password the person asked to see; the
        // link and the notes after it do not.
        let shown = text(&printed);
        let after_json = shown.split_once("\n}\n").map_or("", |(_, rest)| rest);
        assert!(after_json.contains("cursor://"), "{given}: {shown}");
        assert!(!after_json.contains("SECRET"), "{given}: {after_json}");
        let link = after_json.lines().find(|l| l.starts_with("cursor://")).unwrap();
        let config = link
            .split_once("config=")
            .unwrap()
            .1
            .replace("%3D", "=")
            .replace("%2B", "+")
            .replace("%2F", "/");
        use base64::Engine as _;
        let decoded = base64::engine::general_purpose::STANDARD.decode(config).unwrap();
        assert!(!String::from_utf8_lossy(&decoded).contains("SECRET"), "{given}");
        // The backup holds the file as it was; no other file holds the password.
        for (path, contents) in every_file(home.path()) {
            if path != file {
                assert!(!contents.contains("SECRET"), "{given}: {} holds it", path.display());
            }
        }
    }
}

/// Files `install` must not merge into are refused and left byte for byte,
/// with no backup written: a BOM, comments, a trailing comma, a top level
/// that is not an object, `mcpServers` that is not one.
#[test]
fn files_install_cannot_read_are_left_exactly_as_they_were() {
    let cases = [
        "\u{FEFF}{\"mcpServers\": {}}",
        "{\n  // mine\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\"},}}",
        "[]",
        "{\"mcpServers\": \"none\"}",
        "{\"mcpServers\": {}} trailing",
    ];
    for before in cases {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("claude_desktop_config.json");
        std::fs::write(&file, before).unwrap();
        let out = run(
            home.path(),
            &["install", "claude-desktop", "--client-config", file.to_str().unwrap()],
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "{before:?}: {}", text(&out));
        assert!(text(&out).contains("the file was left unchanged"), "{}", text(&out));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
        assert_eq!(
            std::fs::read_dir(home.path()).unwrap().count(),
            1,
            "{before:?}: files written"
        );
    }
}
