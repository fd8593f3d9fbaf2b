//! Counter twins: a lexer state whose members count a bounded repeat `B{m,n}` (a JSON
//! string's `maxLength`, a Lark `/[a-z ]{0,10000}/`) is a new state at every character, so
//! each of its masks would walk the trie afresh. No token is longer than the vocabulary's
//! longest, `H` bytes, so a token's walk starts at most `I = H` iterations of a repeat (each
//! iteration of a body that cannot be empty reads at least one byte; of a body whose
//! strings are all at least `u` bytes long, at least `u`, so `I = (H - 1) / u + 1`: all but
//! the last are whole; `exprs::min_len`, a word `\S+\s+` counts 2), and at most as many as
//! the vocabulary's tokens of at most `H` bytes start (`IterDfa::iterations_started` over
//! each token, `slicer::iteration_limits`, given by the matcher: no Llama 3 token of 128
//! bytes holds 64 words). Hence, for every token of at most `H`
//! bytes (and one byte after it), a member with `B{m,n}` behaves exactly as the same member
//! with `B{min(m, I + 1), ∞}` when `n > I` (the bound is never reached within a token) and
//! with `B{I + 1, n}` when `m > I + 1` (the minimum is never met within one):
//! the same strings are live, the same are accepted, by the same lexemes. The mask of a
//! state is a function of what its members do on the tokens' bytes, so the state with every
//! such repeat relaxed (its *twin*, [`DerivreLexer::mask_twin`]) has the same mask. The twins
//! of all the states a long bounded string passes through are one state (with `n` relaxed
//! to `∞` they are the unbounded string's state, whose walks and slice proofs are kept).
//! Nearer the bound than `H`, the same holds for the tokens of at most `h < H` bytes with
//! `h` in place of `H` ([`DerivreLexer::mask_twin_at`]): the matcher takes those tokens'
//! part of the mask from that twin and walks only the longer tokens from the state itself
//! (`slicer::LengthSplit`).
//!
//! Repeats are relaxed through unions and concatenations, never inside a repeat's body or
//! a complement. Under an intersection the other operands may need a completion longer
//! than the bound leaves room for (`B{0,5} & ~B{0,5}` is dead, its relaxation is not), so
//! there only a maximum is relaxed (the minimum kept: `.{1,5000}`, a JSON string with
//! `minLength: 1`, has twins), only one that leaves room (`n >= I + 2`, below; the others
//! kept exact), and the twin is kept only when every state
//! it reaches (at most [`CLOSURE_STATES`]) completes within `c` bytes and the bound leaves
//! room for them: a token and a byte start at most `I + 1` iterations, `c` bytes at most
//! `(c - 1) / u + 1`, and one of the `n` is left (`c <= (n - 2 - I) * u`; `n > h + c + 1`
//! for `u` 1 without the vocabulary's limits). Then any token of at most `h` bytes the twin
//! keeps alive, accepts or extends has a completion inside the bound, so the real state
//! agrees
//! (a structural tag's `any_text` with `max_chars` before its end: text `&` no end inside).
//!
//! derivre (0.3.13) keeps a repeat's bounds out of its API but hash-conses its nodes: the
//! node of `B{m,n}` is the one `mk_repeat(B, m, n)` returns. The bounds written in a
//! lexeme's spec (its `Repeat` nodes and the `{m,n}` of its regexes) are tried against the
//! repeat nodes of its expression ("seeds"); a derivative of `B{m,n}` holds `B{m-1,n-1}`
//! (derivre's derivative of a repeat), so the nodes of a seed after `k` iterations are
//! registered ahead of the states that reach them. A repeat node not found is left as it
//! is (the twin is then the state itself: slower, never wrong).
//!
//! Tests: `llguidance/tests/soundness.rs` (masks with twins equal the plain computation's,
//! which has none), `counter_twins_tests` below.

use super::*;

