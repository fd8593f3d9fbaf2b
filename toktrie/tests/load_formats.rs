//! Loaders on small tokenizer files built here (no `../shared` needed): HF tokenizer.json
//! (byte-level and SentencePiece style), tiktoken, tekken, SentencePiece protobuf, and
//! malformed files (errors, never panics).

use serde_json::json;
use toktrie::{load, ErrorKind, TokenId, Tokenizer, Vocabulary};

fn b64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn ids(v: &[u32]) -> Vec<TokenId> {
    v.iter().map(|&i| TokenId(i)).collect()
}

/// GPT-2 `bytes_to_unicode`.
fn byte_char(b: u8) -> char {
    let printable =
        |b: u32| (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
    if printable(b as u32) {
        return char::from_u32(b as u32).unwrap();
    }
    let n = (0..b as u32).filter(|&x| !printable(x)).count() as u32;
    char::from_u32(256 + n).unwrap()
}

fn byte_level_json() -> Vec<u8> {
    let mut vocab = serde_json::Map::new();
    for b in 0..=255u8 {
        vocab.insert(byte_char(b).to_string(), json!(b));
    }
    vocab.insert("ab".into(), json!(256));
    vocab.insert("\u{120}a".into(), json!(257));
    vocab.insert("\u{120}ab".into(), json!(258));
    vocab.insert("\u{10a}".repeat(2), json!(259)); // "\n\n"
    let doc = json!({
        "version": "1.0",
        "added_tokens": [
            {"id": 261, "content": "<|end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 262, "content": "<tool>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
            {"id": 263, "content": "hello", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
            {"id": 264, "content": "<|endoftext|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        ],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, "byte_fallback": false,
                  "vocab": vocab, "merges": ["a b", "\u{120} a", "\u{120} ab", "\u{10a} \u{10a}"]}
    });
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn hf_byte_level() {
    let v = load::hf_tokenizer_json(&byte_level_json()).unwrap();
    assert_eq!(v.len(), 265);
    assert_eq!(v.token_bytes(TokenId(32)), b" ");
    assert_eq!(v.token_bytes(TokenId(10)), b"\n");
    assert_eq!(v.token_bytes(TokenId(0xAD)), b"\xad");
    assert_eq!(v.token_bytes(TokenId(258)), b" ab");
    assert_eq!(v.token_bytes(TokenId(259)), b"\n\n");
    assert!(v.token_bytes(TokenId(260)).is_empty(), "260 is a hole");
    assert_eq!(v.special_name(TokenId(261)), Some("<|end|>"));
    assert_eq!(v.special_name(TokenId(262)), Some("<tool>"), "added <...> tokens are special");
    assert_eq!(v.token_bytes(TokenId(263)), b"hello");
    assert!(!v.is_special(TokenId(263)));
    assert_eq!(v.eos_token(), Some(TokenId(264)), "default EOS <|endoftext|>");

    let tok = Tokenizer::from_bytes("tokenizer.json", &byte_level_json()).unwrap();
    if cfg!(feature = "hf") {
        assert_eq!(tok.canonical_kind(), "hf");
        assert_eq!(tok.tokenize("ab ab").unwrap(), ids(&[256, 258]));
        assert_eq!(tok.tokenize("ab\n\n a").unwrap(), ids(&[256, 259, 257]));
        assert_eq!(tok.tokenize_with_special("a<|end|>b").unwrap(), ids(&[97, 261, 98]));
        let plain = tok.tokenize("a<|end|>b").unwrap();
        assert!(!plain.contains(&TokenId(261)));
        assert_eq!(v.decode(&plain), b"a<|end|>b");
        assert_eq!(tok.tokenize_bytes(b"ab\xff\xfe ab").unwrap(), ids(&[256, 255, 254, 258]));
        let mut marked = b"ab".to_vec();
        marked.extend_from_slice(v.token_bytes(TokenId(261)));
        assert_eq!(tok.tokenize_bytes(&marked).unwrap(), ids(&[256, 261]));
    } else {
        assert!(!tok.has_canonical());
        assert_eq!(tok.tokenize("ab").unwrap_err().kind(), ErrorKind::Tokenize);
    }
    assert_eq!(tok.tokenize_greedy(b" ab ab").unwrap(), ids(&[258, 258]));
}

fn sentencepiece_json(metaspace: bool) -> Vec<u8> {
    let mut vocab = serde_json::Map::new();
    vocab.insert("<unk>".into(), json!(0));
    vocab.insert("<s>".into(), json!(1));
    vocab.insert("</s>".into(), json!(2));
    for b in 0..=255u32 {
        vocab.insert(format!("<0x{b:02X}>"), json!(3 + b));
    }
    for (i, p) in ["\u{2581}", "\u{2581}a", "a", "b", "\u{2581}b"].iter().enumerate() {
        vocab.insert(p.to_string(), json!(259 + i));
    }
    let (normalizer, pre, decoder) = if metaspace {
        (
            json!(null),
            json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "first", "split": false}),
            json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "first", "split": false}),
        )
    } else {
        (
            json!({"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u{2581}"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}]}),
            json!(null),
            json!({"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}),
        )
    };
    let doc = json!({
        "version": "1.0",
        "added_tokens": [
            {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        ],
        "normalizer": normalizer,
        "pre_tokenizer": pre,
        "post_processor": null,
        "decoder": decoder,
        "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
                  "vocab": vocab, "merges": ["\u{2581} a", "\u{2581} b"]}
    });
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn hf_sentencepiece_style() {
    for metaspace in [false, true] {
        let data = sentencepiece_json(metaspace);
        let v = load::hf_tokenizer_json(&data).unwrap();
        assert_eq!(v.len(), 264);
        assert_eq!(v.eos_token(), Some(TokenId(2)));
        assert_eq!(v.token_bytes(TokenId(259)), b" ");
        assert_eq!(v.token_bytes(TokenId(260)), b" a");
        for b in 0..=255u32 {
            assert_eq!(v.token_bytes(TokenId(3 + b)), [b as u8]);
        }
        let tok = Tokenizer::from_bytes("tokenizer.json", &data).unwrap();
        if cfg!(feature = "hf") {
            // No dummy prefix: "a b" starts with `a`, not `▁a`.
            assert_eq!(tok.tokenize("a b").unwrap(), ids(&[261, 263]), "metaspace: {metaspace}");
            assert_eq!(tok.tokenize(" a").unwrap(), ids(&[260]));
            assert_eq!(tok.tokenize("é").unwrap(), ids(&[3 + 0xC3, 3 + 0xA9]));
        }
    }
}

#[test]
fn hf_unigram_and_wordpiece() {
    let doc = json!({
        "added_tokens": [{"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}, {"id": 1, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
        "normalizer": null,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always", "split": true},
        "decoder": {"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always", "split": true},
        "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["</s>", 0.0], ["\u{2581}hi", -1.0], ["h", -2.0], ["i", -2.0], ["\u{2581}", -3.0]]}
    });
    let v = load::hf_tokenizer_json(&serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_eq!(v.len(), 6);
    assert_eq!(v.token_bytes(TokenId(2)), b" hi");
    assert_eq!(v.eos_token(), Some(TokenId(1)));

    let wp =
        json!({"added_tokens": [], "model": {"type": "WordPiece", "vocab": {"a": 0, "##b": 1}}});
    let e = load::hf_tokenizer_json(&serde_json::to_vec(&wp).unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Format);
    assert!(e.message().contains("WordPiece"), "{e}");
}

fn tiktoken_file(extra: &str) -> Vec<u8> {
    let mut s = String::new();
    for b in 0..=255u8 {
        s += &format!("{} {}\n", b64(&[b]), b);
    }
    s += &format!("{} 256\n{} 257\n", b64(b"ab"), b64(b" a"));
    s += extra;
    s.into_bytes()
}

#[test]
fn tiktoken_rank_file() {
    let v = load::tiktoken(&tiktoken_file("")).unwrap();
    assert_eq!(v.len(), 258);
    assert_eq!(v.token_bytes(TokenId(256)), b"ab");
    assert!(v.special_tokens().is_empty());
    assert_eq!(v.eos_token(), None);
    let v = load::from_bytes("x.tiktoken", &tiktoken_file("")).unwrap();
    assert_eq!(v.name(), "x.tiktoken");
    // No specials known and no pattern: no canonical tokenization.
    let tok = Tokenizer::from_bytes("x.tiktoken", &tiktoken_file("")).unwrap();
    assert_eq!(tok.tokenize("ab").unwrap_err().kind(), ErrorKind::Tokenize);
    assert_eq!(tok.tokenize_greedy(b"ab ab").unwrap(), ids(&[256, 257, 98]));

    let specials = [("<|eot|>", TokenId(260))];
    let v = load::tiktoken_with_specials(&tiktoken_file(""), &specials).unwrap();
    assert_eq!(v.len(), 261);
    assert_eq!(v.special_token("<|eot|>"), Some(TokenId(260)));
    let tok = Tokenizer::from_tiktoken(&tiktoken_file(""), &specials, r" ?\w+|\s+|.").unwrap();
    if cfg!(feature = "tiktoken") {
        // " ab": "ab" (rank 256) merges before " a" (257).
        assert_eq!(tok.tokenize("ab ab").unwrap(), ids(&[256, 32, 256]));
        assert_eq!(tok.tokenize_with_special("a<|eot|>").unwrap(), ids(&[97, 260]));
    } else {
        assert!(!tok.has_canonical());
    }
}

#[test]
fn tekken_json() {
    let vocab: Vec<_> = (0..=255u8)
        .map(|b| vec![b])
        .chain([b"ab".to_vec(), b" a".to_vec()])
        .chain((0..6).map(|i| format!("unused{i}").into_bytes()))
        .enumerate()
        .map(|(r, b)| json!({"rank": r, "token_bytes": b64(&b), "token_str": null}))
        .collect();
    let config = json!({"pattern": r" ?\w+|\s+|.", "default_vocab_size": 270, "default_num_special_tokens": 10,
                        "num_vocab_tokens": 264, "version": "v3"});
    let data = serde_json::to_vec(&json!({"config": config, "vocab": vocab})).unwrap();
    let v = load::tekken(&data).unwrap();
    assert_eq!(v.len(), 270);
    assert_eq!(v.special_name(TokenId(3)), Some("[INST]"));
    assert_eq!(v.special_name(TokenId(9)), Some("[TOOL_CALLS]"));
    assert_eq!(v.eos_token(), Some(TokenId(2)));
    assert_eq!(v.token_bytes(TokenId(10)), b"\0");
    assert_eq!(v.token_bytes(TokenId(266)), b"ab");
    assert_eq!(v.token_bytes(TokenId(269)), b"unused1", "only 260 ranks are used");
    assert_eq!(load::detect_format("t.json", &data).unwrap(), load::Format::Tekken);
    let tok = Tokenizer::from_bytes("tekken.json", &data).unwrap();
    if cfg!(feature = "tiktoken") {
        assert_eq!(tok.tokenize("ab ab").unwrap(), ids(&[266, 42, 266]));
    }

    let specials = json!([{"rank": 0, "token_str": "<unk>", "is_control": true},
                          {"rank": 1, "token_str": "<s>", "is_control": true},
                          {"rank": 2, "token_str": "</s>", "is_control": true}]);
    let data =
        serde_json::to_vec(&json!({"config": config, "vocab": vocab, "special_tokens": specials}))
            .unwrap();
    let v = load::tekken(&data).unwrap();
    assert_eq!(v.special_name(TokenId(3)), Some("<SPECIAL_3>"));
    assert_eq!(v.special_name(TokenId(1)), Some("<s>"));

    let bad = json!({"config": {"pattern": ".", "default_vocab_size": 5, "default_num_special_tokens": 10}, "vocab": []});
    assert!(load::tekken(&serde_json::to_vec(&bad).unwrap()).is_err());
}

/// A protobuf writer for the test's SentencePiece models.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes_field(out: &mut Vec<u8>, field: u64, data: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn piece(p: &str, score: f32, ty: u64) -> Vec<u8> {
    let mut m = Vec::new();
    bytes_field(&mut m, 1, p.as_bytes());
    varint(&mut m, 2 << 3 | 5);
    m.extend_from_slice(&score.to_le_bytes());
    varint(&mut m, 3 << 3);
    varint(&mut m, ty);
    m
}

fn sp_model() -> Vec<u8> {
    let mut pieces = vec![piece("<unk>", 0.0, 2), piece("<s>", 0.0, 3), piece("</s>", 0.0, 3)];
    for b in 0..=255u32 {
        pieces.push(piece(&format!("<0x{b:02X}>"), 0.0, 6));
    }
    // 259.., by score like a BPE model: earlier = merged first.
    for (i, p) in ["\u{2581}a", "\u{2581}", "a", "b", "[X]"].iter().enumerate() {
        pieces.push(piece(p, -(i as f32), if *p == "[X]" { 4 } else { 1 }));
    }
    let mut out = Vec::new();
    for p in &pieces {
        bytes_field(&mut out, 1, p);
    }
    let mut trainer = Vec::new();
    varint(&mut trainer, 3 << 3);
    varint(&mut trainer, 2); // BPE
    varint(&mut trainer, 35 << 3);
    varint(&mut trainer, 1); // byte_fallback
    bytes_field(&mut out, 2, &trainer);
    let mut norm = Vec::new();
    bytes_field(&mut norm, 1, b"identity");
    varint(&mut norm, 4 << 3);
    varint(&mut norm, 0);
    bytes_field(&mut out, 3, &norm);
    out
}

#[test]
fn sentencepiece_protobuf() {
    let data = sp_model();
    let v = load::sentencepiece_model(&data).unwrap();
    assert_eq!(v.len(), 264);
    assert_eq!(v.eos_token(), Some(TokenId(2)));
    assert_eq!(v.special_name(TokenId(0)), Some("<unk>"));
    assert_eq!(v.token_bytes(TokenId(3 + 0x41)), b"A");
    assert_eq!(v.token_bytes(TokenId(259)), b" a");
    assert_eq!(v.token_bytes(TokenId(263)), b"[X]");
    assert_eq!(load::detect_format("m.model", &data).unwrap(), load::Format::SentencePiece);
    let tok = Tokenizer::from_bytes("m.model", &data).unwrap();
    if cfg!(feature = "hf") {
        assert_eq!(tok.tokenize(" a b").unwrap(), ids(&[259, 260, 262]));
        assert_eq!(tok.tokenize("ab[X]").unwrap(), ids(&[261, 262, 263]));
        assert_eq!(tok.tokenize("c").unwrap(), ids(&[3 + 0x63]));
    }
    // Malformed: truncated, a wrong wire type, a bad byte piece.
    assert!(load::sentencepiece_model(&data[..data.len() - 3]).is_err());
    assert!(load::sentencepiece_model(&[0x0A, 0x05, 0x0A]).is_err());
    assert!(load::sentencepiece_model(&[0x08, 0x01]).is_err(), "no pieces");
    let mut bad = Vec::new();
    bytes_field(&mut bad, 1, &piece("<0xZZ>", 0.0, 6));
    assert_eq!(load::sentencepiece_model(&bad).unwrap_err().kind(), ErrorKind::Format);
}

#[test]
fn from_file_dispatch() {
    let dir = std::env::temp_dir().join(format!("toktrie-load-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: [(&str, Vec<u8>, usize); 4] = [
        ("tokenizer.json", byte_level_json(), 265),
        ("cl.tiktoken", tiktoken_file(""), 258),
        ("noext", tiktoken_file(""), 258),
        ("tokenizer.model", sp_model(), 264),
    ];
    for (name, data, n) in &files {
        let p = dir.join(name);
        std::fs::write(&p, data).unwrap();
        let v = load::from_file(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(v.len(), *n, "{name}");
        assert_eq!(v.name(), *name);
        let t = Tokenizer::from_file(&p).unwrap();
        assert_eq!(t.vocab().len(), *n);
    }
    let e = load::from_file(dir.join("missing.json")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn malformed_files_are_errors() {
    let cases: &[(&str, &[u8])] = &[
        ("tokenizer.json", b"{"),
        ("tokenizer.json", b"{}"),
        ("tokenizer.json", br#"{"model": {"type": "BPE", "vocab": {"a": -1}}}"#),
        ("tokenizer.json", br#"{"model": {"type": "BPE", "vocab": {"a": 4000000000}}}"#),
        ("tokenizer.json", br#"{"model": {"type": "BPE", "vocab": {"a": 16000000}}}"#),
        ("tokenizer.json", br#"{"model": {"type": "BPE", "vocab": {}}}"#),
        ("tokenizer.json", br#"{"model": {"type": "Fancy", "vocab": {"a": 0}}}"#),
        ("tokenizer.json", br#"{"added_tokens": [{"id": 0}], "model": {"vocab": {"a": 0}}}"#),
        ("tokenizer.json", br#"{"added_tokens": [{"id": 0, "content": ""}], "model": {"type": "BPE"}}"#),
        ("x.tiktoken", b"YWI=\n"),
        ("x.tiktoken", b"YWI= x\n"),
        ("x.tiktoken", b"Y*I= 0\n"),
        ("x.tiktoken", b"YWI= 0\nYWI= 0\n"),
        ("x.tiktoken", b"YWI= 99999999999\n"),
        ("x.tiktoken", b"YWI= 4294967295\n"),
        ("x.tiktoken", b""),
        ("tekken.json", br#"{"config": {}, "vocab": []}"#),
        ("tekken.json", br#"{"config": {"pattern": ".", "default_vocab_size": 99999999, "default_num_special_tokens": 1}, "vocab": []}"#),
        ("x.bin", b"\x00\x01\x02"),
        ("x.model", b"\x0A\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01"),
    ];
    for (name, data) in cases {
        let e = load::from_bytes(name, data)
            .expect_err(&format!("{name}: {:?}", String::from_utf8_lossy(data)));
        assert!(matches!(e.kind(), ErrorKind::Format | ErrorKind::Limit), "{name}: {e}");
        assert!(!e.message().is_empty());
        assert!(Tokenizer::from_bytes(name, data).is_err());
    }
}

#[test]
fn truncated_files_never_panic() {
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("tokenizer.json", sentencepiece_json(false)),
        ("x.tiktoken", tiktoken_file("")),
        ("m.model", sp_model()),
    ];
    for (name, data) in &files {
        for len in (0..data.len()).step_by(7) {
            let _ = load::from_bytes(name, &data[..len]);
        }
        for i in (0..data.len()).step_by(13) {
            let mut d = data.clone();
            d[i] ^= 0x5A;
            let _ = load::from_bytes(name, &d);
        }
    }
}

#[test]
fn builtins() {
    let t = Tokenizer::builtin("bytes").unwrap();
    assert_eq!(t.vocab().len(), 257);
    assert_eq!(t.tokenize("hi").unwrap(), ids(&[104, 105]));
    assert_eq!(t.tokenize_bytes(b"\xff\x00").unwrap(), ids(&[255, 0]));
    assert!(Tokenizer::from_vocab(Vocabulary::bytes()).has_canonical());
    let e = Tokenizer::builtin("gpt9").unwrap_err();
    assert!(e.message().contains("bytes, o200k, cl100k"), "{e}");
    assert!(load::builtin("nope").is_err());

    if cfg!(feature = "tiktoken") {
        let start = std::time::Instant::now();
        let o = Tokenizer::builtin("o200k").unwrap();
        eprintln!("built-in o200k: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(o.vocab().len(), 200_019);
        assert_eq!(o.vocab().eos_token(), Some(TokenId(199_999)));
        assert_eq!(o.tokenize("hello world").unwrap(), ids(&[24912, 2375]));
        let c = Tokenizer::builtin("cl100k_base").unwrap();
        assert_eq!(c.vocab().len(), 100_277);
        assert_eq!(c.vocab().eos_token(), Some(TokenId(100_257)));
        assert_eq!(c.tokenize("hello world").unwrap(), ids(&[15339, 1917]));
        assert_eq!(c.tokenize_with_special("<|endoftext|>").unwrap(), ids(&[100_257]));
    } else {
        let e = load::builtin("o200k").unwrap_err();
        assert!(e.message().contains("tiktoken"), "{e}");
    }

    // Greedy fallback of a bare vocabulary.
    let mut b = toktrie::VocabBuilder::new();
    for (i, s) in ["a", "b", "ab", "abc"].iter().enumerate() {
        b.token(TokenId(i as u32), s.as_bytes()).unwrap();
    }
    let t = Tokenizer::from_vocab(b.build().unwrap());
    assert!(!t.has_canonical());
    assert_eq!(t.tokenize("ab").unwrap_err().kind(), ErrorKind::Tokenize);
    assert_eq!(t.tokenize_greedy(b"abcab").unwrap(), ids(&[3, 2]));
    assert_eq!(t.tokenize_greedy(b"abx").unwrap_err().kind(), ErrorKind::Tokenize);
}

#[test]
fn tokenizer_is_shareable() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Tokenizer>();
    let t = Tokenizer::builtin("bytes").unwrap();
    let t2 = t.clone();
    std::thread::spawn(move || t2.tokenize("x").unwrap()).join().unwrap();
    assert_eq!(t.tokenize("x").unwrap(), ids(&[120]));
}

/// Error kinds callers branch on: an unknown built-in name, a built-in that needs a feature
/// that is off, a file that is not there.
#[test]
fn error_kinds_of_builtins_and_files() {
    let e = toktrie::Tokenizer::builtin("nope").unwrap_err();
    assert_eq!(e.kind(), toktrie::ErrorKind::UnknownTokenizer, "{e}");
    assert!(e.to_string().contains("bytes"), "{e}");
    let tiktoken = cfg!(feature = "tiktoken");
    match toktrie::Tokenizer::builtin("o200k") {
        Ok(t) => assert!(tiktoken && t.vocab().len() > 100_000),
        Err(e) => {
            assert!(!tiktoken, "{e}");
            assert_eq!(e.kind(), toktrie::ErrorKind::FeatureDisabled, "{e}");
        }
    }
    let e = toktrie::Tokenizer::from_file("/nonexistent/tok.json").unwrap_err();
    assert_eq!(e.kind(), toktrie::ErrorKind::Io, "{e}");
}
