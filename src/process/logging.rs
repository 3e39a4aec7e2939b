//! Logging to a file (or stderr), never stdout: stdout carries JSON-RPC only.
//!
//! The log file is the person's own: it is created 0600 in a directory
//! created 0700, and an existing file others could read is narrowed to 0600.
//! A log file that belongs to someone else, or a symlink in its place, is
//! refused.
//! `logging.output` must be a regular file other than stdout itself, whatever
//! the name (`/dev/stdout`, `/proc/self/fd/1`, a symlink, the file stdout is
//! redirected to): a FIFO would hang startup, and stdout would break the
//! protocol. `stderr` is refused when it is the same pipe or file as stdout.
//!
//! pgmcp's own events follow `logging.level`; those of the libraries under it
//! (rmcp logs every request and response at debug) stay at `warn` unless the
//! level is `trace`.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::path::Path;

use tracing::level_filters::LevelFilter;
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

use crate::config::{LogFormat, LogLevel, LogOutput, LoggingConfig};

/// Install the global subscriber. Keep the guard alive until exit: dropping it
/// flushes the log. An error is about `logging.output` and says what to use.
pub fn init(config: &LoggingConfig) -> io::Result<WorkerGuard> {
    // The default channel holds 128,000 lines (about 4 MB touched at start);
    // 1,024 is plenty for a stdio server, and lines beyond it are dropped
    // rather than blocking a query.
    let builder = || NonBlockingBuilder::default().buffered_lines_limit(1024).lossy(true);
    let (writer, guard) = match &config.output {
        LogOutput::Stderr => {
            stderr_apart_from_stdout()?;
            builder().finish(io::stderr())
        }
        LogOutput::File(path) => builder().finish(open(path)?),
    };
    let layer = fmt::layer().with_writer(writer).with_ansi(false).with_target(false);
    let filter = filter(config.level);
    // A second init (e.g. in tests) keeps the first subscriber; that is fine.
    let _ = match config.format {
        LogFormat::Text => tracing_subscriber::registry()
            .with(layer.with_filter(filter))
            .try_init(),
        LogFormat::Json => tracing_subscriber::registry()
            .with(layer.json().with_filter(filter))
            .try_init(),
    };
    Ok(guard)
}

/// pgmcp's targets at `level`; every other crate at `warn` (or less, when
/// `level` is less), unless `level` is `trace`. At debug, rmcp logs each
/// request and result whole, query text and rows included.
fn filter(level: LogLevel) -> Targets {
    let level = match level {
        LogLevel::Error => LevelFilter::ERROR,
        LogLevel::Warn => LevelFilter::WARN,
        LogLevel::Info => LevelFilter::INFO,
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Trace => LevelFilter::TRACE,
    };
    let others = if level == LevelFilter::TRACE {
        LevelFilter::TRACE
    } else {
        level.min(LevelFilter::WARN)
    };
    Targets::new()
        .with_target(env!("CARGO_CRATE_NAME"), level)
        .with_default(others)
}

/// Open (or create) the log file for appending, refusing what is not a
/// regular file or is stdout under another name.
fn open(path: &Path) -> io::Result<File> {
    let refuse = |why: String| io::Error::new(io::ErrorKind::InvalidInput, format!("{}: {why}", path.display()));
    // Looked at before opening, so a FIFO is refused rather than opened
    // (which would block until a reader came); checked again on the opened
    // file below, which is the one that counts.
    match std::fs::metadata(path) {
        Ok(meta) => usable(&meta).map_err(refuse)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(refuse(format!("cannot use it as the log file: {e}"))),
    }
    // A symlink planted where the log goes (in a shared directory such as
    // /tmp) would have pgmcp append to whatever it points to; the open below
    // refuses one too (O_NOFOLLOW), this says why.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refuse(
            "is a symlink: name the file it points to in logging.output".to_owned(),
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create log directory {}: {e}", dir.display())))?;
    }
    let file = open_append(path).map_err(|e| refuse(format!("cannot open it as the log file: {e}")))?;
    let meta = file.metadata().map_err(|e| refuse(e.to_string()))?;
    usable(&meta).map_err(refuse)?;
    tighten(&file, &meta).map_err(|e| refuse(format!("cannot make it private: {e}")))?;
    Ok(file)
}

