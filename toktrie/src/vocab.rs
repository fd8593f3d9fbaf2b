//! [`Vocabulary`]: the byte strings of all tokens, special tokens, EOS ids.

use hashbrown::HashMap;

use crate::{Error, ErrorKind, TokenId, TokenSet};

/// The byte that starts the trie bytes of every special token: `0xFF` followed by the
/// token's name (e.g. `\xFF<|eot_id|>`). 0xFF never occurs in valid UTF-8, so grammars over
/// text never match a special token by its bytes.
pub const SPECIAL_TOKEN_MARKER: u8 = 0xFF;

/// Names tried, in order, for the default EOS token of a loaded tokenizer (as LLGuidance).
pub const DEFAULT_EOS_NAMES: &[&str] =
    &["</s>", "<|endoftext|>", "<|end_of_text|>", "<｜end▁of▁sentence｜>", "<eos>"];

/// The vocabulary of a tokenizer: for each token id, its bytes.
///
/// Special tokens (control tokens such as `<|eot_id|>`) have the bytes
/// [`SPECIAL_TOKEN_MARKER`] + name. Ids no token uses (holes, padding up to the logits width)
/// have empty bytes and never appear in a mask. Several ids may have the same bytes
/// (duplicates); all are kept and all are allowed together.
#[derive(Clone, Debug)]
pub struct Vocabulary {
    name: String,
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    special: TokenSet,
    special_by_name: HashMap<String, TokenId>,
    eos: Vec<TokenId>,
}

/// Builds a [`Vocabulary`] token by token.
#[derive(Clone, Debug, Default)]
pub struct VocabBuilder {
    name: String,
    tokens: Vec<Option<(Vec<u8>, bool)>>,
    eos: Vec<TokenId>,
    eos_names: Vec<String>,
}

impl VocabBuilder {
    /// An empty builder; the vocabulary grows to the largest id set.
    pub fn new() -> VocabBuilder {
        VocabBuilder::default()
    }

    /// Names the vocabulary (shown in statistics and errors).
    pub fn name(&mut self, name: &str) -> &mut Self {
        self.name = name.to_string();
        self
    }

    /// Makes the vocabulary at least `n` ids wide (unset ids are holes).
    pub fn min_len(&mut self, n: usize) -> &mut Self {
        if self.tokens.len() < n {
            self.tokens.resize(n, None);
        }
        self
    }

    fn slot(&mut self, id: TokenId) -> Result<&mut Option<(Vec<u8>, bool)>, Error> {
        let i = id.as_usize();
        if i >= TokenId::MAX_VOCAB {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("token id {i} too large (at most {} ids)", TokenId::MAX_VOCAB),
            ));
        }
        self.min_len(i + 1);
        Ok(&mut self.tokens[i])
    }

    /// Sets the bytes of a regular token. Empty byte strings are an error.
    pub fn token(&mut self, id: TokenId, bytes: &[u8]) -> Result<&mut Self, Error> {
        if bytes.is_empty() {
            return Err(Error::format(format!("token {id} has no bytes")));
        }
        *self.slot(id)? = Some((bytes.to_vec(), false));
        Ok(self)
    }

    /// Sets a special token by its name (e.g. `<|eot_id|>`); its bytes become
    /// [`SPECIAL_TOKEN_MARKER`] + name.
    pub fn special(&mut self, id: TokenId, name: &str) -> Result<&mut Self, Error> {
        let mut bytes = Vec::with_capacity(name.len() + 1);
        bytes.push(SPECIAL_TOKEN_MARKER);
        bytes.extend_from_slice(name.as_bytes());
        *self.slot(id)? = Some((bytes, true));
        Ok(self)
    }

    /// Adds an EOS id (several are allowed). Without any, [`VocabBuilder::build`] picks the
    /// default EOS by name ([`DEFAULT_EOS_NAMES`]).
    pub fn eos(&mut self, id: TokenId) -> &mut Self {
        if !self.eos.contains(&id) {
            self.eos.push(id);
        }
        self
    }

    /// Adds an EOS token by its special-token name, resolved at build time.
    pub fn eos_name(&mut self, name: &str) -> &mut Self {
        self.eos_names.push(name.to_string());
        self
    }

    /// Whether `id` has been set.
    pub fn is_set(&self, id: TokenId) -> bool {
        matches!(self.tokens.get(id.as_usize()), Some(Some(_)))
    }

    /// The number of ids so far.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether no id has been set or reserved.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Builds the vocabulary.
    pub fn build(&self) -> Result<Vocabulary, Error> {
        let n = self.tokens.len();
        if n == 0 {
            return Err(Error::format("vocabulary has no tokens"));
        }
        let total: usize = self.tokens.iter().flatten().map(|(b, _)| b.len()).sum();
        if total > u32::MAX as usize {
            return Err(Error::new(ErrorKind::Limit, "vocabulary bytes exceed 4 GiB"));
        }
        let mut bytes = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(n + 1);
        let mut special = TokenSet::new(n);
        let mut special_by_name = HashMap::new();
        offsets.push(0);
        for (i, t) in self.tokens.iter().enumerate() {
            if let Some((b, is_special)) = t {
                bytes.extend_from_slice(b);
                if *is_special {
                    let id = TokenId::from_usize(i);
                    special.insert(id);
                    let name = String::from_utf8_lossy(&b[1..]).into_owned();
                    special_by_name.entry(name).or_insert(id);
                }
            }
            offsets.push(bytes.len() as u32);
        }
        let mut v = Vocabulary {
            name: self.name.clone(),
            bytes,
            offsets,
            special,
            special_by_name,
            eos: Vec::new(),
        };
        let mut eos = self.eos.clone();
        for name in &self.eos_names {
            match v.special_token(name) {
                Some(id) if !eos.contains(&id) => eos.push(id),
                Some(_) => {}
                None => {
                    return Err(Error::new(
                        ErrorKind::UnknownToken,
                        format!("EOS token {name:?} is not a special token of this vocabulary"),
                    ))
                }
            }
        }
        if eos.is_empty() {
            eos.extend(v.default_eos());
        }
        v.set_eos_tokens(&eos)?;
        Ok(v)
    }
}

