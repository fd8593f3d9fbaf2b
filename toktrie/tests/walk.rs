//! The trie walk gives exactly the brute-force mask.

use proptest::prelude::*;
use toktrie::{
    AcceptAll, ByteDfa, Recognizer, TokTrie, TokenId, TokenSet, VocabBuilder, Vocabulary,
};

/// The mask by definition: push every byte of every token on the recognizer.
fn brute_force<R: Recognizer>(vocab: &Vocabulary, r: &mut R, prefix: &[u8]) -> TokenSet {
    let mut mask = TokenSet::new(vocab.len());
    for (t, bytes) in vocab.iter() {
        if vocab.is_special(t) {
            if prefix.is_empty() && r.special_allowed(t) {
                mask.insert(t);
            }
            continue;
        }
        let Some(rest) = bytes.strip_prefix(prefix) else { continue };
        let mut pushed = 0;
        while pushed < rest.len() && r.try_push_byte(rest[pushed]) {
            pushed += 1;
        }
        if pushed == rest.len() {
            mask.insert(t);
        }
        r.pop_bytes(pushed);
    }
    mask
}

/// A recognizer that checks the walk's stack discipline: it never pops more than pushed and
/// ends where it started.
struct Checked<R> {
    inner: R,
    depth: usize,
}

impl<R: Recognizer> Recognizer for Checked<R> {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        let ok = self.inner.try_push_byte(byte);
        self.depth += ok as usize;
        ok
    }
    fn pop_bytes(&mut self, num: usize) {
        assert!(num <= self.depth, "popped {num} with {} pushed", self.depth);
        self.depth -= num;
        self.inner.pop_bytes(num);
    }
    fn special_allowed(&mut self, tok: TokenId) -> bool {
        self.inner.special_allowed(tok)
    }
    fn trie_finished(&mut self) {
        assert_eq!(self.depth, 0, "walk did not pop back to the start");
    }
}

fn walk<R: Recognizer>(trie: &TokTrie, r: R, prefix: &[u8]) -> TokenSet {
    let mut mask = TokenSet::new(trie.vocab_size());
    let mut c = Checked { inner: r, depth: 0 };
    trie.add_bias(&mut c, &mut mask, prefix);
    mask
}

fn vocab_of(tokens: &[Vec<u8>], specials: &[&str]) -> Vocabulary {
    vocab_sized(tokens, specials, 0)
}

/// [`vocab_of`] with ids up to `size` at least (a split walk keeps its accepted ids as a
/// list, with their pieces, up to 1/32 of the vocabulary).
fn vocab_sized(tokens: &[Vec<u8>], specials: &[&str], size: usize) -> Vocabulary {
    let mut b = VocabBuilder::new();
    for (i, t) in tokens.iter().enumerate() {
        b.token(TokenId(i as u32), t).unwrap();
    }
    for (i, s) in specials.iter().enumerate() {
        b.special(TokenId((tokens.len() + i) as u32), s).unwrap();
    }
    // A hole at the end, so the mask has an id no token uses.
    b.min_len((tokens.len() + specials.len() + 1).max(size));
    b.build().unwrap()
}

/// The transitions of [`random_dfa`].
fn random_table(n: u32, table_seed: &[u32]) -> Vec<u32> {
    (0..(n as usize) * 256)
        .map(|i| {
            if i < 256 {
                0
            } else {
                table_seed[i % table_seed.len()].wrapping_mul(i as u32 | 1) % n
            }
        })
        .collect()
}

/// The accepting states of [`random_dfa`] (state 0, dead, never).
fn random_accepting(n: u32, accepting: &[bool]) -> Vec<bool> {
    (0..n as usize).map(|i| i > 0 && accepting[i % accepting.len()]).collect()
}

/// A random DFA over all bytes: `n` states, transitions drawn from `seed`, state 0 dead.
fn random_dfa(n: u32, table_seed: &[u32], accepting: &[bool], eos: TokenId) -> ByteDfa {
    let table = random_table(n, table_seed);
    let acc = random_accepting(n, accepting);
    ByteDfa::new(table, acc, 1.min(n - 1)).unwrap().with_specials_at_end(&[eos])
}

/// A table recognizer that can be put in any state (for replaying a split walk's
/// frontier): a byte is accepted iff it leads to a state other than 0; EOS iff accepting.
struct Table {
    table: Vec<u32>,
    accepting: Vec<bool>,
    eos: TokenId,
    stack: Vec<u32>,
}

impl Recognizer for Table {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        let next = self.table[(*self.stack.last().unwrap() as usize) << 8 | byte as usize];
        if next != 0 {
            self.stack.push(next);
        }
        next != 0
    }
    fn pop_bytes(&mut self, num: usize) {
        self.stack.truncate(self.stack.len() - num);
    }
    fn special_allowed(&mut self, tok: TokenId) -> bool {
        tok == self.eos && self.accepting[*self.stack.last().unwrap() as usize]
    }
}

