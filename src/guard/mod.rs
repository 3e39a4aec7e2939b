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

pub mod duckdb;
mod lexer;
pub mod outline;
mod reach;
mod read_only;
pub mod routines;
mod rules;
pub mod sqlite;
mod tree;

use std::fmt;

use serde_json::{Map, Value};

pub use routines::Routines;
pub use rules::{DEFAULT_BLOCKED_FUNCTIONS, FunctionPattern};
pub use tree::{ParseError, Tree, parse};

/// What the guard allows. Every `allow_*` is false by default: blocked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `server.read_only`: also blocks changing the transaction's read-only state.
    pub read_only: bool,
    pub allow_set: bool,
    pub allow_drop: bool,
    pub allow_truncate: bool,
    pub allow_do: bool,
    pub allow_copy_from: bool,
    pub allow_copy_to_file: bool,
    pub allow_create_function: bool,
    pub allow_prepare: bool,
    pub allow_delete_without_where: bool,
    pub allow_update_without_where: bool,
    pub allow_alter_system: bool,
    pub allow_load: bool,
    pub allow_create_rule: bool,
    pub allow_merge: bool,
    pub allow_create_extension: bool,
    pub allow_role_changes: bool,
    /// `VACUUM`, `ANALYZE`, `CLUSTER`, `REINDEX`, `CHECKPOINT`, `REFRESH
    /// MATERIALIZED VIEW`: they rewrite tables or lock them for their duration.
    pub allow_maintenance: bool,
    /// `LOCK TABLE` in any mode stronger than `ACCESS SHARE`.
    pub allow_lock: bool,
    /// SQLite: `ATTACH`/`DETACH`.
    pub allow_attach: bool,
    /// SQLite: `PRAGMA`s that change the file or the connection.
    pub allow_pragma_write: bool,
    /// SQLite: `VACUUM INTO`, which writes a copy of the database anywhere.
    pub allow_vacuum_into: bool,
    /// DuckDB: `EXPORT DATABASE` and `IMPORT DATABASE`.
    pub allow_export: bool,
    /// DuckDB: table functions that read files (`read_csv`, `read_parquet`,
    /// `glob`, ...) and files named as tables (`FROM 'data.csv'`). Also turns
    /// DuckDB's external access on, which any file access needs.
    pub allow_file_functions: bool,
    /// Functions that may not be called anywhere in a statement, by any route.
    pub blocked_functions: Vec<FunctionPattern>,
    /// Functions the person running pgmcp vouches only read, which read-only
    /// mode then runs although the catalog cannot show it (their own
    /// functions, or built-in volatile ones).
    pub read_only_functions: Vec<FunctionPattern>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            read_only: false,
            allow_set: false,
            allow_drop: false,
            allow_truncate: false,
            allow_do: false,
            allow_copy_from: false,
            allow_copy_to_file: false,
            allow_create_function: false,
            allow_prepare: false,
            allow_delete_without_where: false,
            allow_update_without_where: false,
            allow_alter_system: false,
            allow_load: false,
            allow_create_rule: false,
            allow_merge: false,
            allow_create_extension: false,
            allow_role_changes: false,
            allow_maintenance: false,
            allow_lock: false,
            allow_attach: false,
            allow_pragma_write: false,
            allow_vacuum_into: false,
            allow_export: false,
            allow_file_functions: false,
            blocked_functions: DEFAULT_BLOCKED_FUNCTIONS
                .iter()
                .map(|p| FunctionPattern::new(p))
                .collect(),
            read_only_functions: Vec::new(),
        }
    }
}

impl Policy {
    /// The `allow_*` switches by config name (`protection.allow_drop`, ...), in
    /// the README's order.
    pub const FLAGS: [&'static str; 23] = [
        "allow_set",
        "allow_drop",
        "allow_truncate",
        "allow_do",
        "allow_copy_from",
        "allow_copy_to_file",
        "allow_create_function",
        "allow_prepare",
        "allow_delete_without_where",
        "allow_update_without_where",
        "allow_alter_system",
        "allow_load",
        "allow_create_rule",
        "allow_merge",
        "allow_create_extension",
        "allow_role_changes",
        "allow_maintenance",
        "allow_lock",
        "allow_attach",
        "allow_pragma_write",
        "allow_vacuum_into",
        "allow_export",
        "allow_file_functions",
    ];

