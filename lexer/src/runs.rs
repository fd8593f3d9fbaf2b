//! The byte automaton of one character of a bounded repeat's body ([`RunDfa`]), and how a
//! token reads as such characters: what a mask near the repeat's bound keeps (the run twins
//! of `DerivreLexer::run_bound`; `slicer::RunTable`).

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
    /// The automaton of `next` (256 entries per state) and `done` (one per state).
    #[cfg_attr(not(feature = "derivre"), allow(dead_code))]
    pub(crate) fn from_parts(next: Vec<u8>, done: Vec<bool>) -> RunDfa {
        debug_assert_eq!(next.len(), done.len() * 256);
        // FNV-1a over the table and the done flags.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in next.iter().copied().chain(done.iter().map(|&d| u8::from(d))) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        RunDfa { next, done, fingerprint: h }
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
}
