//! Our engine on one schema: compile (TTFM), then replay every instance on a deep clone of
//! the compiled matcher, timing mask + consume per token (TBM) and keeping the masks of valid
//! instances for the comparison with the reference.

use std::time::Instant;

use llguidance as ours;

use crate::instance::Instance;
use crate::outcome::{set_outcome, EngineResult, Outcome, Replay, TIME_LIMIT};

pub fn run_ours(
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
