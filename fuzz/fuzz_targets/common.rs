#![allow(dead_code)]
//! Shared by the fuzz targets: compile a grammar source on the byte vocabulary and drive a
//! matcher over some bytes, checking the mask invariants.

use llguidance::{GrammarSource, ParserFactory, TokenId};

thread_local! {
    pub static FACTORY: ParserFactory = ParserFactory::from_tokenizer_name("bytes").expect("bytes");
}

/// libfuzzer-sys installs a panic hook that aborts on every panic, even one the matcher's
/// guard catches and turns into a sticky `Internal` error (its contract: no panic crosses
/// the API). This hook only logs such panics (`grep -c 'caught panic' fuzz/logs/T.log`);
/// a panic that escapes the API still reaches libfuzzer-sys's own catch and is a crash.
pub fn log_caught_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| eprintln!("caught panic (an Internal error): {info}")))
    });
}

/// Compiles `src`; if it compiles, consumes up to 64 input bytes, each checked to be in the
/// mask before it is consumed, and the mask is recomputed after a rollback.
pub fn run(src: GrammarSource, input: &[u8]) {
    log_caught_panics();
    FACTORY.with(|f| {
        let Ok(mut m) = f.create_matcher(&src) else { return };
        for &b in input.iter().take(64) {
            let Ok(mask) = m.compute_mask() else { return };
            let t = TokenId(b as u32);
            if !mask.contains(t) {
                assert!(m.clone().consume_token(t).is_err(), "a token outside the mask was consumed");
                return;
            }
            m.consume_token(t).expect("a token in the mask is consumed");
        }
        if !m.tokens().is_empty() {
            let before = m.compute_mask();
            let mut c = m.deep_clone();
            c.rollback(1).expect("rollback of a consumed token");
            let t = *m.tokens().last().expect("non-empty");
            c.consume_token(t).expect("the same token again");
            assert_eq!(before.ok(), c.compute_mask().ok(), "rollback then recompute differs");
        }
    })
}

/// Splits fuzz data into a grammar text and an input at the first NUL byte.
pub fn split(data: &[u8]) -> (&str, &[u8]) {
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let grammar = std::str::from_utf8(&data[..cut]).unwrap_or("");
    (grammar, data.get(cut + 1..).unwrap_or(&[]))
}
