//! Regexes over one domain of values (string contents, or number texts) as the normal form
//! keeps them: nothing, everything, or an intersection of conjuncts. A bound on the length
//! of strings (`minLength`, `maxLength`, a format's longest length) is a typed conjunct,
//! [`LengthBounds`], so an intersection drops the bounds another conjunct implies and the
//! emitter spells a string constrained by its length alone its own way, both without
//! reading regex text back. The regex handed on is the same as if the bounds had been
//! regex text all along: `(?s:.){m,n}` in the place of the conjunct.

use lexer::RegexSpec;

use crate::json_schema::ecma::ANY_CHAR;

/// Any string contents: the regex of [`LengthBounds::ANY`].
pub(crate) const STRING_ANY: &str = r"(?s:.)*";

/// Bounds on the number of characters of a string: `min..=max`, unbounded above without
/// `max`. [`LengthBounds::ANY`] holds every string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LengthBounds {
    pub min: u32,
    pub max: Option<u32>,
}

impl LengthBounds {
    /// Any length: every string.
    pub const ANY: LengthBounds = LengthBounds { min: 0, max: None };

    fn is_any(self) -> bool {
        self == LengthBounds::ANY
    }

    /// The strings of these lengths as a regex: `(?s:.)*` for any length, else
    /// `(?s:.){min,max}` (`(?s:.){min,}` without a maximum).
    pub fn regex(self) -> RegexSpec {
        RegexSpec::Regex(self.text())
    }

    fn text(self) -> String {
        match self.max {
            _ if self.is_any() => STRING_ANY.to_string(),
            Some(max) => format!("{ANY_CHAR}{{{},{max}}}", self.min),
            None => format!("{ANY_CHAR}{{{},}}", self.min),
        }
    }

    /// Whether every string with a length in `min..=max` (another conjunct's lengths) has a
    /// length within these bounds.
    fn holds_within(self, (min, max): (u32, Option<u32>)) -> bool {
        self.min <= min
            && match (self.max, max) {
                (None, _) => true,
                (Some(h), Some(m)) => m <= h,
                (Some(_), None) => false,
            }
    }
}

/// One conjunct of an intersection: string length bounds, or any other regex.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Term {
    Len(LengthBounds),
    Regex(RegexSpec),
}

impl Term {
    /// The conjunct as the regex handed on.
    pub fn spec(&self) -> RegexSpec {
        match self {
            Term::Len(b) => b.regex(),
            Term::Regex(r) => r.clone(),
        }
    }

    fn into_spec(self) -> RegexSpec {
        match self {
            Term::Len(b) => b.regex(),
            Term::Regex(r) => r,
        }
    }

    /// Whether the conjunct is the regex `r`.
    pub fn is(&self, r: &RegexSpec) -> bool {
        match self {
            Term::Regex(x) => x == r,
            Term::Len(b) => matches!(r, RegexSpec::Regex(s) if *s == b.text()),
        }
    }
}

/// The conjuncts as one regex: the conjunct alone, or their intersection.
fn spec_of(v: &[Term]) -> RegexSpec {
    match v {
        [t] => t.spec(),
        _ => RegexSpec::And(v.iter().map(Term::spec).collect()),
    }
}

/// A regex over a domain (string contents or number texts): nothing, everything, or the
/// values every conjunct matches (one conjunct or more).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Rx {
    Nothing,
    All,
    And(Vec<Term>),
}

impl Rx {
    /// The values of a regex; an intersection's operands become the conjuncts.
    pub fn regex(r: RegexSpec) -> Rx {
        match r {
            RegexSpec::And(xs) if xs.len() >= 2 => {
                Rx::And(xs.into_iter().map(Term::Regex).collect())
            }
            r => Rx::And(vec![Term::Regex(r)]),
        }
    }

    /// The strings whose length is within `b`.
    pub fn len(b: LengthBounds) -> Rx {
        Rx::And(vec![Term::Len(b)])
    }

