//! Mistral tekken JSON (`tekken_*.json` of mistral-common).
//!
//! Ids `0..num_special` are special tokens (from the file's `special_tokens`, else
//! mistral-common's built-in list, then `<SPECIAL_i>` fillers); the BPE token of rank `r`
//! has id `r + num_special`, and only the first `vocab_size - num_special` ranks are used.

use serde::Deserialize;

use super::{base64, Canon, Loaded};
use crate::{Error, ErrorKind, TokenId, VocabBuilder, Vocabulary};

/// mistral-common's `Tekkenizer.DEPRECATED_SPECIAL_TOKENS`, used when a tekken file has no
/// `special_tokens` (tekken v3).
const DEFAULT_SPECIALS: &[&str] = &[
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

#[derive(Deserialize)]
struct TekkenFile {
    config: TekkenConfig,
    vocab: Vec<TekkenEntry>,
    #[serde(default)]
    special_tokens: Option<Vec<TekkenSpecial>>,
}

#[derive(Deserialize)]
struct TekkenConfig {
    pattern: String,
    default_vocab_size: u32,
    default_num_special_tokens: u32,
}

#[derive(Deserialize)]
struct TekkenEntry {
    rank: u32,
    token_bytes: String,
}

#[derive(Deserialize)]
struct TekkenSpecial {
    rank: u32,
    token_str: String,
}

/// Loads a Mistral tekken JSON vocabulary.
pub fn tekken(data: &[u8]) -> Result<Vocabulary, Error> {
    Ok(load("tekken", data)?.vocab)
}

pub(crate) fn load(name: &str, data: &[u8]) -> Result<Loaded, Error> {
    let file: TekkenFile = serde_json::from_slice(data)
        .map_err(|e| Error::format(format!("invalid tekken JSON: {e}")))?;
    let n_special = file.config.default_num_special_tokens;
    let vocab_size = file.config.default_vocab_size;
    if n_special > vocab_size {
        return Err(Error::format(format!(
            "default_num_special_tokens ({n_special}) exceeds default_vocab_size ({vocab_size})"
        )));
    }
    if vocab_size as usize > TokenId::MAX_VOCAB
        || vocab_size as usize > 2 * file.vocab.len() + n_special as usize + 65_536
    {
        return Err(Error::new(
            ErrorKind::Limit,
            format!(
                "default_vocab_size {vocab_size} is too large for a vocabulary of {} tokens",
                file.vocab.len()
            ),
        ));
    }
    let n_ranks = vocab_size - n_special;
    let mut b = VocabBuilder::new();
    b.name(name);
    b.min_len(vocab_size as usize);
    for e in &file.vocab {
        if e.rank >= n_ranks {
            continue;
        }
        let bytes = base64::decode(e.token_bytes.as_bytes()).ok_or_else(|| {
            Error::format(format!("rank {}: invalid base64 in token_bytes", e.rank))
        })?;
        if bytes.is_empty() {
            return Err(Error::format(format!("rank {}: empty token", e.rank)));
        }
        b.token(TokenId(e.rank + n_special), &bytes)?;
    }
    let mut named = vec![None; n_special as usize];
    match &file.special_tokens {
        Some(list) => {
            for s in list {
                let slot = named.get_mut(s.rank as usize).ok_or_else(|| {
                    Error::format(format!(
                        "special token {:?} has rank {} (at most {} special tokens)",
                        s.token_str, s.rank, n_special
                    ))
                })?;
                *slot = Some(s.token_str.clone());
            }
        }
        None => {
            for (slot, n) in named.iter_mut().zip(DEFAULT_SPECIALS) {
                *slot = Some(n.to_string());
            }
        }
    }
    for (i, n) in named.into_iter().enumerate() {
        let n = n.unwrap_or_else(|| format!("<SPECIAL_{i}>"));
        b.special(TokenId(i as u32), &n)?;
    }
    Ok(Loaded {
        vocab: b.build()?,
        canon: Canon::Tiktoken { pattern: file.config.pattern, rank_offset: n_special },
    })
}
