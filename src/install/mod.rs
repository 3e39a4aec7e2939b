//! `pgmcp install`: the entry a desktop client (Claude Desktop, Cursor) needs
//! to start pgmcp, merged into the client's own config file.
//!
//! Everything but reading and writing that file is pure and table-tested:
//! where the client keeps its file ([`Client::config_file`]), the entry
//! ([`Entry`], with the database and its password in `env`, never in `args`),
//! the merge that leaves every other key as it was ([`merge`]) and Cursor's
//! one-click link ([`cursor_link`]). [`write`] is the one function that
//! touches the file: a `.bak` of the old one, then the new one through a
//! temporary file and a rename, with the old one's permissions.

use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::backend::location::{DbFile, Target};
use crate::backend::named::{Named, Setting};
use crate::backend::postgres::ConnectionConfig;
use crate::backend::postgres::params;
use crate::backend::{Choice, ChoiceError};

/// The desktop clients `pgmcp install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Desktop: `claude_desktop_config.json` in the OS's config dir.
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json` (all projects).
    Cursor,
}

impl Client {
    /// The client's name, as a person knows it.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Cursor => "Cursor",
        }
    }

    /// What makes the client read its config file again.
    pub fn pick_up(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Restart Claude Desktop (quit it fully, then open it again) to pick it up.",
            Client::Cursor => "Reload Cursor (or open Cursor Settings → MCP) to pick it up.",
        }
    }

    /// Where the client reads its servers from. `config_dir` is the OS's
    /// per-user config root (`dirs::config_dir()`: `~/Library/Application
    /// Support` on macOS, `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` or
    /// `~/.config` on Linux), `home` the home directory. A relative one is
    /// no answer: it would name a file under whatever directory pgmcp was
    /// started in.
    pub fn config_file(self, config_dir: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
        match self {
            Client::ClaudeDesktop => config_dir
                .filter(|d| d.is_absolute())
                .map(|d| d.join("Claude").join("claude_desktop_config.json")),
            // Cursor uses the same place on every OS.
            Client::Cursor => home
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cursor").join("mcp.json")),
        }
    }
}

/// Why `pgmcp install` did nothing. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot tell where {client} keeps its config (no home directory): name the file with --client-config PATH")]
    NoClientConfig { client: &'static str },
    #[error("{}: {reason}; fix it or move it away, then run pgmcp install again (the file was left unchanged)", .file.display())]
    Malformed { file: PathBuf, reason: Malformed },
    #[error("cannot read {}: {err}", .file.display())]
    Read { file: PathBuf, err: io::Error },
    #[error("cannot write {}: {err} (the previous file, if any, is unchanged)", .file.display())]
    Write { file: PathBuf, err: io::Error },
    /// Says which setting is wrong, never quoting a password.
    #[error("{0}")]
    Database(String),
    #[error("--name: give the server a name (the key under \"mcpServers\")")]
    EmptyName,
    #[error("cannot read the working directory (relative paths are made absolute against it): {0}")]
    CurrentDir(io::Error),
    #[error("cannot find the pgmcp binary that is running, to name it in the entry: {0}")]
    CurrentExe(io::Error),
    #[error("{what} is not valid UTF-8 ({}); the client's JSON file cannot name it", .path.display())]
    NotUtf8 { what: &'static str, path: PathBuf },
    /// The entry holds a password and the file is one others can read:
    /// pgmcp does not change a file's permissions behind its owner's back,
    /// and does not put a password where others read it.
    #[error(
        "{file} can be read by other users (mode {mode:04o}) and the entry would put the database password in it, \
         so nothing was written (the file was left unchanged). Either make the file yours alone \
         (chmod 600 {file}) and run pgmcp install again, or keep the password out of the entry: put it in \
         ~/.pgpass (mode 0600, a line host:port:database:user:password) and run pgmcp install with a \
         --database that holds no password",
        file = .file.display()
    )]
    ReadableByOthers { file: PathBuf, mode: u32 },
    /// An entry of that name is there for another database: replacing it
    /// would lose that database's entry without a word, and the person most
    /// likely wanted both.
    #[error("{0}")]
    OtherDatabase(Box<OtherDatabase>),
}

