//! Hooks: external programs that may accept, rewrite or reject a query before it
//! runs (`before_query`) and its result afterwards (`after_query`).
//!
//! A hook is executed directly, never through a shell; it gets the query text
//! (or the result JSON) on stdin and answers one JSON object on stdout:
//! `{"accept": true, "modified_query": "..."}` / `{"accept": true,
//! "modified_result": "..."}` / `{"accept": false, "error_message": "..."}`.
//! Hooks whose pattern matches run in order, each seeing the previous one's
//! output. Hooks are guardrails: a crash, a non-zero exit, a timeout, an
//! oversized or unparseable answer stops the call.
//!
//! A hook runs in its own process group, and when it ends (answered, failed,
//! timed out or cancelled) the whole group is killed: nothing it started in
//! the background outlives it. (A program that leaves the group on purpose,
//! with `setsid`, is beyond this.) On Windows only the hook process itself is
//! killed: what it started may outlive it.
//!
//! A hook sees only [`ENV_ALLOWED`] of pgmcp's environment, plus
//! `PGMCP_HOOK_STAGE`, `PGMCP_TOOL` and, on a server with several databases,
//! `PGMCP_DATABASE_NAME` (the `databases` entry the call runs on): pgmcp's
//! own environment holds the connection string and `PGPASSWORD`, which a
//! guardrail program has no use for.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::process::trust;

/// Most bytes read from a hook's stdout; more is an error.
pub const MAX_OUTPUT: usize = 1 << 20;

/// The variables a hook inherits from pgmcp, when set: what a program needs to
/// find others, its home, temporary files and its locale. Nothing else, so no
/// `PG*` or `PGMCP_*` secret reaches it. `PATH` keeps only its absolute
/// entries.
pub const ENV_ALLOWED: [&str; 7] = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"];

/// On Windows, the variables a hook inherits besides [`ENV_ALLOWED`]: without
/// `SYSTEMROOT` many programs cannot start (Python, anything using Winsock),
/// `TEMP`/`TMP` and `USERPROFILE` are Windows' `TMPDIR` and `HOME`, and
/// `PATHEXT` is how a program finds others by name. None holds a secret.
pub const ENV_ALLOWED_WINDOWS: [&str; 6] = ["SYSTEMROOT", "WINDIR", "TEMP", "TMP", "USERPROFILE", "PATHEXT"];

/// One configured hook.
#[derive(Debug, Clone)]
pub struct Hook {
    pub pattern: Regex,
    pub command: PathBuf,
    pub args: Vec<String>,
    pub timeout: Duration,
}

impl Hook {
    /// The file that runs: `command` when it is a path, else the first
    /// executable of that name in an absolute directory on `PATH`. `None`
    /// when there is none. A relative `PATH` entry (`.`, or an empty one)
    /// would find the program in the working directory, which pgmcp never
    /// trusts, so it is skipped; [`crate::Config::load`] runs the file found
    /// here, not the name, so the file checked is the file run.
    pub fn program(&self) -> Option<PathBuf> {
        if self.command.components().count() > 1 {
            return Some(self.command.clone()).filter(|p| p.exists());
        }
        find_on_path(&self.command)
    }
}

/// The first executable named `name` in an absolute directory on `PATH`.
/// On Windows a name without an extension is looked for as `name.exe`, as
/// `CreateProcess` does.
pub(crate) fn find_on_path(name: &Path) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .map(|path| match path.extension() {
            None if cfg!(windows) => path.with_extension("exe"),
            _ => path,
        })
        .find(|p| is_executable(p))
}

/// `PATH` without its relative entries (`.`, empty ones), which would find
/// programs in the working directory: it is what the hook's name is looked
/// up in, and what the hook runs with.
/// An empty `PATH` would itself mean the working directory to `execvp`, so
/// with no absolute entry left the hook gets the system's directories.
fn absolute_path_entries() -> std::ffi::OsString {
    let paths = std::env::var_os("PATH").unwrap_or_default();
    match std::env::join_paths(std::env::split_paths(&paths).filter(|dir| dir.is_absolute())) {
        Ok(joined) if !joined.is_empty() => joined,
        _ => system_path(),
    }
}

#[cfg(unix)]
fn system_path() -> std::ffi::OsString {
    "/usr/bin:/bin".into()
}

/// Windows' own directories, `%SYSTEMROOT%\System32` and `%SYSTEMROOT%`.
#[cfg(not(unix))]
fn system_path() -> std::ffi::OsString {
    let root = std::env::var_os("SYSTEMROOT")
        .map(PathBuf::from)
        .filter(|r| r.is_absolute())
        .unwrap_or_else(|| PathBuf::from(r"C:\Windows"));
    std::env::join_paths([root.join("System32"), root]).unwrap_or_default()
}

