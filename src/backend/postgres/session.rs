//! What every session is pinned to and how each transaction on it begins
//! and ends: the startup parameters (all pinned settings, or only those a
//! pooler carries), the settings set again in each transaction with its
//! statement timeout, and the reset after each call (deferred, or behind a
//! pooler in the same message as `COMMIT`). Apart from the backend's face:
//! it is the session's shape, which the calls only use.

use std::sync::LazyLock;
use std::time::Instant;

use super::wire::{Connection, Prepared};
use super::{Deadline, PgBackend};

/// Session settings sent at connect time. They make text output independent of
/// the server's configuration, and `RESET ALL` (part of [`RESET`]) returns
/// to them, because startup parameters are the session's defaults.
const PINNED: &[(&str, &str)] = &[
    ("client_encoding", "UTF8"),
    ("DateStyle", "ISO, YMD"),
    ("IntervalStyle", "postgres"),
    ("TimeZone", "UTC"),
    ("extra_float_digits", "3"),
    ("bytea_output", "hex"),
    // The guard's parser treats backslashes in '...' literally. A server (or
    // database, or role) set to `off` would read `'a\'` as an escaped quote and
    // see code where the guard saw a string, so every session pins `on`.
    ("standard_conforming_strings", "on"),
    // money's text form follows lc_monetary.
    ("lc_monetary", "C"),
];

/// The pinned settings a connection pooler carries from its client to
/// whichever server connection runs the client's transaction. PgBouncer
/// tracks these (and `application_name`) and refuses a connection that sends
/// any other startup parameter.
const POOLER_TRACKED: &[&str] = &[
    "client_encoding",
    "DateStyle",
    "TimeZone",
    "standard_conforming_strings",
];

/// The name the settings statement is kept prepared under.
pub(super) const SETTINGS_NAME: &str = "pgmcp_settings";

/// Every pinned setting but the encoding (which poolers track, and which a
/// statement cannot change mid-transaction without confusing them) is set
/// again at the start of each transaction, `SET LOCAL`-style: behind a
/// pooler the server connection running it may have been another client's
/// a moment before, or the pooler may have dropped the startup parameters.
/// With them, the statement timeout (`$1`, in milliseconds). One statement,
/// kept prepared like the catalog check: planned once per connection, not
/// at every call.
fn settings(timeout_ms: &[Option<String>; 1], named: bool) -> Prepared<'_> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let calls: Vec<String> = PINNED
            .iter()
            .filter(|(name, _)| *name != "client_encoding")
            .map(|(name, value)| format!("pg_catalog.set_config('{name}', '{value}', true)"))
            .collect();
        format!(
            "SELECT {}, pg_catalog.set_config('statement_timeout', $1::pg_catalog.text, true)",
            calls.join(", ")
        )
    });
    Prepared {
        name: if named { SETTINGS_NAME } else { "" },
        sql: SQL.as_str(),
        params: timeout_ms,
        after_parse: false,
        signals: true,
    }
}

/// What returns the session to its startup state after each call, sent with
/// the call and read before the connection's next use: `DISCARD ALL` but for
/// `DEALLOCATE ALL` and `DISCARD PLANS`, which would throw away pgmcp's own
/// prepared catalog check. A caller's `PREPARE` makes the connection
/// deallocate everything before its next call (`wire::Connection`).
///
/// Behind a pooler it follows `COMMIT` in the same query message
/// ([`PgBackend::finish`]): a pooler hands the server connection on only
/// when a message is done, so the reset runs on the session the call ran
/// in, and never on one that may be another client's by the connection's
/// next use. After `COMMIT`, not before it: what a failed statement leaves
/// that rolling back does not undo (an advisory lock, a sequence's
/// `currval`) is undone too. (A `COMMIT` that fails itself, on a deferred
/// constraint, skips the rest of the message; the transaction is rolled
/// back.)
const RESET: &str = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; UNLISTEN *; \
                     SELECT pg_catalog.pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES";

/// The time left, in milliseconds, as [`settings`] takes it for the
/// transaction's `statement_timeout`: the server stops the statement itself
/// even if our cancel request never arrives.
pub(super) fn timeout_ms(deadline: &Deadline) -> [Option<String>; 1] {
    let ms = deadline.at.saturating_duration_since(Instant::now()).as_millis().max(1);
    [Some(ms.to_string())]
}

impl PgBackend {
    /// How a transaction ends, in one message: `COMMIT` (`ROLLBACK` when
    /// `rollback`); then `epilogue` (`Statement::epilogue`), in a read-only
    /// transaction of its own as `role` (the role statements run as,
    /// `role_set`); behind a pooler, then the session reset ([`RESET`]),
    /// else the reset deferred to the connection's next use. One message:
    /// a pooler hands the server connection on only when it is done. An
    /// epilogue statement that fails skips the rest of the message and
    /// leaves its transaction open and failed: the call fails, which
    /// retires the connection, and a client gone in the middle of a
    /// transaction takes its server connection with it, behind a pooler
    /// too.
    pub(super) fn finish(
        &self,
        rollback: bool,
        epilogue: &[String],
        role: Option<&str>,
    ) -> (String, &'static [&'static str]) {
        let mut message = vec![if rollback { "ROLLBACK" } else { "COMMIT" }];
        if !epilogue.is_empty() {
            message.push("BEGIN READ ONLY");
            message.extend(role);
            message.extend(epilogue.iter().map(String::as_str));
            message.push("COMMIT");
        }
        let deferred: &'static [&'static str] = match self.behind_pooler() {
            true => {
                message.push(RESET);
                &[]
            }
            false => &[RESET],
        };
        (message.join("; "), deferred)
    }

    /// The statements that open every exchange's transaction on `conn`:
    /// `begin`, then the switch to the role statements run as (before
    /// anything else runs, so nothing runs as the login). [`Self::settings`]
    /// follows them.
    pub(super) fn setup<'a>(&'a self, begin: &'a str, conn: &Connection) -> Vec<&'a str> {
        let mut setup = vec![begin];
        setup.extend(self.role_set(conn));
        setup
    }

    /// The pinned settings and the statement timeout, whatever became of
    /// the startup parameters: a pooler may have dropped them (PgBouncer's
    /// ignore_startup_parameters) or handed this transaction a server
    /// connection another client changed. Behind a pooler the statement
    /// goes unnamed: the next transaction may run on a server connection
    /// that never saw it.
    pub(super) fn settings<'a>(&self, timeout_ms: &'a [Option<String>; 1]) -> Prepared<'a> {
        settings(timeout_ms, !self.behind_pooler())
    }

    /// The startup parameters: every pinned setting, and read-only as the
    /// session's default; behind a pooler, only what it carries.
    pub(super) fn startup(&self) -> Vec<(&str, &str)> {
        let mut startup: Vec<(&str, &str)> = PINNED.to_vec();
        if self.behind_pooler() {
            startup.retain(|(name, _)| POOLER_TRACKED.contains(name));
        } else if self.options.read_only {
            startup.push(("default_transaction_read_only", "on"));
        }
        // The server reads these before the other startup parameters, so
        // none of them can undo a pinned setting.
        if let Some(options) = &self.params.options {
            startup.push(("options", options.as_str()));
        }
        startup
    }
}
