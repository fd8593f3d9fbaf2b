//! Runs near a bound: the last characters of a bounded repeat, where no counter twin applies
//! (`counters`), share one mask after all.
//!
//! Take a state with one member `B{m,n} R` (`n` may be unbounded where `m > 0`: a
//! `minLength` near its minimum) where no string of `B` (one *character* of the repeat) is
//! a proper prefix of another, `R` is not nullable, and no byte that starts a
//! character of `B` starts a string of `R` (a JSON string's characters, then its closing
//! quote). Its *run twin* is the state with the member `B* R`. Read a token's bytes as
//! characters of `B` from its start: `k` of them (a trailing partial character counted),
//! then either the token ends or a byte that starts no character of `B` follows (the token
//! *exits* the run). Then the token is allowed at the state exactly when it is allowed at
//! the twin, `k <= n`, and, if it exits, `k >= m`:
//! - a walk allowed at the state is allowed at the twin (the state's strings are the
//!   twin's, and what follows the lexeme is the same);
//! - with `k <= n` characters and no exit both are at `B{..} R` with the same characters
//!   read and the same lexeme unfinished (neither is nullable), so they agree on the rest
//!   of the token; on an exit the byte cannot start `B`, so only `R` takes it, which in the
//!   state needs `k >= m`, and from there both are at the same derivative of `R`;
//! - with `k > n` (never with `n` unbounded) the state has read `n` characters, cannot
//!   end its lexeme (`R` is not nullable) and its next byte starts a character of `B`,
//!   which `R` cannot take: dead;
//! - special and EOS tokens read no byte: neither state is accepting, both have the same
//!   single lexeme, so they agree (`k = 0`, no exit).
//!
//! The matcher takes the twin's mask (one state for every position of the run, the same as
//! the counter twin of the positions with more room than the longest token when `m = 0`)
//! and keeps the tokens whose `k` fits (`slicer::RunTable`, per vocabulary and character
//! automaton). Tests: `llguidance/tests/soundness.rs` (masks against the plain walk).

use super::*;

/// States of a character automaton at most (else no run twin).
const RUN_DFA_STATES: usize = 64;

/// A state near a bound with its run twin (see the module doc): the mask is the twin's,
/// keeping the tokens that read at most `max` characters of `dfa`, and at least `min` when
/// they exit the run.
#[derive(Clone, Debug)]
pub struct RunBound {
    /// The state with the member `B* R`.
    pub twin: StateId,
    /// The characters of `B`.
    pub dfa: Arc<RunDfa>,
    /// The repeat's minimum at the state (`m`).
    pub min: u32,
    /// The repeat's maximum at the state (`n`; `u32::MAX`: unbounded).
    pub max: u32,
}

impl DerivreLexer {
    /// The run twin of `state` when it is a single `B{m,n} R` member of the shape the module
    /// doc describes, with a finite `n` or a minimum; `None` otherwise (and without a
    /// token horizon).
    pub fn run_bound(&mut self, state: StateId) -> Result<Option<RunBound>, Error> {
        if self.cache.counters.horizon == 0 || state == StateId::DEAD {
            return Ok(None);
        }
        if let Some(r) = self.cache.counters.runs.get(&state) {
            return Ok(r.clone());
        }
        let r = self.make_run_bound(state)?;
        // Without any bounded repeat the answer is cheap to find again (one member lookup
        // and the lexeme's search flag): no entry per state for grammars without bounds.
        if r.is_some() || self.cache.counters.has_seeds() {
            self.cache.counters.runs.insert(state, r.clone());
        }
        Ok(r)
    }

    fn make_run_bound(&mut self, state: StateId) -> Result<Option<RunBound>, Error> {
        let Some((lx, body, rest, min, max)) = self.run_shape(state)? else { return Ok(None) };
        let Some(dfa) = self.run_dfa(body) else { return Ok(None) };
        if !self.run_disjoint(&dfa, body, rest) {
            return Ok(None);
        }
        let star = self.cache.exprs.mk_repeat(body, 0, u32::MAX);
        let twin_expr = self.cache.exprs.mk_concat(star, rest);
        let twin = self.intern(vec![(lx, twin_expr)])?;
        Ok(Some(RunBound { twin, dfa, min, max }))
    }

    /// `state`'s one member as `B{min,max} R` with a finite `max` or a `min` (not `B*`) and
    /// `R` not nullable:
    /// (lexeme, `B`, `R`, `min`, `max`).
    #[allow(clippy::type_complexity)]
    fn run_shape(
        &mut self,
        state: StateId,
    ) -> Result<Option<(LexemeIdx, ExprRef, ExprRef, u32, u32)>, Error> {
        let Some(members) = self.cache.members.get(state.as_usize()) else {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        };
        let &[(lx, e)] = members else { return Ok(None) };
        if self.cache.starts[state.as_usize()] || !self.search_seeds(lx) {
            return Ok(None);
        }
        let x = &self.cache.exprs;
        if x.get_tag(e) as u8 != tag::CONCAT {
            return Ok(None);
        }
        let [a, rest] = [x.get_args(e)[0], x.get_args(e)[1]];
        if x.get_tag(a) as u8 != tag::REPEAT || x.is_nullable(rest) {
            return Ok(None);
        }
        let body = x.get_args(a)[0];
        match self.repeat_bounds(a) {
            Some((min, max)) if max != u32::MAX || min > 0 => Ok(Some((lx, body, rest, min, max))),
            _ => Ok(None),
        }
    }

