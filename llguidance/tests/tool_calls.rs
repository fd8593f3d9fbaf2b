//! Tool-call transcripts per model format, through structural tags built by
//! `grammars::tool_calls::structural_tag`: accepted with free text around the calls;
//! rejected with a schema-invalid argument, a wrong tool name, a missing end tag;
//! `tool_choice: required` refuses plain text. The vocabulary is bytes plus the models'
//! special tokens (as in their real tokenizers: `<|python_tag|>`, harmony's channel tokens,
//! DeepSeek's tool tokens), so transcripts use the special tokens where a model emits them.

use grammars::tool_calls::{structural_tag, Reasoning};
use llguidance::{GrammarSource, ParserFactory, TokenId, Tokenizer};
use serde_json::{json, Value};
use toktrie::VocabBuilder;

const SPECIALS: &[&str] = &[
    "<|eos|>",
    "<|python_tag|>",
    "<|channel|>",
    "<|message|>",
    "<|constrain|>",
    "<|call|>",
    "<|start|>",
    "<|end|>",
    "<|return|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
];

fn factory() -> ParserFactory {
    let mut b = VocabBuilder::new();
    b.name("bytes+specials");
    for i in 0..=255u8 {
        b.token(TokenId(i as u32), &[i]).unwrap();
    }
    for (i, s) in SPECIALS.iter().enumerate() {
        b.special(TokenId(256 + i as u32), s).unwrap();
    }
    b.eos(TokenId(256));
    ParserFactory::new(Tokenizer::from_vocab(b.build().unwrap())).unwrap()
}

