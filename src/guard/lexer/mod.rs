//! SQL text as each embedded engine splits it into tokens, for [`super::outline`].
//!
//! What a statement does depends on where its comments, strings and quoted
//! names begin and end, and the engines disagree about that: SQLite reads
//! every byte ≥ 0x80 as part of a name (U+00A0 is not a space to it), `[...]`
//! and `` `...` `` as quoted names and never nests comments; DuckDB nests
//! `/* */`, reads `$tag$...$tag$` and `E'\''` as strings and `[` as a bracket.
//! A tokenizer that reads the text any other way lets `DELETE FROM t /* /* */
//! WHERE */` look like it has a `WHERE`. So each module here is a line-by-line
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

pub(super) mod duckdb;
pub(super) mod sqlite;

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
    pub(super) fn lex(f: fn(&str) -> Vec<Span>, sql: &str) -> Vec<(Lexeme, String)> {
        f(sql)
            .into_iter()
            .map(|(l, a, b)| (l, String::from_utf8_lossy(&sql.as_bytes()[a..b]).into_owned()))
            .collect()
    }

    pub(super) fn words(f: fn(&str) -> Vec<Span>, sql: &str) -> Vec<String> {
        lex(f, sql)
            .into_iter()
            .filter(|(l, _)| *l == Lexeme::Word)
            .map(|(_, t)| t)
            .collect()
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
