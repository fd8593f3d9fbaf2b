//! Vocabulary slices: the tokens of a vocabulary split by a few character-class runs
//! (`C{m,n}`), each slice with its own token trie and precomputed mask.
//!
//! A dense mask (inside a JSON string, a comment, free text) walks most of the trie. When the
//! lexer can prove that every string of a slice keeps the current lexeme alive, the whole
//! slice is allowed: OR in its mask and skip its trie. The proof is a containment query the
//! caller asks its lexer ([`Slice::query`]); this crate only builds the slices.
//!
//! **Exactness.** A slice `C{m,n}` is queried as itself: if every string of `C{m,n}` (so,
//! the set being closed under prefixes, every string of `C{1,n}`) leads to a live lexer
//! state, then every byte of every token of the slice continues the lexeme, and every proper
//! prefix of a token can still be extended by a character, so the lexeme cannot be forced
//! to end inside the token. It may be forced to end with the token's last byte (a string
//! at its `maxLength`): the walk then ends the lexeme there, which the parser always
//! accepts (the lexer state only holds lexemes the row allows). A lazy lexeme (free text up
//! to a delimiter) ends as soon as it matches, so "contained" also requires that none
//! matches inside a string of the slice (the lexer's query answers so). The slice mask is
//! then exactly what the walk would compute.
//!
//! **Should I use this crate?** Through the `llguidance` façade, which builds the default
//! JSON slices once per tokenizer.
//!
//! ```
//! use slicer::{SliceSpec, Slices};
//! use toktrie::Vocabulary;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let vocab = Vocabulary::bytes();
//! let slices = Slices::new(&vocab, &SliceSpec::json_default())?;
//! // Printable ASCII bytes other than '"' and '\\' fall into the first slice.
//! assert_eq!(slices.slices()[0].mask().count(), 95 - 2);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod runs;

pub use runs::{iteration_limits, RunTable};

use lexer::RegexSpec;
use regex_automata::meta::Regex;
use toktrie::{FirstChar, TokTrie, TokenId, TokenSet, VocabBuilder, Vocabulary};

/// A slice definition: tokens that are runs of `min..=max` characters of `class` (a
/// character class in Rust regex syntax, e.g. `[^"\\\x00-\x1F\x7F]`); `max: None` is
/// unbounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceSpec {
    /// The character class.
    pub class: String,
    /// Fewest characters.
    pub min: u32,
    /// Most characters.
    pub max: Option<u32>,
}

/// The JSON string body class: any character but `"`, `\`, control characters and the line
/// separators U+2028 / U+2029. Those two are left out so that a string whose pattern uses
/// the ECMA-262 `.` (which matches neither) still contains the slices: `^file:.+$` or
/// `.*\.txt` would otherwise walk the whole trie (~268k nodes) where a sliced walk takes
/// ~5k; the few tokens holding them go to the last slice.
pub const JSON_STRING_CLASS: &str = r#"[^"\\\x00-\x1F\x7F\u{2028}\u{2029}]"#;
/// [`JSON_STRING_CLASS`] without `<`, `[` and `{`, the characters tool-call triggers, tags and
/// think sections begin with (`<tool_call>`, `</think>`, `[TOOL_CALLS]`, `{"name"`).
pub const PLAIN_STRING_CLASS: &str = r#"[^"\\\x00-\x1F\x7F\u{2028}\u{2029}<\[{]"#;
/// Any character but `<`, `[` and `{`: runs of it never begin a trigger, a tag or an
/// excluded string that starts with one of them, so free text between tool calls contains
/// them whole (newlines, quotes and backslashes included).
pub const FREE_TEXT_CLASS: &str = r"[^<\[{]";
/// Word characters: the class of [`SliceSpec::general`]'s first slice.
pub const WORD_CLASS: &str = "[A-Za-z0-9_]";
/// ASCII letters and digits: the class of [`SliceSpec::standard`]'s first slice, which
/// the formats and patterns whose characters are fewer than a JSON string's (an email's
/// atoms, a URI's host and path, a hostname, `^[A-Za-z0-9_-]+$`) allow whole.
pub const ALNUM_CLASS: &str = "[A-Za-z0-9]";

/// LLGuidance's whitespace slice (ours has no such slice: it is accepted and left out, as
/// it changes no mask).
pub const WS_SLICE: &str = r"[\x20\x0A\x0D\x09]+";

