//! `LlgMatcher`: one sequence under LLGuidance's C contract, over [`ServedMatcher`].
//!
//! - `llg_new_matcher` never returns NULL: a grammar that does not compile (or a NULL
//!   tokenizer) gives a matcher in its error state, whose `llg_matcher_get_error` says why.
//! - `llg_matcher_compute_mask` computes the served mask (where the grammar forces bytes,
//!   only the first forced token) into the matcher's buffer; `llg_matcher_get_mask` returns
//!   it until the next operation that moves the matcher (consume, rollback, reset), and
//!   NULL before a mask is computed, after an error, or after cancellation.
//! - In the error state every operation returns `-1` (or `false`) and the error message
//!   stays the same pointer until the matcher is freed.
//! - Cancellation (LLGuidance 1.9's handles) is checked when an operation starts: after
//!   `llg_cancel`, the matcher's operations return `-1`, it reports stopped and cancelled,
//!   and no mask is published. Rollback and reset do not revive it. (Interrupting a mask
//!   computation already running is not done here.)

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{c_string, guard, read_slice, read_str, write_c, write_slice, LlgTokenizer};
use crate::served::{build_kind, Built, CompileLimits};
use crate::ServedMatcher;

/// LLGuidance's parser limits (0 in a field: its default).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct LlgParserLimits {
    /// LLGuidance's Earley row limit (accepted; this engine has its own).
    pub max_items_in_row: usize,
    /// Checked on the compiled grammar's lexemes when set below 1,000,000.
    pub initial_lexer_fuel: u64,
    /// Accepted; this engine bounds per-mask lexer work with its own limit.
    pub step_lexer_fuel: u64,
    /// Accepted; this engine bounds per-mask parser work with its own limit.
    pub step_max_items: usize,
    /// Accepted; this engine bounds lexer states with its own limit.
    pub max_lexer_states: usize,
    /// Checked on the compiled grammar when set below 500,000.
    pub max_grammar_size: usize,
    /// Accepted.
    pub precompute_large_lexemes: bool,
    /// Accepted.
    pub verbose_errors: bool,
}

/// LLGuidance's `LlgConstraintInit` (zero-initialize it, or call
/// `llg_constraint_init_set_defaults`).
#[repr(C)]
pub struct LlgConstraintInit {
    /// The tokenizer.
    pub tokenizer: *const LlgTokenizer,
    /// Log level of the constraint's log buffer (`llg_flush_logs`): accepted, nothing is
    /// logged there.
    pub log_buffer_level: u32,
    /// Log level on stderr: 1 and up prints a warning when a matcher enters its error state.
    pub log_stderr_level: u32,
    /// `LlgConstraint`: `llg_commit_token` also returns (and consumes) forced tokens.
    pub ff_tokens_ok: bool,
    /// Accepted.
    pub backtrack_ok: bool,
    /// Limits; 0 fields take the defaults.
    pub limits: LlgParserLimits,
}

impl LlgParserLimits {
    fn defaults() -> LlgParserLimits {
        LlgParserLimits {
            max_items_in_row: 2000,
            initial_lexer_fuel: 1_000_000,
            step_lexer_fuel: 200_000,
            step_max_items: 50_000,
            max_lexer_states: 250_000,
            max_grammar_size: 500_000,
            precompute_large_lexemes: true,
            verbose_errors: true,
        }
    }

    fn compile_limits(&self) -> CompileLimits {
        let d = CompileLimits::default();
        CompileLimits {
            max_grammar_size: if self.max_grammar_size == 0 {
                d.max_grammar_size
            } else {
                self.max_grammar_size
            },
            initial_lexer_fuel: if self.initial_lexer_fuel == 0 {
                d.initial_lexer_fuel
            } else {
                self.initial_lexer_fuel
            },
        }
    }
}

/// Sets `init` to LLGuidance's defaults for `tokenizer`: no forced tokens in commits, no
/// backtracking, warnings on stderr, the default limits.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_constraint_init_set_defaults(
    init: *mut LlgConstraintInit,
    tokenizer: *const LlgTokenizer,
) {
    guard((), || {
        // SAFETY: null or a writable struct, by the header's contract.
        if let Some(init) = unsafe { init.as_mut() } {
            *init = LlgConstraintInit {
                tokenizer,
                log_buffer_level: 0,
                log_stderr_level: 1,
                ff_tokens_ok: false,
                backtrack_ok: false,
                limits: LlgParserLimits::defaults(),
            };
        }
    })
}

