//! Running a batch of per-matcher work on a rayon pool with the calling thread taking part.
//!
//! Measured on the 2-core machine (`cargo bench -p llguidance --bench batch`), handing the
//! whole batch to the pool (`par_chunks_mut`, the caller blocked) gained nothing over a
//! plain loop: the caller, which has just consumed every matcher's token and so has their
//! data in its cache, sat idle while the pool threads pulled that data over, in a different
//! order every batch. Here the caller works from the front of the batch and the pool's
//! threads from the back, in small runs claimed one at a time: each thread keeps roughly the
//! same matchers from batch to batch, and a slow mask (a cold lexer state) is balanced by the
//! other threads claiming more runs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// How long a helper woken ahead of a batch ([`prewake`]) waits for it, spinning.
const PREWAKE_SPIN: Duration = Duration::from_millis(2);

/// A helper woken ahead of the next batch, on the pool of the last batch (rayon's global
/// pool or one given by [`for_each_split_shared`]). A pool thread that has gone to sleep
/// starts 80-620 µs after it is handed a batch on the 2-core machine (measured inside the
/// batch bench), a large part of a batch of 64 masks; a server consumes every
/// sequence's token right before it asks for the next batch, so the first consume after a
/// batch wakes one helper ([`prewake`]), which spins until the batch opens (at most
/// [`PREWAKE_SPIN`]) and joins it at once.
struct Prewake {
    /// A batch that wakes helpers ahead ran, and no helper was woken since.
    armed: AtomicBool,
    /// Helpers spinning now.
    spinning: AtomicUsize,
    /// Bumped when a batch opens (after `open` is set).
    epoch: AtomicU64,
    /// The batch open now, if any.
    open: Mutex<Option<Arc<Batch>>>,
    /// The pool of the last batch (`None`: the global one).
    pool: Mutex<Option<Weak<rayon::ThreadPool>>>,
}

static NEXT: Prewake = Prewake {
    armed: AtomicBool::new(false),
    spinning: AtomicUsize::new(0),
    epoch: AtomicU64::new(0),
    open: Mutex::new(None),
    pool: Mutex::new(None),
};

/// Wakes a helper for the next batch if a batch ran (on rayon's global pool or through
/// [`for_each_split_shared`]) since the last call: the first of a step's consumes; the others
/// find nothing to do (one atomic load). Called by
/// [`Matcher::consume_token`](crate::Matcher::consume_token).
pub fn prewake() {
    if !NEXT.armed.load(Ordering::Relaxed) || !NEXT.armed.swap(false, Ordering::AcqRel) {
        return;
    }
    let pool = NEXT.pool.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let pool = match pool {
        Some(w) => match w.upgrade() {
            Some(p) => Some(p),
            None => return,
        },
        None => None,
    };
    let since = NEXT.epoch.load(Ordering::SeqCst);
    NEXT.spinning.fetch_add(1, Ordering::SeqCst);
    let job = move || {
        let opened = || NEXT.epoch.load(Ordering::SeqCst) != since;
        let t0 = Instant::now();
        let mut spins = 0u32;
        while !opened() {
            spins = spins.wrapping_add(1);
            if spins % 64 == 0 && t0.elapsed() > PREWAKE_SPIN {
                break;
            }
            // No `spin_loop` hint (PAUSE): a hypervisor may deschedule a vCPU that loops on
            // PAUSE, taking it for a lock waiter; the batch bench was no slower without it.
        }
        NEXT.spinning.fetch_sub(1, Ordering::SeqCst);
        // Checked again after leaving the count: a batch that opened meanwhile saw this
        // helper counted and spawned none of its own.
        if opened() {
            let b = NEXT.open.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(b) = b {
                #[cfg(test)]
                tests::PREWAKE_JOINS.fetch_add(1, Ordering::Relaxed);
                b.help();
            }
        }
    };
    match pool {
        Some(p) => p.spawn(job),
        None => rayon::spawn(job),
    }
}

/// Claims of runs from both ends of `0..n`: the front in the low 32 bits, the back (one
/// past the last unclaimed run) in the high 32 bits.
struct Ends(AtomicU64);

impl Ends {
    fn new(n: usize) -> Ends {
        Ends(AtomicU64::new((n as u64) << 32))
    }

    /// The next unclaimed run from the front (or the back), `None` when all are claimed.
    fn claim(&self, front: bool) -> Option<usize> {
        let mut v = self.0.load(Ordering::Relaxed);
        loop {
            let (f, b) = (v & 0xFFFF_FFFF, v >> 32);
            if f >= b {
                return None;
            }
            let (next, got) = if front { (v + 1, f) } else { (v - (1 << 32), b - 1) };
            match self.0.compare_exchange_weak(v, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(got as usize),
                Err(now) => v = now,
            }
        }
    }
}

