//! The compiled index: token-level states, the compact transition table and a precomputed
//! mask per state.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use toktrie::{TokenId, TokenSet, Vocabulary};

use crate::bytedfa::{ByteDfa, DEAD};
use crate::groups::Groups;
use crate::walk::Walker;
use crate::{Budget, Config, Error, ErrorKind, StateId};

/// Where the mask of a state lives: `len` words of [`Index`]'s dense words, or `len` token
/// ids of its sparse ids, from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct MaskRef {
    dense: bool,
    start: u32,
    len: u32,
}

/// Numbers about a build, for logs and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Live states of the (minimized) byte-level DFA.
    pub byte_states: usize,
    /// Byte classes after merging equal columns (dead ones included).
    pub classes: usize,
    /// Token-level states (byte states where a token can end, reachable from the start).
    pub states: usize,
    /// Groups of tokens with the same class string.
    pub groups: usize,
    /// Tokens dropped statically because they hold a byte no match can contain.
    pub dropped_tokens: usize,
    /// (state, group) transitions.
    pub transitions: usize,
    /// Distinct transition rows after deduplication.
    pub rows: usize,
    /// Distinct masks after deduplication.
    pub masks: usize,
    /// Trie nodes visited by all walks (the work units of [`Config::max_work`]).
    pub work: u64,
    /// Build phases, in microseconds: byte DFA (regex-automata + liveness + merging), token
    /// groups and class trie, walks, tables and masks.
    pub phase_us: [u64; 4],
}

/// A regex compiled against a vocabulary into a token-level DFA: for every state, the
/// allowed tokens (a precomputed mask) and the next state of each allowed token.
///
/// Immutable once built; share it between [`crate::Guide`]s with an `Arc`. Serializable
/// with serde; deserialization checks the table's consistency.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "IndexData")]
pub struct Index {
    vocab_size: u32,
    eos: Vec<TokenId>,
    initial: u32,
    finals: Vec<bool>,
    /// State → row.
    state_row: Vec<u32>,
    /// CSR rows: the transitions of row `r` are `row_start[r]..row_start[r + 1]` in
    /// `row_group` (ascending) and `row_next`.
    row_start: Vec<u32>,
    row_group: Vec<u32>,
    row_next: Vec<u32>,
    /// Tokens that occur in some row, ascending, and their group.
    live_tokens: Vec<TokenId>,
    live_group: Vec<u32>,
    /// State → mask.
    state_mask: Vec<u32>,
    masks: Vec<MaskRef>,
    dense_words: Vec<u32>,
    sparse_ids: Vec<TokenId>,
    stats: Stats,
}

/// The serialized form, checked before it becomes an [`Index`].
#[derive(Deserialize)]
struct IndexData {
    vocab_size: u32,
    eos: Vec<TokenId>,
    initial: u32,
    finals: Vec<bool>,
    state_row: Vec<u32>,
    row_start: Vec<u32>,
    row_group: Vec<u32>,
    row_next: Vec<u32>,
    live_tokens: Vec<TokenId>,
    live_group: Vec<u32>,
    state_mask: Vec<u32>,
    masks: Vec<MaskRef>,
    dense_words: Vec<u32>,
    sparse_ids: Vec<TokenId>,
    stats: Stats,
}

impl TryFrom<IndexData> for Index {
    type Error = Error;

