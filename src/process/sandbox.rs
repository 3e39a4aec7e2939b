//! The kernel's fence around SQL that may name files.
//!
//! With a file switch on (`allow_file_functions`, `allow_attach`,
//! `allow_vacuum_into`), a statement names files the engine then opens, and
//! a check of the name's text cannot say where the kernel lands: `..` is
//! taken from where a symbolic link points (`/var/run/../proc` is `/proc`),
//! and DuckDB computes names at run time, then checks them as text. Behind
//! such a name are the MCP channel's pipes (`/proc/self/fd/N`), the
//! environment's secrets, devices, and every other process of the user.
//!
//! So `pgmcp serve` puts the kernel between those statements and that: on
//! Linux, before any thread that runs SQL exists, it
//! - closes the descriptors the client let it inherit besides 0-2;
//! - takes the channel and stderr off pipes: when the client's stdin, stdout
//!   and stderr are not sockets already, a relay process (pgmcp itself,
//!   [`crate::door::stdio::channel::relay`]) keeps them and talks to pgmcp
//!   over sockets, which no path reopens;
//! - enters a Landlock domain: files anywhere but under `/proc`, `/dev` (but
//!   `/dev/null`) and `/sys`, as the kernel resolves them, and no access to
//!   other processes, the relay included (read: the container limits under
//!   `/proc/self/cgroup` and `/sys/fs/cgroup`, which engines size themselves
//!   by). Hooks inherit it.
//!
//! What it does not fence: writes. A switch that writes files (`COPY ... TO`,
//! `VACUUM INTO`, `EXPORT DATABASE`) writes wherever the user may, pgmcp's
//! own config and hooks included.
//!
//! Where the kernel cannot fence (another system, a Linux without Landlock),
//! `allow_file_functions` is refused, since DuckDB's own directory check
//! compares text; SQLite's `ATTACH` and `VACUUM INTO` take literal names the
//! guard reads (no `..` after a name, no name of pgmcp's own process), and
//! are served with that alone.

use crate::guard::{Policy, Rule};

/// The switches that let a statement name a file the engine opens.
const FILE_SWITCHES: [Rule; 3] = [Rule::FileFunction, Rule::Attach, Rule::VacuumInto];

/// What [`enter`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    /// No file switch is on: no statement names a file, nothing to fence.
    NotNeeded,
    /// The kernel fences the process (Linux, Landlock).
    Kernel,
    /// Served with the guard's check of literal names alone (see the
    /// module's doc).
    GuardOnly,
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "protection.allow_file_functions (at the top level or in a `databases` entry) needs the kernel to keep DuckDB's files out of /proc, /dev and /sys, and {0}: turn the switch off, or run pgmcp on Linux 5.13 or later with Landlock enabled"
    )]
    Unavailable(String),
    #[error("cannot move the MCP channel off the client's pipes: {0}")]
    Channel(std::io::Error),
    #[error("cannot enter the file sandbox: {0}")]
    Landlock(String),
}

/// Fence the process as the module's doc says, if `policy` lets statements
/// name files. Call it before any thread that runs SQL or hooks starts: the
/// kernel's domain passes to the threads and processes started afterwards.
pub fn enter(policy: &Policy) -> Result<Sandbox, SandboxError> {
    if !FILE_SWITCHES.iter().any(|rule| policy.allows(*rule)) {
        return Ok(Sandbox::NotNeeded);
    }
    let computed_names = policy.allows(Rule::FileFunction);
    match kernel::fence() {
        Ok(()) => Ok(Sandbox::Kernel),
        Err(kernel::Refused::Unavailable(why)) if computed_names => Err(SandboxError::Unavailable(why)),
        Err(kernel::Refused::Unavailable(why)) => {
            tracing::warn!(
                "the kernel cannot fence SQL-named files here ({why}): ATTACH and VACUUM INTO names are checked as written"
            );
            Ok(Sandbox::GuardOnly)
        }
        Err(kernel::Refused::Channel(e)) => Err(SandboxError::Channel(e)),
        Err(kernel::Refused::Landlock(e)) => Err(SandboxError::Landlock(e)),
    }
}

