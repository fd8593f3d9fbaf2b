//! Properties of the Matcher API across crate boundaries: validate == step-by-step masks,
//! rollback then recompute == fresh masks, ff tokens == canonical tokenization, sticky
//! errors, one factory shared by threads, batch masks == individual masks.

use std::sync::{Arc, OnceLock};

use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId, TokenSet, Tokenizer};
use proptest::prelude::*;
use toktrie::VocabBuilder;

/// Small grammars exercising literals, alternatives sharing prefixes, recursion, `%ignore`,
/// and lexemes spanning token boundaries.
const GRAMMARS: &[&str] = &[
    r#"start: "{" pair ("," pair)* "}"
pair: KEY ":" value
value: NUM | "true" | "false" | "null" | start
KEY: /"[a-c]{1,3}"/
NUM: /-?[0-9]{1,4}/"#,
    r#"start: ("ab" | "abc")+ "c"?"#,
    r#"start: /a[bc]*d/ | "x" start "y""#,
    r#"start: WORD ("," WORD)*
WORD: /[a-z]+/
%ignore /[ \t]+/"#,
    r#"start: "true" | "false" | "null" | ITEMS
ITEMS: /\[(1|12|123)(, ?(1|12|123))*\]/"#,
];

/// The vocabulary of the custom tokenizer: all single bytes plus multi-byte tokens that
/// overlap each other and the grammars' literals; EOS is a special token.
const MULTI: &[&str] = &[
    "ab", "abc", "bc", "{\"", "\":", "\",", "12", "123", "true", "fa", "false", "null", ", ", "[1",
    "}", "},", ":{", "xy", "aa", "-1",
];

fn bytes_factory() -> &'static ParserFactory {
    static F: OnceLock<ParserFactory> = OnceLock::new();
    F.get_or_init(|| ParserFactory::from_tokenizer_name("bytes").expect("bytes tokenizer"))
}

fn custom_factory() -> &'static ParserFactory {
    static F: OnceLock<ParserFactory> = OnceLock::new();
    F.get_or_init(|| {
        let mut b = VocabBuilder::new();
        b.name("custom");
        for i in 0..=255u8 {
            b.token(TokenId(i as u32), &[i]).expect("byte token");
        }
        // Multi-byte tokens start at 260, leaving holes at 256 and 258.
        for (i, t) in MULTI.iter().enumerate() {
            b.token(TokenId(260 + i as u32), t.as_bytes()).expect("token");
        }
        b.special(TokenId(257), "<|eos|>").expect("special");
        b.special(TokenId(259), "<|other|>").expect("special");
        b.eos(TokenId(257));
        let vocab = b.build().expect("vocab");
        ParserFactory::new(Tokenizer::from_vocab(vocab)).expect("factory")
    })
}

fn o200k_factory() -> &'static ParserFactory {
    static F: OnceLock<ParserFactory> = OnceLock::new();
    F.get_or_init(|| ParserFactory::from_tokenizer_name("o200k").expect("o200k tokenizer"))
}

fn factories() -> [&'static ParserFactory; 2] {
    [bytes_factory(), custom_factory()]
}

fn lark(f: &ParserFactory, g: &str) -> Matcher {
    f.create_matcher(&GrammarSource::Lark(g.into())).expect("grammar compiles")
}

/// Walks the matcher from its state: at each step, a choice below 0xFC00 picks an allowed
/// token (by index into the mask), a choice above picks any id (usually not allowed).
/// Returns the tokens chosen; stops after the first disallowed one, at an empty mask, or
/// after EOS. The matcher is left where it was.
fn draft(f: &ParserFactory, m: &Matcher, choices: &[u16]) -> Vec<TokenId> {
    let vocab_size = f.trie().vocab_size();
    let mut m = m.deep_clone();
    let eos = f.tokenizer().vocab().eos_tokens();
    let mut out = Vec::new();
    for &c in choices {
        let mask = m.compute_mask().expect("mask");
        let t = if c < 0xFC00 {
            let mut allowed: Vec<TokenId> = mask.iter().collect();
            // EOS ends the walk: pick it rarely when something else is allowed.
            if c % 16 != 0 && allowed.iter().any(|t| !eos.contains(t)) {
                allowed.retain(|t| !eos.contains(t));
            }
            if allowed.is_empty() {
                break;
            }
            allowed[c as usize % allowed.len()]
        } else {
            TokenId((c as usize % vocab_size) as u32)
        };
        out.push(t);
        if !mask.contains(t) || m.consume_token(t).is_err() || m.is_stopped() {
            break;
        }
    }
    out
}

