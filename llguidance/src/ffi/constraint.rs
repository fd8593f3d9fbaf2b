//! LLGuidance's older constraint API (`LlgConstraint`), still declared by its 1.9.1 header:
//! `llg_new_constraint*` (never NULL; check `llg_get_error`), `llg_compute_mask` (the served
//! mask, or `is_stop` once the sequence is done), `llg_commit_token` (the sampled token,
//! followed by the forced tokens when `ff_tokens_ok`), `llg_par_compute_mask` (masks of
//! several constraints on rayon's threads, optionally asynchronous), clone and free. A
//! constraint is an [`LlgMatcher`] with the commit buffers of this API.

use std::ffi::{c_char, c_void};

use super::matcher::{served_from, LlgConstraintInit, LlgMatcher};
use super::{guard, write_slice};

/// The result of `llg_compute_mask`.
#[repr(C)]
pub struct LlgMaskResult {
    /// One bit per token; valid until the next call on the constraint. NULL when stopped.
    pub sample_mask: *const u32,
    /// The temperature to sample with (0.0: the caller's default).
    pub temperature: f32,
    /// The sequence is complete: stop.
    pub is_stop: bool,
}

/// The result of `llg_commit_token`.
#[repr(C)]
pub struct LlgCommitResult {
    /// The tokens to append to the output; valid until the next call on the constraint.
    pub tokens: *const u32,
    /// How many.
    pub n_tokens: u32,
    /// The sequence is complete: stop.
    pub is_stop: bool,
}

/// One step of `llg_par_compute_mask`.
#[repr(C)]
pub struct LlgConstraintStep {
    /// The constraint.
    pub constraint: *mut LlgConstraint,
    /// Where its mask goes.
    pub mask_dest: *mut u32,
    /// The size of `mask_dest` in bytes.
    pub mask_byte_len: usize,
}

/// A completion callback.
pub type LlgCallback = Option<unsafe extern "C" fn(user_data: *const c_void)>;

/// A constraint (opaque to C).
pub struct LlgConstraint {
    m: LlgMatcher,
    ff_tokens_ok: bool,
    committed: Vec<u32>,
}

/// # Safety
///
/// As for [`served_from`].
unsafe fn new_constraint(
    init: *const LlgConstraintInit,
    kind: *const c_char,
    data: *const c_char,
) -> *mut LlgConstraint {
    let served = std::panic::catch_unwind(|| {
        // SAFETY: the caller's pointers, under the module's contract.
        unsafe { served_from(init, kind, data) }
    })
    .unwrap_or_else(|p| Err(super::panic_message(&*p)));
    // SAFETY: null or an initialized struct, by the header's contract.
    let ff_tokens_ok = guard(false, || unsafe { init.as_ref() }.is_some_and(|i| i.ff_tokens_ok));
    Box::into_raw(Box::new(LlgConstraint {
        m: LlgMatcher::new(served),
        ff_tokens_ok,
        committed: Vec::new(),
    }))
}

/// A constraint from LLGuidance's grammar JSON (or Lark text).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_constraint(
    init: *const LlgConstraintInit,
    llguidance: *const c_char,
) -> *mut LlgConstraint {
    // SAFETY: forwarded under the same contract.
    unsafe { new_constraint(init, c"llguidance".as_ptr(), llguidance) }
}

/// A constraint from a regex.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_constraint_regex(
    init: *const LlgConstraintInit,
    regex: *const c_char,
) -> *mut LlgConstraint {
    // SAFETY: forwarded under the same contract.
    unsafe { new_constraint(init, c"regex".as_ptr(), regex) }
}

/// A constraint from a JSON Schema.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_constraint_json(
    init: *const LlgConstraintInit,
    json_schema: *const c_char,
) -> *mut LlgConstraint {
    // SAFETY: forwarded under the same contract.
    unsafe { new_constraint(init, c"json".as_ptr(), json_schema) }
}

/// A constraint from a Lark grammar.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_constraint_lark(
    init: *const LlgConstraintInit,
    lark: *const c_char,
) -> *mut LlgConstraint {
    // SAFETY: forwarded under the same contract.
    unsafe { new_constraint(init, c"lark".as_ptr(), lark) }
}

/// A constraint of any kind `llg_new_matcher` takes.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_constraint_any(
    init: *const LlgConstraintInit,
    constraint_type: *const c_char,
    data: *const c_char,
) -> *mut LlgConstraint {
    // SAFETY: forwarded under the same contract.
    unsafe { new_constraint(init, constraint_type, data) }
}

/// The error message, or NULL; once set, the same pointer until the constraint is freed.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_get_error(cc: *const LlgConstraint) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: null or live, by the module's contract.
        unsafe { cc.as_ref() }.map_or(std::ptr::null(), |c| c.m.error_ptr())
    })
}

/// The temperature to sample with: 0.0 (the caller's default).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_get_temperature(_cc: *const LlgConstraint) -> f32 {
    0.0
}

/// Whether the constraint is stopped (complete, error or cancelled).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_is_stopped(cc: *const LlgConstraint) -> bool {
    // SAFETY: null or live, by the module's contract.
    guard(true, || unsafe { cc.as_ref() }.is_none_or(|c| c.m.stopped()))
}

