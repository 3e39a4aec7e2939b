//! What DuckDB's plan of a statement shows (`EXPLAIN (FORMAT JSON)`): the
//! operators, whether a `DELETE`/`UPDATE` reads a whole table unfiltered,
//! the table functions it runs. Apart from the verdicts because it reads
//! DuckDB's JSON, and a plan is evidence the rules of `statement` weigh
//! with the words.

use crate::guard::outline::Outline;

/// What DuckDB's physical plan of a statement shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Every operator's name as DuckDB spells it (`DELETE`, `SEQ_SCAN`,
    /// `MERGE_INTO`, ...), in the order they appear.
    pub operators: Vec<String>,
    /// A `DELETE` or `UPDATE` reads a whole table: below it, through
    /// projections only, is a table scan with no filter. Whatever the text
    /// says (`RETURNING id AS where`), that is a change to every row.
    pub whole_table: bool,
    /// The table functions the plan runs (each operator's `Function`),
    /// lower-cased: those a view or a table macro calls too, which the
    /// text never names.
    pub functions: Vec<String>,
    /// The table a `DELETE` or `UPDATE` changes: the one it scans, through
    /// projections (DuckDB's plan names no table for an `INSERT`).
    pub changed_table: Option<String>,
    /// The rows the top operator's input is expected to bring
    /// (`Estimated Cardinality`, through projections): for a change, the
    /// rows it touches.
    pub estimated_rows: Option<u64>,
}

/// How deep a plan's JSON may nest before it is not read (and the rules
/// that need it take the worst case).
const PLAN_DEPTH: usize = 512;

impl Plan {
    /// Read the JSON of `EXPLAIN (FORMAT JSON)`: a list of operator trees,
    /// each `{"name", "children", "extra_info"}`. `None` when it is not that.
    pub fn from_json(text: &str) -> Option<Plan> {
        if crate::json_depth::nesting_depth(text) > PLAN_DEPTH {
            return None;
        }
        let roots: Vec<serde_json::Value> = crate::json_depth::read_measured(text).ok()?;
        let mut plan = Plan::default();
        // `RETURNING`: a projection over the change.
        if let Some(root) = roots.first().map(|r| through(r, &["PROJECTION"])) {
            let name = root.get("name").and_then(serde_json::Value::as_str).unwrap_or_default();
            let info = |node: &serde_json::Value, key: &str| node.get("extra_info").and_then(|i| i.get(key)).cloned();
            if let Some(input) = root.get("children").and_then(|c| c.get(0)) {
                plan.estimated_rows = info(through(input, &["PROJECTION"]), "Estimated Cardinality")
                    .and_then(|c| c.as_str().and_then(|c| c.trim().parse().ok()).or(c.as_u64()));
                if matches!(name, "DELETE" | "UPDATE") {
                    plan.changed_table = info(through(input, &["PROJECTION", "FILTER"]), "Table")
                        .and_then(|t| t.as_str().map(str::to_owned));
                }
            }
        }
        let mut stack: Vec<&serde_json::Value> = roots.iter().collect();
        while let Some(node) = stack.pop() {
            let name = node.get("name")?.as_str()?;
            plan.operators.push(name.to_owned());
            if let Some(function) = node
                .get("extra_info")
                .and_then(|i| i.get("Function"))
                .and_then(serde_json::Value::as_str)
            {
                plan.functions.push(function.to_ascii_lowercase());
            }
            let children = node.get("children")?.as_array()?;
            if matches!(name, "DELETE" | "UPDATE") && reads_whole_table(children) {
                plan.whole_table = true;
            }
            stack.extend(children.iter().rev());
        }
        Some(plan)
    }

    fn has(&self, operator: &str) -> bool {
        self.operators.iter().any(|o| o == operator)
    }
}

/// `node`, or the one operator below it through single-input operators
/// named in `passing`.
fn through<'a>(mut node: &'a serde_json::Value, passing: &[&str]) -> &'a serde_json::Value {
    while node
        .get("name")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|name| passing.contains(&name))
    {
        match node
            .get("children")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
        {
            Some([only]) => node = only,
            _ => break,
        }
    }
    node
}

/// The input of a `DELETE`/`UPDATE`, through projections, is one table scan
/// without filters.
fn reads_whole_table(children: &[serde_json::Value]) -> bool {
    let mut node = match children {
        [only] => only,
        _ => return false,
    };
    loop {
        let name = node.get("name").and_then(serde_json::Value::as_str).unwrap_or_default();
        let below = node
            .get("children")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match (name, below) {
            ("PROJECTION", [only]) => node = only,
            (scan, []) if scan.ends_with("_SCAN") => {
                let info = node.get("extra_info");
                let filtered = info.and_then(|i| i.get("Filters")).is_some_and(|f| match f {
                    serde_json::Value::String(s) => !s.trim().is_empty(),
                    serde_json::Value::Array(a) => !a.is_empty(),
                    serde_json::Value::Null => false,
                    _ => true,
                });
                return info.and_then(|i| i.get("Table")).is_some() && !filtered;
            }
            _ => return false,
        }
    }
}

