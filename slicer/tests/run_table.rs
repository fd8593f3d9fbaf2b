//! `RunTable::narrow` (a restricted mask restricted further, in place) against
//! `RunTable::restrict` of the unrestricted mask, and that against each token's leading
//! run, on random character automata, vocabularies, masks and bounds on both sides of the
//! table's small bounds.

mod common;

use lexer::RunDfa;
use proptest::prelude::*;
use toktrie::{TokenId, TokenSet, VocabBuilder};

/// A character automaton over bytes `a`..`d` (others dead): state 0 starts a character,
/// `done` states complete one; `a` is a character of one byte (long runs exist).
fn dfa(n: usize, table: &[u8], done: &[bool]) -> RunDfa {
    let mut next = common::next_over_abcd(n, table);
    let mut done = done[..n].to_vec();
    done[0] = false;
    done[n - 1] = true;
    next[b'a' as usize] = (n - 1) as u8;
    RunDfa::from_parts(next, done)
}

proptest! {
    #[test]
    fn narrowing_equals_restricting_afresh(
        n in 2usize..5,
        table in prop::collection::vec(0u8..6, 20),
        done in prop::collection::vec(any::<bool>(), 5),
        words in prop::collection::vec(
            prop::collection::vec(prop::sample::select(b"aaaaaaaaabcde".to_vec()), 1..40),
            1..60,
        ),
        keep in prop::collection::vec(any::<bool>(), 61),
        min in 0u32..24,
        max in 0u32..40,
        cut in 0u32..40,
    ) {
        let d = dfa(n, &table, &done);
        let mut b = VocabBuilder::new();
        for (i, w) in words.iter().enumerate() {
            b.token(TokenId(i as u32), w).unwrap();
        }
        b.special(TokenId(words.len() as u32), "<|end|>").unwrap();
        let vocab = b.build().unwrap();
        let t = slicer::RunTable::new(&vocab, &d);
        let mut mask = TokenSet::new(vocab.len());
        for (i, &k) in keep.iter().enumerate().take(vocab.len()) {
            if k {
                mask.insert(TokenId(i as u32));
            }
        }
        let mask_ids: Vec<TokenId> = mask.iter().collect();
        let to = max.min(cut);
        let mut want = mask.clone();
        t.restrict(&mut want, min, to);
        let mut got = mask;
        t.restrict(&mut got, min, max);
        t.narrow(&mut got, max, to);
        prop_assert_eq!(got.iter().collect::<Vec<_>>(), want.iter().collect::<Vec<_>>());
        // Both as the definition says, token by token (the special token reads nothing).
        let plain: Vec<TokenId> = mask_ids
            .into_iter()
            .filter(|t| {
                let (k, exits) = words.get(t.0 as usize).map_or((0, false), |w| d.leading(w));
                k <= to && !(exits && k < min)
            })
            .collect();
        prop_assert_eq!(want.iter().collect::<Vec<_>>(), plain);
    }
}
