//! Templates: a finished matcher's lexer offered to the grammar's later matchers.

use super::*;
use crate::shared::TEMPLATE_MIN_GROWTH;
use crate::{GrammarSource, ParserFactory};

/// The states of the grammar's current template (0 before one).
fn template_states(f: &ParserFactory, g: &Arc<CompiledGrammar>) -> usize {
    let map = f.shared.lexers.0.lock().unwrap();
    map.get(&(Arc::as_ptr(g) as usize)).map_or(0, |(_, t)| t.states)
}

fn decode(f: &ParserFactory, g: &Arc<CompiledGrammar>, text: &str) -> usize {
    let mut m = f.matcher_for(g.clone()).unwrap();
    for t in f.tokenizer().tokenize(text).unwrap() {
        assert!(m.compute_mask().unwrap().contains(t), "{text:?}: token refused");
        m.consume_token(t).unwrap();
    }
    m.lexer_states()
}

/// The compile of a small tool set decodes every tool's call (a first call of any tool
/// meets no new lexer state); a large one decodes only the first.
#[test]
fn a_small_tool_set_is_warmed_for_every_tool() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let tags = |n: usize| -> String {
        let tags: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"type": "tag", "begin": "<f=t{i}>", "end": "</f>", "content":
                    {{"type": "json_schema", "json_schema": {{"type": "object",
                    "properties": {{"zq{i}xw": {{"type": "string"}}}},
                    "required": ["zq{i}xw"]}}}}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"type": "structural_tag", "format": {{"type": "triggered_tags",
            "triggers": ["<f="], "tags": [{}]}}}}"#,
            tags.join(",")
        )
    };
    // States a first call of the third tool learns.
    let learned = |n: usize| {
        let g = f.compile(&GrammarSource::StructuralTag(tags(n))).unwrap();
        let before = template_states(&f, &g);
        decode(&f, &g, r#"Sure. <f=t2>{"zq2xw": "hello"}</f> Done."#) - before
    };
    let (small, large) = (learned(3), learned(crate::factory::WARM_UP_ALL_TAGS + 8));
    assert!(small == 0 && large >= 4, "{small} / {large}");
}

/// A finished matcher that learned a few states more than the template (each later
/// matcher would derive them again) becomes the template, however large it is.
#[test]
fn a_few_new_states_renew_the_template() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    // Words with few common prefixes: each is a few lexer states of its own.
    let mut x = 12345u32;
    let mut letter = || {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (b'a' + (x >> 16) as u8 % 26) as char
    };
    let words: Vec<String> =
        (0..400).map(|_| format!("\"{}\"", (0..7).map(|_| letter()).collect::<String>())).collect();
    let schema = format!(r#"{{"type": "array", "items": {{"enum": [{}]}}}}"#, words.join(","));
    let g = f.compile(&GrammarSource::JsonSchema(schema)).unwrap();
    let long = format!("[{}]", words[..200].join(","));
    let big = decode(&f, &g, &long);
    assert_eq!(template_states(&f, &g), big);
    let short = format!("[{}]", words[300..330].join(","));
    let more = decode(&f, &g, &short);
    assert!(more >= big + TEMPLATE_MIN_GROWTH && more < big + big / 8, "{big} -> {more}");
    assert_eq!(template_states(&f, &g), more, "{big} -> {more}");
}
