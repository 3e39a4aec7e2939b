//! The invariants of ARCHITECTURE.md that a reading of the source can check,
//! checked: each is an absence, so a line that breaks one is named here.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, with its path relative to the crate.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code lines of `path` (comments left out), numbered from 1.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(i, line)| (i + 1, line.to_owned()))
        .collect()
}

/// Where `path`'s code names one of `crates` as a path of its own (`rusqlite::`,
/// `use tokio_postgres`), not as a module of pgmcp's (`backend::duckdb::`).
fn names_a_crate(path: &Path, crates: &[&str]) -> Vec<String> {
    code_lines(path)
        .into_iter()
        .filter(|(_, line)| {
            crates.iter().any(|krate| {
                line.match_indices(krate).any(|(at, _)| {
                    let before = line[..at].chars().next_back();
                    let after = &line[at + krate.len()..];
                    let standalone = !before.is_some_and(|c| c == ':' || c == '_' || c.is_alphanumeric() || c == '`');
                    standalone
                        && (after.starts_with("::")
                            || (line[..at].trim_end().ends_with("use") && after.starts_with([';', ' ', ':'])))
                })
            })
        })
        .map(|(n, line)| format!("{}:{n}: {}", path.display(), line.trim()))
        .collect()
}

/// "No module under src/backend/ imports config: each backend owns its
/// option types, and config builds them."
#[test]
fn no_backend_imports_the_config() {
    let offending: Vec<String> = sources(&src().join("backend"))
        .iter()
        .flat_map(|path| {
            code_lines(path)
                .into_iter()
                .filter(|(_, line)| line.contains("crate::config"))
                .map(move |(n, line)| format!("{}:{n}: {}", path.display(), line.trim()))
        })
        .collect();
    assert!(
        offending.is_empty(),
        "backends importing config:\n{}",
        offending.join("\n")
    );
}

/// The engines' crates are the backends' (and the embedded guards', which
/// judge what those engines report): no other module names one, so the
/// pipeline, the doors and the errors stay neutral.
#[test]
fn only_backends_and_their_guards_name_an_engine_crate() {
    const ENGINES: &[&str] = &[
        "tokio_postgres",
        "postgres_protocol",
        "postgres_types",
        "rusqlite",
        "libduckdb_sys",
        "duckdb",
    ];
    let root = src();
    let allowed = |path: &Path| {
        path.starts_with(root.join("backend"))
            || path.starts_with(root.join("guard").join("sqlite"))
            || path.starts_with(root.join("guard").join("duckdb"))
    };
    let offending: Vec<String> = sources(&root)
        .iter()
        .filter(|path| !allowed(path))
        .flat_map(|path| names_a_crate(path, ENGINES))
        .collect();
    assert!(
        offending.is_empty(),
        "engine crates named outside the backends:\n{}",
        offending.join("\n")
    );
}

/// The check above finds what it looks for: a line that names an engine
/// crate is found, and pgmcp's own modules of the same name are not.
#[test]
fn the_crate_check_finds_what_it_looks_for() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.rs");
    std::fs::write(
        &file,
        "use rusqlite::Connection;\n\
         use tokio_postgres;\n\
         let e = duckdb::Error::X;\n\
         let b = crate::backend::duckdb::DuckDbBackend::new();\n\
         // rusqlite::ffi in a comment\n\
         let s = \"a `duckdb::memory:` URL\";\n\
         let n = my_rusqlite::x();\n",
    )
    .unwrap();
    let found = names_a_crate(&file, &["rusqlite", "tokio_postgres", "duckdb"]);
    let lines: Vec<&str> = found.iter().map(|f| f.rsplit_once(": ").unwrap().1).collect();
    assert_eq!(
        lines,
        [
            "use rusqlite::Connection;",
            "use tokio_postgres;",
            "let e = duckdb::Error::X;"
        ]
    );
}
