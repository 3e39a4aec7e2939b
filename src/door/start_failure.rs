//! A `pgmcp serve` that cannot start, said where its person looks: in the
//! client.
//!
//! Started by a desktop client, a pgmcp that exits at start leaves the
//! person a bare "connection closed", the reason in a log file they do not
//! know of. So when what stops it is something a person fixes in their
//! settings (the config file; a variable; the bundle's form: two settings
//! that each name a database, a value that is no value, a database file that
//! is not there, a log file that cannot be used, a file switch the kernel
//! cannot fence here), `serve` over stdio serves [`Server`] instead: the
//! handshake, the same tools as ever, and the reason with what to change and
//! where, as the server's instructions and as the answer (`isError`) to
//! every tool call. What a person cannot fix in settings (no async runtime,
//! no stdin) still ends the process.
//!
//! [`StartFailure`] is the reason and the fix in the person's words, for
//! where their settings live ([`Audience`]). Invariant: [`Server`] touches
//! no database, runs no hook and opens no file: it holds only the words.

use std::path::Path;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

use crate::backend::ChoiceError;
use crate::backend::named::Setting;
use crate::config::{ConfigError, LoadError};
use crate::process::sandbox::SandboxError;

/// Where the person whose pgmcp could not start changes its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The MCP bundle's settings form, which Claude Desktop shows under
    /// Settings → Extensions (the bundle's manifest sets `PGMCP_BUNDLE`).
    Bundle,
    /// A client's config entry for pgmcp (`pgmcp install`'s, or one written
    /// by hand): variables in its `env`, arguments in its `args`.
    ClientEntry,
    /// A person who started pgmcp from a terminal or a service manager
    /// (`serve --http`).
    Terminal,
}

/// Set, to anything, by the bundle's manifest: the settings are in its form.
pub const BUNDLE_MARKER: &str = "PGMCP_BUNDLE";

impl Audience {
    /// Who reads a failure of `serve` over stdio: the bundle's person when
    /// the bundle started pgmcp, else whoever wrote the client's entry.
    pub fn stdio(env: &dyn Fn(&str) -> Option<String>) -> Audience {
        if env(BUNDLE_MARKER).is_some() {
            Audience::Bundle
        } else {
            Audience::ClientEntry
        }
    }

    /// The end of every fix.
    fn restart(self) -> &'static str {
        match self {
            Audience::Bundle | Audience::ClientEntry => "then restart pgmcp",
            Audience::Terminal => "then start pgmcp again",
        }
    }
}

/// Where the bundle's settings form is, as a person finds it.
const BUNDLE_FORM: &str = "Claude Desktop → Settings → Extensions → pgmcp";

/// A setting of the bundle's form: the variable it reaches pgmcp as
/// (`xtask/src/bundle.rs` maps each `user_config` to it), its title in the
/// form, and what it is, in words. `tests/it/release.rs` checks the titles
/// against the manifest's through the answers that quote them.
#[derive(Debug, Clone, Copy)]
struct BundleSetting {
    variable: &'static str,
    title: &'static str,
    what: &'static str,
}

const BUNDLE_SETTINGS: [BundleSetting; 6] = [
    BundleSetting {
        variable: "PGMCP_PG_CONNSTRING",
        title: "PostgreSQL connection string",
        what: "a PostgreSQL connection string",
    },
    BundleSetting {
        variable: "PGPASSWORD",
        title: "PostgreSQL password",
        what: "a PostgreSQL password",
    },
    BundleSetting {
        variable: "PGMCP_DATABASE_FILE",
        title: "Or: an SQLite or DuckDB file",
        what: "a database file",
    },
    BundleSetting {
        variable: "PGMCP_READ_ONLY",
        title: "Read-only",
        what: "read-only mode",
    },
    BundleSetting {
        variable: "PGMCP_MAX_ROWS",
        title: "Row cap",
        what: "a row cap",
    },
    BundleSetting {
        variable: "PGMCP_DEMO",
        title: "Try the demo shop",
        what: "the demo shop",
    },
];

