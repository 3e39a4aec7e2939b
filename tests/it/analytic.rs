//! What must stay allowed, measured on analytic SQL written elsewhere: the
//! TPC-H and TPC-DS query sets as DuckDB's own `tpch` and `tpcds` extensions
//! print them (with their data at scale factor 0.01), and sqlglot's
//! translation of each into PostgreSQL's and SQLite's dialects
//! (`fixtures/analytic/generate.py`, run in a virtual environment from
//! PyPI).
//!
//! The rule, on every engine: each text the engine itself runs in a read-only
//! transaction (within ten seconds, five on SQLite) is allowed by pgmcp in read-only mode and
//! answers the same rows. The engine decides which texts count, not this
//! test; a floor on how many it ran keeps a broken setup from passing with
//! nothing measured. Rows are compared as multisets (the sets' ORDER BYs
//! leave ties), each value normalized the same way on both sides: numbers to
//! ten significant digits (parallel float sums differ in the last ones),
//! everything else as text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pgmcp::{Config, Engine, QueryInput, QueryOutput};
use serde::Deserialize;
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::support::{engine, pg, tools};

/// The generator's pins: the extensions must match the DuckDB they load into.
const REQUIREMENTS: &[&str] = &[
    "duckdb==1.5.5",
    "duckdb-extension-tpch==1.5.5",
    "duckdb-extension-tpcds==1.5.5",
    "sqlglot==30.30.0",
];

/// How long the engine itself may take over one text for it to count: ten
/// seconds, five on SQLite (which has no hash join: a few of the sets'
/// queries take it minutes).
const ENGINE_BUDGET: Duration = Duration::from_secs(10);

/// pgmcp's timeout: far above the engine's budget, so a loaded machine does
/// not turn a slow answer into a failure.
const PGMCP_TIMEOUT: Duration = Duration::from_secs(60);

const BENCHES: [&str; 2] = ["tpch", "tpcds"];

#[derive(Deserialize)]
struct Table {
    table: String,
    columns: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Query {
    name: String,
    texts: BTreeMap<String, String>,
}

/// The generated sets, made once per test process.
struct Sets {
    dir: TempDir,
}

impl Sets {
    fn get() -> &'static Sets {
        static SETS: OnceLock<Sets> = OnceLock::new();
        SETS.get_or_init(|| {
            let python = tools::python("PGMCP_TEST_ANALYTIC_PYTHON", "analytic", REQUIREMENTS);
            let dir = tempfile::tempdir().unwrap();
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/analytic/generate.py");
            let started = Instant::now();
            let out = Command::new(python)
                .arg(script)
                .arg(dir.path())
                .output()
                .expect("run fixtures/analytic/generate.py");
            assert!(
                out.status.success(),
                "generate.py failed: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!("analytic: TPC-H and TPC-DS generated in {:.1?}", started.elapsed());
            Sets { dir }
        })
    }

    fn bench(&self, bench: &str) -> PathBuf {
        self.dir.path().join(bench)
    }

    fn tables(&self, bench: &str) -> Vec<Table> {
        read_json(&self.bench(bench).join("schema.json"))
    }

