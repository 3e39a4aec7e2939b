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
//! ([`List`](questions::List)) offers add, remove or continue.
//!
//! Every answer is first read as its kind ([`Kind`](questions::Kind): a whole number in its
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
//!
//! # Layout
//!
//! - `mod.rs`: [`run`] (read the file, ask, check the whole, write) and
//!   [`WizardError`].
//! - `questions.rs`: the question tables ([`FIRST`], [`ADVANCED`]) and how
//!   each answer is read ([`Kind`](questions::Kind)).
//! - `dialogue.rs`: asking them, one field or list entry at a time, each
//!   answer checked on its own.
//! - `answer.rs`: an answer read as its kind, and a value shown as one.
//! - `database.rs`: the `database` answer: a connection string without a
//!   password, or a file path written as its URL.
//! - `document.rs`: the JSON being written: a setting read and set by its
//!   dotted path, and whether the whole loads as a config.
//! - `private_file.rs`: the file written readable by its owner alone,
//!   through a new temporary file (`crate::process::private_file`, which
//!   `install` and `demo` write through too).
//!
//! [`Config::from_json`]: crate::config::Config::from_json

mod answer;
mod database;
mod dialogue;
mod document;
mod private_file;
mod questions;

pub use questions::{ADVANCED, ADVANCED_QUESTION, FIRST, Field, Question};

use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::ConfigError;
use dialogue::{Wizard, worded};
use document::validate;
use private_file::write_private;
use questions::every_field;

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
    let mut doc = read_doc(path)?;
    let mut w = Wizard::new(path, &mut *input, &mut *out, &mut doc);
    writeln!(
        w.out,
        "Configuring {}.\nEnter keeps the current value; - removes it (the default applies).",
        path.display()
    )?;
    for f in FIRST {
        // A config with `databases` names its databases there
        // (`pgmcp configure --add-database NAME`).
        if f.path == "database" && w.doc.get("databases").is_some() {
            continue;
        }
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
    next_steps(path, flag, out)
}

/// `pgmcp configure --add-database NAME`: add the entry `NAME` to the
/// file's `databases`, asking for its URL, what it holds and whether it is
/// read-only. A file that names its one database at the top level
/// (`database`, `connection`) has it moved into `databases` first, under
/// a name asked for, so the file keeps serving what it served.
pub fn add_database(
    path: &Path,
    flag: Option<&Path>,
    name: &str,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), WizardError> {
    let mut doc = read_doc(path)?;
    let mut w = Wizard::new(path, &mut *input, &mut *out, &mut doc);
    let invalid = |message: String| {
        WizardError::Invalid(ConfigError {
            file: Some(path.to_owned()),
            field: Some(format!("databases.{name}")),
            message,
        })
    };
    if !crate::toolbox::is_name(name) {
        return Err(invalid(format!(
            "{name:?} cannot name a database: use a letter, then letters, digits, _ or -"
        )));
    }
    if document::get(w.doc, &format!("databases.{name}")).is_some() {
        return Err(invalid("the file has a database of that name already".into()));
    }
    let single = w.doc.get("database").is_some() || w.doc.get("connection").is_some();
    if single && w.doc.get("databases").is_none() {
        writeln!(
            w.out,
            "This file names one database at its top level; with several, each has a name.\n\
             Name the one it has now (Enter: main):"
        )?;
        let current = loop {
            let answer = w.ask("name (current: main): ")?;
            let answer = match answer.trim() {
                "" => "main".to_owned(),
                given => given.to_owned(),
            };
            match crate::toolbox::is_name(&answer) && answer != name {
                true => break answer,
                false => writeln!(w.out, "  use a letter, then letters, digits, _ or -, and not {name:?}")?,
            }
        };
        for key in ["database", "connection"] {
            let moved = w.doc.as_object_mut().and_then(|root| root.shift_remove(key));
            let to = match key {
                "database" => "url",
                other => other,
            };
            if let Some(value) = moved {
                document::set(w.doc, &format!("databases.{current}.{to}"), Some(value));
            }
        }
        writeln!(w.out, "  moved to databases.{current}")?;
    }
    let questions = [
        Field {
            path: format!("databases.{name}.url").into(),
            kind: questions::Kind::Database,
            about: "Which database? A PostgreSQL URL (no password: it goes in ~/.pgpass or in\n\
                    the variable this database reads it from), or the path to an SQLite or DuckDB file."
                .into(),
        },
        Field {
            path: format!("databases.{name}.description").into(),
            kind: questions::Kind::Text,
            about: "What does it hold? The agent reads this to choose a database.".into(),
        },
        Field {
            path: format!("databases.{name}.read_only").into(),
            kind: questions::Kind::Bool,
            about: "Read-only? Answer no to allow writes on this database alone.".into(),
        },
    ];
    for f in &questions {
        writeln!(w.out)?;
        w.scalar(f)?;
    }
    validate(w.doc, Some(path)).map_err(WizardError::Invalid)?;
    write_private(path, &doc)?;
    writeln!(
        out,
        "  its password, if it needs one: {} or the password file",
        crate::config::password_variable(name)
    )?;
    next_steps(path, flag, out)
}

/// The file as it is, or `{}` when there is none yet.
fn read_doc(path: &Path) -> Result<Value, WizardError> {
    let unreadable = |message: String| {
        WizardError::Unreadable(ConfigError {
            file: Some(path.to_owned()),
            field: None,
            message,
        })
    };
    match fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(doc) if doc.is_object() => Ok(doc),
            Ok(_) => Err(unreadable("is not a JSON object { ... }".to_owned())),
            Err(e) => Err(unreadable(crate::config::mistake::syntax(&e))),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(WizardError::Write(path.to_owned(), e)),
    }
}

/// Say where the file went and what to run next.
fn next_steps(path: &Path, flag: Option<&Path>, out: &mut dyn Write) -> Result<(), WizardError> {
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