/// The masks before each token of `toks` (and after the last), consuming as it goes.
fn masks_along(m: &mut Matcher, toks: &[TokenId]) -> Vec<TokenSet> {
    let mut masks = Vec::new();
    for &t in toks {
        masks.push(m.compute_mask().expect("mask"));
        m.consume_token(t).expect("allowed token");
    }
    masks.push(m.compute_mask().expect("mask"));
    masks
}

fn case() -> impl Strategy<Value = (usize, usize, Vec<u16>)> {
    (0..2usize, 0..GRAMMARS.len(), prop::collection::vec(any::<u16>(), 0..40))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// validate_tokens returns the number of leading tokens each in the mask of its step,
    /// and leaves the matcher where it was.
    #[test]
    fn validate_agrees_with_masks((fi, gi, choices) in case()) {
        let f = factories()[fi];
        let mut m = lark(f, GRAMMARS[gi]);
        // Start from a random allowed prefix, then validate a draft that may go wrong.
        let prefix: Vec<TokenId> = draft(f, &m, &choices[..choices.len() / 3])
            .into_iter()
            .filter(|t| !f.tokenizer().vocab().eos_tokens().contains(t))
            .collect();
        let n_ok = m.validate_tokens(&prefix).expect("validate");
        m.consume_tokens(&prefix[..n_ok]).expect("valid prefix");
        let toks = draft(f, &m, &choices[choices.len() / 3..]);
        let before = m.compute_mask().expect("mask");

        let mut step = m.deep_clone();
        let mut expected = 0;
        for &t in &toks {
            if !step.compute_mask().expect("mask").contains(t) {
                break;
            }
            step.consume_token(t).expect("a token in the mask is consumed");
            expected += 1;
        }
        prop_assert_eq!(m.validate_tokens(&toks).expect("validate"), expected);
        prop_assert_eq!(m.tokens(), &prefix[..n_ok]);
        prop_assert_eq!(m.compute_mask().expect("mask"), before);
    }

    /// Rolling back r tokens and recomputing gives the masks of a fresh matcher fed the same
    /// tokens, and so does going forward again.
    #[test]
    fn rollback_then_recompute((fi, gi, choices) in case(), r in 0usize..30) {
        let f = factories()[fi];
        let fresh = lark(f, GRAMMARS[gi]);
        let mut toks = draft(f, &fresh, &choices);
        // Keep only the allowed prefix.
        let ok = fresh.deep_clone().validate_tokens(&toks).expect("validate");
        toks.truncate(ok);
        let expected = masks_along(&mut fresh.deep_clone(), &toks);

        let mut m = fresh.deep_clone();
        m.consume_tokens(&toks).expect("allowed");
        let r = r.min(toks.len());
        m.rollback(r).expect("rollback");
        let k = toks.len() - r;
        prop_assert_eq!(m.tokens(), &toks[..k]);
        // Stopped exactly when the last remaining token is EOS.
        let ends_in_eos = k > 0 && f.tokenizer().vocab().eos_tokens().contains(&toks[k - 1]);
        prop_assert_eq!(m.is_stopped(), ends_in_eos);
        let again = masks_along(&mut m, &toks[k..]);
        prop_assert_eq!(&again[..], &expected[k..]);

        // reset is a rollback of everything.
        m.reset().expect("reset");
        prop_assert_eq!(m.compute_mask().expect("mask"), expected[0].clone());
    }

    /// After a disallowed token every later call fails with the same error.
    #[test]
    fn errors_are_sticky((fi, gi, choices) in case(), bad in any::<u16>()) {
        let f = factories()[fi];
        let vs = f.trie().vocab_size();
        let mut m = lark(f, GRAMMARS[gi]);
        let toks = draft(f, &m, &choices);
        let ok = m.validate_tokens(&toks).expect("validate");
        m.consume_tokens(&toks[..ok]).expect("allowed");
        if m.is_stopped() {
            return Ok(());
        }
        let mask = m.compute_mask().expect("mask");
        let Some(bad) = (0..vs).map(|i| TokenId(((i + bad as usize) % vs) as u32))
            .find(|&t| !mask.contains(t)) else { return Ok(()) };
        let allowed = mask.first();
        prop_assert!(m.consume_token(bad).is_err());
        let err = m.error().cloned().expect("sticky error");
        prop_assert!(m.is_stopped());
        prop_assert_eq!(m.stop_reason(), llguidance::StopReason::Error);
        prop_assert_eq!(m.compute_mask().err(), Some(err.clone()));
        if let Some(t) = allowed {
            prop_assert_eq!(m.consume_token(t).err(), Some(err.clone()));
        }
        prop_assert_eq!(m.is_accepting().err(), Some(err.clone()));
        prop_assert_eq!(m.validate_tokens(&toks).err(), Some(err.clone()));
        prop_assert_eq!(m.try_consume_tokens(&toks).err(), Some(err.clone()));
        prop_assert_eq!(m.rollback(0).err(), Some(err.clone()));
        prop_assert_eq!(m.reset().err(), Some(err.clone()));
        prop_assert_eq!(m.compute_ff_bytes().err(), Some(err.clone()));
        prop_assert_eq!(m.compute_ff_tokens().err(), Some(err.clone()));
        let mut out = vec![0u32; vs.div_ceil(32)];
        prop_assert_eq!(m.compute_mask_into(&mut out).err(), Some(err.clone()));
        // A clone keeps the error.
        prop_assert_eq!(m.deep_clone().compute_mask().err(), Some(err));
    }

    /// The batch API gives the same masks as one matcher at a time.
    #[test]
    fn batch_equals_individual(fi in 0..2usize, seeds in prop::collection::vec(
        (0..GRAMMARS.len(), prop::collection::vec(any::<u16>(), 0..12)), 1..8)) {
        let f = factories()[fi];
        let vs = f.trie().vocab_size();
        let words = vs.div_ceil(32);
        let mut ms: Vec<Matcher> = seeds.iter().map(|(gi, choices)| {
            let mut m = lark(f, GRAMMARS[*gi]);
            let toks = draft(f, &m, choices);
            let ok = m.validate_tokens(&toks).expect("validate");
            m.consume_tokens(&toks[..ok]).expect("allowed");
            m
        }).collect();
        // One matcher in its error state: its words are zero and its result an error.
        let mask = ms[0].compute_mask().expect("mask");
        if let Some(bad) = (0..vs as u32).map(TokenId).find(|t| !mask.contains(*t)) {
            let _ = ms[0].consume_token(bad);
        }
        let expected: Vec<Result<TokenSet, _>> = ms.iter_mut().map(|m| m.compute_mask()).collect();
        let mut out = vec![0xFFFF_FFFFu32; ms.len() * words];
        let res = f.compute_masks(&mut ms, &mut out);
        prop_assert_eq!(res.len(), ms.len());
        for (i, (r, e)) in res.iter().zip(&expected).enumerate() {
            let chunk = &out[i * words..(i + 1) * words];
            match e {
                Ok(mask) => {
                    prop_assert!(r.is_ok());
                    prop_assert_eq!(chunk, mask.as_words());
                }
                Err(e) => {
                    prop_assert_eq!(r.as_ref().err(), Some(e));
                    prop_assert!(chunk.iter().all(|&w| w == 0));
                }
            }
        }
    }
}

