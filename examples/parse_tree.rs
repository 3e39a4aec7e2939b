//! Print the parse tree the guard sees for each SQL argument:
//! `cargo run --example parse_tree -- "DELETE FROM t"`. Handy when writing a rule.

fn main() {
    for sql in std::env::args().skip(1) {
        match pgmcp::testing::guard::parse(&sql) {
            Ok(t) => eprintln!("{sql}\n  {}", serde_json::to_string(&t.stmts).unwrap()),
            Err(e) => eprintln!("{sql}\n  ERR {e:?}"),
        }
    }
}
