//! [`resolve`]: the settings of one connection, layered as psql layers them
//! (a connection string or the config's `connection` section, then the libpq
//! environment variables, then libpq's files under the home directory and
//! its defaults), and checked together: a port per host, `sslmode` against
//! `sslrootcert`, the timeout. The layering is one concern, kept apart from
//! how a single source is read (`connstring.rs`).

use std::path::PathBuf;
use std::time::Duration;

use super::connstring::{Partial, parse_keyword_value, parse_url};
use super::section::ConnectionConfig;
use super::settings::{ConnectParams, Host, PasswordSource, RootCert, SessionAttrs, SslMode};
use super::{ParamsError, err};

/// libpq's password variable.
pub const PASSWORD_VARIABLE: &str = "PGPASSWORD";

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
        password: env(PASSWORD_VARIABLE),
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
        .map(|_| password_from_source.unwrap_or(PasswordSource::Environment(PASSWORD_VARIABLE.to_owned())));
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
        password_variable: PASSWORD_VARIABLE.to_owned(),
        named: None,
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
