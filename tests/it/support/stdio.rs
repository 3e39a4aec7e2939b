//! A JSON-RPC client that drives the real `pgmcp` binary over stdio, the way a
//! desktop agent does.
//!
//! One message per line each way. A reader thread checks every line the binary
//! prints on stdout: anything that is not a JSON-RPC 2.0 object (a stray log
//! line, a blank line) is a protocol violation, and the next call on the
//! [`McpProcess`] panics with it, since on a real desktop it would kill the
//! session. Every panic here carries the command line, the binary's stderr so
//! far and its last stdout lines.
//!
//! The stdio bench (`benches/stdio.rs`) drives its servers with this client
//! too, through its timed calls ([`McpProcess::send_line`],
//! [`McpProcess::recv_timed`]): there, what a call costs is the measurement,
//! so the reader thread stamps each line with the time it was read and reads
//! only its envelope (id, error, `isError`), and the messages as JSON values
//! are built on the caller's side, only by the calls the tests use.

use std::{
    collections::VecDeque,
    env, fs,
    io::{BufRead as _, BufReader, Write as _},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    sync::mpsc::{self, Receiver, RecvTimeoutError},
    thread,
    time::{Duration, Instant},
};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// How long [`McpProcess::request`] waits for its response.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);

/// How many of the last stdout lines a panic message shows.
const RECENT_LINES: usize = 20;

/// The protocol version [`McpProcess::initialize`] asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// How the instructions of a pgmcp that could not start begin.
pub const UNSTARTED: &str = "pgmcp could not start: ";

/// A running `pgmcp` and the client end of its stdio.
pub struct McpProcess {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    events: Receiver<Event>,
    /// Messages read but not asked for yet: notifications, requests from the
    /// server, and responses to other ids.
    pending: Vec<Value>,
    /// The first line on stdout that was not JSON-RPC.
    violation: Option<String>,
    stdout_closed: bool,
    /// The last lines on stdout taken as messages, raw, for panic messages.
    recent: VecDeque<String>,
    next_id: u64,
    command_line: String,
    stderr_path: PathBuf,
    /// HOME, XDG dirs, cwd and the stderr file; removed after the child is killed.
    home: tempfile::TempDir,
}

/// What the reader thread saw on stdout.
enum Event {
    /// One line, without its newline: when it was read, and what its
    /// envelope says (`None` when it has none a timed call can read).
    Line {
        at: Instant,
        text: String,
        envelope: Option<Envelope>,
    },
    /// End of stdout, with the read error if it was one.
    Closed(Option<String>),
}

/// The fields of a line a timed call looks at; the rest is skipped, not built.
#[derive(Deserialize)]
struct Frame {
    id: Option<u64>,
    error: Option<IgnoredAny>,
    result: Option<ResultFlags>,
}

#[derive(Deserialize)]
struct ResultFlags {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

/// What the reader thread read of a line's [`Frame`].
struct Envelope {
    /// `None`: a notification.
    id: Option<u64>,
    /// Neither a JSON-RPC error nor a tool result with `isError: true`.
    ok: bool,
}

/// A response as a timed call reads it.
pub struct Response {
    pub id: u64,
    /// When the reader thread read its line.
    pub at: Instant,
    /// Neither a JSON-RPC error nor a tool result with `isError: true`.
    pub ok: bool,
    pub line: String,
}

impl McpProcess {
    /// Starts `pgmcp <args>` with `envs` set.
    ///
    /// The environment is hermetic: every inherited `PG*` and `PGMCP_*`
    /// variable is removed, and `HOME`, the `XDG_*` dirs and the working
    /// directory are a fresh temp dir, so default config and log locations land
    /// there. Pass paths in `args` as absolute paths.
    pub fn spawn(args: &[&str], envs: &[(&str, &str)]) -> McpProcess {
        Self::spawn_program(env!("CARGO_BIN_EXE_pgmcp"), args, envs)
    }

