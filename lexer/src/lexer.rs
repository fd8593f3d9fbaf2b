//! The [`Lexer`] trait, its per-state flags, and the [`Checked`] wrapper for foreign
//! implementations.

use crate::{Error, ErrorKind, LexemeIdx, LexemeSet, RegexSpec, StateId};

/// Cheap per-state facts, computed once when a state is created and read on the hot path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StateFlags(u8);

impl StateFlags {
    /// Some lexeme of the state matches the bytes read so far.
    pub const ACCEPTING: StateFlags = StateFlags(1);
    /// Accepting, and a lazy lexeme is among the accepting ones.
    pub const LAZY_ACCEPTING: StateFlags = StateFlags(2);
    /// No byte leads to a live state (every live lexeme matches nothing longer).
    pub const NO_EXTENSION: StateFlags = StateFlags(4);

    /// The empty set of flags (the flags of [`StateId::DEAD`]).
    pub const fn empty() -> Self {
        StateFlags(0)
    }

    /// Both sets of flags.
    #[must_use]
    pub const fn union(self, other: StateFlags) -> Self {
        StateFlags(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: StateFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Some lexeme matches the bytes read so far.
    #[inline(always)]
    pub const fn is_accepting(self) -> bool {
        self.0 & Self::ACCEPTING.0 != 0
    }

    /// The lexeme must end here, with the byte that led to this state: the state is accepting
    /// and either an accepting lexeme is lazy or no byte can extend the match.
    #[inline(always)]
    pub const fn must_end(self) -> bool {
        self.is_accepting() && self.0 & (Self::LAZY_ACCEPTING.0 | Self::NO_EXTENSION.0) != 0
    }

    /// The raw bits.
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl std::ops::BitOr for StateFlags {
    type Output = StateFlags;

    /// Both sets of flags (as [`StateFlags::union`]).
    fn bitor(self, other: StateFlags) -> StateFlags {
        self.union(other)
    }
}

impl std::ops::BitOrAssign for StateFlags {
    fn bitor_assign(&mut self, other: StateFlags) {
        *self = self.union(other);
    }
}

/// What one byte does to the lexeme being read; see [`Lexer::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The byte extends the lexeme; go on from this (live) state. It may be accepting, in
    /// which case a greedy lexeme may still end before a later byte.
    Continue(StateId),
    /// The lexeme ends *with* this byte: the state is accepting and [`StateFlags::must_end`]
    /// holds (lazy lexeme, or no extension possible). Its lexemes are
    /// [`Lexer::accepting`] of this state; the next byte starts a new lexeme.
    EndWith(StateId),
    /// The byte cannot extend the lexeme, but the state before it was accepting: the lexeme
    /// (greedy, longest match) ends *before* this byte, with the lexemes
    /// [`Lexer::accepting`] of the previous state. The byte must be fed again from a new
    /// start state.
    EndBefore,
    /// The byte cannot extend the lexeme and the state before it was not accepting.
    Reject,
}

/// The answer of [`Lexer::check_prefixes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Containment {
    /// Proven: every string of the query, read from the state, leads to a live state.
    Contained,
    /// Not proven (maybe false, maybe too costly to decide, maybe not implemented).
    Unknown,
}

/// A lexer: a DFA over bytes whose states are sets of lexemes still alive, built for the set
/// of lexemes the parser allows.
///
/// The trait is safe to implement; callers in this workspace never rely on an
/// implementation for memory safety, and ids coming back from one can be bounds-checked
/// with [`Checked`].
///
/// **Ownership.** Methods that may build states take `&mut self`: the lexer owns its
/// transition cache, so a warm lexer answers with a table lookup. A parser owns one lexer
/// per matcher; cloning a matcher clones the lexer with its warm table.
///
/// **Protocol** (greedy lexemes match the longest string, lazy ones the shortest): start
/// with [`start_state`](Lexer::start_state) for the allowed lexemes (plus skip lexemes where
/// skipping is allowed), then feed bytes with [`step`](Lexer::step) (or
/// [`advance`](Lexer::advance) plus [`flags`](Lexer::flags)), and see [`Step`] for when a
/// lexeme ends. When several lexemes accept, the lowest [`LexemeIdx`] has priority; the
/// whole set is [`accepting`](Lexer::accepting).
pub trait Lexer {
    /// The number of lexemes in the spec; every [`LexemeIdx`] is below it.
    fn num_lexemes(&self) -> usize;

