//! churn: schema churn in one process (issue 45, item 5). Compiles `--n` distinct MaskBench
//! schemas (every `--every`-th file) one after another with one factory, each with one
//! matcher that decodes up to 64 tokens of the schema's first valid instance, then drops
//! both, as a server does with a stream of new schemas; after every 100 schemas it prints the
//! live heap (a counting allocator) and the resident set size (`/proc/self/statm`). One engine
//! per process (`--engine ours`, `--engine llg`: crates.io llguidance 1.9.1, `--engine xgrs`:
//! crates.io xgrammar-rs 0.2.8 with its compile cache off, `--engine xgrs-cache`: the same with
//! its default cache, unbounded), llama3. An xgrammar-rs compile runs on a worker thread and
//! counts as an error past 20 s (the thread is left behind).
//!
//! Run: `cargo run --release --bin churn -- --engine ours [--n 1000] [--every 7]` in
//! `peer-bench/` (needs ../shared).

use std::path::PathBuf;

use std::time::Instant;

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

#[path = "../counting.rs"]
mod counting;

use counting::{live, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = s.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / (1 << 20) as f64
}

fn live_mib() -> f64 {
    live() as f64 / (1 << 20) as f64
}

/// The schema and the first valid instance's text of a MaskBench file.
fn load(path: &std::path::Path) -> Option<(String, Option<String>)> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let schema = v.get("schema")?.to_string();
    let inst = v
        .get("tests")
        .and_then(|t| t.as_array())
        .and_then(|t| t.iter().find(|x| x.get("valid") == Some(&serde_json::Value::Bool(true))));
    Some((schema, inst.and_then(|i| i.get("data")).map(|d| d.to_string())))
}

fn main() {
    let (mut engine, mut n, mut every) = (String::from("ours"), 1000usize, 7usize);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--engine" => engine = it.next().expect("--engine ours|llg|xgrs|xgrs-cache"),
            "--n" => n = it.next().and_then(|v| v.parse().ok()).expect("--n N"),
            "--every" => every = it.next().and_then(|v| v.parse().ok()).expect("--every K"),
            _ => {
                println!("usage: churn [--engine ours|llg|xgrs|xgrs-cache] [--n N] [--every K]");
                return;
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let tok = root.join("tokenizers/llama3.tokenizer.json");
    let dir = root.join("data/maskbench");
    if !tok.exists() || !dir.exists() {
        eprintln!("churn: ../shared (llama3 tokenizer, MaskBench) is missing");
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let bt = toktrie_hf_tokenizers::ByteTokenizer::from_file(&tok).expect("tokenizer");
    let env: TokEnv = bt.into_tok_env(None).expect("TokEnv");
    let of = (engine == "ours").then(|| {
        ours::ParserFactory::from_tokenizer_name(&tok.display().to_string()).expect("ours")
    });
    let rf = (engine == "llg").then(|| {
        let mut f = ref_llg::ParserFactory::new_simple(&env).expect("llg factory");
        f.quiet();
        f
    });
    let xf = engine.starts_with("xgrs").then(|| {
        let hf = tokenizers::Tokenizer::from_file(&tok).expect("HF tokenizer");
        let vocab = hf.get_vocab_size(true);
        let eos = env.tok_trie().eos_tokens()[0] as i32;
        let info = xgrammar::TokenizerInfo::from_huggingface(&hf, Some(vocab), Some(&[eos]))
            .expect("xgrammar-rs TokenizerInfo");
        let c = if engine == "xgrs-cache" {
            xgrammar::GrammarCompiler::with_defaults(info)
        } else {
            xgrammar::GrammarCompiler::new(info, 1, false, -1)
        };
        (std::sync::Arc::new(c), vocab.div_ceil(32))
    });
    println!(
        "engine {engine}; after the factory: live {:.1} MiB, RSS {:.1} MiB",
        live_mib(),
        rss_mib()
    );
    println!("{:>8} {:>10} {:>10} {:>9} {:>8}", "schemas", "live MiB", "RSS MiB", "errors", "s");
    let t0 = Instant::now();
    let (mut done, mut errors) = (0usize, 0usize);
    for path in files.iter().step_by(every.max(1)) {
        if done >= n {
            break;
        }
        let Some((schema, inst)) = load(path) else { continue };
        let toks: Vec<u32> =
            inst.map(|t| env.tokenize(&t)).unwrap_or_default().into_iter().take(64).collect();
        let ok = match (&of, &rf) {
            (Some(f), _) => match f.create_matcher(&ours::GrammarSource::JsonSchema(schema)) {
                Ok(mut m) => {
                    for &t in &toks {
                        let t = ours::TokenId(t);
                        if !m.compute_mask().is_ok_and(|k| k.contains(t))
                            || m.consume_token(t).is_err()
                        {
                            break;
                        }
                    }
                    true
                }
                Err(_) => false,
            },
            (_, Some(f)) => {
                let v: serde_json::Value = serde_json::from_str(&schema).expect("JSON");
                match f.create_parser(ref_llg::api::TopLevelGrammar::from_json_schema(v)) {
                    Ok(p) => {
                        let mut m = ref_llg::Matcher::new(Ok(p));
                        for &t in &toks {
                            if !m.compute_mask().is_ok_and(|k| k.is_allowed(t))
                                || m.consume_token(t).is_err()
                            {
                                break;
                            }
                        }
                        true
                    }
                    Err(_) => false,
                }
            }
            (_, _) => {
                let (c, words) = xf.as_ref().expect("engine ours, llg, xgrs or xgrs-cache");
                let (tx, rx) = std::sync::mpsc::channel();
                let c2 = c.clone();
                std::thread::spawn(move || {
                    let r = c2.compile_json_schema(&schema, true, None, None, true, None);
                    let _ = tx.send(r.ok());
                });
                match rx.recv_timeout(std::time::Duration::from_secs(20)).ok().flatten() {
                    Some(cg) => {
                        let mut m = xgrammar::GrammarMatcher::from_compiled_grammar(&cg, false);
                        let mut bm = vec![0i32; *words];
                        let shape = [1i64, *words as i64];
                        for &t in &toks {
                            if m.fill_next_token_bitmask(&mut bm, &shape, 0).is_err()
                                || !m.accept_token(t as i32)
                            {
                                break;
                            }
                        }
                        true
                    }
                    None => false,
                }
            }
        };
        done += 1;
        if !ok {
            errors += 1;
        }
        if done % 100 == 0 {
            println!(
                "{done:>8} {:>10.1} {:>10.1} {errors:>9} {:>8.1}",
                live_mib(),
                rss_mib(),
                t0.elapsed().as_secs_f64()
            );
        }
    }
}
