//! The config file written readable by its owner alone, through a new
//! temporary file and a rename, so a failure leaves the old file intact and
//! nobody can have the wizard write through a planted symlink. Apart
//! because `install` and `demo` write their files through [`create_temp`]
//! too.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::WizardError;

/// Write the file readable by its owner alone (it names hosts, users and key
/// files), through a temporary file so a failure leaves the old one intact.
///
/// The temporary file is always a new one (`O_CREAT | O_EXCL`, which also
/// refuses a symlink in its place), named anew each run: with a fixed name
/// opened for writing, anyone able to write the directory could plant a
/// symlink there and have the wizard overwrite the file it points to. A name
/// someone guessed and planted costs a retry, never an overwrite.
pub(super) fn write_private(path: &Path, doc: &Value) -> Result<(), WizardError> {
    let fail = |e: io::Error| WizardError::Write(path.to_owned(), e);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Private like the file: a directory others can write is refused at load.
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(dir).map_err(fail)?;
    }
    let text = serde_json::to_string_pretty(doc).map_err(|e| fail(io::Error::other(e)))? + "\n";
    let (tmp, mut file) = create_temp(path).map_err(fail)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(fail)
}

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
