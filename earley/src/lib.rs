//! The Earley parser of the engine: a context-free grammar on flat arrays ([`Cfg`]), parsed
//! lexeme by lexeme over any [`lexer::Lexer`], driving the token-trie walk of `toktrie`.
//!
//! The parser sees the input as lexemes: after each row it knows the set of lexemes it
//! allows, and the lexer is started on exactly that set, so a wrong byte shows at once. In
//! the trie walk ([`toktrie::TokTrie::add_bias`]) the parser is involved only when a lexeme
//! ends; rows pushed then are kept until the walk ends and reused when the same lexeme ends
//! again at the same place.
//!
//! **Should I use this crate?** Use it to parse with your own grammar compiler or your own
//! lexer; most users want the `llguidance` façade with its grammar front ends.
//!
//! ```
//! use std::sync::Arc;
//! use earley::{CfgBuilder, CfgLimits, Parser, ParserOptions};
//! // `AutomataLexer` is there with `lexer`'s default features off too (the default
//! // `DerivreLexer` takes the same spec and supports more constructs).
//! use lexer::{AutomataLexer, LexemeKind, LexerSpec, RegexSpec};
//! use toktrie::{TokTrie, Vocabulary};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // sum: sum "+" NUM | NUM
//! let mut spec = LexerSpec::new();
//! let num = spec.add("NUM", RegexSpec::regex("[0-9]+"), LexemeKind::Greedy);
//! let plus = spec.add("PLUS", RegexSpec::literal("+"), LexemeKind::Greedy);
//! let mut g = CfgBuilder::new();
//! let sum = g.nonterminal("sum");
//! let (t_num, t_plus) = (g.lexeme("NUM", num), g.lexeme("PLUS", plus));
//! g.rule(sum, vec![sum, t_plus, t_num]);
//! g.rule(sum, vec![t_num]);
//! let cfg = Arc::new(g.build(sum, &CfgLimits::default())?);
//!
//! let vocab = Vocabulary::bytes();
//! let trie = TokTrie::from_vocab(&vocab)?;
//! let lexer = AutomataLexer::new(&spec)?;
//! let opts = ParserOptions { eos: vocab.eos_tokens().to_vec(), ..Default::default() };
//! let mut parser = Parser::new(cfg, lexer, opts)?;
//! parser.consume_bytes(b"12+3")?;
//! assert!(parser.is_accepting()?);
//! let mask = parser.compute_mask(&trie)?;
//! assert_eq!(mask.count(), 12); // 10 digits, '+', EOS
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod cfg;
mod chart;
mod error;
mod parser;

pub use cfg::{
    Cfg, CfgBuilder, CfgLimits, CfgSymbol, ParamCond, ParamMap, SymIdx, SymbolProps, Template,
    TemplateAlt, TemplateIdx, TemplateSym, Terminal,
};
pub use error::{Error, ErrorKind};
pub use parser::{Parser, ParserLimits, ParserOptions, ParserStats, SkipClass, SubtreeProof};
