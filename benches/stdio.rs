//! What a `query` costs end to end, the way a desktop agent sees it:
//! `cargo bench --bench stdio`.
//!
//! Drives the real release binary over stdin/stdout against a throwaway
//! PostgreSQL (the integration tests' harness, `tests/it/support/pg.rs`), and
//! prints one line per metric and a markdown table for BENCHMARKS.md:
//!
//! 1. cold start: spawn → `initialize` answered;
//! 2. idle RSS after one query;
//! 3. `SELECT 1` latency, one call at a time (guard, transaction, JSON-RPC, stdio);
//! 4. latency of a 1,000 × 8 result, caps raised so it comes back whole;
//! 5. throughput with 1, 4 and 16 calls in flight on one session, with the CPU
//!    each call costs in pgmcp, in PostgreSQL and in this client;
//! 6. `SELECT *` on a 200,000-row table with the default caps: time and peak RSS.
//!
//! Then, for scale, `pgbench` running the same transaction pgmcp runs per call
//! against the same server, which separates PostgreSQL's cost from ours.
//!
//! Nothing here asserts on time. A call that fails does stop the run: numbers
//! from error replies would be meaningless.
//!
//! `PGMCP_BENCH_BIN=/path/to/pgmcp` measures another build of the binary (to
//! compare a change); `PGMCP_TEST_DATABASE_URL` points the harness at an
//! existing server instead of starting one; `PGMCP_BENCH_NO_PGBENCH=1` skips
//! the pgbench comparison.
//!
//! Unix only, like the harness it shares (which runs PostgreSQL under
//! `runuser`); elsewhere it says so and stops.

// Off Unix only `main` below is compiled; the rest stays, unused.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]

// The harness is shared with the integration tests; this bench uses part of it.
#[cfg(unix)]
#[allow(dead_code)]
#[path = "../tests/it/support/pg.rs"]
mod pg;

use std::collections::HashMap;
use std::env;
use std::fs;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// How long to wait for any one response before declaring the binary stuck.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

const WIDE_SQL: &str = "SELECT g, g*2, g::text, md5(g::text), now(), g % 7 = 0, g::numeric/3, repeat('x', 20) \
                        FROM generate_series(1,1000) g";

#[cfg(not(unix))]
fn main() {
    eprintln!("the stdio bench runs on Unix only (its PostgreSQL harness and /proc readings are)");
}

#[cfg(unix)]
fn main() {
    let bin = env::var("PGMCP_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pgmcp").to_string());
    let server = pg::server();
    let db = server.database();
    let pg_version = db.psql("SHOW server_version");
    println!("pgmcp stdio bench: {bin}");
    println!("PostgreSQL {pg_version} on {}:{}\n", server.host(), server.port());
    let bench = Bench { bin, db: &db };
    let mut table = Table::default();

    bench.cold_start(&mut table);
    bench.select_one(&mut table);
    bench.wide_result(&mut table);
    bench.big_table(&mut table);
    if env::var_os("PGMCP_BENCH_NO_PGBENCH").is_none() {
        bench.pgbench(server);
    }

    println!("\n{}", table.markdown());
}

#[cfg(unix)]
struct Bench<'a> {
    bin: String,
    db: &'a pg::TestDb,
}

