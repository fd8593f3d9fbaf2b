//! The LLGuidance Lark dialect → [`GrammarSet`].
//!
//! Rules are lowercase, terminals UPPERCASE (each one lexeme); `|` (also starting a
//! continuation line), `( )`, `[ ]`, `? * +`, `{n}` `{m,n}` `{m,}` `{,n}`, `"lit"` (JSON
//! escapes and `\xHH`), `"lit"i`, `"a".."z"`, `/regex/flags` (imsux), `&` and `~` on
//! terminals, `//` and `#` comments, `%ignore`, `%import common.X [-> Y]`,
//! `%import common (A, B)`, `%json {schema}`, `%regex {...}`, `%lark {...}`, `@name`, special
//! tokens (`<|eot_id|>`, `<[128009]>`, `<[100-200]>`, `<[^...]>`, `<[*]>`), rule attributes
//! `[capture]`, `[capture="x"]`, `[lazy]`, `[stop=...]`, `[suffix=...]`, `[stop_capture=...]`,
//! `[max_tokens=N]`, `[temperature=F]`, and `%llguidance {options}`.
//!
//! Lark's `x ~ n` and `x ~ m..n` repeats. Parametric rules (`name::_`, calls `name::expr`,
//! alternatives under `%if cond`; the language is in [`crate::param`]): instances are made
//! by the parser as it reaches them.
//!
//! Each grammar of the set (the top one, every `%json`, `%lark` block and `@name`) keeps
//! its own whitespace: grammars with the same `%ignore` (and `ignore_once`) share a lexeme
//! class; JSON whitespace is once-only. After a lexeme of class G, the skip lexemes are G's
//! if G can take another lexeme, else those of the nearest grammar using G that can, else
//! none: no whitespace entering a sub-grammar or at the end (LLGuidance 1.9's behaviour).
//! `%llguidance` options merge across several objects; unknown keys are ignored.
//!
//! Not supported, with an error saying so: priorities (`rule.2`), templates, `%override`,
//! `%declare`, `%extend`.
//!
//! Expressions are parsed with an explicit stack of open groups, not recursion; groups, `~`s
//! and nested `%lark` blocks nest at most [`MAX_NESTING`] deep (an [`ErrorKind::Limit`]
//! error beyond), which also bounds the depth of the trees the later passes walk.

mod common;
mod lex;

use std::collections::{HashMap, HashSet};

use lexer::RegexSpec;

use crate::ir::{
    Expr, Grammar, GrammarOptions, GrammarSet, Rule, RuleAttrs, SpecialToken, TerminalDef,
};
use crate::param::{ParamCond, ParamExpr};
use crate::{Error, ErrorKind};
use lex::{Spanned, Tok};

/// Nesting limit of parentheses, brackets, `~`, and nested `%lark` blocks.
pub const MAX_NESTING: usize = 50;

/// Parses Lark source into a grammar set (the grammar itself first, then sub-grammars from
/// `%json` and `%lark` blocks).
pub fn parse(src: &str) -> Result<GrammarSet, Error> {
    let mut out = Vec::new();
    let mut counter = 0;
    let g = parse_grammar(src, None, &mut out, &mut counter, 0)?;
    out.insert(0, g);
    Ok(GrammarSet { grammars: out })
}

/// Parses one Lark grammar of a larger set: its `%json` / `%lark` blocks go to `subs`, named
/// from `counter` (shared across the set, so names never clash); returns the grammar itself.
pub fn parse_counted(
    src: &str,
    subs: &mut Vec<Grammar>,
    counter: &mut usize,
) -> Result<Grammar, Error> {
    parse_grammar(src, None, subs, counter, 0)
}

