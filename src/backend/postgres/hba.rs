//! pg_hba.conf, as far as pgmcp reads it: the line that lets a login in
//! with its password, in the file's own quoting, and which of the server's
//! rules (`pg_hba_file_rules`) a new login would meet first when it connects
//! the way this connection did. `pgmcp check --suggest-role --login` says
//! from this whether a line must be added, and where. Pure, but for the SQL
//! handed to the backend.

use std::fmt;
use std::net::IpAddr;

use serde::Deserialize;

/// One `json` value: how this connection reached the server, as the server
/// saw it. Anyone may ask.
pub const CLIENT: &str = r#"
SELECT pg_catalog.json_build_object(
    'address', pg_catalog.host(pg_catalog.inet_client_addr()),
    'tls', COALESCE((SELECT s.ssl FROM pg_catalog.pg_stat_ssl s
                     WHERE s.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()), false)
)
"#;

/// One `json` value: the file and its rules, in the order the server tries
/// them (the view's own order: PostgreSQL 16 and later number included
/// files' lines per file, so no column of every version sorts them). Only a
/// superuser (or a role granted both) may read them: the server refuses
/// anyone else, and that refusal is the answer.
pub const RULES: &str = r#"
SELECT pg_catalog.json_build_object(
    'file', pg_catalog.current_setting('hba_file'),
    'rules', (SELECT pg_catalog.json_agg(pg_catalog.json_build_object(
                  'line', r.line_number, 'type', r.type, 'database', r.database,
                  'user_name', r.user_name, 'address', r.address, 'netmask', r.netmask,
                  'auth_method', r.auth_method, 'error', r.error))
              FROM pg_catalog.pg_hba_file_rules r)
)
"#;

/// One `json` value: whether the reader role (`$1`) exists, whether it is
/// a superuser, and the roles it is a member of, directly or through
/// others (itself included), for pg_hba.conf's `+group` and `samerole`.
/// Anyone may ask.
pub const READER_GROUPS: &str = r#"
SELECT pg_catalog.json_build_object(
    'exists', pg_catalog.count(r.oid) OPERATOR(pg_catalog.>) 0,
    'superuser', COALESCE(pg_catalog.bool_or(r.rolsuper), false),
    'groups', (SELECT pg_catalog.json_agg(g.rolname ORDER BY g.rolname)
               FROM pg_catalog.pg_roles m, pg_catalog.pg_roles g
               WHERE m.rolname OPERATOR(pg_catalog.=) $1
                 AND pg_catalog.pg_has_role(m.oid, g.oid, 'MEMBER'))
)
FROM pg_catalog.pg_roles r
WHERE r.rolname OPERATOR(pg_catalog.=) $1
"#;

/// The reply to [`READER_GROUPS`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ReaderGroups {
    pub exists: bool,
    pub superuser: bool,
    pub groups: Option<Vec<String>>,
}

impl ReaderGroups {
    /// The roles the new login will be a member of through the reader,
    /// or `None` when that cannot be told. A reader that does not exist yet
    /// is created by the SQL with no memberships (and the SQL's `CREATE
    /// ROLE` fails, changing nothing, if someone creates it first), so the
    /// login will be a member of itself and the reader alone. For a
    /// superuser reader `pg_has_role` says yes to every role, while
    /// pg_hba.conf counts only real memberships: cannot tell.
    pub fn of_new_login(&self) -> Option<Vec<String>> {
        match self {
            ReaderGroups { exists: false, .. } => Some(Vec::new()),
            ReaderGroups { superuser: true, .. } => None,
            ReaderGroups { groups, .. } => Some(groups.clone().unwrap_or_default()),
        }
    }
}

/// The reply to [`CLIENT`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Client {
    /// The client's address; `None` over a Unix socket.
    pub address: Option<String>,
    pub tls: bool,
}

/// The reply to [`RULES`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Rules {
    pub file: String,
    pub rules: Option<Vec<Rule>>,
}

/// One line of `pg_hba_file_rules`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Rule {
    pub line: u32,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub database: Option<Vec<String>>,
    pub user_name: Option<Vec<String>>,
    pub address: Option<String>,
    pub netmask: Option<String>,
    pub auth_method: Option<String>,
    /// Why the line could not be read; the server then keeps the rules it
    /// had before.
    pub error: Option<String>,
}

