//! A throwaway PostgreSQL for the integration tests.
//!
//! [`server`] starts one cluster per test process on first use, and every test
//! shares it; each test takes its own database with [`PgServer::database`], so
//! tests stay isolated without paying for a cluster each. A test that stops or
//! restarts PostgreSQL takes a [`private_server`] of its own instead.
//!
//! With `PGMCP_TEST_DATABASE_URL` set (a URL whose user may `CREATE DATABASE`),
//! [`server`] starts nothing and uses that server; its test databases are
//! dropped again when their [`TestDb`] is. `PGMCP_TEST_PGBIN` names the server
//! binaries to start (default: the `initdb` on PATH, else Debian's newest).
//!
//! # Cleanup
//!
//! The test harness has no global teardown and statics are never dropped, so
//! every cluster gets a watchdog: a `sh` in its own process group that reads a
//! pipe whose only write end this process holds. When the test process exits,
//! however it exits (even `kill -9`), the kernel closes that pipe, and the
//! watchdog stops PostgreSQL (`-m immediate`) and removes the cluster's temp dir.
//! A pipe rather than polling for our PID: it fires at once, and a reused PID
//! cannot keep it waiting.
//!
//! # Root
//!
//! PostgreSQL refuses to run as root, and CI runs as root. As root, every
//! cluster command runs through `runuser -u postgres` (or a `pgmcp-test` system
//! user made for the purpose), the cluster's temp dir is under `/tmp` (never a
//! 0700 home) and belongs to that user.

use std::{
    env, fs,
    io::Write as _,
    net::TcpListener,
    os::unix::{fs::PermissionsExt as _, process::CommandExt as _},
    path::{Path, PathBuf},
    process::{self, Child, ChildStdin, Command, Output, Stdio},
    sync::{
        OnceLock,
        atomic::{AtomicU32, Ordering},
    },
    thread,
    time::Instant,
};

/// The superuser `initdb` creates in a harness-started cluster.
const ADMIN_USER: &str = "pgmcp_admin";

/// Names an existing server to use instead of starting one.
const URL_VAR: &str = "PGMCP_TEST_DATABASE_URL";
/// The directory of the server binaries to test against (`initdb`, `pg_ctl`,
/// `postgres`): one PostgreSQL version per test run.
const PGBIN_VAR: &str = "PGMCP_TEST_PGBIN";

/// The system user made to run PostgreSQL when we are root and there is no
/// `postgres` user.
const FALLBACK_USER: &str = "pgmcp-test";

/// The server every test in this process shares, started on first use.
///
/// Panics, with what to do about it, when PostgreSQL can't be found or started.
/// A failed start is remembered: every test reports the same failure instead of
/// trying (and waiting) again.
pub fn server() -> &'static PgServer {
    static SERVER: OnceLock<Result<PgServer, String>> = OnceLock::new();
    let server = SERVER.get_or_init(|| match env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => PgServer::external(&url),
        _ => PgServer::start_cluster(),
    });
    match server {
        Ok(server) => server,
        Err(err) => panic!("{err}"),
    }
}

/// A cluster of its own, for tests that stop, start or restart PostgreSQL and
/// so must not share it. Dropping it stops the cluster and removes its files.
///
/// Always starts a local cluster, even when `PGMCP_TEST_DATABASE_URL` is set.
pub fn private_server() -> PgServer {
    PgServer::start_cluster().unwrap_or_else(|err| panic!("{err}"))
}

/// A running PostgreSQL and how to reach it as its admin user.
pub struct PgServer {
    conn: Conn,
    /// The database to connect to for administration (`CREATE DATABASE`).
    admin_db: String,
    /// `None` for a `PGMCP_TEST_DATABASE_URL` server, which we don't control.
    cluster: Option<Cluster>,
}

impl PgServer {
    pub fn host(&self) -> &str {
        &self.conn.host
    }

    pub fn port(&self) -> u16 {
        self.conn.port
    }

    pub fn admin_user(&self) -> &str {
        &self.conn.user
    }

    pub fn admin_password(&self) -> &str {
        &self.conn.password
    }

