//! Loader and tokenizer checks over the real tokenizer files in `../shared/tokenizers`
//! (env `LLG_SHARED`: the `shared` directory or its `tokenizers` subdirectory). Ignored by
//! default (the files are not shipped with the crate); `.ci/run` runs them with `--ignored`
//! when `../shared` is there, and then a missing file fails.

use std::path::PathBuf;
use std::time::Instant;

use toktrie::{load, TokenId, Tokenizer, Vocabulary};

fn shared_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LLG_SHARED") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.join("tokenizers").is_dir() {
                d.join("tokenizers")
            } else {
                d
            }
        }
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/tokenizers"),
    };
    if dir.join("README.md").is_file() || dir.join("o200k_base.tiktoken").is_file() {
        Some(dir)
    } else {
        panic!("../shared not found (looked in {}): this test needs it", dir.display())
    }
}

/// (file, number of ids, default EOS id, EOS name)
const FILES: &[(&str, usize, u32, &str)] = &[
    ("llama3.tokenizer.json", 128_256, 128_001, "<|end_of_text|>"),
    ("qwen3.tokenizer.json", 151_669, 151_643, "<|endoftext|>"),
    ("mistral-7b-v0.1.tokenizer.json", 32_000, 2, "</s>"),
    ("o200k.tokenizer.json", 200_019, 199_999, "<|endoftext|>"),
    ("o200k_base.tiktoken", 200_019, 199_999, "<|endoftext|>"),
    ("cl100k_base.tiktoken", 100_277, 100_257, "<|endoftext|>"),
    ("tekken_240718.json", 131_072, 2, "</s>"),
    ("mistral_instruct_tokenizer_240323.model.v3", 32_768, 2, "</s>"),
];

const TEXTS: &[&str] = &[
    "hello world",
    "Hello, World! How are you doing today?",
    "  leading spaces and trailing   ",
    "fn main() {\n    println!(\"{}\", 1 + 2);\n}\n",
    "naïve café — déjà vu: 東京 📦 ",
    "numbers 1234567 3.14159 and\ttabs\r\n",
    "I'm sure they've done it; we'll see.",
    "{\"key\": [1, 2, {\"x\": null}]}",
];