/// Compiles `(kind, data)` under `init` into a served matcher (or the reason it failed).
///
/// # Safety
///
/// The pointers are the caller's, valid as the header states.
pub(crate) unsafe fn served_from(
    init: *const LlgConstraintInit,
    kind: *const c_char,
    data: *const c_char,
) -> Result<ServedMatcher, String> {
    // SAFETY: null or an initialized struct, by the header's contract.
    let init = unsafe { init.as_ref() }.ok_or("init is a null pointer")?;
    // SAFETY: null or live, by the header's contract.
    let tok = unsafe { init.tokenizer.as_ref() }.ok_or("init.tokenizer is a null pointer")?;
    // SAFETY: the caller's strings, under the module's contract.
    let kind = unsafe { read_str(kind, "constraint_type") }?;
    // SAFETY: as above.
    let data = unsafe { read_str(data, "data") }?;
    let built: Built = build_kind(&tok.factory, kind, data, &init.limits.compile_limits());
    Ok(ServedMatcher::new(tok.factory.clone(), built, init.log_stderr_level as i32))
}

/// A cancellation handle (opaque to C): a shared flag.
pub struct LlgCancellationHandle {
    flag: Arc<AtomicBool>,
}

/// One sequence (opaque to C).
pub struct LlgMatcher {
    served: Result<ServedMatcher, String>,
    /// The error message, fixed once set (LLGuidance: the same pointer until freed).
    error: Option<CString>,
    mask: Vec<u32>,
    has_mask: bool,
    cancel: Arc<AtomicBool>,
    /// Whether the served matcher reads `cancel` (once a handle was asked for): it then
    /// stops mid-mask too, not only before an operation.
    cancel_enabled: bool,
}

impl LlgMatcher {
    pub(crate) fn new(served: Result<ServedMatcher, String>) -> LlgMatcher {
        let words = served.as_ref().map_or(0, |s| s.words());
        let mut m = LlgMatcher {
            served,
            error: None,
            mask: vec![0; words],
            has_mask: false,
            cancel: Arc::new(AtomicBool::new(false)),
            cancel_enabled: false,
        };
        m.sync();
        m
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }

    /// The served matcher reads the cancellation flag from now on (mid-mask too).
    fn enable_cancel(&mut self) {
        if !self.cancel_enabled {
            if let Ok(s) = self.served.as_mut() {
                s.set_cancellation(crate::CancellationHandle(self.cancel.clone()));
            }
            self.cancel_enabled = true;
        }
    }

