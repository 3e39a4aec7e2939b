//! [`CancelTarget`]: where to send a cancel request for what a connection
//! runs, and sending it. A cancel request goes on a connection of its own,
//! outside the protocol of the one it cancels, so it is apart from the
//! exchange; it opens its socket and TLS the way startup does.

use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::socket::open_socket;
use super::startup::{Negotiated, start_tls};
use crate::backend::postgres::params::Host;
use crate::backend::postgres::tls::TlsClient;

/// Where to send a cancel request for the query running on a connection.
#[derive(Debug, Clone)]
pub struct CancelTarget {
    pub(super) host: Host,
    pub(super) port: u16,
    pub(super) process_id: i32,
    pub(super) secret_key: i32,
    /// Set when the connection uses TLS: the cancel request goes the same way,
    /// so its secret key is not sent in the clear and a TLS-only path works.
    pub(super) tls: Option<Arc<TlsClient>>,
}

impl CancelTarget {
    /// Ask the server to cancel whatever this connection is running. Best effort:
    /// the server never answers a cancel request, it just closes the socket.
    pub async fn cancel(&self) -> io::Result<()> {
        let mut buf = BytesMut::new();
        frontend::cancel_request(self.process_id, self.secret_key, &mut buf);
        let (mut stream, _) = open_socket(&self.host, self.port).await?;
        if let Some(tls) = &self.tls {
            stream = match start_tls(stream, tls).await {
                Ok(Negotiated::Tls(tls_stream, _)) => tls_stream,
                // The server stopped offering TLS: it reads the request in the clear.
                Ok(Negotiated::Plain(plain)) => plain,
                Err(e) => return Err(io::Error::other(e.to_string())),
            };
        }
        stream.write_all(&buf).await?;
        stream.flush().await?;
        // Wait for the server to close its side, so the cancel has been read.
        let mut sink = [0u8; 16];
        let _ = stream.read(&mut sink).await;
        Ok(())
    }
}
