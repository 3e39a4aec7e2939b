//! `pgmcp configure`, driven as a person would: through a pseudo-terminal
//! (the first questions, a bad answer asked again) and through piped stdin
//! (every question, as a script would): the file it writes, its mode, and
//! bad answers refused in words, naming the field.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use pgmcp::testing::wizard::{ADVANCED, ADVANCED_QUESTION, FIRST, Question};
use serde_json::{Value, json};

use crate::support::confdir::{chmod, private_dir};
use crate::support::pgmcp;
use crate::support::terminal::Terminal;

/// The wizard's input: for each question (a field or a list, by its path)
/// its lines, in the order the wizard asks; a question not given gets Enter
/// (`c` for a list). `advanced` answers the question between the first
/// questions and the rest.
fn script(answers: &[(&str, &[&str])], advanced: bool) -> String {
    let answers: HashMap<_, _> = answers.iter().copied().collect();
    let mut lines: Vec<&str> = Vec::new();
    for f in FIRST {
        lines.extend(answers.get(&*f.path).copied().unwrap_or(&[""]));
    }
    lines.push(if advanced { "yes" } else { "" });
    for question in ADVANCED.iter().flat_map(|s| &s.questions).filter(|_| advanced) {
        match question {
            Question::Field(f) => lines.extend(answers.get(&*f.path).copied().unwrap_or(&[""])),
            Question::List(l) => lines.extend(answers.get(l.path).copied().unwrap_or(&["c"])),
        }
    }
    lines.join("\n") + "\n"
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// What a wizard's screen never shows: Rust's types, serde's phrasing, or a
/// position in JSON the person did not write.
fn assert_in_words(screen: &str) {
    for leak in ["i64", "u16", "invalid type", "invalid JSON", "at line", "struct Raw"] {
        assert!(!screen.contains(leak), "{leak:?} in:\n{screen}");
    }
}

/// A person at a terminal: names an SQLite file by its path, keeps
/// read-only mode (Enter), lowers the row cap, and declines the advanced
/// settings. The file holds what they gave, and `pgmcp check` accepts it.
#[test]
fn a_person_at_a_terminal_answers_the_first_questions() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().canonicalize().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo.db"),
        dir.join("shop.db"),
    )
    .unwrap();
    let mut cmd = crate::support::pgmcp_std(&dir);
    cmd.arg("configure");
    let mut t = Terminal::spawn(cmd);

    t.expect("Which database? A PostgreSQL URL, such as postgresql://user@host:5432/shop,");
    t.expect("or the path to an SQLite or DuckDB file");
    t.expect("database (current: not set): ");
    t.type_line("shop.db");
    let url = format!("sqlite://{}/shop.db", dir.display());
    t.expect(&format!("shop.db\n  written as {url}\n"));
    t.expect("Read-only? Every query runs in a read-only transaction");
    t.expect("server.read_only [yes/no] (current: yes, the default): ");
    t.type_line("");
    t.expect("Row cap: the most rows one query call returns");
    t.expect("query.max_rows (current: 500, the default): ");
    t.type_line("100");
    t.expect(ADVANCED_QUESTION);
    t.type_line("");
    let path = dir.join("config/pgmcp/config.json");
    t.expect(&format!("\nWrote {} (mode 0600).\n", path.display()));
    t.expect("Next: pgmcp check   (connects, and shows what is in effect)\n");
    t.expect("Then: pgmcp install claude-desktop   (or cursor: adds pgmcp to the client)\n");
    let (status, screen) = t.finish();
    assert!(status.success(), "{status}\n{screen}");
    assert!(!screen.contains("=="), "no advanced section was asked:\n{screen}");
    assert_in_words(&screen);

    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written, json!({"database": url, "query": {"max_rows": 100}}));
    assert_eq!(mode(&path), 0o600);

    // The next step the wizard named: `check` reads the file where it was
    // written and opens the database it names.
    let out = pgmcp(&dir).arg("check").output().unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(
        stdout.contains(&format!("config file:  {}", path.display())),
        "{stdout}"
    );
    assert!(stdout.contains("SQLite file"), "{stdout}");
    assert!(stdout.contains("read-only:    on"), "{stdout}");
}