#[cfg(unix)]
impl Bench<'_> {
    /// Spawn → `initialize` answered, 30 times; then, once, spawn → first
    /// `SELECT 1` answered, which adds connecting and authenticating (SCRAM).
    fn cold_start(&self, table: &mut Table) {
        let mut samples = Vec::new();
        for i in 0..30 {
            let started = Instant::now();
            let mut mcp = self.spawn(&Settings::default(), &format!("cold{i}"));
            mcp.initialize();
            samples.push(started.elapsed());
        }
        let s = Stats::of(samples);
        println!(
            "cold start, spawn → initialize answered:     p50 {}   p95 {}   max {}   ({} runs)",
            ms(s.p(0.50)),
            ms(s.p(0.95)),
            ms(s.max()),
            s.len()
        );
        table.row(
            "Cold start: spawn → `initialize` answered (p50 / p95)",
            format!("{} / {}", ms(s.p(0.50)), ms(s.p(0.95))),
            "≤ 10 ms",
        );

        let started = Instant::now();
        let mut mcp = self.spawn(&Settings::default(), "first-query");
        mcp.initialize();
        mcp.query("SELECT 1");
        println!(
            "cold start, spawn → first SELECT 1 answered: {}   (includes connecting and SCRAM authentication)",
            ms(started.elapsed())
        );
    }

    /// Idle RSS, sequential `SELECT 1` latency, and throughput at 1, 4 and 16
    /// in flight, on one session with the default pool; then 16 in flight with
    /// `pool.max_conns` = 16.
    fn select_one(&self, table: &mut Table) {
        let app = "bench-select1";
        let mut mcp = self.spawn(&Settings::default(), app);
        mcp.initialize();
        mcp.query("SELECT 1");
        let before = cpu_ticks(mcp.pid());
        thread::sleep(Duration::from_secs(1));
        let idle_cpu = cpu_ticks(mcp.pid()) - before;
        let mem = mcp.memory();
        println!(
            "idle RSS after initialize + SELECT 1 + 1 s:  {}   (VmHWM {}; CPU while idle: {})",
            mb(mem.rss_kb),
            mb(mem.hwm_kb),
            ticks_ms(idle_cpu)
        );
        table.row(
            "Idle RSS after `initialize` + one `SELECT 1` + 1 s",
            mb(mem.rss_kb),
            "≤ 10 MB",
        );

        for _ in 0..200 {
            mcp.query("SELECT 1");
        }
        let s = Stats::of((0..2000).map(|_| mcp.query("SELECT 1").latency).collect());
        println!(
            "SELECT 1, sequential:                        p50 {}   p95 {}   p99 {}   ({} calls)",
            ms(s.p(0.50)),
            ms(s.p(0.95)),
            ms(s.p(0.99)),
            s.len()
        );
        table.row(
            "`SELECT 1` latency, sequential (p50 / p95 / p99)",
            format!("{} / {} / {}", ms(s.p(0.50)), ms(s.p(0.95)), ms(s.p(0.99))),
            "p50 ≤ 0.3 ms",
        );

        for in_flight in [1, 4, 16] {
            let run = self.throughput(&mut mcp, app, in_flight);
            let target = if in_flight == 16 { "≥ 6,000 req/s" } else { "" };
            table.row(
                &format!("Throughput `SELECT 1`, {in_flight} in flight, `pool.max_conns` = 4"),
                format!("{:.0} req/s", run.rate),
                target,
            );
        }
        drop(mcp);

        let app = "bench-select1-16";
        let mut mcp = self.spawn(
            &Settings {
                max_conns: 16,
                ..Settings::default()
            },
            app,
        );
        mcp.initialize();
        let run = self.throughput(&mut mcp, app, 16);
        table.row(
            "Throughput `SELECT 1`, 16 in flight, `pool.max_conns` = 16",
            format!("{:.0} req/s", run.rate),
            "≥ 6,000 req/s",
        );
    }

    /// Half a second to warm up (and open the connections), then 3 s measured,
    /// with the CPU time pgmcp, its PostgreSQL backends and this process spent.
    fn throughput(&self, mcp: &mut Mcp, app: &str, in_flight: usize) -> Run {
        mcp.pipelined("SELECT 1", in_flight, Duration::from_millis(500));
        let backends = self.backend_pids(app);
        let pid = mcp.pid();
        let cpu = || CpuSnapshot {
            pgmcp: cpu_ticks(pid),
            postgres: backends.iter().map(|&pid| cpu_ticks(pid)).sum(),
            client: cpu_ticks(std::process::id()),
        };
        let before = cpu();
        let run = mcp.pipelined("SELECT 1", in_flight, Duration::from_secs(3));
        let used = cpu().minus(&before);
        let per_call = |ticks: u64| ticks_us(ticks) / run.completed as f64;
        let s = Stats::of(run.latencies.clone());
        println!(
            "throughput, {in_flight:>2} in flight (max_conns {:>2}):       {:>7.0} req/s   latency p50 {}   p99 {}   \
             CPU per call: pgmcp {:.0} µs, PostgreSQL {:.0} µs ({} backends), client {:.0} µs",
            mcp.settings.max_conns,
            run.rate,
            ms(s.p(0.50)),
            ms(s.p(0.99)),
            per_call(used.pgmcp),
            per_call(used.postgres),
            backends.len(),
            per_call(used.client),
        );
        run
    }

    /// 1,000 rows × 8 columns, caps raised so it comes back whole.
    fn wide_result(&self, table: &mut Table) {
        let mut mcp = self.spawn(
            &Settings {
                max_rows: Some(10_000),
                max_result_length: Some(10_000_000),
                ..Settings::default()
            },
            "bench-wide",
        );
        mcp.initialize();
        let first = mcp.query(WIDE_SQL);
        let (returned, truncated) = first.returned_rows_truncated();
        assert_eq!(
            (returned, truncated),
            (1000, false),
            "the 1,000 × 8 query must come back whole; raise the caps"
        );
        for _ in 0..20 {
            mcp.query(WIDE_SQL);
        }
        let s = Stats::of((0..300).map(|_| mcp.query(WIDE_SQL).latency).collect());
        println!(
            "1,000 × 8 result, sequential:                p50 {}   p95 {}   p99 {}   ({} calls, {} per response)",
            ms(s.p(0.50)),
            ms(s.p(0.95)),
            ms(s.p(0.99)),
            s.len(),
            bytes(first.line.len()),
        );
        table.row(
            "1,000 × 8 result, caps raised (p50 / p95 / p99)",
            format!("{} / {} / {}", ms(s.p(0.50)), ms(s.p(0.95)), ms(s.p(0.99))),
            "p50 ≤ 3 ms",
        );
    }

    /// `SELECT *` on a 200,000-row table with the default caps, on a fresh
    /// process so its peak RSS is this workload's.
    fn big_table(&self, table: &mut Table) {
        let started = Instant::now();
        self.db.psql(
            "CREATE TABLE big AS SELECT g AS id, md5(g::text) AS a, g*2 AS b, now() AS c \
             FROM generate_series(1,200000) g; ANALYZE big",
        );
        let rows = self.db.psql("SELECT count(*) FROM big");
        println!("\ntable big: {rows} rows, made in {}", ms(started.elapsed()));

        let mut mcp = self.spawn(&Settings::default(), "bench-big");
        mcp.initialize();
        let first = mcp.query("SELECT * FROM big");
        let (returned, truncated) = first.returned_rows_truncated();
        let s = Stats::of((0..20).map(|_| mcp.query("SELECT * FROM big").latency).collect());
        let mem = mcp.memory();
        println!(
            "SELECT * FROM big (default caps):            p50 {}   max {}   (20 calls; first call {}, with connecting)   \
             returned_rows {returned}, truncated {truncated}, {} per response",
            ms(s.p(0.50)),
            ms(s.max()),
            ms(first.latency),
            bytes(first.line.len()),
        );
        println!(
            "peak RSS after those calls:                  VmHWM {}   (VmRSS {})",
            mb(mem.hwm_kb),
            mb(mem.rss_kb)
        );
        table.row(
            &format!(
                "`SELECT * FROM big` ({rows} rows), default caps, p50 of 20 (returned_rows {returned}, truncated {truncated})"
            ),
            ms(s.p(0.50)),
            "≤ 50 ms",
        );
        table.row("Peak RSS (VmHWM) after those calls", mb(mem.hwm_kb), "≤ 20 MB");
    }

    /// pgbench running what pgmcp runs per call, against the same server: the
    /// part of a call that is PostgreSQL's own (plus a client far lighter than
    /// pgmcp). pgmcp sends the five statements of a call in one write and reads
    /// the replies once; pgbench's `\startpipeline` does the same. The plain
    /// run sends each statement as its own round trip, for scale.
    fn pgbench(&self, server: &pg::PgServer) {
        let Some(pgbench) = find_on_path("pgbench") else {
            println!("\npgbench not found on PATH: skipping the comparison");
            return;
        };
        let dir = tempfile::tempdir().expect("a temp dir for the pgbench scripts");
        let call = "BEGIN READ ONLY;\nSET LOCAL statement_timeout = 30000;\nSELECT 1;\nCOMMIT;\nDISCARD ALL;\n";
        let runs = [
            (
                "one round trip (\\startpipeline), extended protocol",
                format!("\\startpipeline\n{call}\\endpipeline\n"),
                "extended",
                vec![1, 4, 16],
            ),
            (
                "a round trip per statement, simple protocol",
                call.to_string(),
                "simple",
                vec![1],
            ),
            (
                "the 1,000 × 8 query alone, extended protocol",
                format!("{WIDE_SQL};\n"),
                "extended",
                vec![1],
            ),
        ];
        println!(
            "\npgbench -n -T 5 against the same server; a transaction is BEGIN READ ONLY; SET LOCAL statement_timeout; SELECT 1; COMMIT; DISCARD ALL"
        );
        for (i, (label, script, mode, clients)) in runs.iter().enumerate() {
            let path = dir.path().join(format!("script-{i}.sql"));
            fs::write(&path, script).expect("write a pgbench script");
            for &clients in clients {
                let mut cmd = Command::new(&pgbench);
                cmd.arg("-n")
                    .arg("-f")
                    .arg(&path)
                    .args([
                        "-M",
                        mode,
                        "-T",
                        "5",
                        "-c",
                        &clients.to_string(),
                        "-j",
                        &clients.min(2).to_string(),
                    ])
                    .args([
                        "-h",
                        server.host(),
                        "-p",
                        &server.port().to_string(),
                        "-U",
                        server.admin_user(),
                    ])
                    .arg(&self.db.name);
                for (key, _) in env::vars_os() {
                    if key.to_string_lossy().starts_with("PG") {
                        cmd.env_remove(key);
                    }
                }
                cmd.env("PGPASSWORD", server.admin_password());
                let out = cmd.output().expect("run pgbench");
                let text = String::from_utf8_lossy(&out.stdout);
                if !out.status.success() {
                    println!(
                        "pgbench ({label}) failed: {}\n{}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr)
                    );
                    continue;
                }
                let field = |prefix: &str| {
                    text.lines()
                        .find_map(|line| line.strip_prefix(prefix))
                        .and_then(|rest| rest.split_whitespace().next())
                        .and_then(|n| n.parse::<f64>().ok())
                        .unwrap_or(f64::NAN)
                };
                println!(
                    "pgbench, {clients:>2} clients, {label:<52} {:>7.0} tps   latency average {:.3} ms",
                    field("tps = "),
                    field("latency average = "),
                );
            }
        }
    }

    /// The PIDs of the PostgreSQL backends serving the pgmcp process that
    /// connected as `app`.
    fn backend_pids(&self, app: &str) -> Vec<u32> {
        self.db
            .psql(&format!(
                "SELECT pid FROM pg_stat_activity WHERE application_name = '{app}'"
            ))
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Starts `pgmcp serve` with its own config, log file and HOME, connecting
    /// as `application_name = app` so its backends can be told apart.
    fn spawn(&self, settings: &Settings, app: &str) -> Mcp {
        let separator = if self.db.url.contains('?') { '&' } else { '?' };
        let connstring = format!("{}{separator}application_name={app}", self.db.url);
        Mcp::spawn(&self.bin, settings, &connstring)
    }
}