#[test]
fn batch_rejects_a_short_buffer() {
    let f = bytes_factory();
    let mut ms = vec![lark(f, GRAMMARS[0]), lark(f, GRAMMARS[1])];
    let mut out = vec![0u32; 9 * 2 - 1];
    let res = f.compute_masks(&mut ms, &mut out);
    assert!(res.iter().all(|r| r.is_err()));
    // The matchers are not in an error state.
    assert!(ms.iter_mut().all(|m| m.compute_mask().is_ok()));
}

/// Token sequences for the thread test: one deterministic walk per (grammar, seed).
fn walks(f: &ParserFactory) -> Vec<(usize, Vec<TokenId>)> {
    let mut out = Vec::new();
    for (gi, g) in GRAMMARS.iter().enumerate() {
        for seed in 0..4u16 {
            let choices: Vec<u16> =
                (0..20u16).map(|i| i.wrapping_mul(7919).wrapping_add(seed * 31) % 0xFC00).collect();
            out.push((gi, draft(f, &lark(f, g), &choices)));
        }
    }
    out
}

fn run_walk(f: &ParserFactory, gi: usize, toks: &[TokenId]) -> Vec<TokenSet> {
    let mut m = lark(f, GRAMMARS[gi]);
    let ok = m.validate_tokens(toks).expect("validate");
    masks_along(&mut m, &toks[..ok])
}

