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

mod classify;
#[path = "../../llguidance/src/bin/llg/plot.rs"]
mod plot;

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use llguidance as ours;
use ref_llg::toktrie::{SimpleVob, TokEnv, TokTrie, TokenizerEnv};

const TIME_LIMIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// Reference setup

/// Wraps the reference's HF tokenizer environment; `tokenize_is_canonical() == false` turns
/// off the reference's token forcing (its masks are then the full allowed sets).
struct NoForceEnv(TokEnv);

impl TokenizerEnv for NoForceEnv {
    fn tok_trie(&self) -> &TokTrie {
        self.0.tok_trie()
    }
    fn tokenize_bytes(&self, s: &[u8]) -> Vec<u32> {
        self.0.tokenize_bytes(s)
    }
    fn tokenize_bytes_special(&self, s: &[u8]) -> Vec<u32> {
        self.0.tokenize_bytes_special(s)
    }
    fn tokenize_is_canonical(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------------------------------------
// Results

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Pass,
    CompileError,
    ValidationError,
    InvalidationError,
    Timeout,
    Panic,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::CompileError => "compile_error",
            Outcome::ValidationError => "validation_error",
            Outcome::InvalidationError => "invalidation_error",
            Outcome::Timeout => "timeout",
            Outcome::Panic => "panic",
        }
    }
    const ALL: [Outcome; 6] = [
        Outcome::Pass,
        Outcome::CompileError,
        Outcome::ValidationError,
        Outcome::InvalidationError,
        Outcome::Timeout,
        Outcome::Panic,
    ];
}

/// One instance replayed by one engine.
#[derive(Default)]
struct Replay {
    /// Per-token mask + consume times (µs), for the tokens that were consumed or rejected.
    times: Vec<f64>,
    /// All tokens allowed and EOS allowed at the end.
    accepted: bool,
    /// Masks before each token and at the end (valid instances only; ours only).
    masks: Vec<Vec<u32>>,
    /// Trie nodes walked per mask (ours: bytes offered to the parser; the reference: its
    /// `trie_nodes_walked`), parallel to `times`.
    nodes: Vec<u64>,
}

struct EngineResult {
    outcome: Outcome,
    detail: String,
    ttfm_us: Option<f64>,
    /// Per instance; None for instances not run (compile error, timeout).
    replays: Vec<Option<Replay>>,
}

impl EngineResult {
    fn failed(outcome: Outcome, detail: String) -> EngineResult {
        EngineResult { outcome, detail, ttfm_us: None, replays: vec![] }
    }
}

fn set_outcome(r: &mut EngineResult, valid: bool, accepted: bool, i: usize) {
    if valid && !accepted {
        if matches!(r.outcome, Outcome::Pass | Outcome::InvalidationError) {
            r.outcome = Outcome::ValidationError;
            r.detail = format!("valid test {i} rejected");
        }
    } else if !valid && accepted && r.outcome == Outcome::Pass {
        r.outcome = Outcome::InvalidationError;
        r.detail = format!("invalid test {i} accepted");
    }
}

struct Instance {
    valid: bool,
    tokens: Vec<u32>,
}

/// Disagreement bookkeeping.
#[derive(Default)]
struct Agreement {
    steps_compared: u64,
    /// Steps where the non-EOS allowed sets differ.
    set_diffs: u64,
    /// Steps where "EOS allowed" differs.
    eos_diffs: u64,
    /// Instances with at least one difference.
    instances_with_diff: u64,
    /// Valid instances where one engine stopped producing masks before the other.
    length_diffs: u64,
    /// This file's differing steps and mask-count differences (sorted into classes and
    /// written out after the file).
    cur: Vec<StepDiff>,
    cur_len: Vec<(usize, usize, usize)>,
    /// Steps compared in this file (instance, step).
    cur_compared: std::collections::HashSet<(usize, usize)>,
}

/// One step where the allowed sets differ.
struct StepDiff {
    inst: usize,
    step: usize,
    n_tokens: usize,
    n_ours: usize,
    n_ref: usize,
    eos_ours: bool,
    eos_ref: bool,
    only_ours: Vec<u32>,
    only_ref: Vec<u32>,
}

// ---------------------------------------------------------------------------------------------
// Our engine

