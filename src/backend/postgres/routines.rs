//! The catalog facts the guard judges functions with ([`Routines`]): read with
//! one query (`routines.sql`, every name in it schema-qualified so nothing a
//! database user defines runs in its place) and kept until a statement finds
//! the catalog at another version ([`Check`], in the statement's own
//! round trip), or for [`REREAD`] at most.
//!
//! # The quick check
//!
//! The catalog check skips its lookups only when the server's snapshot
//! (`pg_current_snapshot()`) is the one at which the same connection last
//! found the catalog at the same version: no transaction has committed since,
//! so no catalog row can differ. A connection whose last two full checks saw
//! the same snapshot sends the quick check instead (`routines::Check`), which
//! is only that comparison and fails (SQLSTATE 22003, before the statement
//! runs) when the snapshot moved; the call is then made again with the full
//! check. No statement runs after a check that compared nothing: a NULL
//! snapshot fails the quick check too.
//!
//! # What remains between the check and the statement
//!
//! What remains between the check and the statement: both are statements of
//! one READ COMMITTED transaction, sent in one write, and PostgreSQL resolves
//! a statement's names with the catalog as committed when it looks them up,
//! not as the check saw it. So the statement is parsed before the check and
//! bound and run after it (`wire::Prepared::after_parse`; the statement and
//! its portal named `pgmcp_statement`/`pgmcp_portal`, so the check's own
//! statement, unnamed behind a pooler, does not replace them, and the
//! statement closed after the `Sync`, which runs even after an error). `Parse`
//! resolves names, expands views and applies row-security policies (analysis
//! and rewriting); the check then takes a newer snapshot, so any change those
//! lookups saw is one the check sees, and the call fails before the statement
//! is planned (a test holds the statement's `Parse` on a lock while another
//! session commits a better-matching overload). The relations the statement
//! names stay locked from its `Parse` to the commit, so replacing a view,
//! adding a policy or rule (and, for a statement that writes, a trigger) or
//! altering one of them waits for the call. What still reads the catalog after
//! the check's snapshot, with nothing to see a change committed meanwhile:
//! planning, at `Bind` (microseconds later: the check's reply is not waited
//! for), reads the bodies of the SQL functions it inlines and runs immutable
//! functions on constants (stable ones too, for estimates) — the reason `Bind`
//! stays after the check —, and when a change hit what the parsed statement
//! depends on (among others a relation or function it resolved to; any schema
//! or operator) PostgreSQL's plan cache analyzes it again there, resolving its
//! names anew. Running it reads a function's body at the function's first call
//! (`CREATE OR REPLACE FUNCTION` takes no lock the statement holds) and a
//! domain's constraints through the type cache, as late as the statement gets
//! there: a long statement widens this part of the window. A utility statement
//! does its own analysis when it runs: `COPY (query) TO STDOUT` resolves the
//! query's names then, and `EXPLAIN` rewrites and plans its statement then. A
//! change committed in those windows is not seen by this call; the next call
//! sees it. PostgreSQL offers no way to close it from a read-only session:
//! catalog lookups ignore the transaction's snapshot even at REPEATABLE READ,
//! and the locks that would hold DDL off (`SHARE` on `pg_proc` and its kind)
//! need privileges and are refused in a read-only transaction.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use super::wire::Prepared;
use crate::error::Error;
use crate::guard::Routines;

/// The catalog query: a JSON document of functions, operators, casts, the
/// functions run implicitly and by relations, and the catalog's version.
pub(super) fn sql() -> &'static str {
    static SQL: LazyLock<String> = LazyLock::new(|| include_str!("routines.sql").replace("%VERSION%", version_sql()));
    &SQL
}

