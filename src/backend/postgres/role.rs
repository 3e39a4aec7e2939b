//! The role statements run as: `connection.role` (switched to with `SET LOCAL
//! ROLE` in every transaction), what that role can do beyond reading (for
//! `pgmcp check` and the log), and the SQL `pgmcp check --suggest-role` prints
//! to create a least-privilege reader.
//!
//! The SQL here is pgmcp's own and runs as that role: every function and
//! operator is written with its schema (`pg_catalog.`), so look-alikes planted
//! in a schema on the search path are never called.

use serde::Deserialize;

use super::login::NewLogin;

/// `connection.role`, ready to be sent.
#[derive(Debug, Clone)]
pub struct SessionRole {
    pub name: String,
    /// `SET LOCAL ROLE "name"`: the switch ends with the transaction, and
    /// `DISCARD ALL` would reset it too, so no later exchange inherits it.
    pub set: String,
}

impl SessionRole {
    pub fn new(name: &str) -> SessionRole {
        SessionRole {
            name: name.to_owned(),
            set: format!("SET LOCAL ROLE {}", quote_ident(name)),
        }
    }
}

/// The role read-only mode runs queries as when the login can do more than
/// read in ways that reach outside the database and `connection.role` is not
/// set: PostgreSQL 14's predefined reader, which may `SELECT` every table,
/// view and sequence and do nothing else (no file, no program, no
/// replication slot, no writes).
pub const READER: &str = "pg_read_all_data";

/// The switch to [`READER`], sent where `connection.role`'s would be.
pub const SET_READER: &str = "SET LOCAL ROLE pg_read_all_data";

/// One `json` value: what the login (`session_user`) can do that reaches
/// outside the database, read as the login when a connection opens in
/// read-only mode: the server-wide roles whose members read or write files
/// as the server's operating-system user or run programs as it
/// (`pg_execute_server_program`, `pg_read_server_files`,
/// `pg_write_server_files`), superuser roles and `REPLICATION`. Membership is any: a role the login may `SET ROLE` to is
/// as good as its own rights, since PostgreSQL decides `SET ROLE` by the
/// login's memberships, whoever `current_user` is.
///
/// Superuser roles and `REPLICATION` count: a role with `REPLICATION` creates
/// replication slots even inside a `READ ONLY` transaction (each keeps the
/// server's WAL until the disk fills) and reads every table's changes through
/// logical decoding, whatever its grants. `CREATEROLE`, `CREATEDB`, owning
/// tables and `CREATE` on a schema do not: everything they allow is a write
/// the `READ ONLY` transaction refuses. `pg_signal_backend` does not either
/// (it ends other sessions, inside the server; the guard refuses the
/// functions that do it): `check` still warns about all of these.
pub const LOGIN_POWERS: &str = r#"
SELECT pg_catalog.json_build_object(
    'login', session_user,
    'superuser', (
        SELECT pg_catalog.json_agg(s.rolname ORDER BY s.rolname)
        FROM pg_catalog.pg_roles s
        WHERE s.rolsuper AND pg_catalog.pg_has_role(session_user, s.oid, 'MEMBER')),
    'replication', (
        SELECT pg_catalog.json_agg(s.rolname ORDER BY s.rolname)
        FROM pg_catalog.pg_roles s
        WHERE s.rolreplication AND pg_catalog.pg_has_role(session_user, s.oid, 'MEMBER')),
    'server_roles', (
        SELECT pg_catalog.json_agg(s.rolname ORDER BY s.rolname)
        FROM pg_catalog.pg_roles s
        WHERE s.rolname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_execute_server_program', 'pg_read_server_files',
                                                          'pg_write_server_files']::pg_catalog.name[])
          AND pg_catalog.pg_has_role(session_user, s.oid, 'MEMBER'))
)
"#;

/// The reply to [`LOGIN_POWERS`]: why read-only queries of a connection run
/// as [`READER`] rather than the login. Each list holds roles the login is
/// (the login itself included) or may become.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct LoginPowers {
    pub login: String,
    /// Superuser roles.
    pub superuser: Option<Vec<String>>,
    /// Roles with `REPLICATION`.
    pub replication: Option<Vec<String>>,
    /// Roles that reach outside the database (`pg_execute_server_program`,
    /// `pg_read_server_files`, `pg_write_server_files`).
    pub server_roles: Option<Vec<String>>,
}

