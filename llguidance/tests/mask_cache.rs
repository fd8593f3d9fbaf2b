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

/// Matchers of one compiled grammar start from the lexer a finished matcher left and share
/// the masks of the first lexeme (free text before a tool call): after one transcript ran
/// and its matcher was dropped, along different transcripts taken in turns, every mask
/// equals the one a matcher of a separately compiled copy computes, and the masks inside the
/// first lexeme come from the shared cache.
#[test]
fn matchers_of_one_compiled_grammar_share_first_lexeme_masks() {
    use grammars::tool_calls::{structural_tag, Reasoning};
    use serde_json::json;
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let tools = vec![json!({"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}})];
    let tag = structural_tag("qwen_3", &tools, &json!("auto"), Reasoning::Disabled, true).unwrap();
    let src = GrammarSource::StructuralTag(tag.to_string());
    let g = f.compile(&src).unwrap();
    let texts = [
        "Let me look <that> up.<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"a\"}}\n</tool_call> ok",
        "Sure <b>bold</b> text, then <tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"b c\"}}\n</tool_call>",
        "Let me look <that> up, no call.",
        "Sure <b>bold</b> text, then <tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"d\"}}\n</tool_call>!",
    ];
    let toks: Vec<_> = texts.iter().map(|t| f.tokenizer().tokenize(t).unwrap()).collect();
    // A first matcher runs transcript 0 and is dropped: its lexer becomes the template.
    let mut first = f.matcher_for(g.clone()).unwrap();
    for &t in &toks[0] {
        first.compute_mask().unwrap();
        first.consume_token(t).unwrap();
    }
    drop(first);
    let mut shared: Vec<_> = texts.iter().map(|_| f.matcher_for(g.clone()).unwrap()).collect();
    // Compiled separately: a factory that keeps no compiled grammar.
    let fresh = f.with_grammar_cache(0);
    let mut alone: Vec<_> = texts.iter().map(|_| fresh.create_matcher(&src).unwrap()).collect();
    let longest = toks.iter().map(Vec::len).max().unwrap();
    for step in 0..=longest {
        for (i, t) in toks.iter().enumerate() {
            if step > t.len() {
                continue;
            }
            let (a, b) = (shared[i].compute_mask().unwrap(), alone[i].compute_mask().unwrap());
            assert_eq!(a, b, "transcript {i}, step {step}: shared-lexer mask differs");
            if let Some(&tok) = t.get(step) {
                assert!(a.contains(tok), "transcript {i}, step {step}: token refused");
                shared[i].consume_token(tok).unwrap();
                alone[i].consume_token(tok).unwrap();
            }
        }
    }
    for (i, m) in shared.iter_mut().enumerate() {
        assert!(m.is_accepting().unwrap(), "transcript {i} not accepted");
    }
    // Every transcript begins in the first lexeme the first matcher walked (at least the
    // mask before any token is shared); 2 and 3 also repeat the free text of 0 and 1. The
    // separately compiled copies share masks too (compiling a structural tag decodes some
    // free text and the first tag's begin: `ParserFactory::warm_up`), the matchers that
    // start after transcript 0 ran at least as many, and more in all.
    let hits: Vec<u64> = shared.iter().map(|m| m.mask_cache_hits()).collect();
    let alone_hits: Vec<u64> = alone.iter().map(|m| m.mask_cache_hits()).collect();
    for i in 0..texts.len() {
        assert!(
            hits[i] > 0 && hits[i] >= alone_hits[i],
            "no first-lexeme mask shared: {hits:?} vs {alone_hits:?}"
        );
    }
    assert!(
        hits.iter().sum::<u64>() > alone_hits.iter().sum::<u64>(),
        "{hits:?} vs {alone_hits:?}"
    );
}
