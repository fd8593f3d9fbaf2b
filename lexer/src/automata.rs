//! [`AutomataLexer`]: a second [`Lexer`] over `regex-automata` DFAs. It does not depend on
//! derivre (it builds with `--no-default-features`) and shares no state-building code with
//! [`DerivreLexer`](crate::Lexer), so the two cross-check each other.
//!
//! Each lexeme is compiled (through `regex-syntax`'s HIR, Thompson NFA, minimized dense DFA)
//! and then copied into a small explicit table with, per DFA state, "accepting" and "live"
//! (some extension matches). Lexer states are hash-consed sets of (lexeme, DFA state) pairs,
//! with a lazily filled transition table over the union of the lexemes' byte classes.

use std::sync::Arc;

use hashbrown::HashMap;
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, Repetition};

use crate::classes::ByteClasses;
use crate::lexer::EMPTY;
use crate::spec::fold;
use crate::{
    Error, ErrorKind, LexemeIdx, LexemeSet, Lexer, LexerLimits, LexerSpec, RegexSpec, StateFlags,
    StateId,
};

const MISSING: StateId = StateId(u32::MAX);

/// One lexeme as an explicit DFA: state 0 is its start.
#[derive(Clone, Debug)]
struct LexemeDfa {
    class_of: [u8; 256],
    num_classes: usize,
    /// `trans[s * num_classes + class]`
    trans: Vec<u32>,
    accept: Vec<bool>,
    /// Some (possibly empty) extension from this state matches.
    live: Vec<bool>,
}

impl LexemeDfa {
    #[inline]
    fn next(&self, s: u32, b: u8) -> u32 {
        self.trans[s as usize * self.num_classes + self.class_of[b as usize] as usize]
    }
}

type Members = Box<[(LexemeIdx, u32)]>;

/// A [`Lexer`] over `regex-automata`, for specs without `and`, `not`, `json_quote`,
/// `multiple_of` and `look_ahead` (it fails with [`ErrorKind::Unsupported`] on those).
/// DFAs are built eagerly per lexeme at construction; lexer states lazily.
#[derive(Clone, Debug)]
pub struct AutomataLexer {
    class_of: [u8; 256],
    num_classes: usize,
    table: Vec<StateId>,
    num_transitions: usize,
    flags: Vec<StateFlags>,
    accepting: Vec<LexemeSet>,
    possible: Vec<LexemeSet>,
    forced: Vec<Option<u8>>,
    members: Vec<Members>,
    state_ids: HashMap<Members, StateId>,
    dfas: Vec<LexemeDfa>,
    lazy: LexemeSet,
    limits: LexerLimits,
    spec: Arc<LexerSpec>,
}

impl AutomataLexer {
    /// Compiles `spec` with the default [`LexerLimits`].
    pub fn new(spec: &LexerSpec) -> Result<Self, Error> {
        Self::with_limits(Arc::new(spec.clone()), LexerLimits::default())
    }

    /// Compiles every lexeme of `spec` into a DFA.
    pub fn with_limits(spec: Arc<LexerSpec>, limits: LexerLimits) -> Result<Self, Error> {
        spec.validate(limits.max_depth)?;
        let mut dfas = Vec::with_capacity(spec.len());
        let mut boundary_after = [false; 256];
        for l in &spec.lexemes {
            let hir = fold(&l.name, &l.regex, limits.max_depth, |node, args| {
                to_hir(&l.name, node, args, &limits)
            })?;
            let d = build_dfa(&l.name, &hir, &limits)?;
            for (b, w) in d.class_of.windows(2).enumerate() {
                if w[0] != w[1] {
                    boundary_after[b] = true;
                }
            }
            dfas.push(d);
        }
        let classes = ByteClasses::from_boundaries(&boundary_after);
        let mut lx = AutomataLexer {
            class_of: *classes.map(),
            num_classes: classes.num_classes(),
            table: Vec::new(),
            num_transitions: 0,
            flags: Vec::new(),
            accepting: Vec::new(),
            possible: Vec::new(),
            forced: Vec::new(),
            members: Vec::new(),
            state_ids: HashMap::new(),
            dfas,
            lazy: spec.lazy_lexemes(),
            limits,
            spec,
        };
        lx.intern(Vec::new())?;
        lx.table.fill(StateId::DEAD);
        Ok(lx)
    }

    /// The spec this lexer was built from.
    pub fn spec(&self) -> &LexerSpec {
        &self.spec
    }

    /// Transitions computed so far (table misses that were filled).
    pub fn num_transitions(&self) -> usize {
        self.num_transitions
    }

