//! Where and as whom to connect: resolved the way psql does it.
//!
//! Precedence, for each setting: `PGMCP_PG_CONNSTRING` (URL or `key=value` form),
//! else the config file's `connection` section, else the libpq environment
//! variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`,
//! `PGAPPNAME`, `PGCONNECT_TIMEOUT`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`,
//! `PGSSLKEY`, `PGPASSFILE`, `PGOPTIONS`, `PGTARGETSESSIONATTRS`), else libpq's
//! defaults. Several hosts (`host=a,b port=1,2`, or `postgresql://a:1,b:2/db`)
//! are tried in order, as libpq does. The password file itself is
//! read at connect time (see `passfile.rs`), as libpq does.
//! Pure: the environment comes in as a function, so every rule is table-tested.
//!
//! # Layout
//!
//! - `settings.rs`: the typed settings ([`Host`], [`SslMode`],
//!   [`SessionAttrs`], [`RootCert`], [`PasswordSource`]) and
//!   [`ConnectParams`], everything a connection is opened with.
//! - `section.rs`: the config file's `connection` section, the backend's own:
//!   [`RawConnection`] as written, validated into [`ConnectionConfig`].
//! - `connstring.rs`: reading one connection string, URL or `key=value` form.
//! - `resolution.rs`: [`resolve`]: a connection string or the config's
//!   section, then the libpq environment, then libpq's files and defaults.
//! - `password.rs`: [`split_password`]: a connection string with its password
//!   taken out ([`WithoutPassword`]).

mod connstring;
mod password;
mod resolution;
mod section;
mod settings;
#[cfg(test)]
mod tests;

pub use password::{WithoutPassword, split_password};
pub use resolution::{resolve, resolve_from};
pub use section::{ConnectionConfig, RawConnection};
pub use settings::{ConnectParams, Host, PasswordSource, RootCert, SessionAttrs, SslMode};

/// A connection string or setting that cannot be used. Never contains a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct ParamsError {
    /// Where the bad value came from, e.g. `PGMCP_PG_CONNSTRING` or `PGPORT`.
    pub source_name: String,
    pub message: String,
}

pub(super) fn err(source_name: &str, message: impl Into<String>) -> ParamsError {
    ParamsError {
        source_name: source_name.to_owned(),
        message: message.into(),
    }
}