fn run_ours(
    f: &ours::ParserFactory,
    schema_text: &str,
    insts: &[Instance],
    record_masks: bool,
) -> EngineResult {
    let t0 = Instant::now();
    let m0 = match f.create_matcher(&ours::GrammarSource::JsonSchema(schema_text.to_string())) {
        Ok(m) => m,
        Err(e) => return EngineResult::failed(Outcome::CompileError, e.to_string()),
    };
    let ttfm = t0.elapsed().as_secs_f64() * 1e6;
    let deadline = t0 + TIME_LIMIT;
    let eos: Vec<ours::TokenId> = f.tokenizer().vocab().eos_tokens().to_vec();
    let mut r = EngineResult {
        outcome: Outcome::Pass,
        detail: String::new(),
        ttfm_us: Some(ttfm),
        replays: Vec::new(),
    };
    for (i, inst) in insts.iter().enumerate() {
        let mut m = m0.deep_clone();
        let mut rep = Replay::default();
        let keep = record_masks && inst.valid;
        let mut ok = true;
        let mut timed_out = false;
        for &t in &inst.tokens {
            if Instant::now() > deadline {
                timed_out = true;
                break;
            }
            let t = ours::TokenId(t);
            let n0 = m.parser_stats().bytes_pushed;
            let s = Instant::now();
            let mask = m.compute_mask();
            let mut el = s.elapsed();
            rep.nodes.push(m.parser_stats().bytes_pushed - n0);
            let mask = match mask {
                Ok(mask) => mask,
                Err(_) => {
                    rep.times.push(el.as_secs_f64() * 1e6);
                    ok = false;
                    break;
                }
            };
            if keep {
                rep.masks.push(mask.as_words().to_vec());
            }
            let s = Instant::now();
            let good = mask.contains(t) && m.consume_token(t).is_ok();
            el += s.elapsed();
            rep.times.push(el.as_secs_f64() * 1e6);
            if !good {
                ok = false;
                break;
            }
        }
        if timed_out {
            r.outcome = Outcome::Timeout;
            r.detail = format!("time limit of {} s", TIME_LIMIT.as_secs());
            r.replays.push(None);
            break;
        }
        if ok {
            match m.compute_mask() {
                Ok(mask) => {
                    rep.accepted = eos.iter().any(|&e| mask.contains(e));
                    if keep {
                        rep.masks.push(mask.as_words().to_vec());
                    }
                }
                Err(_) => rep.accepted = false,
            }
        }
        set_outcome(&mut r, inst.valid, rep.accepted, i);
        r.replays.push(Some(rep));
    }
    r
}

// ---------------------------------------------------------------------------------------------
// The reference

struct RefCtx<'a> {
    factory: &'a ref_llg::ParserFactory,
    trie: &'a TokTrie,
    our_eos: &'a [u32],
}

fn words_of(v: &SimpleVob) -> &[u32] {
    v.as_slice()
}

fn bit(words: &[u32], i: u32) -> bool {
    words.get((i / 32) as usize).is_some_and(|w| w >> (i % 32) & 1 == 1)
}

#[allow(clippy::too_many_arguments)]
fn compare_masks(
    ctx: &RefCtx,
    inst: usize,
    step: usize,
    ours_w: &[u32],
    ref_w: &[u32],
    n_tokens: usize,
    agr: &mut Agreement,
    had_diff: &mut bool,
) {
    agr.steps_compared += 1;
    agr.cur_compared.insert((inst, step));
    let mut eos_set: Vec<u32> = ctx.our_eos.to_vec();
    for &e in ctx.trie.eos_tokens() {
        if !eos_set.contains(&e) {
            eos_set.push(e);
        }
    }
    let n = ours_w.len().max(ref_w.len());
    let mut only_ours = Vec::new();
    let mut only_ref = Vec::new();
    let (mut n_ours, mut n_ref) = (0usize, 0usize);
    for wi in 0..n {
        let a = ours_w.get(wi).copied().unwrap_or(0);
        let b = ref_w.get(wi).copied().unwrap_or(0);
        n_ours += a.count_ones() as usize;
        n_ref += b.count_ones() as usize;
        let mut d = a ^ b;
        while d != 0 {
            let bi = d.trailing_zeros();
            d &= d - 1;
            let id = wi as u32 * 32 + bi;
            if eos_set.contains(&id) {
                continue;
            }
            if a >> bi & 1 == 1 {
                only_ours.push(id);
            } else {
                only_ref.push(id);
            }
        }
    }
    let eos_ours = ctx.our_eos.iter().any(|&e| bit(ours_w, e));
    let eos_ref = ctx.trie.eos_tokens().iter().any(|&e| bit(ref_w, e));
    let set_diff = !only_ours.is_empty() || !only_ref.is_empty();
    let eos_diff = eos_ours != eos_ref;
    if set_diff {
        agr.set_diffs += 1;
    }
    if eos_diff {
        agr.eos_diffs += 1;
    }
    if set_diff || eos_diff {
        *had_diff = true;
        agr.cur.push(StepDiff {
            inst,
            step,
            n_tokens,
            n_ours,
            n_ref,
            eos_ours,
            eos_ref,
            only_ours,
            only_ref,
        });
    }
}

