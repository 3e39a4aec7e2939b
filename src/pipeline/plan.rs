//! What a model needs of a PostgreSQL plan (`EXPLAIN (FORMAT JSON)`), in a
//! few hundred bytes: the totals, the nodes that took the time, and what
//! looks wrong (row estimates far off, sequential scans of large tables,
//! sorts and hashes that spilled to disk). Pure: it reads the plan JSON
//! PostgreSQL returned and nothing else.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A row estimate this many times off (either way) is flagged.
const MISESTIMATE: f64 = 10.0;
/// A sequential scan over at least this many rows is flagged.
const LARGE_SCAN: f64 = 10_000.0;
/// How many of the slowest nodes are listed.
const SLOWEST: usize = 5;
/// How many findings are listed; the rest are counted.
const FINDINGS: usize = 8;

/// The plan, read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanSummary {
    /// The planner's total cost of the whole plan.
    pub total_cost: f64,
    /// The rows the planner expected the statement to return.
    pub estimated_rows: f64,
    /// With `analyze`: the rows it returned, and the time it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_rows: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planning_ms: Option<f64>,
    /// The nodes that took the most time of their own (with `analyze`), else
    /// the costliest: what to look at first.
    pub slowest: Vec<PlanNode>,
    /// What looks wrong, one line each, in plan order (the root first); at
    /// most eight, the rest counted in a last line.
    pub findings: Vec<String>,
}

/// One node of the plan, as the slowest are listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanNode {
    /// `Seq Scan on orders`, `Hash Join`, `Sort`, ...
    pub node: String,
    pub estimated_rows: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_rows: Option<f64>,
    /// Time spent in this node alone (its children's taken off), with
    /// `analyze`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_ms: Option<f64>,
    /// The node's own cost (its children's taken off).
    pub self_cost: f64,
}

/// Read PostgreSQL's `EXPLAIN (FORMAT JSON)` answer: an array of one object
/// with `Plan` (and with `ANALYZE`, `Planning Time` and `Execution Time`).
pub fn summarize(explained: &Value) -> Option<PlanSummary> {
    let top = explained.as_array()?.first()?;
    let plan = top.get("Plan")?;
    let mut nodes = Vec::new();
    let mut findings = Vec::new();
    walk(plan, Context::default(), &mut nodes, &mut findings);
    if findings.len() > FINDINGS {
        let more = findings.len() - FINDINGS;
        findings.truncate(FINDINGS);
        findings.push(format!("and {more} more alike: see the whole plan"));
    }
    let analyzed = nodes.iter().any(|n| n.self_ms.is_some());
    nodes.sort_by(|a, b| {
        let key = |n: &PlanNode| match analyzed {
            true => n.self_ms.unwrap_or(0.0),
            false => n.self_cost,
        };
        key(b).total_cmp(&key(a))
    });
    nodes.truncate(SLOWEST);
    Some(PlanSummary {
        total_cost: number(plan, "Total Cost").unwrap_or(0.0),
        estimated_rows: number(plan, "Plan Rows").unwrap_or(0.0),
        actual_rows: actual_rows(plan),
        execution_ms: number(top, "Execution Time"),
        planning_ms: number(top, "Planning Time"),
        slowest: nodes,
        findings,
    })
}