const ALPHABET: &[u8] = b"ab\x00\xfe\xff";

fn token_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(ALPHABET), 1..7)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn walk_equals_brute_force(
        tokens in prop::collection::vec(token_strategy(), 1..60),
        n in 2u32..6,
        table_seed in prop::collection::vec(any::<u32>(), 8..32),
        accepting in prop::collection::vec(any::<bool>(), 1..6),
        prefix_len in 0usize..3,
    ) {
        let vocab = vocab_of(&tokens, &["</s>", "<|x|>"]);
        let trie = TokTrie::from_vocab(&vocab).unwrap();
        let eos = vocab.eos_token().unwrap();
        let dfa = random_dfa(n, &table_seed, &accepting, eos);
        prop_assert_eq!(walk(&trie, dfa.clone(), &[]), brute_force(&vocab, &mut dfa.clone(), &[]));

        // Walk from a prefix: the recognizer has consumed it already.
        let prefix = &tokens[0][..prefix_len.min(tokens[0].len())];
        let mut r = dfa.clone();
        if prefix.iter().all(|&b| r.try_push_byte(b)) {
            r.collapse();
            prop_assert_eq!(walk(&trie, r.clone(), prefix), brute_force(&vocab, &mut r, prefix));
        }
    }

    /// A walk split where a byte automaton decides (a random part of the transitions left
    /// undecided), replayed from the frontier, gives the walk's mask.
    #[test]
    fn split_walk_replayed_equals_the_walk(
        tokens in prop::collection::vec(token_strategy(), 1..60),
        n in 2u32..6,
        table_seed in prop::collection::vec(any::<u32>(), 8..32),
        accepting in prop::collection::vec(any::<bool>(), 1..6),
        undecided_seed in any::<u32>(),
        undecided_one_in in 1u32..5,
    ) {
        let vocab = vocab_of(&tokens, &["</s>", "<|x|>"]);
        let trie = TokTrie::from_vocab(&vocab).unwrap();
        let eos = vocab.eos_token().unwrap();
        let dfa = random_dfa(n, &table_seed, &accepting, eos);
        let table = random_table(n, &table_seed);
        let undecided = |s: u32, b: u8| {
            (s.wrapping_mul(2654435761) ^ (b as u32).wrapping_mul(40503) ^ undecided_seed)
                % (undecided_one_in + 1)
                == 0
        };
        let split = trie.split_walk(1.min(n - 1), |s, b| {
            if undecided(s, b) {
                return None;
            }
            let next = table[(s as usize) << 8 | b as usize];
            Some((next != 0).then_some(next))
        });
        let mut mask = TokenSet::new(trie.vocab_size());
        split.add_allowed(&mut mask);
        let start = 1.min(n - 1);
        let acc = random_accepting(n, &accepting);
        let table_rec = Table { table: table.clone(), accepting: acc, eos, stack: vec![start] };
        let mut r = Checked { inner: table_rec, depth: 0 };
        for &(node, state) in split.frontier() {
            r.inner.stack.push(state);
            trie.walk_subtree(&mut r, &mut mask, node as usize);
            r.inner.stack.pop();
        }
        trie.add_bias_specials(&mut r, &mut mask);
        trie.add_duplicates(&mut mask);
        r.trie_finished();
        prop_assert_eq!(mask, walk(&trie, dfa, &[]));
    }

    /// A split walk that takes first-level pieces of earlier walks (from other starts, some
    /// transitions undecided) is the walk without them, id for id, frontier entry for
    /// frontier entry, pieces included; and walks that took pieces give theirs on. (About
    /// one case in five takes a piece; `a_walk_takes_the_piece_of_an_earlier_start` is
    /// one that must.)
    #[test]
    fn split_walk_reusing_pieces_equals_the_walk(
        tokens in prop::collection::vec(token_strategy(), 30..120),
        n in 2u32..7,
        table_seed in prop::collection::vec(any::<u32>(), 8..32),
        undecided_seed in any::<u32>(),
        undecided_one_in in 2u32..12,
        starts in prop::collection::vec(0u32..7, 2..6),
        ids_in_list in any::<bool>(),
    ) {
        // Accepted ids kept as a list (with pieces) or spilled into a set (without).
        let vocab = vocab_sized(&tokens, &["</s>"], if ids_in_list { 1 << 14 } else { 0 });
        let trie = TokTrie::from_vocab(&vocab).unwrap();
        let table = random_table(n, &table_seed);
        let step = |s: u32, b: u8| {
            if (s.wrapping_mul(2654435761) ^ (b as u32).wrapping_mul(40503) ^ undecided_seed)
                % undecided_one_in
                == 0
            {
                return None;
            }
            let next = table[(s as usize) << 8 | b as usize];
            Some((next != 0).then_some(next))
        };
        let mut earlier: Vec<toktrie::SplitWalk> = Vec::new();
        for &start in &starts {
            let start = start % n;
            let plain = trie.split_walk(start, step);
            let reusing = trie.split_walk_reusing(start, step, |node, state| {
                earlier.iter().find_map(|w| {
                    let (_, _, index) = w.pieces().find(|&(p, s, _)| (p, s) == (node, state))?;
                    Some(toktrie::PieceRef { walk: w, index })
                })
            });
            prop_assert_eq!(format!("{reusing:?}"), format!("{plain:?}"));
            earlier.push(reusing);
        }
    }

    #[test]
    fn accept_all_is_every_regular_token(tokens in prop::collection::vec(token_strategy(), 1..80)) {
        let vocab = vocab_of(&tokens, &["</s>"]);
        let trie = TokTrie::from_vocab(&vocab).unwrap();
        let mask = walk(&trie, AcceptAll::default(), &[]);
        prop_assert_eq!(mask.count(), tokens.len());
        prop_assert!(!mask.contains(vocab.eos_token().unwrap()));
    }
}

