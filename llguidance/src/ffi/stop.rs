//! `LlgStopController`: LLGuidance's stop-sequence controller. It is given the tokens a
//! model generates, one at a time, and returns the text to show the user, holding back
//! text that may still become part of a stop match:
//! - a token of the stop set stops the sequence (the held-back text is released);
//! - with a stop regex, the first match in the generated text stops the sequence, and the
//!   text before the match is released;
//! - text is released only up to the first position from which a match could still start
//!   (an anchored lazy DFA run over the held-back suffix is not dead), and only whole UTF-8
//!   characters.

use std::ffi::c_char;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{meta, Anchored, Input};

use super::{guard, read_slice, read_str, write_c, LlgTokenizer};
use crate::TokenId;

/// A stop-sequence controller (opaque to C).
pub struct LlgStopController {
    vocab: toktrie::Vocabulary,
    stop_tokens: Vec<u32>,
    rx: Option<(String, meta::Regex, DFA, Cache)>,
    pending: Vec<u8>,
    /// The last output, NUL-terminated for C.
    out: Vec<u8>,
    stopped: bool,
}

impl LlgStopController {
    fn new(tok: &LlgTokenizer, stop: &[u32], rx: Option<&str>) -> Result<Self, String> {
        let rx = match rx {
            None => None,
            Some(p) => {
                let m = meta::Regex::new(p).map_err(|e| format!("stop regex: {e}"))?;
                let d = DFA::new(p).map_err(|e| format!("stop regex: {e}"))?;
                let c = d.create_cache();
                Some((p.to_string(), m, d, c))
            }
        };
        Ok(LlgStopController {
            vocab: tok.factory.tokenizer().vocab().clone(),
            stop_tokens: stop.to_vec(),
            rx,
            pending: Vec::new(),
            out: vec![0],
            stopped: false,
        })
    }

    /// Whether `bytes` is a prefix of some match of the regex (anchored at its start).
    fn may_match(dfa: &DFA, cache: &mut Cache, bytes: &[u8]) -> bool {
        let input = Input::new(bytes).anchored(Anchored::Yes);
        let Ok(mut sid) = dfa.start_state_forward(cache, &input) else { return true };
        for &b in bytes {
            match dfa.next_state(cache, sid, b) {
                Ok(s) if s.is_dead() => return false,
                Ok(s) if s.is_quit() => return true,
                Ok(s) => sid = s,
                Err(_) => return true,
            }
        }
        true
    }

    /// The longest prefix of `b[..n]` that ends on a character boundary (invalid bytes
    /// count as characters; only an incomplete character at the end is held back).
    fn utf8_cut(b: &[u8], n: usize) -> usize {
        match std::str::from_utf8(&b[..n]) {
            Ok(_) => n,
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => {
                // Invalid bytes inside: keep them; hold back at most 3 trailing bytes that
                // start an incomplete character.
                let start = n.saturating_sub(3);
                (start..n)
                    .find(|&i| {
                        b[i] >= 0xC0
                            && std::str::from_utf8(&b[i..n]).is_err_and(|e| e.error_len().is_none())
                    })
                    .unwrap_or(n)
            }
        }
    }

    fn commit(&mut self, token: u32) {
        self.out.clear();
        if self.stopped {
            self.out.push(0);
            return;
        }
        if self.stop_tokens.contains(&token) {
            self.stopped = true;
            self.out = std::mem::take(&mut self.pending);
        } else {
            if (token as usize) < self.vocab.len() {
                let id = TokenId(token);
                if self.vocab.is_special(id) {
                    let name = self.vocab.special_name(id).unwrap_or("");
                    self.pending.extend_from_slice(name.as_bytes());
                } else {
                    self.pending.extend_from_slice(self.vocab.token_bytes(id));
                }
            }
            let mut release = self.pending.len();
            if let Some((_, m, dfa, cache)) = &mut self.rx {
                if let Some(hit) = m.find(&self.pending) {
                    self.stopped = true;
                    release = hit.start();
                } else {
                    release = (0..=self.pending.len())
                        .find(|&p| Self::may_match(dfa, cache, &self.pending[p..]))
                        .unwrap_or(self.pending.len());
                }
            }
            if !self.stopped {
                release = Self::utf8_cut(&self.pending, release);
            }
            self.out = self.pending.drain(..release).collect();
            if self.stopped {
                self.pending.clear();
            }
        }
        self.out = String::from_utf8_lossy(&self.out).into_owned().into_bytes();
        self.out.push(0);
    }
}

