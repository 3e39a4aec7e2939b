//! The guard for DuckDB. DuckDB's dialect is not PostgreSQL's, so DuckDB's own
//! parser decides what a statement is: the backend counts the statements with
//! `duckdb_extract_statements` (→ [`super::one_statement`]), prepares the one
//! statement, and hands the statement type DuckDB reports ([`Kind`]) to
//! [`statement()`]. Before that, [`text()`] refuses what the tokens already show:
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

mod plan;
mod statement;
mod text;

pub use self::plan::Plan;
// What the DuckDB backend calls: only built with the `duckdb` feature.
#[cfg_attr(not(feature = "duckdb"), allow(unused_imports))]
pub use self::statement::statement;
#[cfg_attr(not(feature = "duckdb"), allow(unused_imports))]
pub use self::text::{advances_sequence, text};
use super::outline::Outline;

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

/// `COPY t FROM 'file'` (into the database) rather than `COPY ... TO 'file'`.
fn copies_from(outline: &Outline) -> bool {
    outline.has("FROM") && !outline.has("TO")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Judge, Mode, Policy};

    pub(super) fn policy(flags: &[&str]) -> Policy {
        let mut p = Policy::default();
        for f in flags {
            p.set_flag(f, true).unwrap();
        }
        p
    }

    /// A judge in read-write mode with `flags` on.
    pub(super) fn judge(flags: &[&str]) -> Judge {
        Judge::new(policy(flags), Mode::ReadWrite)
    }

    /// A judge in read-only mode with `flags` on.
    pub(super) fn read_only_with(flags: &[&str]) -> Judge {
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