impl SliceSpec {
    /// A slice given as LLGuidance writes it (`CLASS{m,n}`, `CLASS{m,}`, `CLASS+`, `CLASS*`,
    /// `CLASS`) as our slice spec; `None` for the whitespace slice.
    pub fn parse_llguidance(s: &str) -> Result<Option<SliceSpec>, String> {
        if s == WS_SLICE {
            return Ok(None);
        }
        let bad = || {
            format!(
            "slice {s:?}: expected a character class with a repeat, like [a-z]+ or [^\"]{{1,10}}"
        )
        };
        let (class, min, max) = if let Some(c) = s.strip_suffix('+') {
            (c, 1, None)
        } else if let Some(c) = s.strip_suffix('*') {
            (c, 1, None)
        } else if s.ends_with('}') {
            let open = s.rfind('{').ok_or_else(bad)?;
            let inner = &s[open + 1..s.len() - 1];
            let (a, b) = match inner.split_once(',') {
                Some((a, b)) => (a, Some(b)),
                None => (inner, None),
            };
            let min: u32 = a.trim().parse().map_err(|_| bad())?;
            let max = match b {
                None => Some(min),
                Some(b) if b.trim().is_empty() => None,
                Some(b) => Some(b.trim().parse().map_err(|_| bad())?),
            };
            (&s[..open], min.max(1), max)
        } else {
            (s, 1, Some(1))
        };
        if !(class.starts_with('[') && class.ends_with(']')) {
            return Err(bad());
        }
        Ok(Some(SliceSpec { class: class.to_string(), min, max }))
    }

    /// The default set for JSON: string-body runs of 1–10, 11–30 and 31+ characters (a
    /// token goes to the first slice it matches, so `{1,30}` holds the 11–30 ones).
    pub fn json_default() -> Vec<SliceSpec> {
        [(1, Some(10)), (1, Some(30)), (1, None)]
            .into_iter()
            .map(|(min, max)| SliceSpec { class: JSON_STRING_CLASS.to_string(), min, max })
            .collect()
    }

    /// The factory's default: runs of up to 10 [`ALNUM_CLASS`] characters (the short words
    /// and numbers that a format or a pattern of fewer characters than a string's allows:
    /// an email's or a URI's first mask walked ~38k allowed tokens, 0.3-1.8 ms, at each new
    /// state), the three [`SliceSpec::json_default`] lengths of [`PLAIN_STRING_CLASS`]
    /// (JSON string bodies), runs of up to 10 characters of [`JSON_STRING_CLASS`] (short
    /// string bodies holding `<`, `[` or `{`; the few longer ones, ~20 tokens in llama3, are
    /// walked), then unbounded runs of [`FREE_TEXT_CLASS`] (what is left of free text:
    /// newlines, quotes, backslashes). A JSON string uses the first five slices, free text
    /// up to a tag or trigger the first four and the last; the rest of the vocabulary
    /// (tokens with `<`, `[`, `{` outside a string body, partial UTF-8, special tokens) is
    /// walked. A slice not allowed whole skips the whole checks of the later ones whose
    /// class and bound hold it ([`Slice::requires`]).
    pub fn standard() -> Vec<SliceSpec> {
        let spec = |class: &str, max| SliceSpec { class: class.to_string(), min: 1, max };
        vec![
            spec(ALNUM_CLASS, Some(10)),
            spec(PLAIN_STRING_CLASS, Some(10)),
            spec(PLAIN_STRING_CLASS, Some(30)),
            spec(PLAIN_STRING_CLASS, None),
            spec(JSON_STRING_CLASS, Some(10)),
            spec(FREE_TEXT_CLASS, None),
        ]
    }

    /// The general set for code and text grammars: word runs `[A-Za-z0-9_]+` first (all
    /// allowed at once inside an identifier, a word or a comment), then the JSON string-body
    /// runs (inside strings, comments and free text). A token goes to the first slice it
    /// matches, so a JSON string uses the word slice and the three others together.
    pub fn general() -> Vec<SliceSpec> {
        let mut v = vec![SliceSpec { class: WORD_CLASS.to_string(), min: 1, max: None }];
        v.extend(SliceSpec::json_default());
        v
    }

    fn regex(&self, min: u32, max: Option<u32>) -> String {
        match max {
            Some(max) => format!("(?:{}){{{min},{max}}}", self.class),
            None => format!("(?:{}){{{min},}}", self.class),
        }
    }
}

