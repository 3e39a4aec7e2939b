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
use super::{Finding, Judge, Rule, Violation, statements, violation};

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

/// Table functions that run SQL given as text, which the guard cannot check.
const SQL_TEXT_FUNCTIONS: &[&str] = &["query", "query_table"];

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
            "INSTALL" | "LOAD" | "FORCE" => Kind::Load,
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
            _ => false,
        }
    }
}

/// `COPY t FROM 'file'` (into the database) rather than `COPY ... TO 'file'`.
fn copies_from(outline: &Outline) -> bool {
    outline.has("FROM") && !outline.has("TO")
}

/// The rules the tokens alone decide, applied before DuckDB prepares the
/// statement: preparing already reads files (a CSV's columns are sniffed
/// while binding), so a file function must be refused before.
pub fn text(judge: &Judge, outline: &Outline) -> Result<(), Violation> {
    for name in &outline.calls {
        let bare = name.as_str();
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
                "it reads files on the server",
            ))?;
        }
        judge.call(bare, || format!("function {bare}()"), || None)?;
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
            "it reads files on the server",
        ))?;
    }
    Ok(())
}

/// Report every rule the prepared statement falls under, by the type DuckDB
/// reports, in order (the judge refuses the first one not allowed).
pub fn statement(judge: &Judge, outline: &Outline, kind: Kind) -> Result<(), Violation> {
    let decide = |rule: Rule, what: &str, why: &str| judge.decide(Finding::new(rule, what, why));
    let any = |kinds: &[Kind]| kinds.contains(&kind);
    match kind {
        // EXPLAIN ANALYZE runs the statement it explains: judge that one.
        Kind::Explain if outline.analyze => {
            return match Kind::from_verb(outline).or_else(|| verb_kind(&outline.verb)) {
                Some(inner) => statement(judge, outline, inner),
                None => violation(
                    Rule::Parse,
                    format!(
                        "EXPLAIN ANALYZE of {} is not supported: explain it without ANALYZE",
                        outline.verb
                    ),
                ),
            };
        }
        Kind::Invalid | Kind::Multi | Kind::Relation | Kind::LogicalPlan => {
            return violation(
                Rule::Parse,
                format!("this kind of DuckDB statement ({kind:?}) is not supported"),
            );
        }
        _ => {}
    }
    // DuckDB runs some statements as pragmas (`COPY FROM DATABASE a TO b`):
    // they fall under the rules of what their verb says as well.
    if kind == Kind::Pragma
        && let Some(said) = Kind::from_verb(outline)
        && said != Kind::Pragma
    {
        statement(judge, outline, said)?;
    }
    if kind == Kind::Drop {
        decide(
            Rule::Drop,
            "DROP statements are not allowed",
            "they destroy objects and the data in them",
        )?;
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
    if kind == Kind::Delete && outline.verb == "DELETE" && !outline.has_where() {
        decide(
            Rule::DeleteWithoutWhere,
            "DELETE without WHERE is not allowed",
            "it deletes every row of the table",
        )?;
    }
    if kind == Kind::Update && !outline.has_where() {
        decide(
            Rule::UpdateWithoutWhere,
            "UPDATE without WHERE is not allowed",
            "it changes every row of the table",
        )?;
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
    if kind == Kind::Pragma {
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
    if kind.writes(outline) {
        return statements::write_in_read_only(judge, outline);
    }
    Ok(())
}

/// The kind of the statement an `EXPLAIN ANALYZE` runs, from its verb.
fn verb_kind(verb: &str) -> Option<Kind> {
    Some(match verb {
        "SELECT" | "FROM" | "VALUES" | "TABLE" | "SUMMARIZE" | "DESCRIBE" | "SHOW" | "PIVOT" | "UNPIVOT" => {
            Kind::Select
        }
        "INSERT" => Kind::Insert,
        "UPDATE" => Kind::Update,
        "DELETE" | "TRUNCATE" => Kind::Delete,
        "CREATE" => Kind::Create,
        "DROP" => Kind::Drop,
        "ALTER" => Kind::Alter,
        "MERGE" => Kind::MergeInto,
        _ => return None,
    })
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
    use crate::guard::Policy;

    fn policy(flags: &[&str]) -> Policy {
        let mut p = Policy::default();
        for f in flags {
            p.set_flag(f, true).unwrap();
        }
        p
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
            let got = text(&Judge::new((*policy).clone()), &Outline::duckdb(sql))
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{sql}");
        }
        assert_eq!(
            text(
                &Judge::new(default.clone()),
                &Outline::duckdb("SELECT * FROM read_parquet('x')")
            )
            .unwrap_err()
            .to_string(),
            "function read_parquet() is not allowed: it reads files on the server. Set protection.allow_file_functions to true to allow it"
        );
    }

    #[test]
    fn statement_rules() {
        let default = Policy::default();
        let writable_default = Policy::default();
        let read_only = Policy::permissive().with_read_only(true);
        let all = Policy::permissive();
        let (macros, drops, retypes) = (
            policy(&["allow_create_function"]),
            policy(&["allow_drop"]),
            policy(&["allow_update_without_where"]),
        );
        // One statement under two rules, one switch on: the other rule still
        // refuses it (pinned when the guards began reporting to the judge).
        let macros_drops = policy(&["allow_create_function", "allow_drop"]);
        let read_only_too = |p: &Policy| {
            let mut p = p.clone();
            p.read_only = true;
            p
        };
        let macros_drops_read_only = read_only_too(&macros_drops);
        let drops_retypes = policy(&["allow_drop", "allow_update_without_where"]);
        let (exports, pragmas, secrets, deletes) = (
            policy(&["allow_export"]),
            policy(&["allow_pragma_write"]),
            policy(&["allow_create_extension"]),
            policy(&["allow_delete_without_where"]),
        );
        let deletes_read_only = read_only_too(&deletes);
        let (copies_from, copies_to) = (policy(&["allow_copy_from"]), policy(&["allow_copy_to_file"]));
        let copies_both = policy(&["allow_copy_from", "allow_copy_to_file"]);
        // (policy, sql, the kind DuckDB reports, refusing rule)
        let pragma_switch = policy(&["allow_pragma_write"]);
        let pragma_and_attach = policy(&["allow_pragma_write", "allow_attach"]);
        let cases: Vec<(&Policy, &str, Kind, Option<Rule>)> = vec![
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
            (&default, "EXPLAIN SELECT 1", Kind::Explain, None),
            (&default, "EXPLAIN DELETE FROM t", Kind::Explain, None),
            (&default, "EXPLAIN ANALYZE SELECT 1", Kind::Explain, None),
            (
                &default,
                "EXPLAIN ANALYZE DELETE FROM t",
                Kind::Explain,
                Some(Rule::DeleteWithoutWhere),
            ),
            (
                &read_only,
                "EXPLAIN ANALYZE INSERT INTO t VALUES (1)",
                Kind::Explain,
                Some(Rule::ReadOnly),
            ),
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
            (&read_only, "CHECKPOINT", Kind::Pragma, None),
            (&default, "CHECKPOINT", Kind::Pragma, Some(Rule::Pragma)),
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
                &macros,
                "EXPLAIN ANALYZE CREATE OR REPLACE MACRO m(x) AS x",
                Kind::Explain,
                Some(Rule::Drop),
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
            (&deletes, "EXPLAIN ANALYZE DELETE FROM t", Kind::Explain, None),
            (
                &deletes_read_only,
                "EXPLAIN ANALYZE DELETE FROM t",
                Kind::Explain,
                Some(Rule::ReadOnly),
            ),
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
        for (policy, sql, kind, want) in cases {
            let got = statement(&Judge::new((*policy).clone()), &Outline::duckdb(sql), kind)
                .err()
                .map(|v| v.rule);
            assert_eq!(got, want, "{sql} ({kind:?})");
        }
        assert_eq!(
            statement(
                &Judge::new(default.clone()),
                &Outline::duckdb("COPY t TO 'x.csv'"),
                Kind::Copy
            )
            .unwrap_err()
            .to_string(),
            "COPY ... TO is not allowed: it writes a file on the server. Set protection.allow_copy_to_file to true to allow it"
        );
        assert_eq!(
            statement(
                &Judge::new(read_only.clone()),
                &Outline::duckdb("insert into t values (1)"),
                Kind::Insert
            )
            .unwrap_err()
            .to_string(),
            "cannot execute INSERT in read-only mode: the database is opened read-only (server.read_only)"
        );
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
