//! The soundness oracle: masks computed with every proof rule and shortcut (vocabulary
//! slices and the lexer's containment proofs, split trie walks, partial slice proofs, the
//! last-mask and first-row caches, lexers copied from earlier matchers) equal the masks of
//! the plain computation ([`ParserFactory::plain`]: a lexer of its own per matcher, every
//! token walked through the trie, no cache, Earley completions reading whole rows), step by
//! step along random walks.
//!
//! - `proofs_equal_the_plain_walk_on_random_schemas`: random JSON Schemas (a generator over
//!   `pattern`, `patternProperties`, `additionalProperties`, `propertyNames`, `oneOf` /
//!   `anyOf` / `allOf` / `not`, formats, length and item bounds, `enum`, `const`, numbers
//!   with bounds), each compiled once, two matchers of it walked one after the other (the
//!   second starts from the first one's lexer), random tokens; the size is set by
//!   `SOUNDNESS_CASES` (default 24, what `.ci/run` runs).
//! - `counter_twins_equal_the_plain_walk`: grammars with bounded repeats longer than the
//!   longest token, walked up to and across the bound (the masks computed at counter twins
//!   and run twins, a minimum alone included).
//! - `boundary_proofs_equal_the_plain_walk`: lexemes that must end inside the slices'
//!   tokens (chunks of long strings), walked across the end.
//! - `completions_into_large_rows_equal_the_plain_walk`: objects of many optional
//!   properties (Earley rows of many items, completions through their index).
//! - `proofs_equal_the_plain_walk_on_maskbench` (ignored: needs `../shared`): every
//!   `SOUNDNESS_EVERY`-th MaskBench file (default 40; `SOUNDNESS_FILES=o21142,o62065`:
//!   every file whose name holds one of these), each valid instance's canonical tokens.
//!   Run it with
//!   `cargo test --release -p llguidance --test soundness -- --ignored --nocapture`.

use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId, TokenSet};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "^[A-Z][a-z]{0,6}$",
    "^a",
    "b$",
    "^(foo|bar|baz)[0-9]*$",
    "^[0-9]{3}-[0-9]{4}$",
    ".*(red|blue).*",
    "^x_",
    "[aeiou]{2}",
];
const FORMATS: &[&str] = &["date", "time", "date-time", "email", "uuid", "ipv4", "uri", "hostname"];
const KEYS: &[&str] = &["a", "ab", "abc", "name", "names", "x_1", "id", "red", "type"];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        (0usize..4, prop::option::of(1usize..30)).prop_map(|(min, max)| match max {
            Some(m) => json!({"type": "string", "minLength": min, "maxLength": m.max(min)}),
            None => json!({"type": "string", "minLength": min}),
        }),
        prop::sample::select(PATTERNS).prop_map(|p| json!({"type": "string", "pattern": p})),
        (prop::sample::select(PATTERNS), 0usize..20)
            .prop_map(|(p, n)| json!({"type": "string", "pattern": p, "maxLength": n + 1})),
        prop::sample::select(FORMATS).prop_map(|f| json!({"type": "string", "format": f})),
        (-50i64..50, 0i64..100)
            .prop_map(|(lo, d)| json!({"type": "integer", "minimum": lo, "maximum": lo + d})),
        (-5i64..5).prop_map(|lo| json!({"type": "number", "exclusiveMinimum": lo})),
        prop::collection::vec(prop::sample::select(KEYS), 1..4).prop_map(|v| json!({"enum": v})),
        prop::sample::select(KEYS).prop_map(|k| json!({"const": k})),
        Just(json!({"type": "boolean"})),
        Just(json!({})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            // Objects: named keys sharing prefixes, required ones, and what other keys may be.
            (
                prop::collection::btree_map(prop::sample::select(KEYS), inner.clone(), 0..4),
                prop::bool::ANY,
                prop_oneof![
                    Just(None),
                    Just(Some(json!(false))),
                    Just(Some(json!(true))),
                    inner.clone().prop_map(Some),
                ],
                prop::option::of((prop::sample::select(PATTERNS), inner.clone())),
                prop::option::of(prop_oneof![
                    prop::sample::select(PATTERNS).prop_map(|p| json!({"pattern": p})),
                    (1usize..6).prop_map(|n| json!({"maxLength": n})),
                ]),
            )
                .prop_map(|(props, req, addl, pat, names)| {
                    let mut o = serde_json::Map::new();
                    o.insert("type".into(), json!("object"));
                    let keys: Vec<String> = props.keys().map(|k| k.to_string()).collect();
                    let props: serde_json::Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                    o.insert("properties".into(), Value::Object(props));
                    if req && !keys.is_empty() {
                        o.insert("required".into(), json!(keys[..1]));
                    }
                    if let Some(a) = addl {
                        o.insert("additionalProperties".into(), a);
                    }
                    if let Some((p, s)) = pat {
                        o.insert("patternProperties".into(), json!({ p: s }));
                    }
                    if let Some(n) = names {
                        o.insert("propertyNames".into(), n);
                    }
                    Value::Object(o)
                }),
            (inner.clone(), 0usize..3, prop::option::of(0usize..4)).prop_map(|(items, min, max)| {
                match max {
                    Some(m) => json!({"type": "array", "items": items, "minItems": min, "maxItems": min + m}),
                    None => json!({"type": "array", "items": items, "minItems": min}),
                }
            }),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"oneOf": v})),
            prop::collection::vec(inner.clone(), 2..3).prop_map(|v| json!({"allOf": v})),
            (inner.clone(), inner).prop_map(|(a, b)| json!({"allOf": [a, {"not": b}]})),
        ]
    })
}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