/// The names of the indexes the plan's nodes scan (index, index-only and
/// bitmap index scans, in subplans too).
pub fn index_names(explained: &Value) -> Vec<&str> {
    fn collect<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                out.extend(map.get("Index Name").and_then(Value::as_str));
                map.values().for_each(|v| collect(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(explained, &mut out);
    out
}

/// What a statement's plan says it changes, before it runs: each
/// `ModifyTable` node's relation (as PostgreSQL rewrote the statement: a
/// view's rules, its base table), and the rows they touch, summed over
/// them (a writable CTE holds one each). `rows` is the top node's rows
/// where nothing changes (a `SELECT` that calls a function).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Change {
    pub tables: Vec<String>,
    pub rows: Option<u64>,
}

/// [`Change`] of a plan (`EXPLAIN (FORMAT JSON)`, no `ANALYZE`).
pub fn change(explained: &Value) -> Change {
    fn visit(node: &Value, change: &mut Change, touched: &mut Option<f64>) {
        match node {
            Value::Object(map) => {
                if map.get("Node Type").and_then(Value::as_str) == Some("ModifyTable") {
                    if let Some(table) = map.get("Relation Name").and_then(Value::as_str)
                        && !change.tables.iter().any(|t| t == table)
                    {
                        change.tables.push(table.to_owned());
                    }
                    // The rows come from the plans that feed it (its
                    // `Outer` child; before PostgreSQL 14, one `Member`
                    // per table), not from an InitPlan or SubPlan listed
                    // before them; a ModifyTable returns none itself
                    // without RETURNING.
                    let fed = map
                        .get("Plans")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter(|p| matches!(relationship(p), Some("Outer" | "Member")))
                        .filter_map(|p| number(p, "Plan Rows"))
                        .reduce(|a, b| a + b);
                    *touched = match (*touched, fed) {
                        (Some(sum), Some(rows)) => Some(sum + rows),
                        (None, rows) | (rows, None) => rows,
                    };
                }
                map.values().for_each(|v| visit(v, change, touched));
            }
            Value::Array(items) => items.iter().for_each(|v| visit(v, change, touched)),
            _ => {}
        }
    }
    fn relationship(node: &Value) -> Option<&str> {
        node.get("Parent Relationship").and_then(Value::as_str)
    }
    let mut change = Change::default();
    let mut touched = None;
    visit(explained, &mut change, &mut touched);
    let rows = match change.tables.is_empty() {
        true => explained
            .get(0)
            .and_then(|top| top.get("Plan"))
            .and_then(|p| number(p, "Plan Rows")),
        false => touched,
    };
    change.rows = rows.filter(|r| *r >= 0.0).map(|r| r.round() as u64);
    change
}

fn number(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64)
}

/// Rows over all the node's loops.
fn actual_rows(node: &Value) -> Option<f64> {
    Some(number(node, "Actual Rows")? * number(node, "Actual Loops").unwrap_or(1.0))
}

/// What a node's place in the plan changes about reading it.
#[derive(Debug, Clone, Copy)]
struct Context {
    /// Processes running the node at once: below a `Gather`, its workers
    /// and the leader, whose loops each count the same wall time.
    processes: f64,
    /// A node above may stop reading early (`Limit`, a semi or anti join):
    /// fewer rows than estimated is then no misestimate.
    stops_early: bool,
}

impl Default for Context {
    fn default() -> Context {
        Context {
            processes: 1.0,
            stops_early: false,
        }
    }
}

/// Wall time over all the node's loops, in milliseconds.
fn actual_ms(node: &Value, context: Context) -> Option<f64> {
    Some(number(node, "Actual Total Time")? * number(node, "Actual Loops").unwrap_or(1.0) / context.processes)
}

/// The context of `node`'s children.
fn below(node: &Value, context: Context) -> Context {
    let kind = node.get("Node Type").and_then(Value::as_str).unwrap_or("");
    let join = node.get("Join Type").and_then(Value::as_str).unwrap_or("");
    Context {
        processes: match kind {
            "Gather" | "Gather Merge" => number(node, "Workers Launched").unwrap_or(0.0) + 1.0,
            _ => context.processes,
        },
        stops_early: context.stops_early || kind == "Limit" || matches!(join, "Semi" | "Anti"),
    }
}

/// `Seq Scan on orders` / `Index Scan using orders_pkey on orders` / `Hash Join`.
fn name(node: &Value) -> String {
    let kind = node.get("Node Type").and_then(Value::as_str).unwrap_or("?");
    let index = node.get("Index Name").and_then(Value::as_str);
    let relation = node.get("Relation Name").and_then(Value::as_str);
    match (index, relation) {
        (Some(index), Some(relation)) => format!("{kind} using {index} on {relation}"),
        (None, Some(relation)) => format!("{kind} on {relation}"),
        (Some(index), None) => format!("{kind} using {index}"),
        (None, None) => kind.to_owned(),
    }
}

