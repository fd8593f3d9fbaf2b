//! The slicer's containment query answered by walking the lexer's own DFA: is every string
//! of `C{m,n}` (a character class `C` repeated), read from a state, a prefix of a lexeme
//! (no DEAD state on the way, and no state where a lazy lexeme matches: that lexeme would
//! end there, inside the string)?
//!
//! The walk keeps the set of lexer states reachable after `k` characters of `C`; every
//! character is a UTF-8 byte sequence, walked position by position with the sets
//! deduplicated after each byte, so a lexeme like `[^"]{0,50}"` keeps one state per depth
//! (hash-consed derivatives). It goes on until some string dies (the *live depth* is then
//! the longest length whose strings all live), or until a set repeats (a finite DFA: every
//! longer string lives too), or until its budget runs out (the depth reached so far is
//! known live). One walk answers every query on the same class: `C{m,n}` is contained iff
//! `n` is at most the live depth. Work is bounded by fuel (advances) and by the number of
//! new lexer states; running out is never a wrong "contained".

use regex_syntax::hir::{Class, HirKind};
use regex_syntax::utf8::Utf8Sequences;

use std::sync::Arc;

use crate::{Containment, Lexer, ProcessMemo, RegexSpec, StateFlags, StateId};

/// Advances one walk may make (table lookups when warm).
pub const WALK_FUEL: u64 = 200_000;
/// How deep a walk for an unbounded query `C{m,}` goes looking for a repeated state set.
pub const UNBOUNDED_WALK_DEPTH: u32 = 8;
/// New lexer states a walk `depth` characters deep may create: enough for a bounded string
/// (one state per character plus a few for partial UTF-8 sequences) and little more, so a
/// walk cannot use up the lexer's state or fuel limits (which would make a sliced mask
/// differ from an unsliced one) nor spend more on cold transitions than the trie walk it
/// would save.
pub fn walk_new_states(depth: u32) -> usize {
    (16 * depth as usize + 64).min(1024)
}
/// The most lexer states after one depth: more means the lexeme tells characters apart
/// (keys minus known names, say) and the walk would build states the trie never visits.
/// Small on purpose: a bounded or free string keeps one state per depth, while a key
/// position of an object with 20 named keys and free extra keys has a state per first
/// letter, and walking those (each cold advance one derivative per member) cost up to
/// 25 ms where the trie walk it would save costs 0.3 ms.
pub const WALK_MAX_SET: usize = 8;

/// A character class as UTF-8 sequences: each character is one sequence of positions, each
/// position a list of bytes to try.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CharClass {
    seqs: Vec<Vec<Vec<u8>>>,
}

