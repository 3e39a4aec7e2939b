//! The config file's `connection` section, the backend's own:
//! [`RawConnection`] as a file spells it (serde, unknown fields refused), and
//! [`RawConnection::validate`] into [`ConnectionConfig`], what the backend
//! connects with. Config reads its section straight into this type and
//! reports what `validate` refuses with the file's name, so the section's
//! fields and rules are written here once. Apart from `settings.rs`: this is
//! what a person writes; those are what a connection is opened with.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::settings::SslMode;

/// Where to connect when `PGMCP_PG_CONNSTRING` is not set. Unset fields fall back
/// to the libpq environment variables (`PGHOST`, ...) and then libpq's defaults.
/// There is deliberately no password field: use `PGPASSWORD` or the connection string.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConnection {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub dbname: Option<String>,
    pub user: Option<String>,
    pub sslmode: Option<String>,
    pub application_name: Option<String>,
    pub connect_timeout_seconds: Option<u64>,
    /// PEM file of the CAs to trust, or `system`. See the README's TLS section.
    pub sslrootcert: Option<String>,
    /// Client certificate (PEM) and its key, for servers that ask for one.
    pub sslcert: Option<String>,
    pub sslkey: Option<String>,
    /// The password file to read instead of `~/.pgpass`.
    pub passfile: Option<String>,
    /// A role every statement runs as (`SET LOCAL ROLE` in each transaction),
    /// whoever the login is: give it only the rights the agent needs. The
    /// login must be a member of it (`GRANT role TO login`). PostgreSQL only;
    /// applies however the connection is given (`PGMCP_PG_CONNSTRING` too).
    pub role: Option<String>,
    /// Without `role`, read-only mode runs the queries of a login that can
    /// do more than read (a superuser, `REPLICATION`, a member of
    /// `pg_execute_server_program`, `pg_read_server_files` or
    /// `pg_write_server_files`) as `pg_read_all_data`. `true` runs them as
    /// the login, with all its rights.
    pub read_only_as_login: Option<bool>,
}

/// The config file's `connection` section, validated: where to connect when
/// no connection string is given. Unset fields fall back to the libpq
/// environment variables (`PGHOST`, ...) and then libpq's defaults. There is
/// deliberately no password: it comes from `PGPASSWORD`, the password file or
/// a connection string.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConnectionConfig {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub dbname: Option<String>,
    pub user: Option<String>,
    pub sslmode: Option<SslMode>,
    pub application_name: Option<String>,
    pub connect_timeout_seconds: Option<u64>,
    /// A PEM file of the CAs to trust, or `system`.
    pub sslrootcert: Option<String>,
    /// Client certificate (PEM) and its key, for servers that ask for one.
    pub sslcert: Option<String>,
    pub sslkey: Option<String>,
    /// The password file to read instead of `~/.pgpass`.
    pub passfile: Option<String>,
    /// A role every statement runs as (`SET LOCAL ROLE` in each transaction),
    /// whoever the login is. Applies however the connection is given.
    pub role: Option<String>,
    /// In read-only mode without `role`, run as the login even when it is a
    /// superuser (or can otherwise reach outside the database), instead of
    /// as `pg_read_all_data`.
    pub read_only_as_login: bool,
}

/// A field of the `connection` section that cannot be used: its dotted name
/// and what is wrong with it, which config reports with the file's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConnectionSettingError {
    /// The field, e.g. `connection.sslmode`.
    pub field: &'static str,
    pub message: String,
}

impl RawConnection {
    /// The section as PostgreSQL's backend takes it: `sslmode` read into an
    /// [`SslMode`], the files it names found in `dir`, the config file's
    /// directory (as its hooks are), never in whatever directory pgmcp was
    /// started in. `quoted` shows a text the person wrote in a message, as
    /// config shows every such text (what looks like a secret hidden).
    pub fn validate(
        self,
        dir: Option<&Path>,
        quoted: &dyn Fn(&str) -> String,
    ) -> Result<ConnectionConfig, ConnectionSettingError> {
        let fail = |field: &'static str, message: String| ConnectionSettingError { field, message };
        if let Some(port) = self.port
            && port == 0
        {
            return Err(fail("connection.port", "must be between 1 and 65535".into()));
        }
        let sslmode = match self.sslmode.as_deref() {
            None => None,
            Some(mode) => Some(SslMode::from_name(mode).ok_or_else(|| {
                let names = SslMode::NAMES.join(", ");
                fail(
                    "connection.sslmode",
                    format!("unknown sslmode {}: use {names}", quoted(mode)),
                )
            })?),
        };
        for (field, value) in [
            ("connection.sslrootcert", &self.sslrootcert),
            ("connection.sslcert", &self.sslcert),
            ("connection.sslkey", &self.sslkey),
            ("connection.passfile", &self.passfile),
        ] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return Err(fail(
                    field,
                    "must be a file path (leave the field out for the default)".into(),
                ));
            }
        }
        if let Some(problem) = self.role.as_deref().and_then(role_name_problem) {
            return Err(fail("connection.role", problem));
        }
        let read_only_as_login = self.read_only_as_login.unwrap_or(false);
        if read_only_as_login && self.role.is_some() {
            return Err(fail(
                "connection.read_only_as_login",
                "is true, but connection.role is set, and queries run as connection.role either way: remove one of them"
                    .into(),
            ));
        }
        let beside = |value: Option<String>| match (value, dir) {
            (Some(v), Some(dir)) if v != "system" && Path::new(&v).is_relative() => {
                Some(dir.join(&v).to_string_lossy().into_owned())
            }
            (value, _) => value,
        };
        Ok(ConnectionConfig {
            host: self.host,
            port: self.port,
            dbname: self.dbname,
            user: self.user,
            sslmode,
            application_name: self.application_name,
            connect_timeout_seconds: self.connect_timeout_seconds,
            sslrootcert: beside(self.sslrootcert),
            sslcert: beside(self.sslcert),
            sslkey: beside(self.sslkey),
            passfile: beside(self.passfile),
            role: self.role,
            read_only_as_login,
        })
    }
}

/// What is wrong with a role name, if anything. It is used exactly as
/// written (case and spaces kept, quoted as an identifier), so the checks are
/// only those PostgreSQL would otherwise fail on, or silently change.
fn role_name_problem(role: &str) -> Option<String> {
    if role.trim().is_empty() {
        Some("is empty: remove it to run as the login, or name a role".to_owned())
    } else if role.contains('\0') {
        Some("contains a NUL character".to_owned())
    } else if role.len() > 63 {
        // PostgreSQL would truncate it (with only a notice) and use another name.
        Some(format!(
            "is {} bytes long; PostgreSQL names are at most 63 bytes",
            role.len()
        ))
    } else {
        None
    }
}
