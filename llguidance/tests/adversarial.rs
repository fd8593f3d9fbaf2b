//! Adversarial inputs: each must end in the expected outcome (a clear error or a working
//! matcher), never a panic or a hang. The corpus is tests/data/adversarial.txt;
//! times are printed, never asserted (`cargo bench -p llguidance --bench adversarial`).

mod common;

use common::adversarial;
use llguidance::{GrammarSource, ParserFactory, TokenId};

#[test]
fn adversarial_corpus() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let cases = adversarial::cases();
    assert!(cases.len() >= 30, "the corpus has {} cases", cases.len());
    let mut failed = Vec::new();
    for case in &cases {
        let (took, outcome) = adversarial::run(&f, case);
        println!("{:<50} {:>9.1} ms", case.name, took.as_secs_f64() * 1e3);
        if let Err(e) = outcome {
            failed.push(format!("{}: {e}", case.name));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn token_level_abuse() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let src = GrammarSource::Lark("start: \"ab\"\n".into());
    // Token ids out of range: an error, never a panic.
    let mut m = f.create_matcher(&src).unwrap();
    assert!(m.consume_token(TokenId(1_000_000)).is_err());
    assert!(m.compute_mask().is_err(), "the error is sticky");
    // EOS at every position: allowed only at the end.
    for k in 0..=2 {
        let mut m = f.create_matcher(&src).unwrap();
        for &b in &b"ab"[..k] {
            m.consume_token(TokenId(b as u32)).unwrap();
        }
        let ok = m.consume_token(TokenId(256)).is_ok();
        assert_eq!(ok, k == 2, "EOS after {k} bytes");
    }
    // Consuming after the stop: only EOS again.
    let mut m = f.create_matcher(&src).unwrap();
    for t in [b'a' as u32, b'b' as u32, 256] {
        m.consume_token(TokenId(t)).unwrap();
    }
    assert!(m.is_stopped());
    assert_eq!(m.compute_mask().unwrap().iter().collect::<Vec<_>>(), vec![TokenId(256)]);
    assert!(m.consume_token(TokenId(b'a' as u32)).is_err());
}

/// A schema nested 200 deep inside LLGuidance's top-level grammar JSON (what the Python
/// `LLMatcher.grammar_from_json_schema` hands to the matcher): compiled as the bare schema is
/// (parsed past serde_json's 128 levels, on a thread with room), and past 1,000 levels of
/// JSON a clear error.
#[test]
fn deep_schemas_in_top_level_grammar_json() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let nest = |n: usize| {
        let open = r#"{"type":"object","properties":{"a":"#.repeat(n);
        let close = r#"},"required":["a"],"additionalProperties":false}"#.repeat(n);
        format!(r#"{{"grammars":[{{"json_schema":{open}{{"type":"integer"}}{close}}}]}}"#)
    };
    let mut m = f.create_matcher(&GrammarSource::LlGuidance(nest(200))).unwrap();
    let inst = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
    for b in inst.bytes() {
        m.consume_token(TokenId(b as u32)).unwrap();
    }
    assert!(m.is_accepting().unwrap());
    let e = f.create_matcher(&GrammarSource::LlGuidance(nest(600))).unwrap_err();
    assert!(e.to_string().contains("levels deep, more than 1000"), "{e}");
}

/// An object of 10,000 optional properties: each row inside it predicts every key still to
/// come (~30,000 Earley items, past the parser's default 20,000 per row); the schema asks
/// for rows that wide (`GrammarOptions::row_items`) and decodes. Past the ceiling
/// (`grammars::compile::MAX_ROW_ITEMS`, ~33,000 keys) the row limit is a clear error.
#[test]
fn an_object_of_ten_thousand_optional_properties_decodes() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let schema = |n: usize| {
        let props: Vec<String> =
            (0..n).map(|i| format!("\"p{i}\":{{\"type\":\"integer\"}}")).collect();
        GrammarSource::JsonSchema(format!(
            "{{\"type\":\"object\",\"properties\":{{{}}}}}",
            props.join(",")
        ))
    };
    let mut m = f.create_matcher(&schema(10_000)).unwrap();
    for &b in br#"{"p5":1,"p9999":2}"# {
        let mask = m.compute_mask().unwrap();
        assert!(mask.contains(TokenId(u32::from(b))), "byte {:?} refused", b as char);
        m.consume_token(TokenId(u32::from(b))).unwrap();
    }
    assert!(m.is_accepting().unwrap());
    let mut m = f.create_matcher(&schema(40_000)).unwrap();
    let e = m.consume_token(TokenId(u32::from(b'{'))).and_then(|_| m.compute_mask().map(|_| ()));
    let msg = e.expect_err("40,000 optional keys exceed the row ceiling").to_string();
    assert!(msg.contains("items per row"), "{msg}");
}
