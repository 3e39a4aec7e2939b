//! A second red team's attacks on `confirm`, end to end on the real
//! binary, in the style of `confirm_attacks.rs`: the model controls only a
//! tool's arguments; the person declines whatever they are asked; the
//! database, its sequences and the server's files are read back after.
//! Attacks pgmcp resists stay as regression tests; the ones that got
//! through when written assert the safe behaviour and fail until fixed
//! (each says so, with the reproduction).

use serde_json::{Value, json};

use crate::support::pg;
use crate::support::python_sdk::{confirm_session, shown};
use crate::support::served::write_config;

/// A call of tool `name` the person answers with "decline" if asked.
fn declined_call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments, "answer": "decline"})
}

fn declined(sql: &str) -> Value {
    declined_call("query", json!({"sql": sql, "params": []}))
}

fn sqlite_file(dir: &std::path::Path, name: &str, sql: &str) -> std::path::PathBuf {
    let file = dir.join(name);
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    file
}

fn sqlite_text(file: &std::path::Path, sql: &str) -> String {
    let conn = rusqlite::Connection::open(file).unwrap();
    conn.query_row(sql, [], |r| r.get::<_, Option<String>>(0))
        .unwrap()
        .unwrap_or_default()
}

/// How a step went, for a report: asked (and declined), refused, or ran.
fn how(step: &Value) -> String {
    match (!shown(step).is_empty(), step["isError"].as_bool().unwrap_or(false)) {
        (true, _) => "asked".to_owned(),
        (false, true) => format!("refused: {}", step["text"].as_str().unwrap_or_default()),
        (false, false) => format!("ran unasked: {}", step["text"].as_str().unwrap_or_default()),
    }
}

/// `leak(tag)`: a database function that writes the server file
/// `{prefix}-{tag}` (a `COPY ... TO`, which a rolled-back `READ ONLY`
/// transaction keeps), and a way to see which tags were written and clean
/// them up after.
struct Leak<'a> {
    db: &'a pg::TestDb,
    prefix: String,
}