/// A parsed expression before names are resolved.
#[derive(Clone, Debug)]
enum LExpr {
    Empty,
    Seq(Vec<LExpr>),
    Alt(Vec<LExpr>),
    Repeat(Box<LExpr>, u32, Option<u32>),
    RuleRef(String, usize),
    TermRef(String, usize),
    Lit(RegexSpec),
    Special(SpecialToken),
    Grammar(String),
    And(Vec<LExpr>),
    Not(Box<LExpr>),
    /// `name::expr`.
    Call(String, ParamExpr, usize),
    /// `alternative %if cond`.
    If(ParamCond, Box<LExpr>),
}

struct Def {
    name: String,
    at: usize,
    /// A parametric rule (`name::_`).
    param: bool,
    body: LExpr,
    attrs: RuleAttrs,
    /// `stop=NAME` / `suffix=NAME`: a terminal resolved in `finish` (is it the suffix,
    /// the name, where).
    stop_term: Option<(bool, String, usize)>,
}

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

struct P<'a> {
    src: &'a str,
    toks: Vec<Spanned>,
    pos: usize,
    /// Inside ( ) or [ ]: newlines are whitespace.
    bracket: usize,
    subs: &'a mut Vec<Grammar>,
    counter: &'a mut usize,
    nesting: usize,
}

fn parse_grammar(
    src: &str,
    name: Option<String>,
    subs: &mut Vec<Grammar>,
    counter: &mut usize,
    nesting: usize,
) -> Result<Grammar, Error> {
    if nesting > MAX_NESTING {
        return Err(Error::new(
            ErrorKind::Limit,
            format!("%lark blocks nested deeper than {MAX_NESTING}"),
        ));
    }
    let toks = lex::tokenize(src)?;
    let mut p = P { src, toks, pos: 0, bracket: 0, subs, counter, nesting };
    let mut rules: Vec<Def> = Vec::new();
    let mut terms: Vec<Def> = Vec::new();
    let (mut rule_names, mut term_names) = (HashSet::new(), HashSet::new());
    let mut ignore: Vec<(LExpr, usize)> = Vec::new();
    let mut options = GrammarOptions::default();
    let mut llg_options = serde_json::Map::new();
    let mut imported: Vec<(String, RegexSpec, usize)> = Vec::new();
    loop {
        p.skip_newlines();
        let Some(t) = p.peek().cloned() else { break };
        match &t.tok {
            Tok::Rule(n) | Tok::Term(n) => {
                let is_term = matches!(t.tok, Tok::Term(_));
                p.pos += 1;
                let def = p.definition(n.clone(), t.at, is_term)?;
                let (list, names) = if is_term {
                    (&mut terms, &mut term_names)
                } else {
                    (&mut rules, &mut rule_names)
                };
                if !names.insert(def.name.clone()) {
                    return Err(p.err(
                        ErrorKind::Name,
                        &format!("{} is defined twice", def.name),
                        def.at,
                    ));
                }
                list.push(def);
            }
            Tok::Directive(d) => {
                p.pos += 1;
                match d.as_str() {
                    "ignore" => {
                        let e = p.expansions()?;
                        ignore.push((e, t.at));
                    }
                    "import" => p.import(&mut imported)?,
                    "llguidance" => {
                        // Several %llguidance objects merge, key by key.
                        let (json, at) = p.json_payload("%llguidance")?;
                        let serde_json::Value::Object(obj) = json else {
                            return Err(p.err(
                                ErrorKind::Value,
                                "%llguidance needs a JSON object",
                                at,
                            ));
                        };
                        llg_options.extend(obj);
                        options =
                            serde_json::from_value(serde_json::Value::Object(llg_options.clone()))
                                .map_err(|e| {
                                    p.err(
                                        ErrorKind::Value,
                                        &format!("bad %llguidance options: {e}"),
                                        at,
                                    )
                                })?;
                    }
                    "override" | "declare" | "extend" => {
                        return Err(p.err(
                            ErrorKind::Unsupported,
                            &format!("%{d} is not supported"),
                            t.at,
                        ))
                    }
                    _ => {
                        return Err(p.err(
                            ErrorKind::Syntax,
                            &format!("unknown directive %{d}"),
                            t.at,
                        ))
                    }
                }
                p.end_of_line()?;
            }
            _ => {
                return Err(p.err(
                    ErrorKind::Syntax,
                    "expected a rule or terminal definition",
                    t.at,
                ))
            }
        }
    }
    // Imports under a lowercase alias are rules matching the terminal.
    for (n, _, at) in imported.iter_mut() {
        if n.starts_with(|c: char| c.is_ascii_lowercase()) {
            let term = format!("__IMPORT_{}", n.to_uppercase());
            if !rule_names.insert(n.clone()) {
                return Err(p.err(ErrorKind::Name, &format!("{n} is defined twice"), *at));
            }
            rules.push(Def {
                name: n.clone(),
                at: *at,
                param: false,
                body: LExpr::TermRef(term.clone(), *at),
                attrs: RuleAttrs::default(),
                stop_term: None,
            });
            *n = term;
        }
    }
    p.finish(name, rules, terms, ignore, imported, options)
}

