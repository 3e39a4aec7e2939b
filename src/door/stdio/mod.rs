//! `pgmcp serve` over stdio: one session, the one a desktop client starts
//! pgmcp for, on the process's stdin and stdout.
//!
//! - [`channel`]: stdin and stdout taken for the protocol alone.
//! - [`intake`]: lines screened before rmcp parses them, and the answers
//!   to those screened out.
//! - [`whole_lines`]: stdout shared by rmcp, the transport and the intake,
//!   one whole line at a time.
//! - [`transport`]: rmcp's line transport, with `query` answers written here.

pub(crate) mod channel;
pub(crate) mod intake;
pub(crate) mod transport;
pub(crate) mod whole_lines;

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::door::start_failure::StartFailure;
use crate::door::{SHUTDOWN_GRACE, shutdown_signal};
use crate::service::Service;

/// Serve `service` over stdin and stdout until the client closes stdin or a
/// signal comes, then stop the calls in flight within the grace period.
/// Lines longer than `max_line` are answered with an error and skipped.
/// Fails only when stdin and stdout cannot be taken for the protocol.
pub(crate) async fn serve(engine: Arc<Service>, max_line: usize) -> std::io::Result<()> {
    // The protocol gets stdin and stdout to itself: nothing else in the
    // process (an engine, a library) can read a request or write into an
    // answer.
    let (stdin, stdout) = channel::take()?;
    // The moment stdin closes, stop the work in flight: the client is gone, and
    // a query left running would hold a backend for nothing.
    let stdin_closed = CancellationToken::new();
    // Lines rmcp cannot read are answered by intake itself (parse errors,
    // batches, ...), through the same stdout as rmcp, a whole line at a time.
    let stdout = whole_lines::WholeLines::new(stdout);
    let stdin = EofSignal {
        inner: intake::Screened::new(stdin, stdout.handle(), max_line),
        on_eof: stdin_closed.clone(),
    };
    let watcher = {
        let engine = engine.clone();
        let stdin_closed = stdin_closed.clone();
        tokio::spawn(async move {
            stdin_closed.cancelled().await;
            engine.shutdown(SHUTDOWN_GRACE).await;
        })
    };
    // Longer lines never reach rmcp: intake answers them and skips them.
    // Query answers are written by pgmcp's transport, their rows spliced in
    // as encoded (see `transport`); everything else by rmcp's.
    let answers = stdout.handle();
    let transport = AsyncRwTransport::<RoleServer, _, _>::new(stdin, stdout).with_max_line_length(max_line);
    let transport = transport::Splicing::new(transport, answers);
    let service = match crate::door::mcp::Server::new(engine.clone(), crate::door::mcp::Answers::Spliced)
        .serve(transport)
        .await
    {
        Ok(service) => service,
        Err(e) => {
            // stdin closed before the handshake: nothing to serve, not a failure.
            tracing::info!(error = %e, "session ended before initialization");
            engine.shutdown(SHUTDOWN_GRACE).await;
            return Ok(());
        }
    };
    let cancel = service.cancellation_token();
    let signalled = shutdown_signal();
    tokio::select! {
        quit = service.waiting() => {
            tracing::info!(reason = ?quit.ok(), "session ended");
        }
        _ = signalled => {
            tracing::info!("signal received, shutting down");
            // Stop the queries and hooks first, so their calls end with an
            // answer, then the session.
            engine.shutdown(SHUTDOWN_GRACE).await;
            cancel.cancel();
        }
    }
    watcher.abort();
    engine.shutdown(SHUTDOWN_GRACE).await;
    Ok(())
}

/// `pgmcp serve` over stdio that could not start: the handshake, the tools
/// and the reason as every call's answer (`start_failure::Server`), until
/// the client closes stdin or a signal comes.
pub(crate) async fn serve_start_failure(failure: StartFailure) -> std::io::Result<()> {
    tracing::info!("serving MCP on stdio only to say why pgmcp could not start");
    let max_line = Config::builtin().longest_message();
    let (stdin, stdout) = channel::take()?;
    // Lines rmcp cannot read are answered as in a session that started.
    let stdout = whole_lines::WholeLines::new(stdout);
    let stdin = intake::Screened::new(stdin, stdout.handle(), max_line);
    let transport = AsyncRwTransport::<RoleServer, _, _>::new(stdin, stdout).with_max_line_length(max_line);
    match crate::door::start_failure::Server::new(failure).serve(transport).await {
        Ok(service) => {
            let cancel = service.cancellation_token();
            tokio::select! {
                quit = service.waiting() => tracing::info!(reason = ?quit.ok(), "session ended"),
                () = shutdown_signal() => {
                    tracing::info!("signal received, shutting down");
                    cancel.cancel();
                }
            }
        }
        Err(e) => tracing::info!(error = %e, "session ended before initialization"),
    }
    Ok(())
}

/// stdin that cancels a token when it reaches end of file.
struct EofSignal<R> {
    inner: R,
    on_eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll
            && buf.filled().len() == before
            && buf.remaining() > 0
        {
            self.on_eof.cancel();
        }
        poll
    }
}
