//! The hook programs under `fixtures/hooks/`, by name. Here, not in
//! `hooks::`, because the pipeline's and the fault tests run them too.

use std::path::PathBuf;

pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hooks")
        .join(name)
}
