//! The public API: guide, EOS handling, serialization, budgets and errors.

use std::sync::Arc;

use index::{Budget, Config, ErrorKind, Guide, Index, StateId, TokenId, Vocabulary};
use toktrie::VocabBuilder;

fn t(b: u8) -> TokenId {
    TokenId(b as u32)
}

#[test]
fn guide_advance_rollback_and_finish() {
    let vocab = Vocabulary::bytes();
    let index = Arc::new(Index::new(r"ab?c", &vocab).unwrap());
    let mut g = Guide::new(index.clone(), 2);
    assert_eq!(g.get_tokens(), vec![t(b'a')]);
    assert!(!g.is_finished());
    let after = g.advance(t(b'a'), true).unwrap().unwrap();
    assert_eq!(after, vec![t(b'b'), t(b'c')]);
    let err = g.advance(t(b'x'), false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidToken);
    assert_eq!(g.advance(t(b'b'), false).unwrap(), None);
    g.advance(t(b'c'), false).unwrap();
    assert!(g.is_finished());
    let eos = vocab.eos_token().unwrap();
    assert_eq!(g.get_tokens(), vec![eos]);
    // EOS loops on a final state.
    let s = g.get_state();
    g.advance(eos, false).unwrap();
    assert_eq!(g.get_state(), s);
    // Only two states are remembered.
    assert_eq!(g.rollback_state(3).unwrap_err().kind(), ErrorKind::Rollback);
    g.rollback_state(2).unwrap();
    assert_eq!(g.get_tokens(), vec![t(b'c')]);
    let mut buf = vec![0u32; 3];
    assert_eq!(g.write_mask_into(&mut buf).unwrap_err().kind(), ErrorKind::BufferTooSmall);
    let mut buf = vec![u32::MAX; 10];
    g.write_mask_into(&mut buf).unwrap();
    assert_eq!(buf[(b'c' / 32) as usize], 1 << (b'c' % 32));
    assert_eq!(buf.iter().map(|w| w.count_ones()).sum::<u32>(), 1);
}

#[test]
fn index_queries() {
    let vocab = Vocabulary::bytes();
    let index = Index::new(r"x*", &vocab).unwrap();
    let s0 = index.initial_state();
    assert!(index.is_final_state(s0));
    assert_eq!(index.final_states(), vec![s0]);
    assert_eq!(index.num_states(), 1);
    assert_eq!(index.next_state(s0, t(b'x')), Some(s0));
    assert_eq!(index.next_state(s0, t(b'y')), None);
    assert_eq!(index.allowed_tokens(s0).unwrap(), vec![t(b'x'), TokenId(256)]);
    assert_eq!(index.num_allowed(s0).unwrap(), 2);
    assert!(index.is_allowed(s0, TokenId(256)));
    assert!(!index.is_allowed(s0, TokenId(9999)));
    assert_eq!(index.allowed_tokens(StateId(7)).unwrap_err().kind(), ErrorKind::InvalidState);
    assert!(index.num_bytes() > 0);
    let stats = index.stats();
    assert_eq!(stats.states, 1);
    assert_eq!(stats.dropped_tokens, 255);
}

#[test]
fn special_tokens_never_match_by_bytes() {
    let mut b = VocabBuilder::new();
    b.token(TokenId(0), b"a").unwrap();
    b.special(TokenId(1), "<|x|>").unwrap();
    b.token(TokenId(2), b"\xFF<|x|>").unwrap();
    b.special(TokenId(3), "</s>").unwrap();
    let vocab = b.build().unwrap();
    // Even a regex over raw bytes cannot match a special token.
    let index = Index::new(r"(?s-u:.)*", &vocab);
    // 0xFF can only be written with utf8 off; our DFA works in UTF-8 mode, so this is a
    // regex error, never a special-token match.
    assert_eq!(index.unwrap_err().kind(), ErrorKind::Regex);
    let index = Index::new(r"a*", &vocab).unwrap();
    assert_eq!(index.allowed_tokens(index.initial_state()).unwrap(), vec![TokenId(0), TokenId(3)]);
}

#[test]
fn serde_round_trip_and_validation() {
    let vocab = Vocabulary::bytes();
    let index = Index::new(r"[a-f]{2,4}@(x|yz)", &vocab).unwrap();
    let json = serde_json::to_string(&index).unwrap();
    let back: Index = serde_json::from_str(&json).unwrap();
    for s in 0..index.num_states() as u32 {
        let s = StateId(s);
        assert_eq!(index.allowed_tokens(s).unwrap(), back.allowed_tokens(s).unwrap());
        for tok in 0..vocab.len() as u32 {
            assert_eq!(index.next_state(s, TokenId(tok)), back.next_state(s, TokenId(tok)));
        }
    }
    // A corrupted table is an error, not a panic later.
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["row_next"][0] = serde_json::json!(100_000);
    let err = serde_json::from_value::<Index>(v).unwrap_err();
    assert!(err.to_string().contains("invalid index"), "{err}");
}

#[test]
fn budgets_are_typed_errors() {
    let vocab = Vocabulary::bytes();
    let err =
        Index::with_config(r"[a-z]{1,50}", &vocab, &Config::new().max_states(10)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OverBudget(Budget::States));
    assert!(err.is_over_budget());
    let err = Index::with_config(r"[a-z]{1,50}", &vocab, &Config::new().max_work(10)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OverBudget(Budget::Work));
    let err =
        Index::with_config(r"\w{50}", &vocab, &Config::new().dfa_size_limit(10_000)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OverBudget(Budget::DfaSize));
    let err = Index::with_config(
        r"a{3}",
        &vocab,
        &Config::new().max_time(Some(std::time::Duration::ZERO)),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OverBudget(Budget::Time));
}

#[test]
fn regex_errors() {
    let vocab = Vocabulary::bytes();
    assert_eq!(Index::new(r"(ab", &vocab).unwrap_err().kind(), ErrorKind::Regex);
    assert_eq!(Index::new(r"a(?-u:\b)b", &vocab).unwrap_err().kind(), ErrorKind::EmptyLanguage);
    // Unicode word boundaries are not supported by the byte DFA.
    assert_eq!(Index::new(r"a\b", &vocab).unwrap_err().kind(), ErrorKind::Regex);
    assert_eq!(Index::new(r"[^\s\S]", &vocab).unwrap_err().kind(), ErrorKind::EmptyLanguage);
}
