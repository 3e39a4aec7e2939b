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

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use rmcp::RoleServer;
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::PollSemaphore;

use crate::json_depth::nesting_depth;

/// Deepest nesting accepted. MCP messages nest a handful of levels; a
/// parameter can be a JSON value, which this leaves ample room for, while
/// staying below serde_json's recursion limit (128).
pub const MAX_DEPTH: usize = 64;

/// JSON-RPC 2.0's error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// What becomes of one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict<'a> {
    /// rmcp reads this text (the line without a byte order mark, blanks at
    /// either end or the newline).
    Pass(&'a str),
    /// Nothing to read and nothing to answer: a blank line, or a notification
    /// or response rmcp could not read.
    Ignore,
    /// rmcp never sees the line; these errors answer it, in order.
    Answer(Vec<Reply>),
}

/// One JSON-RPC error response.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The request's id, or `Value::Null` when none can be read.
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl Reply {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Reply {
        Reply {
            id,
            code,
            message: message.into(),
        }
    }

    /// The response as one line, newline included.
    pub fn line(&self) -> Vec<u8> {
        let reply = json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        });
        let mut bytes = reply.to_string().into_bytes();
        bytes.push(b'\n');
        bytes
    }
}

/// Judge one line (without its newline).
pub fn screen(line: &[u8]) -> Verdict<'_> {
    let Ok(text) = std::str::from_utf8(line) else {
        return parse_error("Parse error: the line is not valid UTF-8");
    };
    // rmcp strips one byte order mark; a line may carry more, and blanks.
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return Verdict::Ignore;
    }
    let depth = nesting_depth(text);
    if depth > MAX_DEPTH {
        return Verdict::Answer(vec![Reply::new(
            top_level_id(text).unwrap_or(Value::Null),
            INVALID_REQUEST,
            format!("the request nests {depth} levels deep; at most {MAX_DEPTH} are accepted"),
        )]);
    }
    // The common case costs one parse: what rmcp reads, it gets.
    if serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text).is_ok() {
        return Verdict::Pass(text);
    }
    match serde_json::from_str::<Value>(text) {
        Err(_) => parse_error("Parse error: the line is not valid JSON"),
        Ok(Value::Array(items)) => batch(&items),
        Ok(Value::Object(message)) => object(&message),
        Ok(_) => Verdict::Answer(vec![Reply::new(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a JSON-RPC message is an object",
        )]),
    }
}

fn parse_error(message: &str) -> Verdict<'static> {
    Verdict::Answer(vec![Reply::new(Value::Null, PARSE_ERROR, message)])
}

/// A batch: nothing in it runs. Each element with an id is answered with it.
fn batch(items: &[Value]) -> Verdict<'static> {
    const MESSAGE: &str = "Invalid Request: batches are not supported (MCP 2025-06-18 dropped them); \
                           send each message on its own line";
    let replies: Vec<Reply> = items
        .iter()
        .filter_map(|item| {
            let item = item.as_object()?;
            // A response in a batch is the client's; it is not answered.
            if !item.contains_key("method") && (item.contains_key("result") || item.contains_key("error")) {
                return None;
            }
            usable_id(item.get("id")?).map(|id| Reply::new(id, INVALID_REQUEST, MESSAGE))
        })
        .collect();
    if replies.is_empty() {
        let message = if items.is_empty() {
            "Invalid Request: an empty batch".to_owned()
        } else {
            MESSAGE.to_owned()
        };
        return Verdict::Answer(vec![Reply::new(Value::Null, INVALID_REQUEST, message)]);
    }
    Verdict::Answer(replies)
}

/// An id an answer can carry: a string or a number, echoed as sent.
fn usable_id(id: &Value) -> Option<Value> {
    (id.is_string() || id.is_number()).then(|| id.clone())
}