/// A file that can be run: on Unix, one with an execute bit set.
#[cfg(unix)]
pub(crate) fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A file that can be run: on Windows, whether a file runs depends on its
/// extension and ACLs, not a mode; any file is taken, and one that cannot run
/// fails when it is started.
#[cfg(not(unix))]
pub(crate) fn is_executable(path: &std::path::Path) -> bool {
    path.is_file()
}

impl PartialEq for Hook {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.as_str() == other.pattern.as_str()
            && self.command == other.command
            && self.args == other.args
            && self.timeout == other.timeout
    }
}

/// Which chain a hook belongs to; it names the hook in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    BeforeQuery,
    AfterQuery,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::BeforeQuery => "before_query",
            Stage::AfterQuery => "after_query",
        }
    }
}

/// Why a hook stopped the call. Each text names the hook's stage and what
/// went wrong, for the model and the person reading the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("{} hook error: hook timed out: {command}", .stage.name())]
    Timeout { stage: Stage, command: String },
    #[error("{} hook error: hook failed (command: {command}): {reason}", .stage.name())]
    Failed {
        stage: Stage,
        command: String,
        reason: String,
    },
    #[error("{} hook returned unparseable response (command: {command}): {reason}", .stage.name())]
    Unparseable {
        stage: Stage,
        command: String,
        reason: String,
    },
    /// The hook answered `accept: false`; its `error_message` is the text.
    #[error("{message}")]
    Rejected { message: String },
    #[error("{} hook cancelled: the call was cancelled", .stage.name())]
    Cancelled { stage: Stage },
    /// The `after_query` hooks' answer, read back, is not what `tool`
    /// answers.
    #[error("after_query hook returned an answer that is not a {tool} answer: {reason}")]
    NotAnAnswer { tool: String, reason: String },
}

impl HookError {
    /// Which hook stopped the call and how, without its message (a hook's
    /// rejection can quote the query or the result): safe to log.
    pub fn label(&self) -> String {
        match self {
            HookError::Timeout { stage, command } => format!("{} {command} timed out", stage.name()),
            HookError::Failed { stage, command, .. } => format!("{} {command} failed", stage.name()),
            HookError::Unparseable { stage, command, .. } => {
                format!("{} {command} answered unparseably", stage.name())
            }
            HookError::Rejected { .. } => "rejected".to_owned(),
            HookError::Cancelled { stage } => format!("{} cancelled", stage.name()),
            HookError::NotAnAnswer { tool, .. } => format!("after_query answered no {tool} answer"),
        }
    }
}

#[derive(Debug, Deserialize)]
struct Answer {
    accept: bool,
    #[serde(default)]
    modified_query: Option<String>,
    #[serde(default)]
    modified_result: Option<String>,
    #[serde(default)]
    error_message: Option<String>,
}

/// Run every matching hook of `stage` over `input` in order; returns the
/// (possibly rewritten) text.
pub async fn run_chain(
    stage: Stage,
    tool: &str,
    hooks: &[Hook],
    input: String,
    cancel: &CancellationToken,
) -> Result<String, HookError> {
    run_chain_on(None, stage, tool, hooks, input, cancel).await
}

/// [`run_chain`] for a call on the `databases` entry `database` (`None`:
/// the one database), which each hook finds in `PGMCP_DATABASE_NAME`.
pub async fn run_chain_on(
    database: Option<&str>,
    stage: Stage,
    tool: &str,
    hooks: &[Hook],
    input: String,
    cancel: &CancellationToken,
) -> Result<String, HookError> {
    let mut current = input;
    for hook in hooks {
        if !hook.pattern.is_match(&current) {
            continue;
        }
        let command = hook.command.display().to_string();
        let output = run_one(stage, tool, database, hook, &current, cancel).await?;
        let answer: Answer = serde_json::from_slice(&output).map_err(|e| HookError::Unparseable {
            stage,
            command: command.clone(),
            reason: e.to_string(),
        })?;
        if !answer.accept {
            let fallback = match stage {
                Stage::BeforeQuery => "query rejected by hook",
                Stage::AfterQuery => "result rejected by hook",
            };
            return Err(HookError::Rejected {
                message: answer
                    .error_message
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| fallback.to_owned()),
            });
        }
        let replacement = match stage {
            Stage::BeforeQuery => answer.modified_query,
            Stage::AfterQuery => answer.modified_result,
        };
        if let Some(text) = replacement.filter(|t| !t.is_empty()) {
            current = text;
        }
    }
    Ok(current)
}

