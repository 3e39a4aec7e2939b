//! What the guard costs per query: `cargo bench --bench guard`.
//!
//! Prints percentiles for a typical ~200-character query and a ~10 KB query,
//! next to the `pg_query` crate's own protobuf parse of the same text for
//! scale. Numbers go in BENCHMARKS.md; nothing here asserts on time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pgmcp::Policy;
use pgmcp::testing::guard::{Judge, Mode, Routines, check};

const TYPICAL: &str = "SELECT u.id, u.email, count(o.id) AS orders, sum(o.total) AS spent \
                       FROM users u LEFT JOIN orders o ON o.user_id = u.id \
                       WHERE u.created_at > now() - interval '30 days' AND u.active \
                       GROUP BY u.id, u.email ORDER BY spent DESC NULLS LAST LIMIT 50";

fn large() -> String {
    let mut sql = String::from("SELECT id FROM events WHERE kind IN (");
    let mut n = 0;
    while sql.len() < 10_000 {
        sql.push_str(&format!("'kind_{n}', "));
        n += 1;
    }
    sql.push_str("'last') AND payload->>'source' = 'api' ORDER BY id LIMIT 100");
    sql
}

fn measure(label: &str, iterations: usize, mut f: impl FnMut()) {
    for _ in 0..iterations / 10 {
        f();
    }
    let mut samples: Vec<Duration> = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let start = Instant::now();
        f();
        samples.push(start.elapsed());
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e6;
    println!(
        "{label:<44} p50 {:>8.1} µs   p95 {:>8.1} µs   p99 {:>8.1} µs",
        pct(0.5),
        pct(0.95),
        pct(0.99)
    );
}

fn main() {
    let policy = Judge::new(Policy::default(), Mode::ReadWrite);
    let read_only = Judge::new(Policy::default(), Mode::ReadOnly);
    // A fresh PostgreSQL 15 database's catalog facts, as the backend reads them.
    let text = include_str!("../fixtures/guard/pg15-routines.json");
    let facts = Routines::from_json(serde_json::from_str(text).unwrap()).unwrap();
    let big = large();
    println!(
        "typical query: {} bytes, large query: {} bytes",
        TYPICAL.len(),
        big.len()
    );
    measure("guard::check, typical", 20_000, || {
        black_box(check(&policy, &facts, black_box(TYPICAL)).unwrap());
    });
    measure("guard::check, typical, read-only", 20_000, || {
        black_box(check(&read_only, &facts, black_box(TYPICAL)).unwrap());
    });
    measure("pg_query::parse (protobuf), typical", 20_000, || {
        black_box(pg_query::parse(black_box(TYPICAL), 0).unwrap());
    });
    measure("guard::check, 10 KB", 2_000, || {
        black_box(check(&policy, &facts, black_box(&big)).unwrap());
    });
    measure("pg_query::parse (protobuf), 10 KB", 2_000, || {
        black_box(pg_query::parse(black_box(&big), 0).unwrap());
    });
}
