//! bounds: the bounds corpus (`llguidance/benches/common/bounds_cases.rs`, issue 43) through
//! ours, LLGuidance 1.9.1 and xgrammar-rs 0.2.8 (the Rust port of XGrammar 0.2.8) side by
//! side, the same token ids (llama3, tokenized by the reference's tokenizer): per engine the
//! compile time, mask p50 / p99 and the slope of mask time against position from token 100
//! (µs per 1,000 tokens), and the outcome. One process, the engines in turn per case;
//! xgrammar-rs compiles on a thread given 60 s (past it: "compile > 60 s", the thread left
//! behind) and replays for at most 60 s.
//!
//! Run: `cd peer-bench && CARGO_TARGET_DIR=../target-peer cargo run --release --bin bounds`
//! (needs ../shared).

#[path = "../../../llguidance/benches/common/bounds_cases.rs"]
mod bounds_cases;

use std::time::Instant;

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

/// (compile ms, mask times µs, outcome)
type Run = (f64, Vec<f64>, String);

/// Why a token was not taken: not in the mask, or an engine error.
enum Refused {
    Rejected,
    Error(String),
}

/// Replays `toks`: per token, `mask` (timed) says whether the token is allowed, then
/// `consume` takes it; the mask times and the outcome.
fn replay<M>(
    m: &mut M,
    toks: &[u32],
    mut mask: impl FnMut(&mut M, u32) -> Result<bool, String>,
    mut consume: impl FnMut(&mut M, u32) -> Result<(), String>,
) -> (Vec<f64>, String) {
    let mut times = Vec::with_capacity(toks.len());
    for (i, &t) in toks.iter().enumerate() {
        let t1 = Instant::now();
        let allowed = mask(m, t);
        times.push(t1.elapsed().as_secs_f64() * 1e6);
        let r = match allowed {
            Ok(true) => consume(m, t).map_err(Refused::Error),
            Ok(false) => Err(Refused::Rejected),
            Err(e) => Err(Refused::Error(e)),
        };
        match r {
            Ok(()) => {}
            Err(Refused::Rejected) => return (times, format!("rejected at token {i}")),
            Err(Refused::Error(e)) => return (times, format!("error at token {i}: {e}")),
        }
    }
    (times, "accepted".into())
}

fn run_ours(f: &ours::ParserFactory, c: &bounds_cases::Case, toks: &[u32]) -> Run {
    let src = match c.kind {
        "json" => ours::GrammarSource::JsonSchema(c.grammar.clone()),
        "structural_tag" => ours::GrammarSource::StructuralTag(c.grammar.clone()),
        _ => ours::GrammarSource::Lark(c.grammar.clone()),
    };
    let t0 = Instant::now();
    let m = f.create_matcher(&src);
    let compile = t0.elapsed().as_secs_f64() * 1e3;
    let mut m = match m {
        Ok(m) => m,
        Err(e) => return (compile, vec![], format!("error: {e}")),
    };
    let (times, outcome) = replay(
        &mut m,
        toks,
        |m, t| m.compute_mask().map(|k| k.contains(ours::TokenId(t))).map_err(|e| e.to_string()),
        |m, t| m.consume_token(ours::TokenId(t)).map(|_| ()).map_err(|e| e.to_string()),
    );
    (compile, times, outcome)
}

fn run_ref(f: &ref_llg::ParserFactory, c: &bounds_cases::Case, toks: &[u32]) -> Run {
    let grammar = match c.kind {
        "json" => match serde_json::from_str(&c.grammar) {
            Ok(v) => ref_llg::api::TopLevelGrammar::from_json_schema(v),
            Err(e) => return (0.0, vec![], format!("error: {e}")),
        },
        // LLGuidance takes no XGrammar structural tag.
        "structural_tag" => return (0.0, vec![], "n/a: no structural tags".into()),
        _ => ref_llg::api::TopLevelGrammar::from_lark(c.grammar.clone()),
    };
    let t0 = Instant::now();
    let m = f.create_parser(grammar).map(|p| ref_llg::Matcher::new(Ok(p)));
    let compile = t0.elapsed().as_secs_f64() * 1e3;
    let mut m = match m {
        Ok(m) if !m.is_error() => m,
        Ok(m) => return (compile, vec![], format!("error: {}", m.get_error().unwrap_or_default())),
        Err(e) => return (compile, vec![], format!("error: {e}")),
    };
    let (times, outcome) = replay(
        &mut m,
        toks,
        |m, t| m.compute_mask().map(|k| k.is_allowed(t)).map_err(|e| e.to_string()),
        |m, t| m.consume_token(t).map(|_| ()).map_err(|e| e.to_string()),
    );
    (compile, times, outcome)
}

