//! `explain`: a PostgreSQL statement's plan, through the same stages as
//! `query` — size check, slot, `before_query` hooks, timeout rule, the
//! guard on the statement exactly as `query` would judge it — then
//! `EXPLAIN (FORMAT JSON[, ANALYZE, BUFFERS])` of it in a transaction that
//! is always rolled back: with `analyze` the statement runs, and nothing it
//! did inside the transaction is kept. The answer is the plan read for a model ([`plan`]), with
//! the whole plan when it fits, hooked, sanitized and capped like any
//! answer. Hypothetical indexes: [`hypothetical`].

mod hypothetical;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::budget::ReadBudget;
use super::confirm::{self, Consent};
use super::plan::{self, PlanSummary};
use super::{Engine, QueryInput, check_input, param_bytes};
use crate::backend::{Deadline, Dialect, Guard, Statement};
use crate::error::{Error, InputError};
use crate::guard;
use hypothetical::Hypopg;

/// Most bytes of plan JSON read back: a plan is pgmcp's own answer, never
/// the rows, and a deep one is still far below this.
pub(super) const PLAN_BYTES: usize = 4 << 20;

/// Arguments of an `explain` call.
#[derive(Debug, Clone, Default)]
pub struct ExplainInput {
    pub sql: String,
    /// Bound to `$1..$n` in order; never interpolated into the SQL.
    pub params: Vec<Value>,
    /// Run the statement (in a transaction rolled back afterwards) and
    /// report actual rows, time and buffers.
    pub analyze: bool,
    /// `CREATE INDEX` statements hypopg makes indexes of, seen only by this
    /// plan's planner (never with `analyze`).
    pub hypothetical_indexes: Vec<String>,
}

/// Most hypothetical indexes one call may ask for.
pub const MAX_HYPOTHETICAL_INDEXES: usize = 16;

/// One hypothetical index, and whether the plan uses it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HypotheticalIndex {
    /// As given.
    pub definition: String,
    /// The name hypopg gave it, as plan nodes show it (`<13556>btree_orders_customer_id`).
    pub name: String,
    /// Whether some node of the plan scans it.
    pub used: bool,
}

