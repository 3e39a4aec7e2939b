//! `pgmcp serve --http` on a free port, and a plain HTTP/1.1 client for it:
//! one request per connection, the reply's status, headers and body, and
//! the stateless protocol's `tools/call`. Here, not in `http::`, because the
//! tests of the HTTP door's limits (`http_doors::`) use them too.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::pg::{self, TestDb};
use crate::support::stdio::McpProcess;
use crate::support::writable_config::write_config;

pub(crate) use crate::support::net::free_port;

/// What came back: status, headers (lower-case names), body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message answered: the body, or the last `data:` of an
    /// event stream.
    pub(crate) fn message(&self) -> Value {
        let text = match self.header("content-type") {
            Some(t) if t.starts_with("text/event-stream") => self
                .body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| !d.is_empty())
                .unwrap_or_default()
                .to_owned(),
            _ => self.body.clone(),
        };
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One request on its own connection.
pub(crate) fn send(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // A server may answer (413) before reading the whole body.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {raw:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v == "chunked");
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Reply { status, headers, body }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

pub(crate) const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
pub(crate) const JSON: (&str, &str) = ("Content-Type", "application/json");

/// A stateless (2026-07-28) `tools/call` of `query`'s headers.
pub(crate) const STATELESS: [(&str, &str); 5] = [
    ACCEPT,
    JSON,
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "query"),
];

/// The stateless protocol's request metadata.
pub(crate) fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "pgmcp-it", "version": "0.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

pub(crate) fn rpc(id: u64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// A stateless `tools/call` of `query` with `sql`.
pub(crate) fn query_call(sql: &str) -> Vec<u8> {
    rpc(
        1,
        "tools/call",
        json!({"_meta": meta(), "name": "query", "arguments": {"sql": sql}}),
    )
}

/// `pgmcp serve --http` on a free port, with `envs`; waits until it answers.
pub(crate) fn start(db_url: &str, dir: &std::path::Path, envs: &[(&str, &str)]) -> (McpProcess, u16) {
    start_with(db_url, dir, envs, |config| config)
}

/// [`start`] with the config file's text changed by `edit` first.
pub(crate) fn start_with(
    db_url: &str,
    dir: &std::path::Path,
    envs: &[(&str, &str)],
    edit: impl Fn(String) -> String,
) -> (McpProcess, u16) {
    let config = write_config(dir, r#", "max_sql_length": 1000, "max_params_bytes": 1000"#);
    std::fs::write(&config, edit(std::fs::read_to_string(&config).unwrap())).unwrap();
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut all = vec![("PGMCP_PG_CONNSTRING", db_url)];
    all.extend_from_slice(envs);
    let mcp = McpProcess::spawn(&["serve", "--config", &config, "--http", &address], &all);
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "not listening: {}", mcp.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    (mcp, port)
}

pub(crate) fn db() -> TestDb {
    let db = pg::server().database();
    db.psql("CREATE TABLE pets (id int PRIMARY KEY, name text); INSERT INTO pets VALUES (1, 'rex')");
    db
}
