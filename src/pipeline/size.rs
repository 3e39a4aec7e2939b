//! The size check, the first stage of every call: the SQL's length and the
//! parameters' bytes within the limits, and the row cap a call gets. Pure.

use serde_json::Value;

use super::QueryInput;
use crate::error::{Error, InputError};

/// The size and limit checks that need nothing but the input. Returns the row
/// cap for this call: `limit` up to `max_rows`, else `default_limit`.
pub(super) fn check_input(
    input: &QueryInput,
    max_params_bytes: usize,
    max_sql_length: usize,
    max_rows: usize,
    default_limit: Option<usize>,
) -> Result<usize, Error> {
    check_length(&input.sql, max_sql_length, "")?;
    let params: usize = input.params.iter().map(param_bytes).sum();
    if params > max_params_bytes {
        return Err(InputError::ParamsTooLarge {
            bytes: params,
            max: max_params_bytes,
        }
        .into());
    }
    match input.limit {
        Some(0) => Err(InputError::ZeroLimit.into()),
        Some(limit) => Ok(limit.min(max_rows)),
        None => Ok(default_limit.unwrap_or(max_rows).min(max_rows)),
    }
}

/// The bytes a parameter's value takes: a string's, a number's digits.
pub(super) fn param_bytes(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::String(s) => s.len(),
        Value::Number(n) => n.to_string().len(),
        Value::Array(_) | Value::Object(_) => value.to_string().len(),
    }
}

/// `query.max_sql_length`, in characters; `how` says which text was measured.
pub(super) fn check_length(sql: &str, max_sql_length: usize, how: &'static str) -> Result<(), Error> {
    let length = sql.chars().count();
    if length > max_sql_length {
        return Err(InputError::SqlTooLong {
            how,
            length,
            max: max_sql_length,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_checks() {
        let input = |sql: &str, limit| QueryInput {
            database: None,
            sql: sql.into(),
            params: vec![],
            limit,
        };
        assert_eq!(
            check_input(&input("SELECT 1", None), 1000, 100, 500, None).unwrap(),
            500
        );
        assert_eq!(
            check_input(&input("SELECT 1", Some(20)), 1000, 100, 500, None).unwrap(),
            20
        );
        assert_eq!(
            check_input(&input("SELECT 1", Some(5000)), 1000, 100, 500, None).unwrap(),
            500
        );
        // default_limit applies without a limit; limit may go past it, up to max_rows.
        assert_eq!(
            check_input(&input("SELECT 1", None), 1000, 100, 1000, Some(100)).unwrap(),
            100
        );
        assert_eq!(
            check_input(&input("SELECT 1", Some(400)), 1000, 100, 1000, Some(100)).unwrap(),
            400
        );
        assert_eq!(
            check_input(&input("SELECT 1", Some(5000)), 1000, 100, 1000, Some(100)).unwrap(),
            1000
        );
        assert_eq!(
            check_input(&input("SELECT 1", Some(0)), 1000, 100, 500, None)
                .unwrap_err()
                .to_string(),
            "limit must be at least 1"
        );
        assert_eq!(
            check_input(&input("SELECT 'ééé'", None), 1000, 10, 500, None)
                .unwrap_err()
                .to_string(),
            "the query is 12 characters long, more than the 10 allowed (query.max_sql_length)"
        );
        // Parameters count by their bytes: strings' bytes, numbers' digits.
        let with_params = |params: Vec<Value>| QueryInput {
            params,
            ..input("SELECT $1", None)
        };
        // (params, max_params_bytes, refused)
        let cases = [
            (vec![Value::from("é".repeat(500))], 1000, false),
            (vec![Value::from("é".repeat(501))], 1000, true),
            (
                vec![Value::from("x".repeat(600)), Value::from("y".repeat(401))],
                1000,
                true,
            ),
            (vec![Value::from(123456789)], 9, false),
            (vec![Value::from(1234567890)], 9, true),
        ];
        for (params, max, refused) in cases {
            let result = check_input(&with_params(params.clone()), max, 100, 500, None);
            assert_eq!(result.is_err(), refused, "{params:?} within {max}");
            if let Err(e) = result {
                assert!(
                    e.to_string()
                        .ends_with(&format!("more than the {max} allowed (query.max_params_bytes)"))
                );
            }
        }
    }
}
