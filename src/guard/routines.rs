//! What the database's catalog says about the functions a query can reach,
//! and the one judgement every route to a function goes through.
//!
//! A query runs functions by more routes than calls: attribute notation
//! (`(x).f` is `f(x)`), operators (each is a function), casts and domain
//! constraints (a cast into a type runs its cast function and the domain's
//! checks), and the comparison and support functions sorting, grouping and
//! joining use without naming them. The guard collects every route from the
//! parse tree (`reach.rs`) and judges the function behind each one here, with
//! the same rules: `protection.blocked_functions` in every mode, and in
//! read-only mode only functions known to change nothing.
//!
//! "Known to change nothing" is read from the catalog ([`Routines`], looked up
//! by the backend and handed over as data, so the guard stays pure):
//! PostgreSQL's own volatility (`pg_proc.provolatile`) is trusted for functions
//! in `pg_catalog` and `information_schema` and for those an extension
//! installed, because only a superuser puts functions there. A function
//! anybody else defined may declare itself `STABLE` and still call anything,
//! so it is refused unless the person running pgmcp vouches for it in
//! `protection.read_only_functions`, by its full signature: a call is
//! vouched for when every function of its name not known to only read is
//! (the guard cannot tell overloads apart), so a new overload of a vouched
//! function is not.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;

use super::finding::RUNS_SQL_TEXT;
use super::{Finding, Judge, Rule, Violation};

/// What the catalog says about every function of one name, in any schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// Every function of that name is `IMMUTABLE` or `STABLE`, and defined
    /// in `pg_catalog`, `information_schema` or by an extension.
    ReadOnly,
    /// Every one is PostgreSQL's own (`pg_catalog`), and at least one is
    /// `VOLATILE`: it may change something, unless it is on
    /// [`HARMLESS_VOLATILE`].
    BuiltIn,
    /// At least one is defined by a database user, or is an extension's
    /// `VOLATILE` function.
    Untrusted,
}

/// The catalog facts the guard needs, as the backend reads them
/// (`backend/postgres/routines.sql`). Built-in operators, casts and support
/// functions are all `pg_catalog` functions that change nothing (checked by a
/// test against the server), so only the others are listed: on most
/// databases `casts` and `implicit` are empty.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Routines {
    /// The catalog's version when these facts were read; a query runs only
    /// while the catalog is still at it (`backend/postgres/routines.rs`).
    #[serde(deserialize_with = "null_is_empty")]
    version: String,
    /// Every function name in the database.
    functions: HashMap<String, Trust>,
    /// Function name → the full signature (`schema.name(argument types)`)
    /// of each function of that name not known to only read: the ones
    /// `protection.read_only_functions` must all name to vouch for a call.
    #[serde(deserialize_with = "null_is_empty")]
    signatures: HashMap<String, Vec<String>>,
    /// A function → what else it runs: a user's aggregate its support
    /// functions, a function defined outside `pg_catalog` what its argument
    /// and result types run.
    #[serde(deserialize_with = "null_is_empty")]
    runs: HashMap<String, Vec<Reach>>,
    /// Every operator name, with the functions behind the ones defined outside
    /// `pg_catalog` that an unqualified use can find (empty for an operator
    /// only PostgreSQL defines); and each operator defined outside
    /// `pg_catalog` again under `schema.op`, for `OPERATOR(schema.op)`.
    operators: HashMap<String, Vec<Reach>>,
    /// Type name → what a value of that type runs: a domain's constraints
    /// and default, a user's cast from or into it, a range's support
    /// functions, an operator over it; and those of every type it holds
    /// (an array's element, a composite's attributes, a domain's base type,
    /// a range's subtype, a multirange's range). Only types that run any.
    #[serde(deserialize_with = "null_is_empty")]
    casts: HashMap<String, Vec<Reach>>,
    /// Functions that run without being named: comparison operators over
    /// PostgreSQL's own types defined outside `pg_catalog` (CASE and JOIN
    /// USING find `=` by name), operator-class support functions defined
    /// outside `pg_catalog`, a superuser's cast between built-in types.
    #[serde(deserialize_with = "null_is_empty")]
    implicit: Vec<String>,
    /// PostgreSQL's own functions that make a value of a type given by its
    /// oid or its name (`domain_in`, `record_in`, `pg_input_is_valid`): a
    /// call reaches every type.
    #[serde(deserialize_with = "null_is_empty")]
    any_type: Vec<String>,
    /// Relation name → the functions it runs when read (a view's query, row
    /// security policies, what the types it reaches run, what the planner
    /// folds: its index, statistics and partition key expressions and
    /// CHECKs, its inheritance children's) and when written
    /// (defaults, triggers, CHECK constraints, rules, policies), through the
    /// relations its views, rules and policies read or write. Only
    /// relations that run any.
    #[serde(deserialize_with = "null_is_empty")]
    relations: HashMap<String, RelationFunctions>,
    /// No catalog was read on purpose ([`Routines::unread`]): what the
    /// functions do is left to the call, which judges them with the facts.
    #[serde(skip)]
    unread: bool,
}