/// A walk's picker: a random token of the mask other than the EOS ids (seeded), for the
/// first `steps` steps.
fn random_tokens(
    mut seed: u64,
    eos: &[TokenId],
    steps: usize,
) -> impl FnMut(usize, &TokenSet) -> Option<TokenId> + '_ {
    move |step, mask| {
        let choices: Vec<TokenId> = mask.iter().filter(|t| !eos.contains(t)).collect();
        (step < steps && !choices.is_empty())
            .then(|| choices[lcg(&mut seed) as usize % choices.len()])
    }
}

/// Grammar `src` (number `gi`, for messages) compiled by both factories: each call makes a
/// new pair of matchers of it (with every shortcut, plain).
fn matcher_pairs<'a>(
    fast_f: &'a ParserFactory,
    plain_f: &'a ParserFactory,
    gi: usize,
    src: &GrammarSource,
) -> impl Fn() -> (Matcher, Matcher) + 'a {
    let g = fast_f.compile(src).unwrap_or_else(|e| panic!("grammar {gi}: {e}"));
    let pg = plain_f.compile(src).unwrap();
    move || (fast_f.matcher_for(g.clone()).unwrap(), plain_f.matcher_for(pg.clone()).unwrap())
}

/// The o200k factory with every shortcut and its plain twin, the vocabulary and its EOS
/// ids: what each oracle below starts from.
fn o200k_pair() -> (ParserFactory, ParserFactory, toktrie::Vocabulary, Vec<TokenId>) {
    let fast_f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let plain_f = fast_f.plain();
    let vocab = fast_f.tokenizer().vocab().clone();
    let eos = vocab.eos_tokens().to_vec();
    (fast_f, plain_f, vocab, eos)
}

/// Compares the two matchers' masks before each token of the walk; `pick` chooses the next
/// token from the mask (None: stop). Returns the number of masks compared.
fn walk(
    fast: &mut Matcher,
    plain: &mut Matcher,
    what: &str,
    mut pick: impl FnMut(usize, &TokenSet) -> Option<TokenId>,
) -> usize {
    let mut n = 0;
    for step in 0.. {
        let (a, b) = (fast.compute_mask(), plain.compute_mask());
        match (&a, &b) {
            (Ok(a), Ok(b)) => assert!(a == b, "{what}: step {step}: masks differ"),
            (Err(x), Err(y)) => {
                assert_eq!(x.kind(), y.kind(), "{what}: step {step}: different errors");
                return n;
            }
            _ => panic!("{what}: step {step}: {a:?} vs {b:?}"),
        }
        n += 1;
        let Some(t) = pick(step, a.as_ref().expect("checked")) else { return n };
        let (x, y) = (fast.consume_token(t), plain.consume_token(t));
        assert_eq!(x.is_ok(), y.is_ok(), "{what}: step {step}: consume differs");
        if x.is_err() {
            return n;
        }
    }
    n
}

#[test]
fn proofs_equal_the_plain_walk_on_random_schemas() {
    let cases = env_usize("SOUNDNESS_CASES", 24);
    let fast_f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let plain_f = fast_f.plain();
    let eos = fast_f.tokenizer().vocab().eos_tokens().to_vec();
    let mut runner = TestRunner::new(Config {
        rng_seed: proptest::test_runner::RngSeed::Fixed(7),
        ..Config::default()
    });
    let strat = schema();
    let (mut compiled, mut masks, mut applied) = (0, 0, 0);
    for case in 0..cases {
        let s = strat.new_tree(&mut runner).expect("a schema").current();
        let text = s.to_string();
        let src = GrammarSource::JsonSchema(text.clone());
        let (Ok(g), Ok(pg)) = (fast_f.compile(&src), plain_f.compile(&src)) else { continue };
        compiled += 1;
        for w in 0..2u64 {
            let seed = case as u64 * 31 + w + 1;
            let mut fast = fast_f.matcher_for(g.clone()).unwrap();
            let mut plain = plain_f.matcher_for(pg.clone()).unwrap();
            let what = format!("case {case} walk {w}: {text}");
            masks += walk(&mut fast, &mut plain, &what, random_tokens(seed, &eos, 40));
            applied += fast.slice_stats().applied;
        }
    }
    println!("{cases} schemas generated, {compiled} compiled, {masks} masks compared, {applied} slices applied");
    assert!(compiled * 2 >= cases, "too few generated schemas compiled: {compiled} of {cases}");
    assert!(applied > 0, "the proofs were never used: the oracle compared nothing");
}

