//! What a `query` costs end to end, the way a desktop agent sees it, next to
//! the Node reference server and to PostgreSQL alone: `cargo bench --bench stdio`.
//!
//! Drives the real release binary over stdin/stdout against a throwaway
//! PostgreSQL (the integration tests' harness, `tests/it/support/pg.rs`),
//! with the integration tests' MCP client (`tests/it/support/stdio.rs`,
//! through its timed calls), and the same client drives
//! `@modelcontextprotocol/server-postgres` (the Node reference server, pinned
//! to [`NODE_REF_VERSION`]) against the same database. It prints one line
//! per measurement and, at the end, a markdown table for BENCHMARKS.md with
//! both servers, PostgreSQL alone (pgbench), the ratio pgmcp / Node, the
//! issue's targets and whether each is met:
//!
//! 1. cold start: spawn → `initialize` answered, and idle RSS after one query;
//! 2. in [`ROUNDS`] interleaved rounds (every round starts both servers afresh,
//!    and runs each workload on each of them back to back, in an order that
//!    rotates from round to round): `SELECT 1` one call at a time, the 1,000 × 8
//!    [`WIDE_SQL`] one call at a time (pgmcp's caps raised to 1,000 rows), and
//!    `SELECT 1` throughput with 1 and 16 calls in flight on one session. In
//!    the same rounds pgbench runs, with one client, the transaction pgmcp runs
//!    per `SELECT 1` call (pipelined, as pgmcp sends it) and
//!    `BEGIN; WIDE_SQL; COMMIT`: PostgreSQL's own share. Reported: the median
//!    over rounds of each round's p50 and p95;
//! 3. the size of the text an agent reads (`content[0].text`) for the 1,000-row
//!    query with pgmcp's default config;
//! 4. `SELECT *` on a 200,000-row table with the default caps: time and peak RSS.
//!
//! Nothing here asserts on time. A call that fails does stop the run: numbers
//! from error replies would be meaningless.
//!
//! Environment:
//! - `PGMCP_BENCH_BIN=/path/to/pgmcp` measures another build of the binary (to
//!   compare a change);
//! - `PGMCP_BENCH_NODE_REF=/path/to/server-postgres/dist/index.js` (or its
//!   `node_modules/.bin/mcp-server-postgres`) names the Node server; without
//!   it the bench uses [`node_ref_dir`] and, when the server is not there,
//!   installs it there with npm first (the command is printed). When that
//!   fails, or `node` is not on PATH, the Node columns are skipped, saying why;
//!   `PGMCP_BENCH_NO_NODE=1` skips them outright;
//! - `PGMCP_BENCH_ROUNDS=n` (default 3);
//! - `PGMCP_TEST_DATABASE_URL` points the harness at an existing server
//!   instead of starting one; `PGMCP_BENCH_NO_PGBENCH=1` skips pgbench.
//!
//! Unix only, like the harness it shares (which runs PostgreSQL under
//! `runuser`); elsewhere it says so and stops.

// Off Unix only `main` below is compiled; the rest stays, unused.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

// The integration tests' support is shared with this bench, which uses part
// of it: the PostgreSQL harness (`support::pg`) and the MCP client over stdio
// (`support::stdio`). What it does not use is allowed there (dead_code).
#[cfg(unix)]
#[path = "../tests/it/support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::env;
use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[cfg(unix)]
use support::pg;
#[cfg(unix)]
use support::stdio::{McpProcess, Response};

/// Set (to a directory of answers) when this executable is to be the canned
/// server rather than the bench.
const CANNED: &str = "PGMCP_BENCH_CANNED";

/// How long to wait for any one response before declaring a server stuck.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// 1,000 rows × 8 columns. Every column has its own name: the Node server
/// returns each row as a JSON object keyed by column name, so unnamed columns
/// (all `?column?`) would collapse into one and it would send fewer values
/// than pgmcp.
const WIDE_SQL: &str = "SELECT g AS id, g*2 AS twice, g::text AS label, md5(g::text) AS hash, now() AS at, \
                        g % 7 = 0 AS weekly, g::numeric/3 AS third, repeat('x', 20) AS pad \
                        FROM generate_series(1,1000) g";

/// Rounds of the interleaved comparison, unless `PGMCP_BENCH_ROUNDS` says otherwise.
const ROUNDS: usize = 3;

/// Sequential calls measured per server per round, after warm-up.
const SEQUENTIAL_CALLS: usize = 300;

/// The least warm-up before sequential calls are measured.
const WARM_UP: Duration = Duration::from_secs(2);

/// The Node reference server, and the version measured. npm's lock file pins
/// its dependencies as they resolved on install.
const NODE_REF_PACKAGE: &str = "@modelcontextprotocol/server-postgres";
const NODE_REF_VERSION: &str = "0.6.2";

#[cfg(not(unix))]
fn main() {
    eprintln!("the stdio bench runs on Unix only (its PostgreSQL harness and /proc readings are)");
}

#[cfg(unix)]
fn main() {
    if let Some(dir) = env::var_os(CANNED) {
        canned::serve(Path::new(&dir));
        return;
    }
    let bin = env::var("PGMCP_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pgmcp").to_string());
    let rounds = match env::var("PGMCP_BENCH_ROUNDS") {
        Ok(n) => n
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("PGMCP_BENCH_ROUNDS={n}: expected a positive number")),
        Err(_) => ROUNDS,
    };
    let node_ref = find_node_ref();
    let pgbench = if env::var_os("PGMCP_BENCH_NO_PGBENCH").is_some() {
        None
    } else {
        let found = find_on_path("pgbench");
        if found.is_none() {
            println!("pgbench not found on PATH: no PostgreSQL-alone column");
        }
        found
    };

    let server = pg::server();
    let db = server.database();
    let pg_version = db.psql("SHOW server_version");
    println!("pgmcp stdio bench: {bin}");
    if let Some(entry) = &node_ref {
        println!("Node reference server: {}", entry.display());
    }
    println!("PostgreSQL {pg_version} on {}:{}\n", server.host(), server.port());

    let pgmcp = Server::Pgmcp {
        bin: bin.clone(),
        // The caps raised to 1,000 rows, so the 1,000 × 8 query comes back
        // whole, as it does from the Node server, which has no caps.
        settings: Settings {
            max_rows: Some(1000),
            max_result_length: Some(10_000_000),
            ..Settings::default()
        },
    };
    let node = node_ref.map(|entry| Server::NodeRef { entry });
    let bench = Bench { db: &db, server };
    let mut table = Table::default();

    bench.cold_start(&pgmcp, node.as_ref(), &mut table);
    let call = pgbench.as_ref().map(|_| bench.pgmcp_transaction(&pgmcp));
    let answers = tempfile::tempdir().expect("a temp dir for the canned answers");
    bench.capture_answers(&pgmcp, answers.path());
    let canned = Server::Canned {
        answers: answers.path().to_path_buf(),
    };
    let tallies = bench.rounds(
        &pgmcp,
        node.as_ref(),
        &canned,
        pgbench.as_deref().zip(call.as_ref()),
        rounds,
    );
    tallies.report(rounds, &mut table);
    bench.default_answer(&bin, node.as_ref(), &mut table);
    bench.big_table(&bin, &mut table);
    let http = bench.http_beside_stdio(&pgmcp);

    println!("\n{}", table.markdown());
    println!(
        "\nThe least a stdio server takes on this machine (same run):\n\n{}",
        tallies.floor()
    );
    println!("\npgmcp over HTTP beside pgmcp over stdio (same config and database):\n\n{http}");
}

#[cfg(unix)]
struct Bench<'a> {
    db: &'a pg::TestDb,
    server: &'a pg::PgServer,
}

/// A stdio MCP server under test: how to start it, and how to call its SQL
/// tool. The client code is the same for every server; only this differs.
#[derive(Clone)]
enum Server {
    /// `pgmcp --config <file> serve`, connecting with `PGMCP_PG_CONNSTRING`.
    Pgmcp { bin: String, settings: Settings },
    /// `node <entry> <database URL>`: `@modelcontextprotocol/server-postgres`.
    NodeRef { entry: PathBuf },
    /// This bench's own executable answering every call with pgmcp's bytes
    /// for it, captured beforehand, without a database ([`canned`]): the
    /// least any stdio server takes to hand this client that answer.
    Canned { answers: PathBuf },
}