fn load_tokenizer(dir: &std::path::Path, file: &str) -> Tokenizer {
    let t0 = Instant::now();
    let v = load::from_file(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let t_vocab = t0.elapsed();
    let t1 = Instant::now();
    let tok = Tokenizer::from_file(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    eprintln!(
        "{file}: vocabulary {:.1} ms, tokenizer {:.1} ms ({} ids, canonical: {})",
        t_vocab.as_secs_f64() * 1e3,
        t1.elapsed().as_secs_f64() * 1e3,
        v.len(),
        tok.canonical_kind()
    );
    assert_eq!(v.len(), tok.vocab().len());
    tok
}

#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn real_files_load_with_expected_sizes_and_eos() {
    let Some(dir) = shared_dir() else { return };
    for &(file, n, eos, eos_name) in FILES {
        let tok = load_tokenizer(&dir, file);
        let v = tok.vocab();
        assert_eq!(v.len(), n, "{file}: number of ids");
        assert_eq!(v.eos_token(), Some(TokenId(eos)), "{file}: EOS");
        assert_eq!(v.special_name(TokenId(eos)), Some(eos_name), "{file}: EOS name");
        assert_eq!(v.special_token(eos_name), Some(TokenId(eos)), "{file}");
        for (t, b) in v.iter() {
            assert!(v.is_special(t) || !b.contains(&0xFF) || b.len() <= 16, "{file}: token {t}");
        }
    }
}

fn bytes_of(v: &Vocabulary, id: u32) -> &[u8] {
    v.token_bytes(TokenId(id))
}

#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn real_files_known_tokens() {
    let Some(dir) = shared_dir() else { return };
    let m = load::from_file(dir.join("mistral-7b-v0.1.tokenizer.json")).unwrap();
    assert_eq!(bytes_of(&m, 28705), b" ");
    assert_eq!(bytes_of(&m, 272), b" the");
    for b in 0..256u32 {
        assert_eq!(bytes_of(&m, 3 + b), &[b as u8], "byte fallback token {}", 3 + b);
        assert!(!m.is_special(TokenId(3 + b)));
    }
    assert_eq!(m.special_name(TokenId(0)), Some("<unk>"));
    assert_eq!(m.special_name(TokenId(1)), Some("<s>"));

    // Mistral v3 SentencePiece: 768 more control tokens before the same pieces.
    let m3 = load::from_file(dir.join("mistral_instruct_tokenizer_240323.model.v3")).unwrap();
    assert_eq!(m3.special_name(TokenId(3)), Some("[INST]"));
    // 1 unknown + 750 control pieces are special; the 20 user-defined `[REFERENCE_DOC_i]`
    // pieces are regular tokens with their text.
    assert_eq!(m3.special_tokens().count(), 751);
    assert_eq!(bytes_of(&m3, 751), b"[REFERENCE_DOC_19]");
    for b in 0..256u32 {
        assert_eq!(bytes_of(&m3, 771 + b), &[b as u8]);
    }
    for id in 259..32_000 {
        assert_eq!(bytes_of(&m3, id + 768), bytes_of(&m, id), "v3 id {}", id + 768);
    }

    let llama = load::from_file(dir.join("llama3.tokenizer.json")).unwrap();
    assert_eq!(llama.special_name(TokenId(128_000)), Some("<|begin_of_text|>"));
    assert_eq!(llama.special_name(TokenId(128_009)), Some("<|eot_id|>"));
    assert_eq!(llama.special_tokens().count(), 256);
    assert_eq!(bytes_of(&llama, 1820), b"the");
    assert_eq!(bytes_of(&llama, 279), b" the");

    let qwen = load::from_file(dir.join("qwen3.tokenizer.json")).unwrap();
    let think = qwen.special_token("<think>").expect("<think> is special");
    assert_eq!(think, TokenId(151_667));
    assert_eq!(qwen.special_tokens().count(), 26);

    // o200k: the HF file and the rank file are the same vocabulary, holes included.
    let oj = load::from_file(dir.join("o200k.tokenizer.json")).unwrap();
    let ot = load::from_file(dir.join("o200k_base.tiktoken")).unwrap();
    assert_eq!(oj.len(), ot.len());
    for i in 0..oj.len() {
        let t = TokenId::from_usize(i);
        assert_eq!(oj.token_bytes(t), ot.token_bytes(t), "o200k id {i}");
    }
    assert!(oj.token_bytes(TokenId(199_998)).is_empty());
    assert!(oj.token_bytes(TokenId(200_017)).is_empty());
    assert_eq!(ot.special_name(TokenId(200_018)), Some("<|endofprompt|>"));
    #[cfg(feature = "tiktoken")]
    {
        let ob = load::builtin("o200k").unwrap();
        assert_eq!(ob.len(), ot.len());
        assert!(ob.iter().eq(ot.iter()));
        let cb = load::builtin("cl100k").unwrap();
        let ct = load::from_file(dir.join("cl100k_base.tiktoken")).unwrap();
        assert!(cb.iter().eq(ct.iter()));
        assert_eq!(cb.special_name(TokenId(100_276)), Some("<|endofprompt|>"));
    }

    let tk = load::from_file(dir.join("tekken_240718.json")).unwrap();
    assert_eq!(tk.special_name(TokenId(3)), Some("[INST]"));
    assert_eq!(tk.special_name(TokenId(19)), Some("[TOOL_CONTENT]"));
    assert_eq!(tk.special_name(TokenId(999)), Some("<SPECIAL_999>"));
    assert_eq!(bytes_of(&tk, 1000), b"\0");
    assert_eq!(tk.special_tokens().count(), 1000);
}

