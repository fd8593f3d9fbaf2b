//! [`DerivreLexer`]: the default implementation, a lazily built DFA whose states are
//! hash-consed sets of live (lexeme, derivative) pairs, over the `derivre` crate.

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
use crate::spec::fold;
use crate::{
    Containment, Error, ErrorKind, LexemeIdx, LexemeSet, Lexer, LexerLimits, LexerSpec, RegexSpec,
    StateFlags, StateId, Step,
};

/// Fuel of the first, quick symbolic containment check (before the DFA walk).
const QUICK_CONTAINMENT_FUEL: u64 = 5_000;
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
    // --- hot ---
    class_of: [u8; 256],
    num_classes: usize,
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
    /// States by (members, is a start state), hashed by `hasher`: a start state never
    /// equals a state reached by reading bytes, so "at the start of a lexeme" is `state ==
    /// start state`, even for a lexeme like `[a-z]*x` whose derivatives loop back to the
    /// same expressions. Each entry keeps its hash, so that growing the table rehashes no
    /// members.
    state_ids: HashTable<(u64, StateId)>,
    hasher: DefaultHashBuilder,
    start_cache: HashMap<LexemeSet, StateId>,
    // The query caches below are shared between copies until one adds to them (few
    // queries, added early; a copy of every key was most of copying a small lexer).
    prefix_queries: Arc<HashMap<RegexSpec, Option<ExprRef>>>,
    /// The expression of each query class `C` (see `prefix_query_expr`).
    query_classes: Arc<HashMap<CharClass, ExprRef>>,
    /// Queries of the form `C{m,n}`, answered by walking the DFA.
    /// (index in `walk_classes`, bound) of each query seen, with its parse; `None` for other
    /// shapes. (The process-wide parse cache takes a lock: a batch's threads met on it in
    /// every containment check.)
    class_repeats: Arc<HashMap<RegexSpec, Option<ParsedQuery>>>,
    /// Character classes of the queries, reduced to one byte per byte class.
    walk_classes: Arc<Vec<CharClass>>,
    /// Live depth of each (state, class) walked, with the depth limit of that walk.
    live_depths: HashMap<(StateId, u32), (LiveDepth, u32)>,
    /// (lexeme expression, class) of full walks that gave up on their budget of new states
    /// (see [`DerivreLexer::containment`]).
    gave_up: HashSet<(ExprRef, u32)>,
    /// Each state asked about, as [`DerivreLexer::without_finite_exclusions`] makes it
    /// (DEAD: no such member).
    reduced: HashMap<StateId, StateId>,
    /// Memo of [`is_finite`] (answers found within its budget).
    finite: HashMap<ExprRef, bool>,
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
    lexeme_exprs: Vec<ExprRef>,
    lazy: LexemeSet,
    limits: LexerLimits,
    spec: Arc<LexerSpec>,
}

/// A copy of `v` with room for `extra` more elements (a plain `clone` has none: the first
/// push after it reallocates and copies the whole array).
fn with_room<T: Clone>(v: &[T], extra: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len() + extra);
    out.extend_from_slice(v);
    out
}

impl Clone for DerivreLexer {
    fn clone(&self) -> Self {
        let room = self.copy_room();
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
        DerivreLexer {
            class_of: self.class_of,
            num_classes: self.num_classes,
            table: with_room(&self.table, room * self.num_classes),
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
            hasher: self.hasher,
            start_cache: self.start_cache.clone(),
            prefix_queries: self.prefix_queries.clone(),
            query_classes: self.query_classes.clone(),
            class_repeats: self.class_repeats.clone(),
            walk_classes: self.walk_classes.clone(),
            live_depths: self.live_depths.clone(),
            gave_up: self.gave_up.clone(),
            reduced: self.reduced.clone(),
            finite: self.finite.clone(),
            complements: self.complements.clone(),
            witnesses: self.witnesses.clone(),
            parts: self.parts.with_room(room),
            exprs,
            deriv: self.deriv.clone(),
            relevance: self.relevance.clone(),
            next_byte: self.next_byte.clone(),
            lexeme_exprs: self.lexeme_exprs.clone(),
            lazy: self.lazy.clone(),
            limits: self.limits.clone(),
            spec: self.spec.clone(),
        }
    }
}