    /// A switch by its config name; `None` for an unknown name.
    pub fn flag(&self, name: &str) -> Option<bool> {
        // set_flag is the one place names map to fields: turn the switch off
        // on a copy; if that changed anything, it was on.
        let mut copy = self.clone();
        copy.set_flag(name, false).ok()?;
        Some(copy != *self)
    }

    /// Set a switch by its config name (`read_only`, `allow_drop`, ...).
    pub fn set_flag(&mut self, name: &str, value: bool) -> Result<(), String> {
        let slot = match name {
            "read_only" => &mut self.read_only,
            "allow_set" => &mut self.allow_set,
            "allow_drop" => &mut self.allow_drop,
            "allow_truncate" => &mut self.allow_truncate,
            "allow_do" => &mut self.allow_do,
            "allow_copy_from" => &mut self.allow_copy_from,
            "allow_copy_to_file" => &mut self.allow_copy_to_file,
            "allow_create_function" => &mut self.allow_create_function,
            "allow_prepare" => &mut self.allow_prepare,
            "allow_delete_without_where" => &mut self.allow_delete_without_where,
            "allow_update_without_where" => &mut self.allow_update_without_where,
            "allow_alter_system" => &mut self.allow_alter_system,
            "allow_load" => &mut self.allow_load,
            "allow_create_rule" => &mut self.allow_create_rule,
            "allow_merge" => &mut self.allow_merge,
            "allow_create_extension" => &mut self.allow_create_extension,
            "allow_role_changes" => &mut self.allow_role_changes,
            "allow_maintenance" => &mut self.allow_maintenance,
            "allow_lock" => &mut self.allow_lock,
            "allow_attach" => &mut self.allow_attach,
            "allow_pragma_write" => &mut self.allow_pragma_write,
            "allow_vacuum_into" => &mut self.allow_vacuum_into,
            "allow_export" => &mut self.allow_export,
            "allow_file_functions" => &mut self.allow_file_functions,
            other => return Err(format!("unknown protection flag \"{other}\"")),
        };
        *slot = value;
        Ok(())
    }

    /// Every `allow_*` true and no blocked functions; read-only off. For tests
    /// and for people who want only the always-on rules.
    pub fn permissive() -> Policy {
        Policy {
            read_only: false,
            allow_set: true,
            allow_drop: true,
            allow_truncate: true,
            allow_do: true,
            allow_copy_from: true,
            allow_copy_to_file: true,
            allow_create_function: true,
            allow_prepare: true,
            allow_delete_without_where: true,
            allow_update_without_where: true,
            allow_alter_system: true,
            allow_load: true,
            allow_create_rule: true,
            allow_merge: true,
            allow_create_extension: true,
            allow_role_changes: true,
            allow_maintenance: true,
            allow_lock: true,
            allow_attach: true,
            allow_pragma_write: true,
            allow_vacuum_into: true,
            allow_export: true,
            allow_file_functions: true,
            blocked_functions: Vec::new(),
            read_only_functions: Vec::new(),
        }
    }
}

/// Which rule refused a query. The kebab-case names are stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The string is not valid PostgreSQL SQL, is empty, or is too deeply nested to check.
    Parse,
    MultiStatement,
    /// A change to the transaction's read-only state while `server.read_only` is on.
    ReadOnly,
    Set,
    Drop,
    Truncate,
    Do,
    CopyFrom,
    CopyToFile,
    CreateFunction,
    Prepare,
    DeleteWithoutWhere,
    UpdateWithoutWhere,
    AlterSystem,
    Load,
    CreateRule,
    Merge,
    CreateExtension,
    RoleChanges,
    BlockedFunction,
    Maintenance,
    Lock,
    Attach,
    Pragma,
    VacuumInto,
    /// DuckDB's `EXPORT DATABASE` / `IMPORT DATABASE`.
    Export,
    /// DuckDB's file-reading table functions, and files named as tables.
    FileFunction,
}