fn bundle_setting(variable: &str) -> Option<&'static BundleSetting> {
    BUNDLE_SETTINGS.iter().find(|s| s.variable == variable)
}

/// Where a setting an error names is changed. Errors name a setting as a
/// person sets it (`--database`, `PGMCP_MAX_ROWS`, `sqlite.root`, `config
/// FILE: database`), so the name tells: a name in capitals is a variable, a
/// dotted field or `config ...` the config file's. A bare parameter
/// (`port`, `sslmode`) may come from any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place<'a> {
    Variable(&'a str),
    Flag,
    ConfigFile,
    Unknown,
}

impl Place<'_> {
    fn of(name: &str) -> Place<'_> {
        let variable = name.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        match name {
            "--database" => Place::Flag,
            _ if variable => Place::Variable(name),
            _ if name.contains('.') || name.starts_with("config") => Place::ConfigFile,
            _ => Place::Unknown,
        }
    }
}

/// Why `pgmcp serve` could not start, and what the person changes, in their
/// words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartFailure {
    /// What is wrong, naming the setting (no trailing period).
    reason: String,
    /// What to change, where, and to restart (no trailing period).
    fix: String,
}

impl std::fmt::Display for StartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}. {}.", self.reason, self.fix)
    }
}

impl StartFailure {
    /// The config file, or the environment over it, could not be loaded.
    pub fn load(error: &LoadError, audience: Audience) -> StartFailure {
        match error {
            LoadError::File(e) => Self::config(e, audience),
            LoadError::Environment(e) => Self::variable(e.variable, &e.message, audience),
        }
    }

    /// A config error: the file's (or, for the built-in defaults' log, no
    /// file's) field that cannot be used.
    pub fn config(error: &ConfigError, audience: Audience) -> StartFailure {
        let field = error.field.as_deref().map(|f| format!("{f}: ")).unwrap_or_default();
        match &error.file {
            Some(file) => StartFailure {
                reason: format!("the config file {}: {field}{}", file.display(), error.message),
                fix: format!(
                    "Correct it in that file (`pgmcp check` says what is wrong), {}",
                    audience.restart()
                ),
            },
            None => StartFailure {
                reason: format!("its built-in settings: {field}{}", error.message),
                fix: format!(
                    "Set {} in a config file (`pgmcp configure` writes one), {}",
                    error.field.as_deref().unwrap_or("it"),
                    audience.restart()
                ),
            },
        }
    }

    /// The file sandbox the config's switches ask for could not be entered.
    pub fn sandbox(error: &SandboxError, config_file: Option<&Path>, audience: Audience) -> StartFailure {
        StartFailure {
            reason: error.to_string(),
            fix: format!(
                "Change it in {}, {}",
                config_file_words(config_file),
                audience.restart()
            ),
        }
    }

    /// The database settings could not be used. `named_any`: whether any
    /// setting named a database, rather than PostgreSQL's defaults being
    /// all there was.
    pub fn choice(
        error: &ChoiceError,
        config_file: Option<&Path>,
        named_any: bool,
        audience: Audience,
    ) -> StartFailure {
        match error {
            ChoiceError::Both(first, second) => Self::both(first, second, audience),
            ChoiceError::Setting { setting, message } => Self::named(setting, message, error, config_file, audience),
            ChoiceError::Postgres(_) if !named_any => Self::no_database(error, audience),
            ChoiceError::Postgres(e) => Self::named(&e.source_name, &e.message, error, config_file, audience),
        }
    }

