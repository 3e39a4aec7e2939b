//! A person confirms a statement before it runs (`confirm`). In read-write
//! mode, a statement the guard classifies as writing (`writes`, the
//! default), or every statement (`all`), that came from a model does not
//! run until a person accepts it: the pipeline stops before execution with
//! [`Error::Unconfirmed`], holding the [`Proposal`] the person is shown
//! (the statement as it would run, the tables it changes, the rows the
//! engine estimates, never by running it). The door asks (MCP elicitation)
//! and calls again with [`Consent::Given`]; the statement is judged again
//! in full then, and runs only if it is still the one accepted.
//!
//! A statement that needed no confirmation runs under the guard's reading
//! judge (and, on PostgreSQL, in a `READ ONLY` transaction): if it turned
//! out to write after all, it is refused, never run unconfirmed.
//!
//! Pure; what the pipeline asks the engines for a proposal: [`proposal`].

pub(crate) mod proposal;

use serde::Serialize;
use serde_json::Value;

use crate::backend::Dialect;
use crate::config::{Config, ConfirmWhen};

/// Who speaks for a `query` call.
#[derive(Debug, Clone)]
pub enum Consent {
    /// The caller is the person, or a program acting for them (the
    /// library's own callers, `pgmcp query` at a terminal): nothing is
    /// asked.
    Caller,
    /// A model sent the statement: what `confirm` covers waits for a
    /// person.
    Model,
    /// A model sent the statement, and a person accepted this proposal.
    Given(Proposal),
}

/// What a person is shown before a statement runs, and what their
/// acceptance is tied to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    /// The statement as it would run (after the `before_query` hooks).
    pub sql: String,
    pub params: Vec<Value>,
    /// The SQLite file inside `sqlite.root` the call names, if any.
    pub database: Option<String>,
    /// The `databases` entry it runs on, on a server with several.
    pub named: Option<String>,
    /// The guard classifies it as writing (with `confirm: "all"`, a
    /// statement that only reads is proposed too).
    pub writes: bool,
    /// The tables it changes, as the engine reports them (PostgreSQL: its
    /// plan's, or where it is not planned, what the statement names;
    /// triggers and functions may change others).
    pub tables: Vec<String>,
    /// The rows the engine's planner expects it to touch, without running
    /// it; `None` when the engine gives no estimate.
    pub estimated_rows: Option<u64>,
    /// Why there is no estimate, when there is none.
    pub unestimated: Option<&'static str>,
    /// The engine, for the person's message.
    #[serde(skip)]
    pub dialect: Dialect,
}

impl Proposal {
    /// Whether this is the statement `sql` with `params` on `database`:
    /// what a person's acceptance is tied to (the estimate may move).
    pub fn is_for(&self, sql: &str, params: &[Value], database: Option<&str>, named: Option<&str>) -> bool {
        self.sql == sql
            && self.params == params
            && self.database.as_deref() == database
            && self.named.as_deref() == named
    }

    /// The message the person reads: pgmcp's facts first (what it changes,
    /// where, the estimate, the values), then the statement whole, each
    /// of its lines marked so that no text of the statement's can pass for
    /// pgmcp's; nothing in it can hide (see [`shown`]).
    pub fn message(&self) -> String {
        let mut text = match self.writes {
            true => "The agent asks to run the statement below, which changes data.\n".to_owned(),
            false => "The agent asks to run the statement below.\n".to_owned(),
        };
        if self.writes {
            match self.tables.is_empty() {
                true => text.push_str("Tables it changes: not known to pgmcp; read the statement\n"),
                false => text.push_str(&format!("Tables it changes: {}\n", one_line(&self.tables.join(", ")))),
            }
        }
        let engine = match self.dialect {
            Dialect::Postgres => "PostgreSQL",
            Dialect::Sqlite => "SQLite",
            Dialect::DuckDb => "DuckDB",
        };
        match self.estimated_rows {
            Some(rows) => text.push_str(&format!(
                "Estimated rows: about {rows} ({engine}'s planner guess, not a count: it can be far off; nothing \
                 has run)\n"
            )),
            None => text.push_str(&format!(
                "Estimated rows: none, {}\n",
                self.unestimated.unwrap_or("the engine gives no estimate for it")
            )),
        }
        if let Some(named) = &self.named {
            text.push_str(&format!("Database: {}\n", one_line(named)));
        }
        if let Some(database) = &self.database {
            text.push_str(&format!("Database file: {}\n", one_line(database)));
        }
        if !self.params.is_empty() {
            let marker = |i: usize| match self.dialect {
                Dialect::Postgres => format!("${i}"),
                Dialect::Sqlite | Dialect::DuckDb => format!("?{i}"),
            };
            let params: Vec<String> = self
                .params
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{} = {}", marker(i + 1), one_line(&v.to_string())))
                .collect();
            text.push_str(&format!("Parameters: {}\n", params.join(", ")));
        }
        text.push('\n');
        for line in shown(self.sql.trim()).lines() {
            text.push_str(STATEMENT_LINE);
            text.push_str(line);
            text.push('\n');
        }
        text.push_str("\nAccept to run it. Decline or cancel, and nothing runs.");
        text
    }
}