/// Nodes a relaxation reads at most per member (a member beyond it keeps its repeats).
const RELAX_NODES: u32 = 256;
/// Nodes a seed search reads at most per lexeme.
const SEED_NODES: usize = 20_000;
/// Distinct bounds tried per lexeme at most.
const MAX_CANDIDATES: usize = 64;
/// States a twin reached under an intersection may reach at most (else no twin).
const CLOSURE_STATES: usize = 64;
/// Iterations of a seed registered when it is found (its whole range, up to this many),
/// besides twice the horizon ahead of each position asked: registered a token's worth at a
/// time, the new repeat nodes grew derivre's expression store in the middle of a long value
/// (5-32 µs masks at its doublings: a bounded string's first-decode p99; reserving the
/// node map did not help); all at once, it grows at the first mask. Up to 4,096 cost
/// +0.3 % of the mask instructions of MaskBench's first masks, up to 1,024 +0.14 %.
const SEED_AHEAD: u32 = 1024;
/// States of a body's automaton at most (else its iterations are bounded by its length alone).
const ITER_DFA_STATES: usize = crate::runs::ITER_STATES;
/// The smallest horizon twins are asked for (a lexeme whose bounds no twin at it relaxes
/// is not searched for seeds).
const MIN_HORIZON: u32 = 8;

/// A bounded repeat `body{min,max}` found in a lexeme's expression.
#[derive(Clone, Debug)]
struct Seed {
    body: ExprRef,
    min: u32,
    /// `u32::MAX`: unbounded.
    max: u32,
    /// Bytes an iteration reads at least (1 or more: [`exprs::min_len`] of the body).
    unit: u32,
    /// The body's automaton ([`DerivreLexer::iter_dfa`], built when the seed is found), and
    /// the vocabulary's iteration limits for it once the matcher gives them:
    /// `limits[h]`, the most iterations a token of at most `h` bytes starts
    /// ([`DerivreLexer::set_iteration_limits`]).
    iter_dfa: Option<Arc<IterDfa>>,
    limits: Option<Arc<[u32]>>,
    /// The nodes after `0..=registered` iterations are in [`Counters::nodes`].
    registered: u32,
}

impl Seed {
    /// The most iterations a token of at most `h` bytes starts: by the body's least length,
    /// and by the vocabulary's limits where known.
    fn iterations(&self, h: u32) -> u32 {
        let by_len = iterations(h, self.unit);
        match &self.limits {
            Some(l) if !l.is_empty() => by_len.min(l[(h as usize).min(l.len() - 1)]),
            _ => by_len,
        }
    }

    /// The bounds after `k` iterations (`k <= max`).
    fn at(&self, k: u32) -> (u32, u32) {
        let max = if self.max == u32::MAX { u32::MAX } else { self.max - k };
        (self.min.saturating_sub(k), max)
    }
}

/// What the lexer knows of its bounded repeats, and the twin of each state asked about.
#[derive(Clone, Default)]
pub(super) struct Counters {
    /// The longest token in bytes; 0: no twins.
    pub(super) horizon: u32,
    seeds: Vec<Seed>,
    /// Each known repeat node: (seed, iterations).
    nodes: HashMap<ExprRef, (u32, u32)>,
    /// Per lexeme: its seeds were searched for (`Some`), and whether it has any that a
    /// twin may relax.
    searched: HashMap<LexemeIdx, bool>,
    /// The lexemes whose minimums were searched for ([`DerivreLexer::search_minimums`]).
    minimums: HashSet<LexemeIdx>,
    /// The twin of each state asked, by horizon.
    twins: HashMap<(StateId, u32), StateId>,
    /// [`DerivreLexer::completion_bound`] of each twin asked.
    completions: HashMap<StateId, Option<u32>>,
    /// The run twin of each state asked ([`DerivreLexer::run_bound`]).
    pub(super) runs: HashMap<StateId, Option<RunBound>>,
    /// The character automaton of each repeat body asked.
    pub(super) run_dfas: HashMap<ExprRef, Option<Arc<RunDfa>>>,
    /// Whether a body's first bytes and a rest's are disjoint, by (body, rest).
    pub(super) run_disjoint: HashMap<(ExprRef, ExprRef), bool>,
    /// The automata built and not yet taken ([`DerivreLexer::take_new_run_dfas`]).
    pub(super) new_run_dfas: Vec<Arc<RunDfa>>,
    /// The bodies' automata built and not yet taken ([`DerivreLexer::take_new_iter_dfas`]).
    new_iter_dfas: Vec<Arc<IterDfa>>,
}

impl Counters {
    /// Whether any bounded repeat was found (in the lexemes searched so far).
    pub(super) fn has_seeds(&self) -> bool {
        !self.seeds.is_empty()
    }

