//! The C API called from Rust: paths the C example does not take (a vocabulary without a
//! tokenize callback, whose forced tokens use greedy tokenization; a callback whose output
//! does not spell its input; error buffers).

use std::ffi::{c_char, c_void, CStr};

use llguidance::ffi::*;

const TOKENS: &[&str] = &["a", "b", "ab", "abc", "c", "<|end|>"];

fn vocab_init(cb: LlgTokenizeFn, ptrs: &[*const u8], lens: &[u32], special: &[u8]) -> LlgVocabInit {
    static EOS: u32 = 5;
    LlgVocabInit {
        n_vocab: TOKENS.len() as u32,
        token_bytes: ptrs.as_ptr(),
        token_lens: lens.as_ptr(),
        is_special: special.as_ptr(),
        eos_tokens: &EOS,
        n_eos: 1,
        tokenize_fn: cb,
        tokenize_user_data: std::ptr::null(),
        name: c"tiny".as_ptr(),
    }
}

/// Creates a factory over TOKENS and a matcher for `grammar` (Lark).
fn matcher(cb: LlgTokenizeFn, grammar: &CStr) -> *mut LlgMatcher {
    matcher_in(cb, c"lark", grammar)
}

/// Creates a factory over TOKENS and a matcher for `grammar` in `format`.
fn matcher_in(cb: LlgTokenizeFn, format: &CStr, grammar: &CStr) -> *mut LlgMatcher {
    let ptrs: Vec<*const u8> = TOKENS.iter().map(|t| t.as_ptr()).collect();
    let lens: Vec<u32> = TOKENS.iter().map(|t| t.len() as u32).collect();
    let special = [0, 0, 0, 0, 0, 1u8];
    let init = vocab_init(cb, &ptrs, &lens, &special);
    let mut err = [0 as c_char; 256];
    // SAFETY: `init` points to valid arrays of n_vocab elements; `err` has 256 bytes.
    let f = unsafe { llg_factory_new_from_vocab(&init, err.as_mut_ptr(), err.len()) };
    // SAFETY: `err` is NUL-terminated by the call.
    let msg = unsafe { CStr::from_ptr(err.as_ptr()) };
    assert!(!f.is_null(), "{msg:?}");
    // SAFETY: `f` is a live factory; the strings are NUL-terminated.
    let m = unsafe {
        llg_matcher_new(f, format.as_ptr(), grammar.as_ptr(), err.as_mut_ptr(), err.len())
    };
    // SAFETY: `f` is live and freed once; the matcher keeps what it needs.
    unsafe { llg_factory_free(f) };
    assert!(!m.is_null());
    m
}

fn ff(m: *mut LlgMatcher) -> Result<Vec<u32>, String> {
    let mut out = [0u32; 16];
    // SAFETY: `m` is live; `out` has 16 words.
    let n = unsafe { llg_matcher_compute_ff_tokens(m, out.as_mut_ptr(), out.len()) };
    if n < 0 {
        // SAFETY: `m` is live; the message is NUL-terminated and owned by the matcher.
        let e = unsafe { CStr::from_ptr(llg_matcher_last_error(m)) };
        return Err(e.to_string_lossy().into_owned());
    }
    Ok(out[..n as usize].to_vec())
}

#[test]
fn greedy_ff_tokens_without_callback() {
    let m = matcher(None, c"start: \"abcab\" /[bc]+/");
    // Greedy: abc, ab; "ab" is dropped since "abc" extends it.
    assert_eq!(ff(m), Ok(vec![3]));
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_consume_token(m, 3) }, 0);
    // "ab" is forced, and dropped for the same reason.
    assert_eq!(ff(m), Ok(vec![]));
    // SAFETY: `m` is live and freed once.
    unsafe { llg_matcher_free(m) };
}

