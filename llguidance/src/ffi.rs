//! The C API, declared in `include/llguidance.h` (hand-written; keep the two in sync).
//!
//! Conventions, the same for every entry point:
//! - No panic unwinds into C: every function runs its body under
//!   [`std::panic::catch_unwind`]. A panic inside a matcher call puts that matcher in its
//!   sticky error state.
//! - A null pointer argument is an error (a null or zero result, `-1` for `int32_t`
//!   results), never undefined behaviour. Dangling or misaligned pointers, and buffers
//!   shorter than the length passed with them, are the caller's responsibility.
//! - Objects are created by `llg_*_new` / `llg_matcher_clone` and owned by the caller, who
//!   frees them exactly once with the matching `llg_*_free`. A matcher keeps the factory's
//!   shared data alive (reference-counted), so a factory may be freed before its matchers.
//! - Functions returning `int32_t` return `-1` on error; the message is then available from
//!   [`llg_matcher_last_error`].
//!
//! Tokenize callbacks: a factory built from token byte strings
//! ([`llg_factory_new_from_vocab`]) has no canonical tokenizer of its own. When the caller
//! gives a tokenize callback, the forced bytes of [`llg_matcher_compute_ff_tokens`] are
//! tokenized with it (its output checked to spell exactly those bytes); without one they
//! are tokenized by greedy longest match, which may differ from the model's tokenizer.
//! In all cases the last token is left out when a longer token could start with it.
//!
//! # Safety
//!
//! Every `extern "C"` function here is `unsafe` for Rust callers: each pointer argument must
//! be null or valid for the call as the header states (objects from this API not yet
//! freed and not used by another thread during the call, buffers with at least the given
//! number of elements, NUL-terminated strings).
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use toktrie::{TokenId, VocabBuilder, SPECIAL_TOKEN_MARKER};

use crate::{GrammarSource, Matcher, ParserFactory, StopReason, Tokenizer};

/// A tokenize callback: writes the canonical tokenization of `bytes[..bytes_len]` into
/// `out[..out_len]` and returns the number of tokens of the full tokenization (which may
/// exceed `out_len`; it is then called again with a large enough buffer). It must be
/// thread-safe and must not unwind (no C++ exceptions).
pub type LlgTokenizeFn = Option<
    unsafe extern "C" fn(
        user_data: *const c_void,
        bytes: *const u8,
        bytes_len: usize,
        out: *mut u32,
        out_len: usize,
    ) -> usize,
>;

/// The vocabulary of a tokenizer given token by token (see the header for each field).
#[repr(C)]
pub struct LlgVocabInit {
    /// Number of token ids (the width of the logits).
    pub n_vocab: u32,
    /// `n_vocab` pointers to each token's bytes (the name for special tokens).
    pub token_bytes: *const *const u8,
    /// `n_vocab` lengths; a length of 0 leaves the id unused (a hole).
    pub token_lens: *const u32,
    /// `n_vocab` flags, nonzero for special tokens; may be null (no special tokens).
    pub is_special: *const u8,
    /// EOS ids; may be null when `n_eos` is 0 (then the default EOS is picked by name).
    pub eos_tokens: *const u32,
    /// Number of EOS ids.
    pub n_eos: usize,
    /// Tokenize callback for forced tokens; may be null (greedy tokenization).
    pub tokenize_fn: LlgTokenizeFn,
    /// Passed to `tokenize_fn`; must stay valid until the factory and all its matchers are
    /// freed.
    pub tokenize_user_data: *const c_void,
    /// A NUL-terminated name for messages; may be null.
    pub name: *const c_char,
}

struct Callback {
    f: unsafe extern "C" fn(*const c_void, *const u8, usize, *mut u32, usize) -> usize,
    user_data: *const c_void,
}

// SAFETY: the header requires the callback to be thread-safe and `user_data` to be usable
// from any thread until the factory and its matchers are freed; we only call `f` with it.
unsafe impl Send for Callback {}
// SAFETY: as for Send: calls through `&Callback` from several threads are allowed by the
// header's contract on the callback.
unsafe impl Sync for Callback {}

