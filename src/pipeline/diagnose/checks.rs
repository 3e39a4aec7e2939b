//! The checks `diagnose` runs: one statement each, pgmcp's own, over
//! PostgreSQL's statistics views, answering one small `json` object of
//! facts (lists cut at ten), and the one-line reading of those facts.
//! Every name is qualified with `pg_catalog`, and each statement starts
//! with [`MARK`], which `slow_queries` leaves out of its list.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What each of pgmcp's own statements here starts with.
pub const MARK: &str = "/* pgmcp diagnose */";

/// One check, by the name the `check` argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The statements that took the most time in all and per call
    /// (pg_stat_statements, when installed).
    SlowQueries,
    /// Indexes never scanned since the statistics were reset (unique and
    /// primary-key indexes left out: they enforce constraints).
    UnusedIndexes,
    /// Tables of 10,000 rows or more read mostly by sequential scans.
    MissingIndexes,
    /// Tables whose estimated free space is a fifth of their size or more.
    Bloat,
    /// Sessions waiting for a lock, and the sessions holding it.
    Locks,
    /// How many connections are open, by state, against the limit.
    Connections,
    /// How much of what is read comes from shared buffers rather than disk.
    CacheHit,
    /// Dead rows per table, last vacuum and analyze, transaction ID age.
    Vacuum,
    /// Replicas, replication slots and the WAL they hold back; on a
    /// standby, how far behind it replays.
    Replication,
}

impl Check {
    pub const ALL: [Check; 9] = [
        Check::SlowQueries,
        Check::UnusedIndexes,
        Check::MissingIndexes,
        Check::Bloat,
        Check::Locks,
        Check::Connections,
        Check::CacheHit,
        Check::Vacuum,
        Check::Replication,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Check::SlowQueries => "slow_queries",
            Check::UnusedIndexes => "unused_indexes",
            Check::MissingIndexes => "missing_indexes",
            Check::Bloat => "bloat",
            Check::Locks => "locks",
            Check::Connections => "connections",
            Check::CacheHit => "cache_hit",
            Check::Vacuum => "vacuum",
            Check::Replication => "replication",
        }
    }

    /// The statement, but for `slow_queries` (see [`slow_queries`]).
    pub fn sql(self) -> Option<String> {
        let body = match self {
            Check::SlowQueries => return None,
            Check::UnusedIndexes => UNUSED_INDEXES,
            Check::MissingIndexes => MISSING_INDEXES,
            Check::Bloat => BLOAT,
            Check::Locks => LOCKS,
            Check::Connections => CONNECTIONS,
            Check::CacheHit => CACHE_HIT,
            Check::Vacuum => VACUUM,
            Check::Replication => REPLICATION,
        };
        Some(format!("{MARK} {}", body.replace("SEES_ALL_SESSIONS", SEES_ALL)))
    }
}

/// A plain string `enum`, written in place: what every client's form shows.
impl JsonSchema for Check {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Check".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "enum": Check::ALL.map(Check::name)})
    }
}

/// Whether the role statements run as sees every session's details
/// (`pg_read_all_stats`, which superusers and `pg_monitor` have): without
/// it, PostgreSQL hides other users' query texts and states.
const SEES_ALL: &str =
    "'role', current_user, 'sees_all_sessions', pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')";

