//! Tokens of the Lark dialect, with byte offsets for error messages.

use crate::{Error, ErrorKind};

/// One token of Lark source.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A rule name (lowercase); a `?`/`!` prefix is stripped.
    Rule(String),
    /// A terminal name (uppercase, may start with `_`).
    Term(String),
    /// `"..."` decoded, with the `i` flag.
    Str(String, bool),
    /// `/.../flags`: the regex body and flags.
    Regex(String, String),
    /// A number.
    Num(String),
    /// `%name`.
    Directive(String),
    /// `@name`.
    At(String),
    /// `<|...|>`: a special token by name.
    SpecialName(String),
    /// `<[...]>` body.
    SpecialIds(String),
    /// A punctuation mark.
    Punct(&'static str),
    /// A line break (rules end at one unless the next line starts with `|`).
    Newline,
    /// A JSON value after `%json`/`%llguidance`/`%regex` (raw text).
    Json(String),
    /// The inside of a `{...}` Lark block after `%lark` (raw text).
    LarkBlock(String),
    /// `::expr` after a name: a parameter (raw text, `_`, a number or `f(...)`).
    Param(String),
    /// `%if cond`: a condition of a parametric alternative (raw text).
    Cond(String),
}

/// A token and where it starts.
#[derive(Clone, Debug)]
pub(crate) struct Spanned {
    pub(crate) tok: Tok,
    pub(crate) at: usize,
}

const PUNCTS: &[&str] = &[
    "->", "..", ":", "|", "(", ")", "[", "]", "?", "*", "+", "{", "}", ",", "~", "&", "=", ".", "!",
];

