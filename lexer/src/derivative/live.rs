//! Liveness: is a lexer state's expression non-empty (can the lexeme still match)? A
//! dead expression must never be reported live for long (the mask would allow a token that
//! leads nowhere) and a live one never dead (a token wrongly refused). Cheap structural
//! proofs first ([`surely_empty`], [`surely_infinite`]), then a witness: a concrete string
//! built by [`shortest_guess`] or from an intersection's parts ([`DerivreLexer::part_witness`])
//! and checked by matching it ([`DerivreLexer::matches_bytes`]), then derivre's full
//! emptiness check under the step's fuel. A witness is only trusted after it is matched, so
//! a wrong guess costs time, never a wrong answer.
//!
//! Tests: `witness_tests::a_witness_is_checked`, `infinite_languages_are_live_by_structure`,
//! `an_intersection_of_positive_parts_has_a_witness_from_its_parts`.

use super::*;

impl DerivreLexer {
    pub(super) fn check_step_fuel(&self, cost0: u64) -> Result<(), Error> {
        let used = self.cache.exprs.cost() - cost0;
        if used > self.limits.step_fuel {
            return Err(ErrorKind::StepFuelExhausted { limit: self.limits.step_fuel }.into());
        }
        if self.cache.exprs.cost() > self.limits.total_fuel {
            return Err(ErrorKind::TotalFuelExhausted { limit: self.limits.total_fuel }.into());
        }
        Ok(())
    }

