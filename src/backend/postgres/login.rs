//! A login of the agent's own, for `pgmcp check --suggest-role --login`: its
//! generated password, the statement that creates it (a member of the reader
//! role and nothing else, its password stored as a SCRAM-SHA-256 verifier),
//! and the steps that let pgmcp connect as it: pg_hba.conf, the password
//! file, the connection string to check and install. Pure, but for the
//! password's randomness.
//!
//! The password is shown once, in the password file line of the steps,
//! which `check` prints on stderr. The SQL, which a person saves to a file,
//! hands to a DBA and runs through psql, carries only the verifier: with it
//! the server checks a password but nobody can sign in, so neither that file,
//! psql's history nor the server's statement log ever holds the password.

use std::fmt;
use std::path::Path;

use super::hba::{self, Origin, Rule, Verdict};
use super::params::{Host, SslMode};
use super::passfile;
use super::role::{hidden, sql_name};
use crate::backend::demo::shell_word;
use crate::backend::percent;

/// Characters of a generated password: letters and digits only, so it needs
/// no escaping in a password file, a URL, a shell or a JSON config.
const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/// 24 of them: 142 bits, beyond guessing even from a stolen verifier.
const LENGTH: usize = 24;

/// A login to create, with its password. `Debug` never shows the password.
pub struct NewLogin {
    pub name: String,
    password: String,
    verifier: String,
}

impl fmt::Debug for NewLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewLogin")
            .field("name", &self.name)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The operating system gave no random bytes for the password.
#[derive(Debug, thiserror::Error)]
#[error("cannot generate a password: the operating system gave no random bytes ({0})")]
pub struct NoRandomness(String);

impl NewLogin {
    /// `name` with a new random password.
    pub fn generate(name: &str) -> Result<NewLogin, NoRandomness> {
        let mut password = String::with_capacity(LENGTH);
        let mut bytes = [0u8; 64];
        while password.len() < LENGTH {
            getrandom::fill(&mut bytes).map_err(|e| NoRandomness(e.to_string()))?;
            // 248 is the largest multiple of 62 a byte holds: bytes above it
            // are dropped, so every character is equally likely.
            for b in bytes.iter().filter(|b| **b < 248) {
                if password.len() < LENGTH {
                    password.push(char::from(ALPHABET[usize::from(*b % 62)]));
                }
            }
        }
        Ok(NewLogin::with_password(name, password))
    }

    /// `name` with `password`, for tests that need to know it beforehand.
    pub(crate) fn with_password(name: &str, password: String) -> NewLogin {
        let verifier = postgres_protocol::password::scram_sha_256(password.as_bytes());
        NewLogin {
            name: name.to_owned(),
            password,
            verifier,
        }
    }

    /// The statement that creates the login as a member of `reader`, its
    /// password given as the verifier (PostgreSQL stores a verifier it is
    /// handed as it is).
    pub fn create_sql(&self, reader: &str) -> String {
        // The verifier holds base64, `$` and `:` only: nothing to escape.
        format!(
            "CREATE ROLE {} LOGIN PASSWORD '{}' IN ROLE {};",
            sql_name(&self.name),
            self.verifier,
            sql_name(reader)
        )
    }
}

/// Where the login will connect: where this connection went.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// Who this connection logged in as: the user of the psql line that
    /// runs the SQL (a DBA may change it to a superuser of theirs).
    pub user: &'a str,
    pub host: &'a Host,
    pub port: u16,
    pub database: &'a str,
    pub sslmode: SslMode,
    /// The password file pgmcp reads here; `None` without a home directory.
    pub passfile: Option<&'a Path>,
}

/// What the server said about pg_hba.conf: how this connection came in
/// (`None` if it could not be asked or read), and the file's rules or why
/// they could not be read.
#[derive(Debug, Clone)]
pub struct HbaFacts {
    pub origin: Option<Origin>,
    pub rules: Result<hba::Rules, String>,
    /// The roles the new login will be a member of through the reader
    /// ([`hba::ReaderGroups::of_new_login`]); `None` when unknown.
    pub reader_groups: Option<Vec<String>>,
}

