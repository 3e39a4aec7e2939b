//! The command line: `pgmcp serve` for desktop agents; `pgmcp query`, `check`
//! and `configure` for people and scripts. Each command loads the config, sets
//! up logging and hands off to the library; what is printed for a person is
//! printed here.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use clap::{Parser, Subcommand};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::backend::postgres;
use crate::backend::{Choice, ChoiceError};
use crate::config::{Config, ConfigError, ConfigLocation, LoadError, LogOutput};
use crate::error::Error as QueryError;
use crate::pipeline::{Engine, QueryInput};
use crate::start_failure::{Audience, StartFailure};
use crate::{logging, mcp};

#[derive(Debug, Parser)]
#[command(
    name = "pgmcp",
    version,
    about = "A guarded MCP server for PostgreSQL, SQLite and DuckDB: lets a desktop AI agent query your database safely."
)]
pub struct Cli {
    /// Config file. Default: $PGMCP_CONFIG_PATH, else <config dir>/pgmcp/config.json
    /// (~/.config/pgmcp/config.json on Linux), else built-in defaults
    /// (read-only). The working directory is never searched.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The database: sqlite:///abs/path.db, sqlite:relative/path.db,
    /// duckdb:///abs/path.duckdb, or a PostgreSQL URL or key=value string. Default: $PGMCP_DATABASE or
    /// $PGMCP_DATABASE_FILE, else $PGMCP_PG_CONNSTRING, else the config's "database", else its
    /// "connection" section with PGHOST, PGUSER, ...
    #[arg(long, global = true, value_name = "URL")]
    pub database: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Speak MCP on stdin/stdout. This is what Claude Desktop or Cursor runs.
    ///
    /// The database is taken from --database, else PGMCP_DATABASE (a URL) or
    /// PGMCP_DATABASE_FILE (an SQLite or DuckDB file, told apart by its
    /// header; not both), else PGMCP_PG_CONNSTRING (a postgres:// URL or
    /// key=value string), else the config's "database", else its "connection"
    /// section and the usual PGHOST/PGPORT/PGUSER/PGPASSWORD/PGDATABASE
    /// variables. Over the config file: PGMCP_READ_ONLY (true or false) sets
    /// server.read_only, PGMCP_READ_ONLY_AS_LOGIN (true or false) sets
    /// connection.read_only_as_login, PGMCP_MAX_ROWS (a whole number above 0)
    /// sets query.max_rows. A variable set to the empty string counts as unset.
    /// Logs go to the log file, never to stdout.
    ///
    /// With --http, serve MCP's Streamable HTTP transport at /mcp instead,
    /// for many clients at once (see the README's "Serving a team over
    /// HTTP"): on [HOST:]PORT, or on server.host and server.port when no
    /// address follows. Anywhere but a loopback address it needs bearer
    /// tokens (server.auth_tokens_file or PGMCP_HTTP_TOKEN).
    Serve {
        #[arg(long, value_name = "[HOST:]PORT", num_args = 0..=1, default_missing_value = "")]
        http: Option<String>,
    },
    /// Run one SQL statement through the same guarded pipeline and print the
    /// JSON result, exactly as the `query` tool would return it.
    Query {
        /// The SQL statement.
        sql: String,
        /// A value for $1, $2, ... (repeat in order). Read as JSON when it parses
        /// (42, true, null, "text"), else taken as a string.
        #[arg(long = "param", short = 'p', value_name = "VALUE")]
        params: Vec<String>,
        /// Return at most this many rows (never more than query.max_rows).
        #[arg(long, value_name = "ROWS")]
        limit: Option<usize>,
    },
    /// Load and validate the config, connect, and print what is in effect:
    /// config and log files, server, user, the role queries run as, database,
    /// TLS, read-only mode (as the server reports it), protection flags and
    /// hooks. Exits 0 when all is well, 1 when something failed (no database
    /// given, no connection, a hook that cannot run, ...), 2 when the config
    /// is invalid, or it or a hook program could be changed by someone other
    /// than you (the error names the file and the chmod that fixes it).
    /// A WARNING (a ./.pgmcp/config.json that is ignored; queries run as a
    /// role that can do more than read: a superuser, an owner, ...) does not
    /// change the exit code.
    Check {
        /// Instead of the report, print SQL that creates a least-privilege
        /// reader role (default name: connection.role, else pgmcp_reader) for
        /// the connected database, and the config snippet that uses it.
        /// Without a connection, a template with <placeholders> (exit 1).
        #[arg(long, value_name = "ROLE")]
        suggest_role: Option<Option<String>>,
        /// With --suggest-role: the SQL also creates NAME, a login of the
        /// agent's own that is a member of the reader and nothing else, with
        /// a generated password (stored as a SCRAM-SHA-256 verifier, so the
        /// SQL never holds it). The next steps go to stderr: the pg_hba.conf
        /// line to add if the server's rules need one, the password file
        /// line (the one place the password is shown), and the `pgmcp check`
        /// and `pgmcp install` lines for the new login. NAME (and the
        /// reader's) must be at most 63 bytes with no control character.
        #[arg(long, value_name = "NAME", requires = "suggest_role")]
        login: Option<String>,
    },
    /// Write a small SQLite shop to try pgmcp on, with no database server:
    /// customers, products, orders, order_items and an order_totals view.
    /// Prints the query to run next and the line that adds it to a client.
    /// An existing file is never overwritten.
    Demo {
        /// Where to write it.
        #[arg(value_name = "FILE", default_value = "pgmcp-demo.db")]
        path: PathBuf,
    },
    /// Ask which database, whether it is read-only, and the row cap, then
    /// (if wanted) the advanced settings, showing each current value; write
    /// the config file with permissions 0600 and say what to run next.
    /// Answers are read line by line from stdin, so they can be piped.
    Configure,
    /// Add pgmcp to Claude Desktop's or Cursor's config file, so the client
    /// starts it. Other servers and settings in the file are kept; the
    /// previous file is kept as <file>.bak.
    ///
    /// The entry runs this pgmcp binary (`serve`) with --config FILE when given.
    /// --database URL goes in the entry's "env" as PGMCP_DATABASE (a relative
    /// sqlite:/duckdb: path made absolute); a password in it is moved to
    /// PGPASSWORD, never left in "args", which anyone on this machine can see.
    /// Better still: keep the password in ~/.pgpass. Without --config or
    /// --database, the entry names neither and pgmcp finds them at each start
    /// as `serve` always does.
    Install(InstallArgs),
    /// Started by `serve` itself, never by hand: keeps the client's pipes
    /// and relays them to `serve` over a socket (see `serve`'s file sandbox).
    #[cfg(target_os = "linux")]
    #[command(hide = true)]
    Relay,
}