    /// Cancelled, and no other error stopped the matcher first.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled()
            && match &self.served {
                Ok(s) => !s.is_error() || s.is_cancelled(),
                Err(_) => false,
            }
    }

    /// The error message now, if any.
    fn message(&self) -> Option<String> {
        match &self.served {
            Err(e) => Some(e.clone()),
            Ok(s) => s.error_message(),
        }
    }

    /// Records the served matcher's error, if it has one now.
    fn sync(&mut self) {
        if self.error.is_none() {
            if let Some(m) = self.message() {
                self.error = Some(c_string(&m));
                self.has_mask = false;
            }
        }
    }

    pub(crate) fn is_error(&self) -> bool {
        self.error.is_some() || self.served.as_ref().map_or(true, |s| s.is_error())
    }

    /// Runs an operation that moves the matcher: `-1` when cancelled, in the error state,
    /// or when it fails.
    fn op(&mut self, f: impl FnOnce(&mut ServedMatcher) -> bool) -> i32 {
        self.has_mask = false;
        if self.cancelled() || self.is_error() {
            return -1;
        }
        let Ok(s) = self.served.as_mut() else { return -1 };
        let ok =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(s))).unwrap_or_else(|p| {
                s.set_error(super::panic_message(&*p));
                false
            });
        self.sync();
        if ok && self.error.is_none() {
            0
        } else {
            -1
        }
    }

    /// The served mask into `out` (`words` long); `-1` when cancelled or in error.
    pub(crate) fn fill(&mut self, out: &mut [u32]) -> i32 {
        if self.cancelled() || self.is_error() {
            return -1;
        }
        let Ok(s) = self.served.as_mut() else { return -1 };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if !s.fill_cached(out) {
                s.fill(out);
            }
        }));
        if let Err(p) = r {
            s.set_error(super::panic_message(&*p));
        }
        self.sync();
        if self.error.is_some() {
            -1
        } else {
            0
        }
    }

    pub(crate) fn served_mut(&mut self) -> Option<&mut ServedMatcher> {
        self.served.as_mut().ok()
    }

    pub(crate) fn words(&self) -> usize {
        self.served.as_ref().map_or(0, |s| s.words())
    }

    /// The error message pointer (stable once set), or NULL.
    pub(crate) fn error_ptr(&self) -> *const c_char {
        self.error.as_ref().map_or(std::ptr::null(), |e| e.as_ptr())
    }

    /// Stopped: complete, error, or cancelled.
    pub(crate) fn stopped(&self) -> bool {
        self.cancelled() || self.is_error() || self.served.as_ref().is_ok_and(|s| s.is_stopped())
    }

    /// LLGuidance's name of the served matcher's stop reason.
    pub(crate) fn served_stop_reason(&self) -> &'static str {
        self.served.as_ref().map_or("InternalError", |s| s.stop_reason())
    }

    /// Computes the mask into the matcher's own buffer; its address, or `None` on error.
    pub(crate) fn compute_own_mask(&mut self) -> Option<*const u32> {
        let mut mask = std::mem::take(&mut self.mask);
        let r = self.fill(&mut mask);
        self.mask = mask;
        self.has_mask = r == 0;
        self.has_mask.then_some(self.mask.as_ptr())
    }

    /// Consumes tokens: 0, or -1 on error.
    pub(crate) fn consume(&mut self, tokens: &[u32]) -> i32 {
        self.op(|s| s.consume_tokens(tokens))
    }

    /// The forced tokens (empty on error).
    pub(crate) fn ff_tokens(&mut self) -> Vec<u32> {
        let r = self.served_mut().map_or_else(Vec::new, |s| s.compute_ff_tokens());
        self.sync();
        r
    }

    /// The served mask into `out` (zero-padded past the vocabulary); in the error state or
    /// when cancelled, the EOS-only mask (for batch calls that cannot report per step).
    pub(crate) fn fill_eos_on_error(&mut self, out: &mut [u32]) {
        let w = self.words();
        if out.len() < w {
            return;
        }
        out[w..].fill(0);
        if self.fill(&mut out[..w]) != 0 {
            if let Ok(s) = &self.served {
                s.fill_eos_only(&mut out[..w]);
            }
        }
    }

    pub(crate) fn deep_clone(&self) -> LlgMatcher {
        let mut m = LlgMatcher {
            served: match &self.served {
                Ok(s) => Ok(s.deep_clone()),
                Err(e) => Err(e.clone()),
            },
            error: self.error.clone(),
            mask: self.mask.clone(),
            has_mask: self.has_mask,
            cancel: Arc::new(AtomicBool::new(self.cancelled())),
            cancel_enabled: false,
        };
        if self.cancel_enabled {
            m.enable_cancel();
        }
        m
    }
}

/// # Safety
///
/// `m` is null or a live matcher not used by another thread during `'a`.
pub(crate) unsafe fn matcher_mut<'a>(m: *mut LlgMatcher) -> Option<&'a mut LlgMatcher> {
    // SAFETY: by this function's contract.
    unsafe { m.as_mut() }
}

/// # Safety
///
/// `m` is null or a live matcher not mutated during `'a`.
pub(crate) unsafe fn matcher_ref<'a>(m: *const LlgMatcher) -> Option<&'a LlgMatcher> {
    // SAFETY: by this function's contract.
    unsafe { m.as_ref() }
}

/// Runs `f` on a matcher; `fallback` for NULL or a panic.
fn on<T>(m: *mut LlgMatcher, fallback: T, f: impl FnOnce(&mut LlgMatcher) -> T) -> T
where
    T: Copy,
{
    // SAFETY: the caller's pointer, under the module's contract.
    guard(fallback, || unsafe { matcher_mut(m) }.map_or(fallback, f))
}

/// A matcher for `data` of kind `constraint_type` (see the header); never NULL: check
/// `llg_matcher_get_error`.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_matcher(
    init: *const LlgConstraintInit,
    constraint_type: *const c_char,
    data: *const c_char,
) -> *mut LlgMatcher {
    let served = std::panic::catch_unwind(|| {
        // SAFETY: the caller's pointers, under the module's contract.
        unsafe { served_from(init, constraint_type, data) }
    })
    .unwrap_or_else(|p| Err(super::panic_message(&*p)));
    Box::into_raw(Box::new(LlgMatcher::new(served)))
}

/// Checks a grammar: 0 when it compiles, 1 when it compiles with warnings (in `message`),
/// -1 when it does not (the error in `message`). `message` is always NUL-terminated.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_validate_grammar(
    init: *const LlgConstraintInit,
    constraint_type: *const c_char,
    data: *const c_char,
    message: *mut c_char,
    message_len: usize,
) -> i32 {
    let (code, msg) = guard((-1, "internal error (panic caught in the C API)".into()), || {
        // SAFETY: the caller's pointers, under the module's contract.
        match unsafe { served_from(init, constraint_type, data) } {
            Err(e) => (-1, e),
            Ok(s) => match s.error_message() {
                Some(e) => (-1, e),
                None if !s.warnings().is_empty() => (1, s.warnings().join("; ")),
                None => (0, String::new()),
            },
        }
    });
    // SAFETY: the caller's buffer, under the module's contract.
    unsafe { write_c(message, message_len, msg.as_bytes()) };
    code
}