    /// The byte classes (columns of the transition table).
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    #[inline(never)]
    #[cold]
    fn advance_cold(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        let Some(members) = self.members.get(state.as_usize()) else {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        };
        let next: Vec<(LexemeIdx, u32)> = members
            .iter()
            .filter_map(|&(lx, s)| {
                let d = &self.dfas[lx.as_usize()];
                let n = d.next(s, byte);
                d.live[n as usize].then_some((lx, n))
            })
            .collect();
        let s = self.intern(next)?;
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        self.table[idx] = s;
        self.num_transitions += 1;
        Ok(s)
    }

    fn intern(&mut self, mut members: Vec<(LexemeIdx, u32)>) -> Result<StateId, Error> {
        members.sort_unstable();
        let members: Members = members.into_boxed_slice();
        if let Some(&s) = self.state_ids.get(&members) {
            return Ok(s);
        }
        if self.flags.len() >= self.limits.max_states {
            return Err(ErrorKind::TooManyStates { limit: self.limits.max_states }.into());
        }
        let mut accepting = LexemeSet::new();
        let mut possible = LexemeSet::new();
        // Bytes after which some member is still live.
        let mut live_bytes = [false; 256];
        for &(lx, s) in members.iter() {
            possible.insert(lx);
            let d = &self.dfas[lx.as_usize()];
            if d.accept[s as usize] {
                accepting.insert(lx);
            }
            for b in 0..=255u8 {
                if d.live[d.next(s, b) as usize] {
                    live_bytes[b as usize] = true;
                }
            }
        }
        let num_live = live_bytes.iter().filter(|&&x| x).count();
        let mut flags = StateFlags::empty();
        if !accepting.is_empty() {
            flags = flags.union(StateFlags::ACCEPTING);
            if accepting.intersects(&self.lazy) {
                flags = flags.union(StateFlags::LAZY_ACCEPTING);
            }
        }
        if num_live == 0 && !members.is_empty() {
            flags = flags.union(StateFlags::NO_EXTENSION);
        }
        let forced = if num_live == 1 && accepting.is_empty() {
            live_bytes.iter().position(|&x| x).map(|b| b as u8)
        } else {
            None
        };
        let id = StateId::new(self.flags.len());
        self.flags.push(flags);
        self.accepting.push(accepting);
        self.possible.push(possible);
        self.forced.push(forced);
        self.members.push(members.clone());
        self.state_ids.insert(members, id);
        self.table.resize(self.table.len() + self.num_classes, MISSING);
        Ok(id)
    }
}

/// Translates one spec node to HIR; extended constructs are unsupported.
fn to_hir(
    lexeme: &str,
    node: &RegexSpec,
    args: Vec<Hir>,
    limits: &LexerLimits,
) -> Result<Hir, Error> {
    Ok(match node {
        RegexSpec::Literal(s) => Hir::literal(s.as_bytes()),
        RegexSpec::Bytes(b) => Hir::literal(b.as_slice()),
        RegexSpec::ByteSet(r) => Hir::class(Class::Bytes(ClassBytes::new(
            r.iter().map(|&(lo, hi)| ClassBytesRange::new(lo, hi)),
        ))),
        RegexSpec::Regex(rx) => regex_syntax::ParserBuilder::new()
            .nest_limit(limits.max_depth.min(u32::MAX as usize) as u32)
            .build()
            .parse(rx)
            .map_err(|e| ErrorKind::Regex { lexeme: lexeme.to_string(), message: e.to_string() })?,
        RegexSpec::Concat(_) => Hir::concat(args),
        RegexSpec::Or(_) => Hir::alternation(args),
        RegexSpec::Repeat { min, max, .. } => Hir::repetition(Repetition {
            min: *min,
            max: *max,
            greedy: true,
            sub: Box::new(args.into_iter().next().unwrap_or_else(Hir::empty)),
        }),
        RegexSpec::Empty => Hir::empty(),
        RegexSpec::NoMatch => Hir::fail(),
        RegexSpec::And(_)
        | RegexSpec::Not(_)
        | RegexSpec::JsonQuote { .. }
        | RegexSpec::MultipleOf { .. }
        | RegexSpec::LookAhead(_) => {
            return Err(
                ErrorKind::Unsupported { lexeme: lexeme.to_string(), feature: node.tag() }.into()
            )
        }
    })
}