#[cfg(unix)]
fn open_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        // Should a FIFO be swapped in after the look above, opening it must
        // not wait for a reader; on a regular file the flag changes nothing.
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(not(unix))]
fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Why a file with `meta` cannot be the log, if it cannot.
#[cfg(unix)]
fn usable(meta: &Metadata) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if stdout_id() == Some((meta.dev(), meta.ino())) {
        return Err(
            "is the same file as stdout, which carries the MCP protocol and nothing else: use another file or \"stderr\""
                .to_owned(),
        );
    }
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    Err(format!("is {what}: the log must be a regular file (or \"stderr\")"))
}

#[cfg(not(unix))]
fn usable(meta: &Metadata) -> Result<(), String> {
    if meta.is_file() {
        Ok(())
    } else {
        Err("is not a regular file: the log must be a regular file (or \"stderr\")".to_owned())
    }
}

/// An existing log file group or others could read becomes 0600: it holds
/// what the agent did, and tightening is what its owner would want. One
/// that belongs to someone else is refused: its owner could read it, or set
/// its mode back.
#[cfg(unix)]
fn tighten(file: &File, meta: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "it belongs to user id {}, not to you (user id {me}): remove it or log elsewhere",
                meta.uid()
            ),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn tighten(_: &File, _: &Metadata) -> io::Result<()> {
    Ok(())
}

/// Device and inode of what fd 1 is, if it is open.
#[cfg(unix)]
fn stdout_id() -> Option<(u64, u64)> {
    fd_id(libc::STDOUT_FILENO)
}

#[cfg(unix)]
fn fd_id(fd: libc::c_int) -> Option<(u64, u64)> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat(2) only writes the struct it is given; it is read only
    // when the call succeeded.
    let stat = unsafe {
        if libc::fstat(fd, stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    Some((stat.st_dev as u64, stat.st_ino as u64))
}

/// Whether a line written to stderr stays off the protocol: stderr is not
/// where stdout goes, or that is a terminal. Look before the MCP channel is
/// taken (`crate::door::stdio::channel::take` points descriptor 1 elsewhere).
pub(crate) fn stderr_apart() -> bool {
    stderr_apart_from_stdout().is_ok()
}

/// `stderr` as the log is refused when it is where stdout goes (`2>&1` into
/// the client's pipe), unless that is a terminal: there a person reads both.
#[cfg(unix)]
fn stderr_apart_from_stdout() -> io::Result<()> {
    let shared = fd_id(libc::STDERR_FILENO).is_some_and(|id| Some(id) == stdout_id());
    // SAFETY: isatty(3) only looks at the descriptor.
    if shared && unsafe { libc::isatty(libc::STDOUT_FILENO) } == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "stderr: goes to the same place as stdout, which carries the MCP protocol and nothing else: use a file path",
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn stderr_apart_from_stdout() -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_crates_stay_at_warn_below_trace() {
        let f = filter(LogLevel::Debug);
        assert!(f.would_enable("pgmcp::pipeline", &tracing::Level::DEBUG));
        assert!(!f.would_enable("rmcp::service", &tracing::Level::DEBUG));
        assert!(!f.would_enable("rmcp::service", &tracing::Level::INFO));
        assert!(f.would_enable("rmcp::service", &tracing::Level::WARN));
        let f = filter(LogLevel::Error);
        assert!(!f.would_enable("rmcp::service", &tracing::Level::WARN));
        assert!(!f.would_enable("pgmcp::cli", &tracing::Level::WARN));
        let f = filter(LogLevel::Trace);
        assert!(f.would_enable("rmcp::service", &tracing::Level::DEBUG));
    }
}