    /// `postgres://user:password@host:port/postgres`.
    pub fn admin_url(&self) -> String {
        self.conn.url(&self.admin_db)
    }

    /// Where the server's Unix socket is; `None` for `PGMCP_TEST_DATABASE_URL`.
    pub fn socket_dir(&self) -> Option<&Path> {
        self.cluster.as_ref().map(|c| c.socket_dir.as_path())
    }

    /// The psql this harness runs, for tests that run a printed psql line.
    pub fn psql_path(&self) -> &Path {
        &self.conn.psql
    }

    /// The server's log; `None` for `PGMCP_TEST_DATABASE_URL`.
    pub fn log_path(&self) -> Option<&Path> {
        self.cluster.as_ref().map(|c| c.log.as_path())
    }

    /// A new, empty database that no other test uses.
    pub fn database(&self) -> TestDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!("t_{}_{}", process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let external = self.cluster.is_none();
        if external {
            // A crashed earlier run in a container can have had our PID too.
            self.psql(&self.admin_db, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
        // template0, not template1: nothing anyone added to template1 leaks in,
        // and no session can be connected to it and block the copy.
        self.psql(&self.admin_db, &format!("CREATE DATABASE {name} TEMPLATE template0"));
        TestDb {
            url: self.conn.url(&name),
            name,
            conn: self.conn.clone(),
            drop_from: external.then(|| self.admin_db.clone()),
        }
    }

    /// Runs `sql` (any number of statements, or a psql script) in database
    /// `db` as the admin user, and returns what it printed, trimmed: unaligned,
    /// tuples only, so `SELECT 1` gives `"1"` and two columns give `"a|b"`.
    ///
    /// Panics with the command, status, stdout and stderr if anything fails.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        self.conn.psql(db, sql)
    }

    /// `pg_ctl stop -m fast`: connections are cut, the server goes down cleanly.
    pub fn stop(&self) {
        let cluster = self.cluster("stop");
        let mut cmd = cluster.pg_ctl();
        cmd.args(["stop", "-w", "-m", "fast"]);
        run(&mut cmd).unwrap_or_else(|err| panic!("{}", cluster.with_log(err)));
    }

    /// Starts the server again after [`PgServer::stop`], on the same port.
    pub fn start(&self) {
        self.cluster("start").start().unwrap_or_else(|err| panic!("{err}"));
    }

    /// `pg_ctl restart -m fast`, same port and settings.
    pub fn restart(&self) {
        let cluster = self.cluster("restart");
        let mut cmd = cluster.pg_ctl();
        cmd.args(["restart", "-w", "-m", "fast", "-l"])
            .arg(&cluster.log)
            .arg("-o")
            .arg(&cluster.options);
        run(&mut cmd).unwrap_or_else(|err| panic!("{}", cluster.with_log(err)));
    }

    /// Writes `contents` to `name` in the cluster's directory, owned by the
    /// server's OS user and readable by it alone (as PostgreSQL wants a key
    /// file to be). Returns its path.
    pub fn write_private_file(&self, name: &str, contents: &[u8]) -> PathBuf {
        let cluster = self.cluster("write files for");
        let path = cluster.dir.join(name);
        fs::write(&path, contents).unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        if let Some(user) = &cluster.run_as {
            run(Command::new("chown").arg(user).arg(&path)).unwrap_or_else(|err| panic!("{err}"));
        }
        path
    }

    /// A streaming standby of this cluster, running on a port of its own and
    /// open for reads. Made from a copy of the stopped cluster (the npm
    /// packages of other versions carry no `pg_basebackup`), with
    /// `standby.signal` and `primary_conninfo` pointing at its socket.
    /// Dropping it stops it.
    pub fn standby(&self) -> PgServer {
        let primary = self.cluster("make a standby of");
        let mut cluster =
            Cluster::fresh(primary.pg_ctl.clone(), primary.run_as.clone()).unwrap_or_else(|err| panic!("{err}"));
        fs::create_dir(&cluster.socket_dir).expect("the standby's socket dir");
        if let Some(user) = &cluster.run_as {
            run(Command::new("chown").arg("-R").arg(user).arg(&cluster.dir)).unwrap_or_else(|err| panic!("{err}"));
        }
        self.stop();
        let mut copy = cluster.command(Path::new("cp"));
        copy.arg("-a").arg(&primary.data).arg(&cluster.data);
        run(&mut copy).unwrap_or_else(|err| panic!("{err}"));
        self.start();
        let conninfo = format!(
            "host={} port={} user={ADMIN_USER}",
            primary.socket_dir.display(),
            self.port()
        );
        let mut signal = cluster.command(Path::new("sh"));
        signal
            .arg("-c")
            .arg(r#"touch "$1/standby.signal" && printf "primary_conninfo = '%s'\n" "$2" >> "$1/postgresql.auto.conf""#)
            .arg("sh")
            .arg(&cluster.data)
            .arg(&conninfo);
        run(&mut signal).unwrap_or_else(|err| panic!("{err}"));
        let port = free_port().unwrap_or_else(|err| panic!("{err}"));
        cluster.options = postgres_options(port, &cluster.socket_dir, &cluster.pg_ctl);
        cluster.start().unwrap_or_else(|err| panic!("{err}"));
        PgServer {
            conn: Conn {
                port,
                ..self.conn.clone()
            },
            admin_db: self.admin_db.clone(),
            cluster: Some(cluster),
        }
    }

    /// Sets server parameters (`ALTER SYSTEM`) and restarts, so every new
    /// connection sees them.
    pub fn configure(&self, settings: &[(&str, &str)]) {
        let script: String = settings
            .iter()
            .map(|(name, value)| format!("ALTER SYSTEM SET {name} = '{}';\n", value.replace('\'', "''")))
            .collect();
        self.psql(&self.admin_db, &script);
        self.restart();
    }

    /// Replaces `pg_hba.conf` with `lines` and restarts. The harness's own
    /// `psql` connects as the admin user over TCP from 127.0.0.1 (trying TLS
    /// first), so keep a line that lets it in.
    pub fn set_hba(&self, lines: &str) {
        let cluster = self.cluster("change pg_hba.conf of");
        let path = cluster.data.join("pg_hba.conf");
        fs::write(&path, lines).unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
        self.restart();
    }

    fn cluster(&self, what: &str) -> &Cluster {
        self.cluster
            .as_ref()
            .unwrap_or_else(|| panic!("cannot {what} a server given by {URL_VAR}: use pg::private_server()"))
    }

    fn external(url: &str) -> Result<PgServer, String> {
        let bad = |why: String| format!("{URL_VAR}={}: {why}", redact_password(url));
        let parsed = parse_url(url).map_err(bad)?;
        let psql = find_bin("psql").ok_or_else(|| bad(not_found("psql")))?;
        let conn = Conn {
            host: parsed.host,
            port: parsed.port,
            user: parsed.user,
            password: parsed.password,
            params: parsed.params,
            psql,
        };
        conn.try_psql(&parsed.dbname, "SELECT 1")
            .map_err(|err| bad(format!("cannot connect:{err}")))?;
        Ok(PgServer {
            conn,
            admin_db: parsed.dbname,
            cluster: None,
        })
    }

    fn start_cluster() -> Result<PgServer, String> {
        let started = Instant::now();
        let bindir = server_bindir()?;
        let psql = Some(bindir.join("psql"))
            .filter(|p| is_executable(p))
            .or_else(|| find_bin("psql"))
            .ok_or_else(|| not_found("psql"))?;
        let run_as = if is_root() {
            Some(unprivileged_user()?.to_string())
        } else {
            None
        };

        let mut cluster = Cluster::fresh(bindir.join("pg_ctl"), run_as)?;

        let password = random_hex();
        let pwfile = cluster.dir.join("pwfile");
        fs::create_dir(&cluster.socket_dir)
            .and_then(|()| fs::write(&pwfile, format!("{password}\n")))
            .map_err(|err| format!("cannot write in {}: {err}", cluster.dir.display()))?;
        if let Some(user) = &cluster.run_as {
            run(Command::new("chown").arg("-R").arg(user).arg(&cluster.dir))?;
        }
        let mut initdb = cluster.command(&bindir.join("initdb"));
        initdb
            .arg("-D")
            .arg(&cluster.data)
            .args(["-U", ADMIN_USER])
            .arg(format!("--pwfile={}", pwfile.display()))
            .args(["--auth-host=scram-sha-256", "--auth-local=trust"])
            .args(["-E", "UTF8", "--locale=C", "--no-sync"]);
        run(&mut initdb)?;
        let _ = fs::remove_file(&pwfile);

        // The port is free when we look, but another process can take it before
        // PostgreSQL binds it: then try another.
        let mut attempts = 0;
        let port = loop {
            attempts += 1;
            let port = free_port()?;
            cluster.options = postgres_options(port, &cluster.socket_dir, &cluster.pg_ctl);
            let log_before = fs::metadata(&cluster.log).map_or(0, |m| m.len());
            match cluster.start() {
                Ok(()) => break port,
                Err(err) if attempts < 5 && cluster.port_was_taken(log_before) => {
                    eprintln!("pg: port {port} was taken, trying another:{err}");
                }
                Err(err) => return Err(err),
            }
        };

        let server = PgServer {
            conn: Conn {
                host: "127.0.0.1".to_string(),
                port,
                user: ADMIN_USER.to_string(),
                password,
                params: Vec::new(),
                psql,
            },
            admin_db: "postgres".to_string(),
            cluster: Some(cluster),
        };
        let version = server.conn.try_psql("postgres", "SHOW server_version")?;
        eprintln!(
            "pg: PostgreSQL {version} up on 127.0.0.1:{port} in {:.2?} (log: {})",
            started.elapsed(),
            server.log_path().unwrap_or(Path::new("")).display(),
        );
        Ok(server)
    }
}

/// A fresh database on a [`PgServer`], reached as the admin user.
pub struct TestDb {
    pub name: String,
    /// `postgres://pgmcp_admin:password@127.0.0.1:port/name`.
    pub url: String,
    conn: Conn,
    /// Set for a `PGMCP_TEST_DATABASE_URL` server: the database to connect to
    /// when dropping this one. A harness cluster goes away whole instead.
    drop_from: Option<String>,
}

impl TestDb {
    /// [`PgServer::psql`] in this database.
    pub fn psql(&self, sql: &str) -> String {
        self.conn.psql(&self.name, sql)
    }

    /// `psql` on this database as the admin user, unstarted, with stdin,
    /// stdout and stderr piped: a session a test keeps open (a LISTENer).
    pub fn psql_session(&self) -> Command {
        self.conn.psql_command(&self.name)
    }

    /// The server's major version (13, ..., 18), for what differs between
    /// versions.
    pub fn major(&self) -> u32 {
        let num: u32 = self.psql("SHOW server_version_num").parse().expect("a version number");
        num / 10000
    }

    /// The same connection as [`TestDb::url`], in libpq's key=value form:
    /// `host=127.0.0.1 port=... user=... password=... dbname=...`.
    pub fn keyvalue(&self) -> String {
        self.conn.keyvalue(&self.name, true)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(admin_db) = &self.drop_from {
            // Best effort: a panic here would abort a test that is already failing.
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
            let _ = self.conn.try_psql(admin_db, &sql);
        }
    }
}

/// How to reach a server as its admin user, and the `psql` to do it with.
#[derive(Clone)]
struct Conn {
    host: String,
    port: u16,
    user: String,
    password: String,
    /// More libpq parameters from the query of `PGMCP_TEST_DATABASE_URL`
    /// (`sslmode=require`, ...).
    params: Vec<(String, String)>,
    psql: PathBuf,
}

impl Conn {
    fn url(&self, dbname: &str) -> String {
        let host = if self.host.starts_with('/') {
            percent_encode(&self.host)
        } else if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut url = format!(
            "postgres://{}:{}@{host}:{}/{}",
            percent_encode(&self.user),
            percent_encode(&self.password),
            self.port,
            percent_encode(dbname),
        );
        for (i, (key, value)) in self.params.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&format!("{}={}", percent_encode(key), percent_encode(value)));
        }
        url
    }

