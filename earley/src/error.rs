//! The crate's error type.

/// An error of the parser: a bad grammar, a limit hit, a lexer error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// What kind of error happened.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The grammar is malformed (e.g. the start symbol derives nothing).
    Grammar,
    /// A limit was hit; the message names it and hints at a fix.
    Limit,
    /// The lexer failed (its own limit or error).
    Lexer,
    /// The input was rejected by the grammar.
    Rejected,
    /// The parser's cancellation flag was set ([`Parser::set_cancel`](crate::Parser::set_cancel)).
    Cancelled,
}

impl Error {
    /// A new error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    /// A limit error naming the limit, what happened, and a hint.
    pub fn limit(name: &str, what: impl std::fmt::Display, hint: &str) -> Error {
        Error::new(ErrorKind::Limit, format!("limit '{name}' exceeded: {what}; {hint}"))
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