/// `slow_queries` over pg_stat_statements installed in `schema` (quoted):
/// the five statements that took the most time in all, then those of the
/// five slowest per call not among them,
/// at extension `version`: before 1.8 its columns were `total_time` and
/// `mean_time`. pgmcp's own statements are left out: its catalog reads
/// (written with `OPERATOR(pg_catalog.…)`), its per-transaction settings
/// and these checks.
pub fn slow_queries(schema: &str, version: &str) -> String {
    let old = version
        .split('.')
        .map(|part| part.parse::<u32>().unwrap_or(0))
        .collect::<Vec<_>>()
        < vec![1, 8];
    let (total, mean) = match old {
        true => ("total_time", "mean_time"),
        false => ("total_exec_time", "mean_exec_time"),
    };
    format!(
        "{MARK} WITH s AS (
    SELECT nullif(pg_catalog.left(pg_catalog.regexp_replace(s.query, '\\s+', ' ', 'g'), 300), '<insufficient privilege>') AS query,
           s.calls, s.rows,
           pg_catalog.round(s.{total}::numeric, 1) AS total_ms,
           pg_catalog.round(s.{mean}::numeric, 2) AS mean_ms,
           pg_catalog.rank() OVER (ORDER BY s.{total} DESC, s.queryid) AS by_total,
           pg_catalog.rank() OVER (ORDER BY s.{mean} DESC, s.queryid) AS by_mean
    FROM {schema}.pg_stat_statements(true) s
    WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
      AND s.query NOT LIKE '%OPERATOR(pg_catalog.%'
      AND s.query NOT LIKE 'SELECT pg_catalog.set_config(%'
      AND s.query NOT LIKE '/* pgmcp %'
)
SELECT pg_catalog.json_build_object(
    'statements', (SELECT pg_catalog.count(*) FROM s),
    'total_ms', (SELECT coalesce(pg_catalog.sum(s.total_ms), 0) FROM s),
    'texts_hidden', (SELECT pg_catalog.count(*) FROM s WHERE s.query IS NULL),
    'by_total_time', coalesce((SELECT pg_catalog.json_agg(t) FROM (
        SELECT s.query, s.calls, s.total_ms, s.mean_ms, s.rows FROM s WHERE s.by_total <= 5 ORDER BY s.by_total) t), '[]'),
    'slowest_mean_ms', (SELECT pg_catalog.max(s.mean_ms) FROM s),
    'also_slow_per_call', coalesce((SELECT pg_catalog.json_agg(t) FROM (
        SELECT s.query, s.calls, s.total_ms, s.mean_ms, s.rows FROM s WHERE s.by_mean <= 5 AND s.by_total > 5
        ORDER BY s.by_mean) t), '[]'),
    {SEES_ALL})"
    )
}

const UNUSED_INDEXES: &str = "WITH u AS (
    SELECT s.schemaname AS schema, s.relname AS table, s.indexrelname AS index,
           pg_catalog.pg_relation_size(s.indexrelid) AS bytes
    FROM pg_catalog.pg_stat_user_indexes s
    JOIN pg_catalog.pg_index x ON x.indexrelid = s.indexrelid
    WHERE s.idx_scan = 0 AND NOT x.indisunique AND NOT x.indisprimary AND x.indisvalid
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint c WHERE c.conindid = s.indexrelid)
)
SELECT pg_catalog.json_build_object(
    'unused', (SELECT pg_catalog.count(*) FROM u),
    'unused_size', (SELECT pg_catalog.pg_size_pretty(coalesce(pg_catalog.sum(u.bytes), 0)) FROM u),
    'indexes', coalesce((SELECT pg_catalog.json_agg(t) FROM (
        SELECT u.schema, u.table, u.index, pg_catalog.pg_size_pretty(u.bytes) AS size
        FROM u ORDER BY u.bytes DESC, u.index LIMIT 10) t), '[]'),
    'counting_since', (SELECT d.stats_reset FROM pg_catalog.pg_stat_database d
                       WHERE d.datname = pg_catalog.current_database()))";

const MISSING_INDEXES: &str = "SELECT pg_catalog.json_build_object('tables', coalesce(pg_catalog.json_agg(t), '[]'))
FROM (
    SELECT s.schemaname AS schema, s.relname AS table, s.n_live_tup AS rows,
           s.seq_scan AS sequential_scans, coalesce(s.idx_scan, 0) AS index_scans,
           s.seq_tup_read / s.seq_scan AS rows_read_per_scan,
           pg_catalog.pg_size_pretty(pg_catalog.pg_relation_size(s.relid)) AS size
    FROM pg_catalog.pg_stat_user_tables s
    WHERE s.seq_scan > 0 AND s.n_live_tup >= 10000 AND s.seq_scan > coalesce(s.idx_scan, 0)
    ORDER BY s.seq_tup_read DESC, s.relname
    LIMIT 10
) t";

