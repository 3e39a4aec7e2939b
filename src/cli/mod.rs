//! The command line: `pgmcp serve` for desktop agents; `pgmcp query`,
//! `check`, `configure`, `demo` and `install` for people and scripts. Each
//! command that needs them loads the config and sets up logging, then hands
//! off to the library; what is printed for a person is printed here.
//!
//! # Layout
//!
//! - `mod.rs`: the command line ([`Cli`], [`Command`]), [`CliError`], and
//!   [`run`]: the config and the log, set up once, then the command's own
//!   file.
//! - `serve.rs`: `pgmcp serve`, over stdio or with `--http`.
//! - `explain.rs`: a `serve` that cannot start, said where its person looks.
//! - `query.rs`, `check.rs`, `suggest_role.rs` (`check --suggest-role`):
//!   a command each.
//! - `wizard/`: `pgmcp configure`; `install/`: `pgmcp install`.

mod check;
mod explain;
mod install;
mod query;
mod serve;
mod suggest_role;
pub mod wizard;

pub use install::InstallArgs;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::backend::ChoiceError;
use crate::backend::postgres;
use crate::config::{Config, ConfigError, ConfigLocation, LoadError};
use crate::door::start_failure::{Audience, StartFailure};
use crate::process::logging;
use explain::{Explain, cannot_start, failure_log};

// The `///` comments of the command line's types are its `--help`, written
// for a terminal: `<config dir>` and `[HOST:]PORT` are meant as printed, so
// rustdoc's reading of them as HTML and links is turned off here.
#[allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]
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

// `--help` text, as for `Cli`.
#[allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]
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
    Configure {
        /// Instead, add one database under NAME to the file's "databases"
        /// (asking its URL, what it holds, and whether it is read-only); a
        /// database the file names at its top level moves there first.
        #[arg(long, value_name = "NAME")]
        add_database: Option<String>,
    },
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
    Wizard(#[from] crate::cli::wizard::WizardError),
    #[error(transparent)]
    Install(#[from] crate::cli::install::InstallError),
    #[error(transparent)]
    Demo(#[from] crate::backend::demo::DemoError),
    #[error(transparent)]
    Sandbox(#[from] crate::process::sandbox::SandboxError),
    #[error(transparent)]
    Http(#[from] crate::door::http::ListenError),
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
    /// A database of `databases` or a curated tool that cannot be served.
    #[error(transparent)]
    Open(#[from] crate::service::OpenError),
    /// `serve` could not start, in a person's words.
    #[error("could not start: {0}")]
    Start(StartFailure),
}

/// Run the parsed command line. `Ok` carries the exit code: 0 on success, 1 when
/// a query failed. Errors (bad config, ...) should exit with 2.
pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    #[cfg(target_os = "linux")]
    if let Command::Relay = cli.command {
        return crate::door::stdio::channel::relay()
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
        let written = crate::backend::demo::write(path)?;
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "{}", crate::backend::demo::next_steps(&written));
        return Ok(ExitCode::SUCCESS);
    }
    // Writes another program's config: this pgmcp's own is not loaded.
    if let Command::Install(args) = cli.command {
        return install::install(args, cli.config, cli.database);
    }
    let env = crate::process::environment::var;
    let location = ConfigLocation::resolve(cli.config.as_deref(), env("PGMCP_CONFIG_PATH").as_deref());
    if let Command::Configure { add_database } = &cli.command {
        return configure(&location, cli.config.as_deref(), add_database.as_deref());
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
            // The sandbox as the file's switches ask, or as the defaults
            // do when the file could not be read.
            let protection = file.map_or_else(|| Config::builtin().protection, |f| f.process_protection());
            return cannot_start(explain, serving, e, StartFailure::load, log, Some(&protection));
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
            // The log cannot be set up: a served failure is logged where
            // `failure_log` still can; any other is said on stderr by `main`.
            let log = match explain {
                Some(_) => {
                    let log = failure_log(&config.logging);
                    tracing::error!("pgmcp {} cannot start: {e}", env!("CARGO_PKG_VERSION"));
                    log
                }
                None => None,
            };
            return cannot_start(
                explain,
                serving,
                e,
                StartFailure::config,
                log,
                Some(&config.process_protection()),
            );
        }
    };
    // The command itself is not logged: its SQL may hold secrets.
    let name = match cli.command {
        Command::Serve { .. } => "serve",
        Command::Query { .. } => "query",
        Command::Check { .. } => "check",
        Command::Configure { .. } => "configure",
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
    if serving && let Err(e) = crate::process::sandbox::enter(&config.process_protection()) {
        tracing::error!("pgmcp {} cannot start: {e}", env!("CARGO_PKG_VERSION"));
        let failure = |e: &_, audience| StartFailure::sandbox(e, config.source.as_deref(), audience);
        // Served outside it: this server runs no SQL and opens no file a
        // statement names, which is all the sandbox fences.
        return cannot_start(explain, serving, e, failure, None, None);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let result = match cli.command {
        Command::Serve { http: None } => runtime.block_on(serve::serve(config, cli.database, explain)),
        Command::Serve { http: Some(address) } => runtime.block_on(serve::serve_http(config, cli.database, &address)),
        Command::Query { sql, params, limit } => {
            runtime.block_on(query::query_once(config, cli.database, sql, params, limit))
        }
        Command::Check { suggest_role: None, .. } => runtime.block_on(check::check(config, cli.database)),
        Command::Check {
            suggest_role: Some(role),
            login,
        } => runtime.block_on(suggest_role::suggest_role(config, cli.database, role, login)),
        Command::Configure { .. } | Command::Demo { .. } | Command::Install(_) => Ok(ExitCode::SUCCESS),
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

/// Whether anything names a database: `--database`, a variable or config
/// field of [`crate::backend::named`], the config's `sqlite.root` or
/// `connection` section, or a libpq variable that says where to connect.
/// Without one, only PostgreSQL's defaults are left.
pub(super) fn names_a_database(config: &Config, flag: Option<&str>) -> bool {
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
        || variables.into_iter().any(|k| crate::process::environment::var(k).is_some())
}

/// `pgmcp configure`: the file the other commands would read, or where a new
/// one is found by every client: the user's config dir. Never the working
/// directory, which no command searches.
fn configure(
    location: &ConfigLocation,
    flag: Option<&std::path::Path>,
    add_database: Option<&str>,
) -> Result<ExitCode, CliError> {
    let path = match location {
        ConfigLocation::Explicit(path) | ConfigLocation::Found(path) => path.clone(),
        ConfigLocation::BuiltIn => ConfigLocation::candidates().pop().ok_or(CliError::NoConfigDir)?,
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    match add_database {
        Some(name) => crate::cli::wizard::add_database(&path, flag, name, &mut input, &mut out)?,
        None => crate::cli::wizard::run(&path, flag, &mut input, &mut out)?,
    }
    Ok(ExitCode::SUCCESS)
}