/// A function a route runs, and what runs it when that is not the route
/// itself (`the constraint c of domain public.d`, `the cast from public.t
/// to pg_catalog.json`). The catalog query writes one without `via` as its
/// bare name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "ReachJson")]
pub struct Reach {
    function: String,
    via: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ReachJson {
    Name(String),
    Through { function: String, via: String },
}

impl From<ReachJson> for Reach {
    fn from(json: ReachJson) -> Reach {
        match json {
            ReachJson::Name(function) => Reach { function, via: None },
            ReachJson::Through { function, via } => Reach {
                function,
                via: Some(via),
            },
        }
    }
}

impl From<&str> for Reach {
    fn from(function: &str) -> Reach {
        Reach {
            function: function.to_owned(),
            via: None,
        }
    }
}

impl From<String> for Reach {
    fn from(function: String) -> Reach {
        Reach { function, via: None }
    }
}

/// What reading and writing one relation runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RelationFunctions {
    read: Vec<Reach>,
    write: Vec<Reach>,
}

/// `json_object_agg` over no rows is `null`, not `{}`.
fn null_is_empty<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

impl Routines {
    /// Facts from the JSON document the backend's catalog query returns.
    pub fn from_json(json: serde_json::Value) -> Result<Routines, serde_json::Error> {
        serde_json::from_value(json)
    }

    /// Facts for judging a statement before any database is open (a curated
    /// tool's statement when the config loads): every rule that needs no
    /// catalog applies, `protection.blocked_functions` included; whether a
    /// function only reads is left to the call, judged with the catalog.
    pub fn unread() -> Routines {
        Routines {
            unread: true,
            ..Routines::default()
        }
    }

    /// Whether any function of this name exists.
    pub fn is_function(&self, name: &str) -> bool {
        self.functions.contains_key(name)
    }

    /// No facts at all: the caller could not read the catalog.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// The catalog's version these facts describe ("" when unknown).
    pub fn version(&self) -> &str {
        &self.version
    }
}

/// Built-in `VOLATILE` functions that change nothing: volatile because their
/// answer changes between calls (random values, clocks, sizes on disk), not
/// because they write. Only their `pg_catalog` versions are accepted
/// ([`Trust::BuiltIn`]): a user's function of the same name makes the name
/// untrusted.
pub const HARMLESS_VOLATILE: &[&str] = &[
    "random",
    "random_normal",
    "setseed",
    "clock_timestamp",
    "timeofday",
    "gen_random_uuid",
    "uuidv4",
    "uuidv7",
    "pg_sleep",
    "pg_sleep_for",
    "pg_sleep_until",
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_table_size",
    "pg_indexes_size",
    "pg_database_size",
    "pg_tablespace_size",
    "pg_partition_tree",
    "pg_partition_ancestors",
    "pg_is_in_recovery",
    "pg_last_xact_replay_timestamp",
    "pg_last_wal_receive_lsn",
    "pg_last_wal_replay_lsn",
    "pg_current_wal_lsn",
    "pg_jit_available",
    "pg_blocking_pids",
    "pg_notification_queue_usage",
];

/// Built-in functions PostgreSQL marks `STABLE` that still change something:
/// each assigns the transaction an ID, which writes to the server's state.
const NOT_HARMLESS_STABLE: &[&str] = &["txid_current", "pg_current_xact_id"];

