//! `pgmcp` run to its end within a time limit (a hang is a failure, not a
//! stuck test), what it said, and FIFOs for it to be handed.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::pgmcp_std;

/// `cmd` run to its end, or killed after `limit`: `None` when it had to be.
pub fn within(mut cmd: Command, limit: Duration) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

pub fn run(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = pgmcp_std(home);
    cmd.args(args).envs(env.iter().copied());
    within(cmd, Duration::from_secs(20)).unwrap_or_else(|| panic!("pgmcp {args:?} {env:?} did not finish"))
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}
