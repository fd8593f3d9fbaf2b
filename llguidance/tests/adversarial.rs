//! Adversarial inputs: each must end in the expected outcome (a clear error or a working
//! matcher), never a panic or a hang. Times are printed, never asserted (see
//! `cargo test -p llguidance --test adversarial -- --nocapture`).

use std::time::Instant;

use llguidance::{GrammarSource, ParserFactory, TokenId};

enum Expect {
    /// Compiles, accepts this input (bytes vocabulary), rejects the second.
    Works(&'static str, &'static str),
    /// Compilation fails with an error containing this text.
    Error(&'static str),
    /// Either outcome is fine (e.g. a limit may or may not be reached), but no panic.
    NoPanic,
}

fn nested_lark(depth: usize) -> String {
    format!("start: {}\"a\"{}\n", "(".repeat(depth), ")".repeat(depth))
}

fn nested_schema(depth: usize) -> String {
    let mut s = String::from(r#"{"type":"integer"}"#);
    for _ in 0..depth {
        s = format!(r#"{{"type":"object","properties":{{"a":{s}}},"required":["a"]}}"#);
    }
    s
}

fn cases() -> Vec<(&'static str, GrammarSource, Expect)> {
    let big_enum: Vec<String> = (0..100_000).map(|i| format!("\"s{i}\"")).collect();
    let alts: Vec<String> = (0..10_000).map(|i| format!("\"k{i}\"")).collect();
    vec![
        ("regex blowup (a|b)*a(a|b){30}", GrammarSource::Regex("(a|b)*a(a|b){30}".into()),
            Expect::Works("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "b")),
        ("regex (x+x+)+y", GrammarSource::Regex("(x+x+)+y".into()), Expect::Works("xxxxy", "xy")),
        ("huge counted repeat in a regex", GrammarSource::Regex("a{1000000}".into()), Expect::NoPanic),
        ("huge counted repeat on a rule", GrammarSource::Lark("start: \"a\"{100000000}".into()),
            Expect::Error("above the limit")),
        ("Lark nested 10k levels", GrammarSource::Lark(nested_lark(10_000)), Expect::Error("nesting deeper")),
        ("JSON Schema nested 10k levels", GrammarSource::JsonSchema(nested_schema(10_000)), Expect::NoPanic),
        ("JSON Schema nested 100 levels", GrammarSource::JsonSchema(nested_schema(100)), Expect::NoPanic),
        ("enum of 100k strings", GrammarSource::JsonSchema(format!("{{\"enum\":[{}]}}", big_enum.join(","))),
            Expect::Works("\"s99999\"", "\"s100000\"")),
        ("rule with 10k alternatives", GrammarSource::Lark(format!("start: {}\n", alts.join(" | "))),
            Expect::Works("k9999", "k10000")),
        ("self-referential $ref", GrammarSource::JsonSchema(r##"{"$ref":"#"}"##.into()), Expect::NoPanic),
        ("$ref cycle without a base case",
            GrammarSource::JsonSchema(r##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}"##.into()),
            Expect::NoPanic),
        ("recursive terminal", GrammarSource::Lark("start: A\nA: \"a\" A | \"b\"\n".into()), Expect::Error("recursive")),
        ("unproductive grammar", GrammarSource::Lark("start: start \"a\"\n".into()), Expect::Error("derives no finite string")),
        ("invalid UTF-8 in a regex lexeme", GrammarSource::Lark("start: /\\xff/\n".into()), Expect::NoPanic),
        ("empty grammar", GrammarSource::Lark(String::new()), Expect::Error("no start rule")),
        ("empty regex", GrammarSource::Regex(String::new()), Expect::NoPanic),
        ("JSON Schema that is not JSON", GrammarSource::JsonSchema("{".into()), Expect::Error("not valid JSON")),
        ("IR that is not JSON", GrammarSource::Ir("[".into()), Expect::Error("bad grammar IR")),
        ("GBNF left recursion", GrammarSource::Gbnf("root ::= root \"a\" | \"b\"\n".into()), Expect::Works("baaa", "a")),
    ]
}

#[test]
fn adversarial_corpus() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    for (name, src, expect) in cases() {
        let t0 = Instant::now();
        let r = f.create_matcher(&src);
        let took = t0.elapsed();
        match (&expect, r) {
            (Expect::Error(want), Err(e)) => {
                assert!(e.to_string().contains(want), "{name}: error {e} does not contain {want:?}")
            }
            (Expect::Error(want), Ok(_)) => {
                panic!("{name}: compiled, expected an error containing {want:?}")
            }
            (Expect::Works(..), Err(e)) => panic!("{name}: {e}"),
            (Expect::Works(good, bad), Ok(m)) => {
                let run = |text: &str| {
                    let mut m = m.deep_clone();
                    text.bytes().all(|b| m.consume_token(TokenId(b as u32)).is_ok())
                        && m.is_accepting().unwrap_or(false)
                };
                assert!(run(good), "{name}: should accept {good:?}");
                assert!(!run(bad), "{name}: should reject {bad:?}");
            }
            (Expect::NoPanic, r) => {
                if let Ok(mut m) = r {
                    // Drive it a little: masks and a few allowed tokens.
                    for _ in 0..5 {
                        let Ok(mask) = m.compute_mask() else { break };
                        let Some(t) = mask.first() else { break };
                        if m.consume_token(t).is_err() {
                            break;
                        }
                    }
                }
            }
        }
        println!("{name:<40} {:>9.1} ms", took.as_secs_f64() * 1e3);
    }
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
