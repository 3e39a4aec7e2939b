//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned: the stable release, and the prerelease with the 2026-07-28
//! stateless scenarios) against `pgmcp serve --http`, the real binary on an
//! SQLite file. The suite reaches servers over HTTP only and runs on
//! Node 22.
//!
//! Every check of every scenario must pass, except the reviewed list in
//! [`EXCLUDED`]: checks that call tools, prompts or resources only the
//! suite's own test server defines, or that test a capability pgmcp does
//! not declare. A listed check that starts passing fails the test too, so
//! the list cannot outlive its reason.

use std::collections::BTreeSet;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::files::sqlite::{fixture, url};
use crate::support::stdio::McpProcess;
use crate::support::tools;

/// The stable suite.
const STABLE: &str = "@modelcontextprotocol/conformance@0.1.16";
/// The prerelease with the 2026-07-28 scenarios.
const PRERELEASE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";

const FIXTURE_TOOL: &str = "calls a tool only the suite's own test server defines";
const FIXTURE_PROMPT: &str = "gets a prompt only the suite's own test server defines";
const FIXTURE_RESOURCE: &str = "reads a test:// resource only the suite's own test server defines";
const LOGGING: &str = "needs the logging capability, which pgmcp does not declare (MCP logging is deprecated by \
                       SEP-2577; pgmcp logs to a file): logging/setLevel answers -32601";
const SUBSCRIBE: &str = "needs resources.subscribe, which pgmcp does not declare (no change notifications): \
                         resources/subscribe answers -32601";
const TASKS: &str = "the tasks extension (SEP-2663), which pgmcp does not declare; the suite does not score it \
                     for 2026-07-28. Its non-declaring checks expect -32021 where rmcp 3.9 answers -32601, \
                     which is what pgmcp promises for every method it does not declare";
const CUSTOM_HEADERS: &str = "pending scenario; needs a tool with x-mcp-header annotations, and pgmcp's tools \
                              take none";
const INPUT_REQUIRED: &str = "calls a tool or prompt of the suite's own test server that asks the client for \
                              input mid-call (SEP-2322); pgmcp never does";

