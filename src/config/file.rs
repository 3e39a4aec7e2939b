//! Which file, and reading it: [`ConfigLocation`] resolves the file and
//! layers defaults, file and environment in their one order;
//! [`Config::load`] reads a file its owner alone could have written;
//! [`Config::from_json`] reads the text into a `RawConfig` and validates
//! it. The errors a load ends in name the file and the field.

use std::fmt;
use std::path::{Path, PathBuf};

use super::{Config, EnvError, RawConfig};
use crate::config::mistake;
use crate::process::trust;

/// A config that cannot be used, naming the file and field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub file: Option<PathBuf>,
    /// Dotted path of the offending field, e.g. `query.default_timeout_seconds`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "config {}", file.display())?,
            None => write!(f, "config")?,
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why the settings cannot be loaded: the file, or the environment over it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    File(#[from] ConfigError),
    #[error(transparent)]
    Environment(#[from] EnvError),
}

/// The per-directory config older versions found on their own; now only read
/// when named by `--config` or `PGMCP_CONFIG_PATH`.
pub const LOCAL_CONFIG: &str = ".pgmcp/config.json";

/// Which file to read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigLocation {
    /// Named by `--config` or `PGMCP_CONFIG_PATH`: it must exist.
    Explicit(PathBuf),
    /// Found at a default location.
    Found(PathBuf),
    /// Nothing found: built-in defaults.
    BuiltIn,
}

impl ConfigLocation {
    /// Apply the resolution order. `flag` is `--config`, `env_path` is
    /// `PGMCP_CONFIG_PATH`.
    pub fn resolve(flag: Option<&Path>, env_path: Option<&str>) -> ConfigLocation {
        if let Some(path) = flag {
            return ConfigLocation::Explicit(path.to_owned());
        }
        if let Some(path) = env_path.filter(|p| !p.is_empty()) {
            return ConfigLocation::Explicit(PathBuf::from(path));
        }
        Self::candidates()
            .into_iter()
            .find(|p| p.is_file())
            .map_or(ConfigLocation::BuiltIn, ConfigLocation::Found)
    }

    /// The default locations, in the order they are tried: the person's own
    /// config dir, never the working directory.
    pub fn candidates() -> Vec<PathBuf> {
        // A relative HOME would make the config dir relative to the working
        // directory, the one place never searched.
        dirs::config_dir()
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join("pgmcp").join("config.json"))
            .into_iter()
            .collect()
    }

    /// `./.pgmcp/config.json` when it exists and is not the file `used`: older
    /// versions read it, so its owner may expect it to apply.
    pub fn ignored_local(used: Option<&Path>) -> Option<PathBuf> {
        let local = Path::new(LOCAL_CONFIG);
        if !local.is_file() {
            return None;
        }
        let same = |used: &Path| match (std::fs::canonicalize(used), std::fs::canonicalize(local)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        match used {
            Some(used) if same(used) => None,
            _ => Some(local.to_owned()),
        }
    }

    /// The settings in effect, layered in their one order: the built-in
    /// defaults, then the file (if any), then the environment. `env` reads
    /// a variable, an empty one being unset (`crate::process::environment::var`).
    pub fn load(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, LoadError> {
        Ok(self.load_file()?.with_environment(env)?)
    }

    /// The defaults and the file, without the environment: what logging is
    /// set up from when the environment layer fails.
    pub fn load_file(&self) -> Result<Config, ConfigError> {
        match self {
            ConfigLocation::Explicit(path) | ConfigLocation::Found(path) => Config::load(path),
            ConfigLocation::BuiltIn => Ok(Config::builtin()),
        }
    }
}

impl Config {
    /// Read and validate a config file, refusing it, or a hook program it
    /// names, when someone other than its owner could have changed it (see
    /// `crate::process::trust`).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let fail = |field: Option<String>, message: String| ConfigError {
            file: Some(path.to_owned()),
            field,
            message,
        };
        let unreadable = |e: std::io::Error| fail(None, format!("cannot read the file: {e}"));
        let mut file = std::fs::File::open(path).map_err(unreadable)?;
        trust::check_file(&file, path).map_err(|e| fail(None, e.to_string()))?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(unreadable)?;
        // What the config names is found next to it: from an absolute
        // path, so hooks (which run in `/`) find it too.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let mut config = Config::from_json(&text, Some(&absolute))?;
        config.source = Some(path.to_owned());
        for (stage, hooks) in [
            ("before_query", &mut config.hooks.before_query),
            ("after_query", &mut config.hooks.after_query),
        ] {
            for (i, hook) in hooks.iter_mut().enumerate() {
                // A program that is not there fails when the hook runs (and
                // `check` reports it); one that is there must be trusted, and
                // is what runs (a bare name is not looked up again).
                if let Some(program) = hook.program() {
                    trust::check_path(&program)
                        .map_err(|e| fail(Some(format!("hooks.{stage}[{i}].command")), e.to_string()))?;
                    hook.command = program;
                }
                // A script handed to an interpreter (`"command": "python3",
                // "args": ["hooks/check.py"]`) is as much the hook as the
                // program: a relative argument naming a file next to the
                // config becomes that file's path (hooks run in `/`, never
                // in the directory pgmcp was started in), and an argument
                // naming an existing file is checked too.
                for (j, arg) in hook.args.iter_mut().enumerate() {
                    let beside = absolute.parent().map(|dir| dir.join(&*arg));
                    if Path::new(arg).is_relative()
                        && let Some(beside) = beside.filter(|b| b.is_file())
                    {
                        *arg = beside.to_string_lossy().into_owned();
                    }
                    let named = Path::new(arg);
                    if named.is_absolute() && named.is_file() {
                        trust::check_path(named)
                            .map_err(|e| fail(Some(format!("hooks.{stage}[{i}].args[{j}]")), e.to_string()))?;
                    }
                }
            }
        }
        Ok(config)
    }

    /// Parse and validate config text; `file` is only used in error messages.
    pub fn from_json(text: &str, file: Option<&Path>) -> Result<Config, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw = serde_path_to_error::deserialize::<_, RawConfig>(&mut *de).map_err(|e| misread(text, &e, file))?;
        // Text after the object is a mistake too (a second object pasted in).
        de.end().map_err(|e| ConfigError {
            file: file.map(Path::to_owned),
            field: None,
            message: mistake::syntax(&e),
        })?;
        raw.validate(file)
    }
}