    fn queries(&self, bench: &str) -> Vec<Query> {
        read_json(&self.bench(bench).join("queries.json"))
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The texts of `query` an engine speaking `dialect` is given: DuckDB's own,
/// and sqlglot's translation when it differs.
fn texts<'a>(query: &'a Query, dialect: &str) -> Vec<(&'static str, &'a str)> {
    let original = query.texts["duckdb"].as_str();
    let mut texts = vec![("as printed", original)];
    if let Some(translated) = query.texts.get(dialect).filter(|t| t.as_str() != original) {
        texts.push(("translated", translated.as_str()));
    }
    texts
}

/// One value as both sides are compared: numbers (and text that reads as a
/// number, as PostgreSQL's numeric arrives) to ten significant digits.
fn normalized(text: Option<&str>) -> String {
    match text {
        None => "NULL".to_string(),
        Some(t) => match t.trim().parse::<f64>() {
            Ok(n) if n.is_finite() && !t.trim().is_empty() => number(n),
            _ => t.to_string(),
        },
    }
}

fn number(n: f64) -> String {
    // + 0.0 folds -0 into 0.
    format!("{:.9e}", n + 0.0)
}

fn json_normalized(value: &Value) -> String {
    match value {
        Value::Null => normalized(None),
        Value::String(s) => normalized(Some(s)),
        Value::Number(n) => n.as_f64().map(number).unwrap_or_else(|| n.to_string()),
        other => other.to_string(),
    }
}

type Rows = Vec<Vec<String>>;

fn pgmcp_rows(out: &QueryOutput) -> Rows {
    let mut rows: Rows = out
        .rows
        .iter()
        .map(|row| out.columns.iter().map(|c| json_normalized(&row[&c.name])).collect())
        .collect();
    rows.sort();
    rows
}

/// What one engine's run of a query set came to.
#[derive(Default)]
struct Tally {
    tried: usize,
    engine_ran: usize,
    /// Texts the engine itself did not run, with its first line of why.
    engine_refused: Vec<String>,
    equal: usize,
    /// Texts the engine ran that pgmcp refused or answered differently.
    failures: Vec<String>,
}

impl Tally {
    fn report(&self, engine: &str, bench: &str) -> String {
        format!(
            "analytic: {engine} {bench}: {} texts, the engine ran {}, pgmcp allowed {} with the same rows",
            self.tried, self.engine_ran, self.equal
        )
    }

    /// What the engine said of `text`: its rows count, its refusal is noted.
    fn engine_said(&mut self, label: &str, said: Result<Rows, String>) -> Option<Rows> {
        self.tried += 1;
        match said {
            Ok(rows) => {
                self.engine_ran += 1;
                Some(rows)
            }
            Err(why) => {
                let first = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                self.engine_refused.push(format!("{label}: {first}"));
                None
            }
        }
    }

    /// No over-refusal, and at least `floor` texts measured.
    fn assert(&self, engine: &str, bench: &str, floor: usize) {
        let report = self.report(engine, bench);
        eprintln!(
            "{report}; the engine did not run:\n  {}",
            self.engine_refused.join("\n  ")
        );
        assert!(
            self.failures.is_empty(),
            "{report}; {} failed:\n{}",
            self.failures.len(),
            self.failures.join("\n\n")
        );
        assert!(self.engine_ran >= floor, "{report}: fewer than {floor} measured");
    }
}

/// pgmcp in read-only mode with room for whole answers: the caps are not
/// what is measured here.
fn roomy(config: &mut Config) {
    config.query.max_rows = 1_000_000;
    config.query.max_result_length = 1 << 30;
    config.query.default_timeout = PGMCP_TIMEOUT;
}

/// Runs `text` through pgmcp and records whether it answered `expected`.
async fn through_pgmcp(engine: &Engine, tally: &mut Tally, label: String, text: &str, expected: Rows) {
    match engine.query(&QueryInput::new(text), CancellationToken::new()).await {
        Ok(out) => {
            let got = pgmcp_rows(&out);
            if got == expected {
                tally.equal += 1;
            } else {
                tally.failures.push(format!(
                    "{label}: different rows ({} from pgmcp, {} from the engine); first pgmcp {:?}, first engine {:?}\n{text}",
                    got.len(),
                    expected.len(),
                    got.first(),
                    expected.first()
                ));
            }
        }
        Err(e) => tally.failures.push(format!("{label}: pgmcp refused: {e}\n{text}")),
    }
}

mod postgres {
    use std::process::Stdio;

    use super::*;

    fn pg_type(duck: &str) -> String {
        match duck {
            "VARCHAR" => "text".to_string(),
            "DOUBLE" => "double precision".to_string(),
            "FLOAT" | "REAL" => "real".to_string(),
            other => other.replace("DECIMAL", "numeric"),
        }
    }

    fn load(db: &pg::TestDb, sets: &Sets, bench: &str) {
        let mut script = String::new();
        for table in sets.tables(bench) {
            let columns: Vec<String> = table
                .columns
                .iter()
                .map(|(name, ty)| format!("{name} {}", pg_type(ty)))
                .collect();
            script.push_str(&format!("CREATE TABLE {} ({});\n", table.table, columns.join(", ")));
            let csv = sets.bench(bench).join(format!("{}.csv", table.table));
            script.push_str(&format!(
                "\\copy {} FROM '{}' WITH (FORMAT csv, HEADER true)\n",
                table.table,
                csv.display()
            ));
        }
        script.push_str("ANALYZE;\n");
        db.psql(&script);
    }

