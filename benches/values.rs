//! What converting PostgreSQL's text to JSON costs: `cargo bench --bench values`.
//!
//! One wide row of 16 typical values (integers, numeric, text, timestamps,
//! jsonb, arrays), converted over and over; prints the cost per row and per
//! value. Numbers go in BENCHMARKS.md; nothing here asserts on time.

use std::hint::black_box;
use std::time::Instant;

use pgmcp::testing::postgres::value::{Shape, from_text};

fn main() {
    let array = |element| Shape::Array {
        element: Box::new(element),
        delimiter: b',',
    };
    let row: Vec<(Shape, &str)> = vec![
        (Shape::Integer, "42"),
        (Shape::Integer, "9223372036854775807"),
        (Shape::Float, "3.141592653589793"),
        (Shape::Text, "12345.67890"),
        (Shape::Bool, "t"),
        (Shape::Text, "a short text value"),
        (Shape::Text, "héllo wörld 🎉 with some unicode"),
        (Shape::TimestampTz, "2024-01-15 05:00:00.123456+00"),
        (Shape::Timestamp, "2024-01-15 10:30:00"),
        (Shape::Text, "2024-01-15"),
        (Shape::Text, "1 year 2 mons 3 days 04:05:06.789"),
        (Shape::Text, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        (
            Shape::Json,
            r#"{"id": 9007199254740993, "tags": ["a", "b"], "nested": {"ok": true}}"#,
        ),
        (array(Shape::Integer), "{1,2,3,4,5,6,7,8}"),
        (array(Shape::Text), r#"{alpha,"beta gamma",NULL,delta}"#),
        (Shape::Text, "\\xdeadbeefcafe"),
    ];
    let iterations = 200_000;
    for _ in 0..iterations / 10 {
        for (shape, text) in &row {
            black_box(from_text(shape, black_box(text)));
        }
    }
    let start = Instant::now();
    for _ in 0..iterations {
        for (shape, text) in &row {
            black_box(from_text(shape, black_box(text)));
        }
    }
    let per_row = start.elapsed().as_secs_f64() / iterations as f64;
    println!(
        "value::from_text, {}-column row: {:.2} µs per row, {:.0} ns per value",
        row.len(),
        per_row * 1e6,
        per_row * 1e9 / row.len() as f64
    );
}
