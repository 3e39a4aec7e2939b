//! Running one exchange within the call's deadline: the server's own
//! `statement_timeout` first, then cancel requests, repeated until the
//! server answers, and one sent if the call goes away mid-exchange
//! (`CancelOnDrop`); and what the exchange's errors mean to the library
//! (`query_error`). Apart from the backend's face: every statement pgmcp
//! sends goes through `run`, its own included.

use std::time::Duration;

use super::pooler::names_a_statement_of_pgmcps;
use super::wire::{CancelTarget, Connection, Exchange, StatementResult, WireError};
use super::{Deadline, role, routines};
use crate::error::{ConnectionError, Error};

/// After the deadline, how long we let the server's own `statement_timeout`
/// report before sending a cancel request ourselves.
const SERVER_FIRST: Duration = Duration::from_millis(150);
/// After a cancel request, how long we wait for the server to answer before
/// giving up on the connection.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How often the cancel request is repeated until the server answers.
const CANCEL_REPEAT: Duration = Duration::from_millis(100);

/// Run an exchange until it finishes, the deadline passes, or the caller
/// cancels. On the last two, ask the server to cancel and wait briefly for it
/// to say so, which leaves the connection reusable; if it does not answer, the
/// connection stays marked in flight and is discarded.
pub(super) async fn run(
    conn: &mut Connection,
    ex: &Exchange<'_>,
    deadline: &Deadline,
) -> Result<StatementResult, Error> {
    // A call cancelled before its statement is sent sends nothing.
    if deadline.cancel.is_cancelled() {
        return Err(Error::Cancelled);
    }
    // If this future is dropped before the exchange is read to its end (its
    // caller went away), the guard still asks the server to stop the work.
    let mut guard = CancelOnDrop(Some(conn.cancel_target()));
    let stopped_by = {
        let work = conn.exchange(ex);
        tokio::pin!(work);
        let stopped_by = tokio::select! {
            r = &mut work => {
                guard.0 = None;
                return r.map_err(|e| query_error(e, deadline.timeout));
            }
            _ = tokio::time::sleep_until((deadline.at + SERVER_FIRST).into()) => Error::Timeout { after: deadline.timeout },
            _ = deadline.cancel.cancelled() => Error::Cancelled,
        };
        // A cancel request only stops a statement that is running: one sent
        // while the statement is still on its way in is ignored. So repeat it
        // until the server answers, within the grace period.
        if let Some(target) = guard.0.take() {
            let keep_cancelling = async {
                loop {
                    let _ = tokio::time::timeout(CANCEL_GRACE, target.cancel()).await;
                    tokio::time::sleep(CANCEL_REPEAT).await;
                }
            };
            let _ = tokio::time::timeout(CANCEL_GRACE, async {
                tokio::select! {
                    _ = &mut work => {}
                    _ = keep_cancelling => {}
                }
            })
            .await;
        }
        stopped_by
    };
    // The last cancel request may still be on its way to the server (the
    // exchange can end while one is sent): on this connection it would stop
    // the next call's statement.
    conn.retire();
    Err(stopped_by)
}

/// Sends a cancel request for a connection's running statement when dropped
/// while still armed.
struct CancelOnDrop(Option<CancelTarget>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let (Some(target), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(CANCEL_GRACE, target.cancel()).await;
            });
        }
    }
}

fn query_error(e: WireError, timeout: Duration) -> Error {
    match e {
        // 57014 is query_canceled: by statement_timeout (ours) or a cancel request.
        WireError::Db(db) if db.code.sqlstate() == Some("57014") && db.message.contains("statement timeout") => {
            Error::Timeout { after: timeout }
        }
        WireError::Db(db) => Error::Db(db),
        // Only the switch to connection.role can fail this way among the
        // setup statements; PgBackend::explain adds what to do about it.
        WireError::Setup(db) if role::is_role_refusal(db.code(), &db.message) => Error::Role {
            target: "connection.role",
            code: db.code().to_owned(),
            message: db.message,
            advice: None,
        },
        WireError::Setup(db) if db.code.sqlstate() == Some(routines::CHANGED) => Error::CatalogChanged,
        WireError::Setup(db) if db.code.sqlstate() == Some(routines::MOVED) => Error::CatalogUnconfirmed,
        WireError::Setup(db) if names_a_statement_of_pgmcps(&db) => Error::StatementLost(db),
        WireError::Setup(db) => Error::Db(db),
        other => Error::Connection(ConnectionError::Connect(other.to_string())),
    }
}
