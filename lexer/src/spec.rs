//! The lexer specification: lexemes as a neutral, serde-serializable regex AST.

use serde::{Deserialize, Serialize};

use crate::{Error, ErrorKind, LexemeIdx, LexemeSet};

/// A regular expression over bytes, as a tree. Engine-neutral: the derivre lexer supports
/// every variant, the regex-automata lexer all but `and`, `not`, `json_quote`, `multiple_of`
/// and `look_ahead` (it reports [`ErrorKind::Unsupported`] for those).
///
/// The serde form is externally tagged in snake case, e.g.
/// `{"concat": [{"literal": "0x"}, {"regex": "[0-9a-f]+"}]}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegexSpec {
    /// Exactly this string.
    Literal(String),
    /// Exactly these bytes (may be invalid UTF-8).
    Bytes(Vec<u8>),
    /// One byte in any of these inclusive ranges `[lo, hi]`.
    ByteSet(Vec<(u8, u8)>),
    /// A regex in Rust `regex` syntax, implicitly anchored at both ends (matches whole
    /// lexemes, not substrings). Unicode is on: `.` is one UTF-8 encoded scalar value.
    Regex(String),
    /// The elements one after the other.
    Concat(Vec<RegexSpec>),
    /// Any of the alternatives (`Or([])` matches nothing).
    Or(Vec<RegexSpec>),
    /// Strings matched by every element (`&`). Needs at least one element.
    And(Vec<RegexSpec>),
    /// Every byte string the inner expression does not match (`~`); may be invalid UTF-8.
    Not(Box<RegexSpec>),
    /// `expr{min,max}`; `max: None` is unbounded.
    Repeat {
        /// The repeated expression.
        expr: Box<RegexSpec>,
        /// Minimum count.
        min: u32,
        /// Maximum count, or `None` for no bound. Must be at least `min`.
        max: Option<u32>,
    },
    /// The strings of `expr` written as the body of a JSON string: bytes that JSON requires
    /// to be escaped become escapes (`\n`, `\"`, `\u001f`, ...).
    JsonQuote {
        /// The expression whose matches are quoted.
        expr: Box<RegexSpec>,
        /// If false (the default) the result includes the surrounding `"` quotes.
        #[serde(default)]
        raw: bool,
        /// The escapes allowed after `\` (among `nrbtf\"u`; `u` means `\u00XX` for control
        /// characters). Default: all of them.
        #[serde(default)]
        allowed_escapes: Option<String>,
    },
    /// Decimal numbers (ASCII, like `12`, `1.50`) that are a multiple of
    /// `divisor * 10^-scale`. Does not match the empty string.
    MultipleOf {
        /// Must be positive.
        divisor: u32,
        /// Number of decimal places of the divisor.
        scale: u32,
    },
    /// A trailing look-ahead (for stop sequences): the lexeme `Concat([A, LookAhead(B)])`
    /// matches `A B`, and [`Lexer::lookahead_len`](crate::Lexer::lookahead_len) tells how
    /// many bytes of the match belong to `B`. Allowed only as the last element of a
    /// lexeme's top-level `concat`.
    LookAhead(Box<RegexSpec>),
    /// The empty string.
    Empty,
    /// Nothing.
    NoMatch,
}

impl RegexSpec {
    /// A [`RegexSpec::Regex`] from Rust regex syntax.
    pub fn regex(rx: impl Into<String>) -> Self {
        RegexSpec::Regex(rx.into())
    }

    /// A [`RegexSpec::Literal`].
    pub fn literal(s: impl Into<String>) -> Self {
        RegexSpec::Literal(s.into())
    }