/// What [`InstallError::OtherDatabase`] says: which database the entry is
/// for, which this install is for, and how to keep both.
#[derive(Debug)]
pub struct OtherDatabase {
    pub file: PathBuf,
    pub name: String,
    /// As [`shown_database`] shows it: never a password.
    pub existing: String,
    pub wanted: String,
    /// A name no entry in the file has, for this install ([`free_name`]).
    pub free_name: String,
    /// The whole install line under `free_name`, when the caller knows
    /// the command line ([`InstallError::with_rerun`]).
    pub rerun: Option<String>,
}

impl fmt::Display for OtherDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} already has a \"{}\" entry, for another database: {}. This install is for {}, \
             so the file was left unchanged.\n{}\nTo replace the \"{}\" entry instead, add --replace.",
            self.file.display(),
            self.name,
            self.existing,
            self.wanted,
            keep_both(&self.free_name, self.rerun.as_deref()),
            self.name
        )
    }
}

impl InstallError {
    /// For a refusal of another database under the same name: the line
    /// that keeps both, made by `line` from the free name. The library
    /// alone knows the file's names; only the command line knows how the
    /// person asked.
    pub fn with_rerun(mut self, line: impl FnOnce(&str) -> String) -> InstallError {
        if let InstallError::OtherDatabase(refusal) = &mut self {
            refusal.rerun = Some(line(&refusal.free_name));
        }
        self
    }
}

/// How to keep both entries: the line to run when there is one (a person
/// copies it; taking "the same install with another --name" literally
/// repeats --name, which the command line refuses), else the name to give.
fn keep_both(free_name: &str, rerun: Option<&str>) -> String {
    match rerun {
        Some(line) => {
            format!("To keep both, give this one a name of its own (the key under \"mcpServers\"):\n  {line}")
        }
        None => format!(
            "To keep both, give this one a name of its own (the key under \"mcpServers\"), such as --name {free_name}."
        ),
    }
}

/// What is wrong with a client config file that is not merged into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    NotUtf8,
    /// serde_json's message: what, at which line and column.
    NotJson(String),
    NotAnObject,
    ServersNotAnObject,
    /// Keys that appear more than once in one object, each with where (as
    /// [`duplicate_keys`] writes it). A JSON reader keeps one of them and
    /// loses the others without a word, and so would the file pgmcp wrote.
    DuplicateKeys(Vec<String>),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::NotUtf8 => write!(f, "not UTF-8 text"),
            Malformed::NotJson(e) => write!(f, "not valid JSON ({e})"),
            Malformed::NotAnObject => write!(f, "the top level is not a JSON object"),
            Malformed::ServersNotAnObject => write!(f, "\"mcpServers\" is not a JSON object"),
            Malformed::DuplicateKeys(keys) => write!(
                f,
                "it has the same key twice in one object: {}; a client reads only one of each (which one \
                 depends on the client), and rewriting the file would drop the others",
                keys.join(", ")
            ),
        }
    }
}

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

/// The key both clients keep their servers under.
const SERVERS: &str = "mcpServers";

/// A client config with the entry merged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The whole new file: pretty JSON and a final newline.
    pub text: String,
    /// Whether a server of that name was there before (and is replaced in
    /// place).
    pub replaced: bool,
    /// That server's entry, as it was.
    pub previous: Option<Value>,
    /// Every server's name in the new file, in its order.
    pub servers: Vec<String>,
}

