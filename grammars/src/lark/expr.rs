//! The parser, expression level: rule and terminal bodies (alternatives, `&`, `~`,
//! groups, postfix repeats, `%if`) parsed with an explicit stack of open groups, no
//! recursion over the source, and their leaves: literals, regexes, names, special tokens,
//! `%json`, `%regex` and `%lark` blocks.

use lexer::RegexSpec;

use super::ast::{LExpr, MAX_NESTING};
use super::lex::{Spanned, Tok};
use super::parse::{parse_grammar, P};
use super::substring::substring_regex;
use crate::ir::SpecialToken;
use crate::param::{ParamCond, ParamExpr};
use crate::{Error, ErrorKind};

/// An open group of the expression parser: `( )`, `[ ]` or the whole rule body.
struct Group {
    close: Option<&'static str>,
    /// Finished alternatives, `&` operands of the current one, items of the current expansion.
    alts: Vec<LExpr>,
    ands: Vec<LExpr>,
    items: Vec<LExpr>,
    /// `~`s before the next item.
    nots: u32,
}

impl Group {
    fn new(close: Option<&'static str>) -> Self {
        Group { close, alts: Vec::new(), ands: Vec::new(), items: Vec::new(), nots: 0 }
    }
}

/// `e{min,max}`, merged into `e` when both are `?`, `*` or `+` ([`crate::postfix`]).
fn repeat(e: LExpr, min: u32, max: Option<u32>, nested: &mut usize) -> LExpr {
    match e {
        LExpr::Repeat(x, a, b) => match crate::postfix::merge((a, b), (min, max)) {
            Some((lo, hi)) => LExpr::Repeat(x, lo, hi),
            None => {
                *nested += 1;
                LExpr::Repeat(Box::new(LExpr::Repeat(x, a, b)), min, max)
            }
        },
        e => LExpr::Repeat(Box::new(e), min, max),
    }
}

fn seq_of(mut items: Vec<LExpr>) -> LExpr {
    match items.len() {
        0 => LExpr::Empty,
        1 => items.pop().expect("one"),
        _ => LExpr::Seq(items),
    }
}