    /// [`McpProcess::spawn`] with `program` instead of the test build's
    /// path: to run a command exactly as a client's config names it.
    pub fn spawn_program(program: &str, args: &[&str], envs: &[(&str, &str)]) -> McpProcess {
        let home = tempfile::Builder::new()
            .prefix("pgmcp-home-")
            .tempdir()
            .expect("create a temp HOME for pgmcp");

        let mut cmd = Command::new(program);
        cmd.args(args);
        for (key, _) in env::vars_os() {
            if key.to_string_lossy().starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", home.path());
        for (var, dir) in [
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CACHE_HOME", "cache"),
            ("XDG_RUNTIME_DIR", "runtime"),
        ] {
            let path = home.path().join(dir);
            fs::create_dir(&path).expect("create an XDG dir in the temp HOME");
            cmd.env(var, path);
        }
        crate::support::read_as_login_where_told(&mut cmd);
        cmd.envs(envs.iter().copied());

        let command_line = std::iter::once(program.to_string())
            .chain(args.iter().map(|arg| format!("{arg:?}")))
            .chain(envs.iter().map(|(key, value)| format!("[env {key}={value:?}]")))
            .collect::<Vec<_>>()
            .join(" ");
        McpProcess::start(cmd, command_line, home, "pgmcp.stderr")
    }

    /// Starts `cmd` (program, arguments and environment set; shown as
    /// `command_line`) in `home`, which becomes its working directory and
    /// holds its stderr, in the file `stderr`: how [`McpProcess::spawn`]
    /// starts pgmcp, and how the bench starts each server it measures.
    pub fn start(mut cmd: Command, command_line: String, home: tempfile::TempDir, stderr: &str) -> McpProcess {
        let stderr_path = home.path().join(stderr);
        let stderr = fs::File::create(&stderr_path).expect("create the server's stderr file");
        cmd.current_dir(home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {command_line}: {err}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");

        let (sender, events) = mpsc::channel();
        thread::spawn(move || {
            let mut stdout = BufReader::with_capacity(1 << 16, stdout);
            let mut raw = Vec::new();
            loop {
                raw.clear();
                let event = match stdout.read_until(b'\n', &mut raw) {
                    Ok(0) => Event::Closed(None),
                    Ok(_) => {
                        // Stamped before anything else is done with the line:
                        // a timed call's latency ends here.
                        let at = Instant::now();
                        let text = String::from_utf8_lossy(&raw);
                        let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
                        let envelope = serde_json::from_str::<Frame>(&text).ok().map(|frame| Envelope {
                            id: frame.id,
                            ok: frame.error.is_none() && frame.result.is_some_and(|r| r.is_error != Some(true)),
                        });
                        Event::Line { at, text, envelope }
                    }
                    Err(err) => Event::Closed(Some(err.to_string())),
                };
                let closed = matches!(event, Event::Closed(_));
                if sender.send(event).is_err() || closed {
                    return;
                }
            }
        });

        McpProcess {
            child,
            stdin,
            events,
            pending: Vec::new(),
            violation: None,
            stdout_closed: false,
            recent: VecDeque::new(),
            next_id: 1,
            command_line,
            stderr_path,
            home,
        }
    }

    /// Writes `msg` as one line.
    pub fn send(&mut self, msg: &Value) {
        let line = serde_json::to_string(msg).expect("a Value always serializes");
        self.send_raw(&line);
    }

    /// Writes `line` and a newline, as is: for malformed input.
    pub fn send_raw(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Writes `line` and a newline, as is, even when it is not UTF-8.
    pub fn send_bytes(&mut self, line: &[u8]) {
        self.check();
        let written = match self.stdin.as_mut() {
            None => Err("stdin is already closed".to_string()),
            Some(stdin) => stdin
                .write_all(line)
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.flush())
                .map_err(|err| err.to_string()),
        };
        if let Err(err) = written {
            let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
            panic!("{}", self.debug(&format!("cannot send {shown}: {err}")));
        }
    }

    /// Writes `line`, which ends with its newline, in one write, with no
    /// other work: what a timed call sends.
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        if let Err(err) = stdin.write_all(line.as_bytes()) {
            panic!("{}", self.debug(&format!("cannot write to the server: {err}")));
        }
    }

    /// The next response to any request, as a timed call reads it:
    /// notifications are skipped (nothing waits for them). Panics when stdout
    /// carries a line that is not JSON-RPC, when it closes, or when nothing
    /// comes within `timeout`.
    pub fn recv_timed(&mut self, timeout: Duration) -> Response {
        loop {
            match self.events.recv_timeout(timeout) {
                Ok(Event::Line {
                    at,
                    text,
                    envelope: Some(Envelope { id: Some(id), ok }),
                }) => return Response { id, at, ok, line: text },
                Ok(Event::Line {
                    envelope: Some(Envelope { id: None, .. }),
                    ..
                }) => {}
                Ok(Event::Line {
                    text, envelope: None, ..
                }) => {
                    let shown: String = text.chars().take(300).collect();
                    panic!(
                        "{}",
                        self.debug(&format!(
                            "stdout carried a line that is not JSON-RPC with a numeric id: {shown} ({} bytes)",
                            text.len()
                        ))
                    );
                }
                Ok(Event::Closed(err)) => {
                    self.stdout_closed = true;
                    panic!("{}", self.debug(&format!("stdout closed ({err:?})")));
                }
                Err(err) => panic!("{}", self.debug(&format!("no response ({err})"))),
            }
        }
    }

    /// The id for the next request.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Sends a request with the next id and returns the whole response
    /// (`result` or `error`). `params` of `null` are left out.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(&msg);
        self.recv_response(&id, RESPONSE_TIMEOUT)
    }

