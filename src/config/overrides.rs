//! The environment layer, over the file: the variables a desktop bundle
//! passes ([`Config::with_environment`]), each one applied recorded as an
//! [`Override`], each one refused an [`EnvError`] naming the variable.
//! (`crate::process::environment` reads the variables; this is what config does
//! with them.)

use super::Config;
use crate::config::mistake;

/// A setting from the environment that cannot be used, naming the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {message}")]
pub struct EnvError {
    pub variable: &'static str,
    pub message: String,
}

/// A config field an environment variable set, over the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub variable: &'static str,
    /// The dotted config field it stands for, e.g. `query.max_rows`.
    pub field: &'static str,
    pub value: String,
}

impl Config {
    /// The environment layer, over the file: the settings a desktop bundle
    /// passes as variables. `PGMCP_READ_ONLY` (`true`/`false`) sets
    /// `server.read_only`; `PGMCP_READ_ONLY_AS_LOGIN` (`true`/`false`) sets
    /// `connection.read_only_as_login`; `PGMCP_MAX_ROWS` (a whole number above 0) sets
    /// `query.max_rows`, and lowers `query.default_limit` to it when the file
    /// set that higher; `PGMCP_DEMO` (`true`/`false`), when on, sets
    /// `server.read_only` whatever `PGMCP_READ_ONLY` says (the database it
    /// names is chosen by `crate::backend::named`). Each one applied is
    /// recorded in `overrides`.
    pub fn with_environment(mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, EnvError> {
        // `true`/`false` variables: the setting each sets, recorded.
        let switch = |variable: &'static str, field: &'static str, overrides: &mut Vec<Override>| {
            let Some(text) = env(variable) else {
                return Ok(None);
            };
            let value = crate::process::environment::switch(&text).ok_or_else(|| EnvError {
                variable,
                message: format!("{} is not true or false", mistake::quoted(&text)),
            })?;
            overrides.push(Override {
                variable,
                field,
                value: value.to_string(),
            });
            Ok(Some(value))
        };
        if let Some(read_only) = switch("PGMCP_READ_ONLY", "server.read_only", &mut self.overrides)? {
            self.read_only = read_only;
        }
        // The demo shop is served read-only whatever PGMCP_READ_ONLY says:
        // it is there to look at (see `crate::backend::demo`).
        if let Some(text) = env("PGMCP_DEMO") {
            let demo = crate::process::environment::switch(&text).ok_or_else(|| EnvError {
                variable: "PGMCP_DEMO",
                message: format!("{} is not true or false", mistake::quoted(&text)),
            })?;
            if demo {
                self.read_only = true;
                self.overrides.push(Override {
                    variable: "PGMCP_DEMO",
                    field: "server.read_only",
                    value: true.to_string(),
                });
            }
        }
        // With connection.role set, queries run as that role either way.
        if let Some(as_login) = switch(
            "PGMCP_READ_ONLY_AS_LOGIN",
            "connection.read_only_as_login",
            &mut self.overrides,
        )? {
            self.connection.read_only_as_login = as_login;
        }
        if let Some(text) = env("PGMCP_MAX_ROWS") {
            let max_rows = text
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| EnvError {
                    variable: "PGMCP_MAX_ROWS",
                    message: format!("{} is not a whole number greater than 0", mistake::quoted(&text)),
                })?;
            self.query.max_rows = max_rows;
            // The cap wins: a call without `limit` never gets more than one with it.
            self.query.default_limit = self.query.default_limit.map(|limit| limit.min(max_rows));
            self.overrides.push(Override {
                variable: "PGMCP_MAX_ROWS",
                field: "query.max_rows",
                value: max_rows.to_string(),
            });
        }
        // Each of `databases` gets the same layer over its own config, but
        // `PGMCP_READ_ONLY=false` reaches only those that take their mode
        // from the file's top level: an entry the file makes read-only
        // stays so. `true` reaches every one.
        for database in &mut self.databases {
            let inherits = database.inherits_read_only;
            let own = |variable: &str| match variable {
                "PGMCP_READ_ONLY"
                    if !inherits
                        && env(variable).and_then(|t| crate::process::environment::switch(&t)) == Some(false) =>
                {
                    None
                }
                // Refused beside `databases` when it names the demo shop.
                "PGMCP_DEMO" => None,
                other => env(other),
            };
            database.config = database.config.clone().with_environment(&own)?;
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::tests::load;

    #[test]
    fn the_environment_layers_over_the_file() {
        let file =
            load(r#"{"server": {"read_only": false}, "query": {"max_rows": 900, "default_limit": 800}}"#).unwrap();
        let with = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
            file.clone()
                .with_environment(&|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        let c = with(&[]).unwrap();
        assert_eq!((c.read_only, c.query.max_rows, c.overrides.len()), (false, 900, 0));
        let c = with(&[("PGMCP_READ_ONLY_AS_LOGIN", " true ")]).unwrap();
        assert!(c.connection.read_only_as_login);
        assert_eq!(c.overrides[0].field, "connection.read_only_as_login");
        let c = with(&[("PGMCP_READ_ONLY", "TRUE"), ("PGMCP_MAX_ROWS", "100")]).unwrap();
        assert!(c.read_only);
        assert_eq!((c.query.max_rows, c.query.default_limit), (100, Some(100)));
        let shown: Vec<_> = c
            .overrides
            .iter()
            .map(|o| (o.variable, o.field, o.value.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("PGMCP_READ_ONLY", "server.read_only", "true"),
                ("PGMCP_MAX_ROWS", "query.max_rows", "100")
            ]
        );
        // The demo is read-only whatever PGMCP_READ_ONLY says; off is no override.
        let c = with(&[("PGMCP_READ_ONLY", "false"), ("PGMCP_DEMO", "true")]).unwrap();
        assert!(c.read_only);
        assert_eq!(
            c.overrides.last().map(|o| (o.variable, o.field)),
            Some(("PGMCP_DEMO", "server.read_only"))
        );
        let c = with(&[("PGMCP_DEMO", "False")]).unwrap();
        assert_eq!((c.read_only, c.overrides.len()), (false, 0));
        for (variable, value, message) in [
            ("PGMCP_DEMO", "1", "PGMCP_DEMO: \"1\" is not true or false"),
            (
                "PGMCP_READ_ONLY",
                "yes please",
                "PGMCP_READ_ONLY: \"yes please\" is not true or false",
            ),
            (
                "PGMCP_READ_ONLY_AS_LOGIN",
                "1",
                "PGMCP_READ_ONLY_AS_LOGIN: \"1\" is not true or false",
            ),
            (
                "PGMCP_MAX_ROWS",
                "abc",
                "PGMCP_MAX_ROWS: \"abc\" is not a whole number greater than 0",
            ),
            (
                "PGMCP_MAX_ROWS",
                "0",
                "PGMCP_MAX_ROWS: \"0\" is not a whole number greater than 0",
            ),
            (
                "PGMCP_MAX_ROWS",
                "-5",
                "PGMCP_MAX_ROWS: \"-5\" is not a whole number greater than 0",
            ),
        ] {
            assert_eq!(with(&[(variable, value)]).unwrap_err().to_string(), message);
        }
    }
}
