//! The brute-force reference, written independently of the index's optimized path: a plain
//! regex-automata DFA (not minimized), liveness by exploring every byte from every state,
//! and for each token its bytes run one by one from the current state.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use index::{Index, StateId, TokenId, Vocabulary};
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::primitives::StateID;
use regex_automata::{Anchored, Input, MatchKind};

pub struct Reference {
    dfa: dense::DFA<Vec<u32>>,
    live: HashSet<StateID>,
    start: StateID,
}

impl Reference {
    pub fn new(regex: &str) -> Reference {
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .match_kind(MatchKind::All)
                    .minimize(false),
            )
            .build(regex)
            .unwrap();
        let start = dfa.start_state_forward(&Input::new("").anchored(Anchored::Yes)).unwrap();
        // Explore every state with every byte; liveness = can reach an accepting state.
        let mut seen = HashSet::from([start]);
        let mut stack = vec![start];
        let mut preds: HashMap<StateID, Vec<StateID>> = HashMap::new();
        while let Some(s) = stack.pop() {
            for b in 0..=255u8 {
                let t = dfa.next_state(s, b);
                preds.entry(t).or_default().push(s);
                if seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        let mut live: HashSet<StateID> =
            seen.iter().copied().filter(|&s| dfa.is_match_state(dfa.next_eoi_state(s))).collect();
        let mut stack: Vec<StateID> = live.iter().copied().collect();
        while let Some(s) = stack.pop() {
            for &p in preds.get(&s).map(|v| v.as_slice()).unwrap_or(&[]) {
                if live.insert(p) {
                    stack.push(p);
                }
            }
        }
        Reference { dfa, live, start }
    }

    pub fn start(&self) -> StateID {
        self.start
    }

    pub fn run(&self, mut s: StateID, bytes: &[u8]) -> StateID {
        for &b in bytes {
            s = self.dfa.next_state(s, b);
        }
        s
    }

    pub fn is_live(&self, s: StateID) -> bool {
        self.live.contains(&s)
    }

    pub fn is_final(&self, s: StateID) -> bool {
        self.dfa.is_match_state(self.dfa.next_eoi_state(s))
    }

    /// Allowed token ids in `s`, ascending.
    pub fn allowed(&self, s: StateID, vocab: &Vocabulary) -> Vec<TokenId> {
        let eos = vocab.eos_tokens();
        let mut out: Vec<TokenId> = vocab
            .iter()
            .filter(|(t, _)| !vocab.is_special(*t) && !eos.contains(t))
            .filter(|(_, b)| self.is_live(self.run(s, b)))
            .map(|(t, _)| t)
            .collect();
        if self.is_final(s) {
            out.extend_from_slice(eos);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A tiny deterministic PRNG (xorshift64*), so the tests need no extra crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Checks the index against the reference along `paths` random token paths of up to
/// `steps` tokens each (random allowed tokens), and along `fixed` (a given token path).
pub fn check_paths(
    index: &Index,
    reference: &Reference,
    vocab: &Vocabulary,
    seed: u64,
    paths: usize,
    steps: usize,
    fixed: &[TokenId],
) {
    let check = |s: StateId, r: StateID, what: &str| -> Vec<TokenId> {
        let want = reference.allowed(r, vocab);
        let got = index.allowed_tokens(s).unwrap();
        if got != want {
            let extra: Vec<_> = got.iter().filter(|t| !want.contains(t)).take(5).collect();
            let missing: Vec<_> = want.iter().filter(|t| !got.contains(t)).take(5).collect();
            panic!(
                "{what}: mask differs in state {s}: {} vs {} tokens; extra {:?}, missing {:?}",
                got.len(),
                want.len(),
                extra.iter().map(|t| vocab.token_display(**t)).collect::<Vec<_>>(),
                missing.iter().map(|t| vocab.token_display(**t)).collect::<Vec<_>>(),
            );
        }
        assert_eq!(index.is_final_state(s), reference.is_final(r), "{what}: finality");
        let mut mask = vec![0u32; vocab.len().div_ceil(32)];
        index.write_mask(s, &mut mask).unwrap();
        let from_mask: Vec<TokenId> = (0..vocab.len() as u32)
            .filter(|t| mask[*t as usize / 32] >> (t % 32) & 1 != 0)
            .map(TokenId)
            .collect();
        assert_eq!(from_mask, want, "{what}: written mask");
        want
    };
    // The fixed path.
    let (mut s, mut r) = (index.initial_state(), reference.start());
    for &t in fixed {
        let allowed = check(s, r, "fixed path");
        assert!(allowed.contains(&t), "fixed path: token {} not allowed", vocab.token_display(t));
        s = index.next_state(s, t).unwrap();
        if !vocab.eos_tokens().contains(&t) {
            r = reference.run(r, vocab.token_bytes(t));
        }
    }
    check(s, r, "fixed path end");
    // Random paths.
    let mut rng = Rng(seed | 1);
    for _ in 0..paths {
        let (mut s, mut r) = (index.initial_state(), reference.start());
        for _ in 0..steps {
            let allowed = check(s, r, "random path");
            let regular: Vec<TokenId> =
                allowed.iter().copied().filter(|t| !vocab.eos_tokens().contains(t)).collect();
            if regular.is_empty() {
                break;
            }
            let t = regular[rng.below(regular.len())];
            s = index.next_state(s, t).expect("allowed token has a next state");
            r = reference.run(r, vocab.token_bytes(t));
        }
    }
}
