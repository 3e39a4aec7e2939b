//! The guard: decides from PostgreSQL's own parse tree whether a SQL string may
//! run. Pure (no IO): the same policy and input always get the same verdict.
//!
//! It visits every node of the tree, so a rule applies wherever its node
//! appears: a `DELETE` inside a CTE, a `COPY (...) TO`, an `EXPLAIN ANALYZE`, a
//! `PREPARE` body or a rule action; a blocked function in the target list, in
//! `FROM`, in `WHERE` or in a column default. Two rules can never be switched
//! off: the string must parse, and it must hold exactly one statement
//! (PostgreSQL enforces the second again, because pgmcp uses the extended
//! protocol).

mod device;
// Compiled in every build, so its pure tests run without DuckDB's C++ build;
// without the `duckdb` feature only those tests call it.
#[cfg_attr(not(feature = "duckdb"), allow(dead_code))]
pub mod duckdb;
mod finding;
pub mod hypothetical;
mod judge;
mod lexer;
// What only DuckDB's guard reads of the outline (`EXPLAIN` starts, a final
// `;`) is unused without the `duckdb` feature.
#[cfg_attr(not(feature = "duckdb"), allow(dead_code))]
pub mod outline;
mod policy;
pub mod preview;
mod reach;
mod read_only;
pub mod routines;
// `readme_rows`: only the test that holds the README's settings table to
// the rule table reads it.
#[cfg_attr(not(test), allow(dead_code))]
mod rule;
pub mod sqlite;
mod statements;
mod tree;

use std::fmt;

use serde_json::{Map, Value};

pub use finding::{Finding, Remedy};
pub use judge::{Judge, Mode};
pub use policy::{DEFAULT_BLOCKED_FUNCTIONS, FunctionPattern, Policy};
pub use routines::Routines;
pub use rule::{Engines, RULES, Rule, Spec};
pub use tree::{ParseError, Tree, parse};

/// A refusal: which rule, and a message that says what was blocked, why, and
/// which setting allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Violation {}

/// A statement naming pgmcp's own process as a file (`/dev/stdout`,
/// `/proc/self/fd/1`; see [`device`]), or a file through `..` after a
/// directory name (where a symbolic link makes the text lie): refused by
/// `rule` whatever the switches say.
pub(crate) fn own_process(rule: Rule, path: &str) -> Result<(), Violation> {
    if device::names_process(path) {
        return violation(
            rule,
            format!(
                "'{path}' names pgmcp's own process (its standard streams or open files): reading or writing it would steal the MCP client's requests or corrupt the answers. No setting allows it"
            ),
        );
    }
    if device::climbs_after_a_name(path) {
        return violation(
            rule,
            format!(
                "'{path}' goes back up with '..' after a directory name: through a symbolic link it lands elsewhere than it reads, pgmcp's own process included. Name the file without '..'"
            ),
        );
    }
    Ok(())
}

/// A refusal by `rule`, worded by the caller: the rules no switch turns off.
pub(crate) fn violation(rule: Rule, message: String) -> Result<(), Violation> {
    Err(Violation { rule, message })
}

/// A statement the embedded engine (SQLite, DuckDB) says would write, in
/// read-only mode: refused before it runs, though the file is read-only too.
fn write_in_read_only(judge: &Judge, outline: &outline::Outline) -> Result<(), Violation> {
    let verb = || match outline.verb.is_empty() {
        true => "this statement".to_owned(),
        false => outline.verb.clone(),
    };
    judge.write(verb, "the database is opened read-only")
}

/// A statement whose kind the embedded engine (SQLite, DuckDB) reports as
/// something no rule covers (`reported`, as the engine said it): what no
/// rule says may run does not, whatever the switches.
fn unsupported(engine: &str, reported: impl fmt::Debug) -> Result<(), Violation> {
    violation(
        Rule::Parse,
        format!(
            "this kind of {engine} statement is not supported ({engine} reports {reported:?}, which no rule covers)"
        ),
    )
}

