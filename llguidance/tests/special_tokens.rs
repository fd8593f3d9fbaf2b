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