impl P<'_> {
    /// `expansions := alias ('|' alias)*`, `alias := expansion ('&' expansion)* ['-> name]`,
    /// `expansion := unary*`, `unary := '~'* atom postfix*`, `atom := '(' expansions ')' |
    /// '[' expansions ']' | leaf`, parsed with an explicit stack of open groups (no
    /// recursion over the source); groups nest at most [`MAX_NESTING`] deep.
    pub(super) fn expansions(&mut self) -> Result<LExpr, Error> {
        let mut stack = vec![Group::new(None)];
        loop {
            if self.bracket > 0 {
                self.skip_newlines();
            }
            let top = stack.last_mut().expect("the outermost group");
            let at = self.here();
            match self.peek().map(|t| &t.tok) {
                Some(Tok::Punct("~")) => {
                    // `~~x` is an error as in LLGuidance; `~(~x)` is fine.
                    if top.nots > 0 {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            "expected a value after ~ (write ~(~x) for a double negation)",
                            at,
                        ));
                    }
                    self.pos += 1;
                    top.nots += 1;
                    if top.nots as usize > MAX_NESTING {
                        return Err(self.nesting_error(at));
                    }
                }
                Some(Tok::Punct(open @ ("(" | "["))) => {
                    let close = if *open == "(" { ")" } else { "]" };
                    self.pos += 1;
                    self.bracket += 1;
                    if stack.len() > MAX_NESTING {
                        return Err(self.nesting_error(at));
                    }
                    stack.push(Group::new(Some(close)));
                }
                None
                | Some(Tok::Newline | Tok::Cond(_) | Tok::Punct("|" | ")" | "]" | "->" | "&")) => {
                    if top.nots > 0 {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            "expected an expression after ~",
                            at,
                        ));
                    }
                    // The end of an expansion: of an alias, of the alternatives, of the group.
                    top.ands.push(seq_of(std::mem::take(&mut top.items)));
                    if matches!(self.peek(), Some(Spanned { tok: Tok::Punct("&"), .. })) {
                        self.pos += 1;
                        continue;
                    }
                    let mut ands = std::mem::take(&mut top.ands);
                    let mut e =
                        if ands.len() == 1 { ands.pop().expect("one") } else { LExpr::And(ands) };
                    if let Some(Spanned { tok: Tok::Cond(c), at }) = self.peek().cloned() {
                        self.pos += 1;
                        let cond = ParamCond::parse(&c).map_err(|m| {
                            self.err(ErrorKind::Value, &format!("%if {c}: {m}"), at)
                        })?;
                        e = LExpr::If(cond, Box::new(e));
                    }
                    top.alts.push(e);
                    if self.eat("->") {
                        // A tree alias does not change the language.
                        match self.peek() {
                            Some(Spanned { tok: Tok::Rule(_) | Tok::Term(_), .. }) => self.pos += 1,
                            _ => {
                                return Err(self.err(
                                    ErrorKind::Syntax,
                                    "expected a name after ->",
                                    self.here(),
                                ))
                            }
                        }
                    }
                    if self.eat("|") {
                        continue;
                    }
                    let g = stack.pop().expect("the group");
                    let mut alts = g.alts;
                    let e =
                        if alts.len() == 1 { alts.pop().expect("one") } else { LExpr::Alt(alts) };
                    let Some(close) = g.close else { return Ok(e) };
                    self.expect(close)?;
                    self.bracket -= 1;
                    let e = if close == "]" { LExpr::Repeat(Box::new(e), 0, Some(1)) } else { e };
                    self.push_unary(stack.last_mut().expect("the enclosing group"), e)?;
                }
                Some(_) => {
                    let e = self.atom()?;
                    self.push_unary(stack.last_mut().expect("a group"), e)?;
                }
            }
        }
    }

    fn nesting_error(&self, at: usize) -> Error {
        self.err(ErrorKind::Limit, &format!("nesting deeper than {MAX_NESTING}"), at)
    }

    /// Applies the postfix operators after an atom and the pending `~`s before it, and adds
    /// the result to the group's current expansion.
    fn push_unary(&mut self, g: &mut Group, mut e: LExpr) -> Result<(), Error> {
        let mut count = 0;
        let mut count_ops = 0;
        loop {
            let tok = self.peek().map(|t| t.tok.clone());
            if count > crate::postfix::MAX_POSTFIX {
                return Err(self.err(
                    ErrorKind::Limit,
                    &crate::postfix::too_deep_message(),
                    self.here(),
                ));
            }
            if count_ops > 0 && matches!(tok, Some(Tok::Punct("?" | "*" | "+" | "{" | "~"))) {
                return Err(self.err(
                    ErrorKind::Syntax,
                    "one repeat operator per item (as LLGuidance); use parentheses: (x+)?",
                    self.here(),
                ));
            }
            count_ops += 1;
            match tok {
                Some(Tok::Punct("?")) => {
                    self.pos += 1;
                    e = repeat(e, 0, Some(1), &mut count);
                }
                Some(Tok::Punct("*")) => {
                    self.pos += 1;
                    e = repeat(e, 0, None, &mut count);
                }
                Some(Tok::Punct("+")) => {
                    self.pos += 1;
                    e = repeat(e, 1, None, &mut count);
                }
                Some(Tok::Punct("{")) => {
                    let at = self.here();
                    self.pos += 1;
                    let (min, max) = self.range(at)?;
                    e = repeat(e, min, max, &mut count);
                }
                Some(Tok::Punct("~")) => {
                    // Lark's `x ~ n` and `x ~ m..n` (as `x{n}`, `x{m,n}`).
                    let at = self.here();
                    self.pos += 1;
                    let bad = |p: &Self| {
                        p.err(ErrorKind::Syntax, "expected a count after ~ (x ~ n, x ~ m..n)", at)
                    };
                    let Some(min) = self.number()? else { return Err(bad(self)) };
                    let max = if self.eat("..") {
                        let Some(m) = self.number()? else { return Err(bad(self)) };
                        m
                    } else {
                        min
                    };
                    if max < min {
                        return Err(self.err(
                            ErrorKind::Value,
                            &format!("bad range ~ {min}..{max}"),
                            at,
                        ));
                    }
                    e = repeat(e, min, Some(max), &mut count);
                }
                _ => break,
            }
        }
        for _ in 0..std::mem::take(&mut g.nots) {
            e = LExpr::Not(Box::new(e));
        }
        g.items.push(e);
        Ok(())
    }

    fn number(&mut self) -> Result<Option<u32>, Error> {
        match self.peek().cloned() {
            Some(Spanned { tok: Tok::Num(n), at }) => {
                self.pos += 1;
                n.parse::<u32>()
                    .map(Some)
                    .map_err(|_| self.err(ErrorKind::Value, &format!("bad count {n}"), at))
            }
            _ => Ok(None),
        }
    }

    /// After `{`: `n}`, `m,n}`, `m,}`, `,n}`.
    fn range(&mut self, at: usize) -> Result<(u32, Option<u32>), Error> {
        let a = self.number()?;
        let r = if self.eat(",") {
            let b = self.number()?;
            (a.unwrap_or(0), b)
        } else {
            let n =
                a.ok_or_else(|| self.err(ErrorKind::Syntax, "expected a count in {...}", at))?;
            (n, Some(n))
        };
        self.expect("}")?;
        if let (min, Some(max)) = r {
            if max == 0 {
                return Err(self.err(
                    ErrorKind::Value,
                    "the end of a range {m,n} cannot be 0 (as LLGuidance)",
                    at,
                ));
            }
            if max < min {
                return Err(self.err(
                    ErrorKind::Value,
                    &format!("bad range {{{min},{max}}}: max < min"),
                    at,
                ));
            }
        }
        Ok(r)
    }

    /// A leaf: a literal, regex, name, special token, or `%json`/`%regex`/`%lark` block.
    fn atom(&mut self) -> Result<LExpr, Error> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.err(ErrorKind::Syntax, "unexpected end of grammar", self.src.len()));
        };
        self.pos += 1;
        let is_term = matches!(t.tok, Tok::Term(_));
        Ok(match t.tok {
            Tok::Str(s, ci) => {
                if matches!(self.peek(), Some(Spanned { tok: Tok::Punct(".."), .. })) {
                    self.pos += 1;
                    let Some(Spanned { tok: Tok::Str(hi, _), at: hi_at }) = self.peek().cloned()
                    else {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            "expected a string after ..",
                            self.here(),
                        ));
                    };
                    self.pos += 1;
                    let (mut a, mut b) = (s.chars(), hi.chars());
                    match (a.next(), a.next(), b.next(), b.next()) {
                        (Some(lo), None, Some(hi), None) if lo <= hi => {
                            LExpr::Lit(RegexSpec::Regex(format!(
                                "[{}-{}]",
                                regex_syntax::escape(&lo.to_string()),
                                regex_syntax::escape(&hi.to_string())
                            )))
                        }
                        _ => {
                            return Err(self.err(
                                ErrorKind::Value,
                                "bad range: \"a\"..\"z\" needs two single characters in order",
                                hi_at,
                            ))
                        }
                    }
                } else if ci {
                    LExpr::Lit(RegexSpec::Regex(format!("(?i:{})", regex_syntax::escape(&s))))
                } else {
                    LExpr::Lit(RegexSpec::Literal(s))
                }
            }
            Tok::Regex(r, f) => LExpr::Lit(self.regex(&r, &f, t.at)?),
            Tok::Rule(n) | Tok::Term(n)
                if matches!(self.peek(), Some(Spanned { tok: Tok::Param(_), .. })) =>
            {
                let Some(Spanned { tok: Tok::Param(p), at }) = self.peek().cloned() else {
                    unreachable!("peeked")
                };
                self.pos += 1;
                if is_term {
                    return Err(self.err(
                        ErrorKind::Name,
                        &format!("rule {n:?} not found (name::param calls a rule, not a terminal)"),
                        t.at,
                    ));
                }
                let arg = ParamExpr::parse(&p)
                    .map_err(|m| self.err(ErrorKind::Value, &format!("{n}::{p}: {m}"), at))?;
                LExpr::Call(n, arg, t.at)
            }
            Tok::Rule(n) => LExpr::RuleRef(n, t.at),
            Tok::Term(n) => LExpr::TermRef(n, t.at),
            Tok::Cond(_) => {
                return Err(self.err(ErrorKind::Syntax, "%if must end an alternative", t.at))
            }
            Tok::SpecialName(n) => LExpr::Special(SpecialToken::Name(n)),
            Tok::SpecialIds(body) => LExpr::Special(self.special_ids(&body, t.at)?),
            Tok::At(n) => LExpr::Grammar(n),
            Tok::Directive(d) if d == "json" => {
                let (schema, at) = self.json_payload("%json")?;
                let set = crate::json_schema::compile_schema(&schema)
                    .map_err(|e| self.err(e.kind(), &format!("in %json: {}", e.message()), at))?;
                let mut grammars = set.grammars.into_iter();
                let mut g = grammars.next().expect("the schema's grammar comes first");
                *self.counter += 1;
                let name = format!("__json_{}", self.counter);
                g.name = Some(name.clone());
                self.subs.push(g);
                crate::json_schema::push_subs(self.subs, grammars.collect());
                LExpr::Grammar(name)
            }
            Tok::Directive(d) if d == "regex" => {
                let (v, at) = self.json_payload("%regex")?;
                LExpr::Lit(substring_regex(&v).map_err(|m| self.err(ErrorKind::Value, &m, at))?)
            }
            Tok::Directive(d) if d == "lark" => {
                let Some(Spanned { tok: Tok::LarkBlock(body), at }) = self.peek().cloned() else {
                    return Err(self.err(ErrorKind::Syntax, "expected { after %lark", self.here()));
                };
                self.pos += 1;
                *self.counter += 1;
                let name = format!("__lark_{}", self.counter);
                let g = parse_grammar(
                    &body,
                    Some(name.clone()),
                    self.subs,
                    self.counter,
                    self.nesting + 1,
                )
                .map_err(|e| self.err(e.kind(), &format!("in %lark block: {e}"), at))?;
                self.subs.push(g);
                LExpr::Grammar(name)
            }
            _ => return Err(self.err(ErrorKind::Syntax, "unexpected token", t.at)),
        })
    }

    pub(super) fn json_payload(&mut self, what: &str) -> Result<(serde_json::Value, usize), Error> {
        match self.peek().cloned() {
            Some(Spanned { tok: Tok::Json(s), at }) => {
                self.pos += 1;
                let v = serde_json::from_str(&s)
                    .map_err(|e| self.err(ErrorKind::Syntax, &format!("bad JSON: {e}"), at))?;
                Ok((v, at))
            }
            _ => Err(self.err(
                ErrorKind::Syntax,
                &format!("expected a JSON object after {what}"),
                self.here(),
            )),
        }
    }

    pub(super) fn regex(&self, body: &str, flags: &str, at: usize) -> Result<RegexSpec, Error> {
        for f in flags.chars() {
            if !"imsux".contains(f) {
                return Err(self.err(
                    ErrorKind::Value,
                    &format!("unknown regex flag {f:?} (allowed: imsux)"),
                    at,
                ));
            }
        }
        let fl: String = flags.chars().filter(|&c| c != 'u').collect();
        let rx = if fl.is_empty() { body.to_string() } else { format!("(?{fl}:{body})") };
        if let Err(e) = regex_syntax::ParserBuilder::new().build().parse(&rx) {
            let msg = match &e {
                regex_syntax::Error::Parse(p) => p.kind().to_string(),
                regex_syntax::Error::Translate(t) => t.kind().to_string(),
                _ => e.to_string(),
            };
            return Err(self.err(ErrorKind::Value, &format!("invalid regex: {msg}"), at));
        }
        Ok(RegexSpec::Regex(rx))
    }

    fn special_ids(&self, body: &str, at: usize) -> Result<SpecialToken, Error> {
        let body = body.trim();
        if body == "*" {
            return Ok(SpecialToken::Any);
        }
        let (neg, list) = match body.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, body),
        };
        let bad = || self.err(ErrorKind::Value, &format!("bad token ids <[{body}]>"), at);
        let mut ranges = Vec::new();
        for part in list.split(',') {
            let part = part.trim();
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let (a, b): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if a > b {
                return Err(bad());
            }
            ranges.push((a, b));
        }
        Ok(if neg { SpecialToken::NotIds(ranges) } else { SpecialToken::Ids(ranges) })
    }
}
