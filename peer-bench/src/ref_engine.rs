//! The reference (crates.io `llguidance` 1.9.1) on one schema: the same schema text, the
//! same instances and token ids as ours, with forcing turned off ([`NoForceEnv`]). Its masks
//! are compared with ours at every step as it replays (outside the timed regions).

use std::time::Instant;

use ref_llg::toktrie::{SimpleVob, TokEnv, TokTrie, TokenizerEnv};

use crate::agreement::{compare_masks, Agreement};
use crate::instance::Instance;
use crate::outcome::{set_outcome, EngineResult, Outcome, Replay, TIME_LIMIT};

/// Wraps the reference's HF tokenizer environment; `tokenize_is_canonical() == false` turns
/// off the reference's token forcing (its masks are then the full allowed sets).
pub struct NoForceEnv(pub TokEnv);

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

/// The reference's factory and trie, with our EOS ids (for the mask comparison).
pub struct RefCtx<'a> {
    pub factory: &'a ref_llg::ParserFactory,
    pub trie: &'a TokTrie,
    pub our_eos: &'a [u32],
}

fn words_of(v: &SimpleVob) -> &[u32] {
    v.as_slice()
}

pub fn run_ref(
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
                    ctx.our_eos,
                    ctx.trie.eos_tokens(),
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
                        ctx.our_eos,
                        ctx.trie.eos_tokens(),
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
