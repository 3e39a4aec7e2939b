//! Protection policies written as specs, as the guard's tables write them:
//! `read_only+allow_set+block:purge_*`.

use pgmcp::testing::guard::{Judge, Mode};
use pgmcp::{FunctionPattern, Policy};

/// The judge a spec describes: its [`policy`] in its [`mode`].
pub fn judge(spec: &str) -> Result<Judge, String> {
    Ok(Judge::new(policy(spec)?, mode(spec)))
}

/// A policy from a spec: `default` (every `allow_*` off, the default blocked
/// functions) or `all` ([`Policy::permissive`]), then `+`-joined terms (see
/// [`apply`]).
pub fn policy(spec: &str) -> Result<Policy, String> {
    let mut p = Policy::default();
    apply(&mut p, spec)?;
    Ok(p)
}

/// The mode a spec names: read-only when `read_only` is one of its terms.
/// Read-only mode is `server.read_only`, not a protection switch, so no
/// policy holds it.
pub fn mode(spec: &str) -> Mode {
    match spec.split('+').any(|term| term == "read_only") {
        true => Mode::ReadOnly,
        false => Mode::ReadWrite,
    }
}

/// Apply the `+`-joined terms of `spec` to `p`, in order. A term is a flag to
/// turn on (`allow_set`, ...), `block:PATTERN`, which adds PATTERN to the
/// blocked functions, `vouch:SIGNATURE` (`public.f(integer)`), which adds it to
/// `read_only_functions`, `all`, which starts again from
/// [`Policy::permissive`], `default`, which changes nothing, or `read_only`,
/// which is the [`mode`]'s and changes nothing here.
pub fn apply(p: &mut Policy, spec: &str) -> Result<(), String> {
    for term in spec.split('+') {
        if let Some(pattern) = term.strip_prefix("block:") {
            p.blocked_functions.push(FunctionPattern::new(pattern));
            continue;
        }
        if let Some(pattern) = term.strip_prefix("vouch:") {
            p.read_only_functions.push(FunctionPattern::new(pattern));
            continue;
        }
        match term {
            "default" | "read_only" => {}
            "all" => *p = Policy::permissive(),
            flag => p.set_flag(flag, true).map_err(|e| format!("{e} in `{spec}`"))?,
        }
    }
    Ok(())
}
