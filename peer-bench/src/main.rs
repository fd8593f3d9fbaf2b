//! peer-bench: MaskBench head-to-head between our engine (`llguidance`, path dependency) and
//! the crates.io `llguidance` (the reference, renamed `ref_llg`), in one process, on the same
//! files, the same instances and the same token ids.
//!
//! Per schema: compile + create a matcher with each engine in turn (TTFM); for each instance
//! (compact JSON, key order as in the file, tokenized once with our tokenizer) replay the tokens
//! on a clone of the compiled matcher (clone not timed), timing mask + consume per token (TBM).
//! The masks of both engines are compared at every step of every valid instance (outside the
//! timed regions). Only the reference's public API is used; forcing is disabled on the
//! reference by giving it a tokenizer environment that reports non-canonical tokenization.

mod agreement;
mod args;
mod classify;
mod instance;
mod our_engine;
mod outcome;
#[path = "../../llguidance/src/bin/llg/plot.rs"]
mod plot;
mod ref_engine;
mod report;
mod sort;
mod stats;

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

use agreement::Agreement;
use instance::TokCheck;
use our_engine::run_ours;
use outcome::{EngineResult, Outcome};
use ref_engine::{run_ref, NoForceEnv, RefCtx};
use sort::Sorted;

fn main() {
    let args = args::parse_args();
    let mut files = args::collect_files(&args.inputs);
    files = files.into_iter().step_by(args.every).collect();
    if let Some(n) = args.limit {
        files.truncate(n);
    }
    std::fs::create_dir_all(&args.out_dir).expect("create --out-dir");
    let tok_path = args.tokenizer.display().to_string();
    if !args.tokenizer.exists() {
        eprintln!("tokenizer {tok_path} not found (it lives in ../shared/tokenizers)");
        std::process::exit(2);
    }

    // Ours.
    let our_f = ours::ParserFactory::from_tokenizer_name(&tok_path)
        .expect("our factory")
        // Each schema compiled as new (a duplicate schema would find its grammar kept).
        .with_grammar_cache(0);
    let our_eos: Vec<u32> = our_f.tokenizer().vocab().eos_tokens().iter().map(|t| t.0).collect();

    // The reference.
    let bt = toktrie_hf_tokenizers::ByteTokenizer::from_file(&args.tokenizer)
        .expect("reference tokenizer");
    let hf_env = bt.into_tok_env(None).expect("reference TokEnv");
    let env: TokEnv = std::sync::Arc::new(NoForceEnv(hf_env.clone()));
    let mut ref_f = ref_llg::ParserFactory::new_simple(&env).expect("reference factory");
    ref_f.quiet();
    let trie = env.tok_trie();
    let ctx = RefCtx { factory: &ref_f, trie, our_eos: &our_eos };
    eprintln!(
        "tokenizer {tok_path}: ours vocab {} eos {:?}; reference vocab {} eos {:?}",
        our_f.tokenizer().vocab().len(),
        our_eos,
        trie.vocab_size(),
        trie.eos_tokens()
    );

    let mut agr = Agreement::default();
    let mut sorted = Sorted::default();
    let mut results: Vec<(String, EngineResult, EngineResult)> = Vec::new();
    let mut tok = TokCheck::default();
    let mut per_schema =
        std::fs::File::create(args.out_dir.join("schemas.jsonl")).expect("schemas.jsonl");
    let mut steps_w = std::fs::File::create(args.out_dir.join("steps.tsv")).expect("steps.tsv");
    writeln!(steps_w, "file\tinstance\tstep\tours_us\tref_us\tours_nodes\tref_nodes\tbefore").ok();
    let start = Instant::now();

    for (fi, path) in files.iter().enumerate() {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).expect("read file");
        let doc: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{file}: not JSON: {e}");
                continue;
            }
        };
        let schema = doc.get("schema").cloned().unwrap_or(serde_json::Value::Null);
        let schema_text = schema.to_string();
        let tests = doc.get("tests").and_then(|t| t.as_array()).cloned().unwrap_or_default();
        let insts = instance::load_instances(&file, &tests, &our_f, &hf_env, &mut tok);

        let o = catch_unwind(AssertUnwindSafe(|| run_ours(&our_f, &schema_text, &insts, true)))
            .unwrap_or_else(|_| EngineResult::failed(Outcome::Panic, "panic".into()));
        let ours_for_cmp = o.ttfm_us.is_some().then_some(&o);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run_ref(&ctx, &schema_text, &insts, ours_for_cmp, &mut agr)
        }))
        .unwrap_or_else(|_| EngineResult::failed(Outcome::Panic, "panic".into()));
        if (!agr.cur.is_empty() || !agr.cur_len.is_empty())
            && std::env::var_os("PEER_NO_SORT").is_none()
        {
            sort::sort_file_diffs(
                &ctx,
                &our_f,
                &file,
                &schema,
                &insts,
                ours_for_cmp,
                &mut agr,
                &mut sorted,
            );
        }
        agr.cur.clear();
        agr.cur_len.clear();
        agr.cur_compared.clear();

        writeln!(per_schema, "{}", report::schema_line(&file, &o, &r)).ok();
        // Per step (valid instances both replayed in full): time and trie nodes walked.
        report::write_steps(&mut steps_w, &file, &insts, &o, &r, &our_f);
        // Free the recorded masks.
        let strip = |mut e: EngineResult| {
            for rep in e.replays.iter_mut().flatten() {
                rep.masks = Vec::new();
            }
            e
        };
        results.push((file, strip(o), strip(r)));
        if (fi + 1) % 25 == 0 || fi + 1 == files.len() {
            eprintln!(
                "[{}/{}] {:.0} s, mask diffs so far: {} steps",
                fi + 1,
                files.len(),
                start.elapsed().as_secs_f64(),
                agr.set_diffs + agr.eos_diffs
            );
        }
    }

    report::write_summary(&args, &results, &agr, &sorted, &tok, start);
}
