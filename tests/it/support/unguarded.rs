//! A statement run on a PostgreSQL backend directly, as a query would run
//! but with no guard in front: what the tests that prove the layers under
//! the guard (the reader role, read-only transactions) hold on their own use.

use std::time::{Duration, Instant};

use pgmcp::testing::postgres::PgBackend;
use pgmcp::testing::statement::{Deadline, ReadBudget, Statement, encode, shaped};
use pgmcp::{Error, QueryOutput};
use tokio_util::sync::CancellationToken;

/// Run `sql` on `backend` as a query would run, without the guard.
pub async fn exec_unguarded(backend: &PgBackend, sql: &str) -> Result<QueryOutput, Error> {
    let deadline = Deadline {
        at: Instant::now() + Duration::from_secs(10),
        timeout: Duration::from_secs(10),
        cancel: CancellationToken::new(),
    };
    let stmt = Statement {
        database: None,
        sql,
        params: &[],
        fetch_limit: 10,
        budget: ReadBudget::for_answer(100_000),
        rollback: false,
        prelude: &[],
        epilogue: &[],
    };
    // No catalog version: nothing was judged.
    backend.execute(stmt, None, &deadline).await.map(|rows| {
        let answer = encode(shaped(rows, 10), usize::MAX);
        answer.output().expect("an encoded answer reads back")
    })
}