/// `existing` (the file's text; `None` when there is no file) with
/// `mcpServers.<name>` set to `entry`. Every other key stays, in its order;
/// an entry of the same name is replaced where it stands, so running this
/// again on its own output gives the same text. A file that is empty (or
/// only whitespace) is taken as `{}`: it holds nothing to lose.
pub fn merge(existing: Option<&str>, name: &str, entry: &Value) -> Result<Merged, Malformed> {
    let mut doc = match existing.filter(|t| !t.trim().is_empty()) {
        Some(text) => {
            let doc = serde_json::from_str(text).map_err(|e| Malformed::NotJson(e.to_string()))?;
            let twice = duplicate_keys(text).map_err(|e| Malformed::NotJson(e.to_string()))?;
            if !twice.is_empty() {
                return Err(Malformed::DuplicateKeys(twice));
            }
            doc
        }
        None => Value::Object(Map::new()),
    };
    let top = doc.as_object_mut().ok_or(Malformed::NotAnObject)?;
    let servers = top
        .entry(SERVERS)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or(Malformed::ServersNotAnObject)?;
    // `insert` on a key that exists keeps its place (preserve_order).
    let previous = servers.insert(name.to_owned(), entry.clone());
    let names = servers.keys().cloned().collect();
    let text = serde_json::to_string_pretty(&doc).map_err(|e| Malformed::NotJson(e.to_string()))? + "\n";
    Ok(Merged {
        text,
        replaced: previous.is_some(),
        previous,
        servers: names,
    })
}

/// A server name for `database` (an entry's `PGMCP_DATABASE`) that is not
/// in `taken`: the database's own name (a file's stem, PostgreSQL's
/// `dbname`) in the characters a name needs no quoting for, numbered from
/// 2 while taken; `pgmcp` when the database gives no name.
pub fn free_name(database: Option<&str>, taken: &[String]) -> String {
    let base = database
        .and_then(database_name)
        .map(|name| {
            let word: String = name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' })
                .collect();
            word.trim_matches('-').to_owned()
        })
        .filter(|word| !word.is_empty())
        .unwrap_or_else(|| "pgmcp".to_owned());
    let is_taken = |candidate: &str| taken.iter().any(|t| t == candidate);
    if !is_taken(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|candidate| !is_taken(candidate))
        .unwrap_or(base)
}

