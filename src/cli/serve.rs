//! `pgmcp serve`: pick the database, build the engine and hand it to a
//! door: stdio ([`serve`]), or HTTP with `--http` ([`serve_http`]). When
//! the database cannot be chosen, it says why as `explain.rs` does.

use std::process::ExitCode;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::explain::{Explain, start_failure};
use super::{CliError, names_a_database};
use crate::config::{Config, LogOutput};
use crate::door::start_failure::{Audience, StartFailure};
use crate::door::{SHUTDOWN_GRACE, shutdown_signal};
use crate::service::{OpenError, Service};

/// `pgmcp serve` over stdio: the engine for the chosen database, served
/// until the client closes stdin or a signal comes. A database that cannot
/// be chosen is explained (`explain`) or fails as [`CliError::Start`].
pub(super) async fn serve(
    config: Config,
    database: Option<String>,
    explain: Option<Explain>,
) -> Result<ExitCode, CliError> {
    let log_hint = match &config.logging.output {
        LogOutput::File(path) => path.display().to_string(),
        LogOutput::Stderr => "stderr".to_owned(),
    };
    let max_line = max_line(&config);
    let service = match open(config, database.as_deref()) {
        Ok(service) => service,
        Err(unservable) => {
            return match explain {
                Some(explain) => {
                    let failure = unservable.failure(explain.audience);
                    tracing::error!("pgmcp {} cannot start: {}", env!("CARGO_PKG_VERSION"), unservable.error);
                    explain.say(&failure, &unservable.error);
                    start_failure(failure).await
                }
                None => Err(CliError::Start(unservable.failure(Audience::Terminal))),
            };
        }
    };
    tracing::info!(log = %log_hint, "serving MCP on stdio");
    crate::door::stdio::serve(Arc::new(service), max_line)
        .await
        .map_err(CliError::Channel)?;
    Ok(ExitCode::SUCCESS)
}
/// Where `--http` listens: `PORT` (on `server.host`), `HOST:PORT`,
/// `[IPv6]:PORT` or `:PORT`; an empty value takes `server.host` and
/// `server.port`. `localhost` is `127.0.0.1`.
fn http_address(given: &str, config: &crate::config::HttpConfig) -> Result<std::net::SocketAddr, CliError> {
    use std::net::{IpAddr, SocketAddr};
    let fail = |message: String| CliError::HttpAddress {
        given: given.to_owned(),
        message,
    };
    let ip = |host: &str| -> Result<IpAddr, CliError> {
        let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        match bare {
            "localhost" => Ok(IpAddr::from([127, 0, 0, 1])),
            bare => bare.parse().map_err(|_| {
                fail(format!(
                    "{host:?} is not an IP address (such as 127.0.0.1, 0.0.0.0 or [::1])"
                ))
            }),
        }
    };
    let port = |text: &str| -> Result<u16, CliError> {
        text.parse()
            .map_err(|_| fail(format!("{text:?} is not a TCP port (0 to 65535)")))
    };
    if given.is_empty() {
        return match config.port {
            Some(p) => Ok(SocketAddr::new(ip(&config.host)?, p)),
            None => Err(fail("no port: give one (--http 8080) or set server.port".to_owned())),
        };
    }
    if let Ok(addr) = given.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if given.chars().all(|c| c.is_ascii_digit()) {
        return Ok(SocketAddr::new(ip(&config.host)?, port(given)?));
    }
    // An address without a port (`::1`, `[::1]`, `10.0.0.5`) says nothing
    // of where to listen: ask for one rather than guess.
    if ip(given).is_ok() {
        return Err(fail(
            "no port: add one, such as 127.0.0.1:8080 or [::1]:8080".to_owned(),
        ));
    }
    match given.rsplit_once(':') {
        Some(("", p)) => Ok(SocketAddr::new(ip(&config.host)?, port(p)?)),
        Some((host, p)) => Ok(SocketAddr::new(ip(host)?, port(p)?)),
        None => Err(fail("expected PORT, HOST:PORT or [IPv6]:PORT".to_owned())),
    }
}