/// What `explain` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExplainAnswer {
    /// The plan, read: totals, the slowest nodes, what looks wrong.
    #[serde(flatten)]
    pub summary: PlanSummary,
    /// Whether the statement ran (`analyze`); whatever it did was rolled back.
    pub analyzed: bool,
    /// The hypothetical indexes the plan was made with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hypothetical_indexes: Vec<HypotheticalIndex>,
    /// PostgreSQL's whole plan (`EXPLAIN (FORMAT JSON)`), when it fits in
    /// half the answer's byte cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Engine {
    /// The plan of one PostgreSQL statement (see the module's doc). Any
    /// error comes back with the matching `error_prompts` appended.
    pub async fn explain(&self, input: &ExplainInput, cancel: CancellationToken) -> Result<ExplainAnswer, Error> {
        self.explain_from(input, Consent::Caller, cancel).await
    }

    /// [`Self::explain`] for a call `consent` speaks for. `explain` asks no
    /// one: where `confirm` would ask before a model's statement runs, it
    /// runs (`analyze`) only what the guard's reading judge passes, plans
    /// only what runs no function that may do more than read (the planner
    /// folds IMMUTABLE calls), and in a `READ ONLY` transaction; a write
    /// goes through `query`, where the person is asked.
    pub async fn explain_from(
        &self,
        input: &ExplainInput,
        consent: Consent,
        cancel: CancellationToken,
    ) -> Result<ExplainAnswer, Error> {
        let call = self.begin(cancel);
        self.run_explain(input, &consent, &call.token)
            .await
            .map_err(|e| self.prompted(e))
    }

    async fn run_explain(
        &self,
        input: &ExplainInput,
        consent: &Consent,
        cancel: &CancellationToken,
    ) -> Result<ExplainAnswer, Error> {
        let config = &self.config;
        if self.backend.dialect() != Dialect::Postgres {
            return Err(InputError::Params(
                "explain reads PostgreSQL's plans: this database is not PostgreSQL. Use query with EXPLAIN QUERY \
                 PLAN (SQLite) or EXPLAIN (DuckDB)"
                    .to_owned(),
            )
            .into());
        }
        let as_query = QueryInput {
            sql: input.sql.clone(),
            params: input.params.clone(),
            limit: None,
            database: None,
        };
        check_input(
            &as_query,
            config.query.max_params_bytes,
            config.query.max_sql_length,
            config.query.max_rows,
            None,
        )?;
        if input.analyze && !input.hypothetical_indexes.is_empty() {
            return Err(InputError::Params(
                "hypothetical indexes exist only for the planner: a statement that runs (analyze) cannot use \
                 them. Leave analyze off to see whether the plan would use them"
                    .to_owned(),
            )
            .into());
        }
        if input.hypothetical_indexes.len() > MAX_HYPOTHETICAL_INDEXES {
            return Err(InputError::Params(format!(
                "{} hypothetical indexes: at most {MAX_HYPOTHETICAL_INDEXES} per call",
                input.hypothetical_indexes.len()
            ))
            .into());
        }
        let size = input.sql.len()
            + input.params.iter().map(param_bytes).sum::<usize>()
            + input.hypothetical_indexes.iter().map(String::len).sum::<usize>();
        if let Some(long) = input
            .hypothetical_indexes
            .iter()
            .find(|d| d.len() > config.query.max_sql_length)
        {
            return Err(InputError::Params(format!(
                "a hypothetical index's definition takes {} bytes: more than query.max_sql_length ({}) allows",
                long.len(),
                config.query.max_sql_length
            ))
            .into());
        }
        let _slot = self
            .slot_for(size, &self.deadline(config.query.default_timeout, cancel.clone()))
            .await?;
        // The hooks see what would run: with `analyze`, the statement does.
        let (sql, deadline) = self.hooked_and_timed("explain", &input.sql, cancel).await?;
        let options = match input.analyze {
            true => "FORMAT JSON, ANALYZE, BUFFERS",
            false => "FORMAT JSON",
        };
        let explained = format!("EXPLAIN ({options}) {sql}");
        // Nobody is asked here: where `confirm` would ask, what runs must
        // only read, and what is planned must run nothing that may write.
        let unasked = confirm::gate(config, consent, &sql, &input.params, None).reading_only();
        let (reading, planning) = (self.judge.reading(), self.judge.planning());
        let mut hypopg: Option<Hypopg> = None;
        let mut judged_again = false;
        let rows = loop {
            let routines = self.backend.routines(&deadline).await?;
            // As `query` would judge the statement: what it refuses,
            // `explain` refuses, in either mode.
            let checked = guard::check(&self.judge, &routines, &sql)?;
            guard::check_params(checked.param_count(), &input.params, guard::Placeholders::Dollar)
                .map_err(|e| Error::Input(InputError::Params(e)))?;
            // And the text that runs, judged whole: the statement inside
            // pgmcp's EXPLAIN, which with ANALYZE executes it.
            guard::check(&self.judge, &routines, &explained)?;
            if unasked {
                unasked_check(input.analyze, &reading, &planning, &routines, &sql, &explained)?;
            }
            for definition in &input.hypothetical_indexes {
                guard::hypothetical::index(&self.judge, &routines, definition)?;
            }
            // Only once they passed; again after a catalog change, which
            // may have moved the extension.
            if (hypopg.is_none() || judged_again) && !input.hypothetical_indexes.is_empty() {
                hypopg = Some(self.hypopg(&input.hypothetical_indexes, &deadline).await?);
            }
            let (prelude, epilogue) = hypopg.as_ref().map_or((&[][..], &[][..]), Hypopg::around);
            let prelude: Vec<_> = match unasked {
                true => std::iter::once(confirm::proposal::read_only_transaction())
                    .chain(prelude.iter().cloned())
                    .collect(),
                false => prelude.to_vec(),
            };
            let statement = Statement {
                sql: &explained,
                params: &input.params,
                fetch_limit: 1,
                budget: ReadBudget::for_answer(PLAN_BYTES),
                database: None,
                rollback: true,
                prelude: &prelude,
                epilogue,
            };
            let guard = Guard::Checked {
                catalog_version: routines.version(),
            };
            match self.backend.execute(statement, guard, &deadline).await {
                Err(Error::CatalogChanged) if !judged_again => judged_again = true,
                result => break result?,
            }
        };
        let document = rows
            .rows
            .first()
            .and_then(|row| row.first())
            .filter(|_| !rows.spent)
            .cloned()
            .ok_or_else(|| Error::UnexpectedReply {
                what: "EXPLAIN",
                detail: "no plan came back, or it was too large to read".to_owned(),
            })?;
        let summary = plan::summarize(&document).ok_or_else(|| Error::UnexpectedReply {
            what: "EXPLAIN",
            detail: "the plan is not the JSON PostgreSQL's EXPLAIN (FORMAT JSON) gives".to_owned(),
        })?;
        let scanned = plan::index_names(&document);
        let hypothetical_indexes = input
            .hypothetical_indexes
            .iter()
            // Past the read-only transaction's own answer, when it ran first.
            .zip(Hypopg::names(
                &rows.prelude[usize::from(unasked).min(rows.prelude.len())..],
            ))
            .map(|(definition, name)| HypotheticalIndex {
                definition: definition.clone(),
                used: scanned.contains(&name.as_str()),
                name,
            })
            .collect();
        let plan_bytes = document.to_string().len();
        let room = config.query.max_result_length / 2;
        let (plan, hint) = match plan_bytes <= room {
            true => (Some(document), None),
            false => (
                None,
                Some(format!(
                    "The whole plan ({plan_bytes} bytes) is left out: it takes more than half the \
                     {}-byte result limit (query.max_result_length).",
                    config.query.max_result_length
                )),
            ),
        };
        let answer = ExplainAnswer {
            summary,
            analyzed: input.analyze,
            hypothetical_indexes,
            plan,
            truncated: false,
            hint,
        };
        self.answer(answer, "explain", cancel).await
    }

    /// hypopg's statements for `definitions`, where the database has it.
    async fn hypopg(&self, definitions: &[String], deadline: &Deadline) -> Result<Hypopg, Error> {
        match self.backend.extension("hypopg", deadline).await? {
            Some(hypopg) => Ok(Hypopg::new(&hypopg.schema, definitions)),
            None => Err(InputError::Params(hypothetical::MISSING.to_owned()).into()),
        }
    }
}

/// Where `confirm` would ask before a model's statement runs and nobody is
/// asked (see [`Engine::explain_from`]): with `analyze` the statement must
/// be one the reading judge passes; without, planning it must run no
/// function that may do more than read.
fn unasked_check(
    analyze: bool,
    reading: &guard::Judge,
    planning: &guard::Judge,
    routines: &guard::Routines,
    sql: &str,
    explained: &str,
) -> Result<(), Error> {
    let refused = |why: &str| {
        Err(InputError::Params(format!(
            "{why}: this server asks a person before a statement that changes data runs (confirm), and explain \
             cannot ask. Send the statement through query, where the person is asked"
        ))
        .into())
    };
    match analyze {
        true if guard::check(reading, routines, sql).is_err() => refused(
            "explain with analyze runs the statement, and this one changes data (or runs a function that may); a \
             rollback does not undo all of it (a sequence, a file). Leave analyze off to see its plan",
        ),
        false if guard::check(planning, routines, explained).is_err() => refused(
            "planning this statement could run functions that may do more than read (PostgreSQL runs IMMUTABLE \
             calls while it plans)",
        ),
        _ => Ok(()),
    }
}