#[cfg(target_os = "linux")]
mod kernel {
    use landlock::{
        ABI, Access, AccessFs, LandlockStatus, RestrictionStatus, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, path_beneath_rules,
    };

    pub enum Refused {
        Unavailable(String),
        Channel(std::io::Error),
        Landlock(String),
    }

    /// `/dev/null` alone: endless ones (`zero`, `urandom`) read as a file
    /// would fill memory; randomness comes from `getrandom`.
    const DEVICES: [&str; 1] = ["/dev/null"];
    /// Read, as DuckDB and Rust's standard library do to size their memory
    /// and threads to the container's limits (DuckDB aborts the process when
    /// it may see that a file exists but not read it). They hold no secret.
    const LIMITS: [&str; 3] = [
        "/proc/self/cgroup",
        "/sys/fs/cgroup",
        "/sys/kernel/mm/transparent_hugepage",
    ];

    pub fn fence() -> Result<(), Refused> {
        // The relay first: started inside the domain, it would be within
        // this process's reach, pipes and all.
        crate::door::stdio::channel::isolate().map_err(Refused::Channel)?;
        close_inherited().map_err(Refused::Channel)?;
        let status = restrict().map_err(|e| Refused::Landlock(e.to_string()))?;
        match (status.ruleset, status.landlock) {
            (RulesetStatus::NotEnforced, LandlockStatus::NotImplemented) => Err(Refused::Unavailable(
                "this Linux kernel is built without Landlock".to_owned(),
            )),
            (RulesetStatus::NotEnforced, LandlockStatus::NotEnabled) => Err(Refused::Unavailable(
                "Landlock is not enabled at boot on this Linux (the lsm= kernel parameter)".to_owned(),
            )),
            (RulesetStatus::NotEnforced, _) => Err(Refused::Unavailable(
                "this Linux kernel did not enforce the Landlock rules".to_owned(),
            )),
            (ruleset, _) => {
                tracing::info!(
                    ?ruleset,
                    "file sandbox entered: nothing under /proc, /dev or /sys, no other process"
                );
                Ok(())
            }
        }
    }

    /// Close what the client let this process inherit besides 0-2 (a
    /// jobserver's pipe, a leaked descriptor): reopened by its path, it is
    /// one of the client's channels. pgmcp opens its own close-on-exec, so
    /// the descriptors without the flag are exactly the inherited ones.
    fn close_inherited() -> std::io::Result<()> {
        let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .filter(|fd| *fd > 2)
            .collect();
        for fd in fds {
            // SAFETY: F_GETFD reads the flags of a number that may no longer
            // be open (the directory's own descriptor): -1 then, left alone.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                // SAFETY: an inherited descriptor nothing in this process
                // owns: pgmcp's own all carry FD_CLOEXEC.
                unsafe { libc::close(fd) };
            }
        }
        Ok(())
    }

    fn restrict() -> Result<RestrictionStatus, landlock::RulesetError> {
        // Reading, writing, truncating, creating and removing files: V3.
        let abi = ABI::V3;
        let all = AccessFs::from_all(abi);
        Ruleset::default()
            .handle_access(all)?
            .create()?
            .add_rules(path_beneath_rules(crate::process::roots::allowed(), all))?
            .add_rules(path_beneath_rules(DEVICES, AccessFs::ReadFile | AccessFs::WriteFile))?
            .add_rules(path_beneath_rules(LIMITS, AccessFs::ReadFile | AccessFs::ReadDir))?
            .restrict_self()
    }
}

#[cfg(not(target_os = "linux"))]
mod kernel {
    pub enum Refused {
        Unavailable(String),
        #[allow(dead_code)]
        Channel(std::io::Error),
        #[allow(dead_code)]
        Landlock(String),
    }

    pub fn fence() -> Result<(), Refused> {
        Err(Refused::Unavailable(format!(
            "pgmcp's kernel fence is Linux's Landlock, which {} does not have",
            std::env::consts::OS
        )))
    }
}