    fn keyvalue(&self, dbname: &str, with_password: bool) -> String {
        let port = self.port.to_string();
        let mut pairs = vec![("host", self.host.as_str()), ("port", &port), ("user", &self.user)];
        if with_password {
            pairs.push(("password", &self.password));
        }
        pairs.push(("dbname", dbname));
        pairs.extend(self.params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        pairs
            .iter()
            .map(|(key, value)| format!("{key}={}", keyvalue_quote(value)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn psql(&self, dbname: &str, sql: &str) -> String {
        self.try_psql(dbname, sql).unwrap_or_else(|err| panic!("{err}"))
    }

    /// `psql` on `dbname`, unstarted, its three streams piped.
    fn psql_command(&self, dbname: &str) -> Command {
        let mut cmd = Command::new(&self.psql);
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
            // No password on the command line: it would show in `ps` and in
            // the panic message.
            .arg(self.keyvalue(dbname, false));
        clear_pg_env(&mut cmd);
        cmd.env("PGPASSWORD", &self.password)
            .env("PGCONNECT_TIMEOUT", "10")
            .env("PGCLIENTENCODING", "UTF8")
            // psql's own messages in English, whatever the developer's locale.
            .env("LC_ALL", "C")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    fn try_psql(&self, dbname: &str, sql: &str) -> Result<String, String> {
        let mut cmd = self.psql_command(dbname);
        let fail = |what: String| format!("\n\n==========\n{what}\n\nsql:\n{sql}\n==========\n");
        let mut child = cmd
            .spawn()
            .map_err(|err| fail(format!("cannot run {}: {err}", show(&cmd))))?;
        // Fed through stdin, not -c: psql then runs each statement on its own,
        // so a script may hold CREATE DATABASE or VACUUM next to other things.
        // From a thread, so a big result can't fill stdout while we still write.
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let script = sql.to_string();
        let writer = thread::spawn(move || stdin.write_all(script.as_bytes()));
        let output = child
            .wait_with_output()
            .map_err(|err| fail(format!("cannot wait for {}: {err}", show(&cmd))))?;
        let _ = writer.join();
        if !output.status.success() {
            return Err(fail(format!("psql failed\n\n{}", describe_output(&cmd, &output))));
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    }
}

/// The files and commands of a cluster this harness started.
struct Cluster {
    /// The temp dir holding everything below; the watchdog removes it.
    dir: PathBuf,
    data: PathBuf,
    log: PathBuf,
    socket_dir: PathBuf,
    pg_ctl: PathBuf,
    /// The unprivileged user that runs every cluster command when we are root.
    run_as: Option<String>,
    /// `pg_ctl -o`: the port and settings, the same for every (re)start.
    options: String,
    /// `None` only once dropped.
    watchdog: Option<Watchdog>,
}

impl Cluster {
    /// A cluster to be, in a new temp dir that its watchdog already owns, so
    /// the dir goes when we do whatever fails next. Nothing is in it yet.
    fn fresh(pg_ctl: PathBuf, run_as: Option<String>) -> Result<Cluster, String> {
        // Under /tmp, not $TMPDIR: every parent must be traversable by the
        // unprivileged user, and a Unix socket path must stay under 104 bytes.
        let dir = tempfile::Builder::new()
            .prefix("pgmcp-pg-")
            .tempdir_in("/tmp")
            .map_err(|err| format!("cannot create a temp dir in /tmp: {err}"))?
            // From here on the watchdog owns the dir: it outlives this process.
            .keep();
        let data = dir.join("data");
        let watchdog = Watchdog::spawn(&dir, &data, &pg_ctl, run_as.as_deref())?;
        Ok(Cluster {
            socket_dir: dir.join("s"),
            log: dir.join("postgres.log"),
            data,
            dir,
            pg_ctl,
            run_as,
            options: String::new(),
            watchdog: Some(watchdog),
        })
    }

    /// `program`, run as the unprivileged user when we are root.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = as_user(self.run_as.as_deref(), program);
        clear_pg_env(&mut cmd);
        // The unprivileged user may not be able to enter our working directory.
        cmd.current_dir(&self.dir);
        cmd
    }

    /// `pg_ctl -D <data>`, to add a subcommand to.
    fn pg_ctl(&self) -> Command {
        let mut cmd = self.command(&self.pg_ctl);
        cmd.arg("-D").arg(&self.data);
        cmd
    }

    fn start(&self) -> Result<(), String> {
        let mut cmd = self.pg_ctl();
        // `-l` matters beyond logging: without it postgres would inherit
        // pg_ctl's stdout, and reading that pipe to its end would never finish.
        cmd.args(["start", "-w", "-l"])
            .arg(&self.log)
            .arg("-o")
            .arg(&self.options);
        run(&mut cmd).map(drop).map_err(|err| self.with_log(err))
    }

    /// Whether PostgreSQL's log says, since byte `since`, that it could not
    /// bind its port.
    fn port_was_taken(&self, since: u64) -> bool {
        let log = fs::read(&self.log).unwrap_or_default();
        let new = String::from_utf8_lossy(log.get(since as usize..).unwrap_or_default());
        new.contains("could not bind") || new.contains("already in use")
    }

    fn with_log(&self, err: String) -> String {
        let log = fs::read(&self.log)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_else(|read_err| format!("(cannot read it: {read_err})"));
        format!("{err}\npostgres log ({}):\n{log}\n", self.log.display())
    }
}

impl Drop for Cluster {
    /// Only a [`private_server`] is ever dropped; the shared one is cleaned up
    /// by its watchdog when the process exits.
    fn drop(&mut self) {
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.finish();
        }
    }
}

/// The process that stops a cluster and removes its files once this process
/// has gone (see the module docs).
struct Watchdog {
    child: Child,
    /// Never written to: closing it (by exiting, or in [`Watchdog::finish`])
    /// is the signal.
    pipe: ChildStdin,
}

impl Watchdog {
    fn spawn(dir: &Path, data: &Path, pg_ctl: &Path, run_as: Option<&str>) -> Result<Self, String> {
        // $1 is the dir to remove; the rest is the pg_ctl command to run.
        const SCRIPT: &str = r#"dir=$1; shift; cat >/dev/null; "$@"; rm -rf -- "$dir""#;
        let mut cmd = Command::new("sh");
        cmd.args(["-c", SCRIPT, "pgmcp-pg-watchdog"]).arg(dir);
        if let Some(user) = run_as {
            cmd.args(["runuser", "-u", user, "--"]);
        }
        cmd.arg(pg_ctl)
            .arg("-D")
            .arg(data)
            .args(["stop", "-w", "-m", "immediate"]);
        clear_pg_env(&mut cmd);
        cmd.current_dir("/")
            .stdin(Stdio::piped())
            // Holding the test's stdout open would keep whoever reads it
            // (cargo, CI) waiting until the watchdog is done.
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group: Ctrl-C on `cargo test` must not take the
            // watchdog down with the tests it cleans up after.
            .process_group(0);
        let mut child = cmd.spawn().map_err(|err| format!("cannot run {}: {err}", show(&cmd)))?;
        let pipe = child.stdin.take().expect("stdin is piped");
        Ok(Watchdog { child, pipe })
    }

    /// Cleans up now, and returns when the cluster is stopped and removed.
    fn finish(self) {
        let Watchdog { mut child, pipe } = self;
        drop(pipe);
        let _ = child.wait();
    }
}

/// The `-o` for `pg_ctl`: what `postgres` runs with. Durability is off: a
/// test cluster never outlives a crash.
///
/// pg_stat_statements is preloaded where the server has it (Debian's
/// contrib modules, the npm packages' lib/postgresql), as a database
/// server that tracks its statements is set up: `diagnose` reads it.
fn postgres_options(port: u16, socket_dir: &Path, pg_ctl: &Path) -> String {
    let bindir = pg_ctl.parent().unwrap_or(Path::new("."));
    let tracked = ["../lib", "../lib/postgresql"]
        .iter()
        .any(|lib| bindir.join(lib).join("pg_stat_statements.so").exists());
    // pg_ctl passes this through `sh`; the temp dir's name is [A-Za-z0-9-].
    format!(
        "-c listen_addresses=127.0.0.1,::1 -p {port} -c unix_socket_directories='{}' \
         -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
         -c max_connections=200 -c shared_buffers=32MB{}",
        socket_dir.display(),
        match tracked {
            true => " -c shared_preload_libraries=pg_stat_statements",
            false => "",
        }
    )
}

/// A port nothing listens on right now.
pub(super) fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|err| format!("cannot find a free port on 127.0.0.1: {err}"))
}

/// 128 random bits in hex, for passwords. `RandomState` is seeded from the OS
/// for every instance; no `rand` crate needed.
fn random_hex() -> String {
    use std::hash::{BuildHasher as _, RandomState};
    let half = || RandomState::new().hash_one(process::id());
    format!("{:016x}{:016x}", half(), half())
}

pub(super) fn is_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| {
        Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
    })
}

