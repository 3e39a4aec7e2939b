//! The rules the tokens alone decide, before DuckDB prepares anything:
//! file-reading table functions, files named as tables, functions that run
//! SQL given as text, blocked functions, and pgmcp's own process named as a
//! file. Apart from `statement` because they must run first: preparing
//! already reads files (a CSV's columns are sniffed while binding).

use super::copies_from;
use crate::guard::finding::RUNS_SQL_TEXT;
use crate::guard::outline::Outline;
use crate::guard::{Finding, Judge, Rule, Violation, violation};

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

/// Functions that advance a sequence: a change no rollback undoes, and
/// one DuckDB makes as early as it prepares a statement that calls them in
/// a table function's arguments (`range(nextval('s'))`).
const SEQUENCE_FUNCTIONS: &[&str] = &["nextval", "setval"];

/// Whether the statement calls a function that advances a sequence, which
/// preparing it can already do: nothing about it may be asked of DuckDB
/// before it is meant to run.
pub fn advances_sequence(outline: &Outline) -> bool {
    outline.calls.iter().any(|c| SEQUENCE_FUNCTIONS.contains(&c.as_str()))
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
        crate::guard::write_in_read_only(judge, outline)?;
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
            crate::guard::own_process(rule, path)?;
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
pub(super) fn function(judge: &Judge, bare: &str) -> Result<(), Violation> {
    if SQL_TEXT_FUNCTIONS.contains(&bare) {
        return violation(
            Rule::BlockedFunction,
            format!("function {bare}() is not allowed: it {RUNS_SQL_TEXT}"),
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
        judge.write(|| format!("function {bare}()"), "it checkpoints the database")?;
        judge.decide(Finding::maintenance(format!("function {bare}() is not allowed")))?;
    }
    if SEQUENCE_FUNCTIONS.contains(&bare) {
        judge.write(
            || format!("function {bare}()"),
            "it advances a sequence, which no rollback undoes",
        )?;
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

#[cfg(test)]
mod tests {
    use super::super::tests::policy;
    use super::*;
    use crate::guard::{FunctionPattern, Mode, Policy};

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
}
