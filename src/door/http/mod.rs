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

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::door::mcp::{Answers, Server};
use crate::pipeline::Engine;

/// Where MCP is served.
pub const MCP_PATH: &str = "/mcp";

/// Most connections open at once that have shown a token (on a server
/// without tokens: that have sent an MCP request).
const MAX_CONNECTIONS: usize = 256;

/// Most connections open at once that have not: anyone who can reach the
/// port can open these, so they have slots of their own, and when all are
/// taken the oldest is dropped for the newcomer (see [`Door`]).
const MAX_STRANGERS: usize = 64;

/// Connections the kernel completes and holds for pgmcp to accept (the
/// system may cap it lower: `net.core.somaxconn`). `TcpListener::bind`'s
/// 128 overflows in a burst of connections: the overflow's `SYN`s are
/// dropped, and each such client waits a second to retry.
const BACKLOG: u32 = 1024;

/// The longest a request waits for its body's share of the body budget
/// before it is answered `503` with `Retry-After`.
const BODY_WAIT: Duration = Duration::from_secs(30);

/// The session id a request naming a session that is not its caller's is
/// passed on with: no session has it (rmcp's are UUIDs), so rmcp answers
/// exactly as for any unknown session.
const NO_SUCH_SESSION: &str = "pgmcp-no-such-session";

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

/// Which of `tokens` `presented` is (the first, if listed twice), compared
/// in constant time: how long the answer takes says nothing of how much of
/// a token matched, nor of which one did (every token is compared whole,
/// and the index chosen without a branch).
fn token_index(tokens: &[String], presented: &[u8]) -> Option<usize> {
    let mut found = usize::MAX;
    for (index, token) in tokens.iter().enumerate().rev() {
        let token = token.as_bytes();
        let mut differ = u8::from(token.len() != presented.len());
        for (i, byte) in token.iter().enumerate() {
            differ |= byte ^ presented.get(i).copied().unwrap_or(0);
        }
        let hit = usize::from(differ == 0).wrapping_neg();
        found = (index & hit) | (found & !hit);
    }
    (found != usize::MAX).then_some(found)
}

/// Who sent a request: the index of the token it carried, or `None` on a
/// server without tokens (where everyone who can connect is one caller).
/// It rides in the request's extensions, so the session manager sees who
/// opened a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Caller(Option<usize>);

/// The bearer token an `Authorization` header carries.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest.trim_ascii())
}

type Body = UnsyncBoxBody<Bytes, std::convert::Infallible>;

