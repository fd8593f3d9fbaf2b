//! The llama.cpp GBNF front end.
//!
//! `name ::= ...` rules (a rule runs until the next `name ::=`), `root` is the start;
//! `"literals"` with `\x \u \U \n \r \t \\ \" \[ \]` escapes, `[...]` and `[^...]` classes,
//! `.`, `( )`, `|`, `* + ?`, `{m}` `{m,}` `{m,n}`, `#` comments, token references
//! `<[id]>` / `<|name|>` (special tokens). Negated token references `!<...>` are an error
//! (they range over regular tokens, which this engine scans byte by byte).
//!
//! Rules whose body is purely terminal (only literals, classes and other such rules, no
//! recursion) become one lexeme each, so GBNF grammars get the lexer/parser split, when that
//! is exact: a lexeme matches greedily (longest match), while llama.cpp's parser may end a
//! rule early and give the next bytes to what follows. So a rule becomes a lexeme only if no
//! byte that may appear in it can start what may follow it (byte-level FIRST/FOLLOW sets,
//! over-approximated), or if its strings never extend one another (a fixed literal).
//! Other terminal-only rules stay rules over one-character lexemes: slower, never wrong.

use hashbrown::HashMap;

use lexer::RegexSpec;

use crate::ir::{Expr, Grammar, GrammarSet, Rule, SpecialToken};
use crate::{Error, ErrorKind};

/// Nesting limit of parentheses.
pub const MAX_NESTING: usize = 50;

#[derive(Clone, Debug)]
enum G {
    Lit(String),
    Class(String),
    Any,
    Ref(String, usize),
    Token(SpecialToken),
    Seq(Vec<G>),
    Alt(Vec<G>),
    Repeat(Box<G>, u32, Option<u32>),
}

struct P<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
}

/// Parses GBNF source.
pub fn parse(src: &str) -> Result<GrammarSet, Error> {
    let mut p = P { src, b: src.as_bytes(), i: 0 };
    let mut rules: Vec<(String, usize, G)> = Vec::new();
    loop {
        p.ws(true);
        if p.i >= p.b.len() {
            break;
        }
        let at = p.i;
        let name = p.name().ok_or_else(|| p.err(ErrorKind::Syntax, "expected a rule name", at))?;
        p.ws(false);
        if !p.src[p.i..].starts_with("::=") {
            return Err(p.err(ErrorKind::Syntax, "expected ::=", p.i));
        }
        p.i += 3;
        let body = p.alternatives()?;
        if rules.iter().any(|r| r.0 == name) {
            return Err(p.err(ErrorKind::Name, &format!("rule {name} is defined twice"), at));
        }
        rules.push((name, at, body));
    }
    if !rules.iter().any(|r| r.0 == "root") {
        return Err(Error::new(ErrorKind::Name, "the grammar has no root rule (root ::= ...)"));
    }
    let names: HashMap<&str, usize> =
        rules.iter().enumerate().map(|(i, r)| (r.0.as_str(), i)).collect();
    for (_, _, body) in &rules {
        let mut stack = vec![body];
        while let Some(g) = stack.pop() {
            match g {
                G::Ref(n, at) if !names.contains_key(n.as_str()) => {
                    return Err(p.err(ErrorKind::Name, &format!("unknown rule {n}"), *at))
                }
                G::Seq(xs) | G::Alt(xs) => stack.extend(xs),
                G::Repeat(x, ..) => stack.push(x),
                _ => {}
            }
        }
    }
    // Terminal-only rules: no token refs, only refs to terminal-only rules, no cycles.
    let mut terminal = vec![None::<bool>; rules.len()];
    for i in 0..rules.len() {
        is_terminal(i, &rules, &names, &mut terminal);
    }
    // A lexeme matches greedily; keep a terminal-only rule as rules unless that is exact.
    let safe = greedy_safe(&rules, &names, &terminal);
    for (i, t) in terminal.iter_mut().enumerate() {
        if *t == Some(true) && !safe[i] {
            *t = Some(false);
        }
    }
    let mut out = Vec::new();
    for (i, (name, _, body)) in rules.iter().enumerate() {
        let body = if terminal[i] == Some(true) && name != "root" {
            Expr::Lexeme(to_regex(body, &rules, &names, 0)?)
        } else {
            to_expr(body, 0)?
        };
        out.push(Rule { name: name.clone(), body, attrs: Default::default(), param: false });
    }
    Ok(GrammarSet {
        grammars: vec![Grammar {
            name: None,
            start: "root".into(),
            rules: out,
            terminals: vec![],
            ignore: vec![],
            options: Default::default(),
        }],
    })
}

