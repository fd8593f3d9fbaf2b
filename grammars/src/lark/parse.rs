//! The parser, grammar level: the definitions of rules and terminals with their
//! attributes, and the directives (`%ignore`, `%import common`, `%llguidance`); rule bodies
//! are parsed by `expr.rs`. The parsed grammar is handed to `lower.rs`.

use std::collections::HashSet;

use lexer::RegexSpec;

use super::ast::{Def, LExpr, MAX_NESTING};
use super::lex::{self, Spanned, Tok};
use super::{common, lower};
use crate::ir::{Grammar, GrammarOptions, RuleAttrs};
use crate::{Error, ErrorKind};

/// The parser's state: the tokens and where it is in them.
pub(super) struct P<'a> {
    pub(super) src: &'a str,
    toks: Vec<Spanned>,
    pub(super) pos: usize,
    /// Inside ( ) or [ ]: newlines are whitespace.
    pub(super) bracket: usize,
    pub(super) subs: &'a mut Vec<Grammar>,
    pub(super) counter: &'a mut usize,
    pub(super) nesting: usize,
}

/// Parses one Lark grammar (`name`: a `%lark` block's), its blocks going to `subs`.
pub(super) fn parse_grammar(
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
    lower::lower(p.src, name, rules, terms, ignore, imported, options)
}

impl P<'_> {
    pub(super) fn err(&self, kind: ErrorKind, msg: &str, at: usize) -> Error {
        Error::at(kind, msg, self.src, at)
    }

    pub(super) fn peek(&self) -> Option<&Spanned> {
        self.toks.get(self.pos)
    }

    pub(super) fn here(&self) -> usize {
        self.peek().map_or(self.src.len(), |t| t.at)
    }

    pub(super) fn skip_newlines(&mut self) {
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

    pub(super) fn eat(&mut self, p: &str) -> bool {
        self.skip_soft_newlines();
        if matches!(self.peek(), Some(Spanned { tok: Tok::Punct(q), .. }) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, p: &str) -> Result<(), Error> {
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
}
