//! [`DerivreLexer`]: the default implementation, a lazily built DFA whose states are
//! hash-consed sets of live (lexeme, derivative) pairs, over the `derivre` crate.
//!
//! Code map (reading order):
//! - `mod.rs`: the struct, construction, and the thin [`Lexer`] impl;
//! - [`table`]: the transition table, new states (derivatives on a byte), interning;
//! - [`states`]: per-state member and set storage;
//! - [`partitions`]: which byte classes lead a state to the same next state;
//! - [`translate`]: lexer spec → derivre expressions;
//! - [`live`]: liveness and witnesses;
//! - [`containment`]: the containment proof rules the slicer relies on;
//! - [`counters`]: twins of states inside bounded repeats, for masks;
//! - [`exprs`]: expression predicates and rewrites shared by the last two.

mod containment;
mod counters;
mod exprs;
mod live;
mod partitions;
mod runs;
mod states;
mod table;
mod translate;

#[cfg(test)]
mod spread_tests;
#[cfg(test)]
mod witness_tests;

use exprs::*;
use partitions::*;
pub use runs::RunBound;
use states::*;
use translate::*;

use crate::parsed::byte_set;

use std::hash::BuildHasher;
use std::sync::Arc;

use derivre::raw::{DerivCache, ExprSet, NextByteCache, RelevanceCache};
use derivre::{ExprRef, JsonQuoteOptions, NextByte, RegexAst, RegexBuilder};
use hashbrown::{DefaultHashBuilder, HashMap, HashSet, HashTable};

use crate::classes::ByteClasses;
use crate::lexer::EMPTY;
use crate::prefixes::{
    live_depth, walk_new_states, CharClass, ClassRepeat, LiveDepth, UNBOUNDED_WALK_DEPTH, WALK_FUEL,
};
use crate::runs::{IterDfa, RunDfa, RUN_DEAD};
use crate::spec::fold;
use crate::{
    Containment, Error, ErrorKind, LexemeIdx, LexemeSet, Lexer, LexerLimits, LexerSpec, RegexSpec,
    StateFlags, StateId, Step,
};

/// New states a containment walk that gives up may build before its lexeme's later walks
/// build none ([`DerivreLexer::containment`]).
const GAVE_UP_STATES: usize = 64;

/// Table entry of a transition not computed yet.
const MISSING: StateId = StateId(u32::MAX);
/// Bit of a table entry: the target state must end its lexeme (lazy accepting, or no
/// extension), so [`Lexer::step`] answers from the entry alone, without loading the
/// target's flags. State ids stay far below it (`LexerLimits::max_states`).
const MUST_END: u32 = 1 << 30;

/// The members of a state: live (lexeme, expression) pairs, sorted by lexeme.
type Member = (LexemeIdx, ExprRef);
/// A `C{m,n}` query: its class's index in `walk_classes`, and `n`.
type ClassRepeatQuery = (u32, Option<u32>);
/// A query's walk (class index, bound) with its parse.
type ParsedQuery = (ClassRepeatQuery, Arc<ClassRepeat>);

/// The default [`Lexer`]: all lexeme expressions live in one derivre expression store; a
/// state is the sorted set of (lexeme, expression) pairs still alive; transitions are
/// cached in a flat table `table[state * num_classes + class_of[byte]]`, filled on a miss by
/// taking derivatives on the raw byte.
///
/// `Clone` copies everything, warm table included; a clone is independent. The copy's
/// per-state arrays get room for [`DerivreLexer::copy_room`] more states, so its first new
/// states do not reallocate (and copy) them.
pub struct DerivreLexer {
    // --- fixed when the lexer is built ---
    class_of: [u8; 256],
    num_classes: usize,
    hasher: DefaultHashBuilder,
    lexeme_exprs: Vec<ExprRef>,
    lazy: LexemeSet,
    limits: LexerLimits,
    spec: Arc<LexerSpec>,
    /// The containment proof rules are used (see [`DerivreLexer::set_proofs`]).
    proofs: bool,
    /// Everything the lexer learns while it runs.
    cache: Cache,
}

