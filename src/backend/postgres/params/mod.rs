//! Where and as whom to connect: resolved the way psql does it.
//!
//! Precedence, for each setting: `PGMCP_PG_CONNSTRING` (URL or `key=value` form),
//! else the config file's `connection` section, else the libpq environment
//! variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`,
//! `PGAPPNAME`, `PGCONNECT_TIMEOUT`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`,
//! `PGSSLKEY`, `PGPASSFILE`, `PGOPTIONS`, `PGTARGETSESSIONATTRS`), else libpq's
//! defaults. Several hosts (`host=a,b port=1,2`, or `postgresql://a:1,b:2/db`)
//! are tried in order, as libpq does. The password file itself is
//! read at connect time (see `passfile.rs`), as libpq does.
//! Pure: the environment comes in as a function, so every rule is table-tested.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

/// A TCP host name/address or a Unix-socket directory (a host starting with `/`).
#[derive(Clone, PartialEq, Eq)]
pub enum Host {
    Tcp(String),
    Unix(PathBuf),
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Tcp(h) => write!(f, "{h}"),
            Host::Unix(d) => write!(f, "{}", d.display()),
        }
    }
}

impl Host {
    fn from_text(text: &str) -> Host {
        if text.starts_with('/') {
            Host::Unix(PathBuf::from(text))
        } else {
            Host::Tcp(text.to_owned())
        }
    }
}

/// Which server of several to settle on (`target_session_attrs`), with
/// libpq's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionAttrs {
    /// The first that answers.
    Any,
    /// One that is not in recovery (libpq also asks that writes be the
    /// default; pgmcp sets its own default, so a primary is what it looks for).
    ReadWrite,
    /// A standby, or a primary whose transactions are read-only by default.
    ReadOnly,
    /// One that is not in recovery.
    Primary,
    /// One in recovery.
    Standby,
    /// A standby if any answers, else any.
    PreferStandby,
}