/// xgrammar-rs: `compile_json_schema(any_whitespace, strict_mode)` or `compile_lark`, then
/// `fill_next_token_bitmask` + `accept_token` per token.
fn run_xgr(
    comp: &std::sync::Arc<xgrammar::GrammarCompiler>,
    words: usize,
    c: &bounds_cases::Case,
    toks: &[u32],
) -> Run {
    let (tx, rx) = std::sync::mpsc::channel();
    let (comp2, kind, g) = (comp.clone(), c.kind, c.grammar.clone());
    let t0 = Instant::now();
    std::thread::spawn(move || {
        let r = match kind {
            "json" => comp2.compile_json_schema(&g, true, None, None, true, None),
            "structural_tag" => comp2.compile_structural_tag(&g),
            _ => comp2.compile_lark(&g, &[]),
        };
        let _ = tx.send(r.map_err(|e| e.to_string()));
    });
    let limit = std::time::Duration::from_secs(60);
    let cg = match rx.recv_timeout(limit) {
        Ok(Ok(cg)) => cg,
        Ok(Err(e)) => return (t0.elapsed().as_secs_f64() * 1e3, vec![], format!("error: {e}")),
        Err(_) => return (60_000.0, vec![], "compile > 60 s".into()),
    };
    let compile = t0.elapsed().as_secs_f64() * 1e3;
    let mut m = xgrammar::GrammarMatcher::from_compiled_grammar(&cg, false);
    let mut bm = vec![0i32; words];
    let shape = [1i64, words as i64];
    let mut times = Vec::with_capacity(toks.len());
    let start = Instant::now();
    for (i, &t) in toks.iter().enumerate() {
        if start.elapsed() > limit {
            return (compile, times, format!("replay > 60 s at token {i}"));
        }
        let t1 = Instant::now();
        let ok = m.fill_next_token_bitmask(&mut bm, &shape, 0).is_ok();
        times.push(t1.elapsed().as_secs_f64() * 1e6);
        if !ok || (bm[t as usize / 32] >> (t % 32)) & 1 == 0 {
            return (compile, times, format!("rejected at token {i}"));
        }
        if !m.accept_token(t as i32) {
            return (compile, times, format!("rejected at token {i}"));
        }
    }
    (compile, times, "accepted".into())
}

fn main() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tok = manifest.join("../../shared/tokenizers/llama3.tokenizer.json");
    let of = ours::ParserFactory::from_tokenizer_name(&tok.display().to_string()).expect("ours");
    let bt = toktrie_hf_tokenizers::ByteTokenizer::from_file(&tok).expect("ref tokenizer");
    let env: TokEnv = bt.into_tok_env(None).expect("TokEnv");
    let mut rf = ref_llg::ParserFactory::new_simple(&env).expect("ref factory");
    rf.quiet();
    let hf = tokenizers::Tokenizer::from_file(&tok).expect("HF tokenizer");
    let vocab = of.tokenizer().vocab().len();
    let eos = of.tokenizer().vocab().eos_tokens()[0].0 as i32;
    let info = xgrammar::TokenizerInfo::from_huggingface(&hf, Some(vocab), Some(&[eos]))
        .expect("xgrammar-rs TokenizerInfo");
    let xc = std::sync::Arc::new(xgrammar::GrammarCompiler::new(info, 1, false, -1));
    println!(
        "{:<36} {:>7} | {:>10} {:>8} {:>9} {:>8} | {:>10} {:>8} {:>9} {:>8} | {:>10} {:>8} {:>9} {:>8} | outcomes",
        "case",
        "tokens",
        "ours ms",
        "p50 µs",
        "p99 µs",
        "slope",
        "LLG ms",
        "p50 µs",
        "p99 µs",
        "slope",
        "xgr-rs ms",
        "p50 µs",
        "p99 µs",
        "slope"
    );
    // `BOUNDS_CASE=text`: the cases whose name holds it.
    let only = std::env::var("BOUNDS_CASE").ok();
    for c in bounds_cases::cases()
        .into_iter()
        .filter(|c| only.as_ref().is_none_or(|o| c.name.contains(o.as_str())))
    {
        let toks = env.tokenize(&c.instance);
        let (oc, ot, oo) = run_ours(&of, &c, &toks);
        let (rc, rt, ro) = run_ref(&rf, &c, &toks);
        let (xc_ms, xt, xo) = run_xgr(&xc, vocab.div_ceil(32), &c, &toks);
        let (o50, o99, os) = bounds_cases::stats(&ot);
        let (r50, r99, rs) = bounds_cases::stats(&rt);
        let (x50, x99, xs) = bounds_cases::stats(&xt);
        println!(
            "{:<36} {:>7} | {oc:>10.1} {o50:>8.1} {o99:>9.1} {os:>8} | {rc:>10.1} {r50:>8.1} {r99:>9.1} {rs:>8} | {xc_ms:>10.1} {x50:>8.1} {x99:>9.1} {xs:>8} | {oo} / {ro} / {xo}",
            c.name,
            toks.len()
        );
    }
}
