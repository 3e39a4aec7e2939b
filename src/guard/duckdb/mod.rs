//! The guard for DuckDB. DuckDB's dialect is not PostgreSQL's, so DuckDB's own
//! parser decides what a statement is: the backend counts the statements with
//! `duckdb_extract_statements` (→ [`super::one_statement`]), prepares the one
//! statement, and hands the statement type DuckDB reports ([`Kind`]) to
//! [`statement`]. Before that, [`text`] refuses what the tokens already show:
//! calls of file-reading table functions and of blocked functions, and files
//! named as tables (`FROM 'data.csv'`). [`Outline`] supplies what the statement
//! type does not say: which way a `COPY` goes, whether a `DELETE` has a
//! `WHERE`, what an `EXPLAIN ANALYZE` runs.
//!
//! These rules are the first line, and give the reasons; DuckDB's own settings
//! are the second, locked for the session: external access off (no file,
//! network or extension outside the database file unless
//! `allow_file_functions`), read-only access mode when `server.read_only`.
//! All of it is pure.

use super::outline::Outline;
use super::{Finding, Judge, Remedy, Rule, Violation, statements, violation};

/// Table functions that read files (or list them). With external access off
/// DuckDB refuses them as well; the guard says why and names the flag.
pub const FILE_FUNCTIONS: &[&str] = &[
    "read_csv",
    "read_csv_auto",
    "read_parquet",
    "parquet_scan",
    "read_json",
    "read_json_auto",
    "read_json_objects",
    "read_json_objects_auto",
    "read_ndjson",
    "read_ndjson_auto",
    "read_ndjson_objects",
    "read_text",
    "read_blob",
    "glob",
    "sniff_csv",
    "parquet_metadata",
    "parquet_schema",
    "parquet_file_metadata",
    "parquet_kv_metadata",
    "parquet_bloom_probe",
    "read_xlsx",
    "read_duckdb",
    "sqlite_scan",
    "sqlite_attach",
    "st_read",
    "iceberg_scan",
    "delta_scan",
];

/// Why a file function, or a file named as a table, is refused.
const FILE_WHY: &str = "it reads files on the server";

/// Table functions that run SQL given as text (or serialized), which the
/// guard cannot check.
const SQL_TEXT_FUNCTIONS: &[&str] = &["query", "query_table", "json_execute_serialized_sql"];

/// Table functions that act rather than read: DuckDB's pragmas in the form
/// of a table function (`CALL enable_profiling()`, `FROM checkpoint()`).
const ACTING_TABLE_FUNCTIONS: &[&str] = &[
    "enable_profiling",
    "disable_profiling",
    "enable_logging",
    "disable_logging",
    "truncate_duckdb_logs",
];

/// Table functions that checkpoint the database: maintenance.
const CHECKPOINT_FUNCTIONS: &[&str] = &["checkpoint", "force_checkpoint"];

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

/// What a DuckDB statement is, as DuckDB's `duckdb_statement_type` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Invalid,
    Select,
    Insert,
    Update,
    Explain,
    Delete,
    Prepare,
    Create,
    Execute,
    Alter,
    Transaction,
    Copy,
    Analyze,
    VariableSet,
    CreateFunc,
    Drop,
    Export,
    Pragma,
    Vacuum,
    Call,
    Set,
    Load,
    Relation,
    Extension,
    LogicalPlan,
    Attach,
    Detach,
    Multi,
    CopyDatabase,
    UpdateExtensions,
    MergeInto,
}

impl Kind {
    /// DuckDB's `duckdb_statement_type` numbering (the C API's enum); an
    /// unknown number is `Invalid`, which the guard refuses.
    pub fn from_code(code: u32) -> Kind {
        const KINDS: [Kind; 31] = [
            Kind::Invalid,
            Kind::Select,
            Kind::Insert,
            Kind::Update,
            Kind::Explain,
            Kind::Delete,
            Kind::Prepare,
            Kind::Create,
            Kind::Execute,
            Kind::Alter,
            Kind::Transaction,
            Kind::Copy,
            Kind::Analyze,
            Kind::VariableSet,
            Kind::CreateFunc,
            Kind::Drop,
            Kind::Export,
            Kind::Pragma,
            Kind::Vacuum,
            Kind::Call,
            Kind::Set,
            Kind::Load,
            Kind::Relation,
            Kind::Extension,
            Kind::LogicalPlan,
            Kind::Attach,
            Kind::Detach,
            Kind::Multi,
            Kind::CopyDatabase,
            Kind::UpdateExtensions,
            Kind::MergeInto,
        ];
        usize::try_from(code)
            .ok()
            .and_then(|i| KINDS.get(i))
            .copied()
            .unwrap_or(Kind::Invalid)
    }

