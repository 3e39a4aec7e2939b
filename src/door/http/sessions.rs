//! rmcp's 2025 sessions ([`Sessions`]), at most `server.max_sessions` open
//! at once, each owned by the [`Caller`] whose `initialize` opened it. A
//! request naming a session that is not its caller's is answered as one
//! naming no session at all ([`no_such_session`]), so nobody learns that it
//! exists. Apart because it is rmcp's [`SessionManager`], which rmcp calls.

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};

use super::tokens::Caller;
use super::{Body, lock};

/// The session id a request naming a session that is not its caller's is
/// passed on with: no session has it (rmcp's are UUIDs), so rmcp answers
/// exactly as for any unknown session.
pub(super) const NO_SUCH_SESSION: &str = "pgmcp-no-such-session";

/// rmcp's answer to a request naming a session it does not have, the same
/// bytes: a caller must not tell "not yours" from "no such session".
pub(super) fn no_such_session() -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed_unsync());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The header naming a 2025 session.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";

/// rmcp's sessions, at most `max` open at once: a client past it gets an
/// error rather than memory growing with every `initialize`. An idle
/// session ends after 5 minutes (rmcp's default), which frees its place.
///
/// Each session's owner, the [`Caller`] whose `initialize` opened it, is
/// recorded when rmcp initializes it, before its id is sent to anyone, and
/// forgotten when it closes. A session with no owner recorded belongs to
/// no one.
pub(super) struct Sessions {
    pub(super) open: LocalSessionManager,
    pub(super) max: usize,
    pub(super) owners: Mutex<HashMap<String, Caller>>,
}

impl Sessions {
    pub(super) fn owned_by(&self, id: &str, caller: Caller) -> bool {
        lock(&self.owners).get(id) == Some(&caller)
    }
}

/// Why a session call failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionError {
    #[error(
        "too many open sessions ({0}, server.max_sessions): end an unused one (HTTP DELETE with its \
         Mcp-Session-Id), wait for an idle one to expire, or use the stateless protocol"
    )]
    Full(usize),
    #[error(transparent)]
    Open(#[from] LocalSessionManagerError),
}

impl SessionManager for Sessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Checked, then created: two requests racing for the last place may
        // both get one, which bounds the count at `max` plus the requests
        // in flight.
        if self.open.sessions.read().await.len() >= self.max {
            return Err(SessionError::Full(self.max));
        }
        Ok(self.open.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        // rmcp keeps the HTTP request's parts with the message; the
        // caller rides in their extensions.
        let caller = match &message {
            ClientJsonRpcMessage::Request(request) => request
                .request
                .extensions()
                .get::<hyper::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .copied(),
            _ => None,
        };
        if let Some(caller) = caller {
            lock(&self.owners).insert(id.to_string(), caller);
        }
        Ok(self.open.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.open.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.owners).remove(id.as_ref());
        Ok(self.open.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.open.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.open.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.open.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.open.resume(id, last_event_id).await?)
    }
}