impl std::fmt::Debug for DerivreLexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DerivreLexer")
            .field("num_lexemes", &self.lexeme_exprs.len())
            .field("num_states", &self.flags.len())
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
    /// How many new states a copy ([`Clone`]) holds without reallocating its per-state
    /// arrays: a matcher's copy of its grammar's lexer learns tens to a few hundred states,
    /// and the first one reallocated every array the copy had just made (a tool set of 400
    /// functions: ~1 MB copied again, the slowest mask of a first decode).
    pub fn copy_room(&self) -> usize {
        (self.flags.len() / 4).max(COPY_ROOM_MIN)
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
            hasher: DefaultHashBuilder::default(),
            start_cache: HashMap::new(),
            prefix_queries: Arc::default(),
            query_classes: Arc::default(),
            class_repeats: Arc::default(),
            walk_classes: Arc::default(),
            live_depths: HashMap::new(),
            gave_up: HashSet::new(),
            reduced: HashMap::new(),
            finite: HashMap::new(),
            complements: HashMap::new(),
            witnesses: HashMap::new(),
            parts: Partitions::new(classes.map(), num_classes),
            exprs: builder.into_exprset(),
            deriv: DerivCache::new(),
            relevance: RelevanceCache::new(),
            next_byte: NextByteCache::new(),
            lexeme_exprs,
            lazy: spec.lazy_lexemes(),
            limits,
            spec,
        };
        let dead = lx.intern(Vec::new())?;
        debug_assert_eq!(dead, StateId::DEAD);
        // DEAD loops on itself.
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

    /// Bytes of the transition table alone.
    pub fn table_bytes(&self) -> usize {
        self.table.capacity() * std::mem::size_of::<StateId>()
    }

    /// Whether a lazy lexeme (free text up to a delimiter) may still match from `state`.
    pub fn lazy_possible(&self, state: StateId) -> bool {
        self.possible(state).intersects(&self.lazy)
    }

    /// Work done by the derivative engine so far (compilation included), in fuel units.
    pub fn fuel_used(&self) -> u64 {
        self.exprs.cost()
    }

    /// Cold path of [`Lexer::advance`]: a table miss (or an unknown state). Runs derivatives
    /// on the raw byte for every live lexeme, interns the resulting set, fills the table
    /// entry for the byte's class.
    #[inline(never)]
    #[cold]
    fn advance_cold(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        let Some(n) = self.members.get(state.as_usize()).map(|m| m.len()) else {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        };
        // A state with one possible next byte (inside a literal) dies on any other class.
        if let Some(Some(b0)) = self.forced.get(state.as_usize()) {
            if self.class_of[*b0 as usize] != self.class_of[byte as usize] {
                let idx =
                    state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
                self.table[idx] = self.entry(state, StateId::DEAD);
                self.num_transitions += 1;
                return Ok(StateId::DEAD);
            }
        }
        let cost0 = self.exprs.cost();
        // Most cold transitions of a trie walk lead to DEAD (a byte no lexeme of the state
        // can take): no allocation and no interning for those.
        let mut next = Vec::new();
        for i in 0..n {
            let (lx, e) = self.members[state.as_usize()][i];
            let d = self.deriv.derivative(&mut self.exprs, e, byte);
            self.check_step_fuel(cost0)?;
            if self.is_live(d, cost0)? {
                next.push((lx, d));
            }
        }
        let s = if next.is_empty() { StateId::DEAD } else { self.intern(next)? };
        let class = self.class_of[byte as usize] as usize;
        let idx = state.as_usize() * self.num_classes + class;
        self.table[idx] = self.entry(state, s);
        self.num_transitions += 1;
        self.spread(state, class);
        Ok(s)
    }

    /// Fills the table entries of the classes that `state` cannot tell apart from `class`
    /// (just computed) with the same transition: the derivative of every member is the same
    /// expression for all of them. The grammar's byte classes must separate every byte any
    /// lexeme treats differently anywhere (a JSON grammar has ~80); a state tells far fewer
    /// apart (a string body: `"`, `\`, control characters, the UTF-8 lead byte ranges and
    /// the rest), so a cold state costs a derivative per part, not per class. The parts are
    /// worked out on a state's second cold transition (most states inside literals get one).
    fn spread(&mut self, state: StateId, class: usize) {
        if !self.parts.on {
            return;
        }
        let si = state.as_usize();
        let Some(count) = self.parts.cold.get_mut(si) else { return };
        *count = count.saturating_add(1);
        if *count < 2 {
            return;
        }
        let row = si * self.num_classes;
        match self.parts.of_state[si] {
            NO_PARTITION => {
                let mut pid = TRIVIAL;
                for i in 0..self.members[si].len() {
                    let e = self.members[si][i].1;
                    let p = self.parts.of_expr(&mut self.exprs, e);
                    pid = self.parts.refine(pid, p);
                    if pid == IDENTITY {
                        break;
                    }
                }
                self.parts.of_state[si] = pid;
                // Every transition computed so far (this one included) spreads, in one pass
                // over the row: the entry known for each part, then the missing ones filled.
                if pid != IDENTITY {
                    let labels = &self.parts.labels[pid as usize];
                    let mut known = [MISSING; 256];
                    for (c, &l) in labels.iter().enumerate() {
                        if self.table[row + c] != MISSING {
                            known[l as usize] = self.table[row + c];
                        }
                    }
                    for (c, &l) in labels.iter().enumerate() {
                        if self.table[row + c] == MISSING {
                            self.table[row + c] = known[l as usize];
                        }
                    }
                }
            }
            IDENTITY => {}
            pid => self.fill_part(row, pid, class),
        }
    }

    /// Copies the entry of `class` in table row `row` to the missing entries of its part.
    fn fill_part(&mut self, row: usize, pid: u32, class: usize) {
        let labels = &self.parts.labels[pid as usize];
        let (label, entry) = (labels[class], self.table[row + class]);
        for (c, &l) in labels.iter().enumerate() {
            if l == label && self.table[row + c] == MISSING {
                self.table[row + c] = entry;
            }
        }
    }

    /// The table entry of a transition `from` → `to`: the target with the must-end bit when
    /// the lexeme must end with the byte; DEAD from an accepting state (the lexeme ends
    /// before the byte) also carries the bit, so a plain DEAD entry always means
    /// [`Step::Reject`] and [`Lexer::step_warm`] can answer it.
    fn entry(&self, from: StateId, to: StateId) -> StateId {
        let end = if to == StateId::DEAD {
            self.flags[from.as_usize()].is_accepting()
        } else {
            self.flags[to.as_usize()].must_end()
        };
        if end {
            StateId(to.0 | MUST_END)
        } else {
            to
        }
    }

    /// [`Lexer::check_prefixes`]; `cheap`: [`Lexer::check_prefixes_cheap`] (the walk creates
    /// no state, no full symbolic check).
    fn containment(&mut self, state: StateId, query: &RegexSpec, cheap: bool) -> Containment {
        // `C{m,n}` by walking the DFA (cheap when warm, and decisive both ways; out of budget
        // it is "unknown": walking the slice's trie then costs less than the symbolic check,
        // ~5 ms on a bounded repeat); the symbolic check for other shapes.
        let known = self.class_repeats.get(query).cloned();
        let parsed = match &known {
            Some(e) => e.as_ref().map(|(_, p)| Arc::clone(p)),
            None => ClassRepeat::parse_cached(query),
        };
        // Every one-character string of the class must live (a query holding longer strings
        // holds their one-character prefixes): one of its first bytes leading to DEAD
        // settles it before any walk or symbolic check. A few representative bytes (a
        // letter of each case, a digit) rule out most states of a trie walk (structure,
        // numbers, literals) for a few transitions the walk needs anyway; trying every
        // first byte cost a cold derivative per byte class in key states, which the
        // symbolic check then proves contained without them.
        if let Some(p) = parsed.as_ref().filter(|p| p.max != Some(0)) {
            for &b in p.probe_bytes.iter() {
                match self.advance(state, b) {
                    Ok(s) if s != StateId::DEAD => {}
                    _ => return Containment::Unknown,
                }
            }
        }
        let q = match known {
            Some(e) => e.map(|(q, _)| q),
            None => {
                let e = parsed.map(|p| {
                    let c = p.class.reduced(&self.class_of);
                    let i = match self.walk_classes.iter().position(|x| *x == c) {
                        Some(i) => i,
                        None => {
                            Arc::make_mut(&mut self.walk_classes).push(c);
                            self.walk_classes.len() - 1
                        }
                    };
                    ((i as u32, p.max), p)
                });
                let q = e.as_ref().map(|(q, _)| *q);
                Arc::make_mut(&mut self.class_repeats).insert(query.clone(), e);
                q
            }
        };
        // The walk of this class from this state (cheap walks apart: fewer new states).
        let own_key = |ci: u32| walk_key(state, ci, cheap);
        // A walk of the same class from this state that already reached deep enough (one
        // slice of a class after another of it) answers before any symbolic work; so does
        // one that met a dead first character (not contained: nothing will prove it). A
        // cheap query takes a full walk's answer too (a string-body state's small slices
        // were asking derivre, ~30-65 µs each, what the walk for the large ones had shown).
        if let Some((ci, max)) = q {
            let full = cheap.then_some(walk_key(state, ci, false));
            for k in std::iter::once(own_key(ci)).chain(full) {
                if let Some(a) = self.live_depths.get(&k).and_then(|&(d, _)| walk_answer(d, max)) {
                    return a;
                }
            }
        }
        // A member `X & ~F` with F a finite set of strings (free keys beside named ones:
        // `"…" & ~("k1"|…)`) has every prefix of X that X extends without end (any of
        // those strings has infinitely many completions in X, F holds finitely many): a
        // walk of the class from the state with such members read as X that finds every
        // string of the class live at any length (a repeated state set) proves the query.
        // The walk of X is the walk of a free string body, which decoding has met anyway;
        // the state's own walk tells every prefix of every named key apart.
        if let Some((ci, _)) = q {
            if !self.lazy_possible(state) {
                if let Some(r) = self.without_finite_exclusions(state) {
                    // A cheap query walks on the states built already (and takes a full
                    // walk's answer).
                    let key = walk_key(r, ci, cheap);
                    let full = walk_key(r, ci, false);
                    let d = match self.live_depths.get(&key).or(self.live_depths.get(&full)) {
                        Some(&(d, _)) => d,
                        None => {
                            let depth = UNBOUNDED_WALK_DEPTH;
                            let budget = if cheap { 0 } else { walk_new_states(depth) };
                            let d = self.walk_class(r, ci, depth, budget);
                            self.live_depths.insert(key, (d, depth));
                            d
                        }
                    };
                    if d.unbounded {
                        return Containment::Contained;
                    }
                }
            }
        }
        // A state whose walk of the class comes back to itself after one character (a free
        // string body) contains every query on the class: one step, on transitions the trie
        // walk needs anyway, where derivre's symbolic check costs tens of µs per new state.
        // A first character that kills the lexeme settles it the other way. Anything else (a
        // bounded string, a key state that tells first letters apart) goes on below. The
        // step is remembered: a deeper query walks again (warm); a step that gave up is taken
        // as given (at the first character that is nearly always more than `WALK_MAX_SET`
        // states, which a deeper walk meets too; tried: not remembering it cost ~5 % of
        // MaskBench mask time). A cheap query steps without building new states.
        if let Some((ci, max)) = q {
            if !self.live_depths.contains_key(&own_key(ci)) {
                let budget = if cheap { 0 } else { walk_new_states(1) };
                let d = self.walk_class(state, ci, 1, budget);
                self.live_depths.insert(own_key(ci), (d, 1));
                if let Some(a) = walk_answer(d, max) {
                    return a;
                }
            }
        }
        // A member `B* R` with `R` positive (an unanchored pattern: `.*(Red|Blue|…).*` under
        // `patternProperties`, quoted) holds every string of `B*` as a prefix (`R` completes
        // it), also inside a union after a few bytes (`B* R | <partial matches>`): where the
        // class walks from the state `B*` back to it after one character, every query on the
        // class is contained. The state's own walk tells apart every partial match of every
        // word (~200 states for thirty words: it gave up, and the slice was walked, 7-21 ms).
        // A cheap query takes a head state built already, and walks it building none.
        // The state without its finite exclusions (named keys beside pattern keys:
        // `S* & B* R & ~("k1"|…)`) counts too: a class string `c` there has infinitely many
        // completions `c b… w` (`b` a class character), finitely many of them excluded.
        if let Some((ci, _)) = q.filter(|_| !self.lazy_possible(state)) {
            let head = match self.star_head(state, !cheap) {
                Some(h) => Some(h),
                None => match self.without_finite_exclusions(state) {
                    Some(r) if r != state => self.star_head(r, !cheap),
                    _ => None,
                },
            };
            if let Some(head) = head {
                let full = walk_key(head, ci, false);
                let key = walk_key(head, ci, cheap);
                let d = match self.live_depths.get(&full).or(self.live_depths.get(&key)) {
                    Some(&(d, _)) => d,
                    None => {
                        let budget = if cheap { 0 } else { walk_new_states(1) };
                        let d = self.walk_class(head, ci, 1, budget);
                        self.live_depths.insert(key, (d, 1));
                        d
                    }
                };
                if d.unbounded {
                    return Containment::Contained;
                }
            }
        }
        // First derivre's symbolic check on a small budget: it proves shapes the walk finds
        // costly at once, e.g. keys `"body" & ~("k1"|…)` (free keys beside named ones),
        // whose walk tells every prefix of every named key apart.
        let skip_forced =
            q.is_some_and(|(ci, _)| self.walk_classes[ci as usize].num_first_bytes() >= 2);
        // The symbolic check proves strings live, not that a lazy lexeme (free text up to a
        // delimiter) does not match, and so end, inside them: with one live, only the walk,
        // which stops where a lazy lexeme matches, answers.
        let lazy_live = self.lazy_possible(state);
        if !lazy_live
            && self.check_symbolic(state, query, QUICK_CONTAINMENT_FUEL, false, skip_forced)
                == Containment::Contained
        {
            return Containment::Contained;
        }
        if let Some((ci, max)) = q {
            // One walk per (state, class) answers every query on that class up to the depth
            // it reached; a deeper query walks again (warm by then). An unbounded query is
            // contained only through a repeated state set within UNBOUNDED_WALK_DEPTH.
            let limit_now = max.unwrap_or(UNBOUNDED_WALK_DEPTH);
            let key = own_key(ci);
            let d = match self.live_depths.get(&key) {
                Some(&(d, used))
                    if d.unbounded
                        || d.depth < used
                        || used >= limit_now
                        || max.is_some_and(|m| m <= d.depth) =>
                {
                    d
                }
                _ => {
                    // A lexeme whose walk of this class built GAVE_UP_STATES new states or
                    // more and gave up walks on the states built already from then on: a
                    // word-count pattern under a `maxLength` has states by words x length
                    // (x partial UTF-8 characters), and each walk built 200-350 (1-7 ms)
                    // to give up, in state after state of a decode (the trie walks the
                    // slice instead).
                    let shape = self.members.get(state.as_usize()).and_then(|m| m.first());
                    let shape = shape.map(|m| (self.lexeme_exprs[m.0.as_usize()], ci));
                    let spent = shape.is_some_and(|k| self.gave_up.contains(&k));
                    let budget = if cheap || spent { 0 } else { walk_new_states(limit_now) };
                    let n0 = self.num_states();
                    let d = self.walk_class(state, ci, limit_now, budget);
                    if d.gave_up && self.num_states() - n0 >= GAVE_UP_STATES {
                        if let Some(k) = shape {
                            self.gave_up.insert(k);
                        }
                    }
                    self.live_depths.insert(key, (d, limit_now));
                    d
                }
            };
            let answer = d.contains(max);
            // Only when the walk gave up on a budget is the full symbolic check worth it.
            if answer == Containment::Contained || !d.gave_up || lazy_live || cheap {
                return answer;
            }
        }
        if lazy_live || cheap {
            return Containment::Unknown;
        }
        let fuel = self.limits.containment_fuel;
        self.check_symbolic(state, query, fuel, true, skip_forced)
    }

    /// The state of `state`'s members that intersect complements of finite languages
    /// (`~("k1"|…)`), with those complements left out ([`relax_finite`]: each member then
    /// has finitely many more strings); `None` when no member has one (or the state could
    /// not be made). Remembered per state.
    fn without_finite_exclusions(&mut self, state: StateId) -> Option<StateId> {
        if let Some(&r) = self.reduced.get(&state) {
            return (r != StateId::DEAD).then_some(r);
        }
        let members: Vec<(LexemeIdx, ExprRef)> = self.members.get(state.as_usize())?.to_vec();
        let mut out = Vec::new();
        // The infinite members, relaxed where they can be, for the pairs below.
        let mut all = Vec::new();
        for (lx, e) in members {
            let mut budget = FINITE_NODES;
            // A finite member (a pattern key's) is left out too: it cannot extend every
            // class string, and a smaller union proves no more than it holds.
            let relaxed = relax_finite(&mut self.exprs, e, &mut budget, &mut self.finite);
            let base = relaxed.unwrap_or(e);
            // `A & B` with `B` holding `A` (a key that matched an unanchored pattern:
            // `X* & X* (ε | …)`) is `A`: the same strings, and `A`'s walk repeats at once.
            let narrowed = drop_supersets(&mut self.exprs, base, &mut budget);
            let r = narrowed.unwrap_or(base);
            if is_finite(&self.exprs, r, &mut budget, &mut self.finite) {
                continue;
            }
            if relaxed.is_some() || narrowed.is_some() {
                out.push((lx, r));
            }
            all.push((lx, r));
        }
        // Keys under both `patternProperties` and `additionalProperties` are `A & P` and
        // `A & ~P`: one member `A` for the pair (the same strings), whose walk is a free
        // key's, where the pair's own walk tells apart every partial match of the pattern
        // (Github_hard---o57432, `sdkrel:.*`: every key mask 2-5 ms, the trie walked).
        let n = all.len();
        merge_complements(&mut self.exprs, &mut all);
        if all.len() < n {
            out = all;
        }
        // Only those members (the others, e.g. the named keys, would tell first letters
        // apart again), each a superset of a live one: live.
        let r =
            if out.is_empty() { StateId::DEAD } else { self.intern(out).unwrap_or(StateId::DEAD) };
        self.reduced.insert(state, r);
        (r != StateId::DEAD).then_some(r)
    }

    /// The state `{(lexeme, B*)}` of the first member of `state` that is `B* R` with `R`
    /// positive, or a union with such an alternative ([`star_head`]); `None` when no member
    /// has one (or the state could not be made).
    ///
    /// A member `(S1* & … & B* R) T` (an unanchored pattern intersected with a string body
    /// `S*`, behind the closing quote `T`) counts too, with the state `{(lexeme, B* & S1* &
    /// …)}`, when a string `w` of `R` is in every `Si*`: a string `c` of the class walked
    /// there is in `B*` and each `Si*`, so `c w` is in the intersection (a star holds the
    /// concatenation of its strings) and `c w t` in the member.
    ///
    /// `create` false (a cheap query): only a state built already.
    fn star_head(&mut self, state: StateId, create: bool) -> Option<StateId> {
        let members = self.members.get(state.as_usize())?.to_vec();
        let head =
            match members.iter().find_map(|&(lx, e)| star_head(&self.exprs, e).map(|b| (lx, b))) {
                Some(h) => h,
                None => members
                    .into_iter()
                    .find_map(|(lx, e)| self.star_head_in_body(e).map(|h| (lx, h)))?,
            };
        if create {
            self.intern(vec![head]).ok()
        } else {
            self.known_state(&[head])
        }
    }

    /// The state of `members` (sorted), if built already.
    fn known_state(&self, members: &[Member]) -> Option<StateId> {
        let hash = self.hasher.hash_one((members, false));
        let (known, starts) = (&self.members, &self.starts);
        let same = |s: &StateId| known[s.as_usize()] == *members && !starts[s.as_usize()];
        self.state_ids.find(hash, |e| same(&e.1)).map(|e| e.1)
    }

    /// `B* & S1* & …` for a member `(S1* & … & B* R) T` (see [`Self::star_head`]).
    fn star_head_in_body(&mut self, e: ExprRef) -> Option<ExprRef> {
        let x = &self.exprs;
        if x.get_tag(e) as u8 != tag::CONCAT {
            return None;
        }
        let [body, tail] = [x.get_args(e)[0], x.get_args(e)[1]];
        if x.get_tag(body) as u8 != tag::AND || !x.is_positive(tail) || tail == ExprRef::NO_MATCH {
            return None;
        }
        let ops = x.get_args(body).to_vec();
        let is_star = |a: ExprRef| {
            x.get_tag(a) as u8 == tag::REPEAT && repeat_bounds(x, a) == Some((0, u32::MAX))
        };
        let (k, (b, r)) =
            ops.iter().enumerate().find_map(|(k, &o)| star_head_parts(x, o).map(|p| (k, p)))?;
        let stars: Vec<ExprRef> =
            ops.iter().enumerate().filter(|&(j, _)| j != k).map(|(_, &o)| o).collect();
        if stars.is_empty() || !stars.iter().all(|&s| is_star(s)) {
            return None;
        }
        let mut budget = WITNESS_NODES;
        let w = self.part_witness(r, &mut budget)?;
        if !stars.iter().all(|&s| self.matches_bytes(s, &w)) {
            return None;
        }
        let mut head = stars;
        head.push(b);
        Some(self.exprs.mk_and(&mut head))
    }

    /// [`live_depth`] of walk class `ci` from `state`, at most `limit` characters deep,
    /// creating at most `budget` new states.
    fn walk_class(&mut self, state: StateId, ci: u32, limit: u32, budget: usize) -> LiveDepth {
        let classes = Arc::clone(&self.walk_classes);
        live_depth(self, state, &classes[ci as usize], Some(limit), WALK_FUEL, budget)
    }

    /// derivre's symbolic containment check of `query` in the prefixes of `state`: each
    /// member alone, then their union, within `fuel`. With `final_try` false a failure is
    /// not remembered by derivre (a later try with more fuel may still succeed).
    fn check_symbolic(
        &mut self,
        state: StateId,
        query: &RegexSpec,
        fuel: u64,
        final_try: bool,
        skip_forced: bool,
    ) -> Containment {
        let Some(small) = self.prefix_query_expr(query) else {
            return Containment::Unknown;
        };
        let Some(members) = self.members.get(state.as_usize()) else {
            return Containment::Unknown;
        };
        if members.is_empty() {
            return Containment::Unknown;
        }
        // The state lives iff one of its members does, so one member proven to contain the
        // query is enough (derivre's check understands shapes like `"body" & ~("k1"|…)`
        // one at a time, not their union); then the union, within what is left of the fuel.
        let members = members.to_vec();
        let cost0 = self.exprs.cost();
        let mut alts: Vec<ExprRef> = Vec::with_capacity(members.len());
        for &(_, e) in members.iter() {
            alts.push(e);
            // A member with one possible next byte (a key literal, say) cannot contain a
            // query whose characters start with several bytes: not worth a check.
            if skip_forced
                && matches!(
                    self.next_byte.next_byte(&self.exprs, e),
                    NextByte::ForcedByte(_) | NextByte::ForcedEOI | NextByte::Dead
                )
            {
                continue;
            }
            let left = fuel.saturating_sub(self.exprs.cost() - cost0);
            if left == 0 {
                return Containment::Unknown;
            }
            let r = self.relevance.is_contained_in_prefixes(
                &mut self.exprs,
                &mut self.deriv,
                small,
                e,
                left,
                final_try,
            );
            if let Ok(true) = r {
                return Containment::Contained;
            }
        }
        if alts.len() == 1 {
            return Containment::Unknown;
        }
        let big = mk_union(&mut self.exprs, &alts);
        let left = fuel.saturating_sub(self.exprs.cost() - cost0);
        match self.relevance.is_contained_in_prefixes(
            &mut self.exprs,
            &mut self.deriv,
            small,
            big,
            left.max(1),
            final_try,
        ) {
            Ok(true) => Containment::Contained,
            _ => Containment::Unknown,
        }
    }

    fn check_step_fuel(&self, cost0: u64) -> Result<(), Error> {
        let used = self.exprs.cost() - cost0;
        if used > self.limits.step_fuel {
            return Err(ErrorKind::StepFuelExhausted { limit: self.limits.step_fuel }.into());
        }
        if self.exprs.cost() > self.limits.total_fuel {
            return Err(ErrorKind::TotalFuelExhausted { limit: self.limits.total_fuel }.into());
        }
        Ok(())
    }

    /// derivre's relevance check of `e` within the step's remaining fuel.
    fn is_live_full(&mut self, e: ExprRef, cost0: u64) -> Result<bool, Error> {
        let left = self.limits.step_fuel.saturating_sub(self.exprs.cost() - cost0);
        match self.relevance.is_non_empty_limited(&mut self.exprs, e, left) {
            Ok(r) => {
                self.check_step_fuel(cost0)?;
                Ok(r)
            }
            Err(_) => Err(ErrorKind::StepFuelExhausted { limit: self.limits.step_fuel }.into()),
        }
    }

    /// Whether `e` matches some string. Expressions with `&`/`~` can be empty without being
    /// `NO_MATCH`: derivre's relevance check decides, first with [`QUICK_FUEL`], which
    /// answers nearly all; past it, a witness string (`has_witness`) proves a live `e`, and
    /// an empty [`hull`] an empty one, before the check with the step's whole fuel. Proving
    /// an intersection empty visits every state of its product, which nested intersections
    /// multiply: `format: date-time` (leap seconds are intersections) with an unanchored
    /// `pattern` took 3.6 M fuel, 84 ms in one mask, where its hull took ~1 ms.
    fn is_live(&mut self, e: ExprRef, cost0: u64) -> Result<bool, Error> {
        self.is_live_as(e, cost0, false)
    }

    /// [`is_live`](Self::is_live); `witness_first`: the witness is tried before the quick
    /// relevance check, not after it (a start state's lexemes: a key lexeme `"…" &
    /// ~("a"|"b")` took derivre's relevance check ~35 µs, in the first mask of nearly every
    /// object schema, where `""` proves it in two derivatives).
    fn is_live_as(&mut self, e: ExprRef, cost0: u64, witness_first: bool) -> Result<bool, Error> {
        if e == ExprRef::NO_MATCH {
            return Ok(false);
        }
        // A positive expression other than NO_MATCH matches some string (derivre's
        // invariant).
        if self.exprs.is_positive(e) || self.infinite_but_finitely_many(e) {
            return Ok(true);
        }
        // An intersection with the complement of an infinite language (a `oneOf` of
        // unanchored patterns: "holds `NEW` and none of the others' words") mostly runs
        // derivre's quick check out (~0.2 ms each); a witness that completes the word the
        // string must hold proves it in a few derivatives. Its guesses read byte strings'
        // lengths exactly there (see `shortest_guess`).
        let words = {
            let mut budget = FINITE_NODES;
            infinite_complement(
                &self.exprs,
                e,
                &mut budget,
                &mut self.complements,
                &mut self.finite,
            )
        };
        if (witness_first || words) && self.has_witness(e, words) {
            self.check_step_fuel(cost0)?;
            return Ok(true);
        }
        // An intersection of positive parts (a `maxLength` string with a `pattern`): a
        // string from its parts, before derivre's relevance check, which explores the
        // product and ran out of its quick fuel on a word-count pattern's new states.
        let mut budget = WITNESS_NODES;
        if self.part_witness(e, &mut budget).is_some() {
            self.check_step_fuel(cost0)?;
            return Ok(true);
        }
        let quick = QUICK_FUEL.min(self.limits.step_fuel.saturating_sub(self.exprs.cost() - cost0));
        if let Ok(r) = self.relevance.is_non_empty_limited(&mut self.exprs, e, quick) {
            self.check_step_fuel(cost0)?;
            return Ok(r);
        }
        // An intersection with the complement of a superset of one of its operands (the
        // `oneOf` of unanchored patterns: each branch excludes the others' words; once a
        // string holds two of them, every branch is `a & ~(a · (ε | …))`): empty, read off
        // the structure, where derivre's relevance check took 20-55 ms.
        let mut budget = FINITE_NODES;
        if surely_empty(&self.exprs, e, &mut budget) {
            self.check_step_fuel(cost0)?;
            return Ok(false);
        }
        if !witness_first && !words && self.has_witness(e, false) {
            self.check_step_fuel(cost0)?;
            return Ok(true);
        }
        let mut memo = HashMap::new();
        let mut budget = HULL_NODES;
        let h = hull(&mut self.exprs, e, true, &mut memo, &mut budget);
        if h != e {
            let left = self.limits.step_fuel.saturating_sub(self.exprs.cost() - cost0);
            let fuel = HULL_FUEL.min(left);
            if let Ok(false) = self.relevance.is_non_empty_limited(&mut self.exprs, h, fuel) {
                self.check_step_fuel(cost0)?;
                return Ok(false);
            }
        }
        self.is_live_full(e, cost0)
    }

    /// Whether `e` is live by its structure ([`surely_infinite`]): a free JSON key after a
    /// few bytes, `[^"\\]*" & ~("me"|"ta")`, is live without a relevance check or a
    /// witness (those took a quarter of a schema's first mask, in the first key's states).
    fn infinite_but_finitely_many(&mut self, e: ExprRef) -> bool {
        let mut budget = FINITE_NODES;
        surely_infinite(&self.exprs, e, &mut budget, &mut self.finite)
    }

    /// Whether a string that [`shortest_guess`] points to, byte by byte, matches `e`
    /// (exact: derivatives and the nullable flag). `false` says nothing. `words`: the
    /// guesses' word mode (see [`shortest_guess`]).
    fn has_witness(&mut self, e: ExprRef, words: bool) -> bool {
        self.guess_walk(e, words).is_some()
    }

    /// The string [`shortest_guess`] points to, byte by byte, if `e` matches it within
    /// [`WITNESS_MAX_LEN`] bytes (exact: derivatives and the nullable flag).
    fn guess_walk(&mut self, e: ExprRef, words: bool) -> Option<Vec<u8>> {
        let (mut d, mut out) = (e, Vec::new());
        let mut memo = HashMap::new();
        for _ in 0..WITNESS_MAX_LEN {
            if self.exprs.is_nullable(d) {
                return Some(out);
            }
            // An expression's guess is the same at every step: the memo carries over
            // (the expression after a byte shares most of its nodes).
            let mut budget = WITNESS_NODES;
            let guess = shortest_guess(&self.exprs, d, &mut memo, &mut budget, words);
            let Some((_, Some(b))) = guess else {
                return None;
            };
            out.push(b);
            d = self.deriv.derivative(&mut self.exprs, d, b);
            if d == ExprRef::NO_MATCH {
                return None;
            }
        }
        None
    }

    /// A string of `e` built from its parts, without a derivative of an intersection: a
    /// positive part's string is found by following [`shortest_guess`] with derivatives
    /// (kept per expression, in `witnesses`); a concatenation joins its parts' strings, a
    /// union takes its first alternative's that has one, and an intersection takes the
    /// longest string among its operands' that every operand matches (derivatives of each
    /// operand alone, and the nullable flag). Exact when it answers; `None` says nothing.
    ///
    /// A `maxLength` string with a word-count `pattern` is `body{0,n} & words`: the
    /// intersection's own derivatives by a witness are new product expressions for each
    /// length, where the operands' are the counters and word states already known.
    fn part_witness(&mut self, e: ExprRef, budget: &mut u32) -> Option<Arc<[u8]>> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if self.exprs.is_positive(e) {
            if let Some(w) = self.witnesses.get(&e) {
                return w.clone();
            }
            // A positive expression has no intersection or complement inside.
            let w = self.guess_walk(e, false).map(Arc::from);
            self.witnesses.insert(e, w.clone());
            return w;
        }
        let args = self.exprs.get_args(e).to_vec();
        match self.exprs.get_tag(e) as u8 {
            tag::CONCAT => {
                let a = self.part_witness(args[0], budget)?;
                let b = self.part_witness(args[1], budget)?;
                Some(a.iter().chain(b.iter()).copied().collect())
            }
            tag::OR => args.into_iter().find_map(|a| self.part_witness(a, budget)),
            tag::AND => {
                let mut found: Vec<Arc<[u8]>> = Vec::new();
                for &a in &args {
                    if self.exprs.get_tag(a) as u8 == tag::NOT {
                        continue;
                    }
                    if let Some(w) = self.part_witness(a, budget) {
                        found.push(w);
                    }
                }
                found.sort_by_key(|w| std::cmp::Reverse(w.len()));
                found.into_iter().find(|w| args.iter().all(|&a| self.matches_bytes(a, w)))
            }
            _ => None,
        }
    }

    /// Whether `e` matches `bytes` (derivatives and the nullable flag).
    fn matches_bytes(&mut self, e: ExprRef, bytes: &[u8]) -> bool {
        let mut d = e;
        for &b in bytes {
            d = self.deriv.derivative(&mut self.exprs, d, b);
            if d == ExprRef::NO_MATCH {
                return false;
            }
        }
        self.exprs.is_nullable(d)
    }

    /// Finds or creates the state for `members` (each member live), computing its per-state
    /// arrays and adding a table row of MISSING entries.
    fn intern(&mut self, members: Vec<(LexemeIdx, ExprRef)>) -> Result<StateId, Error> {
        self.intern_as(members, false)
    }

    fn intern_as(
        &mut self,
        mut members: Vec<(LexemeIdx, ExprRef)>,
        start: bool,
    ) -> Result<StateId, Error> {
        members.sort_unstable();
        let hash = self.hasher.hash_one((&members[..], start));
        let (known, starts) = (&self.members, &self.starts);
        let same =
            |s: &StateId| known[s.as_usize()] == members[..] && starts[s.as_usize()] == start;
        if let Some(&(_, s)) = self.state_ids.find(hash, |e| same(&e.1)) {
            return Ok(s);
        }
        // Ids stay below the MUST_END bit of table entries whatever the configured limit.
        let limit = self.limits.max_states.min(MUST_END as usize - 1);
        if self.flags.len() >= limit {
            return Err(ErrorKind::TooManyStates { limit }.into());
        }
        let cost0 = self.exprs.cost();
        let mut accepting = LexemeSet::new();
        let mut possible = LexemeSet::new();
        let mut extensible = false;
        let mut forced: Option<Option<u8>> = None; // None: no member seen yet
        for &(lx, e) in members.iter() {
            possible.insert(lx);
            if self.exprs.is_nullable(e) {
                accepting.insert(lx);
            }
            // Exact single next byte, when derivre can tell cheaply.
            let nb = self.next_byte.next_byte(&self.exprs, e);
            let f = match nb {
                NextByte::ForcedByte(b) => Some(b),
                _ => None,
            };
            forced = Some(match forced {
                None => f,
                Some(prev) if prev == f => f,
                Some(_) => None,
            });
            // Members of a state reached by a byte are live (`advance_cold` keeps only
            // those), so one that is not nullable matches a non-empty string.
            if !extensible && !start && !self.exprs.is_nullable(e) {
                extensible = true;
            }
            if !extensible {
                extensible = match nb {
                    NextByte::ForcedEOI | NextByte::Dead => false,
                    NextByte::ForcedByte(_) => true,
                    // Does `e` match a non-empty string? Read off its structure where
                    // it can be (a whitespace lexeme at a start state), else checked.
                    _ => match matches_nonempty(&self.exprs, e) {
                        Some(ne) => ne,
                        _ => {
                            let ne =
                                self.exprs.mk_and(&mut vec![e, ExprRef::NON_EMPTY_BYTE_STRING]);
                            self.is_live(ne, cost0)?
                        }
                    },
                };
            }
        }
        let mut flags = StateFlags::empty();
        if !accepting.is_empty() {
            flags = flags.union(StateFlags::ACCEPTING);
            if accepting.intersects(&self.lazy) {
                flags = flags.union(StateFlags::LAZY_ACCEPTING);
            }
        }
        if !extensible && !members.is_empty() {
            flags = flags.union(StateFlags::NO_EXTENSION);
        }
        let forced = if accepting.is_empty() { forced.flatten() } else { None };
        let first_lookahead = accepting
            .first()
            .and_then(|lx| members.iter().find(|m| m.0 == lx))
            .and_then(|m| self.exprs.lookahead_len(m.1))
            .unwrap_or(0) as u32;
        let id = StateId::new(self.flags.len());
        self.first_lookahead.push(first_lookahead);
        self.flags.push(flags);
        self.accepting.push(self.sets.intern(accepting, &self.hasher));
        self.possible.push(self.sets.intern(possible, &self.hasher));
        self.forced.push(forced);
        self.members.push(&members);
        self.starts.push(start);
        self.state_ids.insert_unique(hash, (hash, id), |e| e.0);
        self.table.resize(self.table.len() + self.num_classes, MISSING);
        self.parts.of_state.push(NO_PARTITION);
        self.parts.cold.push(0);
        Ok(id)
    }

    /// The query compiled into this lexer's expression store (cached); `None` when it uses
    /// `json_quote` (only available through derivre's builder) or does not compile.
    fn prefix_query_expr(&mut self, query: &RegexSpec) -> Option<ExprRef> {
        if let Some(&e) = self.prefix_queries.get(query) {
            return e;
        }
        if let Some(q) = ClassRepeat::parse_cached(query) {
            // `C{m,n}` straight from its UTF-8 sequences: no regex parse per lexer, and one
            // expression of `C` for the queries on one class (the slicer's first three).
            let x = &mut self.exprs;
            let class = match self.query_classes.get(&q.class) {
                Some(&c) => c,
                None => {
                    let chars: Vec<ExprRef> = q
                        .class
                        .seqs()
                        .iter()
                        .map(|seq| {
                            let parts: Vec<ExprRef> = seq
                                .iter()
                                .map(|bytes| {
                                    let mut set = [0u32; 8];
                                    for &b in bytes {
                                        set[b as usize / 32] |= 1 << (b % 32);
                                    }
                                    match bytes.len() {
                                        0 => ExprRef::NO_MATCH,
                                        1 => x.mk_byte(bytes[0]),
                                        _ => x.mk_byte_set(&set),
                                    }
                                })
                                .collect();
                            x.mk_concat_vec(&parts)
                        })
                        .collect();
                    let c = mk_union(x, &chars);
                    Arc::make_mut(&mut self.query_classes).insert(q.class.clone(), c);
                    c
                }
            };
            let e = Some(x.mk_repeat(class, q.min, q.max.unwrap_or(u32::MAX)));
            Arc::make_mut(&mut self.prefix_queries).insert(query.clone(), e);
            return e;
        }
        let exprs = &mut self.exprs;
        let e = fold("query", query, self.limits.max_depth, |node, args| {
            translate_raw(exprs, node, args).ok_or_else(|| {
                Error::from(ErrorKind::Unsupported { lexeme: "query".into(), feature: node.tag() })
            })
        })
        .ok();
        Arc::make_mut(&mut self.prefix_queries).insert(query.clone(), e);
        e
    }
}

