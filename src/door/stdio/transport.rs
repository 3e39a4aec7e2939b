//! The MCP transport over the stdio channel: rmcp's line transport, except
//! that a `query` answer is written here, its rows encoded once.
//!
//! A `query` result carries its answer twice: as text content, for clients
//! that read only text, and as structured content, the same JSON unescaped.
//! rmcp holds structured content as a `serde_json::Value`, which would mean
//! building the rows again as a tree and encoding them a second time. So the
//! `query` tool hands over its encoded answer as the text alone, marked with
//! [`SPLICE`] in place of structured content, and this transport writes the
//! message with the text's bytes spliced in as `structuredContent`. Every
//! other message goes through rmcp's own transport unchanged.
//!
//! The MCP server (`crate::door::mcp`) marks its `query` answers only when told
//! its transport splices them (`Answers::Spliced`); over HTTP it builds the
//! structured value itself.

use std::future::Future;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio_util::either::Either;

use crate::door::boundary;
use crate::door::stdio::whole_lines::WholeLines;

/// The mark a `query` result carries in `structured_content` when its text
/// is to be spliced in as the structured content. MCP gives a tool with an
/// output schema no use for a `null` structured result, and pgmcp never
/// sends one: the mark cannot stand for anything else.
pub const SPLICE: Value = Value::Null;

/// rmcp's transport `inner`, with `query` answers written through `out`,
/// the writer `inner` writes through too (a whole line at a time, so the two
/// never interleave).
pub struct Splicing<T, W> {
    inner: T,
    out: WholeLines<W>,
}

impl<T, W> Splicing<T, W> {
    pub fn new(inner: T, out: WholeLines<W>) -> Splicing<T, W> {
        Splicing { inner, out }
    }
}

impl<T, W> rmcp::transport::Transport<RoleServer> for Splicing<T, W>
where
    T: rmcp::transport::Transport<RoleServer, Error = std::io::Error>,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match spliced(&mut item) {
            Some(line) => {
                let mut out = self.out.handle();
                Either::Left(async move {
                    out.write_all(&line).await?;
                    out.flush().await
                })
            }
            None => Either::Right(self.inner.send(item)),
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The line for a marked result: the message as rmcp writes it, without
/// structured content, and the text's bytes added as `structuredContent`
/// at the end of the result. `None` for any other message; a marked result
/// that cannot be written so (never expected) gets its structured value
/// built from the text, and goes the ordinary way.
fn spliced(item: &mut TxJsonRpcMessage<RoleServer>) -> Option<Vec<u8>> {
    let JsonRpcMessage::Response(response) = item else {
        return None;
    };
    let ServerResult::CallToolResult(result) = &mut response.result else {
        return None;
    };
    if result.structured_content.as_ref() != Some(&SPLICE) {
        return None;
    }
    result.structured_content = None;
    let line = line_with(item);
    if line.is_none()
        && let JsonRpcMessage::Response(response) = item
        && let ServerResult::CallToolResult(result) = &mut response.result
    {
        result.structured_content = built(result);
    }
    line
}

/// `item`, its mark taken off, written with its text spliced in.
fn line_with(item: &TxJsonRpcMessage<RoleServer>) -> Option<Vec<u8>> {
    let text = marked_text(item)?;
    // The text twice, once escaped: one allocation.
    let mut line = Vec::with_capacity(text.len().saturating_mul(9) / 4 + 256);
    serde_json::to_writer(&mut line, item).ok()?;
    // The message ends with the result's closing brace, then its own.
    if !line.ends_with(b"}}") {
        return None;
    }
    line.truncate(line.len() - 2);
    line.reserve(text.len() + 24);
    line.extend_from_slice(b",\"structuredContent\":");
    line.extend_from_slice(text.as_bytes());
    line.extend_from_slice(b"}}\n");
    Some(line)
}

/// The JSON of a marked result: its one text block, inside the boundary
/// around data when there is one.
fn marked_text(item: &TxJsonRpcMessage<RoleServer>) -> Option<&str> {
    let JsonRpcMessage::Response(response) = item else {
        return None;
    };
    let ServerResult::CallToolResult(result) = &response.result else {
        return None;
    };
    match result.content.as_slice() {
        [ContentBlock::Text(text)] => Some(boundary::inner(&text.text).unwrap_or(&text.text)),
        _ => None,
    }
}

/// The structured value of a result whose one text block is its JSON
/// (inside the boundary around data, or bare).
pub fn built(result: &CallToolResult) -> Option<Value> {
    let [ContentBlock::Text(text)] = result.content.as_slice() else {
        return None;
    };
    // Values nest as deep as the backends allow.
    crate::json_depth::read_measured(boundary::inner(&text.text).unwrap_or(&text.text)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, NumberOrString};

    fn response(result: CallToolResult) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(7),
            result: ServerResult::CallToolResult(result),
        })
    }

    /// The spliced line reads as the message rmcp would have written with
    /// the structured value built from the text: the same JSON, member for
    /// member.
    #[test]
    fn a_spliced_answer_reads_as_the_built_one() {
        for text in [
            r#"{"columns":[{"name":"a","type":"text"}],"rows":[{"a":"x\"y\n"}],"returned_rows":1,"truncated":false}"#,
            r#"{"columns":[],"rows":[],"returned_rows":0,"truncated":false}"#,
            r#"{"n":12345678901234567890.123456789,"deep":[[[{"k":null}]]]}"#,
        ] {
            let mut marked = CallToolResult::success(vec![ContentBlock::text(text)]);
            marked.structured_content = Some(SPLICE);
            let mut item = response(marked.clone());
            let line = spliced(&mut item).expect("a marked result is spliced");
            assert_eq!(line.last(), Some(&b'\n'));
            let got: Value = serde_json::from_slice(&line).unwrap();

            let mut plain = marked;
            plain.structured_content = built(&plain);
            let want = serde_json::to_value(response(plain)).unwrap();
            assert_eq!(got, want, "{text}");
            assert_eq!(got["result"]["structuredContent"].to_string(), text);
        }
    }

    /// Anything not marked goes the ordinary way, untouched.
    #[test]
    fn other_messages_pass() {
        let cases = [
            CallToolResult::success(vec![ContentBlock::text("{}")]),
            CallToolResult::structured(serde_json::json!({"a": 1})),
            CallToolResult::error(vec![ContentBlock::text("no")]),
        ];
        for result in cases {
            let mut item = response(result.clone());
            assert_eq!(spliced(&mut item), None);
            assert_eq!(
                serde_json::to_value(&item).unwrap(),
                serde_json::to_value(response(result)).unwrap()
            );
        }
    }

    /// A marked result with anything but one text block cannot be spliced:
    /// it goes the ordinary way without the mark.
    #[test]
    fn a_marked_result_without_its_text_is_not_spliced() {
        let mut marked = CallToolResult::success(vec![]);
        marked.structured_content = Some(SPLICE);
        let mut item = response(marked);
        assert_eq!(spliced(&mut item), None);
        let value = serde_json::to_value(&item).unwrap();
        assert!(value["result"].get("structuredContent").is_none(), "{value}");
    }
}
