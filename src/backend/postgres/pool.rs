//! The idle-connection pool and connecting: a fresh idle connection whose
//! session reset went through, else a new one, trying each host in turn
//! for the server `target_session_attrs` asks for, within `connect_timeout`
//! and the call's deadline; and a failed attempt worded for people
//! (`connect_error`). Apart from the calls, which only check a connection
//! out and back in.

use std::time::{Duration, Instant};

use super::deadline::run;
use super::diagnosis::{self, Failure};
use super::wire::{Connection, Exchange, WireError};
use super::{ConnectParams, Deadline, PgBackend, SessionAttrs};
use crate::error::{ConnectionError, Error};

/// How long a pooled connection may take to answer its deferred session reset.
const SETTLE: Duration = Duration::from_secs(2);

impl PgBackend {
    /// An idle connection that is still fresh, or a new one.
    pub(super) async fn checkout(&self, deadline: &Deadline) -> Result<Connection, Error> {
        loop {
            let candidate = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            match candidate {
                Some((mut conn, since)) if self.is_fresh(&conn, since) => {
                    // The previous call's session reset must have succeeded, and
                    // the server must not have closed the connection since (a
                    // restart ends every session).
                    match tokio::time::timeout(SETTLE, conn.read_deferred()).await {
                        Ok(Ok(())) if conn.is_alive().await => {
                            if self.behind_pooler() && !conn.pooled {
                                conn.pool_from_now();
                            }
                            return Ok(conn);
                        }
                        _ => tracing::debug!("dropping a pooled connection that is no longer usable"),
                    }
                }
                Some((conn, _)) => {
                    tokio::spawn(conn.terminate());
                }
                None => break,
            }
        }
        let connect = async {
            let hosts = self.params.each_host();
            let passes: &[SessionAttrs] = match self.params.target_session_attrs {
                SessionAttrs::PreferStandby => &[SessionAttrs::Standby, SessionAttrs::Any],
                attrs => &[attrs],
            };
            let mut failed: Option<Error> = None;
            let mut unsuitable: Vec<String> = Vec::new();
            for &pass in passes {
                for params in &hosts {
                    // libpq's connect_timeout holds for each host.
                    let left = deadline.at.saturating_duration_since(Instant::now());
                    let budget = left.min(params.connect_timeout);
                    let attempt = tokio::time::timeout(budget, self.connect_to(params));
                    let mut conn = match attempt.await {
                        Ok(Ok(conn)) => conn,
                        Ok(Err(e)) => {
                            failed = Some(connect_error(params, e));
                            continue;
                        }
                        Err(_) => {
                            let limit = if budget >= params.connect_timeout {
                                "connect_timeout"
                            } else {
                                "the call's timeout"
                            };
                            failed = Some(Error::Connection(ConnectionError::TimedOut {
                                target: params.target(),
                                seconds: budget.as_secs_f32().ceil() as u64,
                                limit: limit.to_owned(),
                            }));
                            continue;
                        }
                    };
                    match self.suits(&mut conn, pass, deadline).await {
                        Ok(true) => match self.learn_login(&mut conn, deadline).await {
                            Ok(()) => return Ok(conn),
                            Err(e) => failed = Some(e),
                        },
                        Ok(false) => {
                            unsuitable.push(params.target());
                            tokio::spawn(conn.terminate());
                        }
                        Err(e) => failed = Some(e),
                    }
                }
            }
            Err(match (failed, unsuitable.is_empty()) {
                (Some(e), true) => e,
                (failed, _) => Error::Connection(ConnectionError::NoSuitableHost(format!(
                    "none of the hosts is a {attrs} server (target_session_attrs={attrs}): {} answered as {}{}",
                    unsuitable.join(", "),
                    match self.params.target_session_attrs {
                        SessionAttrs::Standby | SessionAttrs::ReadOnly => "primaries",
                        _ => "standbys",
                    },
                    failed.map(|e| format!("; the others: {e}")).unwrap_or_default(),
                    attrs = self.params.target_session_attrs.name(),
                ))),
            })
        };
        tokio::select! {
            r = connect => r,
            _ = deadline.cancel.cancelled() => Err(Error::Cancelled),
        }
    }

    /// Whether a new connection is to the kind of server
    /// `target_session_attrs` asks for: a primary or a standby, as
    /// `pg_is_in_recovery()` says.
    async fn suits(&self, conn: &mut Connection, attrs: SessionAttrs, deadline: &Deadline) -> Result<bool, Error> {
        let want_standby = match attrs {
            SessionAttrs::Any | SessionAttrs::PreferStandby => return Ok(true),
            SessionAttrs::ReadWrite | SessionAttrs::Primary => false,
            SessionAttrs::ReadOnly | SessionAttrs::Standby => true,
        };
        let ex = Exchange::alone("SELECT pg_catalog.pg_is_in_recovery()", 1);
        let result = run(conn, &ex, deadline).await?;
        let in_recovery =
            result.rows.first().and_then(|r| r.first()).and_then(|v| v.as_deref()) == Some(b"t".as_slice());
        Ok(in_recovery == want_standby)
    }

    fn is_fresh(&self, conn: &Connection, idle_since: Instant) -> bool {
        conn.created().elapsed() < self.options.max_conn_lifetime && idle_since.elapsed() < self.options.max_conn_idle
    }

    pub(super) fn checkin(&self, conn: Connection) {
        if conn.is_reusable() && conn.created().elapsed() < self.options.max_conn_lifetime {
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((conn, Instant::now()));
        }
        // Otherwise the connection is dropped here, which closes its socket.
    }

    pub async fn close(&self) {
        let idle: Vec<_> = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for (conn, _) in idle {
            conn.terminate().await;
        }
    }
}

/// A failed connection attempt, worded so a person knows what to fix
/// ([`diagnosis::explain`]). Never contains the password: only where it
/// came from.
fn connect_error(params: &ConnectParams, e: WireError) -> Error {
    let attempt = diagnosis::Attempt {
        host: &params.host,
        port: params.port,
        user: &params.user,
        dbname: params.dbname.as_deref(),
        os_user: params.os_user,
        sslmode: params.sslmode,
        password_variable: &params.password_variable,
        named: params.named.as_deref(),
    };
    let text = match e {
        WireError::Connect { source, .. } => diagnosis::explain(&attempt, &Failure::Socket(&source)),
        WireError::Refused { db, password_from } => diagnosis::explain(
            &attempt,
            &Failure::Refused {
                code: db.code(),
                message: &db.message,
                password: password_from.as_ref(),
            },
        ),
        WireError::PasswordRequired { asked, search } => {
            let message = diagnosis::explain(&attempt, &Failure::NoPassword { asked, search: &search });
            return Error::PasswordRequired { message };
        }
        WireError::TlsSetup(e) => e.to_string(),
        other => format!("could not connect to {}: {other}", params.target()),
    };
    Error::Connection(ConnectionError::Connect(text))
}
