//! Draft masks for speculative decoding: `Matcher::compute_masks_for_draft` (the k+1 masks
//! along a draft of k tokens, state unchanged) against the same masks by separate calls
//! (`compute_mask` + `consume_token` per draft token, the last `compute_mask`, then
//! `rollback(k)`), at every position of a JSON document and of free text before a tool call,
//! for k = 2, 4, 8 (the draft: the next k tokens of the text, all allowed). Built-in o200k
//! (no `../shared` needed). Both sides start from clones of the same matcher, whose lexer
//! they share, so both see the same warm transitions; masks are compared.
//!
//! Run: `cargo bench -p llguidance --bench draft`.

mod common;

use std::time::Instant;

use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId, TokenSet};

fn separate(m: &mut Matcher, draft: &[TokenId]) -> Vec<TokenSet> {
    let mut out = vec![m.compute_mask().expect("mask")];
    for &t in draft {
        m.consume_token(t).expect("allowed");
        out.push(m.compute_mask().expect("mask"));
    }
    m.rollback(draft.len()).expect("rollback");
    out
}

fn main() {
    let f = ParserFactory::from_tokenizer_name("o200k").expect("o200k");
    let tools = [serde_json::json!({"type": "function", "function": {"name": "search",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"},
        "n": {"type": "integer"}}, "required": ["q"]}}})];
    let cases = [
        (
            "JSON document",
            GrammarSource::JsonSchema(
                r#"{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"age":{"type":"integer"},"note":{"type":"string","maxLength":60}},"required":["name","age"]}"#
                    .into(),
            ),
            r#"{"name":"Ada Lovelace","tags":["math","engines","poetry"],"age":36,"note":"first program, 1843, for the Analytical Engine"}"#,
        ),
        (
            "tool call in free text",
            common::qwen3_tag(&tools),
            "Let me search for that, one moment. <tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"analytical engine\", \"n\": 3}}\n</tool_call> Here it is.",
        ),
    ];
    println!(
        "{:<24} {:>2} {:>16} {:>16} {:>7}",
        "text", "k", "one call µs p50", "separate µs p50", "ratio"
    );
    for (what, src, text) in cases {
        let toks = f.tokenizer().tokenize(text).expect("tokenizes");
        for k in [2usize, 4, 8] {
            let (mut one, mut sep) = (Vec::new(), Vec::new());
            let mut m = f.create_matcher(&src).expect("compiles");
            for rep in 0..3 {
                for i in 0..toks.len().saturating_sub(k) {
                    let draft = &toks[i..i + k];
                    // Alternate which side goes first, so neither always meets the other's
                    // warm-up.
                    let (mut a, mut b) = (m.deep_clone(), m.deep_clone());
                    // Computed afresh (no mask answered from the clone's last one).
                    a.set_slicing(true);
                    b.set_slicing(true);
                    let time = |x: &mut Matcher, draft_call: bool| {
                        let t0 = Instant::now();
                        let masks = if draft_call {
                            x.compute_masks_for_draft(draft).expect("draft masks")
                        } else {
                            separate(x, draft)
                        };
                        (masks, t0.elapsed().as_secs_f64() * 1e6)
                    };
                    let ((ma, ta), (mb, tb)) = if (i + rep) % 2 == 0 {
                        let x = time(&mut a, true);
                        (x, time(&mut b, false))
                    } else {
                        let y = time(&mut b, false);
                        (time(&mut a, true), y)
                    };
                    assert_eq!(ma, mb, "{what}: draft masks differ at {i}");
                    if rep > 0 {
                        one.push(ta);
                        sep.push(tb);
                    }
                    m.consume_token(toks[i]).expect("allowed");
                }
                m = f.create_matcher(&src).expect("compiles");
            }
            let p50 = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (a, b) = (p50(&mut one), p50(&mut sep));
            println!("{what:<24} {k:>2} {a:>16.1} {b:>16.1} {:>7.2}", a / b);
        }
    }
}
