//! hypopg's statements around one plan. hypopg keeps its indexes in the
//! database session, where a rollback does not reach them, and behind a
//! transaction pooler the session is the next client's once the call is
//! done. So the prelude drops whatever indexes the session holds and makes
//! the call's (each definition a parameter, never SQL text); the epilogue,
//! in the message that ends the plan's transaction, drops them again, as
//! the role that made them (`Statement::epilogue`).

use crate::backend::OwnStatement;
use crate::identifier;

/// Statements of the prelude before the first definition's.
const BEFORE: usize = 1;

/// What `explain` says when the database has no hypopg.
pub const MISSING: &str = "hypothetical_indexes need the hypopg extension, which this database does not have. \
    A superuser installs it: the server's package (Debian and Ubuntu: postgresql-<major version>-hypopg; \
    others: https://github.com/HypoPG/hypopg), then CREATE EXTENSION hypopg; in this database. Meanwhile, \
    explain the statement without hypothetical_indexes";

/// The statements around one plan made with hypothetical indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hypopg {
    prelude: Vec<OwnStatement>,
    epilogue: Vec<String>,
}

impl Hypopg {
    /// For `definitions`, with hypopg's functions in `schema`.
    pub fn new(schema: &str, definitions: &[String]) -> Hypopg {
        let schema = identifier::quoted(schema);
        let reset = format!("SELECT {schema}.hypopg_reset()");
        let own = |sql: String, params: Vec<Option<String>>| OwnStatement {
            sql,
            params,
            before_parse: false,
        };
        let mut prelude = vec![own(reset.clone(), Vec::new())];
        prelude.extend(definitions.iter().map(|definition| {
            own(
                format!("SELECT h.indexname FROM {schema}.hypopg_create_index($1::pg_catalog.text) AS h"),
                vec![Some(definition.clone())],
            )
        }));
        Hypopg {
            prelude,
            epilogue: vec![reset],
        }
    }

    /// The prelude and the epilogue, as [`crate::backend::Statement`] takes them.
    pub fn around(&self) -> (&[OwnStatement], &[String]) {
        (&self.prelude, &self.epilogue)
    }

    /// The name hypopg gave each definition, in order, from the prelude's
    /// answers (empty where none came back).
    pub fn names(answers: &[Option<String>]) -> impl Iterator<Item = String> + '_ {
        answers.iter().skip(BEFORE).map(|name| name.clone().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_parameters_and_the_epilogue_undoes_the_prelude() {
        let hypopg = Hypopg::new("my \"ext\"", &["CREATE INDEX ON t (a) WHERE b = E'\\''".to_owned()]);
        let (prelude, epilogue) = hypopg.around();
        let sql: Vec<&str> = prelude.iter().map(|s| s.sql.as_str()).collect();
        assert_eq!(
            sql,
            [
                "SELECT \"my \"\"ext\"\"\".hypopg_reset()",
                "SELECT h.indexname FROM \"my \"\"ext\"\"\".hypopg_create_index($1::pg_catalog.text) AS h",
            ]
        );
        assert_eq!(
            prelude[1].params,
            [Some("CREATE INDEX ON t (a) WHERE b = E'\\''".to_owned())]
        );
        assert_eq!(epilogue, ["SELECT \"my \"\"ext\"\"\".hypopg_reset()"]);
        let answers = [Some(String::new()), Some("<1>btree_t_a".to_owned()), None];
        assert_eq!(Hypopg::names(&answers).collect::<Vec<_>>(), ["<1>btree_t_a", ""]);
    }
}