impl Clone for LlgStopController {
    fn clone(&self) -> Self {
        LlgStopController {
            vocab: self.vocab.clone(),
            stop_tokens: self.stop_tokens.clone(),
            rx: self
                .rx
                .as_ref()
                .map(|(p, m, d, _)| (p.clone(), m.clone(), d.clone(), d.create_cache())),
            pending: self.pending.clone(),
            out: self.out.clone(),
            stopped: self.stopped,
        }
    }
}

/// A stop controller for `stop_tokens` and an optional stop regex; NULL on error (message
/// in `error_string`).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_new_stop_controller(
    tokenizer: *const LlgTokenizer,
    stop_tokens: *const u32,
    stop_tokens_len: usize,
    stop_rx: *const c_char,
    error_string: *mut c_char,
    error_string_len: usize,
) -> *mut LlgStopController {
    let r = std::panic::catch_unwind(|| -> Result<LlgStopController, String> {
        // SAFETY: null or live, by the module's contract.
        let tok = unsafe { tokenizer.as_ref() }.ok_or("tokenizer is a null pointer")?;
        // SAFETY: the caller's buffer, under the module's contract.
        let stop = unsafe { read_slice(stop_tokens, stop_tokens_len, "stop_tokens") }?;
        let rx = if stop_rx.is_null() {
            None
        } else {
            // SAFETY: the caller's string, under the module's contract.
            Some(unsafe { read_str(stop_rx, "stop_rx") }?)
        };
        LlgStopController::new(tok, stop, rx)
    })
    .unwrap_or_else(|p| Err(super::panic_message(&*p)));
    let msg = r.as_ref().err().map_or("", |e| e.as_str());
    // SAFETY: the caller's buffer, under the module's contract.
    unsafe { write_c(error_string, error_string_len, msg.as_bytes()) };
    r.map_or(std::ptr::null_mut(), |c| Box::into_raw(Box::new(c)))
}

/// Commits a generated token: returns the text to show (UTF-8, NUL-terminated, valid until
/// the next call on the controller), its length in `*output_len_p`, and in `*is_stopped_p`
/// whether the sequence is finished.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_stop_commit_token(
    stop_ctrl: *mut LlgStopController,
    token: u32,
    output_len_p: *mut usize,
    is_stopped_p: *mut bool,
) -> *const c_char {
    guard(c"".as_ptr(), || {
        // SAFETY: null or live and unaliased, by the module's contract.
        let Some(c) = (unsafe { stop_ctrl.as_mut() }) else { return c"".as_ptr() };
        c.commit(token);
        // SAFETY: null or writable, by the header's contract.
        if let Some(p) = unsafe { output_len_p.as_mut() } {
            *p = c.out.len() - 1;
        }
        // SAFETY: null or writable, by the header's contract.
        if let Some(p) = unsafe { is_stopped_p.as_mut() } {
            *p = c.stopped;
        }
        c.out.as_ptr().cast()
    })
}

/// An independent copy of a stop controller.
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_clone_stop_controller(
    stop_ctrl: *const LlgStopController,
) -> *mut LlgStopController {
    guard(std::ptr::null_mut(), || {
        // SAFETY: null or live, by the module's contract.
        unsafe { stop_ctrl.as_ref() }
            .map_or(std::ptr::null_mut(), |c| Box::into_raw(Box::new(c.clone())))
    })
}

/// Frees a stop controller (NULL is ignored).
///
/// # Safety
///
/// See the [module documentation](super#safety).
#[no_mangle]
pub unsafe extern "C" fn llg_free_stop_controller(stop_ctrl: *mut LlgStopController) {
    if !stop_ctrl.is_null() {
        // SAFETY: from this API, not freed before.
        guard((), || drop(unsafe { Box::from_raw(stop_ctrl) }));
    }
}
