//! LLGuidance's C API called from Rust, over a tiny vocabulary given as llama.cpp gives one
//! (all token bytes in one buffer, a special token's bytes `0xFF` + its name, a tokenize
//! callback): tokenizers, served masks, errors, clones, the constraint API, the stop
//! controller and cancellation. `c/llama_style.c` drives the same API from C.

use std::ffi::{c_char, c_void, CStr};

use llguidance::ffi::*;

/// 0..=4 regular, 5 the EOS special, 6 another special.
const TOKENS: &[&[u8]] = &[b"a", b"b", b"ab", b"abc", b"c", b"\xff<|end|>", b"\xff<|tool|>"];

/// Greedy longest match over TOKENS' regular tokens (the "model's" tokenizer here).
unsafe extern "C" fn tokenize(
    _: *const c_void,
    bytes: *const u8,
    len: usize,
    out: *mut u32,
    out_len: usize,
) -> usize {
    // SAFETY: the library passes `len` readable bytes.
    let mut rest = unsafe { std::slice::from_raw_parts(bytes, len) };
    let mut ids = Vec::new();
    while !rest.is_empty() {
        let (id, n) = (0..5)
            .map(|i| (i as u32, TOKENS[i]))
            .filter(|(_, t)| rest.starts_with(t))
            .map(|(i, t)| (i, t.len()))
            .max_by_key(|&(_, n)| n)
            .unwrap_or((0, 1));
        ids.push(id);
        rest = &rest[n..];
    }
    for (i, &t) in ids.iter().enumerate().take(out_len) {
        // SAFETY: `out` has `out_len` words.
        unsafe { *out.add(i) = t };
    }
    ids.len()
}

/// A callback whose output does not spell its input ("b" for everything).
unsafe extern "C" fn wrong(
    _: *const c_void,
    _: *const u8,
    _: usize,
    out: *mut u32,
    n: usize,
) -> usize {
    if n > 0 {
        // SAFETY: `out` has `n > 0` words.
        unsafe { *out = 1 };
    }
    1
}

struct Vocab {
    lens: Vec<u32>,
    bytes: Vec<u8>,
}

fn vocab() -> Vocab {
    Vocab { lens: TOKENS.iter().map(|t| t.len() as u32).collect(), bytes: TOKENS.concat() }
}

fn new_tokenizer(v: &Vocab, f: LlgTokenizeFn, greedy: bool) -> Result<*mut LlgTokenizer, String> {
    let init = LlgTokenizerInit {
        vocab_size: TOKENS.len() as u32,
        tok_eos: 5,
        token_lens: v.lens.as_ptr(),
        token_bytes: v.bytes.as_ptr(),
        tokenizer_json: std::ptr::null(),
        tokenize_assumes_string: false,
        tokenize_fn: f,
        use_approximate_greedy_tokenize_fn: greedy,
        tokenize_user_data: std::ptr::null(),
        slices: std::ptr::null(),
    };
    let mut err = [0 as c_char; 256];
    // SAFETY: `init` points to valid arrays; `err` has 256 bytes.
    let t = unsafe { llg_new_tokenizer(&init, err.as_mut_ptr(), err.len()) };
    if t.is_null() {
        // SAFETY: NUL-terminated by the call.
        return Err(unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned());
    }
    Ok(t)
}

fn init_for(tok: *const LlgTokenizer) -> LlgConstraintInit {
    let mut init = std::mem::MaybeUninit::<LlgConstraintInit>::uninit();
    // SAFETY: set_defaults writes every field.
    unsafe {
        llg_constraint_init_set_defaults(init.as_mut_ptr(), tok);
        init.assume_init()
    }
}

fn new_matcher(tok: *const LlgTokenizer, kind: &CStr, data: &CStr) -> *mut LlgMatcher {
    let mut init = init_for(tok);
    init.log_stderr_level = 0;
    // SAFETY: valid init and NUL-terminated strings.
    let m = unsafe { llg_new_matcher(&init, kind.as_ptr(), data.as_ptr()) };
    assert!(!m.is_null(), "llg_new_matcher never returns NULL");
    m
}