/// The members of every state in one array (state `s`'s: `data[spans[s]..spans[s + 1]]`):
/// a copy of the lexer (each new matcher of a grammar copies its template) copies two
/// plain arrays, where a box per state took an allocation per state.
#[derive(Clone)]
struct MemberStore {
    data: Vec<Member>,
    spans: Vec<u32>,
}

impl Default for MemberStore {
    fn default() -> Self {
        MemberStore { data: Vec::new(), spans: vec![0] }
    }
}

impl MemberStore {
    fn get(&self, state: usize) -> Option<&[Member]> {
        let (&lo, &hi) = (self.spans.get(state)?, self.spans.get(state + 1)?);
        Some(&self.data[lo as usize..hi as usize])
    }

    /// A copy with room for `states` more states (of as many members as the average).
    fn with_room(&self, states: usize) -> MemberStore {
        let n = self.spans.len().max(2) - 1;
        let per_state = self.data.len().div_ceil(n).max(1);
        MemberStore {
            data: with_room(&self.data, states * per_state),
            spans: with_room(&self.spans, states),
        }
    }

    fn push(&mut self, members: &[Member]) {
        self.data.extend_from_slice(members);
        self.spans.push(u32::try_from(self.data.len()).expect("fewer than 2^32 members"));
    }

    fn num_bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<Member>() + self.spans.capacity() * 4
    }
}

