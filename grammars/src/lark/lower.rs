//! Lowering a parsed grammar to the IR: terminals resolved to regexes in dependency order
//! (recursion among terminals is an error: they must be regular), rule bodies to IR
//! expressions with every name checked (rules, terminals, parametric calls), `%ignore` to
//! regexes.

use std::collections::HashMap;

use lexer::RegexSpec;

use super::ast::{Def, LExpr, MAX_NESTING};
use crate::ir::{Expr, Grammar, GrammarOptions, Rule, TerminalDef};
use crate::param::ParamCond;
use crate::{Error, ErrorKind};

/// Lowers a parsed grammar (`src`: its text, for errors' line:column) to the IR.
pub(super) fn lower(
    src: &str,
    name: Option<String>,
    rules: Vec<Def>,
    terms: Vec<Def>,
    ignore: Vec<(LExpr, usize)>,
    imported: Vec<(String, RegexSpec, usize)>,
    options: GrammarOptions,
) -> Result<Grammar, Error> {
    Lower { src }.finish(name, rules, terms, ignore, imported, options)
}

/// The grammar text being lowered.
struct Lower<'a> {
    src: &'a str,
}

impl Lower<'_> {
    fn err(&self, kind: ErrorKind, msg: &str, at: usize) -> Error {
        Error::at(kind, msg, self.src, at)
    }

    fn finish(
        &self,
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
