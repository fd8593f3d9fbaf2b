//! Memory per compiled grammar and per matcher, ours and the crates.io `llguidance` (the
//! reference), measured with a counting global allocator: the live heap bytes before and
//! after each step, one engine at a time, on the same MaskBench schemas and instances
//! (llama3 tokenizer; every `--every`-th file, default 20).
//!
//! Per schema, for each engine:
//! - **grammar + matcher**: compile the schema and create the first matcher (the tokenizer,
//!   trie and slices are the factory's and not counted);
//! - **after one instance**: the same after computing the mask and consuming each token of
//!   the schema's first valid instance (the lexer's states and transitions built lazily on
//!   the way, the parser's rows);
//! - **clone**: one more matcher of the grammar (`deep_clone` of the first, fresh; ours
//!   also `matcher_for` on the compiled grammar).
//!
//! Run: `cargo run --release --bin memory -- [--every K] [FILES_OR_DIRS]` in `peer-bench/`.
//! XGrammar's figure comes from `peer-bench/xgrammar/memory.py` (its own
//! `CompiledGrammar.memory_size_bytes`).

use std::path::PathBuf;

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

#[path = "../counting.rs"]
mod counting;

use counting::{live, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `f`'s result and the live heap bytes it added.
fn measured<T>(f: impl FnOnce() -> T) -> (T, isize) {
    let b = live();
    let x = f();
    (x, live() - b)
}

/// Bytes for one schema and engine; `None` where the engine failed.
#[derive(Default, Clone, Copy)]
struct Row {
    grammar_matcher: Option<isize>,
    after_instance: Option<isize>,
    deep_clone: Option<isize>,
    matcher_for: Option<isize>,
}

fn ours_row(f: &ours::ParserFactory, schema: &str, toks: &[u32]) -> Row {
    let mut r = Row::default();
    let b0 = live();
    let Ok(g) = f.compile(&ours::GrammarSource::JsonSchema(schema.to_string())) else {
        return r;
    };
    let Ok(mut m) = f.matcher_for(g.clone()) else { return r };
    r.grammar_matcher = Some(live() - b0);
    let step = |t| {
        let t = ours::TokenId(t);
        m.compute_mask().is_ok_and(|mask| mask.contains(t)) && m.consume_token(t).is_ok()
    };
    if !toks.iter().copied().all(step) {
        return r;
    }
    r.after_instance = Some(live() - b0);
    let (c, d) = measured(|| m.deep_clone());
    r.deep_clone = Some(d);
    let (n, d) = measured(|| f.matcher_for(g.clone()));
    r.matcher_for = n.is_ok().then_some(d);
    drop((c, n, m, g));
    // The factory keeps a dropped grammar's lexer template until the next grammar's first
    // matcher purges it: purge now with a tiny one, so that it is not counted against the
    // next schema.
    if let Ok(tiny) = f.compile(&ours::GrammarSource::Regex("x".into())) {
        drop(f.matcher_for(tiny));
    }
    r
}

fn ref_row(f: &ref_llg::ParserFactory, schema: &str, toks: &[u32]) -> Row {
    let mut r = Row::default();
    let b0 = live();
    let Ok(v) = serde_json::from_str::<serde_json::Value>(schema) else { return r };
    let grammar = ref_llg::api::TopLevelGrammar::from_json_schema(v);
    let Ok(p) = f.create_parser(grammar) else { return r };
    let mut m = ref_llg::Matcher::new(Ok(p));
    if m.is_error() {
        return r;
    }
    r.grammar_matcher = Some(live() - b0);
    let step =
        |t| m.compute_mask().is_ok_and(|mask| mask.is_allowed(t)) && m.consume_token(t).is_ok();
    if !toks.iter().copied().all(step) {
        return r;
    }
    r.after_instance = Some(live() - b0);
    let (c, d) = measured(|| m.deep_clone());
    r.deep_clone = Some(d);
    drop((c, m));
    r
}

/// The reference factory for the tokenizer at `path` (memory only: no need for the main
/// bench's no-forcing wrapper).
fn ref_factory(path: &std::path::Path) -> ref_llg::ParserFactory {
    let bt = toktrie_hf_tokenizers::ByteTokenizer::from_file(path).expect("reference tokenizer");
    let env: TokEnv = bt.into_tok_env(None).expect("reference TokEnv");
    let mut f = ref_llg::ParserFactory::new_simple(&env).expect("reference factory");
    f.quiet();
    f
}

fn pct(v: &[isize], p: usize) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let mut v = v.to_vec();
    v.sort_unstable();
    kib(v[(v.len() - 1) * p / 100])
}

