//! LLGuidance's top-level grammar JSON → [`GrammarSet`]: what its Python and Rust APIs pass
//! around as "a grammar" when it is not plain Lark, e.g.
//! `{"grammars": [{"name": "x", "lark_grammar": "start: @y"}, {"name": "y", "json_schema":
//! {"type": "integer"}}], "max_tokens": 10}`.
//!
//! Each entry has a `lark_grammar` (text) or a `json_schema` (a value, with its own
//! `"x-guidance"` options), or, extensions of ours, a `structural_tag` (XGrammar's, an object
//! or JSON text; what `llg_rs.grammar_from("structural_tag", ...)` makes) or a
//! `gbnf_grammar` (llama.cpp GBNF text, what `llg_rs.grammar_from("gbnf", ...)` makes);
//! exactly one of them; `name` (optional) is what `@name` refers to. The first
//! entry is where parsing starts. `max_tokens` (optional) caps the tokens of the whole
//! sequence. Unknown keys are ignored, as LLGuidance ignores them.

use serde_json::Value;

use crate::ir::GrammarSet;
use crate::{Error, ErrorKind};

/// A parsed top-level grammar: the set and its token cap.
#[derive(Clone, Debug)]
pub struct TopLevel {
    /// The grammars, the first one where parsing starts.
    pub set: GrammarSet,
    /// `max_tokens`, if given.
    pub max_tokens: Option<usize>,
    /// The JSON Schema compiler's warnings (unknown formats, what `lenient` ignored), one
    /// line each.
    pub warnings: Vec<String>,
}

fn err(m: impl Into<String>) -> Error {
    Error::new(ErrorKind::Value, m)
}

/// Whether `text` is meant as top-level grammar JSON rather than Lark (its first
/// non-whitespace character is `{`; a Lark grammar cannot start with one).
pub fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Parses LLGuidance's grammar string: top-level grammar JSON when it
/// [looks like JSON](looks_like_json), else Lark (no `max_tokens`, no warnings).
pub fn parse_llguidance(text: &str) -> Result<TopLevel, Error> {
    if looks_like_json(text) {
        parse(text)
    } else {
        Ok(TopLevel { set: crate::lark::parse(text)?, max_tokens: None, warnings: Vec::new() })
    }
}

/// Parses top-level grammar JSON.
pub fn parse(text: &str) -> Result<TopLevel, Error> {
    let v: Value = crate::parse_json_deep(text, "the grammar").map_err(err)?;
    parse_value(&v)
}

/// [`parse`] from a JSON value.
pub fn parse_value(v: &Value) -> Result<TopLevel, Error> {
    let obj = v.as_object().ok_or_else(|| err("the top-level grammar must be a JSON object"))?;
    let list = obj
        .get("grammars")
        .ok_or_else(|| err("the top-level grammar has no \"grammars\" list"))?
        .as_array()
        .ok_or_else(|| err("\"grammars\" must be a list"))?;
    if list.is_empty() {
        return Err(err("\"grammars\" is empty: at least one grammar is needed"));
    }
    let max_tokens = match obj.get("max_tokens") {
        None | Some(Value::Null) => None,
        Some(n) => Some(
            n.as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| err("max_tokens must be a non-negative integer"))?,
        ),
    };
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    // Sub-grammars of `%json` / `%lark` blocks get names from one counter across entries,
    // so two entries' blocks never share a name.
    let mut counter = 0usize;
    let mut subs = Vec::new();
    for (i, g) in list.iter().enumerate() {
        let g = g.as_object().ok_or_else(|| err(format!("grammars[{i}] must be an object")))?;
        let name = match g.get("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(err(format!("grammars[{i}].name must be a string"))),
        };
        let lark = g.get("lark_grammar").filter(|v| !v.is_null());
        let schema = g.get("json_schema").filter(|v| !v.is_null());
        let gbnf = g.get("gbnf_grammar").filter(|v| !v.is_null());
        let tag = g.get("structural_tag").filter(|v| !v.is_null());
        if tag.is_some() && (lark.is_some() || schema.is_some() || gbnf.is_some()) {
            return Err(err(format!(
                "grammars[{i}] has structural_tag and another grammar; give one"
            )));
        }
        let mut grammar = match (lark, schema) {
            (None, None) if tag.is_some() => {
                // XGrammar's structural tag, as an object or as JSON text.
                let v = match tag {
                    Some(Value::String(t)) => serde_json::from_str(t).map_err(|e| {
                        err(format!("grammars[{i}].structural_tag is not valid JSON: {e}"))
                    })?,
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                let mut set = crate::structural_tag::from_value(&v)?;
                let top = set.grammars.remove(0);
                subs.extend(set.grammars);
                top
            }
            (None, None) if gbnf.is_some() => {
                let src = gbnf
                    .and_then(|v| v.as_str())
                    .ok_or_else(|| err(format!("grammars[{i}].gbnf_grammar must be a string")))?;
                let mut set = crate::gbnf::parse(src)?;
                let top = set.grammars.remove(0);
                subs.extend(set.grammars);
                top
            }
            _ if gbnf.is_some() => {
                return Err(err(format!(
                    "grammars[{i}] has gbnf_grammar and another grammar; give one"
                )))
            }
            (Some(_), Some(_)) => {
                return Err(err(format!(
                    "grammars[{i}] has both lark_grammar and json_schema; give one"
                )))
            }
            (None, None) => {
                return Err(err(format!("grammars[{i}] has neither lark_grammar nor json_schema")))
            }
            (Some(l), None) => {
                let src = l
                    .as_str()
                    .ok_or_else(|| err(format!("grammars[{i}].lark_grammar must be a string")))?;
                crate::lark::parse_counted(src, &mut subs, &mut counter)?
            }
            (None, Some(s)) => {
                let opts = crate::json_schema::JsonCompileOptions::from_schema(s)?;
                let c = crate::json_schema::compile_schema_with(s, &opts)?;
                warnings.extend(c.warnings);
                crate::json_schema::push_subs(&mut subs, c.subs);
                c.grammar
            }
        };
        if name.is_some() {
            grammar.name = name;
        }
        out.push(grammar);
    }
    if let Some(dup) = duplicate_name(&out) {
        return Err(err(format!("two grammars are named {dup:?}")));
    }
    out.extend(subs);
    Ok(TopLevel { set: GrammarSet { grammars: out }, max_tokens, warnings })
}

