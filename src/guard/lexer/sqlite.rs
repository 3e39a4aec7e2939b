//! SQLite's tokenizer, ported line by line: `sqlite3GetToken` in SQLite's
//! `tokenize.c` (3.54). Apart from DuckDB's because the two engines read
//! the same bytes differently (see [`super`]), and each port follows only
//! its own engine's source.

use super::{Lexeme, Span};

/// SQLite's tokens of `sql`. SQLite stops reading at a NUL byte, and so does
/// this: text after it never runs.
pub(in crate::guard) fn tokens(sql: &str) -> Vec<Span> {
    let z = sql.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    while at(z, pos) != 0 {
        let (len, lexeme) = sqlite_token(z, pos);
        if let Some(lexeme) = lexeme {
            out.push((lexeme, pos, pos + len));
        }
        pos += len.max(1);
    }
    out
}

/// The byte at `i`, or 0 past the end (the C string's terminator).
fn at(z: &[u8], i: usize) -> u8 {
    z.get(i).copied().unwrap_or(0)
}

/// `aiClass` of `tokenize.c` (the ASCII table), by name.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    X,
    Kywd0,
    Kywd,
    Digit,
    Dollar,
    VarAlpha,
    VarNum,
    Space,
    Quote,
    Quote2,
    Pipe,
    Minus,
    Lt,
    Gt,
    Eq,
    Bang,
    Slash,
    Lp,
    Rp,
    Semi,
    Plus,
    Star,
    Percent,
    Comma,
    And,
    Tilda,
    Dot,
    Id,
    Illegal,
    Nul,
    Bom,
}

fn class(b: u8) -> Class {
    match b {
        0 => Class::Nul,
        b'\t' | b'\n' | 0x0c | b'\r' | b' ' => Class::Space,
        b'!' => Class::Bang,
        b'"' | b'\'' | b'`' => Class::Quote,
        b'#' | b':' | b'@' => Class::VarAlpha,
        b'$' => Class::Dollar,
        b'%' => Class::Percent,
        b'&' => Class::And,
        b'(' => Class::Lp,
        b')' => Class::Rp,
        b'*' => Class::Star,
        b'+' => Class::Plus,
        b',' => Class::Comma,
        b'-' => Class::Minus,
        b'.' => Class::Dot,
        b'/' => Class::Slash,
        b'0'..=b'9' => Class::Digit,
        b';' => Class::Semi,
        b'<' => Class::Lt,
        b'=' => Class::Eq,
        b'>' => Class::Gt,
        b'?' => Class::VarNum,
        b'X' | b'x' => Class::X,
        b'A'..=b'W' | b'a'..=b'w' => Class::Kywd0,
        b'Y' | b'Z' | b'y' | b'z' | b'_' => Class::Kywd,
        b'[' => Class::Quote2,
        b'|' => Class::Pipe,
        b'~' => Class::Tilda,
        0xef => Class::Bom,
        0x80..=0xff => Class::Id,
        _ => Class::Illegal,
    }
}

