//! Masks near a bound by the length of each token's leading run: a state inside a bounded
//! repeat `B{m,n} R` has its run twin's mask less the tokens that read more than `n`
//! characters of `B`, or exit the run before `m` (`lexer::DerivreLexer::run_bound`, whose
//! module doc has the argument). [`RunTable`] holds, per vocabulary and character
//! automaton, those tokens as masks for the small bounds and as lists for the rest.

use lexer::RunDfa;
use toktrie::{TokenId, TokenSet, Vocabulary};

/// Bounds up to this many characters have a mask each; larger ones use the lists.
const SMALL: usize = 16;

/// The tokens of a vocabulary by how they read as characters of one [`RunDfa`].
#[derive(Clone, Debug)]
pub struct RunTable {
    /// `at_most[r]`: the tokens that read at most `r` characters, for `r <= SMALL` (special
    /// and EOS tokens read none).
    at_most: Vec<TokenSet>,
    /// `exit_below[m]`: the tokens that exit the run after fewer than `m` characters, for
    /// `m <= SMALL + 1`.
    exit_below: Vec<TokenSet>,
    /// The tokens that read more than `SMALL` characters, by that count, ascending.
    long: Vec<(u32, TokenId)>,
    /// Those of them that exit the run.
    long_exits: Vec<(u32, TokenId)>,
}

impl RunTable {
    /// Reads every regular token of `vocab` with `dfa`.
    pub fn new(vocab: &Vocabulary, dfa: &RunDfa) -> RunTable {
        let n = vocab.len();
        let mut at_most: Vec<TokenSet> = (0..=SMALL).map(|_| TokenSet::new(n)).collect();
        let mut exit_below: Vec<TokenSet> = (0..=SMALL + 1).map(|_| TokenSet::new(n)).collect();
        let (mut long, mut long_exits) = (Vec::new(), Vec::new());
        // Each token goes into the first mask it belongs to; the masks are then made
        // cumulative.
        for (t, bytes) in vocab.iter() {
            let (k, exits) =
                if crate::read_by_state(vocab, t) { (0, false) } else { dfa.leading(bytes) };
            let k_us = k as usize;
            if k_us <= SMALL {
                at_most[k_us].insert(t);
            } else {
                long.push((k, t));
                if exits {
                    long_exits.push((k, t));
                }
            }
            if exits && k_us < SMALL + 1 {
                exit_below[k_us + 1].insert(t);
            }
        }
        for r in 1..at_most.len() {
            let (lo, hi) = at_most.split_at_mut(r);
            hi[0].union(&lo[r - 1]);
        }
        for m in 1..exit_below.len() {
            let (lo, hi) = exit_below.split_at_mut(m);
            hi[0].union(&lo[m - 1]);
        }
        long.sort_unstable();
        long_exits.sort_unstable();
        RunTable { at_most, exit_below, long, long_exits }
    }

    /// Keeps in `mask` only the tokens that read at most `max` characters and, if they exit
    /// the run, at least `min`.
    pub fn restrict(&self, mask: &mut TokenSet, min: u32, max: u32) {
        // No token reads `u32::MAX` characters: the unrestricted mask narrowed.
        self.narrow(mask, u32::MAX, max);
        if min == 0 {
            return;
        }
        match self.exit_below.get(min as usize) {
            Some(s) => mask.subtract(s),
            None => {
                mask.subtract(&self.exit_below[SMALL + 1]);
                let below = self.long_exits.partition_point(|&(k, _)| k < min);
                for &(_, t) in &self.long_exits[..below] {
                    mask.remove(t);
                }
            }
        }
    }

    /// `mask` restricted by [`RunTable::restrict`] to `max` characters (with some
    /// minimum), restricted further to `to` (at most `max`): the tokens that read more
    /// than `to` characters and at most `max` are removed, in place (the minimum's
    /// subtraction does not depend on the maximum). Equal to restricting the unrestricted
    /// mask to `to` with that minimum.
    pub fn narrow(&self, mask: &mut TokenSet, max: u32, to: u32) {
        debug_assert!(to <= max);
        match self.at_most.get(to as usize) {
            Some(s) => mask.intersect(s),
            None => {
                let from = self.long.partition_point(|&(k, _)| k <= to);
                let upto = self.long.partition_point(|&(k, _)| k <= max);
                for &(_, t) in &self.long[from..upto] {
                    mask.remove(t);
                }
            }
        }
    }