    /// Builds, for a state far from its bound (one that has a counter twin), the character
    /// automaton its positions near the bound will need, so that its cost (and the
    /// vocabulary table the matcher builds from it, [`DerivreLexer::take_new_run_dfas`]) is
    /// paid where the repeat starts rather than at a mask deep into a long value.
    pub(super) fn prepare_run(&mut self, state: StateId) -> Result<(), Error> {
        if let Some((_, body, rest, _, _)) = self.run_shape(state)? {
            if let Some(dfa) = self.run_dfa(body) {
                self.run_disjoint(&dfa, body, rest);
            }
        }
        Ok(())
    }

    /// The character automata built since the last call (each once per lexer), for the
    /// tables over a vocabulary that go with them.
    pub fn take_new_run_dfas(&mut self) -> Vec<Arc<RunDfa>> {
        std::mem::take(&mut self.cache.counters.new_run_dfas)
    }

    /// The character automaton of `body`, when it has at most [`RUN_DFA_STATES`] states, is
    /// not nullable and no character extends another (cached per body).
    fn run_dfa(&mut self, body: ExprRef) -> Option<Arc<RunDfa>> {
        if let Some(d) = self.cache.counters.run_dfas.get(&body) {
            return d.clone();
        }
        let d = self.build_run_dfa(body).map(Arc::new);
        self.cache.counters.run_dfas.insert(body, d.clone());
        if let Some(d) = &d {
            self.cache.counters.new_run_dfas.push(d.clone());
        }
        d
    }

    fn build_run_dfa(&mut self, body: ExprRef) -> Option<RunDfa> {
        let (next, done) = self.body_automaton(body, RUN_DFA_STATES, true)?;
        Some(RunDfa::from_parts(next, done))
    }

    /// The automaton of `body`'s derivatives, from `body` (state 0): `next[state * 256 +
    /// byte]` ([`RUN_DEAD`] where the derivative matches nothing) and each state's nullable
    /// flag; `None` past `max` states (at most 255), and with `prefix_code` where `body`
    /// is nullable or a nullable state continues (a character that a longer one extends).
    /// Bytes of one class have the same derivatives (the classes split the bytes by every
    /// byte set of the lexemes, which `body` is part of).
    pub(super) fn body_automaton(
        &mut self,
        body: ExprRef,
        max: usize,
        prefix_code: bool,
    ) -> Option<(Vec<u8>, Vec<bool>)> {
        let mut states = vec![body];
        let mut index: HashMap<ExprRef, u8> = HashMap::new();
        index.insert(body, 0);
        let (mut next, mut nullables) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < states.len() {
            let e = states[i];
            let nullable = self.cache.exprs.is_nullable(e);
            if prefix_code && nullable && i == 0 {
                return None;
            }
            // The classes of one part of the state's partition share a derivative
            // (`partitions.rs`): one derivative per part, where the grammar's classes are
            // many (keys' letters) and a string character tells ~15 apart (a repeat body's
            // automaton cost ~90 µs per grammar at its first bounded string). Without
            // partitions each class is its own part.
            let labels = self.cache.parts.on.then(|| {
                let p = self.cache.parts.of_expr(&mut self.cache.exprs, e);
                self.cache.parts.labels[p as usize].clone()
            });
            let mut by_part = [None::<u8>; 256];
            let mut row = [RUN_DEAD; 256];
            for b in 0..=255u8 {
                let c = self.class_of[b as usize] as usize;
                let part = labels.as_ref().map_or(c, |l| l[c] as usize);
                if let Some(j) = by_part[part] {
                    row[b as usize] = j;
                    continue;
                }
                let d = self.cache.deriv.derivative(&mut self.cache.exprs, e, b);
                if d == ExprRef::NO_MATCH {
                    by_part[part] = Some(RUN_DEAD);
                    continue;
                }
                if prefix_code && nullable {
                    return None;
                }
                let j = match index.get(&d) {
                    Some(&j) => j,
                    None => {
                        if states.len() >= max {
                            return None;
                        }
                        let j = states.len() as u8;
                        index.insert(d, j);
                        states.push(d);
                        j
                    }
                };
                row[b as usize] = j;
                by_part[part] = Some(j);
            }
            next.extend_from_slice(&row);
            nullables.push(nullable);
            i += 1;
        }
        Some((next, nullables))
    }

    /// Whether no byte that starts a character of `body` starts a string of `rest`.
    fn run_disjoint(&mut self, dfa: &RunDfa, body: ExprRef, rest: ExprRef) -> bool {
        if let Some(&d) = self.cache.counters.run_disjoint.get(&(body, rest)) {
            return d;
        }
        let mut disjoint = true;
        let mut seen = [false; 256];
        for b in 0..=255u8 {
            let c = self.class_of[b as usize] as usize;
            if dfa.step(0, b) == RUN_DEAD || std::mem::replace(&mut seen[c], true) {
                continue;
            }
            if self.cache.deriv.derivative(&mut self.cache.exprs, rest, b) != ExprRef::NO_MATCH {
                disjoint = false;
                break;
            }
        }
        self.cache.counters.run_disjoint.insert((body, rest), disjoint);
        disjoint
    }
}