/// The estimate: the pages a table's rows would fill at its fillfactor
/// (the header, the columns' average widths from pg_stats less their
/// NULLs, a 4-byte line pointer; alignment padding between columns is not
/// counted, so a table of many narrow columns reads a little bloated),
/// against the pages it has.
const BLOAT: &str = "WITH t AS (
    SELECT n.nspname AS schema, c.relname AS table, c.relpages::bigint AS pages, c.reltuples,
           pg_catalog.current_setting('block_size')::int AS block,
           coalesce((SELECT pg_catalog.substring(o, 'fillfactor=(\\d+)')::int
                     FROM pg_catalog.unnest(c.reloptions) o WHERE o LIKE 'fillfactor=%'), 100) AS fillfactor,
           -- A row's columns (a NULL takes no room) and its header: 23 bytes
           -- and a null bitmap when some column has NULLs, aligned to 8.
           (SELECT pg_catalog.sum((1 - s.null_frac) * s.avg_width)
                   + 8 * pg_catalog.ceil((23 + CASE WHEN pg_catalog.bool_or(s.null_frac > 0)
                                                   THEN (c.relnatts + 7) / 8 ELSE 0 END) / 8.0)
            FROM pg_catalog.pg_stats s
            WHERE s.schemaname = n.nspname AND s.tablename = c.relname AND NOT s.inherited) AS width
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'm') AND c.relpages > 0
      AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
      AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
), e AS (
    SELECT t.*, pg_catalog.ceil(t.reltuples * (t.width + 4) / ((t.block - 24) * t.fillfactor / 100.0))::bigint AS needed
    FROM t WHERE t.width IS NOT NULL AND t.reltuples >= 0
), b AS (
    SELECT e.schema, e.table, e.pages * e.block AS bytes, (e.pages - e.needed) * e.block AS wasted,
           pg_catalog.round(100.0 * (e.pages - e.needed) / e.pages) AS wasted_percent
    FROM e WHERE e.pages - e.needed >= 8 AND e.pages - e.needed >= 0.2 * e.pages
)
SELECT pg_catalog.json_build_object(
    'tables', coalesce((SELECT pg_catalog.json_agg(x) FROM (
        SELECT b.schema, b.table, pg_catalog.pg_size_pretty(b.bytes) AS size,
               pg_catalog.pg_size_pretty(b.wasted) AS wasted, b.wasted_percent
        FROM b ORDER BY b.wasted DESC, b.table LIMIT 10) x), '[]'),
    'wasted', (SELECT pg_catalog.pg_size_pretty(coalesce(pg_catalog.sum(b.wasted), 0)) FROM b),
    'without_statistics', (SELECT pg_catalog.count(*) FROM t WHERE t.width IS NULL OR t.reltuples < 0))";

/// Every (blocked, blocking) pair counts the sessions waiting; the ten
/// pairs shown are the longest-waiting sessions' first (a pile-up behind
/// one lock makes many pairs: waiters ahead in the queue block too).
const LOCKS: &str = "WITH pairs AS (
    SELECT w.pid AS blocked_pid, w.usename AS blocked_user, w.wait_event AS waiting_for, w.query_start AS since,
           pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.now() - w.query_start)::numeric, 1) AS statement_seconds,
           nullif(pg_catalog.left(w.query, 200), '<insufficient privilege>') AS blocked_query,
           h.pid AS blocking_pid, h.usename AS blocking_user, h.state AS blocking_state,
           pg_catalog.round(pg_catalog.date_part('epoch', pg_catalog.now() - h.xact_start)::numeric, 1) AS blocking_transaction_seconds,
           nullif(pg_catalog.left(h.query, 200), '<insufficient privilege>') AS blocking_query
    FROM pg_catalog.pg_stat_activity w
    CROSS JOIN LATERAL pg_catalog.unnest(pg_catalog.pg_blocking_pids(w.pid)) AS b(pid)
    JOIN pg_catalog.pg_stat_activity h ON h.pid = b.pid
    WHERE w.datname = pg_catalog.current_database()
)
SELECT pg_catalog.json_build_object(
    'waiting', (SELECT pg_catalog.count(DISTINCT p.blocked_pid) FROM pairs p),
    'blocked', coalesce((SELECT pg_catalog.json_agg(x) FROM (
        SELECT p.blocked_pid, p.blocked_user, p.waiting_for, p.statement_seconds, p.blocked_query, p.blocking_pid,
               p.blocking_user, p.blocking_state, p.blocking_transaction_seconds, p.blocking_query
        FROM pairs p ORDER BY p.since NULLS LAST, p.blocked_pid, p.blocking_pid LIMIT 10) x), '[]'),
    SEES_ALL_SESSIONS)";