/// HIR → NFA → minimized anchored dense DFA → explicit table with accept/live per state.
fn build_dfa(lexeme: &str, hir: &Hir, limits: &LexerLimits) -> Result<LexemeDfa, Error> {
    let too_big = |message: String| -> Error {
        ErrorKind::AutomatonTooBig { lexeme: lexeme.to_string(), message }.into()
    };
    let size = Some(limits.max_automaton_bytes);
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(size)
                .which_captures(thompson::WhichCaptures::None),
        )
        .build_from_hir(hir)
        .map_err(|e| too_big(e.to_string()))?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Anchored)
                .minimize(true)
                .dfa_size_limit(size)
                .determinize_size_limit(size),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| too_big(e.to_string()))?;
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| too_big(e.to_string()))?;
    let bc = dfa.byte_classes();
    let mut class_of = [0u8; 256];
    for b in 0..=255u8 {
        class_of[b as usize] = bc.get(b);
    }
    let reps: Vec<u8> = bc.representatives(..).filter_map(|u| u.as_u8()).collect();
    let num_classes = class_of.iter().map(|&c| c as usize + 1).max().unwrap_or(1);
    // Explore from the start state.
    let mut ids: HashMap<regex_automata::util::primitives::StateID, u32> = HashMap::new();
    let mut order = vec![start];
    ids.insert(start, 0);
    let mut trans: Vec<u32> = Vec::new();
    let mut accept = Vec::new();
    let mut i = 0;
    while i < order.len() {
        if order.len() > limits.max_states {
            return Err(too_big(format!("more than {} DFA states", limits.max_states)));
        }
        let s = order[i];
        let row = trans.len();
        trans.resize(row + num_classes, 0);
        for &b in &reps {
            let n = dfa.next_state(s, b);
            let next_id = *ids.entry(n).or_insert_with(|| {
                order.push(n);
                (order.len() - 1) as u32
            });
            trans[row + class_of[b as usize] as usize] = next_id;
        }
        // Matches are delayed by one byte in regex-automata: the state matches "here" if
        // the end-of-input transition leads to a match state.
        let eoi = dfa.next_eoi_state(s);
        accept.push(dfa.is_match_state(eoi) && !dfa.is_dead_state(s) && !dfa.is_quit_state(s));
        i += 1;
    }
    // live = can reach an accepting state: backward reachability.
    let n = order.len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in 0..n {
        for c in 0..num_classes {
            preds[trans[s * num_classes + c] as usize].push(s as u32);
        }
    }
    let mut live = accept.clone();
    let mut todo: Vec<u32> = (0..n as u32).filter(|&s| accept[s as usize]).collect();
    while let Some(s) = todo.pop() {
        for &p in &preds[s as usize] {
            if !live[p as usize] {
                live[p as usize] = true;
                todo.push(p);
            }
        }
    }
    Ok(LexemeDfa { class_of, num_classes, trans, accept, live })
}

impl Lexer for AutomataLexer {
    fn num_lexemes(&self) -> usize {
        self.dfas.len()
    }

    fn num_states(&self) -> usize {
        self.flags.len()
    }

    fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error> {
        let n = self.dfas.len();
        if allowed.bound() > n {
            return Err(ErrorKind::InvalidLexeme {
                idx: allowed.bound() as u32 - 1,
                num_lexemes: n,
            }
            .into());
        }
        let members = allowed
            .iter()
            .filter(|lx| self.dfas[lx.as_usize()].live[0])
            .map(|lx| (lx, 0))
            .collect();
        self.intern(members)
    }

    #[inline(always)]
    fn advance(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        match self.table.get(idx) {
            Some(&next) if next != MISSING => Ok(next),
            _ => self.advance_cold(state, byte),
        }
    }

    fn flags(&self, state: StateId) -> StateFlags {
        self.flags.get(state.as_usize()).copied().unwrap_or_default()
    }

    fn accepting(&self, state: StateId) -> &LexemeSet {
        self.accepting.get(state.as_usize()).unwrap_or(&EMPTY)
    }

    fn possible(&self, state: StateId) -> &LexemeSet {
        self.possible.get(state.as_usize()).unwrap_or(&EMPTY)
    }

    fn forced_byte(&mut self, state: StateId) -> Result<Option<u8>, Error> {
        Ok(self.forced.get(state.as_usize()).copied().flatten())
    }

    fn num_bytes(&self) -> usize {
        let dfas: usize = self
            .dfas
            .iter()
            .map(|d| 256 + d.trans.capacity() * 4 + d.accept.capacity() + d.live.capacity())
            .sum();
        let sets: usize = self
            .accepting
            .iter()
            .chain(&self.possible)
            .map(|s| s.num_bytes() + std::mem::size_of::<LexemeSet>())
            .sum();
        let members: usize = self.members.iter().map(|m| 2 * m.len() * 8).sum();
        self.table.capacity() * 4
            + self.flags.capacity()
            + self.forced.capacity() * 2
            + sets
            + members
            + self.state_ids.capacity() * 24
            + dfas
    }
}