impl LoginPowers {
    /// A login the server said is a superuser (`is_superuser` at startup):
    /// nothing more needs asking.
    pub fn superuser(login: &str) -> LoginPowers {
        LoginPowers {
            login: login.to_owned(),
            superuser: Some(vec![login.to_owned()]),
            ..LoginPowers::default()
        }
    }

    /// Whether the login can do anything that reaches outside the database.
    pub fn any(&self) -> bool {
        [&self.superuser, &self.replication, &self.server_roles]
            .iter()
            .any(|list| list.as_ref().is_some_and(|l| !l.is_empty()))
    }

    /// Why queries run as [`READER`], for `check` and errors: `the login
    /// "app" is a member of pg_execute_server_program`.
    pub fn reason(&self) -> String {
        let login = &self.login;
        let mut what = Vec::new();
        let list = |l: &Option<Vec<String>>| l.iter().flatten().cloned().collect::<Vec<_>>();
        let (supers, repl, servers) = (list(&self.superuser), list(&self.replication), list(&self.server_roles));
        let of_others = |roles: &[String]| {
            roles
                .iter()
                .filter(|r| *r != login)
                .map(|r| quote_ident(r))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if supers.contains(login) {
            what.push("is a superuser".to_owned());
        } else if !supers.is_empty() {
            what.push(format!("may become superuser role {}", of_others(&supers)));
        }
        // A superuser can do everything: its other powers go without saying.
        if what.is_empty() {
            if !servers.is_empty() {
                what.push(format!("is a member of {}", servers.join(", ")));
            }
            if repl.contains(login) {
                what.push("has REPLICATION".to_owned());
            } else if !repl.is_empty() {
                what.push(format!("may become role {}, which has REPLICATION", of_others(&repl)));
            }
        }
        format!("the login {} {}", quote_ident(login), what.join(" and "))
    }
}

/// What to do when the switch to [`READER`] is refused: `code` 42501 (the
/// login may not switch to it), else it does not exist (before PostgreSQL
/// 14). Either way nothing runs until the setup changes.
pub fn reader_advice(code: &str, powers: &LoginPowers) -> String {
    let why = format!(
        "{}, so read-only mode runs queries as {READER} rather than with the login's rights",
        powers.reason()
    );
    let choices = "set connection.role to a role that only reads (`pgmcp check --suggest-role` prints the SQL that \
                   creates one), or set connection.read_only_as_login to true to run them as the login, with all its rights";
    if code == "42501" {
        format!(
            "{why}, and the login may not switch to it: as a superuser run GRANT {READER} TO {}, or {choices}",
            quote_ident(&powers.login)
        )
    } else {
        format!("{why}, and this server has no {READER} (PostgreSQL 14 added it): {choices}")
    }
}

pub use crate::identifier::quoted as quote_ident;

/// A setup statement's error that says the session could not switch to the
/// role: it does not exist (22023, from the `role` setting's check) or the
/// login may not `SET ROLE` to it (42501).
pub fn is_role_refusal(code: &str, message: &str) -> bool {
    matches!(code, "22023" | "42501" | "42704") && message.contains("role")
}

/// What to do about a refused `SET ROLE`, for a person reading the error.
pub fn refusal_advice(code: &str, role: &str, login: &str) -> String {
    if code == "42501" {
        format!(
            "the login \"{login}\" may not switch to it: as a superuser (or a role with ADMIN OPTION on it) run GRANT {} TO {}; or change connection.role",
            quote_ident(role),
            quote_ident(login)
        )
    } else {
        format!(
            "create it (`pgmcp check --suggest-role` prints the SQL) and GRANT it TO {}, or fix connection.role: the name is used exactly as written, case included",
            quote_ident(login)
        )
    }
}

/// One `json` value: who the session runs as and what that role can do
/// beyond reading. Membership is direct or through other roles; a superuser
/// is a member of everything.
pub const PRIVILEGES: &str = r#"
SELECT pg_catalog.json_build_object(
    'role', current_user,
    'login', session_user,
    'superuser', r.rolsuper,
    'createrole', r.rolcreaterole,
    'bypassrls', r.rolbypassrls,
    'owned_tables', (
        SELECT pg_catalog.count(*)
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
        WHERE c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'f']::pg_catalog."char"[])
          AND n.nspname OPERATOR(pg_catalog.!~) '^(pg_|information_schema$)'
          AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')),
    'owned_examples', (
        SELECT pg_catalog.json_agg(t.name)
        FROM (SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||)
                     pg_catalog.quote_ident(c.relname) AS name
              FROM pg_catalog.pg_class c
              JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
              WHERE c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'f']::pg_catalog."char"[])
                AND n.nspname OPERATOR(pg_catalog.!~) '^(pg_|information_schema$)'
                AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')
              ORDER BY n.nspname, c.relname
              LIMIT 3) t),
    'create_schemas', (
        SELECT pg_catalog.json_agg(pg_catalog.quote_ident(n.nspname) ORDER BY n.nspname)
        FROM pg_catalog.pg_namespace n
        WHERE n.nspname OPERATOR(pg_catalog.!~) '^(pg_|information_schema$)'
          AND pg_catalog.has_schema_privilege(current_user, n.oid, 'CREATE')),
    'create_database', pg_catalog.has_database_privilege(current_user, pg_catalog.current_database(), 'CREATE'),
    'server_roles', (
        SELECT pg_catalog.json_agg(s.rolname ORDER BY s.rolname)
        FROM pg_catalog.pg_roles s
        WHERE s.rolname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_read_server_files', 'pg_write_server_files',
                                                          'pg_execute_server_program', 'pg_signal_backend']::pg_catalog.name[])
          AND pg_catalog.pg_has_role(current_user, s.oid, 'MEMBER'))
)
FROM pg_catalog.pg_roles r
WHERE r.rolname OPERATOR(pg_catalog.=) current_user
"#;

