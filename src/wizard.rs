//! `pgmcp configure`: the interactive wizard that writes the config file.
//!
//! It asks for every scalar field in [`FIELDS`] order, showing the current
//! value: the file's, else the built-in default ([`RawConfig::defaults`], the
//! same a file is layered over). Enter keeps it, `-` removes the file's value
//! so the default applies. Then, for each
//! list in [`LISTS`] offers add, remove or continue. Every answer is validated
//! by the same code that loads the file ([`Config::from_json`]), and a bad
//! answer is refused with the field named and asked again; the file is written
//! only when the whole config is valid, with mode 0600, and holds only the
//! values given (Enter at every question writes `{}`: all defaults). Input is
//! read line by line, so the wizard can be driven by a pipe as well as a person.
//!
//! There is no password question: the config has no password field on purpose.

use std::borrow::Cow;
use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use crate::config::{Config, ConfigError, RawConfig};
use crate::guard::Rule;

/// How an answer is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A whole number.
    Number,
    Bool,
    Choice(&'static [&'static str]),
    /// Words separated by spaces, stored as a list of strings (hook `args`).
    Words,
}

/// A scalar field: its dotted path in the file and how to read it.
#[derive(Debug, Clone)]
pub struct Field {
    pub path: Cow<'static, str>,
    pub kind: Kind,
}

const fn field(path: &'static str, kind: Kind) -> Field {
    Field {
        path: Cow::Borrowed(path),
        kind,
    }
}

const LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];
const FORMATS: &[&str] = &["text", "json"];

/// Every scalar field, in the order asked: these settings, then a question
/// for each of the guard's switches, in the rule table's order.
/// `hooks.default_timeout_seconds` comes after the hook lists
/// ([`LATE_FIELDS`]), since it is required only once a hook exists.
pub static FIELDS: LazyLock<Vec<Field>> = LazyLock::new(|| {
    SETTINGS
        .iter()
        .cloned()
        .chain(Rule::switches().map(|(_, flag)| Field {
            path: Cow::Owned(format!("protection.{flag}")),
            kind: Kind::Bool,
        }))
        .collect()
});

const SETTINGS: &[Field] = &[
    field("database", Kind::Text),
    field("sqlite.root", Kind::Text),
    field("duckdb.memory_limit", Kind::Text),
    field("duckdb.threads", Kind::Number),
    field("connection.host", Kind::Text),
    field("connection.port", Kind::Number),
    field("connection.dbname", Kind::Text),
    field("connection.user", Kind::Text),
    field("connection.role", Kind::Text),
    field("connection.read_only_as_login", Kind::Bool),
    field(
        "connection.sslmode",
        Kind::Choice(&crate::backend::postgres::SslMode::NAMES),
    ),
    field("connection.sslrootcert", Kind::Text),
    field("connection.sslcert", Kind::Text),
    field("connection.sslkey", Kind::Text),
    field("connection.passfile", Kind::Text),
    field("connection.application_name", Kind::Text),
    field("connection.connect_timeout_seconds", Kind::Number),
    field("pool.max_conns", Kind::Number),
    field("pool.max_waiting", Kind::Number),
    field("pool.max_conn_lifetime_seconds", Kind::Number),
    field("pool.max_conn_idle_seconds", Kind::Number),
    field("server.read_only", Kind::Bool),
    field("logging.level", Kind::Choice(LEVELS)),
    field("logging.format", Kind::Choice(FORMATS)),
    field("logging.output", Kind::Text),
    field("query.default_timeout_seconds", Kind::Number),
    field("query.list_tables_timeout_seconds", Kind::Number),
    field("query.describe_table_timeout_seconds", Kind::Number),
    field("query.max_rows", Kind::Number),
    field("query.default_limit", Kind::Number),
    field("query.max_result_length", Kind::Number),
    field("query.max_sql_length", Kind::Number),
    field("query.max_params_bytes", Kind::Number),
];

/// The fields asked after the lists.
pub const LATE_FIELDS: &[Field] = &[field("hooks.default_timeout_seconds", Kind::Number)];

/// A list field and the fields of each entry; `optional` ones may be left empty.
#[derive(Debug, Clone, Copy)]
pub struct List {
    pub path: &'static str,
    pub fields: &'static [(&'static str, Kind)],
    pub optional: &'static [&'static str],
}

const HOOK: &[(&str, Kind)] = &[
    ("pattern", Kind::Text),
    ("command", Kind::Text),
    ("args", Kind::Words),
    ("timeout_seconds", Kind::Number),
];