    fn try_from(d: IndexData) -> Result<Index, Error> {
        let bad =
            |what: &str| Error::new(ErrorKind::InvalidIndex, format!("invalid index: {what}"));
        let n = d.finals.len();
        let words = (d.vocab_size as usize).div_ceil(32);
        if (d.initial as usize) >= n || d.state_row.len() != n || d.state_mask.len() != n {
            return Err(bad("state arrays"));
        }
        let rows = d.row_start.len().checked_sub(1).ok_or_else(|| bad("row_start"))?;
        if d.state_row.iter().any(|&r| r as usize >= rows)
            || d.row_start.windows(2).any(|w| w[0] > w[1])
            || d.row_start.last().copied() != Some(d.row_group.len() as u32)
            || d.row_group.len() != d.row_next.len()
            || d.row_next.iter().any(|&s| s as usize >= n)
            || d.row_start
                .windows(2)
                .any(|w| d.row_group[w[0] as usize..w[1] as usize].windows(2).any(|g| g[0] >= g[1]))
        {
            return Err(bad("transition rows"));
        }
        if d.live_tokens.len() != d.live_group.len()
            || d.live_tokens.windows(2).any(|w| w[0] >= w[1])
            || d.live_tokens.iter().chain(&d.eos).chain(&d.sparse_ids).any(|t| t.0 >= d.vocab_size)
        {
            return Err(bad("tokens"));
        }
        if d.state_mask.iter().any(|&m| m as usize >= d.masks.len())
            || d.masks.iter().any(|m| {
                let end = m.start as usize + m.len as usize;
                if m.dense {
                    m.len as usize != words || end > d.dense_words.len()
                } else {
                    end > d.sparse_ids.len()
                }
            })
            || (d.vocab_size % 32 != 0
                && d.dense_words
                    .chunks(words.max(1))
                    .any(|c| c[words - 1] >> (d.vocab_size % 32) != 0))
        {
            return Err(bad("masks"));
        }
        Ok(Index {
            vocab_size: d.vocab_size,
            eos: d.eos,
            initial: d.initial,
            finals: d.finals,
            state_row: d.state_row,
            row_start: d.row_start,
            row_group: d.row_group,
            row_next: d.row_next,
            live_tokens: d.live_tokens,
            live_group: d.live_group,
            state_mask: d.state_mask,
            masks: d.masks,
            dense_words: d.dense_words,
            sparse_ids: d.sparse_ids,
            stats: d.stats,
        })
    }
}

impl Index {
    /// Compiles `regex` (implicitly anchored at both ends) against `vocab` with the default
    /// [`Config`]. EOS is the vocabulary's EOS set.
    pub fn new(regex: &str, vocab: &Vocabulary) -> Result<Index, Error> {
        Index::with_config(regex, vocab, &Config::default())
    }