    pub fn and(&self, o: &Rx) -> Rx {
        match (self, o) {
            (Rx::Nothing, _) | (_, Rx::Nothing) => Rx::Nothing,
            (Rx::All, x) | (x, Rx::All) => x.clone(),
            (Rx::And(a), Rx::And(b)) => {
                let mut v: Vec<Term> = a.iter().chain(b).cloned().collect();
                if !merge_lengths(&mut v) {
                    return Rx::Nothing;
                }
                drop_implied_lengths(&mut v);
                fuse_class_lengths(&mut v);
                if v.len() > 1 && contradicts(&v) {
                    Rx::Nothing
                } else {
                    Rx::And(v)
                }
            }
        }
    }

    /// `self | o`, reusing `self`'s alternatives: folding n alternatives is O(n), not O(n²).
    pub fn or_owned(self, o: &Rx) -> Rx {
        match (self, o) {
            (Rx::All, _) | (_, Rx::All) => Rx::All,
            (Rx::Nothing, x) => x.clone(),
            (x, Rx::Nothing) => x,
            (Rx::And(a), Rx::And(b)) => {
                let a = match a.len() {
                    1 => a.into_iter().next().map_or(RegexSpec::NoMatch, Term::into_spec),
                    _ => spec_of(&a),
                };
                let mut v = match a {
                    RegexSpec::Or(xs) => xs,
                    x => vec![x],
                };
                match b.as_slice() {
                    [Term::Regex(RegexSpec::Or(xs))] => v.extend(xs.iter().cloned()),
                    b => v.push(spec_of(b)),
                }
                Rx::And(vec![Term::Regex(RegexSpec::Or(v))])
            }
        }
    }

    /// The complement within `universe` (the domain's regex).
    pub fn not(&self, universe: Term) -> Rx {
        match self {
            Rx::All => Rx::Nothing,
            Rx::Nothing => Rx::All,
            Rx::And(v) => {
                Rx::And(vec![universe, Term::Regex(RegexSpec::Not(Box::new(spec_of(v))))])
            }
        }
    }

    pub fn is_nothing(&self) -> bool {
        matches!(self, Rx::Nothing)
    }

    /// The regex of the values, `None` for nothing or everything.
    pub fn as_spec(&self) -> Option<RegexSpec> {
        match self {
            Rx::And(v) => Some(spec_of(v)),
            Rx::Nothing | Rx::All => None,
        }
    }

    /// The regex of the values, `universe` standing for everything.
    pub fn spec(&self, universe: &str) -> RegexSpec {
        match self {
            Rx::Nothing => RegexSpec::NoMatch,
            Rx::All => RegexSpec::Regex(universe.to_string()),
            Rx::And(v) => spec_of(v),
        }
    }

    /// For strings: the length bounds where they are all that is asked of a string
    /// (everything: [`LengthBounds::ANY`]).
    pub fn length_only(&self) -> Option<LengthBounds> {
        match self {
            Rx::All => Some(LengthBounds::ANY),
            Rx::And(v) => match v.as_slice() {
                [Term::Len(b)] => Some(*b),
                _ => None,
            },
            Rx::Nothing => None,
        }
    }

    /// For strings: a repeated character class alone (`[a-z ]{0,100000}`, what
    /// `fuse_class_lengths` makes of a one-class `pattern` and length bounds), as the class
    /// (regex text) and the repeat's bounds.
    pub fn class_repeat(&self) -> Option<(String, LengthBounds)> {
        let Rx::And(v) = self else { return None };
        let [Term::Regex(RegexSpec::Regex(text))] = v.as_slice() else { return None };
        let r = class_repetition(text)?;
        Some((r.sub.to_string(), LengthBounds { min: r.min, max: r.max }))
    }

    /// Whether `r` is one of the conjuncts.
    pub fn has_conjunct(&self, r: &RegexSpec) -> bool {
        match self {
            Rx::And(v) => v.iter().any(|t| t.is(r)),
            Rx::Nothing | Rx::All => false,
        }
    }
}

/// Whether an intersection is empty on its face: one element is the complement of another,
/// or of an alternation holding it (`x & ~x`, `x & ~(x | y)`). `oneOf` branches that give a
/// property the same string schema build `x & ~x`; left to the lexer, proving that empty cost
/// derivre 140 ms when `x` was a `date-time` (a mask of JsonSchemaStore's
/// webjob-publish-settings).
fn contradicts(v: &[Term]) -> bool {
    let has = |y: &RegexSpec| v.iter().any(|t| t.is(y));
    v.iter().any(|x| match x {
        Term::Regex(RegexSpec::Not(y)) => {
            has(y) || matches!(&**y, RegexSpec::Or(ys) if ys.iter().any(has))
        }
        _ => false,
    })
}