impl Callback {
    fn tokenize(&self, bytes: &[u8]) -> Result<Vec<u32>, String> {
        let mut out = vec![0u32; bytes.len() + 1];
        for _ in 0..2 {
            // SAFETY: `bytes` and `out` are live slices whose lengths are passed with them;
            // the header requires the callback to read and write only within those lengths
            // and `user_data` to outlive the factory and its matchers.
            let n = unsafe {
                (self.f)(self.user_data, bytes.as_ptr(), bytes.len(), out.as_mut_ptr(), out.len())
            };
            if n <= out.len() {
                out.truncate(n);
                return Ok(out);
            }
            out = vec![0u32; n];
        }
        Err("the tokenize callback asked for a larger buffer twice".into())
    }
}

/// A tokenizer and its trie (opaque to C).
pub struct LlgFactory {
    factory: ParserFactory,
    callback: Option<Arc<Callback>>,
}

/// The state of one sequence (opaque to C).
pub struct LlgMatcher {
    matcher: Matcher,
    factory: ParserFactory,
    callback: Option<Arc<Callback>>,
    /// The message of the last failed call, NUL-terminated for C.
    last_error: Option<CString>,
    /// The sticky error of `matcher` (or a panic caught here), NUL-terminated for C.
    sticky: Option<CString>,
}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).expect("NUL bytes replaced")
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let msg = crate::error::panic_message(p);
    format!("internal error (panic caught in the C API): {msg}")
}

/// The caller's error buffer: null, or `len` writable bytes.
struct ErrBuf {
    buf: *mut c_char,
    len: usize,
}

impl ErrBuf {
    /// # Safety
    ///
    /// `buf` is null or points to `len` writable bytes for as long as the `ErrBuf` lives.
    unsafe fn new(buf: *mut c_char, len: usize) -> ErrBuf {
        ErrBuf { buf, len }
    }

    /// Writes `msg`, truncated at a char boundary, NUL-terminated.
    fn write(&self, msg: &str) {
        if self.buf.is_null() || self.len == 0 {
            return;
        }
        let mut n = msg.len().min(self.len - 1);
        while !msg.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: non-null, and `len` writable bytes by `ErrBuf::new`'s contract; we write
        // `n + 1 <= len` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), self.buf.cast::<u8>(), n);
            *self.buf.add(n) = 0;
        }
    }
}

/// Reads a NUL-terminated UTF-8 string argument.
///
/// # Safety
///
/// `p` is null or a NUL-terminated string that lives and is not written for `'a`.
unsafe fn read_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
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
unsafe fn read_slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T], String> {
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

/// Runs `f`, turning an error or a panic into a message in the caller's buffer.
fn with_err_buf<T>(err: ErrBuf, f: impl FnOnce() -> Result<T, String>) -> Option<T> {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_message(&*p)));
    match r {
        Ok(v) => {
            err.write("");
            Some(v)
        }
        Err(m) => {
            err.write(&m);
            None
        }
    }
}

fn boxed_factory(factory: ParserFactory, callback: Option<Arc<Callback>>) -> *mut LlgFactory {
    Box::into_raw(Box::new(LlgFactory { factory, callback }))
}

