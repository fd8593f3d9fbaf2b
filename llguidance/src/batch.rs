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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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
    for _ in 1..threads.min(runs.len()) {
        let b = batch.clone();
        let job = move || b.help();
        match pool {
            Some(p) => p.spawn(job),
            None => rayon::spawn(job),
        }
    }
    work(true);
    drop(closer);
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

    #[test]
    fn claims_meet_in_the_middle() {
        let e = Ends::new(5);
        let got: Vec<_> =
            [true, false, true, false, false, true, false].iter().map(|&f| e.claim(f)).collect();
        assert_eq!(got, [Some(0), Some(4), Some(1), Some(3), Some(2), None, None]);
    }
}