    /// Compiles `regex` with explicit budgets; running over one is
    /// [`ErrorKind::OverBudget`].
    pub fn with_config(regex: &str, vocab: &Vocabulary, config: &Config) -> Result<Index, Error> {
        let t0 = Instant::now();
        let dfa = ByteDfa::new(regex, config)?;
        let t1 = Instant::now();
        let groups = Groups::new(&dfa, vocab);
        let t2 = Instant::now();
        let forced = if config.literals { Some(dfa.forced()) } else { None };
        let vocab_size = vocab.len();
        let words = vocab_size.div_ceil(32);

        // BFS over token-level states, one level at a time; the roots of a level are
        // walked in parallel.
        let mut tok_of_byte = vec![DEAD; dfa.num_states()];
        let mut byte_of_tok: Vec<u32> = vec![dfa.initial];
        tok_of_byte[dfa.initial as usize] = 0;
        let mut rows: Vec<Vec<(u32, u32)>> = Vec::new();
        let work = AtomicU64::new(0);
        let over = AtomicBool::new(false);
        let walk_one = |root: u32| -> Vec<(u32, u32)> {
            let mut out = Vec::new();
            if over.load(Ordering::Relaxed) {
                return out;
            }
            let mut walker = Walker::new(&dfa, &groups, forced.as_deref());
            let w = walker.walk(root, &mut out);
            if work.fetch_add(w, Ordering::Relaxed) + w > config.max_work {
                over.store(true, Ordering::Relaxed);
            }
            out
        };
        let mut level_start = 0;
        while level_start < byte_of_tok.len() {
            let level: Vec<u32> = byte_of_tok[level_start..].to_vec();
            level_start = byte_of_tok.len();
            let level_rows: Vec<Vec<(u32, u32)>> = if config.parallel && level.len() > 1 {
                level.par_iter().map(|&s| walk_one(s)).collect()
            } else {
                level.iter().map(|&s| walk_one(s)).collect()
            };
            if over.load(Ordering::Relaxed) {
                return Err(Error::new(
                    ErrorKind::OverBudget(Budget::Work),
                    format!(
                        "regex {regex:?}: the build needs more than max_work = {} work units",
                        config.max_work
                    ),
                ));
            }
            for row in level_rows {
                for &(_, t) in &row {
                    if tok_of_byte[t as usize] == DEAD {
                        tok_of_byte[t as usize] = byte_of_tok.len() as u32;
                        byte_of_tok.push(t);
                    }
                }
                rows.push(row);
            }
            if byte_of_tok.len() > config.max_states {
                return Err(Error::new(
                    ErrorKind::OverBudget(Budget::States),
                    format!(
                        "regex {regex:?}: more than max_states = {} token-level states",
                        config.max_states
                    ),
                ));
            }
            if let Some(limit) = config.max_time {
                if t0.elapsed() > limit {
                    return Err(Error::new(
                        ErrorKind::OverBudget(Budget::Time),
                        format!(
                            "regex {regex:?}: the build takes longer than max_time = {limit:?}"
                        ),
                    ));
                }
            }
        }
        let n = byte_of_tok.len();
        let t3 = Instant::now();

        // Rows in token-state numbering, deduplicated.
        let mut row_ids: HashMap<Vec<(u32, u32)>, u32> = HashMap::new();
        let mut state_row = Vec::with_capacity(n);
        let mut row_start = vec![0u32];
        let mut row_group = Vec::new();
        let mut row_next = Vec::new();
        let mut group_live = vec![false; groups.num_groups()];
        for row in rows {
            let row: Vec<(u32, u32)> =
                row.into_iter().map(|(g, t)| (g, tok_of_byte[t as usize])).collect();
            let next_id = row_ids.len() as u32;
            let id = *row_ids.entry(row).or_insert_with_key(|row| {
                for &(g, t) in row {
                    group_live[g as usize] = true;
                    row_group.push(g);
                    row_next.push(t);
                }
                row_start.push(row_group.len() as u32);
                next_id
            });
            state_row.push(id);
        }
        let finals: Vec<bool> = byte_of_tok.iter().map(|&b| dfa.finals[b as usize]).collect();

        // Masks, one per distinct (row, final), dense or sparse by size.
        let mut eos: Vec<TokenId> = vocab.eos_tokens().to_vec();
        eos.sort_unstable();
        eos.dedup();
        let mut mask_ids: HashMap<(u32, bool), u32> = HashMap::new();
        let mut masks = Vec::new();
        let mut dense_words = Vec::new();
        let mut sparse_ids = Vec::new();
        let mut state_mask = Vec::with_capacity(n);
        for s in 0..n {
            let key = (state_row[s], finals[s]);
            let next_id = masks.len() as u32;
            let id = *mask_ids.entry(key).or_insert_with(|| {
                let r = key.0 as usize;
                let mut set = TokenSet::new(vocab_size);
                for &g in &row_group[row_start[r] as usize..row_start[r + 1] as usize] {
                    for &t in groups.tokens_of(g) {
                        set.insert(t);
                    }
                }
                if key.1 {
                    for &t in &eos {
                        set.insert(t);
                    }
                }
                let count = set.count();
                // A sparse list of ids is smaller than the bitset when there are fewer ids
                // than words; serving it costs a zeroing plus `count` bit sets, no more than
                // the copy of a dense mask.
                let m = if count < words {
                    let start = sparse_ids.len() as u32;
                    sparse_ids.extend(set.iter());
                    MaskRef { dense: false, start, len: count as u32 }
                } else {
                    let start = dense_words.len() as u32;
                    dense_words.extend_from_slice(set.as_words());
                    MaskRef { dense: true, start, len: words as u32 }
                };
                masks.push(m);
                next_id
            });
            state_mask.push(id);
        }

        let mut live: Vec<(TokenId, u32)> = Vec::new();
        for (g, _) in group_live.iter().enumerate().filter(|(_, l)| **l) {
            for &t in groups.tokens_of(g as u32) {
                live.push((t, g as u32));
            }
        }
        live.sort_unstable();
        let stats = Stats {
            byte_states: dfa.num_states(),
            classes: dfa.num_classes,
            states: n,
            groups: groups.num_groups(),
            dropped_tokens: groups.dropped,
            transitions: state_row
                .iter()
                .map(|&r| (row_start[r as usize + 1] - row_start[r as usize]) as usize)
                .sum(),
            rows: row_start.len() - 1,
            masks: masks.len(),
            work: work.load(Ordering::Relaxed),
            phase_us: [
                (t1 - t0).as_micros() as u64,
                (t2 - t1).as_micros() as u64,
                (t3 - t2).as_micros() as u64,
                t3.elapsed().as_micros() as u64,
            ],
        };
        let mut index = Index {
            vocab_size: vocab_size as u32,
            eos,
            initial: 0,
            finals,
            state_row,
            row_start,
            row_group,
            row_next,
            live_tokens: live.iter().map(|x| x.0).collect(),
            live_group: live.iter().map(|x| x.1).collect(),
            state_mask,
            masks,
            dense_words,
            sparse_ids,
            stats,
        };
        index.shrink();
        Ok(index)
    }

