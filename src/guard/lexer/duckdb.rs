//! DuckDB's tokenizer, ported line by line: `Parser::StripUnicodeSpaces` in
//! DuckDB's `src/parser/parser.cpp` (unicode spaces become ASCII ones
//! first), then `Tokenizer::TokenizeInputInternal` in
//! `src/parser/peg/tokenizer/base_tokenizer.cpp` (2.0). Apart from SQLite's
//! because the two engines read the same bytes differently (see
//! [`super`]), and each port follows only its own engine's source.

use super::{Lexeme, Span};

/// DuckDB's tokens of `sql`, with byte ranges in `sql`. DuckDB first
/// replaces the unicode spaces it knows with ASCII spaces
/// ([`duckdb_spaces`]), then tokenizes the result. Text DuckDB refuses to
/// tokenize (an unterminated string or comment) still gets tokens here;
/// DuckDB's parser refuses the statement before anything runs.
pub(in crate::guard) fn tokens(sql: &str) -> Vec<Span> {
    let (text, origin) = duckdb_spaces(sql.as_bytes());
    duckdb_tokens(&text)
        .into_iter()
        .map(|(lexeme, a, b)| (lexeme, origin[a], origin[b]))
        .collect()
}

/// `Parser::StripUnicodeSpaces` in DuckDB's `parser.cpp`: outside what it
/// takes for quotes, dollar quotes and `--` comments, U+00A0, U+2000–U+200B,
/// U+202F, U+205F, U+2060, U+3000 and U+FEFF become one ASCII space each. Its
/// idea of quotes is its own (no `/* */`, no backticks, no `E'\''`, and the
/// last two bytes are never looked at); it is followed here as it is. Returns
/// the text DuckDB tokenizes and, for each of its bytes and its end, the
/// offset in `sql`.
fn duckdb_spaces(q: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let n = q.len();
    let at = |i: usize| q.get(i).copied().unwrap_or(0);
    let first = |c: u8| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80;
    let subsequent = |c: u8| first(c) || c.is_ascii_digit();
    // (position, bytes) of each space to replace.
    let mut spaces: Vec<(usize, usize)> = Vec::new();
    enum Region {
        Regular,
        Quotes(u8),
        Dollar(usize, usize),
        Comment,
    }
    let mut region = Region::Regular;
    let mut pos = 0usize;
    'scan: loop {
        match region {
            Region::Regular => {
                while pos + 2 < n {
                    let c = q[pos];
                    if c == 0xc2 && at(pos + 1) == 0xa0 {
                        spaces.push((pos, 2));
                    }
                    if c == 0xe2 {
                        match (at(pos + 1), at(pos + 2)) {
                            (0x80, 0x80..=0x8b | 0xaf) | (0x81, 0x9f | 0xa0) => spaces.push((pos, 3)),
                            _ => {}
                        }
                    } else if c == 0xe3 {
                        if at(pos + 1) == 0x80 && at(pos + 2) == 0x80 {
                            spaces.push((pos, 3));
                        }
                    } else if c == 0xef {
                        if at(pos + 1) == 0xbb && at(pos + 2) == 0xbf {
                            spaces.push((pos, 3));
                        }
                    } else if c == b'"' || c == b'\'' {
                        pos += 1;
                        region = Region::Quotes(c);
                        continue 'scan;
                    } else if c == b'$' && (at(pos + 1) == b'$' || first(at(pos + 1))) {
                        pos += 1;
                        let start = pos;
                        while pos + 2 < n {
                            if q[pos] == b'$' {
                                region = Region::Dollar(start, pos - start);
                                continue 'scan;
                            }
                            if !subsequent(q[pos]) {
                                // Not a tag: read on from this byte.
                                continue 'scan;
                            }
                            pos += 1;
                        }
                        break 'scan;
                    } else if c == b'-' && at(pos + 1) == b'-' {
                        region = Region::Comment;
                        continue 'scan;
                    }
                    pos += 1;
                }
                break 'scan;
            }
            Region::Quotes(quote) => {
                while pos + 1 < n {
                    if q[pos] == quote {
                        if q[pos + 1] == quote {
                            pos += 2;
                            continue;
                        }
                        pos += 1;
                        region = Region::Regular;
                        continue 'scan;
                    }
                    pos += 1;
                }
                break 'scan;
            }
            Region::Dollar(tag, len) => {
                while pos + 2 < n {
                    if q[pos] == b'$'
                        && n - (pos + 1) > len
                        && at(pos + len + 1) == b'$'
                        && q[pos + 1..pos + 1 + len] == q[tag..tag + len]
                    {
                        pos += len + 1;
                        region = Region::Regular;
                        continue 'scan;
                    }
                    pos += 1;
                }
                break 'scan;
            }
            Region::Comment => {
                while pos < n {
                    if q[pos] == b'\n' || q[pos] == b'\r' {
                        region = Region::Regular;
                        continue 'scan;
                    }
                    pos += 1;
                }
                break 'scan;
            }
        }
    }
    let mut text = Vec::with_capacity(n);
    let mut origin = Vec::with_capacity(n + 1);
    let mut prev = 0;
    for (at, bytes) in spaces {
        text.extend_from_slice(&q[prev..at]);
        origin.extend(prev..at);
        text.push(b' ');
        origin.push(at);
        prev = at + bytes;
    }
    text.extend_from_slice(&q[prev..]);
    origin.extend(prev..=n);
    (text, origin)
}