fn is_terminal(
    start: usize,
    rules: &[(String, usize, G)],
    names: &HashMap<&str, usize>,
    memo: &mut [Option<bool>],
) -> bool {
    // Explicit DFS; a rule on the current path (recursion) is not terminal.
    #[derive(PartialEq)]
    enum St {
        Enter,
        Exit,
    }
    let mut on_path = vec![false; rules.len()];
    let mut stack = vec![(start, St::Enter)];
    while let Some((r, st)) = stack.pop() {
        if memo[r].is_some() {
            continue;
        }
        let mut refs = Vec::new();
        let mut has_token = false;
        let mut work = vec![&rules[r].2];
        while let Some(g) = work.pop() {
            match g {
                G::Ref(n, _) => refs.push(names[n.as_str()]),
                G::Token(_) => has_token = true,
                G::Seq(xs) | G::Alt(xs) => work.extend(xs),
                G::Repeat(x, ..) => work.push(x),
                _ => {}
            }
        }
        if st == St::Exit {
            on_path[r] = false;
            memo[r] = Some(!has_token && refs.iter().all(|&x| memo[x] == Some(true)));
            continue;
        }
        if has_token || refs.iter().any(|&x| on_path[x] || memo[x] == Some(false)) {
            memo[r] = Some(false);
            continue;
        }
        on_path[r] = true;
        stack.push((r, St::Exit));
        for x in refs {
            if memo[x].is_none() {
                stack.push((x, St::Enter));
            }
        }
    }
    memo[start] == Some(true)
}

fn to_regex(
    g: &G,
    rules: &[(String, usize, G)],
    names: &HashMap<&str, usize>,
    depth: usize,
) -> Result<RegexSpec, Error> {
    if depth > 4 * MAX_NESTING {
        return Err(Error::new(ErrorKind::Limit, "terminal rules nested too deeply"));
    }
    let rec = |x: &G| to_regex(x, rules, names, depth + 1);
    Ok(match g {
        G::Lit(s) => RegexSpec::Literal(s.clone()),
        G::Class(c) => RegexSpec::Regex(c.clone()),
        G::Any => RegexSpec::Regex("(?s:.)".into()),
        G::Ref(n, _) => rec(&rules[names[n.as_str()]].2)?,
        G::Seq(xs) => RegexSpec::Concat(xs.iter().map(rec).collect::<Result<_, _>>()?),
        G::Alt(xs) => RegexSpec::Or(xs.iter().map(rec).collect::<Result<_, _>>()?),
        G::Repeat(x, min, max) => {
            RegexSpec::Repeat { expr: Box::new(rec(x)?), min: *min, max: *max }
        }
        G::Token(_) => {
            return Err(Error::new(ErrorKind::Value, "token reference inside a terminal"))
        }
    })
}

fn to_expr(g: &G, depth: usize) -> Result<Expr, Error> {
    if depth > 4 * MAX_NESTING {
        return Err(Error::new(ErrorKind::Limit, "rules nested too deeply"));
    }
    let rec = |x: &G| to_expr(x, depth + 1);
    Ok(match g {
        G::Lit(s) => Expr::Lexeme(RegexSpec::Literal(s.clone())),
        G::Class(c) => Expr::Lexeme(RegexSpec::Regex(c.clone())),
        G::Any => Expr::Lexeme(RegexSpec::Regex("(?s:.)".into())),
        G::Ref(n, _) => Expr::Rule(n.clone()),
        G::Token(t) => Expr::Special(t.clone()),
        G::Seq(xs) => Expr::Seq(xs.iter().map(rec).collect::<Result<_, _>>()?),
        G::Alt(xs) => Expr::Alt(xs.iter().map(rec).collect::<Result<_, _>>()?),
        G::Repeat(x, min, max) => Expr::Repeat { expr: Box::new(rec(x)?), min: *min, max: *max },
    })
}

