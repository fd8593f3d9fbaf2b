//! The instances of a MaskBench file: each test's `data` serialized compactly (key order as
//! in the file), tokenized once with our tokenizer, and tokenized again with the reference's
//! `TokEnv` to count the instances where the two tokenizations differ.

use llguidance as ours;
use ref_llg::toktrie::TokEnv;

/// One test of a MaskBench file: whether it is valid, and its text as our token ids.
pub struct Instance {
    pub valid: bool,
    pub tokens: Vec<u32>,
}

/// Instances whose two tokenizations were compared, and the first mismatches.
#[derive(Default)]
pub struct TokCheck {
    pub checked: u64,
    pub mismatch: u64,
    /// The first 20 mismatches, for `tokenization-mismatches.txt`.
    pub lines: Vec<String>,
}

/// The instances of `tests` (a MaskBench file's `tests` array), tokenized with ours; an
/// instance ours cannot tokenize is skipped with a message.
pub fn load_instances(
    file: &str,
    tests: &[serde_json::Value],
    our_f: &ours::ParserFactory,
    hf_env: &TokEnv,
    tok: &mut TokCheck,
) -> Vec<Instance> {
    let mut insts = Vec::new();
    for t in tests {
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
        tok.checked += 1;
        if rt != toks {
            tok.mismatch += 1;
            if tok.lines.len() < 20 {
                tok.lines.push(format!(
                    "{file}: {:?}\n  ours {:?}\n  ref  {:?}",
                    s.chars().take(200).collect::<String>(),
                    toks,
                    rt
                ));
            }
        }
        insts.push(Instance { valid, tokens: toks });
    }
    insts
}
