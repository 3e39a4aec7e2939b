//! Read-only mode as an allowlist of statements. PostgreSQL's `READ ONLY`
//! transaction refuses table writes but still runs large-object writes,
//! `CLUSTER`, `REINDEX`, `ANALYZE`, `CHECKPOINT`, `LOCK`, `NOTIFY` and
//! `LISTEN`; so rather than list what to refuse, read-only mode names what may
//! run: statements that only read. Functions are judged separately
//! (`routines.rs`), wherever they appear.

use serde_json::{Map, Value};

use super::{Judge, Violation};

const WHY: &str = "read-only mode runs only statements that read: SELECT, VALUES, TABLE, SHOW, COPY ... TO STDOUT, and EXPLAIN of those";

/// The statement as a whole: in read-only mode, its kind must be on the list.
pub(super) fn statement(judge: &Judge, stmt: &Value) -> Result<(), Violation> {
    let Some((kind, fields)) = node(stmt) else {
        return Ok(());
    };
    match kind {
        "SelectStmt" | "VariableShowStmt" => Ok(()),
        // `COPY t TO STDOUT` and `COPY (SELECT ...) TO STDOUT` read: the
        // rows come back to pgmcp, and the query inside is walked like any
        // other (nothing that writes may hide in it).
        "CopyStmt" if super::statements::copies_to_client(fields) => Ok(()),
        "ExplainStmt" => match fields.get("query").and_then(node) {
            Some(("SelectStmt", _)) => Ok(()),
            Some((inner, _)) => refuse(judge, || format!("EXPLAIN {}", sql_words(inner))),
            None => Ok(()),
        },
        // A setting lasts until the end of the call (the session is reset);
        // the rules for SET itself (its switch, the read-only and role
        // settings) are applied during the walk, which refuses every SET
        // its switch does not allow (in read-only mode, once this has run:
        // `Walk::hold`).
        "VariableSetStmt" => Ok(()),
        other => refuse(judge, || sql_words(other)),
    }
}

/// A node anywhere in the statement: nothing that writes or locks rows may
/// hide inside a read (`WITH d AS (DELETE ...) SELECT`, `SELECT ... INTO`,
/// `SELECT ... FOR UPDATE`).
pub(super) fn node_in_read(judge: &Judge, kind: &str, fields: &Map<String, Value>) -> Result<(), Violation> {
    match kind {
        "InsertStmt" | "UpdateStmt" | "DeleteStmt" | "MergeStmt" => refuse(judge, || sql_words(kind)),
        "SelectStmt" if fields.contains_key("intoClause") => refuse(judge, || "SELECT INTO".to_owned()),
        "SelectStmt" if fields.contains_key("lockingClause") => {
            refuse(judge, || "SELECT ... FOR UPDATE/SHARE".to_owned())
        }
        _ => Ok(()),
    }
}

/// Refused in read-only mode; `what` is worded only then (this runs for
/// every statement, in both modes).
fn refuse(judge: &Judge, what: impl FnOnce() -> String) -> Result<(), Violation> {
    judge.write(what, WHY)
}

/// `{"Kind": {fields}}` → (kind, fields).
fn node(value: &Value) -> Option<(&str, &Map<String, Value>)> {
    let map = value.as_object()?;
    let (kind, fields) = map.iter().next()?;
    Some((kind.as_str(), fields.as_object()?))
}

/// A parse-tree node type as SQL words: `CreateTableAsStmt` → `CREATE TABLE AS`.
pub(super) fn sql_words(kind: &str) -> String {
    let named = match kind {
        "VacuumStmt" => return "VACUUM/ANALYZE".to_owned(),
        "CheckPointStmt" => return "CHECKPOINT".to_owned(),
        "TransactionStmt" => {
            return "BEGIN, COMMIT or another transaction statement (each call runs in a transaction of its own)"
                .to_owned();
        }
        "CreateStmt" => return "CREATE TABLE".to_owned(),
        "IndexStmt" => return "CREATE INDEX".to_owned(),
        "ViewStmt" => return "CREATE VIEW".to_owned(),
        "VariableSetStmt" => return "SET".to_owned(),
        "CopyStmt" => return "COPY".to_owned(),
        "RefreshMatViewStmt" => return "REFRESH MATERIALIZED VIEW".to_owned(),
        other => other.strip_suffix("Stmt").unwrap_or(other),
    };
    let mut out = String::new();
    for (i, c) in named.char_indices() {
        if i > 0 && c.is_ascii_uppercase() {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_names() {
        let cases = [
            ("CreateTableAsStmt", "CREATE TABLE AS"),
            ("ClusterStmt", "CLUSTER"),
            ("LockStmt", "LOCK"),
            ("NotifyStmt", "NOTIFY"),
            ("VacuumStmt", "VACUUM/ANALYZE"),
            ("CheckPointStmt", "CHECKPOINT"),
            ("RefreshMatViewStmt", "REFRESH MATERIALIZED VIEW"),
        ];
        for (kind, words) in cases {
            assert_eq!(sql_words(kind), words);
        }
    }
}