    /// The number of states created so far; every [`StateId`] returned is below it.
    fn num_states(&self) -> usize;

    /// The state before the first byte of a lexeme, when exactly the lexemes of `allowed`
    /// may match. [`StateId::DEAD`] if none of them matches anything. Fails for an index
    /// out of bounds ([`ErrorKind::InvalidLexeme`]) or on a limit.
    fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error>;

    /// The state after `byte`; [`StateId::DEAD`] when no lexeme of `state` can go on with
    /// it. `advance(DEAD, b) == DEAD`. In a warm lexer this is a table lookup. Fails only
    /// when computing a new state hits a limit, or for a state this lexer never returned.
    fn advance(&mut self, state: StateId, byte: u8) -> Result<StateId, Error>;

    /// The state's flags (empty for [`StateId::DEAD`] and for unknown ids).
    fn flags(&self, state: StateId) -> StateFlags;

    /// The lexemes that match the bytes read so far (empty for DEAD and unknown ids).
    fn accepting(&self, state: StateId) -> &LexemeSet;

    /// The lexemes still alive: some extension of the bytes read so far matches them.
    fn possible(&self, state: StateId) -> &LexemeSet;

    /// The byte every continuation of `state` must start with, if there is exactly one and
    /// the state is not accepting (so a caller may append it without asking the model).
    /// `None` is always a correct answer; `Some(b)` must be exact.
    fn forced_byte(&mut self, state: StateId) -> Result<Option<u8>, Error> {
        let _ = state;
        Ok(None)
    }

    /// For an accepting `lexeme` of `state`: how many of the last bytes belong to its
    /// trailing [`RegexSpec::LookAhead`] (0 when it has none).
    fn lookahead_len(&self, state: StateId, lexeme: LexemeIdx) -> usize {
        let _ = (state, lexeme);
        0
    }

    /// Whether every string of `query`, read from `state`, leads to a live state (that is,
    /// is a prefix of a string some lexeme of `state` matches). The slicer uses it to allow a
    /// whole vocabulary slice at once. The default answers queries of the form `C{m,n}`
    /// (a character class repeated) by walking this lexer's states
    /// ([`crate::prefixes`]) and anything else with [`Containment::Unknown`].
    fn check_prefixes(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        match crate::prefixes::ClassRepeat::parse_cached(query) {
            Some(q) => crate::prefixes::check_class_repeat(self, state, &q),
            None => Containment::Unknown,
        }
    }

    /// [`check_prefixes`](Lexer::check_prefixes) where a proof saves little (a small
    /// slice, whose trie walk is cheap) and should cost as little: it may fill in
    /// transitions between states that exist but creates no state, and answers
    /// [`Containment::Unknown`] where it would need one (e.g. free text up to `<tool_call>`
    /// against a slice of strings holding `<`: building the delimiter's states to prove
    /// nothing costs more than walking the slice). Default: `check_prefixes`.
    fn check_prefixes_cheap(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        self.check_prefixes(state, query)
    }

    /// Heap bytes owned (transition table, per-state arrays, engine caches).
    fn num_bytes(&self) -> usize;

    /// The state with the members of the lexemes in `finish` restricted to what their
    /// finish still allows (`None`: the empty string, so the lexeme must end here); the
    /// other members kept. [`StateId::DEAD`] when nothing is left. A parser calls it when a
    /// token budget runs out mid-lexeme. Default: unsupported (an error).
    fn restrict(
        &mut self,
        state: StateId,
        finish: &[(LexemeIdx, Option<&RegexSpec>)],
    ) -> Result<StateId, Error> {
        let _ = (state, finish);
        Err(ErrorKind::Unsupported { lexeme: "(token budget)".into(), feature: "restrict" }.into())
    }

