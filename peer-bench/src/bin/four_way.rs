//! four_way: MaskBench with the three Rust engines in one process (issue 45, item 1): ours
//! (`llguidance`, path dependency), the crates.io `llguidance` 1.9.1 (LLGuidance) and the
//! crates.io `xgrammar-rs` 0.2.8 (the pure-Rust port of XGrammar 0.2.8). The fourth engine,
//! XGrammar 0.2.8 itself (C++ behind Python), runs in `xgrammar/three_way.py` on the same
//! files (`--every` and the file order agree), with ours and LLGuidance again as the common
//! columns.
//!
//! Per schema, the engines in turn (the order rotates from one schema to the next):
//! - **TTFM**: compile + matcher + first mask. xgrammar-rs compiles in a worker process with a
//!   time limit (`--timeout-s`, default 20; killed and restarted past it); its compiled grammar
//!   comes back serialized and is deserialized untimed (`GrammarCompiler::new(info, 1, false, -1)`: one
//!   thread, no cache, as `three_way.py` runs XGrammar; `compile_json_schema(schema,
//!   any_whitespace = true, strict_mode = true)`, XGrammar's defaults).
//! - **TBM**: for every instance (valid and invalid), a fresh matcher (a deep clone for ours and
//!   LLGuidance, `GrammarMatcher::from_compiled_grammar` for xgrammar-rs; not timed), then per
//!   token one mask (into a preallocated buffer for xgrammar-rs) and one consume. Pooled over
//!   the valid instances all three accepted, overall and split into each schema's first
//!   instance and the later ones.
//! - **Acceptance**: a valid instance is accepted when every token is in the mask and consumed
//!   and EOS is allowed at the end; an invalid instance is accepted (a wrong answer) the same
//!   way. LLGuidance's forcing is off (`NoForceEnv`), as in `peer-bench`.
//! - **Memory**: live heap bytes (a counting allocator) added by compile + first matcher +
//!   first mask, per schema; the factory, tokenizer and xgrammar-rs `TokenizerInfo` not counted.
//!
//! Run: `cargo run --release --bin four_way -- [--every K] [--limit N] [--timeout-s S]
//! [--tokenizer PATH] [FILES_OR_DIRS]` in `peer-bench/` (needs ../shared).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

#[path = "../agreement.rs"]
#[allow(dead_code)]
mod agreement;
#[path = "../args.rs"]
#[allow(dead_code)]
mod args;
#[path = "../counting.rs"]
mod counting;
#[path = "../instance.rs"]
mod instance;
#[path = "../outcome.rs"]
#[allow(dead_code)]
mod outcome;
#[path = "../ref_engine.rs"]
#[allow(dead_code)]
mod ref_engine;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use counting::{live, Counting};
use instance::{Instance, TokCheck};
use ref_engine::NoForceEnv;
use stats::{stats, Stats};

#[global_allocator]
static GLOBAL: Counting = Counting;

const ENGINES: [&str; 3] = ["ours", "llguidance", "xgrammar-rs"];
/// Time limit for one engine's replay of one schema's instances.
const REPLAY_LIMIT: Duration = Duration::from_secs(10);

/// One engine on one schema.
#[derive(Default)]
struct Run {
    /// `None` where it did not compile (see `error`).
    ttfm_us: Option<f64>,
    error: Option<String>,
    timeout: bool,
    mem_bytes: isize,
    /// Per instance: per-token times (µs) and whether it was accepted; `None` past the limit.
    replays: Vec<Option<(Vec<f64>, bool)>>,
}

/// A compiled grammar ready to make matchers, one kind per engine.
enum Compiled {
    Ours(ours::Matcher),
    Llg(ref_llg::Matcher),
    Xgr(Arc<xgrammar::CompiledGrammar>),
}

struct Engines {
    ours: ours::ParserFactory,
    llg: ref_llg::ParserFactory,
    llg_eos: Vec<u32>,
    xgr_info: xgrammar::TokenizerInfo,
    eos: u32,
    words: usize,
    timeout: Duration,
    xgr: XgrWorker,
}