/// Bad answers at a terminal are refused in words naming the field, and the
/// same question is asked again; nothing about JSON or Rust types shows.
#[test]
fn a_bad_answer_at_a_terminal_is_asked_again_in_words() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = crate::support::pgmcp_std(home.path());
    cmd.args(["--config", "mine.json", "configure"]);
    let mut t = Terminal::spawn(cmd);
    let asked = |t: &mut Terminal, prompt: &str, answer: &str| {
        t.expect(prompt);
        t.type_line(answer);
    };
    let database = "database (current: not set): ";
    asked(&mut t, database, "postgresql://agent:hunter2@db.example.com/shop");
    t.expect("database: the URL holds a password, and the config file keeps none");
    asked(&mut t, database, "shop");
    t.expect("database: no file at ");
    t.expect("give a PostgreSQL URL (postgresql://user@host/db), or the path to an SQLite or DuckDB file");
    asked(&mut t, database, "postgresql://agent@db.example.com/shop");

    let read_only = "server.read_only [yes/no] (current: yes, the default): ";
    asked(&mut t, read_only, "maybe");
    t.expect("  server.read_only: \"maybe\" is not yes or no\n");
    asked(&mut t, read_only, "no");

    let max_rows = "query.max_rows (current: 500, the default): ";
    asked(&mut t, max_rows, "lots");
    t.expect("  query.max_rows: \"lots\" is not a whole number\n");
    asked(&mut t, max_rows, "0");
    t.expect("  query.max_rows: must be greater than 0, got 0\n");
    asked(&mut t, max_rows, "50");

    asked(&mut t, ADVANCED_QUESTION, "perhaps");
    t.expect("  \"perhaps\" is not yes or no\n");
    asked(&mut t, ADVANCED_QUESTION, "n");
    t.expect("Wrote mine.json (mode 0600).\nNext: pgmcp check --config mine.json");
    t.expect("Then: pgmcp install claude-desktop --config mine.json");
    let (status, screen) = t.finish();
    assert!(status.success(), "{status}\n{screen}");
    assert_in_words(&screen);

    let path = home.path().join("mine.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "database": "postgresql://agent@db.example.com/shop",
            "server": {"read_only": false},
            "query": {"max_rows": 50}
        })
    );
    pgmcp::Config::load(&path).expect("what the wizard writes loads");
}

