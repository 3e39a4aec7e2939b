//! What one pgmcp serves: its databases, each an [`Engine`] under its own
//! rules, and the curated tools that run on them. The doors serve a
//! [`Service`]; every call still goes through one engine's pipeline.
//!
//! A config without `databases` has one database, chosen the usual way
//! (`--database`, the environment, the config's `database` or
//! `connection`). With `databases`, each entry is its own engine, built from
//! the entry's whole config, and nothing in the environment names a
//! database: a named database's connection is its entry's alone, its
//! password `PGMCP_DB_<NAME>_PASSWORD` (or the password file). Engines
//! connect at their first call, so a database that cannot be reached stops
//! only the calls that name it.
//!
//! Curated tools are judged by the guard here, when the databases are
//! opened, in their database's dialect and mode
//! ([`crate::guard::preview`]): a refused statement, a write on a
//! read-only database or placeholders that do not match the parameters
//! stop the config, naming the tool. A tool that runs read-only on a
//! database that may write (it asks to, or, left unmarked, its statement
//! only reads) gets an engine of its own over the same database, whose
//! sessions are read-only; on DuckDB, which opens a file once, it cannot,
//! and a tool marked so is refused.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::backend::{ChoiceError, Dialect};
use crate::config::{Config, ConfigError, NamedDatabase, ToolsEnabled, password_variable};
use crate::error::{Error, InputError};
use crate::guard::{self, Mode};
use crate::pipeline::answer::QueryAnswer;
use crate::pipeline::confirm::Consent;
use crate::pipeline::{Engine, QueryInput, choose_named};
use crate::toolbox::{CuratedTool, arguments};

/// The variables that name one database: a named database's connection
/// never reads them.
const NAMING_VARIABLES: [&str; 4] = [
    "PGMCP_DATABASE",
    "PGMCP_DATABASE_FILE",
    "PGMCP_PG_CONNSTRING",
    "PGMCP_DEMO",
];

/// The databases and curated tools one server offers.
pub struct Service {
    databases: Vec<Database>,
    tools: Vec<Curated>,
    enabled: ToolsEnabled,
    /// Calls choose a database by name (`databases` is configured).
    named: bool,
}

/// One database the service runs calls on.
pub struct Database {
    /// Its `databases` name; empty for the one database of a config without.
    pub name: String,
    pub description: Option<String>,
    pub engine: Arc<Engine>,
    /// Read-only sessions over the same database, for curated tools that
    /// ask to run read-only on a database that may write.
    reading: Option<Arc<Engine>>,
}

/// A curated tool with what was found when it was admitted.
pub struct Curated {
    pub tool: CuratedTool,
    /// The index of its database in [`Service::databases`].
    database: usize,
    /// It runs on read-only sessions, so it cannot write (what its
    /// annotations say): its database is read-only, the tool asks to, or
    /// (left unmarked, on PostgreSQL or SQLite) the guard found that its
    /// statement only reads. The early look cannot see what a function
    /// does, so only read-only sessions keep the promise.
    pub read_only: bool,
    /// Why it runs read-only on a database that may write: what a refusal
    /// at a call says instead of "server.read_only is on". `None`: it does
    /// not, or its database is read-only.
    reading_because: Option<&'static str>,
}