    /// derivre's relevance check of `e` within the step's remaining fuel.
    pub(super) fn is_live_full(&mut self, e: ExprRef, cost0: u64) -> Result<bool, Error> {
        let left = self.limits.step_fuel.saturating_sub(self.cache.exprs.cost() - cost0);
        match self.cache.relevance.is_non_empty_limited(&mut self.cache.exprs, e, left) {
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
    pub(super) fn is_live(&mut self, e: ExprRef, cost0: u64) -> Result<bool, Error> {
        self.is_live_as(e, cost0, false)
    }

    /// [`is_live`](Self::is_live); `witness_first`: the witness is tried before the quick
    /// relevance check, not after it (a start state's lexemes: `"…" & ~("a"|"b")` took
    /// derivre's relevance check ~35 µs, where `""` proves it in two derivatives).
    pub(super) fn is_live_as(
        &mut self,
        e: ExprRef,
        cost0: u64,
        witness_first: bool,
    ) -> Result<bool, Error> {
        if e == ExprRef::NO_MATCH {
            return Ok(false);
        }
        // A positive expression other than NO_MATCH matches some string (derivre's
        // invariant).
        if self.cache.exprs.is_positive(e) || self.infinite_but_finitely_many(e) {
            return Ok(true);
        }
        // An intersection with the complement of an infinite language (`.*NEW.* & ~(.*A.* |
        // .*B.*)`: "holds `NEW` and none of the other words") mostly runs
        // derivre's quick check out (~0.2 ms each); a witness that completes the word the
        // string must hold proves it in a few derivatives. Its guesses read byte strings'
        // lengths exactly there (see `shortest_guess`).
        let words = {
            let mut budget = FINITE_NODES;
            infinite_complement(
                &self.cache.exprs,
                e,
                &mut budget,
                &mut self.cache.complements,
                &mut self.cache.finite,
            )
        };
        if (witness_first || words) && self.has_witness(e, words) {
            self.check_step_fuel(cost0)?;
            return Ok(true);
        }
        // An intersection of positive parts (`body{0,n} & pattern`): a
        // string from its parts, before derivre's relevance check, which explores the
        // product and ran out of its quick fuel on a word-count pattern's new states.
        let mut budget = WITNESS_NODES;
        if self.part_witness(e, &mut budget).is_some() {
            self.check_step_fuel(cost0)?;
            return Ok(true);
        }
        let quick =
            QUICK_FUEL.min(self.limits.step_fuel.saturating_sub(self.cache.exprs.cost() - cost0));
        if let Ok(r) = self.cache.relevance.is_non_empty_limited(&mut self.cache.exprs, e, quick) {
            self.check_step_fuel(cost0)?;
            return Ok(r);
        }
        // An intersection with the complement of a superset of one of its operands (as in
        // `.*A.* & ~(.*B.*)`, each alternative excluding the others' words; once a
        // string holds two of them, every branch is `a & ~(a · (ε | …))`): empty, read off
        // the structure, where derivre's relevance check took 20-55 ms.
        let mut budget = FINITE_NODES;
        if surely_empty(&self.cache.exprs, e, &mut budget) {
            self.check_step_fuel(cost0)?;
            return Ok(false);
        }
        if !witness_first && !words && self.has_witness(e, false) {
            self.check_step_fuel(cost0)?;
            return Ok(true);
        }
        let mut memo = HashMap::new();
        let mut budget = HULL_NODES;
        let h = hull(&mut self.cache.exprs, e, true, &mut memo, &mut budget);
        if h != e {
            let left = self.limits.step_fuel.saturating_sub(self.cache.exprs.cost() - cost0);
            let fuel = HULL_FUEL.min(left);
            if let Ok(false) =
                self.cache.relevance.is_non_empty_limited(&mut self.cache.exprs, h, fuel)
            {
                self.check_step_fuel(cost0)?;
                return Ok(false);
            }
        }
        self.is_live_full(e, cost0)
    }

    /// Whether `e` is live by its structure ([`surely_infinite`]): after a few bytes,
    /// `[^"\\]*" & ~("me"|"ta")` is live without a relevance check or a witness (those
    /// took a quarter of such a lexer's first mask).
    pub(super) fn infinite_but_finitely_many(&mut self, e: ExprRef) -> bool {
        let mut budget = FINITE_NODES;
        let c = &mut self.cache;
        surely_infinite(&mut c.exprs, &mut c.stars, e, &mut budget, &mut c.finite)
    }

    /// Whether a string that [`shortest_guess`] points to, byte by byte, matches `e`
    /// (exact: derivatives and the nullable flag). `false` says nothing. `words`: the
    /// guesses' word mode (see [`shortest_guess`]).
    pub(super) fn has_witness(&mut self, e: ExprRef, words: bool) -> bool {
        self.guess_walk(e, words).is_some()
    }

    /// The string [`shortest_guess`] points to, byte by byte, if `e` matches it within
    /// [`WITNESS_MAX_LEN`] bytes (exact: derivatives and the nullable flag).
    pub(super) fn guess_walk(&mut self, e: ExprRef, words: bool) -> Option<Vec<u8>> {
        let (mut d, mut out) = (e, Vec::new());
        let mut memo = HashMap::new();
        for _ in 0..WITNESS_MAX_LEN {
            if self.cache.exprs.is_nullable(d) {
                return Some(out);
            }
            // An expression's guess is the same at every step: the memo carries over
            // (the expression after a byte shares most of its nodes).
            let mut budget = WITNESS_NODES;
            let guess = shortest_guess(
                &self.cache.exprs,
                &mut self.cache.next_byte,
                d,
                &mut memo,
                &mut budget,
                words,
            );
            let Some((_, Some(b))) = guess else {
                return None;
            };
            out.push(b);
            d = self.cache.deriv.derivative(&mut self.cache.exprs, d, b);
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
    /// A length-bounded body under a word-count pattern is `body{0,n} & words`: the
    /// intersection's own derivatives by a witness are new product expressions for each
    /// length, where the operands' are the counters and word states already known.
    pub(super) fn part_witness(&mut self, e: ExprRef, budget: &mut u32) -> Option<Arc<[u8]>> {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if self.cache.exprs.is_positive(e) {
            if let Some(w) = self.cache.witnesses.get(&e) {
                return w.clone();
            }
            // A positive expression has no intersection or complement inside.
            let w = self.guess_walk(e, false).map(Arc::from);
            self.cache.witnesses.insert(e, w.clone());
            return w;
        }
        let args = self.cache.exprs.get_args(e).to_vec();
        match self.cache.exprs.get_tag(e) as u8 {
            tag::CONCAT => {
                let a = self.part_witness(args[0], budget)?;
                let b = self.part_witness(args[1], budget)?;
                Some(a.iter().chain(b.iter()).copied().collect())
            }
            tag::OR => args.into_iter().find_map(|a| self.part_witness(a, budget)),
            tag::AND => {
                let mut found: Vec<Arc<[u8]>> = Vec::new();
                for &a in &args {
                    if self.cache.exprs.get_tag(a) as u8 == tag::NOT {
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
    pub(super) fn matches_bytes(&mut self, e: ExprRef, bytes: &[u8]) -> bool {
        let mut d = e;
        for &b in bytes {
            d = self.cache.deriv.derivative(&mut self.cache.exprs, d, b);
            if d == ExprRef::NO_MATCH {
                return false;
            }
        }
        self.cache.exprs.is_nullable(d)
    }
}