/// An object rmcp cannot read: what is wrong with it, in the order JSON-RPC
/// defines the members.
fn object(message: &Map<String, Value>) -> Verdict<'static> {
    let method = message.get("method");
    let is_response = method.is_none() && (message.contains_key("result") || message.contains_key("error"));
    let Some(id) = message.get("id") else {
        // A notification or a response: never answered.
        if method.is_some() || is_response {
            return Verdict::Ignore;
        }
        return Verdict::Answer(vec![Reply::new(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: neither a request (method and id), a notification (method) nor a response",
        )]);
    };
    if is_response {
        return Verdict::Ignore;
    }
    let answer = |id: Value, code: i64, text: String| Verdict::Answer(vec![Reply::new(id, code, text)]);
    let Some(id) = usable_id(id) else {
        return answer(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: the id must be a string or an integer".to_owned(),
        );
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return answer(
            id,
            INVALID_REQUEST,
            r#"Invalid Request: "jsonrpc" must be "2.0""#.to_owned(),
        );
    }
    let method = match method {
        None => {
            return answer(
                id,
                INVALID_REQUEST,
                "Invalid Request: the request has no method".to_owned(),
            );
        }
        Some(Value::String(method)) => method,
        Some(_) => {
            return answer(
                id,
                INVALID_REQUEST,
                "Invalid Request: the method must be a string".to_owned(),
            );
        }
    };
    if !id.is_string() && id.as_i64().is_none() {
        return answer(
            id,
            INVALID_REQUEST,
            "Invalid Request: a numeric id must be an integer that fits in 64 bits".to_owned(),
        );
    }
    match message.get("params") {
        Some(params) if !params.is_object() => {
            return answer(
                id,
                INVALID_REQUEST,
                "Invalid Request: params must be an object".to_owned(),
            );
        }
        Some(params) if params.get("_meta").is_some_and(|meta| !meta.is_object()) => {
            return answer(id, INVALID_REQUEST, "params._meta must be an object".to_owned());
        }
        _ => {}
    }
    // Anything else rmcp cannot read (a member given twice, say).
    answer(
        id,
        INVALID_REQUEST,
        format!(
            "Invalid Request: the request does not fit the MCP schema of method \"{}\"",
            cut(method, 100)
        ),
    )
}

/// At most `max` characters of `text`.
fn cut(text: &str, max: usize) -> &str {
    text.char_indices().nth(max).map_or(text, |(at, _)| &text[..at])
}

/// The value of the top-level `"id"` member of a JSON object, read without
/// parsing (or recursing into) anything else: a number or a string.
pub fn top_level_id(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    // Whether the string just read at depth 1 was a member name "id".
    let mut key_is_id = false;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                if depth == 1 {
                    let after = text[end + 1..].trim_start();
                    if after.starts_with(':') && &text[i..=end] == "\"id\"" {
                        key_is_id = true;
                    }
                }
                i = end + 1;
                continue;
            }
            b':' if depth == 1 && key_is_id => {
                let value = text[i + 1..].trim_start();
                let len = if value.starts_with('"') {
                    string_end(value.as_bytes(), 0)? + 1
                } else {
                    value
                        .find(|c: char| c == ',' || c == '}' || c.is_whitespace())
                        .unwrap_or(value.len())
                };
                return serde_json::from_str(&value[..len])
                    .ok()
                    .filter(|v: &Value| v.is_number() || v.is_string());
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote that closes the string opening at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut escaped = false;
    for (i, byte) in bytes.iter().enumerate().skip(start + 1) {
        match byte {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return Some(i),
            _ => {}
        }
    }
    None
}

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

