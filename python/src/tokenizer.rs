//! `LLTokenizer`: a vocabulary with its canonical tokenizer, its token trie and the slices
//! the mask computation uses (one `ParserFactory`).

use llguidance::{ParserFactory, TokenId, Tokenizer};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use slicer::{SliceSpec, WS_SLICE};
use toktrie::{VocabBuilder, Vocabulary};

/// LLGuidance's `byte` tokenizer: the 256 bytes, then six special tokens, EOS the last.
const BYTE_SPECIALS: [&str; 6] =
    ["<|tool|>", "<|/tool|>", "<|user|>", "<|system|>", "<|assistant|>", "<|end|>"];

fn byte_vocab() -> Vocabulary {
    let mut b = VocabBuilder::new();
    b.name("byte");
    for i in 0..256u32 {
        b.token(TokenId(i), &[i as u8]).expect("one byte is not empty");
    }
    for (i, n) in BYTE_SPECIALS.iter().enumerate() {
        b.special(TokenId(256 + i as u32), n).expect("in range");
    }
    b.eos(TokenId(256 + BYTE_SPECIALS.len() as u32 - 1));
    b.build().expect("the byte vocabulary is valid")
}

pub(crate) fn val_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A slice given as LLGuidance writes it; `None` for the whitespace slice.
fn parse_slice(s: &str) -> PyResult<Option<SliceSpec>> {
    SliceSpec::parse_llguidance(s).map_err(val_err)
}

fn slice_string(s: &SliceSpec) -> String {
    match s.max {
        Some(max) if max == s.min => format!("{}{{{}}}", s.class, s.min),
        Some(max) => format!("{}{{{},{}}}", s.class, s.min, max),
        None if s.min == 1 => format!("{}+", s.class),
        None => format!("{}{{{},}}", s.class, s.min),
    }
}

fn general_slices() -> Vec<String> {
    std::iter::once(WS_SLICE.to_string())
        .chain(SliceSpec::general().iter().map(slice_string))
        .collect()
}

fn json_slices() -> Vec<String> {
    std::iter::once(WS_SLICE.to_string())
        .chain(SliceSpec::json_default().iter().map(slice_string))
        .collect()
}

/// A tokenizer for LLMatcher: a vocabulary, its canonical tokenization and mask slices.
#[pyclass(frozen, module = "llg_rs._lib")]
pub struct LLTokenizer {
    pub(crate) factory: ParserFactory,
    /// An LLGuidance tokenizer wrapper object: it tokenizes text (callable).
    wrapper: Option<Py<PyAny>>,
    slices: Option<Vec<String>>,
}

impl LLTokenizer {
    pub(crate) fn tokenizer(&self) -> &Tokenizer {
        self.factory.tokenizer()
    }

    pub(crate) fn vocab(&self) -> &Vocabulary {
        self.factory.tokenizer().vocab()
    }

    fn check_ids(&self, tokens: &[u32]) -> PyResult<()> {
        let n = self.vocab().len();
        match tokens.iter().find(|&&t| t as usize >= n) {
            Some(t) => Err(val_err(format!("token id {t} out of range (vocab size {n})"))),
            None => Ok(()),
        }
    }

    fn with_factory_slices(
        factory: ParserFactory,
        slices: Option<&[String]>,
    ) -> PyResult<ParserFactory> {
        match slices {
            None => Ok(factory),
            Some(list) => {
                let mut specs = Vec::new();
                for s in list {
                    if let Some(spec) = parse_slice(s)? {
                        specs.push(spec);
                    }
                }
                if specs.is_empty() {
                    Ok(factory.with_slicer(false))
                } else {
                    factory.with_slice_specs(&specs).map_err(val_err)
                }
            }
        }
    }