/// The reply to [`PRIVILEGES`].
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Privileges {
    /// `current_user`: the role statements run as.
    pub role: String,
    /// `session_user`: the role pgmcp logged in as.
    pub login: String,
    pub superuser: bool,
    pub createrole: bool,
    pub bypassrls: bool,
    pub owned_tables: u64,
    pub owned_examples: Option<Vec<String>>,
    pub create_schemas: Option<Vec<String>>,
    pub create_database: bool,
    pub server_roles: Option<Vec<String>>,
}

impl Privileges {
    /// What the role can do beyond reading, one sentence each; empty for a
    /// least-privilege reader.
    pub fn findings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.superuser {
            out.push(
                "it is a superuser: no privilege check applies to it, and it can read and write server files and run programs on the server"
                    .to_owned(),
            );
        }
        for role in self.server_roles.iter().flatten() {
            // A superuser is a member of every role: said once above.
            if self.superuser {
                break;
            }
            let what = match role.as_str() {
                "pg_read_server_files" => "can read any file the server can (COPY FROM a file, pg_read_file)",
                "pg_write_server_files" => "can write files on the server (COPY TO a file)",
                "pg_execute_server_program" => "can run programs on the server (COPY ... PROGRAM)",
                "pg_signal_backend" => "can cancel and terminate other sessions",
                _ => "has a server-wide privilege",
            };
            out.push(format!("it is a member of {role}: it {what}"));
        }
        if self.owned_tables > 0 && !self.superuser {
            let examples = self.owned_examples.as_deref().unwrap_or_default().join(", ");
            let more = if self.owned_tables > 3 { ", ..." } else { "" };
            out.push(format!(
                "it owns {} table(s) or view(s) ({examples}{more}): an owner can change, empty or drop them and grant access to others",
                self.owned_tables
            ));
        }
        if let Some(schemas) = self.create_schemas.as_deref().filter(|s| !s.is_empty())
            && !self.superuser
        {
            out.push(format!(
                "it may create objects in schema(s) {}: a function or view planted there can run later as whoever calls it",
                schemas.join(", ")
            ));
        }
        if self.create_database && !self.superuser {
            out.push("it may create schemas in this database".to_owned());
        }
        if self.createrole && !self.superuser {
            out.push(
                "it has CREATEROLE: it can create roles and grant itself the membership of other roles".to_owned(),
            );
        }
        if self.bypassrls && !self.superuser {
            out.push("it has BYPASSRLS: row-level security policies do not apply to it".to_owned());
        }
        out
    }
}