    /// `problem` with the value of the setting `name`; `error` says it
    /// whole, for a setting whose place its name does not tell.
    fn named(
        name: &str,
        problem: &str,
        error: &ChoiceError,
        config_file: Option<&Path>,
        audience: Audience,
    ) -> StartFailure {
        match Place::of(name) {
            Place::Variable(variable) => Self::variable(variable, problem, audience),
            Place::Flag => StartFailure {
                reason: format!("--database: {problem}"),
                fix: match audience {
                    Audience::Terminal => format!("Correct --database, {}", audience.restart()),
                    Audience::Bundle | Audience::ClientEntry => format!(
                        "Correct --database in the \"args\" of pgmcp's entry in your MCP client's config file, {}",
                        audience.restart()
                    ),
                },
            },
            Place::ConfigFile => StartFailure {
                reason: format!("{name}: {problem}"),
                fix: format!(
                    "Correct it in {}, {}",
                    config_file_words(config_file),
                    audience.restart()
                ),
            },
            Place::Unknown => StartFailure {
                reason: error.to_string(),
                fix: match audience {
                    Audience::Bundle => format!(
                        "Correct it in {BUNDLE_FORM} (or in {}, if you keep one), {}",
                        config_file_words(config_file),
                        audience.restart()
                    ),
                    Audience::ClientEntry => format!(
                        "Correct it in pgmcp's entry in your MCP client's config file (or in {}), {}",
                        config_file_words(config_file),
                        audience.restart()
                    ),
                    Audience::Terminal => format!("Correct it, {}", audience.restart()),
                },
            },
        }
    }

    /// The variable `variable` holds a value that cannot be used.
    fn variable(variable: &str, problem: &str, audience: Audience) -> StartFailure {
        match (audience, bundle_setting(variable)) {
            (Audience::Bundle, Some(setting)) => StartFailure {
                reason: format!(
                    "the setting \"{}\" ({variable}) cannot be used: {problem}",
                    setting.title
                ),
                fix: format!("Correct it in {BUNDLE_FORM}, {}", audience.restart()),
            },
            (Audience::ClientEntry, _) => StartFailure {
                reason: format!("{variable}: {problem}"),
                fix: format!(
                    "Correct {variable} in the \"env\" of pgmcp's entry in your MCP client's config file, {}",
                    audience.restart()
                ),
            },
            // At a terminal, or a variable the bundle does not set: it
            // comes from the environment pgmcp was started in.
            (Audience::Terminal | Audience::Bundle, _) => StartFailure {
                reason: format!("{variable}: {problem}"),
                fix: format!(
                    "Correct or unset {variable} in the environment pgmcp starts with, {}",
                    audience.restart()
                ),
            },
        }
    }

    /// Two settings that each name a database are both set.
    fn both(first: &Setting, second: &Setting, audience: Audience) -> StartFailure {
        let fields = (bundle_setting(first.name()), bundle_setting(second.name()));
        if let (Audience::Bundle, (Some(a), Some(b))) = (audience, fields) {
            // In the form's order, as the person sees them.
            let place = |s: &BundleSetting| BUNDLE_SETTINGS.iter().position(|t| t.variable == s.variable);
            let (a, b) = if place(a) <= place(b) { (a, b) } else { (b, a) };
            let fix = match (first, second) {
                (Setting::Demo, _) | (_, Setting::Demo) => {
                    let other = if a.variable == Setting::Demo.name() { b } else { a };
                    format!(
                        "Turn \"Try the demo shop\" off, or clear \"{}\", in {BUNDLE_FORM}, {}",
                        other.title,
                        audience.restart()
                    )
                }
                _ => format!("Clear one of them in {BUNDLE_FORM}, {}", audience.restart()),
            };
            return StartFailure {
                reason: format!(
                    "both {} and {} are set in pgmcp's settings (\"{}\" and \"{}\"), and each names a database",
                    a.what, b.what, a.title, b.title
                ),
                fix,
            };
        }
        let (first, second) = (first.name(), second.name());
        StartFailure {
            reason: format!("both {first} and {second} are set, and each names a database"),
            fix: match audience {
                Audience::Terminal => format!("Leave one of them out, {}", audience.restart()),
                Audience::Bundle | Audience::ClientEntry => format!(
                    "Remove one of them from pgmcp's entry in your MCP client's config file (variables are in its \
                     \"env\", --database in its \"args\"), {}",
                    audience.restart()
                ),
            },
        }
    }