impl Vocabulary {
    /// The built-in byte vocabulary: tokens 0..=255 are the single bytes, 256 is EOS
    /// (a special token named `</s>`).
    pub fn bytes() -> Vocabulary {
        let mut b = VocabBuilder::new();
        b.name("bytes");
        for i in 0..256u32 {
            b.token(TokenId(i), &[i as u8]).expect("one byte is not empty");
        }
        b.special(TokenId(256), "</s>").expect("256 is in range");
        b.eos(TokenId(256));
        b.build().expect("the byte vocabulary is valid")
    }

    /// The vocabulary's name (a built-in name or the file it was loaded from).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of token ids (the width of the mask and of the model's logits).
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the vocabulary has no ids (never true for a built vocabulary).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `id`: empty for holes and ids out of range.
    #[inline]
    pub fn token_bytes(&self, id: TokenId) -> &[u8] {
        let i = id.as_usize();
        if i + 1 >= self.offsets.len() {
            return &[];
        }
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The bytes of `id`, or an error if it is out of range.
    pub fn try_token_bytes(&self, id: TokenId) -> Result<&[u8], Error> {
        if id.as_usize() >= self.len() {
            return Err(Error::new(
                ErrorKind::UnknownToken,
                format!("token id {id} out of range (vocabulary has {} ids)", self.len()),
            ));
        }
        Ok(self.token_bytes(id))
    }

    /// Whether `id` is a special token.
    #[inline]
    pub fn is_special(&self, id: TokenId) -> bool {
        self.special.contains(id)
    }

    /// The set of special tokens.
    pub fn special_tokens(&self) -> &TokenSet {
        &self.special
    }

    /// The name of special token `id`.
    pub fn special_name(&self, id: TokenId) -> Option<&str> {
        if self.is_special(id) {
            std::str::from_utf8(&self.token_bytes(id)[1..]).ok()
        } else {
            None
        }
    }

    /// The id of the special token called `name` (the lowest id if several share it).
    pub fn special_token(&self, name: &str) -> Option<TokenId> {
        self.special_by_name.get(name).copied()
    }

    /// The EOS ids (possibly several; possibly none for a vocabulary without one).
    pub fn eos_tokens(&self) -> &[TokenId] {
        &self.eos
    }

    /// The first EOS id.
    pub fn eos_token(&self) -> Option<TokenId> {
        self.eos.first().copied()
    }

    /// Replaces the EOS ids; each must be in range.
    pub fn set_eos_tokens(&mut self, eos: &[TokenId]) -> Result<(), Error> {
        for &id in eos {
            self.try_token_bytes(id)?;
        }
        self.eos = eos.to_vec();
        Ok(())
    }

    /// The default EOS by name, as LLGuidance picks it: the first of [`DEFAULT_EOS_NAMES`]
    /// that is a special token, else a regular token with those bytes.
    pub fn default_eos(&self) -> Option<TokenId> {
        DEFAULT_EOS_NAMES.iter().find_map(|n| self.special_token(n)).or_else(|| {
            DEFAULT_EOS_NAMES.iter().find_map(|n| {
                (0..self.len())
                    .map(TokenId::from_usize)
                    .find(|&t| self.token_bytes(t) == n.as_bytes())
            })
        })
    }

    /// Pads the vocabulary with holes up to `n` ids (the model's logits width). Shrinking is
    /// an error.
    pub fn pad_to(&mut self, n: usize) -> Result<(), Error> {
        if n < self.len() {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("cannot pad vocabulary of {} ids down to {n}", self.len()),
            ));
        }
        if n > TokenId::MAX_VOCAB {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("vocabulary of {n} ids is too large"),
            ));
        }
        let end = *self.offsets.last().expect("offsets are never empty");
        self.offsets.resize(n + 1, end);
        let mut special = TokenSet::new(n);
        for t in self.special.iter() {
            special.insert(t);
        }
        self.special = special;
        Ok(())
    }

    /// Tokens joined with `‧`; more than 200 are shown as `…` and the last 200 (LLGuidance's
    /// form).
    pub fn dbg_tokens(&self, tokens: &[TokenId], quoted: bool) -> String {
        let (dots, shown) =
            if tokens.len() > 200 { ("…", &tokens[tokens.len() - 200..]) } else { ("", tokens) };
        let parts: Vec<String> = shown.iter().map(|&t| self.dbg_token(t, quoted)).collect();
        format!("{dots}{}", parts.join("‧"))
    }

    /// The bytes of one token as LLGuidance's debug output shows them.
    fn dbg_token(&self, id: TokenId, quoted: bool) -> String {
        let v = self;
        let t = id.0;
        if t as usize >= v.len() {
            return format!("≺OOB[{t}]≻");
        }
        if v.is_special(id) {
            if v.eos_tokens().contains(&id) {
                return "≺EOS≻".to_string();
            }
            return v.special_name(id).unwrap_or("").to_string();
        }
        let b = v.token_bytes(id);
        if b.is_empty() {
            return format!("≺HOLE[{t}]≻");
        }
        let mut out = String::new();
        let mut rest = b;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    push_escaped(&mut out, s, quoted);
                    break;
                }
                Err(e) => {
                    let (ok, bad) = rest.split_at(e.valid_up_to());
                    push_escaped(&mut out, std::str::from_utf8(ok).expect("checked"), quoted);
                    let n = e.error_len().unwrap_or(bad.len());
                    for &x in &bad[..n] {
                        out.push_str(&format!("≺HEX[{x:02x}]≻"));
                    }
                    rest = &bad[n..];
                }
            }
        }
        out
    }

    /// The concatenated bytes of `tokens`; special tokens as their name without the marker.
    pub fn decode(&self, tokens: &[TokenId]) -> Vec<u8> {
        let mut out = Vec::new();
        for &t in tokens {
            let b = self.token_bytes(t);
            if self.is_special(t) {
                out.extend_from_slice(&b[1..]);
            } else {
                out.extend_from_slice(b);
            }
        }
        out
    }

    /// A readable form of one token for messages and logs: escaped bytes in quotes, or the
    /// special name.
    pub fn token_display(&self, id: TokenId) -> String {
        if let Some(n) = self.special_name(id) {
            return n.to_string();
        }
        let b = self.token_bytes(id);
        if b.is_empty() && id.as_usize() < self.len() {
            return format!("<hole {id}>");
        }
        format!("{:?}", String::from_utf8_lossy(b)).replace('\u{FFFD}', &format!("{:?}", b))
    }

    /// Iterates over `(id, bytes)` for all non-empty tokens.
    pub fn iter(&self) -> impl Iterator<Item = (TokenId, &[u8])> + '_ {
        (0..self.len())
            .map(TokenId::from_usize)
            .map(|t| (t, self.token_bytes(t)))
            .filter(|(_, b)| !b.is_empty())
    }

    /// Memory owned by the vocabulary, in bytes.
    pub fn num_bytes(&self) -> usize {
        self.bytes.len()
            + self.offsets.len() * 4
            + self.special.num_bytes()
            + self.special_by_name.keys().map(|k| k.len() + 24 + 4).sum::<usize>()
    }
}

/// `s` as LLGuidance's debug output writes it: control characters escaped (newlines only
/// when `quoted`).
fn push_escaped(out: &mut String, s: &str, quoted: bool) {
    for c in s.chars() {
        match c {
            '\n' if quoted => out.push_str("\\n"),
            '\n' => out.push('\n'),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
}