#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn real_files_canonical_tokenization_round_trips() {
    let Some(dir) = shared_dir() else { return };
    for &(file, ..) in FILES {
        let tok = Tokenizer::from_file(dir.join(file)).unwrap();
        let expect_canonical = match file {
            f if f.ends_with(".json") || f.contains(".model") => {
                cfg!(feature = "hf") && !f.starts_with("tekken")
            }
            _ => false,
        } || (cfg!(feature = "tiktoken")
            && (file.ends_with(".tiktoken") || file.starts_with("tekken")));
        assert_eq!(tok.has_canonical(), expect_canonical, "{file}: {}", tok.canonical_kind());
        if !tok.has_canonical() {
            let e = tok.tokenize("hello").unwrap_err();
            assert_eq!(e.kind(), toktrie::ErrorKind::Tokenize);
            continue;
        }
        for text in TEXTS {
            let ids = tok.tokenize(text).unwrap();
            assert_eq!(tok.vocab().decode(&ids), text.as_bytes(), "{file}: {text:?} -> {ids:?}");
            assert!(ids.iter().all(|&t| !tok.vocab().is_special(t)), "{file}: {text:?}");
            assert_eq!(tok.tokenize_bytes(text.as_bytes()).unwrap(), ids, "{file}");
        }
        // Specials are text for tokenize, tokens for tokenize_with_special.
        let eos = tok.vocab().eos_token().unwrap();
        let name = tok.vocab().special_name(eos).unwrap().to_string();
        let text = format!("a{name}b");
        assert!(!tok.tokenize(&text).unwrap().contains(&eos), "{file}");
        let with = tok.tokenize_with_special(&text).unwrap();
        assert!(with.contains(&eos), "{file}: {with:?}");
        assert_eq!(tok.vocab().decode(&with), text.as_bytes());
        // Invalid UTF-8 falls back to byte tokens; the special marker gives the special token.
        let mut bytes = b"ab\xffcd".to_vec();
        bytes.push(0xFF);
        bytes.extend_from_slice(name.as_bytes());
        let ids = tok.tokenize_bytes(&bytes).unwrap();
        assert_eq!(*ids.last().unwrap(), eos, "{file}");
        assert_eq!(tok.vocab().decode(&ids[..ids.len() - 1]), b"ab\xffcd", "{file}");
    }
}

#[cfg(feature = "tiktoken")]
#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn real_files_tiktoken_known_ids() {
    let Some(dir) = shared_dir() else { return };
    let file = Tokenizer::from_file(dir.join("o200k_base.tiktoken")).unwrap();
    let builtin = Tokenizer::builtin("o200k").unwrap();
    assert_eq!(builtin.tokenize("hello world").unwrap(), [TokenId(24912), TokenId(2375)]);
    for text in TEXTS {
        assert_eq!(file.tokenize(text).unwrap(), builtin.tokenize(text).unwrap(), "{text:?}");
    }
    let cl = Tokenizer::from_file(dir.join("cl100k_base.tiktoken")).unwrap();
    assert_eq!(cl.tokenize("hello world").unwrap(), [TokenId(15339), TokenId(1917)]);
    let clb = Tokenizer::builtin("cl100k").unwrap();
    for text in TEXTS {
        assert_eq!(cl.tokenize(text).unwrap(), clb.tokenize(text).unwrap(), "{text:?}");
    }
}

#[cfg(all(feature = "tiktoken", feature = "hf"))]
#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn real_files_o200k_json_matches_tiktoken() {
    let Some(dir) = shared_dir() else { return };
    let json = Tokenizer::from_file(dir.join("o200k.tokenizer.json")).unwrap();
    let builtin = Tokenizer::builtin("o200k").unwrap();
    assert_eq!(json.canonical_kind(), "hf");
    for text in TEXTS {
        assert_eq!(json.tokenize(text).unwrap(), builtin.tokenize(text).unwrap(), "{text:?}");
    }
}

#[cfg(feature = "hf")]
#[test]
#[ignore = "needs ../shared/tokenizers (or LLG_SHARED); .ci/run runs it with --ignored when ../shared is there"]
fn real_files_sentencepiece_model_matches_tokenizer_json() {
    let Some(dir) = shared_dir() else { return };
    let json = Tokenizer::from_file(dir.join("mistral-7b-v0.1.tokenizer.json")).unwrap();
    let model =
        Tokenizer::from_file(dir.join("mistral_instruct_tokenizer_240323.model.v3")).unwrap();
    // No dummy prefix: "hello" is `hello`, not `▁hello`.
    let hello = json.tokenize("hello").unwrap();
    assert_eq!(json.vocab().decode(&hello), b"hello");
    assert_eq!(json.tokenize(" the").unwrap(), [TokenId(272)]);
    for text in TEXTS {
        let a: Vec<TokenId> =
            json.tokenize(text).unwrap().into_iter().map(|t| TokenId(t.0 + 768)).collect();
        assert_eq!(model.tokenize(text).unwrap(), a, "{text:?}");
    }
}