    /// Nothing names a database, and PostgreSQL's defaults cannot be filled
    /// in either.
    fn no_database(error: &ChoiceError, audience: Audience) -> StartFailure {
        let fix = match audience {
            Audience::Bundle => format!(
                "Give a PostgreSQL connection string or pick a database file in {BUNDLE_FORM} (or turn on \"Try the \
                 demo shop\" to try pgmcp first), {}",
                audience.restart()
            ),
            Audience::ClientEntry => format!(
                "Name one in the \"env\" of pgmcp's entry in your MCP client's config file: PGMCP_PG_CONNSTRING or \
                 PGMCP_DATABASE_FILE (or PGMCP_DEMO=true, to try pgmcp on its demo shop), {}",
                audience.restart()
            ),
            Audience::Terminal => format!(
                "Name one with --database, PGMCP_PG_CONNSTRING or PGMCP_DATABASE_FILE (or set PGMCP_DEMO=true, to \
                 try pgmcp on its demo shop), {}",
                audience.restart()
            ),
        };
        StartFailure {
            reason: format!("no database is set, and PostgreSQL's defaults do not name one ({error})"),
            fix,
        }
    }

    /// What a tool call answers, and the client shows.
    pub fn text(&self) -> String {
        format!("pgmcp could not start: {self}")
    }

    /// What the model is told at `initialize`.
    fn instructions(&self) -> String {
        format!(
            "{} Until then pgmcp runs no SQL: every tool call answers with this message. Tell the person what it \
             says, in their words.",
            self.text()
        )
    }
}

/// The config file as a fix names it.
fn config_file_words(file: Option<&Path>) -> String {
    match file {
        Some(file) => format!("pgmcp's config file {}", file.display()),
        None => "pgmcp's config file".to_owned(),
    }
}

/// The MCP server of a pgmcp that could not start: the handshake, the
/// tools a client would list (so it shows pgmcp as it always does), and the
/// reason as every tool call's answer. Tools only: resources and prompts
/// would have nothing to show.
#[derive(Clone)]
pub struct Server {
    failure: Arc<StartFailure>,
    tools: Arc<Vec<Tool>>,
}