fn tools() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"]}}}),
        json!({"type": "function", "function": {"name": "search", "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}),
    ]
}

/// Token ids for `text`: bytes, with the special tokens written by name where they occur.
fn tokens(text: &str) -> Vec<TokenId> {
    let mut out = Vec::new();
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for (i, s) in SPECIALS.iter().enumerate().skip(1) {
            if let Some(r) = rest.strip_prefix(s) {
                out.push(TokenId(256 + i as u32));
                rest = r;
                continue 'outer;
            }
        }
        let c = rest.chars().next().unwrap();
        let mut buf = [0u8; 4];
        out.extend(c.encode_utf8(&mut buf).bytes().map(|b| TokenId(b as u32)));
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn accepts(f: &ParserFactory, tag: &Value, text: &str) -> bool {
    let mut m = f
        .create_matcher(&GrammarSource::StructuralTag(tag.to_string()))
        .unwrap_or_else(|e| panic!("{tag}: {e}"));
    for t in tokens(text) {
        let mask = m.compute_mask().unwrap();
        if !mask.contains(t) || m.consume_token(t).is_err() {
            return false;
        }
    }
    m.is_accepting().unwrap()
}

/// (model, reasoning, accepted transcripts, rejected transcripts) with tool_choice auto.
fn cases() -> Vec<(&'static str, Reasoning, Vec<&'static str>, Vec<&'static str>)> {
    vec![
        (
            "qwen_3",
            Reasoning::Disabled,
            vec![
                "Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call> and <tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>done",
                "plain text",
            ],
            vec![
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 2}}\n</tool_call>",
                "<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>",
                "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n",
            ],
        ),
        (
            "qwen_3",
            Reasoning::Enabled,
            vec!["I should look.</think>\n\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>"],
            vec!["no end of thinking <tool_call>"],
        ),
        (
            "qwen_3_coder",
            Reasoning::Auto,
            vec![
                "<think>hm</think>\n\nOK <tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>3</parameter>\n</function>\n</tool_call>",
                "just text",
            ],
            vec![
                "<tool_call>\n<function=get_weather>\n<parameter=days>x</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=nope>\n</function>\n</tool_call>",
            ],
        ),
        (
            "llama",
            Reasoning::Disabled,
            vec!["{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\", \"days\": 1}}"],
            vec!["{\"name\": \"get_weather\", \"parameters\": {\"town\": \"Rome\"}}"],
        ),
        (
            "llama_python_tag",
            Reasoning::Disabled,
            vec!["Calling.<|python_tag|>{\"name\": \"search\", \"parameters\": {\"q\": \"rust\"}}"],
            vec!["<|python_tag|>{\"name\": \"other\", \"parameters\": {}}"],
        ),
        (
            "deepseek_r1",
            Reasoning::Enabled,
            vec!["thinking</think>Sure<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": \"a\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"b\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"],
            vec!["thinking</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"],
        ),
        (
            "deepseek_v3_1",
            Reasoning::Disabled,
            vec!["<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"a\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"],
            vec!["<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"a\"}<｜tool▁calls▁end｜>"],
        ),
        (
            "mistral",
            Reasoning::Disabled,
            vec!["[TOOL_CALLS] [{\"name\": \"search\", \"arguments\": {\"q\": \"z\"}}]"],
            vec!["[TOOL_CALLS] [{\"name\": \"search\", \"arguments\": {}}]"],
        ),
        (
            "harmony",
            Reasoning::Enabled,
            vec![
                "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{\"city\": \"Lima\"}<|call|>",
                "<|channel|>final<|message|>Hello!<|return|>",
            ],
            vec![
                "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{\"city\": 5}<|call|>",
                "<|channel|>final<|message|>Hello!",
            ],
        ),
    ]
}

#[test]
fn transcripts_per_model() {
    let f = factory();
    for (model, reasoning, good, bad) in cases() {
        let tag = structural_tag(model, &tools(), &json!("auto"), reasoning, true).unwrap();
        for t in good {
            assert!(accepts(&f, &tag, t), "{model} {reasoning:?} should accept {t:?}");
        }
        for t in bad {
            assert!(!accepts(&f, &tag, t), "{model} {reasoning:?} should reject {t:?}");
        }
    }
}

/// `required` refuses plain text and accepts a call first; a named choice allows only that
/// function; `parallel_tool_calls: false` stops after one call; `none` allows no call.
#[test]
fn tool_choice_variants() {
    let f = factory();
    let call = "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>";
    let required =
        structural_tag("qwen_3", &tools(), &json!("required"), Reasoning::Disabled, true).unwrap();
    assert!(!accepts(&f, &required, "plain text"));
    assert!(!accepts(&f, &required, ""));
    assert!(accepts(&f, &required, call));
    let named = json!({"type": "function", "function": {"name": "get_weather"}});
    let named = structural_tag("qwen_3", &tools(), &named, Reasoning::Disabled, true).unwrap();
    assert!(!accepts(&f, &named, call));
    let single =
        structural_tag("qwen_3", &tools(), &json!("auto"), Reasoning::Disabled, false).unwrap();
    assert!(accepts(&f, &single, call));
    assert!(!accepts(&f, &single, &format!("{call}{call}")));
    let none =
        structural_tag("qwen_3", &tools(), &json!("none"), Reasoning::Disabled, true).unwrap();
    assert!(accepts(&f, &none, "just words"));
    assert!(!accepts(&f, &none, call));
    let unknown = structural_tag("nope", &tools(), &json!("auto"), Reasoning::Disabled, true);
    assert!(unknown.is_err());
}

/// Compiling a structural tag decodes its first tag's begin twice (the warm-up), so a fresh
/// tool set's first matcher starts warm: its first mask is the one the warm-up computed
/// (the grammar's first-lexeme masks are shared). Its masks along a transcript equal those of the unsliced walk, step by step.
#[test]
fn compiled_tags_start_warm() {
    let f = ParserFactory::from_tokenizer_name("cl100k").unwrap();
    let tag =
        structural_tag("qwen_3", &tools(), &json!("auto"), Reasoning::Disabled, true).unwrap();
    let g = f.compile(&GrammarSource::StructuralTag(tag.to_string())).unwrap();
    let mut m = f.matcher_for(g.clone()).unwrap();
    // The reference: a lexer of its own (not the warm-up's), no slices, no cache.
    let mut plain = f.plain().matcher_for(g).unwrap();
    let text = "Sure. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call> Done.";
    let toks = f.tokenizer().tokenize(text).unwrap();
    for (i, &t) in toks.iter().enumerate() {
        let mask = m.compute_mask().unwrap();
        if i == 0 {
            assert_eq!(m.mask_cache_hits(), 1, "the first mask is the warm-up's");
        }
        assert_eq!(mask, plain.compute_mask().unwrap(), "step {i}");
        assert!(mask.contains(t), "step {i}");
        m.consume_token(t).unwrap();
        plain.consume_token(t).unwrap();
    }
    assert!(m.is_accepting().unwrap());
    // Where the grammar takes no free text first (`required`), the begin alone warms it.
    let req =
        structural_tag("qwen_3", &tools(), &json!("required"), Reasoning::Disabled, true).unwrap();
    let g = f.compile(&GrammarSource::StructuralTag(req.to_string())).unwrap();
    let mut m = f.matcher_for(g).unwrap();
    m.compute_mask().unwrap();
    assert_eq!(m.mask_cache_hits(), 1, "required: the first mask is the warm-up's");
}

/// The XML parameter styles read `$ref`s through the JSON Schema resolver: anchors,
/// percent-encoded pointers, `~1` in a key and chains resolve (the integer is enforced); a
/// reference that does not resolve is left in place, where the value's schema reports it.
#[test]
fn xml_parameter_refs_resolve_through_the_json_schema_resolver() {
    let f = factory();
    let tag = |r: &str| {
        serde_json::json!({
            "type": "structural_tag",
            "format": {"type": "tag", "begin": "<function=f>", "end": "</function>",
                "content": {"type": "json_schema", "style": "qwen_xml", "json_schema": {
                    "type": "object", "properties": {"n": {"$ref": r}}, "required": ["n"],
                    "$defs": {
                        "c": {"$anchor": "count", "type": "integer"},
                        "a b": {"type": "integer"},
                        "x/y": {"type": "integer"},
                        "via": {"$ref": "#count"},
                    },
                }}},
        })
    };
    for r in ["#count", "#/$defs/a%20b", "#/$defs/x~1y", "#/$defs/via", "#/$defs/c"] {
        let good = "<function=f><parameter=n>12</parameter></function>";
        let bad = "<function=f><parameter=n>twelve</parameter></function>";
        assert!(accepts(&f, &tag(r), good), "{r}: {good}");
        assert!(!accepts(&f, &tag(r), bad), "{r}: {bad} accepted");
    }
    // A string parameter is raw text in these styles, so the reference must be followed
    // here, not only by the JSON compiler: an anchor naming a string schema.
    let mut t = tag("#text");
    t["format"]["content"]["json_schema"]["$defs"]["t"] =
        serde_json::json!({"$anchor": "text", "type": "string"});
    assert!(accepts(&f, &t, "<function=f><parameter=n>hello world</parameter></function>"));
    // Unresolvable: left in place, and then the value's JSON Schema names it in its error.
    let e = f.create_matcher(&GrammarSource::StructuralTag(tag("#/$defs/missing").to_string()));
    let e = e.map(|_| ()).expect_err("an error").to_string();
    assert!(e.contains("#/$defs/missing") && e.contains("no such location"), "{e}");
}

/// A thinking budget counts the tokens inside `<think>…</think>` exactly (one byte a token
/// here, `</think>` a special token as in reasoning models' vocabularies): at the budget only
/// the close may come (its token, or its text); strict thinking refuses a tool-call trigger
/// inside the thinking, which plain thinking takes as text.
#[test]
fn thinking_budgets_and_strict_thinking() {
    use grammars::tool_calls::{structural_tag_with, Thinking};
    let mut b = VocabBuilder::new();
    b.name("bytes+think");
    for i in 0..=255u8 {
        b.token(TokenId(i as u32), &[i]).unwrap();
    }
    b.special(TokenId(256), "<|eos|>").unwrap();
    b.special(TokenId(257), "</think>").unwrap();
    b.eos(TokenId(256));
    let f = ParserFactory::new(Tokenizer::from_vocab(b.build().unwrap())).unwrap();
    let close = TokenId(257);
    let toks = |s: &str| -> Vec<TokenId> { s.bytes().map(|b| TokenId(b as u32)).collect() };
    let run = |tag: &Value, parts: &[Vec<TokenId>]| -> bool {
        let mut m = f.create_matcher(&GrammarSource::StructuralTag(tag.to_string())).unwrap();
        for t in parts.concat() {
            if !m.compute_mask().unwrap().contains(t) || m.consume_token(t).is_err() {
                return false;
            }
        }
        m.is_accepting().unwrap()
    };
    let tag = |thinking: Thinking| {
        structural_tag_with("qwen_3", &tools(), &json!("auto"), Reasoning::Auto, true, thinking)
            .unwrap()
    };
    let budget = tag(Thinking { budget: Some(5), strict: false });
    let after = toks("\n\nhello");
    assert!(run(&budget, &[toks("<think>abcde"), vec![close], after.clone()]));
    assert!(run(&budget, &[toks("<think>ab"), vec![close], after.clone()]));
    assert!(!run(&budget, &[toks("<think>abcdef"), vec![close], after.clone()]), "six tokens");
    // At the budget the mask holds only the close: its token, or the first byte of its text.
    let mut m = f.create_matcher(&GrammarSource::StructuralTag(budget.to_string())).unwrap();
    m.consume_tokens(&toks("<think>abcde")).unwrap();
    let mask: Vec<TokenId> = m.compute_mask().unwrap().iter().collect();
    assert_eq!(mask, vec![TokenId(b'<' as u32), close]);
    // `</think>` as one regular token (Qwen 3's vocabulary): the same.
    let mut b = VocabBuilder::new();
    b.name("bytes+think-token");
    for i in 0..=255u8 {
        b.token(TokenId(i as u32), &[i]).unwrap();
    }
    b.special(TokenId(256), "<|eos|>").unwrap();
    b.token(TokenId(257), b"</think>").unwrap();
    b.eos(TokenId(256));
    let g = ParserFactory::new(Tokenizer::from_vocab(b.build().unwrap())).unwrap();
    for (pre, ok) in [("<think>ab", true), ("<think>abcde", true), ("<think>abcdef", false)] {
        let mut m = g.create_matcher(&GrammarSource::StructuralTag(budget.to_string())).unwrap();
        let all = [toks(pre), vec![close], after.clone()].concat();
        let took = all
            .iter()
            .all(|&t| m.compute_mask().unwrap().contains(t) && m.consume_token(t).is_ok());
        assert_eq!(took && m.is_accepting().unwrap(), ok, "{pre} + the </think> token");
    }
    let plain = tag(Thinking::default());
    let strict = tag(Thinking { budget: None, strict: true });
    let text = "<think>maybe <tool_call> later</think>\n\nhello";
    assert!(accepts(&f, &plain, text));
    assert!(!accepts(&f, &strict, text), "a trigger inside strict thinking");
    assert!(accepts(&f, &strict, "<think>no call here</think>\n\nhello"));
}

/// Partial constraining (vllm-project/vllm#16979): free text, with JSON constrained only
/// inside a ```` ```json ```` fence, by `triggered_tags` (the example in
/// `grammars/src/structural_tag/mod.rs`).
#[test]
fn json_only_inside_a_fence() {
    let f = factory();
    let tag = json!({"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["```json"],
        "tags": [{"begin": "```json\n", "end": "\n```",
                  "content": {"type": "json_schema", "json_schema":
                      {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}]}});
    assert!(accepts(&f, &tag, "Here it is:\n```json\n{\"n\": 3}\n```\nDone."));
    assert!(accepts(&f, &tag, "No JSON at all, `code` and ``` fences ``` are fine."));
    assert!(
        !accepts(&f, &tag, "Here:\n```json\n{\"n\": \"three\"}\n```"),
        "schema inside the fence"
    );
    assert!(!accepts(&f, &tag, "```json\n{\"n\": 3}"), "an unclosed fence");
}

/// XGrammar 0.2.8's `max_tokens` on `any_text`: the text in at most that many tokens (one
/// byte a token here), counted exactly, with the excludes still applied. Before a tag's end
/// see `any_text_max_tokens_before_a_tag_end`.
#[test]
fn any_text_max_tokens_counts_tokens() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let st = |max: u32| {
        json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
            {"type": "const_string", "value": "A:"},
            {"type": "any_text", "max_tokens": max, "excludes": ["zz"]}]}})
    };
    let src = |max: u32| GrammarSource::StructuralTag(st(max).to_string());
    let takes = |max: u32, text: &str| -> bool {
        let mut m = f.create_matcher(&src(max)).unwrap();
        for b in text.bytes() {
            let t = TokenId(b as u32);
            if !m.compute_mask().unwrap().contains(t) || m.consume_token(t).is_err() {
                return false;
            }
        }
        m.is_accepting().unwrap()
    };
    assert!(takes(4, "A:abcd"));
    assert!(takes(4, "A:ab"));
    assert!(takes(4, "A:"));
    assert!(!takes(4, "A:abcde"), "five tokens");
    assert!(!takes(4, "A:azz"), "an exclude");
    assert!(takes(0, "A:"));
    assert!(!takes(0, "A:a"));
    // At the budget nothing but the end: only EOS.
    let mut m = f.create_matcher(&src(2)).unwrap();
    m.consume_tokens(&[
        TokenId(b'A' as u32),
        TokenId(b':' as u32),
        TokenId(b'x' as u32),
        TokenId(b'y' as u32),
    ])
    .unwrap();
    let eos = f.tokenizer().vocab().eos_tokens().to_vec();
    let mask: Vec<TokenId> = m.compute_mask().unwrap().iter().collect();
    assert_eq!(mask, eos);
}

