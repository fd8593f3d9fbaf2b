//! Split walks: the trie walked by a byte automaton alone as far as it decides (the lexer
//! inside a lexeme), the rest left to the full recognizer; a new walk takes the first-level
//! subtrees an earlier walk entered in the same state.

use std::sync::OnceLock;

use super::TokTrie;
use crate::node::TrieNode;
use crate::{TokenId, TokenSet};

/// A walk of a trie decided by a byte automaton alone, as far as it can decide it (see
/// [`TokTrie::split_walk`]): the tokens it accepts, and the nodes it left to the full
/// recognizer with the automaton's state before each.
#[derive(Clone, Debug)]
pub struct SplitWalk {
    /// The accepted tokens: ids when few, else a set.
    allowed: Allowed,
    /// `(node, state)`: the node's byte was not decided from `state` (the state after the
    /// node's parent); its subtree was not walked.
    frontier: Vec<(u32, u32)>,
    /// Nodes the automaton decided.
    decided: usize,
    /// Whether the automaton rejected a node (so some token is neither accepted nor below
    /// the frontier).
    rejected: bool,
    /// The first level's subtrees the automaton entered, of at least [`PIECE_MIN_NODES`]
    /// nodes walked, by node (none where the accepted ids spilled into a set): what a later
    /// walk that enters the same node in the same state takes from this one
    /// ([`TokTrie::split_walk_reusing`]).
    pieces: Vec<Piece>,
    /// The frontier's keys, built when first asked.
    keys: OnceLock<FrontierKeys>,
}

/// Nodes a first-level subtree's walk visits at least to be kept as a [`Piece`] (and the
/// nodes a subtree must hold to be looked up): below it the walk costs less than the lookup.
const PIECE_MIN_NODES: u32 = 16;

/// A first-level node's part of a [`SplitWalk`]: everything the walk did from the node
/// (accepted by the automaton into `state`) to the end of its subtree. The walk below a
/// node depends only on the node and the state after it, so a walk from another start that
/// enters the node in the same state does the same there.
#[derive(Clone, Copy, Debug)]
struct Piece {
    node: u32,
    state: u32,
    /// Ranges of the walk's accepted ids and of its frontier.
    allowed: (u32, u32),
    frontier: (u32, u32),
    /// Nodes decided, the first-level node included, and whether one was rejected.
    decided: u32,
    rejected: bool,
}

/// A part of an earlier split walk that a new one may take whole: its `index`-th piece
/// ([`SplitWalk::pieces`]).
#[derive(Clone, Copy, Debug)]
pub struct PieceRef<'a> {
    /// The earlier walk.
    pub walk: &'a SplitWalk,
    /// The piece's index, as [`SplitWalk::pieces`] gives it.
    pub index: usize,
}

/// What a proof about every frontier subtree of a split walk needs (see
/// [`SplitWalk::frontier_keys`]).
#[derive(Clone, Debug)]
pub struct FrontierKeys {
    /// The frontier's distinct (state, node byte, whether some such node has children),
    /// sorted.
    pub keys: Vec<(u32, u8, bool)>,
    /// Whether every frontier node with children has them begin a character (see
    /// [`TokTrie::children_start_char`]).
    pub starts_chars: bool,
}

#[derive(Clone, Debug)]
enum Allowed {
    Ids(Vec<TokenId>),
    Set(TokenSet),
}

impl SplitWalk {
    /// The nodes left to the full recognizer, with the automaton's state before each.
    pub fn frontier(&self) -> &[(u32, u32)] {
        &self.frontier
    }

    /// How many nodes the automaton decided (the walk a replay saves).
    pub fn decided(&self) -> usize {
        self.decided
    }

    /// Whether the automaton rejected some node: else every token of the trie is accepted
    /// or at or below a frontier node.
    pub fn rejected_any(&self) -> bool {
        self.rejected
    }