/// A query the guard accepted, with its parse tree for later stages.
#[derive(Debug, Clone)]
pub struct Checked {
    pub tree: Tree,
    /// The highest `$n` placeholder, noted during the guard's walk.
    params: usize,
}

impl Checked {
    /// The names of the relations the statement mentions (any `RangeVar`).
    pub fn relations(&self) -> Vec<String> {
        fn collect(value: &Value, out: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    if let Some(Value::String(name)) = map.get("relname") {
                        out.push(name.clone());
                    }
                    map.values().for_each(|v| collect(v, out));
                }
                Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        self.tree.stmts.iter().for_each(|s| collect(s, &mut out));
        out.sort();
        out.dedup();
        out
    }

    /// The highest `$n` placeholder the statement uses (0 when none).
    pub fn param_count(&self) -> usize {
        self.params
    }
}

/// Parse `sql` once and report every node to `judge`. `routines` are the
/// catalog's facts about functions (see the `routines` module): every function the
/// statement can run, by any route, is judged with them.
pub fn check(judge: &Judge, routines: &Routines, sql: &str) -> Result<Checked, Violation> {
    let tree = parse(sql).map_err(|e| Violation {
        rule: Rule::Parse,
        message: match e.position {
            Some(pos) => format!("SQL parse error: {} (at character {pos})", e.message),
            None => format!("SQL parse error: {}", e.message),
        },
    })?;
    one_statement(tree.stmts.len())?;
    check_tree(judge, routines, tree)
}

/// [`check`] of a tree already parsed (or built from a parsed one, as a
/// hypothetical index's expressions are: [`hypothetical`]).
fn check_tree(judge: &Judge, routines: &Routines, tree: Tree) -> Result<Checked, Violation> {
    let mut walk = Walk {
        judge,
        routines,
        params: 0,
        written: None,
        held: None,
    };
    for stmt in &tree.stmts {
        walk.value(stmt)?;
        if let Some(refused) = walk.written.take() {
            return Err(refused);
        }
        read_only::statement(judge, stmt)?;
    }
    routines::judge_implicit(judge, routines)?;
    if let Some(refused) = walk.held {
        return Err(refused);
    }
    Ok(Checked {
        tree,
        params: walk.params,
    })
}

/// The rule no setting switches off: exactly one statement per call, whichever
/// parser counted them.
pub fn one_statement(count: usize) -> Result<(), Violation> {
    match count {
        0 => Err(Violation {
            rule: Rule::Parse,
            message: "SQL parse error: the query is empty".to_owned(),
        }),
        1 => Ok(()),
        n => Err(Violation {
            rule: Rule::MultiStatement,
            message: format!(
                "multi-statement queries are not allowed: found {n} statements. Send one statement per call"
            ),
        }),
    }
}

/// One walk over the tree. `params` gathers the highest `$n` seen, so the tree
/// is walked only once.
struct Walk<'a> {
    judge: &'a Judge,
    routines: &'a Routines,
    params: usize,
    /// In read-only mode, the first write found (`WITH d AS (DELETE ...)`,
    /// `SET transaction_read_only = off`), named once the walk is done.
    written: Option<Violation>,
    /// In read-only mode, the first refusal some other setting could lift (a
    /// `protection.*` switch, `protection.read_only_functions`), named only
    /// if the statement does not write: there, turning the setting on would
    /// only lead to the refusal of the write.
    held: Option<Violation>,
}

