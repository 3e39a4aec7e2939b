//! The settings a DuckDB database opens with, as the config file's `duckdb`
//! section gives them. Built without the `duckdb` feature too, so a config
//! file is read and checked the same whichever way pgmcp was built.

/// How a DuckDB database is opened. `None` leaves DuckDB's own default
/// (80% of the machine's memory; one thread per core).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DuckdbConfig {
    /// `memory_limit`, as DuckDB reads it (`1GB`, `512MiB`).
    pub memory_limit: Option<String>,
    pub threads: Option<u64>,
}

/// Whether `text` is a size DuckDB's `memory_limit` accepts: a number and a
/// byte unit.
pub fn memory_size(text: &str) -> bool {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number_ok = !number.is_empty()
        && number.chars().filter(|c| *c == '.').count() <= 1
        && !number.starts_with('.')
        && !number.ends_with('.');
    let unit = unit.trim().to_ascii_lowercase();
    number_ok
        && matches!(
            unit.as_str(),
            "b" | "bytes" | "kb" | "mb" | "gb" | "tb" | "kib" | "mib" | "gib" | "tib"
        )
}