#[test]
fn duplicates_are_all_allowed() {
    let vocab = vocab_of(&[b"ab".to_vec(), b"a".to_vec(), b"ab".to_vec(), b"ab".to_vec()], &[]);
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    assert_eq!(trie.stats().num_duplicates, 2);
    assert_eq!(trie.token_id(b"ab"), Some(TokenId(0)));
    let mask = walk(&trie, AcceptAll::default(), &[]);
    assert_eq!(mask.iter().map(|t| t.0).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
}

#[test]
fn long_tokens_and_huge_subtrees_use_the_side_table() {
    // One token of 2.2 M bytes: the root's subtree exceeds 2^21 nodes and the leaf closes
    // more than 2046 levels, so both fields escape.
    let long = vec![b'x'; 2_200_000];
    let tokens = vec![long.clone(), long[..5000].to_vec(), long[..3].to_vec(), b"y".to_vec()];
    let vocab = vocab_of(&tokens, &["</s>"]);
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    assert_eq!(trie.max_token_len(), 2_200_000);
    assert_eq!(trie.subtree_size(0), trie.num_nodes());
    assert_eq!(walk(&trie, AcceptAll::default(), &[]).count(), 4);
    // A recognizer that allows at most 4000 bytes.
    let mut table = vec![0u32; 4002 * 256];
    for s in 1..4001usize {
        table[s * 256 + b'x' as usize] = s as u32 + 1;
        table[s * 256 + b'y' as usize] = 4001;
    }
    let dfa = ByteDfa::new(table, vec![true; 4002], 1).unwrap();
    let mask = walk(&trie, dfa.clone(), &[]);
    assert_eq!(mask, brute_force(&vocab, &mut dfa.clone(), &[]));
    assert_eq!(mask.iter().map(|t| t.0).collect::<Vec<_>>(), vec![2, 3]);
}

#[test]
fn bytes_vocabulary() {
    let vocab = Vocabulary::bytes();
    assert_eq!(vocab.len(), 257);
    assert_eq!(vocab.eos_tokens(), &[TokenId(256)]);
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    let mask = walk(&trie, AcceptAll::default(), &[]);
    assert_eq!(mask.count(), 256);
    assert_eq!(
        trie.greedy_tokenize(b"hi\xff"),
        Some(vec![TokenId(104), TokenId(105), TokenId(255)])
    );
}

#[test]
fn token_set_ops() {
    let mut a = TokenSet::from_ids(70, [1, 5, 69].map(TokenId)).unwrap();
    let b = TokenSet::from_ids(70, [5, 6].map(TokenId)).unwrap();
    assert!(TokenSet::from_ids(70, [TokenId(70)]).is_err());
    let mut u = a.clone();
    u.union(&b);
    assert_eq!(u.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 5, 6, 69]);
    a.intersect(&b);
    assert_eq!(a.iter().map(|t| t.0).collect::<Vec<_>>(), vec![5]);
    assert!(a.is_subset(&b));
    u.subtract(&b);
    assert_eq!(u.count(), 2);
    u.negate();
    assert_eq!(u.count(), 68);
    assert!(!u.contains(TokenId(70)) && !u.contains(TokenId(1000)));
    let full = TokenSet::full(70);
    assert!(full.is_full() && full.count() == 70);
    let mut out = [7u32; 4];
    full.write_to(&mut out).unwrap();
    assert_eq!(out, [u32::MAX, u32::MAX, 0x3f, 0]);
    assert!(full.write_to(&mut [0u32; 2]).is_err());
}

