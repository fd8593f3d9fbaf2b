//! Containment: does every string of a query `Q` (a slice's `C{m,n}`) keep a lexer state
//! alive ([`Lexer::check_prefixes`])? `Contained` lets the slicer add a whole slice's mask
//! without walking its trie, so `Contained` is answered only when it is proved; anything
//! else is `Unknown` and the trie walk decides. Let `E` be the union of the state's member
//! expressions. Every rule below answers `Contained` only when each string of `Q` is a
//! prefix of some string of `E` that the lexer can reach without a lexeme ending inside it.
//!
//! The rules, in the order [`DerivreLexer::containment`] tries them:
//! 1. **First-byte probe.** A few representative first bytes of `C`; one leading to the dead
//!    state disproves it (a query holding longer strings holds their one-byte prefixes).
//! 2. **Remembered walks.** A class walk (one representative byte per byte class of `C`)
//!    from this state that already reached depth `n`, or came back to a state set it had
//!    seen (then every length is live), answers.
//! 3. **Finite exclusions.** A member `X & ~F` with `F` a finite language has the same
//!    infinitely extendable prefixes as `X` (each has infinitely many completions in `X`,
//!    `F` removes finitely many): if the walk of the state read with `X` for such members
//!    finds every string of `C*` live at any length, `Q ⊆ C*` is contained.
//! 4. **One step back.** A class walk of one character that returns to the same state set
//!    proves every string of `C*` live.
//! 5. **Star head.** A member `B* R` with `R` non-empty holds every string of `B*` as a
//!    prefix: if the class walk from the state of `B*` returns to it after one character,
//!    `C ⊆ B` and `Q` is contained (also for the state without its finite exclusions).
//!    Each alternative `B* R` of a union member is tried (an unanchored pattern's partial
//!    matches come first), and inside a body `(S{m,} & B* R) T` the minimum counts as `S*`
//!    (a run of class characters never ends a minimum).
//! 6. **Quick symbolic check.** `Q & ~prefixes(E)` empty, by derivre's relevance check on a
//!    small fuel budget (`LexerLimits::quick_containment_fuel`; 0 skips the rule).
//! 7. **Full class walk** to depth `n` (for `n = ∞`, contained only through a repeated
//!    state set within the walk depth), creating a bounded number of new states.
//! 8. **Full symbolic check** on the lexer's containment fuel, only when the walk gave up
//!    on its budget.
//!
//! Where a lazy lexeme is possible (it could end inside a string of `Q`), only the walks
//! answer (they stop where a lazy lexeme matches); rules 3, 5, 6 and 8 are skipped.
//!
//! Tests: `lexer/tests/containment_oracle.rs` checks every `Contained` answer against brute
//! force over a small alphabet and requires each of rules 2-8 to have answered (rule 8 with
//! rule 6 off); `witness_tests::finite_exclusions_leave_a_free_body_contained`,
//! `a_star_head_proves_an_unanchored_pattern_contained`,
//! `an_unanchored_pattern_inside_a_body_is_contained_from_its_head`,
//! `a_pattern_key_and_its_complement_walk_as_one_free_key`; across crates the property
//! tests in `llguidance/tests/slicer.rs` (sliced masks equal unsliced masks).

use super::*;

impl DerivreLexer {
    /// [`Lexer::check_prefixes`]; `cheap`: [`Lexer::check_prefixes_cheap`] (the walk creates
    /// no state, no full symbolic check).
    /// Counts a `Contained` answer for rule `rule` (numbered as in the module doc) and
    /// passes the answer on.
    fn answered(&mut self, answer: Containment, rule: usize) -> Containment {
        if answer == Containment::Contained {
            self.cache.rule_hits[rule] += 1;
        }
        answer
    }

    /// A query `C{m,n}` as (index of its reduced class in `walk_classes`, `n`) with its
    /// parse; `None` for other shapes. Cached by query.
    fn walk_query(&mut self, query: &RegexSpec) -> Option<ParsedQuery> {
        if let Some(known) = self.cache.class_repeats.get(query) {
            return known.clone();
        }
        self.reduce_query(query, ClassRepeat::parse_cached(query))
    }

