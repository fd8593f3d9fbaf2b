//! Cancellation and deadlines for long work that has no handle of its own to check: a
//! grammar's compile (the JSON Schema and Lark front ends, the grammar compiler, the lexer's
//! construction). The caller installs an [`Interrupt`] for the current thread with
//! [`scoped`]; the work calls [`check`] at coarse points (a schema node, a rule, a lexeme)
//! and returns the [`Interrupted`] it gets as its error. Without an installed interrupt
//! [`check`] is one thread-local read.
//!
//! A compile run on the caller's own thread (whose stack may be smaller than the compile
//! threads') also stops at [`check`] when the stack reaches the floor [`with_stack_floor`]
//! set ([`Interrupted::StackLow`]): the caller then runs it again on a thread with a large
//! stack.
//!
//! A matcher's mask computation is interrupted another way (a flag the parser reads on its
//! slow path, see `earley`), since it runs on whatever thread the caller picks.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What stops the work: a cancellation flag another thread may set, a deadline, or both.
#[derive(Clone, Debug, Default)]
pub struct Interrupt {
    /// Set (by any thread) to cancel.
    pub flag: Option<Arc<AtomicBool>>,
    /// The instant after which the work gives up, and the budget it was given (for the
    /// message).
    pub deadline: Option<(Instant, Duration)>,
}

/// Why [`check`] stopped the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupted {
    /// The flag was set.
    Cancelled,
    /// The deadline passed; the budget it was given.
    Deadline(Duration),
    /// The stack reached the floor of [`with_stack_floor`] (the work is to be run again on a
    /// thread with more stack; never reported to a user).
    StackLow,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interrupted::Cancelled => f.write_str("operation cancelled"),
            Interrupted::Deadline(d) => {
                write!(f, "compile deadline of {} ms exceeded", d.as_millis())
            }
            Interrupted::StackLow => {
                f.write_str("the compile needs more stack than this thread has")
            }
        }
    }
}

impl std::error::Error for Interrupted {}

impl Interrupt {
    /// An interrupt on `flag` and/or a deadline `budget` from now.
    pub fn new(flag: Option<Arc<AtomicBool>>, budget: Option<Duration>) -> Interrupt {
        Interrupt { flag, deadline: budget.map(|b| (Instant::now() + b, b)) }
    }

    /// Whether it has fired.
    pub fn fired(&self) -> Option<Interrupted> {
        if self.flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Some(Interrupted::Cancelled);
        }
        match self.deadline {
            Some((at, budget)) if Instant::now() >= at => Some(Interrupted::Deadline(budget)),
            _ => None,
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Interrupt>> = const { RefCell::new(None) };
    /// The lowest stack address [`check`] lets the work reach on this thread (0: none), and
    /// whether it was reached.
    static FLOOR: Cell<(usize, bool)> = const { Cell::new((0, false)) };
}

/// The address of the top of this thread's stack, roughly (a local of this function).
#[inline(never)]
pub fn stack_address() -> usize {
    let probe = 0u8;
    std::hint::black_box(&probe) as *const u8 as usize
}

/// Runs `f` with a stack floor at address `floor` (the stack grows down): a [`check`] made
/// below it fails with [`Interrupted::StackLow`]. Returns `f`'s result and whether a check
/// met the floor (then the result is an error to be discarded, or a result `f` got past
/// the failed check some other way).
pub fn with_stack_floor<T>(floor: usize, f: impl FnOnce() -> T) -> (T, bool) {
    struct Restore((usize, bool));
    impl Drop for Restore {
        fn drop(&mut self) {
            FLOOR.with(|c| c.set(self.0));
        }
    }
    let prev = FLOOR.with(|c| c.replace((floor, false)));
    let restore = Restore(prev);
    let r = f();
    let met = FLOOR.with(|c| c.get().1);
    drop(restore);
    (r, met)
}

/// Runs `f` with `interrupt` installed for this thread (the one installed before comes back
/// after, also when `f` panics).
pub fn scoped<T>(interrupt: Option<Interrupt>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Interrupt>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let prev = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), interrupt));
    let _restore = Restore(prev);
    f()
}

/// The interrupt installed for this thread (to install it on a thread the work moves to).
pub fn current() -> Option<Interrupt> {
    CURRENT.with(|c| c.borrow().clone())
}

/// `Err` when the interrupt installed for this thread has fired, or the stack is below the
/// floor of [`with_stack_floor`]. Called where the compile recurses over its input (a schema
/// node, a rule, a lexeme), so that the floor stops the deepest recursions.
pub fn check() -> Result<(), Interrupted> {
    let low = FLOOR.with(|c| {
        let (floor, _) = c.get();
        let low = floor != 0 && stack_address() < floor;
        if low {
            c.set((floor, true));
        }
        low
    });
    if low {
        return Err(Interrupted::StackLow);
    }
    CURRENT.with(|c| match c.borrow().as_ref().and_then(Interrupt::fired) {
        Some(why) => Err(why),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_sees_the_flag_and_the_deadline_only_inside_the_scope() {
        let flag = Arc::new(AtomicBool::new(false));
        let i = Interrupt::new(Some(flag.clone()), None);
        scoped(Some(i), || {
            assert_eq!(check(), Ok(()));
            flag.store(true, Ordering::Relaxed);
            assert_eq!(check(), Err(Interrupted::Cancelled));
        });
        assert_eq!(check(), Ok(()), "nothing installed outside");
        let i = Interrupt::new(None, Some(Duration::ZERO));
        let r = scoped(Some(i), check);
        assert_eq!(r, Err(Interrupted::Deadline(Duration::ZERO)));
        assert!(r.unwrap_err().to_string().contains("deadline of 0 ms"));
        // Nested scopes restore the outer one, also after a panic.
        let outer = Interrupt::new(None, Some(Duration::ZERO));
        scoped(Some(outer), || {
            let _ = std::panic::catch_unwind(|| scoped(None, || panic!("inner")));
            assert!(check().is_err(), "the outer interrupt is back");
        });
    }
}