/// (scenario, check, why it cannot pass against pgmcp).
const EXCLUDED: &[(&str, &str, &str)] = &[
    ("tools-call-simple-text", "tools-call-simple-text", FIXTURE_TOOL),
    ("tools-call-image", "tools-call-image", FIXTURE_TOOL),
    ("tools-call-audio", "tools-call-audio", FIXTURE_TOOL),
    (
        "tools-call-embedded-resource",
        "tools-call-embedded-resource",
        FIXTURE_TOOL,
    ),
    ("tools-call-mixed-content", "tools-call-mixed-content", FIXTURE_TOOL),
    ("tools-call-error", "tools-call-error", FIXTURE_TOOL),
    ("tools-call-with-progress", "tools-call-with-progress", FIXTURE_TOOL),
    ("tools-call-sampling", "tools-call-sampling", FIXTURE_TOOL),
    ("tools-call-elicitation", "tools-call-elicitation", FIXTURE_TOOL),
    (
        "elicitation-sep1034-defaults",
        "elicitation-sep1034-general",
        FIXTURE_TOOL,
    ),
    ("elicitation-sep1330-enums", "elicitation-sep1330-general", FIXTURE_TOOL),
    ("json-schema-2020-12", "json-schema-2020-12-tool-found", FIXTURE_TOOL),
    (
        "server-stateless",
        "sep-2575-server-rejects-undeclared-capability",
        "needs the suite's diagnostic tool test_missing_capability",
    ),
    (
        "server-stateless",
        "sep-2575-missing-capability-http-400",
        "needs the suite's diagnostic tool test_missing_capability",
    ),
    (
        "server-stateless",
        "sep-2575-http-server-no-independent-requests-on-stream",
        "needs the suite's diagnostic tool test_streaming_elicitation",
    ),
    (
        "server-stateless",
        "sep-2575-server-no-log-without-loglevel",
        "needs the suite's diagnostic tool test_logging_tool",
    ),
    ("prompts-get-simple", "prompts-get-simple", FIXTURE_PROMPT),
    ("prompts-get-with-args", "prompts-get-with-args", FIXTURE_PROMPT),
    (
        "prompts-get-embedded-resource",
        "prompts-get-embedded-resource",
        FIXTURE_PROMPT,
    ),
    ("prompts-get-with-image", "prompts-get-with-image", FIXTURE_PROMPT),
    ("resources-read-text", "resources-read-text", FIXTURE_RESOURCE),
    ("resources-read-binary", "resources-read-binary", FIXTURE_RESOURCE),
    ("resources-templates-read", "resources-templates-read", FIXTURE_RESOURCE),
    ("resources-subscribe", "resources-subscribe", SUBSCRIBE),
    ("resources-unsubscribe", "resources-unsubscribe", SUBSCRIBE),
    ("logging-set-level", "logging-set-level", LOGGING),
    ("tools-call-with-logging", "tools-call-with-logging", LOGGING),
    (
        "input-required-result-basic-elicitation",
        "sep-2322-elicitation-incomplete",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-basic-sampling",
        "sep-2322-sampling-incomplete",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-basic-list-roots",
        "sep-2322-list-roots-incomplete",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-request-state",
        "sep-2322-request-state-incomplete",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-multiple-input-requests",
        "sep-2322-multiple-inputs-incomplete",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-multi-round",
        "sep-2322-multi-round-r1",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-missing-input-response",
        "sep-2322-missing-response-rerequests",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-non-tool-request",
        "sep-2322-non-tool-incomplete",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-result-type",
        "sep-2322-result-type-included",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-tampered-state",
        "sep-2322-reject-tampered-state",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-capability-check",
        "sep-2322-respect-client-capabilities",
        INPUT_REQUIRED,
    ),
    (
        "input-required-result-ignore-extra-params",
        "sep-2322-ignore-unexpected-params",
        INPUT_REQUIRED,
    ),
    (
        "http-custom-header-server-validation",
        "sep-2243-server-no-xmcp-tool",
        CUSTOM_HEADERS,
    ),
    (
        "http-custom-header-server-validation",
        "sep-2243-server-decode-base64",
        CUSTOM_HEADERS,
    ),
    (
        "http-custom-header-server-validation",
        "sep-2243-server-validate-param-match",
        CUSTOM_HEADERS,
    ),
    (
        "http-custom-header-server-validation",
        "sep-2243-server-reject-invalid-param-chars",
        CUSTOM_HEADERS,
    ),
    (
        "http-custom-header-server-validation",
        "sep-2243-server-reject-param-mismatch",
        CUSTOM_HEADERS,
    ),
    ("tasks-lifecycle", "*", TASKS),
    ("tasks-capability-negotiation", "*", TASKS),
    ("tasks-wire-fields", "*", TASKS),
    ("tasks-request-state-removal", "*", TASKS),
    ("tasks-mrtr-input", "*", TASKS),
    ("tasks-request-headers", "*", TASKS),
    ("tasks-dispatch-and-envelope", "*", TASKS),
    ("tasks-required-task-error", "*", TASKS),
    ("tasks-mrtr-composition", "*", TASKS),
];

/// The scenarios pgmcp's capabilities make applicable, each of which must
/// have run and passed whole in at least one suite.
const MUST_PASS: &[&str] = &[
    "server-initialize",
    "server-session-lifecycle",
    "ping",
    "completion-complete",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "sep-2164-resource-not-found",
    "caching",
    "http-header-validation",
];

use crate::support::net::free_port;