/// Why the databases could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The one database of a config without `databases` cannot be chosen.
    #[error(transparent)]
    Choice(#[from] ChoiceError),
    /// A named database, a curated tool, or a setting beside `databases`,
    /// named by its field.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl Service {
    /// Choose the databases (see the module's docs), build their engines,
    /// and admit the curated tools. `url`: `--database`. Connects to
    /// nothing.
    pub fn open(config: Config, url: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<Service, OpenError> {
        Service::open_typed(config, url, env, None)
    }

    /// [`Service::open`], the named database `typed.0` with the password a
    /// person typed at a prompt (`typed.1`), as `pgmcp query` and `check`
    /// ask for one when the server wants one and none was given.
    pub fn open_typed(
        config: Config,
        url: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        typed: Option<(&str, &str)>,
    ) -> Result<Service, OpenError> {
        let fail = |field: &str, message: String| ConfigError {
            file: config.source.clone(),
            field: Some(field.to_owned()),
            message,
        };
        let named = !config.databases.is_empty();
        let mut databases = Vec::new();
        if named {
            // Said as the setting's own mistake, so the person is sent to
            // the flag or the variable, not to the file.
            let beside = |setting: &str| {
                OpenError::Choice(ChoiceError::Setting {
                    setting: setting.to_owned(),
                    message: format!(
                        "it names one database, but the config names its databases in `databases`: {}",
                        match setting {
                            "--database" => "drop --database".to_owned(),
                            variable => format!("unset {variable}"),
                        }
                    ),
                })
            };
            // What would name the one database without `databases`, read
            // the one way every command reads it (`PGMCP_DEMO=false` names
            // nothing).
            if let Some(one) = crate::backend::named::named(url, None, None, env)? {
                return Err(beside(one.setting.name()));
            }
            for entry in &config.databases {
                databases.push(Database {
                    name: entry.name.clone(),
                    description: entry.description.clone(),
                    engine: Arc::new(named_engine(&config, entry, false, env, typed)?),
                    reading: None,
                });
            }
        } else {
            let (choice, setting) = choose_named(&config, url, env)?;
            if let Some(setting) = &setting {
                tracing::info!(from = setting.setting.name(), "database setting");
            }
            if let Some(note) = choice.missing_file_note(setting.as_ref()) {
                tracing::warn!("the database file is not there: {note}");
            }
            databases.push(Database {
                name: String::new(),
                description: None,
                engine: Arc::new(Engine::from_choice(config.clone(), choice)),
                reading: None,
            });
        }
        let mut tools = Vec::new();
        for (i, tool) in config.tools.iter().enumerate() {
            // The config checked the name; a `Config` built in code may not
            // have, and a tool never falls back to another database.
            let index = match &tool.database {
                Some(name) => databases.iter().position(|d| &d.name == name).ok_or_else(|| {
                    fail(
                        &format!("tools[{i}].database"),
                        format!("tool {}: no database is named {name:?}", tool.name),
                    )
                })?,
                None => 0,
            };
            let database = &databases[index];
            let db_config = database.engine.config();
            let field = |name: &str| format!("tools[{i}].{name}");
            let named_tool = |message: String| format!("tool {}: {message}", tool.name);
            let read_only = match (db_config.read_only, tool.read_only) {
                (true, Some(false)) => {
                    return Err(fail(
                        &field("read_only"),
                        named_tool(format!(
                            "it is marked as writing, but {} is read-only: set read_only on the database to false, or drop this tool",
                            database.shown()
                        )),
                    )
                    .into());
                }
                (db, tool) => tool.unwrap_or(db),
            };
            // The mode the statement is judged in now: the tool's or its
            // database's. Left unmarked on a database that may write, a
            // tool whose statement only reads is then given read-only
            // sessions (below), so what its annotations promise holds.
            let mode = match read_only {
                true => Mode::ReadOnly,
                false => Mode::ReadWrite,
            };
            let dialect = database.engine.dialect();
            let preview =
                guard::preview::preview(&db_config.protection, mode, dialect, &tool.statement).map_err(|v| {
                    // Read-only by the tool's own word, not the server's.
                    let message = match read_only && !db_config.read_only {
                        true => v
                            .message
                            .replace("(server.read_only is on)", "(the tool is marked read_only)"),
                        false => v.message,
                    };
                    fail(
                        &field("statement"),
                        named_tool(format!("the guard refuses it: {message}")),
                    )
                })?;
            let dialect_reads = dialect != Dialect::DuckDb;
            let read_only = read_only || (tool.read_only.is_none() && !preview.writes && dialect_reads);
            if let Some(used) = preview.placeholders
                && used != tool.parameters.len()
            {
                return Err(fail(
                    &field("statement"),
                    named_tool(format!(
                        "the statement uses {} but the tool lists {} parameter{}: one placeholder ($1, $2, ...) per parameter, in the order they are listed",
                        match used {
                            0 => "no placeholders".to_owned(),
                            1 => "$1".to_owned(),
                            n => format!("$1..${n}"),
                        },
                        tool.parameters.len(),
                        if tool.parameters.len() == 1 { "" } else { "s" }
                    )),
                )
                .into());
            }
            // DuckDB opens a file once per process: a second, read-only
            // instance of a file the first may write would read what the
            // first has not written through (checked), so it is refused.
            if read_only && !db_config.read_only && !dialect_reads {
                return Err(fail(
                    &field("read_only"),
                    named_tool(format!(
                        "{} is a writable DuckDB file, which pgmcp opens once: a tool cannot have read-only \
                         sessions of its own there. Make the database read-only, or leave read_only out of the \
                         tool (the guard judges its statement at every call either way)",
                        database.shown()
                    )),
                )
                .into());
            }
            let reading_because = match (read_only && !db_config.read_only, tool.read_only) {
                (false, _) => None,
                (true, Some(_)) => Some("the tool is marked read_only"),
                (true, None) => Some(
                    "the tool runs read-only because its statement looks as if it only reads; if it writes, \
                     mark it \"read_only\": false in the config",
                ),
            };
            if read_only && !db_config.read_only && databases[index].reading.is_none() {
                let reading = match named {
                    true => named_engine(&config, &config.databases[index], true, env, typed)?,
                    false => {
                        let reading = Config {
                            read_only: true,
                            ..config.clone()
                        };
                        let choice = choose_named(&reading, url, env)?.0;
                        Engine::from_choice(reading, choice)
                    }
                };
                databases[index].reading = Some(Arc::new(reading));
            }
            tools.push(Curated {
                tool: tool.clone(),
                database: index,
                read_only,
                reading_because,
            });
        }
        Ok(Service {
            databases,
            tools,
            enabled: config.tools_enabled,
            named,
        })
    }

    /// The databases, the default first.
    pub fn databases(&self) -> &[Database] {
        &self.databases
    }

    /// Whether calls choose a database by name (`databases` is configured).
    pub fn named(&self) -> bool {
        self.named
    }

    /// The default database's engine: the first (or only) one.
    pub fn default_engine(&self) -> &Arc<Engine> {
        &self.databases[0].engine
    }

    /// The engine of the database `name`; `None`: the default. A name the
    /// config does not have is the caller's error, listing the ones it has.
    pub fn engine(&self, name: Option<&str>) -> Result<&Arc<Engine>, Error> {
        match name {
            None => Ok(self.default_engine()),
            Some(name) => self
                .databases
                .iter()
                .find(|d| d.name == name)
                .map(|d| &d.engine)
                .ok_or_else(|| {
                    Error::Input(InputError::UnknownDatabase {
                        given: name.to_owned(),
                        known: self.databases.iter().map(|d| d.name.clone()).collect(),
                    })
                }),
        }
    }

    /// The curated tools, in the config's order.
    pub fn tools(&self) -> &[Curated] {
        &self.tools
    }

    /// Which built-in tools are served.
    pub fn enabled(&self) -> ToolsEnabled {
        self.enabled
    }

    /// The curated tool `name` and the engine it runs on.
    pub fn tool(&self, name: &str) -> Option<(&Curated, &Arc<Engine>)> {
        let curated = self.tools.iter().find(|t| t.tool.name == name)?;
        let database = &self.databases[curated.database];
        let engine = match (curated.read_only, &database.reading) {
            (true, Some(reading)) => reading,
            _ => &database.engine,
        };
        Some((curated, engine))
    }

    /// Call the curated tool `name` with `arguments`: checked and bound to
    /// its statement's placeholders, then run through the engine's whole
    /// pipeline as a `query` call. `None` when no curated tool has the name.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<&Map<String, Value>>,
        consent: Consent,
        cancel: CancellationToken,
    ) -> Option<(&Arc<Engine>, Result<QueryAnswer, Error>)> {
        let (curated, engine) = self.tool(name)?;
        let params = match arguments::bind(&curated.tool, arguments, engine.dialect()) {
            Ok(params) => params,
            Err(message) => return Some((engine, Err(Error::Input(InputError::Argument(message))))),
        };
        let input = QueryInput {
            sql: curated.tool.statement.clone(),
            params,
            limit: None,
            database: None,
        };
        let answer = engine.query_answer_from(&input, consent, cancel).await;
        let answer = match curated.reading_because {
            Some(because) => answer.map_err(|e| reworded(e, because)),
            None => answer,
        };
        Some((engine, answer))
    }

    /// Stop every engine's calls in flight within `grace`, all at once.
    pub async fn shutdown(&self, grace: Duration) {
        let mut stopping = tokio::task::JoinSet::new();
        for engine in self.engines() {
            let engine = engine.clone();
            stopping.spawn(async move { engine.shutdown(grace).await });
        }
        while stopping.join_next().await.is_some() {}
    }

    fn engines(&self) -> impl Iterator<Item = &Arc<Engine>> {
        self.databases
            .iter()
            .flat_map(|d| std::iter::once(&d.engine).chain(d.reading.as_ref()))
    }
}

