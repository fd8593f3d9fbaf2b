//! Raw SentencePiece model protobufs (`tokenizer.model`, `*.model.v3`).
//!
//! A minimal protobuf wire-format reader extracts `ModelProto.pieces` (field 1: piece,
//! score, type), the trainer's `model_type` and `byte_fallback`, and the normalizer's
//! `name`, `add_dummy_prefix` and `remove_extra_whitespaces`. Piece types map as:
//! normal, user-defined and unused pieces are regular tokens (`▁` becomes a space);
//! byte pieces `<0xNN>` are the byte `NN`; control and unknown pieces are special tokens.

use super::{hf::parse_byte_token, Canon, Loaded};
use crate::{Error, TokenId, VocabBuilder, Vocabulary};

/// A SentencePiece piece type (`SentencePiece.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

/// What canonical tokenization needs from a SentencePiece model.
#[derive(Debug, Clone)]
pub(crate) struct SpModelInfo {
    /// `(piece, score, type)` by id.
    pub(crate) pieces: Vec<(String, f32, PieceType)>,
    /// `TrainerSpec.model_type`: 1 unigram, 2 BPE, 3 word, 4 char.
    pub(crate) model_type: u64,
    pub(crate) byte_fallback: bool,
    pub(crate) normalizer_name: String,
    pub(crate) add_dummy_prefix: bool,
    pub(crate) remove_extra_whitespaces: bool,
}

/// Loads the vocabulary of a raw SentencePiece model protobuf.
pub fn sentencepiece_model(data: &[u8]) -> Result<Vocabulary, Error> {
    Ok(load("sentencepiece.model", data)?.vocab)
}

/// A protobuf wire-format reader over one message.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

enum Field<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    fn err(&self, what: &str) -> Error {
        Error::format(format!("invalid SentencePiece protobuf at byte {}: {what}", self.pos))
    }

    fn varint(&mut self) -> Result<u64, Error> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.pos).ok_or_else(|| self.err("truncated varint"))?;
            self.pos += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint too long"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| self.err("truncated field"))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next `(field number, value)`, or `None` at the end.
    fn next(&mut self) -> Result<Option<(u64, Field<'a>)>, Error> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = match key & 7 {
            0 => Field::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Field::Fixed64
            }
            2 => {
                let n = self.varint()?;
                let n = usize::try_from(n).map_err(|_| self.err("length too large"))?;
                Field::Bytes(self.take(n)?)
            }
            5 => {
                let b = self.take(4)?;
                Field::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            t => return Err(self.err(&format!("unsupported wire type {t}"))),
        };
        Ok(Some((key >> 3, field)))
    }
}

fn parse(data: &[u8]) -> Result<SpModelInfo, Error> {
    let mut info = SpModelInfo {
        pieces: Vec::new(),
        model_type: 1,
        byte_fallback: false,
        normalizer_name: String::new(),
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
    };
    let mut r = Reader::new(data);
    while let Some((num, f)) = r.next()? {
        match (num, f) {
            (1, Field::Bytes(msg)) => info.pieces.push(parse_piece(msg, info.pieces.len())?),
            (2, Field::Bytes(msg)) => {
                let mut t = Reader::new(msg);
                while let Some((n, f)) = t.next()? {
                    match (n, f) {
                        (3, Field::Varint(v)) => info.model_type = v,
                        (35, Field::Varint(v)) => info.byte_fallback = v != 0,
                        _ => {}
                    }
                }
            }
            (3, Field::Bytes(msg)) => {
                let mut t = Reader::new(msg);
                while let Some((n, f)) = t.next()? {
                    match (n, f) {
                        (1, Field::Bytes(s)) => {
                            info.normalizer_name = String::from_utf8_lossy(s).into_owned()
                        }
                        (3, Field::Varint(v)) => info.add_dummy_prefix = v != 0,
                        (4, Field::Varint(v)) => info.remove_extra_whitespaces = v != 0,
                        _ => {}
                    }
                }
            }
            (1..=3, _) => {
                return Err(r.err(&format!("field {num} of ModelProto has the wrong wire type")))
            }
            _ => {}
        }
    }
    if info.pieces.is_empty() {
        return Err(Error::format("SentencePiece model has no pieces"));
    }
    Ok(info)
}

fn parse_piece(msg: &[u8], id: usize) -> Result<(String, f32, PieceType), Error> {
    let mut r = Reader::new(msg);
    let (mut piece, mut score, mut ty) = (None, 0.0, PieceType::Normal);
    while let Some((n, f)) = r.next()? {
        match (n, f) {
            (1, Field::Bytes(s)) => {
                piece = Some(
                    String::from_utf8(s.to_vec())
                        .map_err(|_| Error::format(format!("piece {id} is not valid UTF-8")))?,
                )
            }
            (2, Field::Fixed32(bits)) => score = f32::from_bits(bits),
            (3, Field::Varint(t)) => {
                ty = match t {
                    1 => PieceType::Normal,
                    2 => PieceType::Unknown,
                    3 => PieceType::Control,
                    4 => PieceType::UserDefined,
                    5 => PieceType::Unused,
                    6 => PieceType::Byte,
                    _ => return Err(Error::format(format!("piece {id} has unknown type {t}"))),
                }
            }
            (1..=3, _) => {
                return Err(r.err(&format!("field {n} of piece {id} has the wrong wire type")))
            }
            _ => {}
        }
    }
    let piece = piece.ok_or_else(|| Error::format(format!("piece {id} has no string")))?;
    Ok((piece, score, ty))
}

