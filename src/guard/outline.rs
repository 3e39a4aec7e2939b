//! What the tokens of one statement say about it, for the engines whose own
//! parser decides what the statement is (SQLite, DuckDB) but does not report
//! every detail a rule needs: whether a `DELETE` has a `WHERE` of its own,
//! which way a `COPY` goes, which functions are called, which quoted names
//! stand where a table would. Comments, strings and quoted identifiers are
//! read as such, so a keyword inside them never counts. Pure.

/// What the tokens of a statement say about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// The statement's verb, upper-cased: `SELECT`, `DELETE`, `VACUUM`, ...
    /// (after `EXPLAIN [QUERY PLAN | ANALYZE]` and any `WITH` clause).
    pub verb: String,
    /// The statement starts with `EXPLAIN`.
    pub explain: bool,
    /// It is `EXPLAIN ANALYZE`, which runs the statement it explains.
    pub analyze: bool,
    /// Words outside any parentheses after the verb, upper-cased.
    top_level: Vec<String>,
    /// Names called as functions (a name, bare or quoted, right before `(`),
    /// lower-cased, at any depth.
    pub calls: Vec<String>,
    /// Quoted text standing where a table would (right after `FROM`, `JOIN`
    /// or a comma of a `FROM` list): `FROM 'data.csv'`, `FROM "data.csv"`.
    pub quoted_tables: Vec<String>,
}

/// Keywords that come before a parenthesis without calling anything.
const NOT_CALLS: &[&str] = &[
    "AS",
    "IN",
    "USING",
    "VALUES",
    "EXISTS",
    "ON",
    "OVER",
    "FILTER",
    "WITHIN",
    "AND",
    "OR",
    "NOT",
    "ANY",
    "ALL",
    "SOME",
    "INTO",
    "FROM",
    "JOIN",
    "WHERE",
    "SELECT",
    "KEY",
    "CHECK",
    "UNIQUE",
    "REFERENCES",
    "LATERAL",
    "TABLE",
];

/// Words that end a `FROM` list.
const AFTER_FROM: &[&str] = &[
    "WHERE",
    "GROUP",
    "HAVING",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "WINDOW",
    "QUALIFY",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "RETURNING",
    "SET",
    "ON",
    "USING",
    "SELECT",
    "VALUES",
];

impl Outline {
    pub fn of(sql: &str) -> Outline {
        let mut outline = Outline::default();
        let mut in_with = false;
        let tokens = tokens(sql);
        // The depths of the FROM lists being read (a subquery's inside its
        // parent's), and whether the next token stands where a table would.
        let mut from_lists: Vec<usize> = Vec::new();
        let mut table_next = false;
        for (i, token) in tokens.iter().enumerate() {
            let before_paren = matches!(tokens.get(i + 1), Some(Token::Open));
            let was_table_next = std::mem::take(&mut table_next);
            match token {
                Token::Word(word, depth) => {
                    if before_paren && !NOT_CALLS.contains(&word.as_str()) {
                        outline.calls.push(word.to_ascii_lowercase());
                    }
                    if matches!(word.as_str(), "FROM" | "JOIN") {
                        from_lists.retain(|d| d < depth);
                        from_lists.push(*depth);
                        table_next = true;
                    } else if from_lists.last() == Some(depth) && AFTER_FROM.contains(&word.as_str()) {
                        from_lists.pop();
                    }
                    if *depth > 0 {
                        continue;
                    }
                    if outline.verb.is_empty() {
                        match word.as_str() {
                            "EXPLAIN" => outline.explain = true,
                            "ANALYZE" if outline.explain && !outline.analyze => outline.analyze = true,
                            "QUERY" | "PLAN" if outline.explain => {}
                            "WITH" => in_with = true,
                            // A WITH clause's own words (names, AS, RECURSIVE) come
                            // before the verb; its queries are all in parentheses.
                            _ if in_with
                                && !matches!(
                                    word.as_str(),
                                    "SELECT" | "INSERT" | "REPLACE" | "UPDATE" | "DELETE" | "VALUES" | "FROM"
                                ) => {}
                            _ => outline.verb = word.clone(),
                        }
                    } else {
                        outline.top_level.push(word.clone());
                    }
                }
                Token::Quoted { quote, text, .. } => {
                    if before_paren && *quote != '\'' {
                        outline.calls.push(text.to_lowercase());
                    }
                    // A quoted identifier is a table's name unless it looks
                    // like a file; a string literal there is always a file.
                    if was_table_next && (*quote == '\'' || text.contains(['.', '/', '\\'])) {
                        outline.quoted_tables.push(text.clone());
                    }
                }
                Token::Comma(depth) if from_lists.last() == Some(depth) => table_next = true,
                Token::Close(depth) => from_lists.retain(|d| d <= depth),
                _ => {}
            }
        }
        outline
    }