/// `postgresql://login@host:port/database`, every name percent-encoded, with
/// the socket directory as `host=` and any `sslmode` but the default. Only
/// an IPv6 address goes between brackets as it is (libpq and pgmcp take
/// what is inside them unchanged); any other host is percent-encoded, so a
/// `:`, `]`, quote or space in it can neither move the port nor end a
/// shell word.
pub fn url(login: &str, place: &Place<'_>) -> String {
    let user = percent::encode(login);
    let database = percent::encode(place.database);
    let mut query = Vec::new();
    let authority = match place.host {
        Host::Tcp(h) if h.parse::<std::net::Ipv6Addr>().is_ok() => format!("[{h}]:{}", place.port),
        Host::Tcp(h) => format!("{}:{}", percent::encode(h), place.port),
        Host::Unix(dir) => {
            query.push(format!("host={}", percent::encode(&dir.display().to_string())));
            query.push(format!("port={}", place.port));
            String::new()
        }
    };
    if place.sslmode != SslMode::Prefer {
        query.push(format!("sslmode={}", place.sslmode.name()));
    }
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{}", query.join("&"))
    };
    format!("postgresql://{user}@{authority}/{database}{query}")
}

/// The psql command that runs the saved SQL on the checked server, as
/// [`Place::user`], as one shell line. The server is named by a URL, never
/// by `-d NAME`: psql reads a `-d` value holding `=` as a whole connection
/// string (a database named `host=elsewhere dbname=x` would send the SQL
/// to another server), and `-d` alone leaves host and port to psql's
/// defaults rather than the server pgmcp checked. The URL is
/// percent-encoded, so the line holds no control character and can sit
/// in a `--` comment.
pub fn psql_line(place: &Place<'_>) -> String {
    format!("psql -d {} -f reader.sql", shell_word(&url(place.user, place)))
}

/// Why `--login NAME` or the reader's name cannot be used: a control (or
/// otherwise invisible, line-breaking) character, which no pg_hba.conf or
/// password file line can hold and a terminal would not show; or more
/// than 63 bytes (NAMEDATALEN - 1), which PostgreSQL cuts short, so the
/// login it creates would not be the one the printed pg_hba.conf line,
/// password file line and URL name.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if let Some(c) = name.chars().find(|c| hidden(*c)) {
        return Some(format!(
            "it holds the control or invisible character U+{:04X}, which pg_hba.conf and the password file cannot hold",
            u32::from(c)
        ));
    }
    if name.len() > 63 {
        return Some(format!(
            "it is {} bytes long: PostgreSQL keeps only the first 63 bytes of a name, so the printed pg_hba.conf \
             line, password file line and URL would name another role than the one created",
            name.len()
        ));
    }
    None
}

/// Why the steps cannot be written for `place`: its database or host
/// (the connection string's own) holds a control character. The steps put
/// both into pg_hba.conf and password file lines, which end at a line
/// break: such a name would add a line of its own choosing there. What,
/// the name, and why.
pub fn place_problem(place: &Place<'_>) -> Option<(&'static str, String, String)> {
    let host = match place.host {
        Host::Tcp(h) => h.clone(),
        Host::Unix(dir) => dir.display().to_string(),
    };
    [("the database", place.database.to_owned()), ("the host", host)]
        .into_iter()
        .find_map(|(what, name)| {
            let c = name.chars().find(|c| hidden(*c))?;
            let why = format!(
                "it holds the control or invisible character U+{:04X}, which the pg_hba.conf and password file lines of \
                 --login cannot hold",
                u32::from(c)
            );
            Some((what, name, why))
        })
}

/// Where the login connects from, in words.
fn from_where(origin: Origin) -> String {
    match origin {
        Origin::Socket => "this machine's Unix socket".to_owned(),
        Origin::Address { ip, .. } => ip.to_string(),
    }
}

