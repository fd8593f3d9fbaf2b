//! The guide: a cursor over an [`Index`] for one generation.

use std::collections::VecDeque;
use std::sync::Arc;

use toktrie::TokenId;

use crate::{Error, ErrorKind, Index, StateId};

/// Follows one generation through a shared [`Index`]: the current state, the allowed tokens,
/// advancing by a sampled token, and rolling back up to `max_rollback` tokens.
#[derive(Clone, Debug)]
pub struct Guide {
    index: Arc<Index>,
    state: StateId,
    /// Previous states, most recent last; at most `max_rollback`.
    history: VecDeque<StateId>,
    max_rollback: usize,
}

impl Guide {
    /// A guide at the index's initial state that remembers up to `max_rollback` states.
    pub fn new(index: Arc<Index>, max_rollback: usize) -> Guide {
        let state = index.initial_state();
        Guide { index, state, history: VecDeque::new(), max_rollback }
    }

    /// The index this guide follows.
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// The current state.
    pub fn get_state(&self) -> StateId {
        self.state
    }

    /// The tokens allowed now, ascending.
    pub fn get_tokens(&self) -> Vec<TokenId> {
        // The guide's state always belongs to its index.
        self.index.allowed_tokens(self.state).unwrap_or_default()
    }

    /// Consumes `token`; with `return_tokens`, returns the tokens allowed after it. A token
    /// that is not allowed is [`ErrorKind::InvalidToken`] and leaves the guide unchanged.
    pub fn advance(
        &mut self,
        token: TokenId,
        return_tokens: bool,
    ) -> Result<Option<Vec<TokenId>>, Error> {
        let Some(next) = self.index.next_state(self.state, token) else {
            return Err(Error::new(
                ErrorKind::InvalidToken,
                format!("token {} is not allowed in state {}", token.0, self.state),
            ));
        };
        if self.max_rollback > 0 {
            if self.history.len() == self.max_rollback {
                self.history.pop_front();
            }
            self.history.push_back(self.state);
        }
        self.state = next;
        Ok(return_tokens.then(|| self.get_tokens()))
    }

    /// Undoes the last `n` tokens; more than the guide remembers is
    /// [`ErrorKind::Rollback`] and leaves the guide unchanged.
    pub fn rollback_state(&mut self, n: usize) -> Result<(), Error> {
        if n > self.history.len() {
            return Err(Error::new(
                ErrorKind::Rollback,
                format!(
                    "cannot roll back {n} tokens: only {} remembered (max_rollback = {})",
                    self.history.len(),
                    self.max_rollback
                ),
            ));
        }
        for _ in 0..n {
            if let Some(s) = self.history.pop_back() {
                self.state = s;
            }
        }
        Ok(())
    }

    /// Whether the current state is final (the bytes so far match the regex), as
    /// outlines-core defines it; generation may still go on if the mask allows more tokens.
    pub fn is_finished(&self) -> bool {
        self.index.is_final_state(self.state)
    }

    /// Writes the current mask into `out` (see [`Index::write_mask`]).
    pub fn write_mask_into(&self, out: &mut [u32]) -> Result<(), Error> {
        self.index.write_mask(self.state, out)
    }
}