/// Calls `f` on every item, on `pool` (`None`: rayon's global pool) and the calling thread
/// together (see the module's notes). Items are taken in runs. The caller waits only for the
/// runs other threads have started: a pool thread that wakes after the caller has done
/// everything (a small batch, masks answered from cache) finds the batch closed and leaves,
/// so a small batch costs about what a plain loop costs. A panic in `f` is passed on to the
/// caller once no other thread is inside the batch.
pub fn for_each_split<T: Send>(
    pool: Option<&rayon::ThreadPool>,
    items: &mut [T],
    f: impl Fn(&mut T) + Sync,
) {
    // Helpers are woken ahead (`prewake`) for the global pool, not for a borrowed one.
    split(pool, pool.is_none().then_some(None), items, f)
}

/// [`for_each_split`] on `pool`, whose next batch gets a helper woken ahead by the first
/// consume after this one ([`prewake`]), as batches on rayon's global pool do.
pub fn for_each_split_shared<T: Send>(
    pool: &Arc<rayon::ThreadPool>,
    items: &mut [T],
    f: impl Fn(&mut T) + Sync,
) {
    split(Some(pool), Some(Some(Arc::downgrade(pool))), items, f)
}

/// `wake`: `Some(pool)` when the next batch gets a helper woken ahead, on `pool` (`None`:
/// the global pool).
fn split<T: Send>(
    pool: Option<&rayon::ThreadPool>,
    wake: Option<Option<Weak<rayon::ThreadPool>>>,
    items: &mut [T],
    f: impl Fn(&mut T) + Sync,
) {
    let threads = pool.map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    let n = items.len();
    if threads <= 1 || n <= 1 {
        items.iter_mut().for_each(f);
        return;
    }
    // About eight runs per thread: few claims, yet room to even out a slow mask.
    let run = n.div_ceil(8 * threads);
    let runs: Vec<Mutex<&mut [T]>> = items.chunks_mut(run).map(Mutex::new).collect();
    let ends = Ends::new(runs.len());
    let work = |front: bool| {
        while let Some(i) = ends.claim(front) {
            // Each run is claimed once: the lock is never waited for.
            let mut r = runs[i].lock().unwrap_or_else(|e| e.into_inner());
            r.iter_mut().for_each(&f);
        }
    };
    let work: &(dyn Fn(bool) + Sync) = &work;
    // SAFETY: a pool job calls `work` only while counted in `inside` (`Batch::help`, which
    // checks `closed` under the same lock before counting itself in), and `Closer` (below,
    // dropped also on unwinding) sets `closed` and waits until `inside` is zero before this
    // frame, which owns what `work` borrows, is gone. A job that starts later finds the batch
    // closed and never touches `work`.
    let work: &'static (dyn Fn(bool) + Sync) = unsafe { std::mem::transmute(work) };
    let batch = Arc::new(Batch {
        work,
        state: Mutex::new(BatchState { closed: false, inside: 0, panic: None }),
        left: Condvar::new(),
    });
    let closer = Closer(&batch);
    let mut helpers = threads.min(runs.len()) - 1;
    if wake.is_some() {
        // Helpers woken ahead (`prewake`) join without a job of their own.
        *NEXT.open.lock().unwrap_or_else(|e| e.into_inner()) = Some(batch.clone());
        NEXT.epoch.fetch_add(1, Ordering::SeqCst);
        helpers = helpers.saturating_sub(NEXT.spinning.load(Ordering::SeqCst));
    }
    for _ in 0..helpers {
        let b = batch.clone();
        let job = move || b.help();
        match pool {
            Some(p) => p.spawn(job),
            None => rayon::spawn(job),
        }
    }
    work(true);
    drop(closer);
    if let Some(pool) = wake {
        let mut open = NEXT.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.as_ref().is_some_and(|b| Arc::ptr_eq(b, &batch)) {
            *open = None;
        }
        drop(open);
        *NEXT.pool.lock().unwrap_or_else(|e| e.into_inner()) = pool;
        NEXT.armed.store(true, Ordering::Release);
    }
    let panic = batch.state.lock().unwrap_or_else(|e| e.into_inner()).panic.take();
    if let Some(p) = panic {
        std::panic::resume_unwind(p);
    }
}

/// A batch as the pool's jobs see it.
struct Batch {
    work: &'static (dyn Fn(bool) + Sync),
    state: Mutex<BatchState>,
    left: Condvar,
}

struct BatchState {
    /// The caller is done: jobs that start now leave at once.
    closed: bool,
    /// Jobs inside `work`.
    inside: usize,
    /// A panic in a job, for the caller to pass on.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

impl Batch {
    /// A pool job: claims runs from the back until none is left, unless the batch is closed.
    fn help(&self) {
        {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.closed {
                return;
            }
            s.inside += 1;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.work)(false)));
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.inside -= 1;
        if let Err(p) = r {
            s.panic.get_or_insert(p);
        }
        if s.inside == 0 {
            self.left.notify_all();
        }
    }
}

/// Closes the batch and waits for the jobs inside it (also when the caller unwinds).
struct Closer<'a>(&'a Batch);