    /// The engine's own run, by psql: a read-only transaction with a
    /// statement timeout, values as the server writes them (fields and
    /// records split by control characters no value here holds).
    fn direct(db: &pg::TestDb, text: &str) -> Result<Rows, String> {
        let out = db
            .psql_session()
            .args(["-F", "\x1f", "-R", "\x1e", "-P", "null=\x02"])
            .args(["-c", "BEGIN READ ONLY"])
            .arg("-c")
            .arg(format!("SET LOCAL statement_timeout = {}", ENGINE_BUDGET.as_millis()))
            .args(["-c", text])
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let text = String::from_utf8(out.stdout).expect("UTF-8 from psql");
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let mut rows: Rows = if text.is_empty() {
            Vec::new()
        } else {
            text.split('\x1e')
                .map(|record| {
                    record
                        .split('\x1f')
                        .map(|field| normalized((field != "\x02").then_some(field)))
                        .collect()
                })
                .collect()
        };
        rows.sort();
        Ok(rows)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_analytic_query_sets_run_unrefused_on_postgres() {
        let sets = Sets::get();
        for (bench, floor) in BENCHES.into_iter().zip([38, 190]) {
            let db = pg::server().database();
            load(&db, sets, bench);
            let pgmcp = engine::engine_for(&db, roomy);
            let mut tally = Tally::default();
            for query in sets.queries(bench) {
                for (variant, text) in texts(&query, "postgres") {
                    let label = format!("{bench} {} ({variant})", query.name);
                    let Some(expected) = tally.engine_said(&label, direct(&db, text)) else {
                        continue;
                    };
                    through_pgmcp(&pgmcp, &mut tally, label, text, expected).await;
                }
            }
            tally.assert("PostgreSQL", bench, floor);
        }
    }
}

mod sqlite {
    use super::*;
    use rusqlite::types::ValueRef;
    use rusqlite::{Connection, OpenFlags};

    fn cell(value: ValueRef<'_>) -> String {
        match value {
            ValueRef::Null => normalized(None),
            ValueRef::Integer(i) => number(i as f64),
            ValueRef::Real(f) => number(f),
            ValueRef::Text(t) => normalized(Some(&String::from_utf8_lossy(t))),
            ValueRef::Blob(b) => format!("{b:?}"),
        }
    }

