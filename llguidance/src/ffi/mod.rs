//! The C API, declared in `include/llguidance.h`: LLGuidance's C API (names, struct layouts,
//! signatures and semantics as of LLGuidance 1.9.1's header), so that programs written for
//! LLGuidance, such as llama.cpp's `common/llguidance.cpp`, compile against our header and
//! link our library unchanged. Our own additions are named `llg_x_*` (and `LlgX*`), names
//! LLGuidance does not use.
//!
//! The parts:
//! - [`tokenizer`]: `LlgTokenizer` from token bytes plus a tokenize callback, or from a
//!   `tokenizer.json`; tokenize / decode / stringify helpers.
//! - [`matcher`]: `LlgMatcher`, one sequence, over [`crate::ServedMatcher`] (the same
//!   contract as the Python `LLMatcher`): masks, consume, rollback, reset, forced tokens,
//!   cancellation handles, `llg_validate_grammar`.
//! - [`constraint`]: LLGuidance's older `LlgConstraint` API (`llg_new_constraint*`,
//!   `llg_compute_mask`, `llg_commit_token`, `llg_par_compute_mask`).
//! - [`stop`]: `LlgStopController`, stop tokens and a stop regex over generated text.
//! - [`ext`]: the `llg_x_*` extensions (built-in tokenizers, pure masks, stop reasons,
//!   draft masks, batch masks over matchers).
//!
//! Conventions, the same for every entry point:
//! - No panic unwinds into C: every function runs its body under
//!   [`std::panic::catch_unwind`]; a panic inside a matcher call puts that matcher in its
//!   error state.
//! - A null object pointer is reported (an error state, `-1`, `false` or a null result),
//!   never undefined behaviour. Dangling or misaligned pointers, and buffers shorter than
//!   the length passed with them, are the caller's responsibility.
//! - Objects are owned by the caller, who frees each exactly once; a matcher keeps its
//!   tokenizer's data alive, so a tokenizer may be freed while its matchers (and its
//!   clones) live.
//!
//! # Safety
//!
//! Every `extern "C"` function here is `unsafe` for Rust callers: each pointer argument must
//! be null or valid for the call as the header states (objects from this API not yet freed
//! and not used by another thread during the call, buffers with at least the given number
//! of elements, NUL-terminated strings).
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod constraint;
pub mod ext;
pub mod matcher;
pub mod stop;
pub mod tokenizer;

pub use constraint::*;
pub use ext::*;
pub use matcher::*;
pub use stop::*;
pub use tokenizer::*;

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A C string of `s` (NUL bytes inside shown as `\0`).
pub(crate) fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).expect("NUL bytes replaced")
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let msg = crate::error::panic_message(p);
    format!("internal error (panic caught in the C API): {msg}")
}

/// Runs `f`; a panic becomes `fallback`.
pub(crate) fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Writes `msg` into the caller's buffer (null, or `len` writable bytes), truncated at a
/// char boundary when it is valid UTF-8, always NUL-terminated when `len > 0`. Returns the
/// bytes a large enough buffer would take, the NUL included.
///
/// # Safety
///
/// `buf` is null or points to `len` writable bytes.
pub(crate) unsafe fn write_c(buf: *mut c_char, len: usize, msg: &[u8]) -> usize {
    if !buf.is_null() && len > 0 {
        let mut n = msg.len().min(len - 1);
        if let Ok(s) = std::str::from_utf8(msg) {
            while !s.is_char_boundary(n) {
                n -= 1;
            }
        }
        // SAFETY: non-null, and `len` writable bytes by this function's contract; we write
        // `n + 1 <= len` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    msg.len() + 1
}

/// Reads a NUL-terminated UTF-8 string argument.
///
/// # Safety
///
/// `p` is null or a NUL-terminated string that lives and is not written for `'a`.
pub(crate) unsafe fn read_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
    if p.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; the caller guarantees a NUL-terminated string that lives for the call.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|_| format!("{what} is not valid UTF-8"))
}

/// A slice from a C pointer and length; a null pointer is allowed only with length 0.
///
/// # Safety
///
/// `p` is null or points to `len` initialized, aligned elements not written for `'a`.
pub(crate) unsafe fn read_slice<'a, T>(
    p: *const T,
    len: usize,
    what: &str,
) -> Result<&'a [T], String> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; the caller guarantees `len` readable, initialized, aligned elements
    // that are not written during the call.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A writable slice from a C pointer and length (null allowed only with length 0).
///
/// # Safety
///
/// `p` is null or points to `len` writable, aligned elements not aliased for `'a`.
pub(crate) unsafe fn write_slice<'a, T>(
    p: *mut T,
    len: usize,
    what: &str,
) -> Result<&'a mut [T], String> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; the caller guarantees `len` writable, aligned elements not aliased
    // during the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}
