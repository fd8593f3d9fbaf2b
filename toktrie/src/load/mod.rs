//! Vocabulary loaders: HF `tokenizer.json`, tiktoken rank files, Mistral tekken JSON, raw
//! SentencePiece `.model` protobufs, and the built-in vocabularies.
//!
//! Every loader returns a [`Vocabulary`] (the bytes of each token id, the special tokens,
//! the EOS ids) and never needs the optional `tokenizers` / `tiktoken-rs` crates: those are
//! only used for canonical tokenization ([`crate::Tokenizer`]). Malformed files give an
//! [`Error`] of kind [`ErrorKind::Format`] naming the problem, never a panic.
//!
//! | format | function | special tokens |
//! |---|---|---|
//! | HF `tokenizer.json` | [`hf_tokenizer_json`] | `added_tokens` with `special: true`, and added tokens written `<...>` |
//! | tiktoken `*.tiktoken` | [`tiktoken`], [`tiktoken_with_specials`] | the standard ones of o200k_base / cl100k_base ([`TiktokenEncoding`]) |
//! | Mistral tekken JSON | [`tekken`] | `special_tokens`, else mistral-common's built-in list |
//! | SentencePiece `.model` | [`sentencepiece_model`] | control and unknown pieces |
//!
//! [`from_file`] picks the format from the file name and content ([`detect_format`]). To
//! match a model's logits width, pad the result with [`Vocabulary::pad_to`].
//!
//! Special tokens are stored as [`crate::SPECIAL_TOKEN_MARKER`] + name; the default EOS is
//! picked by name ([`crate::DEFAULT_EOS_NAMES`]) unless the format says otherwise.

use std::path::Path;

use crate::{Error, ErrorKind, Vocabulary};

mod base64;
pub(crate) mod hf;
pub(crate) mod sentencepiece;
pub(crate) mod tekken;
pub(crate) mod tiktoken;

pub use self::hf::hf_tokenizer_json;
pub use self::sentencepiece::sentencepiece_model;
pub use self::tekken::tekken;
pub use self::tiktoken::{
    tiktoken, tiktoken_with_specials, TiktokenEncoding, CL100K_BASE, O200K_BASE,
};

pub(crate) use self::sentencepiece::SpModelInfo;

/// The file formats the loaders read.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Hugging Face `tokenizer.json`.
    HfTokenizerJson,
    /// A tiktoken rank file: `base64(token bytes) rank` per line.
    Tiktoken,
    /// A Mistral tekken JSON file (`config` + base64 `vocab`).
    Tekken,
    /// A raw SentencePiece model protobuf (`tokenizer.model`, `*.model.v3`).
    SentencePiece,
}

impl Format {
    /// A short name of the format for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::HfTokenizerJson => "HF tokenizer.json",
            Format::Tiktoken => "tiktoken",
            Format::Tekken => "tekken",
            Format::SentencePiece => "SentencePiece model",
        }
    }
}

/// The names [`builtin`] accepts (`o200k` and `cl100k` need the `tiktoken` feature).
pub const BUILTIN_NAMES: &[&str] = &["bytes", "o200k", "cl100k"];

