use super::*;
use crate::LexemeKind;

/// A JSON-like spec with every construct whose byte reading the partitions must follow:
/// quoted strings (regex and `JsonQuote`), keys minus named ones (`&`, `~`), literals,
/// `multipleOf` numbers, a bounded repeat, a look-ahead, a lazy lexeme.
fn spec() -> LexerSpec {
    let mut spec = LexerSpec::new();
    let string = RegexSpec::regex(r#""([^"\\\x00-\x1F\x7F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#);
    let named = RegexSpec::Or(vec![
        RegexSpec::literal("\"timeoutSeconds\""),
        RegexSpec::literal("\"type\""),
    ]);
    let add = |spec: &mut LexerSpec, name: &str, rx, kind| {
        spec.add(name, rx, kind);
    };
    add(&mut spec, "string", string.clone(), LexemeKind::Greedy);
    add(
        &mut spec,
        "key",
        RegexSpec::Or(vec![
            named.clone(),
            RegexSpec::And(vec![string, RegexSpec::Not(Box::new(named))]),
        ]),
        LexemeKind::Greedy,
    );
    add(
        &mut spec,
        "quoted",
        RegexSpec::JsonQuote {
            expr: Box::new(RegexSpec::regex("[a-z\u{e9}\n]{0,5}")),
            raw: false,
            allowed_escapes: None,
        },
        LexemeKind::Greedy,
    );
    add(
        &mut spec,
        "number",
        RegexSpec::regex(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"),
        LexemeKind::Greedy,
    );
    add(&mut spec, "mult", RegexSpec::MultipleOf { divisor: 25, scale: 1 }, LexemeKind::Greedy);
    add(
        &mut spec,
        "lit",
        RegexSpec::Or(vec![RegexSpec::literal("true"), RegexSpec::literal("null")]),
        LexemeKind::Greedy,
    );
    add(&mut spec, "bounded", RegexSpec::regex("[^<]{2,6}x"), LexemeKind::Greedy);
    add(
        &mut spec,
        "stop",
        RegexSpec::Concat(vec![
            RegexSpec::regex("[a-z ]*"),
            RegexSpec::LookAhead(Box::new(RegexSpec::literal("</s>"))),
        ]),
        LexemeKind::Greedy,
    );
    add(&mut spec, "text", RegexSpec::regex("(?s:.)*<tool>"), LexemeKind::Lazy);
    add(
        &mut spec,
        "bytes",
        RegexSpec::ByteSet(vec![(0x80, 0x8F), (0xF5, 0xFF)]),
        LexemeKind::Greedy,
    );
    spec
}

/// Random walks from random subsets of lexemes: the lexer that spreads transitions to a
/// state's whole part and one that computes every class answer alike, entry by entry.
#[test]
fn spread_transitions_equal_computed_ones() {
    let spec = spec();
    let mut a = DerivreLexer::new(&spec).unwrap();
    let mut b = DerivreLexer::new(&spec).unwrap();
    b.cache.parts.on = false;
    let alphabet: Vec<u8> = b"\"\\/abefnrtuxyzATZ0159.-+eE <>s{}:,"
        .iter()
        .copied()
        .chain([0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC2, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0xFF])
        .collect();
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let n = spec.len();
    let mut spread_hits = 0;
    for walk in 0..3000 {
        let allowed: LexemeSet = if walk % 3 == 0 {
            spec.all()
        } else {
            (0..n as u32).filter(|_| next(2) == 0).map(LexemeIdx).collect()
        };
        let (mut sa, mut sb) = (a.start_state(&allowed).unwrap(), b.start_state(&allowed).unwrap());
        for _ in 0..40 {
            let byte = if next(4) == 0 { next(256) as u8 } else { alphabet[next(alphabet.len())] };
            let idx = |l: &DerivreLexer, s: StateId| {
                s.as_usize() * l.num_classes + l.class_of[byte as usize] as usize
            };
            if a.cache.table[idx(&a, sa)] != MISSING {
                spread_hits += 1;
            }
            let (na, nb) = (a.advance(sa, byte).unwrap(), b.advance(sb, byte).unwrap());
            // By structure: the two expression stores number new expressions in the
            // order they were built, and `a` builds fewer.
            let shown = |l: &DerivreLexer, s: StateId| -> Vec<(LexemeIdx, String)> {
                let m = &l.cache.members[s.as_usize()];
                m.iter().map(|&(x, e)| (x, l.cache.exprs.expr_to_string(e))).collect()
            };
            assert_eq!(shown(&a, na), shown(&b, nb), "byte {byte:#x}");
            assert_eq!(
                a.cache.table[idx(&a, sa)].0 & MUST_END,
                b.cache.table[idx(&b, sb)].0 & MUST_END
            );
            assert_eq!(a.flags(na), b.flags(nb));
            (sa, sb) = (na, nb);
            if sa == StateId::DEAD {
                break;
            }
        }
    }
    // The spread entries were used (the test exercises them).
    assert!(spread_hits > 1000, "{spread_hits}");
    assert!(a.num_transitions() < b.num_transitions());
}

/// A copy learns up to [`DerivreLexer::copy_room`] states in the arrays it was made with
/// (no reallocation: the first new state of a matcher's copy used to copy them all
/// again), and agrees with the original on every state both know.
#[test]
fn a_copy_has_room_for_new_states() {
    let spec = spec();
    let mut a = DerivreLexer::new(&spec).unwrap();
    let all = spec.all();
    let s0 = a.start_state(&all).unwrap();
    let mut s = s0;
    for &b in br#""ab"#.iter() {
        s = a.advance(s, b).unwrap();
    }
    let mut c = a.clone();
    let known = c.cache.flags.len();
    let room = c.copy_room();
    let ptrs = |l: &DerivreLexer| {
        (
            l.cache.table.as_ptr(),
            l.cache.flags.as_ptr(),
            l.cache.members.data.as_ptr(),
            l.cache.members.spans.as_ptr(),
        )
    };
    let before = ptrs(&c);
    // New states in the copy: number literals of growing length, each prefix a state.
    let mut learned = 0;
    'outer: for n in 0..64u32 {
        let mut t = c.start_state(&all).unwrap();
        for b in format!("{}.{}e+{}", 10u64.pow(n % 12) + n as u64, n, n).bytes() {
            t = c.advance(t, b).unwrap();
            learned = c.cache.flags.len() - known;
            if learned + 8 >= room {
                break 'outer;
            }
        }
    }
    assert!(learned > 8, "the copy learned {learned} states");
    assert_eq!(ptrs(&c), before, "a copy reallocated within its room");
    // The copy's known states answer as the original's.
    let (mut x, mut y) = (s0, s0);
    for &b in br#""ab"#.iter() {
        (x, y) = (a.advance(x, b).unwrap(), c.advance(y, b).unwrap());
        assert_eq!(x, y);
        assert_eq!(a.flags(x), c.flags(y));
    }
}

