//! What each failure is said to be, and what to do about it.

use super::*;

fn tcp(port: u16) -> Attempt<'static> {
    static HOST: std::sync::LazyLock<Host> = std::sync::LazyLock::new(|| Host::Tcp("127.0.0.1".into()));
    Attempt {
        host: &HOST,
        port,
        user: "app",
        dbname: Some("shop"),
        os_user: false,
        sslmode: SslMode::Prefer,
        password_variable: "PGPASSWORD",
        named: None,
    }
}

fn refused<'a>(code: &'a str, message: &'a str, password: Option<&'a PasswordSource>) -> Failure<'a> {
    Failure::Refused {
        code,
        message,
        password,
    }
}

/// A `databases` entry's failures name its own settings and variable,
/// never `PG*` variables or the top level's sections, which it ignores.
#[test]
fn a_named_database_is_told_its_own_settings() {
    let attempt = Attempt {
        named: Some("shop"),
        password_variable: "PGMCP_DB_SHOP_PASSWORD",
        ..tcp(5432)
    };
    let from_url = PasswordSource::ConnectionString("the config's \"database\"");
    let cases = [
        (
            refused("28P01", "password authentication failed", Some(&from_url)),
            "databases.shop.url",
        ),
        (
            refused("28P01", "password authentication failed", None),
            "databases.shop.url",
        ),
        (
            refused("28000", "role \"app\" is not permitted to log in", None),
            "databases.shop.connection.role",
        ),
        (
            refused("53300", "too many clients", None),
            "databases.shop.pool.max_conns",
        ),
        (
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &PasswordSearch::NoFile,
            },
            "PGMCP_DB_SHOP_PASSWORD",
        ),
        (
            Failure::Socket(&io::Error::from(io::ErrorKind::ConnectionRefused)),
            "databases.shop.url, or databases.shop.connection.host",
        ),
    ];
    for (failure, names) in cases {
        let text = explain(&attempt, &failure);
        assert!(text.contains(names), "{text}");
        for foreign in [
            "PGUSER",
            "PGHOST",
            "PGPASSFILE",
            "PGDATABASE",
            "PGPASSWORD",
            "(connection.",
            " connection.",
            "the config's",
        ] {
            assert!(!text.contains(foreign), "{foreign}: {text}");
        }
    }
}

