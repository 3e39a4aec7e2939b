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

pub use questions::{ADVANCED, ADVANCED_QUESTION, FIRST, Question};

use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::{ConfigError, RawConfig};
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
