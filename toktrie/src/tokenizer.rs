//! [`Tokenizer`]: a loaded vocabulary plus, where available, canonical tokenization.
//!
//! Canonical tokenization is the token sequence the model's own tokenizer produces for a
//! text: through the `tokenizers` crate for HF `tokenizer.json` files and SentencePiece
//! models (feature `hf`), through `tiktoken-rs` for tiktoken files, tekken and the built-in
//! o200k / cl100k (feature `tiktoken`). Without it (a feature turned off, a tiktoken file of
//! an unknown encoding, [`Tokenizer::from_vocab`]), the `tokenize*` methods return an
//! [`ErrorKind::Tokenize`] error and [`Tokenizer::tokenize_greedy`], a non-canonical greedy
//! longest match, still works.
//!
//! Conventions, the same for every backend:
//! - [`Tokenizer::tokenize`] never turns text into a special token: `"<|endoftext|>"` in the
//!   text is tokenized as ordinary text (tiktoken's `encode_ordinary`, HF with
//!   `encode_special_tokens`). HF added tokens that are *not* special in the file (Qwen3's
//!   `<think>`) are still matched, as HF does, although the vocabulary lists them as special.
//!   [`Tokenizer::tokenize_with_special`] first splits the text at special token names.
//! - No BOS or other template tokens are added.
//! - SentencePiece-style tokenizers get **no dummy prefix**: the `Prepend ▁` normalizer (and
//!   a Metaspace pre-tokenizer's prepend scheme) is dropped, as LLGuidance does, so `"hello"`
//!   is tokenized as `hello`, not `▁hello`; only the first token can differ from HF's
//!   output. Tokenizing pieces of a text separately therefore concatenates correctly.

use std::sync::{Arc, OnceLock};

use hashbrown::HashMap;

use crate::load::{self, Canon};
use crate::{Error, ErrorKind, TokenId, Vocabulary};

/// A vocabulary plus its canonical tokenizer, if one is available. Cheap to clone and
/// share between threads (an [`Arc`] inside).
#[derive(Clone)]
pub struct Tokenizer {
    inner: Arc<Inner>,
}

struct Inner {
    vocab: Vocabulary,
    backend: Arc<Backend>,
    greedy: OnceLock<Greedy>,
    specials: OnceLock<Specials>,
}

enum Backend {
    /// One token per byte: greedy matching is canonical.
    Bytes,
    /// No canonical tokenizer; the reason.
    Unavailable(String),
    #[cfg(feature = "hf")]
    Hf(Box<tokenizers::Tokenizer>),
    #[cfg(feature = "tiktoken")]
    Tiktoken { bpe: Bpe, rank_offset: u32 },
    /// The caller's tokenize function (a C callback, a server's tokenizer).
    Callback { f: Arc<TokenizeFn>, any_bytes: bool },
}

/// A caller's canonical tokenization: the token ids for some bytes (no BOS or other added
/// tokens). Its output is checked: ids out of range, or ids that do not spell the input,
/// make the tokenizer fall back to greedy longest match for that call (never a wrong
/// tokenization).
pub type TokenizeFn =
    dyn Fn(&[u8]) -> Result<Vec<u32>, String> + Send + Sync + std::panic::RefUnwindSafe;

#[cfg(feature = "tiktoken")]
enum Bpe {
    Static(&'static tiktoken_rs::CoreBPE),
    Owned(Box<tiktoken_rs::CoreBPE>),
}

/// Regular tokens by bytes, for greedy longest match.
struct Greedy {
    by_bytes: HashMap<Vec<u8>, TokenId>,
    max_len: usize,
}

/// Special tokens by the first byte of their name, longest names first.
struct Specials {
    by_first: HashMap<u8, Vec<(Vec<u8>, TokenId)>>,
}

impl Specials {
    /// The longest special token name `bytes` starts with: (its length, its id).
    fn find(&self, bytes: &[u8]) -> Option<(usize, TokenId)> {
        let list = self.by_first.get(bytes.first()?)?;
        list.iter().find(|(n, _)| bytes.starts_with(n)).map(|(n, id)| (n.len(), *id))
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Tokenizer>();
};

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab", &self.inner.vocab.name())
            .field("n_vocab", &self.inner.vocab.len())
            .field("canonical", &self.canonical_kind())
            .finish()
    }
}

