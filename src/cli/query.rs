//! `pgmcp query`: one statement from the command line, for people and scripts.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::CliError;
use crate::backend::Choice;
use crate::backend::postgres;
use crate::config::Config;
use crate::error::Error as QueryError;
use crate::pipeline::{Engine, QueryInput};

/// `pgmcp query`: one statement through the same pipeline as `serve`; the
/// result as JSON on stdout, an error (fenced as the tools fence it) on
/// stderr and exit 1.
pub(super) async fn query_once(
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
    if !config.databases.is_empty() {
        return query_named(config, database, input).await;
    }
    let (choice, named) =
        crate::pipeline::choose_named(&config, database.as_deref(), &crate::process::environment::var)?;
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
    answer(&engine, result, missing)
}

/// `query` on a config with `databases`: `--database` names one of them
/// (the first by default).
async fn query_named(config: Config, database: Option<String>, input: QueryInput) -> Result<ExitCode, CliError> {
    use crate::service::Service;
    let env = crate::process::environment::var;
    let mut service = Service::open(config.clone(), None, &env)?;
    let engine = match service.engine(database.as_deref()) {
        Ok(engine) => engine.clone(),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let name = database.unwrap_or_else(|| service.databases()[0].name.clone());
    let mut engine = engine;
    let mut result = engine.query(&input, CancellationToken::new()).await;
    // Like psql: ask for a password only when the server wants one and a
    // person is at a terminal to type it.
    if needs_password(&result)
        && std::io::stdin().is_terminal()
        && let Ok(password) = rpassword::prompt_password(format!("Password for database {name}: "))
    {
        engine.close().await;
        service = Service::open_typed(config, None, &env, Some((&name, &password)))?;
        if let Ok(typed) = service.engine(Some(&name)) {
            engine = typed.clone();
            result = engine.query(&input, CancellationToken::new()).await;
        }
    }
    engine.close().await;
    answer(&engine, result, None)
}

/// The server asked for a password and none was given.
fn needs_password<T>(result: &Result<T, QueryError>) -> bool {
    matches!(
        result.as_ref().map_err(QueryError::kind),
        Err(QueryError::PasswordRequired { .. })
    )
}

/// The result as JSON on stdout, or the error (fenced) on stderr and exit 1.
fn answer(
    engine: &Engine,
    result: Result<crate::pipeline::shape::QueryOutput, QueryError>,
    missing: Option<String>,
) -> Result<ExitCode, CliError> {
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
