//! The byte automaton of one character of a bounded repeat's body ([`RunDfa`]), and how a
//! token reads as such characters: what a mask near the repeat's bound keeps (the run twins
//! of `DerivreLexer::run_bound`; `slicer::RunTable`).

/// FNV-1a over an automaton's table and its per-state flags.
fn fingerprint(next: &[u8], flags: &[bool]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in next.iter().copied().chain(flags.iter().map(|&d| u8::from(d))) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// No transition in a [`RunDfa`].
pub const RUN_DEAD: u8 = u8::MAX;

/// The byte automaton of one character of a repeat's body: from the start (state 0), each
/// byte leads to a state or [`RUN_DEAD`]; reaching a *done* state completes a character
/// (and nothing extends it). Two bodies with the same automaton read tokens alike, so it
/// keys the tables built over a vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDfa {
    /// `next[state * 256 + byte]`.
    next: Vec<u8>,
    done: Vec<bool>,
    /// A hash of the two, computed once: the automaton keys a map looked up at every mask
    /// near a bound, and hashing its table (4 KB for a JSON string's character) each time
    /// cost more than the rest of such a mask.
    fingerprint: u64,
}

impl std::hash::Hash for RunDfa {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint);
    }
}

impl RunDfa {
    /// The automaton of `next` (256 entries per state, [`RUN_DEAD`] or a state) and
    /// `done` (one per state).
    pub fn from_parts(next: Vec<u8>, done: Vec<bool>) -> RunDfa {
        debug_assert_eq!(next.len(), done.len() * 256);
        let fingerprint = fingerprint(&next, &done);
        RunDfa { next, done, fingerprint }
    }

    /// The state after `byte` from `state` ([`RUN_DEAD`]: none).
    pub fn step(&self, state: u8, byte: u8) -> u8 {
        self.next.get(state as usize * 256 + byte as usize).copied().unwrap_or(RUN_DEAD)
    }

    /// The number of states.
    pub fn len(&self) -> usize {
        self.done.len()
    }

    /// Always false: the start state exists.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty()
    }

    /// How `bytes` reads as characters from the start: the characters (a trailing partial
    /// one counted), and whether a byte follows them that starts no character (an invalid
    /// continuation inside a character also counts as an exit, with that character counted:
    /// no state of the run survives it).
    pub fn leading(&self, bytes: &[u8]) -> (u32, bool) {
        let mut k = 0u32;
        let mut s = 0usize;
        for &b in bytes {
            let n = self.next[s * 256 + b as usize];
            if n == RUN_DEAD {
                return (k + u32::from(s != 0), true);
            }
            if self.done[n as usize] {
                k += 1;
                s = 0;
            } else {
                s = n as usize;
            }
        }
        (k + u32::from(s != 0), false)
    }
}

/// States of an [`IterDfa`] at most.
pub const ITER_STATES: usize = 64;

/// The byte automaton of a bounded repeat's body `B` read from inside an iteration: state 0
/// is `B` (an iteration started, nothing read), the others its derivatives; `ends[s]`: an
/// iteration may end at `s` (nullable), where the next byte may start another. Keys the
/// vocabulary's iteration limits (`slicer::iteration_limits`): how many iterations a token
/// of at most `h` bytes starts at most, which counter twins relax by
/// (`DerivreLexer::set_iteration_limits`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IterDfa {
    /// `next[state * 256 + byte]`.
    next: Vec<u8>,
    ends: Vec<bool>,
    /// A hash of the two, computed once (the automaton keys a map).
    fingerprint: u64,
}

impl std::hash::Hash for IterDfa {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint);
    }
}

impl IterDfa {
    /// The automaton of `next` (256 entries per state, [`RUN_DEAD`] or a state) and `ends`
    /// (one per state, at most [`ITER_STATES`]).
    pub fn from_parts(next: Vec<u8>, ends: Vec<bool>) -> IterDfa {
        debug_assert_eq!(next.len(), ends.len() * 256);
        debug_assert!(ends.len() <= ITER_STATES);
        let fingerprint = fingerprint(&next, &ends);
        IterDfa { next, ends, fingerprint }
    }