impl P<'_> {
    fn err(&self, kind: ErrorKind, msg: &str, at: usize) -> Error {
        Error::at(kind, msg, self.src, at)
    }

    fn peek(&self) -> Option<&Spanned> {
        self.toks.get(self.pos)
    }

    fn here(&self) -> usize {
        self.peek().map_or(self.src.len(), |t| t.at)
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Some(Spanned { tok: Tok::Newline, .. })) {
            self.pos += 1;
        }
    }

    /// Skips newlines inside brackets, and before a continuation line starting with `|`.
    fn skip_soft_newlines(&mut self) {
        if self.bracket > 0 {
            self.skip_newlines();
            return;
        }
        let mut k = self.pos;
        while matches!(self.toks.get(k), Some(Spanned { tok: Tok::Newline, .. })) {
            k += 1;
        }
        if k > self.pos && matches!(self.toks.get(k), Some(Spanned { tok: Tok::Punct("|"), .. })) {
            self.pos = k;
        }
    }

    fn eat(&mut self, p: &str) -> bool {
        self.skip_soft_newlines();
        if matches!(self.peek(), Some(Spanned { tok: Tok::Punct(q), .. }) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), Error> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(ErrorKind::Syntax, &format!("expected '{p}'"), self.here()))
        }
    }

    fn end_of_line(&mut self) -> Result<(), Error> {
        match self.peek() {
            None | Some(Spanned { tok: Tok::Newline, .. }) => Ok(()),
            Some(t) => Err(self.err(ErrorKind::Syntax, "expected the end of the line", t.at)),
        }
    }

    fn definition(&mut self, name: String, at: usize, is_term: bool) -> Result<Def, Error> {
        let mut param = false;
        if let Some(Spanned { tok: Tok::Param(p), at: pat }) = self.peek().cloned() {
            if is_term {
                return Err(self.err(
                    ErrorKind::Value,
                    "name::param cannot be used in terminals",
                    pat,
                ));
            }
            if p != "_" {
                return Err(self.err(
                    ErrorKind::Syntax,
                    "a parametric rule is defined as name::_",
                    pat,
                ));
            }
            self.pos += 1;
            param = true;
        }
        if matches!(self.peek(), Some(Spanned { tok: Tok::Punct("."), .. })) {
            return Err(self.err(
                ErrorKind::Unsupported,
                "priorities (name.N) are not supported",
                at,
            ));
        }
        if matches!(self.peek(), Some(Spanned { tok: Tok::Punct("{"), .. })) {
            return Err(self.err(
                ErrorKind::Unsupported,
                "templates (name{args}) are not supported",
                at,
            ));
        }
        let mut attrs = RuleAttrs::default();
        let mut stop_term = None;
        if matches!(self.peek(), Some(Spanned { tok: Tok::Punct("["), .. })) {
            if is_term {
                return Err(self.err(ErrorKind::Value, "attributes are allowed on rules only", at));
            }
            self.pos += 1;
            (attrs, stop_term) = self.attributes(&name)?;
        }
        self.expect(":")?;
        let body = self.expansions()?;
        self.end_of_line()?;
        if param
            && (attrs.lazy
                || attrs.stop.is_some()
                || attrs.suffix.is_some()
                || attrs.max_tokens.is_some()
                || attrs.temperature.is_some())
        {
            return Err(self.err(
                ErrorKind::Unsupported,
                "lazy, stop=, suffix=, max_tokens= and temperature= are not supported for \
                 parametric rules",
                at,
            ));
        }
        Ok(Def { name, at, param, body, attrs, stop_term })
    }

    #[allow(clippy::type_complexity)]
    fn attributes(
        &mut self,
        rule: &str,
    ) -> Result<(RuleAttrs, Option<(bool, String, usize)>), Error> {
        let mut a = RuleAttrs::default();
        let mut stop_term = None;
        if self.eat("]") {
            return Ok((a, stop_term));
        }
        loop {
            let Some(t) = self.peek().cloned() else {
                return Err(self.err(
                    ErrorKind::Syntax,
                    "unterminated attribute list",
                    self.src.len(),
                ));
            };
            self.pos += 1;
            let key = match &t.tok {
                Tok::Rule(k) | Tok::Term(k) => k.clone(),
                _ => return Err(self.err(ErrorKind::Syntax, "expected an attribute name", t.at)),
            };
            let value = if self.eat("=") {
                let v = self.peek().cloned().ok_or_else(|| {
                    self.err(ErrorKind::Syntax, "expected an attribute value", self.src.len())
                })?;
                self.pos += 1;
                Some(v)
            } else {
                None
            };
            let str_val = |v: &Option<Spanned>| match v {
                Some(Spanned { tok: Tok::Str(s, _), .. }) => Some(s.clone()),
                _ => None,
            };
            let num_val = |v: &Option<Spanned>| match v {
                Some(Spanned { tok: Tok::Num(n), .. }) => Some(n.clone()),
                _ => None,
            };
            let bad = |what: &str| {
                self.err(ErrorKind::Value, &format!("attribute {key} needs {what}"), t.at)
            };
            match key.as_str() {
                "capture" => {
                    a.capture = Some(match &value {
                        None => rule.to_string(),
                        v => str_val(v).ok_or_else(|| bad("a string value"))?,
                    })
                }
                "lazy" if value.is_none() => a.lazy = true,
                "stop" | "suffix" => {
                    let rx = match &value {
                        Some(Spanned { tok: Tok::Str(s, false), .. }) => {
                            RegexSpec::Literal(s.clone())
                        }
                        Some(Spanned { tok: Tok::Regex(r, f), at }) => self.regex(r, f, *at)?,
                        Some(Spanned { tok: Tok::Term(n), at }) => {
                            stop_term = Some((key == "suffix", n.clone(), *at));
                            // Resolved to the terminal's regex in `finish`.
                            RegexSpec::NoMatch
                        }
                        _ => return Err(bad("a string, /regex/ or TERMINAL value")),
                    };
                    if a.stop.is_some() || a.suffix.is_some() {
                        return Err(self.err(
                            ErrorKind::Value,
                            "cannot have multiple stop/suffix conditions",
                            t.at,
                        ));
                    }
                    if key == "stop" {
                        a.stop = Some(rx)
                    } else {
                        a.suffix = Some(rx)
                    }
                }
                "stop_capture" => {
                    a.stop_capture = Some(str_val(&value).ok_or_else(|| bad("a string value"))?)
                }
                "max_tokens" => {
                    a.max_tokens = Some(
                        num_val(&value)
                            .and_then(|n| n.parse().ok())
                            .ok_or_else(|| bad("an integer value"))?,
                    )
                }
                "temperature" => {
                    a.temperature = Some(
                        num_val(&value)
                            .and_then(|n| n.parse().ok())
                            .ok_or_else(|| bad("a number"))?,
                    )
                }
                _ => {
                    return Err(self.err(
                        ErrorKind::Value,
                        &format!("unknown attribute {key}"),
                        t.at,
                    ))
                }
            }
            if self.eat("]") {
                return Ok((a, stop_term));
            }
            self.expect(",")?;
        }
    }

    /// `expansions := alias ('|' alias)*`, `alias := expansion ('&' expansion)* ['-> name]`,
    /// `expansion := unary*`, `unary := '~'* atom postfix*`, `atom := '(' expansions ')' |
    /// '[' expansions ']' | leaf`, parsed with an explicit stack of open groups (no
    /// recursion over the source); groups nest at most [`MAX_NESTING`] deep.
    fn expansions(&mut self) -> Result<LExpr, Error> {
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
                let mut g = crate::json_schema::compile_schema(&schema)
                    .map_err(|e| self.err(e.kind(), &format!("in %json: {}", e.message()), at))?;
                *self.counter += 1;
                let name = format!("__json_{}", self.counter);
                g.name = Some(name.clone());
                self.subs.push(g);
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

    fn json_payload(&mut self, what: &str) -> Result<(serde_json::Value, usize), Error> {
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

    fn regex(&self, body: &str, flags: &str, at: usize) -> Result<RegexSpec, Error> {
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

    fn import(&mut self, imported: &mut Vec<(String, RegexSpec, usize)>) -> Result<(), Error> {
        let at = self.here();
        match self.peek().cloned() {
            Some(Spanned { tok: Tok::Rule(m), .. }) if m == "common" => self.pos += 1,
            _ => {
                return Err(self.err(
                    ErrorKind::Unsupported,
                    "only %import common is supported",
                    at,
                ))
            }
        }
        let mut names = Vec::new();
        if self.eat(".") {
            let Some(Spanned { tok: Tok::Term(n), at }) = self.peek().cloned() else {
                return Err(self.err(
                    ErrorKind::Syntax,
                    "expected a terminal name after common.",
                    self.here(),
                ));
            };
            self.pos += 1;
            let alias = if self.eat("->") {
                match self.peek().cloned() {
                    // A lowercase alias makes a rule of the terminal (as LLGuidance).
                    Some(Spanned { tok: Tok::Term(a) | Tok::Rule(a), .. }) => {
                        self.pos += 1;
                        a
                    }
                    _ => {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            "expected a name after ->",
                            self.here(),
                        ))
                    }
                }
            } else {
                n.clone()
            };
            names.push((n, alias, at));
        } else if self.eat("(") {
            loop {
                match self.peek().cloned() {
                    Some(Spanned { tok: Tok::Term(n), at }) => {
                        self.pos += 1;
                        names.push((n.clone(), n, at));
                    }
                    _ => {
                        return Err(self.err(
                            ErrorKind::Syntax,
                            "expected a terminal name",
                            self.here(),
                        ))
                    }
                }
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        } else {
            return Err(self.err(
                ErrorKind::Syntax,
                "expected common.NAME or common (A, B)",
                self.here(),
            ));
        }
        for (n, alias, at) in names {
            let rx = common::lookup(&n).ok_or_else(|| {
                self.err(ErrorKind::Name, &format!("common has no terminal {n}"), at)
            })?;
            imported.push((alias, RegexSpec::Regex(rx.to_string()), at));
        }
        Ok(())
    }

    fn finish(
        &mut self,
        name: Option<String>,
        rules: Vec<Def>,
        terms: Vec<Def>,
        ignore: Vec<(LExpr, usize)>,
        imported: Vec<(String, RegexSpec, usize)>,
        options: GrammarOptions,
    ) -> Result<Grammar, Error> {
        // Terminals: resolve bodies to regexes in dependency order (explicit stack).
        let mut resolved: HashMap<String, RegexSpec> = HashMap::new();
        for (n, rx, at) in &imported {
            if terms.iter().any(|d| &d.name == n) {
                return Err(self.err(
                    ErrorKind::Name,
                    &format!("{n} is imported and also defined"),
                    *at,
                ));
            }
            resolved.insert(n.clone(), rx.clone());
        }
        let index: HashMap<&str, usize> =
            terms.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
        for start in 0..terms.len() {
            // DFS: (terminal, visiting) with cycle detection.
            let mut stack = vec![(start, false)];
            let mut on_path = vec![false; terms.len()];
            while let Some((t, done)) = stack.pop() {
                let name = &terms[t].name;
                if resolved.contains_key(name) {
                    continue;
                }
                if done {
                    on_path[t] = false;
                    let rx = self.term_regex(&terms[t].body, &resolved)?;
                    resolved.insert(name.clone(), rx);
                    continue;
                }
                on_path[t] = true;
                stack.push((t, true));
                let mut refs = Vec::new();
                term_refs(&terms[t].body, &mut refs);
                for (r, at) in refs {
                    if resolved.contains_key(&r) {
                        continue;
                    }
                    let Some(&j) = index.get(r.as_str()) else {
                        return Err(self.err(
                            ErrorKind::Name,
                            &format!("unknown terminal {r}"),
                            at,
                        ));
                    };
                    if on_path[j] {
                        return Err(self.err(
                            ErrorKind::Value,
                            &format!(
                                "terminal {r} is recursive (terminals must be regular; use a rule)"
                            ),
                            at,
                        ));
                    }
                    stack.push((j, false));
                }
            }
        }
        let rule_names: HashMap<&str, bool> =
            rules.iter().map(|d| (d.name.as_str(), d.param)).collect();
        let mut out_rules = Vec::new();
        for d in &rules {
            let body = self.rule_expr(&d.body, &rule_names, &resolved, 0)?;
            let uses = body.uses_param();
            if d.param && !uses {
                return Err(self.err(
                    ErrorKind::Value,
                    &format!(
                        "rule {:?} is parametric, but its body doesn't need parameters",
                        d.name
                    ),
                    d.at,
                ));
            }
            if !d.param && uses {
                return Err(self.err(
                    ErrorKind::Value,
                    &format!(
                        "rule {:?} is not parametric, but its body requires parameters \
                         (define it as {}::_)",
                        d.name, d.name
                    ),
                    d.at,
                ));
            }
            let mut attrs = d.attrs.clone();
            if let Some((suffix, t, at)) = &d.stop_term {
                let rx = resolved.get(t).cloned().ok_or_else(|| {
                    self.err(ErrorKind::Name, &format!("unknown terminal {t}"), *at)
                })?;
                if *suffix {
                    attrs.suffix = Some(rx);
                } else {
                    attrs.stop = Some(rx);
                }
            }
            out_rules.push(Rule { name: d.name.clone(), body, attrs, param: d.param });
        }
        let start = "start".to_string();
        if !rule_names.contains_key("start") {
            return Err(Error::new(ErrorKind::Name, "the grammar has no start rule (start: ...)"));
        }
        let mut terminals: Vec<TerminalDef> = Vec::new();
        let mut used = Vec::new();
        for r in &rules {
            term_refs(&r.body, &mut used);
        }
        // Every defined or imported terminal is available; unused ones cost nothing.
        for (n, rx) in &resolved {
            terminals.push(TerminalDef { name: n.clone(), regex: rx.clone(), lazy: false });
        }
        terminals.sort_by(|a, b| a.name.cmp(&b.name));
        let mut ignore_rx = Vec::new();
        for (e, _) in &ignore {
            ignore_rx.push(self.term_regex(e, &resolved)?);
        }
        Ok(Grammar { name, start, rules: out_rules, terminals, ignore: ignore_rx, options })
    }

    /// A terminal-like expression as a regex; names must be resolved terminals.
    fn term_regex(
        &self,
        e: &LExpr,
        resolved: &HashMap<String, RegexSpec>,
    ) -> Result<RegexSpec, Error> {
        Ok(match e {
            LExpr::Empty => RegexSpec::Empty,
            LExpr::Seq(xs) => RegexSpec::Concat(
                xs.iter().map(|x| self.term_regex(x, resolved)).collect::<Result<_, _>>()?,
            ),
            LExpr::Alt(xs) => RegexSpec::Or(
                xs.iter().map(|x| self.term_regex(x, resolved)).collect::<Result<_, _>>()?,
            ),
            LExpr::Repeat(x, min, max) => RegexSpec::Repeat {
                expr: Box::new(self.term_regex(x, resolved)?),
                min: *min,
                max: *max,
            },
            LExpr::Lit(rx) => rx.clone(),
            LExpr::TermRef(n, at) => resolved
                .get(n)
                .cloned()
                .ok_or_else(|| self.err(ErrorKind::Name, &format!("unknown terminal {n}"), *at))?,
            LExpr::And(xs) => RegexSpec::And(
                xs.iter().map(|x| self.term_regex(x, resolved)).collect::<Result<_, _>>()?,
            ),
            LExpr::Not(x) => RegexSpec::Not(Box::new(self.term_regex(x, resolved)?)),
            LExpr::RuleRef(n, at) => {
                return Err(self.err(
                    ErrorKind::Value,
                    &format!("rule {n} used in a terminal: terminals may only use terminals"),
                    *at,
                ))
            }
            LExpr::Special(_) | LExpr::Grammar(_) => {
                return Err(Error::new(
                    ErrorKind::Value,
                    "special tokens and @grammars cannot be inside a terminal",
                ))
            }
            LExpr::Call(_, _, at) => {
                return Err(self.err(
                    ErrorKind::Value,
                    "name::param cannot be used in terminals",
                    *at,
                ))
            }
            LExpr::If(ParamCond::True, x) => self.term_regex(x, resolved)?,
            LExpr::If(..) => {
                return Err(Error::new(ErrorKind::Value, "'%if' is not supported in terminals"))
            }
        })
    }

    fn rule_expr(
        &self,
        e: &LExpr,
        rules: &HashMap<&str, bool>,
        resolved: &HashMap<String, RegexSpec>,
        depth: usize,
    ) -> Result<Expr, Error> {
        if depth > 4 * MAX_NESTING {
            return Err(Error::new(ErrorKind::Limit, "rule nesting too deep"));
        }
        let rec = |x: &LExpr| self.rule_expr(x, rules, resolved, depth + 1);
        Ok(match e {
            LExpr::Empty => Expr::Empty,
            LExpr::Seq(xs) => Expr::Seq(xs.iter().map(rec).collect::<Result<_, _>>()?),
            LExpr::Alt(xs) => Expr::Alt(xs.iter().map(rec).collect::<Result<_, _>>()?),
            LExpr::Repeat(x, min, max) => {
                Expr::Repeat { expr: Box::new(rec(x)?), min: *min, max: *max }
            }
            LExpr::RuleRef(n, at) => match rules.get(n.as_str()) {
                None => return Err(self.err(ErrorKind::Name, &format!("unknown rule {n}"), *at)),
                Some(true) => {
                    return Err(self.err(
                        ErrorKind::Value,
                        &format!("rule {n:?} is parametric, but no parameter provided"),
                        *at,
                    ))
                }
                Some(false) => Expr::Rule(n.clone()),
            },
            LExpr::Call(n, arg, at) => match rules.get(n.as_str()) {
                None => return Err(self.err(ErrorKind::Name, &format!("unknown rule {n}"), *at)),
                Some(false) => {
                    return Err(self.err(
                        ErrorKind::Value,
                        &format!("rule {n:?} is not parametric, but is called with a parameter"),
                        *at,
                    ))
                }
                Some(true) => Expr::Call { rule: n.clone(), arg: arg.clone() },
            },
            LExpr::If(cond, x) => Expr::If { cond: cond.clone(), expr: Box::new(rec(x)?) },
            LExpr::TermRef(n, at) => {
                if !resolved.contains_key(n) {
                    return Err(self.err(ErrorKind::Name, &format!("unknown terminal {n}"), *at));
                }
                Expr::Terminal(n.clone())
            }
            LExpr::Lit(rx) => Expr::Lexeme(rx.clone()),
            LExpr::Special(s) => Expr::Special(s.clone()),
            LExpr::Grammar(n) => Expr::Grammar(n.clone()),
            LExpr::And(..) => {
                return Err(Error::new(
                    ErrorKind::Value,
                    "& is only supported for tokens, not rules; try renaming the rule to \
                     UPPERCASE",
                ))
            }
            LExpr::Not(..) => Expr::Lexeme(self.term_regex(e, resolved)?),
        })
    }
}

fn term_refs(e: &LExpr, out: &mut Vec<(String, usize)>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            LExpr::TermRef(n, at) => out.push((n.clone(), *at)),
            LExpr::Seq(xs) | LExpr::Alt(xs) | LExpr::And(xs) => stack.extend(xs),
            LExpr::Repeat(x, ..) | LExpr::Not(x) | LExpr::If(_, x) => stack.push(x),
            _ => {}
        }
    }
}

