//! Compiles run on the calling thread when its stack has room, and on a compile thread
//! otherwise or when the compile reaches the floor it keeps above the stack's end (see
//! `src/stack.rs`). Inputs at the front ends' depth limits, compiled on threads with stacks
//! from just above the size needed for running on the caller to plenty: no stack overflow
//! (which would abort this test binary), and the same outcome (the same error, or a matcher
//! with the same first mask) on every thread as on a 256 MiB one.

use llguidance::{GrammarSource, ParserFactory};
use serde_json::json;

/// Inputs whose compile recurses deepest, within the documented limits.
fn deep_inputs() -> Vec<(&'static str, GrammarSource)> {
    let mut out = Vec::new();
    // A `$ref` chain through `allOf` (each level is normalized inside the one before) past
    // the limit of 512 levels: an error.
    let mut defs = serde_json::Map::new();
    for i in 0..520 {
        defs.insert(
            format!("d{i}"),
            json!({"allOf": [{"$ref": format!("#/$defs/d{}", i + 1)}], "type": "object"}),
        );
    }
    defs.insert("d520".into(), json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    out.push(("allOf ref chain past the limit", json!({"$defs": defs, "$ref": "#/$defs/d0"})));
    // A plain `$ref` chain of 500 (within the limit).
    let mut defs = serde_json::Map::new();
    for i in 0..500 {
        defs.insert(format!("d{i}"), json!({"$ref": format!("#/$defs/d{}", i + 1)}));
    }
    defs.insert("d500".into(), json!({"type": "string", "maxLength": 3}));
    out.push(("ref chain of 500", json!({"$defs": defs, "$ref": "#/$defs/d0"})));
    // Nesting just within serde_json's default depth (deeper JSON has its own thread).
    let mut s = json!({"type": "string"});
    for _ in 0..60 {
        s = json!({"anyOf": [s, {"type": "integer"}]});
    }
    out.push(("anyOf nested 60 deep", s));
    let mut s = json!({"type": "string"});
    for _ in 0..60 {
        s = json!({"allOf": [s, {"minLength": 1}]});
    }
    out.push(("allOf nested 60 deep", s));
    let mut s = json!({"type": "integer"});
    for _ in 0..120 {
        s = json!({"type": "array", "items": s, "maxItems": 2});
    }
    out.push(("arrays nested 120 deep", s));
    let mut out: Vec<(&str, GrammarSource)> =
        out.into_iter().map(|(n, s)| (n, GrammarSource::JsonSchema(s.to_string()))).collect();
    let lark = |n: &'static str, text: String| (n, GrammarSource::Lark(text));
    // Lexemes nested to the lexer's depth limit (200) and past it.
    let chain = |n: usize| {
        let mut t = "start: R0\n".to_string();
        for i in 0..n {
            t.push_str(&format!("R{i}: R{} \"x\"\n", i + 1));
        }
        t + &format!("R{n}: \"y\"\n")
    };
    out.push(lark("lexemes nested 190 deep", chain(190)));
    out.push(lark("lexemes nested 400 deep", chain(400)));
    out.push(lark("rules chained 3000 deep", {
        let mut t = "start: r0\n".to_string();
        for i in 0..3000 {
            t.push_str(&format!("r{i}: r{} \"x\"\n", i + 1));
        }
        t + "r3000: \"y\"\n"
    }));
    out.push(lark(
        "a regex nested 240 deep",
        format!("start: /{}a{}/\n", "(?:".repeat(240), ")".repeat(240)),
    ));
    let mut tag = json!({"type": "const_string", "value": "x"});
    for _ in 0..70 {
        tag = json!({"type": "tag", "begin": "<a>", "content": tag, "end": "</a>"});
    }
    let tag = json!({"type": "structural_tag", "format": tag}).to_string();
    out.push(("structural tags nested 70 deep", GrammarSource::StructuralTag(tag)));
    out.push(lark(
        "parentheses past the limit",
        format!("start: {}\"a\"{}\n", "(".repeat(80), ")".repeat(80)),
    ));
    out
}

/// The outcome of compiling `src` on a thread with `stack` bytes of stack: the error, or
/// the first mask's words.
fn outcome(f: &ParserFactory, src: &GrammarSource, stack: usize) -> Result<Vec<u32>, String> {
    std::thread::scope(|sc| {
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn_scoped(sc, || {
                let mut m = f.create_matcher(src).map_err(|e| e.to_string())?;
                let mask = m.compute_mask().map_err(|e| e.to_string())?;
                Ok(mask.as_words().to_vec())
            })
            .expect("a thread")
            .join()
            .expect("no panic")
    })
}

#[test]
fn deep_inputs_compile_alike_on_every_stack() {
    let f = ParserFactory::from_tokenizer_name("bytes").expect("the byte tokenizer");
    // Just above what running on the caller needs (1.5 MiB left in a release build, 16 MiB
    // in a debug one, whose frames are larger), a Rust thread's default, then more.
    let mib = 1 << 20;
    let sizes: &[usize] = if cfg!(debug_assertions) {
        &[16 * mib + 256 * 1024, 20 * mib, 32 * mib]
    } else {
        &[3 * mib / 2 + 256 * 1024, 2 * mib, 8 * mib]
    };
    for (name, src) in deep_inputs() {
        let want = outcome(&f, &src, 256 * mib);
        for &stack in sizes {
            let got = outcome(&f, &src, stack);
            assert_eq!(got, want, "{name}: on a thread of {} KiB", stack >> 10);
        }
    }
}
