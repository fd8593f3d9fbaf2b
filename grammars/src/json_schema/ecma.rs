//! ECMA-262 regexes (JSON Schema `pattern`) translated to Rust regex syntax, and the regexes
//! of the supported `format`s. All regexes here describe string *contents* (before JSON
//! quoting) and are anchored (they match whole strings).

use lexer::RegexSpec;

use crate::{Error, ErrorKind};

/// ECMA `\s`: white space and line terminators.
const SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Any character (a Unicode scalar value).
pub(crate) const ANY_CHAR: &str = r"(?s:.)";

fn unsupported(pattern: &str, what: &str) -> Error {
    Error::new(ErrorKind::Unsupported, format!("pattern {pattern:?}: {what} is not supported"))
}

/// Translates an ECMA-262 regex to Rust regex syntax. With `anchored` (LLGuidance's
/// behaviour, the default) the pattern must match the whole string; otherwise it is a search
/// (JSON Schema's semantics), as if surrounded by `.*`. A leading `^` and a trailing `$` of a
/// top-level alternative anchor it explicitly in both modes.
pub(crate) fn translate_pattern(pattern: &str, anchored: bool) -> Result<String, Error> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut branches = Vec::new();
    expand(&chars, false, false, 0, &mut branches);
    let mut out = Vec::new();
    for (b, left, right) in branches {
        let body = translate_body(pattern, &b)?;
        let pre = if left || anchored { "" } else { ANY_CHAR_STAR };
        let post = if right || anchored { "" } else { ANY_CHAR_STAR };
        out.push(format!("{pre}(?:{body}){post}"));
    }
    Ok(out.join("|"))
}

/// The top-level alternatives of `chars`, each with its leading `^` and trailing `$` taken
/// off as flags (or-ed with `left` / `right`, the enclosing alternative's). An alternative
/// that is one group (`(…)`, `(?:…)`, `(?<name>…)`, no quantifier after it) is expanded
/// into its own alternatives: concatenation distributes over union, so `^(a|$)` is `^a`
/// or `^$`, and `(^a|b)` is `^a` or `b` (anchors inside a group at a branch's edge, which
/// real schemas write). Depth-bounded.
fn expand(
    chars: &[char],
    left: bool,
    right: bool,
    depth: usize,
    out: &mut Vec<(Vec<char>, bool, bool)>,
) {
    for mut b in split_alternatives(chars) {
        let (mut l, mut r) = (left, right);
        if b.first() == Some(&'^') {
            l = true;
            b = &b[1..];
        }
        if b.last() == Some(&'$') && !is_escaped(b, b.len() - 1) {
            r = true;
            b = &b[..b.len() - 1];
        }
        if depth < 8 {
            if let Some(peeled) = peel_end_anchor(b) {
                for (v, end) in peeled {
                    expand(&v, l, r || end, depth + 1, out);
                }
                continue;
            }
        }
        match whole_group(b).filter(|_| depth < 8) {
            Some(inner) => expand(inner, l, r, depth + 1, out),
            None => out.push((b.to_vec(), l, r)),
        }
    }
}

/// The top-level alternatives of `b` (the spans between `|`s outside groups and classes).
fn split_alternatives(b: &[char]) -> Vec<&[char]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _, _) in structure(b).into_iter().filter(|&(_, c, d)| c == '|' && d == 0) {
        out.push(&b[start..i]);
        start = i + 1;
    }
    out.push(&b[start..]);
    out
}