/// A factory for a tokenizer: `"bytes"`, a built-in name (`"o200k"`, `"cl100k"`) or a path
/// to a tokenizer file. Returns null on error, with the message in `err_buf`.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_factory_new(
    tokenizer: *const c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> *mut LlgFactory {
    // SAFETY: `err_buf` is null or `err_len` writable bytes, by the module's contract.
    let err = unsafe { ErrBuf::new(err_buf, err_len) };
    with_err_buf(err, || {
        // SAFETY: the pointer is our caller's, under the module's contract.
        let name = unsafe { read_str(tokenizer, "tokenizer") }?;
        let f = ParserFactory::from_tokenizer_name(name).map_err(|e| e.to_string())?;
        Ok(boxed_factory(f, None))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// A factory for a vocabulary given token by token. Returns null on error, with the message
/// in `err_buf`.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_factory_new_from_vocab(
    init: *const LlgVocabInit,
    err_buf: *mut c_char,
    err_len: usize,
) -> *mut LlgFactory {
    // SAFETY: `err_buf` is null or `err_len` writable bytes, by the module's contract.
    let err = unsafe { ErrBuf::new(err_buf, err_len) };
    with_err_buf(err, || {
        if init.is_null() {
            return Err("init is a null pointer".into());
        }
        // SAFETY: non-null; the caller guarantees it points to an initialized LlgVocabInit.
        let init = unsafe { &*init };
        let n = init.n_vocab as usize;
        // SAFETY: the pointer is our caller's, under the module's contract.
        let ptrs = unsafe { read_slice(init.token_bytes, n, "token_bytes") }?;
        // SAFETY: the pointer is our caller's, under the module's contract.
        let lens = unsafe { read_slice(init.token_lens, n, "token_lens") }?;
        let special = if init.is_special.is_null() {
            None
        } else {
            // SAFETY: the pointer is our caller's, under the module's contract.
            Some(unsafe { read_slice(init.is_special, n, "is_special") }?)
        };
        // SAFETY: the pointer is our caller's, under the module's contract.
        let eos = unsafe { read_slice(init.eos_tokens, init.n_eos, "eos_tokens") }?;
        let mut b = VocabBuilder::new();
        if !init.name.is_null() {
            // SAFETY: the pointer is our caller's, under the module's contract.
            b.name(unsafe { read_str(init.name, "name") }?);
        }
        b.min_len(n);
        for (i, (&p, &len)) in ptrs.iter().zip(lens).enumerate() {
            if len == 0 {
                continue;
            }
            // SAFETY: the pointer is our caller's, under the module's contract.
            let bytes = unsafe { read_slice(p, len as usize, &format!("token_bytes[{i}]")) }?;
            let id = TokenId::from_usize(i);
            if special.is_some_and(|s| s[i] != 0) {
                let name = std::str::from_utf8(bytes)
                    .map_err(|_| format!("special token {i}: its name is not valid UTF-8"))?;
                b.special(id, name).map_err(|e| e.to_string())?;
            } else {
                b.token(id, bytes).map_err(|e| e.to_string())?;
            }
        }
        for &e in eos {
            if e as usize >= n {
                return Err(format!("EOS id {e} out of range (n_vocab = {n})"));
            }
            b.eos(TokenId(e));
        }
        let vocab = b.build().map_err(|e| e.to_string())?;
        let f = ParserFactory::new(Tokenizer::from_vocab(vocab)).map_err(|e| e.to_string())?;
        let callback =
            init.tokenize_fn.map(|f| Arc::new(Callback { f, user_data: init.tokenize_user_data }));
        Ok(boxed_factory(f, callback))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a factory (null is ignored). Matchers created from it stay valid.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_factory_free(factory: *mut LlgFactory) {
    if factory.is_null() {
        return;
    }
    let _ = catch_unwind(|| {
        // SAFETY: non-null and, by the header's contract, created by llg_factory_new* and
        // not freed before: we own it again.
        drop(unsafe { Box::from_raw(factory) });
    });
}

/// # Safety
///
/// `f` is null or a live factory from `llg_factory_new*`.
unsafe fn factory_ref<'a>(f: *const LlgFactory) -> Option<&'a LlgFactory> {
    // SAFETY: null or live, by this function's contract; factories are never mutated.
    unsafe { f.as_ref() }
}

/// The number of token ids (mask bits); 0 for a null factory.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_factory_vocab_size(factory: *const LlgFactory) -> usize {
    // SAFETY: the pointer is our caller's, under the module's contract.
    catch_unwind(|| unsafe { factory_ref(factory) }.map_or(0, |f| f.factory.trie().vocab_size()))
        .unwrap_or(0)
}

/// The number of u32 words of a mask, `(vocab_size + 31) / 32`; 0 for a null factory.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_factory_mask_words(factory: *const LlgFactory) -> usize {
    // SAFETY: the pointer is our caller's, under the module's contract.
    unsafe { llg_factory_vocab_size(factory) }.div_ceil(32)
}

/// A matcher for a grammar in `format` (`"lark"`, `"json"`, `"regex"`, `"gbnf"`, `"ir"`,
/// `"structural_tag"`).
/// Returns null on error, with the message in `err_buf`.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_new(
    factory: *const LlgFactory,
    format: *const c_char,
    grammar: *const c_char,
    err_buf: *mut c_char,
    err_len: usize,
) -> *mut LlgMatcher {
    // SAFETY: `err_buf` is null or `err_len` writable bytes, by the module's contract.
    let err = unsafe { ErrBuf::new(err_buf, err_len) };
    with_err_buf(err, || {
        // SAFETY: the pointer is our caller's, under the module's contract.
        let f = unsafe { factory_ref(factory) }.ok_or("factory is a null pointer")?;
        // SAFETY: the pointer is our caller's, under the module's contract.
        let format = unsafe { read_str(format, "format") }?;
        // SAFETY: the pointer is our caller's, under the module's contract.
        let text = unsafe { read_str(grammar, "grammar") }?;
        let src =
            GrammarSource::from_format(format, text.to_string()).map_err(|e| e.to_string())?;
        let matcher = f.factory.create_matcher(&src).map_err(|e| e.to_string())?;
        Ok(Box::into_raw(Box::new(LlgMatcher {
            matcher,
            factory: f.factory.clone(),
            callback: f.callback.clone(),
            last_error: None,
            sticky: None,
        })))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a matcher (null is ignored).
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_free(matcher: *mut LlgMatcher) {
    if matcher.is_null() {
        return;
    }
    let _ = catch_unwind(|| {
        // SAFETY: non-null and, by the header's contract, created by llg_matcher_new or
        // llg_matcher_clone and not freed before: we own it again.
        drop(unsafe { Box::from_raw(matcher) });
    });
}

/// # Safety
///
/// `m` is null or a live matcher not mutated during `'a`.
unsafe fn matcher_ref<'a>(m: *const LlgMatcher) -> Option<&'a LlgMatcher> {
    // SAFETY: null or live and not mutated, by this function's contract.
    unsafe { m.as_ref() }
}

/// # Safety
///
/// `m` is null or a live matcher not otherwise accessed during `'a` (the header: a matcher
/// is used by one thread at a time).
unsafe fn matcher_mut<'a>(m: *mut LlgMatcher) -> Option<&'a mut LlgMatcher> {
    // SAFETY: null or live and unaliased, by this function's contract.
    unsafe { m.as_mut() }
}

/// An independent copy of a matcher (same position, own state); null on a null argument.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_clone(matcher: *const LlgMatcher) -> *mut LlgMatcher {
    catch_unwind(|| {
        // SAFETY: the pointer is our caller's, under the module's contract.
        let Some(m) = (unsafe { matcher_ref(matcher) }) else { return std::ptr::null_mut() };
        Box::into_raw(Box::new(LlgMatcher {
            matcher: m.matcher.deep_clone(),
            factory: m.factory.clone(),
            callback: m.callback.clone(),
            last_error: m.last_error.clone(),
            sticky: m.sticky.clone(),
        }))
    })
    .unwrap_or(std::ptr::null_mut())
}

impl LlgMatcher {
    /// Runs one call: records its error (if any) and the matcher's sticky error; a panic
    /// here makes the matcher's error sticky.
    fn call<T>(&mut self, f: impl FnOnce(&mut LlgMatcher) -> Result<T, String>) -> Option<T> {
        if let Some(s) = &self.sticky {
            self.last_error = Some(s.clone());
            return None;
        }
        let r = catch_unwind(AssertUnwindSafe(|| f(&mut *self))).unwrap_or_else(|p| {
            let msg = panic_message(&*p);
            self.sticky = Some(c_string(&msg));
            Err(msg)
        });
        if self.sticky.is_none() {
            if let Some(e) = self.matcher.error() {
                self.sticky = Some(c_string(e.message()));
            }
        }
        match r {
            Ok(v) => {
                self.last_error = None;
                Some(v)
            }
            Err(m) => {
                self.last_error = Some(c_string(&m));
                None
            }
        }
    }

    fn mask_words(&self) -> usize {
        self.factory.trie().vocab_size().div_ceil(32)
    }

    fn ff_tokens(&mut self) -> Result<Vec<TokenId>, String> {
        let tokenizer = self.factory.tokenizer();
        if self.callback.is_none() && tokenizer.has_canonical() {
            return self.matcher.compute_ff_tokens().map_err(|e| e.to_string());
        }
        let mut bytes = self.matcher.compute_ff_bytes().map_err(|e| e.to_string())?;
        // Stop at a special token: forcing fewer tokens is always correct.
        if let Some(i) = bytes.iter().position(|&b| b == SPECIAL_TOKEN_MARKER) {
            bytes.truncate(i);
        }
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        let vocab = tokenizer.vocab();
        let mut toks = match &self.callback {
            Some(cb) => {
                let ids = cb.tokenize(&bytes)?;
                if ids.iter().any(|&t| t as usize >= vocab.len()) {
                    return Err("the tokenize callback returned an id out of range".into());
                }
                let toks: Vec<TokenId> = ids.into_iter().map(TokenId).collect();
                if vocab.decode(&toks) != bytes {
                    return Err("the tokenize callback's tokens do not spell its input".into());
                }
                toks
            }
            None => tokenizer.tokenize_greedy(&bytes).map_err(|e| e.to_string())?,
        };
        if let Some(&last) = toks.last() {
            if self.factory.trie().has_extensions(vocab.token_bytes(last)) {
                toks.pop();
            }
        }
        Ok(toks)
    }
}

fn status(r: Option<()>) -> i32 {
    if r.is_some() {
        0
    } else {
        -1
    }
}

/// Runs a call on a mutable matcher; `None` (and no record) for a null matcher.
fn on_matcher<T>(
    matcher: *mut LlgMatcher,
    f: impl FnOnce(&mut LlgMatcher) -> Result<T, String>,
) -> Option<T> {
    // SAFETY: the pointer is our caller's, under the module's contract.
    catch_unwind(AssertUnwindSafe(|| unsafe { matcher_mut(matcher) }?.call(f))).unwrap_or(None)
}

/// The number of u32 words of a mask; 0 for a null matcher.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_mask_words(matcher: *const LlgMatcher) -> usize {
    // SAFETY: the pointer is our caller's, under the module's contract.
    catch_unwind(|| unsafe { matcher_ref(matcher) }.map_or(0, |m| m.mask_words())).unwrap_or(0)
}

/// Computes the mask into `mask[..mask_words]` (at least `llg_matcher_mask_words` words;
/// extra words are zeroed). 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_compute_mask(
    matcher: *mut LlgMatcher,
    mask: *mut u32,
    mask_words: usize,
) -> i32 {
    status(on_matcher(matcher, |m| {
        let need = m.mask_words();
        if mask.is_null() || mask_words < need {
            return Err(format!(
                "mask buffer too small: {mask_words} words given, {need} needed (or null)"
            ));
        }
        // SAFETY: non-null; the caller guarantees `mask_words` writable, aligned u32 words
        // not aliased during the call.
        let out = unsafe { std::slice::from_raw_parts_mut(mask, mask_words) };
        m.matcher.compute_mask_into(out).map_err(|e| e.to_string())
    }))
}

/// Consumes one token. 0 on success, -1 on error (a rejected token is a sticky error).
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_consume_token(matcher: *mut LlgMatcher, token: u32) -> i32 {
    status(on_matcher(matcher, |m| {
        m.matcher.consume_token(TokenId(token)).map_err(|e| e.to_string())
    }))
}

/// Consumes `n` tokens in order. 0 on success, -1 on error (sticky).
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_consume_tokens(
    matcher: *mut LlgMatcher,
    tokens: *const u32,
    n: usize,
) -> i32 {
    status(on_matcher(matcher, |m| {
        // SAFETY: the pointer is our caller's, under the module's contract.
        let toks = unsafe { read_slice(tokens, n, "tokens") }?;
        toks.iter()
            .try_for_each(|&t| m.matcher.consume_token(TokenId(t)))
            .map_err(|e| e.to_string())
    }))
}

/// How many leading tokens of `tokens[..n]` would be accepted, without changing the state.
/// -1 on error.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_validate_tokens(
    matcher: *mut LlgMatcher,
    tokens: *const u32,
    n: usize,
) -> i32 {
    on_matcher(matcher, |m| {
        let toks: Vec<TokenId> =
            // SAFETY: the pointer is our caller's, under the module's contract.
            unsafe { read_slice(tokens, n, "tokens") }?.iter().map(|&t| TokenId(t)).collect();
        let k = m.matcher.validate_tokens(&toks).map_err(|e| e.to_string())?;
        i32::try_from(k).map_err(|_| "too many tokens for an int32_t result".to_string())
    })
    .unwrap_or(-1)
}

/// Undoes the last `n` consumed tokens. 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_rollback(matcher: *mut LlgMatcher, n: usize) -> i32 {
    status(on_matcher(matcher, |m| m.matcher.rollback(n).map_err(|e| e.to_string())))
}

