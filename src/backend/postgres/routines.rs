//! The catalog facts the guard judges functions with ([`Routines`]): read with
//! one query (`routines.sql`, every name in it schema-qualified so nothing a
//! database user defines runs in its place), kept for [`REREAD`] and dropped
//! whenever a new connection opens, so the facts are never older than the
//! session a query runs in by more than that.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::guard::Routines;

/// The catalog query: a JSON document of functions, operators, casts and the
/// functions run implicitly.
pub(super) const SQL: &str = include_str!("routines.sql");

/// How long facts are used before they are read again. A function created
/// meanwhile with a new name is refused as unknown; this bounds how long a
/// new overload of a known name can go unseen.
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