pub(crate) fn tokenize(src: &str) -> Result<Vec<Spanned>, Error> {
    let b = src.as_bytes();
    let mut out: Vec<Spanned> = Vec::new();
    let mut i = 0;
    let err = |msg: &str, at: usize| Error::at(ErrorKind::Syntax, msg, src, at);
    while i < b.len() {
        let c = b[i];
        let at = i;
        match c {
            b'\n' => {
                out.push(Spanned { tok: Tok::Newline, at });
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'#' => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line(b, i),
            b'"' => {
                let (s, end) = string_lit(src, i)?;
                i = end;
                let ci = b.get(i) == Some(&b'i') && !b.get(i + 1).is_some_and(|c| is_name_char(*c));
                if ci {
                    i += 1;
                }
                out.push(Spanned { tok: Tok::Str(s, ci), at });
            }
            b'/' => {
                let mut j = i + 1;
                let mut body = String::new();
                loop {
                    match b.get(j) {
                        None | Some(b'\n') => return Err(err("unterminated regex", at)),
                        Some(b'\\') if b.get(j + 1) == Some(&b'/') => {
                            body.push('/');
                            j += 2;
                        }
                        Some(b'\\') => {
                            let ch = src[j + 1..]
                                .chars()
                                .next()
                                .ok_or_else(|| err("unterminated regex", at))?;
                            body.push('\\');
                            body.push(ch);
                            j += 1 + ch.len_utf8();
                        }
                        Some(b'/') => break,
                        Some(_) => {
                            let ch = src[j..].chars().next().expect("in bounds");
                            body.push(ch);
                            j += ch.len_utf8();
                        }
                    }
                }
                j += 1;
                let fstart = j;
                while j < b.len() && b[j].is_ascii_alphabetic() {
                    j += 1;
                }
                out.push(Spanned { tok: Tok::Regex(body, src[fstart..j].to_string()), at });
                i = j;
            }
            b'%' => {
                let j = name_end(b, i + 1);
                let name = src[i + 1..j].to_string();
                if name.is_empty() {
                    return Err(err("expected a directive name after %", at));
                }
                if name == "if" {
                    let (text, end) = param_text(src, j);
                    if text.is_empty() {
                        return Err(err("expected a condition after %if", at));
                    }
                    out.push(Spanned { tok: Tok::Cond(text), at });
                    i = end;
                    continue;
                }
                out.push(Spanned { tok: Tok::Directive(name.clone()), at });
                i = j;
                // Directives followed by a JSON value or a Lark block: read it raw (the
                // `{` may be on the next line).
                let mut k = i;
                while k < b.len() && b[k].is_ascii_whitespace() {
                    k += 1;
                }
                // `%json true` / `%json false`: boolean schemas.
                let boolean = name == "json"
                    && ["true", "false"].iter().any(|w| {
                        src[k..].starts_with(w)
                            && !b.get(k + w.len()).is_some_and(|&c| is_name_char(c))
                    });
                if matches!(name.as_str(), "json" | "llguidance" | "regex")
                    && (b.get(k) == Some(&b'{') || boolean)
                {
                    let end = json_end(src, k)?;
                    out.push(Spanned { tok: Tok::Json(src[k..end].to_string()), at: k });
                    i = end;
                } else if name == "lark" && b.get(k) == Some(&b'{') {
                    let end = block_end(src, k)?;
                    // As LLGuidance: the closing `}` stands after a line break.
                    let before = src[k + 1..end - 1].trim_end_matches([' ', '\t', '\r']);
                    if !before.ends_with('\n') {
                        return Err(err(
                            "the closing } of a %lark block must start a line",
                            end - 1,
                        ));
                    }
                    out.push(Spanned {
                        tok: Tok::LarkBlock(src[k + 1..end - 1].to_string()),
                        at: k + 1,
                    });
                    i = end;
                }
            }
            b'@' => {
                let j = name_end(b, i + 1);
                if j == i + 1 {
                    return Err(err("expected a grammar name after @", at));
                }
                out.push(Spanned { tok: Tok::At(src[i + 1..j].to_string()), at });
                i = j;
            }
            b'<' if b.get(i + 1) == Some(&b'[') => {
                let end = src[i..].find("]>").ok_or_else(|| err("unterminated <[...]>", at))? + i;
                out.push(Spanned { tok: Tok::SpecialIds(src[i + 2..end].to_string()), at });
                i = end + 2;
            }
            b'<' => {
                let end = src[i..]
                    .find('>')
                    .ok_or_else(|| err("unterminated special token <...>", at))?
                    + i;
                let name = &src[i..=end];
                if name.contains(char::is_whitespace) {
                    return Err(err("unexpected '<'", at));
                }
                out.push(Spanned { tok: Tok::SpecialName(name.to_string()), at });
                i = end + 1;
            }
            c if c.is_ascii_digit() => {
                let mut j = i;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                // A decimal part, but not the `..` of a range.
                if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(|d| d.is_ascii_digit()) {
                    j += 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                out.push(Spanned { tok: Tok::Num(src[i..j].to_string()), at });
                i = j;
            }
            c if c == b'_'
                || c.is_ascii_alphabetic()
                || ((c == b'?' || c == b'!')
                    && b.get(i + 1).is_some_and(|c| c.is_ascii_lowercase() || *c == b'_')
                    && line_start(b, i)) =>
            {
                let start = if c == b'?' || c == b'!' { i + 1 } else { i };
                let j = name_end(b, start);
                let name = &src[start..j];
                let tok =
                    if name.trim_start_matches('_').starts_with(|c: char| c.is_ascii_uppercase())
                        && name
                            .chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    {
                        Tok::Term(name.to_string())
                    } else {
                        Tok::Rule(name.to_string())
                    };
                out.push(Spanned { tok, at });
                i = j;
                let mut k = j;
                while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                    k += 1;
                }
                if src[k..].starts_with("::") {
                    let (text, end) = param_text(src, k + 2);
                    if text.is_empty() {
                        return Err(err("expected a parameter after ::", k));
                    }
                    out.push(Spanned { tok: Tok::Param(text), at: k });
                    i = end;
                }
            }
            _ => match PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
                Some(p) => {
                    out.push(Spanned { tok: Tok::Punct(p), at });
                    i += p.len();
                }
                None => {
                    let ch = src[i..].chars().next().expect("in bounds");
                    return Err(err(&format!("unexpected character {ch:?}"), at));
                }
            },
        }
    }
    Ok(out)
}