/// Back to the start of the grammar (an error state stays). 0 on success, -1 on error.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_reset(matcher: *mut LlgMatcher) -> i32 {
    status(on_matcher(matcher, |m| m.matcher.reset().map_err(|e| e.to_string())))
}

/// Computes the forced tokens; writes the first `min(count, out_len)` of them into `out`
/// and returns `count` (so a result above `out_len` means the buffer was too small). -1 on
/// error.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_compute_ff_tokens(
    matcher: *mut LlgMatcher,
    out: *mut u32,
    out_len: usize,
) -> i32 {
    on_matcher(matcher, |m| {
        if out.is_null() && out_len > 0 {
            return Err("out is a null pointer".into());
        }
        let toks = m.ff_tokens()?;
        let k = toks.len().min(out_len);
        if k > 0 {
            // SAFETY: non-null (out_len > 0); the caller guarantees `out_len` writable,
            // aligned u32 words; we write `k <= out_len`.
            let dst = unsafe { std::slice::from_raw_parts_mut(out, k) };
            for (d, t) in dst.iter_mut().zip(&toks) {
                *d = t.0;
            }
        }
        i32::try_from(toks.len()).map_err(|_| "too many forced tokens".to_string())
    })
    .unwrap_or(-1)
}

/// 1 if the tokens so far form a complete string of the grammar, 0 if not, -1 on error.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_accepting(matcher: *mut LlgMatcher) -> i32 {
    on_matcher(matcher, |m| m.matcher.is_accepting().map_err(|e| e.to_string()))
        .map_or(-1, i32::from)
}

