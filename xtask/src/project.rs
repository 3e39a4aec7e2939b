//! What the tasks need to know of the workspace (its root, target directory
//! and pgmcp's version, all as cargo reports them) and the one release build.

use std::ffi::OsString;
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
/// rustup toolchain override applies to the release build too; without
/// what cargo set to describe the xtask package (see [`set_for_the_package`]).
fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for name in set_for_the_package(std::env::vars_os().map(|(name, _)| name)) {
        cargo.env_remove(name);
    }
    cargo
}

/// Of the variables named in `present`, those cargo sets for a crate it
/// compiles or a program it runs ("Environment variables Cargo sets for
/// crates" in the cargo reference): `cargo xtask` is `cargo run`, so this
/// process has them, describing the xtask package. A nested `cargo build`
/// that inherits them sees a changed environment: ring's build script
/// declares `rerun-if-env-changed` on CARGO_PKG_NAME, CARGO_MANIFEST_DIR and
/// others, so `cargo xtask dist` after `cargo build --release` rebuilt ring,
/// rustls and pgmcp (over 6 minutes on two cores), and the next plain
/// `cargo build --release` rebuilt them back.
///
/// CARGO stays: it names the cargo to run. The person's own settings stay
/// (CARGO_TARGET_DIR, CARGO_HOME, CARGO_BUILD_*, RUSTFLAGS, ...): the release
/// build must be built as they asked. So does the library path cargo run
/// extends (LD_LIBRARY_PATH, DYLD_FALLBACK_LIBRARY_PATH, PATH on Windows):
/// cargo adds its own directories to the person's value, which cannot be
/// told apart from theirs, and no build script pgmcp depends on watches it.
fn set_for_the_package(present: impl Iterator<Item = OsString>) -> Vec<OsString> {
    /// Set one at a time: some only while compiling (a nested cargo started
    /// from a build script or a test would inherit them), OUT_DIR when the
    /// package has a build script.
    const NAMES: &[&str] = &[
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_WORKSPACE_DIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    /// Families: one variable per manifest field (CARGO_PKG_NAME,
    /// CARGO_PKG_VERSION_MAJOR, ...; new fields add new ones), one per
    /// binary of the package for its integration tests.
    const PREFIXES: &[&str] = &["CARGO_PKG_", "CARGO_BIN_EXE_"];
    present
        .filter(|name| {
            name.to_str()
                .is_some_and(|name| NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)))
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_cargo_keeps_the_persons_settings_and_drops_the_packages_description() {
        let cases = [
            // What `cargo run` set for the xtask program (cargo 1.95).
            ("CARGO_PKG_NAME", true),
            ("CARGO_PKG_VERSION", true),
            ("CARGO_PKG_VERSION_PRE", true),
            ("CARGO_PKG_DESCRIPTION", true),
            ("CARGO_PKG_RUST_VERSION", true),
            ("CARGO_MANIFEST_DIR", true),
            ("CARGO_MANIFEST_PATH", true),
            // What cargo sets while compiling.
            ("CARGO_CRATE_NAME", true),
            ("CARGO_BIN_NAME", true),
            ("CARGO_PRIMARY_PACKAGE", true),
            ("CARGO_BIN_EXE_pgmcp", true),
            ("CARGO_TARGET_TMPDIR", true),
            ("OUT_DIR", true),
            // Which cargo, and the person's settings.
            ("CARGO", false),
            ("CARGO_HOME", false),
            ("CARGO_TARGET_DIR", false),
            ("CARGO_BUILD_JOBS", false),
            ("CARGO_PROFILE_RELEASE_LTO", false),
            ("CARGO_ENCODED_RUSTFLAGS", false),
            ("CARGO_INCREMENTAL", false),
            ("CARGO_PKG", false),
            ("RUSTFLAGS", false),
            ("RUSTC", false),
            ("RUSTUP_TOOLCHAIN", false),
            ("LD_LIBRARY_PATH", false),
            ("PATH", false),
        ];
        let dropped = set_for_the_package(cases.iter().map(|(name, _)| OsString::from(name)));
        for (name, drop) in cases {
            assert_eq!(dropped.contains(&OsString::from(name)), drop, "{name}");
        }
    }

    #[test]
    fn the_nested_command_is_given_none_of_them() {
        // `cargo test` describes the package to this test as `cargo run`
        // does to the task.
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
        let cargo = cargo();
        let removed: Vec<&std::ffi::OsStr> = cargo
            .get_envs()
            .filter_map(|(name, value)| value.is_none().then_some(name))
            .collect();
        for name in ["CARGO_PKG_NAME", "CARGO_PKG_VERSION", "CARGO_MANIFEST_DIR"] {
            assert!(removed.contains(&std::ffi::OsStr::new(name)), "{name}");
        }
        assert!(!removed.contains(&std::ffi::OsStr::new("CARGO")));
        assert_eq!(cargo.get_envs().filter(|(_, value)| value.is_some()).count(), 0);
    }
}
