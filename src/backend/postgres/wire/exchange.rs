//! [`Exchange`]: one round trip in the extended protocol. The setup
//! statements, pgmcp's prepared ones and the main statement are written at
//! once, and the replies read in order into a [`StatementResult`]: the main
//! statement's columns, its rows (within the budget), its command tag, and
//! the first error with whether a setup statement raised it. Apart from the
//! rows' reading (`rows.rs`, `copy_out.rs`), which the exchange drives.

use bytes::Buf;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::copy_out::{COPY_COLUMN, CopyOut};
use super::error_response::db_error;
use super::rows::{CutValue, WireColumn, WireRow, split_row, split_row_within};
use super::{Connection, WireError};
use crate::error::DbError;
use crate::pipeline::budget::{self, ReadBudget};

/// What one statement sent back.
#[derive(Debug, Default)]
pub struct StatementResult {
    /// Empty when the statement returns no rows (`NoData`).
    pub columns: Vec<WireColumn>,
    pub rows: Vec<WireRow>,
    /// The command tag, e.g. `SELECT 3` or `INSERT 0 2`; `None` when the portal
    /// was suspended at the row limit or the query string was empty.
    pub command_tag: Option<String>,
    /// True when `Execute` stopped at its row limit with rows possibly left.
    pub suspended: bool,
    /// Values cut at read by the exchange's budget.
    pub cuts: Vec<CutValue>,
    /// Rows the server sent after the budget was spent, read and dropped.
    pub skipped: usize,
    /// The first value of the first row each of the exchange's
    /// [`Prepared`] statements returned, as text, in their order.
    pub prepared_answers: Vec<Option<String>>,
}

/// One round trip: some setup statements and one main statement, all in one
/// transaction, then commit and a session reset.
pub struct Exchange<'a> {
    /// Statements run before the main one in the same transaction, e.g.
    /// `BEGIN READ ONLY` and `SET LOCAL statement_timeout = ...`. They go through
    /// the extended protocol too, so if one fails the server skips the main
    /// statement instead of running it outside the transaction.
    pub setup: &'a [&'a str],
    pub sql: &'a str,
    /// Parameters in text form; `None` is NULL. Types are left for the server to infer.
    pub params: &'a [Option<String>],
    /// Most rows to read; 0 means no limit.
    pub max_rows: u32,
    /// How much of the main statement's values to hold; `None` for pgmcp's
    /// own statements, whose results are small by construction.
    pub budget: Option<ReadBudget>,
    /// Simple-protocol statements after the transaction, e.g. `COMMIT`. Each is
    /// sent as its own message, and the call waits for their replies.
    pub finish: &'a [&'a str],
    /// Simple-protocol statements sent in the same write whose replies are not
    /// waited for: they are read before the connection's next exchange. Used
    /// for `DISCARD ALL`, so resetting the session adds no latency to the call.
    pub deferred: &'a [&'a str],
    /// Statements kept prepared on the connection and run in order after
    /// the setup, before the main statement (those [`Prepared::after_parse`]
    /// between its `Parse` and its `Bind`): parsed and planned once per
    /// connection, then only bound and executed.
    pub prepared: &'a [Prepared<'a>],
}

impl<'a> Exchange<'a> {
    /// One statement of pgmcp's own, alone: no setup, no transaction, at
    /// most `max_rows` rows (a probe such as `pg_backend_pid()`).
    pub fn alone(sql: &'a str, max_rows: u32) -> Exchange<'a> {
        Exchange {
            setup: &[],
            sql,
            params: &[],
            max_rows,
            budget: None,
            finish: &[],
            deferred: &[],
            prepared: &[],
        }
    }
}

/// A statement of pgmcp's own, prepared once per connection under its name.
#[derive(Clone, Copy)]
pub struct Prepared<'a> {
    /// `""`: sent unnamed, parsed at every exchange.
    pub name: &'static str,
    pub sql: &'a str,
    pub params: &'a [Option<String>],
    /// Run after the main statement is parsed (its names resolved) and
    /// before it is bound (planned): a check that the catalog its names
    /// resolved in is the one the caller judged it with. Such statements
    /// come after all the others in [`Exchange::prepared`], and only in an
    /// exchange whose setup opens a transaction.
    pub after_parse: bool,
    /// Its error is a signal of pgmcp's session machinery (a moved catalog,
    /// a missing prepared statement, a role it may not switch to), read as
    /// a setup failure; else (a statement the call asked pgmcp to run, such
    /// as hypopg's) the call's own error, like the main statement's.
    pub signals: bool,
}

