//! The byte-level DFA: regex-automata's dense DFA copied into a compact table over our own
//! byte classes, restricted to live states (states from which a full match is reachable).

use std::collections::HashMap;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

use crate::{Budget, Config, Error, ErrorKind};

/// "No state": the transition to a dead (or non-live) state.
pub(crate) const DEAD: u32 = u32::MAX;

/// A byte DFA with only live states. Transitions to states that cannot reach a match are
/// [`DEAD`]; classes whose column is all [`DEAD`] are dead classes.
pub(crate) struct ByteDfa {
    /// Byte → class.
    pub classes: [u8; 256],
    /// Number of classes.
    pub num_classes: usize,
    /// Whether a class has at least one non-dead transition.
    pub class_live: Vec<bool>,
    /// `state * num_classes + class` → state or [`DEAD`].
    pub trans: Vec<u32>,
    /// Whether the input may end in this state (the regex matches the bytes so far).
    pub finals: Vec<bool>,
    /// The start state (always 0).
    pub initial: u32,
}

impl ByteDfa {
    pub(crate) fn num_states(&self) -> usize {
        self.finals.len()
    }

    #[inline]
    pub(crate) fn next(&self, state: u32, class: u8) -> u32 {
        self.trans[state as usize * self.num_classes + class as usize]
    }

