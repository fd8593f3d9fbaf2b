//! Batch masks: N matchers over the built-in o200k tokenizer, one JSON-ish Lark grammar, each
//! matcher at a different position of a JSON document (inside strings, after keys, between
//! values). Times one mask per matcher sequentially and with `ParserFactory::compute_masks`
//! (rayon), and reports µs per batch and the speedup on this machine's cores, two ways:
//! - *repeat*: the same positions every batch (masks answered from each matcher's last one);
//! - *walk*: what a server does: between batches every matcher takes its next token, so each
//!   batch computes new masks (two identical sets of matchers, one timed sequentially, one
//!   with `compute_masks`; masks compared).
//!
//! The walks run three ways: N sequences of one grammar; N different grammars (synthetic
//! JSON schemas); and, when `MASKBENCH` names the MaskBench folder (e.g.
//! `../shared/data/maskbench`, relative to the workspace root; not needed otherwise), the
//! first N MaskBench schemas that compile, each on its first valid instance.
//!
//! Run: `cargo bench -p llguidance --bench batch` (optionally `-- 16 64 256` for the batch
//! sizes; `RAYON_NUM_THREADS` sets the pool size).

use std::time::Instant;

use std::sync::Arc;

use grammars::CompiledGrammar;
use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId};

const GRAMMAR: &str = r#"start: value
value: object | array | STRING | NUMBER | "true" | "false" | "null"
object: "{" [pair ("," pair)*] "}"
pair: STRING ":" value
array: "[" [value ("," value)*] "]"
STRING: /"([^"\\\x00-\x1F\x7F]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
%ignore /[ \t\n\r]+/
"#;

const DOC: &str = r#"{"id": 40213, "name": "Ada Lovelace", "email": "ada@example.org",
 "tags": ["math", "poetry", "engines"], "score": -12.5e3, "active": true,
 "address": {"street": "12 St James's Square", "city": "London", "zip": null},
 "notes": "Wrote the first published algorithm intended for a machine, in 1843.",
 "history": [{"year": 1833, "event": "met Babbage"}, {"year": 1843, "event": "Note G"}]}"#;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = {
        let v: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if v.is_empty() {
            vec![16, 64]
        } else {
            v
        }
    };
    let t = Instant::now();
    let factory = ParserFactory::from_tokenizer_name("o200k")?;
    println!(
        "o200k: {} ids, factory in {:.0} ms; rayon threads: {}; cores: {}",
        factory.trie().vocab_size(),
        t.elapsed().as_secs_f64() * 1e3,
        rayon::current_num_threads(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let grammar = factory.compile(&GrammarSource::Lark(GRAMMAR.into()))?;
    let toks = factory.tokenizer().tokenize(DOC)?;
    let words = factory.trie().vocab_size().div_ceil(32);

    for &n in &sizes {
        // Matcher i sits after a prefix of the document spread over its whole length.
        let mut ms: Vec<Matcher> = (0..n)
            .map(|i| {
                let mut m = factory.matcher_for(grammar.clone())?;
                m.consume_tokens(&toks[..i * toks.len() / n])?;
                Ok(m)
            })
            .collect::<anyhow::Result<_>>()?;
        let allowed: usize =
            ms.iter_mut().map(|m| m.compute_mask().map(|s| s.count())).sum::<Result<_, _>>()?;
        let mut out = vec![0u32; n * words];
        let reps = (2000 / n).clamp(5, 100);

        let mut seq = Vec::with_capacity(reps);
        let mut par = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = Instant::now();
            for (m, chunk) in ms.iter_mut().zip(out.chunks_mut(words)) {
                m.compute_mask_into(chunk)?;
            }
            seq.push(t.elapsed().as_secs_f64() * 1e6);
            let seq_out = out.clone();

            let t = Instant::now();
            let res = factory.compute_masks(&mut ms, &mut out);
            par.push(t.elapsed().as_secs_f64() * 1e6);
            for r in res {
                r?;
            }
            anyhow::ensure!(seq_out == out, "batch masks differ from sequential masks");
        }
        let (smin, pmin) = (
            seq.iter().copied().fold(f64::MAX, f64::min),
            par.iter().copied().fold(f64::MAX, f64::min),
        );
        let (s, p) = (median(seq), median(par));
        println!(
            "repeat N={n:>4}: sequential {s:>9.1} µs/batch ({:>6.1} µs/mask), compute_masks {p:>9.1} \
             µs/batch ({:>6.1} µs/mask), speedup {:.2}x (best runs: {smin:.0} vs {pmin:.0} µs, \
             {:.2}x); {:.0} allowed tokens/mask on average; median of {reps}",
            s / n as f64,
            p / n as f64,
            s / p,
            smin / pmin,
            allowed as f64 / n as f64
        );
    }
    // Every walk: one grammar (sequences of one schema), then a different grammar per
    // matcher (synthetic JSON schemas; MaskBench's when `MASKBENCH` names its folder).
    let docs = vec![(grammar.clone(), toks.clone())];
    for &n in &sizes {
        walk("one schema", &factory, &docs, n, words)?;
    }
    let many = synthetic_schemas(&factory, sizes.iter().copied().max().unwrap_or(0))?;
    for &n in &sizes {
        walk("different schemas", &factory, &many[..n.min(many.len())], n, words)?;
    }
    match std::env::var_os("MASKBENCH") {
        Some(dir) => {
            // cargo runs benches in the package's folder: a relative path is taken from the
            // workspace root, where the command is typed.
            let dir = std::path::Path::new(&dir);
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let dir = if dir.is_relative() { root.join(dir) } else { dir.to_path_buf() };
            let mb = maskbench(&factory, &dir, sizes.iter().max().copied())?;
            for &n in &sizes {
                walk("MaskBench schemas", &factory, &mb[..n.min(mb.len())], n, words)?;
            }
        }
        None => {
            println!("(MaskBench walk skipped: set MASKBENCH=../shared/data/maskbench to run it)")
        }
    }
    Ok(())
}

