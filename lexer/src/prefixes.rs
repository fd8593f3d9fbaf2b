//! The slicer's containment query answered by walking the lexer's own DFA: is every string
//! of `C{m,n}` (a character class `C` repeated), read from a state, a prefix of a lexeme
//! (no DEAD state on the way)?
//!
//! The walk keeps the set of lexer states reachable after `k` characters of `C`, for `k` up
//! to `n`; every character is a UTF-8 byte sequence, walked byte range by byte range with
//! the sets deduplicated after each byte, so a lexeme like `[^"]{0,50}"` keeps one state per
//! depth (hash-consed derivatives) and a bounded string costs `n` short layers of table
//! lookups, whatever the repeat bound. For an unbounded `C{m,}` the sets repeat (a finite
//! DFA), and a repeated set proves every longer string too. Work is bounded by fuel
//! (advances); running out is [`Containment::Unknown`], never a wrong "contained".

use regex_syntax::hir::{Class, HirKind};
use regex_syntax::utf8::Utf8Sequences;

use crate::{Containment, Lexer, RegexSpec, StateId};

/// A query of the form `C{min,max}` as UTF-8 byte-range sequences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRepeat {
    /// Each character of `C` is one of these sequences of inclusive byte ranges.
    seqs: Vec<Vec<(u8, u8)>>,
    max: Option<u32>,
}

impl ClassRepeat {
    /// Recognizes `C{m,n}` / `C{m,}` / `C+` / `C*` in a query; `None` for any other shape.
    pub fn parse(query: &RegexSpec) -> Option<ClassRepeat> {
        let RegexSpec::Regex(rx) = query else { return None };
        let hir = regex_syntax::ParserBuilder::new().build().parse(rx).ok()?;
        // regex-syntax folds `C{1}` / `C{1,1}` into the class itself.
        let (class, max) = match hir.kind() {
            HirKind::Repetition(rep) => (rep.sub.kind(), rep.max),
            k @ HirKind::Class(_) => (k, Some(1)),
            _ => return None,
        };
        let seqs: Vec<Vec<(u8, u8)>> = match class {
            HirKind::Class(Class::Unicode(c)) => c
                .ranges()
                .iter()
                .flat_map(|r| Utf8Sequences::new(r.start(), r.end()))
                .map(|s| s.as_slice().iter().map(|b| (b.start, b.end)).collect())
                .collect(),
            HirKind::Class(Class::Bytes(c)) => {
                c.ranges().iter().map(|r| vec![(r.start(), r.end())]).collect()
            }
            _ => return None,
        };
        Some(ClassRepeat { seqs, max })
    }
}

/// Advances one walk may make (table lookups when warm).
pub const WALK_FUEL: u64 = 200_000;
/// New lexer states one walk may create (so a walk cannot use up the lexer's state or fuel
/// limits, which would make a sliced mask differ from an unsliced one).
pub const WALK_NEW_STATES: usize = 1024;

/// The outcome of [`walk_class_repeat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// Every string of the query leads to a live state.
    Contained,
    /// Some string leads to DEAD (or to a lexer error).
    NotContained,
    /// Out of fuel or of new states: undecided.
    Undecided,
}

/// [`walk_class_repeat`] with the default budgets, as a [`Containment`].
pub fn check_class_repeat<L: Lexer + ?Sized>(
    lexer: &mut L,
    state: StateId,
    q: &ClassRepeat,
) -> Containment {
    match walk_class_repeat(lexer, state, q, WALK_FUEL, WALK_NEW_STATES) {
        Walk::Contained => Containment::Contained,
        _ => Containment::Unknown,
    }
}

/// Walks `q` from `state`; see the module docs. `fuel` bounds the number of advances,
/// `new_states` the number of lexer states the walk may create.
pub fn walk_class_repeat<L: Lexer + ?Sized>(
    lexer: &mut L,
    state: StateId,
    q: &ClassRepeat,
    mut fuel: u64,
    new_states: usize,
) -> Walk {
    if state == StateId::DEAD {
        return Walk::NotContained;
    }
    let states_cap = lexer.num_states().saturating_add(new_states);
    let mut cur = vec![state];
    let mut seen: Vec<Vec<StateId>> = Vec::new();
    let mut depth = 0u32;
    let (mut layer, mut next_layer, mut next) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        if q.max.is_some_and(|m| depth >= m) {
            return Walk::Contained;
        }
        if q.max.is_none() {
            // The sets follow a deterministic function of the previous set: a repeat means
            // every later depth was seen already.
            if seen.contains(&cur) {
                return Walk::Contained;
            }
            seen.push(cur.clone());
        }
        next.clear();
        for &s in &cur {
            for seq in &q.seqs {
                layer.clear();
                layer.push(s);
                for &(lo, hi) in seq {
                    next_layer.clear();
                    for &t in &layer {
                        for b in lo..=hi {
                            if fuel == 0 || lexer.num_states() > states_cap {
                                return Walk::Undecided;
                            }
                            fuel -= 1;
                            match lexer.advance(t, b) {
                                Ok(u) if u != StateId::DEAD => next_layer.push(u),
                                _ => return Walk::NotContained,
                            }
                        }
                    }
                    next_layer.sort_unstable();
                    next_layer.dedup();
                    std::mem::swap(&mut layer, &mut next_layer);
                }
                next.extend_from_slice(&layer);
            }
        }
        next.sort_unstable();
        next.dedup();
        std::mem::swap(&mut cur, &mut next);
        depth += 1;
    }
}