/// The catalog's version: for each catalog whose rows the facts are made
/// from, a sum over its rows of a keyed 64-bit hash of the row's object ID
/// and the transaction that wrote it (`xmin`). Creating, dropping,
/// renaming, moving to another schema, replacing (`CREATE OR REPLACE`) or
/// altering any of them writes a row with a new `xmin`, so the version
/// changes; the key is this process's own random number, so a database
/// user cannot choose transactions whose hashes cancel out. For the
/// catalogs whose rows may be many (functions, types, relations) only the
/// objects a database user made are summed (an oid of 16384 or more, an
/// index range scan): PostgreSQL's own change only by a superuser's hand,
/// which [`REREAD`] bounds. `pg_depend`'s rows that point at a user's type
/// change when a column takes another type without its table being
/// rewritten.
fn version() -> String {
    use std::hash::{BuildHasher, Hasher};
    // Seeded by the standard library from the operating system's random
    // source, once per process.
    let key = std::collections::hash_map::RandomState::new().build_hasher().finish() as i64;
    let row = |table: &str, filter: &str| {
        format!(
            "(SELECT pg_catalog.sum(pg_catalog.hashint8extended(pg_catalog.int8shl(oid::pg_catalog.int8, 32) \
             OPERATOR(pg_catalog.+) pg_catalog.int8in(pg_catalog.xidout(xmin)), {key})) FROM pg_catalog.{table}{filter})"
        )
    };
    let user = " WHERE oid OPERATOR(pg_catalog.>=) 16384";
    let mut parts: Vec<String> = [
        "pg_proc",
        "pg_type",
        "pg_class",
        "pg_operator",
        "pg_namespace",
        "pg_cast",
        "pg_constraint",
        "pg_attrdef",
        "pg_amproc",
        "pg_statistic_ext",
    ]
    .iter()
    .map(|t| row(t, user))
    .collect();
    parts.extend(["pg_rewrite", "pg_policy", "pg_trigger"].iter().map(|t| row(t, "")));
    // pg_aggregate and pg_depend have no oid column: the row's own key.
    parts.push(format!(
        "(SELECT pg_catalog.sum(pg_catalog.hashint8extended(pg_catalog.int8shl(aggfnoid::pg_catalog.oid::pg_catalog.int8, 32) \
         OPERATOR(pg_catalog.+) pg_catalog.int8in(pg_catalog.xidout(xmin)), {key})) FROM pg_catalog.pg_aggregate)"
    ));
    // A table adopted as a child (ALTER TABLE ... INHERIT, ATTACH
    // PARTITION) may change no other row the version sums.
    parts.push(format!(
        "(SELECT pg_catalog.sum(pg_catalog.hashint8extended(pg_catalog.int8shl(inhrelid::pg_catalog.int8, 32) \
         OPERATOR(pg_catalog.+) pg_catalog.int8in(pg_catalog.xidout(xmin)) OPERATOR(pg_catalog.+) inhparent::pg_catalog.int8, {key})) \
         FROM pg_catalog.pg_inherits)"
    ));
    parts.push(format!(
        "(SELECT pg_catalog.sum(pg_catalog.hashint8extended(pg_catalog.int8shl(objid::pg_catalog.int8, 32) \
         OPERATOR(pg_catalog.+) pg_catalog.int8in(pg_catalog.xidout(xmin)) OPERATOR(pg_catalog.+) objsubid, {key})) \
         FROM pg_catalog.pg_depend WHERE refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass \
         AND refobjid OPERATOR(pg_catalog.>=) 16384)"
    ));
    format!(
        "pg_catalog.array_to_string(ARRAY[{}]::pg_catalog.text[], ',', '-')",
        parts.join(",\n    ")
    )
}

/// The version expression, built once per process (its key is random).
fn version_sql() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(version);
    &VERSION
}

/// The name the full check is kept prepared under.
const FULL_NAME: &str = "pgmcp_catalog_version";
/// The name the quick check is kept prepared under.
const QUICK_NAME: &str = "pgmcp_catalog_unchanged";