/// The group characters of `b` outside classes and escapes: each `(`, `)` and `|` with its
/// index and the group depth before it.
fn structure(b: &[char]) -> Vec<(usize, char, i32)> {
    let (mut d, mut in_class, mut i) = (0i32, false, 0usize);
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            '\\' => i += 1,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            c @ ('(' | ')' | '|') if !in_class => {
                out.push((i, c, d));
                d += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The last top-level group of `b` (the indices of its parentheses), if `b` is balanced.
fn last_group(b: &[char]) -> Option<(usize, usize)> {
    let marks = structure(b);
    let balance: i32 =
        marks.iter().map(|&(_, c, _)| i32::from(c == '(') - i32::from(c == ')')).sum();
    if balance != 0 {
        return None;
    }
    let open = marks.iter().rev().find(|&&(_, c, d)| c == '(' && d == 0)?.0;
    let close = marks.iter().rev().find(|&&(_, c, d)| c == ')' && d == 1)?.0;
    (open < close).then_some((open, close))
}

/// `a` with a trailing group (no quantifier after it) replaced by each of its alternatives,
/// recursively: concatenation distributes over union. Depth-bounded.
fn distribute_tail(a: &[char], depth: usize) -> Vec<Vec<char>> {
    let trailing = last_group(a).filter(|&(_, close)| close + 1 == a.len()).map(|(open, _)| open);
    let inner = trailing.filter(|_| depth < 8).and_then(|o| whole_group(&a[o..]).map(|g| (o, g)));
    match inner {
        Some((o, g)) => split_alternatives(g)
            .into_iter()
            .flat_map(|alt| distribute_tail(&[&a[..o], alt].concat(), depth + 1))
            .collect(),
        None => vec![a.to_vec()],
    }
}

/// A branch ending in a repeated group some of whose alternatives end with `$`
/// (`P(A|Z$){m,n}`, as in `^([^,]+(,|$)){3,}$`): `$` there can only be the last iteration's,
/// so the branch is `P(A){m,n}` or `P(A){m-1,n-1}Z` at the end of the string (the flag).
/// `None` when `b` has no such shape.
fn peel_end_anchor(b: &[char]) -> Option<Vec<(Vec<char>, bool)>> {
    // the last top-level group and what follows it
    let (open, close) = last_group(b)?;
    let quant: String = b[close + 1..].iter().collect();
    let quant = quant.strip_suffix('?').filter(|q| !q.is_empty()).unwrap_or(&quant);
    let (lo, hi): (u32, Option<u32>) = match quant {
        "*" => (0, None),
        "+" => (1, None),
        "?" => (0, Some(1)),
        q if q.starts_with('{') && q.ends_with('}') => {
            let body = &q[1..q.len() - 1];
            match body.split_once(',') {
                None => {
                    let n = body.parse().ok()?;
                    (n, Some(n))
                }
                Some((a, "")) => (a.parse().ok()?, None),
                Some((a, z)) => (a.parse().ok()?, Some(z.parse().ok()?)),
            }
        }
        _ => return None,
    };
    let group = &b[open..=close];
    let inner = whole_group(group)?;
    // trailing groups of the alternatives distributed (`X(,|$)` is `X,` or `X$`)
    let dist: Vec<Vec<char>> =
        split_alternatives(inner).into_iter().flat_map(|a| distribute_tail(a, 0)).collect();
    let alts: Vec<&[char]> = dist.iter().map(Vec::as_slice).collect();
    let ends = |a: &[char]| a.last() == Some(&'$') && !is_escaped(a, a.len() - 1);
    if !alts.iter().any(|a| ends(a)) || hi == Some(0) {
        return None;
    }
    let join = |v: Vec<&[char]>| -> String {
        v.iter().map(|a| a.iter().collect::<String>()).collect::<Vec<_>>().join("|")
    };
    let plain: Vec<&[char]> = alts.iter().copied().filter(|a| !ends(a)).collect();
    let last: Vec<&[char]> = alts.iter().filter(|a| ends(a)).map(|a| &a[..a.len() - 1]).collect();
    let prefix: String = b[..open].iter().collect();
    let range = |lo: u32, hi: Option<u32>| match hi {
        Some(h) => format!("{{{lo},{h}}}"),
        None => format!("{{{lo},}}"),
    };
    let mut out = Vec::new();
    if !plain.is_empty() {
        let a = join(plain.clone());
        out.push((format!("{prefix}(?:{a}){}", range(lo, hi)).chars().collect(), false));
        let before = range(lo.saturating_sub(1), hi.map(|h| h - 1));
        out.push((format!("{prefix}(?:{a}){before}(?:{})", join(last)).chars().collect(), true));
    } else {
        // every iteration ends the string: at most one, and it is the last
        if lo <= 1 {
            out.push((format!("{prefix}(?:{})", join(last)).chars().collect(), true));
        }
        if lo == 0 {
            out.push((prefix.chars().collect(), false));
        }
    }
    Some(out)
}

/// A pattern that starts with a look-ahead, `^(?!X)Y` or `^(?=X)Y` (one top-level
/// alternative): whether it is positive, `^(?:X)` (the strings it asks of the start) and
/// `^Y` (the rest). The look-ahead is then an intersection (or intersection with the
/// complement) of `X` followed by anything with the rest, which derivre expresses exactly.
pub(crate) fn leading_lookahead(pattern: &str) -> Option<(bool, String, String)> {
    let positive = if pattern.starts_with("^(?!") {
        false
    } else if pattern.starts_with("^(?=") {
        true
    } else {
        return None;
    };
    let chars: Vec<char> = pattern.chars().collect();
    let marks = structure(&chars);
    if marks.iter().any(|&(_, c, d)| c == '|' && d == 0) {
        return None;
    }
    let close = marks.iter().find(|&&(_, c, d)| c == ')' && d == 1)?.0;
    let inner: String = chars[4..close].iter().collect();
    let rest: String = chars[close + 1..].iter().collect();
    Some((positive, format!("^(?:{inner})"), format!("^{rest}")))
}

/// The inside of `b` when `b` is one group, capturing, non-capturing or named (not a
/// look-around), with nothing after its closing parenthesis.
fn whole_group(b: &[char]) -> Option<&[char]> {
    if b.first() != Some(&'(') {
        return None;
    }
    // the group that opens at 0 closes at the end
    if last_group(b) != Some((0, b.len() - 1)) {
        return None;
    }
    let inner = &b[1..b.len() - 1];
    match inner {
        ['?', ':', rest @ ..] => Some(rest),
        ['?', '<', rest @ ..] if rest.first().is_some_and(|c| c.is_ascii_alphabetic()) => {
            let close = rest.iter().position(|&c| c == '>')?;
            Some(&rest[close + 1..])
        }
        ['?', ..] => None,
        _ => Some(inner),
    }
}

const ANY_CHAR_STAR: &str = r"(?s:.)*";

fn is_escaped(b: &[char], i: usize) -> bool {
    let mut n = 0;
    let mut j = i;
    while j > 0 && b[j - 1] == '\\' {
        n += 1;
        j -= 1;
    }
    n % 2 == 1
}

fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_control()) {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

fn hex(chars: &[char], i: usize, n: usize) -> Option<u32> {
    if i + n > chars.len() {
        return None;
    }
    let s: String = chars[i..i + n].iter().collect();
    if s.chars().all(|c| c.is_ascii_hexdigit()) {
        u32::from_str_radix(&s, 16).ok()
    } else {
        None
    }
}

/// One escape at `chars[i]` (the char after `\`); returns the translation and the number of
/// chars consumed after the backslash.
fn escape(
    pattern: &str,
    chars: &[char],
    i: usize,
    in_class: bool,
) -> Result<(String, usize), Error> {
    let c = *chars.get(i).ok_or_else(|| unsupported(pattern, "a trailing backslash"))?;
    let cls = |s: &str| format!("[{s}]");
    Ok(match c {
        'd' => (cls("0-9"), 1),
        'D' => ("[^0-9]".to_string(), 1),
        'w' => (cls("0-9A-Za-z_"), 1),
        'W' => ("[^0-9A-Za-z_]".to_string(), 1),
        's' => (cls(SPACE), 1),
        'S' => (format!("[^{SPACE}]"), 1),
        'n' => ("\\n".into(), 1),
        'r' => ("\\r".into(), 1),
        't' => ("\\t".into(), 1),
        'v' => ("\\x0B".into(), 1),
        'f' => ("\\x0C".into(), 1),
        '0' if !chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) => ("\\x00".into(), 1),
        'b' if in_class => ("\\x08".into(), 1),
        'b' | 'B' => return Err(unsupported(pattern, "a word boundary (\\b)")),
        '1'..='9' => return Err(unsupported(pattern, "a backreference")),
        'k' => return Err(unsupported(pattern, "a named backreference")),
        'c' => match chars.get(i + 1) {
            Some(l) if l.is_ascii_alphabetic() => (format!("\\x{{{:X}}}", (*l as u32) % 32), 2),
            _ => return Err(unsupported(pattern, "\\c without a letter")),
        },
        'x' => match hex(chars, i + 1, 2) {
            Some(v) => (format!("\\x{{{v:X}}}"), 3),
            None => return Err(unsupported(pattern, "a malformed \\x escape")),
        },
        'u' => {
            if chars.get(i + 1) == Some(&'{') {
                let end = chars[i..].iter().position(|&c| c == '}').map(|p| p + i);
                let end = end.ok_or_else(|| unsupported(pattern, "a malformed \\u{...}"))?;
                let v = hex(chars, i + 2, end - i - 2)
                    .ok_or_else(|| unsupported(pattern, "a malformed \\u{...}"))?;
                char::from_u32(v).ok_or_else(|| unsupported(pattern, "a surrogate code point"))?;
                (format!("\\x{{{v:X}}}"), end - i + 1)
            } else {
                let v = hex(chars, i + 1, 4)
                    .ok_or_else(|| unsupported(pattern, "a malformed \\u escape"))?;
                if (0xD800..0xDC00).contains(&v)
                    && chars.get(i + 5) == Some(&'\\')
                    && chars.get(i + 6) == Some(&'u')
                {
                    if let Some(lo) =
                        hex(chars, i + 7, 4).filter(|lo| (0xDC00..0xE000).contains(lo))
                    {
                        let cp = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
                        return Ok((format!("\\x{{{cp:X}}}"), 11));
                    }
                }
                if (0xD800..0xE000).contains(&v) {
                    return Err(unsupported(pattern, "a lone surrogate"));
                }
                (format!("\\x{{{v:X}}}"), 5)
            }
        }
        'p' | 'P' => {
            if chars.get(i + 1) != Some(&'{') {
                return Err(unsupported(pattern, "\\p without {...}"));
            }
            let end = chars[i..].iter().position(|&c| c == '}').map(|p| p + i);
            let end = end.ok_or_else(|| unsupported(pattern, "a malformed \\p{...}"))?;
            let name: String = chars[i + 2..end].iter().collect();
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '=') {
                return Err(unsupported(pattern, "this Unicode property"));
            }
            (format!("\\{c}{{{name}}}"), end - i + 1)
        }
        c if c.is_ascii_alphanumeric() => {
            return Err(unsupported(pattern, &format!("the escape \\{c}")))
        }
        c => {
            let mut s = String::new();
            push_char(&mut s, c);
            (s, 1)
        }
    })
}