/// Every question, through a pipe: bad answers refused in words and asked
/// again, lists added to and removed from, a required field asked at the end.
#[test]
fn a_new_config_with_bad_answers_asked_again() {
    let home = tempfile::tempdir().unwrap();
    let input = script(
        &[
            ("database", &["sqlite:/srv/shop.db"]),
            ("sqlite.root", &["no/such/dir", "-"]),
            ("connection.host", &["db.example.com"]),
            ("connection.port", &["abc", "70000", "6543"]),
            ("connection.dbname", &["shop"]),
            ("connection.connect_timeout_seconds", &["-5", "5"]),
            ("connection.sslmode", &["sometimes", "verify-full"]),
            ("query.default_timeout_seconds", &["0", "thirty", "30"]),
            ("query.list_tables_timeout_seconds", &["10"]),
            ("query.describe_table_timeout_seconds", &["10"]),
            ("protection.allow_drop", &["yes"]),
            ("protection.allow_attach", &["y"]),
            ("error_prompts", &["a", "(", "Ask the DBA.", "(?i)denied", "c"]),
            ("hooks.before_query", &["a", ".*", "/bin/true", "-v --team x", "", "c"]),
            (
                "query.timeout_rules",
                &["a", "(?i)pg_stat", "5", "a", "x", "1", "r", "1", "c"],
            ),
            // Required once a hook exists: left empty, then asked again at the end.
            ("hooks.default_timeout_seconds", &["", "5"]),
        ],
        true,
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
            "connection": {"host": "db.example.com", "port": 6543, "dbname": "shop", "connect_timeout_seconds": 5, "sslmode": "verify-full"},
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

    // Each bad answer was refused, naming the field, in words.
    for refusal in [
        "connection.port: \"abc\" is not a whole number from 0 to 65535",
        "connection.port: \"70000\" is not a whole number from 0 to 65535",
        "connection.connect_timeout_seconds: \"-5\" is not a whole number, 0 or more",
        "connection.sslmode: \"sometimes\" is not one of disable, allow, prefer, require, verify-ca, verify-full",
        "query.default_timeout_seconds: must be greater than 0, got 0",
        "query.default_timeout_seconds: \"thirty\" is not a whole number",
        "error_prompts.pattern: invalid regex \"(\"",
        "hooks.default_timeout_seconds: required",
        "no/such/dir is not a directory",
    ] {
        assert!(stdout.contains(refusal), "missing {refusal:?} in:\n{stdout}");
    }
    assert_in_words(&stdout);
    // The advanced questions come by section, each under its heading.
    let headings: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(headings.len(), ADVANCED.len(), "{headings:?}");
    assert!(headings[0].starts_with("== PostgreSQL connection"), "{headings:?}");
    assert!(!stdout.to_lowercase().contains("password:"), "no password is asked for");
}

#[test]
fn an_existing_config_keeps_its_values_and_becomes_private() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("pgmcp.json");
    std::fs::write(
        &path,
        r##"{"connection": {"host": "old", "user": "agent"}, "server": {"read_only": false}, "query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}, "sanitization": [{"pattern": "\\d+", "replacement": "#"}]}"##,
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    // Enter everywhere, except: remove the host (back to the default) and
    // remove the one sanitization rule.
    let input = script(&[("connection.host", &["-"]), ("sanitization", &["r", "0", "c"])], true);
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin(input)
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    for shown in [
        "server.read_only [yes/no] (current: no): ",
        "connection.host (current: old): ",
        "query.default_timeout_seconds (current: 7): ",
    ] {
        assert!(stdout.contains(shown), "missing {shown:?} in:\n{stdout}");
    }
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "connection": {"user": "agent"},
            "server": {"read_only": false},
            "query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}
        })
    );
    assert_eq!(mode(&path), 0o600);
}

