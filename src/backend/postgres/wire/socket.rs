//! The transport under the protocol: a TCP connection or a Unix socket
//! (never TLS here; `startup.rs` adds it), and whether an idle connection's
//! socket is still open, asked of the kernel without waiting. Apart from
//! the protocol: nothing here reads a message.

use std::io;

use postgres_protocol::message::backend::Message;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

use super::{Connection, Io};
use crate::backend::postgres::params::Host;

impl Connection {
    /// Whether an idle connection is still usable: the server has not closed
    /// it or sent it an error (as it does to every session when it shuts down
    /// or restarts). Looks at what is already readable, without waiting.
    pub async fn is_alive(&mut self) -> bool {
        loop {
            // Polled once, without a timer (a zero timeout is a real one,
            // which waits for the runtime's next tick): ready only if the
            // socket has data or is closed. `read_buf` may be dropped while
            // pending without losing bytes.
            let mut read = std::pin::pin!(self.io.read_buf(&mut self.read_buf));
            let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(read.as_mut().poll(cx))).await;
            match polled {
                std::task::Poll::Pending => break,
                std::task::Poll::Ready(Ok(0) | Err(_)) => return false,
                std::task::Poll::Ready(Ok(_)) => continue,
            }
        }
        #[cfg(unix)]
        match self.raw.map(kernel_view) {
            Some(Idle::Closed) => return false,
            // Unsolicited bytes the runtime has not seen: on a plain
            // connection they are most likely the server's goodbye (an
            // error, then the close); under TLS they may be the protocol's
            // own, which only reading would tell.
            Some(Idle::Unread) if self.tls.is_none() => return false,
            _ => {}
        }
        // Anything unsolicited must be harmless (a notice, a parameter change).
        let mut pending = self.read_buf.clone();
        while let Ok(Some(message)) = Message::parse(&mut pending) {
            if let Message::ErrorResponse(_) = message {
                return false;
            }
        }
        true
    }
}

/// A connected socket, and its descriptor where the kernel can be asked
/// about it directly (`kernel_view`, on Unix).
pub(super) type Socket = (Box<dyn Io>, Option<RawSocket>);

#[cfg(unix)]
pub(super) type RawSocket = std::os::fd::RawFd;
#[cfg(not(unix))]
pub(super) type RawSocket = std::convert::Infallible;

pub(super) async fn open_socket(host: &Host, port: u16) -> io::Result<Socket> {
    match host {
        Host::Tcp(name) => {
            let stream = TcpStream::connect((name.as_str(), port)).await?;
            stream.set_nodelay(true)?;
            #[cfg(unix)]
            let raw = Some(std::os::fd::AsRawFd::as_raw_fd(&stream));
            #[cfg(not(unix))]
            let raw = None;
            Ok((Box::new(stream), raw))
        }
        #[cfg(unix)]
        Host::Unix(dir) => {
            let path = dir.join(format!(".s.PGSQL.{port}"));
            let stream = UnixStream::connect(path).await?;
            let raw = Some(std::os::fd::AsRawFd::as_raw_fd(&stream));
            Ok((Box::new(stream), raw))
        }
        // A host starting with `/` names a socket directory, and tokio has no
        // Unix-domain sockets on Windows (PostgreSQL on Windows listens on TCP).
        #[cfg(not(unix))]
        Host::Unix(_) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "a host starting with / is a Unix-domain socket directory, and pgmcp on Windows connects over TCP only: \
             give a host name or address, such as localhost",
        )),
    }
}

/// What the kernel says of an idle connection's socket, asked directly and
/// without waiting: the runtime only tries a read once its event loop has
/// seen the socket become readable, which under load can come after the
/// connection is taken from the pool.
#[cfg(unix)]
fn kernel_view(raw: RawSocket) -> Idle {
    let mut byte = 0u8;
    // SAFETY: `raw` is the descriptor of the socket the connection owns (it
    // is closed only when the connection is dropped), and the buffer is one
    // writable byte. MSG_PEEK leaves anything there for the runtime to read.
    let n = unsafe { libc::recv(raw, (&raw mut byte).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    match n {
        0 => Idle::Closed,
        1.. => Idle::Unread,
        _ if io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock => Idle::Quiet,
        _ => Idle::Closed,
    }
}

/// An idle connection's socket, as the kernel sees it.
#[cfg(unix)]
#[derive(Debug, PartialEq, Eq)]
enum Idle {
    /// Nothing to read, and open.
    Quiet,
    /// Bytes the runtime has not read yet.
    Unread,
    /// The peer closed it, or it failed.
    Closed,
}
