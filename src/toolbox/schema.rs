//! The JSON Schema of a curated tool's arguments, as `tools/list` shows
//! it: one property per parameter, in the order the tool lists them, with
//! its description, type, format, `enum` and `default`. Pure.

use serde_json::{Map, Value, json};

use super::{CuratedTool, ParamType, Scalar};

/// The input schema of `tool`.
pub fn input_schema(tool: &CuratedTool) -> Map<String, Value> {
    let mut properties = Map::new();
    for parameter in &tool.parameters {
        let mut property = match parameter.kind {
            ParamType::Scalar(scalar) => scalar_schema(scalar),
            ParamType::Array(scalar) => {
                let mut array = Map::new();
                array.insert("type".into(), json!("array"));
                array.insert("items".into(), Value::Object(scalar_schema(scalar)));
                array
            }
        };
        property.insert("description".into(), json!(parameter.description));
        if let Some(allowed) = &parameter.allowed {
            property.insert("enum".into(), Value::Array(allowed.clone()));
        }
        if let Some(default) = &parameter.default {
            property.insert("default".into(), default.clone());
        }
        properties.insert(parameter.name.clone(), Value::Object(property));
    }
    let required: Vec<Value> = tool
        .parameters
        .iter()
        .filter(|p| p.required)
        .map(|p| json!(p.name))
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

fn scalar_schema(scalar: Scalar) -> Map<String, Value> {
    let (kind, format) = match scalar {
        Scalar::Integer => ("integer", None),
        Scalar::Number => ("number", None),
        Scalar::String => ("string", None),
        Scalar::Boolean => ("boolean", None),
        Scalar::Date => ("string", Some("date")),
        Scalar::Timestamp => ("string", Some("date-time")),
    };
    let mut schema = Map::new();
    schema.insert("type".into(), json!(kind));
    if let Some(format) = format {
        schema.insert("format".into(), json!(format));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbox::Parameter;

    #[test]
    fn a_property_per_parameter() {
        let parameter = |name: &str, kind, required, default: Option<Value>| Parameter {
            name: name.into(),
            description: format!("the {name}"),
            kind,
            required,
            default,
            allowed: None,
        };
        let tool = CuratedTool {
            name: "t".into(),
            description: "d".into(),
            database: None,
            statement: "SELECT".into(),
            parameters: vec![
                parameter("id", ParamType::Scalar(Scalar::Integer), true, None),
                parameter(
                    "since",
                    ParamType::Scalar(Scalar::Date),
                    false,
                    Some(json!("2024-01-01")),
                ),
                parameter("ids", ParamType::Array(Scalar::Timestamp), false, None),
            ],
            read_only: None,
        };
        assert_eq!(
            Value::Object(input_schema(&tool)),
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "the id"},
                    "since": {"type": "string", "format": "date", "description": "the since", "default": "2024-01-01"},
                    "ids": {"type": "array", "items": {"type": "string", "format": "date-time"}, "description": "the ids"}
                },
                "required": ["id"],
                "additionalProperties": false
            })
        );
    }
}
