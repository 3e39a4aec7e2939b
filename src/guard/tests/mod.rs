//! Every row of the reference protection table pgmcp was designed against
//! (each statement, the settings it runs under, the verdict and the message),
//! plus the rules pgmcp adds. A message is checked as a prefix: pgmcp's
//! messages start with the reference text and then say why and which setting
//! allows it.

mod additions;
mod reference;
mod role_switches;

use super::*;
use crate::guard::routines::tests::pg15;

/// A judge from a short spec: `default`, `all` (every allow flag on), or
/// `+`-joined terms such as `read_only+allow_set`: `read_only` is read-only
/// mode (`server.read_only`, not a switch), the others flags to turn on.
fn judge(spec: &str) -> Judge {
    let mut p = if spec == "all" {
        Policy::permissive()
    } else {
        Policy::default()
    };
    let mut mode = Mode::ReadWrite;
    for term in spec.split('+').filter(|f| !matches!(*f, "default" | "all")) {
        match term {
            "read_only" => mode = Mode::ReadOnly,
            flag => p.set_flag(flag, true).unwrap(),
        }
    }
    Judge::new(p, mode)
}

/// (test name, SQL, policy spec, None = allowed / Some(message prefix))
type Case = (&'static str, &'static str, &'static str, Option<&'static str>);

pub(super) fn run(cases: &[Case]) {
    let facts = pg15();
    let mut failures = Vec::new();
    for (name, sql, spec, expected) in cases {
        let got = check(&judge(spec), &facts, sql);
        let ok = match (&got, expected) {
            (Ok(_), None) => true,
            (Err(v), Some(prefix)) => v.message.starts_with(prefix),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{name}: {sql:?} [{spec}]\n   want {expected:?}\n   got  {:?}",
                got.map(|_| "allowed")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_has_a_stable_name() {
    for rule in Rule::ALL {
        assert_eq!(Rule::from_name(rule.name()), Some(rule));
    }
}

/// The checker is shared by concurrent calls: every thread gets its own verdict.
#[test]
fn concurrent_checks() {
    let policy = Judge::new(Policy::default(), Mode::ReadWrite);
    let facts = pg15();
    std::thread::scope(|s| {
        for i in 0..10 {
            let (policy, facts) = (&policy, &facts);
            s.spawn(move || {
                for j in 0..50 {
                    let (sql, allowed) = if (i + j) % 2 == 0 {
                        (format!("SELECT {j}"), true)
                    } else {
                        ("DROP TABLE t".to_owned(), false)
                    };
                    assert_eq!(check(policy, facts, &sql).is_ok(), allowed, "{sql}");
                }
            });
        }
    });
}
