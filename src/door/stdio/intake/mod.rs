//! Lines from the MCP client, screened before rmcp parses them, and the
//! answers to those screened out. rmcp drops some malformed lines without a
//! word (text that is not JSON, JSON nested past serde's recursion limit,
//! lines over its length limit) and answers others with an error that has no
//! id (a batch, a bare value, a request whose params do not fit its method).
//! A client waiting for the answer to such a request would wait forever.
//!
//! So every line is judged here first ([`screen`], pure): a line rmcp can
//! read goes on to rmcp; any other gets its JSON-RPC 2.0 error answer written
//! here, with the request's id when one can be read and `null` when not, and
//! never reaches rmcp:
//!
//! - not UTF-8 or not JSON: `-32700` Parse error, id `null`;
//! - a batch (MCP 2025-06-18 dropped batching): one `-32600` error per
//!   element that carries an id, each on its own line with that id, since a
//!   client waits on ids, not on batches; one `-32600` with id `null` when no
//!   element has an id (an empty batch, `[1, 2]`). Nothing in a batch runs;
//! - a value that is not an object, an object that is neither a request, a
//!   notification nor a response, an `id` that is not a string or a number,
//!   a `method` that is not a string, `jsonrpc` other than `"2.0"`, params or
//!   `params._meta` that are not objects, nesting past [`MAX_DEPTH`], a line
//!   longer than the line limit: `-32600` (with the id when it can be read);
//! - a request rmcp cannot read for another reason (a member given twice):
//!   `-32600` with its id.
//!
//! A notification (no `id`, a `method`) and a response are never answered,
//! as JSON-RPC 2.0 asks, whatever is wrong with them: one rmcp cannot read is
//! dropped. A blank line is ignored.
//!
//! The answers go to stdout through [`WholeLines`], the writer rmcp writes
//! through too: it hands the pipe to one writer at a time, one whole line at
//! a time, so an answer never lands inside one of rmcp's messages.
//!
//! # Layout
//!
//! - `mod.rs`: [`Screened`], the reader rmcp reads stdin through: it cuts
//!   the input into lines, bounds an overlong one as it arrives, and writes
//!   the answers before reading on.
//! - `verdict.rs`: what becomes of one line ([`screen`], [`Verdict`]) and
//!   the error answers ([`Reply`]); pure, and tested line by line.
//!
//! [`WholeLines`] lives beside this module (`stdio/whole_lines.rs`): rmcp's
//! transport writes through it too.
//!
//! [`screen`]: verdict::screen
//! [`MAX_DEPTH`]: verdict::MAX_DEPTH
//! [`Verdict`]: verdict::Verdict
//! [`Reply`]: verdict::Reply
//! [`WholeLines`]: super::whole_lines::WholeLines

mod verdict;

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::whole_lines::WholeLines;
use verdict::{INVALID_REQUEST, Reply, Verdict, screen, top_level_id};

/// A reader whose lines have passed [`screen`]: rmcp reads only the lines
/// it can read, and the others are answered through `answers` before
/// anything after them is read. A line longer than `max_line` bytes (newline
/// included, as rmcp counts) is answered as too long and skipped as it
/// arrives, so memory stays bounded.
pub struct Screened<R, W> {
    inner: R,
    answers: WholeLines<W>,
    max_line: usize,
    /// The current line, not yet complete.
    line: Vec<u8>,
    /// Skipping the rest of an overlong line.
    skipping: bool,
    /// Bytes ready for the reader.
    ready: VecDeque<u8>,
    /// Answers not yet written.
    owed: VecDeque<u8>,
    /// Answers written but not flushed.
    unflushed: bool,
    eof: bool,
    /// What each read of `inner` fills: allocated (and zeroed) once, not at
    /// every poll.
    chunk: Box<[u8]>,
}

/// How much one read of the input takes at most.
const CHUNK: usize = 64 * 1024;

impl<R, W> Screened<R, W> {
    pub fn new(inner: R, answers: WholeLines<W>, max_line: usize) -> Screened<R, W> {
        Screened {
            inner,
            answers,
            max_line,
            line: Vec::new(),
            skipping: false,
            ready: VecDeque::new(),
            owed: VecDeque::new(),
            unflushed: false,
            eof: false,
            chunk: vec![0; CHUNK].into_boxed_slice(),
        }
    }

