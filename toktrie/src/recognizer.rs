//! The [`Recognizer`] trait and two simple recognizers.

use crate::TokenId;

/// A byte-level recognizer driven by the trie walk ([`crate::TokTrie::add_bias`]).
///
/// The walk pushes the bytes of token prefixes one at a time; the recognizer answers whether
/// the bytes pushed so far can still be extended to an accepted string, and keeps a stack so
/// that [`Recognizer::pop_bytes`] returns to an earlier prefix. Popping is frequent (once per
/// rejected subtree and per leaf), so it should be a pointer move.
///
/// The calling contract of one walk: [`trie_started`](Recognizer::trie_started), then for
/// each trie node in DFS order `try_push_byte(b)`; after a leaf, or after a rejected byte
/// (the subtree is skipped), `pop_bytes(n)` with the number of levels that end there, which
/// is often 0 (the next node is a sibling's child) and never more than was pushed; special
/// tokens are asked with [`special_allowed`](Recognizer::special_allowed) (after
/// [`any_special_allowed`](Recognizer::any_special_allowed)) without pushing bytes; then
/// [`trie_finished`](Recognizer::trie_finished), with the stack back where it started.
///
/// Implementations are safe code; the walk never relies on them for memory safety.
pub trait Recognizer {
    /// Pushes `byte`; returns false (and pushes nothing) if no accepted string continues
    /// with the bytes pushed so far followed by `byte`.
    fn try_push_byte(&mut self, byte: u8) -> bool;

    /// Pops the last `num` pushed bytes (`num` may be 0, and is on most nodes). The walk
    /// never pops more than it pushed.
    fn pop_bytes(&mut self, num: usize);

    /// Makes the current state the bottom of the stack (called after a token is consumed,
    /// so the state cannot be popped past). Default: nothing.
    fn collapse(&mut self) {}

    /// Whether special token `tok` (a control token such as EOS, stored in the trie behind
    /// 0xFF) may come next. Special tokens are never walked byte by byte. Default: false.
    fn special_allowed(&mut self, tok: TokenId) -> bool {
        let _ = tok;
        false
    }

    /// Whether [`Recognizer::special_allowed`] may answer true for some token now; when
    /// false the walk skips asking for each special token. Default: true.
    fn any_special_allowed(&mut self) -> bool {
        true
    }

    /// Called before a walk starts.
    fn trie_started(&mut self) {}

    /// Called after a walk ends, with the stack back where it was at the start.
    fn trie_finished(&mut self) {}
}

/// Accepts every byte string (and no special token): its mask is every regular token.
#[derive(Clone, Debug, Default)]
pub struct AcceptAll {
    depth: usize,
}

impl Recognizer for AcceptAll {
    #[inline(always)]
    fn try_push_byte(&mut self, _byte: u8) -> bool {
        self.depth += 1;
        true
    }

    #[inline(always)]
    fn pop_bytes(&mut self, num: usize) {
        self.depth -= num;
    }
}

/// A deterministic byte automaton as a recognizer: a dense table of `256 * num_states`
/// transitions, state 0 dead. A byte is accepted iff it leads to a live state, so states must
/// be *live* (some accepting state reachable) for the mask to be exact; build it from a
/// minimized DFA (dead states merged into 0).
#[derive(Clone, Debug)]
pub struct ByteDfa {
    table: Vec<u32>,
    accepting: Vec<bool>,
    stack: Vec<u32>,
    allow_specials: Vec<TokenId>,
}

impl ByteDfa {
    /// The dead state.
    pub const DEAD: u32 = 0;

    /// A DFA with `accepting.len()` states, transitions `table[state * 256 + byte]`, starting
    /// in `start`. Returns `None` if the table has the wrong size or a target out of range.
    pub fn new(table: Vec<u32>, accepting: Vec<bool>, start: u32) -> Option<ByteDfa> {
        let n = accepting.len();
        if n == 0
            || table.len() != n * 256
            || table.iter().any(|&t| t as usize >= n)
            || start as usize >= n
        {
            return None;
        }
        Some(ByteDfa { table, accepting, stack: vec![start], allow_specials: Vec::new() })
    }

    /// Special tokens allowed when the current state is accepting (e.g. EOS).
    pub fn with_specials_at_end(mut self, toks: &[TokenId]) -> ByteDfa {
        self.allow_specials = toks.to_vec();
        self
    }

    /// The current state.
    pub fn state(&self) -> u32 {
        *self.stack.last().expect("the stack always holds the start")
    }

    /// Whether the current state is accepting.
    pub fn is_accepting(&self) -> bool {
        self.accepting[self.state() as usize]
    }

    /// The number of states.
    pub fn num_states(&self) -> usize {
        self.accepting.len()
    }
}

impl Recognizer for ByteDfa {
    #[inline(always)]
    fn try_push_byte(&mut self, byte: u8) -> bool {
        let s = self.state();
        let next = self.table[(s as usize) << 8 | byte as usize];
        if next == Self::DEAD {
            false
        } else {
            self.stack.push(next);
            true
        }
    }

    #[inline(always)]
    fn pop_bytes(&mut self, num: usize) {
        let len = self.stack.len().saturating_sub(num).max(1);
        self.stack.truncate(len);
    }

    fn collapse(&mut self) {
        let s = self.state();
        self.stack.clear();
        self.stack.push(s);
    }

    fn special_allowed(&mut self, tok: TokenId) -> bool {
        self.is_accepting() && self.allow_specials.contains(&tok)
    }
}