fn walk(node: &Value, context: Context, nodes: &mut Vec<PlanNode>, findings: &mut Vec<String>) {
    let children: Vec<&Value> = node
        .get("Plans")
        .and_then(Value::as_array)
        .map(|plans| plans.iter().collect())
        .unwrap_or_default();
    let shown = name(node);
    let estimated = number(node, "Plan Rows").unwrap_or(0.0);
    let actual = actual_rows(node);
    let inner = below(node, context);
    let self_ms = actual_ms(node, context).map(|total| {
        let below: f64 = children.iter().filter_map(|c| actual_ms(c, inner)).sum();
        (total - below).max(0.0)
    });
    let self_cost = {
        let total = number(node, "Total Cost").unwrap_or(0.0);
        let below: f64 = children.iter().filter_map(|c| number(c, "Total Cost")).sum();
        (total - below).max(0.0)
    };
    // Per loop, as the planner estimates: a node run in many loops is
    // estimated per loop too.
    if let (Some(rows), Some(loops)) = (number(node, "Actual Rows"), number(node, "Actual Loops")) {
        let (low, high) = (estimated.min(rows).max(1.0), estimated.max(rows).max(1.0));
        let stopped = context.stops_early && rows < estimated;
        if loops > 0.0 && high / low >= MISESTIMATE && !stopped {
            findings.push(format!(
                "{shown}: the planner expected {} rows and got {}: its statistics are off (ANALYZE the table, or \
                 raise its statistics target)",
                round(estimated),
                round(rows)
            ));
        }
    }
    // Rows read, not returned: a filter that throws most of a large table
    // away is what an index saves (known only when the statement ran).
    if node.get("Node Type").and_then(Value::as_str) == Some("Seq Scan")
        && let (Some(kept), Some(removed)) = (actual, number(node, "Rows Removed by Filter"))
    {
        let removed = removed * number(node, "Actual Loops").unwrap_or(1.0);
        let read = kept + removed;
        if read >= LARGE_SCAN && removed >= 0.9 * read {
            findings.push(format!(
                "{shown}: a sequential scan read {} rows to keep {}: an index on the filtered columns may help",
                round(read),
                round(kept)
            ));
        }
    }
    if node.get("Sort Space Type").and_then(Value::as_str) == Some("Disk") {
        findings.push(format!(
            "{shown}: the sort spilled to disk ({} kB): it needed more than work_mem",
            round(number(node, "Sort Space Used").unwrap_or(0.0))
        ));
    }
    if number(node, "HashAgg Batches").is_some_and(|b| b > 1.0) || number(node, "Disk Usage").is_some_and(|d| d > 0.0) {
        findings.push(format!(
            "{shown}: the aggregate spilled to disk ({} kB): it needed more than work_mem",
            round(number(node, "Disk Usage").unwrap_or(0.0))
        ));
    }
    if number(node, "Hash Batches").is_some_and(|b| b > 1.0) {
        findings.push(format!(
            "{shown}: the hash spilled to disk in {} batches: it needed more than work_mem",
            round(number(node, "Hash Batches").unwrap_or(0.0))
        ));
    }
    nodes.push(PlanNode {
        node: shown,
        estimated_rows: estimated,
        actual_rows: actual,
        self_ms: self_ms.map(|ms| (ms * 1000.0).round() / 1000.0),
        self_cost: (self_cost * 100.0).round() / 100.0,
    });
    for child in children {
        walk(child, inner, nodes, findings);
    }
}

