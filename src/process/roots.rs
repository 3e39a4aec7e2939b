//! The directories a file switch opens to SQL: every top-level directory as
//! it resolves, but `/` itself and what lies under `/proc`, `/dev` and `/sys`
//! (a top-level link to `/`, or into one of them, would open them all).
//!
//! Read once and kept: DuckDB's `allowed_directories` and the file sandbox's
//! rules are the same list, and inside the sandbox `/` itself can no longer
//! be listed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where no file switch reaches.
const FENCED: [&str; 3] = ["/proc", "/dev", "/sys"];

/// The list, read at the first call.
pub fn allowed() -> &'static [PathBuf] {
    static ROOTS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots: Vec<PathBuf> = std::fs::read_dir("/")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| std::fs::canonicalize(entry.path()).ok())
            .filter(|path| path.is_dir() && allowed_path(path))
            .collect();
        roots.sort();
        roots.dedup();
        roots
    })
}

fn allowed_path(path: &Path) -> bool {
    path != Path::new("/") && !FENCED.iter().any(|fenced| path.starts_with(fenced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fenced_three_and_the_root_are_never_allowed() {
        for (path, allowed) in [
            ("/", false),
            ("/proc", false),
            ("/proc/self", false),
            ("/dev/shm", false),
            ("/sys", false),
            ("/usr/lib", true),
            ("/tmp", true),
            ("/procfs", true),
        ] {
            assert_eq!(allowed_path(Path::new(path)), allowed, "{path}");
        }
        assert!(allowed().iter().all(|root| allowed_path(root)), "{:?}", allowed());
    }
}
