//! Data-driven grammar suites: `tests/data/*.txt` hold cases of the form
//!
//! ```text
//! === case name [format]
//! grammar text (Lark by default; `regex`, `gbnf` or `structural_tag` after the name for
//! other formats)
//! --- accept
//! one input per line ("..." lines are JSON strings, for escapes; `<|name|>` is a special token)
//! --- reject
//! ...
//! --- error
//! a substring of the expected compile error (then no accept/reject sections)
//! ```
//!
//! One runner: compile with the test vocabulary (bytes + `</s>` EOS + two specials), consume
//! each input byte by byte (specials as tokens), and check acceptance.

use std::path::Path;

use earley::Parser;
use grammars::{compile, CompileLimits};
use toktrie::{TokenId, VocabBuilder, Vocabulary};

fn vocab() -> Vocabulary {
    let mut b = VocabBuilder::new();
    for i in 0..256u32 {
        b.token(TokenId(i), &[i as u8]).unwrap();
    }
    b.special(TokenId(256), "</s>").unwrap();
    b.special(TokenId(257), "<|eot_id|>").unwrap();
    b.special(TokenId(258), "<|tool|>").unwrap();
    b.eos(TokenId(256));
    b.build().unwrap()
}

#[derive(Debug, Default)]
struct Case {
    name: String,
    format: String,
    grammar: String,
    accept: Vec<String>,
    reject: Vec<String>,
    error: Option<String>,
    line: usize,
}

fn parse_cases(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut cur: Option<Case> = None;
    let mut section = "grammar";
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("=== ") {
            cases.extend(cur.take());
            let mut parts = rest.rsplitn(2, ' ');
            let last = parts.next().unwrap_or("");
            let (name, format) = if ["regex", "gbnf", "lark", "structural_tag"].contains(&last) {
                (parts.next().unwrap_or(last).to_string(), last.to_string())
            } else {
                (rest.to_string(), "lark".to_string())
            };
            cur = Some(Case { name, format, line: i + 1, ..Default::default() });
            section = "grammar";
            continue;
        }
        let Some(c) = cur.as_mut() else { continue };
        if let Some(s) = line.strip_prefix("--- ") {
            section = match s.trim() {
                "accept" => "accept",
                "reject" => "reject",
                "error" => "error",
                other => panic!("line {}: unknown section {other}", i + 1),
            };
            continue;
        }
        let decoded = || -> String {
            if line.starts_with('"') {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("line {}: bad JSON string: {e}", i + 1))
            } else {
                line.to_string()
            }
        };
        match section {
            "grammar" => {
                c.grammar.push_str(line);
                c.grammar.push('\n');
            }
            // Blank lines separate cases; write an empty input as "".
            "accept" if !line.is_empty() => c.accept.push(decoded()),
            "reject" if !line.is_empty() => c.reject.push(decoded()),
            "error" if !line.trim().is_empty() => c.error = Some(line.trim().to_string()),
            _ => {}
        }
    }
    cases.extend(cur);
    cases
}

fn build(case: &Case, vocab: &Vocabulary) -> Result<grammars::CompiledGrammar, grammars::Error> {
    let set = match case.format.as_str() {
        "lark" => grammars::lark::parse(&case.grammar)?,
        "regex" => grammars::regex::parse(case.grammar.trim_end_matches('\n'))?,
        "gbnf" => grammars::gbnf::parse(&case.grammar)?,
        "structural_tag" => grammars::structural_tag::parse(&case.grammar)?,
        f => panic!("unknown format {f}"),
    };
    // Saving and loading the IR gives the same grammar.
    let json = serde_json::to_string(&set).expect("IR serializes");
    let back: grammars::ir::GrammarSet = serde_json::from_str(&json).expect("IR deserializes");
    assert_eq!(back, set, "IR round trip");
    // `GRAMMARS_DUMP_IR=DIR` saves each IR (seeds for the `ir` fuzz target, fuzz/seed.py).
    if let Some(dir) = std::env::var_os("GRAMMARS_DUMP_IR") {
        let name: String =
            case.name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        std::fs::write(std::path::Path::new(&dir).join(name + ".json"), &json).expect("dump IR");
    }
    compile(&set, Some(vocab), &CompileLimits::default())
}

/// Consumes `input` (bytes, and `<|name|>` specials of the vocabulary as tokens).
fn accepts(g: &grammars::CompiledGrammar, vocab: &Vocabulary, input: &str) -> bool {
    let lexer = lexer::DerivreLexer::new(&g.spec).expect("lexer builds");
    let opts = g.parser_options(vocab.eos_tokens().to_vec());
    let mut p = Parser::new(g.cfg.clone(), lexer, opts).expect("parser starts");
    let mut rest = input;
    while !rest.is_empty() {
        let special = vocab
            .special_tokens()
            .iter()
            .find(|&t| rest.starts_with(vocab.special_name(t).unwrap()));
        if let Some(t) = special {
            if p.consume_special(t).is_err() {
                return false;
            }
            rest = &rest[vocab.special_name(t).unwrap().len()..];
        } else {
            let ch = rest.chars().next().unwrap();
            let mut buf = [0u8; 4];
            // One token per byte (token id = byte), so token terminals (`<[97]>`,
            // `!<[258]>`) see whole tokens.
            for &b in ch.encode_utf8(&mut buf).as_bytes() {
                if p.consume_token(vocab, toktrie::TokenId(b as u32)).is_err() {
                    return false;
                }
            }
            rest = &rest[ch.len_utf8()..];
        }
    }
    p.is_accepting().unwrap_or(false)
}

#[test]
fn grammar_suites() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let vocab = vocab();
    let mut failures = Vec::new();
    let mut counts = (0, 0, 0);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "txt")) {
        let text = std::fs::read_to_string(path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        for case in parse_cases(&text) {
            let at = format!("{file}:{} ({})", case.line, case.name);
            match (build(&case, &vocab), &case.error) {
                (Ok(_), Some(want)) => {
                    failures.push(format!("{at}: compiled, expected error containing {want:?}"))
                }
                (Err(e), Some(want)) => {
                    counts.2 += 1;
                    if !e.to_string().contains(want.as_str()) {
                        failures.push(format!(
                            "{at}: error {:?} does not contain {want:?}",
                            e.to_string()
                        ));
                    }
                }
                (Err(e), None) => failures.push(format!("{at}: unexpected error: {e}")),
                (Ok(g), None) => {
                    for s in &case.accept {
                        counts.0 += 1;
                        if !accepts(&g, &vocab, s) {
                            failures.push(format!("{at}: should accept {s:?}"));
                        }
                    }
                    for s in &case.reject {
                        counts.1 += 1;
                        if accepts(&g, &vocab, s) {
                            failures.push(format!("{at}: should reject {s:?}"));
                        }
                    }
                }
            }
        }
    }
    println!("{} accepts, {} rejects, {} error cases checked", counts.0, counts.1, counts.2);
    assert!(counts.0 + counts.1 + counts.2 > 0, "no cases found in {}", dir.display());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
