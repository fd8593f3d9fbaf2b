//! Id newtypes and the [`LexemeSet`] bitset. All `as` casts between ids and `usize` live here.

use serde::{Deserialize, Serialize};

/// The index of a lexeme in its [`LexerSpec`](crate::LexerSpec), in the order lexemes were added.
///
/// A lower index means a higher priority when several lexemes accept the same text
/// (a keyword added before an identifier wins, as in most lexer generators).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LexemeIdx(pub u32);

impl LexemeIdx {
    /// Wraps an index.
    #[inline]
    pub const fn new(idx: usize) -> Self {
        LexemeIdx(idx as u32)
    }

    /// The index as a `usize`, for indexing per-lexeme arrays.
    #[inline]
    pub const fn as_usize(self) -> usize {
        self.0 as usize
    }
}

/// A lexer state. Only meaningful for the lexer that returned it.
///
/// [`StateId::DEAD`] (0) is the state from which no lexeme can match: the hot path of a
/// caller tests `state == StateId::DEAD`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StateId(pub u32);

impl StateId {
    /// The dead state: no allowed lexeme can match any extension of the bytes so far.
    pub const DEAD: StateId = StateId(0);

    /// Wraps an index.
    #[inline]
    pub const fn new(idx: usize) -> Self {
        StateId(idx as u32)
    }

    /// The state as a `usize`, for indexing per-state arrays.
    #[inline]
    pub const fn as_usize(self) -> usize {
        self.0 as usize
    }

    /// Whether this is [`StateId::DEAD`].
    #[inline]
    pub const fn is_dead(self) -> bool {
        self.0 == 0
    }
}

/// A set of lexemes, as a bitset. Small (one word holds 64 lexemes), cheap to clone,
/// hashable (equal sets hash equally whatever capacity they were built with).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct LexemeSet {
    // Invariant: no trailing zero word, so equality and hashing are on the members only.
    words: Vec<u64>,
}

impl LexemeSet {
    /// The empty set.
    pub const fn new() -> Self {
        LexemeSet { words: Vec::new() }
    }

    /// The set `{0, 1, ..., n-1}`.
    pub fn all(n: usize) -> Self {
        let mut s = LexemeSet::new();
        for i in 0..n {
            s.insert(LexemeIdx::new(i));
        }
        s
    }

    /// Adds `idx`; returns whether it was absent.
    pub fn insert(&mut self, idx: LexemeIdx) -> bool {
        let (w, bit) = (idx.as_usize() / 64, idx.as_usize() % 64);
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        let absent = self.words[w] & (1 << bit) == 0;
        self.words[w] |= 1 << bit;
        absent
    }

    /// Removes `idx`; returns whether it was present.
    pub fn remove(&mut self, idx: LexemeIdx) -> bool {
        let (w, bit) = (idx.as_usize() / 64, idx.as_usize() % 64);
        let present = self.contains(idx);
        if present {
            self.words[w] &= !(1 << bit);
            self.trim();
        }
        present
    }

    /// Whether `idx` is in the set.
    #[inline]
    pub fn contains(&self, idx: LexemeIdx) -> bool {
        let (w, bit) = (idx.as_usize() / 64, idx.as_usize() % 64);
        self.words.get(w).is_some_and(|x| x & (1 << bit) != 0)
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The smallest member (the highest-priority lexeme), if any.
    pub fn first(&self) -> Option<LexemeIdx> {
        self.iter().next()
    }

    /// One past the largest member (0 for the empty set): every member is below it.
    pub fn bound(&self) -> usize {
        match self.words.last() {
            None => 0,
            Some(w) => (self.words.len() - 1) * 64 + (64 - w.leading_zeros() as usize),
        }
    }

    /// Adds every member of `other`.
    pub fn union_with(&mut self, other: &LexemeSet) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// Keeps only the members also in `other`.
    pub fn intersect_with(&mut self, other: &LexemeSet) {
        self.words.truncate(other.words.len());
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
        self.trim();
    }

    /// Whether the two sets share a member.
    pub fn intersects(&self, other: &LexemeSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = LexemeIdx> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(LexemeIdx::new(wi * 64 + bit))
            })
        })
    }

    /// Heap bytes owned by the set.
    pub fn num_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
    }
}

impl FromIterator<LexemeIdx> for LexemeSet {
    fn from_iter<T: IntoIterator<Item = LexemeIdx>>(iter: T) -> Self {
        let mut s = LexemeSet::new();
        for i in iter {
            s.insert(i);
        }
        s
    }
}

impl std::fmt::Debug for LexemeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter().map(|i| i.0)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_trailing_zero_words() {
        let mut a = LexemeSet::new();
        a.insert(LexemeIdx(130));
        a.insert(LexemeIdx(3));
        a.remove(LexemeIdx(130));
        assert_eq!(a.words.len(), 1);
        assert_eq!(a, [LexemeIdx(3)].into_iter().collect());
        assert_eq!(a.bound(), 4);
        let mut b = LexemeSet::all(100);
        b.intersect_with(&a);
        assert_eq!(b, a);
    }
}
