//! `LlgTokenizer`: a vocabulary with its canonical tokenization, its token trie and slices
//! (one [`ParserFactory`]), built as LLGuidance builds it from `LlgTokenizerInit`: the token
//! bytes in one buffer with a length per token (a special token's bytes are `0xFF` followed
//! by its name), the EOS id, and the model's tokenize callback (or greedy longest match when
//! `use_approximate_greedy_tokenize_fn` is set), or the text of a `tokenizer.json`.
//!
//! The tokenize callback is the canonical tokenizer of forced tokens (and so of served
//! masks where bytes are forced). Its output is checked: ids out of range, special tokens,
//! or tokens that do not spell the input make that call fall back to greedy longest match,
//! so a faulty callback can cost a canonical tokenization but never a wrong one.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use toktrie::{TokenId, VocabBuilder, SPECIAL_TOKEN_MARKER};

use super::{guard, read_slice, read_str, write_c, write_slice};
use crate::{ParserFactory, SliceSpec, Tokenizer};

/// `llg_decode_tokens` flag: special tokens and invalid UTF-8 as they are (specials left out).
pub const LLG_DECODE_NONE: u32 = 0;
/// `llg_decode_tokens` flag: special tokens by name (`<[id]>` when they have none).
pub const LLG_DECODE_INCLUDE_SPECIAL: u32 = 1;
/// `llg_decode_tokens` flag: invalid UTF-8 replaced by U+FFFD.
pub const LLG_DECODE_VALID_UTF8: u32 = 2;

/// LLGuidance's token id type.
pub type LlgToken = u32;

/// A tokenize callback: writes at most `output_tokens_len` tokens of the tokenization of
/// `bytes[..bytes_len]` and returns the number of tokens of the whole tokenization. It must
/// be thread-safe and must not unwind (no C++ exceptions).
pub type LlgTokenizeFn = Option<
    unsafe extern "C" fn(
        user_data: *const c_void,
        bytes: *const u8,
        bytes_len: usize,
        output_tokens: *mut u32,
        output_tokens_len: usize,
    ) -> usize,
>;

/// LLGuidance's `LlgTokenizerInit` (zero-initialize, then set the fields).
#[repr(C)]
pub struct LlgTokenizerInit {
    /// The number of token ids.
    pub vocab_size: u32,
    /// The EOS id (for chat, the end-of-turn token).
    pub tok_eos: LlgToken,
    /// `vocab_size` lengths of the tokens in `token_bytes`.
    pub token_lens: *const u32,
    /// The bytes of all tokens, one after the other (a special token: `0xFF` + its name).
    pub token_bytes: *const u8,
    /// Instead of `token_lens` and `token_bytes`: the text of a HF `tokenizer.json`.
    pub tokenizer_json: *const c_char,
    /// The callback only takes valid UTF-8 (invalid runs are then tokenized greedily).
    pub tokenize_assumes_string: bool,
    /// The model's tokenizer (canonical tokenization of forced bytes).
    pub tokenize_fn: LlgTokenizeFn,
    /// Tokenize by greedy longest match instead of `tokenize_fn`.
    pub use_approximate_greedy_tokenize_fn: bool,
    /// Passed to `tokenize_fn`; must stay valid while the tokenizer, its clones and their
    /// matchers live.
    pub tokenize_user_data: *const c_void,
    /// NULL-terminated list of slice regexes; NULL: the defaults; an empty list: no slices.
    pub slices: *const *const c_char,
}

