//! TLS against a real PostgreSQL started with `ssl=on` and certificates made
//! in the test: each `sslmode` does what libpq's does, and each failure says
//! what went wrong and which settings were in force.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use pgmcp::testing::postgres::params;
use pgmcp::{Config, Engine, Error, QueryInput, SessionReport};
use tokio_util::sync::CancellationToken;

use crate::support::certs::{Ca, Issued};
use crate::support::pg::{self, PgServer};

/// A PostgreSQL with TLS on, its certificate naming only `localhost` (so
/// `127.0.0.1` is the wrong host name for it), signed by `ca`.
struct TlsServer {
    server: PgServer,
    ca: Ca,
    /// A CA that signed nothing the server has.
    other_ca: Ca,
    client: Issued,
    dir: std::path::PathBuf,
}

fn tls_server() -> &'static TlsServer {
    static SERVER: OnceLock<TlsServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let dir = crate::support::scratch("tls");
        let ca = Ca::new(&dir, "pgmcp-test-ca");
        let other_ca = Ca::new(&dir, "pgmcp-other-ca");
        let cert = ca.server("localhost", "DNS:localhost");
        let client = ca.client("certuser");
        let server = pg::private_server();
        let read = |p: &Path| std::fs::read(p).unwrap();
        let cert_file = server.write_private_file("server.crt", &read(&cert.cert));
        let key_file = server.write_private_file("server.key", &read(&cert.key));
        let ca_file = server.write_private_file("ca.crt", &read(&ca.cert));
        server.psql("postgres", "CREATE ROLE certuser LOGIN");
        server.configure(&[
            ("ssl", "on"),
            ("ssl_cert_file", cert_file.to_str().unwrap()),
            ("ssl_key_file", key_file.to_str().unwrap()),
            ("ssl_ca_file", ca_file.to_str().unwrap()),
        ]);
        server.set_hba(
            "local all all trust\n\
             hostssl all certuser 127.0.0.1/32 cert\n\
             host all all 127.0.0.1/32 scram-sha-256\n",
        );
        TlsServer {
            server,
            ca,
            other_ca,
            client,
            dir,
        }
    })
}

/// `host=... port=... user=... password=... dbname=postgres` plus `extra`.
fn connstring(server: &PgServer, host: &str, extra: &str) -> String {
    format!(
        "host={host} port={} user={} password={} dbname=postgres {extra}",
        server.port(),
        server.admin_user(),
        server.admin_password()
    )
}

fn engine(connstring: &str) -> Engine {
    let mut config = crate::support::engine::builtin_for_server();
    config.query.default_timeout = Duration::from_secs(10);
    // No HOME: nothing from ~/.postgresql or ~/.pgpass gets in.
    let params = params::resolve(Some(connstring), &config.connection, &|_| None).expect("connection string resolves");
    Engine::postgres(config, params)
}

async fn report(connstring: &str) -> Result<SessionReport, Error> {
    let engine = engine(connstring);
    let result = engine.session_report(CancellationToken::new()).await;
    engine.close().await;
    result
}

/// The error a connection attempt must end with, checked for the password.
async fn refused(server: &PgServer, connstring: &str) -> String {
    let text = match report(connstring).await {
        Ok(r) => panic!("expected {connstring:?} to fail, it connected: {r:?}"),
        Err(e) => e.to_string(),
    };
    assert!(!text.contains(server.admin_password()), "password in the error: {text}");
    text
}

