//! Paths that name pgmcp's own process: its standard streams and open files
//! (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/3`, `/proc/<pid>/...`). Over
//! stdio, pgmcp's stdin and stdout carry the MCP protocol: an engine told to
//! read or write one of these (a DuckDB `COPY ... TO '/dev/stdout'`, an SQLite
//! `ATTACH '/dev/stdin'`) would steal the client's requests or corrupt the
//! answers, and its other descriptors are the log file and the database
//! connections. No setting allows it. Pure: judged by the path's components,
//! so every spelling (`/dev//stdout`, `../../dev/stdout`, `file:/dev/stdout`)
//! is seen.

/// Does `path` name a standard stream or an open file of a process?
pub fn names_process(path: &str) -> bool {
    // A URI file name (SQLite's `file:/%70roc/...`) is decoded by the engine
    // after the guard has read it: read it decoded, its query apart. One
    // that does not decode is judged as written.
    let decoded;
    let path = match path.strip_prefix("file:") {
        Some(uri) => {
            let uri = uri.split(['?', '#']).next().unwrap_or(uri);
            decoded = crate::backend::percent::decode(uri).unwrap_or_else(|_| uri.to_owned());
            decoded.as_str()
        }
        None => path,
    };
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty() && *p != ".").collect();
    parts.windows(2).any(|pair| {
        matches!(
            pair,
            ["dev", "stdin" | "stdout" | "stderr" | "fd" | "tty"] | ["proc", _]
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_process_is_seen() {
        let cases = [
            ("/dev/stdout", true),
            ("/dev/stdin", true),
            ("/dev/stderr", true),
            ("/dev//stdout", true),
            ("/dev/./stdout", true),
            ("/x/../dev/stdout", true),
            ("../../dev/stdout", true),
            ("dev/stdout", true),
            ("file:///dev/stdout", true),
            ("file:/dev/stdin", true),
            ("file:/%70roc/self/fd/3?mode=ro", true),
            ("file:%2Fproc%2Fself%2Ffd%2F3", true),
            ("file:/dev/%66d/3", true),
            ("file://localhost/dev/fd/1", true),
            ("/dev/fd/1", true),
            ("/proc/self/fd/1", true),
            ("/proc/thread-self/fd/0", true),
            ("/proc/1234/fd/2", true),
            ("/proc/self/environ", true),
            ("/dev/tty", true),
            ("/tmp/out.csv", false),
            ("data/stdout.csv", false),
            ("/home/dev/stdout_report.csv", false),
            ("stdout", false),
            ("", false),
        ];
        for (path, named) in cases {
            assert_eq!(names_process(path), named, "{path}");
        }
    }
}
