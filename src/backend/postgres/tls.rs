//! TLS for PostgreSQL connections: libpq's `sslmode` rules on rustls.
//!
//! How the server's certificate is checked, as in libpq:
//!
//! | roots available | `disable`/`allow`/`prefer`/`require` | `verify-ca` | `verify-full` |
//! | --- | --- | --- | --- |
//! | none | not checked | chain (system CAs) | chain and host (system CAs) |
//! | a root file (`sslrootcert`, or `~/.postgresql/root.crt`) | chain | chain | chain and host |
//! | `sslrootcert=system` | — | — | chain and host (system CAs) |
//!
//! A root file that exists is always used, whatever the mode, as libpq does
//! (so `require` then behaves like `verify-ca`). One difference from libpq:
//! `verify-ca`/`verify-full` without any root file trust the operating system's
//! CAs, where libpq refuses to connect; managed databases with publicly
//! trusted certificates then work without downloading a CA bundle. Even when
//! the certificate is not checked, the handshake's signatures are, so the
//! connection is encrypted to whoever holds the certificate's key.
//!
//! A client certificate (`sslcert`, default `~/.postgresql/postgresql.crt`) is
//! sent when its file exists, with its key (`sslkey`), which like libpq must
//! not be readable by group or others (on Unix: libpq does not check the key's
//! ACL on Windows, and neither does pgmcp).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::params::{ConnectParams, RootCert, SslMode};

/// A connection's TLS settings, ready to run handshakes (for the connection
/// and for its cancel requests).
pub struct TlsClient {
    connector: TlsConnector,
    server_name: ServerName<'static>,
    /// How the certificate is checked, for error messages: `sslmode=verify-full,
    /// sslrootcert=/path/root.crt`.
    checks: String,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient").field("checks", &self.checks).finish()
    }
}

/// TLS settings that cannot be used: a file missing or unreadable, a key
/// others can read, a host name that is not one.
#[derive(Debug, thiserror::Error)]
#[error("TLS settings: {0}")]
pub struct TlsSetupError(String);

/// What a finished handshake agreed on, for `pgmcp check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSession {
    pub version: String,
    pub cipher: String,
}

impl fmt::Display for TlsSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.version, self.cipher)
    }
}

impl TlsClient {
    /// Read the certificates and keys the settings name. `host` is the TCP host
    /// connected to: the name `verify-full` checks.
    pub fn new(params: &ConnectParams, host: &str) -> Result<TlsClient, TlsSetupError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (roots, roots_name) = roots(params)?;
        let verify_name = params.sslmode == SslMode::VerifyFull;
        let verifier: Arc<dyn ServerCertVerifier> = match roots {
            None => Arc::new(AnyCertificate(provider.clone())),
            Some(roots) => {
                let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| TlsSetupError(format!("cannot use the root certificates ({roots_name}): {e}")))?;
                if verify_name {
                    webpki
                } else {
                    Arc::new(ChainOnly(webpki))
                }
            }
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsSetupError(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match client_identity(params)? {
            Some((certs, key)) => builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| TlsSetupError(format!("cannot use the client certificate: {e}")))?,
            None => builder.with_no_client_auth(),
        };
        let server_name = match ServerName::try_from(host.to_owned()) {
            Ok(name) => name,
            Err(_) if !verify_name => ServerName::try_from("localhost").map_err(|e| TlsSetupError(e.to_string()))?,
            Err(e) => {
                return Err(TlsSetupError(format!(
                    "host \"{host}\" cannot be checked against a certificate: {e}"
                )));
            }
        };
        let checks = match params.sslmode {
            SslMode::VerifyFull | SslMode::VerifyCa => format!("sslmode={}, {roots_name}", params.sslmode.name()),
            mode if roots_name.starts_with("sslrootcert") => format!("sslmode={}, {roots_name}", mode.name()),
            mode => format!("sslmode={}, certificate not checked", mode.name()),
        };
        Ok(TlsClient {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
            checks,
        })
    }

    /// Run the TLS handshake over `io`, after the server accepted an SSLRequest.
    pub async fn handshake<S>(&self, io: S) -> Result<(TlsStream<S>, TlsSession), String>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let stream = self
            .connector
            .connect(self.server_name.clone(), io)
            .await
            .map_err(|e| self.explain(e))?;
        let (_, conn) = stream.get_ref();
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_owned(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_owned(),
            Some(other) => format!("{other:?}"),
            None => "TLS".to_owned(),
        };
        let cipher = conn
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()))
            .unwrap_or_default();
        Ok((stream, TlsSession { version, cipher }))
    }

    /// A handshake failure in words a person can act on.
    fn explain(&self, e: io::Error) -> String {
        match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
            Some(rustls::Error::InvalidCertificate(cert)) => {
                format!("certificate verification failed: {} ({})", describe(cert), self.checks)
            }
            Some(rustls::Error::AlertReceived(alert)) => {
                let why = match alert {
                    rustls::AlertDescription::CertificateRequired => {
                        "; the server wants a client certificate (set sslcert and sslkey)"
                    }
                    rustls::AlertDescription::UnknownCA | rustls::AlertDescription::BadCertificate => {
                        "; the server did not accept the client certificate"
                    }
                    _ => "",
                };
                format!("the server ended the TLS handshake: {alert:?}{why}")
            }
            Some(other) => format!("TLS handshake failed: {other} ({})", self.checks),
            None => format!("TLS handshake failed: {e}"),
        }
    }
}

