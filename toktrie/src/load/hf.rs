//! HF `tokenizer.json` vocabularies.
//!
//! How token strings become bytes depends on the tokenizer's kind, told by its decoder
//! (and normalizer / pre-tokenizer):
//! - byte-level BPE (`ByteLevel` decoder or pre-tokenizer): each character maps back to a
//!   byte through GPT-2's `bytes_to_unicode` table;
//! - SentencePiece style (`Metaspace` decoder or pre-tokenizer, a `Replace ▁→space` decoder or
//!   `Replace space→▁` normalizer, a `ByteFallback` decoder, also inside `Sequence`s): `▁`
//!   becomes a space and the byte-fallback tokens `<0xNN>` become the single byte `NN`;
//! - otherwise (WordLevel, plain BPE/Unigram): the UTF-8 bytes of the token string.
//!
//! WordPiece (BERT-style) vocabularies are refused: their tokens do not carry the spaces
//! between words, so no byte string is right for them.
//!
//! `added_tokens` override the model's vocabulary at their ids. Those with `special: true`,
//! and also those with `special: false` written `<...>` (e.g. Qwen3's `<think>`, as
//! LLGuidance does), become special tokens; other added tokens are regular tokens with the
//! bytes of their content. Ids nobody uses stay holes; tokens with empty strings are holes.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::{Canon, Loaded};
use crate::{Error, TokenId, VocabBuilder, Vocabulary};

/// Loads the vocabulary of an HF `tokenizer.json` (see the module documentation of
/// [`crate::load`] for the mapping of token strings to bytes).
pub fn hf_tokenizer_json(data: &[u8]) -> Result<Vocabulary, Error> {
    Ok(load("tokenizer.json", data)?.vocab)
}

#[derive(Deserialize)]
struct HfFile {
    #[serde(default)]
    added_tokens: Vec<HfAdded>,
    #[serde(default)]
    normalizer: Option<Value>,
    #[serde(default)]
    pre_tokenizer: Option<Value>,
    #[serde(default)]
    decoder: Option<Value>,
    model: HfModel,
}

