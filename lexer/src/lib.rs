//! Lexers for constrained decoding: a lexer specification (lexemes as a neutral regex AST),
//! the pluggable [`Lexer`] trait, and two implementations.
//!
//! A grammar's terminals (lexemes) are regexes. A parser drives the lexer one byte at a time,
//! starting each lexeme with exactly the set of lexemes it allows at that point, so a wrong
//! byte shows at once. The lexer is a DFA whose states are *sets of lexemes still alive*,
//! built lazily: a transition computed once is a table lookup ever after.
//!
//! - [`LexerSpec`], [`LexemeSpec`], [`RegexSpec`]: the specification (serde-serializable).
//! - [`Lexer`]: the trait a parser is generic over; [`Step`] says whether a lexeme goes on,
//!   ends with the byte, ends before it, or fails.
//! - `DerivreLexer` (default feature `derivre`): the default implementation, by regex
//!   derivatives, supporting intersection, complement, JSON quoting, multiple-of and
//!   look-ahead.
//! - [`AutomataLexer`]: an implementation over `regex-automata` DFAs, for specs without
//!   those extended constructs; a cross-check and an example of swapping implementations.
//! - `conformance` (feature `conformance`): data-driven cases any implementation can run.
//!
//! **Should I use this crate?** Yes if you write a parser for constrained decoding and need
//! a lexer with longest/shortest-match semantics and lexeme sets chosen per position, or if
//! you implement your own lexer for this workspace's parser (depend on it with
//! `default-features = false` and implement [`Lexer`]). For matching one regex against
//! text, use `regex` or `derivre` directly.
//!
//! ```
//! # #[cfg(feature = "derivre")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use lexer::{tokenize, DerivreLexer, LexemeKind, LexerSpec, RegexSpec};
//!
//! let mut spec = LexerSpec::new();
//! let kw = spec.add("IF", RegexSpec::literal("if"), LexemeKind::Greedy);
//! let id = spec.add("ID", RegexSpec::regex("[a-z]+"), LexemeKind::Greedy);
//! let ws = spec.add("WS", RegexSpec::regex(" +"), LexemeKind::Skip);
//!
//! let mut lx = DerivreLexer::new(&spec)?;
//! let toks = tokenize(&mut lx, &spec.all(), b"if iffy")?;
//! let lexemes: Vec<_> = toks.iter().map(|t| t.lexeme).collect();
//! assert_eq!(lexemes, [kw, ws, id]); // "if" prefers the keyword, "iffy" is longer
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "derivre"))]
//! # fn main() {}
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod automata;
mod classes;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "derivre")]
mod derivative;
mod error;
mod ids;
pub mod interrupt;
mod lexer;
mod limits;
mod memo;
mod parsed;
pub mod prefixes;
mod runs;
mod spec;
mod tokenize;

pub use automata::AutomataLexer;
pub use classes::ByteClasses;
#[cfg(feature = "derivre")]
pub use derivative::{DerivreLexer, RunBound};
pub use error::{Error, ErrorKind};
pub use ids::{LexemeIdx, LexemeSet, StateId};
pub use lexer::{Checked, Containment, Lexer, StateFlags, Step};
pub use limits::LexerLimits;
pub use memo::{lock_cache, read_cache, write_cache, ProcessMemo};
pub use parsed::{regex_check, regex_class_repetition, regex_nullable};
pub use runs::{IterDfa, RunDfa, ITER_STATES, RUN_DEAD};
pub use spec::{LexemeClass, LexemeKind, LexemeSpec, LexerSpec, RegexSpec};
pub use tokenize::{tokenize, Token, TokenizeError};
