//! `pgmcp configure`, driven through piped stdin as a person would type: the
//! file it writes, its mode, and bad answers refused with the field named.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pgmcp::wizard::{FIELDS, LATE_FIELDS, LISTS};
use serde_json::{Value, json};

use crate::support::pgmcp;

/// The wizard's input: for each scalar field its lines (none: Enter), and for
/// each list its lines (none: `c`), in the order the wizard asks.
fn script(fields: &[(&str, &[&str])], lists: &[(&str, &[&str])]) -> String {
    let fields: HashMap<_, _> = fields.iter().copied().collect();
    let lists: HashMap<_, _> = lists.iter().copied().collect();
    let mut lines: Vec<&str> = Vec::new();
    for f in FIELDS.iter() {
        lines.extend(fields.get(&*f.path).copied().unwrap_or(&[""]));
    }
    for l in LISTS {
        lines.extend(lists.get(l.path).copied().unwrap_or(&["c"]));
    }
    for f in LATE_FIELDS {
        lines.extend(fields.get(&*f.path).copied().unwrap_or(&[""]));
    }
    lines.join("\n") + "\n"
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_new_config_with_bad_answers_asked_again() {
    let home = tempfile::tempdir().unwrap();
    let input = script(
        &[
            ("database", &["sqlite:/srv/shop.db"]),
            ("sqlite.root", &["no/such/dir", "-"]),
            ("connection.host", &["db.example.com"]),
            ("connection.port", &["70000", "6543"]),
            ("connection.dbname", &["shop"]),
            ("connection.sslmode", &["sometimes", "verify-full"]),
            ("query.default_timeout_seconds", &["0", "thirty", "30"]),
            ("query.list_tables_timeout_seconds", &["10"]),
            ("query.describe_table_timeout_seconds", &["10"]),
            ("protection.allow_drop", &["yes"]),
            ("protection.allow_attach", &["yes"]),
            // Required once a hook exists: left empty, then asked again at the end.
            ("hooks.default_timeout_seconds", &["", "5"]),
        ],
        &[
            ("error_prompts", &["a", "(", "Ask the DBA.", "(?i)denied", "c"]),
            ("hooks.before_query", &["a", ".*", "/bin/true", "-v --team x", "", "c"]),
            (
                "query.timeout_rules",
                &["a", "(?i)pg_stat", "5", "a", "x", "1", "r", "1", "c"],
            ),
        ],
    );
    let out = pgmcp(home.path()).arg("configure").write_stdin(input).output().unwrap();
    let stdout = crate::support::stdout_of(&out, 0);

    // Without --config or a file, it goes where desktop clients find it.
    let path = home.path().join("config/pgmcp/config.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "database": "sqlite:/srv/shop.db",
            "connection": {"host": "db.example.com", "port": 6543, "dbname": "shop", "sslmode": "verify-full"},
            "query": {
                "default_timeout_seconds": 30, "list_tables_timeout_seconds": 10, "describe_table_timeout_seconds": 10,
                "timeout_rules": [{"pattern": "(?i)pg_stat", "timeout_seconds": 5}]
            },
            "protection": {"allow_drop": true, "allow_attach": true},
            "error_prompts": [{"pattern": "(?i)denied", "message": "Ask the DBA."}],
            "hooks": {
                "before_query": [{"pattern": ".*", "command": "/bin/true", "args": ["-v", "--team", "x"]}],
                "default_timeout_seconds": 5
            }
        })
    );
    assert_eq!(mode(&path), 0o600);
    pgmcp::Config::load(&path).expect("what the wizard writes loads");

    // Each bad answer was refused, naming the field.
    for refusal in [
        "connection.port: expected a whole number from 0 to 65535, found 70000",
        "connection.sslmode: \"sometimes\": use one of disable, allow, prefer, require, verify-ca, verify-full",
        "query.default_timeout_seconds: must be greater than 0, got 0",
        "query.default_timeout_seconds: \"thirty\" is not a whole number",
        "error_prompts.pattern: invalid regex \"(\"",
        "hooks.default_timeout_seconds: required",
        "no/such/dir is not a directory",
    ] {
        assert!(stdout.contains(refusal), "missing {refusal:?} in:\n{stdout}");
    }
    assert!(!stdout.to_lowercase().contains("password:"), "no password is asked for");
}