fn duplicate_name(gs: &[crate::ir::Grammar]) -> Option<&str> {
    let mut seen = std::collections::HashSet::new();
    gs.iter().filter_map(|g| g.name.as_deref()).find(|n| !seen.insert(*n))
}

/// Makes `regex` usable inside `/.../` in Lark: escapes `/` and line breaks, and where
/// `use_ascii` has `d`, `w` or `s`, replaces `\d` `\w` `\s` (and `\D` `\W` `\S`) with their
/// ASCII classes, as LLGuidance does (also inside `[...]`, where the class nests).
pub fn regex_to_lark(regex: &str, use_ascii: &str) -> String {
    let (d, w, s) = (use_ascii.contains('d'), use_ascii.contains('w'), use_ascii.contains('s'));
    let mut out = String::with_capacity(regex.len() + 8);
    let mut chars = regex.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match n {
                    'd' | 'D' if d => Some("0-9"),
                    'w' | 'W' if w => Some("0-9a-zA-Z_"),
                    's' | 'S' if s => Some(" \\t\\n\\r\\f\\v"),
                    _ => None,
                };
                match class {
                    Some(cl) if n.is_ascii_uppercase() => out.push_str(&format!("[^{cl}]")),
                    Some(cl) => out.push_str(&format!("[{cl}]")),
                    None => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '/' => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ => out.push(c),
        }
    }
    out
}

/// LLGuidance's grammar JSON for a regex (Rust `regex` syntax): one Lark rule
/// `start: /regex/`.
pub fn regex_grammar(regex: &str) -> String {
    let lark = format!("start: /{}/", regex_to_lark(regex, ""));
    serde_json::json!({
        "grammars": [{"name": "regex", "json_schema": null, "lark_grammar": lark}],
        "max_tokens": null,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_references() {
        let t = parse(
            r#"{"grammars": [{"name": "x", "lark_grammar": "start: \"a\" @y %json {\"type\": \"string\"}"},
                {"name": "y", "json_schema": {"type": "integer"}}], "max_tokens": 7}"#,
        )
        .unwrap();
        assert_eq!(t.max_tokens, Some(7));
        assert_eq!(t.set.grammars[0].name.as_deref(), Some("x"));
        assert_eq!(t.set.grammars[1].name.as_deref(), Some("y"));
        // The %json block of the first entry comes after the entries.
        assert_eq!(t.set.grammars.len(), 3);
    }

    #[test]
    fn errors() {
        for (src, want) in [
            ("{bad", "not valid JSON"),
            ("[]", "must be a JSON object"),
            ("{}", "no \"grammars\""),
            (r#"{"grammars": []}"#, "empty"),
            (r#"{"grammars": [{}]}"#, "neither"),
            (r#"{"grammars": [{"lark_grammar": "start: \"a\"", "json_schema": {}}]}"#, "both"),
            (
                r#"{"grammars": [{"name": "a", "lark_grammar": "start: \"a\""}, {"name": "a", "json_schema": {}}]}"#,
                "two grammars",
            ),
            (r#"{"grammars": [{"json_schema": {}}], "max_tokens": -1}"#, "max_tokens"),
        ] {
            let e = parse(src).unwrap_err();
            assert!(e.to_string().contains(want), "{src}: {e}");
        }
    }

    #[test]
    fn nulls_are_absent() {
        let t = parse(r#"{"grammars":[{"name":"regex","json_schema":null,"lark_grammar":"start: /a+/"}],"max_tokens":null}"#).unwrap();
        assert_eq!(t.max_tokens, None);
        assert_eq!(t.set.grammars.len(), 1);
    }
}
