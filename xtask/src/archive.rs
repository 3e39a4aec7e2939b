//! Archives: the `.tar.gz`/`.zip` people download, the zip inside an MCP
//! Bundle, and the `.sha256` beside each.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use crate::project::{Project, megabytes};

/// One file inside an archive.
pub struct Entry {
    /// Its path inside the archive, `/`-separated.
    pub name: String,
    pub data: Vec<u8>,
    /// Unix mode bits; kept in both formats, so the binary stays executable
    /// when unpacked (Claude Desktop restores them from the bundle's zip).
    pub mode: u32,
}

impl Entry {
    pub fn file(name: &str, path: &Path, mode: u32) -> Result<Entry> {
        let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        Ok(Entry {
            name: name.to_owned(),
            data,
            mode,
        })
    }
}

pub const EXECUTABLE: u32 = 0o755;
pub const READABLE: u32 = 0o644;

/// The files shipped beside the binary in every archive.
pub const DOCS: &[&str] = &["README.md", "LICENSE", "claude_desktop_config.example.json"];

/// `cargo xtask dist`: `pgmcp-<version>-<target>.tar.gz` (`.zip` for
/// Windows) with one top directory of the same name, plus its `.sha256`.
pub fn dist(project: &Project, binary: &Path, target: &str, out_dir: &Path) -> Result<PathBuf> {
    let windows = target.contains("windows");
    let stem = format!("pgmcp-{}-{target}", project.version);
    let exe = if windows { "pgmcp.exe" } else { "pgmcp" };
    eprintln!("xtask: binary {} ({})", binary.display(), megabytes(binary)?);
    let mut entries = vec![Entry::file(&format!("{stem}/{exe}"), binary, EXECUTABLE)?];
    for doc in DOCS {
        entries.push(Entry::file(&format!("{stem}/{doc}"), &project.file(doc), READABLE)?);
    }
    let path = out_dir.join(if windows {
        format!("{stem}.zip")
    } else {
        format!("{stem}.tar.gz")
    });
    if windows {
        write_zip(&path, &entries)?;
    } else {
        write_tar_gz(&path, &stem, &entries)?;
    }
    let sum = write_sha256(&path)?;
    eprintln!("xtask: wrote {} ({}), sha256 {sum}", path.display(), megabytes(&path)?);
    Ok(path)
}

/// Modification time stamped on archived files: SOURCE_DATE_EPOCH when the
/// build sets it (reproducible builds), else now.
fn mtime() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
}

fn write_tar_gz(path: &Path, top: &str, entries: &[Entry]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let gzip = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gzip);
    let mtime = mtime();
    let mut dir = tar::Header::new_gnu();
    dir.set_entry_type(tar::EntryType::Directory);
    dir.set_mode(EXECUTABLE);
    dir.set_mtime(mtime);
    dir.set_size(0);
    tar.append_data(&mut dir, format!("{top}/"), std::io::empty())?;
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(entry.mode);
        header.set_mtime(mtime);
        header.set_size(entry.data.len() as u64);
        tar.append_data(&mut header, &entry.name, entry.data.as_slice())?;
    }
    let gzip = tar.into_inner()?;
    gzip.finish()?.sync_all()?;
    Ok(())
}

/// A zip with Unix modes recorded, as `mcpb pack` writes them.
pub fn write_zip(path: &Path, entries: &[Entry]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    for entry in entries {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(entry.mode)
            // ZIP64 records only where a file needs them.
            .large_file(entry.data.len() as u64 >= u64::from(u32::MAX));
        zip.start_file(entry.name.as_str(), options)?;
        zip.write_all(&entry.data)?;
    }
    zip.finish()?.sync_all()?;
    Ok(())
}

/// Write `<file>.sha256` in the format `sha256sum -c` reads; returns the sum.
pub fn write_sha256(path: &Path) -> Result<String> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let sum: String = Sha256::digest(&data).iter().map(|b| format!("{b:02x}")).collect();
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .context("archive path has no file name")?;
    let mut sum_path = path.as_os_str().to_owned();
    sum_path.push(".sha256");
    std::fs::write(&sum_path, format!("{sum}  {name}\n"))
        .with_context(|| format!("cannot write {}", Path::new(&sum_path).display()))?;
    Ok(sum)
}
