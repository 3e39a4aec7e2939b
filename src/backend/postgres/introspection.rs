//! Catalog introspection: pgmcp's own catalog queries (one `json` value,
//! a read-only transaction of their own, as the session's role) and the
//! answers built from them: `list_tables`, `describe_table` (with the one
//! "does not exist" answer for a table the role cannot read), "did you
//! mean" names, and the facts `pgmcp check` asks for (`suggest_role`,
//! `hba_facts`). Apart from `catalog.rs`, which holds the SQL.

use serde_json::Value;

use super::deadline::run;
use super::pooler::surfaced;
use super::session::timeout_ms;
use super::wire::Exchange;
use super::{Deadline, HbaFacts, NewLogin, PgBackend, catalog, hba, role, suggest_role_sql};
use crate::backend::Extension;
use crate::error::{DbError, Error, NotFound};
use crate::pipeline::catalog::{TableDescription, TableFilter, TableList};

/// The most tables `list_tables` asks the catalog for: its query takes the
/// cap as an `int` and asks for one more, to tell that the list was cut.
const LIST_LIMIT_MAX: usize = 2_147_483_646;

/// Where an installed extension lives: `$1` is its name.
const EXTENSION: &str = "SELECT pg_catalog.json_build_object('schema', n.nspname, 'version', e.extversion, \
    'functions', (SELECT pg_catalog.json_agg(p.proname::pg_catalog.text OPERATOR(pg_catalog.||) '(' \
        OPERATOR(pg_catalog.||) pg_catalog.oidvectortypes(p.proargtypes) OPERATOR(pg_catalog.||) ')') \
      FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) d.objid \
      WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass \
        AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass \
        AND d.refobjid OPERATOR(pg_catalog.=) e.oid AND d.deptype OPERATOR(pg_catalog.=) 'e')) \
    FROM pg_catalog.pg_extension e \
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace \
    WHERE e.extname OPERATOR(pg_catalog.=) $1::pg_catalog.name";

/// A setting's value, NULL when the server has no such setting: `$1` is
/// its name. From pg_settings, which lists a setting a library defines only
/// once the library is loaded, where `current_setting` would also answer
/// for a placeholder the configuration file names.
const SETTING: &str = "SELECT pg_catalog.to_json(s.setting) FROM pg_catalog.pg_settings s \
    WHERE s.name OPERATOR(pg_catalog.=) $1::pg_catalog.text";

impl PgBackend {
    /// The value of the setting `name`, if the server has it.
    pub async fn setting(&self, name: &str, deadline: &Deadline) -> Result<Option<String>, Error> {
        self.catalog(SETTING, &[Some(name.to_owned())], deadline).await
    }

    /// The extension `name` as this database has it installed, if it does.
    pub async fn extension(&self, name: &str, deadline: &Deadline) -> Result<Option<Extension>, Error> {
        self.catalog(EXTENSION, &[Some(name.to_owned())], deadline).await
    }

    /// SQL that creates `role` as a least-privilege reader of this database,
    /// with its schemas, table owners and the login filled in; with
    /// `login`, and that login as its member. `psql` is the shell line that
    /// runs it, for its comment.
    pub async fn suggest_role(
        &self,
        role: &str,
        login: Option<&NewLogin>,
        psql: Option<&str>,
        deadline: &Deadline,
    ) -> Result<String, Error> {
        let facts: role::SuggestFacts = self.catalog(role::SUGGEST_FACTS, &[], deadline).await?;
        Ok(suggest_role_sql(role, Some(&facts), login, psql))
    }

    /// What the server says about pg_hba.conf for a login connecting as this
    /// connection did: where the connection comes from, and the file's rules,
    /// or why they could not be read (the server's refusal: only a superuser
    /// may read them), and the roles `reader` is a member of, for
    /// `+group` lines.
    pub async fn hba_facts(&self, reader: &str, deadline: &Deadline) -> Result<HbaFacts, Error> {
        let client: hba::Client = self.catalog(hba::CLIENT, &[], deadline).await?;
        let rules = self
            .catalog::<hba::Rules>(hba::RULES, &[], deadline)
            .await
            .map_err(|e| e.to_string());
        // Unanswered, memberships are unknown: `+group` lines are then
        // "cannot tell", never guessed.
        let reader_groups = self
            .catalog::<hba::ReaderGroups>(hba::READER_GROUPS, &[Some(reader.to_owned())], deadline)
            .await
            .ok()
            .and_then(|g| g.of_new_login());
        Ok(HbaFacts {
            origin: hba::Origin::of(&client),
            rules,
            reader_groups,
        })
    }

