//! The crate's error type: what went wrong, and where in the source.

/// A grammar error: a message, and for source-level errors the line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    pos: Option<Pos>,
    snippet: Option<String>,
}

/// A position in a grammar source, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
}

/// What kind of error.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The source does not parse.
    Syntax,
    /// A name is unknown, duplicated, or used wrongly.
    Name,
    /// A construct is recognized but not supported.
    Unsupported,
    /// A bad value: a range, a regex, an attribute.
    Value,
    /// A size or nesting limit.
    Limit,
    /// The compile was cancelled (`lexer::interrupt`; a deadline is a [`ErrorKind::Limit`]).
    Cancelled,
}

impl Error {
    /// A new error without a position.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), pos: None, snippet: None }
    }

    /// A new error at byte offset `offset` of `source`: computes line:column and a caret
    /// snippet.
    pub fn at(kind: ErrorKind, message: impl Into<String>, source: &str, offset: usize) -> Error {
        let offset = offset.min(source.len());
        let before = &source[..floor_char(source, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        let line_end = source[line_start..].find('\n').map_or(source.len(), |i| line_start + i);
        let text = &source[line_start..line_end];
        let snippet = format!("{text}\n{}^", " ".repeat(col - 1));
        Error {
            kind,
            message: message.into(),
            pos: Some(Pos { line, col }),
            snippet: Some(snippet),
        }
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The position, for source-level errors.
    pub fn pos(&self) -> Option<Pos> {
        self.pos
    }

    /// Prefixes the message with context (e.g. "in rule foo").
    pub fn context(mut self, ctx: &str) -> Error {
        self.message = format!("{ctx}: {}", self.message);
        self
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.pos, &self.snippet) {
            (Some(p), Some(s)) => write!(f, "{}:{}: {}\n{}", p.line, p.col, self.message, s),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

impl From<lexer::interrupt::Interrupted> for Error {
    fn from(why: lexer::interrupt::Interrupted) -> Error {
        let kind = match why {
            lexer::interrupt::Interrupted::Cancelled => ErrorKind::Cancelled,
            lexer::interrupt::Interrupted::Deadline(_)
            | lexer::interrupt::Interrupted::StackLow => ErrorKind::Limit,
        };
        Error::new(kind, why.to_string())
    }
}