/// One `json` value with what [`suggest_role_sql`] fills in: the database,
/// the login, the server version, the non-system schemas and who owns tables
/// in them.
pub const SUGGEST_FACTS: &str = r#"
SELECT pg_catalog.json_build_object(
    'database', pg_catalog.current_database(),
    'login', session_user,
    'version_num', pg_catalog.current_setting('server_version_num'),
    'schemas', (
        SELECT pg_catalog.json_agg(n.nspname ORDER BY n.nspname)
        FROM pg_catalog.pg_namespace n
        WHERE n.nspname OPERATOR(pg_catalog.!~) '^(pg_|information_schema$)'),
    'owners', (
        SELECT pg_catalog.json_agg(o.rolname ORDER BY o.rolname)
        FROM pg_catalog.pg_roles o
        WHERE o.oid OPERATOR(pg_catalog.=) ANY (
            SELECT c.relowner
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
            WHERE c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'f']::pg_catalog."char"[])
              AND n.nspname OPERATOR(pg_catalog.!~) '^(pg_|information_schema$)'))
)
"#;

/// The reply to [`SUGGEST_FACTS`].
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SuggestFacts {
    pub database: String,
    pub login: String,
    pub version_num: String,
    pub schemas: Option<Vec<String>>,
    /// Roles owning tables in those schemas: future tables are created by
    /// them, so default privileges are set for each.
    pub owners: Option<Vec<String>>,
}

