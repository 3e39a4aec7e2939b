//! Every way a node of the parse tree can run a function, each handed to the
//! one judgement in `routines.rs`. A route is found by the node's type, not by
//! what the query looks like, so a new spelling of a known route is still seen:
//!
//! | node | route |
//! |---|---|
//! | `FuncCall` | a call: `f(x)`, `schema.f(x)`, `CALL f()`, `x AT TIME ZONE` |
//! | SQL/JSON syntax (`JsonArrayConstructor`, `JsonFuncExpr`, ...) | on a server older than the syntax, a call of the function of that name (`JSON_ARRAY(1, 2)` is `json_array(1, 2)` on PostgreSQL 15): judged as one on every server, where the catalog has a function of that name |
//! | `ColumnRef` past its first name, `A_Indirection` names | attribute notation: `t.f`, `(x).f`, `(x).a.f` |
//! | `A_Expr`, `SubLink.operName`, `SortBy.useOp` | an operator: `a + b`, `OPERATOR(s.+)`, `= ANY`, `ORDER BY x USING <` |
//! | `TypeName` | a type a value becomes: `x::t`, `CAST(x AS t)`, `t 'literal'`, `AS f(a t)`, `XMLTABLE ... COLUMNS a t` |
//! | `RangeVar`, a statement's `relation` | a relation read (its view query, read policies, the types it reaches, what the planner folds: index, statistics and partition key expressions, CHECKs; its children's too) or written (also its defaults, triggers, CHECKs, rules, write policies) |
//! | a user's aggregate | its support functions |
//! | a function over a user's types | what those types run |
//! | `domain_in`, `pg_input_is_valid` and their kin | every type's domain checks and casts |
//!
//! A type is reached wherever a value of it can appear, and what a value of
//! it runs (a domain's CHECK, a user's cast, to json by `to_json` as well)
//! is judged with it. A statement reaches a type by naming it (`TypeName`),
//! by reading or writing a relation whose row holds it or whose views and
//! policies use it (followed to the end by the catalog query), by an
//! operator or function over it, or by one of the functions that make a
//! value of a type given as data. The types built-in functions take and
//! return are PostgreSQL's own or polymorphic; a polymorphic one is the type
//! of an argument, reached by one of those routes.
//!
//! A `TABLESAMPLE` method is a function too, but one taking `internal`, which
//! only C code a superuser installed can be; it is not a route.

use serde_json::{Map, Value};

use super::routines::{Route, Routines, function, judge_any_type, judge_cast, judge_operator, judge_relation};
use super::{Judge, Violation};

/// Judge every function node `kind` can run.
pub(super) fn check(
    judge: &Judge,
    routines: &Routines,
    kind: &str,
    fields: &Map<String, Value>,
) -> Result<(), Violation> {
    match kind {
        "FuncCall" => match last_name(fields.get("funcname")) {
            Some(name) => {
                let name = syntax_function(routines, name, fields.get("funcformat"));
                function(judge, routines, name, Route::Call)?;
                judge_any_type(judge, routines, name)
            }
            None => Ok(()),
        },
        // `t.f` is a column f of t, or f(t) when t has no such column; only
        // the catalog can tell a function name from a column name here.
        "ColumnRef" => names(fields.get("fields"))
            .skip(1)
            .try_for_each(|name| attribute(judge, routines, name)),
        "A_Indirection" => names(fields.get("indirection")).try_for_each(|name| attribute(judge, routines, name)),
        "A_Expr" => match fields.get("kind").and_then(Value::as_str) {
            // BETWEEN's name is the keyword; it compares with <= and >=.
            Some(k) if k.contains("BETWEEN") => ["<=", ">="]
                .into_iter()
                .try_for_each(|op| judge_operator(judge, routines, None, op)),
            _ => operator(judge, routines, fields.get("name")),
        },
        "SubLink" => operator(judge, routines, fields.get("operName")),
        "SortBy" => operator(judge, routines, fields.get("useOp")),
        // Wherever a type is named (a cast, a column definition list, an
        // XMLTABLE or JSON_TABLE column), values become that type and run its
        // domain checks and cast functions.
        "TypeName" => match last_name(fields.get("names")) {
            Some(ty) => judge_cast(judge, routines, ty),
            None => Ok(()),
        },
        "RangeVar" | "WrittenRelation" => match fields.get("relname").and_then(Value::as_str) {
            Some(relation) => judge_relation(judge, routines, relation, kind == "WrittenRelation"),
            None => Ok(()),
        },
        _ => match json_syntax_call(kind, fields) {
            // Where the catalog has no function of that name, the server
            // either has the syntax or fails to find one: nothing runs.
            Some(name) if routines.is_function(name) => {
                function(judge, routines, name, Route::Call)?;
                judge_any_type(judge, routines, name)
            }
            _ => Ok(()),
        },
    }
}

