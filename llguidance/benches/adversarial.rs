//! Adversarial corpus benchmark: the compile time (+ the outcome check) of each case of
//! `tests/data/adversarial.txt` on the byte vocabulary, median and max of `RUNS` runs
//! (default 3, env `ADVERSARIAL_RUNS`), and whether each stays under 1 s.
//!
//! Run: `cargo bench -p llguidance --bench adversarial`.

#[path = "../tests/common/adversarial.rs"]
mod adversarial;

use llguidance::ParserFactory;

fn main() {
    let runs: usize =
        std::env::var("ADVERSARIAL_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    let f = ParserFactory::from_tokenizer_name("bytes").expect("bytes");
    let cases = adversarial::cases();
    println!("{:<52} {:>10} {:>10}  outcome", "case", "median ms", "max ms");
    let mut over = 0;
    let mut worst = (0.0f64, String::new());
    for case in &cases {
        let mut times = Vec::new();
        let mut outcome = Ok(());
        for _ in 0..runs {
            let (t, o) = adversarial::run(&f, case);
            times.push(t.as_secs_f64() * 1e3);
            outcome = o;
        }
        times.sort_by(f64::total_cmp);
        let (med, max) = (times[times.len() / 2], times[times.len() - 1]);
        if max >= 1000.0 {
            over += 1;
        }
        if max > worst.0 {
            worst = (max, case.name.clone());
        }
        let o = match outcome {
            Ok(()) => "as expected".to_string(),
            Err(e) => format!("UNEXPECTED: {e}"),
        };
        println!("{:<52} {med:>10.2} {max:>10.2}  {o}", case.name);
    }
    println!(
        "{} cases, {runs} runs each; worst {:.1} ms ({}); {over} at or over 1 s",
        cases.len(),
        worst.0,
        worst.1
    );
}