impl P<'_> {
    fn err(&self, kind: ErrorKind, msg: &str, at: usize) -> Error {
        Error::at(kind, msg, self.src, at)
    }

    /// Skips spaces and comments; newlines too if `nl`, or if the line continues (the next
    /// non-blank text is not a new `name ::=`).
    fn ws(&mut self, nl: bool) {
        loop {
            match self.b.get(self.i) {
                Some(b' ' | b'\t' | b'\r') => self.i += 1,
                Some(b'#') => {
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                Some(b'\n') if nl => self.i += 1,
                _ => return,
            }
        }
    }

    /// Whitespace inside a rule body: newlines continue the rule unless a new rule starts.
    fn body_ws(&mut self) {
        loop {
            self.ws(false);
            if self.b.get(self.i) != Some(&b'\n') {
                return;
            }
            let save = self.i;
            self.ws(true);
            if self.at_rule_start() || self.i >= self.b.len() {
                self.i = save;
                return;
            }
        }
    }

    fn at_rule_start(&self) -> bool {
        let mut j = self.i;
        while j < self.b.len()
            && (self.b[j].is_ascii_alphanumeric() || self.b[j] == b'-' || self.b[j] == b'_')
        {
            j += 1;
        }
        if j == self.i {
            return false;
        }
        while j < self.b.len() && (self.b[j] == b' ' || self.b[j] == b'\t') {
            j += 1;
        }
        self.src[j..].starts_with("::=")
    }

    fn name(&mut self) -> Option<String> {
        let s = self.i;
        while self.i < self.b.len()
            && (self.b[self.i].is_ascii_alphanumeric()
                || self.b[self.i] == b'-'
                || self.b[self.i] == b'_')
        {
            self.i += 1;
        }
        (self.i > s).then(|| self.src[s..self.i].to_string())
    }

    /// `alternatives := sequence ('|' sequence)*`, `sequence := (atom postfix*)*`, with `(`
    /// groups kept on an explicit stack (no recursion over the source), at most
    /// [`MAX_NESTING`] deep.
    fn alternatives(&mut self) -> Result<G, Error> {
        fn one_of(mut xs: Vec<G>, f: fn(Vec<G>) -> G) -> G {
            if xs.len() == 1 {
                xs.pop().expect("one")
            } else {
                f(xs)
            }
        }
        // Per open group: finished alternatives, items of the current sequence.
        let mut stack: Vec<(Vec<G>, Vec<G>)> = vec![(Vec::new(), Vec::new())];
        loop {
            self.body_ws();
            let at_end = match self.b.get(self.i) {
                None | Some(b'\n') => true,
                Some(b')') => stack.len() == 1,
                _ => self.at_rule_start(),
            };
            if at_end && stack.len() > 1 {
                return Err(self.err(ErrorKind::Syntax, "expected )", self.i));
            }
            let depth = stack.len();
            let (alts, items) = stack.last_mut().expect("the outermost group");
            if at_end {
                alts.push(one_of(std::mem::take(items), G::Seq));
                return Ok(one_of(std::mem::take(alts), G::Alt));
            }
            match self.b[self.i] {
                b'|' => {
                    self.i += 1;
                    alts.push(one_of(std::mem::take(items), G::Seq));
                }
                b'(' => {
                    if depth > MAX_NESTING {
                        return Err(self.err(
                            ErrorKind::Limit,
                            &format!("nesting deeper than {MAX_NESTING}"),
                            self.i,
                        ));
                    }
                    self.i += 1;
                    stack.push((Vec::new(), Vec::new()));
                }
                b')' => {
                    self.i += 1;
                    let (mut alts, items) = stack.pop().expect("an open group");
                    alts.push(one_of(items, G::Seq));
                    let g = self.postfix(one_of(alts, G::Alt))?;
                    stack.last_mut().expect("the enclosing group").1.push(g);
                }
                _ => {
                    let atom = self.atom()?;
                    let g = self.postfix(atom)?;
                    stack.last_mut().expect("a group").1.push(g);
                }
            }
        }
    }

    fn postfix(&mut self, mut g: G) -> Result<G, Error> {
        let mut count = 0;
        loop {
            if count > crate::postfix::MAX_POSTFIX {
                return Err(self.err(
                    ErrorKind::Limit,
                    &crate::postfix::too_deep_message(),
                    self.i,
                ));
            }
            match self.b.get(self.i) {
                Some(b'*') => g = repeat(g, 0, None, &mut count),
                Some(b'+') => g = repeat(g, 1, None, &mut count),
                Some(b'?') => g = repeat(g, 0, Some(1), &mut count),
                Some(b'{') => {
                    let at = self.i;
                    let end = self.src[at..]
                        .find('}')
                        .ok_or_else(|| self.err(ErrorKind::Syntax, "unterminated {", at))?
                        + at;
                    let inner = &self.src[at + 1..end];
                    let num = |s: &str| {
                        s.trim().parse::<u32>().map_err(|_| {
                            self.err(ErrorKind::Value, &format!("bad repeat {{{inner}}}"), at)
                        })
                    };
                    let (min, max) = match inner.split_once(',') {
                        None => {
                            let n = num(inner)?;
                            (n, Some(n))
                        }
                        Some((a, b)) if b.trim().is_empty() => (num(a)?, None),
                        Some((a, b)) => {
                            (if a.trim().is_empty() { 0 } else { num(a)? }, Some(num(b)?))
                        }
                    };
                    if max.is_some_and(|m| m < min) {
                        return Err(self.err(
                            ErrorKind::Value,
                            &format!("bad repeat {{{inner}}}: max < min"),
                            at,
                        ));
                    }
                    g = repeat(g, min, max, &mut count);
                    self.i = end;
                }
                _ => return Ok(g),
            }
            self.i += 1;
        }
    }

    fn atom(&mut self) -> Result<G, Error> {
        let at = self.i;
        match self.b[self.i] {
            b'"' => {
                self.i += 1;
                let mut s = String::new();
                loop {
                    match self.b.get(self.i) {
                        None | Some(b'\n') => {
                            return Err(self.err(ErrorKind::Syntax, "unterminated string", at))
                        }
                        Some(b'"') => {
                            self.i += 1;
                            return Ok(G::Lit(s));
                        }
                        Some(b'\\') => s.push(self.escape()?),
                        Some(_) => {
                            let c = self.src[self.i..].chars().next().expect("in bounds");
                            s.push(c);
                            self.i += c.len_utf8();
                        }
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut class = String::from("[");
                if self.b.get(self.i) == Some(&b'^') {
                    class.push('^');
                    self.i += 1;
                }
                let mut n = 0;
                loop {
                    match self.b.get(self.i) {
                        None | Some(b'\n') => {
                            return Err(self.err(
                                ErrorKind::Syntax,
                                "unterminated character class",
                                at,
                            ))
                        }
                        Some(b']') if n > 0 || !class.ends_with('[') && !class.ends_with('^') => {
                            self.i += 1;
                            break;
                        }
                        Some(b'-') => {
                            class.push('-');
                            self.i += 1;
                        }
                        Some(b'\\') => {
                            let c = self.escape()?;
                            class.push_str(&regex_syntax::escape(&c.to_string()));
                        }
                        Some(_) => {
                            let c = self.src[self.i..].chars().next().expect("in bounds");
                            class.push_str(&regex_syntax::escape(&c.to_string()));
                            self.i += c.len_utf8();
                        }
                    }
                    n += 1;
                }
                class.push(']');
                if regex_syntax::ParserBuilder::new().build().parse(&class).is_err() {
                    return Err(self.err(
                        ErrorKind::Value,
                        &format!("bad character class {class}"),
                        at,
                    ));
                }
                Ok(G::Class(class))
            }
            b'.' => {
                self.i += 1;
                Ok(G::Any)
            }
            b'!' => {
                if self.b.get(at + 1) != Some(&b'<') {
                    return Err(self.err(ErrorKind::Syntax, "expected <...> after !", at));
                }
                self.i += 1;
                match self.atom()? {
                    G::Token(t) => Ok(G::Token(SpecialToken::AnyTokenExcept(Box::new(t)))),
                    _ => Err(self.err(ErrorKind::Syntax, "expected <...> after !", at)),
                }
            }
            b'<' => {
                let end = self.src[at..]
                    .find('>')
                    .ok_or_else(|| self.err(ErrorKind::Syntax, "unterminated <...>", at))?
                    + at;
                let body = &self.src[at + 1..end];
                self.i = end + 1;
                if let Some(ids) = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
                    let id: u32 = ids
                        .trim()
                        .parse()
                        .map_err(|_| self.err(ErrorKind::Value, "bad token id", at))?;
                    Ok(G::Token(SpecialToken::Ids(vec![(id, id)])))
                } else {
                    Ok(G::Token(SpecialToken::Name(format!("<{body}>"))))
                }
            }
            c if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' => {
                let name = self.name().expect("starts with a name char");
                Ok(G::Ref(name, at))
            }
            _ => {
                let c = self.src[self.i..].chars().next().expect("in bounds");
                Err(self.err(ErrorKind::Syntax, &format!("unexpected character {c:?}"), at))
            }
        }
    }

    /// After a backslash: `\x.. \u.... \U........ \n \r \t \\ \" \[ \] \-`.
    fn escape(&mut self) -> Result<char, Error> {
        let at = self.i;
        self.i += 1;
        let c =
            *self.b.get(self.i).ok_or_else(|| self.err(ErrorKind::Syntax, "dangling \\", at))?;
        self.i += 1;
        let hex = |p: &mut Self, n: usize| -> Result<char, Error> {
            let h = p
                .src
                .get(p.i..p.i + n)
                .ok_or_else(|| p.err(ErrorKind::Syntax, "short escape", at))?;
            let v = u32::from_str_radix(h, 16)
                .map_err(|_| p.err(ErrorKind::Value, "bad hex escape", at))?;
            p.i += n;
            char::from_u32(v)
                .ok_or_else(|| p.err(ErrorKind::Value, "escape is not a Unicode scalar value", at))
        };
        Ok(match c {
            b'x' => hex(self, 2)?,
            b'u' => hex(self, 4)?,
            b'U' => hex(self, 8)?,
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'\\' | b'"' | b'[' | b']' | b'-' | b'^' => c as char,
            _ => {
                return Err(self.err(
                    ErrorKind::Syntax,
                    &format!("unknown escape \\{}", c as char),
                    at,
                ))
            }
        })
    }
}