/// The steps after the SQL, for a person: run it, pg_hba.conf, the password
/// file line (the one place the password is shown), and the lines that
/// check and install the connection.
pub fn steps(login: &NewLogin, reader: &str, place: &Place<'_>, hba: &HbaFacts) -> String {
    let name = &login.name;
    let database = place.database;
    let target = passfile::Target {
        host: place.host,
        port: place.port,
        dbname: database,
        user: name,
    };
    let passfile_line = passfile::line_for(target, &login.password);
    let file = place.passfile.map(|p| p.display().to_string());
    // `~` is the one word left bare: quoted, the shell would not expand it.
    let chmod = file.as_deref().map_or_else(|| "~/.pgpass".to_owned(), shell_word);
    let file = file.unwrap_or_else(|| "~/.pgpass".to_owned());
    let url = shell_word(&url(name, place));
    let mut out = format!(
        "Next, to let the agent connect as \"{name}\" (the SQL is on stdout; these steps are on stderr):\n\
         \n\
         1. Run the SQL as a superuser, saved as a file: {psql}\n   \
            It stores the password of \"{name}\" as a SCRAM-SHA-256 verifier, not the password itself, so the file, \
            psql's history and the server's log never hold it. The password is in step 3 and nowhere else; each run \
            makes a new one, so run this run's SQL and save this run's line.\n\
         \n",
        psql = psql_line(place),
    );
    out.push_str(&hba_step(name, reader, database, hba));
    out.push_str(&format!(
        "\n3. Save the password in the password file of the user who runs the MCP client ({file} for you; PGPASSFILE \
         names another; on Windows %APPDATA%\\postgresql\\pgpass.conf), readable by that user alone \
         (chmod 0600 {chmod}), as this line:\n       \
         {passfile_line}\n\
         \n\
         4. Check that it connects and only reads, then add it to your client:\n       \
         pgmcp check --database {url}\n       \
         pgmcp install claude-desktop --database {url}\n"
    ));
    out
}

