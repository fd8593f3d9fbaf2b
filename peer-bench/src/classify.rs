//! Sorting mask disagreements into the deliberate semantic differences of BENCHMARKS.md.
//!
//! A disagreement is a token one engine allows and the other does not at some step of a valid
//! instance. Each such token is put in a class by looking at what the token would write: the
//! instance's text before the step followed by the token's bytes, scanned as JSON (which
//! string, escape or number the token's bytes fall in). A class names one documented
//! difference and its rule is narrow (it looks at the side that allows the token, the JSON
//! position and the text the token completes); a token no rule claims is `Unexplained`, and
//! the bench counts and lists those. `$ref` siblings are not sorted here: the driver replays
//! the reference on the schema with the siblings removed and counts a token in that class
//! when the difference goes away (see `main.rs`).

use std::sync::OnceLock;

use regex::Regex;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// 1. The reference allows `\uXXXX` escapes of characters that have a shorter canonical
    ///    form; we write every string canonically.
    UnicodeEscape,
    /// 2. Second 60 in `date-time` / `time`.
    LeapSecond,
    /// 3. IPvFuture hosts (`[v1.x]`) in URIs: RFC 3986 allows them.
    IpvFuture,
    /// 4. `-0` for an integer or number with `minimum: 0`.
    NegativeZero,
    /// 5. `$ref` siblings (and `if`/`then`/`else`) in draft-04..07 schemas: not applied by us.
    RefSiblings,
    /// 6. ECMA-262 `.` excludes the line terminators CR, U+2028, U+2029.
    EcmaDot,
    /// 7. RFC 5321 e-mail: quoted local parts and address literals.
    EmailQuoted,
    /// 8. Hostname labels of at most 63 characters.
    LongLabel,
    /// 9. ECMA-262 `\s`, `\d`, `\w` (ASCII digits and word characters; `\s` with U+FEFF and
    ///    without U+0085), where the reference uses Unicode classes.
    EcmaClasses,
    /// 10. Numbers compared by value: `0.40` and `1.0` for an `enum`/`const` 0.4 and 1, or in
    ///     a range such as `minimum: 1, maximum: 1`.
    NumberByValue,
    /// 11. Calendar dates: a day past the end of its month (February 29 of a common year).
    CalendarDate,
    /// 12. Hostname labels with `--` in positions 3-4 (RFC 5891 4.2.3.1: only A-labels).
    HyphenLabel,
    Unexplained,
}

impl Class {
    pub const ALL: [Class; 13] = [
        Class::UnicodeEscape,
        Class::LeapSecond,
        Class::IpvFuture,
        Class::NegativeZero,
        Class::RefSiblings,
        Class::EcmaDot,
        Class::EmailQuoted,
        Class::LongLabel,
        Class::EcmaClasses,
        Class::NumberByValue,
        Class::CalendarDate,
        Class::HyphenLabel,
        Class::Unexplained,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::UnicodeEscape => "1-unicode-escape",
            Class::LeapSecond => "2-leap-second",
            Class::IpvFuture => "3-ipvfuture",
            Class::NegativeZero => "4-negative-zero",
            Class::RefSiblings => "5-ref-siblings",
            Class::EcmaDot => "6-ecma-dot",
            Class::EmailQuoted => "7-email-quoted",
            Class::LongLabel => "8-long-label",
            Class::EcmaClasses => "9-ecma-classes",
            Class::NumberByValue => "10-number-by-value",
            Class::CalendarDate => "11-calendar-date",
            Class::HyphenLabel => "12-hyphen-label",
            Class::Unexplained => "unexplained",
        }
    }
}

/// Which engine allows the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Ours,
    Ref,
}

/// What the schema text mentions (guards for the format and pattern rules).
pub struct SchemaInfo {
    date_time: bool,
    uri: bool,
    email: bool,
    host: bool,
    /// A `pattern` (or `patternProperties` key) with an unescaped `.`.
    dot_pattern: bool,
    /// A pattern using `\s`, `\S`, `\d`, `\D`, `\w` or `\W`.
    class_pattern: bool,
    /// A number in an `enum` or a `const`, or a numeric bound.
    num_enum: bool,
}