/// The names the main statement and its portal go under when checks run
/// between its `Parse` and its `Bind`: named, so that the checks (unnamed
/// behind a pooler) do not replace them; closed in the same write, so
/// nothing outlives the exchange.
const MAIN_STATEMENT: &str = "pgmcp_statement";
const MAIN_PORTAL: &str = "pgmcp_portal";

impl Connection {
    /// Run one [`Exchange`]: everything is written at once and the replies read
    /// in order. The first server error is returned after the whole exchange has
    /// been read, so the connection is left ready for the next one.
    pub async fn exchange(&mut self, ex: &Exchange<'_>) -> Result<StatementResult, WireError> {
        self.in_flight = true;
        self.read_deferred().await?;
        if self.forget_prepared {
            if !self.pooled {
                frontend::query("DEALLOCATE ALL", &mut self.write_buf)?;
                self.flush().await?;
                self.deferred_replies = 1;
                self.read_deferred().await?;
            }
            self.prepared.clear();
            self.forget_prepared = false;
        }
        for sql in ex.setup {
            self.push_statement(sql)?;
        }
        // Whether this exchange parses a named statement of pgmcp's: if it
        // fails, whether the statement now exists is unknown.
        let mut parsed = false;
        // The main statement is parsed before the checks and bound after
        // them: its names resolve in a catalog committed no later than the
        // one the checks read, and the planner (which may run functions it
        // folds to constants) runs only after they passed. ARCHITECTURE.md,
        // "What remains between the check and the statement".
        let (checks, before): (Vec<&Prepared<'_>>, Vec<&Prepared<'_>>) =
            ex.prepared.iter().partition(|p| p.after_parse);
        // The prepared statements in the order they run.
        let order: Vec<&Prepared<'_>> = before.iter().chain(&checks).copied().collect();
        let mut main_parsed_at = None;
        for (i, prepared) in order.iter().enumerate() {
            if i == before.len() {
                main_parsed_at = Some(ex.setup.len() + i);
                self.push_parse(MAIN_STATEMENT, ex.sql, ex.params)?;
            }
            let unnamed = prepared.name.is_empty();
            let parse = unnamed || !self.prepared.contains(&prepared.name);
            if parse {
                frontend::parse(
                    prepared.name,
                    prepared.sql,
                    prepared.params.iter().map(|_| 0u32),
                    &mut self.write_buf,
                )?;
                if !unnamed {
                    self.prepared.push(prepared.name);
                    parsed = true;
                }
            }
            self.push_bound(prepared.name, prepared.params)?;
        }
        // Without checks, unnamed, as pgmcp's own statements are: an
        // exchange outside a transaction may reach another server connection
        // after its Sync, behind a pooler, and could not close it there.
        let (statement, portal) = match main_parsed_at {
            Some(_) => (MAIN_STATEMENT, MAIN_PORTAL),
            None => ("", ""),
        };
        let main_parsed_at = match main_parsed_at {
            Some(at) => at,
            None => {
                self.push_parse("", ex.sql, ex.params)?;
                ex.setup.len() + ex.prepared.len()
            }
        };
        self.push_bind(portal, statement, ex.params)?;
        frontend::describe(b'P', portal, &mut self.write_buf)?;
        frontend::execute(
            portal,
            i32::try_from(ex.max_rows).unwrap_or(i32::MAX),
            &mut self.write_buf,
        )?;
        frontend::sync(&mut self.write_buf);
        let mut ready_left = 1 + ex.finish.len();
        if !statement.is_empty() {
            // After the Sync, so that it runs even when an error made the
            // server skip to it, and still in the exchange's transaction
            // (the checks run in one), so on the same server connection;
            // not an error when the statement was never made. The portal
            // ends with the transaction. Its own Sync, so its reply is read
            // here.
            frontend::close(b'S', statement, &mut self.write_buf)?;
            frontend::sync(&mut self.write_buf);
            ready_left += 1;
        }
        for sql in ex.finish.iter().chain(ex.deferred) {
            frontend::query(sql, &mut self.write_buf)?;
        }
        self.flush().await?;

        let mut result = StatementResult::default();
        // The first error, and whether it came from a setup statement.
        let mut first_error: Option<(DbError, bool)> = None;
        // The setup statements complete first; the main statement is the next.
        let mut completed = 0usize;
        let main = ex.setup.len() + ex.prepared.len();
        // Whether the main statement's Parse has been answered.
        let mut main_parsed = false;
        let mut budget = ex.budget;
        // What each row costs beyond its values: a key per column.
        let mut row_cost = 0;
        // The main statement is a COPY ... TO STDOUT: its lines are rows.
        let mut copy: Option<CopyOut> = None;
        while ready_left > 0 {
            // A long data row of the main statement is read field by field.
            if completed == main && budget.is_some() {
                // Every message has a five-byte header: look at it first.
                self.fill(5).await?;
            }
            // A long COPY line likewise, read as far as the budget allows.
            if completed == main
                && let Some(out) = copy
                && let Some(budget) = budget.as_mut()
                && let Some(len) = self.long_copy_line()
            {
                let wanted = result.rows.len() < out.max_rows;
                let keep = wanted && !budget.spent();
                if wanted {
                    budget.charge(row_cost);
                }
                self.read_buf.advance(5);
                let taken = if keep { budget.take(len) } else { 0 };
                self.fill(taken).await?;
                let head = self.read_buf.split_to(taken).freeze();
                self.discard(len - taken).await?;
                if keep {
                    let line = out.line(head, len, result.rows.len(), &mut result.cuts);
                    result.rows.push(vec![Some(line)]);
                } else if wanted {
                    result.skipped += 1;
                }
                continue;
            }
            if completed == main
                && let Some(budget) = budget.as_mut()
                && let Some(len) = self.long_data_row()
            {
                let dropped = budget.spent();
                budget.charge(row_cost);
                let row = self
                    .read_long_row(len, budget, dropped, result.rows.len(), &mut result.cuts)
                    .await?;
                if dropped {
                    result.skipped += 1;
                } else {
                    result.rows.push(row);
                }
                continue;
            }
            match self.read_message().await? {
                Message::ParseComplete => {
                    if completed == main_parsed_at {
                        main_parsed = true;
                    }
                }
                Message::BindComplete | Message::CloseComplete => {}
                Message::ParameterStatus(_) | Message::NoticeResponse(_) | Message::NotificationResponse(_) => {}
                Message::NoData => {}
                // Only the main statement's columns: pgmcp's own statements
                // that return rows (the session reset sent after `COMMIT`
                // behind a pooler) answer with columns of their own, which
                // are no part of the caller's answer.
                Message::RowDescription(body) if completed == main => {
                    let mut fields = body.fields();
                    while let Some(f) = fields.next()? {
                        row_cost += budget::column_cost(f.name());
                        result.columns.push(WireColumn {
                            name: f.name().to_owned(),
                            type_oid: f.type_oid(),
                            type_modifier: f.type_modifier(),
                            table_oid: f.table_oid(),
                            column_id: f.column_id(),
                        });
                    }
                }
                Message::RowDescription(_) => {}
                Message::DataRow(body) => {
                    // The prepared statements complete in their order,
                    // after the setup and before the main statement.
                    if let Some(at) = completed
                        .checked_sub(ex.setup.len())
                        .filter(|at| *at < ex.prepared.len())
                        && result.prepared_answers.len() <= at
                    {
                        result.prepared_answers.resize(at, None);
                        let first = split_row(&body)?.into_iter().next().flatten();
                        result
                            .prepared_answers
                            .push(first.map(|v| String::from_utf8_lossy(&v).into_owned()));
                    }
                    if completed == main {
                        match budget.as_mut() {
                            Some(budget) if budget.spent() => result.skipped += 1,
                            Some(budget) => {
                                budget.charge(row_cost);
                                let row = split_row_within(&body, budget, result.rows.len(), &mut result.cuts)?;
                                result.rows.push(row);
                            }
                            None => result.rows.push(split_row(&body)?),
                        }
                    }
                }
                Message::CommandComplete(body) => {
                    if completed == main {
                        result.command_tag = Some(body.tag()?.to_owned());
                    }
                    completed += 1;
                }
                Message::PortalSuspended => {
                    if completed == main {
                        result.suspended = true;
                    }
                    completed += 1;
                }
                Message::EmptyQueryResponse => completed += 1,
                Message::ErrorResponse(body) => {
                    let err = db_error(&body)?;
                    // After an error the server skips to the Sync, so the
                    // statement that failed is the one not yet completed:
                    // the main one's Parse comes after the first
                    // `main_parsed_at` statements, its Bind after all.
                    let signals = completed
                        .checked_sub(ex.setup.len())
                        .and_then(|i| order.get(i))
                        .is_none_or(|p| p.signals);
                    let setup = completed < main && (completed != main_parsed_at || main_parsed) && signals;
                    first_error.get_or_insert((err, setup));
                }
                // COPY ... TO STDOUT: PostgreSQL sends each row as one
                // CopyData line. The main statement's lines become rows of
                // one text column, held within the row cap and the budget
                // as data rows are; any other statement's are drained.
                Message::CopyOutResponse(body) => {
                    if completed == main {
                        let out = CopyOut {
                            binary: body.format() != 0,
                            max_rows: match ex.max_rows {
                                0 => usize::MAX,
                                n => usize::try_from(n).unwrap_or(usize::MAX),
                            },
                        };
                        row_cost += budget::column_cost(COPY_COLUMN);
                        result.columns = vec![out.column()];
                        copy = Some(out);
                    }
                }
                Message::CopyData(body) => {
                    if completed == main
                        && let Some(out) = copy
                    {
                        let line = body.into_bytes();
                        let len = line.len();
                        match budget.as_mut() {
                            // One line past the cap (it is the caller's
                            // cap plus one) already says more exist.
                            _ if result.rows.len() >= out.max_rows => {}
                            Some(budget) if budget.spent() => result.skipped += 1,
                            Some(budget) => {
                                budget.charge(row_cost);
                                let taken = budget.take(len);
                                let line = out.line(line.slice(..taken), len, result.rows.len(), &mut result.cuts);
                                result.rows.push(vec![Some(line)]);
                            }
                            None => {
                                let line = out.line(line, len, result.rows.len(), &mut result.cuts);
                                result.rows.push(vec![Some(line)]);
                            }
                        }
                    }
                }
                Message::CopyDone => {}
                Message::CopyInResponse(_) => {
                    // The server now waits for data we will never send, and our
                    // pipelined messages would be read as protocol violations.
                    // Leave `in_flight` set so the connection is discarded.
                    return Err(WireError::Protocol(
                        "COPY FROM STDIN needs a data stream, which pgmcp does not have".into(),
                    ));
                }
                Message::ReadyForQuery(_) => ready_left -= 1,
                _ => {
                    return Err(WireError::Protocol("unexpected message during query".into()));
                }
            }
        }
        self.deferred_replies = ex.deferred.len();
        self.in_flight = false;
        // The caller's own prepared statements do not outlive its call; a
        // `DEALLOCATE` of the caller's may have taken pgmcp's with it, so
        // they are prepared again rather than found missing.
        let tag = result.command_tag.as_deref().unwrap_or_default();
        if (parsed && first_error.is_some()) || tag == "PREPARE" || tag.starts_with("DEALLOCATE") {
            self.forget_prepared = true;
        }
        match first_error {
            Some((err, true)) => Err(WireError::Setup(Box::new(err))),
            Some((err, false)) => Err(err.into()),
            None => Ok(result),
        }
    }

