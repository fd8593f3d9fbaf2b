//! [`ProcessMemo`]: a bounded memo shared by a whole process, for results that depend only
//! on their key (regex parses, nullability) and come back in every grammar of a kind.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::Mutex;

use hashbrown::HashMap;

/// A process-wide memo of at most `max` entries (cleared when full, so memory stays
/// bounded). The value is computed outside the lock; two threads may compute the same one.
pub struct ProcessMemo<K, V> {
    map: Mutex<Option<HashMap<K, V>>>,
    max: usize,
}

impl<K: Hash + Eq, V: Clone> ProcessMemo<K, V> {
    /// An empty memo (usable in a `static`).
    pub const fn new(max: usize) -> Self {
        ProcessMemo { map: Mutex::new(None), max }
    }

    /// The value for `key`, computed by `compute` the first time.
    pub fn get_or_compute<Q>(&self, key: &Q, compute: impl FnOnce() -> V) -> V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let lock = || self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = lock().as_ref().and_then(|m| m.get(key)) {
            return v.clone();
        }
        let v = compute();
        let mut guard = lock();
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= self.max {
            map.clear();
        }
        map.insert(key.to_owned(), v.clone());
        v
    }
}