    /// [`Self::walk_query`] for a query not cached yet, given its parse. A class is reduced
    /// once per lexer (the slicer asks several bounds of one class, `C{1,10}`, `C{1,30}`,
    /// `C{0,9}`, ...: reducing each took 0.18 s of MaskBench's first instances).
    fn reduce_query(
        &mut self,
        query: &RegexSpec,
        parsed: Option<Arc<ClassRepeat>>,
    ) -> Option<ParsedQuery> {
        let e = parsed.map(|p| {
            let same_class = self
                .cache
                .class_repeats
                .values()
                .flatten()
                .find(|(_, k)| Arc::ptr_eq(k, &p) || k.class == p.class);
            if let Some(&((i, _), _)) = same_class {
                return ((i, p.max), p);
            }
            let c = p.class.reduced(&self.class_of);
            let i = match self.cache.walk_classes.iter().position(|x| *x == c) {
                Some(i) => i,
                None => {
                    Arc::make_mut(&mut self.cache.walk_classes).push(c);
                    self.cache.walk_classes.len() - 1
                }
            };
            ((i as u32, p.max), p)
        });
        Arc::make_mut(&mut self.cache.class_repeats).insert(query.clone(), e.clone());
        e
    }

    /// Where every run of the class of a slice query `C{m,n}` read from `state` ends its
    /// lexeme (see [`crate::prefixes::run_end`]), at most `limit` characters deep; cached
    /// by state and class, `None` for other query shapes and where proofs are off.
    pub fn run_end(
        &mut self,
        state: StateId,
        query: &RegexSpec,
        limit: u32,
    ) -> Option<(u32, StateId)> {
        if !self.proofs {
            return None;
        }
        let ((ci, _), _) = self.walk_query(query)?;
        if let Some(&r) = self.cache.run_ends.get(&(state, ci)) {
            return r;
        }
        let class = self.cache.walk_classes[ci as usize].clone();
        let new_states = crate::prefixes::walk_new_states(limit);
        let r = crate::prefixes::run_end(self, state, &class, limit, WALK_FUEL, new_states);
        self.cache.run_ends.insert((state, ci), r);
        r
    }