/// LLGuidance's `LlgTokenizerInitV2`: `LlgTokenizerInit` with a `struct_size` first and
/// extra EOS ids last. Only `struct_size` bytes are read.
#[repr(C)]
pub struct LlgTokenizerInitV2 {
    /// `sizeof(LlgTokenizerInitV2)` as the caller knows it.
    pub struct_size: usize,
    /// As in [`LlgTokenizerInit`].
    pub vocab_size: u32,
    /// As in [`LlgTokenizerInit`].
    pub tok_eos: LlgToken,
    /// As in [`LlgTokenizerInit`].
    pub token_lens: *const u32,
    /// As in [`LlgTokenizerInit`].
    pub token_bytes: *const u8,
    /// As in [`LlgTokenizerInit`].
    pub tokenizer_json: *const c_char,
    /// As in [`LlgTokenizerInit`].
    pub tokenize_assumes_string: bool,
    /// As in [`LlgTokenizerInit`].
    pub tokenize_fn: LlgTokenizeFn,
    /// As in [`LlgTokenizerInit`].
    pub use_approximate_greedy_tokenize_fn: bool,
    /// As in [`LlgTokenizerInit`].
    pub tokenize_user_data: *const c_void,
    /// As in [`LlgTokenizerInit`].
    pub slices: *const *const c_char,
    /// More EOS ids (`tok_eos_extra_count` of them); may be NULL.
    pub tok_eos_extra: *const LlgToken,
    /// The number of `tok_eos_extra`.
    pub tok_eos_extra_count: u32,
}

/// A tokenizer (opaque to C).
pub struct LlgTokenizer {
    pub(crate) factory: ParserFactory,
}

/// The C callback with its user data, callable from any thread (the header requires the
/// callback to be thread-safe and its user data to outlive every object using it).
struct Callback {
    f: unsafe extern "C" fn(*const c_void, *const u8, usize, *mut u32, usize) -> usize,
    user_data: *const c_void,
}

// SAFETY: the header requires the callback to be thread-safe and `user_data` to be usable
// from any thread while the tokenizer, its clones and their matchers live.
unsafe impl Send for Callback {}
// SAFETY: as for Send.
unsafe impl Sync for Callback {}

