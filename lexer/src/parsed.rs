//! Regexes parsed once per process (a leaf module: of the crate it uses only the cache lock). A `RegexSpec::Regex` string is read several ways:
//! whether it parses ([`regex_check`]) and matches the empty string ([`regex_nullable`]),
//! both asked by the grammar compilers, the byte-class boundaries it needs
//! ([`crate::ByteClasses`]), the fewest and most characters of its strings
//! ([`crate::RegexSpec::char_len_bounds`], for the JSON Schema compiler's length bounds),
//! whether it is one repeated character class ([`regex_class_repetition`], asked by the
//! same compiler beside a length bound), and, with derivre, its expression. Each was a
//! `regex_syntax` parse of its own (five process memos or none), every time a grammar was
//! built: a `date-time` format (its leap-second relations are ~100 small regexes) cost 11 of
//! a `{"t": date-time}` schema's 15 M compile instructions. Here one parse gives them all,
//! kept per process, so a regex that comes back (formats, common
//! patterns) costs a lookup, and derivre maps the kept structure into the new grammar.
//!
//! The structural AST covers literals, byte classes, classes (a non-ASCII one as the UTF-8
//! byte sequences of its characters: the same language as derivre's reading, another shape),
//! concatenation, alternation, repetition and groups; a regex with anything else (anchors and
//! other look-arounds, a group named `stop`, which derivre reads as a lookahead) is left to
//! derivre's own parse, as before.

use std::sync::{Arc, Mutex};

#[cfg(feature = "derivre")]
use derivre::RegexAst;
use hashbrown::HashMap;
use regex_syntax::hir::{Class, Hir, HirKind};

/// Memory the memo may hold (approximate bytes); cleared past it.
const MAX_BYTES: usize = 16 << 20;
/// Regexes longer than this are not kept (each is parsed every time).
const MAX_LEN: usize = 16 << 10;
/// UTF-8 sequences of a Unicode class translated at most (`unicode_class`).
#[cfg(feature = "derivre")]
const MAX_UTF8_SEQUENCES: usize = 24;
/// Approximate bytes per AST node, for [`MAX_BYTES`].
#[cfg(feature = "derivre")]
const NODE_BYTES: usize = 64;

/// What one parse of a regex gives.
pub(crate) struct Parsed {
    /// `regex_syntax`'s error, when it does not parse.
    pub(crate) error: Option<String>,
    /// Whether it matches the empty string (`false` when it does not parse).
    pub(crate) nullable: bool,
    /// The byte-class boundaries the regex needs (`after[b]`: a class ends at `b`); none
    /// when it does not parse.
    pub(crate) boundaries: [bool; 256],
    /// [`crate::RegexSpec::char_len_bounds`] of the regex.
    pub(crate) char_bounds: Option<(u32, Option<u32>)>,
    /// The structural AST, where the translation covers the regex.
    #[cfg(feature = "derivre")]
    pub(crate) ast: Option<Arc<RegexAst>>,
    /// The bounds of repeats the AST merged from nested ones ([`merged_repeat`]): not in
    /// the regex's text, where the lexer's counter twins look for bounds.
    #[cfg(feature = "derivre")]
    pub(crate) merged: Vec<(u32, u32)>,
    /// The one string the regex matches, when it is a literal (`aa`, `(?:a)a`).
    #[cfg(feature = "derivre")]
    pub(crate) literal: Option<Vec<u8>>,
    /// The regex as a repeat of one Unicode character class (`[a-z ]*`, `\d{2,5}`).
    pub(crate) class_repetition: Option<regex_syntax::hir::Repetition>,
}

type Memo = (HashMap<String, Arc<Parsed>>, usize);

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