/// The name a database goes by: a file's stem, the database a PostgreSQL
/// URL's path or `dbname=` names.
fn database_name(database: &str) -> Option<String> {
    for scheme in ["sqlite", "duckdb"] {
        if database.strip_prefix(scheme).is_some_and(|rest| rest.starts_with(':')) {
            return match Target::parse(scheme, database).ok()?.file {
                DbFile::Path(path) => path.file_stem()?.to_str().map(str::to_owned),
                DbFile::Memory => None,
            };
        }
    }
    if let Some(rest) = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|scheme| database.strip_prefix(scheme))
    {
        let path = rest.split(['?', '#']).next()?.split_once('/')?.1;
        return Some(path.to_owned());
    }
    database
        .split_whitespace()
        .find_map(|pair| pair.strip_prefix("dbname="))
        .map(|name| name.trim_matches('\'').to_owned())
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
    words.extend(["--name".to_owned(), crate::demo::shell_word(name)]);
    let config = entry.args.iter().skip_while(|a| *a != "--config").nth(1);
    if let Some(config) = config {
        words.extend(["--config".to_owned(), crate::demo::shell_word(config)]);
    }
    if let Some(database) = entry.database() {
        words.extend(["--database".to_owned(), crate::demo::shell_word(database)]);
    }
    if let Some(file) = client_config {
        words.extend([
            "--client-config".to_owned(),
            crate::demo::shell_word(&file.to_string_lossy()),
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

/// The database a client entry names, as `pgmcp serve` would take it from
/// the entry: `--database` in its `args`, else `PGMCP_DATABASE` or
/// `PGMCP_DATABASE_FILE` in its `env`, else `PGMCP_PG_CONNSTRING`. An
/// empty value counts as unset, as it does for `serve`. `None`: the entry
/// names no database (pgmcp finds one at each start), or is no pgmcp entry
/// pgmcp can read.
pub fn named_database(entry: &Value) -> Option<String> {
    let given = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let args: Vec<&str> = entry
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let flag = args
        .iter()
        .enumerate()
        .find_map(|(i, arg)| match arg.strip_prefix("--database") {
            Some("") => args.get(i + 1).map(|v| (*v).to_owned()),
            Some(rest) => rest.strip_prefix('=').map(str::to_owned),
            None => None,
        });
    let env = entry.get("env");
    flag.filter(|f| !f.trim().is_empty()).or_else(|| {
        ["PGMCP_DATABASE", "PGMCP_DATABASE_FILE", "PGMCP_PG_CONNSTRING"]
            .into_iter()
            .find_map(|k| given(env.and_then(|e| e.get(k))))
    })
}

/// Whether the database an existing entry names is `new` (the new entry's
/// `PGMCP_DATABASE`, which holds no password): compared without the
/// password, since a new password for the same database is an update, not
/// another database.
pub fn same_database(existing: &str, new: Option<&str>) -> bool {
    let is_file = ["sqlite:", "duckdb:"].iter().any(|s| existing.starts_with(s));
    let existing = if is_file {
        existing.to_owned()
    } else {
        match params::split_password("the entry's database", existing) {
            Ok(split) => split.connstring,
            Err(_) => return false,
        }
    };
    Some(existing.as_str()) == new
}

/// `database` as a message may show it: without any password. Anything
/// not known to hold none (a malformed URL among them, which an entry
/// written by hand may hold) is shown with everything that could hold one
/// hidden: see [`crate::backend::location::shown_setting`].
pub fn shown_database(database: &str) -> String {
    crate::backend::location::shown_setting(database)
}

/// How a message names what an entry is for.
fn describe(database: Option<&str>) -> String {
    match database {
        Some(db) => shown_database(db),
        None => "no database of its own (pgmcp finds one at each start)".to_owned(),
    }
}

/// Every key that appears more than once in one object of the JSON `text`,
/// anywhere in it, as the path to it: `"mcpServers"."pgmcp"`. serde_json
/// (like most readers) keeps the last of such keys and drops the rest
/// silently, so the file is walked as it is written rather than as parsed.
pub fn duplicate_keys(text: &str) -> Result<Vec<String>, serde_json::Error> {
    use serde::de::DeserializeSeed as _;
    let mut found = Vec::new();
    let mut reader = serde_json::Deserializer::from_str(text);
    KeyWalk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut reader)?;
    reader.end()?;
    Ok(found)
}

/// One value of [`duplicate_keys`]'s walk, at `path`.
struct KeyWalk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> serde::de::DeserializeSeed<'de> for KeyWalk<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeyWalk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(KeyWalk {
                path: format!("{}[{i}]", self.path),
                found: &mut *self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let quoted = Value::String(key.clone()).to_string();
            let path = match self.path.as_str() {
                "" => quoted,
                outer => format!("{outer}.{quoted}"),
            };
            if !seen.insert(key) && !self.found.contains(&path) {
                self.found.push(path.clone());
            }
            map.next_value_seed(KeyWalk {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }
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

/// What [`write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file written (a symlink's target, when the file was a symlink).
    pub file: PathBuf,
    /// The copy of the previous file; `None` when there was none, or when
    /// nothing changed.
    pub backup: Option<PathBuf>,
    /// `false`: the file already held exactly this; it was not touched.
    pub changed: bool,
    pub replaced: bool,
    /// The database the replaced entry was for (as [`shown_database`]
    /// shows it), when it was another one (`--replace`).
    pub other_database: Option<String>,
    /// The file's permission bits (Unix), kept from the previous file.
    pub mode: u32,
}

/// Merge the entry into `file`: refuse a file that is not a JSON object
/// (leaving it as it is), keep the previous file as `<file>.bak`, and
/// replace the file through a new temporary file in the same directory and
/// a rename, so a crash leaves the old file or the new one, never half of
/// one. The new file keeps the old one's permissions; a new one is 0600
/// (it may hold a password), in a directory created 0700.
///
/// An entry of that name for another database (see [`named_database`]) is
/// refused unless `replace`: the file is left as it is.
pub fn write(file: &Path, name: &str, entry: &Entry, replace: bool) -> Result<Written, InstallError> {
    // A symlinked config (dotfiles) stays a symlink: its target is
    // rewritten, not replaced by a plain file.
    let file = match fs::symlink_metadata(file) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(file).map_err(|err| InstallError::Read {
            file: file.to_owned(),
            err,
        })?,
        _ => file.to_owned(),
    };
    let read_fail = |err| InstallError::Read {
        file: file.clone(),
        err,
    };
    let write_fail = |err| InstallError::Write {
        file: file.clone(),
        err,
    };
    // A pipe would hold the read until some writer came, a device (or a
    // symlink to one) could feed it forever: only a regular file is a
    // client's config.
    match fs::metadata(&file) {
        Ok(meta) if !meta.is_file() => {
            return Err(read_fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file; name the client's JSON file",
            )));
        }
        _ => {}
    }
    let (before, mode) = match fs::read(&file) {
        Ok(bytes) => {
            let mode = mode_of(&fs::metadata(&file).map_err(read_fail)?);
            (Some(bytes), mode)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => (None, 0o600),
        Err(e) => return Err(read_fail(e)),
    };
    let malformed = |reason| InstallError::Malformed {
        file: file.clone(),
        reason,
    };
    let text = before
        .as_deref()
        .map(std::str::from_utf8)
        .transpose()
        .map_err(|_| malformed(Malformed::NotUtf8))?;
    let merged = merge(text, name, &entry.to_json()).map_err(malformed)?;
    // An entry that names no database of its own is taken over: it is
    // pgmcp finding its database at each start, which the new entry names.
    let before_db = merged.previous.as_ref().and_then(named_database);
    let other_database = before_db
        .as_deref()
        .filter(|before| !same_database(before, entry.database()))
        .map(|before| describe(Some(before)));
    if let Some(existing) = &other_database
        && !replace
    {
        return Err(InstallError::OtherDatabase(Box::new(OtherDatabase {
            file,
            name: name.to_owned(),
            existing: existing.clone(),
            wanted: describe(entry.database()),
            free_name: free_name(entry.database(), &merged.servers),
            rerun: None,
        })));
    }
    // Checked before the file is found unchanged too: a password others can
    // read is not made right by not writing it again.
    if entry.has_password() && mode & 0o077 != 0 {
        return Err(InstallError::ReadableByOthers { file, mode });
    }
    if before.as_deref() == Some(merged.text.as_bytes()) {
        return Ok(Written {
            file,
            backup: None,
            changed: false,
            replaced: merged.replaced,
            other_database: None,
            mode,
        });
    }
    let backup = match &before {
        Some(bytes) => {
            let mut name = file.file_name().unwrap_or_default().to_owned();
            name.push(".bak");
            let backup = file.with_file_name(name);
            replace_file(&backup, bytes, mode).map_err(|err| InstallError::Write {
                file: backup.clone(),
                err,
            })?;
            Some(backup)
        }
        None => {
            if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                let mut builder = fs::DirBuilder::new();
                builder.recursive(true);
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
                builder.create(dir).map_err(write_fail)?;
            }
            None
        }
    };
    replace_file(&file, merged.text.as_bytes(), mode).map_err(write_fail)?;
    Ok(Written {
        file,
        backup,
        changed: true,
        replaced: merged.replaced,
        other_database,
        mode,
    })
}

