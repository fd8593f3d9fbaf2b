//! The containment proofs against brute force over a small alphabet: whenever
//! `check_prefixes` (or `check_prefixes_cheap`) answers `Contained` for a query `C{m,n}` at
//! a lexer state, every string of the query (up to a length bound) keeps the state alive,
//! byte by byte. Random lexemes over `{a, b, c}` with concatenation, alternation, bounded and
//! unbounded repeats, intersections and complements (the shapes the proof rules are about:
//! `B & ~F` with `F` finite, `B* R`, tails), random positions, random queries, a second
//! query per position (remembered walks), and long bounded bodies; each rule that answered
//! is counted (`DerivreLexer::containment_rule_hits`), and rules 2-8 must each have been
//! checked (rule 8 with rule 6 turned off by its limit, `quick_containment_fuel: 0`).

#![cfg(feature = "derivre")]

use std::sync::Arc;

use lexer::{
    Containment, DerivreLexer, LexemeKind, Lexer, LexerLimits, LexerSpec, RegexSpec, StateId,
};
use proptest::prelude::*;

/// The longest query string enumerated.
const MAX_LEN: u32 = 6;

fn atom() -> impl Strategy<Value = RegexSpec> {
    prop_oneof![
        prop::sample::select(vec!["a", "b", "c", "ab", "ba", "abc"]).prop_map(RegexSpec::literal),
        prop::sample::select(vec!["[ab]", "[abc]", "[bc]", "a*", "[ab]*", "(ab)*", "[abc]{0,3}"])
            .prop_map(RegexSpec::regex),
    ]
}

fn regex() -> impl Strategy<Value = RegexSpec> {
    atom().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..3).prop_map(RegexSpec::Concat),
            prop::collection::vec(inner.clone(), 2..3).prop_map(RegexSpec::Or),
            (inner.clone(), 0u32..2, prop::option::of(1u32..4)).prop_map(|(r, min, max)| {
                RegexSpec::Repeat { expr: Box::new(r), min, max: max.map(|m| m + min) }
            }),
            // B & ~F, F finite (the free key beside named ones).
            (
                inner.clone(),
                prop::collection::vec(prop::sample::select(vec!["a", "ab", "abc", "b"]), 1..3)
            )
                .prop_map(|(b, f)| {
                    let f = RegexSpec::Or(f.into_iter().map(RegexSpec::literal).collect());
                    RegexSpec::And(vec![b, RegexSpec::Not(Box::new(f))])
                }),
            // B* R (an unanchored pattern's shape).
            (prop::sample::select(vec!["[ab]", "[abc]", "a"]), inner.clone()).prop_map(|(b, r)| {
                RegexSpec::Concat(vec![RegexSpec::regex(format!("{b}*")), r])
            }),
            (inner.clone(), inner).prop_map(|(a, b)| RegexSpec::And(vec![a, b])),
        ]
    })
}

fn query() -> impl Strategy<Value = (String, u32, Option<u32>)> {
    (
        prop::sample::select(vec!["[a]", "[ab]", "[abc]", "[b]", "[bc]"]),
        0u32..3,
        prop::option::of(0u32..4),
    )
        .prop_map(|(c, m, n)| (c.to_string(), m.max(1), n.map(|n| n + m.max(1))))
}

/// Every string over `class` with length in `min..=max` (at most [`MAX_LEN`]).
fn strings(class: &str, min: u32, max: u32) -> Vec<Vec<u8>> {
    let letters: Vec<u8> = class.bytes().filter(|b| b.is_ascii_lowercase()).collect();
    let mut out = Vec::new();
    let mut layer: Vec<Vec<u8>> = vec![Vec::new()];
    for len in 0..=max.min(MAX_LEN) {
        if len >= min {
            out.extend(layer.iter().cloned());
        }
        layer = layer
            .iter()
            .flat_map(|s| letters.iter().map(move |&c| [s.as_slice(), &[c]].concat()))
            .collect();
    }
    out
}

fn alive_along(l: &mut DerivreLexer, state: StateId, s: &[u8]) -> bool {
    let mut st = state;
    for &b in s {
        st = l.advance(st, b).expect("advance");
        if st == StateId::DEAD {
            return false;
        }
    }
    true
}