/// The parse of `rx` (as derivre parses it: `regex_syntax`'s default parser), from the
/// process's memo.
pub(crate) fn parsed(rx: &str) -> Arc<Parsed> {
    if rx.len() > MAX_LEN {
        return Arc::new(parse(rx).0);
    }
    if let Some(hit) = crate::memo::lock_cache(&MEMO).and_then(|g| g.as_ref()?.0.get(rx).cloned()) {
        return hit;
    }
    let (p, nodes) = parse(rx);
    let p = Arc::new(p);
    let Some(mut guard) = crate::memo::lock_cache(&MEMO) else { return p };
    let (map, bytes) = guard.get_or_insert_with(|| (HashMap::new(), 0));
    let size = rx.len() + std::mem::size_of::<Parsed>() + nodes;
    if *bytes + size > MAX_BYTES {
        map.clear();
        *bytes = 0;
    }
    if map.insert(rx.to_string(), p.clone()).is_none() {
        *bytes += size;
    }
    p
}

/// The parse of `rx` and the approximate bytes of its AST.
fn parse(rx: &str) -> (Parsed, usize) {
    let hir = match regex_syntax::ParserBuilder::new().build().parse(rx) {
        Ok(hir) => hir,
        Err(e) => {
            let p = Parsed {
                error: Some(e.to_string()),
                nullable: false,
                boundaries: [false; 256],
                char_bounds: None,
                #[cfg(feature = "derivre")]
                ast: None,
                #[cfg(feature = "derivre")]
                merged: Vec::new(),
                #[cfg(feature = "derivre")]
                literal: None,
                class_repetition: None,
            };
            return (p, 0);
        }
    };
    #[cfg(feature = "derivre")]
    let (ast, bytes, merged) = {
        let (mut nodes, mut merged) = (0usize, Vec::new());
        let ast = to_ast(&hir, &mut nodes, &mut merged).map(Arc::new);
        let merged = if ast.is_some() { merged } else { Vec::new() };
        (ast, nodes * NODE_BYTES, merged)
    };
    #[cfg(not(feature = "derivre"))]
    let bytes = 0;
    let p = Parsed {
        error: None,
        nullable: hir.properties().minimum_len() == Some(0),
        boundaries: hir_boundaries(&hir),
        char_bounds: hir_char_bounds(&hir),
        #[cfg(feature = "derivre")]
        ast,
        #[cfg(feature = "derivre")]
        merged,
        #[cfg(feature = "derivre")]
        literal: match hir.kind() {
            HirKind::Literal(lit) => Some(lit.0.to_vec()),
            HirKind::Empty => Some(Vec::new()),
            _ => None,
        },
        class_repetition: match hir.kind() {
            HirKind::Repetition(r) if matches!(r.sub.kind(), HirKind::Class(Class::Unicode(_))) => {
                Some(r.clone())
            }
            _ => None,
        },
    };
    (p, bytes)
}