pub(crate) fn load(name: &str, data: &[u8]) -> Result<Loaded, Error> {
    let info = parse(data)?;
    let mut b = VocabBuilder::new();
    b.name(name);
    b.min_len(info.pieces.len());
    for (i, (piece, _, ty)) in info.pieces.iter().enumerate() {
        let id = TokenId::from_usize(i);
        match ty {
            PieceType::Control | PieceType::Unknown => {
                b.special(id, piece)?;
            }
            PieceType::Byte => {
                let byte = parse_byte_token(piece).ok_or_else(|| {
                    Error::format(format!("byte piece {i} is {piece:?}, not <0xNN>"))
                })?;
                b.token(id, &[byte])?;
            }
            PieceType::Normal | PieceType::UserDefined | PieceType::Unused => {
                let s = piece.replace('\u{2581}', " ");
                if !s.is_empty() {
                    b.token(id, s.as_bytes())?;
                }
            }
        }
    }
    Ok(Loaded { vocab: b.build()?, canon: Canon::SentencePiece(info) })
}

/// A `tokenizer.json` equivalent to a BPE SentencePiece model, for the `tokenizers` crate:
/// merges are derived from the pieces as HF's converter does (every split of a normal piece
/// into two pieces, ordered by the merged piece's score), with byte fallback, `space → ▁`,
/// and, as for HF SentencePiece files here, no dummy prefix (`Prepend ▁`).
#[cfg(feature = "hf")]
pub(crate) fn to_hf_json(info: &SpModelInfo) -> Result<Vec<u8>, Error> {
    use serde_json::{json, Map, Value};
    let unsupported = |why: String| {
        Error::new(
            crate::ErrorKind::Tokenize,
            format!("canonical tokenization of this SentencePiece model: {why}"),
        )
    };
    if info.model_type != 2 {
        return Err(unsupported(format!(
            "model type {} is not supported (only BPE, type 2)",
            info.model_type
        )));
    }
    if !(info.normalizer_name.is_empty() || info.normalizer_name == "identity") {
        return Err(unsupported(format!(
            "normalizer {:?} is not supported (only identity)",
            info.normalizer_name
        )));
    }
    let mut ids: hashbrown::HashMap<&str, usize> =
        hashbrown::HashMap::with_capacity(info.pieces.len());
    for (i, (p, _, _)) in info.pieces.iter().enumerate() {
        if ids.insert(p.as_str(), i).is_some() {
            return Err(unsupported(format!("piece {p:?} appears twice")));
        }
    }
    let mergeable = |ty: PieceType| matches!(ty, PieceType::Normal);
    // (score of the merged piece, its id, left id, right id, left, right)
    let mut merges: Vec<(f32, usize, usize, usize)> = Vec::new();
    for (i, (p, score, ty)) in info.pieces.iter().enumerate() {
        if !mergeable(*ty) {
            continue;
        }
        for (split, _) in p.char_indices().skip(1) {
            let (l, r) = p.split_at(split);
            if let (Some(&li), Some(&ri)) = (ids.get(l), ids.get(r)) {
                if mergeable(info.pieces[li].2) && mergeable(info.pieces[ri].2) {
                    merges.push((*score, i, li, ri));
                }
            }
        }
    }
    merges.sort_by(|a, b| {
        b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3))
    });
    let mut vocab = Map::new();
    let mut added = Vec::new();
    let mut unk = Value::Null;
    for (i, (p, _, ty)) in info.pieces.iter().enumerate() {
        vocab.insert(p.clone(), json!(i));
        match ty {
            PieceType::Unknown | PieceType::Control | PieceType::UserDefined => {
                if *ty == PieceType::Unknown {
                    unk = json!(p);
                }
                added.push(json!({"id": i, "content": p, "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": *ty != PieceType::UserDefined}));
            }
            _ => {}
        }
    }
    let merges: Vec<Value> =
        merges.iter().map(|&(_, _, l, r)| json!([info.pieces[l].0, info.pieces[r].0])).collect();
    let doc = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"},
        "pre_tokenizer": null,
        "post_processor": null,
        "decoder": null,
        "model": {
            "type": "BPE", "dropout": null, "unk_token": unk, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": info.byte_fallback,
            "vocab": vocab, "merges": merges
        }
    });
    serde_json::to_vec(&doc).map_err(|e| unsupported(e.to_string()))
}