    /// The number of states.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The state after `byte` from `state` ([`RUN_DEAD`]: none).
    pub fn step(&self, state: u8, byte: u8) -> u8 {
        self.next.get(state as usize * 256 + byte as usize).copied().unwrap_or(RUN_DEAD)
    }

    /// Whether an iteration may end at `state`.
    pub fn ends(&self, state: u8) -> bool {
        self.ends.get(state as usize).copied().unwrap_or(false)
    }

    /// Always false: the start state exists.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The most iterations `bytes` starts, read from any state of an iteration or from
    /// between two: every way through the bytes is followed (a state keeps the most
    /// iterations that reach it), a new one starting wherever an iteration may end; a way
    /// stops where a byte leaves the repeat (what follows it starts none). An upper bound
    /// for the iterations a lexer state inside the repeat starts on these bytes.
    pub fn iterations_started(&self, bytes: &[u8]) -> u32 {
        const NONE: u32 = u32::MAX;
        let n = self.len().min(ITER_STATES);
        // The iterations reaching each state (`NONE`: not reached), then the next byte's.
        let mut cur = [0u32; ITER_STATES];
        let mut nxt = [NONE; ITER_STATES];
        let mut best = 0;
        for (i, &b) in bytes.iter().enumerate() {
            nxt[..n].fill(NONE);
            let start = self.next[b as usize];
            let mut any = false;
            let mut put = |to: u8, k: u32, nxt: &mut [u32; ITER_STATES]| {
                if to != RUN_DEAD {
                    let x = &mut nxt[to as usize];
                    *x = if *x == NONE { k } else { (*x).max(k) };
                    best = best.max(k);
                    any = true;
                }
            };
            if i == 0 {
                // Between two iterations before the first byte.
                put(start, 1, &mut nxt);
            }
            let row = &self.next[b as usize..];
            for s in 0..n {
                let k = cur[s];
                if k == NONE {
                    continue;
                }
                put(row[s * 256], k, &mut nxt);
                if self.ends[s] {
                    put(start, k + 1, &mut nxt);
                }
            }
            if !any {
                break;
            }
            std::mem::swap(&mut cur, &mut nxt);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_as_characters() {
        // One character: `a`, or `\` then `n` (a prefix code).
        let mut next = vec![RUN_DEAD; 3 * 256];
        next[b'a' as usize] = 2;
        next[b'\\' as usize] = 1;
        next[256 + b'n' as usize] = 2;
        let dfa = RunDfa::from_parts(next, vec![false, false, true]);
        assert_eq!(dfa.leading(b"aa"), (2, false));
        assert_eq!(dfa.leading(b"a\\"), (2, false), "a partial character counts");
        assert_eq!(dfa.leading(b"a\\n\"x"), (2, true));
        assert_eq!(dfa.leading(b"\"a"), (0, true));
        assert_eq!(dfa.leading(b"\\x"), (1, true), "a broken character exits");
        assert_eq!(dfa.leading(b""), (0, false));
    }

    #[test]
    fn iterations_started_count_the_starts_on_every_way() {
        // `B = a+ b`: state 0 `a+ b`, 1 `a* b`, 2 done (nullable).
        let mut next = vec![RUN_DEAD; 3 * 256];
        next[b'a' as usize] = 1;
        next[256 + b'a' as usize] = 1;
        next[256 + b'b' as usize] = 2;
        let dfa = IterDfa::from_parts(next, vec![false, false, true]);
        assert_eq!(dfa.iterations_started(b""), 0);
        // Inside an iteration: `aab` ends it, `a` starts another.
        assert_eq!(dfa.iterations_started(b"aaba"), 2);
        assert_eq!(dfa.iterations_started(b"abab"), 2);
        // A run of `a` starts at most one.
        assert_eq!(dfa.iterations_started(&[b'a'; 100]), 1);
        assert_eq!(dfa.iterations_started(b"bab"), 1, "a way from inside the first");
        assert_eq!(dfa.iterations_started(b"x"), 0, "a byte leaving the repeat starts none");
    }
}