/// Every piece of state a [`DerivreLexer`] learns while it runs (states, transitions,
/// expressions, query answers, memos), in one place: [`Cache::num_bytes`] counts all of it
/// and [`Clone`] copies all of it, by construction.
struct Cache {
    // --- hot ---
    table: Vec<StateId>,
    num_transitions: usize,
    flags: Vec<StateFlags>,
    // --- per state, read when a lexeme ends ---
    /// Indices into `sets`.
    accepting: Vec<u32>,
    possible: Vec<u32>,
    forced: Vec<Option<u8>>,
    /// The look-ahead length of the highest-priority accepting lexeme, computed once per
    /// state: a lexeme end asks for it, and a derivre query per end halved warm throughput.
    first_lookahead: Vec<u32>,
    members: MemberStore,
    // --- cold ---
    /// The distinct accepting and possible sets (few: states share them).
    sets: SetPool,
    /// Whether each state is a start state.
    starts: Vec<bool>,
    /// States by (members, is a start state), hashed by the lexer's `hasher`: a start state
    /// never equals a state reached by reading bytes, so "at the start of a lexeme" is
    /// `state == start state`, even for a lexeme like `[a-z]*x` whose derivatives loop back
    /// to the same expressions. Each entry keeps its hash, so that growing the table
    /// rehashes no members.
    state_ids: HashTable<(u64, StateId)>,
    start_cache: HashMap<LexemeSet, StateId>,
    // The query caches below are shared between copies until one adds to them (few
    // queries, added early; a copy of every key was most of copying a small lexer).
    prefix_queries: Arc<HashMap<RegexSpec, Option<ExprRef>>>,
    /// The expression of each query class `C` (see `prefix_query_expr`).
    query_classes: Arc<HashMap<CharClass, ExprRef>>,
    /// Queries of the form `C{m,n}`, answered by walking the DFA: (index in
    /// `walk_classes`, bound) of each query seen, with its parse; `None` for other shapes.
    /// (The process-wide parse cache takes a lock: a batch's threads met on it in every
    /// containment check.)
    class_repeats: Arc<HashMap<RegexSpec, Option<ParsedQuery>>>,
    /// Character classes of the queries, reduced to one byte per byte class.
    walk_classes: Arc<Vec<CharClass>>,
    /// Live depth of each (state, class) walked, with the depth limit of that walk.
    live_depths: HashMap<(StateId, u32), (LiveDepth, u32)>,
    /// Where the runs of a class end the lexeme, by (state, class) (see
    /// [`DerivreLexer::run_end`]).
    run_ends: HashMap<(StateId, u32), Option<(u32, StateId)>>,
    /// (lexeme expression, class) of full walks that gave up on their budget of new states
    /// (see [`DerivreLexer::containment`]).
    gave_up: HashSet<(ExprRef, u32)>,
    /// Each state asked about, as [`DerivreLexer::without_finite_exclusions`] makes it
    /// (DEAD: no such member).
    reduced: HashMap<StateId, StateId>,
    /// Memo of [`is_finite`] (answers found within its budget).
    finite: HashMap<ExprRef, bool>,
    /// derivre's `B*` and `B+` of each repeat body asked about ([`unbounded_min`]).
    stars: Stars,
    /// Memo of [`infinite_complement`] (answers found within its budget).
    complements: HashMap<ExprRef, bool>,
    /// A string of each positive expression asked about ([`DerivreLexer::part_witness`]).
    witnesses: HashMap<ExprRef, Option<Arc<[u8]>>>,
    /// Which byte classes lead a state to the same next state (see [`DerivreLexer::spread`]).
    parts: Partitions,
    exprs: ExprSet,
    deriv: DerivCache,
    relevance: RelevanceCache,
    next_byte: NextByteCache,
    /// `Contained` answers by containment rule (index: the rule's number in
    /// `containment.rs`), for the soundness tests.
    rule_hits: [u64; 9],
    /// Bounded repeats known, and the twin of each state asked (see [`counters`]).
    counters: counters::Counters,
}