/// Whether `chars[i..]` starts a valid quantifier `{n}`, `{n,}`, `{n,m}`; returns its length.
fn quantifier_len(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let d0 = j;
    while j < chars.len() && chars[j].is_ascii_digit() {
        j += 1;
    }
    if j == d0 {
        return None;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
    }
    if chars.get(j) == Some(&'}') {
        Some(j - i + 1)
    } else {
        None
    }
}

fn translate_body(pattern: &str, chars: &[char]) -> Result<String, Error> {
    let mut out = String::new();
    let mut i = 0;
    let mut prev_atom = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let (s, n) = escape(pattern, chars, i + 1, false)?;
                out.push_str(&s);
                i += 1 + n;
                prev_atom = true;
            }
            '.' => {
                out.push_str(r"[^\n\r\x{2028}\x{2029}]");
                i += 1;
                prev_atom = true;
            }
            '^' | '$' => return Err(unsupported(pattern, "an anchor inside the pattern")),
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    match chars.get(i + 2) {
                        Some(':') => {
                            out.push_str("(?:");
                            i += 3;
                        }
                        Some('<') if matches!(chars.get(i + 3), Some(c) if c.is_ascii_alphabetic() || *c == '_') =>
                        {
                            let end = chars[i..].iter().position(|&c| c == '>').map(|p| p + i);
                            let end =
                                end.ok_or_else(|| unsupported(pattern, "a malformed group name"))?;
                            out.push('(');
                            i = end + 1;
                        }
                        Some('=' | '!') => {
                            return Err(unsupported(pattern, "a look-around assertion"))
                        }
                        Some('<') if matches!(chars.get(i + 3), Some('=' | '!')) => {
                            return Err(unsupported(pattern, "a look-around assertion"))
                        }
                        _ if chars[i + 2..]
                            .iter()
                            .position(|&c| !"ims-".contains(c))
                            .is_some_and(|k| k > 0 && chars[i + 2 + k] == ':') =>
                        {
                            return Err(unsupported(
                                pattern,
                                "a modifier group like `(?i:...)` (ECMAScript 2025)",
                            ))
                        }
                        _ => return Err(unsupported(pattern, "a group syntax ECMAScript lacks")),
                    }
                } else {
                    out.push('(');
                    i += 1;
                }
                prev_atom = false;
            }
            ')' | '|' => {
                out.push(c);
                i += 1;
                prev_atom = c == ')';
            }
            '*' | '+' | '?' => {
                if !prev_atom {
                    return Err(unsupported(pattern, "a quantifier without an operand"));
                }
                out.push(c);
                i += 1;
                if chars.get(i) == Some(&'?') {
                    // lazy quantifiers match the same strings
                    i += 1;
                }
                prev_atom = false;
            }
            '{' => match quantifier_len(chars, i) {
                Some(n) if prev_atom => {
                    let q: String = chars[i..i + n].iter().collect();
                    out.push_str(&q);
                    i += n;
                    if chars.get(i) == Some(&'?') {
                        i += 1;
                    }
                    prev_atom = false;
                }
                Some(_) => return Err(unsupported(pattern, "a quantifier without an operand")),
                None => {
                    out.push_str("\\{");
                    i += 1;
                    prev_atom = true;
                }
            },
            '[' => {
                let (s, n) = class(pattern, chars, i)?;
                out.push_str(&s);
                i += n;
                prev_atom = true;
            }
            c => {
                push_char(&mut out, c);
                i += 1;
                prev_atom = true;
            }
        }
    }
    Ok(out)
}