/// xgrammar-rs compiles run in a child process (this binary with `--xgr-worker`), killed and
/// restarted past the time limit, as `three_way.py` does for XGrammar: one schema per line
/// on its stdin; per schema one line back, `{"s": compile seconds, "cg": serialized}` or
/// `{"err": message}`.
struct XgrWorker {
    args: Vec<String>,
    child: Option<(std::process::Child, std::process::ChildStdin, mpsc::Receiver<String>)>,
    restarts: usize,
}

impl XgrWorker {
    fn start(&mut self) {
        use std::io::BufRead;
        let mut child = std::process::Command::new(std::env::current_exe().expect("exe"))
            .arg("--xgr-worker")
            .args(&self.args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the xgrammar-rs worker");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // The worker says "ready" once its TokenizerInfo is built.
        let ready = rx.recv_timeout(Duration::from_secs(300)).expect("xgrammar-rs worker start");
        assert_eq!(ready, "ready");
        self.child = Some((child, stdin, rx));
    }

    fn kill(&mut self) {
        if let Some((mut c, _, _)) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.restarts += 1;
    }

    fn compile(
        &mut self,
        schema: &str,
        timeout: Duration,
    ) -> Result<(f64, String), (String, bool)> {
        use std::io::Write;
        if self.child.is_none() {
            self.start();
        }
        let (_, stdin, rx) = self.child.as_mut().unwrap();
        let line = schema.replace('\n', " ");
        if writeln!(stdin, "{line}").and_then(|_| stdin.flush()).is_err() {
            self.kill();
            return Err(("worker died".into(), false));
        }
        match rx.recv_timeout(timeout) {
            Ok(reply) => {
                let v: serde_json::Value =
                    serde_json::from_str(&reply).map_err(|e| (e.to_string(), false))?;
                match (v.get("s").and_then(|s| s.as_f64()), v.get("cg").and_then(|c| c.as_str())) {
                    (Some(s), Some(cg)) => Ok((s, cg.to_string())),
                    _ => Err((
                        v.get("err").and_then(|e| e.as_str()).unwrap_or("?").to_string(),
                        false,
                    )),
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.kill();
                Err(("timeout".into(), true))
            }
            Err(_) => {
                self.kill();
                Err(("worker died".into(), false))
            }
        }
    }
}

/// The worker: `--xgr-worker TOKENIZER VOCAB EOS`.
fn xgr_worker(args: &[String]) {
    use std::io::{BufRead, Write};
    let hf = tokenizers::Tokenizer::from_file(&args[0]).expect("HF tokenizer");
    let vocab: usize = args[1].parse().expect("vocab");
    let eos: i32 = args[2].parse().expect("eos");
    let info = xgrammar::TokenizerInfo::from_huggingface(&hf, Some(vocab), Some(&[eos]))
        .expect("xgrammar-rs TokenizerInfo");
    let comp = xgrammar::GrammarCompiler::new(info, 1, false, -1);
    let out = std::io::stdout();
    writeln!(out.lock(), "ready").unwrap();
    for line in std::io::stdin().lock().lines() {
        let Ok(schema) = line else { break };
        let t0 = Instant::now();
        let r = comp.compile_json_schema(&schema, true, None, None, true, None);
        let secs = t0.elapsed().as_secs_f64();
        let reply = match r {
            Ok(cg) => serde_json::json!({"s": secs, "cg": cg.serialize_json()}),
            Err(e) => serde_json::json!({"err": e.to_string()}),
        };
        let mut o = out.lock();
        if writeln!(o, "{reply}").and_then(|_| o.flush()).is_err() {
            break;
        }
    }
}

impl Engines {
    fn compile(&mut self, e: usize, schema: &str) -> Result<(Compiled, f64), (String, bool)> {
        let t0 = Instant::now();
        match e {
            0 => {
                let m = self
                    .ours
                    .create_matcher(&ours::GrammarSource::JsonSchema(schema.to_string()))
                    .map_err(|e| (e.to_string(), false))?;
                // The first mask on a copy (copy not timed): the replays start from `m`.
                let el = t0.elapsed();
                let mut first = m.deep_clone();
                let t1 = Instant::now();
                first.compute_mask().map_err(|e| (e.to_string(), false))?;
                Ok((Compiled::Ours(m), (el + t1.elapsed()).as_secs_f64() * 1e6))
            }
            1 => {
                let v: serde_json::Value =
                    serde_json::from_str(schema).map_err(|e| (e.to_string(), false))?;
                let g = ref_llg::api::TopLevelGrammar::from_json_schema(v);
                let p = self.llg.create_parser(g).map_err(|e| (e.to_string(), false))?;
                let m = ref_llg::Matcher::new(Ok(p));
                let el = t0.elapsed();
                let mut first = m.deep_clone();
                let t1 = Instant::now();
                first.compute_mask().map_err(|e| (e.to_string(), false))?;
                Ok((Compiled::Llg(m), (el + t1.elapsed()).as_secs_f64() * 1e6))
            }
            _ => {
                // Compiled in the worker process (its time, sent back); deserialized here, not
                // timed; then the matcher and the first mask, timed.
                let (secs, ser) = self.xgr.compile(schema, self.timeout)?;
                let cg = xgrammar::CompiledGrammar::deserialize_json(&ser, &self.xgr_info)
                    .map_err(|e| (format!("deserialize: {e}"), false))?;
                let cg = Arc::new(cg);
                let t1 = Instant::now();
                let mut m = xgrammar::GrammarMatcher::from_compiled_grammar(&cg, false);
                let mut bm = xgrammar::allocate_token_bitmask(1, self.words as i32 * 32);
                m.fill_next_token_bitmask(&mut bm, &[1, self.words as i64], 0)
                    .map_err(|e| (e.to_string(), false))?;
                Ok((Compiled::Xgr(cg), secs * 1e6 + t1.elapsed().as_secs_f64() * 1e6))
            }
        }
    }

    /// Replays `toks`; per-token times (µs) and whether the instance was accepted.
    fn replay(&self, c: &Compiled, toks: &[u32], deadline: Instant) -> Option<(Vec<f64>, bool)> {
        match c {
            Compiled::Ours(m0) => {
                let mut m = m0.deep_clone();
                let (times, ok) = timed(toks, deadline, |t| {
                    let t = ours::TokenId(t);
                    m.compute_mask().is_ok_and(|mask| mask.contains(t))
                        && m.consume_token(t).is_ok()
                })?;
                let eos = ours::TokenId(self.eos);
                Some((times, ok && m.compute_mask().is_ok_and(|mask| mask.contains(eos))))
            }
            Compiled::Llg(m0) => {
                let mut m = m0.deep_clone();
                let (times, ok) = timed(toks, deadline, |t| {
                    m.compute_mask().is_ok_and(|mask| mask.is_allowed(t))
                        && m.consume_token(t).is_ok()
                })?;
                let acc = ok
                    && m.compute_mask_or_eos()
                        .is_ok_and(|mask| self.llg_eos.iter().any(|&e| mask.is_allowed(e)));
                Some((times, acc))
            }
            Compiled::Xgr(cg) => {
                let mut m = xgrammar::GrammarMatcher::from_compiled_grammar(cg, false);
                let mut bm = vec![0i32; self.words];
                let shape = [1i64, self.words as i64];
                let mut allowed = |m: &mut xgrammar::GrammarMatcher, t: u32| {
                    m.fill_next_token_bitmask(&mut bm, &shape, 0).is_ok()
                        && (bm[t as usize / 32] >> (t % 32)) & 1 == 1
                };
                let (times, ok) =
                    timed(toks, deadline, |t| allowed(&mut m, t) && m.accept_token(t as i32))?;
                let acc = ok
                    && allowed(&mut m, self.eos)
                    && m.accept_token(self.eos as i32)
                    && m.is_terminated();
                Some((times, acc))
            }
        }
    }
}

/// Times `step` (one mask and one consume) over `toks`: `None` past the deadline, else the
/// per-token times (µs) and whether every step held (it stops at the first that does not).
fn timed(
    toks: &[u32],
    deadline: Instant,
    mut step: impl FnMut(u32) -> bool,
) -> Option<(Vec<f64>, bool)> {
    let mut times = Vec::with_capacity(toks.len());
    for &t in toks {
        if Instant::now() > deadline {
            return None;
        }
        let s = Instant::now();
        let ok = step(t);
        times.push(s.elapsed().as_secs_f64() * 1e6);
        if !ok {
            return Some((times, false));
        }
    }
    Some((times, true))
}

fn usage() -> ! {
    println!(
        "usage: four_way [--every K] [--limit N] [--timeout-s S] [--tokenizer tokenizer.json] [FILES_OR_DIRS...]\n\
         MaskBench, ours vs LLGuidance 1.9.1 vs xgrammar-rs 0.2.8 in one process (default: every 10th file of ../../shared/data/maskbench)"
    );
    std::process::exit(0)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--xgr-worker") {
        return xgr_worker(&argv[2..]);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut tok_path = manifest.join("../../shared/tokenizers/llama3.tokenizer.json");
    let (mut every, mut limit, mut timeout_s) = (10usize, usize::MAX, 20.0f64);
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--every" => every = val().parse::<usize>().unwrap_or_else(|_| usage()).max(1),
            "--limit" => limit = val().parse().unwrap_or_else(|_| usage()),
            "--timeout-s" => timeout_s = val().parse().unwrap_or_else(|_| usage()),
            "--tokenizer" => tok_path = val().into(),
            "-h" | "--help" => usage(),
            s if s.starts_with("--") => {
                eprintln!("unknown option {s}");
                std::process::exit(2)
            }
            s => inputs.push(s.into()),
        }
    }
    if inputs.is_empty() {
        inputs.push(manifest.join("../../shared/data/maskbench"));
    }
    if !tok_path.exists() || !inputs.iter().all(|p| p.exists()) {
        eprintln!("needs ../shared: the tokenizer or the MaskBench folder is missing");
        std::process::exit(2);
    }
    let files = args::collect_files(&inputs);
    let files: Vec<PathBuf> = files.into_iter().step_by(every).take(limit).collect();