/// A copy of `v` with room for `extra` more elements (a plain `clone` has none: the first
/// push after it reallocates and copies the whole array).
fn with_room<T: Clone>(v: &[T], extra: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len() + extra);
    out.extend_from_slice(v);
    out
}

impl Cache {
    /// The bytes this cache holds (each map and array by its capacity; shared query maps
    /// counted in every copy).
    fn num_bytes(&self) -> usize {
        fn map<K, V>(m: &HashMap<K, V>) -> usize {
            m.capacity() * (std::mem::size_of::<(K, V)>() + 1)
        }
        fn set<K>(m: &HashSet<K>) -> usize {
            m.capacity() * (std::mem::size_of::<K>() + 1)
        }
        fn vec<T>(v: &[T], cap: usize) -> usize {
            let _ = v;
            cap * std::mem::size_of::<T>()
        }
        let witness_bytes: usize = self.witnesses.values().flatten().map(|w| w.len()).sum();
        vec(&self.table, self.table.capacity())
            + vec(&self.flags, self.flags.capacity())
            + vec(&self.accepting, self.accepting.capacity())
            + vec(&self.possible, self.possible.capacity())
            + vec(&self.forced, self.forced.capacity())
            + vec(&self.first_lookahead, self.first_lookahead.capacity())
            + self.members.num_bytes()
            + self.sets.num_bytes()
            + vec(&self.starts, self.starts.capacity())
            + self.state_ids.capacity() * (std::mem::size_of::<(u64, StateId)>() + 1)
            + map(&self.start_cache)
            + map(&self.prefix_queries)
            + map(&self.query_classes)
            + map(&self.class_repeats)
            + vec(&self.walk_classes, self.walk_classes.capacity())
            + map(&self.live_depths)
            + map(&self.run_ends)
            + set(&self.gave_up)
            + map(&self.reduced)
            + map(&self.finite)
            + map(&self.stars)
            + map(&self.complements)
            + map(&self.witnesses)
            + witness_bytes
            + self.parts.num_bytes()
            + self.exprs.num_bytes()
            + self.deriv.num_bytes()
            + self.relevance.num_bytes()
            + self.next_byte.num_bytes()
            + self.counters.num_bytes()
    }

    /// A copy with room for `room` more states (and `num_classes` table entries each).
    fn copy_with_room(&self, room: usize, num_classes: usize) -> Cache {
        let mut state_ids = self.state_ids.clone();
        // Hashes are stored: growing moves entries, it hashes nothing.
        state_ids.reserve(room, |e| e.0);
        // derivre's expression arena clones without spare room too: its first new
        // expression (the copy's first cold transition, in a decode) would reallocate and copy
        // the whole arena; room for a quarter more is made here, with the copy (none for a
        // small arena, whose copy is cheap: a matcher's placeholder lexer is cloned empty).
        let mut exprs = self.exprs.clone();
        if self.exprs.len() >= EXPR_ROOM_FROM {
            exprs.reserve(self.exprs.len() / 4);
        }
        Cache {
            table: with_room(&self.table, room * num_classes),
            num_transitions: self.num_transitions,
            flags: with_room(&self.flags, room),
            accepting: with_room(&self.accepting, room),
            possible: with_room(&self.possible, room),
            forced: with_room(&self.forced, room),
            first_lookahead: with_room(&self.first_lookahead, room),
            members: self.members.with_room(room),
            sets: self.sets.clone(),
            starts: with_room(&self.starts, room),
            state_ids,
            start_cache: self.start_cache.clone(),
            prefix_queries: self.prefix_queries.clone(),
            query_classes: self.query_classes.clone(),
            class_repeats: self.class_repeats.clone(),
            walk_classes: self.walk_classes.clone(),
            live_depths: self.live_depths.clone(),
            run_ends: self.run_ends.clone(),
            gave_up: self.gave_up.clone(),
            reduced: self.reduced.clone(),
            finite: self.finite.clone(),
            stars: self.stars.clone(),
            complements: self.complements.clone(),
            witnesses: self.witnesses.clone(),
            parts: self.parts.with_room(room),
            exprs,
            deriv: self.deriv.clone(),
            relevance: self.relevance.clone(),
            next_byte: self.next_byte.clone(),
            rule_hits: self.rule_hits,
            counters: self.counters.clone(),
        }
    }
}