/// What a run's config file says.
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

/// A running `pgmcp serve` and the client end of its stdio: one writer (this
/// thread) and one reader thread that timestamps each response as it arrives.
struct Mcp {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    responses: Receiver<Response>,
    next_id: u64,
    settings: Settings,
    command_line: String,
    /// HOME, the config, the log and stderr; removed after the child exits.
    dir: tempfile::TempDir,
}

/// One response line, with the time it was read.
struct Response {
    id: u64,
    at: Instant,
    /// Neither a JSON-RPC error nor a tool result with `isError: true`.
    ok: bool,
    line: String,
}

/// One `query` call's response and how long it took.
struct Reply {
    latency: Duration,
    line: String,
}

impl Reply {
    fn returned_rows_truncated(&self) -> (u64, bool) {
        let msg: Value = serde_json::from_str(&self.line).expect("a response is JSON");
        let out = &msg["result"]["structuredContent"];
        match (out["returned_rows"].as_u64(), out["truncated"].as_bool()) {
            (Some(rows), Some(truncated)) => (rows, truncated),
            _ => panic!("no returned_rows/truncated in {}", preview(&self.line)),
        }
    }
}

/// The fields of a response the reader looks at; the rest is skipped, not built.
#[derive(Deserialize)]
struct Envelope {
    id: Option<u64>,
    error: Option<IgnoredAny>,
    result: Option<ResultFlags>,
}