/// Makes the length bounds of an intersection one (`allOf` of `minLength` and `maxLength`
/// in separate schemas: ten of them were ten counters in one lexeme, 1-10 ms a mask at a
/// string's start; one bound shares its masks through the lexer's counter twins). Exact;
/// `false` when the lengths leave nothing. [`LengthBounds::ANY`] (a universe) stays.
fn merge_lengths(v: &mut Vec<Term>) -> bool {
    let mut merged: Option<(usize, LengthBounds)> = None;
    let mut i = 0;
    while i < v.len() {
        let Term::Len(b) = v[i] else {
            i += 1;
            continue;
        };
        if b.is_any() {
            i += 1;
            continue;
        }
        match &mut merged {
            None => {
                merged = Some((i, b));
                i += 1;
            }
            Some((_, m)) => {
                m.min = m.min.max(b.min);
                m.max = match (m.max, b.max) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                };
                v.remove(i);
            }
        }
    }
    match merged {
        Some((_, m)) if m.max.is_some_and(|max| max < m.min) => false,
        Some((at, m)) => {
            v[at] = Term::Len(m);
            true
        }
        None => true,
    }
}

/// Drops from an intersection the length bounds (`minLength`, `maxLength`) that another
/// conjunct implies, every string of it having between `m` and `n` characters:
/// `format: date-time` beside `minLength: 1`. Exact. The lexer takes one derivative per
/// byte of the format instead of two and proves each new state of the intersection live: a
/// date-time's first masks 2.6-3.1 ms, where the format alone takes tens of microseconds.
///
/// Only real bounds go: the universe ([`LengthBounds::ANY`], the positive side of a
/// complement: `oneOf` branches are `P1 & ~P2 & …` over it) stays, as the lexer's structural
/// liveness rules read those shapes (without it, Github_hard---o12278's `oneOf` of
/// unanchored patterns ran a lexer step out of fuel). A length bound implies no other here
/// (the universe, all that is left of them, bounds nothing).
fn drop_implied_lengths(v: &mut Vec<Term>) {
    let bound = |t: &Term| match t {
        Term::Len(b) if !b.is_any() => Some(*b),
        _ => None,
    };
    if v.len() < 2 || !v.iter().any(|t| bound(t).is_some()) {
        return;
    }
    let others: Vec<(u32, Option<u32>)> = v
        .iter()
        .filter_map(|t| match t {
            Term::Regex(r) => r.char_len_bounds(),
            Term::Len(_) => None,
        })
        .collect();
    v.retain(|t| match bound(t) {
        Some(b) => !others.iter().any(|&o| b.holds_within(o)),
        None => true,
    });
}

/// The regex `text` as a repeat of one Unicode character class (`[a-z ]*`, `\d{2,5}`),
/// from the lexer's process-wide parse memo.
fn class_repetition(text: &str) -> Option<regex_syntax::hir::Repetition> {
    lexer::regex_class_repetition(text)
}

