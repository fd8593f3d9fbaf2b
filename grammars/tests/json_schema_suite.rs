//! JSON-Schema-Test-Suite (draft 2020-12, core and optional/format) against a checked-in
//! baseline, `tests/json_schema/baseline.json`: per file, the counts of passed, unsupported
//! (the schema does not compile), wrongly rejected and wrongly accepted instances. Fewer
//! passed in a file, or any wrongly accepted instance, fails; improvements are printed.
//! `UPDATE_BASELINE=1` rewrites the baseline. Skipped (and passing) when
//! `../shared/data/json-schema-test-suite` is absent.
//!
//! The `optional/format/` files test formats as assertions (the format-assertion
//! vocabulary): they run with `x-guidance` `strict_formats`, so that a format we leave as an
//! annotation is counted unsupported rather than wrongly accepting its invalid instances;
//! `unknown.json` excepted, which checks that an unknown format is ignored.
//!
//! MaskBench (`../shared/data/maskbench`) is long: it runs with `JSON_SCHEMA_MASKBENCH=1`
//! (optionally `=N` for the first N files), reporting compile rate and instance errors.

#[path = "json_schema/common.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::Checker;
use serde_json::Value;

/// Files not run, with the reason.
const SKIP: &[(&str, &str)] = &[
    ("refRemote.json", "needs remote references (http://localhost:1234)"),
    ("optional/cross-draft.json", "needs remote metaschemas of other drafts"),
    ("vocabulary.json", "needs a remote metaschema (http://localhost:1234)"),
    ("optional/format-assertion.json", "needs a remote metaschema (http://localhost:1234)"),
];

#[derive(Default, Clone, Copy, Debug, PartialEq)]
struct Counts {
    passed: u32,
    unsupported: u32,
    wrongly_rejected: u32,
    wrongly_accepted: u32,
}

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/json-schema-test-suite/tests/draft2020-12")
}

fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["", "optional/", "optional/format/"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else { continue };
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .map(|n| format!("{sub}{n}"))
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

/// Whether a file runs with `strict_formats` (see the module doc).
fn asserts_formats(file: &str) -> bool {
    file.starts_with("optional/format/") && file != "optional/format/unknown.json"
}

/// `schema` with `x-guidance` `strict_formats` set (a boolean schema unchanged).
fn with_strict_formats(schema: &Value) -> Value {
    let mut s = schema.clone();
    if let Value::Object(m) = &mut s {
        let x = m.entry("x-guidance").or_insert_with(|| serde_json::json!({}));
        x["strict_formats"] = Value::Bool(true);
    }
    s
}

fn run_file(path: &Path, strict_formats: bool) -> (Counts, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("readable");
    let groups: Vec<Value> = serde_json::from_str(&text).expect("a JSON array");
    let mut c = Counts::default();
    let mut accepted = Vec::new();
    for g in &groups {
        let tests = g["tests"].as_array().cloned().unwrap_or_default();
        let schema =
            if strict_formats { with_strict_formats(&g["schema"]) } else { g["schema"].clone() };
        let checker = std::panic::catch_unwind(|| Checker::new(&schema));
        let checker = match checker {
            Ok(Ok(ch)) => ch,
            Ok(Err(e)) => {
                if std::env::var("JSON_SCHEMA_DEBUG").is_ok() {
                    println!("  unsupported: {}: {e}", g["description"]);
                }
                c.unsupported += tests.len() as u32;
                continue;
            }
            Err(_) => {
                c.unsupported += tests.len() as u32;
                continue;
            }
        };
        for t in &tests {
            let valid = t["valid"].as_bool().unwrap_or(false);
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                checker.accepts_value(&t["data"])
            }))
            .unwrap_or(false);
            match (valid, ok) {
                (true, true) | (false, false) => c.passed += 1,
                (true, false) => {
                    if std::env::var("JSON_SCHEMA_DEBUG").is_ok() {
                        println!(
                            "  rejected: {} / {}: {}",
                            g["description"], t["description"], t["data"]
                        );
                    }
                    c.wrongly_rejected += 1
                }
                (false, true) => {
                    c.wrongly_accepted += 1;
                    accepted.push(format!(
                        "{} / {}: {}",
                        g["description"], t["description"], t["data"]
                    ));
                }
            }
        }
    }
    (c, accepted)
}