    /// The bytes of the class `class`.
    pub(crate) fn class_bytes(&self, class: u8) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(move |b| self.classes[*b as usize] == class)
    }

    /// Compiles `regex` (implicitly anchored at both ends) into a live byte DFA.
    pub(crate) fn new(regex: &str, config: &Config) -> Result<ByteDfa, Error> {
        // MatchKind::All: a full-match test must see every match, not only leftmost-first
        // ones (with leftmost-first, `a|ab` would stop after `a`). UTF-8 mode keeps `.` and
        // classes on valid UTF-8 sequences; tokens holding partial sequences simply end in
        // the middle of one, which a byte DFA handles.
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .match_kind(MatchKind::All)
                    // regex-automata's minimizer does not watch any budget (an e-mail
                    // regex with Unicode `\w` took 1 s in it); `merge_equivalent` below
                    // minimizes with a cost limit instead.
                    .minimize(false)
                    .dfa_size_limit(Some(config.dfa_size_limit))
                    .determinize_size_limit(Some(config.dfa_size_limit)),
            )
            .syntax(syntax::Config::new().unicode(true).utf8(true))
            .thompson(
                regex_automata::nfa::thompson::Config::new()
                    .nfa_size_limit(Some(config.dfa_size_limit)),
            )
            .build(regex)
            .map_err(|e| {
                use std::error::Error as _;
                let nfa_too_big = e
                    .source()
                    .and_then(|s| s.downcast_ref::<regex_automata::nfa::thompson::BuildError>())
                    .is_some_and(|e| e.size_limit().is_some());
                if e.is_size_limit_exceeded() || nfa_too_big {
                    Error::new(
                        ErrorKind::OverBudget(Budget::DfaSize),
                        format!("regex {regex:?}: the byte DFA exceeds dfa_size_limit: {e}"),
                    )
                } else {
                    Error::new(ErrorKind::Regex, format!("regex {regex:?}: {e}"))
                }
            })?;
        let start = dfa
            .start_state_forward(&Input::new(&b""[..]).anchored(Anchored::Yes))
            .map_err(|e| Error::new(ErrorKind::Regex, format!("regex {regex:?}: {e}")))?;

        // Copy the reachable part of the DFA, one representative byte per class.
        let ra_classes = dfa.byte_classes();
        let reps: Vec<u8> = ra_classes.representatives(0..=255).filter_map(|u| u.as_u8()).collect();
        let nc = reps.len();
        let mut ids: HashMap<regex_automata::util::primitives::StateID, u32> = HashMap::new();
        let mut order = Vec::new();
        let mut trans: Vec<u32> = Vec::new();
        let mut finals = Vec::new();
        if !dfa.is_dead_state(start) {
            ids.insert(start, 0);
            order.push(start);
        }
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            i += 1;
            finals.push(dfa.is_match_state(dfa.next_eoi_state(s)));
            for &b in &reps {
                let t = dfa.next_state(s, b);
                if dfa.is_dead_state(t) {
                    trans.push(DEAD);
                } else if dfa.is_quit_state(t) {
                    return Err(Error::new(
                        ErrorKind::Regex,
                        format!("regex {regex:?}: the byte DFA gave up (quit byte {b:#x})"),
                    ));
                } else {
                    let next = order.len() as u32;
                    let id = *ids.entry(t).or_insert_with(|| {
                        order.push(t);
                        next
                    });
                    trans.push(id);
                }
            }
        }
        let n = order.len();

        // Liveness: states from which a final state is reachable (reverse BFS).
        let mut rev_start = vec![0u32; n + 1];
        for &t in &trans {
            if t != DEAD {
                rev_start[t as usize + 1] += 1;
            }
        }
        for k in 0..n {
            rev_start[k + 1] += rev_start[k];
        }
        let mut fill = rev_start.clone();
        let mut rev = vec![0u32; rev_start[n] as usize];
        for (k, &t) in trans.iter().enumerate() {
            if t != DEAD {
                rev[fill[t as usize] as usize] = (k / nc) as u32;
                fill[t as usize] += 1;
            }
        }
        let mut live = finals.clone();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&s| finals[s as usize]).collect();
        while let Some(s) = stack.pop() {
            for &p in &rev[rev_start[s as usize] as usize..rev_start[s as usize + 1] as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        if n == 0 || !live[0] {
            return Err(Error::new(
                ErrorKind::EmptyLanguage,
                format!("regex {regex:?} matches no string"),
            ));
        }
        // Renumber live states in BFS order (the start stays 0).
        let mut renum = vec![DEAD; n];
        let mut m = 0u32;
        for s in 0..n {
            if live[s] {
                renum[s] = m;
                m += 1;
            }
        }
        // Merge classes whose columns are equal over the live states; all-dead columns become
        // dead classes. This is the static dead-byte analysis: a byte in a dead class can
        // never occur in a matching string.
        let mut columns: HashMap<Vec<u32>, u8> = HashMap::new();
        let mut new_of_old = vec![0u8; nc];
        let mut class_live = Vec::new();
        for (c, slot) in new_of_old.iter_mut().enumerate() {
            let col: Vec<u32> = (0..n)
                .filter(|&s| live[s])
                .map(|s| {
                    let t = trans[s * nc + c];
                    if t == DEAD {
                        DEAD
                    } else {
                        renum[t as usize]
                    }
                })
                .collect();
            let is_live = col.iter().any(|&t| t != DEAD);
            let next = columns.len() as u8;
            *slot = *columns.entry(col).or_insert_with(|| {
                class_live.push(is_live);
                next
            });
        }
        let num_classes = columns.len();
        let mut classes = [0u8; 256];
        for b in 0..=255u8 {
            classes[b as usize] = new_of_old[ra_classes.get(b) as usize];
        }
        let mut new_trans = vec![DEAD; m as usize * num_classes];
        let mut new_finals = vec![false; m as usize];
        for s in 0..n {
            if !live[s] {
                continue;
            }
            let ns = renum[s] as usize;
            new_finals[ns] = finals[s];
            for c in 0..nc {
                let t = trans[s * nc + c];
                let nt = if t == DEAD { DEAD } else { renum[t as usize] };
                new_trans[ns * num_classes + new_of_old[c] as usize] = nt;
            }
        }
        let mut dfa = ByteDfa {
            classes,
            num_classes,
            class_live,
            trans: new_trans,
            finals: new_finals,
            initial: 0,
        };
        if config.minimize {
            dfa.merge_equivalent();
        }
        Ok(dfa)
    }

    /// Merges equivalent states (Moore's partition refinement). regex-automata's DFA is
    /// already minimal except that start states are never merged with others (`x*` has a
    /// start state and an equal loop state), and liveness pruning can make more states
    /// equal. Each round costs states × classes; beyond [`MERGE_COST_LIMIT`] the DFA is
    /// kept as it is (correct, only larger).
    fn merge_equivalent(&mut self) {
        const MERGE_COST_LIMIT: usize = 20_000_000;
        let n = self.num_states();
        let nc = self.num_classes;
        let mut block: Vec<u32> = self.finals.iter().map(|&f| f as u32).collect();
        let mut num_blocks = 0;
        let mut cost = 0usize;
        loop {
            let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
            let mut next = Vec::with_capacity(n);
            for s in 0..n {
                let mut sig = Vec::with_capacity(nc + 1);
                sig.push(block[s]);
                sig.extend(self.trans[s * nc..(s + 1) * nc].iter().map(|&t| {
                    if t == DEAD {
                        DEAD
                    } else {
                        block[t as usize]
                    }
                }));
                let k = ids.len() as u32;
                next.push(*ids.entry(sig).or_insert(k));
            }
            cost += n * (nc + 1);
            let stable = ids.len() == num_blocks;
            num_blocks = ids.len();
            block = next;
            if stable {
                break;
            }
            if cost > MERGE_COST_LIMIT {
                return;
            }
        }
        if num_blocks == n {
            return;
        }
        // Renumber blocks in order of first occurrence so the start state stays 0.
        let mut renum = vec![DEAD; num_blocks];
        let mut rep = Vec::with_capacity(num_blocks);
        for (s, &b) in block.iter().enumerate() {
            if renum[b as usize] == DEAD {
                renum[b as usize] = rep.len() as u32;
                rep.push(s);
            }
        }
        let mut trans = Vec::with_capacity(num_blocks * nc);
        let mut finals = Vec::with_capacity(num_blocks);
        for &s in &rep {
            finals.push(self.finals[s]);
            trans.extend(self.trans[s * nc..(s + 1) * nc].iter().map(|&t| {
                if t == DEAD {
                    DEAD
                } else {
                    renum[block[t as usize] as usize]
                }
            }));
        }
        self.trans = trans;
        self.finals = finals;
    }

    /// For each state: `Some((class, next))` if exactly one class leads to a live state, the
    /// class holds one byte and the state is not final, i.e. the next byte is forced.
    pub(crate) fn forced(&self) -> Vec<Option<(u8, u32)>> {
        let singleton: Vec<bool> =
            (0..self.num_classes).map(|c| self.class_bytes(c as u8).count() == 1).collect();
        (0..self.num_states() as u32)
            .map(|s| {
                if self.finals[s as usize] {
                    return None;
                }
                let mut found = None;
                for (c, &single) in singleton.iter().enumerate() {
                    let t = self.next(s, c as u8);
                    if t != DEAD {
                        if found.is_some() || !single {
                            return None;
                        }
                        found = Some((c as u8, t));
                    }
                }
                found
            })
            .collect()
    }
}