    /// `word` appears outside parentheses after the verb.
    pub fn has(&self, word: &str) -> bool {
        self.top_level.iter().any(|w| w == word)
    }

    /// The words after the verb, outside parentheses, upper-cased.
    pub fn top_level_words(&self) -> impl Iterator<Item = &str> {
        self.top_level.iter().map(String::as_str)
    }

    /// The first word after the verb, outside parentheses.
    pub fn object(&self) -> Option<&str> {
        self.top_level.first().map(String::as_str)
    }

    /// A `DELETE` or `UPDATE` with a `WHERE` of its own (one inside a subquery
    /// does not count).
    pub fn has_where(&self) -> bool {
        self.has("WHERE")
    }
}

/// A token outside comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A bare word, upper-cased, with its parenthesis depth.
    Word(String, usize),
    /// A string literal (`'...'`) or a quoted identifier (`"..."`, `` `...` ``,
    /// `[...]`), its text unescaped, with its parenthesis depth.
    Quoted {
        quote: char,
        text: String,
        depth: usize,
    },
    /// `(`; `)` with the depth after it; `,` with its depth.
    Open,
    Close(usize),
    Comma(usize),
    /// A `;`, with the byte offset just after it.
    Semicolon(usize),
    /// Anything else: a number, an operator.
    Other,
}

/// `sql` without a final `;` (and any comments after it), so it can stand
/// inside parentheses.
pub fn without_final_semicolon(sql: &str) -> &str {
    let tokens = tokens(sql);
    match tokens.last() {
        Some(Token::Semicolon(end)) => sql[..end - 1].trim_end(),
        _ => sql,
    }
}

/// The bare words of `sql` (upper-cased) with their parenthesis depth.
#[cfg(test)]
fn words(sql: &str) -> impl Iterator<Item = (String, usize)> {
    tokens(sql).into_iter().filter_map(|t| match t {
        Token::Word(w, depth) => Some((w, depth)),
        _ => None,
    })
}

