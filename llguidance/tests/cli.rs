//! The `llg` command line contract (DESIGN.md, "The CLI is the test surface"): exit codes
//! of `check`, the JSON lines and hashes of `masks`, `demo` output that parses, `--help` and
//! one-line usage errors, and `bench` on files that are not MaskBench files.

use std::path::PathBuf;
use std::process::{Command, Output};

const LLG: &str = env!("CARGO_BIN_EXE_llg");

/// A fresh temporary folder for one test, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("llg-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    fn file(&self, name: &str, contents: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, contents).expect("write temp file");
        p.to_str().expect("utf-8 temp path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn llg(args: &[&str]) -> Output {
    Command::new(LLG).args(args).output().expect("run llg")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("llg exited normally")
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn check_exit_codes() {
    let d = TempDir::new("check");
    let g = d.file("g.lark", "start: \"ab\" /[0-9]+/\n");
    let bad = d.file("bad.lark", "start: \"ab\n");
    let input = d.file("input.txt", "ab123");
    let check = |args: &[&str]| {
        let mut a = vec!["check"];
        a.extend_from_slice(args);
        llg(&a)
    };
    let cases: &[(&[&str], i32)] = &[
        (&["--grammar", &g, "--tokenizer", "bytes", "--text", "ab12"], 0),
        (&["--grammar", &g, "--text", "ab7"], 0),
        (&["--grammar", &g, "--tokenizer", "bytes", "--input", &input], 0),
        // Rejected at a byte, or a valid prefix that is not complete.
        (&["--grammar", &g, "--tokenizer", "bytes", "--text", "ax"], 1),
        (&["--grammar", &g, "--tokenizer", "bytes", "--text", "ab"], 1),
        (&["--grammar", &g, "--tokenizer", "bytes", "--text", "ab1x"], 1),
        (&["--grammar", &g, "--tokenizer", "bytes", "--text", ""], 1),
        // The grammar does not compile.
        (&["--grammar", &bad, "--tokenizer", "bytes", "--text", "ab1"], 2),
        // Usage errors.
        (&["--tokenizer", "bytes", "--text", "ab1"], 3),
        (&["--grammar", &g, "--tokenizer", "bytes"], 3),
        (&["--grammar", &g, "--text", "a", "--input", &input], 3),
        (&["--grammar", &g, "--text", "a", "--bogus"], 3),
        (&["--grammar", &g, "--tokenizer", "no-such-tokenizer", "--text", "ab1"], 3),
    ];
    for (args, expected) in cases {
        let out = check(args);
        assert_eq!(code(&out), *expected, "llg check {args:?}\n{}", show(&out));
    }
    let out = check(&["--grammar", &g, "--tokenizer", "bytes", "--text", "ax"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("byte 1"), "the rejection names the byte: {err}");
    assert_eq!(code(&llg(&["frobnicate"])), 3);
    assert_eq!(code(&llg(&[])), 3);
}

#[test]
fn check_prints_compile_warnings() {
    let d = TempDir::new("warnings");
    let s = d.file("s.json", r#"{"type": "string", "format": "foo"}"#);
    let strict = d.file(
        "strict.json",
        r#"{"type": "string", "format": "foo", "x-guidance": {"strict_formats": true}}"#,
    );
    let out = llg(&["check", "--grammar", &s, "--tokenizer", "bytes", "--text", "\"any\""]);
    assert_eq!(code(&out), 0, "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: unknown format \"foo\""), "{}", show(&out));
    let out = llg(&["check", "--grammar", &strict, "--tokenizer", "bytes", "--text", "\"any\""]);
    assert_eq!(code(&out), 2, "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("strict_formats"), "{}", show(&out));
}

/// FNV-1a 64 over ascending ids, 4 little-endian bytes each (DESIGN.md).
fn fnv1a(ids: &[u32]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for id in ids {
        for b in id.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[test]
fn fnv1a_reference_values() {
    // The empty set hashes to the offset basis.
    assert_eq!(fnv1a(&[]), "cbf29ce484222325");
    // Byte-wise FNV-1a of 0x61 0x00 0x00 0x00.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in [0x61u8, 0, 0, 0] {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    assert_eq!(fnv1a(&[0x61]), format!("{h:016x}"));
}

#[test]
fn masks_json_lines() {
    let d = TempDir::new("masks");
    let g = d.file("g.lark", "start: \"a\" /[bc]+/\n");
    // a, b, c, then 'x' (not allowed: the output stops there).
    let toks = d.file("toks.json", "[97, 98, 99, 120, 98]");
    let out = llg(&["masks", "--grammar", &g, "--tokenizer", "bytes", "--tokens", &toks]);
    assert_eq!(code(&out), 0, "{}", show(&out));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout.clone())
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    // The allowed sets, known from the grammar: EOS (256) once "a[bc]+" is complete.
    let expected: [(&[u32], u32, bool); 4] = [
        (&[97], 97, true),
        (&[98, 99], 98, true),
        (&[98, 99, 256], 99, true),
        (&[98, 99, 256], 120, false),
    ];
    assert_eq!(lines.len(), expected.len() + 1, "{}", show(&out));
    for (i, (allowed, token, ok)) in expected.iter().enumerate() {
        let want = serde_json::json!({
            "step": i, "allowed": allowed.len(), "hash": fnv1a(allowed), "token": token, "ok": ok
        });
        assert_eq!(lines[i], want, "step {i}");
    }
    assert_eq!(lines[4], serde_json::json!({"accepting": true}));

    // EOS consumed: the matcher stops and only EOS stays allowed.
    let toks = d.file("eos.json", "[97, 98, 256, 256]");
    let out = llg(&["masks", "--grammar", &g, "--tokenizer", "bytes", "--tokens", &toks]);
    assert_eq!(code(&out), 0, "{}", show(&out));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let last: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(last.len(), 5);
    assert_eq!(last[3]["hash"], fnv1a(&[256]));
    assert_eq!(last[3]["ok"], true);
    assert_eq!(last[4], serde_json::json!({"accepting": true}));

    // Usage: missing --tokenizer; a tokens file that is not a JSON array.
    let out = llg(&["masks", "--grammar", &g, "--tokens", &toks]);
    assert_eq!(code(&out), 3, "{}", show(&out));
    let bad = d.file("bad.json", "{\"a\": 1}");
    let out = llg(&["masks", "--grammar", &g, "--tokenizer", "bytes", "--tokens", &bad]);
    assert_eq!(code(&out), 3, "{}", show(&out));
}

#[test]
fn demo_with_grammar_file() {
    let d = TempDir::new("demo");
    // No leading zeros: `{"a": 039}` is not JSON.
    let g = d.file("g.lark", "start: \"{\\\"a\\\": \" NUM \"}\"\nNUM: /0|[1-9][0-9]{0,2}/\n");
    for seed in ["1", "2", "3"] {
        let out = llg(&["demo", "--grammar", &g, "--tokenizer", "bytes", "--seed", seed]);
        assert_eq!(code(&out), 0, "seed {seed}: {}", show(&out));
        let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
        let v: serde_json::Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("seed {seed}: not JSON ({e}): {}", show(&out)));
        let n = v["a"].as_u64().unwrap_or_else(|| panic!("seed {seed}: {v}"));
        assert!(n <= 999);
        assert_eq!(v.as_object().map(|o| o.len()), Some(1));
    }
}

/// The default demo: o200k and the built-in JSON Schema. Its output must be a JSON object
/// with the schema's four keys, and values that read naturally.
#[test]
fn default_demo_outputs_json() {
    for seed in ["1", "2", "3"] {
        let out = llg(&["demo", "--seed", seed]);
        assert_eq!(code(&out), 0, "seed {seed}: {}", show(&out));
        let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
        let v: serde_json::Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("seed {seed}: not JSON ({e}): {}", show(&out)));
        let o = v.as_object().unwrap_or_else(|| panic!("seed {seed}: not an object: {v}"));
        for k in ["name", "age", "languages", "admin"] {
            assert!(o.contains_key(k), "seed {seed}: no {k:?} in {v}");
        }
        // What a newcomer sees first reads naturally: no `-0`, a plain name.
        let age = o["age"].as_u64().unwrap_or(0);
        assert!((1..=120).contains(&age) && !text.contains("-0"), "seed {seed}: age in {text}");
        let name = o["name"].as_str().unwrap_or_else(|| panic!("seed {seed}: {v}"));
        assert!(name.chars().all(|c| c.is_ascii_alphabetic() || c == ' '), "seed {seed}: {v}");
    }
}

/// Every command answers `-h` and `--help` with its own usage, exit 0; `--version` too.
#[test]
fn help_and_version() {
    for cmd in [&[][..], &["check"], &["masks"], &["bench"], &["demo"]] {
        for flag in ["-h", "--help"] {
            let mut a = cmd.to_vec();
            a.push(flag);
            let out = llg(&a);
            assert_eq!(code(&out), 0, "llg {a:?}\n{}", show(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            let usage = format!("Usage: llg {}", cmd.first().copied().unwrap_or(""));
            assert!(text.contains(usage.trim_end()), "llg {a:?}: no {usage:?}\n{}", show(&out));
        }
    }
    let out = llg(&["help", "check"]);
    assert_eq!(code(&out), 0, "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: llg check"));
    let out = llg(&["--version"]);
    assert_eq!(code(&out), 0, "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.trim(), format!("llg {}", env!("CARGO_PKG_VERSION")));
}

/// A usage error is one line saying what is wrong and where to get help, exit 3.
#[test]
fn usage_errors_are_one_line() {
    let d = TempDir::new("usage");
    let g = d.file("g.lark", "start: \"ab\"\n");
    let cases: &[(&[&str], &str, &str)] = &[
        (&["check", "--grammar", &g, "--text", "ab", "--bogus"], "--bogus", "llg check --help"),
        (&["check", "--grammar", &g], "--text", "llg check --help"),
        (&["check", "--grammar", &g, "--text", "a", "--input", &g], "--input", "llg check --help"),
        (&["masks", "--grammar", &g], "--tokens", "llg masks --help"),
        (&["demo", "--seed", "x"], "--seed", "llg demo --help"),
        (&["bench", "--tokenizer", "bytes"], "FILES_OR_DIRS", "llg bench --help"),
        (&["bench", "--threads", "0", &g], "--threads", "llg bench --help"),
        (&["frobnicate"], "frobnicate", "llg --help"),
        // Errors found after parsing: same shape.
        (
            &["check", "--grammar", &g, "--tokenizer", "nope", "--text", "a"],
            "nope",
            "llg check --help",
        ),
    ];
    for (args, what, hint) in cases {
        let out = llg(args);
        assert_eq!(code(&out), 3, "llg {args:?}\n{}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "llg {args:?}: one line\n{}", show(&out));
        assert!(err.contains(what), "llg {args:?}: says what is wrong ({what})\n{}", show(&out));
        assert!(err.contains(hint), "llg {args:?}: points to {hint}\n{}", show(&out));
        assert!(out.stdout.is_empty(), "llg {args:?}\n{}", show(&out));
    }
}

/// A --tokenizer that looks like a path and names no file says so (not "unknown built-in").
#[test]
fn missing_tokenizer_file() {
    let d = TempDir::new("tokfile");
    let g = d.file("g.lark", "start: \"ab\"\n");
    for tok in ["no/such/tokenizer.json", "missing.tiktoken", "missing.json", "dir\\tok"] {
        let out = llg(&["check", "--grammar", &g, "--tokenizer", tok, "--text", "ab"]);
        assert_eq!(code(&out), 3, "{}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("no such file: {tok}")), "{tok}: {}", show(&out));
        assert!(!err.contains("built-in"), "{tok}: {}", show(&out));
    }
    // A bare unknown name still lists the built-in names.
    let out = llg(&["check", "--grammar", &g, "--tokenizer", "o300k", "--text", "ab"]);
    assert_eq!(code(&out), 3, "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("o200k"), "{}", show(&out));
}

/// `llg bench` on files that are not MaskBench files says so per file, counts them, and exits
/// 1 when nothing was benchmarked; compile errors show their reason.
#[test]
fn bench_on_plain_schema() {
    let d = TempDir::new("bench");
    let plain =
        d.file("plain.json", r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#);
    let out = llg(&["bench", "--tokenizer", "bytes", "--json", &plain]);
    assert_eq!(code(&out), 1, "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{plain}: not a MaskBench file")), "{}", show(&out));
    assert!(err.contains("\"tests\""), "says what a MaskBench file looks like: {}", show(&out));
    let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().expect("a summary")).expect("JSON summary");
    assert_eq!(last["not_maskbench"], 1, "{last}");
    assert_eq!(last["schemas"], 0, "{last}");
    assert_eq!(last["compiled"], 0, "{last}");

    // A MaskBench file next to it is benchmarked: exit 0, both counted.
    let mb = d.file(
        "mb.json",
        r#"{"schema": {"type": "integer"}, "tests": [{"data": 12, "valid": true}, {"data": "x", "valid": false}]}"#,
    );
    let bad = d.file("bad.json", r#"{"schema": {"type": "integer", "minimum": "x"}, "tests": []}"#);
    let out = llg(&["bench", "--tokenizer", "bytes", "--json", &plain, &mb, &bad]);
    assert_eq!(code(&out), 0, "{}", show(&out));
    let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().expect("a summary")).expect("JSON summary");
    for (k, v) in [("schemas", 2), ("not_maskbench", 1), ("compiled", 1), ("compile_errors", 1)] {
        assert_eq!(last[k], v, "{k}: {last}");
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{bad}: compile error: ")), "the reason: {}", show(&out));
    assert!(text.lines().next().is_some_and(|l| l.contains("not_maskbench 1")), "{text}");
}
