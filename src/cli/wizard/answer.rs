//! An answer as the person types it and reads it: [`read`] turns the
//! text into the value of its [`Kind`], or says in words why it is not
//! one; [`show`] writes a value back the same way, never with a password.
//! Apart because both are pure, and tested with tables of answers.

use serde_json::Value;

use super::database::database;
use super::questions::Kind;
use crate::config::mistake::{Expected, quoted};

/// An answer read as its kind, or why it is not one, in words (the caller
/// names the field).
pub(super) fn read(kind: Kind, text: &str) -> Result<Value, String> {
    let text = text.trim();
    match kind {
        Kind::Text => Ok(Value::String(text.to_owned())),
        Kind::Number { min, max } => {
            let expected = Expected::whole(min, max);
            match text.parse::<i128>() {
                Ok(n) if (i128::from(min)..=i128::from(max)).contains(&n) => Ok(Value::from(n as i64)),
                // Past what the file can hold, where no range is shown.
                Ok(_) if (min, max) == (i64::MIN, i64::MAX) => Err(format!("{} is too large", quoted(text))),
                _ => Err(format!("{} is not {expected}", quoted(text))),
            }
        }
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "yes" | "y" | "true" | "on" => Ok(Value::Bool(true)),
            "no" | "n" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("{} is not yes or no", quoted(text))),
        },
        Kind::Choice(names) if names.contains(&text) => Ok(Value::String(text.to_owned())),
        Kind::Choice(names) => Err(format!("{} is not one of {}", quoted(text), names.join(", "))),
        Kind::Words => Ok(Value::Array(
            text.split_whitespace().map(|w| Value::String(w.to_owned())).collect(),
        )),
        Kind::Database => database(text).map(Value::String),
    }
}

/// A value as the person answers it: text unquoted, yes or no for a switch.
/// Never a password: a database setting is shown without one (see
/// [`crate::backend::location::shown_setting`]), other text with an `@`
/// redacted, since the prompt may be read over a shoulder, or logged when
/// the wizard is driven by a pipe.
pub(super) fn show(kind: Kind, value: &Value) -> String {
    match (kind, value) {
        (Kind::Bool, Value::Bool(true)) => "yes".to_owned(),
        (Kind::Bool, Value::Bool(false)) => "no".to_owned(),
        (Kind::Database, Value::String(s)) => crate::backend::location::shown_setting(s),
        (_, Value::String(s)) => crate::backend::location::shown_path(s).into_owned(),
        (_, other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cli::wizard::questions::{LEVELS, PORT, UNSIGNED, WHOLE};

    /// Each kind of answer, and the words a mistake in it is refused with.
    #[test]
    fn answers_are_read_by_kind_in_words() {
        let cases: &[(Kind, &str, Result<Value, &str>)] = &[
            (PORT, "6543", Ok(json!(6543))),
            (PORT, "abc", Err("\"abc\" is not a whole number from 0 to 65535")),
            (PORT, "70000", Err("\"70000\" is not a whole number from 0 to 65535")),
            (PORT, "-1", Err("\"-1\" is not a whole number from 0 to 65535")),
            (UNSIGNED, "-5", Err("\"-5\" is not a whole number, 0 or more")),
            (WHOLE, "thirty", Err("\"thirty\" is not a whole number")),
            (WHOLE, "1.5", Err("\"1.5\" is not a whole number")),
            (WHOLE, " 30 ", Ok(json!(30))),
            (
                WHOLE,
                "99999999999999999999",
                Err("\"99999999999999999999\" is too large"),
            ),
            (Kind::Bool, "Yes", Ok(json!(true))),
            (Kind::Bool, "n", Ok(json!(false))),
            (Kind::Bool, "false", Ok(json!(false))),
            (Kind::Bool, "maybe", Err("\"maybe\" is not yes or no")),
            (Kind::Choice(LEVELS), "debug", Ok(json!("debug"))),
            (
                Kind::Choice(LEVELS),
                "loud",
                Err("\"loud\" is not one of error, warn, info, debug, trace"),
            ),
            (Kind::Words, "-v  --team x", Ok(json!(["-v", "--team", "x"]))),
            (Kind::Text, " shop ", Ok(json!("shop"))),
        ];
        for (kind, text, expected) in cases {
            assert_eq!(
                read(*kind, text),
                expected.clone().map_err(str::to_owned),
                "{kind:?} {text:?}"
            );
        }
    }
}
