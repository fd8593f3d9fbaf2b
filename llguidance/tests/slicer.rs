//! Sliced masks equal unsliced masks at every step of random walks (o200k, grammars with
//! JSON strings of several bounds, free text, lazy lexemes, escapes), and the slicer is
//! actually used inside strings.

use llguidance::{GrammarSource, Matcher, ParserFactory, SliceSpec, TokenSet};

fn grammars() -> Vec<GrammarSource> {
    let s = |x: &str| GrammarSource::JsonSchema(x.to_string());
    let l = |x: &str| GrammarSource::Lark(x.to_string());
    vec![
        s(
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string","maxLength":50}},"required":["a","b"]}"#,
        ),
        s(r#"{"type":"array","items":{"type":"string","maxLength":5},"maxItems":4}"#),
        // Named keys sharing prefixes beside free keys: key positions are proven contained
        // symbolically, one lexeme at a time.
        s(
            r#"{"type":"object","properties":{"group":{"type":"integer"},"groupname":{"type":"string"},"groupattr":{"type":"string"},"name":{"type":"string"},"nametag":{"type":"string"},"x":{"type":"string"}}}"#,
        ),
        s(r#"{"type":"string","minLength":12,"maxLength":40}"#),
        s(r#"{"type":"string","pattern":"^[a-z ]+$"}"#),
        l(r#"start: "say: " TEXT "." 
TEXT: /[^.]{0,25}/"#),
        l(r#"start: "<" body ">"
body[lazy]: /.*/"#),
        l(r#"start: "x" STR (" " STR)*
STR: /"(\\.|[^"\\])*"/"#),
        l(r#"start: /.*END/ "!""#),
        l(r#"start: stmt+
stmt: NAME "=" expr ";" | COMMENT
expr: NAME | STRING | NUMBER | expr "+" expr
NAME: /[A-Za-z_][A-Za-z0-9_]{0,40}/
STRING: /"[^"\\\n]*"/
NUMBER: /[0-9]+/
COMMENT: /#[^\n]*\n/
%ignore /[ \t\n]+/"#),
        // JSON inside Lark across grammar boundaries: free text, a marker, one %json per
        // tool with its own whitespace, a Lark %ignore around them.
        l(r#"start: TEXT ("<tool_call>" call "</tool_call>" TEXT)*
TEXT: /[^<]{0,40}/
call: weather | note
weather: %json {"type":"object","properties":{"city":{"type":"string","maxLength":20}},"required":["city"]}
note: %json {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"x-guidance":{"whitespace_flexible":false}}"#),
        l(r#"%ignore /[ \t]+/
start: "v" "=" %json {"type":"array","items":{"type":"string"},"x-guidance":{"whitespace_pattern":"[ ]{0,2}"}} ";" inner
inner: %lark {
start: "x" STR
STR: /"[^"]{0,30}"/
%ignore /_+/
}"#),
    ]
}

/// The matcher's mask, checked equal to the one its plain twin computes (a lexer of its own,
/// no slices, no cache: nothing shared with `m`).
fn mask_as_unsliced(m: &mut Matcher, what: &str) -> TokenSet {
    let mask = m.compute_mask().unwrap();
    let mut plain = m.plain_twin().unwrap();
    assert_eq!(mask, plain.compute_mask().unwrap(), "{what}: sliced != unsliced");
    mask
}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

#[test]
fn sliced_equals_unsliced() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    assert!(f.slices().is_some());
    check(&f);
}

#[test]
fn sliced_equals_unsliced_with_the_general_set() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    check(&f.with_slice_specs(&SliceSpec::general()).unwrap());
}

fn check(f: &ParserFactory) {
    let eos = f.tokenizer().vocab().eos_tokens().to_vec();
    let mut applied = 0;
    let mut compared = 0;
    for (gi, g) in grammars().into_iter().enumerate() {
        for walk in 0..2u64 {
            let mut seed = gi as u64 * 1000 + walk + 1;
            let mut m = f.create_matcher(&g).unwrap();
            // The reference walks alongside: a lexer of its own, no slices, no cache.
            let mut plain = m.plain_twin().unwrap();
            for _step in 0..30 {
                let mask = m.compute_mask().unwrap();
                assert_eq!(
                    mask,
                    plain.compute_mask().unwrap(),
                    "grammar {gi}, walk {walk}: sliced != unsliced"
                );
                compared += 1;
                let choices: Vec<_> = mask.iter().filter(|t| !eos.contains(t)).collect();
                if choices.is_empty() {
                    break;
                }
                // Prefer long tokens half of the time, to get deep into strings.
                let t = choices[lcg(&mut seed) as usize % choices.len()];
                m.consume_token(t).unwrap();
                plain.consume_token(t).unwrap();
            }
            applied += m.slice_stats().applied;
        }
    }
    println!("{compared} masks compared, {applied} slices applied");
    assert!(applied > 0, "the slicer never applied a slice");
}

/// Bounded strings at every fill level, around the slice bounds (1–10, 11–30, 31+): a slice
/// whose longest tokens exactly fill the string is allowed whole (the lexeme may end with a
/// token's last byte), one byte more is not.
#[test]
fn sliced_equals_unsliced_at_every_fill_of_bounded_strings() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let mut applied = 0;
    for n in [1u32, 2, 9, 10, 11, 12, 29, 30, 31, 32] {
        let g = GrammarSource::JsonSchema(format!(r#"{{"type":"string","maxLength":{n}}}"#));
        let mut m = f.create_matcher(&g).unwrap();
        let quote = f.tokenizer().tokenize("\"").unwrap();
        m.consume_tokens(&quote).unwrap();
        let x = f.tokenizer().tokenize("x").unwrap();
        let mut plain = m.plain_twin().unwrap();
        for k in 0..=n {
            let mask = m.compute_mask().unwrap();
            assert_eq!(mask, plain.compute_mask().unwrap(), "maxLength {n}, {k} characters in");
            if k < n {
                m.consume_tokens(&x).unwrap();
                plain.consume_tokens(&x).unwrap();
            }
        }
        applied += m.slice_stats().applied;
    }
    assert!(applied > 10, "slices applied only {applied} times");
}

/// Along whole transcripts that cross from Lark into `%json` and `%lark` sub-grammars and
/// back, with each grammar's own whitespace, every sliced mask equals the unsliced one and
/// every token of the transcript is allowed.
#[test]
fn sliced_equals_unsliced_across_grammar_boundaries() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let gs = grammars();
    let n = gs.len();
    let cases = [
        (
            &gs[n - 2],
            r#"Sure.<tool_call>{ "city" : "Paris" }</tool_call> then <tool_call>{"text":"a b"}</tool_call>done"#,
        ),
        (&gs[n - 1], r#"v =[ "a",  "b" ] ;x__"hello there""#),
    ];
    for (gi, (g, text)) in cases.iter().enumerate() {
        let mut m = f.create_matcher(g).unwrap();
        let toks = f.tokenizer().tokenize(text).unwrap();
        for (i, &t) in toks.iter().enumerate() {
            let mask = mask_as_unsliced(&mut m, &format!("case {gi}, step {i}"));
            assert!(mask.contains(t), "case {gi}, step {i}: token {t:?} of the transcript refused");
            m.consume_token(t).unwrap();
        }
        assert!(m.is_accepting().unwrap(), "case {gi}: transcript not accepted");
    }
}

/// Free text up to a trigger, a tag or an excluded string (structural tags for tool calls,
/// `<think>` sections, Lark stop strings and lazy rules): along transcripts and from every
/// step one detour through a token holding `<`, `[`, `{` or `>` (where delimiters begin and
/// end), each sliced mask equals the unsliced one; and free text does use the slices.
#[test]
fn sliced_equals_unsliced_in_free_text() {
    use grammars::tool_calls::{structural_tag, Reasoning};
    use serde_json::json;
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let tools = vec![
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}),
        json!({"type": "function", "function": {"name": "search", "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}),
    ];
    let tag = |model: &str, r: Reasoning| {
        let t = structural_tag(model, &tools, &json!("auto"), r, true).unwrap();
        GrammarSource::StructuralTag(t.to_string())
    };
    let lark = |x: &str| GrammarSource::Lark(x.to_string());
    let cases = [
        (
            tag("qwen_3", Reasoning::Disabled),
            "Let me check <that> [now] {ok}.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call> and <b>done</b>",
        ),
        (
            tag("qwen_3", Reasoning::Enabled),
            "I <should> look, <thin k> no.</think>\n\nText <tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>",
        ),
        (
            tag("qwen_3_coder", Reasoning::Auto),
            "<think>hm <tool</think>\n\nOK <tool_call>\n<function=search>\n<parameter=q>\nOslo < x\n</parameter>\n</function>\n</tool_call>",
        ),
        (tag("mistral", Reasoning::Disabled), "See [1] and [TOOL] then [TOOL_CALLS] [{\"name\": \"search\", \"arguments\": {\"q\": \"z\"}}]"),
        (tag("llama", Reasoning::Disabled), "{\"name\": \"search\", \"parameters\": {\"q\": \"{[<\"}}"),
        (lark("start: \"A\" body \"Z\"\nbody[lazy]: /(.|\\n)*>>/"), "Aone <two> [three]\nfour>>Z"),
        (
            lark("start: gen \"!\"\ngen[stop=\"</end>\"]: /(.|\\n)*/"),
            "text with </en and <end> and </ end></end>!",
        ),
    ];
    let mut applied = 0;
    for (ci, (g, text)) in cases.iter().enumerate() {
        let mut m = f.create_matcher(g).unwrap_or_else(|e| panic!("case {ci}: {e}"));
        let toks = f.tokenizer().tokenize(text).unwrap();
        let mut seed = ci as u64 + 7;
        for (i, &t) in toks.iter().enumerate() {
            let mask = mask_as_unsliced(&mut m, &format!("case {ci}, step {i}"));
            assert!(mask.contains(t), "case {ci}, step {i}: token {t:?} of the transcript refused");
            // A detour: a random allowed token with a delimiter character, then compare again.
            let vocab = f.tokenizer().vocab();
            let odd: Vec<_> = mask
                .iter()
                .filter(|&c| !vocab.is_special(c))
                .filter(|&c| vocab.token_bytes(c).iter().any(|b| b"<[{>".contains(b)))
                .collect();
            if !odd.is_empty() {
                let mut d = m.deep_clone();
                d.consume_token(odd[lcg(&mut seed) as usize % odd.len()]).unwrap();
                mask_as_unsliced(&mut d, &format!("case {ci}, detour at {i}"));
                applied += d.slice_stats().applied;
            }
            m.consume_token(t).unwrap();
        }
        assert!(m.is_accepting().unwrap(), "case {ci}: transcript not accepted");
        applied += m.slice_stats().applied;
    }
    assert!(applied > 50, "slices applied only {applied} times in free text");
}

/// Free text right after the first characters of a trigger (`<`, `<tool`): no slice is
/// proven whole (a token may complete `<tool_call>`), but the free-text slice is proven
/// by first character (only tokens starting with the trigger's next character are walked).
/// The masks equal the unsliced ones, with multi-byte characters around; fails if a
/// first-character group is allowed or dropped wrongly.
#[test]
fn slices_proven_in_part_after_a_delimiter_prefix() {
    use grammars::tool_calls::{structural_tag, Reasoning};
    use serde_json::json;
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let tools = vec![json!({"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}})];
    let tag = structural_tag("qwen_3", &tools, &json!("auto"), Reasoning::Disabled, true).unwrap();
    // Through its IR: compiling the tag itself warms the grammar (`ParserFactory::warm_up`),
    // and these masks would replay the warm-up's split walks instead of the part proofs.
    let ir = GrammarSource::StructuralTag(tag.to_string()).to_ir().unwrap();
    let g = GrammarSource::Ir(serde_json::to_string(&ir).unwrap());
    let lazy = GrammarSource::Lark("start: \"A\" body \"Z\"\nbody[lazy]: /(.|\\n)*<\\/é>/".into());
    // After `a` the lexeme may end: `#` cannot extend it but starts the next one.
    let ends = GrammarSource::Lark("start: X (\"#\" Y)?\nX: /a([^#<][^<]*)?/\nY: /[a-z]+/".into());
    let mut partial = 0;
    for (g, prefix) in [
        (&ends, "a"),
        (&g, "Grüße, 日本語 <"),
        (&g, "Grüße <tool"),
        (&g, "x <tool_c"),
        (&g, "<think"),
        (&lazy, "A text </"),
        (&lazy, "A 日本 </é"),
    ] {
        let mut m = f.create_matcher(g).unwrap();
        for t in f.tokenizer().tokenize(prefix).unwrap() {
            m.consume_token(t).unwrap();
        }
        let mask = mask_as_unsliced(&mut m, prefix);
        assert!(mask.count() > 1000, "{prefix}: free text goes on");
        partial += m.slice_stats().partial;
        // One more step from every first byte's group: a token of each allowed first byte.
        let vocab = f.tokenizer().vocab();
        let mut seen = [false; 256];
        for t in mask.iter().filter(|&t| !vocab.is_special(t)) {
            let b = vocab.token_bytes(t)[0] as usize;
            if !seen[b] {
                seen[b] = true;
                let mut d = m.deep_clone();
                d.consume_token(t).unwrap();
                mask_as_unsliced(&mut d, &format!("{prefix} then {t:?}"));
            }
        }
    }
    assert!(partial >= 5, "slices proven in part: {partial}");
}

/// Split walks (kept per lexer state, shared through the grammar's lexer template): matchers
/// of one compiled grammar, first one for a few steps (a small template), then three at a
/// time copied from the same template (their newer states numbered each their own way),
/// along random walks; every mask equals the unsliced one, and walks were replayed from
/// splits.
#[test]
fn split_walks_across_a_grammars_matchers() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let eos = f.tokenizer().vocab().eos_tokens().to_vec();
    let mut grammars = grammars();
    grammars.push(GrammarSource::JsonSchema(
        r#"{"type":"object","properties":{"a":{},"b":{"type":"string"},"c":{"type":"array","items":{"type":"string","maxLength":8}},"d":{"type":"boolean"}},"required":["a","b","c","d"]}"#
            .into(),
    ));
    let mut split = 0;
    // JSON objects and strings, Lark with lexeme ends inside tokens, JSON inside Lark.
    for gi in [0, 2, 9, 10, grammars.len() - 1] {
        let g = f.compile(&grammars[gi]).unwrap();
        for round in 0..4 {
            // First one matcher a few steps (a small template), then three at a time.
            let (n, steps) = if round == 0 { (1, 4) } else { (3, 25) };
            let mut ms: Vec<_> = (0..n).map(|_| f.matcher_for(g.clone()).unwrap()).collect();
            let mut seeds: Vec<u64> = (0..n).map(|k| gi as u64 * 1000 + k + 3 * round).collect();
            let mut live = [true; 3];
            for step in 0..steps {
                for k in 0..n as usize {
                    if !live[k] {
                        continue;
                    }
                    let what = format!("grammar {gi}, round {round}, matcher {k}, step {step}");
                    let mask = mask_as_unsliced(&mut ms[k], &what);
                    let choices: Vec<_> = mask.iter().filter(|t| !eos.contains(t)).collect();
                    if choices.is_empty() {
                        live[k] = false;
                        continue;
                    }
                    // Short tokens three times in four (more positions, more lexeme ends).
                    let r = lcg(&mut seeds[k]) as usize;
                    let short: Vec<_> = choices
                        .iter()
                        .copied()
                        .filter(|&t| f.tokenizer().vocab().token_bytes(t).len() <= 2)
                        .collect();
                    let pool = if r % 4 != 0 && !short.is_empty() { &short } else { &choices };
                    ms[k].consume_token(pool[(r / 4) % pool.len()]).unwrap();
                }
            }
            split += ms.iter().map(|m| m.slice_stats().split).sum::<u64>();
        }
    }
    println!("split walks replayed {split} times");
    assert!(split > 100, "split walks replayed {split} times");
}

/// A lexer state's first mask splits its trie walk (the lexer's part done alone, kept for
/// the state's next masks): a fresh matcher's walks are split from its first mask on, and
/// each mask equals the unsliced one; a matcher of the same grammar made afterwards
/// replays them.
#[test]
fn a_states_first_mask_splits_its_walk() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let g = f
        .compile(&GrammarSource::JsonSchema(
            r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#
                .into(),
        ))
        .unwrap();
    let text = r#"{"name": "a long name with words"}"#;
    let toks = f.tokenizer().tokenize(text).unwrap();
    for round in 0..2 {
        let mut m = f.matcher_for(g.clone()).unwrap();
        let mut first = None;
        for (i, &t) in toks.iter().enumerate() {
            let mask = mask_as_unsliced(&mut m, &format!("round {round}, token {i}"));
            assert!(mask.contains(t), "round {round}, token {i}: refused");
            first.get_or_insert(m.slice_stats());
            m.consume_token(t).unwrap();
        }
        // Over the decode, every walk of a slice or of the whole trie was done from a split
        // (`split` also counts the rest of the vocabulary's walks); the first matcher's
        // first mask was one (the second answers it from the grammar's first-row masks).
        let (first, all) = (first.unwrap(), m.slice_stats());
        assert!(all.split >= all.walked, "round {round}: {all:?}");
        if round == 0 {
            assert!(first.split >= 1, "the first mask walked whole: {first:?}");
            assert!(all.walked >= 1, "{all:?}");
        }
    }
}

/// Formats and patterns of fewer characters than a string's (an email's atoms, a URI's host
/// and path, a hostname, an identifier pattern) allow the standard set's first slice, runs
/// of up to 10 ASCII letters and digits, whole: their first masks walked the whole trie.
/// Masks equal the plain computation's along each instance.
#[test]
fn restricted_strings_allow_the_alphanumeric_slice_whole() {
    let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
    let first = &f.slices().unwrap().slices()[0];
    assert_eq!(first.spec().class, "[A-Za-z0-9]");
    let cases = [
        (r#"{"type":"string","format":"email"}"#, r#""joe.bloggs@mail.example.com""#),
        (r#"{"type":"string","format":"uri"}"#, r#""https://www.example.com/path/to/page""#),
        (r#"{"type":"string","format":"hostname","maxLength":200}"#, r#""api.example.org""#),
        (r#"{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,255}$"}"#, r#""item_42-abc""#),
    ];
    for (schema, text) in cases {
        let mut m = f.create_matcher(&GrammarSource::JsonSchema(schema.to_string())).unwrap();
        let toks = f.tokenizer().tokenize(text).unwrap();
        for (i, &t) in toks.iter().enumerate() {
            let mask = mask_as_unsliced(&mut m, &format!("{schema} at token {i}"));
            assert!(mask.contains(t), "{schema}: token {i} refused");
            m.consume_token(t).unwrap();
        }
        assert!(m.is_accepting().unwrap(), "{schema}: {text} not accepted");
        let applied = m.slice_stats().applied;
        assert!(applied > 0, "{schema}: no slice allowed whole inside the string");
    }
}