impl CharClass {
    /// The same class with, at each position, one byte per byte class of `class_of` (bytes
    /// of one class lead every lexer state to the same state).
    pub fn reduced(&self, class_of: &[u8; 256]) -> CharClass {
        let seqs = self
            .seqs
            .iter()
            .map(|seq| {
                seq.iter()
                    .map(|bytes| {
                        let mut seen = [false; 256];
                        bytes
                            .iter()
                            .copied()
                            .filter(|&b| {
                                !std::mem::replace(&mut seen[class_of[b as usize] as usize], true)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        CharClass { seqs }
    }
}

impl CharClass {
    /// The characters: each a sequence of positions, each position the bytes it may hold.
    pub fn seqs(&self) -> &[Vec<Vec<u8>>] {
        &self.seqs
    }

    /// How many distinct bytes a character of the class may start with.
    pub fn num_first_bytes(&self) -> usize {
        let mut seen = [false; 256];
        for b in self.seqs.iter().filter_map(|s| s.first()).flatten() {
            seen[*b as usize] = true;
        }
        seen.iter().filter(|&&x| x).count()
    }
}

/// A query of the form `C{min,max}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRepeat {
    /// `C`.
    pub class: CharClass,
    /// The least count.
    pub min: u32,
    /// `None`: unbounded.
    pub max: Option<u32>,
    /// A few bytes that start one-byte characters of `class` (the first lowercase letter,
    /// uppercase letter and digit it holds, else its first byte): quick probes.
    pub probe_bytes: Vec<u8>,
}

/// Queries already parsed, shared by every lexer of the process: the slicer asks the same
/// few queries of each new grammar's lexer, and parsing one with regex-syntax was a third
/// of a first mask's time (measured on MaskBench schemas). 256 entries: the queries of a
/// few slicers fit.
static PARSED: ProcessMemo<RegexSpec, Option<Arc<ClassRepeat>>> = ProcessMemo::new(256);

impl ClassRepeat {
    /// [`ClassRepeat::parse`] through a process-wide cache.
    pub fn parse_cached(query: &RegexSpec) -> Option<Arc<ClassRepeat>> {
        PARSED.get_or_compute(query, || ClassRepeat::parse(query).map(Arc::new))
    }

    /// Recognizes `C{m,n}` / `C{m,}` / `C+` / `C*` / `C` in a query; `None` for any other
    /// shape.
    pub fn parse(query: &RegexSpec) -> Option<ClassRepeat> {
        let RegexSpec::Regex(rx) = query else { return None };
        let hir = regex_syntax::ParserBuilder::new().build().parse(rx).ok()?;
        // regex-syntax folds `C{1}` / `C{1,1}` into the class itself.
        let (class, min, max) = match hir.kind() {
            HirKind::Repetition(rep) => (rep.sub.kind(), rep.min, rep.max),
            k @ HirKind::Class(_) => (k, 1, Some(1)),
            _ => return None,
        };
        let range = |lo: u8, hi: u8| (lo..=hi).collect::<Vec<u8>>();
        let seqs: Vec<Vec<Vec<u8>>> = match class {
            HirKind::Class(Class::Unicode(c)) => c
                .ranges()
                .iter()
                .flat_map(|r| Utf8Sequences::new(r.start(), r.end()))
                .map(|s| s.as_slice().iter().map(|b| range(b.start, b.end)).collect())
                .collect(),
            HirKind::Class(Class::Bytes(c)) => {
                c.ranges().iter().map(|r| vec![range(r.start(), r.end())]).collect()
            }
            _ => return None,
        };
        let class = CharClass { seqs };
        let single: Vec<u8> =
            class.seqs.iter().filter(|s| s.len() == 1).flat_map(|s| s[0].iter().copied()).collect();
        let mut probe_bytes: Vec<u8> = [b'a'..=b'z', b'A'..=b'Z', b'0'..=b'9']
            .into_iter()
            .filter_map(|mut r| r.find(|b| single.contains(b)))
            .collect();
        if probe_bytes.is_empty() {
            probe_bytes.extend(single.iter().min());
        }
        Some(ClassRepeat { class, min, max, probe_bytes })
    }
}

/// How many characters of a class can surely be read from a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveDepth {
    /// Every string of at most this many characters leads to a live state.
    pub depth: u32,
    /// Every string, of any length, does (the walk found a repeated state set).
    pub unbounded: bool,
    /// The walk stopped on a budget (fuel, new states, too many states at one depth), not
    /// on a dead string or its depth limit: deeper strings may well live.
    pub gave_up: bool,
}

impl LiveDepth {
    /// The answer for a query `C{m,max}`.
    pub fn contains(self, max: Option<u32>) -> Containment {
        let yes = self.unbounded || max.is_some_and(|m| m <= self.depth);
        if yes {
            Containment::Contained
        } else {
            Containment::Unknown
        }
    }
}

/// [`live_depth`] with the default budgets, as the answer for `q`.
pub fn check_class_repeat<L: Lexer + ?Sized>(
    lexer: &mut L,
    state: StateId,
    q: &ClassRepeat,
) -> Containment {
    let depth = q.max.unwrap_or(UNBOUNDED_WALK_DEPTH);
    live_depth(lexer, state, &q.class, Some(depth), WALK_FUEL, walk_new_states(depth))
        .contains(q.max)
}

/// Walks `class` from `state` (see the module docs), at most `limit` characters deep when
/// given. `fuel` bounds the number of advances, `new_states` the lexer states the walk may
/// create.
pub fn live_depth<L: Lexer + ?Sized>(
    lexer: &mut L,
    state: StateId,
    class: &CharClass,
    limit: Option<u32>,
    mut fuel: u64,
    new_states: usize,
) -> LiveDepth {
    let mut out = LiveDepth { depth: 0, unbounded: false, gave_up: false };
    if state == StateId::DEAD {
        return out;
    }
    let states_cap = lexer.num_states().saturating_add(new_states);
    let mut cur = vec![state];
    let mut seen: hashbrown::HashSet<Vec<StateId>> = hashbrown::HashSet::new();
    let (mut scratch, mut next) = (Scratch::default(), Vec::new());
    loop {
        // The sets follow a deterministic function of the previous set: a repeat means
        // every later depth was seen already.
        if !seen.insert(cur.clone()) {
            out.unbounded = true;
            return out;
        }
        if limit.is_some_and(|m| out.depth >= m) {
            return out;
        }
        match step_class(lexer, &cur, class, &mut fuel, states_cap, &mut next, &mut scratch) {
            Ok(()) => {}
            Err(Stop::Dead) => return out,
            Err(Stop::Budget) => {
                out.gave_up = true;
                return out;
            }
        }
        std::mem::swap(&mut cur, &mut next);
        out.depth += 1;
    }
}

/// Why [`step_class`] stopped.
enum Stop {
    /// A string died (or met a lazy lexeme's match).
    Dead,
    /// Fuel, new states, or too many states at one depth.
    Budget,
}

/// Buffers of [`step_class`], kept across depths.
#[derive(Default)]
struct Scratch {
    layer: Vec<StateId>,
    next_layer: Vec<StateId>,
}

/// The set of states after one more character of `class` from each state of `cur`, into
/// `next` (sorted, deduplicated): every character a UTF-8 byte sequence walked position
/// by position, the sets deduplicated after each byte.
fn step_class<L: Lexer + ?Sized>(
    lexer: &mut L,
    cur: &[StateId],
    class: &CharClass,
    fuel: &mut u64,
    states_cap: usize,
    next: &mut Vec<StateId>,
    scratch: &mut Scratch,
) -> Result<(), Stop> {
    let Scratch { layer, next_layer } = scratch;
    next.clear();
    for &s in cur {
        for seq in &class.seqs {
            layer.clear();
            layer.push(s);
            for bytes in seq {
                next_layer.clear();
                for &t in layer.iter() {
                    for &b in bytes {
                        if *fuel == 0 || lexer.num_states() > states_cap {
                            return Err(Stop::Budget);
                        }
                        *fuel -= 1;
                        match lexer.advance(t, b) {
                            // A lazy lexeme that matches ends there: a longer string does
                            // not continue it, so the walk stops as at a dead one.
                            Ok(u)
                                if u != StateId::DEAD
                                    && !lexer.flags(u).contains(StateFlags::LAZY_ACCEPTING) =>
                            {
                                next_layer.push(u)
                            }
                            _ => return Err(Stop::Dead),
                        }
                    }
                }
                if next_layer.len() > 1 {
                    next_layer.sort_unstable();
                    next_layer.dedup();
                }
                std::mem::swap(layer, next_layer);
            }
            next.extend_from_slice(layer);
        }
        // Give up as soon as the depth is known to hold too many states.
        if next.len() > 4 * WALK_MAX_SET {
            next.sort_unstable();
            next.dedup();
            if next.len() > WALK_MAX_SET {
                return Err(Stop::Budget);
            }
        }
    }
    next.sort_unstable();
    next.dedup();
    if next.len() > WALK_MAX_SET {
        return Err(Stop::Budget);
    }
    Ok(())
}

/// Where every run of `class` read from `state` ends its lexeme: `Some((r, e))` when every
/// string of fewer than `r` characters of `class` leads to a live state (no lazy lexeme
/// matching on the way) and every string of exactly `r` characters to the one state `e`,
/// which matches and cannot be extended (the lexeme must end there: a chunk of a long
/// string `r` characters before its end). `None` otherwise, past `limit` characters, or on
/// a budget (`fuel` advances, `new_states` new lexer states); `None` is always safe.
pub fn run_end<L: Lexer + ?Sized>(
    lexer: &mut L,
    state: StateId,
    class: &CharClass,
    limit: u32,
    mut fuel: u64,
    new_states: usize,
) -> Option<(u32, StateId)> {
    if state == StateId::DEAD {
        return None;
    }
    let states_cap = lexer.num_states().saturating_add(new_states);
    let mut cur = vec![state];
    let (mut scratch, mut next) = (Scratch::default(), Vec::new());
    for depth in 1..=limit {
        step_class(lexer, &cur, class, &mut fuel, states_cap, &mut next, &mut scratch).ok()?;
        let ends = |s: StateId| {
            let f = lexer.flags(s);
            f.is_accepting() && f.contains(StateFlags::NO_EXTENSION)
        };
        match next.as_slice() {
            [e] if ends(*e) => return Some((depth, *e)),
            set if set.iter().any(|&s| ends(s)) => return None,
            _ => {}
        }
        std::mem::swap(&mut cur, &mut next);
    }
    None
}