    /// Waits for the response to request `id`. What arrives meanwhile is kept
    /// for later calls and [`McpProcess::take_notifications`].
    pub fn recv_response(&mut self, id: &Value, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            self.pump();
            self.check();
            let is_it = |msg: &Value| msg.get("id") == Some(id) && msg.get("method").is_none();
            if let Some(at) = self.pending.iter().position(is_it) {
                return self.pending.remove(at);
            }
            if self.stdout_closed {
                panic!(
                    "{}",
                    self.debug(&format!("pgmcp closed stdout before answering id {id}"))
                );
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(event) => self.handle(event),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{}", self.debug(&format!("no response to id {id} within {timeout:?}")))
                }
                Err(RecvTimeoutError::Disconnected) => self.stdout_closed = true,
            }
        }
    }

    /// Waits for an error response that carries no id, or a null one (the
    /// answer to a line with no id to read: not JSON, a batch).
    pub fn recv_error_without_id(&mut self, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            self.pump();
            self.check();
            let is_it = |msg: &Value| msg.get("id").is_none_or(Value::is_null) && msg.get("error").is_some();
            if let Some(at) = self.pending.iter().position(is_it) {
                return self.pending.remove(at);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(event) => self.handle(event),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{}", self.debug(&format!("no error without an id within {timeout:?}")))
                }
                Err(RecvTimeoutError::Disconnected) => self.stdout_closed = true,
            }
        }
    }

    /// Every message read and not asked for yet, oldest first: what is left
    /// over once the expected answers were taken.
    pub fn take_pending(&mut self) -> Vec<Value> {
        self.pump();
        self.check();
        std::mem::take(&mut self.pending)
    }

    /// The messages the server sent on its own (notifications, and requests
    /// if any) since the last call, oldest first.
    pub fn take_notifications(&mut self) -> Vec<Value> {
        self.pump();
        self.check();
        let (own, rest) = self.pending.drain(..).partition(|msg| msg.get("method").is_some());
        self.pending = rest;
        own
    }

    /// The MCP handshake with [`PROTOCOL_VERSION`]; returns the `initialize`
    /// result.
    pub fn initialize(&mut self) -> Value {
        self.initialize_with_version(PROTOCOL_VERSION)
    }

    /// `initialize` asking for `version`, then `notifications/initialized`;
    /// returns the `initialize` result. Panics on a JSON-RPC error: use
    /// [`McpProcess::request`] to see one. Panics too when pgmcp could not
    /// start (it still completes the handshake, to say why in every tool
    /// call): a test of a session must not pass on those answers.
    pub fn initialize_with_version(&mut self, version: &str) -> Value {
        let result = self.handshake(version);
        if let Some(said) = result["instructions"].as_str().filter(|i| i.starts_with(UNSTARTED)) {
            let said = said.to_owned();
            panic!("{}", self.debug(&format!("the session did not start: {said}")));
        }
        result
    }

    /// The handshake with a pgmcp that could not start: panics unless its
    /// instructions say so. Returns the `initialize` result.
    pub fn initialize_unstarted(&mut self) -> Value {
        let result = self.handshake(PROTOCOL_VERSION);
        if !result["instructions"]
            .as_str()
            .is_some_and(|i| i.starts_with(UNSTARTED))
        {
            panic!(
                "{}",
                self.debug(&format!("pgmcp started, where it should not have: {result}"))
            );
        }
        result
    }

    fn handshake(&mut self, version: &str) -> Value {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "pgmcp-it", "version": "0.0.0"},
            }),
        );
        let Some(result) = response.get("result").cloned() else {
            panic!("{}", self.debug(&format!("initialize failed: {response}")));
        };
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        result
    }

    /// `tools/call`; returns its `result` (which may have `isError: true`).
    /// Panics on a JSON-RPC error: use [`McpProcess::request`] to see one.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        match response.get("result") {
            Some(result) if response.get("error").is_none() => result.clone(),
            _ => panic!(
                "{}",
                self.debug(&format!("tools/call {name} got no result: {response}"))
            ),
        }
    }

    /// Closes the binary's stdin: end of session.
    pub fn close_stdin(&mut self) {
        self.check();
        self.stdin = None;
    }

    /// Waits for the binary to exit. Panics, after killing it, if it is still
    /// running after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.drain_until_closed();
                    self.check();
                    return status;
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                Ok(None) => {
                    self.kill();
                    panic!(
                        "{}",
                        self.debug(&format!("pgmcp did not exit within {timeout:?}; killed it"))
                    );
                }
                Err(err) => panic!("{}", self.debug(&format!("cannot wait for pgmcp: {err}"))),
            }
        }
    }

    /// What the binary wrote to stderr so far.
    pub fn stderr(&self) -> String {
        fs::read(&self.stderr_path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_else(|err| format!("(cannot read {}: {err})", self.stderr_path.display()))
    }

    /// The server's peak resident memory so far, in kB (`VmHWM` in
    /// `/proc/<pid>/status`).
    pub fn peak_memory_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The binary's exit status, if it has exited; does not wait.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The binary's HOME and working directory, which holds its stderr file.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Kills the binary (SIGKILL) and reaps it; fine if it already exited.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Takes what the reader thread has seen so far, without waiting.
    fn pump(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.handle(event);
        }
    }

    /// After exit: stdout ends soon, unless a grandchild still holds it, so
    /// wait a little, not forever.
    fn drain_until_closed(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !self.stdout_closed {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(event) => self.handle(event),
                Err(RecvTimeoutError::Timeout) => return,
                Err(RecvTimeoutError::Disconnected) => self.stdout_closed = true,
            }
        }
    }

    /// Takes one line as a message: kept for later calls when it is a
    /// JSON-RPC 2.0 object, else remembered as the violation.
    fn handle(&mut self, event: Event) {
        match event {
            Event::Line { text, .. } => {
                if self.recent.len() == RECENT_LINES {
                    self.recent.pop_front();
                }
                self.recent.push_back(text.clone());
                match serde_json::from_str::<Value>(&text) {
                    Ok(msg) if msg.get("jsonrpc") == Some(&json!("2.0")) => self.pending.push(msg),
                    _ => {
                        self.violation.get_or_insert(text);
                    }
                }
            }
            Event::Closed(_) => self.stdout_closed = true,
        }
    }

    /// Panics if stdout ever carried something other than JSON-RPC.
    fn check(&mut self) {
        if let Some(line) = self.violation.clone() {
            panic!(
                "{}",
                self.debug(&format!(
                    "stdout must carry JSON-RPC messages and nothing else, but pgmcp printed:\n{line}"
                ))
            );
        }
    }

    /// `what`, and everything needed to debug it. The last stdout lines are
    /// those taken as messages (a timed call takes none).
    pub fn debug(&mut self, what: &str) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            Ok(None) => "still running".to_string(),
            Err(err) => format!("unknown ({err})"),
        };
        self.pump();
        let recent = self.recent.iter().cloned().collect::<Vec<_>>().join("\n");
        format!(
            "\n\n==========\n{what}\n\ncommand: {}\npid: {}\nstatus: {status}\n\n\
             last {RECENT_LINES} stdout lines:\n{recent}\n\nstderr:\n{}\n==========\n",
            self.command_line,
            self.child.id(),
            self.stderr(),
        )
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        self.kill();
        // A violation nothing asked about yet still fails the test, unless it
        // is failing already (a second panic would abort).
        if !thread::panicking() {
            self.drain_until_closed();
            self.check();
        }
    }
}

