//! `llg bench`: MaskBench replay (compile time per schema, mask + consume time per token,
//! outcome per schema). The contract is in ../shared/DESIGN.md.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use llguidance::{GrammarSource, Matcher, ParserFactory, TokenId, TokenSet};

use crate::Fail;

/// `llg bench` arguments.
#[derive(clap::Args)]
pub(crate) struct BenchArgs {
    /// The tokenizer (default: ../shared/tokenizers/llama3.tokenizer.json, when present).
    #[arg(long, value_name = "TOK")]
    tokenizer: Option<String>,
    /// End with the summary as one JSON object on the last line.
    #[arg(long)]
    json: bool,
    /// Write one CSV row per file (outcome, TTFM, masks, mean TBM, detail).
    #[arg(long, value_name = "FILE")]
    csv: Option<String>,
    /// Write the TBM and TTFM distributions (CDF, log scale) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<String>,
    /// How instances are serialized: compact (`{"a":1}`) or spaced (`{"a": 1}`).
    #[arg(long, value_enum, value_name = "S", default_value_t = Separators::Compact)]
    separators: Separators,
    /// Per-schema time limit in milliseconds (outcome `timeout` past it).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    time_limit_ms: u64,
    /// Schemas run in parallel.
    #[arg(long, value_name = "N", default_value = "1")]
    threads: std::num::NonZeroUsize,
    /// Unsliced masks.
    #[arg(long)]
    no_slicer: bool,
    /// Also compare every mask of every valid instance with the unsliced one (untimed); exit 1
    /// on a difference.
    #[arg(long)]
    check_slicer: bool,
    /// List the N slowest masks (file, instance, token, text before it).
    #[arg(long, value_name = "N")]
    slowest: Option<usize>,
    /// MaskBench files ({"schema": ..., "tests": [...]}), or directories of them (*.json).
    #[arg(value_name = "FILES_OR_DIRS", required = true)]
    inputs: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Separators {
    Compact,
    Spaced,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Pass,
    CompileError,
    ValidationError,
    InvalidationError,
    Timeout,
    /// Not a MaskBench file (unreadable, not JSON, or no `schema` / `tests`): not counted
    /// among the schemas.
    NotMaskBench,
}

/// What a MaskBench file looks like, for the message about files that are not.
const MASKBENCH_SHAPE: &str = r#"expected {"schema":..., "tests":[...]}"#;

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::CompileError => "compile_error",
            Outcome::ValidationError => "validation_error",
            Outcome::InvalidationError => "invalidation_error",
            Outcome::Timeout => "timeout",
            Outcome::NotMaskBench => "not_maskbench",
        }
    }
}

struct SchemaResult {
    file: String,
    outcome: Outcome,
    ttfm_us: Option<f64>,
    tbm_us: Vec<f64>,
    detail: String,
    /// `--check-slicer`: masks compared sliced vs unsliced, and the first difference.
    slice_checked: u64,
    slice_diff: Option<String>,
    /// The slowest mask of each valid instance: (µs, where and after what text).
    slowest: Vec<(f64, String)>,
    /// Instances replayed on the compiled schema: [valid, valid rejected, invalid, invalid
    /// accepted, valid rejected but accepted with its keys in schema order].
    instances: [u64; 5],
}

/// What one replay checks besides timing.
#[derive(Default)]
struct SliceCheck {
    compared: u64,
    diff: Option<String>,
}