impl Walk<'_> {
    /// Visit every node: in libpg_query's JSON every node is `{"NodeType": {..}}`.
    /// A field typed as one specific struct is printed without that wrapper; the
    /// ones a rule cares about are named in [`UNWRAPPED`] and checked as their type.
    fn value(&mut self, value: &Value) -> Result<(), Violation> {
        match value {
            Value::Object(map) => {
                if map.len() == 1
                    && let Some((kind, fields)) = map.iter().next()
                    && kind.starts_with(|c: char| c.is_ascii_uppercase())
                    && let Value::Object(fields) = fields
                {
                    if kind == "ParamRef"
                        && let Some(n) = fields.get("number").and_then(Value::as_u64)
                    {
                        self.params = self.params.max(usize::try_from(n).unwrap_or(usize::MAX));
                    }
                    self.node(kind, fields)?;
                    return self.fields(kind, fields);
                }
                self.fields("", map)
            }
            Value::Array(items) => items.iter().try_for_each(|item| self.value(item)),
            _ => Ok(()),
        }
    }

    /// Every rule for one node: what the statement is, the functions it can
    /// run, and whether it writes.
    fn node(&mut self, kind: &str, fields: &Map<String, Value>) -> Result<(), Violation> {
        let found = statements::check_node(self.judge, kind, fields);
        self.hold(found, Found::Statement)?;
        let found = reach::check(self.judge, self.routines, kind, fields);
        self.hold(found, Found::Function)?;
        let found = read_only::node_in_read(self.judge, kind, fields);
        self.hold(found, Found::Statement)
    }

    /// In read-only mode a refusal names what would let the statement run
    /// there: first the rules no setting lifts (returned as found), then a
    /// write (only `server.read_only` lets it run), then the rest (a switch,
    /// or `protection.read_only_functions` for a function the statement
    /// calls). What waits is refused once the walk is done, so the verdict
    /// is the one the first refusal gave; only its reason changes.
    fn hold(&mut self, found: Result<(), Violation>, by: Found) -> Result<(), Violation> {
        let Err(refused) = found else { return Ok(()) };
        if !self.judge.read_only() {
            return Err(refused);
        }
        let slot = match (refused.rule, by) {
            (Rule::ReadOnly, Found::Statement) => &mut self.written,
            (Rule::ReadOnly, Found::Function) => &mut self.held,
            (rule, _) if rule.flag().is_some() => &mut self.held,
            _ => return Err(refused),
        };
        slot.get_or_insert(refused);
        Ok(())
    }

    /// Walk the fields of a node of type `kind` ("" for a plain object).
    fn fields(&mut self, kind: &str, map: &Map<String, Value>) -> Result<(), Violation> {
        for (key, child) in map {
            if let Some((_, typed)) = UNWRAPPED.iter().find(|(field, _)| field == key)
                && let Value::Object(child_fields) = child
            {
                // `COPY t TO STDOUT` reads its relation: it runs what a read
                // runs (a policy), not what a write does (triggers, defaults).
                let typed = if kind == "CopyStmt" && *typed == "WrittenRelation" && statements::copies_to_client(map) {
                    "RangeVar"
                } else {
                    typed
                };
                if kind == "AlterSystemStmt" {
                    // ALTER SYSTEM's SET is governed by ALTER SYSTEM's switch,
                    // not SET's; read-only mode still applies to it.
                    let found = statements::check_read_only_set(self.judge, child_fields);
                    self.hold(found, Found::Statement)?;
                } else {
                    self.node(typed, child_fields)?;
                }
            }
            self.value(child)?;
        }
        Ok(())
    }
}

/// Which check of a node refused, for [`Walk::hold`]: a read-only refusal
/// of the statement's own (a write) or of a function it calls.
#[derive(Clone, Copy)]
enum Found {
    Statement,
    Function,
}

/// Unwrapped typed fields that hold a node a rule applies to: (field, type).
const UNWRAPPED: &[(&str, &str)] = &[
    // ALTER SYSTEM / ALTER ROLE ... SET / ALTER DATABASE ... SET
    ("setstmt", "VariableSetStmt"),
    // CALL: the procedure called.
    ("funccall", "FuncCall"),
    // Every type named: casts, column definition lists, table function columns.
    ("typeName", "TypeName"),
    // The relation a statement writes (INSERT/UPDATE/DELETE/MERGE, COPY,
    // ALTER TABLE): it runs the relation's write functions too.
    ("relation", "WrittenRelation"),
];