fn error(m: *mut LlgMatcher) -> Option<String> {
    // SAFETY: `m` is live; the message is owned by the matcher.
    let p = unsafe { llg_matcher_get_error(m) };
    // SAFETY: non-null: NUL-terminated.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn mask(m: *mut LlgMatcher) -> Option<Vec<u32>> {
    // SAFETY: `m` is live.
    if unsafe { llg_matcher_compute_mask(m) } != 0 {
        return None;
    }
    // SAFETY: `m` is live; a computed mask has get_mask_byte_size bytes.
    let (p, n) = unsafe { (llg_matcher_get_mask(m), llg_matcher_get_mask_byte_size(m)) };
    assert!(!p.is_null());
    // SAFETY: as above.
    let words = unsafe { std::slice::from_raw_parts(p, n / 4) };
    Some(
        (0..TOKENS.len() as u32).filter(|&t| words[t as usize / 32] >> (t % 32) & 1 == 1).collect(),
    )
}

fn consume(m: *mut LlgMatcher, t: u32) -> i32 {
    // SAFETY: `m` is live.
    unsafe { llg_matcher_consume_token(m, t) }
}

fn ff(m: *mut LlgMatcher) -> Vec<u32> {
    let mut out = [0u32; 16];
    // SAFETY: `m` is live; `out` has 16 words.
    let n = unsafe { llg_matcher_compute_ff_tokens(m, out.as_mut_ptr(), out.len()) };
    assert!(n >= 0);
    out[..n as usize].to_vec()
}

#[test]
fn served_masks_hold_the_first_forced_token() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let m = new_matcher(tok, c"lark", c"start: \"abcab\" /[bc]+/");
    // SAFETY: `tok` is live and freed once; the matcher keeps what it needs.
    unsafe { llg_free_tokenizer(tok) };
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_get_mask(m) }.is_null(), "NULL before a mask is computed");
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_get_mask_byte_size(m) }, 4);
    // Forced "abcab": canonical abc, ab; "ab" dropped (abc extends it): ff = [abc].
    assert_eq!(ff(m), vec![3]);
    assert_eq!(mask(m), Some(vec![3]), "only the first forced token, not a, ab");
    // The pure mask still has the shorter spellings.
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_x_matcher_set_pure_masks(m, true) }, 0);
    assert_eq!(mask(m), Some(vec![0, 2, 3]));
    // SAFETY: `m` is live.
    unsafe { llg_x_matcher_set_pure_masks(m, false) };
    assert_eq!(consume(m, 3), 0);
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_get_mask(m) }.is_null(), "consume clears the mask");
    // "ab" forced, but "abc" extends it: nothing forced as tokens, the pure mask.
    assert_eq!(ff(m), Vec::<u32>::new());
    assert_eq!(mask(m), Some(vec![0, 2, 3]));
    assert_eq!(consume(m, 2), 0);
    assert_eq!(mask(m), Some(vec![1, 4]));
    assert_eq!(consume(m, 4), 0);
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_is_accepting(m) });
    assert_eq!(mask(m), Some(vec![1, 4, 5]), "EOS when accepting");
    assert_eq!(consume(m, 5), 0);
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_is_stopped(m) });
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_reset(m) }, 0);
    assert_eq!(mask(m), Some(vec![3]));
    // SAFETY: `m` is live and freed once.
    unsafe { llg_free_matcher(m) };
}

#[test]
fn errors_are_states_with_stable_messages() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let bad = new_matcher(tok, c"lark", c"start: nope");
    // SAFETY: `bad` is live.
    assert!(unsafe { llg_matcher_is_error(bad) });
    let e1 = error(bad).expect("a message");
    // SAFETY: `bad` is live.
    let (p1, p2) = unsafe { (llg_matcher_get_error(bad), llg_matcher_get_error(bad)) };
    assert_eq!(p1, p2, "the same pointer every time");
    assert!(e1.contains("nope"), "{e1}");
    assert!(mask(bad).is_none());
    assert_eq!(consume(bad, 0), -1);
    // SAFETY: `bad` is live and freed once.
    unsafe { llg_free_matcher(bad) };

    let unknown = new_matcher(tok, c"cobol", c"x");
    assert!(error(unknown).unwrap().contains("unknown constraint type"));
    // SAFETY: freed once.
    unsafe { llg_free_matcher(unknown) };

    let m = new_matcher(tok, c"regex", c"ab+");
    assert_eq!(consume(m, 4), -1, "c is not allowed");
    let e = error(m).unwrap();
    assert!(e.contains("doesn't satisfy the grammar"), "{e}");
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_reset(m) }, -1, "no reset from the error state");
    // SAFETY: `m` and `tok` are live and freed once.
    unsafe {
        llg_free_matcher(m);
        llg_free_tokenizer(tok);
    }

    // A tokenizer needs a tokenize function or the greedy flag.
    let e = new_tokenizer(&v, None, false).unwrap_err();
    assert!(e.contains("tokenize_fn"), "{e}");
    let t = new_tokenizer(&v, None, true).unwrap();
    // SAFETY: freed once.
    unsafe { llg_free_tokenizer(t) };
}

