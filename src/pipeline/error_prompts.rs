//! Error prompts: extra guidance appended to an error the model will read.
//! Every rule is matched against the whole error text (of any kind: PostgreSQL,
//! guard, hook, timeout, connection), and every matching prompt is appended,
//! in order. Pure.

use regex::Regex;

#[derive(Debug, Clone)]
pub struct ErrorPrompt {
    pub pattern: Regex,
    pub message: String,
}

impl PartialEq for ErrorPrompt {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.as_str() == other.pattern.as_str() && self.message == other.message
    }
}

/// The prompts of every matching rule, joined by newlines; empty when none match.
pub fn matching(rules: &[ErrorPrompt], error: &str) -> String {
    rules
        .iter()
        .filter(|r| r.pattern.is_match(error))
        .map(|r| r.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `error`, followed by a blank line and the matching prompts, if any.
pub fn annotate(rules: &[ErrorPrompt], error: String) -> String {
    let prompts = matching(rules, &error);
    if prompts.is_empty() {
        error
    } else {
        format!("{error}\n\n{prompts}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Vec<ErrorPrompt> {
        vec![
            ErrorPrompt {
                pattern: Regex::new("(?i)permission denied").unwrap(),
                message: "Ask the DBA for access.".into(),
            },
            ErrorPrompt {
                pattern: Regex::new("(?i)relation.*does not exist").unwrap(),
                message: "Call list_tables to see what exists.".into(),
            },
            ErrorPrompt {
                pattern: Regex::new("(?i)rejected").unwrap(),
                message: "A hook refused this query.".into(),
            },
        ]
    }

    /// The reference table of error prompts pgmcp was designed against:
    /// each error, and the guidance appended to it.
    #[test]
    fn reference_table() {
        let cases = [
            ("permission denied for table users", "Ask the DBA for access."),
            (
                r#"relation "foo" does not exist"#,
                "Call list_tables to see what exists.",
            ),
            ("some other error", ""),
            (
                "permission denied, relation does not exist",
                "Ask the DBA for access.\nCall list_tables to see what exists.",
            ),
            ("rejected by test hook", "A hook refused this query."),
        ];
        for (error, expected) in cases {
            assert_eq!(matching(&rules(), error), expected, "{error}");
        }
        assert_eq!(matching(&[], "permission denied"), "");
    }

    #[test]
    fn annotate_appends_after_a_blank_line() {
        assert_eq!(
            annotate(&rules(), "permission denied for table t".into()),
            "permission denied for table t\n\nAsk the DBA for access."
        );
        assert_eq!(annotate(&rules(), "boom".into()), "boom");
    }

    /// Rules are shared by concurrent calls.
    #[test]
    fn concurrent_use() {
        let rules = rules();
        std::thread::scope(|s| {
            for i in 0..10 {
                let rules = &rules;
                s.spawn(move || {
                    for _ in 0..100 {
                        let (error, prompt) = if i % 2 == 0 {
                            ("permission denied", "Ask the DBA for access.")
                        } else {
                            ("boom", "")
                        };
                        assert_eq!(matching(rules, error), prompt);
                    }
                });
            }
        });
    }
}
