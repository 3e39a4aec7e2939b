//! The catalog facts the guard judges functions with ([`Routines`]): read with
//! one query (`routines.sql`, every name in it schema-qualified so nothing a
//! database user defines runs in its place) and kept until a statement finds
//! the catalog at another version ([`version_check`], in the statement's own
//! round trip), or for [`REREAD`] at most.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use super::wire::Prepared;
use crate::error::Error;
use crate::guard::Routines;

/// The catalog query: a JSON document of functions, operators, casts, the
/// functions run implicitly and by relations, and the catalog's version.
pub(super) fn sql() -> &'static str {
    static SQL: LazyLock<String> = LazyLock::new(|| include_str!("routines.sql").replace("%VERSION%", VERSION));
    &SQL
}

/// The catalog's version: the newest object of each kind the facts describe
/// (an index lookup each), and for the small catalogs whose rows are replaced
/// in place (`CREATE OR REPLACE VIEW`, `ALTER POLICY`, ...) the sum of their
/// rows' transaction IDs, which any insert, replacement or removal changes.
/// Anything created or replaced since the facts were read changes it.
const VERSION: &str = "pg_catalog.array_to_string(ARRAY[
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_proc),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_type),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_cast),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_operator),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_constraint),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_attrdef),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_class),
    (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_amproc),
    (SELECT pg_catalog.sum(pg_catalog.int8in(pg_catalog.xidout(xmin))) FROM pg_catalog.pg_rewrite),
    (SELECT pg_catalog.sum(pg_catalog.int8in(pg_catalog.xidout(xmin))) FROM pg_catalog.pg_policy),
    (SELECT pg_catalog.sum(pg_catalog.int8in(pg_catalog.xidout(xmin))) FROM pg_catalog.pg_trigger),
    (SELECT pg_catalog.sum(pg_catalog.int8in(pg_catalog.xidout(xmin))) FROM pg_catalog.pg_aggregate)]::pg_catalog.text[], ',', '-')";

/// A statement for the start of a query's transaction that fails with
/// `division_by_zero` (SQLSTATE 22012, which nothing else in the setup can
/// raise) when the catalog is no longer at the version in `params[0]`: the
/// query is then judged again with new facts, in the same round trip as
/// before. Kept prepared on each connection: its twelve lookups are planned
/// once, not at every call.
///
/// It answers the server's current snapshot (which transactions have
/// committed), and `params[1]` is the snapshot at which the catalog was last
/// found at that version, or NULL. When the snapshot is still that one,
/// nothing has committed since, so the catalog cannot have changed, and the
/// lookups are skipped (`CASE` runs a branch's subqueries only when it is
/// taken): on a database nobody is writing to, the check costs a function
/// call instead of twelve catalog scans. Any commit anywhere changes the
/// snapshot and brings the whole check back.
///
/// `named`: kept prepared under its name; otherwise sent unnamed, and
/// planned, at every call (behind a pooler, which may run each transaction
/// on another server connection).
pub(super) fn version_check(params: &[Option<String>; 2], named: bool) -> Prepared<'_> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT CASE WHEN server.snapshot OPERATOR(pg_catalog.=) $2::pg_catalog.text THEN server.snapshot \
             WHEN pg_catalog.int4div(1, ({VERSION} OPERATOR(pg_catalog.=) $1::pg_catalog.text)::pg_catalog.int4) \
             OPERATOR(pg_catalog.=) 1 THEN server.snapshot END \
             FROM (SELECT pg_catalog.pg_current_snapshot()::pg_catalog.text AS snapshot) AS server"
        )
    });
    Prepared {
        name: if named { "pgmcp_catalog_version" } else { "" },
        sql: SQL.as_str(),
        params,
    }
}

/// Whether `db` says pgmcp's named check is not where pgmcp prepared it
/// (`invalid_sql_statement_name`), or is there already without pgmcp having
/// prepared it (`duplicate_prepared_statement`): the connection reaches
/// different server connections from one transaction to the next, as
/// through a transaction pooler.
pub(super) fn lost_to_a_pooler(db: &crate::error::DbError) -> bool {
    matches!(db.code(), "26000" | "42P05") && db.message.contains("\"pgmcp_catalog_version\"")
}

/// The SQLSTATE [`version_check`] fails with.
pub(super) const CHANGED: &str = "22012";

/// How long facts are used before they are read again whatever the version
/// says: it bounds how long a change made in place, which the version does
/// not see (`ALTER FUNCTION ... VOLATILE`, a function added to an extension),
/// can go unseen.
pub(super) const REREAD: Duration = Duration::from_secs(60);

/// The facts last read, and when.
#[derive(Default)]
pub(super) struct Cache(Mutex<Option<(Arc<Routines>, Instant)>>);

impl Cache {
    /// The facts, if fresh.
    pub(super) fn get(&self) -> Option<Arc<Routines>> {
        match &*self.lock() {
            Some((routines, read)) if read.elapsed() < REREAD => Some(Arc::clone(routines)),
            _ => None,
        }
    }

    pub(super) fn put(&self, routines: Arc<Routines>) {
        *self.lock() = Some((routines, Instant::now()));
    }

    /// Forget the facts: a new connection reads them again.
    pub(super) fn clear(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Arc<Routines>, Instant)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Read the facts from the catalog's JSON answer.
pub(super) fn from_json(doc: Option<serde_json::Value>) -> Result<Routines, Error> {
    let doc = doc.ok_or_else(|| Error::Connection("the catalog query for functions returned nothing".to_owned()))?;
    Routines::from_json(doc).map_err(|e| Error::Connection(format!("unexpected catalog reply for functions: {e}")))
}