/// A file already holding a mistake in an advanced setting: the advanced
/// questions declined, the field at fault is still asked, in words.
#[test]
fn a_mistake_already_in_the_file_is_asked_again() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.json");
    std::fs::write(&path, r#"{"connection": {"port": "5432"}}"#).unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin(script(&[], false) + "5433\n")
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(
        stdout.contains("  connection.port: expected a whole number from 0 to 65535, found the text \"5432\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("TCP port (libpq's default: 5432).\nconnection.port (current: 5432): "),
        "{stdout}"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written, json!({"connection": {"port": 5433}}));
}

/// `pgmcp configure` through a pipe, on `path`, with `input`: its exit code,
/// and all it printed.
fn configure(home: &Path, path: &Path, input: String) -> (Option<i32>, String) {
    let out = pgmcp(home)
        .arg("--config")
        .arg(path)
        .arg("configure")
        .write_stdin(input)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

/// A database URL in the file that holds a password: the prompt shows it
/// without the password, Enter cannot keep it (the advanced questions
/// declined or not), typing it again is refused, and what is written holds
/// the URL given without it. Input that ends first writes nothing.
#[test]
fn a_password_already_in_the_file_is_never_shown_nor_kept() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("pgmcp.json");
    let old = r#"{"database": "postgresql://u:ExistWzPwAA@h/db", "server": {"read_only": true}}"#;
    std::fs::write(&path, old).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();

    let (code, said) = configure(home.path(), &path, "\n".to_owned());
    assert_eq!(code, Some(2), "{said}");
    assert!(!said.contains("ExistWzPwAA"), "{said}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), old, "nothing written");

    let answers: &[&str] = &["", "postgresql://u:ExistWzPwAA@h/db", "postgresql://u@h/db"];
    let (code, said) = configure(home.path(), &path, script(&[("database", answers)], false));
    assert_eq!(code, Some(0), "{said}");
    assert!(!said.contains("ExistWzPwAA"), "{said}");
    for shown in [
        "  database: the current value holds a password: move it to ~/.pgpass",
        "database (current: postgresql://u@h/db, not kept): ",
        "  database: Enter cannot keep the current value; - removes it\n",
        "  database: the URL holds a password, and the config file keeps none",
    ] {
        assert!(said.contains(shown), "missing {shown:?} in:\n{said}");
    }
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(!written.contains("ExistWzPwAA"), "{written}");
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        written,
        json!({"database": "postgresql://u@h/db", "server": {"read_only": true}})
    );
}

/// Answers that are connection strings pgmcp does not read (a missing
/// slash, capitals) are refused as such, never written as a file path, and
/// never said back.
#[test]
fn a_malformed_connection_string_is_not_taken_for_a_path() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("new.json");
    let answers: &[&str] = &[
        "postgresql:/u:WzPwDD@h/shop.db",
        "POSTGRESQL://u:WzPwEE@h/db",
        "postgresql://u@h/db",
    ];
    let (code, said) = configure(home.path(), &path, script(&[("database", answers)], false));
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        said.matches("  database: this looks like a connection string, but not one pgmcp reads")
            .count(),
        2,
        "{said}"
    );
    let written = std::fs::read_to_string(&path).unwrap();
    for secret in ["WzPwDD", "WzPwEE"] {
        assert!(!said.contains(secret), "{said}");
        assert!(!written.contains(secret), "{written}");
    }
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(written, json!({"database": "postgresql://u@h/db"}));
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
        .write_stdin(script(&[], false))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "pgmcp: config {}: line 1, column 2: not valid JSON: a field name must be in double quotes; \
             fix or remove the file, then run pgmcp configure again\n",
            path.display()
        )
    );
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
        .write_stdin(script(&[], false))
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
        .write_stdin(script(&[], false))
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    for shown in [
        "database (current: not set): ",
        "server.read_only [yes/no] (current: yes, the default): ",
        "query.max_rows (current: 500, the default): ",
        ADVANCED_QUESTION,
    ] {
        assert!(stdout.contains(shown), "missing {shown:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("required"), "{stdout}");
    assert!(
        stdout.ends_with(
            "\nWrote tmp.json (mode 0600).\n\
             Next: pgmcp check --config tmp.json   (connects, and shows what is in effect)\n\
             Then: pgmcp install claude-desktop --config tmp.json   (or cursor: adds pgmcp to the client)\n"
        ),
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

    // Every advanced question too, each with its default.
    let out = pgmcp(home.path())
        .args(["--config", "all.json", "configure"])
        .write_stdin(script(&[], true))
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    for shown in [
        "query.default_timeout_seconds (current: 30, the default): ",
        "query.list_tables_timeout_seconds (current: 10, the default): ",
        "query.describe_table_timeout_seconds (current: 10, the default): ",
        "Allows: TRUNCATE.\nprotection.allow_truncate [yes/no] (current: no, the default): ",
        "connection.host (current: not set): ",
    ] {
        assert!(stdout.contains(shown), "missing {shown:?} in:\n{stdout}");
    }
    assert_eq!(std::fs::read_to_string(home.path().join("all.json")).unwrap(), "{}\n");

    // A path with a space is quoted in the hint, so it can be pasted.
    let out = pgmcp(home.path())
        .args(["--config", "my config.json", "configure"])
        .write_stdin(script(&[], false))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Next: pgmcp check --config 'my config.json'   (connects"),
        "{stdout}"
    );
}

/// A `config.json` that is a symlink (planted, or pointing into a place
/// others share) is replaced by a private file, never written through.
#[test]
fn configure_never_writes_through_a_config_symlink() {
    let home = tempfile::tempdir().unwrap();
    let dir = private_dir(home.path(), "conf");
    let victim = home.path().join("victim.json");
    let precious = r#"{"query": {"default_timeout_seconds": 7, "list_tables_timeout_seconds": 8, "describe_table_timeout_seconds": 9}}"#;
    std::fs::write(&victim, precious).unwrap();
    chmod(&victim, 0o644);
    let path = dir.join("config.json");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let out = pgmcp(home.path())
        .arg("--config")
        .arg(&path)
        .arg("configure")
        .write_stdin("\n".repeat(200))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), precious);
    assert_eq!(std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o644);
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_file(), "config.json is still a symlink");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}
