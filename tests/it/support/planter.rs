//! A second, unprivileged database user who plants objects, and a session
//! LISTENing for what they send out: the setup of the attack suites on what
//! PostgreSQL runs on a statement's behalf (`reach_types`).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};

use super::pg::TestDb;

/// A session LISTENing on the channel the planted functions notify.
pub struct Listener {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Listener {
    pub fn start(db: &TestDb) -> Listener {
        let mut child = db.psql_session().spawn().expect("psql starts");
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        stdin
            .write_all(b"LISTEN leak;\nSELECT 'listening';\n")
            .expect("psql reads");
        let mut line = String::new();
        while line.trim() != "listening" {
            line.clear();
            assert!(stdout.read_line(&mut line).expect("psql answers") > 0, "psql ended");
        }
        Listener { child, stdin, stdout }
    }

    /// Everything the session heard: psql prints each notification it
    /// received as its next command runs.
    pub fn heard(mut self) -> String {
        self.stdin.write_all(b"SELECT 'end';\n").expect("psql reads");
        drop(self.stdin);
        let mut out = String::new();
        self.stdout.read_to_string(&mut out).expect("psql's output");
        let _ = self.child.wait();
        out
    }

    /// [`Listener::heard`], after a control notification sent now (so an
    /// empty answer is not a deaf listener).
    pub fn heard_checked(self, db: &TestDb) -> String {
        db.psql("NOTIFY leak, 'control'");
        let out = self.heard();
        assert!(out.contains("control"), "the listener hears: {out}");
        out
    }
}

/// The planting user's role name: roles are the cluster's, databases the
/// test's.
pub fn planter(db: &TestDb) -> String {
    format!("planter_{}", db.name)
}

/// The agent's secret, an unrelated table, and as the planting user
/// `public.leak(text)` (STABLE, sends the secret to channel `leak` tagged
/// with its argument; the planting user cannot read it: the function
/// swallows that) and `public.leak_imm(text)` (the same, declared IMMUTABLE
/// so the planner folds a call with a constant argument).
pub fn plant_leak(db: &TestDb) {
    let planter = planter(db);
    db.psql(&format!(
        "CREATE TABLE public.secret (s text); INSERT INTO public.secret VALUES ('the-secret');
         CREATE TABLE public.plain (id int, note text); INSERT INTO public.plain VALUES (1, 'a'), (2, 'b');
         CREATE ROLE {planter} LOGIN; GRANT CREATE ON SCHEMA public TO {planter};
         GRANT CREATE ON DATABASE {db} TO {planter};
         SET ROLE {planter};
         CREATE FUNCTION public.leak(text) RETURNS bool LANGUAGE plpgsql STABLE AS $$
         BEGIN
             BEGIN
                 PERFORM pg_catalog.pg_notify('leak', (SELECT pg_catalog.string_agg(s, ',') FROM public.secret) || ' via ' || $1);
             EXCEPTION WHEN insufficient_privilege THEN NULL;
             END;
             RETURN true;
         END $$;
         CREATE FUNCTION public.leak_imm(text) RETURNS text LANGUAGE plpgsql IMMUTABLE
             AS $$ BEGIN PERFORM public.leak($1); RETURN ''; END $$;",
        db = db.name
    ))
;
}

/// As the planting user (every object is theirs, none a superuser's).
pub fn as_planter(db: &TestDb, sql: &str) {
    db.psql(&format!("SET ROLE {}; {sql}", planter(db)));
}
