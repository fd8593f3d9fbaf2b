//! tiktoken rank files (`base64(token bytes) rank` per line) and the built-in o200k_base /
//! cl100k_base vocabularies.

use super::{base64, Canon, Loaded};
use crate::{Error, ErrorKind, TokenId, VocabBuilder, Vocabulary};

/// A standard tiktoken encoding: what a `.tiktoken` rank file does not say.
#[derive(Debug, Clone, Copy)]
pub struct TiktokenEncoding {
    /// The encoding's name (`o200k_base`, `cl100k_base`).
    pub name: &'static str,
    /// The number of BPE ranks (token ids `0..n_ranks`) in its rank file.
    pub n_ranks: usize,
    /// Its special tokens and their ids.
    pub specials: &'static [(&'static str, u32)],
    /// Its pre-tokenizer regex (fancy-regex syntax).
    pub pattern: &'static str,
}

/// OpenAI's o200k_base (GPT-4o): 199998 ranks; `<|endoftext|>` 199999, `<|endofprompt|>`
/// 200018 (ids 199998 and 200000..=200017 are holes).
pub const O200K_BASE: TiktokenEncoding = TiktokenEncoding {
    name: "o200k_base",
    n_ranks: 199_998,
    specials: &[("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)],
    pattern: concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|\p{N}{1,3}",
        r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"|\s*[\r\n]+",
        r"|\s+(?!\S)",
        r"|\s+",
    ),
};

/// OpenAI's cl100k_base (GPT-4, GPT-3.5): 100256 ranks; `<|endoftext|>` 100257,
/// `<|fim_prefix|>` 100258, `<|fim_middle|>` 100259, `<|fim_suffix|>` 100260,
/// `<|endofprompt|>` 100276.
pub const CL100K_BASE: TiktokenEncoding = TiktokenEncoding {
    name: "cl100k_base",
    n_ranks: 100_256,
    specials: &[
        ("<|endoftext|>", 100_257),
        ("<|fim_prefix|>", 100_258),
        ("<|fim_middle|>", 100_259),
        ("<|fim_suffix|>", 100_260),
        ("<|endofprompt|>", 100_276),
    ],
    pattern: concat!(
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+",
        r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
    ),
};

impl TiktokenEncoding {
    /// The standard encoding whose rank file has exactly `n_ranks` ranks `0..n_ranks`.
    pub fn recognize(n_ranks: usize) -> Option<&'static TiktokenEncoding> {
        [&O200K_BASE, &CL100K_BASE].into_iter().find(|e| e.n_ranks == n_ranks)
    }
}

/// Loads a tiktoken rank file. o200k_base and cl100k_base are recognized by their number
/// of ranks and get their standard special tokens; other files load without special tokens
/// (use [`tiktoken_with_specials`]).
pub fn tiktoken(data: &[u8]) -> Result<Vocabulary, Error> {
    Ok(load("tiktoken", data, None)?.vocab)
}

/// Loads a tiktoken rank file with the given special tokens (name, id) instead of the
/// standard ones.
pub fn tiktoken_with_specials(
    data: &[u8],
    specials: &[(&str, TokenId)],
) -> Result<Vocabulary, Error> {
    Ok(load("tiktoken", data, Some(specials))?.vocab)
}

/// Parses the ranks: `(bytes, rank)` in file order.
pub(crate) fn parse_ranks(data: &[u8]) -> Result<Vec<(Vec<u8>, u32)>, Error> {
    let mut out = Vec::with_capacity(data.len() / 16);
    for (i, line) in data.split(|&c| c == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad =
            |what: &str| Error::format(format!("line {}: {what} (expected `base64 rank`)", i + 1));
        let sp = line.iter().position(|&c| c == b' ').ok_or_else(|| bad("no space"))?;
        let bytes = base64::decode(&line[..sp]).ok_or_else(|| bad("invalid base64"))?;
        let rank = std::str::from_utf8(&line[sp + 1..])
            .ok()
            .and_then(|r| r.trim().parse::<u32>().ok())
            .ok_or_else(|| bad("invalid rank"))?;
        if bytes.is_empty() {
            return Err(bad("empty token"));
        }
        out.push((bytes, rank));
    }
    if out.is_empty() {
        return Err(Error::format("no ranks in tiktoken file"));
    }
    Ok(out)
}

