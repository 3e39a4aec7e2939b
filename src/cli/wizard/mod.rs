//! `pgmcp configure`: the interactive wizard that writes the config file.
//!
//! It asks first what most people need ([`FIRST`]): which database, whether
//! the agent may write, and how many rows a call returns. Then one question,
//! whether to change the advanced settings; only on yes come the rest
//! ([`ADVANCED`]), by section, each with a heading. Each question says in a
//! few words what the setting does (the README's words) and shows the
//! current value: the file's, else the built-in default
//! ([`RawConfig::defaults`], the same a file is layered over). Enter keeps
//! it, `-` removes the file's value so the default applies; a list
//! ([`List`]) offers add, remove or continue.
//!
//! Every answer is first read as its kind ([`Kind`]: a whole number in its
//! range, yes or no, one of a few names, ...), and a mistake is said in the
//! person's words, naming the field; then it is validated by the same code
//! that loads the file ([`Config::from_json`]). A bad answer is asked again.
//! The file is written only when the whole config is valid, with mode 0600,
//! and holds only the values given (Enter at every question writes `{}`: all
//! defaults). Input is read line by line, so the wizard can be driven by a
//! pipe as well as by a person at a terminal.
//!
//! There is no password question: the config has no password field on
//! purpose, and a database URL holding one is refused.

use std::borrow::Cow;
use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use crate::backend::named::{self, FileKind};
use crate::config::mistake::{Expected, quoted};
use crate::config::{Config, ConfigError, RawConfig};
use crate::guard::Rule;

/// How an answer is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A whole number from `min` to `max`: the range of the field's type in
    /// the file (a port is 0 to 65535), so no answer fails as JSON later.
    Number {
        min: i64,
        max: i64,
    },
    /// Yes or no (true, false, on, off, y, n too), stored as `true`/`false`.
    Bool,
    Choice(&'static [&'static str]),
    /// Words separated by spaces, stored as a list of strings (hook `args`).
    Words,
    /// A PostgreSQL URL or `key=value` string, or the path to an SQLite or
    /// DuckDB file, stored as that file's URL.
    Database,
}

/// Any whole number the file can hold; the config's own checks say more
/// (most must be above 0).
const WHOLE: Kind = Kind::Number {
    min: i64::MIN,
    max: i64::MAX,
};
/// A field the file holds unsigned.
const UNSIGNED: Kind = Kind::Number { min: 0, max: i64::MAX };
const PORT: Kind = Kind::Number {
    min: 0,
    max: u16::MAX as i64,
};

/// A scalar field: its dotted path in the file, how to read it, and what it
/// does, in a few words.
#[derive(Debug, Clone)]
pub struct Field {
    pub path: Cow<'static, str>,
    pub kind: Kind,
    pub about: Cow<'static, str>,
}

const fn field(path: &'static str, kind: Kind, about: &'static str) -> Field {
    Field {
        path: Cow::Borrowed(path),
        kind,
        about: Cow::Borrowed(about),
    }
}

const LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];
const FORMATS: &[&str] = &["text", "json"];

/// The questions asked first, in this order: what most people need.
pub const FIRST: &[Field] = &[
    field(
        "database",
        Kind::Database,
        "Which database? A PostgreSQL URL, such as postgresql://user@host:5432/shop,\n\
         or the path to an SQLite or DuckDB file, such as /home/me/shop.sqlite, ./data.db\n\
         or ./stats.duckdb. No password here: it goes in ~/.pgpass (for a new read-only login,\n\
         `pgmcp check --suggest-role --login NAME` prints the SQL and the line to save).",
    ),
    field(
        "server.read_only",
        Kind::Bool,
        "Read-only? Every query runs in a read-only transaction, so the agent changes nothing.\n\
         Answer no to allow writes (the protection switches still refuse DROP, TRUNCATE, ...).",
    ),
    field(
        "query.max_rows",
        WHOLE,
        "Row cap: the most rows one query call returns; reading stops there.",
    ),
];

/// The question between [`FIRST`] and [`ADVANCED`].
pub const ADVANCED_QUESTION: &str =
    "Change advanced settings (timeouts, TLS, DuckDB, protection switches, hooks, sanitization...)? [no]: ";

/// A list field, the fields of each entry (`optional` ones may be left
/// empty), and what the list does.
#[derive(Debug, Clone, Copy)]
pub struct List {
    pub path: &'static str,
    pub fields: &'static [(&'static str, Kind)],
    pub optional: &'static [&'static str],
    pub about: &'static str,
}

/// One question of the advanced sections.
#[derive(Debug, Clone)]
pub enum Question {
    Field(Field),
    List(List),
}

/// Advanced questions under one heading.
#[derive(Debug, Clone)]
pub struct Section {
    pub heading: &'static str,
    pub questions: Vec<Question>,
}

const HOOK: &[(&str, Kind)] = &[
    ("pattern", Kind::Text),
    ("command", Kind::Text),
    ("args", Kind::Words),
    ("timeout_seconds", WHOLE),
];

fn fields(list: &[Field]) -> Vec<Question> {
    list.iter().cloned().map(Question::Field).collect()
}

