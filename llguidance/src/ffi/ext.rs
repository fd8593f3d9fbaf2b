//! Our extensions to LLGuidance's C API, all named `llg_x_*` (LLGuidance uses no such
//! name): built-in tokenizers, pure masks, stop reasons, draft masks and batch masks over
//! matchers.

use std::ffi::c_char;

use super::matcher::{matcher_mut, matcher_ref, LlgMatcher};
use super::{guard, read_slice, read_str, write_c, write_slice, LlgTokenizer};
use crate::ParserFactory;

/// `llg_x_matcher_stop_reason`: not stopped.
pub const LLG_X_STOP_NOT_STOPPED: i32 = 0;
/// `llg_x_matcher_stop_reason`: complete (EOS consumed, or nothing but EOS can follow).
pub const LLG_X_STOP_END: i32 = 1;
/// `llg_x_matcher_stop_reason`: the grammar's `max_tokens` reached.
pub const LLG_X_STOP_MAX_TOKENS: i32 = 2;
/// `llg_x_matcher_stop_reason`: the error state.
pub const LLG_X_STOP_ERROR: i32 = 3;
/// `llg_x_matcher_stop_reason`: cancelled.
pub const LLG_X_STOP_CANCELLED: i32 = 4;

/// A tokenizer by name: `"bytes"`, a built-in (`"o200k"`, `"cl100k"`), or the path of a
/// tokenizer file (`tokenizer.json`, `*.tiktoken`, tekken, SentencePiece `.model`), with its
/// canonical tokenization built in. NULL on error (message in `error_string`).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_x_new_tokenizer(
    name: *const c_char,
    error_string: *mut c_char,
    error_string_len: usize,
) -> *mut LlgTokenizer {
    let r = std::panic::catch_unwind(|| -> Result<ParserFactory, String> {
        // SAFETY: the caller's string, under the module's contract.
        let name = unsafe { read_str(name, "name") }?;
        ParserFactory::from_tokenizer_name(name).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|p| Err(super::panic_message(&*p)));
    let msg = r.as_ref().err().map_or("", |e| e.as_str());
    // SAFETY: the caller's buffer, under the module's contract.
    unsafe { write_c(error_string, error_string_len, msg.as_bytes()) };
    r.map_or(std::ptr::null_mut(), |factory| Box::into_raw(Box::new(LlgTokenizer { factory })))
}

/// The number of token ids of a tokenizer (0 for NULL).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_x_tokenizer_vocab_size(tok: *const LlgTokenizer) -> usize {
    // SAFETY: null or live, by the module's contract.
    guard(0, || unsafe { tok.as_ref() }.map_or(0, |t| t.factory.tokenizer().vocab().len()))
}

/// `pure` true: masks hold every grammar-consistent token, also where the grammar forces
/// bytes (LLGuidance's served mask, the default, holds only the first forced token there).
/// 0 on success, -1 for NULL.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_x_matcher_set_pure_masks(matcher: *mut LlgMatcher, pure: bool) -> i32 {
    guard(-1, || {
        // SAFETY: the caller's pointer, under the module's contract.
        match unsafe { matcher_mut(matcher) }.and_then(|m| m.served_mut()) {
            Some(s) => {
                s.set_forced_masks(!pure);
                0
            }
            None => -1,
        }
    })
}

/// The request's own stop set in place of the tokenizer's EOS ids (XGrammar's
/// `override_stop_tokens`): `n` special token ids, set before the first token; each is
/// masked until the grammar accepts and ends the matcher when consumed. 0 on success, -1 on
/// error (NULL, a text token, after the first token: the matcher's error says which).
///
/// # Safety
///
/// See the [module documentation](super#safety); `ids` points to `n` ids (NULL when 0).
#[no_mangle]
pub unsafe extern "C" fn llg_x_matcher_set_stop_tokens(
    matcher: *mut LlgMatcher,
    ids: *const u32,
    n: usize,
) -> i32 {
    guard(-1, || {
        // SAFETY: `n` ids at `ids`, by the caller's contract.
        let ids: &[u32] = if n == 0 || ids.is_null() {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(ids, n) }
        };
        // SAFETY: the caller's pointer, under the module's contract.
        let Some(m) = (unsafe { matcher_mut(matcher) }) else { return -1 };
        let Some(s) = m.served_mut() else { return -1 };
        s.set_stop_tokens(ids);
        if s.is_error() {
            -1
        } else {
            0
        }
    })
}

