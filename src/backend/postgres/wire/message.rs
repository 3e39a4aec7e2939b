//! Messages on the socket: writing what is buffered, and reading the
//! server's replies one message at a time. A message longer than
//! [`LONG_MESSAGE`] is never buffered whole: an error or notice keeps the
//! head of each field, a COPY line or notification is dropped, anything
//! else is refused. Apart from the phases, which all read through here.

use std::io;

use bytes::{Buf, BufMut, BytesMut};
use postgres_protocol::message::backend::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::rows::STREAMED_ROW;
use super::{Connection, WireError};

impl Connection {
    pub(super) async fn flush(&mut self) -> io::Result<()> {
        self.io.write_all(&self.write_buf).await?;
        self.write_buf.clear();
        self.io.flush().await
    }

    /// The next message's type and length (its own four bytes included),
    /// when its header is buffered.
    pub(super) fn header(&self) -> Option<(u8, usize)> {
        let h = self.read_buf.get(..5)?;
        Some((h[0], u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize))
    }

    /// Read until at least `n` bytes are buffered.
    pub(super) async fn fill(&mut self, n: usize) -> Result<(), WireError> {
        while self.read_buf.len() < n {
            // Reads land in spare capacity: keep a useful amount of it.
            self.read_buf
                .reserve((n - self.read_buf.len()).clamp(64 * 1024, STREAMED_ROW));
            if self.io.read_buf(&mut self.read_buf).await? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection").into());
            }
        }
        Ok(())
    }

    /// Read and drop `n` bytes, holding at most a buffer's worth at a time.
    pub(super) async fn discard(&mut self, mut n: usize) -> Result<(), WireError> {
        loop {
            let k = n.min(self.read_buf.len());
            self.read_buf.advance(k);
            n -= k;
            if n == 0 {
                return Ok(());
            }
            self.fill(1).await?;
        }
    }

    pub(super) async fn read_message(&mut self) -> Result<Message, WireError> {
        // Any message can be long (an error quoting a 150 MB value, a
        // NOTICE, a COPY line): one longer than LONG_MESSAGE is never
        // buffered whole.
        self.fill(5).await?;
        let (kind, len) = self.header().unwrap_or_default();
        if len > LONG_MESSAGE && !(kind == b'D' && len <= OWN_ROW) {
            return self.read_long_message(kind, len.saturating_sub(4)).await;
        }
        loop {
            if let Some(message) = Message::parse(&mut self.read_buf)? {
                return Ok(message);
            }
            if self.io.read_buf(&mut self.read_buf).await? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection").into());
            }
        }
    }

    /// A message of `len` body bytes, longer than [`LONG_MESSAGE`], its
    /// header still buffered. An error or notice keeps the first
    /// [`LONG_FIELD`] bytes of each field; a COPY line or a notification is
    /// read and dropped (pgmcp returns neither); anything else long (a data
    /// row of pgmcp's own queries, which are small by construction) is
    /// refused, and the connection, left mid-message, is not reused.
    async fn read_long_message(&mut self, kind: u8, len: usize) -> Result<Message, WireError> {
        let mut synthetic = BytesMut::new();
        match kind {
            b'E' | b'N' => {
                self.read_buf.advance(5);
                let body = self.read_capped_fields(len).await?;
                synthetic.put_u8(kind);
                synthetic.put_i32(i32::try_from(body.len() + 4).unwrap_or(i32::MAX));
                synthetic.extend_from_slice(&body);
            }
            b'd' | b'A' => {
                self.read_buf.advance(5);
                self.discard(len).await?;
                synthetic.put_u8(kind);
                if kind == b'd' {
                    synthetic.put_i32(4);
                } else {
                    // A notification from no process, on no channel.
                    synthetic.put_i32(10);
                    synthetic.put_i32(0);
                    synthetic.extend_from_slice(&[0, 0]);
                }
            }
            _ => {
                return Err(WireError::Protocol(format!(
                    "the server sent a {len}-byte message, longer than pgmcp reads for its own queries"
                )));
            }
        }
        Message::parse(&mut synthetic)?.ok_or_else(|| WireError::Protocol("malformed long message".into()))
    }

    /// The fields of an error or notice body of `len` bytes, each cut to
    /// [`LONG_FIELD`] bytes (whole characters), re-encoded as a body.
    async fn read_capped_fields(&mut self, mut len: usize) -> Result<BytesMut, WireError> {
        let bad = || WireError::Protocol("malformed error message".into());
        let mut body = BytesMut::new();
        loop {
            self.fill(1).await?;
            let code = self.read_buf.get_u8();
            len = len.checked_sub(1).ok_or_else(bad)?;
            body.put_u8(code);
            if code == 0 {
                break;
            }
            let mut kept: Vec<u8> = Vec::new();
            loop {
                self.fill(1).await?;
                let chunk = &self.read_buf[..];
                let (part, end) = match chunk.iter().position(|&b| b == 0) {
                    Some(at) => (&chunk[..at], Some(at)),
                    None => (chunk, None),
                };
                let room = LONG_FIELD.saturating_sub(kept.len());
                kept.extend_from_slice(&part[..part.len().min(room)]);
                let used = end.map_or(part.len(), |at| at + 1);
                self.read_buf.advance(used);
                len = len.checked_sub(used).ok_or_else(bad)?;
                if end.is_some() {
                    break;
                }
            }
            body.extend_from_slice(crate::pipeline::budget::head_text(&kept).as_bytes());
            body.put_u8(0);
        }
        if len != 0 {
            return Err(bad());
        }
        Ok(body)
    }
}

/// Messages longer than this are read piece by piece, never buffered whole.
const LONG_MESSAGE: usize = 1 << 20;

/// The longest data row read whole: pgmcp's own queries answer in one row
/// (a table's whole description), bounded by what their SQL selects; a
/// query's rows are read within its budget instead, field by field.
const OWN_ROW: usize = 16 << 20;

/// What each field of a long error or notice keeps, in bytes.
const LONG_FIELD: usize = crate::pipeline::budget::MESSAGE_CAP;