/// Every other question, by section, in the order asked. The hooks'
/// default timeout comes after the hook lists: it is required only once a
/// hook exists.
pub static ADVANCED: LazyLock<Vec<Section>> = LazyLock::new(|| {
    let switches = Rule::switches()
        .map(|(rule, flag)| {
            Question::Field(Field {
                path: Cow::Owned(format!("protection.{flag}")),
                kind: Kind::Bool,
                about: Cow::Owned(format!("Allows: {}", brief(rule.spec().allows))),
            })
        })
        .collect();
    let list = |list: List| vec![Question::List(list)];
    vec![
        Section {
            heading: "PostgreSQL connection, when no database URL is given \
                      (unset: the PG* variables, then libpq's defaults)",
            questions: fields(&[
                field("connection.host", Kind::Text, "Host name, IP address, or Unix-socket directory (starts with /)."),
                field("connection.port", PORT, "TCP port (libpq's default: 5432)."),
                field("connection.dbname", Kind::Text, "Database name (default: the user name)."),
                field("connection.user", Kind::Text, "User name (default: your OS user)."),
                field(
                    "connection.role",
                    Kind::Text,
                    "A role every statement runs as (SET LOCAL ROLE); the login must be a member.",
                ),
                field(
                    "connection.read_only_as_login",
                    Kind::Bool,
                    "Run read-only queries of a login that can reach outside the database as that login,\n\
                     rather than as pg_read_all_data.",
                ),
                field("connection.application_name", Kind::Text, "Shown in pg_stat_activity (default: pgmcp)."),
                field(
                    "connection.connect_timeout_seconds",
                    UNSIGNED,
                    "How long a connection attempt may take, in seconds (default: 10).",
                ),
                field("connection.passfile", Kind::Text, "The password file to read instead of ~/.pgpass."),
            ]),
        },
        Section {
            heading: "TLS to PostgreSQL",
            questions: fields(&[
                field(
                    "connection.sslmode",
                    Kind::Choice(&crate::backend::postgres::SslMode::NAMES),
                    "Whether TLS is used, and what it checks (default: prefer).",
                ),
                field("connection.sslrootcert", Kind::Text, "PEM file of the CAs to trust, or system."),
                field("connection.sslcert", Kind::Text, "Client certificate (PEM), for servers that ask for one."),
                field("connection.sslkey", Kind::Text, "The client certificate's key."),
            ]),
        },
        Section {
            heading: "SQLite and DuckDB files",
            questions: fields(&[
                field(
                    "sqlite.root",
                    Kind::Text,
                    "A directory of SQLite files that calls may name with their database argument.",
                ),
                field(
                    "duckdb.memory_limit",
                    Kind::Text,
                    "DuckDB's memory limit: a number and a unit, 1GB, 512MiB (default: 80% of memory).",
                ),
                field(
                    "duckdb.threads",
                    WHOLE,
                    "Worker threads a DuckDB query may use (default: one per core).",
                ),
            ]),
        },
        Section {
            heading: "Timeouts and limits",
            questions: fields(&[
                field(
                    "query.default_timeout_seconds",
                    WHOLE,
                    "How long a query call may take, in seconds, waiting for a connection included.",
                ),
                field("query.list_tables_timeout_seconds", WHOLE, "The same for list_tables."),
                field("query.describe_table_timeout_seconds", WHOLE, "The same for describe_table."),
                field(
                    "query.default_limit",
                    WHOLE,
                    "Rows a query call without a limit returns (at most the row cap).",
                ),
                field(
                    "query.max_result_length",
                    WHOLE,
                    "Most bytes of JSON any tool's answer holds.",
                ),
                field("query.max_sql_length", WHOLE, "Longest SQL accepted, in characters."),
                field(
                    "query.max_params_bytes",
                    WHOLE,
                    "Most bytes of parameter values one query call may send.",
                ),
            ])
            .into_iter()
            .chain(list(List {
                path: "query.timeout_rules",
                fields: &[("pattern", Kind::Text), ("timeout_seconds", WHOLE)],
                optional: &[],
                about: "Timeouts by pattern: the first rule whose pattern matches the SQL sets its timeout.",
            }))
            .collect(),
        },
        Section {
            heading: "Connection pool",
            questions: fields(&[
                field("pool.max_conns", WHOLE, "Most connections, and so most calls running at once."),
                field(
                    "pool.max_waiting",
                    WHOLE,
                    "Most calls waiting for a connection; a call past it is refused at once.",
                ),
                field(
                    "pool.max_conn_lifetime_seconds",
                    WHOLE,
                    "Connections older than this are closed instead of reused.",
                ),
                field("pool.max_conn_idle_seconds", WHOLE, "Connections idle this long are closed."),
            ]),
        },
        Section {
            heading: "Logging",
            questions: fields(&[
                field("logging.level", Kind::Choice(LEVELS), "How much pgmcp logs."),
                field("logging.format", Kind::Choice(FORMATS), "Lines of text, or of JSON."),
                field("logging.output", Kind::Text, "A file path, or stderr."),
            ]),
        },
        Section {
            heading: "Protection switches: each allows what the guard refuses by default \
                      (see the README's Protection section)",
            questions: switches,
        },
        Section {
            heading: "Error prompts and sanitization",
            questions: [
                List {
                    path: "error_prompts",
                    fields: &[("pattern", Kind::Text), ("message", Kind::Text)],
                    optional: &[],
                    about: "Text added to an error whose message matches the pattern.",
                },
                List {
                    path: "sanitization",
                    fields: &[
                        ("pattern", Kind::Text),
                        ("replacement", Kind::Text),
                        ("description", Kind::Text),
                    ],
                    optional: &["description"],
                    about: "Replacements applied to every string value of a result (to mask what the agent must not see).",
                },
            ]
            .into_iter()
            .map(Question::List)
            .collect(),
        },
        Section {
            heading: "Hooks: programs that accept, rewrite or refuse queries and results",
            questions: [
                Question::List(List {
                    path: "hooks.before_query",
                    fields: HOOK,
                    optional: &["args", "timeout_seconds"],
                    about: "Programs run before each query whose SQL matches the pattern.",
                }),
                Question::List(List {
                    path: "hooks.after_query",
                    fields: HOOK,
                    optional: &["args", "timeout_seconds"],
                    about: "Programs run after each query whose SQL matches the pattern, with its result.",
                }),
                Question::Field(field(
                    "hooks.default_timeout_seconds",
                    WHOLE,
                    "Timeout of hooks that set none, in seconds (required once a hook exists).",
                )),
            ]
            .into(),
        },
    ]
});

