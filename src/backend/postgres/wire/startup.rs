//! Opening a connection: the SSLRequest and the TLS handshake as `sslmode`
//! says, the startup message with the session's parameters, then
//! authentication (`authentication.rs`) and what the server says until it
//! is ready: the cancel key and whether the login is a superuser. Apart from
//! the exchange: it runs once per connection, before any statement.

use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::cancel::CancelTarget;
use super::error_response::db_error;
use super::socket::open_socket;
use super::{Connection, Io, WireError};
use crate::backend::postgres::params::{ConnectParams, Host, SslMode};
use crate::backend::postgres::tls::{TlsClient, TlsSession};

/// How an SSLRequest went.
pub(super) enum Negotiated {
    Tls(Box<dyn Io>, TlsSession),
    /// The server said `N`: the same socket goes on without TLS.
    Plain(Box<dyn Io>),
}

/// Ask the server for TLS (PostgreSQL's SSLRequest) and, when it agrees, run
/// the handshake. Exactly one byte is read before the handshake, so nothing the
/// server sent in the clear can be taken as part of the encrypted stream.
pub(super) async fn start_tls(mut io: Box<dyn Io>, tls: &TlsClient) -> Result<Negotiated, WireError> {
    let mut buf = BytesMut::new();
    frontend::ssl_request(&mut buf);
    io.write_all(&buf).await?;
    io.flush().await?;
    let mut answer = [0u8; 1];
    io.read_exact(&mut answer).await?;
    match answer[0] {
        b'S' => {
            let (stream, session) = tls.handshake(io).await.map_err(WireError::TlsHandshake)?;
            Ok(Negotiated::Tls(Box::new(stream), session))
        }
        b'N' => Ok(Negotiated::Plain(io)),
        other => Err(WireError::Protocol(format!(
            "unexpected answer {:?} to the TLS request",
            char::from(other)
        ))),
    }
}

impl Connection {
    /// Connect and authenticate, sending `startup` as session parameters, with
    /// TLS as `sslmode` says (never over a Unix socket, as in libpq).
    pub async fn connect(params: &ConnectParams, startup: &[(&str, &str)]) -> Result<Connection, WireError> {
        let tls = match &params.host {
            Host::Tcp(host) if params.sslmode != SslMode::Disable => Some(Arc::new(TlsClient::new(params, host)?)),
            _ => None,
        };
        // `allow` tries plaintext first, every other mode TLS first.
        let tls_first = tls.is_some() && params.sslmode != SslMode::Allow;
        match Connection::connect_once(params, startup, tls.as_ref().filter(|_| tls_first)).await {
            // As libpq does: when the server refuses the session for want of a
            // pg_hba.conf line (28000), the other way may have one
            // (`hostssl`/`hostnossl`), so `prefer` retries without TLS and
            // `allow` with it.
            Err(WireError::Refused { db, .. })
                if db.code.sqlstate() == Some("28000")
                    && matches!(params.sslmode, SslMode::Prefer | SslMode::Allow)
                    && tls.is_some() =>
            {
                Connection::connect_once(params, startup, tls.as_ref().filter(|_| !tls_first)).await
            }
            other => other,
        }
    }

    async fn connect_once(
        params: &ConnectParams,
        startup: &[(&str, &str)],
        tls: Option<&Arc<TlsClient>>,
    ) -> Result<Connection, WireError> {
        let (mut io, raw) = open_socket(&params.host, params.port)
            .await
            .map_err(|source| WireError::Connect {
                target: params.target(),
                source,
            })?;
        // Where the kernel cannot be asked directly, the runtime's view is all.
        #[cfg(not(unix))]
        let _ = raw;
        let mut session = None;
        if let Some(client) = tls {
            match start_tls(io, client).await? {
                Negotiated::Tls(stream, agreed) => {
                    io = stream;
                    session = Some(agreed);
                }
                Negotiated::Plain(_) if params.sslmode.requires_tls() => {
                    return Err(WireError::TlsRefused(params.sslmode));
                }
                Negotiated::Plain(plain) => io = plain,
            }
        }
        let mut conn = Connection {
            io,
            read_buf: BytesMut::with_capacity(8192),
            write_buf: BytesMut::with_capacity(1024),
            cancel: CancelTarget {
                host: params.host.clone(),
                port: params.port,
                process_id: 0,
                secret_key: 0,
                tls: tls.filter(|_| session.is_some()).cloned(),
            },
            created: Instant::now(),
            in_flight: false,
            deferred_replies: 0,
            prepared: Vec::new(),
            forget_prepared: false,
            catalog_seen: None,
            superuser: None,
            reader: None,
            pooled: false,
            #[cfg(unix)]
            raw,
            tls: session,
            password_from: None,
        };
        let mut all: Vec<(&str, &str)> = vec![("user", params.user.as_str())];
        if let Some(db) = &params.dbname {
            all.push(("database", db.as_str()));
        }
        all.push(("application_name", params.application_name.as_str()));
        all.extend_from_slice(startup);
        frontend::startup_message(all.iter().copied(), &mut conn.write_buf)?;
        conn.flush().await?;
        let setup = async {
            conn.authenticate(params).await?;
            conn.read_until_ready().await
        };
        match setup.await {
            Ok(()) => Ok(conn),
            Err(WireError::Db(db)) => Err(WireError::Refused {
                db,
                password_from: conn.password_from.clone(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Read the messages that follow authentication up to the first ReadyForQuery.
    async fn read_until_ready(&mut self) -> Result<(), WireError> {
        loop {
            match self.read_message().await? {
                Message::BackendKeyData(body) => {
                    self.cancel.process_id = body.process_id();
                    self.cancel.secret_key = body.secret_key();
                }
                Message::ParameterStatus(body) => {
                    if body.name()? == "is_superuser" {
                        self.superuser = Some(body.value()? == "on");
                    }
                }
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(db_error(&body)?.into()),
                Message::NoticeResponse(_) => {}
                _ => {
                    return Err(WireError::Protocol("unexpected message before ReadyForQuery".into()));
                }
            }
        }
    }
}