#[derive(Deserialize)]
struct ResultFlags {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

/// What one pipelined run did.
struct Run {
    completed: usize,
    rate: f64,
    latencies: Vec<Duration>,
}

impl Mcp {
    fn spawn(bin: &str, settings: &Settings, connstring: &str) -> Mcp {
        let dir = tempfile::Builder::new()
            .prefix("pgmcp-bench-")
            .tempdir()
            .expect("a temp dir for pgmcp");
        let config = dir.path().join("config.json");
        let log = dir.path().join("pgmcp.log");
        fs::write(&config, settings.config(&log).to_string()).expect("write the config");
        let stderr = fs::File::create(dir.path().join("stderr")).expect("create the stderr file");

        let mut cmd = Command::new(bin);
        cmd.arg("--config")
            .arg(&config)
            .arg("serve")
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (key, _) in env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("PG") || key.starts_with("RUST_LOG") {
                cmd.env_remove(&*key);
            }
        }
        cmd.env("HOME", dir.path()).env("PGMCP_PG_CONNSTRING", connstring);
        let command_line = format!("{bin} --config {} serve", config.display());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {command_line}: {err}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");

        let (sender, responses) = mpsc::channel();
        thread::spawn(move || {
            let mut stdout = BufReader::with_capacity(1 << 16, stdout);
            let mut raw = Vec::new();
            loop {
                raw.clear();
                match stdout.read_until(b'\n', &mut raw) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let at = Instant::now();
                let line = String::from_utf8_lossy(&raw).trim_end().to_string();
                let Ok(envelope) = serde_json::from_str::<Envelope>(&line) else {
                    panic!("stdout carried a line that is not JSON-RPC: {}", preview(&line));
                };
                // Notifications have no id; nothing here waits for them.
                let Some(id) = envelope.id else { continue };
                let ok = envelope.error.is_none() && envelope.result.is_some_and(|r| r.is_error != Some(true));
                if sender.send(Response { id, at, ok, line }).is_err() {
                    return;
                }
            }
        });