impl SessionAttrs {
    pub const NAMES: [&'static str; 6] = ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"];

    fn from_name(name: &str) -> Option<SessionAttrs> {
        Some(match name {
            "any" => SessionAttrs::Any,
            "read-write" => SessionAttrs::ReadWrite,
            "read-only" => SessionAttrs::ReadOnly,
            "primary" => SessionAttrs::Primary,
            "standby" => SessionAttrs::Standby,
            "prefer-standby" => SessionAttrs::PreferStandby,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// TLS use, with libpq's meanings. TLS is never used over a Unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Never.
    Disable,
    /// Plaintext first; TLS only if the server turns plaintext down.
    Allow,
    /// TLS when the server offers it, plaintext when it does not (libpq's default).
    Prefer,
    /// TLS or nothing. The certificate is not checked, unless a root
    /// certificate file exists (`sslrootcert`, or `~/.postgresql/root.crt`):
    /// then it is checked like `verify-ca`, as libpq does.
    Require,
    /// TLS, and the certificate chain must lead to a trusted root.
    VerifyCa,
    /// `verify-ca`, and the certificate must name the host connected to.
    VerifyFull,
}

impl SslMode {
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Every mode, by name: what `sslmode` may be set to.
    pub const NAMES: [&str; 6] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

    pub fn from_name(name: &str) -> Option<SslMode> {
        match name {
            "disable" => Some(SslMode::Disable),
            "allow" => Some(SslMode::Allow),
            "prefer" => Some(SslMode::Prefer),
            "require" => Some(SslMode::Require),
            "verify-ca" => Some(SslMode::VerifyCa),
            "verify-full" => Some(SslMode::VerifyFull),
            _ => None,
        }
    }

    /// Whether a connection without TLS is refused.
    pub fn requires_tls(self) -> bool {
        matches!(self, SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

/// Which certificates the server's certificate must chain to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCert {
    /// `sslrootcert=<file>`: the certificates in that PEM file, and no others.
    File(PathBuf),
    /// `sslrootcert=system`: the operating system's trusted CAs.
    System,
    /// Not given: `~/.postgresql/root.crt` when that file exists (libpq's
    /// default), else the operating system's trusted CAs.
    Default(Option<PathBuf>),
}

/// Where the password came from, for error messages that say what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordSource {
    /// The connection string, named by the setting it came from
    /// (`PGMCP_PG_CONNSTRING`, `--database`, ...).
    ConnectionString(&'static str),
    Environment,
    /// The password file, and the line (from 1) that matched.
    Passfile {
        path: PathBuf,
        line: usize,
    },
    Prompt,
}

impl fmt::Display for PasswordSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PasswordSource::ConnectionString(setting) => write!(f, "{setting}"),
            PasswordSource::Environment => write!(f, "PGPASSWORD"),
            PasswordSource::Passfile { path, .. } => write!(f, "the password file {}", path.display()),
            PasswordSource::Prompt => write!(f, "the password typed at the prompt"),
        }
    }
}

/// The config file's `connection` section, validated: where to connect when
/// no connection string is given. Unset fields fall back to the libpq
/// environment variables (`PGHOST`, ...) and then libpq's defaults. There is
/// deliberately no password: it comes from `PGPASSWORD`, the password file or
/// a connection string.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConnectionConfig {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub dbname: Option<String>,
    pub user: Option<String>,
    pub sslmode: Option<SslMode>,
    pub application_name: Option<String>,
    pub connect_timeout_seconds: Option<u64>,
    /// A PEM file of the CAs to trust, or `system`.
    pub sslrootcert: Option<String>,
    /// Client certificate (PEM) and its key, for servers that ask for one.
    pub sslcert: Option<String>,
    pub sslkey: Option<String>,
    /// The password file to read instead of `~/.pgpass`.
    pub passfile: Option<String>,
    /// A role every statement runs as (`SET LOCAL ROLE` in each transaction),
    /// whoever the login is. Applies however the connection is given.
    pub role: Option<String>,
    /// In read-only mode without `role`, run as the login even when it is a
    /// superuser (or can otherwise reach outside the database), instead of
    /// as `pg_read_all_data`.
    pub read_only_as_login: bool,
}

/// Everything needed to open a connection. `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectParams {
    /// The first host to try, and its port.
    pub host: Host,
    pub port: u16,
    /// The hosts to try after it, in order, with their ports.
    pub more_hosts: Vec<(Host, u16)>,
    /// Which of the hosts to settle on.
    pub target_session_attrs: SessionAttrs,
    /// `options`: command-line options for the server (`-c name=value`),
    /// sent as libpq sends them.
    pub options: Option<String>,
    pub user: String,
    /// No user name was given: `user` is the operating system's (libpq's
    /// default), which errors about the user name say.
    pub os_user: bool,
    pub password: Option<String>,
    pub dbname: Option<String>,
    pub application_name: String,
    pub connect_timeout: Duration,
    pub sslmode: SslMode,
    pub sslrootcert: RootCert,
    /// The client certificate; used when the file exists. Default
    /// `~/.postgresql/postgresql.crt`.
    pub sslcert: Option<PathBuf>,
    /// The client certificate's key. Default `~/.postgresql/postgresql.key`.
    pub sslkey: Option<PathBuf>,
    /// The password file, read when the server asks for a password and none
    /// was given: `passfile`, else `PGPASSFILE`, else `~/.pgpass`.
    pub passfile: Option<PathBuf>,
    /// Where `password` came from; `None` when there is none.
    pub password_from: Option<PasswordSource>,
}

impl fmt::Debug for ConnectParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectParams")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("more_hosts", &self.more_hosts)
            .field("target_session_attrs", &self.target_session_attrs)
            .field("options", &self.options)
            .field("user", &self.user)
            .field("os_user", &self.os_user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("dbname", &self.dbname)
            .field("application_name", &self.application_name)
            .field("connect_timeout", &self.connect_timeout)
            .field("sslmode", &self.sslmode)
            .field("sslrootcert", &self.sslrootcert)
            .field("sslcert", &self.sslcert)
            .field("sslkey", &self.sslkey)
            .field("passfile", &self.passfile)
            .field("password_from", &self.password_from)
            .finish()
    }
}

