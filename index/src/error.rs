//! The crate's typed error.

use std::fmt;

/// Which budget limit a build ran over (see [`crate::Config`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Budget {
    /// More token-level states than [`crate::Config::max_states`].
    States,
    /// More trie nodes visited than [`crate::Config::max_work`].
    Work,
    /// Longer than [`crate::Config::max_time`].
    Time,
    /// The byte-level DFA (or its NFA) grew past [`crate::Config::dfa_size_limit`].
    DfaSize,
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Budget::States => "max_states",
            Budget::Work => "max_work",
            Budget::Time => "max_time",
            Budget::DfaSize => "dfa_size_limit",
        })
    }
}

/// What went wrong; callers branch on this (e.g. fall back to another engine on
/// [`ErrorKind::OverBudget`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The regex does not parse or uses a feature the byte DFA does not support.
    Regex,
    /// The build ran over a budget; the caller may fall back to a lazier engine.
    OverBudget(Budget),
    /// The regex matches no string at all, so no token sequence is valid.
    EmptyLanguage,
    /// A state id that is not a state of this index.
    InvalidState,
    /// A token that is out of the vocabulary or not allowed in the current state.
    InvalidToken,
    /// A caller's mask buffer is shorter than `(vocab_size + 31) / 32` words.
    BufferTooSmall,
    /// A rollback of more tokens than the guide remembers.
    Rollback,
    /// A deserialized index is inconsistent.
    InvalidIndex,
}

/// The error of every fallible operation of this crate: a kind to branch on and a message
/// for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether the build ran over a budget (the caller should fall back).
    pub fn is_over_budget(&self) -> bool {
        matches!(self.kind, ErrorKind::OverBudget(_))
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