impl Server {
    fn name(&self) -> &'static str {
        match self {
            Server::Pgmcp { .. } => "pgmcp",
            Server::NodeRef { .. } => "node-ref",
            Server::Canned { .. } => "canned",
        }
    }

    /// The tool that runs SQL. Both servers call it `query`.
    fn tool(&self) -> &'static str {
        "query"
    }

    /// The tool's arguments for `sql` (already a JSON string). Both servers
    /// take `{"sql": ...}`.
    fn arguments(&self, sql_json: &str) -> String {
        format!("{{\"sql\":{sql_json}}}")
    }

    /// The command that serves MCP on stdio against `url`, with everything it
    /// needs under `dir` (which becomes its HOME and working directory).
    fn command(&self, dir: &Path, url: &str) -> (Command, String) {
        match self {
            Server::Pgmcp { bin, settings } => {
                let config = dir.join("config.json");
                let log = dir.join("server.log");
                fs::write(&config, settings.config(&log).to_string()).expect("write the config");
                let mut cmd = clean_command(bin, dir);
                cmd.arg("--config").arg(&config).arg("serve");
                cmd.env("PGMCP_PG_CONNSTRING", url);
                (cmd, format!("{bin} --config {} serve", config.display()))
            }
            Server::NodeRef { entry } => {
                let mut cmd = clean_command("node", dir);
                cmd.arg(entry).arg(url);
                // The URL carries a password: keep it out of what gets printed.
                (cmd, format!("node {} <database URL>", entry.display()))
            }
            Server::Canned { answers } => {
                let exe = env::current_exe().expect("the bench's own executable");
                let mut cmd = clean_command(&exe, dir);
                cmd.env(CANNED, answers);
                (cmd, format!("{} with {CANNED}={}", exe.display(), answers.display()))
            }
        }
    }
}

/// `program` with HOME set to `dir`, and none of this process's connection
/// (`PG*`), logging (`RUST_LOG*`) or Node (`NODE_*`) settings: the URL the
/// bench passes says everything.
fn clean_command(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in env::vars_os() {
        let name = key.to_string_lossy();
        if name.starts_with("PG") || name.starts_with("RUST_LOG") || name.starts_with("NODE_") {
            cmd.env_remove(&key);
        }
    }
    cmd.env("HOME", dir);
    cmd
}

/// The contestants of one round, in the order they run each workload.
#[derive(Clone, Copy, PartialEq)]
enum Contestant {
    /// An index into the round's servers.
    Server(usize),
    Pgbench,
}

#[derive(Clone, Copy)]
enum Workload {
    /// `SELECT 1`, one call at a time.
    SelectOne,
    /// [`WIDE_SQL`], one call at a time.
    Wide,
    /// `SELECT 1` with this many calls in flight.
    InFlight(usize),
}

/// Each round's numbers, per server.
#[derive(Default)]
struct Tally {
    name: &'static str,
    select1_p50: Vec<Duration>,
    select1_p95: Vec<Duration>,
    wide_p50: Vec<Duration>,
    wide_p95: Vec<Duration>,
    rate1: Vec<f64>,
    rate16: Vec<f64>,
}

/// pgbench's numbers, each round's p50 per script.
#[derive(Default)]
struct PgbenchTally {
    call_p50: Vec<Duration>,
    wide_p50: Vec<Duration>,
}

struct Tallies {
    pgmcp: Tally,
    node: Option<Tally>,
    /// The canned-answer server's: the floor of the stdio part of a call.
    canned: Tally,
    pgbench: PgbenchTally,
}