impl<'a> Leak<'a> {
    fn install(db: &'a pg::TestDb, name: &str) -> Leak<'a> {
        let prefix = format!("/tmp/pgmcp-rt2-{name}-{}-{}", std::process::id(), db.name);
        db.psql(&format!(
            "CREATE FUNCTION leak(tag text) RETURNS int LANGUAGE plpgsql AS \
               $$ BEGIN EXECUTE format('COPY (SELECT 1) TO %L', '{prefix}-' || tag); RETURN 1; END $$",
        ));
        Leak { db, prefix }
    }

    /// Whether `leak(tag)` ran; removes its file.
    fn ran(&self, tag: &str) -> bool {
        let path = format!("{}-{tag}", self.prefix);
        let ran = self
            .db
            .psql(&format!("SELECT (pg_stat_file('{path}', true)).size IS NOT NULL"))
            == "t";
        if ran {
            self.db
                .psql(&format!("COPY (SELECT 1) TO PROGRAM 'cat > /dev/null; rm -f {path}'"));
        }
        ran
    }
}

/// Found when written, now resisted. The `explain` tool is not covered by `confirm` at
/// all: in read-write mode, `explain` with `analyze: true` runs the
/// statement (then rolls back), and nobody is asked. What a rollback does
/// not undo stays: `setval` and `nextval` move a sequence for good (the
/// application's next ids collide or skip), and a database function's
/// `COPY ... TO` writes a server file. The annotation even says the tool
/// only reads (`readOnlyHint: true`), so a client will not warn either.
/// Repro: read-write server, `CREATE SEQUENCE tickets`; the model calls
/// `explain {"sql": "SELECT setval('tickets', 99)", "analyze": true}`:
/// `SELECT last_value FROM tickets` is 99 and the person never saw it.
/// Safe: `explain` with `analyze` of a statement the guard classifies as
/// writing (or any statement, with `confirm: "all"`) is asked like `query`
/// (its message saying it runs and is rolled back, and what a rollback
/// keeps), or is refused under `confirm`.
#[test]
fn explain_analyze_changes_nothing_the_person_did_not_accept() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'); \
         CREATE SEQUENCE tickets",
    );
    let leak = Leak::install(&db, "analyze");
    let sequence = || db.psql("SELECT last_value || ':' || is_called FROM tickets");
    let before = sequence();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let attacks = [
        "SELECT setval('tickets', 99)",
        "SELECT nextval('tickets')",
        "INSERT INTO pets VALUES (2, 'tom'), (nextval('tickets'), 'x')",
        "SELECT leak('analyze')",
    ];
    let steps = confirm_session(
        json!({"steps": attacks.iter().map(|sql| declined_call("explain", json!({"sql": sql, "analyze": true}))).collect::<Vec<_>>()}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let report: Vec<String> = attacks
        .iter()
        .zip(&steps)
        .map(|(sql, step)| format!("explain analyze {sql} → {}", how(step)))
        .collect();
    let report = report.join("\n");
    let wrote_file = leak.ran("analyze");
    assert_eq!(db.psql("SELECT count(*) FROM pets"), "1", "{report}");
    let after = sequence();
    assert!(
        !wrote_file && after == before,
        "nobody asked, yet a server file was written: {wrote_file}; the sequence moved from {before} to {after}:\n{report}"
    );
}

/// Found when written, now resisted. The `explain` tool without `analyze` plans the
/// statement with the ordinary judge, not the planning judge `query`'s
/// estimate uses: in read-write mode a database function the planner
/// folds (an `IMMUTABLE` one with constant arguments) runs, outside any
/// `READ ONLY` transaction, and whatever a rollback keeps stays (here a
/// server file; equally `nextval`, `dblink`, a signal to a backend).
/// Repro: `CREATE FUNCTION folded() RETURNS int IMMUTABLE LANGUAGE plpgsql
/// AS $$ BEGIN PERFORM leak('plan'); RETURN 1; END $$`; the model calls
/// `explain {"sql": "SELECT folded()"}`: the file exists. Safe: `explain`
/// under `confirm` judges what it plans with [`Judge::planning`] (as
/// `pg_proposal` does), or asks.
#[test]
fn explain_plans_no_function_that_may_write() {
    let db = pg::server().database();
    let leak = Leak::install(&db, "plan");
    db.psql(
        "CREATE FUNCTION folded() RETURNS int LANGUAGE plpgsql IMMUTABLE AS \
           $$ BEGIN PERFORM leak('plan'); RETURN 1; END $$",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [declined_call("explain", json!({"sql": "SELECT folded()"}))]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let ran = leak.ran("plan");
    assert!(!ran, "explain (no analyze) ran folded(): {}", how(&steps[0]));
}

/// Resisted (each route, when written). Before asking about a write,
/// pgmcp plans it for the estimate only when the planning judge finds no
/// function that may do more than read, by any route the planner folds:
/// an operator, a cast into a user's type, a domain's CHECK, a view over a
/// function, a column default and a generated column of the table
/// written. Each route leads to an `IMMUTABLE` function that writes a
/// server file; every statement is declined; no file may appear.
#[test]
fn the_estimate_folds_no_function_by_any_route() {
    let db = pg::server().database();
    let leak = Leak::install(&db, "route");
    let folded = |name: &str, args: &str, returns: &str, value: &str| {
        format!(
            "CREATE FUNCTION {name}({args}) RETURNS {returns} LANGUAGE plpgsql IMMUTABLE AS \
               $$ BEGIN PERFORM leak('{name}'); RETURN {value}; END $$; "
        )
    };
    let mut setup = String::from(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'), (2, 'tom'); \
         CREATE TYPE mood AS (v int); ",
    );
    setup += &folded("f_op", "a int, b int", "int", "1");
    setup += "CREATE OPERATOR ### (FUNCTION = f_op, LEFTARG = int, RIGHTARG = int); ";
    setup += &folded("f_cast", "a int", "mood", "ROW(1)::mood");
    setup += "CREATE CAST (int AS mood) WITH FUNCTION f_cast(int); ";
    setup += &folded("f_check", "a int", "bool", "true");
    setup += "CREATE DOMAIN checked AS int CHECK (f_check(VALUE)); ";
    setup += &folded("f_view", "", "int", "1");
    setup += "CREATE VIEW folded_ids AS SELECT f_view() AS id; ";
    setup += &folded("f_default", "", "int", "7");
    setup += "CREATE TABLE defaulted (id int DEFAULT f_default(), note text); ";
    setup += &folded("f_generated", "a int", "int", "a");
    setup += "CREATE TABLE generated (a int, b int GENERATED ALWAYS AS (f_generated(a)) STORED); ";
    db.psql(&setup);
    let attacks = [
        ("f_op", "UPDATE pets SET name = 'x' WHERE id = 1 ### 2"),
        ("f_cast", "UPDATE pets SET name = 'x' WHERE id = (1::mood).v"),
        ("f_check", "UPDATE pets SET name = 'x' WHERE id = 1::checked"),
        (
            "f_view",
            "UPDATE pets SET name = 'x' WHERE id IN (SELECT id FROM folded_ids)",
        ),
        ("f_default", "INSERT INTO defaulted (note) VALUES ('x')"),
        ("f_generated", "INSERT INTO generated (a) VALUES (1)"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": attacks.iter().map(|(_, sql)| declined(sql)).collect::<Vec<_>>()}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let mut leaked = Vec::new();
    for ((tag, sql), step) in attacks.iter().zip(&steps) {
        if leak.ran(tag) {
            leaked.push(format!("{sql} → {tag} ran before the answer ({})", how(step)));
        }
    }
    assert!(leaked.is_empty(), "{}", leaked.join("\n"));
    assert_eq!(
        db.psql("SELECT (SELECT string_agg(name, ',' ORDER BY id) FROM pets) || (SELECT count(*) FROM defaulted)"),
        "rex,tom0"
    );
}

/// Found when written, now resisted. The guard trusts the volatility of any function
/// an extension owns ("only a superuser puts functions there"), but
/// `ALTER EXTENSION e ADD FUNCTION f()` puts a database user's own
/// function into an extension: its owner needs only to own the extension
/// too, which a non-superuser does for a trusted extension it created
/// (PostgreSQL 13+). An `IMMUTABLE` plpgsql function made a member is then
/// "known to only read": `query`'s estimate folds it before the person
/// answers, and a plain `SELECT` of it runs unasked (in a `READ ONLY`
/// transaction, which a `COPY ... TO` file, a signal or a dblink call
/// survive). Repro: `CREATE FUNCTION f_member() ... IMMUTABLE AS $$ BEGIN
/// PERFORM leak('member'); RETURN 1; END $$; ALTER EXTENSION plpgsql ADD
/// FUNCTION f_member()`; the model sends `UPDATE pets SET name = 'x' WHERE
/// id = f_member()` (declined) or `SELECT f_read()`: the file exists.
/// The same trust holds in read-only mode (`server.read_only: true`, the
/// reading judge): `SELECT f_read()` of a `SECURITY DEFINER` member runs
/// and writes the file there too, so this is a read-only-mode bypass as
/// well, not only `confirm`'s.
/// Safe: trust an extension's function only when the extension's
/// functions are the ones its script created (e.g. owned by a superuser,
/// `pg_proc.proowner` a superuser role, and in the extension's schema, or
/// of a language other than SQL/plpgsql), else judge it as a user's.
#[test]
fn a_users_function_added_to_an_extension_is_not_trusted() {
    let db = pg::server().database();
    let leak = Leak::install(&db, "member");
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); INSERT INTO pets VALUES (1, 'rex'); \
         CREATE FUNCTION f_member() RETURNS int LANGUAGE plpgsql IMMUTABLE AS \
           $$ BEGIN PERFORM leak('member'); RETURN 1; END $$; \
         CREATE FUNCTION f_read() RETURNS int LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER AS \
           $$ BEGIN PERFORM leak('read'); RETURN 1; END $$; \
         ALTER EXTENSION plpgsql ADD FUNCTION f_member(); \
         ALTER EXTENSION plpgsql ADD FUNCTION f_read()",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let steps = confirm_session(
        json!({"steps": [
            declined("UPDATE pets SET name = 'x' WHERE id = f_member()"),
            declined("SELECT f_read()"),
        ]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let (estimate, read) = (leak.ran("member"), leak.ran("read"));
    // And in read-only mode (`server.read_only`), where nobody is asked.
    let read_only = write_config(dir.path(), json!({"server": {"read_only": true}}));
    let read_only_steps = confirm_session(
        json!({"steps": [declined("SELECT f_read()")]}),
        &read_only,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let read_only_read = leak.ran("read");
    assert_eq!(db.psql("SELECT name FROM pets"), "rex");
    assert!(
        !estimate && !read && !read_only_read,
        "the estimate ran f_member(): {estimate} ({}); SELECT f_read() ran unasked: {read} ({}); \
         and in read-only mode: {read_only_read} ({})",
        how(&steps[0]),
        how(&steps[1]),
        how(&read_only_steps[0])
    );
}

/// Whether a message still shows what should have been escaped or counted.
type Hides = Box<dyn Fn(&str) -> bool>;

/// Found when written, now resisted. `shown` escapes control characters and a list of
/// invisible and direction-changing ones, and counts blank lines split on
/// `\n`; but U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR (line
/// breaks to Unicode's line-breaking rules, and to a browser's text
/// layout) are shown raw, so 300 of them inside a comment push the part
/// that widens the statement out of the dialog exactly as 300 newlines
/// did before the first red team; a line of thousands of spaces does the
/// same in any dialog that wraps. Invisible characters outside the list
/// (soft hyphen U+00AD, tag characters U+E0000..U+E007F, combining
/// grapheme joiner U+034F, Hangul fillers U+115F/U+1160/U+3164/U+FFA0,
/// Mongolian vowel separator U+180E) are shown raw as well.
/// Repro: SQLite, `UPDATE t SET v = 'x' WHERE id = 1 /*` + 300 × U+2028 +
/// `*/ OR true`, declined: the message holds the 300 separators.
/// Safe: line and paragraph separators (and NEL, already escaped) are
/// escaped or counted like blank lines; runs of more than a few dozen
/// spaces or tabs are counted (`[3000 spaces]`); every `Cf` (format)
/// character and the Hangul fillers are escaped.
#[test]
fn the_message_hides_nothing_by_unicode_separators_spaces_or_invisibles() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');",
    );
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let widened = |padding: &str| format!("UPDATE t SET v = 'x' WHERE id = 1 /*{padding}*/ OR true");
    let cases: Vec<(&str, String, Hides)> = vec![
        (
            "300 line separators",
            widened(&"\u{2028}".repeat(300)),
            Box::new(|m: &str| m.contains("\u{2028}\u{2028}")),
        ),
        (
            "300 paragraph separators",
            widened(&"\u{2029}".repeat(300)),
            Box::new(|m: &str| m.contains("\u{2029}\u{2029}")),
        ),
        (
            "3000 spaces",
            widened(&" ".repeat(3000)),
            Box::new(|m: &str| m.contains(&" ".repeat(200))),
        ),
        (
            "tabs",
            widened(&"\t".repeat(500)),
            Box::new(|m: &str| m.contains(&"\t".repeat(50))),
        ),
        (
            "invisible characters",
            widened("\u{00AD}\u{E0041}\u{E0042}\u{034F}\u{115F}\u{3164}\u{FFA0}\u{180E}"),
            Box::new(|m: &str| {
                m.chars().any(|c| {
                    matches!(
                        c,
                        '\u{00AD}' | '\u{E0000}'
                            ..='\u{E007F}' | '\u{034F}' | '\u{115F}' | '\u{3164}' | '\u{FFA0}' | '\u{180E}'
                    )
                })
            }),
        ),
    ];
    let steps = confirm_session(
        json!({"steps": cases.iter().map(|(_, sql, _)| declined(sql)).collect::<Vec<_>>()}),
        &config,
        Some(&url),
        &[],
    );
    let mut hiding = Vec::new();
    for ((what, _, hides), step) in cases.iter().zip(&steps) {
        let message = shown(step);
        assert!(!message.is_empty(), "{what}: not asked: {step}");
        if hides(&message) {
            hiding.push(*what);
        }
    }
    assert_eq!(sqlite_text(&file, "SELECT group_concat(v, ',') FROM t"), "one,two");
    assert!(hiding.is_empty(), "shown raw in the message: {hiding:?}");
}

/// Found when written (a limitation of showing text), now resisted. Look-alike letters
/// read as the ones they imitate: `DELETE FROM t WHERE v <> 'оne'` with a
/// Cyrillic `о` reads "delete every row but one" and deletes every row,
/// `one` included. The message shows the statement as sent, with nothing
/// that marks the Cyrillic letter. Safe: a word that mixes scripts (Latin
/// with Cyrillic or Greek) is marked, or its non-Latin letters written as
/// `\u{...}`, in the statement and in the table names.
#[test]
fn the_message_marks_look_alike_letters() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');",
    );
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let steps = confirm_session(
        json!({"steps": [declined("DELETE FROM t WHERE v <> '\u{043E}ne'")]}),
        &config,
        Some(&url),
        &[],
    );
    let message = shown(&steps[0]);
    assert!(!message.is_empty(), "{}", steps[0]);
    assert_eq!(sqlite_text(&file, "SELECT group_concat(v, ',') FROM t"), "one,two");
    assert!(
        !message.contains("'\u{043E}ne'"),
        "the Cyrillic о reads as a Latin o: {message}"
    );
}

/// Resisted. SQLite: a view's `INSTEAD OF` trigger and a table's trigger
/// change tables the statement does not name; the person is told them
/// (the authorizer reports the trigger's actions), and, declined, nothing
/// changes.
#[test]
fn sqlite_triggers_do_not_hide_the_tables_they_change() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two'); \
         CREATE TABLE audit (id INTEGER, v TEXT); INSERT INTO audit VALUES (1, 'kept'); \
         CREATE TABLE secrets (s TEXT); INSERT INTO secrets VALUES ('kept'); \
         CREATE VIEW tv AS SELECT id, v FROM t; \
         CREATE TRIGGER tv_wipe INSTEAD OF UPDATE ON tv BEGIN DELETE FROM secrets; END; \
         CREATE TRIGGER t_note AFTER UPDATE ON t BEGIN DELETE FROM audit; END;",
    );
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let steps = confirm_session(
        json!({"steps": [
            declined("UPDATE tv SET v = 'x' WHERE id = 1"),
            declined("UPDATE t SET v = 'x' WHERE id = 1"),
        ]}),
        &config,
        Some(&url),
        &[],
    );
    let tables = |step: &Value| {
        shown(step)
            .lines()
            .find(|l| l.starts_with("Tables it changes"))
            .unwrap_or_default()
            .to_owned()
    };
    let (view, table) = (tables(&steps[0]), tables(&steps[1]));
    assert!(view.contains("secrets"), "{view}: {}", steps[0]);
    assert!(table.contains("audit"), "{table}: {}", steps[1]);
    assert_eq!(
        sqlite_text(
            &file,
            "SELECT (SELECT group_concat(v, ',') FROM t) || (SELECT count(*) FROM audit) || (SELECT count(*) FROM secrets)"
        ),
        "one,two11"
    );
}