    let tp = tok_path.display().to_string();
    let our_f = ours::ParserFactory::from_tokenizer_name(&tp)
        .expect("our factory")
        // Each schema compiled as new (a duplicate schema would find its grammar kept).
        .with_grammar_cache(0);
    let vocab = our_f.tokenizer().vocab().len();
    let eos = our_f.tokenizer().vocab().eos_tokens()[0].0;
    let bt =
        toktrie_hf_tokenizers::ByteTokenizer::from_file(&tok_path).expect("LLGuidance tokenizer");
    let hf_env = bt.into_tok_env(None).expect("LLGuidance TokEnv");
    let env: TokEnv = Arc::new(NoForceEnv(hf_env.clone()));
    let mut llg_f = ref_llg::ParserFactory::new_simple(&env).expect("LLGuidance factory");
    llg_f.quiet();
    let llg_eos = env.tok_trie().eos_tokens().to_vec();
    let hf = tokenizers::Tokenizer::from_file(&tok_path).expect("HF tokenizer");
    let xgr_info = xgrammar::TokenizerInfo::from_huggingface(&hf, Some(vocab), Some(&[eos as i32]))
        .expect("xgrammar-rs TokenizerInfo");
    let mut en = Engines {
        ours: our_f,
        llg: llg_f,
        llg_eos,
        xgr_info,
        eos,
        words: vocab.div_ceil(32),
        timeout: Duration::from_secs_f64(timeout_s),
        xgr: XgrWorker {
            args: vec![tp.clone(), vocab.to_string(), eos.to_string()],
            child: None,
            restarts: 0,
        },
    };
    println!(
        "# {} schemas (every {every}th), tokenizer {tp}: vocab {vocab}, EOS {eos}; ours, LLGuidance 1.9.1, xgrammar-rs {} (compile timeout {timeout_s} s)",
        files.len(),
        xgrammar::VERSION
    );

