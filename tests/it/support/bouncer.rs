//! PgBouncer (Debian's `pgbouncer`) in front of the harness's PostgreSQL, in
//! session or transaction pooling mode, as managed services put it in front
//! of theirs: clients log in to PgBouncer with SCRAM, and PgBouncer logs in
//! to PostgreSQL with the same user and password. It refuses to run as root,
//! so as root it runs as the user the cluster runs as. Dropping it stops it.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::pg::{self, PgServer, TestDb};

/// Where Debian installs it; `PGMCP_TEST_PGBOUNCER` names another.
const DEFAULT_BINARY: &str = "/usr/sbin/pgbouncer";

pub struct Bouncer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    user: String,
    password: String,
    run_as: Option<&'static str>,
}

impl Bouncer {
    /// PgBouncer with `pool_mode = mode` (`session` or `transaction`) in
    /// front of `server`, every database reachable through it.
    pub fn start(server: &PgServer, mode: &str) -> Bouncer {
        Bouncer::with_pool_size(server, mode, 4)
    }

    /// [`Bouncer::start`] with `size` server connections per database and user.
    pub fn with_pool_size(server: &PgServer, mode: &str, size: usize) -> Bouncer {
        Bouncer::configured(server, mode, size, "")
    }

    /// [`Bouncer::with_pool_size`] with more lines for `[pgbouncer]`.
    pub fn configured(server: &PgServer, mode: &str, size: usize, more: &str) -> Bouncer {
        let run_as = pg::is_root().then(|| pg::unprivileged_user().unwrap_or_else(|err| panic!("{err}")));
        // Under /tmp, where the unprivileged user can reach it.
        let dir = tempfile::Builder::new()
            .prefix("pgmcp-bouncer-")
            .tempdir_in("/tmp")
            .expect("a temp dir for PgBouncer");
        let port = pg::free_port().unwrap_or_else(|err| panic!("{err}"));
        let quote = |s: &str| s.replace('"', "\"\"");
        fs::write(
            dir.path().join("users.txt"),
            format!(
                "\"{}\" \"{}\"\n",
                quote(server.admin_user()),
                quote(server.admin_password())
            ),
        )
        .unwrap();
        fs::write(
            dir.path().join("pgbouncer.ini"),
            format!(
                "[databases]\n\
                 * = host={host} port={pg_port}\n\
                 [pgbouncer]\n\
                 listen_addr = 127.0.0.1\n\
                 listen_port = {port}\n\
                 unix_socket_dir =\n\
                 auth_type = scram-sha-256\n\
                 auth_file = {dir}/users.txt\n\
                 pool_mode = {mode}\n\
                 default_pool_size = {size}\n\
                 logfile = {dir}/pgbouncer.log\n\
                 pidfile = {dir}/pgbouncer.pid\n\
                 {more}\n",
                host = server.host(),
                pg_port = server.port(),
                dir = dir.path().display(),
            ),
        )
        .unwrap();
        if let Some(user) = run_as {
            let status = Command::new("chown")
                .arg("-R")
                .arg(user)
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown {user} {}", dir.path().display());
            fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut bouncer = Bouncer {
            child: None,
            port,
            dir,
            user: server.admin_user().to_owned(),
            password: server.admin_password().to_owned(),
            run_as,
        };
        bouncer.run();
        bouncer
    }

    fn run(&mut self) {
        let binary = PathBuf::from(std::env::var("PGMCP_TEST_PGBOUNCER").unwrap_or_else(|_| DEFAULT_BINARY.to_owned()));
        assert!(
            binary.exists(),
            "{} not found: install Debian's pgbouncer package (.ci/run does), or name it in PGMCP_TEST_PGBOUNCER",
            binary.display()
        );
        // Left behind by a PgBouncer killed in `stop`: it would refuse to start.
        let _ = fs::remove_file(self.dir.path().join("pgbouncer.pid"));
        let child = pg::as_user(self.run_as, &binary)
            .arg(self.dir.path().join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("PgBouncer exited ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < until,
                "PgBouncer did not listen within 10 s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops PgBouncer, closing every client and server connection it has,
    /// and returns once it is gone (its port free again).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // As root the child is runuser, which waits for PgBouncer: kill
            // PgBouncer itself, by its pid file, then wait for the child.
            let pid = fs::read_to_string(self.dir.path().join("pgbouncer.pid")).unwrap_or_default();
            match pid.trim().parse::<u32>() {
                Ok(pid) if pid > 1 => {
                    let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
                }
                _ => {
                    let _ = child.kill();
                }
            }
            let _ = child.wait();
        }
    }

    /// Stops and starts it on the same port.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// `db` through PgBouncer, as a URL with the admin user's password.
    pub fn url(&self, db: &TestDb) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}",
            pg::percent_encode(&self.user),
            pg::percent_encode(&self.password),
            self.port,
            db.name
        )
    }

    /// Runs `sql` with `psql` through PgBouncer, as another of its clients,
    /// and returns what it printed, trimmed (unaligned, tuples only).
    pub fn psql(&self, dbname: &str, sql: &str) -> String {
        self.try_psql(dbname, sql)
            .unwrap_or_else(|err| panic!("psql through PgBouncer: {err}"))
    }

    /// [`Bouncer::psql`], with what psql said on stderr when it failed.
    pub fn try_psql(&self, dbname: &str, sql: &str) -> Result<String, String> {
        let out = Command::new("psql")
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(format!(
                "host=127.0.0.1 port={} user={} dbname={dbname}",
                self.port, self.user
            ))
            .arg("-c")
            .arg(sql)
            .env("PGPASSWORD", &self.password)
            .output()
            .expect("run psql");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        self.stop();
    }
}
