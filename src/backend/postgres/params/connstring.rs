//! Reading one connection string, in libpq's two forms: the URL
//! (`postgresql://user:password@host:port/dbname?key=value`, percent-decoded)
//! and `key=value` pairs (quoted or backslash-escaped values), each into the
//! [`Partial`] settings of that one source. No error echoes a piece of the
//! string: a stray space or quote can put part of a password anywhere. Apart
//! from `resolution.rs`, which layers the sources, because `password.rs`
//! reads strings the same way without resolving them.

use std::ops::Range;

use super::{ParamsError, err};

/// libpq's connection keywords. An unknown keyword is named in an error only
/// when it is one of these: any other text could be a piece of a password that
/// a stray space or quote split off (`password=pa ss=word`).
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// An option pgmcp does not take. Never echoes text that is not a libpq
/// keyword (see [`LIBPQ_KEYWORDS`]).
fn unknown_option(source: &str, key: &str) -> ParamsError {
    if LIBPQ_KEYWORDS.contains(&key) {
        err(source, format!("connection option \"{key}\" is not supported"))
    } else {
        err(
            source,
            "unknown connection option (not a libpq keyword; if a password contains spaces, quotes or \
             backslashes, quote it: password='...' or percent-encode it in a URL)",
        )
    }
}

/// Settings gathered from one source before defaults are applied.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Partial {
    pub(super) host: Option<String>,
    pub(super) port: Option<String>,
    pub(super) user: Option<String>,
    pub(super) password: Option<String>,
    pub(super) dbname: Option<String>,
    pub(super) application_name: Option<String>,
    pub(super) connect_timeout: Option<String>,
    pub(super) sslmode: Option<String>,
    pub(super) sslrootcert: Option<String>,
    pub(super) sslcert: Option<String>,
    pub(super) sslkey: Option<String>,
    pub(super) passfile: Option<String>,
    pub(super) options: Option<String>,
    pub(super) target_session_attrs: Option<String>,
}

impl Partial {
    fn set(&mut self, source: &str, key: &str, value: String) -> Result<(), ParamsError> {
        let slot = match key {
            "host" => &mut self.host,
            "port" => &mut self.port,
            "user" => &mut self.user,
            "password" => &mut self.password,
            "dbname" => &mut self.dbname,
            "application_name" => &mut self.application_name,
            "connect_timeout" => &mut self.connect_timeout,
            "sslmode" => &mut self.sslmode,
            "sslrootcert" => &mut self.sslrootcert,
            "sslcert" => &mut self.sslcert,
            "sslkey" => &mut self.sslkey,
            "passfile" => &mut self.passfile,
            "options" => &mut self.options,
            "target_session_attrs" => &mut self.target_session_attrs,
            other => return Err(unknown_option(source, other)),
        };
        *slot = Some(value);
        Ok(())
    }

    /// Fill every unset field from `other`.
    pub(super) fn or(self, other: Partial) -> Partial {
        Partial {
            host: self.host.or(other.host),
            port: self.port.or(other.port),
            user: self.user.or(other.user),
            password: self.password.or(other.password),
            dbname: self.dbname.or(other.dbname),
            application_name: self.application_name.or(other.application_name),
            connect_timeout: self.connect_timeout.or(other.connect_timeout),
            sslmode: self.sslmode.or(other.sslmode),
            sslrootcert: self.sslrootcert.or(other.sslrootcert),
            sslcert: self.sslcert.or(other.sslcert),
            sslkey: self.sslkey.or(other.sslkey),
            passfile: self.passfile.or(other.passfile),
            options: self.options.or(other.options),
            target_session_attrs: self.target_session_attrs.or(other.target_session_attrs),
        }
    }
}

