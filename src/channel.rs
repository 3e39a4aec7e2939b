//! The MCP channel: pgmcp's stdin and stdout, taken for the protocol alone.
//!
//! Over stdio, stdin carries the client's requests and stdout the answers.
//! Anything else that reads or writes descriptors 0 and 1 — an engine told
//! to (`COPY ... TO STDOUT`, a file named `/dev/stdout`), a library that
//! prints — would steal a request or corrupt an answer. So on Unix the
//! channel gets descriptors of its own (closed on exec, so hooks never
//! inherit them) and 0 and 1 are pointed at `/dev/null`: whatever else uses
//! them reads nothing and writes into the void.

use std::io;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The channel's two ends.
pub type Reader = Pin<Box<dyn AsyncRead + Send>>;
pub type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// Take stdin and stdout for the protocol (see the module's doc).
#[cfg(unix)]
pub fn take() -> io::Result<(Reader, Writer)> {
    use std::os::fd::AsFd;

    let input = io::stdin().as_fd().try_clone_to_owned()?;
    let output = io::stdout().as_fd().try_clone_to_owned()?;
    let (reader, writer) = ends(input, output)?;
    let null = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null")?;
    for fd in [0, 1] {
        // SAFETY: dup2 onto 0 and 1, which stay open (now on /dev/null); the
        // channel reads and writes its own descriptors, taken above.
        if unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), fd) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((reader, writer))
}

/// Elsewhere the channel is stdin and stdout themselves.
#[cfg(not(unix))]
pub fn take() -> io::Result<(Reader, Writer)> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    Ok((Box::pin(reader), Box::pin(writer)))
}

/// Linux pipes are read and written on the runtime itself, without blocking
/// threads (half the CPU per call); anything else (a file, a terminal, other
/// systems) through tokio's blocking file handles.
#[cfg(unix)]
fn ends(input: std::os::fd::OwnedFd, output: std::os::fd::OwnedFd) -> io::Result<(Reader, Writer)> {
    use tokio::net::unix::pipe;

    let fifo = |fd: &std::os::fd::OwnedFd| {
        std::fs::File::from(fd.try_clone()?)
            .metadata()
            .map(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()))
    };
    if cfg!(target_os = "linux") && fifo(&input)? && fifo(&output)? {
        // Their own open file descriptions, so O_NONBLOCK stays private to
        // the channel.
        let reader = pipe::OpenOptions::new().open_receiver(proc_path(&input))?;
        let writer = pipe::OpenOptions::new().open_sender(proc_path(&output))?;
        return Ok((Box::pin(reader), Box::pin(writer)));
    }
    let reader = tokio::fs::File::from_std(std::fs::File::from(input));
    let writer = tokio::fs::File::from_std(std::fs::File::from(output));
    Ok((Box::pin(reader), Box::pin(writer)))
}

/// The path that reopens `fd` on an open file description of its own.
#[cfg(unix)]
fn proc_path(fd: &std::os::fd::OwnedFd) -> String {
    format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd))
}
