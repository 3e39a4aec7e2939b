//! Authentication: the password to send (the one given, else the password
//! file's line, read at connect time as libpq does) and the methods the
//! server may ask for: cleartext, MD5 and SCRAM-SHA-256 (without channel
//! binding); any other is refused by name. Apart from startup: the methods
//! and where a password comes from are a concern of their own.

use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication;
use postgres_protocol::authentication::sasl::{self, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::error_response::db_error;
use super::{Connection, WireError};
use crate::backend::postgres::diagnosis::PasswordSearch;
use crate::backend::postgres::params::{ConnectParams, PasswordSource};
use crate::backend::postgres::passfile::{self, Lookup};

impl Connection {
    /// The password to send (the server asked for one, `asked` says how),
    /// and where it came from: the one given, else the password file (read
    /// now, as libpq does, so edits apply to new connections).
    fn password(&mut self, params: &ConnectParams, asked: &'static str) -> Result<String, WireError> {
        if let Some(password) = &params.password {
            self.password_from = Some(
                params
                    .password_from
                    .clone()
                    .unwrap_or_else(|| PasswordSource::Environment(params.password_variable.clone())),
            );
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

    pub(super) async fn authenticate(&mut self, params: &ConnectParams) -> Result<(), WireError> {
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
}
