//! What the tokens of one statement say about it, for the engines whose own
//! parser decides what the statement is (SQLite, DuckDB) but does not report
//! every detail a rule needs: whether a `DELETE` has a `WHERE` of its own,
//! which way a `COPY` goes, which functions are called, which quoted names
//! stand where a table would. The tokens are the engine's own
//! (`super::lexer` follows each engine's tokenizer exactly), so a keyword
//! inside a comment, a string or a quoted name never counts, and a word the
//! engine reads as one name (`x<U+00A0>WHERE` in SQLite) is one word here. Pure.

use super::lexer::{self, Lexeme, Span};

/// Whose tokenizer reads the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    DuckDb,
}

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
    /// Every string literal, at any depth, unescaped: the file names a
    /// statement can give its engine (`COPY ... TO 'x'`, `ATTACH 'x'`,
    /// `read_csv('x')`) are among them.
    pub strings: Vec<String>,
    /// Every quoted identifier, at any depth, unescaped: DuckDB also takes a
    /// file name written as one (`COPY t TO "x.csv"`, `ATTACH "x.db"`).
    pub names: Vec<String>,
    /// The file an `ATTACH` opens or a `VACUUM ... INTO` writes, as written.
    pub file: Option<Operand>,
    /// SQLite: the tables whose own definition resolves conflicts by
    /// replacing (`PRIMARY KEY ON CONFLICT REPLACE`), read from the schema
    /// by the backend: a plain `INSERT` or `UPDATE` into one overwrites or
    /// deletes rows it does not name.
    pub replacing_tables: Vec<String>,
}

/// How a statement names its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// One string literal: the name itself.
    Literal(String),
    /// An expression (`'/dev/' || 'stdin'`): the name is only known when the
    /// engine runs it.
    Computed,
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
    /// The outline of `sql` as SQLite reads it.
    pub fn sqlite(sql: &str) -> Outline {
        Outline::of(sql, Dialect::Sqlite)
    }

    /// The outline of `sql` as DuckDB reads it.
    pub fn duckdb(sql: &str) -> Outline {
        Outline::of(sql, Dialect::DuckDb)
    }

    pub fn of(sql: &str, dialect: Dialect) -> Outline {
        let mut outline = Outline::default();
        let mut in_with = false;
        let tokens = tokens(sql, dialect);
        // The depths of the FROM lists being read (a subquery's inside its
        // parent's), and whether the next token stands where a table would.
        let mut from_lists: Vec<usize> = Vec::new();
        let mut table_next = false;
        for (i, token) in tokens.iter().enumerate() {
            let before_paren = matches!(tokens.get(i + 1), Some(Token::Open('(')));
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
                    if *quote == '\'' {
                        // Adjacent literals are one string to the engine
                        // ('/pro'<newline>'c/self'): keep the joined text too.
                        if let Some(Token::Quoted {
                            quote: '\'',
                            text: before,
                            ..
                        }) = i.checked_sub(1).map(|j| &tokens[j])
                        {
                            outline.strings.push(format!("{before}{text}"));
                        }
                        outline.strings.push(text.clone());
                    } else {
                        outline.names.push(text.clone());
                    }
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
        outline.file = file_operand(&tokens, &outline.verb);
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

    /// An `INSERT` that says it overwrites rows already there: `REPLACE`,
    /// `INSERT OR REPLACE`, `... ON CONFLICT DO UPDATE`.
    pub fn says_overwrite(&self) -> bool {
        let words: Vec<&str> = self.top_level_words().collect();
        self.verb == "REPLACE" || self.says_or_replace() || words.windows(2).any(|w| w == ["DO", "UPDATE"])
    }

    /// `INSERT OR REPLACE`, `UPDATE OR REPLACE`: the conflict clause right
    /// after the verb.
    pub fn says_or_replace(&self) -> bool {
        matches!(self.top_level.as_slice(), [or, replace, ..] if or == "OR" && replace == "REPLACE")
    }

    /// Whether `table` is one of [`Outline::replacing_tables`].
    pub fn replaces_in(&self, table: &str) -> bool {
        self.replacing_tables.iter().any(|t| t.eq_ignore_ascii_case(table))
    }

    /// An `INSERT` whose rows are a `VALUES` list (or `DEFAULT VALUES`): it
    /// names each row it writes, as an `UPDATE ... WHERE` of those keys
    /// would. Anything else (a query, a table) can name every row there is.
    pub fn fed_by_values(&self) -> bool {
        self.has("VALUES") && !["SELECT", "FROM", "TABLE", "WITH"].iter().any(|w| self.has(w))
    }
}

/// A token outside comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A bare word, upper-cased, with its parenthesis depth.
    Word(String, usize),
    /// A string literal (`quote` is `'`: `'...'`, `E'...'`, `$$...$$`) or a
    /// quoted identifier (`"..."`, `` `...` ``, `[...]`), its text unescaped,
    /// with its parenthesis depth.
    Quoted {
        quote: char,
        text: String,
        depth: usize,
    },
    /// `(` (or DuckDB's `[`, `{`); a closing one with the depth after it; `,`
    /// with its depth. Brackets nest like parentheses: a `WHERE` inside one
    /// is not the statement's own.
    Open(char),
    Close(usize),
    Comma(usize),
    /// A `;`, with the byte offset just after it.
    Semicolon(usize),
    /// Anything else: a number, an operator.
    Other,
}

