//! The token-DFA engine (index crate) and the lazy Earley engine give the same masks at
//! every step, for plain regexes, on the byte vocabulary and on o200k.

use llguidance::{Engine, GrammarSource, Matcher, ParserFactory, TokenId};

const REGEXES: &[(&str, &[&str])] = &[
    (r"[a-z]+@[a-z]+\.(com|org)", &["bob@example.com", "x@y.org"]),
    (r"(https?://)?([\da-z\.-]+)\.([a-z\.]{2,6})([/\w \.-]*)*/?", &["https://github.com/x/y.z"]),
    (r"\d{4}-\d{2}-\d{2}", &["2026-11-22"]),
    (r#"\{"name": "[A-Za-z ]{1,20}", "age": \d{1,3}\}"#, &[r#"{"name": "Ada L", "age": 36}"#]),
    (r"(yes|no|maybe)", &["maybe"]),
    (r"(a|b)*a(a|b){3}", &["aaaaa", "babbb"]),
    (r"[a-z]{1,50}", &["supercalifragilistic"]),
    (r"-?(0|[1-9]\d*)(\.\d+)?", &["-12.5", "0"]),
];

fn check(f: &ParserFactory, rx: &str, text: &str) {
    let src = GrammarSource::Regex(rx.to_string());
    let mut dfa = f.with_engine(Engine::TokenDfa).create_matcher(&src).expect("token DFA builds");
    let mut ear = f.with_engine(Engine::Earley).create_matcher(&src).expect("Earley builds");
    assert_eq!(dfa.engine(), Engine::TokenDfa);
    assert_eq!(ear.engine(), Engine::Earley);
    let toks = f.tokenizer().tokenize(text).expect("tokenizes");
    let mut seed = 0x9E3779B97F4A7C15u64;
    for (i, &t) in toks.iter().enumerate() {
        let (a, b) = (dfa.compute_mask().unwrap(), ear.compute_mask().unwrap());
        assert_eq!(a, b, "{rx:?} on {text:?}: masks differ at step {i}");
        assert!(a.contains(t), "{rx:?}: token {i} of {text:?} not allowed");
        // Also a random allowed token, on clones, one step deep.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = a.count();
        let r = a.iter().nth((seed % n as u64) as usize).unwrap();
        let (mut da, mut eb) = (dfa.deep_clone(), ear.deep_clone());
        da.consume_token(r).unwrap();
        eb.consume_token(r).unwrap();
        assert_eq!(
            da.compute_mask().unwrap(),
            eb.compute_mask().unwrap(),
            "{rx:?}: after random token"
        );
        dfa.consume_token(t).unwrap();
        ear.consume_token(t).unwrap();
    }
    assert!(dfa.is_accepting().unwrap() && ear.is_accepting().unwrap(), "{rx:?} on {text:?}");
    assert_eq!(dfa.compute_mask().unwrap(), ear.compute_mask().unwrap());
    // Rollback, then the same masks again.
    dfa.rollback(toks.len()).unwrap();
    ear.rollback(toks.len()).unwrap();
    assert_eq!(dfa.compute_mask().unwrap(), ear.compute_mask().unwrap());
}

fn run(f: &ParserFactory) {
    for (rx, texts) in REGEXES {
        for t in *texts {
            check(f, rx, t);
        }
    }
}

#[test]
fn token_dfa_equals_earley_on_bytes() {
    run(&ParserFactory::from_tokenizer_name("bytes").unwrap());
}

#[test]
fn token_dfa_equals_earley_on_o200k() {
    run(&ParserFactory::from_tokenizer_name("o200k").unwrap());
}

#[test]
fn auto_picks_the_token_dfa_for_regexes_and_earley_otherwise() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let m: Matcher = f.create_matcher(&GrammarSource::Regex("[0-9]+".into())).unwrap();
    assert_eq!(m.engine(), Engine::TokenDfa);
    let m = f.create_matcher(&GrammarSource::Lark("start: /[0-9]+/".into())).unwrap();
    assert_eq!(m.engine(), Engine::Earley);
    let err =
        f.with_engine(Engine::TokenDfa).create_matcher(&GrammarSource::Lark("start: \"a\"".into()));
    assert!(err.is_err());
    // EOS is allowed exactly when the regex matched.
    let mut m = f.create_matcher(&GrammarSource::Regex("ab".into())).unwrap();
    m.consume_token(TokenId(b'a' as u32)).unwrap();
    assert!(!m.compute_mask().unwrap().contains(TokenId(256)));
    m.consume_token(TokenId(b'b' as u32)).unwrap();
    assert!(m.compute_mask().unwrap().contains(TokenId(256)));
}