/// One slice: its definition, its tokens' mask, and their trie.
#[derive(Clone, Debug)]
pub struct Slice {
    spec: SliceSpec,
    query: RegexSpec,
    bounded_query: RegexSpec,
    len: usize,
    requires: Option<usize>,
    mask: TokenSet,
    trie: TokTrie,
    tail_query: Option<RegexSpec>,
    first_chars: Vec<FirstChar>,
}

impl Slice {
    /// The definition.
    pub fn spec(&self) -> &SliceSpec {
        &self.spec
    }

    /// The containment query: `C{m,n}` (see the crate docs).
    pub fn query(&self) -> &RegexSpec {
        &self.query
    }

    /// [`Slice::query`] bounded by the slice's longest token (in characters) where the
    /// slice is unbounded: what a state must contain for every token of the slice, read
    /// whole, to continue its lexeme (the rest of a token after a lexeme's end, read by
    /// the next lexeme, is no longer).
    pub fn bounded_query(&self) -> &RegexSpec {
        &self.bounded_query
    }

    /// An earlier slice (its index) that every state containing this slice contains too:
    /// its class is a subset of this one's and its bound no higher. Where that slice is not
    /// contained, this one is not either, and asking costs a walk over more characters.
    pub fn requires(&self) -> Option<usize> {
        self.requires
    }

    /// How many tokens the slice holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice holds no token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the slice holds under 1/32 of the vocabulary: its trie walk is cheap, so a
    /// containment proof for it should be too (see `lexer::Lexer::check_prefixes_cheap`).
    pub fn is_small(&self) -> bool {
        self.len * 32 < self.mask.universe()
    }

    /// The tokens of the slice.
    pub fn mask(&self) -> &TokenSet {
        &self.mask
    }

    /// The trie of the slice's tokens.
    pub fn trie(&self) -> &TokTrie {
        &self.trie
    }

    /// What the rest of a token holds after its first character: `C{m-1,n-1}` (`None` when
    /// that is only the empty string, `n = 1`). A slice token is its first character (in
    /// `C`) followed by a string of this query, so the slice's tokens starting with one
    /// character are proven where the state after that character contains this query: a
    /// slice proven in part, character by character, where the whole is not (free text
    /// right after the `<` of a `<tool_call>` trigger, where only tokens starting with `t`
    /// matter).
    pub fn tail_query(&self) -> Option<&RegexSpec> {
        self.tail_query.as_ref()
    }

    /// Where the slice's tokens complete their first character, in its trie (see
    /// `toktrie::TokTrie::first_char_nodes`).
    pub fn first_chars(&self) -> &[FirstChar] {
        &self.first_chars
    }
}

/// A vocabulary split into slices plus the rest (special tokens included).
#[derive(Clone, Debug)]
pub struct Slices {
    slices: Vec<Slice>,
    rest: TokTrie,
    /// The union of the masks of each set of slices (bit i: slice i), built on first use;
    /// empty with more than [`MAX_UNION_SLICES`] slices.
    unions: Vec<std::sync::OnceLock<TokenSet>>,
    /// The first slice's two most common ASCII first characters (by trie nodes below them).
    common_bytes: Vec<u8>,
}

/// Up to this many slices, the unions of their masks are kept (2^n of them, each built on
/// first use).
const MAX_UNION_SLICES: usize = 6;

/// An error building slices (a bad class or a vocabulary error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The characters of a class such as `[^"\\]`; `None` if it is not one class.
fn class_chars(class: &str) -> Option<regex_syntax::hir::ClassUnicode> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::Parser::new().parse(class).ok()?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => Some(c.clone()),
        _ => None,
    }
}

fn is_subset(a: &regex_syntax::hir::ClassUnicode, b: &regex_syntax::hir::ClassUnicode) -> bool {
    let mut x = a.clone();
    x.intersect(b);
    x == *a
}

/// The trie of some of `vocab`'s tokens, as wide as `vocab` (its ids stay).
fn sub_trie(vocab: &Vocabulary, toks: &[TokenId]) -> Result<TokTrie, Error> {
    let mut b = VocabBuilder::new();
    b.min_len(vocab.len());
    for &t in toks {
        let bytes = vocab.token_bytes(t);
        if vocab.is_special(t) {
            b.special(t, vocab.special_name(t).unwrap_or_default())
                .map_err(|e| Error(e.to_string()))?;
        } else {
            b.token(t, bytes).map_err(|e| Error(e.to_string()))?;
        }
    }
    for &e in vocab.eos_tokens() {
        b.eos(e);
    }
    let v = b.build().map_err(|e| Error(e.to_string()))?;
    TokTrie::from_vocab(&v).map_err(|e| Error(e.to_string()))
}

