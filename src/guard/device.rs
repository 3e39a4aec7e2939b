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
    components(path).windows(2).any(|pair| {
        matches!(
            [pair[0].as_str(), pair[1].as_str()],
            ["dev", "stdin" | "stdout" | "stderr" | "fd" | "tty"] | ["proc", _]
        )
    })
}

/// Does `path` go back up (`..`) after naming a directory? The kernel takes
/// `..` from where a symbolic link lands, not from where the text says
/// (`/var/run/../proc` is `/proc`, since `/var/run` is `/run`), so no check
/// of the text can tell where such a path ends. A relative path's leading
/// `..` starts from the working directory itself, and is exact.
pub fn climbs_after_a_name(path: &str) -> bool {
    components(path)
        .into_iter()
        .skip_while(|p| *p == "..")
        .any(|p| p == "..")
}

/// The path's components as the engine will read them: a URI file name
/// (SQLite's `file:/%70roc/...`) is decoded by the engine after the guard has
/// read it, so it is read decoded, its query apart; one that does not decode
/// is judged as written.
fn components(path: &str) -> Vec<String> {
    let path = match path.strip_prefix("file:") {
        Some(uri) => {
            let uri = uri.split(['?', '#']).next().unwrap_or(uri);
            crate::backend::percent::decode(uri).unwrap_or_else(|_| uri.to_owned())
        }
        None => path.to_owned(),
    };
    path.split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect()
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

    #[test]
    fn going_back_up_after_a_name_is_seen() {
        let cases = [
            ("/var/run/../proc/self/fd/0", true),
            ("/tmp/link/../fd/3", true),
            ("data/../other.db", true),
            ("file:/tmp/x/%2E%2E/y.db", true),
            ("C:\\data\\..\\x.db", true),
            ("../other.db", false),
            ("../../data/other.db", false),
            ("./../x.db", false),
            ("/tmp/a..b/c.db", false),
            ("/tmp/out.csv", false),
            ("", false),
        ];
        for (path, climbs) in cases {
            assert_eq!(climbs_after_a_name(path), climbs, "{path}");
        }
    }
}
