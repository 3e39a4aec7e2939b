//! The bearer tokens: read from the tokens file, taken from a request's
//! `Authorization` header, and matched to tell which token a request
//! carries ([`Caller`]). Apart because a token is a password: the file is
//! refused when others can read it, and a match takes the same time
//! whichever token, and however much of one, matched.

use super::ListenError;

/// The tokens in `text`: one per line, blank lines and `#` comments skipped.
pub fn tokens_in(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Read the tokens file, refusing one that group or others can read: a
/// token is a password.
pub fn read_tokens(path: &std::path::Path) -> Result<Vec<String>, ListenError> {
    let fail = |message: String| ListenError::Tokens {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| fail(e.to_string()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(fail(format!(
                "group or others can read it (mode {:o}): chmod 600 {}",
                mode & 0o777,
                path.display()
            )));
        }
    }
    let tokens = tokens_in(&text);
    if tokens.is_empty() {
        return Err(fail("holds no token".to_owned()));
    }
    Ok(tokens)
}

/// Which of `tokens` `presented` is (the first, if listed twice), compared
/// in constant time: how long the answer takes says nothing of how much of
/// a token matched, nor of which one did (every token is compared whole,
/// and the index chosen without a branch).
pub(super) fn token_index(tokens: &[String], presented: &[u8]) -> Option<usize> {
    let mut found = usize::MAX;
    for (index, token) in tokens.iter().enumerate().rev() {
        let token = token.as_bytes();
        let mut differ = u8::from(token.len() != presented.len());
        for (i, byte) in token.iter().enumerate() {
            differ |= byte ^ presented.get(i).copied().unwrap_or(0);
        }
        let hit = usize::from(differ == 0).wrapping_neg();
        found = (index & hit) | (found & !hit);
    }
    (found != usize::MAX).then_some(found)
}

/// Who sent a request: the index of the token it carried, or `None` on a
/// server without tokens (where everyone who can connect is one caller).
/// It rides in the request's extensions, so the session manager sees who
/// opened a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caller(pub(super) Option<usize>);

/// The bearer token an `Authorization` header carries.
pub(super) fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest.trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_exactly() {
        let tokens = vec!["s3cret-token".to_owned(), "other".to_owned()];
        // (presented, matches)
        let cases: [(&[u8], bool); 7] = [
            (b"s3cret-token", true),
            (b"other", true),
            (b"s3cret-toke", false),
            (b"s3cret-token2", false),
            (b"", false),
            (b"S3CRET-TOKEN", false),
            (b"othe\0", false),
        ];
        for (presented, matches) in cases {
            assert_eq!(token_index(&tokens, presented).is_some(), matches, "{presented:?}");
        }
        assert_eq!(token_index(&[], b"anything"), None);
        // Which token: the first, if one is listed twice.
        let tokens = ["a1", "b2", "a1"].map(str::to_owned);
        assert_eq!(token_index(&tokens, b"a1"), Some(0));
        assert_eq!(token_index(&tokens, b"b2"), Some(1));
    }

    #[test]
    fn bearer_headers_are_read() {
        let cases: [(&[u8], Option<&[u8]>); 5] = [
            (b"Bearer abc", Some(b"abc")),
            (b"bearer  abc ", Some(b"abc")),
            (b"Basic abc", None),
            (b"Bearer", None),
            (b"Bearerabc", None),
        ];
        for (header, token) in cases {
            assert_eq!(bearer(header), token, "{header:?}");
        }
    }

    #[test]
    fn token_files_skip_blanks_and_comments() {
        assert_eq!(tokens_in("# team tokens\n\n  a1 \nb2\n"), ["a1", "b2"]);
    }
}