#[cfg(unix)]
impl Bench<'_> {
    /// Spawn → `initialize` answered, 30 times per server; idle RSS after
    /// `initialize` + one `SELECT 1` + 1 s; and, once, spawn → first
    /// `SELECT 1` answered, which adds connecting and authenticating (SCRAM).
    fn cold_start(&self, pgmcp: &Server, node: Option<&Server>, table: &mut Table) {
        let mut starts = Vec::new();
        let mut idle = Vec::new();
        for server in std::iter::once(pgmcp).chain(node) {
            let mut samples = Vec::new();
            for i in 0..30 {
                let started = Instant::now();
                let mut mcp = self.spawn(server, &format!("cold{i}"));
                mcp.initialize();
                samples.push(started.elapsed());
            }
            let s = Stats::of(samples);
            println!(
                "{:<8} cold start, spawn → initialize answered:     p50 {}   p95 {}   max {}   ({} runs)",
                server.name(),
                ms(s.p(0.50)),
                ms(s.p(0.95)),
                ms(s.max()),
                s.len()
            );

            let started = Instant::now();
            let mut mcp = self.spawn(server, &format!("bench-idle-{}", server.name()));
            mcp.initialize();
            mcp.query("SELECT 1");
            println!(
                "{:<8} cold start, spawn → first SELECT 1 answered: {}   (includes connecting and SCRAM authentication)",
                server.name(),
                ms(started.elapsed())
            );
            let before = cpu_ticks(mcp.pid());
            thread::sleep(Duration::from_secs(1));
            let idle_cpu = cpu_ticks(mcp.pid()) - before;
            let mem = mcp.memory();
            println!(
                "{:<8} idle RSS after initialize + SELECT 1 + 1 s:  {}   (VmHWM {}; CPU while idle: {})",
                server.name(),
                mb(mem.rss_kb),
                mb(mem.hwm_kb),
                ticks_ms(idle_cpu)
            );
            starts.push(s);
            idle.push(mem.rss_kb);
        }
        let cold = |s: &Stats| format!("{} / {}", ms(s.p(0.50)), ms(s.p(0.95)));
        let p50 = starts[0].p(0.50);
        table.row(Row {
            metric: "Cold start: spawn → `initialize` answered, p50 / p95 (30 spawns)".into(),
            pgmcp: cold(&starts[0]),
            node: starts.get(1).map(cold),
            postgres: None,
            ratio: starts.get(1).map(|node| ratio(secs(p50), secs(node.p(0.50)))),
            target: "≤ 10 ms",
            met: Some(p50 <= Duration::from_millis(10)),
        });
        table.row(Row {
            metric: "Idle RSS after `initialize` + one `SELECT 1` + 1 s (VmRSS)".into(),
            pgmcp: mb(idle[0]),
            node: idle.get(1).map(|&kb| mb(kb)),
            postgres: None,
            ratio: idle.get(1).map(|&node| ratio(idle[0] as f64, node as f64)),
            // #17: no worse than before it (about 14 MB).
            target: "≤ 14 MB",
            met: Some(idle[0] as f64 * 1024.0 <= 14e6),
        });
    }

    /// The interleaved comparison: `rounds` rounds, each starting every server
    /// afresh and running each workload on each contestant back to back. The
    /// order of contestants rotates from round to round, so none always goes
    /// first (or always runs right after another's heaviest load).
    fn rounds(
        &self,
        pgmcp: &Server,
        node: Option<&Server>,
        canned: &Server,
        pgbench: Option<(&Path, &Transaction)>,
        rounds: usize,
    ) -> Tallies {
        let servers: Vec<&Server> = std::iter::once(pgmcp).chain(node).chain([canned]).collect();
        let mut tallies: Vec<Tally> = servers
            .iter()
            .map(|server| Tally {
                name: server.name(),
                ..Tally::default()
            })
            .collect();
        let mut pgbench_tally = PgbenchTally::default();
        let scripts = tempfile::tempdir().expect("a temp dir for the pgbench scripts");
        let mut contestants: Vec<Contestant> = (0..servers.len()).map(Contestant::Server).collect();
        if pgbench.is_some() {
            contestants.push(Contestant::Pgbench);
        }

        for round in 0..rounds {
            let mut order = contestants.clone();
            let shift = round % order.len();
            order.rotate_left(shift);
            println!(
                "\nround {} of {rounds}: {}",
                round + 1,
                order
                    .iter()
                    .map(|c| match c {
                        Contestant::Server(i) => servers[*i].name(),
                        Contestant::Pgbench => "pgbench",
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let apps: Vec<String> = servers
                .iter()
                .map(|server| format!("bench-{}-r{round}", server.name()))
                .collect();
            let mut live: Vec<Mcp> = servers
                .iter()
                .zip(&apps)
                .map(|(server, app)| {
                    let mut mcp = self.spawn(server, app);
                    mcp.initialize();
                    mcp.query("SELECT 1");
                    mcp
                })
                .collect();

            for workload in [
                Workload::SelectOne,
                Workload::Wide,
                Workload::InFlight(1),
                Workload::InFlight(16),
            ] {
                for &contestant in &order {
                    match (contestant, workload) {
                        (Contestant::Server(i), Workload::SelectOne) => {
                            let s = sequential(&mut live[i], "SELECT 1", 100);
                            println!(
                                "  {:<8} SELECT 1, sequential:        p50 {}   p95 {}   p99 {}   ({} calls)",
                                servers[i].name(),
                                ms(s.p(0.50)),
                                ms(s.p(0.95)),
                                ms(s.p(0.99)),
                                s.len()
                            );
                            tallies[i].select1_p50.push(s.p(0.50));
                            tallies[i].select1_p95.push(s.p(0.95));
                        }
                        (Contestant::Server(i), Workload::Wide) => {
                            let first = live[i].query(WIDE_SQL);
                            check_whole(servers[i], &first);
                            let s = sequential(&mut live[i], WIDE_SQL, 20);
                            println!(
                                "  {:<8} 1,000 × 8, sequential:       p50 {}   p95 {}   p99 {}   ({} calls, {} per response)",
                                servers[i].name(),
                                ms(s.p(0.50)),
                                ms(s.p(0.95)),
                                ms(s.p(0.99)),
                                s.len(),
                                bytes(first.line.len()),
                            );
                            tallies[i].wide_p50.push(s.p(0.50));
                            tallies[i].wide_p95.push(s.p(0.95));
                        }
                        (Contestant::Server(i), Workload::InFlight(n)) => {
                            let rate = self.throughput(&mut live[i], servers[i].name(), &apps[i], n);
                            match n {
                                1 => tallies[i].rate1.push(rate),
                                _ => tallies[i].rate16.push(rate),
                            }
                        }
                        (Contestant::Pgbench, Workload::SelectOne) => {
                            let now = self.db.psql("SELECT pg_catalog.pg_current_snapshot()");
                            let call = pgbench.map(|(_, call)| call.pipelined(&now));
                            let label = "pgmcp's per-call transaction, pipelined, prepared";
                            let script = call.unwrap_or_default();
                            let run = self.pgbench(pgbench, scripts.path(), "call", round, label, &script, "prepared");
                            if let Some(p50) = run {
                                pgbench_tally.call_p50.push(p50);
                            }
                        }
                        (Contestant::Pgbench, Workload::Wide) => {
                            let script = format!("BEGIN;\n{WIDE_SQL};\nCOMMIT;\n");
                            let label = "BEGIN; 1,000 × 8; COMMIT";
                            if let Some(p50) =
                                self.pgbench(pgbench, scripts.path(), "wide", round, label, &script, "extended")
                            {
                                pgbench_tally.wide_p50.push(p50);
                            }
                        }
                        (Contestant::Pgbench, Workload::InFlight(_)) => {}
                    }
                }
            }
        }

        let canned = tallies.pop().expect("the canned server always runs");
        let mut tallies = tallies.into_iter();
        Tallies {
            pgmcp: tallies.next().expect("pgmcp always runs"),
            node: tallies.next(),
            canned,
            pgbench: pgbench_tally,
        }
    }

    /// Half a second to warm up (and open the connections), then 3 s measured,
    /// with the CPU time the server, its PostgreSQL backends and this process
    /// spent. Returns calls per second.
    fn throughput(&self, mcp: &mut Mcp, name: &str, app: &str, in_flight: usize) -> f64 {
        mcp.pipelined("SELECT 1", in_flight, Duration::from_millis(500));
        let backends = self.backend_pids(app);
        let pid = mcp.pid();
        let cpu = || CpuSnapshot {
            server: cpu_ticks(pid),
            postgres: backends.iter().map(|&pid| cpu_ticks(pid)).sum(),
            client: cpu_ticks(std::process::id()),
        };
        let before = cpu();
        let run = mcp.pipelined("SELECT 1", in_flight, Duration::from_secs(3));
        let used = cpu().minus(&before);
        let per_call = |ticks: u64| ticks_us(ticks) / run.completed as f64;
        let s = Stats::of(run.latencies.clone());
        println!(
            "  {name:<8} throughput, {in_flight:>2} in flight: {:>7.0} req/s   latency p50 {}   p99 {}   \
             CPU per call: server {:.0} µs, PostgreSQL {:.0} µs ({} backends), client {:.0} µs",
            run.rate,
            ms(s.p(0.50)),
            ms(s.p(0.99)),
            per_call(used.server),
            per_call(used.postgres),
            backends.len(),
            per_call(used.client),
        );
        run.rate
    }

    /// pgbench running `script` with one client for 3 s against the same
    /// server, logging every transaction, so its p50 compares with a server's.
    /// pgbench reads and drops the rows: what is left is PostgreSQL's own
    /// share, plus a client far lighter than any MCP server.
    /// `mode`: pgbench's `-M`; `prepared` for pgmcp's call, whose catalog
    /// check pgmcp too plans once per connection.
    #[allow(clippy::too_many_arguments)]
    fn pgbench(
        &self,
        pgbench: Option<(&Path, &Transaction)>,
        dir: &Path,
        tag: &str,
        round: usize,
        label: &str,
        script: &str,
        mode: &str,
    ) -> Option<Duration> {
        let (pgbench, _) = pgbench?;
        let path = dir.join(format!("{tag}.sql"));
        fs::write(&path, script).expect("write a pgbench script");
        let prefix = format!("{tag}-r{round}");
        let mut cmd = Command::new(pgbench);
        cmd.arg("-n")
            .arg("-f")
            .arg(&path)
            .args(["-M", mode, "-T", "3", "-c", "1", "-j", "1", "-l"])
            .arg(format!("--log-prefix={}", dir.join(&prefix).display()))
            .args([
                "-h",
                self.server.host(),
                "-p",
                &self.server.port().to_string(),
                "-U",
                self.server.admin_user(),
            ])
            .arg(&self.db.name)
            .current_dir(dir);
        for (key, _) in env::vars_os() {
            if key.to_string_lossy().starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.env("PGPASSWORD", self.server.admin_password());
        let out = cmd.output().expect("run pgbench");
        if !out.status.success() {
            println!(
                "  pgbench ({label}) failed: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        // One log line per transaction: client, transaction number, its time
        // in µs, ...; one file per thread, `<prefix>.<pid>`.
        let mut samples = Vec::new();
        for entry in fs::read_dir(dir).expect("read the pgbench dir").flatten() {
            if !entry.file_name().to_string_lossy().starts_with(&format!("{prefix}.")) {
                continue;
            }
            let log = fs::read_to_string(entry.path()).expect("read a pgbench log");
            samples.extend(log.lines().filter_map(|line| {
                let us: u64 = line.split_whitespace().nth(2)?.parse().ok()?;
                Some(Duration::from_micros(us))
            }));
        }
        if samples.is_empty() {
            println!("  pgbench ({label}): no transactions logged");
            return None;
        }
        let s = Stats::of(samples);
        println!(
            "  {:<8} {label}: p50 {}   p95 {}   ({} transactions, 1 client)",
            "pgbench",
            ms(s.p(0.50)),
            ms(s.p(0.95)),
            s.len()
        );
        Some(s.p(0.50))
    }

    /// pgmcp's responses to `initialize`, `SELECT 1` and the 1,000 × 8
    /// query, with the contest's config, written to `dir` for the canned
    /// server: its answers are byte for byte the ones pgmcp gives.
    fn capture_answers(&self, pgmcp: &Server, dir: &Path) {
        let mut mcp = self.spawn(pgmcp, "bench-canned");
        fs::write(dir.join(canned::INITIALIZE), mcp.initialize()).expect("write a canned answer");
        fs::write(dir.join(canned::SELECT_ONE), mcp.query("SELECT 1").line).expect("write a canned answer");
        fs::write(dir.join(canned::WIDE), mcp.query(WIDE_SQL).line).expect("write a canned answer");
    }

    /// The statements pgmcp sends PostgreSQL for one `SELECT 1` call, as the
    /// server logged them, so pgbench runs what pgmcp runs even as pgmcp
    /// changes. Statement logging is on for this database only while one
    /// pgmcp process makes 20 calls. Without the server's log (an external
    /// server) or when the log cannot be read, the transaction pgmcp was
    /// last known to run stands in, and the output says so.
    fn pgmcp_transaction(&self, pgmcp: &Server) -> Transaction {
        let known = Transaction {
            // Without the catalog check, whose parameters only the log has.
            statements: [
                "BEGIN READ ONLY",
                "SELECT pg_catalog.set_config('DateStyle', 'ISO, YMD', true), \
                 pg_catalog.set_config('IntervalStyle', 'postgres', true), \
                 pg_catalog.set_config('TimeZone', 'UTC', true), \
                 pg_catalog.set_config('extra_float_digits', '3', true), \
                 pg_catalog.set_config('bytea_output', 'hex', true), \
                 pg_catalog.set_config('standard_conforming_strings', 'on', true), \
                 pg_catalog.set_config('lc_monetary', 'C', true), \
                 pg_catalog.set_config('statement_timeout', '30000', true)",
                "SELECT 1",
                "COMMIT",
                "CLOSE ALL",
                "SET SESSION AUTHORIZATION DEFAULT",
                "RESET ALL",
                "UNLISTEN *",
                "SELECT pg_catalog.pg_advisory_unlock_all()",
                "DISCARD TEMP",
                "DISCARD SEQUENCES",
            ]
            .map(str::to_string)
            .to_vec(),
            captured: false,
            snapshot: None,
        };
        let Some(log) = self.server.log_path() else {
            println!(
                "
no server log to read pgmcp's statements from; pgbench runs {}",
                known.describe()
            );
            return known;
        };
        let database = format!("\"{}\"", self.db.name.replace('"', "\"\""));
        let from = fs::metadata(log).map_or(0, |m| m.len());
        self.db
            .psql(&format!("ALTER DATABASE {database} SET log_statement = 'all'"));
        {
            let mut mcp = self.spawn(pgmcp, "bench-capture");
            mcp.initialize();
            for _ in 0..20 {
                mcp.query("SELECT 1");
            }
        }
        // Nothing commits during the calls: their catalog check was passed
        // this snapshot.
        let snapshot = self.db.psql("SELECT pg_catalog.pg_current_snapshot()");
        self.db.psql(&format!("ALTER DATABASE {database} RESET log_statement"));
        let text = fs::read(log).unwrap_or_default();
        let text = String::from_utf8_lossy(text.get(from as usize..).unwrap_or_default());
        match Transaction::from_log(&text) {
            Some(mut call) => {
                call.snapshot = Some(snapshot);
                println!(
                    "
pgmcp's statements for one SELECT 1 call, from the server's log: {}",
                    call.describe()
                );
                call
            }
            None => {
                println!(
                    "
could not find one SELECT 1 call's statements in the server's log ({}); pgbench runs {}",
                    log.display(),
                    known.describe()
                );
                known
            }
        }
    }

    /// The text an agent reads for the 1,000-row query, with pgmcp's default
    /// config (and, for scale, the Node server's, which has no caps).
    fn default_answer(&self, bin: &str, node: Option<&Server>, table: &mut Table) {
        let defaults = Server::Pgmcp {
            bin: bin.to_string(),
            settings: Settings::default(),
        };
        let mut answers = Vec::new();
        for server in std::iter::once(&defaults).chain(node) {
            let mut mcp = self.spawn(server, &format!("bench-answer-{}", server.name()));
            mcp.initialize();
            let answer = Answer::of(&mcp.query(WIDE_SQL).line);
            println!(
                "\n{:<8} answer to the 1,000 × 8 query (default config): content[0].text {} characters; \
                 rows {}, truncated {}, hint {}\n         text begins: {}",
                server.name(),
                answer.text_chars,
                shown(answer.rows),
                shown(answer.truncated),
                shown(answer.hint.as_deref()),
                preview(&answer.text),
            );
            answers.push(answer);
        }
        let pgmcp = &answers[0];
        let describe = |a: &Answer| {
            let mut out = format!("{} characters", thousands(a.text_chars));
            if let Some(rows) = a.rows {
                out.push_str(&format!(", {rows} rows"));
            }
            match a.truncated {
                Some(true) => out.push_str(", truncated"),
                Some(false) => out.push_str(", whole"),
                None => {}
            }
            if a.hint.is_some() {
                out.push_str(", with a hint");
            }
            out
        };
        table.row(Row {
            metric: "Answer to the 1,000 × 8 query with the default config: `content[0].text`".into(),
            pgmcp: describe(pgmcp),
            node: answers.get(1).map(describe),
            postgres: None,
            ratio: answers
                .get(1)
                .map(|node| ratio(pgmcp.text_chars as f64, node.text_chars as f64)),
            target: "≤ 50,000 characters, truncated, with a hint",
            met: match (pgmcp.truncated, &pgmcp.hint) {
                (Some(truncated), hint) => Some(pgmcp.text_chars <= 50_000 && truncated && hint.is_some()),
                // The server no longer says in a form this bench reads: a
                // person has to look (the text's start is printed above).
                (None, _) => None,
            },
        });
    }

    /// pgmcp over Streamable HTTP (`serve --http`, the stateless protocol,
    /// one keep-alive connection per client) beside pgmcp over stdio, with
    /// the same config: `SELECT 1` and the 1,000 × 8 query, one call at a
    /// time (p50) and 16 in flight (req/s), each pair measured back to back.
    /// Returns a markdown table.
    fn http_beside_stdio(&self, pgmcp: &Server) -> String {
        let Server::Pgmcp { bin, settings } = pgmcp else {
            return String::new();
        };
        let mut stdio = self.spawn(pgmcp, "bench-stdio");
        stdio.initialize();
        let dir = tempfile::Builder::new()
            .prefix("pgmcp-bench-http-")
            .tempdir()
            .expect("a temp dir for the server");
        let config = dir.path().join("config.json");
        fs::write(&config, settings.config(&dir.path().join("server.log")).to_string()).expect("write the config");
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().expect("its address").port()
        };
        let separator = if self.db.url.contains('?') { '&' } else { '?' };
        let mut child = clean_command(bin, dir.path())
            .arg("--config")
            .arg(&config)
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .env(
                "PGMCP_PG_CONNSTRING",
                format!("{}{separator}application_name=bench-http", self.db.url),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start pgmcp serve --http");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "pgmcp serve --http did not listen");
            thread::sleep(Duration::from_millis(20));
        }
        let mut out = String::from("| Workload | stdio | HTTP | HTTP / stdio |\n| --- | --- | --- | --- |\n");
        for (label, sql) in [("`SELECT 1`", "SELECT 1"), ("1,000 × 8", WIDE_SQL)] {
            let over_stdio = sequential(&mut stdio, sql, 20).p(0.50);
            let over_http = http_sequential(port, sql).p(0.50);
            println!(
                "  {label} one at a time: stdio p50 {}   HTTP p50 {}",
                ms(over_stdio),
                ms(over_http)
            );
            out.push_str(&format!(
                "| {label}, one call at a time, p50 | {} | {} | {} |\n",
                ms(over_stdio),
                ms(over_http),
                ratio(secs(over_http), secs(over_stdio))
            ));
            stdio.pipelined(sql, 16, Duration::from_millis(500));
            let stdio_rate = stdio.pipelined(sql, 16, Duration::from_secs(3)).rate;
            http_in_flight(port, sql, 16, Duration::from_millis(500));
            let http_rate = http_in_flight(port, sql, 16, Duration::from_secs(3));
            println!("  {label} 16 in flight: stdio {stdio_rate:.0} req/s   HTTP {http_rate:.0} req/s");
            out.push_str(&format!(
                "| {label}, 16 in flight, throughput | {} req/s | {} req/s | {} |\n",
                thousands(stdio_rate as usize),
                thousands(http_rate as usize),
                ratio(http_rate, stdio_rate)
            ));
        }
        let _ = child.kill();
        let _ = child.wait();
        out
    }

    /// `SELECT *` on a 200,000-row table with pgmcp's default caps, on a fresh
    /// process so its peak RSS is this workload's.
    fn big_table(&self, bin: &str, table: &mut Table) {
        let started = Instant::now();
        self.db.psql(
            "CREATE TABLE big AS SELECT g AS id, md5(g::text) AS a, g*2 AS b, now() AS c \
             FROM generate_series(1,200000) g; ANALYZE big",
        );
        let rows = self.db.psql("SELECT count(*) FROM big");
        println!("\ntable big: {rows} rows, made in {}", ms(started.elapsed()));

        let defaults = Server::Pgmcp {
            bin: bin.to_string(),
            settings: Settings::default(),
        };
        let mut mcp = self.spawn(&defaults, "bench-big");
        mcp.initialize();
        let first = mcp.query("SELECT * FROM big");
        let answer = Answer::of(&first.line);
        let s = Stats::of((0..20).map(|_| mcp.query("SELECT * FROM big").latency).collect());
        let mem = mcp.memory();
        println!(
            "pgmcp    SELECT * FROM big (default caps):   p50 {}   max {}   (20 calls; first call {}, with connecting)   \
             returned_rows {}, truncated {}, {} per response",
            ms(s.p(0.50)),
            ms(s.max()),
            ms(first.latency),
            shown(answer.rows),
            shown(answer.truncated),
            bytes(first.line.len()),
        );
        println!(
            "pgmcp    peak RSS after those calls:         VmHWM {}   (VmRSS {})",
            mb(mem.hwm_kb),
            mb(mem.rss_kb)
        );
        table.row(Row {
            metric: format!(
                "`SELECT * FROM big` ({rows} rows), default caps, p50 of 20 (returned_rows {}, truncated {})",
                shown(answer.rows),
                shown(answer.truncated)
            ),
            pgmcp: ms(s.p(0.50)),
            node: None,
            postgres: None,
            ratio: None,
            target: "≤ 50 ms",
            met: Some(s.p(0.50) <= Duration::from_millis(50)),
        });
        table.row(Row {
            metric: "Peak RSS (VmHWM) after those calls, fresh process".into(),
            pgmcp: mb(mem.hwm_kb),
            node: None,
            postgres: None,
            ratio: None,
            target: "≤ 20 MB",
            met: Some(mem.hwm_kb as f64 * 1024.0 <= 20e6),
        });
    }

    /// The PIDs of the PostgreSQL backends serving the server that connected
    /// as `app`.
    fn backend_pids(&self, app: &str) -> Vec<u32> {
        self.db
            .psql(&format!(
                "SELECT pid FROM pg_stat_activity WHERE application_name = '{app}'"
            ))
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Starts `server` with its own HOME and working directory, connecting
    /// as `application_name = app` so its backends can be told apart.
    fn spawn(&self, server: &Server, app: &str) -> Mcp {
        let separator = if self.db.url.contains('?') { '&' } else { '?' };
        let url = format!("{}{separator}application_name={app}", self.db.url);
        Mcp::spawn(server, &url)
    }
}

impl Tallies {
    /// The median over rounds of each measurement, with ratios and targets.
    fn report(&self, rounds: usize, table: &mut Table) {
        let pgmcp = &self.pgmcp;
        let node = self.node.as_ref();
        let pair = |p50: &[Duration], p95: &[Duration]| format!("{} / {}", ms(median(p50)), ms(median(p95)));
        let duration_ratio = |mine: &[Duration], theirs: &[Duration]| {
            (!theirs.is_empty()).then(|| secs(median(mine)) / secs(median(theirs)))
        };
        let call = (!self.pgbench.call_p50.is_empty()).then(|| median(&self.pgbench.call_p50));
        let wide = (!self.pgbench.wide_p50.is_empty()).then(|| median(&self.pgbench.wide_p50));

        println!("\nmedians over {rounds} rounds:");
        for tally in std::iter::once(pgmcp).chain(node) {
            println!(
                "  {:<8} SELECT 1 p50 / p95 {}   1,000 × 8 p50 / p95 {}   1 in flight {:.0} req/s   16 in flight {:.0} req/s",
                tally.name,
                pair(&tally.select1_p50, &tally.select1_p95),
                pair(&tally.wide_p50, &tally.wide_p95),
                median_f64(&tally.rate1),
                median_f64(&tally.rate16),
            );
        }
        if let Some(call) = call {
            println!(
                "  pgbench  pgmcp's per-call transaction, pipelined, prepared, p50 {}",
                ms(call)
            );
        }
        if let Some(wide) = wide {
            println!("  pgbench  BEGIN; 1,000 × 8; COMMIT, p50 {}", ms(wide));
        }

        let select1 = median(&pgmcp.select1_p50);
        let vs_node = node.and_then(|n| duration_ratio(&pgmcp.select1_p50, &n.select1_p50));
        table.row(Row {
            metric: format!(
                "`SELECT 1` via `query`, sequential, p50 / p95 (median of {rounds} rounds × {SEQUENTIAL_CALLS} calls)"
            ),
            pgmcp: pair(&pgmcp.select1_p50, &pgmcp.select1_p95),
            node: node.map(|n| pair(&n.select1_p50, &n.select1_p95)),
            postgres: call.map(|call| format!("{} (pgmcp's per-call transaction, pipelined, prepared)", ms(call))),
            ratio: vs_node.map(|r| format!("{r:.2}×")),
            target: "≤ 0.5× Node and ≤ PostgreSQL alone + 0.15 ms",
            met: both(
                vs_node.map(|r| r <= 0.5),
                call.map(|call| select1 <= call + Duration::from_micros(150)),
            ),
        });

        let wide_p50 = median(&pgmcp.wide_p50);
        let vs_node = node.and_then(|n| duration_ratio(&pgmcp.wide_p50, &n.wide_p50));
        table.row(Row {
            metric: format!(
                "1,000 rows × 8 columns, pgmcp's caps raised to 1,000 rows, p50 / p95 (median of {rounds} rounds × {SEQUENTIAL_CALLS} calls)"
            ),
            pgmcp: pair(&pgmcp.wide_p50, &pgmcp.wide_p95),
            node: node.map(|n| pair(&n.wide_p50, &n.wide_p95)),
            postgres: wide.map(|wide| format!("{} (`BEGIN`; the query; `COMMIT`)", ms(wide))),
            ratio: vs_node.map(|r| format!("{r:.2}×")),
            target: "≤ 0.4× Node and ≤ 2× PostgreSQL alone",
            met: both(
                vs_node.map(|r| r <= 0.4),
                wide.map(|wide| secs(wide_p50) <= 2.0 * secs(wide)),
            ),
        });

        for (in_flight, mine, theirs) in [
            (1, &pgmcp.rate1, node.map(|n| &n.rate1)),
            (16, &pgmcp.rate16, node.map(|n| &n.rate16)),
        ] {
            let vs_node = theirs.map(|theirs| median_f64(mine) / median_f64(theirs));
            table.row(Row {
                metric: format!(
                    "Throughput `SELECT 1`, {in_flight} in flight on one session (median of {rounds} rounds × 3 s)"
                ),
                pgmcp: format!("{} req/s", thousands(median_f64(mine).round() as usize)),
                node: theirs.map(|t| format!("{} req/s", thousands(median_f64(t).round() as usize))),
                postgres: None,
                ratio: vs_node.map(|r| format!("{r:.2}×")),
                target: if in_flight == 16 { "≥ 2× Node" } else { "" },
                met: if in_flight == 16 {
                    vs_node.map(|r| r >= 2.0)
                } else {
                    None
                },
            });
        }
    }
}

impl Tallies {
    /// What the ratio targets ask next to what this machine allows: the
    /// canned server's time (the client and the stdio hop, no database) plus
    /// pgbench's (PostgreSQL's part of the same call) is about the least any
    /// stdio server can take for the call, however little work it does
    /// itself; a target below that sum is out of reach here.
    fn floor(&self) -> String {
        let Some(node) = &self.node else {
            return "(no Node reference server in this run: no targets to compare)\n".to_string();
        };
        let canned = &self.canned;
        let call = (!self.pgbench.call_p50.is_empty()).then(|| median(&self.pgbench.call_p50));
        let wide = (!self.pgbench.wide_p50.is_empty()).then(|| median(&self.pgbench.wide_p50));
        let mut out = String::from(
            "| Workload | Canned answers, no database | PostgreSQL alone (pgbench) | Sum: the least a server takes | Target | Within reach? |\n\
             | --- | --- | --- | --- | --- | --- |\n",
        );
        for (workload, floor, postgres, what, target, ratio) in [
            (
                "`SELECT 1`, sequential, p50",
                median(&canned.select1_p50),
                call,
                "pgmcp's per-call transaction",
                median(&node.select1_p50).mul_f64(0.5),
                "0.5× Node",
            ),
            (
                "1,000 × 8, sequential, p50",
                median(&canned.wide_p50),
                wide,
                "`BEGIN`; the query; `COMMIT`",
                median(&node.wide_p50).mul_f64(0.4),
                "0.4× Node",
            ),
        ] {
            let sum = postgres.map(|p| floor + p);
            out.push_str(&format!(
                "| {workload} | {} | {} | {} | ≤ {ratio} = {} | {} |\n",
                ms(floor),
                postgres.map_or("–".to_string(), |p| format!("{} ({what})", ms(p))),
                sum.map_or("–".to_string(), ms),
                ms(target),
                sum.map_or("not measured", |sum| if sum <= target { "yes" } else { "**no**" }),
            ));
        }
        let rate = median_f64(&canned.rate16);
        let target = 2.0 * median_f64(&node.rate16);
        out.push_str(&format!(
            "| `SELECT 1`, 16 in flight, throughput | {} req/s | – | – | ≥ 2× Node = {} req/s | {} |\n",
            thousands(rate.round() as usize),
            thousands(target.round() as usize),
            if rate >= target {
                "yes, as far as the client and the pipe go"
            } else {
                "**no**"
            },
        ));
        out
    }
}

/// Both parts of a two-part target, `None` when either could not be measured.
fn both(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    Some(a? && b?)
}

/// Warm-up, then [`SEQUENTIAL_CALLS`] measured, one at a time. The warm-up
/// is at least `warm_up` calls and at least [`WARM_UP`]: the Node server's
/// JIT needs thousands of calls before a `SELECT 1` settles (after 100 it
/// still took twice as long as at steady state), and a count that suits
/// pgmcp's 2 ms calls would leave it cold.
#[cfg(unix)]
fn sequential(mcp: &mut Mcp, sql: &str, warm_up: usize) -> Stats {
    let started = Instant::now();
    let mut calls = 0;
    while calls < warm_up || started.elapsed() < WARM_UP {
        mcp.query(sql);
        calls += 1;
    }
    Stats::of((0..SEQUENTIAL_CALLS).map(|_| mcp.query(sql).latency).collect())
}

/// One keep-alive HTTP/1.1 connection to `pgmcp serve --http`, calling
/// `query` with the stateless protocol.
struct HttpClient {
    stream: BufReader<std::net::TcpStream>,
    port: u16,
}

impl HttpClient {
    fn connect(port: u16) -> HttpClient {
        let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to pgmcp over HTTP");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        HttpClient {
            stream: BufReader::with_capacity(1 << 16, stream),
            port,
        }
    }

    /// One call; panics unless it is answered `200` with a result.
    fn query(&mut self, sql: &str) -> Duration {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"_meta\":{{\
             \"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\
             \"io.modelcontextprotocol/clientCapabilities\":{{}}}},\"name\":\"query\",\"arguments\":{{\"sql\":{}}}}}}}",
            sql_json(sql)
        );
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
             Mcp-Name: query\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        );
        let sent = Instant::now();
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .expect("send over HTTP");
        let mut length = None;
        let mut status = String::new();
        self.stream.read_line(&mut status).expect("read the status line");
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).expect("read a header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let length = length.unwrap_or_else(|| panic!("no Content-Length in the answer ({status})"));
        let mut body = vec![0; length];
        std::io::Read::read_exact(&mut self.stream, &mut body).expect("read the answer");
        let at = Instant::now();
        assert!(
            status.starts_with("HTTP/1.1 200") && body.windows(9).any(|w| w == b"\"result\":"),
            "{status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        );
        at.duration_since(sent)
    }
}

/// One call at a time over one connection: warm-up, then the measured calls.
fn http_sequential(port: u16, sql: &str) -> Stats {
    let mut client = HttpClient::connect(port);
    let started = Instant::now();
    while started.elapsed() < WARM_UP {
        client.query(sql);
    }
    Stats::of((0..SEQUENTIAL_CALLS).map(|_| client.query(sql)).collect())
}

/// `clients` connections calling one after another for `duration`: calls
/// answered per second.
fn http_in_flight(port: u16, sql: &str, clients: usize, duration: Duration) -> f64 {
    let started = Instant::now();
    let done: usize = thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| {
                    let mut client = HttpClient::connect(port);
                    let mut calls = 0;
                    while started.elapsed() < duration {
                        client.query(sql);
                        calls += 1;
                    }
                    calls
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("an HTTP client")).sum()
    });
    done as f64 / started.elapsed().as_secs_f64()
}

/// Stops the run when the 1,000 × 8 answer is not whole: timing a cut answer
/// against a whole one would compare different work.
fn check_whole(server: &Server, reply: &Reply) {
    let answer = Answer::of(&reply.line);
    match (answer.rows, answer.truncated) {
        (Some(1000), Some(false) | None) => {}
        (None, _) => println!(
            "  {:<8} (cannot tell how many rows the 1,000 × 8 answer holds; text begins: {})",
            server.name(),
            preview(&answer.text)
        ),
        (rows, truncated) => panic!(
            "{} returned {} rows (truncated {}) for the 1,000 × 8 query; it must come back whole: {}",
            server.name(),
            shown(rows),
            shown(truncated),
            preview(&reply.line)
        ),
    }
    if let Some(columns) = answer.columns
        && columns != 8
    {
        panic!(
            "{} returned {columns} columns per row for the 1,000 × 8 query, not 8: {}",
            server.name(),
            preview(&answer.text)
        );
    }
}

/// The statements of one pgmcp `SELECT 1` call, for pgbench.
struct Transaction {
    statements: Vec<String>,
    /// Read from the server's log rather than assumed.
    captured: bool,
    /// The server's snapshot when the statements were captured. pgmcp's
    /// catalog check is passed the snapshot at which it last found the
    /// catalog unchanged, and skips its lookups while the server is still
    /// at it: replayed, it is passed the snapshot of the moment, as pgmcp
    /// would be while nothing commits.
    snapshot: Option<String>,
}

impl Transaction {
    /// One call's statements in a PostgreSQL log written with the default
    /// `log_line_prefix` (`%m [%p] `) and `log_statement = 'all'`: on the
    /// connection that ran the most `SELECT 1`, everything after one
    /// `SELECT 1` up to and including the next (so a statement pgmcp defers
    /// to the connection's next use, like `DISCARD ALL`, is in it), turned to
    /// start at the `BEGIN`.
    fn from_log(log: &str) -> Option<Transaction> {
        // A message starts with the timestamp and `[pid]`; a statement of
        // several lines continues on lines without them.
        let mut messages: Vec<(&str, String)> = Vec::new();
        for line in log.lines() {
            let head = line
                .starts_with(|c: char| c.is_ascii_digit())
                .then(|| line.split_once(" [")?.1.split_once("] "))
                .flatten()
                .filter(|(pid, _)| pid.parse::<u32>().is_ok());
            match (head, messages.last_mut()) {
                (Some((pid, rest)), _) => messages.push((pid, rest.to_string())),
                (None, Some((_, text))) => {
                    text.push('\n');
                    text.push_str(line);
                }
                (None, None) => {}
            }
        }
        let mut by_pid: HashMap<&str, Vec<String>> = HashMap::new();
        for (pid, text) in messages {
            // A prepared statement's parameters follow it: written into it,
            // the script replays the same text.
            if let Some(params) = text.strip_prefix("DETAIL:  parameters: ") {
                if let Some(last) = by_pid.get_mut(pid).and_then(|s| s.last_mut()) {
                    *last = with_parameters(last, params);
                }
                continue;
            }
            let statement = text.strip_prefix("LOG:  statement: ").or_else(|| {
                text.strip_prefix("LOG:  execute ")?
                    .split_once(": ")
                    .map(|(_, sql)| sql)
            });
            if let Some(statement) = statement {
                by_pid.entry(pid).or_default().push(statement.trim().to_string());
            }
        }
        let ones = |statements: &Vec<String>| statements.iter().filter(|s| *s == "SELECT 1").count();
        let statements = by_pid.into_values().max_by_key(ones)?;
        let mut at = statements
            .iter()
            .enumerate()
            .filter(|(_, s)| *s == "SELECT 1")
            .map(|(i, _)| i);
        let last = at.next_back()?;
        let before = at.next_back()?;
        let mut call = statements[before + 1..=last].to_vec();
        let begin = call.iter().position(|s| s.starts_with("BEGIN"))?;
        call.rotate_left(begin);
        Some(Transaction {
            statements: call,
            captured: true,
            snapshot: None,
        })
    }

    /// A pgbench script sending every statement in one round trip, as pgmcp
    /// does, the snapshot captured replaced by `now`.
    fn pipelined(&self, now: &str) -> String {
        let mut script = String::from("\\startpipeline\n");
        for statement in &self.statements {
            match &self.snapshot {
                Some(then) => script.push_str(&statement.replace(&format!("'{then}'"), &format!("'{now}'"))),
                None => script.push_str(statement),
            }
            script.push_str(";\n");
        }
        script.push_str("\\endpipeline\n");
        script
    }

    fn describe(&self) -> String {
        let shown: Vec<String> = self
            .statements
            .iter()
            .map(|s| {
                let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
                match one_line.char_indices().nth(60) {
                    Some((at, _)) => format!("{}…", &one_line[..at]),
                    None => one_line,
                }
            })
            .collect();
        format!("{}{}", shown.join("; "), if self.captured { "" } else { " (assumed)" })
    }
}

/// `statement` with `$n` replaced by the values of a log line's
/// `$1 = '...', $2 = '...'` (the highest first, so `$1` never eats `$10`).
fn with_parameters(statement: &str, params: &str) -> String {
    let mut values: Vec<(String, String)> = Vec::new();
    let mut rest = params;
    while let Some((name, after)) = rest.split_once(" = '") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if after[i + 1..].starts_with('\'') {
                    value.push('\'');
                    chars.next();
                    continue;
                }
                end = i + 1;
                break;
            }
            value.push(c);
        }
        values.push((name.trim_start_matches(", ").trim().to_string(), value));
        rest = &after[end..];
    }
    values.sort_by_key(|(name, _)| std::cmp::Reverse(name.trim_start_matches('$').parse::<u32>().unwrap_or(0)));
    values.iter().fold(statement.to_string(), |text, (name, value)| {
        text.replace(name.as_str(), &format!("'{}'", value.replace('\'', "''")))
    })
}

