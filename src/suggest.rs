//! "Did you mean": the names closest to a misspelled one. Pure.

/// Up to `max` candidates close to `name`, best first. Close means a small edit
/// distance for the length (case ignored), or containing the name, or being
/// contained in it (for names of three letters or more).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>, max: usize) -> Vec<&'a str> {
    let target = name.to_lowercase();
    let allowed = (target.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            // An exact match is still a suggestion: the table may exist in a
            // schema that is not on the search path.
            let lower = c.to_lowercase();
            let d = distance(&target, &lower);
            let related = target.chars().count() >= 3 && (lower.contains(&target) || target.contains(&lower));
            (d <= allowed || related).then_some((d, c))
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

/// What a "no such table" answer tells the model to do next: the close
/// names when there are any, else where to look.
pub fn table_advice<S: AsRef<str>>(close: &[S]) -> String {
    if close.is_empty() {
        "Call list_tables to see what exists.".to_owned()
    } else {
        let names: Vec<&str> = close.iter().map(AsRef::as_ref).collect();
        format!("Did you mean: {}?", names.join(", "))
    }
}

/// Levenshtein distance over characters.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        for (a, b, d) in [
            ("", "", 0),
            ("user", "users", 1),
            ("emial", "email", 2),
            ("kitten", "sitting", 3),
            ("日本", "日本語", 1),
        ] {
            assert_eq!(distance(a, b), d, "{a} {b}");
        }
    }

    #[test]
    fn suggestions() {
        let names = [
            "public.users",
            "auth.user_accounts",
            "public.orders",
            "public.order_items",
            "billing.invoices",
        ];
        let short: Vec<&str> = names.iter().map(|n| n.rsplit('.').next().unwrap()).collect();
        let cases: &[(&str, &[&str])] = &[
            ("user", &["users", "user_accounts"]),
            ("ordrs", &["orders"]),
            ("invoice", &["invoices"]),
            ("zebra", &[]),
            ("Users", &["users"]),
        ];
        for (name, expected) in cases {
            assert_eq!(closest(name, short.iter().copied(), 3), *expected, "{name}");
        }
        let many = ["aaa1", "aaa2", "aaa3", "aaa4"];
        assert_eq!(closest("aaa", many.iter().copied(), 3).len(), 3);
    }
}
