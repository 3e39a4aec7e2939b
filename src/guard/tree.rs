//! PostgreSQL's own parse tree for a SQL string, as JSON.
//!
//! libpg_query (PostgreSQL's real parser, compiled into the `pg_query` crate) can
//! emit its tree as protobuf or JSON. The `pg_query` crate exposes the protobuf
//! form and a hand-written node walker that, by its own account, does not visit
//! every node type. The guard must see every node, so we ask libpg_query for the
//! JSON form instead: every node is an object `{"NodeType": {...fields}}`, and a
//! generic walk over JSON cannot miss a node type, whatever PostgreSQL adds.

use std::ffi::{CStr, CString, c_char, c_int};

use serde_json::Value;

// Nothing from the crate's Rust API is used, so without this rustc would not
// link it, and with it the libpg_query archive it bundles.
extern crate pg_query as _;

// The JSON entry points of libpg_query. The `pg_query` crate links the library
// statically but keeps its bindings private, so we declare the two we use; the
// layouts match `pg_query.h` of the libpg_query bundled with pg_query 18.1.0,
// which Cargo.toml pins exactly. `declarations_match_the_bundled_header` reads
// that header and fails when a field or signature no longer matches.
#[repr(C)]
struct PgQueryError {
    message: *mut c_char,
    funcname: *mut c_char,
    filename: *mut c_char,
    lineno: c_int,
    cursorpos: c_int,
    context: *mut c_char,
}

#[repr(C)]
struct PgQueryParseResult {
    parse_tree: *mut c_char,
    stderr_buffer: *mut c_char,
    error: *mut PgQueryError,
}

unsafe extern "C" {
    fn pg_query_parse(input: *const c_char) -> PgQueryParseResult;
    fn pg_query_free_parse_result(result: PgQueryParseResult);
}

/// A parse failure, with PostgreSQL's message and 1-based cursor position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub position: Option<usize>,
}

/// The statements of one SQL string, each the JSON of a `RawStmt.stmt` node.
#[derive(Debug, Clone)]
pub struct Tree {
    pub stmts: Vec<Value>,
}

/// Deepest parse-tree JSON the guard reads (objects and arrays, nested).
pub const MAX_DEPTH: usize = 600;