/// A character class starting at `chars[i] == '['`.
fn class(pattern: &str, chars: &[char], i: usize) -> Result<(String, usize), Error> {
    let mut j = i + 1;
    let neg = chars.get(j) == Some(&'^');
    if neg {
        j += 1;
    }
    let mut items = String::new();
    let mut empty = true;
    loop {
        let c = *chars.get(j).ok_or_else(|| unsupported(pattern, "an unterminated class"))?;
        match c {
            ']' => {
                j += 1;
                break;
            }
            '\\' => {
                let (s, n) = escape(pattern, chars, j + 1, true)?;
                items.push_str(&s);
                j += 1 + n;
            }
            '-' => {
                items.push_str("\\-");
                j += 1;
            }
            c => {
                push_char(&mut items, c);
                j += 1;
            }
        }
        empty = false;
    }
    // re-introduce ranges: "a\-z" was written for every '-': find real ranges
    let s = if empty {
        if neg {
            ANY_CHAR.to_string()
        } else {
            "[^\\x00-\\x{10FFFF}]".to_string()
        }
    } else {
        format!("[{}{}]", if neg { "^" } else { "" }, fix_ranges(&items))
    };
    Ok((s, j - i))
}

/// In class items, `\-` between two single characters is a range.
fn fix_ranges(items: &str) -> String {
    // Tokenize into units: \x{..}, \-, \n-like escapes, [..] nested, single chars.
    let cs: Vec<char> = items.chars().collect();
    let mut units: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        if cs[i] == '\\' {
            if cs.get(i + 1) == Some(&'x') && cs.get(i + 2) == Some(&'{') {
                let end = cs[i..].iter().position(|&c| c == '}').map_or(cs.len() - 1, |p| p + i);
                units.push(cs[i..=end].iter().collect());
                i = end + 1;
            } else if matches!(cs.get(i + 1), Some('x')) {
                units.push(cs[i..(i + 4).min(cs.len())].iter().collect());
                i += 4;
            } else if matches!(cs.get(i + 1), Some('p') | Some('P')) {
                let end = cs[i..].iter().position(|&c| c == '}').map_or(cs.len() - 1, |p| p + i);
                units.push(cs[i..=end].iter().collect());
                i = end + 1;
            } else {
                units.push(cs[i..(i + 2).min(cs.len())].iter().collect());
                i += 2;
            }
        } else if cs[i] == '[' {
            let end = cs[i..].iter().position(|&c| c == ']').map_or(cs.len() - 1, |p| p + i);
            units.push(cs[i..=end].iter().collect());
            i = end + 1;
        } else {
            units.push(cs[i].to_string());
            i += 1;
        }
    }
    let single = |u: &str| !(u.starts_with('[') || u.starts_with("\\p") || u.starts_with("\\P"));
    let mut out = String::new();
    let mut k = 0;
    while k < units.len() {
        if k + 2 < units.len()
            && units[k + 1] == "\\-"
            && single(&units[k])
            && single(&units[k + 2])
        {
            out.push_str(&units[k]);
            out.push('-');
            out.push_str(&units[k + 2]);
            k += 3;
        } else {
            out.push_str(&units[k]);
            k += 1;
        }
    }
    out
}

