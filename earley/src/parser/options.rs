//! [`ParserOptions`] and [`ParserLimits`]: what a parser is given besides the grammar and the
//! lexer, with the skip lexemes by lexeme class ([`SkipClass`]).

use lexer::{LexemeIdx, LexemeSet, RegexSpec};
use toktrie::TokenId;

/// Limits of one parse; hitting one is an [`ErrorKind::Limit`](crate::ErrorKind::Limit) error
/// naming it.
#[derive(Clone, Debug)]
pub struct ParserLimits {
    /// Earley items in one row (default 20,000).
    pub max_items_in_row: usize,
    /// Items computed in one step: one token consumed or one mask computed (default 2,000,000).
    pub max_items_in_step: usize,
    /// Rows (lexemes) in one sequence, committed or speculative (default 1,000,000).
    pub max_rows: usize,
}

impl Default for ParserLimits {
    fn default() -> Self {
        ParserLimits { max_items_in_row: 20_000, max_items_in_step: 2_000_000, max_rows: 1_000_000 }
    }
}

/// Options of a parser besides the grammar and the lexer.
#[derive(Clone, Debug, Default)]
pub struct ParserOptions {
    /// Lexemes allowed between any two lexemes and ignored (`%ignore`): all skip lexemes of
    /// the grammar. Without `skip_classes` they are allowed wherever a lexeme may follow.
    pub skip: LexemeSet,
    /// Skip lexemes by lexeme class (one class per sub-grammar with its own `%ignore` or
    /// JSON whitespace), as LLGuidance applies them: after a lexeme of class G, G's skip
    /// lexemes if G can take another lexeme next; otherwise those of the nearest ancestor
    /// class that can; otherwise none (no whitespace when entering a sub-grammar, none at
    /// the end). The first class is the top grammar's (special tokens count as its
    /// lexemes; `allow_initial_skip` applies to it). Empty: `skip` applies everywhere.
    pub skip_classes: Vec<SkipClass>,
    /// Skip lexemes that may occur at most once between two other lexemes (LLGuidance's
    /// `skip_repetition: "once"`, JSON `whitespace_pattern`): after one, the lexer restarts
    /// without them.
    pub skip_once: LexemeSet,
    /// The EOS tokens: allowed iff the grammar is accepting.
    pub eos: Vec<TokenId>,
    /// Whether skip lexemes may come before the first lexeme (LLGuidance's
    /// `allow_initial_skip`; default false).
    pub allow_initial_skip: bool,
    /// Lexemes of `[max_tokens=N]` rules: such a lexeme may hold bytes of at most N tokens;
    /// when it has used them it ends at the next token boundary if it can, else (not
    /// accepting) the parse cannot go on. Applied when every live lexeme of the pending
    /// lexer state is limited and out of tokens (LLGuidance's "gen with max_tokens").
    pub lexeme_max_tokens: Vec<(LexemeIdx, usize)>,
    /// For some of those lexemes, what they may still read once out of tokens: the lexer
    /// state is restricted to it (`Lexer::restrict`) instead of the lexeme ending (a tag's
    /// `any_text` budget: only the rest of the end may follow).
    pub lexeme_finish: Vec<(LexemeIdx, RegexSpec)>,
    /// Limits.
    pub limits: ParserLimits,
    /// Whether a completion reads its origin row whole, rather than only the items that
    /// expect its symbol once the row is large (the plain computation, for the tests that
    /// compare the two; default false).
    pub scan_completions: bool,
}

/// The lexemes of one lexeme class (a sub-grammar) and its skip lexemes.
#[derive(Clone, Debug, Default)]
pub struct SkipClass {
    /// The class's lexemes (skip lexemes not included).
    pub members: LexemeSet,
    /// Its skip lexemes (`%ignore`, JSON whitespace).
    pub skip: LexemeSet,
    /// The classes of the grammars that use this one (directly or not), nearest first.
    pub ancestors: Vec<usize>,
}