impl SchemaInfo {
    pub fn new(schema: &serde_json::Value) -> SchemaInfo {
        let mut info = SchemaInfo {
            date_time: false,
            uri: false,
            email: false,
            host: false,
            dot_pattern: false,
            class_pattern: false,
            num_enum: false,
        };
        let mut pats: Vec<&str> = Vec::new();
        walk(schema, &mut |k, v| {
            if k == "format" {
                if let Some(f) = v.as_str() {
                    match f {
                        "date-time" | "time" | "date" => info.date_time = true,
                        "uri" | "uri-reference" | "iri" | "iri-reference" | "uri-template" => {
                            info.uri = true
                        }
                        "email" | "idn-email" => {
                            info.email = true;
                            info.host = true
                        }
                        "hostname" | "idn-hostname" => info.host = true,
                        _ => {}
                    }
                }
            } else if matches!(k, "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum")
                && v.is_number()
            {
                info.num_enum = true;
            } else if k == "enum" || k == "const" {
                let num = |x: &serde_json::Value| x.is_number();
                if num(v) || v.as_array().is_some_and(|a| a.iter().any(num)) {
                    info.num_enum = true;
                }
            } else if k == "pattern" {
                if let Some(p) = v.as_str() {
                    pats.push(p);
                }
            } else if k == "patternProperties" {
                if let Some(o) = v.as_object() {
                    pats.extend(o.keys().map(String::as_str));
                }
            }
        });
        for p in pats {
            let b = p.as_bytes();
            let mut i = 0;
            while i < b.len() {
                match b[i] {
                    b'\\' if i + 1 < b.len() => {
                        if b"sSdDwW".contains(&b[i + 1]) {
                            info.class_pattern = true;
                        }
                        i += 2;
                        continue;
                    }
                    b'.' => info.dot_pattern = true,
                    _ => {}
                }
                i += 1;
            }
        }
        if info.uri {
            info.host = true;
        }
        info
    }
}

fn walk<'a>(v: &'a serde_json::Value, f: &mut dyn FnMut(&'a str, &'a serde_json::Value)) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                f(k, x);
                walk(x, f);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// A JSON scanner over prefix + token

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Value,
    Str,
    Num,
    Lit,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Esc {
    No,
    Slash,
    /// After `\u` and this many hex digits.
    U(u8),
}

/// Scanner state; cloned at the step's start and run over each token's bytes.
#[derive(Clone)]
pub struct Scan {
    stack: Vec<u8>,
    expect_key: bool,
    mode: Mode,
    str_start: usize,
    esc: Esc,
    esc_start: usize,
    num_start: usize,
}

/// What a token's bytes fall in.
#[derive(Default, Debug)]
struct Features {
    /// `\u` escapes touched by the token: the code point, `None` while incomplete.
    u_escapes: Vec<Option<u32>>,
    /// Short escapes (`\r`, `\"`, ...) the token writes or completes.
    short_escapes: Vec<u8>,
    /// Strings the token writes into: raw content (through the token) and the offset in it
    /// where the token's bytes begin.
    strings: Vec<(Vec<u8>, usize)>,
    /// Number literals the token writes into (through the token).
    numbers: Vec<Vec<u8>>,
}

impl Scan {
    pub fn new() -> Scan {
        Scan {
            stack: Vec::new(),
            expect_key: false,
            mode: Mode::Value,
            str_start: 0,
            esc: Esc::No,
            esc_start: 0,
            num_start: 0,
        }
    }