/// RFC 3339 times with a leap second: `HH:MM:60` is valid where it is 23:59 UTC once the
/// offset is applied (`15:59:60-08:00`, `23:29:60+23:30`, `23:59:60Z`). Exact and small:
/// a shape regex intersected with relations between digit positions of the local time and
/// of the offset (west: hour 23-hh, minute tens 5-t and units 9-u, independent; east with
/// minutes: the same hour, minute one less; east at whole hours: hour one less, minute 59).
/// Spelling out the 1,440 local times made every `date-time` schema's first mask 50x
/// slower to build; relations over digit positions keep the regex to about 2 KB.
///
/// The relations read ASCII classes only (the shape they are intersected with holds
/// nothing else): with `.` and `[^-]` (UTF-8 automata) every derivative of the time of day
/// took several times the work, the masks of a first `date-time` instance 13.07 -> 10.50 M
/// instructions (callgrind, one `{"t": date-time}` schema and instance). Tried and
/// dropped: one branch per local hour with the relations below it (9.5 M), where an
/// intersection with a `pattern` that cannot hold (a `T` the pattern wants in upper case
/// after a `t`) took derivre 90-113 ms to prove empty, against 2 ms.
fn leap_second_spec(frac: &str) -> RegexSpec {
    let h = "(?:[01][0-9]|2[0-3])";
    let m = "[0-5][0-9]";
    let shape = |sign: &str| RegexSpec::Regex(format!("{h}:{m}:60{frac}{sign}{h}:{m}"));
    let alts = |v: Vec<String>| RegexSpec::Regex(format!("(?:{})", v.join("|")));
    // Positions: local HH = 0..2, MM = 3..5; after the sign, hh = 0..2, mm = 3..5.
    let west = RegexSpec::And(vec![
        shape("-"),
        alts((0..24).map(|x| format!("{:02}[0-9:.]*-{x:02}[0-9:]*", 23 - x)).collect()),
        alts((0..6).map(|t| format!("[0-9:]{{3}}{}[0-9:.]*-[0-9:]{{3}}{t}[0-9]", 5 - t)).collect()),
        alts((0..10).map(|u| format!("[0-9:]{{4}}{}[0-9:.]*-[0-9:]{{4}}{u}", 9 - u)).collect()),
    ]);
    let east_whole =
        alts((0..24).map(|x| format!(r"{:02}:59:60{frac}\+{x:02}:00", (x + 23) % 24)).collect());
    let east = RegexSpec::And(vec![
        shape(r"\+"),
        alts((0..24).map(|x| format!(r"{x:02}[0-9:.]*\+{x:02}[0-9:]*")).collect()),
        RegexSpec::Or(vec![
            // Minute units 1-9: same tens, units one less.
            RegexSpec::And(vec![
                alts(
                    (0..6)
                        .map(|t| format!(r"[0-9:]{{3}}{t}[0-9:.]*\+[0-9:]{{3}}{t}[0-9]"))
                        .collect(),
                ),
                alts(
                    (1..10)
                        .map(|u| format!(r"[0-9:]{{4}}{}[0-9:.]*\+[0-9:]{{4}}{u}", u - 1))
                        .collect(),
                ),
            ]),
            // Minute units 0 (tens 1-5): tens one less, units 9.
            alts(
                (1..6)
                    .map(|t| format!(r"[0-9:]{{3}}{}9[0-9:.]*\+[0-9:]{{3}}{t}0", t - 1))
                    .collect(),
            ),
        ]),
    ]);
    let utc = RegexSpec::Regex(format!("23:59:60{frac}[Zz]"));
    RegexSpec::Or(vec![utc, east_whole, east, west])
}

