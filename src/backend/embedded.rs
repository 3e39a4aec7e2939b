//! What the embedded engines (SQLite, DuckDB) share: their work runs on a
//! blocking thread, never on the async runtime's, under a [`Stop`] that fires
//! at the call's deadline, when the call is cancelled, or when the call's
//! future is dropped; and bytes are written the way PostgreSQL writes `bytea`.
//!
//! How a fired stop reaches a running statement is each engine's own: SQLite's
//! progress handler polls [`Stop::fired`], DuckDB hands [`Stop::on_fire`] its
//! connection's interrupt.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

use super::Deadline;
use crate::error::{ConnectionError, Error};

/// How often a fired stop fires again while the work winds down: an
/// interrupt DuckDB receives just before it starts a query is reset by the
/// start.
const FIRE_AGAIN: Duration = Duration::from_millis(50);

/// When blocking work must stop. Clones share one signal.
#[derive(Clone)]
pub struct Stop {
    signal: Arc<Signal>,
}

struct Signal {
    at: Instant,
    /// Cancelled when the stop fires. A child of the call's token, so a
    /// cancellation reaches work that polls it at once.
    fired: CancellationToken,
    /// What firing does besides setting the flag (DuckDB: interrupt the
    /// statement).
    hook: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
}

impl Stop {
    fn new(deadline: &Deadline) -> Stop {
        Stop {
            signal: Arc::new(Signal {
                at: deadline.at,
                fired: deadline.cancel.child_token(),
                hook: Mutex::new(None),
            }),
        }
    }

    /// The call's deadline.
    pub fn at(&self) -> Instant {
        self.signal.at
    }

    /// Whether the work must stop: the deadline passed or the call was
    /// cancelled or dropped.
    pub fn fired(&self) -> bool {
        self.signal.fired.is_cancelled()
    }

    /// For the work: stop here if the call was stopped.
    #[cfg_attr(not(feature = "duckdb"), allow(dead_code))] // SQLite polls `fired` instead.
    pub fn check(&self) -> Result<(), Error> {
        if self.fired() { Err(Error::Cancelled) } else { Ok(()) }
    }

    /// Run `hook` each time the stop fires, from then on (it replaces any
    /// earlier one). A stop that fired before stays fired, and fires again
    /// until the work ends.
    #[cfg_attr(not(feature = "duckdb"), allow(dead_code))] // SQLite polls `fired` instead.
    pub fn on_fire(&self, hook: impl Fn() + Send + Sync + 'static) {
        *lock(&self.signal.hook) = Some(Box::new(hook));
    }

    fn fire(&self) {
        // The flag first: work that has not started its statement yet sees
        // it; work that has is reached by the hook.
        self.signal.fired.cancel();
        if let Some(hook) = lock(&self.signal.hook).as_ref() {
            hook();
        }
    }

    /// Fire, and keep firing until the work ends.
    async fn until_done<T>(&self, task: &mut std::pin::Pin<&mut JoinHandle<T>>) -> Result<T, JoinError> {
        loop {
            self.fire();
            tokio::select! {
                joined = task.as_mut() => return joined,
                _ = tokio::time::sleep(FIRE_AGAIN) => {}
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Fires the stop if the call's future is dropped before the work ends.
struct FireOnDrop {
    stop: Stop,
    armed: bool,
}

impl Drop for FireOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.stop.fire();
        }
    }
}

/// Run `work` on a blocking thread of its own under a [`Stop`], and wait for
/// it to end: the stop fires at the deadline, on the call's cancellation or
/// when this future is dropped, and again every [`FIRE_AGAIN`] until the work
/// ends. An error `interrupted` says the stop caused becomes
/// [`Error::Cancelled`] when the call was cancelled, else [`Error::Timeout`].
/// `engine` names the worker when the thread itself fails.
pub async fn blocking<T: Send + 'static>(
    engine: &'static str,
    deadline: &Deadline,
    work: impl FnOnce(Stop) -> Result<T, Error> + Send + 'static,
    interrupted: impl FnOnce(&Error, &Stop) -> bool,
) -> Result<T, Error> {
    let stop = Stop::new(deadline);
    let mut fire_on_drop = FireOnDrop {
        stop: stop.clone(),
        armed: true,
    };
    let worker_stop = stop.clone();
    let task = tokio::task::spawn_blocking(move || work(worker_stop));
    tokio::pin!(task);
    let at = tokio::time::Instant::from_std(deadline.at);
    let joined = tokio::select! {
        joined = &mut task => joined,
        _ = tokio::time::sleep_until(at) => stop.until_done(&mut task).await,
        _ = deadline.cancel.cancelled() => stop.until_done(&mut task).await,
    };
    fire_on_drop.armed = false;
    let result = joined.map_err(|e| {
        Error::Connection(ConnectionError::Worker {
            engine,
            reason: e.to_string(),
        })
    })?;
    match result {
        Err(e) if interrupted(&e, &stop) => Err(if deadline.cancel.is_cancelled() {
            Error::Cancelled
        } else {
            Error::Timeout {
                after: deadline.timeout,
            }
        }),
        other => other,
    }
}

/// Bytes in PostgreSQL's `bytea` hex form (`\x00ff`): how the embedded
/// engines write binary values, so a blob reads the same whichever engine it
/// came from (PostgreSQL's own sessions pin `bytea_output` to hex).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 + bytes.len() * 2);
    out.push_str("\\x");
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}
