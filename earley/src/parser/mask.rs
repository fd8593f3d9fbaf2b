//! Token masks: [`Parser`] as the [`Recognizer`] of the trie walk ([`TokTrie::add_bias`]),
//! whole or over vocabulary slices or a walk split at the lexer state, plus the special tokens
//! and token terminals (`<[id]>`) the grammar expects here.

use std::sync::atomic::Ordering;

use lexer::{Lexer, StateId, Step};
use toktrie::{Recognizer, TokTrie, TokenId, TokenSet};

use super::{Parser, Pos};
use crate::Error;

/// A proof that may allow a frontier subtree of a split walk whole
/// ([`Parser::add_bias_split_proving`]).
pub struct SubtreeProof<'a, P> {
    /// A subtree of at most this many nodes is walked, not proven, where its byte has a
    /// proof after another state already (a walk of a few nodes costs less than a proof);
    /// a byte's first subtree is proven whatever its size, for its cousins.
    pub min_nodes: usize,
    /// Every token of the trie walked.
    pub all: &'a TokenSet,
    /// Whether the parser, just after a frontier node's byte, takes every string of whole
    /// characters the trie holds below it (for a slice's trie: the slice's containment at
    /// the lexer state then).
    pub prove: &'a mut dyn FnMut(&mut P) -> bool,
}

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

    /// Whether the grammar has token terminals (`<[id]>`), which
    /// [`Parser::add_token_terminals`] adds to a mask; without them it adds nothing.
    pub fn has_token_terminals(&self) -> bool {
        self.token_terminals
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
    /// `reuse` gives parts of earlier walks of `trie` from this lexer's states (see
    /// [`TokTrie::split_walk_reusing`]); their states must be below `limit` too.
    pub fn split_walk<'a>(
        &mut self,
        trie: &TokTrie,
        limit: u32,
        reuse: impl FnMut(u32, u32) -> Option<toktrie::PieceRef<'a>>,
    ) -> toktrie::SplitWalk {
        let start = self.stack.last().expect("the stack holds the start").lexer;
        let lexer = &mut self.lexer;
        // Known transitions first (no cancellation check on them: they cost a table read);
        // before a cold one, once the cancellation flag is set, every transition is left
        // undecided, so the walk ends within a few nodes (its caller reports the
        // cancellation).
        let cancel = self.cancel.as_deref();
        // Small enough to be inlined at both of the walk's calls (a first-level node's, and
        // each node's); a lexeme's end is undecided.
        let step = |s: u32, b: u8| match lexer.step_warm(StateId(s), b) {
            Some(StateId::DEAD) => Some(None),
            Some(n) if n.0 < limit => Some(Some(n.0)),
            Some(_) => None,
            None if lexer.step_known(StateId(s), b).is_some() => None,
            None => split_step_cold(lexer, cancel, StateId(s), b, limit),
        };
        trie.split_walk_reusing(start.0, step, reuse)
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
        self.finish_split(trie, mask)
    }

    /// [`Parser::add_bias_split`] where frontier subtrees may be allowed whole (see
    /// [`SubtreeProof`]): where a fixed-length lexeme (a chunk of a long string) ends inside
    /// a slice's tokens and the next lexeme takes their rest, the parser's walk of each
    /// subtree is skipped, and where every subtree is proven and the walk rejected nothing,
    /// the trie's tokens are added at once.
    pub fn add_bias_split_proving(
        &mut self,
        trie: &TokTrie,
        walk: &toktrie::SplitWalk,
        mask: &mut TokenSet,
        mut pr: SubtreeProof<'_, Self>,
    ) -> Result<(), Error> {
        self.check_error()?;
        self.trie_started();
        let row = self.stack.last().expect("the stack holds the start").row;
        let len = self.stack.len();
        // By byte: the frontier state before it whose subtrees were allowed whole (the
        // parser at this row, at that state, takes the byte into a state containing the
        // proof's strings), so that its cousins (the same byte after the same state) are
        // too, without the parser.
        let mut proven = [u32::MAX; 256];
        if !walk.rejected_any() {
            if self.prove_frontier(trie, walk, row, &mut pr, &mut proven) {
                mask.union(pr.all);
                self.stack.truncate(len);
                return self.finish_split(trie, mask);
            }
            self.stack.truncate(len);
        }
        walk.add_allowed(mask);
        for &(node, state) in walk.frontier() {
            let node = node as usize;
            let b = trie.node_byte(node) as usize;
            let size = trie.subtree_size(node);
            if proven[b] == state && (size == 1 || trie.children_start_char(node)) {
                trie.add_subtree_tokens(mask, node);
                continue;
            }
            self.stack.push(Pos { row, lexer: StateId(state) });
            if size > pr.min_nodes || proven[b] == u32::MAX {
                let outcome = trie.walk_subtree_or_whole(self, mask, node, |p| (pr.prove)(p));
                if outcome == toktrie::SubtreeWalk::Whole {
                    proven[b] = state;
                }
            } else {
                trie.walk_subtree(self, mask, node);
            }
            self.stack.truncate(len);
        }
        self.finish_split(trie, mask)
    }

    /// Whether every frontier subtree of `walk` is allowed whole: each node's byte taken
    /// from its state (at `row`) into a state that `pr.prove` answers for, the strings below
    /// it beginning a character (or no strings below it). Stops at the first that is not;
    /// the proven (state, byte) pairs are left in `proven` for the walk.
    fn prove_frontier(
        &mut self,
        trie: &TokTrie,
        walk: &toktrie::SplitWalk,
        row: u32,
        pr: &mut SubtreeProof<'_, Self>,
        proven: &mut [u32; 256],
    ) -> bool {
        let keys = walk.frontier_keys(trie);
        if !keys.starts_chars {
            return false;
        }
        let len = self.stack.len();
        for &(state, b, inner) in &keys.keys {
            self.stack.truncate(len);
            self.stack.push(Pos { row, lexer: StateId(state) });
            if !self.try_push_byte(b) {
                return false;
            }
            if inner {
                if !(pr.prove)(self) {
                    return false;
                }
                proven[b as usize] = state;
            }
        }
        true
    }

    fn finish_split(&mut self, trie: &TokTrie, mask: &mut TokenSet) -> Result<(), Error> {
        trie.add_bias_specials(self, mask);
        trie.add_duplicates(mask);
        self.trie_finished();
        self.check_error()
    }

    /// The lexer state the next lexeme starts in if the pending lexeme ends in lexer state
    /// `end` (a state it reaches from the current position, within the current row);
    /// `None` where the row does not take it. For proofs about tokens that cross the end
    /// of a lexeme (see `llguidance`'s slicing); the row it makes is a speculative one, as
    /// a walk's.
    pub fn start_after_end(&mut self, end: StateId) -> Result<Option<StateId>, Error> {
        self.check_error()?;
        self.start_step();
        let row = self.stack.last().expect("the stack holds the start").row;
        Ok(self.end_lexeme(row, end)?.map(|(r, once)| self.start_after(r, once)))
    }

    /// The start state of the committed position's row (where its pending lexeme began).
    pub fn row_start_state(&self) -> StateId {
        self.row_start[self.stack[self.base].row as usize]
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

/// [`Parser::split_walk`]'s step on a transition not built yet: undecided once `cancel` is
/// set, or where the lexer fails (a limit), a lexeme ends or the state is numbered `limit`
/// or above.
#[inline(never)]
fn split_step_cold<L: Lexer>(
    lexer: &mut L,
    cancel: Option<&std::sync::atomic::AtomicBool>,
    s: StateId,
    b: u8,
    limit: u32,
) -> Option<Option<u32>> {
    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        return None;
    }
    match lexer.step(s, b).ok()? {
        Step::Reject => Some(None),
        Step::Continue(n) if n.0 < limit => Some(Some(n.0)),
        _ => None,
    }
}
