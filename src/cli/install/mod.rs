//! `pgmcp install`: the entry a desktop client (Claude Desktop, Cursor) needs
//! to start pgmcp, merged into the client's own config file.
//!
//! Everything but reading and writing that file is pure and table-tested:
//! where the client keeps its file ([`Client::config_file`]), the entry
//! ([`Entry`], with the database and its password in `env`, never in `args`),
//! the merge that leaves every other key as it was
//! ([`merge`](client_file::merge)) and Cursor's one-click link
//! ([`cursor_link`](entry::cursor_link)). [`write`](fn@write) is the one
//! function that touches the file: a `.bak` of the old one, then the new one
//! through a temporary file and a rename, with the old one's permissions.
//!
//! # Layout
//!
//! - `mod.rs`: the clients ([`Client`]), the errors ([`InstallError`],
//!   [`OtherDatabase`]), and the re-exports callers use
//!   (`crate::cli::install::{Entry, write, ...}`).
//! - `entry.rs`: what goes in the file ([`Entry`], [`Database`]) and the
//!   ways it is shown: [`printed`], [`cursor_link`](entry::cursor_link),
//!   [`install_line`].
//! - `client_file.rs`: reading the client's JSON and merging into it
//!   ([`merge`](client_file::merge), [`Malformed`],
//!   [`duplicate_keys`](client_file::duplicate_keys)), the database an entry
//!   already there names ([`named_database`](client_file::named_database)),
//!   and a name still free ([`free_name`](client_file::free_name)).
//! - `write.rs`: [`write`](fn@write), the one function that touches the
//!   file, and [`current_binary`].

mod client_file;
mod entry;
mod write;

pub use client_file::Malformed;
pub use entry::{Database, Entry, PASSWORD_NOTE, install_line, printed};
pub use write::{current_binary, write};

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The desktop clients `pgmcp install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Desktop: `claude_desktop_config.json` in the OS's config dir.
    ClaudeDesktop,
    /// Cursor: `~/.cursor/mcp.json` (all projects).
    Cursor,
}

impl Client {
    /// The client's name, as a person knows it.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Cursor => "Cursor",
        }
    }

    /// What makes the client read its config file again.
    pub fn pick_up(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Restart Claude Desktop (quit it fully, then open it again) to pick it up.",
            Client::Cursor => "Reload Cursor (or open Cursor Settings → MCP) to pick it up.",
        }
    }

    /// Where the client reads its servers from. `config_dir` is the OS's
    /// per-user config root (`dirs::config_dir()`: `~/Library/Application
    /// Support` on macOS, `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` or
    /// `~/.config` on Linux), `home` the home directory. A relative one is
    /// no answer: it would name a file under whatever directory pgmcp was
    /// started in.
    pub fn config_file(self, config_dir: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
        match self {
            Client::ClaudeDesktop => config_dir
                .filter(|d| d.is_absolute())
                .map(|d| d.join("Claude").join("claude_desktop_config.json")),
            // Cursor uses the same place on every OS.
            Client::Cursor => home
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cursor").join("mcp.json")),
        }
    }
}

/// Why `pgmcp install` did nothing. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot tell where {client} keeps its config (no home directory): name the file with --client-config PATH")]
    NoClientConfig { client: &'static str },
    #[error("{}: {reason}; fix it or move it away, then run pgmcp install again (the file was left unchanged)", .file.display())]
    Malformed { file: PathBuf, reason: Malformed },
    #[error("cannot read {}: {err}", .file.display())]
    Read { file: PathBuf, err: io::Error },
    #[error("cannot write {}: {err} (the previous file, if any, is unchanged)", .file.display())]
    Write { file: PathBuf, err: io::Error },
    /// Says which setting is wrong, never quoting a password.
    #[error("{0}")]
    Database(String),
    #[error("--name: give the server a name (the key under \"mcpServers\")")]
    EmptyName,
    #[error("cannot read the working directory (relative paths are made absolute against it): {0}")]
    CurrentDir(io::Error),
    #[error("cannot find the pgmcp binary that is running, to name it in the entry: {0}")]
    CurrentExe(io::Error),
    #[error("{what} is not valid UTF-8 ({}); the client's JSON file cannot name it", .path.display())]
    NotUtf8 { what: &'static str, path: PathBuf },
    /// The entry holds a password and the file is one others can read:
    /// pgmcp does not change a file's permissions behind its owner's back,
    /// and does not put a password where others read it.
    #[error(
        "{file} can be read by other users (mode {mode:04o}) and the entry would put the database password in it, \
         so nothing was written (the file was left unchanged). Either make the file yours alone \
         (chmod 600 {file}) and run pgmcp install again, or keep the password out of the entry: put it in \
         ~/.pgpass (mode 0600, a line host:port:database:user:password) and run pgmcp install with a \
         --database that holds no password",
        file = .file.display()
    )]
    ReadableByOthers { file: PathBuf, mode: u32 },
    /// An entry of that name is there for another database: replacing it
    /// would lose that database's entry without a word, and the person most
    /// likely wanted both.
    #[error("{0}")]
    OtherDatabase(Box<OtherDatabase>),
}

/// What [`InstallError::OtherDatabase`] says: which database the entry is
/// for, which this install is for, and how to keep both.
#[derive(Debug)]
pub struct OtherDatabase {
    pub file: PathBuf,
    pub name: String,
    /// As [`shown_database`](client_file::shown_database) shows it: never a
    /// password.
    pub existing: String,
    pub wanted: String,
    /// A name no entry in the file has, for this install
    /// ([`free_name`](client_file::free_name)).
    pub free_name: String,
    /// The whole install line under `free_name`, when the caller knows
    /// the command line ([`InstallError::with_rerun`]).
    pub rerun: Option<String>,
}

