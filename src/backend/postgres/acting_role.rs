//! Whom a connection's statements act as: `connection.role`, else
//! `pg_read_all_data` when, in read-only mode, the login can do more than
//! read (learned once per connection, `learn_login`), else the login; a
//! refused switch explained, the role's powers warned about once in the
//! log (`audit_once`), and the reason `pgmcp check` shows. Apart from
//! `role.rs`, which holds the SQL and the pure judgments these use.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::deadline::run;
use super::session::timeout_ms;
use super::wire::{Connection, Exchange, StatementResult};
use super::{Deadline, PgBackend, role};
use crate::error::Error;

/// How long looking at the role's privileges for the log may take.
const AUDIT_BUDGET: Duration = Duration::from_secs(2);

impl PgBackend {
    /// The switch to the role statements run as on `conn`: `connection.role`,
    /// else `pg_read_all_data` when the connection's login can do more than
    /// read in read-only mode ([`Self::learn_login`]), else none: the login.
    pub(super) fn role_set(&self, conn: &Connection) -> Option<&str> {
        match (&self.role, &conn.reader) {
            (Some(role), _) => Some(role.set.as_str()),
            (None, Some(_)) => Some(role::SET_READER),
            (None, None) => None,
        }
    }

    /// Whether a connection's login is to be asked what it can do: only in
    /// read-only mode, with no `connection.role` and no opt-out.
    fn reads_as_reader(&self) -> bool {
        self.options.read_only && self.role.is_none() && !self.options.read_only_as_login
    }

    /// On a new connection, in read-only mode without `connection.role`:
    /// whether its login can do more than read in ways that reach outside
    /// the database, in which case its exchanges run as `pg_read_all_data`.
    /// A superuser is known from the startup (`is_superuser`); anyone else
    /// is asked about once per connection, as the login, before any
    /// statement of the caller's runs on it.
    pub(super) async fn learn_login(&self, conn: &mut Connection, deadline: &Deadline) -> Result<(), Error> {
        if !self.reads_as_reader() {
            return Ok(());
        }
        let powers = if conn.superuser == Some(true) {
            role::LoginPowers::superuser(&self.params.user)
        } else {
            let ex = Exchange::alone(role::LOGIN_POWERS, 2);
            let result = run(conn, &ex, deadline).await?;
            json_cell(&result)
                .and_then(|v| serde_json::from_value::<role::LoginPowers>(v).ok())
                .ok_or_else(|| Error::UnexpectedReply {
                    what: "the question of the login's privileges",
                    detail: "no row, or not one pgmcp reads".to_owned(),
                })?
        };
        conn.reader = powers.any().then_some(powers);
        Ok(())
    }

    /// A refused switch to `connection.role`, or to `pg_read_all_data` for
    /// `reader` (the connection's [`Connection::reader`]), with what to do
    /// about it.
    pub(super) fn explain(&self, e: Error, reader: Option<&role::LoginPowers>) -> Error {
        match (e, &self.role, reader) {
            (Error::Role { code, message, .. }, Some(role), _) => Error::Role {
                advice: Some(role::refusal_advice(&code, &role.name, &self.params.user)),
                target: "connection.role",
                code,
                message,
            },
            (Error::Role { code, message, .. }, None, Some(powers)) => Error::Role {
                advice: Some(role::reader_advice(&code, powers)),
                target: role::READER,
                code,
                message,
            },
            (e, _, _) => e,
        }
    }

    /// Log a warning, once per process, when the role statements run as can
    /// do more than read. Done after the first call that worked, on its
    /// connection, so starting up never needs the database.
    pub(super) async fn audit_once(&self, conn: &mut Connection) {
        if self.audited.swap(true, Ordering::Relaxed) {
            return;
        }
        let deadline = Deadline {
            at: Instant::now() + AUDIT_BUDGET,
            timeout: AUDIT_BUDGET,
            cancel: tokio_util::sync::CancellationToken::new(),
        };
        let timeout = timeout_ms(&deadline);
        let ask = async |conn: &mut Connection| {
            let ex = Exchange {
                setup: &self.setup("BEGIN READ ONLY", conn),
                sql: role::PRIVILEGES,
                params: &[],
                max_rows: 2,
                budget: None,
                finish: &["COMMIT"],
                deferred: &[],
                prepared: &[self.settings(&timeout)],
            };
            run(conn, &ex, &deadline).await
        };
        let result = match ask(conn).await {
            Err(Error::StatementLost(_)) => {
                self.statement_lost(conn, &deadline).await;
                ask(conn).await
            }
            other => other,
        };
        let privileges = match result {
            Ok(result) => json_cell(&result).and_then(|v| serde_json::from_value::<role::Privileges>(v).ok()),
            Err(_) => None,
        };
        if let Some(powers) = &conn.reader {
            tracing::info!(
                "read-only queries run as {}: {}; connection.role names another role to run as, connection.read_only_as_login turns this off",
                role::READER,
                powers.reason()
            );
        }
        match privileges {
            None => tracing::debug!("could not read the privileges of the role queries run as"),
            Some(p) => {
                let findings = p.findings();
                if !findings.is_empty() {
                    let advice = match &self.role {
                        Some(_) => "give connection.role only SELECT on the tables the agent needs",
                        None => "set connection.role to a reader role (`pgmcp check --suggest-role` prints the SQL)",
                    };
                    tracing::warn!(
                        role = %p.role,
                        login = %p.login,
                        "queries run as role \"{}\", which can do more than read: {}; {advice}",
                        p.role,
                        findings.join("; ")
                    );
                }
            }
        }
    }

    /// Why statements run as the role they do, for `check`; `reader`: a
    /// connection's [`Connection::reader`].
    pub(super) fn role_reason(&self, reader: Option<&role::LoginPowers>) -> String {
        match (&self.role, reader) {
            (Some(_), _) => "connection.role".to_owned(),
            (None, Some(powers)) => format!(
                "read-only mode, and {}; set connection.role to choose the role, or connection.read_only_as_login to run as the login",
                powers.reason()
            ),
            (None, None) if !self.options.read_only => {
                "the login; connection.role is not set, and read-write mode runs as the login".to_owned()
            }
            (None, None) if self.options.read_only_as_login => {
                "the login, with all its rights: connection.read_only_as_login is on".to_owned()
            }
            (None, None) => "the login, which is not a superuser and has no REPLICATION, pg_execute_server_program, \
                             pg_read_server_files or pg_write_server_files; connection.role is not set"
                .to_owned(),
        }
    }
}

/// The one `json` cell of a catalog reply, if there is one.
fn json_cell(result: &StatementResult) -> Option<Value> {
    let bytes = result.rows.first()?.first()?.as_ref()?;
    serde_json::from_slice(bytes).ok()
}
