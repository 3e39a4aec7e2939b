//! [`split_password`]: a connection string with its password taken out, for
//! places others may see (a desktop client's config, a process's arguments),
//! and the password apart ([`WithoutPassword`]). Apart from resolving: it
//! rewrites a string as written, and the rewrite must read back as the same
//! settings, which is checked, not assumed.

use std::fmt;

use super::connstring::{Partial, decode, each_keyword_value, parse_keyword_value, parse_url, url_parts};
use super::{ParamsError, err};

/// A PostgreSQL connection string with its password taken out, for places
/// others may see (a desktop client's config, a process's arguments), and
/// the password apart, for a place they may not (`PGPASSWORD`). `Debug`
/// never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct WithoutPassword {
    /// The same settings in the same form (URL or `key=value`), minus the
    /// password.
    pub connstring: String,
    /// As the server receives it: percent-decoded from a URL, unquoted from
    /// `key=value`. `None` when there was none, or an empty one.
    pub password: Option<String>,
}

impl fmt::Debug for WithoutPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithoutPassword")
            .field("connstring", &self.connstring)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Take the password out of a connection string (URL or `key=value`), the
/// rest kept as written. `source` names the string in errors (which, like
/// every error here, never quote it).
///
/// The result is read again by the same parser and must come out as the
/// same settings without the password: a string this cannot be shown to
/// hold for is refused rather than guessed at.
pub fn split_password(source: &str, text: &str) -> Result<WithoutPassword, ParamsError> {
    let is_url = text.starts_with("postgres://") || text.starts_with("postgresql://");
    let (before, connstring) = if is_url {
        (parse_url(source, text)?, url_without_password(source, text)?)
    } else {
        let before = parse_keyword_value(source, text)?;
        let mut kept = Vec::new();
        each_keyword_value(source, text, |key, _, span| {
            if key != "password" {
                kept.push(&text[span]);
            }
            Ok(())
        })?;
        (before, kept.join(" "))
    };
    let after = if is_url {
        parse_url(source, &connstring)
    } else {
        parse_keyword_value(source, &connstring)
    };
    let expected = Partial {
        password: None,
        ..before.clone()
    };
    if after.as_ref() != Ok(&expected) {
        return Err(err(
            source,
            "the password could not be taken out of this connection string: give it in PGPASSWORD or \
             ~/.pgpass instead",
        ));
    }
    Ok(WithoutPassword {
        connstring,
        password: before.password.filter(|p| !p.is_empty()),
    })
}

/// `url` without `:password` in its user part and without `password=` in
/// its query. `url` has passed [`parse_url`], so its parts are where that
/// function found them.
fn url_without_password(source: &str, url: &str) -> Result<String, ParamsError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| err(source, "not a postgresql:// URL"))?;
    let (authority, path, query) = url_parts(rest);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => match userinfo.split_once(':') {
            // An empty user name stays: `@host` reads as one, as before.
            Some((user, _)) => format!("{user}@{hostport}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let mut out = format!("{scheme}://{authority}");
    if let Some(path) = path {
        out.push('/');
        out.push_str(path);
    }
    let mut kept = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let key = pair.split_once('=').map_or(pair, |(k, _)| k);
        if decode(source, key)? != "password" {
            kept.push(pair);
        }
    }
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_taken_out_of_connection_strings() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            (
                "postgresql://alice:s3cret@db/shop",
                "postgresql://alice@db/shop",
                Some("s3cret"),
            ),
            (
                "postgres://bob:p%40ss%2Fw%3A@[::1]:5433/app?sslmode=require",
                "postgres://bob@[::1]:5433/app?sslmode=require",
                Some("p@ss/w:"),
            ),
            (
                "postgresql://alice@db/shop?password=x%26y&application_name=a",
                "postgresql://alice@db/shop?application_name=a",
                Some("x&y"),
            ),
            (
                "postgresql://alice@db/shop?password=x",
                "postgresql://alice@db/shop",
                Some("x"),
            ),
            ("postgresql://:pw@db/shop", "postgresql://@db/shop", Some("pw")),
            ("postgresql://u:@db", "postgresql://u@db", None),
            ("postgresql://alice@db/shop", "postgresql://alice@db/shop", None),
            ("postgresql://db", "postgresql://db", None),
            (
                r"host=db user=eve password='it\'s a secret' dbname=shop",
                "host=db user=eve dbname=shop",
                Some("it's a secret"),
            ),
            ("password=x", "", Some("x")),
            ("host=db  port = 5432 password=", "host=db port = 5432", None),
            (r"password=a\ b host=db", "host=db", Some("a b")),
            ("host=db dbname='my db'", "host=db dbname='my db'", None),
        ];
        for (given, connstring, password) in cases {
            let split = split_password("--database", given).unwrap_or_else(|e| panic!("{given}: {e}"));
            assert_eq!(split.connstring, *connstring, "{given}");
            assert_eq!(split.password.as_deref(), *password, "{given}");
            assert!(!format!("{split:?}").contains("secret"), "{given}");
        }
    }

    #[test]
    fn password_split_refuses_what_the_parser_refuses() {
        for given in [
            "postgresql://u:pa ss@h/db",
            "password='open",
            "host=db oops",
            "postgresql://u:p%zz@h",
        ] {
            let e = split_password("--database", given).expect_err(given);
            assert_eq!(e.source_name, "--database", "{given}");
        }
    }
}