    /// The hot path of [`step`](Lexer::step): `Some(next)` when the transition is already
    /// known and is [`Step::Continue`]`(next)`, `Some(StateId::DEAD)` when it is known to be
    /// [`Step::Reject`]; `None` when it is not known yet or is anything else (then call
    /// `step`). Never builds anything. Default: always `None`.
    #[inline]
    fn step_warm(&self, state: StateId, byte: u8) -> Option<StateId> {
        let _ = (state, byte);
        None
    }

    /// [`step_warm`](Lexer::step_warm) telling a known transition that ends a lexeme
    /// (`Some(None)`: [`Step::EndBefore`] or [`Step::EndWith`]) from one not known yet
    /// (`None`). Never builds anything. Default: `step_warm`'s answer.
    #[inline]
    fn step_known(&self, state: StateId, byte: u8) -> Option<Option<StateId>> {
        self.step_warm(state, byte).map(Some)
    }

    /// [`advance`](Lexer::advance) plus the flags, as one answer for a parser driving the
    /// lexer byte by byte.
    #[inline]
    fn step(&mut self, state: StateId, byte: u8) -> Result<Step, Error> {
        let next = self.advance(state, byte)?;
        Ok(if next == StateId::DEAD {
            if self.flags(state).is_accepting() {
                Step::EndBefore
            } else {
                Step::Reject
            }
        } else if self.flags(next).must_end() {
            Step::EndWith(next)
        } else {
            Step::Continue(next)
        })
    }
}

impl<L: Lexer + ?Sized> Lexer for Box<L> {
    fn num_lexemes(&self) -> usize {
        (**self).num_lexemes()
    }
    fn num_states(&self) -> usize {
        (**self).num_states()
    }
    fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error> {
        (**self).start_state(allowed)
    }
    #[inline]
    fn advance(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        (**self).advance(state, byte)
    }
    #[inline]
    fn step_warm(&self, state: StateId, byte: u8) -> Option<StateId> {
        (**self).step_warm(state, byte)
    }
    #[inline]
    fn step_known(&self, state: StateId, byte: u8) -> Option<Option<StateId>> {
        (**self).step_known(state, byte)
    }
    #[inline]
    fn step(&mut self, state: StateId, byte: u8) -> Result<Step, Error> {
        (**self).step(state, byte)
    }
    fn flags(&self, state: StateId) -> StateFlags {
        (**self).flags(state)
    }
    fn accepting(&self, state: StateId) -> &LexemeSet {
        (**self).accepting(state)
    }
    fn possible(&self, state: StateId) -> &LexemeSet {
        (**self).possible(state)
    }
    fn forced_byte(&mut self, state: StateId) -> Result<Option<u8>, Error> {
        (**self).forced_byte(state)
    }
    fn lookahead_len(&self, state: StateId, lexeme: LexemeIdx) -> usize {
        (**self).lookahead_len(state, lexeme)
    }
    fn check_prefixes(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        (**self).check_prefixes(state, query)
    }
    fn check_prefixes_cheap(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        (**self).check_prefixes_cheap(state, query)
    }
    fn num_bytes(&self) -> usize {
        (**self).num_bytes()
    }
    fn restrict(
        &mut self,
        state: StateId,
        finish: &[(LexemeIdx, Option<&RegexSpec>)],
    ) -> Result<StateId, Error> {
        (**self).restrict(state, finish)
    }
}

/// Wraps a foreign [`Lexer`] and checks what it returns: every state id is below
/// `num_states()`, and each new state's lexeme sets are within `num_lexemes()`, `possible`
/// contains `accepting`, and DEAD has no flags. A violation is an [`ErrorKind::ForeignLexer`]
/// error instead of a wrong index later.
///
/// Costs one comparison per `advance` on a known state; the checks of a state run once.
#[derive(Clone, Debug)]
pub struct Checked<L> {
    inner: L,
    /// States below this have been checked.
    checked_below: usize,
}

impl<L: Lexer> Checked<L> {
    /// Wraps `inner`.
    pub fn new(inner: L) -> Self {
        Checked { inner, checked_below: 1 }
    }