/// A writer that several handles share, one whole line at a time: a handle
/// that starts a line keeps the writer until it has written the line's
/// newline, and the others wait. rmcp's messages and [`Screened`]'s answers
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

    fn with_inner<T>(&self, f: impl FnOnce(&mut W) -> T) -> T {
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

    fn deep(levels: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"query","arguments":{{"sql":"SELECT 1","x":{}1{}}}}}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        )
    }

    /// What a line becomes: "pass", "ignore", or the answers as
    /// (id, code) pairs.
    fn check(line: &[u8]) -> Value {
        match screen(line) {
            Verdict::Pass(_) => json!("pass"),
            Verdict::Ignore => json!("ignore"),
            Verdict::Answer(replies) => replies.iter().map(|r| json!([r.id, r.code])).collect(),
        }
    }

    #[test]
    fn every_malformed_line_is_answered_or_ignored_as_json_rpc_asks() {
        let bom = "\u{feff}";
        let cases: Vec<(Vec<u8>, Value)> = vec![
            // Lines rmcp reads.
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(), json!("pass")),
            (
                format!(r#"{bom}{{"jsonrpc":"2.0","id":1,"method":"ping"}}"#).into_bytes(),
                json!("pass"),
            ),
            (
                format!(r#"{bom}{bom}  {{"jsonrpc":"2.0","id":1,"method":"ping"}} "#).into_bytes(),
                json!("pass"),
            ),
            (deep(10).into_bytes(), json!("pass")),
            (
                br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{}}}"#.to_vec(),
                json!("pass"),
            ),
            (
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
                json!("pass"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"x","method":"no/such"}"#.to_vec(),
                json!("pass"),
            ),
            (b"   ".to_vec(), json!("ignore")),
            (b"".to_vec(), json!("ignore")),
            // Not JSON: a parse error with a null id.
            (b"{not json".to_vec(), json!([[null, -32700]])),
            (
                br#"{"jsonrpc":"2.0","id":5,"method":"ping""#.to_vec(),
                json!([[null, -32700]]),
            ),
            (b"\xff\xfe{\"id\":1}".to_vec(), json!([[null, -32700]])),
            (
                br#"{"jsonrpc":"2.0","id":5,"method":"ping"} x"#.to_vec(),
                json!([[null, -32700]]),
            ),
            // Batches: per element with an id, else once with null.
            (b"[]".to_vec(), json!([[null, -32600]])),
            (b"[1,2]".to_vec(), json!([[null, -32600]])),
            (
                br#"[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]"#
                    .to_vec(),
                json!([[6, -32600], ["b", -32600]]),
            ),
            (
                br#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"result":{}}]"#
                    .to_vec(),
                json!([[null, -32600]]),
            ),
            (
                br#"[{"jsonrpc":"2.0","id":{},"method":"ping"}, 4]"#.to_vec(),
                json!([[null, -32600]]),
            ),
            // Not an object.
            (b"42".to_vec(), json!([[null, -32600]])),
            (br#""x""#.to_vec(), json!([[null, -32600]])),
            (b"null".to_vec(), json!([[null, -32600]])),
            (b"true".to_vec(), json!([[null, -32600]])),
            // Objects that are not messages.
            (br#"{"jsonrpc":"2.0","id":7}"#.to_vec(), json!([[7, -32600]])),
            (br#"{"jsonrpc":"2.0","id":8,"method":5}"#.to_vec(), json!([[8, -32600]])),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#.to_vec(),
                json!([[null, -32600]]),
            ),
            (
                br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#.to_vec(),
                json!([[null, -32600]]),
            ),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.to_vec(),
                json!([[null, -32600]]),
            ),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
                json!([[null, -32600]]),
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
                json!([[1.5, -32600]]),
            ),
            (
                br#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#.to_vec(),
                json!([[2, -32600]]),
            ),
            (br#"{"id":2,"method":"ping"}"#.to_vec(), json!([[2, -32600]])),
            (
                br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}"#.to_vec(),
                json!([[3, -32600]]),
            ),
            (
                br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":5}}"#.to_vec(),
                json!([[9, -32600]]),
            ),
            // rmcp reads params that do not fit a method as a custom request
            // (answered "method not found" with the id).
            (
                br#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{}}"#.to_vec(),
                json!("pass"),
            ),
            (br#"{}"#.to_vec(), json!([[null, -32600]])),
            (
                br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_vec(),
                json!([[2, -32600]]),
            ),
            // Notifications and responses: never answered.
            (br#"{"jsonrpc":"2.0","method":5}"#.to_vec(), json!("ignore")),
            (
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#.to_vec(),
                json!("ignore"),
            ),
            (
                br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":1}}"#.to_vec(),
                json!("ignore"),
            ),
            (br#"{"jsonrpc":"2.0","result":{}}"#.to_vec(), json!("ignore")),
            (br#"{"jsonrpc":"2.0","id":{},"error":{}}"#.to_vec(), json!("ignore")),
            // Too deep: the id read without parsing.
            (deep(1000).into_bytes(), json!([[7, -32600]])),
            (
                format!(r#"{{"x":{}{}, "id": "a\"b"}}"#, "[".repeat(100), "]".repeat(100)).into_bytes(),
                json!([["a\"b", -32600]]),
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(
                check(&line),
                expected,
                "{}",
                String::from_utf8_lossy(&line[..line.len().min(80)])
            );
        }
    }

    #[test]
    fn answers_are_json_rpc_errors_with_the_id_or_null() {
        let Verdict::Answer(replies) = screen(b"{oops") else {
            panic!("not answered")
        };
        let line = replies[0].line();
        assert_eq!(line.last(), Some(&b'\n'));
        let reply: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: the line is not valid JSON"}})
        );
        let Verdict::Answer(replies) = screen(deep(1000).as_bytes()) else {
            panic!("not answered")
        };
        assert_eq!(
            replies[0].message,
            "the request nests 1003 levels deep; at most 64 are accepted"
        );
    }

    #[test]
    fn the_id_is_read_from_the_top_level_only() {
        let cases = [
            (r#"{"id": 7}"#, Some(json!(7))),
            (r#"{"a": {"id": 1}, "id": "x"}"#, Some(json!("x"))),
            (r#"{"a": "\"id\": 2", "id": -3.5}"#, Some(json!(-3.5))),
            (r#"{"a": {"id": 1}}"#, None),
            (r#"{"id": null}"#, None),
            (r#"{"id": [1]}"#, None),
            (r#"[{"id": 1}]"#, None),
        ];
        for (text, expected) in cases {
            assert_eq!(top_level_id(text), expected, "{text}");
        }
    }

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