impl Callback {
    fn tokenize(&self, bytes: &[u8]) -> Result<Vec<u32>, String> {
        let mut out = vec![0u32; bytes.len() + 1];
        for _ in 0..2 {
            // SAFETY: `bytes` and `out` are live slices whose lengths are passed with them;
            // the header requires the callback to stay within them.
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

/// # Safety
///
/// The pointers in `init` are valid as the header states.
unsafe fn build(init: &LlgTokenizerInitV2, eos_extra: &[u32]) -> Result<ParserFactory, String> {
    let n = init.vocab_size as usize;
    let mut eos: Vec<TokenId> = vec![TokenId(init.tok_eos)];
    eos.extend(eos_extra.iter().map(|&t| TokenId(t)));
    let tokenizer = if !init.tokenizer_json.is_null() {
        // SAFETY: the pointer is our caller's, under the module's contract.
        let json = unsafe { read_str(init.tokenizer_json, "tokenizer_json") }?;
        let t =
            Tokenizer::from_bytes("tokenizer.json", json.as_bytes()).map_err(|e| e.to_string())?;
        t.map_vocab(|v| {
            if v.len() < n {
                v.pad_to(n)?;
            }
            v.set_eos_tokens(&eos)
        })
        .map_err(|e| e.to_string())?
    } else {
        // SAFETY: the pointer is our caller's, under the module's contract.
        let lens = unsafe { read_slice(init.token_lens, n, "token_lens") }?;
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        // SAFETY: the pointer is our caller's, under the module's contract.
        let all = unsafe { read_slice(init.token_bytes, total, "token_bytes") }?;
        let mut b = VocabBuilder::new();
        b.name("c-api");
        b.min_len(n);
        let mut at = 0;
        for (i, &len) in lens.iter().enumerate() {
            let bytes = &all[at..at + len as usize];
            at += len as usize;
            let id = TokenId::from_usize(i);
            match bytes.split_first() {
                None => {}
                Some((&SPECIAL_TOKEN_MARKER, name)) => {
                    let name = match std::str::from_utf8(name) {
                        Ok("") => format!("<[{i}]>"),
                        Ok(s) => s.to_string(),
                        Err(_) => {
                            return Err(format!(
                                "special token {i}: its name (after 0xFF) is not valid UTF-8"
                            ))
                        }
                    };
                    b.special(id, &name).map_err(|e| e.to_string())?;
                }
                Some(_) => {
                    b.token(id, bytes).map_err(|e| e.to_string())?;
                }
            }
        }
        for &e in &eos {
            if e.as_usize() >= n {
                return Err(format!("EOS id {} out of range (vocab_size = {n})", e.0));
            }
            b.eos(e);
        }
        let vocab = b.build().map_err(|e| e.to_string())?;
        match (init.use_approximate_greedy_tokenize_fn, init.tokenize_fn) {
            (true, _) => Tokenizer::from_vocab(vocab),
            (false, Some(f)) => {
                let cb = Callback { f, user_data: init.tokenize_user_data };
                let tokenize = move |bytes: &[u8]| cb.tokenize(bytes);
                Tokenizer::with_tokenize_fn(
                    vocab,
                    Arc::new(tokenize),
                    !init.tokenize_assumes_string,
                )
            }
            (false, None) => {
                return Err("tokenize_fn is NULL: pass the model's tokenize function, or set \
                            use_approximate_greedy_tokenize_fn"
                    .into())
            }
        }
    };
    let factory = ParserFactory::new(tokenizer).map_err(|e| e.to_string())?;
    if init.slices.is_null() {
        return Ok(factory);
    }
    let mut specs = Vec::new();
    for i in 0.. {
        // SAFETY: a NULL-terminated array of strings, by the header's contract.
        let p = unsafe { *init.slices.add(i) };
        if p.is_null() {
            break;
        }
        // SAFETY: the pointer is our caller's, under the module's contract.
        let s = unsafe { read_str(p, "slices[i]") }?;
        if let Some(spec) = SliceSpec::parse_llguidance(s)? {
            specs.push(spec);
        }
    }
    if specs.is_empty() {
        Ok(factory.with_slicer(false))
    } else {
        factory.with_slice_specs(&specs).map_err(|e| e.to_string())
    }
}

fn boxed(r: Result<ParserFactory, String>, err: *mut c_char, err_len: usize) -> *mut LlgTokenizer {
    match r {
        Ok(factory) => {
            // SAFETY: the caller's error buffer, under the module's contract.
            unsafe { write_c(err, err_len, b"") };
            Box::into_raw(Box::new(LlgTokenizer { factory }))
        }
        Err(e) => {
            // SAFETY: as above.
            unsafe { write_c(err, err_len, e.as_bytes()) };
            std::ptr::null_mut()
        }
    }
}

fn caught<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(super::panic_message(&*p)))
}

/// A tokenizer from an [`LlgTokenizerInit`]; null on error (message in `error_string`).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_tokenizer(
    tok_init: *const LlgTokenizerInit,
    error_string: *mut c_char,
    error_string_len: usize,
) -> *mut LlgTokenizer {
    let r = caught(|| {
        // SAFETY: null or an initialized struct, by the header's contract.
        let t = unsafe { tok_init.as_ref() }.ok_or("tok_init is a null pointer")?;
        // The V2 layout with no extra EOS ids.
        let init = LlgTokenizerInitV2 {
            struct_size: std::mem::size_of::<LlgTokenizerInitV2>(),
            vocab_size: t.vocab_size,
            tok_eos: t.tok_eos,
            token_lens: t.token_lens,
            token_bytes: t.token_bytes,
            tokenizer_json: t.tokenizer_json,
            tokenize_assumes_string: t.tokenize_assumes_string,
            tokenize_fn: t.tokenize_fn,
            use_approximate_greedy_tokenize_fn: t.use_approximate_greedy_tokenize_fn,
            tokenize_user_data: t.tokenize_user_data,
            slices: t.slices,
            tok_eos_extra: std::ptr::null(),
            tok_eos_extra_count: 0,
        };
        // SAFETY: the caller's pointers, under the module's contract.
        unsafe { build(&init, &[]) }
    });
    boxed(r, error_string, error_string_len)
}