/// SQL/JSON syntax that pgmcp's parser (PostgreSQL 17's grammar) reads as
/// nodes of their own and that servers before 16 or 17, without those
/// keywords, read as a call of the function of the same name: whatever a
/// database user named `json_array` runs there.
fn json_syntax_call(kind: &str, fields: &Map<String, Value>) -> Option<&'static str> {
    Some(match kind {
        "JsonObjectConstructor" => "json_object",
        "JsonArrayConstructor" | "JsonArrayQueryConstructor" => "json_array",
        "JsonObjectAgg" => "json_objectagg",
        "JsonArrayAgg" => "json_arrayagg",
        "JsonParseExpr" => "json",
        "JsonScalarExpr" => "json_scalar",
        "JsonSerializeExpr" => "json_serialize",
        "JsonTable" => "json_table",
        "JsonFuncExpr" => match fields.get("op").and_then(Value::as_str)? {
            "JSON_VALUE_OP" => "json_value",
            "JSON_QUERY_OP" => "json_query",
            "JSON_EXISTS_OP" => "json_exists",
            _ => return None,
        },
        _ => return None,
    })
}

/// What older servers' grammars made of SQL syntax that pgmcp's parser
/// (PostgreSQL 17's) turns into a `pg_catalog` function the server may lack:
/// before 14, `EXTRACT(field FROM x)` is `date_part(field, x)`.
const SYNTAX_ON_OLDER_SERVERS: &[(&str, &str)] = &[("extract", "date_part")];

/// The function a call runs on this server. A call written as SQL syntax
/// (`funcformat` `COERCE_SQL_SYNTAX`: `EXTRACT`, `SUBSTRING ... FROM`, `AT
/// TIME ZONE`) is always `pg_catalog`'s; when the catalog lacks the name the
/// parser chose and has the one the server's own grammar chooses, that one
/// runs. Anything else is judged by the name as written.
fn syntax_function<'a>(routines: &Routines, name: &'a str, format: Option<&Value>) -> &'a str {
    if format.and_then(Value::as_str) != Some("COERCE_SQL_SYNTAX") || routines.is_function(name) {
        return name;
    }
    SYNTAX_ON_OLDER_SERVERS
        .iter()
        .find(|(parsed, _)| *parsed == name)
        .map(|(_, older)| *older)
        .filter(|older| routines.is_function(older))
        .unwrap_or(name)
}

fn attribute(judge: &Judge, routines: &Routines, name: &str) -> Result<(), Violation> {
    // Without catalog facts (a caller that has none), a blocked name is
    // assumed to be the function, never the column.
    if routines.is_function(name) || (routines.is_empty() && judge.blocks(&name.to_ascii_lowercase())) {
        function(judge, routines, name, Route::Attribute)
    } else {
        Ok(())
    }
}

/// An operator's name as written: `op`, or `OPERATOR(schema.op)`.
fn operator(judge: &Judge, routines: &Routines, name: Option<&Value>) -> Result<(), Violation> {
    let parts: Vec<&str> = names(name).collect();
    match parts[..] {
        [] => Ok(()),
        [op] => judge_operator(judge, routines, None, op),
        [.., schema, op] => judge_operator(judge, routines, Some(schema), op),
    }
}

/// The `String` names of a name list (`[{"String": {"sval": "pg_catalog"}}, ...]`).
fn names(list: Option<&Value>) -> impl Iterator<Item = &str> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| n.get("String")?.get("sval")?.as_str())
}

/// The last name of a qualified name list: the object's own name.
fn last_name(list: Option<&Value>) -> Option<&str> {
    names(list).last()
}
