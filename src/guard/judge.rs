//! The one judge. Each dialect's guard reads its engine's evidence
//! (PostgreSQL's parse tree and catalog facts, the actions SQLite's
//! authorizer reports, the statement type DuckDB's parser reports) and
//! reports what it found; the judge alone reads the [`Policy`] and the
//! [`Mode`], decides, and words the refusal: what was refused, why, and
//! which setting allows it (read-only mode's refusals too, each in one
//! frame for every engine: [`Judge::write`], [`Judge::lift_read_only`]).

use std::borrow::Cow;
use std::sync::Arc;

use super::finding::{Finding, Remedy};
use super::policy::Policy;
use super::rule::Rule;
use super::{Violation, violation};

/// Whether the session is read-only. `server.read_only` (`Config.read_only`)
/// is its one setting: the engine builds the judge's mode from it
/// (`Engine::new`), and no [`Policy`] holds a copy to keep equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ReadWrite,
    /// Nothing that writes, and no change to the transaction's read-only
    /// state.
    ReadOnly,
}

/// Applies a [`Policy`] in a [`Mode`]. Cheap to clone: backends take one
/// onto the thread where their engine's parser reports.
#[derive(Debug, Clone)]
pub struct Judge {
    policy: Arc<Policy>,
    mode: Mode,
    /// Every function the statement reaches is judged as in read-only
    /// mode, whatever `mode` says of the statement ([`Judge::planning`]).
    reading_calls: bool,
}

impl Judge {
    pub fn new(policy: Policy, mode: Mode) -> Judge {
        Judge {
            policy: Arc::new(policy),
            mode,
            reading_calls: false,
        }
    }

    /// Refuse what `finding` describes unless its rule's switch is on; a
    /// rule without a switch always refuses, and says no setting allows it.
    pub fn decide(&self, finding: Finding<'_>) -> Result<(), Violation> {
        if self.policy.allows(finding.rule) {
            return Ok(());
        }
        let Finding {
            rule,
            what,
            why,
            remedy,
        } = finding;
        let Some(flag) = rule.flag() else {
            return violation(rule, format!("{what}: {why}. No setting allows it"));
        };
        let remedy = match remedy {
            Remedy::Switch => format!("Set protection.{flag} to true to allow it"),
            Remedy::AddWhere => format!("Add a WHERE clause, or set protection.{flag} to true"),
            Remedy::ToStdout => {
                format!("COPY ... TO STDOUT is allowed; set protection.{flag} to true to allow the rest")
            }
        };
        violation(rule, format!("{what}: {why}. {remedy}"))
    }

    /// The same policy in read-only mode: for what may only ever read,
    /// whatever `server.read_only` says (a hypothetical index's parts).
    pub fn reading(&self) -> Judge {
        Judge {
            policy: Arc::clone(&self.policy),
            mode: Mode::ReadOnly,
            reading_calls: true,
        }
    }

    /// The same judge, but every function the statement can reach (by
    /// name, operator, cast, a table's defaults, triggers, rules and index
    /// expressions) must be one read-only mode runs: for a statement pgmcp
    /// only plans (`EXPLAIN`, which folds IMMUTABLE calls and estimates
    /// with STABLE ones) before a person has said it may run.
    pub fn planning(&self) -> Judge {
        Judge {
            policy: Arc::clone(&self.policy),
            mode: self.mode,
            reading_calls: true,
        }
    }

    /// The same judge, vouching as well for `signatures` (full signatures,
    /// as `protection.read_only_functions` takes them): for pgmcp's own
    /// statements, which call functions pgmcp knows only read.
    pub fn vouching(&self, signatures: &[String]) -> Judge {
        let mut policy = (*self.policy).clone();
        policy
            .read_only_functions
            .extend(signatures.iter().map(|s| super::FunctionPattern::new(s)));
        Judge {
            policy: Arc::new(policy),
            mode: self.mode,
            reading_calls: self.reading_calls,
        }
    }

    /// Is `server.read_only` on? Then a write is refused as a write before
    /// any switch its kind needs is named.
    pub fn read_only(&self) -> bool {
        self.mode == Mode::ReadOnly
    }