type Doc = (Arc<CompiledGrammar>, Vec<TokenId>);

/// `n` different JSON schemas (property names, types and bounds vary with the index) and an
/// instance of each.
fn synthetic_schemas(factory: &ParserFactory, n: usize) -> anyhow::Result<Vec<Doc>> {
    (0..n)
        .map(|i| {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {
                    format!("id_{i}"): {"type": "integer", "minimum": i},
                    format!("name_{i}"): {"type": "string", "maxLength": 20 + i},
                    "kind": {"enum": [format!("alpha_{i}"), format!("beta_{}", i % 7), "gamma"]},
                    format!("tags_{}", i % 5): {"type": "array", "items": {"type": "string"}},
                    "score": {"type": "number"},
                    format!("meta_{i}"): {
                        "type": "object",
                        "properties": {
                            "flag": {"type": "boolean"},
                            format!("note_{}", i % 3): {"type": "string", "pattern": "^[a-z ]+$"}
                        },
                        "required": ["flag"]
                    }
                },
                "required": [format!("id_{i}"), "kind", format!("meta_{i}")]
            });
            let doc = serde_json::json!({
                format!("id_{i}"): 1000 + 37 * i,
                format!("name_{i}"): format!("Item number {i}"),
                "kind": format!("beta_{}", i % 7),
                format!("tags_{}", i % 5): ["red", "green", format!("t{i}")],
                "score": -1.5 * i as f64,
                format!("meta_{i}"): {
                    "flag": i % 2 == 0,
                    format!("note_{}", i % 3): "all fine here"
                }
            });
            let g = factory.compile(&GrammarSource::JsonSchema(schema.to_string()))?;
            Ok((g, factory.tokenizer().tokenize(&doc.to_string())?))
        })
        .collect()
}

/// The first `max` MaskBench files (by name) that compile, each with its first valid
/// instance (compact JSON).
fn maskbench(
    factory: &ParserFactory,
    dir: &std::path::Path,
    max: Option<usize>,
) -> anyhow::Result<Vec<Doc>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        if max.is_some_and(|m| out.len() >= m) {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f)?)?;
        let Some(data) = v["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["valid"] == true))
            .map(|t| t["data"].to_string())
        else {
            continue;
        };
        let Ok(g) = factory.compile(&GrammarSource::JsonSchema(v["schema"].to_string())) else {
            continue;
        };
        let toks = factory.tokenizer().tokenize(&data)?;
        // Instances our grammar refuses (a few MaskBench files) would stop the walk.
        let mut m = factory.matcher_for(g.clone())?;
        if toks.len() >= 2 && m.consume_tokens(&toks).is_ok() {
            out.push((g, toks));
        }
    }
    Ok(out)
}

