//! Free text as lexemes: text that never contains an exclude, and free text that runs up
//! to a delimiter (a tag's end, a trigger) as one lexeme with it, so the lexer's longest
//! match never swallows the delimiter; literals of the structural tag.

use lexer::RegexSpec;

use crate::ir::{Expr, SpecialToken};

/// Any Unicode scalar, newlines included.
const ANY: &str = "(?s:.)";

/// A string of the structural tag: text, where a special token's name may also be that
/// token (the model writes `<|python_tag|>` as one special token).
pub(super) fn lit(s: &str) -> Expr {
    if s.is_empty() {
        Expr::Empty
    } else {
        Expr::Text(s.to_string())
    }
}

/// One of the strings, each special-token aware (see [`lit`]).
pub(super) fn alt_lits(v: &[String]) -> Expr {
    Expr::Alt(v.iter().map(|s| lit(s)).collect())
}

pub(super) fn or_lits(v: &[String]) -> RegexSpec {
    RegexSpec::Or(v.iter().map(|s| RegexSpec::Literal(s.clone())).collect())
}

/// Σ* x Σ*: strings containing one of `v`.
pub(super) fn containing(v: &[String]) -> RegexSpec {
    RegexSpec::Concat(vec![any_star(), or_lits(v), any_star()])
}

pub(super) fn any_star() -> RegexSpec {
    RegexSpec::Regex(format!("{ANY}*"))
}

/// Free text: no string of `bad` inside, at most `max_chars` characters.
pub(super) fn free_text(bad: &[String], max_chars: Option<u32>) -> RegexSpec {
    let mut parts = vec![match max_chars {
        Some(n) => RegexSpec::Regex(format!("{ANY}{{0,{n}}}")),
        None => any_star(),
    }];
    let bad: Vec<String> = bad.iter().filter(|s| !s.is_empty()).cloned().collect();
    if !bad.is_empty() {
        parts.push(RegexSpec::Not(Box::new(containing(&bad))));
    }
    if parts.len() == 1 {
        parts.pop().expect("one")
    } else {
        RegexSpec::And(parts)
    }
}

/// Free text followed by one of `delims`, up to the first delimiter: `w = s·d` where `s`
/// has no string of `bad` and `w` has no delimiter ending before its end (and, as XGrammar
/// scans excludes over the delimiter's characters too, no string of `excl` at all).
pub(super) fn text_then(
    bad: &[String],
    delims: &[String],
    excl: &[String],
    max_chars: Option<u32>,
) -> RegexSpec {
    let mut parts = vec![
        RegexSpec::Concat(vec![free_text(bad, max_chars), or_lits(delims)]),
        RegexSpec::Not(Box::new(RegexSpec::Concat(vec![
            any_star(),
            or_lits(delims),
            RegexSpec::Regex(format!("{ANY}+")),
        ]))),
    ];
    let excl: Vec<String> = excl.iter().filter(|s| !s.is_empty()).cloned().collect();
    if !excl.is_empty() {
        parts.push(RegexSpec::Not(Box::new(containing(&excl))));
    }
    RegexSpec::And(parts)
}

/// Free text then a delimiter: [`text_then`] as one lexeme; for a delimiter that may be a
/// special token of the tokenizer (`<|end|>`, `[TOOL_CALLS]`: no spaces, bracketed), also
/// the free text followed by that token.
pub(super) fn then_delims(
    bad: &[String],
    delims: &[String],
    excl: &[String],
    max_chars: Option<u32>,
) -> Expr {
    let text = Expr::Lexeme(text_then(bad, delims, excl, max_chars));
    let free = Expr::Lexeme(free_text(bad, max_chars));
    or_special_end(text, free, delims)
}

/// `text` (text then a delimiter, one lexeme), or else `free` text then a delimiter that
/// may be a special token (`<...>`, `[...]`) as that token.
pub(super) fn or_special_end(text: Expr, free: Expr, delims: &[String]) -> Expr {
    let specials: Vec<&String> = delims
        .iter()
        .filter(|d| {
            d.len() >= 3
                && !d.contains(char::is_whitespace)
                && ((d.starts_with('<') && d.ends_with('>'))
                    || (d.starts_with('[') && d.ends_with(']')))
        })
        .collect();
    if specials.is_empty() {
        return text;
    }
    let free = Expr::Repeat { expr: Box::new(free), min: 0, max: Some(1) };
    let toks =
        specials.into_iter().map(|d| Expr::Special(SpecialToken::NameIfAny(d.clone()))).collect();
    Expr::Alt(vec![text, Expr::Seq(vec![free, Expr::Alt(toks)])])
}

/// Every byte suffix of the delimiters, the empty one included: what may follow text that
/// has used its token budget (the rest of a delimiter already begun, a whole one, or nothing
/// once one is complete: a delimiter that another extends may still end there).
pub(super) fn delim_suffixes(delims: &[String]) -> RegexSpec {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for d in delims {
        let b = d.as_bytes();
        out.extend((0..b.len()).map(|i| b[i..].to_vec()));
    }
    out.sort();
    out.dedup();
    let mut alts = vec![RegexSpec::Empty];
    alts.extend(out.into_iter().map(RegexSpec::Bytes));
    RegexSpec::Or(alts)
}

/// `e` then one of the tail strings (a tag's end), if any.
pub(super) fn with_tail(e: Expr, tail: Option<&[String]>) -> Expr {
    match tail {
        None => e,
        Some(t) => Expr::Seq(vec![e, alt_lits(t)]),
    }
}
