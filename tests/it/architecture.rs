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

/// The code lines of `path` before its test module: what the crate runs.
fn non_test_code_lines(path: &Path) -> Vec<(usize, String)> {
    code_lines(path)
        .into_iter()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .collect()
}

/// Lines of the files under `dirs` (relative to `src/`) whose code names one of `needles`.
fn naming(dirs: &[&str], needles: &[&str], lines: fn(&Path) -> Vec<(usize, String)>) -> Vec<String> {
    dirs.iter()
        .flat_map(|dir| sources(&src().join(dir)))
        .flat_map(|path| {
            lines(&path)
                .into_iter()
                .filter(|(_, line)| needles.iter().any(|n| line.contains(n)))
                .map(move |(n, line)| format!("{}:{n}: {}", path.display(), line.trim()))
        })
        .collect()
}

/// "Nothing under src/pipeline/, src/guard/, src/backend/ or src/config/
/// names crate::door or crate::cli: the core does not know who calls it."
#[test]
fn the_core_does_not_know_its_doors() {
    let offending = naming(
        &["pipeline", "guard", "backend", "config"],
        &["crate::door", "crate::cli"],
        code_lines,
    );
    assert!(
        offending.is_empty(),
        "the core naming a door or a command:\n{}",
        offending.join("\n")
    );
}

/// "Nothing under src/guard/ does IO outside its tests: the guard is pure."
#[test]
fn the_guard_does_no_io() {
    let offending = naming(
        &["guard"],
        &[
            "std::fs",
            "std::net",
            "std::process",
            "tokio::",
            "std::io::stdin",
            "File::open",
        ],
        non_test_code_lines,
    );
    assert!(offending.is_empty(), "IO in the guard:\n{}", offending.join("\n"));
}

/// "No module outside src/door/ names rmcp (but process/logging.rs, which
/// sets rmcp's log level)."
#[test]
fn only_the_doors_speak_mcp() {
    let root = src();
    let offending: Vec<String> = sources(&root)
        .iter()
        .filter(|path| !path.starts_with(root.join("door")) && **path != root.join("process").join("logging.rs"))
        .flat_map(|path| names_a_crate(path, &["rmcp"]))
        .collect();
    assert!(
        offending.is_empty(),
        "rmcp named outside the doors:\n{}",
        offending.join("\n")
    );
}

/// "No source file under src/ is longer than 800 lines": a longer one is
/// split by concept, not left to grow.
#[test]
fn no_source_file_is_longer_than_800_lines() {
    const LIMIT: usize = 800;
    let offending: Vec<String> = sources(&src())
        .iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            (lines > LIMIT).then(|| format!("{}: {lines} lines", path.display()))
        })
        .collect();
    assert!(
        offending.is_empty(),
        "files over {LIMIT} lines:\n{}",
        offending.join("\n")
    );
}

/// "Every module is private; lib.rs exports the embedder API by name
/// (`pub use`), the binary's door and the hidden test surface."
#[test]
fn no_module_of_the_crate_is_public_but_the_doors_of_binary_and_tests() {
    let lib = src().join("lib.rs");
    let public_modules: Vec<String> = code_lines(&lib)
        .into_iter()
        .filter(|(_, line)| line.trim_start().starts_with("pub mod "))
        .map(|(_, line)| line.trim().to_owned())
        .collect();
    assert_eq!(
        public_modules,
        ["pub mod testing;", "pub mod binary {"],
        "public modules of lib.rs"
    );
}

/// "No backend holds a Policy: the guard gets the engine's evidence and a
/// Judge, and decides."
#[test]
fn no_backend_reads_a_policy() {
    let offending = naming(&["backend"], &["Policy"], code_lines);
    assert!(
        offending.is_empty(),
        "backends naming a Policy:\n{}",
        offending.join("\n")
    );
}

/// "Nothing but the commands for people (src/cli/) and the channel that
/// takes stdout for the protocol writes to stdout": under `serve` it carries
/// JSON-RPC alone.
#[test]
fn only_the_commands_and_the_channel_write_to_stdout() {
    let root = src();
    let offending: Vec<String> = sources(&root)
        .iter()
        .filter(|path| {
            !path.starts_with(root.join("cli")) && **path != root.join("door").join("stdio").join("channel.rs")
        })
        .flat_map(|path| {
            code_lines(path)
                .into_iter()
                .filter(|(_, line)| {
                    let prints = ["print!(", "println!("].iter().any(|mac| {
                        line.match_indices(mac)
                            .any(|(at, _)| !line[..at].ends_with(|c: char| c == 'e' || c.is_alphanumeric() || c == '_'))
                    });
                    prints || line.contains("io::stdout()")
                })
                .map(move |(n, line)| format!("{}:{n}: {}", path.display(), line.trim()))
        })
        .collect();
    assert!(
        offending.is_empty(),
        "stdout written outside cli/:\n{}",
        offending.join("\n")
    );
}

/// The README's library example is the crate documentation's, which
/// `cargo test --doc` runs: the two cannot drift apart.
#[test]
fn the_readme_library_example_is_the_tested_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = &readme[readme
        .find("## Use it as a library")
        .expect("the README's library section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let readme_example = &section[start..start + section[start..].find("```").unwrap()];
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let doc: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    let example = &doc[doc.find("# Example").unwrap()..];
    let start = example.find("```\n").unwrap() + 4;
    let doc_example: String = example[start..start + example[start..].find("```").unwrap()]
        .lines()
        .filter(|line| !line.starts_with("# "))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(readme_example, doc_example);
}