impl fmt::Display for OtherDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} already has a \"{}\" entry, for another database: {}. This install is for {}, \
             so the file was left unchanged.\n{}\nTo replace the \"{}\" entry instead, add --replace.",
            self.file.display(),
            self.name,
            self.existing,
            self.wanted,
            keep_both(&self.free_name, self.rerun.as_deref()),
            self.name
        )
    }
}

impl InstallError {
    /// For a refusal of another database under the same name: the line
    /// that keeps both, made by `line` from the free name. The library
    /// alone knows the file's names; only the command line knows how the
    /// person asked.
    pub fn with_rerun(mut self, line: impl FnOnce(&str) -> String) -> InstallError {
        if let InstallError::OtherDatabase(refusal) = &mut self {
            refusal.rerun = Some(line(&refusal.free_name));
        }
        self
    }
}

/// How to keep both entries: the line to run when there is one (a person
/// copies it; taking "the same install with another --name" literally
/// repeats --name, which the command line refuses), else the name to give.
fn keep_both(free_name: &str, rerun: Option<&str>) -> String {
    match rerun {
        Some(line) => {
            format!("To keep both, give this one a name of its own (the key under \"mcpServers\"):\n  {line}")
        }
        None => format!(
            "To keep both, give this one a name of its own (the key under \"mcpServers\"), such as --name {free_name}."
        ),
    }
}

/// `pgmcp install`'s own options; `--config` and `--database` are the
/// global ones, naming what the installed entry uses.
// `--help` text: `<config dir>` is meant as printed, not as HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The desktop client to add pgmcp to.
    #[arg(value_enum)]
    pub client: Client,
    /// The server's name in the client (the key under "mcpServers"). Running
    /// install again with the same name and database updates that entry in
    /// place; an entry of that name for another database is left alone
    /// (exit 2): give this one another --name to keep both, or --replace.
    #[arg(long, default_value = "pgmcp", value_name = "NAME")]
    pub name: String,
    /// Replace an entry of that name even when it is for another database
    /// (what it was for is printed).
    #[arg(long)]
    pub replace: bool,
    /// Show the entry (and, for Cursor, a one-click install link) instead of
    /// writing any file.
    #[arg(long)]
    pub print: bool,
    /// The client's config file, if not in its usual place (Claude Desktop:
    /// <config dir>/Claude/claude_desktop_config.json; Cursor: ~/.cursor/mcp.json).
    #[arg(long, value_name = "PATH")]
    pub client_config: Option<PathBuf>,
}

/// `pgmcp install`: build the entry, then print it or merge it into the
/// client's file, and tell the person what changed and what to do next.
pub(crate) fn install(
    args: InstallArgs,
    config: Option<PathBuf>,
    database: Option<String>,
) -> Result<std::process::ExitCode, crate::cli::CliError> {
    if args.name.is_empty() {
        return Err(InstallError::EmptyName.into());
    }
    // The client starts pgmcp in a directory of its own: every path absolute.
    let cwd = std::env::current_dir().map_err(InstallError::CurrentDir)?;
    let config = config.map(|c| cwd.join(c));
    if let Some(path) = &config {
        // Refused now, as `serve` would refuse it at every start.
        crate::config::Config::load(path)?;
    }
    let database = database
        .map(|d| Database::from_given(&d, &cwd, &crate::process::environment::var))
        .transpose()?;
    let entry = Entry::new(&current_binary()?, config.as_deref(), database.as_ref())?;
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if args.print {
        let _ = write!(stdout, "{}", printed(args.client, &args.name, &entry));
    } else {
        let named_file = args.client_config.map(|path| cwd.join(path));
        let file = match &named_file {
            Some(path) => path.clone(),
            None => args
                .client
                .config_file(dirs::config_dir().as_deref(), dirs::home_dir().as_deref())
                .ok_or(InstallError::NoClientConfig {
                    client: args.client.name(),
                })?,
        };
        let written = write(&file, &args.name, &entry, args.replace).map_err(|e| {
            e.with_rerun(|free_name| install_line(args.client, free_name, &entry, named_file.as_deref()))
        })?;
        let _ = write!(stdout, "{}", written.summary(args.client, &args.name));
    }
    if entry.has_password() {
        eprintln!("note: {}", PASSWORD_NOTE);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Written in Unix paths (and, for the password file, Unix defaults).
    #[cfg(unix)]
    #[test]
    fn client_config_files() {
        let dir = Some(Path::new("/home/u/.config"));
        let home = Some(Path::new("/home/u"));
        type Case<'a> = (Client, Option<&'a Path>, Option<&'a Path>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                Client::ClaudeDesktop,
                dir,
                home,
                Some("/home/u/.config/Claude/claude_desktop_config.json"),
            ),
            (
                Client::ClaudeDesktop,
                Some(Path::new("/Users/u/Library/Application Support")),
                home,
                Some("/Users/u/Library/Application Support/Claude/claude_desktop_config.json"),
            ),
            (Client::ClaudeDesktop, None, home, None),
            (Client::ClaudeDesktop, Some(Path::new("rel/.config")), home, None),
            (Client::Cursor, dir, home, Some("/home/u/.cursor/mcp.json")),
            (Client::Cursor, dir, None, None),
            (Client::Cursor, dir, Some(Path::new("u")), None),
        ];
        for (client, dir, home, want) in cases {
            assert_eq!(
                client.config_file(*dir, *home),
                want.map(PathBuf::from),
                "{client:?} {dir:?} {home:?}"
            );
        }
    }
}
