//! Why a connection attempt failed, said for the person who has to fix it:
//! what happened, then the likeliest cause, judged from what the server said
//! (its SQLSTATE and message) and from where the password was taken or
//! looked for, then what to do next. Never a password: only where it came
//! from. Pure: [`explain`] is tested with tables.

use std::io;
use std::path::PathBuf;

use super::hba;
use super::params::{Host, PasswordSource, SslMode};
use super::passfile::{self, Field, Ignored, Near};

/// Where a password was looked for, when none was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordSearch {
    /// There is no password file to read: no home directory, and neither
    /// `passfile` nor `PGPASSFILE` names one.
    NoFile,
    /// The password file is not there.
    Missing(PathBuf),
    /// The password file was not used (others may read it, it is not a file,
    /// it cannot be read).
    Ignored(Ignored),
    /// No line of the password file matches; `near`: the lines one field away.
    NoLine { path: PathBuf, near: Vec<Near> },
}

/// Who tried to connect where: what an explanation names.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    pub host: &'a Host,
    pub port: u16,
    pub user: &'a str,
    /// The database named; `None` when the user name stands in for it, as in libpq.
    pub dbname: Option<&'a str>,
    /// No user name was given: `user` is the operating system's.
    pub os_user: bool,
    pub sslmode: SslMode,
    /// Where a password is read from: `PGPASSWORD`, or a named database's
    /// own variable.
    pub password_variable: &'a str,
    /// The `databases` entry it is, whose settings the advice names (no
    /// `PG*` variable reaches one); `None`: the one database.
    pub named: Option<&'a str>,
}

impl Attempt<'_> {
    /// Where the user name goes, for advice that says to change it.
    fn user_settings(&self) -> String {
        match self.named {
            None => USER_SETTINGS.to_owned(),
            Some(n) => format!("user in databases.{n}.url, or databases.{n}.connection.user"),
        }
    }

    /// Where the database name goes.
    fn database_settings(&self) -> String {
        match self.named {
            None => DATABASE_SETTINGS.to_owned(),
            Some(n) => format!("dbname or /name in databases.{n}.url, or databases.{n}.connection.dbname"),
        }
    }

    /// Where the host and port go.
    fn host_settings(&self) -> String {
        match self.named {
            None => "the connection string, connection.host and connection.port, PGHOST, PGPORT".to_owned(),
            Some(n) => format!("databases.{n}.url, or databases.{n}.connection.host and .port"),
        }
    }

    /// Where a password file is named.
    fn passfile_setting(&self) -> String {
        match self.named {
            None => "PGPASSFILE".to_owned(),
            Some(n) => format!("passfile= in databases.{n}.url, or databases.{n}.connection.passfile"),
        }
    }

    /// A setting of the connection section, as the person finds it:
    /// `connection.role`, or `databases.NAME.connection.role`.
    fn section(&self, field: &str) -> String {
        match self.named {
            None => field.to_owned(),
            Some(n) => format!("databases.{n}.{field}"),
        }
    }

    fn target(&self) -> String {
        match self.host {
            Host::Tcp(h) if h.contains(':') => format!("[{h}]:{}", self.port),
            Host::Tcp(h) => format!("{h}:{}", self.port),
            Host::Unix(dir) => format!("{}/.s.PGSQL.{}", dir.display(), self.port),
        }
    }

    /// The host as a password file line names it.
    fn host_name(&self) -> String {
        match self.host {
            Host::Tcp(h) => h.clone(),
            Host::Unix(dir) => dir.display().to_string(),
        }
    }

    fn database(&self) -> &str {
        self.dbname.unwrap_or(self.user)
    }

    fn passfile_target(&self) -> passfile::Target<'_> {
        passfile::Target {
            host: self.host,
            port: self.port,
            dbname: self.database(),
            user: self.user,
        }
    }
}

/// What went wrong.
#[derive(Debug, Clone, Copy)]
pub enum Failure<'a> {
    /// The socket could not be opened.
    Socket(&'a io::Error),
    /// The server refused the session; `password`: the one it was sent, if any.
    Refused {
        code: &'a str,
        message: &'a str,
        password: Option<&'a PasswordSource>,
    },
    /// The server asked for a password (`asked`: the pg_hba.conf method)
    /// and none was found.
    NoPassword { asked: &'a str, search: &'a PasswordSearch },
}