#[derive(Deserialize)]
struct HfAdded {
    id: u32,
    content: String,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct HfModel {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    vocab: Option<HfVocab>,
    #[serde(default)]
    byte_fallback: Option<bool>,
}

/// `(token string, id)`: a JSON object (BPE, WordPiece, WordLevel) or an array of
/// `[piece, score]` pairs where the id is the index (Unigram).
struct HfVocab {
    entries: Vec<(String, u32)>,
    is_unigram: bool,
}

impl<'de> Deserialize<'de> for HfVocab {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HfVocab;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map from token strings to ids, or a list of [piece, score] pairs")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HfVocab, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((k, v)) = map.next_entry::<String, u32>()? {
                    entries.push((k, v));
                }
                Ok(HfVocab { entries, is_unigram: false })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<HfVocab, A::Error> {
                let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some((piece, _score)) = seq.next_element::<(String, f64)>()? {
                    let id = u32::try_from(entries.len())
                        .map_err(|_| de::Error::custom("too many pieces"))?;
                    entries.push((piece, id));
                }
                Ok(HfVocab { entries, is_unigram: true })
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    ByteLevel,
    SentencePiece,
    Plain,
}

pub(crate) fn load(name: &str, data: &[u8]) -> Result<Loaded, Error> {
    let file: HfFile = serde_json::from_slice(data)
        .map_err(|e| Error::format(format!("invalid tokenizer.json: {e}")))?;
    let kind = file.model.kind.as_deref().unwrap_or("");
    let vocab = file.model.vocab.as_ref();
    if kind == "WordPiece" || has_type(file.decoder.as_ref(), &["WordPiece"]) {
        return Err(Error::format(
            "WordPiece (BERT-style) tokenizers are not supported: their tokens do not carry the spaces between words",
        ));
    }
    if !matches!(kind, "" | "BPE" | "Unigram" | "WordLevel") {
        return Err(Error::format(format!(
            "unsupported model type {kind:?} (expected BPE, Unigram or WordLevel)"
        )));
    }
    if kind == "Unigram" && !vocab.is_some_and(|v| v.is_unigram) {
        return Err(Error::format("Unigram model without a list of [piece, score] pairs"));
    }
    // Ids may leave holes, but a few huge ids must not make us allocate gigabytes.
    let n_entries = vocab.map_or(0, |v| v.entries.len()) + file.added_tokens.len();
    let max_id = vocab
        .iter()
        .flat_map(|v| v.entries.iter().map(|e| e.1))
        .chain(file.added_tokens.iter().map(|a| a.id))
        .max();
    if let Some(max_id) = max_id {
        if max_id as usize > 4 * n_entries + 65_536 {
            return Err(Error::new(
                crate::ErrorKind::Limit,
                format!("token id {max_id} is implausibly large for {n_entries} tokens"),
            ));
        }
    }
    let mode = detect_mode(&file);
    let byte_fallback = mode == Mode::SentencePiece || file.model.byte_fallback == Some(true);

    let mut b = VocabBuilder::new();
    b.name(name);
    let to_bytes = |s: &str| -> Vec<u8> {
        if byte_fallback {
            if let Some(byte) = parse_byte_token(s) {
                return vec![byte];
            }
        }
        match mode {
            Mode::ByteLevel => byte_level_decode(s),
            Mode::SentencePiece => s.replace('\u{2581}', " ").into_bytes(),
            Mode::Plain => s.as_bytes().to_vec(),
        }
    };
    if let Some(v) = vocab {
        for (s, id) in &v.entries {
            let bytes = to_bytes(s);
            if !bytes.is_empty() {
                b.token(TokenId(*id), &bytes)?;
            }
        }
    }
    for a in &file.added_tokens {
        if byte_fallback && !a.special {
            if let Some(byte) = parse_byte_token(&a.content) {
                b.token(TokenId(a.id), &[byte])?;
                continue;
            }
        }
        if a.special || looks_special(&a.content) {
            b.special(TokenId(a.id), &a.content)?;
        } else if !a.content.is_empty() {
            b.token(TokenId(a.id), a.content.as_bytes())?;
        }
    }
    if b.is_empty() {
        return Err(Error::format(
            "tokenizer.json has no tokens (no model.vocab and no added_tokens)",
        ));
    }
    Ok(Loaded {
        vocab: b.build()?,
        canon: Canon::Hf { sentencepiece: mode == Mode::SentencePiece },
    })
}

/// Added tokens written `<...>` count as special even when marked `special: false`.
fn looks_special(s: &str) -> bool {
    s.len() >= 3 && s.starts_with('<') && s.ends_with('>')
}

/// `<0xNN>` → the byte `NN`.
pub(crate) fn parse_byte_token(s: &str) -> Option<u8> {
    let hex = s.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

fn detect_mode(file: &HfFile) -> Mode {
    let dec = file.decoder.as_ref();
    let pre = file.pre_tokenizer.as_ref();
    let norm = file.normalizer.as_ref();
    if has_type(dec, &["ByteLevel"]) || (dec.is_none() && has_type(pre, &["ByteLevel"])) {
        return Mode::ByteLevel;
    }
    let replace = |v: Option<&Value>, from: &str, to: &str| {
        any_node(v, |n| {
            n.get("type").and_then(Value::as_str) == Some("Replace")
                && n.get("pattern").and_then(|p| p.get("String")).and_then(Value::as_str)
                    == Some(from)
                && n.get("content").and_then(Value::as_str) == Some(to)
        })
    };
    if has_type(dec, &["Metaspace", "ByteFallback"])
        || has_type(pre, &["Metaspace"])
        || replace(dec, "\u{2581}", " ")
        || replace(norm, " ", "\u{2581}")
    {
        return Mode::SentencePiece;
    }
    Mode::Plain
}

fn has_type(v: Option<&Value>, types: &[&str]) -> bool {
    any_node(v, |n| n.get("type").and_then(Value::as_str).is_some_and(|t| types.contains(&t)))
}

/// Whether `pred` holds for a component or for one nested in a `Sequence` (explicit stack).
fn any_node(v: Option<&Value>, pred: impl Fn(&Value) -> bool) -> bool {
    let mut stack: Vec<&Value> = v.into_iter().collect();
    while let Some(n) = stack.pop() {
        if pred(n) {
            return true;
        }
        for key in ["decoders", "normalizers", "pretokenizers", "pre_tokenizers"] {
            if let Some(Value::Array(items)) = n.get(key) {
                stack.extend(items.iter());
            }
        }
    }
    false
}

/// Inverse of GPT-2's `bytes_to_unicode`: printable Latin-1 bytes map to themselves, the
/// other 68 bytes to U+0100.. in byte order. Characters outside the table (never in a real
/// byte-level vocabulary) keep their UTF-8 bytes.
fn byte_level_decode(s: &str) -> Vec<u8> {
    static TABLE: std::sync::OnceLock<[i16; 324]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [-1i16; 324];
        let mut n = 0;
        for b in 0..=255u16 {
            let printable =
                (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
            if printable {
                t[b as usize] = b as i16;
            } else {
                t[256 + n] = b as i16;
                n += 1;
            }
        }
        t
    });
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match table.get(c as usize) {
            Some(&b) if b >= 0 => out.push(b as u8),
            _ => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_table() {
        assert_eq!(byte_level_decode("\u{120}the"), b" the");
        assert_eq!(byte_level_decode("\u{100}"), b"\0");
        assert_eq!(byte_level_decode("\u{10a}"), b"\n");
        assert_eq!(byte_level_decode("\u{143}"), b"\xad");
        assert_eq!(byte_level_decode("Ã¢"), b"\xc3\xa2");
    }

    #[test]
    fn byte_tokens() {
        assert_eq!(parse_byte_token("<0x0A>"), Some(10));
        assert_eq!(parse_byte_token("<0xff>"), Some(255));
        assert_eq!(parse_byte_token("<0x0A0>"), None);
        assert_eq!(parse_byte_token("<s>"), None);
    }
}