fn collect_files(inputs: &[String]) -> Result<Vec<PathBuf>, Fail> {
    let mut out = Vec::new();
    for i in inputs {
        let p = Path::new(i);
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Fail::Usage(format!("cannot read {i}: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            v.sort();
            out.extend(v);
        } else if p.exists() {
            out.push(p.to_path_buf());
        } else {
            return Err(Fail::Usage(format!("{i} does not exist")));
        }
    }
    Ok(out)
}

fn serialize(v: &serde_json::Value, spaced: bool) -> String {
    if !spaced {
        return serde_json::to_string(v).expect("a Value serializes");
    }
    // ", " and ": " separators (Python's json.dumps default).
    struct Spaced;
    impl serde_json::ser::Formatter for Spaced {
        fn begin_array_value<W: ?Sized + Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first {
                Ok(())
            } else {
                w.write_all(b", ")
            }
        }
        fn begin_object_key<W: ?Sized + Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first {
                Ok(())
            } else {
                w.write_all(b", ")
            }
        }
        fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            w.write_all(b": ")
        }
    }
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Spaced);
    serde::Serialize::serialize(v, &mut ser).expect("a Value serializes");
    String::from_utf8(buf).expect("JSON is UTF-8")
}

/// Feeds `tokens` to a clone of `m0`, timing mask + consume per token. Returns whether all
/// were allowed and the end is accepting (EOS allowed).
fn replay(
    m0: &Matcher,
    tokens: &[TokenId],
    eos: &[TokenId],
    times: Option<&mut Vec<f64>>,
    deadline: Instant,
    mut check: Option<&mut SliceCheck>,
) -> Result<bool, ()> {
    let mut m = m0.deep_clone();
    let mut local = Vec::new();
    for (step, &t) in tokens.iter().enumerate() {
        if Instant::now() > deadline {
            return Err(());
        }
        // `--check-slicer`: the unsliced mask on a clone, before (and outside) the timing.
        let unsliced = check.as_ref().map(|_| {
            let mut u = m.deep_clone();
            u.set_slicing(false);
            u.compute_mask().ok()
        });
        let start = Instant::now();
        let mask = m.compute_mask();
        let ok = match &mask {
            Ok(mask) => mask.contains(t) && m.consume_token(t).is_ok(),
            Err(_) => false,
        };
        local.push(start.elapsed().as_secs_f64() * 1e6);
        if let (Some(c), Some(u)) = (check.as_deref_mut(), unsliced) {
            c.compared += 1;
            if c.diff.is_none() && u.as_ref() != mask.as_ref().ok() {
                let (a, b) = (mask.as_ref().ok(), u.as_ref());
                let only = |x: Option<&TokenSet>, y: Option<&TokenSet>| -> Vec<u32> {
                    match (x, y) {
                        (Some(x), Some(y)) => {
                            x.iter().filter(|t| !y.contains(*t)).take(5).map(|t| t.0).collect()
                        }
                        _ => vec![],
                    }
                };
                c.diff = Some(format!(
                    "step {step}: sliced and unsliced masks differ (only sliced: {:?}, only unsliced: {:?}; sliced: {}, unsliced: {})",
                    only(a, b),
                    only(b, a),
                    mask.as_ref().map_or_else(|e| format!("error {e}"), |m| format!("{} tokens", m.count())),
                    u.as_ref().map_or("an error".to_string(), |m| format!("{} tokens", m.count()))
                ));
            }
        }
        if !ok {
            return Ok(false);
        }
    }
    let end_ok = m.compute_mask().is_ok_and(|mask| eos.iter().any(|&e| mask.contains(e)));
    if let Some(t) = times {
        t.extend(local);
    }
    Ok(end_ok)
}

