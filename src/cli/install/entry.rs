//! The entry `pgmcp install` writes ([`Entry`]: `pgmcp serve`, the database
//! in `env` and its password apart, never in `args`), the database as the
//! entry carries it ([`Database`]), and the ways it is shown to a person:
//! `--print` ([`printed`], [`snippet`]), Cursor's one-click link
//! ([`cursor_link`], never with the password) and the install line that
//! does the same install under another name ([`install_line`]). Pure.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::client_file::SERVERS;
use super::{Client, InstallError};
use crate::backend::location::{DbFile, Target};
use crate::backend::named::{Named, Setting};
use crate::backend::postgres::ConnectionConfig;
use crate::backend::postgres::params;
use crate::backend::{Choice, ChoiceError};

/// The database as the entry carries it: the connection string (file paths
/// absolute, password taken out) and the password apart.
pub type Database = params::WithoutPassword;

impl Database {
    /// The database `given` on the command line, as a client started in
    /// some other directory must be given it. `env` is the environment, as
    /// a lookup, for checking the string the way `serve` will read it.
    pub fn from_given(given: &str, cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Database, InstallError> {
        if given.trim().is_empty() {
            return Err(InstallError::Database(
                "--database: empty; give a URL or connection string, or leave --database out".to_owned(),
            ));
        }
        let file_scheme = ["sqlite", "duckdb"]
            .into_iter()
            .find(|scheme| given.strip_prefix(scheme).is_some_and(|r| r.starts_with(':')));
        let database = match file_scheme {
            Some(scheme) => Database {
                connstring: absolute_file_url(scheme, given, cwd)
                    .map_err(|e| InstallError::Database(format!("--database: {e}")))?,
                password: None,
            },
            None => {
                let split =
                    params::split_password("--database", given).map_err(|e| InstallError::Database(e.to_string()))?;
                Database {
                    connstring: split.connstring,
                    password: split.password,
                }
            }
        };
        // Refused here as `serve` would refuse it (a bad sslmode, a DuckDB
        // file this build cannot open), rather than written into an entry
        // that cannot start. The password is out of the string by now.
        let named = Named {
            value: database.connstring.clone(),
            setting: Setting::Flag,
        };
        Choice::resolve(Some(&named), None, &ConnectionConfig::default(), env).map_err(|e| {
            let why = match e {
                // Some parameter errors name their source, some only the
                // parameter (`sslmode: ...`): name --database once.
                ChoiceError::Postgres(e) => {
                    let e = e.to_string();
                    if e.starts_with("--database") {
                        e
                    } else {
                        format!("--database: {e}")
                    }
                }
                ChoiceError::Setting { setting, message } => format!("{setting}: {message}"),
                e @ ChoiceError::Both(..) => e.to_string(),
            };
            InstallError::Database(why)
        })?;
        Ok(database)
    }
}

/// `url` (an `sqlite:` or `duckdb:` URL that [`Target::parse`] accepts) with
/// a relative file path made absolute against `cwd`: the client starts pgmcp
/// in a working directory of its own. Other URLs come back as given.
pub fn absolute_file_url(scheme: &str, url: &str, cwd: &Path) -> Result<String, String> {
    let target = Target::parse(scheme, url)?;
    let path = match target.file {
        DbFile::Path(path) if path.is_relative() => cwd.join(path),
        DbFile::Path(_) | DbFile::Memory => return Ok(url.to_owned()),
    };
    let text = path
        .to_str()
        .ok_or_else(|| format!("the path {} is not valid UTF-8", path.display()))?;
    // The plain form (`sqlite:/abs/path`) is read as written; only a `?`,
    // which that form refuses, needs the percent-decoded `sqlite://` form.
    if text.contains('?') {
        let encoded = text.replace('%', "%25").replace('?', "%3F");
        Ok(format!("{scheme}://{encoded}"))
    } else {
        Ok(format!("{scheme}:{text}"))
    }
}

/// What the client runs: `command` with `args`, and `env` set.
#[derive(Clone, PartialEq, Eq)]
pub struct Entry {
    /// The pgmcp binary, absolute: desktop clients do not search the PATH
    /// a shell would.
    pub command: String,
    pub args: Vec<String>,
    /// In order. Values may hold a password (`PGPASSWORD`): others can read
    /// a process's arguments (`ps`), not its environment.
    pub env: Vec<(String, String)>,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), if k == PASSWORD_VAR { "<redacted>" } else { v }))
            .collect();
        f.debug_struct("Entry")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &env)
            .finish()
    }
}

/// The variable the password goes in: libpq's, which `serve` reads.
pub const PASSWORD_VAR: &str = "PGPASSWORD";

/// The variable the database goes in.
pub const DATABASE_VAR: &str = "PGMCP_DATABASE";

