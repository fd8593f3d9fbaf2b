//! The LLGuidance Lark dialect → [`GrammarSet`].
//!
//! Rules are lowercase, terminals UPPERCASE (each one lexeme); `|` (also starting a
//! continuation line), `( )`, `[ ]`, `? * +`, `{n}` `{m,n}` `{m,}` `{,n}`, `"lit"` (JSON
//! escapes and `\xHH`), `"lit"i`, `"a".."z"`, `/regex/flags` (imsux), `&` and `~` on
//! terminals, `//` and `#` comments, `%ignore`, `%import common.X [-> Y]`,
//! `%import common (A, B)`, `%json {schema}`, `%regex {...}`, `%lark {...}`, `@name`, special
//! tokens (`<|eot_id|>`, `<[128009]>`, `<[100-200]>`, `<[^...]>`, `<[*]>`), rule attributes
//! `[capture]`, `[capture="x"]`, `[lazy]`, `[stop=...]`, `[suffix=...]`, `[stop_capture=...]`,
//! `[max_tokens=N]`, `[temperature=F]`, and `%llguidance {options}`.
//!
//! Lark's `x ~ n` and `x ~ m..n` repeats. Parametric rules (`name::_`, calls `name::expr`,
//! alternatives under `%if cond`; the language is in [`crate::param`]): instances are made
//! by the parser as it reaches them.
//!
//! Each grammar of the set (the top one, every `%json`, `%lark` block and `@name`) keeps
//! its own whitespace: grammars with the same `%ignore` (and `ignore_once`) share a lexeme
//! class; JSON whitespace is once-only. After a lexeme of class G, the skip lexemes are G's
//! if G can take another lexeme, else those of the nearest grammar using G that can, else
//! none: no whitespace entering a sub-grammar or at the end (LLGuidance 1.9's behaviour).
//! `%llguidance` options merge across several objects; unknown keys are ignored.
//!
//! Not supported, with an error saying so: priorities (`rule.2`), templates, `%override`,
//! `%declare`, `%extend`.
//!
//! Expressions are parsed with an explicit stack of open groups, not recursion; groups, `~`s
//! and nested `%lark` blocks nest at most [`MAX_NESTING`] deep (an
//! [`ErrorKind::Limit`](crate::ErrorKind::Limit) error beyond), which also bounds the depth
//! of the trees the later passes walk.
//!
//! # Code map
//!
//! `lex.rs` splits the source into tokens; `parse.rs` (definitions, directives) and
//! `expr.rs` (rule bodies) parse them into the syntax tree of `ast.rs` (`%json` blocks
//! compiled and `%lark` blocks parsed where they appear);
//! `lower.rs` resolves the names of a parsed grammar and lowers it to the IR; `common.rs`
//! holds the terminals of `%import common`, `substring.rs` the regexes of `%regex`.

mod ast;
mod common;
mod expr;
mod lex;
mod lower;
mod parse;
mod substring;

use crate::ir::{Grammar, GrammarSet};
use crate::Error;

pub use ast::MAX_NESTING;

/// Parses Lark source into a grammar set (the grammar itself first, then sub-grammars from
/// `%json` and `%lark` blocks).
pub fn parse(src: &str) -> Result<GrammarSet, Error> {
    let mut out = Vec::new();
    let mut counter = 0;
    let g = parse::parse_grammar(src, None, &mut out, &mut counter, 0)?;
    out.insert(0, g);
    Ok(GrammarSet { grammars: out })
}

/// Parses one Lark grammar of a larger set: its `%json` / `%lark` blocks go to `subs`, named
/// from `counter` (shared across the set, so names never clash); returns the grammar itself.
pub fn parse_counted(
    src: &str,
    subs: &mut Vec<Grammar>,
    counter: &mut usize,
) -> Result<Grammar, Error> {
    parse::parse_grammar(src, None, subs, counter, 0)
}
