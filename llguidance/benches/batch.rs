//! Batch masks: N matchers over the built-in o200k tokenizer, one JSON-ish Lark grammar, each
//! matcher at a different position of a JSON document (inside strings, after keys, between
//! values). Times one mask per matcher sequentially and with `ParserFactory::compute_masks`
//! (rayon), and reports µs per batch and the speedup on this machine's cores.
//!
//! Run: `cargo bench -p llguidance --bench batch` (optionally `-- 16 64 256` for the batch
//! sizes; `RAYON_NUM_THREADS` sets the pool size).

use std::time::Instant;

use llguidance::{GrammarSource, Matcher, ParserFactory};

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
            "N={n:>4}: sequential {s:>9.1} µs/batch ({:>6.1} µs/mask), compute_masks {p:>9.1} \
             µs/batch ({:>6.1} µs/mask), speedup {:.2}x (best runs: {smin:.0} vs {pmin:.0} µs, \
             {:.2}x); {:.0} allowed tokens/mask on average; median of {reps}",
            s / n as f64,
            p / n as f64,
            s / p,
            smin / pmin,
            allowed as f64 / n as f64
        );
    }
    Ok(())
}