impl Rule {
    pub const ALL: [Rule; 27] = [
        Rule::Parse,
        Rule::MultiStatement,
        Rule::ReadOnly,
        Rule::Set,
        Rule::Drop,
        Rule::Truncate,
        Rule::Do,
        Rule::CopyFrom,
        Rule::CopyToFile,
        Rule::CreateFunction,
        Rule::Prepare,
        Rule::DeleteWithoutWhere,
        Rule::UpdateWithoutWhere,
        Rule::AlterSystem,
        Rule::Load,
        Rule::CreateRule,
        Rule::Merge,
        Rule::CreateExtension,
        Rule::RoleChanges,
        Rule::BlockedFunction,
        Rule::Maintenance,
        Rule::Lock,
        Rule::Attach,
        Rule::Pragma,
        Rule::VacuumInto,
        Rule::Export,
        Rule::FileFunction,
    ];

    /// Rules only the guards of the embedded engines (SQLite, DuckDB) apply:
    /// PostgreSQL has no such statements.
    pub const EMBEDDED_ONLY: [Rule; 5] = [
        Rule::Attach,
        Rule::Pragma,
        Rule::VacuumInto,
        Rule::Export,
        Rule::FileFunction,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rule::Parse => "parse",
            Rule::MultiStatement => "multi-statement",
            Rule::ReadOnly => "read-only",
            Rule::Set => "set",
            Rule::Drop => "drop",
            Rule::Truncate => "truncate",
            Rule::Do => "do",
            Rule::CopyFrom => "copy-from",
            Rule::CopyToFile => "copy-to-file",
            Rule::CreateFunction => "create-function",
            Rule::Prepare => "prepare",
            Rule::DeleteWithoutWhere => "delete-without-where",
            Rule::UpdateWithoutWhere => "update-without-where",
            Rule::AlterSystem => "alter-system",
            Rule::Load => "load",
            Rule::CreateRule => "create-rule",
            Rule::Merge => "merge",
            Rule::CreateExtension => "create-extension",
            Rule::RoleChanges => "role-changes",
            Rule::BlockedFunction => "blocked-function",
            Rule::Maintenance => "maintenance",
            Rule::Lock => "lock",
            Rule::Attach => "attach",
            Rule::Pragma => "pragma",
            Rule::VacuumInto => "vacuum-into",
            Rule::Export => "export",
            Rule::FileFunction => "file-function",
        }
    }

    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }
}

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

/// Parse `sql` once and apply every rule of `policy` to every node. `routines`
/// are the catalog's facts about functions (see [`routines`]): every function
/// the statement can run, by any route, is judged with them.
pub fn check(policy: &Policy, routines: &Routines, sql: &str) -> Result<Checked, Violation> {
    let tree = parse(sql).map_err(|e| Violation {
        rule: Rule::Parse,
        message: match e.position {
            Some(pos) => format!("SQL parse error: {} (at character {pos})", e.message),
            None => format!("SQL parse error: {}", e.message),
        },
    })?;
    one_statement(tree.stmts.len())?;
    let mut walk = Walk {
        policy,
        routines,
        params: 0,
    };
    for stmt in &tree.stmts {
        walk.value(stmt)?;
        if policy.read_only {
            read_only::statement(policy, stmt)?;
        }
    }
    routines::judge_implicit(policy, routines)?;
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
    policy: &'a Policy,
    routines: &'a Routines,
    params: usize,
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

    /// Every rule for one node: the rule table, the functions it can run, and
    /// in read-only mode, that it does not write.
    fn node(&self, kind: &str, fields: &Map<String, Value>) -> Result<(), Violation> {
        rules::check_node(self.policy, kind, fields)?;
        reach::check(self.policy, self.routines, kind, fields)?;
        if self.policy.read_only {
            read_only::node_in_read(kind, fields)?;
        }
        Ok(())
    }

    /// Walk the fields of a node of type `kind` ("" for a plain object).
    fn fields(&mut self, kind: &str, map: &Map<String, Value>) -> Result<(), Violation> {
        for (key, child) in map {
            if let Some((_, typed)) = UNWRAPPED.iter().find(|(field, _)| field == key)
                && let Value::Object(child_fields) = child
            {
                if kind == "AlterSystemStmt" {
                    // ALTER SYSTEM's SET is governed by allow_alter_system, not
                    // allow_set; read-only mode still applies to it.
                    rules::check_read_only_set(self.policy, child_fields)?;
                } else {
                    self.node(typed, child_fields)?;
                }
            }
            self.value(child)?;
        }
        Ok(())
    }
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
            &Policy::default(),
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
                check(&Policy::default(), &Routines::default(), sql)
                    .unwrap()
                    .param_count(),
                n,
                "{sql}"
            );
        }
    }
}