fn root(ca: &Ca) -> String {
    format!("sslrootcert={}", ca.cert.display())
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_with_the_right_root_and_host_name() {
    let t = tls_server();
    let r = report(&connstring(
        &t.server,
        "localhost",
        &format!("sslmode=verify-full {}", root(&t.ca)),
    ))
    .await
    .unwrap();
    let encryption = r.encryption.expect("the session is encrypted");
    assert!(encryption.starts_with("TLSv1.3, TLS13_"), "{encryption}");
    assert_eq!(r.user, t.server.admin_user());
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_refuses_a_certificate_for_another_host() {
    let t = tls_server();
    let text = refused(
        &t.server,
        &connstring(&t.server, "127.0.0.1", &format!("sslmode=verify-full {}", root(&t.ca))),
    )
    .await;
    let expected = format!(
        "cannot reach the database: could not connect to 127.0.0.1:{}: certificate verification failed: the certificate does not name the host connected to",
        t.server.port()
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(
        text.ends_with(&format!("(sslmode=verify-full, sslrootcert={})", t.ca.cert.display())),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_and_verify_ca_refuse_an_untrusted_root() {
    let t = tls_server();
    for mode in ["verify-full", "verify-ca"] {
        let text = refused(
            &t.server,
            &connstring(&t.server, "localhost", &format!("sslmode={mode} {}", root(&t.other_ca))),
        )
        .await;
        assert_eq!(
            text,
            format!(
                "cannot reach the database: could not connect to localhost:{}: certificate verification failed: the certificate is not signed by a trusted root (sslmode={mode}, sslrootcert={})",
                t.server.port(),
                t.other_ca.cert.display()
            )
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_ca_checks_the_chain_but_not_the_host_name() {
    let t = tls_server();
    let r = report(&connstring(
        &t.server,
        "127.0.0.1",
        &format!("sslmode=verify-ca {}", root(&t.ca)),
    ))
    .await
    .unwrap();
    assert!(r.encryption.is_some());
}

/// `require` encrypts without checking the certificate, unless it is given a
/// root certificate: then, as in libpq, it checks the chain like `verify-ca`.
#[tokio::test(flavor = "multi_thread")]
async fn require_checks_the_chain_only_with_a_root_certificate() {
    let t = tls_server();
    let r = report(&connstring(&t.server, "127.0.0.1", "sslmode=require"))
        .await
        .unwrap();
    assert!(r.encryption.is_some());
    let text = refused(
        &t.server,
        &connstring(
            &t.server,
            "127.0.0.1",
            &format!("sslmode=require {}", root(&t.other_ca)),
        ),
    )
    .await;
    assert!(
        text.contains(
            "certificate verification failed: the certificate is not signed by a trusted root (sslmode=require"
        ),
        "{text}"
    );
    // The default root file counts too: ~/.postgresql/root.crt.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".postgresql")).unwrap();
    std::fs::copy(&t.other_ca.cert, home.path().join(".postgresql/root.crt")).unwrap();
    let home_dir = home.path().to_str().unwrap().to_owned();
    let params = params::resolve(
        Some(&connstring(&t.server, "127.0.0.1", "sslmode=require")),
        &Default::default(),
        &|k| (k == "HOME").then(|| home_dir.clone()),
    )
    .unwrap();
    let engine = Engine::postgres(Config::builtin(), params);
    let text = engine
        .session_report(CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(text.contains("not signed by a trusted root"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn prefer_uses_tls_when_the_server_offers_it() {
    let t = tls_server();
    let r = report(&connstring(&t.server, "127.0.0.1", "")).await.unwrap();
    assert!(
        r.encryption.is_some(),
        "prefer is the default and the server offers TLS"
    );
    let r = report(&connstring(&t.server, "127.0.0.1", "sslmode=disable"))
        .await
        .unwrap();
    assert_eq!(r.encryption, None);
}

/// The shared cluster runs without TLS.
#[tokio::test(flavor = "multi_thread")]
async fn require_refuses_a_server_without_tls() {
    let server = pg::server();
    for mode in ["require", "verify-ca", "verify-full"] {
        let text = refused(server, &connstring(server, "127.0.0.1", &format!("sslmode={mode}"))).await;
        assert_eq!(
            text,
            format!(
                "cannot reach the database: could not connect to 127.0.0.1:{}: the server does not support TLS, but sslmode={mode}",
                server.port()
            )
        );
    }
    let r = report(&connstring(server, "127.0.0.1", "sslmode=prefer"))
        .await
        .unwrap();
    assert_eq!(r.encryption, None, "prefer goes on without TLS");
}

/// pg_hba.conf's `cert` method: the client certificate is the credential.
#[tokio::test(flavor = "multi_thread")]
async fn client_certificate_authenticates() {
    let t = tls_server();
    let key = t.dir.join("certuser-own.key");
    std::fs::copy(&t.client.key, &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let conn = format!(
        "host=localhost port={} user=certuser dbname=postgres sslmode=verify-full {} sslcert={} sslkey={}",
        t.server.port(),
        root(&t.ca),
        t.client.cert.display(),
        key.display()
    );
    let r = report(&conn).await.unwrap();
    assert_eq!((r.user.as_str(), r.password_from), ("certuser", None));

    // A key others can read is refused before anything is sent, as in libpq.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let text = report(&conn).await.unwrap_err().to_string();
    assert_eq!(
        text,
        format!(
            "cannot reach the database: TLS settings: private key file {} has group or world access; permissions should be u=rw (0600) or less",
            key.display()
        )
    );
}

/// A cancelled call stops its statement on a TLS server: the cancel request
/// goes over TLS too.
#[tokio::test(flavor = "multi_thread")]
async fn cancel_requests_reach_a_tls_server() {
    let t = tls_server();
    let engine = engine(&connstring(
        &t.server,
        "localhost",
        &format!("sslmode=verify-full {}", root(&t.ca)),
    ));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let input = QueryInput::new("SELECT pg_sleep(30) /* tls-cancel-marker */");
    match engine.query(&input, cancel).await {
        Err(Error::Cancelled) => {}
        other => panic!("expected cancellation, got {other:?}"),
    }
    let running = t.server.psql(
        "postgres",
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%tls-cancel-marker%' AND state = 'active' AND pid <> pg_backend_pid()",
    );
    assert_eq!(running, "0", "the cancelled statement is still running");
}

/// pg_hba.conf decides per line whether TLS is required (`hostssl`) or
/// refused (`hostnossl`); `prefer` retries without TLS like libpq, and a
/// refusal for want of TLS says which setting to change.
#[tokio::test(flavor = "multi_thread")]
async fn pg_hba_encryption_rules() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new(dir.path(), "hba-ca");
    let cert = ca.server("localhost", "DNS:localhost,IP:127.0.0.1");
    let server = pg::private_server();
    let cert_file = server.write_private_file("server.crt", &std::fs::read(&cert.cert).unwrap());
    let key_file = server.write_private_file("server.key", &std::fs::read(&cert.key).unwrap());
    server.configure(&[
        ("ssl", "on"),
        ("ssl_cert_file", cert_file.to_str().unwrap()),
        ("ssl_key_file", key_file.to_str().unwrap()),
    ]);

    server.set_hba("local all all trust\nhostnossl all all 127.0.0.1/32 scram-sha-256\n");
    let r = report(&connstring(&server, "127.0.0.1", "sslmode=prefer"))
        .await
        .unwrap();
    assert_eq!(r.encryption, None, "prefer fell back to plaintext");
    let text = refused(&server, &connstring(&server, "127.0.0.1", "sslmode=require")).await;
    assert!(text.contains("no pg_hba.conf entry"), "{text}");

    server.set_hba("local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n");
    let text = refused(&server, &connstring(&server, "127.0.0.1", "sslmode=disable")).await;
    assert!(
        text.contains(
            "and sslmode=disable tried no other way: if the server accepts it over TLS (a hostssl line), set sslmode=require or stronger"
        ),
        "{text}"
    );
    let r = report(&connstring(&server, "127.0.0.1", "sslmode=allow"))
        .await
        .unwrap();
    assert!(r.encryption.is_some(), "allow retried with TLS");
}

/// `pgmcp check` says TLS is in use, with what the handshake agreed.
#[test]
fn check_reports_tls() {
    let t = tls_server();
    let home = tempfile::tempdir().unwrap();
    let out = crate::support::pgmcp(home.path())
        .arg("check")
        .env(
            "PGMCP_PG_CONNSTRING",
            connstring(&t.server, "localhost", &format!("sslmode=verify-full {}", root(&t.ca))),
        )
        .output()
        .unwrap();
    let stdout = crate::support::stdout_of(&out, 0);
    assert!(
        stdout.contains("sslmode=verify-full (from PGMCP_PG_CONNSTRING)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("  TLS:        yes (TLSv1.3, TLS13_"), "{stdout}");
    assert!(!stdout.contains(t.server.admin_password()), "{stdout}");
}
