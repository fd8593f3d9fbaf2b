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

/// A JSON parse error worded for the user: serde_json's nesting limit (128 levels) is a
/// depth limit on valid JSON, not a syntax error.
pub fn json_error(what: &str, e: &serde_json::Error) -> String {
    if e.to_string().starts_with("recursion limit exceeded") {
        format!("{what} nests deeper than 128 levels (the JSON parser's limit): {e}")
    } else {
        format!("{what} is not valid JSON: {e}")
    }
}
