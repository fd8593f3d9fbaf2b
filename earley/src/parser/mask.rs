//! Token masks: [`Parser`] as the [`Recognizer`] of the trie walk ([`TokTrie::add_bias`]),
//! whole or over vocabulary slices or a walk split at the lexer state, plus the special tokens
//! and token terminals (`<[id]>`) the grammar expects here.

use std::sync::atomic::Ordering;

use lexer::{Lexer, StateId, Step};
use toktrie::{Recognizer, TokTrie, TokenId, TokenSet};

use super::{Parser, Pos};
use crate::Error;

impl<L: Lexer> Parser<L> {
    fn special_ok(&mut self, tok: TokenId) -> Result<bool, Error> {
        let Some(r) = self.row_if_ended()? else { return Ok(false) };
        if self.opts.eos.contains(&tok) {
            return Ok(self.chart.rows[r as usize].accepting);
        }
        Ok(self.chart.expects_special(&self.cfg, r, tok.0))
    }

    /// Computes the token mask over `trie`: the tokens whose bytes extend the input so far
    /// to a prefix of a string of the grammar; EOS iff accepting; other special tokens iff
    /// the grammar expects them here.
    pub fn compute_mask(&mut self, trie: &TokTrie) -> Result<TokenSet, Error> {
        self.check_error()?;
        let mut mask = TokenSet::new(trie.vocab_size());
        trie.add_bias(self, &mut mask, &[]);
        self.check_error()?;
        self.add_token_terminals(&mut mask)?;
        Ok(mask)
    }

    /// Adds to `mask` the tokens a token terminal (`<[id]>`, `!<[id]>`) expected here
    /// allows, regular ones included: such a terminal is one whole token, so it can only
    /// start at the current position (after the pending lexeme, if that can end). EOS
    /// tokens are left to the accepting state. Part of [`Parser::compute_mask`]; callers
    /// assembling a mask from [`Parser::add_bias`] walks call it once at the end.
    pub fn add_token_terminals(&mut self, mask: &mut TokenSet) -> Result<(), Error> {
        self.check_error()?;
        if !self.token_terminals {
            return Ok(());
        }
        let Some(r) = self.row_if_ended()? else { return Ok(()) };
        let ranges = self.chart.expected_token_ranges(&self.cfg, r);
        if !ranges.is_empty() {
            let eos_before: Vec<bool> = self.opts.eos.iter().map(|&t| mask.contains(t)).collect();
            for (a, b) in ranges {
                mask.insert_range(TokenId(a), TokenId(b));
            }
            for (&t, &was) in self.opts.eos.iter().zip(&eos_before) {
                if !was {
                    mask.remove(t);
                }
            }
        }
        self.drop_speculative();
        Ok(())
    }

    /// Adds to `mask` the tokens of `trie` allowed now (a walk of one vocabulary slice; the
    /// trie must have the same vocabulary width as the mask). Speculative rows are dropped
    /// at the end, as after [`Parser::compute_mask`].
    pub fn add_bias(&mut self, trie: &TokTrie, mask: &mut TokenSet) -> Result<(), Error> {
        self.check_error()?;
        trie.add_bias(self, mask, &[]);
        self.check_error()
    }

    /// [`Parser::add_bias`] for the tokens at and below some first-character nodes of
    /// `trie` (see [`TokTrie::add_bias_subtrees`]).
    pub fn add_bias_subtrees(
        &mut self,
        trie: &TokTrie,
        nodes: &[&toktrie::FirstChar],
        mask: &mut TokenSet,
    ) -> Result<(), Error> {
        self.check_error()?;
        trie.add_bias_subtrees(self, mask, nodes);
        self.check_error()
    }