/// What a protection switch allows, as the rule table says it for the
/// README, cut to its first few words and without Markdown.
fn brief(allows: &str) -> String {
    let mut text = allows.replace('`', "");
    // Links keep their words: `[the file sandbox](#the-file-sandbox)`.
    while let (Some(open), Some(mid)) = (text.find('['), text.find("](")) {
        match text[mid..].find(')') {
            Some(close) if open < mid => {
                let words = text[open + 1..mid].to_owned();
                text.replace_range(open..mid + close + 1, &words);
            }
            _ => break,
        }
    }
    // The first clause: what follows a parenthesis or a semicolon explains.
    let text = text
        .split([';', '('])
        .next()
        .unwrap_or_default()
        .trim_end()
        .trim_end_matches('.');
    if text.chars().count() <= 72 {
        return format!("{text}.");
    }
    // Whole items of the list, else whole words, as many as fit.
    let fit: String = text.chars().take(72).collect();
    match fit.rfind(", ").or_else(|| fit.rfind(' ')) {
        Some(end) => format!("{}, ...", &fit[..end]),
        None => format!("{fit}..."),
    }
}

/// Every scalar question, first and advanced, for asking one again.
fn every_field() -> impl Iterator<Item = &'static Field> {
    FIRST.iter().chain(ADVANCED.iter().flat_map(|section| {
        section.questions.iter().filter_map(|q| match q {
            Question::Field(f) => Some(f),
            Question::List(_) => None,
        })
    }))
}

/// Why the wizard stopped without writing.
#[derive(Debug, thiserror::Error)]
pub enum WizardError {
    #[error("input ended before the wizard finished; nothing was written to {}", .0.display())]
    InputEnded(PathBuf),
    #[error("{0}; fix or remove the file, then run pgmcp configure again")]
    Unreadable(ConfigError),
    #[error("not written: {0}")]
    Invalid(ConfigError),
    #[error("cannot write {}: {}", .0.display(), .1)]
    Write(PathBuf, io::Error),
    #[error("terminal: {0}")]
    Io(#[from] io::Error),
}

/// Run the wizard on the file at `path` (read if it exists, then written),
/// reading answers from `input` and writing prompts to `out`. `flag` is the
/// `--config` value the person typed, which the closing hint repeats.
pub fn run(path: &Path, flag: Option<&Path>, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<(), WizardError> {
    let unreadable = |message: String| {
        WizardError::Unreadable(ConfigError {
            file: Some(path.to_owned()),
            field: None,
            message,
        })
    };
    let mut doc = match fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(doc) if doc.is_object() => doc,
            Ok(_) => return Err(unreadable("is not a JSON object { ... }".to_owned())),
            Err(e) => return Err(unreadable(crate::config::mistake::syntax(&e))),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(WizardError::Write(path.to_owned(), e)),
    };
    let mut w = Wizard {
        path,
        // What an unset field means, shown as its current value.
        defaults: serde_json::to_value(RawConfig::defaults()).unwrap_or_default(),
        input: &mut *input,
        out: &mut *out,
        doc: &mut doc,
    };
    writeln!(
        w.out,
        "Configuring {}.\nEnter keeps the current value; - removes it (the default applies).",
        path.display()
    )?;
    for f in FIRST {
        writeln!(w.out)?;
        w.scalar(f)?;
    }
    if w.advanced()? {
        for section in ADVANCED.iter() {
            writeln!(w.out, "\n== {} ==", section.heading)?;
            for question in &section.questions {
                match question {
                    Question::Field(f) => w.scalar(f)?,
                    Question::List(list) => w.list(list)?,
                }
            }
        }
    }
    // Each answer was checked on its own; now the whole. A scalar at fault is
    // asked again (an advanced one too: the file may hold it already);
    // anything else stops the write.
    loop {
        match validate(w.doc, Some(path)) {
            Ok(()) => break,
            Err(e) => {
                let at_fault = e
                    .field
                    .as_deref()
                    .and_then(|name| every_field().find(|f| f.path == name));
                match at_fault {
                    Some(f) => {
                        writeln!(w.out, "\n  {}", worded(&e))?;
                        w.scalar(f)?;
                    }
                    None => return Err(WizardError::Invalid(e)),
                }
            }
        }
    }
    write_private(path, &doc)?;
    // The file is read again only where it was found: the same --config,
    // or the default location, which needs no flag.
    let config = match flag {
        Some(flag) => format!(" --config {}", shell_word(&flag.to_string_lossy())),
        None => String::new(),
    };
    // Windows files have no mode: the file has its directory's ACL.
    let mode = if cfg!(unix) { " (mode 0600)" } else { "" };
    writeln!(
        out,
        "\nWrote {}{mode}.\n\
         Next: pgmcp check{config}   (connects, and shows what is in effect)\n\
         Then: pgmcp install claude-desktop{config}   (or cursor: adds pgmcp to the client)",
        path.display()
    )?;
    Ok(())
}

/// `text` as one word for a POSIX shell: as is when it holds nothing a shell
/// reads specially, else in single quotes.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

struct Wizard<'a> {
    path: &'a Path,
    defaults: Value,
    input: &'a mut dyn BufRead,
    out: &'a mut dyn Write,
    doc: &'a mut Value,
}