/// `name` as an identifier for the SQL `--suggest-role` prints, where a
/// person reads it and psql runs it: quoted as usual, or, when it holds a
/// character that would end a `--` comment (`\n`, `\r`) or hide what follows
/// from the person reading (any other control character, a line or
/// paragraph separator, a bidirectional override), as PostgreSQL's
/// `U&"..."` form with those characters written as `\XXXX` escapes. Either
/// is the same identifier to the server, so it serves statements and
/// comments alike, and the printed text only ever breaks lines where pgmcp
/// does: a name can neither end a comment early nor split a statement.
pub fn sql_name(name: &str) -> String {
    if !name.chars().any(hidden) {
        return quote_ident(name);
    }
    let mut out = String::from("U&\"");
    for c in name.chars() {
        match c {
            '"' => out.push_str("\"\""),
            // The escape character of the U& form: itself when doubled.
            '\\' => out.push_str("\\\\"),
            c if hidden(c) => out.push_str(&unicode_escape(c)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A character a name must not show raw in printed SQL: it ends a line (or
/// looks like it does), or it is invisible and changes how the text around
/// it reads (Trojan Source).
pub(crate) fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `c` as a `U&` escape: `\000A`, or `\+01F600` beyond 16 bits.
fn unicode_escape(c: char) -> String {
    let code = u32::from(c);
    if code <= 0xFFFF {
        format!("\\{code:04X}")
    } else {
        format!("\\+{code:06X}")
    }
}

/// SQL that creates `role` as a reader of `facts`' database and lets the login
/// switch to it, then the config snippet as a comment; with `new_login`,
/// creates that login as a member of `role` instead. Without facts (no connection), a
/// template with `<placeholders>`. `psql` is the command that runs the
/// file against the checked server, already shell-quoted, for the comment
/// that says how to run it.
///
/// Every name goes through [`sql_name`], in statements and comments alike:
/// the printed lines are exactly the ones written here, whatever the
/// database's names hold.
pub fn suggest_role_sql(
    role: &str,
    facts: Option<&SuggestFacts>,
    new_login: Option<&NewLogin>,
    psql: Option<&str>,
) -> String {
    let r = sql_name(role);
    let (database, login, schemas, owners, old_public) = match facts {
        Some(f) => {
            let schemas: Vec<String> = f.schemas.iter().flatten().map(|s| sql_name(s)).collect();
            let owners: Vec<String> = f.owners.iter().flatten().map(|s| sql_name(s)).collect();
            // Before PostgreSQL 15 every role may create objects in schema public.
            let old_public = f.version_num.parse::<u32>().is_ok_and(|v| v < 150_000);
            (sql_name(&f.database), sql_name(&f.login), schemas, owners, old_public)
        }
        None => (
            "<database>".to_owned(),
            "<login>".to_owned(),
            vec!["<schema>".to_owned()],
            vec!["<table owner>".to_owned()],
            false,
        ),
    };
    let mut sql = String::new();
    let mut line = |text: &str| {
        sql.push_str(text);
        sql.push('\n');
    };
    let and_login = new_login.map_or_else(String::new, |l| {
        format!(", and the login {} the agent signs in as", sql_name(&l.name))
    });
    // Creating a login takes CREATEROLE, which an owner of tables may lack.
    let who = if new_login.is_some() {
        "a superuser"
    } else {
        "a superuser (or the owner of the schemas and tables)"
    };
    match (facts, psql) {
        (Some(_), Some(psql)) => line(&format!(
            "-- A least-privilege reader role for pgmcp in database {database}{and_login}.\n\
             -- Run it as {who}, connected to that database, e.g. {psql}"
        )),
        (Some(_), None) => line(&format!(
            "-- A least-privilege reader role for pgmcp in database {database}{and_login}.\n\
             -- Run it as {who}, connected to that database."
        )),
        (None, _) => line(&format!(
            "-- pgmcp could not connect, so this is a template: replace every <placeholder>.\n\
             -- A least-privilege reader role for pgmcp{and_login}. Run it as {who}."
        )),
    }
    line("BEGIN;");
    if new_login.is_some() {
        line("-- NOLOGIN: nobody signs in as it; its members (the login below) have its rights.");
    } else {
        line("-- NOLOGIN: nobody signs in as it; the login switches to it (connection.role).");
    }
    line(&format!("CREATE ROLE {r} NOLOGIN;"));
    line(&format!("GRANT CONNECT ON DATABASE {database} TO {r};"));
    if schemas.is_empty() {
        line("-- The database has no schemas outside the system ones: nothing to grant on yet.");
    } else {
        let list = schemas.join(", ");
        line(&format!("GRANT USAGE ON SCHEMA {list} TO {r};"));
        line("-- Tables, views, materialized views and foreign tables that exist now.");
        line(&format!("GRANT SELECT ON ALL TABLES IN SCHEMA {list} TO {r};"));
        if owners.is_empty() {
            line("-- Tables created later: run, as the role that will create them,");
            line(&format!(
                "--   ALTER DEFAULT PRIVILEGES IN SCHEMA {list} GRANT SELECT ON TABLES TO {r};"
            ));
        } else {
            line("-- Tables created later by the roles that own tables now.");
            for owner in &owners {
                line(&format!(
                    "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {list} GRANT SELECT ON TABLES TO {r};"
                ));
            }
        }
    }
    if old_public {
        line("-- Before PostgreSQL 15 every role, this one included, may create objects in schema public.");
        line("-- If nothing relies on that, take it away from everyone:");
        line("--   REVOKE CREATE ON SCHEMA public FROM PUBLIC;");
    }
    if let Some(new) = new_login {
        line("-- The login the agent signs in as: a member of the reader, with no rights of its own. Its password");
        line("-- is stored as a SCRAM-SHA-256 verifier, not as the password: pgmcp printed the password once, on");
        line("-- stderr, in the password file line of its next steps.");
        line(&new.create_sql(role));
        line("COMMIT;");
        line("-- Then follow the steps pgmcp printed on stderr: pg_hba.conf, the password file, `pgmcp check`.");
        return sql;
    }
    line("-- The login pgmcp connects as may switch to the role.");
    line(&format!("GRANT {r} TO {login};"));
    line("COMMIT;");
    // serde_json escapes \n and \r but leaves U+2028 and the like as they
    // are: written as JSON escapes too, the comment stays one line.
    let snippet = serde_json::json!({ "connection": { "role": role } })
        .to_string()
        .chars()
        .map(|c| {
            if hidden(c) {
                format!("\\u{:04X}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect::<String>();
    line("-- Then tell pgmcp to run every statement as the role, in its config file:");
    line(&format!("--   {snippet}"));
    line("-- and run `pgmcp check`: it should show the role and no WARNING.");
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_exactly() {
        let cases = [
            ("reader", "\"reader\""),
            ("Reader", "\"Reader\""),
            ("we\"ird", "\"we\"\"ird\""),
            ("two words", "\"two words\""),
            ("\"", "\"\"\"\""),
        ];
        for (name, quoted) in cases {
            assert_eq!(quote_ident(name), quoted);
        }
        assert_eq!(SessionRole::new("Mixed\"Q").set, "SET LOCAL ROLE \"Mixed\"\"Q\"");
    }

    #[test]
    fn role_refusals() {
        assert!(is_role_refusal("42501", "permission denied to set role \"r\""));
        assert!(is_role_refusal("22023", "role \"r\" does not exist"));
        assert!(!is_role_refusal("42501", "permission denied for table t"));
        assert!(!is_role_refusal("25P02", "current transaction is aborted"));
        assert_eq!(
            refusal_advice("42501", "rdr", "app"),
            "the login \"app\" may not switch to it: as a superuser (or a role with ADMIN OPTION on it) run GRANT \"rdr\" TO \"app\"; or change connection.role"
        );
        assert!(refusal_advice("22023", "rdr", "app").starts_with("create it (`pgmcp check --suggest-role`"));
    }

    #[test]
    fn why_a_login_runs_as_the_reader() {
        let login = |superuser: &[&str], replication: &[&str], server_roles: &[&str]| {
            let list = |l: &[&str]| (!l.is_empty()).then(|| l.iter().map(|r| r.to_string()).collect());
            LoginPowers {
                login: "app".into(),
                superuser: list(superuser),
                replication: list(replication),
                server_roles: list(server_roles),
            }
        };
        let cases = [
            (login(&[], &[], &[]), None),
            (LoginPowers::superuser("app"), Some("the login \"app\" is a superuser")),
            // A superuser can do everything: the rest goes without saying.
            (
                login(&["app"], &["app"], &["pg_execute_server_program"]),
                Some("the login \"app\" is a superuser"),
            ),
            (
                login(&["Admin"], &[], &[]),
                Some("the login \"app\" may become superuser role \"Admin\""),
            ),
            (login(&[], &["app"], &[]), Some("the login \"app\" has REPLICATION")),
            (
                login(&[], &["repl"], &["pg_read_server_files", "pg_write_server_files"]),
                Some(
                    "the login \"app\" is a member of pg_read_server_files, pg_write_server_files and may become role \"repl\", which has REPLICATION",
                ),
            ),
            (
                login(&[], &[], &["pg_execute_server_program"]),
                Some("the login \"app\" is a member of pg_execute_server_program"),
            ),
        ];
        for (powers, reason) in cases {
            assert_eq!(powers.any(), reason.is_some(), "{powers:?}");
            if let Some(reason) = reason {
                assert_eq!(powers.reason(), reason);
            }
        }
        let powers = LoginPowers::superuser("we\"ird");
        assert_eq!(
            reader_advice("42501", &powers),
            "the login \"we\"\"ird\" is a superuser, so read-only mode runs queries as pg_read_all_data rather than with the login's rights, and the login may not switch to it: as a superuser run GRANT pg_read_all_data TO \"we\"\"ird\", or set connection.role to a role that only reads (`pgmcp check --suggest-role` prints the SQL that creates one), or set connection.read_only_as_login to true to run them as the login, with all its rights"
        );
        assert!(reader_advice("22023", &powers).contains(
            "and this server has no pg_read_all_data (PostgreSQL 14 added it): set connection.role to a role that only reads"
        ));
    }

    #[test]
    fn findings_say_what_the_role_can_do() {
        let reader = Privileges {
            role: "rdr".into(),
            login: "app".into(),
            ..Privileges::default()
        };
        assert!(reader.findings().is_empty());

        let superuser = Privileges {
            superuser: true,
            owned_tables: 4,
            create_database: true,
            server_roles: Some(vec!["pg_read_server_files".into(), "pg_signal_backend".into()]),
            ..reader.clone()
        };
        // A superuser can do everything: one line says so, not six.
        assert_eq!(superuser.findings().len(), 1);
        assert!(superuser.findings()[0].starts_with("it is a superuser"));

        let owner = Privileges {
            owned_tables: 4,
            owned_examples: Some(vec!["public.a".into(), "public.b".into(), "public.c".into()]),
            create_schemas: Some(vec!["public".into()]),
            server_roles: Some(vec!["pg_execute_server_program".into()]),
            createrole: true,
            ..reader.clone()
        };
        assert_eq!(
            owner.findings(),
            [
                "it is a member of pg_execute_server_program: it can run programs on the server (COPY ... PROGRAM)",
                "it owns 4 table(s) or view(s) (public.a, public.b, public.c, ...): an owner can change, empty or drop them and grant access to others",
                "it may create objects in schema(s) public: a function or view planted there can run later as whoever calls it",
                "it has CREATEROLE: it can create roles and grant itself the membership of other roles",
            ]
        );
    }

    #[test]
    fn suggested_sql_for_a_database() {
        let facts = SuggestFacts {
            database: "shop db".into(),
            login: "App".into(),
            version_num: "150008".into(),
            schemas: Some(vec!["public".into(), "Sales".into()]),
            owners: Some(vec!["owner\"x".into()]),
        };
        let sql = suggest_role_sql("pgmcp_reader", Some(&facts), None, None);
        let statements: Vec<&str> = sql.lines().filter(|l| !l.starts_with("--")).collect();
        assert_eq!(
            statements,
            [
                "BEGIN;",
                "CREATE ROLE \"pgmcp_reader\" NOLOGIN;",
                "GRANT CONNECT ON DATABASE \"shop db\" TO \"pgmcp_reader\";",
                "GRANT USAGE ON SCHEMA \"public\", \"Sales\" TO \"pgmcp_reader\";",
                "GRANT SELECT ON ALL TABLES IN SCHEMA \"public\", \"Sales\" TO \"pgmcp_reader\";",
                "ALTER DEFAULT PRIVILEGES FOR ROLE \"owner\"\"x\" IN SCHEMA \"public\", \"Sales\" GRANT SELECT ON TABLES TO \"pgmcp_reader\";",
                "GRANT \"pgmcp_reader\" TO \"App\";",
                "COMMIT;",
            ]
        );
        assert!(sql.contains(r#"--   {"connection":{"role":"pgmcp_reader"}}"#), "{sql}");
        assert!(!sql.contains("REVOKE"), "PostgreSQL 15 needs no REVOKE on public");

        let old = SuggestFacts {
            version_num: "140011".into(),
            ..facts
        };
        assert!(
            suggest_role_sql("r", Some(&old), None, None).contains("--   REVOKE CREATE ON SCHEMA public FROM PUBLIC;")
        );

        let template = suggest_role_sql("we\"ird", None, None, None);
        assert!(template.starts_with("-- pgmcp could not connect, so this is a template"));
        assert!(template.contains("GRANT CONNECT ON DATABASE <database> TO \"we\"\"ird\";"));
        assert!(template.contains("GRANT \"we\"\"ird\" TO <login>;"));
        assert!(template.contains(r#"{"connection":{"role":"we\"ird"}}"#), "{template}");
    }

    #[test]
    fn suggested_sql_with_a_login() {
        let facts = SuggestFacts {
            database: "shop".into(),
            login: "postgres".into(),
            version_num: "150008".into(),
            schemas: Some(vec!["public".into()]),
            owners: Some(vec!["postgres".into()]),
        };
        let login = NewLogin::with_password("agent_readonly", "Pw123".into());
        let psql = "psql -d postgresql://postgres@127.0.0.1:5432/shop -f reader.sql";
        let sql = suggest_role_sql("pgmcp_reader", Some(&facts), Some(&login), Some(psql));
        let statements: Vec<&str> = sql.lines().filter(|l| !l.starts_with("--")).collect();
        assert_eq!(statements.len(), 8, "{sql}");
        assert_eq!(statements[..2], ["BEGIN;", "CREATE ROLE \"pgmcp_reader\" NOLOGIN;"]);
        assert!(
            statements[6].starts_with("CREATE ROLE \"agent_readonly\" LOGIN PASSWORD 'SCRAM-SHA-256$4096:"),
            "{sql}"
        );
        assert!(statements[6].ends_with("' IN ROLE \"pgmcp_reader\";"), "{sql}");
        assert_eq!(statements[7], "COMMIT;");
        // The login is the member: the connected login is granted nothing,
        // and no connection.role is needed.
        assert!(!sql.contains("TO \"postgres\";"), "{sql}");
        assert!(!sql.contains("\"connection\""), "{sql}");
        assert!(!sql.contains("Pw123"), "{sql}");
        assert!(sql.starts_with(
            "-- A least-privilege reader role for pgmcp in database \"shop\", and the login \"agent_readonly\" the agent signs in as.\n\
             -- Run it as a superuser, connected to that database, e.g. psql -d postgresql://postgres@127.0.0.1:5432/shop -f reader.sql\n"
        ));
    }

    /// Names as printed SQL shows them: quoted as usual, or in the `U&`
    /// form when a character in them would break a line or hide text.
    #[test]
    fn printed_names_never_break_a_line() {
        let cases = [
            ("reader", r#""reader""#),
            ("we\"ird", r#""we""ird""#),
            // A backslash is only an escape in the U& form.
            (r"back\slash", r#""back\slash""#),
            ("é ü", "\"é ü\""),
            (
                "x\nALTER ROLE mallory SUPERUSER; --",
                r#"U&"x\000AALTER ROLE mallory SUPERUSER; --""#,
            ),
            ("a\rb", r#"U&"a\000Db""#),
            ("tab\there", r#"U&"tab\0009here""#),
            ("q\"\\\n", r#"U&"q""\\\000A""#),
            ("\u{7f}\u{85}\u{0}", r#"U&"\007F\0085\0000""#),
            ("line\u{2028}sep\u{2029}", r#"U&"line\2028sep\2029""#),
            ("\u{202E}txt.exe", r#"U&"\202Etxt.exe""#),
        ];
        for (name, shown) in cases {
            assert_eq!(sql_name(name), shown, "{name:?}");
            assert!(!shown.chars().any(hidden), "{shown:?}");
        }
    }

    /// The red team's names: every line printed is one pgmcp wrote, so the
    /// statements are exactly the intended ones and every comment stays one.
    #[test]
    fn hostile_names_print_only_the_intended_statements() {
        let facts = SuggestFacts {
            database: "evil\nDROP TABLE victim; --".into(),
            login: "app\r\nDROP TABLE t; --".into(),
            version_num: "140011".into(),
            schemas: Some(vec!["public".into(), "x\nALTER ROLE mallory SUPERUSER; --".into()]),
            owners: None,
        };
        let login = NewLogin::with_password("agent\nDROP TABLE victim; --", "Pw123".into());
        let psql = "psql -d 'postgresql://postgres@/evil%0ADROP?host=%2Ftmp' -f reader.sql";
        for new_login in [None, Some(&login)] {
            let sql = suggest_role_sql("rdr\u{2028}x", Some(&facts), new_login, Some(psql));
            assert!(!sql.chars().any(|c| c != '\n' && hidden(c)), "{sql}");
            let statements: Vec<&str> = sql.lines().filter(|l| !l.starts_with("--")).collect();
            let schemas = r#""public", U&"x\000AALTER ROLE mallory SUPERUSER; --""#;
            let mut expected = vec![
                "BEGIN;".to_owned(),
                r#"CREATE ROLE U&"rdr\2028x" NOLOGIN;"#.to_owned(),
                r#"GRANT CONNECT ON DATABASE U&"evil\000ADROP TABLE victim; --" TO U&"rdr\2028x";"#.to_owned(),
                format!(r#"GRANT USAGE ON SCHEMA {schemas} TO U&"rdr\2028x";"#),
                format!(r#"GRANT SELECT ON ALL TABLES IN SCHEMA {schemas} TO U&"rdr\2028x";"#),
            ];
            match new_login {
                Some(l) => expected.push(l.create_sql("rdr\u{2028}x")),
                None => expected.push(r#"GRANT U&"rdr\2028x" TO U&"app\000D\000ADROP TABLE t; --";"#.to_owned()),
            }
            expected.push("COMMIT;".to_owned());
            assert_eq!(statements, expected, "{sql}");
            // The names in comments are the same U& forms.
            assert!(
                sql.contains(&format!(
                    "--   ALTER DEFAULT PRIVILEGES IN SCHEMA {schemas} GRANT SELECT ON TABLES TO U&\"rdr\\2028x\";\n"
                )),
                "{sql}"
            );
            assert!(
                sql.starts_with(
                    "-- A least-privilege reader role for pgmcp in database U&\"evil\\000ADROP TABLE victim; --\""
                ),
                "{sql}"
            );
        }
        assert!(
            login
                .create_sql("r")
                .starts_with(r#"CREATE ROLE U&"agent\000ADROP TABLE victim; --" LOGIN"#)
        );
        // Without a connection, the template: the login's name is as safe.
        let template = suggest_role_sql("r", None, Some(&login), None);
        assert!(!template.chars().any(|c| c != '\n' && hidden(c)), "{template}");
        assert!(template.contains(r#"and the login U&"agent\000ADROP TABLE victim; --" the agent signs in as"#));
    }
}
