//! Malformed connection strings never show a piece of the password: on
//! stderr or stdout of `pgmcp query` and `pgmcp check`, the real binary, for
//! URL and keyword/value strings a stray space, quote, `/`, `?` or `#` split.

use std::time::Duration;

use serde_json::json;

use crate::support::confdir::{private_dir, write_config};
use crate::support::pgmcp;

/// Passwords made of letters no message contains, so any 3-character window
/// of one found in the output came from the input.
const SECRETS: &[&str] = &["Xq7 Zk9/Wm4?Jr8", "Qz8 Vb3'Hn5=Tg6", "Jx2 Kq4#Wz7@Vy3"];

/// Connection strings with `{}` for the password. Hosts are on the loopback
/// with a closed port, so every attempt fails fast.
const VARIANTS: &[&str] = &[
    "postgresql://u:{}@127.0.0.1:1/db",
    "postgres://u:{}@127.0.0.1:1/db?sslmode=disable",
    "postgresql://u:{}",
    "host=127.0.0.1 port=1 user=u password={} dbname=d",
    "password={} host=127.0.0.1 port=1",
    "host=127.0.0.1 port=1 password='{} user=u",
    "host=127.0.0.1 port=1 password={}' user=u",
    "host=127.0.0.1 port=1 password = {}",
    "host=127.0.0.1 port={} user=u",
    "host=127.0.0.1 port=1 sslmode={}",
    "host=127.0.0.1 port=1 user=u {}",
];

#[test]
fn no_piece_of_a_password_reaches_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let mut refused = 0;
    for variant in VARIANTS {
        for secret in SECRETS {
            let connstring = variant.replace("{}", secret);
            for args in [&["query", "SELECT 1"][..], &["check"][..]] {
                let out = pgmcp(home.path())
                    .args(args)
                    .env("PGMCP_PG_CONNSTRING", &connstring)
                    .env("PGCONNECT_TIMEOUT", "2")
                    .timeout(Duration::from_secs(30))
                    .output()
                    .unwrap();
                refused += usize::from(!out.status.success());
                let shown = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let chars: Vec<char> = secret.chars().collect();
                for piece in chars.windows(3) {
                    let piece: String = piece.iter().collect();
                    assert!(
                        !shown.contains(&piece),
                        "pgmcp {args:?} with {connstring:?} shows {piece:?}:\n{shown}"
                    );
                }
            }
        }
    }
    // Every one fails (closed port or malformed): none passes by not running.
    assert_eq!(refused, VARIANTS.len() * SECRETS.len() * 2);
}

/// The same through every other door a database URL comes in by:
/// `--database`, `PGMCP_DATABASE` and the config's `database`, in every
/// scheme pgmcp reads (a user name and password have no place in an SQLite
/// or DuckDB URL, but someone may write one).
#[test]
fn no_door_shows_a_piece_of_the_password() {
    let home = tempfile::tempdir().unwrap();
    let forms = [
        "postgresql://u:{}@127.0.0.1:1/db",
        "postgres://u:{}@127.0.0.1:1/db?sslmode=disable",
        "sqlite://u:{}@h/x.db",
        "sqlite:x.db?u:{}@h",
        "duckdb://u:{}@h/x.duckdb",
    ];
    let secrets = ["Xq7/Zk9?Wm4", "Fw5?Gd2/Ys9@Ct4", "Jx2#Kq4%zzWz7"];
    for form in forms {
        for secret in secrets {
            let url = form.replace("{}", secret);
            let config = home.path().join("config.json");
            std::fs::write(
                &config,
                serde_json::json!({
                    "database": url,
                    "logging": {"output": home.path().join("pgmcp.log")},
                    "query": {"default_timeout_seconds": 10, "list_tables_timeout_seconds": 10,
                              "describe_table_timeout_seconds": 10},
                })
                .to_string(),
            )
            .unwrap();
            let config = config.to_str().unwrap();
            let doors: [(&[&str], Option<&str>); 4] = [
                (&["--database", &url, "query", "SELECT 1"], None),
                (&["--database", &url, "check"], None),
                (&["query", "SELECT 1"], Some("PGMCP_DATABASE")),
                (&["--config", config, "check"], Some("")),
            ];
            for (args, env) in doors {
                let mut cmd = pgmcp(home.path());
                cmd.args(args).env("PGCONNECT_TIMEOUT", "2");
                if let Some(var) = env.filter(|v| !v.is_empty()) {
                    cmd.env(var, &url);
                }
                let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
                assert!(!out.status.success(), "pgmcp {args:?} with {url:?} succeeded");
                let shown = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                // Refused for the URL, not for something else first: the
                // error names the setting it came from.
                assert!(
                    [
                        "--database:",
                        "PGMCP_DATABASE:",
                        "database:",
                        "connection settings:",
                        "cannot reach"
                    ]
                    .iter()
                    .any(|why| shown.contains(why)),
                    "pgmcp {args:?} ({env:?}) with {url:?}:\n{shown}"
                );
                let chars: Vec<char> = secret.chars().collect();
                for piece in chars.windows(3) {
                    let piece: String = piece.iter().collect();
                    assert!(
                        !shown.contains(&piece),
                        "pgmcp {args:?} ({env:?}) with {url:?} shows {piece:?}:\n{shown}"
                    );
                }
            }
        }
    }
}