impl fmt::Display for Rule {
    /// The line much as the file has it: `host all all 127.0.0.1/32 scram-sha-256`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |l: &Option<Vec<String>>| l.as_deref().unwrap_or_default().join(",");
        write!(
            f,
            "{} {} {}",
            self.kind.as_deref().unwrap_or("?"),
            list(&self.database),
            list(&self.user_name)
        )?;
        if let Some(address) = &self.address {
            match self.netmask.as_deref().and_then(prefix_length) {
                Some(bits) => write!(f, " {address}/{bits}")?,
                None => match &self.netmask {
                    Some(mask) => write!(f, " {address} {mask}")?,
                    None => write!(f, " {address}")?,
                },
            }
        }
        write!(f, " {}", self.auth_method.as_deref().unwrap_or("?"))
    }
}

/// The bits set in a contiguous netmask (`255.255.255.0` → 24).
fn prefix_length(mask: &str) -> Option<u32> {
    let bits: u128 = match mask.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => u128::from(u32::from(v4)) << 96,
        IpAddr::V6(v6) => u128::from(v6),
    };
    let ones = bits.leading_ones();
    (bits.checked_shl(ones).unwrap_or(0) == 0).then_some(ones)
}

/// How a connection reaches the server, as pg_hba.conf tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A Unix socket: `local` lines.
    Socket,
    /// TCP from `address`, with or without TLS: `host*` lines.
    Address { ip: IpAddr, tls: bool },
}

impl Origin {
    /// From what the server said of this connection; `None` when it named
    /// an address pgmcp cannot read.
    pub fn of(client: &Client) -> Option<Origin> {
        match &client.address {
            None => Some(Origin::Socket),
            Some(text) => text.parse().ok().map(|ip| Origin::Address { ip, tls: client.tls }),
        }
    }
}

/// Who connects: a new login, a member of `reader` only.
#[derive(Debug, Clone, Copy)]
pub struct Login<'a> {
    pub name: &'a str,
    pub reader: &'a str,
    pub database: &'a str,
    /// The roles `reader` is a member of, directly or not
    /// ([`ReaderGroups::of_new_login`]); `None` when unknown.
    pub reader_groups: Option<&'a [String]>,
}

/// Names pg_hba.conf gives a meaning of their own unless quoted. The
/// server's view of the file (`pg_hba_file_rules`) drops the quotes, so a
/// token spelled like one of these, or starting with `+` (a group) or `@`
/// (a file of names), may be the keyword or a role or database so named.
const KEYWORDS: [&str; 5] = ["all", "sameuser", "samerole", "samegroup", "replication"];

/// Whether a token equal to `name` could be read two ways (see [`KEYWORDS`]).
fn ambiguous(name: &str) -> bool {
    KEYWORDS.contains(&name) || name.starts_with('+') || name.starts_with('@')
}

/// What the server's rules do with the login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// This rule lets it in with its password: nothing to add.
    Password(Rule),
    /// This rule lets it in without any password (`trust`).
    Trust(Rule),
    /// A line must be added: above `above` (the rule that matches first and
    /// would not take its password; `why` says what it does instead), or
    /// anywhere when no rule matches.
    Add { above: Option<Rule>, why: String },
    /// pgmcp cannot tell: this rule may match first, for the reason given.
    Unsure { rule: Rule, why: String },
}

/// Whether a rule matches: yes, no, or it cannot be told from here (why).
enum Match {
    Yes,
    No,
    Maybe(String),
}

/// The first of `rules` that would decide `login` connecting from `origin`,
/// and what it decides.
pub fn verdict(rules: &[Rule], login: Login<'_>, origin: Origin) -> Verdict {
    for rule in rules.iter().filter(|r| r.error.is_none()) {
        match matches(rule, login, origin) {
            Match::No => continue,
            Match::Maybe(why) => {
                return Verdict::Unsure {
                    rule: rule.clone(),
                    why,
                };
            }
            Match::Yes => {}
        }
        let method = rule.auth_method.as_deref().unwrap_or_default();
        let why = match method {
            "scram-sha-256" | "md5" | "password" => return Verdict::Password(rule.clone()),
            "trust" => return Verdict::Trust(rule.clone()),
            "reject" => "it turns the login away (reject)".to_owned(),
            "peer" | "ident" => format!(
                "it lets in only the operating-system user named {} ({method}), with no password",
                login.name
            ),
            "cert" => "it asks for a client certificate (cert), not a password".to_owned(),
            other => format!("it authenticates with {other}, not with the password the SQL sets"),
        };
        return Verdict::Add {
            above: Some(rule.clone()),
            why,
        };
    }
    Verdict::Add {
        above: None,
        why: "no line matches it, so the server would turn it away (no pg_hba.conf entry)".to_owned(),
    }
}