    /// Canonical tokenization of text (the wrapper's, if any).
    fn tokenize_text(&self, py: Python<'_>, text: &str, special: bool) -> PyResult<Vec<u32>> {
        if let Some(w) = &self.wrapper {
            let r = w.call1(py, (text,))?;
            return r.extract::<Vec<u32>>(py);
        }
        let tok = self.tokenizer().clone();
        let text = text.to_string();
        let r = py.detach(move || {
            if !tok.has_canonical() {
                tok.tokenize_greedy(text.as_bytes())
            } else if special {
                tok.tokenize_with_special(&text)
            } else {
                tok.tokenize(&text)
            }
        });
        Ok(r.map_err(val_err)?.into_iter().map(|t| t.0).collect())
    }

    fn tokenize_raw_bytes(
        &self,
        py: Python<'_>,
        bytes: &[u8],
        special: bool,
    ) -> PyResult<Vec<u32>> {
        if self.wrapper.is_none() {
            if special {
                if let Ok(s) = std::str::from_utf8(bytes) {
                    return self.tokenize_text(py, s, true);
                }
            }
            // Valid UTF-8 runs canonically, the rest greedily; the special-token marker
            // byte followed by a name or `[id]` is that token.
            let tok = self.tokenizer().clone();
            let b = bytes.to_vec();
            let r = py.detach(move || {
                if tok.has_canonical() {
                    tok.tokenize_bytes(&b)
                } else {
                    tok.tokenize_greedy(&b)
                }
            });
            return Ok(r.map_err(val_err)?.into_iter().map(|t| t.0).collect());
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => self.tokenize_text(py, s, special),
            Err(e) => {
                // The valid prefix through the wrapper, the rest greedily.
                let valid = e.valid_up_to();
                let s = std::str::from_utf8(&bytes[..valid]).expect("checked");
                let mut out = self.tokenize_text(py, s, special)?;
                let rest = self.tokenizer().tokenize_greedy(&bytes[valid..]).map_err(val_err)?;
                out.extend(rest.into_iter().map(|t| t.0));
                Ok(out)
            }
        }
    }

    /// LLGuidance's debug form of tokens (see `toktrie::Vocabulary::dbg_tokens`).
    fn trace(&self, tokens: &[u32], quoted: bool) -> String {
        let ids: Vec<TokenId> = tokens.iter().map(|&t| TokenId(t)).collect();
        self.vocab().dbg_tokens(&ids, quoted)
    }
}

/// A tokenizer from a tokenizer-wrapper object (LLGuidance's `TokenizerWrapper` shape:
/// `tokens`, `eos_token_id`, `bos_token_id`, `special_token_ids`, callable on text).
fn from_wrapper(obj: &Bound<'_, PyAny>) -> PyResult<Tokenizer> {
    let flagged = obj.getattr("is_tokenizer_wrapper").is_ok_and(|f| f.is_truthy().unwrap_or(false));
    let tokens = match obj.getattr("tokens") {
        Ok(t) if flagged || !t.is_none() => t,
        _ => return Err(PyValueError::new_err("Expecting a TokenizerWrapper() class")),
    };
    let specials: Vec<u32> = match obj.getattr("special_token_ids") {
        Ok(s) if !s.is_none() => s.extract()?,
        _ => Vec::new(),
    };
    let eos: Option<u32> = obj.getattr("eos_token_id").ok().and_then(|e| e.extract().ok());
    let mut b = VocabBuilder::new();
    b.name("wrapper");
    let list: Vec<Bound<'_, PyAny>> = tokens.try_iter()?.collect::<PyResult<_>>()?;
    b.min_len(list.len());
    for (i, t) in list.iter().enumerate() {
        let bytes: Vec<u8> = if let Ok(bb) = t.cast::<PyBytes>() {
            bb.as_bytes().to_vec()
        } else if let Ok(s) = t.cast::<PyString>() {
            s.to_cow()?.as_bytes().to_vec()
        } else {
            return Err(PyTypeError::new_err(format!("tokens[{i}] must be bytes")));
        };
        let id = TokenId(i as u32);
        if specials.contains(&(i as u32)) {
            let name = String::from_utf8_lossy(&bytes).into_owned();
            let name = if name.is_empty() { format!("<[{i}]>") } else { name };
            b.special(id, &name).map_err(val_err)?;
        } else if !bytes.is_empty() {
            b.token(id, &bytes).map_err(val_err)?;
        }
    }
    if let Some(e) = eos {
        if (e as usize) < list.len() {
            b.eos(TokenId(e));
        }
    }
    Ok(Tokenizer::from_vocab(b.build().map_err(val_err)?))
}

