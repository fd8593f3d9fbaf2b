//! Special tokens over real vocabularies (Llama 3, Qwen 3, Tekken in `../shared/tokenizers`;
//! env `LLG_SHARED`): free text, a regex, a JSON string and Lark's `%json` never allow a
//! special token the grammar does not name (EOS only where the grammar accepts); a grammar
//! that names one (`<|start_header_id|>`, `[TOOL_CALLS]`, `<[id]>`) allows exactly it there.
//! Ignored by default (the files are not shipped); `.ci/run` runs it with `--ignored` when
//! `../shared` is there, and then a missing file fails.

use std::path::PathBuf;

use llguidance::{GrammarSource, Matcher, ParserFactory, TokenSet};

fn tokenizer(file: &str) -> ParserFactory {
    let dir = match std::env::var_os("LLG_SHARED") {
        Some(d) => PathBuf::from(d).join("tokenizers"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/tokenizers"),
    };
    let path = dir.join(file);
    assert!(path.is_file(), "{} is missing: this test needs ../shared", path.display());
    ParserFactory::from_tokenizer_name(path.to_str().unwrap()).expect("loads")
}

/// The special tokens in `mask` that are not EOS ids.
fn specials(f: &ParserFactory, mask: &TokenSet) -> Vec<String> {
    let v = f.tokenizer().vocab();
    mask.iter()
        .filter(|&t| v.is_special(t) && !v.eos_tokens().contains(&t))
        .map(|t| v.token_display(t))
        .collect()
}

/// Masks along `text` (tokenized as text), none allowing an unnamed special token.
fn no_specials_along(f: &ParserFactory, src: &GrammarSource, text: &str) {
    let mut m: Matcher = f.create_matcher(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
    for t in f.tokenizer().tokenize(text).unwrap() {
        let mask = m.compute_mask().unwrap();
        let s = specials(f, &mask);
        assert!(s.is_empty(), "{src:?} allows special tokens {s:?}");
        if !mask.contains(t) {
            break;
        }
        m.consume_token(t).unwrap();
    }
}

#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn text_regexes_and_json_strings_never_allow_unnamed_special_tokens() {
    for (file, named) in [
        ("llama3.tokenizer.json", "<|start_header_id|>"),
        ("qwen3.tokenizer.json", "<|im_start|>"),
        ("tekken_240718.json", "[TOOL_CALLS]"),
        ("mistral_instruct_tokenizer_240323.model.v3", "[TOOL_CALLS]"),
        ("mistral-7b-v0.1.tokenizer.json", "<s>"),
        ("o200k.tokenizer.json", "<|endofprompt|>"),
        ("cl100k_base.tiktoken", "<|endofprompt|>"),
    ] {
        let f = tokenizer(file);
        let text = "Hello, world: {\"a\": 1} <tool_call> [TOOL_CALLS] <|python_tag|> done";
        for src in [
            GrammarSource::Lark("start: /(?s:.*)/".into()),
            GrammarSource::Regex("(?s:.*)".into()),
            GrammarSource::JsonSchema(r#"{"type": "string"}"#.into()),
            GrammarSource::JsonSchema(r#"{"type": "object"}"#.into()),
            GrammarSource::Lark("start: \"x\" %json {\"type\": \"string\"}".into()),
        ] {
            no_specials_along(&f, &src, text);
        }
        // Named: the special token is allowed exactly where the grammar puts it.
        let id = f.tokenizer().vocab().special_token(named);
        let id = id.unwrap_or_else(|| panic!("{file}: {named} is a special token"));
        // Lark names `<|…|>` tokens by name, others by id.
        let term =
            if named.starts_with("<|") { named.to_string() } else { format!("<[{}]>", id.0) };
        let g = GrammarSource::Lark(format!("start: /[a-z ]*/ {term} /[a-z]*/"));
        let mut m = f.create_matcher(&g).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mask = m.compute_mask().unwrap();
        assert_eq!(specials(&f, &mask), vec![f.tokenizer().vocab().token_display(id)], "{file}");
        m.consume_token(id).unwrap();
        assert!(specials(&f, &m.compute_mask().unwrap()).is_empty(), "{file}: after it");
        let g = GrammarSource::Lark(format!("start: \"a\" <[{}]>", id.0));
        let mut m = f.create_matcher(&g).unwrap();
        m.consume_tokens(&f.tokenizer().tokenize("a").unwrap()).unwrap();
        assert!(m.compute_mask().unwrap().contains(id), "{file}: <[id]>");
    }
}

/// Ids of `s` spelled as ordinary tokens: each piece tokenized on its own.
fn spelled(f: &ParserFactory, pieces: &[&str]) -> Vec<llguidance::TokenId> {
    pieces.iter().flat_map(|p| f.tokenizer().tokenize(p).unwrap()).collect()
}

/// Whether the matcher takes `toks` and then allows EOS.
fn takes(f: &ParserFactory, src: &GrammarSource, toks: &[llguidance::TokenId]) -> bool {
    let mut m = f.create_matcher(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
    for &t in toks {
        if !m.compute_mask().unwrap().contains(t) || m.consume_token(t).is_err() {
            return false;
        }
    }
    let eos = f.tokenizer().vocab().eos_tokens()[0];
    m.compute_mask().unwrap().contains(eos)
}

#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn tag_delimiters_are_taken_as_the_token_and_as_its_text() {
    // vllm-project/vllm#55152: a tool parser sees a delimiter either way, so the grammar
    // must take both: the vocabulary's one token for it, and its text in ordinary tokens.
    for (file, begin, end, begin_pieces, end_pieces) in [
        (
            "qwen3.tokenizer.json",
            "<tool_call>",
            "</tool_call>",
            &["<", "tool", "_call", ">"][..],
            &["</", "tool", "_call", ">"][..],
        ),
        (
            "llama3.tokenizer.json",
            "<|start_header_id|>",
            "<|end_header_id|>",
            &["<|", "start", "_header", "_id", "|>"][..],
            &["<|", "end", "_header", "_id", "|>"][..],
        ),
        (
            "tekken_240718.json",
            "[TOOL_RESULTS]",
            "[/TOOL_RESULTS]",
            &["[", "TOOL", "_RESULTS", "]"][..],
            &["[/", "TOOL", "_RESULTS", "]"][..],
        ),
    ] {
        let f = tokenizer(file);
        // the vocabulary's one token: a special token by name, or an added ordinary one
        let one = |s: &str| match f.tokenizer().vocab().special_token(s) {
            Some(id) => id,
            None => {
                let ids = f.tokenizer().tokenize(s).unwrap();
                assert_eq!(ids.len(), 1, "{file}: {s} is one token ({ids:?})");
                ids[0]
            }
        };
        let (b, e) = (one(begin), one(end));
        let st = format!(
            r#"{{"type": "structural_tag", "format": {{"type": "triggered_tags", "triggers": ["{begin}"],
               "tags": [{{"begin": "{begin}", "content": {{"type": "json_schema",
               "json_schema": {{"type": "object", "properties": {{"n": {{"const": 1}}}}, "required": ["n"]}}}},
               "end": "{end}"}}]}}}}"#
        );
        let src = GrammarSource::StructuralTag(st);
        let body = f.tokenizer().tokenize("{\"n\": 1}").unwrap();
        let text = f.tokenizer().tokenize("Hi ").unwrap();
        let run = |bt: &[llguidance::TokenId], et: &[llguidance::TokenId]| {
            let toks: Vec<_> = text.iter().chain(bt).chain(&body).chain(et).copied().collect();
            takes(&f, &src, &toks)
        };
        let (bs, es) = (spelled(&f, begin_pieces), spelled(&f, end_pieces));
        assert!(bs.len() > 1 && es.len() > 1, "{file}: the spellings are several tokens");
        assert!(!bs.contains(&b) && !es.contains(&e), "{file}: spelled without the token");
        assert!(run(&[b], &[e]), "{file}: {begin} … {end} as tokens");
        assert!(run(&bs, &es), "{file}: {begin} … {end} as text");
        assert!(run(&[b], &es), "{file}: token begin, text end");
        assert!(run(&bs, &[e]), "{file}: text begin, token end");
        // and nothing else: a broken delimiter is refused
        assert!(!run(&bs[..bs.len() - 1], &[e]), "{file}: a partial begin");
    }
}
