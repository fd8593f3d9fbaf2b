//! Slicer benchmark: masks inside an unconstrained JSON string, inside a `maxLength: 50`
//! string, right after `{` (sparse), and in free text before a tool call (Qwen 3's
//! structural tag), sliced vs unsliced, with Llama-3.1
//! (../shared/tokenizers/llama3.tokenizer.json; the built-in o200k when ../shared is
//! absent, said so). Also the slice build time and memory.
//!
//! Run: `cargo bench -p llguidance --bench slicer`.

mod common;

use std::time::Instant;

use llguidance::{GrammarSource, Matcher, ParserFactory, SliceSpec};

fn time_masks(m: &Matcher, sliced: bool, runs: usize) -> (f64, f64, usize) {
    let mut v = Vec::new();
    let mut count = 0;
    for _ in 0..runs {
        let mut c = m.deep_clone();
        // Computed, not answered from the clone's last mask or the first-row masks.
        c.set_slicing(sliced);
        let t = Instant::now();
        let mask = c.compute_mask().expect("mask");
        v.push(t.elapsed().as_secs_f64() * 1e6);
        count = mask.count();
    }
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() - 1) * 99 / 100], count)
}

/// Decoding as a server does: a fresh matcher, then mask + consume per token of `text`
/// (after `prefix`), each mask computed once; the per-step mask times of `reps` passes.
fn decode_steps(
    f: &ParserFactory,
    src: &GrammarSource,
    prefix: &str,
    text: &str,
    reps: usize,
) -> Vec<f64> {
    let toks = f.tokenizer().tokenize(text).expect("tokenizes");
    let mut v = Vec::new();
    for _ in 0..reps {
        let mut m = f.create_matcher(src).expect("compiles");
        for t in f.tokenizer().tokenize(prefix).expect("tokenizes") {
            m.consume_token(t).expect("prefix allowed");
        }
        for &t in &toks {
            let t0 = Instant::now();
            let mask = m.compute_mask().expect("mask");
            v.push(t0.elapsed().as_secs_f64() * 1e6);
            assert!(mask.contains(t), "the text is allowed");
            m.consume_token(t).expect("consume");
        }
    }
    v.sort_by(f64::total_cmp);
    v
}

