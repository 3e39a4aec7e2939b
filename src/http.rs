//! `pgmcp serve --http`: MCP's Streamable HTTP transport at `/mcp`, for a
//! team that runs one guarded pgmcp next to the database.
//!
//! Every client shares the one [`Engine`]: the same guard, hooks, timeouts,
//! call slots and connection pool. rmcp's Streamable HTTP service speaks the
//! protocol (sessions for 2025 clients, the stateless 2026-07-28 protocol,
//! `Host` and `Origin` checks, the body limit); in front of it this module
//! answers the health check and the readiness check, and lets in only
//! requests that carry one of the configured bearer tokens.
//!
//! Over HTTP a `query` answer's structured content is built from its text
//! (rmcp writes the messages), where stdio splices the same bytes in.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::mcp::{Answers, Server};
use crate::pipeline::Engine;

/// Where MCP is served.
pub const MCP_PATH: &str = "/mcp";

/// Most client connections open at once.
const MAX_CONNECTIONS: usize = 256;

/// The longest a client may take to send a request's headers.
const HEADER_WITHIN: Duration = Duration::from_secs(10);

/// The longest a readiness check waits for the database.
pub const READY_WITHIN: Duration = Duration::from_secs(1);

/// How the listener is set up, validated.
#[derive(Debug, Clone)]
pub struct Listen {
    pub addr: SocketAddr,
    /// Bearer tokens; empty only on a loopback address.
    pub tokens: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub health_check_path: Option<String>,
    /// Longest request body taken (the stdio line limit).
    pub max_body: usize,
    /// Most 2025-protocol sessions open at once.
    pub max_sessions: usize,
}

/// Why the listener cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error(
        "pgmcp will not listen on {0} without bearer tokens: anyone who can reach it could query the database. \
         Set server.auth_tokens_file (one token per line, readable by you alone) or PGMCP_HTTP_TOKEN, or listen \
         on 127.0.0.1"
    )]
    OpenWithoutTokens(SocketAddr),
    #[error("auth tokens file {path}: {message}")]
    Tokens { path: String, message: String },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// The tokens in `text`: one per line, blank lines and `#` comments skipped.
pub fn tokens_in(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Read the tokens file, refusing one that group or others can read: a
/// token is a password.
pub fn read_tokens(path: &std::path::Path) -> Result<Vec<String>, ListenError> {
    let fail = |message: String| ListenError::Tokens {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| fail(e.to_string()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(fail(format!(
                "group or others can read it (mode {:o}): chmod 600 {}",
                mode & 0o777,
                path.display()
            )));
        }
    }
    let tokens = tokens_in(&text);
    if tokens.is_empty() {
        return Err(fail("holds no token".to_owned()));
    }
    Ok(tokens)
}

/// Whether `presented` is one of `tokens`, compared in constant time: how
/// long the answer takes says nothing of how much of a token matched.
pub fn token_matches(tokens: &[String], presented: &[u8]) -> bool {
    let mut found = 0u8;
    for token in tokens {
        let token = token.as_bytes();
        let mut differ = u8::from(token.len() != presented.len());
        for (i, byte) in token.iter().enumerate() {
            differ |= byte ^ presented.get(i).copied().unwrap_or(0);
        }
        found |= u8::from(differ == 0);
    }
    found == 1
}

/// The bearer token an `Authorization` header carries.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest.trim_ascii())
}

type Body = UnsyncBoxBody<Bytes, std::convert::Infallible>;

fn answer(status: StatusCode, json: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(json)).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

impl Listen {
    /// Refuse to serve anyone who can reach a non-loopback address without
    /// a token.
    pub fn check(&self) -> Result<(), ListenError> {
        if self.tokens.is_empty() && !self.addr.ip().is_loopback() {
            return Err(ListenError::OpenWithoutTokens(self.addr));
        }
        Ok(())
    }
}