impl Clone for DerivreLexer {
    fn clone(&self) -> Self {
        DerivreLexer {
            class_of: self.class_of,
            num_classes: self.num_classes,
            hasher: self.hasher,
            lexeme_exprs: self.lexeme_exprs.clone(),
            lazy: self.lazy.clone(),
            limits: self.limits.clone(),
            spec: self.spec.clone(),
            proofs: self.proofs,
            cache: self.cache.copy_with_room(self.copy_room(), self.num_classes),
        }
    }
}

impl std::fmt::Debug for DerivreLexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DerivreLexer")
            .field("num_lexemes", &self.lexeme_exprs.len())
            .field("num_states", &self.cache.flags.len())
            .field("num_classes", &self.num_classes)
            .field("num_bytes", &self.num_bytes())
            .finish()
    }
}

/// A copy's room for new states: at least [`COPY_ROOM_MIN`], a quarter of the states known.
const COPY_ROOM_MIN: usize = 64;
/// The arena size (expressions) from which a copy reserves room for new ones.
const EXPR_ROOM_FROM: usize = 4096;

impl DerivreLexer {
    /// Turns the containment proof rules ([`Lexer::check_prefixes`], `containment.rs`) on
    /// (the default) or off: off, every query answers [`Containment::Unknown`], so a caller
    /// walks every token itself. The soundness oracle compares masks both ways.
    pub fn set_proofs(&mut self, on: bool) {
        self.proofs = on;
    }

    /// How many `Contained` answers each containment rule gave (index: the rule's number
    /// in the module documentation of `containment.rs`; 0 and 1 unused). For tests that
    /// check every rule against brute force.
    #[doc(hidden)]
    pub fn containment_rule_hits(&self) -> [u64; 9] {
        self.cache.rule_hits
    }

    /// How many new states a copy ([`Clone`]) holds without reallocating its per-state
    /// arrays: a matcher's copy of its grammar's lexer learns tens to a few hundred states,
    /// and the first one reallocated every array the copy had just made (a tool set of 400
    /// functions: ~1 MB copied again, the slowest mask of a first decode).
    pub fn copy_room(&self) -> usize {
        (self.cache.flags.len() / 4).max(COPY_ROOM_MIN)
    }

    /// Compiles `spec` with the default [`LexerLimits`].
    pub fn new(spec: &LexerSpec) -> Result<Self, Error> {
        Self::with_limits(Arc::new(spec.clone()), LexerLimits::default())
    }

