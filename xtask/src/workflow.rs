//! `cargo xtask check-workflow`: the release workflow runs only on GitHub, on
//! a tag, so a mistake in it shows up on release day. This reads it as GitHub
//! would (YAML) and checks what can be checked here: every job has a runner
//! and steps, every action is pinned to a version, every `cargo xtask` call
//! names a task and options that exist, every release target is built and
//! tested, and the macOS binary is made universal.

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use yaml_rust2::{Yaml, YamlLoader};

/// The targets a release ships, each built natively and tested.
const TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-pc-windows-msvc",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
];

pub fn check(path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let docs = YamlLoader::load_from_str(&text).with_context(|| format!("{} is not YAML", path.display()))?;
    let [workflow] = docs.as_slice() else {
        bail!("{}: expected one YAML document", path.display());
    };
    ensure!(
        !workflow["on"]["push"]["tags"].is_badvalue(),
        "the workflow must run on pushed tags (on.push.tags)"
    );
    let jobs = workflow["jobs"].as_hash().context("the workflow has no jobs")?;
    let mut scripts = String::new();
    for (name, job) in jobs {
        let name = name.as_str().unwrap_or("?");
        ensure!(!job["runs-on"].is_badvalue(), "job {name}: no runs-on");
        let steps = job["steps"].as_vec().with_context(|| format!("job {name}: no steps"))?;
        for step in steps {
            if let Some(action) = step["uses"].as_str() {
                let (_, version) = action
                    .split_once('@')
                    .with_context(|| format!("job {name}: action {action} is not pinned to a version"))?;
                ensure!(!version.is_empty(), "job {name}: action {action} has an empty version");
            }
            if let Some(run) = step["run"].as_str() {
                check_xtask_calls(name, run)?;
                scripts.push_str(run);
                scripts.push('\n');
            }
        }
        // Matrix values are where targets are usually named.
        scripts.push_str(&yaml_text(&job["strategy"]));
    }
    for target in TARGETS {
        ensure!(scripts.contains(target), "the workflow never builds {target}");
    }
    ensure!(scripts.contains("cargo test"), "the workflow runs no tests");
    ensure!(
        scripts.contains("lipo -create"),
        "the macOS binary is not made universal (lipo -create)"
    );
    for task in ["dist", "mcpb", "registry"] {
        ensure!(
            scripts.contains(&format!("cargo xtask {task}")),
            "the workflow never runs cargo xtask {task}"
        );
    }
    Ok(())
}

/// Every `cargo xtask <task> [--option value]...` in a script must name a
/// task and options the xtask knows.
fn check_xtask_calls(job: &str, script: &str) -> Result<()> {
    for line in script.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("cargo xtask") {
            rest = &rest[at + "cargo xtask".len()..];
            let mut words = rest.split_whitespace();
            let task = words.next().unwrap_or("");
            ensure!(
                crate::TASKS.contains(&task),
                "job {job}: `cargo xtask {task}` is not a task (tasks: {})",
                crate::TASKS.join(", ")
            );
            for word in words.take_while(|w| !matches!(*w, "&&" | "||" | ";" | "|")) {
                if word.starts_with("--") {
                    ensure!(
                        crate::OPTIONS.contains(&word),
                        "job {job}: `cargo xtask {task}` has no option {word}"
                    );
                }
            }
        }
    }
    Ok(())
}

/// All the scalars in a YAML value, one per line.
fn yaml_text(value: &Yaml) -> String {
    match value {
        Yaml::String(s) => format!("{s}\n"),
        Yaml::Array(items) => items.iter().map(yaml_text).collect(),
        Yaml::Hash(map) => map.iter().map(|(k, v)| yaml_text(k) + &yaml_text(v)).collect(),
        _ => String::new(),
    }
}
