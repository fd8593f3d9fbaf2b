//! Parametric rules: compile time and mask times of "each of N items once, in any order"
//! (LLGuidance's `perm::_` with `set_bit`/`bit_clear`/`is_ones`) for N = 5, 10, 20, with
//! the built-in o200k tokenizer. Instances are made as the parser reaches them, so N = 20
//! builds a few hundred instances along one permutation, never 2^20 rules.
//!
//! Each item is a distinct word followed by `;`. Per N: compile + first matcher (median of
//! 20), then mask + consume per token along a shuffled permutation (each mask of a fresh
//! decode, 20 decodes), median and p99.
//!
//! Run: `cargo bench -p llguidance --bench parametric`.

use std::time::Instant;

use llguidance::{GrammarSource, ParserFactory};

fn grammar(n: usize) -> String {
    let mut g = String::from("start: perm::0x0\nperm::_ : \"\" %if is_ones([0:");
    g.push_str(&format!("{n}])\n"));
    for i in 0..n {
        g.push_str(&format!("  | \"item{i};\" perm::set_bit({i}) %if bit_clear({i})\n"));
    }
    g
}

fn pct(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) * p / 100]
}

fn main() {
    let f = ParserFactory::from_tokenizer_name("o200k").expect("built-in tokenizer");
    println!(
        "{:>3} {:>14} {:>12} {:>12} {:>8}",
        "N", "compile p50 µs", "mask p50 µs", "mask p99 µs", "masks"
    );
    for n in [5usize, 10, 20] {
        let src = GrammarSource::Lark(grammar(n));
        let mut compile = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            let m = f.create_matcher(&src).expect("compiles");
            compile.push(t.elapsed().as_secs_f64() * 1e6);
            drop(m);
        }
        // A fixed shuffle of the items (a multiplicative step coprime with n).
        let step = (1..n).rev().find(|s| gcd(*s, n) == 1).unwrap_or(1);
        let text: String = (0..n).map(|i| format!("item{};", i * step % n)).collect();
        let toks = f.tokenizer().tokenize(&text).expect("tokenizes");
        let mut masks = Vec::new();
        for _ in 0..20 {
            let mut m = f.create_matcher(&src).expect("compiles");
            for &tok in &toks {
                let t = Instant::now();
                let mask = m.compute_mask().expect("mask");
                masks.push(t.elapsed().as_secs_f64() * 1e6);
                assert!(mask.contains(tok), "the permutation's token is allowed");
                m.consume_token(tok).expect("consumes");
            }
            assert!(m.is_accepting().expect("state"), "a whole permutation is accepted");
        }
        let count = masks.len();
        println!(
            "{n:>3} {:>14.1} {:>12.1} {:>12.1} {count:>8}",
            pct(&mut compile, 50),
            pct(&mut masks, 50),
            pct(&mut masks, 99)
        );
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
