//! Grammar front ends over one IR: the LLGuidance Lark dialect, plain regexes, llama.cpp
//! GBNF (and JSON Schema), each compiled to [`ir::GrammarSet`] and from there to an
//! [`earley::Cfg`] plus a [`lexer::LexerSpec`] ([`compile::compile`]).
//!
//! **Should I use this crate?** Use it to turn grammar text into a parser's inputs; the
//! `llguidance` façade wraps it with a tokenizer into ready-to-use matchers.
//!
//! ```
//! use grammars::{lark, compile::{compile, CompileLimits}};
//!
//! # fn main() -> Result<(), grammars::Error> {
//! let set = lark::parse(r#"
//!     start: "Answer: " ANSWER
//!     ANSWER: /yes|no/
//! "#)?;
//! let g = compile(&set, None, &CompileLimits::default())?;
//! assert_eq!(g.spec.len(), 2);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod compile;
mod error;
pub mod gbnf;
pub mod ir;
pub mod json_schema;
pub mod lark;
pub mod param;
pub mod postfix;
pub mod regex;
pub mod structural_tag;
pub mod tool_calls;
pub mod top_level;

pub use compile::{compile, CompileLimits, CompiledGrammar};
pub use error::{Error, ErrorKind, Pos};

/// How deep a JSON grammar input (a schema, a top-level grammar) may nest: brackets of its
/// text. Past serde_json's default (128) it is parsed without that limit; a caller on a
/// small stack runs such input on a thread with room (the `llguidance` façade does).
pub const MAX_JSON_DEPTH: usize = 1_000;

/// Whether JSON text nests deeper than `limit` ([`json_depth`]), answered without the scan
/// when the text has at most `limit` opening brackets at all (most input: a byte count).
pub fn json_deeper_than(s: &str, limit: usize) -> bool {
    // `[` and `{` differ only in bit 0x20; counted in blocks the compiler vectorizes (the
    // byte-by-byte count took 2 % of MaskBench's compile instructions).
    let opening: usize = s
        .as_bytes()
        .chunks(256)
        .map(|c| c.iter().map(|&b| u32::from(b | 0x20 == b'{')).sum::<u32>() as usize)
        .sum();
    opening > limit && json_depth(s) > limit
}

/// The nesting depth of JSON text (brackets outside strings; the text need not be valid).
pub fn json_depth(s: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for &b in s.as_bytes() {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// `s` parsed as JSON nested up to [`MAX_JSON_DEPTH`] levels (`what` names it in errors).
pub fn parse_json_deep(s: &str, what: &str) -> Result<serde_json::Value, String> {
    // Most input is shallow: serde_json's own parse, the depth scanned only past its limit.
    match serde_json::from_str(s) {
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {}
        r => return r.map_err(|e| json_error(what, &e)),
    }
    let depth = json_depth(s);
    if depth > MAX_JSON_DEPTH {
        return Err(format!("{what} nests {depth} levels deep, more than {MAX_JSON_DEPTH}"));
    }
    let mut de = serde_json::Deserializer::from_str(s);
    de.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| json_error(what, &e))
}

/// A JSON parse error worded for the user: serde_json's nesting limit (128 levels) is a
/// depth limit on valid JSON, not a syntax error.
pub fn json_error(what: &str, e: &serde_json::Error) -> String {
    if e.to_string().starts_with("recursion limit exceeded") {
        format!("{what} nests deeper than 128 levels (the JSON parser's limit): {e}")
    } else {
        format!("{what} is not valid JSON: {e}")
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    #[test]
    fn depth_counts_brackets_outside_strings() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(json_depth(&deep), 200);
        assert!(json_deeper_than(&deep, 128));
        assert!(!json_deeper_than(&deep, 200));
        // Many brackets, little nesting: the count alone does not decide.
        let wide = format!("[{}0]", "[],".repeat(300));
        assert_eq!(json_depth(&wide), 2);
        assert!(!json_deeper_than(&wide, 128));
        // Brackets inside strings do not nest.
        let quoted = format!("{{\"a\": \"{}\"}}", "[".repeat(300));
        assert_eq!(json_depth(&quoted), 1);
        assert!(!json_deeper_than(&quoted, 128));
        // The count sees `[` and `{` only (they differ in bit 0x20), in blocks and the rest.
        let other: String = (1u8..128).filter(|b| !b"[{".contains(b)).map(char::from).collect();
        assert!(!json_deeper_than(&other.repeat(300), 0));
        let mixed = "{\"a\":[".repeat(70) + &"]}".repeat(70);
        assert!(json_deeper_than(&mixed, 139) && !json_deeper_than(&mixed, 140));
    }
}
