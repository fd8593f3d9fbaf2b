//! Tokenizer vocabularies as a flat token trie, token bitsets, and the fast mask walk.
//!
//! A constrained decoder must answer, before each sampling step, "which of the vocabulary's
//! tokens may come next?". This crate holds the part of that answer that does not depend
//! on the grammar: the vocabulary ([`Vocabulary`], loaded from real tokenizer files or
//! built in), a prefix tree of all token byte strings laid flat in DFS order with 8 bytes
//! per node ([`TokTrie`]), the [`Recognizer`] trait a grammar engine implements, and
//! [`TokTrie::add_bias`], the non-recursive walk that computes a mask ([`TokenSet`]) by
//! asking the recognizer one byte at a time and skipping whole subtrees on a rejected byte.
//!
//! **Should I use this crate?** Yes if you have your own byte-level recognizer (a regex DFA,
//! a parser) and want token masks from it, or need to load tokenizer vocabularies without
//! Python. It depends on no other crate of this workspace.
//!
//! ```
//! use toktrie::{TokTrie, TokenSet, Vocabulary, Recognizer};
//!
//! /// Accepts strings of ASCII digits.
//! #[derive(Default)]
//! struct Digits { depth: usize }
//! impl Recognizer for Digits {
//!     fn try_push_byte(&mut self, b: u8) -> bool {
//!         if b.is_ascii_digit() { self.depth += 1; true } else { false }
//!     }
//!     fn pop_bytes(&mut self, n: usize) { self.depth -= n; }
//! }
//!
//! # fn main() -> Result<(), toktrie::Error> {
//! let vocab = Vocabulary::bytes();
//! let trie = TokTrie::from_vocab(&vocab)?;
//! let mut mask = TokenSet::new(vocab.len());
//! trie.add_bias(&mut Digits::default(), &mut mask, &[]);
//! assert_eq!(mask.count(), 10);
//! # Ok(())
//! # }
//! ```
//!
//! With a real tokenizer: [`Tokenizer::from_file`] reads HF `tokenizer.json`, tiktoken
//! files, tekken and SentencePiece `.model` files ([`load::from_file`] for the vocabulary
//! alone), [`Tokenizer::builtin`] the embedded `o200k`/`cl100k` (feature `tiktoken`) and
//! `bytes`. The same walk then gives the mask over a 128k vocabulary:
//!
//! ```
//! use toktrie::{TokTrie, TokenSet, Tokenizer, ByteDfa};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A file from disk when present (the Llama 3.1 tokenizer of this repository's data),
//! // else a built-in vocabulary.
//! let path = std::path::Path::new("../../shared/tokenizers/llama3.tokenizer.json");
//! let tok = if path.exists() && cfg!(feature = "hf") {
//!     Tokenizer::from_file(path)?
//! } else {
//!     Tokenizer::builtin(if cfg!(feature = "tiktoken") { "o200k" } else { "bytes" })?
//! };
//! let trie = TokTrie::from_vocab(tok.vocab())?;
//! // Tokens made only of ASCII digits: state 1 loops on digits, state 0 is dead.
//! let mut table = vec![0u32; 2 * 256];
//! for b in b'0'..=b'9' {
//!     table[256 + b as usize] = 1;
//! }
//! let mut digits = ByteDfa::new(table, vec![false, true], 1).expect("a well-formed table");
//! let mut mask = TokenSet::new(tok.vocab().len());
//! trie.compute_mask(&mut digits, &mut mask);
//! assert!(mask.count() >= 10);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
pub mod load;
mod node;
mod recognizer;
mod set;
mod token;
pub mod tokenizer;
mod trie;
mod vocab;

pub use error::{Error, ErrorKind};
pub use node::TrieNode;
pub use recognizer::{AcceptAll, ByteDfa, Recognizer};
pub use set::TokenSet;
pub use token::TokenId;
pub use tokenizer::{TokenizeFn, Tokenizer};
pub use trie::{FirstChar, FrontierKeys, PieceRef, SplitWalk, SubtreeWalk, TokTrie, TrieStats};
pub use vocab::{VocabBuilder, Vocabulary, DEFAULT_EOS_NAMES, SPECIAL_TOKEN_MARKER};