/// 1 if the matcher stopped (EOS, max tokens, or error), 0 if not, -1 for null.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_stopped(matcher: *const LlgMatcher) -> i32 {
    catch_unwind(|| {
        // SAFETY: the pointer is our caller's, under the module's contract.
        unsafe { matcher_ref(matcher) }
            .map_or(-1, |m| i32::from(m.matcher.is_stopped() || m.sticky.is_some()))
    })
    .unwrap_or(-1)
}

/// The stop reason: `LLG_STOP_NOT_STOPPED` (0), `LLG_STOP_EOS` (1), `LLG_STOP_MAX_TOKENS`
/// (2), `LLG_STOP_ERROR` (3); -1 for null.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_stop_reason(matcher: *const LlgMatcher) -> i32 {
    catch_unwind(|| {
        // SAFETY: the pointer is our caller's, under the module's contract.
        unsafe { matcher_ref(matcher) }.map_or(-1, |m| {
            if m.sticky.is_some() {
                return 3;
            }
            match m.matcher.stop_reason() {
                StopReason::NotStopped => 0,
                StopReason::EndOfSequence => 1,
                StopReason::MaxTokens => 2,
                StopReason::Error => 3,
            }
        })
    })
    .unwrap_or(-1)
}

/// 1 if the matcher is in its sticky error state, 0 if not, -1 for null.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_is_error(matcher: *const LlgMatcher) -> i32 {
    // SAFETY: the pointer is our caller's, under the module's contract.
    catch_unwind(|| unsafe { matcher_ref(matcher) }.map_or(-1, |m| i32::from(m.sticky.is_some())))
        .unwrap_or(-1)
}