impl Drop for Closer<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        s.closed = true;
        while s.inside > 0 {
            s = self.0.left.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches a helper woken ahead joined.
    pub(super) static PREWAKE_JOINS: AtomicUsize = AtomicUsize::new(0);
    /// The tests of helpers woken ahead share `NEXT`: one at a time.
    static PREWAKE_TESTS: Mutex<()> = Mutex::new(());

    #[test]
    fn every_item_once_whatever_the_pool() {
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for n in [0, 1, 2, 7, 64, 1000] {
                let mut items: Vec<(usize, u32)> = (0..n).map(|i| (i, 0)).collect();
                for_each_split(Some(&pool), &mut items, |(i, c)| *c += 1 + *i as u32 % 3);
                for (i, c) in &items {
                    assert_eq!(*c, 1 + *i as u32 % 3, "item {i} of {n}, {threads} threads");
                }
            }
        }
        let mut items = vec![0u8; 100];
        for_each_split(None, &mut items, |x| *x += 1);
        assert!(items.iter().all(|&x| x == 1));
    }

    #[test]
    fn a_panic_reaches_the_caller_after_the_others_are_done() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let mut items: Vec<usize> = (0..64).collect();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for_each_split(Some(&pool), &mut items, |i| {
                if *i == 63 {
                    panic!("item 63");
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
                done.fetch_add(1, Ordering::SeqCst);
            })
        }));
        let msg = r.expect_err("the panic is passed on");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"item 63"));
        // Whoever panicked, no thread is still inside the batch: the count is final.
        let n = done.load(Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(done.load(Ordering::SeqCst), n);
    }

    /// Batches on the global pool with a helper woken ahead of each (as consumes do), one
    /// whose helper gave up waiting, and a woken helper with no batch after it: every item
    /// is done once each time, and the helpers joined some of the batches.
    #[test]
    fn helpers_woken_ahead_join_the_next_batch() {
        let _one = PREWAKE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let joined = AtomicUsize::new(0);
        let caller = std::thread::current().id();
        let joins = PREWAKE_JOINS.load(Ordering::Relaxed);
        for round in 0..200 {
            prewake();
            if round % 50 == 7 {
                // Longer than a helper waits.
                std::thread::sleep(PREWAKE_SPIN * 2);
            } else if round % 2 == 0 {
                // The helper has started and spins when the batch opens (as after a step's
                // consumes; it starts within ~0.6 ms and waits `PREWAKE_SPIN`).
                std::thread::sleep(PREWAKE_SPIN / 2);
            }
            let mut items: Vec<(usize, u32)> = (0..64).map(|i| (i, 0)).collect();
            for_each_split(None, &mut items, |(_, c)| {
                if std::thread::current().id() != caller {
                    joined.fetch_add(1, Ordering::Relaxed);
                }
                // Enough work per item for a helper to arrive before the caller is done.
                let t = Instant::now();
                while t.elapsed() < Duration::from_micros(20) {
                    std::hint::spin_loop();
                }
                *c += 1;
            });
            assert!(items.iter().all(|&(_, c)| c == 1), "round {round}");
        }
        prewake();
        // It gives up after `PREWAKE_SPIN` (other tests may wake helpers of their own).
        let t = Instant::now();
        while NEXT.spinning.load(Ordering::SeqCst) > 0 && t.elapsed() < PREWAKE_SPIN * 50 {
            std::thread::sleep(PREWAKE_SPIN / 4);
        }
        assert_eq!(NEXT.spinning.load(Ordering::SeqCst), 0, "a helper still spinning");
        if rayon::current_num_threads() > 1 {
            assert!(joined.load(Ordering::Relaxed) > 0, "no helper joined a batch");
            // Helpers woken ahead joined (none would without them; how many depends on the
            // machine's load: other tests run beside this one).
            let n = PREWAKE_JOINS.load(Ordering::Relaxed) - joins;
            assert!(n > 0, "helpers woken ahead joined no batch");
        }
    }

    /// The same through a pool of the caller's (`for_each_split_shared`, as the Python
    /// executor's): helpers are woken on that pool.
    #[test]
    fn helpers_woken_ahead_on_a_shared_pool() {
        let _one = PREWAKE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap());
        let joins = PREWAKE_JOINS.load(Ordering::Relaxed);
        for round in 0..60 {
            prewake();
            std::thread::sleep(PREWAKE_SPIN / 2);
            let mut items: Vec<u32> = vec![0; 64];
            for_each_split_shared(&pool, &mut items, |c| {
                let t = Instant::now();
                while t.elapsed() < Duration::from_micros(20) {
                    std::hint::spin_loop();
                }
                *c += 1;
            });
            assert!(items.iter().all(|&c| c == 1), "round {round}");
        }
        let n = PREWAKE_JOINS.load(Ordering::Relaxed) - joins;
        assert!(n > 0, "helpers woken ahead joined no batch");
    }

    #[test]
    fn claims_meet_in_the_middle() {
        let e = Ends::new(5);
        let got: Vec<_> =
            [true, false, true, false, false, true, false].iter().map(|&f| e.claim(f)).collect();
        assert_eq!(got, [Some(0), Some(4), Some(1), Some(3), Some(2), None, None]);
    }
}
