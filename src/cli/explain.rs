//! A `serve` that cannot start says why where its person looks: a client
//! that started it over stdio gets a server that answers every call with
//! the reason ([`Explain`]), a person at a terminal gets the same words on
//! stderr ([`CliError::Start`]). Apart from `serve.rs` because every stage
//! of starting can fail this way, the config and logging `run` sets up
//! before any command included.

use std::process::ExitCode;
use std::time::Duration;

use super::CliError;
use crate::config::LogOutput;
use crate::door::start_failure::{Audience, StartFailure};
use crate::process::logging;

/// How a `serve` over stdio that a client started says it could not start:
/// to whom, and whether stderr may carry it too.
#[derive(Debug, Clone, Copy)]
pub(super) struct Explain {
    pub(super) audience: Audience,
    /// stderr is not where the protocol goes.
    pub(super) stderr: bool,
}

impl Explain {
    /// Say it on stderr too (desktop clients keep a server's stderr in a
    /// log of their own), unless stderr is where the protocol goes.
    pub(super) fn say(self, failure: &StartFailure, error: &dyn std::fmt::Display) {
        if self.stderr {
            eprintln!("pgmcp: {error}");
            eprintln!(
                "pgmcp: serving MCP only to say so; every tool call answers: {}",
                failure.text()
            );
        }
    }

    /// Before the runtime: say it, enter the sandbox `protection` asks for
    /// (none when it could not be entered), then serve the failure. `_log`
    /// is kept until the end, so the log is flushed.
    pub(super) fn serve(
        self,
        failure: StartFailure,
        error: &dyn std::fmt::Display,
        _log: Option<tracing_appender::non_blocking::WorkerGuard>,
        protection: Option<&crate::guard::Policy>,
    ) -> Result<ExitCode, CliError> {
        self.say(&failure, error);
        if let Some(policy) = protection
            && let Err(e) = crate::process::sandbox::enter(policy)
        {
            tracing::warn!(
                "the file sandbox could not be entered ({e}): this session runs no SQL, which is what it fences"
            );
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(CliError::Runtime)?;
        let result = runtime.block_on(start_failure(failure));
        runtime.shutdown_timeout(Duration::from_millis(200));
        result
    }
}

/// Fail to start for `error`, said where its person looks: a `serve` a
/// client started over stdio (`explain`) serves the reason (see
/// [`Explain::serve`], which keeps `log` and enters the sandbox
/// `protection` asks for); any other `serve` fails with the same words
/// ([`CliError::Start`]); any other command with `error` itself.
pub(super) fn cannot_start<E>(
    explain: Option<Explain>,
    serving: bool,
    error: E,
    failure: impl FnOnce(&E, Audience) -> StartFailure,
    log: Option<tracing_appender::non_blocking::WorkerGuard>,
    protection: Option<&crate::guard::Policy>,
) -> Result<ExitCode, CliError>
where
    E: std::fmt::Display + Into<CliError>,
{
    match explain {
        Some(explain) => explain.serve(failure(&error, explain.audience), &error, log, protection),
        None if serving => Err(CliError::Start(failure(&error, Audience::Terminal))),
        None => Err(error.into()),
    }
}

/// The log of a `serve` that could not start: `logging`'s, else stderr
/// (which `logging::init` refuses when it is the protocol's stdout), else
/// none.
pub(super) fn failure_log(
    logging: &crate::config::LoggingConfig,
) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    logging::init(logging).ok().or_else(|| {
        let stderr = crate::config::LoggingConfig {
            output: LogOutput::Stderr,
            ..logging.clone()
        };
        logging::init(&stderr).ok()
    })
}

/// `pgmcp serve` over stdio that could not start: the handshake, the tools
/// and the reason as every call's answer, until the client closes stdin or
/// a signal comes. Exits 2, as a failure to start does.
pub(super) async fn start_failure(failure: StartFailure) -> Result<ExitCode, CliError> {
    crate::door::stdio::serve_start_failure(failure)
        .await
        .map_err(CliError::Channel)?;
    Ok(ExitCode::from(2))
}