/// The automata of repeat bodies (run twins' character automata, counter twins' iteration
/// automata) built one derivative per part of each state's partition equal those built one
/// derivative per byte class: every repeat body of the spec's lexemes (the JSON string
/// character with its escapes, `\u` hex digits, `[^<]`, ...) plus a bounded string.
#[test]
fn body_automata_by_part_equal_those_by_class() {
    let mut spec = spec();
    spec.add(
        "bounded_string",
        RegexSpec::regex(r#""([^"\\\x00-\x1F\x7F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}){0,100}""#),
        LexemeKind::Greedy,
    );
    let mut a = DerivreLexer::new(&spec).unwrap();
    let mut b = DerivreLexer::new(&spec).unwrap();
    b.cache.parts.on = false;
    // The repeat bodies under each lexeme, in one order for both lexers (same structure).
    let bodies = |l: &DerivreLexer| -> Vec<ExprRef> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut todo: Vec<ExprRef> = l.lexeme_exprs.clone();
        while let Some(e) = todo.pop() {
            if !seen.insert(e) {
                continue;
            }
            let x = &l.cache.exprs;
            if x.get_tag(e) as u8 == tag::REPEAT {
                out.push(x.get_args(e)[0]);
            }
            todo.extend_from_slice(x.get_args(e));
        }
        out
    };
    let (ba, bb) = (bodies(&a), bodies(&b));
    assert_eq!(ba.len(), bb.len());
    assert!(ba.len() >= 5, "{} bodies", ba.len());
    let mut states = 0;
    for (&x, &y) in ba.iter().zip(&bb) {
        for prefix_code in [false, true] {
            let (ra, rb) =
                (a.body_automaton(x, 255, prefix_code), b.body_automaton(y, 255, prefix_code));
            assert_eq!(ra, rb, "body {}", a.cache.exprs.expr_to_string(x));
            states += ra.map_or(0, |r| r.1.len());
        }
    }
    assert!(states >= 10, "{states} automaton states compared");
    assert!(a.num_classes > 10, "few classes: nothing to share");
}
