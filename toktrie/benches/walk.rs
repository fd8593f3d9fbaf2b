//! Mask-walk benchmark: nodes visited per mask and ns per visited node for an accept-all
//! walk, a sparse `[0-9]+` DFA and a dense JSON-string-body DFA, on the built-in o200k
//! vocabulary and on ../shared/tokenizers/llama3.tokenizer.json (skipped, with a message,
//! when ../shared is absent). Also trie build time and memory.
//!
//! Run: `cargo bench -p toktrie --bench walk` (add `-- --quick` for fewer iterations).

#[path = "support/regex_dfa.rs"]
mod regex_dfa;

use std::time::{Duration, Instant};
use toktrie::{AcceptAll, Recognizer, TokTrie, TokenId, TokenSet, Tokenizer};

/// Counts the bytes the walk offers (= trie nodes visited).
struct Counting<R> {
    inner: R,
    visited: usize,
}

impl<R: Recognizer> Recognizer for Counting<R> {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        self.visited += 1;
        self.inner.try_push_byte(byte)
    }
    fn pop_bytes(&mut self, num: usize) {
        self.inner.pop_bytes(num)
    }
    fn special_allowed(&mut self, tok: TokenId) -> bool {
        self.inner.special_allowed(tok)
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn bench<R: Recognizer + Clone>(trie: &TokTrie, name: &str, r: &R, budget: Duration) {
    let mut counting = Counting { inner: r.clone(), visited: 0 };
    let mut mask = TokenSet::new(trie.vocab_size());
    trie.add_bias(&mut counting, &mut mask, &[]);
    let allowed = mask.count();
    let visited = counting.visited;

    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || times.len() < 20 {
        let mut r = r.clone();
        mask.clear();
        let t0 = Instant::now();
        trie.add_bias(&mut r, &mut mask, &[]);
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    let p50 = percentile(&times, 0.5);
    let p99 = percentile(&times, 0.99);
    println!(
        "  {name:<18} allowed {allowed:>7}  visited {visited:>7} nodes  mask p50 {p50:>8.1} µs  \
         p99 {p99:>8.1} µs  {:>5.2} ns/node ({:>4.1} cycles at 2.6 GHz)  [{} runs]",
        p50 * 1e3 / visited as f64,
        p50 * 1e3 / visited as f64 * 2.6,
        times.len()
    );
}

/// The floor under any mask: a fresh mask of the vocabulary's width (allocate + zero) and
/// one copy of it into a caller's buffer, as every mask call does.
fn mask_write(n: usize, budget: Duration) {
    let mut out = vec![0u32; n.div_ceil(32)];
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || times.len() < 20 {
        let t0 = Instant::now();
        let mut m = TokenSet::new(n);
        m.insert(TokenId(0));
        m.write_to(&mut out).expect("fits");
        std::hint::black_box(&out);
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "  mask floor: new {n}-bit mask + copy out ({} KB) p50 {:.2} µs  p99 {:.2} µs  [{} runs]",
        n.div_ceil(8) / 1024,
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.len()
    );
}

fn run(tok: &Tokenizer, budget: Duration) -> anyhow::Result<()> {
    let vocab = tok.vocab();
    let t0 = Instant::now();
    let trie = TokTrie::from_vocab(vocab)?;
    let build = t0.elapsed();
    let stats = trie.stats();
    println!("{} — trie built in {:.1} ms", vocab.name(), build.as_secs_f64() * 1e3);
    println!("  {stats}");
    println!(
        "  trie memory: {:.2} bytes per token ({:.2} per id), {} nodes of 8 bytes",
        stats.num_bytes as f64 / stats.num_tokens as f64,
        stats.num_bytes as f64 / stats.vocab_size as f64,
        stats.num_nodes
    );
    mask_write(vocab.len(), budget);
    bench(&trie, "accept-all", &AcceptAll::default(), budget);
    bench(&trie, "[0-9]+", &regex_dfa::byte_dfa("[0-9]+")?, budget);
    let body = r#"([^"\\\x00-\x1F\x7F]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*""#;
    bench(&trie, "json-string-body", &regex_dfa::byte_dfa(body)?, budget);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let budget = Duration::from_millis(if quick { 300 } else { 2000 });
    run(&Tokenizer::builtin("o200k")?, budget)?;
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tokenizers");
    let llama = shared.join("llama3.tokenizer.json");
    if llama.exists() {
        run(&Tokenizer::from_file(&llama)?, budget)?;
    } else {
        println!("skipped llama3: {} not found (../shared is absent)", llama.display());
    }
    Ok(())
}
