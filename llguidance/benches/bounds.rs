//! Bounds without cliffs (issue 43): grammars with large bounds, each with a long valid
//! instance, decoded token by token. For each case: the compile (create_matcher) time, the
//! number of tokens, mask time p50 and p99, and the slope of mask time against position
//! from token 100 to the end (least squares, µs per 1,000 tokens: ~0 when no mask cost grows
//! with what was accepted), whether the instance was accepted, and mask p50 and p99 when the
//! instance is decoded again by a new matcher of the same compiled grammar ("warm").
//!
//! Run: `cargo bench -p llguidance --bench bounds` (o200k; `BOUNDS_TOKENIZER=path` for
//! another tokenizer, e.g. `../shared/tokenizers/llama3.tokenizer.json`; `BOUNDS_CASE=text` for
//! the cases whose name holds it; `BOUNDS_DUMP=path` writes the cases as JSON lines instead;
//! `BOUNDS_TOP=1` lists each case's 8 slowest masks, `BOUNDS_TOP=N` its N slowest).

use std::time::Instant;

use llguidance::{GrammarSource, ParserFactory, TokenId};

#[path = "common/bounds_cases.rs"]
mod bounds_cases;

use bounds_cases::cases;

fn main() {
    if let Ok(path) = std::env::var("BOUNDS_DUMP") {
        // The corpus as JSON lines, for engines outside Rust (peer-bench/xgrammar/bounds.py).
        let lines: Vec<String> = cases()
            .iter()
            .map(|c| {
                serde_json::json!({"name": c.name, "kind": c.kind, "grammar": c.grammar,
                    "instance": c.instance})
                .to_string()
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").expect("writes the corpus");
        return;
    }
    let tok = std::env::var("BOUNDS_TOKENIZER").unwrap_or_else(|_| "o200k".into());
    let f = ParserFactory::from_tokenizer_name(&tok).expect("the tokenizer");
    println!("tokenizer {tok}");
    println!(
        "{:<38} {:>10} {:>7} {:>9} {:>9} {:>12} {:>9} {:>9}  outcome",
        "case", "compile ms", "tokens", "p50 µs", "p99 µs", "slope µs/1k", "warm p50", "warm p99"
    );
    let only = std::env::var("BOUNDS_CASE").ok();
    for c in
        cases().into_iter().filter(|c| only.as_ref().is_none_or(|o| c.name.contains(o.as_str())))
    {
        let t0 = Instant::now();
        let source = match c.kind {
            "json" => GrammarSource::JsonSchema(c.grammar.clone()),
            "structural_tag" => GrammarSource::StructuralTag(c.grammar.clone()),
            _ => GrammarSource::Lark(c.grammar.clone()),
        };
        let g = f.compile(&source).and_then(|g| f.matcher_for(g.clone()).map(|m| (g, m)));
        let compile = t0.elapsed().as_secs_f64() * 1e3;
        let (g, m) = match g {
            Ok(gm) => gm,
            Err(e) => {
                println!("{:<38} {compile:>10.1} error: {e}", c.name);
                continue;
            }
        };
        let toks = f.tokenizer().tokenize(&c.instance).expect("tokenizes");
        let (times, outcome) = decode(m, &toks);
        // The same instance again with a new matcher of the compiled grammar (a server's
        // next request): what the first decode learned is kept, the one-time costs are gone.
        let warm = f.matcher_for(g).map(|m| decode(m, &toks).0).unwrap_or_default();
        if std::env::var("BOUNDS_TOP").is_ok() {
            for (what, t) in [("", &times), ("warm ", &warm)] {
                let mut top: Vec<(f64, usize)> = t.iter().copied().zip(0..).collect();
                top.sort_by(|a, b| b.0.total_cmp(&a.0));
                top.truncate(
                    std::env::var("BOUNDS_TOP")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .filter(|&n: &usize| n > 1)
                        .unwrap_or(8),
                );
                println!("  {what}slowest (µs, token index of {}): {top:.1?}", t.len());
            }
        }
        let (p50, p99, slope) = bounds_cases::stats(&times);
        let (w50, w99, _) = bounds_cases::stats(&warm);
        println!(
            "{:<38} {compile:>10.1} {:>7} {:>9.1} {:>9.1} {slope:>12} {w50:>9.1} {w99:>9.1}  {outcome}",
            c.name,
            toks.len(),
            p50,
            p99
        );
    }
}

/// Decodes `toks` with `m`, timing each mask: the times and the outcome.
fn decode(mut m: llguidance::Matcher, toks: &[TokenId]) -> (Vec<f64>, String) {
    let mut times = Vec::with_capacity(toks.len());
    let mut outcome = "accepted".to_string();
    for (i, &t) in toks.iter().enumerate() {
        let t1 = Instant::now();
        let mask = m.compute_mask();
        times.push(t1.elapsed().as_secs_f64() * 1e6);
        match mask {
            Ok(mask) if mask.contains(t) => {}
            Ok(_) => {
                outcome = format!("REJECTED at token {i}");
                break;
            }
            Err(e) => {
                outcome = format!("ERROR at token {i}: {e}");
                break;
            }
        }
        if let Err(e) = m.consume_token(t) {
            outcome = format!("ERROR at token {i}: {e}");
            break;
        }
    }
    if outcome == "accepted" && !m.is_accepting().unwrap_or(false) {
        outcome = "not accepting at the end".into();
    }
    (times, outcome)
}