const CONNECTIONS: &str = "SELECT pg_catalog.json_build_object(
    'max_connections', pg_catalog.current_setting('max_connections')::int,
    -- PostgreSQL 16 adds reserved_connections (for pg_use_reserved_connections).
    'reserved', pg_catalog.current_setting('superuser_reserved_connections')::int
        + coalesce(nullif(pg_catalog.current_setting('reserved_connections', true), '')::int, 0),
    'open', pg_catalog.count(*),
    'in_this_database', pg_catalog.count(*) FILTER (WHERE a.datname = pg_catalog.current_database()),
    'active', pg_catalog.count(*) FILTER (WHERE a.state = 'active'),
    'idle', pg_catalog.count(*) FILTER (WHERE a.state = 'idle'),
    'idle_in_transaction', pg_catalog.count(*) FILTER (WHERE a.state LIKE 'idle in transaction%'),
    'waiting_for_locks', pg_catalog.count(*) FILTER (WHERE a.wait_event_type = 'Lock'),
    'state_hidden', pg_catalog.count(*) FILTER (WHERE a.state IS NULL),
    'longest_idle_in_transaction_seconds', pg_catalog.round(pg_catalog.date_part('epoch',
        pg_catalog.max(pg_catalog.now() - a.state_change) FILTER (WHERE a.state LIKE 'idle in transaction%'))::numeric, 1),
    'longest_running_query_seconds', pg_catalog.round(pg_catalog.date_part('epoch',
        pg_catalog.max(pg_catalog.now() - a.query_start) FILTER (WHERE a.state = 'active' AND a.pid <> pg_catalog.pg_backend_pid()))::numeric, 1),
    SEES_ALL_SESSIONS)
FROM pg_catalog.pg_stat_activity a
-- A role without pg_read_all_stats sees no backend_type: then what is
-- connected to a database as a user counts (autovacuum workers have no
-- user; a background worker that has one, as a parallel query's, counts).
WHERE coalesce(a.backend_type, 'client backend') = 'client backend' AND a.datid IS NOT NULL
  AND a.usesysid IS NOT NULL";

const CACHE_HIT: &str = "SELECT pg_catalog.json_build_object(
    'database_hit_percent', (SELECT pg_catalog.round(100.0 * d.blks_hit / nullif(d.blks_hit + d.blks_read, 0), 2)
        FROM pg_catalog.pg_stat_database d WHERE d.datname = pg_catalog.current_database()),
    'tables_hit_percent', (SELECT pg_catalog.round(100.0 * pg_catalog.sum(s.heap_blks_hit)
        / nullif(pg_catalog.sum(s.heap_blks_hit) + pg_catalog.sum(s.heap_blks_read), 0), 2)
        FROM pg_catalog.pg_statio_user_tables s),
    'indexes_hit_percent', (SELECT pg_catalog.round(100.0 * pg_catalog.sum(s.idx_blks_hit)
        / nullif(pg_catalog.sum(s.idx_blks_hit) + pg_catalog.sum(s.idx_blks_read), 0), 2)
        FROM pg_catalog.pg_statio_user_indexes s),
    'most_read_from_disk', coalesce((SELECT pg_catalog.json_agg(x) FROM (
        SELECT s.schemaname AS schema, s.relname AS table, s.heap_blks_read AS blocks_read,
               pg_catalog.round(100.0 * s.heap_blks_hit / nullif(s.heap_blks_hit + s.heap_blks_read, 0), 2) AS hit_percent
        FROM pg_catalog.pg_statio_user_tables s WHERE s.heap_blks_read > 0
        ORDER BY s.heap_blks_read DESC, s.relname LIMIT 5) x), '[]'),
    'shared_buffers', pg_catalog.current_setting('shared_buffers'))";

const VACUUM: &str = "SELECT pg_catalog.json_build_object(
    'autovacuum', pg_catalog.current_setting('autovacuum'),
    'transaction_id_age', (SELECT pg_catalog.age(d.datfrozenxid) FROM pg_catalog.pg_database d
                           WHERE d.datname = pg_catalog.current_database()),
    'freeze_max_age', pg_catalog.current_setting('autovacuum_freeze_max_age')::bigint,
    'dead_rows', (SELECT coalesce(pg_catalog.sum(s.n_dead_tup), 0) FROM pg_catalog.pg_stat_user_tables s),
    'tables', coalesce((SELECT pg_catalog.json_agg(x) FROM (
        SELECT s.schemaname AS schema, s.relname AS table, s.n_live_tup AS live_rows, s.n_dead_tup AS dead_rows,
               pg_catalog.round(100.0 * s.n_dead_tup / nullif(s.n_live_tup + s.n_dead_tup, 0), 1) AS dead_percent,
               greatest(s.last_vacuum, s.last_autovacuum) AS last_vacuum,
               greatest(s.last_analyze, s.last_autoanalyze) AS last_analyze
        FROM pg_catalog.pg_stat_user_tables s WHERE s.n_dead_tup > 0
        ORDER BY s.n_dead_tup DESC, s.relname LIMIT 10) x), '[]'))";