/// The user PostgreSQL runs as when we are root: Debian's `postgres`, or a
/// system user made for it.
pub(super) fn unprivileged_user() -> Result<&'static str, String> {
    static USER: OnceLock<Result<&'static str, String>> = OnceLock::new();
    USER.get_or_init(|| {
        let exists = |user: &str| {
            Command::new("id")
                .arg("-u")
                .arg(user)
                .output()
                .is_ok_and(|out| out.status.success())
        };
        if exists("postgres") {
            return Ok("postgres");
        }
        if !exists(FALLBACK_USER) {
            let mut useradd = Command::new("useradd");
            useradd.args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]);
            useradd.arg(FALLBACK_USER);
            // Another test process may have made it meanwhile: that is fine.
            if let Err(err) = run(&mut useradd)
                && !exists(FALLBACK_USER)
            {
                return Err(format!(
                    "PostgreSQL refuses to run as root, and there is no `postgres` user \
                     to run it as; making `{FALLBACK_USER}` failed too:{err}"
                ));
            }
        }
        Ok(FALLBACK_USER)
    })
    .clone()
}

/// `program` as `user` (through `runuser`), or as ourselves.
pub(super) fn as_user(user: Option<&str>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", user, "--"]).arg(program);
            cmd
        }
        None => Command::new(program),
    }
}

