//! [`tokenize`]: a reference driver that splits a whole input into lexemes through the
//! [`Lexer`] trait, with the same protocol a parser uses.

use crate::{Error, ErrorKind, LexemeIdx, LexemeSet, Lexer, StateId, Step};

/// One lexeme found by [`tokenize`]: `input[start..end]` matched `lexeme`; the last
/// `lookahead` bytes of that range matched its trailing look-ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    /// The highest-priority (lowest index) accepting lexeme.
    pub lexeme: LexemeIdx,
    /// Start offset in the input.
    pub start: usize,
    /// End offset (exclusive), look-ahead bytes included.
    pub end: usize,
    /// How many bytes at the end belong to the look-ahead.
    pub lookahead: usize,
}

/// Why [`tokenize`] stopped.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenizeError {
    /// The lexer failed (a limit, or a bad id from a foreign implementation).
    Lexer(Error),
    /// No allowed lexeme matches at `offset` (`offset == input.len()`: the input ends inside
    /// a lexeme).
    NoMatch {
        /// Byte offset of the first byte that cannot be lexed.
        offset: usize,
    },
}

impl From<Error> for TokenizeError {
    fn from(e: Error) -> Self {
        TokenizeError::Lexer(e)
    }
}

impl std::fmt::Display for TokenizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenizeError::Lexer(e) => e.fmt(f),
            TokenizeError::NoMatch { offset } => write!(f, "no lexeme matches at byte {offset}"),
        }
    }
}

impl std::error::Error for TokenizeError {}

/// Splits `input` into lexemes, each one of `allowed`, greedy or lazy as their kind says
/// (see [`Step`]). Every lexeme is non-empty. Skip lexemes are returned like the others
/// (filter them with [`LexerSpec::skip_lexemes`](crate::LexerSpec::skip_lexemes)).
pub fn tokenize<L: Lexer + ?Sized>(
    lexer: &mut L,
    allowed: &LexemeSet,
    input: &[u8],
) -> Result<Vec<Token>, TokenizeError> {
    let start = lexer.start_state(allowed)?;
    let mut out = Vec::new();
    let mut state = start;
    let mut tok_start = 0;
    let mut i = 0;
    while i < input.len() {
        match lexer.step(state, input[i])? {
            Step::Continue(s) => {
                state = s;
                i += 1;
            }
            Step::EndWith(s) => {
                out.push(token(lexer, s, tok_start, i + 1)?);
                state = start;
                i += 1;
                tok_start = i;
            }
            Step::EndBefore if i > tok_start => {
                out.push(token(lexer, state, tok_start, i)?);
                state = start;
                tok_start = i;
            }
            Step::EndBefore | Step::Reject => return Err(TokenizeError::NoMatch { offset: i }),
        }
    }
    if tok_start < input.len() {
        if !lexer.flags(state).is_accepting() {
            return Err(TokenizeError::NoMatch { offset: input.len() });
        }
        out.push(token(lexer, state, tok_start, input.len())?);
    }
    Ok(out)
}

fn token<L: Lexer + ?Sized>(
    lexer: &L,
    state: StateId,
    start: usize,
    end: usize,
) -> Result<Token, TokenizeError> {
    let lexeme = lexer.accepting(state).first();
    let n = lexer.num_lexemes();
    match lexeme {
        Some(lx) if lx.as_usize() < n => {
            let lookahead = lexer.lookahead_len(state, lx).min(end - start);
            Ok(Token { lexeme: lx, start, end, lookahead })
        }
        _ => Err(TokenizeError::Lexer(
            ErrorKind::ForeignLexer {
                message: format!("state {} is accepting but names no valid lexeme", state.0),
            }
            .into(),
        )),
    }
}