/// One factory shared by threads (std::thread::scope), each compiling grammars and running
/// matchers: the masks equal a sequential run's.
#[test]
fn factory_shared_across_threads() {
    for f in factories() {
        let jobs = walks(f);
        let sequential: Vec<Vec<TokenSet>> =
            jobs.iter().map(|(gi, toks)| run_walk(f, *gi, toks)).collect();
        let parallel: Vec<Vec<TokenSet>> = std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|(gi, toks)| {
                    let f = f.clone();
                    s.spawn(move || run_walk(&f, *gi, toks))
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("thread")).collect()
        });
        assert_eq!(parallel, sequential);
    }
}

/// One compiled grammar shared by matchers on several threads.
#[test]
fn compiled_grammar_shared_across_threads() {
    let f = custom_factory();
    let g = f.compile(&GrammarSource::Lark(GRAMMARS[0].into())).expect("compiles");
    let toks = walks(f).into_iter().find(|(gi, t)| *gi == 0 && t.len() > 5).expect("walk").1;
    let expected = run_walk(f, 0, &toks);
    std::thread::scope(|s| {
        for _ in 0..4 {
            let g = Arc::clone(&g);
            let toks = &toks;
            let expected = &expected;
            s.spawn(move || {
                let mut m = f.matcher_for(g).expect("matcher");
                let ok = m.validate_tokens(toks).expect("validate");
                assert_eq!(&masks_along(&mut m, &toks[..ok]), expected);
            });
        }
    });
}

/// Multi-byte tokens: a token is allowed iff its bytes extend the input within the grammar
/// (checked against a brute force over the vocabulary with a fresh byte-level matcher).
#[test]
fn custom_vocab_masks_match_byte_level_check() {
    let f = custom_factory();
    let bytes = bytes_factory();
    let vocab = f.tokenizer().vocab();
    for g in GRAMMARS {
        let m = lark(f, g);
        let toks = draft(f, &m, &[3, 1, 4, 1, 5, 9, 2, 6]);
        let mut m = m.deep_clone();
        let ok = m.validate_tokens(&toks).expect("validate");
        let prefix: Vec<u8> = vocab.decode(&toks[..ok]);
        m.consume_tokens(&toks[..ok]).expect("allowed");
        if m.is_stopped() {
            continue;
        }
        let mask = m.compute_mask().expect("mask");
        let mut bm = lark(bytes, g);
        bm.consume_tokens(&prefix.iter().map(|&b| TokenId(b as u32)).collect::<Vec<_>>())
            .expect("prefix in the byte-level matcher");
        for (t, tb) in vocab.iter() {
            let expected = if vocab.is_special(t) {
                vocab.eos_tokens().contains(&t) && bm.is_accepting().expect("accepting")
            } else if tb.is_empty() {
                false
            } else {
                let ids: Vec<TokenId> = tb.iter().map(|&b| TokenId(b as u32)).collect();
                bm.validate_tokens(&ids).expect("validate") == ids.len()
            };
            assert_eq!(mask.contains(t), expected, "grammar {g:?}, prefix {prefix:?}, token {t}");
        }
    }
}