#[test]
fn an_existing_config_keeps_its_values_and_becomes_private() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("pgmcp.json");
    std::fs::write(
        &path,
        r##"{"connection": {"host": "old", "user": "agent"}, "query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}, "sanitization": [{"pattern": "\\d+", "replacement": "#"}]}"##,
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    // Enter everywhere, except: remove the host (back to the default) and
    // remove the one sanitization rule.
    let input = script(&[("connection.host", &["-"])], &[("sanitization", &["r", "0", "c"])]);
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin(input)
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(stdout.contains("connection.host (current: old): "), "{stdout}");
    assert!(
        stdout.contains("query.default_timeout_seconds (current: 7): "),
        "{stdout}"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "connection": {"user": "agent"},
            "query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}
        })
    );
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn nothing_is_written_when_input_ends_or_the_file_is_not_json() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("new.json");
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin("db.example.com\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("input ended before the wizard finished; nothing was written"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!path.exists());

    std::fs::write(&path, "{not json").unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin(script(&[], &[]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json", "left as it was");
}

/// A symlink planted where the temporary file used to go is never followed:
/// the file it points to keeps its content, and the config is still written.
#[test]
fn a_planted_temp_file_symlink_is_not_followed() {
    let home = tempfile::tempdir().unwrap();
    let victim = home.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let dir = home.path().join("conf");
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("config.json");
    std::fs::write(
        &path,
        r#"{"query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}}"#,
    )
    .unwrap();
    for planted in ["config.json.tmp", ".config.json.tmp"] {
        std::os::unix::fs::symlink(&victim, dir.join(planted)).unwrap();
    }
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin(script(&[], &[]))
        .output()
        .unwrap();
    crate::support::stdout_of(&out, 0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).is_ok());
    assert_eq!(mode(&path), 0o600);
    assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
    // Nothing left behind but what was planted.
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".config.json.tmp", "config.json", "config.json.tmp"]);
}

/// Enter at every question (a pipe of newlines, as a person accepting every
/// default would type) finishes, shows the real defaults, writes a file that
/// loads and runs, and the closing hint repeats the `--config` given.
#[test]
fn accepting_every_default_writes_a_file_that_works() {
    let home = tempfile::tempdir().unwrap();
    let out = pgmcp(home.path())
        .args(["--config", "tmp.json", "configure"])
        .write_stdin(script(&[], &[]))
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    for shown in [
        "query.default_timeout_seconds (current: 30 (default)): ",
        "query.list_tables_timeout_seconds (current: 10 (default)): ",
        "query.describe_table_timeout_seconds (current: 10 (default)): ",
        "query.max_rows (current: 500 (default)): ",
        "server.read_only [true, false] (current: true (default)): ",
        "protection.allow_drop [true, false] (current: false (default)): ",
        "connection.host (current: not set): ",
    ] {
        assert!(stdout.contains(shown), "missing {shown:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("required"), "{stdout}");
    assert!(
        stdout.ends_with("\nWrote tmp.json (mode 0600). Next: pgmcp check --config tmp.json\n"),
        "{stdout}"
    );
    let path = home.path().join("tmp.json");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
    assert_eq!(mode(&path), 0o600);

    // It loads: `query` runs through it on the demo database.
    let demo = format!("sqlite:{}/fixtures/demo.db", env!("CARGO_MANIFEST_DIR"));
    let out = pgmcp(home.path())
        .args([
            "--config",
            "tmp.json",
            "--database",
            &demo,
            "query",
            "SELECT count(*) AS n FROM customers",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // A path with a space is quoted in the hint, so it can be pasted.
    let out = pgmcp(home.path())
        .args(["--config", "my config.json", "configure"])
        .write_stdin(script(&[], &[]))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.ends_with("Next: pgmcp check --config 'my config.json'\n"),
        "{stdout}"
    );
}