/// Resisted. Declining `EXECUTE p` must not run what `p` plans: the
/// estimate's `EXPLAIN EXECUTE p` would plan the prepared statement's body,
/// which the guard judged when it was prepared (with the ordinary judge:
/// the person accepted a `PREPARE`, which runs nothing), not with the
/// planning judge. Here `p`'s body calls an `IMMUTABLE` function the
/// planner folds. It holds because a prepared statement does not outlive
/// its call (the pool's connection is reset): `EXECUTE p` finds no `p`.
/// (`EXECUTE` itself is judged as reading and runs unasked in a `READ
/// ONLY` transaction; were prepared statements kept, the estimate gap
/// would open.)
#[test]
fn declining_execute_runs_nothing_a_prepared_statement_plans() {
    let db = pg::server().database();
    let leak = Leak::install(&db, "prepared");
    db.psql(
        "CREATE FUNCTION folded() RETURNS int LANGUAGE plpgsql IMMUTABLE AS \
           $$ BEGIN PERFORM leak('prepared'); RETURN 1; END $$",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        json!({"server": {"read_only": false}, "protection": {"allow_prepare": true}}),
    );
    let steps = confirm_session(
        json!({"steps": [
            {"name": "query", "arguments": {"sql": "PREPARE p AS SELECT folded()"}, "answer": "accept"},
            declined("EXECUTE p"),
            declined("EXPLAIN EXECUTE p"),
        ]}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    let report: Vec<String> = steps.iter().map(how).collect();
    let ran = leak.ran("prepared");
    assert!(
        !ran,
        "folded() ran though the person accepted only PREPARE: {report:#?}"
    );
}

/// Found when written (a denial of service, never a write), now resisted. Over HTTP the
/// 2026-07-28 confirmations waiting for a retry are one map for the whole
/// server, whatever the bearer token (`door/http`: one `Pending` shared by
/// every session), capped at 64 by evicting the oldest, a cap its comment
/// calls one session's. So one token holder's model, calling 64 writes
/// (each answered `input_required`), evicts the confirmation another
/// token holder's person is reading: their acceptance then finds nothing
/// ("not one pgmcp is waiting for") and their statement does not run.
/// Repro: tokens `alice`, `bob`; alice's `DELETE FROM pets WHERE id = 1`
/// is asked (state S); bob sends 64 writes; alice retries with S and
/// accept: refused, `pets` unchanged. Safe: the cap counts per token (or
/// per session), so one caller cannot evict another's confirmations.
#[test]
fn one_token_cannot_evict_anothers_waiting_confirmation() {
    use crate::support::http::{ACCEPT, JSON, rpc, send, start_with};
    let db = pg::server().database();
    db.psql("CREATE TABLE pets (id int PRIMARY KEY, name text); INSERT INTO pets VALUES (1, 'rex'), (2, 'tom')");
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "alice-0123456789\nbob-0123456789\n").unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], |config| {
        config.replacen(
            r#""server": {"#,
            &format!(r#""server": {{"auth_tokens_file": {:?}, "#, tokens.to_str().unwrap()),
            1,
        )
    });
    let call = |token: &str, sql: &str, retry: Option<(&str, Value)>| -> Value {
        let auth = format!("Bearer {token}");
        let headers = [
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "query"),
            ("Authorization", auth.as_str()),
        ];
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "pgmcp-it", "version": "0.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        });
        let mut params = json!({"_meta": meta, "name": "query", "arguments": {"sql": sql}});
        if let Some((state, answer)) = retry {
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"confirm": answer});
        }
        let reply = send(port, "POST", "/mcp", &headers, &rpc(1, "tools/call", params));
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.message()["result"].clone()
    };
    let asked = call("alice-0123456789", "DELETE FROM pets WHERE id = 1", None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_owned();
    for i in 0..64 {
        let flood = call(
            "bob-0123456789",
            &format!("DELETE FROM pets WHERE id = {}", 100 + i),
            None,
        );
        assert_eq!(flood["resultType"], "input_required", "{flood}");
    }
    let accepted = call(
        "alice-0123456789",
        "DELETE FROM pets WHERE id = 1",
        Some((&state, json!({"action": "accept", "content": {}}))),
    );
    mcp.kill();
    assert_eq!(
        db.psql("SELECT string_agg(id::text, ',' ORDER BY id) FROM pets"),
        "2",
        "alice's accepted statement did not run after bob's 64 calls: {accepted}"
    );
}