/// `IdChar`: letters, digits, `_`, `$` and every byte ≥ 0x80.
fn id_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// `sqlite3Isspace`: note 0x0b (VT), which continues a space but cannot start one.
fn sqlite_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// `sqlite3GetToken`: the length of the token at `start`, and what it is
/// (`None` for spaces and comments).
fn sqlite_token(z: &[u8], start: usize) -> (usize, Option<Lexeme>) {
    let c = |i: usize| at(z, start + i);
    let other = Some(Lexeme::Other);
    match class(c(0)) {
        Class::Space => {
            let mut i = 1;
            while sqlite_space(c(i)) {
                i += 1;
            }
            (i, None)
        }
        Class::Minus => match c(1) {
            b'-' => {
                let mut i = 2;
                while c(i) != 0 && c(i) != b'\n' {
                    i += 1;
                }
                (i, None)
            }
            b'>' => (2 + usize::from(c(2) == b'>'), other),
            _ => (1, other),
        },
        Class::Lp => (1, Some(Lexeme::Open('('))),
        Class::Rp => (1, Some(Lexeme::Close)),
        Class::Semi => (1, Some(Lexeme::Semicolon)),
        Class::Comma => (1, Some(Lexeme::Comma)),
        Class::Slash => {
            if c(1) != b'*' || c(2) == 0 {
                return (1, other);
            }
            // An unterminated comment runs to the end of the text.
            let (mut i, mut ch) = (3, c(2));
            while ch != b'*' || c(i) != b'/' {
                ch = c(i);
                if ch == 0 {
                    break;
                }
                i += 1;
            }
            if ch != 0 {
                i += 1;
            }
            (i, None)
        }
        Class::Eq => (1 + usize::from(c(1) == b'='), other),
        Class::Lt => (if matches!(c(1), b'=' | b'>' | b'<') { 2 } else { 1 }, other),
        Class::Gt => (if matches!(c(1), b'=' | b'>') { 2 } else { 1 }, other),
        Class::Bang => (if c(1) == b'=' { 2 } else { 1 }, other),
        Class::Pipe => (if c(1) == b'|' { 2 } else { 1 }, other),
        Class::Quote => {
            let delim = c(0);
            let mut i = 1;
            let mut ch;
            loop {
                ch = c(i);
                if ch == 0 {
                    break;
                }
                if ch == delim {
                    if c(i + 1) == delim {
                        i += 1;
                    } else {
                        break;
                    }
                }
                i += 1;
            }
            if ch == b'\'' {
                (i + 1, Some(Lexeme::String))
            } else if ch != 0 {
                (i + 1, Some(Lexeme::QuotedName(char::from(delim))))
            } else {
                (i, other)
            }
        }
        Class::Dot if !c(1).is_ascii_digit() => (1, other),
        Class::Dot | Class::Digit => (number(z, start), other),
        Class::Quote2 => {
            let mut i = 1;
            let mut ch = c(0);
            while ch != b']' {
                ch = c(i);
                if ch == 0 {
                    break;
                }
                i += 1;
            }
            (
                i,
                if ch == b']' {
                    Some(Lexeme::QuotedName('['))
                } else {
                    other
                },
            )
        }
        Class::VarNum => {
            let mut i = 1;
            while c(i).is_ascii_digit() {
                i += 1;
            }
            (i, other)
        }
        Class::Dollar | Class::VarAlpha => {
            let mut i = 1;
            let mut named = false;
            loop {
                let ch = c(i);
                if ch == 0 {
                    break;
                }
                if id_char(ch) {
                    named = true;
                } else if ch == b'(' && named {
                    // A TCL-style `$name(...)`: to the `)`, or a space ends it.
                    loop {
                        i += 1;
                        let ch = c(i);
                        if ch == 0 || sqlite_space(ch) || ch == b')' {
                            break;
                        }
                    }
                    if c(i) == b')' {
                        i += 1;
                    }
                    break;
                } else if ch == b':' && c(i + 1) == b':' {
                    i += 1;
                } else {
                    break;
                }
                i += 1;
            }
            (i, other)
        }
        Class::X if c(1) == b'\'' => {
            // A blob literal x'...'; a malformed one still ends at its quote.
            let mut i = 2;
            while c(i).is_ascii_hexdigit() {
                i += 1;
            }
            if c(i) != b'\'' || i % 2 != 0 {
                while c(i) != 0 && c(i) != b'\'' {
                    i += 1;
                }
            }
            if c(i) != 0 {
                i += 1;
            }
            (i, other)
        }
        Class::Bom if c(1) == 0xbb && c(2) == 0xbf => (3, None),
        Class::X | Class::Kywd0 | Class::Kywd | Class::Id | Class::Bom => {
            let mut i = 1;
            while id_char(c(i)) {
                i += 1;
            }
            (i, Some(Lexeme::Word))
        }
        Class::Nul => (0, None),
        Class::Plus | Class::Star | Class::Percent | Class::And | Class::Tilda | Class::Illegal => (1, other),
    }
}

