//! The questions `pgmcp configure` asks, as tables: [`FIRST`], what most
//! people need, then by section the [`ADVANCED`] ones, each a config
//! field with how its answer is read ([`Kind`]) and what it does, in the
//! README's words. Apart from the dialogue because they are data: the
//! tests check them against the config, and a new setting is one row here.

use std::borrow::Cow;
use std::sync::LazyLock;

use crate::guard::Rule;

/// How an answer is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A whole number from `min` to `max`: the range of the field's type in
    /// the file (a port is 0 to 65535), so no answer fails as JSON later.
    Number {
        min: i64,
        max: i64,
    },
    /// Yes or no (true, false, on, off, y, n too), stored as `true`/`false`.
    Bool,
    Choice(&'static [&'static str]),
    /// Words separated by spaces, stored as a list of strings (hook `args`).
    Words,
    /// A PostgreSQL URL or `key=value` string, or the path to an SQLite or
    /// DuckDB file, stored as that file's URL.
    Database,
}

/// Any whole number the file can hold; the config's own checks say more
/// (most must be above 0).
pub(super) const WHOLE: Kind = Kind::Number {
    min: i64::MIN,
    max: i64::MAX,
};
/// A field the file holds unsigned.
pub(super) const UNSIGNED: Kind = Kind::Number { min: 0, max: i64::MAX };
pub(super) const PORT: Kind = Kind::Number {
    min: 0,
    max: u16::MAX as i64,
};

/// A scalar field: its dotted path in the file, how to read it, and what it
/// does, in a few words.
#[derive(Debug, Clone)]
pub struct Field {
    pub path: Cow<'static, str>,
    pub kind: Kind,
    pub about: Cow<'static, str>,
}

const fn field(path: &'static str, kind: Kind, about: &'static str) -> Field {
    Field {
        path: Cow::Borrowed(path),
        kind,
        about: Cow::Borrowed(about),
    }
}

pub(super) const LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];
const FORMATS: &[&str] = &["text", "json"];

/// The questions asked first, in this order: what most people need.
pub const FIRST: &[Field] = &[
    field(
        "database",
        Kind::Database,
        "Which database? A PostgreSQL URL, such as postgresql://user@host:5432/shop,\n\
         or the path to an SQLite or DuckDB file, such as /home/me/shop.sqlite, ./data.db\n\
         or ./stats.duckdb. No password here: it goes in ~/.pgpass (for a new read-only login,\n\
         `pgmcp check --suggest-role --login NAME` prints the SQL and the line to save).",
    ),
    field(
        "server.read_only",
        Kind::Bool,
        "Read-only? Every query runs in a read-only transaction, so the agent changes nothing.\n\
         Answer no to allow writes (the protection switches still refuse DROP, TRUNCATE, ...).",
    ),
    field(
        "query.max_rows",
        WHOLE,
        "Row cap: the most rows one query call returns; reading stops there.",
    ),
];

/// The question between [`FIRST`] and [`ADVANCED`].
pub const ADVANCED_QUESTION: &str =
    "Change advanced settings (timeouts, TLS, DuckDB, protection switches, hooks, sanitization...)? [no]: ";

/// A list field, the fields of each entry (`optional` ones may be left
/// empty), and what the list does.
#[derive(Debug, Clone, Copy)]
pub struct List {
    pub path: &'static str,
    pub fields: &'static [(&'static str, Kind)],
    pub optional: &'static [&'static str],
    pub about: &'static str,
}

/// One question of the advanced sections.
#[derive(Debug, Clone)]
pub enum Question {
    Field(Field),
    List(List),
}

/// Advanced questions under one heading.
#[derive(Debug, Clone)]
pub struct Section {
    pub heading: &'static str,
    pub questions: Vec<Question>,
}

const HOOK: &[(&str, Kind)] = &[
    ("pattern", Kind::Text),
    ("command", Kind::Text),
    ("args", Kind::Words),
    ("timeout_seconds", WHOLE),
];

fn fields(list: &[Field]) -> Vec<Question> {
    list.iter().cloned().map(Question::Field).collect()
}

