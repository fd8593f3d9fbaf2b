//! Regex → token-level DFA with a precomputed mask per state (the outlines-core "index",
//! built with the V2Index optimizations, faster).
//!
//! For a regular constraint, [`Index::new`] precomputes, for every state where a token can
//! end, the set of allowed tokens (as a bitset) and the next state of each, so serving a
//! mask during generation is one copy and advancing is two binary searches.
//!
//! **Should I use this crate?** Use it when the constraint is one regex and the same regex
//! serves many generations (the build is paid once, in milliseconds, then every step is a
//! lookup). For grammars, or regexes whose token-level DFA is huge, use the lazy engines
//! (lexer + earley + toktrie walk); [`Config`] budgets make the build fail fast with
//! [`ErrorKind::OverBudget`] so a caller can fall back.
//!
//! Mask semantics: token `t` is allowed in a state iff the bytes so far followed by `t`'s
//! bytes can still be extended to a full match (the regex is anchored at both ends);
//! special tokens never match by their bytes; EOS tokens are allowed exactly in final
//! states.
//!
//! ```
//! use std::sync::Arc;
//! use index::{Guide, Index, Vocabulary};
//!
//! let vocab = Vocabulary::bytes(); // 256 one-byte tokens, EOS = 256
//! let index = Arc::new(Index::new(r"[0-9]{1,3}", &vocab)?);
//! let mut guide = Guide::new(index.clone(), 8);
//! assert_eq!(guide.get_tokens().len(), 10);
//! guide.advance(toktrie::TokenId(b'4' as u32), false)?;
//! assert!(guide.is_finished());
//! let mut mask = vec![0u32; (vocab.len() + 31) / 32];
//! guide.write_mask_into(&mut mask)?;
//! assert_eq!(mask[256 / 32] >> (256 % 32) & 1, 1); // EOS allowed
//! # Ok::<(), index::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bytedfa;
mod config;
mod error;
mod groups;
mod guide;
mod index;
mod state;
mod walk;

pub use config::Config;
pub use error::{Budget, Error, ErrorKind};
pub use guide::Guide;
pub use index::{Index, Stats};
pub use state::StateId;
pub use toktrie::{TokenId, TokenSet, Vocabulary};
