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
use std::sync::Mutex;

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
/// together (see the module's notes). Items are taken in runs; `f` should not panic (a panic
/// is passed on to the caller once the other threads are done).
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
    let tasks = threads.min(runs.len()) - 1;
    match pool {
        Some(p) => p.in_place_scope(|s| spawn_and_work(s, tasks, &work)),
        None => rayon::in_place_scope(|s| spawn_and_work(s, tasks, &work)),
    }
}

/// `work(false)` on `tasks` pool threads, `work(true)` on this one.
fn spawn_and_work<'s>(s: &rayon::Scope<'s>, tasks: usize, work: &'s (dyn Fn(bool) + Sync)) {
    for _ in 0..tasks {
        s.spawn(move |_| work(false));
    }
    work(true);
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
    fn claims_meet_in_the_middle() {
        let e = Ends::new(5);
        let got: Vec<_> =
            [true, false, true, false, false, true, false].iter().map(|&f| e.claim(f)).collect();
        assert_eq!(got, [Some(0), Some(4), Some(1), Some(3), Some(2), None, None]);
    }
}