#[test]
#[ignore = "needs ../shared/data/json-schema-test-suite; .ci/run runs it with --ignored when ../shared is there"]
fn json_schema_test_suite() {
    let dir = suite_dir();
    assert!(dir.exists(), "{} not found (../shared is needed for this test)", dir.display());
    let baseline_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/json_schema/baseline.json");
    // A missing or broken baseline fails: it would silently drop every per-file check.
    let baseline: BTreeMap<String, BTreeMap<String, u32>> =
        if std::env::var("UPDATE_BASELINE").is_ok() && !baseline_path.exists() {
            BTreeMap::new()
        } else {
            let text = std::fs::read_to_string(&baseline_path)
                .unwrap_or_else(|e| panic!("{}: {e}", baseline_path.display()));
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not valid JSON: {e}", baseline_path.display()))
        };
    assert!(!baseline.is_empty() || std::env::var("UPDATE_BASELINE").is_ok(), "empty baseline");
    let mut results: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    let mut total = Counts::default();
    let mut failures = Vec::new();
    for f in files(&dir) {
        if let Some((_, why)) = SKIP.iter().find(|(n, _)| *n == f) {
            println!("{f}: skipped, {why}");
            continue;
        }
        let t0 = std::time::Instant::now();
        let (c, accepted) = run_file(&dir.join(&f), asserts_formats(&f));
        if std::env::var("JSON_SCHEMA_DEBUG").is_ok() {
            println!("{f}: {:?}", t0.elapsed());
        }
        total.passed += c.passed;
        total.unsupported += c.unsupported;
        total.wrongly_rejected += c.wrongly_rejected;
        total.wrongly_accepted += c.wrongly_accepted;
        for a in &accepted {
            failures.push(format!("{f}: wrongly accepted: {a}"));
        }
        if let Some(b) = baseline.get(&f) {
            let bp = b.get("passed").copied().unwrap_or(0);
            if c.passed < bp {
                failures.push(format!("{f}: {} passed, baseline {bp}", c.passed));
            } else if c.passed > bp {
                println!("{f}: improved, {} passed, baseline {bp}", c.passed);
            }
        } else {
            println!("{f}: not in the baseline ({} passed)", c.passed);
        }
        let m = BTreeMap::from([
            ("passed".to_string(), c.passed),
            ("unsupported".to_string(), c.unsupported),
            ("wrongly_rejected".to_string(), c.wrongly_rejected),
            ("wrongly_accepted".to_string(), c.wrongly_accepted),
        ]);
        println!("{f}: {m:?}");
        results.insert(f, m);
    }
    let n = total.passed + total.unsupported + total.wrongly_rejected + total.wrongly_accepted;
    println!(
        "total: {} passed, {} unsupported, {} wrongly rejected, {} wrongly accepted, of {n}",
        total.passed, total.unsupported, total.wrongly_rejected, total.wrongly_accepted
    );
    if std::env::var("UPDATE_BASELINE").is_ok() {
        let text = serde_json::to_string_pretty(&results).expect("serializable");
        std::fs::write(&baseline_path, text + "\n").expect("baseline written");
    }
    assert!(failures.is_empty(), "regressions:\n{}", failures.join("\n"));
}

#[test]
#[ignore = "a long run over ../shared/data/maskbench: JSON_SCHEMA_MASKBENCH=N (N files, 1: all) cargo test --release -p grammars --test json_schema_suite maskbench -- --ignored"]
fn maskbench() {
    // Compiles run on 64 MB stacks in the product (`ParserFactory`); a test thread's 2 MB
    // overflowed on one of MaskBench's deepest schemas.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(maskbench_run)
        .expect("a test thread")
        .join()
        .expect("the MaskBench run");
}

fn maskbench_run() {
    let limit = std::env::var("JSON_SCHEMA_MASKBENCH").unwrap_or_else(|_| "1".into());
    let limit: usize = limit.parse().ok().filter(|&n| n > 1).unwrap_or(usize::MAX);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/maskbench");
    let rd = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut names: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    let (mut schemas, mut compiled, mut valid, mut invalid, mut rejected, mut accepted) =
        (0, 0, 0, 0, 0, 0);
    let mut errors: BTreeMap<String, u32> = BTreeMap::new();
    let mut bad = Vec::new();
    for p in names.iter().take(limit) {
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
        schemas += 1;
        let ch = match std::panic::catch_unwind(|| Checker::new(&v["schema"])) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                let msg = e.to_string();
                let key: String = msg.chars().take(60).collect();
                *errors.entry(key).or_default() += 1;
                continue;
            }
            Err(_) => {
                *errors.entry("panic".into()).or_default() += 1;
                continue;
            }
        };
        compiled += 1;
        for t in v["tests"].as_array().into_iter().flatten() {
            let is_valid = t["valid"].as_bool().unwrap_or(false);
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ch.accepts_value(&t["data"])
            }))
            .unwrap_or(false);
            if is_valid {
                valid += 1;
                if !ok {
                    rejected += 1;
                    bad.push(format!("rejected valid: {}", p.display()));
                }
            } else {
                invalid += 1;
                if ok {
                    accepted += 1;
                    bad.push(format!("ACCEPTED INVALID: {} {}", p.display(), t["data"]));
                }
            }
        }
    }
    let mut errs: Vec<_> = errors.into_iter().collect();
    errs.sort_by_key(|e| std::cmp::Reverse(e.1));
    for (e, n) in errs.iter().take(30) {
        println!("{n:5} {e}");
    }
    for b in &bad {
        println!("{b}");
    }
    println!(
        "maskbench: {compiled}/{schemas} schemas compile ({:.1}%); valid instances {valid}, wrongly rejected {rejected} ({:.2}%); invalid {invalid}, wrongly accepted {accepted}",
        100.0 * compiled as f64 / schemas.max(1) as f64,
        100.0 * rejected as f64 / valid.max(1) as f64
    );
    assert_eq!(accepted, 0, "invalid instances accepted");
}