    /// The frontier's distinct (state, node byte, whether some such node has children):
    /// what a proof about every frontier subtree needs to ask once each; built on the first
    /// call (`trie` is the trie walked), kept with the walk.
    pub fn frontier_keys(&self, trie: &TokTrie) -> &FrontierKeys {
        self.keys.get_or_init(|| trie.frontier_keys(&self.frontier))
    }

    /// The pieces a later walk may take ([`TokTrie::split_walk_reusing`]): `(node, state
    /// after it, index)` for each first-level node whose subtree the automaton entered.
    pub fn pieces(&self) -> impl ExactSizeIterator<Item = (u32, u32, usize)> + '_ {
        self.pieces.iter().enumerate().map(|(i, p)| (p.node, p.state, i))
    }

    /// Adds the accepted tokens to `mask`.
    pub fn add_allowed(&self, mask: &mut TokenSet) {
        match &self.allowed {
            Allowed::Ids(ids) => ids.iter().for_each(|&t| mask.insert(t)),
            Allowed::Set(s) => mask.union(s),
        }
    }

    /// Memory held, in bytes.
    pub fn num_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.frontier.len() * 8
            + self.pieces.len() * std::mem::size_of::<Piece>()
            + self.keys.get().map_or(0, |k| k.keys.len() * 8)
            + match &self.allowed {
                Allowed::Ids(ids) => ids.len() * 4,
                Allowed::Set(s) => s.num_bytes(),
            }
    }
}

/// A split walk's accepted ids: written to `buf` without a test (a node without a token
/// writes past the used part), spilled into `set` whenever more than `max` are held.
struct Ids {
    buf: Vec<u32>,
    len: usize,
    max: usize,
    set: Option<TokenSet>,
    spilled: bool,
}

impl Ids {
    #[inline(always)]
    fn push(&mut self, t: u32, vocab_size: usize) {
        self.buf[self.len] = t;
        self.len += (t != TrieNode::NO_TOKEN) as usize;
        if self.len > self.max {
            self.spill(vocab_size);
        }
    }

    /// Adds `ids` (all tokens).
    fn extend(&mut self, ids: &[TokenId], vocab_size: usize) {
        if self.len + ids.len() <= self.max {
            for (to, t) in self.buf[self.len..self.len + ids.len()].iter_mut().zip(ids) {
                *to = t.0;
            }
            self.len += ids.len();
        } else {
            ids.iter().for_each(|t| self.push(t.0, vocab_size));
        }
    }

    #[cold]
    fn spill(&mut self, vocab_size: usize) {
        let s = self.set.get_or_insert_with(|| TokenSet::new(vocab_size));
        self.buf[..self.len].iter().for_each(|&t| s.insert(TokenId(t)));
        self.len = 0;
        self.spilled = true;
    }

    /// The ids as a list, or as a set once spilled; and the buffer, to be kept.
    fn finish(mut self, vocab_size: usize) -> (Allowed, Vec<u32>) {
        let allowed = if self.set.is_some() {
            self.spill(vocab_size);
            Allowed::Set(self.set.take().expect("spilled into it"))
        } else {
            Allowed::Ids(self.buf[..self.len].iter().map(|&t| TokenId(t)).collect())
        };
        (allowed, self.buf)
    }
}