    // Per schema: the three runs.
    let mut all: Vec<(String, [Run; 3])> = Vec::new();
    let mut tok = TokCheck::default();
    let start = Instant::now();
    for (fi, path) in files.iter().enumerate() {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(doc) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        else {
            eprintln!("{file}: not JSON");
            continue;
        };
        let schema = doc.get("schema").cloned().unwrap_or(serde_json::Value::Null).to_string();
        let tests = doc.get("tests").and_then(|t| t.as_array()).cloned().unwrap_or_default();
        let insts: Vec<Instance> =
            instance::load_instances(&file, &tests, &en.ours, &hf_env, &mut tok);
        let mut runs: [Run; 3] = Default::default();
        for k in 0..3 {
            let e = (fi + k) % 3;
            let r = &mut runs[e];
            let before = live();
            let c = match en.compile(e, &schema) {
                Ok((c, us)) => {
                    r.ttfm_us = Some(us);
                    c
                }
                Err((msg, timeout)) => {
                    r.error = Some(msg);
                    r.timeout = timeout;
                    continue;
                }
            };
            r.mem_bytes = live() - before;
            let deadline = Instant::now() + REPLAY_LIMIT;
            for inst in &insts {
                let rep = en.replay(&c, &inst.tokens, deadline);
                let stop = rep.is_none();
                r.replays.push(rep);
                if stop {
                    break;
                }
            }
        }
        all.push((file, runs));
        if (fi + 1) % 50 == 0 || fi + 1 == files.len() {
            eprintln!("[{}/{}] {:.0} s", fi + 1, files.len(), start.elapsed().as_secs_f64());
        }
    }
    en.xgr.kill();
    println!("# xgrammar-rs worker restarts (time limits): {}", en.xgr.restarts - 1);
    report(&all, &files, &tests_of(&files), &tok);
}

