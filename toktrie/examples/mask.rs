//! Prints the trie statistics of a vocabulary and the token mask of a regex after a prefix.
//!
//! ```text
//! cargo run --release -p toktrie --example mask -- [--tokenizer NAME|PATH] [--regex RE] [--prefix TEXT]
//! ```
//! Defaults: the built-in o200k vocabulary (no files needed), a small JSON-object regex, and
//! the prefix `{"name": "Al`.

#[path = "../benches/support/regex_dfa.rs"]
mod regex_dfa;

use std::time::Instant;
use toktrie::{Recognizer, TokTrie, TokenSet, Tokenizer};

fn main() -> anyhow::Result<()> {
    let mut tokenizer = "o200k".to_string();
    let mut regex = r#"\{"name": "[A-Za-z ]{1,20}", "age": [0-9]{1,3}\}"#.to_string();
    let mut prefix = r#"{"name": "Al"#.to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| anyhow::anyhow!("{a} needs a value"));
        match a.as_str() {
            "--tokenizer" => tokenizer = value()?,
            "--regex" => regex = value()?,
            "--prefix" => prefix = value()?,
            _ => anyhow::bail!("unknown argument {a}; use --tokenizer, --regex, --prefix"),
        }
    }

    let t0 = Instant::now();
    let tok = if std::path::Path::new(&tokenizer).exists() {
        Tokenizer::from_file(std::path::Path::new(&tokenizer))?
    } else {
        Tokenizer::builtin(&tokenizer)?
    };
    let vocab = tok.vocab();
    let load = t0.elapsed();
    let t1 = Instant::now();
    let trie = TokTrie::from_vocab(vocab)?;
    println!(
        "tokenizer {}: loaded in {:.1} ms, trie built in {:.1} ms",
        vocab.name(),
        load.as_secs_f64() * 1e3,
        t1.elapsed().as_secs_f64() * 1e3
    );
    println!("trie: {}", trie.stats());

    let mut dfa = regex_dfa::byte_dfa(&regex)?;
    if let Some(eos) = vocab.eos_token() {
        dfa = dfa.with_specials_at_end(&[eos]);
    }
    for (i, b) in prefix.bytes().enumerate() {
        anyhow::ensure!(dfa.try_push_byte(b), "the prefix is rejected by the regex at byte {i}");
    }
    dfa.collapse();
    let mut mask = TokenSet::new(vocab.len());
    let t2 = Instant::now();
    trie.add_bias(&mut dfa, &mut mask, &[]);
    let took = t2.elapsed();
    println!("regex:  {regex}\nprefix: {prefix}");
    println!(
        "mask: {} of {} tokens allowed, computed in {:.1} µs",
        mask.count(),
        vocab.len(),
        took.as_secs_f64() * 1e6
    );
    let shown: Vec<String> = mask.iter().take(12).map(|t| vocab.token_display(t)).collect();
    println!("first allowed: {}", shown.join(" "));
    Ok(())
}