/// Whether regex `rx` parses (`regex_syntax`'s default parser, as the lexer reads it): its
/// error message otherwise. Kept per process with the regex's other readings.
pub fn regex_check(rx: &str) -> Result<(), String> {
    match &parsed(rx).error {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

/// Whether regex `rx` matches the empty string (`false` when it does not parse). Kept per
/// process with the regex's other readings.
pub fn regex_nullable(rx: &str) -> bool {
    parsed(rx).nullable
}

/// The regex `rx` as a repeat of one Unicode character class (`[a-z ]*`, `\d{2,5}`), as
/// `regex_syntax`'s default parser reads it; `None` for any other regex. Kept per process
/// with the regex's other readings: the JSON Schema compiler asks it of every pattern and
/// format beside a length bound, and a format's parse (`date-time`, `uri`) cost ~0.5 M
/// instructions each time (9 % of MaskBench's compile instructions, every 40th file).
pub fn regex_class_repetition(rx: &str) -> Option<regex_syntax::hir::Repetition> {
    parsed(rx).class_repetition.clone()
}

/// Character-length bounds: (fewest, most) characters, `None` for most: no bound.
pub(crate) type Bounds = Option<(u32, Option<u32>)>;

/// The bounds of a concatenation from its parts' (`None` if any is unknown).
pub(crate) fn concat_bounds(parts: impl Iterator<Item = Bounds>) -> Bounds {
    parts.into_iter().try_fold((0u32, Some(0u32)), |a, b| {
        let b = b?;
        Some((a.0.saturating_add(b.0), a.1.zip(b.1).map(|(p, q)| p.saturating_add(q))))
    })
}

/// The bounds of a union from its alternatives' (`None` if any is unknown, or none).
pub(crate) fn or_bounds(mut alts: impl Iterator<Item = Bounds>) -> Bounds {
    let first = alts.next()??;
    alts.try_fold(first, |a, b| {
        let b = b?;
        Some((a.0.min(b.0), a.1.zip(b.1).map(|(x, y)| x.max(y))))
    })
}

/// [`crate::RegexSpec::char_len_bounds`] of a parsed regex (Unicode classes: one character each).
fn hir_char_bounds(h: &Hir) -> Bounds {
    Some(match h.kind() {
        HirKind::Empty | HirKind::Look(_) => (0, Some(0)),
        HirKind::Literal(lit) => {
            let n = std::str::from_utf8(&lit.0).ok()?.chars().count() as u32;
            (n, Some(n))
        }
        HirKind::Class(Class::Unicode(_)) => (1, Some(1)),
        HirKind::Class(Class::Bytes(_)) => return None,
        HirKind::Repetition(r) => {
            let (min, max) = hir_char_bounds(&r.sub)?;
            let hi = match (max, r.max) {
                (Some(0), _) => Some(0),
                (Some(m), Some(n)) => Some(m.saturating_mul(n)),
                _ => None,
            };
            (min.saturating_mul(r.min), hi)
        }
        HirKind::Capture(c) => hir_char_bounds(&c.sub)?,
        HirKind::Concat(xs) => concat_bounds(xs.iter().map(hir_char_bounds))?,
        HirKind::Alternation(xs) => or_bounds(xs.iter().map(hir_char_bounds))?,
    })
}

#[cfg(feature = "derivre")]
fn to_ast(h: &Hir, nodes: &mut usize, merged: &mut Vec<(u32, u32)>) -> Option<RegexAst> {
    *nodes += 1;
    let all = |v: &[Hir], nodes: &mut usize, merged: &mut Vec<(u32, u32)>| {
        v.iter().map(|h| to_ast(h, nodes, merged)).collect::<Option<Vec<RegexAst>>>()
    };
    Some(match h.kind() {
        HirKind::Empty => RegexAst::EmptyString,
        HirKind::Literal(lit) => RegexAst::ByteLiteral(lit.0.to_vec()),
        HirKind::Class(Class::Bytes(c)) => {
            byte_set(&c.ranges().iter().map(|r| (r.start(), r.end())).collect::<Vec<_>>())
        }
        HirKind::Class(Class::Unicode(c)) => {
            if c.ranges().iter().all(|r| r.end() <= '\x7F') {
                return Some(byte_set(
                    &c.ranges()
                        .iter()
                        .map(|r| (r.start() as u8, r.end() as u8))
                        .collect::<Vec<_>>(),
                ));
            }
            unicode_class(c, nodes)?
        }
        HirKind::Repetition(r) => {
            let outer = (r.min, r.max.unwrap_or(u32::MAX));
            match to_ast(&r.sub, nodes, merged)? {
                RegexAst::Repeat(x, a, b) => match merged_repeat((a, b), outer) {
                    Some((lo, hi)) => {
                        merged.push((lo, hi));
                        RegexAst::Repeat(x, lo, hi)
                    }
                    None => RegexAst::Repeat(Box::new(RegexAst::Repeat(x, a, b)), outer.0, outer.1),
                },
                sub => RegexAst::Repeat(Box::new(sub), outer.0, outer.1),
            }
        }
        // derivre reads a group named `stop` as a lookahead.
        HirKind::Capture(c) if c.name.as_deref() == Some("stop") => return None,
        HirKind::Capture(c) => to_ast(&c.sub, nodes, merged)?,
        HirKind::Concat(v) => RegexAst::Concat(all(v, nodes, merged)?),
        HirKind::Alternation(v) => RegexAst::Or(all(v, nodes, merged)?),
        HirKind::Look(_) => return None,
    })
}

/// `(X{a,b}){c,d}` as one repeat `X{lo,hi}` when that is the same language (`u32::MAX`:
/// unbounded); `None` otherwise. `k` iterations of `X{a,b}` are `X^s` for every `s` in
/// `[ka, kb]` (a sum of `k` counts each in `[a, b]` takes every value between), so the
/// whole is `X^s` for `s` in the union of those intervals over `k` in `[c, d]`: one
/// interval `[ca, db]` exactly when each meets the next (`(k + 1)a <= kb + 1`, easiest at
/// larger `k`; from `k = 0`, whose interval is `{0}`, `a <= 1`). Nested repeats reach
/// derivre as one node (`((a{1,50}){1,50}){1,10}` is `a{1,25000}`): nested, each
/// derivative held a union of the ways to split the count so far (masks of 5–50 ms at
/// Llama 3 where the single repeat's take a few µs). Not merged past `u32` counts.
#[cfg(feature = "derivre")]
pub(crate) fn merged_repeat((a, b): (u32, u32), (c, d): (u32, u32)) -> Option<(u32, u32)> {
    const INF: u32 = u32::MAX;
    let contiguous = if c == d {
        true
    } else if c == 0 {
        a <= 1
    } else if b == INF {
        true
    } else {
        u64::from(a) <= u64::from(c) * u64::from(b - a) + 1
    };
    if !contiguous {
        return None;
    }
    let lo = u64::from(a) * u64::from(c);
    let hi = if b == 0 || d == 0 {
        0
    } else if b == INF || d == INF {
        u64::from(INF)
    } else {
        let hi = u64::from(b) * u64::from(d);
        if hi >= u64::from(INF) {
            return None;
        }
        hi
    };
    if lo >= u64::from(INF) {
        return None;
    }
    Some((lo as u32, hi as u32))
}

/// A Unicode class as the UTF-8 encodings of its characters: one alternative per UTF-8
/// byte-range sequence (`regex_syntax::utf8`), each a concatenation of byte sets. The same
/// language as derivre's own reading of the class; built once per process (with the regex)
/// instead of once per grammar (a JSON string's `(?s:.)` and `[^"\\]` were ~60,000
/// instructions of every schema's lexer). Classes of many ranges (`\w`, `\p{L}`: hundreds
/// of sequences) are left to derivre, whose tree of ranges is smaller: `None`.
#[cfg(feature = "derivre")]
fn unicode_class(c: &regex_syntax::hir::ClassUnicode, nodes: &mut usize) -> Option<RegexAst> {
    let mut alts = Vec::new();
    for r in c.ranges() {
        for seq in regex_syntax::utf8::Utf8Sequences::new(r.start(), r.end()) {
            if alts.len() == MAX_UTF8_SEQUENCES {
                return None;
            }
            let parts: Vec<RegexAst> =
                seq.as_slice().iter().map(|br| byte_set(&[(br.start, br.end)])).collect();
            *nodes += parts.len() + 1;
            alts.push(match <[RegexAst; 1]>::try_from(parts) {
                Ok([one]) => one,
                Err(parts) => RegexAst::Concat(parts),
            });
        }
    }
    Some(match <[RegexAst; 1]>::try_from(alts) {
        Ok([one]) => one,
        Err(alts) if alts.is_empty() => RegexAst::NoMatch,
        Err(alts) => RegexAst::Or(alts),
    })
}

/// The byte-class boundaries a parsed regex needs (`after[b]`: a class ends at `b`): every
/// literal byte, every byte range of a class, every UTF-8 byte range of a Unicode class.
fn hir_boundaries(hir: &Hir) -> [bool; 256] {
    let mut after = [false; 256];
    let mut range = |lo: u8, hi: u8| {
        if lo > 0 {
            after[lo as usize - 1] = true;
        }
        after[hi as usize] = true;
    };
    let mut todo = vec![hir];
    while let Some(h) = todo.pop() {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(lit) => lit.0.iter().for_each(|&b| range(b, b)),
            HirKind::Class(Class::Bytes(c)) => {
                c.ranges().iter().for_each(|r| range(r.start(), r.end()))
            }
            HirKind::Class(Class::Unicode(c)) => {
                for r in c.ranges() {
                    for seq in regex_syntax::utf8::Utf8Sequences::new(r.start(), r.end()) {
                        for br in seq.as_slice() {
                            range(br.start, br.end);
                        }
                    }
                }
            }
            HirKind::Repetition(r) => todo.push(&r.sub),
            HirKind::Capture(c) => todo.push(&c.sub),
            HirKind::Concat(v) | HirKind::Alternation(v) => todo.extend(v.iter()),
        }
    }
    after
}

#[cfg(feature = "derivre")]
/// A byte set as derivre wants it: `Byte` for one byte, `ByteSet` (8 words) for more,
/// `NoMatch` for none (derivre expects byte sets of at least two bytes).
pub(crate) fn byte_set(ranges: &[(u8, u8)]) -> RegexAst {
    let mut set = [0u32; 8];
    for &(lo, hi) in ranges {
        for x in lo..=hi {
            set[x as usize / 32] |= 1 << (x % 32);
        }
    }
    let n: u32 = set.iter().map(|w| w.count_ones()).sum();
    match n {
        0 => RegexAst::NoMatch,
        1 => {
            let b = (0..=255u8).find(|&b| set[b as usize / 32] & (1 << (b % 32)) != 0).unwrap_or(0);
            RegexAst::Byte(b)
        }
        _ => RegexAst::ByteSet(set.to_vec()),
    }
}

#[cfg(all(test, feature = "derivre"))]
mod tests {
    use super::*;
    use derivre::{ExprRef, RegexBuilder};

    fn structural(rx: &str) -> Option<Arc<RegexAst>> {
        parsed(rx).ast.clone()
    }

    /// The structural AST of `rx` and derivre's own parse, built in one builder, checked to
    /// match the same strings (neither has a string the other lacks: derivre decides it).
    fn same_strings_as_derivre(rx: &str) -> (RegexBuilder, ExprRef, ExprRef) {
        let ast = structural(rx).unwrap_or_else(|| panic!("{rx} not translated"));
        let mut b = RegexBuilder::new();
        let ours = b.mk(&ast).unwrap();
        let theirs = b.mk(&RegexAst::Regex(rx.into())).unwrap();
        let (o, t) = (RegexAst::ExprRef(ours), RegexAst::ExprRef(theirs));
        for (x, y) in [(&o, &t), (&t, &o)] {
            let only = b.mk(&RegexAst::And(vec![x.clone(), RegexAst::Not(Box::new(y.clone()))]));
            assert!(
                b.to_regex(only.unwrap()).always_empty(),
                "{rx}: a string only one side matches"
            );
        }
        (b, ours, theirs)
    }

    /// The structural AST and derivre's own parse give the same expression (derivre
    /// hash-conses expressions: the same node when the same language is built the same way).
    #[test]
    fn the_structural_ast_matches_derivres_parse() {
        let cases = [
            "abc",
            "[0-9]{4}-(?:0[1-9]|1[0-2])",
            "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})",
            "[a-z]*",
            "(a|bc)+x?",
            "(?i)abc",
            "",
        ];
        for rx in cases {
            let mut b = RegexBuilder::new();
            let theirs = b.mk(&RegexAst::Regex(rx.into())).unwrap();
            match structural(rx) {
                Some(ast) => {
                    let ours = b.mk(&ast).unwrap();
                    assert_eq!(ours, theirs, "{rx}");
                }
                None => panic!("{rx} not translated"),
            }
        }
    }

    /// Where the shapes differ (Unicode classes: derivre builds its own tree of UTF-8
    /// ranges), the two expressions match the same strings: neither has a string the
    /// other lacks (derivre decides the difference), and samples agree.
    #[test]
    fn unicode_classes_match_what_derivre_reads() {
        let cases = [
            "[^\"\\\\]{0,12}",
            "(?s:.)*",
            ".",
            "é|[α-ω]+",
            "[^\"\\\\\\x00-\\x1F\\x7F]*",
            "[α-ωÀ-ÿ0-9]{0,3}x",
            "[\\u{80}-\\u{10FFFF}]",
            "[^a]",
        ];
        let samples: [&[u8]; 14] = [
            b"",
            b"a",
            b"\"",
            b"\\",
            "é".as_bytes(),
            "αβγ".as_bytes(),
            "日本".as_bytes(),
            "😀".as_bytes(),
            b"\x7F",
            b"\n",
            b"\xC0\x80",
            b"\xED\xA0\x80",
            b"\xF4\x90\x80\x80",
            b"\xE2\x82",
        ];
        for rx in cases {
            let (b, ours, theirs) = same_strings_as_derivre(rx);
            for s in samples {
                assert_eq!(
                    b.to_regex(ours).is_match_bytes(s),
                    b.to_regex(theirs).is_match_bytes(s),
                    "{rx} on {s:?}"
                );
            }
        }
    }

    /// Merged nested repeats: the merge exactly where the counts form one interval (every
    /// small case against the counts listed), and the merged expression matches the same
    /// strings as derivre's own reading of the nested regex.
    #[test]
    fn nested_repeats_merge_where_their_counts_are_one_interval() {
        for a in 0..5u32 {
            for b in a..7 {
                for c in 0..5u32 {
                    for d in c..7 {
                        let mut counts: Vec<u32> =
                            (c..=d).flat_map(|k| (k * a)..=(k * b)).collect();
                        counts.sort_unstable();
                        counts.dedup();
                        let (lo, hi) = (counts[0], counts[counts.len() - 1]);
                        let one = counts.len() as u32 == hi - lo + 1;
                        let want = one.then_some((lo, hi));
                        assert_eq!(merged_repeat((a, b), (c, d)), want, "{a} {b} {c} {d}");
                    }
                }
            }
        }
        let inf = u32::MAX;
        assert_eq!(merged_repeat((1, inf), (2, 5)), Some((2, inf)));
        assert_eq!(merged_repeat((3, inf), (0, 5)), None, "{{0}} and [3, inf)");
        assert_eq!(merged_repeat((2, 3), (1, inf)), Some((2, inf)));
        assert_eq!(merged_repeat((3, 3), (1, inf)), None, "multiples of 3");
        assert_eq!(merged_repeat((0, 0), (1, inf)), Some((0, 0)));
        assert_eq!(merged_repeat((1, 70_000), (1, 70_000)), None, "past u32");
        let cases = [
            "((a{1,5}){1,4}){1,3}",
            "(?:[ab]{2,3}){1,5}",
            "(?:(?:xy){2,3}){1,5}z",
            "(?:a{3}){1,4}",
            "(?:a{2,5})*",
            "(?:a+){2,}",
            "(?:a{0,2}){0,3}b",
        ];
        for rx in cases {
            same_strings_as_derivre(rx);
        }
        assert_eq!(parsed("((a{1,50}){1,50}){1,10}").merged, vec![(1, 2500), (1, 25_000)]);
        assert!(parsed("(?:a{3}){1,4}").merged.is_empty(), "3, 6, 9, 12: not one interval");
    }

    #[test]
    fn anchors_and_large_classes_are_left_to_derivre() {
        assert!(structural("^abc$").is_none());
        assert!(structural("é|[α-ω]").is_some());
        assert!(structural("\\w+").is_none());
        assert!(structural("\\bword").is_none());
        assert!(structural("(").is_none());
        assert!(structural("a(?P<stop>b)").is_none());
        assert!(structural("a(?P<name>b)").is_some());
        // Repeated: from the memo, the same answer.
        assert!(structural("[0-9]+").is_some());
        assert!(structural("[0-9]+").is_some());
    }
}

#[cfg(test)]
mod class_tests {
    use super::*;

    #[test]
    fn class_repetitions_are_read_off_the_parse() {
        let rep = |rx: &str| regex_class_repetition(rx).map(|r| (r.min, r.max, r.sub.to_string()));
        assert_eq!(rep("[a-z ]*"), Some((0, None, "[ a-z]".to_string())));
        assert_eq!(rep(r"(?:\d){2,5}").map(|r| (r.0, r.1)), Some((2, Some(5))));
        assert_eq!(rep("é+").map(|r| (r.0, r.1)), None, "a literal, not a class");
        for rx in ["ab*", "[a-z]+x", "(?:[a-z]|b)*c", "(", "[a-z]"] {
            assert_eq!(rep(rx), None, "{rx}");
        }
    }
}