/// What a `query` answer says, read from whichever form the server gives:
/// pgmcp's `structuredContent` (or the same object as the text), or the Node
/// server's text, a JSON array of row objects.
struct Answer {
    /// `content[0].text`: what an agent reads.
    text: String,
    text_chars: usize,
    rows: Option<u64>,
    truncated: Option<bool>,
    hint: Option<String>,
    /// Keys in the first row, when rows are objects.
    columns: Option<usize>,
}

impl Answer {
    fn of(line: &str) -> Answer {
        let msg: Value = serde_json::from_str(line).expect("a response is JSON");
        let result = &msg["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        let object = Some(&result["structuredContent"])
            .filter(|v| v.is_object())
            .or(parsed.as_ref().filter(|v| v.is_object()));
        let mut answer = Answer {
            text_chars: text.chars().count(),
            text: String::new(),
            rows: None,
            truncated: None,
            hint: None,
            columns: None,
        };
        if let Some(object) = object {
            answer.rows = object["returned_rows"].as_u64();
            answer.truncated = object["truncated"].as_bool();
            answer.hint = object["hint"].as_str().filter(|h| !h.is_empty()).map(str::to_string);
            answer.columns = object["columns"].as_array().map(Vec::len);
        } else if let Some(Value::Array(rows)) = &parsed {
            // The Node server sends every row, with no cap and no flag.
            answer.rows = Some(rows.len() as u64);
            answer.truncated = Some(false);
            answer.columns = rows.first().and_then(Value::as_object).map(|row| row.len());
        }
        answer.text = text;
        answer
    }
}

fn shown<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "?".to_string(), |v| v.to_string())
}

