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
    /// The tables it changes, as the engine reports them (PostgreSQL: as
    /// the statement names them; triggers and functions may change others).
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

    /// The message the person reads: the statement, its parameters, the
    /// tables it changes and the estimate, and what each answer does.
    pub fn message(&self) -> String {
        let mut text = match self.writes {
            true => "The agent asks to run this statement, which changes data:\n\n".to_owned(),
            false => "The agent asks to run this statement:\n\n".to_owned(),
        };
        text.push_str(&shown(self.sql.trim()));
        text.push('\n');
        if !self.params.is_empty() {
            let marker = |i: usize| match self.dialect {
                Dialect::Postgres => format!("${i}"),
                Dialect::Sqlite | Dialect::DuckDb => format!("?{i}"),
            };
            let params: Vec<String> = self
                .params
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{} = {v}", marker(i + 1)))
                .collect();
            text.push_str(&format!("\nParameters: {}\n", params.join(", ")));
        }
        if let Some(named) = &self.named {
            text.push_str(&format!("Database: {}\n", shown(named)));
        }
        if let Some(database) = &self.database {
            text.push_str(&format!("Database file: {}\n", shown(database)));
        }
        if self.writes {
            match self.tables.is_empty() {
                true => text.push_str("Tables it changes: not reported by the engine; read the statement\n"),
                false => text.push_str(&format!("Tables it changes: {}\n", shown(&self.tables.join(", ")))),
            }
        }
        let engine = match self.dialect {
            Dialect::Postgres => "PostgreSQL",
            Dialect::Sqlite => "SQLite",
            Dialect::DuckDb => "DuckDB",
        };
        match self.estimated_rows {
            Some(rows) => text.push_str(&format!(
                "Estimated rows: about {rows} ({engine}'s plan estimate; nothing has run)\n"
            )),
            None => text.push_str(&format!(
                "Estimated rows: none, {}\n",
                self.unestimated.unwrap_or("the engine gives no estimate for it")
            )),
        }
        text.push_str("\nAccept to run it. Decline or cancel, and nothing runs.");
        text
    }
}

/// `text` as the person reads it, so that nothing in it can hide what
/// runs: characters that are invisible, reorder the text or move the
/// cursor are written as `\u{...}`, and a run of more than one blank
/// line is counted rather than shown.
pub fn shown(text: &str) -> String {
    let hidden = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{061C}' | '\u{FEFF}')
    };
    let mut out = String::with_capacity(text.len());
    let mut blank = 0usize;
    for (i, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() && i > 0 {
            blank += 1;
            continue;
        }
        match blank {
            0 => {}
            1 => out.push('\n'),
            n => out.push_str(&format!("\n[{n} blank lines]")),
        }
        blank = 0;
        if i > 0 {
            out.push('\n');
        }
        for c in line.chars() {
            match hidden(c) {
                true => out.push_str(&format!("\\u{{{:04X}}}", c as u32)),
                false => out.push(c),
            }
        }
    }
    if blank > 1 {
        out.push_str(&format!("\n[{blank} blank lines]"));
    }
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
                    }
                    walk(inner, false, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, false, out)),
            _ => {}
        }
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

/// The tables PostgreSQL's plan (`EXPLAIN (FORMAT JSON)`) changes: every
/// `ModifyTable` node's relation, in each plan (a rule can add plans), as
/// PostgreSQL rewrote the statement (a view's rules, its base table).
pub fn pg_planned_tables(document: &Value) -> Vec<String> {
    fn walk(node: &Value, out: &mut Vec<String>) {
        match node {
            Value::Object(map) => {
                if map.get("Node Type").and_then(Value::as_str) == Some("ModifyTable")
                    && let Some(name) = map.get("Relation Name").and_then(Value::as_str)
                {
                    let name = match map.get("Schema").and_then(Value::as_str) {
                        Some(schema) => format!("{schema}.{name}"),
                        None => name.to_owned(),
                    };
                    if !out.contains(&name) {
                        out.push(name);
                    }
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(document, &mut out);
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

/// The rows PostgreSQL's plan (`EXPLAIN (FORMAT JSON)`) expects the
/// statement to touch: for a change (`ModifyTable`, which itself returns
/// none without `RETURNING`), the rows of the plan below it; else the
/// top node's.
pub fn pg_estimated_rows(document: &Value) -> Option<u64> {
    let top = document.get(0)?.get("Plan")?;
    let node = match top.get("Node Type").and_then(Value::as_str) {
        Some("ModifyTable") => top.get("Plans")?.get(0)?,
        _ => top,
    };
    let rows = node.get("Plan Rows")?.as_f64()?;
    (rows >= 0.0).then_some(rows.round() as u64)
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
            ("a\n\n\n\nb", "a\n[3 blank lines]\nb"),
            ("a\n   \n\t\nb", "a\n[2 blank lines]\nb"),
            ("a /* \u{202E} */ b", "a /* \\u{202E} */ b"),
            ("a\u{200B}b\rc\u{1b}[2J", "a\\u{200B}b\\u{000D}c\\u{001B}[2J"),
            ("tail\n\n\n", "tail\n[3 blank lines]"),
        ];
        for (text, expected) in cases {
            assert_eq!(shown(text), expected, "{text:?}");
        }
    }

    #[test]
    fn tables_a_plan_changes() {
        let plan = json!([
            {"Plan": {"Node Type": "ModifyTable", "Operation": "Delete", "Relation Name": "pets", "Schema": "public",
                      "Plans": [{"Node Type": "Seq Scan", "Relation Name": "pets"}]}},
            {"Plan": {"Node Type": "ModifyTable", "Relation Name": "log"}}
        ]);
        assert_eq!(pg_planned_tables(&plan), ["public.pets", "log"]);
        assert!(pg_planned_tables(&json!([{"Plan": {"Node Type": "Seq Scan", "Relation Name": "t"}}])).is_empty());
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
    fn estimates_from_plans() {
        let cases = [
            (
                json!([{"Plan": {"Node Type": "ModifyTable", "Plan Rows": 0, "Plans": [{"Node Type": "Seq Scan", "Plan Rows": 42}]}}]),
                Some(42),
            ),
            (json!([{"Plan": {"Node Type": "Seq Scan", "Plan Rows": 7.0}}]), Some(7)),
            (json!([{"Plan": {"Node Type": "ModifyTable", "Plan Rows": 0}}]), None),
            (json!({"not": "a plan"}), None),
        ];
        for (plan, rows) in cases {
            assert_eq!(pg_estimated_rows(&plan), rows, "{plan}");
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