/// A tokenizer from an [`LlgTokenizerInitV2`] (only `struct_size` bytes are read); null on
/// error (message in `error_string`).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_tokenizer_v2(
    tok_init: *const LlgTokenizerInitV2,
    error_string: *mut c_char,
    error_string_len: usize,
) -> *mut LlgTokenizer {
    let r = caught(|| {
        if tok_init.is_null() {
            return Err("tok_init is a null pointer".to_string());
        }
        // SAFETY: non-null; `struct_size` is the struct's first field, always present.
        let size = unsafe { (*tok_init).struct_size };
        let min = std::mem::offset_of!(LlgTokenizerInitV2, token_lens);
        if size < min {
            return Err(format!("struct_size {size} is below the minimum {min}"));
        }
        let mut t = std::mem::MaybeUninit::<LlgTokenizerInitV2>::zeroed();
        let n = size.min(std::mem::size_of::<LlgTokenizerInitV2>());
        // SAFETY: the caller's struct has `struct_size` readable bytes (header contract); we
        // copy at most our struct's size into zeroed storage, where every field is valid
        // when zero (null pointers, false, None, 0).
        let t = unsafe {
            std::ptr::copy_nonoverlapping(tok_init.cast::<u8>(), t.as_mut_ptr().cast::<u8>(), n);
            t.assume_init()
        };
        // SAFETY: the caller's pointer and count, under the module's contract.
        let extra = unsafe {
            read_slice(t.tok_eos_extra, t.tok_eos_extra_count as usize, "tok_eos_extra")
        }?;
        // SAFETY: the caller's pointers, under the module's contract.
        unsafe { build(&t, extra) }
    });
    boxed(r, error_string, error_string_len)
}

/// A new handle to the same tokenizer (it may outlive the original).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_clone_tokenizer(tok: *const LlgTokenizer) -> *mut LlgTokenizer {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or live, by the module's contract.
        match unsafe { tok.as_ref() } {
            Some(t) => Box::into_raw(Box::new(LlgTokenizer { factory: t.factory.clone() })),
            None => std::ptr::null_mut(),
        }
    })
}

/// Frees a tokenizer (null is ignored); its clones and matchers stay valid.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_free_tokenizer(tok: *mut LlgTokenizer) {
    if !tok.is_null() {
        // SAFETY: from llg_new_tokenizer* / llg_clone_tokenizer, not freed before.
        guard((), || drop(unsafe { Box::from_raw(tok) }));
    }
}

impl LlgTokenizer {
    /// Canonical tokenization; with `markers`, `0xFF` + a special token's name is that
    /// token. Greedy where there is no canonical tokenizer; empty on failure.
    pub(crate) fn tokenize(&self, bytes: &[u8], markers: bool) -> Vec<u32> {
        let tok = self.factory.tokenizer();
        let one = |b: &[u8]| -> Vec<TokenId> {
            let r =
                if tok.has_canonical() { tok.tokenize_bytes(b) } else { tok.tokenize_greedy(b) };
            r.unwrap_or_default()
        };
        let ids = if markers || !bytes.contains(&SPECIAL_TOKEN_MARKER) {
            one(bytes)
        } else {
            // Without markers a 0xFF byte is a byte: tokenize around it.
            let mut out = Vec::new();
            for (i, part) in bytes.split(|&b| b == SPECIAL_TOKEN_MARKER).enumerate() {
                if i > 0 {
                    out.extend(tok.tokenize_greedy(&[SPECIAL_TOKEN_MARKER]).unwrap_or_default());
                }
                out.extend(one(part));
            }
            out
        };
        ids.into_iter().map(|t| t.0).collect()
    }

    /// The bytes of `tokens` under LLGuidance's decode flags.
    pub(crate) fn decode(&self, tokens: &[u32], flags: u32) -> Vec<u8> {
        let v = self.factory.tokenizer().vocab();
        let mut out = Vec::new();
        for &t in tokens {
            if t as usize >= v.len() {
                continue;
            }
            let id = TokenId(t);
            if v.is_special(id) {
                if flags & LLG_DECODE_INCLUDE_SPECIAL != 0 {
                    match v.special_name(id) {
                        Some(n) if !n.is_empty() => out.extend_from_slice(n.as_bytes()),
                        _ => out.extend_from_slice(format!("<[{t}]>").as_bytes()),
                    }
                }
            } else {
                out.extend_from_slice(v.token_bytes(id));
            }
        }
        if flags & LLG_DECODE_VALID_UTF8 != 0 {
            out = String::from_utf8_lossy(&out).into_owned().into_bytes();
        }
        out
    }