impl std::ops::Index<usize> for MemberStore {
    type Output = [Member];

    fn index(&self, state: usize) -> &[Member] {
        self.get(state).expect("a known state")
    }
}

/// Lexeme sets, each stored once (the accepting and possible sets of states: many states
/// share theirs) and shared between copies of the lexer, so that a copy allocates nothing
/// per set (two allocations per state before).
#[derive(Clone, Default)]
struct SetPool {
    sets: Vec<Arc<LexemeSet>>,
    ids: HashTable<u32>,
}

impl SetPool {
    fn intern(&mut self, set: LexemeSet, hasher: &DefaultHashBuilder) -> u32 {
        let hash = hasher.hash_one(&set);
        let sets = &self.sets;
        if let Some(&i) = self.ids.find(hash, |&i| *sets[i as usize] == set) {
            return i;
        }
        let i = u32::try_from(self.sets.len()).expect("fewer than 2^32 sets");
        self.sets.push(Arc::new(set));
        let sets = &self.sets;
        self.ids.insert_unique(hash, i, |&j| hasher.hash_one(&*sets[j as usize]));
        i
    }

    /// Counted in full in every copy (the sets are shared).
    fn num_bytes(&self) -> usize {
        // Each set: its words, and the `Arc`'s allocation (two counts and the set).
        let sets: usize = self.sets.iter().map(|s| s.num_bytes() + 16).sum();
        let each = std::mem::size_of::<Arc<LexemeSet>>() + std::mem::size_of::<LexemeSet>();
        sets + self.sets.capacity() * each + self.ids.capacity() * 4
    }
}

/// Expression nodes [`shortest_guess`] visits per step at most.
const WITNESS_NODES: u32 = 256;
/// Fuel of the first relevance check of [`DerivreLexer::is_live`].
const QUICK_FUEL: u64 = 5_000;
/// Expression nodes [`is_finite`] reads at most.
const FINITE_NODES: u32 = 4_096;
/// Fuel of the relevance check of a [`hull`] (a small part of the step's: the full check
/// after it may need the rest).
const HULL_FUEL: u64 = 200_000;
/// Expression nodes [`hull`] rebuilds at most.
const HULL_NODES: u32 = 4_096;
/// The longest witness tried (derivatives along it).
const WITNESS_MAX_LEN: usize = 64;

/// derivre's expression kinds (`ExprSet::get_tag`, a `repr(u8)` enum it does not name in
/// its public API; the values are derivre 0.3's, checked by the test
/// `expression_tags_are_derivres`).
mod tag {
    pub const EMPTY_STRING: u8 = 1;
    pub const NO_MATCH: u8 = 2;
    pub const BYTE: u8 = 3;
    pub const BYTE_SET: u8 = 4;
    pub const BYTE_CONCAT: u8 = 5;
    pub const LOOKAHEAD: u8 = 7;
    pub const NOT: u8 = 8;
    pub const REPEAT: u8 = 9;
    pub const CONCAT: u8 = 10;
    pub const OR: u8 = 11;
    pub const AND: u8 = 12;
}