/// How a dialect writes placeholders, for the messages of [`check_params`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// PostgreSQL's `$1..$n`.
    Dollar,
    /// SQLite's `?`, `?NNN`, `:name`, `@name` and `$name`, and DuckDB's `?`,
    /// `$1` and `$name`, bound in order.
    Positional,
}

/// Parameters must match the placeholders one to one, and be JSON scalars.
pub fn check_params(placeholders: usize, params: &[Value], style: Placeholders) -> Result<(), String> {
    if let Some((i, kind)) = params.iter().enumerate().find_map(|(i, p)| match p {
        Value::Array(_) => Some((i, "an array")),
        Value::Object(_) => Some((i, "an object")),
        _ => None,
    }) {
        let how = match style {
            Placeholders::Dollar => " (pass JSON as a string, with a cast such as $1::jsonb)",
            Placeholders::Positional => " (pass JSON as a string)",
        };
        return Err(format!(
            "params[{i}] is {kind}: parameters must be strings, numbers, booleans or null{how}"
        ));
    }
    if params.len() != placeholders {
        let uses = match (placeholders, style) {
            (0, _) => "no placeholders".to_owned(),
            (1, Placeholders::Dollar) => "$1".to_owned(),
            (n, Placeholders::Dollar) => format!("$1..${n}"),
            (1, Placeholders::Positional) => "1 placeholder".to_owned(),
            (n, Placeholders::Positional) => format!("{n} placeholders"),
        };
        let given = match params.len() {
            1 => "1 parameter was".to_owned(),
            n => format!("{n} parameters were"),
        };
        return Err(format!("the query uses {uses}, but {given} given"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod param_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn relations_mentioned() {
        let checked = check(
            &Judge::new(Policy::default(), Mode::ReadWrite),
            &Routines::default(),
            "SELECT * FROM users u JOIN sales.orders o ON true WHERE EXISTS (SELECT 1 FROM users)",
        )
        .unwrap();
        assert_eq!(checked.relations(), ["orders", "users"]);
    }

    #[test]
    fn param_checks() {
        let cases: Vec<(usize, Value, Option<&str>)> = vec![
            (0, json!([]), None),
            (2, json!(["a", 1]), None),
            (3, json!([null, true, 1.5]), None),
            (1, json!([]), Some("the query uses $1, but 0 parameters were given")),
            (2, json!([1]), Some("the query uses $1..$2, but 1 parameter was given")),
            (
                0,
                json!([1]),
                Some("the query uses no placeholders, but 1 parameter was given"),
            ),
            (
                1,
                json!([[1, 2]]),
                Some("params[0] is an array: parameters must be strings, numbers, booleans or null"),
            ),
            (2, json!([1, {"a": 1}]), Some("params[1] is an object")),
        ];
        for (n, params, expected) in cases {
            let params: Vec<Value> = serde_json::from_value(params).unwrap();
            match (check_params(n, &params, Placeholders::Dollar), expected) {
                (Ok(()), None) => {}
                (Err(e), Some(prefix)) => assert!(e.to_string().starts_with(prefix), "{e}"),
                (got, want) => panic!("{n} {params:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn param_count_is_the_highest_placeholder() {
        let cases = [
            ("SELECT 1", 0),
            ("SELECT $1", 1),
            ("SELECT $2, $1 WHERE x = $3", 3),
            ("SELECT $5", 5),
            ("SELECT '$1'", 0),
        ];
        for (sql, n) in cases {
            assert_eq!(
                check(
                    &Judge::new(Policy::default(), Mode::ReadWrite),
                    &Routines::default(),
                    sql
                )
                .unwrap()
                .param_count(),
                n,
                "{sql}"
            );
        }
    }
}