/// A set of bytes.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Bytes([u64; 4]);

impl Bytes {
    const ALL: Bytes = Bytes([u64::MAX; 4]);
    fn add(&mut self, b: u8) {
        self.0[(b >> 6) as usize] |= 1 << (b & 63);
    }
    fn union(&mut self, o: &Bytes) -> bool {
        let before = *self;
        for i in 0..4 {
            self.0[i] |= o.0[i];
        }
        *self != before
    }
    fn intersects(&self, o: &Bytes) -> bool {
        (0..4).any(|i| self.0[i] & o.0[i] != 0)
    }
}

/// Every byte a character class may produce (non-ASCII: all bytes >= 0x80).
fn class_bytes(class: &str) -> Bytes {
    let mut out = Bytes::default();
    match regex_syntax::ParserBuilder::new().build().parse(class).map(|h| h.into_kind()) {
        Ok(regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c))) => {
            for r in c.ranges() {
                let (lo, hi) = (r.start() as u32, r.end() as u32);
                for b in lo.min(0x80)..=hi.min(0x7f) {
                    out.add(b as u8);
                }
                if hi >= 0x80 {
                    for b in 0x80..=0xffu32 {
                        out.add(b as u8);
                    }
                }
            }
            out
        }
        _ => Bytes::ALL,
    }
}

