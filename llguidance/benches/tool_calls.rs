//! Tool calling through structural tags: compile time and mask times for tool sets of 10,
//! 100 and 400 functions (the 384 BFCL function schemas of ../shared/data/maskbench, the
//! first 16 again under new names to make 400), Qwen 3
//! format (`<tool_call>` + JSON arguments), Llama-3.1 tokenizer
//! (../shared/tokenizers/llama3.tokenizer.json). Needs ../shared; says so and exits when it
//! is missing.
//!
//! Per N: compile + first matcher (median of 5); then, as XGrammar's side does, one
//! compiled grammar and 5 decodes with a new matcher each, along a transcript (free text,
//! one call of a function with a valid argument instance from its BFCL file, free text):
//! every mask's p50 and p99 over all decodes, the p99 of the first decode (cold lexer) and
//! of the later ones (the grammar's lexer shared, warm), and the p50 inside the free text.
//! `TOOL_TAG_DIR=DIR` also writes each structural tag to DIR/tools_N.json and its transcript
//! (text and token ids) to DIR/transcript_N.json, for running the same tags and tokens
//! through XGrammar (`peer-bench/xgrammar/`); `TOOL_TAG_SLOWEST=1` lists the slowest masks.
//!
//! Run: `cargo bench -p llguidance --bench tool_calls`.

use std::path::Path;
use std::time::Instant;

use grammars::tool_calls::{structural_tag, Reasoning};
use llguidance::{GrammarSource, ParserFactory, Tokenizer};
use serde_json::{json, Value};

fn pct(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) * p / 100]
}

fn main() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let tok = shared.join("tokenizers/llama3.tokenizer.json");
    let dir = shared.join("data/maskbench");
    if !tok.exists() || !dir.exists() {
        println!("tool_calls bench: ../shared (tokenizers, maskbench) is missing; nothing to run");
        return;
    }
    let f = ParserFactory::new(Tokenizer::from_file(&tok).expect("tokenizer")).expect("factory");
    // (name, parameters, a valid arguments instance) from the BFCL files.
    let mut fns: Vec<(String, Value, Value)> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("maskbench dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("BFCL_")))
        .collect();
    files.sort();
    for p in files {
        let Ok(v) = serde_json::from_str::<Value>(&std::fs::read_to_string(&p).unwrap()) else {
            continue;
        };
        let Some(props) = v["schema"]["properties"].as_object() else { continue };
        let Some((name, params)) = props.iter().next() else { continue };
        if fns.iter().any(|(n, _, _)| n == name) {
            continue;
        }
        let valid = v["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["valid"] == json!(true)))
            .map(|t| t["data"][name].clone());
        if let Some(args) = valid.filter(|a| a.is_object()) {
            fns.push((name.clone(), params.clone(), args));
        }
    }
    // 384 distinct BFCL functions: the 400-tool set repeats the first ones under new names.
    let base = fns.len();
    for i in 0..400usize.saturating_sub(base) {
        let (name, p, a) = fns[i % base.max(1)].clone();
        fns.push((format!("{name}_v2"), p, a));
    }
    let out_dir = std::env::var_os("TOOL_TAG_DIR");
    println!(
        "{:>4} {:>14} {:>12} {:>12} {:>14} {:>14} {:>16} {:>7}",
        "N",
        "compile p50 ms",
        "mask p50 µs",
        "mask p99 µs",
        "1st decode p99",
        "later p99 µs",
        "free text p50 µs",
        "masks"
    );
    for n in [10usize, 100, 400] {
        if fns.len() < n {
            println!("{n:>4} only {} BFCL functions found", fns.len());
            continue;
        }
        let tools: Vec<Value> = fns[..n]
            .iter()
            .map(|(name, p, _)| json!({"type": "function", "function": {"name": name, "parameters": p}}))
            .collect();
        let tag = structural_tag("qwen_3", &tools, &json!("auto"), Reasoning::Disabled, true)
            .expect("structural tag");
        if let Some(d) = &out_dir {
            std::fs::write(Path::new(d).join(format!("tools_{n}.json")), tag.to_string())
                .expect("write tag");
        }
        let src = GrammarSource::StructuralTag(tag.to_string());
        let mut compile = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let m = f.create_matcher(&src).expect("compiles");
            compile.push(t.elapsed().as_secs_f64() * 1e3);
            drop(m);
        }
        let (name, _, args) = &fns[n / 2];
        let prefix = "Let me look that up for you, one moment.";
        let text = format!(
            "{prefix}<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call> Done, here it is."
        );
        let toks = f.tokenizer().tokenize(&text).expect("tokenizes");
        if let Some(d) = &out_dir {
            let ids: Vec<u32> = toks.iter().map(|t| t.0).collect();
            let t = json!({"text": text, "tokens": ids});
            std::fs::write(Path::new(d).join(format!("transcript_{n}.json")), t.to_string())
                .expect("write transcript");
        }
        let free_steps = f.tokenizer().tokenize(prefix).expect("tokenizes").len();
        let (mut masks, mut free) = (Vec::new(), Vec::new());
        let (mut first, mut later) = (Vec::new(), Vec::new());
        let mut slowest: Vec<(f64, usize, usize)> = Vec::new();
        let g = f.compile(&src).expect("compiles");
        for decode in 0..5 {
            let mut m = f.matcher_for(g.clone()).expect("a matcher");
            for (i, &tok) in toks.iter().enumerate() {
                let t = Instant::now();
                let mask = m.compute_mask().expect("mask");
                let us = t.elapsed().as_secs_f64() * 1e6;
                masks.push(us);
                if decode == 0 {
                    first.push(us)
                } else {
                    later.push(us)
                }
                slowest.push((us, i, decode));
                if i < free_steps {
                    free.push(us);
                }
                assert!(mask.contains(tok), "step {i}: the transcript's token is allowed");
                m.consume_token(tok).expect("consumes");
            }
        }
        if std::env::var_os("TOOL_TAG_SLOWEST").is_some() {
            slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
            let later = slowest.iter().filter(|s| s.2 > 0).take(5);
            for &(us, i, decode) in slowest.iter().filter(|s| s.2 == 0).take(5).chain(later) {
                let before =
                    String::from_utf8_lossy(&f.tokenizer().vocab().decode(&toks[..i])).into_owned();
                let tail: String =
                    before.chars().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
                println!("     slow: decode {decode} step {i} {us:.0} µs after …{tail:?}");
            }
        }
        println!(
            "{n:>4} {:>14.2} {:>12.1} {:>12.1} {:>14.1} {:>14.1} {:>16.1} {:>7}",
            pct(&mut compile, 50),
            pct(&mut masks, 50),
            pct(&mut masks, 99),
            pct(&mut first, 99),
            pct(&mut later, 99),
            pct(&mut free, 50),
            masks.len()
        );
    }
}