impl Server {
    pub fn new(failure: StartFailure) -> Server {
        // Nothing this session runs can write: `query` says so.
        let tools = crate::door::mcp::tool_list(
            crate::backend::Dialect::Postgres,
            crate::door::mcp::Writing::Never,
            false,
            true,
        );
        Server {
            failure: Arc::new(failure),
            tools: Arc::new(tools),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("pgmcp", env!("CARGO_PKG_VERSION")).with_title("pgmcp (could not start)"),
            )
            .with_instructions(self.failure.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut listed = ListToolsResult::with_all_items(self.tools.as_ref().clone());
        // As the normal server's list says it (rmcp's `tool_handler`): the
        // 2026-07-28 protocol asks a list to say how long it stays fresh.
        if context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
        {
            listed = listed.with_ttl_ms(0).with_cache_scope(rmcp::model::CacheScope::Public);
        }
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An unknown tool is a malformed request here as in a session that
        // started (README, "Behaviour as an MCP server").
        if !self.tools.iter().any(|tool| tool.name == request.name) {
            return Err(McpError::invalid_params("tool not found", None));
        }
        tracing::info!(tool = %request.name, "tool call answered with why pgmcp could not start");
        Ok(CallToolResult::error(vec![ContentBlock::text(self.failure.text())]).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EnvError;

    #[test]
    fn said_for_where_the_settings_are() {
        let both = ChoiceError::Both(Setting::DatabaseFile, Setting::PgConnstring);
        let max_rows = LoadError::Environment(EnvError {
            variable: "PGMCP_MAX_ROWS",
            message: "\"abc\" is not a whole number greater than 0".to_owned(),
        });
        let cases = [
            (
                StartFailure::choice(&both, None, true, Audience::Bundle),
                "pgmcp could not start: both a PostgreSQL connection string and a database file are set in \
                 pgmcp's settings (\"PostgreSQL connection string\" and \"Or: an SQLite or DuckDB file\"), and each \
                 names a database. Clear one of them in Claude Desktop → Settings → Extensions → pgmcp, then \
                 restart pgmcp.",
            ),
            (
                StartFailure::choice(&both, None, true, Audience::ClientEntry),
                "pgmcp could not start: both PGMCP_DATABASE_FILE and PGMCP_PG_CONNSTRING are set, and each names a \
                 database. Remove one of them from pgmcp's entry in your MCP client's config file (variables are \
                 in its \"env\", --database in its \"args\"), then restart pgmcp.",
            ),
            (
                StartFailure::choice(
                    &ChoiceError::Both(Setting::Demo, Setting::DatabaseFile),
                    None,
                    true,
                    Audience::Bundle,
                ),
                "pgmcp could not start: both a database file and the demo shop are set in pgmcp's settings (\"Or: \
                 an SQLite or DuckDB file\" and \"Try the demo shop\"), and each names a database. Turn \"Try the \
                 demo shop\" off, or clear \"Or: an SQLite or DuckDB file\", in Claude Desktop → Settings → \
                 Extensions → pgmcp, then restart pgmcp.",
            ),
            (
                StartFailure::load(&max_rows, Audience::Bundle),
                "pgmcp could not start: the setting \"Row cap\" (PGMCP_MAX_ROWS) cannot be used: \"abc\" is not a \
                 whole number greater than 0. Correct it in Claude Desktop → Settings → Extensions → pgmcp, then \
                 restart pgmcp.",
            ),
            (
                StartFailure::load(&max_rows, Audience::Terminal),
                "pgmcp could not start: PGMCP_MAX_ROWS: \"abc\" is not a whole number greater than 0. Correct or \
                 unset PGMCP_MAX_ROWS in the environment pgmcp starts with, then start pgmcp again.",
            ),
            (
                StartFailure::choice(
                    &ChoiceError::Setting {
                        setting: "--database".to_owned(),
                        message: "no file at /x.db".to_owned(),
                    },
                    None,
                    true,
                    Audience::ClientEntry,
                ),
                "pgmcp could not start: --database: no file at /x.db. Correct --database in the \"args\" of \
                 pgmcp's entry in your MCP client's config file, then restart pgmcp.",
            ),
            (
                StartFailure::choice(
                    &ChoiceError::Setting {
                        setting: "sqlite.root".to_owned(),
                        message: "not a directory".to_owned(),
                    },
                    Some(Path::new("/home/me/.config/pgmcp/config.json")),
                    true,
                    Audience::Bundle,
                ),
                "pgmcp could not start: sqlite.root: not a directory. Correct it in pgmcp's config file \
                 /home/me/.config/pgmcp/config.json, then restart pgmcp.",
            ),
            (
                StartFailure::load(
                    &LoadError::File(ConfigError {
                        file: Some("/etc/pgmcp.json".into()),
                        field: Some("query.max_rows".to_owned()),
                        message: "must be greater than 0, got 0".to_owned(),
                    }),
                    Audience::ClientEntry,
                ),
                "pgmcp could not start: the config file /etc/pgmcp.json: query.max_rows: must be greater than 0, \
                 got 0. Correct it in that file (`pgmcp check` says what is wrong), then restart pgmcp.",
            ),
        ];
        for (failure, said) in cases {
            assert_eq!(failure.text(), said);
        }
    }

    #[test]
    fn settings_are_told_apart_by_their_names() {
        for (name, place) in [
            ("--database", Place::Flag),
            ("PGMCP_DATABASE_FILE", Place::Variable("PGMCP_DATABASE_FILE")),
            ("PGPORT", Place::Variable("PGPORT")),
            ("sqlite.root", Place::ConfigFile),
            ("config /x.json: database", Place::ConfigFile),
            ("port", Place::Unknown),
            ("_X", Place::Unknown),
            ("", Place::Unknown),
        ] {
            assert_eq!(Place::of(name), place, "{name}");
        }
    }

    #[test]
    fn every_bundle_setting_is_one_variable() {
        let mut variables: Vec<_> = BUNDLE_SETTINGS.iter().map(|s| s.variable).collect();
        variables.sort_unstable();
        variables.dedup();
        assert_eq!(variables.len(), BUNDLE_SETTINGS.len());
    }
}