    /// The engine's own run: a read-only connection, stopped at the budget.
    fn direct(conn: &mut Connection, text: &str) -> Result<Rows, String> {
        let deadline = Instant::now() + ENGINE_BUDGET / 2;
        conn.progress_handler(10_000, Some(move || Instant::now() > deadline))
            .expect("a progress handler");
        let mut statement = conn.prepare(text).map_err(|e| e.to_string())?;
        let width = statement.column_count();
        let mut rows: Rows = Vec::new();
        let mut cursor = statement.query([]).map_err(|e| e.to_string())?;
        while let Some(row) = cursor.next().map_err(|e| e.to_string())? {
            rows.push((0..width).map(|i| cell(row.get_ref(i).unwrap())).collect());
        }
        rows.sort();
        Ok(rows)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_analytic_query_sets_run_unrefused_on_sqlite() {
        let sets = Sets::get();
        for (bench, floor) in BENCHES.into_iter().zip([26, 160]) {
            let file = sets.bench(bench).join("sqlite.db");
            let mut conn = Connection::open_with_flags(&file, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
            let pgmcp = crate::support::files::sqlite::engine_on(&file, roomy);
            let mut tally = Tally::default();
            for query in sets.queries(bench) {
                for (variant, text) in texts(&query, "sqlite") {
                    let label = format!("{bench} {} ({variant})", query.name);
                    let Some(expected) = tally.engine_said(&label, direct(&mut conn, text)) else {
                        continue;
                    };
                    through_pgmcp(&pgmcp, &mut tally, label, text, expected).await;
                }
            }
            tally.assert("SQLite", bench, floor);
        }
    }
}

#[cfg(feature = "duckdb")]
mod duckdb {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use ::duckdb::types::{TimeUnit, Value as Duck};
    use ::duckdb::{AccessMode, Connection};

    use super::*;

    fn load(file: &Path, sets: &Sets, bench: &str) {
        let conn = Connection::open(file).unwrap();
        for table in sets.tables(bench) {
            let columns: Vec<String> = table.columns.iter().map(|(name, ty)| format!("{name} {ty}")).collect();
            let csv = sets.bench(bench).join(format!("{}.csv", table.table));
            conn.execute_batch(&format!(
                "CREATE TABLE {t} ({c}); COPY {t} FROM '{csv}' (HEADER);",
                t = table.table,
                c = columns.join(", "),
                csv = csv.display()
            ))
            .unwrap();
        }
        conn.close().unwrap();
    }

    /// Days since 1970-01-01 as a civil date (Howard Hinnant's algorithm).
    fn date(days: i32) -> String {
        let z = i64::from(days) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!("{year:04}-{month:02}-{day:02}")
    }

    fn cell(value: Duck) -> String {
        match value {
            Duck::Null => normalized(None),
            Duck::Boolean(b) => b.to_string(),
            Duck::TinyInt(i) => number(f64::from(i)),
            Duck::SmallInt(i) => number(f64::from(i)),
            Duck::Int(i) => number(f64::from(i)),
            Duck::BigInt(i) => number(i as f64),
            Duck::HugeInt(i) => number(i as f64),
            Duck::UBigInt(i) => number(i as f64),
            Duck::UInt(i) => number(f64::from(i)),
            Duck::Float(f) => number(f64::from(f)),
            Duck::Double(f) => number(f),
            Duck::Decimal(d) => normalized(Some(&d.to_string())),
            Duck::Text(t) => normalized(Some(&t)),
            Duck::Date32(days) => date(days),
            Duck::Timestamp(TimeUnit::Microsecond, us) => {
                let (days, rest) = (us.div_euclid(86_400_000_000), us.rem_euclid(86_400_000_000));
                let s = rest / 1_000_000;
                format!("{} {:02}:{:02}:{:02}", date(days as i32), s / 3600, s / 60 % 60, s % 60)
            }
            other => format!("{other:?}"),
        }
    }

    /// The engine's own run: a read-only connection, interrupted at the
    /// budget.
    fn direct(conn: &Connection, text: &str) -> Result<Rows, String> {
        let done = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let (done, handle) = (done.clone(), conn.interrupt_handle());
            std::thread::spawn(move || {
                let deadline = Instant::now() + ENGINE_BUDGET;
                while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                if !done.load(Ordering::Relaxed) {
                    handle.interrupt();
                }
            })
        };
        let rows = (|| {
            let mut statement = conn.prepare(text).map_err(|e| e.to_string())?;
            let mut cursor = statement.query([]).map_err(|e| e.to_string())?;
            let mut rows: Rows = Vec::new();
            while let Some(row) = cursor.next().map_err(|e| e.to_string())? {
                let width = row.as_ref().column_count();
                rows.push((0..width).map(|i| cell(row.get::<_, Duck>(i).unwrap())).collect());
            }
            rows.sort();
            Ok(rows)
        })();
        done.store(true, Ordering::Relaxed);
        watchdog.join().unwrap();
        rows
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_analytic_query_sets_run_unrefused_on_duckdb() {
        let sets = Sets::get();
        for (bench, floor) in BENCHES.into_iter().zip([22, 99]) {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join(format!("{bench}.duckdb"));
            load(&file, sets, bench);
            let config = ::duckdb::Config::default().access_mode(AccessMode::ReadOnly).unwrap();
            let conn = Connection::open_with_flags(&file, config).unwrap();
            let mut tally = Tally::default();
            let mut measured = Vec::new();
            for query in sets.queries(bench) {
                for (variant, text) in texts(&query, "duckdb") {
                    let label = format!("{bench} {} ({variant})", query.name);
                    let Some(expected) = tally.engine_said(&label, direct(&conn, text)) else {
                        continue;
                    };
                    measured.push((label, text.to_string(), expected));
                }
            }
            // pgmcp opens the file itself: the test's read-only connection
            // is closed first, as a second process would find it.
            conn.close().unwrap();
            let pgmcp = crate::support::files::duckdb::engine_on(&file, roomy);
            for (label, text, expected) in measured {
                through_pgmcp(&pgmcp, &mut tally, label, &text, expected).await;
            }
            tally.assert("DuckDB", bench, floor);
        }
    }
}