/// A statement run in a query's transaction, after the query is parsed
/// (its names resolved) and before it is planned, that fails with
/// `division_by_zero` (SQLSTATE [`CHANGED`], which nothing else in the setup
/// can raise) when the catalog is no longer at the version in `params[0]`:
/// the query is then judged again with new facts, in the same round trip as
/// before. Kept prepared on each connection: its lookups are planned
/// once, not at every call.
///
/// It answers the server's current snapshot (which transactions have
/// committed), and `params[1]` is the snapshot at which the catalog was last
/// found at that version, or NULL. When the snapshot is still that one,
/// nothing has committed since, so the catalog cannot have changed, and the
/// lookups are skipped (`CASE` runs a branch's subqueries only when it is
/// taken). Any commit anywhere changes the snapshot and brings the whole
/// check back.
fn full_check(params: &[Option<String>; 2], named: bool) -> Prepared<'_> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT CASE WHEN server.snapshot OPERATOR(pg_catalog.=) $2::pg_catalog.text THEN server.snapshot \
             WHEN pg_catalog.int4div(1, ({version} OPERATOR(pg_catalog.=) $1::pg_catalog.text)::pg_catalog.int4) \
             OPERATOR(pg_catalog.=) 1 THEN server.snapshot END \
             FROM (SELECT pg_catalog.pg_current_snapshot()::pg_catalog.text AS snapshot) AS server",
            version = version_sql()
        )
    });
    Prepared {
        name: if named { FULL_NAME } else { "" },
        sql: SQL.as_str(),
        params,
        after_parse: true,
        signals: true,
    }
}

/// The quick check: fails with `numeric_value_out_of_range` (SQLSTATE
/// [`MOVED`], which nothing else in the setup can raise) unless the server's
/// snapshot is still `params[0]`, one at which the connection found the
/// catalog at the guard's version. Even skipping its lookups, the full check
/// costs the server its scans' setup (locks, relations opened) at
/// every call, several times what the query `SELECT 1` costs; this costs a
/// function call. A NULL snapshot fails too.
fn quick_check(params: &[Option<String>; 1], named: bool) -> Prepared<'_> {
    const SQL: &str = "SELECT pg_catalog.int2(pg_catalog.int4mul(32768, pg_catalog.int4(NOT COALESCE(\
        pg_catalog.texteq(pg_catalog.pg_current_snapshot()::pg_catalog.text, $1::pg_catalog.text), false))))";
    Prepared {
        name: if named { QUICK_NAME } else { "" },
        sql: SQL,
        params,
        after_parse: true,
        signals: true,
    }
}

/// The SQLSTATE the full check fails with when the catalog changed.
pub(super) const CHANGED: &str = "22012";

/// The SQLSTATE the quick check fails with when something committed since.
pub(super) const MOVED: &str = "22003";

/// What a connection's catalog check last found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The catalog version the check confirmed.
    pub version: String,
    /// The server's snapshot when it did.
    pub snapshot: String,
    /// That snapshot was the one the check before it saw: nothing had
    /// committed between two calls. Only then does the next call try the
    /// quick check, so a database that is written to all the time keeps
    /// making the full check in one round trip, instead of a quick check
    /// that fails and a second try.
    pub quiet: bool,
}

/// The catalog check one call makes, with its parameters.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Check {
    /// Only that nothing has committed since the connection's last check.
    Quick { params: [Option<String>; 1] },
    /// The catalog's version, itself skipped while the snapshot is unchanged.
    Full { params: [Option<String>; 2] },
}

impl Check {
    /// The check for a call whose statement the guard judged with facts at
    /// `version`, on a connection whose checks last found `seen`. `quick`:
    /// whether the quick check may be tried (not when it just failed).
    pub(super) fn for_call(seen: Option<&Seen>, version: &str, quick: bool) -> Check {
        match seen.filter(|s| s.version == version) {
            Some(s) if quick && s.quiet => Check::Quick {
                params: [Some(s.snapshot.clone())],
            },
            s => Check::Full {
                params: [Some(version.to_owned()), s.map(|s| s.snapshot.clone())],
            },
        }
    }

    /// The statement that makes the check. `named`: kept prepared under its
    /// name; otherwise sent unnamed, and planned, at every call (behind a
    /// pooler, which may run each transaction on another server connection).
    pub(super) fn statement(&self, named: bool) -> Prepared<'_> {
        match self {
            Check::Quick { params } => quick_check(params, named),
            Check::Full { params } => full_check(params, named),
        }
    }

    /// What the connection knows once the check passed: `before`, what it
    /// knew; `answer`, what the check answered (the full check's snapshot).
    pub(super) fn seen_after(&self, before: Option<Seen>, answer: Option<String>) -> Option<Seen> {
        match self {
            Check::Quick { .. } => before,
            Check::Full { params: [version, _] } => {
                let (version, snapshot) = (version.clone()?, answer?);
                let quiet = before.is_some_and(|b| b.version == version && b.snapshot == snapshot);
                Some(Seen {
                    version,
                    snapshot,
                    quiet,
                })
            }
        }
    }
}