/// What starts each line of the statement in the person's message.
pub const STATEMENT_LINE: &str = "│ ";

/// Characters that show nothing, reorder the text, or end a line where a
/// client may break it: written as `\u{...}` in what the person reads.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{205F}'..='\u{206F}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
                | '\u{E000}'..='\u{F8FF}'
                | '\u{F0000}'..='\u{10FFFF}'
        )
}

/// Longest run of spaces shown as it is; a longer one is counted.
const MOST_SPACES: usize = 8;

/// `text` as the person reads it, so that nothing in it can hide what
/// runs: [`hidden`] characters are written as `\u{...}`, a run of more
/// than one line with nothing visible on it (blank, or only hidden
/// characters) is counted rather than shown, and so is a long run of
/// spaces within a line.
pub fn shown(text: &str) -> String {
    let visible = |line: &str| line.chars().any(|c| !c.is_whitespace() && !hidden(c));
    let mut out = String::with_capacity(text.len());
    let mut blank = 0usize;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 && !visible(line) {
            blank += 1;
            continue;
        }
        match blank {
            0 => {}
            1 => out.push('\n'),
            n => out.push_str(&format!("\n[{n} lines with nothing visible]")),
        }
        blank = 0;
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&escaped(line));
    }
    if blank > 1 {
        out.push_str(&format!("\n[{blank} lines with nothing visible]"));
    }
    out
}

/// `text` on one line: line breaks written as `\n` and [`hidden`]
/// characters escaped (a table's name, a value: no text of theirs can
/// pass for a line of the message).
pub fn one_line(text: &str) -> String {
    escaped(text).replace('\n', "\\n")
}

/// One line's characters: [`hidden`] ones escaped, long runs of spaces
/// counted, and in a word that mixes Latin letters with others (`оne`,
/// its `о` Cyrillic), the others escaped too: a look-alike letter cannot
/// pass for the one it imitates. A word wholly in another script, or in
/// accented Latin (`São`), stays readable.
fn escaped(line: &str) -> String {
    let escape = |c: char| format!("\\u{{{:04X}}}", c as u32);
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let mut spaces = String::new();
    let latin = |c: char| {
        c.is_ascii_alphanumeric() || matches!(c, '\u{00C0}'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}') && c.is_alphabetic()
    };
    let end_word = |out: &mut String, word: &mut String| {
        let foreign = |c: char| c.is_alphanumeric() && !latin(c);
        let mixed = word.chars().any(latin) && word.chars().any(foreign);
        for c in word.chars() {
            match hidden(c) || (mixed && foreign(c)) {
                true => out.push_str(&escape(c)),
                false => out.push(c),
            }
        }
        word.clear();
    };
    let end_spaces = |out: &mut String, spaces: &mut String| {
        let count = spaces.chars().count();
        match count > MOST_SPACES {
            true => out.push_str(&format!(" [{count} spaces] ")),
            false => out.push_str(spaces),
        }
        spaces.clear();
    };
    for c in line.chars() {
        if c == ' ' || c == '\t' {
            end_word(&mut out, &mut word);
            spaces.push(c);
            continue;
        }
        end_spaces(&mut out, &mut spaces);
        // Hidden characters inside a word are part of it: `o\u{200B}ne`.
        if c.is_alphanumeric() || c == '_' || hidden(c) {
            word.push(c);
            continue;
        }
        end_word(&mut out, &mut word);
        out.push(c);
    }
    end_word(&mut out, &mut word);
    end_spaces(&mut out, &mut spaces);
    out
}