    /// LLGuidance's debug form of tokens (`Vocabulary::dbg_tokens`, as the Python
    /// tokenizer's `dbg_tokens`).
    pub(crate) fn stringify(&self, tokens: &[u32]) -> String {
        let ids: Vec<TokenId> = tokens.iter().map(|&t| TokenId(t)).collect();
        format!("⟦{}⟧", self.factory.tokenizer().vocab().dbg_tokens(&ids, true))
    }
}

/// Shared body of the two tokenize entry points.
///
/// # Safety
///
/// As the header states for `llg_tokenize_bytes`.
unsafe fn tokenize_to(
    tok: *const LlgTokenizer,
    bytes: *const u8,
    bytes_len: usize,
    out: *mut u32,
    out_len: usize,
    markers: bool,
) -> usize {
    guard(0, || {
        // SAFETY: null or live, by the module's contract.
        let Some(t) = (unsafe { tok.as_ref() }) else { return 0 };
        // SAFETY: the caller's buffer, under the module's contract.
        let Ok(input) = (unsafe { read_slice(bytes, bytes_len, "bytes") }) else { return 0 };
        let ids = t.tokenize(input, markers);
        // SAFETY: the caller's buffer, under the module's contract.
        if let Ok(dst) = unsafe { write_slice(out, out_len, "output_tokens") } {
            for (d, s) in dst.iter_mut().zip(&ids) {
                *d = *s;
            }
        }
        ids.len()
    })
}

/// Canonical tokenization of bytes (0xFF is a byte); returns the number of tokens, of
/// which the first `output_tokens_len` are written.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_tokenize_bytes(
    tok: *const LlgTokenizer,
    bytes: *const u8,
    bytes_len: usize,
    output_tokens: *mut u32,
    output_tokens_len: usize,
) -> usize {
    // SAFETY: forwarded under the same contract.
    unsafe { tokenize_to(tok, bytes, bytes_len, output_tokens, output_tokens_len, false) }
}

/// As [`llg_tokenize_bytes`], where `0xFF` followed by a special token's name (or `[id]`) is
/// that special token.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_tokenize_bytes_marker(
    tok: *const LlgTokenizer,
    bytes: *const u8,
    bytes_len: usize,
    output_tokens: *mut u32,
    output_tokens_len: usize,
) -> usize {
    // SAFETY: forwarded under the same contract.
    unsafe { tokenize_to(tok, bytes, bytes_len, output_tokens, output_tokens_len, true) }
}

/// A debug string of tokens (NUL-terminated); returns the bytes a large enough buffer takes.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_stringify_tokens(
    tok: *const LlgTokenizer,
    tokens: *const u32,
    n_tokens: usize,
    output: *mut c_char,
    output_len: usize,
) -> usize {
    guard(0, || {
        // SAFETY: null or live, by the module's contract.
        let Some(t) = (unsafe { tok.as_ref() }) else { return 0 };
        // SAFETY: the caller's buffer, under the module's contract.
        let Ok(ids) = (unsafe { read_slice(tokens, n_tokens, "tokens") }) else { return 0 };
        // SAFETY: the caller's buffer, under the module's contract.
        unsafe { write_c(output, output_len, t.stringify(ids).as_bytes()) }
    })
}

/// The text of tokens under `flags` (`LLG_DECODE_*`), NUL-terminated; returns the bytes a
/// large enough buffer takes.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_decode_tokens(
    tok: *const LlgTokenizer,
    tokens: *const u32,
    n_tokens: usize,
    output: *mut c_char,
    output_len: usize,
    flags: u32,
) -> usize {
    guard(0, || {
        // SAFETY: null or live, by the module's contract.
        let Some(t) = (unsafe { tok.as_ref() }) else { return 0 };
        // SAFETY: the caller's buffer, under the module's contract.
        let Ok(ids) = (unsafe { read_slice(tokens, n_tokens, "tokens") }) else { return 0 };
        // SAFETY: the caller's buffer, under the module's contract.
        unsafe { write_c(output, output_len, &t.decode(ids, flags)) }
    })
}