fn matches(rule: &Rule, login: Login<'_>, origin: Origin) -> Match {
    let kind = rule.kind.as_deref().unwrap_or_default();
    let tcp = match (kind, origin) {
        ("local", Origin::Socket) => None,
        ("host" | "hostnogssenc", Origin::Address { ip, .. }) => Some(ip),
        ("hostssl", Origin::Address { ip, tls: true }) => Some(ip),
        ("hostnossl", Origin::Address { ip, tls: false }) => Some(ip),
        // pgmcp never asks for GSS encryption, so hostgssenc never matches.
        _ => return Match::No,
    };
    // pg_hba.conf's membership test (`+group`, `samerole`): the login is a
    // member of itself, of the reader, and of what the reader is a member
    // of, directly or not.
    let member_of = |role: &str| {
        if role == login.name || role == login.reader {
            return Match::Yes;
        }
        match login.reader_groups {
            Some(groups) => yes(groups.iter().any(|g| g == role)),
            None => Match::Maybe(format!("whether the role {} is a member of role {role}", login.reader)),
        }
    };
    let database = tokens(&rule.database, |t| {
        let read = match t {
            "all" => Match::Yes,
            "sameuser" => yes(login.database == login.name),
            // A member of the role named like the database.
            "samerole" | "samegroup" => member_of(login.database),
            "replication" => Match::No,
            regex if regex.starts_with('/') => Match::Maybe(format!("the database pattern {regex}")),
            name => yes(name == login.database),
        };
        quoted_or_not(t, login.database, "database", read)
    });
    let user = tokens(&rule.user_name, |t| {
        let read = match t {
            "all" => Match::Yes,
            group if group.starts_with('+') => member_of(&group[1..]),
            regex if regex.starts_with('/') => Match::Maybe(format!("the user pattern {regex}")),
            name => yes(name == login.name),
        };
        quoted_or_not(t, login.name, "role", read)
    });
    let address = match tcp {
        None => Match::Yes,
        Some(ip) => address(rule, ip),
    };
    match (database, user, address) {
        (Match::No, _, _) | (_, Match::No, _) | (_, _, Match::No) => Match::No,
        (Match::Maybe(why), _, _) | (_, Match::Maybe(why), _) | (_, _, Match::Maybe(why)) => Match::Maybe(why),
        _ => Match::Yes,
    }
}

/// A token spelled like `name` (the login's or the database's), when that
/// name reads two ways ([`ambiguous`]): quoted in the file it matches, bare
/// it means `read`; the view does not say which, so unless both match, it
/// cannot be told.
fn quoted_or_not(token: &str, name: &str, what: &str, read: Match) -> Match {
    if token != name || !ambiguous(name) {
        return read;
    }
    match read {
        Match::Yes => Match::Yes,
        _ => Match::Maybe(format!(
            "whether {token} there is pg_hba.conf's keyword or the {what} named \"{name}\" (pg_hba_file_rules \
             does not show quotes)"
        )),
    }
}

fn yes(b: bool) -> Match {
    if b { Match::Yes } else { Match::No }
}

/// A list field matches when any of its tokens does.
fn tokens(list: &Option<Vec<String>>, each: impl Fn(&str) -> Match) -> Match {
    let mut result = Match::No;
    for token in list.iter().flatten() {
        match each(token) {
            Match::Yes => return Match::Yes,
            Match::Maybe(why) => result = Match::Maybe(why),
            Match::No => {}
        }
    }
    result
}

fn address(rule: &Rule, ip: IpAddr) -> Match {
    let Some(text) = rule.address.as_deref() else {
        return Match::No;
    };
    match text {
        "all" => Match::Yes,
        // A loopback client is on the server's own host and network.
        "samehost" | "samenet" if ip.is_loopback() => Match::Yes,
        "samehost" | "samenet" => Match::Maybe(format!("{text} (the server's own addresses)")),
        _ => match (
            text.parse::<IpAddr>(),
            rule.netmask.as_deref().map(str::parse::<IpAddr>),
        ) {
            (Ok(net), Some(Ok(mask))) => yes(masked(ip, mask) == Some(masked_net(net, mask))),
            // A host name: the server resolves it, pgmcp does not.
            _ => Match::Maybe(format!("the host name {text}")),
        },
    }
}

