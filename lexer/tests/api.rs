//! Behaviour of the public API beyond the conformance cases: limits and errors, the warm
//! table, look-ahead, containment, skip lexemes, the `Checked` wrapper, serde.

use std::sync::Arc;

use lexer::{
    AutomataLexer, Checked, ErrorKind, LexemeIdx, LexemeKind, LexemeSet, Lexer, LexerLimits,
    LexerSpec, RegexSpec, StateFlags, StateId,
};

fn spec(lexemes: &[(&str, RegexSpec, LexemeKind)]) -> LexerSpec {
    let mut s = LexerSpec::new();
    for (n, r, k) in lexemes {
        s.add(*n, r.clone(), *k);
    }
    s
}

#[test]
fn spec_serde_round_trip() {
    let s = spec(&[
        ("A", RegexSpec::regex("[a-z]+"), LexemeKind::Greedy),
        (
            "B",
            RegexSpec::Repeat { expr: Box::new(RegexSpec::literal("x")), min: 1, max: None },
            LexemeKind::SkipOnce,
        ),
    ]);
    let j = serde_json::to_string(&s).unwrap();
    assert!(j.contains(r#""kind":"skip_once""#), "{j}");
    let back: LexerSpec = serde_json::from_str(&j).unwrap();
    assert_eq!(back, s);
}

#[test]
fn unsupported_constructs_are_a_clear_error_in_automata() {
    let s =
        spec(&[("NOT_A", RegexSpec::Not(Box::new(RegexSpec::literal("a"))), LexemeKind::Greedy)]);
    let e = AutomataLexer::new(&s).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Unsupported { feature: "not", lexeme } if lexeme == "NOT_A")
    );
    assert!(e.to_string().contains("not supported"), "{e}");
}

#[test]
fn bad_ids_are_errors_not_panics() {
    let s = spec(&[("A", RegexSpec::literal("a"), LexemeKind::Greedy)]);
    let mut l = AutomataLexer::new(&s).unwrap();
    let bad: LexemeSet = [LexemeIdx(5)].into_iter().collect();
    assert!(matches!(
        l.start_state(&bad).unwrap_err().kind(),
        ErrorKind::InvalidLexeme { idx: 5, .. }
    ));
    assert!(matches!(
        l.advance(StateId(99), b'a').unwrap_err().kind(),
        ErrorKind::InvalidState { state: 99 }
    ));
    assert_eq!(l.flags(StateId(99)), StateFlags::empty());
    assert!(l.accepting(StateId(99)).is_empty());
}

#[test]
fn too_many_states_automata() {
    let s = Arc::new(spec(&[("A", RegexSpec::regex("[a-z]{0,40}"), LexemeKind::Greedy)]));
    let limits = LexerLimits { max_states: 10, ..LexerLimits::default() };
    let e = AutomataLexer::with_limits(s, limits).unwrap_err();
    assert!(e.is_limit(), "{e}");
}

/// A foreign lexer that returns a state id it never created.
struct Liar;
impl Lexer for Liar {
    fn num_lexemes(&self) -> usize {
        1
    }
    fn num_states(&self) -> usize {
        2
    }
    fn start_state(&mut self, _: &LexemeSet) -> Result<StateId, lexer::Error> {
        Ok(StateId(1))
    }
    fn advance(&mut self, _: StateId, _: u8) -> Result<StateId, lexer::Error> {
        Ok(StateId(7))
    }
    fn flags(&self, _: StateId) -> StateFlags {
        StateFlags::empty()
    }
    fn accepting(&self, _: StateId) -> &LexemeSet {
        const { &LexemeSet::new() }
    }
    fn possible(&self, _: StateId) -> &LexemeSet {
        const { &LexemeSet::new() }
    }
    fn num_bytes(&self) -> usize {
        0
    }
}

#[test]
fn checked_catches_out_of_bounds_states() {
    let mut l = Checked::new(Liar);
    let s = l.start_state(&LexemeSet::all(1)).unwrap();
    let e = l.advance(s, b'x').unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::ForeignLexer { .. }), "{e}");
}

#[cfg(feature = "derivre")]
mod derivre_lexer {
    use super::*;
    use lexer::{tokenize, Containment, DerivreLexer, Step};

