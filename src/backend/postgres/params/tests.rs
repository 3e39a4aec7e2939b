//! What a connection string, the config's `connection` section and the
//! environment resolve to ([`resolve`]), case by case: the forms, the
//! layering, libpq's defaults, and errors that never show a password.
//! [`split_password`]'s tests are beside it, in `password.rs`.

use std::time::Duration;

use super::*;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k| pairs.iter().find(|(name, _)| *name == k).map(|(_, v)| (*v).to_owned())
}

fn check(
    connstring: Option<&str>,
    config: ConnectionConfig,
    env: &'static [(&'static str, &'static str)],
) -> ConnectParams {
    resolve(connstring, &config, &env_of(env)).unwrap_or_else(|e| panic!("{connstring:?}: {e}"))
}

#[test]
fn url_forms() {
    type Case<'a> = (&'a str, &'a str, u16, &'a str, Option<&'a str>, Option<&'a str>);
    let cases: &[Case] = &[
        (
            "postgres://alice:s3cret@db.example.com:6543/shop",
            "db.example.com",
            6543,
            "alice",
            Some("s3cret"),
            Some("shop"),
        ),
        (
            "postgresql://alice@localhost/shop",
            "localhost",
            5432,
            "alice",
            None,
            Some("shop"),
        ),
        (
            "postgres://bob:p%40ss%2Fw@[::1]:5433/app",
            "::1",
            5433,
            "bob",
            Some("p@ss/w"),
            Some("app"),
        ),
        (
            "postgres://carol@127.0.0.1/my%20db?application_name=x",
            "127.0.0.1",
            5432,
            "carol",
            None,
            Some("my db"),
        ),
        (
            "postgres:///shop?host=%2Ftmp%2Fpg&user=dave",
            "/tmp/pg",
            5432,
            "dave",
            None,
            Some("shop"),
        ),
    ];
    for (url, host, port, user, password, dbname) in cases {
        let p = check(Some(url), ConnectionConfig::default(), &[]);
        assert_eq!(p.host, Host::from_text(host), "{url}");
        assert_eq!(p.port, *port, "{url}");
        assert_eq!(p.user, *user, "{url}");
        assert_eq!(p.password.as_deref(), *password, "{url}");
        assert_eq!(p.dbname.as_deref(), *dbname, "{url}");
    }
}

#[test]
fn keyword_value_forms() {
    let p = check(
        Some(r"host=db port=7000 user=eve password='it\'s' dbname = 'my db'"),
        ConnectionConfig::default(),
        &[],
    );
    assert_eq!(p.host, Host::Tcp("db".into()));
    assert_eq!(p.port, 7000);
    assert_eq!(p.password.as_deref(), Some("it's"));
    assert_eq!(p.dbname.as_deref(), Some("my db"));
}

#[test]
fn environment_fills_what_the_source_leaves_unset() {
    let env: &'static [(&str, &str)] = &[
        ("PGHOST", "envhost"),
        ("PGPORT", "6000"),
        ("PGUSER", "envuser"),
        ("PGPASSWORD", "envpw"),
        ("PGDATABASE", "envdb"),
        ("PGAPPNAME", "envapp"),
    ];
    let p = check(
        Some("postgres://urluser@urlhost/urldb"),
        ConnectionConfig::default(),
        env,
    );
    assert_eq!(p.host, Host::Tcp("urlhost".into()));
    assert_eq!(p.port, 6000);
    assert_eq!(p.user, "urluser");
    assert_eq!(p.password.as_deref(), Some("envpw"));
    assert_eq!(p.dbname.as_deref(), Some("urldb"));
    assert_eq!(p.application_name, "envapp");

    let config = ConnectionConfig {
        host: Some("cfghost".into()),
        port: Some(5555),
        dbname: Some("cfgdb".into()),
        ..Default::default()
    };
    let p = check(None, config, env);
    assert_eq!(
        (p.host, p.port, p.user.as_str(), p.dbname.as_deref()),
        (Host::Tcp("cfghost".into()), 5555, "envuser", Some("cfgdb"))
    );
}

#[test]
fn defaults() {
    let p = check(Some("host=h user=u"), ConnectionConfig::default(), &[]);
    assert_eq!(p.port, 5432);
    assert_eq!(p.application_name, "pgmcp");
    assert_eq!(p.connect_timeout, Duration::from_secs(10));
    assert_eq!(p.sslmode, SslMode::Prefer);
    assert_eq!(p.dbname, None);
}

