//! One PostgreSQL connection, spoken at the message level.
//!
//! We use `postgres-protocol` (the layer under tokio-postgres) directly because
//! tokio-postgres always binds results in binary format and has no row limit on
//! `Execute`. Speaking the protocol ourselves gives us, in one round trip:
//! text results (PostgreSQL's own output for every type, extensions included),
//! text parameters whose types the server infers, a server-side single-statement
//! check (the extended protocol refuses multi-statement text), and `Execute` with a
//! row limit so a huge result is never read past the cap. ARCHITECTURE.md has the
//! full reasoning.
//!
//! This module knows nothing of policy: it connects, authenticates, runs an
//! [`Exchange`] and hands back raw text rows.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication;
use postgres_protocol::authentication::sasl::{self, ScramSha256};
use postgres_protocol::message::backend::{self, Message};
use postgres_protocol::message::frontend;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

use super::diagnosis::PasswordSearch;
use super::params::{ConnectParams, Host, PasswordSource, SslMode};
use super::passfile::{self, Lookup};
use super::tls::{TlsClient, TlsSession, TlsSetupError};
use crate::error::{DbError, ErrorCode};
use crate::pipeline::budget::ReadBudget;

/// Anything we can speak the protocol over: TCP, a Unix socket, or TLS over TCP.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// Why a connection attempt or an exchange failed below the SQL level.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("could not connect to {target}: {source}")]
    Connect { target: String, source: io::Error },
    #[error("connection to the server was lost: {0}")]
    Io(#[from] io::Error),
    /// The server asked for a password (`asked`: by the pg_hba.conf method
    /// it implies: scram-sha-256, md5 or password) and there is none;
    /// `search` says where one was looked for.
    #[error("the server asks for a password ({asked}), but none was found")]
    PasswordRequired {
        asked: &'static str,
        search: PasswordSearch,
    },
    /// The server refused the session while it was being set up (a wrong
    /// password, no pg_hba.conf line, a missing database).
    #[error("{db}")]
    Refused {
        db: Box<DbError>,
        password_from: Option<PasswordSource>,
    },
    /// The server answered the SSLRequest with `N` and the mode needs TLS.
    #[error("the server does not support TLS, but sslmode={}", .0.name())]
    TlsRefused(SslMode),
    #[error("{0}")]
    TlsHandshake(String),
    #[error(transparent)]
    TlsSetup(#[from] TlsSetupError),
    #[error("the server asked for an authentication method pgmcp does not support ({0})")]
    UnsupportedAuth(&'static str),
    #[error("protocol error: {0}")]
    Protocol(String),
    /// An error the server reported; the connection may still be usable.
    #[error("{0}")]
    Db(Box<DbError>),
    /// An error in one of an exchange's setup statements: the main statement
    /// did not run. Kept apart so a refused `SET LOCAL ROLE` is not mistaken
    /// for the query's own permission error.
    #[error("{0}")]
    Setup(Box<DbError>),
}

impl From<DbError> for WireError {
    fn from(e: DbError) -> WireError {
        WireError::Db(Box::new(e))
    }
}

/// Where to send a cancel request for the query running on a connection.
#[derive(Debug, Clone)]
pub struct CancelTarget {
    host: Host,
    port: u16,
    process_id: i32,
    secret_key: i32,
    /// Set when the connection uses TLS: the cancel request goes the same way,
    /// so its secret key is not sent in the clear and a TLS-only path works.
    tls: Option<Arc<TlsClient>>,
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

/// A column as the server described it.
#[derive(Debug, Clone)]
pub struct WireColumn {
    pub name: String,
    pub type_oid: u32,
    pub type_modifier: i32,
    /// The table and column it comes from, or 0 for a computed column.
    pub table_oid: u32,
    pub column_id: i16,
}

/// The text form of one row: `None` is SQL NULL.
pub type WireRow = Vec<Option<Bytes>>;

/// What one statement sent back.
#[derive(Debug, Default)]
pub struct StatementResult {
    /// Empty when the statement returns no rows (`NoData`).
    pub columns: Vec<WireColumn>,
    pub rows: Vec<WireRow>,
    /// The command tag, e.g. `SELECT 3` or `INSERT 0 2`; `None` when the portal
    /// was suspended at the row limit or the query string was empty.
    pub command_tag: Option<String>,
    /// True when `Execute` stopped at its row limit with rows possibly left.
    pub suspended: bool,
    /// Values cut at read by the exchange's budget.
    pub cuts: Vec<CutValue>,
    /// Rows the server sent after the budget was spent, read and dropped.
    pub skipped: usize,
    /// The first value of the first row the exchange's last [`Prepared`]
    /// statement returned, as text.
    pub prepared_answer: Option<String>,
}

/// A value the read budget cut: the row keeps its head, this its whole size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutValue {
    pub row: usize,
    pub column: usize,
    pub len: usize,
}

/// Data rows longer than this are read field by field, straight from the
/// socket, so a value cut by the budget is never held whole.
const STREAMED_ROW: usize = 256 * 1024;

/// One round trip: some setup statements and one main statement, all in one
/// transaction, then commit and a session reset.
pub struct Exchange<'a> {
    /// Statements run before the main one in the same transaction, e.g.
    /// `BEGIN READ ONLY` and `SET LOCAL statement_timeout = ...`. They go through
    /// the extended protocol too, so if one fails the server skips the main
    /// statement instead of running it outside the transaction.
    pub setup: &'a [&'a str],
    pub sql: &'a str,
    /// Parameters in text form; `None` is NULL. Types are left for the server to infer.
    pub params: &'a [Option<String>],
    /// Most rows to read; 0 means no limit.
    pub max_rows: u32,
    /// How much of the main statement's values to hold; `None` for pgmcp's
    /// own statements, whose results are small by construction.
    pub budget: Option<ReadBudget>,
    /// Simple-protocol statements after the transaction, e.g. `COMMIT`. Each is
    /// sent as its own message, and the call waits for their replies.
    pub finish: &'a [&'a str],
    /// Simple-protocol statements sent in the same write whose replies are not
    /// waited for: they are read before the connection's next exchange. Used
    /// for `DISCARD ALL`, so resetting the session adds no latency to the call.
    pub deferred: &'a [&'a str],
    /// Statements kept prepared on the connection and run in order after
    /// the setup, before the main statement (those [`Prepared::after_parse`]
    /// between its `Parse` and its `Bind`): parsed and planned once per
    /// connection, then only bound and executed.
    pub prepared: &'a [Prepared<'a>],
}

