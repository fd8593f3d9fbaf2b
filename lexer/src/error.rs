//! The crate's typed error.

use std::fmt;

/// An error from building or running a lexer. Boxed, so `Result<StateId, Error>` stays small
/// on the hot path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: Box<ErrorKind>,
}

/// What went wrong. Callers branch on this; new variants may be added.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A lexeme's regex does not parse or cannot be compiled.
    Regex {
        /// The lexeme's name.
        lexeme: String,
        /// The underlying engine's message.
        message: String,
    },
    /// A lexeme's expression is malformed (for example `min > max` in a repeat, an empty
    /// intersection, a look-ahead that is not at the end, a zero divisor).
    InvalidSpec {
        /// The lexeme's name.
        lexeme: String,
        /// What is wrong.
        message: String,
    },
    /// A lexeme uses a construct this implementation does not support (for example `&` or
    /// `~` in the regex-automata lexer).
    Unsupported {
        /// The lexeme's name.
        lexeme: String,
        /// The construct, as written in the spec's serde form (`and`, `not`, ...).
        feature: &'static str,
    },
    /// A lexeme's expression nests deeper than [`LexerLimits::max_depth`](crate::LexerLimits).
    TooDeep {
        /// The lexeme's name.
        lexeme: String,
        /// The limit.
        limit: usize,
    },
    /// One step (a derivative, a relevance check) needed more than
    /// [`LexerLimits::step_fuel`](crate::LexerLimits) units of work.
    StepFuelExhausted {
        /// The limit.
        limit: u64,
    },
    /// The lexer's total work exceeded [`LexerLimits::total_fuel`](crate::LexerLimits)
    /// (bounds the memory of the derivative engine).
    TotalFuelExhausted {
        /// The limit.
        limit: u64,
    },
    /// The lexer would need more than [`LexerLimits::max_states`](crate::LexerLimits) states.
    TooManyStates {
        /// The limit.
        limit: usize,
    },
    /// A compiled automaton would exceed [`LexerLimits::max_automaton_bytes`](crate::LexerLimits).
    AutomatonTooBig {
        /// The lexeme's name.
        lexeme: String,
        /// The engine's message.
        message: String,
    },
    /// A lexeme index at or beyond the number of lexemes was passed in.
    InvalidLexeme {
        /// The index.
        idx: u32,
        /// The number of lexemes.
        num_lexemes: usize,
    },
    /// A state id this lexer never returned was passed in.
    InvalidState {
        /// The id.
        state: u32,
    },
    /// The work was cancelled or ran past its deadline ([`crate::interrupt`]).
    Interrupted(crate::interrupt::Interrupted),
    /// A foreign [`Lexer`](crate::Lexer) implementation returned an id out of bounds; caught
    /// by [`Checked`](crate::Checked).
    ForeignLexer {
        /// What was out of bounds.
        message: String,
    },
}

impl Error {
    /// Wraps a kind.
    pub fn new(kind: ErrorKind) -> Self {
        Error { kind: Box::new(kind) }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Whether this error says a limit was hit (as opposed to a bad spec or a bad id).
    pub fn is_limit(&self) -> bool {
        matches!(
            *self.kind,
            ErrorKind::TooDeep { .. }
                | ErrorKind::StepFuelExhausted { .. }
                | ErrorKind::TotalFuelExhausted { .. }
                | ErrorKind::TooManyStates { .. }
                | ErrorKind::AutomatonTooBig { .. }
        )
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            ErrorKind::Regex { lexeme, message } => {
                write!(f, "lexeme {lexeme}: invalid regex: {message}")
            }
            ErrorKind::InvalidSpec { lexeme, message } => write!(f, "lexeme {lexeme}: {message}"),
            ErrorKind::Unsupported { lexeme, feature } => write!(
                f,
                "lexeme {lexeme}: `{feature}` is not supported by this lexer implementation"
            ),
            ErrorKind::TooDeep { lexeme, limit } => write!(
                f,
                "lexeme {lexeme}: expression nests deeper than the limit of {limit} (LexerLimits::max_depth)"
            ),
            ErrorKind::StepFuelExhausted { limit } => write!(
                f,
                "lexer step needed more than {limit} units of work (LexerLimits::step_fuel); \
                 the regexes are too complex (large repeats under & or ~?)"
            ),
            ErrorKind::TotalFuelExhausted { limit } => write!(
                f,
                "lexer used more than {limit} units of work in total (LexerLimits::total_fuel)"
            ),
            ErrorKind::TooManyStates { limit } => write!(
                f,
                "lexer needs more than {limit} states (LexerLimits::max_states)"
            ),
            ErrorKind::AutomatonTooBig { lexeme, message } => write!(
                f,
                "lexeme {lexeme}: automaton too big (LexerLimits::max_automaton_bytes): {message}"
            ),
            ErrorKind::InvalidLexeme { idx, num_lexemes } => write!(
                f,
                "lexeme index {idx} out of bounds (the lexer has {num_lexemes} lexemes)"
            ),
            ErrorKind::InvalidState { state } => {
                write!(f, "state {state} was not returned by this lexer")
            }
            ErrorKind::ForeignLexer { message } => {
                write!(f, "lexer implementation returned a bad id: {message}")
            }
            ErrorKind::Interrupted(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for Error {}