/// Percent-encoded passwords (shown neither encoded nor decoded), a
/// password in the URL's query string, a key=value password with escaped
/// quotes: no piece of it on stdout, stderr, or in a trace-level log.
#[test]
fn no_piece_of_a_password_in_any_form_reaches_output_or_log() {
    let home = tempfile::tempdir().unwrap();
    let conf = private_dir(home.path(), "conf");
    let log = conf.join("pgmcp.log");
    let config = write_config(&conf, json!({"logging": {"output": log, "level": "trace"}}));
    // (connection string, the secret as it must never appear)
    let cases: &[(&str, &[&str])] = &[
        (
            "postgresql://u:Xq7%2FZk9%40Wm4@127.0.0.1:1/db",
            &["Xq7%2FZk9", "Xq7/Zk9@Wm4"],
        ),
        ("postgresql://u@127.0.0.1:1/db?password=Fw5Gd2Ys9", &["Fw5Gd2Ys9"]),
        (
            "postgresql://u@127.0.0.1:1/db?password=Fw5%3FGd2&sslmode=bogus",
            &["Fw5%3FGd2", "Fw5?Gd2"],
        ),
        (
            "host=127.0.0.1 port=1 user=u password='Jx2\\' Kq4Wz7'",
            &["Jx2", "Kq4Wz7"],
        ),
        (
            "host=127.0.0.1 port=1 user=u password='Jx2\\\\ Kq4Wz7",
            &["Jx2", "Kq4Wz7"],
        ),
        ("postgresql://u:Vb3%ZZHn5@127.0.0.1:1/db", &["Vb3%ZZHn5", "Vb3", "Hn5"]),
        ("postgresql://u:Vb3Hn5Tg6@127.0.0.1:1:2/db", &["Vb3Hn5Tg6"]),
        ("postgresql://u:Vb3Hn5Tg6@[::1/db", &["Vb3Hn5Tg6"]),
    ];
    for (connstring, secrets) in cases {
        let _ = std::fs::remove_file(&log);
        for args in [&["query", "SELECT 1"][..], &["check"][..]] {
            let out = pgmcp(home.path())
                .arg("--config")
                .arg(&config)
                .args(args)
                .env("PGMCP_PG_CONNSTRING", connstring)
                .env("PGCONNECT_TIMEOUT", "2")
                .timeout(Duration::from_secs(30))
                .output()
                .unwrap();
            assert!(!out.status.success(), "{connstring}: {args:?} succeeded");
            let shown = format!(
                "{}{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            for secret in *secrets {
                assert!(
                    !shown.contains(secret),
                    "{connstring} ({args:?}) shows {secret:?}:\n{shown}"
                );
            }
        }
    }
}