fn run_ref(
    ctx: &RefCtx,
    schema_text: &str,
    insts: &[Instance],
    ours_res: Option<&EngineResult>,
    agr: &mut Agreement,
) -> EngineResult {
    let t0 = Instant::now();
    // Same starting point as ours: the schema text.
    let grammar = match serde_json::from_str::<serde_json::Value>(schema_text) {
        Ok(v) => ref_llg::api::TopLevelGrammar::from_json_schema(v),
        Err(e) => return EngineResult::failed(Outcome::CompileError, e.to_string()),
    };
    let m0 = match ctx.factory.create_parser(grammar) {
        Ok(p) => ref_llg::Matcher::new(Ok(p)),
        Err(e) => return EngineResult::failed(Outcome::CompileError, e.to_string()),
    };
    let ttfm = t0.elapsed().as_secs_f64() * 1e6;
    if m0.is_error() {
        return EngineResult::failed(Outcome::CompileError, m0.get_error().unwrap_or_default());
    }
    let deadline = t0 + TIME_LIMIT;
    let eos: Vec<u32> = ctx.trie.eos_tokens().to_vec();
    let mut r = EngineResult {
        outcome: Outcome::Pass,
        detail: String::new(),
        ttfm_us: Some(ttfm),
        replays: Vec::new(),
    };
    for (i, inst) in insts.iter().enumerate() {
        let mut m = m0.deep_clone();
        let mut rep = Replay::default();
        let our_masks: Option<&[Vec<u32>]> = if inst.valid {
            ours_res
                .and_then(|o| o.replays.get(i))
                .and_then(|o| o.as_ref())
                .map(|o| o.masks.as_slice())
        } else {
            None
        };
        let mut had_diff = false;
        let mut n_ref_masks = 0usize;
        let mut ok = true;
        let mut timed_out = false;
        for (step, &t) in inst.tokens.iter().enumerate() {
            if Instant::now() > deadline {
                timed_out = true;
                break;
            }
            let s = Instant::now();
            let mask = m.compute_mask();
            let mut el = s.elapsed();
            rep.nodes.push(m.last_step_stats().map_or(0, |s| s.trie_nodes_walked as u64));
            let mask = match mask {
                Ok(mask) => mask,
                Err(_) => {
                    rep.times.push(el.as_secs_f64() * 1e6);
                    ok = false;
                    break;
                }
            };
            n_ref_masks += 1;
            if let Some(om) = our_masks.and_then(|v| v.get(step)) {
                compare_masks(
                    ctx,
                    i,
                    step,
                    om,
                    words_of(&mask),
                    inst.tokens.len(),
                    agr,
                    &mut had_diff,
                );
            }
            let s = Instant::now();
            let good = mask.is_allowed(t) && m.consume_token(t).is_ok();
            el += s.elapsed();
            rep.times.push(el.as_secs_f64() * 1e6);
            if !good {
                ok = false;
                break;
            }
        }
        if timed_out {
            r.outcome = Outcome::Timeout;
            r.detail = format!("time limit of {} s", TIME_LIMIT.as_secs());
            r.replays.push(None);
            break;
        }
        if ok {
            // A stopped matcher (grammar complete) allows only EOS.
            if let Ok(mask) = m.compute_mask_or_eos() {
                rep.accepted = eos.iter().any(|&e| mask.is_allowed(e));
                n_ref_masks += 1;
                let step = inst.tokens.len();
                if let Some(om) = our_masks.and_then(|v| v.get(step)) {
                    compare_masks(
                        ctx,
                        i,
                        step,
                        om,
                        words_of(&mask),
                        inst.tokens.len(),
                        agr,
                        &mut had_diff,
                    );
                }
            }
        }
        if let Some(om) = our_masks {
            if om.len() != n_ref_masks {
                agr.length_diffs += 1;
                had_diff = true;
                agr.cur_len.push((i, om.len(), n_ref_masks));
            }
        }
        if had_diff {
            agr.instances_with_diff += 1;
        }
        set_outcome(&mut r, inst.valid, rep.accepted, i);
        r.replays.push(Some(rep));
    }
    r
}

// ---------------------------------------------------------------------------------------------
// Sorting disagreements into the documented classes

/// Disagreements sorted into classes, over the whole run.
#[derive(Default)]
struct Sorted {
    /// Per class: steps with at least one token of the class, tokens of the class.
    steps: std::collections::BTreeMap<classify::Class, u64>,
    tokens: std::collections::BTreeMap<classify::Class, u64>,
    /// Steps (and mask-count differences) with an unexplained token or an EOS difference.
    unexplained_steps: u64,
    unexplained_files: std::collections::BTreeSet<String>,
    /// Mask-count differences, per class of the token one engine rejected.
    length: std::collections::BTreeMap<classify::Class, u64>,
    lines: Vec<String>,
}