/// Whether `t` is allowed by the parser's state rather than by its bytes: a special token, or
/// an EOS id (whatever its bytes).
fn read_by_state(vocab: &Vocabulary, t: TokenId) -> bool {
    vocab.is_special(t) || vocab.eos_tokens().contains(&t)
}

/// The vocabulary split by length at `h` bytes: the regular tokens of at most `h` bytes
/// with every special and EOS token (a mask), and the trie of the other regular tokens. A mask
/// that is known for the short tokens from elsewhere (a lexer state that behaves the same
/// on strings of at most `h` bytes: `lexer::DerivreLexer::mask_twin_at`) is completed by a
/// walk of the long trie alone.
#[derive(Clone, Debug)]
pub struct LengthSplit {
    h: u32,
    short: TokenSet,
    long: TokTrie,
}

impl LengthSplit {
    /// Splits `vocab` at `h` bytes.
    pub fn new(vocab: &Vocabulary, h: u32) -> Result<LengthSplit, Error> {
        let mut short = Vec::new();
        let mut long = Vec::new();
        for (t, bytes) in vocab.iter() {
            let by_state = read_by_state(vocab, t);
            if by_state || bytes.len() <= h as usize {
                short.push(t);
            } else {
                long.push(t);
            }
        }
        let short = TokenSet::from_ids(vocab.len(), short).map_err(|e| Error(e.to_string()))?;
        Ok(LengthSplit { h, short, long: sub_trie(vocab, &long)? })
    }

    /// The length the vocabulary is split at, in bytes.
    pub fn h(&self) -> u32 {
        self.h
    }

    /// The regular tokens of at most [`LengthSplit::h`] bytes, and the special tokens.
    pub fn short(&self) -> &TokenSet {
        &self.short
    }

    /// The trie of the regular tokens longer than [`LengthSplit::h`] bytes.
    pub fn long(&self) -> &TokTrie {
        &self.long
    }

    /// Memory owned, in bytes.
    pub fn num_bytes(&self) -> usize {
        self.short.num_bytes() + self.long.num_bytes()
    }
}

impl Slices {
    /// Splits `vocab`: each regular token goes to the first slice whose `C{m,n}` matches
    /// all its bytes (as UTF-8), the rest (and special tokens) to the implicit last slice.
    pub fn new(vocab: &Vocabulary, specs: &[SliceSpec]) -> Result<Slices, Error> {
        let mut matchers = Vec::new();
        for s in specs {
            let rx = format!(r"\A{}\z", s.regex(s.min, s.max));
            matchers.push(Regex::new(&rx).map_err(|e| Error(format!("slice {rx}: {e}")))?);
        }
        let n = vocab.len();
        let mut members: Vec<Vec<TokenId>> = vec![Vec::new(); specs.len()];
        let mut rest = Vec::new();
        for (t, bytes) in vocab.iter() {
            let slot = if vocab.is_special(t) {
                None
            } else {
                matchers.iter().position(|m| m.is_match(bytes))
            };
            match slot {
                Some(i) => members[i].push(t),
                None => rest.push(t),
            }
        }
        let sub = |toks: &[TokenId]| sub_trie(vocab, toks);
        let classes: Vec<_> = specs.iter().map(|s| class_chars(&s.class)).collect();
        let mut slices = Vec::new();
        for (j, (spec, toks)) in specs.iter().zip(&members).enumerate() {
            // The earlier slice with the highest bound among those implied (ties: the later).
            let requires = (0..j)
                .filter(|&i| {
                    let bound_ok = match (specs[i].max, spec.max) {
                        (_, None) => true,
                        (Some(a), Some(b)) => a <= b,
                        (None, Some(_)) => false,
                    };
                    bound_ok
                        && match (&classes[i], &classes[j]) {
                            (Some(a), Some(b)) => is_subset(a, b),
                            _ => false,
                        }
                })
                .max_by_key(|&i| (specs[i].max.map_or(u64::MAX, u64::from), i));
            let mask =
                TokenSet::from_ids(n, toks.iter().copied()).map_err(|e| Error(e.to_string()))?;
            let query = RegexSpec::Regex(spec.regex(spec.min, spec.max));
            // An unbounded slice's tokens hold at most `longest` characters.
            let longest = toks.iter().map(|&t| utf8_chars(vocab.token_bytes(t))).max();
            let bounded_query = match (spec.max, longest) {
                (None, Some(l)) => RegexSpec::Regex(spec.regex(spec.min, Some(l.max(spec.min)))),
                _ => query.clone(),
            };
            let tail_query = match spec.max {
                Some(m) if m <= 1 => None,
                max => Some(RegexSpec::Regex(
                    spec.regex(spec.min.saturating_sub(1), max.map(|m| m - 1)),
                )),
            };
            let trie = sub(toks)?;
            slices.push(Slice {
                spec: spec.clone(),
                query,
                bounded_query,
                len: toks.len(),
                requires,
                mask,
                first_chars: trie.first_char_nodes(),
                trie,
                tail_query,
            });
        }
        let unions = if slices.len() <= MAX_UNION_SLICES {
            (0..1usize << slices.len()).map(|_| std::sync::OnceLock::new()).collect()
        } else {
            Vec::new()
        };
        // The first slice whose tokens may begin with a space (a string body's: the
        // standard set's first, alphanumeric slice has none), else the first.
        let spaced = slices.iter().find(|s| s.first_chars.iter().any(|fc| fc.bytes[0] == b' '));
        let mut common: Vec<&FirstChar> = spaced.or(slices.first()).map_or(Vec::new(), |s| {
            s.first_chars.iter().filter(|fc| fc.bytes[0].is_ascii()).collect()
        });
        common.sort_by_key(|fc| std::cmp::Reverse(fc.size));
        let common_bytes = common.iter().take(2).map(|fc| fc.bytes[0]).collect();
        Ok(Slices { slices, rest: sub(&rest)?, unions, common_bytes })
    }

