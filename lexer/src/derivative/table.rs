//! The transition table and the states: a transition missing from the flat table
//! (`table[state * num_classes + class]`) is computed by derivatives on one byte
//! ([`DerivreLexer::advance_cold`]) and spread to every byte class its state's partition
//! says leads to the same state ([`DerivreLexer::spread`]); new states are hash-consed by
//! their sorted (lexeme, expression) members ([`DerivreLexer::intern`]), with their
//! per-state arrays (flags, accepting and possible sets, forced byte, look-ahead).
//!
//! Sound by construction: every entry is the state of the derivatives of the members on a
//! byte of that class, and the partition only groups classes whose derivatives are the same
//! expressions (checked by `spread_tests::spread_transitions_equal_computed_ones`).

use super::*;

impl DerivreLexer {
    /// Cold path of [`Lexer::advance`]: a table miss (or an unknown state). Runs derivatives
    /// on the raw byte for every live lexeme, interns the resulting set, fills the table
    /// entry for the byte's class.
    #[inline(never)]
    #[cold]
    pub(super) fn advance_cold(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        let Some(n) = self.cache.members.get(state.as_usize()).map(|m| m.len()) else {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        };
        // A state with one possible next byte (inside a literal) dies on any other class.
        if let Some(Some(b0)) = self.cache.forced.get(state.as_usize()) {
            if self.class_of[*b0 as usize] != self.class_of[byte as usize] {
                let idx =
                    state.as_usize() * self.num_classes + self.class_of[byte as usize] as usize;
                self.cache.table[idx] = self.entry(state, StateId::DEAD);
                self.cache.num_transitions += 1;
                return Ok(StateId::DEAD);
            }
        }
        let cost0 = self.cache.exprs.cost();
        // Most cold transitions of a trie walk lead to DEAD (a byte no lexeme of the state
        // can take): no allocation and no interning for those.
        let mut next = Vec::new();
        for i in 0..n {
            let (lx, e) = self.cache.members[state.as_usize()][i];
            let d = self.cache.deriv.derivative(&mut self.cache.exprs, e, byte);
            self.check_step_fuel(cost0)?;
            if self.is_live(d, cost0)? {
                next.push((lx, d));
            }
        }
        let s = if next.is_empty() { StateId::DEAD } else { self.intern(next)? };
        let class = self.class_of[byte as usize] as usize;
        let idx = state.as_usize() * self.num_classes + class;
        self.cache.table[idx] = self.entry(state, s);
        self.cache.num_transitions += 1;
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
    pub(super) fn spread(&mut self, state: StateId, class: usize) {
        if !self.cache.parts.on {
            return;
        }
        let si = state.as_usize();
        let Some(count) = self.cache.parts.cold.get_mut(si) else { return };
        *count = count.saturating_add(1);
        if *count < 2 {
            return;
        }
        let row = si * self.num_classes;
        match self.cache.parts.of_state[si] {
            NO_PARTITION => {
                let mut pid = TRIVIAL;
                for i in 0..self.cache.members[si].len() {
                    let e = self.cache.members[si][i].1;
                    let p = self.cache.parts.of_expr(&mut self.cache.exprs, e);
                    pid = self.cache.parts.refine(pid, p);
                    if pid == IDENTITY {
                        break;
                    }
                }
                self.cache.parts.of_state[si] = pid;
                // Every transition computed so far (this one included) spreads, in one pass
                // over the row: the entry known for each part, then the missing ones filled.
                if pid != IDENTITY {
                    let labels = &self.cache.parts.labels[pid as usize];
                    let mut known = [MISSING; 256];
                    for (c, &l) in labels.iter().enumerate() {
                        if self.cache.table[row + c] != MISSING {
                            known[l as usize] = self.cache.table[row + c];
                        }
                    }
                    for (c, &l) in labels.iter().enumerate() {
                        if self.cache.table[row + c] == MISSING {
                            self.cache.table[row + c] = known[l as usize];
                        }
                    }
                }
            }
            IDENTITY => {}
            pid => self.fill_part(row, pid, class),
        }
    }

    /// Copies the entry of `class` in table row `row` to the missing entries of its part.
    pub(super) fn fill_part(&mut self, row: usize, pid: u32, class: usize) {
        let labels = &self.cache.parts.labels[pid as usize];
        let (label, entry) = (labels[class], self.cache.table[row + class]);
        for (c, &l) in labels.iter().enumerate() {
            if l == label && self.cache.table[row + c] == MISSING {
                self.cache.table[row + c] = entry;
            }
        }
    }

    /// The table entry of a transition `from` → `to`: the target with the must-end bit when
    /// the lexeme must end with the byte; DEAD from an accepting state (the lexeme ends
    /// before the byte) also carries the bit, so a plain DEAD entry always means
    /// [`Step::Reject`] and [`Lexer::step_warm`] can answer it.
    pub(super) fn entry(&self, from: StateId, to: StateId) -> StateId {
        let end = if to == StateId::DEAD {
            self.cache.flags[from.as_usize()].is_accepting()
        } else {
            self.cache.flags[to.as_usize()].must_end()
        };
        if end {
            StateId(to.0 | MUST_END)
        } else {
            to
        }
    }

    /// Finds or creates the state for `members` (each member live), computing its per-state
    /// arrays and adding a table row of MISSING entries.
    pub(super) fn intern(&mut self, members: Vec<(LexemeIdx, ExprRef)>) -> Result<StateId, Error> {
        self.intern_as(members, false)
    }

    pub(super) fn intern_as(
        &mut self,
        mut members: Vec<(LexemeIdx, ExprRef)>,
        start: bool,
    ) -> Result<StateId, Error> {
        members.sort_unstable();
        let hash = self.hasher.hash_one((&members[..], start));
        let (known, starts) = (&self.cache.members, &self.cache.starts);
        let same =
            |s: &StateId| known[s.as_usize()] == members[..] && starts[s.as_usize()] == start;
        if let Some(&(_, s)) = self.cache.state_ids.find(hash, |e| same(&e.1)) {
            return Ok(s);
        }
        // Ids stay below the MUST_END bit of table entries whatever the configured limit.
        let limit = self.limits.max_states.min(MUST_END as usize - 1);
        if self.cache.flags.len() >= limit {
            return Err(ErrorKind::TooManyStates { limit }.into());
        }
        let cost0 = self.cache.exprs.cost();
        let mut accepting = LexemeSet::new();
        let mut possible = LexemeSet::new();
        let mut extensible = false;
        let mut forced: Option<Option<u8>> = None; // None: no member seen yet
        for &(lx, e) in members.iter() {
            possible.insert(lx);
            if self.cache.exprs.is_nullable(e) {
                accepting.insert(lx);
            }
            // Exact single next byte, when derivre can tell cheaply.
            let nb = self.cache.next_byte.next_byte(&self.cache.exprs, e);
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
            if !extensible && !start && !self.cache.exprs.is_nullable(e) {
                extensible = true;
            }
            if !extensible {
                extensible = match nb {
                    NextByte::ForcedEOI | NextByte::Dead => false,
                    NextByte::ForcedByte(_) => true,
                    // Does `e` match a non-empty string? Read off its structure where
                    // it can be (a whitespace lexeme at a start state), else checked.
                    _ => match matches_nonempty(&self.cache.exprs, e) {
                        Some(ne) => ne,
                        _ => {
                            let ne = self
                                .cache
                                .exprs
                                .mk_and(&mut vec![e, ExprRef::NON_EMPTY_BYTE_STRING]);
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
            .and_then(|m| self.cache.exprs.lookahead_len(m.1))
            .unwrap_or(0) as u32;
        let id = StateId::new(self.cache.flags.len());
        self.cache.first_lookahead.push(first_lookahead);
        self.cache.flags.push(flags);
        self.cache.accepting.push(self.cache.sets.intern(accepting, &self.hasher));
        self.cache.possible.push(self.cache.sets.intern(possible, &self.hasher));
        self.cache.forced.push(forced);
        self.cache.members.push(&members);
        self.cache.starts.push(start);
        self.cache.state_ids.insert_unique(hash, (hash, id), |e| e.0);
        self.cache.table.resize(self.cache.table.len() + self.num_classes, MISSING);
        self.cache.parts.of_state.push(NO_PARTITION);
        self.cache.parts.cold.push(0);
        Ok(id)
    }
}

impl DerivreLexer {
    /// [`Lexer::restrict`]: each listed lexeme's member intersected with its finish (the
    /// empty string for `None`), kept if still live.
    pub(super) fn restrict_members(
        &mut self,
        state: StateId,
        finish: &[(LexemeIdx, Option<&RegexSpec>)],
    ) -> Result<StateId, Error> {
        if state == StateId::DEAD {
            return Ok(state);
        }
        let Some(members) = self.cache.members.get(state.as_usize()) else {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        };
        let members = members.to_vec();
        let cost0 = self.cache.exprs.cost();
        let mut next = Vec::with_capacity(members.len());
        for (lx, e) in members {
            let Some(&(_, f)) = finish.iter().find(|(l, _)| *l == lx) else {
                next.push((lx, e));
                continue;
            };
            let r = match f {
                None if self.cache.exprs.is_nullable(e) => ExprRef::EMPTY_STRING,
                None => ExprRef::NO_MATCH,
                Some(spec) => {
                    let Some(f) = self.prefix_query_expr(spec) else {
                        let feature = "finish";
                        let lexeme = self.spec.lexemes.get(lx.as_usize());
                        let lexeme = lexeme.map_or_else(String::new, |l| l.name.clone());
                        return Err(ErrorKind::Unsupported { lexeme, feature }.into());
                    };
                    self.cache.exprs.mk_and(&mut vec![e, f])
                }
            };
            if r != ExprRef::NO_MATCH && self.is_live(r, cost0)? {
                next.push((lx, r));
            }
        }
        if next.is_empty() {
            return Ok(StateId::DEAD);
        }
        self.intern(next)
    }
}
