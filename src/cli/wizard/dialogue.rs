//! The dialogue ([`Wizard`]): each question asked until its answer reads
//! as its kind and loads on its own, a list entry by entry, with the
//! current value shown and kept on Enter. Apart from [`run`](super::run),
//! which decides what is asked and writes the file, because this is the
//! back and forth with the person.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

use super::WizardError;
use super::answer::{read, show};
use super::database::{missing_file, unkept};
use super::document::{base, get, set, validate};
use super::questions::{ADVANCED_QUESTION, Field, Kind, List};
use crate::config::ConfigError;
use crate::config::mistake::quoted;

pub(super) struct Wizard<'a> {
    pub(super) path: &'a Path,
    pub(super) defaults: Value,
    pub(super) input: &'a mut dyn BufRead,
    pub(super) out: &'a mut dyn Write,
    pub(super) doc: &'a mut Value,
}

impl<'a> Wizard<'a> {
    /// The dialogue over `doc`, the file at `path`, each unset field shown
    /// with what it means: the built-in default.
    pub(super) fn new(
        path: &'a Path,
        input: &'a mut dyn BufRead,
        out: &'a mut dyn Write,
        doc: &'a mut Value,
    ) -> Wizard<'a> {
        Wizard {
            path,
            defaults: serde_json::to_value(crate::config::RawConfig::defaults()).unwrap_or_default(),
            input,
            out,
            doc,
        }
    }

    pub(super) fn ask(&mut self, prompt: &str) -> Result<String, WizardError> {
        write!(self.out, "{prompt}")?;
        self.out.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Err(WizardError::InputEnded(self.path.to_owned()));
        }
        Ok(line.trim_end_matches(['\n', '\r']).to_owned())
    }

    /// Whether to go on to the advanced questions: no unless told yes.
    pub(super) fn advanced(&mut self) -> Result<bool, WizardError> {
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
    pub(super) fn scalar(&mut self, f: &Field) -> Result<(), WizardError> {
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

    pub(super) fn list(&mut self, list: &List) -> Result<(), WizardError> {
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

/// A config error as the wizard shows it: the field and what is wrong (the
/// file is the one being written, named at the start).
pub(super) fn worded(e: &ConfigError) -> String {
    match &e.field {
        Some(field) => format!("{field}: {}", e.message),
        None => e.message.clone(),
    }
}
