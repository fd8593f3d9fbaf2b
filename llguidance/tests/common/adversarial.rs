//! The adversarial corpus of `tests/data/adversarial.txt` (format in that file's header):
//! loaded and run by `tests/adversarial.rs` (outcomes asserted) and
//! `benches/adversarial.rs` (times reported).

use std::time::{Duration, Instant};

use llguidance::{GrammarSource, ParserFactory, TokenId};

pub const CORPUS: &str = include_str!("../data/adversarial.txt");

pub enum Expect {
    /// Compiles, accepts `accept` and rejects `reject` on the byte vocabulary.
    Works { accept: String, reject: String },
    /// Compilation fails with an error containing this text.
    Error(String),
    /// Either outcome is fine (a limit may or may not be reached), but no panic.
    NoPanic,
}

pub struct Case {
    pub name: String,
    pub source: GrammarSource,
    pub expect: Expect,
}

/// Expands `<<rep N|TEXT>>` and `<<seq N|SEP|TEXT>>` (see the corpus header).
fn expand(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("<<") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find(">>").expect("unclosed <<") + i;
        let body = &rest[i + 2..j];
        // Arguments split at `|`; `\|` is a literal `|`.
        let mut args = vec![String::new()];
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'|') => {
                    args.last_mut().unwrap().push(chars.next().unwrap())
                }
                '|' => args.push(String::new()),
                c => args.last_mut().unwrap().push(c),
            }
        }
        let (cmd, n) = args[0].split_once(' ').expect("<<cmd N|...>>");
        let n: usize = n.trim().parse().expect("a count");
        match (cmd, args.len()) {
            ("rep", 2) => out.push_str(&args[1].repeat(n)),
            ("seq", 3) => {
                let items: Vec<String> = (0..n)
                    .map(|k| {
                        args[2].replace("##", &(k + 1).to_string()).replace('#', &k.to_string())
                    })
                    .collect();
                out.push_str(&items.join(&args[1]));
            }
            _ => panic!("bad template <<{body}>>"),
        }
        rest = &rest[j + 2..];
    }
    out.push_str(rest);
    out
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for block in CORPUS.split("\n=== ").skip(1) {
        let (name, body) = block.split_once('\n').unwrap_or((block, ""));
        let (head, grammar) = body.split_once("grammar:\n").unwrap_or((body, ""));
        let grammar = expand(grammar.trim_end_matches('\n'));
        let field = |k: &str| {
            head.lines().find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(' ')))
        };
        let string = |k: &str| -> String {
            let s: String =
                serde_json::from_str(field(k).unwrap_or_else(|| panic!("{name}: no {k}")))
                    .unwrap_or_else(|e| panic!("{name}: {k}: {e}"));
            expand(&s)
        };
        let source = match field("format").expect("format") {
            "lark" => GrammarSource::Lark(grammar),
            "regex" => GrammarSource::Regex(grammar),
            "json_schema" => GrammarSource::JsonSchema(grammar),
            "gbnf" => GrammarSource::Gbnf(grammar),
            "ir" => GrammarSource::Ir(grammar),
            f => panic!("{name}: unknown format {f}"),
        };
        let expect = match field("expect").expect("expect") {
            "works" => Expect::Works { accept: string("accept"), reject: string("reject") },
            "no_panic" => Expect::NoPanic,
            e => Expect::Error(e.strip_prefix("error ").expect("error TEXT").to_string()),
        };
        cases.push(Case { name: name.trim().to_string(), source, expect });
    }
    cases
}

/// Compiles the case and checks its outcome; returns the compile time and, on a mismatch,
/// what went wrong.
pub fn run(f: &ParserFactory, case: &Case) -> (Duration, Result<(), String>) {
    let t0 = Instant::now();
    let r = f.create_matcher(&case.source);
    let took = t0.elapsed();
    let outcome = match (&case.expect, r) {
        (Expect::Error(want), Err(e)) if e.to_string().contains(want.as_str()) => Ok(()),
        (Expect::Error(want), Err(e)) => Err(format!("error {e} does not contain {want:?}")),
        (Expect::Error(want), Ok(_)) => Err(format!("compiled, expected an error with {want:?}")),
        (Expect::Works { .. }, Err(e)) => Err(format!("does not compile: {e}")),
        (Expect::Works { accept, reject }, Ok(m)) => {
            let run = |text: &str| {
                let mut m = m.deep_clone();
                // Each byte must be in the mask computed before it (masks walk every byte
                // from each state, which consuming alone would not).
                text.bytes().all(|b| {
                    let t = TokenId(b as u32);
                    m.compute_mask().is_ok_and(|mask| mask.contains(t))
                        && m.consume_token(t).is_ok()
                }) && m.is_accepting().unwrap_or(false)
            };
            if !run(accept) {
                Err(format!("should accept {accept:?}"))
            } else if run(reject) {
                Err(format!("should reject {reject:?}"))
            } else {
                Ok(())
            }
        }
        (Expect::NoPanic, r) => {
            if let Ok(mut m) = r {
                // Drive it a little: masks and a few allowed tokens.
                for _ in 0..5 {
                    let Ok(mask) = m.compute_mask() else { break };
                    let Some(t) = mask.first() else { break };
                    if m.consume_token(t).is_err() {
                        break;
                    }
                }
            }
            Ok(())
        }
    };
    (took, outcome)
}