/// `pg_current_wal_lsn()` fails on a standby: only asked on a primary.
const REPLICATION: &str = "SELECT pg_catalog.json_build_object(
    'standby', pg_catalog.pg_is_in_recovery(),
    'replicas', coalesce((SELECT pg_catalog.json_agg(pg_catalog.json_build_object(
        'name', r.application_name, 'client', r.client_addr::text, 'state', r.state, 'sync', r.sync_state,
        'replay_lag_seconds', pg_catalog.round(pg_catalog.date_part('epoch', r.replay_lag)::numeric, 1),
        'lag_bytes', CASE WHEN NOT pg_catalog.pg_is_in_recovery()
                     THEN pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.replay_lsn) END)
        ORDER BY r.application_name) FROM pg_catalog.pg_stat_replication r), '[]'),
    'slots', coalesce((SELECT pg_catalog.json_agg(pg_catalog.json_build_object(
        'name', s.slot_name, 'type', s.slot_type, 'active', s.active,
        'retained_bytes', CASE WHEN NOT pg_catalog.pg_is_in_recovery() AND s.restart_lsn IS NOT NULL
                          THEN pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), s.restart_lsn) END)
        ORDER BY s.slot_name) FROM pg_catalog.pg_replication_slots s), '[]'),
    'last_replayed_commit_seconds', CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.round(pg_catalog.date_part('epoch',
        pg_catalog.now() - pg_catalog.pg_last_xact_replay_timestamp())::numeric, 1) END,
    'received_not_replayed_bytes', CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.pg_wal_lsn_diff(
        pg_catalog.pg_last_wal_receive_lsn(), pg_catalog.pg_last_wal_replay_lsn()) END,
    SEES_ALL_SESSIONS)";

/// What `slow_queries` answers where pg_stat_statements is not installed
/// (`loaded`: the library is, but not the extension in this database).
pub fn without_statements(loaded: bool) -> String {
    let steps = match loaded {
        true => "run CREATE EXTENSION pg_stat_statements; in this database (a superuser, or the database owner)",
        false => {
            "add pg_stat_statements to shared_preload_libraries in postgresql.conf, restart the server, then run \
             CREATE EXTENSION pg_stat_statements; in this database (it ships with PostgreSQL's contrib modules)"
        }
    };
    format!("slow_queries reads pg_stat_statements, which this database does not have: {steps}.")
}

/// What `slow_queries` answers where the schema holding pg_stat_statements
/// has a function of that name that is not the extension's.
pub fn not_the_extensions(schema: &str) -> String {
    format!(
        "slow_queries reads pg_stat_statements, but the function pg_stat_statements(boolean) in schema {schema} is \
         not the extension's own, so pgmcp does not call it: a superuser reinstalls the extension (DROP EXTENSION \
         pg_stat_statements; CREATE EXTENSION pg_stat_statements;)."
    )
}

