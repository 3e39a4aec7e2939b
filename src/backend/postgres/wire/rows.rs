//! A statement's rows as the server sends them: the columns it describes,
//! and each data row's fields as text, kept within the exchange's read
//! budget. A row longer than [`STREAMED_ROW`] is read field by field straight
//! from the socket, so a value the budget cuts is never held whole. Apart
//! from the exchange, which only decides which rows are the caller's.

use bytes::{Buf, Bytes};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend;

use super::{Connection, WireError};
use crate::pipeline::budget::ReadBudget;

/// A column as the server described it.
#[derive(Debug, Clone)]
pub struct WireColumn {
    pub name: String,
    pub type_oid: u32,
    pub type_modifier: i32,
    /// The table and column it comes from, or 0 for a computed column.
    pub table_oid: u32,
    pub column_id: i16,
}

/// The text form of one row: `None` is SQL NULL.
pub type WireRow = Vec<Option<Bytes>>;

/// A value the read budget cut: the row keeps its head, this its whole size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutValue {
    pub row: usize,
    pub column: usize,
    pub len: usize,
}

/// Data rows longer than this are read field by field, straight from the
/// socket, so a value cut by the budget is never held whole.
pub(super) const STREAMED_ROW: usize = 256 * 1024;

impl Connection {
    /// The body length of the next message if it is a data row longer than
    /// [`STREAMED_ROW`], judged from its header alone.
    pub(super) fn long_data_row(&self) -> Option<usize> {
        let (kind, len) = self.header()?;
        (kind == b'D' && len > STREAMED_ROW).then(|| len - 4)
    }

    /// The body length of the next message if it is a COPY line longer than
    /// [`STREAMED_ROW`], judged from its header alone.
    pub(super) fn long_copy_line(&self) -> Option<usize> {
        let (kind, len) = self.header()?;
        (kind == b'd' && len > STREAMED_ROW).then(|| len - 4)
    }

    /// Read a data row of `len` body bytes (its header still buffered) field
    /// by field: each field keeps what `budget` allows and the rest is read
    /// and dropped as it arrives; with `drop_all`, every field is dropped.
    pub(super) async fn read_long_row(
        &mut self,
        len: usize,
        budget: &mut ReadBudget,
        drop_all: bool,
        row: usize,
        cuts: &mut Vec<CutValue>,
    ) -> Result<WireRow, WireError> {
        let bad = || WireError::Protocol("malformed data row".into());
        self.read_buf.advance(5);
        self.fill(2).await?;
        let count = usize::try_from(self.read_buf.get_i16()).map_err(|_| bad())?;
        let mut left = len.checked_sub(2).ok_or_else(bad)?;
        let mut fields = Vec::with_capacity(count.min(1664));
        for column in 0..count {
            self.fill(4).await?;
            let field = self.read_buf.get_i32();
            left = left.checked_sub(4).ok_or_else(bad)?;
            let Ok(field) = usize::try_from(field) else {
                fields.push(None);
                continue;
            };
            left = left.checked_sub(field).ok_or_else(bad)?;
            let keep = if drop_all { 0 } else { budget.take(field) };
            self.fill(keep).await?;
            let head = self.read_buf.split_to(keep).freeze();
            self.discard(field - keep).await?;
            if keep < field && !drop_all {
                cuts.push(CutValue {
                    row,
                    column,
                    len: field,
                });
            }
            fields.push(Some(head));
        }
        if left != 0 {
            return Err(bad());
        }
        Ok(fields)
    }
}

/// A data row's fields, each kept as far as `budget` allows; a field cut
/// keeps a copy of its head, so the message's buffer is freed.
pub(super) fn split_row_within(
    body: &backend::DataRowBody,
    budget: &mut ReadBudget,
    row: usize,
    cuts: &mut Vec<CutValue>,
) -> Result<WireRow, WireError> {
    let buffer = body.buffer_bytes();
    let mut ranges = body.ranges();
    let mut fields = Vec::new();
    while let Some(range) = ranges.next()? {
        fields.push(range.map(|r| {
            let keep = budget.take(r.len());
            if keep < r.len() {
                cuts.push(CutValue {
                    row,
                    column: fields.len(),
                    len: r.len(),
                });
                Bytes::copy_from_slice(&buffer[r.start..r.start + keep])
            } else {
                buffer.slice(r)
            }
        }));
    }
    Ok(fields)
}

pub(super) fn split_row(body: &backend::DataRowBody) -> Result<WireRow, WireError> {
    let buffer = body.buffer_bytes();
    let mut ranges = body.ranges();
    let mut row = Vec::new();
    while let Some(range) = ranges.next()? {
        row.push(range.map(|r| buffer.slice(r)));
    }
    Ok(row)
}
