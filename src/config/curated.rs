//! Validation of the curated tools (`tools`) and of which built-in tools
//! are served (`tools_enabled`): every name, type, default and `enum` value
//! checked, naming the tool and the field. What the guard says of each
//! statement needs the database's dialect, and is asked when the databases
//! are opened (`crate::service`).

use std::collections::HashSet;
use std::path::Path;

use super::sections::fail;
use super::{ConfigError, RawToolsEnabled, ToolsEnabled};
use crate::config::raw::{RawParameter, RawTool};
use crate::toolbox::arguments;
use crate::toolbox::{BUILT_IN_TOOLS, CuratedTool, ParamType, Parameter, Scalar, is_name};

/// The `tools` list. `databases`: the names of `databases` (empty when the
/// config has one database).
pub(super) fn tools(
    raw: &[RawTool],
    databases: &[String],
    file: Option<&Path>,
) -> Result<Vec<CuratedTool>, ConfigError> {
    let mut seen = HashSet::new();
    raw.iter()
        .enumerate()
        .map(|(i, tool)| {
            let field = |name: &str| format!("tools[{i}].{name}");
            let fail = |name: &str, message: String| fail(file, &field(name), message);
            if !is_name(&tool.name) {
                return Err(fail(
                    "name",
                    format!(
                        "{:?} cannot name a tool: use a letter, then letters, digits, _ or - (64 at most)",
                        tool.name
                    ),
                ));
            }
            let named = |message: String| format!("tool {}: {message}", tool.name);
            if BUILT_IN_TOOLS.contains(&tool.name.as_str()) {
                return Err(fail(
                    "name",
                    named(
                        "a built-in tool has that name: choose another (tools_enabled switches built-ins off)".into(),
                    ),
                ));
            }
            if !seen.insert(tool.name.as_str()) {
                return Err(fail("name", named("another tool has the same name".into())));
            }
            if tool.description.trim().is_empty() {
                return Err(fail(
                    "description",
                    named("say what the tool does and when to use it: the model reads it to choose".into()),
                ));
            }
            if tool.statement.trim().is_empty() {
                return Err(fail("statement", named("the statement is empty".into())));
            }
            match (&tool.database, databases.is_empty()) {
                (Some(_), true) => {
                    return Err(fail(
                        "database",
                        named("the config has one database: name databases in `databases` to choose one".into()),
                    ));
                }
                (Some(name), false) if !databases.contains(name) => {
                    return Err(fail(
                        "database",
                        named(format!(
                            "no database is named {name:?}; the config's databases are {}",
                            databases.join(", ")
                        )),
                    ));
                }
                _ => {}
            }
            let mut names = HashSet::new();
            let parameters = tool
                .parameters
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let field = format!("parameters[{j}]");
                    if !names.insert(p.name.as_str()) {
                        return Err(fail(
                            &format!("{field}.name"),
                            named(format!("two parameters are named {:?}", p.name)),
                        ));
                    }
                    parameter(p).map_err(|(at, message)| fail(&format!("{field}.{at}"), named(message)))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(CuratedTool {
                name: tool.name.clone(),
                description: tool.description.clone(),
                database: tool.database.clone(),
                statement: tool.statement.clone(),
                parameters,
                read_only: tool.read_only,
            })
        })
        .collect()
}

/// One parameter, or the field at fault (within the parameter) and why.
fn parameter(raw: &RawParameter) -> Result<Parameter, (&'static str, String)> {
    if !is_name(&raw.name) {
        return Err((
            "name",
            format!(
                "{:?} cannot name a parameter: use a letter, then letters, digits, _ or -",
                raw.name
            ),
        ));
    }
    let scalar = |name: &str, at: &'static str| {
        Scalar::named(name).ok_or_else(|| {
            let names: Vec<&str> = Scalar::NAMES.iter().map(|(n, _)| *n).collect();
            (
                at,
                format!(
                    "parameter {}: unknown type {name:?}: use {} or array",
                    raw.name,
                    names.join(", ")
                ),
            )
        })
    };
    let kind = match (raw.kind.as_str(), &raw.items) {
        ("array", Some(items)) => ParamType::Array(scalar(items, "items")?),
        ("array", None) => {
            return Err((
                "items",
                format!("parameter {}: an array needs `items`, the type of its items", raw.name),
            ));
        }
        (kind, None) => ParamType::Scalar(scalar(kind, "type")?),
        (_, Some(_)) => {
            return Err((
                "items",
                format!("parameter {}: only a parameter of type array takes `items`", raw.name),
            ));
        }
    };
    if raw.description.trim().is_empty() {
        return Err((
            "description",
            format!("parameter {}: say what the value is: the model reads it", raw.name),
        ));
    }
    if raw.required == Some(true) && raw.default.is_some() {
        return Err((
            "default",
            format!(
                "parameter {}: a required parameter is always given, so its default would never apply: drop one",
                raw.name
            ),
        ));
    }
    let mut parameter = Parameter {
        name: raw.name.clone(),
        description: raw.description.clone(),
        kind,
        required: raw.required.unwrap_or(raw.default.is_none()),
        default: None,
        allowed: None,
    };
    if let Some(allowed) = &raw.allowed {
        if allowed.is_empty() {
            return Err(("enum", format!("parameter {}: an empty enum allows no value", raw.name)));
        }
        for value in allowed {
            arguments::check(&parameter, value)
                .map_err(|e| ("enum", format!("parameter {}: enum value {value}: {e}", raw.name)))?;
        }
        parameter.allowed = Some(allowed.clone());
    }
    if let Some(default) = raw.default.as_ref().filter(|d| !d.is_null()) {
        arguments::check(&parameter, default).map_err(|e| ("default", format!("parameter {}: {e}", raw.name)))?;
        parameter.default = Some(default.clone());
    }
    Ok(parameter)
}