    /// Take in bytes read from the client.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (part, rest) = match newline {
                Some(at) => bytes.split_at(at + 1),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            if self.skipping {
                self.skipping = newline.is_none();
                continue;
            }
            self.line.extend_from_slice(part);
            if self.line.len() > self.max_line {
                // The id, when the part kept shows one, lets the client stop
                // waiting; the rest of the line is never looked at.
                let kept = match std::str::from_utf8(&self.line) {
                    Ok(text) => text,
                    Err(e) => std::str::from_utf8(&self.line[..e.valid_up_to()]).unwrap_or_default(),
                };
                let reply = Reply::new(
                    top_level_id(kept).unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    format!("Invalid Request: the message is longer than {} bytes", self.max_line),
                );
                self.owed.extend(reply.line());
                self.line.clear();
                self.skipping = newline.is_none();
            } else if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                self.judge(&line[..line.len() - 1], true);
            }
        }
    }

    /// Pass `line` on or answer it.
    fn judge(&mut self, line: &[u8], newline: bool) {
        match screen(line) {
            Verdict::Pass(text) => {
                self.ready.extend(text.as_bytes());
                if newline {
                    self.ready.push_back(b'\n');
                }
            }
            Verdict::Ignore => {}
            Verdict::Answer(replies) => {
                for reply in replies {
                    tracing::debug!(code = reply.code, message = %reply.message, "answering a malformed line");
                    self.owed.extend(reply.line());
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> AsyncRead for Screened<R, W> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            // Answers go out before anything after their line is read.
            if !this.owed.is_empty() {
                let (front, _) = this.owed.as_slices();
                match ready!(Pin::new(&mut this.answers).poll_write(cx, front)) {
                    Ok(n) if n > 0 => {
                        this.owed.drain(..n);
                        this.unflushed = true;
                        continue;
                    }
                    // stdout is gone, so is the client: nobody to answer.
                    written => {
                        tracing::debug!(?written, "cannot write an answer");
                        this.owed.clear();
                    }
                }
            }
            if this.unflushed {
                if let Err(e) = ready!(Pin::new(&mut this.answers).poll_flush(cx)) {
                    tracing::debug!(error = %e, "cannot flush an answer");
                }
                this.unflushed = false;
            }
            if !this.ready.is_empty() {
                let (front, _) = this.ready.as_slices();
                let n = front.len().min(buf.remaining());
                buf.put_slice(&front[..n]);
                this.ready.drain(..n);
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // A last line with no newline is judged like any other; what
                // passes goes without a newline, as it came.
                if !this.line.is_empty() {
                    let line = std::mem::take(&mut this.line);
                    this.judge(&line, false);
                    continue;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.chunk);
            let mut read = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let filled = read.filled().len();
            let outcome = match polled {
                Poll::Ready(Ok(())) if filled == 0 => {
                    this.eof = true;
                    None
                }
                Poll::Ready(Ok(())) => {
                    this.take_in(&chunk[..filled]);
                    None
                }
                Poll::Ready(Err(e)) => Some(Poll::Ready(Err(e))),
                Poll::Pending => Some(Poll::Pending),
            };
            this.chunk = chunk;
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::door::stdio::intake::verdict::tests::deep;

    #[tokio::test]
    async fn the_reader_passes_good_lines_and_answers_the_others() {
        use tokio::io::AsyncReadExt;
        let long = format!(r#"{{"id":12,"x":"{}"}}"#, "x".repeat(3000));
        let input = format!(
            "{}\n{}\n{long}\n\n{}\n{}",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            deep(200),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            "last"
        );
        let out = WholeLines::new(Vec::new());
        // Tiny reads, so lines arrive in pieces.
        let mut reader = Screened::new(tokio_test_reader(input.into_bytes()), out.handle(), 1000);
        let mut passed = String::new();
        reader.read_to_string(&mut passed).await.unwrap();
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
        drop(reader);
        let written = out.with_inner(|w| String::from_utf8(w.clone()).unwrap());
        let answers: Vec<Value> = written.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let ids: Vec<(Value, Value)> = answers
            .iter()
            .map(|a| (a["id"].clone(), a["error"]["code"].clone()))
            .collect();
        assert_eq!(
            ids,
            vec![
                (json!(7), json!(-32600)),
                (json!(12), json!(-32600)),
                (json!(null), json!(-32700)),
            ],
            "{written}"
        );
        assert!(
            answers[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than 1000 bytes")
        );
    }

    /// A reader that hands out 7 bytes at a time.
    fn tokio_test_reader(bytes: Vec<u8>) -> impl AsyncRead + Unpin {
        struct Slow(std::io::Cursor<Vec<u8>>);
        impl AsyncRead for Slow {
            fn poll_read(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<std::io::Result<()>> {
                let mut chunk = [0u8; 7];
                let n = std::io::Read::read(&mut self.0, &mut chunk)?;
                buf.put_slice(&chunk[..n.min(buf.remaining())]);
                Poll::Ready(Ok(()))
            }
        }
        Slow(std::io::Cursor::new(bytes))
    }
}