/// Whether a call with `consent` waits for a person where `confirm`
/// covers its statement: only a model's calls, in read-write mode, with
/// `confirm` on. `Given` counts only for the statement it was given for.
pub fn gate<'a>(
    config: &Config,
    consent: &'a Consent,
    sql: &str,
    params: &[Value],
    database: Option<&str>,
) -> Gate<'a> {
    match consent {
        Consent::Caller => Gate::Open,
        _ if config.read_only || config.confirm.when == ConfirmWhen::Never => Gate::Open,
        Consent::Given(proposal) if proposal.is_for(sql, params, database, config.name.as_deref()) => {
            Gate::Given(proposal)
        }
        Consent::Given(_) | Consent::Model => Gate::Closed(config.confirm.when),
    }
}

/// What [`gate`] decided for one call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gate<'a> {
    /// The statement runs as the guard allows: nobody is asked.
    Open,
    /// A person accepted this statement: it runs as the guard allows.
    Given(&'a Proposal),
    /// What `confirm` covers waits for a person; the rest runs under the
    /// guard's reading judge.
    Closed(ConfirmWhen),
}

impl Gate<'_> {
    /// Whether a statement the guard classifies as writing (`writes`) must
    /// wait for a person.
    pub fn asks(&self, writes: bool) -> bool {
        match self {
            Gate::Open | Gate::Given(_) => false,
            Gate::Closed(ConfirmWhen::All) => true,
            Gate::Closed(ConfirmWhen::Writes) => writes,
            Gate::Closed(ConfirmWhen::Never) => false,
        }
    }

    /// Whether what runs unasked must only read.
    pub fn reading_only(&self) -> bool {
        matches!(self, Gate::Closed(_))
    }
}