    /// Something that writes: refused in read-only mode, worded as
    /// `{what} is not allowed in read-only mode: {why} (server.read_only is
    /// on)`, every engine alike; `what` is worded only then (this runs for
    /// every statement, in both modes).
    pub fn write(&self, what: impl FnOnce() -> String, why: &str) -> Result<(), Violation> {
        self.read_only_refuses(|| format!("{} is not allowed in read-only mode: {why}", what()))
    }

    /// Something that would make the session writable from inside (a change
    /// to the transaction's read-only setting, a read-write transaction,
    /// SQLite's `query_only` turned off): refused in read-only mode, worded
    /// as `{what} is blocked in read-only mode: {why} (server.read_only is
    /// on)`, every engine alike.
    pub fn lift_read_only(&self, what: impl FnOnce() -> String, why: &str) -> Result<(), Violation> {
        self.read_only_refuses(|| format!("{} is blocked in read-only mode: {why}", what()))
    }

    /// The one wording of the setting behind every read-only refusal.
    fn read_only_refuses(&self, refusal: impl FnOnce() -> String) -> Result<(), Violation> {
        match self.mode {
            Mode::ReadOnly => violation(Rule::ReadOnly, format!("{} (server.read_only is on)", refusal())),
            Mode::ReadWrite => Ok(()),
        }
    }

    /// A function the statement runs (`name` in lower case), `described` by
    /// how it is reached: refused when `protection.blocked_functions` lists
    /// it, saying why when `reason` knows.
    pub fn call(
        &self,
        name: &str,
        described: impl FnOnce() -> String,
        reason: impl FnOnce() -> Option<Cow<'static, str>>,
    ) -> Result<(), Violation> {
        if !self.blocks(name) {
            return Ok(());
        }
        let why = reason().map(|r| format!(": it {r}")).unwrap_or_default();
        violation(
            Rule::BlockedFunction,
            format!(
                "{} is not allowed{why}. Remove it from protection.blocked_functions to allow it",
                described()
            ),
        )
    }

    /// Does `protection.blocked_functions` list `name` (lower case)?
    pub fn blocks(&self, name: &str) -> bool {
        self.policy.blocked_functions.iter().any(|p| p.matches(name))
    }

    /// In read-only mode, a function the guard cannot show changes nothing
    /// (`risk` says what it may do; `None` when it is known to only read):
    /// refused unless `protection.read_only_functions` vouches for every
    /// one of `signatures`, the full signatures of the functions of its name
    /// not known to only read (the call may reach any of them).
    pub fn call_in_read_only(
        &self,
        signatures: &[String],
        described: impl FnOnce() -> String,
        risk: Option<&str>,
    ) -> Result<(), Violation> {
        let unvouched: Vec<&String> = signatures.iter().filter(|s| !self.vouches(s)).collect();
        match risk {
            Some(risk) if self.reading_calls_only() && (signatures.is_empty() || !unvouched.is_empty()) => {
                let advice = if unvouched.is_empty() {
                    "if it only reads, add its full signature (schema.name(argument types)) to protection.read_only_functions".to_owned()
                } else {
                    let quoted: Vec<String> = unvouched.iter().map(|s| format!("\"{s}\"")).collect();
                    format!(
                        "if it only reads, add {} to protection.read_only_functions",
                        quoted.join(", ")
                    )
                };
                violation(
                    Rule::ReadOnly,
                    format!(
                        "{} is not allowed in read-only mode: {risk}. Read-only mode runs only functions known to change nothing; {advice}",
                        described()
                    ),
                )
            }
            _ => Ok(()),
        }
    }

    /// Whether the functions a statement reaches must only read: in
    /// read-only mode, and for a statement only planned.
    fn reading_calls_only(&self) -> bool {
        self.read_only() || self.reading_calls
    }