fn run_schema(
    f: &ParserFactory,
    path: &Path,
    spaced: bool,
    limit: Duration,
    check_slicer: bool,
) -> SchemaResult {
    let file = path.display().to_string();
    let fail = |outcome, detail: String| SchemaResult {
        file: file.clone(),
        outcome,
        ttfm_us: None,
        tbm_us: vec![],
        detail,
        slice_checked: 0,
        slice_diff: None,
        slowest: vec![],
        instances: [0; 5],
    };
    let not_maskbench = |why: String| fail(Outcome::NotMaskBench, why);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return not_maskbench(format!("cannot read: {e}")),
    };
    let doc: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return not_maskbench(format!(
                "not a MaskBench file (not JSON: {e}; {MASKBENCH_SHAPE})"
            ))
        }
    };
    let (Some(schema), Some(tests)) =
        (doc.get("schema").cloned(), doc.get("tests").and_then(|t| t.as_array()).cloned())
    else {
        return not_maskbench(format!("not a MaskBench file ({MASKBENCH_SHAPE})"));
    };
    let t0 = Instant::now();
    let m0 = match f.create_matcher(&GrammarSource::JsonSchema(schema.to_string())) {
        Ok(m) => m,
        Err(e) => return fail(Outcome::CompileError, e.to_string()),
    };
    let ttfm = t0.elapsed().as_secs_f64() * 1e6;
    let deadline = t0 + limit;
    let mut tbm = Vec::new();
    let mut check = SliceCheck::default();
    let mut slowest = Vec::new();
    let mut outcome = Outcome::Pass;
    let mut detail = String::new();
    let mut instances = [0u64; 5];
    let mut key_lists: Option<(Vec<Vec<String>>, Vec<String>)> = None;
    for (i, t) in tests.iter().enumerate() {
        let valid = t.get("valid").and_then(|v| v.as_bool()).unwrap_or(true);
        let data = t.get("data").cloned().unwrap_or(serde_json::Value::Null);
        let s = serialize(&data, spaced);
        let toks = match f.tokenizer().tokenize(&s) {
            Ok(t) => t,
            Err(e) => {
                detail = format!("test {i}: cannot tokenize: {e}");
                continue;
            }
        };
        let before = tbm.len();
        let r = replay(
            &m0,
            &toks,
            f.tokenizer().vocab().eos_tokens(),
            valid.then_some(&mut tbm),
            deadline,
            (check_slicer && valid).then_some(&mut check),
        );
        if let Some((k, &us)) = tbm[before..].iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) {
            let text = f.tokenizer().vocab().decode(&toks[..k]);
            let text = String::from_utf8_lossy(&text);
            let tail: String =
                text.chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
            slowest.push((us, format!("{file} test {i} token {k} after …{tail:?}")));
        }
        let mut key_order_only = false;
        if let Ok(ok) = r {
            let k = if valid { 0 } else { 2 };
            instances[k] += 1;
            if ok != valid {
                instances[k + 1] += 1;
            }
            if valid && !ok {
                // Is key order (fixed by the DESIGN) the only reason? Replay the instance
                // with each object's keys in the order the schema names them.
                // Three guesses: per object, the list naming most of its keys (at every
                // depth, or only at the top); and one order for the whole schema (first
                // mention wins).
                let (lists, merged) = key_lists.get_or_insert_with(|| {
                    let lists = schema_key_lists(&schema);
                    let mut seen = std::collections::HashSet::new();
                    let merged = lists
                        .iter()
                        .flatten()
                        .filter(|k| seen.insert(k.as_str()))
                        .cloned()
                        .collect();
                    (lists, merged)
                });
                let eos = f.tokenizer().vocab().eos_tokens();
                let guesses = [
                    reorder_keys(&data, lists, 0),
                    reorder_keys(&data, lists, 1),
                    reorder_keys(&data, std::slice::from_ref(merged), 0),
                ];
                key_order_only =
                    guesses.iter().map(|v| serialize(v, spaced)).filter(|t| *t != s).any(|t| {
                        f.tokenizer().tokenize(&t).is_ok_and(|toks| {
                            replay(&m0, &toks, eos, None, deadline, None) == Ok(true)
                        })
                    });
                instances[4] += key_order_only as u64;
            }
        }
        match r {
            Err(()) => {
                outcome = Outcome::Timeout;
                detail = format!("time limit of {} ms", limit.as_millis());
                break;
            }
            Ok(ok) if valid && !ok => {
                if outcome == Outcome::Pass || outcome == Outcome::InvalidationError {
                    outcome = Outcome::ValidationError;
                    let why =
                        if key_order_only { " (accepted with keys in schema order)" } else { "" };
                    detail = format!("valid test {i} rejected{why}");
                }
            }
            Ok(ok) if !valid && ok => {
                if outcome == Outcome::Pass {
                    outcome = Outcome::InvalidationError;
                    detail = format!("invalid test {i} accepted");
                }
            }
            Ok(_) => {}
        }
    }
    let slice_diff = check.diff.map(|d| format!("{file}: {d}"));
    SchemaResult {
        file,
        outcome,
        ttfm_us: Some(ttfm),
        tbm_us: tbm,
        detail,
        slice_checked: check.compared,
        slice_diff,
        slowest,
        instances,
    }
}