/// Why a command could not run.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Settings(#[from] LoadError),
    #[error(transparent)]
    Database(#[from] ChoiceError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("MCP session failed: {0}")]
    Session(String),
    #[error("cannot take stdin and stdout for the MCP protocol: {0}")]
    Channel(std::io::Error),
    #[error("no config directory to write to (HOME is not set): name the file with --config PATH")]
    NoConfigDir,
    #[error(transparent)]
    Wizard(#[from] crate::wizard::WizardError),
    #[error(transparent)]
    Install(#[from] crate::install::InstallError),
    #[error(transparent)]
    Demo(#[from] crate::demo::DemoError),
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error(transparent)]
    Http(#[from] crate::http::ListenError),
    #[error("--http {given:?}: {message}")]
    HttpAddress { given: String, message: String },
    #[error(transparent)]
    Password(#[from] postgres::login::NoRandomness),
    #[error("--login {0:?} is the reader role's name: the login needs a name of its own")]
    LoginIsReader(String),
    /// A name `check --suggest-role` cannot print safely: where it came
    /// from (`--login`, ...), the name, and why.
    #[error("{what} {name:?} cannot be used: {why}")]
    BadName { what: String, name: String, why: String },
    /// `serve` could not start, in a person's words.
    #[error("could not start: {0}")]
    Start(StartFailure),
}

/// Run the parsed command line. `Ok` carries the exit code: 0 on success, 1 when
/// a query failed. Errors (bad config, ...) should exit with 2.
pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    #[cfg(target_os = "linux")]
    if let Command::Relay = cli.command {
        return crate::channel::relay()
            .map(|()| ExitCode::SUCCESS)
            .map_err(CliError::Channel);
    }
    // A person who runs `pgmcp serve` in a terminal sees a program that
    // prints nothing and waits: say what it is waiting for, on stderr
    // (stdout is the protocol's alone). First, so even a config error
    // comes after it.
    if let Command::Serve { http: None } = cli.command
        && std::io::stdin().is_terminal()
    {
        eprintln!("{SERVE_AT_A_TERMINAL}");
    }
    // Writes a file of its own and reads no config.
    if let Command::Demo { path } = &cli.command {
        let written = crate::demo::write(path)?;
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "{}", crate::demo::next_steps(&written));
        return Ok(ExitCode::SUCCESS);
    }
    // Writes another program's config: this pgmcp's own is not loaded.
    if let Command::Install(args) = cli.command {
        return install(args, cli.config, cli.database);
    }
    let env = crate::environment::var;
    let location = ConfigLocation::resolve(cli.config.as_deref(), env("PGMCP_CONFIG_PATH").as_deref());
    if let Command::Configure = cli.command {
        return configure(&location, cli.config.as_deref());
    }
    // `serve` cannot start: said in the client when a client started it
    // over stdio (`start_failure`), else on stderr in the same words, for
    // the person at the terminal.
    let serving = matches!(cli.command, Command::Serve { .. });
    let explain = match cli.command {
        Command::Serve { http: None } if !std::io::stdin().is_terminal() => Some(Explain {
            audience: Audience::stdio(&env),
            // Looked at now: the channel and the sandbox move descriptors.
            stderr: logging::stderr_apart(),
        }),
        _ => None,
    };
    let config = match location.load(&env) {
        Ok(config) => config,
        Err(e) => {
            // The file's settings, when only the environment over it failed.
            let file = match &e {
                LoadError::Environment(_) => location.load_file().ok(),
                LoadError::File(_) => None,
            };
            // Logged where a person whose client only says "connection
            // closed" looks: the file's log, when the file loaded, else the
            // default one (README, Logs and troubleshooting).
            let logged = file
                .as_ref()
                .map_or_else(|| Config::builtin().logging, |f| f.logging.clone());
            let log = match explain {
                Some(_) => failure_log(&logged),
                None => logging::init(&logged).ok(),
            };
            tracing::error!("pgmcp {} cannot start: {e}", env!("CARGO_PKG_VERSION"));
            return match explain {
                // The sandbox as the file's switches ask, or as the defaults
                // do when the file could not be read.
                Some(explain) => {
                    let protection = file.map_or_else(|| Config::builtin().protection, |f| f.protection);
                    explain.serve(StartFailure::load(&e, explain.audience), &e, log, Some(&protection))
                }
                None if serving => Err(CliError::Start(StartFailure::load(&e, Audience::Terminal))),
                None => Err(e.into()),
            };
        }
    };
    let _log = match logging::init(&config.logging) {
        Ok(guard) => guard,
        Err(e) => {
            let e = ConfigError {
                file: config.source.clone(),
                field: Some("logging.output".to_owned()),
                message: e.to_string(),
            };
            return match explain {
                Some(explain) => {
                    let log = failure_log(&config.logging);
                    tracing::error!("pgmcp {} cannot start: {e}", env!("CARGO_PKG_VERSION"));
                    explain.serve(
                        StartFailure::config(&e, explain.audience),
                        &e,
                        log,
                        Some(&config.protection),
                    )
                }
                None if serving => Err(CliError::Start(StartFailure::config(&e, Audience::Terminal))),
                None => Err(e.into()),
            };
        }
    };
    // The command itself is not logged: its SQL may hold secrets.
    let name = match cli.command {
        Command::Serve { .. } => "serve",
        Command::Query { .. } => "query",
        Command::Check { .. } => "check",
        Command::Configure => "configure",
        Command::Demo { .. } => "demo",
        Command::Install(_) => "install",
        #[cfg(target_os = "linux")]
        Command::Relay => "relay",
    };
    tracing::info!(config = ?config.source, command = name, read_only = config.read_only, "pgmcp {} starting", env!("CARGO_PKG_VERSION"));
    if let Some(ignored) = ConfigLocation::ignored_local(config.source.as_deref()) {
        tracing::warn!(file = %ignored.display(), "config in the working directory ignored: name it with --config to use it");
    }
    // Before the runtime: its threads, the engines' and the hooks' are
    // started inside the sandbox.
    if serving && let Err(e) = crate::sandbox::enter(&config.protection) {
        tracing::error!("pgmcp {} cannot start: {e}", env!("CARGO_PKG_VERSION"));
        let failure = |audience| StartFailure::sandbox(&e, config.source.as_deref(), audience);
        return match explain {
            // Served outside it: this server runs no SQL and opens no file
            // a statement names, which is all the sandbox fences.
            Some(explain) => explain.serve(failure(explain.audience), &e, None, None),
            None => Err(CliError::Start(failure(Audience::Terminal))),
        };
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let result = match cli.command {
        Command::Serve { http: None } => runtime.block_on(serve(config, cli.database, explain)),
        Command::Serve { http: Some(address) } => runtime.block_on(serve_http(config, cli.database, &address)),
        Command::Query { sql, params, limit } => runtime.block_on(query_once(config, cli.database, sql, params, limit)),
        Command::Check { suggest_role: None, .. } => runtime.block_on(check(config, cli.database)),
        Command::Check {
            suggest_role: Some(role),
            login,
        } => runtime.block_on(suggest_role(config, cli.database, role, login)),
        Command::Configure | Command::Demo { .. } | Command::Install(_) => Ok(ExitCode::SUCCESS),
        #[cfg(target_os = "linux")]
        Command::Relay => Ok(ExitCode::SUCCESS),
    };
    // Don't wait for a blocking stdin read that will never finish.
    runtime.shutdown_timeout(Duration::from_millis(200));
    if let Err(e) = &result {
        // Also in the log, not only on stderr, which desktop clients hide.
        tracing::error!("pgmcp {name} stopped: {e}");
    }
    result
}

/// What `pgmcp serve` says, on stderr, when stdin is a terminal: a person,
/// not a client, started it.
pub const SERVE_AT_A_TERMINAL: &str = "pgmcp serve is an MCP server: it speaks JSON-RPC on stdin and stdout and is \
     waiting for an MCP client (Claude Desktop, Cursor) to talk to it. To have a client start it, run \
     `pgmcp install claude-desktop` or `pgmcp install cursor`; to try a query here, `pgmcp query \"SELECT 1\"`. \
     Ctrl-D or Ctrl-C ends it.";

/// What `check` says when no setting names a database and PostgreSQL's
/// defaults did not lead to one either.
const NO_DATABASE: &str = "no database given: name one with --database URL, or set PGMCP_DATABASE (a URL), \
     PGMCP_DATABASE_FILE (an SQLite or DuckDB file) or PGMCP_PG_CONNSTRING (a PostgreSQL connection), \
     or the config's \"database\" or \"connection\" section";

/// Whether anything names a database: `--database`, a variable or config
/// field of [`crate::backend::named`], the config's `sqlite.root` or
/// `connection` section, or a libpq variable that says where to connect.
/// Without one, only PostgreSQL's defaults are left.
fn names_a_database(config: &Config, flag: Option<&str>) -> bool {
    let variables = [
        "PGMCP_DATABASE",
        "PGMCP_DATABASE_FILE",
        "PGMCP_PG_CONNSTRING",
        "PGHOST",
        "PGHOSTADDR",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGSERVICE",
    ];
    flag.is_some()
        || config.database.is_some()
        || config.sqlite_root.is_some()
        // Whose rights read-only queries run with names no database.
        || postgres::ConnectionConfig {
            read_only_as_login: false,
            ..config.connection.clone()
        } != postgres::ConnectionConfig::default()
        || variables.into_iter().any(|k| crate::environment::var(k).is_some())
}

async fn serve(config: Config, database: Option<String>, explain: Option<Explain>) -> Result<ExitCode, CliError> {
    let log_hint = match &config.logging.output {
        LogOutput::File(path) => path.display().to_string(),
        LogOutput::Stderr => "stderr".to_owned(),
    };
    let max_line = max_line(&config);
    let (choice, named) = match crate::pipeline::choose_named(&config, database.as_deref(), &crate::environment::var) {
        Ok(chosen) => chosen,
        Err(e) => {
            let named_any = names_a_database(&config, database.as_deref());
            let failure = |audience| StartFailure::choice(&e, config.source.as_deref(), named_any, audience);
            return match explain {
                Some(explain) => {
                    tracing::error!("pgmcp {} cannot start: {e}", env!("CARGO_PKG_VERSION"));
                    explain.say(&failure(explain.audience), &e);
                    serve_start_failure(failure(explain.audience)).await
                }
                None => Err(CliError::Start(failure(Audience::Terminal))),
            };
        }
    };
    if let Some(named) = &named {
        tracing::info!(from = named.setting.name(), "database setting");
    }
    if let Some(note) = choice.missing_file_note(named.as_ref()) {
        tracing::warn!("the database file is not there: {note}");
    }
    let engine = Arc::new(Engine::from_choice(config, choice));
    tracing::info!(log = %log_hint, "serving MCP on stdio");
    // The protocol gets stdin and stdout to itself: nothing else in the
    // process (an engine, a library) can read a request or write into an
    // answer.
    let (stdin, stdout) = crate::channel::take().map_err(CliError::Channel)?;
    // The moment stdin closes, stop the work in flight: the client is gone, and
    // a query left running would hold a backend for nothing.
    let stdin_closed = CancellationToken::new();
    // Lines rmcp cannot read are answered by intake itself (parse errors,
    // batches, ...), through the same stdout as rmcp, a whole line at a time.
    let stdout = crate::intake::WholeLines::new(stdout);
    let stdin = EofSignal {
        inner: crate::intake::Screened::new(stdin, stdout.handle(), max_line),
        on_eof: stdin_closed.clone(),
    };
    let watcher = {
        let engine = engine.clone();
        let stdin_closed = stdin_closed.clone();
        tokio::spawn(async move {
            stdin_closed.cancelled().await;
            engine.shutdown(SHUTDOWN_GRACE).await;
        })
    };
    // Longer lines never reach rmcp: intake answers them and skips them.
    // Query answers are written by pgmcp's transport, their rows spliced in
    // as encoded (see `transport`); everything else by rmcp's.
    let answers = stdout.handle();
    let transport = AsyncRwTransport::<RoleServer, _, _>::new(stdin, stdout).with_max_line_length(max_line);
    let transport = crate::transport::Splicing::new(transport, answers);
    let service = match mcp::Server::new(engine.clone(), mcp::Answers::Spliced)
        .serve(transport)
        .await
    {
        Ok(service) => service,
        Err(e) => {
            // stdin closed before the handshake: nothing to serve, not a failure.
            tracing::info!(error = %e, "session ended before initialization");
            engine.shutdown(SHUTDOWN_GRACE).await;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let cancel = service.cancellation_token();
    let signalled = shutdown_signal();
    tokio::select! {
        quit = service.waiting() => {
            tracing::info!(reason = ?quit.ok(), "session ended");
        }
        _ = signalled => {
            tracing::info!("signal received, shutting down");
            // Stop the queries and hooks first, so their calls end with an
            // answer, then the session.
            engine.shutdown(SHUTDOWN_GRACE).await;
            cancel.cancel();
        }
    }
    watcher.abort();
    engine.shutdown(SHUTDOWN_GRACE).await;
    Ok(ExitCode::SUCCESS)
}

/// How a `serve` over stdio that a client started says it could not start:
/// to whom, and whether stderr may carry it too.
#[derive(Debug, Clone, Copy)]
struct Explain {
    audience: Audience,
    /// stderr is not where the protocol goes.
    stderr: bool,
}

impl Explain {
    /// Say it on stderr too (desktop clients keep a server's stderr in a
    /// log of their own), unless stderr is where the protocol goes.
    fn say(self, failure: &StartFailure, error: &dyn std::fmt::Display) {
        if self.stderr {
            eprintln!("pgmcp: {error}");
            eprintln!(
                "pgmcp: serving MCP only to say so; every tool call answers: {}",
                failure.text()
            );
        }
    }

    /// Before the runtime: say it, enter the sandbox `protection` asks for
    /// (none when it could not be entered), then serve the failure. `_log`
    /// is kept until the end, so the log is flushed.
    fn serve(
        self,
        failure: StartFailure,
        error: &dyn std::fmt::Display,
        _log: Option<tracing_appender::non_blocking::WorkerGuard>,
        protection: Option<&crate::guard::Policy>,
    ) -> Result<ExitCode, CliError> {
        self.say(&failure, error);
        if let Some(policy) = protection
            && let Err(e) = crate::sandbox::enter(policy)
        {
            tracing::warn!(
                "the file sandbox could not be entered ({e}): this session runs no SQL, which is what it fences"
            );
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(CliError::Runtime)?;
        let result = runtime.block_on(serve_start_failure(failure));
        runtime.shutdown_timeout(Duration::from_millis(200));
        result
    }
}

/// The log of a `serve` that could not start: `logging`'s, else stderr
/// (which `logging::init` refuses when it is the protocol's stdout), else
/// none.
fn failure_log(logging: &crate::config::LoggingConfig) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    logging::init(logging).ok().or_else(|| {
        let stderr = crate::config::LoggingConfig {
            output: LogOutput::Stderr,
            ..logging.clone()
        };
        logging::init(&stderr).ok()
    })
}

/// `pgmcp serve` over stdio that could not start: the handshake, the tools
/// and the reason as every call's answer (`start_failure::Server`), until
/// the client closes stdin or a signal comes. Exits 2, as a failure to
/// start does.
async fn serve_start_failure(failure: StartFailure) -> Result<ExitCode, CliError> {
    tracing::info!("serving MCP on stdio only to say why pgmcp could not start");
    let max_line = Config::builtin().longest_message();
    let (stdin, stdout) = crate::channel::take().map_err(CliError::Channel)?;
    // Lines rmcp cannot read are answered as in a session that started.
    let stdout = crate::intake::WholeLines::new(stdout);
    let stdin = crate::intake::Screened::new(stdin, stdout.handle(), max_line);
    let transport = AsyncRwTransport::<RoleServer, _, _>::new(stdin, stdout).with_max_line_length(max_line);
    match crate::start_failure::Server::new(failure).serve(transport).await {
        Ok(service) => {
            let cancel = service.cancellation_token();
            tokio::select! {
                quit = service.waiting() => tracing::info!(reason = ?quit.ok(), "session ended"),
                () = shutdown_signal() => {
                    tracing::info!("signal received, shutting down");
                    cancel.cancel();
                }
            }
        }
        Err(e) => tracing::info!(error = %e, "session ended before initialization"),
    }
    Ok(ExitCode::from(2))
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
async fn serve_http(config: Config, database: Option<String>, address: &str) -> Result<ExitCode, CliError> {
    let addr = http_address(address, &config.http)?;
    let mut tokens = match &config.http.auth_tokens_file {
        Some(path) => crate::http::read_tokens(path)?,
        None => Vec::new(),
    };
    // A token pasted with a newline or spaces around it still works, as a
    // line of the tokens file does.
    if let Some(token) = crate::environment::var("PGMCP_HTTP_TOKEN").filter(|t| !t.trim().is_empty()) {
        tokens.push(token.trim().to_owned());
    }
    let listen = crate::http::Listen {
        addr,
        tokens,
        allowed_origins: config.http.allowed_origins.clone(),
        health_check_path: config.http.health_check_path.clone(),
        max_body: max_line(&config),
        max_sessions: config.http.max_sessions,
        body_memory: config.body_memory(),
    };
    listen.check()?;
    let (choice, named) = crate::pipeline::choose_named(&config, database.as_deref(), &crate::environment::var)
        .map_err(|e| {
            let named_any = names_a_database(&config, database.as_deref());
            CliError::Start(StartFailure::choice(
                &e,
                config.source.as_deref(),
                named_any,
                Audience::Terminal,
            ))
        })?;
    if let Some(named) = &named {
        tracing::info!(from = named.setting.name(), "database setting");
    }
    let engine = Arc::new(Engine::from_choice(config, choice));
    let stop = CancellationToken::new();
    let server = tokio::spawn(crate::http::serve(engine.clone(), listen, stop.clone()));
    tokio::select! {
        served = server => {
            engine.shutdown(SHUTDOWN_GRACE).await;
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
    engine.shutdown(SHUTDOWN_GRACE).await;
    Ok(ExitCode::SUCCESS)
}

/// Resolves when the process is asked to stop: Ctrl-C, or SIGTERM (what
/// clients and service managers send) on Unix.
#[cfg(unix)]
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
    }
}

/// Resolves when the process is asked to stop. Windows has no SIGTERM: a
/// client that ends pgmcp either closes stdin (the session ends on its own)
/// or terminates the process, which no handler sees; Ctrl-C is what is left.
/// Should the handler fail to register, nothing stops the session but its end.
#[cfg(not(unix))]
async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Longest JSON-RPC line read from stdin: room for the longest call the
/// limits accept (SQL of `query.max_sql_length` characters and parameters of
/// `query.max_params_bytes`, each escaped as JSON at worst), and no more: a
/// line is held whole while it is read and parsed, so this bounds what one
/// line can cost. A longer line is answered with an error and skipped.
fn max_line(config: &Config) -> usize {
    config.longest_message()
}

/// How long shutdown waits for calls in flight to stop on the server.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// stdin that cancels a token when it reaches end of file.
struct EofSignal<R> {
    inner: R,
    on_eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll
            && buf.filled().len() == before
            && buf.remaining() > 0
        {
            self.on_eof.cancel();
        }
        poll
    }
}

/// `pgmcp configure`: the file the other commands would read, or where a new
/// one is found by every client: the user's config dir. Never the working
/// directory, which no command searches.
fn configure(location: &ConfigLocation, flag: Option<&std::path::Path>) -> Result<ExitCode, CliError> {
    let path = match location {
        ConfigLocation::Explicit(path) | ConfigLocation::Found(path) => path.clone(),
        ConfigLocation::BuiltIn => ConfigLocation::candidates().pop().ok_or(CliError::NoConfigDir)?,
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    crate::wizard::run(&path, flag, &mut input, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// `pgmcp check`: print the report; exit 1 when it found a problem.
async fn check(config: Config, database: Option<String>) -> Result<ExitCode, CliError> {
    let given = names_a_database(&config, database.as_deref());
    let (choice, named) = match crate::pipeline::choose_named(&config, database.as_deref(), &crate::environment::var) {
        Ok(chosen) => chosen,
        // PostgreSQL's defaults could not even be filled in (no user name).
        // The config is fine: the setup lacks a database, a failure (exit
        // 1, as `--help` has it), as when the defaults are tried and fail.
        Err(_) if !given => {
            tracing::error!("pgmcp check: {NO_DATABASE}");
            eprintln!("pgmcp: {NO_DATABASE}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    let from = named
        .as_ref()
        .map_or_else(String::new, |n| format!(" (from {})", n.setting.name()));
    let missing = choice.missing_file_note(named.as_ref());
    let mut conn = match choice {
        Choice::Postgres(conn) => conn,
        Choice::Sqlite { default, root } => {
            let target = match (&default, &root) {
                (Some(file), _) => format!("SQLite file {}{from}", file.shown),
                (None, _) => "SQLite files inside sqlite.root (calls name one)".to_owned(),
            };
            let engine = Engine::sqlite(config.clone(), default, root);
            let mut report = crate::check::Report::gather(&config, &engine, target).await;
            report.note_missing_file(missing);
            return Ok(print_report(&report));
        }
        #[cfg(feature = "duckdb")]
        Choice::DuckDb { target } => {
            let shown = format!("DuckDB file {}{from}", target.shown);
            let engine = Engine::duckdb(config.clone(), target);
            let mut report = crate::check::Report::gather(&config, &engine, shown).await;
            report.note_missing_file(missing);
            return Ok(print_report(&report));
        }
    };
    let target = |c: &postgres::ConnectParams| {
        format!(
            "{}, user \"{}\", database \"{}\", sslmode={}{from}",
            c.target(),
            c.user,
            c.dbname.as_deref().unwrap_or(&c.user),
            c.sslmode.name()
        )
    };
    let mut engine = Engine::postgres(config.clone(), conn.clone());
    let mut report = crate::check::Report::gather(&config, &engine, target(&conn)).await;
    // Like psql and `query`: ask for a password at a terminal when the server wants one.
    if report.session.is_err() && std::io::stdin().is_terminal() && conn.password.is_none() {
        let needs_password = matches!(
            engine
                .session_report(CancellationToken::new())
                .await
                .as_ref()
                .map_err(QueryError::kind),
            Err(QueryError::PasswordRequired { .. })
        );
        if needs_password && let Ok(password) = rpassword::prompt_password(format!("Password for user {}: ", conn.user))
        {
            conn.password = Some(password);
            conn.password_from = Some(postgres::PasswordSource::Prompt);
            engine.close().await;
            engine = Engine::postgres(config.clone(), conn.clone());
            report = crate::check::Report::gather(&config, &engine, target(&conn)).await;
        }
    }
    engine.close().await;
    if !given && let Err(e) = &mut report.session {
        *e = format!("{NO_DATABASE} (PostgreSQL's defaults were tried: {e})");
    }
    Ok(print_report(&report))
}

/// Role name `check --suggest-role` uses when neither the flag nor
/// connection.role names one.
const SUGGESTED_ROLE: &str = "pgmcp_reader";

/// `pgmcp check --suggest-role`: print SQL creating a reader role. The output
/// is SQL only (explanations are comments), so it can go straight to psql.
/// With `--login`, the SQL also creates the login, and the steps that follow
/// (with its password) go to stderr, apart from the SQL a person may save,
/// share or pipe.
async fn suggest_role(
    config: Config,
    database: Option<String>,
    role: Option<String>,
    login: Option<String>,
) -> Result<ExitCode, CliError> {
    let (role, role_from) = match (role, &config.connection.role) {
        (Some(role), _) => (role, "--suggest-role"),
        (None, Some(role)) => (role.clone(), "connection.role"),
        (None, None) => (SUGGESTED_ROLE.to_owned(), "--suggest-role"),
    };
    let bad = |what: &str, name: &str, why: String| CliError::BadName {
        what: what.to_owned(),
        name: name.to_owned(),
        why,
    };
    // Refused before anything is printed: a name PostgreSQL would cut short,
    // or with a character no pg_hba.conf or password file line can hold.
    if let Some(why) = postgres::login::name_problem(&role) {
        return Err(bad(role_from, &role, why));
    }
    if let Some(name) = &login
        && let Some(why) = postgres::login::name_problem(name)
    {
        return Err(bad("--login", name, why));
    }
    let new_login = match login {
        Some(name) if name == role => return Err(CliError::LoginIsReader(name)),
        Some(name) => Some(postgres::NewLogin::generate(&name)?),
        None => None,
    };
    let conn = match crate::pipeline::choose(&config, database.as_deref(), &crate::environment::var)? {
        Choice::Postgres(conn) => conn,
        _ => {
            eprintln!("pgmcp: --suggest-role is for PostgreSQL: SQLite and DuckDB files have no roles");
            return Ok(ExitCode::from(1));
        }
    };
    let place = postgres::Place {
        user: &conn.user,
        host: &conn.host,
        port: conn.port,
        database: conn.dbname.as_deref().unwrap_or(&conn.user),
        sslmode: conn.sslmode,
        passfile: conn.passfile.as_deref(),
    };
    if new_login.is_some()
        && let Some((what, name, why)) = postgres::login::place_problem(&place)
    {
        return Err(bad(what, &name, why));
    }
    let psql = postgres::login::psql_line(&place);
    let engine = Engine::postgres(config.clone(), conn.clone());
    let mut result = engine
        .suggest_role(&role, new_login.as_ref(), Some(&psql), CancellationToken::new())
        .await;
    engine.close().await;
    // pgmcp's own catalog reads, not an agent's: as the login, which may do
    // them where pg_read_all_data is missing (PostgreSQL 13) or refused.
    let mut as_login = config;
    as_login.connection.role = None;
    as_login.connection.read_only_as_login = true;
    // The role may not exist yet (or not be granted): that is what the SQL
    // is for. Read the catalog as the login then; it is world-readable.
    if matches!(result, Err(QueryError::Role { .. })) {
        let engine = Engine::postgres(as_login.clone(), conn.clone());
        result = engine
            .suggest_role(&role, new_login.as_ref(), Some(&psql), CancellationToken::new())
            .await;
        engine.close().await;
    }
    let sql = match &result {
        Ok(sql) => sql.clone(),
        Err(_) => postgres::suggest_role_sql(&role, None, new_login.as_ref(), None),
    };
    {
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "{sql}");
        // Before the steps on stderr, so a terminal shows them in order.
        let _ = stdout.flush();
    }
    if let Some(new_login) = &new_login {
        // Only a superuser may read pg_hba.conf's rules: as the login, and
        // never as the role the agent's statements run as.
        let hba = match &result {
            Ok(_) => {
                let engine = Engine::postgres(as_login, conn.clone());
                let facts = engine.hba_facts(&role, CancellationToken::new()).await;
                engine.close().await;
                facts.unwrap_or_else(|e| postgres::HbaFacts {
                    origin: None,
                    rules: Err(e.to_string()),
                    reader_groups: None,
                })
            }
            Err(_) => postgres::HbaFacts {
                origin: None,
                rules: Err("pgmcp could not read the database".to_owned()),
                reader_groups: None,
            },
        };
        eprint!("\n{}", postgres::login::steps(new_login, &role, &place, &hba));
    }
    match result {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("pgmcp: could not read the database ({e}); printed a template: replace its <placeholders>");
            Ok(ExitCode::from(1))
        }
    }
}

/// Print a check report; the exit code says whether it found a problem.
fn print_report(report: &crate::check::Report) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{report}");
    if report.problems().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

async fn query_once(
    config: Config,
    database: Option<String>,
    sql: String,
    params: Vec<String>,
    limit: Option<usize>,
) -> Result<ExitCode, CliError> {
    let params: Vec<Value> = params
        .iter()
        .map(|p| serde_json::from_str(p).unwrap_or_else(|_| Value::String(p.clone())))
        .collect();
    let input = QueryInput {
        sql,
        params,
        limit,
        database: None,
    };
    let (choice, named) = crate::pipeline::choose_named(&config, database.as_deref(), &crate::environment::var)?;
    let missing = choice.missing_file_note(named.as_ref());
    let postgres = match &choice {
        Choice::Postgres(conn) => Some(conn.clone()),
        _ => None,
    };
    let mut engine = Engine::from_choice(config.clone(), choice);
    let mut result = engine.query(&input, CancellationToken::new()).await;
    // Like psql: ask for a password only when the server wants one and a person
    // is at a terminal to type it.
    if let Some(mut conn) = postgres
        && matches!(
            result.as_ref().map_err(QueryError::kind),
            Err(QueryError::PasswordRequired { .. })
        )
        && std::io::stdin().is_terminal()
    {
        let prompt = format!("Password for user {}: ", conn.user);
        if let Ok(password) = rpassword::prompt_password(prompt) {
            conn.password = Some(password);
            conn.password_from = Some(postgres::PasswordSource::Prompt);
            engine = Engine::postgres(config, conn);
            result = engine.query(&input, CancellationToken::new()).await;
        }
    }
    engine.close().await;
    match result {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            let text = serde_json::to_string_pretty(&output).unwrap_or_default();
            let _ = writeln!(stdout, "{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            // The same fence as the MCP tools: an agent may run this command.
            eprintln!("error: {}", engine.fenced(e));
            // Said outside the fence, which hides paths from the model: the
            // person who typed the path needs to see where it led.
            if let Some(note) = missing {
                eprintln!("note: the database file is not there: {note}");
            }
            Ok(ExitCode::from(1))
        }
    }
}

/// `pgmcp install`'s own options; `--config` and `--database` are the
/// global ones, naming what the installed entry uses.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The desktop client to add pgmcp to.
    #[arg(value_enum)]
    pub client: crate::install::Client,
    /// The server's name in the client (the key under "mcpServers"). Running
    /// install again with the same name and database updates that entry in
    /// place; an entry of that name for another database is left alone
    /// (exit 2): give this one another --name to keep both, or --replace.
    #[arg(long, default_value = "pgmcp", value_name = "NAME")]
    pub name: String,
    /// Replace an entry of that name even when it is for another database
    /// (what it was for is printed).
    #[arg(long)]
    pub replace: bool,
    /// Show the entry (and, for Cursor, a one-click install link) instead of
    /// writing any file.
    #[arg(long)]
    pub print: bool,
    /// The client's config file, if not in its usual place (Claude Desktop:
    /// <config dir>/Claude/claude_desktop_config.json; Cursor: ~/.cursor/mcp.json).
    #[arg(long, value_name = "PATH")]
    pub client_config: Option<PathBuf>,
}

/// `pgmcp install`: build the entry, then print it or merge it into the
/// client's file, and tell the person what changed and what to do next.
fn install(args: InstallArgs, config: Option<PathBuf>, database: Option<String>) -> Result<ExitCode, CliError> {
    use crate::install::{self, Database, Entry, InstallError};
    if args.name.is_empty() {
        return Err(InstallError::EmptyName.into());
    }
    // The client starts pgmcp in a directory of its own: every path absolute.
    let cwd = std::env::current_dir().map_err(InstallError::CurrentDir)?;
    let config = config.map(|c| cwd.join(c));
    if let Some(path) = &config {
        // Refused now, as `serve` would refuse it at every start.
        Config::load(path)?;
    }
    let database = database
        .map(|d| Database::from_given(&d, &cwd, &crate::environment::var))
        .transpose()?;
    let entry = Entry::new(&install::current_binary()?, config.as_deref(), database.as_ref())?;
    let mut stdout = std::io::stdout().lock();
    if args.print {
        let _ = write!(stdout, "{}", install::printed(args.client, &args.name, &entry));
    } else {
        let named_file = args.client_config.map(|path| cwd.join(path));
        let file = match &named_file {
            Some(path) => path.clone(),
            None => args
                .client
                .config_file(dirs::config_dir().as_deref(), dirs::home_dir().as_deref())
                .ok_or(InstallError::NoClientConfig {
                    client: args.client.name(),
                })?,
        };
        let written = install::write(&file, &args.name, &entry, args.replace).map_err(|e| {
            e.with_rerun(|free_name| install::install_line(args.client, free_name, &entry, named_file.as_deref()))
        })?;
        let _ = write!(stdout, "{}", written.summary(args.client, &args.name));
    }
    if entry.has_password() {
        eprintln!("note: {}", install::PASSWORD_NOTE);
    }
    Ok(ExitCode::SUCCESS)
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