    /// The two most common ASCII first characters of the first slice whose tokens may begin
    /// with a space (else of the first slice), the most common first (by the trie nodes
    /// below them: a space, then a letter, in JSON string slices of most vocabularies), to
    /// read a lexeme with typical runs of the slice's characters; fewer without ASCII ones.
    pub fn common_bytes(&self) -> &[u8] {
        &self.common_bytes
    }

    /// The slices, in order.
    pub fn slices(&self) -> &[Slice] {
        &self.slices
    }

    /// The union of the masks of the slices `which` marks (one flag per slice, in order;
    /// missing flags are false), as a new set: one copy of a union kept per set of slices (a
    /// mask inside a string allows four slices whole: one copy where four unions of the
    /// vocabulary's width were).
    pub fn union_of(&self, which: &[bool]) -> TokenSet {
        match self.kept_union(which) {
            Some(u) => u.clone(),
            None => self.build_union(which),
        }
    }

    /// [`Slices::union_of`] into `out` (its old contents replaced; no allocation).
    pub fn union_into(&self, which: &[bool], out: &mut TokenSet) {
        match self.kept_union(which) {
            Some(u) => out.copy_from(u),
            None => self.fill_union(which, out),
        }
    }

    /// The kept union of the slices `which` marks (built the first time), if unions of that
    /// many slices are kept.
    fn kept_union(&self, which: &[bool]) -> Option<&TokenSet> {
        let idx = which.iter().take(self.slices.len()).rev().fold(0, |a, &w| a << 1 | w as usize);
        self.unions.get(idx).map(|u| u.get_or_init(|| self.build_union(which)))
    }

    fn build_union(&self, which: &[bool]) -> TokenSet {
        let mut m = TokenSet::new(self.rest.vocab_size());
        self.fill_union(which, &mut m);
        m
    }

    /// `out` = the union of the masks of the slices `which` marks, computed.
    fn fill_union(&self, which: &[bool], out: &mut TokenSet) {
        out.clear();
        for (s, _) in self.slices.iter().zip(which).filter(|x| *x.1) {
            out.union(&s.mask);
        }
    }

    /// The trie of the tokens in no slice (special tokens included).
    pub fn rest(&self) -> &TokTrie {
        &self.rest
    }

    /// Memory of all tries and masks (the kept unions included), in bytes.
    pub fn num_bytes(&self) -> usize {
        self.rest.num_bytes()
            + self.slices.iter().map(|s| s.trie.num_bytes() + s.mask.num_bytes()).sum::<usize>()
            + self.unions.iter().filter_map(|u| u.get()).map(|u| u.num_bytes()).sum::<usize>()
    }
}

/// The number of characters of a token's bytes (its UTF-8 lead and ASCII bytes).
fn utf8_chars(bytes: &[u8]) -> u32 {
    bytes.iter().filter(|&&b| !(0x80..0xC0).contains(&b)).count() as u32
}
