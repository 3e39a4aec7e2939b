//! Library [`Engine`]s in tests: one on the harness's PostgreSQL, a config
//! edit that allows writes, and calls through the whole pipeline with what
//! they answered.

use pgmcp::testing::postgres::params;
use pgmcp::{Config, Engine, Error, QueryInput};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::pg::TestDb;

/// An engine on `db` with built-in defaults (read-only), adjusted by `edit`.
///
/// Before PostgreSQL 14 the harness's superuser login has no
/// `pg_read_all_data` to run read-only queries as, and is refused unless
/// told to run as itself: there the engine starts from
/// `connection.read_only_as_login`, which `edit` may turn off again
/// (`reader::` does, to see the refusal).
pub fn engine_for(db: &TestDb, edit: impl FnOnce(&mut Config)) -> Engine {
    let mut config = Config::builtin();
    config.connection.read_only_as_login = db.major() < 14;
    edit(&mut config);
    let params = params::resolve(Some(&db.url), &config.connection, &|_| None).expect("test URL resolves");
    Engine::postgres(config, params)
}

/// The built-in defaults for an engine on the harness's server (reached by a
/// URL of the test's own): before PostgreSQL 14, reading as the login, as
/// [`engine_for`] does.
pub fn builtin_for_server() -> Config {
    let mut config = Config::builtin();
    let version: u32 = super::pg::server()
        .psql("postgres", "SHOW server_version_num")
        .parse()
        .expect("a version number");
    config.connection.read_only_as_login = version < 140_000;
    config
}

/// Writes allowed: the config edit most writing tests make.
pub fn writable(c: &mut Config) {
    c.read_only = false;
}

/// Run `sql` through the whole pipeline.
pub async fn run(engine: &Engine, sql: &str) -> Result<pgmcp::QueryOutput, Error> {
    engine.query(&QueryInput::new(sql), CancellationToken::new()).await
}

/// The rows of `sql` as JSON; panics with the error if it fails.
pub async fn rows(engine: &Engine, sql: &str) -> Value {
    let out = run(engine, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    serde_json::to_value(&out.rows).unwrap()
}

/// The error text of a call that must fail.
pub fn err_text<T: std::fmt::Debug>(result: Result<T, Error>) -> String {
    match result {
        Err(e) => e.to_string(),
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}
