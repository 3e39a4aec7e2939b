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

/// Sockets and Linux pipes are read and written on the runtime itself,
/// without blocking threads (half the CPU per call); anything else (a file, a
/// terminal, pipes on other systems) through tokio's blocking file handles.
#[cfg(unix)]
fn ends(input: std::os::fd::OwnedFd, output: std::os::fd::OwnedFd) -> io::Result<(Reader, Writer)> {
    use tokio::net::unix::pipe;

    if is_socket(&input)? && is_socket(&output)? {
        let stream = |fd: std::os::fd::OwnedFd| {
            let stream = std::os::unix::net::UnixStream::from(fd);
            stream.set_nonblocking(true)?;
            tokio::net::UnixStream::from_std(stream)
        };
        return Ok((Box::pin(stream(input)?), Box::pin(stream(output)?)));
    }
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

#[cfg(unix)]
fn is_socket(fd: &impl std::os::fd::AsFd) -> io::Result<bool> {
    let file = std::fs::File::from(fd.as_fd().try_clone_to_owned()?);
    Ok(std::os::unix::fs::FileTypeExt::is_socket(&file.metadata()?.file_type()))
}

/// The variable that tells the relay which descriptor is its socket.
#[cfg(target_os = "linux")]
const RELAY_SOCKET: &str = "PGMCP_RELAY_SOCKET";

/// Take the channel off the client's pipes: a pipe is reopened by its path
/// (`/proc/self/fd/N`), a socket never is. Unless stdin, stdout and stderr
/// are sockets already (as Node-based clients spawn servers), start a relay —
/// pgmcp itself, see [`relay`] — that keeps them and talks to this process
/// over two socket pairs (the channel; stderr), then make those sockets this
/// process's 0, 1 and 2, closing the pipes here. Call before any other thread
/// exists: the socket ends the relay takes are inheritable until it started.
#[cfg(target_os = "linux")]
pub fn isolate() -> io::Result<()> {
    use std::os::fd::{AsFd, AsRawFd};

    if is_socket(&io::stdin())? && is_socket(&io::stdout())? && is_socket(&io::stderr())? {
        return Ok(());
    }
    let (channel, channel_theirs) = std::os::unix::net::UnixStream::pair()?;
    let (errors, errors_theirs) = std::os::unix::net::UnixStream::pair()?;
    inheritable(&channel_theirs, true)?;
    inheritable(&errors_theirs, true)?;
    // /proc/self/exe is this very binary, even if its file was replaced
    // since it started.
    let relay = std::process::Command::new("/proc/self/exe")
        .arg("relay")
        .env(
            RELAY_SOCKET,
            format!("{},{}", channel_theirs.as_raw_fd(), errors_theirs.as_raw_fd()),
        )
        .stdin(std::process::Stdio::inherit())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .spawn();
    drop((channel_theirs, errors_theirs));
    let relay = relay?;
    tracing::info!(
        relay = relay.id(),
        "MCP channel and stderr moved off the client's pipes onto sockets"
    );
    for (socket, fd) in [(&channel, 0), (&channel, 1), (&errors, 2)] {
        // SAFETY: dup2 onto 0, 1 and 2, which stay open (now on the
        // sockets); the pipes they held are the relay's alone from here on.
        if unsafe { libc::dup2(socket.as_fd().as_raw_fd(), fd) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn inheritable(fd: &impl std::os::fd::AsRawFd, inherit: bool) -> io::Result<()> {
    let flags = match inherit {
        true => 0,
        false => libc::FD_CLOEXEC,
    };
    // SAFETY: F_SETFD on a descriptor the caller owns changes only its
    // close-on-exec flag.
    match unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, flags) } {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// The relay's side of [`isolate`] (`pgmcp relay`, started by pgmcp, never
/// by a person): copy the client's stdin into the channel's socket, that
/// socket into stdout and the stderr socket into stderr, byte for byte, until
/// pgmcp closes its end. It runs no SQL and reads no config; pgmcp's file
/// sandbox keeps pgmcp from reaching it.
#[cfg(target_os = "linux")]
pub fn relay() -> io::Result<()> {
    use std::os::fd::AsFd;

    let usage = || io::Error::other("pgmcp relay is started by pgmcp serve, not by hand");
    let value = std::env::var(RELAY_SOCKET).map_err(|_| usage())?;
    let (channel, errors) = value.split_once(',').ok_or_else(usage)?;
    let server = inherited_socket(channel.parse().map_err(|_| usage())?)?;
    let errors = inherited_socket(errors.parse().map_err(|_| usage())?)?;
    let to_server = server.try_clone()?;
    let client_in = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let client_out = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let client_err = std::fs::File::from(io::stderr().as_fd().try_clone_to_owned()?);
    std::thread::spawn(move || {
        let _ = pass(client_in, &to_server);
        // The client closed stdin: pgmcp sees its end of the session.
        let _ = to_server.shutdown(std::net::Shutdown::Write);
    });
    std::thread::spawn(move || pass(&errors, client_err));
    // pgmcp closed its end (it stopped): so does the relay, pipes and all.
    pass(&server, client_out)
}

/// The socket inherited as descriptor `fd`, checked to be one.
#[cfg(target_os = "linux")]
fn inherited_socket(fd: i32) -> io::Result<std::os::unix::net::UnixStream> {
    use std::os::fd::FromRawFd;

    // SAFETY: F_GETFD only asks whether the number is an open descriptor.
    if fd <= 2 || unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return Err(io::Error::other("pgmcp relay: its socket is not open"));
    }
    // SAFETY: open (checked above), not a standard stream, and inherited for
    // this process alone: nothing else here owns it.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    if !is_socket(&owned)? {
        return Err(io::Error::other("pgmcp relay: its descriptor is not a socket"));
    }
    Ok(std::os::unix::net::UnixStream::from(owned))
}

/// Copy what arrives, as it arrives, until the end. Not `io::copy`: on Linux
/// it splices a socket into a pipe, which holds a message back until more
/// follows.
#[cfg(target_os = "linux")]
fn pass(mut from: impl io::Read, mut to: impl io::Write) -> io::Result<()> {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => to.write_all(&buffer[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
