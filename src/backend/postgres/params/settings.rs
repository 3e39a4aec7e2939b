//! The typed settings a connection is opened with, and [`ConnectParams`],
//! all of them resolved: the hosts and ports, TLS's mode and roots, which
//! server of several to settle on, where the password came from. Apart from
//! the reading of them (`connstring.rs`, `resolution.rs`): the wire, TLS and
//! the diagnosis of a failed connection use these types and none of the
//! parsing.

use std::fmt;
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
    pub(super) fn from_text(text: &str) -> Host {
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

    pub(super) fn from_name(name: &str) -> Option<SessionAttrs> {
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
    /// An environment variable, by name: `PGPASSWORD`, or a named
    /// database's own (`PGMCP_DB_<NAME>_PASSWORD`).
    Environment(String),
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
            PasswordSource::Environment(variable) => write!(f, "{variable}"),
            PasswordSource::Passfile { path, .. } => write!(f, "the password file {}", path.display()),
            PasswordSource::Prompt => write!(f, "the password typed at the prompt"),
        }
    }
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
    /// The variable a password is read from, for messages that say where
    /// to give one: `PGPASSWORD`, or a named database's own.
    pub password_variable: String,
    /// The `databases` entry these parameters are, for messages that name
    /// its settings; `None`: the one database.
    pub named: Option<String>,
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
            .field("password_variable", &self.password_variable)
            .field("named", &self.named)
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