    fn shrink(&mut self) {
        self.finals.shrink_to_fit();
        self.state_row.shrink_to_fit();
        self.row_start.shrink_to_fit();
        self.row_group.shrink_to_fit();
        self.row_next.shrink_to_fit();
        self.state_mask.shrink_to_fit();
        self.masks.shrink_to_fit();
        self.dense_words.shrink_to_fit();
        self.sparse_ids.shrink_to_fit();
    }

    /// The start state.
    pub fn initial_state(&self) -> StateId {
        StateId(self.initial)
    }

    /// The number of states; ids are `0..num_states()`.
    pub fn num_states(&self) -> usize {
        self.finals.len()
    }

    /// The number of token ids (the mask width in bits).
    pub fn vocab_size(&self) -> usize {
        self.vocab_size as usize
    }

    /// The EOS ids, allowed exactly in final states.
    pub fn eos_tokens(&self) -> &[TokenId] {
        &self.eos
    }

    /// The final states (where the bytes so far match the whole regex), ascending.
    pub fn final_states(&self) -> Vec<StateId> {
        (0..self.finals.len() as u32).filter(|&s| self.finals[s as usize]).map(StateId).collect()
    }

    /// Whether `state` is final (false for ids out of range).
    pub fn is_final_state(&self, state: StateId) -> bool {
        self.finals.get(state.as_usize()).copied().unwrap_or(false)
    }

    fn check(&self, state: StateId) -> Result<usize, Error> {
        let s = state.as_usize();
        if s < self.finals.len() {
            Ok(s)
        } else {
            Err(Error::new(
                ErrorKind::InvalidState,
                format!("state {} is not a state of this index ({} states)", s, self.finals.len()),
            ))
        }
    }

    fn mask_ref(&self, s: usize) -> MaskRef {
        self.masks[self.state_mask[s] as usize]
    }

    /// Whether `token` is allowed in `state` (false for unknown states and tokens).
    pub fn is_allowed(&self, state: StateId, token: TokenId) -> bool {
        let Ok(s) = self.check(state) else { return false };
        if token.0 >= self.vocab_size {
            return false;
        }
        let m = self.mask_ref(s);
        if m.dense {
            let w = self.dense_words[m.start as usize + token.0 as usize / 32];
            w >> (token.0 % 32) & 1 != 0
        } else {
            self.sparse(m).binary_search(&token).is_ok()
        }
    }