/// The sticky error message, or null when not in the error state. Owned by the matcher;
/// valid until the next call on it or its free.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_get_error(matcher: *const LlgMatcher) -> *const c_char {
    catch_unwind(|| {
        // SAFETY: the pointer is our caller's, under the module's contract.
        unsafe { matcher_ref(matcher) }
            .and_then(|m| m.sticky.as_ref())
            .map_or(std::ptr::null(), |s| s.as_ptr())
    })
    .unwrap_or(std::ptr::null())
}

/// The message of the last call on this matcher if it failed (sticky or not: a too-small
/// buffer, a bad rollback count), else null. Owned by the matcher; valid until the next
/// call on it or its free.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_last_error(matcher: *const LlgMatcher) -> *const c_char {
    catch_unwind(|| {
        // SAFETY: the pointer is our caller's, under the module's contract.
        unsafe { matcher_ref(matcher) }
            .and_then(|m| m.last_error.as_ref())
            .map_or(std::ptr::null(), |s| s.as_ptr())
    })
    .unwrap_or(std::ptr::null())
}

/// Stops the matcher after `max_tokens` tokens (0: no limit). 0 on success, -1 for null.
///
/// # Safety
///
/// See the [module documentation](self#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_matcher_set_max_tokens(
    matcher: *mut LlgMatcher,
    max_tokens: usize,
) -> i32 {
    status(on_matcher(matcher, |m| {
        m.matcher.set_max_tokens((max_tokens > 0).then_some(max_tokens));
        Ok(())
    }))
}