/// The walk: `n` matchers, matcher i on document `i % docs.len()` starting at token `i *
/// len / n` and going on from there (back to the start of its document when it is done), one
/// token per batch. The first half pass (by the longest document) warms the lexers and is not
/// timed; the timed batches alternate which of the two goes first, and the totals are also
/// given by order (a server asks for a batch right after consuming a token per sequence).
fn walk(
    what: &str,
    factory: &ParserFactory,
    docs: &[Doc],
    n: usize,
    words: usize,
) -> anyhow::Result<()> {
    let make = || -> anyhow::Result<(Vec<Matcher>, Vec<usize>)> {
        let mut ms = Vec::with_capacity(n);
        let mut pos = Vec::with_capacity(n);
        for i in 0..n {
            let (g, toks) = &docs[i % docs.len()];
            let mut m = factory.matcher_for(g.clone())?;
            let p = i * toks.len() / n;
            m.consume_tokens(&toks[..p])?;
            ms.push(m);
            pos.push(p);
        }
        Ok((ms, pos))
    };
    let (mut seq_ms, mut pos) = make()?;
    let (mut par_ms, _) = make()?;
    let len = docs.iter().map(|d| d.1.len()).max().unwrap_or(0);
    let steps = 3 * len / 2;
    let mut seq_out = vec![0u32; n * words];
    let mut par_out = vec![0u32; n * words];
    let (mut seq, mut par) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    // Totals by order: the batch right after the consume step (as a server asks for the next
    // masks) and after the sequential loop.
    let (mut first_seq, mut first_par, mut after_seq, mut after_par) = (0.0, 0.0, 0.0, 0.0);
    // The best a batch on the pool's threads can do: max(the work shared out, its slowest
    // mask).
    let threads = rayon::current_num_threads() as f64;
    let mut bound = 0.0;
    for step in 0..steps {
        let batch = |ms: &mut [Matcher], out: &mut [u32]| -> anyhow::Result<f64> {
            let t = Instant::now();
            for r in factory.compute_masks(ms, out) {
                r?;
            }
            Ok(t.elapsed().as_secs_f64() * 1e6)
        };
        let mut p_us = if step % 2 == 1 { batch(&mut par_ms, &mut par_out)? } else { 0.0 };
        let t = Instant::now();
        let mut slowest: f64 = 0.0;
        for (m, chunk) in seq_ms.iter_mut().zip(seq_out.chunks_mut(words)) {
            let t1 = Instant::now();
            m.compute_mask_into(chunk)?;
            slowest = slowest.max(t1.elapsed().as_secs_f64() * 1e6);
        }
        let s_us = t.elapsed().as_secs_f64() * 1e6;
        if step % 2 == 0 {
            p_us = batch(&mut par_ms, &mut par_out)?;
        }
        anyhow::ensure!(seq_out == par_out, "step {step}: batch masks differ from sequential");
        if step >= len / 2 {
            bound += (s_us / threads).max(slowest);
            seq.push(s_us);
            par.push(p_us);
            if step % 2 == 1 {
                (first_seq, first_par) = (first_seq + s_us, first_par + p_us);
            } else {
                (after_seq, after_par) = (after_seq + s_us, after_par + p_us);
            }
        }
        for i in 0..n {
            let toks = &docs[i % docs.len()].1;
            if pos[i] == toks.len() {
                seq_ms[i].reset()?;
                par_ms[i].reset()?;
                pos[i] = 0;
            }
            seq_ms[i].consume_token(toks[pos[i]])?;
            par_ms[i].consume_token(toks[pos[i]])?;
            pos[i] += 1;
        }
    }
    let (st, pt): (f64, f64) = (seq.iter().sum(), par.iter().sum());
    let (s, p) = (median(seq.clone()), median(par.clone()));
    println!(
        "walk, {what}, N={n:>4}: sequential {s:>9.1} µs/batch median ({:>6.1} µs/mask), \
         compute_masks {p:>9.1} µs/batch; speedup {:.2}x (totals over {} batches: {:.1} vs \
         {:.1} ms, {:.2}x; at most {:.2}x on {} threads: each batch's slowest mask)",
        s / n as f64,
        s / p,
        seq.len(),
        st / 1e3,
        pt / 1e3,
        st / pt,
        st / bound,
        threads
    );
    println!(
        "  by order: batch right after the consume step {:.2}x, after the sequential loop {:.2}x",
        first_seq / first_par,
        after_seq / after_par
    );
    Ok(())
}