/// Each failure, and the likeliest cause and next step said about it
/// (the whole text after `could not connect to 127.0.0.1:5432: `).
#[test]
fn causes_and_next_steps() {
    let pgpass = PasswordSource::Passfile {
        path: "/h/.pgpass".into(),
        line: 3,
    };
    let from_env = PasswordSource::Environment("PGPASSWORD".to_owned());
    let from_url = PasswordSource::ConnectionString("PGMCP_PG_CONNSTRING");
    let refused_conn = io::Error::new(io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
    let wrong_db = PasswordSearch::NoLine {
        path: "/h/.pgpass".into(),
        near: vec![
            Near {
                field: Field::Host,
                line: 2,
            },
            Near {
                field: Field::Database,
                line: 5,
            },
        ],
    };
    let wrong_host = PasswordSearch::NoLine {
        path: "/h/.pgpass".into(),
        near: vec![Near {
            field: Field::Host,
            line: 2,
        }],
    };
    // A line with the user and the password swapped: one field away,
    // by its user field, which holds a password.
    let wrong_user = PasswordSearch::NoLine {
        path: "/h/.pgpass".into(),
        near: vec![Near {
            field: Field::User,
            line: 3,
        }],
    };
    let wrong_port = PasswordSearch::NoLine {
        path: "/h/.pgpass".into(),
        near: vec![
            Near {
                field: Field::Port,
                line: 1,
            },
            Near {
                field: Field::Host,
                line: 4,
            },
            Near {
                field: Field::User,
                line: 7,
            },
            Near {
                field: Field::Database,
                line: 9,
            },
        ],
    };
    let no_line = PasswordSearch::NoLine {
        path: "/h/.pgpass".into(),
        near: vec![],
    };
    let missing = PasswordSearch::Missing("/h/.pgpass".into());
    let ignored = PasswordSearch::Ignored(Ignored::Permissions("/h/.pgpass".into()));
    let mut guessed_db = tcp(5432);
    guessed_db.dbname = Some("shpo");
    let mut os_user = tcp(5432);
    os_user.os_user = true;
    os_user.user = "root";
    let mut no_dbname = tcp(5432);
    no_dbname.dbname = None;
    let mut disable = tcp(5432);
    disable.sslmode = SslMode::Disable;
    let mut require = tcp(5432);
    require.sslmode = SslMode::Require;
    let no_entry = "no pg_hba.conf entry for host \"127.0.0.1\", user \"app\", database \"shop\", no encryption";
    let cases: Vec<(Attempt, Failure, &str)> = vec![
        (
            tcp(5432),
            Failure::Socket(&refused_conn),
            "Connection refused (os error 111); nothing accepts connections there: is PostgreSQL running on that \
             host, and on port 5432? Check the host and port (the connection string, connection.host and \
             connection.port, PGHOST, PGPORT); a server on another machine must also listen on its network \
             address (listen_addresses)",
        ),
        (
            tcp(5432),
            refused(
                "28P01",
                "password authentication failed for user \"app\"",
                Some(&from_env),
            ),
            "password authentication failed for user \"app\" (SQLSTATE 28P01); the password in PGPASSWORD is not \
             the password of role \"app\", or there is no role \"app\" (with password authentication the server \
             does not say which): correct PGPASSWORD (it is used before the password file), or check the user \
             name (user in the connection string, connection.user, or PGUSER)",
        ),
        (
            tcp(5432),
            refused(
                "28P01",
                "password authentication failed for user \"app\"",
                Some(&pgpass),
            ),
            "password authentication failed for user \"app\" (SQLSTATE 28P01); the password on line 3 of the \
             password file /h/.pgpass is not the password of role \"app\", or there is no role \"app\" (with \
             password authentication the server does not say which): correct that line (the first line \
             matching 127.0.0.1:5432:shop:app is the one used), or check the user name (user in the \
             connection string, connection.user, or PGUSER)",
        ),
        (
            tcp(5432),
            refused(
                "28P01",
                "password authentication failed for user \"app\"",
                Some(&from_url),
            ),
            "password authentication failed for user \"app\" (SQLSTATE 28P01); the password in \
             PGMCP_PG_CONNSTRING is not the password of role \"app\", or there is no role \"app\" (with password \
             authentication the server does not say which): correct it in PGMCP_PG_CONNSTRING, or check the \
             user name (user in the connection string, connection.user, or PGUSER)",
        ),
        (
            tcp(5432),
            refused("28000", "role \"app\" does not exist", None),
            "role \"app\" does not exist (SQLSTATE 28000); the user name is wrong, or the login was not created \
             yet: check it (user in the connection string, connection.user, or PGUSER); to create it as a \
             least-privilege login, `pgmcp check --suggest-role --login app`, connected as a superuser, prints \
             the SQL",
        ),
        (
            os_user,
            refused("28000", "role \"root\" does not exist", None),
            "role \"root\" does not exist (SQLSTATE 28000); no user name was given, so your operating-system \
             user name \"root\" was used, as libpq does: name the login (user in the connection string, \
             connection.user, or PGUSER); to create it as a least-privilege login, `pgmcp check --suggest-role \
             --login root`, connected as a superuser, prints the SQL",
        ),
        (
            tcp(5432),
            refused("28000", "role \"app\" is not permitted to log in", None),
            "role \"app\" is not permitted to log in (SQLSTATE 28000); \"app\" is a role without LOGIN, one to \
             switch to rather than sign in as: sign in as a login that is a member of it and set \
             connection.role to \"app\", or create a login for the agent (`pgmcp check --suggest-role --login \
             NAME`, connected as a superuser, prints the SQL)",
        ),
        (
            tcp(5432),
            refused("28000", no_entry, None),
            "no pg_hba.conf entry for host \"127.0.0.1\", user \"app\", database \"shop\", no encryption (SQLSTATE \
             28000); the server's pg_hba.conf has no line that lets user \"app\" into database \"shop\" from this \
             address: a superuser adds a line that lets it in (such as `host   shop   app   127.0.0.1/32   \
             scram-sha-256`) above any line that would match first, and reloads the server (SELECT \
             pg_reload_conf(); SHOW hba_file says where the file is)",
        ),
        (
            disable,
            refused("28000", no_entry, None),
            "no pg_hba.conf entry for host \"127.0.0.1\", user \"app\", database \"shop\", no encryption (SQLSTATE \
             28000); no line of the server's pg_hba.conf lets user \"app\" into database \"shop\" from here \
             without TLS, and sslmode=disable tried no other way: if the server accepts it over TLS (a hostssl \
             line), set sslmode=require or stronger; otherwise a superuser adds a line that lets it in (such as \
             `host   shop   app   127.0.0.1/32   scram-sha-256`) above any line that would match first, and \
             reloads the server (SELECT pg_reload_conf(); SHOW hba_file says where the file is)",
        ),
        (
            require,
            refused(
                "28000",
                "no pg_hba.conf entry for host \"::1\", user \"app\", database \"shop\", SSL encryption",
                None,
            ),
            "no pg_hba.conf entry for host \"::1\", user \"app\", database \"shop\", SSL encryption (SQLSTATE \
             28000); no line of the server's pg_hba.conf lets user \"app\" into database \"shop\" from here over \
             TLS, and sslmode=require tried no other way: if the server accepts it only without TLS (a \
             hostnossl line), set sslmode=prefer; otherwise a superuser adds a line that lets it in (such as \
             `host   shop   app   ::1/128   scram-sha-256`) above any line that would match first, and reloads \
             the server (SELECT pg_reload_conf(); SHOW hba_file says where the file is)",
        ),
        (
            tcp(5432),
            refused(
                "28000",
                "pg_hba.conf rejects connection for host \"127.0.0.1\", user \"app\", database \"shop\", no encryption",
                None,
            ),
            "pg_hba.conf rejects connection for host \"127.0.0.1\", user \"app\", database \"shop\", no \
             encryption (SQLSTATE 28000); a reject line of the server's pg_hba.conf matches this user, database \
             and address first: if \"app\" should get in from here, a superuser adds a line that lets it in \
             above that one (host   shop   app   127.0.0.1/32   scram-sha-256) and reloads the server (SELECT \
             pg_reload_conf(); SHOW hba_file says where the file is)",
        ),
        (
            tcp(5432),
            refused("28000", "Peer authentication failed for user \"app\"", None),
            "Peer authentication failed for user \"app\" (SQLSTATE 28000); for this connection the server's \
             pg_hba.conf says peer: it lets in only the operating-system user named \"app\", with no password: \
             connect over TCP (host=localhost) to sign in with a password, or a superuser adds `local   shop   \
             app   scram-sha-256` above that line and reloads the server (SELECT pg_reload_conf(); SHOW hba_file \
             says where the file is)",
        ),
        (
            tcp(5432),
            refused("28000", "la role « app » n'existe pas", None),
            "la role « app » n'existe pas (SQLSTATE 28000); the server has no role \"app\" (user in the \
             connection string, connection.user, or PGUSER), or its pg_hba.conf does not let it in from here \
             (the server's log says which)",
        ),
        (
            guessed_db,
            refused("3D000", "database \"shpo\" does not exist", Some(&pgpass)),
            "database \"shpo\" does not exist (SQLSTATE 3D000); the login was accepted, but that server has no \
             such database: check the name (dbname or /name in the connection string, connection.dbname, or \
             PGDATABASE; names are case-sensitive): `psql -l` lists the databases",
        ),
        (
            no_dbname,
            refused("3D000", "database \"app\" does not exist", None),
            "database \"app\" does not exist (SQLSTATE 3D000); the login was accepted, but that server has no \
             such database: no database was named, so the user name \"app\" stood in for it, as libpq does: \
             name one (dbname or /name in the connection string, connection.dbname, or PGDATABASE)",
        ),
        (
            tcp(5432),
            refused("XX000", "something else", None),
            "something else (SQLSTATE XX000)",
        ),
        (
            guessed_db,
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &wrong_db,
            },
            "the server asks user \"app\" for a password (scram-sha-256), and the password file /h/.pgpass has \
             no line matching 127.0.0.1:5432:shpo:app, though line 5 is for another database and line 2 for \
             another host: is the database name right (dbname or /name in the connection string, \
             connection.dbname, or PGDATABASE)? If it is, add the line 127.0.0.1:5432:shpo:app:<password> to \
             /h/.pgpass (the connection string and PGPASSWORD hold none)",
        ),
        (
            tcp(5432),
            Failure::NoPassword {
                asked: "md5",
                search: &wrong_host,
            },
            "the server asks user \"app\" for a password (md5), and the password file /h/.pgpass has no line \
             matching 127.0.0.1:5432:shop:app, though line 2 is for another host: the file matches the host as \
             written, so a line for another name or address of the same server does not match \"127.0.0.1\": \
             connect to the host line 2 names instead, or add the line 127.0.0.1:5432:shop:app:<password> to \
             /h/.pgpass (the connection string and PGPASSWORD hold none)",
        ),
        (
            tcp(5432),
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &wrong_user,
            },
            "the server asks user \"app\" for a password (scram-sha-256), and the password file /h/.pgpass has \
             no line matching 127.0.0.1:5432:shop:app, though line 3 is for another user: is the user name \
             right (user in the connection string, connection.user, or PGUSER)? If it is, add the line \
             127.0.0.1:5432:shop:app:<password> to /h/.pgpass (the connection string and PGPASSWORD hold none)",
        ),
        // The likeliest first, three at most.
        (
            tcp(5432),
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &wrong_port,
            },
            "the server asks user \"app\" for a password (scram-sha-256), and the password file /h/.pgpass has \
             no line matching 127.0.0.1:5432:shop:app, though line 9 is for another database and line 7 for \
             another user and line 4 for another host: is the database name right (dbname or /name in the \
             connection string, connection.dbname, or PGDATABASE)? If it is, add the line \
             127.0.0.1:5432:shop:app:<password> to /h/.pgpass (the connection string and PGPASSWORD hold none)",
        ),
        (
            tcp(5432),
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &no_line,
            },
            "the server asks user \"app\" for a password (scram-sha-256), and the password file /h/.pgpass has \
             no line matching 127.0.0.1:5432:shop:app (the connection string and PGPASSWORD hold none): add \
             the line 127.0.0.1:5432:shop:app:<password> to it (* matches anything in the first four fields), \
             or set PGPASSWORD",
        ),
        (
            tcp(5432),
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &missing,
            },
            "the server asks user \"app\" for a password (scram-sha-256), and none was given: the connection \
             string and PGPASSWORD hold none, and there is no password file /h/.pgpass: create it with the line \
             127.0.0.1:5432:shop:app:<password>, readable by you alone (chmod 0600 /h/.pgpass), or set \
             PGPASSWORD",
        ),
        (
            tcp(5432),
            Failure::NoPassword {
                asked: "scram-sha-256",
                search: &ignored,
            },
            "the server asks user \"app\" for a password (scram-sha-256), and none was given: the connection \
             string and PGPASSWORD hold none, and the password file /h/.pgpass has group or world access and \
             was ignored; permissions should be u=rw (0600) or less: chmod 0600 /h/.pgpass",
        ),
    ];
    for (attempt, failure, expected) in cases {
        let text = explain(&attempt, &failure);
        let prefix = format!("could not connect to {}: ", attempt.target());
        assert_eq!(text.strip_prefix(&prefix), Some(expected), "\n{text}\n{expected}");
    }
}

#[test]
fn targets() {
    let six = Host::Tcp("::1".into());
    let socket = Host::Unix("/tmp".into());
    let attempt = |host| Attempt {
        host,
        port: 5433,
        user: "u",
        dbname: None,
        os_user: false,
        sslmode: SslMode::Prefer,
        password_variable: "PGPASSWORD",
        named: None,
    };
    assert_eq!(attempt(&six).target(), "[::1]:5433");
    assert_eq!(attempt(&socket).target(), "/tmp/.s.PGSQL.5433");
    let missing = io::Error::new(io::ErrorKind::NotFound, "No such file or directory (os error 2)");
    assert_eq!(
        explain(&attempt(&socket), &Failure::Socket(&missing)),
        "could not connect to /tmp/.s.PGSQL.5433: No such file or directory (os error 2); there is no server \
         socket there: is PostgreSQL running on this machine, with its socket in /tmp and port 5433? (its \
         unix_socket_directories and port settings say where it listens; or connect over TCP: host=localhost)"
    );
}