/// The key lists of a schema, for the key-order diagnosis: the keys of every `properties`
/// and of every `required`, in document order.
fn schema_key_lists(schema: &serde_json::Value) -> Vec<Vec<String>> {
    use serde_json::Value;
    let mut lists = Vec::new();
    let mut required = Vec::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(props)) = o.get("properties") {
                    lists.push(props.keys().cloned().collect());
                }
                if let Some(Value::Array(req)) = o.get("required") {
                    required
                        .push(req.iter().filter_map(|k| k.as_str().map(String::from)).collect());
                }
                stack.extend(o.values().rev());
            }
            Value::Array(a) => stack.extend(a.iter().rev()),
            _ => {}
        }
    }
    lists.extend(required);
    lists
}

/// `v` with the keys of every object in the order the schema would emit them, as far as a
/// guess goes: the keys named by the `properties` (or `required`) list that names most of
/// them, in its order, then the others in their order.
/// Only objects at a depth below `depth` are reordered (0: all).
fn reorder_keys(v: &serde_json::Value, lists: &[Vec<String>], depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(o) => {
            let best = lists.iter().max_by_key(|l| {
                (l.iter().filter(|k| o.contains_key(k.as_str())).count(), usize::MAX - l.len())
            });
            let rank =
                |k: &str| best.and_then(|l| l.iter().position(|x| x == k)).unwrap_or(usize::MAX);
            let mut kv: Vec<(&String, &Value)> = o.iter().collect();
            kv.sort_by_key(|(k, _)| rank(k));
            if depth == 1 {
                return Value::Object(
                    kv.into_iter().map(|(k, x)| (k.clone(), x.clone())).collect(),
                );
            }
            let d = depth.saturating_sub(1);
            Value::Object(
                kv.into_iter().map(|(k, x)| (k.clone(), reorder_keys(x, lists, d))).collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| reorder_keys(x, lists, depth)).collect()),
        _ => v.clone(),
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub(crate) fn bench(args: BenchArgs) -> Result<std::process::ExitCode, Fail> {
    let json = args.json;
    let spaced = args.separators == Separators::Spaced;
    let (csv, plot) = (args.csv, args.plot);
    let (no_slicer, check_slicer) = (args.no_slicer, args.check_slicer);
    let slowest_n = args.slowest;
    let threads = args.threads.get();
    let limit_ms = args.time_limit_ms;
    let tok = match args.tokenizer {
        Some(t) => t,
        None => {
            let d = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared/tokenizers/llama3.tokenizer.json");
            if d.exists() {
                d.display().to_string()
            } else {
                return Err(Fail::Usage("--tokenizer TOK is required (../shared/tokenizers/llama3.tokenizer.json not found)".into()));
            }
        }
    };
    let files = collect_files(&args.inputs)?;
    // Each schema compiled as new (a duplicate schema would find its grammar kept).
    let f = crate::factory(&tok)?.with_slicer(!no_slicer).with_grammar_cache(0);
    if check_slicer && f.slices().is_none() {
        return Err(Fail::Usage("--check-slicer needs the slicer (drop --no-slicer)".into()));
    }
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    // Schemas are handed out one at a time to `threads` workers; results keep file order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<SchemaResult>>> =
        files.iter().map(|_| std::sync::Mutex::new(None)).collect();
    // Workers with a main thread's stack (8 MiB), as Python's threads have: a compile runs on
    // the thread that asks for it, and falls back to a compile thread less often than on 2 MiB.
    std::thread::scope(|sc| -> Result<(), Fail> {
        for _ in 0..threads {
            let worker = std::thread::Builder::new().stack_size(8 << 20);
            let spawned = worker.spawn_scoped(sc, || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = files.get(i) else { break };
                let r = run_schema(&f, p, spaced, Duration::from_millis(limit_ms), check_slicer);
                *slots[i].lock().expect("no panics") = Some(r);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if tty && (n % 10 == 0 || n == files.len()) {
                    eprint!("\r[{n}/{}] {:.0} s", files.len(), start.elapsed().as_secs_f64());
                } else if !tty && n % 500 == 0 {
                    eprintln!("[{n}/{}] {:.0} s", files.len(), start.elapsed().as_secs_f64());
                }
            });
            spawned.map_err(|e| Fail::Usage(format!("cannot start a worker thread: {e}")))?;
        }
        Ok(())
    })?;
    if tty {
        eprintln!();
    }
    let results: Vec<SchemaResult> = slots
        .into_iter()
        .map(|s| s.into_inner().expect("no panics").expect("every file ran"))
        .collect();
    // Per file, on stderr: files that could not be benchmarked, and why.
    for r in &results {
        match r.outcome {
            Outcome::NotMaskBench => eprintln!("{}: {}", r.file, r.detail),
            Outcome::CompileError => {
                let why = r.detail.split_whitespace().collect::<Vec<_>>().join(" ");
                eprintln!("{}: compile error: {why}", r.file)
            }
            _ => {}
        }
    }
    if let Some(path) = csv {
        let mut w = std::fs::File::create(&path)
            .map_err(|e| Fail::Usage(format!("cannot write {path}: {e}")))?;
        writeln!(w, "file,outcome,ttfm_us,masks,tbm_mean_us,detail").ok();
        for r in &results {
            let mean = if r.tbm_us.is_empty() {
                0.0
            } else {
                r.tbm_us.iter().sum::<f64>() / r.tbm_us.len() as f64
            };
            writeln!(
                w,
                "{},{},{},{},{:.2},{:?}",
                r.file,
                r.outcome.name(),
                r.ttfm_us.map_or(String::new(), |t| format!("{t:.1}")),
                r.tbm_us.len(),
                mean,
                r.detail
            )
            .ok();
        }
    }
    let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
    let mut ttfm: Vec<f64> = results.iter().filter_map(|r| r.ttfm_us).collect();
    ttfm.sort_by(f64::total_cmp);
    let mut tbm: Vec<f64> = results.iter().flat_map(|r| r.tbm_us.iter().copied()).collect();
    tbm.sort_by(f64::total_cmp);
    let mean = if tbm.is_empty() { 0.0 } else { tbm.iter().sum::<f64>() / tbm.len() as f64 };
    let not_maskbench = count(Outcome::NotMaskBench);
    let schemas = results.len() - not_maskbench;
    println!("schemas {}  compiled {}  compile_errors {}  validation_errors {}  invalidation_errors {}  timeouts {}  pass {}  not_maskbench {}",
        schemas, ttfm.len(), count(Outcome::CompileError), count(Outcome::ValidationError),
        count(Outcome::InvalidationError), count(Outcome::Timeout), count(Outcome::Pass), not_maskbench);
    let inst = results.iter().fold([0u64; 5], |mut a, r| {
        for (x, y) in a.iter_mut().zip(r.instances) {
            *x += y;
        }
        a
    });
    let share = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!(
        "instances of compiled schemas: valid {} ({} rejected, {:.2}%; {} of them accepted with keys in schema order, other {:.2}%)  invalid {} ({} accepted, {:.2}%)",
        inst[0],
        inst[1],
        share(inst[1], inst[0]),
        inst[4],
        share(inst[1] - inst[4], inst[0]),
        inst[2],
        inst[3],
        share(inst[3], inst[2])
    );
    println!(
        "TTFM µs: p50 {:.0}  p90 {:.0}  p99 {:.0}  max {:.0}",
        pct(&ttfm, 0.5),
        pct(&ttfm, 0.9),
        pct(&ttfm, 0.99),
        pct(&ttfm, 1.0)
    );
    println!(
        "TBM µs ({} masks): mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
        tbm.len(),
        mean,
        pct(&tbm, 0.5),
        pct(&tbm, 0.9),
        pct(&tbm, 0.99),
        pct(&tbm, 0.999),
        pct(&tbm, 1.0)
    );
    let slice_checked: u64 = results.iter().map(|r| r.slice_checked).sum();
    let slice_diffs: Vec<&String> = results.iter().filter_map(|r| r.slice_diff.as_ref()).collect();
    if check_slicer {
        println!(
            "slicer check: {slice_checked} masks compared sliced vs unsliced, {} schemas differ",
            slice_diffs.len()
        );
        for d in slice_diffs.iter().take(20) {
            println!("  {d}");
        }
    }
    if let Some(n) = slowest_n {
        let mut all: Vec<&(f64, String)> = results.iter().flat_map(|r| &r.slowest).collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0));
        println!("slowest masks (the slowest of each instance, top {n}):");
        for (us, what) in all.into_iter().take(n) {
            println!("  {us:>10.1} µs  {what}");
        }
    }
    if let Some(path) = &plot {
        let title = format!(
            "llg bench: {} schemas, {} masks ({}, slicer {})",
            schemas,
            tbm.len(),
            f.tokenizer().vocab().name(),
            if no_slicer { "off" } else { "on" }
        );
        let svg = crate::plot::cdf_svg(
            &title,
            &[crate::plot::Series { name: "ours", tbm_us: &tbm, ttfm_us: &ttfm }],
        );
        std::fs::write(path, svg).map_err(|e| Fail::Usage(format!("cannot write {path}: {e}")))?;
        eprintln!("plot written to {path}");
    }
    if json {
        let j = serde_json::json!({
            "slicer": !no_slicer, "threads": threads,
            "slice_checked": check_slicer.then_some(slice_checked),
            "slice_diffs": check_slicer.then_some(slice_diffs.len()),
            "schemas": schemas, "not_maskbench": not_maskbench, "compiled": ttfm.len(), "compile_errors": count(Outcome::CompileError),
            "validation_errors": count(Outcome::ValidationError), "invalidation_errors": count(Outcome::InvalidationError),
            "timeouts": count(Outcome::Timeout), "masks": tbm.len(),
            "instances": {"valid": inst[0], "valid_rejected": inst[1], "valid_rejected_key_order": inst[4], "invalid": inst[2], "invalid_accepted": inst[3]},
            "ttfm_us": {"p50": pct(&ttfm, 0.5), "p90": pct(&ttfm, 0.9), "p99": pct(&ttfm, 0.99), "max": pct(&ttfm, 1.0)},
            "tbm_us": {"mean": mean, "p50": pct(&tbm, 0.5), "p90": pct(&tbm, 0.9), "p99": pct(&tbm, 0.99), "p999": pct(&tbm, 0.999), "max": pct(&tbm, 1.0)},
        });
        println!("{j}");
    }
    if ttfm.is_empty() {
        eprintln!(
            "llg bench: nothing was benchmarked: none of the {} files compiled ({not_maskbench} not MaskBench files, {} compile errors)",
            results.len(),
            count(Outcome::CompileError)
        );
        return Ok(std::process::ExitCode::from(1));
    }
    if !slice_diffs.is_empty() {
        return Ok(std::process::ExitCode::from(1));
    }
    Ok(std::process::ExitCode::SUCCESS)
}