#[test]
fn errors_name_the_source_and_never_the_password() {
    let cases: &[(&str, &str)] = &[
        (
            "host=h user=u frobnicate=1",
            "PGMCP_PG_CONNSTRING: unknown connection option (not a libpq keyword; if a password contains spaces, \
             quotes or backslashes, quote it: password='...' or percent-encode it in a URL)",
        ),
        (
            "host=h user=u port=abc",
            "port: invalid port: expected a number from 1 to 65535",
        ),
        (
            "host=h user=u target_session_attrs=sometimes",
            "target_session_attrs: invalid target_session_attrs: use any, read-write, read-only, primary, \
             standby, prefer-standby",
        ),
        (
            "host=h user=u gssencmode=disable",
            "PGMCP_PG_CONNSTRING: connection option \"gssencmode\" is not supported",
        ),
        (
            "host=h user=u password='unterminated",
            "PGMCP_PG_CONNSTRING: unterminated quoted string in connection string",
        ),
        (
            "postgres://u:hunter2@h/db?bogus=1",
            "PGMCP_PG_CONNSTRING: unknown connection option (not a libpq keyword; if a password contains spaces, \
             quotes or backslashes, quote it: password='...' or percent-encode it in a URL)",
        ),
        (
            "host=h user=u sslmode=sometimes",
            "sslmode: invalid sslmode: use disable, allow, prefer, require, verify-ca, verify-full",
        ),
        (
            "host=a,b,c port=1,2 user=u",
            "port: 2 ports for 3 hosts: give one port, or one per host",
        ),
    ];
    for (input, expected) in cases {
        let e = resolve(Some(input), &ConnectionConfig::default(), &env_of(&[])).unwrap_err();
        assert_eq!(e.to_string(), *expected, "{input}");
        assert!(!e.to_string().contains("hunter2"));
    }
}

