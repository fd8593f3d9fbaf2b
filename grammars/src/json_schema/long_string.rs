//! Long strings: a JSON string constrained by its length alone, past [`LONG`] characters
//! (`maxLength: 100000`, `minLength: 10000`), is not one lexeme but a sub-grammar of chunks.
//! Shorter bounds stay one lexeme: a mask near a chunk's end walks the tokens that cross it
//! through the parser (milliseconds at 200k tokens), which costs more than the states of a
//! short bound.
//!
//! One lexeme `"(char){m,n}"` gives the lexer a state per position (a derivative of the
//! bounded repeat at each count; with partial UTF-8 characters and escapes, about six per
//! character): a 20,000-character value needed more than the lexer's 50,000 states (the
//! limit then) and was rejected, and each new position's first mask was cold. Here the
//! string is `"` (a lexeme
//! of the enclosing grammar), then a sub-grammar: chunks of exactly [`CHUNK`] characters, then a tail of fewer than [`CHUNK`] characters
//! with the closing quote, the number of chunks counted by the parser (`Expr::Repeat`,
//! compiled by powers of two): the lexer keeps [`CHUNK`] positions of states whatever the
//! bound, and they come back at every chunk (warm masks).
//!
//! The same strings, exactly: a length `L` is `a * CHUNK + t` with `0 <= t < CHUNK` in one
//! way, and the alternatives below split the bound by `a`. A chunk cannot end before its
//! last character and a tail cannot reach [`CHUNK`] characters, so each string lexes one
//! way. The sub-grammar has no whitespace lexeme (its own lexeme class), so nothing can
//! come between chunks. Test: `tests/json_schema.rs` `long_strings_are_chunked_exactly`.

use lexer::RegexSpec;

use super::schema::LengthBounds;
use crate::ir::{Expr, Grammar, GrammarOptions, Rule, RuleAttrs, TerminalDef};

/// Characters per chunk. A chunk's positions with more room than the longest token share
/// one mask (the lexer's counter twins), so what costs is a chunk's end, where every token
/// crosses into the next chunk through the parser: fewer ends, fewer such masks (bounds
/// bench, 20,000 characters, o200k: 256: p50 9.9 µs, p99 3,156 µs; 1,024: 8.2 / 783;
/// 2,048: 8.5 / 239; Llama 3, 2,048: 0.7 / 70.6, warm 14.5; 8,192: 1.1 / 41.7, warm 10.4,
/// the ends then 1.3 % of the masks; since the ends share the middle's mask where another
/// chunk may follow, 1.0 / 1.9, warm 0.8). A chunk and a tail of 8,192 positions keep
/// within the lexer's states (at most ~6 a character: a 99,000-character value of escapes
/// and emoji is accepted, `llg check` RSS as with 2,048).
pub const CHUNK: u32 = 8192;
/// A bound past this many characters makes a string long. Up to it a string is one lexeme
/// (at most ~49,000 lexer states, a fifth of `LexerLimits::max_states`) whose positions
/// near the bound take the run twin's mask (`minLength: 5000`, 6,000 characters, Llama 3:
/// p99 3.5 µs, where chunks of 2,048 cost 107 µs at their ends).
pub const LONG: u32 = CHUNK;

/// The names of the chunk and tail lexemes begin with this (not a Lark name: no grammar
/// text names them). The matcher recognizes a chunk's end by them: where the row the chunk
/// ends into starts as the chunk's own row did, the chunk's last positions share the mask
/// of its middle (`llguidance::near_bound`).
pub const LEXEME_PREFIX: &str = "%long-string-";

/// Whether a string of these lengths is chunked.
pub(crate) fn is_long(len: LengthBounds) -> bool {
    len.min > LONG || len.max.is_some_and(|m| m > LONG)
}

/// The sub-grammar `name` of the JSON strings with lengths `len` after their opening quote
/// (which belongs to the enclosing grammar, so that its whitespace may come before it);
/// `body(lo, hi)` is the lexeme body of `lo` to `hi` characters, quoted as the schema's
/// strings are, without the quotes.
pub(crate) fn grammar(
    name: String,
    len: LengthBounds,
    body: impl Fn(u32, u32) -> RegexSpec,
) -> Grammar {
    let k = CHUNK;
    // Named terminals (see [`LEXEME_PREFIX`]), each regex once.
    let terminals = std::cell::RefCell::new(Vec::<TerminalDef>::new());
    let terminal = |name: String, regex: RegexSpec| {
        let mut ts = terminals.borrow_mut();
        if !ts.iter().any(|t| t.name == name) {
            ts.push(TerminalDef { name: name.clone(), regex, lazy: false });
        }
        Expr::Terminal(name)
    };
    let chunk = terminal(format!("{LEXEME_PREFIX}chunk"), body(k, k));
    let tail = |lo: u32, hi: u32| {
        terminal(
            format!("{LEXEME_PREFIX}tail-{lo}-{hi}"),
            RegexSpec::Concat(vec![body(lo, hi), RegexSpec::Literal("\"".into())]),
        )
    };
    let chunks = |min: u32, max: Option<u32>| match (min, max) {
        (0, Some(0)) => Expr::Empty,
        _ => Expr::Repeat { expr: Box::new(chunk.clone()), min, max },
    };
    let (a_lo, t_lo) = (len.min / k, len.min % k);
    let mut alts = Vec::new();
    match len.max {
        None => {
            alts.push(Expr::Seq(vec![chunks(a_lo, Some(a_lo)), tail(t_lo, k - 1)]));
            alts.push(Expr::Seq(vec![chunks(a_lo + 1, None), tail(0, k - 1)]));
        }
        Some(hi) => {
            let (a_hi, t_hi) = (hi / k, hi % k);
            if a_lo == a_hi {
                alts.push(Expr::Seq(vec![chunks(a_lo, Some(a_lo)), tail(t_lo, t_hi)]));
            } else {
                alts.push(Expr::Seq(vec![chunks(a_lo, Some(a_lo)), tail(t_lo, k - 1)]));
                if a_hi > a_lo + 1 {
                    alts.push(Expr::Seq(vec![chunks(a_lo + 1, Some(a_hi - 1)), tail(0, k - 1)]));
                }
                alts.push(Expr::Seq(vec![chunks(a_hi, Some(a_hi)), tail(0, t_hi)]));
            }
        }
    }
    let rule = |name: &str, body: Expr| Rule {
        name: name.to_string(),
        body,
        attrs: RuleAttrs::default(),
        param: false,
    };
    Grammar {
        name: Some(name),
        start: "start".into(),
        rules: vec![rule("start", Expr::Alt(alts))],
        terminals: terminals.into_inner(),
        ignore: vec![],
        options: GrammarOptions::default(),
    }
}
