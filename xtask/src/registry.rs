//! `cargo xtask registry`: the `server.json` the MCP Registry publishes. The
//! committed `server.json` names the packages (the bundles of a release and
//! the crate); the registry also wants each bundle's SHA-256, known only once
//! the bundles are built, so this task writes `<out-dir>/server.json` with
//! them filled in from the bundles themselves.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::project::Project;

pub fn write(project: &Project, out_dir: &Path) -> Result<PathBuf> {
    let source = project.file("server.json");
    let text = std::fs::read_to_string(&source).with_context(|| format!("cannot read {}", source.display()))?;
    let mut server: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", source.display()))?;
    check(project, &server)?;
    let mut missing = Vec::new();
    for package in server["packages"].as_array_mut().into_iter().flatten() {
        if package["registryType"] != "mcpb" {
            continue;
        }
        let name = bundle_name(package)?;
        let bundle = out_dir.join(&name);
        match std::fs::read(&bundle) {
            Ok(data) => {
                let sum: String = Sha256::digest(&data).iter().map(|b| format!("{b:02x}")).collect();
                package["fileSha256"] = Value::String(sum);
            }
            Err(_) => missing.push(name),
        }
    }
    if !missing.is_empty() {
        bail!(
            "server.json names bundles that are not in {}: {} (build them with cargo xtask mcpb)",
            out_dir.display(),
            missing.join(", ")
        );
    }
    let path = out_dir.join("server.json");
    std::fs::write(&path, serde_json::to_string_pretty(&server)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The file a bundle package downloads: the last segment of its URL.
fn bundle_name(package: &Value) -> Result<String> {
    let url = package["identifier"]
        .as_str()
        .context("an mcpb package without an identifier")?;
    url.rsplit('/')
        .next()
        .filter(|name| name.ends_with(".mcpb"))
        .map(str::to_owned)
        .with_context(|| format!("mcpb identifier {url:?} does not end in a .mcpb file"))
}

/// What the registry would refuse, and what would drift from the release:
/// the version everywhere it appears, the README's `mcp-name:` line (how the
/// registry verifies the crate), and the fields each package type needs.
fn check(project: &Project, server: &Value) -> Result<()> {
    let version = &project.version;
    ensure!(
        server["version"] == version.as_str(),
        "server.json: version {} is not Cargo.toml's {version}",
        server["version"]
    );
    ensure!(
        server["repository"]["url"] == project.repository.as_str(),
        "server.json: repository.url is not Cargo.toml's {}",
        project.repository
    );
    let name = server["name"].as_str().context("server.json: no name")?;
    let description = server["description"].as_str().context("server.json: no description")?;
    ensure!(
        (1..=100).contains(&description.chars().count()),
        "server.json: description must be 1 to 100 characters"
    );
    let readme = std::fs::read_to_string(project.file("README.md"))?;
    ensure!(
        readme.contains(&format!("mcp-name: {name}")),
        "README.md has no `mcp-name: {name}` line (the registry reads it to verify the crate)"
    );
    let packages = server["packages"].as_array().context("server.json: no packages")?;
    for package in packages {
        ensure!(
            package["transport"]["type"] == "stdio",
            "server.json: every package runs over stdio"
        );
        match package["registryType"].as_str() {
            Some("mcpb") => {
                let name = bundle_name(package)?;
                let url = package["identifier"].as_str().unwrap_or_default();
                let release = format!("{}/releases/download/v{version}/pgmcp-{version}-", project.repository);
                ensure!(
                    url.starts_with(&release) && name.ends_with(".mcpb"),
                    "server.json: {url} is not a bundle of release v{version} ({release}...)"
                );
            }
            Some("cargo") => ensure!(
                package["version"] == version.as_str() && package["identifier"] == "pgmcp",
                "server.json: the cargo package must be pgmcp {version}"
            ),
            other => bail!("server.json: unexpected package type {other:?}"),
        }
    }
    Ok(())
}