/// The file operand of `ATTACH [DATABASE] <file> AS ...` and `VACUUM
/// [schema] INTO <file>`: the tokens between those words, one string literal
/// or else computed.
fn file_operand(tokens: &[Token], verb: &str) -> Option<Operand> {
    let is_word = |t: &Token, w: &str| matches!(t, Token::Word(word, 0) if word == w);
    let start = tokens.iter().position(|t| is_word(t, verb))? + 1;
    let rest = &tokens[start..];
    let operand: Vec<&Token> = match verb {
        "ATTACH" => rest
            .iter()
            .skip_while(|t| is_word(t, "DATABASE"))
            .take_while(|t| !is_word(t, "AS"))
            .collect(),
        "VACUUM" => rest
            .iter()
            .skip_while(|t| !is_word(t, "INTO"))
            .skip(1)
            .take_while(|t| !matches!(t, Token::Semicolon(_)))
            .collect(),
        _ => return None,
    };
    if verb == "VACUUM" && !rest.iter().any(|t| is_word(t, "INTO")) {
        return None;
    }
    Some(match operand.as_slice() {
        [Token::Quoted { quote: '\'', text, .. }] => Operand::Literal(text.clone()),
        _ => Operand::Computed,
    })
}

/// Where the statement an `EXPLAIN` explains may begin: the byte offsets of
/// the first `max` tokens outside parentheses after the first token (the
/// `EXPLAIN` itself). DuckDB's `EXPLAIN [ANALYZE] [(options)] statement`
/// ends with the statement it explains (and, with `ANALYZE`, runs), so that
/// statement is the text from one of these offsets to the end; the backend
/// asks DuckDB which of them it reads as one statement, rather than trusting
/// a grammar of options read here.
pub fn explained_starts(sql: &str, dialect: Dialect, max: usize) -> Vec<usize> {
    let spans = match dialect {
        Dialect::Sqlite => lexer::sqlite::tokens(sql),
        Dialect::DuckDb => lexer::duckdb::tokens(sql),
    };
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, (lexeme, start, _)) in spans.into_iter().enumerate() {
        if depth == 0 && i > 0 && !matches!(lexeme, Lexeme::Close | Lexeme::Semicolon | Lexeme::Comma) {
            if out.len() == max {
                break;
            }
            out.push(start);
        }
        match lexeme {
            Lexeme::Open(_) => depth += 1,
            Lexeme::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

/// A table definition (SQLite's `CREATE TABLE` text) that resolves some
/// conflict by replacing: `ON CONFLICT REPLACE` on a column or a constraint.
pub fn defines_replace(create_table: &str) -> bool {
    let words: Vec<String> = tokens(create_table, Dialect::Sqlite)
        .into_iter()
        .filter_map(|t| match t {
            Token::Word(w, _) => Some(w),
            _ => None,
        })
        .collect();
    words
        .windows(3)
        .any(|w| w[0] == "ON" && w[1] == "CONFLICT" && w[2] == "REPLACE")
}

/// `sql` without a final `;` (and any comments after it), as DuckDB reads
/// it, so it can stand inside parentheses.
pub fn without_final_semicolon(sql: &str) -> &str {
    let tokens = tokens(sql, Dialect::DuckDb);
    match tokens.last() {
        Some(Token::Semicolon(end)) => sql[..end - 1].trim_end(),
        _ => sql,
    }
}

/// How many statements `sql` holds, split at each `;` the engine's
/// tokenizer reads as one (never one inside a string, a quoted name or a
/// comment), counting only pieces with more than comments in them. Where
/// the engine itself can count (DuckDB's `duckdb_extract_statements`, at
/// call time), its count decides; this is the early word, before any
/// database is open.
pub fn statement_count(sql: &str, dialect: Dialect) -> usize {
    let mut count = 0;
    let mut content = false;
    for token in tokens(sql, dialect) {
        match token {
            Token::Semicolon(_) => {
                count += usize::from(content);
                content = false;
            }
            _ => content = true,
        }
    }
    count + usize::from(content)
}

/// The bare words of `sql` (upper-cased) with their parenthesis depth.
#[cfg(test)]
fn words(sql: &str, dialect: Dialect) -> impl Iterator<Item = (String, usize)> {
    tokens(sql, dialect).into_iter().filter_map(|t| match t {
        Token::Word(w, depth) => Some((w, depth)),
        _ => None,
    })
}

/// The tokens of `sql` as the engine reads them, with their depths.
pub(super) fn tokens(sql: &str, dialect: Dialect) -> Vec<Token> {
    let spans: Vec<Span> = match dialect {
        Dialect::Sqlite => lexer::sqlite::tokens(sql),
        Dialect::DuckDb => lexer::duckdb::tokens(sql),
    };
    let mut out = Vec::with_capacity(spans.len());
    let mut depth = 0usize;
    for (lexeme, start, end) in spans {
        let text = String::from_utf8_lossy(sql.as_bytes().get(start..end).unwrap_or_default());
        out.push(match lexeme {
            Lexeme::Word => Token::Word(text.to_ascii_uppercase(), depth),
            Lexeme::QuotedName(open) => Token::Quoted {
                quote: open,
                text: lexer::unquote(&text, lexeme),
                depth,
            },
            Lexeme::String => Token::Quoted {
                quote: '\'',
                text: lexer::unquote(&text, lexeme),
                depth,
            },
            Lexeme::Open(c) => {
                depth += 1;
                Token::Open(c)
            }
            Lexeme::Close => {
                depth = depth.saturating_sub(1);
                Token::Close(depth)
            }
            Lexeme::Comma => Token::Comma(depth),
            Lexeme::Semicolon => Token::Semicolon(end),
            Lexeme::Other => Token::Other,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_an_explained_statement_may_begin() {
        fn starts(sql: &str) -> Vec<&str> {
            explained_starts(sql, Dialect::DuckDb, 4)
                .into_iter()
                .map(|at| &sql[at..])
                .collect()
        }
        assert_eq!(
            starts("EXPLAIN ANALYSE DELETE FROM t"),
            ["ANALYSE DELETE FROM t", "DELETE FROM t", "FROM t", "t"]
        );
        assert_eq!(
            starts("EXPLAIN (ANALYZE, FORMAT json) DELETE FROM t"),
            ["(ANALYZE, FORMAT json) DELETE FROM t", "DELETE FROM t", "FROM t", "t"]
        );
        // Comments are not tokens: a start is never inside one.
        assert_eq!(
            starts("EXPLAIN /* ANALYZE */ ANALYZE\n-- x\nSELECT 1"),
            ["ANALYZE\n-- x\nSELECT 1", "SELECT 1", "1"]
        );
        assert!(starts("EXPLAIN").is_empty());
    }

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
        for dialect in [Dialect::Sqlite, Dialect::DuckDb] {
            for (sql, verb, has_where) in cases {
                let o = Outline::of(sql, dialect);
                assert_eq!(
                    (o.verb.as_str(), o.has_where()),
                    (verb, has_where),
                    "{sql} ({dialect:?})"
                );
            }
        }
        assert!(Outline::sqlite("VACUUM INTO 'x.db'").has("INTO"));
        assert!(!Outline::duckdb("VACUUM").has("INTO"));
        assert!(Outline::duckdb("ALTER TABLE t DROP COLUMN c").has("DROP"));
        assert!(!Outline::duckdb("ALTER TABLE t ADD COLUMN c DEFAULT 'drop'").has("DROP"));
        let o = Outline::duckdb("EXPLAIN ANALYZE SELECT 1");
        assert!(o.explain && o.analyze && o.verb == "SELECT");
        let o = Outline::duckdb("EXPLAIN SELECT 1");
        assert!(o.explain && !o.analyze);
        assert_eq!(Outline::duckdb("COPY t TO 'x.csv'").object(), Some("T"));
    }

    /// Text that hides or fakes a `WHERE` from a tokenizer that reads SQL
    /// differently from the engine: the outline must see what the engine sees.
    #[test]
    fn where_as_the_engine_reads_it() {
        // (sql, SQLite sees a WHERE of its own, DuckDB does)
        let cases = [
            ("DELETE FROM t /* /* */ WHERE */", true, false),
            ("DELETE FROM t /* /* */ WHERE id = 1", true, false),
            ("DELETE FROM t /* /* */ */ WHERE id = 1", true, true),
            ("DELETE FROM t AS x\u{a0}WHERE", false, true),
            ("DELETE FROM t AS x\u{3000}WHERE", false, true),
            ("DELETE FROM t AS x\u{2000}WHERE", false, true),
            ("DELETE FROM t AS x\u{85}WHERE", false, false),
            ("DELETE FROM t AS x\u{feff}WHERE", false, true),
            ("DELETE FROM t \u{feff}WHERE id = 1", true, true),
            ("DELETE FROM t /* ' */ AS x\u{a0}WHERE", false, false),
            ("DELETE FROM t RETURNING E'\\'' AS x\u{3000}WHERE", false, false),
            ("DELETE FROM t\u{b}WHERE id = 1", true, true),
            ("DELETE FROM t \u{b}WHERE id = 1", true, true),
            ("DELETE FROM t -- x\rWHERE id = 1", false, true),
            ("DELETE FROM t RETURNING $$ WHERE $$", true, false),
            ("DELETE FROM t RETURNING $a$ WHERE $a$", true, false),
            ("DELETE FROM t RETURNING E'\\' WHERE '", true, false),
            ("DELETE FROM t RETURNING '\\' WHERE id = 1", true, true),
            ("DELETE FROM t RETURNING [1 WHERE]", false, false),
            ("DELETE FROM [t WHERE]", false, false),
            ("DELETE FROM t AS `x WHERE`", false, false),
            ("DELETE FROM t AS \"x WHERE\"", false, false),
            ("DELETE FROM t RETURNING x'00' WHERE id = 1", true, true),
            ("DELETE FROM t\0 WHERE id = 1", false, true),
            ("UPDATE t SET a = 1 /* /* */ WHERE */", true, false),
            ("UPDATE t SET a = 1 -- WHERE a = 2", false, false),
            ("UPDATE t SET a = $$x$$ WHERE a = 2", true, true),
        ];
        for (sql, sqlite, duckdb) in cases {
            assert_eq!(Outline::sqlite(sql).has_where(), sqlite, "SQLite: {sql:?}");
            assert_eq!(Outline::duckdb(sql).has_where(), duckdb, "DuckDB: {sql:?}");
        }
        // A call inside a DuckDB list literal is a call.
        assert_eq!(Outline::duckdb("SELECT [random()]").calls, ["random"]);
        assert_eq!(Outline::duckdb("SELECT {'a': random()}").calls, ["random"]);
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
            let o = Outline::duckdb(sql);
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
        let got: Vec<(String, usize)> = words("SELECT a /* b */, 'c' -- d\n FROM (e)", Dialect::Sqlite).collect();
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