/// `is_empty` and `is_subset` work on blocks of words: each single token, at the edges of
/// the blocks and in the last partial word, is seen by both, as a word-by-word scan sees it.
#[test]
fn emptiness_and_inclusion_see_every_word() {
    let n = 128_256;
    let plain_empty = |s: &TokenSet| s.as_words().iter().all(|&w| w == 0);
    let plain_subset = |a: &TokenSet, b: &TokenSet| {
        a.as_words().iter().zip(b.as_words()).all(|(x, y)| x & !y == 0)
    };
    assert!(TokenSet::new(n).is_empty() && TokenSet::new(0).is_empty());
    let full = TokenSet::full(n);
    let edges = [0, 31, 32, 8191, 8192, 8193, 8192 * 7 - 1, 8192 * 7, n - 33, n - 1];
    for &t in &edges {
        let one = TokenSet::from_ids(n, [TokenId(t as u32)]).unwrap();
        assert!(!one.is_empty() && !plain_empty(&one), "token {t}");
        assert!(one.is_subset(&full) && plain_subset(&one, &full));
        let mut others = full.clone();
        others.remove(TokenId(t as u32));
        assert!(!one.is_subset(&others) && !plain_subset(&one, &others), "token {t}");
        assert!(others.is_subset(&full) && !full.is_subset(&others), "token {t}");
        assert!(TokenSet::new(n).is_subset(&one));
    }
}

#[test]
fn padding_adds_holes() {
    let mut vocab = vocab_of(&[b"a".to_vec()], &["</s>"]);
    vocab.pad_to(64).unwrap();
    assert_eq!(vocab.len(), 64);
    assert!(vocab.pad_to(10).is_err());
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    assert_eq!(walk(&trie, AcceptAll::default(), &[]).count(), 1);
}

/// Split walks that accept everything, on a large vocabulary (kept as a set: its buffer
/// spills) and then on small ones (the thread's buffer is longer than they need): each
/// gives the accept-all walk's mask.
#[test]
fn split_walks_of_large_and_small_vocabularies() {
    let large: Vec<Vec<u8>> = (0..3000u32).map(|i| format!("t{i}").into_bytes()).collect();
    let small: Vec<Vec<u8>> = [&b"a"[..], b"ab", b"b", b"abc"].iter().map(|t| t.to_vec()).collect();
    for tokens in [&large, &small, &large[..40].to_vec(), &small] {
        let vocab = vocab_of(tokens, &["</s>"]);
        let trie = TokTrie::from_vocab(&vocab).unwrap();
        let split = trie.split_walk(0, |_, _| Some(Some(0)));
        assert!(split.frontier().is_empty());
        let mut mask = TokenSet::new(trie.vocab_size());
        split.add_allowed(&mut mask);
        trie.add_duplicates(&mut mask);
        assert_eq!(mask, walk(&trie, AcceptAll::default(), &[]), "{} tokens", tokens.len());
    }
}

/// Two starts that enter the first level's `a` in the same state: the second walk takes the
/// first's piece there (and only there: `b` leads elsewhere), and equals its own plain walk.
#[test]
fn a_walk_takes_the_piece_of_an_earlier_start() {
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    for x in b"abc" {
        for y in b"abcd" {
            tokens.push(vec![b'a', *x, *y]);
            tokens.push(vec![b'b', *x, *y]);
        }
        tokens.push(vec![b'a', *x]);
        tokens.push(vec![b'b', *x]);
    }
    let vocab = vocab_sized(&tokens, &["</s>"], 4096);
    let trie = TokTrie::from_vocab(&vocab).unwrap();
    // States 1 and 2 go to 3 on `a`, to 4 and 5 on `b`; 3 loops on `a`-`c`, rejects `d`; 4
    // and 5 take anything, `c` from 4 left undecided.
    let step = |s: u32, b: u8| match (s, b) {
        (1 | 2, b'a') => Some(Some(3)),
        (1, b'b') => Some(Some(4)),
        (2, b'b') => Some(Some(5)),
        (3, b'a'..=b'c') => Some(Some(3)),
        (4, b'c') => None,
        (4 | 5, _) => Some(Some(s)),
        _ => Some(None),
    };
    let first = trie.split_walk(1, step);
    assert!(first.pieces().any(|(node, state, _)| state == 3 && node == 1));
    let mut taken = Vec::new();
    let second = trie.split_walk_reusing(2, step, |node, state| {
        taken.push((node, state));
        let (_, _, index) = first.pieces().find(|&(p, s, _)| (p, s) == (node, state))?;
        Some(toktrie::PieceRef { walk: &first, index })
    });
    // Looked up at both first-level nodes (16 nodes each), found at `a`.
    assert_eq!(taken, vec![(1, 3), (17, 5)]);
    assert!(second.pieces().any(|(node, state, _)| (node, state) == (1, 3)));
    assert_eq!(format!("{second:?}"), format!("{:?}", trie.split_walk(2, step)));
    assert!(second.rejected_any());
}