/// `any_text` with `max_tokens` inside a tag: at most that many tokens of text (one byte a
/// token here; a token that begins the end counts), after which only the rest of the end
/// may come (as text, or as its special token); the end's own tokens are not counted.
#[test]
fn any_text_max_tokens_before_a_tag_end() {
    let f = ParserFactory::from_tokenizer_name("bytes").unwrap();
    let src = |max: u32| {
        GrammarSource::StructuralTag(
            json!({"type": "structural_tag", "format": {"type": "tag", "begin": "<t>",
                "content": {"type": "any_text", "max_tokens": max, "excludes": ["zz"]},
                "end": "</t>"}})
            .to_string(),
        )
    };
    let b = |c: char| TokenId(c as u32);
    let takes = |max: u32, text: &str| -> bool {
        let mut m = f.create_matcher(&src(max)).unwrap();
        for c in text.chars() {
            if !m.compute_mask().unwrap().contains(b(c)) || m.consume_token(b(c)).is_err() {
                return false;
            }
        }
        m.is_accepting().unwrap()
    };
    assert!(takes(3, "<t>abc</t>"));
    assert!(takes(3, "<t>ab</t>"));
    assert!(takes(3, "<t></t>"));
    assert!(takes(3, "<t>a<b</t>"), "a '<' that is no end is text");
    assert!(!takes(3, "<t>abcd</t>"), "four tokens of text");
    assert!(!takes(3, "<t>azz</t>"), "an exclude");
    assert!(!takes(3, "<t>ab<x</t>"), "past the budget, only the end");
    assert!(takes(0, "<t></t>"));
    assert!(!takes(0, "<t>a</t>"));
    let mask_after = |max: u32, text: &str| -> Vec<TokenId> {
        let mut m = f.create_matcher(&src(max)).unwrap();
        m.consume_tokens(&text.chars().map(b).collect::<Vec<_>>()).unwrap();
        m.compute_mask().unwrap().iter().collect()
    };
    assert_eq!(mask_after(3, "<t>abc"), vec![b('<')], "the budget used: the end only");
    // "<" ended the text (the end goes on) or was its third token (a whole end follows).
    assert_eq!(mask_after(3, "<t>ab<"), vec![b('/'), b('<')], "the end begun in the budget");
    assert!(mask_after(3, "<t>ab").len() > 100, "one token of text left");

    // Two ends: past the budget either may close the tag, and one begun is finished.
    let two = GrammarSource::StructuralTag(
        json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
            {"type": "tag", "begin": "<t>", "content": {"type": "any_text", "max_tokens": 2},
             "end": ["</t>", "</u>"]},
            {"type": "const_string", "value": "."}]}})
        .to_string(),
    );
    for (text, ok) in [
        ("<t>ab</t>.", true),
        ("<t>ab</u>.", true),
        ("<t>a</u>.", true),
        ("<t>abc</u>.", false),
        ("<t>ab</v>.", false),
    ] {
        let mut m = f.create_matcher(&two).unwrap();
        let took = text
            .chars()
            .all(|c| m.compute_mask().unwrap().contains(b(c)) && m.consume_token(b(c)).is_ok());
        assert_eq!(took && m.is_accepting().unwrap(), ok, "{text}");
    }

    // An end that is a special token (o200k's `<|endofprompt|>`): after the budget, that
    // token or its text spelling, nothing else.
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let end = "<|endofprompt|>";
    let special = f.tokenizer().vocab().special_token(end).expect("o200k names it");
    let st = json!({"type": "structural_tag", "format": {"type": "tag", "begin": "<t>",
        "content": {"type": "any_text", "max_tokens": 2}, "end": end}});
    let src = GrammarSource::StructuralTag(st.to_string());
    let tok = |s: &str| f.tokenizer().tokenize(s).unwrap();
    for (text, budget_left) in [("<t>", true), ("<t> hello", true), ("<t> hello world", false)] {
        let mut m = f.create_matcher(&src).unwrap();
        m.consume_tokens(&tok(text)).unwrap();
        let mask = m.compute_mask().unwrap();
        assert!(mask.contains(special), "{text:?}: the end as its token");
        assert!(mask.contains(tok("<|")[0]), "{text:?}: the end as text");
        assert_eq!(mask.contains(tok(" again")[0]), budget_left, "{text:?}: more text");
    }
    let mut m = f.create_matcher(&src).unwrap();
    m.consume_tokens(&tok("<t> hello world")).unwrap();
    m.consume_token(special).unwrap();
    assert!(m.is_accepting().unwrap());
}