fn load(py: Python<'_>, src: &Bound<'_, PyAny>) -> PyResult<(Tokenizer, Option<Py<PyAny>>)> {
    if let Ok(s) = src.cast::<PyString>() {
        let s = s.to_cow()?.to_string();
        let r = py.detach(move || -> Result<Tokenizer, String> {
            if s == "byte" {
                return Ok(Tokenizer::from_vocab(byte_vocab()));
            }
            if s.trim_start().starts_with('{') {
                return Tokenizer::from_bytes("tokenizer.json", s.as_bytes())
                    .map_err(|e| format!("tokenizer JSON: {e}"));
            }
            ParserFactory::from_tokenizer_name(&s).map(|f| f.tokenizer().clone()).map_err(|e| {
                format!(
                    "error loading tokenizer: {s}: {e} (llg_rs loads tokenizer files, \
                     tokenizer.json text, the built-in names byte, bytes, o200k, cl100k, or \
                     llg_rs.hf.from_tokenizer(); it does not download from the Hugging Face hub)"
                )
            })
        });
        return r.map(|t| (t, None)).map_err(PyValueError::new_err);
    }
    if src.is_instance_of::<PyBytes>() || src.is_none() || src.extract::<i64>().is_ok() {
        return Err(PyValueError::new_err("Expecting a TokenizerWrapper() class"));
    }
    let t = from_wrapper(src)?;
    let callable = src.is_callable().then(|| src.clone().unbind());
    Ok((t, callable))
}

#[pymethods]
impl LLTokenizer {
    #[new]
    #[pyo3(signature = (tokenizer, n_vocab = None, eos_token = None, slices = None))]
    fn new(
        py: Python<'_>,
        tokenizer: &Bound<'_, PyAny>,
        n_vocab: Option<usize>,
        eos_token: Option<&Bound<'_, PyAny>>,
        slices: Option<Vec<String>>,
    ) -> PyResult<LLTokenizer> {
        let (tok, wrapper) = load(py, tokenizer)?;
        Self::finish(py, tok, wrapper, n_vocab, eos_token, slices)
    }

    /// A tokenizer from a tiktoken encoding's parts (what `llg_rs.tiktoken` passes):
    /// `encoder` maps token bytes to ranks, `special_tokens` names to ids, `pattern` is the
    /// pre-tokenizer regex.
    #[staticmethod]
    #[pyo3(signature = (encoder, special_tokens, pattern, eos_token = None, n_vocab = None, slices = None))]
    fn from_tiktoken(
        py: Python<'_>,
        encoder: std::collections::HashMap<Vec<u8>, u32>,
        special_tokens: std::collections::HashMap<String, u32>,
        pattern: &str,
        eos_token: Option<&Bound<'_, PyAny>>,
        n_vocab: Option<usize>,
        slices: Option<Vec<String>>,
    ) -> PyResult<LLTokenizer> {
        let ranks: Vec<(Vec<u8>, u32)> = encoder.into_iter().collect();
        let specials: Vec<(&str, TokenId)> =
            special_tokens.iter().map(|(n, &id)| (n.as_str(), TokenId(id))).collect();
        let tok = Tokenizer::from_tiktoken_ranks(&ranks, &specials, pattern).map_err(val_err)?;
        Self::finish(py, tok, None, n_vocab, eos_token, slices)
    }

    /// A copy of this tokenizer with other mask slices (`[]`: none).
    fn with_slices(&self, py: Python<'_>, slices: Vec<String>) -> PyResult<LLTokenizer> {
        let factory = Self::with_factory_slices(self.factory.clone(), Some(&slices))?;
        Ok(LLTokenizer {
            factory,
            wrapper: self.wrapper.as_ref().map(|w| w.clone_ref(py)),
            slices: Some(slices),
        })
    }

