//! A schema per request, twice (a server building a matcher from each request's schema):
//! the second request's `create_matcher` time and its masks along the schema's first
//! valid instance, with the factory's grammar cache (`llguidance::grammar_cache`, the
//! default) and without (`with_grammar_cache(0)`: compiled again, a cold lexer).
//!
//! `REPEAT_EVERY=10 cargo bench -p llguidance --bench
//! repeat` (llama3 and MaskBench from `../shared`, or `REPEAT_DIR`; skipped with a message
//! where they are missing).

use std::time::Instant;

use llguidance::{GrammarSource, ParserFactory};

fn main() {
    // Paths from the package root, where `cargo bench` runs (`../shared` beside the repo).
    let tok = "../../shared/tokenizers/llama3.tokenizer.json";
    let dir = std::env::var("REPEAT_DIR").unwrap_or_else(|_| "../../shared/data/maskbench".into());
    let every: usize =
        std::env::var("REPEAT_EVERY").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let (Ok(f0), Ok(rd)) = (ParserFactory::from_tokenizer_name(tok), std::fs::read_dir(&dir))
    else {
        eprintln!("repeat: skipped, needs {tok} and {dir}");
        return;
    };
    let mut files: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let files: Vec<_> = files.into_iter().step_by(every.max(1)).collect();
    for cache in [llguidance::grammar_cache::GRAMMAR_CACHE, 0] {
        let f = f0.with_grammar_cache(cache);
        let (mut create, mut masks) = (vec![], vec![]);
        for p in &files {
            let Some(d) = std::fs::read_to_string(p)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            else {
                continue;
            };
            let src = GrammarSource::JsonSchema(d["schema"].to_string());
            let Some(t) = d["tests"].as_array().and_then(|t| t.iter().find(|t| t["valid"] == true))
            else {
                continue;
            };
            let Ok(toks) = f.tokenizer().tokenize(&t["data"].to_string()) else { continue };
            for request in 0..2 {
                let t0 = Instant::now();
                let Ok(mut m) = f.create_matcher(&src) else { break };
                let us = t0.elapsed().as_secs_f64() * 1e6;
                for &tok in &toks {
                    let t1 = Instant::now();
                    let Ok(mask) = m.compute_mask() else { break };
                    if request == 1 {
                        masks.push(t1.elapsed().as_secs_f64() * 1e6);
                    }
                    std::hint::black_box(&mask);
                    if m.consume_token(tok).is_err() {
                        break;
                    }
                }
                if request == 1 {
                    create.push(us);
                }
            }
        }
        for v in [&mut create, &mut masks] {
            v.sort_by(f64::total_cmp);
        }
        let p = |v: &[f64], q: f64| v.get(((v.len().max(1) - 1) as f64 * q) as usize).copied();
        let mean = masks.iter().sum::<f64>() / masks.len().max(1) as f64;
        println!(
            "cache {cache:>2}: second request create_matcher p50 {:.1} p99 {:.1} µs ({} schemas); \
             masks ({}) mean {mean:.2} p50 {:.2} p99 {:.1} p99.9 {:.0} µs",
            p(&create, 0.5).unwrap_or(0.0),
            p(&create, 0.99).unwrap_or(0.0),
            create.len(),
            masks.len(),
            p(&masks, 0.5).unwrap_or(0.0),
            p(&masks, 0.99).unwrap_or(0.0),
            p(&masks, 0.999).unwrap_or(0.0),
        );
    }
}
