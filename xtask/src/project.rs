//! What the tasks need to know of the workspace (its root, target directory
//! and pgmcp's version, all as cargo reports them) and the one release build.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

pub struct Project {
    /// The workspace root: the files that ship with the binary live here.
    pub root: PathBuf,
    /// Where cargo builds (honours CARGO_TARGET_DIR and .cargo/config.toml).
    pub target_dir: PathBuf,
    /// pgmcp's version, from its Cargo.toml.
    pub version: String,
    /// pgmcp's repository URL, from its Cargo.toml.
    pub repository: String,
}

/// The cargo that runs this task (cargo sets CARGO for what it runs), so a
/// rustup toolchain override applies to the release build too.
fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

impl Project {
    pub fn read() -> Result<Project> {
        let output = cargo()
            .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
            .output()
            .context("cannot run cargo metadata")?;
        if !output.status.success() {
            bail!(
                "cargo metadata failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let metadata: Value = serde_json::from_slice(&output.stdout).context("cargo metadata printed no JSON")?;
        let text = |v: &Value| v.as_str().map(str::to_owned);
        let root = text(&metadata["workspace_root"]).context("cargo metadata: no workspace_root")?;
        let target_dir = text(&metadata["target_directory"]).context("cargo metadata: no target_directory")?;
        let pgmcp = metadata["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == "pgmcp")
            .context("cargo metadata: no pgmcp package")?;
        Ok(Project {
            root: root.into(),
            target_dir: target_dir.into(),
            version: text(&pgmcp["version"]).context("Cargo.toml: pgmcp has no version")?,
            repository: text(&pgmcp["repository"]).context("Cargo.toml: pgmcp has no repository")?,
        })
    }

    /// Build the binary people download: release profile (stripped, thin
    /// LTO), DuckDB compiled in, dependencies exactly as Cargo.lock has them.
    /// Returns the binary's path.
    pub fn build_release(&self, target: Option<&str>) -> Result<PathBuf> {
        let mut build = cargo();
        build.current_dir(&self.root).args([
            "build",
            "--release",
            "--locked",
            "--features",
            "duckdb",
            "--bin",
            "pgmcp",
        ]);
        if let Some(target) = target {
            build.args(["--target", target]);
        }
        eprintln!(
            "xtask: cargo build --release --locked --features duckdb --bin pgmcp (DuckDB's C++ alone takes about 30 minutes on two cores the first time)"
        );
        let status = build.status().context("cannot run cargo build")?;
        if !status.success() {
            bail!("cargo build failed ({status})");
        }
        let dir = match target {
            Some(target) => self.target_dir.join(target).join("release"),
            None => self.target_dir.join("release"),
        };
        let windows = target.map_or(cfg!(windows), |t| t.contains("windows"));
        let binary = dir.join(if windows { "pgmcp.exe" } else { "pgmcp" });
        if !binary.is_file() {
            bail!("cargo build succeeded but {} is missing", binary.display());
        }
        Ok(binary)
    }

    /// A file that ships beside the binary.
    pub fn file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

/// The host's target triple, as rustc names it.
pub fn host_triple() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV named no host")
}

/// Size in MB with one decimal, for the lines a person reads.
pub fn megabytes(path: &Path) -> Result<String> {
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    Ok(format!("{:.1} MB", bytes as f64 / 1_000_000.0))
}