    /// The wrapped lexer.
    pub fn into_inner(self) -> L {
        self.inner
    }

    fn check(&mut self, state: StateId) -> Result<StateId, Error> {
        if state.as_usize() < self.checked_below {
            return Ok(state);
        }
        self.check_cold(state)
    }

    #[inline(never)]
    fn check_cold(&mut self, state: StateId) -> Result<StateId, Error> {
        let bad = |message: String| Err(ErrorKind::ForeignLexer { message }.into());
        let n = self.inner.num_states();
        if state.as_usize() >= n {
            return bad(format!("state {} >= num_states() = {n}", state.0));
        }
        let nl = self.inner.num_lexemes();
        for s in self.checked_below..n {
            let s = StateId::new(s);
            let (acc, pos) = (self.inner.accepting(s), self.inner.possible(s));
            if acc.bound() > nl || pos.bound() > nl {
                return bad(format!("state {} names a lexeme >= {nl}", s.0));
            }
            let mut a = acc.clone();
            a.intersect_with(pos);
            if &a != acc {
                return bad(format!("state {}: accepting not within possible", s.0));
            }
            if self.inner.flags(s).is_accepting() == acc.is_empty() {
                return bad(format!("state {}: ACCEPTING flag disagrees with accepting()", s.0));
            }
        }
        let dead = StateId::DEAD;
        if self.inner.flags(dead) != StateFlags::empty() || !self.inner.possible(dead).is_empty() {
            return bad("DEAD state has flags or lexemes".into());
        }
        self.checked_below = n;
        Ok(state)
    }
}

impl<L: Lexer> Lexer for Checked<L> {
    fn num_lexemes(&self) -> usize {
        self.inner.num_lexemes()
    }
    fn num_states(&self) -> usize {
        self.checked_below
    }
    fn start_state(&mut self, allowed: &LexemeSet) -> Result<StateId, Error> {
        let s = self.inner.start_state(allowed)?;
        self.check(s)
    }
    #[inline]
    fn advance(&mut self, state: StateId, byte: u8) -> Result<StateId, Error> {
        if state.as_usize() >= self.checked_below {
            return Err(ErrorKind::InvalidState { state: state.0 }.into());
        }
        let s = self.inner.advance(state, byte)?;
        self.check(s)
    }
    fn flags(&self, state: StateId) -> StateFlags {
        if state.as_usize() < self.checked_below {
            self.inner.flags(state)
        } else {
            StateFlags::empty()
        }
    }
    fn accepting(&self, state: StateId) -> &LexemeSet {
        if state.as_usize() < self.checked_below {
            self.inner.accepting(state)
        } else {
            &EMPTY
        }
    }
    fn possible(&self, state: StateId) -> &LexemeSet {
        if state.as_usize() < self.checked_below {
            self.inner.possible(state)
        } else {
            &EMPTY
        }
    }
    fn forced_byte(&mut self, state: StateId) -> Result<Option<u8>, Error> {
        if state.as_usize() >= self.checked_below {
            return Ok(None);
        }
        self.inner.forced_byte(state)
    }
    fn lookahead_len(&self, state: StateId, lexeme: LexemeIdx) -> usize {
        self.inner.lookahead_len(state, lexeme)
    }
    fn check_prefixes(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        self.inner.check_prefixes(state, query)
    }
    fn check_prefixes_cheap(&mut self, state: StateId, query: &RegexSpec) -> Containment {
        self.inner.check_prefixes_cheap(state, query)
    }
    fn num_bytes(&self) -> usize {
        self.inner.num_bytes()
    }
    fn restrict(
        &mut self,
        state: StateId,
        finish: &[(LexemeIdx, Option<&RegexSpec>)],
    ) -> Result<StateId, Error> {
        let s = self.inner.restrict(state, finish)?;
        self.check(s)
    }
}

pub(crate) static EMPTY: LexemeSet = LexemeSet::new();