    pub(super) fn containment(
        &mut self,
        state: StateId,
        query: &RegexSpec,
        cheap: bool,
    ) -> Containment {
        // `C{m,n}` by walking the DFA (cheap when warm, and decisive both ways; out of budget
        // it is "unknown": walking the slice's trie then costs less than the symbolic check,
        // ~5 ms on a bounded repeat); the symbolic check for other shapes.
        // Every one-character string of the class must live (a query holding longer strings
        // holds their one-character prefixes): one of its first bytes leading to DEAD
        // settles it before any walk or symbolic check. A few representative bytes (a
        // letter of each case, a digit) rule out most states of a trie walk (structure,
        // numbers, literals) for a few transitions the walk needs anyway; trying every
        // first byte cost a cold derivative per byte class in key states, which the
        // symbolic check then proves contained without them. The probe comes before the
        // class is reduced for walks (`walk_query`): at a grammar's first mask (`{` only)
        // reducing it was an eighth of the mask's instructions.
        let known = self.cache.class_repeats.get(query).cloned();
        let parsed = match &known {
            Some(k) => k.as_ref().map(|k| k.1.clone()),
            None => ClassRepeat::parse_cached(query),
        };
        if let Some(p) = parsed.as_ref().filter(|p| p.max != Some(0)) {
            for &b in p.probe_bytes.iter() {
                match self.advance(state, b) {
                    Ok(s) if s != StateId::DEAD => {}
                    _ => return Containment::Unknown,
                }
            }
        }
        let q = match known {
            Some(k) => k.map(|k| k.0),
            None => self.reduce_query(query, parsed).map(|k| k.0),
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
                if let Some(a) =
                    self.cache.live_depths.get(&k).and_then(|&(d, _)| walk_answer(d, max))
                {
                    return self.answered(a, 2);
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
                    let d = match self
                        .cache
                        .live_depths
                        .get(&key)
                        .or(self.cache.live_depths.get(&full))
                    {
                        Some(&(d, _)) => d,
                        None => {
                            let depth = UNBOUNDED_WALK_DEPTH;
                            let budget = if cheap { 0 } else { walk_new_states(depth) };
                            let d = self.walk_class(r, ci, depth, budget);
                            self.cache.live_depths.insert(key, (d, depth));
                            d
                        }
                    };
                    if d.unbounded {
                        return self.answered(Containment::Contained, 3);
                    }
                }
            }
        }
        // A state whose walk of the class comes back to itself after one character (a free
        // string body) contains every query on the class: one step, on transitions the trie
        // walk needs anyway, where derivre's symbolic check costs tens of µs per new state.
        // A first character that kills the lexeme settles it the other way. Anything else (a
        // bounded body, a state that tells first letters apart) goes on below. The
        // step is remembered: a deeper query walks again (warm); a step that gave up is taken
        // as given (at the first character that is nearly always more than `WALK_MAX_SET`
        // states, which a deeper walk meets too; tried: not remembering it cost ~5 % of
        // the benchmark corpus's mask time). A cheap query steps without building new states.
        if let Some((ci, max)) = q {
            if !self.cache.live_depths.contains_key(&own_key(ci)) {
                let budget = if cheap { 0 } else { walk_new_states(1) };
                let d = self.walk_class(state, ci, 1, budget);
                self.cache.live_depths.insert(own_key(ci), (d, 1));
                if let Some(a) = walk_answer(d, max) {
                    return self.answered(a, 4);
                }
            }
        }
        // A member `B* R` with `R` positive (an unanchored pattern such as `.*(Red|Blue|…).*`
        // inside quotes) holds every string of `B*` as a prefix (`R` completes
        // it), also inside a union after a few bytes (`B* R | <partial matches>`): where the
        // class walks from the state `B*` back to it after one character, every query on the
        // class is contained. The state's own walk tells apart every partial match of every
        // word (~200 states for thirty words: it gave up, and the slice was walked, 7-21 ms).
        // A cheap query takes a head state built already, and walks it building none.
        // The state without its finite exclusions (literals excluded beside a pattern:
        // `S* & B* R & ~("k1"|…)`) counts too: a class string `c` there has infinitely many
        // completions `c b… w` (`b` a class character), finitely many of them excluded.
        // Every alternative's head is tried: after a few bytes of an unanchored pattern its
        // partial matches (`[0-9a-f]* "-" …`) come before the search's `.* P .*` in the
        // union, and their narrower heads do not come back on the class (a
        // `\d+-[A-Fa-f0-9]*-…` pattern, in a string from its fourth character: ~0.4 ms
        // masks with two of four slices walked).
        if let Some((ci, _)) = q.filter(|_| !self.lazy_possible(state)) {
            let mut heads = self.star_heads(state, !cheap);
            if heads.is_empty() {
                if let Some(r) = self.without_finite_exclusions(state).filter(|&r| r != state) {
                    heads = self.star_heads(r, !cheap);
                }
            }
            for head in heads {
                let full = walk_key(head, ci, false);
                let key = walk_key(head, ci, cheap);
                let d = match self.cache.live_depths.get(&full).or(self.cache.live_depths.get(&key))
                {
                    Some(&(d, _)) => d,
                    None => {
                        let budget = if cheap { 0 } else { walk_new_states(1) };
                        let d = self.walk_class(head, ci, 1, budget);
                        self.cache.live_depths.insert(key, (d, 1));
                        d
                    }
                };
                if d.unbounded {
                    return self.answered(Containment::Contained, 5);
                }
            }
        }
        // First derivre's symbolic check on a small budget: it proves shapes the walk finds
        // costly at once, e.g. keys `"body" & ~("k1"|…)` (free keys beside named ones),
        // whose walk tells every prefix of every named key apart.
        let skip_forced =
            q.is_some_and(|(ci, _)| self.cache.walk_classes[ci as usize].num_first_bytes() >= 2);
        // The symbolic check proves strings live, not that a lazy lexeme (free text up to a
        // delimiter) does not match, and so end, inside them: with one live, only the walk,
        // which stops where a lazy lexeme matches, answers.
        let lazy_live = self.lazy_possible(state);
        let quick = self.limits.quick_containment_fuel;
        if !lazy_live
            && quick > 0
            && self.check_symbolic(state, query, quick, false, skip_forced)
                == Containment::Contained
        {
            return self.answered(Containment::Contained, 6);
        }
        if let Some((ci, max)) = q {
            // One walk per (state, class) answers every query on that class up to the depth
            // it reached; a deeper query walks again (warm by then). An unbounded query is
            // contained only through a repeated state set within UNBOUNDED_WALK_DEPTH.
            let limit_now = max.unwrap_or(UNBOUNDED_WALK_DEPTH);
            let key = own_key(ci);
            let d = match self.cache.live_depths.get(&key) {
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
                    // more and gave up walks on the states built already from then on:
                    // `body{0,n} & words` (a word-count pattern under a length bound) has
                    // states by words x length
                    // (x partial UTF-8 characters), and each walk built 200-350 (1-7 ms)
                    // to give up, in state after state of a decode (the trie walks the
                    // slice instead).
                    let shape = self.cache.members.get(state.as_usize()).and_then(|m| m.first());
                    let shape = shape.map(|m| (self.lexeme_exprs[m.0.as_usize()], ci));
                    let spent = shape.is_some_and(|k| self.cache.gave_up.contains(&k));
                    let budget = if cheap || spent { 0 } else { walk_new_states(limit_now) };
                    let n0 = self.num_states();
                    let d = self.walk_class(state, ci, limit_now, budget);
                    if d.gave_up && self.num_states() - n0 >= GAVE_UP_STATES {
                        if let Some(k) = shape {
                            self.cache.gave_up.insert(k);
                        }
                    }
                    self.cache.live_depths.insert(key, (d, limit_now));
                    d
                }
            };
            let answer = d.contains(max);
            // Only when the walk gave up on a budget is the full symbolic check worth it.
            if answer == Containment::Contained || !d.gave_up || lazy_live || cheap {
                return self.answered(answer, 7);
            }
        }
        if lazy_live || cheap {
            return Containment::Unknown;
        }
        let fuel = self.limits.containment_fuel;
        let answer = self.check_symbolic(state, query, fuel, true, skip_forced);
        self.answered(answer, 8)
    }

    /// The state of `state`'s members that intersect complements of finite languages
    /// (`~("k1"|…)`), with those complements left out ([`relax_finite`]: each member then
    /// has finitely many more strings); `None` when no member has one (or the state could
    /// not be made). Remembered per state.
    pub(super) fn without_finite_exclusions(&mut self, state: StateId) -> Option<StateId> {
        if let Some(&r) = self.cache.reduced.get(&state) {
            return (r != StateId::DEAD).then_some(r);
        }
        let members: Vec<(LexemeIdx, ExprRef)> = self.cache.members.get(state.as_usize())?.to_vec();
        let mut out = Vec::new();
        // The infinite members, relaxed where they can be, for the pairs below.
        let mut all = Vec::new();
        for (lx, e) in members {
            let mut budget = FINITE_NODES;
            // A finite member (a pattern key's) is left out too: it cannot extend every
            // class string, and a smaller union proves no more than it holds.
            let relaxed =
                relax_finite(&mut self.cache.exprs, e, &mut budget, &mut self.cache.finite);
            let base = relaxed.unwrap_or(e);
            // `A & B` with `B` holding `A` (a key that matched an unanchored pattern:
            // `X* & X* (ε | …)`) is `A`: the same strings, and `A`'s walk repeats at once.
            let narrowed = drop_supersets(&mut self.cache.exprs, base, &mut budget);
            let r = narrowed.unwrap_or(base);
            if is_finite(&self.cache.exprs, r, &mut budget, &mut self.cache.finite) {
                continue;
            }
            if relaxed.is_some() || narrowed.is_some() {
                out.push((lx, r));
            }
            all.push((lx, r));
        }
        // Members `A & P` and `A & ~P` (a pattern and its complement over one body): one
        // member `A` for the pair (the same strings), whose walk is the body's, where the
        // pair's own walk tells apart every partial match of `P` (with `P = sdkrel:.*`, every
        // such mask took 2-5 ms, the trie walked).
        let n = all.len();
        merge_complements(&mut self.cache.exprs, &mut all);
        if all.len() < n {
            out = all;
        }
        // Only those members (the others, e.g. the named keys, would tell first letters
        // apart again), each a superset of a live one: live.
        let r =
            if out.is_empty() { StateId::DEAD } else { self.intern(out).unwrap_or(StateId::DEAD) };
        self.cache.reduced.insert(state, r);
        (r != StateId::DEAD).then_some(r)
    }

    /// The states `{(lexeme, B*)}` of the first member of `state` that is `B* R` with `R`
    /// positive, or a union with such alternatives (one state per alternative,
    /// [`star_heads_parts`]); empty when no member has one (or no state could be made).
    ///
    /// A member `(S1* & … & B* R) T` (an unanchored pattern intersected with a string body
    /// `S*`, behind the closing quote `T`) counts too, with the state `{(lexeme, B* & S1* &
    /// …)}`, when a string `w` of `R` is in every `Si*`: a string `c` of the class walked
    /// there is in `B*` and each `Si*`, so `c w` is in the intersection (a star holds the
    /// concatenation of its strings) and `c w t` in the member. An operand `Si{m,}` (a
    /// minimum) is read as `Si*` ([`Self::star_heads_in_body`] has the argument).
    ///
    /// `create` false (a cheap query): only states built already.
    pub(super) fn star_heads(&mut self, state: StateId, create: bool) -> Vec<StateId> {
        let Some(members) = self.cache.members.get(state.as_usize()).map(|m| m.to_vec()) else {
            return Vec::new();
        };
        let mut found: Vec<(LexemeIdx, ExprRef)> = Vec::new();
        for &(lx, e) in &members {
            let heads = star_heads_parts(&mut self.cache.exprs, &mut self.cache.stars, e);
            if !heads.is_empty() {
                found = heads.into_iter().map(|(b, _)| (lx, b)).collect();
                break;
            }
        }
        if found.is_empty() {
            for (lx, e) in members {
                let heads = self.star_heads_in_body(lx, e);
                if !heads.is_empty() {
                    found = heads.into_iter().map(|h| (lx, h)).collect();
                    break;
                }
            }
        }
        found
            .into_iter()
            .filter_map(|h| if create { self.intern(vec![h]).ok() } else { self.known_state(&[h]) })
            .collect()
    }

    /// The first of [`Self::star_heads`] (tests).
    #[cfg(test)]
    pub(super) fn star_head(&mut self, state: StateId, create: bool) -> Option<StateId> {
        self.star_heads(state, create).into_iter().next()
    }

    /// The state of `members` (sorted), if built already.
    pub(super) fn known_state(&self, members: &[Member]) -> Option<StateId> {
        let hash = self.hasher.hash_one((members, false));
        let (known, starts) = (&self.cache.members, &self.cache.starts);
        let same = |s: &StateId| known[s.as_usize()] == *members && !starts[s.as_usize()];
        self.cache.state_ids.find(hash, |e| same(&e.1)).map(|e| e.1)
    }

    /// `B* & S1* & …` for a member `(S1* & … & B* R) T` (see [`Self::star_heads`]), of
    /// lexeme `lx`, for each alternative `B* R` of that operand.
    ///
    /// An operand `S{m,}` (a JSON string's `minLength` beside an unanchored `pattern`) counts
    /// as `S*` when its bounds are known ([`Self::repeat_bounds`]): where the walk of a class
    /// string `c` from the head comes back to it, a character `s` of the class is in `B` and
    /// in `S` (the head holds the empty string and so does its derivative by `s`), so `c sᵏ
    /// w` is in `B* R`, in each `Si*` and, for `k` large enough, holds `m` iterations of
    /// `S`: every such `c` is still a live prefix (a run of the body's characters never
    /// ends a minimum).
    pub(super) fn star_heads_in_body(&mut self, lx: LexemeIdx, e: ExprRef) -> Vec<ExprRef> {
        let (x, stars) = (&mut self.cache.exprs, &mut self.cache.stars);
        if x.get_tag(e) as u8 != tag::CONCAT {
            return Vec::new();
        }
        let [body, tail] = [x.get_args(e)[0], x.get_args(e)[1]];
        if x.get_tag(body) as u8 != tag::AND || !x.is_positive(tail) || tail == ExprRef::NO_MATCH {
            return Vec::new();
        }
        let ops = x.get_args(body).to_vec();
        let Some((k, parts)) = ops.iter().enumerate().find_map(|(k, &o)| {
            let p = star_heads_parts(x, stars, o);
            (!p.is_empty()).then_some((k, p))
        }) else {
            return Vec::new();
        };
        let mut others = Vec::new();
        for (j, &s) in ops.iter().enumerate() {
            if j != k {
                match self.without_minimum(lx, s) {
                    Some(s) => others.push(s),
                    None => return Vec::new(),
                }
            }
        }
        if others.is_empty() {
            return Vec::new();
        }
        let mut heads = Vec::new();
        for (b, r) in parts {
            let mut budget = WITNESS_NODES;
            let Some(w) = self.part_witness(r, &mut budget) else { continue };
            if others.iter().all(|&s| self.matches_bytes(s, &w)) {
                let mut head = others.clone();
                head.push(b);
                heads.push(self.cache.exprs.mk_and(&mut head));
            }
        }
        heads
    }

    /// `S*` for an operand `S{m,}` of lexeme `lx` (`S*` itself, `S+`, or a repeat whose
    /// bounds the lexeme's spec names, its maximum unbounded); `None` for anything else.
    fn without_minimum(&mut self, lx: LexemeIdx, s: ExprRef) -> Option<ExprRef> {
        let (x, stars) = (&mut self.cache.exprs, &mut self.cache.stars);
        match unbounded_min(x, stars, s) {
            Some(0) => return Some(s),
            Some(_) => {}
            None => {
                if x.get_tag(s) as u8 != tag::REPEAT {
                    return None;
                }
                self.search_minimums(lx);
                if self.repeat_bounds(s)?.1 != u32::MAX {
                    return None;
                }
            }
        }
        let x = &mut self.cache.exprs;
        let body = x.get_args(s)[0];
        Some(x.mk_repeat(body, 0, u32::MAX))
    }

    /// [`live_depth`] of walk class `ci` from `state`, at most `limit` characters deep,
    /// creating at most `budget` new states.
    pub(super) fn walk_class(
        &mut self,
        state: StateId,
        ci: u32,
        limit: u32,
        budget: usize,
    ) -> LiveDepth {
        let classes = Arc::clone(&self.cache.walk_classes);
        live_depth(self, state, &classes[ci as usize], Some(limit), WALK_FUEL, budget)
    }

    /// derivre's symbolic containment check of `query` in the prefixes of `state`: each
    /// member alone, then their union, within `fuel`. With `final_try` false a failure is
    /// not remembered by derivre (a later try with more fuel may still succeed).
    pub(super) fn check_symbolic(
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
        let Some(members) = self.cache.members.get(state.as_usize()) else {
            return Containment::Unknown;
        };
        if members.is_empty() {
            return Containment::Unknown;
        }
        // The state lives iff one of its members does, so one member proven to contain the
        // query is enough (derivre's check understands shapes like `"body" & ~("k1"|…)`
        // one at a time, not their union); then the union, within what is left of the fuel.
        let members = members.to_vec();
        let cost0 = self.cache.exprs.cost();
        let mut alts: Vec<ExprRef> = Vec::with_capacity(members.len());
        for &(_, e) in members.iter() {
            alts.push(e);
            // A member with one possible next byte (a key literal, say) cannot contain a
            // query whose characters start with several bytes: not worth a check.
            if skip_forced
                && matches!(
                    self.cache.next_byte.next_byte(&self.cache.exprs, e),
                    NextByte::ForcedByte(_) | NextByte::ForcedEOI | NextByte::Dead
                )
            {
                continue;
            }
            let left = fuel.saturating_sub(self.cache.exprs.cost() - cost0);
            if left == 0 {
                return Containment::Unknown;
            }
            let r = self.cache.relevance.is_contained_in_prefixes(
                &mut self.cache.exprs,
                &mut self.cache.deriv,
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
        let big = mk_union(&mut self.cache.exprs, &alts);
        let left = fuel.saturating_sub(self.cache.exprs.cost() - cost0);
        match self.cache.relevance.is_contained_in_prefixes(
            &mut self.cache.exprs,
            &mut self.cache.deriv,
            small,
            big,
            left.max(1),
            final_try,
        ) {
            Ok(true) => Containment::Contained,
            _ => Containment::Unknown,
        }
    }

    /// The query compiled into this lexer's expression store (cached); `None` when it uses
    /// `json_quote` (only available through derivre's builder) or does not compile.
    pub(super) fn prefix_query_expr(&mut self, query: &RegexSpec) -> Option<ExprRef> {
        if let Some(&e) = self.cache.prefix_queries.get(query) {
            return e;
        }
        if let Some(q) = ClassRepeat::parse_cached(query) {
            // `C{m,n}` straight from its UTF-8 sequences: no regex parse per lexer, and one
            // expression of `C` for the queries on one class (the slicer's first three).
            let x = &mut self.cache.exprs;
            let class = match self.cache.query_classes.get(&q.class) {
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
                    Arc::make_mut(&mut self.cache.query_classes).insert(q.class.clone(), c);
                    c
                }
            };
            let e = Some(x.mk_repeat(class, q.min, q.max.unwrap_or(u32::MAX)));
            Arc::make_mut(&mut self.cache.prefix_queries).insert(query.clone(), e);
            return e;
        }
        let exprs = &mut self.cache.exprs;
        let e = fold("query", query, self.limits.max_depth, |node, args| {
            translate_raw(exprs, node, args).ok_or_else(|| {
                Error::from(ErrorKind::Unsupported { lexeme: "query".into(), feature: node.tag() })
            })
        })
        .ok();
        Arc::make_mut(&mut self.cache.prefix_queries).insert(query.clone(), e);
        e
    }
}

/// The key of a class walk in [`DerivreLexer`]'s `live_depths`: walks that build no states
/// (`cheap`) apart from full ones.
pub(super) fn walk_key(state: StateId, ci: u32, cheap: bool) -> (StateId, u32) {
    (state, ci | (cheap as u32) << 31)
}

/// What a class walk settles for a query `C{m,max}`: contained when it went deep enough (or
/// came back to a state set it had seen); not contained when it stopped on a dead (or
/// lexeme-ending) first character, which no query holding one-character strings survives;
/// `None`: ask on.
pub(super) fn walk_answer(d: LiveDepth, max: Option<u32>) -> Option<Containment> {
    if d.contains(max) == Containment::Contained {
        Some(Containment::Contained)
    } else if d.depth == 0 && !d.unbounded && !d.gave_up && max != Some(0) {
        Some(Containment::Unknown)
    } else {
        None
    }
}