/// Where the user name goes, for advice that says to change it.
const USER_SETTINGS: &str = "user in the connection string, connection.user, or PGUSER";
/// Where the database name goes.
const DATABASE_SETTINGS: &str = "dbname or /name in the connection string, connection.dbname, or PGDATABASE";
/// How to make the server read pg_hba.conf again.
const RELOAD: &str = "reloads the server (SELECT pg_reload_conf(); SHOW hba_file says where the file is)";

/// The failure as one text: `could not connect to <target>: <what
/// happened>; <likeliest cause>: <what to do>`.
pub fn explain(attempt: &Attempt<'_>, failure: &Failure<'_>) -> String {
    let target = attempt.target();
    match *failure {
        Failure::Socket(error) => format!("could not connect to {target}: {error}; {}", socket(attempt, error)),
        Failure::Refused {
            code,
            message,
            password,
        } => {
            let cause = refused(attempt, code, message, password);
            format!("could not connect to {target}: {message} (SQLSTATE {code}){cause}")
        }
        Failure::NoPassword { asked, search } => {
            format!(
                "could not connect to {target}: the server asks user \"{}\" for a password ({asked}), {}",
                attempt.user,
                no_password(attempt, search)
            )
        }
    }
}

fn socket(attempt: &Attempt<'_>, error: &io::Error) -> String {
    let port = attempt.port;
    match (attempt.host, error.kind()) {
        (Host::Tcp(_), io::ErrorKind::ConnectionRefused) => format!(
            "nothing accepts connections there: is PostgreSQL running on that host, and on port {port}? \
             Check the host and port ({}); \
             a server on another machine must also listen on its network address (listen_addresses)",
            attempt.host_settings()
        ),
        (Host::Tcp(_), io::ErrorKind::TimedOut) => {
            format!(
                "no answer from that host: check the host name, and that no firewall drops connections to port {port}"
            )
        }
        (Host::Tcp(_), _) => "check the host name".to_owned(),
        (Host::Unix(dir), io::ErrorKind::NotFound) => format!(
            "there is no server socket there: is PostgreSQL running on this machine, with its socket in {} and port {port}? \
             (its unix_socket_directories and port settings say where it listens; or connect over TCP: host=localhost)",
            dir.display()
        ),
        (Host::Unix(_), io::ErrorKind::ConnectionRefused) => {
            "the socket file is there but no server answers: PostgreSQL has stopped; start it".to_owned()
        }
        (Host::Unix(_), io::ErrorKind::PermissionDenied) => {
            "this user may not open the server's socket: connect over TCP (host=localhost) instead".to_owned()
        }
        (Host::Unix(dir), _) => format!(
            "is PostgreSQL running on this machine, with its socket in {}?",
            dir.display()
        ),
    }
}