/// DuckDB's tokenizer (`Tokenizer::TokenizeInputInternal`) on text whose
/// unicode spaces are already replaced.
fn duckdb_tokens(s: &[u8]) -> Vec<Span> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State {
        Standard,
        LineComment,
        BlockComment,
        QuotedName(u8),
        String { escapes: bool },
        Word,
        Numeric,
        Operator,
        Dollar,
    }
    let n = s.len();
    let b = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut out: Vec<Span> = Vec::new();
    let mut state = State::Standard;
    let mut last = 0usize;
    let mut marker: &[u8] = &[];
    let mut depth = 0usize;
    let mut i = 0usize;
    // `Tokenizer::PushOperatorToken`: an operator cannot end in `+` or `-`
    // unless it holds one of `~!@#%^&|`?`; those come off as tokens of their own.
    let push_operator = |out: &mut Vec<Span>, start: usize, end: usize| {
        let mut cut = end;
        if !s[start..end].iter().any(|c| b"~!@#%^&|`?".contains(c)) {
            while cut > start + 1 && matches!(s[cut - 1], b'+' | b'-') {
                cut -= 1;
            }
        }
        out.push((Lexeme::Other, start, cut));
        for p in cut..end {
            out.push((Lexeme::Other, p, p + 1));
        }
    };
    while i < n {
        let c = s[i];
        match state {
            State::Standard => {
                if c == b'\'' {
                    state = State::String { escapes: false };
                    last = i;
                } else if c == b'"' || c == b'`' {
                    state = State::QuotedName(c);
                    last = i;
                } else if c == b';' {
                    out.push((Lexeme::Semicolon, i, i + 1));
                    last = i + 1;
                } else if c == b'$' {
                    if i + 1 >= n {
                        // A lone `$` at the end: not a token DuckDB acts on.
                    } else if b(i + 1).is_ascii_digit() {
                        out.push((Lexeme::Other, i, i + 1));
                    } else {
                        let mut next = None;
                        for (idx, &d) in s.iter().enumerate().skip(i + 1) {
                            if d == b'$' {
                                next = Some(idx);
                                break;
                            }
                            if !dollar_tag_char(d) {
                                break;
                            }
                        }
                        match next {
                            None => out.push((Lexeme::Other, i, i + 1)),
                            Some(close) => {
                                state = State::Dollar;
                                last = i;
                                marker = &s[i + 1..close];
                                i = close;
                            }
                        }
                    }
                } else if c == b'-' && b(i + 1) == b'-' {
                    i += 1;
                    state = State::LineComment;
                } else if c == b'/' && b(i + 1) == b'*' {
                    i += 1;
                    state = State::BlockComment;
                    depth = 1;
                } else if duck_space(c) {
                    last = i + 1;
                } else if c == b':' && matches!(b(i + 1), b':' | b'=') {
                    if duck_operator(b(i + 2)) {
                        state = State::Operator;
                        last = i;
                    } else {
                        out.push((Lexeme::Other, i, i + 2));
                        i += 1;
                        last = i + 1;
                    }
                } else if single_byte_operator(c) {
                    let lexeme = match c {
                        b'(' | b'[' | b'{' => Lexeme::Open(char::from(c)),
                        b')' | b']' | b'}' => Lexeme::Close,
                        b',' => Lexeme::Comma,
                        _ => Lexeme::Other,
                    };
                    out.push((lexeme, i, i + 1));
                    last = i + 1;
                } else if c.is_ascii_digit() || c == b'.' {
                    state = State::Numeric;
                    last = i;
                } else if matches!(c, b'N' | b'n' | b'X' | b'x' | b'E' | b'e' | b'B' | b'b') && b(i + 1) == b'\'' {
                    state = State::String {
                        escapes: matches!(c, b'E' | b'e'),
                    };
                    last = i;
                    i += 1;
                } else if any_operator(c) {
                    state = State::Operator;
                    last = i;
                } else {
                    state = State::Word;
                    last = i;
                }
            }
            State::Numeric => {
                let prev = s[i - 1];
                let keep = c.is_ascii_digit()
                    || c == b'.'
                    || (c == b'_' && prev.is_ascii_digit() && b(i + 1).is_ascii_digit())
                    || (matches!(c, b'e' | b'E')
                        && !matches!(prev, b'e' | b'E')
                        && (s[last].is_ascii_digit() || prev.is_ascii_digit()))
                    || (matches!(c, b'+' | b'-') && matches!(prev, b'e' | b'E'));
                if !keep {
                    while !(s[i - 1].is_ascii_digit() || s[i - 1] == b'.') {
                        i -= 1;
                    }
                    out.push((Lexeme::Other, last, i));
                    state = State::Standard;
                    last = i;
                    continue;
                }
            }
            State::Operator => {
                let comment = (c == b'-' && b(i + 1) == b'-') || (c == b'/' && b(i + 1) == b'*');
                if comment || !duck_operator(c) {
                    push_operator(&mut out, last, i);
                    state = State::Standard;
                    last = i;
                    continue;
                }
            }
            State::Word => {
                if c != b'$' && !word_char(c) {
                    out.push((Lexeme::Word, last, i));
                    state = State::Standard;
                    last = i;
                    continue;
                }
            }
            State::String { escapes } => {
                if escapes && c == b'\\' && i + 1 < n {
                    i += 1;
                } else if c == b'\'' {
                    if b(i + 1) == b'\'' && i + 1 < n {
                        i += 1;
                    } else {
                        out.push((Lexeme::String, last, i + 1));
                        last = i + 1;
                        state = State::Standard;
                    }
                }
            }
            State::QuotedName(delim) => {
                if c == delim {
                    if i + 1 < n && b(i + 1) == delim {
                        i += 1;
                    } else {
                        out.push((Lexeme::QuotedName(char::from(delim)), last, i + 1));
                        last = i + 1;
                        state = State::Standard;
                    }
                }
            }
            State::LineComment => {
                if c == b'\n' || c == b'\r' {
                    last = i + 1;
                    state = State::Standard;
                }
            }
            State::BlockComment => {
                if c == b'/' && b(i + 1) == b'*' && i + 1 < n {
                    i += 1;
                    depth += 1;
                } else if c == b'*' && b(i + 1) == b'/' && i + 1 < n {
                    i += 1;
                    depth -= 1;
                    if depth == 0 {
                        last = i + 1;
                        state = State::Standard;
                    }
                }
            }
            State::Dollar => {
                if c == b'$' && i + 1 < n {
                    let start = i + 1;
                    let end = s[start..].iter().position(|&d| d == b'$').map(|p| start + p);
                    if let Some(end) = end
                        && &s[start..end] == marker
                    {
                        out.push((Lexeme::String, last, end + 1));
                        state = State::Standard;
                        i = end;
                        last = i + 1;
                    }
                }
            }
        }
        i += 1;
    }
    // What is left at the end (`HandleLastToken`).
    match state {
        State::Operator => push_operator(&mut out, last, n),
        // A `$` at the very end.
        State::Standard | State::Word if last < n => out.push((Lexeme::Word, last, n)),
        State::Numeric if last < n => out.push((Lexeme::Other, last, n)),
        State::String { .. } | State::Dollar if last < n => out.push((Lexeme::String, last, n)),
        State::QuotedName(delim) if last < n => out.push((Lexeme::QuotedName(char::from(delim)), last, n)),
        _ => {}
    }
    out
}

