//! A person's word before a statement runs (`confirm`), over MCP: the
//! pipeline stops a model's statement that `confirm` covers with
//! [`Error::Unconfirmed`]; this module asks the person through the client
//! and turns their answer into a second call with the proposal accepted,
//! or into a result that says nothing ran.
//!
//! - Sessions before 2026-07-28: an `elicitation/create` request to the
//!   client, tied to this tool call (sent while it is open) and bounded by
//!   `confirm_timeout_seconds`.
//! - 2026-07-28, where servers send no requests: the call answers
//!   `input_required` with the same elicitation and an opaque
//!   `requestState`; the client retries the call with the person's answer.
//!   The state is a random handle to the proposal kept here, used once,
//!   expiring with the same timeout; the retry runs only if its
//!   arguments still make the statement the person accepted.
//!
//! Either way the answer comes from the client, never from the tool's
//! arguments: a model cannot accept its own statement.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResponse, CallToolResult, ClientResult, ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequiredResult, InputResponses, ProtocolVersion,
    ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::pipeline::answer::QueryAnswer;
use crate::pipeline::confirm::{Consent, Proposal};

/// The key of the one input request a confirmation sends.
const KEY: &str = "confirm";

/// Most confirmations one session keeps waiting at once (2026-07-28):
/// past it its own oldest is forgotten, and that retry asks again.
const MOST_PENDING: usize = 64;

/// Most confirmations a whole server keeps waiting (an HTTP server's
/// sessions share them): past it a new question is refused, never
/// another session's waiting one forgotten.
const MOST_PENDING_IN_ALL: usize = 1024;

/// How a person answered, or why nobody could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Answer {
    Accepted,
    Declined,
    Cancelled,
    /// No answer came: the timeout passed, the client failed the request,
    /// or the call was cancelled.
    None(String),
}

/// Whether the call's client can be asked at all: it declared elicitation
/// (forms) in its capabilities.
pub(super) fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|c| {
        c.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    })
}

/// Whether the call speaks 2026-07-28 or newer, where a server answers
/// `input_required` rather than sending a request of its own.
pub(super) fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// The elicitation the person answers: the proposal's message, and no
/// field to fill (accepting is the answer).
fn request(proposal: &Proposal) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: proposal.message(),
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    }
}

/// Ask the person through `elicitation/create` (sessions before
/// 2026-07-28), waiting at most `timeout`, or until the call is cancelled.
pub(super) async fn ask(
    peer: &Peer<RoleServer>,
    proposal: &Proposal,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Answer {
    let asked = async {
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request(proposal)));
        let sent = peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await?;
        sent.await_response().await
    };
    tokio::select! {
        answered = asked => match answered {
            Ok(ClientResult::ElicitResult(result)) => read(&result),
            Ok(_) => Answer::None("the client answered the confirmation with something else".to_owned()),
            Err(ServiceError::Timeout { .. }) => Answer::None(format!(
                "no answer came within {}s (confirm_timeout_seconds)",
                timeout.as_secs()
            )),
            Err(e) => Answer::None(format!("the client did not ask: {e}")),
        },
        _ = cancel.cancelled() => Answer::None("the call was cancelled".to_owned()),
    }
}

fn read(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => Answer::Accepted,
        ElicitationAction::Decline => Answer::Declined,
        ElicitationAction::Cancel => Answer::Cancelled,
        // An answer this version does not know is no acceptance.
        _ => Answer::None("the client answered in a way pgmcp does not know".to_owned()),
    }
}

/// The confirmations waiting for a retry (2026-07-28), by handle.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    waiting: Mutex<HashMap<String, Waiting>>,
}

/// A confirmation waiting for its retry.
#[derive(Debug)]
struct Waiting {
    proposal: Proposal,
    until: Instant,
    /// The session (its `Server`) that asked.
    asker: usize,
}

impl Pending {
    /// The `input_required` answer asking the person about `proposal`
    /// for session `asker`, remembered under a new handle until `timeout`
    /// has passed; `None` when the server already keeps as many waiting
    /// as it may.
    pub(super) fn ask(&self, proposal: Proposal, timeout: Duration, asker: usize) -> Option<InputRequiredResult> {
        let handle = handle();
        let elicitation = InputRequest::Elicitation(ElicitRequest::new(request(&proposal)));
        // A panic elsewhere while the lock was held leaves the map whole.
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        waiting.retain(|_, w| w.until > now);
        let mine = waiting.values().filter(|w| w.asker == asker).count();
        if mine >= MOST_PENDING
            && let Some(oldest) = waiting
                .iter()
                .filter(|(_, w)| w.asker == asker)
                .min_by_key(|(_, w)| w.until)
                .map(|(k, _)| k.clone())
        {
            waiting.remove(&oldest);
        }
        if waiting.len() >= MOST_PENDING_IN_ALL {
            return None;
        }
        // The timeout is at most a day (`confirm_timeout_seconds`).
        let until = now.checked_add(timeout)?;
        waiting.insert(handle.clone(), Waiting { proposal, until, asker });
        Some(InputRequiredResult::new(
            Some(BTreeMap::from([(KEY.to_owned(), elicitation)])),
            Some(handle),
        ))
    }