    /// Feeds `s[from..]`; features are collected for bytes at index >= `p0`.
    fn run(&mut self, s: &[u8], from: usize, p0: usize, f: Option<&mut Features>) {
        let mut dummy = Features::default();
        let f = f.unwrap_or(&mut dummy);
        let mut i = from;
        while i < s.len() {
            let b = s[i];
            match self.mode {
                Mode::Str => {
                    match self.esc {
                        Esc::Slash => {
                            if b == b'u' {
                                self.esc = Esc::U(0);
                            } else {
                                if i >= p0 {
                                    f.short_escapes.push(b);
                                }
                                self.esc = Esc::No;
                            }
                        }
                        Esc::U(n) => {
                            if n + 1 == 4 {
                                self.esc = Esc::No;
                                if i >= p0 {
                                    let hex = String::from_utf8_lossy(&s[self.esc_start + 2..=i]);
                                    f.u_escapes.push(u32::from_str_radix(&hex, 16).ok());
                                }
                            } else {
                                self.esc = Esc::U(n + 1);
                            }
                        }
                        Esc::No => {
                            if b == b'\\' {
                                self.esc = Esc::Slash;
                                self.esc_start = i;
                            } else if b == b'"' {
                                if i >= p0 {
                                    self.note_string(s, i, p0, f);
                                }
                                self.mode = Mode::Value;
                            }
                        }
                    }
                    i += 1;
                }
                Mode::Num => {
                    if b.is_ascii_digit() || b"+-.eE".contains(&b) {
                        i += 1;
                    } else {
                        if i >= p0 {
                            f.numbers.push(s[self.num_start..i].to_vec());
                        }
                        self.mode = Mode::Value;
                    }
                }
                Mode::Lit => {
                    if b.is_ascii_alphabetic() {
                        i += 1;
                    } else {
                        self.mode = Mode::Value;
                    }
                }
                Mode::Value => {
                    match b {
                        b'"' => {
                            self.mode = Mode::Str;
                            self.str_start = i + 1;
                            self.esc = Esc::No;
                        }
                        b'{' => {
                            self.stack.push(b'{');
                            self.expect_key = true;
                        }
                        b'[' => self.stack.push(b'['),
                        b'}' | b']' => {
                            self.stack.pop();
                            self.expect_key = false;
                        }
                        b',' => self.expect_key = self.stack.last() == Some(&b'{'),
                        b':' => self.expect_key = false,
                        b'-' | b'0'..=b'9' => {
                            self.mode = Mode::Num;
                            self.num_start = i;
                        }
                        b't' | b'f' | b'n' => self.mode = Mode::Lit,
                        _ => {}
                    }
                    i += 1;
                }
            }
        }
        // At the end of the token: what is still open.
        match self.mode {
            Mode::Str => {
                if let Esc::U(_) = self.esc {
                    f.u_escapes.push(None);
                }
                if s.len() > p0 {
                    self.note_string(s, s.len(), p0, f);
                }
            }
            Mode::Num if s.len() > p0 => f.numbers.push(s[self.num_start..].to_vec()),
            _ => {}
        }
    }

    fn note_string(&self, s: &[u8], end: usize, p0: usize, f: &mut Features) {
        let start = self.str_start;
        let content = s[start.min(end)..end].to_vec();
        f.strings.push((content, p0.saturating_sub(start)));
    }
}

/// The scanner state after `prefix`.
pub fn scan_prefix(prefix: &[u8]) -> Scan {
    let mut sc = Scan::new();
    sc.run(prefix, 0, usize::MAX, None);
    sc
}

fn features(state: &Scan, prefix: &[u8], tok: &[u8], buf: &mut Vec<u8>) -> Features {
    // Only the open string or number of the prefix is referred to again: rebase on its start.
    let base = match state.mode {
        Mode::Str => state.str_start,
        Mode::Num => state.num_start,
        _ => prefix.len(),
    }
    .min(prefix.len());
    buf.clear();
    buf.extend_from_slice(&prefix[base..]);
    buf.extend_from_slice(tok);
    let mut sc = state.clone();
    sc.str_start = sc.str_start.saturating_sub(base);
    sc.esc_start = sc.esc_start.saturating_sub(base);
    sc.num_start = sc.num_start.saturating_sub(base);
    let mut f = Features::default();
    let p0 = prefix.len() - base;
    sc.run(buf, p0, p0, Some(&mut f));
    f
}

// ---------------------------------------------------------------------------------------------
// Rules

fn re(cell: &'static OnceLock<Regex>, src: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(src).expect("classifier regex"))
}