/// The directory with `initdb`, `pg_ctl` and `postgres`: the one `initdb` on
/// PATH comes from, else `pg_config --bindir`, else the newest of Debian's
/// `/usr/lib/postgresql/<N>/bin`; `PGMCP_TEST_PGBIN` names another, so one
/// test run targets one PostgreSQL version.
fn server_bindir() -> Result<PathBuf, String> {
    const SERVER: [&str; 3] = ["initdb", "pg_ctl", "postgres"];
    if let Some(dir) = env::var_os(PGBIN_VAR).filter(|d| !d.is_empty()).map(PathBuf::from) {
        return match SERVER.iter().find(|bin| !is_executable(&dir.join(bin))) {
            None => Ok(dir),
            Some(missing) => Err(format!(
                "{PGBIN_VAR}={}: no {missing} there (.ci/postgres-versions installs a version's binaries)",
                dir.display()
            )),
        };
    }
    // Resolved: /usr/local/bin/initdb may be a link into the real bindir, and
    // the other binaries (and a matching psql) are found beside the real one.
    let from_path = on_path("initdb")
        .and_then(|initdb| fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf));
    from_path
        .into_iter()
        .chain(pg_config_bindir())
        .chain(newest_debian_bindir())
        .find(|dir| SERVER.iter().all(|bin| is_executable(&dir.join(bin))))
        .ok_or_else(|| not_found("initdb, pg_ctl and postgres"))
}