        Mcp {
            child,
            stdin,
            responses,
            next_id: 1,
            settings: settings.clone(),
            command_line,
            dir,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The MCP handshake: `initialize`, its response, then `notifications/initialized`.
    fn initialize(&mut self) {
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
    }

    /// One `query` call, waited for.
    fn query(&mut self, sql: &str) -> Reply {
        let id = self.next_id();
        let request = query_request(id, &sql_json(sql));
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
            sent_at.insert(id, Instant::now());
            self.write(&query_request(id, &sql));
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
                sent_at.insert(id, Instant::now());
                self.write(&query_request(id, &sql));
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
        self.next_id += 1;
        self.next_id - 1
    }

    fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        if let Err(err) = stdin.write_all(line.as_bytes()) {
            panic!("{}", self.debug(&format!("cannot write to pgmcp: {err}")));
        }
    }

    fn recv(&mut self) -> Response {
        match self.responses.recv_timeout(RESPONSE_TIMEOUT) {
            Ok(response) => response,
            Err(err) => panic!("{}", self.debug(&format!("no response ({err})"))),
        }
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

    /// `what`, and what is needed to debug it: the command and pgmcp's stderr and log.
    fn debug(&mut self, what: &str) -> String {
        let read = |name: &str| fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        let status = match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            _ => "running".to_string(),
        };
        format!(
            "\n{what}\ncommand: {}\nstatus: {status}\nstderr:\n{}\nlog:\n{}",
            self.command_line,
            read("stderr"),
            read("pgmcp.log")
        )
    }
}

impl Drop for Mcp {
    /// Close stdin (the end of the session) and give pgmcp a moment to exit.
    fn drop(&mut self) {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sql_json(sql: &str) -> String {
    serde_json::to_string(sql).expect("a string always serializes")
}

fn query_request(id: u64, sql_json: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"query\",\"arguments\":{{\"sql\":{sql_json}}}}}}}\n"
    )
}

struct Memory {
    rss_kb: u64,
    hwm_kb: u64,
}

/// CPU time, in clock ticks, of pgmcp, its PostgreSQL backends and this process.
struct CpuSnapshot {
    pgmcp: u64,
    postgres: u64,
    client: u64,
}

impl CpuSnapshot {
    fn minus(&self, earlier: &CpuSnapshot) -> CpuSnapshot {
        CpuSnapshot {
            pgmcp: self.pgmcp.saturating_sub(earlier.pgmcp),
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

/// The markdown table printed at the end.
#[derive(Default)]
struct Table(Vec<[String; 3]>);

impl Table {
    fn row(&mut self, metric: &str, measured: impl Into<String>, target: &str) {
        self.0.push([metric.to_string(), measured.into(), target.to_string()]);
    }

    fn markdown(&self) -> String {
        let mut out = String::from("| Metric | Measured | Target |\n| --- | --- | --- |\n");
        for [metric, measured, target] in &self.0 {
            out.push_str(&format!("| {metric} | {measured} | {target} |\n"));
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
