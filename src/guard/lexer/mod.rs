//! SQL text as each embedded engine splits it into tokens, for [`super::outline`].
//!
//! What a statement does depends on where its comments, strings and quoted
//! names begin and end, and the engines disagree about that: SQLite reads
//! every byte ≥ 0x80 as part of a name (U+00A0 is not a space to it), `[...]`
//! and `` `...` `` as quoted names and never nests comments; DuckDB nests
//! `/* */`, reads `$tag$...$tag$` and `E'\''` as strings and `[` as a bracket.
//! A tokenizer that reads the text any other way lets `DELETE FROM t /* /* */
//! WHERE */` look like it has a `WHERE`. So each function here is a line-by-line
//! port of the engine's own tokenizer, at the version pgmcp bundles:
//!
//! - [`sqlite`]: `sqlite3GetToken` in SQLite's `tokenize.c` (3.54);
//! - [`duckdb`]: `Parser::StripUnicodeSpaces` in DuckDB's
//!   `src/parser/parser.cpp` (unicode spaces become ASCII ones first), then
//!   `Tokenizer::TokenizeInputInternal` in
//!   `src/parser/peg/tokenizer/base_tokenizer.cpp` (2.0, the PEG parser's
//!   tokenizer; DuckDB 2.0 no longer uses PostgreSQL's scanner, so
//!   `pg_query::scan` does not read DuckDB's text the way DuckDB does:
//!   backticks quote names there, not in PostgreSQL).
//!
//! `tests/it/lexical.rs` checks both against the real engines on generated
//! statements. When a bundled engine is upgraded, re-read its tokenizer. Pure.

/// What a lexeme is, as far as the outline cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lexeme {
    /// A bare word: a keyword or an unquoted name.
    Word,
    /// A quoted name, with its opening delimiter (`"`, `` ` ``, `[`).
    QuotedName(char),
    /// A string literal (`'...'`, `E'...'`, `$$...$$`, ...).
    String,
    /// `(`, `[` (DuckDB), `{` (DuckDB).
    Open(char),
    /// `)`, `]`, `}`.
    Close,
    Comma,
    Semicolon,
    /// Anything else the engine reads as a token: numbers, operators,
    /// parameters, blobs, characters it refuses.
    Other,
}

/// One lexeme: its kind and its byte range in the text. Whitespace and
/// comments are not lexemes.
pub(super) type Span = (Lexeme, usize, usize);

/// SQLite's tokens of `sql`. SQLite stops reading at a NUL byte, and so does
/// this: text after it never runs.
pub(super) fn sqlite(sql: &str) -> Vec<Span> {
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

/// DuckDB's tokens of `sql`, with byte ranges in `sql`. DuckDB first
/// replaces the unicode spaces it knows with ASCII spaces
/// ([`duckdb_spaces`]), then tokenizes the result. Text DuckDB refuses to
/// tokenize (an unterminated string or comment) still gets tokens here;
/// DuckDB's parser refuses the statement before anything runs.
pub(super) fn duckdb(sql: &str) -> Vec<Span> {
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

/// The text of a quoted lexeme without its quotes, unescaped as far as the
/// outline needs (doubled quotes; a `$tag$` or an `E`/`X`/`N`/`B` prefix).
pub(super) fn unquote(text: &str, lexeme: Lexeme) -> String {
    match lexeme {
        Lexeme::QuotedName(open) => {
            let close = if open == '[' { ']' } else { open };
            let inner = text.strip_prefix(open).unwrap_or(text);
            let inner = inner.strip_suffix(close).unwrap_or(inner);
            if open == '[' {
                inner.to_owned()
            } else {
                inner.replace(&format!("{close}{close}"), &close.to_string())
            }
        }
        Lexeme::String if text.starts_with('$') => {
            let tag_end = text[1..].find('$').map_or(text.len(), |p| p + 2);
            let inner = &text[tag_end.min(text.len())..];
            let tag = &text[..tag_end.min(text.len())];
            inner.strip_suffix(tag).unwrap_or(inner).to_owned()
        }
        Lexeme::String => {
            let inner = text.trim_start_matches(|c: char| c != '\'');
            let inner = inner.strip_prefix('\'').unwrap_or(inner);
            let inner = inner.strip_suffix('\'').unwrap_or(inner);
            inner.replace("''", "'")
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lexemes of `sql` as (kind, text).
    fn lex(f: fn(&str) -> Vec<Span>, sql: &str) -> Vec<(Lexeme, String)> {
        f(sql)
            .into_iter()
            .map(|(l, a, b)| (l, String::from_utf8_lossy(&sql.as_bytes()[a..b]).into_owned()))
            .collect()
    }

    fn words(f: fn(&str) -> Vec<Span>, sql: &str) -> Vec<String> {
        lex(f, sql)
            .into_iter()
            .filter(|(l, _)| *l == Lexeme::Word)
            .map(|(_, t)| t)
            .collect()
    }

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
            assert_eq!(words(sqlite, sql), *want, "{sql:?}");
        }
    }

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
            assert_eq!(words(duckdb, sql), *want, "{sql:?}");
        }
        let opens: Vec<Lexeme> = lex(duckdb, "([{}])").into_iter().map(|(l, _)| l).collect();
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

    #[test]
    fn unquoting() {
        let cases = [
            ("'it''s'", Lexeme::String, "it's"),
            ("E'x'", Lexeme::String, "x"),
            ("$$a.csv$$", Lexeme::String, "a.csv"),
            ("$t$a$t$", Lexeme::String, "a"),
            ("\"a\"\"b\"", Lexeme::QuotedName('"'), "a\"b"),
            ("[a]", Lexeme::QuotedName('['), "a"),
            ("`a`", Lexeme::QuotedName('`'), "a"),
        ];
        for (text, lexeme, want) in cases {
            assert_eq!(unquote(text, lexeme), want, "{text}");
        }
    }
}
