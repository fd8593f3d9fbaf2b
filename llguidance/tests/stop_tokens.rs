//! A request's own stop set (XGrammar's `override_stop_tokens`, vLLM's `stop_token_ids`):
//! every id in it is masked until the grammar accepts and allowed once it does; consuming
//! any of them stops the matcher; the vocabulary's other EOS ids become ordinary special
//! tokens; without a stop set nothing changes. On a byte vocabulary with Llama 3's and
//! Gemma's end tokens as specials.

use llguidance::{ErrorKind, GrammarSource, ParserFactory, StopReason, TokenId, Tokenizer};
use toktrie::VocabBuilder;

const EOT: TokenId = TokenId(256); // <|eot_id|>: the vocabulary's EOS
const END: TokenId = TokenId(257); // <|end_of_text|>
const EOM: TokenId = TokenId(258); // <|eom_id|>
const TURN: TokenId = TokenId(259); // <end_of_turn>

fn factory() -> ParserFactory {
    let mut b = VocabBuilder::new();
    b.name("bytes+ends");
    for i in 0..=255u8 {
        b.token(TokenId(i as u32), &[i]).unwrap();
    }
    for (i, s) in
        ["<|eot_id|>", "<|end_of_text|>", "<|eom_id|>", "<end_of_turn>"].iter().enumerate()
    {
        b.special(TokenId(256 + i as u32), s).unwrap();
    }
    b.eos(EOT);
    ParserFactory::new(Tokenizer::from_vocab(b.build().unwrap())).unwrap()
}

fn bytes(s: &str) -> Vec<TokenId> {
    s.bytes().map(|b| TokenId(b as u32)).collect()
}

#[test]
fn a_stop_set_is_masked_until_the_grammar_accepts() {
    let f = factory();
    let src =
        GrammarSource::JsonSchema(r#"{"type": "array", "items": {"type": "integer"}}"#.into());
    let stops = [END, EOM, TURN];
    for stop in stops {
        let mut m = f.create_matcher(&src).unwrap().with_stop_tokens(&stops).unwrap();
        assert_eq!(m.eos(), &stops);
        let mask = m.compute_mask().unwrap();
        assert!(stops.iter().all(|&t| !mask.contains(t)), "not accepting yet");
        assert!(!mask.contains(EOT), "the vocabulary's EOS is not in the stop set");
        m.consume_tokens(&bytes("[1,2")).unwrap();
        let mask = m.compute_mask().unwrap();
        assert!(stops.iter().all(|&t| !mask.contains(t)));
        assert!(m.consume_token(stop).is_err(), "a stop before the grammar accepts");
        let mut m = f.create_matcher(&src).unwrap().with_stop_tokens(&stops).unwrap();
        m.consume_tokens(&bytes("[1,2]")).unwrap();
        let mask = m.compute_mask().unwrap();
        assert!(stops.iter().all(|&t| mask.contains(t)), "every stop id once it accepts");
        assert!(!mask.contains(EOT));
        assert!(m.consume_token(EOT).is_err(), "EOS outside the stop set is not a stop");
        let mut m = f.create_matcher(&src).unwrap().with_stop_tokens(&stops).unwrap();
        m.consume_tokens(&bytes("[1,2]")).unwrap();
        m.consume_token(stop).unwrap();
        assert_eq!(m.stop_reason(), StopReason::EndOfSequence);
        assert!(m.is_stopped());
        // After the stop: only the stop set; a rollback un-stops.
        let mask = m.compute_mask().unwrap();
        assert_eq!(mask.iter().collect::<Vec<_>>(), stops.to_vec());
        m.rollback(1).unwrap();
        assert_eq!(m.stop_reason(), StopReason::NotStopped);
    }
    // Without a stop set: the vocabulary's EOS, as before; the others are not stops.
    let mut m = f.create_matcher(&src).unwrap();
    m.consume_tokens(&bytes("[1]")).unwrap();
    let mask = m.compute_mask().unwrap();
    assert!(mask.contains(EOT) && !mask.contains(END) && !mask.contains(EOM));
    // A matcher of the same grammar after one with a stop set: the shared first-row masks
    // were not touched by it.
    let mut m = f.create_matcher(&src).unwrap();
    assert!(!m.compute_mask().unwrap().contains(END));
}

#[test]
fn a_bad_stop_set_is_a_clear_error() {
    let f = factory();
    let src = GrammarSource::Lark("start: \"a\"".into());
    let e = f.create_matcher(&src).unwrap().with_stop_tokens(&[TokenId(97)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(e.to_string().contains("not a special token"), "{e}");
    assert!(f.create_matcher(&src).unwrap().with_stop_tokens(&[]).is_err());
    let mut m = f.create_matcher(&src).unwrap();
    m.consume_token(TokenId(97)).unwrap();
    assert!(m.with_stop_tokens(&[END]).is_err(), "after the first token");
}