/// Serve until `stop` is cancelled; calls running then are stopped by the
/// engine's shutdown.
pub async fn serve(engine: Arc<Engine>, listen: Listen, stop: CancellationToken) -> Result<(), ListenError> {
    listen.check()?;
    let listener = tokio::net::TcpListener::bind(listen.addr)
        .await
        .map_err(|source| ListenError::Bind {
            addr: listen.addr,
            source,
        })?;
    let addr = listener.local_addr().unwrap_or(listen.addr);
    tracing::info!(%addr, tokens = listen.tokens.len(), "serving MCP over HTTP");
    if listen.tokens.is_empty() {
        tracing::warn!(
            %addr,
            "no bearer tokens: every local user and process, and anything a proxy forwards here, can query the \
             database as pgmcp does"
        );
    }

    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(listen.max_body)
        // A stateless call's answer as one JSON body rather than an event
        // stream, when nothing else (progress) is sent before it.
        .with_json_response(true)
        .with_allowed_origins(listen.allowed_origins.clone())
        // A browser page may not reach pgmcp unless its origin is listed.
        .enforce_origin_validation();
    if !addr.ip().is_loopback() {
        // Reached by names pgmcp cannot know; the tokens keep others out
        // (the Host check guards loopback servers against DNS rebinding).
        config = config.disable_allowed_hosts();
    }
    let mcp = {
        let engine = engine.clone();
        StreamableHttpService::new(
            move || Ok(Server::new(engine.clone(), Answers::Built)),
            Arc::new(Sessions {
                open: LocalSessionManager::default(),
                max: listen.max_sessions,
            }),
            config,
        )
    };
    let front = Arc::new(Front {
        engine,
        tokens: listen.tokens,
        health: listen.health_check_path,
        mcp,
        readiness: tokio::sync::Mutex::new(None),
    });
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        // At most MAX_CONNECTIONS open: past it, new clients wait in the
        // kernel's backlog rather than use up the process's descriptors,
        // which the database connections and hooks need too.
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return Ok(()),
            },
            () = stop.cancelled() => return Ok(()),
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or memory: wait rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = stop.cancelled() => return Ok(()),
        };
        let front = front.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request| {
                let front = front.clone();
                async move { Ok::<_, std::convert::Infallible>(front.route(request).await) }
            });
            // A client that never finishes its headers does not hold a
            // connection open for ever.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_WITHIN)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(e) = served {
                        tracing::debug!(%peer, error = %e, "HTTP connection ended");
                    }
                }
                () = stop.cancelled() => connection.as_mut().graceful_shutdown(),
            }
        });
    }
}

/// What stands in front of the MCP service.
struct Front {
    engine: Arc<Engine>,
    tokens: Vec<String>,
    health: Option<String>,
    mcp: StreamableHttpService<Server, Sessions>,
    /// The last readiness check: when it ran, and the failure's label.
    readiness: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Front {
    async fn route(&self, request: Request<Incoming>) -> Response<Body> {
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
        if !self.tokens.is_empty() {
            let presented = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|value| bearer(value.as_bytes()));
            if !presented.is_some_and(|token| token_matches(&self.tokens, token)) {
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

/// rmcp's sessions, at most `max` open at once: a client past it gets an
/// error rather than memory growing with every `initialize`. An idle
/// session ends after 5 minutes (rmcp's default), which frees its place.
struct Sessions {
    open: LocalSessionManager,
    max: usize,
}

/// Why a session call failed.
#[derive(Debug, thiserror::Error)]
enum SessionError {
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
        Ok(self.open.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.open.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_exactly() {
        let tokens = vec!["s3cret-token".to_owned(), "other".to_owned()];
        // (presented, matches)
        let cases: [(&[u8], bool); 7] = [
            (b"s3cret-token", true),
            (b"other", true),
            (b"s3cret-toke", false),
            (b"s3cret-token2", false),
            (b"", false),
            (b"S3CRET-TOKEN", false),
            (b"othe\0", false),
        ];
        for (presented, matches) in cases {
            assert_eq!(token_matches(&tokens, presented), matches, "{presented:?}");
        }
        assert!(!token_matches(&[], b"anything"));
    }

    #[test]
    fn bearer_headers_are_read() {
        let cases: [(&[u8], Option<&[u8]>); 5] = [
            (b"Bearer abc", Some(b"abc")),
            (b"bearer  abc ", Some(b"abc")),
            (b"Basic abc", None),
            (b"Bearer", None),
            (b"Bearerabc", None),
        ];
        for (header, token) in cases {
            assert_eq!(bearer(header), token, "{header:?}");
        }
    }

    #[test]
    fn token_files_skip_blanks_and_comments() {
        assert_eq!(tokens_in("# team tokens\n\n  a1 \nb2\n"), ["a1", "b2"]);
    }
}
