//! Property tests: the derivre lexer and the regex-automata lexer agree on random lexeme
//! sets and inputs (state by state), and the derivre lexer agrees with derivre's own
//! single-regex matcher per lexeme, `&` and `~` included.
#![cfg(feature = "derivre")]

use lexer::{
    tokenize, AutomataLexer, DerivreLexer, LexemeIdx, LexemeKind, LexemeSet, Lexer, LexerSpec,
    RegexSpec, StateId,
};
use proptest::prelude::*;

/// Plain regexes (no extended constructs) over a tiny alphabet, so that random inputs hit
/// interesting paths.
fn plain() -> impl Strategy<Value = RegexSpec> {
    let leaf = prop_oneof![
        "[abc]{1,3}".prop_map(RegexSpec::Literal),
        Just(RegexSpec::ByteSet(vec![(b'a', b'b')])),
        Just(RegexSpec::regex("[bc]")),
        Just(RegexSpec::regex("a|bc")),
        Just(RegexSpec::Empty),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(RegexSpec::Concat),
            prop::collection::vec(inner.clone(), 1..3).prop_map(RegexSpec::Or),
            (inner, 0u32..3, prop::option::of(0u32..3)).prop_map(|(e, min, extra)| {
                RegexSpec::Repeat { expr: Box::new(e), min, max: extra.map(|x| min + x) }
            }),
        ]
    })
}

/// Plain plus `&` and `~`.
fn extended() -> impl Strategy<Value = RegexSpec> {
    plain().prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(RegexSpec::And),
            inner.prop_map(|e| RegexSpec::Not(Box::new(e))),
        ]
    })
}

fn spec_of(rxs: Vec<(RegexSpec, bool)>) -> LexerSpec {
    let mut spec = LexerSpec::new();
    for (i, (rx, lazy)) in rxs.into_iter().enumerate() {
        let kind = if lazy { LexemeKind::Lazy } else { LexemeKind::Greedy };
        spec.add(format!("L{i}"), rx, kind);
    }
    spec
}

fn walk(l: &mut dyn Lexer, allowed: &LexemeSet, input: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = l.start_state(allowed).unwrap();
    for &b in input {
        let f = l.forced_byte(s).unwrap();
        out.push(format!(
            "{:?} acc={:?} pos={:?} must_end={} forced_some={}",
            s == StateId::DEAD,
            l.accepting(s),
            l.possible(s),
            l.flags(s).must_end(),
            f.is_some()
        ));
        s = l.advance(s, b).unwrap();
    }
    out.push(format!(
        "{:?} acc={:?} pos={:?} must_end={}",
        s == StateId::DEAD,
        l.accepting(s),
        l.possible(s),
        l.flags(s).must_end(),
    ));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn derivre_and_automata_agree(
        rxs in prop::collection::vec((plain(), any::<bool>()), 1..5),
        inputs in prop::collection::vec("[abcd]{0,10}", 1..6),
        subset in any::<u8>(),
    ) {
        let spec = spec_of(rxs);
        let mut d = DerivreLexer::new(&spec).unwrap();
        let mut a = AutomataLexer::new(&spec).unwrap();
        let all = spec.all();
        let some: LexemeSet = all.iter().filter(|i| subset & (1 << i.0) != 0).collect();
        for input in &inputs {
            for allowed in [&all, &some] {
                let td = tokenize(&mut d, allowed, input.as_bytes());
                let ta = tokenize(&mut a, allowed, input.as_bytes());
                prop_assert_eq!(&td, &ta, "input {:?} allowed {:?}", input, allowed);
                // State by state, except forced bytes, where derivre may answer None more
                // often (both answers are exact when Some).
                let wd = walk(&mut d, allowed, input.as_bytes());
                let wa = walk(&mut a, allowed, input.as_bytes());
                for (x, y) in wd.iter().zip(&wa) {
                    let strip = |s: &str| s.split(" forced_some").next().unwrap().to_string();
                    prop_assert_eq!(strip(x), strip(y), "input {:?}", input);
                }
            }
        }
    }

    #[test]
    fn derivre_lexer_matches_derivre_regex_per_lexeme(
        rx in extended(),
        input in "[abcd]{0,8}",
    ) {
        let mut spec = LexerSpec::new();
        spec.add("X", rx.clone(), LexemeKind::Greedy);
        let mut lx = DerivreLexer::new(&spec).unwrap();
        // The oracle: derivre's own matcher, on the same expression built independently.
        let mut b = derivre::RegexBuilder::new();
        let e = b.mk(&to_ast(&rx)).unwrap();
        let mut oracle = b.to_regex(e);
        let mut s = lx.start_state(&spec.all()).unwrap();
        let mut o = oracle.initial_state();
        for &byte in input.as_bytes() {
            prop_assert_eq!(s == StateId::DEAD, o.is_dead(), "input {:?}", input);
            prop_assert_eq!(lx.flags(s).is_accepting(), oracle.is_accepting(o));
            s = lx.advance(s, byte).unwrap();
            o = oracle.transition(o, byte);
        }
        prop_assert_eq!(s == StateId::DEAD, o.is_dead(), "input {:?}", input);
        prop_assert_eq!(lx.flags(s).is_accepting(), oracle.is_accepting(o));
        prop_assert_eq!(lx.accepting(s).contains(LexemeIdx(0)), oracle.is_accepting(o));
    }
}

/// The spec as a derivre AST, written independently of the crate's translation.
fn to_ast(rx: &RegexSpec) -> derivre::RegexAst {
    use derivre::RegexAst as A;
    match rx {
        RegexSpec::Literal(s) => A::Literal(s.clone()),
        RegexSpec::ByteSet(r) => {
            let mut set = vec![0u32; 8];
            for &(lo, hi) in r {
                for x in lo..=hi {
                    set[x as usize / 32] |= 1 << (x % 32);
                }
            }
            A::ByteSet(set)
        }
        RegexSpec::Regex(s) => A::Regex(s.clone()),
        // Literals one after another as one literal: derivre (0.3.13) panics on a union of
        // two spellings of one string (`"b" "aa" | "baa"`), which the crate's translation
        // guards against (`alternatives_spelling_one_string_twice_build`) and this oracle,
        // plain derivre, must not meet.
        RegexSpec::Concat(v) => {
            let mut parts: Vec<A> = Vec::new();
            let mut flat: Vec<&RegexSpec> = v.iter().collect();
            while let Some(i) = flat.iter().position(|x| matches!(x, RegexSpec::Concat(_))) {
                let RegexSpec::Concat(inner) = flat[i] else { unreachable!() };
                flat.splice(i..=i, inner.iter());
            }
            for x in flat {
                match (x, parts.last_mut()) {
                    (RegexSpec::Literal(s), Some(A::Literal(prev))) => prev.push_str(s),
                    (RegexSpec::Empty, _) => {}
                    _ => parts.push(to_ast(x)),
                }
            }
            A::Concat(parts)
        }
        RegexSpec::Or(v) => A::Or(v.iter().map(to_ast).collect()),
        RegexSpec::And(v) => A::And(v.iter().map(to_ast).collect()),
        RegexSpec::Not(e) => A::Not(Box::new(to_ast(e))),
        RegexSpec::Repeat { expr, min, max } => {
            A::Repeat(Box::new(to_ast(expr)), *min, max.unwrap_or(u32::MAX))
        }
        RegexSpec::Empty => A::EmptyString,
        other => panic!("not generated: {other:?}"),
    }
}