#[test]
#[ignore = "needs ../shared/data/maskbench; run with --ignored (see the module doc)"]
fn proofs_equal_the_plain_walk_on_maskbench() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/maskbench");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let every = env_usize("SOUNDNESS_EVERY", 40).max(1);
    // `SOUNDNESS_FILES=a,b`: only the files whose name holds one of these (every one of them).
    if let Ok(only) = std::env::var("SOUNDNESS_FILES") {
        let only: Vec<&str> = only.split(',').collect();
        files.retain(|p| only.iter().any(|o| p.to_string_lossy().contains(o)));
    }
    let every = if std::env::var("SOUNDNESS_FILES").is_ok() { 1 } else { every };
    let fast_f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let plain_f = fast_f.plain();
    let (mut schemas, mut masks, mut applied) = (0, 0, 0);
    for path in files.iter().step_by(every) {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
        let src = GrammarSource::JsonSchema(v["schema"].to_string());
        let (Ok(g), Ok(pg)) = (fast_f.compile(&src), plain_f.compile(&src)) else { continue };
        schemas += 1;
        for t in v["tests"].as_array().into_iter().flatten() {
            if t["valid"] != json!(true) {
                continue;
            }
            let Ok(toks) = fast_f.tokenizer().tokenize(&t["data"].to_string()) else { continue };
            let mut fast = fast_f.matcher_for(g.clone()).unwrap();
            let mut plain = plain_f.matcher_for(pg.clone()).unwrap();
            let what = path.display().to_string();
            masks += walk(&mut fast, &mut plain, &what, |step, _| toks.get(step).copied());
            applied += fast.slice_stats().applied;
        }
    }
    println!("{schemas} schemas, {masks} masks compared, {applied} slices applied, 0 differences");
    assert!(masks > 0);
}

