//! Leaving the role pgmcp switched to: `SET ROLE`, `SET SESSION
//! AUTHORIZATION` and their spellings, refused as role changes even when
//! `allow_set` lets other settings through. Apart because it tests one
//! rule's interplay with another (`allow_set`), row by row.

use super::{Case, run};

/// Leaving the role pgmcp switched to (`connection.role`) is a role change,
/// refused even when `allow_set` lets other settings through.
const ROLE_SWITCHES: &[Case] = &[
    (
        // Without allow_set it is refused as a setting first, as the corpus records.
        "SetRole",
        "SET ROLE postgres",
        "default",
        Some("SET statements are not allowed: SET role"),
    ),
    (
        "SetRoleAllowSet",
        "SET ROLE postgres",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetLocalRole",
        "SET LOCAL ROLE postgres",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetSessionRole",
        "SET SESSION ROLE postgres",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleNone",
        "SET ROLE NONE",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleTo",
        "SET role TO 'postgres'",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleDefault",
        "SET role TO DEFAULT",
        "allow_set",
        Some("SET role is not allowed"),
    ),
    (
        "SetRoleQuotedUpper",
        "SET \"ROLE\" = 'postgres'",
        "allow_set",
        Some("SET ROLE is not allowed"),
    ),
    (
        "ResetRole",
        "RESET ROLE",
        "allow_set",
        Some("RESET role is not allowed"),
    ),
    (
        "SetSessionAuthorization",
        "SET SESSION AUTHORIZATION postgres",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "SetSessionAuthorizationDefault",
        "SET SESSION AUTHORIZATION DEFAULT",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "SetLocalSessionAuthorization",
        "SET LOCAL SESSION AUTHORIZATION postgres",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "ResetSessionAuthorization",
        "RESET SESSION AUTHORIZATION",
        "allow_set",
        Some("RESET session_authorization is not allowed"),
    ),
    (
        "SetSessionAuthorizationByName",
        "SET session_authorization = 'postgres'",
        "allow_set",
        Some("SET session_authorization is not allowed"),
    ),
    (
        "RoleMessageNamesFlag",
        "SET ROLE postgres",
        "allow_set",
        Some(
            "SET role is not allowed: it switches the role queries run as, leaving the one pgmcp set (connection.role). Set protection.allow_role_changes to true to allow it",
        ),
    ),
    (
        "SetConfigRole",
        "SELECT set_config('role', 'postgres', true)",
        "allow_set",
        Some("function set_config() is not allowed"),
    ),
    // allow_role_changes opens it; allow_set still governs it as a setting.
    (
        "SetRoleAllowed",
        "SET ROLE postgres",
        "allow_set+allow_role_changes",
        None,
    ),
    ("ResetRoleAllowed", "RESET ROLE", "allow_set+allow_role_changes", None),
    (
        "SessionAuthorizationAllowed",
        "SET SESSION AUTHORIZATION postgres",
        "allow_set+allow_role_changes",
        None,
    ),
    (
        "SetRoleNeedsAllowSetToo",
        "SET ROLE postgres",
        "allow_role_changes",
        Some("SET statements are not allowed: SET role"),
    ),
    // Other settings are untouched by the role rule.
    ("SetOtherAllowed", "SET work_mem = '64MB'", "allow_set", None),
    (
        "SetOtherRefused",
        "SET work_mem = '64MB'",
        "default",
        Some("SET statements are not allowed"),
    ),
    ("ResetAllNotARoleChange", "RESET ALL", "allow_set", None),
];

#[test]
fn role_switches_need_allow_role_changes() {
    run(ROLE_SWITCHES);
}
