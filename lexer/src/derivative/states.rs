//! Per-state storage: the members of every state in one array ([`MemberStore`]) and the
//! distinct accepting / possible sets, interned ([`SetPool`]).

use super::*;

/// The members of every state in one array (state `s`'s: `data[spans[s]..spans[s + 1]]`):
/// a copy of the lexer (each new matcher of a grammar copies its template) copies two
/// plain arrays, where a box per state took an allocation per state.
#[derive(Clone)]
pub(super) struct MemberStore {
    pub(super) data: Vec<Member>,
    pub(super) spans: Vec<u32>,
}

impl Default for MemberStore {
    fn default() -> Self {
        MemberStore { data: Vec::new(), spans: vec![0] }
    }
}

impl MemberStore {
    pub(super) fn get(&self, state: usize) -> Option<&[Member]> {
        let (&lo, &hi) = (self.spans.get(state)?, self.spans.get(state + 1)?);
        Some(&self.data[lo as usize..hi as usize])
    }

    /// A copy with room for `states` more states (of as many members as the average).
    pub(super) fn with_room(&self, states: usize) -> MemberStore {
        let n = self.spans.len().max(2) - 1;
        let per_state = self.data.len().div_ceil(n).max(1);
        MemberStore {
            data: with_room(&self.data, states * per_state),
            spans: with_room(&self.spans, states),
        }
    }

    pub(super) fn push(&mut self, members: &[Member]) {
        self.data.extend_from_slice(members);
        self.spans.push(u32::try_from(self.data.len()).expect("fewer than 2^32 members"));
    }

    pub(super) fn num_bytes(&self) -> usize {
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
pub(super) struct SetPool {
    pub(super) sets: Vec<Arc<LexemeSet>>,
    pub(super) ids: HashTable<u32>,
}

impl SetPool {
    pub(super) fn intern(&mut self, set: LexemeSet, hasher: &DefaultHashBuilder) -> u32 {
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
    pub(super) fn num_bytes(&self) -> usize {
        // Each set: its words, and the `Arc`'s allocation (two counts and the set).
        let sets: usize = self.sets.iter().map(|s| s.num_bytes() + 16).sum();
        let each = std::mem::size_of::<Arc<LexemeSet>>() + std::mem::size_of::<LexemeSet>();
        sets + self.sets.capacity() * each + self.ids.capacity() * 4
    }
}