impl Wizard<'_> {
    fn ask(&mut self, prompt: &str) -> Result<String, WizardError> {
        write!(self.out, "{prompt}")?;
        self.out.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Err(WizardError::InputEnded(self.path.to_owned()));
        }
        Ok(line.trim_end_matches(['\n', '\r']).to_owned())
    }

    /// Whether to go on to the advanced questions: no unless told yes.
    fn advanced(&mut self) -> Result<bool, WizardError> {
        loop {
            let answer = self.ask(&format!("\n{ADVANCED_QUESTION}"))?;
            match read(Kind::Bool, &answer) {
                _ if answer.trim().is_empty() => break Ok(false),
                Ok(yes) => break Ok(yes == Value::Bool(true)),
                Err(why) => writeln!(self.out, "  {why}")?,
            }
        }
    }

    /// Ask for one field until the answer is valid on its own.
    fn scalar(&mut self, f: &Field) -> Result<(), WizardError> {
        writeln!(self.out, "{}", f.about)?;
        let unkept = unkept(f.kind, get(self.doc, &f.path));
        if let Some(why) = &unkept {
            writeln!(self.out, "  {}: the current value {why}; answer again", f.path)?;
        }
        loop {
            let current = match (get(self.doc, &f.path), get(&self.defaults, &f.path)) {
                (Some(value), _) => show(f.kind, value),
                (None, Some(default)) if !default.is_null() => format!("{}, the default", show(f.kind, default)),
                (None, _) => "not set".to_owned(),
            };
            let choices = match f.kind {
                Kind::Choice(names) => format!(" [{}]", names.join(", ")),
                Kind::Bool => " [yes/no]".to_owned(),
                _ => String::new(),
            };
            let current = match &unkept {
                Some(_) => format!("{current}, not kept"),
                None => current,
            };
            let answer = self.ask(&format!("{}{choices} (current: {current}): ", f.path))?;
            let value = match answer.trim() {
                "" if unkept.is_some() => {
                    writeln!(
                        self.out,
                        "  {}: Enter cannot keep the current value; - removes it",
                        f.path
                    )?;
                    continue;
                }
                "" => break Ok(()),
                "-" => None,
                text => match read(f.kind, text) {
                    Ok(v) => Some(v),
                    Err(why) => {
                        writeln!(self.out, "  {}: {why}", f.path)?;
                        continue;
                    }
                },
            };
            let mut alone = base();
            set(&mut alone, &f.path, value.clone());
            match validate(&alone, Some(self.path)) {
                Err(e) if e.field.as_deref() == Some(&*f.path) => writeln!(self.out, "  {}", worded(&e))?,
                _ => {
                    // A file path is written as its URL: say so, and say
                    // when there is no file there (yet).
                    if f.kind == Kind::Database
                        && let Some(url) = value.as_ref().and_then(Value::as_str)
                    {
                        if url != answer.trim() {
                            writeln!(self.out, "  written as {}", crate::backend::location::shown_path(url))?;
                        }
                        if let Some(note) = missing_file(url) {
                            writeln!(self.out, "  {note}")?;
                        }
                    }
                    set(self.doc, &f.path, value);
                    break Ok(());
                }
            }
        }
    }

    fn list(&mut self, list: &List) -> Result<(), WizardError> {
        writeln!(self.out, "{}", list.about)?;
        loop {
            let entries = get(self.doc, list.path)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            writeln!(self.out, "{} ({} entries):", list.path, entries.len())?;
            for (i, entry) in entries.iter().enumerate() {
                writeln!(self.out, "  [{i}] {entry}")?;
            }
            let answer = self.ask(&format!("{}: [a]dd, [r]emove, [c]ontinue? ", list.path))?;
            match answer.trim() {
                "a" | "add" => {
                    let entry = self.entry(list)?;
                    let mut all = entries;
                    all.push(entry);
                    set(self.doc, list.path, Some(Value::Array(all)));
                }
                "r" | "remove" => {
                    let index = self.ask("index to remove: ")?;
                    match index.trim().parse::<usize>() {
                        Ok(i) if i < entries.len() => {
                            let mut all = entries;
                            all.remove(i);
                            let value = (!all.is_empty()).then_some(Value::Array(all));
                            set(self.doc, list.path, value);
                        }
                        _ => writeln!(self.out, "  no entry [{}]", index.trim())?,
                    }
                }
                "c" | "continue" | "" => return Ok(()),
                other => writeln!(self.out, "  {}: answer a, r or c", quoted(other))?,
            }
        }
    }

    /// Ask for a new entry's fields; a field the validation names is asked again.
    fn entry(&mut self, list: &List) -> Result<Value, WizardError> {
        let mut entry = Map::new();
        let mut pending: Vec<(&str, Kind)> = list.fields.to_vec();
        while let Some((name, kind)) = pending.first().copied() {
            let optional = list.optional.contains(&name);
            let hint = if optional { " (optional)" } else { "" };
            let answer = self.ask(&format!("  {name}{hint}: "))?;
            entry.remove(name);
            if !(answer.trim().is_empty() && optional) {
                match read(kind, &answer) {
                    Ok(v) => {
                        entry.insert(name.to_owned(), v);
                    }
                    Err(why) => {
                        writeln!(self.out, "  {}.{name}: {why}", list.path)?;
                        continue;
                    }
                }
            }
            pending.remove(0);
            if pending.is_empty() {
                // Checked alone: the entry as the first of its list.
                let mut alone = base();
                set(&mut alone, list.path, Some(json!([Value::Object(entry.clone())])));
                if let Err(e) = validate(&alone, Some(self.path)) {
                    let prefix = format!("{}[0].", list.path);
                    let at_fault = e.field.as_deref().and_then(|f| f.strip_prefix(&prefix));
                    if let Some(&(name, kind)) = list.fields.iter().find(|(n, _)| Some(*n) == at_fault) {
                        writeln!(self.out, "  {}.{name}: {}", list.path, e.message)?;
                        pending.push((name, kind));
                    }
                }
            }
        }
        Ok(Value::Object(entry))
    }
}

