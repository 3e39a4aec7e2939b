//! `SET`, `RESET` and transaction statements: session settings, the way out
//! of the role pgmcp set, and, in read-only mode, what would make the
//! transaction writable. Apart because settings outlive the statement, and
//! the read-only checks here also run for `ALTER SYSTEM`'s, `ALTER ROLE`'s
//! and `ALTER DATABASE`'s `SET` (`check_read_only_set`).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::text;
use crate::guard::{Finding, Judge, Rule, Violation};

/// Does a list of `DefElem` options set `transaction_read_only` to false
/// (`READ WRITE`)? The value is an `A_Const` integer; 0 is omitted in JSON.
fn sets_read_write(options: Option<&Value>) -> bool {
    let Some(Value::Array(options)) = options else {
        return false;
    };
    options.iter().any(|opt| {
        let Some(def) = opt.get("DefElem") else { return false };
        if def.get("defname").and_then(Value::as_str) != Some("transaction_read_only") {
            return false;
        }
        let constant = def.get("arg").and_then(|a| a.get("A_Const"));
        let ival = constant
            .and_then(|c| c.get("ival"))
            .map(|i| i.get("ival").and_then(Value::as_i64).unwrap_or(0));
        let bval = constant
            .and_then(|c| c.get("boolval"))
            .map(|b| b.get("boolval").and_then(Value::as_bool).unwrap_or(false));
        ival == Some(0) || bval == Some(false)
    })
}

fn is_read_only_setting(name: &str) -> bool {
    name.eq_ignore_ascii_case("default_transaction_read_only") || name.eq_ignore_ascii_case("transaction_read_only")
}

/// Why a read-write transaction is refused in read-only mode, whether
/// `BEGIN` or `SET` asks for it.
const READ_WRITE_WHY: &str = "cannot start a read-write transaction";

/// A `VariableSetStmt` that could change the transaction's read-only state:
/// a write in read-only mode. Judged before the switch for SET.
pub(in crate::guard) fn check_read_only_set(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    let name = text(fields, "name");
    let set_kind = text(fields, "kind");
    if set_kind == "VAR_RESET_ALL" {
        return judge.lift_read_only(|| "RESET ALL".to_owned(), "could disable read-only transaction setting");
    }
    if is_read_only_setting(name) {
        let verb = if set_kind == "VAR_RESET" { "RESET" } else { "SET" };
        return judge.lift_read_only(
            || format!("{verb} {name}"),
            "cannot change transaction read-only setting",
        );
    }
    if set_kind == "VAR_SET_MULTI" && sets_read_write(fields.get("args")) {
        return judge.lift_read_only(|| format!("SET {name} READ WRITE"), READ_WRITE_WHY);
    }
    Ok(())
}

/// `SET`, `RESET`: a setting, and perhaps a way out of the role pgmcp set.
pub(super) fn variable_set(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    check_read_only_set(judge, fields)?;
    let name = text(fields, "name");
    let reset = text(fields, "kind");
    let what = match reset {
        "VAR_RESET_ALL" => Cow::Borrowed("RESET ALL is not allowed"),
        "VAR_RESET" => Cow::Owned(format!("RESET statements are not allowed: RESET {name}")),
        _ => Cow::Owned(format!("SET statements are not allowed: SET {name}")),
    };
    judge.decide(Finding::setting(what))?;
    // Allowing SET must not open this door: leaving the role set by
    // connection.role (or taking another identity) would undo the
    // least-privilege layer under the guard. GUC names are case-insensitive
    // (`SET "ROLE" = x` is `SET ROLE x`).
    if ["role", "session_authorization"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
    {
        let what = match reset {
            "VAR_RESET" => format!("RESET {name} is not allowed"),
            _ => format!("SET {name} is not allowed"),
        };
        judge.decide(Finding::new(
            Rule::RoleChanges,
            what,
            "it switches the role queries run as, leaving the one pgmcp set (connection.role)",
        ))?;
    }
    Ok(())
}

pub(super) fn transaction(judge: &Judge, fields: &Map<String, Value>) -> Result<(), Violation> {
    if matches!(
        text(fields, "kind"),
        "TRANS_STMT_PREPARE" | "TRANS_STMT_COMMIT_PREPARED" | "TRANS_STMT_ROLLBACK_PREPARED"
    ) {
        judge.decide(Finding::new(
            Rule::Prepare,
            "PREPARE TRANSACTION is not allowed",
            "a prepared transaction outlives the session and keeps its locks",
        ))?;
    }
    if sets_read_write(fields.get("options")) {
        judge.lift_read_only(|| "BEGIN READ WRITE".to_owned(), READ_WRITE_WHY)?;
    }
    Ok(())
}