/// Grammars with forced stretches, for the o200k tokenizer.
const FF_GRAMMARS: &[&str] = &[
    r#"start: "{\"name\": \"" NAME "\", \"age\": " AGE ", \"tags\": [" TAG ("," TAG)* "]}"
NAME: /[A-Za-z]{1,10}/
AGE: /[0-9]{1,3}/
TAG: /"(red|green|blue)"/"#,
    r#"start: "<answer>The result is: " /[0-9]+/ " units</answer>""#,
    r#"start: "SELECT " COLS " FROM users WHERE id = " /[0-9]+/ ";"
COLS: /(name|email)(, (name|email))*/"#,
];

/// ff tokens spell a prefix of the forced bytes and are the canonical tokenization of that
/// prefix; consuming them keeps the matcher valid.
#[test]
fn ff_tokens_are_canonical_prefix_o200k() {
    let f = o200k_factory();
    let tok = f.tokenizer();
    let vocab = tok.vocab();
    let texts = [
        r#"{"name": "Ada", "age": 36, "tags": ["red","blue"]}"#,
        "<answer>The result is: 42 units</answer>",
        "SELECT name, email FROM users WHERE id = 7;",
    ];
    let mut nonempty = 0;
    for (g, text) in FF_GRAMMARS.iter().zip(texts) {
        let mut m = lark(f, g);
        let toks = tok.tokenize(text).expect("tokenize");
        for i in 0..=toks.len() {
            let forced = m.compute_ff_bytes().expect("ff bytes");
            let ff = m.compute_ff_tokens().expect("ff tokens");
            let spelled = vocab.decode(&ff);
            assert!(forced.starts_with(&spelled), "{g}: step {i}: {ff:?} vs {forced:?}");
            assert_eq!(ff, tok.tokenize_bytes(&spelled).expect("tokenize"), "{g}: step {i}");
            if !ff.is_empty() {
                nonempty += 1;
                let mut c = m.deep_clone();
                c.consume_tokens(&ff).expect("ff tokens are allowed");
                // Every continuation starts with the forced bytes: so does the rest of `text`.
                let done = vocab.decode(&toks[..i]);
                assert!(text.as_bytes()[done.len()..].starts_with(&forced));
            }
            if i < toks.len() {
                m.consume_token(toks[i]).expect("text is in the grammar");
            }
        }
        assert!(m.is_accepting().expect("accepting"));
    }
    assert!(nonempty >= 3, "the grammars force something");
}

/// At the start of the grammar: the whole literal (but maybe its last token) is forced.
#[test]
fn ff_tokens_at_start_o200k() {
    let f = o200k_factory();
    let mut m = lark(f, FF_GRAMMARS[1]);
    let forced = m.compute_ff_bytes().expect("ff bytes");
    assert_eq!(forced, b"<answer>The result is: ");
    let ff = m.compute_ff_tokens().expect("ff tokens");
    assert!(!ff.is_empty());
    assert!(forced.starts_with(&f.tokenizer().vocab().decode(&ff)));
}