    /// The trie walk from the current position as far as the lexer decides it alone (inside
    /// the pending lexeme; see [`TokTrie::split_walk`]), building the transitions it meets:
    /// the nodes a walk with the parser would step the lexer through, without the parser at
    /// each. It depends only on the current lexer state and the lexer's transitions, which
    /// never change once built: it can be kept per lexer state and replayed with
    /// [`Parser::add_bias_split`] wherever the parse is in that state. Transitions to states
    /// numbered `limit` or above are left undecided (for a walk kept beside a lexer's
    /// copies, which number their newer states each their own way), and so is a transition
    /// that fails (a lexer limit): the parser's walk of that subtree meets the error itself.
    pub fn split_walk(&mut self, trie: &TokTrie, limit: u32) -> toktrie::SplitWalk {
        let start = self.stack.last().expect("the stack holds the start").lexer;
        let lexer = &mut self.lexer;
        // Known transitions first (no cancellation check on them: they cost a table read);
        // before a cold one, once the cancellation flag is set, every transition is left
        // undecided, so the walk ends within a few nodes (its caller reports the
        // cancellation).
        let cancel = self.cancel.as_deref();
        trie.split_walk(start.0, |s, b| {
            match lexer.step_warm(StateId(s), b) {
                Some(StateId::DEAD) => return Some(None),
                Some(n) if n.0 < limit => return Some(Some(n.0)),
                _ => {}
            }
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return None;
            }
            match lexer.step(StateId(s), b).ok()? {
                Step::Reject => Some(None),
                Step::Continue(n) if n.0 < limit => Some(Some(n.0)),
                _ => None,
            }
        })
    }

    /// Adds to `mask` what [`Parser::add_bias`] would over `trie`, from a walk split at the
    /// current lexer state ([`Parser::split_walk`]): its accepted tokens, then the frontier
    /// subtrees walked from their lexer states (the row is the current one: the lexer
    /// decided the path there without ending a lexeme), then special tokens.
    pub fn add_bias_split(
        &mut self,
        trie: &TokTrie,
        walk: &toktrie::SplitWalk,
        mask: &mut TokenSet,
    ) -> Result<(), Error> {
        self.check_error()?;
        walk.add_allowed(mask);
        self.trie_started();
        let row = self.stack.last().expect("the stack holds the start").row;
        let len = self.stack.len();
        for &(node, state) in walk.frontier() {
            self.stack.push(Pos { row, lexer: StateId(state) });
            trie.walk_subtree(self, mask, node as usize);
            self.stack.truncate(len);
        }
        trie.add_bias_specials(self, mask);
        trie.add_duplicates(mask);
        self.trie_finished();
        self.check_error()
    }

    /// The lexer state at the current position (inside the pending lexeme, or the row's
    /// start state between lexemes).
    pub fn current_lexer_state(&self) -> StateId {
        self.stack.last().expect("the stack holds the start").lexer
    }

    /// Puts `state` in place of the lexer state at the committed position (for a mask
    /// computed from a state with the same mask, such as the lexer's counter twin) and
    /// returns the one it replaces; the caller puts that back before the parse goes on.
    /// [`Parser::position_key`] reads the replaced state meanwhile.
    pub fn replace_lexer_state(&mut self, state: StateId) -> StateId {
        debug_assert_eq!(self.stack.len(), self.base + 1);
        std::mem::replace(&mut self.stack[self.base].lexer, state)
    }

    /// The committed position as (row, lexer state). The mask is a function of it: two
    /// positions with the same key allow the same tokens, as long as no rollback happened
    /// in between (a rollback drops rows, and a row index may then be reused for another
    /// row). For mask caches.
    pub fn position_key(&self) -> (u32, StateId) {
        let p = self.stack[self.base];
        (p.row, p.lexer)
    }
}

impl<L: Lexer> Recognizer for Parser<L> {
    #[inline(always)]
    fn try_push_byte(&mut self, byte: u8) -> bool {
        // Hot path: a known transition inside the lexeme; the row stays.
        match self.push_byte_fast(byte) {
            Ok(ok) => ok,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
                false
            }
        }
    }

    #[inline]
    fn pop_bytes(&mut self, num: usize) {
        let len = self.stack.len() - num;
        debug_assert!(len > self.base);
        self.stack.truncate(len.max(self.base + 1));
    }

    fn collapse(&mut self) {
        self.base = self.stack.len() - 1;
    }

    fn any_special_allowed(&mut self) -> bool {
        // EOS needs an accepting row, other special tokens a row expecting one; with no
        // lexeme pending (or the pending one able to end) that is the row after it.
        match self.row_if_ended() {
            Ok(Some(r)) => {
                let row = &self.chart.rows[r as usize];
                row.accepting || row.has_special
            }
            Ok(None) => false,
            // Let the per-token path record the error.
            Err(_) => true,
        }
    }

    fn special_allowed(&mut self, tok: TokenId) -> bool {
        match self.special_ok(tok) {
            Ok(ok) => ok,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
                false
            }
        }
    }

    fn trie_started(&mut self) {
        self.start_step();
    }

    fn trie_finished(&mut self) {
        self.end_walk();
    }
}