    /// Memory owned, in bytes.
    pub fn num_bytes(&self) -> usize {
        self.at_most.iter().chain(&self.exit_below).map(TokenSet::num_bytes).sum::<usize>()
            + (self.long.capacity() + self.long_exits.capacity())
                * std::mem::size_of::<(u32, TokenId)>()
    }
}

/// The most iterations of a repeat's body (its automaton `dfa`) that a regular token of at
/// most `h` bytes starts, for `h` from 0 to the longest token: `limits[h]`
/// (`lexer::IterDfa::iterations_started` of every token, the most by length, then
/// accumulated). Special and EOS tokens read no byte: none. The ways through a token are
/// followed as a list of (state, most iterations) pairs, the list after each first byte
/// computed once (from every state, the widest step). ~7 ms at Llama 3 for a JSON string's
/// word (54 states), once per vocabulary and body.
pub fn iteration_limits(vocab: &Vocabulary, dfa: &lexer::IterDfa) -> Vec<u32> {
    let n = dfa.len();
    let mut sim = Sim { pos: vec![0u16; n], out: Vec::with_capacity(n) };
    // From every state (none started) and from between two iterations (the next starts).
    let every: Vec<(u8, u32)> = (0..n as u8).map(|s| (s, 0)).collect();
    let first: Vec<Vec<(u8, u32)>> = (0..=255u8)
        .map(|b| {
            sim.step(dfa, &every, b, true);
            std::mem::take(&mut sim.out)
        })
        .collect();
    let mut by_len: Vec<u32> = Vec::new();
    let mut cur: Vec<(u8, u32)> = Vec::with_capacity(n);
    for (t, bytes) in vocab.iter() {
        if crate::read_by_state(vocab, t) || bytes.is_empty() {
            continue;
        }
        if by_len.len() <= bytes.len() {
            by_len.resize(bytes.len() + 1, 0);
        }
        // A token starts at most one iteration a byte: no more to find.
        if by_len[bytes.len()] as usize >= bytes.len() {
            continue;
        }
        cur.clear();
        cur.extend_from_slice(&first[bytes[0] as usize]);
        let mut best = cur.iter().map(|x| x.1).max().unwrap_or(0);
        for &b in &bytes[1..] {
            if cur.is_empty() {
                break;
            }
            sim.step(dfa, &cur, b, false);
            std::mem::swap(&mut cur, &mut sim.out);
            best = best.max(cur.iter().map(|x| x.1).max().unwrap_or(0));
        }
        by_len[bytes.len()] = by_len[bytes.len()].max(best);
    }
    let mut most = 0;
    for x in by_len.iter_mut() {
        most = most.max(*x);
        *x = most;
    }
    by_len
}

/// The ways through a token: the next (state, most iterations) list, and each state's
/// place in it while it is built (1-based; 0: not there).
struct Sim {
    pos: Vec<u16>,
    out: Vec<(u8, u32)>,
}

impl Sim {
    /// The ways after `b` from `cur` into `out` (cleared first); `boundary`: also from
    /// between two iterations, none started.
    fn step(&mut self, dfa: &lexer::IterDfa, cur: &[(u8, u32)], b: u8, boundary: bool) {
        self.out.clear();
        let start = dfa.step(0, b);
        if boundary {
            self.put(start, 1);
        }
        for &(s, k) in cur {
            self.put(dfa.step(s, b), k);
            if dfa.ends(s) {
                self.put(start, k + 1);
            }
        }
        for &(s, _) in &self.out {
            self.pos[s as usize] = 0;
        }
    }

    fn put(&mut self, to: u8, k: u32) {
        if to == lexer::RUN_DEAD {
            return;
        }
        match self.pos[to as usize] {
            0 => {
                self.out.push((to, k));
                self.pos[to as usize] = self.out.len() as u16;
            }
            i => {
                let x = &mut self.out[i as usize - 1].1;
                *x = (*x).max(k);
            }
        }
    }
}
