//! The adversarial corpus, `fixtures/guard/corpus.jsonl`: SQL written to slip
//! past the guard, and harmless SQL it must keep allowing, each with the
//! verdict it must get. Pure: no database.
//!
//! One JSON object a line:
//!
//! - `sql`: the string given to [`guard::check`];
//! - `expect`: `allow`, or the name of the rule that must refuse it;
//! - `message` (optional): a prefix the refusal's message must start with;
//! - `policy` (optional, default `default`): a spec read by [`judge`];
//! - `catalog` (optional, default `pg15`): the catalog facts the guard judges
//!   functions with: `pg15` (a fresh PostgreSQL 15 database) or `planted` (one
//!   where a database user planted look-alike functions, operators, a cast and
//!   a domain: see `fixtures/guard/planted.sql`);
//! - `note` (optional): why the verdict is what it is. Notes starting with
//!   `GUARD BUG` mark cases the guard got wrong when they were written.
//!
//! Every case runs, and a failure lists all the cases that failed.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::LazyLock;

use pgmcp::testing::guard::{self, DEFAULT_BLOCKED_FUNCTIONS, Mode};
use pgmcp::{FunctionPattern, Policy, Rule};
use serde::Deserialize;

use crate::support::protection::{judge, mode, policy};

static PG15: LazyLock<guard::Routines> = LazyLock::new(crate::support::pg15_routines);
static PLANTED: LazyLock<guard::Routines> = LazyLock::new(|| crate::support::routines_fixture("planted-routines.json"));

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/guard/corpus.jsonl");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    sql: String,
    expect: String,
    message: Option<String>,
    policy: Option<String>,
    catalog: Option<String>,
    note: Option<String>,
}

impl Case {
    fn policy_spec(&self) -> &str {
        self.policy.as_deref().unwrap_or("default")
    }

    /// `None` for `allow`, else the rule; an unknown name is an error.
    fn expected_rule(&self) -> Result<Option<Rule>, String> {
        match self.expect.as_str() {
            "allow" => Ok(None),
            name => Rule::from_name(name)
                .map(Some)
                .ok_or_else(|| format!("unknown rule `{name}` (not in Rule::ALL)")),
        }
    }
}

/// Every case with its 1-based line number. Panics, listing every bad line,
/// when a line is not a case.
fn corpus() -> Vec<(usize, Case)> {
    let text = std::fs::read_to_string(CORPUS).unwrap_or_else(|e| panic!("reading {CORPUS}: {e}"));
    let mut cases = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Case>(line) {
            Ok(case) => cases.push((i + 1, case)),
            Err(e) => bad.push(format!("line {}: {e}", i + 1)),
        }
    }
    assert!(
        bad.is_empty(),
        "{CORPUS} has lines that are not cases:\n{}",
        bad.join("\n")
    );
    cases
}

/// What went wrong with one case, or `None` when it got its verdict.
fn run(case: &Case) -> Option<String> {
    let (judge, expected) = match (judge(case.policy_spec()), case.expected_rule()) {
        (Ok(judge), Ok(expected)) => (judge, expected),
        (Err(e), _) | (_, Err(e)) => return Some(e),
    };
    let facts = match case.catalog.as_deref().unwrap_or("pg15") {
        "pg15" => &*PG15,
        "planted" => &*PLANTED,
        other => return Some(format!("unknown catalog `{other}` (pg15 or planted)")),
    };
    let got = guard::check(&judge, facts, &case.sql);
    let got_text = match &got {
        Ok(_) => "allow".to_owned(),
        Err(v) => format!("{}: {}", v.rule.name(), v.message),
    };
    let ok = match (&got, expected) {
        (Ok(_), None) => true,
        (Err(v), Some(rule)) => {
            v.rule == rule
                && case
                    .message
                    .as_deref()
                    .is_none_or(|prefix| v.message.starts_with(prefix))
        }
        _ => false,
    };
    if ok {
        return None;
    }
    let mut want = case.expect.clone();
    if let Some(prefix) = &case.message {
        let _ = write!(want, ": {prefix}...");
    }
    Some(format!("expected {want}\n    got      {got_text}"))
}

#[test]
fn every_case_gets_its_verdict() {
    let cases = corpus();
    let mut failures = String::new();
    let mut failed = 0;
    for (line, case) in &cases {
        if let Some(problem) = run(case) {
            failed += 1;
            let _ = write!(
                failures,
                "\nline {line}: {:?}\n    policy   {}\n    {problem}\n",
                case.sql,
                case.policy_spec()
            );
            if let Some(note) = &case.note {
                let _ = writeln!(failures, "    note     {note}");
            }
        }
    }
    assert!(
        failed == 0,
        "{failed} of {} corpus cases failed ({CORPUS}):\n{failures}",
        cases.len()
    );
}

#[test]
fn the_corpus_is_large_and_refuses_with_every_rule() {
    let cases = corpus();
    assert!(
        cases.len() >= 200,
        "the corpus has {} cases; keep at least 200",
        cases.len()
    );
    let refused: BTreeSet<&str> = cases.iter().map(|(_, c)| c.expect.as_str()).collect();
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .filter(|r| !r.embedded_only())
        .map(|r| r.name())
        .filter(|name| !refused.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "no corpus case expects a refusal by: {}",
        missing.join(", ")
    );
}

/// Each default blocked function (or, for a `*` pattern, a function with its
/// prefix) is called in a case that the default policy must refuse.
#[test]
fn the_corpus_calls_every_default_blocked_function() {
    let cases = corpus();
    let missing: Vec<&str> = DEFAULT_BLOCKED_FUNCTIONS
        .iter()
        .copied()
        .filter(|pattern| {
            let name = pattern.trim_end_matches('*');
            !cases.iter().any(|(_, c)| {
                c.expect == Rule::BlockedFunction.name()
                    && c.policy_spec() == "default"
                    && c.sql.to_ascii_lowercase().contains(name)
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "no default-policy blocked-function case calls: {}",
        missing.join(", ")
    );
}

#[test]
fn policy_specs_read_like_the_unit_tests() {
    let spec = "read_only+allow_set+block:purge_*";
    let p = policy(spec).unwrap();
    assert!(mode(spec) == Mode::ReadOnly && p.allows(Rule::Set) && !p.allows(Rule::Drop));
    assert_eq!(mode("allow_set"), Mode::ReadWrite);
    assert_eq!(p.blocked_functions.last().map(FunctionPattern::as_str), Some("purge_*"));
    assert_eq!(policy("all").unwrap(), Policy::permissive());
    assert_eq!(policy("default").unwrap(), Policy::default());
    assert!(policy("allow_everything").is_err());
}