    /// The proposal a retry's `request_state` stands for, and the
    /// person's answer in its `input_responses`; each handle answers once.
    pub(super) fn answered(
        &self,
        state: &str,
        responses: Option<&InputResponses>,
    ) -> Result<(Proposal, Answer), String> {
        let found = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(state);
        let Some(Waiting { proposal, until, .. }) = found else {
            return Err(
                "the confirmation this call answers is not one pgmcp is waiting for (already answered, or \
                 expired): nothing ran. Call the tool again to ask the person again"
                    .to_owned(),
            );
        };
        if until <= Instant::now() {
            return Err(
                "the person's answer came after confirm_timeout_seconds: nothing ran. Call the tool again \
                        to ask again"
                    .to_owned(),
            );
        }
        let answer = responses
            .and_then(|r| r.get(KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
            .map(|r| read(&r))
            .unwrap_or_else(|| Answer::None("the retry carried no answer to the confirmation".to_owned()));
        Ok((proposal, answer))
    }
}

/// A number for each session's `Server`, which its waiting confirmations
/// carry.
pub(super) fn asker() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A handle nobody can guess: 128 random bits, in hex.
fn handle() -> String {
    let mut bytes = [0u8; 16];
    // The OS's generator does not fail on the systems pgmcp runs on; if it
    // did, the time still makes handles distinct within the session.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = now.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The result of a call whose statement did not run because the person
/// did not accept it: an error result (nothing ran, there are no rows),
/// saying what happened and what the model should do.
pub(super) fn not_run(answer: &Answer) -> CallToolResult {
    let text = match answer {
        Answer::Declined => "The person declined this statement: it did not run, and nothing changed. Do not send \
                             it again unless they ask for it."
            .to_owned(),
        Answer::Cancelled => "The person dismissed the confirmation: the statement did not run, and nothing \
                              changed. Ask them before sending it again."
            .to_owned(),
        Answer::None(why) => format!("The statement did not run, and nothing changed: {why}."),
        Answer::Accepted => "The statement changed after the person accepted it, so it did not run: nothing \
                             changed. Send it again to be asked again."
            .to_owned(),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The result of a call whose client cannot ask the person: the refusal
/// names the setting that lets statements run unconfirmed.
pub(super) fn cannot_ask(writes: bool) -> CallToolResult {
    let what = match writes {
        true => "This statement changes data, and this server asks a person to accept each such statement first",
        false => "This server asks a person to accept each statement first (confirm is \"all\")",
    };
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{what}, but this client cannot ask (it does not support MCP elicitation): nothing ran. Use a client \
         that supports elicitation, or have the server's operator set \"confirm\": \"never\" in pgmcp's config \
         to let statements run unconfirmed."
    ))])
}

/// What a retry of a call carries (2026-07-28): the `requestState` it
/// echoes, and the person's answers.
#[derive(Debug, Default)]
pub(super) struct Retry {
    pub state: Option<String>,
    pub responses: Option<InputResponses>,
}

impl super::Server {
    /// The same server, keeping its waiting confirmations in `pending`
    /// (one for every session of an HTTP server).
    pub fn sharing(mut self, pending: std::sync::Arc<Pending>) -> super::Server {
        self.confirmations = pending;
        self
    }

    /// Run a model's statement through `run`, asking the person first
    /// where `confirm` covers it (see the module's doc): the call's result,
    /// or the `input_required` answer that asks.
    pub(super) async fn consented<F, Fut>(
        &self,
        engine: &crate::pipeline::Engine,
        context: &RequestContext<RoleServer>,
        retry: Retry,
        run: F,
    ) -> CallToolResponse
    where
        F: Fn(Consent) -> Fut,
        Fut: Future<Output = Result<QueryAnswer, Error>>,
    {
        let consent = match retry.state {
            Some(state) => match self.confirmations.answered(&state, retry.responses.as_ref()) {
                Ok((proposal, Answer::Accepted)) => Consent::Given(proposal),
                Ok((_, answer)) => return not_run(&answer).into(),
                Err(why) => return not_run(&Answer::None(why)).into(),
            },
            None => Consent::Model,
        };
        let proposal = match run(consent).await {
            Err(Error::Unconfirmed(proposal)) => *proposal,
            answer => return self.answered(engine, answer).unwrap_or_else(|e| e).into(),
        };
        if !can_ask(context) {
            return cannot_ask(proposal.writes).into();
        }
        let timeout = engine.config().confirm.timeout;
        if stateless(context) {
            return match self.confirmations.ask(proposal, timeout, self.asker) {
                Some(asked) => asked.into(),
                None => not_run(&Answer::None(
                    "too many confirmations are waiting for their answers on this server; answer those first"
                        .to_owned(),
                ))
                .into(),
            };
        }
        // While the person reads, the client hears the call is alive (a
        // client's own timeout may be shorter than the person).
        let asked = ask(&context.peer, &proposal, timeout, &context.ct);
        match super::with_progress(&context.meta, &context.peer, asked).await {
            Answer::Accepted => match run(Consent::Given(proposal)).await {
                // What runs is no longer what the person accepted (a hook
                // rewrote it otherwise): nothing ran.
                Err(Error::Unconfirmed(_)) => not_run(&Answer::Accepted).into(),
                answer => self.answered(engine, answer).unwrap_or_else(|e| e).into(),
            },
            answer => not_run(&answer).into(),
        }
    }
}
