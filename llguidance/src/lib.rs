//! Constrained decoding for LLMs: compile a grammar (Lark, JSON Schema, regex, GBNF) for a
//! tokenizer, then ask, before each sampling step, which tokens may come next.
//!
//! This crate wires the engine's crates together and holds no algorithm of its own:
//! `toktrie` (vocabulary, trie, masks), `lexer` (derivative-based lexer), `earley` (parser),
//! `grammars` (front ends). [`ParserFactory`] is built once per tokenizer and shared across
//! threads; it creates a [`Matcher`] per sequence.
//!
//! **Should I use this crate?** Yes, if you serve an LLM and want structured output: this
//! is the API inference servers call (and the `llg` CLI for the command line).
//!
//! ```
//! use llguidance::{GrammarSource, ParserFactory};
//!
//! # fn main() -> Result<(), llguidance::Error> {
//! let factory = ParserFactory::from_tokenizer_name("bytes")?;
//! let mut m = factory.create_matcher(&GrammarSource::Lark(r#"start: "yes" | "no""#.into()))?;
//! let mask = m.compute_mask()?;
//! assert_eq!(mask.count(), 2); // 'y' and 'n'
//! for &t in factory.tokenizer().tokenize("no")?.iter() {
//!     m.consume_token(t)?;
//! }
//! assert!(m.is_accepting()?);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod batch;
mod cancel;
mod draft;
mod error;
mod factory;
pub mod grammar_cache;
mod matcher;
mod near_bound;
mod shared;
mod slicing;
mod stack;

pub mod ffi;
pub mod served;

pub use cancel::{CancellationHandle, Cancelled};
pub use error::{Error, ErrorKind};
pub use factory::{GrammarSource, LlGuidanceGrammar, ParserFactory, TOKEN_DFA_BUDGET};
pub use matcher::{Matcher, SliceStats, StopReason};
pub use served::ServedMatcher;
pub use shared::Engine;
pub use slicer::SliceSpec;
pub use toktrie::{TokenId, TokenSet, Tokenizer};