/// The length of the number at `start` (the `CC_DIGIT` case): digits with
/// `_` separators, hex, a fraction, an exponent, and any name characters
/// glued to it (which make it an illegal token).
fn number(z: &[u8], start: usize) -> usize {
    let c = |i: usize| at(z, start + i);
    let digits = |mut i: usize, hex: bool| {
        while (if hex {
            c(i).is_ascii_hexdigit()
        } else {
            c(i).is_ascii_digit()
        }) || c(i) == b'_'
        {
            i += 1;
        }
        i
    };
    let mut i;
    if c(0) == b'0' && matches!(c(1), b'x' | b'X') && c(2).is_ascii_hexdigit() {
        i = digits(3, true);
    } else {
        i = digits(0, false);
        if c(i) == b'.' {
            i = digits(i + 1, false);
        }
        if matches!(c(i), b'e' | b'E')
            && (c(i + 1).is_ascii_digit() || (matches!(c(i + 1), b'+' | b'-') && c(i + 2).is_ascii_digit()))
        {
            i = digits(i + 2, false);
        }
    }
    while id_char(c(i)) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::super::tests::words;
    use super::*;

    #[test]
    fn sqlite_reads_like_sqlite() {
        // (sql, the bare words SQLite sees)
        let cases: &[(&str, &[&str])] = &[
            ("DELETE FROM t WHERE 1", &["DELETE", "FROM", "t", "WHERE"]),
            // Every byte >= 0x80 is a name character: U+00A0, U+3000, U+2003.
            (
                "DELETE FROM t AS x\u{a0}WHERE",
                &["DELETE", "FROM", "t", "AS", "x\u{a0}WHERE"],
            ),
            (
                "DELETE FROM t AS x\u{3000}WHERE",
                &["DELETE", "FROM", "t", "AS", "x\u{3000}WHERE"],
            ),
            ("DELETE FROM t\u{2003}WHERE 1", &["DELETE", "FROM", "t\u{2003}WHERE"]),
            // U+FEFF is a space only where a token starts.
            ("DELETE FROM t \u{feff}WHERE 1", &["DELETE", "FROM", "t", "WHERE"]),
            ("DELETE FROM t\u{feff}WHERE 1", &["DELETE", "FROM", "t\u{feff}WHERE"]),
            // VT continues a space but does not start one.
            ("a \u{b}b", &["a", "b"]),
            // Comments do not nest; an unterminated one runs to the end.
            ("DELETE FROM t /* /* */ WHERE 1 */", &["DELETE", "FROM", "t", "WHERE"]),
            ("DELETE FROM t /* WHERE 1", &["DELETE", "FROM", "t"]),
            ("DELETE FROM t -- x\r WHERE 1", &["DELETE", "FROM", "t"]),
            ("DELETE FROM t /*/ WHERE */ x", &["DELETE", "FROM", "t", "x"]),
            ("a /*", &["a"]),
            // Quoted names in all three forms, and strings.
            ("DELETE FROM [t WHERE 1]", &["DELETE", "FROM"]),
            ("DELETE FROM `t WHERE 1`", &["DELETE", "FROM"]),
            ("DELETE FROM \"t \"\" WHERE 1\"", &["DELETE", "FROM"]),
            ("SELECT 'a '' WHERE'", &["SELECT"]),
            // Blobs, numbers, variables.
            ("SELECT x'00' WHERE", &["SELECT", "WHERE"]),
            ("SELECT X'0' x", &["SELECT", "x"]),
            ("SELECT 1e5WHERE", &["SELECT"]),
            ("SELECT 0x1fWHERE", &["SELECT"]),
            ("SELECT 1_000 a", &["SELECT", "a"]),
            ("SELECT $a(b c) d", &["SELECT", "c", "d"]),
            ("SELECT $a(b)c", &["SELECT", "c"]),
            ("SELECT :a::b WHERE", &["SELECT", "WHERE"]),
            ("SELECT @a.b", &["SELECT", "b"]),
            // Text after a NUL byte never runs.
            ("DELETE FROM t\0 WHERE 1", &["DELETE", "FROM", "t"]),
        ];
        for (sql, want) in cases {
            assert_eq!(words(tokens, sql), *want, "{sql:?}");
        }
    }
}