    pub async fn list_tables(&self, filter: &TableFilter, deadline: &Deadline) -> Result<TableList, Error> {
        let params = [
            filter.schema.clone(),
            filter.like_pattern(),
            // The catalog query reads it as `int` and adds 1: a cap past
            // that (`query.max_rows` or `PGMCP_MAX_ROWS` may be any size)
            // would fail every call with "integer out of range".
            Some(filter.limit.min(LIST_LIMIT_MAX).to_string()),
        ];
        self.catalog(&catalog::LIST_TABLES, &params, deadline).await
    }

    /// Describe `name` in `schema`; with no schema, in `public` if it is there,
    /// else in the one schema that has it. Errors say where it is instead.
    pub async fn describe_table(
        &self,
        schema: Option<&str>,
        name: &str,
        deadline: &Deadline,
    ) -> Result<TableDescription, Error> {
        let holders: Vec<String> = self
            .catalog(catalog::SCHEMAS_WITH_TABLE, &[Some(name.to_owned())], deadline)
            .await?;
        let asked = schema;
        let schema = match (schema, holders.as_slice()) {
            (Some(schema), _) if holders.iter().any(|h| h == schema) => schema.to_owned(),
            (_, []) => return Err(self.no_such_table(asked, name, deadline).await),
            (Some(schema), others) => {
                return Err(NotFound::TableElsewhere {
                    schema: schema.to_owned(),
                    name: name.to_owned(),
                    others: others.to_vec(),
                }
                .into());
            }
            (None, holders) if holders.iter().any(|h| h == "public") => "public".to_owned(),
            (None, [only]) => only.clone(),
            (None, several) => {
                return Err(NotFound::AmbiguousTable {
                    name: name.to_owned(),
                    schemas: several.to_vec(),
                }
                .into());
            }
        };
        let doc: Option<TableDescription> = self
            .catalog(
                &catalog::DESCRIBE_TABLE,
                &[Some(schema.clone()), Some(name.to_owned())],
                deadline,
            )
            .await?;
        match doc {
            Some(doc) => Ok(doc),
            // Dropped, or its grant revoked, since the first query: the same
            // answer as if it had never been there.
            None => Err(self.no_such_table(asked, name, deadline).await),
        }
    }

    /// The one answer for a table the role cannot read, whether it exists or
    /// not (the catalog queries show only readable ones): nothing in it may
    /// tell the two apart.
    async fn no_such_table(&self, schema: Option<&str>, name: &str, deadline: &Deadline) -> Error {
        let target = schema.map_or_else(|| format!("\"{name}\""), |s| format!("\"{s}\".\"{name}\""));
        let advice = crate::suggest::table_advice(&self.similar_tables(name, deadline).await);
        NotFound::Table {
            what: format!("table {target}"),
            unreadable: true,
            advice,
        }
        .into()
    }