    /// The kind a statement's first word names, for the statements DuckDB may
    /// refuse while preparing, before it reports a type (a `COPY` to a file
    /// with external access off, a `CREATE SECRET` of an extension's type):
    /// the refusal is then explained by the rule that would have applied.
    /// `None` for every other verb.
    pub fn from_verb(outline: &Outline) -> Option<Kind> {
        Some(match outline.verb.as_str() {
            "COPY" if outline.has("DATABASE") && outline.object() == Some("FROM") => Kind::CopyDatabase,
            "COPY" => Kind::Copy,
            "EXPORT" => Kind::Export,
            // IMPORT DATABASE runs as a pragma; the outline tells it apart.
            "IMPORT" => Kind::Pragma,
            "ATTACH" => Kind::Attach,
            "DETACH" => Kind::Detach,
            "INSTALL" | "LOAD" => Kind::Load,
            "FORCE" if outline.object() == Some("INSTALL") => Kind::Load,
            "UPDATE" if outline.object() == Some("EXTENSIONS") => Kind::UpdateExtensions,
            "CREATE" => Kind::Create,
            _ => return None,
        })
    }

    /// Statements that change the database (its data, schema or statistics).
    fn writes(self, outline: &Outline) -> bool {
        match self {
            Kind::Insert
            | Kind::Update
            | Kind::Delete
            | Kind::Create
            | Kind::CreateFunc
            | Kind::Alter
            | Kind::Drop
            | Kind::Analyze
            | Kind::Vacuum
            | Kind::MergeInto
            | Kind::CopyDatabase => true,
            Kind::Copy => copies_from(outline),
            Kind::Pragma => is_checkpoint(outline),
            _ => false,
        }
    }
}

/// What DuckDB itself says about one statement, gathered by the backend
/// before anything runs: the guard judges this, not a grammar of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The type DuckDB's parser reports for the prepared statement.
    pub kind: Kind,
    /// DuckDB's plan of a statement that changes rows (`EXPLAIN (FORMAT
    /// JSON)`): `None` where DuckDB gave none, which the rules that need it
    /// take as the worst case.
    pub plan: Option<Plan>,
    /// For an `EXPLAIN`: every tail of its text DuckDB prepares as one
    /// statement ([`super::outline::explained_starts`]), with what DuckDB says
    /// of it. The statement DuckDB explains (and, with `ANALYZE`, runs) is one
    /// of them, so each is judged as if it ran.
    pub explained: Vec<(Outline, Evidence)>,
}

impl Evidence {
    /// Only the statement type (for statements whose rules need no more).
    pub fn of(kind: Kind) -> Evidence {
        Evidence {
            kind,
            plan: None,
            explained: Vec::new(),
        }
    }
}

/// What DuckDB's physical plan of a statement shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Every operator's name as DuckDB spells it (`DELETE`, `SEQ_SCAN`,
    /// `MERGE_INTO`, ...), in the order they appear.
    pub operators: Vec<String>,
    /// A `DELETE` or `UPDATE` reads a whole table: below it, through
    /// projections only, is a table scan with no filter. Whatever the text
    /// says (`RETURNING id AS where`), that is a change to every row.
    pub whole_table: bool,
    /// The table functions the plan runs (each operator's `Function`),
    /// lower-cased: those a view or a table macro calls too, which the
    /// text never names.
    pub functions: Vec<String>,
}

/// How deep a plan's JSON may nest before it is not read (and the rules
/// that need it take the worst case).
const PLAN_DEPTH: usize = 512;

