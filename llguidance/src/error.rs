//! The façade's error: one message type for everything a caller can get wrong.

/// An error of the façade: a bad grammar, a rejected token, a limit, a bad tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
    kind: ErrorKind,
}

/// What kind of error.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The grammar does not compile.
    Grammar,
    /// A token was not allowed, or the matcher is in its error state.
    Rejected,
    /// A limit was hit.
    Limit,
    /// The tokenizer could not be loaded or used.
    Tokenizer,
    /// The caller passed a bad argument (id out of range, buffer too small).
    Usage,
    /// A panic was caught at the API boundary (a bug; the matcher is in its error state).
    Internal,
    /// The operation was cancelled ([`CancellationHandle::cancel`](crate::CancellationHandle));
    /// the matcher stays cancelled. The typed form is [`Cancelled`](crate::Cancelled).
    Cancelled,
}

impl Error {
    /// A new error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the operation observed a cancellation request ([`crate::Cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        self.kind == ErrorKind::Cancelled
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<grammars::Error> for Error {
    fn from(e: grammars::Error) -> Error {
        let kind = match e.kind() {
            grammars::ErrorKind::Limit => ErrorKind::Limit,
            grammars::ErrorKind::Cancelled => ErrorKind::Cancelled,
            _ => ErrorKind::Grammar,
        };
        Error::new(kind, e.to_string())
    }
}

impl From<toktrie::Error> for Error {
    fn from(e: toktrie::Error) -> Error {
        Error::new(ErrorKind::Tokenizer, e.to_string())
    }
}

impl From<earley::Error> for Error {
    fn from(e: earley::Error) -> Error {
        let kind = match e.kind() {
            earley::ErrorKind::Limit => ErrorKind::Limit,
            earley::ErrorKind::Rejected => ErrorKind::Rejected,
            earley::ErrorKind::Cancelled => ErrorKind::Cancelled,
            _ => ErrorKind::Grammar,
        };
        Error::new(kind, e.to_string())
    }
}

impl From<lexer::Error> for Error {
    fn from(e: lexer::Error) -> Error {
        let kind = match e.kind() {
            lexer::ErrorKind::Interrupted(lexer::interrupt::Interrupted::Cancelled) => {
                ErrorKind::Cancelled
            }
            lexer::ErrorKind::Interrupted(_) => ErrorKind::Limit,
            _ if e.is_limit() => ErrorKind::Limit,
            _ => ErrorKind::Grammar,
        };
        Error::new(kind, e.to_string())
    }
}

/// The message of a caught panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