/// The names the checks are kept prepared under on a connection.
pub(super) const NAMES: [&str; 2] = [FULL_NAME, QUICK_NAME];

/// How long facts are used before they are read again whatever the version
/// says: it bounds how long a change the version does not see can go
/// unseen: one to PostgreSQL's own rows (a superuser's `ALTER FUNCTION
/// pg_catalog...`), a function added to an extension.
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
    let unexpected = |detail: String| Error::UnexpectedReply {
        what: "the catalog query for functions",
        detail,
    };
    let doc = doc.ok_or_else(|| unexpected("no reply".to_owned()))?;
    Routines::from_json(doc).map_err(|e| unexpected(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(version: &str, snapshot: &str, quiet: bool) -> Seen {
        Seen {
            version: version.to_owned(),
            snapshot: snapshot.to_owned(),
            quiet,
        }
    }

    fn full(version: &str, snapshot: Option<&str>) -> Check {
        Check::Full {
            params: [Some(version.to_owned()), snapshot.map(str::to_owned)],
        }
    }

    fn quick(snapshot: &str) -> Check {
        Check::Quick {
            params: [Some(snapshot.to_owned())],
        }
    }

    #[test]
    fn which_check_a_call_makes() {
        let cases = [
            // (what the connection saw, the guard's version, quick allowed, the check)
            (None, "v1", true, full("v1", None)),
            (Some(seen("v1", "5:5:", false)), "v1", true, full("v1", Some("5:5:"))),
            (Some(seen("v1", "5:5:", true)), "v1", true, quick("5:5:")),
            // The quick check just failed: the full one, with its own skip.
            (Some(seen("v1", "5:5:", true)), "v1", false, full("v1", Some("5:5:"))),
            // Facts of another version: the snapshot says nothing about them.
            (Some(seen("v0", "5:5:", true)), "v1", true, full("v1", None)),
        ];
        for (seen, version, allowed, want) in cases {
            assert_eq!(
                Check::for_call(seen.as_ref(), version, allowed),
                want,
                "{seen:?} {version} {allowed}"
            );
        }
    }

    #[test]
    fn what_a_passed_check_leaves_known() {
        let cases = [
            // (the check, what was known before, its answer, what is known after)
            (full("v1", None), None, Some("5:5:"), Some(seen("v1", "5:5:", false))),
            // Two full checks in a row at one snapshot: quiet, so the next is quick.
            (
                full("v1", Some("5:5:")),
                Some(seen("v1", "5:5:", false)),
                Some("5:5:"),
                Some(seen("v1", "5:5:", true)),
            ),
            // Something committed between them: not quiet.
            (
                full("v1", Some("5:5:")),
                Some(seen("v1", "5:5:", true)),
                Some("6:6:"),
                Some(seen("v1", "6:6:", false)),
            ),
            // The same snapshot but another version (facts read again meanwhile).
            (
                full("v2", None),
                Some(seen("v1", "5:5:", true)),
                Some("5:5:"),
                Some(seen("v2", "5:5:", false)),
            ),
            // No answer: nothing is known.
            (full("v1", None), Some(seen("v1", "5:5:", true)), None, None),
            // The quick check passed: nothing new.
            (
                quick("5:5:"),
                Some(seen("v1", "5:5:", true)),
                Some("0"),
                Some(seen("v1", "5:5:", true)),
            ),
        ];
        for (check, before, answer, want) in cases {
            let got = check.seen_after(before.clone(), answer.map(str::to_owned));
            assert_eq!(got, want, "{check:?} {before:?} {answer:?}");
        }
    }

    #[test]
    fn each_check_has_its_own_name_and_none_behind_a_pooler() {
        let (q, f) = (quick("5:5:"), full("v1", None));
        assert_eq!(q.statement(true).name, QUICK_NAME);
        assert_eq!(f.statement(true).name, FULL_NAME);
        assert_eq!(q.statement(false).name, "");
        assert_eq!(f.statement(false).name, "");
        assert_ne!(CHANGED, MOVED);
    }
}
