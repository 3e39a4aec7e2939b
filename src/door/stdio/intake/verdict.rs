//! What becomes of one line from the client ([`screen`]): passed on to
//! rmcp, ignored, or answered with JSON-RPC errors ([`Reply`]), with the
//! request's id when one can be read ([`top_level_id`]). The rules are
//! those the [`intake`](super) overview lists. Apart from the reader
//! because it is pure: one line in, one [`Verdict`] out.

use rmcp::RoleServer;
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Map, Value, json};

use crate::json_depth::nesting_depth;

/// Deepest nesting accepted. MCP messages nest a handful of levels; a
/// parameter can be a JSON value, which this leaves ample room for, while
/// staying below serde_json's recursion limit (128).
pub const MAX_DEPTH: usize = 64;

/// JSON-RPC 2.0's error codes.
const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;

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
    pub(super) fn new(id: Value, code: i64, message: impl Into<String>) -> Reply {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::door::stdio::intake) fn deep(levels: usize) -> String {
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
}