/// `pgmcp serve --http`: MCP over Streamable HTTP until SIGTERM or Ctrl-C,
/// then the calls in flight are stopped within the grace period.
pub(super) async fn serve_http(config: Config, database: Option<String>, address: &str) -> Result<ExitCode, CliError> {
    let addr = http_address(address, &config.http)?;
    let mut tokens = match &config.http.auth_tokens_file {
        Some(path) => crate::door::http::read_tokens(path)?,
        None => Vec::new(),
    };
    // A token pasted with a newline or spaces around it still works, as a
    // line of the tokens file does.
    if let Some(token) = crate::process::environment::var("PGMCP_HTTP_TOKEN").filter(|t| !t.trim().is_empty()) {
        tokens.push(token.trim().to_owned());
    }
    let listen = crate::door::http::Listen {
        addr,
        tokens,
        allowed_origins: config.http.allowed_origins.clone(),
        health_check_path: config.http.health_check_path.clone(),
        max_body: max_line(&config),
        max_sessions: config.http.max_sessions,
        body_memory: config.body_memory(),
    };
    listen.check()?;
    let service =
        Arc::new(open(config, database.as_deref()).map_err(|u| CliError::Start(u.failure(Audience::Terminal)))?);
    let stop = CancellationToken::new();
    let server = tokio::spawn(crate::door::http::serve(service.clone(), listen, stop.clone()));
    tokio::select! {
        served = server => {
            service.shutdown(SHUTDOWN_GRACE).await;
            return match served {
                Ok(result) => result.map(|()| ExitCode::SUCCESS).map_err(CliError::from),
                Err(e) => Err(CliError::Session(e.to_string())),
            };
        }
        () = shutdown_signal() => tracing::info!("signal received, shutting down"),
    }
    // Stop taking requests, stop what runs (each call ends with an answer),
    // then close the pool.
    stop.cancel();
    service.shutdown(SHUTDOWN_GRACE).await;
    Ok(ExitCode::SUCCESS)
}

/// The databases and tools `config` (with `--database`, `database`) asks
/// for, or why they cannot be served, worded for the audience the caller
/// picks: a database that cannot be chosen as `StartFailure::choice` says
/// it, a named database or a curated tool as the config's mistake.
fn open(config: Config, database: Option<&str>) -> Result<Service, Unservable> {
    let named_any = names_a_database(&config, database);
    let source = config.source.clone();
    Service::open(config, database, &crate::process::environment::var).map_err(|error| Unservable {
        error,
        source,
        named_any,
    })
}

/// Why [`open`] failed, with what wording it for a person takes.
struct Unservable {
    error: OpenError,
    /// The config file, which the words may send the person to.
    source: Option<std::path::PathBuf>,
    /// Some setting names a database (see `names_a_database`).
    named_any: bool,
}

impl Unservable {
    /// The failure in words for `audience`.
    fn failure(&self, audience: Audience) -> StartFailure {
        match &self.error {
            OpenError::Choice(e) => StartFailure::choice(e, self.source.as_deref(), self.named_any, audience),
            OpenError::Config(e) => StartFailure::config(e, audience),
        }
    }
}

/// Longest JSON-RPC line read from stdin: room for the longest call the
/// limits accept (SQL of `query.max_sql_length` characters and parameters of
/// `query.max_params_bytes`, each escaped as JSON at worst), and no more: a
/// line is held whole while it is read and parsed, so this bounds what one
/// line can cost. A longer line is answered with an error and skipped.
pub(super) fn max_line(config: &Config) -> usize {
    config.longest_message()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case: (--http value, server.host, server.port, the address or
    /// the error's end).
    type AddressCase = (
        &'static str,
        &'static str,
        Option<u16>,
        Result<&'static str, &'static str>,
    );

    #[test]
    fn http_addresses() {
        let cases: [AddressCase; 13] = [
            ("8080", "127.0.0.1", None, Ok("127.0.0.1:8080")),
            ("8080", "::1", None, Ok("[::1]:8080")),
            ("8080", "[::1]", None, Ok("[::1]:8080")),
            (":8080", "0.0.0.0", None, Ok("0.0.0.0:8080")),
            ("0.0.0.0:9000", "127.0.0.1", None, Ok("0.0.0.0:9000")),
            ("[::1]:9000", "127.0.0.1", None, Ok("[::1]:9000")),
            ("localhost:9000", "127.0.0.1", None, Ok("127.0.0.1:9000")),
            ("", "127.0.0.1", Some(7000), Ok("127.0.0.1:7000")),
            (
                "",
                "127.0.0.1",
                None,
                Err("no port: give one (--http 8080) or set server.port"),
            ),
            (
                "::1",
                "127.0.0.1",
                None,
                Err("no port: add one, such as 127.0.0.1:8080 or [::1]:8080"),
            ),
            (
                "[::1]",
                "127.0.0.1",
                None,
                Err("no port: add one, such as 127.0.0.1:8080 or [::1]:8080"),
            ),
            (
                "127.0.0.1:99999",
                "127.0.0.1",
                None,
                Err("\"99999\" is not a TCP port (0 to 65535)"),
            ),
            (
                "example.com:80",
                "127.0.0.1",
                None,
                Err("is not an IP address (such as 127.0.0.1, 0.0.0.0 or [::1])"),
            ),
        ];
        for (given, host, port, expected) in cases {
            let config = crate::config::HttpConfig {
                host: host.into(),
                port,
                health_check_path: None,
                auth_tokens_file: None,
                allowed_origins: vec![],
                max_sessions: 1,
                max_body_memory: None,
            };
            match (http_address(given, &config), expected) {
                (Ok(addr), Ok(want)) => assert_eq!(addr.to_string(), want, "{given:?}"),
                (Err(e), Err(end)) => assert!(e.to_string().ends_with(end), "{given:?}: {e}"),
                (got, want) => panic!("{given:?}: {:?} against {want:?}", got.map_err(|e| e.to_string())),
            }
        }
    }
}