/// `; <cause>: <what to do>` for a refusal, or nothing when the server's
/// words are all there is to say.
fn refused(attempt: &Attempt<'_>, code: &str, message: &str, password: Option<&PasswordSource>) -> String {
    let (user_settings, database_settings) = (attempt.user_settings(), attempt.database_settings());
    let user = attempt.user;
    let database = attempt.database();
    let os_user = if attempt.os_user {
        format!(
            " (none was given, so your operating-system user name \"{user}\" was used, as libpq does: {user_settings})"
        )
    } else {
        format!(" ({user_settings})")
    };
    match code {
        "28P01" => {
            let (sent, fix) = match password {
                Some(PasswordSource::ConnectionString(setting)) => {
                    let setting = match attempt.named {
                        Some(n) => format!("databases.{n}.url"),
                        None => (*setting).to_owned(),
                    };
                    (format!("the password in {setting}"), format!("correct it in {setting}"))
                }
                Some(PasswordSource::Environment(variable)) => (
                    format!("the password in {variable}"),
                    format!("correct {variable} (it is used before the password file)"),
                ),
                Some(PasswordSource::Passfile { path, line }) => (
                    format!("the password on line {line} of the password file {}", path.display()),
                    format!(
                        "correct that line (the first line matching {} is the one used)",
                        passfile::key(attempt.passfile_target())
                    ),
                ),
                Some(PasswordSource::Prompt) => ("the password typed".to_owned(), "type it again".to_owned()),
                None => ("the password".to_owned(), "correct it".to_owned()),
            };
            format!(
                "; {sent} is not the password of role \"{user}\", or there is no role \"{user}\" (with password \
                 authentication the server does not say which): {fix}, or check the user name{os_user}"
            )
        }
        "28000" if message.starts_with("role \"") && message.ends_with("\" does not exist") => {
            let why = if attempt.os_user {
                format!(
                    "no user name was given, so your operating-system user name \"{user}\" was used, as libpq does: \
                     name the login ({user_settings})"
                )
            } else {
                format!("the user name is wrong, or the login was not created yet: check it ({user_settings})")
            };
            format!(
                "; {why}; to create it as a least-privilege login, `pgmcp check --suggest-role --login {user}`, \
                 connected as a superuser, prints the SQL"
            )
        }
        "28000" if message.contains("is not permitted to log in") => format!(
            "; \"{user}\" is a role without LOGIN, one to switch to rather than sign in as: sign in as a login that \
             is a member of it and set {} to \"{user}\", or create a login for the agent \
             (`pgmcp check --suggest-role --login NAME`, connected as a superuser, prints the SQL)",
            attempt.section("connection.role")
        ),
        "28000" if message.starts_with("no pg_hba.conf entry") => no_hba_line(attempt, message),
        "28000" if message.starts_with("pg_hba.conf rejects connection") => format!(
            "; a reject line of the server's pg_hba.conf matches this user, database and address first: if \"{user}\" \
             should get in from here, a superuser adds a line that lets it in above that one ({}) and {RELOAD}",
            suggested_line(attempt, message)
        ),
        "28000"
            if message.starts_with("Peer authentication failed")
                || message.starts_with("Ident authentication failed") =>
        {
            let method = if message.starts_with("Peer") { "peer" } else { "ident" };
            format!(
                "; for this connection the server's pg_hba.conf says {method}: it lets in only the operating-system user \
                 named \"{user}\", with no password: connect over TCP (host=localhost) to sign in with a password, or a \
                 superuser adds `{}` above that line and {RELOAD}",
                hba::password_line(database, user, hba::Origin::Socket)
            )
        }
        // The server's words in another language: both causes it may mean.
        "28000" => format!(
            "; the server has no role \"{user}\"{os_user}, or its pg_hba.conf does not let it in from here \
             (the server's log says which)"
        ),
        "3D000" => {
            let why = match attempt.dbname {
                None => format!(
                    "no database was named, so the user name \"{user}\" stood in for it, as libpq does: name one \
                     ({database_settings})"
                ),
                Some(_) => format!(
                    "check the name ({database_settings}; names are case-sensitive): `psql -l` lists the databases"
                ),
            };
            format!("; the login was accepted, but that server has no such database: {why}")
        }
        "53300" => format!(
            "; the server has no free connection slots (max_connections): close idle sessions, or lower {}",
            attempt.section("pool.max_conns")
        ),
        "57P03" => "; the server is starting up or shutting down: try again in a moment".to_owned(),
        _ => String::new(),
    }
}

/// For `no pg_hba.conf entry for host "...", user "...", database "...",
/// <encryption>`: which encryption was tried decides whether TLS is the
/// likelier fix than a new line.
fn no_hba_line(attempt: &Attempt<'_>, message: &str) -> String {
    let user = attempt.user;
    let database = attempt.database();
    let add = format!(
        "a superuser adds a line that lets it in (such as `{}`) above any line that would match first, and {RELOAD}",
        suggested_line(attempt, message)
    );
    // "SSL off" before PostgreSQL 14, "no encryption" since.
    let plain = message.ends_with("no encryption") || message.ends_with("SSL off");
    let tls = message.ends_with("SSL encryption") || message.ends_with("SSL on");
    if plain && attempt.sslmode == SslMode::Disable {
        format!(
            "; no line of the server's pg_hba.conf lets user \"{user}\" into database \"{database}\" from here without \
             TLS, and sslmode=disable tried no other way: if the server accepts it over TLS (a hostssl line), set \
             sslmode=require or stronger; otherwise {add}"
        )
    } else if tls && attempt.sslmode.requires_tls() {
        format!(
            "; no line of the server's pg_hba.conf lets user \"{user}\" into database \"{database}\" from here over TLS, \
             and sslmode={} tried no other way: if the server accepts it only without TLS (a hostnossl line), set \
             sslmode=prefer; otherwise {add}",
            attempt.sslmode.name()
        )
    } else {
        format!(
            "; the server's pg_hba.conf has no line that lets user \"{user}\" into database \"{database}\" from this \
             address: {add}"
        )
    }
}