/// The regex of a string `format`, with leap-second times as an exact intersection (see
/// [`leap_second_spec`]); `None` for unknown formats.
pub(crate) fn format_spec(name: &str) -> Option<RegexSpec> {
    let time = || -> Option<RegexSpec> {
        let frac = r"(?:\.[0-9]+)?";
        Some(RegexSpec::Or(vec![RegexSpec::Regex(format_regex("time")?), leap_second_spec(frac)]))
    };
    Some(match name {
        "time" => time()?,
        // The date once, then either kind of time: with the date in both branches, each
        // byte of it took two derivatives of the date's automaton.
        "date-time" => {
            RegexSpec::Concat(vec![RegexSpec::Regex(format!("{}[Tt]", date_regex())), time()?])
        }
        _ => RegexSpec::Regex(format_regex(name)?),
    })
}

fn date_regex() -> String {
    let year = "[0-9]{4}";
    let leap = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";
    format!(
        "(?:{year}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|{leap}-02-29)"
    )
}

/// The regex (string contents) of a `format`, or `None` if the format is unknown.
pub(crate) fn format_regex(name: &str) -> Option<String> {
    let dec_octet = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])";
    let ipv4 = format!(r"{dec_octet}(?:\.{dec_octet}){{3}}");
    let h16 = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("(?:{h16}:{h16}|{ipv4})");
    let ipv6 = [
        format!("(?:{h16}:){{6}}{ls32}"),
        format!("::(?:{h16}:){{5}}{ls32}"),
        format!("(?:{h16})?::(?:{h16}:){{4}}{ls32}"),
        format!("(?:(?:{h16}:){{0,1}}{h16})?::(?:{h16}:){{3}}{ls32}"),
        format!("(?:(?:{h16}:){{0,2}}{h16})?::(?:{h16}:){{2}}{ls32}"),
        format!("(?:(?:{h16}:){{0,3}}{h16})?::{h16}:{ls32}"),
        format!("(?:(?:{h16}:){{0,4}}{h16})?::{ls32}"),
        format!("(?:(?:{h16}:){{0,5}}{h16})?::{h16}"),
        format!("(?:(?:{h16}:){{0,6}}{h16})?::"),
    ]
    .join("|");
    let ipv6 = format!("(?:{ipv6})");
    let date = date_regex();
    let frac = r"(?:\.[0-9]+)?";
    let offset = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    // Leap seconds (`:60`) are added by `format_spec`.
    let time = format!("(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]{frac}{offset}");
    let unreserved = r"A-Za-z0-9\-._~";
    let sub_delims = r"!$&'()*+,;=";
    let pct = "%[0-9A-Fa-f]{2}";
    let uri_parts = |extra: &str, private: &str| {
        let pchar = format!("(?:[{unreserved}{sub_delims}:@{extra}]|{pct})");
        let userinfo = format!("(?:[{unreserved}{sub_delims}:{extra}]|{pct})*");
        let reg_name = format!("(?:[{unreserved}{sub_delims}{extra}]|{pct})*");
        let ipfuture = format!(r"[vV][0-9A-Fa-f]+\.[{unreserved}{sub_delims}:]+");
        let host = format!(r"(?:\[(?:{ipv6}|{ipfuture})\]|{ipv4}|{reg_name})");
        let authority = format!("(?:{userinfo}@)?{host}(?::[0-9]*)?");
        let segment = format!("{pchar}*");
        let segment_nz = format!("{pchar}+");
        let segment_nz_nc = format!("(?:[{unreserved}{sub_delims}@{extra}]|{pct})+");
        let path_abempty = format!("(?:/{segment})*");
        let path_absolute = format!("/(?:{segment_nz}(?:/{segment})*)?");
        let path_rootless = format!("{segment_nz}(?:/{segment})*");
        let path_noscheme = format!("{segment_nz_nc}(?:/{segment})*");
        let query = format!("(?:{pchar}|[/?{private}])*");
        let fragment = format!("(?:{pchar}|[/?])*");
        let scheme = r"[A-Za-z][A-Za-z0-9+\-.]*";
        let hier = format!("(?://{authority}{path_abempty}|{path_absolute}|{path_rootless}|)");
        let absolute = format!("{scheme}:{hier}(?:\\?{query})?(?:#{fragment})?");
        let relative = format!(
            "(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme}|)(?:\\?{query})?(?:#{fragment})?"
        );
        (absolute, relative)
    };
    let ucschar = r"\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}\x{10000}-\x{1FFFD}\x{20000}-\x{2FFFD}\x{30000}-\x{3FFFD}\x{40000}-\x{4FFFD}\x{50000}-\x{5FFFD}\x{60000}-\x{6FFFD}\x{70000}-\x{7FFFD}\x{80000}-\x{8FFFD}\x{90000}-\x{9FFFD}\x{A0000}-\x{AFFFD}\x{B0000}-\x{BFFFD}\x{C0000}-\x{CFFFD}\x{D0000}-\x{DFFFD}\x{E1000}-\x{EFFFD}";
    let iprivate = r"\x{E000}-\x{F8FF}\x{F0000}-\x{FFFFD}\x{100000}-\x{10FFFD}";
    let label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
    let json_pointer = "(?:/(?:[^~/]|~[01])*)*";
    let atext = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]";
    let rx = match name {
        "date-time" => format!("{date}[Tt]{time}"),
        "date" => date,
        "time" => time,
        "duration" => {
            let d = "[0-9]+";
            let dur_time = format!("T(?:{d}H(?:{d}M(?:{d}S)?)?|{d}M(?:{d}S)?|{d}S)");
            let dur_date = format!("(?:{d}Y(?:{d}M(?:{d}D)?)?|{d}M(?:{d}D)?|{d}D)(?:{dur_time})?");
            format!("P(?:{dur_date}|{dur_time}|{d}W)")
        }
        "email" => {
            // RFC 5321: a dot-atom or quoted-string local part; a hostname or an IPv4 /
            // IPv6 address literal as the domain.
            let quoted = r#""(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\x20-\x7E])*""#;
            format!(
                r"(?:{atext}+(?:\.{atext}+)*|{quoted})@(?:{label}(?:\.{label})*|\[{ipv4}\]|\[IPv6:{ipv6}\])"
            )
        }
        "hostname" => {
            let hl = hostname_label();
            format!("{hl}(?:\\.{hl})*")
        }
        "ipv4" => ipv4,
        "ipv6" => ipv6,
        "uuid" => "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
            .to_string(),
        "uri" => uri_parts("", "").0,
        "uri-reference" => {
            let (a, r) = uri_parts("", "");
            format!("{a}|{r}")
        }
        "iri" => uri_parts(ucschar, iprivate).0,
        "iri-reference" => {
            let (a, r) = uri_parts(ucschar, iprivate);
            format!("{a}|{r}")
        }
        // OpenAPI's `byte`: base64 (RFC 4648 §4, standard alphabet, padded).
        "byte" => "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?".to_string(),
        "json-pointer" => json_pointer.to_string(),
        "relative-json-pointer" => format!("(?:0|[1-9][0-9]*)(?:#|{json_pointer})"),
        "uri-template" => {
            // RFC 6570 §2 with its verified erratum 6937 (`'` is a literal: `%x26-3B`).
            // Level 4 expressions; the operators reserved for future use (`=,!@|`) are
            // left out, as the RFC gives them no meaning.
            let literal = format!(r"(?:[!#$&-;=?-\[\]_a-z~{ucschar}{iprivate}]|{pct})");
            let varchar = format!("(?:[A-Za-z0-9_]|{pct})");
            let varspec = format!(r"{varchar}(?:\.?{varchar})*(?::[1-9][0-9]{{0,3}}|\*)?");
            let expression = format!(r"\{{[+#./;?&]?{varspec}(?:,{varspec})*\}}");
            format!("(?:{literal}|{expression})*")
        }
        "idn-email" => {
            // RFC 6531: `email` with any non-ASCII character in atoms and quoted strings.
            // The domain is ASCII: labels as `hostname`'s (so no A-label), or an address
            // literal; U-labels are rejected (IDNA2008's tables and contextual rules are
            // not expressed), a subset of the valid addresses.
            let atext = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\x{80}-\x{10FFFF}]";
            let quoted = r#""(?:[\x20\x21\x23-\x5B\x5D-\x7E\x{80}-\x{10FFFF}]|\\[\x20-\x7E])*""#;
            let hl = hostname_label();
            format!(
                r"(?:{atext}+(?:\.{atext}+)*|{quoted})@(?:{hl}(?:\.{hl})*|\[{ipv4}\]|\[IPv6:{ipv6}\])"
            )
        }
        "idn-hostname" => {
            // RFC 5890 NR-LDH labels only (`hostname`'s), separated by any of RFC 3490's
            // full stops: A-labels and U-labels are rejected (IDNA2008's tables, contextual
            // and Bidi rules and Punycode are not expressed), a subset of the valid names.
            let hl = hostname_label();
            format!("{hl}(?:[.\\x{{3002}}\\x{{FF0E}}\\x{{FF61}}]{hl})*")
        }
        _ => return None,
    };
    Some(rx)
}