/// A callback that always answers "b": its output does not spell the forced bytes.
unsafe extern "C" fn wrong(
    _: *const c_void,
    _: *const u8,
    _: usize,
    out: *mut u32,
    len: usize,
) -> usize {
    if len > 0 {
        // SAFETY: `out` has `len > 0` words.
        unsafe { *out = 1 };
    }
    1
}

/// A callback that asks for more room every time.
unsafe extern "C" fn greedy_for_room(
    _: *const c_void,
    _: *const u8,
    _: usize,
    _: *mut u32,
    len: usize,
) -> usize {
    len + 1
}

#[test]
fn bad_callback_output_is_an_error_not_a_wrong_answer() {
    let m = matcher(Some(wrong), c"start: \"abcab\" /[bc]+/");
    let e = ff(m).expect_err("callback output checked");
    assert!(e.contains("spell"), "{e}");
    // Not sticky: the matcher still works.
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_is_error(m) }, 0);
    // SAFETY: `m` is live and freed once.
    unsafe { llg_matcher_free(m) };

    let m = matcher(Some(greedy_for_room), c"start: \"abcab\" /[bc]+/");
    let e = ff(m).expect_err("a callback that never has room");
    assert!(e.contains("larger buffer"), "{e}");
    // SAFETY: `m` is live and freed once.
    unsafe { llg_matcher_free(m) };
}

#[test]
fn vocab_errors_are_reported() {
    let ptrs: Vec<*const u8> = TOKENS.iter().map(|t| t.as_ptr()).collect();
    let lens: Vec<u32> = TOKENS.iter().map(|t| t.len() as u32).collect();
    let special = [0u8; 6];
    let mut init = vocab_init(None, &ptrs, &lens, &special);
    static BAD_EOS: u32 = 99;
    init.eos_tokens = &BAD_EOS;
    let mut err = [0 as c_char; 128];
    // SAFETY: `init` is valid; `err` has 128 bytes.
    let f = unsafe { llg_factory_new_from_vocab(&init, err.as_mut_ptr(), err.len()) };
    assert!(f.is_null());
    // SAFETY: NUL-terminated by the call.
    let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
    assert!(msg.contains("EOS id 99"), "{msg}");
    init.token_bytes = std::ptr::null();
    // SAFETY: a null array is reported, not read.
    let f = unsafe { llg_factory_new_from_vocab(&init, err.as_mut_ptr(), err.len()) };
    assert!(f.is_null());
    // SAFETY: a null init is reported.
    assert!(
        unsafe { llg_factory_new_from_vocab(std::ptr::null(), std::ptr::null_mut(), 0) }.is_null()
    );
}

#[test]
fn error_buffer_truncates_at_char_boundary() {
    let mut err = [0x7f as c_char; 6];
    // SAFETY: the strings are NUL-terminated; `err` has 6 bytes.
    let f = unsafe { llg_factory_new(c"ééé-no-such".as_ptr(), err.as_mut_ptr(), err.len()) };
    assert!(f.is_null());
    // SAFETY: NUL-terminated by the call.
    let msg = unsafe { CStr::from_ptr(err.as_ptr()) };
    assert!(msg.to_bytes().len() <= 5);
    assert!(msg.to_str().is_ok(), "valid UTF-8 after truncation: {msg:?}");
}

/// Structural tags through the C API (format "structural_tag").
#[test]
fn structural_tag_through_the_c_api() {
    let tag = c"{\"type\": \"structural_tag\", \"format\": {\"type\": \"tag\", \"begin\": \"ab\", \"content\": {\"type\": \"any_text\"}, \"end\": \"c\"}}";
    let m = matcher_in(None, c"structural_tag", tag);
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_consume_token(m, 2) }, 0, "ab");
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_is_accepting(m) }, 0, "not accepting before the end");
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_consume_token(m, 4) }, 0, "c");
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_is_accepting(m) }, 1, "accepting after the end");
    // SAFETY: `m` is live and freed once.
    unsafe { llg_matcher_free(m) };
}