/// Where the Node reference server's entry point is, installing it into
/// [`node_ref_dir`] first when it is not there; `None` (having said why) when
/// it cannot run.
fn find_node_ref() -> Option<PathBuf> {
    if env::var_os("PGMCP_BENCH_NO_NODE").is_some() {
        println!("PGMCP_BENCH_NO_NODE is set: no Node columns");
        return None;
    }
    if find_on_path("node").is_none() {
        println!("node not found on PATH: no Node columns");
        return None;
    }
    let entry = match env::var_os("PGMCP_BENCH_NODE_REF") {
        Some(path) => {
            let path = PathBuf::from(path);
            if !path.is_file() {
                println!("PGMCP_BENCH_NODE_REF={}: no such file; no Node columns", path.display());
                return None;
            }
            path
        }
        None => {
            let Some(dir) = node_ref_dir() else {
                println!("HOME is not set, so there is no default place for the Node server: no Node columns");
                return None;
            };
            let entry = dir.join("node_modules").join(NODE_REF_PACKAGE).join("dist/index.js");
            if !entry.is_file() {
                let install = format!(
                    "npm install --save-exact --prefix {} {NODE_REF_PACKAGE}@{NODE_REF_VERSION}",
                    dir.display()
                );
                println!("installing the Node reference server: {install}");
                let status = Command::new("npm")
                    .args(["install", "--save-exact", "--prefix"])
                    .arg(&dir)
                    .arg(format!("{NODE_REF_PACKAGE}@{NODE_REF_VERSION}"))
                    .stdout(Stdio::null())
                    .status();
                if !matches!(status, Ok(s) if s.success()) || !entry.is_file() {
                    println!(
                        "could not install it ({status:?}): run `{install}` and run the bench again; no Node columns"
                    );
                    return None;
                }
            }
            entry
        }
    };
    // The package's own package.json, found from the entry point (which may
    // be the `.bin` link) by its real path.
    let real = fs::canonicalize(&entry).unwrap_or_else(|_| entry.clone());
    let version = real.ancestors().map(|dir| dir.join("package.json")).find_map(|path| {
        let manifest: Value = serde_json::from_str(&fs::read_to_string(path).ok()?).ok()?;
        (manifest["name"] == NODE_REF_PACKAGE).then(|| manifest["version"].as_str().map(str::to_string))?
    });
    match version.as_deref() {
        Some(NODE_REF_VERSION) => println!("{NODE_REF_PACKAGE} {NODE_REF_VERSION}"),
        Some(other) => println!("{NODE_REF_PACKAGE} {other} (this bench was written against {NODE_REF_VERSION})"),
        None => println!("{NODE_REF_PACKAGE}: cannot read its version next to {}", real.display()),
    }
    Some(entry)
}