    /// The direct sub-expressions.
    pub fn children(&self) -> &[RegexSpec] {
        match self {
            RegexSpec::Concat(v) | RegexSpec::Or(v) | RegexSpec::And(v) => v,
            RegexSpec::Not(e)
            | RegexSpec::Repeat { expr: e, .. }
            | RegexSpec::JsonQuote { expr: e, .. }
            | RegexSpec::LookAhead(e) => std::slice::from_ref(&**e),
            RegexSpec::Literal(_)
            | RegexSpec::Bytes(_)
            | RegexSpec::ByteSet(_)
            | RegexSpec::Regex(_)
            | RegexSpec::MultipleOf { .. }
            | RegexSpec::Empty
            | RegexSpec::NoMatch => &[],
        }
    }

    /// The one string this matches when it is spelled with literals only (literals, byte
    /// strings, one-byte sets, the empty string, regexes that are a literal, and
    /// concatenations of those),
    /// else `None`.
    #[cfg(feature = "derivre")]
    pub(crate) fn literal_bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        match self {
            RegexSpec::Literal(s) => Some(Cow::Borrowed(s.as_bytes())),
            RegexSpec::Bytes(b) => Some(Cow::Borrowed(b)),
            RegexSpec::Empty => Some(Cow::Borrowed(&[])),
            RegexSpec::Regex(rx) => crate::parsed::parsed(rx).literal.clone().map(Cow::Owned),
            RegexSpec::ByteSet(r) if r.len() == 1 && r[0].0 == r[0].1 => {
                Some(Cow::Owned(vec![r[0].0]))
            }
            RegexSpec::Concat(v) => {
                let mut out = Vec::new();
                for x in v {
                    out.extend_from_slice(&x.literal_bytes()?);
                }
                Some(Cow::Owned(out))
            }
            _ => None,
        }
    }

    /// The variant's serde name (`"concat"`, `"and"`, ...), for messages.
    pub fn tag(&self) -> &'static str {
        match self {
            RegexSpec::Literal(_) => "literal",
            RegexSpec::Bytes(_) => "bytes",
            RegexSpec::ByteSet(_) => "byte_set",
            RegexSpec::Regex(_) => "regex",
            RegexSpec::Concat(_) => "concat",
            RegexSpec::Or(_) => "or",
            RegexSpec::And(_) => "and",
            RegexSpec::Not(_) => "not",
            RegexSpec::Repeat { .. } => "repeat",
            RegexSpec::JsonQuote { .. } => "json_quote",
            RegexSpec::MultipleOf { .. } => "multiple_of",
            RegexSpec::LookAhead(_) => "look_ahead",
            RegexSpec::Empty => "empty",
            RegexSpec::NoMatch => "no_match",
        }
    }

    /// Whether this is one of the constructs beyond plain regular expressions (`and`, `not`,
    /// `json_quote`, `multiple_of`, `look_ahead`), which only some implementations support.
    pub fn is_extended(&self) -> bool {
        matches!(
            self,
            RegexSpec::And(_)
                | RegexSpec::Not(_)
                | RegexSpec::JsonQuote { .. }
                | RegexSpec::MultipleOf { .. }
                | RegexSpec::LookAhead(_)
        )
    }
}

/// Walks `root` bottom-up with an explicit stack (never recursion), calling `f(node,
/// children_values)` once per node, children first. Fails with [`ErrorKind::TooDeep`] when
/// the tree nests deeper than `max_depth`.
pub(crate) fn fold<T>(
    lexeme: &str,
    root: &RegexSpec,
    max_depth: usize,
    mut f: impl FnMut(&RegexSpec, Vec<T>) -> Result<T, Error>,
) -> Result<T, Error> {
    // (node, depth, children already pushed)
    let mut todo: Vec<(&RegexSpec, usize, bool)> = vec![(root, 1, false)];
    let mut values: Vec<T> = Vec::new();
    while let Some((node, depth, expanded)) = todo.pop() {
        if expanded {
            let n = node.children().len();
            let args = values.split_off(values.len() - n);
            values.push(f(node, args)?);
        } else {
            if depth > max_depth {
                return Err(
                    ErrorKind::TooDeep { lexeme: lexeme.to_string(), limit: max_depth }.into()
                );
            }
            todo.push((node, depth, true));
            for c in node.children().iter().rev() {
                todo.push((c, depth + 1, false));
            }
        }
    }
    Ok(values.pop().expect("fold: one value for the root"))
}