/// The one line that says what `facts` mean.
pub fn read(check: Check, facts: &Value) -> String {
    let n = |key: &str| facts.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let s = |value: &Value, key: &str| match value.get(key) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => "?".to_owned(),
        Some(other) => other.to_string(),
    };
    let list = |key: &str| facts.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    let hidden = |count: f64, one: &str, more: &str| match facts.get("sees_all_sessions") == Some(&Value::Bool(false))
        && count > 0.0
    {
        true => format!(
            " {} hidden from role {}: grant it pg_read_all_stats (or pg_monitor) to see them.",
            many(count, one, more),
            s(facts, "role")
        ),
        false => String::new(),
    };
    match check {
        Check::SlowQueries => {
            let by_total = list("by_total_time");
            let Some(top) = by_total.first() else {
                return "No statement is recorded for this database yet (since pg_stat_statements was last reset)."
                    .to_owned();
            };
            let share = match n("total_ms") > 0.0 {
                true => top.get("total_ms").and_then(Value::as_f64).unwrap_or(0.0) * 100.0 / n("total_ms"),
                false => 0.0,
            };
            format!(
                "The statement that took the most time ran {} for {} ms in all ({share:.0}% of the {} ms \
                 recorded), {} ms per call; the slowest per call takes {} ms. Explain them to see why.{}",
                many(top.get("calls").and_then(Value::as_f64).unwrap_or(0.0), "time", "times"),
                s(top, "total_ms"),
                n("total_ms"),
                s(top, "mean_ms"),
                s(facts, "slowest_mean_ms"),
                hidden(n("texts_hidden"), "statement's text is", "statements' texts are")
            )
        }
        Check::UnusedIndexes => match n("unused") {
            0.0 => {
                "Every index that enforces no constraint has been scanned since the statistics were reset.".to_owned()
            }
            count => format!(
                "{} ({}) {} never scanned since {}; each still slows writes. Before dropping one, \
                 check the replicas and rare jobs: their scans are not counted here.",
                many(count, "index", "indexes"),
                s(facts, "unused_size"),
                if count == 1.0 { "was" } else { "were" },
                match facts.get("counting_since") {
                    Some(Value::String(since)) => format!("the statistics were reset at {since}"),
                    _ => "the statistics began".to_owned(),
                }
            ),
        },
        Check::MissingIndexes => {
            let tables = list("tables");
            match tables.first() {
                None => "No table of 10,000 rows or more is read mostly by sequential scans.".to_owned(),
                Some(top) => format!(
                    "{} read mostly by sequential scans; {}.{} read {} rows per scan over {} scans. \
                     Find the statements that filter it (slow_queries) and try an index with explain's \
                     hypothetical_indexes.",
                    many(tables.len() as f64, "large table is", "large tables are"),
                    s(top, "schema"),
                    s(top, "table"),
                    s(top, "rows_read_per_scan"),
                    s(top, "sequential_scans")
                ),
            }
        }
        Check::Bloat => {
            let tables = list("tables");
            let unknown = match n("without_statistics") {
                0.0 => String::new(),
                count => format!(
                    " {} no statistics yet: ANALYZE to include them.",
                    many(count, "table has", "tables have")
                ),
            };
            match tables.first() {
                None => format!("No table is estimated to be a fifth or more free space.{unknown}"),
                Some(top) => format!(
                    "{} about {} of free space; {}.{} is about {}% free ({} of {}). VACUUM makes the \
                     space reusable; VACUUM FULL (which locks the table) or pg_repack gives it back. An estimate \
                     from the statistics: ANALYZE first for a fresh one.{unknown}",
                    many(tables.len() as f64, "table holds", "tables hold"),
                    s(facts, "wasted"),
                    s(top, "schema"),
                    s(top, "table"),
                    s(top, "wasted_percent"),
                    s(top, "wasted"),
                    s(top, "size")
                ),
            }
        }
        Check::Locks => {
            let blocked = list("blocked");
            match blocked.first() {
                None => "No session in this database is waiting for a lock.".to_owned(),
                Some(first) => {
                    format!(
                        "{} for locks; the longest waiting, pid {} (its statement running for {} s), waits for \
                         pid {} ({}, in a transaction for {} s). Ending the blocking transaction releases it.{}",
                        many(n("waiting"), "session waits", "sessions wait"),
                        s(first, "blocked_pid"),
                        s(first, "statement_seconds"),
                        s(first, "blocking_pid"),
                        s(first, "blocking_state"),
                        s(first, "blocking_transaction_seconds"),
                        hidden(
                            blocked.len() as f64,
                            "session's query and state may be",
                            "sessions' queries and states may be"
                        )
                    )
                }
            }
        }
        Check::Connections => {
            let usable = (n("max_connections") - n("reserved")).max(1.0);
            let idle_tx = match n("idle_in_transaction") {
                0.0 => String::new(),
                count => format!(
                    "; {count} idle in a transaction (the longest for {} s), holding locks and old rows",
                    s(facts, "longest_idle_in_transaction_seconds")
                ),
            };
            format!(
                "{} of {} connections are open ({:.0}% of those not reserved), {} in this \
                 database; {} active{idle_tx}.{}",
                n("open"),
                n("max_connections"),
                n("open") * 100.0 / usable,
                n("in_this_database"),
                n("active"),
                hidden(n("state_hidden"), "session's state is", "sessions' states are")
            )
        }
        Check::CacheHit => match facts.get("database_hit_percent").and_then(Value::as_f64) {
            None => "Nothing has been read in this database since the statistics were reset.".to_owned(),
            Some(hit) => format!(
                "{hit}% of this database's block reads came from shared buffers ({} of memory){}.",
                s(facts, "shared_buffers"),
                match hit < 99.0 {
                    true => ": below 99% on a busy database, more memory or fewer large scans would help",
                    false => ": healthy",
                }
            ),
        },
        Check::Vacuum => {
            let age = n("transaction_id_age");
            let share = age * 100.0 / n("freeze_max_age").max(1.0);
            let worst = list("tables").first().map(|t| {
                format!(
                    " The most dead rows are in {}.{} ({}% dead; last vacuumed {}).",
                    s(t, "schema"),
                    s(t, "table"),
                    s(t, "dead_percent"),
                    match t.get("last_vacuum") {
                        Some(Value::String(at)) => at.clone(),
                        _ => "never".to_owned(),
                    }
                )
            });
            // Between aggressive vacuums the age climbs to the limit and back:
            // past it, the vacuum that freezes is due or running; near 2^31,
            // PostgreSQL stops assigning transaction IDs.
            let alarm = match (age >= 1.5e9, share >= 100.0) {
                (true, _) => {
                    ": transaction ID wraparound is near (PostgreSQL stops writing at about 2.1 billion); \
                              VACUUM (FREEZE) the oldest tables now"
                }
                (false, true) => ": past it, so autovacuum's anti-wraparound vacuum is due or running",
                (false, false) => "",
            };
            format!(
                "{} dead rows in this database's tables; autovacuum is {}. The oldest unfrozen transaction is \
                 {age} transactions old, {share:.0}% of autovacuum_freeze_max_age{alarm}.{}",
                n("dead_rows"),
                s(facts, "autovacuum"),
                worst.unwrap_or_default()
            )
        }
        Check::Replication => {
            if facts.get("standby") == Some(&Value::Bool(true)) {
                return format!(
                    "This server is a standby with {} bytes of WAL received and not yet replayed; the last commit \
                     it replayed is {} s old (on a primary with nothing to commit, that grows without any lag).",
                    s(facts, "received_not_replayed_bytes"),
                    s(facts, "last_replayed_commit_seconds")
                );
            }
            let replicas = list("replicas");
            let slots = list("slots");
            let idle: Vec<String> = slots
                .iter()
                .filter(|slot| slot.get("active") == Some(&Value::Bool(false)))
                .map(|slot| s(slot, "name"))
                .collect();
            match (replicas.len(), slots.len()) {
                (0, 0) => "A primary with no replica connected and no replication slot.".to_owned(),
                (count, slots) => format!(
                    "A primary with {} connected and {}{}.{}",
                    many(count as f64, "replica", "replicas"),
                    many(slots as f64, "replication slot", "replication slots"),
                    match idle.is_empty() {
                        true => String::new(),
                        false => format!(
                            "; inactive slots ({}) keep WAL on disk until they are used or dropped",
                            idle.join(", ")
                        ),
                    },
                    hidden(
                        replicas.iter().filter(|r| r.get("state") == Some(&Value::Null)).count() as f64,
                        "replica's state and lag are",
                        "replicas' states and lags are"
                    )
                ),
            }
        }
    }
}