/// `StringUtil::CharacterIsSpace`: ASCII only, and it includes VT.
fn duck_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `Tokenizer::IsSingleByteOperator`.
fn single_byte_operator(c: u8) -> bool {
    matches!(
        c,
        b'(' | b')' | b'{' | b'}' | b'[' | b']' | b',' | b':' | b'?' | b'$' | b'#'
    )
}

/// `Tokenizer::CharacterIsOperator`: what continues an operator.
fn duck_operator(c: u8) -> bool {
    matches!(
        c,
        b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'<' | b'>' | b'=' | b'~' | b'!' | b'@' | b'&' | b'|'
    )
}

/// `StringUtil::CharacterIsOperator`: what starts an operator (ASCII
/// punctuation but `_`).
fn any_operator(c: u8) -> bool {
    c != b'_' && (matches!(c, b'!'..=b'/' | b':'..=b'@' | b'['..=b'`' | b'{'..=b'~'))
}

/// `Tokenizer::CharacterIsKeyword`: anything that is not an operator, a
/// space or `'`, `;`, `"`, `.` — so every byte ≥ 0x80 (U+00A0, U+3000, ...)
/// is part of a word.
fn word_char(c: u8) -> bool {
    !single_byte_operator(c) && !any_operator(c) && !duck_space(c) && !matches!(c, b'\'' | b';' | b'"' | b'.')
}

