//! Logging to a file (or stderr), never stdout: stdout carries JSON-RPC only.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

use tracing::level_filters::LevelFilter;
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};

use crate::config::{LogFormat, LogLevel, LogOutput, LoggingConfig};

/// Install the global subscriber. Keep the guard alive until exit: dropping it
/// flushes the log.
pub fn init(config: &LoggingConfig) -> io::Result<WorkerGuard> {
    // The default channel holds 128,000 lines (about 4 MB touched at start);
    // 1,024 is plenty for a stdio server, and lines beyond it are dropped
    // rather than blocking a query.
    let builder = || NonBlockingBuilder::default().buffered_lines_limit(1024).lossy(true);
    let (writer, guard) = match &config.output {
        LogOutput::Stderr => builder().finish(io::stderr()),
        LogOutput::File(path) => builder().finish(open(path)?),
    };
    let level = match config.level {
        LogLevel::Error => LevelFilter::ERROR,
        LogLevel::Warn => LevelFilter::WARN,
        LogLevel::Info => LevelFilter::INFO,
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Trace => LevelFilter::TRACE,
    };
    let builder = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(level)
        .with_ansi(false)
        .with_target(false);
    // A second init (e.g. in tests) keeps the first subscriber; that is fine.
    let _ = match config.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    Ok(guard)
}

fn open(path: &Path) -> io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create log directory {}: {e}", dir.display())))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open log file {}: {e}", path.display())))
}