impl Written {
    /// What a person reads after `install`: what happened to which file,
    /// where the old one is, and what makes the client see it.
    pub fn summary(&self, client: Client, name: &str) -> String {
        let file = self.file.display();
        let mut out = match (self.changed, self.replaced, &self.other_database) {
            (false, _, _) => format!("{file} already has this \"{name}\" entry: nothing changed.\n"),
            (true, true, Some(other)) => {
                format!("Replaced the \"{name}\" entry in {file}; it was for another database: {other}\n")
            }
            (true, true, None) => format!("Updated the \"{name}\" entry in {file}\n"),
            (true, false, _) => format!("Added the \"{name}\" entry to {file}\n"),
        };
        if let Some(backup) = &self.backup {
            out.push_str(&format!("The previous file is kept as {}\n", backup.display()));
        }
        out.push_str(client.pick_up());
        out.push('\n');
        out
    }
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

/// Put `bytes` at `path` with permissions `mode`: written to a new
/// temporary file beside it (created 0600, so no one else can open it
/// meanwhile), synced, then renamed over `path`.
fn replace_file(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (tmp, mut file) = crate::wizard::create_temp(path)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| set_mode(&file, mode))
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// A file's permission bits (Unix); 0 where files have none (Windows, where
/// the directory's ACL applies).
fn mode_of(metadata: &fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        metadata.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        0
    }
}