/// A refusal by read-only mode of a tool that runs read-only on a database
/// that may write: said with the tool's reason, not the server's setting.
fn reworded(error: Error, because: &str) -> Error {
    match error {
        Error::Guard(mut violation) if violation.rule == guard::Rule::ReadOnly => {
            violation.message = match violation.message.contains("(server.read_only is on)") {
                true => violation.message.replace("server.read_only is on", because),
                false => format!("{} ({because})", violation.message),
            };
            Error::Guard(violation)
        }
        Error::Prompted { source, prompts } => Error::Prompted {
            source: Box::new(reworded(*source, because)),
            prompts,
        },
        other => other,
    }
}

impl Database {
    /// How messages name it: `database "orders"`, or `the database`.
    pub fn shown(&self) -> String {
        match self.name.is_empty() {
            true => "the database".to_owned(),
            false => format!("database {:?}", self.name),
        }
    }

    /// Its dialect.
    pub fn dialect(&self) -> Dialect {
        self.engine.dialect()
    }
}

/// The engine of the `databases` entry `entry` (read-only sessions when
/// `reading`): its URL or connection section, nothing from the
/// environment but its password variable.
fn named_engine(
    config: &Config,
    entry: &NamedDatabase,
    reading: bool,
    env: &dyn Fn(&str) -> Option<String>,
    typed: Option<(&str, &str)>,
) -> Result<Engine, ConfigError> {
    let variable = password_variable(&entry.name);
    let own = |key: &str| -> Option<String> {
        match key {
            "PGPASSWORD" => env(&variable),
            // No other PG* variable: they would reach every database alike.
            k if k.starts_with("PG") && !k.starts_with("PGMCP_") => None,
            k if NAMING_VARIABLES.contains(&k) => None,
            k => env(k),
        }
    };
    let mut db_config = entry.config.clone();
    db_config.read_only |= reading;
    let (mut choice, _) = choose_named(&db_config, None, &own).map_err(|e| ConfigError {
        file: config.source.clone(),
        field: Some(format!(
            "databases.{}.{}",
            entry.name,
            if db_config.database.is_some() {
                "url"
            } else {
                "connection"
            }
        )),
        // The field is named above: only what is wrong with it.
        message: match e {
            ChoiceError::Setting { message, .. } => message,
            ChoiceError::Postgres(e) => e.message,
            other => other.to_string(),
        },
    })?;
    // What a message says to set, and where a password it used came from,
    // is the database's own variable, which stood in for PGPASSWORD.
    if let crate::backend::Choice::Postgres(params) = &mut choice {
        if let Some(crate::backend::postgres::PasswordSource::Environment(from)) = &mut params.password_from {
            *from = variable.clone();
        }
        params.password_variable = variable;
        params.named = Some(entry.name.clone());
        if let Some((_, password)) = typed.filter(|(name, _)| *name == entry.name) {
            params.password = Some(password.to_owned());
            params.password_from = Some(crate::backend::postgres::PasswordSource::Prompt);
        }
    }
    Ok(Engine::from_choice(db_config, choice))
}