#[test]
fn a_callback_that_does_not_spell_its_input_falls_back_to_greedy() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(wrong), false).unwrap();
    let m = new_matcher(tok, c"lark", c"start: \"abcab\" /[bc]+/");
    assert_eq!(ff(m), vec![3], "greedy: abc, ab (dropped)");
    // SAFETY: live, freed once.
    unsafe {
        llg_free_matcher(m);
        llg_free_tokenizer(tok);
    }
}

#[test]
fn clones_outlive_the_original() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    // SAFETY: `tok` is live.
    let tok2 = unsafe { llg_clone_tokenizer(tok) };
    // SAFETY: freed once; the clone stays valid.
    unsafe { llg_free_tokenizer(tok) };
    let m = new_matcher(tok2, c"regex", c"(ab|c)+");
    assert_eq!(consume(m, 2), 0);
    // SAFETY: `m` is live.
    let c = unsafe { llg_clone_matcher(m) };
    // SAFETY: freed once; the clone is independent.
    unsafe { llg_free_matcher(m) };
    assert_eq!(consume(c, 4), 0);
    // SAFETY: `c` is live.
    assert!(unsafe { llg_matcher_is_accepting(c) });
    let mut toks = [2u32, 4, 1];
    // SAFETY: `c` is live; 3 tokens.
    assert_eq!(unsafe { llg_matcher_validate_tokens(c, toks.as_mut_ptr(), 3) }, 2);
    // SAFETY: `c` is live.
    assert_eq!(unsafe { llg_matcher_rollback(c, 2) }, 0);
    // SAFETY: `c` is live.
    assert!(!unsafe { llg_matcher_is_accepting(c) });
    // SAFETY: live, freed once.
    unsafe {
        llg_free_matcher(c);
        llg_free_tokenizer(tok2);
    }
}

#[test]
fn tokenize_decode_and_stringify() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let mut out = [0u32; 8];
    let text = b"abcab\xff<|end|>";
    // SAFETY: live tokenizer, valid buffers.
    let n =
        unsafe { llg_tokenize_bytes_marker(tok, text.as_ptr(), text.len(), out.as_mut_ptr(), 8) };
    assert_eq!(&out[..n], &[3, 2, 5]);
    let mut buf = [0 as c_char; 64];
    // SAFETY: as above.
    let k = unsafe {
        llg_decode_tokens(tok, out.as_ptr(), n, buf.as_mut_ptr(), 64, LLG_DECODE_INCLUDE_SPECIAL)
    };
    // SAFETY: NUL-terminated by the call.
    assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes(), b"abcab<|end|>");
    assert_eq!(k, 13);
    // SAFETY: as above.
    unsafe { llg_decode_tokens(tok, out.as_ptr(), n, buf.as_mut_ptr(), 64, LLG_DECODE_NONE) };
    // SAFETY: NUL-terminated by the call.
    assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes(), b"abcab");
    // SAFETY: as above.
    let need = unsafe { llg_stringify_tokens(tok, out.as_ptr(), n, std::ptr::null_mut(), 0) };
    assert!(need > 5);
    // SAFETY: live, freed once.
    unsafe { llg_free_tokenizer(tok) };
}