/// rustls's certificate errors, worded for a person.
fn describe(e: &CertificateError) -> String {
    match e {
        CertificateError::UnknownIssuer => "the certificate is not signed by a trusted root".to_owned(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("the certificate does not name the host connected to: {e}")
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("the certificate has expired: {e}")
        }
        other => other.to_string(),
    }
}

/// The trusted roots and how to name them in messages; `None` when the
/// certificate is not to be checked.
fn roots(params: &ConnectParams) -> Result<(Option<RootCertStore>, String), TlsSetupError> {
    let verify = matches!(params.sslmode, SslMode::VerifyCa | SslMode::VerifyFull);
    match &params.sslrootcert {
        RootCert::File(path) if path.exists() || verify => {
            Ok((Some(root_file(path)?), format!("sslrootcert={}", path.display())))
        }
        RootCert::Default(Some(path)) if path.exists() => {
            Ok((Some(root_file(path)?), format!("sslrootcert={}", path.display())))
        }
        RootCert::System => Ok((Some(system_roots()?), "sslrootcert=system".to_owned())),
        _ if verify => Ok((Some(system_roots()?), "the system's trusted CAs".to_owned())),
        _ => Ok((None, String::new())),
    }
}

fn root_file(path: &Path) -> Result<RootCertStore, TlsSetupError> {
    let bad = |why: String| TlsSetupError(format!("cannot read root certificate file {}: {why}", path.display()));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no PEM certificates in it".to_owned()));
    }
    let mut store = RootCertStore::empty();
    for cert in certs {
        store.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    Ok(store)
}

fn system_roots() -> Result<RootCertStore, TlsSetupError> {
    let found = rustls_native_certs::load_native_certs();
    let mut store = RootCertStore::empty();
    // Certificates the store holds but webpki cannot use are skipped, as a
    // browser would; only an empty result is an error.
    store.add_parsable_certificates(found.certs);
    if store.is_empty() {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none found".to_owned(), |e| e.to_string());
        return Err(TlsSetupError(format!(
            "no trusted CA certificates in the system store ({why}); give the server's CA with sslrootcert"
        )));
    }
    Ok(store)
}

/// The client certificate and key, when the certificate file exists.
#[allow(clippy::type_complexity)]
fn client_identity(
    params: &ConnectParams,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, TlsSetupError> {
    let Some(cert_path) = params.sslcert.as_deref().filter(|p| p.exists()) else {
        return Ok(None);
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_path)
        .and_then(|iter| iter.collect::<Result<_, _>>())
        .map_err(|e| TlsSetupError(format!("cannot read client certificate {}: {e}", cert_path.display())))?;
    let key_path: PathBuf = params.sslkey.clone().ok_or_else(|| {
        TlsSetupError(format!(
            "client certificate {} has no key: set sslkey",
            cert_path.display()
        ))
    })?;
    let meta = std::fs::metadata(&key_path)
        .map_err(|e| TlsSetupError(format!("cannot read private key file {}: {e}", key_path.display())))?;
    if !key_private(&meta) {
        return Err(TlsSetupError(format!(
            "private key file {} has group or world access; permissions should be u=rw (0600) or less",
            key_path.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .map_err(|e| TlsSetupError(format!("cannot read private key file {}: {e}", key_path.display())))?;
    Ok(Some((certs, key)))
}

/// libpq's rule: 0600 or less, or 0640 or less when root owns the file (a
/// key shared with a system group).
#[cfg(unix)]
fn key_private(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mode = meta.permissions().mode();
    mode & 0o077 == 0 || (meta.uid() == 0 && mode & 0o037 == 0)
}

/// Windows keys have ACLs, not modes, and libpq checks none there.
#[cfg(not(unix))]
fn key_private(_: &std::fs::Metadata) -> bool {
    true
}

/// Accepts any certificate (libpq's `require` without a root file), but still
/// checks that the server holds the key of the certificate it sent.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name is not checked.
/// webpki checks the chain before the name, so a name error means the chain
/// was good.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