/// `name` on PATH, else in `pg_config --bindir`, else in the newest of
/// Debian's `/usr/lib/postgresql/<N>/bin`.
fn find_bin(name: &str) -> Option<PathBuf> {
    on_path(name).or_else(|| {
        pg_config_bindir()
            .into_iter()
            .chain(newest_debian_bindir())
            .map(|dir| dir.join(name))
            .find(|path| is_executable(path))
    })
}

fn on_path(name: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path))
}

fn pg_config_bindir() -> Option<PathBuf> {
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !dir.trim().is_empty()).then(|| PathBuf::from(dir.trim()))
}

fn newest_debian_bindir() -> Option<PathBuf> {
    // Versions sort as numbers: 9.6 < 10 < 17.
    let version = |name: &str| -> Option<(u32, u32)> {
        let (major, minor) = name.split_once('.').unwrap_or((name, "0"));
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            Some((version(path.file_name()?.to_str()?)?, path))
        })
        .max()
        .map(|(_, path)| path.join("bin"))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn not_found(what: &str) -> String {
    format!(
        "\n\nThe integration tests need a real PostgreSQL, and {what} could not be found \
         on PATH, through `pg_config --bindir`, or in /usr/lib/postgresql/<N>/bin.\n\
         Install it:\n\
         \x20   Debian/Ubuntu: apt-get install -y postgresql\n\
         \x20   Fedora:        dnf install -y postgresql-server\n\
         \x20   macOS:         brew install postgresql@17\n\
         or point the tests at a server whose user may CREATE DATABASE:\n\
         \x20   {URL_VAR}=postgres://user:password@127.0.0.1:5432/postgres cargo test\n"
    )
}

