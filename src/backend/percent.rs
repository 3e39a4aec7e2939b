//! `%XX` escapes in URLs: one decoder for PostgreSQL connection URLs and
//! `sqlite:`/`duckdb:` file URLs. Errors never quote the text, which may hold
//! a password: the caller names the URL, redacted.

/// Why a text does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentError {
    /// A `%` not followed by two hex digits.
    Invalid,
    /// The decoded bytes are not UTF-8.
    NotUtf8,
}

/// `text` with every `%XX` replaced by its byte.
pub fn decode(text: &str) -> Result<String, PercentError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let byte = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(PercentError::Invalid)?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| PercentError::NotUtf8)
}

/// `text` with every byte but letters, digits and `-._~` written as `%XX`:
/// fit for any part of a URL.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_encoded_decodes_back() {
        for text in [
            "plain-name_1.x~",
            "Shop DB",
            "/var/run/postgresql",
            "a@b:c/d?e#f%",
            "é'\"",
        ] {
            let encoded = encode(text);
            assert!(
                encoded
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)),
                "{encoded}"
            );
            assert_eq!(decode(&encoded), Ok(text.to_owned()));
        }
        assert_eq!(encode("Shop DB"), "Shop%20DB");
    }

    #[test]
    fn escapes_decode_and_bad_ones_are_named() {
        let cases = [
            ("plain", Ok("plain")),
            ("p%40ss%2Fw", Ok("p@ss/w")),
            ("my%20db", Ok("my db")),
            ("%C3%A9", Ok("é")),
            ("%", Err(PercentError::Invalid)),
            ("%4", Err(PercentError::Invalid)),
            ("%zz", Err(PercentError::Invalid)),
            ("%FF", Err(PercentError::NotUtf8)),
        ];
        for (text, expected) in cases {
            assert_eq!(decode(text), expected.map(str::to_owned), "{text}");
        }
    }
}
