//! What stands in front of rmcp's MCP service ([`Front`]): every request a
//! connection sends meets the health and readiness checks, the path, the
//! bearer token, the caller's sessions and the body budget, in that order,
//! before rmcp sees it. Apart from the listener because this is per
//! request, where the listener and the connection slots are per connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use rmcp::transport::streamable_http_server::StreamableHttpService;

use super::bodies::Bodies;
use super::connections::Conn;
use super::sessions::{NO_SUCH_SESSION, SESSION_HEADER, Sessions, no_such_session};
use super::tokens::{Caller, bearer, token_index};
use super::{Body, MCP_PATH, answer};
use crate::door::mcp::Server;
use crate::pipeline::Engine;

/// The longest a readiness check waits for the database.
pub const READY_WITHIN: Duration = Duration::from_secs(1);

/// What stands in front of the MCP service.
pub(super) struct Front {
    pub(super) engine: Arc<Engine>,
    pub(super) tokens: Vec<String>,
    pub(super) health: Option<String>,
    pub(super) mcp: StreamableHttpService<Server, Sessions>,
    pub(super) sessions: Arc<Sessions>,
    pub(super) bodies: Bodies,
    /// The last readiness check: when it ran, and the failure's label.
    pub(super) readiness: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Front {
    pub(super) async fn route(&self, conn: &Conn, mut request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path();
        if let Some(health) = &self.health {
            if path == health {
                return answer(StatusCode::OK, r#"{"status":"ok"}"#.to_owned());
            }
            if path.strip_prefix(health.as_str()) == Some("/ready") {
                return self.ready().await;
            }
        }
        if path != MCP_PATH {
            return answer(
                StatusCode::NOT_FOUND,
                r#"{"error":"not found: MCP is served at /mcp"}"#.to_owned(),
            );
        }
        let caller = if self.tokens.is_empty() {
            Caller(None)
        } else {
            let presented = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|value| bearer(value.as_bytes()));
            match presented.and_then(|token| token_index(&self.tokens, token)) {
                Some(index) => Caller(Some(index)),
                None => {
                    let mut response = answer(
                        StatusCode::UNAUTHORIZED,
                        r#"{"error":"a bearer token is required: send Authorization: Bearer <token>"}"#.to_owned(),
                    );
                    response.headers_mut().insert(
                        header::WWW_AUTHENTICATE,
                        header::HeaderValue::from_static(r#"Bearer realm="pgmcp""#),
                    );
                    return response;
                }
            }
        };
        if !conn.admit_member().await {
            // Dropped for room while this request was read: the
            // connection is closing, and this answer may not reach anyone.
            // Should it, it says what every busy answer says: try again in
            // a second, on a new connection.
            let mut response = answer(
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"error":"the connection was closed to make room: try again on a new connection"}"#.to_owned(),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
            return response;
        }
        // A session belongs to the token that opened it. A request naming
        // one that is not its caller's goes on naming a session no one has,
        // so it is answered exactly as one naming an unknown session, in
        // rmcp's order of checks.
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|id| !self.sessions.owned_by(id, caller))
            .is_some();
        if session {
            if request.method() == Method::DELETE {
                // rmcp answers `202` to ending a session it does not have;
                // MCP says `404`, and only this answer says nothing.
                return no_such_session();
            }
            request
                .headers_mut()
                .insert(SESSION_HEADER, header::HeaderValue::from_static(NO_SUCH_SESSION));
        }
        request.extensions_mut().insert(caller);
        if request.method() == Method::POST {
            match self.bodies.read(request).await {
                Ok(request) => self.to_mcp(request).await,
                Err(response) => response,
            }
        } else {
            self.to_mcp(request).await
        }
    }

    async fn to_mcp<B>(&self, request: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body + Send + 'static,
        B::Data: Send + 'static,
        B::Error: std::fmt::Display,
    {
        let mut mcp = self.mcp.clone();
        match tower_service::Service::call(&mut mcp, request).await {
            Ok(response) => response.map(|body| body.map_err(|never| match never {}).boxed_unsync()),
            Err(never) => match never {},
        }
    }

    /// Whether the database answers within [`READY_WITHIN`]. The health
    /// paths need no token, so the database is asked at most once per
    /// [`READY_WITHIN`], however many probes arrive: the others get the
    /// last answer, and no one can spend the call slots with probes.
    async fn ready(&self) -> Response<Body> {
        let mut last = self.readiness.lock().await;
        let fresh = last.as_ref().filter(|(at, _)| at.elapsed() < READY_WITHIN);
        let verdict = match fresh {
            Some((_, verdict)) => verdict.clone(),
            None => {
                let verdict = self.engine.ready(READY_WITHIN).await.map_err(|e| e.label());
                if let Err(label) = &verdict {
                    tracing::info!(error = %label, "readiness check failed");
                }
                *last = Some((Instant::now(), verdict.clone()));
                verdict
            }
        };
        match verdict {
            Ok(()) => answer(StatusCode::OK, r#"{"status":"ready"}"#.to_owned()),
            Err(label) => answer(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({"status": "unavailable", "error": label}).to_string(),
            ),
        }
    }
}