/// Parse `sql` with PostgreSQL's grammar.
pub fn parse(sql: &str) -> Result<Tree, ParseError> {
    let input = CString::new(sql).map_err(|e| ParseError {
        message: "the query contains a NUL byte, which PostgreSQL does not accept".to_owned(),
        position: Some(e.nul_position() + 1),
    })?;
    // SAFETY: `input` is a valid NUL-terminated string that outlives the call;
    // the result is freed exactly once below, after its strings are copied.
    let json = unsafe {
        let result = pg_query_parse(input.as_ptr());
        let out = if !result.error.is_null() {
            let err = &*result.error;
            let message = CStr::from_ptr(err.message).to_string_lossy().into_owned();
            Err(ParseError {
                message,
                position: usize::try_from(err.cursorpos).ok().filter(|p| *p > 0),
            })
        } else {
            Ok(CStr::from_ptr(result.parse_tree).to_string_lossy().into_owned())
        };
        pg_query_free_parse_result(result);
        out
    }?;
    // serde_json's reader recurses once per level and stops at 128 by default,
    // which refuses ordinary wide expressions (each `a + b` nests deeper). We
    // measure the depth without recursion first and allow up to MAX_DEPTH, a
    // depth the reader, the walk and the drop handle within a 1 MiB stack
    // (tested below); deeper trees are refused, never passed unchecked.
    let depth = crate::json_depth::nesting_depth(&json);
    if depth > MAX_DEPTH {
        return Err(ParseError {
            message: "the query is nested too deeply for the guard to check; simplify it".to_owned(),
            position: None,
        });
    }
    let mut reader = serde_json::Deserializer::from_str(&json);
    reader.disable_recursion_limit();
    let mut root = <Value as serde::Deserialize>::deserialize(&mut reader).map_err(|e| ParseError {
        message: format!("unreadable parse tree: {e}"),
        position: None,
    })?;
    let stmts = match root.get_mut("stmts").map(Value::take) {
        Some(Value::Array(stmts)) => stmts
            .into_iter()
            .map(|mut raw| raw.get_mut("stmt").map(Value::take).unwrap_or(Value::Null))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Tree { stmts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_split_by_the_real_grammar() {
        assert_eq!(parse("SELECT 1").unwrap().stmts.len(), 1);
        assert_eq!(parse("SELECT ';'; SELECT $$;$$").unwrap().stmts.len(), 2);
        assert_eq!(parse("").unwrap().stmts.len(), 0);
        assert_eq!(parse("  -- only a comment").unwrap().stmts.len(), 0);
        let tree = parse("DELETE FROM t WHERE id = 1").unwrap();
        assert!(tree.stmts[0].get("DeleteStmt").is_some(), "{:?}", tree.stmts[0]);
    }

    #[test]
    fn errors_carry_message_and_position() {
        let e = parse("SELECT FROM WHERE").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"WHERE\"");
        assert_eq!(e.position, Some(13));
        let e = parse("SELECT 1\0").unwrap_err();
        assert_eq!(e.position, Some(9));
        let deep = format!("{}1{}", "SELECT (".repeat(200), ")".repeat(200));
        let e = parse(&deep).unwrap_err();
        assert_eq!(
            e.message,
            "the query is nested too deeply for the guard to check; simplify it"
        );
    }

    /// `field`s of `typedef struct { ... } name;` in a C header, as
    /// `"type name"` with comments and spacing removed.
    fn c_struct(header: &str, name: &str) -> Vec<String> {
        let end = header
            .find(&format!("}} {name};"))
            .unwrap_or_else(|| panic!("pg_query.h declares no {name}"));
        let start = header[..end].rfind('{').unwrap() + 1;
        header[start..end]
            .lines()
            .map(|line| line.split("//").next().unwrap_or(""))
            .flat_map(|line| line.split(';'))
            .map(|field| field.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|field| !field.is_empty())
            .collect()
    }

    /// The hand-written declarations above against the header of the
    /// libpg_query that is linked: the same fields in the same order with
    /// the same C types, and the same two signatures.
    #[test]
    fn declarations_match_the_bundled_header() {
        let metadata = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--locked"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run cargo metadata");
        assert!(
            metadata.status.success(),
            "{}",
            String::from_utf8_lossy(&metadata.stderr)
        );
        let metadata: Value = serde_json::from_slice(&metadata.stdout).unwrap();
        let crates: Vec<&Value> = metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "pg_query")
            .collect();
        assert_eq!(crates.len(), 1, "one pg_query in the build");
        assert_eq!(
            crates[0]["version"], "18.1.0",
            "the version the declarations were written for"
        );
        let manifest = std::path::Path::new(crates[0]["manifest_path"].as_str().unwrap());
        let header = std::fs::read_to_string(manifest.with_file_name("libpg_query").join("pg_query.h")).unwrap();
        // Each field as `struct PgQueryError` / `struct PgQueryParseResult`
        // above declares it, in C.
        assert_eq!(
            c_struct(&header, "PgQueryError"),
            [
                "char* message",
                "char* funcname",
                "char* filename",
                "int lineno",
                "int cursorpos",
                "char* context"
            ]
        );
        assert_eq!(
            c_struct(&header, "PgQueryParseResult"),
            ["char* parse_tree", "char* stderr_buffer", "PgQueryError* error"]
        );
        for signature in [
            "PgQueryParseResult pg_query_parse(const char* input);",
            "void pg_query_free_parse_result(PgQueryParseResult result);",
        ] {
            assert!(header.contains(signature), "pg_query.h no longer declares {signature}");
        }
        // And the layout read through them: a field misplaced would put a
        // pointer where an int is, or the reverse.
        assert_eq!(
            std::mem::size_of::<PgQueryError>(),
            4 * size_of::<*mut c_char>() + 2 * size_of::<c_int>()
        );
        assert_eq!(std::mem::size_of::<PgQueryParseResult>(), 3 * size_of::<*mut c_char>());
    }

    #[test]
    fn depth_is_measured_outside_strings() {
        use crate::json_depth::nesting_depth;
        assert_eq!(nesting_depth(r#"{"a": [1, {"b": "[[[{{{"}]}"#), 3);
        assert_eq!(nesting_depth(r#"{"a": "\\\"[["}"#), 1);
    }

    /// The deepest tree the guard accepts is read, walked and dropped on a
    /// thread with half the stack a tokio worker has.
    #[test]
    fn the_deepest_accepted_tree_fits_in_a_small_stack() {
        // A chain of `+` nests one level deeper per operand.
        let sum = |n: usize| format!("SELECT {}", vec!["x"; n].join(" + "));
        let mut operands = 2;
        while parse(&sum(operands + 1)).is_ok() {
            operands += 1;
        }
        assert!(operands >= 200, "only {operands} operands of + are accepted");
        let sql = sum(operands);
        let checked = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let facts = crate::guard::routines::tests::pg15();
                let judge = crate::guard::Judge::new(crate::guard::Policy::default(), crate::guard::Mode::ReadWrite);
                crate::guard::check(&judge, &facts, &sql).is_ok()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(checked);
    }
}
