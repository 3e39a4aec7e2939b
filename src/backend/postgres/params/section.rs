//! The config file's `connection` section, validated: [`ConnectionConfig`],
//! where to connect when no connection string is given. Apart from
//! `settings.rs`: this is what a person writes; those are what a connection
//! is opened with.

use super::settings::SslMode;

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