/// Longest text accepted by `%regex {substring_*}` (units: words, chars or chunks).
const MAX_SUBSTRING_UNITS: usize = 400;

/// `%regex {"substring_words": T}` / `{"substring_chars": T}` / `{"substring_chunks": [..]}`:
/// `chunks[n..m]` joined, for any `n <= m` (the empty string included), as LLGuidance.
/// Words split T into maximal runs of whitespace, of word characters (`\w`) and of other
/// characters, so a run of words may start or end on the space between two words.
fn substring_regex(v: &serde_json::Value) -> Result<RegexSpec, String> {
    let obj =
        v.as_object().filter(|o| o.len() == 1).ok_or("%regex needs an object with one key")?;
    let (k, val) = obj.iter().next().expect("one key");
    let units: Vec<String> = match (k.as_str(), val) {
        ("substring_chars", serde_json::Value::String(s)) => s.chars().map(String::from).collect(),
        ("substring_words", serde_json::Value::String(s)) => {
            // Maximal runs of one class: whitespace, word characters, other characters.
            let class = |c: char| {
                if c.is_whitespace() {
                    0
                } else if c.is_alphanumeric() || c == '_' {
                    1
                } else {
                    2
                }
            };
            let mut units: Vec<String> = Vec::new();
            let mut prev = None;
            for c in s.chars() {
                let k = class(c);
                match units.last_mut() {
                    Some(u) if prev == Some(k) => u.push(c),
                    _ => units.push(c.to_string()),
                }
                prev = Some(k);
            }
            units
        }
        ("substring_chunks", serde_json::Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(String::from).ok_or("substring_chunks needs strings"))
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(format!(
                "unknown %regex form {k:?} (substring_words, substring_chars, substring_chunks)"
            ))
        }
    };
    if units.len() > MAX_SUBSTRING_UNITS {
        return Err(format!(
            "%regex text must have at most {MAX_SUBSTRING_UNITS} units, has {}",
            units.len()
        ));
    }
    // Any run = the empty string, or a start unit followed by a prefix (possibly empty) of
    // the units after it: prefixes(i) = unit_i (prefixes(i+1))?, built from the end without
    // recursion.
    let mut alts = vec![RegexSpec::Empty];
    let mut tail: Option<RegexSpec> = None;
    for u in units.iter().rev() {
        let lit = RegexSpec::Literal(u.clone());
        let node = match tail {
            None => lit,
            Some(t) => RegexSpec::Concat(vec![
                lit,
                RegexSpec::Repeat { expr: Box::new(t), min: 0, max: Some(1) },
            ]),
        };
        alts.push(node.clone());
        tail = Some(node);
    }
    Ok(RegexSpec::Or(alts))
}
