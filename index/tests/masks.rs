//! The index's masks equal the brute-force reference at every step of sample token paths.

mod common;

use common::{check_paths, Reference};
use index::{Config, Index, TokenId, Vocabulary};
use proptest::prelude::*;
use toktrie::VocabBuilder;

fn check(regex: &str, vocab: &Vocabulary, seed: u64) {
    let reference = Reference::new(regex);
    for config in [Config::new(), Config::new().literals(false).parallel(false).minimize(false)] {
        let index = Index::with_config(regex, vocab, &config).unwrap();
        check_paths(&index, &reference, vocab, seed, 8, 30, &[]);
    }
}

/// A vocabulary with every single byte of a small alphabet plus multi-byte tokens,
/// including partial UTF-8 sequences, a 0xFF-bearing regular token, duplicates and a
/// special token.
fn small_vocab() -> Vocabulary {
    let mut b = VocabBuilder::new();
    let mut id = 0u32;
    let mut add = |b: &mut VocabBuilder, bytes: &[u8]| {
        b.token(TokenId(id), bytes).unwrap();
        id += 1;
    };
    for c in b"abcxyz0123456789.-@/:\"{} ,".iter() {
        add(&mut b, &[*c]);
    }
    for t in [
        &b"ab"[..],
        b"abc",
        b"ba",
        b"cab",
        b"xy",
        b"00",
        b"12",
        b"123",
        b"1.",
        b".1",
        b"a@",
        b"@x",
        b"\"a",
        b"a\"",
        b"\":",
        b"{\"",
        b"\"}",
        b", \"",
        b"http",
        b"://",
        b"ab",
        "é".as_bytes(),
        &"é".as_bytes()[..1],
        &"é".as_bytes()[1..],
        "日本".as_bytes(),
        &"日".as_bytes()[..2],
        b"\xFFab",
        b"zzzzzzzz",
        b"abcabcabc",
    ] {
        add(&mut b, t);
    }
    b.special(TokenId(id), "<|end|>").unwrap();
    b.eos(TokenId(id));
    b.special(TokenId(id + 1), "<|other|>").unwrap();
    b.build().unwrap()
}

#[test]
fn byte_vocab_suite() {
    let vocab = Vocabulary::bytes();
    for (i, re) in [
        r"[a-z]{1,5}",
        r"(ab|abc)*c?",
        r"a|ab",
        r"\d{1,3}(\.\d{1,3}){3}",
        r".{0,3}x",
        r"[^a]{2}é",
        r"",
        r"(?i)abc|x+",
        r#"\{"name": "[a-z]*", "id": [0-9]+\}"#,
    ]
    .iter()
    .enumerate()
    {
        check(re, &vocab, i as u64 + 1);
    }
}

#[test]
fn small_vocab_suite() {
    let vocab = small_vocab();
    for (i, re) in [
        r"[a-c]+@[x-z]+\.[a-z]{2,3}",
        r"(https?://)?[a-z0-9.-]+\.[a-z]{2,6}(/[a-z0-9 .-]*)*/?",
        r#"\{"abc": [0-9]{1,3}, "xy": "[a-z]*"\}"#,
        r"é+|日本",
        r".*",
        r"a{3,}b{0,2}",
        r"(abc){2,3}",
        r"[0-9]+(\.[0-9]+)?",
    ]
    .iter()
    .enumerate()
    {
        check(re, &vocab, i as u64 + 11);
    }
}

/// Random regexes over a small alphabet.
fn regex_strategy() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "[abc01.]".prop_map(|s| regex_syntax_escape(&s)),
        Just("[a-c]".to_string()),
        Just("[0-9]".to_string()),
        Just(".".to_string()),
        Just("é".to_string()),
        Just("[^a]".to_string()),
        "[abc]{2,4}".prop_map(|s| s),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..3).prop_map(|v| format!("({})", v.join("|"))),
            inner.clone().prop_map(|r| format!("({r})*")),
            inner.clone().prop_map(|r| format!("({r})?")),
            (inner, 0u32..3, 0u32..3).prop_map(|(r, a, b)| format!("({r}){{{a},{}}}", a + b)),
        ]
    })
}

fn regex_syntax_escape(s: &str) -> String {
    s.chars().map(|c| if c == '.' { "\\.".to_string() } else { c.to_string() }).collect()
}

fn vocab_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let byte = prop_oneof![
        prop::sample::select(b"abc01.".to_vec()),
        prop::sample::select("é".as_bytes().to_vec()),
        Just(0xFFu8),
    ];
    prop::collection::vec(prop::collection::vec(byte, 1..5), 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_regex_and_vocab(re in regex_strategy(), extra in vocab_strategy(), with_bytes in any::<bool>(), seed in any::<u64>()) {
        let mut b = VocabBuilder::new();
        let mut id = 0u32;
        if with_bytes {
            for c in b"abc01.".iter().chain("é".as_bytes()) {
                b.token(TokenId(id), &[*c]).unwrap();
                id += 1;
            }
        }
        for t in &extra {
            b.token(TokenId(id), t).unwrap();
            id += 1;
        }
        b.special(TokenId(id), "</s>").unwrap();
        let vocab = b.build().unwrap();
        let reference = Reference::new(&re);
        match Index::new(&re, &vocab) {
            Ok(index) => check_paths(&index, &reference, &vocab, seed, 4, 12, &[]),
            Err(e) => {
                prop_assert_eq!(e.kind(), index::ErrorKind::EmptyLanguage, "{}", e);
                prop_assert!(!reference.is_live(reference.start()));
            }
        }
    }
}

/// Where outlines-core 0.2.14 differs from the mask semantics (found by index-bench): these
/// continuations are valid and must stay allowed.
#[test]
fn continuations_outlines_core_refuses() {
    let vocab = Vocabulary::bytes();
    let cases: &[(&str, &[u8], &[u8])] = &[
        (r"([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?", b"12:34", b":"),
        (
            r"[a-z0-9]+@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?",
            b"a@b.c",
            b"-.",
        ),
        (r"[\w ]*", b"ab", &[0xC3, 0xC2]),
        (r"\d+", "۱".as_bytes(), &[0xDB]),
    ];
    for (regex, prefix, next) in cases {
        let index = Index::new(regex, &vocab).unwrap();
        let reference = Reference::new(regex);
        let mut s = index.initial_state();
        for &b in *prefix {
            s = index.next_state(s, TokenId(b as u32)).unwrap();
        }
        let r = reference.run(reference.start(), prefix);
        for &b in *next {
            assert!(index.is_allowed(s, TokenId(b as u32)), "{regex}: {b:#x} after {prefix:?}");
            assert!(reference.is_live(reference.run(r, &[b])));
        }
    }
}
