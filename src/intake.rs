//! Lines from the MCP client, screened before rmcp parses them. rmcp drops
//! some malformed lines without a word: JSON nested past serde's recursion
//! limit, and text that is not JSON. A client waiting for the answer to such a
//! request would wait forever. [`Screened`] rewrites each such line into one
//! rmcp answers with an error: a `pgmcp/rejected` request with the same id
//! (answered by [`crate::mcp`] with the code and reason), or, when no id can
//! be read, a message rmcp itself answers with "Invalid request".
//!
//! The depth is measured without recursing ([`crate::value::nesting_depth`]),
//! and the id is read from the top level of the text without parsing the
//! rest. [`screen`] is pure; [`Screened`] only moves bytes.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

use crate::value::nesting_depth;

/// The method of a rewritten request; [`crate::mcp`] answers it with the
/// error its params carry.
pub const REJECTED: &str = "pgmcp/rejected";

/// Deepest nesting accepted. MCP messages nest a handful of levels; a
/// parameter can be a JSON value, which this leaves ample room for, while
/// staying below serde_json's recursion limit (128).
pub const MAX_DEPTH: usize = 64;

/// JSON-RPC's "Invalid Request" code.
const INVALID_REQUEST: i64 = -32600;

/// What rmcp should read instead of `line`, or `None` to pass it as is.
pub fn screen(line: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(line).ok()?;
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return None;
    }
    let depth = nesting_depth(text);
    if depth > MAX_DEPTH {
        return Some(rejected(
            top_level_id(text),
            INVALID_REQUEST,
            &format!("the request nests {depth} levels deep; at most {MAX_DEPTH} are accepted"),
        ));
    }
    // Not JSON: rmcp ignores it. With no id to answer, have rmcp answer
    // "Invalid request" with a null id, as JSON-RPC asks for a parse error.
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        return Some(rejected(None, -32700, "the line is not valid JSON"));
    }
    // `_meta` must be an object; rmcp would answer without the id.
    if text.contains("\"_meta\"")
        && let Ok(message) = serde_json::from_str::<Value>(text)
        && let Some(meta) = message.get("params").and_then(|p| p.get("_meta"))
        && !meta.is_object()
    {
        return Some(rejected(
            message.get("id").cloned(),
            INVALID_REQUEST,
            "params._meta must be an object",
        ));
    }
    None
}

/// The line that makes rmcp answer with `code` and `message` for request `id`.
fn rejected(id: Option<Value>, code: i64, message: &str) -> Vec<u8> {
    let line = match id {
        Some(id @ (Value::Number(_) | Value::String(_))) => json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": REJECTED,
            "params": {"code": code, "message": message},
        }),
        // A message rmcp cannot read as any JSON-RPC message, which it
        // answers with "Invalid request" and a null id.
        _ => json!({"jsonrpc": "2.0", "id": null, "method": REJECTED, "params": {"message": message}}),
    };
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
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

/// A reader whose complete lines have passed [`screen`]. A line longer than
/// `max_line` is passed through unscreened as it arrives (rmcp discards it),
/// so memory stays bounded.
pub struct Screened<R> {
    inner: R,
    max_line: usize,
    /// The current line, not yet complete.
    line: Vec<u8>,
    /// Passing the rest of an overlong line through.
    passing: bool,
    /// Bytes ready for the reader.
    ready: VecDeque<u8>,
    eof: bool,
}

impl<R> Screened<R> {
    pub fn new(inner: R, max_line: usize) -> Screened<R> {
        Screened {
            inner,
            max_line,
            line: Vec::new(),
            passing: false,
            ready: VecDeque::new(),
            eof: false,
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
            if self.passing {
                self.ready.extend(part);
                self.passing = newline.is_none();
                continue;
            }
            self.line.extend_from_slice(part);
            if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                match screen(&line[..line.len() - 1]) {
                    Some(replacement) => self.ready.extend(replacement),
                    None => self.ready.extend(line),
                }
            } else if self.line.len() > self.max_line {
                self.ready.extend(self.line.drain(..));
                self.passing = true;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Screened<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if !this.ready.is_empty() {
                let (front, _) = this.ready.as_slices();
                let n = front.len().min(buf.remaining());
                buf.put_slice(&front[..n]);
                this.ready.drain(..n);
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // A last line with no newline goes as it is.
                if !this.line.is_empty() {
                    this.ready.extend(this.line.drain(..));
                    continue;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 64 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) if read.filled().is_empty() => this.eof = true,
                Poll::Ready(Ok(())) => {
                    let filled = read.filled().to_vec();
                    this.take_in(&filled);
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
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

    fn screened(line: &str) -> Option<Value> {
        screen(line.as_bytes()).map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn lines_that_rmcp_would_drop_are_rewritten() {
        // (line, expected rewrite or None)
        let cases: Vec<(String, Option<Value>)> = vec![
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(), None),
            (deep(10), None),
            (
                deep(1000),
                Some(
                    json!({"jsonrpc": "2.0", "id": 7, "method": REJECTED, "params": {"code": -32600,
                    "message": "the request nests 1003 levels deep; at most 64 are accepted"}}),
                ),
            ),
            (
                format!(r#"{{"x":{}{}, "id": "a\"b"}}"#, "[".repeat(100), "]".repeat(100)),
                Some(
                    json!({"jsonrpc": "2.0", "id": "a\"b", "method": REJECTED, "params": {"code": -32600,
                    "message": "the request nests 101 levels deep; at most 64 are accepted"}}),
                ),
            ),
            (
                "{\"id\": 3, \"method\": \"ping\"".into(),
                Some(json!({"jsonrpc": "2.0", "id": null, "method": REJECTED,
                    "params": {"message": "the line is not valid JSON"}})),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":5}}"#.into(),
                Some(
                    json!({"jsonrpc": "2.0", "id": 9, "method": REJECTED, "params": {"code": -32600,
                    "message": "params._meta must be an object"}}),
                ),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{}}}"#.into(),
                None,
            ),
            ("   ".into(), None),
        ];
        for (line, expected) in cases {
            assert_eq!(screened(&line), expected, "{}", &line[..line.len().min(80)]);
        }
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
    async fn the_reader_screens_whole_lines_and_passes_long_ones() {
        use tokio::io::AsyncReadExt;
        let input = format!(
            "{}\n{}\n{}\nlast",
            r#"{"id":1,"method":"ping"}"#,
            deep(200),
            "x".repeat(3000)
        );
        // Tiny reads, so lines arrive in pieces.
        let inner = tokio_test_reader(input.as_bytes().to_vec());
        let mut reader = Screened::new(inner, 1000);
        let mut out = String::new();
        reader.read_to_string(&mut out).await.unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"id":1,"method":"ping"}"#);
        assert!(
            lines[1].contains(REJECTED) && lines[1].contains("\"id\":7"),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "x".repeat(3000), "an overlong line passes as it is");
        assert_eq!(lines[3], "last");
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
