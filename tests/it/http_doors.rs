//! The HTTP door's gaps (issue 30), each against the real binary over real
//! sockets: a 2025 session belongs to the token that opened it; connections
//! that show no token cannot starve those that do; request bodies share one
//! memory budget.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::http::{ACCEPT, JSON, Reply, STATELESS, db, query_call, rpc, send, start_with};

/// A tokens file (0600) in `dir` holding `tokens`, and a config edit that
/// names it.
fn with_tokens(dir: &Path, tokens: &[&str]) -> impl Fn(String) -> String + use<> {
    let file = dir.join("tokens");
    std::fs::write(&file, tokens.join("\n")).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let setting = format!(r#""server": {{"auth_tokens_file": {:?}, "#, file.to_str().unwrap());
    move |config: String| config.replacen(r#""server": {"#, &setting, 1)
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

// ---------------------------------------------------------------------------
// Sessions belong to their token.

/// Another token's session, used or ended, is answered exactly as a session
/// that does not exist (`404`, the same bytes); the owner's session goes on,
/// and its owner can still end it.
#[test]
fn a_session_belongs_to_the_token_that_opened_it() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start_with(
        &db.url,
        dir.path(),
        &[],
        with_tokens(dir.path(), &["alpha-t0ken", "beta-t0ken"]),
    );
    let alpha = bearer("alpha-t0ken");
    let beta = bearer("beta-t0ken");
    let init = send(
        port,
        "POST",
        "/mcp",
        &[ACCEPT, JSON, ("Authorization", &alpha)],
        &rpc(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}),
        ),
    );
    assert_eq!(init.status, 200, "{}", init.body);
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let as_caller = |auth: &str, id: &str, method: &str, body: &[u8]| -> Reply {
        let headers = [
            ACCEPT,
            JSON,
            ("Authorization", auth),
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        send(port, method, "/mcp", &headers, body)
    };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(as_caller(&alpha, &session, "POST", note.as_bytes()).status, 202);
    let list = rpc(2, "tools/call", json!({"name": "list_tables", "arguments": {}}));
    let works = |reply: &Reply| reply.message()["result"]["structuredContent"]["tables"][0]["name"] == "pets";
    assert!(works(&as_caller(&alpha, &session, "POST", &list)), "the owner's call");

    // An id no session has, for comparison.
    let unknown = "0b9f5c56-5b4e-4a57-9a39-1d6f2f3c8e11";
    for (what, method, body) in [
        ("a call", "POST", list.as_slice()),
        ("a notification", "POST", note.as_bytes()),
        ("the event stream", "GET", &b""[..]),
        ("ending it", "DELETE", &b""[..]),
    ] {
        let theirs = as_caller(&beta, &session, method, body);
        let nobodys = as_caller(&beta, unknown, method, body);
        assert_eq!(theirs.status, 404, "{what}, another token's session: {}", theirs.body);
        assert_eq!(
            (theirs.status, &theirs.body, theirs.header("content-type")),
            (nobodys.status, &nobodys.body, nobodys.header("content-type")),
            "{what}: another token's session is answered unlike an unknown one"
        );
        // Nor is the owner told apart from anyone else by an unknown id.
        assert_eq!(as_caller(&alpha, unknown, method, body).status, 404, "{what}");
    }

    // The owner's session is untouched by all that, and its owner can end it.
    assert!(
        works(&as_caller(&alpha, &session, "POST", &list)),
        "the owner's session after the other token's attempts"
    );
    let end = as_caller(&alpha, &session, "DELETE", b"");
    assert!(end.status < 300, "{} {}", end.status, end.body);
    assert_eq!(
        as_caller(&alpha, &session, "POST", &list).status,
        404,
        "an ended session"
    );
    mcp.kill();
}

// ---------------------------------------------------------------------------
// Starvation.

/// Keeps `count` connections to `port` open that send nothing, or half a
/// request's headers, or a whole request without a token (answered `401`)
/// and then nothing; every `every`, those the server closed are opened
/// again, as an attacker keeping its flood up would; until `stop`.
fn flood(
    port: u16,
    count: usize,
    every: Duration,
    stop: Arc<AtomicBool>,
    reopened: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    let open = move |i: usize| -> Option<TcpStream> {
        let stream = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).ok()?;
        let sent: &[u8] = match i % 3 {
            0 => b"",
            1 => b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
            _ => b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        };
        let _ = (&stream).write_all(sent);
        stream.set_nonblocking(true).ok()?;
        Some(stream)
    };
    std::thread::spawn(move || {
        let mut held: Vec<Option<TcpStream>> = (0..count).map(open).collect();
        while !stop.load(Ordering::Relaxed) {
            for (i, slot) in held.iter_mut().enumerate() {
                let closed = match slot {
                    None => true,
                    // An answer (the 401) is read and dropped; an end of
                    // stream or a reset means the server closed it.
                    Some(stream) => match stream.read(&mut [0; 4096]) {
                        Ok(0) => true,
                        Ok(_) => false,
                        Err(e) => e.kind() != ErrorKind::WouldBlock,
                    },
                };
                if closed {
                    *slot = open(i);
                    reopened.fetch_add(1, Ordering::Relaxed);
                }
            }
            std::thread::sleep(every);
        }
    })
}