/// How the query reaches a function, for the message.
#[derive(Debug, Clone, Copy)]
pub(super) enum Route<'a> {
    Call,
    /// `(x).f` or `t.f`.
    Attribute,
    Operator(&'a str),
    /// A value of the type: its domain checks, casts, operators.
    Cast(&'a str),
    /// Sorting, grouping, joins and comparisons.
    Implicit,
    /// A user's aggregate runs its support functions; a function runs
    /// what its argument and result types run.
    Runs(&'a str),
    /// Reading or writing a relation runs its view query, policies,
    /// defaults, triggers, constraints and rules.
    Relation(&'a str),
}

impl Route<'_> {
    fn describe(self, name: &str, via: Option<&str>) -> String {
        match (self, via) {
            (Route::Call, _) => format!("function {name}()"),
            (Route::Attribute, _) => format!("function {name}() (called through attribute notation, x.{name})"),
            (Route::Operator(op), None) => format!("function {name}() (behind the operator {op})"),
            (Route::Operator(op), Some(via)) => {
                format!("function {name}() (run by {via}, which the operator {op} reaches)")
            }
            (Route::Cast(ty), None) => format!("function {name}() (run by a value of type {ty})"),
            (Route::Cast(ty), Some(via)) => {
                format!("function {name}() (run by {via}, which a value of type {ty} reaches)")
            }
            (Route::Implicit, _) => format!("function {name}() (run by comparisons, sorting and grouping)"),
            (Route::Runs(f), None) => format!("function {name}() (run by the aggregate {f})"),
            (Route::Runs(f), Some(via)) => {
                format!("function {name}() (run by {via}, which {f}() reaches through its argument or result types)")
            }
            (Route::Relation(rel), None) => {
                format!("function {name}() (run by {rel}: its view query, policies, defaults, triggers or rules)")
            }
            (Route::Relation(rel), Some(via)) => {
                format!("function {name}() (run by {via}, a type that reading or writing {rel} reaches)")
            }
        }
    }
}

/// The one judgement for a function the query can run, whatever the route.
pub(super) fn function(judge: &Judge, routines: &Routines, name: &str, route: Route<'_>) -> Result<(), Violation> {
    judge_function(judge, routines, name, route, None)
}

/// Judge a function the facts list, with what runs it.
fn reached(judge: &Judge, routines: &Routines, reach: &Reach, route: Route<'_>) -> Result<(), Violation> {
    judge_function(judge, routines, &reach.function, route, reach.via.as_deref())
}

fn judge_function(
    judge: &Judge,
    routines: &Routines,
    name: &str,
    route: Route<'_>,
    via: Option<&str>,
) -> Result<(), Violation> {
    // What a function runs besides itself is judged one level deep: the
    // catalog query already followed types to the end.
    if !matches!(route, Route::Runs(_)) {
        routines
            .runs
            .get(name)
            .into_iter()
            .flatten()
            .try_for_each(|f| reached(judge, routines, f, Route::Runs(name)))?;
    }
    let lower = name.to_ascii_lowercase();
    judge.call(&lower, || route.describe(&lower, via), || Some(function_reason(&lower)))?;
    let risk = match routines.functions.get(name) {
        _ if NOT_HARMLESS_STABLE.contains(&lower.as_str()) => {
            Some("it assigns a transaction ID, which changes the server's state")
        }
        Some(Trust::ReadOnly) => None,
        Some(Trust::BuiltIn)
            if HARMLESS_VOLATILE.contains(&lower.as_str())
                || super::policy::READ_ONLY_DIAGNOSTICS.contains(&lower.as_str()) =>
        {
            None
        }
        Some(Trust::BuiltIn) => Some("it is VOLATILE: PostgreSQL says it can change the database or the server"),
        Some(Trust::Untrusted) => Some(
            "it is defined in the database rather than by PostgreSQL or an extension (or is an extension's VOLATILE function), so nothing shows it only reads",
        ),
        None if routines.unread => None,
        None => Some("it is not in the database's catalog as pgmcp last read it: check the name"),
    };
    let signatures = routines.signatures.get(name).map(Vec::as_slice).unwrap_or_default();
    judge.call_in_read_only(signatures, || route.describe(name, via), risk)
}

/// Why a default-blocked function is dangerous, for the message.
fn function_reason(name: &str) -> Cow<'static, str> {
    Cow::Borrowed(match name {
        n if n.starts_with("pg_ls_") || n == "pg_logdir_ls" => "lists files on the database server",
        "pg_read_file" | "pg_read_binary_file" | "pg_stat_file" => "reads files on the database server",
        n if n.starts_with("pg_file_") => "writes files on the database server",
        n if n.starts_with("lo_") || n == "loread" || n == "lowrite" => {
            "reads or writes large objects, which can import and export server files"
        }
        n if n.starts_with("dblink") => "opens connections to other databases, outside this guard",
        "pg_terminate_backend" | "pg_cancel_backend" | "pg_signal_backend" => "stops other sessions' work",
        "pg_log_backend_memory_contexts" => "signals another session",
        n if n.starts_with("pg_logical_slot_get_") => {
            "consumes a replication slot's changes, which its real consumer then never sees"
        }
        "pg_reload_conf" | "pg_rotate_logfile" | "pg_promote" => "controls the database server",
        n if n.contains("replication") || n.starts_with("pg_logical_") || n.starts_with("pg_wal_") => {
            "changes replication or WAL state on the server, even in a read-only transaction"
        }
        "pg_switch_wal" | "pg_create_restore_point" | "pg_backup_start" | "pg_backup_stop" => {
            "changes WAL or backup state on the server, even in a read-only transaction"
        }
        n if n.starts_with("pg_stat_reset") => "resets the server's statistics, even in a read-only transaction",
        "pg_import_system_collations" => "writes into the system catalog, even in a read-only transaction",
        n if n.starts_with("table_to_xml") || n.starts_with("schema_to_xml") || n.starts_with("database_to_xml") => {
            "runs queries of its own, which the guard and the row cap cannot bound"
        }
        n if n.starts_with("query_to_xml") || n.starts_with("cursor_to_xml") => RUNS_SQL_TEXT,
        "ts_stat" | "ts_rewrite" | "connectby" | "xpath_table" | "pg_background_launch" => RUNS_SQL_TEXT,
        n if n.starts_with("crosstab") => RUNS_SQL_TEXT,
        "set_config" => {
            return Cow::Owned(format!(
                "changes session settings, which protection.{} governs",
                Rule::Set.flag().unwrap_or_default()
            ));
        }
        _ => "is listed in protection.blocked_functions",
    })
}

/// Judge the functions behind an operator, by its name as written: `op` or
/// `schema.op`. An operator the catalog does not know is refused in
/// read-only mode: it may have been defined after the catalog was read.
pub(super) fn judge_operator(
    judge: &Judge,
    routines: &Routines,
    schema: Option<&str>,
    op: &str,
) -> Result<(), Violation> {
    // PostgreSQL's own schema holds only its own operators and those a
    // superuser put there, which the bare name lists.
    let key = match schema {
        Some(schema) if schema != "pg_catalog" => format!("{schema}.{op}"),
        _ => op.to_owned(),
    };
    match routines.operators.get(&key) {
        Some(functions) => functions
            .iter()
            .try_for_each(|f| reached(judge, routines, f, Route::Operator(&key))),
        None if routines.unread => Ok(()),
        None => judge.write(
            || format!("operator {key}"),
            "it is not in the database's catalog, so nothing shows what it runs",
        ),
    }
}

/// Judge what a value of type `ty` runs: its domain checks, the casts and
/// operators a user made for it, those of the types it holds.
pub(super) fn judge_cast(judge: &Judge, routines: &Routines, ty: &str) -> Result<(), Violation> {
    routines
        .casts
        .get(ty)
        .into_iter()
        .flatten()
        .try_for_each(|f| reached(judge, routines, f, Route::Cast(ty)))
}

/// A call of a function that makes a value of a type given by its oid or
/// name (`domain_in('x', 'public.d'::regtype, -1)`) reaches any type.
pub(super) fn judge_any_type(judge: &Judge, routines: &Routines, name: &str) -> Result<(), Violation> {
    if !routines.any_type.iter().any(|f| f.eq_ignore_ascii_case(name)) {
        return Ok(());
    }
    let mut types: Vec<&String> = routines.casts.keys().collect();
    // In a stable order, so the same query is refused the same way.
    types.sort();
    types.into_iter().try_for_each(|ty| judge_cast(judge, routines, ty))
}

/// Judge the functions a relation named in the query runs: when read, or
/// when `written` (the statement's target), also those that run on writes.
pub(super) fn judge_relation(
    judge: &Judge,
    routines: &Routines,
    relation: &str,
    written: bool,
) -> Result<(), Violation> {
    let Some(runs) = routines.relations.get(relation) else {
        return Ok(());
    };
    let writes = if written { &runs.write[..] } else { &[][..] };
    runs.read.iter().chain(writes).try_for_each(|f| {
        // Writing pg_settings (or a view over it) runs set_config through
        // PostgreSQL's own rule: it is SET by another name.
        if f.function == "set_config" && written {
            return judge.decide(Finding::new(
                super::Rule::Set,
                format!("writing {relation} is not allowed"),
                "it changes session settings like SET does (through pg_settings' rule)",
            ));
        }
        reached(judge, routines, f, Route::Relation(relation))
    })
}

/// Judge the functions every statement may run without naming them.
pub(super) fn judge_implicit(judge: &Judge, routines: &Routines) -> Result<(), Violation> {
    routines
        .implicit
        .iter()
        .try_for_each(|f| function(judge, routines, f, Route::Implicit))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::guard::{Mode, Policy, Rule};

    /// PostgreSQL 15's catalog facts, as `backend/postgres/routines.sql`
    /// returned them from a fresh cluster (a test in tests/it compares this
    /// file with the live server's answer).
    pub(crate) fn pg15() -> Routines {
        let text = include_str!("../../fixtures/guard/pg15-routines.json");
        Routines::from_json(serde_json::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn the_fixture_has_postgres_own_facts() {
        let r = pg15();
        assert_eq!(r.functions.get("lower"), Some(&Trust::ReadOnly));
        assert_eq!(r.functions.get("random"), Some(&Trust::BuiltIn));
        assert_eq!(r.functions.get("pg_read_file"), Some(&Trust::BuiltIn));
        assert_eq!(r.operators.get("="), Some(&Vec::new()));
        assert!(r.casts.is_empty() && r.implicit.is_empty());
    }

    #[test]
    fn every_harmless_volatile_function_is_volatile_on_postgres_15() {
        let r = pg15();
        // Functions newer than PostgreSQL 15 are simply absent there.
        let newer = ["random_normal", "uuidv4", "uuidv7"];
        for name in HARMLESS_VOLATILE.iter().filter(|n| !newer.contains(n)) {
            assert_eq!(r.functions.get(*name), Some(&Trust::BuiltIn), "{name}");
        }
        for name in NOT_HARMLESS_STABLE {
            assert_eq!(r.functions.get(*name), Some(&Trust::ReadOnly), "{name}");
        }
    }

    /// Every default blocked function, reached by every route, in both modes.
    /// The catalog here lists each one behind an operator, a cast and the
    /// implicit comparisons, as a database user could arrange.
    #[test]
    fn every_blocked_function_by_every_route() {
        let names: Vec<String> = super::super::DEFAULT_BLOCKED_FUNCTIONS
            .iter()
            .map(|p| p.replace('*', "_any"))
            .collect();
        let mut failures = Vec::new();
        for name in &names {
            let mut facts = pg15();
            facts.functions.insert(name.clone(), Trust::BuiltIn);
            facts.operators.insert("@@@@".into(), vec![name.as_str().into()]);
            facts.casts.insert("sneaky".into(), vec![name.as_str().into()]);
            let mut implicit = pg15();
            implicit.functions.insert(name.clone(), Trust::BuiltIn);
            implicit.implicit.push(name.clone());
            let routes = [
                (format!("SELECT {name}('x')"), &facts),
                (format!("SELECT pg_catalog.{name}('x')"), &facts),
                (format!("SELECT \"{name}\"('x')"), &facts),
                (format!("SELECT ('x'::text).{name}"), &facts),
                (format!("SELECT (t.c).{name} FROM t"), &facts),
                (format!("SELECT t.{name} FROM t"), &facts),
                (format!("SELECT ((SELECT 'x')).{name}"), &facts),
                (format!("SELECT * FROM {name}('x')"), &facts),
                (format!("SELECT 1 WHERE {name}('x') IS NULL"), &facts),
                ("SELECT @@@@ 'x'".to_owned(), &facts),
                ("SELECT 'a' @@@@ 'b'".to_owned(), &facts),
                ("SELECT 1 WHERE 'a' @@@@ ANY (SELECT 'b')".to_owned(), &facts),
                ("SELECT c FROM t ORDER BY c USING @@@@".to_owned(), &facts),
                ("SELECT 'x'::sneaky".to_owned(), &facts),
                ("SELECT CAST('x' AS public.sneaky)".to_owned(), &facts),
                ("SELECT sneaky 'x'".to_owned(), &facts),
                ("SELECT 1".to_owned(), &implicit),
            ];
            for mode in [Mode::ReadWrite, Mode::ReadOnly] {
                let judge = Judge::new(Policy::default(), mode);
                for (sql, facts) in &routes {
                    match crate::guard::check(&judge, facts, sql) {
                        Err(v) if v.rule == Rule::BlockedFunction => {}
                        other => failures.push(format!("{sql} ({mode:?}): {other:?}")),
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} got through:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    /// PostgreSQL 13's catalog as far as these cases go: no `extract`
    /// function (its grammar made `EXTRACT` a `date_part` call).
    fn pg13() -> Routines {
        let mut facts = pg15();
        facts.functions.remove("extract");
        facts
    }

    #[test]
    fn sql_syntax_runs_what_the_servers_grammar_makes_of_it() {
        let without_either = {
            let mut facts = pg13();
            facts.functions.remove("date_part");
            facts
        };
        let pg13_planted = || {
            let mut facts = pg13();
            facts.functions.insert("date_part".into(), Trust::Untrusted);
            facts
        };
        let planted_date_part = pg13_planted();
        // (facts, SQL, allowed in read-only mode?)
        let cases: &[(&str, Routines, &str, bool)] = &[
            ("15", pg15(), "SELECT extract(year FROM now())", true),
            ("13", pg13(), "SELECT extract(year FROM now())", true),
            ("13", pg13(), "SELECT EXTRACT(epoch FROM interval '1 day')", true),
            // Called by name, extract() is a function PostgreSQL 13 lacks.
            ("13", pg13(), "SELECT \"extract\"('year', now())", false),
            ("13", pg13(), "SELECT pg_catalog.extract('year', now())", false),
            ("15", pg15(), "SELECT pg_catalog.extract('year', now())", true),
            // Only the name the server's grammar chooses stands in.
            ("neither", without_either, "SELECT extract(year FROM now())", false),
            // And it is judged as any call of it: an overload a database
            // user planted makes EXTRACT refused, as date_part() would be.
            (
                "13 planted",
                planted_date_part,
                "SELECT EXTRACT(year FROM now())",
                false,
            ),
            ("13 planted", pg13_planted(), "SELECT date_part('year', now())", false),
        ];
        let judge = Judge::new(Policy::default(), Mode::ReadOnly);
        for (server, facts, sql, allowed) in cases {
            let verdict = crate::guard::check(&judge, facts, sql);
            assert_eq!(verdict.is_ok(), *allowed, "{sql} on {server}: {verdict:?}");
        }
    }

    /// Before PostgreSQL 16, `JSON_ARRAY(1, 2)` is a call of whatever
    /// function named `json_array` the database has; the parser here reads
    /// a constructor. Each piece of SQL/JSON syntax is judged as that call
    /// where the catalog has such a function, and runs freely where not.
    #[test]
    fn sql_json_syntax_runs_what_older_grammars_make_of_it() {
        let syntax = [
            ("json_array", "SELECT JSON_ARRAY(1, 2)"),
            ("json_array", "SELECT JSON_ARRAY(SELECT 1)"),
            ("json_object", "SELECT JSON_OBJECT('a' VALUE 1)"),
            ("json_arrayagg", "SELECT JSON_ARRAYAGG(x) FROM t"),
            ("json_objectagg", "SELECT JSON_OBJECTAGG(k VALUE v) FROM t"),
            ("json", "SELECT JSON('1')"),
            ("json_scalar", "SELECT JSON_SCALAR(1)"),
            ("json_serialize", "SELECT JSON_SERIALIZE('1')"),
            ("json_value", "SELECT JSON_VALUE('1', '$')"),
            ("json_query", "SELECT JSON_QUERY('1', '$')"),
            ("json_exists", "SELECT JSON_EXISTS('1', '$')"),
            (
                "json_table",
                "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a int PATH '$'))",
            ),
        ];
        let judge = Judge::new(Policy::default(), Mode::ReadOnly);
        for (name, sql) in syntax {
            assert!(crate::guard::check(&judge, &pg15(), sql).is_ok(), "{sql}");
            let mut planted = pg15();
            planted.functions.insert(name.into(), Trust::Untrusted);
            let verdict = crate::guard::check(&judge, &planted, sql);
            assert!(
                matches!(&verdict, Err(v) if v.rule == Rule::ReadOnly && v.message.contains(name)),
                "{sql} with a user's {name}(): {verdict:?}"
            );
        }
    }

    #[test]
    fn judgements() {
        let ro = Judge::new(Policy::default(), Mode::ReadOnly);
        let rw = Judge::new(Policy::default(), Mode::ReadWrite);
        let mut planted = pg15();
        planted.functions.insert("evil".into(), Trust::Untrusted);
        planted.functions.insert("lower".into(), Trust::Untrusted);
        // (judge, function, allowed?)
        let cases: &[(&Judge, &str, Option<Rule>)] = &[
            (&ro, "lower", Some(Rule::ReadOnly)),
            (&ro, "upper", None),
            (&ro, "random", None),
            (&ro, "pg_total_relation_size", None),
            (&ro, "pg_advisory_lock", Some(Rule::ReadOnly)),
            (&ro, "txid_current", Some(Rule::ReadOnly)),
            (&ro, "evil", Some(Rule::ReadOnly)),
            (&ro, "no_such_function", Some(Rule::ReadOnly)),
            (&ro, "pg_read_file", Some(Rule::BlockedFunction)),
            (&ro, "ts_rewrite", Some(Rule::BlockedFunction)),
            (&ro, "table_to_xml", Some(Rule::BlockedFunction)),
            (&rw, "evil", None),
            (&rw, "pg_advisory_lock", None),
            (&rw, "lo_import", Some(Rule::BlockedFunction)),
            (&rw, "PG_READ_FILE", Some(Rule::BlockedFunction)),
        ];
        for (judge, name, want) in cases {
            let got = function(judge, &planted, name, Route::Call).err().map(|v| v.rule);
            assert_eq!(got, *want, "{name} read_only={}", judge.read_only());
        }
        planted.signatures.insert("evil".into(), vec!["public.evil()".into()]);
        planted
            .signatures
            .insert("pg_read_file".into(), vec!["pg_catalog.pg_read_file(text)".into()]);
        let vouching = |signatures: &[&str]| {
            let mut policy = Policy::default();
            policy.read_only_functions = signatures
                .iter()
                .map(|s| super::super::FunctionPattern::new(s))
                .collect();
            Judge::new(policy, Mode::ReadOnly)
        };
        assert!(function(&vouching(&["public.evil()"]), &planted, "evil", Route::Call).is_ok());
        assert!(function(&vouching(&["PUBLIC.evil( )"]), &planted, "evil", Route::Call).is_ok());
        // A bare name vouches for nothing.
        assert!(function(&vouching(&["evil"]), &planted, "evil", Route::Call).is_err());
        // A second overload: both must be vouched for, the refusal says
        // which is missing.
        planted
            .signatures
            .insert("evil".into(), vec!["public.evil()".into(), "public.evil(text)".into()]);
        let refused = function(&vouching(&["public.evil()"]), &planted, "evil", Route::Call).unwrap_err();
        assert!(refused.message.contains("\"public.evil(text)\""), "{refused:?}");
        assert!(!refused.message.contains("\"public.evil()\""), "{refused:?}");
        assert!(
            function(
                &vouching(&["public.evil()", "public.evil(text)"]),
                &planted,
                "evil",
                Route::Call
            )
            .is_ok()
        );
        // Vouching never overrides the blocked list.
        assert!(
            function(
                &vouching(&["pg_catalog.pg_read_file(text)"]),
                &planted,
                "pg_read_file",
                Route::Call
            )
            .is_err()
        );
    }
}