/// `Tokenizer::IsValidDollarTagCharacter`.
fn dollar_tag_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::super::tests::{lex, words};
    use super::*;

    #[test]
    fn duckdb_reads_like_duckdb() {
        let cases: &[(&str, &[&str])] = &[
            ("DELETE FROM t WHERE 1", &["DELETE", "FROM", "t", "WHERE"]),
            // Comments nest.
            ("DELETE FROM t /* /* */ WHERE */", &["DELETE", "FROM", "t"]),
            ("DELETE FROM t /* /* */ */ WHERE 1", &["DELETE", "FROM", "t", "WHERE"]),
            ("DELETE FROM t -- x\r WHERE 1", &["DELETE", "FROM", "t", "WHERE"]),
            // Dollar-quoted strings, with and without a tag.
            (
                "DELETE FROM t RETURNING $$ WHERE $$",
                &["DELETE", "FROM", "t", "RETURNING"],
            ),
            (
                "DELETE FROM t RETURNING $a$ $$ WHERE $a$",
                &["DELETE", "FROM", "t", "RETURNING"],
            ),
            ("SELECT $1 WHERE", &["SELECT", "WHERE"]),
            ("SELECT $name, a$b", &["SELECT", "name", "a$b"]),
            // E'' strings read backslash escapes; plain ones do not.
            ("SELECT E'\\' WHERE '", &["SELECT"]),
            ("SELECT '\\' WHERE", &["SELECT", "WHERE"]),
            // Backticks quote names; brackets are brackets.
            ("DELETE FROM t AS `x WHERE 1`", &["DELETE", "FROM", "t", "AS"]),
            ("SELECT [read_text('x')]", &["SELECT", "read_text"]),
            // Every byte >= 0x80 is a word character, but the unicode spaces
            // DuckDB knows become spaces first, outside what its pre-pass
            // takes for quotes ('' "" $$ --, not /* */ or backticks).
            (
                "DELETE FROM t AS x\u{a0}WHERE",
                &["DELETE", "FROM", "t", "AS", "x", "WHERE"],
            ),
            (
                "a\u{3000}b\u{feff}c\u{2000}d\u{202f}e f",
                &["a", "b", "c", "d", "e", "f"],
            ),
            ("a\u{85}b \u{2028}c", &["a\u{85}b", "\u{2028}c"]),
            ("SELECT 1 /* ' */ AS x\u{a0}WHERE", &["SELECT", "AS", "x\u{a0}WHERE"]),
            ("SELECT 1 AS `'` , x\u{a0}y", &["SELECT", "AS", "x\u{a0}y"]),
            ("SELECT 1 -- '\n, x\u{a0}y", &["SELECT", "x", "y"]),
            ("SELECT $$'$$, x\u{a0}y", &["SELECT", "x", "y"]),
            ("SELECT a\u{a0}", &["SELECT", "a\u{a0}"]),
            ("a\u{b}b", &["a", "b"]),
            ("SELECT 1e5WHERE", &["SELECT", "WHERE"]),
        ];
        for (sql, want) in cases {
            assert_eq!(words(tokens, sql), *want, "{sql:?}");
        }
        let opens: Vec<Lexeme> = lex(tokens, "([{}])").into_iter().map(|(l, _)| l).collect();
        assert_eq!(
            opens,
            [
                Lexeme::Open('('),
                Lexeme::Open('['),
                Lexeme::Open('{'),
                Lexeme::Close,
                Lexeme::Close,
                Lexeme::Close
            ]
        );
    }
}
