//! Statements that write rows: `INSERT` (an upsert fed by a query),
//! `UPDATE` (without `WHERE`, or of `pg_settings`) and `COPY` (which way it
//! goes). Apart from the statement table because each reads its node's
//! clauses, not just its kind. (`DELETE` needs only its kind and one field:
//! it stays in the table.)

use serde_json::{Map, Value};

use super::{relation_name, truthy};
use crate::guard::{Finding, Judge, Remedy, Rule, Violation};

/// `INSERT`: an upsert fed by a query can overwrite every row of the table
/// (fed the table itself, it does); only a VALUES list bounds it to the rows
/// it names.
pub(super) fn insert(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let unbounded_update = fields.get("onConflictClause").is_some_and(|c| {
        c.get("action").and_then(Value::as_str) == Some("ONCONFLICT_UPDATE") && c.get("whereClause").is_none()
    });
    let from_query = fields
        .get("selectStmt")
        .and_then(|s| s.get("SelectStmt"))
        .is_none_or(|s| s.get("valuesLists").is_none());
    if unbounded_update && from_query {
        judge.decide(Finding::overwrite_from_query(
            "INSERT ... SELECT ... ON CONFLICT DO UPDATE without a WHERE in DO UPDATE is not allowed",
        ))?;
    }
    Ok(())
}

pub(super) fn update(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    // Writing pg_settings is set_config() by another name.
    if relation_name(fields) == Some("pg_settings") {
        judge.decide(Finding::new(
            Rule::Set,
            "UPDATE pg_settings is not allowed",
            "it changes session settings like SET does",
        ))?;
    }
    if !fields.contains_key("whereClause") {
        judge.decide(Finding::update_without_where())?;
    }
    Ok(())
}

/// `COPY`: to the client (`TO STDOUT`) it is a read; from anywhere, or to a
/// server file or program, it has a switch.
pub(super) fn copy(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    if truthy(fields, "is_from") {
        return judge.decide(Finding::copy_from());
    }
    if !copies_to_client(fields) {
        return judge.decide(Finding::copy_to_file().remedy(Remedy::ToStdout));
    }
    Ok(())
}

/// `COPY ... TO STDOUT`: the rows go to pgmcp, which returns them.
pub(in crate::guard) fn copies_to_client(fields: &Map<String, Value>) -> bool {
    !truthy(fields, "is_from") && !truthy(fields, "is_program") && !fields.contains_key("filename")
}