/// `n` and what it counts, in the singular for one.
fn many(n: f64, one: &str, more: &str) -> String {
    match n == 1.0 {
        true => format!("1 {one}"),
        false => format!("{n} {more}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_reading_says_what_the_facts_mean() {
        // (check, facts, what the reading must say)
        let cases: Vec<(Check, Value, &[&str])> = vec![
            (
                Check::SlowQueries,
                json!({"by_total_time": [], "also_slow_per_call": []}),
                &["No statement is recorded"],
            ),
            (
                Check::SlowQueries,
                json!({"total_ms": 200.0, "texts_hidden": 2, "sees_all_sessions": false, "role": "reader",
                       "slowest_mean_ms": 40.0, "by_total_time": [{"calls": 4, "total_ms": 150.0, "mean_ms": 37.5}],
                       "also_slow_per_call": [{"calls": 1, "total_ms": 40.0, "mean_ms": 40.0}]}),
                &[
                    "ran 4 times for 150.0 ms",
                    "75% of the 200 ms",
                    "per call takes 40.0 ms",
                    "2 statements' texts are hidden from role reader",
                    "pg_read_all_stats",
                ],
            ),
            (Check::UnusedIndexes, json!({"unused": 0}), &["Every index"]),
            (
                Check::UnusedIndexes,
                json!({"unused": 2, "unused_size": "16 kB", "counting_since": null}),
                &["2 indexes (16 kB) were never scanned since the statistics began"],
            ),
            (
                Check::MissingIndexes,
                json!({"tables": []}),
                &["No table of 10,000 rows"],
            ),
            (
                Check::MissingIndexes,
                json!({"tables": [{"schema": "public", "table": "orders", "rows_read_per_scan": 20000, "sequential_scans": 3}]}),
                &[
                    "1 large table is read",
                    "public.orders read 20000 rows per scan over 3 scans",
                    "hypothetical_indexes",
                ],
            ),
            (
                Check::Bloat,
                json!({"tables": [], "without_statistics": 3}),
                &["No table", "3 tables have no statistics"],
            ),
            (
                Check::Bloat,
                json!({"tables": [{"schema": "public", "table": "t", "wasted_percent": 90, "wasted": "4 MB", "size": "5 MB"}],
                       "wasted": "4 MB", "without_statistics": 0}),
                &["public.t is about 90% free (4 MB of 5 MB)", "VACUUM"],
            ),
            (
                Check::Locks,
                json!({"blocked": []}),
                &["No session in this database is waiting"],
            ),
            (
                Check::Locks,
                json!({"sees_all_sessions": true, "waiting": 1, "blocked": [{"blocked_pid": 7, "statement_seconds": 2.5,
                       "blocking_pid": 9, "blocking_state": "idle in transaction", "blocking_transaction_seconds": 30.0}]}),
                &[
                    "1 session waits for locks",
                    "pid 7 (its statement running for 2.5 s), waits for pid 9 (idle in transaction, in a transaction for 30.0 s)",
                ],
            ),
            (
                Check::Connections,
                json!({"max_connections": 100, "reserved": 3, "open": 10, "in_this_database": 4,
                       "active": 1, "idle_in_transaction": 1, "longest_idle_in_transaction_seconds": 12.5,
                       "state_hidden": 8, "sees_all_sessions": false, "role": "r"}),
                &[
                    "10 of 100 connections",
                    "10% of those not reserved",
                    "1 idle in a transaction (the longest for 12.5 s)",
                    "8 sessions' states are hidden",
                ],
            ),
            (
                Check::CacheHit,
                json!({"database_hit_percent": null}),
                &["Nothing has been read"],
            ),
            (
                Check::CacheHit,
                json!({"database_hit_percent": 95.5, "shared_buffers": "128MB"}),
                &["95.5%", "below 99%"],
            ),
            (
                Check::CacheHit,
                json!({"database_hit_percent": 99.9, "shared_buffers": "128MB"}),
                &["healthy"],
            ),
            (
                Check::Vacuum,
                json!({"dead_rows": 900, "autovacuum": "on", "transaction_id_age": 150000000, "freeze_max_age": 200000000,
                       "tables": [{"schema": "public", "table": "t", "dead_percent": 90.0, "last_vacuum": null}]}),
                &[
                    "900 dead rows",
                    "75% of autovacuum_freeze_max_age.",
                    "public.t (90.0% dead; last vacuumed never)",
                ],
            ),
            (
                Check::Vacuum,
                json!({"dead_rows": 0, "autovacuum": "on", "transaction_id_age": 250000000, "freeze_max_age": 200000000, "tables": []}),
                &["125% of autovacuum_freeze_max_age: past it, so autovacuum's anti-wraparound vacuum is due"],
            ),
            (
                Check::Vacuum,
                json!({"dead_rows": 0, "autovacuum": "off", "transaction_id_age": 1600000000, "freeze_max_age": 200000000, "tables": []}),
                &["autovacuum is off", "wraparound is near"],
            ),
            (
                Check::Replication,
                json!({"standby": false, "replicas": [], "slots": []}),
                &["no replica connected and no replication slot"],
            ),
            (
                Check::Replication,
                json!({"standby": false, "replicas": [], "slots": [{"name": "old", "active": false}]}),
                &["0 replicas connected and 1 replication slot;", "inactive slots (old)"],
            ),
            (
                Check::Replication,
                json!({"standby": true, "received_not_replayed_bytes": 0, "last_replayed_commit_seconds": 1.5}),
                &[
                    "standby with 0 bytes of WAL received and not yet replayed",
                    "replayed is 1.5 s old",
                ],
            ),
            (
                Check::Replication,
                json!({"standby": false, "replicas": [{"name": "r", "state": null}], "slots": [],
                       "sees_all_sessions": false, "role": "reader"}),
                &[
                    "1 replica connected",
                    "1 replica's state and lag are hidden from role reader",
                ],
            ),
        ];
        for (check, facts, says) in cases {
            let reading = read(check, &facts);
            for said in says {
                assert!(reading.contains(said), "{check:?}: {said:?} not in {reading:?}");
            }
        }
    }

    #[test]
    fn every_statement_is_marked_and_slow_queries_follows_the_extension_version() {
        for check in Check::ALL {
            match check.sql() {
                Some(sql) => assert!(sql.starts_with(MARK) && !sql.contains("SEES_ALL"), "{check:?}"),
                None => assert_eq!(check, Check::SlowQueries),
            }
        }
        assert!(slow_queries("\"public\"", "1.10").contains("s.total_exec_time"));
        assert!(slow_queries("\"public\"", "1.7").contains("s.total_time"));
        assert!(slow_queries("\"x\"", "1.9").contains("FROM \"x\".pg_stat_statements(true)"));
    }
}