/// A config that is valid except for what is set on it: a hook timeout, the
/// one field without a default that a hook entry checked alone needs.
fn base() -> Value {
    json!({"hooks": {"default_timeout_seconds": 1}})
}

/// Whether the config `doc` loads. Its text is built here, so a mistake
/// in it is the person's answer, never a position in JSON they did not write.
fn validate(doc: &Value, path: Option<&Path>) -> Result<(), ConfigError> {
    Config::from_json(&doc.to_string(), path).map(drop)
}

/// A config error as the wizard shows it: the field and what is wrong (the
/// file is the one being written, named at the start).
fn worded(e: &ConfigError) -> String {
    match &e.field {
        Some(field) => format!("{field}: {}", e.message),
        None => e.message.clone(),
    }
}

/// An answer read as its kind, or why it is not one, in words (the caller
/// names the field).
fn read(kind: Kind, text: &str) -> Result<Value, String> {
    let text = text.trim();
    match kind {
        Kind::Text => Ok(Value::String(text.to_owned())),
        Kind::Number { min, max } => {
            let expected = Expected::whole(min, max);
            match text.parse::<i128>() {
                Ok(n) if (i128::from(min)..=i128::from(max)).contains(&n) => Ok(Value::from(n as i64)),
                // Past what the file can hold, where no range is shown.
                Ok(_) if (min, max) == (i64::MIN, i64::MAX) => Err(format!("{} is too large", quoted(text))),
                _ => Err(format!("{} is not {expected}", quoted(text))),
            }
        }
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "yes" | "y" | "true" | "on" => Ok(Value::Bool(true)),
            "no" | "n" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("{} is not yes or no", quoted(text))),
        },
        Kind::Choice(names) if names.contains(&text) => Ok(Value::String(text.to_owned())),
        Kind::Choice(names) => Err(format!("{} is not one of {}", quoted(text), names.join(", "))),
        Kind::Words => Ok(Value::Array(
            text.split_whitespace().map(|w| Value::String(w.to_owned())).collect(),
        )),
        Kind::Database => database(text).map(Value::String),
    }
}

/// Why a connection string cannot be the `database` value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// It holds a password, which the config file never keeps.
    Password,
    /// It is no connection string pgmcp reads: why.
    Malformed(String),
}