/// The schema as we read it in a draft-04..07 document: `$ref` replaces its siblings (the
/// sibling `definitions`/`$defs` are kept: they hold `$ref` targets, not assertions), and in
/// drafts 4 and 6 `if`/`then`/`else` are not keywords. None when the schema has neither.
fn as_we_read_it(schema: &serde_json::Value) -> Option<serde_json::Value> {
    let draft = schema.get("$schema").and_then(|v| v.as_str()).unwrap_or("");
    let old = ["draft-04", "draft-06", "draft-07"].iter().any(|d| draft.contains(d));
    if !old {
        return None;
    }
    let no_if = !draft.contains("draft-07");
    fn go(v: &mut serde_json::Value, no_if: bool, changed: &mut bool) {
        match v {
            serde_json::Value::Object(m) => {
                if m.get("$ref").is_some_and(|r| r.is_string()) {
                    let before = m.len();
                    m.retain(|k, _| k == "$ref" || k == "definitions" || k == "$defs");
                    *changed |= m.len() != before;
                } else if no_if {
                    for k in ["if", "then", "else"] {
                        *changed |= m.remove(k).is_some();
                    }
                }
                for (_, x) in m.iter_mut() {
                    go(x, no_if, changed);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| go(x, no_if, changed)),
            _ => {}
        }
    }
    let mut s = schema.clone();
    let mut changed = false;
    go(&mut s, no_if, &mut changed);
    changed.then_some(s)
}

fn show_bytes(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace('\\', "\\\\").replace('\n', "\\n").replace('\t', "\\t")
}

#[allow(clippy::too_many_arguments)]
fn sort_file_diffs(
    ctx: &RefCtx,
    our_f: &ours::ParserFactory,
    file: &str,
    schema: &serde_json::Value,
    insts: &[Instance],
    ours_res: Option<&EngineResult>,
    agr: &mut Agreement,
    out: &mut Sorted,
) {
    use classify::{Class, Side};
    use std::collections::{HashMap, HashSet};
    let info = classify::SchemaInfo::new(schema);
    let vocab = our_f.tokenizer().vocab();
    // The reference replayed on the schema as we read it: a token whose difference goes away
    // there is a `$ref`-sibling difference.
    // (steps compared, per step: tokens only ours allow, tokens only the reference allows)
    type Replayed =
        (HashSet<(usize, usize)>, HashMap<(usize, usize), (HashSet<u32>, HashSet<u32>)>);
    let mut replay: Option<Replayed> = None;
    if let Some(s2) = as_we_read_it(schema) {
        let mut a2 = Agreement::default();
        let text2 = s2.to_string();
        let ok = catch_unwind(AssertUnwindSafe(|| {
            run_ref(ctx, &text2, insts, ours_res, &mut a2);
        }))
        .is_ok();
        if ok {
            let diffs = a2
                .cur
                .into_iter()
                .map(|d| {
                    (
                        (d.inst, d.step),
                        (d.only_ours.into_iter().collect(), d.only_ref.into_iter().collect()),
                    )
                })
                .collect();
            replay = Some((a2.cur_compared, diffs));
        }
    }
    let in_replay = |inst: usize, step: usize, t: u32, side: Side| -> bool {
        let Some((compared, diffs)) = &replay else { return true };
        if !compared.contains(&(inst, step)) {
            return true;
        }
        diffs.get(&(inst, step)).is_some_and(|(o, r)| match side {
            Side::Ours => o.contains(&t),
            Side::Ref => r.contains(&t),
        })
    };
    let prefix_of = |inst: usize, step: usize| -> Vec<u8> {
        let mut p = Vec::new();
        for &t in &insts[inst].tokens[..step.min(insts[inst].tokens.len())] {
            p.extend_from_slice(vocab.token_bytes(ours::TokenId(t)));
        }
        p
    };
    let mut buf = Vec::new();
    // Class of each differing token, per (instance, step).
    let mut token_class: HashMap<(usize, usize, u32), Class> = HashMap::new();
    for d in &agr.cur {
        let prefix = prefix_of(d.inst, d.step);
        let state = classify::scan_prefix(&prefix);
        let mut classes: std::collections::BTreeMap<Class, Vec<u32>> = Default::default();
        for (side, toks) in [(Side::Ours, &d.only_ours), (Side::Ref, &d.only_ref)] {
            for &t in toks {
                let c = if !in_replay(d.inst, d.step, t, side) {
                    Class::RefSiblings
                } else {
                    let tb = vocab.token_bytes(ours::TokenId(t));
                    classify::classify_token(&info, &state, &prefix, tb, side, &mut buf)
                };
                *out.tokens.entry(c).or_default() += 1;
                classes.entry(c).or_default().push(t);
                token_class.insert((d.inst, d.step, t), c);
            }
        }
        let eos_diff = d.eos_ours != d.eos_ref;
        if eos_diff {
            classes.entry(Class::Unexplained).or_default();
        }
        for c in classes.keys() {
            *out.steps.entry(*c).or_default() += 1;
        }
        let unexplained = classes.contains_key(&Class::Unexplained);
        if unexplained {
            out.unexplained_steps += 1;
            out.unexplained_files.insert(file.to_string());
        }
        let names: Vec<&str> = classes.keys().map(|c| c.name()).collect();
        // Show the unexplained tokens first.
        let show = |v: &[u32]| {
            let mut v: Vec<u32> = v.to_vec();
            v.sort_by_key(|t| token_class.get(&(d.inst, d.step, *t)) != Some(&Class::Unexplained));
            v.iter()
                .take(6)
                .map(|&t| format!("{t}:{}", ctx.trie.token_dbg(t)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.lines.push(format!(
            "{file}\tinstance {}\tstep {}/{}\tours {} ref {}\teos ours {} ref {}\t{}\tonly_ours {} [{}]\tonly_ref {} [{}]\tbefore ⟨{}⟩",
            d.inst,
            d.step,
            d.n_tokens,
            d.n_ours,
            d.n_ref,
            d.eos_ours,
            d.eos_ref,
            names.join(","),
            d.only_ours.len(),
            show(&d.only_ours),
            d.only_ref.len(),
            show(&d.only_ref),
            show_bytes(&prefix[prefix.len().saturating_sub(60)..]),
        ));
    }
    // A mask-count difference: one engine refused the instance's token at the last step both
    // answered; it is explained when that token's difference is.
    for &(inst, n_ours, n_ref) in &agr.cur_len {
        let k = n_ours.min(n_ref).saturating_sub(1);
        let c = insts[inst]
            .tokens
            .get(k)
            .and_then(|&t| token_class.get(&(inst, k, t)).copied())
            .unwrap_or(Class::Unexplained);
        *out.length.entry(c).or_default() += 1;
        if c == Class::Unexplained {
            out.unexplained_steps += 1;
            out.unexplained_files.insert(file.to_string());
        }
        out.lines.push(format!(
            "{file}\tinstance {inst}\tmasks produced: ours {n_ours} ref {n_ref} (of {} steps)\t{}",
            insts[inst].tokens.len() + 1,
            c.name()
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Stats {
    n: usize,
    mean: f64,
    p50: f64,
    p99: f64,
    p999: f64,
    max: f64,
}

fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let mean = if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    Stats {
        n: v.len(),
        mean,
        p50: pct(&v, 0.5),
        p99: pct(&v, 0.99),
        p999: pct(&v, 0.999),
        max: pct(&v, 1.0),
    }
}

fn stats_json(s: &Stats) -> serde_json::Value {
    serde_json::json!({"n": s.n, "mean": s.mean, "p50": s.p50, "p99": s.p99, "p999": s.p999, "max": s.max})
}

fn ratio(a: f64, b: f64) -> f64 {
    a / b
}

fn family(file: &str) -> String {
    let f = file.strip_suffix(".json").unwrap_or(file);
    if let Some(i) = f.find("---") {
        return f[..i].to_string();
    }
    match f.rsplit_once('_') {
        Some((a, b)) if b.chars().all(|c| c.is_ascii_digit()) => a.to_string(),
        _ => f.to_string(),
    }
}

type Row = (String, EngineResult, EngineResult);

/// The raw samples behind [`summarize`]: TTFM ours, theirs; TBM ours, theirs (µs).
fn samples(rows: &[&Row]) -> [Vec<f64>; 4] {
    let both: Vec<&&Row> =
        rows.iter().filter(|(_, o, r)| o.ttfm_us.is_some() && r.ttfm_us.is_some()).collect();
    let mut out: [Vec<f64>; 4] = Default::default();
    for (_, o, r) in &both {
        out[0].push(o.ttfm_us.unwrap());
        out[1].push(r.ttfm_us.unwrap());
        for (a, b) in o.replays.iter().zip(r.replays.iter()) {
            if let (Some(a), Some(b)) = (a, b) {
                if a.accepted && b.accepted && a.times.len() == b.times.len() {
                    out[2].extend(a.times.iter().copied());
                    out[3].extend(b.times.iter().copied());
                }
            }
        }
    }
    out
}

/// TTFM stats over schemas both compiled and TBM stats over valid instances both accepted.
fn summarize(rows: &[&Row]) -> (usize, Stats, Stats, Stats, Stats, usize) {
    let both: Vec<&&Row> =
        rows.iter().filter(|(_, o, r)| o.ttfm_us.is_some() && r.ttfm_us.is_some()).collect();
    let ttfm_o = stats(both.iter().map(|(_, o, _)| o.ttfm_us.unwrap()).collect());
    let ttfm_r = stats(both.iter().map(|(_, _, r)| r.ttfm_us.unwrap()).collect());
    let mut tbm_o = Vec::new();
    let mut tbm_r = Vec::new();
    let mut common = 0usize;
    for (_, o, r) in &both {
        for (a, b) in o.replays.iter().zip(r.replays.iter()) {
            if let (Some(a), Some(b)) = (a, b) {
                if a.accepted && b.accepted && a.times.len() == b.times.len() {
                    common += 1;
                    tbm_o.extend(a.times.iter().copied());
                    tbm_r.extend(b.times.iter().copied());
                }
            }
        }
    }
    (both.len(), ttfm_o, ttfm_r, stats(tbm_o), stats(tbm_r), common)
}

// ---------------------------------------------------------------------------------------------
// Driver

struct Args {
    limit: Option<usize>,
    every: usize,
    json: bool,
    tokenizer: PathBuf,
    out_dir: PathBuf,
    inputs: Vec<PathBuf>,
}

fn parse_args() -> Args {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        limit: None,
        every: 1,
        json: false,
        tokenizer: manifest.join("../../shared/tokenizers/llama3.tokenizer.json"),
        out_dir: manifest.join("out"),
        inputs: vec![],
    };
    let mut it = std::env::args().skip(1);
    let usage = "usage: peer-bench [--limit N] [--every K] [--json] [--tokenizer tokenizer.json] [--out-dir DIR] [FILES_OR_DIRS...]\n(default input: ../../shared/data/maskbench relative to the crate)";
    while let Some(x) = it.next() {
        let mut val = |name: &str| {
            it.next().unwrap_or_else(|| {
                eprintln!("{name} needs a value\n{usage}");
                std::process::exit(2)
            })
        };
        match x.as_str() {
            "--limit" => a.limit = Some(val("--limit").parse().expect("--limit N")),
            "--every" => a.every = val("--every").parse::<usize>().expect("--every K").max(1),
            "--json" => a.json = true,
            "--tokenizer" => a.tokenizer = val("--tokenizer").into(),
            "--out-dir" => a.out_dir = val("--out-dir").into(),
            "-h" | "--help" => {
                println!("{usage}");
                std::process::exit(0)
            }
            s if s.starts_with("--") => {
                eprintln!("unknown option {s}\n{usage}");
                std::process::exit(2)
            }
            s => a.inputs.push(s.into()),
        }
    }
    if a.inputs.is_empty() {
        a.inputs.push(manifest.join("../../shared/data/maskbench"));
    }
    a
}

fn collect_files(inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            v.sort();
            out.extend(v);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            eprintln!("{} does not exist (MaskBench data lives in ../shared)", p.display());
            std::process::exit(2);
        }
    }
    out
}

fn main() {
    let args = parse_args();
    let mut files = collect_files(&args.inputs);
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
    let our_f = ours::ParserFactory::from_tokenizer_name(&tok_path).expect("our factory");
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
    let mut tok_checked = 0u64;
    let mut tok_mismatch = 0u64;
    let mut tok_mismatch_lines: Vec<String> = Vec::new();
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
        let mut insts = Vec::new();
        for t in &tests {
            let valid = t.get("valid").and_then(|v| v.as_bool()).unwrap_or(true);
            let data = t.get("data").cloned().unwrap_or(serde_json::Value::Null);
            let s = serde_json::to_string(&data).unwrap();
            let toks: Vec<u32> = match our_f.tokenizer().tokenize(&s) {
                Ok(v) => v.iter().map(|t| t.0).collect(),
                Err(e) => {
                    eprintln!("{file}: cannot tokenize an instance: {e}");
                    continue;
                }
            };
            let rt = hf_env.tokenize(&s);
            tok_checked += 1;
            if rt != toks {
                tok_mismatch += 1;
                if tok_mismatch_lines.len() < 20 {
                    tok_mismatch_lines.push(format!(
                        "{file}: {:?}\n  ours {:?}\n  ref  {:?}",
                        s.chars().take(200).collect::<String>(),
                        toks,
                        rt
                    ));
                }
            }
            insts.push(Instance { valid, tokens: toks });
        }

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
            sort_file_diffs(
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

        let tb = |e: &EngineResult| {
            stats(e.replays.iter().flatten().flat_map(|r| r.times.iter().copied()).collect())
        };
        let (so, sr) = (tb(&o), tb(&r));
        let line = serde_json::json!({
            "file": file,
            "ours": {"outcome": o.outcome.name(), "detail": o.detail, "ttfm_us": o.ttfm_us, "tbm_us": stats_json(&so)},
            "ref": {"outcome": r.outcome.name(), "detail": r.detail, "ttfm_us": r.ttfm_us, "tbm_us": stats_json(&sr)},
        });
        writeln!(per_schema, "{line}").ok();
        // Per step (valid instances both replayed in full): time and trie nodes walked.
        for (i, (a, b)) in o.replays.iter().zip(&r.replays).enumerate() {
            let (Some(a), Some(b)) = (a, b) else { continue };
            if !insts[i].valid || a.times.len() != b.times.len() {
                continue;
            }
            let vocab = our_f.tokenizer().vocab();
            let mut text: Vec<u8> = Vec::new();
            for k in 0..a.times.len() {
                let tail = String::from_utf8_lossy(&text[text.len().saturating_sub(40)..])
                    .replace(['\t', '\n'], " ");
                if let Some(&t) = insts[i].tokens.get(k) {
                    text.extend_from_slice(vocab.token_bytes(ours::TokenId(t)));
                }
                writeln!(
                    steps_w,
                    "{file}\t{i}\t{k}\t{:.2}\t{:.2}\t{}\t{}\t{tail}",
                    a.times[k],
                    b.times[k],
                    a.nodes.get(k).copied().unwrap_or(0),
                    b.nodes.get(k).copied().unwrap_or(0)
                )
                .ok();
            }
        }
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

    // Disagreements and tokenization mismatches.
    let dis_path = args.out_dir.join("disagreements.tsv");
    let mut w = std::fs::File::create(&dis_path).expect("disagreements file");
    for l in &sorted.lines {
        writeln!(w, "{l}").ok();
    }
    let tok_path_out = args.out_dir.join("tokenization-mismatches.txt");
    std::fs::write(&tok_path_out, tok_mismatch_lines.join("\n")).ok();

    // Summary.
    let count = |which: usize, oc: Outcome| {
        results
            .iter()
            .filter(|(_, o, r)| if which == 0 { o.outcome == oc } else { r.outcome == oc })
            .count()
    };
    let all: Vec<&Row> = results.iter().collect();
    let (n_both, ttfm_o, ttfm_r, to, tr, common_instances) = summarize(&all);
    {
        let [a, b, c, d] = samples(&all);
        let svg = plot::cdf_svg(
            &format!("MaskBench, {} schemas both compiled: ours vs LLGuidance 1.9.1", a.len()),
            &[
                plot::Series { name: "ours", tbm_us: &c, ttfm_us: &a },
                plot::Series { name: "LLGuidance", tbm_us: &d, ttfm_us: &b },
            ],
        );
        std::fs::write(args.out_dir.join("plot.svg"), svg).expect("write plot.svg");
    }

    // Per family (MaskBench source data set).
    let mut fams: Vec<String> = results.iter().map(|(f, _, _)| family(f)).collect();
    fams.sort();
    fams.dedup();
    let mut fam_json = serde_json::Map::new();
    let mut fam_lines = vec![format!(
        "{:<24} {:>5} {:>5} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8}  {:<22} {:<22}",
        "family",
        "files",
        "both",
        "ttfm50 o/r",
        "ttfm99 o/r",
        "tbm mean",
        "tbm p50",
        "tbm p99",
        "p99.9",
        "ours ce/ve/ie/to",
        "ref ce/ve/ie/to"
    )];
    for fam in &fams {
        let rows: Vec<&Row> = results.iter().filter(|(f, _, _)| &family(f) == fam).collect();
        let (nb, a, b, c, d, _) = summarize(&rows);
        let oc = |which: usize| {
            let c = |x: Outcome| {
                rows.iter()
                    .filter(|(_, o, r)| if which == 0 { o.outcome == x } else { r.outcome == x })
                    .count()
            };
            format!(
                "{}/{}/{}/{}",
                c(Outcome::CompileError),
                c(Outcome::ValidationError),
                c(Outcome::InvalidationError),
                c(Outcome::Timeout) + c(Outcome::Panic)
            )
        };
        fam_lines.push(format!(
            "{:<24} {:>5} {:>5} {:>10.2} {:>10.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2}  {:<22} {:<22}",
            fam,
            rows.len(),
            nb,
            a.p50 / b.p50,
            a.p99 / b.p99,
            c.mean / d.mean,
            c.p50 / d.p50,
            c.p99 / d.p99,
            c.p999 / d.p999,
            oc(0),
            oc(1)
        ));
        fam_json.insert(
            fam.clone(),
            serde_json::json!({
                "files": rows.len(), "both_compiled": nb,
                "ours": {"ttfm_us": stats_json(&a), "tbm_us": stats_json(&c), "outcomes": oc(0)},
                "ref": {"ttfm_us": stats_json(&b), "tbm_us": stats_json(&d), "outcomes": oc(1)},
            }),
        );
    }
    std::fs::write(args.out_dir.join("families.txt"), fam_lines.join("\n") + "\n").ok();

    println!(
        "schemas {}  both compiled {}  wall {:.0} s",
        results.len(),
        n_both,
        start.elapsed().as_secs_f64()
    );
    for (name, which) in [("ours", 0), ("ref ", 1)] {
        let parts: Vec<String> =
            Outcome::ALL.iter().map(|&oc| format!("{} {}", oc.name(), count(which, oc))).collect();
        println!("{name}: {}", parts.join("  "));
    }
    println!(
        "TTFM µs (schemas both compiled: {}): ours p50 {:.0} p99 {:.0} | ref p50 {:.0} p99 {:.0} | ratio ours/ref p50 {:.2} p99 {:.2}",
        ttfm_o.n,
        ttfm_o.p50,
        ttfm_o.p99,
        ttfm_r.p50,
        ttfm_r.p99,
        ratio(ttfm_o.p50, ttfm_r.p50),
        ratio(ttfm_o.p99, ttfm_r.p99)
    );
    println!("TBM µs ({} tokens in {} valid instances both accepted):", to.n, common_instances);
    for (n, s) in [("ours", &to), ("ref ", &tr)] {
        println!(
            "  {n}: mean {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
            s.mean, s.p50, s.p99, s.p999, s.max
        );
    }
    println!(
        "  ratio ours/ref: mean {:.2}  p50 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}",
        ratio(to.mean, tr.mean),
        ratio(to.p50, tr.p50),
        ratio(to.p99, tr.p99),
        ratio(to.p999, tr.p999),
        ratio(to.max, tr.max)
    );
    println!(
        "tokenization: {} instances, {} where the reference's TokEnv tokenizes differently from ours (see {})",
        tok_checked,
        tok_mismatch,
        tok_path_out.display()
    );
    println!(
        "mask agreement: {} steps compared; {} steps with differing non-EOS sets, {} with differing EOS; {} valid instances with a mask-count difference; {} instances with any difference (see {})",
        agr.steps_compared,
        agr.set_diffs,
        agr.eos_diffs,
        agr.length_diffs,
        agr.instances_with_diff,
        dis_path.display()
    );
    let mut class_json = serde_json::Map::new();
    println!("mask differences by class (BENCHMARKS.md, deliberate differences): steps / tokens / mask-count differences");
    for c in classify::Class::ALL {
        let (st, tk, ln) = (
            sorted.steps.get(&c).copied().unwrap_or(0),
            sorted.tokens.get(&c).copied().unwrap_or(0),
            sorted.length.get(&c).copied().unwrap_or(0),
        );
        println!("  {:<18} {st:>8} {tk:>10} {ln:>4}", c.name());
        class_json.insert(
            c.name().into(),
            serde_json::json!({"steps": st, "tokens": tk, "length_diffs": ln}),
        );
    }
    println!(
        "unexplained (a token or EOS answer no documented difference accounts for): {} steps in {} files{}",
        sorted.unexplained_steps,
        sorted.unexplained_files.len(),
        if sorted.unexplained_files.is_empty() {
            String::new()
        } else {
            format!(
                " ({}{})",
                sorted.unexplained_files.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
                if sorted.unexplained_files.len() > 8 { ", ..." } else { "" }
            )
        }
    );
    println!(
        "per family (ratios ours/ref; outcomes compile/validation/invalidation/timeout+panic):"
    );
    for l in &fam_lines {
        println!("  {l}");
    }
    println!("per schema: {}", args.out_dir.join("schemas.jsonl").display());
    if args.json {
        let outcomes = |which| {
            let mut m = serde_json::Map::new();
            for oc in Outcome::ALL {
                m.insert(oc.name().into(), count(which, oc).into());
            }
            serde_json::Value::Object(m)
        };
        let j = serde_json::json!({
            "schemas": results.len(), "both_compiled": n_both,
            "ours": {"outcomes": outcomes(0), "ttfm_us": stats_json(&ttfm_o), "tbm_us": stats_json(&to)},
            "ref": {"outcomes": outcomes(1), "ttfm_us": stats_json(&ttfm_r), "tbm_us": stats_json(&tr)},
            "ratio_ours_over_ref": {
                "ttfm_p50": ratio(ttfm_o.p50, ttfm_r.p50), "ttfm_p99": ratio(ttfm_o.p99, ttfm_r.p99),
                "tbm_mean": ratio(to.mean, tr.mean), "tbm_p50": ratio(to.p50, tr.p50),
                "tbm_p99": ratio(to.p99, tr.p99), "tbm_p999": ratio(to.p999, tr.p999), "tbm_max": ratio(to.max, tr.max),
            },
            "families": fam_json,
            "tokenization": {"instances": tok_checked, "mismatches": tok_mismatch},
            "mask_agreement": {"steps": agr.steps_compared, "set_diffs": agr.set_diffs, "eos_diffs": agr.eos_diffs,
                "length_diffs": agr.length_diffs, "instances_with_diff": agr.instances_with_diff,
                "classes": class_json, "unexplained_steps": sorted.unexplained_steps,
                "unexplained_files": sorted.unexplained_files.len()},
        });
        println!("{j}");
    }
}
