//! The matcher answers a mask from the last one when the parser position has not changed
//! (inside a long lexeme). Those answers equal masks computed from scratch by a fresh
//! matcher fed the same tokens, also after rollbacks.

use llguidance::{GrammarSource, ParserFactory};

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

#[test]
fn cached_masks_equal_fresh_masks() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let eos = f.tokenizer().vocab().eos_tokens().to_vec();
    let grammars = [
        GrammarSource::JsonSchema(
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string","maxLength":8}},"required":["a","b"]}"#.into(),
        ),
        GrammarSource::JsonSchema(r#"{"type":"array","items":{"type":"string"}}"#.into()),
        GrammarSource::Lark("start: \"<\" body \">\"\nbody[lazy]: /[a-z ]*/".into()),
        GrammarSource::Lark("start: /[a-z ]+/ \".\" /[0-9]+/".into()),
    ];
    let mut hits = 0;
    let mut compared = 0;
    for (gi, g) in grammars.iter().enumerate() {
        for walk in 0..3u64 {
            let mut seed = gi as u64 * 100 + walk + 7;
            let mut m = f.create_matcher(g).unwrap();
            for _ in 0..40 {
                let mask = m.compute_mask().unwrap();
                let mut fresh = f.create_matcher(g).unwrap();
                fresh.consume_tokens(m.tokens()).unwrap();
                assert_eq!(mask, fresh.compute_mask().unwrap(), "grammar {gi}, walk {walk}");
                compared += 1;
                // Now and then roll back one or two tokens.
                if m.tokens().len() > 2 && lcg(&mut seed) % 5 == 0 {
                    m.rollback(1 + lcg(&mut seed) as usize % 2).unwrap();
                    continue;
                }
                let choices: Vec<_> = mask.iter().filter(|t| !eos.contains(t)).collect();
                if choices.is_empty() {
                    break;
                }
                // Mostly one-character tokens, to stay inside strings for many steps.
                let short: Vec<_> = choices
                    .iter()
                    .copied()
                    .filter(|&t| f.tokenizer().vocab().token_bytes(t).len() == 1)
                    .collect();
                let pool =
                    if !short.is_empty() && lcg(&mut seed) % 4 != 0 { &short } else { &choices };
                m.consume_token(pool[lcg(&mut seed) as usize % pool.len()]).unwrap();
            }
            hits += m.mask_cache_hits();
        }
    }
    assert!(compared > 200, "only {compared} masks compared");
    assert!(hits > 20, "the cache answered only {hits} masks");
}
