//! `pgmcp check --suggest-role`: the SQL that creates a reader role (and,
//! with `--login`, the login that uses it), read from the database itself.

use std::io::Write;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::CliError;
use crate::backend::Choice;
use crate::backend::postgres;
use crate::config::Config;
use crate::error::Error as QueryError;
use crate::pipeline::Engine;

/// Role name `check --suggest-role` uses when neither the flag nor
/// connection.role names one.
const SUGGESTED_ROLE: &str = "pgmcp_reader";

/// `pgmcp check --suggest-role`: print SQL creating a reader role. The output
/// is SQL only (explanations are comments), so it can go straight to psql.
/// With `--login`, the SQL also creates the login, and the steps that follow
/// (with its password) go to stderr, apart from the SQL a person may save,
/// share or pipe.
pub(super) async fn suggest_role(
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
    let conn = match crate::pipeline::choose(&config, database.as_deref(), &crate::process::environment::var)? {
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
