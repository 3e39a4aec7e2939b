//! The config file written readable by its owner alone, through a new
//! temporary file ([`create_temp`]) and a rename, so a failure leaves the
//! old file intact and nobody can have the wizard write through a planted
//! symlink.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;

use super::WizardError;
use crate::process::private_file::create_temp;

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
