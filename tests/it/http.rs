//! `pgmcp serve --http`: the real binary, spoken to over HTTP/1.1 with a
//! plain client, as a team's agents would reach it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::http::{ACCEPT, JSON, STATELESS, db, free_port, query_call, rpc, send, start, start_with};
use crate::support::stdio::{McpProcess, tool_names};
use crate::support::tools;
use crate::support::writable_config::write_config;

#[test]
fn health_and_readiness_answer() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[]);
    let health = send(port, "GET", "/health", &[], b"");
    assert_eq!((health.status, health.body.as_str()), (200, r#"{"status":"ok"}"#));
    let ready = send(port, "GET", "/health/ready", &[], b"");
    assert_eq!((ready.status, ready.message()["status"].clone()), (200, json!("ready")));
    let missing = send(port, "GET", "/other", &[], b"");
    assert_eq!(missing.status, 404);
    mcp.kill();

    // A database that does not answer: not ready, said within about a second.
    let dir = tempfile::tempdir().unwrap();
    let down = format!("postgresql://nobody@127.0.0.1:{}/none?connect_timeout=5", free_port());
    let (mut mcp, port) = start(&down, dir.path(), &[]);
    let started = Instant::now();
    let ready = send(port, "GET", "/health/ready", &[], b"");
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert_eq!(ready.message()["status"], "unavailable");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(send(port, "GET", "/health", &[], b"").status, 200);
    mcp.kill();
}

#[test]
fn tools_answer_over_http_in_both_protocol_eras() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[]);

    // Stateless (2026-07-28): each request carries its version.
    let reply = send(
        port,
        "POST",
        "/mcp",
        &STATELESS,
        &query_call("SELECT id, name FROM pets"),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = &reply.message()["result"];
    assert_eq!(
        result["structuredContent"]["rows"],
        json!([{"id": 1, "name": "rex"}]),
        "{result}"
    );
    let text: Value = serde_json::from_str(crate::support::stdio::inside_boundary(
        result["content"][0]["text"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(text, result["structuredContent"]);

    // A 2025 session: initialize, then calls under its session id.
    let init = send(
        port,
        "POST",
        "/mcp",
        &[ACCEPT, JSON],
        &rpc(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}),
        ),
    );
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(init.message()["result"]["serverInfo"]["name"], "pgmcp");
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let with_session = [
        ACCEPT,
        JSON,
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(send(port, "POST", "/mcp", &with_session, note.as_bytes()).status, 202);
    let reply = send(
        port,
        "POST",
        "/mcp",
        &with_session,
        &rpc(2, "tools/call", json!({"name": "list_tables", "arguments": {}})),
    );
    assert_eq!(
        reply.message()["result"]["structuredContent"]["tables"][0]["name"],
        "pets"
    );
    mcp.kill();
}

#[test]
fn only_token_holders_and_listed_origins_get_in() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[("PGMCP_HTTP_TOKEN", "s3cret-token")]);
    let call = query_call("SELECT 1 AS one");
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("Bearer s3cret-toke"),
        Some("Basic s3cret-token"),
    ] {
        let mut headers = STATELESS.to_vec();
        if let Some(auth) = auth {
            headers.push(("Authorization", auth));
        }
        let reply = send(port, "POST", "/mcp", &headers, &call);
        assert_eq!(reply.status, 401, "{auth:?}: {}", reply.body);
        assert_eq!(reply.header("www-authenticate"), Some(r#"Bearer realm="pgmcp""#));
    }
    let mut ok = STATELESS.to_vec();
    ok.push(("Authorization", "Bearer s3cret-token"));
    let reply = send(port, "POST", "/mcp", &ok, &call);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.message()["result"]["structuredContent"]["rows"],
        json!([{"one": 1}])
    );

    // A browser page from an origin not listed is refused, token or not.
    let mut evil = ok.clone();
    evil.push(("Origin", "https://evil.example"));
    assert_eq!(send(port, "POST", "/mcp", &evil, &call).status, 403);
    // A page of another site on this machine, or one that rebound a name to
    // it, has an origin of its own; pgmcp's own origin is served.
    for origin in ["http://localhost:1", "http://127.0.0.1", "https://127.0.0.1:{port}"] {
        let mut other = ok.clone();
        let origin = origin.replace("{port}", &port.to_string());
        other.push(("Origin", origin.as_str()));
        assert_eq!(send(port, "POST", "/mcp", &other, &call).status, 403, "{origin}");
    }
    for host in ["127.0.0.1", "localhost"] {
        let mut own = ok.clone();
        let origin = format!("http://{host}:{port}");
        own.push(("Origin", origin.as_str()));
        assert_eq!(send(port, "POST", "/mcp", &own, &call).status, 200, "{origin}");
    }

    // A body longer than the longest call the limits accept.
    let big = vec![b' '; 2 << 20];
    let reply = send(port, "POST", "/mcp", &ok, &big);
    assert_eq!(reply.status, 413, "{}", reply.body);

    // The token never reaches the log.
    mcp.kill();
    let log = std::fs::read_to_string(dir.path().join("pgmcp.log")).unwrap();
    assert!(log.contains("serving MCP over HTTP"), "{log}");
    assert!(!log.contains("s3cret-token"), "token in the log");
}

