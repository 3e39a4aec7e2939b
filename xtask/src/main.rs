//! Release tasks for pgmcp, run as `cargo xtask <task>` (the alias lives in
//! `.cargo/config.toml`). They are plain Rust, not shell, so the same command
//! runs on every release runner (Linux, macOS, Windows) and on a developer's
//! machine, and the test suite runs them exactly as the release workflow does.

mod archive;
mod bundle;
mod project;
mod registry;
mod tools;
mod workflow;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
Release tasks for pgmcp.

Usage: cargo xtask <TASK> [OPTIONS]

Tasks:
  dist   Build the release binary (with DuckDB) and write
         target/dist/pgmcp-<version>-<target>.tar.gz (.zip for Windows)
         holding it, README.md, LICENSE and claude_desktop_config.example.json,
         with a .sha256 beside it.
  mcpb   Write target/dist/pgmcp-<version>-<os>-<arch>.mcpb, the MCP Bundle
         Claude Desktop installs with a double click, with a .sha256 beside it.
  registry
         Write target/dist/server.json for the MCP Registry: server.json with
         the SHA-256 of each bundle it names (all must be in target/dist).
  check-workflow
         Check .github/workflows/release.yml: it parses, pins its actions,
         builds and tests every release target, and calls only these tasks.

Options:
  --binary PATH      Package this pgmcp binary instead of building one (for a
                     binary built elsewhere, e.g. a universal macOS one made
                     with lipo).
  --target TRIPLE    dist: the Rust target to build for (default: the host's);
                     with --binary, only names the archive.
  --os OS            mcpb: darwin, linux or win32 (default: the host's).
  --arch ARCH        mcpb: x64, arm64 or universal (default: the host's).
  --out-dir DIR      Where to write (default: target/dist in the workspace).
  --file PATH        check-workflow: the workflow to check (default:
                     .github/workflows/release.yml).
  -h, --help         Print this help.
";

/// The tasks this crate knows; the release workflow calls only these (a test
/// checks it).
pub const TASKS: &[&str] = &["dist", "mcpb", "registry", "check-workflow"];

/// The options `parse` accepts.
pub const OPTIONS: &[&str] = &["--binary", "--target", "--os", "--arch", "--out-dir", "--file"];

#[derive(Debug, Default)]
struct Options {
    binary: Option<PathBuf>,
    target: Option<String>,
    os: Option<String>,
    arch: Option<String>,
    out_dir: Option<PathBuf>,
    file: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(args: Vec<String>) -> Result<()> {
    let Some((task, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        bail!("no task given");
    };
    if matches!(task.as_str(), "-h" | "--help" | "help") {
        print!("{USAGE}");
        return Ok(());
    }
    if !TASKS.contains(&task.as_str()) {
        bail!("unknown task {task:?}: the tasks are {}", TASKS.join(", "));
    }
    let options = parse(rest)?;
    let project = project::Project::read()?;
    let out_dir = match options.out_dir.clone() {
        Some(dir) => dir,
        None => project.root.join("target").join("dist"),
    };
    if task != "check-workflow" {
        std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    }
    match task.as_str() {
        "dist" => {
            let target = match &options.target {
                Some(t) => t.clone(),
                None => project::host_triple()?,
            };
            let binary = match &options.binary {
                Some(path) => path.clone(),
                None => project.build_release(options.target.as_deref())?,
            };
            let written = archive::dist(&project, &binary, &target, &out_dir)?;
            println!("{}", written.display());
        }
        "mcpb" => {
            let platform = bundle::Platform::choose(options.os.as_deref(), options.arch.as_deref())?;
            let binary = match &options.binary {
                Some(path) => path.clone(),
                None => {
                    // What is built here runs here: a bundle for another
                    // platform packages a binary built there (--binary).
                    let host = bundle::Platform::choose(None, None)?;
                    if (host.os, host.arch) != (platform.os, platform.arch) {
                        bail!(
                            "a {}-{} bundle needs a binary built for it: build it there, or pass --binary",
                            platform.os,
                            platform.arch
                        );
                    }
                    project.build_release(None)?
                }
            };
            let written = bundle::write(&project, &binary, &platform, &out_dir)?;
            println!("{}", written.display());
        }
        "registry" => println!("{}", registry::write(&project, &out_dir)?.display()),
        "check-workflow" => {
            let path = options
                .file
                .clone()
                .unwrap_or_else(|| project.file(".github/workflows/release.yml"));
            workflow::check(&path)?;
            println!("{}: ok", path.display());
        }
        other => unreachable!("task {other} is in TASKS but has no arm"),
    }
    Ok(())
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().cloned().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--binary" => options.binary = Some(PathBuf::from(value()?)),
            "--target" => options.target = Some(value()?),
            "--os" => options.os = Some(value()?),
            "--arch" => options.arch = Some(value()?),
            "--out-dir" => options.out_dir = Some(PathBuf::from(value()?)),
            "--file" => options.file = Some(PathBuf::from(value()?)),
            other => bail!("unknown option {other:?} (see cargo xtask --help)"),
        }
    }
    Ok(options)
}
