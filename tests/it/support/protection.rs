//! Protection policies written as specs, as the guard's tables write them:
//! `read_only+allow_set+block:purge_*`.

use pgmcp::{FunctionPattern, Policy};

/// A policy from a spec: `default` (every `allow_*` off, the default blocked
/// functions) or `all` ([`Policy::permissive`]), then `+`-joined terms (see
/// [`apply`]).
pub fn policy(spec: &str) -> Result<Policy, String> {
    let mut p = Policy::default();
    apply(&mut p, spec)?;
    Ok(p)
}

/// Apply the `+`-joined terms of `spec` to `p`, in order. A term is a flag to
/// turn on (`read_only`, `allow_set`, ...), `block:PATTERN`, which adds
/// PATTERN to the blocked functions, `vouch:SIGNATURE` (`public.f(integer)`), which adds it to
/// `read_only_functions`, `all`, which starts again from
/// [`Policy::permissive`], or `default`, which changes nothing.
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
            "default" => {}
            "all" => *p = Policy::permissive(),
            flag => p.set_flag(flag, true).map_err(|e| format!("{e} in `{spec}`"))?,
        }
    }
    Ok(())
}
