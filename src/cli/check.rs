//! `pgmcp check`: what a person needs to see that a setup works, gathered by
//! library code into a [`Report`] whose `Display` is what the command prints.
//!
//! It connects through the same engine as `serve`, so what it reports about
//! the session (TLS, read-only mode as the server sees it) is what every
//! query gets. Facts about the session come from the backend
//! ([`crate::backend::SessionReport`]), so other engines can report their own.
//!
//! Problems (no database given, no connection, a hook that cannot run,
//! ...) make `check` exit 1.
//! Warnings (statements run as a role that can do more than read) are
//! printed loudly but leave the exit code alone: such a setup works, and a
//! superuser on a laptop database can be a deliberate choice.

use std::fmt;
use std::path::{Path, PathBuf};

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::{CliError, names_a_database};
use crate::backend::postgres;
use crate::backend::{Choice, SessionReport};
use crate::config::{Config, ConfigLocation, LogOutput};
use crate::error::Error as QueryError;
use crate::pipeline::Engine;

/// What `check` says when no setting names a database and PostgreSQL's
/// defaults did not lead to one either.
pub(super) const NO_DATABASE: &str = "no database given: name one with --database URL, or set PGMCP_DATABASE (a URL), \
     PGMCP_DATABASE_FILE (an SQLite or DuckDB file) or PGMCP_PG_CONNSTRING (a PostgreSQL connection), \
     or the config's \"database\" or \"connection\" section";