    pub(super) fn num_bytes(&self) -> usize {
        self.seeds.capacity() * std::mem::size_of::<Seed>()
            + self.nodes.capacity() * (std::mem::size_of::<(ExprRef, (u32, u32))>() + 1)
            + self.searched.capacity() * (std::mem::size_of::<(LexemeIdx, bool)>() + 1)
            + self.minimums.capacity() * (std::mem::size_of::<LexemeIdx>() + 1)
            + self.twins.capacity() * (std::mem::size_of::<((StateId, u32), StateId)>() + 1)
            + self.completions.capacity() * (std::mem::size_of::<(StateId, Option<u32>)>() + 1)
            + self.runs.capacity() * (std::mem::size_of::<(StateId, Option<RunBound>)>() + 1)
            + self.run_dfas.values().flatten().map(|d| d.len() * 257).sum::<usize>()
            + self.run_dfas.capacity() * (std::mem::size_of::<(ExprRef, Option<Arc<RunDfa>>)>() + 1)
            + self.run_disjoint.capacity() * (std::mem::size_of::<((ExprRef, ExprRef), bool)>() + 1)
    }
}

/// Iterations of a repeat whose body reads at least `unit` bytes that `h` bytes start at
/// most: all but the last are whole (`h` itself for `unit` 1).
fn iterations(h: u32, unit: u32) -> u32 {
    if h == 0 {
        0
    } else {
        (h - 1) / unit.max(1) + 1
    }
}

/// Whether bounds `(min, max)` are relaxed under a horizon of `h` iterations.
fn relaxes((min, max): (u32, u32), h: u32) -> bool {
    (max != u32::MAX && max > h) || min > h + 1
}

/// The bounds `(min, max)` relaxed under a horizon of `h` iterations.
fn relaxed((min, max): (u32, u32), h: u32) -> (u32, u32) {
    (min.min(h + 1), if max > h { u32::MAX } else { max })
}