/// The length and first byte of a short string `e` may match, read off its structure: the
/// shortest of each alternative, the elements of a concatenation one after the other, one
/// copy of a repeat that cannot be empty, an intersection's positive element (else its
/// first element that gives one); nothing for a complement or a `multipleOf` remainder.
/// Only a guess, which an intersection or a complement may reject (lengths of byte strings
/// count their first byte): [`DerivreLexer::has_witness`] follows it with derivatives.
/// `None` past `budget` nodes.
///
/// `words` (for intersections with complements of infinite languages, a `oneOf` of
/// unanchored patterns): a byte string counts its bytes (else the guess zigzags between two
/// words, each counted 2 long), and an intersection with a complement among its operands
/// takes the guess of its operand with the longest shortest string (the word a branch must
/// hold, not the nullable body beside it). Not used elsewhere: it made every 40th MaskBench
/// file's first masks +0.9 % instructions (longer walks of the guesses).
fn shortest_guess(
    exprs: &ExprSet,
    e: ExprRef,
    memo: &mut HashMap<ExprRef, Option<(u32, Option<u8>)>>,
    budget: &mut u32,
    words: bool,
) -> Option<(u32, Option<u8>)> {
    if let Some(&g) = memo.get(&e) {
        return g;
    }
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let first_byte = || {
        let x = exprs.get(e);
        (0..=255u8).find(|&b| x.matches_byte(b))
    };
    let args = exprs.get_args(e).to_vec();
    let g = match exprs.get_tag(e) as u8 {
        tag::EMPTY_STRING => Some((0, None)),
        tag::BYTE | tag::BYTE_SET => first_byte().map(|b| (1, Some(b))),
        tag::BYTE_CONCAT => {
            let tail = shortest_guess(exprs, args[0], memo, budget, words)?;
            let len = if words {
                // The string's bytes are the iterator's first elements, all of one kind
                // (derivre does not name the element type; its discriminant tells them
                // apart from the tail's).
                let mut it = exprs.iter_concat_bytes(e);
                it.next().map_or(1, |first| {
                    let kind = std::mem::discriminant(&first);
                    1 + it.take_while(|x| std::mem::discriminant(x) == kind).count() as u32
                })
            } else {
                2
            };
            first_byte().map(|b| (len + tail.0, Some(b)))
        }
        tag::LOOKAHEAD => shortest_guess(exprs, args[0], memo, budget, words),
        tag::REPEAT if exprs.is_nullable(e) => Some((0, None)),
        tag::REPEAT => shortest_guess(exprs, args[0], memo, budget, words),
        tag::CONCAT => {
            let a = shortest_guess(exprs, args[0], memo, budget, words)?;
            let b = shortest_guess(exprs, args[1], memo, budget, words)?;
            Some((a.0 + b.0, a.1.or(b.1)))
        }
        tag::OR => args
            .iter()
            .filter_map(|&a| shortest_guess(exprs, a, memo, budget, words))
            .min_by_key(|g| g.0),
        tag::AND if words && args.iter().any(|&a| exprs.get_tag(a) as u8 == tag::NOT) => {
            let mut best: Option<(u32, Option<u8>)> = None;
            for &a in args.iter().filter(|&&a| exprs.get_tag(a) as u8 != tag::NOT) {
                let g = shortest_guess(exprs, a, memo, budget, words)?;
                if best.is_none_or(|b| g.0 > b.0) {
                    best = Some(g);
                }
            }
            best
        }
        tag::AND => {
            let mut args = args;
            args.sort_by_key(|&a| !exprs.is_positive(a));
            args.into_iter().find_map(|a| shortest_guess(exprs, a, memo, budget, words))
        }
        tag::NO_MATCH | tag::NOT => None,
        // The `multipleOf` remainder.
        _ => None,
    };
    memo.insert(e, g);
    g
}

/// Whether `e` matches finitely many strings, read off its structure: bytes, byte strings,
/// concatenations and unions of such, an intersection with such an operand (a repeat or a
/// complement: not known, `false`); `false` past `budget` nodes. `memo` keeps the answers
/// found within the budget.
fn is_finite(x: &ExprSet, e: ExprRef, budget: &mut u32, memo: &mut HashMap<ExprRef, bool>) -> bool {
    budgeted(e, budget, memo, |budget, memo| match x.get_tag(e) as u8 {
        tag::EMPTY_STRING | tag::NO_MATCH | tag::BYTE | tag::BYTE_SET => true,
        tag::BYTE_CONCAT | tag::CONCAT | tag::OR => {
            x.get_args(e).iter().all(|&a| is_finite(x, a, budget, memo))
        }
        // A subset of each operand: finite where one of them is.
        tag::AND => x.get_args(e).iter().any(|&a| is_finite(x, a, budget, memo)),
        _ => false,
    })
}

/// A structural predicate of `e` through `memo`: `false` (unknown) once `budget` nodes are
/// spent; an answer found with budget left is exact and kept (the same next time).
fn budgeted(
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
    f: impl FnOnce(&mut u32, &mut HashMap<ExprRef, bool>) -> bool,
) -> bool {
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let r = f(budget, memo);
    if *budget > 0 {
        memo.insert(e, r);
    }
    r
}

/// Whether `e` holds the complement of an infinite language, read off its structure (under
/// intersections, unions and the head of concatenations); `false` past `budget` nodes.
/// `memo` keeps the answers found within the budget; `finite` is [`is_finite`]'s memo.
fn infinite_complement(
    x: &ExprSet,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
    finite: &mut HashMap<ExprRef, bool>,
) -> bool {
    budgeted(e, budget, memo, |budget, memo| {
        let args = x.get_args(e);
        match x.get_tag(e) as u8 {
            tag::NOT => !finite_exclusion(x, e, budget, finite),
            tag::AND | tag::OR => {
                args.iter().any(|&a| infinite_complement(x, a, budget, memo, finite))
            }
            tag::CONCAT | tag::BYTE_CONCAT => infinite_complement(x, args[0], budget, memo, finite),
            _ => false,
        }
    })
}

/// Whether `a` is the complement of a finite language (`~("k1"|…)`), which removes finitely
/// many strings from an intersection.
fn finite_exclusion(
    x: &ExprSet,
    a: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> bool {
    x.get_tag(a) as u8 == tag::NOT && is_finite(x, x.get_args(a)[0], budget, memo)
}

/// Whether `e` matches infinitely many strings (so some), read off its structure: an
/// unbounded repeat of a body with a non-empty string; an intersection of one such operand
/// with complements of finite languages (they remove finitely many strings); a
/// concatenation of such an expression with one that matches some string (derivre's
/// "positive" flag: an expression known to match some string); a union with such an
/// operand; a byte string before one. `false` says nothing.
fn surely_infinite(
    x: &ExprSet,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let args = x.get_args(e);
    match x.get_tag(e) as u8 {
        tag::AND => {
            let mut rest = None;
            for &a in args {
                if finite_exclusion(x, a, budget, memo) {
                    continue;
                }
                if rest.replace(a).is_some() {
                    return false;
                }
            }
            rest.is_some_and(|a| surely_infinite(x, a, budget, memo))
        }
        tag::BYTE_CONCAT => surely_infinite(x, args[0], budget, memo),
        tag::REPEAT => {
            let body = args[0];
            let nonempty_string = x.is_positive(body) && !x.is_nullable(body);
            (nonempty_string && repeat_bounds(x, e).is_some_and(|(_, max)| max == u32::MAX))
                || surely_infinite(x, body, budget, memo)
        }
        tag::CONCAT => {
            let [a, b] = [args[0], args[1]];
            (x.is_positive(b) && surely_infinite(x, a, budget, memo))
                || (x.is_positive(a) && surely_infinite(x, b, budget, memo))
        }
        tag::OR => args.iter().any(|&a| surely_infinite(x, a, budget, memo)),
        _ => false,
    }
}

/// Whether `e` matches nothing, read off its structure: `NO_MATCH`; an intersection with an
/// operand that matches nothing or with the complement of a superset of another operand
/// ([`surely_superset`]); a union of such; a concatenation with such an element. `false`
/// says nothing (also past `budget` nodes).
fn surely_empty(x: &ExprSet, e: ExprRef, budget: &mut u32) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let args = x.get_args(e);
    match x.get_tag(e) as u8 {
        tag::NO_MATCH => true,
        tag::AND => {
            args.iter().any(|&a| surely_empty(x, a, budget))
                || args.iter().any(|&n| {
                    x.get_tag(n) as u8 == tag::NOT && {
                        let b = x.get_args(n)[0];
                        args.iter().any(|&a| a != n && surely_superset(x, b, a, budget))
                    }
                })
        }
        tag::OR => args.iter().all(|&a| surely_empty(x, a, budget)),
        tag::CONCAT => args.iter().any(|&a| surely_empty(x, a, budget)),
        tag::BYTE_CONCAT => surely_empty(x, args[0], budget),
        _ => false,
    }
}