fn main() {
    let llama = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/tokenizers/llama3.tokenizer.json");
    let name = if llama.exists() {
        llama.display().to_string()
    } else {
        println!("../shared is absent: using the built-in o200k");
        "o200k".to_string()
    };
    let t0 = Instant::now();
    let plain = ParserFactory::from_tokenizer_name(&name).expect("tokenizer").with_slicer(false);
    let load = t0.elapsed();
    let t1 = Instant::now();
    let sliced = plain.with_slicer(true);
    let build = t1.elapsed();
    let slices = sliced.slices().expect("slices");
    println!(
        "{}: slices built in {:.1} ms (tokenizer {:.0} ms), {} KiB; tokens per slice: {:?}",
        plain.tokenizer().vocab().name(),
        build.as_secs_f64() * 1e3,
        load.as_secs_f64() * 1e3,
        slices.num_bytes() / 1024,
        slices.slices().iter().map(|s| s.mask().count()).collect::<Vec<_>>()
    );
    let json = |x: &str| GrammarSource::JsonSchema(x.into());
    // Free text before a tool call: Qwen 3's tag (`<tool_call>` trigger, `<think>` and
    // `</think>` excluded), as `grammars::tool_calls` builds it for one tool.
    let tools = [serde_json::json!({"type": "function", "function": {"name": "search",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}})];
    let free = common::qwen3_tag(&tools);
    let cases = [
        (
            "inside an unconstrained string",
            json(r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#),
            r#"{"a":"Hello"#,
            Some("Hello world, this is a test of the slicer ok"),
        ),
        (
            "inside a maxLength: 50 string",
            json(
                r#"{"type":"object","properties":{"a":{"type":"string","maxLength":50}},"required":["a"]}"#,
            ),
            r#"{"a":"Hello"#,
            Some("Hello world, this is a test of the slicer ok"),
        ),
        (
            "right after {",
            json(
                r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}"#,
            ),
            r#"{"#,
            None,
        ),
        (
            "free text before a tool call",
            free.clone(),
            "Let me look that up",
            Some("Let me check the weather in Paris for you, one moment please."),
        ),
        ("free text right after <", free, "Let me look <", None),
    ];
    for (what, src, prefix, decode) in cases {
        let mut res = Vec::new();
        for f in [&plain, &sliced] {
            let mut m = f.create_matcher(&src).expect("compiles");
            for t in f.tokenizer().tokenize(prefix).expect("tokenizes") {
                m.consume_token(t).expect("prefix allowed");
            }
            // Warm the matcher's own lexer (clones copy its table): in decoding, the states a
            // mask needs are mostly built by the previous steps already.
            m.compute_mask().expect("mask");
            res.push(time_masks(&m, f.slices().is_some(), 200));
            let mut c = m.deep_clone();
            c.compute_mask().expect("mask");
            if f.slices().is_some() {
                println!("  {what}: slices applied {:?}", c.slice_stats());
            }
        }
        if let Some(body) = decode {
            // The same, decoding a string body or free text token by token (a new lexer state
            // and containment check at every step).
            let d: Vec<Vec<f64>> =
                [&plain, &sliced].iter().map(|f| decode_steps(f, &src, prefix, body, 20)).collect();
            let q = |v: &[f64], p: usize| v[(v.len() - 1) * p / 100];
            println!(
                "{what:<32} decoding {} steps: unsliced p50 {:>8.1} µs p99 {:>8.1} | sliced p50 {:>7.1} µs p99 {:>7.1} | speed-up {:.1}×",
                d[0].len(),
                q(&d[0], 50),
                q(&d[0], 99),
                q(&d[1], 50),
                q(&d[1], 99),
                q(&d[0], 50) / q(&d[1], 50)
            );
        }
        let ((p50a, p99a, na), (p50b, p99b, nb)) = (res[0], res[1]);
        assert_eq!(na, nb, "sliced and unsliced masks differ in size");
        println!(
            "{what:<32} allowed {na:>6}: unsliced p50 {p50a:>8.1} µs p99 {p99a:>8.1} | sliced p50 {p50b:>7.1} µs p99 {p99b:>7.1} | speed-up {:.1}×",
            p50a / p50b
        );
    }

    // The general set (word runs + the JSON runs) vs the standard set on a code grammar.
    let t2 = Instant::now();
    let general = plain.with_slice_specs(&SliceSpec::general()).expect("slices");
    let gs = general.slices().expect("slices");
    println!(
        "general set: built in {:.1} ms, {} KiB; tokens per slice: {:?}",
        t2.elapsed().as_secs_f64() * 1e3,
        gs.num_bytes() / 1024,
        gs.slices().iter().map(|s| s.mask().count()).collect::<Vec<_>>()
    );
    let code = GrammarSource::Lark(
        r#"start: stmt+
stmt: NAME "=" expr ";" | COMMENT
expr: NAME | STRING | NUMBER | expr "+" expr
NAME: /[A-Za-z_][A-Za-z0-9_]*/
STRING: /"[^"\\\n]*"/
NUMBER: /[0-9]+/
COMMENT: /#[^\n]*\n/
%ignore /[ \t\n]+/"#
            .into(),
    );
    for (what, prefix) in [
        ("code: inside an identifier", "x = foo_ba"),
        ("code: inside a comment", "# hello wor"),
        ("code: inside a string", "x = \"hello wor"),
    ] {
        let mut res = Vec::new();
        for f in [&plain, &sliced, &general] {
            let mut m = f.create_matcher(&code).expect("compiles");
            for t in f.tokenizer().tokenize(prefix).expect("tokenizes") {
                m.consume_token(t).expect("prefix allowed");
            }
            m.compute_mask().expect("mask");
            res.push(time_masks(&m, f.slices().is_some(), 100));
        }
        assert!(res.iter().all(|r| r.2 == res[0].2), "masks differ in size");
        println!(
            "{what:<28} allowed {:>6}: unsliced p50 {:>8.1} µs | standard set {:>7.1} µs ({:.1}×) | general set {:>7.1} µs ({:.1}×)",
            res[0].2,
            res[0].0,
            res[1].0,
            res[0].0 / res[1].0,
            res[2].0,
            res[0].0 / res[2].0
        );
    }
}