/// `$HOME/.cache/pgmcp-tools/node-ref`, where the bench installs the Node server.
fn node_ref_dir() -> Option<PathBuf> {
    let home = env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".cache/pgmcp-tools/node-ref"))
}

/// What a pgmcp run's config file says.
#[derive(Clone)]
struct Settings {
    max_conns: usize,
    max_rows: Option<usize>,
    max_result_length: Option<usize>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            max_conns: 4,
            max_rows: None,
            max_result_length: None,
        }
    }
}

impl Settings {
    fn config(&self, log: &Path) -> Value {
        let mut query = json!({
            "default_timeout_seconds": 30,
            "list_tables_timeout_seconds": 10,
            "describe_table_timeout_seconds": 10,
        });
        if let Some(rows) = self.max_rows {
            query["max_rows"] = json!(rows);
        }
        if let Some(length) = self.max_result_length {
            query["max_result_length"] = json!(length);
        }
        json!({
            "server": {"read_only": true},
            "pool": {"max_conns": self.max_conns},
            "logging": {"level": "info", "output": log},
            "query": query,
        })
    }
}

/// A running server under test, driven by the tests' client
/// ([`McpProcess`]) through its timed calls only: one writer (this thread),
/// and the client's reader thread, which stamps each response as it arrives
/// and reads only its envelope.
#[cfg(unix)]
struct Mcp {
    process: McpProcess,
    /// `"method":"tools/call","params":{"name":<tool>,"arguments":` for this
    /// server; a request adds the arguments and closes the braces.
    call_prefix: String,
    server: Server,
}