/// The first text content of a `tools/call` result, inside the boundary
/// around data when it has one (checked whole: see [`inside_boundary`]).
pub fn tool_text(result: &Value) -> &str {
    inside_boundary(raw_text(result))
}

/// The first text content of a `tools/call` result, as sent.
pub fn raw_text(result: &Value) -> &str {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|item| item["type"] == "text")
        .and_then(|item| item["text"].as_str())
        .unwrap_or_else(|| panic!("no text content in tools/call result: {result:#}"))
}

/// [`tool_text`]'s JSON (inside the boundary around data, checked whole),
/// parsed.
pub fn tool_json(result: &Value) -> Value {
    let text = tool_text(result);
    serde_json::from_str(text)
        .unwrap_or_else(|err| panic!("tool text is not JSON ({err}):\n{text}\n\nresult: {result:#}"))
}

/// The text inside the boundary around data (`<data-MARKER>` ... `</data-MARKER>`),
/// after checking it is one: its marker in the two tags only, the closing
/// tag at the end. A text without the boundary comes back as it is.
pub fn inside_boundary(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("<data-") else {
        return text;
    };
    let (marker, body) = rest
        .split_once(">\n")
        .unwrap_or_else(|| panic!("an opening tag without its line: {text}"));
    assert!(
        marker.len() == 12 && marker.bytes().all(|b| b.is_ascii_uppercase()),
        "marker {marker:?}"
    );
    let close = format!("\n</data-{marker}>");
    assert!(body.ends_with(&close), "the closing tag ends the text: {text}");
    assert_eq!(
        text.matches(marker).count(),
        2,
        "the marker is in the two tags only: {text}"
    );
    &body[..body.len() - close.len()]
}

/// The names of the tools a `tools/list` result lists, sorted.
pub fn tool_names(list: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = list["tools"]
        .as_array()
        .expect("a list of tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a tool name"))
        .collect();
    names.sort_unstable();
    names
}

/// Whether a tool call's result is an error.
pub fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}