/// Every other question, by section, in the order asked. The hooks'
/// default timeout comes after the hook lists: it is required only once a
/// hook exists.
pub static ADVANCED: LazyLock<Vec<Section>> = LazyLock::new(|| {
    let switches = Rule::switches()
        .map(|(rule, flag)| {
            Question::Field(Field {
                path: Cow::Owned(format!("protection.{flag}")),
                kind: Kind::Bool,
                about: Cow::Owned(format!("Allows: {}", brief(rule.spec().allows))),
            })
        })
        .collect();
    let list = |list: List| vec![Question::List(list)];
    vec![
        Section {
            heading: "PostgreSQL connection, when no database URL is given \
                      (unset: the PG* variables, then libpq's defaults)",
            questions: fields(&[
                field("connection.host", Kind::Text, "Host name, IP address, or Unix-socket directory (starts with /)."),
                field("connection.port", PORT, "TCP port (libpq's default: 5432)."),
                field("connection.dbname", Kind::Text, "Database name (default: the user name)."),
                field("connection.user", Kind::Text, "User name (default: your OS user)."),
                field(
                    "connection.role",
                    Kind::Text,
                    "A role every statement runs as (SET LOCAL ROLE); the login must be a member.",
                ),
                field(
                    "connection.read_only_as_login",
                    Kind::Bool,
                    "Run read-only queries of a login that can reach outside the database as that login,\n\
                     rather than as pg_read_all_data.",
                ),
                field("connection.application_name", Kind::Text, "Shown in pg_stat_activity (default: pgmcp)."),
                field(
                    "connection.connect_timeout_seconds",
                    UNSIGNED,
                    "How long a connection attempt may take, in seconds (default: 10).",
                ),
                field("connection.passfile", Kind::Text, "The password file to read instead of ~/.pgpass."),
            ]),
        },
        Section {
            heading: "TLS to PostgreSQL",
            questions: fields(&[
                field(
                    "connection.sslmode",
                    Kind::Choice(&crate::backend::postgres::SslMode::NAMES),
                    "Whether TLS is used, and what it checks (default: prefer).",
                ),
                field("connection.sslrootcert", Kind::Text, "PEM file of the CAs to trust, or system."),
                field("connection.sslcert", Kind::Text, "Client certificate (PEM), for servers that ask for one."),
                field("connection.sslkey", Kind::Text, "The client certificate's key."),
            ]),
        },
        Section {
            heading: "SQLite and DuckDB files",
            questions: fields(&[
                field(
                    "sqlite.root",
                    Kind::Text,
                    "A directory of SQLite files that calls may name with their database argument.",
                ),
                field(
                    "duckdb.memory_limit",
                    Kind::Text,
                    "DuckDB's memory limit: a number and a unit, 1GB, 512MiB (default: 80% of memory).",
                ),
                field(
                    "duckdb.threads",
                    WHOLE,
                    "Worker threads a DuckDB query may use (default: one per core).",
                ),
            ]),
        },
        Section {
            heading: "Timeouts and limits",
            questions: fields(&[
                field(
                    "query.default_timeout_seconds",
                    WHOLE,
                    "How long a query call may take, in seconds, waiting for a connection included.",
                ),
                field("query.list_tables_timeout_seconds", WHOLE, "The same for list_tables."),
                field("query.describe_table_timeout_seconds", WHOLE, "The same for describe_table."),
                field(
                    "query.default_limit",
                    WHOLE,
                    "Rows a query call without a limit returns (at most the row cap).",
                ),
                field(
                    "query.max_result_length",
                    WHOLE,
                    "Most bytes of JSON any tool's answer holds.",
                ),
                field("query.max_sql_length", WHOLE, "Longest SQL accepted, in characters."),
                field(
                    "query.max_params_bytes",
                    WHOLE,
                    "Most bytes of parameter values one query call may send.",
                ),
            ])
            .into_iter()
            .chain(list(List {
                path: "query.timeout_rules",
                fields: &[("pattern", Kind::Text), ("timeout_seconds", WHOLE)],
                optional: &[],
                about: "Timeouts by pattern: the first rule whose pattern matches the SQL sets its timeout.",
            }))
            .collect(),
        },
        Section {
            heading: "Connection pool",
            questions: fields(&[
                field("pool.max_conns", WHOLE, "Most connections, and so most calls running at once."),
                field(
                    "pool.max_waiting",
                    WHOLE,
                    "Most calls waiting for a connection; a call past it is refused at once.",
                ),
                field(
                    "pool.max_conn_lifetime_seconds",
                    WHOLE,
                    "Connections older than this are closed instead of reused.",
                ),
                field("pool.max_conn_idle_seconds", WHOLE, "Connections idle this long are closed."),
            ]),
        },
        Section {
            heading: "Logging",
            questions: fields(&[
                field("logging.level", Kind::Choice(LEVELS), "How much pgmcp logs."),
                field("logging.format", Kind::Choice(FORMATS), "Lines of text, or of JSON."),
                field("logging.output", Kind::Text, "A file path, or stderr."),
            ]),
        },
        Section {
            heading: "Protection switches: each allows what the guard refuses by default \
                      (see the README's Protection section)",
            questions: switches,
        },
        Section {
            heading: "Error prompts and sanitization",
            questions: [
                List {
                    path: "error_prompts",
                    fields: &[("pattern", Kind::Text), ("message", Kind::Text)],
                    optional: &[],
                    about: "Text added to an error whose message matches the pattern.",
                },
                List {
                    path: "sanitization",
                    fields: &[
                        ("pattern", Kind::Text),
                        ("replacement", Kind::Text),
                        ("description", Kind::Text),
                    ],
                    optional: &["description"],
                    about: "Replacements applied to every string value of a result (to mask what the agent must not see).",
                },
            ]
            .into_iter()
            .map(Question::List)
            .collect(),
        },
        Section {
            heading: "Hooks: programs that accept, rewrite or refuse queries and results",
            questions: [
                Question::List(List {
                    path: "hooks.before_query",
                    fields: HOOK,
                    optional: &["args", "timeout_seconds"],
                    about: "Programs run before each query whose SQL matches the pattern.",
                }),
                Question::List(List {
                    path: "hooks.after_query",
                    fields: HOOK,
                    optional: &["args", "timeout_seconds"],
                    about: "Programs run after each query whose SQL matches the pattern, with its result.",
                }),
                Question::Field(field(
                    "hooks.default_timeout_seconds",
                    WHOLE,
                    "Timeout of hooks that set none, in seconds (required once a hook exists).",
                )),
            ]
            .into(),
        },
    ]
});