/// One `query` call's response and how long it took.
struct Reply {
    latency: Duration,
    line: String,
}

/// What one pipelined run did.
struct Run {
    completed: usize,
    rate: f64,
    latencies: Vec<Duration>,
}

#[cfg(unix)]
impl Mcp {
    fn spawn(server: &Server, url: &str) -> Mcp {
        let dir = tempfile::Builder::new()
            .prefix("pgmcp-bench-")
            .tempdir()
            .expect("a temp dir for the server");
        let (cmd, command_line) = server.command(dir.path(), url);
        let process = McpProcess::start(cmd, command_line, dir, "stderr");
        let tool = serde_json::to_string(server.tool()).expect("a string always serializes");
        Mcp {
            process,
            call_prefix: format!("\"method\":\"tools/call\",\"params\":{{\"name\":{tool},\"arguments\":"),
            server: server.clone(),
        }
    }

    fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The MCP handshake: `initialize`, its response, then
    /// `notifications/initialized`. Returns the server's response line.
    fn initialize(&mut self) -> String {
        let id = self.next_id();
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "pgmcp-bench", "version": "0"},
            },
        });
        self.write(&format!("{request}\n"));
        let response = self.recv();
        self.expect(id, &response);
        self.write("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        response.line
    }

    /// The `tools/call` line that runs `sql` (already a JSON string) as `id`.
    fn call_request(&self, id: u64, sql_json: &str) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},{}{}}}}}\n",
            self.call_prefix,
            self.server.arguments(sql_json)
        )
    }

    /// One `query` call, waited for.
    fn query(&mut self, sql: &str) -> Reply {
        let id = self.next_id();
        let request = self.call_request(id, &sql_json(sql));
        let sent = Instant::now();
        self.write(&request);
        let response = self.recv();
        self.expect(id, &response);
        Reply {
            latency: response.at.duration_since(sent),
            line: response.line,
        }
    }

    /// Keeps `in_flight` `query` calls outstanding for `duration`, then waits
    /// for the last ones. Responses may come back in any order.
    fn pipelined(&mut self, sql: &str, in_flight: usize, duration: Duration) -> Run {
        let sql = sql_json(sql);
        let mut sent_at: HashMap<u64, Instant> = HashMap::with_capacity(in_flight * 2);
        let mut latencies = Vec::new();
        let started = Instant::now();
        for _ in 0..in_flight {
            let id = self.next_id();
            let request = self.call_request(id, &sql);
            sent_at.insert(id, Instant::now());
            self.write(&request);
        }
        let mut last = started;
        while !sent_at.is_empty() {
            let response = self.recv();
            let Some(sent) = sent_at.remove(&response.id) else {
                panic!(
                    "{}",
                    self.debug(&format!("a response to id {} nobody asked for", response.id))
                );
            };
            if !response.ok {
                panic!("{}", self.debug(&format!("call failed: {}", preview(&response.line))));
            }
            latencies.push(response.at.duration_since(sent));
            last = response.at;
            if last.duration_since(started) < duration {
                let id = self.next_id();
                let request = self.call_request(id, &sql);
                sent_at.insert(id, Instant::now());
                self.write(&request);
            }
        }
        Run {
            completed: latencies.len(),
            rate: latencies.len() as f64 / last.duration_since(started).as_secs_f64(),
            latencies,
        }
    }

    fn memory(&self) -> Memory {
        let status = fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("read /proc/<pid>/status");
        let field = |name: &str| -> u64 {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kb| kb.parse().ok())
                .unwrap_or_else(|| panic!("no {name} in /proc/{}/status", self.pid()))
        };
        Memory {
            rss_kb: field("VmRSS:"),
            hwm_kb: field("VmHWM:"),
        }
    }

    fn next_id(&mut self) -> u64 {
        self.process.next_id()
    }

    fn write(&mut self, line: &str) {
        self.process.send_line(line);
    }

    fn recv(&mut self) -> Response {
        self.process.recv_timed(RESPONSE_TIMEOUT)
    }

    fn expect(&mut self, id: u64, response: &Response) {
        if response.id != id {
            panic!(
                "{}",
                self.debug(&format!("expected id {id}, got {}", preview(&response.line)))
            );
        }
        if !response.ok {
            panic!("{}", self.debug(&format!("call failed: {}", preview(&response.line))));
        }
    }

    /// `what`, and what is needed to debug it: the client's account (the
    /// command, the server's status and stderr) and pgmcp's log.
    fn debug(&mut self, what: &str) -> String {
        let log = fs::read_to_string(self.process.home().join("server.log")).unwrap_or_default();
        format!("{}log:\n{log}", self.process.debug(what))
    }
}