#[test]
fn contained_means_every_query_string_lives() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    let mut runner = TestRunner::new(Config { rng_seed: RngSeed::Fixed(11), ..Config::default() });
    let strat = (
        prop::collection::vec(regex(), 1..3),
        prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 0..4),
        query(),
        any::<bool>(),
    );
    let (mut built, mut contained, mut strings_checked) = (0, 0, 0);
    let mut by_rule = [0u64; 9];
    for _ in 0..600 {
        let (lexemes, path, (class, min, max), cheap) =
            strat.new_tree(&mut runner).expect("a case").current();
        let mut spec = LexerSpec::new();
        for (i, r) in lexemes.iter().enumerate() {
            spec.add(format!("L{i}"), r.clone(), LexemeKind::Greedy);
        }
        let Ok(mut l) = DerivreLexer::new(&spec) else { continue };
        let Ok(mut st) = l.start_state(&spec.all()) else { continue };
        built += 1;
        for &b in &path {
            let next = l.advance(st, b).expect("advance");
            if next == StateId::DEAD {
                break;
            }
            st = next;
        }
        let q = match max {
            Some(n) => RegexSpec::regex(format!("{class}{{{min},{n}}}")),
            None => RegexSpec::regex(format!("{class}{{{min},}}")),
        };
        let answer = if cheap { l.check_prefixes_cheap(st, &q) } else { l.check_prefixes(st, &q) };
        if answer != Containment::Contained {
            continue;
        }
        contained += 1;
        let hits = l.containment_rule_hits();
        for s in strings(&class, min, max.unwrap_or(MAX_LEN)) {
            strings_checked += 1;
            assert!(
                alive_along(&mut l, st, &s),
                "{q:?} proved contained after {:?} but {:?} dies; lexemes {lexemes:?}",
                String::from_utf8_lossy(&path),
                String::from_utf8_lossy(&s)
            );
        }
        // The same class again, shorter: answered from the walk remembered (rule 2).
        let q2 = RegexSpec::regex(format!("{class}{{1,{}}}", min.max(1)));
        if l.check_prefixes(st, &q2) == Containment::Contained {
            for s in strings(&class, 1, min.max(1)) {
                strings_checked += 1;
                assert!(alive_along(&mut l, st, &s), "{q2:?} after {q:?}; lexemes {lexemes:?}");
            }
        }
        for (total, h) in by_rule.iter_mut().zip(l.containment_rule_hits()) {
            *total += h;
        }
        let _ = hits;
    }
    // Long bounded bodies: a class walk that gives up on its budget of new states, answered
    // by the full symbolic check (rule 8), checked on its short strings.
    for (lexeme, query) in [
        ("[ab]{0,400}c", "[ab]{1,300}"),
        ("(a|b){0,500}(c|a)", "[ab]{1,450}"),
        ("[abc]{0,300}&~(.*cc.*)", "[ab]{1,250}"),
        ("([ab]{0,400}c)&~([ab]*(aaab|abba|baab|bbba)[ab]*c)", "[ab]{1,300}"),
        ("(([ab]{3})*|[ab]{0,350})c&~(.*abab.*)", "[ab]{1,320}"),
    ] {
        let mut spec = LexerSpec::new();
        spec.add("L", RegexSpec::regex(lexeme), LexemeKind::Greedy);
        let mut l = DerivreLexer::new(&spec).expect("builds");
        let st = l.start_state(&spec.all()).expect("start");
        let q = RegexSpec::regex(query);
        if l.check_prefixes(st, &q) == Containment::Contained {
            contained += 1;
            for s in strings("[ab]", 1, MAX_LEN) {
                strings_checked += 1;
                assert!(alive_along(&mut l, st, &s), "{query} in {lexeme}: {s:?} dies");
            }
        }
        for (total, h) in by_rule.iter_mut().zip(l.containment_rule_hits()) {
            *total += h;
        }
    }
    // A minimum beside an unanchored pattern, then a tail (a JSON string's `minLength` and
    // `pattern`): the head takes `S{m,}` as `S*` (rule 5), also past the pattern's first
    // characters (several heads); a bounded body, or a pattern whose witness the body does
    // not hold, must not be proved by it.
    let mut head_hits = 0;
    for (body, others) in [
        ("[abc]{5,}", &["[abc]*ab[abc]*"][..]),
        ("[abc]{4,}", &["[abc]*a[bc]*b[abc]*"]),
        ("[abc]+", &["[abc]*ab[abc]*"]),
        ("[ab]{3,}", &["[abc]*c[abc]*"]),
        ("[abc]{2,5}", &["[abc]*ab[abc]*"]),
        ("[abc]{3,}", &["[abc]*b[abc]*", "[abc]*(a|b)c[abc]*"]),
    ] {
        let mut ops = vec![RegexSpec::regex(body)];
        ops.extend(others.iter().map(|&o| RegexSpec::regex(o)));
        let lexeme = RegexSpec::Concat(vec![RegexSpec::And(ops), RegexSpec::literal("d")]);
        for path in ["", "a", "ab", "c", "abca", "cab"] {
            for query in ["[abc]{1,}", "[ab]{1,4}", "[bc]{2,6}", "[abc]{1,6}"] {
                let mut spec = LexerSpec::new();
                spec.add("L", lexeme.clone(), LexemeKind::Greedy);
                let mut l = DerivreLexer::new(&spec).expect("builds");
                let mut st = l.start_state(&spec.all()).expect("start");
                for &b in path.as_bytes() {
                    st = l.advance(st, b).expect("advance");
                }
                if st == StateId::DEAD {
                    continue;
                }
                let q = RegexSpec::regex(query);
                if l.check_prefixes(st, &q) != Containment::Contained {
                    continue;
                }
                contained += 1;
                let (class, bounds) = query.split_once('{').expect("a bound");
                let max = bounds.trim_end_matches('}').split(',').nth(1).expect("a range");
                for s in strings(class, 1, max.parse().unwrap_or(MAX_LEN)) {
                    strings_checked += 1;
                    assert!(
                        alive_along(&mut l, st, &s),
                        "{query} in {lexeme:?} after {path:?}: {s:?} dies"
                    );
                }
                head_hits += l.containment_rule_hits()[5];
                for (total, h) in by_rule.iter_mut().zip(l.containment_rule_hits()) {
                    *total += h;
                }
            }
        }
    }
    assert!(head_hits > 0, "no minimum beside a pattern was proved by its head");
    // Rule 8 with rule 6 off (`quick_containment_fuel: 0`, a public limit): a star of
    // overlapping words before a bounded body, whose class walk gives up (more than a few
    // states per depth), answered by the full symbolic check.
    for (lexeme, query) in [
        ("(a|b|c|ab|bc|ca|abc|bca|cab|cc|aa|bb)*d[abc]{0,300}e", "[abc]{1,250}"),
        ("(a|b|ab|ba|aab|bba|abb)*c[ab]{0,200}", "[ab]{1,150}"),
        ("(a|b|c|ab|bc|ca|abc|bca|cab|cc|aa|bb)*d", "[ab]{1,}"),
        ("(a|b|c|ab|bc|ca|abc|bca|cab|cc|aa|bb)*d", "[bc]{2,40}"),
    ] {
        let mut spec = LexerSpec::new();
        spec.add("L", RegexSpec::regex(lexeme), LexemeKind::Greedy);
        let limits = LexerLimits { quick_containment_fuel: 0, ..LexerLimits::default() };
        let mut l = DerivreLexer::with_limits(Arc::new(spec.clone()), limits).expect("builds");
        let st = l.start_state(&spec.all()).expect("start");
        let q = RegexSpec::regex(query);
        if l.check_prefixes(st, &q) == Containment::Contained {
            contained += 1;
            let class = &query[..query.find('{').expect("a bound")];
            for s in strings(class, 1, MAX_LEN) {
                strings_checked += 1;
                assert!(alive_along(&mut l, st, &s), "{query} in {lexeme}: {s:?} dies");
            }
        }
        for (total, h) in by_rule.iter_mut().zip(l.containment_rule_hits()) {
            *total += h;
        }
    }
    println!("Contained answers checked by rule (containment.rs numbering): {by_rule:?}");
    // Every rule that can answer Contained was checked against brute force at least once
    // (rule 1, the first-byte probe, only ever answers Unknown).
    for rule in 2..=8 {
        assert!(by_rule[rule] > 0, "rule {rule} never answered Contained: {by_rule:?}");
    }
    println!("{built} lexers, {contained} Contained answers, {strings_checked} strings checked");
    assert!(contained >= 30, "too few Contained answers to check: {contained}");
}
