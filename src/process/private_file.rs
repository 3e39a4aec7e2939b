//! A new file readable by its owner alone, opened under a fresh name beside
//! the file it will replace: the config the wizard writes, a client's config
//! `install` merges into, the demo database. Written there, then renamed
//! over the old one, so a failure leaves the old file intact and nobody can
//! have pgmcp write through a planted symlink.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A new file, mode 0600, next to `path` (so the rename stays on one file
/// system), named `.config.json.<pid>.<nanoseconds>.tmp`. `install` replaces
/// a client's config file through it too. On Windows it has no mode: it
/// inherits its directory's ACL, which under the user's profile (where the
/// config lives by default) admits only that user and administrators.
pub(crate) fn create_temp(path: &Path) -> io::Result<(PathBuf, fs::File)> {
    let name = path
        .file_name()
        .map_or_else(|| "config".into(), |n| n.to_string_lossy());
    let mut last = None;
    // A name taken (by a leftover or a planted file) is skipped, never reused.
    for attempt in 0u32..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = path.with_file_name(format!(".{name}.{}.{nanos}{attempt}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        }
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}