/// For each rule: whether making it a greedy lexeme is exact.
fn greedy_safe(
    rules: &[(String, usize, G)],
    names: &HashMap<&str, usize>,
    terminal: &[Option<bool>],
) -> Vec<bool> {
    let n = rules.len();
    let mut nullable = vec![false; n];
    let mut first = vec![Bytes::default(); n];
    // FIRST and nullable of every rule, to a fixpoint.
    loop {
        let mut changed = false;
        for i in 0..n {
            let (f, nl) = first_of(&rules[i].2, names, &first, &nullable);
            changed |= first[i].union(&f);
            if nl && !nullable[i] {
                nullable[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // FOLLOW of every rule; root may be followed by the end (no byte).
    let mut follow = vec![Bytes::default(); n];
    loop {
        let mut changed = false;
        for i in 0..n {
            let f = follow[i];
            let mut work = vec![(&rules[i].2, f)];
            while let Some((g, after)) = work.pop() {
                match g {
                    G::Ref(name, _) => changed |= follow[names[name.as_str()]].union(&after),
                    G::Alt(xs) => work.extend(xs.iter().map(|x| (x, after))),
                    G::Seq(xs) => {
                        let mut cur = after;
                        for x in xs.iter().rev() {
                            work.push((x, cur));
                            let (fx, nx) = first_of(x, names, &first, &nullable);
                            if nx {
                                cur.union(&fx);
                            } else {
                                cur = fx;
                            }
                        }
                    }
                    G::Repeat(x, _, max) => {
                        let mut a = after;
                        if max.is_none_or(|m| m > 1) {
                            a.union(&first_of(x, names, &first, &nullable).0);
                        }
                        work.push((x, a));
                    }
                    _ => {}
                }
            }
        }
        if !changed {
            break;
        }
    }
    (0..n)
        .map(|i| {
            terminal[i] == Some(true)
                && (!extensible(&rules[i].2, rules, names, 0)
                    || !bytes_in(&rules[i].2, rules, names, 0).intersects(&follow[i]))
        })
        .collect()
}

fn first_of(
    g: &G,
    names: &HashMap<&str, usize>,
    first: &[Bytes],
    nullable: &[bool],
) -> (Bytes, bool) {
    match g {
        G::Lit(s) => {
            let mut b = Bytes::default();
            match s.as_bytes().first() {
                Some(&c) => {
                    b.add(c);
                    (b, false)
                }
                None => (b, true),
            }
        }
        G::Class(c) => (class_bytes(c), false),
        G::Any => (Bytes::ALL, false),
        G::Token(_) => (Bytes::default(), false),
        G::Ref(n, _) => {
            let i = names[n.as_str()];
            (first[i], nullable[i])
        }
        G::Seq(xs) => {
            let mut out = Bytes::default();
            for x in xs {
                let (f, nl) = first_of(x, names, first, nullable);
                out.union(&f);
                if !nl {
                    return (out, false);
                }
            }
            (out, true)
        }
        G::Alt(xs) => {
            let mut out = Bytes::default();
            let mut any_null = false;
            for x in xs {
                let (f, nl) = first_of(x, names, first, nullable);
                out.union(&f);
                any_null |= nl;
            }
            (out, any_null)
        }
        G::Repeat(x, min, _) => {
            let (f, nl) = first_of(x, names, first, nullable);
            (f, nl || *min == 0)
        }
    }
}

/// Whether some string of `g` may be a proper prefix of another (over-approximated: any
/// repeat with a range, alternation, or class-free literal sequences are the only `false`).
fn extensible(
    g: &G,
    rules: &[(String, usize, G)],
    names: &HashMap<&str, usize>,
    depth: usize,
) -> bool {
    if depth > 4 * MAX_NESTING {
        return true;
    }
    match g {
        G::Lit(_) | G::Class(_) | G::Any | G::Token(_) => false,
        G::Ref(n, _) => extensible(&rules[names[n.as_str()]].2, rules, names, depth + 1),
        G::Seq(xs) => xs.iter().any(|x| extensible(x, rules, names, depth + 1)),
        G::Alt(_) => true,
        G::Repeat(x, min, max) => Some(*min) != *max || extensible(x, rules, names, depth + 1),
    }
}

/// Every byte that may appear in a string of `g` (over-approximated).
fn bytes_in(
    g: &G,
    rules: &[(String, usize, G)],
    names: &HashMap<&str, usize>,
    depth: usize,
) -> Bytes {
    if depth > 4 * MAX_NESTING {
        return Bytes::ALL;
    }
    let mut out = Bytes::default();
    match g {
        G::Lit(s) => s.bytes().for_each(|b| out.add(b)),
        G::Class(c) => out = class_bytes(c),
        G::Any => out = Bytes::ALL,
        G::Token(_) => {}
        G::Ref(n, _) => out = bytes_in(&rules[names[n.as_str()]].2, rules, names, depth + 1),
        G::Seq(xs) | G::Alt(xs) => {
            for x in xs {
                out.union(&bytes_in(x, rules, names, depth + 1));
            }
        }
        G::Repeat(x, ..) => out = bytes_in(x, rules, names, depth + 1),
    }
    out
}

/// `g{min,max}`, merged into `g` when both are `?`, `*` or `+` ([`crate::postfix`]).
fn repeat(g: G, min: u32, max: Option<u32>, nested: &mut usize) -> G {
    match g {
        G::Repeat(x, a, b) => match crate::postfix::merge((a, b), (min, max)) {
            Some((lo, hi)) => G::Repeat(x, lo, hi),
            None => {
                *nested += 1;
                G::Repeat(Box::new(G::Repeat(x, a, b)), min, max)
            }
        },
        g => G::Repeat(Box::new(g), min, max),
    }
}