pub(crate) fn load(
    name: &str,
    data: &[u8],
    specials: Option<&[(&str, TokenId)]>,
) -> Result<Loaded, Error> {
    load_ranks(name, &parse_ranks(data)?, specials)
}

/// Like [`tiktoken_with_specials`], from the ranks themselves (`(bytes, rank)`, e.g. a
/// tiktoken `Encoding`'s mergeable ranks) instead of a rank file.
pub fn tiktoken_ranks_with_specials(
    ranks: &[(Vec<u8>, u32)],
    specials: &[(&str, TokenId)],
) -> Result<Vocabulary, Error> {
    Ok(load_ranks("tiktoken", ranks, Some(specials))?.vocab)
}

fn load_ranks(
    name: &str,
    ranks: &[(Vec<u8>, u32)],
    specials: Option<&[(&str, TokenId)]>,
) -> Result<Loaded, Error> {
    let mut b = VocabBuilder::new();
    b.name(name);
    let mut seen = vec![false; 0];
    for (bytes, rank) in ranks {
        let r = *rank as usize;
        if r >= TokenId::MAX_VOCAB {
            return Err(Error::new(ErrorKind::Limit, format!("rank {rank} too large")));
        }
        if r >= seen.len() {
            seen.resize(r + 1, false);
        }
        if std::mem::replace(&mut seen[r], true) {
            return Err(Error::format(format!("rank {rank} appears twice")));
        }
        b.token(TokenId(*rank), bytes)?;
    }
    let known =
        if ranks.len() == seen.len() { TiktokenEncoding::recognize(ranks.len()) } else { None };
    let canon = match (specials, known) {
        (Some(sp), _) => {
            for (n, id) in sp {
                set_special(&mut b, n, *id)?;
            }
            known.map(|k| k.pattern)
        }
        (None, Some(k)) => {
            for (n, id) in k.specials {
                set_special(&mut b, n, TokenId(*id))?;
            }
            Some(k.pattern)
        }
        (None, None) => None,
    };
    let canon = match canon {
        Some(p) => Canon::Tiktoken { pattern: p.to_string(), rank_offset: 0 },
        None => Canon::None,
    };
    Ok(Loaded { vocab: b.build()?, canon })
}

fn set_special(b: &mut VocabBuilder, name: &str, id: TokenId) -> Result<(), Error> {
    if b.is_set(id) {
        return Err(Error::format(format!(
            "special token {name:?} has id {id}, which is already used"
        )));
    }
    b.special(id, name)?;
    Ok(())
}

/// The vocabulary of a built-in encoding from tiktoken-rs's embedded data, and its
/// tokenizer (a process-wide singleton of tiktoken-rs).
#[cfg(feature = "tiktoken")]
pub(crate) fn builtin_vocab(
    enc: &'static TiktokenEncoding,
) -> Result<(Vocabulary, &'static tiktoken_rs::CoreBPE), Error> {
    let bpe = match enc.name {
        "o200k_base" => tiktoken_rs::o200k_base_singleton(),
        _ => tiktoken_rs::cl100k_base_singleton(),
    };
    let mut b = VocabBuilder::new();
    b.name(enc.name);
    b.min_len(enc.n_ranks);
    for rank in 0..enc.n_ranks as u32 {
        let bytes = bpe.decode_bytes(&[rank]).map_err(|e| {
            Error::format(format!("tiktoken-rs {}: rank {rank} missing: {e:?}", enc.name))
        })?;
        b.token(TokenId(rank), &bytes)?;
    }
    for (n, id) in enc.specials {
        b.special(TokenId(*id), n)?;
    }
    Ok((b.build()?, bpe))
}
