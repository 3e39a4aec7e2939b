//! What the columns of a result are: each one's type as PostgreSQL spells it,
//! and the [`Shape`] its text is read with. Built-in types are known without
//! asking; others (domains, enums, composites, extension types, arrays of them)
//! are looked up in the catalog once and cached for the backend's lifetime.

use std::collections::HashMap;
use std::sync::Mutex;

use postgres_types::{Kind, Type};

use super::value::Shape;
use super::wire::{Connection, Exchange, StatementResult, WireColumn};
use super::{catalog, run};
use crate::backend::Deadline;
use crate::error::Error;

/// A column's declared type is keyed by where it came from: a table column
/// (its declared type may be a domain, which the protocol reports as the base
/// type), or just the type and modifier of a computed column.
type NameKey = (u32, i32, u32, i16);

#[derive(Default)]
pub struct TypeCatalog {
    names: Mutex<HashMap<NameKey, String>>,
    shapes: Mutex<HashMap<u32, Shape>>,
}

impl TypeCatalog {
    /// Names and shapes for `columns`, asking the server (on `conn`) only about
    /// what is not cached. A failed lookup falls back to built-in knowledge:
    /// the text form, and the protocol's type name. `role` is the `SET LOCAL
    /// ROLE` statement of `connection.role`: the lookups run as that role too.
    pub async fn describe(
        &self,
        conn: &mut Connection,
        columns: &[WireColumn],
        role: Option<&str>,
        deadline: &Deadline,
    ) -> Vec<(String, Shape)> {
        self.learn_names(conn, columns, role, deadline).await;
        self.learn_shapes(conn, columns, role, deadline).await;
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let shapes = self.shapes.lock().unwrap_or_else(|p| p.into_inner());
        columns
            .iter()
            .map(|c| {
                let name = names.get(&name_key(c)).cloned().unwrap_or_else(|| {
                    Type::from_oid(c.type_oid).map_or_else(|| format!("oid {}", c.type_oid), |t| t.name().to_owned())
                });
                let shape = builtin_shape(c.type_oid)
                    .or_else(|| shapes.get(&c.type_oid).cloned())
                    .unwrap_or(Shape::Text);
                (name, shape)
            })
            .collect()
    }

    async fn learn_names(
        &self,
        conn: &mut Connection,
        columns: &[WireColumn],
        role: Option<&str>,
        deadline: &Deadline,
    ) {
        let missing = unseen(&self.names, columns.iter().map(name_key));
        if missing.is_empty() {
            return;
        }
        let params = [
            Some(array_literal(missing.iter().map(|k| k.0))),
            Some(array_literal(missing.iter().map(|k| k.1))),
            Some(array_literal(missing.iter().map(|k| k.2))),
            Some(array_literal(missing.iter().map(|k| k.3))),
        ];
        if let Ok(result) = lookup(conn, catalog::COLUMN_TYPE_NAMES, &params, role, deadline).await {
            let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
            for (key, row) in missing.iter().zip(&result.rows) {
                if let Some(Some(name)) = row.first() {
                    names.insert(*key, String::from_utf8_lossy(name).into_owned());
                }
            }
        }
    }

    async fn learn_shapes(
        &self,
        conn: &mut Connection,
        columns: &[WireColumn],
        role: Option<&str>,
        deadline: &Deadline,
    ) {
        let oids = columns
            .iter()
            .map(|c| c.type_oid)
            .filter(|o| builtin_shape(*o).is_none());
        let missing = unseen(&self.shapes, oids);
        if missing.is_empty() {
            return;
        }
        let params = [Some(array_literal(missing.iter().copied()))];
        let Ok(result) = lookup(conn, catalog::TYPE_SHAPES, &params, role, deadline).await else {
            return;
        };
        let mut shapes = self.shapes.lock().unwrap_or_else(|p| p.into_inner());
        for row in &result.rows {
            let text = |i: usize| {
                row.get(i)
                    .and_then(|c| c.as_ref())
                    .map(|b| String::from_utf8_lossy(b).into_owned())
            };
            let (Some(type_oid), Some(is_array), Some(base), Some(delim)) = (text(0), text(1), text(2), text(3)) else {
                continue;
            };
            let (Ok(type_oid), Ok(base)) = (type_oid.parse::<u32>(), base.parse::<u32>()) else {
                continue;
            };
            let scalar = builtin_shape(base)
                .filter(|s| !matches!(s, Shape::Array { .. }))
                .unwrap_or(Shape::Text);
            let shape = if is_array == "t" {
                Shape::Array {
                    element: Box::new(scalar),
                    delimiter: delim.bytes().next().unwrap_or(b','),
                }
            } else {
                scalar
            };
            shapes.insert(type_oid, shape);
        }
    }
}

