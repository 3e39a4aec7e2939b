//! The minimum Rust version pgmcp declares is one its dependencies build with.
//!
//! Only one toolchain is installed where the tests run, so building with the
//! declared version is not possible here; instead, every package pgmcp's
//! build pulls in (normal and build dependencies, every feature, DuckDB's
//! included) must declare a `rust-version` no higher than pgmcp's own.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `1.89` or `1.89.0` as comparable numbers; a missing part is 0.
fn version(text: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = text
        .split('.')
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("rust-version {text:?} is not a version"))
        })
        .collect();
    parts.resize(3, 0);
    parts
}

#[test]
fn no_dependency_needs_a_newer_rust_than_pgmcp_declares() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--all-features", "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let packages: HashMap<&str, &Value> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().expect("package id"), p))
        .collect();
    let nodes: HashMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .expect("resolve.nodes")
        .iter()
        .map(|n| (n["id"].as_str().expect("node id"), n))
        .collect();
    let root = packages
        .values()
        .find(|p| p["name"] == "pgmcp")
        .expect("pgmcp is in the workspace");
    let declared = root["rust_version"].as_str().expect("pgmcp declares rust-version");

    // Walk what building pgmcp compiles: dev-dependencies are for its tests only.
    let mut seen = BTreeSet::new();
    let mut todo = vec![root["id"].as_str().expect("pgmcp id")];
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().expect("deps") {
            let builds = dep["dep_kinds"]
                .as_array()
                .expect("dep_kinds")
                .iter()
                .any(|k| k["kind"].is_null() || k["kind"] == "build");
            if builds {
                todo.push(dep["pkg"].as_str().expect("dep pkg"));
            }
        }
    }
    assert!(
        seen.iter().any(|id| packages[id]["name"] == "rusqlite"),
        "the walk reaches pgmcp's dependencies"
    );
    let newer: Vec<String> = seen
        .iter()
        .filter_map(|id| {
            let p = packages[id];
            let needs = p["rust_version"].as_str()?;
            (version(needs) > version(declared)).then(|| {
                format!(
                    "{} {} needs Rust {needs}",
                    p["name"].as_str().unwrap_or("?"),
                    p["version"].as_str().unwrap_or("?")
                )
            })
        })
        .collect();
    assert!(
        newer.is_empty(),
        "Cargo.toml says rust-version = \"{declared}\", but:\n  {}\nraise rust-version (and the README's \"Rust (... or newer)\"), or pin an older release",
        newer.join("\n  ")
    );
}