fn set_mode(file: &fs::File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// The running pgmcp, as the entry names it: absolute, symlinks resolved,
/// so the entry does not depend on the PATH or on a link that moves.
pub fn current_binary() -> Result<PathBuf, InstallError> {
    let path = std::env::current_exe()
        .and_then(fs::canonicalize)
        .map_err(InstallError::CurrentExe)?;
    // Windows canonical paths are verbatim (`\\?\C:\...`), which some
    // programs that start the command do not take: name the drive path.
    #[cfg(windows)]
    if let Some(plain) = path.to_str().and_then(|p| p.strip_prefix(r"\\?\"))
        && plain.as_bytes().get(1) == Some(&b':')
    {
        return Ok(PathBuf::from(plain));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn client_config_files() {
        let dir = Some(Path::new("/home/u/.config"));
        let home = Some(Path::new("/home/u"));
        type Case<'a> = (Client, Option<&'a Path>, Option<&'a Path>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                Client::ClaudeDesktop,
                dir,
                home,
                Some("/home/u/.config/Claude/claude_desktop_config.json"),
            ),
            (
                Client::ClaudeDesktop,
                Some(Path::new("/Users/u/Library/Application Support")),
                home,
                Some("/Users/u/Library/Application Support/Claude/claude_desktop_config.json"),
            ),
            (Client::ClaudeDesktop, None, home, None),
            (Client::ClaudeDesktop, Some(Path::new("rel/.config")), home, None),
            (Client::Cursor, dir, home, Some("/home/u/.cursor/mcp.json")),
            (Client::Cursor, dir, None, None),
            (Client::Cursor, dir, Some(Path::new("u")), None),
        ];
        for (client, dir, home, want) in cases {
            assert_eq!(
                client.config_file(*dir, *home),
                want.map(PathBuf::from),
                "{client:?} {dir:?} {home:?}"
            );
        }
    }

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

    #[test]
    fn the_database_an_entry_names() {
        let cases: &[(Value, Option<&str>)] = &[
            (json!({"command": "x"}), None),
            (json!({"args": ["serve"], "env": {"PGMCP_DATABASE": " "}}), None),
            (json!({"env": {"PGMCP_DATABASE": "sqlite:/a.db"}}), Some("sqlite:/a.db")),
            (json!({"env": {"PGMCP_DATABASE_FILE": "/a.db"}}), Some("/a.db")),
            (json!({"env": {"PGMCP_PG_CONNSTRING": "host=h"}}), Some("host=h")),
            // `--database` wins over the environment, as in `serve`.
            (
                json!({"args": ["serve", "--database", "sqlite:/b.db"], "env": {"PGMCP_DATABASE": "sqlite:/a.db"}}),
                Some("sqlite:/b.db"),
            ),
            (json!({"args": ["serve", "--database=host=h"]}), Some("host=h")),
            (json!({"args": ["serve", "--database"]}), None),
        ];
        for (entry, want) in cases {
            assert_eq!(named_database(entry).as_deref(), *want, "{entry}");
        }
        let same: &[(&str, Option<&str>, bool)] = &[
            ("postgresql://u:pw@h/db", Some("postgresql://u@h/db"), true),
            ("host=h password=pw user=u", Some("host=h user=u"), true),
            ("sqlite:/a.db", Some("sqlite:/a.db"), true),
            ("sqlite:/a.db", Some("sqlite:/b.db"), false),
            ("postgresql://u@h/db", None, false),
            ("postgresql://u:p w@h/db", Some("postgresql://u@h/db"), false),
        ];
        for (existing, new, want) in same {
            assert_eq!(same_database(existing, *new), *want, "{existing} {new:?}");
        }
        assert_eq!(shown_database("postgresql://u:pw@h/db"), "postgresql://u@h/db");
        assert_eq!(shown_database("host=h password=pw"), "host=h");
        assert!(!shown_database("postgresql://u:p w@h/db").contains("p w"));
        assert!(!shown_database("host=h password='pw").contains("pw"));
        assert!(!shown_database("sqlite:/a.db?key=pw").contains("pw"));
        assert_eq!(shown_database("/srv/a.db"), "/srv/a.db");
        // Malformed URLs an entry written by hand may hold.
        for malformed in [
            "postgresql:/a:LeakPwAA@h/db",
            "POSTGRESQL://a:LeakPwAA@h/db",
            "postgres:a:LeakPwAA@h/db",
            "postgresq://a:LeakPwAA@h/db",
            "a:LeakPwAA@h/db",
            " postgresql://a:LeakPwAA@h/db",
        ] {
            assert!(!shown_database(malformed).contains("LeakPwAA"), "{malformed}");
        }
    }

    #[test]
    fn keys_written_twice() {
        let cases: &[(&str, &[&str])] = &[
            ("{}", &[]),
            (r#"{"mcpServers": {"a": {}, "b": {}}}"#, &[]),
            (
                r#"{"mcpServers": {"pgmcp": {"command": "x"}, "pgmcp": {"command": "y"}}}"#,
                &[r#""mcpServers"."pgmcp""#],
            ),
            (
                r#"{"mcpServers": {}, "zoom": 1, "mcpServers": {}}"#,
                &[r#""mcpServers""#],
            ),
            // Deeper, in arrays, three times (named once), and two at once.
            (
                r#"{"a": [{"x": 1}, {"x": 1, "y": 2, "x": 3, "x": 4}], "b": {"c": {"d": 1, "d": 2}}, "e.f": 0, "e.f": 1}"#,
                &[r#""a"[1]."x""#, r#""b"."c"."d""#, r#""e.f""#],
            ),
            // The same key in different objects is no duplicate; numbers
            // (kept with their digits) are no objects.
            (r#"{"a": {"k": 1.250}, "b": {"k": 1e400}}"#, &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(duplicate_keys(text).unwrap(), *expected, "{text}");
        }
        let twice = r#"{"mcpServers": {"pgmcp": {"command": "x"}, "pgmcp": {"command": "y"}}}"#;
        assert_eq!(
            merge(Some(twice), "other", &json!({})),
            Err(Malformed::DuplicateKeys(vec![r#""mcpServers"."pgmcp""#.to_owned()]))
        );
    }

    #[test]
    fn merging() {
        let pgmcp = json!({"command": "/opt/pgmcp", "args": ["serve"]});
        type Case<'a> = (Option<&'a str>, Result<(&'a str, bool), Malformed>);
        let cases: &[Case] = &[
            (
                None,
                Ok((
                    r#"{"mcpServers":{"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}}}"#,
                    false,
                )),
            ),
            (
                Some("  \n"),
                Ok((
                    r#"{"mcpServers":{"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}}}"#,
                    false,
                )),
            ),
            // Other keys and servers stay, in their order.
            (
                Some(r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}, "z": 1}"#),
                Ok((
                    r#"{"theme":"dark","mcpServers":{"other":{"command":"x"},"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}},"z":1}"#,
                    false,
                )),
            ),
            // Replaced where it stands.
            (
                Some(r#"{"mcpServers": {"a": {}, "pgmcp": {"command": "old"}, "b": {}}}"#),
                Ok((
                    r#"{"mcpServers":{"a":{},"pgmcp":{"command":"/opt/pgmcp","args":["serve"]},"b":{}}}"#,
                    true,
                )),
            ),
            // Numbers keep their digits.
            (
                Some(r#"{"n": 1.50, "mcpServers": {}}"#),
                Ok((
                    r#"{"n":1.50,"mcpServers":{"pgmcp":{"command":"/opt/pgmcp","args":["serve"]}}}"#,
                    false,
                )),
            ),
            (Some("[1]"), Err(Malformed::NotAnObject)),
            (Some(r#"{"mcpServers": []}"#), Err(Malformed::ServersNotAnObject)),
            (Some(r#"{"mcpServers": null}"#), Err(Malformed::ServersNotAnObject)),
        ];
        for (existing, want) in cases {
            let got = merge(*existing, "pgmcp", &pgmcp);
            match (got, want) {
                (Ok(got), Ok((text, replaced))) => {
                    let compact: Value = serde_json::from_str(&got.text).unwrap();
                    assert_eq!(compact.to_string(), *text, "{existing:?}");
                    assert_eq!(got.replaced, *replaced, "{existing:?}");
                    assert!(got.text.ends_with("}\n"));
                    // Idempotent: merging into its own output changes nothing.
                    let again = merge(Some(&got.text), "pgmcp", &pgmcp).unwrap();
                    assert_eq!(again.text, got.text, "{existing:?}");
                }
                (got, want) => assert_eq!(got.map(|m| m.text), want.clone().map(|(t, _)| t.to_owned())),
            }
        }
        let not_json = merge(Some("{\"a\": 1,}"), "pgmcp", &pgmcp).unwrap_err();
        assert!(
            matches!(&not_json, Malformed::NotJson(e) if e.contains("line 1")),
            "{not_json}"
        );
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

    #[test]
    fn free_names_come_from_the_database() {
        let taken = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        let cases: &[(Option<&str>, &[&str], &str)] = &[
            (Some("sqlite:/home/me/shop.db"), &["pgmcp"], "shop"),
            (Some("sqlite:///srv/my%20shop.db"), &["pgmcp"], "my-shop"),
            (Some("duckdb:/data/trades.duckdb"), &["pgmcp"], "trades"),
            (Some("sqlite:/home/me/shop.db"), &["pgmcp", "shop"], "shop-2"),
            (Some("sqlite:/home/me/shop.db"), &["shop", "shop-2"], "shop-3"),
            (
                Some("postgresql://agent@db.example.com:5432/sales?sslmode=require"),
                &["pgmcp"],
                "sales",
            ),
            (Some("postgres://db.example.com/"), &["pgmcp"], "pgmcp-2"),
            (Some("host=db user=me dbname='orders'"), &["pgmcp"], "orders"),
            (Some("host=db user=me"), &["demo"], "pgmcp"),
            (Some("sqlite::memory:"), &["pgmcp"], "pgmcp-2"),
            (None, &["pgmcp", "pgmcp-2"], "pgmcp-3"),
        ];
        for (database, names, want) in cases {
            assert_eq!(free_name(*database, &taken(names)), *want, "{database:?} {names:?}");
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