impl Tokenizer {
    /// Loads a tokenizer file of any format [`load::from_file`] reads, with canonical
    /// tokenization where the enabled features allow it.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Tokenizer, Error> {
        let (name, data) = load::read_file(path.as_ref())?;
        Tokenizer::from_bytes(&name, &data)
    }

    /// Like [`Tokenizer::from_file`], from the file's name and contents.
    pub fn from_bytes(file_name: &str, data: &[u8]) -> Result<Tokenizer, Error> {
        let loaded = load::load_any(file_name, data)?;
        let backend = match loaded.canon {
            Canon::None => Backend::Unavailable(format!(
                "{file_name}: no canonical tokenizer is known for this file (for a tiktoken file of an \
                 unknown encoding use Tokenizer::from_tiktoken with its pattern)"
            )),
            Canon::Hf { sentencepiece } => hf_backend(data, sentencepiece),
            Canon::Tiktoken { pattern, rank_offset } => tiktoken_backend(&loaded.vocab, &pattern, rank_offset),
            Canon::SentencePiece(info) => sp_backend(&info),
        };
        Ok(Tokenizer::new(loaded.vocab, backend))
    }

    /// Loads a tiktoken rank file with its special tokens and pre-tokenizer regex (e.g. the
    /// Llama 3 `tokenizer.model`), for encodings [`load::tiktoken`] does not recognize.
    pub fn from_tiktoken(
        data: &[u8],
        specials: &[(&str, TokenId)],
        pattern: &str,
    ) -> Result<Tokenizer, Error> {
        let vocab = load::tiktoken_with_specials(data, specials)?;
        let backend = tiktoken_backend(&vocab, pattern, 0);
        Ok(Tokenizer::new(vocab, backend))
    }

    /// Like [`Tokenizer::from_tiktoken`], from the ranks themselves (`(bytes, rank)`, e.g. a
    /// tiktoken `Encoding`'s mergeable ranks) instead of a rank file.
    pub fn from_tiktoken_ranks(
        ranks: &[(Vec<u8>, u32)],
        specials: &[(&str, TokenId)],
        pattern: &str,
    ) -> Result<Tokenizer, Error> {
        let vocab = load::tiktoken::tiktoken_ranks_with_specials(ranks, specials)?;
        let backend = tiktoken_backend(&vocab, pattern, 0);
        Ok(Tokenizer::new(vocab, backend))
    }

    /// A built-in tokenizer: `bytes`, `o200k` (`o200k_base`), `cl100k` (`cl100k_base`); the
    /// last two need the `tiktoken` feature. Unknown names are an error listing the names.
    pub fn builtin(name: &str) -> Result<Tokenizer, Error> {
        match load::builtin_encoding(name)? {
            None => Ok(Tokenizer::new(Vocabulary::bytes(), Backend::Bytes)),
            #[cfg(feature = "tiktoken")]
            Some(enc) => {
                let (vocab, bpe) = load::tiktoken::builtin_vocab(enc)?;
                Ok(Tokenizer::new(
                    vocab,
                    Backend::Tiktoken { bpe: Bpe::Static(bpe), rank_offset: 0 },
                ))
            }
            #[cfg(not(feature = "tiktoken"))]
            Some(_) => load::builtin(name).map(Tokenizer::from_vocab),
        }
    }

    /// A tokenizer for a vocabulary without canonical tokenization (only
    /// [`Tokenizer::tokenize_greedy`] works), except for the byte vocabulary
    /// ([`Vocabulary::bytes`] or any vocabulary whose regular tokens are exactly the 256
    /// single bytes), where greedy matching is canonical.
    pub fn from_vocab(vocab: Vocabulary) -> Tokenizer {
        let is_bytes = vocab
            .iter()
            .filter(|(t, _)| !vocab.is_special(*t))
            .all(|(t, b)| b.len() == 1 && t.0 == b[0] as u32)
            && vocab.iter().filter(|(t, _)| !vocab.is_special(*t)).count() == 256;
        let backend = if is_bytes {
            Backend::Bytes
        } else {
            Backend::Unavailable(format!(
                "tokenizer {:?} was built from a bare vocabulary and has no canonical tokenization \
                 (use tokenize_greedy for a non-canonical longest match)",
                vocab.name()
            ))
        };
        Tokenizer::new(vocab, backend)
    }

    /// A tokenizer whose canonical tokenization is the caller's function `f` (a model
    /// server's own tokenizer). `any_bytes`: `f` accepts any bytes; when false, it is given
    /// only valid UTF-8 (LLGuidance's `tokenize_assumes_string`) and invalid UTF-8 in
    /// between is tokenized by greedy longest match.
    pub fn with_tokenize_fn(vocab: Vocabulary, f: Arc<TokenizeFn>, any_bytes: bool) -> Tokenizer {
        Tokenizer::new(vocab, Backend::Callback { f, any_bytes })
    }

    /// The same canonical tokenizer over a changed copy of the vocabulary: `f` may pad it
    /// ([`Vocabulary::pad_to`]) or set its EOS tokens ([`Vocabulary::set_eos_tokens`]); it
    /// must keep every id the tokenizer produces.
    pub fn map_vocab(
        &self,
        f: impl FnOnce(&mut Vocabulary) -> Result<(), Error>,
    ) -> Result<Tokenizer, Error> {
        let mut vocab = self.inner.vocab.clone();
        f(&mut vocab)?;
        Ok(Tokenizer::with_backend(vocab, Arc::clone(&self.inner.backend)))
    }

    fn new(vocab: Vocabulary, backend: Backend) -> Tokenizer {
        Tokenizer::with_backend(vocab, Arc::new(backend))
    }

    fn with_backend(vocab: Vocabulary, backend: Arc<Backend>) -> Tokenizer {
        Tokenizer {
            inner: Arc::new(Inner {
                vocab,
                backend,
                greedy: OnceLock::new(),
                specials: OnceLock::new(),
            }),
        }
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocabulary {
        &self.inner.vocab
    }

    /// Whether [`Tokenizer::tokenize`] is available (canonical).
    pub fn has_canonical(&self) -> bool {
        !matches!(*self.inner.backend, Backend::Unavailable(_))
    }

    /// Which canonical tokenizer is used: `"bytes"`, `"hf"`, `"tiktoken"`, `"callback"`
    /// or `"none"`.
    pub fn canonical_kind(&self) -> &'static str {
        match &*self.inner.backend {
            Backend::Bytes => "bytes",
            Backend::Unavailable(_) => "none",
            #[cfg(feature = "hf")]
            Backend::Hf(_) => "hf",
            #[cfg(feature = "tiktoken")]
            Backend::Tiktoken { .. } => "tiktoken",
            Backend::Callback { .. } => "callback",
        }
    }

    /// Canonical tokenization of `text` as ordinary text (see the module documentation):
    /// identical to the HF `tokenizers` / tiktoken output for it, with no special tokens
    /// recognized or added.
    pub fn tokenize(&self, text: &str) -> Result<Vec<TokenId>, Error> {
        let mut out = Vec::new();
        self.tokenize_into(text, &mut out)?;
        Ok(out)
    }

    /// Canonical tokenization of bytes. [`crate::SPECIAL_TOKEN_MARKER`] followed by a
    /// special token name (the trie bytes of a special token) becomes that token, and the
    /// marker followed by `[id]` the token of that id (LLGuidance's notation); the rest
    /// is split into maximal valid UTF-8 runs, each tokenized with [`Tokenizer::tokenize`],
    /// and invalid UTF-8 between them, tokenized by greedy longest match (there is no
    /// canonical answer for it; byte-level and byte-fallback vocabularies give byte tokens).
    pub fn tokenize_bytes(&self, bytes: &[u8]) -> Result<Vec<TokenId>, Error> {
        let mut out = Vec::new();
        let specials = self.specials();
        let (mut start, mut i) = (0, 0);
        while i < bytes.len() {
            if bytes[i] == crate::SPECIAL_TOKEN_MARKER {
                let found = specials
                    .find(&bytes[i + 1..])
                    .or_else(|| self.token_by_id_syntax(&bytes[i + 1..]));
                if let Some((n, id)) = found {
                    self.tokenize_bytes_no_marker(&bytes[start..i], &mut out)?;
                    out.push(id);
                    i += 1 + n;
                    start = i;
                    continue;
                }
            }
            i += 1;
        }
        self.tokenize_bytes_no_marker(&bytes[start..], &mut out)?;
        Ok(out)
    }

    /// `[123]` (after the marker): any token by id, as LLGuidance writes tokens in byte
    /// strings; (its length, the id) when the id is in the vocabulary.
    fn token_by_id_syntax(&self, b: &[u8]) -> Option<(usize, TokenId)> {
        let rest = b.strip_prefix(b"[")?;
        let end = rest.iter().position(|&c| c == b']')?;
        let digits = &rest[..end];
        if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let id: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
        (id < self.inner.vocab.len()).then(|| (end + 2, TokenId::from_usize(id)))
    }

    fn tokenize_bytes_no_marker(
        &self,
        mut rest: &[u8],
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        if let Backend::Callback { f, any_bytes: true } = &*self.inner.backend {
            return self.callback_into(f.as_ref(), rest, out);
        }
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(s) => return self.tokenize_into(s, out),
                Err(e) => {
                    let valid = e.valid_up_to();
                    let text = std::str::from_utf8(&rest[..valid]).expect("checked by from_utf8");
                    self.tokenize_into(text, out)?;
                    rest = &rest[valid..];
                    // The invalid run: up to the next position where valid UTF-8 resumes.
                    let mut end = e.error_len().unwrap_or(rest.len());
                    while end < rest.len() {
                        match std::str::from_utf8(&rest[end..]) {
                            Err(e2) if e2.valid_up_to() == 0 => {
                                end += e2.error_len().unwrap_or(rest.len() - end)
                            }
                            _ => break,
                        }
                    }
                    self.greedy_into(&rest[..end], out)?;
                    rest = &rest[end..];
                }
            }
        }
        Ok(())
    }

    /// Like [`Tokenizer::tokenize`], but the names of special tokens in `text` (e.g.
    /// `<|eot_id|>`) become those tokens (leftmost, longest name first).
    pub fn tokenize_with_special(&self, text: &str) -> Result<Vec<TokenId>, Error> {
        let specials = self.specials();
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let (mut start, mut i) = (0, 0);
        while i < bytes.len() {
            match specials.find(&bytes[i..]) {
                Some((n, id)) => {
                    // Names are whole strings, so i and i + n are char boundaries.
                    self.tokenize_into(&text[start..i], &mut out)?;
                    out.push(id);
                    i += n;
                    start = i;
                }
                None => i += 1,
            }
        }
        self.tokenize_into(&text[start..], &mut out)?;
        Ok(out)
    }

    /// Greedy longest match over the regular tokens (not canonical: a model's tokenizer
    /// may split differently); always available. Errors if some byte is in no token.
    pub fn tokenize_greedy(&self, bytes: &[u8]) -> Result<Vec<TokenId>, Error> {
        let mut out = Vec::new();
        self.greedy_into(bytes, &mut out)?;
        Ok(out)
    }

    fn tokenize_into(&self, text: &str, out: &mut Vec<TokenId>) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        let tok_err = |m: String| Error::new(ErrorKind::Tokenize, m);
        match &*self.inner.backend {
            Backend::Bytes => self.greedy_into(text.as_bytes(), out),
            Backend::Unavailable(why) => Err(tok_err(why.clone())),
            #[cfg(feature = "hf")]
            Backend::Hf(t) => {
                let enc = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    t.encode(text, false)
                }))
                .map_err(|_| tok_err("the tokenizers crate panicked".to_string()))?
                .map_err(|e| tok_err(format!("tokenizers: {e}")))?;
                out.extend(enc.get_ids().iter().map(|&i| TokenId(i)));
                Ok(())
            }
            #[cfg(feature = "tiktoken")]
            Backend::Tiktoken { bpe, rank_offset } => {
                let bpe = match bpe {
                    Bpe::Static(b) => *b,
                    Bpe::Owned(b) => b,
                };
                // tiktoken-rs unwraps regex errors (fancy-regex backtrack limit) inside.
                let ranks = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    bpe.encode_ordinary(text)
                }))
                .map_err(|_| {
                    tok_err("tiktoken-rs panicked (regex backtrack limit?)".to_string())
                })?;
                out.extend(ranks.into_iter().map(|r| TokenId(r + rank_offset)));
                Ok(())
            }
            Backend::Callback { f, .. } => self.callback_into(f.as_ref(), text.as_bytes(), out),
        }
    }

    /// The caller's tokenization of `bytes`, checked; greedy longest match when it fails
    /// or does not spell `bytes` with ids of this vocabulary.
    fn callback_into(
        &self,
        f: &TokenizeFn,
        bytes: &[u8],
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        if bytes.is_empty() {
            return Ok(());
        }
        let v = &self.inner.vocab;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(bytes)));
        if let Ok(Ok(ids)) = r {
            // A special token is never the tokenization of text (a callback that parses
            // special-token names in text would otherwise turn `<|eot_id|>` into one).
            let regular = |t: u32| (t as usize) < v.len() && !v.is_special(TokenId(t));
            let ok = ids.iter().all(|&t| regular(t)) && {
                let toks: Vec<TokenId> = ids.iter().map(|&t| TokenId(t)).collect();
                v.decode(&toks) == bytes
            };
            if ok {
                out.extend(ids.into_iter().map(TokenId));
                return Ok(());
            }
        }
        self.greedy_into(bytes, out)
    }

    fn greedy_into(&self, mut bytes: &[u8], out: &mut Vec<TokenId>) -> Result<(), Error> {
        while !bytes.is_empty() {
            let (id, len) = self.greedy_one(bytes)?;
            out.push(id);
            bytes = &bytes[len..];
        }
        Ok(())
    }

    fn greedy_one(&self, bytes: &[u8]) -> Result<(TokenId, usize), Error> {
        let g = self.greedy();
        for len in (1..=g.max_len.min(bytes.len())).rev() {
            if let Some(&id) = g.by_bytes.get(&bytes[..len]) {
                return Ok((id, len));
            }
        }
        Err(Error::new(
            ErrorKind::Tokenize,
            format!("byte 0x{:02x} is in no token of the vocabulary", bytes[0]),
        ))
    }

    fn greedy(&self) -> &Greedy {
        self.inner.greedy.get_or_init(|| {
            let v = &self.inner.vocab;
            let mut by_bytes = HashMap::with_capacity(v.len());
            let mut max_len = 0;
            for (t, b) in v.iter() {
                if !v.is_special(t) {
                    by_bytes.entry(b.to_vec()).or_insert(t);
                    max_len = max_len.max(b.len());
                }
            }
            Greedy { by_bytes, max_len }
        })
    }

    fn specials(&self) -> &Specials {
        self.inner.specials.get_or_init(|| {
            let v = &self.inner.vocab;
            let mut by_first: HashMap<u8, Vec<(Vec<u8>, TokenId)>> = HashMap::new();
            for t in v.special_tokens().iter() {
                let name = &v.token_bytes(t)[1..];
                if let Some(&b) = name.first() {
                    let list = by_first.entry(b).or_default();
                    if !list.iter().any(|(n, _)| n == name) {
                        list.push((name.to_vec(), t));
                    }
                }
            }
            for list in by_first.values_mut() {
                list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
            }
            Specials { by_first }
        })
    }
}