#[test]
fn an_open_address_needs_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let address = format!("0.0.0.0:{}", free_port());
    let mut mcp = McpProcess::spawn(&["serve", "--config", &config, "--http", &address], &[]);
    let status = mcp.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(2), "{}", mcp.stderr());
    assert!(
        mcp.stderr().contains("will not listen on 0.0.0.0") && mcp.stderr().contains("PGMCP_HTTP_TOKEN"),
        "{}",
        mcp.stderr()
    );

    // A tokens file others can read is refused.
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "t0ken\n").unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let config = dir.path().join("config.json");
    let text = std::fs::read_to_string(&config).unwrap().replacen(
        r#""server": {"#,
        &format!(r#""server": {{"auth_tokens_file": {:?}, "#, tokens.to_str().unwrap()),
        1,
    );
    std::fs::write(&config, text).unwrap();
    let mut mcp = McpProcess::spawn(
        &["serve", "--config", config.to_str().unwrap(), "--http", &address],
        &[],
    );
    let status = mcp.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(2), "{}", mcp.stderr());
    assert!(mcp.stderr().contains("chmod 600"), "{}", mcp.stderr());
}

/// SIGTERM stops a long call on the server (no backend left running it),
/// and pgmcp exits 0 within its grace period, the port closed.
#[test]
fn sigterm_stops_calls_and_exits() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[]);
    let long = std::thread::spawn(move || send(port, "POST", "/mcp", &STATELESS, &query_call("SELECT pg_sleep(60)")));
    let running = "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'";
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.psql(running) != "1" {
        assert!(Instant::now() < deadline, "the call never reached the server");
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = Instant::now();
    // SAFETY: signalling the child this test started.
    assert_eq!(unsafe { libc::kill(mcp.pid() as i32, libc::SIGTERM) }, 0);
    let status = mcp.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "{status}: {}", mcp.stderr());
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(db.psql(running), "0", "a backend still runs the call");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    let _ = long.join();
}

/// The MCP Python SDK on PyPI, pinned (`PGMCP_TEST_PYTHON` names a Python
/// that has it instead): its Streamable HTTP client is what many hosted
/// agents use.
const PYTHON_SDK: &str = "mcp==1.30.0";

/// The official MCP Python SDK's Streamable HTTP client: a 2025 session
/// (initialize, tools/list, calls) with the token, and refused without it
/// or with a wrong one.
#[test]
fn the_python_sdk_works_with_and_is_refused_without_a_token() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[("PGMCP_HTTP_TOKEN", "py-t0ken")]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/clients/python_sdk_http.py");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let run = |token: Option<&str>| -> Value {
        let mut cmd = std::process::Command::new(tools::python("PGMCP_TEST_PYTHON", "py", &[PYTHON_SDK]));
        cmd.arg(script).arg(&url);
        if let Some(token) = token {
            cmd.arg(token);
        }
        let out = cmd.output().expect("run the Python client");
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
    };
    let seen = run(Some("py-t0ken"));
    assert_eq!(seen["server"], "pgmcp", "{seen}");
    assert_eq!(
        seen["tools"],
        json!(["describe_table", "diagnose", "explain", "list_tables", "query"])
    );
    assert_eq!(seen["structured"]["rows"], json!([{"id": 1, "name": "rex"}]), "{seen}");
    let text: Value =
        serde_json::from_str(crate::support::stdio::inside_boundary(seen["text"].as_str().unwrap())).unwrap();
    assert_eq!(text, seen["structured"]);
    assert_eq!(seen["is_error"], false);
    assert_eq!(seen["refused"], true, "{seen}");
    let refused = crate::support::stdio::inside_boundary(seen["refused_text"].as_str().unwrap());
    assert!(refused.starts_with("DROP"), "{seen}");
    assert_eq!(db.psql("SELECT count(*) FROM pets"), "1", "the table is still there");

    for token in [None, Some("wrong")] {
        let seen = run(token);
        assert!(
            seen["error"].as_str().is_some_and(|e| e.contains("401 Unauthorized")),
            "{token:?}: {seen}"
        );
    }
    mcp.kill();
}

/// The MCP Inspector from the npm registry, pinned (`PGMCP_TEST_INSPECTOR`
/// names another copy): its CLI mode; 0.17 is the newest that runs on Node
/// 20.
const INSPECTOR: &str = "@modelcontextprotocol/inspector@0.17.5";

