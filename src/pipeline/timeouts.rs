//! Timeout rules: the first rule whose pattern matches the SQL sets the call's
//! timeout; otherwise the default applies. Pure.

use std::time::Duration;

use regex::Regex;

#[derive(Debug, Clone)]
pub struct TimeoutRule {
    pub pattern: Regex,
    pub timeout: Duration,
}

impl PartialEq for TimeoutRule {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.as_str() == other.pattern.as_str() && self.timeout == other.timeout
    }
}

/// The timeout for `sql`: the first matching rule's, else `default`.
pub fn for_sql(rules: &[TimeoutRule], default: Duration, sql: &str) -> Duration {
    rules
        .iter()
        .find(|r| r.pattern.is_match(sql))
        .map_or(default, |r| r.timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference table of timeout rules pgmcp was designed against:
    /// each query, and the timeout its first matching pattern gives.
    #[test]
    fn reference_table() {
        let rules = [
            TimeoutRule {
                pattern: Regex::new("pg_stat").unwrap(),
                timeout: Duration::from_secs(5),
            },
            TimeoutRule {
                pattern: Regex::new("(?i)JOIN.*JOIN.*JOIN").unwrap(),
                timeout: Duration::from_secs(60),
            },
        ];
        let default = Duration::from_secs(30);
        let cases = [
            ("SELECT * FROM pg_stat_activity", &rules[..], 5),
            ("SELECT * FROM pg_stat JOIN x JOIN y JOIN z", &rules[..], 5),
            ("SELECT * FROM a JOIN b JOIN c JOIN d", &rules[..], 60),
            ("SELECT 1", &rules[..], 30),
            ("SELECT 1", &[], 30),
        ];
        for (sql, rules, secs) in cases {
            assert_eq!(for_sql(rules, default, sql), Duration::from_secs(secs), "{sql}");
        }
    }

    /// Rules are shared by concurrent calls.
    #[test]
    fn concurrent_use() {
        let rules = [TimeoutRule {
            pattern: Regex::new("slow").unwrap(),
            timeout: Duration::from_secs(5),
        }];
        std::thread::scope(|s| {
            for i in 0..10 {
                let rules = &rules;
                s.spawn(move || {
                    for _ in 0..100 {
                        let (sql, secs) = if i % 2 == 0 {
                            ("SELECT slow()", 5)
                        } else {
                            ("SELECT 1", 30)
                        };
                        assert_eq!(for_sql(rules, Duration::from_secs(30), sql), Duration::from_secs(secs));
                    }
                });
            }
        });
    }
}