/// The `database` value for what a person typed: a PostgreSQL connection
/// string or a `sqlite:`/`duckdb:` URL as it is; anything else is a file
/// path, made absolute from where the wizard runs (the config's relative
/// paths are taken from the config's directory, which is not where the
/// person is) and written as the URL of the kind its header, or for a file
/// not there yet its name, says. Nothing refused is echoed as typed: it may
/// hold a password.
fn database(text: &str) -> Result<String, String> {
    match connection(text) {
        Some(Ok(())) => return Ok(text.to_owned()),
        Some(Err(Refusal::Password)) => {
            return Err(
                "the URL holds a password, and the config file keeps none: give it without the \
                        password, and set PGPASSWORD in your client's config or use ~/.pgpass"
                    .to_owned(),
            );
        }
        Some(Err(Refusal::Malformed(why))) => return Err(why),
        None => {}
    }
    if text.starts_with("sqlite:") || text.starts_with("duckdb:") {
        return Ok(text.to_owned());
    }
    let typed = match (text.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(text),
    };
    let path = std::path::absolute(&typed).unwrap_or(typed);
    let path_text = path.to_string_lossy();
    // A path with an `@` may still be a connection string in disguise.
    let shown = crate::backend::location::shown_path(&path_text);
    let kind = match FileKind::of_file(&path) {
        Ok(Some(kind)) => kind,
        Ok(None) => {
            return Err(format!(
                "{shown} is neither an SQLite nor a DuckDB database file (its first bytes say neither)"
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => FileKind::of_extension(&path).ok_or_else(|| {
            format!(
                "no file at {shown}: give a PostgreSQL URL (postgresql://user@host/db), or the path to an \
                 SQLite or DuckDB file (.sqlite, .db, .duckdb)"
            )
        })?,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    Ok(named::url(kind, &path_text))
}

/// Whether `text` is a PostgreSQL connection string, and if so whether the
/// config may keep it; `None`: it is not one (a path, or a file URL).
///
/// A `postgres://` or `postgresql://` URL, or `key=value` words, is read
/// as pgmcp reads it. Anything else that starts like a URL (a word and a
/// colon: `POSTGRESQL://`, `postgresql:/`, `postgresq://`, `user:`) with an
/// `@` after it, or two slashes, is a connection string pgmcp does not
/// read, not a file path: taken for one, it would be written into the file as a path, and
/// its password with it.
fn connection(text: &str) -> Option<Result<(), Refusal>> {
    let is_url = text.starts_with("postgres://") || text.starts_with("postgresql://");
    // As `pgmcp serve` tells them: in lower case, from the first character.
    let file_url = text.starts_with("sqlite:") || text.starts_with("duckdb:");
    // A drive letter (`C:\...`) is a path's, not a scheme.
    let scheme_like = text.trim_start().split_once(':').is_some_and(|(word, rest)| {
        (word.len() > 1 || cfg!(not(windows)))
            && word.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && (rest.starts_with("//") || text.contains('@'))
    });
    if !is_url && !file_url && scheme_like {
        return Some(Err(Refusal::Malformed(
            "this looks like a connection string, but not one pgmcp reads (not shown: it may hold a \
             password): a PostgreSQL URL starts with postgresql:// or postgres://, in lower case, and \
             holds no password (that goes in ~/.pgpass)"
                .to_owned(),
        )));
    }
    if !is_url && !text.contains('=') {
        return None;
    }
    Some(
        match crate::backend::postgres::params::split_password("database", text) {
            Ok(split) if split.password.is_some() => Err(Refusal::Password),
            Ok(_) => Ok(()),
            Err(e) => Err(Refusal::Malformed(e.message)),
        },
    )
}

/// What to say of a database file the wizard wrote the URL of when there
/// is no file there (yet): `pgmcp check` would fail.
fn missing_file(url: &str) -> Option<String> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("duckdb://"))?;
    let path = crate::backend::percent::decode(path).ok()?;
    (!Path::new(&path).exists()).then(|| {
        format!(
            "no file at {} yet: pgmcp check says so until there is one",
            crate::backend::location::shown_path(&path)
        )
    })
}

/// A value as the person answers it: text unquoted, yes or no for a switch.
/// Never a password: a database setting is shown without one (see
/// [`crate::backend::location::shown_setting`]), other text with an `@`
/// redacted, since the prompt may be read over a shoulder, or logged when
/// the wizard is driven by a pipe.
fn show(kind: Kind, value: &Value) -> String {
    match (kind, value) {
        (Kind::Bool, Value::Bool(true)) => "yes".to_owned(),
        (Kind::Bool, Value::Bool(false)) => "no".to_owned(),
        (Kind::Database, Value::String(s)) => crate::backend::location::shown_setting(s),
        (_, Value::String(s)) => crate::backend::location::shown_path(s).into_owned(),
        (_, other) => other.to_string(),
    }
}

/// Why the current `database` value cannot be kept, in words for after
/// `database: the current value `; `None` when it can. A password in it is
/// the file's mistake to undo, not to keep by pressing Enter.
fn unkept(kind: Kind, current: Option<&Value>) -> Option<String> {
    let text = current?.as_str()?;
    if kind != Kind::Database {
        return None;
    }
    match connection(text)? {
        Ok(()) => None,
        Err(Refusal::Password) => Some(
            "holds a password: move it to ~/.pgpass (a line host:port:database:user:password, mode 0600) \
             or to PGPASSWORD in your client's config, and give the URL without it"
                .to_owned(),
        ),
        Err(Refusal::Malformed(why)) => Some(format!("is not a connection string pgmcp reads: {why}")),
    }
}

fn get<'v>(doc: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(doc, |v, key| v.get(key))
}

/// Set (or with `None`, remove) the value at a dotted path, creating sections
/// as needed and dropping sections left empty.
fn set(doc: &mut Value, path: &str, value: Option<Value>) {
    fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
        match value {
            Some(v) => {
                map.insert(key.to_owned(), v);
            }
            None => {
                map.shift_remove(key);
            }
        }
    }
    let Some(root) = doc.as_object_mut() else {
        return;
    };
    // Paths have at most two levels: `section.key` or a top-level list.
    match path.split_once('.') {
        None => put(root, path, value),
        Some((section, key)) => {
            let entry = root.entry(section.to_owned()).or_insert_with(|| json!({}));
            if let Some(map) = entry.as_object_mut() {
                put(map, key, value);
                if map.is_empty() {
                    root.shift_remove(section);
                }
            }
        }
    }
}

/// Write the file readable by its owner alone (it names hosts, users and key
/// files), through a temporary file so a failure leaves the old one intact.
///
/// The temporary file is always a new one (`O_CREAT | O_EXCL`, which also
/// refuses a symlink in its place), named anew each run: with a fixed name
/// opened for writing, anyone able to write the directory could plant a
/// symlink there and have the wizard overwrite the file it points to. A name
/// someone guessed and planted costs a retry, never an overwrite.
fn write_private(path: &Path, doc: &Value) -> Result<(), WizardError> {
    let fail = |e: io::Error| WizardError::Write(path.to_owned(), e);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Private like the file: a directory others can write is refused at load.
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(dir).map_err(fail)?;
    }
    let text = serde_json::to_string_pretty(doc).map_err(|e| fail(io::Error::other(e)))? + "\n";
    let (tmp, mut file) = create_temp(path).map_err(fail)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(fail)
}

