//! The crate's error type.

/// An error loading a vocabulary, building a trie, or tokenizing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// What kind of error happened; callers branch on this, users read the message.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Reading a file failed.
    Io,
    /// A tokenizer file is malformed or of an unsupported kind.
    Format,
    /// A vocabulary is too large, a token too long, an id out of range.
    Limit,
    /// A token id or name that the vocabulary does not have.
    UnknownToken,
    /// Canonical tokenization is not available or failed.
    Tokenize,
    /// A built-in tokenizer name that does not exist.
    UnknownTokenizer,
    /// What was asked needs a cargo feature of this crate that is off (`tiktoken`, `hf`).
    FeatureDisabled,
}

impl Error {
    /// A new error of `kind` with a message a user can act on.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    /// Shorthand for an [`ErrorKind::Format`] error.
    pub fn format(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Format, message)
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
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

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, e.to_string())
    }
}
