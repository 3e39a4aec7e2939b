//! The verdict on a prepared statement, by the type DuckDB's parser reports
//! (`Kind`) with what the words and the plan add: every rule the statement
//! falls under, reported in order. Apart from `text`, which runs before
//! DuckDB prepares anything, and from `plan`, which only reads DuckDB's
//! JSON.

use super::plan::overwrites;
use super::text::function;
use super::{Evidence, Kind, copies_from, created, is_checkpoint, replaces, rewrites_column};
use crate::guard::outline::Outline;
use crate::guard::{Finding, Judge, Rule, Violation, violation};

/// Pragmas that only report.
const READING_PRAGMAS: &[&str] = &[
    "table_info",
    "show",
    "show_tables",
    "show_tables_expanded",
    "show_databases",
    "database_list",
    "database_size",
    "storage_info",
    "metadata_info",
    "version",
    "platform",
    "functions",
    "collations",
    "user_agent",
];

/// Report every rule the prepared statement falls under, by the type DuckDB
/// reports, in order (the judge refuses the first one not allowed).
pub fn statement(judge: &Judge, outline: &Outline, evidence: &Evidence) -> Result<(), Violation> {
    let kind = evidence.kind;
    let plan = evidence.plan.as_ref();
    // What the plan runs, wherever the text hides it (a view, a table macro).
    for name in plan.iter().flat_map(|p| &p.functions) {
        function(judge, name)?;
    }
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    let any = |kinds: &[Kind]| kinds.contains(&kind);
    match kind {
        // EXPLAIN ANALYZE runs the statement it explains, and DuckDB's
        // statement type does not say whether ANALYZE is there (nor does any
        // reading of its options here, which DuckDB can always spell another
        // way): every statement the EXPLAIN may be of is judged as if it ran.
        Kind::Explain => {
            if evidence.explained.is_empty() {
                return violation(
                    Rule::Parse,
                    "this EXPLAIN is not supported: DuckDB does not read the statement after EXPLAIN as one statement of its own".to_owned(),
                );
            }
            for (inner_outline, inner) in &evidence.explained {
                statement(judge, inner_outline, inner)?;
            }
            return Ok(());
        }
        // A PIVOT without an IN list is several statements to DuckDB: one
        // that reads the pivot's values into a temporary type, then the
        // query. A read, when the statement is a query.
        Kind::Multi if matches!(outline.verb.as_str(), "PIVOT" | "UNPIVOT" | "SELECT" | "FROM") => return Ok(()),
        Kind::Invalid | Kind::Multi | Kind::Relation | Kind::LogicalPlan => {
            return crate::guard::unsupported("DuckDB", kind);
        }
        _ => {}
    }
    // In read-only mode a write is refused as a write, before the rule of
    // its kind: that rule's switch would only lead to this refusal. (DuckDB
    // plans no write there either, so the rules below would take the
    // missing plan as the worst case: `DELETE ... WHERE id = 1` is not a
    // delete without WHERE.)
    if kind.writes(outline) {
        crate::guard::write_in_read_only(judge, outline)?;
    }
    // DuckDB runs some statements as pragmas (`COPY FROM DATABASE a TO b`):
    // they fall under the rules of what their verb says as well.
    if kind == Kind::Pragma
        && let Some(said) = Kind::from_verb(outline)
        && said != Kind::Pragma
    {
        statement(judge, outline, &Evidence::of(said))?;
    }
    if kind == Kind::Drop {
        judge.decide(Finding::drop())?;
    }
    if kind == Kind::Alter && outline.has("DROP") {
        decide(
            Rule::Drop,
            "ALTER TABLE ... DROP is not allowed",
            "it destroys a column or constraint",
        )?;
    }
    // ALTER COLUMN ... [SET DATA] TYPE ... [USING ...] rewrites the column
    // in every row, like an UPDATE without WHERE.
    if kind == Kind::Alter && rewrites_column(outline) {
        judge.decide(Finding::column_rewrite("ALTER COLUMN ... TYPE is not allowed"))?;
    }
    // DuckDB reports TRUNCATE as a DELETE.
    if kind == Kind::Delete && outline.verb == "TRUNCATE" {
        judge.decide(Finding::truncate())?;
    }
    // Without a WHERE when either the words or DuckDB's plan say so: the
    // plan shows what runs (`DELETE ... RETURNING id AS where` has a word
    // WHERE and a plan that reads the whole table); no plan is the worst case.
    let unbounded = !outline.has_where() || plan.is_none_or(|p| p.whole_table);
    if kind == Kind::Delete && outline.verb != "TRUNCATE" && unbounded {
        judge.decide(Finding::delete_without_where())?;
    }
    if kind == Kind::Update && unbounded {
        judge.decide(Finding::update_without_where())?;
    }
    // An upsert or a REPLACE fed by a query overwrites every row the query
    // names (fed the table itself, every row): an UPDATE without WHERE.
    if kind == Kind::Insert && overwrites(outline, plan) && !outline.fed_by_values() {
        judge.decide(Finding::overwrite_from_query(
            "INSERT OR REPLACE and INSERT ... ON CONFLICT DO UPDATE fed by a query are not allowed",
        ))?;
    }
    if any(&[Kind::Analyze, Kind::Vacuum]) || (kind == Kind::Pragma && is_checkpoint(outline)) {
        let what = match kind {
            Kind::Analyze => "ANALYZE is not allowed",
            Kind::Vacuum => "VACUUM is not allowed",
            _ => "CHECKPOINT is not allowed",
        };
        judge.decide(Finding::maintenance(what))?;
    }
    if kind == Kind::Copy {
        match copies_from(outline) {
            true => judge.decide(Finding::copy_from())?,
            // DuckDB's COPY ... TO STDOUT is refused with pgmcp's own
            // streams (`text`), so the switch is the only remedy.
            false => judge.decide(Finding::copy_to_file())?,
        }
    }
    if kind == Kind::CopyDatabase {
        decide(
            Rule::Attach,
            "COPY FROM DATABASE is not allowed",
            "it copies between attached databases, which ATTACH opens or creates",
        )?;
    }
    if kind == Kind::Export {
        decide(
            Rule::Export,
            "EXPORT DATABASE is not allowed",
            "it writes the whole database to files on the server",
        )?;
    }
    if kind == Kind::Pragma && !is_checkpoint(outline) {
        match outline.verb == "IMPORT" {
            true => decide(
                Rule::Export,
                "IMPORT DATABASE is not allowed",
                "it runs the SQL files of an exported database, unchecked",
            )?,
            false => pragma(judge, outline)?,
        }
    }
    if any(&[Kind::Attach, Kind::Detach]) {
        judge.decide(Finding::attach())?;
    }
    if any(&[Kind::Load, Kind::UpdateExtensions]) {
        judge.decide(Finding::load("INSTALL and LOAD are not allowed"))?;
    }
    if kind == Kind::Extension {
        decide(
            Rule::Load,
            "statements of extensions are not allowed",
            "the guard cannot see what they do",
        )?;
    }
    // DuckDB reports CREATE MACRO and CREATE FUNCTION as CREATE.
    let macro_rule = || {
        judge.decide(Finding::create_function(
            "CREATE MACRO and CREATE FUNCTION are not allowed",
        ))
    };
    if any(&[Kind::Create, Kind::CreateFunc]) && matches!(created(outline), Some("MACRO" | "FUNCTION")) {
        macro_rule()?;
    }
    // A secret holds credentials for other servers (S3, HTTP, databases).
    if kind == Kind::Create && created(outline) == Some("SECRET") {
        decide(
            Rule::CreateExtension,
            "CREATE SECRET is not allowed",
            "a secret holds credentials for reaching other servers",
        )?;
    }
    if kind == Kind::CreateFunc {
        macro_rule()?;
    }
    // Every statement that destroys or overwrites data falls under the
    // rule of the operation it amounts to: CREATE OR REPLACE drops the
    // object it replaces (a table and its rows, a view, a macro, ...).
    // After the macro rules, whose reason is the more specific one.
    if any(&[Kind::Create, Kind::CreateFunc]) && replaces(outline) {
        judge.decide(Finding::create_or_replace())?;
    }
    if any(&[Kind::Set, Kind::VariableSet]) {
        judge.decide(Finding::setting("SET and RESET are not allowed"))?;
    }
    if any(&[Kind::Prepare, Kind::Execute]) {
        judge.decide(Finding::prepare("PREPARE and EXECUTE are not allowed"))?;
    }
    if kind == Kind::MergeInto {
        judge.decide(Finding::merge())?;
    }
    Ok(())
}