thread_local! {
    /// [`TokTrie::split_walk`]'s buffer of accepted ids, reused by the thread's walks.
    static SPLIT_BUF: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl TokTrie {
    /// Walks the regular tokens (the 0xFF subtree left out) with a byte automaton that
    /// decides what it can: `step(state, byte)` is `Some(Some(next))` (accepted),
    /// `Some(None)` (rejected) or `None` (undecided: the node goes to the frontier with
    /// `state` and its subtree is not walked). Starting from `start`, the result is the
    /// accepted tokens and the frontier; a recognizer that agrees with the automaton on the
    /// decided nodes computes the same mask as [`TokTrie::add_bias`] by adding the accepted
    /// tokens, walking each frontier node's subtree from its state
    /// ([`TokTrie::walk_subtree`]), then [`TokTrie::add_bias_specials`] and
    /// [`TokTrie::add_duplicates`].
    pub fn split_walk(
        &self,
        start: u32,
        step: impl FnMut(u32, u8) -> Option<Option<u32>>,
    ) -> SplitWalk {
        self.split_walk_reusing(start, step, |_, _| None)
    }

    /// [`TokTrie::split_walk`] taking parts of earlier walks of this trie by the same
    /// automaton: where the automaton accepts a first-level node into a state and
    /// `reuse(node, state)` gives an earlier walk's piece for them (see
    /// [`SplitWalk::pieces`]), that piece's accepted ids, frontier and counts are taken in
    /// place of walking the node's subtree. The result is the walk without reuse, id for id
    /// (the automaton's transitions must not have changed between the walks: a transition
    /// decided in the earlier walk is taken as decided).
    pub fn split_walk_reusing<'a>(
        &self,
        start: u32,
        mut step: impl FnMut(u32, u8) -> Option<Option<u32>>,
        mut reuse: impl FnMut(u32, u32) -> Option<PieceRef<'a>>,
    ) -> SplitWalk {
        let nodes = &self.nodes[..self.ff_node.min(self.nodes.len())];
        // As in [`TokTrie::walk_root`], no data-dependent branch per node but accept or
        // reject: the accepted ids are written to a buffer without a test (a node without a
        // token writes past the used part), the pop after a node is deferred to the next
        // iteration. A walk that accepts more than `max_ids` tokens is kept as a set, the
        // buffer spilled into it whenever it fills. (A 266k-node walk of a string body took
        // 1.8 ms with a branch per token where the walk with the parser took 1.0.)
        let max_ids = (self.vocab_size / 32).max(1);
        // The buffer is this thread's, kept from one walk to the next (zeroing it cost
        // each small walk more than it saved).
        let mut buf = SPLIT_BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if buf.len() < max_ids + 1 {
            buf.resize(max_ids + 1, 0);
        }
        let mut frontier = Vec::new();
        // The state after each node on the path, `stack[0]` the root's; `depth` entries are
        // in use (a path is at most the longest token, plus the root).
        let mut stack = vec![start; self.max_token_len + 2];
        // Decided nodes: accepted (`decided` in the loop) and rejected ones.
        let mut decided = 0;
        let mut rejected = 0;
        // The first level's nodes loaded up front: their places come from `root_children`,
        // so the loads go out together, where the walk's own reads of them wait on each
        // other (the next child's index is in the node): ~250 misses in a row at a cold
        // first mask, where the lexer rejects most first bytes.
        let mut q = 1;
        let mut x = 0u8;
        for &size in &self.root_children {
            x ^= nodes[q].byte();
            q += size as usize;
        }
        std::hint::black_box(x);
        let mut pieces = Vec::new();
        // A rejection inside a piece taken from an earlier walk.
        let mut taken_rejected = false;
        // The first level one node and its subtree at a time: a large subtree entered in a
        // state where `reuse` has an earlier walk's piece is taken from it, else walked and
        // kept as a piece; the walk below a node has no work added per node.
        let mut ids = Ids { buf, len: 0, max: max_ids, set: None, spilled: false };
        let mut top = 1;
        while top < nodes.len() {
            let n = nodes[top];
            let end = top + self.subtree_size(top);
            let next = match step(start, n.byte()) {
                Some(Some(next)) => next,
                r => {
                    if r.is_some() {
                        rejected += 1;
                    } else {
                        frontier.push((top as u32, start));
                    }
                    top = end;
                    continue;
                }
            };
            let piece = Piece {
                node: top as u32,
                state: next,
                allowed: (ids.len as u32, 0),
                frontier: (frontier.len() as u32, 0),
                decided: (decided + rejected) as u32,
                rejected: false,
            };
            let large = end - top >= PIECE_MIN_NODES as usize;
            if let Some(found) = large.then(|| reuse(top as u32, next)).flatten() {
                let q = found.walk.pieces[found.index];
                let Allowed::Ids(taken) = &found.walk.allowed else {
                    unreachable!("a walk with pieces keeps its ids")
                };
                ids.extend(&taken[q.allowed.0 as usize..q.allowed.1 as usize], self.vocab_size);
                let f = &found.walk.frontier[q.frontier.0 as usize..q.frontier.1 as usize];
                frontier.extend_from_slice(f);
                decided += q.decided as usize;
                taken_rejected |= q.rejected;
                pieces.push(Piece {
                    allowed: (piece.allowed.0, ids.len as u32),
                    frontier: (piece.frontier.0, frontier.len() as u32),
                    decided: q.decided,
                    rejected: q.rejected,
                    ..piece
                });
                top = end;
                continue;
            }
            // The node, then its subtree.
            let rejected_before = rejected;
            decided += 1;
            ids.push(n.token_raw(), self.vocab_size);
            stack[1] = next;
            let mut depth = 2usize;
            let mut next_pop = 0usize;
            let mut p = top + 1;
            while p < end {
                depth = depth.saturating_sub(next_pop).max(1);
                let n = nodes[p];
                let cur = stack[depth - 1];
                let pop = n.parents_raw();
                let pop = if pop != TrieNode::PARENTS_ESCAPE {
                    pop as usize
                } else {
                    self.num_parents(p)
                };
                match step(cur, n.byte()) {
                    Some(Some(next)) => {
                        decided += 1;
                        ids.push(n.token_raw(), self.vocab_size);
                        stack[depth] = next;
                        depth += 1;
                        next_pop = if n.subtree_raw() == 1 { pop } else { 0 };
                        p += 1;
                    }
                    r => {
                        if r.is_some() {
                            rejected += 1;
                        } else {
                            frontier.push((p as u32, cur));
                        }
                        next_pop = pop.saturating_sub(1);
                        p += self.subtree_size(p);
                    }
                }
            }
            // Kept when the walk visited enough nodes (each accepted, rejected or left to
            // the frontier).
            if large {
                let now = decided + rejected;
                let visited =
                    now + frontier.len() - piece.decided as usize - piece.frontier.0 as usize;
                if visited >= PIECE_MIN_NODES as usize {
                    pieces.push(Piece {
                        allowed: (piece.allowed.0, ids.len as u32),
                        frontier: (piece.frontier.0, frontier.len() as u32),
                        decided: (now - piece.decided as usize) as u32,
                        rejected: rejected > rejected_before,
                        ..piece
                    });
                }
            }
            top = end;
        }
        let spilled = ids.spilled;
        let (allowed, buf) = ids.finish(self.vocab_size);
        SPLIT_BUF.with(|b| *b.borrow_mut() = buf);
        if spilled {
            // The ids' places are lost in the set.
            pieces = Vec::new();
        }
        SplitWalk {
            allowed,
            frontier,
            decided: decided + rejected,
            rejected: rejected > 0 || taken_rejected,
            pieces,
            keys: OnceLock::new(),
        }
    }

    /// The distinct (state, byte, has children) of a split walk's frontier nodes, and
    /// whether every frontier node with children has them begin a character.
    fn frontier_keys(&self, frontier: &[(u32, u32)]) -> FrontierKeys {
        let mut starts_chars = true;
        let mut keys: Vec<(u32, u8, bool)> = frontier
            .iter()
            .map(|&(node, state)| {
                let node = node as usize;
                let inner = self.subtree_size(node) > 1;
                starts_chars &= !inner || self.children_start_char(node);
                (state, self.nodes[node].byte(), inner)
            })
            .collect();
        // A key with children covers its leaves (both need the byte taken).
        keys.sort_unstable_by_key(|k| (k.0, k.1, !k.2));
        keys.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        FrontierKeys { keys, starts_chars }
    }
}