/// Start the hook, feed it `input`, and collect its stdout within its timeout.
async fn run_one(
    stage: Stage,
    tool: &str,
    database: Option<&str>,
    hook: &Hook,
    input: &str,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, HookError> {
    let command = hook.command.display().to_string();
    let failed = |reason: String| HookError::Failed {
        stage,
        command: command.clone(),
        reason,
    };
    // Judged again as it runs: a program missing when the config was read,
    // or changed since, is never run unchecked.
    let program = hook.program().ok_or_else(|| failed("not found".to_owned()))?;
    // Judged and run as the same file: hooks run in `/`.
    let program = std::path::absolute(&program).map_err(|e| failed(e.to_string()))?;
    trust::check_path(&program).map_err(|e| failed(e.to_string()))?;
    for arg in hook
        .args
        .iter()
        .map(Path::new)
        .filter(|a| a.is_absolute() && a.is_file())
    {
        trust::check_path(arg).map_err(|e| failed(e.to_string()))?;
    }
    let mut command_line = Command::new(&program);
    command_line
        .env_clear()
        .envs(
            ENV_ALLOWED
                .iter()
                .chain(ENV_ALLOWED_WINDOWS.iter().filter(|_| cfg!(windows)))
                .filter_map(|name| Some((name, std::env::var_os(name)?))),
        )
        // Set after the others, so it replaces the inherited value.
        .env("PATH", absolute_path_entries())
        .env("PGMCP_HOOK_STAGE", stage.name())
        .env("PGMCP_TOOL", tool);
    if let Some(database) = database {
        command_line.env("PGMCP_DATABASE_NAME", database);
    }
    command_line
        // Never the directory pgmcp was started in (a cloned repository):
        // a relative path in `args` means nothing there.
        .current_dir("/")
        .args(&hook.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    // Its own process group, so a timeout can kill whatever it started.
    #[cfg(unix)]
    command_line.process_group(0);
    let mut child = command_line.spawn().map_err(|e| failed(e.to_string()))?;
    // The group's id is the hook's pid, read now: once the hook is reaped
    // `Child::id` no longer gives it.
    let group = child.id().and_then(|p| i32::try_from(p).ok());
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let input = input.as_bytes().to_vec();
    let work = async {
        // A hook may exit without reading its input; a broken pipe is not an error.
        let feed = async {
            if let Some(mut pipe) = stdin.take() {
                let _ = pipe.write_all(&input).await;
            }
        };
        let read = async {
            let mut out = Vec::new();
            if let Some(pipe) = stdout.take() {
                pipe.take(MAX_OUTPUT as u64 + 1)
                    .read_to_end(&mut out)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(out)
        };
        let ((), out) = tokio::join!(feed, read);
        let out = out.map_err(&failed)?;
        if out.len() > MAX_OUTPUT {
            return Err(failed(format!("wrote more than {MAX_OUTPUT} bytes to stdout")));
        }
        let status = child.wait().await.map_err(|e| failed(e.to_string()))?;
        if !status.success() {
            return Err(failed(match status.code() {
                Some(code) => format!("exit status {code}"),
                None => "killed by a signal".to_owned(),
            }));
        }
        Ok(out)
    };
    let outcome = tokio::select! {
        r = tokio::time::timeout(hook.timeout, work) => match r {
            Ok(r) => r,
            Err(_) => Err(HookError::Timeout { stage, command: command.clone() }),
        },
        _ = cancel.cancelled() => Err(HookError::Cancelled { stage }),
    };
    // Whatever the outcome: a hook that answered may still have left a
    // background child behind, and it must not outlive the call.
    kill_group(group, &mut child).await;
    outcome
}

/// Kill the hook's whole process group and reap the hook.
#[cfg(unix)]
async fn kill_group(group: Option<i32>, child: &mut Child) {
    if let Some(pid) = group {
        // SAFETY: kill(2) with a negative pid signals that process group; the
        // group was created for this hook alone (`process_group(0)`). The hook
        // may have been reaped already; its id still names only its group:
        // the kernel does not hand out a pid while a group of that id has
        // members, and an emptied one is reused only after the pid counter
        // wraps around, not in the moment between the reap and this call.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill().await;
}

/// Kill the hook and reap it. Windows has no process groups to signal: the
/// hook process alone is terminated, and anything it started in the
/// background lives on (a job object would be needed to reach those).
#[cfg(not(unix))]
async fn kill_group(_group: Option<i32>, child: &mut Child) {
    let _ = child.kill().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_stage_and_the_failure() {
        let s = Stage::BeforeQuery;
        assert_eq!(
            HookError::Timeout {
                stage: s,
                command: "/h/slow.sh".into()
            }
            .to_string(),
            "before_query hook error: hook timed out: /h/slow.sh"
        );
        assert_eq!(
            HookError::Failed {
                stage: Stage::AfterQuery,
                command: "/h/crash.sh".into(),
                reason: "exit status 1".into()
            }
            .to_string(),
            "after_query hook error: hook failed (command: /h/crash.sh): exit status 1"
        );
        assert_eq!(
            HookError::Unparseable {
                stage: s,
                command: "/h/bad.sh".into(),
                reason: "expected value".into()
            }
            .to_string(),
            "before_query hook returned unparseable response (command: /h/bad.sh): expected value"
        );
    }
}
