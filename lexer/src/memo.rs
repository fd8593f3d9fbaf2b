//! [`ProcessMemo`]: a bounded memo shared by a whole process, for results that depend only
//! on their key (regex parses, nullability) and come back in every grammar of a kind.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// The process that first called [`check_fork`].
static FIRST_PID: OnceLock<u32> = OnceLock::new();
/// Set by [`check_fork`] in a process forked from that one.
static FORKED: AtomicBool = AtomicBool::new(false);

/// Notes whether this process is a fork of the one that first called this (a process id
/// read: ~0.2 µs, so once per compile or new matcher, not per lock). The entry points of
/// compiling and of new matchers call it; [`lock_cache`] then reads the answer.
pub fn check_fork() {
    let pid = std::process::id();
    if *FIRST_PID.get_or_init(|| pid) != pid {
        FORKED.store(true, Ordering::Relaxed);
    }
}

/// Locks a cache's mutex; in a forked child ([`check_fork`]) only if it is free (`None`:
/// go on without the cache). A thread of the parent that held the lock at the fork does
/// not exist in the child, and waiting for it would hang the child forever (a server
/// forking workers while another thread compiles; test `python/tests/test_fork.py`). In
/// the child a lock is only ever tried: a cache skipped under contention costs time,
/// never a hang.
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

/// `wait()` before a fork is noticed, `try_()` after (a poisoned lock is taken as is).
fn guard<G>(wait: impl FnOnce() -> G, try_: impl FnOnce() -> TryLockResult<G>) -> Option<G> {
    if !FORKED.load(Ordering::Relaxed) {
        return Some(wait());
    }
    match try_() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