impl ConnectParams {
    /// `host:port` or the socket path, for error messages (never the
    /// password); with several hosts, each, comma-separated.
    pub fn target(&self) -> String {
        std::iter::once((&self.host, self.port))
            .chain(self.more_hosts.iter().map(|(h, p)| (h, *p)))
            .map(|(host, port)| match host {
                Host::Tcp(h) if h.contains(':') => format!("[{h}]:{port}"),
                Host::Tcp(h) => format!("{h}:{port}"),
                Host::Unix(dir) => format!("{}/.s.PGSQL.{port}", dir.display()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// One set of parameters per host, in the order they are tried.
    pub fn each_host(&self) -> Vec<ConnectParams> {
        std::iter::once((self.host.clone(), self.port))
            .chain(self.more_hosts.iter().cloned())
            .map(|(host, port)| ConnectParams {
                host,
                port,
                more_hosts: Vec::new(),
                ..self.clone()
            })
            .collect()
    }
}

/// A connection string or setting that cannot be used. Never contains a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct ParamsError {
    /// Where the bad value came from, e.g. `PGMCP_PG_CONNSTRING` or `PGPORT`.
    pub source_name: String,
    pub message: String,
}

fn err(source_name: &str, message: impl Into<String>) -> ParamsError {
    ParamsError {
        source_name: source_name.to_owned(),
        message: message.into(),
    }
}

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
struct Partial {
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    password: Option<String>,
    dbname: Option<String>,
    application_name: Option<String>,
    connect_timeout: Option<String>,
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    sslcert: Option<String>,
    sslkey: Option<String>,
    passfile: Option<String>,
    options: Option<String>,
    target_session_attrs: Option<String>,
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
    fn or(self, other: Partial) -> Partial {
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

/// Resolve the connection from a connection string (if any), the config file's
/// `connection` section and the environment, `env` being a lookup such as
/// `|k| std::env::var(k).ok()`.
pub fn resolve(
    connstring: Option<&str>,
    config: &ConnectionConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ConnectParams, ParamsError> {
    resolve_from(connstring, "PGMCP_PG_CONNSTRING", config, env)
}

/// [`resolve`], the connection string having come from `setting` (its name
/// in errors and in where the password came from).
pub fn resolve_from(
    connstring: Option<&str>,
    setting: &'static str,
    config: &ConnectionConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ConnectParams, ParamsError> {
    let explicit = match connstring {
        Some(s) if s.starts_with("postgres://") || s.starts_with("postgresql://") => parse_url(setting, s)?,
        Some(s) => parse_keyword_value(setting, s)?,
        None => Partial {
            host: config.host.clone(),
            port: config.port.map(|p| p.to_string()),
            user: config.user.clone(),
            password: None,
            dbname: config.dbname.clone(),
            application_name: config.application_name.clone(),
            connect_timeout: config.connect_timeout_seconds.map(|s| s.to_string()),
            // Merged with `PGSSLMODE` as text, which is read below.
            sslmode: config.sslmode.map(|mode| mode.name().to_owned()),
            sslrootcert: config.sslrootcert.clone(),
            sslcert: config.sslcert.clone(),
            sslkey: config.sslkey.clone(),
            passfile: config.passfile.clone(),
            options: None,
            target_session_attrs: None,
        },
    };
    let password_from_source = explicit
        .password
        .as_ref()
        .filter(|p| !p.is_empty())
        .map(|_| PasswordSource::ConnectionString(setting));
    let from_env = Partial {
        host: env("PGHOST"),
        port: env("PGPORT"),
        user: env("PGUSER"),
        password: env("PGPASSWORD"),
        dbname: env("PGDATABASE"),
        application_name: env("PGAPPNAME"),
        connect_timeout: env("PGCONNECT_TIMEOUT"),
        sslmode: env("PGSSLMODE"),
        sslrootcert: env("PGSSLROOTCERT"),
        sslcert: env("PGSSLCERT"),
        sslkey: env("PGSSLKEY"),
        passfile: env("PGPASSFILE"),
        options: env("PGOPTIONS"),
        target_session_attrs: env("PGTARGETSESSIONATTRS"),
    };
    let p = explicit.or(from_env);

    // libpq: one port for every host, or one per host; an empty one is 5432,
    // an empty host the default one.
    let hosts: Vec<&str> = p.host.as_deref().unwrap_or("").split(',').collect();
    let ports: Vec<&str> = p.port.as_deref().unwrap_or("").split(',').collect();
    if ports.len() != 1 && ports.len() != hosts.len() {
        return Err(err(
            "port",
            format!(
                "{} ports for {} hosts: give one port, or one per host",
                ports.len(),
                hosts.len()
            ),
        ));
    }
    let port_of = |text: &str| -> Result<u16, ParamsError> {
        match text {
            "" => Ok(5432),
            text => text
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                // The value is not echoed: a misplaced separator can put part of a
                // password here.
                .ok_or_else(|| err("port", "invalid port: expected a number from 1 to 65535")),
        }
    };
    let host_of = |text: &str| match text {
        "" if cfg!(unix) && std::path::Path::new("/var/run/postgresql").is_dir() => {
            // libpq's default: the Unix socket directory when it exists, else localhost.
            Host::Unix(PathBuf::from("/var/run/postgresql"))
        }
        "" => Host::Tcp("localhost".to_owned()),
        text => Host::from_text(text),
    };
    let mut all = Vec::with_capacity(hosts.len());
    for (i, h) in hosts.iter().enumerate() {
        all.push((
            host_of(h),
            port_of(ports.get(i).or(ports.first()).copied().unwrap_or(""))?,
        ));
    }
    let (host, port) = all.remove(0);
    let more_hosts = all;
    let target_session_attrs = match p.target_session_attrs.as_deref().filter(|t| !t.is_empty()) {
        None => SessionAttrs::Any,
        Some(text) => SessionAttrs::from_name(text).ok_or_else(|| {
            err(
                "target_session_attrs",
                format!("invalid target_session_attrs: use {}", SessionAttrs::NAMES.join(", ")),
            )
        })?,
    };
    let os_user = p.user.as_deref().is_none_or(str::is_empty);
    let user = match p.user {
        Some(u) if !u.is_empty() => u,
        // Windows names the user in USERNAME.
        _ => env("USER")
            .or_else(|| env("LOGNAME"))
            .or_else(|| windows_user(env))
            .ok_or_else(|| {
                err(
                    "user",
                    "no user given (set user in the connection string, connection.user, or PGUSER)",
                )
            })?,
    };
    let connect_timeout = match p.connect_timeout.as_deref() {
        None | Some("") => Duration::from_secs(10),
        // Values from the connection string are never echoed (see port).
        Some(text) => match text.parse::<u64>() {
            // libpq treats 0 as "wait forever"; we keep a generous ceiling instead.
            Ok(0) => Duration::from_secs(3600),
            Ok(s) => Duration::from_secs(s.max(2)),
            Err(_) => {
                return Err(err(
                    "connect_timeout",
                    "invalid connect_timeout: expected whole seconds",
                ));
            }
        },
    };
    let given = |v: Option<String>| v.filter(|v| !v.is_empty());
    let (pg_dir, default_passfile) = libpq_files(env);
    let sslrootcert = match given(p.sslrootcert) {
        Some(s) if s == "system" => RootCert::System,
        Some(path) => RootCert::File(PathBuf::from(path)),
        None => RootCert::Default(pg_dir.as_ref().map(|d| d.join("root.crt"))),
    };
    let sslmode = match given(p.sslmode) {
        // libpq: trusting every CA in the system store only makes sense when
        // the host name is checked too, so `system` implies verify-full.
        None if sslrootcert == RootCert::System => SslMode::VerifyFull,
        None => SslMode::Prefer,
        Some(text) => SslMode::from_name(&text)
            .ok_or_else(|| err("sslmode", format!("invalid sslmode: use {}", SslMode::NAMES.join(", "))))?,
    };
    if sslrootcert == RootCert::System && sslmode != SslMode::VerifyFull {
        return Err(err(
            "sslrootcert",
            format!(
                "sslrootcert=system needs sslmode=verify-full (any CA in the system store could vouch for any host), got sslmode={}",
                sslmode.name()
            ),
        ));
    }
    let password = p.password.filter(|p| !p.is_empty());
    let password_from = password
        .as_ref()
        .map(|_| password_from_source.unwrap_or(PasswordSource::Environment));
    Ok(ConnectParams {
        host,
        port,
        more_hosts,
        target_session_attrs,
        options: given(p.options),
        dbname: p.dbname.filter(|d| !d.is_empty()),
        password,
        password_from,
        os_user,
        application_name: p
            .application_name
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "pgmcp".to_owned()),
        user,
        connect_timeout,
        sslmode,
        sslrootcert,
        sslcert: given(p.sslcert)
            .map(PathBuf::from)
            .or_else(|| pg_dir.as_ref().map(|d| d.join("postgresql.crt"))),
        sslkey: given(p.sslkey)
            .map(PathBuf::from)
            .or_else(|| pg_dir.as_ref().map(|d| d.join("postgresql.key"))),
        passfile: given(p.passfile).map(PathBuf::from).or(default_passfile),
    })
}

/// libpq's directory of certificates and keys, and its default password file:
/// `~/.postgresql` and `~/.pgpass`; without a home there are no defaults. A
/// relative HOME would find ~/.pgpass and ~/.postgresql/root.crt in the
/// directory pgmcp was started in: none is used.
#[cfg(unix)]
fn libpq_files(env: &dyn Fn(&str) -> Option<String>) -> (Option<PathBuf>, Option<PathBuf>) {
    let home = env("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    (
        home.as_ref().map(|h| h.join(".postgresql")),
        home.map(|h| h.join(".pgpass")),
    )
}

/// libpq's directory of certificates and keys, and its default password file:
/// on Windows both live in `%APPDATA%\postgresql`, the password file as
/// `pgpass.conf`.
#[cfg(not(unix))]
fn libpq_files(env: &dyn Fn(&str) -> Option<String>) -> (Option<PathBuf>, Option<PathBuf>) {
    let dir = env("APPDATA")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("postgresql"));
    let passfile = dir.as_ref().map(|d| d.join("pgpass.conf"));
    (dir, passfile)
}

/// The user name Windows gives, in `USERNAME` (libpq asks `GetUserName`).
fn windows_user(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if cfg!(windows) { env("USERNAME") } else { None }
}

/// `postgresql://[user[:password]@][host][:port][/dbname][?key=value&...]`
fn parse_url(source: &str, url: &str) -> Result<Partial, ParamsError> {
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

fn decode(source: &str, text: &str) -> Result<String, ParamsError> {
    crate::backend::percent::decode(text).map_err(|e| match e {
        crate::backend::percent::PercentError::Invalid => err(source, "invalid percent-encoding in URL"),
        crate::backend::percent::PercentError::NotUtf8 => err(source, "percent-encoding in URL is not UTF-8"),
    })
}

/// `host=localhost port=5432 dbname='my db'` (libpq's keyword/value form).
fn parse_keyword_value(source: &str, text: &str) -> Result<Partial, ParamsError> {
    let mut out = Partial::default();
    each_keyword_value(source, text, |key, value, _| out.set(source, &key, value))?;
    Ok(out)
}

/// Hand each `key=value` of `text` to `f`, with the byte range the pair
/// spans (from the key to the end of the value, quotes included), in order:
/// an error `f` returns stops the walk where the parser stands, so errors
/// come in the order they occur in the text.
fn each_keyword_value(
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

/// What follows a URL's `scheme://`, in its parts: the authority (user,
/// password, hosts and ports), the path (the database) after the first `/`,
/// and the query after the first `?`.
fn url_parts(rest: &str) -> (&str, Option<&str>, Option<&str>) {
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

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(name, _)| *name == k).map(|(_, v)| (*v).to_owned())
    }

    fn check(
        connstring: Option<&str>,
        config: ConnectionConfig,
        env: &'static [(&'static str, &'static str)],
    ) -> ConnectParams {
        resolve(connstring, &config, &env_of(env)).unwrap_or_else(|e| panic!("{connstring:?}: {e}"))
    }

    #[test]
    fn url_forms() {
        type Case<'a> = (&'a str, &'a str, u16, &'a str, Option<&'a str>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                "postgres://alice:s3cret@db.example.com:6543/shop",
                "db.example.com",
                6543,
                "alice",
                Some("s3cret"),
                Some("shop"),
            ),
            (
                "postgresql://alice@localhost/shop",
                "localhost",
                5432,
                "alice",
                None,
                Some("shop"),
            ),
            (
                "postgres://bob:p%40ss%2Fw@[::1]:5433/app",
                "::1",
                5433,
                "bob",
                Some("p@ss/w"),
                Some("app"),
            ),
            (
                "postgres://carol@127.0.0.1/my%20db?application_name=x",
                "127.0.0.1",
                5432,
                "carol",
                None,
                Some("my db"),
            ),
            (
                "postgres:///shop?host=%2Ftmp%2Fpg&user=dave",
                "/tmp/pg",
                5432,
                "dave",
                None,
                Some("shop"),
            ),
        ];
        for (url, host, port, user, password, dbname) in cases {
            let p = check(Some(url), ConnectionConfig::default(), &[]);
            assert_eq!(p.host, Host::from_text(host), "{url}");
            assert_eq!(p.port, *port, "{url}");
            assert_eq!(p.user, *user, "{url}");
            assert_eq!(p.password.as_deref(), *password, "{url}");
            assert_eq!(p.dbname.as_deref(), *dbname, "{url}");
        }
    }

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

    #[test]
    fn keyword_value_forms() {
        let p = check(
            Some(r"host=db port=7000 user=eve password='it\'s' dbname = 'my db'"),
            ConnectionConfig::default(),
            &[],
        );
        assert_eq!(p.host, Host::Tcp("db".into()));
        assert_eq!(p.port, 7000);
        assert_eq!(p.password.as_deref(), Some("it's"));
        assert_eq!(p.dbname.as_deref(), Some("my db"));
    }

    #[test]
    fn environment_fills_what_the_source_leaves_unset() {
        let env: &'static [(&str, &str)] = &[
            ("PGHOST", "envhost"),
            ("PGPORT", "6000"),
            ("PGUSER", "envuser"),
            ("PGPASSWORD", "envpw"),
            ("PGDATABASE", "envdb"),
            ("PGAPPNAME", "envapp"),
        ];
        let p = check(
            Some("postgres://urluser@urlhost/urldb"),
            ConnectionConfig::default(),
            env,
        );
        assert_eq!(p.host, Host::Tcp("urlhost".into()));
        assert_eq!(p.port, 6000);
        assert_eq!(p.user, "urluser");
        assert_eq!(p.password.as_deref(), Some("envpw"));
        assert_eq!(p.dbname.as_deref(), Some("urldb"));
        assert_eq!(p.application_name, "envapp");

        let config = ConnectionConfig {
            host: Some("cfghost".into()),
            port: Some(5555),
            dbname: Some("cfgdb".into()),
            ..Default::default()
        };
        let p = check(None, config, env);
        assert_eq!(
            (p.host, p.port, p.user.as_str(), p.dbname.as_deref()),
            (Host::Tcp("cfghost".into()), 5555, "envuser", Some("cfgdb"))
        );
    }

    #[test]
    fn defaults() {
        let p = check(Some("host=h user=u"), ConnectionConfig::default(), &[]);
        assert_eq!(p.port, 5432);
        assert_eq!(p.application_name, "pgmcp");
        assert_eq!(p.connect_timeout, Duration::from_secs(10));
        assert_eq!(p.sslmode, SslMode::Prefer);
        assert_eq!(p.dbname, None);
    }

    #[test]
    fn errors_name_the_source_and_never_the_password() {
        let cases: &[(&str, &str)] = &[
            (
                "host=h user=u frobnicate=1",
                "PGMCP_PG_CONNSTRING: unknown connection option (not a libpq keyword; if a password contains spaces, \
                 quotes or backslashes, quote it: password='...' or percent-encode it in a URL)",
            ),
            (
                "host=h user=u port=abc",
                "port: invalid port: expected a number from 1 to 65535",
            ),
            (
                "host=h user=u target_session_attrs=sometimes",
                "target_session_attrs: invalid target_session_attrs: use any, read-write, read-only, primary, \
                 standby, prefer-standby",
            ),
            (
                "host=h user=u gssencmode=disable",
                "PGMCP_PG_CONNSTRING: connection option \"gssencmode\" is not supported",
            ),
            (
                "host=h user=u password='unterminated",
                "PGMCP_PG_CONNSTRING: unterminated quoted string in connection string",
            ),
            (
                "postgres://u:hunter2@h/db?bogus=1",
                "PGMCP_PG_CONNSTRING: unknown connection option (not a libpq keyword; if a password contains spaces, \
                 quotes or backslashes, quote it: password='...' or percent-encode it in a URL)",
            ),
            (
                "host=h user=u sslmode=sometimes",
                "sslmode: invalid sslmode: use disable, allow, prefer, require, verify-ca, verify-full",
            ),
            (
                "host=a,b,c port=1,2 user=u",
                "port: 2 ports for 3 hosts: give one port, or one per host",
            ),
        ];
        for (input, expected) in cases {
            let e = resolve(Some(input), &ConnectionConfig::default(), &env_of(&[])).unwrap_err();
            assert_eq!(e.to_string(), *expected, "{input}");
            assert!(!e.to_string().contains("hunter2"));
        }
    }

    /// Several hosts, as libpq reads them: one port for all or one each, an
    /// empty port is 5432, and the URL form gives the same lists.
    #[test]
    fn several_hosts_are_tried_in_order() {
        let hosts = |input: &str| -> Vec<String> {
            let p = resolve(Some(input), &ConnectionConfig::default(), &env_of(&[("USER", "me")])).unwrap();
            p.each_host().iter().map(ConnectParams::target).collect()
        };
        let cases: &[(&str, &[&str])] = &[
            ("host=a,b port=6000", &["a:6000", "b:6000"]),
            ("host=a,b,c port=1,,3", &["a:1", "b:5432", "c:3"]),
            ("host=a,::1 port=1,2", &["a:1", "[::1]:2"]),
            ("postgresql://a:1,b:2/db", &["a:1", "b:2"]),
            ("postgresql://a,[::1]:7/db", &["a:5432", "[::1]:7"]),
            (
                "postgresql://u:p%2Cw@a:1,b/db?target_session_attrs=primary",
                &["a:1", "b:5432"],
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(hosts(input), *expected, "{input}");
        }
        let p = resolve(
            Some("host=a,b target_session_attrs=prefer-standby options='-c work_mem=8MB'"),
            &ConnectionConfig::default(),
            &env_of(&[("USER", "me")]),
        )
        .unwrap();
        assert_eq!(p.target(), "a:5432, b:5432");
        assert_eq!(p.target_session_attrs, SessionAttrs::PreferStandby);
        assert_eq!(p.options.as_deref(), Some("-c work_mem=8MB"));
        let from_env = resolve(
            None,
            &ConnectionConfig::default(),
            &env_of(&[
                ("USER", "me"),
                ("PGTARGETSESSIONATTRS", "standby"),
                ("PGOPTIONS", "-c a=b"),
            ]),
        )
        .unwrap();
        assert_eq!(from_env.target_session_attrs, SessionAttrs::Standby);
        assert_eq!(from_env.options.as_deref(), Some("-c a=b"));
    }

    /// Malformed connection strings whose password a stray space, quote,
    /// `?`, `/` or `#` split: no 3-character piece of it may reach the error.
    #[test]
    fn malformed_strings_never_echo_a_piece_of_the_password() {
        // Letters no message of ours contains, so any 3-character window of
        // a secret found in an error came from the input.
        let secrets = [
            "Xq7 Zk9/Wm4?Jr8#Lp2",
            "Qz8 Vb3'Hn5=Tg6",
            "Jx2 Kq4 Wz7",
            "Vq9\\ Zx3@Kj5:Qw2",
        ];
        let variants = [
            "postgresql://u:{}@host/db",
            "postgres://u:{}@host:5432/db?sslmode=require",
            "postgresql://{}@host/db",
            "postgresql://u:{}",
            "postgresql://u@host/db?password={}",
            "host=h user=u password={} dbname=d",
            "password={} host=h",
            "host=h password={}",
            "host=h password='{} user=u",
            "host=h password={}' user=u",
            "host=h password = {}",
            "host=h password={}=x",
            "host=h port={} user=u",
            "host=h sslmode={}",
            "host=h connect_timeout={}",
            "{}",
            "user=u {}",
        ];
        let mut refused = 0;
        for variant in variants {
            for secret in secrets {
                let input = variant.replace("{}", secret);
                let Err(e) = resolve(Some(&input), &ConnectionConfig::default(), &env_of(&[("USER", "u")])) else {
                    continue;
                };
                refused += 1;
                let text = e.to_string();
                let chars: Vec<char> = secret.chars().collect();
                for piece in chars.windows(3) {
                    let piece: String = piece.iter().collect();
                    assert!(!text.contains(&piece), "{input:?} -> {text:?} shows {piece:?}");
                }
            }
        }
        assert!(
            refused > 30,
            "only {refused} variants were refused: the test tests little"
        );
    }

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn tls_and_password_file_settings() {
        // libpq's defaults live under the home directory.
        let p = check(
            Some("host=h user=u"),
            ConnectionConfig::default(),
            &[("HOME", "/home/u")],
        );
        assert_eq!(p.sslmode, SslMode::Prefer);
        assert_eq!(
            p.sslrootcert,
            RootCert::Default(Some("/home/u/.postgresql/root.crt".into()))
        );
        assert_eq!(p.sslcert, Some("/home/u/.postgresql/postgresql.crt".into()));
        assert_eq!(p.sslkey, Some("/home/u/.postgresql/postgresql.key".into()));
        assert_eq!(p.passfile, Some("/home/u/.pgpass".into()));

        // The connection string wins over the environment, which wins over defaults.
        let env: &'static [(&str, &str)] = &[
            ("HOME", "/home/u"),
            ("PGSSLMODE", "verify-ca"),
            ("PGSSLROOTCERT", "/env/root.crt"),
            ("PGSSLCERT", "/env/c.crt"),
            ("PGSSLKEY", "/env/c.key"),
            ("PGPASSFILE", "/env/pgpass"),
        ];
        let p = check(
            Some("host=h user=u sslrootcert=/cs/root.pem passfile=/cs/pass"),
            ConnectionConfig::default(),
            env,
        );
        assert_eq!(
            (p.sslmode, p.sslrootcert, p.sslcert, p.sslkey, p.passfile),
            (
                SslMode::VerifyCa,
                RootCert::File("/cs/root.pem".into()),
                Some("/env/c.crt".into()),
                Some("/env/c.key".into()),
                Some("/cs/pass".into())
            )
        );
        let config = ConnectionConfig {
            sslmode: Some(SslMode::VerifyFull),
            sslrootcert: Some("/cfg/root.pem".into()),
            passfile: Some("/cfg/pass".into()),
            ..Default::default()
        };
        let p = check(None, config, &[("PGUSER", "u")]);
        assert_eq!(
            (p.sslmode, p.sslrootcert, p.passfile),
            (
                SslMode::VerifyFull,
                RootCert::File("/cfg/root.pem".into()),
                Some("/cfg/pass".into())
            )
        );

        // sslrootcert=system means verify-full, and refuses anything weaker.
        let p = check(
            Some("host=h user=u sslrootcert=system"),
            ConnectionConfig::default(),
            &[],
        );
        assert_eq!((p.sslmode, p.sslrootcert), (SslMode::VerifyFull, RootCert::System));
        let e = resolve(
            Some("host=h user=u sslrootcert=system sslmode=require"),
            &ConnectionConfig::default(),
            &env_of(&[]),
        )
        .unwrap_err();
        assert_eq!(e.source_name, "sslrootcert");

        for (mode, expected) in SslMode::NAMES.iter().zip([
            SslMode::Disable,
            SslMode::Allow,
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ]) {
            let p = check(
                Some(&format!("host=h user=u sslmode={mode}")),
                ConnectionConfig::default(),
                &[],
            );
            assert_eq!(p.sslmode, expected);
            assert_eq!(p.sslmode.name(), *mode);
        }
    }

    #[test]
    fn password_source_is_remembered() {
        let p = check(
            Some("postgres://u:pw@h/db"),
            ConnectionConfig::default(),
            &[("PGPASSWORD", "x")],
        );
        assert_eq!(
            p.password_from,
            Some(PasswordSource::ConnectionString("PGMCP_PG_CONNSTRING"))
        );
        let p = check(
            Some("postgres://u@h/db"),
            ConnectionConfig::default(),
            &[("PGPASSWORD", "x")],
        );
        assert_eq!(p.password_from, Some(PasswordSource::Environment));
        let p = check(Some("postgres://u@h/db"), ConnectionConfig::default(), &[]);
        assert_eq!((p.password, p.password_from), (None, None));
    }

    #[test]
    fn debug_redacts_the_password() {
        let p = check(Some("postgres://u:hunter2@h/db"), ConnectionConfig::default(), &[]);
        assert!(!format!("{p:?}").contains("hunter2"));
    }
}