/// Guesses the format of a tokenizer file from its name (the last path component is
/// enough) and its first bytes.
///
/// `*.tiktoken` is tiktoken; a JSON object is tekken when it has tekken's `config` keys,
/// else an HF `tokenizer.json`; a protobuf starting with a SentencePiece piece is a
/// SentencePiece model; lines of `base64 rank` are tiktoken.
pub fn detect_format(file_name: &str, data: &[u8]) -> Result<Format, Error> {
    let lower = file_name.to_ascii_lowercase();
    let head = &data[..data.len().min(64 * 1024)];
    let trimmed = {
        let start = head.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(head.len());
        &head[start..]
    };
    if lower.ends_with(".tiktoken") {
        return Ok(Format::Tiktoken);
    }
    if trimmed.first() == Some(&b'{') {
        let is_tekken = contains(head, b"\"default_num_special_tokens\"")
            || (contains(head, b"\"token_bytes\"") && contains(head, b"\"config\""));
        return Ok(if is_tekken { Format::Tekken } else { Format::HfTokenizerJson });
    }
    // ModelProto field 1 (repeated SentencePiece), wire type 2: tag byte 0x0A.
    if data.first() == Some(&0x0A) {
        return Ok(Format::SentencePiece);
    }
    if looks_like_tiktoken(trimmed) {
        return Ok(Format::Tiktoken);
    }
    Err(Error::format(format!(
        "{file_name}: unknown tokenizer file format (expected an HF tokenizer.json, a *.tiktoken rank file, \
         a Mistral tekken JSON, or a SentencePiece .model)"
    )))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn looks_like_tiktoken(data: &[u8]) -> bool {
    let line = data.split(|&c| c == b'\n').next().unwrap_or(&[]);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match line.iter().position(|&c| c == b' ') {
        Some(sp) => {
            let (b64, rank) = (&line[..sp], &line[sp + 1..]);
            !b64.is_empty()
                && b64.iter().all(|c| c.is_ascii_alphanumeric() || b"+/=".contains(c))
                && !rank.is_empty()
                && rank.iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

/// Loads a vocabulary from a tokenizer file of any supported [`Format`] (see
/// [`detect_format`]). The vocabulary is named after the file.
pub fn from_file(path: impl AsRef<Path>) -> Result<Vocabulary, Error> {
    let (name, data) = read_file(path.as_ref())?;
    from_bytes(&name, &data)
}

/// Loads a vocabulary from the contents of a tokenizer file; `file_name` helps detect the
/// format and names the vocabulary.
pub fn from_bytes(file_name: &str, data: &[u8]) -> Result<Vocabulary, Error> {
    Ok(load_any(file_name, data)?.vocab)
}

/// The vocabulary of a built-in tokenizer: `bytes` (256 one-byte tokens, EOS = 256),
/// `o200k` (alias `o200k_base`) or `cl100k` (alias `cl100k_base`), the last two from the
/// data tiktoken-rs embeds (feature `tiktoken`).
pub fn builtin(name: &str) -> Result<Vocabulary, Error> {
    match builtin_encoding(name)? {
        None => Ok(Vocabulary::bytes()),
        #[cfg(feature = "tiktoken")]
        Some(enc) => Ok(tiktoken::builtin_vocab(enc)?.0),
        #[cfg(not(feature = "tiktoken"))]
        Some(enc) => Err(Error::new(
            ErrorKind::FeatureDisabled,
            format!(
                "built-in tokenizer {:?} needs the `tiktoken` feature of toktrie (or load {}.tiktoken from a file)",
                name, enc.name
            ),
        )),
    }
}

/// `None` for `bytes`, the tiktoken encoding for the others.
pub(crate) fn builtin_encoding(name: &str) -> Result<Option<&'static TiktokenEncoding>, Error> {
    match name {
        "bytes" => Ok(None),
        "o200k" | "o200k_base" => Ok(Some(&O200K_BASE)),
        "cl100k" | "cl100k_base" => Ok(Some(&CL100K_BASE)),
        _ => Err(Error::new(
            ErrorKind::UnknownTokenizer,
            format!(
                "unknown built-in tokenizer {name:?}; built-in tokenizers are: {}",
                BUILTIN_NAMES.join(", ")
            ),
        )),
    }
}

pub(crate) fn read_file(path: &Path) -> Result<(String, Vec<u8>), Error> {
    let data = std::fs::read(path).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read tokenizer file {}: {e}", path.display()))
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok((name, data))
}

/// How a loaded file is tokenized canonically (used by [`crate::Tokenizer`]).
pub(crate) enum Canon {
    /// No canonical tokenizer is known.
    None,
    /// Through the `tokenizers` crate, from the file itself; `sentencepiece` says the dummy
    /// prefix (`Prepend ▁`) has to be dropped.
    Hf { sentencepiece: bool },
    /// tiktoken-style BPE: token id = rank + `rank_offset` for the regular tokens.
    Tiktoken { pattern: String, rank_offset: u32 },
    /// A raw SentencePiece model.
    SentencePiece(SpModelInfo),
}

pub(crate) struct Loaded {
    pub(crate) vocab: Vocabulary,
    pub(crate) canon: Canon,
}

pub(crate) fn load_any(file_name: &str, data: &[u8]) -> Result<Loaded, Error> {
    let fmt = detect_format(file_name, data)?;
    let prefix =
        |e: Error| Error::new(e.kind(), format!("{file_name} ({}): {}", fmt.name(), e.message()));
    match fmt {
        Format::HfTokenizerJson => hf::load(file_name, data),
        Format::Tiktoken => tiktoken::load(file_name, data, None),
        Format::Tekken => tekken::load(file_name, data),
        Format::SentencePiece => sentencepiece::load(file_name, data),
    }
    .map_err(prefix)
}