#[cfg(unix)]
impl Drop for Mcp {
    /// Close stdin (the end of the session) and give the server a moment to
    /// exit; the client then kills it if it is still there.
    fn drop(&mut self) {
        self.process.close_stdin();
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if self.process.try_wait().is_some() {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.process.kill();
    }
}

fn sql_json(sql: &str) -> String {
    serde_json::to_string(sql).expect("a string always serializes")
}

struct Memory {
    rss_kb: u64,
    hwm_kb: u64,
}

/// CPU time, in clock ticks, of the server, its PostgreSQL backends and this process.
struct CpuSnapshot {
    server: u64,
    postgres: u64,
    client: u64,
}

impl CpuSnapshot {
    fn minus(&self, earlier: &CpuSnapshot) -> CpuSnapshot {
        CpuSnapshot {
            server: self.server.saturating_sub(earlier.server),
            postgres: self.postgres.saturating_sub(earlier.postgres),
            client: self.client.saturating_sub(earlier.client),
        }
    }
}

/// User plus system CPU time of a process (all its threads), in clock ticks;
/// 0 if it is gone.
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // The command name (field 2) may hold spaces; count from after its ')'.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `after` starts at field 3.
    let get = |i: usize| fields.get(i - 3).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    get(14) + get(15)
}

fn ticks_us(ticks: u64) -> f64 {
    // Clock ticks per second: 100 on every Linux in practice; asked of
    // `getconf` rather than libc so the bench needs no crate of its own.
    static PER_SECOND: OnceLock<f64> = OnceLock::new();
    let per_second = *PER_SECOND.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    });
    ticks as f64 * 1e6 / per_second
}

fn ticks_ms(ticks: u64) -> String {
    format!("{:.0} ms", ticks_us(ticks) / 1000.0)
}

/// Sorted samples.
struct Stats(Vec<Duration>);

impl Stats {
    fn of(mut samples: Vec<Duration>) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        samples.sort();
        Stats(samples)
    }

    /// The nearest-rank percentile, `p` in 0..=1.
    fn p(&self, p: f64) -> Duration {
        self.0[((self.0.len() - 1) as f64 * p).round() as usize]
    }

    fn max(&self) -> Duration {
        self.0[self.0.len() - 1]
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// The median of per-round numbers (nearest rank, as for samples).
fn median(values: &[Duration]) -> Duration {
    Stats::of(values.to_vec()).p(0.50)
}

fn median_f64(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "no rounds");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * 0.5).round() as usize]
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn ratio(mine: f64, theirs: f64) -> String {
    format!("{:.2}×", mine / theirs)
}

/// One line of the markdown table printed at the end.
struct Row {
    metric: String,
    pgmcp: String,
    node: Option<String>,
    /// PostgreSQL alone (pgbench), where there is a comparable run.
    postgres: Option<String>,
    /// pgmcp / Node.
    ratio: Option<String>,
    target: &'static str,
    /// `None`: no target, or not measurable in this run.
    met: Option<bool>,
}

#[derive(Default)]
struct Table(Vec<Row>);

impl Table {
    fn row(&mut self, row: Row) {
        self.0.push(row);
    }

    fn markdown(&self) -> String {
        let mut out = String::from(
            "| Metric | pgmcp | Node reference server | PostgreSQL alone (pgbench) | pgmcp / Node | Target | Met? |\n\
             | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        let dash = |cell: &Option<String>| cell.clone().unwrap_or_else(|| "–".to_string());
        for row in &self.0 {
            let met = match (row.target.is_empty(), row.met) {
                (true, _) => "",
                (false, Some(true)) => "**yes**",
                (false, Some(false)) => "**no**",
                (false, None) => "not measured",
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {met} |\n",
                row.metric,
                row.pgmcp,
                dash(&row.node),
                dash(&row.postgres),
                dash(&row.ratio),
                row.target,
            ));
        }
        out
    }
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// Megabytes of 10^6 bytes, from /proc's kB (which are KiB).
fn mb(kb: u64) -> String {
    format!("{:.1} MB", kb as f64 * 1024.0 / 1e6)
}

fn bytes(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else {
        format!("{:.1} kB", n as f64 / 1e3)
    }
}

/// `n` with a comma between thousands: 12,345.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn preview(line: &str) -> String {
    match line.char_indices().nth(300) {
        Some((at, _)) => format!("{}… ({} bytes)", &line[..at], line.len()),
        None => line.to_string(),
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// The canned server: a stdio MCP server that answers from memory, with the
/// responses pgmcp gave to the same requests (only the `id` changed). No
/// database, no guard, no encoding: what is left of a call is this client,
/// the pipes and the reading of one line. It reads each request as a server
/// must (a line, its `id`), and knows the bench's two statements by sight.
#[cfg(unix)]
mod canned {
    use std::io::{BufRead, Write};
    use std::path::Path;

    pub const INITIALIZE: &str = "initialize.json";
    pub const SELECT_ONE: &str = "select1.json";
    pub const WIDE: &str = "wide.json";

    /// A response split around its `id`: `{"jsonrpc":"2.0","id":` + id + the rest.
    struct Template {
        head: Vec<u8>,
        tail: Vec<u8>,
    }

    impl Template {
        fn read(path: &Path) -> Template {
            let line = std::fs::read_to_string(path).expect("read a canned answer");
            let head = r#"{"jsonrpc":"2.0","id":"#;
            let rest = line
                .strip_prefix(head)
                .unwrap_or_else(|| panic!("a canned answer starts with {head}: {}", &line[..line.len().min(80)]));
            let id_len = rest.find(|c: char| !c.is_ascii_digit()).expect("an id, then more");
            Template {
                head: head.as_bytes().to_vec(),
                tail: format!("{}\n", rest[id_len..].trim_end()).into_bytes(),
            }
        }

        fn write(&self, out: &mut impl Write, id: &str) {
            out.write_all(&self.head).expect("write to stdout");
            out.write_all(id.as_bytes()).expect("write to stdout");
            out.write_all(&self.tail).expect("write to stdout");
        }
    }

    #[derive(serde::Deserialize)]
    struct Request<'a> {
        id: Option<serde_json::Value>,
        method: &'a str,
    }

    pub fn serve(dir: &Path) {
        let initialize = Template::read(&dir.join(INITIALIZE));
        let select_one = Template::read(&dir.join(SELECT_ONE));
        let wide = Template::read(&dir.join(WIDE));
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let mut line = String::new();
        loop {
            line.clear();
            if input.read_line(&mut line).expect("read stdin") == 0 {
                return;
            }
            let request: Request = serde_json::from_str(&line).expect("a JSON-RPC request");
            let Some(id) = request.id else { continue };
            let answer = match request.method {
                "initialize" => &initialize,
                "tools/call" if line.contains("generate_series") => &wide,
                "tools/call" => &select_one,
                other => panic!("the canned server has no answer to {other}"),
            };
            answer.write(&mut out, &id.to_string());
            out.flush().expect("flush stdout");
        }
    }
}