/// `postgresql://[user[:password]@][host][:port][/dbname][?key=value&...]`
pub(super) fn parse_url(source: &str, url: &str) -> Result<Partial, ParamsError> {
    // Characters a URL cannot hold unencoded. Written raw in a password they
    // shift where the password ends (`u:pa ss#x@h` has no host to trust),
    // so refuse the URL rather than guess and show the guess.
    if let Some(at) = url
        .chars()
        .position(|c| c.is_whitespace() || c.is_control() || "#\"<>\\^`{|}".contains(c))
    {
        return Err(err(
            source,
            format!(
                "character {} of the URL must be percent-encoded (a space is %20, # is %23): percent-encode \
                 special characters in the user name and password",
                at + 1
            ),
        ));
    }
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let (authority, path, query) = url_parts(rest);
    // An @ past the host part means a / or ? inside the user name or
    // password cut the URL early: what follows would be read as the host,
    // port and database, and shown in errors and in `pgmcp check`.
    if path.is_some_and(|p| p.contains('@')) || query.is_some_and(|q| q.contains('@')) {
        return Err(err(
            source,
            "the URL has an @ after its host part: percent-encode @ / ? # : and spaces in the user name and \
             password (e.g. %2F for /)",
        ));
    }
    let mut out = Partial::default();
    let hostport = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => {
            match userinfo.split_once(':') {
                Some((u, p)) => {
                    out.user = Some(decode(source, u)?);
                    out.password = Some(decode(source, p)?);
                }
                None => out.user = Some(decode(source, userinfo)?),
            }
            hostport
        }
        None => authority,
    };
    // `host1:port1,host2:port2`: the same lists `host=` and `port=` give.
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for element in hostport.split(',') {
        let (host, port) = if let Some(v6) = element.strip_prefix('[') {
            let (addr, after) = v6
                .split_once(']')
                .ok_or_else(|| err(source, "unterminated IPv6 address in URL"))?;
            (addr.to_owned(), after.strip_prefix(':').map(str::to_owned))
        } else {
            match element.split_once(':') {
                Some((h, p)) => (decode(source, h)?, Some(p.to_owned())),
                None => (decode(source, element)?, None),
            }
        };
        if host.contains(',') {
            return Err(err(source, "a host name in the URL holds a comma"));
        }
        hosts.push(host);
        ports.push(port.unwrap_or_default());
    }
    if hosts.iter().any(|h| !h.is_empty()) {
        out.host = Some(hosts.join(","));
    }
    if ports.iter().any(|p| !p.is_empty()) {
        out.port = Some(ports.join(","));
    }
    if let Some(path) = path.filter(|p| !p.is_empty()) {
        out.dbname = Some(decode(source, path)?);
    }
    for (n, pair) in query.unwrap_or("").split('&').filter(|p| !p.is_empty()).enumerate() {
        // Not echoed: a `?` inside an unencoded password starts the query.
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            err(
                source,
                format!(
                    "URL parameter {} has no value (percent-encode ?, @, /, : and spaces in a password)",
                    n + 1
                ),
            )
        })?;
        let key = decode(source, k)?;
        out.set(source, &key, decode(source, v)?)?;
    }
    Ok(out)
}

pub(super) fn decode(source: &str, text: &str) -> Result<String, ParamsError> {
    crate::backend::percent::decode(text).map_err(|e| match e {
        crate::backend::percent::PercentError::Invalid => err(source, "invalid percent-encoding in URL"),
        crate::backend::percent::PercentError::NotUtf8 => err(source, "percent-encoding in URL is not UTF-8"),
    })
}

/// `host=localhost port=5432 dbname='my db'` (libpq's keyword/value form).
pub(super) fn parse_keyword_value(source: &str, text: &str) -> Result<Partial, ParamsError> {
    let mut out = Partial::default();
    each_keyword_value(source, text, |key, value, _| out.set(source, &key, value))?;
    Ok(out)
}

/// Hand each `key=value` of `text` to `f`, with the byte range the pair
/// spans (from the key to the end of the value, quotes included), in order:
/// an error `f` returns stops the walk where the parser stands, so errors
/// come in the order they occur in the text.
pub(super) fn each_keyword_value(
    source: &str,
    text: &str,
    mut f: impl FnMut(String, String, Range<usize>) -> Result<(), ParamsError>,
) -> Result<(), ParamsError> {
    let mut chars = text.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            return Ok(());
        };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        if chars.next().map(|(_, c)| c) != Some('=') {
            // The word is not echoed: after `password=pa ss`, it is the rest
            // of the password. Its position is enough to find it.
            let at = text.chars().count() - chars.count();
            return Err(err(
                source,
                format!(
                    "missing \"=\" after a word at character {at} of the connection string (quote values \
                     that contain spaces: password='...')"
                ),
            ));
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if(|(_, c)| *c == '\'').is_some() {
            loop {
                match chars.next().map(|(_, c)| c) {
                    None => {
                        return Err(err(source, "unterminated quoted string in connection string"));
                    }
                    Some('\'') => break,
                    Some('\\') => match chars.next() {
                        Some((_, c)) => value.push(c),
                        None => {
                            return Err(err(source, "unterminated quoted string in connection string"));
                        }
                    },
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some((_, c)) = chars.next_if(|(_, c)| !c.is_whitespace()) {
                if c == '\\' {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        let end = chars.peek().map_or(text.len(), |&(i, _)| i);
        f(key, value, start..end)?;
    }
}

/// What follows a URL's `scheme://`, in its parts: the authority (user,
/// password, hosts and ports), the path (the database) after the first `/`,
/// and the query after the first `?`.
pub(super) fn url_parts(rest: &str) -> (&str, Option<&str>, Option<&str>) {
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match main.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (main, None),
    };
    (authority, path, query)
}