/// An `INSERT` that may overwrite rows already there: `INSERT OR REPLACE`,
/// `ON CONFLICT DO UPDATE` (DuckDB plans both as `MERGE_INTO`, and the words
/// say so too; either is enough, and no plan is the worst case).
pub(super) fn overwrites(outline: &Outline, plan: Option<&Plan>) -> bool {
    outline.says_overwrite() || plan.is_none_or(|p| p.has("MERGE_INTO"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::judge;
    use super::super::{Evidence, Kind, statement};
    use super::*;
    use crate::guard::{FunctionPattern, Judge, Mode, Policy, Rule};

    /// DuckDB's plans as `EXPLAIN (FORMAT JSON)` prints them (the shapes
    /// `tests/it/duckdb.rs` reads from the real engine).
    #[test]
    fn what_plans_show() {
        let scan = |filters: &str| {
            format!(
                r#"{{"name": "SEQ_SCAN", "children": [], "extra_info": {{"Table": "memory.main.t", "Type": "Sequential Scan"{filters}}}}}"#
            )
        };
        let over =
            |name: &str, child: &str| format!(r#"{{"name": "{name}", "children": [{child}], "extra_info": {{}}}}"#);
        let cases = [
            (format!("[{}]", over("DELETE", &scan(""))), Some(true)),
            (
                format!("[{}]", over("DELETE", &scan(r#", "Filters": "id=1""#))),
                Some(false),
            ),
            (
                format!("[{}]", over("DELETE", &scan(r#", "Filters": ["id=1", "v='a'"]"#))),
                Some(false),
            ),
            (format!("[{}]", over("DELETE", &scan(r#", "Filters": """#))), Some(true)),
            // RETURNING id AS where: a projection over the whole-table delete.
            (
                format!("[{}]", over("PROJECTION", &over("DELETE", &scan("")))),
                Some(true),
            ),
            (
                format!("[{}]", over("UPDATE", &over("PROJECTION", &scan("")))),
                Some(true),
            ),
            (format!("[{}]", over("UPDATE", &over("FILTER", &scan("")))), Some(false)),
            (
                format!("[{}]", over("DELETE", &over("HASH_JOIN", &scan("")))),
                Some(false),
            ),
            (format!("[{}]", over("PROJECTION", &scan(""))), Some(false)),
            ("{}".to_owned(), None),
            ("[{\"name\": 1}]".to_owned(), None),
            (format!("{}{}", "[".repeat(600), "]".repeat(600)), None),
        ];
        for (json, whole) in cases {
            assert_eq!(Plan::from_json(&json).map(|p| p.whole_table), whole, "{json}");
        }
        let merge = Plan::from_json(&format!("[{}]", over("MERGE_INTO", &scan("")))).unwrap();
        assert_eq!(merge.operators, ["MERGE_INTO", "SEQ_SCAN"]);
        let called = Plan::from_json(
            r#"[{"name": "PROJECTION", "children": [{"name": "CHECKPOINT", "children": [], "extra_info": {"Function": "CHECKPOINT"}}], "extra_info": {}}]"#,
        )
        .unwrap();
        assert_eq!(called.functions, ["checkpoint"]);
    }

    /// What a person confirming a change is shown of DuckDB's plan: the
    /// table a DELETE or UPDATE scans, and the rows expected below the
    /// top operator (the shapes `EXPLAIN (FORMAT JSON)` prints).
    #[test]
    fn what_a_change_touches() {
        let scan = r#"{"name": "SEQ_SCAN", "children": [], "extra_info": {"Table": "memory.main.t", "Estimated Cardinality": "200"}}"#;
        let over =
            |name: &str, child: &str| format!(r#"{{"name": "{name}", "children": [{child}], "extra_info": {{}}}}"#);
        let values = r#"{"name": "COLUMN_DATA_SCAN", "children": [], "extra_info": {"Estimated Cardinality": "2"}}"#;
        let cases = [
            (format!("[{}]", over("DELETE", scan)), Some("memory.main.t"), Some(200)),
            (
                format!("[{}]", over("UPDATE", &over("PROJECTION", scan))),
                Some("memory.main.t"),
                Some(200),
            ),
            (
                format!("[{}]", over("PROJECTION", &over("DELETE", scan))),
                Some("memory.main.t"),
                Some(200),
            ),
            (format!("[{}]", over("INSERT", values)), None, Some(2)),
            (format!("[{}]", over("BATCH_INSERT", scan)), None, Some(200)),
            (format!("[{}]", over("DELETE", &over("HASH_JOIN", scan))), None, None),
        ];
        for (json, table, rows) in cases {
            let plan = Plan::from_json(&json).unwrap();
            assert_eq!(plan.changed_table.as_deref(), table, "{json}");
            assert_eq!(plan.estimated_rows, rows, "{json}");
        }
    }

    /// The table functions a plan runs are judged as if the text named
    /// them: a view or a table macro hides nothing.
    #[test]
    fn what_plans_run() {
        let runs = |f: &str| Evidence {
            plan: Some(Plan {
                functions: vec![f.to_owned()],
                ..Plan::default()
            }),
            ..Evidence::of(Kind::Select)
        };
        let read_only = Judge::new(Policy::permissive(), Mode::ReadOnly);
        let files = judge(&["allow_file_functions"]);
        let blocking = {
            let mut p = Policy::default();
            p.blocked_functions = vec![FunctionPattern::new("duckdb_secrets")];
            Judge::new(p, Mode::ReadWrite)
        };
        let maintenance = judge(&["allow_maintenance"]);
        let default = judge(&[]);
        let all = Judge::new(Policy::permissive(), Mode::ReadWrite);
        let pragmas = judge(&["allow_pragma_write"]);
        let cases: Vec<(&Judge, &str, Option<Rule>)> = vec![
            (&default, "range", None),
            (&default, "checkpoint", Some(Rule::Maintenance)),
            (&default, "force_checkpoint", Some(Rule::Maintenance)),
            (&maintenance, "checkpoint", None),
            (&read_only, "checkpoint", Some(Rule::ReadOnly)),
            (&default, "enable_profiling", Some(Rule::Pragma)),
            (&default, "enable_logging", Some(Rule::Pragma)),
            (&pragmas, "enable_logging", None),
            (&all, "json_execute_serialized_sql", Some(Rule::BlockedFunction)),
            (&all, "query", Some(Rule::BlockedFunction)),
            (&default, "read_csv", Some(Rule::FileFunction)),
            (&files, "read_csv", None),
            (&blocking, "duckdb_secrets", Some(Rule::BlockedFunction)),
        ];
        for (judge, function, want) in cases {
            let got = statement(judge, &Outline::duckdb("SELECT * FROM v"), &runs(function))
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{function}");
        }
    }

    /// The plan decides with the words: either one showing every row is
    /// enough to refuse, and no plan is the worst case.
    #[test]
    fn plans_and_words_together() {
        let whole = Plan {
            operators: vec!["DELETE".into(), "SEQ_SCAN".into()],
            whole_table: true,
            ..Plan::default()
        };
        let merge = Plan {
            operators: vec!["MERGE_INTO".into()],
            ..Plan::default()
        };
        let bounded = Plan::default();
        let cases: Vec<(&str, Kind, Option<Plan>, Option<Rule>)> = vec![
            ("DELETE FROM t WHERE id = 1", Kind::Delete, Some(bounded.clone()), None),
            (
                "DELETE FROM t RETURNING id AS where",
                Kind::Delete,
                Some(whole.clone()),
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                "DELETE FROM t WHERE true",
                Kind::Delete,
                Some(whole.clone()),
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                "DELETE FROM t WHERE id = 1",
                Kind::Delete,
                None,
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                "UPDATE t SET c = {'where': 'x'}.where",
                Kind::Update,
                Some(whole.clone()),
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "UPDATE t SET c = 1 WHERE id = 2",
                Kind::Update,
                Some(bounded.clone()),
                None,
            ),
            (
                "UPDATE t SET c = 1 WHERE id = 2",
                Kind::Update,
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "INSERT INTO t SELECT * FROM u",
                Kind::Insert,
                Some(merge.clone()),
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "INSERT INTO t SELECT * FROM u",
                Kind::Insert,
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "INSERT INTO t SELECT * FROM u",
                Kind::Insert,
                Some(bounded.clone()),
                None,
            ),
            ("INSERT INTO t VALUES (1)", Kind::Insert, Some(merge), None),
        ];
        for (sql, kind, plan, want) in cases {
            let evidence = Evidence {
                plan,
                ..Evidence::of(kind)
            };
            let got = statement(&judge(&[]), &Outline::duckdb(sql), &evidence)
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{sql}");
        }
    }
}