/// Counter twins (`lexer::DerivreLexer::mask_twin`): inside a bounded repeat with more room
/// than the longest token, the mask is computed at the state with the repeat relaxed. The
/// masks along long walks through such repeats (JSON `maxLength` / `minLength` under the
/// chunking threshold, a `pattern` of one repeated class fused with its `maxLength`, Lark repeats followed by a lexeme that takes the same characters, a
/// multi-character body, word counts (a repeat after bytes), repeats under a union, intersections (relaxed only where the twin
/// completes within the room left), a structural tag's `any_text` with `max_chars`, run
/// twins near a bound with and without a minimum)
/// equal the plain computation's at every step, up to and across the bound: walks pick
/// a random allowed token, or the longest allowed one, to reach the bound at every offset
/// from it.
#[test]
fn counter_twins_equal_the_plain_walk() {
    let (fast_f, plain_f, vocab, eos) = o200k_pair();
    let horizon = fast_f.trie().max_token_len();
    let n = 2 * horizon + 40;
    let grammars = [
        GrammarSource::JsonSchema(format!(r#"{{"type": "string", "maxLength": {n}}}"#)),
        GrammarSource::JsonSchema(format!(
            r#"{{"type": "object", "properties": {{"a": {{"type": "string", "minLength": {n}, "maxLength": {}}}}}, "required": ["a"], "additionalProperties": false}}"#,
            2 * n
        )),
        GrammarSource::JsonSchema(format!(
            r#"{{"type": "string", "pattern": "^[a-z ]*$", "maxLength": {n}}}"#
        )),
        GrammarSource::JsonSchema(format!(
            r#"{{"type": "array", "items": {{"type": "string", "maxLength": {}}}}}"#,
            horizon + 3
        )),
        GrammarSource::Lark(format!("start: A B\nA: /[a-z ]{{0,{n}}}/\nB: /[a-z0-9]+/\n")),
        GrammarSource::Lark(format!("start: \"<\" A \">\"\nA: /(ab|c){{3,{n}}}/\n")),
        GrammarSource::Lark(format!("start: A\nA: /x[a-z]{{{n},}}y|z[a-m]{{0,{n}}}/\n")),
        GrammarSource::Lark(format!("start: A\nA: /[a-z]{{0,{n}}}/ & /[a-y]*/\n")),
        GrammarSource::Lark(format!(
            "start: A B\nA: /[a-z]{{40,{n}}}/ & /[a-y]*z?/\nB: /[0-9]+/\n"
        )),
        // Under an intersection, a bound relaxes only where the twin completes in fewer
        // bytes than the room left: a `b` exactly 21 characters before the end.
        GrammarSource::Lark(format!("start: A\nA: /[ab]{{0,{n}}}/ & /[ab]*b[ab]{{20}}/\n")),
        // A maximum with no room left under the intersection kept exact, the other relaxed.
        GrammarSource::Lark(format!(
            "start: A\nA: /[a-z]{{0,{}}}-[a-z]{{0,{n}}}/ & /[a-z-]*/\n",
            horizon + 20
        )),
        // A minimum alone (run twins with no maximum), as a JSON string's and a regex's.
        GrammarSource::JsonSchema(format!(r#"{{"type": "string", "minLength": {n}}}"#)),
        GrammarSource::Lark(format!("start: A\nA: /[a-z ]{{{n},}}[0-9]/\n")),
        // Run twins with a minimum near the end: an exact length; a character of two bytes.
        GrammarSource::JsonSchema(format!(
            r#"{{"type": "string", "minLength": {n}, "maxLength": {n}}}"#
        )),
        GrammarSource::Lark(format!("start: A\nA: /([a-z]|\\\\[nt]){{{},{n}}}[0-9]/\n", n - 6)),
        // Word counts: inside a word the repeat follows bytes (`[a-z]* (ε | " " B{..} R)`,
        // a byte concatenation in derivre), as a Lark regex and a JSON `pattern`.
        GrammarSource::Lark(format!("start: A\nA: /([a-z]+ ){{0,{}}}[a-z]+/\n", horizon + 30)),
        GrammarSource::JsonSchema(format!(
            r#"{{"type": "string", "pattern": "^(\\w+ ){{0,{}}}\\w+$"}}"#,
            horizon + 30
        )),
        // Fewer words than the longest token's bytes, but more than it can start (each
        // at least two bytes), alone and under a length bound (MaskBench's o21053).
        GrammarSource::Lark(format!("start: A\nA: /([a-z]+ ){{0,{}}}[a-z]+/\n", horizon / 2 + 12)),
        GrammarSource::JsonSchema(format!(
            r#"{{"type": "string", "minLength": 1, "maxLength": {n}, "pattern": "^$|(^(?:\\S+\\s+){{0,{}}}\\S+$)"}}"#,
            horizon / 2 + 12
        )),
        GrammarSource::Lark(format!(
            "start: A\nA: /([0-9]{{3}}-){{{},{}}}x/\n",
            horizon / 4 + 3,
            horizon / 4 + 9
        )),
        // Nested repeats merged into one (`lexer::parsed::merged_repeat`): `[a-z ]{1,600}`,
        // its bounds not in the regex's text.
        GrammarSource::Lark("start: A\nA: /(([a-z ]{1,20}){1,30})x/\n".to_string()),
        // Two bytes an iteration, where the vocabulary's runs of dashes start up to 56.
        GrammarSource::Lark(format!("start: A\nA: /(-[-=]){{0,{}}}x/\n", horizon / 2 + 12)),
        GrammarSource::StructuralTag(format!(
            r#"{{"type": "structural_tag", "format": {{"type": "tag", "begin": "<think>", "content": {{"type": "any_text", "max_chars": {n}}}, "end": "</think>"}}}}"#
        )),
        // A token budget before a tag's end: the state restricted to the end's rest.
        GrammarSource::StructuralTag(format!(
            r#"{{"type": "structural_tag", "format": {{"type": "tag", "begin": "<think>", "content": {{"type": "any_text", "max_chars": {n}, "max_tokens": 40}}, "end": "</think>"}}}}"#
        )),
    ];
    let (mut masks, mut twins, mut splits, mut runs, mut narrowed) = (0, 0, 0, 0, 0);
    for (gi, src) in grammars.iter().enumerate() {
        let pair = matcher_pairs(&fast_f, &plain_f, gi, src);
        for w in 0..4u64 {
            let mut seed = gi as u64 * 131 + w + 1;
            let (mut fast, mut plain) = pair();
            let what = format!("grammar {gi} walk {w}");
            masks += walk(&mut fast, &mut plain, &what, |step, mask| {
                let choices: Vec<TokenId> = mask.iter().filter(|t| !eos.contains(t)).collect();
                if step >= 400 || choices.is_empty() {
                    return None;
                }
                // Walk 0: random tokens; the others: the longest allowed token from a random
                // step on, so that the bound is met at different offsets.
                let longest = w > 0 && lcg(&mut seed) % (w + 1) != 0;
                Some(if longest {
                    *choices.iter().max_by_key(|&&t| vocab.token_bytes(t).len()).expect("some")
                } else {
                    choices[lcg(&mut seed) as usize % choices.len()]
                })
            });
            twins += fast.slice_stats().twins;
            splits += fast.slice_stats().splits;
            runs += fast.slice_stats().runs;
            narrowed += fast.slice_stats().narrowed;
        }
    }
    println!(
        "{masks} masks compared, {twins} computed at a counter twin, {splits} split by length, \
         {runs} at a run twin ({narrowed} narrowed from the last)"
    );
    assert!(twins > 0, "no mask was computed at a counter twin: the oracle compared nothing");
    assert!(splits > 0, "no mask was split by token length: the oracle compared nothing");
    assert!(runs > 0, "no mask was computed at a run twin: the oracle compared nothing");
    assert!(narrowed > 0, "no run mask was narrowed from the last: the oracle compared nothing");
}

/// Run masks narrowed in place from the last one (consecutive positions near a bound)
/// equal the plain computation's when rollbacks come between them: walks take the longest
/// token to near the bound, then random tokens, rolling back one to three of them every
/// other step (the mask after each rollback compared too).
#[test]
fn narrowed_run_masks_survive_rollbacks() {
    let (fast_f, plain_f, vocab, eos) = o200k_pair();
    let horizon = fast_f.trie().max_token_len();
    let n = 2 * horizon + 40;
    let grammars = [
        GrammarSource::JsonSchema(format!(r#"{{"type": "string", "maxLength": {n}}}"#)),
        GrammarSource::Lark(format!("start: A \"!\"\nA: /[a-z ]{{0,{n}}}/\n")),
    ];
    let mut narrowed = 0;
    for (gi, src) in grammars.iter().enumerate() {
        let pair = matcher_pairs(&fast_f, &plain_f, gi, src);
        for w in 0..3u64 {
            let mut seed = gi as u64 * 71 + w + 1;
            let (mut fast, mut plain) = pair();
            let mut bytes = 0usize;
            let mut taken: Vec<usize> = Vec::new();
            for step in 0..300 {
                let what = format!("grammar {gi} walk {w} step {step}");
                let near = bytes + horizon + 20 * w as usize > n;
                if near && step % 2 == 0 && taken.len() > 3 {
                    let k = 1 + (lcg(&mut seed) % 3) as usize;
                    fast.rollback(k).unwrap();
                    plain.rollback(k).unwrap();
                    for _ in 0..k {
                        bytes -= taken.pop().expect("taken");
                    }
                }
                let (a, b) = (fast.compute_mask().unwrap(), plain.compute_mask().unwrap());
                assert!(a == b, "{what}: masks differ");
                let choices: Vec<TokenId> = a.iter().filter(|t| !eos.contains(t)).collect();
                if choices.is_empty() {
                    break;
                }
                let t = if near {
                    choices[lcg(&mut seed) as usize % choices.len()]
                } else {
                    *choices.iter().max_by_key(|&&t| vocab.token_bytes(t).len()).expect("some")
                };
                fast.consume_token(t).unwrap();
                plain.consume_token(t).unwrap();
                taken.push(vocab.token_bytes(t).len());
                bytes += vocab.token_bytes(t).len();
            }
            narrowed += fast.slice_stats().narrowed;
        }
    }
    assert!(narrowed > 0, "no run mask was narrowed from the last: the test compared nothing");
}

/// Strategy choices near bounded repeats that take no twin, with masks equal to the plain
/// computation: (1) a `pattern` that searches for a UUID anywhere in the string
/// (MaskBench's Github_hard---o1051) allows the string's slices whole at every position, so
/// its masks are the states' own, not split by token length (whose long tokens were walked
/// at ~600 µs a mask); (2) `format: uri` with a `pattern` (Github_hard---o64008): the
/// URI's IPv6 repeats leave no room under the intersection, so no twin is tried (its
/// completion search cost ~0.7 ms at each string's start); (3) a `maxLength: 32` string
/// with a `pattern` keeps its split; (4) a string of any of five formats takes the states'
/// own masks where each length-split twin is met once. Walks take random tokens and the
/// instance's own.
#[test]
fn repeats_without_twins_take_the_states_own_masks() {
    let (fast_f, plain_f, _, eos) = o200k_pair();
    let formats: Vec<Value> = ["date-time", "email", "hostname", "ipv4", "date"]
        .iter()
        .map(|f| json!({"type": "string", "format": f}))
        .collect();
    let uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
    let image =
        r"^https://images-fe\.ssl-images-amazon\.com/images/.*?(no-image-no-ciu)?\.(gif|jpg)$";
    let cases = [
        (
            json!({"type": "string", "pattern": uuid}),
            "\"id 123e4567-e89b-12d3-a456-426655440000 ok\"",
        ),
        (
            json!({"type": "string", "format": "uri", "pattern": image}),
            "\"https://images-fe.ssl-images-amazon.com/images/G/09/nav2/dp/no-image-no-ciu.gif\"",
        ),
        // A bound with room for 16 bytes (Snowplow's sp_332): the long run slices are not
        // allowed whole, so the split by length stays (the state's own mask would walk
        // them: 1.5 ms where the split took 0.5).
        (
            json!({"type": "string", "maxLength": 32, "pattern": "^(\\d+\\.\\d+\\.\\d+.*)$"}),
            "\"1.2.3-beta+build.20261129\"",
        ),
        // A string of any of several formats: the fixed-length members (a date, a time)
        // make each position's length-split twin a new state, met once; its walk and the
        // long tokens' would cost more than the state's own walk.
        (json!({"anyOf": formats}), "\"2024-01-01T00:00:00Z\""),
    ];
    for (gi, (schema, text)) in cases.iter().enumerate() {
        let src = GrammarSource::JsonSchema(schema.to_string());
        let pair = matcher_pairs(&fast_f, &plain_f, gi, &src);
        let toks = fast_f.tokenizer().tokenize(text).unwrap();
        let (mut fast, mut plain) = pair();
        let n = walk(&mut fast, &mut plain, &format!("case {gi} instance"), |step, _| {
            toks.get(step).copied()
        });
        assert_eq!(n, toks.len() + 1, "case {gi}: the instance is accepted to its end");
        assert!(fast.is_accepting().unwrap(), "case {gi}: the instance is accepted");
        let mut stats = vec![fast.slice_stats()];
        for w in 0..3u64 {
            let seed = gi as u64 * 97 + w + 1;
            let (mut fast, mut plain) = pair();
            let what = format!("case {gi} walk {w}");
            walk(&mut fast, &mut plain, &what, random_tokens(seed, &eos, 60));
            stats.push(fast.slice_stats());
        }
        if gi == 0 {
            assert!(stats.iter().all(|s| s.splits == 0), "a UUID search split by token length");
            assert!(stats[0].applied > 0, "the instance's masks allowed no slice whole");
        }
        if gi == 2 {
            assert!(stats[0].splits > 0, "a bounded version string not split by token length");
        }
        if gi == 3 {
            assert_eq!(stats[0].splits, 0, "a twin met once split the instance's masks");
        }
    }
}

/// A `minLength` beside an unanchored `pattern` (MaskBench's Github_hard---o79409,
/// `trace_id`): inside the string the slices are allowed whole (the proof reads the
/// minimum as no bound, `lexer/src/derivative/containment.rs`, rule 5), with masks equal to
/// the plain computation's; before, no slice was, and each mask walked the trie (1.5-3
/// ms at o200k). A small minimum (no counter twin), one beside a maximum (kept exact) and
/// the pattern alone walk the same way. Walks take the instance's tokens and random ones.
#[test]
fn a_minimum_beside_an_unanchored_pattern_allows_slices_whole() {
    let (fast_f, plain_f, _, eos) = o200k_pair();
    let trace = "\\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{24}";
    let text = "\"1-58406520-a006649127e371903a2de979\"";
    let cases = [
        json!({"type": "string", "minLength": 35, "pattern": trace}),
        json!({"type": "string", "minLength": 5, "pattern": trace}),
        json!({"type": "string", "minLength": 3, "maxLength": 60, "pattern": trace}),
        json!({"type": "string", "pattern": trace}),
        json!({"type": "string", "minLength": 40, "pattern": ".*(red|blue).*"}),
    ];
    for (gi, schema) in cases.iter().enumerate() {
        let src = GrammarSource::JsonSchema(schema.to_string());
        let pair = matcher_pairs(&fast_f, &plain_f, gi, &src);
        let text = if gi == 4 { "\"a red fox and a blue jay, both out early\"" } else { text };
        let toks = fast_f.tokenizer().tokenize(text).unwrap();
        let (mut fast, mut plain) = pair();
        let n = walk(&mut fast, &mut plain, &format!("case {gi} instance"), |step, _| {
            toks.get(step).copied()
        });
        assert_eq!(n, toks.len() + 1, "case {gi}: the instance is accepted to its end");
        // Every mask computed inside the string (each walks the rest of the vocabulary, once;
        // the first, before the quote, and the last, after it, allow no slice) allows its
        // four string slices whole.
        let st = fast.slice_stats();
        if gi != 2 {
            let inside = st.walked.saturating_sub(2);
            assert!(inside >= 5 && st.applied >= 4 * inside, "case {gi}: {st:?}");
        }
        for w in 0..3u64 {
            let seed = gi as u64 * 89 + w + 1;
            let (mut fast, mut plain) = pair();
            let what = format!("case {gi} walk {w}");
            walk(&mut fast, &mut plain, &what, random_tokens(seed, &eos, 40));
        }
    }
}

/// A repeat of a repeat (`(([0-9]|[a-f]){2}){32}`, MaskBench's Github_medium---o48549):
/// derivre simplifies the outer repeat's last iteration `B{1,1}` to `B`, itself a repeat
/// `X{2}`, whose bounds are not the outer seed's. Taken for them, the last pair's mask
/// lost every two-character token.
#[test]
fn a_repeat_of_a_repeat_keeps_its_own_bounds() {
    let fast_f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let plain_f = fast_f.plain();
    for pattern in ["^(([0-9]|[a-f]){2}){32}$", "^(0x)?(([0-9]|[a-f]|[A-F]){2}){20}$"] {
        let schema = json!({"type": "string", "pattern": pattern}).to_string();
        let src = GrammarSource::JsonSchema(schema);
        let hex = "1234567890123456789012345678901234567890123456abcdef1234567890ab";
        let text = if pattern.contains("0x") {
            format!("\"0x{}\"", &hex[..40])
        } else {
            format!("\"{hex}\"")
        };
        let toks = fast_f.tokenizer().tokenize(&text).unwrap();
        let mut fast = fast_f.matcher_for(fast_f.compile(&src).unwrap()).unwrap();
        let mut plain = plain_f.matcher_for(plain_f.compile(&src).unwrap()).unwrap();
        let n = walk(&mut fast, &mut plain, pattern, |step, _| toks.get(step).copied());
        assert_eq!(n, toks.len() + 1, "{pattern}: the instance is accepted to its end");
        assert!(fast.is_accepting().unwrap());
    }
}

/// Masks where a lexeme must end inside the slices' tokens and the next lexeme may take
/// their rest (a long string's 8,192-character chunks, a Lark lexeme of fixed length
/// followed by one of the same characters), whose walked slices' subtrees past the end are
/// proven whole by the next lexeme's containment, equal the plain computation's across the
/// end: walks take the longest allowed token up to a few hundred characters before it,
/// then random tokens (many of several bytes per character) across it. Also where the next
/// lexeme takes none of the rest (the proof fails: the subtrees are walked).
#[test]
fn boundary_proofs_equal_the_plain_walk() {
    let (fast_f, plain_f, vocab, eos) = o200k_pair();
    let class = r#"[^"\\\x00-\x1f<\[{!]"#;
    let plain = slicer::PLAIN_STRING_CLASS;
    let k = grammars::json_schema::LONG_STRING_CHUNK as usize;
    let long = grammars::json_schema::LONG_STRING;
    let grammars = [
        // (grammar, characters before the first lexeme end)
        (
            GrammarSource::JsonSchema(json!({"type": "string", "maxLength": 100_000}).to_string()),
            k,
        ),
        (GrammarSource::JsonSchema(json!({"type": "string", "minLength": long + 1}).to_string()), k),
        (
            GrammarSource::JsonSchema(
                json!({"type": "object", "properties": {
                    "a": {"type": "string", "maxLength": long + 808}, "b": {"type": "integer"}}, "required": ["a", "b"],
                    "additionalProperties": false})
                .to_string(),
            ),
            k + 6,
        ),
        (GrammarSource::Lark(format!("start: A B \"!\"\nA: /{class}{{12}}/\nB: /{class}*/\n")), 12),
        // The slices' own class (every run of it ends the first lexeme at once): the next
        // lexeme takes every run, or only runs of up to 3 characters; an exact length whose
        // tail after the second chunk is one character.
        (GrammarSource::Lark(format!("start: A B \"<\"\nA: /{plain}{{12}}/\nB: /{plain}*/\n")), 12),
        (
            GrammarSource::Lark(format!(
                "start: A B \"<\"\nA: /{plain}{{12}}/\nB: /{plain}{{0,3}}/\n"
            )),
            12,
        ),
        (
            GrammarSource::JsonSchema(
                json!({"type": "string", "minLength": long + 1, "maxLength": long + 1}).to_string(),
            ),
            k,
        ),
        // The next lexeme takes some of the slices' first characters, not all of them.
        (GrammarSource::Lark(format!("start: A B \"!\"\nA: /{class}{{12}}/\nB: /[a-z ]*/\n")), 12),
        (GrammarSource::Lark("start: A B\nA: /[a-z ]{12}/\nB: /[0-9]+/\n".to_string()), 12),
        // Fixed-length lexemes repeated as a long string's chunks are, but not its chunks:
        // `B` is allowed only after a whole `A`, and the next `A` must begin with `x` (the
        // middle of an `A` takes neither rest past its end as the next row does).
        (GrammarSource::Lark("start: A* B\nA: /[a-z ]{300}/\nB: /!/\n".to_string()), 300),
        (GrammarSource::Lark("start: A* \"!\"\nA: /x[a-z ]{299}/\n".to_string()), 300),
        (GrammarSource::Lark("start: A B\nA: /[a-z ]{12}/\nB: /[a-z ]{0,5}!/\n".to_string()), 12),
    ];
    let (mut masks, mut boundaries, mut chunk_ends) = (0, 0, 0);
    for (gi, (src, end)) in grammars.iter().enumerate() {
        let end: usize = *end;
        let pair = matcher_pairs(&fast_f, &plain_f, gi, src);
        for w in 0..4u64 {
            let mut seed = gi as u64 * 977 + w + 1;
            let (mut fast, mut plain) = pair();
            let what = format!("grammar {gi} walk {w}");
            // Characters consumed; long tokens until `near`, random ones after.
            let near = end.saturating_sub(150 + 40 * w as usize);
            let mut chars = 0usize;
            let mut last: Option<TokenId> = None;
            masks += walk(&mut fast, &mut plain, &what, |step, mask| {
                if let Some(t) = last {
                    chars += vocab
                        .token_bytes(t)
                        .iter()
                        .filter(|&&b| !(0x80..0xC0).contains(&b))
                        .count();
                }
                let choices: Vec<TokenId> = mask.iter().filter(|t| !eos.contains(t)).collect();
                if step >= 300 || choices.is_empty() || chars > end + 120 {
                    return None;
                }
                let t = if chars < near {
                    *choices.iter().max_by_key(|&&t| vocab.token_bytes(t).len()).expect("some")
                } else {
                    choices[lcg(&mut seed) as usize % choices.len()]
                };
                last = Some(t);
                Some(t)
            });
            boundaries += fast.slice_stats().boundaries;
            chunk_ends += fast.slice_stats().chunk_ends;
        }
    }
    println!(
        "{masks} masks compared, {boundaries} with boundary proofs, {chunk_ends} at a chunk \
         end's middle twin"
    );
    assert!(boundaries > 0, "no mask took boundary proofs: the oracle compared nothing");
    assert!(chunk_ends > 0, "no chunk end took its middle's twin: the oracle compared nothing");
}

/// Objects of many optional properties (each row predicts every property still to come)
/// and other shapes with rows of many items: completions that read only the items of such
/// a row that expect their symbol give the plain computation's masks, which read each row
/// whole. The walks write some of the properties, in order, then random tokens.
#[test]
fn completions_into_large_rows_equal_the_plain_walk() {
    let (fast_f, plain_f, _, eos) = o200k_pair();
    let props = |n: usize, v: Value| -> serde_json::Map<String, Value> {
        (0..n).map(|i| (format!("p{i}"), v.clone())).collect()
    };
    let grammars = [
        json!({"type": "object", "properties": props(120, json!({"type": "integer"}))}),
        json!({"type": "object", "properties": props(60, json!({"type": "string", "maxLength": 5})),
            "additionalProperties": false}),
        json!({"type": "array", "items": {"type": "object", "properties":
            props(40, json!({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "boolean"}}]}))}}),
    ];
    let (mut masks, mut indexed) = (0, 0);
    for (gi, schema) in grammars.iter().enumerate() {
        let src = GrammarSource::JsonSchema(schema.to_string());
        let pair = matcher_pairs(&fast_f, &plain_f, gi, &src);
        let text = if gi == 2 {
            r#"[{"p3":1,"p7":[true],"p20":2},{"p1":[]"#
        } else {
            r#"{"p2":1,"p5":7,"p11":3,"p40":"#
        };
        let toks = fast_f.tokenizer().tokenize(text).unwrap();
        for w in 0..3u64 {
            let mut seed = gi as u64 * 313 + w + 1;
            let (mut fast, mut plain) = pair();
            let what = format!("grammar {gi} walk {w}");
            // The prefix (cut at a different place per walk), then random tokens.
            let cut = toks.len() * (w as usize + 1) / 3;
            masks += walk(&mut fast, &mut plain, &what, |step, mask| {
                if step < cut {
                    return Some(toks[step]);
                }
                let choices: Vec<TokenId> = mask.iter().filter(|t| !eos.contains(t)).collect();
                if step >= cut + 40 || choices.is_empty() {
                    return None;
                }
                Some(choices[lcg(&mut seed) as usize % choices.len()])
            });
            indexed += fast.parser_stats().indexed_completions;
            assert_eq!(plain.parser_stats().indexed_completions, 0, "{what}: plain indexed");
        }
    }
    println!("{masks} masks compared, {indexed} completions through a row's index");
    assert!(indexed > 0, "no completion read a row's index: the oracle compared nothing");
}
