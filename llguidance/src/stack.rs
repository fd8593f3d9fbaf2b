//! How much stack the calling thread has left, for compiling on it rather than on a compile
//! thread (see `ParserFactory::compile_interruptible`).
//!
//! A compile handed to another thread took 2x as long at the median on MaskBench (llama3,
//! every 20th file: 326 against 155 µs; the hand-over itself is ~15 µs, the rest is the work
//! running colder on the other core). The front ends recurse over their input within
//! documented depth limits, which need up to a few MB of stack (a 512-deep `$ref` chain: 2.6
//! MB in a release build); the compile runs on the caller's thread only when it has
//! [`INLINE_MIN`] left (a Rust thread's default 2 MiB has), with a floor [`RED_ZONE`] above
//! the stack's end that the compile's checks (`lexer::interrupt::check`, at each schema
//! node, rule and lexeme) stop at, and is then run again on a compile thread. Tests:
//! `tests/compile_stack.rs`.

/// The stack the calling thread must have left for a compile to run on it.
pub(crate) const INLINE_MIN: usize = if cfg!(debug_assertions) { 16 << 20 } else { 3 << 19 };
/// The stack kept free below the floor: covers the recursion between two checks (at most
/// ~0.4 MB measured in a release build: `anyOf` nested 60 deep) and the unwinding after the
/// floor is met. (The first matcher's lexer is built after the compile returns, with the
/// stack the compile started with: ~0.8 MB for a lexeme nested to the lexer's depth limit.)
pub(crate) const RED_ZONE: usize = if cfg!(debug_assertions) { 8 << 20 } else { 1 << 20 };

/// The lowest usable address of this thread's stack (cached per thread), where known.
fn stack_end() -> Option<usize> {
    thread_local! {
        static END: std::cell::Cell<Option<Option<usize>>> = const { std::cell::Cell::new(None) };
    }
    END.with(|c| match c.get() {
        Some(end) => end,
        None => {
            let end = query();
            c.set(Some(end));
            end
        }
    })
}

/// The floor for a compile on this thread (an address `lexer::interrupt::with_stack_floor`
/// takes), or `None` when the thread has less than [`INLINE_MIN`] left or its stack is
/// unknown.
pub(crate) fn inline_floor() -> Option<usize> {
    let end = stack_end()?;
    let here = lexer::interrupt::stack_address();
    let left = here.checked_sub(end)?;
    (left >= INLINE_MIN).then_some(end + RED_ZONE)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn query() -> Option<usize> {
    // SAFETY: `attr` is initialized by pthread_getattr_np before it is read, and destroyed
    // once; `addr` and `size` are written by pthread_attr_getstack. For the calling thread
    // glibc reports the lowest address of its stack (the main thread's from its rlimit), with
    // the guard page inside [addr, addr + size), which the margin below skips.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let mut guard: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0
            && libc::pthread_attr_getguardsize(&attr, &mut guard) == 0;
        libc::pthread_attr_destroy(&mut attr);
        let end = (addr as usize).checked_add(guard.max(4096) + 64 * 1024)?;
        debug_assert!(!ok || end < lexer::interrupt::stack_address());
        (ok && size > 0).then_some(end)
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn query() -> Option<usize> {
    None
}