/// rmcp's answer to a request naming a session it does not have, the same
/// bytes: a caller must not tell "not yours" from "no such session".
fn no_such_session() -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed_unsync());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

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
pub async fn serve(engine: Arc<Engine>, listen: Listen, stop: CancellationToken) -> Result<(), ListenError> {
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
        let engine = engine.clone();
        StreamableHttpService::new(
            move || Ok(Server::new(engine.clone(), Answers::Built)),
            sessions.clone(),
            config,
        )
    };
    let front = Arc::new(Front {
        engine,
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

/// The connection slots. A connection is a stranger until one of its
/// requests shows a valid token (on a server without tokens: until it
/// sends an MCP request), then a member.
///
/// Anyone who can reach the port can open connections and send nothing,
/// and a slot held that way is one a token holder cannot have. So
/// strangers have [`MAX_STRANGERS`] slots of their own, and when a new
/// connection finds them all taken, the oldest stranger that pgmcp is
/// waiting on (its last read found nothing, and no request of its is
/// being answered) is dropped to make room. A real client sends its
/// request as soon as it has connected and becomes a member as soon as its
/// headers are read; idle connections only ever age toward the front of
/// the line. A connection pgmcp has not read from yet (many clients
/// connecting at once) is never dropped: the newcomer waits for a slot
/// instead. What remains: a client whose request arrives after pgmcp's
/// first read found nothing, and is still unread when 64 newer strangers
/// have come, can be dropped; only a flood reconnecting thousands of
/// times a second comes near that.
/// Members have [`MAX_CONNECTIONS`] slots, which only token holders can
/// take, and are never dropped for room. (A short header timeout alone
/// would not do: a flood that reconnects as fast as it is cut off keeps
/// every slot taken, and real clients would wait that long.)
struct Door {
    strangers: Arc<Semaphore>,
    /// Strangers, oldest first.
    waiting: Mutex<BTreeMap<u64, Arc<Mark>>>,
    /// Told when a stranger starts waiting on its client.
    idle: tokio::sync::Notify,
    members: Arc<Semaphore>,
    next: AtomicU64,
}

/// What the door knows of a stranger.
struct Mark {
    /// Cancelled when the connection is dropped to make room.
    dropped: CancellationToken,
    /// Whether pgmcp's last read from it found nothing to read.
    idle: AtomicBool,
    /// Its requests being answered (none once idle, unless a body is
    /// still to come): a stranger answering one is not dropped.
    busy: AtomicUsize,
    /// Its stranger's slot. Whoever drops it for room takes the slot
    /// over at once, rather than wait for its task to end.
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Door {
    /// A stranger's slot for a connection just accepted: a free one, or an
    /// idle stranger's. `None` once the door is closed.
    async fn admit(self: Arc<Self>) -> Option<Conn> {
        let slot = loop {
            if let Ok(slot) = self.strangers.clone().try_acquire_owned() {
                break slot;
            }
            let oldest_idle = {
                let mut waiting = lock(&self.waiting);
                let id = waiting
                    .iter()
                    .find(|(_, mark)| mark.idle.load(Ordering::Acquire) && mark.busy.load(Ordering::Acquire) == 0)
                    .map(|(id, _)| *id);
                id.and_then(|id| waiting.remove(&id))
            };
            if let Some(mark) = oldest_idle {
                // Its task ends at once; its slot is the newcomer's.
                mark.dropped.cancel();
                match lock(&mark.slot).take() {
                    Some(slot) => break slot,
                    None => continue,
                }
            }
            // No stranger is idle yet: wait for a slot, or for one to be.
            tokio::select! {
                slot = self.strangers.clone().acquire_owned() => break slot.ok()?,
                () = self.idle.notified() => {}
            }
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mark = Arc::new(Mark {
            dropped: CancellationToken::new(),
            idle: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            slot: Mutex::new(Some(slot)),
        });
        lock(&self.waiting).insert(id, mark.clone());
        Some(Conn {
            id,
            door: self,
            mark,
            member: tokio::sync::Mutex::new(None),
        })
    }
}

/// Lock a mutex whose holder cannot leave its data half-changed.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One client connection and the slot it holds: a stranger's (in its
/// mark) until it has a member's.
struct Conn {
    id: u64,
    door: Arc<Door>,
    mark: Arc<Mark>,
    member: tokio::sync::Mutex<Option<OwnedSemaphorePermit>>,
}

impl Conn {
    /// Make this connection a member, once one of its requests showed a
    /// token. `false` if it was dropped for room first.
    async fn admit_member(&self) -> bool {
        let mut member = self.member.lock().await;
        if member.is_some() {
            return true;
        }
        // No longer one that may be dropped for room; it keeps its
        // stranger's slot until it has a member's.
        if lock(&self.door.waiting).remove(&self.id).is_none() {
            return false;
        }
        match self.door.members.clone().acquire_owned().await {
            Ok(slot) => {
                *member = Some(slot);
                drop(lock(&self.mark.slot).take());
                true
            }
            Err(_) => false,
        }
    }
}

/// A request being answered on a connection.
struct Busy(Arc<Conn>);

impl Busy {
    fn new(conn: Arc<Conn>) -> Busy {
        conn.mark.busy.fetch_add(1, Ordering::AcqRel);
        Busy(conn)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.mark.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        lock(&self.door.waiting).remove(&self.id);
    }
}

/// A client's socket that tells the door whether pgmcp is waiting on the
/// client: its last read found nothing to read.
struct Watched {
    stream: tokio::net::TcpStream,
    conn: Arc<Conn>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let read = std::pin::Pin::new(&mut self.stream).poll_read(cx, buf);
        let idle = read.is_pending();
        if self.conn.mark.idle.swap(idle, Ordering::AcqRel) != idle && idle {
            self.conn.door.idle.notify_one();
        }
        read
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// The memory budget request bodies share. A `POST` takes its declared
/// length from the budget before its body is read (all of it at once, so
/// two half-read bodies can never wait on each other), or the longest
/// body allowed when it declares none and the rest back once it is read.
/// The share rides in the request's extensions, which rmcp keeps with the
/// parsed message, so it is held until the message is dropped: the
/// body's bytes, rmcp's copy and the parsed message are all counted. A
/// request whose share is not free within [`BODY_WAIT`] is answered `503`
/// with `Retry-After`; meanwhile its body waits unread in the socket.
struct Bodies {
    budget: Arc<Semaphore>,
    max_body: usize,
    /// How long a request waits for its share: [`BODY_WAIT`].
    wait: Duration,
}

/// A request body's share of the budget, held as long as the request is.
#[derive(Clone)]
struct BodyShare(#[allow(dead_code, reason = "held for its drop")] Arc<OwnedSemaphorePermit>);

impl Bodies {
    async fn read<B>(&self, request: Request<B>) -> Result<Request<Full<Bytes>>, Response<Body>>
    where
        B: hyper::body::Body<Data = Bytes>,
        B::Error: std::fmt::Display,
    {
        let too_large = || {
            let mut response = Response::new(
                Full::new(Bytes::from(format!(
                    "Payload Too Large: request body exceeds {} bytes",
                    self.max_body
                )))
                .boxed_unsync(),
            );
            *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            response
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let reserve = match declared {
            Some(n) if n > self.max_body as u64 => return Err(too_large()),
            Some(n) => n as usize,
            None => self.max_body,
        };
        let wanted = u32::try_from(reserve).map_err(|_| too_large())?;
        let mut share = match tokio::time::timeout(self.wait, self.budget.clone().acquire_many_owned(wanted)).await {
            Ok(Ok(share)) => share,
            _ => {
                let mut response = answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    r#"{"error":"busy: the memory for request bodies is in use, try again shortly"}"#.to_owned(),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return Err(response);
            }
        };
        let (parts, body) = request.into_parts();
        let mut body = std::pin::pin!(body);
        let mut collected = bytes::BytesMut::with_capacity(declared.map_or(0, |_| reserve));
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                let mut response =
                    Response::new(Full::new(Bytes::from(format!("Bad Request: reading the body: {e}"))).boxed_unsync());
                *response.status_mut() = StatusCode::BAD_REQUEST;
                response
            })?;
            if let Ok(data) = frame.into_data() {
                if data.len() > reserve - collected.len() {
                    return Err(too_large());
                }
                collected.extend_from_slice(&data);
            }
        }
        // A body without a declared length gives back what it did not use.
        drop(share.split(reserve - collected.len()));
        let mut request = Request::from_parts(parts, Full::new(collected.freeze()));
        request.extensions_mut().insert(BodyShare(Arc::new(share)));
        Ok(request)
    }
}

/// What stands in front of the MCP service.
struct Front {
    engine: Arc<Engine>,
    tokens: Vec<String>,
    health: Option<String>,
    mcp: StreamableHttpService<Server, Sessions>,
    sessions: Arc<Sessions>,
    bodies: Bodies,
    /// The last readiness check: when it ran, and the failure's label.
    readiness: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Front {
    async fn route(&self, conn: &Conn, mut request: Request<Incoming>) -> Response<Body> {
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
            return answer(
                StatusCode::SERVICE_UNAVAILABLE,
                r#"{"error":"the connection was closed to make room"}"#.to_owned(),
            );
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

/// The header naming a 2025 session.
const SESSION_HEADER: &str = "mcp-session-id";

/// rmcp's sessions, at most `max` open at once: a client past it gets an
/// error rather than memory growing with every `initialize`. An idle
/// session ends after 5 minutes (rmcp's default), which frees its place.
///
/// Each session's owner, the [`Caller`] whose `initialize` opened it, is
/// recorded when rmcp initializes it, before its id is sent to anyone, and
/// forgotten when it closes. A session with no owner recorded belongs to
/// no one.
struct Sessions {
    open: LocalSessionManager,
    max: usize,
    owners: Mutex<HashMap<String, Caller>>,
}

impl Sessions {
    fn owned_by(&self, id: &str, caller: Caller) -> bool {
        lock(&self.owners).get(id) == Some(&caller)
    }
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
            assert_eq!(token_index(&tokens, presented).is_some(), matches, "{presented:?}");
        }
        assert_eq!(token_index(&[], b"anything"), None);
        // Which token: the first, if one is listed twice.
        let tokens = ["a1", "b2", "a1"].map(str::to_owned);
        assert_eq!(token_index(&tokens, b"a1"), Some(0));
        assert_eq!(token_index(&tokens, b"b2"), Some(1));
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

    fn bodies(budget: usize, max_body: usize) -> Bodies {
        Bodies {
            budget: Arc::new(Semaphore::new(budget)),
            max_body,
            wait: Duration::from_millis(20),
        }
    }

    /// A body that arrives three bytes a frame.
    struct Pieces(std::collections::VecDeque<Bytes>);

    impl hyper::body::Body for Pieces {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|data| Ok(hyper::body::Frame::data(data))))
        }
    }

    fn post(body: &'static [u8], declared: bool) -> Request<Pieces> {
        let mut request = Request::new(Pieces(body.chunks(3).map(Bytes::from_static).collect()));
        if declared {
            request
                .headers_mut()
                .insert(header::CONTENT_LENGTH, body.len().to_string().parse().unwrap());
        }
        request
    }

    /// A body's share is its length, declared or not, held as long as the
    /// request is; one over the longest size is refused before any wait;
    /// one whose share is not free in time is told to come back.
    #[tokio::test]
    async fn bodies_share_the_budget() {
        let bodies = bodies(100, 40);
        for declared in [true, false] {
            let read = bodies.read(post(b"0123456789", declared)).await.unwrap();
            assert_eq!(bodies.budget.available_permits(), 90, "declared: {declared}");
            assert!(read.extensions().get::<BodyShare>().is_some());
            let (_, body) = read.into_parts();
            assert_eq!(body.collect().await.unwrap().to_bytes(), &b"0123456789"[..]);
            assert_eq!(bodies.budget.available_permits(), 100, "declared: {declared}");
        }

        let over: &[u8] = &[b' '; 41];
        for declared in [true, false] {
            let refused = bodies.read(post(over, declared)).await.unwrap_err();
            assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE, "declared: {declared}");
            assert_eq!(bodies.budget.available_permits(), 100, "declared: {declared}");
        }

        let held = bodies.budget.clone().acquire_many_owned(95).await.unwrap();
        let busy = bodies.read(post(b"0123456789", true)).await.unwrap_err();
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers().get(header::RETRY_AFTER).unwrap(), "1");
        // A small one still fits beside what is held.
        assert!(bodies.read(post(b"01234", true)).await.is_ok());
        drop(held);
        assert_eq!(bodies.budget.available_permits(), 100);
    }

    fn door() -> Arc<Door> {
        Arc::new(Door {
            strangers: Arc::new(Semaphore::new(MAX_STRANGERS)),
            waiting: Mutex::new(BTreeMap::new()),
            idle: tokio::sync::Notify::new(),
            members: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            next: AtomicU64::new(0),
        })
    }

    fn set_idle(door: &Door, conn: &Conn) {
        conn.mark.idle.store(true, Ordering::Release);
        door.idle.notify_one();
    }

    /// With every stranger's slot taken, a newcomer gets the slot of the
    /// oldest stranger pgmcp waits on; never one whose bytes are unread,
    /// nor a member's.
    #[tokio::test]
    async fn the_oldest_idle_stranger_makes_room() {
        let door = door();
        let mut conns = Vec::new();
        for _ in 0..MAX_STRANGERS {
            conns.push(Some(door.clone().admit().await.unwrap()));
        }
        // conns[0] shows a token: a member, never dropped for room.
        let first = conns[0].as_ref().unwrap();
        assert!(first.admit_member().await);
        set_idle(&door, first);
        // Its stranger's slot is free again; another takes it.
        conns.push(Some(door.clone().admit().await.unwrap()));
        let newcomer = tokio::spawn(door.clone().admit());
        // No stranger is idle: the newcomer waits.
        tokio::task::yield_now().await;
        assert!(!newcomer.is_finished());
        // Two go idle; the older one (5) is dropped for the newcomer.
        for i in [7, 5] {
            set_idle(&door, conns[i].as_ref().unwrap());
        }
        conns[5].as_ref().unwrap().mark.dropped.cancelled().await;
        assert!(!conns[7].as_ref().unwrap().mark.dropped.is_cancelled());
        assert!(!conns[0].as_ref().unwrap().mark.dropped.is_cancelled());
        let admitted = newcomer.await.unwrap().unwrap();
        assert_eq!(admitted.id, MAX_STRANGERS as u64 + 1);
        // A dropped stranger cannot become a member afterwards.
        set_idle(&door, conns[7].as_ref().unwrap());
        let another = tokio::spawn(door.clone().admit());
        conns[7].as_ref().unwrap().mark.dropped.cancelled().await;
        assert!(!conns[7].as_ref().unwrap().admit_member().await);
        let another = another.await.unwrap();
        assert!(another.is_some());
        // Never more strangers than slots, however many were dropped.
        assert_eq!(door.strangers.available_permits(), 0);
        drop(conns);
        assert_eq!(door.strangers.available_permits(), MAX_STRANGERS - 2);
    }

    #[test]
    fn token_files_skip_blanks_and_comments() {
        assert_eq!(tokens_in("# team tokens\n\n  a1 \nb2\n"), ["a1", "b2"]);
    }
}