pub const LISTS: &[List] = &[
    List {
        path: "query.timeout_rules",
        fields: &[("pattern", Kind::Text), ("timeout_seconds", Kind::Number)],
        optional: &[],
    },
    List {
        path: "error_prompts",
        fields: &[("pattern", Kind::Text), ("message", Kind::Text)],
        optional: &[],
    },
    List {
        path: "sanitization",
        fields: &[
            ("pattern", Kind::Text),
            ("replacement", Kind::Text),
            ("description", Kind::Text),
        ],
        optional: &["description"],
    },
    List {
        path: "hooks.before_query",
        fields: HOOK,
        optional: &["args", "timeout_seconds"],
    },
    List {
        path: "hooks.after_query",
        fields: HOOK,
        optional: &["args", "timeout_seconds"],
    },
];

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
    let mut doc = match fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| {
                WizardError::Unreadable(ConfigError {
                    file: Some(path.to_owned()),
                    field: None,
                    message: "is not a JSON object".to_owned(),
                })
            })?,
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
        "Configuring {}.\nEnter keeps the current value; - removes it (the default applies).\n\
         Passwords are not stored here: set PGPASSWORD in your client's config, or use ~/.pgpass (mode 0600).\n",
        path.display()
    )?;
    for f in FIELDS.iter() {
        w.scalar(f)?;
    }
    for list in LISTS {
        w.list(list)?;
    }
    for f in LATE_FIELDS {
        w.scalar(f)?;
    }
    // Each answer was checked on its own; now the whole. A scalar at fault is
    // asked again; anything else stops the write.
    loop {
        match validate(w.doc, Some(path)) {
            Ok(()) => break,
            Err(e) => {
                let at_fault = e
                    .field
                    .as_deref()
                    .and_then(|name| FIELDS.iter().chain(LATE_FIELDS).find(|f| f.path == name));
                match at_fault {
                    Some(f) => {
                        writeln!(w.out, "  {e}")?;
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
    let next = match flag {
        Some(flag) => format!("pgmcp check --config {}", shell_word(&flag.to_string_lossy())),
        None => "pgmcp check".to_owned(),
    };
    // Windows files have no mode: the file has its directory's ACL.
    let mode = if cfg!(unix) { " (mode 0600)" } else { "" };
    writeln!(out, "\nWrote {}{mode}. Next: {next}", path.display())?;
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

    /// Ask for one field until the answer is valid on its own.
    fn scalar(&mut self, f: &Field) -> Result<(), WizardError> {
        loop {
            let current = match (get(self.doc, &f.path), get(&self.defaults, &f.path)) {
                (Some(value), _) => show(value),
                (None, Some(default)) if !default.is_null() => format!("{} (default)", show(default)),
                (None, _) => "not set".to_owned(),
            };
            let choices = match f.kind {
                Kind::Choice(names) => format!(" [{}]", names.join(", ")),
                Kind::Bool => " [true, false]".to_owned(),
                _ => String::new(),
            };
            let answer = self.ask(&format!("{}{choices} (current: {current}): ", f.path))?;
            let value = match answer.trim() {
                "" => break Ok(()),
                "-" => None,
                text => match parse(f.kind, text) {
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
                Err(e) if e.field.as_deref() == Some(&*f.path) => writeln!(self.out, "  {e}")?,
                _ => {
                    set(self.doc, &f.path, value);
                    break Ok(());
                }
            }
        }
    }

    fn list(&mut self, list: &List) -> Result<(), WizardError> {
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
                other => writeln!(self.out, "  \"{other}\": answer a, r or c")?,
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
                match parse(kind, &answer) {
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

fn validate(doc: &Value, path: Option<&Path>) -> Result<(), ConfigError> {
    Config::from_json(&doc.to_string(), path).map(drop)
}

fn parse(kind: Kind, text: &str) -> Result<Value, String> {
    let text = text.trim();
    match kind {
        Kind::Text => Ok(Value::String(text.to_owned())),
        Kind::Number => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("\"{text}\" is not a whole number")),
        Kind::Bool => match text {
            "true" | "yes" | "y" | "on" => Ok(Value::Bool(true)),
            "false" | "no" | "n" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("\"{text}\": answer true or false")),
        },
        Kind::Choice(names) if names.contains(&text) => Ok(Value::String(text.to_owned())),
        Kind::Choice(names) => Err(format!("\"{text}\": use one of {}", names.join(", "))),
        Kind::Words => Ok(Value::Array(
            text.split_whitespace().map(|w| Value::String(w.to_owned())).collect(),
        )),
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
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

    #[test]
    fn every_field_and_list_is_a_config_field() {
        // Setting each field to a plausible value must not be refused as an
        // unknown field: the table and RawConfig agree.
        for f in FIELDS.iter().chain(LATE_FIELDS) {
            let value = match f.kind {
                Kind::Number => json!(5),
                Kind::Bool => json!(true),
                Kind::Choice(names) => json!(names[0]),
                // The one text field checked against the file system.
                Kind::Text if f.path == "sqlite.root" => json!(std::env::temp_dir()),
                Kind::Text if f.path == "duckdb.memory_limit" => json!("1GB"),
                Kind::Text | Kind::Words => json!("/tmp/x"),
            };
            let mut doc = base();
            set(&mut doc, &f.path, Some(value));
            assert!(validate(&doc, None).is_ok(), "{}: {:?}", f.path, validate(&doc, None));
        }
        for list in LISTS {
            let mut doc = base();
            set(&mut doc, list.path, Some(json!([])));
            assert!(validate(&doc, None).is_ok(), "{}", list.path);
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
