//! stdout shared one whole line at a time ([`WholeLines`]): rmcp's
//! messages, pgmcp's spliced `query` answers and the intake's error answers
//! all go through it, so none lands inside another. Apart from the intake
//! because the transport writes through it too.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use tokio::io::AsyncWrite;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::PollSemaphore;

/// A writer that several handles share, one whole line at a time: a handle
/// that starts a line keeps the writer until it has written the line's
/// newline, and the others wait. rmcp's messages and [`Screened`](super::intake::Screened)'s answers
/// go to stdout through it, so neither lands inside the other.
///
/// Every use of the inner writer (writes and flushes) is under the turn, so
/// only one task ever waits on the pipe: a pipe remembers one waiting task.
pub struct WholeLines<W> {
    inner: Arc<Mutex<W>>,
    turns: PollSemaphore,
    /// Held from the first byte of a line to its newline, or while waiting
    /// on the pipe.
    turn: Option<OwnedSemaphorePermit>,
    /// Part of a line written: the turn is kept.
    mid_line: bool,
}

impl<W> WholeLines<W> {
    pub fn new(inner: W) -> WholeLines<W> {
        WholeLines {
            inner: Arc::new(Mutex::new(inner)),
            turns: PollSemaphore::new(Arc::new(Semaphore::new(1))),
            turn: None,
            mid_line: false,
        }
    }

    /// Another handle on the same writer.
    pub fn handle(&self) -> WholeLines<W> {
        WholeLines {
            inner: self.inner.clone(),
            turns: self.turns.clone(),
            turn: None,
            mid_line: false,
        }
    }

    fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.turn.is_none() {
            match ready!(self.turns.poll_acquire(cx)) {
                Some(permit) => self.turn = Some(permit),
                None => return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into())),
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Give the turn back unless a line is half written.
    fn done(&mut self) {
        if !self.mid_line {
            self.turn = None;
        }
    }

    pub(super) fn with_inner<T>(&self, f: impl FnOnce(&mut W) -> T) -> T {
        // The lock is only ever held inside one poll, never across one, so
        // a poisoned lock only means a panic elsewhere: the writer is fine.
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut inner)
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for WholeLines<W> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        ready!(self.poll_turn(cx))?;
        let written = ready!(self.with_inner(|w| Pin::new(w).poll_write(cx, buf)));
        if let Ok(n) = written
            && n > 0
        {
            self.mid_line = buf[n - 1] != b'\n';
        }
        self.done();
        Poll::Ready(written)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.poll_turn(cx))?;
        let flushed = ready!(self.with_inner(|w| Pin::new(w).poll_flush(cx)));
        self.done();
        Poll::Ready(flushed)
    }

    /// Others still write through the writer: shutting down is flushing.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn handles_never_interleave_inside_a_line() {
        use tokio::io::AsyncWriteExt;
        let out = WholeLines::new(Vec::new());
        let (mut a, mut b) = (out.handle(), out.handle());
        // `a` starts a line; `b` must wait for its newline.
        a.write_all(b"{\"a\":").await.unwrap();
        let waiting = tokio::spawn(async move {
            b.write_all(b"{\"b\":1}\n").await.unwrap();
            b.flush().await.unwrap();
        });
        tokio::task::yield_now().await;
        a.write_all(b"1}\n").await.unwrap();
        a.flush().await.unwrap();
        waiting.await.unwrap();
        let written = out.with_inner(|w| String::from_utf8(w.clone()).unwrap());
        assert_eq!(written, "{\"a\":1}\n{\"b\":1}\n");
    }
}
