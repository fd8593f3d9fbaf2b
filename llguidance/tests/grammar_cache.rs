//! The factory's compiled grammars by source text (`llguidance::grammar_cache`): a grammar
//! given again is the one kept, bounded, keyed by kind and exact text, errors not kept, and
//! a matcher of a kept grammar computes the masks a fresh compile's would.

use std::sync::Arc;

use llguidance::{GrammarSource, ParserFactory};

fn factory() -> ParserFactory {
    ParserFactory::from_tokenizer_name("bytes").unwrap()
}

fn schema(n: usize) -> GrammarSource {
    GrammarSource::JsonSchema(format!(
        r#"{{"type":"object","properties":{{"k{n}":{{"type":"integer"}}}},"required":["k{n}"]}}"#
    ))
}

#[test]
fn a_grammar_given_again_is_the_one_kept() {
    let f = factory();
    let a = f.compile(&schema(1)).unwrap();
    let b = f.compile(&schema(2)).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
    assert!(Arc::ptr_eq(&a, &f.compile(&schema(1)).unwrap()));
    assert_eq!(f.cached_grammars(), 2);
    // The same text as another kind is another grammar.
    let t = "start: \"x\"".to_string();
    let lark = f.compile(&GrammarSource::Lark(t.clone())).unwrap();
    let llg = f.compile(&GrammarSource::LlGuidance(t)).unwrap();
    assert!(!Arc::ptr_eq(&lark, &llg));
    // A text that differs by one byte is another grammar.
    let GrammarSource::JsonSchema(s) = schema(1) else { unreachable!() };
    let spaced = f.compile(&GrammarSource::JsonSchema(format!("{s} "))).unwrap();
    assert!(!Arc::ptr_eq(&a, &spaced));
}

#[test]
fn the_least_recently_used_grammar_makes_room() {
    let f = factory().with_grammar_cache(2);
    let a = f.compile(&schema(1)).unwrap();
    let b = f.compile(&schema(2)).unwrap();
    // `a` used again: `b` is now the least recently used.
    assert!(Arc::ptr_eq(&a, &f.compile(&schema(1)).unwrap()));
    f.compile(&schema(3)).unwrap();
    assert_eq!(f.cached_grammars(), 2);
    assert!(Arc::ptr_eq(&a, &f.compile(&schema(1)).unwrap()));
    assert!(!Arc::ptr_eq(&b, &f.compile(&schema(2)).unwrap()));
}

#[test]
fn capacity_zero_compiles_every_time_and_the_oracle_keeps_none() {
    for f in [factory().with_grammar_cache(0), factory().plain()] {
        let a = f.compile(&schema(1)).unwrap();
        assert!(!Arc::ptr_eq(&a, &f.compile(&schema(1)).unwrap()));
        assert_eq!(f.cached_grammars(), 0);
    }
}

#[test]
fn errors_are_not_kept_and_llguidance_strings_keep_max_tokens() {
    let f = factory();
    let bad = GrammarSource::JsonSchema(r#"{"type":"strin"}"#.to_string());
    assert!(f.compile(&bad).is_err());
    assert!(f.create_matcher(&bad).is_err());
    assert_eq!(f.cached_grammars(), 0);
    // LLGuidance's grammar JSON: its `max_tokens` comes back with the kept grammar, and
    // `compile` (which has no `max_tokens`) keeps its grammar apart.
    let text = r#"{"grammars":[{"lark_grammar":"start: /[a-z]+/"}],"max_tokens":3}"#;
    let src = GrammarSource::LlGuidance(text.to_string());
    f.compile(&src).unwrap();
    for _ in 0..2 {
        let (g, max_tokens, _) = f.compile_llguidance(text).unwrap();
        assert_eq!(max_tokens, Some(3));
        let mut m = f.matcher_for(g).unwrap();
        m.set_max_tokens(max_tokens);
        for _ in 0..3 {
            let t = m.compute_mask().unwrap().iter().find(|&t| t.0 == u32::from(b'a')).unwrap();
            m.consume_token(t).unwrap();
        }
        assert!(m.is_stopped(), "max_tokens 3 stops the matcher after 3 tokens");
    }
}

/// A matcher of a kept grammar starts from the lexer its earlier matchers left: its masks
/// along an instance equal those of a matcher of a fresh compile (no cache).
#[test]
fn a_kept_grammar_s_matchers_compute_the_same_masks() {
    let f = factory();
    let fresh = f.with_grammar_cache(0);
    let src = GrammarSource::JsonSchema(
        r#"{"type":"object","properties":{"name":{"type":"string","maxLength":20},
            "tags":{"type":"array","items":{"enum":["a","bb","ccc"]}}},"required":["name"]}"#
            .to_string(),
    );
    let text = br#"{"name":"xyz","tags":["a","ccc"]}"#;
    for round in 0..3 {
        let mut kept = f.create_matcher(&src).unwrap();
        let mut plain = fresh.create_matcher(&src).unwrap();
        for &b in text {
            let (x, y) = (kept.compute_mask().unwrap(), plain.compute_mask().unwrap());
            assert_eq!(x, y, "round {round}, before byte {:?}", b as char);
            kept.consume_token(llguidance::TokenId(u32::from(b))).unwrap();
            plain.consume_token(llguidance::TokenId(u32::from(b))).unwrap();
        }
        assert_eq!(kept.compute_mask().unwrap(), plain.compute_mask().unwrap());
    }
    assert_eq!(f.cached_grammars(), 1);
}
