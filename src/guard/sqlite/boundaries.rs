//! Where one SQLite statement ends: text split as SQLite's own
//! `sqlite3_complete` splits it, so a trigger body's `;` does not end the
//! statement. Apart from the rules because it runs before anything is
//! prepared, to count the statements (`crate::guard::one_statement`).

use crate::guard::outline::{Dialect, Token, tokens};

/// The statements of `sql` as SQLite splits them: the text up to each `;`
/// that completes a statement (`sqlite3_complete`, so a trigger body's own
/// `;` does not split), keeping only pieces that hold more than comments.
pub fn statements(sql: &str) -> Vec<&str> {
    let tokens = tokens(sql, Dialect::Sqlite);
    let mut out = Vec::new();
    let mut start = 0;
    let mut has_content = false;
    for token in &tokens {
        match token {
            Token::Semicolon(end) => {
                if has_content && complete(&sql[start..*end]) {
                    out.push(&sql[start..*end]);
                    start = *end;
                    has_content = false;
                }
            }
            _ => has_content = true,
        }
    }
    if has_content {
        out.push(&sql[start..]);
    }
    out
}

/// SQLite's own test for "this text ends a statement".
fn complete(text: &str) -> bool {
    match std::ffi::CString::new(text) {
        // SAFETY: a valid NUL-terminated string; sqlite3_complete only reads it.
        Ok(c) => unsafe { rusqlite::ffi::sqlite3_complete(c.as_ptr()) != 0 },
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitting() {
        let cases: [(&str, usize); 12] = [
            ("SELECT 1", 1),
            ("SELECT 1;", 1),
            ("SELECT 1; -- done", 1),
            ("SELECT 1; /* c */ ;", 1),
            ("SELECT 1; SELECT 2", 2),
            ("SELECT 1;SELECT 2;", 2),
            ("SELECT ';' AS a", 1),
            ("SELECT 1 -- ; DROP TABLE t", 1),
            (
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN DELETE FROM u; UPDATE v SET a = 1; END",
                1,
            ),
            (
                "CREATE TRIGGER g AFTER INSERT ON t BEGIN DELETE FROM u; END; DROP TABLE t",
                2,
            ),
            ("", 0),
            ("-- nothing\n;", 0),
        ];
        for (sql, n) in cases {
            assert_eq!(statements(sql).len(), n, "{sql}");
        }
    }
}
