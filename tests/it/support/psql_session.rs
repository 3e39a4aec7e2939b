//! A psql session a test keeps open and feeds a line at a time: a
//! transaction holding a lock, a session waiting for one, an idle one.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};

use crate::support::pg;

/// An open psql session on a test database, as its admin user, in
/// unaligned tuples-only output; killed when dropped.
pub struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    pub fn open(db: &pg::TestDb) -> Session {
        let mut child = db.psql_session().arg("-At").spawn().expect("psql starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Session { child, stdin, stdout }
    }

    /// Send `sql`; with `mark`, wait until psql has run it, and return the
    /// lines it printed.
    pub fn send(&mut self, sql: &str, mark: Option<&str>) -> Vec<String> {
        let marker = mark.map(|m| format!("SELECT '{m}';\n")).unwrap_or_default();
        self.stdin
            .write_all(format!("{sql}\n{marker}").as_bytes())
            .expect("psql reads");
        let mut lines = Vec::new();
        if let Some(mark) = mark {
            loop {
                let mut line = String::new();
                assert!(
                    self.stdout.read_line(&mut line).expect("psql answers") > 0,
                    "psql ended"
                );
                if line.trim() == mark {
                    break;
                }
                lines.push(line.trim().to_owned());
            }
        }
        lines
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
