//! SQL identifiers as pgmcp writes them into statements and into what it
//! shows: the double-quoted form all three engines read, and the bare form
//! when quoting would change nothing.

/// `name` as a quoted identifier: used exactly as written (case kept),
/// embedded double quotes doubled.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `name` bare when it is a plain lower-case identifier (the engines fold
/// unquoted names to lower case, so it reads back the same), else quoted.
pub fn as_needed(name: &str) -> String {
    let plain = name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain { name.to_owned() } else { quoted(name) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_exactly_and_only_when_needed() {
        // (name, quoted, as needed)
        let cases = [
            ("reader", "\"reader\"", "reader"),
            ("order_items2", "\"order_items2\"", "order_items2"),
            ("_x", "\"_x\"", "_x"),
            ("Reader", "\"Reader\"", "\"Reader\""),
            ("we\"ird", "\"we\"\"ird\"", "\"we\"\"ird\""),
            ("two words", "\"two words\"", "\"two words\""),
            ("2024", "\"2024\"", "\"2024\""),
            ("\"", "\"\"\"\"", "\"\"\"\""),
            ("", "\"\"", "\"\""),
        ];
        for (name, q, needed) in cases {
            assert_eq!(quoted(name), q, "{name}");
            assert_eq!(as_needed(name), needed, "{name}");
        }
    }
}