/// `pgmcp serve --http` on a loopback port, without tokens (the suite
/// sends no headers of its own), on an SQLite file.
fn serve(dir: &Path, database: &str) -> (McpProcess, u16) {
    let port = free_port();
    let config = dir.join("config.json");
    let text = json!({
        "logging": {"output": dir.join("pgmcp.log")},
        "query": {"default_timeout_seconds": 10},
    });
    std::fs::write(&config, text.to_string()).unwrap();
    let address = format!("127.0.0.1:{port}");
    let mcp = McpProcess::spawn(
        &[
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--database",
            database,
            "--http",
            &address,
        ],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "not listening: {}", mcp.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    (mcp, port)
}

/// One finished check: (scenario, check id, status, message).
type Check = (String, String, String, String);

/// Run `package`'s server suite with `args` against `url`; the checks it
/// recorded, read from its output directory.
fn run_suite(package: &str, dir: &str, url: &str, args: &[&str], out: &Path) -> Vec<Check> {
    let run = tools::on_node22(
        &format!("PGMCP_TEST_{}", dir.to_uppercase().replace(['-', '.'], "_")),
        dir,
        package,
        "conformance",
    )
    .args(["server", "--url", url, "-o"])
    .arg(out)
    .args(args)
    .output()
    .expect("run the conformance suite");
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(out).unwrap_or_else(|e| {
        panic!(
            "{package} wrote no results ({e}): {}\n{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        )
    }) {
        let path = entry.unwrap().path();
        // `server-<scenario>-<timestamp>`
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let scenario = name.strip_prefix("server-").unwrap_or(&name);
        let scenario = scenario.get(..scenario.len().saturating_sub(25)).unwrap_or(scenario);
        let recorded: Value =
            serde_json::from_str(&std::fs::read_to_string(path.join("checks.json")).unwrap()).unwrap();
        for check in recorded.as_array().unwrap() {
            checks.push((
                scenario.to_owned(),
                check["id"].as_str().unwrap_or_default().to_owned(),
                check["status"].as_str().unwrap_or_default().to_owned(),
                check["errorMessage"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    checks
}

fn excluded(scenario: &str, check: &str) -> bool {
    EXCLUDED
        .iter()
        .any(|(s, c, _)| *s == scenario && (*c == check || *c == "*"))
}

#[test]
fn the_official_conformance_suites_pass() {
    let (_db_dir, path) = fixture("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT);");
    let dir = tempfile::tempdir().unwrap();
    let (mut mcp, port) = serve(dir.path(), &url(&path));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let results = tempfile::tempdir().unwrap();
    let runs = [
        (STABLE, "conformance-0.1.16", &[][..]),
        (PRERELEASE, "conformance-0.2.0-alpha.12", &[][..]),
        (
            PRERELEASE,
            "conformance-0.2.0-alpha.12",
            &["--requirements", "2026-07-28"][..],
        ),
    ];
    let mut checks = Vec::new();
    for (i, (package, dir, args)) in runs.iter().enumerate() {
        let ran = run_suite(package, dir, &url, args, &results.path().join(i.to_string()));
        let scenarios: BTreeSet<&str> = ran.iter().map(|c| c.0.as_str()).collect();
        assert!(scenarios.len() >= 20, "{package} {args:?} ran only {scenarios:?}");
        checks.extend(ran);
    }
    mcp.kill();

    let mut failed = Vec::new();
    let mut excluded_seen = BTreeSet::new();
    for (scenario, check, status, message) in &checks {
        let fine = matches!(status.as_str(), "SUCCESS" | "INFO" | "SKIPPED");
        if fine {
            continue;
        }
        if excluded(scenario, check) {
            excluded_seen.insert((scenario.as_str(), check.as_str()));
        } else {
            failed.push(format!("{scenario} / {check}: {status} {message}"));
        }
    }
    assert!(failed.is_empty(), "conformance failures:\n{}", failed.join("\n"));

    // The list holds only what still fails.
    let stale: Vec<_> = EXCLUDED
        .iter()
        .filter(|(s, c, _)| !excluded_seen.iter().any(|(ss, cc)| ss == s && (c == cc || *c == "*")))
        .collect();
    assert!(
        stale.is_empty(),
        "excluded checks that no longer fail (remove them): {stale:?}"
    );

    for scenario in MUST_PASS {
        let of: Vec<_> = checks.iter().filter(|c| c.0 == *scenario).collect();
        assert!(!of.is_empty(), "{scenario} never ran");
        assert!(
            of.iter()
                .all(|c| matches!(c.2.as_str(), "SUCCESS" | "INFO" | "SKIPPED")),
            "{scenario}: {of:?}"
        );
        assert!(of.iter().any(|c| c.2 == "SUCCESS"), "{scenario} passed nothing: {of:?}");
    }
}