/// `n` stateless calls, each on a new connection with `token`: how long
/// each took, in milliseconds.
fn timed_calls(port: u16, token: &str, n: usize) -> Vec<f64> {
    let auth = bearer(token);
    let mut headers = STATELESS.to_vec();
    headers.push(("Authorization", &auth));
    let call = query_call("SELECT id, name FROM pets");
    (0..n)
        .map(|_| {
            let started = Instant::now();
            let reply = send(port, "POST", "/mcp", &headers, &call);
            let took = started.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(reply.status, 200, "{}", reply.body);
            assert_eq!(
                reply.message()["result"]["structuredContent"]["rows"],
                json!([{"id": 1, "name": "rex"}])
            );
            took
        })
        .collect()
}

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn max(ms: &[f64]) -> f64 {
    ms.iter().copied().fold(0.0, f64::max)
}

/// The latencies of `CALLS` calls beside a flood of `FLOOD` connections
/// (see [`flood`]) topped up every `every`, and how often the flood
/// reopened one.
fn beside_a_flood(port: u16, every: Duration) -> (Vec<f64>, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let reopened = Arc::new(AtomicUsize::new(0));
    let flooder = flood(port, FLOOD, every, stop.clone(), reopened.clone());
    // Let the flood fill every slot and settle.
    std::thread::sleep(Duration::from_secs(2));
    let flooded = timed_calls(port, "real-t0ken", CALLS);
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    (flooded, reopened.load(Ordering::Relaxed))
}

/// Above the 256 connection slots (and the 64 for strangers).
const FLOOD: usize = 400;
/// Calls timed each way.
const CALLS: usize = 30;

/// More connections without a token than the server has slots for (see
/// [`flood`]): a token holder's calls, each on a new connection, stay
/// within twice their latency on the same server idle, measured just
/// before; and when the flood reconnects as fast as it is cut off, within
/// a second.
#[test]
fn connections_without_a_token_cannot_starve_token_holders() {
    /// Added to the bounds for scheduling noise on a busy 2-core machine
    /// (the median's, and the slowest call's, which one stall can set).
    /// The failure this test guards against is a wait of seconds: the
    /// 10-second header timeout, 9,977 ms measured before strangers had
    /// slots of their own.
    const FLOOR_MS: f64 = 50.0;
    const SLOWEST_FLOOR_MS: f64 = 250.0;
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], with_tokens(dir.path(), &["real-t0ken"]));
    timed_calls(port, "real-t0ken", 5); // warm: pool, code paths
    let idle = timed_calls(port, "real-t0ken", CALLS);
    let (idle_median, idle_max) = (median(idle.clone()), max(&idle));
    eprintln!("idle server: median {idle_median:.1} ms, slowest {idle_max:.1} ms");

    // Idle connections held open, the closed ones opened again each second.
    let (flooded, reopened) = beside_a_flood(port, Duration::from_secs(1));
    let (flood_median, flood_max) = (median(flooded.clone()), max(&flooded));
    eprintln!(
        "beside {FLOOD} idle connections (reopened {reopened} times): median {flood_median:.1} ms, slowest \
         {flood_max:.1} ms"
    );
    assert!(
        flood_median <= 2.0 * idle_median + FLOOR_MS,
        "median {flood_median:.1} ms beside the flood, over 2 x {idle_median:.1} + {FLOOR_MS} ms"
    );
    assert!(
        flood_max <= 2.0 * idle_max + SLOWEST_FLOOR_MS,
        "slowest call {flood_max:.1} ms beside the flood, over 2 x {idle_max:.1} + {SLOWEST_FLOOR_MS} ms"
    );

    // Reopened as fast as they are closed (a sweep every 5 ms): each real
    // connection waits behind the flood's in the kernel's accept queue, so
    // calls slow down with the flood's rate; none is refused, and none
    // waits seconds.
    let (flooded, reopened) = beside_a_flood(port, Duration::from_millis(5));
    let (fast_median, fast_max) = (median(flooded.clone()), max(&flooded));
    eprintln!(
        "beside {FLOOD} connections reopened as fast as closed ({reopened} times): median {fast_median:.1} ms, \
         slowest {fast_max:.1} ms"
    );
    assert!(
        fast_max < 1000.0,
        "slowest call {fast_max:.1} ms beside a reconnecting flood"
    );
    mcp.kill();
}

// ---------------------------------------------------------------------------
// Body memory.