/// A new file, mode 0600, next to `path` (so the rename stays on one file
/// system), named `.config.json.<pid>.<nanoseconds>.tmp`. `install` replaces
/// a client's config file through it too. On Windows it has no mode: it
/// inherits its directory's ACL, which under the user's profile (where the
/// config lives by default) admits only that user and administrators.
pub(crate) fn create_temp(path: &Path) -> io::Result<(PathBuf, fs::File)> {
    let name = path
        .file_name()
        .map_or_else(|| "config".into(), |n| n.to_string_lossy());
    let mut last = None;
    // A name taken (by a leftover or a planted file) is skipped, never reused.
    for attempt in 0u32..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = path.with_file_name(format!(".{name}.{}.{nanos}{attempt}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        }
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists() -> impl Iterator<Item = &'static List> {
        ADVANCED.iter().flat_map(|section| {
            section.questions.iter().filter_map(|q| match q {
                Question::List(list) => Some(list),
                Question::Field(_) => None,
            })
        })
    }

    #[test]
    fn every_field_and_list_is_a_config_field() {
        // Setting each field to a plausible value must not be refused as an
        // unknown field: the table and RawConfig agree.
        for f in every_field() {
            let value = match f.kind {
                Kind::Number { min, max } => json!(5.clamp(min, max)),
                Kind::Bool => json!(true),
                Kind::Choice(names) => json!(names[0]),
                // The one text field checked against the file system.
                Kind::Text if f.path == "sqlite.root" => json!(std::env::temp_dir()),
                Kind::Text if f.path == "duckdb.memory_limit" => json!("1GB"),
                Kind::Text | Kind::Words | Kind::Database => json!("/tmp/x"),
            };
            let mut doc = base();
            set(&mut doc, &f.path, Some(value));
            assert!(validate(&doc, None).is_ok(), "{}: {:?}", f.path, validate(&doc, None));
            assert!(!f.about.is_empty(), "{} says what it does", f.path);
        }
        for list in lists() {
            let mut doc = base();
            set(&mut doc, list.path, Some(json!([])));
            assert!(validate(&doc, None).is_ok(), "{}", list.path);
        }
        // Every scalar of every section is asked somewhere, but for the
        // HTTP server's, which `serve --http` alone reads, and the
        // protection section's lists of function names, edited in the file.
        let defaults = serde_json::to_value(RawConfig::defaults()).unwrap();
        let unasked = ["protection.blocked_functions", "protection.read_only_functions"];
        for (section, fields) in defaults.as_object().unwrap() {
            for (name, value) in fields.as_object().into_iter().flatten() {
                let path = format!("{section}.{name}");
                if value.is_array() || section == "server" && name != "read_only" || unasked.contains(&&*path) {
                    continue;
                }
                assert!(every_field().any(|f| f.path == path), "{path} is asked");
            }
        }
    }

    /// Each kind of answer, and the words a mistake in it is refused with.
    #[test]
    fn answers_are_read_by_kind_in_words() {
        let cases: &[(Kind, &str, Result<Value, &str>)] = &[
            (PORT, "6543", Ok(json!(6543))),
            (PORT, "abc", Err("\"abc\" is not a whole number from 0 to 65535")),
            (PORT, "70000", Err("\"70000\" is not a whole number from 0 to 65535")),
            (PORT, "-1", Err("\"-1\" is not a whole number from 0 to 65535")),
            (UNSIGNED, "-5", Err("\"-5\" is not a whole number, 0 or more")),
            (WHOLE, "thirty", Err("\"thirty\" is not a whole number")),
            (WHOLE, "1.5", Err("\"1.5\" is not a whole number")),
            (WHOLE, " 30 ", Ok(json!(30))),
            (
                WHOLE,
                "99999999999999999999",
                Err("\"99999999999999999999\" is too large"),
            ),
            (Kind::Bool, "Yes", Ok(json!(true))),
            (Kind::Bool, "n", Ok(json!(false))),
            (Kind::Bool, "false", Ok(json!(false))),
            (Kind::Bool, "maybe", Err("\"maybe\" is not yes or no")),
            (Kind::Choice(LEVELS), "debug", Ok(json!("debug"))),
            (
                Kind::Choice(LEVELS),
                "loud",
                Err("\"loud\" is not one of error, warn, info, debug, trace"),
            ),
            (Kind::Words, "-v  --team x", Ok(json!(["-v", "--team", "x"]))),
            (Kind::Text, " shop ", Ok(json!("shop"))),
        ];
        for (kind, text, expected) in cases {
            assert_eq!(
                read(*kind, text),
                expected.clone().map_err(str::to_owned),
                "{kind:?} {text:?}"
            );
        }
    }

    #[test]
    fn a_database_is_a_url_or_a_file_path() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = dir.path().join("shop.data");
        std::fs::write(&sqlite, b"SQLite format 3\0 and the rest").unwrap();
        let neither = dir.path().join("notes.db");
        std::fs::write(&neither, "just text").unwrap();
        let d = dir.path().display();
        for (typed, expected) in [
            (
                "postgresql://agent@db.example.com:5432/shop",
                Ok("postgresql://agent@db.example.com:5432/shop".to_owned()),
            ),
            ("host=db dbname=shop", Ok("host=db dbname=shop".to_owned())),
            ("sqlite:shop.db", Ok("sqlite:shop.db".to_owned())),
            // Its header says SQLite, whatever its name.
            (&*sqlite.to_string_lossy(), Ok(format!("sqlite://{d}/shop.data"))),
            // Not there yet: its name says.
            (&format!("{d}/new.duckdb"), Ok(format!("duckdb://{d}/new.duckdb"))),
            (&format!("{d}/new.sqlite"), Ok(format!("sqlite://{d}/new.sqlite"))),
            (
                &*neither.to_string_lossy(),
                Err(format!(
                    "{d}/notes.db is neither an SQLite nor a DuckDB database file (its first bytes say neither)"
                )),
            ),
            (
                &format!("{d}/shop"),
                Err(format!(
                    "no file at {d}/shop: give a PostgreSQL URL (postgresql://user@host/db), or the path to an \
                     SQLite or DuckDB file (.sqlite, .db, .duckdb)"
                )),
            ),
            (
                "postgresql://agent:secret@db/shop",
                Err(
                    "the URL holds a password, and the config file keeps none: give it without the password, \
                     and set PGPASSWORD in your client's config or use ~/.pgpass"
                        .to_owned(),
                ),
            ),
        ] {
            assert_eq!(database(typed), expected, "{typed}");
        }
        // Connection strings pgmcp does not read are refused as such, never
        // taken for a path (which would write the password into the file)
        // nor echoed.
        let malformed = "this looks like a connection string, but not one pgmcp reads (not shown: it may hold a \
                         password): a PostgreSQL URL starts with postgresql:// or postgres://, in lower case, and \
                         holds no password (that goes in ~/.pgpass)";
        for typed in [
            "postgresql:/u:WzPwDD@h/shop.db",
            "POSTGRESQL://u:WzPwEE@h/db",
            "Postgres://u@h/db",
            "postgresq://u:WzPwFF@h/db",
            "postgres:u:WzPwGG@h/db",
            "u:WzPwHH@h/db",
            " postgresql://u:WzPwII@h/db",
            "SQLITE:/u:WzPwJJ@h/x.db",
        ] {
            assert_eq!(database(typed), Err(malformed.to_owned()), "{typed}");
        }
        // A URL pgmcp reads but cannot take the password out of: its own
        // words, which never quote it.
        let refused = database("postgresql://u:Wz PwKK@h/db").unwrap_err();
        assert!(!refused.contains("PwKK"), "{refused}");
        // A path with an `@` is shown redacted in what is said of it.
        let odd = database(&format!("{d}/u:WzPwLL@h/shop")).unwrap_err();
        assert!(
            odd.starts_with("no file at /***@h/shop") && !odd.contains("WzPwLL"),
            "{odd}"
        );
        // A relative path is taken from where the wizard runs.
        let relative = database("no-such-dir/shop.db").unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(relative, format!("sqlite://{}/no-such-dir/shop.db", cwd.display()));
        assert!(missing_file(&relative).is_some_and(|note| note.starts_with("no file at /")));
        assert_eq!(missing_file(&format!("sqlite://{d}/shop.data")), None);
    }

    /// (kind, the file's value, as the prompt shows it, why Enter cannot
    /// keep it)
    #[test]
    fn current_values_are_shown_without_a_password() {
        let holds = "holds a password: move it to ~/.pgpass (a line host:port:database:user:password, mode \
                     0600) or to PGPASSWORD in your client's config, and give the URL without it";
        let cases: &[(Kind, Value, &str, Option<&str>)] = &[
            (
                Kind::Database,
                json!("postgresql://u@h/db"),
                "postgresql://u@h/db",
                None,
            ),
            (
                Kind::Database,
                json!("postgresql://u:ExistWzPwAA@h/db"),
                "postgresql://u@h/db",
                Some(holds),
            ),
            (
                Kind::Database,
                json!("host=h password=ExistWzPwAA"),
                "host=h",
                Some(holds),
            ),
            (
                Kind::Database,
                json!("postgresql:/u:ExistWzPwAA@h/db"),
                "postgresql:***@h/db",
                Some("is not a connection string pgmcp reads: this looks like a connection string"),
            ),
            (
                Kind::Database,
                json!("sqlite:///srv/shop.db"),
                "sqlite:///srv/shop.db",
                None,
            ),
            (Kind::Text, json!("db.example.com"), "db.example.com", None),
            (Kind::Text, json!("u:ExistWzPwAA@h"), "***@h", None),
            (Kind::Bool, json!(true), "yes", None),
        ];
        for (kind, value, shown, why) in cases {
            assert_eq!(show(*kind, value), *shown, "{value}");
            let unkept = unkept(*kind, Some(value));
            match why {
                Some(why) => assert!(
                    unkept.as_deref().is_some_and(|u| u.starts_with(why)),
                    "{value}: {unkept:?}"
                ),
                None => assert_eq!(unkept, None, "{value}"),
            }
        }
    }

    #[test]
    fn switches_are_described_briefly() {
        for (allows, brief_text) in [
            ("`TRUNCATE`.", "TRUNCATE."),
            (
                "`SET`, `RESET`, `RESET ALL`, `UPDATE pg_settings` (session settings could weaken later checks).",
                "SET, RESET, RESET ALL, UPDATE pg_settings.",
            ),
            (
                "SQLite and DuckDB: `ATTACH`/`DETACH` (DuckDB: and `COPY FROM DATABASE`); on Linux, inside [the file sandbox](#the-file-sandbox).",
                "SQLite and DuckDB: ATTACH/DETACH.",
            ),
            (
                "SQLite: `VACUUM INTO`, which writes a copy of the database to any path; on Linux, inside [the file sandbox](#the-file-sandbox).",
                "SQLite: VACUUM INTO, which writes a copy of the database to any path.",
            ),
            (
                "`DROP` of any object, `DROP DATABASE`, `DROP ROLE`, `DROP OWNED`, `ALTER TABLE ... DROP COLUMN`, `DROP CONSTRAINT`",
                "DROP of any object, DROP DATABASE, DROP ROLE, DROP OWNED, ...",
            ),
            (
                "Inside [the file sandbox](#the-file-sandbox) only.",
                "Inside the file sandbox only.",
            ),
        ] {
            assert_eq!(brief(allows), brief_text);
        }
        for (rule, flag) in Rule::switches() {
            let text = brief(rule.spec().allows);
            assert!(
                text.len() > 4 && text.chars().count() <= 78 && !text.contains(['`', '[', '(']),
                "{flag}: {text}"
            );
        }
    }

    #[test]
    fn set_creates_and_prunes_sections() {
        let mut doc = json!({});
        set(&mut doc, "connection.host", Some(json!("db")));
        assert_eq!(doc, json!({"connection": {"host": "db"}}));
        set(&mut doc, "connection.host", None);
        assert_eq!(doc, json!({}));
        set(&mut doc, "error_prompts", Some(json!([])));
        assert_eq!(get(&doc, "error_prompts"), Some(&json!([])));
    }
}