/// What a protection switch allows, as the rule table says it for the
/// README, cut to its first few words and without Markdown.
fn brief(allows: &str) -> String {
    let mut text = allows.replace('`', "");
    // Links keep their words: `[the file sandbox](#the-file-sandbox)`.
    while let (Some(open), Some(mid)) = (text.find('['), text.find("](")) {
        match text[mid..].find(')') {
            Some(close) if open < mid => {
                let words = text[open + 1..mid].to_owned();
                text.replace_range(open..mid + close + 1, &words);
            }
            _ => break,
        }
    }
    // The first clause: what follows a parenthesis or a semicolon explains.
    let text = text
        .split([';', '('])
        .next()
        .unwrap_or_default()
        .trim_end()
        .trim_end_matches('.');
    if text.chars().count() <= 72 {
        return format!("{text}.");
    }
    // Whole items of the list, else whole words, as many as fit.
    let fit: String = text.chars().take(72).collect();
    match fit.rfind(", ").or_else(|| fit.rfind(' ')) {
        Some(end) => format!("{}, ...", &fit[..end]),
        None => format!("{fit}..."),
    }
}

/// Every scalar question, first and advanced, for asking one again.
pub(super) fn every_field() -> impl Iterator<Item = &'static Field> {
    FIRST.iter().chain(ADVANCED.iter().flat_map(|section| {
        section.questions.iter().filter_map(|q| match q {
            Question::Field(f) => Some(f),
            Question::List(_) => None,
        })
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cli::wizard::document::{base, set, validate};
    use crate::config::RawConfig;

    fn lists() -> impl Iterator<Item = &'static List> {
        ADVANCED.iter().flat_map(|section| {
            section.questions.iter().filter_map(|q| match q {
                Question::List(list) => Some(list),
                Question::Field(_) => None,
            })
        })
    }

    #[test]
    fn every_field_and_list_is_a_config_field() {
        // Setting each field to a plausible value must not be refused as an
        // unknown field: the table and RawConfig agree.
        for f in every_field() {
            let value = match f.kind {
                Kind::Number { min, max } => json!(5.clamp(min, max)),
                Kind::Bool => json!(true),
                Kind::Choice(names) => json!(names[0]),
                // The one text field checked against the file system.
                Kind::Text if f.path == "sqlite.root" => json!(std::env::temp_dir()),
                Kind::Text if f.path == "duckdb.memory_limit" => json!("1GB"),
                Kind::Text | Kind::Words | Kind::Database => json!("/tmp/x"),
            };
            let mut doc = base();
            set(&mut doc, &f.path, Some(value));
            assert!(validate(&doc, None).is_ok(), "{}: {:?}", f.path, validate(&doc, None));
            assert!(!f.about.is_empty(), "{} says what it does", f.path);
        }
        for list in lists() {
            let mut doc = base();
            set(&mut doc, list.path, Some(json!([])));
            assert!(validate(&doc, None).is_ok(), "{}", list.path);
        }
        // Every scalar of every section is asked somewhere, but for the
        // HTTP server's, which `serve --http` alone reads, the protection
        // section's lists of function names, and which built-in tools are
        // served, which goes with curated tools: all edited in the file.
        let defaults = serde_json::to_value(RawConfig::defaults()).unwrap();
        let unasked = ["protection.blocked_functions", "protection.read_only_functions"];
        for (section, fields) in defaults.as_object().unwrap() {
            for (name, value) in fields.as_object().into_iter().flatten() {
                let path = format!("{section}.{name}");
                if value.is_array()
                    || section == "server" && name != "read_only"
                    || section == "tools_enabled"
                    || unasked.contains(&&*path)
                {
                    continue;
                }
                assert!(every_field().any(|f| f.path == path), "{path} is asked");
            }
        }
    }

    #[test]
    fn switches_are_described_briefly() {
        for (allows, brief_text) in [
            ("`TRUNCATE`.", "TRUNCATE."),
            (
                "`SET`, `RESET`, `RESET ALL`, `UPDATE pg_settings` (session settings could weaken later checks).",
                "SET, RESET, RESET ALL, UPDATE pg_settings.",
            ),
            (
                "SQLite and DuckDB: `ATTACH`/`DETACH` (DuckDB: and `COPY FROM DATABASE`); on Linux, inside [the file sandbox](#the-file-sandbox).",
                "SQLite and DuckDB: ATTACH/DETACH.",
            ),
            (
                "SQLite: `VACUUM INTO`, which writes a copy of the database to any path; on Linux, inside [the file sandbox](#the-file-sandbox).",
                "SQLite: VACUUM INTO, which writes a copy of the database to any path.",
            ),
            (
                "`DROP` of any object, `DROP DATABASE`, `DROP ROLE`, `DROP OWNED`, `ALTER TABLE ... DROP COLUMN`, `DROP CONSTRAINT`",
                "DROP of any object, DROP DATABASE, DROP ROLE, DROP OWNED, ...",
            ),
            (
                "Inside [the file sandbox](#the-file-sandbox) only.",
                "Inside the file sandbox only.",
            ),
        ] {
            assert_eq!(brief(allows), brief_text);
        }
        for (rule, flag) in Rule::switches() {
            let text = brief(rule.spec().allows);
            assert!(
                text.len() > 4 && text.chars().count() <= 78 && !text.contains(['`', '[', '(']),
                "{flag}: {text}"
            );
        }
    }
}