/// The pg_hba.conf line that would let the attempt in, from the address the
/// server reports in its message (`for host "127.0.0.1"`, or `[local]`).
fn suggested_line(attempt: &Attempt<'_>, message: &str) -> String {
    let address = message
        .split_once("for host \"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(address, _)| address);
    let origin = match (address, attempt.host) {
        (Some("[local]"), _) | (None, Host::Unix(_)) => Some(hba::Origin::Socket),
        (Some(address), _) => address.parse().ok().map(|ip| hba::Origin::Address { ip, tls: false }),
        (None, Host::Tcp(_)) => None,
    };
    match origin {
        Some(origin) => hba::password_line(attempt.database(), attempt.user, origin),
        None => format!(
            "host   {}   {}   <your address>/32   scram-sha-256",
            hba::quote(attempt.database()),
            hba::quote(attempt.user)
        ),
    }
}

/// After `the server asks user "u" for a password (method), `: where none
/// was found, and what to do.
fn no_password(attempt: &Attempt<'_>, search: &PasswordSearch) -> String {
    let (user_settings, database_settings) = (attempt.user_settings(), attempt.database_settings());
    let passfile_setting = attempt.passfile_setting();
    let key = passfile::key(attempt.passfile_target());
    let line = passfile::line_for(attempt.passfile_target(), "<password>");
    let variable = attempt.password_variable;
    let elsewhere = format!("the connection string and {variable} hold none");
    let chmod = |path: &std::path::Path| {
        if cfg!(windows) {
            String::new()
        } else {
            format!(", readable by you alone (chmod 0600 {})", path.display())
        }
    };
    match search {
        PasswordSearch::NoLine { path, near } => {
            let path_shown = path.display();
            let mut near: Vec<&Near> = near.iter().collect();
            // The likeliest mistake first: a database name, then a user
            // name, then the host as written, then the port.
            near.sort_by_key(|n| match n.field {
                Field::Database => 0,
                Field::User => 1,
                Field::Host => 2,
                Field::Port => 3,
            });
            let Some(first) = near.first() else {
                return format!(
                    "and the password file {path_shown} has no line matching {key} ({elsewhere}): add the line {line} \
                     to it (* matches anything in the first four fields), or set {variable}"
                );
            };
            // Which line, and which field differs: never the value the line
            // holds (it may be a password, swapped into another field); the
            // person who can open the file needs nothing more.
            let others: Vec<String> = near
                .iter()
                .take(3)
                .enumerate()
                .map(|(i, n)| {
                    let is = if i == 0 { " is" } else { "" };
                    format!("line {}{is} for another {}", n.line, n.field.name())
                })
                .collect();
            let add = format!("add the line {line} to {path_shown} ({elsewhere})");
            let what = match first.field {
                Field::Database if attempt.dbname.is_none() => format!(
                    "no database was named, so the user name \"{}\" stood in for it, as libpq does: name the \
                     database ({database_settings}), or {add}",
                    attempt.user
                ),
                Field::Database => format!("is the database name right ({database_settings})? If it is, {add}"),
                Field::User => format!("is the user name right ({user_settings})? If it is, {add}"),
                Field::Port => format!("is the port right? If it is, {add}"),
                Field::Host => format!(
                    "the file matches the host as written, so a line for another name or address of the same \
                     server does not match \"{}\": connect to the host line {} names instead, or {add}",
                    attempt.host_name(),
                    first.line
                ),
            };
            format!(
                "and the password file {path_shown} has no line matching {key}, though {}: {what}",
                others.join(" and ")
            )
        }
        PasswordSearch::Missing(path) => format!(
            "and none was given: {elsewhere}, and there is no password file {}: create it with the line {line}{}, \
             or set {variable}",
            path.display(),
            chmod(path)
        ),
        PasswordSearch::Ignored(ignored) => format!("and none was given: {elsewhere}, and the {ignored}"),
        PasswordSearch::NoFile => format!(
            "and none was given: {elsewhere}, and there is no password file to read (HOME is not set): set \
             {variable}, or name a password file with {passfile_setting} holding the line {line}"
        ),
    }
}

#[cfg(test)]
mod tests;
