//! The sections the query pipeline's stages run with: the guard's
//! `protection` policy, the `hooks` run before and after a query, the
//! `error_prompts` added to errors and the `sanitization` of results.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::sections::{fail, positive, regex};
use super::{ConfigError, HooksConfig, RawErrorPrompt, RawHook, RawHooks, RawProtection, RawSanitization};
use crate::config::mistake;
use crate::guard::{FunctionPattern, Policy, Rule};
use crate::pipeline::error_prompts::ErrorPrompt;
use crate::pipeline::hooks::Hook;
use crate::pipeline::sanitize::SanitizeRule;

/// The `error_prompts` list.
pub(super) fn error_prompts(raw: &[RawErrorPrompt], file: Option<&Path>) -> Result<Vec<ErrorPrompt>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            Ok(ErrorPrompt {
                pattern: regex(file, &format!("error_prompts[{i}].pattern"), &r.pattern)?,
                message: r.message.clone(),
            })
        })
        .collect()
}

/// The `sanitization` list.
pub(super) fn sanitization(raw: &[RawSanitization], file: Option<&Path>) -> Result<Vec<SanitizeRule>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            Ok(SanitizeRule {
                pattern: regex(file, &format!("sanitization[{i}].pattern"), &r.pattern)?,
                replacement: r.replacement.clone(),
                description: r.description.clone(),
            })
        })
        .collect()
}

/// The `hooks` section: each hook with its effective timeout, a relative
/// command taken from the config file's directory.
pub(super) fn hooks(raw: &RawHooks, file: Option<&Path>) -> Result<HooksConfig, ConfigError> {
    let any_hooks = !raw.before_query.is_empty() || !raw.after_query.is_empty();
    let hook_default = match raw.default_timeout_seconds {
        None if !any_hooks => None,
        value => Some(positive(file, "hooks.default_timeout_seconds", value)?),
    };
    let hook_list = |stage: &str, raw: &[RawHook]| -> Result<Vec<Hook>, ConfigError> {
        raw.iter()
            .enumerate()
            .map(|(i, h)| {
                let field = format!("hooks.{stage}[{i}]");
                if h.command.trim().is_empty() {
                    return Err(fail(
                        file,
                        &format!("{field}.command"),
                        "must name an executable".into(),
                    ));
                }
                let timeout = match h.timeout_seconds {
                    None | Some(0) => hook_default.unwrap_or(0),
                    value => positive(file, &format!("{field}.timeout_seconds"), value)?,
                };
                Ok(Hook {
                    pattern: regex(file, &format!("{field}.pattern"), &h.pattern)?,
                    command: hook_command(&h.command, file),
                    args: h.args.clone(),
                    timeout: Duration::from_secs(timeout),
                })
            })
            .collect()
    };
    Ok(HooksConfig {
        before_query: hook_list("before_query", &raw.before_query)?,
        after_query: hook_list("after_query", &raw.after_query)?,
    })
}

/// The `protection` section: the guard's policy (read-only mode is
/// `server.read_only`, which the engine gives the guard as its mode).
pub(super) fn protection(p: RawProtection, file: Option<&Path>) -> Result<Policy, ConfigError> {
    let mut policy = Policy::default();
    if let Some(list) = p.blocked_functions {
        policy.blocked_functions =
            function_patterns("protection.blocked_functions", &list).map_err(|(f, m)| fail(file, &f, m))?;
    }
    policy.read_only_functions = function_signatures(
        "protection.read_only_functions",
        &p.read_only_functions.unwrap_or_default(),
    )
    .map_err(|(f, m)| fail(file, &f, m))?;
    for (rule, _) in Rule::switches() {
        policy.allow(rule, p.switches[rule as usize].unwrap_or(rule.spec().default));
    }
    Ok(policy)
}

/// A list of function names, each optionally ending in `*` (a prefix).
/// Errors name the entry: (`field[i]`, message).
fn function_patterns(field: &str, list: &[String]) -> Result<Vec<FunctionPattern>, (String, String)> {
    for (i, name) in list.iter().enumerate() {
        let bare = name.strip_suffix('*').unwrap_or(name);
        if bare.is_empty() || !bare.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            return Err((
                format!("{field}[{i}]"),
                format!(
                    "{} is not a function name (letters, digits and _, optionally ending in *)",
                    mistake::quoted(name)
                ),
            ));
        }
    }
    Ok(list.iter().map(|n| FunctionPattern::new(n)).collect())
}

/// Functions vouched for by full signature, `schema.name(argument types)`
/// as pgmcp's refusal writes it: a bare name or a pattern would also vouch
/// for an overload someone creates later, in any schema.
fn function_signatures(field: &str, list: &[String]) -> Result<Vec<FunctionPattern>, (String, String)> {
    for (i, signature) in list.iter().enumerate() {
        let shaped = signature
            .trim()
            .strip_suffix(')')
            .and_then(|s| s.split_once('('))
            .and_then(|(name, _)| name.rsplit_once('.'))
            .is_some_and(|(schema, name)| !schema.trim().is_empty() && !name.trim().is_empty());
        if !shaped || signature.contains('*') {
            return Err((
                format!("{field}[{i}]"),
                format!(
                    "{} is not a function's full signature: write schema.name(argument types), \
                     e.g. \"public.monthly_report(integer)\", as read-only mode's refusal names it \
                     (a bare name or a pattern would vouch for any function of that name, one created later included)",
                    mistake::quoted(signature)
                ),
            ));
        }
    }
    Ok(list.iter().map(|s| FunctionPattern::new(s.trim())).collect())
}