    #[test]
    fn regex_errors_name_the_lexeme() {
        let s = spec(&[("BROKEN", RegexSpec::regex("a(b"), LexemeKind::Greedy)]);
        let e = DerivreLexer::new(&s).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Regex { lexeme, .. } if lexeme == "BROKEN"));
        assert!(e.to_string().contains("BROKEN"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let mut r = RegexSpec::literal("a");
        for _ in 0..1000 {
            r = RegexSpec::Concat(vec![r]);
        }
        let s = spec(&[("DEEP", r, LexemeKind::Greedy)]);
        let e = DerivreLexer::new(&s).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::TooDeep { limit: 200, .. }), "{e}");
        let e = AutomataLexer::new(&s).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::TooDeep { .. }), "{e}");
    }

    #[test]
    fn state_limit_is_an_error() {
        let s = Arc::new(spec(&[("A", RegexSpec::regex("[a-z]{0,100}"), LexemeKind::Greedy)]));
        let limits = LexerLimits { max_states: 20, ..LexerLimits::default() };
        let mut l = DerivreLexer::with_limits(s.clone(), limits).unwrap();
        let e = tokenize(&mut l, &s.all(), &[b'a'; 50]).unwrap_err();
        assert!(
            matches!(e, lexer::TokenizeError::Lexer(ref e) if matches!(e.kind(), ErrorKind::TooManyStates { limit: 20 })),
            "{e}"
        );
    }

    #[test]
    fn fuel_limit_is_an_error() {
        // Intersections of counted repeats make large derivatives.
        let rx = RegexSpec::And(vec![
            RegexSpec::regex("(a|b)*a(a|b){12}"),
            RegexSpec::Not(Box::new(RegexSpec::regex("(a|b)*b(a|b){11}"))),
        ]);
        let s = Arc::new(spec(&[("HARD", rx, LexemeKind::Greedy)]));
        let limits = LexerLimits { step_fuel: 50, ..LexerLimits::default() };
        let mut l = DerivreLexer::with_limits(s.clone(), limits).unwrap();
        let e = tokenize(&mut l, &s.all(), b"abababababababab").unwrap_err();
        assert!(
            matches!(e, lexer::TokenizeError::Lexer(ref e) if matches!(e.kind(), ErrorKind::StepFuelExhausted { limit: 50 })),
            "{e}"
        );
    }

    #[test]
    fn warm_transitions_build_nothing() {
        let s = spec(&[
            ("ID", RegexSpec::regex("[a-z]+"), LexemeKind::Greedy),
            ("WS", RegexSpec::regex(" +"), LexemeKind::Skip),
        ]);
        let mut l = DerivreLexer::new(&s).unwrap();
        let input = b"hello world foo bar";
        let a = tokenize(&mut l, &s.all(), input).unwrap();
        let (states, fuel) = (l.num_states(), l.fuel_used());
        let b = tokenize(&mut l, &s.all(), input).unwrap();
        assert_eq!(a, b);
        assert_eq!(l.num_states(), states);
        assert_eq!(l.fuel_used(), fuel, "a warm pass ran the derivative engine");
        // A clone keeps the warm table and is independent.
        let mut c = l.clone();
        tokenize(&mut c, &s.all(), b"zzz").unwrap();
        assert_eq!(l.fuel_used(), fuel);
    }

    #[test]
    fn skip_lexemes_are_reported() {
        let s = spec(&[
            ("NUM", RegexSpec::regex("[0-9]+"), LexemeKind::Greedy),
            ("WS", RegexSpec::regex("[ ]+"), LexemeKind::Skip),
        ]);
        let num = s.lookup("NUM").unwrap();
        let mut allowed: LexemeSet = [num].into_iter().collect();
        allowed.union_with(&s.skip_lexemes(Default::default()));
        let mut l = DerivreLexer::new(&s).unwrap();
        let st = l.start_state(&allowed).unwrap();
        let Step::Continue(ws) = l.step(st, b' ').unwrap() else { panic!() };
        assert_eq!(l.accepting(ws), &s.skip_lexemes(Default::default()));
        assert_eq!(l.step(ws, b'1').unwrap(), Step::EndBefore);
    }

    #[test]
    fn lookahead_length_is_reported() {
        let s = spec(&[(
            "TEXT",
            RegexSpec::Concat(vec![
                RegexSpec::regex("[a-z]*"),
                RegexSpec::LookAhead(Box::new(RegexSpec::literal("<END>"))),
            ]),
            LexemeKind::Lazy,
        )]);
        let mut l = DerivreLexer::new(&s).unwrap();
        let t = tokenize(&mut l, &s.all(), b"abc<END>").unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].end, t[0].lookahead), (8, 5));
    }

    #[test]
    fn containment_of_a_slice_in_a_string_body() {
        let s = spec(&[("STRING", RegexSpec::regex(r#""[^"\\\x00-\x1F]*""#), LexemeKind::Greedy)]);
        let mut l = DerivreLexer::new(&s).unwrap();
        let st = l.start_state(&s.all()).unwrap();
        let inside = l.advance(st, b'"').unwrap();
        let slice = RegexSpec::regex(r#"[^"\\\x00-\x1F\x7F]{1,10}"#);
        assert_eq!(l.check_prefixes(inside, &slice), Containment::Contained);
        // Before the opening quote, or with quotes in the slice, it is not proven.
        assert_eq!(l.check_prefixes(st, &slice), Containment::Unknown);
        let with_quote = RegexSpec::regex(r#"[a"]{1,10}"#);
        assert_eq!(l.check_prefixes(inside, &with_quote), Containment::Unknown);
        // The default (the DFA walk) for the regex-automata lexer.
        let mut a = AutomataLexer::new(&s).unwrap();
        let st = a.start_state(&s.all()).unwrap();
        assert_eq!(a.check_prefixes(st, &slice), Containment::Unknown);
        let inside = a.advance(st, b'"').unwrap();
        assert_eq!(a.check_prefixes(inside, &slice), Containment::Contained);
    }

    #[test]
    fn containment_in_a_bounded_string_follows_the_count() {
        // `"` C{0,50} `"`: after k characters, C{a,b} is a prefix set iff b <= 50 - k; the
        // walk over the DFA decides it for both lexers, bounded and unbounded queries.
        let body = r#"[^"\\\x00-\x1F\x7F]"#;
        let s =
            spec(&[("S", RegexSpec::regex(format!(r#""{body}{{0,50}}""#)), LexemeKind::Greedy)]);
        let mut d = DerivreLexer::new(&s).unwrap();
        let mut a = AutomataLexer::new(&s).unwrap();
        for (name, l) in [("derivre", &mut d as &mut dyn Lexer), ("automata", &mut a)] {
            let mut st = l.start_state(&s.all()).unwrap();
            st = l.advance(st, b'"').unwrap();
            for k in 0..=50u32 {
                for (lo, hi) in [(2, 11), (12, 31), (1, 1), (50, 50)] {
                    let q = RegexSpec::regex(format!("{body}{{{lo},{hi}}}"));
                    let want =
                        if hi <= 50 - k { Containment::Contained } else { Containment::Unknown };
                    assert_eq!(l.check_prefixes(st, &q), want, "{name}: k={k} {{{lo},{hi}}}");
                }
                let plus = RegexSpec::regex(format!("{body}{{32,}}"));
                assert_eq!(l.check_prefixes(st, &plus), Containment::Unknown, "{name}: k={k} +");
                // Multi-byte characters count as one: advance by 'é' (2 bytes) every other step.
                let c: &[u8] = if k % 2 == 0 { "é".as_bytes() } else { b"x" };
                for &b in c {
                    st = l.advance(st, b).unwrap();
                }
            }
        }
        // Unbounded body: every repeat, bounded or not, is contained (a repeated state set).
        let s = spec(&[("S", RegexSpec::regex(format!(r#""{body}*""#)), LexemeKind::Greedy)]);
        let mut d = DerivreLexer::new(&s).unwrap();
        let st = d.start_state(&s.all()).unwrap();
        let st = d.advance(st, b'"').unwrap();
        let plus = RegexSpec::regex(format!("{body}{{32,}}"));
        assert_eq!(d.check_prefixes(st, &plus), Containment::Contained);
        // A class with a quote in it is not contained.
        let q = RegexSpec::regex(r#"[a"]{1,3}"#);
        assert_eq!(d.check_prefixes(st, &q), Containment::Unknown);
    }

    #[test]
    fn a_run_automaton_is_built_where_the_repeat_starts() {
        // `"` C{0,1000} `"`: the first position inside the string has a counter twin (more
        // room than the longest token), and the automaton its last positions need is built
        // then, once, and handed out once; the run twin near the bound uses that one.
        let s = spec(&[("S", RegexSpec::regex(r#""[a-z ]{0,1000}""#), LexemeKind::Greedy)]);
        let mut d = DerivreLexer::new(&s).unwrap();
        d.set_token_horizon(16);
        let mut st = d.start_state(&s.all()).unwrap();
        st = d.advance(st, b'"').unwrap();
        assert!(d.take_new_run_dfas().is_empty(), "nothing before a twin is asked");
        assert_ne!(d.mask_twin(st).unwrap(), st);
        let built = d.take_new_run_dfas();
        assert_eq!(built.len(), 1, "the repeat's character automaton, at its start");
        assert!(d.take_new_run_dfas().is_empty(), "handed out once");
        for _ in 0..995 {
            st = d.advance(st, b'a').unwrap();
            d.mask_twin(st).unwrap(); // as a matcher asks at each position
        }
        let rb = d.run_bound(st).unwrap().expect("a run twin near the bound");
        assert!(std::sync::Arc::ptr_eq(&rb.dfa, &built[0]));
        assert_eq!((rb.min, rb.max), (0, 5));
        assert!(d.take_new_run_dfas().is_empty(), "not built again");
    }

    #[test]
    fn a_maximum_without_room_under_an_intersection_is_kept() {
        // `[a-z]{0,10}-[a-z]{0,1000} & [a-z-]*`, horizon 8 (a token and a byte start at
        // most 9 iterations): after one letter the first repeat has 9 left, no room for a
        // completion, and is kept exact; the second, relaxed, leaves room for the twin's
        // completions (a `-` within 10 bytes). Relaxing both left the twin no room at all:
        // no twin, after a search of its completions at every position.
        let both = RegexSpec::And(vec![
            RegexSpec::regex("[a-z]{0,10}-[a-z]{0,1000}"),
            RegexSpec::regex("[a-z-]*"),
        ]);
        let s = spec(&[("S", both, LexemeKind::Greedy)]);
        let mut d = DerivreLexer::new(&s).unwrap();
        d.set_token_horizon(8);
        let st = d.start_state(&s.all()).unwrap();
        let st = d.advance(st, b'a').unwrap();
        assert_ne!(d.mask_twin(st).unwrap(), st, "the roomy repeat relaxed");
    }

    #[test]
    fn table_memory_is_states_times_classes() {
        let s = spec(&[("ID", RegexSpec::regex("[a-z]+"), LexemeKind::Greedy)]);
        let mut l = DerivreLexer::new(&s).unwrap();
        tokenize(&mut l, &s.all(), b"abc").unwrap();
        assert_eq!(l.num_classes(), 3);
        assert!(l.table_bytes() >= l.num_states() * l.num_classes() * 4);
        assert!(l.num_bytes() > l.table_bytes());
    }
}

/// A copy of a lexer (what a new matcher of a grammar starts from) shares the states known
/// when it was made, by number, and then learns on its own: new states in either do not show
/// in the other, and every walk ends where a fresh lexer's does (same sets).
#[cfg(feature = "derivre")]
#[test]
fn a_copy_shares_known_states_and_learns_on_its_own() {
    use lexer::DerivreLexer;
    let s = spec(&[
        ("WORD", RegexSpec::regex("[a-z]+x"), LexemeKind::Greedy),
        ("KEY", RegexSpec::regex("key|kez|kay"), LexemeKind::Greedy),
        ("NUM", RegexSpec::regex("[0-9]+"), LexemeKind::Greedy),
    ]);
    let all: LexemeSet = (0..3).map(LexemeIdx).collect();
    let walk = |l: &mut DerivreLexer, text: &str| -> StateId {
        let mut st = l.start_state(&all).unwrap();
        for &b in text.as_bytes() {
            st = l.advance(st, b).unwrap();
        }
        st
    };
    let mut a = DerivreLexer::new(&s).unwrap();
    let ke = walk(&mut a, "ke");
    let known = a.num_states();
    let mut b = a.clone();
    assert_eq!(walk(&mut b, "ke"), ke, "a known state keeps its number in the copy");
    let bz = walk(&mut b, "kez");
    let a1 = walk(&mut a, "123");
    assert!(b.num_states() > known && a.num_states() > known);
    assert_eq!(b.num_states() - known, 1, "the copy learned only `kez`'s state");
    // After a digit, `[0-9]+`'s derivative loops: one state for "123".
    assert_eq!(a.num_states() - known, 1, "the original learned only the digits' state");
    for (l, st, text) in [(&mut a, a1, "123"), (&mut b, bz, "kez")] {
        let mut fresh = DerivreLexer::new(&s).unwrap();
        let f = walk(&mut fresh, text);
        assert_eq!(l.accepting(st), fresh.accepting(f), "{text}");
        assert_eq!(l.possible(st), fresh.possible(f), "{text}");
        assert_eq!(l.flags(st), fresh.flags(f), "{text}");
    }
    // The same sets in both, states learned apart (`kaz`: not a key, a word's prefix).
    let (sa, sb) = (walk(&mut a, "kay"), walk(&mut b, "kay"));
    assert_eq!(a.accepting(sa), b.accepting(sb));
    let (sa, sb) = (walk(&mut a, "kaz"), walk(&mut b, "kaz"));
    assert_eq!(a.possible(sa), b.possible(sb));
    assert!(a.accepting(sa).is_empty());
}

/// Alternatives that spell one string under different nodes (`"b" "aa"` and `"baa"`, Lark
/// `A: "b" "aa" | "baa"`): derivre's prefix tree for a union panicked on the pair (found by
/// the `agree` property test); now one of them is dropped, the same language.
#[cfg(feature = "derivre")]
#[test]
fn alternatives_spelling_one_string_twice_build() {
    use lexer::DerivreLexer;
    let lit = |s: &str| RegexSpec::Literal(s.into());
    let twice = RegexSpec::Or(vec![RegexSpec::Concat(vec![lit("b"), lit("aa")]), lit("baa")]);
    let cases = [
        twice.clone(),
        RegexSpec::Not(Box::new(twice.clone())),
        RegexSpec::Concat(vec![twice.clone(), lit("x")]),
        RegexSpec::Or(vec![RegexSpec::Concat(vec![lit("b"), lit("aa"), lit("x")]), lit("baax")]),
        RegexSpec::Or(vec![
            RegexSpec::Repeat { expr: Box::new(lit("a")), min: 2, max: Some(2) },
            lit("aa"),
        ]),
        RegexSpec::Or(vec![
            RegexSpec::regex("b(?:aa)"),
            lit("baa"),
            RegexSpec::Concat(vec![lit("ba"), lit("a")]),
        ]),
    ];
    let accepts = |rx: &RegexSpec, input: &[u8]| {
        let s = spec(&[("A", rx.clone(), LexemeKind::Greedy)]);
        let mut l = DerivreLexer::new(&s).expect("builds");
        let mut st = l.start_state(&s.all()).unwrap();
        for &b in input {
            st = l.advance(st, b).unwrap();
        }
        l.flags(st).is_accepting()
    };
    assert!(accepts(&cases[0], b"baa"));
    assert!(!accepts(&cases[0], b"ba"));
    assert!(!accepts(&cases[1], b"baa"));
    assert!(accepts(&cases[1], b"ba"));
    assert!(accepts(&cases[2], b"baax"));
    assert!(accepts(&cases[3], b"baax"));
    assert!(!accepts(&cases[3], b"baa"));
    assert!(accepts(&cases[4], b"aa"));
    assert!(!accepts(&cases[4], b"a"));
    assert!(accepts(&cases[5], b"baa"));
}

/// The same in a derivative: `[ab] "b" /aa/` after `a` is `"baa"`, as `"abaa"` and
/// `"a" /baa/` are after `a`; literal pieces are joined (regexes that are a literal too), so
/// one string has one spelling (derivre panicked at the first byte).
#[cfg(feature = "derivre")]
#[test]
fn a_derivative_meeting_two_spellings_of_one_string_does_not_panic() {
    use lexer::DerivreLexer;
    let lit = |s: &str| RegexSpec::Literal(s.into());
    let rx = RegexSpec::Or(vec![
        RegexSpec::Concat(vec![
            RegexSpec::ByteSet(vec![(b'a', b'b')]),
            lit("b"),
            RegexSpec::regex("aa"),
        ]),
        lit("abaa"),
        RegexSpec::Concat(vec![lit("a"), RegexSpec::regex("baa")]),
    ]);
    let s = spec(&[("A", rx, LexemeKind::Greedy)]);
    let mut l = DerivreLexer::new(&s).expect("builds");
    let mut st = l.start_state(&s.all()).unwrap();
    for &b in b"abaa" {
        st = l.advance(st, b).unwrap();
    }
    assert!(l.flags(st).is_accepting());
    let mut st = l.start_state(&s.all()).unwrap();
    for &b in b"bba" {
        st = l.advance(st, b).unwrap();
    }
    assert!(!l.flags(st).is_accepting());
    st = l.advance(st, b'a').unwrap();
    assert!(l.flags(st).is_accepting());
}