/// Whether each instance of each file is valid (read again for the report).
fn tests_of(files: &[PathBuf]) -> Vec<Vec<bool>> {
    files
        .iter()
        .map(|p| {
            let doc: serde_json::Value = std::fs::read_to_string(p)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(serde_json::Value::Null);
            doc.get("tests")
                .and_then(|t| t.as_array())
                .map(|t| {
                    t.iter()
                        .map(|x| x.get("valid").and_then(|v| v.as_bool()).unwrap_or(true))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

fn row(name: &str, s: &Stats) -> String {
    format!(
        "{name:<24}{:>9}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}",
        s.n, s.mean, s.p50, s.p99, s.p999, s.max
    )
}

fn report(all: &[(String, [Run; 3])], _files: &[PathBuf], valid: &[Vec<bool>], tok: &TokCheck) {
    println!("# tokenizations checked {}, LLGuidance's differing {}", tok.checked, tok.mismatch);
    // Outcomes.
    println!(
        "\n{:<14}{:>9}{:>9}{:>9}{:>16}{:>18}{:>14}",
        "engine",
        "compiled",
        "errors",
        "timeouts",
        "valid rejected",
        "invalid accepted",
        "replay limit"
    );
    for e in 0..3 {
        let (mut c, mut err, mut to, mut vr, mut ia, mut lim) = (0, 0, 0, 0, 0, 0);
        for (fi, (_, runs)) in all.iter().enumerate() {
            let r = &runs[e];
            if r.ttfm_us.is_none() {
                if r.timeout {
                    to += 1
                } else {
                    err += 1
                }
                continue;
            }
            c += 1;
            for (i, rep) in r.replays.iter().enumerate() {
                let v = valid[fi].get(i).copied().unwrap_or(true);
                match rep {
                    None => lim += 1,
                    Some((_, acc)) if v && !acc => vr += 1,
                    Some((_, acc)) if !v && *acc => ia += 1,
                    _ => {}
                }
            }
        }
        println!("{:<14}{c:>9}{err:>9}{to:>9}{vr:>16}{ia:>18}{lim:>14}", ENGINES[e]);
    }
    // TTFM over schemas all three compiled.
    let both: Vec<&[Run; 3]> =
        all.iter().map(|(_, r)| r).filter(|r| r.iter().all(|x| x.ttfm_us.is_some())).collect();
    println!("\nTTFM (µs), {} schemas all three compiled", both.len());
    println!(
        "{:<24}{:>9}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "", "n", "mean", "p50", "p99", "p99.9", "max"
    );
    let ttfm: Vec<Stats> =
        (0..3).map(|e| stats(both.iter().map(|r| r[e].ttfm_us.unwrap()).collect())).collect();
    for e in 0..3 {
        println!("{}", row(ENGINES[e], &ttfm[e]));
    }
    ratios(&ttfm);
    // TBM over valid instances all three accepted.
    for (title, sel) in
        [("all instances", 0u8), ("first instance of each schema", 1), ("later instances", 2)]
    {
        let mut v: [Vec<f64>; 3] = Default::default();
        let mut n_inst = 0;
        for r in &both {
            let n = r.iter().map(|x| x.replays.len()).min().unwrap_or(0);
            for i in 0..n {
                if (sel == 1 && i != 0) || (sel == 2 && i == 0) {
                    continue;
                }
                let reps: Vec<&(Vec<f64>, bool)> =
                    r.iter().filter_map(|x| x.replays[i].as_ref()).collect();
                if reps.len() == 3
                    && reps.iter().all(|x| x.1)
                    && reps.iter().all(|x| x.0.len() == reps[0].0.len())
                {
                    n_inst += 1;
                    for e in 0..3 {
                        v[e].extend(reps[e].0.iter().copied());
                    }
                }
            }
        }
        println!("\nTBM (µs, mask + consume per token), {title}: {n_inst} valid instances all three accepted");
        println!(
            "{:<24}{:>9}{:>10}{:>10}{:>10}{:>10}{:>10}",
            "", "n", "mean", "p50", "p99", "p99.9", "max"
        );
        let s: Vec<Stats> = v.into_iter().map(stats).collect();
        for e in 0..3 {
            println!("{}", row(ENGINES[e], &s[e]));
        }
        ratios(&s);
    }
    // Memory.
    println!(
        "\nMemory added by compile + first matcher + first mask (KiB), schemas all three compiled"
    );
    println!(
        "{:<24}{:>9}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "", "n", "mean", "p50", "p99", "p99.9", "max"
    );
    for e in 0..3 {
        let s = stats(both.iter().map(|r| r[e].mem_bytes as f64 / 1024.0).collect());
        println!("{}", row(ENGINES[e], &s));
    }
    // Compile errors, first few per engine.
    for e in 1..3 {
        let mut errs: Vec<String> = all
            .iter()
            .filter(|(_, r)| r[e].ttfm_us.is_none() && r[0].ttfm_us.is_some())
            .map(|(f, r)| {
                format!(
                    "  {f}: {}",
                    r[e].error.as_deref().unwrap_or("").chars().take(120).collect::<String>()
                )
            })
            .collect();
        let n = errs.len();
        errs.truncate(5);
        println!("\n{} fails where ours compiles: {n}\n{}", ENGINES[e], errs.join("\n"));
    }
    let ours_only: Vec<&String> = all
        .iter()
        .filter(|(_, r)| r[0].ttfm_us.is_none() && r[1..].iter().any(|x| x.ttfm_us.is_some()))
        .map(|(f, _)| f)
        .collect();
    println!(
        "\nours fails where a peer compiles: {} {:?}",
        ours_only.len(),
        ours_only.iter().take(8).collect::<Vec<_>>()
    );
}

fn ratios(s: &[Stats]) {
    for (e, name) in [(1, "ours/llguidance"), (2, "ours/xgrammar-rs")] {
        let r = |a: f64, b: f64| a / b;
        println!(
            "{name:<24}{:>9}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
            "",
            r(s[0].mean, s[e].mean),
            r(s[0].p50, s[e].p50),
            r(s[0].p99, s[e].p99),
            r(s[0].p999, s[e].p999),
            r(s[0].max, s[e].max)
        );
    }
}
