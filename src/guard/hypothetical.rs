//! A hypothetical index (`explain`'s `hypothetical_indexes`): one
//! `CREATE INDEX` statement, which hypopg reads to make an index only the
//! planner sees. Nothing is built, but the planner still works with the
//! index's expressions and predicate: it folds an `IMMUTABLE` function with
//! constant arguments in a predicate to a constant, running it as the role
//! statements run as. So they are judged exactly as a query reading the
//! table would be: the definition's columns, expressions and predicate
//! become `SELECT <columns and expressions> FROM <table> WHERE <predicate>`,
//! built from the definition's own parse tree (never from its text), and
//! that query goes through the whole guard, in read-only mode whatever the
//! server's: nothing in an index has any business writing.

use serde_json::{Map, Value, json};

use super::{Judge, Routines, Rule, Tree, Violation, check_tree, one_statement, parse};

/// Judge one hypothetical index's definition: `Ok` when it is a single
/// `CREATE INDEX` whose parts a query could read under `judge`'s rules.
pub fn index(judge: &Judge, routines: &Routines, definition: &str) -> Result<(), Violation> {
    let tree = parse(definition).map_err(|e| Violation {
        rule: Rule::Parse,
        message: format!("hypothetical index {definition:?}: SQL parse error: {}", e.message),
    })?;
    one_statement(tree.stmts.len())?;
    let statement = tree.stmts.first().and_then(Value::as_object);
    let Some(fields) = statement.and_then(|s| s.get("IndexStmt")).and_then(Value::as_object) else {
        let kind = statement
            .and_then(|s| s.keys().next())
            .map_or("nothing", String::as_str);
        return Err(Violation {
            rule: Rule::Unlisted,
            message: format!(
                "hypothetical_indexes takes CREATE INDEX statements only, e.g. \"CREATE INDEX ON orders (customer_id)\": \
                 {definition:?} is a {kind}"
            ),
        });
    };
    let read = as_query(fields);
    // An index only reads, in either mode: judged as in read-only mode,
    // and the refusal says why without naming a setting that would not
    // change it.
    let checked = check_tree(&judge.reading(), routines, Tree { stmts: vec![read] }).map_err(|v| Violation {
        rule: v.rule,
        message: format!(
            "hypothetical index {definition:?}: {}",
            v.message
                .replace("(server.read_only is on)", "(an index's parts may only read)")
        ),
    })?;
    if checked.param_count() > 0 {
        return Err(Violation {
            rule: Rule::Parse,
            message: format!(
                "hypothetical index {definition:?}: a placeholder ($n) has no value there; write the value itself"
            ),
        });
    }
    Ok(())
}

