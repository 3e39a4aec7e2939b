//! Files pgmcp takes as its owner's word: the config file (which can switch
//! every protection off) and the hook programs it names (which see every
//! query and may rewrite it). Whoever can change one of them can make pgmcp
//! do anything, so, like ssh's `StrictModes`, such a file is refused unless
//! only its owner, the person running pgmcp, could have changed it:
//!
//! - the file is owned by the user running pgmcp, or by root;
//! - neither group nor others may write it;
//! - every directory above it, up to `/`, is owned by that user or root and
//!   is not writable by group or others, unless it has the sticky bit (as
//!   `/tmp` does: there only a file's owner may replace it). Both the path as
//!   given and the path its symlinks lead to are checked: whoever can write
//!   the directory holding a symlink can point it elsewhere.
//!
//! A group-writable file is refused even when the group holds only its owner:
//! that is not visible from the file, and `chmod g-w` costs nothing. Root is
//! accepted as an owner because root can change any file anyway.
//!
//! Unix only: elsewhere [`check_file`] and [`check_path`] accept everything.

use std::fs::File;
use std::path::{Path, PathBuf};

/// Why a file cannot be trusted, naming the file and the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
// Only Unix has owners and permission bits to judge.
#[cfg_attr(not(unix), allow(dead_code))]
pub enum Untrusted {
    #[error("{} can be written by {who}, who could make pgmcp do anything: chmod go-w {}", .path.display(), .path.display())]
    Writable { path: PathBuf, who: &'static str },
    #[error(
        "the directory {} above {} can be written by {who}, who could replace the file: chmod go-w {} (or, for a shared directory, chmod +t {})",
        .dir.display(), .path.display(), .dir.display(), .dir.display()
    )]
    DirectoryWritable {
        path: PathBuf,
        dir: PathBuf,
        who: &'static str,
    },
    #[error(
        "{} is owned by user id {owner}, who could make pgmcp do anything; it must belong to you (user id {me}) or root: chown {me} {}",
        .path.display(), .path.display()
    )]
    Owner { path: PathBuf, owner: u32, me: u32 },
    #[error("cannot check who may change {}: {reason}", .path.display())]
    Unreadable { path: PathBuf, reason: String },
}

/// Check the open `file`, read from `path`: its own owner and mode come from
/// the open file (so what is checked is what is read), the directories from
/// `path`.
pub fn check_file(file: &File, path: &Path) -> Result<(), Untrusted> {
    imp::check_file(file, path)
}

/// Check the file at `path` (following symlinks) and the directories above it.
pub fn check_path(path: &Path) -> Result<(), Untrusted> {
    imp::check_path(path)
}

#[cfg(unix)]
mod imp {
    use std::fs::{File, Metadata};
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    use super::Untrusted;

    const STICKY: u32 = 0o1000;

    pub fn check_file(file: &File, path: &Path) -> Result<(), Untrusted> {
        let meta = file.metadata().map_err(|e| unreadable(path, &e))?;
        owner_and_mode(path, &meta)?;
        directories(path)
    }

    pub fn check_path(path: &Path) -> Result<(), Untrusted> {
        let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
        owner_and_mode(path, &meta)?;
        directories(path)
    }

    fn unreadable(path: &Path, e: &std::io::Error) -> Untrusted {
        Untrusted::Unreadable {
            path: path.to_owned(),
            reason: e.to_string(),
        }
    }

    fn me() -> u32 {
        // SAFETY: geteuid(2) cannot fail and touches no memory.
        unsafe { libc::geteuid() }
    }

    fn owner_ok(meta: &Metadata) -> bool {
        meta.uid() == me() || meta.uid() == 0
    }

    /// "group", "others" or "group and others", from the write bits of `mode`.
    fn writers(mode: u32) -> Option<&'static str> {
        match (mode & 0o020 != 0, mode & 0o002 != 0) {
            (true, true) => Some("group and others"),
            (true, false) => Some("its group"),
            (false, true) => Some("others"),
            (false, false) => None,
        }
    }

    fn owner_and_mode(path: &Path, meta: &Metadata) -> Result<(), Untrusted> {
        if !owner_ok(meta) {
            return Err(Untrusted::Owner {
                path: path.to_owned(),
                owner: meta.uid(),
                me: me(),
            });
        }
        match writers(meta.mode()) {
            Some(who) => Err(Untrusted::Writable {
                path: path.to_owned(),
                who,
            }),
            None => Ok(()),
        }
    }

    /// Every directory above `path` as written (made absolute) and above the
    /// file its symlinks lead to.
    fn directories(path: &Path) -> Result<(), Untrusted> {
        let absolute = match std::env::current_dir() {
            Ok(cwd) => cwd.join(path),
            Err(_) => path.to_owned(),
        };
        let mut dirs: Vec<PathBuf> = absolute.ancestors().skip(1).map(Path::to_owned).collect();
        // A path that does not resolve (a pipe from `--config <(...)`) has
        // only the directories it was named through.
        if let Ok(real) = std::fs::canonicalize(&absolute) {
            for dir in real.ancestors().skip(1) {
                if !dirs.iter().any(|d| d == dir) {
                    dirs.push(dir.to_owned());
                }
            }
        }
        for dir in dirs.iter().filter(|d| !d.as_os_str().is_empty()) {
            let meta = std::fs::metadata(dir).map_err(|e| unreadable(dir, &e))?;
            if !owner_ok(&meta) {
                return Err(Untrusted::Owner {
                    path: dir.clone(),
                    owner: meta.uid(),
                    me: me(),
                });
            }
            if meta.mode() & STICKY == 0
                && let Some(who) = writers(meta.mode())
            {
                return Err(Untrusted::DirectoryWritable {
                    path: path.to_owned(),
                    dir: dir.clone(),
                    who,
                });
            }
        }
        Ok(())
    }
}

#[cfg(not(unix))]
mod imp {
    use std::fs::File;
    use std::path::Path;

    use super::Untrusted;

    pub fn check_file(_: &File, _: &Path) -> Result<(), Untrusted> {
        Ok(())
    }

    pub fn check_path(_: &Path) -> Result<(), Untrusted> {
        Ok(())
    }
}