/// Computes the mask into `mask_dest` (`mask_byte_len` must equal
/// `llg_matcher_get_mask_byte_size`). 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_compute_mask_into(
    matcher: *mut LlgMatcher,
    mask_dest: *mut u32,
    mask_byte_len: usize,
) -> i32 {
    on(matcher, -1, |m| {
        if mask_byte_len != m.words() * 4 {
            return -1;
        }
        // SAFETY: the caller's buffer of `mask_byte_len` bytes, under the module's contract.
        let Ok(out) = (unsafe { write_slice(mask_dest, m.words(), "mask_dest") }) else {
            return -1;
        };
        m.fill(out)
    })
}

/// Computes the mask; read it with `llg_matcher_get_mask`. 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_compute_mask(matcher: *mut LlgMatcher) -> i32 {
    on(matcher, -1, |m| if m.compute_own_mask().is_some() { 0 } else { -1 })
}

/// The mask of the last `llg_matcher_compute_mask`, or NULL (none computed since the
/// matcher last moved, an error, or cancellation). Valid until the next call on the matcher.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_get_mask(matcher: *mut LlgMatcher) -> *const u32 {
    guard(std::ptr::null(), || {
        // SAFETY: the caller's pointer, under the module's contract.
        match unsafe { matcher_ref(matcher) } {
            Some(m) if m.has_mask && !m.cancelled() && !m.is_error() => m.mask.as_ptr(),
            _ => std::ptr::null(),
        }
    })
}

/// The size of a mask in bytes: `(vocab_size + 31) / 32 * 4`.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_get_mask_byte_size(matcher: *const LlgMatcher) -> usize {
    // SAFETY: the caller's pointer, under the module's contract.
    guard(0, || unsafe { matcher_ref(matcher) }.map_or(0, |m| m.words() * 4))
}

/// A cancellation handle for the matcher (free it with `llg_free_cancellation_handle`).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_get_cancellation_handle(
    matcher: *mut LlgMatcher,
) -> *mut LlgCancellationHandle {
    guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's pointer, under the module's contract (an idle matcher).
        match unsafe { matcher_mut(matcher) } {
            Some(m) => {
                m.enable_cancel();
                Box::into_raw(Box::new(LlgCancellationHandle { flag: m.cancel.clone() }))
            }
            None => std::ptr::null_mut(),
        }
    })
}

/// Another handle to the same matcher's cancellation.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_clone_cancellation_handle(
    handle: *const LlgCancellationHandle,
) -> *mut LlgCancellationHandle {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or live, by the module's contract.
        match unsafe { handle.as_ref() } {
            Some(h) => Box::into_raw(Box::new(LlgCancellationHandle { flag: h.flag.clone() })),
            None => std::ptr::null_mut(),
        }
    })
}

/// Cancels the matcher for good (safe from any thread, also after the matcher was freed).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_cancel(handle: *const LlgCancellationHandle) {
    // SAFETY: null or live, by the module's contract.
    guard((), || {
        if let Some(h) = unsafe { handle.as_ref() } {
            h.flag.store(true, Ordering::Release);
        }
    })
}

/// Frees a cancellation handle (NULL is ignored).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_free_cancellation_handle(handle: *mut LlgCancellationHandle) {
    if !handle.is_null() {
        // SAFETY: from this API, not freed before.
        guard((), || drop(unsafe { Box::from_raw(handle) }));
    }
}

/// Whether the matcher was cancelled (false when another error stopped it first).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_cancelled(matcher: *const LlgMatcher) -> bool {
    guard(false, || {
        // SAFETY: the caller's pointer, under the module's contract.
        unsafe { matcher_ref(matcher) }.is_some_and(|m| m.is_cancelled())
    })
}

/// Consumes one token. 0 on success, -1 on error (a rejected token is the error state).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_consume_token(matcher: *mut LlgMatcher, token: u32) -> i32 {
    on(matcher, -1, |m| m.op(|s| s.consume_token(token)))
}

/// Consumes tokens in order. 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_consume_tokens(
    matcher: *mut LlgMatcher,
    tokens: *const u32,
    n_tokens: usize,
) -> i32 {
    // SAFETY: the caller's buffer, under the module's contract.
    let toks = unsafe { read_slice(tokens, n_tokens, "tokens") };
    on(matcher, -1, |m| match &toks {
        Ok(t) => m.op(|s| s.consume_tokens(t)),
        Err(_) => -1,
    })
}