fn kib(b: isize) -> String {
    format!("{:.1}", b as f64 / 1024.0)
}

fn main() {
    let mut every = 20usize;
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--every" => {
                every = it.next().and_then(|v| v.parse::<usize>().ok()).expect("--every K").max(1)
            }
            "-h" | "--help" => {
                println!(
                    "usage: memory [--every K] [FILES_OR_DIRS...]\n(default: every 20th file of ../../shared/data/maskbench; llama3 tokenizer from ../../shared)"
                );
                return;
            }
            _ => inputs.push(a.into()),
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    if inputs.is_empty() {
        inputs.push(root.join("data/maskbench"));
    }
    let tok = root.join("tokenizers/llama3.tokenizer.json");
    if !tok.exists() || !inputs.iter().all(|p| p.exists()) {
        eprintln!("memory: ../shared (llama3 tokenizer, MaskBench) is missing; nothing to measure");
        return;
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for p in &inputs {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .expect("read dir")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(p.clone());
        }
    }
    let files: Vec<PathBuf> = files.into_iter().step_by(every).collect();
    let our_f = ours::ParserFactory::from_tokenizer_name(&tok.display().to_string())
        .expect("our factory")
        .with_grammar_cache(0);
    let ref_f = ref_factory(&tok);
    let (mut o, mut r): (Vec<Row>, Vec<Row>) = (Vec::new(), Vec::new());
    for path in &files {
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(
            &std::fs::read_to_string(path).expect("read file"),
        ) else {
            continue;
        };
        let schema = doc["schema"].to_string();
        let Some(inst) = doc["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["valid"].as_bool().unwrap_or(true)))
        else {
            continue;
        };
        let text = serde_json::to_string(&inst["data"]).expect("instance");
        let Ok(toks) = our_f.tokenizer().tokenize(&text) else { continue };
        let toks: Vec<u32> = toks.iter().map(|t| t.0).collect();
        // Both engines must have run the whole instance for the schema to count.
        let (a, b) = (ours_row(&our_f, &schema, &toks), ref_row(&ref_f, &schema, &toks));
        if a.after_instance.is_some() && b.after_instance.is_some() {
            o.push(a);
            r.push(b);
        }
    }
    println!("{} schemas (every {every}th file) both engines ran; KiB, p50 / p90 / max", o.len());
    let col = |rows: &[Row], f: fn(&Row) -> Option<isize>| -> String {
        let v: Vec<isize> = rows.iter().filter_map(f).collect();
        let max = v.iter().copied().max().map_or("-".into(), kib);
        format!("{} / {} / {}", pct(&v, 50), pct(&v, 90), max)
    };
    println!("| | ours | LLGuidance 1.9.1 |");
    println!("|---|---|---|");
    println!(
        "| compiled grammar + first matcher | {} | {} |",
        col(&o, |x| x.grammar_matcher),
        col(&r, |x| x.grammar_matcher)
    );
    println!(
        "| the same after one instance | {} | {} |",
        col(&o, |x| x.after_instance),
        col(&r, |x| x.after_instance)
    );
    println!(
        "| one more matcher (`deep_clone`) | {} | {} |",
        col(&o, |x| x.deep_clone),
        col(&r, |x| x.deep_clone)
    );
    println!("| one more matcher (`matcher_for`) | {} | - |", col(&o, |x| x.matcher_for));
}