/// A parameter or condition from `i` (spaces skipped): `_`, a word, or a word followed by
/// a parenthesized argument list (balanced, on one line). Returns the text and its end.
fn param_text(src: &str, i: usize) -> (String, usize) {
    let b = src.as_bytes();
    let mut s = i;
    while s < b.len() && (b[s] == b' ' || b[s] == b'\t') {
        s += 1;
    }
    let mut j = name_end(b, s);
    if j < b.len() && b[j] == b'(' {
        let mut depth = 0i32;
        while j < b.len() && b[j] != b'\n' {
            match b[j] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            j += 1;
            if depth == 0 {
                break;
            }
        }
    }
    (src[s..j].to_string(), j)
}

fn line_start(b: &[u8], i: usize) -> bool {
    b[..i].iter().rev().take_while(|&&c| c != b'\n').all(|c| c.is_ascii_whitespace())
}

fn is_name_char(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

/// The end of a name from `i`: name characters, and `-` between them (`foo-bar`, as
/// LLGuidance allows; `->` stays an alias arrow).
fn name_end(b: &[u8], mut i: usize) -> usize {
    let start = i;
    while i < b.len()
        && (is_name_char(b[i])
            || (b[i] == b'-' && i > start && b.get(i + 1).is_some_and(|&c| is_name_char(c))))
    {
        i += 1;
    }
    i
}

fn skip_line(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// Decodes a `"..."` literal starting at `start` (JSON escapes plus `\xHH`); returns it and
/// the offset after the closing quote.
pub(crate) fn string_lit(src: &str, start: usize) -> Result<(String, usize), Error> {
    let err = |msg: &str, at: usize| Error::at(ErrorKind::Syntax, msg, src, at);
    let mut out = String::new();
    let mut chars = src[start + 1..].char_indices().map(|(k, c)| (k + start + 1, c));
    loop {
        let Some((k, c)) = chars.next() else { return Err(err("unterminated string", start)) };
        match c {
            '"' => return Ok((out, k + 1)),
            '\n' => return Err(err("unterminated string (newline inside)", start)),
            '\\' => {
                let Some((k2, e)) = chars.next() else {
                    return Err(err("unterminated string", start));
                };
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    '0' => out.push('\0'),
                    '"' | '\\' | '/' | '\'' => out.push(e),
                    'x' | 'u' => {
                        let n = if e == 'x' { 2 } else { 4 };
                        let hex: String =
                            (0..n).filter_map(|_| chars.next().map(|x| x.1)).collect();
                        let v = u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| hex.len() == n)
                            .ok_or_else(|| err(&format!("bad \\{e} escape"), k2 - 1))?;
                        let ch = char::from_u32(v).ok_or_else(|| {
                            err(
                                "escape is not a Unicode scalar value (surrogates unsupported)",
                                k2 - 1,
                            )
                        })?;
                        out.push(ch);
                    }
                    _ => return Err(err(&format!("unknown escape \\{e}"), k2 - 1)),
                }
            }
            c => out.push(c),
        }
    }
}

/// The end offset of the JSON value starting at `start`.
fn json_end(src: &str, start: usize) -> Result<usize, Error> {
    let mut it = serde_json::Deserializer::from_str(&src[start..]).into_iter::<serde_json::Value>();
    match it.next() {
        Some(Ok(_)) => Ok(start + it.byte_offset()),
        Some(Err(e)) => Err(Error::at(ErrorKind::Syntax, format!("bad JSON: {e}"), src, start)),
        None => Err(Error::at(ErrorKind::Syntax, "expected a JSON value", src, start)),
    }
}

/// The end offset (after `}`) of a `{...}` Lark block, counting braces outside strings and
/// comments.
fn block_end(src: &str, start: usize) -> Result<usize, Error> {
    let b = src.as_bytes();
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            b'"' => {
                i = string_lit(src, i)?.1;
                continue;
            }
            b'#' => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line(b, i),
            b'/' => {
                // A /regex/: its quotes and braces are not the block's.
                i += 1;
                while i < b.len() && b[i] != b'/' && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(Error::at(ErrorKind::Syntax, "unterminated %lark { block", src, start))
}