impl Plan {
    /// Read the JSON of `EXPLAIN (FORMAT JSON)`: a list of operator trees,
    /// each `{"name", "children", "extra_info"}`. `None` when it is not that.
    pub fn from_json(text: &str) -> Option<Plan> {
        if crate::json_depth::nesting_depth(text) > PLAN_DEPTH {
            return None;
        }
        let roots: Vec<serde_json::Value> = crate::json_depth::read_measured(text).ok()?;
        let mut plan = Plan::default();
        let mut stack: Vec<&serde_json::Value> = roots.iter().collect();
        while let Some(node) = stack.pop() {
            let name = node.get("name")?.as_str()?;
            plan.operators.push(name.to_owned());
            if let Some(function) = node
                .get("extra_info")
                .and_then(|i| i.get("Function"))
                .and_then(serde_json::Value::as_str)
            {
                plan.functions.push(function.to_ascii_lowercase());
            }
            let children = node.get("children")?.as_array()?;
            if matches!(name, "DELETE" | "UPDATE") && reads_whole_table(children) {
                plan.whole_table = true;
            }
            stack.extend(children.iter().rev());
        }
        Some(plan)
    }

    fn has(&self, operator: &str) -> bool {
        self.operators.iter().any(|o| o == operator)
    }
}

/// The input of a `DELETE`/`UPDATE`, through projections, is one table scan
/// without filters.
fn reads_whole_table(children: &[serde_json::Value]) -> bool {
    let mut node = match children {
        [only] => only,
        _ => return false,
    };
    loop {
        let name = node.get("name").and_then(serde_json::Value::as_str).unwrap_or_default();
        let below = node
            .get("children")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match (name, below) {
            ("PROJECTION", [only]) => node = only,
            (scan, []) if scan.ends_with("_SCAN") => {
                let info = node.get("extra_info");
                let filtered = info.and_then(|i| i.get("Filters")).is_some_and(|f| match f {
                    serde_json::Value::String(s) => !s.trim().is_empty(),
                    serde_json::Value::Array(a) => !a.is_empty(),
                    serde_json::Value::Null => false,
                    _ => true,
                });
                return info.and_then(|i| i.get("Table")).is_some() && !filtered;
            }
            _ => return false,
        }
    }
}

/// An `INSERT` that may overwrite rows already there: `INSERT OR REPLACE`,
/// `ON CONFLICT DO UPDATE` (DuckDB plans both as `MERGE_INTO`, and the words
/// say so too; either is enough, and no plan is the worst case).
fn overwrites(outline: &Outline, plan: Option<&Plan>) -> bool {
    outline.says_overwrite() || plan.is_none_or(|p| p.has("MERGE_INTO"))
}

/// `COPY t FROM 'file'` (into the database) rather than `COPY ... TO 'file'`.
fn copies_from(outline: &Outline) -> bool {
    outline.has("FROM") && !outline.has("TO")
}

/// The rules the tokens alone decide, applied before DuckDB prepares the
/// statement: preparing already reads files (a CSV's columns are sniffed
/// while binding), so a file function must be refused before.
pub fn text(judge: &Judge, outline: &Outline) -> Result<(), Violation> {
    let judged = text_rules(judge, outline);
    // In read-only mode a write is refused as a write, before the rule of
    // its kind (as `statement` does): the switch a file function inside
    // `INSERT ... SELECT * FROM read_csv(...)` names would only lead to the
    // read-only refusal. DuckDB reports the statement's kind only once it
    // is prepared, which is past this point, so the statement's verb tells; this
    // changes only how a statement refused either way is refused, and never
    // hides a refusal no setting lifts.
    if let Err(refusal) = &judged
        && refusal.rule.flag().is_some()
        && writes_by_verb(outline)
    {
        statements::write_in_read_only(judge, outline)?;
    }
    judged
}

/// Statements whose first word says they change the database.
fn writes_by_verb(outline: &Outline) -> bool {
    match outline.verb.as_str() {
        "INSERT" | "DELETE" | "CREATE" | "ALTER" | "DROP" | "TRUNCATE" | "MERGE" | "VACUUM" | "ANALYZE" => true,
        "UPDATE" => outline.object() != Some("EXTENSIONS"),
        "COPY" => copies_from(outline),
        _ => false,
    }
}