impl Entry {
    /// `pgmcp serve`, with `--config` when a config file is named (absolute),
    /// and the database in the environment.
    pub fn new(command: &Path, config: Option<&Path>, database: Option<&Database>) -> Result<Entry, InstallError> {
        let text = |what, path: &Path| {
            path.to_str().map(str::to_owned).ok_or_else(|| InstallError::NotUtf8 {
                what,
                path: path.to_owned(),
            })
        };
        let mut args = vec!["serve".to_owned()];
        if let Some(config) = config {
            args.extend(["--config".to_owned(), text("the config file's path", config)?]);
        }
        let mut env = Vec::new();
        if let Some(db) = database {
            // A string that was only a password leaves nothing to name:
            // `serve` treats an empty PGMCP_DATABASE as unset anyway.
            if !db.connstring.is_empty() {
                env.push((DATABASE_VAR.to_owned(), db.connstring.clone()));
            }
            if let Some(password) = &db.password {
                env.push((PASSWORD_VAR.to_owned(), password.clone()));
            }
        }
        Ok(Entry {
            command: text("the pgmcp binary's path", command)?,
            args,
            env,
        })
    }

    /// The database the entry names (`PGMCP_DATABASE`), without password.
    pub fn database(&self) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == DATABASE_VAR)
            .map(|(_, v)| v.as_str())
    }

    pub fn has_password(&self) -> bool {
        self.env.iter().any(|(k, _)| k == PASSWORD_VAR)
    }

    /// The entry as the client's JSON has it: `command`, `args`, and `env`
    /// when there is any.
    pub fn to_json(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("command".to_owned(), Value::from(self.command.clone()));
        entry.insert("args".to_owned(), Value::from(self.args.clone()));
        if !self.env.is_empty() {
            let env: Map<String, Value> = self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                .collect();
            entry.insert("env".to_owned(), Value::Object(env));
        }
        Value::Object(entry)
    }

    /// The same entry without the password.
    pub fn without_password(&self) -> Entry {
        Entry {
            env: self.env.iter().filter(|(k, _)| k != PASSWORD_VAR).cloned().collect(),
            ..self.clone()
        }
    }
}

/// `{"mcpServers": {name: entry}}`: the whole of what `--print` shows.
pub fn snippet(name: &str, entry: &Entry) -> Value {
    let mut servers = Map::new();
    servers.insert(name.to_owned(), entry.to_json());
    let mut top = Map::new();
    top.insert(SERVERS.to_owned(), Value::Object(servers));
    Value::Object(top)
}

/// The `pgmcp install` line that writes `entry` for `client` under `name`,
/// as shell words: what a person runs to do the same install under that
/// name. The database is the entry's (a file's path absolute, no password:
/// a printed line never carries one); `client_config` is the client file
/// the person named, if they did.
pub fn install_line(client: Client, name: &str, entry: &Entry, client_config: Option<&Path>) -> String {
    let client_word = clap::ValueEnum::to_possible_value(&client)
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default();
    let mut words = vec!["pgmcp".to_owned(), "install".to_owned(), client_word];
    words.extend(["--name".to_owned(), crate::backend::demo::shell_word(name)]);
    let config = entry.args.iter().skip_while(|a| *a != "--config").nth(1);
    if let Some(config) = config {
        words.extend(["--config".to_owned(), crate::backend::demo::shell_word(config)]);
    }
    if let Some(database) = entry.database() {
        words.extend(["--database".to_owned(), crate::backend::demo::shell_word(database)]);
    }
    if let Some(file) = client_config {
        words.extend([
            "--client-config".to_owned(),
            crate::backend::demo::shell_word(&file.to_string_lossy()),
        ]);
    }
    let mut line = words.join(" ");
    if entry.has_password() {
        line.push_str(
            "\n  (the password is not in this line: add it back to --database, or better, keep it in ~/.pgpass)",
        );
    }
    line
}

/// Cursor's one-click install link for the entry. A link travels (chat,
/// browser history), so it never carries the password: the entry goes in
/// without `PGPASSWORD`.
pub fn cursor_link(name: &str, entry: &Entry) -> String {
    let json = entry.without_password().to_json().to_string();
    let config = base64::engine::general_purpose::STANDARD.encode(json);
    format!(
        "cursor://anysphere.cursor-deeplink/mcp/install?name={}&config={}",
        query_component(name),
        query_component(&config)
    )
}

/// Percent-encode everything but URL's unreserved characters, so base64's
/// `+`, `/` and `=` (and any byte of a name) survive the query string.
fn query_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Said whenever the entry holds a password.
pub const PASSWORD_NOTE: &str = "the database password is in the entry's \"env\" as PGPASSWORD, not in \"args\" \
    (which anyone on this machine can see). Better: put it in ~/.pgpass (or the file PGPASSFILE names), mode 0600, \
    as host:port:database:user:password, and run install again without it.";