impl<'a> Exchange<'a> {
    /// One statement of pgmcp's own, alone: no setup, no transaction, at
    /// most `max_rows` rows (a probe such as `pg_backend_pid()`).
    pub fn alone(sql: &'a str, max_rows: u32) -> Exchange<'a> {
        Exchange {
            setup: &[],
            sql,
            params: &[],
            max_rows,
            budget: None,
            finish: &[],
            deferred: &[],
            prepared: &[],
        }
    }
}

/// A statement of pgmcp's own, prepared once per connection under its name.
#[derive(Clone, Copy)]
pub struct Prepared<'a> {
    /// `""`: sent unnamed, parsed at every exchange.
    pub name: &'static str,
    pub sql: &'static str,
    pub params: &'a [Option<String>],
    /// Run after the main statement is parsed (its names resolved) and
    /// before it is bound (planned): a check that the catalog its names
    /// resolved in is the one the caller judged it with. Such statements
    /// come after all the others in [`Exchange::prepared`], and only in an
    /// exchange whose setup opens a transaction.
    pub after_parse: bool,
}

/// The names the main statement and its portal go under when checks run
/// between its `Parse` and its `Bind`: named, so that the checks (unnamed
/// behind a pooler) do not replace them; closed in the same write, so
/// nothing outlives the exchange.
const MAIN_STATEMENT: &str = "pgmcp_statement";
const MAIN_PORTAL: &str = "pgmcp_portal";

/// A live connection. Not `Clone`; exclusively owned by whoever runs on it.
pub struct Connection {
    io: Box<dyn Io>,
    read_buf: BytesMut,
    write_buf: BytesMut,
    cancel: CancelTarget,
    created: Instant,
    /// Set while an exchange is on the wire. If the future running it is
    /// dropped half-way (a timeout), this stays set and the connection must not
    /// be reused: its protocol state is unknown.
    in_flight: bool,
    /// Replies of deferred statements not read yet (one ReadyForQuery each).
    deferred_replies: usize,
    /// The names of [`Prepared`] statements this connection holds.
    prepared: Vec<&'static str>,
    /// Deallocate every prepared statement before the next exchange: a
    /// statement of the caller's prepared one (`PREPARE`), or an exchange
    /// that parsed one of pgmcp's failed, so whether it exists is unknown.
    forget_prepared: bool,
    /// Kept for the backend with the connection, which is the server's
    /// session: what its catalog check last found (see `routines::Check`).
    pub catalog_seen: Option<super::routines::Seen>,
    /// Whether the login is a superuser, as the server said at startup
    /// (`is_superuser`); `None` when it did not say (a pooler may not pass
    /// it on).
    pub superuser: Option<bool>,
    /// Kept for the backend with the connection: why this session's
    /// read-only queries run as `pg_read_all_data`, when they do (see
    /// `role::LoginPowers`).
    pub reader: Option<super::role::LoginPowers>,
    /// Through a connection pooler: the session is not pgmcp's alone, and
    /// a statement sent outside a transaction may reach another server
    /// connection, so nothing is deallocated there.
    pub pooled: bool,
    /// The socket's descriptor, for `kernel_view`.
    #[cfg(unix)]
    raw: Option<RawSocket>,
    /// What the TLS handshake agreed on; `None` without TLS.
    tls: Option<TlsSession>,
    /// Where the password sent came from; `None` when the server asked for none.
    password_from: Option<PasswordSource>,
}

/// How an SSLRequest went.
enum Negotiated {
    Tls(Box<dyn Io>, TlsSession),
    /// The server said `N`: the same socket goes on without TLS.
    Plain(Box<dyn Io>),
}

