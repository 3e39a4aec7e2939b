//! What a person is shown, asked of the engines: PostgreSQL's plan of the
//! statement (never run: `EXPLAIN` in a read-only transaction that is
//! rolled back, and only when planning it runs no function the catalog
//! cannot show only reads), SQLite's and DuckDB's reports as they prepare
//! it. Apart from the pure part (`super`) because it does IO.

use super::{Proposal, pg_explainable, pg_written_tables};
use crate::backend::{self, Deadline, Dialect, Guard, Statement};
use crate::error::Error;
use crate::guard;
use crate::pipeline::budget::ReadBudget;
use crate::pipeline::{Engine, QueryInput, explain, plan};

/// pgmcp's statement that makes a PostgreSQL transaction read-only, run
/// before the statement is parsed: what runs unconfirmed under `confirm`
/// cannot write, whatever the guard thought of it.
pub(crate) fn read_only_transaction() -> backend::OwnStatement {
    backend::OwnStatement {
        sql: "SET TRANSACTION READ ONLY".to_owned(),
        params: Vec::new(),
        before_parse: true,
    }
}

/// What the guard found of a PostgreSQL statement, for its proposal.
pub(in crate::pipeline) struct PgJudged<'a> {
    pub checked: &'a guard::Checked,
    /// The catalog's facts it was judged with.
    pub routines: &'a guard::Routines,
    /// The catalog's version those facts are of.
    pub guard: Guard<'a>,
    /// The guard classifies it as writing.
    pub writes: bool,
}

impl Engine {
    /// What a person is shown for a PostgreSQL statement the guard
    /// `judged`: the tables it changes and the rows it touches, from
    /// `EXPLAIN` (never `ANALYZE`) in a read-only transaction that is
    /// rolled back, once the guard showed planning it runs no function
    /// that may do anything but read (the planner folds IMMUTABLE calls,
    /// and estimates with STABLE ones); else the tables the statement
    /// names, and no estimate.
    pub(in crate::pipeline) async fn pg_proposal(
        &self,
        sql: &str,
        input: &QueryInput,
        judged: PgJudged<'_>,
        deadline: &Deadline,
    ) -> Result<Proposal, Error> {
        let PgJudged {
            checked,
            routines,
            guard,
            writes,
        } = judged;
        let explained = format!("EXPLAIN (FORMAT JSON) {sql}");
        let unestimated = match pg_explainable(&checked.tree.stmts) {
            false => Some("PostgreSQL plans only queries and INSERT, UPDATE, DELETE and MERGE"),
            true if guard::check(&self.judge.planning(), routines, &explained).is_err() => Some(
                "the statement runs functions that may do more than read, which planning it could run before \
                 you answer",
            ),
            true => None,
        };
        let document = match unestimated {
            Some(_) => None,
            None => {
                let statement = Statement {
                    sql: &explained,
                    params: &input.params,
                    fetch_limit: 1,
                    budget: ReadBudget::for_answer(explain::PLAN_BYTES),
                    database: None,
                    rollback: true,
                    prelude: &[read_only_transaction()],
                    epilogue: &[],
                };
                let rows = self.backend.execute(statement, guard, deadline).await?;
                rows.rows.into_iter().next().and_then(|row| row.into_iter().next())
            }
        };
        let planned = document.as_ref().map(plan::change).unwrap_or_default();
        Ok(Proposal {
            sql: sql.to_owned(),
            params: input.params.clone(),
            database: input.database.clone(),
            named: self.config.name.clone(),
            writes,
            // As PostgreSQL rewrote it (a view's rules), where it planned it.
            tables: match (writes, planned.tables.is_empty()) {
                (false, _) => Vec::new(),
                (true, false) => planned.tables,
                (true, true) => pg_written_tables(&checked.tree.stmts),
            },
            estimated_rows: planned.rows,
            unestimated: unestimated.or(planned.rows.is_none().then_some("PostgreSQL's plan gives none")),
            dialect: Dialect::Postgres,
        })
    }

    /// What a person is shown for an SQLite or DuckDB statement: the whole
    /// guard judges it as the engine prepares it, which reports what it
    /// changes and (DuckDB) the rows its plan expects; nothing runs. The
    /// error to return: [`Error::Unconfirmed`], or why the guard or the
    /// engine refuses the statement anyway.
    pub(in crate::pipeline) async fn embedded_proposal(
        &self,
        sql: &str,
        input: &QueryInput,
        deadline: &Deadline,
    ) -> Error {
        let statement = Statement {
            sql,
            params: &input.params,
            fetch_limit: 0,
            budget: ReadBudget::for_answer(0),
            database: input.database.as_deref(),
            rollback: true,
            prelude: &[],
            epilogue: &[],
        };
        match self.backend.change(statement, &self.judge, deadline).await {
            Ok(change) => Error::Unconfirmed(Box::new(Proposal {
                sql: sql.to_owned(),
                params: input.params.clone(),
                database: input.database.clone(),
                named: self.config.name.clone(),
                writes: change.writes,
                tables: change.tables,
                estimated_rows: change.estimated_rows,
                unestimated: change.estimated_rows.is_none().then_some(match self.backend.dialect() {
                    Dialect::Sqlite => "SQLite makes none",
                    _ => "its plan gives none",
                }),
                dialect: self.backend.dialect(),
            })),
            Err(e) => e,
        }
    }
}
