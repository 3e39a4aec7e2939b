//! `COPY ... TO STDOUT` read as rows: each line of its output is a row of
//! one text column (`bytea`, in hex, for `FORMAT binary`), held within the
//! row cap and the budget as data rows are. Apart from `rows.rs`: COPY
//! sends lines, not rows, and does not stop at `Execute`'s row limit.

use bytes::Bytes;

use super::rows::{CutValue, WireColumn};

/// The one column a `COPY ... TO STDOUT` answers with: each row is a line
/// of its output (text or CSV as the statement asked).
pub(super) const COPY_COLUMN: &str = "line";

/// `text`, and `bytea` for `COPY ... (FORMAT binary)`.
const TEXT_OID: u32 = 25;
const BYTEA_OID: u32 = 17;

/// A `COPY ... TO STDOUT` being read as rows.
#[derive(Debug, Clone, Copy)]
pub(super) struct CopyOut {
    /// `FORMAT binary`: its lines are returned as `bytea`, in hex.
    pub(super) binary: bool,
    /// The most lines held, `Execute`'s row limit (the caller's cap plus
    /// one, which tells it more exist): COPY does not stop at that limit, so
    /// the lines past it are read and dropped here.
    pub(super) max_rows: usize,
}

impl CopyOut {
    pub(super) fn column(self) -> WireColumn {
        WireColumn {
            name: COPY_COLUMN.to_owned(),
            type_oid: if self.binary { BYTEA_OID } else { TEXT_OID },
            type_modifier: -1,
            table_oid: 0,
            column_id: 0,
        }
    }

    /// A line's value from what the budget kept of it (`head`) and its
    /// whole length `len`: without its ending newline, in hex when binary,
    /// a cut noted when the head is not all of it.
    pub(super) fn line(self, head: Bytes, len: usize, row: usize, cuts: &mut Vec<CutValue>) -> Bytes {
        let whole = head.len() == len;
        let head = match (whole, self.binary, head.last()) {
            (true, false, Some(b'\n')) => head.slice(..head.len() - 1),
            _ => head,
        };
        if !whole {
            cuts.push(CutValue { row, column: 0, len });
        }
        if !self.binary {
            return head;
        }
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = Vec::with_capacity(2 + 2 * head.len());
        hex.extend_from_slice(b"\\x");
        for byte in &head[..] {
            hex.push(DIGITS[usize::from(byte >> 4)]);
            hex.push(DIGITS[usize::from(byte & 15)]);
        }
        Bytes::from(hex)
    }
}
