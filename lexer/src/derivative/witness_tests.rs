use super::*;
use crate::LexemeKind;

/// The tag values `shortest_guess` reads are derivre's: one expression of each kind.
#[test]
fn expression_tags_are_derivres() {
    let mut b = RegexBuilder::new();
    let a = b.mk(&RegexAst::Byte(b'a')).unwrap();
    let set = b.mk(&RegexAst::ByteSet(vec![0xffff_0000; 8])).unwrap();
    let bytes = b.mk(&RegexAst::Literal("abc".into())).unwrap();
    let not = b.mk(&RegexAst::Not(Box::new(RegexAst::Byte(b'a')))).unwrap();
    let rep = b.mk(&RegexAst::Repeat(Box::new(RegexAst::Byte(b'a')), 2, 5)).unwrap();
    let cat = b
        .mk(&RegexAst::Concat(vec![RegexAst::Regex("a+".into()), RegexAst::Regex("b+".into())]))
        .unwrap();
    let or = b.mk(&RegexAst::Regex("a+|b+".into())).unwrap();
    let and = b
        .mk(&RegexAst::And(vec![RegexAst::Regex("a+".into()), RegexAst::Regex("[ab]+".into())]))
        .unwrap();
    let look = b.mk(&RegexAst::LookAhead(Box::new(RegexAst::Regex("a+".into())))).unwrap();
    let x = b.exprset();
    let tag = |e: ExprRef| x.get_tag(e) as u8;
    assert_eq!(tag(ExprRef::EMPTY_STRING), tag::EMPTY_STRING);
    assert_eq!(tag(ExprRef::NO_MATCH), tag::NO_MATCH);
    assert_eq!(tag(a), tag::BYTE);
    assert_eq!(tag(set), tag::BYTE_SET);
    assert_eq!(tag(bytes), tag::BYTE_CONCAT);
    assert_eq!(tag(not), tag::NOT);
    assert_eq!(tag(rep), tag::REPEAT);
    assert_eq!(tag(cat), tag::CONCAT);
    assert_eq!(tag(or), tag::OR);
    assert_eq!(tag(and), tag::AND);
    assert_eq!(tag(look), tag::LOOKAHEAD);
}

/// [`unbounded_min`] tells `B*` and `B+` by derivre's own nodes for them: built by the
/// builder, by derivatives (`B{3,}` after one `B` is `B{2,}`, then `B+`, then `B*`), and not
/// bounded repeats, `B{3,}` itself (not told: `None`, a proof does not fire) or non-repeats.
#[test]
fn unbounded_repeats_are_told_by_their_nodes() {
    let mut b = RegexBuilder::new();
    let rep = |b: &mut RegexBuilder, min, max| {
        b.mk(&RegexAst::Repeat(Box::new(RegexAst::Regex("[a-z]+x".into())), min, max)).unwrap()
    };
    let cases = [
        ((0, u32::MAX), Some(0)),
        ((1, u32::MAX), Some(1)),
        ((0, 1), None),
        ((2, 5), None),
        ((3, u32::MAX), None),
        ((0, 300), None),
    ];
    let es: Vec<ExprRef> = cases.iter().map(|&((lo, hi), _)| rep(&mut b, lo, hi)).collect();
    let star = es[0];
    let mut x = b.into_exprset();
    let mut stars = Stars::default();
    for (&e, &(bounds, want)) in es.iter().zip(&cases) {
        assert_eq!(unbounded_min(&mut x, &mut stars, e), want, "{bounds:?}");
    }
    assert_eq!(unbounded_min(&mut x, &mut stars, ExprRef::EMPTY_STRING), None);
    // A nullable body: `B+` is `B*` (derivre's normal form), told as `B*`.
    let mut b = RegexBuilder::new();
    let nullable_plus =
        b.mk(&RegexAst::Repeat(Box::new(RegexAst::Regex("a?".into())), 1, u32::MAX)).unwrap();
    let mut y = b.into_exprset();
    assert_eq!(unbounded_min(&mut y, &mut Stars::default(), nullable_plus), Some(0));
    // Derivatives of `(ab){3,}` along "ab" reach `(ab){2,}` (not told), then `(ab)+` and
    // `(ab)*`.
    let mut b = RegexBuilder::new();
    let three =
        b.mk(&RegexAst::Repeat(Box::new(RegexAst::Literal("ab".into())), 3, u32::MAX)).unwrap();
    let mut y = b.into_exprset();
    let (mut d, mut e, mut told) = (DerivCache::new(), three, Vec::new());
    let mut ys = Stars::default();
    for _ in 0..3 {
        for &c in b"ab" {
            e = d.derivative(&mut y, e, c);
        }
        told.push(unbounded_min(&mut y, &mut ys, e));
    }
    assert_eq!(told, [None, Some(1), Some(0)], "{}", y.expr_to_string(e));
    assert_eq!(unbounded_min(&mut x, &mut stars, star), Some(0));
}

