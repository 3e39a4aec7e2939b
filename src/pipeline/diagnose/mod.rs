//! `diagnose`: one health check of a PostgreSQL database, chosen from a
//! documented set ([`Check`]), through the same stages as `query` — slot,
//! `before_query` hooks, timeout rule, the guard (the statement is
//! pgmcp's, the rules are the server's), a transaction of its own that
//! keeps nothing, `after_query` hooks, sanitization and the byte cap. The
//! statements only read PostgreSQL's statistics views, and see what the
//! role statements run as may see.

mod checks;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use checks::Check;

use super::Engine;
use super::budget::ReadBudget;
use crate::backend::{Deadline, Dialect, Guard, OwnStatement, Statement};
use crate::error::{Error, InputError};
use crate::guard::{self, Judge};
use crate::identifier;

/// Most bytes of facts read back: a check's lists hold ten items at most.
const FACTS_BYTES: usize = 1 << 20;

/// Before a check's statement is parsed: its names, operators included,
/// resolve in `pg_catalog` alone, whatever `search_path` a database owner
/// gave the database or the role (an operator `=` of theirs first in it
/// would otherwise run in a check of pgmcp's).
static ONLY_CATALOG: LazyLock<OwnStatement> = LazyLock::new(|| OwnStatement {
    sql: "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true)".to_owned(),
    params: Vec::new(),
    before_parse: true,
});

/// What `diagnose` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiagnoseAnswer {
    pub check: Check,
    /// What the facts mean, in one line.
    pub reading: String,
    /// False when the check cannot run here (`slow_queries` without
    /// pg_stat_statements); the reading says how to make it possible.
    pub available: bool,
    /// The facts, from PostgreSQL's statistics views; lists hold ten items
    /// at most.
    pub facts: Map<String, Value>,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Engine {
    /// One health check (see the module's doc). Any error comes back with
    /// the matching `error_prompts` appended.
    pub async fn diagnose(&self, check: Check, cancel: CancellationToken) -> Result<DiagnoseAnswer, Error> {
        let call = self.begin(cancel);
        self.run_diagnose(check, &call.token)
            .await
            .map_err(|e| self.prompted(e))
    }

    async fn run_diagnose(&self, check: Check, cancel: &CancellationToken) -> Result<DiagnoseAnswer, Error> {
        if self.backend.dialect() != Dialect::Postgres {
            return Err(InputError::Params(
                "diagnose reads PostgreSQL's statistics views: this database is not PostgreSQL".to_owned(),
            )
            .into());
        }
        let waiting = self.deadline(self.config.query.default_timeout, cancel.clone());
        let _slot = self.slot(&waiting).await?;
        let (sql, judge) = match check.sql() {
            Some(sql) => (sql, self.judge.clone()),
            None => match self.statements(&waiting).await? {
                Ok(found) => found,
                Err(reading) => return self.unavailable(check, reading, cancel).await,
            },
        };
        let (sql, deadline) = self.hooked_and_timed("diagnose", &sql, cancel).await?;
        let facts = match self.read_facts(&judge, &sql, &deadline).await {
            // The extension is there, its library is not loaded.
            Err(Error::Db(db)) if check == Check::SlowQueries && db.code() == "55000" => {
                return self.unavailable(check, checks::without_statements(false), cancel).await;
            }
            facts => facts?,
        };
        let answer = DiagnoseAnswer {
            check,
            reading: checks::read(check, &Value::Object(facts.clone())),
            available: true,
            facts,
            truncated: false,
            hint: None,
        };
        self.answer(answer, "diagnose", cancel).await
    }

    /// `slow_queries`' statement, and the judge for it: pg_stat_statements'
    /// own function is VOLATILE, which read-only mode runs only when vouched
    /// for. pgmcp vouches for that one function, and calls it, only where
    /// the catalog shows it is the extension's. Else the reading that says
    /// what is missing.
    async fn statements(&self, deadline: &Deadline) -> Result<Result<(String, Judge), String>, Error> {
        let Some(extension) = self.backend.extension("pg_stat_statements", deadline).await? else {
            // The library defines its settings once it is loaded.
            let loaded = self
                .backend
                .setting("pg_stat_statements.max", deadline)
                .await?
                .is_some();
            return Ok(Err(checks::without_statements(loaded)));
        };
        let function = "pg_stat_statements(boolean)";
        if !extension.functions.iter().any(|f| f == function) {
            return Ok(Err(checks::not_the_extensions(&extension.schema)));
        }
        let sql = checks::slow_queries(&identifier::quoted(&extension.schema), &extension.version);
        let judge = self.judge.vouching(&[format!("{}.{function}", extension.schema)]);
        Ok(Ok((sql, judge)))
    }

    /// Run one check's statement, judged as `query` would judge it, and
    /// read its one `json` value.
    async fn read_facts(&self, judge: &Judge, sql: &str, deadline: &Deadline) -> Result<Map<String, Value>, Error> {
        let mut judged_again = false;
        let rows = loop {
            let routines = self.backend.routines(deadline).await?;
            guard::check(judge, &routines, sql)?;
            let statement = Statement {
                sql,
                params: &[],
                fetch_limit: 1,
                budget: ReadBudget::for_answer(FACTS_BYTES),
                database: None,
                // Nothing to keep: it only reads.
                rollback: true,
                prelude: std::slice::from_ref(&*ONLY_CATALOG),
                epilogue: &[],
            };
            let guard = Guard::Checked {
                catalog_version: routines.version(),
            };
            match self.backend.execute(statement, guard, deadline).await {
                Err(Error::CatalogChanged) if !judged_again => judged_again = true,
                result => break result?,
            }
        };
        rows.rows
            .first()
            .and_then(|row| row.first())
            .filter(|_| !rows.spent)
            .and_then(|facts| facts.as_object())
            .cloned()
            .ok_or_else(|| Error::UnexpectedReply {
                what: "a diagnose check",
                detail: "no facts came back, or they were too large to read".to_owned(),
            })
    }

    async fn unavailable(
        &self,
        check: Check,
        reading: String,
        cancel: &CancellationToken,
    ) -> Result<DiagnoseAnswer, Error> {
        let answer = DiagnoseAnswer {
            check,
            reading,
            available: false,
            facts: Map::new(),
            truncated: false,
            hint: None,
        };
        self.answer(answer, "diagnose", cancel).await
    }
}