/// Step 2: whether pg_hba.conf needs a line, judged from the server's rules.
fn hba_step(name: &str, reader: &str, database: &str, hba: &HbaFacts) -> String {
    let reload = "   Then reload the server, as a superuser: SELECT pg_reload_conf();\n";
    let line = |origin: Option<Origin>| match origin {
        Some(origin) => hba::password_line(database, name, origin),
        None => format!(
            "host   {}   {}   <your address>/32   scram-sha-256",
            hba::quote(database),
            hba::quote(name)
        ),
    };
    let (file, rules, origin) = match (&hba.rules, hba.origin) {
        (Ok(rules), Some(origin)) => (&rules.file, rules.rules.as_deref().unwrap_or_default(), origin),
        (Err(why), origin) => {
            // The server's refusal says why; the reason behind it may not.
            let who = if why.contains("permission denied") {
                "; only a superuser may"
            } else {
                ""
            };
            return format!(
                "2. pg_hba.conf: pgmcp could not read the server's rules ({why}{who}). If `pgmcp check` \
                 (step 4) says \"no pg_hba.conf entry\" or \"Peer authentication failed\", add this line to the server's \
                 pg_hba.conf (SHOW hba_file says where), above any line that would match first:\n       \
                 {}\n{reload}",
                line(origin)
            );
        }
        (Ok(_), None) => {
            return format!(
                "2. pg_hba.conf: pgmcp could not tell where this connection comes from. If `pgmcp check` (step 4) says \
                 \"no pg_hba.conf entry\", add this line, with your address, above any line that would match first:\n       \
                 {}\n{reload}",
                line(None)
            );
        }
    };
    let login = hba::Login {
        name,
        reader,
        database,
        reader_groups: hba.reader_groups.as_deref(),
    };
    let shown = |rule: &Rule| format!("line {} ({rule})", rule.line);
    let from = from_where(origin);
    let mut step = match hba::verdict(rules, login, origin) {
        Verdict::Password(rule) => format!(
            "2. pg_hba.conf: nothing to add: {} of {file} lets \"{name}\" in from {from} with its password.\n",
            shown(&rule)
        ),
        Verdict::Trust(rule) => format!(
            "2. pg_hba.conf: nothing to add: {} of {file} lets \"{name}\" in from {from} with no password at all \
             (trust). To have it give its password, add this line above that one:\n       \
             {}\n{reload}",
            shown(&rule),
            line(Some(origin))
        ),
        Verdict::Add { above: Some(rule), why } => format!(
            "2. pg_hba.conf: add this line to {file}, above line {} ({rule}), which would decide first for \"{name}\" \
             from {from}: {why}:\n       \
             {}\n{reload}",
            rule.line,
            line(Some(origin))
        ),
        Verdict::Add { above: None, why } => format!(
            "2. pg_hba.conf: add this line to {file}, since for \"{name}\" from {from} {why}:\n       \
             {}\n{reload}",
            line(Some(origin))
        ),
        Verdict::Unsure { rule, why } => format!(
            "2. pg_hba.conf: pgmcp cannot tell whether {} of {file} matches \"{name}\" from {from}: that depends on \
             {why}. If `pgmcp check` (step 4) says \"no pg_hba.conf entry\" or names a method other than a password, \
             add this line above it:\n       \
             {}\n{reload}",
            shown(&rule),
            line(Some(origin))
        ),
    };
    let broken: Vec<String> = rules
        .iter()
        .filter_map(|r| r.error.as_ref().map(|e| format!("line {}: {e}", r.line)))
        .collect();
    if !broken.is_empty() {
        step.push_str(&format!(
            "   Note: the server cannot read some lines of {file} ({}): until they are fixed, it keeps the rules it \
             loaded before, which may differ from the file.\n",
            broken.join("; ")
        ));
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::postgres::params;

    #[test]
    fn generated_passwords_are_long_plain_and_new() {
        let a = NewLogin::generate("agent").unwrap();
        let b = NewLogin::generate("agent").unwrap();
        assert_eq!(a.password.len(), LENGTH);
        assert!(a.password.bytes().all(|c| ALPHABET.contains(&c)), "{}", a.password);
        assert_ne!(a.password, b.password);
        assert!(!format!("{a:?}").contains(&a.password));
        let sql = a.create_sql("pgmcp_reader");
        assert!(
            sql.starts_with("CREATE ROLE \"agent\" LOGIN PASSWORD 'SCRAM-SHA-256$4096:"),
            "{sql}"
        );
        assert!(sql.ends_with("' IN ROLE \"pgmcp_reader\";"), "{sql}");
        assert!(
            !sql.contains(&a.password),
            "the SQL holds the verifier, never the password"
        );
    }

    /// Each URL, and the connection settings it gives back.
    #[test]
    fn urls_lead_back_to_the_same_place() {
        let socket = Host::Unix("/var/run/postgresql".into());
        let cases = [
            (
                Host::Tcp("127.0.0.1".into()),
                "shop",
                SslMode::Prefer,
                "postgresql://agent_readonly@127.0.0.1:5432/shop",
            ),
            (
                Host::Tcp("::1".into()),
                "Shop DB",
                SslMode::Require,
                "postgresql://agent_readonly@[::1]:5432/Shop%20DB?sslmode=require",
            ),
            (
                socket,
                "shop",
                SslMode::Prefer,
                "postgresql://agent_readonly@/shop?host=%2Fvar%2Frun%2Fpostgresql&port=5432",
            ),
            // Not an IPv6 address: encoded, so nothing in it ends the host
            // or a shell word.
            (
                Host::Tcp("a:b'$(touch /tmp/PWN2)'".into()),
                "shop",
                SslMode::Prefer,
                "postgresql://agent_readonly@a%3Ab%27%24%28touch%20%2Ftmp%2FPWN2%29%27:5432/shop",
            ),
            (
                Host::Tcp("a]:1/x".into()),
                "shop",
                SslMode::Prefer,
                "postgresql://agent_readonly@a%5D%3A1%2Fx:5432/shop",
            ),
            (
                Host::Tcp("db.example.com".into()),
                "host=evil.example port=1 dbname=x",
                SslMode::Prefer,
                "postgresql://agent_readonly@db.example.com:5432/host%3Devil.example%20port%3D1%20dbname%3Dx",
            ),
        ];
        for (host, database, sslmode, expected) in cases {
            let place = Place {
                user: "postgres",
                host: &host,
                port: 5432,
                database,
                sslmode,
                passfile: None,
            };
            let url = url("agent_readonly", &place);
            assert_eq!(url, expected);
            let back = params::resolve(Some(&url), &Default::default(), &|_| None).unwrap();
            assert_eq!(
                (
                    back.host,
                    back.port,
                    back.user.as_str(),
                    back.dbname.as_deref(),
                    back.sslmode
                ),
                (host, 5432, "agent_readonly", Some(database), sslmode),
                "{url}"
            );
        }
    }

    fn rule(line: u32, kind: &str, address: Option<(&str, &str)>, method: &str) -> Rule {
        Rule {
            line,
            kind: Some(kind.into()),
            database: Some(vec!["all".into()]),
            user_name: Some(vec!["all".into()]),
            address: address.map(|(a, _)| a.into()),
            netmask: address.map(|(_, m)| m.into()),
            auth_method: Some(method.into()),
            error: None,
        }
    }

    /// Step 2 for each verdict, as a person reads it.
    #[test]
    fn what_step_two_says() {
        let loopback = Some(("127.0.0.1", "255.255.255.255"));
        let from = Origin::Address {
            ip: "127.0.0.1".parse().unwrap(),
            tls: false,
        };
        let facts = |rules: Vec<Rule>| HbaFacts {
            origin: Some(from),
            rules: Ok(hba::Rules {
                file: "/etc/pg_hba.conf".into(),
                rules: Some(rules),
            }),
            reader_groups: Some(Vec::new()),
        };
        let mut broken = rule(1, "host", loopback, "trsut");
        broken.error = Some("invalid authentication method \"trsut\"".into());
        let cases = [
            (
                facts(vec![
                    rule(1, "local", None, "peer"),
                    rule(2, "host", loopback, "scram-sha-256"),
                ]),
                "2. pg_hba.conf: nothing to add: line 2 (host all all 127.0.0.1/32 scram-sha-256) of /etc/pg_hba.conf \
                 lets \"agent\" in from 127.0.0.1 with its password.\n",
            ),
            (
                facts(vec![
                    rule(1, "host", loopback, "reject"),
                    rule(2, "host", loopback, "md5"),
                ]),
                "2. pg_hba.conf: add this line to /etc/pg_hba.conf, above line 1 (host all all 127.0.0.1/32 reject), \
                 which would decide first for \"agent\" from 127.0.0.1: it turns the login away (reject):\n       \
                 host   shop   agent   127.0.0.1/32   scram-sha-256\n   Then reload the server, as a superuser: \
                 SELECT pg_reload_conf();\n",
            ),
            (
                facts(vec![broken, rule(2, "local", None, "trust")]),
                "2. pg_hba.conf: add this line to /etc/pg_hba.conf, since for \"agent\" from 127.0.0.1 no line matches \
                 it, so the server would turn it away (no pg_hba.conf entry):\n       host   shop   agent   \
                 127.0.0.1/32   scram-sha-256\n   Then reload the server, as a superuser: SELECT pg_reload_conf();\n   \
                 Note: the server cannot read some lines of /etc/pg_hba.conf (line 1: invalid authentication method \
                 \"trsut\"): until they are fixed, it keeps the rules it loaded before, which may differ from the \
                 file.\n",
            ),
            (
                HbaFacts {
                    origin: Some(Origin::Socket),
                    rules: Err("permission denied for view pg_hba_file_rules (SQLSTATE 42501)".into()),
                    reader_groups: None,
                },
                "2. pg_hba.conf: pgmcp could not read the server's rules (permission denied for view \
                 pg_hba_file_rules (SQLSTATE 42501); only a superuser may). If `pgmcp check` (step 4) says \"no \
                 pg_hba.conf entry\" or \"Peer authentication failed\", add this line to the server's pg_hba.conf \
                 (SHOW hba_file says where), above any line that would match first:\n       local   shop   agent   \
                 scram-sha-256\n   Then reload the server, as a superuser: SELECT pg_reload_conf();\n",
            ),
        ];
        for (hba, expected) in cases {
            assert_eq!(hba_step("agent", "pgmcp_reader", "shop", &hba), expected);
        }
    }

    #[test]
    fn the_steps_hold_the_password_once_and_the_lines_to_run() {
        let login = NewLogin::with_password("agent", "Pw123".into());
        let host = Host::Tcp("db.example.com".into());
        let place = Place {
            user: "me",
            host: &host,
            port: 5433,
            database: "shop",
            sslmode: SslMode::Prefer,
            passfile: Some(Path::new("/home/me/.pgpass")),
        };
        let hba = HbaFacts {
            origin: None,
            rules: Err("no connection".into()),
            reader_groups: None,
        };
        let text = steps(&login, "pgmcp_reader", &place, &hba);
        assert_eq!(text.matches("Pw123").count(), 1, "{text}");
        for line in [
            "1. Run the SQL as a superuser, saved as a file: psql -d postgresql://me@db.example.com:5433/shop -f reader.sql\n",
            "       host   shop   agent   <your address>/32   scram-sha-256\n",
            "(chmod 0600 /home/me/.pgpass), as this line:\n       db.example.com:5433:shop:agent:Pw123\n",
            "       pgmcp check --database postgresql://agent@db.example.com:5433/shop\n",
            "       pgmcp install claude-desktop --database postgresql://agent@db.example.com:5433/shop\n",
        ] {
            assert!(text.contains(line), "{line}\nnot in\n{text}");
        }
    }

    /// Every command line of the steps, for names that a shell or psql
    /// would read as more than one word or as a connection string: each
    /// word quoted for a POSIX shell, the server named by a URL.
    #[test]
    fn printed_command_lines_are_quoted_words() {
        let login = NewLogin::with_password("agent", "Pw123".into());
        let tcp = Host::Tcp("a:b'$(touch /tmp/PWN2)'".into());
        let socket = Host::Unix("/tmp/my sock".into());
        let evil_db = "it's $(touch /tmp/x)`id` host=evil.example port=1 dbname=x";
        let passfile = Path::new("/tmp/p $(touch /tmp/PWN3).pgpass");
        // (host, database, password file, the lines expected)
        let cases: [(&Host, &str, Option<&Path>, &[&str]); 3] = [
            (
                &tcp,
                "shop",
                Some(passfile),
                &[
                    "psql -d postgresql://postgres@a%3Ab%27%24%28touch%20%2Ftmp%2FPWN2%29%27:5/shop -f reader.sql\n",
                    "(chmod 0600 '/tmp/p $(touch /tmp/PWN3).pgpass')",
                    "pgmcp check --database postgresql://agent@a%3Ab%27%24%28touch%20%2Ftmp%2FPWN2%29%27:5/shop\n",
                ],
            ),
            (
                &socket,
                evil_db,
                None,
                &[
                    "psql -d 'postgresql://postgres@/it%27s%20%24%28touch%20%2Ftmp%2Fx%29%60id%60%20host%3Devil.example\
                     %20port%3D1%20dbname%3Dx?host=%2Ftmp%2Fmy%20sock&port=5' -f reader.sql\n",
                    "(chmod 0600 ~/.pgpass)",
                    "pgmcp install claude-desktop --database 'postgresql://agent@/it%27s%20%24%28touch%20%2Ftmp%2Fx%29\
                     %60id%60%20host%3Devil.example%20port%3D1%20dbname%3Dx?host=%2Ftmp%2Fmy%20sock&port=5'\n",
                ],
            ),
            (
                &tcp,
                "shop",
                Some(Path::new("/home/o'neil/.pgpass")),
                &[r"(chmod 0600 '/home/o'\''neil/.pgpass')"],
            ),
        ];
        for (host, database, passfile, lines) in cases {
            let place = Place {
                user: "postgres",
                host,
                port: 5,
                database,
                sslmode: SslMode::Prefer,
                passfile,
            };
            let hba = HbaFacts {
                origin: None,
                rules: Err("no connection".into()),
                reader_groups: None,
            };
            let text = steps(&login, "pgmcp_reader", &place, &hba);
            for line in lines {
                assert!(text.contains(line), "{line}\nnot in\n{text}");
            }
        }
    }

    #[test]
    fn names_that_cannot_be_used() {
        let long = "x".repeat(64);
        let accents = "é".repeat(32);
        // (name, the refusal's start, or None)
        let cases = [
            ("agent", None),
            ("Agent One", None),
            ("a'b$(id)", None),
            (&long[..63], None),
            (&accents[..62], None),
            ("", Some("it is empty")),
            (
                "x\nSELECT 1/0; --",
                Some("it holds the control or invisible character U+000A"),
            ),
            ("x\r", Some("it holds the control or invisible character U+000D")),
            ("tab\t", Some("it holds the control or invisible character U+0009")),
            ("\u{1b}[31m", Some("it holds the control or invisible character U+001B")),
            ("a\u{2028}b", Some("it holds the control or invisible character U+2028")),
            (
                &long[..],
                Some("it is 64 bytes long: PostgreSQL keeps only the first 63 bytes"),
            ),
            (&accents[..], Some("it is 64 bytes long")),
        ];
        for (name, refusal) in cases {
            match (name_problem(name), refusal) {
                (None, None) => {}
                (Some(why), Some(start)) => assert!(why.starts_with(start), "{name:?}: {why}"),
                (got, _) => panic!("{name:?}: {got:?}"),
            }
        }
        let host = Host::Unix("/tmp/s\nx".into());
        let place = |host, database| Place {
            user: "postgres",
            host,
            port: 5432,
            database,
            sslmode: SslMode::Prefer,
            passfile: None,
        };
        let plain = Host::Tcp("localhost".into());
        assert!(place_problem(&place(&plain, "shop")).is_none());
        let (what, _, why) = place_problem(&place(&plain, "evil\nlocal all all trust")).unwrap();
        assert_eq!(
            (
                what,
                why.starts_with("it holds the control or invisible character U+000A")
            ),
            ("the database", true)
        );
        assert_eq!(place_problem(&place(&host, "shop")).unwrap().0, "the host");
    }
}