/// Found when written, now resisted. The statement and the table names pass through
/// `shown` (invisible and direction-changing characters written as
/// `\u{...}`), but the parameters are printed as JSON (`$1 = "..."`), which
/// escapes only control characters: a string value holding a right-to-left
/// override (U+202E) reverses how the rest of the line reads, a zero-width
/// space makes `"admin\u{200B}"` read as `"admin"`, and line separators
/// (U+2028) push the next parameters out of sight. Repro: SQLite, `UPDATE
/// t SET v = ? WHERE id <= ?` with params `["ok\u{202E}", 1000]`: the
/// parameters line holds the raw U+202E, so `, ?2 = 1000` displays
/// reversed. Safe: each parameter's text is passed through `shown` too.
#[test]
fn the_parameters_hide_nothing_either() {
    let dir = tempfile::tempdir().unwrap();
    let file = sqlite_file(
        dir.path(),
        "shop.db",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');",
    );
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let url = format!("sqlite:{}", file.display());
    let sql = "UPDATE t SET v = ? WHERE id <= ?";
    let cases = [
        json!(["ok\u{202E}", 1000]),
        json!(["admin\u{200B}", 1]),
        json!([format!("ok{}", "\u{2028}".repeat(100)), 1000]),
    ];
    let steps = confirm_session(
        json!({"steps": cases.iter().map(|params| declined_call("query", json!({"sql": sql, "params": params}))).collect::<Vec<_>>()}),
        &config,
        Some(&url),
        &[],
    );
    let mut raw = Vec::new();
    for (params, step) in cases.iter().zip(&steps) {
        let message = shown(step);
        assert!(!message.is_empty(), "{params}: not asked: {step}");
        let line = message
            .lines()
            .find(|l| l.starts_with("Parameters:"))
            .unwrap_or_default();
        if line.contains(['\u{202E}', '\u{200B}', '\u{2028}']) {
            raw.push(format!("{line:?}"));
        }
    }
    assert_eq!(sqlite_text(&file, "SELECT group_concat(v, ',') FROM t"), "one,two");
    assert!(raw.is_empty(), "parameters shown raw:\n{}", raw.join("\n"));
}