/// The `{m,n}`, `{m,}` and `{m}` bounds written in a regex's text (escaped braces too: a
/// candidate that is no repeat's bounds is tried and matches nothing), and those of the
/// repeats its parse merged from nested ones.
fn regex_bounds(rx: &str, out: &mut Vec<(u32, u32)>) {
    let b = rx.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' {
            i += 1;
            continue;
        }
        let num = |j: &mut usize| -> Option<u32> {
            let start = *j;
            while *j < b.len() && b[*j].is_ascii_digit() {
                *j += 1;
            }
            rx.get(start..*j).and_then(|s| s.parse().ok())
        };
        let mut j = i + 1;
        let Some(min) = num(&mut j) else {
            i += 1;
            continue;
        };
        let bounds = match b.get(j) {
            Some(b'}') => Some((min, min)),
            Some(b',') => {
                j += 1;
                match (num(&mut j), b.get(j)) {
                    (Some(max), Some(b'}')) => Some((min, max)),
                    (None, Some(b'}')) => Some((min, u32::MAX)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((lo, hi)) = bounds.filter(|(lo, hi)| lo <= hi) {
            out.push((lo, hi));
        }
        i = j.max(i + 1);
    }
    // Nested repeats the parse merged into one (`((a{1,50}){1,50})` is `a{1,2500}`).
    out.extend_from_slice(&crate::parsed::parsed(rx).merged);
}

/// The bounds written anywhere in a lexeme's spec.
fn spec_bounds(spec: &RegexSpec, out: &mut Vec<(u32, u32)>) {
    match spec {
        RegexSpec::Repeat { min, max, .. } => out.push((*min, max.unwrap_or(u32::MAX))),
        RegexSpec::Regex(rx) => regex_bounds(rx, out),
        _ => {}
    }
    for c in spec.children() {
        spec_bounds(c, out);
    }
}

impl DerivreLexer {
    /// Sets the longest token, in bytes, of the vocabulary masks are computed over (0, the
    /// default, turns twins off: [`DerivreLexer::mask_twin`] answers the state itself).
    pub fn set_token_horizon(&mut self, bytes: usize) {
        let h = u32::try_from(bytes).unwrap_or(u32::MAX / 2).min(u32::MAX / 2);
        if h != self.cache.counters.horizon {
            self.cache.counters.horizon = h;
            self.cache.counters.twins.clear();
            self.cache.counters.runs.clear();
        }
    }

    /// A state with the same mask as `state` over tokens of at most the horizon's bytes,
    /// where bounded repeats with more room than that are relaxed (see the module doc);
    /// `state` itself when nothing relaxes, for a start state, and with no horizon set.
    pub fn mask_twin(&mut self, state: StateId) -> Result<StateId, Error> {
        self.mask_twin_at(state, self.cache.counters.horizon)
    }

    /// [`DerivreLexer::mask_twin`] for the tokens of at most `h` bytes (`h` at most the
    /// horizon): the same allowed tokens among those, whatever the longer ones do. Nearer a
    /// bound than the horizon, the twin at a smaller `h` still shares its mask with the
    /// positions further back; the longer tokens are then walked from `state` itself.
    pub fn mask_twin_at(&mut self, state: StateId, h: u32) -> Result<StateId, Error> {
        let c = &self.cache.counters;
        if c.horizon == 0 || h == 0 || h > c.horizon || state == StateId::DEAD {
            return Ok(state);
        }
        if let Some(&t) = c.twins.get(&(state, h)) {
            return Ok(t);
        }
        let twin = self.make_twin(state, h)?;
        self.cache.counters.twins.insert((state, h), twin);
        Ok(twin)
    }

    fn make_twin(&mut self, state: StateId, h: u32) -> Result<StateId, Error> {
        let Some(members) = self.cache.members.get(state.as_usize()) else {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        };
        if self.cache.starts[state.as_usize()] {
            return Ok(state);
        }
        let mut members = members.to_vec();
        let mut changed = false;
        let mut room = None;
        for m in members.iter_mut() {
            if !self.search_seeds(m.0) {
                continue;
            }
            let mut budget = RELAX_NODES;
            let r = self.relax(m.1, h, &mut budget, false, &mut room);
            if r != m.1 {
                m.1 = r;
                changed = true;
            }
        }
        if !changed {
            return Ok(state);
        }
        let single = members.len() == 1;
        let twin = self.intern(members)?;
        // A bound relaxed under an intersection: the other operands may need a long
        // completion that only the relaxed bound leaves room for. Sound when every state the
        // twin reaches completes within `c` bytes and `c` is at most `room` (the bytes whose
        // iterations still fit after a token and a byte: see `relax`): any token of at most
        // `h` bytes the twin keeps alive (or accepts, or extends) has a completion within
        // the bound.
        if let Some(least) = room {
            let bound = match self.cache.counters.completions.get(&twin) {
                Some(&b) => b,
                None => {
                    let b = self.completion_bound(twin);
                    self.cache.counters.completions.insert(twin, b);
                    b
                }
            };
            match bound {
                Some(c) if i64::from(c) <= least => {}
                _ => return Ok(state),
            }
        }
        if single {
            self.prepare_run(state)?;
        }
        Ok(twin)
    }

    /// Finds the seeds of lexeme `lx` (once); whether it has any a twin may relax.
    pub(super) fn search_seeds(&mut self, lx: LexemeIdx) -> bool {
        if let Some(&any) = self.cache.counters.searched.get(&lx) {
            return any;
        }
        let bounds = self.lexeme_bounds(lx, |_| true);
        let any = bounds.iter().any(|&b| relaxes(b, MIN_HORIZON));
        if any {
            self.find_seeds(self.lexeme_exprs[lx.as_usize()], &bounds);
        }
        self.cache.counters.searched.insert(lx, any);
        any
    }

    /// Finds lexeme `lx`'s repeats `B{m,}` with `m >= 2` (once), whose bounds
    /// [`DerivreLexer::repeat_bounds`] then tells, also those no twin relaxes (`m` within
    /// the horizon): a minimum beside an unanchored pattern is read as `B*` by a containment
    /// proof (`containment::without_minimum`).
    pub(super) fn search_minimums(&mut self, lx: LexemeIdx) {
        if !self.cache.counters.minimums.insert(lx) {
            return;
        }
        let bounds = self.lexeme_bounds(lx, |(min, max)| max == u32::MAX && min >= 2);
        if !bounds.is_empty() {
            self.find_seeds(self.lexeme_exprs[lx.as_usize()], &bounds);
        }
    }

    /// The distinct bounds written in lexeme `lx`'s spec that `keep` accepts, at most
    /// [`MAX_CANDIDATES`].
    fn lexeme_bounds(&self, lx: LexemeIdx, keep: impl Fn((u32, u32)) -> bool) -> Vec<(u32, u32)> {
        let mut bounds = Vec::new();
        if let Some(l) = self.spec.lexemes.get(lx.as_usize()) {
            spec_bounds(&l.regex, &mut bounds);
        }
        bounds.retain(|&b| keep(b));
        bounds.sort_unstable();
        bounds.dedup();
        bounds.truncate(MAX_CANDIDATES);
        bounds
    }

    /// Registers every repeat node under `root` whose bounds are among `bounds`.
    fn find_seeds(&mut self, root: ExprRef, bounds: &[(u32, u32)]) {
        let mut seen: HashSet<ExprRef> = HashSet::new();
        let mut todo = vec![root];
        while let Some(e) = todo.pop() {
            if seen.len() >= SEED_NODES || !seen.insert(e) {
                continue;
            }
            let x = &mut self.cache.exprs;
            todo.extend_from_slice(x.get_args(e));
            if x.get_tag(e) as u8 != tag::REPEAT || self.cache.counters.nodes.contains_key(&e) {
                continue;
            }
            let body = x.get_args(e)[0];
            let found = bounds.iter().find(|&&(min, max)| {
                !(max == u32::MAX && min <= 1) && x.mk_repeat(body, min, max) == e
            });
            if let Some(&(min, max)) = found {
                let mut budget = RELAX_NODES;
                let unit = exprs::min_len(x, body, &mut budget).max(1);
                // Built where the value starts, not at a mask deep into it (as the run
                // tables).
                let iter_dfa = self.iter_dfa(body, unit, (min, max));
                let c = &mut self.cache.counters;
                let seed = c.seeds.len() as u32;
                c.seeds.push(Seed { body, min, max, unit, iter_dfa, limits: None, registered: 0 });
                c.nodes.insert(e, (seed, 0));
                self.register_ahead(seed, 0);
                self.register_to(seed, SEED_AHEAD);
            }
        }
    }

    /// The bounds of repeat node `e`, if known, registering the nodes of the iterations
    /// up to twice the horizon ahead of it.
    pub(super) fn repeat_bounds(&mut self, e: ExprRef) -> Option<(u32, u32)> {
        Some(self.repeat_seed(e)?.0)
    }

    /// [`DerivreLexer::repeat_bounds`], with the most iterations a token of at most `h`
    /// bytes starts and the least bytes an iteration reads.
    fn repeat_at(&mut self, e: ExprRef, h: u32) -> Option<((u32, u32), u32, u32)> {
        let (b, seed) = self.repeat_seed(e)?;
        let s = &self.cache.counters.seeds[seed as usize];
        Some((b, s.iterations(h), s.unit))
    }

    fn repeat_seed(&mut self, e: ExprRef) -> Option<((u32, u32), u32)> {
        let (seed, k) = *self.cache.counters.nodes.get(&e)?;
        self.register_ahead(seed, k);
        Some((self.cache.counters.seeds[seed as usize].at(k), seed))
    }

    /// The automata of the bounded repeats' bodies found since the last call, for the
    /// vocabulary's iteration limits ([`DerivreLexer::set_iteration_limits`]).
    pub fn take_new_iter_dfas(&mut self) -> Vec<Arc<IterDfa>> {
        std::mem::take(&mut self.cache.counters.new_iter_dfas)
    }

    /// Gives the repeats whose body has automaton `dfa` the vocabulary's limits: `limits[h]`
    /// the most iterations a token of at most `h` bytes starts (`slicer::iteration_limits`),
    /// for `h` up to the horizon (a larger `h` reads the last). Twins made after this relax
    /// by them where they are below the body's length bound (a word `\S+\s+` is at least 2
    /// bytes, but no Llama 3 token of 128 bytes holds 64 words). Limits that are not the
    /// vocabulary's make wrong masks: the soundness oracle checks them.
    pub fn set_iteration_limits(&mut self, dfa: &IterDfa, limits: Arc<[u32]>) {
        for s in self.cache.counters.seeds.iter_mut() {
            if s.iter_dfa.as_deref() == Some(dfa) {
                s.limits = Some(limits.clone());
            }
        }
    }

    /// The automaton of a repeat's body ([`IterDfa`], at most [`ITER_DFA_STATES`] states),
    /// queued for the vocabulary's limits: for a body of at least 2 bytes (a character's
    /// tokens of `h` bytes start `h`) and a bound a twin at [`MIN_HORIZON`] relaxes (an
    /// email's `(\.octet){3}` would cost a vocabulary scan for nothing).
    fn iter_dfa(&mut self, body: ExprRef, unit: u32, bounds: (u32, u32)) -> Option<Arc<IterDfa>> {
        if unit < 2 || !relaxes(bounds, MIN_HORIZON) {
            return None;
        }
        let (next, ends) = self.body_automaton(body, ITER_DFA_STATES, false)?;
        let d = Arc::new(IterDfa::from_parts(next, ends));
        self.cache.counters.new_iter_dfas.push(d.clone());
        Some(d)
    }

    /// Registers the nodes of `seed` after up to `k` + twice the horizon iterations (a
    /// state reached by one token from the one at `k` finds its node known).
    fn register_ahead(&mut self, seed: u32, k: u32) {
        let want = k.saturating_add(2 * self.cache.counters.horizon + 2);
        self.register_to(seed, want);
    }

    /// Registers the nodes of `seed` after up to `want` iterations.
    fn register_to(&mut self, seed: u32, want: u32) {
        let c = &mut self.cache.counters;
        let s = c.seeds[seed as usize].clone();
        if s.registered >= want {
            return;
        }
        // Up to `want`, or done for good (`u32::MAX`) where the repeat runs out.
        let mut registered = want;
        for j in s.registered + 1..=want {
            if s.max != u32::MAX && j > s.max {
                registered = u32::MAX;
                break;
            }
            let (min, max) = s.at(j);
            let node = self.cache.exprs.mk_repeat(s.body, min, max);
            // derivre simplifies `B{1,1}` to `B`: when `B` is itself a repeat, that node is
            // another repeat's (of `B`'s body), whose bounds these are not.
            let x = &self.cache.exprs;
            if x.get_tag(node) as u8 != tag::REPEAT || x.get_args(node)[0] != s.body {
                registered = u32::MAX;
                break;
            }
            c.nodes.entry(node).or_insert((seed, j));
            if max == u32::MAX && min <= 1 {
                registered = u32::MAX;
                break;
            }
        }
        c.seeds[seed as usize].registered = registered;
    }

    /// `e` with its relaxable repeats relaxed (unions and concatenations; see the module
    /// doc); `e` itself past `budget` nodes. Under an intersection (`and` set) only a
    /// maximum is relaxed, its minimum kept (and at most what a token starts, so that a
    /// long minimum makes no twin per position); `room` gets the least room of those,
    /// which [`DerivreLexer::make_twin`] then checks against the twin's completions.
    fn relax(
        &mut self,
        e: ExprRef,
        h: u32,
        budget: &mut u32,
        and: bool,
        room: &mut Option<i64>,
    ) -> ExprRef {
        if *budget == 0 {
            return e;
        }
        *budget -= 1;
        match self.cache.exprs.get_tag(e) as u8 {
            tag::REPEAT => match self.repeat_at(e, h) {
                // Only a maximum that leaves room (`b.1 >= it + 2`): with none, no twin could
                // pass the room check, and relaxing would only cost the completion search
                // that rejects it (`format: uri` and a `pattern`: ~0.7 ms a string start).
                Some((b, it, unit)) if and && b.0 <= it + 1 && b.1 != u32::MAX && b.1 > it + 1 => {
                    // A token and one byte more start at most `it + 1` iterations; a
                    // completion of `c` bytes at most `(c - 1) / unit + 1` more, which must
                    // leave one of the `b.1` (as the room check always has): `c` at most
                    // `(b.1 - 2 - it) * unit`.
                    let slack = (i64::from(b.1) - 2 - i64::from(it)) * i64::from(unit);
                    *room = Some(room.map_or(slack, |r| r.min(slack)));
                    let body = self.cache.exprs.get_args(e)[0];
                    self.cache.exprs.mk_repeat(body, b.0, u32::MAX)
                }
                Some((b, it, _)) if !and && relaxes(b, it) => {
                    let (min, max) = relaxed(b, it);
                    let body = self.cache.exprs.get_args(e)[0];
                    self.cache.exprs.mk_repeat(body, min, max)
                }
                _ => e,
            },
            // Bytes then an expression: `" " B{0,499} R` inside a word of a word-count
            // pattern (not walked, no state inside a word got a twin: each mask walked the
            // whole trie, ~1.5 ms).
            tag::BYTE_CONCAT => {
                let tail = self.cache.exprs.get_args(e)[0];
                let rt = self.relax(tail, h, budget, and, room);
                if rt == tail {
                    return e;
                }
                match self.concat_bytes(e, tail) {
                    Some(bytes) => self.cache.exprs.mk_byte_concat(&bytes, rt),
                    None => e,
                }
            }
            tag::CONCAT => {
                let [a, b] = [self.cache.exprs.get_args(e)[0], self.cache.exprs.get_args(e)[1]];
                let ra = self.relax(a, h, budget, and, room);
                let rb = self.relax(b, h, budget, and, room);
                if (ra, rb) == (a, b) {
                    e
                } else {
                    self.cache.exprs.mk_concat(ra, rb)
                }
            }
            t @ (tag::OR | tag::AND) => {
                let args = self.cache.exprs.get_args(e).to_vec();
                let under = and || t == tag::AND;
                let mut relaxed: Vec<ExprRef> =
                    args.iter().map(|&a| self.relax(a, h, budget, under, room)).collect();
                if relaxed == args {
                    e
                } else if t == tag::OR {
                    mk_union(&mut self.cache.exprs, &relaxed)
                } else {
                    self.cache.exprs.mk_and(&mut relaxed)
                }
            }
            _ => e,
        }
    }

    /// The bytes of `e`, a byte concatenation before `tail` (derivre does not hand them out):
    /// read one at a time, each the one byte `e` takes, then stepped over by a derivative;
    /// `None` if the walk does not come to `tail` (or past 1,024 bytes).
    fn concat_bytes(&mut self, e: ExprRef, tail: ExprRef) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        let mut x = e;
        while x != tail {
            if bytes.len() >= 1024 || self.cache.exprs.get_tag(x) as u8 != tag::BYTE_CONCAT {
                return None;
            }
            let b = exprs::first_byte(&self.cache.exprs, &mut self.cache.next_byte, x)?;
            bytes.push(b);
            x = self.cache.deriv.derivative(&mut self.cache.exprs, x, b);
        }
        Some(bytes)
    }

    /// The longest of the shortest completions (bytes to an accepting state) over the
    /// states reachable from `twin`, when they are at most [`CLOSURE_STATES`]; `None`
    /// otherwise (or on a lexer limit).
    fn completion_bound(&mut self, twin: StateId) -> Option<u32> {
        let mut reps = Vec::new();
        let mut seen_class = [false; 256];
        for b in 0..=255u8 {
            let c = self.class_of[b as usize] as usize;
            if !seen_class[c] {
                seen_class[c] = true;
                reps.push(b);
            }
        }
        let mut index: HashMap<StateId, usize> = HashMap::new();
        let mut states = vec![twin];
        let mut edges: Vec<Vec<usize>> = Vec::new();
        index.insert(twin, 0);
        let mut i = 0;
        while i < states.len() {
            let mut out = Vec::new();
            for &b in &reps {
                let n = self.advance(states[i], b).ok()?;
                if n == StateId::DEAD {
                    continue;
                }
                let j = match index.get(&n) {
                    Some(&j) => j,
                    None => {
                        if states.len() >= CLOSURE_STATES {
                            return None;
                        }
                        index.insert(n, states.len());
                        states.push(n);
                        states.len() - 1
                    }
                };
                out.push(j);
            }
            edges.push(out);
            i += 1;
        }
        // Distances to acceptance, by rounds of relaxation over the small graph.
        let mut dist: Vec<Option<u32>> = states
            .iter()
            .map(|&s| self.cache.flags[s.as_usize()].is_accepting().then_some(0))
            .collect();
        for _ in 0..states.len() {
            let mut changed = false;
            for (k, out) in edges.iter().enumerate() {
                let best = out.iter().filter_map(|&j| dist[j]).min().map(|d| d + 1);
                if let Some(d) = best.filter(|&d| dist[k].is_none_or(|x| d < x)) {
                    dist[k] = Some(d);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        dist.into_iter().try_fold(0u32, |m, d| d.map(|d| m.max(d)))
    }
}

#[cfg(test)]
mod counter_twins_tests {
    use super::*;

    #[test]
    fn bounds_are_read_off_regex_text() {
        let mut out = Vec::new();
        regex_bounds(r"[a-z]{0,10000}x{3}\d{2,}\{a}{7,2}", &mut out);
        assert_eq!(out, vec![(0, 10000), (3, 3), (2, u32::MAX)]);
    }
}