#[cfg(feature = "hf")]
fn hf_backend(data: &[u8], sentencepiece: bool) -> Backend {
    let build = || -> Result<tokenizers::Tokenizer, String> {
        let mut t =
            tokenizers::Tokenizer::from_bytes(data).map_err(|e| format!("tokenizers: {e}"))?;
        t.set_encode_special_tokens(true);
        if sentencepiece {
            drop_dummy_prefix(&mut t)?;
        }
        Ok(t)
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(build)) {
        Ok(Ok(t)) => Backend::Hf(Box::new(t)),
        Ok(Err(e)) => Backend::Unavailable(format!("canonical tokenization unavailable: {e}")),
        Err(_) => Backend::Unavailable(
            "canonical tokenization unavailable: the tokenizers crate panicked".into(),
        ),
    }
}

#[cfg(not(feature = "hf"))]
fn hf_backend(_data: &[u8], _sentencepiece: bool) -> Backend {
    Backend::Unavailable(
        "canonical tokenization of tokenizer.json files needs the `hf` feature of toktrie".into(),
    )
}

/// Removes `Prepend ▁` normalizers and sets Metaspace pre-tokenizers to never prepend.
#[cfg(feature = "hf")]
fn drop_dummy_prefix(t: &mut tokenizers::Tokenizer) -> Result<(), String> {
    use serde_json::Value;
    use tokenizers::{NormalizerWrapper, PreTokenizerWrapper};
    fn strip(v: &mut Value, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        let mut changed = false;
        if let Some(Value::Array(items)) = v.get_mut("normalizers") {
            let n = items.len();
            items.retain(|x| x.get("type").and_then(Value::as_str) != Some("Prepend"));
            changed |= items.len() != n;
            for x in items.iter_mut() {
                changed |= strip(x, depth + 1);
            }
        }
        if let Some(Value::Array(items)) = v.get_mut("pretokenizers") {
            for x in items.iter_mut() {
                changed |= strip(x, depth + 1);
            }
        }
        if v.get("type").and_then(Value::as_str) == Some("Metaspace") {
            v["prepend_scheme"] = Value::String("never".into());
            changed = true;
        }
        changed
    }
    let err = |e: serde_json::Error| format!("dropping the dummy prefix: {e}");
    if let Some(n) = t.get_normalizer() {
        let mut v = serde_json::to_value(n).map_err(err)?;
        if v.get("type").and_then(Value::as_str) == Some("Prepend") {
            t.with_normalizer(None::<NormalizerWrapper>);
        } else if strip(&mut v, 0) {
            let n: NormalizerWrapper = serde_json::from_value(v).map_err(err)?;
            t.with_normalizer(Some(n));
        }
    }
    if let Some(p) = t.get_pre_tokenizer() {
        let mut v = serde_json::to_value(p).map_err(err)?;
        if strip(&mut v, 0) {
            let p: PreTokenizerWrapper = serde_json::from_value(v).map_err(err)?;
            t.with_pre_tokenizer(Some(p));
        }
    }
    Ok(())
}

