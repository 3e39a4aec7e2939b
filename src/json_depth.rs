//! How deeply JSON text nests, measured without parsing or recursing. Pure.
//!
//! serde_json's reader, a walk over a `Value` and its drop all recurse once
//! per level, so each place pgmcp reads JSON it did not write measures it
//! first and refuses (or keeps as text) what is too deep: stdin lines ([`crate::door::stdio::intake`]),
//! libpg_query's parse tree ([`crate::guard`]), PostgreSQL's `json` values
//! ([`crate::backend::postgres::value`]). Each sets its own limit, then
//! reads with [`read_measured`], past serde_json's fixed one.

/// Read JSON `text` whose depth the caller has bounded (measured with
/// [`nesting_depth`], or written by pgmcp from values that were), past
/// serde_json's own recursion limit of 128: the whole text must be one value.
pub fn read_measured<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_str(text);
    reader.disable_recursion_limit();
    let value = T::deserialize(&mut reader)?;
    reader.end()?;
    Ok(value)
}

/// How deeply objects and arrays nest in JSON `text`, without recursing.
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