    /// Read the replies of the previous exchange's deferred statements. They
    /// reset the session, so any error there means the connection is not fit
    /// for reuse.
    pub async fn read_deferred(&mut self) -> Result<(), WireError> {
        while self.deferred_replies > 0 {
            match self.read_message().await? {
                Message::ReadyForQuery(_) => self.deferred_replies -= 1,
                Message::ErrorResponse(body) => {
                    let err = db_error(&body)?;
                    return Err(WireError::Protocol(format!("resetting the session failed: {err}")));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn push_statement(&mut self, sql: &str) -> Result<(), WireError> {
        self.push_parse("", sql, &[])?;
        self.push_bound("", &[])
    }

    fn push_parse(&mut self, name: &str, sql: &str, params: &[Option<String>]) -> Result<(), WireError> {
        // Type OID 0 everywhere: the server infers each parameter's type from context.
        frontend::parse(name, sql, params.iter().map(|_| 0u32), &mut self.write_buf)?;
        Ok(())
    }

    /// Bind the statement `name` (`""`: the one just parsed) to the unnamed
    /// portal and execute it to the end.
    fn push_bound(&mut self, name: &str, params: &[Option<String>]) -> Result<(), WireError> {
        self.push_bind("", name, params)?;
        frontend::execute("", 0, &mut self.write_buf)?;
        Ok(())
    }

    /// Bind the statement `name` to the portal `portal`, text in and out.
    fn push_bind(&mut self, portal: &str, name: &str, params: &[Option<String>]) -> Result<(), WireError> {
        let bind = frontend::bind(
            portal,
            name,
            Some(0), // all parameters in text format
            params.iter(),
            |param, buf| match param {
                Some(text) => {
                    buf.extend_from_slice(text.as_bytes());
                    Ok(postgres_protocol::IsNull::No)
                }
                None => Ok(postgres_protocol::IsNull::Yes),
            },
            Some(0), // all results in text format
            &mut self.write_buf,
        );
        match bind {
            Ok(()) => {}
            Err(frontend::BindError::Conversion(e)) => {
                return Err(WireError::Protocol(e.to_string()));
            }
            Err(frontend::BindError::Serialization(e)) => return Err(e.into()),
        }
        Ok(())
    }
}