/// Whether `b` matches every string `a` matches, read off its structure: `b` is `a`, a union
/// with such an alternative, or a concatenation of such an element with a nullable one
/// (`a · (ε | …)` holds `a · ε`). `false` says nothing (also past `budget` nodes).
fn surely_superset(x: &ExprSet, b: ExprRef, a: ExprRef, budget: &mut u32) -> bool {
    if b == a {
        return true;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let args = x.get_args(b);
    match x.get_tag(b) as u8 {
        tag::OR => args.iter().any(|&c| surely_superset(x, c, a, budget)),
        tag::CONCAT => {
            let [p, q] = [args[0], args[1]];
            (x.is_nullable(q) && surely_superset(x, p, a, budget))
                || (x.is_nullable(p) && surely_superset(x, q, a, budget))
        }
        _ => false,
    }
}

/// Whether `e` matches a non-empty string, read off its structure (`None`: not known).
/// Only nodes derivre knows to match some string ("positive") are read: a concatenation's
/// elements then both match some string.
fn matches_nonempty(x: &ExprSet, e: ExprRef) -> Option<bool> {
    if !x.is_positive(e) {
        return None;
    }
    match x.get_tag(e) as u8 {
        tag::EMPTY_STRING => Some(false),
        tag::BYTE | tag::BYTE_SET | tag::BYTE_CONCAT => Some(true),
        tag::REPEAT => matches_nonempty(x, x.get_args(e)[0]),
        tag::CONCAT | tag::OR => {
            let mut all_known = true;
            for &a in x.get_args(e) {
                match matches_nonempty(x, a) {
                    Some(true) => return Some(true),
                    Some(false) => {}
                    None => all_known = false,
                }
            }
            all_known.then_some(false)
        }
        _ => None,
    }
}

/// `B*` where `e` is `B* R` with `R` positive (so `R` matches some string: derivre's
/// invariant for a positive expression other than `NO_MATCH`), or a union with such an
/// alternative; then every string of `B*` is a prefix of a string of `e`.
fn star_head(x: &ExprSet, e: ExprRef) -> Option<ExprRef> {
    star_head_parts(x, e).map(|(b, _)| b)
}

/// `(B*, R)` of [`star_head`].
fn star_head_parts(x: &ExprSet, e: ExprRef) -> Option<(ExprRef, ExprRef)> {
    let head = |c: ExprRef| {
        if x.get_tag(c) as u8 != tag::CONCAT {
            return None;
        }
        let [a, r] = [x.get_args(c)[0], x.get_args(c)[1]];
        let unbounded =
            x.get_tag(a) as u8 == tag::REPEAT && repeat_bounds(x, a) == Some((0, u32::MAX));
        (unbounded && x.is_positive(r) && r != ExprRef::NO_MATCH).then_some((a, r))
    };
    match x.get_tag(e) as u8 {
        tag::OR => x.get_args(e).iter().find_map(|&c| head(c)),
        _ => head(e),
    }
}

/// The bounds of repeat `e` (`u32::MAX`: unbounded), which derivre's API does not show but
/// its printer does: with no room for the body it prints `(…)` and then `*`, `+`, `?` or
/// `{min, max}` (checked by the test `repeat_bounds_are_read_off_the_printer`).
fn repeat_bounds(x: &ExprSet, e: ExprRef) -> Option<(u32, u32)> {
    let s = x.expr_to_string_max_len(e, 0);
    match s.strip_prefix("(…)")? {
        "*" => Some((0, u32::MAX)),
        "+" => Some((1, u32::MAX)),
        "?" => Some((0, 1)),
        b => {
            let (min, max) = b.strip_prefix('{')?.strip_suffix('}')?.split_once(", ")?;
            Some((min.parse().ok()?, max.parse().ok()?))
        }
    }
}

/// Replaces each pair of members `A & P` and `A & ~P` (each behind the same tail `T`, as
/// `(…) T`) by one member `A` (`A T`): their union, the same strings. The first member's
/// lexeme stays (the state is only walked, for containment).
fn merge_complements(x: &mut ExprSet, members: &mut Vec<Member>) {
    let mut i = 0;
    while i < members.len() {
        let hit = (i + 1..members.len())
            .find_map(|j| complement_union(x, members[i].1, members[j].1).map(|u| (j, u)));
        match hit {
            Some((j, u)) => {
                members[i].1 = u;
                members.remove(j);
            }
            None => i += 1,
        }
    }
}

/// `e` without the operands of its intersection that hold another operand ([`surely_superset`]:
/// `A & A (ε | …)` is `A`), behind a tail (`(…) T`, [`peel_tails`]); `None` when none is
/// found.
fn drop_supersets(x: &mut ExprSet, e: ExprRef, budget: &mut u32) -> Option<ExprRef> {
    let (head, tails) = peel_tails(x, e);
    if x.get_tag(head) as u8 != tag::AND {
        return None;
    }
    let args = x.get_args(head).to_vec();
    let mut kept = args.clone();
    for (i, &b) in args.iter().enumerate() {
        let holds_another = args
            .iter()
            .enumerate()
            .any(|(j, &a)| j != i && kept.contains(&a) && surely_superset(x, b, a, budget));
        if holds_another {
            kept.retain(|&k| k != b);
        }
    }
    if kept.len() == args.len() {
        return None;
    }
    let head = if kept.len() == 1 { kept[0] } else { x.mk_and(&mut kept) };
    Some(put_tails(x, head, &tails))
}

/// `A` (behind the tail both share, [`peel_tails`]) when `{a, b}` is `{A & P, A & ~P}`,
/// else `None`.
fn complement_union(x: &mut ExprSet, a: ExprRef, b: ExprRef) -> Option<ExprRef> {
    let ((a, tails), (b, tails_b)) = (peel_tails(x, a), peel_tails(x, b));
    if tails != tails_b || x.get_tag(a) as u8 != tag::AND || x.get_tag(b) as u8 != tag::AND {
        return None;
    }
    let (sa, sb) = (x.get_args(a).to_vec(), x.get_args(b).to_vec());
    let only_a: Vec<ExprRef> = sa.iter().copied().filter(|e| !sb.contains(e)).collect();
    let only_b: Vec<ExprRef> = sb.iter().copied().filter(|e| !sa.contains(e)).collect();
    let ([oa], [ob]) = (only_a.as_slice(), only_b.as_slice()) else { return None };
    let negates = |n: ExprRef, p: ExprRef| {
        x.get_tag(n) as u8 == tag::NOT && x.get_args(n).first() == Some(&p)
    };
    if !negates(*oa, *ob) && !negates(*ob, *oa) {
        return None;
    }
    let mut common: Vec<ExprRef> = sa.into_iter().filter(|e| e != oa).collect();
    let head = match common.len() {
        0 => return None,
        1 => common[0],
        _ => x.mk_and(&mut common),
    };
    Some(put_tails(x, head, &tails))
}

/// `e` as its head and the tails after it (`((H T1) T2)`: `H`, `[T1, T2]`), through the
/// heads of nested concatenations: the rules on a member's intersection see past the
/// closing quote (or key suffix) after it.
fn peel_tails(x: &ExprSet, mut e: ExprRef) -> (ExprRef, Vec<ExprRef>) {
    let mut tails = Vec::new();
    while x.get_tag(e) as u8 == tag::CONCAT {
        let args = x.get_args(e);
        tails.push(args[1]);
        e = args[0];
    }
    tails.reverse();
    (e, tails)
}

/// [`peel_tails`] undone: `head` followed by `tails`, innermost first.
fn put_tails(x: &mut ExprSet, head: ExprRef, tails: &[ExprRef]) -> ExprRef {
    tails.iter().fold(head, |h, &t| x.mk_concat(h, t))
}

/// A superset of `e` with finitely many more strings, complements of finite languages
/// left out where that adds finitely many: an intersection's operand `~F` (adds at most
/// F), inside an intersection's other operands and a union's operands, and inside one
/// element of a concatenation whose other element is finite (a free JSON key whose body
/// excludes pattern keys, `(~"p" & body*) "\""`, adds at most `"p\""`). `None`: nothing
/// left out (or past `budget` nodes).
fn relax_finite(
    x: &mut ExprSet,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> Option<ExprRef> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let args = x.get_args(e).to_vec();
    match x.get_tag(e) as u8 {
        tag::AND => {
            let mut changed = false;
            let mut kept = Vec::with_capacity(args.len());
            for a in args {
                if finite_exclusion(x, a, budget, memo) {
                    changed = true;
                } else if let Some(r) = relax_finite(x, a, budget, memo) {
                    changed = true;
                    kept.push(r);
                } else {
                    kept.push(a);
                }
            }
            // Every operand a finite exclusion: nothing positive left to walk.
            if !changed || kept.is_empty() {
                return None;
            }
            Some(if kept.len() == 1 { kept[0] } else { x.mk_and(&mut kept) })
        }
        tag::OR => {
            let mut changed = false;
            let rs: Vec<ExprRef> = args
                .iter()
                .map(|&a| match relax_finite(x, a, budget, memo) {
                    Some(r) => {
                        changed = true;
                        r
                    }
                    None => a,
                })
                .collect();
            changed.then(|| mk_union(x, &rs))
        }
        tag::CONCAT => {
            let (a, b) = (args[0], args[1]);
            if is_finite(x, b, budget, memo) {
                if let Some(r) = relax_finite(x, a, budget, memo) {
                    return Some(x.mk_concat(r, b));
                }
            }
            if is_finite(x, a, budget, memo) {
                if let Some(r) = relax_finite(x, b, budget, memo) {
                    return Some(x.mk_concat(a, r));
                }
            }
            None
        }
        _ => None,
    }
}

/// A superset of `e` with fewer intersections: below the outermost intersection on each
/// path (`keep`: none met yet), an intersection is replaced by its first positive operand
/// (else its first), which only adds strings; concatenations and unions are rebuilt; any
/// other node (a repeat or byte string around an intersection, a complement, a lookahead, a
/// remainder) is kept as it is: exact, so a superset too. `e` itself past `budget` nodes.
fn hull(
    x: &mut ExprSet,
    e: ExprRef,
    keep: bool,
    memo: &mut HashMap<(ExprRef, bool), ExprRef>,
    budget: &mut u32,
) -> ExprRef {
    if x.get_args(e).is_empty() {
        return e;
    }
    if let Some(&h) = memo.get(&(e, keep)) {
        return h;
    }
    if *budget == 0 {
        return e;
    }
    *budget -= 1;
    let args = x.get_args(e).to_vec();
    let h = match x.get_tag(e) as u8 {
        tag::CONCAT => {
            let a = hull(x, args[0], keep, memo, budget);
            let b = hull(x, args[1], keep, memo, budget);
            x.mk_concat(a, b)
        }
        tag::OR => {
            let hs: Vec<ExprRef> = args.iter().map(|&a| hull(x, a, keep, memo, budget)).collect();
            mk_union(x, &hs)
        }
        tag::AND if keep => {
            let mut hs = args.iter().map(|&a| hull(x, a, false, memo, budget)).collect();
            x.mk_and(&mut hs)
        }
        tag::AND => {
            let first = args.iter().copied().find(|&a| x.is_positive(a)).unwrap_or(args[0]);
            hull(x, first, false, memo, budget)
        }
        _ => e,
    };
    memo.insert((e, keep), h);
    h
}

/// The key of a class walk in [`DerivreLexer`]'s `live_depths`: walks that build no states
/// (`cheap`) apart from full ones.
fn walk_key(state: StateId, ci: u32, cheap: bool) -> (StateId, u32) {
    (state, ci | (cheap as u32) << 31)
}

/// Translates one node of a containment query straight into an expression store (no
/// builder); `None` for `json_quote` and for a regex that does not parse.
fn translate_raw(x: &mut ExprSet, node: &RegexSpec, mut args: Vec<ExprRef>) -> Option<ExprRef> {
    Some(match node {
        RegexSpec::Literal(s) => x.mk_literal(s),
        RegexSpec::Bytes(s) => x.mk_byte_literal(s),
        RegexSpec::ByteSet(ranges) => match byte_set(ranges) {
            RegexAst::Byte(b) => x.mk_byte(b),
            RegexAst::ByteSet(set) => x.mk_byte_set(&set),
            _ => ExprRef::NO_MATCH,
        },
        RegexSpec::Regex(rx) => {
            x.parse_expr(regex_syntax::ParserBuilder::new().build(), rx, false).ok()?
        }
        RegexSpec::Concat(_) => x.mk_concat_vec(&args),
        RegexSpec::Or(_) => mk_union(x, &args),
        RegexSpec::And(_) => x.mk_and(&mut args),
        RegexSpec::Not(_) => x.mk_not(args[0]),
        RegexSpec::Repeat { min, max, .. } => x.mk_repeat(args[0], *min, max.unwrap_or(u32::MAX)),
        RegexSpec::MultipleOf { divisor, scale } => {
            x.mk_remainder_is(*divisor, *divisor, *scale, false)
        }
        RegexSpec::LookAhead(_) => x.mk_lookahead(args[0], 0),
        RegexSpec::Empty => ExprRef::EMPTY_STRING,
        RegexSpec::NoMatch => ExprRef::NO_MATCH,
        RegexSpec::JsonQuote { .. } => return None,
    })
}

/// The union of `args` ([`distinct_alternatives`] first).
fn mk_union(x: &mut ExprSet, args: &[ExprRef]) -> ExprRef {
    x.mk_or(&mut distinct_alternatives(x, args))
}

/// `args` for a union, without the alternatives that spell the same concatenation as an
/// earlier one (the same bytes, then the same expressions) under another node: `"b" "aa"`
/// and `"baa"` (Lark `A: "b" "aa" | "baa"`). derivre (0.3.13) hash-conses nodes, not
/// spellings, and its prefix tree for a union whose alternatives share a first byte
/// panics on such a pair. Nested unions are flattened first, as derivre does.
fn distinct_alternatives(x: &ExprSet, args: &[ExprRef]) -> Vec<ExprRef> {
    let mut flat = Vec::with_capacity(args.len());
    for &a in args {
        if x.get_tag(a) as u8 == tag::OR {
            flat.extend_from_slice(x.get_args(a));
        } else {
            flat.push(a);
        }
    }
    if flat.len() < 2 {
        return flat;
    }
    // Sorted by spelling (compared lazily, as derivre sorts them), equal spellings adjacent.
    flat.sort_unstable_by(|&a, &b| x.iter_concat_bytes(a).cmp(x.iter_concat_bytes(b)));
    flat.dedup_by(|a, b| x.iter_concat_bytes(*a).eq(x.iter_concat_bytes(*b)));
    flat
}

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

/// Translates one spec node into derivre, given its children's expressions.
fn translate(
    b: &mut RegexBuilder,
    lexeme: &str,
    node: &RegexSpec,
    args: Vec<ExprRef>,
) -> Result<ExprRef, Error> {
    let refs = |args: Vec<ExprRef>| args.into_iter().map(RegexAst::ExprRef).collect::<Vec<_>>();
    let one = |args: &[ExprRef]| Box::new(RegexAst::ExprRef(args[0]));
    let ast = match node {
        RegexSpec::Literal(s) => RegexAst::Literal(s.clone()),
        RegexSpec::Bytes(s) => RegexAst::ByteLiteral(s.clone()),
        RegexSpec::ByteSet(ranges) => byte_set(ranges),
        RegexSpec::Regex(rx) => {
            // Parsed once per process where the translation covers the regex.
            let parsed = crate::parsed::parsed(rx);
            let ast = match &parsed.ast {
                Some(ast) => ast.as_ref(),
                None => &RegexAst::Regex(rx.clone()),
            };
            return b.mk(ast).map_err(|e| {
                ErrorKind::Regex { lexeme: lexeme.to_string(), message: e.to_string() }.into()
            });
        }
        // Adjacent literal parts as one literal, so that one string has one spelling
        // whether written whole or in pieces (`"baa"`, `"b" "aa"`): derivre hash-conses
        // nodes, not spellings, and a union meeting two spellings of one string, at build
        // or in a derivative (`[ab] "b" "aa" | "abaa"` after `a`), panicked in derivre.
        RegexSpec::Concat(parts) => {
            let mut out: Vec<RegexAst> = Vec::with_capacity(parts.len());
            let mut run: Vec<u8> = Vec::new();
            for (part, &e) in parts.iter().zip(&args) {
                match part.literal_bytes() {
                    Some(bytes) => run.extend_from_slice(&bytes),
                    None => {
                        if !run.is_empty() {
                            out.push(RegexAst::ByteLiteral(std::mem::take(&mut run)));
                        }
                        out.push(RegexAst::ExprRef(e));
                    }
                }
            }
            if !run.is_empty() {
                out.push(RegexAst::ByteLiteral(run));
            }
            RegexAst::Concat(out)
        }
        // Plain literals and regexes are spelled one way each (hash-consed): a union of
        // those alone (a JSON `enum`) needs no check.
        RegexSpec::Or(alts)
            if alts.iter().all(|a| {
                matches!(a, RegexSpec::Literal(_) | RegexSpec::Bytes(_) | RegexSpec::Regex(_))
            }) =>
        {
            RegexAst::Or(refs(args))
        }
        RegexSpec::Or(_) => RegexAst::Or(refs(distinct_alternatives(b.exprset(), &args))),
        RegexSpec::And(_) => RegexAst::And(refs(args)),
        RegexSpec::Not(_) => RegexAst::Not(one(&args)),
        RegexSpec::Repeat { min, max, .. } => {
            // validate() has checked min <= max (derivre panics otherwise).
            RegexAst::Repeat(one(&args), *min, max.unwrap_or(u32::MAX))
        }
        RegexSpec::JsonQuote { raw, allowed_escapes, .. } => RegexAst::JsonQuote(
            one(&args),
            JsonQuoteOptions {
                allowed_escapes: allowed_escapes
                    .clone()
                    .unwrap_or_else(|| "nrbtf\\\"u".to_string()),
                raw_mode: *raw,
            },
        ),
        // validate() has checked divisor > 0.
        RegexSpec::MultipleOf { divisor, scale } => RegexAst::MultipleOf(*divisor, *scale),
        RegexSpec::LookAhead(_) => RegexAst::LookAhead(one(&args)),
        RegexSpec::Empty => RegexAst::EmptyString,
        RegexSpec::NoMatch => RegexAst::NoMatch,
    };
    b.mk(&ast).map_err(|e| {
        ErrorKind::InvalidSpec { lexeme: lexeme.to_string(), message: e.to_string() }.into()
    })
}

impl Lexer for DerivreLexer {
    fn num_lexemes(&self) -> usize {
        self.lexeme_exprs.len()
    }

    fn num_states(&self) -> usize {
        self.flags.len()
    }

    fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error> {
        if let Some(&s) = self.start_cache.get(allowed) {
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
        let cost0 = self.exprs.cost();
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
        self.start_cache.insert(allowed.clone(), s);
        Ok(s)
    }

    /// One table lookup when warm; no hashing, no derivative.
    #[inline(always)]
    fn advance(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        match self.table.get(idx) {
            Some(&next) if next != MISSING => Ok(StateId(next.0 & !MUST_END)),
            _ => self.advance_cold(state, byte),
        }
    }

    #[inline(always)]
    fn step_warm(&self, state: StateId, byte: u8) -> Option<StateId> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        let e = self.table.get(idx)?.0;
        // MISSING has the must-end bit set too, so one test rules out both; a plain DEAD
        // entry is a rejection (see `entry`).
        (e & MUST_END == 0).then_some(StateId(e))
    }

    /// One table load when warm: the entry carries the target's "must end" bit.
    #[inline]
    fn step(&mut self, state: StateId, byte: u8) -> Result<Step, Error> {
        let idx = state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
        let e = match self.table.get(idx) {
            Some(&e) if e != MISSING => e.0,
            _ => {
                let next = self.advance_cold(state, byte)?;
                self.table.get(idx).map_or(next.0, |e| e.0)
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
        self.flags.get(state.as_usize()).copied().unwrap_or_default()
    }

    fn accepting(&self, state: StateId) -> &LexemeSet {
        self.accepting.get(state.as_usize()).map_or(&EMPTY, |&i| &self.sets.sets[i as usize])
    }

    fn possible(&self, state: StateId) -> &LexemeSet {
        self.possible.get(state.as_usize()).map_or(&EMPTY, |&i| &self.sets.sets[i as usize])
    }

    fn forced_byte(&mut self, state: StateId) -> Result<Option<u8>, Error> {
        Ok(self.forced.get(state.as_usize()).copied().flatten())
    }

    fn lookahead_len(&self, state: StateId, lexeme: LexemeIdx) -> usize {
        let Some(members) = self.members.get(state.as_usize()) else {
            return 0;
        };
        if Lexer::accepting(self, state).first() == Some(lexeme) {
            return self.first_lookahead[state.as_usize()] as usize;
        }
        match members.binary_search_by_key(&lexeme, |m| m.0) {
            Ok(i) => self.exprs.lookahead_len(members[i].1).unwrap_or(0),
            Err(_) => 0,
        }
    }

    fn check_prefixes(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        self.containment(state, query, false)
    }

    fn check_prefixes_cheap(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        self.containment(state, query, true)
    }

    fn num_bytes(&self) -> usize {
        self.table_bytes()
            + self.flags.capacity()
            + self.forced.capacity() * 2
            + (self.accepting.capacity() + self.possible.capacity()) * 4
            + self.sets.num_bytes()
            + self.members.num_bytes()
            + self.starts.capacity()
            + self.state_ids.capacity() * 12
            + self.parts.num_bytes()
            + self.exprs.num_bytes()
            + self.deriv.num_bytes()
            + self.relevance.num_bytes()
            + self.next_byte.num_bytes()
    }
}

/// What a class walk settles for a query `C{m,max}`: contained when it went deep enough (or
/// came back to a state set it had seen); not contained when it stopped on a dead (or
/// lexeme-ending) first character, which no query holding one-character strings survives;
/// `None`: ask on.
fn walk_answer(d: LiveDepth, max: Option<u32>) -> Option<Containment> {
    if d.contains(max) == Containment::Contained {
        Some(Containment::Contained)
    } else if d.depth == 0 && !d.unbounded && !d.gave_up && max != Some(0) {
        Some(Containment::Unknown)
    } else {
        None
    }
}

/// A state's partition not worked out yet.
const NO_PARTITION: u32 = u32::MAX;
/// Every class in one part (an expression that reads no byte apart from another).
const TRIVIAL: u32 = 0;
/// Every class apart (nothing merged).
const IDENTITY: u32 = 1;

/// Partitions of the byte classes (a part label per class, numbered by first occurrence, so
/// equal partitions are equal arrays), interned, with the partition of each expression and
/// of each state. Two classes in one part of an expression's partition give it the same
/// derivative: a byte set (or single byte) and the first byte of a byte string tell apart
/// the classes they hold; an empty string or no-match tells none apart; a node that reads
/// no byte itself (concatenation, alternation, intersection, complement, repeat,
/// look-ahead) tells apart what its children read (a concatenation's second element only
/// when the first can be empty); a leaf that takes every byte (derivre's `multipleOf`
/// remainder node among them) is taken as telling every class apart.
#[derive(Clone)]
struct Partitions {
    /// A byte of each class.
    class_rep: Vec<u8>,
    labels: Vec<Arc<[u8]>>,
    ids: HashMap<Arc<[u8]>, u32>,
    /// Memo of [`Partitions::of_expr`].
    of_expr: derivre::HashMap<ExprRef, u32>,
    /// Memo of [`Partitions::refine`] (the same member partitions meet in state after
    /// state).
    refined: HashMap<(u32, u32), u32>,
    /// The partition of a byte or byte string by the class of its first byte (that class
    /// apart from the others); [`NO_PARTITION`] until met. A large alternation of literals
    /// (a tool set's names) makes new byte strings in every derivative.
    first_byte: Vec<u32>,
    /// Per state; [`NO_PARTITION`] until needed.
    of_state: Vec<u32>,
    /// Cold transitions computed per state (counted up to 2).
    cold: Vec<u8>,
    /// Off only in tests (the reference the spread table is compared with).
    on: bool,
}

impl Partitions {
    /// A copy with room for `states` more states.
    fn with_room(&self, states: usize) -> Partitions {
        Partitions {
            class_rep: self.class_rep.clone(),
            labels: self.labels.clone(),
            ids: self.ids.clone(),
            of_expr: self.of_expr.clone(),
            refined: self.refined.clone(),
            first_byte: self.first_byte.clone(),
            of_state: with_room(&self.of_state, states),
            cold: with_room(&self.cold, states),
            on: self.on,
        }
    }

    fn new(class_of: &[u8; 256], num_classes: usize) -> Partitions {
        let mut class_rep = vec![0u8; num_classes];
        for b in (0..=255u8).rev() {
            class_rep[class_of[b as usize] as usize] = b;
        }
        let mut p = Partitions {
            class_rep,
            labels: Vec::new(),
            ids: HashMap::new(),
            of_expr: derivre::HashMap::default(),
            refined: HashMap::new(),
            first_byte: vec![NO_PARTITION; num_classes],
            of_state: Vec::new(),
            cold: Vec::new(),
            on: true,
        };
        let trivial = p.intern(vec![0; num_classes]);
        let identity = p.intern((0..num_classes).map(|c| c as u8).collect());
        // With one class the two coincide: nothing to merge either way.
        debug_assert!(trivial == TRIVIAL && (identity == IDENTITY || num_classes == 1));
        if num_classes == 1 {
            p.labels.push(p.labels[0].clone());
        }
        p
    }

    fn intern(&mut self, labels: Vec<u8>) -> u32 {
        if let Some(&id) = self.ids.get(labels.as_slice()) {
            return id;
        }
        let id = self.labels.len() as u32;
        let labels: Arc<[u8]> = labels.into();
        self.labels.push(labels.clone());
        self.ids.insert(labels, id);
        id
    }

    /// The coarsest partition finer than both.
    fn refine(&mut self, a: u32, b: u32) -> u32 {
        if a == b || b == TRIVIAL {
            return a;
        }
        if a == TRIVIAL {
            return b;
        }
        if a == IDENTITY || b == IDENTITY {
            return IDENTITY;
        }
        let key = (a.min(b), a.max(b));
        if let Some(&r) = self.refined.get(&key) {
            return r;
        }
        let (la, lb) = (&self.labels[a as usize], &self.labels[b as usize]);
        // The pairs of labels met so far, numbered in order of first occurrence (at most one
        // per class).
        let mut pairs: Vec<(u8, u8)> = Vec::with_capacity(16);
        let out: Vec<u8> = la
            .iter()
            .zip(lb.iter())
            .map(|(&x, &y)| match pairs.iter().position(|&p| p == (x, y)) {
                Some(i) => i as u8,
                None => {
                    pairs.push((x, y));
                    (pairs.len() - 1) as u8
                }
            })
            .collect();
        let r = self.intern(out);
        self.refined.insert(key, r);
        r
    }

    /// The partition of expression `e` (memoized; see the type's docs).
    fn of_expr(&mut self, exprs: &mut ExprSet, e: ExprRef) -> u32 {
        let mut memo = std::mem::take(&mut self.of_expr);
        let p = exprs.map(
            e,
            &mut memo,
            true,
            |e| e,
            |set, mapped, r| {
                let x = set.get(r);
                // A node with children reads no byte itself unless it is a byte string, which
                // refuses all but one byte: two different bytes taken tell them apart.
                let reps = &self.class_rep;
                if !x.args().is_empty()
                    && reps.len() >= 2
                    && !x.surely_no_match(reps[0])
                    && !x.surely_no_match(reps[1])
                {
                    return mapped.iter().fold(TRIVIAL, |acc, &p| self.refine(acc, p));
                }
                // A byte or byte string: its first byte's class (a literal's byte is a class
                // of its own, so the class's byte is that byte) apart from the others.
                let t = set.get_tag(r) as u8;
                if t == tag::BYTE || t == tag::BYTE_CONCAT {
                    if let Some(c) = reps.iter().position(|&b| !x.surely_no_match(b)) {
                        if self.first_byte[c] == NO_PARTITION {
                            // Numbered by first occurrence, as every partition.
                            let labels = (0..reps.len()).map(|i| ((i == c) != (c == 0)) as u8);
                            let labels = labels.collect();
                            self.first_byte[c] = self.intern(labels);
                        }
                        return self.first_byte[c];
                    }
                }
                let (mut reads, mut skips) = (false, false);
                let labels: Vec<u8> = self
                    .class_rep
                    .iter()
                    .map(|&b| {
                        let no = x.surely_no_match(b);
                        reads |= !no;
                        skips |= no;
                        (!no) as u8
                    })
                    .collect();
                if x.args().is_empty() || skips {
                    // A leaf, or a byte string (its tail is not visited): what its first byte
                    // may be. A leaf that takes every byte may be a remainder node.
                    return match (reads, skips) {
                        (_, false) => IDENTITY,
                        (false, _) => TRIVIAL,
                        _ => {
                            let first = labels[0];
                            self.intern(labels.iter().map(|&l| (l != first) as u8).collect())
                        }
                    };
                }
                mapped.iter().fold(TRIVIAL, |acc, &p| self.refine(acc, p))
            },
        );
        self.of_expr = memo;
        p
    }

    fn num_bytes(&self) -> usize {
        let labels: usize = self.labels.iter().map(|l| 2 * l.len() + 32).sum();
        labels
            + self.of_expr.capacity() * 12
            + self.refined.capacity() * 12
            + self.of_state.capacity() * 4
            + self.cold.capacity()
            + self.class_rep.capacity()
    }
}

#[cfg(test)]
mod spread_tests {
    use super::*;
    use crate::LexemeKind;

    /// A JSON-like spec with every construct whose byte reading the partitions must follow:
    /// quoted strings (regex and `JsonQuote`), keys minus named ones (`&`, `~`), literals,
    /// `multipleOf` numbers, a bounded repeat, a look-ahead, a lazy lexeme.
    fn spec() -> LexerSpec {
        let mut spec = LexerSpec::new();
        let string =
            RegexSpec::regex(r#""([^"\\\x00-\x1F\x7F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#);
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
        b.parts.on = false;
        let alphabet: Vec<u8> = b"\"\\/abefnrtuxyzATZ0159.-+eE <>s{}:,"
            .iter()
            .copied()
            .chain([
                0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC2, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0xFF,
            ])
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
            let (mut sa, mut sb) =
                (a.start_state(&allowed).unwrap(), b.start_state(&allowed).unwrap());
            for _ in 0..40 {
                let byte =
                    if next(4) == 0 { next(256) as u8 } else { alphabet[next(alphabet.len())] };
                let idx = |l: &DerivreLexer, s: StateId| {
                    s.as_usize() * l.num_classes + l.class_of[byte as usize] as usize
                };
                if a.table[idx(&a, sa)] != MISSING {
                    spread_hits += 1;
                }
                let (na, nb) = (a.advance(sa, byte).unwrap(), b.advance(sb, byte).unwrap());
                // By structure: the two expression stores number new expressions in the
                // order they were built, and `a` builds fewer.
                let shown = |l: &DerivreLexer, s: StateId| -> Vec<(LexemeIdx, String)> {
                    let m = &l.members[s.as_usize()];
                    m.iter().map(|&(x, e)| (x, l.exprs.expr_to_string(e))).collect()
                };
                assert_eq!(shown(&a, na), shown(&b, nb), "byte {byte:#x}");
                assert_eq!(a.table[idx(&a, sa)].0 & MUST_END, b.table[idx(&b, sb)].0 & MUST_END);
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
        let known = c.flags.len();
        let room = c.copy_room();
        let ptrs = |l: &DerivreLexer| {
            (l.table.as_ptr(), l.flags.as_ptr(), l.members.data.as_ptr(), l.members.spans.as_ptr())
        };
        let before = ptrs(&c);
        // New states in the copy: number literals of growing length, each prefix a state.
        let mut learned = 0;
        'outer: for n in 0..64u32 {
            let mut t = c.start_state(&all).unwrap();
            for b in format!("{}.{}e+{}", 10u64.pow(n % 12) + n as u64, n, n).bytes() {
                t = c.advance(t, b).unwrap();
                learned = c.flags.len() - known;
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
}

#[cfg(test)]
mod witness_tests {
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

    /// `repeat_bounds` reads derivre's printer: `*`, `+`, `?` and `{min, max}` (bounded and
    /// not), the body never printed.
    #[test]
    fn repeat_bounds_are_read_off_the_printer() {
        let mut b = RegexBuilder::new();
        let rep = |b: &mut RegexBuilder, min, max| {
            b.mk(&RegexAst::Repeat(Box::new(RegexAst::Regex("[a-z]+x".into())), min, max)).unwrap()
        };
        let cases = [(0, u32::MAX), (1, u32::MAX), (0, 1), (2, 5), (3, u32::MAX), (0, 300)];
        let es: Vec<ExprRef> = cases.iter().map(|&(lo, hi)| rep(&mut b, lo, hi)).collect();
        let x = b.exprset();
        for (&e, &want) in es.iter().zip(&cases) {
            assert_eq!(repeat_bounds(x, e), Some(want), "{}", x.expr_to_string(e));
        }
        assert_eq!(repeat_bounds(x, ExprRef::EMPTY_STRING), None);
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
        let bounded =
            mk(RegexAst::And(vec![rx("[a-z]{0,3}"), not(RegexAst::Literal("ab".into()))]));
        let open_exclusion = mk(RegexAst::And(vec![rx("[a-z]+"), not(rx("a[a-z]*"))]));
        let nullable_body = mk(rx("(a?)*b"));
        let ws = mk(rx("[ \t]*"));
        let eps = mk(rx("(|)"));
        let x = b.exprset();
        let infinite = |e| surely_infinite(x, e, &mut FINITE_NODES.clone(), &mut HashMap::new());
        assert!(infinite(key), "{}", x.expr_to_string(key));
        assert!(infinite(inner), "{}", x.expr_to_string(inner));
        assert!(!infinite(bounded));
        assert!(!infinite(open_exclusion), "the exclusion is infinite");
        assert!(!infinite(nullable_body), "not known (the body is nullable)");
        assert_eq!(matches_nonempty(x, ws), Some(true));
        assert_eq!(matches_nonempty(x, eps), Some(false));
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
            text.bytes()
                .try_fold(start, |s, b| l.advance(s, b).ok().filter(|&t| t != StateId::DEAD))
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
        let e =
            b.mk(&RegexAst::Or(vec![ast_branch("cat", "dog"), ast_branch("dog", "cat")])).unwrap();
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
        let both = l.exprs.mk_and(&mut vec![counter, words]);
        let e = l.exprs.mk_concat(both, quote);
        // derivre orders an intersection's operands: the guess of the whole expression
        // follows the first, the counter here, whose shortest string is empty.
        assert_eq!(l.exprs.get_args(both)[0], counter);
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
            d = l.deriv.derivative(&mut l.exprs, d, b'a');
            d = l.deriv.derivative(&mut l.exprs, d, b' ');
        }
        let mut budget = WITNESS_NODES;
        assert_eq!(l.part_witness(d, &mut budget), None);
        assert!(!l.is_live(d, l.exprs.cost()).unwrap());
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
        l.exprs = b.into_exprset();
        l.deriv = DerivCache::new();
        l.relevance = RelevanceCache::new();
        l.next_byte = NextByteCache::new();
        l.finite.clear();
        l.complements.clear();
        l.witnesses.clear();
        l.gave_up.clear();
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
            (
                RegexSpec::And(vec![RegexSpec::regex("[0-9]+"), not(RegexSpec::regex("[0-9]*"))]),
                false,
            ),
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
        assert!(l2.is_live(e, l2.exprs.cost()).unwrap());
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
        assert!(infinite_complement(&l.exprs, e, &mut budget, &mut memo, &mut finite));
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
        let time = RegexSpec::Or(vec![
            RegexSpec::regex(r"[0-9]{2}:[0-9]{2}:[0-5][0-9](?:\.[0-9]+)?Z"),
            leap,
        ]);
        let pattern = RegexSpec::regex(r"(?s:.)*[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z(?s:.)*");
        let limits = LexerLimits { step_fuel: 300_000, ..LexerLimits::default() };
        let mut spec = LexerSpec::new();
        spec.add("x", RegexSpec::And(vec![pattern, time]), LexemeKind::Greedy);
        let spec = Arc::new(spec);
        let mut l = DerivreLexer::with_limits(spec.clone(), limits.clone()).unwrap();
        let e = l.lexeme_exprs[0];
        let mut memo = HashMap::new();
        let mut budget = HULL_NODES;
        let h = hull(&mut l.exprs, e, true, &mut memo, &mut budget);
        assert_ne!(h, e, "the nested intersection is replaced");
        let cost0 = l.exprs.cost();
        assert!(!l.is_live(e, cost0).unwrap());
        let mut full = DerivreLexer::with_limits(spec, limits).unwrap();
        let e = full.lexeme_exprs[0];
        let cost0 = full.exprs.cost();
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
        let mut free_body: Vec<RegexSpec> =
            pats.iter().map(|p| not(RegexSpec::literal(*p))).collect();
        free_body.push(body.clone());
        let free = RegexSpec::Concat(vec![q(), RegexSpec::And(free_body), q()]);
        spec.add("free", RegexSpec::And(vec![free, not(named_or())]), LexemeKind::Greedy);
        let mut l = DerivreLexer::new(&spec).unwrap();
        let mut s = l.start_state(&spec.all()).unwrap();
        s = l.advance(s, b'"').unwrap();
        let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{0,12}"#);
        assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
        let r = l.reduced.get(&s).copied().filter(|&r| r != StateId::DEAD).expect("reduced");
        assert_eq!(l.members.get(r.as_usize()).unwrap().len(), 1, "only the free key is left");

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
            l.exprs.expr_to_string(l.members.get(r.as_usize()).unwrap()[0].1).contains('¬'),
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
        let r = l.reduced.get(&s).copied().expect("the rule was tried");
        assert_eq!(l.members[r.as_usize()].len(), 1, "one member for the pair");

        // Different bodies (`[a-z]` keys beside free ones): no pair, the members stay.
        let mut b = RegexBuilder::new();
        let narrow = b.mk(&RegexAst::Regex("[a-z]*".into())).unwrap();
        let free = b.mk(&RegexAst::Regex("[^\"]*".into())).unwrap();
        let p = b.mk(&RegexAst::Regex(".*ab.*".into())).unwrap();
        let mut l = lexer_over(b);
        let not_p = l.exprs.mk_not(p);
        let with_p = l.exprs.mk_and(&mut vec![narrow, p]);
        let without_p = l.exprs.mk_and(&mut vec![free, not_p]);
        let mut members = vec![(LexemeIdx::new(0), with_p), (LexemeIdx::new(1), without_p)];
        merge_complements(&mut l.exprs, &mut members);
        assert_eq!(members.len(), 2);
        // The same body: one member, the body.
        let without_p = l.exprs.mk_and(&mut vec![narrow, not_p]);
        let mut members = vec![(LexemeIdx::new(0), with_p), (LexemeIdx::new(1), without_p)];
        merge_complements(&mut l.exprs, &mut members);
        assert_eq!(members, vec![(LexemeIdx::new(0), narrow)]);
    }

    #[test]
    fn an_unanchored_pattern_inside_a_body_is_contained_from_its_head() {
        // A key under an unanchored `patternProperties` pattern: the body `S*` intersected
        // with `.*(Red|Blue).*`, then the closing quote.
        let key = RegexSpec::Concat(vec![
            RegexSpec::And(vec![
                RegexSpec::regex(r#"[^"\\]*"#),
                RegexSpec::regex(".*(?:Red|Blue).*"),
            ]),
            RegexSpec::literal("\""),
        ]);
        let mut l = lexer(key);
        let s = l.start_state(&l.spec().all()).unwrap();
        let e = l.members[s.as_usize()][0].1;
        assert!(star_head(&l.exprs, e).is_none(), "not a plain B* R");
        assert!(l.star_head_in_body(e).is_some());
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
        let e = l.members[s.as_usize()][0].1;
        assert!(l.star_head_in_body(e).is_none());
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
        assert!(l.reduced.get(&s).is_some_and(|&r| r != StateId::DEAD));
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
        assert!(l.reduced.get(&s).is_some_and(|&r| r != StateId::DEAD), "the rule was tried");
    }

    /// An unanchored pattern of many words (`patternProperties`: any key holding one) holds
    /// every string as a prefix; the state's walk tells every partial match of every word
    /// apart (and gives up), the walk from its `B*` head proves it in one step. A head whose
    /// rest can never match does not count, and a bounded head is not a `B*`.
    #[test]
    fn a_star_head_proves_an_unanchored_pattern_contained() {
        let words: Vec<String> =
            (0..30).map(|i| format!("w{}x{i}", (b'a' + i % 26) as char)).collect();
        let pattern = format!(r#""[^"\\]*(?:{})[^"\\]*""#, words.join("|"));
        let mut l = lexer(RegexSpec::regex(&pattern));
        let mut s = l.start_state(&l.spec().all()).unwrap();
        s = l.advance(s, b'"').unwrap();
        let query = RegexSpec::regex(r#"[^"\\\x00-\x1F]{1,10}"#);
        assert!(star_head(&l.exprs, l.members[s.as_usize()][0].1).is_some());
        assert_eq!(l.check_prefixes(s, &query), Containment::Contained);
        // After a partial match the state is a union holding the `B* R` alternative.
        for &b in b"wax" {
            s = l.advance(s, b).unwrap();
        }
        assert_eq!(l.check_prefixes(s, &query), Containment::Contained);

        // `[a-z]{0,3}x`: bounded, no `B*` head; strings of four letters are not prefixes.
        let mut l = lexer(RegexSpec::regex("[a-z]{0,3}x"));
        let s = l.start_state(&l.spec().all()).unwrap();
        assert!(star_head(&l.exprs, l.members[s.as_usize()][0].1).is_none());
        assert_ne!(l.check_prefixes(s, &RegexSpec::regex("[a-z]{1,10}")), Containment::Contained);
    }
}
