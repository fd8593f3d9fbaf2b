//! [`LexerLimits`]: every user-controlled cost of a lexer is bounded by one of these.

/// Bounds on the work and memory of a lexer. Hitting one is an [`Error`](crate::Error) whose
/// kind names the limit; it never panics or hangs.
///
/// "Fuel" counts the derivative engine's units of work (derivre's expression-construction
/// cost: roughly one unit per expression node built or visited).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexerLimits {
    /// Work allowed for one cold transition (the derivatives of all live lexemes on one byte
    /// plus their emptiness checks) or one state's creation. Default 5_000_000 (a JSON or
    /// programming-language lexer needs well under 1_000 per step; the first step into a
    /// `format: hostname` string, an intersection of two counted repeats, needs 2–5
    /// million and takes a few milliseconds).
    pub step_fuel: u64,
    /// Work allowed over the lexer's lifetime, including compiling the spec; bounds the memory
    /// of the derivative engine's expression store. Default 50_000_000.
    pub total_fuel: u64,
    /// Maximum number of lexer states (each costs one table row of 4 bytes per byte class).
    /// Default 250_000, LLGuidance's: a string of one lexeme whose length is bounded beside a
    /// `pattern` or `format` takes a state per position, and 50,000 rejected valid
    /// 100,000-character values at ~50,000 characters. A lexer that makes a state per byte
    /// read (`[ab]*a[ab]{24}`) fails at 250,000 after ~2 s of decoding, against ~0.9 s.
    pub max_states: usize,
    /// Maximum nesting depth of a lexeme's [`RegexSpec`](crate::RegexSpec), and of the
    /// regex-syntax parser for embedded regexes. Default 200.
    pub max_depth: usize,
    /// Size limit for automata built by [`AutomataLexer`](crate::AutomataLexer) (per lexeme,
    /// NFA and DFA each). Default 10 MiB.
    pub max_automaton_bytes: usize,
    /// Work allowed for one containment check ([`Lexer::check_prefixes`](crate::Lexer)).
    /// Default 50_000; on exhaustion the answer is "unknown", not an error.
    pub containment_fuel: u64,
    /// Work allowed for the quick symbolic containment check tried before the class walk
    /// (rule 6 of `derivative/containment.rs`). Default 5_000; 0 skips that rule (the walk
    /// and, when it gives up, the full check on `containment_fuel` answer).
    pub quick_containment_fuel: u64,
}

impl Default for LexerLimits {
    fn default() -> Self {
        LexerLimits {
            step_fuel: 5_000_000,
            total_fuel: 50_000_000,
            max_states: 250_000,
            max_depth: 200,
            max_automaton_bytes: 10 << 20,
            containment_fuel: 50_000,
            quick_containment_fuel: 5_000,
        }
    }
}