    /// Compiles `spec`: parses and translates every lexeme (errors name the lexeme), computes
    /// the byte classes, and creates only the DEAD state; everything else is built lazily.
    pub fn with_limits(spec: Arc<LexerSpec>, limits: LexerLimits) -> Result<Self, Error> {
        spec.validate(limits.max_depth)?;
        let mut builder = RegexBuilder::new();
        let mut lexeme_exprs = Vec::with_capacity(spec.len());
        // A regex used by several lexemes (a `format` under ten properties) is parsed once:
        // regex-syntax's parse of the `uri` and `date-time` regexes took most of such a
        // grammar's lexer build.
        let mut parsed: HashMap<String, ExprRef> = HashMap::new();
        for l in &spec.lexemes {
            crate::interrupt::check().map_err(ErrorKind::Interrupted)?;
            let e = fold(&l.name, &l.regex, limits.max_depth, |node, args| match node {
                RegexSpec::Regex(rx) => match parsed.get(rx.as_str()) {
                    Some(&e) => Ok(e),
                    None => {
                        let e = translate(&mut builder, &l.name, node, args)?;
                        parsed.insert(rx.clone(), e);
                        Ok(e)
                    }
                },
                _ => translate(&mut builder, &l.name, node, args),
            })?;
            lexeme_exprs.push(e);
            if builder.exprset().cost() > limits.total_fuel {
                return Err(ErrorKind::TotalFuelExhausted { limit: limits.total_fuel }.into());
            }
        }
        let classes = ByteClasses::for_spec(&spec);
        let num_classes = classes.num_classes();
        let mut lx = DerivreLexer {
            class_of: *classes.map(),
            num_classes,
            hasher: DefaultHashBuilder::default(),
            lexeme_exprs,
            lazy: spec.lazy_lexemes(),
            limits,
            spec,
            proofs: true,
            cache: Cache {
                table: Vec::new(),
                num_transitions: 0,
                flags: Vec::new(),
                accepting: Vec::new(),
                possible: Vec::new(),
                forced: Vec::new(),
                first_lookahead: Vec::new(),
                members: MemberStore::default(),
                sets: SetPool::default(),
                starts: Vec::new(),
                state_ids: HashTable::new(),
                start_cache: HashMap::new(),
                prefix_queries: Arc::default(),
                query_classes: Arc::default(),
                class_repeats: Arc::default(),
                walk_classes: Arc::default(),
                live_depths: HashMap::new(),
                run_ends: HashMap::new(),
                gave_up: HashSet::new(),
                reduced: HashMap::new(),
                finite: HashMap::new(),
                stars: HashMap::new(),
                complements: HashMap::new(),
                witnesses: HashMap::new(),
                parts: Partitions::new(classes.map(), num_classes),
                exprs: builder.into_exprset(),
                deriv: DerivCache::new(),
                relevance: RelevanceCache::new(),
                next_byte: NextByteCache::new(),
                rule_hits: [0; 9],
                counters: counters::Counters::default(),
            },
        };
        let dead = lx.intern(Vec::new())?;
        debug_assert_eq!(dead, StateId::DEAD);
        // DEAD loops on itself.
        lx.cache.table.fill(StateId::DEAD);
        Ok(lx)
    }

    /// The spec this lexer was built from.
    pub fn spec(&self) -> &LexerSpec {
        &self.spec
    }

    /// Transitions computed so far (table misses that were filled).
    pub fn num_transitions(&self) -> usize {
        self.cache.num_transitions
    }

    /// The byte classes (columns of the transition table).
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    /// Bytes of the transition table alone.
    pub fn table_bytes(&self) -> usize {
        self.cache.table.capacity() * std::mem::size_of::<StateId>()
    }

    /// Whether a lazy lexeme (free text up to a delimiter) may still match from `state`.
    pub fn lazy_possible(&self, state: StateId) -> bool {
        self.possible(state).intersects(&self.lazy)
    }

    /// Work done by the derivative engine so far (compilation included), in fuel units.
    pub fn fuel_used(&self) -> u64 {
        self.cache.exprs.cost()
    }
}

impl Lexer for DerivreLexer {
    fn num_lexemes(&self) -> usize {
        self.lexeme_exprs.len()
    }

    fn num_states(&self) -> usize {
        self.cache.flags.len()
    }

    fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error> {
        if let Some(&s) = self.cache.start_cache.get(allowed) {
            return Ok(s);
        }
        let n = self.lexeme_exprs.len();
        if allowed.bound() > n {
            return Err(ErrorKind::InvalidLexeme {
                idx: allowed.bound() as u32 - 1,
                num_lexemes: n,
            }
            .into());
        }
        let cost0 = self.cache.exprs.cost();
        let mut members = Vec::with_capacity(allowed.len());
        for lx in allowed.iter() {
            let e = self.lexeme_exprs[lx.as_usize()];
            // A witness string proves most lexemes with an intersection live in a few
            // derivatives (see `is_live_as`).
            if self.is_live_as(e, cost0, true)? {
                members.push((lx, e));
            }
        }
        let s = if members.is_empty() { StateId::DEAD } else { self.intern_as(members, true)? };
        self.cache.start_cache.insert(allowed.clone(), s);
        Ok(s)
    }