fn text_rules(judge: &Judge, outline: &Outline) -> Result<(), Violation> {
    for name in &outline.calls {
        function(judge, name)?;
    }
    // Files of pgmcp's own process (its stdin and stdout carry the
    // protocol), by any statement that can name a file: no switch allows them.
    let rule = match outline.verb.as_str() {
        "COPY" if copies_from(outline) => Rule::CopyFrom,
        "COPY" => Rule::CopyToFile,
        "ATTACH" | "DETACH" => Rule::Attach,
        "EXPORT" | "IMPORT" => Rule::Export,
        _ => Rule::FileFunction,
    };
    if outline.verb == "COPY"
        && let Some(stream) = ["STDIN", "STDOUT", "STDERR"].into_iter().find(|s| outline.has(s))
    {
        return violation(
            rule,
            format!(
                "COPY ... {stream} is not allowed: pgmcp's standard streams carry the MCP protocol, which it would corrupt. SELECT the rows instead"
            ),
        );
    }
    let names_files = matches!(
        outline.verb.as_str(),
        "COPY" | "ATTACH" | "DETACH" | "EXPORT" | "IMPORT" | "INSTALL" | "LOAD"
    ) || outline.calls.iter().any(|c| FILE_FUNCTIONS.contains(&c.as_str()))
        || !outline.quoted_tables.is_empty();
    if names_files {
        for path in outline
            .strings
            .iter()
            .chain(&outline.names)
            .chain(&outline.quoted_tables)
        {
            super::own_process(rule, path)?;
        }
    }
    // COPY's own file (`COPY t FROM 'x.csv'`) is the COPY rules' to judge.
    if let Some(file) = outline.quoted_tables.first()
        && outline.verb != "COPY"
    {
        judge.decide(Finding::new(
            Rule::FileFunction,
            format!("reading the file '{file}' as a table is not allowed"),
            FILE_WHY,
        ))?;
    }
    Ok(())
}

/// One function a statement calls, named in its text or run by its plan.
fn function(judge: &Judge, bare: &str) -> Result<(), Violation> {
    if SQL_TEXT_FUNCTIONS.contains(&bare) {
        return violation(
            Rule::BlockedFunction,
            format!("function {bare}() is not allowed: it runs SQL given as text, which the guard cannot check"),
        );
    }
    if FILE_FUNCTIONS.contains(&bare) {
        judge.decide(Finding::new(
            Rule::FileFunction,
            format!("function {bare}() is not allowed"),
            FILE_WHY,
        ))?;
    }
    if CHECKPOINT_FUNCTIONS.contains(&bare) {
        // Read-only first: allow_maintenance cannot make a checkpoint run there.
        judge.write(|| format!("function {bare}() is not allowed in read-only mode: it checkpoints the database"))?;
        judge.decide(Finding::new(
            Rule::Maintenance,
            format!("function {bare}() is not allowed"),
            "it checkpoints the database, which rewrites its file",
        ))?;
    }
    if ACTING_TABLE_FUNCTIONS.contains(&bare) {
        judge.decide(Finding::new(
            Rule::Pragma,
            format!("function {bare}() is not allowed"),
            "it is a PRAGMA that changes how the session behaves, called as a table function",
        ))?;
    }
    judge.call(bare, || format!("function {bare}()"), || None)
}

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
            return violation(
                Rule::Parse,
                format!("this kind of DuckDB statement ({kind:?}) is not supported"),
            );
        }
        _ => {}
    }
    // In read-only mode a write is refused as a write, before the rule of
    // its kind: that rule's switch would only lead to this refusal. (DuckDB
    // plans no write there either, so the rules below would take the
    // missing plan as the worst case: `DELETE ... WHERE id = 1` is not a
    // delete without WHERE.)
    if kind.writes(outline) {
        statements::write_in_read_only(judge, outline)?;
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
        decide(
            Rule::UpdateWithoutWhere,
            "ALTER COLUMN ... TYPE is not allowed",
            "it rewrites the column in every row of the table",
        )?;
    }
    // DuckDB reports TRUNCATE as a DELETE.
    if kind == Kind::Delete && outline.verb == "TRUNCATE" {
        decide(
            Rule::Truncate,
            "TRUNCATE is not allowed",
            "it deletes every row of the table",
        )?;
    }
    // Without a WHERE when either the words or DuckDB's plan say so: the
    // plan shows what runs (`DELETE ... RETURNING id AS where` has a word
    // WHERE and a plan that reads the whole table); no plan is the worst case.
    let unbounded = !outline.has_where() || plan.is_none_or(|p| p.whole_table);
    if kind == Kind::Delete && outline.verb != "TRUNCATE" && unbounded {
        judge.decide(Finding::delete_without_where().remedy(Remedy::AddWhere))?;
    }
    if kind == Kind::Update && unbounded {
        judge.decide(Finding::update_without_where().remedy(Remedy::AddWhere))?;
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
            true => decide(
                Rule::CopyFrom,
                "COPY ... FROM is not allowed",
                "it loads a file from the server into the database",
            )?,
            false => decide(
                Rule::CopyToFile,
                "COPY ... TO is not allowed",
                "it writes a file on the server",
            )?,
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
        decide(
            Rule::Attach,
            "ATTACH and DETACH are not allowed",
            "ATTACH opens, and can create, any database file the server can reach",
        )?;
    }
    if any(&[Kind::Load, Kind::UpdateExtensions]) {
        decide(
            Rule::Load,
            "INSTALL and LOAD are not allowed",
            "an extension is native code run inside the server",
        )?;
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
        decide(
            Rule::CreateFunction,
            "CREATE MACRO and CREATE FUNCTION are not allowed",
            "a macro's body runs later, where the guard does not check it",
        )
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
        decide(
            Rule::Drop,
            "CREATE OR REPLACE is not allowed",
            "it drops the object it replaces, and the data in it",
        )?;
    }
    if any(&[Kind::Set, Kind::VariableSet]) {
        decide(
            Rule::Set,
            "SET and RESET are not allowed",
            "they change how later statements behave",
        )?;
    }
    if any(&[Kind::Prepare, Kind::Execute]) {
        decide(
            Rule::Prepare,
            "PREPARE and EXECUTE are not allowed",
            "a prepared statement runs later, where the guard does not check it",
        )?;
    }
    if kind == Kind::MergeInto {
        decide(
            Rule::Merge,
            "MERGE is not allowed",
            "its UPDATE and DELETE actions have no WHERE clause to check",
        )?;
    }
    Ok(())
}