/// Liveness read off the structure: infinite languages (an unbounded repeat of a body
/// with a non-empty string), minus finite exclusions, live; a finite or bounded one, or
/// one whose exclusion is not finite, not decided that way (`false` says nothing); a
/// positive expression's non-empty strings likewise.
#[test]
fn infinite_languages_are_live_by_structure() {
    let mut b = RegexBuilder::new();
    let mut mk = |ast: RegexAst| b.mk(&ast).unwrap();
    let rx = |s: &str| RegexAst::Regex(s.into());
    let not = |a: RegexAst| RegexAst::Not(Box::new(a));
    let key = mk(RegexAst::And(vec![
        rx(r#""[^"\\]*""#),
        not(RegexAst::Or(vec![
            RegexAst::Literal(r#""me""#.into()),
            RegexAst::Literal(r#""ta""#.into()),
        ])),
    ]));
    let inner = mk(RegexAst::Concat(vec![
        RegexAst::And(vec![not(RegexAst::Literal("ab".into())), rx("[a-z]*")]),
        RegexAst::Literal("!".into()),
    ]));
    let bounded = mk(RegexAst::And(vec![rx("[a-z]{0,3}"), not(RegexAst::Literal("ab".into()))]));
    let open_exclusion = mk(RegexAst::And(vec![rx("[a-z]+"), not(rx("a[a-z]*"))]));
    let nullable_body = mk(rx("(a?)*b"));
    let ws = mk(rx("[ \t]*"));
    let eps = mk(rx("(|)"));
    let mut x = b.into_exprset();
    let mut stars = Stars::default();
    let mut infinite = |x: &mut ExprSet, e| {
        surely_infinite(x, &mut stars, e, &mut FINITE_NODES.clone(), &mut HashMap::new())
    };
    assert!(infinite(&mut x, key), "{key:?}");
    assert!(infinite(&mut x, inner), "{inner:?}");
    assert!(!infinite(&mut x, bounded));
    assert!(!infinite(&mut x, open_exclusion), "the exclusion is infinite");
    assert!(!infinite(&mut x, nullable_body), "not known (the body is nullable)");
    assert_eq!(matches_nonempty(&x, ws), Some(true));
    assert_eq!(matches_nonempty(&x, eps), Some(false));
}

/// A `oneOf` of unanchored patterns ("holds `cat` and not `dog`" or the other way
/// round): once the string holds both words every branch is `a & ~(a · (ε | …))`, empty
/// by structure (derivre's check took 20-55 ms per such state in a five-word schema).
#[test]
fn a_complement_of_a_superset_is_empty_by_structure() {
    let body = "[a-z]*";
    let branch = |yes: &str, no: &str| {
        RegexSpec::And(vec![
            RegexSpec::regex(body),
            RegexSpec::regex(format!("[a-z]*{yes}[a-z]*")),
            not(RegexSpec::regex(format!("[a-z]*{no}[a-z]*"))),
        ])
    };
    let one_of = RegexSpec::Or(vec![branch("cat", "dog"), branch("dog", "cat")]);
    let mut l = lexer(one_of);
    let start = l.start_state(&l.spec().all()).unwrap();
    let run = |l: &mut DerivreLexer, text: &str| {
        text.bytes().try_fold(start, |s, b| l.advance(s, b).ok().filter(|&t| t != StateId::DEAD))
    };
    let cat = run(&mut l, "xcatx").expect("live after one word");
    assert!(l.flags(cat).is_accepting());
    assert!(run(&mut l, "xcatxdo").is_some(), "`dog` not finished yet");
    assert_eq!(run(&mut l, "xcatxdog"), None);
    assert_eq!(run(&mut l, "dogcat"), None);

    // The rule itself, on the derivatives (not through the lexer's other checks).
    let mut b = RegexBuilder::new();
    let rx = |s: &str| RegexAst::Regex(s.into());
    let neg = |a: RegexAst| RegexAst::Not(Box::new(a));
    let ast_branch = |yes: &str, no: &str| {
        RegexAst::And(vec![
            rx(body),
            rx(&format!("[a-z]*{yes}[a-z]*")),
            neg(rx(&format!("[a-z]*{no}[a-z]*"))),
        ])
    };
    let e = b.mk(&RegexAst::Or(vec![ast_branch("cat", "dog"), ast_branch("dog", "cat")])).unwrap();
    let mut x = b.into_exprset();
    let mut deriv = DerivCache::new();
    let after = |x: &mut ExprSet, deriv: &mut DerivCache, text: &str| {
        text.bytes().fold(e, |d, byte| deriv.derivative(x, d, byte))
    };
    let both = after(&mut x, &mut deriv, "catdog");
    assert_ne!(both, ExprRef::NO_MATCH, "derivre does not simplify it away");
    assert!(surely_empty(&x, both, &mut FINITE_NODES.clone()), "{}", x.expr_to_string(both));
    for text in ["", "cat", "catdo", "dogs"] {
        let d = after(&mut x, &mut deriv, text);
        assert!(!surely_empty(&x, d, &mut FINITE_NODES.clone()), "{text}: live");
    }
    // `a & ~(a · b)` with `b` not nullable keeps `a`'s other strings.
    let mut b = RegexBuilder::new();
    let live = b.mk(&RegexAst::And(vec![rx("[a-z]*"), neg(rx("[a-z]*x"))])).unwrap();
    assert!(!surely_empty(b.exprset(), live, &mut FINITE_NODES.clone()));
}

#[test]
fn an_intersection_of_positive_parts_has_a_witness_from_its_parts() {
    // A length counter beside a word count (`maxLength` with a word-count `pattern`):
    // the counter is nullable, the words need a letter.
    let mut b = RegexBuilder::new();
    let counter = b.mk(&RegexAst::Regex("[a-z ]{0,40}".into())).unwrap();
    let words = b.mk(&RegexAst::Regex("(?:[a-z]+ +){0,30}[a-z]+".into())).unwrap();
    let quote = b.mk(&RegexAst::Literal("\"".into())).unwrap();
    let mut l = lexer_over(b);
    let both = l.cache.exprs.mk_and(&mut vec![counter, words]);
    let e = l.cache.exprs.mk_concat(both, quote);
    // derivre orders an intersection's operands: the guess of the whole expression
    // follows the first, the counter here, whose shortest string is empty.
    assert_eq!(l.cache.exprs.get_args(both)[0], counter);
    assert!(!l.has_witness(e, false));
    let mut budget = WITNESS_NODES;
    let w = l.part_witness(e, &mut budget).expect("a witness from the parts");
    assert_eq!(&*w, b"a\"");
    assert!(l.matches_bytes(e, &w));
    // Twenty words fill the counter: no part's string holds, no answer (the relevance
    // check decides).
    let mut d = e;
    for _ in 0..20 {
        let mut budget = WITNESS_NODES;
        assert!(l.part_witness(d, &mut budget).is_some());
        d = l.cache.deriv.derivative(&mut l.cache.exprs, d, b'a');
        d = l.cache.deriv.derivative(&mut l.cache.exprs, d, b' ');
    }
    let mut budget = WITNESS_NODES;
    assert_eq!(l.part_witness(d, &mut budget), None);
    assert!(!l.is_live(d, l.cache.exprs.cost()).unwrap());
}

fn lexer(rx: RegexSpec) -> DerivreLexer {
    let mut spec = LexerSpec::new();
    spec.add("x", rx, LexemeKind::Greedy);
    DerivreLexer::new(&spec).unwrap()
}

/// A lexer (one lexeme, `x`) over `b`'s expressions, for tests that build expressions
/// directly; the caches keyed by an expression of the lexer's own set are emptied.
fn lexer_over(b: RegexBuilder) -> DerivreLexer {
    let mut l = lexer(RegexSpec::literal("x"));
    l.cache.exprs = b.into_exprset();
    l.cache.deriv = DerivCache::new();
    l.cache.relevance = RelevanceCache::new();
    l.cache.next_byte = NextByteCache::new();
    l.cache.finite.clear();
    l.cache.complements.clear();
    l.cache.witnesses.clear();
    l.cache.gave_up.clear();
    l
}

fn not(rx: RegexSpec) -> RegexSpec {
    RegexSpec::Not(Box::new(rx))
}

/// Lexemes with intersections: a witness proves the live ones at once; the empty ones
/// (which no guess can prove) still come out DEAD, through derivre's check.
#[test]
fn start_states_of_intersections() {
    let keys = RegexSpec::Or(vec![RegexSpec::literal("\"a\""), RegexSpec::literal("\"\"")]);
    let string = RegexSpec::regex(r#""[^"\\]*""#);
    let cases = [
        // The other keys of an object (the shortest string, `""`, is excluded).
        (RegexSpec::And(vec![string.clone(), not(keys.clone())]), true),
        (RegexSpec::And(vec![keys.clone(), not(keys.clone())]), false),
        (RegexSpec::And(vec![RegexSpec::regex("a{3,}"), RegexSpec::regex("(aa)+")]), true),
        (RegexSpec::And(vec![RegexSpec::regex("a{3}"), RegexSpec::regex("(aa)+")]), false),
        (RegexSpec::And(vec![RegexSpec::regex("[0-9]+"), not(RegexSpec::regex("[0-9]*"))]), false),
        // Every byte string (`(?s:.)*` would leave the invalid UTF-8 ones).
        (
            not(RegexSpec::Repeat {
                expr: Box::new(RegexSpec::ByteSet(vec![(0, 255)])),
                min: 0,
                max: None,
            }),
            false,
        ),
        (not(RegexSpec::regex("(?s:.)*")), true),
        (not(RegexSpec::literal("x")), true),
    ];
    for (i, (rx, live)) in cases.into_iter().enumerate() {
        let mut l = lexer(rx);
        let s = l.start_state(&l.spec().all()).unwrap();
        assert_eq!(s != StateId::DEAD, live, "case {i}");
    }
}

/// The guess is a guess: the witness walk says nothing when it fails (derivre decides).
#[test]
fn a_witness_is_checked() {
    let mut l = lexer(RegexSpec::literal("x"));
    let string = l.lexeme_exprs[0];
    assert!(l.has_witness(string, false));
    let mut b = RegexBuilder::new();
    let e = b
        .mk(&RegexAst::And(vec![
            RegexAst::Regex("[ab]+".into()),
            RegexAst::Not(Box::new(RegexAst::Regex("a[ab]*".into()))),
        ]))
        .unwrap();
    let mut l2 = lexer_over(b);
    // The shortest string of `[ab]+` is `a` (the first byte of the set): excluded.
    assert!(!l2.has_witness(e, false));
    assert!(l2.is_live(e, l2.cache.exprs.cost()).unwrap());
}

/// A `oneOf` of unanchored patterns at the string's start: every branch must hold its
/// word. The witness in word mode completes one (`dog`, read at its true length: a
/// byte string counted 2 long made the guess zigzag between the words); the ordinary
/// guess takes the nullable body and fails, leaving derivre's relevance check to decide.
#[test]
fn a_witness_completes_a_word_of_a_one_of() {
    let mut b = RegexBuilder::new();
    let rx = |s: &str| RegexAst::Regex(s.into());
    let neg = |a: RegexAst| RegexAst::Not(Box::new(a));
    let branch = |yes: &str, others: &[&str]| {
        let mut v = vec![rx("[a-z]*"), rx(&format!("[a-z]*{yes}[a-z]*"))];
        v.extend(others.iter().map(|o| neg(rx(&format!("[a-z]*{o}[a-z]*")))));
        RegexAst::And(v)
    };
    let e = b
        .mk(&RegexAst::Or(vec![
            branch("customer", &["dog", "operator"]),
            branch("dog", &["customer", "operator"]),
            branch("operator", &["customer", "dog"]),
        ]))
        .unwrap();
    let mut l = lexer_over(b);
    let mut budget = FINITE_NODES;
    let (mut memo, mut finite) = (HashMap::new(), HashMap::new());
    assert!(infinite_complement(&l.cache.exprs, e, &mut budget, &mut memo, &mut finite));
    assert!(!l.has_witness(e, false));
    assert!(l.has_witness(e, true));
    // A key lexeme's exclusions are finite: not word mode.
    let mut b = RegexBuilder::new();
    let key = b
        .mk(&RegexAst::And(vec![
            rx(r#""[a-z]*""#),
            neg(RegexAst::Or(vec![
                RegexAst::Literal(r#""a""#.into()),
                RegexAst::Literal(r#""b""#.into()),
            ])),
        ]))
        .unwrap();
    let (mut memo, mut finite) = (HashMap::new(), HashMap::new());
    let mut budget = FINITE_NODES;
    assert!(!infinite_complement(b.exprset(), key, &mut budget, &mut memo, &mut finite));
}

/// An intersection whose emptiness derivre proves only by visiting a large product
/// (an unanchored pattern that needs a `T` and a date, with a time whose leap-second
/// branch is itself an intersection of digit relations) is proved empty by its hull,
/// within a fuel the full check runs out of.
#[test]
fn an_empty_intersection_is_proved_by_its_hull() {
    let alts = |v: Vec<String>| RegexSpec::Regex(format!("(?:{})", v.join("|")));
    let leap = RegexSpec::And(vec![
        RegexSpec::regex(r"[0-9]{2}:[0-9]{2}:60(?:\.[0-9]+)?-[0-9]{2}:[0-9]{2}"),
        alts((0..24).map(|x| format!("{:02}[^-]*-{x:02}.*", 23 - x)).collect()),
        alts((0..6).map(|t| format!(".{{3}}{}[^-]*-.{{3}}{t}.", 5 - t)).collect()),
        alts((0..10).map(|u| format!(".{{4}}{}[^-]*-.{{4}}{u}", 9 - u)).collect()),
    ]);
    let time =
        RegexSpec::Or(vec![RegexSpec::regex(r"[0-9]{2}:[0-9]{2}:[0-5][0-9](?:\.[0-9]+)?Z"), leap]);
    let pattern = RegexSpec::regex(r"(?s:.)*[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z(?s:.)*");
    let limits = LexerLimits { step_fuel: 300_000, ..LexerLimits::default() };
    let mut spec = LexerSpec::new();
    spec.add("x", RegexSpec::And(vec![pattern, time]), LexemeKind::Greedy);
    let spec = Arc::new(spec);
    let mut l = DerivreLexer::with_limits(spec.clone(), limits.clone()).unwrap();
    let e = l.lexeme_exprs[0];
    let mut memo = HashMap::new();
    let mut budget = HULL_NODES;
    let h = hull(&mut l.cache.exprs, e, true, &mut memo, &mut budget);
    assert_ne!(h, e, "the nested intersection is replaced");
    let cost0 = l.cache.exprs.cost();
    assert!(!l.is_live(e, cost0).unwrap());
    let mut full = DerivreLexer::with_limits(spec, limits).unwrap();
    let e = full.lexeme_exprs[0];
    let cost0 = full.cache.exprs.cost();
    assert!(full.is_live_full(e, cost0).is_err(), "derivre alone runs out of fuel");
}

/// A lexeme whose containment walk of a class built [`GAVE_UP_STATES`] new states or
/// more and gave up builds none in the walks of its later states (a word-count pattern
/// under a length bound: states by words x length), which answer "unknown" (the trie
/// decides).
#[test]
fn a_walk_that_gave_up_is_not_built_again() {
    let words = RegexSpec::And(vec![
        RegexSpec::regex(r"(?:\S+\s+){0,49}\S+"),
        RegexSpec::regex(r"(?s:.){0,500}"),
    ]);
    let mut l = lexer(words);
    let query = RegexSpec::regex(r"[^\x00-\x1F]{0,29}");
    let mut s = l.start_state(&l.spec().all()).unwrap();
    for &b in b"The" {
        s = l.advance(s, b).unwrap();
    }
    let n0 = l.num_states();
    assert_eq!(l.check_prefixes(s, &query), Containment::Unknown);
    assert!(l.num_states() - n0 >= GAVE_UP_STATES, "{} new states", l.num_states() - n0);
    for &b in b" lab" {
        s = l.advance(s, b).unwrap();
    }
    let n1 = l.num_states();
    assert_eq!(l.check_prefixes(s, &query), Containment::Unknown);
    assert!(l.num_states() - n1 < 8, "{} new states", l.num_states() - n1);
}

/// Free keys beside named and pattern keys, as a JSON object with `patternProperties`
/// compiles them: the free key's body excludes the patterns inside its quotes
/// (`"(~"p1" & ~"p2" & body*)" & ~("k1"|…)`). The exclusions inside the concatenation
/// are left out too (the closing quote after them is finite, so finitely many strings
/// are added), and so are the pattern keys (finite members): the state is proven
/// contained without a trie walk. With an unbounded element after the exclusion
/// (`(~"ab" & [a-z]{0,2}) [a-z]*`: the ~"ab" could remove infinitely many strings)
/// nothing is left out.
#[test]
fn finite_exclusions_inside_a_key_body_are_left_out() {
    let body = RegexSpec::regex(r#"[^"\\]*"#);
    let q = || RegexSpec::literal("\"");
    let named: Vec<String> =
        (0..12).map(|i| format!(r#""{}key{i}""#, (b'a' + i) as char)).collect();
    let named_or = || RegexSpec::Or(named.iter().map(RegexSpec::literal).collect());
    let pats = ["consent_level_type", "kafka_topic"];
    let mut spec = LexerSpec::new();
    for k in &named {
        spec.add(k, RegexSpec::literal(k), LexemeKind::Greedy);
    }
    for p in pats {
        let key = RegexSpec::Concat(vec![
            q(),
            RegexSpec::And(vec![RegexSpec::literal(p), body.clone()]),
            q(),
        ]);
        spec.add(p, RegexSpec::And(vec![key, not(named_or())]), LexemeKind::Greedy);
    }
    let mut free_body: Vec<RegexSpec> = pats.iter().map(|p| not(RegexSpec::literal(*p))).collect();
    free_body.push(body.clone());
    let free = RegexSpec::Concat(vec![q(), RegexSpec::And(free_body), q()]);
    spec.add("free", RegexSpec::And(vec![free, not(named_or())]), LexemeKind::Greedy);
    let mut l = DerivreLexer::new(&spec).unwrap();
    let mut s = l.start_state(&spec.all()).unwrap();
    s = l.advance(s, b'"').unwrap();
    let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{0,12}"#);
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
    let r = l.cache.reduced.get(&s).copied().filter(|&r| r != StateId::DEAD).expect("reduced");
    assert_eq!(l.cache.members.get(r.as_usize()).unwrap().len(), 1, "only the free key is left");

    let mut spec = LexerSpec::new();
    let x = RegexSpec::Concat(vec![
        RegexSpec::And(vec![RegexSpec::regex("[a-z]{0,2}"), not(RegexSpec::literal("ab"))]),
        RegexSpec::regex("[a-z]*"),
    ]);
    spec.add("x", RegexSpec::And(vec![x, not(RegexSpec::literal("zz"))]), LexemeKind::Greedy);
    let mut l = DerivreLexer::new(&spec).unwrap();
    let s = l.start_state(&spec.all()).unwrap();
    let r = l.without_finite_exclusions(s).expect("the outer exclusion is left out");
    assert!(
        l.cache.exprs.expr_to_string(l.cache.members.get(r.as_usize()).unwrap()[0].1).contains('¬'),
        "the inner exclusion stays"
    );
}

/// Free keys beside named ones (`"…" & ~("k1"|…)`): every string of string characters
/// is a prefix of a free key, proven on the member without its finite exclusion (a
/// free body, which extends without end); a bounded body with an exclusion is not
/// proven that way (`"ab"` is a prefix only of the excluded key).
#[test]
fn a_pattern_key_and_its_complement_walk_as_one_free_key() {
    // Keys under `patternProperties` (`.*ab.*`) beside `additionalProperties`: the
    // pattern's keys and the others, two lexemes whose union is every key.
    let body = RegexSpec::regex(r#""[^"\\]*""#);
    let pattern = RegexSpec::regex(r#"".*ab.*""#);
    let mut spec = LexerSpec::new();
    spec.add("pat", RegexSpec::And(vec![body.clone(), pattern.clone()]), LexemeKind::Greedy);
    spec.add("add", RegexSpec::And(vec![body, not(pattern)]), LexemeKind::Greedy);
    let mut l = DerivreLexer::new(&spec).unwrap();
    let mut s = l.start_state(&l.spec().all()).unwrap();
    s = l.advance(s, b'"').unwrap();
    for &b in b"xa" {
        s = l.advance(s, b).unwrap();
    }
    let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{0,12}"#);
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
    let r = l.cache.reduced.get(&s).copied().expect("the rule was tried");
    assert_eq!(l.cache.members[r.as_usize()].len(), 1, "one member for the pair");

    // Different bodies (`[a-z]` keys beside free ones): no pair, the members stay.
    let mut b = RegexBuilder::new();
    let narrow = b.mk(&RegexAst::Regex("[a-z]*".into())).unwrap();
    let free = b.mk(&RegexAst::Regex("[^\"]*".into())).unwrap();
    let p = b.mk(&RegexAst::Regex(".*ab.*".into())).unwrap();
    let mut l = lexer_over(b);
    let not_p = l.cache.exprs.mk_not(p);
    let with_p = l.cache.exprs.mk_and(&mut vec![narrow, p]);
    let without_p = l.cache.exprs.mk_and(&mut vec![free, not_p]);
    let mut members = vec![(LexemeIdx::new(0), with_p), (LexemeIdx::new(1), without_p)];
    merge_complements(&mut l.cache.exprs, &mut members);
    assert_eq!(members.len(), 2);
    // The same body: one member, the body.
    let without_p = l.cache.exprs.mk_and(&mut vec![narrow, not_p]);
    let mut members = vec![(LexemeIdx::new(0), with_p), (LexemeIdx::new(1), without_p)];
    merge_complements(&mut l.cache.exprs, &mut members);
    assert_eq!(members, vec![(LexemeIdx::new(0), narrow)]);
}

/// Many members at once (an `anyOf` of open objects: each branch's "any key but its
/// name" beside its name's pattern): every complementary pair merges, whatever the order;
/// a merged member pairs again (`A & P & Q`, `A & P & ~Q`, `A & ~P`: `A`); members with
/// no partner stay.
#[test]
fn complements_merge_by_lookup_among_many_members() {
    let mut b = RegexBuilder::new();
    let body = b.mk(&RegexAst::Regex("[a-z]*".into())).unwrap();
    let pats: Vec<ExprRef> =
        (0..300).map(|i| b.mk(&RegexAst::Regex(format!("k{i}x.*"))).unwrap()).collect();
    let lone = b.mk(&RegexAst::Regex("q.*".into())).unwrap();
    let mut l = lexer_over(b);
    let x = &mut l.cache.exprs;
    let mut members = Vec::new();
    for (i, &p) in pats.iter().enumerate() {
        let np = x.mk_not(p);
        members.push((LexemeIdx::new(2 * i), x.mk_and(&mut vec![body, p])));
        members.push((LexemeIdx::new(2 * i + 1), x.mk_and(&mut vec![body, np])));
    }
    // Reversed halves: partners far apart, in either order.
    members[300..].reverse();
    let with_lone = x.mk_and(&mut vec![body, lone]);
    members.push((LexemeIdx::new(9_999), with_lone));
    merge_complements(x, &mut members);
    let (merged, kept): (Vec<&Member>, Vec<&Member>) = members.iter().partition(|m| m.1 == body);
    assert_eq!((merged.len(), kept.len()), (300, 1), "each pair one member `A`");
    assert_eq!(kept[0].1, with_lone);
    // Twice over: the pair of `Q` merges to `A & P`, which then pairs with `A & ~P`.
    let (p, q) = (pats[0], pats[1]);
    let (np, nq) = (x.mk_not(p), x.mk_not(q));
    let mut members = vec![
        (LexemeIdx::new(0), x.mk_and(&mut vec![body, p, q])),
        (LexemeIdx::new(1), x.mk_and(&mut vec![body, np])),
        (LexemeIdx::new(2), x.mk_and(&mut vec![body, p, nq])),
    ];
    merge_complements(x, &mut members);
    assert_eq!(members, vec![(LexemeIdx::new(0), body)]);
}

#[test]
fn an_unanchored_pattern_inside_a_body_is_contained_from_its_head() {
    // A key under an unanchored `patternProperties` pattern: the body `S*` intersected
    // with `.*(Red|Blue).*`, then the closing quote.
    let key = RegexSpec::Concat(vec![
        RegexSpec::And(vec![RegexSpec::regex(r#"[^"\\]*"#), RegexSpec::regex(".*(?:Red|Blue).*")]),
        RegexSpec::literal("\""),
    ]);
    let mut l = lexer(key);
    let s = l.start_state(&l.spec().all()).unwrap();
    let e = l.cache.members[s.as_usize()][0].1;
    assert!(star_head(&mut l.cache.exprs, &mut l.cache.stars, e).is_none(), "not a plain B* R");
    assert!(!l.star_heads_in_body(LexemeIdx::new(0), e).is_empty());
    let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{0,12}"#);
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
    assert!(l.star_head(s, false).is_some(), "the head state was built");
    // Named keys beside the pattern's (`additionalProperties: false`): the pattern key
    // excludes them, a finite exclusion; the head comes from the state without it.
    let named = RegexSpec::Or(vec![RegexSpec::literal("Reds"), RegexSpec::literal("xBlue")]);
    let key = RegexSpec::Concat(vec![
        RegexSpec::And(vec![
            RegexSpec::regex(r#"[^"\\]*"#),
            RegexSpec::regex(".*(?:Red|Blue).*"),
            not(named),
        ]),
        RegexSpec::literal("\""),
    ]);
    let mut spec = LexerSpec::new();
    spec.add("pattern", key, LexemeKind::Greedy);
    spec.add("reds", RegexSpec::literal("Reds\""), LexemeKind::Greedy);
    spec.add("xblue", RegexSpec::literal("xBlue\""), LexemeKind::Greedy);
    let mut l = DerivreLexer::new(&spec).unwrap();
    let s = l.start_state(&l.spec().all()).unwrap();
    assert!(l.star_head(s, true).is_none(), "not without the exclusion");
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
    let r = l.without_finite_exclusions(s).expect("a state without the exclusion");
    assert!(l.star_head(r, false).is_some(), "its head state was built");
    // The pattern's shortest word (`-`) is not in the body (`[a-z]*`): no head (the
    // rule only takes that witness; `blue` would do).
    let key = RegexSpec::Concat(vec![
        RegexSpec::And(vec![RegexSpec::regex("[a-z]*"), RegexSpec::regex(".*(?:-|blue).*")]),
        RegexSpec::literal("\""),
    ]);
    let mut l = lexer(key);
    let s = l.start_state(&l.spec().all()).unwrap();
    let e = l.cache.members[s.as_usize()][0].1;
    assert!(l.star_heads_in_body(LexemeIdx::new(0), e).is_empty());
}

/// A minimum beside an unanchored pattern (MaskBench's Github_hard---o79409: `minLength:
/// 35` and `\d+-[A-Fa-f0-9]*-…` searched anywhere): the body `S{m,}` counts as `S*` for the
/// head, whose walk comes back on the class, so the state contains the class's queries at
/// every position, also after the pattern's first characters, where the union's first
/// alternatives are partial matches with narrower heads (`[0-9a-f]* "-" …`). A bounded
/// body (`S{5,40}`) keeps no head: a class string past its maximum dies.
#[test]
fn a_minimum_beside_an_unanchored_pattern_keeps_its_head() {
    let key = |body: &str| {
        RegexSpec::Concat(vec![
            RegexSpec::And(vec![
                RegexSpec::regex(body),
                RegexSpec::regex(".*[0-9]+-[0-9a-f]*-[0-9a-f]{4}.*"),
            ]),
            RegexSpec::literal("\""),
        ])
    };
    let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{1,30}"#);
    let mut l = lexer(key(r#"[^"\\]{20,}"#));
    let mut s = l.start_state(&l.spec().all()).unwrap();
    let e = l.cache.members[s.as_usize()][0].1;
    assert!(!l.star_heads_in_body(LexemeIdx::new(0), e).is_empty(), "S{{20,}} taken as S*");
    for (i, &b) in b"x1-58a-0".iter().enumerate() {
        assert_eq!(l.check_prefixes(s, &query), Containment::Contained, "after {i} bytes");
        s = l.advance(s, b).unwrap();
    }
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained, "at the end");
    assert!(l.containment_rule_hits()[5] >= 9, "{:?}", l.containment_rule_hits());
    // After `1-58a-0` the union's first alternatives are the partial matches: more than one
    // head, the first of which does not prove the class.
    assert!(l.star_heads(s, false).len() >= 2, "the partial matches' heads and the search's");
    let mut l = lexer(key(r#"[^"\\]{5,40}"#));
    let s = l.start_state(&l.spec().all()).unwrap();
    let e = l.cache.members[s.as_usize()][0].1;
    assert!(l.star_heads_in_body(LexemeIdx::new(0), e).is_empty(), "a bounded body: no head");
    let long = RegexSpec::regex(r#"[^"\\\x00-\x1F]{1,60}"#);
    assert_ne!(l.check_prefixes(s, &long), Containment::Contained);
}

#[test]
fn finite_exclusions_leave_a_free_body_contained() {
    let body = r#""[^"\\]*""#;
    let keys: Vec<String> =
        (0..30).map(|i| format!(r#""{}{i}""#, (b'a' + i % 26) as char)).collect();
    let free = RegexSpec::And(vec![
        RegexSpec::regex(body),
        not(RegexSpec::Or(keys.iter().map(RegexSpec::literal).collect())),
    ]);
    let mut l = lexer(free);
    let mut s = l.start_state(&l.spec().all()).unwrap();
    s = l.advance(s, b'"').unwrap();
    let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{0,12}"#);
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
    assert!(l.cache.reduced.get(&s).is_some_and(|&r| r != StateId::DEAD));
    assert_eq!(l.check_prefixes_cheap(s, &query), Containment::Contained);

    let bounded = RegexSpec::And(vec![
        RegexSpec::regex(r#""[a-z]{0,2}""#),
        not(RegexSpec::literal(r#""ab""#)),
    ]);
    let mut l = lexer(bounded);
    let mut s = l.start_state(&l.spec().all()).unwrap();
    s = l.advance(s, b'"').unwrap();
    let query = RegexSpec::regex("[a-z]{0,2}");
    assert_ne!(l.check_prefixes(s, &query), Containment::Contained);
    assert!(l.cache.reduced.get(&s).is_some_and(|&r| r != StateId::DEAD), "the rule was tried");
}

/// An unanchored pattern of many words (`patternProperties`: any key holding one) holds
/// every string as a prefix; the state's walk tells every partial match of every word
/// apart (and gives up), the walk from its `B*` head proves it in one step. A head whose
/// rest can never match does not count, and a bounded head is not a `B*`.
#[test]
fn a_star_head_proves_an_unanchored_pattern_contained() {
    let words: Vec<String> = (0..30).map(|i| format!("w{}x{i}", (b'a' + i % 26) as char)).collect();
    let pattern = format!(r#""[^"\\]*(?:{})[^"\\]*""#, words.join("|"));
    let mut l = lexer(RegexSpec::regex(&pattern));
    let mut s = l.start_state(&l.spec().all()).unwrap();
    s = l.advance(s, b'"').unwrap();
    let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{1,10}"#);
    let e = l.cache.members[s.as_usize()][0].1;
    assert!(star_head(&mut l.cache.exprs, &mut l.cache.stars, e).is_some());
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
    // After a partial match the state is a union holding the `B* R` alternative.
    for &b in b"wax" {
        s = l.advance(s, b).unwrap();
    }
    assert_eq!(l.check_prefixes(s, &query), Containment::Contained);

    // `[a-z]{0,3}x`: bounded, no `B*` head; strings of four letters are not prefixes.
    let mut l = lexer(RegexSpec::regex("[a-z]{0,3}x"));
    let s = l.start_state(&l.spec().all()).unwrap();
    let e = l.cache.members[s.as_usize()][0].1;
    assert!(star_head(&mut l.cache.exprs, &mut l.cache.stars, e).is_none());
    assert_ne!(l.check_prefixes(s, &RegexSpec::regex("[a-z]{1,10}")), Containment::Contained);
}

/// Queries on one class (the slicer's `C{1,10}`, `C{1,30}`, `C{1,}`) share one reduced
/// walk class, with the answers a lexer asked each query alone gives.
#[test]
fn queries_on_one_class_share_its_walk_class() {
    let body = RegexSpec::regex(r#""[^"\\]{0,20}""#);
    let queries = [r#"[^"\\]{1,10}"#, r#"[^"\\]{1,30}"#, r#"[^"\\]{1,}"#, "[a-z]{1,5}"];
    let mut l = lexer(body.clone());
    let s0 = l.start_state(&l.spec().all()).unwrap();
    let s = l.advance(s0, b'"').unwrap();
    let answers: Vec<Containment> =
        queries.iter().map(|q| l.check_prefixes(s, &RegexSpec::regex(*q))).collect();
    assert_eq!(l.cache.walk_classes.len(), 2, "one walk class per class asked");
    for (q, a) in queries.iter().zip(&answers) {
        let mut alone = lexer(body.clone());
        let s0 = alone.start_state(&alone.spec().all()).unwrap();
        let s = alone.advance(s0, b'"').unwrap();
        assert_eq!(alone.check_prefixes(s, &RegexSpec::regex(*q)), *a, "{q}");
    }
    assert_eq!(answers[0], Containment::Contained);
    assert_ne!(answers[1], Containment::Contained, "30 characters pass the bound of 20");
}
