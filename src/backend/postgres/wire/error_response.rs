//! The server's `ErrorResponse`, read into the library's [`DbError`]: its
//! SQLSTATE, severity, message, detail, hint and position. Apart from the
//! phases: every one of them may receive one, and reads it the same way.

use std::io;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend;

use crate::error::{DbError, ErrorCode};

/// A server's `ErrorResponse` as a [`DbError`] whose code is the SQLSTATE.
/// The severity is the untranslated `V` field when the server sends one
/// (9.6 and later), else the `S` field in the server's language.
pub(super) fn db_error(body: &backend::ErrorResponseBody) -> io::Result<DbError> {
    let mut err = DbError::new(ErrorCode::SqlState(String::new()), String::new());
    err.severity.clear();
    let mut fields = body.fields();
    while let Some(field) = fields.next()? {
        let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'V' => err.severity = value,
            b'S' if err.severity.is_empty() => err.severity = value,
            b'C' => err.code = ErrorCode::SqlState(value),
            b'M' => err.message = value,
            b'D' => err.detail = Some(value),
            b'H' => err.hint = Some(value),
            b'P' => err.position = value.parse().ok(),
            _ => {}
        }
    }
    // Undefined table, undefined column.
    err.undefined_name = matches!(err.code.as_str(), "42P01" | "42703");
    Ok(err)
}