/// `tools_enabled`: every built-in on unless switched off; with all off,
/// curated tools must be there, or nothing would be served.
pub(super) fn enabled(raw: &RawToolsEnabled, curated: usize, file: Option<&Path>) -> Result<ToolsEnabled, ConfigError> {
    let enabled = ToolsEnabled {
        query: raw.query.unwrap_or(true),
        list_tables: raw.list_tables.unwrap_or(true),
        describe_table: raw.describe_table.unwrap_or(true),
        // With analyze it runs SQL, and a plan shows the schema: where raw
        // SQL is switched off, so is `explain`, unless said otherwise.
        explain: raw.explain.unwrap_or(raw.query.unwrap_or(true)),
        // It shows what other sessions run and wait for: a server narrowed
        // to curated tools does not offer it unless said otherwise.
        diagnose: raw.diagnose.unwrap_or(raw.query.unwrap_or(true)),
    };
    let any = enabled.query || enabled.list_tables || enabled.describe_table || enabled.explain || enabled.diagnose;
    if !any && curated == 0 {
        return Err(fail(
            file,
            "tools_enabled",
            "every built-in tool is switched off and `tools` lists none: the server would offer nothing".into(),
        ));
    }
    Ok(enabled)
}

#[cfg(test)]
mod tests {
    use crate::config::tests::load;

    /// A config with one tool: `tool`'s JSON members over a valid tool's.
    fn with_tool(tool: &str) -> String {
        let mut fields: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"name": "find", "description": "Find orders.", "statement": "SELECT $1::int"}"#)
                .unwrap();
        let given: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&format!("{{{tool}}}")).unwrap();
        fields.extend(given);
        serde_json::json!({ "tools": [fields] }).to_string()
    }

    #[test]
    fn each_mistake_names_the_tool_and_field() {
        let cases = [
            (r#""parameters": []"#, None),
            (
                r#""name": "query""#,
                Some(("tools[0].name", "a built-in tool has that name")),
            ),
            (r#""name": "2x""#, Some(("tools[0].name", "cannot name a tool"))),
            (
                r#""description": " ""#,
                Some(("tools[0].description", "tool find: say what the tool does")),
            ),
            (
                r#""database": "shop""#,
                Some(("tools[0].database", "the config has one database")),
            ),
            (
                r#""parameters": [{"name": "id", "type": "int", "description": "x"}]"#,
                Some(("tools[0].parameters[0].type", "unknown type \"int\"")),
            ),
            (
                r#""parameters": [{"name": "id", "type": "array", "description": "x"}]"#,
                Some(("tools[0].parameters[0].items", "an array needs `items`")),
            ),
            (
                r#""parameters": [{"name": "id", "type": "integer", "description": "x", "default": "7"}]"#,
                Some(("tools[0].parameters[0].default", "expected a whole number")),
            ),
            (
                r#""parameters": [{"name": "s", "type": "string", "description": "x", "enum": ["a", 1]}]"#,
                Some(("tools[0].parameters[0].enum", "enum value 1")),
            ),
            (
                r#""parameters": [{"name": "s", "type": "string", "description": "x", "required": true, "default": "a"}]"#,
                Some(("tools[0].parameters[0].default", "a required parameter")),
            ),
            (
                r#""parameters": [{"name": "s", "type": "string", "description": "x"}, {"name": "s", "type": "string", "description": "y"}]"#,
                Some(("tools[0].parameters[1].name", "two parameters are named")),
            ),
            (r#""sql": "SELECT 1""#, Some(("tools[0].sql", "unknown field"))),
        ];
        for (tool, expected) in cases {
            let got = load(&with_tool(tool));
            match (&got, expected) {
                (Ok(_), None) => {}
                (Err(e), Some((field, message))) => {
                    assert_eq!(e.field.as_deref(), Some(field), "{tool}: {e}");
                    assert!(e.message.contains(message), "{tool}: {e}");
                }
                _ => panic!("{tool}: {got:?}"),
            }
        }
    }

    #[test]
    fn built_ins_can_be_switched_off_when_curated_tools_remain() {
        let off =
            r#""tools_enabled": {"query": false, "list_tables": false, "describe_table": false, "explain": false}"#;
        let c = load(&format!(
            r#"{{"tools": [{{"name": "find", "description": "d", "statement": "SELECT 1"}}], {off}}}"#
        ))
        .unwrap();
        assert!(!c.tools_enabled.query && !c.tools_enabled.list_tables && c.tools.len() == 1);
        let e = load(&format!("{{{off}}}")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("tools_enabled"));
        // `explain` runs SQL too: off with `query`, unless said otherwise.
        let only = |text: &str| load(text).unwrap().tools_enabled.explain;
        assert!(only("{}"));
        assert!(!only(r#"{"tools_enabled": {"query": false}}"#));
        assert!(only(r#"{"tools_enabled": {"query": false, "explain": true}}"#));
        assert!(!only(r#"{"tools_enabled": {"explain": false}}"#));
        // `diagnose` shows other sessions: off with `query` too.
        let only = |text: &str| load(text).unwrap().tools_enabled.diagnose;
        assert!(only("{}"));
        assert!(!only(r#"{"tools_enabled": {"query": false}}"#));
        assert!(only(r#"{"tools_enabled": {"query": false, "diagnose": true}}"#));
        assert!(!only(r#"{"tools_enabled": {"diagnose": false}}"#));
        // It alone is a server that offers something.
        assert!(load(r#"{"tools_enabled": {"query": false, "list_tables": false, "describe_table": false, "diagnose": true}}"#).is_ok());
    }
}