/// Found when written (the estimate can be steered); now said to be a
/// guess. The row count the
/// person reads is the planner's guess, and the model writes the `WHERE`
/// the planner guesses from: `id + 0 = id` is true for every row, but the
/// planner, with no statistics for an expression compared with a column,
/// takes its default equality selectivity (0.5%), so `DELETE FROM pets
/// WHERE id + 0 = id` on 1000 rows reads "Estimated rows: about 5" and
/// deletes 1000. (`name = name` and `id::text = id::text` are seen
/// through: about 1000.)
/// Repro: 1000 rows, analyzed; decline; read the message. Safe: the
/// message does not present a guess the statement can steer as the rows it
/// touches: for `UPDATE`/`DELETE` count them (`SELECT count(*) FROM t
/// WHERE ...` under the reading judge, in the read-only transaction, when
/// that judge passes), or say plainly that the planner's guess can be far
/// off and show the table's row count beside it.
#[test]
fn the_estimate_is_not_steered_far_below_the_rows_a_write_touches() {
    let db = pg::server().database();
    db.psql(
        "CREATE TABLE pets (id int PRIMARY KEY, name text NOT NULL); \
         INSERT INTO pets SELECT i, 'pet ' || i FROM generate_series(1, 1000) i; ANALYZE pets",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), json!({"server": {"read_only": false}}));
    let attacks = [
        "DELETE FROM pets WHERE id + 0 = id",
        "UPDATE pets SET name = 'x' WHERE name || '' = name",
        "DELETE FROM pets WHERE coalesce(id, 0) = coalesce(id, 1)",
    ];
    let steps = confirm_session(
        json!({"steps": attacks.iter().map(|sql| declined(sql)).collect::<Vec<_>>()}),
        &config,
        None,
        &[("PGMCP_PG_CONNSTRING", &db.url)],
    );
    assert_eq!(db.psql("SELECT count(*) FROM pets WHERE name <> 'x'"), "1000");
    let mut steered = Vec::new();
    for (sql, step) in attacks.iter().zip(&steps) {
        let message = shown(step);
        assert!(!message.is_empty(), "{sql}: {step}");
        let estimate: Option<u64> = message
            .lines()
            .find_map(|l| l.strip_prefix("Estimated rows: about "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok());
        // The guess may be steered; the person must be told it is one.
        let said = message.contains("planner guess, not a count: it can be far off");
        if estimate.is_some_and(|rows| rows < 100) && !said {
            steered.push(format!("{sql} → about {estimate:?} of 1000, not said to be a guess"));
        }
    }
    assert!(
        steered.is_empty(),
        "the person reads far fewer rows than run:\n{}",
        steered.join("\n")
    );
}