/// How a lexeme matches and what role it plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LexemeKind {
    /// Longest match (the default): the lexeme ends before the first byte that cannot
    /// extend it.
    #[default]
    Greedy,
    /// Shortest match: the lexeme ends with the first byte at which it matches
    /// (`[lazy]` and stop sequences).
    Lazy,
    /// Skipped between other lexemes (`%ignore`), matched greedily. Whether it is allowed at
    /// a point is the parser's decision; the lexer only matches it when asked.
    Skip,
    /// Like `Skip`, but at most one occurrence between two other lexemes (enforced by the
    /// parser).
    SkipOnce,
}

impl LexemeKind {
    /// Whether the lexeme ends at its shortest match.
    pub fn is_lazy(self) -> bool {
        self == LexemeKind::Lazy
    }

    /// Whether the lexeme is skipped between others (`Skip` or `SkipOnce`).
    pub fn is_skip(self) -> bool {
        matches!(self, LexemeKind::Skip | LexemeKind::SkipOnce)
    }
}

/// A group of lexemes that belong together, typically one (sub-)grammar with its own skip
/// lexemes. Class 0 is the default.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct LexemeClass(pub u16);

/// One lexeme: a name (for messages and lookups), its regex, its kind and its class.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LexemeSpec {
    /// Name, e.g. `NUMBER`. Need not be unique, but lookups by name find the first.
    pub name: String,
    /// What it matches.
    pub regex: RegexSpec,
    /// Greedy, lazy, or skipped.
    #[serde(default)]
    pub kind: LexemeKind,
    /// The lexeme class (sub-grammar) it belongs to.
    #[serde(default)]
    pub class: LexemeClass,
}

/// All the lexemes of a grammar. Lexeme `i` has [`LexemeIdx`] `i`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LexerSpec {
    /// The lexemes, in priority order (lower index wins ties).
    pub lexemes: Vec<LexemeSpec>,
}

impl LexerSpec {
    /// An empty spec.
    pub fn new() -> Self {
        LexerSpec::default()
    }