/// What `install --print` shows: the entry as the client's file would hold
/// it and, for Cursor, the one-click install link.
pub fn printed(client: Client, name: &str, entry: &Entry) -> String {
    let snippet = serde_json::to_string_pretty(&snippet(name, entry)).unwrap_or_default();
    let mut out = format!("{snippet}\n");
    if client == Client::Cursor {
        out.push_str(&format!(
            "\nOne-click install link for Cursor (open it, or paste it in a browser):\n{}\n",
            cursor_link(name, entry)
        ));
        if entry.has_password() {
            out.push_str(
                "The link leaves out PGPASSWORD, since links get shared: add it to the server's env in Cursor, \
                 or use ~/.pgpass.\n",
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use serde_json::json;

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn file_urls_made_absolute() {
        let cwd = Path::new("/work/here");
        let cases: &[(&str, &str, &str)] = &[
            ("sqlite", "sqlite:demo.db", "sqlite:/work/here/demo.db"),
            ("sqlite", "sqlite:data/shop.db", "sqlite:/work/here/data/shop.db"),
            ("sqlite", "sqlite:/srv/shop.db", "sqlite:/srv/shop.db"),
            ("sqlite", "sqlite:///srv/my%20shop.db", "sqlite:///srv/my%20shop.db"),
            ("sqlite", "sqlite::memory:", "sqlite::memory:"),
            ("sqlite", "sqlite:100%.db", "sqlite:/work/here/100%.db"),
            ("duckdb", "duckdb:trades.duckdb", "duckdb:/work/here/trades.duckdb"),
            ("duckdb", "duckdb:///srv/t.duckdb", "duckdb:///srv/t.duckdb"),
        ];
        for (scheme, url, want) in cases {
            let got = absolute_file_url(scheme, url, cwd).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(got, *want, "{url}");
            // What the entry says must be what `serve` opens.
            let target = Target::parse(scheme, &got).unwrap_or_else(|e| panic!("{got}: {e}"));
            if let DbFile::Path(path) = target.file {
                assert!(path.is_absolute(), "{got}");
            }
        }
        // A `?` in the directory needs the percent-decoded form.
        let odd = Path::new("/tmp/what?%");
        let got = absolute_file_url("sqlite", "sqlite:a.db", odd).unwrap();
        assert_eq!(got, "sqlite:///tmp/what%3F%25/a.db");
        assert_eq!(
            Target::parse("sqlite", &got).unwrap().file,
            DbFile::Path(PathBuf::from("/tmp/what?%/a.db"))
        );
    }

    fn entry(env: &[(&str, &str)]) -> Entry {
        Entry {
            command: "/opt/pgmcp".to_owned(),
            args: vec!["serve".to_owned()],
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        }
    }

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn entries() {
        let none = |k: &str| (k == "USER").then(|| "me".to_owned());
        let cwd = Path::new("/w");
        let db = |given: &str| Database::from_given(given, cwd, &none).unwrap_or_else(|e| panic!("{given}: {e}"));
        let cases: &[(Option<&str>, Option<Database>, Value)] = &[
            (None, None, json!({"command": "/opt/pgmcp", "args": ["serve"]})),
            (
                Some("/etc/pgmcp.json"),
                Some(db("sqlite:shop.db")),
                json!({"command": "/opt/pgmcp", "args": ["serve", "--config", "/etc/pgmcp.json"],
                       "env": {"PGMCP_DATABASE": "sqlite:/w/shop.db"}}),
            ),
            (
                None,
                Some(db("postgresql://me:p%40ss@db/shop")),
                json!({"command": "/opt/pgmcp", "args": ["serve"],
                       "env": {"PGMCP_DATABASE": "postgresql://me@db/shop", "PGPASSWORD": "p@ss"}}),
            ),
            (
                None,
                Some(db("host=db user=me password='a b'")),
                json!({"command": "/opt/pgmcp", "args": ["serve"],
                       "env": {"PGMCP_DATABASE": "host=db user=me", "PGPASSWORD": "a b"}}),
            ),
            (
                None,
                Some(db("password=x")),
                json!({"command": "/opt/pgmcp", "args": ["serve"], "env": {"PGPASSWORD": "x"}}),
            ),
        ];
        for (config, database, want) in cases {
            let got = Entry::new(Path::new("/opt/pgmcp"), config.map(Path::new), database.as_ref()).unwrap();
            assert_eq!(got.to_json(), *want, "{database:?}");
            // Key order is part of the file people read.
            assert_eq!(got.to_json().to_string(), want.to_string(), "{database:?}");
            assert!(!format!("{got:?}").contains("p@ss"));
        }
    }

    #[test]
    fn databases_serve_would_refuse_are_refused() {
        let env = |k: &str| (k == "USER").then(|| "me".to_owned());
        let cases = [
            ("postgresql://u:pa ss@h/db", "must be percent-encoded"),
            ("postgresql://u:p%zz@h/db", "invalid percent-encoding"),
            ("sqlite://relative.db", "three slashes"),
            ("host=db sslmode=sometimes", "invalid sslmode"),
            ("host=db port=x password=pa55", "invalid port"),
            (" ", "empty"),
        ];
        for (given, hint) in cases {
            let e = Database::from_given(given, Path::new("/w"), &env).expect_err(given);
            let said = e.to_string();
            assert!(
                said.starts_with("--database: ") && said.contains(hint),
                "{given}: {said}"
            );
            assert!(!said.contains("pa ss") && !said.contains("pa55"), "{said}");
        }
    }

    /// The entry a Cursor link carries, read back the way Cursor reads it.
    fn link_entry(link: &str) -> (String, String) {
        let decode = |text: &str| {
            let mut bytes = Vec::new();
            let mut rest = text.as_bytes();
            while let Some((&b, tail)) = rest.split_first() {
                if b == b'%' {
                    let hex = std::str::from_utf8(&tail[..2]).unwrap();
                    bytes.push(u8::from_str_radix(hex, 16).unwrap());
                    rest = &tail[2..];
                } else {
                    bytes.push(b);
                    rest = tail;
                }
            }
            String::from_utf8(bytes).unwrap()
        };
        let query = link
            .strip_prefix("cursor://anysphere.cursor-deeplink/mcp/install?")
            .unwrap_or_else(|| panic!("{link}"));
        let (name, config) = query.split_once('&').unwrap();
        let name = decode(name.strip_prefix("name=").unwrap());
        let config = decode(config.strip_prefix("config=").unwrap());
        let json = base64::engine::general_purpose::STANDARD.decode(config).unwrap();
        (name, String::from_utf8(json).unwrap())
    }

    #[test]
    fn cursor_links() {
        let cases: &[(&str, Entry, &str)] = &[
            ("pgmcp", entry(&[]), r#"{"command":"/opt/pgmcp","args":["serve"]}"#),
            (
                "my db+/=&",
                entry(&[("PGMCP_DATABASE", "postgresql://me@h/x"), ("PGPASSWORD", "s3cret")]),
                r#"{"command":"/opt/pgmcp","args":["serve"],"env":{"PGMCP_DATABASE":"postgresql://me@h/x"}}"#,
            ),
            (
                "pgmcp",
                entry(&[("PGPASSWORD", "s3cret")]),
                r#"{"command":"/opt/pgmcp","args":["serve"]}"#,
            ),
        ];
        for (name, entry, json) in cases {
            let link = cursor_link(name, entry);
            assert!(!link.contains("s3cret"), "{link}");
            // Only unreserved characters and escapes: nothing a query string re-reads.
            assert!(
                link.split_once('?')
                    .unwrap()
                    .1
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~%=&".contains(&b)),
                "{link}"
            );
            assert_eq!(link_entry(&link), ((*name).to_owned(), (*json).to_owned()));
        }
    }

    #[cfg(unix)]
    #[test]
    fn install_lines_hold_what_the_entry_names_and_never_a_password() {
        let with_config = Entry {
            args: vec![
                "serve".to_owned(),
                "--config".to_owned(),
                "/etc/pgmcp shop.json".to_owned(),
            ],
            ..entry(&[("PGMCP_DATABASE", "sqlite:/home/me/shop.db")])
        };
        let cases: &[(Client, Entry, Option<&Path>, &str)] = &[
            (
                Client::ClaudeDesktop,
                entry(&[("PGMCP_DATABASE", "sqlite:/home/me/shop.db")]),
                None,
                "pgmcp install claude-desktop --name shop --database sqlite:/home/me/shop.db",
            ),
            (
                Client::Cursor,
                with_config,
                Some(Path::new("/home/me/.cursor/mcp.json")),
                "pgmcp install cursor --name shop --config '/etc/pgmcp shop.json' \
                 --database sqlite:/home/me/shop.db --client-config /home/me/.cursor/mcp.json",
            ),
            (
                Client::ClaudeDesktop,
                entry(&[("PGMCP_DATABASE", "postgresql://me@h/shop"), ("PGPASSWORD", "s3cret")]),
                None,
                "pgmcp install claude-desktop --name shop --database postgresql://me@h/shop\n  \
                 (the password is not in this line: add it back to --database, or better, keep it in ~/.pgpass)",
            ),
            (
                Client::ClaudeDesktop,
                entry(&[]),
                None,
                "pgmcp install claude-desktop --name shop",
            ),
        ];
        for (client, entry, client_config, want) in cases {
            assert_eq!(install_line(*client, "shop", entry, *client_config), *want);
        }
    }
}
