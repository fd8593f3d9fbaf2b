//! `iteration_limits` (the vocabulary's most iterations of a repeat body a token of at most
//! `h` bytes starts, each first byte's ways computed once) against the plain count
//! (`IterDfa::iterations_started` of every token), on random automata and vocabularies.

mod common;

use lexer::IterDfa;
use proptest::prelude::*;
use toktrie::{TokenId, VocabBuilder};

/// An automaton over bytes `a`..`d` (others dead) of `n` states from a flat table.
fn dfa(n: usize, table: &[u8], ends: &[bool]) -> IterDfa {
    let next = common::next_over_abcd(n, table);
    IterDfa::from_parts(next, ends[..n].to_vec())
}

proptest! {
    #[test]
    fn limits_equal_the_plain_count(
        n in 1usize..6,
        table in prop::collection::vec(0u8..8, 24),
        ends in prop::collection::vec(any::<bool>(), 6),
        words in prop::collection::vec(prop::collection::vec(b'a'..=b'e', 1..12), 1..40),
    ) {
        let d = dfa(n, &table, &ends);
        let mut b = VocabBuilder::new();
        for (i, w) in words.iter().enumerate() {
            b.token(TokenId(i as u32), w).unwrap();
        }
        b.special(TokenId(words.len() as u32), "<|end|>").unwrap();
        let vocab = b.build().unwrap();
        let limits = slicer::iteration_limits(&vocab, &d);
        let longest = words.iter().map(Vec::len).max().unwrap();
        prop_assert_eq!(limits.len(), longest + 1);
        for (h, &limit) in limits.iter().enumerate() {
            let plain = words
                .iter()
                .filter(|w| w.len() <= h)
                .map(|w| d.iterations_started(w))
                .max()
                .unwrap_or(0);
            prop_assert_eq!(limit, plain, "h {}", h);
        }
    }
}