#[cfg(feature = "hf")]
fn sp_backend(info: &load::SpModelInfo) -> Backend {
    match load::sentencepiece::to_hf_json(info) {
        Ok(json) => hf_backend(&json, false),
        Err(e) => Backend::Unavailable(e.message().to_string()),
    }
}

#[cfg(not(feature = "hf"))]
fn sp_backend(_info: &load::SpModelInfo) -> Backend {
    Backend::Unavailable(
        "canonical tokenization of SentencePiece models needs the `hf` feature of toktrie".into(),
    )
}

#[cfg(feature = "tiktoken")]
fn tiktoken_backend(vocab: &Vocabulary, pattern: &str, rank_offset: u32) -> Backend {
    let mut encoder =
        std::collections::HashMap::with_capacity_and_hasher(vocab.len(), Default::default());
    let mut n = 0;
    for (t, b) in vocab.iter() {
        if !vocab.is_special(t) {
            let Some(rank) = t.0.checked_sub(rank_offset) else { continue };
            encoder.insert(b.to_vec(), rank);
            n += 1;
        }
    }
    if encoder.len() != n {
        return Backend::Unavailable(
            "canonical tokenization unavailable: several ranks have the same bytes".into(),
        );
    }
    let build = || tiktoken_rs::CoreBPE::new(encoder, Default::default(), pattern);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(build)) {
        Ok(Ok(bpe)) => Backend::Tiktoken { bpe: Bpe::Owned(Box::new(bpe)), rank_offset },
        Ok(Err(e)) => {
            Backend::Unavailable(format!("canonical tokenization unavailable: tiktoken-rs: {e}"))
        }
        Err(_) => {
            Backend::Unavailable("canonical tokenization unavailable: tiktoken-rs panicked".into())
        }
    }
}

#[cfg(not(feature = "tiktoken"))]
fn tiktoken_backend(_vocab: &Vocabulary, _pattern: &str, _rank_offset: u32) -> Backend {
    Backend::Unavailable(
        "canonical tokenization of tiktoken vocabularies needs the `tiktoken` feature of toktrie"
            .into(),
    )
}
