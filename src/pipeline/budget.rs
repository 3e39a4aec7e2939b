//! How much of a result a backend may hold: the read budget. Memory follows
//! the answer's byte cap, not the data: a backend stops reading rows once the
//! budget is spent, and a value larger than the budget is cut as it is read,
//! never held whole (`SELECT repeat('x', 10000000) FROM generate_series(1, 150)`
//! holds about one capped value, not 1.5 GB). Pure.
//!
//! The budget is larger than the answer's cap, for two reasons: sanitizing
//! rules may shorten what was read (a masked blob), and a rule must see a few
//! kilobytes past the point where a value is finally shown cut, or a secret
//! straddling a cut made at read would escape the rule that masks it whole.
//! So a value is cut at read only well beyond anything the answer can show:
//! either it keeps [`ReadBudget::value_cap`] bytes (the cap plus
//! [`SANITIZE_MARGIN`]), or nothing.

use serde_json::Value;

/// Bytes a value keeps past the answer's cap when it is cut at read, so the
/// sanitizing rules see the text beyond the last byte the answer can show.
pub const SANITIZE_MARGIN: usize = 8 * 1024;

/// The read budget of one statement. `Copy`: the pipeline hands one to the
/// backend with each statement, and the backend spends its own copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadBudget {
    /// Bytes of values still to read.
    left: usize,
    /// The most a value keeps when it is cut.
    value_cap: usize,
    /// A value was cut, or one could not be read whole.
    cut: bool,
}

impl ReadBudget {
    /// The budget for an answer capped at `max_result_length` bytes: values
    /// of twice the cap plus margin, each cut one at the cap plus margin.
    pub fn for_answer(max_result_length: usize) -> ReadBudget {
        let value_cap = max_result_length.saturating_add(SANITIZE_MARGIN);
        ReadBudget {
            left: value_cap.saturating_mul(2),
            value_cap,
            cut: false,
        }
    }

    /// How many of a value's `len` bytes to keep. A value that fits is kept
    /// whole; one that does not keeps [`ReadBudget::value_cap`] bytes while
    /// the budget has that much left, else nothing.
    pub fn take(&mut self, len: usize) -> usize {
        if len <= self.left && len <= self.value_cap {
            self.left -= len;
            return len;
        }
        self.cut = true;
        let keep = if self.left >= self.value_cap { self.value_cap } else { 0 };
        self.left -= keep;
        keep
    }

    /// Spend `bytes` that are not a value's: what a row costs whatever its
    /// values (each value's key, its column name, repeated in every row of
    /// the answer; a NULL). Never cuts anything; the budget may run out.
    pub fn charge(&mut self, bytes: usize) {
        self.left = self.left.saturating_sub(bytes);
    }

    /// Another row: whether to read it. It is read while the budget is not
    /// [spent](ReadBudget::spent), and pays `row_cost` (as the function
    /// `row_cost` counts it) as it is, so every backend stops at the same
    /// row for the same answer.
    pub fn admit(&mut self, row_cost: usize) -> bool {
        if self.spent() {
            return false;
        }
        self.charge(row_cost);
        true
    }

    /// Whether reading should stop after the current row: a value was cut,
    /// or the budget is used up.
    pub fn spent(&self) -> bool {
        self.cut || self.left == 0
    }

    /// Whether some value was cut.
    pub fn cut_any(&self) -> bool {
        self.cut
    }

    pub fn value_cap(&self) -> usize {
        self.value_cap
    }
}

/// What a row costs beyond its values, whatever they are: each column's
/// key, its name repeated in every row of the answer ([`column_cost`]).
pub fn row_cost<'a>(names: impl IntoIterator<Item = &'a str>) -> usize {
    names.into_iter().map(column_cost).sum()
}

/// What one column adds to every row of the answer: its name as a key, with
/// the two quotes, the colon and the comma around it.
pub fn column_cost(name: &str) -> usize {
    name.len() + 4
}

/// A value of `len` bytes cut at read to `head`, as the answer shows it: a
/// string, its head and a marker saying how much of it is shown. The marker
/// is the same as the one the byte cap writes ([`marker`]), so a value cut
/// twice still tells its whole size.
pub fn cut_value(head: &str, len: usize) -> Value {
    Value::String(format!("{head}{}", marker(head.len(), len)))
}

/// The most of an engine's error or notice message pgmcp keeps, in bytes:
/// more than any answer shows (`query.max_result_length` cuts it again),
/// while a message quoting a 150 MB value is never copied whole again.
pub const MESSAGE_CAP: usize = 256 * 1024;

/// `message` cut to [`MESSAGE_CAP`] bytes, saying how long it was.
pub fn bounded_message(message: String) -> String {
    if message.len() <= MESSAGE_CAP {
        return message;
    }
    format!(
        "{}… [message cut: it was {} bytes]",
        head_text(&message.as_bytes()[..MESSAGE_CAP]),
        message.len()
    )
}

/// `… [value cut: <shown> of <len> bytes shown]`.
pub fn marker(shown: usize, len: usize) -> String {
    format!("… [value cut: {shown} of {len} bytes shown]")
}

/// The whole size a value's marker states, when `text` ends with one: a value
/// cut at read and then again by the byte cap keeps its original size.
pub fn stated_size(text: &str) -> Option<(usize, usize)> {
    let rest = text.strip_suffix(" bytes shown]")?;
    let start = rest.rfind("… [value cut: ")?;
    let (shown, len) = rest[start + "… [value cut: ".len()..].split_once(" of ")?;
    Some((start, len.parse().ok().filter(|_| shown.parse::<usize>().is_ok())?))
}

