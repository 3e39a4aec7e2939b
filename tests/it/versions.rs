//! The PostgreSQL-facing tests again, on the oldest and the newest
//! PostgreSQL pgmcp supports (13 and 18; the rest of the suite runs on the
//! machine's own, Debian's 15 in CI). This test binary runs itself once per
//! version, with `PGMCP_TEST_PGBIN` naming that version's official server
//! binaries, which `.ci/postgres-versions` installs from the npm registry and
//! caches. `.ci/matrix` runs every version from 13 to 18, group by group.

use std::process::Command;

/// The test groups that talk to PostgreSQL (PgBouncer's included).
pub const GROUPS: &[&str] = &[
    "values::",
    "introspection::",
    "routines::",
    "reach_types::",
    "guard_attacks::",
    "pipeline::",
    "engine::",
    "faults::",
    "check::",
    "connstrings::",
    "role::",
    "reader::",
    "tls::",
    "pooler::",
    "diagnose::",
    "catalog_fences::",
    "trust::",
    "allowlist::",
    "analytic::postgres",
    // The PostgreSQL tests of files that are mostly about something else:
    // what the read budget does not count, the debug log, and the settings
    // read from the environment.
    "memory::postgres_",
    "memory::copy_to_stdout_in_read_only_mode_stays_bounded",
    "log_file::debug_log_holds_no_values_parameters_or_error_texts",
    "environment::a_huge_row_cap",
    "environment::read_only_from_the_environment_holds_on_every_engine",
];

const EDGES: [&str; 2] = ["13", "18"];

#[test]
fn the_postgres_facing_tests_pass_on_the_oldest_and_newest_versions() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/postgres-versions");
    let installed = Command::new(script)
        .args(EDGES)
        .output()
        .expect("run .ci/postgres-versions");
    assert!(
        installed.status.success(),
        "{script} {} failed (it needs npm and the npm registry):\n{}",
        EDGES.join(" "),
        String::from_utf8_lossy(&installed.stderr)
    );
    let listing = String::from_utf8_lossy(&installed.stdout).into_owned();
    let mut failures = Vec::new();
    for line in listing.lines() {
        let (major, bindir) = line.split_once(' ').expect("<major> <bin dir>");
        let out = Command::new(std::env::current_exe().expect("the test binary"))
            .args(GROUPS)
            .args(["--skip", "versions::", "--test-threads", "2"])
            .env("PGMCP_TEST_PGBIN", bindir)
            // Before 14 PostgreSQL has no pg_read_all_data, and the harness
            // logs in as a superuser: pgmcp refuses read-only calls then
            // unless told to read as the login (`reader::` checks that
            // refusal itself, on library engines).
            .env(
                "PGMCP_TEST_READ_ONLY_AS_LOGIN",
                if major.parse::<u32>().unwrap_or(0) < 14 {
                    "true"
                } else {
                    ""
                },
            )
            // The version under test, not a server given from outside.
            .env_remove("PGMCP_TEST_DATABASE_URL")
            .output()
            .expect("run the test binary");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let summary = stdout
            .lines()
            .rfind(|l| l.starts_with("test result:"))
            .unwrap_or("no summary");
        println!("PostgreSQL {major}: {summary}");
        if !out.status.success() {
            let failed: Vec<&str> = stdout.lines().filter(|l| l.ends_with("FAILED")).collect();
            failures.push(format!(
                "PostgreSQL {major} ({bindir}): {summary}\n{}\n--- output ---\n{}{}",
                failed.join("\n"),
                stdout,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert_eq!(listing.lines().count(), EDGES.len(), "{listing}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