fn round(value: f64) -> String {
    format!("{}", value.round() as i64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A hash join over a sequential scan that misestimated, with a sort
    /// that spilled: what PostgreSQL's EXPLAIN (ANALYZE, FORMAT JSON) says.
    fn analyzed() -> Value {
        json!([{
            "Plan": {
                "Node Type": "Sort", "Total Cost": 900.0, "Plan Rows": 1000, "Actual Rows": 1000, "Actual Loops": 1,
                "Actual Total Time": 50.0, "Sort Space Type": "Disk", "Sort Space Used": 2048,
                "Plans": [{
                    "Node Type": "Hash Join", "Total Cost": 800.0, "Plan Rows": 1000, "Actual Rows": 1000,
                    "Actual Loops": 1, "Actual Total Time": 40.0,
                    "Plans": [
                        {"Node Type": "Seq Scan", "Relation Name": "orders", "Total Cost": 500.0, "Plan Rows": 20,
                         "Actual Rows": 50000, "Actual Loops": 1, "Actual Total Time": 30.0,
                         "Filter": "(x > 1)", "Rows Removed by Filter": 950000},
                        {"Node Type": "Hash", "Total Cost": 100.0, "Plan Rows": 100, "Actual Rows": 100,
                         "Actual Loops": 1, "Actual Total Time": 2.0, "Hash Batches": 4,
                         "Plans": [{"Node Type": "Index Scan", "Index Name": "customers_pkey",
                                    "Relation Name": "customers", "Total Cost": 90.0, "Plan Rows": 100,
                                    "Actual Rows": 100, "Actual Loops": 1, "Actual Total Time": 1.5}]}
                    ]
                }]
            },
            "Planning Time": 0.5,
            "Execution Time": 51.0
        }])
    }

    #[test]
    fn the_indexes_scanned_are_found_at_any_depth() {
        assert_eq!(index_names(&analyzed()), vec!["customers_pkey"]);
        let bitmap = json!([{"Plan": {"Node Type": "Bitmap Heap Scan", "Plans": [
            {"Node Type": "Bitmap Index Scan", "Index Name": "<13556>btree_t_a"},
            {"Node Type": "Result", "Parent Relationship": "InitPlan", "Plans": [
                {"Node Type": "Index Only Scan", "Index Name": "u_pkey"}]}]}}]);
        assert_eq!(index_names(&bitmap), vec!["<13556>btree_t_a", "u_pkey"]);
        assert!(index_names(&json!([{"Plan": {"Node Type": "Seq Scan"}}])).is_empty());
    }

    #[test]
    fn what_took_the_time_and_what_looks_wrong() {
        let s = summarize(&analyzed()).unwrap();
        assert_eq!(
            (s.total_cost, s.execution_ms, s.planning_ms),
            (900.0, Some(51.0), Some(0.5))
        );
        assert_eq!(s.slowest[0].node, "Seq Scan on orders");
        assert_eq!(s.slowest[0].self_ms, Some(30.0));
        assert_eq!(s.slowest[1].node, "Sort");
        assert_eq!(s.slowest[1].self_ms, Some(10.0));
        assert!(
            s.slowest
                .iter()
                .any(|n| n.node == "Index Scan using customers_pkey on customers")
        );
        let findings = s.findings.join("\n");
        for said in [
            "Seq Scan on orders: the planner expected 20 rows and got 50000",
            "Seq Scan on orders: a sequential scan read 1000000 rows to keep 50000",
            "Sort: the sort spilled to disk (2048 kB)",
            "Hash: the hash spilled to disk in 4 batches",
        ] {
            assert!(findings.contains(said), "{said} in\n{findings}");
        }
        assert_eq!(s.findings.len(), 4, "{findings}");
    }

    /// Below a `Limit` fewer rows than estimated is the limit, not the
    /// statistics; below a `Gather` the workers' loops share the wall time;
    /// a long list of findings is cut.
    #[test]
    fn where_a_node_stands_changes_its_reading() {
        let limited = json!([{"Plan": {"Node Type": "Limit", "Total Cost": 1.0, "Plan Rows": 10, "Actual Rows": 10,
            "Actual Loops": 1, "Actual Total Time": 0.1,
            "Plans": [{"Node Type": "Seq Scan", "Relation Name": "t", "Total Cost": 100.0, "Plan Rows": 5000,
                       "Actual Rows": 10, "Actual Loops": 1, "Actual Total Time": 0.1}]}}]);
        assert!(summarize(&limited).unwrap().findings.is_empty());
        let parallel = json!([{"Plan": {"Node Type": "Gather", "Total Cost": 10.0, "Plan Rows": 3, "Actual Rows": 3,
            "Actual Loops": 1, "Actual Total Time": 10.0, "Workers Launched": 2,
            "Plans": [{"Node Type": "Seq Scan", "Relation Name": "t", "Total Cost": 9.0, "Plan Rows": 1,
                       "Actual Rows": 1, "Actual Loops": 3, "Actual Total Time": 9.0}]}}]);
        let s = summarize(&parallel).unwrap();
        let scan = s.slowest.iter().find(|n| n.node == "Seq Scan on t").unwrap();
        assert_eq!(scan.self_ms, Some(9.0), "{s:?}");
        let many: Vec<Value> = (0..20)
            .map(|i| {
                json!({"Node Type": "Sort", "Total Cost": 1.0, "Plan Rows": 1, "Actual Rows": 1,
                            "Actual Loops": 1, "Actual Total Time": 0.1, "Sort Space Type": "Disk",
                            "Sort Space Used": i})
            })
            .collect();
        let wide = json!([{"Plan": {"Node Type": "Append", "Total Cost": 20.0, "Plan Rows": 20, "Plans": many}}]);
        let s = summarize(&wide).unwrap();
        assert_eq!(s.findings.len(), 9);
        assert_eq!(s.findings[8], "and 12 more alike: see the whole plan");
    }

    #[test]
    fn without_analyze_the_costliest_nodes() {
        let plan =
            json!([{"Plan": {"Node Type": "Seq Scan", "Relation Name": "t", "Total Cost": 35.5, "Plan Rows": 2550}}]);
        let s = summarize(&plan).unwrap();
        assert_eq!((s.actual_rows, s.execution_ms), (None, None));
        assert_eq!(s.slowest[0].self_cost, 35.5);
        assert!(s.findings.is_empty(), "{:?}", s.findings);
        assert_eq!(summarize(&json!({"not": "a plan"})), None);
    }

    /// What a plan says a statement changes: InitPlans listed before the
    /// input are not its rows; a writable CTE's change counts; a
    /// statement that changes nothing is its top node's rows.
    #[test]
    fn what_a_plan_changes() {
        let scan = |rows: u64, relationship: &str| {
            json!({"Node Type": "Seq Scan", "Relation Name": "pets", "Plan Rows": rows,
                   "Parent Relationship": relationship})
        };
        let modify = |table: &str, plans: Value| {
            json!({"Node Type": "ModifyTable", "Operation": "Update", "Relation Name": table, "Plan Rows": 0,
                   "Plans": plans})
        };
        let cases = [
            (
                json!([{"Plan": modify("pets", json!([scan(42, "Outer")]))}]),
                vec!["pets"],
                Some(42),
            ),
            (
                json!([{"Plan": modify("pets", json!([scan(1, "InitPlan"), scan(4990, "Outer")]))}]),
                vec!["pets"],
                Some(4990),
            ),
            // PostgreSQL 13: one member per table of an inheritance tree.
            (
                json!([{"Plan": modify("pets", json!([scan(10, "Member"), scan(5, "Member")]))}]),
                vec!["pets"],
                Some(15),
            ),
            (
                json!([{"Plan": {"Node Type": "Aggregate", "Plan Rows": 1, "Plans": [
                    {"Node Type": "CTE Scan", "Plan Rows": 4990, "Parent Relationship": "Outer"},
                    modify("pets", json!([scan(4990, "Outer")]))]}}]),
                vec!["pets"],
                Some(4990),
            ),
            // A rule adds a plan: both tables, both counts.
            (
                json!([{"Plan": modify("pet_names", json!([scan(3, "Outer")]))},
                       {"Plan": modify("log", json!([scan(2, "Outer")]))}]),
                vec!["pet_names", "log"],
                Some(5),
            ),
            (
                json!([{"Plan": {"Node Type": "Result", "Plan Rows": 1}}]),
                vec![],
                Some(1),
            ),
            (json!({"not": "a plan"}), vec![], None),
        ];
        for (plan, tables, rows) in cases {
            assert_eq!(
                change(&plan),
                Change {
                    tables: tables.iter().map(|t| t.to_string()).collect(),
                    rows
                },
                "{plan}"
            );
        }
    }
}