#[test]
fn constraint_api_commits_forced_tokens_when_asked() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let mut init = init_for(tok);
    init.log_stderr_level = 0;
    init.ff_tokens_ok = true;
    // SAFETY: valid init, NUL-terminated grammar.
    let cc = unsafe { llg_new_constraint_lark(&init, c"start: \"c\" \"abcab\" /[bc]+/".as_ptr()) };
    // SAFETY: `cc` is live.
    assert!(unsafe { llg_get_error(cc) }.is_null());
    let mut res = LlgMaskResult { sample_mask: std::ptr::null(), temperature: 0.0, is_stop: false };
    // SAFETY: live constraint, writable result.
    assert_eq!(unsafe { llg_compute_mask(cc, &mut res) }, 0);
    assert!(!res.is_stop && !res.sample_mask.is_null());
    let mut commit = LlgCommitResult { tokens: std::ptr::null(), n_tokens: 0, is_stop: false };
    // SAFETY: as above.
    assert_eq!(unsafe { llg_commit_token(cc, 4, &mut commit) }, 0);
    // SAFETY: `n_tokens` tokens at `tokens`, valid until the next call.
    let got = unsafe { std::slice::from_raw_parts(commit.tokens, commit.n_tokens as usize) };
    assert_eq!(got, &[4, 3], "the sampled c, then the forced abc");
    // Batch masks of two constraints.
    // SAFETY: `cc` is live.
    let cc2 = unsafe { llg_clone_constraint(cc) };
    let (mut m1, mut m2) = ([0u32; 1], [0u32; 1]);
    let steps = [
        LlgConstraintStep { constraint: cc, mask_dest: m1.as_mut_ptr(), mask_byte_len: 4 },
        LlgConstraintStep { constraint: cc2, mask_dest: m2.as_mut_ptr(), mask_byte_len: 4 },
    ];
    // SAFETY: valid steps, synchronous (no callback).
    unsafe { llg_par_compute_mask(steps.as_ptr(), 2, std::ptr::null(), None) };
    assert_eq!(m1, m2);
    assert_eq!(m1[0], 0b1101, "a, ab or abc after abc (ab forced but extendable: pure)");
    // SAFETY: live, freed once.
    unsafe {
        llg_free_constraint(cc);
        llg_free_constraint(cc2);
        llg_free_tokenizer(tok);
    }
}

#[test]
fn stop_controller_holds_back_a_possible_match() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let stop = [6u32];
    let mut err = [0 as c_char; 64];
    // SAFETY: live tokenizer, valid buffers, NUL-terminated regex.
    let sc = unsafe {
        llg_new_stop_controller(tok, stop.as_ptr(), 1, c"cab".as_ptr(), err.as_mut_ptr(), 64)
    };
    assert!(!sc.is_null());
    let step = |t: u32| {
        let (mut n, mut stopped) = (0usize, false);
        // SAFETY: live controller; the output is NUL-terminated and `n` bytes long.
        let p = unsafe { llg_stop_commit_token(sc, t, &mut n, &mut stopped) };
        // SAFETY: as above.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        assert_eq!(s.len(), n);
        (s, stopped)
    };
    assert_eq!(step(0), ("a".into(), false));
    assert_eq!(step(4), ("".into(), false), "c may start cab");
    assert_eq!(step(0), ("".into(), false), "ca may start cab");
    assert_eq!(step(1), ("".into(), true), "cab: stop, nothing after the match start");
    // SAFETY: live, freed once.
    unsafe { llg_free_stop_controller(sc) };
    // SAFETY: as above; a bad regex is an error.
    let bad = unsafe {
        llg_new_stop_controller(tok, stop.as_ptr(), 1, c"(".as_ptr(), err.as_mut_ptr(), 64)
    };
    assert!(bad.is_null());
    // SAFETY: freed once.
    unsafe { llg_free_tokenizer(tok) };
}

#[test]
fn cancellation_stops_for_good() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let m = new_matcher(tok, c"regex", c"(ab|c)+");
    // SAFETY: `m` is live.
    let h = unsafe { llg_matcher_get_cancellation_handle(m) };
    // SAFETY: `h` is live.
    let h2 = unsafe { llg_clone_cancellation_handle(h) };
    // SAFETY: freed once; the clone stays.
    unsafe { llg_free_cancellation_handle(h) };
    assert!(mask(m).is_some());
    // SAFETY: `h2` is live.
    unsafe { llg_cancel(h2) };
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_is_cancelled(m) });
    assert!(mask(m).is_none());
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_get_mask(m) }.is_null());
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_is_stopped(m) });
    // SAFETY: `m` is live. Cancelled is a stopped error state whose message says so (as
    // LLGuidance's `is_error` / `get_error`), and still cancelled (no other error first).
    assert!(unsafe { llg_matcher_is_error(m) });
    // SAFETY: `m` is live; the message pointer lives as long as `m`.
    let e = unsafe { CStr::from_ptr(llg_matcher_get_error(m)) };
    assert_eq!(e.to_str().unwrap(), "operation cancelled");
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_is_cancelled(m) });
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_matcher_reset(m) }, -1, "reset does not revive it");
    assert_eq!(consume(m, 2), -1);
    // SAFETY: `m` is live.
    assert_eq!(unsafe { llg_x_matcher_stop_reason(m) }, LLG_X_STOP_CANCELLED);
    // SAFETY: live, freed once.
    unsafe {
        llg_free_matcher(m);
        llg_cancel(h2);
        llg_free_cancellation_handle(h2);
        llg_free_tokenizer(tok);
    }
}

