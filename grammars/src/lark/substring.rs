//! `%regex {"substring_*": ...}`: a regex for every run of consecutive units (words,
//! characters or given chunks) of a text, as LLGuidance.

use lexer::RegexSpec;

/// Longest text accepted by `%regex {substring_*}` (units: words, chars or chunks).
const MAX_SUBSTRING_UNITS: usize = 400;

/// `%regex {"substring_words": T}` / `{"substring_chars": T}` / `{"substring_chunks": [..]}`:
/// `chunks[n..m]` joined, for any `n <= m` (the empty string included), as LLGuidance.
/// Words split T into maximal runs of whitespace, of word characters (`\w`) and of other
/// characters, so a run of words may start or end on the space between two words.
pub(super) fn substring_regex(v: &serde_json::Value) -> Result<RegexSpec, String> {
    let obj =
        v.as_object().filter(|o| o.len() == 1).ok_or("%regex needs an object with one key")?;
    let (k, val) = obj.iter().next().expect("one key");
    let units: Vec<String> = match (k.as_str(), val) {
        ("substring_chars", serde_json::Value::String(s)) => s.chars().map(String::from).collect(),
        ("substring_words", serde_json::Value::String(s)) => {
            // Maximal runs of one class: whitespace, word characters, other characters.
            let class = |c: char| {
                if c.is_whitespace() {
                    0
                } else if c.is_alphanumeric() || c == '_' {
                    1
                } else {
                    2
                }
            };
            let mut units: Vec<String> = Vec::new();
            let mut prev = None;
            for c in s.chars() {
                let k = class(c);
                match units.last_mut() {
                    Some(u) if prev == Some(k) => u.push(c),
                    _ => units.push(c.to_string()),
                }
                prev = Some(k);
            }
            units
        }
        ("substring_chunks", serde_json::Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(String::from).ok_or("substring_chunks needs strings"))
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(format!(
                "unknown %regex form {k:?} (substring_words, substring_chars, substring_chunks)"
            ))
        }
    };
    if units.len() > MAX_SUBSTRING_UNITS {
        return Err(format!(
            "%regex text must have at most {MAX_SUBSTRING_UNITS} units, has {}",
            units.len()
        ));
    }
    // Any run = the empty string, or a start unit followed by a prefix (possibly empty) of
    // the units after it: prefixes(i) = unit_i (prefixes(i+1))?, built from the end without
    // recursion.
    let mut alts = vec![RegexSpec::Empty];
    let mut tail: Option<RegexSpec> = None;
    for u in units.iter().rev() {
        let lit = RegexSpec::Literal(u.clone());
        let node = match tail {
            None => lit,
            Some(t) => RegexSpec::Concat(vec![
                lit,
                RegexSpec::Repeat { expr: Box::new(t), min: 0, max: Some(1) },
            ]),
        };
        alts.push(node.clone());
        tail = Some(node);
    }
    Ok(RegexSpec::Or(alts))
}