/// `CHECKPOINT` / `FORCE CHECKPOINT`, which DuckDB runs as a pragma.
fn is_checkpoint(outline: &Outline) -> bool {
    outline.verb == "CHECKPOINT" || (outline.verb == "FORCE" && outline.object() == Some("CHECKPOINT"))
}

/// `CREATE OR REPLACE ...`.
fn replaces(outline: &Outline) -> bool {
    let mut words = outline.top_level_words();
    outline.verb == "CREATE" && words.next() == Some("OR") && words.next() == Some("REPLACE")
}

/// `ALTER TABLE t ALTER [COLUMN] c [SET DATA] TYPE ...`. A column named
/// `type` altered some other way (`ALTER type SET DEFAULT 1`) is refused too:
/// the words alone cannot tell, and refusing is the safe side.
fn rewrites_column(outline: &Outline) -> bool {
    outline.verb == "ALTER"
        && outline
            .top_level_words()
            .skip_while(|w| *w != "ALTER")
            .any(|w| w == "TYPE")
}

/// What a `CREATE` creates: `CREATE OR REPLACE TEMP MACRO m ...` → `MACRO`.
fn created(outline: &Outline) -> Option<&str> {
    if outline.verb != "CREATE" {
        return None;
    }
    outline
        .top_level_words()
        .find(|w| !matches!(*w, "OR" | "REPLACE" | "TEMP" | "TEMPORARY" | "PERSISTENT" | "UNIQUE"))
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
    judge.decide(Finding::new(
        Rule::Pragma,
        format!("PRAGMA {name} is not allowed"),
        "a PRAGMA that sets or does something changes the database or the session",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::FunctionPattern;
    use crate::guard::{Mode, Policy};

    fn policy(flags: &[&str]) -> Policy {
        let mut p = Policy::default();
        for f in flags {
            p.set_flag(f, true).unwrap();
        }
        p
    }

    /// A judge in read-write mode with `flags` on.
    fn judge(flags: &[&str]) -> Judge {
        Judge::new(policy(flags), Mode::ReadWrite)
    }

    /// A judge in read-only mode with `flags` on.
    fn read_only_with(flags: &[&str]) -> Judge {
        Judge::new(policy(flags), Mode::ReadOnly)
    }

    #[test]
    fn kinds_follow_duckdbs_numbering() {
        assert_eq!(Kind::from_code(0), Kind::Invalid);
        assert_eq!(Kind::from_code(1), Kind::Select);
        assert_eq!(Kind::from_code(11), Kind::Copy);
        assert_eq!(Kind::from_code(16), Kind::Export);
        assert_eq!(Kind::from_code(21), Kind::Load);
        assert_eq!(Kind::from_code(25), Kind::Attach);
        assert_eq!(Kind::from_code(30), Kind::MergeInto);
        assert_eq!(Kind::from_code(31), Kind::Invalid);
        assert_eq!(Kind::from_code(u32::MAX), Kind::Invalid);
    }

    #[test]
    fn text_rules() {
        let default = Policy::default();
        let all = Policy::permissive();
        let files = policy(&["allow_file_functions"]);
        let blocking = {
            let mut p = Policy::default();
            p.blocked_functions = vec![FunctionPattern::new("random"), FunctionPattern::new("md5*")];
            p
        };
        let files_blocking_read_csv = {
            let mut p = files.clone();
            p.blocked_functions.push(FunctionPattern::new("read_csv"));
            p
        };
        let cases: Vec<(&Policy, &str, Option<Rule>)> = vec![
            (
                &default,
                "SELECT * FROM read_csv('/etc/passwd')",
                Some(Rule::FileFunction),
            ),
            (
                &default,
                "SELECT * FROM READ_CSV_AUTO('x.csv')",
                Some(Rule::FileFunction),
            ),
            (&default, "SELECT * FROM glob('*')", Some(Rule::FileFunction)),
            (
                &default,
                "SELECT * FROM \"read_text\"('/etc/hosts')",
                Some(Rule::FileFunction),
            ),
            (&default, "SELECT * FROM 'data.csv'", Some(Rule::FileFunction)),
            (&default, "FROM 'data.parquet'", Some(Rule::FileFunction)),
            (&default, "SELECT * FROM \"data.csv\"", Some(Rule::FileFunction)),
            (
                &default,
                "SELECT * FROM t JOIN 'x.json' USING (id)",
                Some(Rule::FileFunction),
            ),
            (&files, "SELECT * FROM read_csv('x.csv')", None),
            (&files, "SELECT * FROM 'x.csv'", None),
            (&default, "SELECT 'read_csv(x)' AS a, 'data.csv' AS b", None),
            (&default, "COPY t FROM 'x.csv'", None),
            (&default, "SELECT * FROM \"Users\"", None),
            (&default, "SELECT * FROM query('SELECT 1')", Some(Rule::BlockedFunction)),
            (&files, "SELECT * FROM query_table('t')", Some(Rule::BlockedFunction)),
            (&blocking, "SELECT random()", Some(Rule::BlockedFunction)),
            // The file switch on does not lift a blocked function.
            (
                &files_blocking_read_csv,
                "SELECT * FROM read_csv('x.csv')",
                Some(Rule::BlockedFunction),
            ),
            (&blocking, "SELECT md5('a')", Some(Rule::BlockedFunction)),
            (&blocking, "SELECT lower('a')", None),
            // pgmcp's own stdin and stdout carry the protocol: no switch lets
            // a statement name them, however spelled.
            (&all, "COPY t TO STDOUT", Some(Rule::CopyToFile)),
            (&all, "COPY (SELECT 1) TO STDOUT (FORMAT csv)", Some(Rule::CopyToFile)),
            (&all, "COPY t FROM STDIN", Some(Rule::CopyFrom)),
            (&all, "COPY t TO '/dev/stdout'", Some(Rule::CopyToFile)),
            (&all, "COPY t TO '/dev//./stdout' (FORMAT json)", Some(Rule::CopyToFile)),
            (&all, "COPY t FROM '/proc/self/fd/0'", Some(Rule::CopyFrom)),
            (&all, "SELECT * FROM read_csv('/dev/stdin')", Some(Rule::FileFunction)),
            (&all, "SELECT * FROM '/dev/fd/0'", Some(Rule::FileFunction)),
            (&all, "ATTACH '../../dev/stdin' AS x", Some(Rule::Attach)),
            (&all, "EXPORT DATABASE '/proc/self/cwd'", Some(Rule::Export)),
            (&all, "COPY t TO '/tmp/stdout.csv'", None),
            (&default, "SELECT '/dev/stdout' AS path", None),
            (&default, "SELECT count(*) FROM t", None),
        ];
        for (policy, sql, want) in cases {
            let got = text(&Judge::new((*policy).clone(), Mode::ReadWrite), &Outline::duckdb(sql))
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{sql}");
        }
        assert_eq!(
            text(
                &Judge::new(default.clone(), Mode::ReadWrite),
                &Outline::duckdb("SELECT * FROM read_parquet('x')")
            )
            .unwrap_err()
            .to_string(),
            "function read_parquet() is not allowed: it reads files on the server. Set protection.allow_file_functions to true to allow it"
        );
    }

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
            "COPY ... TO is not allowed: it writes a file on the server. Set protection.allow_copy_to_file to true to allow it"
        );
        assert_eq!(
            statement(
                &read_only,
                &Outline::duckdb("insert into t values (1)"),
                &Evidence::of(Kind::Insert)
            )
            .unwrap_err()
            .to_string(),
            "cannot execute INSERT in read-only mode: the database is opened read-only (server.read_only)"
        );
    }

    /// DuckDB's plans as `EXPLAIN (FORMAT JSON)` prints them (the shapes
    /// `tests/it/duckdb.rs` reads from the real engine).
    #[test]
    fn what_plans_show() {
        let scan = |filters: &str| {
            format!(
                r#"{{"name": "SEQ_SCAN", "children": [], "extra_info": {{"Table": "memory.main.t", "Type": "Sequential Scan"{filters}}}}}"#
            )
        };
        let over =
            |name: &str, child: &str| format!(r#"{{"name": "{name}", "children": [{child}], "extra_info": {{}}}}"#);
        let cases = [
            (format!("[{}]", over("DELETE", &scan(""))), Some(true)),
            (
                format!("[{}]", over("DELETE", &scan(r#", "Filters": "id=1""#))),
                Some(false),
            ),
            (
                format!("[{}]", over("DELETE", &scan(r#", "Filters": ["id=1", "v='a'"]"#))),
                Some(false),
            ),
            (format!("[{}]", over("DELETE", &scan(r#", "Filters": """#))), Some(true)),
            // RETURNING id AS where: a projection over the whole-table delete.
            (
                format!("[{}]", over("PROJECTION", &over("DELETE", &scan("")))),
                Some(true),
            ),
            (
                format!("[{}]", over("UPDATE", &over("PROJECTION", &scan("")))),
                Some(true),
            ),
            (format!("[{}]", over("UPDATE", &over("FILTER", &scan("")))), Some(false)),
            (
                format!("[{}]", over("DELETE", &over("HASH_JOIN", &scan("")))),
                Some(false),
            ),
            (format!("[{}]", over("PROJECTION", &scan(""))), Some(false)),
            ("{}".to_owned(), None),
            ("[{\"name\": 1}]".to_owned(), None),
            (format!("{}{}", "[".repeat(600), "]".repeat(600)), None),
        ];
        for (json, whole) in cases {
            assert_eq!(Plan::from_json(&json).map(|p| p.whole_table), whole, "{json}");
        }
        let merge = Plan::from_json(&format!("[{}]", over("MERGE_INTO", &scan("")))).unwrap();
        assert_eq!(merge.operators, ["MERGE_INTO", "SEQ_SCAN"]);
        let called = Plan::from_json(
            r#"[{"name": "PROJECTION", "children": [{"name": "CHECKPOINT", "children": [], "extra_info": {"Function": "CHECKPOINT"}}], "extra_info": {}}]"#,
        )
        .unwrap();
        assert_eq!(called.functions, ["checkpoint"]);
    }

    /// The table functions a plan runs are judged as if the text named
    /// them: a view or a table macro hides nothing.
    #[test]
    fn what_plans_run() {
        let runs = |f: &str| Evidence {
            plan: Some(Plan {
                functions: vec![f.to_owned()],
                ..Plan::default()
            }),
            ..Evidence::of(Kind::Select)
        };
        let read_only = Judge::new(Policy::permissive(), Mode::ReadOnly);
        let files = judge(&["allow_file_functions"]);
        let blocking = {
            let mut p = Policy::default();
            p.blocked_functions = vec![FunctionPattern::new("duckdb_secrets")];
            Judge::new(p, Mode::ReadWrite)
        };
        let maintenance = judge(&["allow_maintenance"]);
        let default = judge(&[]);
        let all = Judge::new(Policy::permissive(), Mode::ReadWrite);
        let pragmas = judge(&["allow_pragma_write"]);
        let cases: Vec<(&Judge, &str, Option<Rule>)> = vec![
            (&default, "range", None),
            (&default, "checkpoint", Some(Rule::Maintenance)),
            (&default, "force_checkpoint", Some(Rule::Maintenance)),
            (&maintenance, "checkpoint", None),
            (&read_only, "checkpoint", Some(Rule::ReadOnly)),
            (&default, "enable_profiling", Some(Rule::Pragma)),
            (&default, "enable_logging", Some(Rule::Pragma)),
            (&pragmas, "enable_logging", None),
            (&all, "json_execute_serialized_sql", Some(Rule::BlockedFunction)),
            (&all, "query", Some(Rule::BlockedFunction)),
            (&default, "read_csv", Some(Rule::FileFunction)),
            (&files, "read_csv", None),
            (&blocking, "duckdb_secrets", Some(Rule::BlockedFunction)),
        ];
        for (judge, function, want) in cases {
            let got = statement(judge, &Outline::duckdb("SELECT * FROM v"), &runs(function))
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{function}");
        }
    }

    /// The plan decides with the words: either one showing every row is
    /// enough to refuse, and no plan is the worst case.
    #[test]
    fn plans_and_words_together() {
        let whole = Plan {
            operators: vec!["DELETE".into(), "SEQ_SCAN".into()],
            whole_table: true,
            functions: Vec::new(),
        };
        let merge = Plan {
            operators: vec!["MERGE_INTO".into()],
            ..Plan::default()
        };
        let bounded = Plan::default();
        let cases: Vec<(&str, Kind, Option<Plan>, Option<Rule>)> = vec![
            ("DELETE FROM t WHERE id = 1", Kind::Delete, Some(bounded.clone()), None),
            (
                "DELETE FROM t RETURNING id AS where",
                Kind::Delete,
                Some(whole.clone()),
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                "DELETE FROM t WHERE true",
                Kind::Delete,
                Some(whole.clone()),
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                "DELETE FROM t WHERE id = 1",
                Kind::Delete,
                None,
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                "UPDATE t SET c = {'where': 'x'}.where",
                Kind::Update,
                Some(whole.clone()),
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "UPDATE t SET c = 1 WHERE id = 2",
                Kind::Update,
                Some(bounded.clone()),
                None,
            ),
            (
                "UPDATE t SET c = 1 WHERE id = 2",
                Kind::Update,
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "INSERT INTO t SELECT * FROM u",
                Kind::Insert,
                Some(merge.clone()),
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "INSERT INTO t SELECT * FROM u",
                Kind::Insert,
                None,
                Some(Rule::UpdateWithoutWhere),
            ),
            (
                "INSERT INTO t SELECT * FROM u",
                Kind::Insert,
                Some(bounded.clone()),
                None,
            ),
            ("INSERT INTO t VALUES (1)", Kind::Insert, Some(merge), None),
        ];
        for (sql, kind, plan, want) in cases {
            let evidence = Evidence {
                plan,
                ..Evidence::of(kind)
            };
            let got = statement(&judge(&[]), &Outline::duckdb(sql), &evidence)
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{sql}");
        }
    }

    /// An EXPLAIN is judged as every statement it may be of; with none, it
    /// is refused.
    #[test]
    fn explains_judge_what_they_explain() {
        let whole = Plan {
            operators: vec!["DELETE".into()],
            whole_table: true,
            functions: Vec::new(),
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

    #[test]
    fn kinds_from_verbs() {
        let cases = [
            ("COPY t TO 'x'", Some(Kind::Copy)),
            ("COPY FROM DATABASE a TO b", Some(Kind::CopyDatabase)),
            ("EXPORT DATABASE 'd'", Some(Kind::Export)),
            ("IMPORT DATABASE 'd'", Some(Kind::Pragma)),
            ("ATTACH 'x.db'", Some(Kind::Attach)),
            ("DETACH x", Some(Kind::Detach)),
            ("FORCE INSTALL httpfs", Some(Kind::Load)),
            ("install httpfs", Some(Kind::Load)),
            ("UPDATE EXTENSIONS", Some(Kind::UpdateExtensions)),
            ("UPDATE t SET a = 1", None),
            ("CREATE SECRET (TYPE s3)", Some(Kind::Create)),
            ("SELECT 1", None),
        ];
        for (sql, want) in cases {
            assert_eq!(Kind::from_verb(&Outline::duckdb(sql)), want, "{sql}");
        }
    }
}