/// A hook command with a `/` in it is a path; a relative one is taken from the
/// config file's directory, since desktop clients start pgmcp from anywhere.
fn hook_command(command: &str, file: Option<&Path>) -> PathBuf {
    let path = PathBuf::from(command);
    match file.and_then(Path::parent) {
        Some(dir) if command.contains('/') && path.is_relative() => dir.join(path),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::tests::{MINIMAL, load};

    #[test]
    fn protection_defaults_block_everything() {
        let c = load(MINIMAL).unwrap();
        assert_eq!(c.protection, Policy::default());
        assert!(
            !c.protection.allows(Rule::Drop)
                && !c.protection.allows(Rule::Set)
                && !c.protection.allows(Rule::CopyToFile)
        );
        assert!(
            c.protection
                .blocked_functions
                .iter()
                .any(|f| f.as_str() == "pg_read_file")
        );

        let c = load(&format!(
            r#"{{"server": {{"read_only": false}}, "protection": {{"allow_drop": true, "allow_copy_from": true, "allow_create_function": true, "allow_prepare": true, "blocked_functions": ["my_danger", "evil_*"]}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap();
        assert!(
            c.protection.allows(Rule::Drop)
                && c.protection.allows(Rule::CopyFrom)
                && c.protection.allows(Rule::CreateFunction)
                && c.protection.allows(Rule::Prepare)
        );
        assert!(!c.protection.allows(Rule::Set) && !c.protection.allows(Rule::Truncate));
        let names: Vec<&str> = c.protection.blocked_functions.iter().map(|f| f.as_str()).collect();
        assert_eq!(names, ["my_danger", "evil_*"]);

        let e = load(&format!(
            r#"{{"protection": {{"blocked_functions": ["ok", "drop table"]}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("protection.blocked_functions[1]"));
        let e = load(&format!(
            r#"{{"protection": {{"allow_everything": true}}, {}"#,
            &MINIMAL[1..]
        ))
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("protection.allow_everything"));
    }
    #[test]
    fn pipeline_sections_are_validated() {
        let with = |extra: &str| load(&format!("{{{extra}, {}", &MINIMAL[1..]));
        let c = with(
            r#""error_prompts": [{"pattern": "(?i)denied", "message": "Ask the DBA."}],
               "sanitization": [{"pattern": "\\d{4}", "replacement": "****", "description": "digits"}],
               "hooks": {"default_timeout_seconds": 5,
                         "before_query": [{"pattern": ".*", "command": "hooks/check.sh", "args": ["-v"]}],
                         "after_query": [{"pattern": "x", "command": "/abs/after.sh", "timeout_seconds": 9}]}"#,
        )
        .unwrap();
        assert_eq!(c.error_prompts[0].message, "Ask the DBA.");
        assert_eq!(c.sanitization[0].replacement, "****");
        let before = &c.hooks.before_query[0];
        assert_eq!(
            before.command,
            PathBuf::from("/etc/hooks/check.sh"),
            "relative to the config file"
        );
        assert_eq!(
            (before.timeout, before.args.clone()),
            (Duration::from_secs(5), vec!["-v".to_owned()])
        );
        let after = &c.hooks.after_query[0];
        assert_eq!(
            (after.command.clone(), after.timeout),
            (PathBuf::from("/abs/after.sh"), Duration::from_secs(9))
        );
        assert_eq!((c.query.max_result_length, c.query.max_sql_length), (50_000, 100_000));

        let cases = [
            (
                r#""hooks": {"before_query": [{"pattern": ".*", "command": "a.sh"}]}"#,
                "hooks.default_timeout_seconds: required",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 0, "after_query": [{"pattern": ".*", "command": "a.sh"}]}"#,
                "hooks.default_timeout_seconds: must be greater than 0, got 0",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": "(", "command": "a.sh"}]}"#,
                "hooks.before_query[0].pattern: invalid regex \"(\"",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": ".*", "command": " "}]}"#,
                "hooks.before_query[0].command: must name an executable",
            ),
            (
                r#""hooks": {"default_timeout_seconds": 5, "before_query": [{"pattern": ".*", "command": "a", "timeout_seconds": -1}]}"#,
                "hooks.before_query[0].timeout_seconds: must be greater than 0, got -1",
            ),
            (
                r#""error_prompts": [{"pattern": "[", "message": "m"}]"#,
                "error_prompts[0].pattern: invalid regex \"[\"",
            ),
            (
                r#""sanitization": [{"pattern": "ok", "replacement": ""}, {"pattern": "(?P<", "replacement": ""}]"#,
                "sanitization[1].pattern: invalid regex",
            ),
        ];
        for (extra, expected) in cases {
            let e = with(extra).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("config /etc/pgmcp.json: {expected}")),
                "{extra}: {e}"
            );
        }
        // hooks.default_timeout_seconds is not needed without hooks.
        assert!(with(r#""hooks": {}"#).is_ok());
        let e = load(r#"{"query": {"default_timeout_seconds": 1, "list_tables_timeout_seconds": 1, "describe_table_timeout_seconds": 1, "timeout_rules": [{"pattern": "x", "timeout_seconds": 0}]}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("query.timeout_rules[0].timeout_seconds"));
    }
}
