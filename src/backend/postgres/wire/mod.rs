//! One PostgreSQL connection, spoken at the message level.
//!
//! We use `postgres-protocol` (the layer under tokio-postgres) directly because
//! tokio-postgres always binds results in binary format and has no row limit on
//! `Execute`. Speaking the protocol ourselves gives us, in one round trip:
//! text results (PostgreSQL's own output for every type, extensions included),
//! text parameters whose types the server infers, a server-side single-statement
//! check (the extended protocol refuses multi-statement text), and `Execute` with a
//! row limit so a huge result is never read past the cap. ARCHITECTURE.md has the
//! full reasoning.
//!
//! This module knows nothing of policy: it connects, authenticates, runs an
//! [`Exchange`] and hands back raw text rows.
//!
//! # Layout
//!
//! A file per phase of the protocol, each adding to [`Connection`]:
//!
//! - `socket.rs`: the transport: TCP or a Unix socket, and whether an idle
//!   one is still open (`is_alive`).
//! - `startup.rs`: the SSLRequest and TLS, the startup message, and what the
//!   server says before it is ready (`Connection::connect`).
//! - `authentication.rs`: the password (given, or from the password file),
//!   and cleartext, MD5 and SCRAM-SHA-256.
//! - `exchange.rs`: [`Exchange`], one round trip in the extended protocol,
//!   and its [`StatementResult`].
//! - `rows.rs`: data rows, read whole or field by field within the budget.
//! - `copy_out.rs`: a `COPY ... TO STDOUT`'s lines, read as rows.
//! - `message.rs`: reading messages off the socket, never a long one whole.
//! - `error_response.rs`: an `ErrorResponse` as a [`DbError`].
//! - `cancel.rs`: [`CancelTarget`], the cancel request.

mod authentication;
mod cancel;
mod copy_out;
mod error_response;
mod exchange;
mod message;
mod rows;
mod socket;
mod startup;

use std::io;
use std::time::Instant;

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use tokio::io::{AsyncRead, AsyncWrite};

pub use cancel::CancelTarget;
pub use exchange::{Exchange, Prepared, StatementResult};
pub use rows::WireColumn;
// Only Unix connections keep their descriptor (`Connection::raw`).
#[cfg(unix)]
use socket::RawSocket;

use super::diagnosis::PasswordSearch;
use super::params::{PasswordSource, SslMode};
use super::tls::{TlsSession, TlsSetupError};
use crate::error::DbError;