/// With the bytes tokenizer every forced byte but maybe the last is a token.
#[test]
fn ff_tokens_bytes() {
    let f = bytes_factory();
    let mut m = lark(f, r#"start: "abc" /[0-9]/"#);
    assert_eq!(m.compute_ff_bytes().expect("ff"), b"abc");
    let ff = m.compute_ff_tokens().expect("ff");
    assert_eq!(ff, vec![TokenId(97), TokenId(98), TokenId(99)]);
}

/// Regression (`Matcher::rollback`): `rollback(0)`, and so `validate_tokens(&[])`, must
/// not clear the stop of a matcher that consumed EOS.
#[test]
fn validate_nothing_keeps_the_stop() {
    let f = bytes_factory();
    let mut m = lark(f, r#"start: "ab""#);
    m.consume_tokens(&[TokenId(97), TokenId(98), TokenId(256)]).expect("allowed");
    assert!(m.is_stopped());
    assert_eq!(m.validate_tokens(&[]).expect("validate"), 0);
    assert!(m.is_stopped());
    m.rollback(0).expect("rollback");
    assert_eq!(m.stop_reason(), llguidance::StopReason::EndOfSequence);
}

/// Regression (`Matcher::validate_tokens`): EOS after a stop is accepted without being
/// recorded, so rolling back the validated count removed an earlier token.
#[test]
fn validate_eos_after_stop_changes_nothing() {
    let f = bytes_factory();
    let mut m = lark(f, r#"start: "ab""#);
    m.consume_tokens(&[TokenId(97), TokenId(98), TokenId(256)]).expect("allowed");
    assert_eq!(m.validate_tokens(&[TokenId(256)]).expect("validate"), 1);
    assert_eq!(m.tokens(), &[TokenId(97), TokenId(98), TokenId(256)]);
    assert!(m.is_stopped());
}

#[test]
fn captures_exclude_a_literal_stop_and_stop_capture_holds_it() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let g = GrammarSource::Lark(
        "start: \"Q: \" ans \".\"\nans[capture=\"a\", stop=\"<END>\", stop_capture=\"s\"]: /[a-z ]*/\n"
            .into(),
    );
    let mut m = f.create_matcher(&g).unwrap();
    for b in b"Q: yes sir<END>." {
        m.consume_token(TokenId(*b as u32)).unwrap();
    }
    assert!(m.is_accepting().unwrap());
    let caps = m.captures();
    assert!(caps.contains(&("a".to_string(), b"yes sir".to_vec())), "{caps:?}");
    assert!(caps.contains(&("s".to_string(), b"<END>".to_vec())), "{caps:?}");
}

/// A regex or TERMINAL stop with `stop_capture`: the capture is the text before the
/// shortest suffix the stop matches, `stop_capture` holds that suffix; a `suffix` is left
/// out of the rule's own capture too.
#[test]
fn captures_with_a_regex_stop_and_a_suffix() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let run = |g: &str, text: &[u8]| {
        let mut m = f.create_matcher(&GrammarSource::Lark(g.into())).unwrap();
        for b in text {
            m.consume_token(TokenId(*b as u32)).unwrap();
        }
        assert!(m.is_accepting().unwrap());
        m.captures()
    };
    let caps = run(
        "start: ans \".\"\nans[capture=\"a\", stop=/<(END|STOP)>/, stop_capture=\"s\"]: /[a-z ]*/\n",
        b"yes<STOP>.",
    );
    assert!(caps.contains(&("a".to_string(), b"yes".to_vec())), "{caps:?}");
    assert!(caps.contains(&("s".to_string(), b"<STOP>".to_vec())), "{caps:?}");
    let caps = run(
        "start: ans\nans[capture=\"a\", stop=END, stop_capture=\"s\"]: /[a-z]*/\nEND: \"!\"+\n",
        b"ok!",
    );
    assert!(caps.contains(&("a".to_string(), b"ok".to_vec())), "{caps:?}");
    assert!(caps.contains(&("s".to_string(), b"!".to_vec())), "{caps:?}");
    let caps = run("start: ans\nans[capture=\"a\", suffix=\"</x>\"]: /[a-z]*/\n", b"hi</x>");
    assert!(caps.contains(&("a".to_string(), b"hi".to_vec())), "{caps:?}");
}

/// GBNF token terminals over regular tokens: `!<[id]>` allows any single token but `id`
/// and EOS (sliced and unsliced masks alike), a token taken by it is one whole token, and
/// `<[id]>` takes exactly that regular token.
#[test]
fn gbnf_token_terminals_over_regular_tokens() {
    let f = o200k_factory();
    let n = f.tokenizer().vocab().len();
    let eos = f.tokenizer().vocab().eos_tokens().to_vec();
    let g = GrammarSource::Gbnf("root ::= \"x\" !<[100]> \"y\"".into());
    let mut m = f.create_matcher(&g).unwrap();
    let x = f.tokenizer().tokenize("x").unwrap();
    m.consume_tokens(&x).unwrap();
    let mask = m.compute_mask().unwrap();
    let mut plain = m.plain_twin().unwrap();
    assert_eq!(mask, plain.compute_mask().unwrap());
    assert!(!mask.contains(TokenId(100)));
    assert!(eos.iter().all(|&t| !mask.contains(t)));
    assert_eq!(mask.count(), n - 1 - eos.len());
    // A long regular token is one token for the terminal.
    let long = f.tokenizer().tokenize(" because").unwrap();
    assert_eq!(long.len(), 1);
    m.consume_token(long[0]).unwrap();
    let y = f.tokenizer().tokenize("y").unwrap();
    assert!(m.compute_mask().unwrap().contains(y[0]));
    m.consume_tokens(&y).unwrap();
    assert!(m.is_accepting().unwrap());
    assert!(m.deep_clone().consume_token(TokenId(100)).is_err());

    let g = GrammarSource::Gbnf("root ::= <[100]> \"y\"".into());
    let mut m = f.create_matcher(&g).unwrap();
    let mask = m.compute_mask().unwrap();
    assert_eq!(mask.iter().collect::<Vec<_>>(), vec![TokenId(100)]);
    m.consume_token(TokenId(100)).unwrap();
    m.consume_tokens(&y).unwrap();
    assert!(m.is_accepting().unwrap());
}

/// Draft masks for speculative decoding equal the masks computed step by step; the draft
/// stops after the first refused token; the matcher's state is unchanged; a draft tree's
/// node masks equal a fresh matcher's after each node's path.
#[test]
fn draft_masks_equal_step_by_step_masks() {
    let f = o200k_factory();
    let g = GrammarSource::JsonSchema(
        r#"{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}},"required":["name","n"]}"#
            .into(),
    );
    let text = r#"{"name": "Ada Lovelace", "n": 1815}"#;
    let toks = f.tokenizer().tokenize(text).unwrap();
    let mut m = f.create_matcher(&g).unwrap();
    m.consume_tokens(&toks[..2]).unwrap();
    let before = m.compute_mask().unwrap();
    let draft = &toks[2..8];
    let masks = m.compute_masks_for_draft(draft).unwrap();
    assert_eq!(masks.len(), draft.len() + 1);
    let mut step = f.create_matcher(&g).unwrap();
    step.consume_tokens(&toks[..2]).unwrap();
    for (i, mask) in masks.iter().enumerate() {
        assert_eq!(mask, &step.compute_mask().unwrap(), "draft mask {i}");
        if i < draft.len() {
            step.consume_token(draft[i]).unwrap();
        }
    }
    // State unchanged: same tokens, same mask.
    assert_eq!(m.tokens(), &toks[..2]);
    assert_eq!(m.compute_mask().unwrap(), before);
    // A refused token ends the draft (its mask is the last one), without an error.
    let bad = f.tokenizer().tokenize("}").unwrap()[0];
    let masks = m.compute_masks_for_draft(&[draft[0], bad, draft[1]]).unwrap();
    assert_eq!(masks.len(), 2);
    assert!(m.error().is_none());
    // A tree: two branches from the current position, one with a refused token.
    let other = f.tokenizer().tokenize(r#""nope""#).unwrap();
    let tokens = vec![draft[0], draft[1], draft[2], other[0], bad];
    let parents = vec![None, Some(0), Some(1), None, Some(0)];
    let (root, nodes) = m.compute_masks_for_draft_tree(&tokens, &parents).unwrap();
    assert_eq!(root, before);
    for (i, got) in nodes.iter().enumerate() {
        let mut path = vec![i];
        while let Some(p) = parents[*path.last().unwrap()] {
            path.push(p);
        }
        path.reverse();
        let mut fresh = f.create_matcher(&g).unwrap();
        fresh.consume_tokens(&toks[..2]).unwrap();
        let mut ok = true;
        for &n in &path {
            if !fresh.compute_mask().unwrap().contains(tokens[n]) {
                ok = false;
                break;
            }
            fresh.consume_token(tokens[n]).unwrap();
        }
        match got {
            Some(mask) => {
                assert!(ok, "node {i} should be refused");
                assert_eq!(mask, &fresh.compute_mask().unwrap(), "node {i}");
            }
            None => assert!(!ok, "node {i} should have a mask"),
        }
    }
    assert_eq!(m.tokens(), &toks[..2]);
}

/// Masks along a decode equal the masks of a fresh matcher that consumed the same prefix
/// without computing a mask on the way. The decoding matcher keeps a walk's speculative
/// Earley rows for the next walk while its tokens stay in one lexeme (long keys and strings
/// here, free keys beside named ones, a 40-property object), and drops them before a token
/// that may end one; the fresh matchers never have any.
#[test]
fn masks_with_kept_speculative_rows_equal_fresh_ones() {
    let f = o200k_factory();
    let props: Vec<String> = (0..40)
        .map(|i| format!(r#""property_number_{i}_of_the_object": {{"type": "string"}}"#))
        .collect();
    let schema = format!(
        r#"{{"type": "object", "properties": {{{}, "n": {{"type": "integer"}}}},
        "additionalProperties": {{"type": "string", "maxLength": 30}}}}"#,
        props.join(",")
    );
    let src = GrammarSource::JsonSchema(schema);
    // Properties in schema order, the free key last (the order the JSON grammar takes).
    let text = r#"{"property_number_7_of_the_object": "a fairly long string value with words in it", "property_number_31_of_the_object": "x", "n": 12345, "an_additional_key_that_is_long": "short text"}"#;
    let toks = f.tokenizer().tokenize(text).expect("tokenizes");
    let mut m = f.create_matcher(&src).expect("compiles");
    // Clones share the grammar's lexer, so the fresh matchers meet the same lexer states
    // and only the parser's kept rows differ.
    let pristine = m.deep_clone();
    for (k, &t) in toks.iter().enumerate() {
        let mask = m.compute_mask().expect("mask");
        let mut fresh = pristine.deep_clone();
        fresh.consume_tokens(&toks[..k]).expect("the prefix is allowed");
        assert_eq!(mask, fresh.compute_mask().expect("mask"), "step {k}: masks differ");
        // A second mask at the same position (its cache aside) is the same too.
        let mut again = m.deep_clone();
        again.set_slicing(true);
        assert_eq!(mask, again.compute_mask().expect("mask"), "step {k}: recomputed mask differs");
        assert!(mask.contains(t), "step {k}: token {t:?} not in the mask");
        m.consume_token(t).expect("allowed token");
    }
    assert!(m.is_accepting().expect("no error"));
}

/// A `oneOf` of seven unanchored `pattern`s (no `type`: each branch also admits every
/// non-string): each word is exactly one branch's string. The lexer's structural liveness
/// rules read `P1 & ~P2 & …` over the universe; an intersection simplified without it
/// (the universe dropped as an implied length) ran a lexer step out of fuel at the
/// word's last token (MaskBench Github_hard---o12278).
#[test]
fn one_of_unanchored_patterns_accepts_each_word() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let words = [
        "NEW",
        "ON_APPROVAL",
        "ON_SIGNING",
        "ON_MODIFICATION",
        "EXECUTED",
        "DEPRECATED",
        "REJECTED",
    ];
    let branches: Vec<String> = words.iter().map(|w| format!(r#"{{"pattern":"{w}"}}"#)).collect();
    let schema = format!(r#"{{"oneOf":[{}]}}"#, branches.join(","));
    let g = GrammarSource::JsonSchema(schema);
    for w in ["NEW", "ON_APPROVAL"] {
        let mut m = f.create_matcher(&g).unwrap();
        let toks = f.tokenizer().tokenize(&format!("\"{w}\"")).unwrap();
        for &t in &toks {
            let mask = m.compute_mask().unwrap_or_else(|e| panic!("{w}: {e}"));
            assert!(mask.contains(t), "{w}");
            m.consume_token(t).unwrap();
        }
        assert!(m.is_accepting().unwrap(), "{w}");
    }
}

/// Forced tokens keep their last token unless the grammar could take a longer token that
/// starts with it (LLGuidance's rule): ` green` closing the grammar stays; before free
/// letters (` greenhouse` fits) it goes.
#[test]
fn forced_tokens_keep_a_last_token_the_grammar_cannot_extend() {
    let f = o200k_factory();
    let tok = |s: &str| f.tokenizer().tokenize(s).unwrap();
    let closed = GrammarSource::Lark(r#"start: "dark green""#.into());
    let mut m = f.create_matcher(&closed).unwrap();
    assert_eq!(m.compute_ff_tokens().unwrap(), tok("dark green"));
    let open = GrammarSource::Lark(r#"start: "dark green" /[a-z]*/"#.into());
    let mut m = f.create_matcher(&open).unwrap();
    let all = tok("dark green");
    assert_eq!(m.compute_ff_tokens().unwrap(), all[..all.len() - 1].to_vec());
}