/// A length bound beside a repeated character class (`pattern: "^[a-z ]*$"` with
/// `maxLength: 1000`) becomes one repeat of the class, `[a-z ]{0,1000}`: the same strings
/// (both count characters), and a lexeme without an intersection, whose states inside the
/// repeat share their masks (the lexer's counter twins; an intersection's states cannot).
/// Bounds that leave nothing stay as they are.
fn fuse_class_lengths(v: &mut Vec<Term>) {
    use regex_syntax::hir::{Hir, Repetition};
    let Some(li) = v.iter().position(|t| matches!(t, Term::Len(b) if !b.is_any())) else {
        return;
    };
    let Term::Len(b) = v[li] else { return };
    for i in 0..v.len() {
        let Term::Regex(RegexSpec::Regex(text)) = &v[i] else { continue };
        let Some(r) = class_repetition(text) else { continue };
        let min = b.min.max(r.min);
        let max = match (b.max, r.max) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        if max.is_some_and(|m| m < min) {
            return;
        }
        let rep = Hir::repetition(Repetition { min, max, greedy: true, sub: r.sub.clone() });
        v[i] = Term::Regex(RegexSpec::Regex(rep.to_string()));
        v.remove(li);
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_schema::ecma;

    fn len(min: u32, max: Option<u32>) -> Rx {
        Rx::len(LengthBounds { min, max })
    }

    fn conjuncts(r: &Rx) -> usize {
        match r {
            Rx::And(v) => v.len(),
            _ => 0,
        }
    }

    #[test]
    fn lengths_a_format_or_pattern_implies_are_dropped() {
        let dt = Rx::regex(ecma::format_spec("date-time").unwrap());
        // `minLength: 1` beside a date-time (at least 20 characters): the date-time alone.
        assert_eq!(len(1, None).and(&dt), dt);
        assert_eq!(dt.and(&len(1, None)), dt);
        // `maxLength: 30` does not hold every date-time (fractions of a second): kept.
        assert_eq!(conjuncts(&dt.and(&len(0, Some(30)))), 2);
        // A fixed-length pattern under a larger `maxLength`, or above a smaller `minLength`.
        let hex = Rx::regex(RegexSpec::Regex("[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}".into()));
        assert_eq!(hex.and(&len(0, Some(36))), hex);
        assert_eq!(hex.and(&len(23, Some(23))), hex);
        assert_eq!(conjuncts(&hex.and(&len(24, None))), 2);
        // Characters, not bytes: `é` is one.
        let word = Rx::regex(RegexSpec::Regex("é{2,3}".into()));
        assert_eq!(word.and(&len(2, Some(3))), word);
        assert_eq!(conjuncts(&word.and(&len(0, Some(2)))), 2);
        // Two lengths are one; lengths that leave nothing, nothing.
        assert_eq!(len(1, None).and(&len(0, Some(5))), len(1, Some(5)));
        assert_eq!(len(3, Some(9)).and(&len(5, None)).and(&len(0, Some(7))), len(5, Some(7)));
        assert_eq!(len(6, None).and(&len(0, Some(5))), Rx::Nothing);
        // Beside another conjunct, still one bound (and the universe stays).
        let any = Rx::And(vec![Term::Len(LengthBounds::ANY)]);
        assert_eq!(conjuncts(&dt.and(&len(0, Some(40))).and(&len(0, Some(30)))), 2);
        assert_eq!(any.and(&len(2, None)).and(&len(0, Some(4))), {
            Rx::And(vec![
                Term::Len(LengthBounds::ANY),
                Term::Len(LengthBounds { min: 2, max: Some(4) }),
            ])
        });
    }

    #[test]
    fn a_length_beside_a_repeated_class_is_one_repeat() {
        let rx = |t: &str| Rx::regex(RegexSpec::Regex(t.into()));
        let one = |r: &Rx| match r {
            Rx::And(v) => match v.as_slice() {
                [Term::Regex(RegexSpec::Regex(t))] => t.clone(),
                _ => format!("{} conjuncts", v.len()),
            },
            _ => "not an intersection".into(),
        };
        assert_eq!(one(&rx("[a-z ]*").and(&len(0, Some(1000)))), "[ a-z]{0,1000}");
        assert_eq!(one(&len(3, None).and(&rx("[a-z]+"))), "[a-z]{3,}");
        assert_eq!(one(&rx("[a-z]{2,8}").and(&len(5, Some(20)))), "[a-z]{5,8}");
        // Not a class repeated, or bounds that leave nothing: both conjuncts stay.
        assert_eq!(one(&rx("(ab)*").and(&len(0, Some(9)))), "2 conjuncts");
        assert_eq!(one(&rx("[a-z]{2,3}").and(&len(5, None))), "2 conjuncts");
    }

    #[test]
    fn length_bounds_are_handed_on_as_counted_any_characters() {
        let spec = |min, max| LengthBounds { min, max }.regex();
        assert_eq!(spec(0, None), RegexSpec::Regex(STRING_ANY.into()));
        assert_eq!(spec(3, None), RegexSpec::Regex("(?s:.){3,}".into()));
        assert_eq!(spec(0, Some(7)), RegexSpec::Regex("(?s:.){0,7}".into()));
        assert_eq!(len(2, Some(4)).as_spec(), Some(RegexSpec::Regex("(?s:.){2,4}".into())));
    }
}