/// Whatever `PG*` variables the developer has set (PGHOST, PGDATA, PGPORT, ...)
/// must not steer a test's commands.
pub(crate) fn clear_pg_env(cmd: &mut Command) {
    for (key, _) in env::vars_os() {
        if key.to_string_lossy().starts_with("PG") {
            cmd.env_remove(key);
        }
    }
}

/// Runs `cmd`; on failure, says everything needed to debug it.
fn run(cmd: &mut Command) -> Result<Output, String> {
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("\ncannot run {}: {err}\n", show(cmd)))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!("\n\n{}", describe_output(cmd, &output)))
    }
}

fn describe_output(cmd: &Command, output: &Output) -> String {
    format!(
        "command: {}\ncwd: {}\nstatus: {}\n\nstdout:\n{}\n\nstderr:\n{}\n",
        show(cmd),
        cmd.get_current_dir()
            .map_or_else(|| ".".into(), |dir| dir.display().to_string()),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    )
}

/// The program and its arguments. Not `{:?}` of the `Command`, which would
/// also print the environment, PGPASSWORD included.
fn show(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|arg| format!("{arg:?}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A value for libpq's key=value form, quoted when it has to be.
fn keyvalue_quote(value: &str) -> String {
    if !value.is_empty() && !value.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
        return value.to_string();
    }
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

pub(crate) fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or("a % not followed by two hex digits")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("bad escape %{hex}"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "an escape that is not UTF-8".to_string())
}

/// `url` with the password, if it has one, as `***`: fit for a panic message.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, _)) if userinfo.contains(':') => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            format!("{scheme}://{user}:***@{}", &rest[userinfo.len() + 1..])
        }
        _ => url.to_string(),
    }
}