/// Why the matcher stopped: one of `LLG_X_STOP_*`; -1 for NULL.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_x_matcher_stop_reason(matcher: *const LlgMatcher) -> i32 {
    guard(-1, || {
        // SAFETY: the caller's pointer, under the module's contract.
        let Some(m) = (unsafe { matcher_ref(matcher) }) else { return -1 };
        if m.is_cancelled() {
            return LLG_X_STOP_CANCELLED;
        }
        if m.is_error() {
            return LLG_X_STOP_ERROR;
        }
        match m.served_stop_reason() {
            "NotStopped" => LLG_X_STOP_NOT_STOPPED,
            "MaxTokensTotal" => LLG_X_STOP_MAX_TOKENS,
            "InternalError" => LLG_X_STOP_ERROR,
            _ => LLG_X_STOP_END,
        }
    })
}

/// Masks at the current position and after each prefix of `draft` (speculative
/// decoding), into rows of `mask_byte_len` bytes at `masks` (at most `n_rows` rows; a row
/// after a draft token the grammar rejects is left untouched). The state is unchanged.
/// Returns how many rows were written, or -1 on error.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_x_matcher_compute_masks_for_draft(
    matcher: *mut LlgMatcher,
    draft: *const u32,
    n_draft: usize,
    masks: *mut u32,
    mask_byte_len: usize,
    n_rows: usize,
) -> i32 {
    guard(-1, || {
        // SAFETY: the caller's pointer, under the module's contract.
        let Some(m) = (unsafe { matcher_mut(matcher) }) else { return -1 };
        let words = m.words();
        if mask_byte_len != words * 4 || m.is_error() || m.stopped() {
            return -1;
        }
        // SAFETY: the caller's buffers, under the module's contract.
        let (Ok(draft), Ok(all)) = (unsafe { read_slice(draft, n_draft, "draft") }, unsafe {
            write_slice(masks, words * n_rows, "masks")
        }) else {
            return -1;
        };
        let Some(s) = m.served_mut() else { return -1 };
        let before = s.matcher().map_or(0, |x| x.tokens().len());
        let valid = s.validate_tokens(draft).min(n_rows.saturating_sub(1));
        let mut rows: Vec<&mut [u32]> = all.chunks_mut(words).collect();
        s.fill_draft(&mut rows, draft);
        debug_assert_eq!(s.matcher().map_or(0, |x| x.tokens().len()), before);
        if s.is_error() {
            return -1;
        }
        i32::try_from(valid + 1).unwrap_or(i32::MAX)
    })
}

/// Raw row pointers handed to rayon's threads (one matcher and one buffer per thread).
#[derive(Clone, Copy)]
struct Job(*mut LlgMatcher, *mut u32);
// SAFETY: the caller guarantees the matchers and buffers are distinct and live for the call.
unsafe impl Send for Job {}
// SAFETY: as for Send.
unsafe impl Sync for Job {}

/// The served masks of `n` matchers in parallel: matcher `i`'s mask into `masks[i]`
/// (`mask_byte_len` bytes each; a matcher in its error state gets the EOS-only mask).
/// Returns 0, or -1 when an argument is NULL or a size is wrong.
///
/// # Safety
///
/// See the [module documentation](super#safety); the matchers must be distinct and the
/// buffers must not overlap.
#[no_mangle]
pub unsafe extern "C" fn llg_x_par_compute_masks(
    matchers: *const *mut LlgMatcher,
    masks: *const *mut u32,
    n: usize,
    mask_byte_len: usize,
) -> i32 {
    guard(-1, || {
        // SAFETY: the caller's arrays, under the module's contract.
        let (Ok(ms), Ok(bufs)) = (unsafe { read_slice(matchers, n, "matchers") }, unsafe {
            read_slice(masks, n, "masks")
        }) else {
            return -1;
        };
        let jobs: Vec<Job> = ms.iter().zip(bufs).map(|(&m, &b)| Job(m, b)).collect();
        for &Job(m, b) in &jobs {
            // SAFETY: the caller's pointers, under the module's contract.
            let ok = unsafe { matcher_ref(m) }.is_some_and(|m| m.words() * 4 == mask_byte_len);
            if !ok || b.is_null() {
                return -1;
            }
        }
        use rayon::prelude::*;
        jobs.par_iter().for_each(|&Job(m, b)| {
            guard((), || {
                // SAFETY: see `Job`.
                let Some(m) = (unsafe { matcher_mut(m) }) else { return };
                // SAFETY: see `Job`; the size was checked above.
                let Ok(out) = (unsafe { write_slice(b, mask_byte_len / 4, "mask") }) else {
                    return;
                };
                m.fill_eos_on_error(out);
            })
        });
        0
    })
}
