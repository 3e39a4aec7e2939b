//! For tests that hunt for a way through: every case is tried, and the test
//! fails once, listing every case that got through, so one run shows the
//! whole picture.

use pgmcp::{Error, QueryOutput};

/// Every case of a table-driven test, and what went wrong in each.
#[derive(Default)]
pub struct Findings {
    cases: usize,
    failed: Vec<String>,
}

impl Findings {
    /// Record one case; it passed if it has no problems.
    pub fn case(&mut self, name: &str, problems: impl IntoIterator<Item = String>) {
        self.cases += 1;
        let problems: Vec<String> = problems.into_iter().collect();
        if !problems.is_empty() {
            self.failed.push(format!("{name}\n  {}", problems.join("\n  ")));
        }
    }

    pub fn assert_none(&self, what: &str) {
        assert!(
            self.failed.is_empty(),
            "{} of {} {what}:\n\n{}\n",
            self.failed.len(),
            self.cases,
            self.failed.join("\n\n")
        );
    }
}

/// What a call ended in, for failure messages.
pub fn verdict(result: &Result<QueryOutput, Error>) -> String {
    match result {
        Ok(out) => format!(
            "it ran and returned {}",
            serde_json::to_string(&out.rows).unwrap_or_default()
        ),
        Err(Error::Guard(v)) => format!("refused by guard rule `{}`: {}", v.rule.name(), v.message),
        Err(Error::Db(e)) => format!("refused by PostgreSQL with {}: {}", e.code(), e.message),
        Err(e) => format!("failed: {e}"),
    }
}
