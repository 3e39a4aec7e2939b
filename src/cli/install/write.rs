//! [`write`](fn@write): the one function that touches the client's file. A `.bak` of
//! the old one, then the new one through a temporary file and a rename,
//! with the old one's permissions; [`Written`] says what it did. Also the
//! path of the running binary the entry names ([`current_binary`]).

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use super::client_file::{describe, free_name, merge, named_database, same_database};
use super::{Client, Entry, InstallError, Malformed, OtherDatabase};

/// What [`write()`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file written (a symlink's target, when the file was a symlink).
    pub file: PathBuf,
    /// The copy of the previous file; `None` when there was none, or when
    /// nothing changed.
    pub backup: Option<PathBuf>,
    /// `false`: the file already held exactly this; it was not touched.
    pub changed: bool,
    pub replaced: bool,
    /// The database the replaced entry was for (as
    /// [`shown_database`](super::client_file::shown_database) shows it), when
    /// it was another one (`--replace`).
    pub other_database: Option<String>,
    /// The file's permission bits (Unix), kept from the previous file.
    pub mode: u32,
}

/// Merge the entry into `file`: refuse a file that is not a JSON object
/// (leaving it as it is), keep the previous file as `<file>.bak`, and
/// replace the file through a new temporary file in the same directory and
/// a rename, so a crash leaves the old file or the new one, never half of
/// one. The new file keeps the old one's permissions; a new one is 0600
/// (it may hold a password), in a directory created 0700.
///
/// An entry of that name for another database (see [`named_database`]) is
/// refused unless `replace`: the file is left as it is.
pub fn write(file: &Path, name: &str, entry: &Entry, replace: bool) -> Result<Written, InstallError> {
    // A symlinked config (dotfiles) stays a symlink: its target is
    // rewritten, not replaced by a plain file.
    let file = match fs::symlink_metadata(file) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(file).map_err(|err| InstallError::Read {
            file: file.to_owned(),
            err,
        })?,
        _ => file.to_owned(),
    };
    let read_fail = |err| InstallError::Read {
        file: file.clone(),
        err,
    };
    let write_fail = |err| InstallError::Write {
        file: file.clone(),
        err,
    };
    // A pipe would hold the read until some writer came, a device (or a
    // symlink to one) could feed it forever: only a regular file is a
    // client's config.
    match fs::metadata(&file) {
        Ok(meta) if !meta.is_file() => {
            return Err(read_fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file; name the client's JSON file",
            )));
        }
        _ => {}
    }
    let (before, mode) = match fs::read(&file) {
        Ok(bytes) => {
            let mode = mode_of(&fs::metadata(&file).map_err(read_fail)?);
            (Some(bytes), mode)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => (None, 0o600),
        Err(e) => return Err(read_fail(e)),
    };
    let malformed = |reason| InstallError::Malformed {
        file: file.clone(),
        reason,
    };
    let text = before
        .as_deref()
        .map(std::str::from_utf8)
        .transpose()
        .map_err(|_| malformed(Malformed::NotUtf8))?;
    let merged = merge(text, name, &entry.to_json()).map_err(malformed)?;
    // An entry that names no database of its own is taken over: it is
    // pgmcp finding its database at each start, which the new entry names.
    let before_db = merged.previous.as_ref().and_then(named_database);
    let other_database = before_db
        .as_deref()
        .filter(|before| !same_database(before, entry.database()))
        .map(|before| describe(Some(before)));
    if let Some(existing) = &other_database
        && !replace
    {
        return Err(InstallError::OtherDatabase(Box::new(OtherDatabase {
            file,
            name: name.to_owned(),
            existing: existing.clone(),
            wanted: describe(entry.database()),
            free_name: free_name(entry.database(), &merged.servers),
            rerun: None,
        })));
    }
    // Checked before the file is found unchanged too: a password others can
    // read is not made right by not writing it again.
    if entry.has_password() && mode & 0o077 != 0 {
        return Err(InstallError::ReadableByOthers { file, mode });
    }
    if before.as_deref() == Some(merged.text.as_bytes()) {
        return Ok(Written {
            file,
            backup: None,
            changed: false,
            replaced: merged.replaced,
            other_database: None,
            mode,
        });
    }
    let backup = match &before {
        Some(bytes) => {
            let mut name = file.file_name().unwrap_or_default().to_owned();
            name.push(".bak");
            let backup = file.with_file_name(name);
            replace_file(&backup, bytes, mode).map_err(|err| InstallError::Write {
                file: backup.clone(),
                err,
            })?;
            Some(backup)
        }
        None => {
            if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                let mut builder = fs::DirBuilder::new();
                builder.recursive(true);
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
                builder.create(dir).map_err(write_fail)?;
            }
            None
        }
    };
    replace_file(&file, merged.text.as_bytes(), mode).map_err(write_fail)?;
    Ok(Written {
        file,
        backup,
        changed: true,
        replaced: merged.replaced,
        other_database,
        mode,
    })
}

impl Written {
    /// What a person reads after `install`: what happened to which file,
    /// where the old one is, and what makes the client see it.
    pub fn summary(&self, client: Client, name: &str) -> String {
        let file = self.file.display();
        let mut out = match (self.changed, self.replaced, &self.other_database) {
            (false, _, _) => format!("{file} already has this \"{name}\" entry: nothing changed.\n"),
            (true, true, Some(other)) => {
                format!("Replaced the \"{name}\" entry in {file}; it was for another database: {other}\n")
            }
            (true, true, None) => format!("Updated the \"{name}\" entry in {file}\n"),
            (true, false, _) => format!("Added the \"{name}\" entry to {file}\n"),
        };
        if let Some(backup) = &self.backup {
            out.push_str(&format!("The previous file is kept as {}\n", backup.display()));
        }
        out.push_str(client.pick_up());
        out.push('\n');
        out
    }
}

/// Put `bytes` at `path` with permissions `mode`: written to a new
/// temporary file beside it (created 0600, so no one else can open it
/// meanwhile), synced, then renamed over `path`.
fn replace_file(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (tmp, mut file) = crate::process::private_file::create_temp(path)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| set_mode(&file, mode))
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// A file's permission bits (Unix); 0 where files have none (Windows, where
/// the directory's ACL applies).
fn mode_of(metadata: &fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        metadata.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        0
    }
}

fn set_mode(file: &fs::File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// The running pgmcp, as the entry names it: absolute, symlinks resolved,
/// so the entry does not depend on the PATH or on a link that moves.
pub fn current_binary() -> Result<PathBuf, InstallError> {
    let path = std::env::current_exe()
        .and_then(fs::canonicalize)
        .map_err(InstallError::CurrentExe)?;
    // Windows canonical paths are verbatim (`\\?\C:\...`), which some
    // programs that start the command do not take: name the drive path.
    #[cfg(windows)]
    if let Some(plain) = path.to_str().and_then(|p| p.strip_prefix(r"\\?\"))
        && plain.as_bytes().get(1) == Some(&b':')
    {
        return Ok(PathBuf::from(plain));
    }
    Ok(path)
}
