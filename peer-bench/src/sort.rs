//! Sorting a file's mask differences into the documented classes: each differing token by
//! the rules of [`crate::classify`], after a replay of the reference on the schema as drafts
//! 04..07 read it (a difference that goes away there is a `$ref`-sibling one, class 5); a
//! mask-count difference takes the class of the token one engine rejected.

use std::panic::{catch_unwind, AssertUnwindSafe};

use llguidance as ours;

use crate::agreement::Agreement;
use crate::classify;
use crate::instance::Instance;
use crate::outcome::EngineResult;
use crate::ref_engine::{run_ref, RefCtx};

/// Disagreements sorted into classes, over the whole run.
#[derive(Default)]
pub struct Sorted {
    /// Per class: steps with at least one token of the class, tokens of the class.
    pub steps: std::collections::BTreeMap<classify::Class, u64>,
    pub tokens: std::collections::BTreeMap<classify::Class, u64>,
    /// Steps (and mask-count differences) with an unexplained token or an EOS difference.
    pub unexplained_steps: u64,
    pub unexplained_files: std::collections::BTreeSet<String>,
    /// Mask-count differences, per class of the token one engine rejected.
    pub length: std::collections::BTreeMap<classify::Class, u64>,
    pub lines: Vec<String>,
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
pub fn sort_file_diffs(
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
