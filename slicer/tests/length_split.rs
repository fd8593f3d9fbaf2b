//! `LengthSplit`: the short set holds the regular tokens of at most `h` bytes, every special
//! token and every EOS id (a regular EOS too); the long trie holds exactly the other
//! regular tokens; together they cover the vocabulary once.

use slicer::LengthSplit;
use toktrie::{AcceptAll, TokTrie, TokenId, TokenSet, VocabBuilder};

#[test]
fn short_and_long_tokens_cover_the_vocabulary_once() {
    let words: [&[u8]; 7] = [b"a", b"ab", b"abc", b"abcd", b"abcdefgh", b"xyzxyzxyz", b"</s>"];
    let mut b = VocabBuilder::new();
    for (i, w) in words.iter().enumerate() {
        b.token(TokenId(i as u32), w).unwrap();
    }
    b.special(TokenId(7), "<|end|>").unwrap();
    // A regular EOS longer than `h`: still left to the parser's state, never to its bytes.
    b.eos(TokenId(6));
    let vocab = b.build().unwrap();
    for h in [1u32, 3, 8] {
        let split = LengthSplit::new(&vocab, h).unwrap();
        assert_eq!(split.h(), h);
        let mut long = TokenSet::new(vocab.len());
        split.long().add_bias(&mut AcceptAll::default(), &mut long, &[]);
        for (i, w) in words.iter().enumerate() {
            let t = TokenId(i as u32);
            let is_short = w.len() <= h as usize || i == 6;
            assert_eq!(split.short().contains(t), is_short, "h {h}, token {i}");
            assert_eq!(long.contains(t), !is_short, "h {h}, token {i}");
        }
        assert!(split.short().contains(TokenId(7)), "h {h}: the special token is short");
        assert!(!long.contains(TokenId(7)));
        let full = TokTrie::from_vocab(&vocab).unwrap();
        assert_eq!(split.long().vocab_size(), full.vocab_size());
    }
}