/// A hundred token holders each send a body of the longest size the
/// default limits allow (a query of 8.6 MB) at once. Their bodies share
/// `server.max_body_memory_mb`: the server's peak memory grows by at most
/// a small multiple of that budget (the body, rmcp's copy of it, and the
/// parsed message), however many arrive, and every one is answered.
#[test]
fn request_bodies_share_one_memory_budget() {
    const BUDGET_MB: u64 = 24;
    // Fewer than the 64 connections that may wait without having shown a
    // token: with more, under load, one may be dropped to make room before
    // its request is read (`connections_without_a_token_cannot_starve_token_holders`
    // is about that), and this test is about the bodies' memory alone.
    const CLIENTS: usize = 60;
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let tokens = with_tokens(dir.path(), &["big-t0ken"]);
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], |config| {
        // The default query limits: the longest body is 8.6 MB.
        tokens(config)
            .replace(r#", "max_sql_length": 1000, "max_params_bytes": 1000"#, "")
            .replacen(
                r#""server": {"#,
                &format!(r#""server": {{"max_body_memory_mb": {BUDGET_MB}, "#),
                1,
            )
    });
    let auth = bearer("big-t0ken");
    let mut headers = STATELESS.to_vec();
    headers.push(("Authorization", &auth));
    let warm = send(port, "POST", "/mcp", &headers, &query_call("SELECT 1 AS one"));
    assert_eq!(warm.status, 200, "{}", warm.body);
    let before = mcp.peak_memory_kb();

    // Just under the longest body: a query text far over max_sql_length,
    // which the server parses whole before refusing it.
    let body = Arc::new(query_call(&format!("SELECT '{}'", "x".repeat(8_500_000))));
    let headers: Vec<(String, String)> = headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let body = body.clone();
            let headers = headers.clone();
            std::thread::spawn(move || {
                let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
                let reply = send(port, "POST", "/mcp", &headers, &body);
                (reply.status, reply.header("retry-after").map(str::to_owned), reply.body)
            })
        })
        .collect();
    let replies: Vec<_> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let took = started.elapsed();
    let after = mcp.peak_memory_kb();

    let answered = replies.iter().filter(|(status, ..)| *status == 200).count();
    let busy = replies.iter().filter(|(status, ..)| *status == 503).count();
    let grew_mb = after.saturating_sub(before) as f64 / 1024.0;
    // What a body's share covers, each as large as the body: the bytes
    // read, rmcp's copy of them, the parsed message, and the query text
    // the tool is handed. Four times the budget, and 16 MB for the
    // allocator's slack and the answers.
    let bound_mb = 4.0 * BUDGET_MB as f64 + 16.0;
    // For scale: with a budget of 2000 MB (none, in effect) a flood of 100
    // such bodies grew the peak by 826 MB (measured 2026-11-26).
    eprintln!(
        "{CLIENTS} bodies of {:.1} MB in {took:.1?}: {answered} answered, {busy} told to retry; peak memory \
         {:.1} MB before, {:.1} MB after (+{grew_mb:.1} MB; budget {BUDGET_MB} MB, bound +{bound_mb:.0} MB)",
        body.len() as f64 / 1e6,
        before as f64 / 1024.0,
        after as f64 / 1024.0,
    );
    for (status, retry_after, text) in &replies {
        match status {
            // Answered: the query is refused as too long, by the tool.
            200 => assert!(
                text.contains("max_sql_length") || text.contains("longer"),
                "{}",
                &text[..text.len().min(300)]
            ),
            503 => assert_eq!(retry_after.as_deref(), Some("1"), "{text}"),
            _ => panic!("{status}: {}", &text[..text.len().min(300)]),
        }
    }
    assert!(answered >= CLIENTS / 2, "{answered} of {CLIENTS} answered");
    assert!(
        grew_mb <= bound_mb,
        "peak memory grew {grew_mb:.1} MB, over {bound_mb:.0} MB"
    );
    // And the server goes on.
    let again = send(
        port,
        "POST",
        "/mcp",
        &headers_ref(&headers),
        &query_call("SELECT 2 AS two"),
    );
    assert_eq!(
        again.message()["result"]["structuredContent"]["rows"],
        json!([{"two": 2}])
    );
    mcp.kill();
}

fn headers_ref(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect()
}

/// A body sent without a declared length (chunked) is read within the
/// same limits: answered when it fits, `413` when it does not.
#[test]
fn a_body_without_a_declared_length_is_read_within_the_limits() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], |config| config);
    let chunked = |body: &[u8]| -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n"
        );
        for (name, value) in STATELESS {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        for piece in body.chunks(64 << 10) {
            let framed = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
            if stream.write_all(&framed).is_err() {
                break;
            }
        }
        let _ = stream.write_all(b"0\r\n\r\n");
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        String::from_utf8_lossy(&raw).into_owned()
    };
    let fits = chunked(&query_call("SELECT id, name FROM pets"));
    assert!(fits.starts_with("HTTP/1.1 200"), "{fits}");
    assert!(fits.contains(r#""rows":[{"id":1,"name":"rex"}]"#), "{fits}");
    // Over the 1 MB longest body these limits allow.
    let mut big = query_call("SELECT 1");
    big.extend(std::iter::repeat_n(b' ', 2 << 20));
    let refused = chunked(&big);
    assert!(
        refused.starts_with("HTTP/1.1 413"),
        "{}",
        &refused[..refused.len().min(300)]
    );
    // The share a refused body took is given back: calls still go through.
    let again = send(port, "POST", "/mcp", &STATELESS, &query_call("SELECT 2 AS two"));
    assert_eq!(
        again.message()["result"]["structuredContent"]["rows"],
        json!([{"two": 2}])
    );
    mcp.kill();
}