    /// Close names from the catalog for an undefined table (42P01) or column
    /// (42703); `relations` are the tables the failed statement mentions. Best
    /// effort: any failure means no suggestions.
    pub async fn suggest(&self, error: &DbError, relations: &[String], deadline: &Deadline) -> Vec<String> {
        match error.code() {
            "42P01" => match quoted_name(&error.message, "relation ") {
                Some(name) => {
                    self.similar_tables(name.rsplit('.').next().unwrap_or(&name), deadline)
                        .await
                }
                None => Vec::new(),
            },
            "42703" if !relations.is_empty() => {
                let Some(column) = quoted_name(&error.message, "column ") else {
                    return Vec::new();
                };
                let column = column.rsplit('.').next().unwrap_or(&column).to_owned();
                let list = Some(format!(
                    "{{{}}}",
                    relations
                        .iter()
                        .map(|r| format!("\"{}\"", r.replace('"', "\\\"")))
                        .collect::<Vec<_>>()
                        .join(",")
                ));
                let pairs: Vec<(String, String)> = self
                    .catalog(catalog::COLUMN_NAMES, &[list], deadline)
                    .await
                    .unwrap_or_default();
                let qualified: Vec<String> = pairs.iter().map(|(t, c)| format!("{t}.{c}")).collect();
                let names: Vec<&str> = pairs.iter().map(|(_, c)| c.as_str()).collect();
                let close = crate::suggest::closest(&column, names.iter().copied(), 3);
                close
                    .iter()
                    .filter_map(|c| names.iter().position(|n| n == c).map(|i| qualified[i].clone()))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    async fn similar_tables(&self, name: &str, deadline: &Deadline) -> Vec<String> {
        let pairs: Vec<(String, String)> = self
            .catalog(catalog::RELATION_NAMES, &[], deadline)
            .await
            .unwrap_or_default();
        let qualified: Vec<String> = pairs.iter().map(|(s, t)| format!("{s}.{t}")).collect();
        let names: Vec<&str> = pairs.iter().map(|(_, t)| t.as_str()).collect();
        let mut out = Vec::new();
        for close in crate::suggest::closest(name, names.iter().copied(), 3) {
            for (i, n) in names.iter().enumerate() {
                if *n == close && !out.contains(&qualified[i]) && out.len() < 3 {
                    out.push(qualified[i].clone());
                }
            }
        }
        out
    }

    /// Run a catalog query returning one `json` value and read it as `T`
    /// (`T::default()`-like `null` when there is no row).
    pub(super) async fn catalog<T: serde::de::DeserializeOwned>(
        &self,
        sql: &str,
        params: &[Option<String>],
        deadline: &Deadline,
    ) -> Result<T, Error> {
        let doc = self.catalog_json(sql, params, deadline).await?;
        serde_json::from_value(doc.unwrap_or(Value::Null)).map_err(|e| Error::UnexpectedReply {
            what: "a catalog query",
            detail: e.to_string(),
        })
    }

    /// Run a catalog query that returns one `json` value (or no row).
    pub(super) async fn catalog_json(
        &self,
        sql: &str,
        params: &[Option<String>],
        deadline: &Deadline,
    ) -> Result<Option<Value>, Error> {
        match self.catalog_json_once(sql, params, deadline).await {
            Err(Error::StatementLost(_)) => self.catalog_json_once(sql, params, deadline).await.map_err(surfaced),
            other => other,
        }
    }

    async fn catalog_json_once(
        &self,
        sql: &str,
        params: &[Option<String>],
        deadline: &Deadline,
    ) -> Result<Option<Value>, Error> {
        let mut conn = self.checkout(deadline).await?;
        let timeout = timeout_ms(deadline);
        // JIT compiling a catalog query costs more (up to seconds for the
        // function facts) than running it.
        let setup = [self.setup("BEGIN READ ONLY", &conn), vec!["SET LOCAL jit = off"]].concat();
        let result = run(
            &mut conn,
            &Exchange {
                setup: &setup,
                sql,
                params,
                max_rows: 2,
                budget: None,
                finish: &["COMMIT"],
                deferred: &[],
                prepared: &[self.settings(&timeout)],
            },
            deadline,
        )
        .await;
        match &result {
            Ok(_) => self.audit_once(&mut conn).await,
            Err(Error::StatementLost(_)) => self.statement_lost(&mut conn, deadline).await,
            Err(_) => {}
        }
        let result = result.map_err(|e| self.explain(e, conn.reader.as_ref()));
        self.checkin(conn);
        let result = result?;
        let text = result
            .rows
            .first()
            .and_then(|row| row.first())
            .and_then(|cell| cell.as_ref());
        match text {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(bytes)
                .map(Some)
                .map_err(|e| Error::UnexpectedReply {
                    what: "a catalog query",
                    detail: e.to_string(),
                }),
        }
    }
}

/// The name in `relation "x" does not exist` or `column t.x does not exist`:
/// what follows `prefix`, unquoted, up to the next space.
fn quoted_name(message: &str, prefix: &str) -> Option<String> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    let name = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split(' ').next()?,
    };
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_error_messages() {
        assert_eq!(
            quoted_name("relation \"user\" does not exist", "relation "),
            Some("user".into())
        );
        assert_eq!(
            quoted_name("relation \"sales.ordrs\" does not exist", "relation "),
            Some("sales.ordrs".into())
        );
        assert_eq!(
            quoted_name("column \"emial\" does not exist", "column "),
            Some("emial".into())
        );
        assert_eq!(
            quoted_name("column u.emial does not exist", "column "),
            Some("u.emial".into())
        );
        assert_eq!(
            quoted_name("column \"x\" of relation \"t\" does not exist", "column "),
            Some("x".into())
        );
        assert_eq!(quoted_name("syntax error", "column "), None);
    }
}