    fn sparse(&self, m: MaskRef) -> &[TokenId] {
        &self.sparse_ids[m.start as usize..m.start as usize + m.len as usize]
    }

    /// The allowed tokens of `state`, ascending (EOS included in final states).
    pub fn allowed_tokens(&self, state: StateId) -> Result<Vec<TokenId>, Error> {
        let s = self.check(state)?;
        let m = self.mask_ref(s);
        if m.dense {
            let words = &self.dense_words[m.start as usize..(m.start + m.len) as usize];
            let mut out = Vec::new();
            for (i, &w) in words.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    out.push(TokenId(i as u32 * 32 + w.trailing_zeros()));
                    w &= w - 1;
                }
            }
            Ok(out)
        } else {
            Ok(self.sparse(m).to_vec())
        }
    }

    /// The number of allowed tokens of `state`.
    pub fn num_allowed(&self, state: StateId) -> Result<usize, Error> {
        let s = self.check(state)?;
        let m = self.mask_ref(s);
        Ok(if m.dense {
            self.dense_words[m.start as usize..(m.start + m.len) as usize]
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum()
        } else {
            m.len as usize
        })
    }

    /// Writes the mask of `state` into `out`: bit `t % 32` of word `t / 32` for each
    /// allowed token `t`; `out` needs at least `(vocab_size + 31) / 32` words (extra words
    /// are zeroed).
    pub fn write_mask(&self, state: StateId, out: &mut [u32]) -> Result<(), Error> {
        let s = self.check(state)?;
        let words = (self.vocab_size as usize).div_ceil(32);
        if out.len() < words {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                format!("mask buffer has {} words, {} needed", out.len(), words),
            ));
        }
        let m = self.mask_ref(s);
        if m.dense {
            out[..words]
                .copy_from_slice(&self.dense_words[m.start as usize..m.start as usize + words]);
            out[words..].fill(0);
        } else {
            out.fill(0);
            for t in self.sparse(m) {
                out[t.0 as usize / 32] |= 1 << (t.0 % 32);
            }
        }
        Ok(())
    }

    /// The mask of `state` as a [`TokenSet`].
    pub fn mask(&self, state: StateId) -> Result<TokenSet, Error> {
        let mut set = TokenSet::new(self.vocab_size as usize);
        self.write_mask(state, set.as_words_mut())?;
        Ok(set)
    }

    /// The state after `token` in `state`, or `None` if `token` is not allowed there. EOS
    /// in a final state loops on that state.
    pub fn next_state(&self, state: StateId, token: TokenId) -> Option<StateId> {
        let s = self.check(state).ok()?;
        if self.eos.contains(&token) {
            return self.finals[s].then_some(state);
        }
        let i = self.live_tokens.binary_search(&token).ok()?;
        let g = self.live_group[i];
        let r = self.state_row[s] as usize;
        let lo = self.row_start[r] as usize;
        let hi = self.row_start[r + 1] as usize;
        let j = self.row_group[lo..hi].binary_search(&g).ok()?;
        Some(StateId(self.row_next[lo + j]))
    }

    /// Numbers about the build.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Memory owned by the index, in bytes.
    pub fn num_bytes(&self) -> usize {
        std::mem::size_of::<Index>()
            + self.eos.capacity() * 4
            + self.finals.capacity()
            + (self.state_row.capacity()
                + self.row_start.capacity()
                + self.row_group.capacity()
                + self.row_next.capacity()
                + self.live_tokens.capacity()
                + self.live_group.capacity()
                + self.state_mask.capacity()
                + self.dense_words.capacity()
                + self.sparse_ids.capacity())
                * 4
            + self.masks.capacity() * std::mem::size_of::<MaskRef>()
    }
}
