//! The kept unions of slice masks equal the unions computed afresh, every set of slices,
//! asked twice (built, then kept), also when written into a buffer that held another set.

use slicer::{SliceSpec, Slices};
use toktrie::{TokenSet, Vocabulary};

#[test]
fn unions_of_slice_masks() {
    let vocab = Vocabulary::bytes();
    let slices = Slices::new(&vocab, &SliceSpec::standard()).unwrap();
    let k = slices.slices().len();
    for _ in 0..2 {
        for which in 0..1u32 << k {
            let mut want = TokenSet::new(vocab.len());
            for (i, s) in slices.slices().iter().enumerate() {
                if which >> i & 1 == 1 {
                    want.union(s.mask());
                }
            }
            let flags: Vec<bool> = (0..k).map(|i| which >> i & 1 == 1).collect();
            assert_eq!(slices.union_of(&flags), want, "slices {which:b}");
            let mut out = TokenSet::new(vocab.len());
            out.set_all(true);
            slices.union_into(&flags, &mut out);
            assert_eq!(out, want, "slices {which:b}, into a full buffer");
            // A flag past the slices is ignored.
            let mut long = flags.clone();
            long.push(false);
            slices.union_into(&long, &mut out);
            assert_eq!(out, want, "slices {which:b}, a flag past the slices");
        }
    }
    // Disjoint slices: the whole set holds every token of every slice.
    let all = slices.union_of(&vec![true; k]);
    let total: usize = slices.slices().iter().map(|s| s.mask().count()).sum();
    assert_eq!(all.count(), total);
}