    /// Does `protection.read_only_functions` name this full signature?
    /// Compared without case or spaces (`public.f(integer, text)`).
    fn vouches(&self, signature: &str) -> bool {
        let key = |s: &str| -> String {
            s.chars()
                .filter(|c| !c.is_whitespace())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let wanted = key(signature);
        self.policy
            .read_only_functions
            .iter()
            .any(|p| key(p.as_str()) == wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_what_why_and_the_switch() {
        let judge = Judge::new(Policy::default(), Mode::ReadWrite);
        let drop = || Finding::new(Rule::Drop, "DROP statements are not allowed", "they destroy objects");
        let cases = [
            (
                drop(),
                "DROP statements are not allowed: they destroy objects. Set protection.allow_drop to true to allow it",
            ),
            (
                Finding::new(
                    Rule::DeleteWithoutWhere,
                    "DELETE without WHERE clause is not allowed",
                    "it would delete every row",
                )
                .remedy(Remedy::AddWhere),
                "DELETE without WHERE clause is not allowed: it would delete every row. Add a WHERE clause, or set protection.allow_delete_without_where to true",
            ),
            (
                Finding::new(Rule::CopyToFile, "COPY TO a file is not allowed", "it writes files")
                    .remedy(Remedy::ToStdout),
                "COPY TO a file is not allowed: it writes files. COPY ... TO STDOUT is allowed; set protection.allow_copy_to_file to true to allow the rest",
            ),
        ];
        for (finding, message) in cases {
            let rule = finding.rule;
            assert_eq!(
                judge.decide(finding),
                Err(Violation {
                    rule,
                    message: message.to_owned()
                })
            );
        }
        let allowing = Judge::new(Policy::default().allowing(&[Rule::Drop]), Mode::ReadWrite);
        assert_eq!(allowing.decide(drop()), Ok(()));
    }

    #[test]
    fn functions_and_writes() {
        let mut policy = Policy::default();
        let judge = Judge::new(policy.clone(), Mode::ReadWrite);
        let described = || "function pg_read_file()".to_owned();
        assert_eq!(
            judge
                .call("pg_read_file", described, || Some("reads files".into()))
                .unwrap_err()
                .message,
            "function pg_read_file() is not allowed: it reads files. Remove it from protection.blocked_functions to allow it"
        );
        assert_eq!(judge.call("lower", described, || None), Ok(()));
        assert_eq!(
            judge.write(|| unreachable!("only worded when refused"), "it writes"),
            Ok(())
        );
        assert_eq!(
            judge.lift_read_only(|| unreachable!("only worded when refused"), "it lifts"),
            Ok(())
        );
        let f = ["public.f(integer)".to_owned()];
        let mine = ["public.mine_f(text, character varying)".to_owned()];
        assert_eq!(judge.call_in_read_only(&f, described, Some("it may write")), Ok(()));

        policy.read_only_functions = vec![super::super::FunctionPattern::new(
            "public.mine_f(text,character varying)",
        )];
        let judge = Judge::new(policy, Mode::ReadOnly);
        let written = judge.write(|| "INSERT".to_owned(), "it writes").unwrap_err();
        assert_eq!(
            (written.rule, written.message.as_str()),
            (
                Rule::ReadOnly,
                "INSERT is not allowed in read-only mode: it writes (server.read_only is on)"
            )
        );
        assert_eq!(
            judge
                .lift_read_only(
                    || "BEGIN READ WRITE".to_owned(),
                    "cannot start a read-write transaction"
                )
                .unwrap_err()
                .message,
            "BEGIN READ WRITE is blocked in read-only mode: cannot start a read-write transaction (server.read_only is on)"
        );
        let refused = judge
            .call_in_read_only(&f, described, Some("it may write"))
            .unwrap_err();
        assert_eq!(refused.rule, Rule::ReadOnly);
        assert!(
            refused
                .message
                .ends_with("if it only reads, add \"public.f(integer)\" to protection.read_only_functions"),
            "{refused:?}"
        );
        assert_eq!(judge.call_in_read_only(&f, described, None), Ok(()));
        assert_eq!(judge.call_in_read_only(&mine, described, Some("it may write")), Ok(()));
        // A function the facts do not know cannot be vouched for.
        assert_eq!(
            judge
                .call_in_read_only(&[], described, Some("it may write"))
                .unwrap_err()
                .rule,
            Rule::ReadOnly
        );
    }
}