/// `ip` under `mask`, when both are of one family.
fn masked(ip: IpAddr, mask: IpAddr) -> Option<u128> {
    match (ip, mask) {
        (IpAddr::V4(a), IpAddr::V4(m)) => Some(u128::from(u32::from(a) & u32::from(m))),
        (IpAddr::V6(a), IpAddr::V6(m)) => Some(u128::from(a) & u128::from(m)),
        _ => None,
    }
}

fn masked_net(net: IpAddr, mask: IpAddr) -> u128 {
    masked(net, mask).unwrap_or(u128::MAX)
}

/// A database or user name as pg_hba.conf reads it: bare when it is a
/// plain lowercase name that is no keyword, else in double quotes (a
/// double quote inside doubled).
pub fn quote(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain && !KEYWORDS.contains(&name) {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// The line that lets `user` into `database` from `origin` with a password
/// (`scram-sha-256`, as the SQL pgmcp prints stores it).
pub fn password_line(database: &str, user: &str, origin: Origin) -> String {
    let (database, user) = (quote(database), quote(user));
    match origin {
        Origin::Socket => format!("local   {database}   {user}   scram-sha-256"),
        Origin::Address { ip, .. } => {
            let bits = if ip.is_ipv4() { 32 } else { 128 };
            format!("host   {database}   {user}   {ip}/{bits}   scram-sha-256")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule from its text: `host all all 127.0.0.1 255.255.255.255 md5`
    /// (the address and mask as the view gives them), numbered `line`.
    fn rule(line: u32, text: &str) -> Rule {
        let words: Vec<&str> = text.split_whitespace().collect();
        let list = |w: &str| Some(w.split(',').map(str::to_owned).collect());
        let (address, netmask, method) = match words.len() {
            4 => (None, None, words[3]),
            5 => (Some(words[3].to_owned()), None, words[4]),
            _ => (Some(words[3].to_owned()), Some(words[4].to_owned()), words[5]),
        };
        Rule {
            line,
            kind: Some(words[0].to_owned()),
            database: list(words[1]),
            user_name: list(words[2]),
            address,
            netmask,
            auth_method: Some(method.to_owned()),
            error: None,
        }
    }

    const LOGIN: Login<'static> = Login {
        name: "agent",
        reader: "pgmcp_reader",
        database: "shop",
        reader_groups: Some(&[]),
    };

    fn tcp(ip: &str, tls: bool) -> Origin {
        Origin::Address {
            ip: ip.parse().unwrap(),
            tls,
        }
    }

    /// What each file does with the login: the deciding line's number and
    /// the verdict's kind, or `add` at the end (0).
    #[test]
    fn which_line_decides() {
        let debian = [
            "local all postgres peer",
            "local all all peer",
            "host all all 127.0.0.1 255.255.255.255 scram-sha-256",
            "host all all ::1 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff scram-sha-256",
            "local replication all peer",
        ];
        let cases: &[(&[&str], Origin, &str)] = &[
            (&debian, tcp("127.0.0.1", false), "password 3"),
            (&debian, tcp("::1", true), "password 4"),
            (&debian, Origin::Socket, "add above 2"),
            // From elsewhere, nothing matches.
            (&debian, tcp("10.0.0.7", false), "add at the end"),
            (
                &["hostssl all all 0.0.0.0 0.0.0.0 md5"],
                tcp("10.0.0.7", false),
                "add at the end",
            ),
            (
                &["hostssl all all 0.0.0.0 0.0.0.0 md5"],
                tcp("10.0.0.7", true),
                "password 1",
            ),
            (
                &["hostnossl all all all reject", "host all all all scram-sha-256"],
                tcp("10.0.0.7", false),
                "add above 1",
            ),
            (
                &["hostgssenc all all all md5"],
                tcp("10.0.0.7", false),
                "add at the end",
            ),
            // Database and user lists, groups, keywords.
            (&["host other,shop agent all md5"], tcp("10.0.0.7", false), "password 1"),
            (
                &["host shop +pgmcp_reader all md5"],
                tcp("10.0.0.7", false),
                "password 1",
            ),
            (&["host shop +admins all md5"], tcp("10.0.0.7", false), "add at the end"),
            (
                &["host samerole all all trust"],
                tcp("10.0.0.7", false),
                "add at the end",
            ),
            (
                &["host sameuser all all trust"],
                tcp("10.0.0.7", false),
                "add at the end",
            ),
            (
                &["host replication all all md5"],
                tcp("10.0.0.7", false),
                "add at the end",
            ),
            (
                &["host all all 10.0.0.0 255.0.0.0 trust"],
                tcp("10.0.0.7", false),
                "trust 1",
            ),
            (
                &["host all all 10.0.0.0 255.0.0.0 trust"],
                tcp("11.0.0.7", false),
                "add at the end",
            ),
            (
                &["host all all 10.0.0.0 255.0.0.0 trust"],
                tcp("::1", false),
                "add at the end",
            ),
            (&["host all all samehost md5"], tcp("127.0.0.1", false), "password 1"),
            (&["host all all samenet md5"], tcp("10.0.0.7", false), "unsure 1"),
            (&["host all all db.example.com md5"], tcp("10.0.0.7", false), "unsure 1"),
            (&["host all /^agent all md5"], tcp("10.0.0.7", false), "unsure 1"),
            (&["host all all all ldap"], tcp("10.0.0.7", false), "add above 1"),
            (&["host all all all cert"], tcp("10.0.0.7", false), "add above 1"),
            (&[], Origin::Socket, "add at the end"),
        ];
        for (lines, origin, expected) in cases {
            let rules: Vec<Rule> = lines.iter().enumerate().map(|(i, l)| rule(i as u32 + 1, l)).collect();
            let got = match verdict(&rules, LOGIN, *origin) {
                Verdict::Password(r) => format!("password {}", r.line),
                Verdict::Trust(r) => format!("trust {}", r.line),
                Verdict::Add { above: Some(r), .. } => format!("add above {}", r.line),
                Verdict::Add { above: None, .. } => "add at the end".to_owned(),
                Verdict::Unsure { rule, .. } => format!("unsure {}", rule.line),
            };
            assert_eq!(got, *expected, "{lines:?} from {origin:?}");
        }
    }

    #[test]
    fn lines_that_cannot_be_read_are_skipped() {
        let mut broken = rule(1, "local all all trust");
        broken.error = Some("invalid authentication method \"trsut\"".into());
        let rules = [broken, rule(2, "local all all peer")];
        match verdict(&rules, LOGIN, Origin::Socket) {
            Verdict::Add { above: Some(r), why } => {
                assert_eq!(r.line, 2);
                assert!(why.contains("operating-system user named agent (peer)"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rules_are_shown_as_written() {
        let cases = [
            (
                "host all all 127.0.0.1 255.255.255.255 scram-sha-256",
                "host all all 127.0.0.1/32 scram-sha-256",
            ),
            (
                "host all all ::1 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff md5",
                "host all all ::1/128 md5",
            ),
            (
                "host all all 10.0.0.0 255.0.255.0 md5",
                "host all all 10.0.0.0 255.0.255.0 md5",
            ),
            ("local shop,x +r peer", "local shop,x +r peer"),
            ("host all all samenet md5", "host all all samenet md5"),
        ];
        for (given, shown) in cases {
            assert_eq!(rule(1, given).to_string(), shown);
        }
    }

    #[test]
    fn lines_to_add() {
        let cases = [
            (
                "shop",
                "agent",
                tcp("127.0.0.1", true),
                "host   shop   agent   127.0.0.1/32   scram-sha-256",
            ),
            (
                "shop",
                "agent",
                tcp("::1", false),
                "host   shop   agent   ::1/128   scram-sha-256",
            ),
            (
                "Shop DB",
                "all",
                Origin::Socket,
                "local   \"Shop DB\"   \"all\"   scram-sha-256",
            ),
            (
                "we\"ird",
                "a1_b",
                Origin::Socket,
                "local   \"we\"\"ird\"   a1_b   scram-sha-256",
            ),
        ];
        for (database, user, origin, line) in cases {
            assert_eq!(password_line(database, user, origin), line);
        }
    }

    /// Names pg_hba.conf reads two ways, and `+group`/`samerole` lines for
    /// roles the login would reach only through the reader: each judged
    /// from what the server said of the reader's memberships, or "cannot
    /// tell".
    #[test]
    fn keywords_and_groups_that_cannot_be_judged() {
        let admins = ["admins".to_owned(), "pgmcp_reader".to_owned()];
        let login = |name, database, groups| Login {
            name,
            reader: "pgmcp_reader",
            database,
            reader_groups: groups,
        };
        let none: Option<&[String]> = Some(&[]);
        let from = tcp("10.0.0.7", false);
        // (rule, login, verdict)
        let cases = [
            // The view shows `sameuser` for both sameuser and "sameuser".
            (
                "host sameuser all all md5",
                login("agent", "sameuser", none),
                "unsure 1",
            ),
            (
                "host replication all all md5",
                login("agent", "replication", none),
                "unsure 1",
            ),
            (
                "host samerole all all md5",
                login("agent", "samerole", none),
                "unsure 1",
            ),
            // Both readings match: no doubt.
            ("host all all all md5", login("agent", "all", none), "password 1"),
            (
                "host sameuser all all md5",
                login("sameuser", "sameuser", none),
                "password 1",
            ),
            ("host shop all all md5", login("all", "shop", none), "password 1"),
            ("host shop +admins all md5", login("+admins", "shop", none), "unsure 1"),
            (
                "host shop +admins all md5",
                login("+admins", "shop", Some(&admins)),
                "password 1",
            ),
            ("host shop @names all md5", login("@names", "shop", none), "password 1"),
            // Other names spelled like keywords elsewhere change nothing.
            (
                "host sameuser all all md5",
                login("agent", "shop", none),
                "add at the end",
            ),
            // +group: through the reader's memberships, nested or not.
            (
                "host shop +admins all md5",
                login("agent", "shop", none),
                "add at the end",
            ),
            (
                "host shop +admins all md5",
                login("agent", "shop", Some(&admins)),
                "password 1",
            ),
            ("host shop +admins all md5", login("agent", "shop", None), "unsure 1"),
            (
                "host shop +pgmcp_reader all md5",
                login("agent", "shop", None),
                "password 1",
            ),
            ("host shop +agent all md5", login("agent", "shop", None), "password 1"),
            // samerole: a member of the role named like the database.
            (
                "host samerole all all md5",
                login("agent", "admins", Some(&admins)),
                "password 1",
            ),
            (
                "host samerole all all md5",
                login("agent", "admins", none),
                "add at the end",
            ),
            ("host samerole all all md5", login("agent", "admins", None), "unsure 1"),
        ];
        for (text, login, expected) in cases {
            let got = match verdict(&[rule(1, text)], login, from) {
                Verdict::Password(r) => format!("password {}", r.line),
                Verdict::Trust(r) => format!("trust {}", r.line),
                Verdict::Add { above: Some(r), .. } => format!("add above {}", r.line),
                Verdict::Add { above: None, .. } => "add at the end".to_owned(),
                Verdict::Unsure { rule, .. } => format!("unsure {}", rule.line),
            };
            assert_eq!(got, expected, "{text} for {login:?}");
        }
        match verdict(
            &[rule(1, "host shop +admins all md5")],
            login("agent", "shop", None),
            from,
        ) {
            Verdict::Unsure { why, .. } => {
                assert_eq!(why, "whether the role pgmcp_reader is a member of role admins")
            }
            other => panic!("{other:?}"),
        }
        match verdict(
            &[rule(1, "host sameuser all all md5")],
            login("agent", "sameuser", none),
            from,
        ) {
            Verdict::Unsure { why, .. } => assert_eq!(
                why,
                "whether sameuser there is pg_hba.conf's keyword or the database named \"sameuser\" \
                 (pg_hba_file_rules does not show quotes)"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_the_login_will_be_a_member_of() {
        let groups = |exists, superuser, groups: Option<&[&str]>| ReaderGroups {
            exists,
            superuser,
            groups: groups.map(|g| g.iter().map(|s| s.to_string()).collect()),
        };
        let cases = [
            // Not there yet: the SQL creates it with no memberships.
            (groups(false, false, None), Some(vec![])),
            (
                groups(true, false, Some(&["a", "r"])),
                Some(vec!["a".to_owned(), "r".to_owned()]),
            ),
            // pg_has_role says yes to everything for a superuser.
            (groups(true, true, Some(&["a", "b", "r"])), None),
        ];
        for (reply, expected) in cases {
            assert_eq!(reply.of_new_login(), expected, "{reply:?}");
        }
    }
}