struct ParsedUrl {
    host: String,
    port: u16,
    user: String,
    password: String,
    dbname: String,
    params: Vec<(String, String)>,
}

/// `postgres[ql]://user[:password]@host[:port][/dbname][?key=value&...]`.
fn parse_url(url: &str) -> Result<ParsedUrl, String> {
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or("not a postgres:// URL")?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, dbname) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = authority
        .rsplit_once('@')
        .ok_or("no user: expected postgres://user:password@host:port/dbname")?;
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let (host, port) = match hostport.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']').ok_or("unclosed [ in host")?;
            (host, after.strip_prefix(':'))
        }
        None => match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        },
    };
    let port = match port {
        Some(port) => port.parse().map_err(|_| format!("bad port {port:?}"))?,
        None => 5432,
    };
    let params = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            Ok((percent_decode(key)?, percent_decode(value)?))
        })
        .collect::<Result<_, String>>()?;
    Ok(ParsedUrl {
        host: match percent_decode(host)? {
            host if host.is_empty() => "localhost".to_string(),
            host => host,
        },
        port,
        user: percent_decode(user)?,
        password: percent_decode(password)?,
        dbname: match percent_decode(dbname)? {
            dbname if dbname.is_empty() => "postgres".to_string(),
            dbname => dbname,
        },
        params,
    })
}