pub(super) fn tokens(sql: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut chars = sql.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '(' => {
                depth += 1;
                out.push(Token::Open);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                out.push(Token::Close(depth));
            }
            ',' => out.push(Token::Comma(depth)),
            ';' => out.push(Token::Semicolon(start + 1)),
            '\'' | '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                let mut text = String::new();
                loop {
                    match chars.next() {
                        // A doubled quote is an escaped quote.
                        Some((_, d)) if d == close && c != '[' && chars.peek().map(|(_, e)| *e) == Some(close) => {
                            chars.next();
                            text.push(close);
                        }
                        Some((_, d)) if d == close => break,
                        Some((_, d)) => text.push(d),
                        None => break,
                    }
                }
                out.push(Token::Quoted { quote: c, text, depth });
            }
            '-' if chars.peek().map(|(_, d)| *d) == Some('-') => {
                for (_, d) in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek().map(|(_, d)| *d) == Some('*') => {
                chars.next();
                let mut star = false;
                for (_, d) in chars.by_ref() {
                    if star && d == '/' {
                        break;
                    }
                    star = d == '*';
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut end = start + c.len_utf8();
                while let Some((i, d)) = chars.next_if(|(_, d)| d.is_alphanumeric() || *d == '_' || *d == '$') {
                    end = i + d.len_utf8();
                }
                out.push(Token::Word(sql[start..end].to_ascii_uppercase(), depth));
            }
            c if c.is_whitespace() => {}
            _ => out.push(Token::Other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines() {
        // (sql, verb, has a top-level WHERE)
        let cases = [
            ("SELECT 1", "SELECT", false),
            ("  select * from t where x", "SELECT", true),
            ("DELETE FROM t", "DELETE", false),
            ("delete from t where id = 1", "DELETE", true),
            ("DELETE FROM t -- WHERE id = 1", "DELETE", false),
            ("DELETE FROM t /* WHERE */", "DELETE", false),
            ("DELETE FROM \"where\"", "DELETE", false),
            ("DELETE FROM [where]", "DELETE", false),
            ("DELETE FROM `where`", "DELETE", false),
            ("DELETE FROM t RETURNING 'where'", "DELETE", false),
            ("DELETE FROM t WHERE id IN (SELECT id FROM u)", "DELETE", true),
            ("UPDATE t SET a = (SELECT b FROM u WHERE u.id = 1)", "UPDATE", false),
            ("UPDATE t SET a = 'it''s WHERE'", "UPDATE", false),
            ("UPDATE t SET a = 1 FROM u WHERE t.id = u.id", "UPDATE", true),
            ("WITH x AS (SELECT 1 WHERE 1) DELETE FROM t", "DELETE", false),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1) UPDATE t SET a = 1 WHERE a IN x",
                "UPDATE",
                true,
            ),
            ("EXPLAIN QUERY PLAN DELETE FROM t", "DELETE", false),
            ("EXPLAIN ANALYZE DELETE FROM t", "DELETE", false),
            ("/* lead */ -- more\nVACUUM INTO '/tmp/x.db'", "VACUUM", false),
            (
                "INSERT INTO t VALUES (1) ON CONFLICT DO UPDATE SET a = 2",
                "INSERT",
                false,
            ),
            ("WITH x AS (SELECT 1) FROM x", "FROM", false),
            ("ANALYZE", "ANALYZE", false),
            ("", "", false),
        ];
        for (sql, verb, has_where) in cases {
            let o = Outline::of(sql);
            assert_eq!((o.verb.as_str(), o.has_where()), (verb, has_where), "{sql}");
        }
        assert!(Outline::of("VACUUM INTO 'x.db'").has("INTO"));
        assert!(!Outline::of("VACUUM").has("INTO"));
        assert!(Outline::of("ALTER TABLE t DROP COLUMN c").has("DROP"));
        assert!(!Outline::of("ALTER TABLE t ADD COLUMN c DEFAULT 'drop'").has("DROP"));
        let o = Outline::of("EXPLAIN ANALYZE SELECT 1");
        assert!(o.explain && o.analyze && o.verb == "SELECT");
        let o = Outline::of("EXPLAIN SELECT 1");
        assert!(o.explain && !o.analyze);
        assert_eq!(Outline::of("COPY t TO 'x.csv'").object(), Some("T"));
    }

    #[test]
    fn calls_and_quoted_tables() {
        // (sql, functions called, quoted text where a table would be)
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("SELECT * FROM read_csv('x.csv')", &["read_csv"], &[]),
            ("SELECT * FROM READ_PARQUET ('x')", &["read_parquet"], &[]),
            ("SELECT * FROM \"glob\"('*')", &["glob"], &[]),
            ("SELECT * FROM main.read_text('/etc/passwd')", &["read_text"], &[]),
            ("SELECT 'read_csv(' AS a", &[], &[]),
            ("SELECT * FROM t -- read_csv(\n", &[], &[]),
            ("SELECT count(*) FROM t", &["count"], &[]),
            ("SELECT * FROM 'data.csv'", &[], &["data.csv"]),
            ("FROM 'data.csv'", &[], &["data.csv"]),
            ("SELECT * FROM \"data.parquet\"", &[], &["data.parquet"]),
            ("SELECT * FROM \"Users\"", &[], &[]),
            ("SELECT * FROM t, 'b.csv'", &[], &["b.csv"]),
            ("SELECT * FROM t JOIN 'b.json' USING (id)", &[], &["b.json"]),
            ("SELECT * FROM (SELECT * FROM 'in''ner.csv') s", &[], &["in'ner.csv"]),
            ("SELECT * FROM (SELECT 1) s, 'after.csv'", &[], &["after.csv"]),
            ("SELECT 'a.csv', 'b.csv' FROM t", &[], &[]),
            ("SELECT * FROM t WHERE a IN ('x.csv', 'y.csv')", &[], &[]),
            ("SELECT * FROM f(1, 'x.csv')", &["f"], &[]),
        ];
        for (sql, calls, tables) in cases {
            let o = Outline::of(sql);
            assert_eq!(o.calls, *calls, "{sql}");
            assert_eq!(o.quoted_tables, *tables, "{sql}");
        }
    }

    #[test]
    fn final_semicolons() {
        let cases = [
            ("SELECT 1", "SELECT 1"),
            ("SELECT 1;", "SELECT 1"),
            ("SELECT 1 ; -- done\n", "SELECT 1"),
            ("SELECT ';'", "SELECT ';'"),
            ("SELECT 1 -- ;", "SELECT 1 -- ;"),
        ];
        for (sql, want) in cases {
            assert_eq!(without_final_semicolon(sql), want, "{sql}");
        }
    }

    #[test]
    fn words_skip_comments_and_quotes() {
        let got: Vec<(String, usize)> = words("SELECT a /* b */, 'c' -- d\n FROM (e)").collect();
        assert_eq!(
            got,
            vec![
                ("SELECT".to_owned(), 0),
                ("A".to_owned(), 0),
                ("FROM".to_owned(), 0),
                ("E".to_owned(), 1)
            ]
        );
    }
}
