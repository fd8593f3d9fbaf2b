//! Output: per schema its `schemas.jsonl` line and its `steps.tsv` rows, written after each
//! file; at the end `disagreements.tsv`, `tokenization-mismatches.txt`, `plot.svg`,
//! `families.txt` and the summary on stdout (with `--json`, also as one JSON line).

use std::io::Write;
use std::time::Instant;

use llguidance as ours;

use crate::agreement::Agreement;
use crate::args::Args;
use crate::classify;
use crate::instance::{Instance, TokCheck};
use crate::outcome::{EngineResult, Outcome};
use crate::plot;
use crate::sort::Sorted;
use crate::stats::{ratio, samples, stats, stats_json, summarize, Row};

/// The `schemas.jsonl` line of one schema: both engines' outcome, TTFM and TBM statistics.
pub fn schema_line(file: &str, o: &EngineResult, r: &EngineResult) -> serde_json::Value {
    let tb = |e: &EngineResult| {
        stats(e.replays.iter().flatten().flat_map(|r| r.times.iter().copied()).collect())
    };
    let (so, sr) = (tb(o), tb(r));
    serde_json::json!({
        "file": file,
        "ours": {"outcome": o.outcome.name(), "detail": o.detail, "ttfm_us": o.ttfm_us, "tbm_us": stats_json(&so)},
        "ref": {"outcome": r.outcome.name(), "detail": r.detail, "ttfm_us": r.ttfm_us, "tbm_us": stats_json(&sr)},
    })
}

/// The `steps.tsv` rows of one schema: per step of every valid instance both engines
/// replayed in full, both times, both node counts and the last 40 bytes before the step.
pub fn write_steps(
    steps_w: &mut impl Write,
    file: &str,
    insts: &[Instance],
    o: &EngineResult,
    r: &EngineResult,
    our_f: &ours::ParserFactory,
) {
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
}

/// The MaskBench family (source data set) of a file name.
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

/// Everything written after the last file: the disagreement and tokenization files, the plot,
/// the per-family table and the summary.
pub fn write_summary(
    args: &Args,
    results: &[Row],
    agr: &Agreement,
    sorted: &Sorted,
    tok: &TokCheck,
    start: Instant,
) {
    // Disagreements and tokenization mismatches.
    let dis_path = args.out_dir.join("disagreements.tsv");
    let mut w = std::fs::File::create(&dis_path).expect("disagreements file");
    for l in &sorted.lines {
        writeln!(w, "{l}").ok();
    }
    let tok_path_out = args.out_dir.join("tokenization-mismatches.txt");
    std::fs::write(&tok_path_out, tok.lines.join("\n")).ok();

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
        tok.checked,
        tok.mismatch,
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
            "tokenization": {"instances": tok.checked, "mismatches": tok.mismatch},
            "mask_agreement": {"steps": agr.steps_compared, "set_diffs": agr.set_diffs, "eos_diffs": agr.eos_diffs,
                "length_diffs": agr.length_diffs, "instances_with_diff": agr.instances_with_diff,
                "classes": class_json, "unexplained_steps": sorted.unexplained_steps,
                "unexplained_files": sorted.unexplained_files.len()},
        });
        println!("{j}");
    }
}