fn pragma(judge: &Judge, outline: &Outline) -> Result<(), Violation> {
    // `PRAGMA name ...`, or a statement DuckDB runs as a pragma (`CHECKPOINT`).
    let name = if outline.verb == "PRAGMA" {
        outline.object().unwrap_or_default()
    } else {
        outline.verb.as_str()
    };
    let name = name.to_ascii_lowercase();
    if READING_PRAGMAS.contains(&name.as_str()) {
        return Ok(());
    }
    judge.decide(Finding::pragma(format!("PRAGMA {name} is not allowed")))
}

#[cfg(test)]
mod tests {
    use super::super::Plan;
    use super::super::tests::{judge, read_only_with};
    use super::*;
    use crate::guard::{Mode, Policy};

    #[test]
    fn statement_rules() {
        let default = judge(&[]);
        let writable_default = judge(&[]);
        let read_only = Judge::new(Policy::permissive(), Mode::ReadOnly);
        let all = Judge::new(Policy::permissive(), Mode::ReadWrite);
        let (macros, drops, retypes) = (
            judge(&["allow_create_function"]),
            judge(&["allow_drop"]),
            judge(&["allow_update_without_where"]),
        );
        // One statement under two rules, one switch on: the other rule still
        // refuses it (pinned when the guards began reporting to the judge).
        let macros_drops = judge(&["allow_create_function", "allow_drop"]);
        let macros_drops_read_only = read_only_with(&["allow_create_function", "allow_drop"]);
        let (default_read_only, sets_read_only) = (read_only_with(&[]), read_only_with(&["allow_set"]));
        let drops_retypes = judge(&["allow_drop", "allow_update_without_where"]);
        let (exports, pragmas, secrets, deletes) = (
            judge(&["allow_export"]),
            judge(&["allow_pragma_write"]),
            judge(&["allow_create_extension"]),
            judge(&["allow_delete_without_where"]),
        );
        let (copies_from, copies_to) = (judge(&["allow_copy_from"]), judge(&["allow_copy_to_file"]));
        let copies_both = judge(&["allow_copy_from", "allow_copy_to_file"]);
        // (judge, sql, the kind DuckDB reports, refusing rule)
        let pragma_switch = judge(&["allow_pragma_write"]);
        let pragma_and_attach = judge(&["allow_pragma_write", "allow_attach"]);
        let cases: Vec<(&Judge, &str, Kind, Option<Rule>)> = vec![
            (&default, "SELECT 1", Kind::Select, None),
            (&default, "DROP TABLE t", Kind::Drop, Some(Rule::Drop)),
            (&all, "DROP TABLE t", Kind::Drop, None),
            (&default, "ALTER TABLE t DROP COLUMN c", Kind::Alter, Some(Rule::Drop)),
            (&default, "ALTER TABLE t ADD COLUMN c INT", Kind::Alter, None),
            (&default, "TRUNCATE t", Kind::Delete, Some(Rule::Truncate)),
            (
                &default,
                "CREATE OR REPLACE TABLE t AS SELECT 1",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (
                &default,
                "create or replace view v as select 1",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (
                &macros,
                "CREATE OR REPLACE TEMP MACRO m(a) AS a",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (
                &default,
                "CREATE OR /* */ REPLACE SEQUENCE s",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (
                &default,
                "CREATE OR REPLACE TYPE e AS ENUM ('a')",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (&drops, "CREATE OR REPLACE TABLE t (a INT)", Kind::Create, None),
            (&default, "CREATE TABLE \"or replace\" (a INT)", Kind::Create, None),
            (&default, "CREATE TABLE IF NOT EXISTS t (a INT)", Kind::Create, None),
            (
                &default,
                "ALTER TABLE t ALTER COLUMN a TYPE VARCHAR",
                Kind::Alter,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "ALTER TABLE t ALTER a SET DATA TYPE BIGINT USING a * 2",
                Kind::Alter,
                Some(Rule::UpdateWithoutWhere),
            ),
            (&retypes, "ALTER TABLE t ALTER a TYPE BIGINT", Kind::Alter, None),
            (&default, "ALTER TABLE t ALTER a SET DEFAULT 1", Kind::Alter, None),
            (&default, "ALTER TABLE t ADD COLUMN type INT", Kind::Alter, None),
            (&default, "ALTER TABLE t RENAME COLUMN a TO b", Kind::Alter, None),
            (&default, "DELETE FROM t", Kind::Delete, Some(Rule::DeleteWithoutWhere)),
            (&default, "DELETE FROM t WHERE id = 1", Kind::Delete, None),
            (
                &default,
                "UPDATE t SET a = 1",
                Kind::Update,
                Some(Rule::UpdateWithoutWhere),
            ),
            (&writable_default, "UPDATE t SET a = 1 WHERE id = 2", Kind::Update, None),
            (&default, "COPY t TO '/tmp/x.csv'", Kind::Copy, Some(Rule::CopyToFile)),
            (
                &default,
                "COPY (SELECT * FROM t) TO 'x.parquet'",
                Kind::Copy,
                Some(Rule::CopyToFile),
            ),
            (&default, "COPY t FROM 'x.csv'", Kind::Copy, Some(Rule::CopyFrom)),
            (&all, "COPY t TO 'x.csv'", Kind::Copy, None),
            (
                &default,
                "COPY FROM DATABASE a TO b",
                Kind::CopyDatabase,
                Some(Rule::Attach),
            ),
            (&default, "EXPORT DATABASE '/tmp/out'", Kind::Export, Some(Rule::Export)),
            (&all, "EXPORT DATABASE '/tmp/out'", Kind::Export, None),
            // DuckDB reports COPY FROM DATABASE as a pragma: the pragma
            // switch alone does not let it through, ATTACH's still governs it.
            (
                &pragma_switch,
                "COPY FROM DATABASE a TO b",
                Kind::Pragma,
                Some(Rule::Attach),
            ),
            (&pragma_and_attach, "COPY FROM DATABASE a TO b", Kind::Pragma, None),
            (&default, "COPY FROM DATABASE a TO b", Kind::Pragma, Some(Rule::Attach)),
            (&default, "IMPORT DATABASE '/tmp/out'", Kind::Pragma, Some(Rule::Export)),
            (&default, "ATTACH 'x.duckdb' AS x", Kind::Attach, Some(Rule::Attach)),
            (&default, "DETACH x", Kind::Detach, Some(Rule::Attach)),
            (&all, "ATTACH 'x.duckdb'", Kind::Attach, None),
            (&default, "INSTALL httpfs", Kind::Load, Some(Rule::Load)),
            (&default, "LOAD httpfs", Kind::Load, Some(Rule::Load)),
            (&default, "UPDATE EXTENSIONS", Kind::UpdateExtensions, Some(Rule::Load)),
            (
                &default,
                "CREATE MACRO m(a) AS a + 1",
                Kind::CreateFunc,
                Some(Rule::CreateFunction),
            ),
            (
                &default,
                "CREATE MACRO m(a) AS a + 1",
                Kind::Create,
                Some(Rule::CreateFunction),
            ),
            (
                &default,
                "CREATE OR REPLACE TEMP FUNCTION f(a) AS a",
                Kind::Create,
                Some(Rule::CreateFunction),
            ),
            (&all, "CREATE MACRO m(a) AS a + 1", Kind::Create, None),
            (&default, "CREATE TABLE macro (a INT)", Kind::Create, None),
            (
                &default,
                "CREATE PERSISTENT SECRET s (TYPE s3)",
                Kind::Create,
                Some(Rule::CreateExtension),
            ),
            (
                &default,
                "CREATE SECRET (TYPE s3)",
                Kind::Create,
                Some(Rule::CreateExtension),
            ),
            (&default, "SET memory_limit = '1GB'", Kind::Set, Some(Rule::Set)),
            (&default, "SET VARIABLE x = 1", Kind::VariableSet, Some(Rule::Set)),
            (&default, "PREPARE p AS SELECT 1", Kind::Prepare, Some(Rule::Prepare)),
            (&default, "EXECUTE p", Kind::Execute, Some(Rule::Prepare)),
            (
                &default,
                "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
                Kind::MergeInto,
                Some(Rule::Merge),
            ),
            (&default, "PRAGMA table_info('t')", Kind::Pragma, None),
            (&default, "PRAGMA enable_profiling", Kind::Pragma, Some(Rule::Pragma)),
            (&all, "PRAGMA enable_profiling", Kind::Pragma, None),
            (&default, "CALL pragma_version()", Kind::Call, None),
            (&default, "BEGIN", Kind::Transaction, None),
            (&default, "SELECT 1", Kind::Invalid, Some(Rule::Parse)),
            (
                &read_only,
                "INSERT INTO t VALUES (1)",
                Kind::Insert,
                Some(Rule::ReadOnly),
            ),
            (&read_only, "CREATE TABLE u (a INT)", Kind::Create, Some(Rule::ReadOnly)),
            (&read_only, "COPY t FROM 'x.csv'", Kind::Copy, Some(Rule::ReadOnly)),
            (&read_only, "COPY t TO 'x.csv'", Kind::Copy, None),
            (&read_only, "CHECKPOINT", Kind::Pragma, Some(Rule::ReadOnly)),
            // In read-only mode a write is refused as a write: the switch of
            // its kind would only lead to that refusal, so it is not named.
            (&default_read_only, "DROP TABLE t", Kind::Drop, Some(Rule::ReadOnly)),
            (&default_read_only, "DELETE FROM t", Kind::Delete, Some(Rule::ReadOnly)),
            (&default_read_only, "TRUNCATE t", Kind::Delete, Some(Rule::ReadOnly)),
            (
                &default_read_only,
                "ALTER TABLE t DROP COLUMN c",
                Kind::Alter,
                Some(Rule::ReadOnly),
            ),
            (
                &default_read_only,
                "CREATE MACRO m(x) AS x + 1",
                Kind::Create,
                Some(Rule::ReadOnly),
            ),
            (&default_read_only, "CHECKPOINT", Kind::Pragma, Some(Rule::ReadOnly)),
            (&default_read_only, "VACUUM", Kind::Vacuum, Some(Rule::ReadOnly)),
            (
                &default_read_only,
                "COPY FROM DATABASE a TO b",
                Kind::Pragma,
                Some(Rule::ReadOnly),
            ),
            // Read-only mode runs these with their switches on: their own
            // rules speak.
            (
                &default_read_only,
                "COPY t TO 'x.csv'",
                Kind::Copy,
                Some(Rule::CopyToFile),
            ),
            (&default_read_only, "SET threads = 1", Kind::Set, Some(Rule::Set)),
            (&sets_read_only, "SET threads = 1", Kind::Set, None),
            (
                &default_read_only,
                "ATTACH 'x.db' AS x",
                Kind::Attach,
                Some(Rule::Attach),
            ),
            (&default, "CHECKPOINT", Kind::Pragma, Some(Rule::Maintenance)),
            (&default, "FORCE CHECKPOINT", Kind::Pragma, Some(Rule::Maintenance)),
            (&all, "CHECKPOINT", Kind::Pragma, None),
            (&default, "VACUUM", Kind::Vacuum, Some(Rule::Maintenance)),
            (&default, "ANALYZE t", Kind::Analyze, Some(Rule::Maintenance)),
            (&all, "ANALYZE", Kind::Analyze, None),
            (&default, "PIVOT t ON c USING sum(x)", Kind::Multi, None),
            (&read_only, "PIVOT t ON c USING sum(x)", Kind::Multi, None),
            (
                &default,
                "INSERT INTO u SELECT * FROM (PIVOT t ON c USING sum(x))",
                Kind::Multi,
                Some(Rule::Parse),
            ),
            (&default, "INSERT INTO t VALUES (1)", Kind::Insert, None),
            (&default, "INSERT INTO t SELECT * FROM u", Kind::Insert, None),
            (&default, "INSERT OR REPLACE INTO t VALUES (1, 'a')", Kind::Insert, None),
            (
                &default,
                "INSERT OR REPLACE INTO t SELECT * FROM u",
                Kind::Insert,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "INSERT INTO t SELECT * FROM t ON CONFLICT DO UPDATE SET v = 'x'",
                Kind::Insert,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "INSERT INTO t BY NAME (FROM u) ON CONFLICT DO UPDATE SET v = 'x'",
                Kind::Insert,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &default,
                "INSERT INTO t VALUES (1, 'a') ON CONFLICT DO UPDATE SET v = 'x'",
                Kind::Insert,
                None,
            ),
            (&retypes, "INSERT OR REPLACE INTO t SELECT * FROM u", Kind::Insert, None),
            (&read_only, "SELECT 1", Kind::Select, None),
            (&all, "INSERT INTO t VALUES (1)", Kind::Insert, None),
            // Two rules, one switch on (see `macros_drops` above).
            (
                &macros,
                "CREATE OR REPLACE MACRO m(x) AS x + 1",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (
                &drops,
                "CREATE OR REPLACE MACRO m(x) AS x + 1",
                Kind::Create,
                Some(Rule::CreateFunction),
            ),
            (
                &macros_drops,
                "CREATE OR REPLACE MACRO m(x) AS x + 1",
                Kind::Create,
                None,
            ),
            (
                &macros_drops_read_only,
                "CREATE OR REPLACE MACRO m(x) AS x + 1",
                Kind::Create,
                Some(Rule::ReadOnly),
            ),
            (
                &macros,
                "CREATE OR REPLACE FUNCTION f(x) AS x + 1",
                Kind::CreateFunc,
                Some(Rule::Drop),
            ),
            (
                &drops,
                "CREATE OR REPLACE FUNCTION f(x) AS x + 1",
                Kind::CreateFunc,
                Some(Rule::CreateFunction),
            ),
            (
                &drops,
                "ALTER TABLE t ALTER COLUMN c DROP DEFAULT, ALTER COLUMN d TYPE INT",
                Kind::Alter,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                &retypes,
                "ALTER TABLE t ALTER COLUMN c DROP DEFAULT, ALTER COLUMN d TYPE INT",
                Kind::Alter,
                Some(Rule::Drop),
            ),
            (
                &drops_retypes,
                "ALTER TABLE t ALTER COLUMN c DROP DEFAULT, ALTER COLUMN d TYPE INT",
                Kind::Alter,
                None,
            ),
            (
                &drops,
                "ALTER TABLE t ALTER COLUMN c SET DATA TYPE VARCHAR USING c::VARCHAR",
                Kind::Alter,
                Some(Rule::UpdateWithoutWhere),
            ),
            (&exports, "IMPORT DATABASE 'dir'", Kind::Pragma, None),
            (&pragmas, "IMPORT DATABASE 'dir'", Kind::Pragma, Some(Rule::Export)),
            (&deletes, "TRUNCATE t", Kind::Delete, Some(Rule::Truncate)),
            (
                &secrets,
                "CREATE OR REPLACE SECRET s (TYPE s3, KEY_ID 'x')",
                Kind::Create,
                Some(Rule::Drop),
            ),
            (
                &drops,
                "CREATE OR REPLACE SECRET s (TYPE s3, KEY_ID 'x')",
                Kind::Create,
                Some(Rule::CreateExtension),
            ),
            (&copies_from, "COPY t TO 'x.csv'", Kind::Copy, Some(Rule::CopyToFile)),
            (&copies_to, "COPY t FROM 'x.csv'", Kind::Copy, Some(Rule::CopyFrom)),
            (
                &copies_both,
                "COPY FROM DATABASE a TO b",
                Kind::CopyDatabase,
                Some(Rule::Attach),
            ),
        ];
        for (judge, sql, kind, want) in cases {
            // A plan that bounds what changes, and writes no MERGE_INTO: the
            // words' own rules are what these rows test (the plan's have
            // their own test below).
            let evidence = Evidence {
                plan: Some(Plan::default()),
                ..Evidence::of(kind)
            };
            let got = statement(judge, &Outline::duckdb(sql), &evidence).err().map(|v| v.rule);
            assert_eq!(got, want, "{sql} ({kind:?})");
        }
        assert_eq!(
            statement(
                &default,
                &Outline::duckdb("COPY t TO 'x.csv'"),
                &Evidence::of(Kind::Copy)
            )
            .unwrap_err()
            .to_string(),
            "COPY TO a server file or program is not allowed: it writes files or runs shell commands on the database server. Set protection.allow_copy_to_file to true to allow it"
        );
        assert_eq!(
            statement(
                &read_only,
                &Outline::duckdb("insert into t values (1)"),
                &Evidence::of(Kind::Insert)
            )
            .unwrap_err()
            .to_string(),
            "INSERT is not allowed in read-only mode: the database is opened read-only (server.read_only is on)"
        );
    }

    /// An EXPLAIN is judged as every statement it may be of; with none, it
    /// is refused.
    #[test]
    fn explains_judge_what_they_explain() {
        let whole = Plan {
            operators: vec!["DELETE".into()],
            whole_table: true,
            ..Plan::default()
        };
        let tail = |sql: &str, kind: Kind, plan: Option<Plan>| {
            (
                Outline::duckdb(sql),
                Evidence {
                    plan,
                    ..Evidence::of(kind)
                },
            )
        };
        let explain = |explained: Vec<(Outline, Evidence)>| Evidence {
            explained,
            ..Evidence::of(Kind::Explain)
        };
        let read_only = Judge::new(Policy::permissive(), Mode::ReadOnly);
        let deletes = judge(&["allow_delete_without_where"]);
        let default = judge(&[]);
        let cases: Vec<(&Judge, Evidence, Option<Rule>)> = vec![
            (&default, explain(vec![tail("SELECT 1", Kind::Select, None)]), None),
            (
                &default,
                explain(vec![tail("DELETE FROM t", Kind::Delete, Some(whole.clone()))]),
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                &deletes,
                explain(vec![tail("DELETE FROM t", Kind::Delete, Some(whole.clone()))]),
                None,
            ),
            (
                &read_only,
                explain(vec![tail("DELETE FROM t", Kind::Delete, Some(whole))]),
                Some(Rule::ReadOnly),
            ),
            (
                &read_only,
                explain(vec![
                    tail("FROM t", Kind::Select, None),
                    tail("COPY t TO 'x.csv'", Kind::Copy, None),
                ]),
                None,
            ),
            (
                &default,
                explain(vec![
                    tail("SELECT 1", Kind::Select, None),
                    tail("COPY t TO 'x'", Kind::Copy, None),
                ]),
                Some(Rule::CopyToFile),
            ),
            (&default, explain(Vec::new()), Some(Rule::Parse)),
        ];
        for (judge, evidence, want) in cases {
            let got = statement(judge, &Outline::duckdb("EXPLAIN ..."), &evidence)
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{evidence:?}");
        }
    }
}