/// A `hostname` label: RFC 1123 (1-63 letters, digits and `-`, not at either end) without
/// "--" in positions 3-4 (RFC 5891 reserves those for A-labels), spelled out by length so
/// that no complement is needed: 1-4 characters, then 5-63 with positions 3-4 an
/// alphanumeric or "-" + alphanumeric.
fn hostname_label() -> String {
    let (a, h) = ("[A-Za-z0-9]", "[A-Za-z0-9-]");
    format!("(?:{a}|{a}{a}|{a}{h}{a}|{a}{h}{h}{a}|{a}{h}(?:{a}{h}|-{a}){h}{{0,58}}{a})")
}

/// Whether a known format's regex accepts only a subset of the format's strings (its
/// complement, under `not`, would then accept valid ones): `hostname` rejects A-labels,
/// `email` general address literals (`[tag:...]`), `idn-hostname` and `idn-email`
/// A-labels and U-labels.
pub(crate) fn format_is_subset(name: &str) -> bool {
    matches!(name, "hostname" | "email" | "idn-hostname" | "idn-email")
}

/// Why a format that JSON Schema defines is not asserted (it is then an annotation, or an
/// error under `strict_formats`); `None` for formats that are asserted or not defined.
pub(crate) fn unasserted_format_reason(name: &str) -> Option<&'static str> {
    match name {
        // ECMA-262 regex syntax nests groups to any depth (not a regular language) and has
        // context rules (group names, `\k<name>`, `{n,m}` with n <= m, range order): no
        // exact regex, and no useful subset of it.
        "regex" => Some("ECMA-262 regex syntax is not a regular language"),
        _ => None,
    }
}

/// The most characters a format allows, as a positive bound (`X & .{0,n}` keeps the lexer's
/// non-emptiness checks cheap where `X & ~(.{n+1,})` ran out of step fuel).
pub(crate) fn format_max_len(name: &str) -> Option<u32> {
    match name {
        "hostname" | "idn-hostname" => Some(253),
        _ => None,
    }
}