    /// One table lookup when warm; no hashing, no derivative.
    #[inline(always)]
    fn advance(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        match self.cache.table.get(idx) {
            Some(&next) if next != MISSING => Ok(StateId(next.0 & !MUST_END)),
            _ => self.advance_cold(state, byte),
        }
    }

    #[inline(always)]
    fn step_warm(&self, state: StateId, byte: u8) -> Option<StateId> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        let e = self.cache.table.get(idx)?.0;
        // MISSING has the must-end bit set too, so one test rules out both; a plain DEAD
        // entry is a rejection (see `entry`).
        (e & MUST_END == 0).then_some(StateId(e))
    }

    #[inline(always)]
    fn step_known(&self, state: StateId, byte: u8) -> Option<Option<StateId>> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        let e = self.cache.table.get(idx)?.0;
        if e == MISSING.0 {
            None
        } else {
            Some((e & MUST_END == 0).then_some(StateId(e)))
        }
    }

    /// One table load when warm: the entry carries the target's "must end" bit.
    #[inline]
    fn step(&mut self, state: StateId, byte: u8) -> Result<Step, Error> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        let e = match self.cache.table.get(idx) {
            Some(&e) if e != MISSING => e.0,
            _ => {
                let next = self.advance_cold(state, byte)?;
                self.cache.table.get(idx).map_or(next.0, |e| e.0)
            }
        };
        let next = StateId(e & !MUST_END);
        Ok(if next == StateId::DEAD {
            if self.flags(state).is_accepting() {
                Step::EndBefore
            } else {
                Step::Reject
            }
        } else if e & MUST_END != 0 {
            Step::EndWith(next)
        } else {
            Step::Continue(next)
        })
    }

    #[inline]
    fn flags(&self, state: StateId) -> StateFlags {
        self.cache.flags.get(state.as_usize()).copied().unwrap_or_default()
    }

    fn accepting(&self, state: StateId) -> &LexemeSet {
        self.cache
            .accepting
            .get(state.as_usize())
            .map_or(&EMPTY, |&i| &self.cache.sets.sets[i as usize])
    }

    fn possible(&self, state: StateId) -> &LexemeSet {
        self.cache
            .possible
            .get(state.as_usize())
            .map_or(&EMPTY, |&i| &self.cache.sets.sets[i as usize])
    }

    fn forced_byte(&mut self, state: StateId) -> Result<Option<u8>, Error> {
        Ok(self.cache.forced.get(state.as_usize()).copied().flatten())
    }

    fn lookahead_len(&self, state: StateId, lexeme: LexemeIdx) -> usize {
        let Some(members) = self.cache.members.get(state.as_usize()) else {
            return 0;
        };
        if Lexer::accepting(self, state).first() == Some(lexeme) {
            return self.cache.first_lookahead[state.as_usize()] as usize;
        }
        match members.binary_search_by_key(&lexeme, |m| m.0) {
            Ok(i) => self.cache.exprs.lookahead_len(members[i].1).unwrap_or(0),
            Err(_) => 0,
        }
    }

    fn check_prefixes(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        if !self.proofs {
            return Containment::Unknown;
        }
        self.containment(state, query, false)
    }

    fn check_prefixes_cheap(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        if !self.proofs {
            return Containment::Unknown;
        }
        self.containment(state, query, true)
    }

    fn num_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.lexeme_exprs.capacity() * std::mem::size_of::<ExprRef>()
            + self.cache.num_bytes()
    }

    fn restrict(
        &mut self,
        state: StateId,
        finish: &[(LexemeIdx, Option<&RegexSpec>)],
    ) -> Result<StateId, Error> {
        self.restrict_members(state, finish)
    }
}