/// Canonical JSON spelling of a code point written as `\uXXXX`: only control characters
/// without a short escape.
fn u_escape_is_canonical(cp: u32) -> bool {
    cp < 0x20 && ![0x08, 0x09, 0x0a, 0x0c, 0x0d].contains(&cp)
}

fn ecma_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// A character where an ECMA class (`\s`, `\d`, `\w`) and the Unicode class of the same name
/// disagree.
fn ecma_unicode_class_differs(c: char) -> bool {
    static WS: OnceLock<Regex> = OnceLock::new();
    static W: OnceLock<Regex> = OnceLock::new();
    let mut b = [0u8; 4];
    let s = c.encode_utf8(&mut b);
    let uni_space = re(&WS, r"^\s$").is_match(s);
    let uni_word = re(&W, r"^\w$").is_match(s);
    uni_space != ecma_space(c) || (!c.is_ascii() && uni_word)
}

/// Whether a character of `content` ending after byte `off`, or a completion of its trailing
/// partial UTF-8 sequence, is one where ECMA and Unicode classes disagree.
fn touched_chars_differ(content: &[u8], off: usize) -> bool {
    let mut i = 0;
    while i < content.len() {
        match std::str::from_utf8(&content[i..]) {
            Ok(s) => {
                return s
                    .char_indices()
                    .any(|(j, c)| i + j + c.len_utf8() > off && ecma_unicode_class_differs(c));
            }
            Err(e) => {
                let good = e.valid_up_to();
                let s = std::str::from_utf8(&content[i..i + good]).unwrap_or("");
                if s.char_indices()
                    .any(|(j, c)| i + j + c.len_utf8() > off && ecma_unicode_class_differs(c))
                {
                    return true;
                }
                match e.error_len() {
                    Some(n) => i += good + n,
                    None => {
                        // A partial sequence at the end: try every completion.
                        let part = &content[i + good..];
                        return completions(part).any(ecma_unicode_class_differs);
                    }
                }
            }
        }
    }
    false
}

/// The characters whose UTF-8 encoding starts with `part`.
fn completions(part: &[u8]) -> impl Iterator<Item = char> + '_ {
    let (lo, hi) = match part.first() {
        Some(0xc2..=0xdf) => (0x80u32, 0x7ff),
        Some(0xe0..=0xef) => (0x800, 0xffff),
        Some(0xf0..=0xf4) => (0x10000, 0x10ffff),
        _ => (1, 0),
    };
    (lo..=hi).filter_map(char::from_u32).filter(move |c| {
        let mut b = [0u8; 4];
        c.encode_utf8(&mut b).as_bytes().starts_with(part)
    })
}

/// Whether `rx` matches in a string the token writes into, the match ending in the token's
/// bytes (not wholly in the text before it).
fn match_ends_in_token(f: &Features, rx: &Regex) -> bool {
    f.strings
        .iter()
        .any(|(c, off)| rx.find_iter(&String::from_utf8_lossy(c)).any(|m| m.end() > *off))
}

