//! `TokenSet` range insertion against one-by-one insertion.

use toktrie::{TokenId, TokenSet};

/// Every range of every small universe (word boundaries, partial words, ranges past the
/// end, empty ranges), on an empty set and on a set with bits already in it.
#[test]
fn insert_range_equals_inserting_each_id() {
    for universe in [1usize, 31, 32, 33, 64, 65, 100] {
        for lo in 0..universe as u32 + 2 {
            for hi in 0..universe as u32 + 40 {
                for prefill in [false, true] {
                    let mut a = TokenSet::new(universe);
                    if prefill {
                        a.insert(TokenId(0));
                        a.insert(TokenId(universe as u32 - 1));
                    }
                    let mut b = a.clone();
                    a.insert_range(TokenId(lo), TokenId(hi));
                    for t in lo..=hi.min(universe as u32 - 1) {
                        b.insert(TokenId(t));
                    }
                    assert_eq!(a, b, "universe {universe}, {lo}..={hi}");
                }
            }
        }
    }
}