    /// The default slices (good for most grammars).
    #[staticmethod]
    fn general_slices() -> Vec<String> {
        general_slices()
    }

    /// Slices for JSON Schema grammars.
    #[staticmethod]
    fn json_slices() -> Vec<String> {
        json_slices()
    }

    /// The number of token ids (the mask width).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab().len()
    }

    /// The (first) EOS token.
    #[getter]
    fn eos_token(&self) -> PyResult<u32> {
        self.vocab()
            .eos_tokens()
            .first()
            .map(|t| t.0)
            .ok_or_else(|| val_err("the tokenizer has no EOS token"))
    }

    /// All EOS tokens.
    #[getter]
    fn eos_tokens(&self) -> Vec<u32> {
        self.vocab().eos_tokens().iter().map(|t| t.0).collect()
    }

    /// Whether tokenization is the model's own (canonical).
    #[getter]
    fn is_canonical(&self) -> bool {
        self.wrapper.is_some() || self.tokenizer().has_canonical()
    }

    /// The slices this tokenizer was made with (`None`: the default).
    #[getter]
    fn slices(&self) -> Option<Vec<String>> {
        self.slices.clone()
    }

    /// Greedy longest-match tokenization (not necessarily the model's).
    fn greedy_tokenize(&self, text: &str) -> PyResult<Vec<u32>> {
        let r = self.tokenizer().tokenize_greedy(text.as_bytes()).map_err(val_err)?;
        Ok(r.into_iter().map(|t| t.0).collect())
    }

    /// Tokenizes bytes: the valid UTF-8 prefix canonically, the rest greedily.
    #[pyo3(signature = (utf8bytes, *, parse_special = false))]
    fn tokenize_bytes(
        &self,
        py: Python<'_>,
        utf8bytes: &[u8],
        parse_special: bool,
    ) -> PyResult<Vec<u32>> {
        self.tokenize_raw_bytes(py, utf8bytes, parse_special)
    }

    /// Tokenizes text.
    #[pyo3(signature = (text, *, parse_special = false))]
    fn tokenize_str(&self, py: Python<'_>, text: &str, parse_special: bool) -> PyResult<Vec<u32>> {
        self.tokenize_text(py, text, parse_special)
    }

    /// Tokenizes the prefix of `new_bytes` whose tokens cannot change when more bytes
    /// follow; returns the tokens and the bytes left over.
    #[pyo3(signature = (new_bytes, recent_tokens = None))]
    fn tokenize_partial<'py>(
        &self,
        py: Python<'py>,
        new_bytes: &[u8],
        recent_tokens: Option<Vec<u32>>,
    ) -> PyResult<(Vec<u32>, Bound<'py, PyBytes>)> {
        if let Some(r) = &recent_tokens {
            self.check_ids(r)?;
        }
        let mut toks = self.tokenize_raw_bytes(py, new_bytes, false)?;
        let v = self.vocab();
        let trie = self.factory.trie();
        // Canonical tokenizers split text at word boundaries, so the tokens of an unfinished
        // trailing word may change with the next bytes; so may a last token that a longer
        // token extends. Those are left out (the byte vocabulary has neither problem).
        let byte_is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        let word_start = if self.tokenizer().canonical_kind() == "bytes" {
            new_bytes.len()
        } else {
            new_bytes.len() - new_bytes.iter().rev().take_while(|&&b| byte_is_word(b)).count()
        };
        // Tokens are left out from the end; `tail` bytes of the input are theirs (regular
        // tokens only: a special token always stays, and ends the search).
        let mut tail = 0usize;
        while let Some(&last) = toks.last() {
            let id = TokenId(last);
            if v.is_special(id) {
                break;
            }
            let b = v.token_bytes(id);
            let end = new_bytes.len() - tail;
            if b.len() > end || !new_bytes[..end].ends_with(b) {
                break;
            }
            let uncertain = (tail == 0 && trie.has_extensions(b)) || end > word_start;
            if !uncertain {
                break;
            }
            toks.pop();
            tail += b.len();
        }
        let rest = &new_bytes[new_bytes.len() - tail..];
        Ok((toks, PyBytes::new(py, rest)))
    }

    /// Text of the tokens (invalid UTF-8 replaced).
    fn decode_str(&self, tokens: Vec<u32>) -> PyResult<String> {
        self.check_ids(&tokens)?;
        let ids: Vec<TokenId> = tokens.into_iter().map(TokenId).collect();
        Ok(String::from_utf8_lossy(&self.vocab().decode(&ids)).into_owned())
    }

    /// Bytes of the tokens (special tokens as their names).
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<u32>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.check_ids(&tokens)?;
        let ids: Vec<TokenId> = tokens.into_iter().map(TokenId).collect();
        Ok(PyBytes::new(py, &self.vocab().decode(&ids)))
    }

    /// Whether the token is special.
    fn is_special_token(&self, token: i64) -> bool {
        token >= 0
            && (token as usize) < self.vocab().len()
            && self.vocab().is_special(TokenId(token as u32))
    }

    /// The tokens for people: `⟦a‧b⟧`, special tokens by name, EOS as `≺EOS≻`.
    fn dbg_tokens(&self, tokens: Vec<u32>) -> String {
        format!("⟦{}⟧", self.trace(&tokens, true))
    }

    /// The tokens for test traces: `a‧b`, unquoted.
    fn test_trace_tokens(&self, tokens: Vec<u32>) -> String {
        self.trace(&tokens, false)
    }

    fn __repr__(&self) -> String {
        format!(
            "LLTokenizer({:?}, vocab_size={}, eos_tokens={:?})",
            self.vocab().name(),
            self.vocab().len(),
            self.vocab().eos_tokens().iter().map(|t| t.0).collect::<Vec<_>>()
        )
    }
}