#[test]
fn validate_grammar_and_multiple_eos() {
    let v = vocab();
    let init = LlgTokenizerInitV2 {
        struct_size: std::mem::size_of::<LlgTokenizerInitV2>(),
        vocab_size: TOKENS.len() as u32,
        tok_eos: 5,
        token_lens: v.lens.as_ptr(),
        token_bytes: v.bytes.as_ptr(),
        tokenizer_json: std::ptr::null(),
        tokenize_assumes_string: false,
        tokenize_fn: Some(tokenize),
        use_approximate_greedy_tokenize_fn: false,
        tokenize_user_data: std::ptr::null(),
        slices: std::ptr::null(),
        tok_eos_extra: [6u32].as_ptr(),
        tok_eos_extra_count: 1,
    };
    // SAFETY: valid init; no error buffer.
    let tok = unsafe { llg_new_tokenizer_v2(&init, std::ptr::null_mut(), 0) };
    assert!(!tok.is_null());
    let m = new_matcher(tok, c"regex", c"c");
    assert_eq!(consume(m, 4), 0);
    assert_eq!(mask(m), Some(vec![5, 6]), "both EOS ids once accepting");
    // SAFETY: freed once.
    unsafe { llg_free_matcher(m) };
    // A request's own stop set: only 6 ends it; a text token cannot be a stop.
    let m = new_matcher(tok, c"regex", c"c");
    // SAFETY: `m` is live; one id.
    assert_eq!(unsafe { llg_x_matcher_set_stop_tokens(m, [6u32].as_ptr(), 1) }, 0);
    assert_eq!(consume(m, 4), 0);
    assert_eq!(mask(m), Some(vec![6]), "the stop set replaces both EOS ids");
    // SAFETY: freed once.
    unsafe { llg_free_matcher(m) };
    let m = new_matcher(tok, c"regex", c"c");
    // SAFETY: `m` is live; one id.
    assert_eq!(unsafe { llg_x_matcher_set_stop_tokens(m, [4u32].as_ptr(), 1) }, -1);
    // SAFETY: freed once.
    unsafe { llg_free_matcher(m) };
    let ci = init_for(tok);
    let mut msg = [0 as c_char; 256];
    // SAFETY: valid init, strings and buffer.
    let ok = unsafe {
        llg_validate_grammar(
            &ci,
            c"json".as_ptr(),
            c"{\"type\":\"integer\"}".as_ptr(),
            msg.as_mut_ptr(),
            256,
        )
    };
    assert_eq!(ok, 0);
    // SAFETY: as above.
    let bad = unsafe {
        llg_validate_grammar(&ci, c"json".as_ptr(), c"{\"type\":".as_ptr(), msg.as_mut_ptr(), 256)
    };
    assert_eq!(bad, -1);
    // SAFETY: NUL-terminated by the call.
    assert!(!unsafe { CStr::from_ptr(msg.as_ptr()) }.to_bytes().is_empty());
    // SAFETY: freed once.
    unsafe { llg_free_tokenizer(tok) };
}

/// Structural tags through the C API (constraint type "structural_tag", an extension).
#[test]
fn structural_tag_through_the_c_api() {
    let v = vocab();
    let tok = new_tokenizer(&v, Some(tokenize), false).unwrap();
    let tag = c"{\"type\": \"structural_tag\", \"format\": {\"type\": \"tag\", \"begin\": \"ab\", \"content\": {\"type\": \"any_text\"}, \"end\": \"c\"}}";
    let m = new_matcher(tok, c"structural_tag", tag);
    assert_eq!(error(m), None);
    assert_eq!(consume(m, 2), 0, "ab");
    // SAFETY: `m` is live.
    assert!(!unsafe { llg_matcher_is_accepting(m) }, "not accepting before the end");
    assert_eq!(consume(m, 4), 0, "c");
    // SAFETY: `m` is live.
    assert!(unsafe { llg_matcher_is_accepting(m) }, "accepting after the end");
    // SAFETY: live, freed once.
    unsafe {
        llg_free_matcher(m);
        llg_free_tokenizer(tok);
    }
}