/// Why `text` does not read as a [`RawConfig`], in the words of the person
/// who wrote it. The text is read straight into the types first (what a
/// file that reads costs); only when that fails is it read again, from its
/// parsed form, to word the mistake: see [`crate::config::mistake`].
fn misread(text: &str, first: &serde_path_to_error::Error<serde_json::Error>, file: Option<&Path>) -> ConfigError {
    let fail = |field: String, message: String| ConfigError {
        file: file.map(Path::to_owned),
        field: (!field.is_empty()).then_some(field),
        message,
    };
    if !first.inner().is_data() {
        return fail(String::new(), mistake::syntax(first.inner()));
    }
    let doc: serde_json::Value = match serde_json::from_str(text) {
        Ok(doc) => doc,
        // A type mistake before a syntax mistake further on: the syntax first.
        Err(e) => return fail(String::new(), mistake::syntax(&e)),
    };
    match mistake::read::<RawConfig>(&doc) {
        Err(m) => fail(m.path, m.message),
        // Read from the text it fails, read from the parsed value it does
        // not: the value keeps only the last of a key written twice in one
        // object, which the text showed (serde: "duplicate field").
        Ok(_) => {
            let path = first.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let message = first.inner().to_string();
            match message
                .strip_prefix("duplicate field `")
                .and_then(|rest| rest.split('`').next())
            {
                Some(key) if path.is_empty() => fail(key.to_owned(), "given more than once: keep one".into()),
                Some(key) => fail(format!("{path}.{key}"), "given more than once: keep one".into()),
                None => fail(path, message),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::load;

    /// A file that is not what the config's types read: the field by its
    /// path, what it should be in words, what was found; or where the text
    /// stops being JSON. Never Rust's type names or serde's phrasing.
    #[test]
    fn mistakes_in_the_file_are_worded_for_people() {
        let cases = [
            (
                r#"{"query": {"max_rows": "500"}}"#,
                "query.max_rows: expected a whole number, found the text \"500\"",
            ),
            (
                r#"{"connection": {"port": -1}}"#,
                "connection.port: expected a whole number from 0 to 65535, found -1",
            ),
            (
                r#"{"connection": {"port": "abc"}}"#,
                "connection.port: expected a whole number from 0 to 65535, found the text \"abc\"",
            ),
            (
                r#"{"connection": {"connect_timeout_seconds": -5}}"#,
                "connection.connect_timeout_seconds: expected a whole number, 0 or more, found -5",
            ),
            (
                r#"{"server": {"read_only": "no"}}"#,
                "server.read_only: expected true or false, found the text \"no\"",
            ),
            (
                r#"{"protection": {"allow_drop": 1}}"#,
                "protection.allow_drop: expected true or false, found 1",
            ),
            (
                r#"{"protection": {"allow_dorp": true}}"#,
                "protection.allow_dorp: unknown field: did you mean allow_do or allow_drop?",
            ),
            (r#"{"querry": {}}"#, "querry: unknown field: did you mean query?"),
            (
                r#"{"server": {"allowed_origins": "https://a.example"}}"#,
                "server.allowed_origins: expected a list of text, found the text \"https://a.example\"",
            ),
            (
                r#"{"server": {"allowed_origins": ["https://a.example", 3]}}"#,
                "server.allowed_origins[1]: expected text, found 3",
            ),
            (
                r#"{"protection": {"blocked_functions": [true]}}"#,
                "protection.blocked_functions[0]: expected text, found true",
            ),
            (
                r#"{"query": {"timeout_rules": {"pattern": "x"}}}"#,
                "query.timeout_rules: expected a list of objects { ... }, found an object",
            ),
            (
                r#"{"query": {"timeout_rules": [{"pattern": "x", "timeout_seconds": "5"}]}}"#,
                "query.timeout_rules[0].timeout_seconds: expected a whole number, found the text \"5\"",
            ),
            (
                r#"{"hooks": {"before_query": [{"pattern": "x"}]}}"#,
                "hooks.before_query[0].command: required, and missing",
            ),
            (r#"{"query": 500}"#, "query: expected an object { ... }, found 500"),
            (
                r#"{"query": {"max_rows": 5, "max_rows": 6}}"#,
                "query.max_rows: given more than once: keep one",
            ),
            ("5", "expected an object { ... }, found 5"),
            (
                "{\n  \"query\": {\n    \"max_rows\": 5,\n  }\n}",
                "line 4, column 3: not valid JSON: a comma before } or ] (JSON allows none there)",
            ),
            (
                "{\"query\": {\"max_rows\": 5}} {}",
                "line 1, column 28: not valid JSON: more text after the end of the JSON",
            ),
            (
                "",
                "line 1, column 0: not valid JSON: the text ends before the JSON does (a } or ] missing?)",
            ),
        ];
        for (text, expected) in cases {
            let e = load(text).unwrap_err().to_string();
            assert_eq!(e, format!("config /etc/pgmcp.json: {expected}"), "{text}");
        }
    }
    #[test]
    fn unknown_and_mistyped_fields_are_rejected_by_path() {
        let e = load(r#"{"query": {"default_timeout_seconds": 30, "max_rowz": 5}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("query.max_rowz"));
        assert_eq!(e.message, "unknown field: did you mean max_rows?");

        let e = load(r#"{"server": {"prot": 8080}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("server.prot"), "{e}");

        let e = load(r#"{"pool": {"max_conns": "four"}}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("pool.max_conns"));

        let e = load("{not json").unwrap_err();
        assert_eq!(e.file.as_deref(), Some(Path::new("/etc/pgmcp.json")));
        assert_eq!(
            e.to_string(),
            "config /etc/pgmcp.json: line 1, column 2: not valid JSON: a field name must be in double quotes"
        );
    }
    #[test]
    fn missing_file_names_the_path() {
        let e = Config::load(Path::new("/nonexistent/pgmcp/config.json")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("config /nonexistent/pgmcp/config.json: cannot read the file"),
            "{e}"
        );
    }
    #[test]
    fn location_order() {
        assert_eq!(
            ConfigLocation::resolve(Some(Path::new("/a.json")), Some("/b.json")),
            ConfigLocation::Explicit("/a.json".into())
        );
        assert_eq!(
            ConfigLocation::resolve(None, Some("/b.json")),
            ConfigLocation::Explicit("/b.json".into())
        );
        let c = ConfigLocation::candidates();
        assert!(c.iter().all(|p| p.is_absolute()), "{c:?}");
    }
}