impl LLTokenizer {
    fn finish(
        py: Python<'_>,
        mut tok: Tokenizer,
        wrapper: Option<Py<PyAny>>,
        n_vocab: Option<usize>,
        eos_token: Option<&Bound<'_, PyAny>>,
        slices: Option<Vec<String>>,
    ) -> PyResult<LLTokenizer> {
        let eos: Option<Vec<u32>> = match eos_token {
            None => None,
            Some(e) if e.is_none() => None,
            Some(e) => Some(match e.extract::<u32>() {
                Ok(one) => vec![one],
                Err(_) => {
                    let v = e.extract::<Vec<u32>>().map_err(|_| {
                        PyValueError::new_err(
                            "eos_token must be an int or a non-empty list of ints",
                        )
                    })?;
                    if v.is_empty() {
                        return Err(PyValueError::new_err("eos_token list must not be empty"));
                    }
                    v
                }
            }),
        };
        if n_vocab.is_some() || eos.is_some() {
            tok = tok
                .map_vocab(|v| {
                    if let Some(n) = n_vocab {
                        if n != v.len() {
                            v.pad_to(n)?;
                        }
                    }
                    if let Some(e) = &eos {
                        if let Some(&bad) = e.iter().find(|&&t| t as usize >= v.len()) {
                            return Err(toktrie::Error::new(
                                toktrie::ErrorKind::Limit,
                                format!(
                                    "EOS token ID {bad} is out of range (vocab_size={})",
                                    v.len()
                                ),
                            ));
                        }
                        let ids: Vec<TokenId> = e.iter().map(|&t| TokenId(t)).collect();
                        v.set_eos_tokens(&ids)?;
                    }
                    Ok(())
                })
                .map_err(val_err)?;
        }
        let factory = py.detach(move || ParserFactory::new(tok)).map_err(val_err)?;
        let factory = Self::with_factory_slices(factory, slices.as_deref())?;
        Ok(LLTokenizer { factory, wrapper, slices })
    }
}