/// The head of a value cut at read, as text: a character the cut split at
/// its end is dropped, other invalid UTF-8 replaced as `from_utf8_lossy` does.
pub fn head_text(head: &[u8]) -> String {
    let mut end = head.len();
    let tail = head.len().saturating_sub(3);
    if let Some(i) = (tail..head.len()).rev().find(|&i| head[i] & 0xC0 != 0x80) {
        let width = match head[i] {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        if i + width > head.len() {
            end = i;
        }
    }
    String::from_utf8_lossy(&head[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_admitted_until_the_budget_is_spent_each_paying_its_keys() {
        let cap = 1000 + SANITIZE_MARGIN;
        let cost = row_cost(["id", "name"]);
        assert_eq!(cost, (2 + 4) + (4 + 4));
        // (bytes of values read before, rows admitted after them)
        let cases: [(usize, usize); 4] = [
            // An empty budget's worth of values: the next row is refused.
            (2 * cap, 0),
            // Room for exactly one row's keys: it is admitted and spends the rest.
            (2 * cap - cost, 1),
            // Room for a row and a byte: a second row is admitted, overdrawn.
            (2 * cap - cost - 1, 2),
            (0, (2 * cap).div_ceil(cost)),
        ];
        for (read, admitted) in cases {
            let mut budget = ReadBudget::for_answer(1000);
            budget.charge(read);
            let mut rows = 0;
            while budget.admit(cost) {
                rows += 1;
            }
            assert_eq!(rows, admitted, "after {read} bytes");
            assert!(budget.spent() && !budget.cut_any());
        }
    }

    #[test]
    fn values_are_kept_whole_cut_at_the_cap_or_dropped() {
        // (value lengths read in order, expected kept bytes, spent after each)
        let b = ReadBudget::for_answer(1000);
        let cap = 1000 + SANITIZE_MARGIN;
        assert_eq!(b.value_cap(), cap);
        let cases: Vec<(Vec<usize>, Vec<usize>, Vec<bool>)> = vec![
            (vec![10, 20], vec![10, 20], vec![false, false]),
            // Larger than a value may be: cut at the cap.
            (vec![cap + 1], vec![cap], vec![true]),
            (vec![10_000_000, 10_000_000], vec![cap, cap], vec![true, true]),
            // A third cut value finds less than a cap left: nothing kept.
            (
                vec![cap * 3, cap * 3, cap * 3],
                vec![cap, cap, 0],
                vec![true, true, true],
            ),
            // Exactly the whole budget: spent, nothing cut.
            (vec![cap, cap], vec![cap, cap], vec![false, true]),
            (vec![cap, cap, 1], vec![cap, cap, 0], vec![false, true, true]),
        ];
        for (lens, kept, spent) in cases {
            let mut budget = b;
            let got: Vec<(usize, bool)> = lens.iter().map(|&l| (budget.take(l), budget.spent())).collect();
            let want: Vec<(usize, bool)> = kept.into_iter().zip(spent).collect();
            assert_eq!(got, want, "{lens:?}");
        }
    }

    #[test]
    fn rows_cost_their_keys_too() {
        let mut budget = ReadBudget::for_answer(1000);
        let total = 2 * (1000 + SANITIZE_MARGIN);
        budget.charge(total - 10);
        assert!(!budget.spent());
        assert_eq!(budget.take(10), 10);
        assert!(budget.spent(), "used up by keys and one value");
        let mut budget = ReadBudget::for_answer(1000);
        budget.charge(usize::MAX);
        assert!(budget.spent() && !budget.cut_any());
        assert_eq!(budget.take(5), 0, "nothing left for a value");
    }

    #[test]
    fn markers_state_the_whole_size() {
        let v = cut_value("abc", 10_000_000);
        assert_eq!(v, "abc… [value cut: 3 of 10000000 bytes shown]");
        // (text, stated size)
        let cases = [
            ("abc… [value cut: 3 of 10000000 bytes shown]", Some((3, 10_000_000))),
            ("no marker", None),
            ("x… [value cut: a of 10 bytes shown]", None),
            ("x… [value cut: 1 of ten bytes shown]", None),
        ];
        for (text, want) in cases {
            assert_eq!(stated_size(text), want, "{text}");
        }
    }

    #[test]
    fn heads_end_on_whole_characters() {
        // (bytes of a value, where it was cut, head)
        let cases: Vec<(&[u8], usize, &str)> = vec![
            (b"hello", 3, "hel"),
            (b"hello", 5, "hello"),
            ("a\u{e9}".as_bytes(), 2, "a"),
            ("a\u{e9}".as_bytes(), 3, "a\u{e9}"),
            ("a\u{20ac}b".as_bytes(), 2, "a"),
            ("a\u{20ac}b".as_bytes(), 3, "a"),
            ("a\u{20ac}b".as_bytes(), 4, "a\u{20ac}"),
            ("a\u{1f600}".as_bytes(), 4, "a"),
            ("a\u{1f600}".as_bytes(), 5, "a\u{1f600}"),
            (b"\xff\xfe", 1, "\u{fffd}"),
        ];
        for (bytes, cut, want) in cases {
            assert_eq!(head_text(&bytes[..cut]), want, "{bytes:?} {cut}");
        }
    }
}