/// Several hosts, as libpq reads them: one port for all or one each, an
/// empty port is 5432, and the URL form gives the same lists.
#[test]
fn several_hosts_are_tried_in_order() {
    let hosts = |input: &str| -> Vec<String> {
        let p = resolve(Some(input), &ConnectionConfig::default(), &env_of(&[("USER", "me")])).unwrap();
        p.each_host().iter().map(ConnectParams::target).collect()
    };
    let cases: &[(&str, &[&str])] = &[
        ("host=a,b port=6000", &["a:6000", "b:6000"]),
        ("host=a,b,c port=1,,3", &["a:1", "b:5432", "c:3"]),
        ("host=a,::1 port=1,2", &["a:1", "[::1]:2"]),
        ("postgresql://a:1,b:2/db", &["a:1", "b:2"]),
        ("postgresql://a,[::1]:7/db", &["a:5432", "[::1]:7"]),
        (
            "postgresql://u:p%2Cw@a:1,b/db?target_session_attrs=primary",
            &["a:1", "b:5432"],
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(hosts(input), *expected, "{input}");
    }
    let p = resolve(
        Some("host=a,b target_session_attrs=prefer-standby options='-c work_mem=8MB'"),
        &ConnectionConfig::default(),
        &env_of(&[("USER", "me")]),
    )
    .unwrap();
    assert_eq!(p.target(), "a:5432, b:5432");
    assert_eq!(p.target_session_attrs, SessionAttrs::PreferStandby);
    assert_eq!(p.options.as_deref(), Some("-c work_mem=8MB"));
    let from_env = resolve(
        None,
        &ConnectionConfig::default(),
        &env_of(&[
            ("USER", "me"),
            ("PGTARGETSESSIONATTRS", "standby"),
            ("PGOPTIONS", "-c a=b"),
        ]),
    )
    .unwrap();
    assert_eq!(from_env.target_session_attrs, SessionAttrs::Standby);
    assert_eq!(from_env.options.as_deref(), Some("-c a=b"));
}

/// Malformed connection strings whose password a stray space, quote,
/// `?`, `/` or `#` split: no 3-character piece of it may reach the error.
#[test]
fn malformed_strings_never_echo_a_piece_of_the_password() {
    // Letters no message of ours contains, so any 3-character window of
    // a secret found in an error came from the input.
    let secrets = [
        "Xq7 Zk9/Wm4?Jr8#Lp2",
        "Qz8 Vb3'Hn5=Tg6",
        "Jx2 Kq4 Wz7",
        "Vq9\\ Zx3@Kj5:Qw2",
    ];
    let variants = [
        "postgresql://u:{}@host/db",
        "postgres://u:{}@host:5432/db?sslmode=require",
        "postgresql://{}@host/db",
        "postgresql://u:{}",
        "postgresql://u@host/db?password={}",
        "host=h user=u password={} dbname=d",
        "password={} host=h",
        "host=h password={}",
        "host=h password='{} user=u",
        "host=h password={}' user=u",
        "host=h password = {}",
        "host=h password={}=x",
        "host=h port={} user=u",
        "host=h sslmode={}",
        "host=h connect_timeout={}",
        "{}",
        "user=u {}",
    ];
    let mut refused = 0;
    for variant in variants {
        for secret in secrets {
            let input = variant.replace("{}", secret);
            let Err(e) = resolve(Some(&input), &ConnectionConfig::default(), &env_of(&[("USER", "u")])) else {
                continue;
            };
            refused += 1;
            let text = e.to_string();
            let chars: Vec<char> = secret.chars().collect();
            for piece in chars.windows(3) {
                let piece: String = piece.iter().collect();
                assert!(!text.contains(&piece), "{input:?} -> {text:?} shows {piece:?}");
            }
        }
    }
    assert!(
        refused > 30,
        "only {refused} variants were refused: the test tests little"
    );
}

// Written in Unix paths (and, for the password file, Unix defaults).
#[cfg(unix)]
#[test]
fn tls_and_password_file_settings() {
    // libpq's defaults live under the home directory.
    let p = check(
        Some("host=h user=u"),
        ConnectionConfig::default(),
        &[("HOME", "/home/u")],
    );
    assert_eq!(p.sslmode, SslMode::Prefer);
    assert_eq!(
        p.sslrootcert,
        RootCert::Default(Some("/home/u/.postgresql/root.crt".into()))
    );
    assert_eq!(p.sslcert, Some("/home/u/.postgresql/postgresql.crt".into()));
    assert_eq!(p.sslkey, Some("/home/u/.postgresql/postgresql.key".into()));
    assert_eq!(p.passfile, Some("/home/u/.pgpass".into()));

    // The connection string wins over the environment, which wins over defaults.
    let env: &'static [(&str, &str)] = &[
        ("HOME", "/home/u"),
        ("PGSSLMODE", "verify-ca"),
        ("PGSSLROOTCERT", "/env/root.crt"),
        ("PGSSLCERT", "/env/c.crt"),
        ("PGSSLKEY", "/env/c.key"),
        ("PGPASSFILE", "/env/pgpass"),
    ];
    let p = check(
        Some("host=h user=u sslrootcert=/cs/root.pem passfile=/cs/pass"),
        ConnectionConfig::default(),
        env,
    );
    assert_eq!(
        (p.sslmode, p.sslrootcert, p.sslcert, p.sslkey, p.passfile),
        (
            SslMode::VerifyCa,
            RootCert::File("/cs/root.pem".into()),
            Some("/env/c.crt".into()),
            Some("/env/c.key".into()),
            Some("/cs/pass".into())
        )
    );
    let config = ConnectionConfig {
        sslmode: Some(SslMode::VerifyFull),
        sslrootcert: Some("/cfg/root.pem".into()),
        passfile: Some("/cfg/pass".into()),
        ..Default::default()
    };
    let p = check(None, config, &[("PGUSER", "u")]);
    assert_eq!(
        (p.sslmode, p.sslrootcert, p.passfile),
        (
            SslMode::VerifyFull,
            RootCert::File("/cfg/root.pem".into()),
            Some("/cfg/pass".into())
        )
    );

    // sslrootcert=system means verify-full, and refuses anything weaker.
    let p = check(
        Some("host=h user=u sslrootcert=system"),
        ConnectionConfig::default(),
        &[],
    );
    assert_eq!((p.sslmode, p.sslrootcert), (SslMode::VerifyFull, RootCert::System));
    let e = resolve(
        Some("host=h user=u sslrootcert=system sslmode=require"),
        &ConnectionConfig::default(),
        &env_of(&[]),
    )
    .unwrap_err();
    assert_eq!(e.source_name, "sslrootcert");

    for (mode, expected) in SslMode::NAMES.iter().zip([
        SslMode::Disable,
        SslMode::Allow,
        SslMode::Prefer,
        SslMode::Require,
        SslMode::VerifyCa,
        SslMode::VerifyFull,
    ]) {
        let p = check(
            Some(&format!("host=h user=u sslmode={mode}")),
            ConnectionConfig::default(),
            &[],
        );
        assert_eq!(p.sslmode, expected);
        assert_eq!(p.sslmode.name(), *mode);
    }
}

#[test]
fn password_source_is_remembered() {
    let p = check(
        Some("postgres://u:pw@h/db"),
        ConnectionConfig::default(),
        &[("PGPASSWORD", "x")],
    );
    assert_eq!(
        p.password_from,
        Some(PasswordSource::ConnectionString("PGMCP_PG_CONNSTRING"))
    );
    let p = check(
        Some("postgres://u@h/db"),
        ConnectionConfig::default(),
        &[("PGPASSWORD", "x")],
    );
    assert_eq!(
        p.password_from,
        Some(PasswordSource::Environment("PGPASSWORD".to_owned()))
    );
    let p = check(Some("postgres://u@h/db"), ConnectionConfig::default(), &[]);
    assert_eq!((p.password, p.password_from), (None, None));
}

#[test]
fn debug_redacts_the_password() {
    let p = check(Some("postgres://u:hunter2@h/db"), ConnectionConfig::default(), &[]);
    assert!(!format!("{p:?}").contains("hunter2"));
}
