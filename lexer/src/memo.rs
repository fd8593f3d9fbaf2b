//! [`ProcessMemo`]: a bounded memo shared by a whole process, for results that depend only
//! on their key (regex parses, nullability) and come back in every grammar of a kind.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::{
    Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError,
    TryLockResult,
};

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
        if let Some(v) = lock_cache(&self.map).and_then(|g| g.as_ref()?.get(key).cloned()) {
            return v;
        }
        let v = compute();
        let Some(mut guard) = lock_cache(&self.map) else { return v };
        let map = guard.get_or_insert_with(HashMap::new);
        if map.len() >= self.max {
            map.clear();
        }
        map.insert(key.to_owned(), v.clone());
        v
    }
}

/// The process that first locked a cache through [`lock_cache`].
static FIRST_PID: OnceLock<u32> = OnceLock::new();

/// Locks a cache's mutex, or `None` (go on without the cache) in a forked child whose lock
/// is held: by a thread of the parent, which does not exist in the child and would never
/// release it (a server forking workers while another thread compiles; test
/// `python/tests/test_fork.py`). The lock is tried first; only when it is busy is the
/// process id read (~0.2 µs) to tell a fork from contention, which waits as before.
pub fn lock_cache<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    guard(|| m.lock().unwrap_or_else(|e| e.into_inner()), || m.try_lock())
}

/// [`lock_cache`] for reading a `RwLock`.
pub fn read_cache<T>(m: &RwLock<T>) -> Option<RwLockReadGuard<'_, T>> {
    guard(|| m.read().unwrap_or_else(|e| e.into_inner()), || m.try_read())
}

/// [`lock_cache`] for writing a `RwLock`.
pub fn write_cache<T>(m: &RwLock<T>) -> Option<RwLockWriteGuard<'_, T>> {
    guard(|| m.write().unwrap_or_else(|e| e.into_inner()), || m.try_write())
}

/// `try_()`; when busy, `wait()` unless this process is a fork of the first one to lock.
fn guard<G>(wait: impl FnOnce() -> G, try_: impl FnOnce() -> TryLockResult<G>) -> Option<G> {
    let first = *FIRST_PID.get_or_init(std::process::id);
    match try_() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) if std::process::id() != first => None,
        Err(TryLockError::WouldBlock) => Some(wait()),
    }
}
