//! The doors: how an MCP client reaches the [`Engine`](crate::pipeline::Engine).
//!
//! - [`stdio`]: the one-session server a desktop client starts as a child
//!   process, on stdin and stdout.
//! - [`http`]: Streamable HTTP at `/mcp`, for a team that runs one pgmcp
//!   next to the database.
//! - [`mcp`]: the MCP face both serve: tool schemas, prompts, resources and
//!   the translation between the wire and engine calls. No policy lives here.
//! - [`start_failure`]: the server that answers every call with why `serve`
//!   could not start.

pub(crate) mod boundary;
pub(crate) mod http;
pub(crate) mod mcp;
pub(crate) mod start_failure;
pub(crate) mod stdio;

use std::time::Duration;

/// How long shutdown waits for calls in flight to stop on the server.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// Resolves when the process is asked to stop: Ctrl-C, or SIGTERM (what
/// clients and service managers send) on Unix.
#[cfg(unix)]
pub(crate) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
    }
}

/// Resolves when the process is asked to stop. Windows has no SIGTERM: a
/// client that ends pgmcp either closes stdin (the session ends on its own)
/// or terminates the process, which no handler sees; Ctrl-C is what is left.
/// Should the handler fail to register, nothing stops the session but its end.
#[cfg(not(unix))]
pub(crate) async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}