/// The class of one differing token; `tok` is its bytes, `side` the engine that allows it.
pub fn classify_token(
    info: &SchemaInfo,
    state: &Scan,
    prefix: &[u8],
    tok: &[u8],
    side: Side,
    buf: &mut Vec<u8>,
) -> Class {
    let f = features(state, prefix, tok, buf);
    static LEAP: OnceLock<Regex> = OnceLock::new();
    static IPVF: OnceLock<Regex> = OnceLock::new();
    static NEGZ: OnceLock<Regex> = OnceLock::new();
    static LABEL: OnceLock<Regex> = OnceLock::new();
    match side {
        Side::Ref => {
            // 1: a non-canonical \u escape (or the start of one).
            if f.u_escapes.iter().any(|cp| cp.is_none_or(|cp| !u_escape_is_canonical(cp))) {
                return Class::UnicodeEscape;
            }
            // 2: second 60.
            if info.date_time {
                let leap = re(&LEAP, r"(?:^|[^0-9])[0-9]{2}:[0-9]{2}:6");
                if match_ends_in_token(&f, leap) {
                    return Class::LeapSecond;
                }
            }
            // 11: a day past the end of its month.
            if info.date_time {
                static DATE: OnceLock<Regex> = OnceLock::new();
                let date = re(&DATE, r"([0-9]{4})-([0-9]{2})-([0-9]{1,2})");
                if f.strings.iter().any(|(c, off)| {
                    let c = String::from_utf8_lossy(c);
                    date.captures_iter(&c).any(|m| {
                        let n = |i: usize| m[i].parse::<u32>().unwrap_or(0);
                        let (y, mo, d) = (n(1), n(2), &m[3]);
                        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
                        let last = match mo {
                            2 if leap => 29,
                            2 => 28,
                            4 | 6 | 9 | 11 => 30,
                            _ => 31,
                        };
                        let past = if d.len() == 2 { n(3) > last } else { n(3) * 10 > last };
                        m.get(0).is_some_and(|w| w.end() > *off) && past
                    })
                }) {
                    return Class::CalendarDate;
                }
            }
            // 12: `--` in positions 3-4 of a hostname label.
            if info.host {
                static HYPH: OnceLock<Regex> = OnceLock::new();
                let hyph = re(&HYPH, r"(?:^|[.@/])[A-Za-z0-9-]{2}--");
                if match_ends_in_token(&f, hyph) {
                    return Class::HyphenLabel;
                }
            }
            // 6: an escaped CR or a raw U+2028/2029 under a pattern with `.`.
            if info.dot_pattern {
                let s = String::from_utf8_lossy(tok);
                if f.short_escapes.contains(&b'r') || s.contains(['\u{2028}', '\u{2029}']) {
                    return Class::EcmaDot;
                }
            }
            // 8: a hostname label past 63 characters (or at 63 ending in `-`, which only a
            // longer label can complete).
            if info.host {
                let label = re(&LABEL, r"[A-Za-z0-9-]{64,}|[A-Za-z0-9-]{62}-$");
                if match_ends_in_token(&f, label) {
                    return Class::LongLabel;
                }
            }
        }
        Side::Ours => {
            // 3: `[v` opening an IPvFuture host.
            if info.uri {
                let ipvf = re(&IPVF, r"//(?:[^/?#\[@]*@)?\[[vV]");
                if match_ends_in_token(&f, ipvf) {
                    return Class::IpvFuture;
                }
            }
            // 4: a number that is a prefix of -0 (-, -0, -0.0, -0e1).
            let negz = re(&NEGZ, r"^-(?:0(?:\.0*)?(?:[eE][+-]?[0-9]*)?)?$");
            if f.numbers.iter().any(|n| negz.is_match(&String::from_utf8_lossy(n))) {
                return Class::NegativeZero;
            }
            // 10: a fraction of zeros (or trailing zeros) after an `enum`/`const` number.
            static BYVAL: OnceLock<Regex> = OnceLock::new();
            let byval = re(&BYVAL, r"^-?(?:0|[1-9][0-9]*)(?:\.|\.[0-9]*0)$");
            if info.num_enum
                && f.numbers.iter().any(|n| byval.is_match(&String::from_utf8_lossy(n)))
            {
                return Class::NumberByValue;
            }
            // 7: a quoted local part (`\"...\"@`) or an address literal (`@[`).
            if info.email
                && f.strings.iter().any(|(c, off)| {
                    let quoted = c.starts_with(b"\\\"") || (c.as_slice() == b"\\" && *off == 0);
                    let literal =
                        c.windows(2).position(|w| w == b"@[").is_some_and(|p| p + 2 > *off);
                    quoted || literal
                })
            {
                return Class::EmailQuoted;
            }
        }
    }
    // 9: ECMA vs Unicode classes, either side: a character the token writes or completes, or
    // one its trailing partial UTF-8 sequence can become.
    if info.class_pattern && f.strings.iter().any(|(c, off)| touched_chars_differ(c, *off)) {
        return Class::EcmaClasses;
    }
    Class::Unexplained
}