/// Setup and finish statements for a lookup as `role`. `SET LOCAL` only
/// takes effect in a transaction block, so with a role the lookup runs in its
/// own read-only transaction; without one, in the protocol's implicit
/// transaction as before.
fn as_role(role: Option<&str>) -> (Vec<&str>, &'static [&'static str]) {
    match role {
        Some(set) => (vec!["BEGIN READ ONLY", set], &["COMMIT"]),
        None => (Vec::new(), &[]),
    }
}

/// One catalog lookup of the type cache, as `role` (see [`as_role`]).
async fn lookup(
    conn: &mut Connection,
    sql: &str,
    params: &[Option<String>],
    role: Option<&str>,
    deadline: &Deadline,
) -> Result<StatementResult, Error> {
    let (setup, finish) = as_role(role);
    let ex = Exchange {
        setup: &setup,
        sql,
        params,
        max_rows: 0,
        budget: None,
        finish,
        deferred: &[],
        prepared: &[],
    };
    run(conn, &ex, deadline).await
}

/// The keys not yet in `cache`, each once, in order.
fn unseen<K: Copy + Ord + std::hash::Hash, V>(cache: &Mutex<HashMap<K, V>>, keys: impl Iterator<Item = K>) -> Vec<K> {
    let cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    let mut missing: Vec<K> = keys.filter(|k| !cache.contains_key(k)).collect();
    missing.sort_unstable();
    missing.dedup();
    missing
}

fn name_key(c: &WireColumn) -> NameKey {
    (c.type_oid, c.type_modifier, c.table_oid, c.column_id)
}

/// The shape of a built-in type, scalar or array; `None` for types the
/// catalog must be asked about.
fn builtin_shape(type_oid: u32) -> Option<Shape> {
    // `record[]` and `anyarray` are pseudo-types, but their values print as
    // arrays; their elements' types are unknown, so elements stay text.
    if type_oid == Type::RECORD_ARRAY.oid() || type_oid == Type::ANYARRAY.oid() {
        return Some(Shape::Array {
            element: Box::new(Shape::Text),
            delimiter: b',',
        });
    }
    let ty = Type::from_oid(type_oid)?;
    Some(match ty.kind() {
        Kind::Array(element) => Shape::Array {
            element: Box::new(Shape::of_scalar(element.oid())),
            // `box` is the one built-in type whose array delimiter is `;`.
            delimiter: if element.oid() == Type::BOX.oid() { b';' } else { b',' },
        },
        _ => Shape::of_scalar(type_oid),
    })
}

fn array_literal<T: ToString>(items: impl Iterator<Item = T>) -> String {
    format!("{{{}}}", items.map(|i| i.to_string()).collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::postgres::value::oid;

    #[test]
    fn builtin_shapes() {
        assert_eq!(builtin_shape(oid::INT4), Some(Shape::Integer));
        assert_eq!(
            builtin_shape(Type::INT4_ARRAY.oid()),
            Some(Shape::Array {
                element: Box::new(Shape::Integer),
                delimiter: b','
            })
        );
        assert_eq!(
            builtin_shape(Type::BOX_ARRAY.oid()),
            Some(Shape::Array {
                element: Box::new(Shape::Text),
                delimiter: b';'
            })
        );
        assert_eq!(
            builtin_shape(Type::JSONB_ARRAY.oid()),
            Some(Shape::Array {
                element: Box::new(Shape::Json),
                delimiter: b','
            })
        );
        assert_eq!(builtin_shape(Type::NUMERIC.oid()), Some(Shape::Text));
        assert_eq!(builtin_shape(999_999), None);
        assert_eq!(array_literal([1, -2].into_iter()), "{1,-2}");
    }
}
