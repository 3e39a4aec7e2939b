//! The rules SQLite's authorizer cannot apply, checked once on the prepared
//! statement as a whole: `VACUUM INTO` and `ATTACH` naming their file,
//! `VACUUM`, and, in read-only mode, a statement SQLite says writes. Apart
//! from `authorize`, which runs once per action while SQLite prepares.

use super::{Operand, Outline};
use crate::guard::{Finding, Judge, Rule, Violation, violation};

/// Statement-level rules that need the prepared statement: `VACUUM INTO`
/// writes a new file anywhere; in read-only mode a statement SQLite says writes
/// is refused before it runs (the connection is read-only as well).
pub fn statement(judge: &Judge, outline: &Outline, sqlite_says_read_only: bool) -> Result<(), Violation> {
    let file_rule = match outline.verb.as_str() {
        "VACUUM" => Some(Rule::VacuumInto),
        "ATTACH" => Some(Rule::Attach),
        _ => None,
    };
    if let Some(rule) = file_rule {
        outline
            .strings
            .iter()
            .try_for_each(|path| crate::guard::own_process(rule, path))?;
        // A computed name is only known when SQLite opens it, past the
        // guard: it could be pgmcp's own stdin.
        if outline.file == Some(Operand::Computed) {
            return violation(
                rule,
                format!(
                    "{} needs its file name as one string literal ('other.db'): the guard checks the name before SQLite opens it, and cannot see a computed one",
                    if rule == Rule::Attach { "ATTACH" } else { "VACUUM INTO" }
                ),
            );
        }
    }
    // A write is refused as a write in read-only mode, before the rule of
    // its kind (see `authorize`). Transaction statements only frame writes.
    if !sqlite_says_read_only && !matches!(outline.verb.as_str(), "BEGIN" | "COMMIT" | "END" | "ROLLBACK") {
        crate::guard::write_in_read_only(judge, outline)?;
    }
    if outline.verb == "VACUUM" && outline.has("INTO") {
        judge.decide(Finding::new(
            Rule::VacuumInto,
            "VACUUM INTO is not allowed",
            "it writes a copy of the database to any path the server can reach",
        ))?;
    } else if outline.verb == "VACUUM" {
        // SQLite's authorizer reports no action of its own for VACUUM.
        judge.decide(Finding::maintenance("VACUUM is not allowed"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::read_write;
    use super::*;
    use crate::guard::{Mode, Policy};

    #[test]
    fn statement_rules() {
        let default = read_write(Policy::default());
        let read_only = Judge::new(Policy::default(), Mode::ReadOnly);
        let allow_vacuum = read_write(Policy::default().allowing(&[Rule::VacuumInto]));
        let vacuum_read_only = Judge::new(Policy::default().allowing(&[Rule::VacuumInto]), Mode::ReadOnly);
        let all = read_write(Policy::permissive());
        let cases: Vec<(&Judge, &str, bool, Option<Rule>)> = vec![
            (&default, "VACUUM INTO '/tmp/copy.db'", true, Some(Rule::VacuumInto)),
            (&allow_vacuum, "VACUUM INTO '/tmp/copy.db'", true, None),
            (&default, "VACUUM", false, Some(Rule::Maintenance)),
            (&default, "vacuum main", false, Some(Rule::Maintenance)),
            // In read-only mode a write is refused as a write: the switch of
            // its kind would only lead to this refusal.
            (&read_only, "VACUUM", false, Some(Rule::ReadOnly)),
            (&all, "VACUUM", false, None),
            (&read_only, "INSERT INTO t VALUES (1)", false, Some(Rule::ReadOnly)),
            (&read_only, "SELECT 1", true, None),
            (&read_only, "BEGIN", false, None),
            (&default, "INSERT INTO t VALUES (1)", false, None),
            // VACUUM INTO's switch on does not lift read-only mode, so
            // read-only mode names read-only mode, with the switch or not.
            (&read_only, "VACUUM INTO '/tmp/copy.db'", false, Some(Rule::ReadOnly)),
            (
                &vacuum_read_only,
                "VACUUM INTO '/tmp/copy.db'",
                false,
                Some(Rule::ReadOnly),
            ),
            (&allow_vacuum, "VACUUM INTO '/tmp/copy.db'", false, None),
            // pgmcp's own stdin and stdout carry the protocol: no switch
            // lets a statement name them, however spelled.
            (
                &allow_vacuum,
                "VACUUM INTO '/dev/stdout'",
                false,
                Some(Rule::VacuumInto),
            ),
            (
                &allow_vacuum,
                "VACUUM INTO 'file:/proc/self/fd/1'",
                false,
                Some(Rule::VacuumInto),
            ),
            (&all, "ATTACH '/dev/stdin' AS x", false, Some(Rule::Attach)),
            (&all, "ATTACH '../../dev//stdin' AS x", false, Some(Rule::Attach)),
            (&all, "ATTACH 'other.db' AS x", false, None),
            (&all, "ATTACH DATABASE 'other.db' AS x KEY 'k'", false, None),
            (&all, "ATTACH '' AS scratch", false, None),
            (&all, "ATTACH 'a' || '.db' AS x", false, Some(Rule::Attach)),
            (&all, "ATTACH (SELECT 'x.db') AS x", false, Some(Rule::Attach)),
            (&allow_vacuum, "VACUUM main INTO 'copy.db'", false, None),
            (
                &allow_vacuum,
                "VACUUM INTO 'copy' || '.db'",
                false,
                Some(Rule::VacuumInto),
            ),
            (&default, "SELECT '/dev/stdout'", true, None),
        ];
        for (judge, sql, reads, want) in cases {
            let got = statement(judge, &Outline::sqlite(sql), reads).err().map(|v| v.rule);
            assert_eq!(got, want, "{sql}");
        }
        assert_eq!(
            statement(&read_only, &Outline::sqlite("delete from t where 1"), false)
                .unwrap_err()
                .to_string(),
            "DELETE is not allowed in read-only mode: the database is opened read-only (server.read_only is on)"
        );
    }
}