/// Ask the server for TLS (PostgreSQL's SSLRequest) and, when it agrees, run
/// the handshake. Exactly one byte is read before the handshake, so nothing the
/// server sent in the clear can be taken as part of the encrypted stream.
async fn start_tls(mut io: Box<dyn Io>, tls: &TlsClient) -> Result<Negotiated, WireError> {
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

    /// What the TLS handshake agreed on; `None` when the connection has no TLS.
    pub fn tls(&self) -> Option<&TlsSession> {
        self.tls.as_ref()
    }

    /// Where the password came from; `None` when the server asked for none.
    pub fn password_from(&self) -> Option<&PasswordSource> {
        self.password_from.as_ref()
    }

    /// The password to send (the server asked for one, `asked` says how),
    /// and where it came from: the one given, else the password file (read
    /// now, as libpq does, so edits apply to new connections).
    fn password(&mut self, params: &ConnectParams, asked: &'static str) -> Result<String, WireError> {
        if let Some(password) = &params.password {
            self.password_from = Some(params.password_from.clone().unwrap_or(PasswordSource::Environment));
            return Ok(password.clone());
        }
        let missing = |search| WireError::PasswordRequired { asked, search };
        let Some(path) = &params.passfile else {
            return Err(missing(PasswordSearch::NoFile));
        };
        let target = passfile::Target {
            host: &params.host,
            port: params.port,
            dbname: params.dbname.as_deref().unwrap_or(&params.user),
            user: &params.user,
        };
        match passfile::lookup(path, target) {
            Ok(Lookup::Found { password, line }) => {
                self.password_from = Some(PasswordSource::Passfile {
                    path: path.clone(),
                    line,
                });
                Ok(password)
            }
            Ok(Lookup::Missing) => Err(missing(PasswordSearch::Missing(path.clone()))),
            Ok(Lookup::NoMatch { near }) => Err(missing(PasswordSearch::NoLine {
                path: path.clone(),
                near,
            })),
            Err(ignored) => {
                tracing::warn!("{ignored}");
                Err(missing(PasswordSearch::Ignored(ignored)))
            }
        }
    }

    async fn authenticate(&mut self, params: &ConnectParams) -> Result<(), WireError> {
        loop {
            match self.read_message().await? {
                Message::AuthenticationOk => return Ok(()),
                Message::AuthenticationCleartextPassword => {
                    let password = self.password(params, "password")?;
                    frontend::password_message(password.as_bytes(), &mut self.write_buf)?;
                    self.flush().await?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let password = self.password(params, "md5")?;
                    let hash = authentication::md5_hash(params.user.as_bytes(), password.as_bytes(), body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.write_buf)?;
                    self.flush().await?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut offered = Vec::new();
                    let mut mechanisms = body.mechanisms();
                    while let Some(m) = mechanisms.next()? {
                        offered.push(m.to_owned());
                    }
                    if !offered.iter().any(|m| m == sasl::SCRAM_SHA_256) {
                        return Err(WireError::UnsupportedAuth("SASL without SCRAM-SHA-256"));
                    }
                    let password = self.password(params, "scram-sha-256")?;
                    // Without channel binding ("n"): saying "y" (supported but not
                    // offered) would make a TLS server that offers
                    // SCRAM-SHA-256-PLUS suspect a downgrade and refuse.
                    let mut scram = ScramSha256::new(password.as_bytes(), sasl::ChannelBinding::unsupported());
                    frontend::sasl_initial_response(sasl::SCRAM_SHA_256, scram.message(), &mut self.write_buf)?;
                    self.flush().await?;
                    match self.read_message().await? {
                        Message::AuthenticationSaslContinue(body) => scram.update(body.data())?,
                        Message::ErrorResponse(body) => return Err(db_error(&body)?.into()),
                        _ => {
                            return Err(WireError::Protocol("unexpected message during SCRAM".into()));
                        }
                    }
                    frontend::sasl_response(scram.message(), &mut self.write_buf)?;
                    self.flush().await?;
                    match self.read_message().await? {
                        Message::AuthenticationSaslFinal(body) => scram.finish(body.data())?,
                        Message::ErrorResponse(body) => return Err(db_error(&body)?.into()),
                        _ => {
                            return Err(WireError::Protocol("unexpected message during SCRAM".into()));
                        }
                    }
                }
                Message::AuthenticationKerberosV5 => {
                    return Err(WireError::UnsupportedAuth("Kerberos V5"));
                }
                Message::AuthenticationScmCredential => {
                    return Err(WireError::UnsupportedAuth("SCM credentials"));
                }
                Message::AuthenticationGss | Message::AuthenticationGssContinue(_) => {
                    return Err(WireError::UnsupportedAuth("GSSAPI"));
                }
                Message::AuthenticationSspi => return Err(WireError::UnsupportedAuth("SSPI")),
                Message::ErrorResponse(body) => return Err(db_error(&body)?.into()),
                Message::NoticeResponse(_) => {}
                _ => {
                    return Err(WireError::Protocol("unexpected message during authentication".into()));
                }
            }
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

    pub fn cancel_target(&self) -> CancelTarget {
        self.cancel.clone()
    }

    pub fn created(&self) -> Instant {
        self.created
    }

    /// False when an exchange was abandoned half-way, or retired: drop the
    /// connection.
    pub fn is_reusable(&self) -> bool {
        !self.in_flight
    }

    /// The process id the server gave at startup (`BackendKeyData`): that
    /// of the server session itself when connected directly; a pooler
    /// hands out keys of its own, never a server session's.
    pub fn startup_pid(&self) -> i32 {
        self.cancel.process_id
    }

    /// Deallocate every prepared statement before the next exchange and
    /// prepare pgmcp's again: whether they are still there is not known.
    pub fn forget_prepared(&mut self) {
        if !self.pooled {
            self.forget_prepared = true;
        }
    }

    /// From now on the connection goes through a pooler: pgmcp's named
    /// statements are not to be counted on, and nothing is deallocated.
    pub fn pool_from_now(&mut self) {
        self.pooled = true;
        self.prepared.clear();
        self.forget_prepared = false;
    }

    /// Never reuse this connection: a cancel request sent for its statement
    /// may still be on its way, and would stop the next call's statement.
    pub fn retire(&mut self) {
        self.in_flight = true;
    }

    /// Run one [`Exchange`]: everything is written at once and the replies read
    /// in order. The first server error is returned after the whole exchange has
    /// been read, so the connection is left ready for the next one.
    pub async fn exchange(&mut self, ex: &Exchange<'_>) -> Result<StatementResult, WireError> {
        self.in_flight = true;
        self.read_deferred().await?;
        if self.forget_prepared {
            if !self.pooled {
                frontend::query("DEALLOCATE ALL", &mut self.write_buf)?;
                self.flush().await?;
                self.deferred_replies = 1;
                self.read_deferred().await?;
            }
            self.prepared.clear();
            self.forget_prepared = false;
        }
        for sql in ex.setup {
            self.push_statement(sql)?;
        }
        // Whether this exchange parses a named statement of pgmcp's: if it
        // fails, whether the statement now exists is unknown.
        let mut parsed = false;
        // The main statement is parsed before the checks and bound after
        // them: its names resolve in a catalog committed no later than the
        // one the checks read, and the planner (which may run functions it
        // folds to constants) runs only after they passed. ARCHITECTURE.md,
        // "What remains between the check and the statement".
        let (checks, before): (Vec<&Prepared<'_>>, Vec<&Prepared<'_>>) =
            ex.prepared.iter().partition(|p| p.after_parse);
        let mut main_parsed_at = None;
        for (i, prepared) in before.iter().chain(&checks).enumerate() {
            if i == before.len() {
                main_parsed_at = Some(ex.setup.len() + i);
                self.push_parse(MAIN_STATEMENT, ex.sql, ex.params)?;
            }
            let unnamed = prepared.name.is_empty();
            let parse = unnamed || !self.prepared.contains(&prepared.name);
            if parse {
                frontend::parse(
                    prepared.name,
                    prepared.sql,
                    prepared.params.iter().map(|_| 0u32),
                    &mut self.write_buf,
                )?;
                if !unnamed {
                    self.prepared.push(prepared.name);
                    parsed = true;
                }
            }
            self.push_bound(prepared.name, prepared.params)?;
        }
        // Without checks, unnamed, as pgmcp's own statements are: an
        // exchange outside a transaction may reach another server connection
        // after its Sync, behind a pooler, and could not close it there.
        let (statement, portal) = match main_parsed_at {
            Some(_) => (MAIN_STATEMENT, MAIN_PORTAL),
            None => ("", ""),
        };
        let main_parsed_at = match main_parsed_at {
            Some(at) => at,
            None => {
                self.push_parse("", ex.sql, ex.params)?;
                ex.setup.len() + ex.prepared.len()
            }
        };
        self.push_bind(portal, statement, ex.params)?;
        frontend::describe(b'P', portal, &mut self.write_buf)?;
        frontend::execute(
            portal,
            i32::try_from(ex.max_rows).unwrap_or(i32::MAX),
            &mut self.write_buf,
        )?;
        frontend::sync(&mut self.write_buf);
        let mut ready_left = 1 + ex.finish.len();
        if !statement.is_empty() {
            // After the Sync, so that it runs even when an error made the
            // server skip to it, and still in the exchange's transaction
            // (the checks run in one), so on the same server connection;
            // not an error when the statement was never made. The portal
            // ends with the transaction. Its own Sync, so its reply is read
            // here.
            frontend::close(b'S', statement, &mut self.write_buf)?;
            frontend::sync(&mut self.write_buf);
            ready_left += 1;
        }
        for sql in ex.finish.iter().chain(ex.deferred) {
            frontend::query(sql, &mut self.write_buf)?;
        }
        self.flush().await?;

        let mut result = StatementResult::default();
        // The first error, and whether it came from a setup statement.
        let mut first_error: Option<(DbError, bool)> = None;
        // The setup statements complete first; the main statement is the next.
        let mut completed = 0usize;
        let main = ex.setup.len() + ex.prepared.len();
        // Whether the main statement's Parse has been answered.
        let mut main_parsed = false;
        let mut budget = ex.budget;
        // What each row costs beyond its values: a key per column.
        let mut row_cost = 0;
        // The main statement is a COPY ... TO STDOUT: its lines are rows.
        let mut copy: Option<CopyOut> = None;
        while ready_left > 0 {
            // A long data row of the main statement is read field by field.
            if completed == main && budget.is_some() {
                // Every message has a five-byte header: look at it first.
                self.fill(5).await?;
            }
            // A long COPY line likewise, read as far as the budget allows.
            if completed == main
                && let Some(out) = copy
                && let Some(budget) = budget.as_mut()
                && let Some(len) = self.long_copy_line()
            {
                let wanted = result.rows.len() < out.max_rows;
                let keep = wanted && !budget.spent();
                if wanted {
                    budget.charge(row_cost);
                }
                self.read_buf.advance(5);
                let taken = if keep { budget.take(len) } else { 0 };
                self.fill(taken).await?;
                let head = self.read_buf.split_to(taken).freeze();
                self.discard(len - taken).await?;
                if keep {
                    let line = out.line(head, len, result.rows.len(), &mut result.cuts);
                    result.rows.push(vec![Some(line)]);
                } else if wanted {
                    result.skipped += 1;
                }
                continue;
            }
            if completed == main
                && let Some(budget) = budget.as_mut()
                && let Some(len) = self.long_data_row()
            {
                let dropped = budget.spent();
                budget.charge(row_cost);
                let row = self
                    .read_long_row(len, budget, dropped, result.rows.len(), &mut result.cuts)
                    .await?;
                if dropped {
                    result.skipped += 1;
                } else {
                    result.rows.push(row);
                }
                continue;
            }
            match self.read_message().await? {
                Message::ParseComplete => {
                    if completed == main_parsed_at {
                        main_parsed = true;
                    }
                }
                Message::BindComplete | Message::CloseComplete => {}
                Message::ParameterStatus(_) | Message::NoticeResponse(_) | Message::NotificationResponse(_) => {}
                Message::NoData => {}
                // Only the main statement's columns: pgmcp's own statements
                // that return rows (the session reset sent after `COMMIT`
                // behind a pooler) answer with columns of their own, which
                // are no part of the caller's answer.
                Message::RowDescription(body) if completed == main => {
                    let mut fields = body.fields();
                    while let Some(f) = fields.next()? {
                        row_cost += f.name().len() + 4;
                        result.columns.push(WireColumn {
                            name: f.name().to_owned(),
                            type_oid: f.type_oid(),
                            type_modifier: f.type_modifier(),
                            table_oid: f.table_oid(),
                            column_id: f.column_id(),
                        });
                    }
                }
                Message::RowDescription(_) => {}
                Message::DataRow(body) => {
                    if !ex.prepared.is_empty() && completed + 1 == main && result.prepared_answer.is_none() {
                        let first = split_row(&body)?.into_iter().next().flatten();
                        result.prepared_answer = first.map(|v| String::from_utf8_lossy(&v).into_owned());
                    }
                    if completed == main {
                        match budget.as_mut() {
                            Some(budget) if budget.spent() => result.skipped += 1,
                            Some(budget) => {
                                budget.charge(row_cost);
                                let row = split_row_within(&body, budget, result.rows.len(), &mut result.cuts)?;
                                result.rows.push(row);
                            }
                            None => result.rows.push(split_row(&body)?),
                        }
                    }
                }
                Message::CommandComplete(body) => {
                    if completed == main {
                        result.command_tag = Some(body.tag()?.to_owned());
                    }
                    completed += 1;
                }
                Message::PortalSuspended => {
                    if completed == main {
                        result.suspended = true;
                    }
                    completed += 1;
                }
                Message::EmptyQueryResponse => completed += 1,
                Message::ErrorResponse(body) => {
                    let err = db_error(&body)?;
                    // After an error the server skips to the Sync, so the
                    // statement that failed is the one not yet completed:
                    // the main one's Parse comes after the first
                    // `main_parsed_at` statements, its Bind after all.
                    let setup = completed < main && (completed != main_parsed_at || main_parsed);
                    first_error.get_or_insert((err, setup));
                }
                // COPY ... TO STDOUT: PostgreSQL sends each row as one
                // CopyData line. The main statement's lines become rows of
                // one text column, held within the row cap and the budget
                // as data rows are; any other statement's are drained.
                Message::CopyOutResponse(body) => {
                    if completed == main {
                        let out = CopyOut {
                            binary: body.format() != 0,
                            max_rows: match ex.max_rows {
                                0 => usize::MAX,
                                n => usize::try_from(n).unwrap_or(usize::MAX),
                            },
                        };
                        row_cost += COPY_COLUMN.len() + 4;
                        result.columns = vec![out.column()];
                        copy = Some(out);
                    }
                }
                Message::CopyData(body) => {
                    if completed == main
                        && let Some(out) = copy
                    {
                        let line = body.into_bytes();
                        let len = line.len();
                        match budget.as_mut() {
                            // One line past the cap (it is the caller's
                            // cap plus one) already says more exist.
                            _ if result.rows.len() >= out.max_rows => {}
                            Some(budget) if budget.spent() => result.skipped += 1,
                            Some(budget) => {
                                budget.charge(row_cost);
                                let taken = budget.take(len);
                                let line = out.line(line.slice(..taken), len, result.rows.len(), &mut result.cuts);
                                result.rows.push(vec![Some(line)]);
                            }
                            None => {
                                let line = out.line(line, len, result.rows.len(), &mut result.cuts);
                                result.rows.push(vec![Some(line)]);
                            }
                        }
                    }
                }
                Message::CopyDone => {}
                Message::CopyInResponse(_) => {
                    // The server now waits for data we will never send, and our
                    // pipelined messages would be read as protocol violations.
                    // Leave `in_flight` set so the connection is discarded.
                    return Err(WireError::Protocol(
                        "COPY FROM STDIN needs a data stream, which pgmcp does not have".into(),
                    ));
                }
                Message::ReadyForQuery(_) => ready_left -= 1,
                _ => {
                    return Err(WireError::Protocol("unexpected message during query".into()));
                }
            }
        }
        self.deferred_replies = ex.deferred.len();
        self.in_flight = false;
        // The caller's own prepared statements do not outlive its call; a
        // `DEALLOCATE` of the caller's may have taken pgmcp's with it, so
        // they are prepared again rather than found missing.
        let tag = result.command_tag.as_deref().unwrap_or_default();
        if (parsed && first_error.is_some()) || tag == "PREPARE" || tag.starts_with("DEALLOCATE") {
            self.forget_prepared = true;
        }
        match first_error {
            Some((err, true)) => Err(WireError::Setup(Box::new(err))),
            Some((err, false)) => Err(err.into()),
            None => Ok(result),
        }
    }

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

    /// Read the replies of the previous exchange's deferred statements. They
    /// reset the session, so any error there means the connection is not fit
    /// for reuse.
    pub async fn read_deferred(&mut self) -> Result<(), WireError> {
        while self.deferred_replies > 0 {
            match self.read_message().await? {
                Message::ReadyForQuery(_) => self.deferred_replies -= 1,
                Message::ErrorResponse(body) => {
                    let err = db_error(&body)?;
                    return Err(WireError::Protocol(format!("resetting the session failed: {err}")));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn push_statement(&mut self, sql: &str) -> Result<(), WireError> {
        self.push_parse("", sql, &[])?;
        self.push_bound("", &[])
    }

    fn push_parse(&mut self, name: &str, sql: &str, params: &[Option<String>]) -> Result<(), WireError> {
        // Type OID 0 everywhere: the server infers each parameter's type from context.
        frontend::parse(name, sql, params.iter().map(|_| 0u32), &mut self.write_buf)?;
        Ok(())
    }

    /// Bind the statement `name` (`""`: the one just parsed) to the unnamed
    /// portal and execute it to the end.
    fn push_bound(&mut self, name: &str, params: &[Option<String>]) -> Result<(), WireError> {
        self.push_bind("", name, params)?;
        frontend::execute("", 0, &mut self.write_buf)?;
        Ok(())
    }

    /// Bind the statement `name` to the portal `portal`, text in and out.
    fn push_bind(&mut self, portal: &str, name: &str, params: &[Option<String>]) -> Result<(), WireError> {
        let bind = frontend::bind(
            portal,
            name,
            Some(0), // all parameters in text format
            params.iter(),
            |param, buf| match param {
                Some(text) => {
                    buf.extend_from_slice(text.as_bytes());
                    Ok(postgres_protocol::IsNull::No)
                }
                None => Ok(postgres_protocol::IsNull::Yes),
            },
            Some(0), // all results in text format
            &mut self.write_buf,
        );
        match bind {
            Ok(()) => {}
            Err(frontend::BindError::Conversion(e)) => {
                return Err(WireError::Protocol(e.to_string()));
            }
            Err(frontend::BindError::Serialization(e)) => return Err(e.into()),
        }
        Ok(())
    }

    /// Say goodbye politely; errors are irrelevant at this point.
    pub async fn terminate(mut self) {
        frontend::terminate(&mut self.write_buf);
        let _ = self.flush().await;
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.io.write_all(&self.write_buf).await?;
        self.write_buf.clear();
        self.io.flush().await
    }

    /// The body length of the next message if it is a data row longer than
    /// [`STREAMED_ROW`], judged from its header alone.
    fn long_data_row(&self) -> Option<usize> {
        let (kind, len) = self.header()?;
        (kind == b'D' && len > STREAMED_ROW).then(|| len - 4)
    }

    /// The body length of the next message if it is a COPY line longer than
    /// [`STREAMED_ROW`], judged from its header alone.
    fn long_copy_line(&self) -> Option<usize> {
        let (kind, len) = self.header()?;
        (kind == b'd' && len > STREAMED_ROW).then(|| len - 4)
    }

    /// The next message's type and length (its own four bytes included),
    /// when its header is buffered.
    fn header(&self) -> Option<(u8, usize)> {
        let h = self.read_buf.get(..5)?;
        Some((h[0], u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize))
    }

    /// Read a data row of `len` body bytes (its header still buffered) field
    /// by field: each field keeps what `budget` allows and the rest is read
    /// and dropped as it arrives; with `drop_all`, every field is dropped.
    async fn read_long_row(
        &mut self,
        len: usize,
        budget: &mut ReadBudget,
        drop_all: bool,
        row: usize,
        cuts: &mut Vec<CutValue>,
    ) -> Result<WireRow, WireError> {
        let bad = || WireError::Protocol("malformed data row".into());
        self.read_buf.advance(5);
        self.fill(2).await?;
        let count = usize::try_from(self.read_buf.get_i16()).map_err(|_| bad())?;
        let mut left = len.checked_sub(2).ok_or_else(bad)?;
        let mut fields = Vec::with_capacity(count.min(1664));
        for column in 0..count {
            self.fill(4).await?;
            let field = self.read_buf.get_i32();
            left = left.checked_sub(4).ok_or_else(bad)?;
            let Ok(field) = usize::try_from(field) else {
                fields.push(None);
                continue;
            };
            left = left.checked_sub(field).ok_or_else(bad)?;
            let keep = if drop_all { 0 } else { budget.take(field) };
            self.fill(keep).await?;
            let head = self.read_buf.split_to(keep).freeze();
            self.discard(field - keep).await?;
            if keep < field && !drop_all {
                cuts.push(CutValue {
                    row,
                    column,
                    len: field,
                });
            }
            fields.push(Some(head));
        }
        if left != 0 {
            return Err(bad());
        }
        Ok(fields)
    }

    /// Read until at least `n` bytes are buffered.
    async fn fill(&mut self, n: usize) -> Result<(), WireError> {
        while self.read_buf.len() < n {
            // Reads land in spare capacity: keep a useful amount of it.
            self.read_buf
                .reserve((n - self.read_buf.len()).clamp(64 * 1024, STREAMED_ROW));
            if self.io.read_buf(&mut self.read_buf).await? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection").into());
            }
        }
        Ok(())
    }

    /// Read and drop `n` bytes, holding at most a buffer's worth at a time.
    async fn discard(&mut self, mut n: usize) -> Result<(), WireError> {
        loop {
            let k = n.min(self.read_buf.len());
            self.read_buf.advance(k);
            n -= k;
            if n == 0 {
                return Ok(());
            }
            self.fill(1).await?;
        }
    }

    async fn read_message(&mut self) -> Result<Message, WireError> {
        // Any message can be long (an error quoting a 150 MB value, a
        // NOTICE, a COPY line): one longer than LONG_MESSAGE is never
        // buffered whole.
        self.fill(5).await?;
        let (kind, len) = self.header().unwrap_or_default();
        if len > LONG_MESSAGE && !(kind == b'D' && len <= OWN_ROW) {
            return self.read_long_message(kind, len.saturating_sub(4)).await;
        }
        loop {
            if let Some(message) = Message::parse(&mut self.read_buf)? {
                return Ok(message);
            }
            if self.io.read_buf(&mut self.read_buf).await? == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection").into());
            }
        }
    }

    /// A message of `len` body bytes, longer than [`LONG_MESSAGE`], its
    /// header still buffered. An error or notice keeps the first
    /// [`LONG_FIELD`] bytes of each field; a COPY line or a notification is
    /// read and dropped (pgmcp returns neither); anything else long (a data
    /// row of pgmcp's own queries, which are small by construction) is
    /// refused, and the connection, left mid-message, is not reused.
    async fn read_long_message(&mut self, kind: u8, len: usize) -> Result<Message, WireError> {
        let mut synthetic = BytesMut::new();
        match kind {
            b'E' | b'N' => {
                self.read_buf.advance(5);
                let body = self.read_capped_fields(len).await?;
                synthetic.put_u8(kind);
                synthetic.put_i32(i32::try_from(body.len() + 4).unwrap_or(i32::MAX));
                synthetic.extend_from_slice(&body);
            }
            b'd' | b'A' => {
                self.read_buf.advance(5);
                self.discard(len).await?;
                synthetic.put_u8(kind);
                if kind == b'd' {
                    synthetic.put_i32(4);
                } else {
                    // A notification from no process, on no channel.
                    synthetic.put_i32(10);
                    synthetic.put_i32(0);
                    synthetic.extend_from_slice(&[0, 0]);
                }
            }
            _ => {
                return Err(WireError::Protocol(format!(
                    "the server sent a {len}-byte message, longer than pgmcp reads for its own queries"
                )));
            }
        }
        Message::parse(&mut synthetic)?.ok_or_else(|| WireError::Protocol("malformed long message".into()))
    }

    /// The fields of an error or notice body of `len` bytes, each cut to
    /// [`LONG_FIELD`] bytes (whole characters), re-encoded as a body.
    async fn read_capped_fields(&mut self, mut len: usize) -> Result<BytesMut, WireError> {
        let bad = || WireError::Protocol("malformed error message".into());
        let mut body = BytesMut::new();
        loop {
            self.fill(1).await?;
            let code = self.read_buf.get_u8();
            len = len.checked_sub(1).ok_or_else(bad)?;
            body.put_u8(code);
            if code == 0 {
                break;
            }
            let mut kept: Vec<u8> = Vec::new();
            loop {
                self.fill(1).await?;
                let chunk = &self.read_buf[..];
                let (part, end) = match chunk.iter().position(|&b| b == 0) {
                    Some(at) => (&chunk[..at], Some(at)),
                    None => (chunk, None),
                };
                let room = LONG_FIELD.saturating_sub(kept.len());
                kept.extend_from_slice(&part[..part.len().min(room)]);
                let used = end.map_or(part.len(), |at| at + 1);
                self.read_buf.advance(used);
                len = len.checked_sub(used).ok_or_else(bad)?;
                if end.is_some() {
                    break;
                }
            }
            body.extend_from_slice(crate::pipeline::budget::head_text(&kept).as_bytes());
            body.put_u8(0);
        }
        if len != 0 {
            return Err(bad());
        }
        Ok(body)
    }
}

/// The one column a `COPY ... TO STDOUT` answers with: each row is a line
/// of its output (text or CSV as the statement asked).
const COPY_COLUMN: &str = "line";

/// `text`, and `bytea` for `COPY ... (FORMAT binary)`.
const TEXT_OID: u32 = 25;
const BYTEA_OID: u32 = 17;

/// A `COPY ... TO STDOUT` being read as rows.
#[derive(Debug, Clone, Copy)]
struct CopyOut {
    /// `FORMAT binary`: its lines are returned as `bytea`, in hex.
    binary: bool,
    /// The most lines held, `Execute`'s row limit (the caller's cap plus
    /// one, which tells it more exist): COPY does not stop at that limit, so
    /// the lines past it are read and dropped here.
    max_rows: usize,
}

impl CopyOut {
    fn column(self) -> WireColumn {
        WireColumn {
            name: COPY_COLUMN.to_owned(),
            type_oid: if self.binary { BYTEA_OID } else { TEXT_OID },
            type_modifier: -1,
            table_oid: 0,
            column_id: 0,
        }
    }

    /// A line's value from what the budget kept of it (`head`) and its
    /// whole length `len`: without its ending newline, in hex when binary,
    /// a cut noted when the head is not all of it.
    fn line(self, head: Bytes, len: usize, row: usize, cuts: &mut Vec<CutValue>) -> Bytes {
        let whole = head.len() == len;
        let head = match (whole, self.binary, head.last()) {
            (true, false, Some(b'\n')) => head.slice(..head.len() - 1),
            _ => head,
        };
        if !whole {
            cuts.push(CutValue { row, column: 0, len });
        }
        if !self.binary {
            return head;
        }
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = Vec::with_capacity(2 + 2 * head.len());
        hex.extend_from_slice(b"\\x");
        for byte in &head[..] {
            hex.push(DIGITS[usize::from(byte >> 4)]);
            hex.push(DIGITS[usize::from(byte & 15)]);
        }
        Bytes::from(hex)
    }
}

/// Messages longer than this are read piece by piece, never buffered whole.
const LONG_MESSAGE: usize = 1 << 20;

/// The longest data row read whole: pgmcp's own queries answer in one row
/// (a table's whole description), bounded by what their SQL selects; a
/// query's rows are read within its budget instead, field by field.
const OWN_ROW: usize = 16 << 20;

/// What each field of a long error or notice keeps, in bytes.
const LONG_FIELD: usize = crate::pipeline::budget::MESSAGE_CAP;

/// A data row's fields, each kept as far as `budget` allows; a field cut
/// keeps a copy of its head, so the message's buffer is freed.
fn split_row_within(
    body: &backend::DataRowBody,
    budget: &mut ReadBudget,
    row: usize,
    cuts: &mut Vec<CutValue>,
) -> Result<WireRow, WireError> {
    let buffer = body.buffer_bytes();
    let mut ranges = body.ranges();
    let mut fields = Vec::new();
    while let Some(range) = ranges.next()? {
        fields.push(range.map(|r| {
            let keep = budget.take(r.len());
            if keep < r.len() {
                cuts.push(CutValue {
                    row,
                    column: fields.len(),
                    len: r.len(),
                });
                Bytes::copy_from_slice(&buffer[r.start..r.start + keep])
            } else {
                buffer.slice(r)
            }
        }));
    }
    Ok(fields)
}

fn split_row(body: &backend::DataRowBody) -> Result<WireRow, WireError> {
    let buffer = body.buffer_bytes();
    let mut ranges = body.ranges();
    let mut row = Vec::new();
    while let Some(range) = ranges.next()? {
        row.push(range.map(|r| buffer.slice(r)));
    }
    Ok(row)
}

/// A server's `ErrorResponse` as a [`DbError`] whose code is the SQLSTATE.
/// The severity is the untranslated `V` field when the server sends one
/// (9.6 and later), else the `S` field in the server's language.
fn db_error(body: &backend::ErrorResponseBody) -> io::Result<DbError> {
    let mut err = DbError::new(ErrorCode::SqlState(String::new()), String::new());
    err.severity.clear();
    let mut fields = body.fields();
    while let Some(field) = fields.next()? {
        let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'V' => err.severity = value,
            b'S' if err.severity.is_empty() => err.severity = value,
            b'C' => err.code = ErrorCode::SqlState(value),
            b'M' => err.message = value,
            b'D' => err.detail = Some(value),
            b'H' => err.hint = Some(value),
            b'P' => err.position = value.parse().ok(),
            _ => {}
        }
    }
    // Undefined table, undefined column.
    err.undefined_name = matches!(err.code.as_str(), "42P01" | "42703");
    Ok(err)
}

/// A connected socket, and its descriptor where the kernel can be asked
/// about it directly ([`peer_closed`]).
type Socket = (Box<dyn Io>, Option<RawSocket>);

#[cfg(unix)]
type RawSocket = std::os::fd::RawFd;
#[cfg(not(unix))]
type RawSocket = std::convert::Infallible;

async fn open_socket(host: &Host, port: u16) -> io::Result<Socket> {
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