/// Anything we can speak the protocol over: TCP, a Unix socket, or TLS over TCP.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// Why a connection attempt or an exchange failed below the SQL level.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("could not connect to {target}: {source}")]
    Connect { target: String, source: io::Error },
    #[error("connection to the server was lost: {0}")]
    Io(#[from] io::Error),
    /// The server asked for a password (`asked`: by the pg_hba.conf method
    /// it implies: scram-sha-256, md5 or password) and there is none;
    /// `search` says where one was looked for.
    #[error("the server asks for a password ({asked}), but none was found")]
    PasswordRequired {
        asked: &'static str,
        search: PasswordSearch,
    },
    /// The server refused the session while it was being set up (a wrong
    /// password, no pg_hba.conf line, a missing database).
    #[error("{db}")]
    Refused {
        db: Box<DbError>,
        password_from: Option<PasswordSource>,
    },
    /// The server answered the SSLRequest with `N` and the mode needs TLS.
    #[error("the server does not support TLS, but sslmode={}", .0.name())]
    TlsRefused(SslMode),
    #[error("{0}")]
    TlsHandshake(String),
    #[error(transparent)]
    TlsSetup(#[from] TlsSetupError),
    #[error("the server asked for an authentication method pgmcp does not support ({0})")]
    UnsupportedAuth(&'static str),
    #[error("protocol error: {0}")]
    Protocol(String),
    /// An error the server reported; the connection may still be usable.
    #[error("{0}")]
    Db(Box<DbError>),
    /// An error in one of an exchange's setup statements: the main statement
    /// did not run. Kept apart so a refused `SET LOCAL ROLE` is not mistaken
    /// for the query's own permission error.
    #[error("{0}")]
    Setup(Box<DbError>),
}

impl From<DbError> for WireError {
    fn from(e: DbError) -> WireError {
        WireError::Db(Box::new(e))
    }
}

/// A live connection. Not `Clone`; exclusively owned by whoever runs on it.
pub struct Connection {
    io: Box<dyn Io>,
    read_buf: BytesMut,
    write_buf: BytesMut,
    cancel: CancelTarget,
    created: Instant,
    /// Set while an exchange is on the wire. If the future running it is
    /// dropped half-way (a timeout), this stays set and the connection must not
    /// be reused: its protocol state is unknown.
    in_flight: bool,
    /// Replies of deferred statements not read yet (one ReadyForQuery each).
    deferred_replies: usize,
    /// The names of [`Prepared`] statements this connection holds.
    prepared: Vec<&'static str>,
    /// Deallocate every prepared statement before the next exchange: a
    /// statement of the caller's prepared one (`PREPARE`), or an exchange
    /// that parsed one of pgmcp's failed, so whether it exists is unknown.
    forget_prepared: bool,
    /// Kept for the backend with the connection, which is the server's
    /// session: what its catalog check last found (see `routines::Check`).
    pub catalog_seen: Option<super::routines::Seen>,
    /// Whether the login is a superuser, as the server said at startup
    /// (`is_superuser`); `None` when it did not say (a pooler may not pass
    /// it on).
    pub superuser: Option<bool>,
    /// Kept for the backend with the connection: why this session's
    /// read-only queries run as `pg_read_all_data`, when they do (see
    /// `role::LoginPowers`).
    pub reader: Option<super::role::LoginPowers>,
    /// Through a connection pooler: the session is not pgmcp's alone, and
    /// a statement sent outside a transaction may reach another server
    /// connection, so nothing is deallocated there.
    pub pooled: bool,
    /// The socket's descriptor, for `kernel_view`.
    #[cfg(unix)]
    raw: Option<RawSocket>,
    /// What the TLS handshake agreed on; `None` without TLS.
    tls: Option<TlsSession>,
    /// Where the password sent came from; `None` when the server asked for none.
    password_from: Option<PasswordSource>,
}

impl Connection {
    /// What the TLS handshake agreed on; `None` when the connection has no TLS.
    pub fn tls(&self) -> Option<&TlsSession> {
        self.tls.as_ref()
    }

    /// Where the password came from; `None` when the server asked for none.
    pub fn password_from(&self) -> Option<&PasswordSource> {
        self.password_from.as_ref()
    }

    pub fn cancel_target(&self) -> CancelTarget {
        self.cancel.clone()
    }

    pub fn created(&self) -> Instant {
        self.created
    }

    /// False when an exchange was abandoned half-way, or retired: drop the
    /// connection.
    pub fn is_reusable(&self) -> bool {
        !self.in_flight
    }

    /// The process id the server gave at startup (`BackendKeyData`): that
    /// of the server session itself when connected directly; a pooler
    /// hands out keys of its own, never a server session's.
    pub fn startup_pid(&self) -> i32 {
        self.cancel.process_id
    }

    /// Deallocate every prepared statement before the next exchange and
    /// prepare pgmcp's again: whether they are still there is not known.
    pub fn forget_prepared(&mut self) {
        if !self.pooled {
            self.forget_prepared = true;
        }
    }

    /// From now on the connection goes through a pooler: pgmcp's named
    /// statements are not to be counted on, and nothing is deallocated.
    pub fn pool_from_now(&mut self) {
        self.pooled = true;
        self.prepared.clear();
        self.forget_prepared = false;
    }

    /// Never reuse this connection: a cancel request sent for its statement
    /// may still be on its way, and would stop the next call's statement.
    pub fn retire(&mut self) {
        self.in_flight = true;
    }

    /// Say goodbye politely; errors are irrelevant at this point.
    pub async fn terminate(mut self) {
        frontend::terminate(&mut self.write_buf);
        let _ = self.flush().await;
    }
}