/// The error message, or NULL; once set, the same pointer until the matcher is freed.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_get_error(matcher: *mut LlgMatcher) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: the caller's pointer, under the module's contract.
        let Some(m) = (unsafe { matcher_mut(matcher) }) else { return std::ptr::null() };
        m.sync();
        m.error.as_ref().map_or(std::ptr::null(), |e| e.as_ptr())
    })
}

/// Whether the matcher is in its error state.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_error(matcher: *const LlgMatcher) -> bool {
    // SAFETY: the caller's pointer, under the module's contract.
    guard(true, || unsafe { matcher_ref(matcher) }.is_none_or(|m| m.is_error()))
}

/// Frees a matcher (NULL is ignored).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_free_matcher(matcher: *mut LlgMatcher) {
    if !matcher.is_null() {
        // SAFETY: from llg_new_matcher / llg_clone_matcher, not freed before.
        guard((), || drop(unsafe { Box::from_raw(matcher) }));
    }
}

/// Undoes the last `num_tokens` tokens. 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_rollback(matcher: *mut LlgMatcher, num_tokens: usize) -> i32 {
    on(matcher, -1, |m| m.op(|s| s.rollback(num_tokens)))
}

/// Back to the start (not from the error state). 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_reset(matcher: *mut LlgMatcher) -> i32 {
    on(matcher, -1, |m| m.op(|s| s.reset()))
}

/// Whether the tokens so far are a complete string of the grammar.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_accepting(matcher: *mut LlgMatcher) -> bool {
    on(matcher, false, |m| !m.cancelled() && m.served_mut().is_some_and(|s| s.is_accepting()))
}

/// Whether the matcher stopped: completed (only EOS can follow, or EOS consumed), error,
/// or cancellation.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_stopped(matcher: *const LlgMatcher) -> bool {
    guard(true, || {
        // SAFETY: the caller's pointer, under the module's contract.
        unsafe { matcher_ref(matcher) }.is_none_or(|m| {
            m.cancelled() || m.is_error() || m.served.as_ref().is_ok_and(|s| s.is_stopped())
        })
    })
}

/// How many leading tokens would be accepted (state unchanged), or -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_validate_tokens(
    matcher: *mut LlgMatcher,
    tokens: *const u32,
    n_tokens: usize,
) -> i32 {
    // SAFETY: the caller's buffer, under the module's contract.
    let toks = unsafe { read_slice(tokens, n_tokens, "tokens") };
    on(matcher, -1, |m| {
        let Ok(toks) = &toks else { return -1 };
        if m.cancelled() || m.is_error() {
            return -1;
        }
        let k = m.served_mut().map_or(0, |s| s.validate_tokens(toks));
        m.sync();
        if m.error.is_some() {
            -1
        } else {
            i32::try_from(k).unwrap_or(i32::MAX)
        }
    })
}

/// The forced tokens: writes at most `output_len` of them and returns how many it wrote,
/// or -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_compute_ff_tokens(
    matcher: *mut LlgMatcher,
    output: *mut u32,
    output_len: usize,
) -> i32 {
    on(matcher, -1, |m| {
        if m.cancelled() || m.is_error() {
            return -1;
        }
        let toks = m.served_mut().map_or_else(Vec::new, |s| s.compute_ff_tokens());
        m.sync();
        if m.error.is_some() {
            return -1;
        }
        // SAFETY: the caller's buffer, under the module's contract.
        let Ok(dst) = (unsafe { write_slice(output, output_len, "output") }) else {
            return -1;
        };
        let k = toks.len().min(dst.len());
        dst[..k].copy_from_slice(&toks[..k]);
        i32::try_from(k).unwrap_or(i32::MAX)
    })
}

/// An independent copy at the same position (error state and mask included).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_clone_matcher(matcher: *const LlgMatcher) -> *mut LlgMatcher {
    guard(std::ptr::null_mut(), || {
        // SAFETY: the caller's pointer, under the module's contract.
        match unsafe { matcher_ref(matcher) } {
            Some(m) => Box::into_raw(Box::new(m.deep_clone())),
            None => std::ptr::null_mut(),
        }
    })
}

/// The version string, for the life of the process.
#[no_mangle]
pub extern "C" fn llg_get_version() -> *const c_char {
    static V: &str = concat!("llg-rs@", env!("CARGO_PKG_VERSION"), " derivre@0.3\0");
    V.as_ptr().cast()
}
