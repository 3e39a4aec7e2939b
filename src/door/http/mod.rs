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
//! Three things rmcp does not do are done here:
//! - A 2025 session belongs to the token that opened it ([`Caller`]): a
//!   request naming another token's session is answered as one naming no
//!   session at all (`404`), so nobody learns that it exists.
//! - Connections that have not shown a token cannot crowd out those that
//!   have ([`Door`]): they have slots of their own, and when those are full
//!   the one that has waited longest is dropped for the newcomer.
//! - Request bodies share one memory budget ([`Bodies`]), held from the
//!   first byte read until the parsed message is dropped.
//!
//! Over HTTP a `query` answer's structured content is built from its text
//! (rmcp writes the messages), where stdio splices the same bytes in.
//!
//! # Layout
//!
//! In the order a connection and its requests meet them:
//! - `mod.rs`: the listener: [`Listen`], [`ListenError`] and [`serve`],
//!   which accepts connections and hands each request to the front.
//! - `connections.rs`: the connection slots ([`Door`]), strangers' apart
//!   from token holders'.
//! - `front.rs`: what each request meets before rmcp ([`Front`]): health
//!   and readiness, the token, the caller's sessions, then the body.
//! - `tokens.rs`: the bearer tokens: the tokens file, the `Authorization`
//!   header, and which token a request carries ([`Caller`]).
//! - `sessions.rs`: rmcp's sessions ([`Sessions`]), each owned by its
//!   [`Caller`], at most `server.max_sessions` at once.
//! - `bodies.rs`: the memory budget request bodies share ([`Bodies`]).
//!
//! [`Caller`]: tokens::Caller
//! [`Door`]: connections::Door
//! [`Bodies`]: bodies::Bodies
//! [`Front`]: front::Front
//! [`Sessions`]: sessions::Sessions

mod bodies;
mod connections;
mod front;
mod sessions;
mod tokens;

pub use tokens::read_tokens;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::{Response, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::door::mcp::{Answers, Server};
use crate::service::Service;
use bodies::{BODY_WAIT, Bodies};
use connections::{Busy, Door, MAX_CONNECTIONS, MAX_STRANGERS, Watched};
use front::Front;
use sessions::Sessions;

/// Where MCP is served.
pub const MCP_PATH: &str = "/mcp";

/// Connections the kernel completes and holds for pgmcp to accept (the
/// system may cap it lower: `net.core.somaxconn`). `TcpListener::bind`'s
/// 128 overflows in a burst of connections: the overflow's `SYN`s are
/// dropped, and each such client waits a second to retry.
const BACKLOG: u32 = 1024;

/// The longest a client may take to send a request's headers.
const HEADER_WITHIN: Duration = Duration::from_secs(10);

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
    /// Most bytes of request bodies held at once, across all clients; at
    /// least `max_body`.
    pub body_memory: usize,
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

/// A listening socket with a backlog of [`BACKLOG`].
fn listener(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // As `TcpListener::bind` does: a restarted pgmcp can listen again at
    // once, though its old connections linger in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// The origins served: those configured and, on a loopback address, pgmcp's
/// own (`http://127.0.0.1:PORT`, `http://localhost:PORT`, `http://[::1]:PORT`).
/// pgmcp serves no pages, so only a client speaking for pgmcp's own address
/// sends its own origin; a page of another site, a DNS-rebinding one
/// included, has an origin of its own and stays refused.
fn allowed_origins(configured: &[String], addr: SocketAddr) -> Vec<String> {
    let mut origins = configured.to_vec();
    if addr.ip().is_loopback() {
        let port = addr.port();
        origins.extend(["127.0.0.1", "localhost", "[::1]"].map(|host| format!("http://{host}:{port}")));
    }
    origins
}

/// Serve until `stop` is cancelled; calls running then are stopped by the
/// engine's shutdown.
pub async fn serve(service: Arc<Service>, listen: Listen, stop: CancellationToken) -> Result<(), ListenError> {
    listen.check()?;
    let listener = listener(listen.addr).map_err(|source| ListenError::Bind {
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
        .with_allowed_origins(allowed_origins(&listen.allowed_origins, addr))
        // A browser page may not reach pgmcp unless its origin is listed.
        .enforce_origin_validation();
    if !addr.ip().is_loopback() {
        // Reached by names pgmcp cannot know; the tokens keep others out
        // (the Host check guards loopback servers against DNS rebinding).
        config = config.disable_allowed_hosts();
    }
    let sessions = Arc::new(Sessions {
        open: LocalSessionManager::default(),
        max: listen.max_sessions,
        owners: Mutex::new(HashMap::new()),
    });
    let mcp = {
        let service = service.clone();
        // A 2026-07-28 retry may come on another session, or on none.
        let confirmations = Arc::default();
        StreamableHttpService::new(
            move || Ok(Server::new(service.clone(), Answers::Built).sharing(Arc::clone(&confirmations))),
            sessions.clone(),
            config,
        )
    };
    let front = Arc::new(Front {
        // `<path>/ready` asks the default database.
        engine: service.default_engine().clone(),
        tokens: listen.tokens,
        health: listen.health_check_path,
        mcp,
        sessions,
        bodies: Bodies {
            budget: Arc::new(Semaphore::new(listen.body_memory)),
            max_body: listen.max_body,
            wait: BODY_WAIT,
        },
        readiness: tokio::sync::Mutex::new(None),
    });
    let door = Arc::new(Door {
        strangers: Arc::new(Semaphore::new(MAX_STRANGERS)),
        waiting: Mutex::new(BTreeMap::new()),
        idle: tokio::sync::Notify::new(),
        members: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        next: AtomicU64::new(0),
    });
    loop {
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
        // A slot among the connections that have shown no token yet. While
        // none is free this loop waits, and new clients wait in the
        // kernel's backlog rather than use up the process's descriptors,
        // which the database connections and hooks need too.
        let conn = tokio::select! {
            conn = door.clone().admit() => match conn {
                Some(conn) => Arc::new(conn),
                None => return Ok(()),
            },
            () = stop.cancelled() => return Ok(()),
        };
        let front = front.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let dropped = conn.mark.dropped.clone();
            let stream = Watched {
                stream,
                conn: conn.clone(),
            };
            let service = hyper::service::service_fn(move |request| {
                let front = front.clone();
                // Busy from the moment hyper has the request's headers (it
                // may read on, and find nothing, before the answer starts).
                let busy = Busy::new(conn.clone());
                async move { Ok::<_, std::convert::Infallible>(front.route(&busy.0, request).await) }
            });
            // A client that never finishes its headers does not hold a
            // connection open for ever; nor does an idle kept-alive one
            // (hyper times the wait for every request's headers).
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
                () = dropped.cancelled() => {
                    // Trace: under a flood this happens thousands of times a second.
                    tracing::trace!(%peer, "dropped a connection that showed no token, to make room for a new one");
                }
                () = stop.cancelled() => connection.as_mut().graceful_shutdown(),
            }
        });
    }
}

/// Lock a mutex whose holder cannot leave its data half-changed.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