    /// Adds a lexeme of class 0 and returns its index.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        regex: RegexSpec,
        kind: LexemeKind,
    ) -> LexemeIdx {
        self.push(LexemeSpec { name: name.into(), regex, kind, class: LexemeClass::default() })
    }

    /// Adds a lexeme and returns its index.
    pub fn push(&mut self, lexeme: LexemeSpec) -> LexemeIdx {
        self.lexemes.push(lexeme);
        LexemeIdx::new(self.lexemes.len() - 1)
    }

    /// The number of lexemes.
    pub fn len(&self) -> usize {
        self.lexemes.len()
    }

    /// Whether there are no lexemes.
    pub fn is_empty(&self) -> bool {
        self.lexemes.is_empty()
    }

    /// The lexeme at `idx`, if in bounds.
    pub fn get(&self, idx: LexemeIdx) -> Option<&LexemeSpec> {
        self.lexemes.get(idx.as_usize())
    }

    /// The first lexeme named `name`.
    pub fn lookup(&self, name: &str) -> Option<LexemeIdx> {
        self.lexemes.iter().position(|l| l.name == name).map(LexemeIdx::new)
    }

    /// Every lexeme.
    pub fn all(&self) -> LexemeSet {
        LexemeSet::all(self.len())
    }

    /// The lexemes of `class` (skip lexemes included).
    pub fn lexemes_in_class(&self, class: LexemeClass) -> LexemeSet {
        self.select(|l| l.class == class)
    }

    /// The skip lexemes (`Skip` and `SkipOnce`) of `class`: a parser starts the lexer with
    /// "allowed ∪ these" where skipping is allowed.
    pub fn skip_lexemes(&self, class: LexemeClass) -> LexemeSet {
        self.select(|l| l.class == class && l.kind.is_skip())
    }

    /// The lazy lexemes.
    pub fn lazy_lexemes(&self) -> LexemeSet {
        self.select(|l| l.kind.is_lazy())
    }

    /// Whether any lexeme uses a construct for which [`RegexSpec::is_extended`] holds.
    pub fn uses_extended(&self) -> bool {
        self.lexemes.iter().any(|l| {
            let mut todo = vec![&l.regex];
            while let Some(e) = todo.pop() {
                if e.is_extended() {
                    return true;
                }
                todo.extend(e.children());
            }
            false
        })
    }

    /// Checks what every implementation needs: nesting within `max_depth`, `min <= max` in
    /// repeats, a positive `multiple_of` divisor, non-empty `and`, byte-set ranges with
    /// `lo <= hi`, and look-aheads only at the end of a lexeme's top-level `concat`.
    pub fn validate(&self, max_depth: usize) -> Result<(), Error> {
        for l in &self.lexemes {
            let bad = |message: String| -> Error {
                ErrorKind::InvalidSpec { lexeme: l.name.clone(), message }.into()
            };
            // The only allowed look-ahead position: last element of a top-level concat.
            let allowed_la: Option<*const RegexSpec> = match &l.regex {
                RegexSpec::Concat(v) => v.last().map(|e| e as *const RegexSpec),
                _ => None,
            };
            fold(&l.name, &l.regex, max_depth, |node, _: Vec<()>| match node {
                RegexSpec::Repeat { min, max: Some(max), .. } if min > max => {
                    Err(bad(format!("repeat with min {min} > max {max}")))
                }
                RegexSpec::MultipleOf { divisor: 0, .. } => {
                    Err(bad("multiple_of with divisor 0".into()))
                }
                RegexSpec::And(v) if v.is_empty() => {
                    Err(bad("`and` needs at least one element".into()))
                }
                RegexSpec::ByteSet(r) if r.iter().any(|(lo, hi)| lo > hi) => {
                    Err(bad("byte_set range with lo > hi".into()))
                }
                RegexSpec::LookAhead(_) if allowed_la != Some(node as *const RegexSpec) => Err(
                    bad("look_ahead is allowed only as the last element of the top-level concat"
                        .into()),
                ),
                _ => Ok(()),
            })?;
        }
        Ok(())
    }

    fn select(&self, f: impl Fn(&LexemeSpec) -> bool) -> LexemeSet {
        self.lexemes
            .iter()
            .enumerate()
            .filter(|(_, l)| f(l))
            .map(|(i, _)| LexemeIdx::new(i))
            .collect()
    }
}

impl RegexSpec {
    /// The fewest and most characters (Unicode scalar values) of the strings this matches
    /// (`None` for the most: no bound), read off its structure; `None` when not known (a
    /// regex that does not parse, byte sets and byte strings, `multipleOf`, JSON quoting).
    pub fn char_len_bounds(&self) -> Option<(u32, Option<u32>)> {
        match self {
            RegexSpec::Literal(l) => {
                let n = l.chars().count() as u32;
                Some((n, Some(n)))
            }
            RegexSpec::Regex(s) => crate::parsed::parsed(s).char_bounds,
            // Any conjunct's bounds hold for the intersection; the tightest of those known.
            RegexSpec::And(xs) => {
                xs.iter().filter_map(RegexSpec::char_len_bounds).reduce(|a, b| {
                    let max = match (a.1, b.1) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, None) | (None, x) => x,
                    };
                    (a.0.max(b.0), max)
                })
            }
            RegexSpec::Concat(xs) => {
                crate::parsed::concat_bounds(xs.iter().map(RegexSpec::char_len_bounds))
            }
            RegexSpec::Or(xs) => {
                crate::parsed::or_bounds(xs.iter().map(RegexSpec::char_len_bounds))
            }
            _ => None,
        }
    }
}