/// The MCP Inspector's CLI over Streamable HTTP: lists the tools and runs a
/// query with the token; without it, it cannot connect and says why.
#[test]
fn the_inspector_works_with_and_is_refused_without_a_token() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[("PGMCP_HTTP_TOKEN", "insp-t0ken")]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let run = |args: &[&str]| {
        std::process::Command::new(tools::npm(
            "PGMCP_TEST_INSPECTOR",
            "inspector",
            INSPECTOR,
            "mcp-inspector",
        ))
        .args(["--cli", &url, "--transport", "http"])
        .args(args)
        .output()
        .expect("run the Inspector")
    };
    let auth = ["--header", "Authorization: Bearer insp-t0ken"];
    let out = run(&[&["--method", "tools/list"][..], &auth[..]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        tool_names(&listed),
        ["describe_table", "diagnose", "explain", "list_tables", "query"]
    );

    let call = [
        "--method",
        "tools/call",
        "--tool-name",
        "query",
        "--tool-arg",
        "sql=SELECT id, name FROM pets",
    ];
    let out = run(&[&call[..], &auth[..]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        result["structuredContent"]["rows"],
        json!([{"id": 1, "name": "rex"}]),
        "{result}"
    );

    let out = run(&call);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("a bearer token is required"), "{stderr}");
    mcp.kill();
}

/// A client that opens a connection and never finishes its headers is
/// dropped, rather than holding the connection for ever.
#[test]
fn a_client_that_never_finishes_its_headers_is_dropped() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[]);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "still open after {:?}",
        started.elapsed()
    );
    // And the server still serves others.
    assert_eq!(send(port, "GET", "/health", &[], b"").status, 200);
    mcp.kill();
}

/// The health paths need no token, so probes must not reach the database
/// one each: however many arrive, the database is asked at most once a
/// second, and every probe still gets its answer within about a second.
#[test]
fn readiness_probes_cannot_flood_the_database() {
    // A "database" that accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    {
        let accepted = accepted.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in silent.incoming().flatten() {
                accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                held.push(stream);
            }
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("postgresql://nobody@127.0.0.1:{silent_port}/none?connect_timeout=30");
    let (mut mcp, port) = start(&url, dir.path(), &[]);
    let started = Instant::now();
    let probes: Vec<_> = (0..12)
        .map(|_| std::thread::spawn(move || send(port, "GET", "/health/ready", &[], b"").status))
        .collect();
    for probe in probes {
        assert_eq!(probe.join().unwrap(), 503);
    }
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    let asked = accepted.load(std::sync::atomic::Ordering::SeqCst);
    assert!(asked <= 2, "12 probes reached the database {asked} times");
    mcp.kill();
}

/// A client that goes away mid-call does not leave its statement running
/// on the server.
#[test]
fn a_client_that_disconnects_cancels_its_statement() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start(&db.url, dir.path(), &[]);
    let running = "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'";
    let body = query_call("SELECT pg_sleep(60)");
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in STATELESS {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.psql(running) != "1" {
        assert!(Instant::now() < deadline, "the call never reached the server");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.psql(running) != "0" {
        assert!(
            Instant::now() < deadline,
            "the statement still runs 10 s after its client left"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    mcp.kill();
}

/// Many clients share one pool: with `pool.max_conns` at 2, twelve calls in
/// flight from twelve connections never hold more than two backends, and
/// every call is answered.
#[test]
fn many_clients_share_the_pool() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], |config| {
        config.replacen('{', r#"{"pool": {"max_conns": 2},"#, 1)
    });
    let calls: Vec<_> = (0..12)
        .map(|i| {
            std::thread::spawn(move || {
                let sql = format!("SELECT {i} AS n, pg_sleep(0.3)");
                let reply = send(port, "POST", "/mcp", &STATELESS, &query_call(&sql));
                reply.message()["result"]["structuredContent"]["rows"][0]["n"].clone()
            })
        })
        .collect();
    let backends =
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgmcp' AND backend_type = 'client backend'";
    let mut most = 0;
    while calls.iter().any(|c| !c.is_finished()) {
        most = most.max(db.psql(backends).parse::<u32>().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut answered: Vec<Value> = calls.into_iter().map(|c| c.join().unwrap()).collect();
    answered.sort_by_key(|n| n.as_i64());
    assert_eq!(answered, (0..12).map(|i| json!(i)).collect::<Vec<_>>());
    assert!((1..=2).contains(&most), "{most} backends at once");
    mcp.kill();
}

/// `server.max_sessions` bounds the 2025 sessions open at once: past it,
/// `initialize` is refused with a message saying what to do, and ending a
/// session frees its place.
#[test]
fn open_sessions_are_capped() {
    let db = db();
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = start_with(&db.url, dir.path(), &[], |config| {
        config.replacen(r#""server": {"#, r#""server": {"max_sessions": 2, "#, 1)
    });
    let initialize = || {
        send(
            port,
            "POST",
            "/mcp",
            &[ACCEPT, JSON],
            &rpc(
                1,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}),
            ),
        )
    };
    let first = initialize();
    let second = initialize();
    let ids: Vec<String> = [&first, &second]
        .iter()
        .map(|r| r.header("mcp-session-id").expect("a session").to_owned())
        .collect();
    let third = initialize();
    assert!(third.status >= 400, "{} {}", third.status, third.body);
    assert!(third.body.contains("too many open sessions"), "{}", third.body);
    assert!(third.header("mcp-session-id").is_none());

    let end = send(port, "DELETE", "/mcp", &[ACCEPT, ("Mcp-Session-Id", &ids[0])], b"");
    assert!(end.status < 300, "{} {}", end.status, end.body);
    let again = initialize();
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.header("mcp-session-id").is_some());
    mcp.kill();
}