/// The tables a PostgreSQL statement names as the ones it changes: the
/// target of every `INSERT`, `UPDATE`, `DELETE` and `MERGE` (in CTEs
/// too), and the relation a DDL statement acts on. Read from the parse
/// tree the guard judged.
pub fn pg_written_tables(stmts: &[Value]) -> Vec<String> {
    fn name(range: &Value) -> Option<String> {
        let relname = range.get("relname")?.as_str()?;
        Some(match range.get("schemaname").and_then(Value::as_str) {
            Some(schema) if !schema.is_empty() => format!("{schema}.{relname}"),
            _ => relname.to_owned(),
        })
    }
    fn walk(value: &Value, top: bool, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    let dml = matches!(key.as_str(), "InsertStmt" | "UpdateStmt" | "DeleteStmt" | "MergeStmt");
                    if dml || (top && key.ends_with("Stmt")) {
                        if let Some(range) = inner.get("relation") {
                            out.extend(name(range));
                        }
                        if let Some(Value::Array(ranges)) = inner.get("relations") {
                            for range in ranges {
                                out.extend(name(range.get("RangeVar").unwrap_or(range)));
                            }
                        }
                        if let Some(into) = inner.get("into").and_then(|i| i.get("rel")) {
                            out.extend(name(into));
                        }
                        if key == "DropStmt" {
                            out.extend(dropped(inner));
                        }
                    }
                    walk(inner, false, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, false, out)),
            _ => {}
        }
    }
    /// What a `DROP` removes: a table by its name, anything else by its
    /// kind and name (`view v`, `schema s`).
    fn dropped(drop: &Value) -> Vec<String> {
        let kind = drop.get("removeType").and_then(Value::as_str).unwrap_or_default();
        let kind = kind
            .strip_prefix("OBJECT_")
            .unwrap_or(kind)
            .to_ascii_lowercase()
            .replace('_', " ");
        let sval = |v: &Value| {
            v.get("String")
                .and_then(|s| s.get("sval"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let objects = drop
            .get("objects")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        objects
            .iter()
            .filter_map(|object| {
                match object
                    .get("List")
                    .and_then(|l| l.get("items"))
                    .and_then(Value::as_array)
                {
                    Some(items) => items
                        .iter()
                        .map(sval)
                        .collect::<Option<Vec<_>>>()
                        .map(|parts| parts.join(".")),
                    None => sval(object),
                }
            })
            .map(|object| match kind.as_str() {
                "table" => object,
                _ => format!("{kind} {object}"),
            })
            .collect()
    }
    let mut out = Vec::new();
    for stmt in stmts {
        // `{"stmt": {"<Kind>Stmt": {...}}}`: the statement's own node is top.
        walk(stmt.get("stmt").unwrap_or(stmt), true, &mut out);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|t| seen.insert(t.clone()));
    out
}

/// The PostgreSQL statement kinds `EXPLAIN` plans (`EXPLAIN` of anything
/// else is a syntax error): the top node of the parse tree.
pub fn pg_explainable(stmts: &[Value]) -> bool {
    stmts
        .first()
        .and_then(|s| s.get("stmt").unwrap_or(s).as_object())
        .is_some_and(|node| {
            node.keys().any(|k| {
                matches!(
                    k.as_str(),
                    "SelectStmt"
                        | "InsertStmt"
                        | "UpdateStmt"
                        | "DeleteStmt"
                        | "MergeStmt"
                        | "CreateTableAsStmt"
                        | "ExecuteStmt"
                        | "DeclareCursorStmt"
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Confirm;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn tables_a_statement_changes() {
        let cases: &[(&str, &[&str])] = &[
            ("UPDATE orders SET x = 1 WHERE id = 2", &["orders"]),
            ("DELETE FROM sales.orders WHERE id = 2", &["sales.orders"]),
            ("INSERT INTO a SELECT * FROM b", &["a"]),
            (
                "WITH gone AS (DELETE FROM a WHERE id = 1 RETURNING *) INSERT INTO b SELECT * FROM gone",
                &["b", "a"],
            ),
            ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", &["t"]),
            ("CREATE TABLE n (id int)", &["n"]),
            ("CREATE TABLE n AS SELECT * FROM o", &["n"]),
            ("ALTER TABLE o ADD COLUMN y int", &["o"]),
            ("TRUNCATE a, b", &["a", "b"]),
            ("DROP TABLE victims, s.other", &["victims", "s.other"]),
            ("DROP VIEW v", &["view v"]),
            ("DROP SCHEMA s CASCADE", &["schema s"]),
            ("SELECT * FROM o", &[]),
            ("SELECT nextval('s')", &[]),
        ];
        for (sql, tables) in cases {
            let tree = crate::guard::parse(sql).unwrap();
            assert_eq!(pg_written_tables(&tree.stmts), *tables, "{sql}");
        }
    }

    #[test]
    fn what_the_person_sees_hides_nothing() {
        let cases = [
            ("UPDATE t SET v = 1", "UPDATE t SET v = 1"),
            ("a\n\nb", "a\n\nb"),
            ("a\n\n\n\nb", "a\n[3 lines with nothing visible]\nb"),
            ("a\n   \n\t\nb", "a\n[2 lines with nothing visible]\nb"),
            ("a\n\u{3164}\n\u{3164}\nb", "a\n[2 lines with nothing visible]\nb"),
            ("a /* \u{202E} */ b", "a /* \\u{202E} */ b"),
            ("a\u{200B}b\rc\u{1b}[2J", "a\\u{200B}b\\u{000D}c\\u{001B}[2J"),
            ("a\u{2028}b\u{2029}c\u{85}d", "a\\u{2028}b\\u{2029}c\\u{0085}d"),
            (
                "x\u{E0041}\u{E0042}\u{00AD}\u{FE0F}",
                "x\\u{E0041}\\u{E0042}\\u{00AD}\\u{FE0F}",
            ),
            (
                "WHERE id = 1                        OR true",
                "WHERE id = 1 [24 spaces] OR true",
            ),
            ("a\t\t\t\t\t\t\t\t\t\tb", "a [10 spaces] b"),
            ("a\tb", "a\tb"),
            ("tail\n\n\n", "tail\n[3 lines with nothing visible]"),
            ("v <> '\u{43E}ne'", "v <> '\\u{043E}ne'"),
            (
                "name = 'Привет' AND city = 'São Paulo'",
                "name = 'Привет' AND city = 'São Paulo'",
            ),
            ("'Pаris'", "'P\\u{0430}ris'"),
        ];
        for (text, expected) in cases {
            assert_eq!(shown(text), expected, "{text:?}");
        }
        assert_eq!(one_line("a\nTables it changes: x"), "a\\nTables it changes: x");
    }

    #[test]
    fn what_explain_plans() {
        for (sql, explainable) in [
            ("UPDATE o SET x = 1 WHERE id = 2", true),
            ("SELECT 1", true),
            ("CREATE TABLE n AS SELECT 1", true),
            ("CREATE TABLE n (id int)", false),
            ("ALTER TABLE o ADD COLUMN y int", false),
        ] {
            let tree = crate::guard::parse(sql).unwrap();
            assert_eq!(pg_explainable(&tree.stmts), explainable, "{sql}");
        }
    }

    #[test]
    fn who_is_asked() {
        let proposal = Proposal {
            sql: "DELETE FROM t WHERE id = $1".into(),
            params: vec![json!(1)],
            database: None,
            named: None,
            writes: true,
            tables: vec!["t".into()],
            estimated_rows: Some(1),
            unestimated: None,
            dialect: Dialect::Postgres,
        };
        let config = |read_only: bool, when: ConfirmWhen| {
            let mut c = Config::from_json("{}", None).unwrap();
            c.read_only = read_only;
            c.confirm = Confirm {
                when,
                timeout: Duration::from_secs(1),
            };
            c
        };
        let (sql, params) = (proposal.sql.as_str(), proposal.params.as_slice());
        let other = [json!(2)];
        let given = Consent::Given(proposal.clone());
        // (read_only, confirm, consent, params, gate)
        let cases: Vec<(bool, ConfirmWhen, &Consent, &[Value], Gate)> = vec![
            (false, ConfirmWhen::Writes, &Consent::Caller, params, Gate::Open),
            (true, ConfirmWhen::All, &Consent::Model, params, Gate::Open),
            (false, ConfirmWhen::Never, &Consent::Model, params, Gate::Open),
            (
                false,
                ConfirmWhen::Writes,
                &Consent::Model,
                params,
                Gate::Closed(ConfirmWhen::Writes),
            ),
            (
                false,
                ConfirmWhen::All,
                &Consent::Model,
                params,
                Gate::Closed(ConfirmWhen::All),
            ),
            (false, ConfirmWhen::Writes, &given, params, Gate::Given(&proposal)),
            // Accepted for other values: not this statement.
            (
                false,
                ConfirmWhen::Writes,
                &given,
                &other,
                Gate::Closed(ConfirmWhen::Writes),
            ),
        ];
        for (read_only, when, consent, params, expected) in cases {
            let got = gate(&config(read_only, when), consent, sql, params, None);
            assert_eq!(got, expected, "{read_only} {when:?} {consent:?} {params:?}");
        }
        assert!(Gate::Closed(ConfirmWhen::Writes).asks(true));
        assert!(!Gate::Closed(ConfirmWhen::Writes).asks(false));
        assert!(Gate::Closed(ConfirmWhen::All).asks(false));
        assert!(!Gate::Given(&proposal).asks(true));
        let message = proposal.message();
        for part in [
            "changes data",
            "DELETE FROM t WHERE id = $1",
            "$1 = 1",
            "Tables it changes: t",
            "about 1",
        ] {
            assert!(message.contains(part), "{part}: {message}");
        }
    }
}