/// `SELECT <key columns and expressions, included columns> FROM <table>
/// WHERE <predicate>`, as libpg_query would print its tree.
fn as_query(index: &Map<String, Value>) -> Value {
    let elements = ["indexParams", "indexIncludingParams"]
        .iter()
        .filter_map(|field| index.get(*field).and_then(Value::as_array))
        .flatten();
    let targets: Vec<Value> = elements
        .filter_map(|element| element.get("IndexElem"))
        .filter_map(|element| match (element.get("expr"), element.get("name")) {
            (Some(expr), _) => Some(expr.clone()),
            (None, Some(name)) => Some(json!({"ColumnRef": {"fields": [{"String": {"sval": name}}]}})),
            (None, None) => None,
        })
        .map(|val| json!({"ResTarget": {"val": val}}))
        .collect();
    let mut select = Map::new();
    select.insert("targetList".to_owned(), Value::Array(targets));
    if let Some(Value::Object(relation)) = index.get("relation") {
        let mut relation = relation.clone();
        relation.insert("inh".to_owned(), Value::Bool(true));
        select.insert("fromClause".to_owned(), json!([{ "RangeVar": relation }]));
    }
    if let Some(predicate) = index.get("whereClause") {
        select.insert("whereClause".to_owned(), predicate.clone());
    }
    select.insert("limitOption".to_owned(), json!("LIMIT_OPTION_DEFAULT"));
    select.insert("op".to_owned(), json!("SETOP_NONE"));
    json!({ "SelectStmt": select })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::routines::tests::pg15;
    use crate::guard::{Mode, Policy};

    #[test]
    fn definitions_are_judged_as_the_query_that_reads_their_parts() {
        let read_only = Judge::new(Policy::default(), Mode::ReadOnly);
        let read_write = Judge::new(Policy::default(), Mode::ReadWrite);
        let facts = pg15();
        // (definition, None = accepted / Some(what the refusal says))
        let cases: &[(&str, Option<&str>)] = &[
            ("CREATE INDEX ON orders (customer_id)", None),
            ("create index on public.orders using hash (status)", None),
            (
                "CREATE UNIQUE INDEX IF NOT EXISTS o_idx ON orders (a DESC NULLS LAST, b) INCLUDE (c)",
                None,
            ),
            ("CREATE INDEX ON people ((lower(email)) text_pattern_ops)", None),
            (
                "CREATE INDEX ON orders (created_at) WHERE status = 'open' AND total > 10",
                None,
            ),
            ("CREATE INDEX ON docs USING gin (body) WITH (fastupdate = off)", None),
            (
                "SELECT 1",
                Some("hypothetical_indexes takes CREATE INDEX statements only"),
            ),
            (
                "DROP TABLE orders",
                Some("hypothetical_indexes takes CREATE INDEX statements only"),
            ),
            (
                "CREATE TABLE x (a int)",
                Some("hypothetical_indexes takes CREATE INDEX statements only"),
            ),
            (
                "REINDEX TABLE orders",
                Some("hypothetical_indexes takes CREATE INDEX statements only"),
            ),
            (
                "CREATE INDEX ON t (a); DROP TABLE t",
                Some("multi-statement queries are not allowed"),
            ),
            ("", Some("SQL parse error")),
            (
                "CREATE INDEX ON",
                Some("hypothetical index \"CREATE INDEX ON\": SQL parse error"),
            ),
            // The planner folds IMMUTABLE calls with constant arguments in
            // a predicate: what a query may not run, a predicate may not hold.
            (
                "CREATE INDEX ON t (a) WHERE pg_terminate_backend(1)",
                Some("hypothetical index"),
            ),
            ("CREATE INDEX ON t ((dblink('x', 'y')))", Some("hypothetical index")),
            (
                "CREATE INDEX ON t (a) WHERE set_config('role', 'x', false) = 'x'",
                Some("hypothetical index"),
            ),
            // Whatever the server's mode: an index only reads.
            (
                "CREATE INDEX ON t (a) WHERE a > nextval('s')",
                Some("hypothetical index \"CREATE INDEX ON t (a) WHERE a > nextval('s')\": function nextval()"),
            ),
            (
                "CREATE INDEX ON t (a) WHERE a > $1",
                Some("hypothetical index \"CREATE INDEX ON t (a) WHERE a > $1\": a placeholder"),
            ),
        ];
        for judge in [&read_only, &read_write] {
            for (definition, refused) in cases {
                let got = index(judge, &facts, definition);
                match (refused, &got) {
                    (None, Ok(())) => {}
                    (Some(prefix), Err(v)) if v.message.starts_with(prefix) => {}
                    _ => panic!("{definition:?} (read-only: {}): got {got:?}", judge.read_only()),
                }
            }
        }
    }

    #[test]
    fn the_query_built_reads_every_part_of_the_definition() {
        let tree = parse("CREATE INDEX ON s.t (a, (lower(b))) INCLUDE (c) WHERE d > 1").unwrap();
        let read = as_query(tree.stmts[0]["IndexStmt"].as_object().unwrap());
        let select = &read["SelectStmt"];
        let targets: Vec<&Value> = select["targetList"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["ResTarget"]["val"])
            .collect();
        assert_eq!(targets.len(), 3);
        assert_eq!(targets[0]["ColumnRef"]["fields"][0]["String"]["sval"], "a");
        assert_eq!(targets[1]["FuncCall"]["funcname"][0]["String"]["sval"], "lower");
        assert_eq!(targets[2]["ColumnRef"]["fields"][0]["String"]["sval"], "c");
        assert_eq!(select["fromClause"][0]["RangeVar"]["schemaname"], "s");
        assert_eq!(select["fromClause"][0]["RangeVar"]["relname"], "t");
        assert_eq!(select["whereClause"]["A_Expr"]["name"][0]["String"]["sval"], ">");
    }
}