/// `pgmcp check`: print the report; exit 1 when it found a problem.
pub(super) async fn check(config: Config, database: Option<String>) -> Result<ExitCode, CliError> {
    if !config.databases.is_empty() {
        return check_databases(config, database).await;
    }
    // The curated tools are judged as `serve` judges them: a refused
    // statement is the config's mistake, whatever the database says.
    let mut tools = Vec::new();
    if !config.tools.is_empty() {
        match crate::service::Service::open(config.clone(), database.as_deref(), &crate::process::environment::var) {
            Err(crate::service::OpenError::Config(e)) => return Err(e.into()),
            Ok(service) => tools = tool_lines(&service),
            // The database cannot be chosen: said below, as without tools.
            Err(crate::service::OpenError::Choice(_)) => {}
        }
    }
    let given = names_a_database(&config, database.as_deref());
    let (choice, named) =
        match crate::pipeline::choose_named(&config, database.as_deref(), &crate::process::environment::var) {
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
            let mut report = Report::gather(&config, &engine, target).await;
            report.note_missing_file(missing);
            return Ok(print_report(&report, &tools));
        }
        #[cfg(feature = "duckdb")]
        Choice::DuckDb { target } => {
            let shown = format!("DuckDB file {}{from}", target.shown);
            let engine = Engine::duckdb(config.clone(), target);
            let mut report = Report::gather(&config, &engine, shown).await;
            report.note_missing_file(missing);
            return Ok(print_report(&report, &tools));
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
    let mut report = Report::gather(&config, &engine, target(&conn)).await;
    if conn.password.is_none()
        && wants_typed_password(&report, &engine).await
        && let Ok(password) = rpassword::prompt_password(format!("Password for user {}: ", conn.user))
    {
        conn.password = Some(password);
        conn.password_from = Some(postgres::PasswordSource::Prompt);
        engine.close().await;
        engine = Engine::postgres(config.clone(), conn.clone());
        report = Report::gather(&config, &engine, target(&conn)).await;
    }
    engine.close().await;
    if !given && let Err(e) = &mut report.session {
        *e = format!("{NO_DATABASE} (PostgreSQL's defaults were tried: {e})");
    }
    Ok(print_report(&report, &tools))
}

/// `check` of a config with `databases`: every database's report under its
/// name (one that cannot be reached is a problem of its own, the others
/// are still checked), then the curated tools as admitted; exit 1 when any
/// report found a problem. The curated tools and the databases' settings
/// are judged first, as `serve` judges them: a mistake there is the
/// config's.
async fn check_databases(config: Config, database: Option<String>) -> Result<ExitCode, CliError> {
    use crate::service::Service;
    let env = crate::process::environment::var;
    let service = Service::open(config.clone(), database.as_deref(), &env)?;
    let mut failed = false;
    for db in service.databases() {
        let engine = &db.engine;
        let target = match &engine.config().database {
            Some(url) => crate::backend::location::redacted(url).into_owned(),
            None => "PostgreSQL from its \"connection\" section".to_owned(),
        };
        let mut report = Report::gather(engine.config(), engine, target.clone()).await;
        engine.close().await;
        if wants_typed_password(&report, engine).await
            && let Ok(password) = rpassword::prompt_password(format!("Password for database {}: ", db.name))
            && let Ok(typed) = Service::open_typed(config.clone(), None, &env, Some((&db.name, &password)))
            && let Ok(engine) = typed.engine(Some(&db.name))
        {
            report = Report::gather(engine.config(), engine, target).await;
            engine.close().await;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "== database {} ==\n{report}", db.name);
        failed |= !report.problems().is_empty();
    }
    let mut stdout = std::io::stdout().lock();
    for line in tool_lines(&service) {
        let _ = writeln!(stdout, "{line}");
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Like psql and `query`: ask for a password when the session failed for
/// want of one and a person is at a terminal to type it.
async fn wants_typed_password(report: &Report, engine: &Engine) -> bool {
    report.session.is_err()
        && std::io::stdin().is_terminal()
        && matches!(
            engine
                .session_report(CancellationToken::new())
                .await
                .as_ref()
                .map_err(QueryError::kind),
            Err(QueryError::PasswordRequired { .. })
        )
}

/// The curated tools as admitted, a line each under a heading; none
/// without curated tools.
fn tool_lines(service: &crate::service::Service) -> Vec<String> {
    if service.tools().is_empty() {
        return Vec::new();
    }
    let default = &service.databases()[0].name;
    let on = |name: Option<&str>| match (name, default.is_empty()) {
        (Some(name), _) => format!("on {name}, "),
        (None, false) => format!("on {default}, "),
        (None, true) => String::new(),
    };
    std::iter::once("== curated tools ==".to_owned())
        .chain(service.tools().iter().map(|curated| {
            let mode = match curated.read_only {
                true => "reads only",
                false => "may write",
            };
            format!(
                "{} ({}{mode}): admitted by the guard",
                curated.tool.name,
                on(curated.tool.database.as_deref())
            )
        }))
        .collect()
}

/// Print a check report; the exit code says whether it found a problem.
pub(super) fn print_report(report: &Report, tools: &[String]) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{report}");
    for line in tools {
        let _ = writeln!(stdout, "{line}");
    }
    if report.problems().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Everything `pgmcp check` found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The config file used; `None` for built-in defaults.
    pub config_file: Option<PathBuf>,
    /// `./.pgmcp/config.json` when it exists and was not used: the working
    /// directory is never searched, and its owner should know.
    pub ignored_config: Option<PathBuf>,
    /// Config fields environment variables set over the file
    /// (`PGMCP_READ_ONLY=false (server.read_only)`).
    pub overrides: Vec<String>,
    pub log: String,
    /// Where and as whom pgmcp connects, before connecting.
    pub target: String,
    /// The live session, or why there is none.
    pub session: Result<SessionReport, String>,
    /// `server.read_only` from the config.
    pub read_only: bool,
    /// The `allow_*` protection flags that are on.
    pub allowed: Vec<&'static str>,
    pub blocked_functions: usize,
    pub hooks: Vec<HookCheck>,
    /// `connection.role` from the config.
    pub role: Option<String>,
    /// `connection.read_only_as_login` from the config.
    pub read_only_as_login: bool,
}

/// One configured hook and whether it can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCheck {
    pub stage: &'static str,
    pub command: PathBuf,
    /// What is wrong with it; `None` when it is an executable file.
    pub problem: Option<String>,
}

impl Report {
    /// Connect through `engine` and look at `config`. `target` describes the
    /// connection settings (`127.0.0.1:5432, user "x", ...`).
    pub async fn gather(config: &Config, engine: &Engine, target: String) -> Report {
        let session = engine
            .session_report(CancellationToken::new())
            .await
            .map_err(|e| e.to_string());
        let hooks = [
            ("before_query", &config.hooks.before_query),
            ("after_query", &config.hooks.after_query),
        ]
        .into_iter()
        .flat_map(|(stage, hooks)| {
            hooks.iter().map(move |h| HookCheck {
                stage,
                command: h.command.clone(),
                problem: executable_problem(&h.command),
            })
        })
        .collect();
        Report {
            config_file: config.source.clone(),
            ignored_config: ConfigLocation::ignored_local(config.source.as_deref()),
            overrides: config
                .overrides
                .iter()
                .map(|o| format!("{}={} ({})", o.variable, o.value, o.field))
                .collect(),
            log: match &config.logging.output {
                LogOutput::File(path) => path.display().to_string(),
                LogOutput::Stderr => "stderr".to_owned(),
            },
            target,
            session,
            read_only: config.read_only,
            allowed: config.protection.allowed_flags(),
            blocked_functions: config.protection.blocked_functions.len(),
            hooks,
            role: config.connection.role.clone(),
            read_only_as_login: config.connection.read_only_as_login,
        }
    }

    /// Say where the database file was looked for when it is missing
    /// (`note` from [`crate::backend::Choice::missing_file_note`]).
    pub fn note_missing_file(&mut self, note: Option<String>) {
        if let (Some(note), Err(e)) = (note, &mut self.session) {
            *e = format!("{e} ({note})");
        }
    }

    /// What works but should not be so, one line each: a config file in the
    /// working directory that was ignored, what the role statements run as
    /// can do beyond reading.
    pub fn warnings(&self) -> Vec<String> {
        self.config_warning().into_iter().chain(self.role_warnings()).collect()
    }

    fn config_warning(&self) -> Option<String> {
        self.ignored_config.as_ref().map(|path| {
            format!(
                "{} is ignored: pgmcp never reads a config from the working directory, where a cloned \
                 repository could plant one that switches protections off; to use it, pass --config {} \
                 (or set PGMCP_CONFIG_PATH)",
                path.display(),
                path.display()
            )
        })
    }

    fn role_warnings(&self) -> Vec<String> {
        match &self.session {
            Ok(s) if s.file && self.role.is_some() => {
                vec![
                    "connection.role is set, but roles are a PostgreSQL feature: it does nothing for this database"
                        .to_owned(),
                ]
            }
            Ok(s) => s.role_warnings.clone(),
            Err(_) => Vec::new(),
        }
    }

    /// What is wrong, one line each; empty when everything checked out.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.session {
            Err(e) => out.push(e.clone()),
            Ok(s) if self.read_only && !s.read_only => out
                .push("server.read_only is on, but the server reports the query transaction as read-write".to_owned()),
            Ok(_) => {}
        }
        for hook in &self.hooks {
            if let Some(problem) = &hook.problem {
                out.push(format!("{} hook {}: {problem}", hook.stage, hook.command.display()));
            }
        }
        out
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.config_file {
            Some(path) => writeln!(f, "config file:  {}", path.display())?,
            None => writeln!(f, "config file:  none found; using built-in defaults")?,
        }
        if let Some(warning) = self.config_warning() {
            writeln!(f, "WARNING:      {warning}")?;
        }
        if !self.overrides.is_empty() {
            writeln!(f, "environment:  {}", self.overrides.join(", "))?;
        }
        writeln!(f, "log file:     {}", self.log)?;
        writeln!(f, "database:     {}", self.target)?;
        match &self.session {
            Ok(s) if s.file => writeln!(f, "  engine:     {} at {}", s.server, s.endpoint)?,
            Ok(s) => {
                writeln!(f, "  server:     {} at {}", s.server, s.endpoint)?;
                writeln!(f, "  connected:  as user \"{}\" to database \"{}\"", s.user, s.database)?;
                writeln!(f, "  runs as:    role \"{}\" ({})", s.role, s.role_reason)?;
                match &s.encryption {
                    Some(tls) => writeln!(f, "  TLS:        yes ({tls})")?,
                    None => writeln!(f, "  TLS:        no")?,
                }
                match &s.password_from {
                    Some(from) => writeln!(f, "  password:   from {from}")?,
                    None => writeln!(f, "  password:   none needed")?,
                }
                if s.pooler {
                    writeln!(
                        f,
                        "  pooler:     yes (it refused a startup parameter, or a statement pgmcp prepared went missing on another server session, as poolers do): output settings are \
                         set in every transaction, and each call's session changes are undone before it commits"
                    )?;
                }
            }
            Err(e) => writeln!(f, "  FAILED:     {e}")?,
        }
        let verified = match &self.session {
            Ok(s) if s.read_only => format!(" (verified: {} = on)", s.read_only_setting),
            Ok(s) => format!(" ({} = off)", s.read_only_setting),
            Err(_) => " (not verified: no connection)".to_owned(),
        };
        let mode = if self.read_only { "on" } else { "off: writes allowed" };
        writeln!(f, "read-only:    {mode}{verified}")?;
        if self.allowed.is_empty() {
            write!(f, "protection:   every allow_* flag off")?;
        } else {
            write!(f, "protection:   allowed: {}", self.allowed.join(", "))?;
        }
        writeln!(f, "; {} blocked function patterns", self.blocked_functions)?;
        if self.hooks.is_empty() {
            writeln!(f, "hooks:        none")?;
        }
        for (i, hook) in self.hooks.iter().enumerate() {
            let label = if i == 0 { "hooks:" } else { "" };
            let state = hook.problem.as_deref().unwrap_or("executable");
            writeln!(f, "{label:<14}{} {} ({state})", hook.stage, hook.command.display())?;
        }
        let warnings = self.role_warnings();
        if let (Ok(s), false) = (&self.session, warnings.is_empty()) {
            if s.file {
                writeln!(f, "WARNING:      {}", warnings.join("; "))?;
            } else {
                writeln!(
                    f,
                    "WARNING:      queries run as role \"{}\", which can do more than read:",
                    s.role
                )?;
                for w in &warnings {
                    writeln!(f, "  - {w}")?;
                }
                let fix = match &self.role {
                    Some(_) => "take these rights away from connection.role, or point it at a reader role",
                    // Read-only queries would run as pg_read_all_data without the opt-out.
                    None if self.read_only && self.read_only_as_login => {
                        "remove connection.read_only_as_login (read-only queries then run as pg_read_all_data), or set connection.role to a reader role"
                    }
                    None => "set connection.role to a reader role",
                };
                writeln!(
                    f,
                    "  fix: {fix}; `pgmcp check --suggest-role` prints the SQL that creates one"
                )?;
            }
        }
        let noted = match self.warnings().len() {
            0 => String::new(),
            1 => " (1 warning, above)".to_owned(),
            n => format!(" ({n} warnings, above)"),
        };
        match self.problems().as_slice() {
            [] => write!(f, "result:       OK{noted}"),
            problems => {
                write!(f, "result:       {} problem(s){noted}", problems.len())?;
                for p in problems {
                    write!(f, "\n  - {p}")?;
                }
                Ok(())
            }
        }
    }
}

/// Why `command` cannot be run, if it cannot: a path must be an executable
/// file; a bare name must be found on `PATH`, as hooks are run without a shell.
fn executable_problem(command: &Path) -> Option<String> {
    let is_executable = crate::pipeline::hooks::is_executable;
    if command.components().count() > 1 {
        return match std::fs::metadata(command) {
            Err(e) => Some(format!("not found ({e})")),
            Ok(m) if !m.is_file() => Some("not a file".to_owned()),
            Ok(_) if !is_executable(command) => Some(format!("not executable (chmod +x {})", command.display())),
            Ok(_) => None,
        };
    }
    // As hooks do: PATH's relative entries would reach the working directory.
    let on_path = crate::pipeline::hooks::find_on_path(command).is_some();
    (!on_path).then(|| "not found on PATH".to_owned())
}