/// Computes the mask for the next token into `*res_p`. 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_compute_mask(
    cc: *mut LlgConstraint,
    res_p: *mut LlgMaskResult,
) -> i32 {
    guard(-1, || {
        // SAFETY: null or live and unaliased, by the module's contract.
        let Some(c) = (unsafe { cc.as_mut() }) else { return -1 };
        // SAFETY: null or writable, by the header's contract.
        let Some(res) = (unsafe { res_p.as_mut() }) else { return -1 };
        if c.m.is_error() {
            return -1;
        }
        if c.m.stopped() {
            *res = LlgMaskResult { sample_mask: std::ptr::null(), temperature: 0.0, is_stop: true };
            return 0;
        }
        match c.m.compute_own_mask() {
            Some(p) => {
                *res = LlgMaskResult { sample_mask: p, temperature: 0.0, is_stop: false };
                0
            }
            None => -1,
        }
    })
}

/// Commits the sampled token; `*res_p` gets the tokens to append (the token, then the
/// forced tokens when `ff_tokens_ok`). 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_commit_token(
    cc: *mut LlgConstraint,
    token: u32,
    res_p: *mut LlgCommitResult,
) -> i32 {
    guard(-1, || {
        // SAFETY: null or live and unaliased, by the module's contract.
        let Some(c) = (unsafe { cc.as_mut() }) else { return -1 };
        // SAFETY: null or writable, by the header's contract.
        let Some(res) = (unsafe { res_p.as_mut() }) else { return -1 };
        if c.m.consume(&[token]) != 0 {
            return -1;
        }
        c.committed.clear();
        c.committed.push(token);
        if c.ff_tokens_ok && !c.m.stopped() {
            let ff = c.m.ff_tokens();
            if !ff.is_empty() {
                if c.m.consume(&ff) != 0 {
                    return -1;
                }
                c.committed.extend(ff);
            }
        }
        *res = LlgCommitResult {
            tokens: c.committed.as_ptr(),
            n_tokens: c.committed.len() as u32,
            is_stop: c.m.stopped(),
        };
        0
    })
}

/// Raw pointers handed to rayon's threads (each step's constraint and buffer are the
/// caller's, unaliased until the computation completes, by the header's contract).
#[derive(Clone, Copy)]
struct Step(*mut LlgConstraint, *mut u32, usize);
// SAFETY: see the type's documentation: one thread per step, caller-guaranteed lifetimes.
unsafe impl Send for Step {}
// SAFETY: as for Send.
unsafe impl Sync for Step {}

#[derive(Clone, Copy)]
struct Done(LlgCallback, *const c_void);
// SAFETY: the header requires the callback and its user data to be callable from a rayon
// thread.
unsafe impl Send for Done {}

fn run_steps(steps: &[Step]) {
    use rayon::prelude::*;
    steps.par_iter().for_each(|&Step(cc, dest, bytes)| {
        guard((), || {
            // SAFETY: see `Step`.
            let Some(c) = (unsafe { cc.as_mut() }) else { return };
            // SAFETY: see `Step`.
            let Ok(out) = (unsafe { write_slice(dest, bytes / 4, "mask_dest") }) else { return };
            c.m.fill_eos_on_error(out);
        })
    });
}

/// Computes the masks of several constraints in parallel (see the header for the
/// asynchronous form with `done_cb`).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_par_compute_mask(
    steps: *const LlgConstraintStep,
    n_steps: usize,
    user_data: *const c_void,
    done_cb: LlgCallback,
) {
    let done = Done(done_cb, user_data);
    let list: Vec<Step> = guard(Vec::new(), || {
        if steps.is_null() {
            return Vec::new();
        }
        // SAFETY: `n_steps` readable steps, by the header's contract (copied now).
        let s = unsafe { std::slice::from_raw_parts(steps, n_steps) };
        s.iter().map(|s| Step(s.constraint, s.mask_dest, s.mask_byte_len)).collect()
    });
    let finish = move |d: Done| {
        if let Done(Some(cb), ud) = d {
            // SAFETY: the caller's callback and user data (see `Done`).
            unsafe { cb(ud) };
        }
    };
    if done_cb.is_none() {
        run_steps(&list);
        return;
    }
    rayon::spawn(move || {
        run_steps(&list);
        finish(done);
    });
}

/// An independent copy of the constraint.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_clone_constraint(cc: *const LlgConstraint) -> *mut LlgConstraint {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or live, by the module's contract.
        match unsafe { cc.as_ref() } {
            Some(c) => Box::into_raw(Box::new(LlgConstraint {
                m: c.m.deep_clone(),
                ff_tokens_ok: c.ff_tokens_ok,
                committed: Vec::new(),
            })),
            None => std::ptr::null_mut(),
        }
    })
}

/// Frees a constraint (NULL is ignored).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_free_constraint(cc: *mut LlgConstraint) {
    if !cc.is_null() {
        // SAFETY: from llg_new_constraint* / llg_clone_constraint, not freed before.
        guard((), || drop(unsafe { Box::from_raw(cc) }));
    }
}

/// The constraint's logs since the last call: always empty (this engine logs warnings to
/// stderr only).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_flush_logs(_cc: *mut LlgConstraint) -> *const c_char {
    c"".as_ptr()
}
