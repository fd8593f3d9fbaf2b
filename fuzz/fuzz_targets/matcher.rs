//! Fuzz target: random consume / rollback / validate / compute_mask sequences through a
//! matcher on a fixed JSON-like Lark grammar, checking the mask invariants.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use llguidance::{GrammarSource, TokenId};

const GRAMMAR: &str = r#"
start: value
value: object | array | STRING | NUMBER | "true" | "false" | "null"
object: "{" [pair ("," pair)*] "}"
pair: STRING ":" value
array: "[" [value ("," value)*] "]"
STRING: /"[a-z ]*"/
NUMBER: /-?[0-9]+/
%ignore /[ \n]+/
"#;

fuzz_target!(|data: &[u8]| {
    common::log_caught_panics();
    common::FACTORY.with(|f| {
        let mut m = f.create_matcher(&GrammarSource::Lark(GRAMMAR.into())).expect("compiles");
        let mut ops = data.iter();
        while let Some(&op) = ops.next() {
            match op % 4 {
                0 | 1 => {
                    // Consume: a byte from the data, or the n-th allowed token.
                    let Some(&b) = ops.next() else { break };
                    let mask = m.compute_mask().expect("mask");
                    let t = if op % 4 == 0 {
                        TokenId(b as u32 % 257)
                    } else {
                        match mask.iter().nth(b as usize % mask.count().max(1)) {
                            Some(t) => t,
                            None => break,
                        }
                    };
                    let allowed = mask.contains(t);
                    let r = m.clone().consume_token(t);
                    assert_eq!(allowed, r.is_ok(), "mask and consume disagree on {t:?}");
                    if allowed {
                        m.consume_token(t).expect("allowed");
                    }
                }
                2 => {
                    let Some(&b) = ops.next() else { break };
                    let n = (b as usize) % (m.tokens().len() + 1);
                    m.rollback(n).expect("rollback within range");
                }
                _ => {
                    let toks: Vec<TokenId> = ops.by_ref().take(4).map(|&b| TokenId(b as u32)).collect();
                    let before = m.compute_mask().expect("mask");
                    let n = m.validate_tokens(&toks).expect("validate");
                    assert!(n <= toks.len());
                    assert_eq!(before, m.compute_mask().expect("mask"), "validate changed the state");
                }
            }
        }
    })
});
