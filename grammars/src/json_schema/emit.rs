//! Normalized schemas to grammar rules: one rule per schema expression (so recursion in the
//! schema is recursion in the grammar), scalars as single lexemes, arrays and objects as
//! small state machines over counts.

use std::collections::VecDeque;

use hashbrown::HashMap;
use serde_json::Value;

use lexer::RegexSpec;

use super::long_string;
use super::numbers;
use super::schema::{
    json_eq, Arr, Ctx, Exists, Exp, KeyLang, LengthBounds, Node, Obj, Rx, SExpr, STRING_ANY,
};
use crate::ir::{Expr, Grammar, Rule, RuleAttrs};
use crate::param::{ParamCond, ParamExpr};
use crate::{Error, ErrorKind};

/// The most grammar rules one schema may produce.
const MAX_RULES: usize = 100_000;
/// The most distinct `patternProperties` patterns of one object.
const MAX_PATTERNS: usize = 6;
/// The most `contains` constraints on one array (each element is counted by a subset).
const MAX_CONTAINS: usize = 4;
/// Most named properties an `any_order` object may have (one parameter bit each, bit 63 is
/// the separator's); more fall back to the fixed order.
const ANY_ORDER_MAX: usize = 63;

/// The most `some` constraints (complements of `patternProperties` / `additionalProperties`)
/// on one object (each member's state is a subset of them).
const MAX_SOME: usize = 4;

/// The most values of closed objects [`Emitter::finite_values`] enumerates.
const MAX_FINITE_VALUES: usize = 64;

/// The most states `uniqueItems` over a finite item domain may use (sets of values used so
/// far: 2^d for d values, fewer under a small `maxItems`).
const MAX_UNIQUE_STATES: usize = 4096;

pub(crate) struct Emitter<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    pub rules: Vec<Rule>,
    names: HashMap<SExpr, String>,
    queue: VecDeque<(SExpr, String)>,
    item_sep: String,
    key_sep: String,
    /// The escapes allowed in strings (`json_allowed_escapes`; `None`: all of them).
    escapes: Option<String>,
    /// `json_allow_general_unicode_escapes`.
    general_escapes: bool,
    /// `any_order`: named properties in any order (each at most once).
    pub any_order: bool,
    /// `string_excludes`: substrings no string or key contains.
    pub excludes: Vec<String>,
    /// `xgrammar_strings`: `\/` and raw DEL in general-escape strings.
    pub xgrammar_strings: bool,
    /// The sub-grammars of long strings ([`long_string`]), one per bound and quoting.
    pub subs: Vec<Grammar>,
}

fn lit(s: &str) -> Expr {
    Expr::Lexeme(RegexSpec::Literal(s.to_string()))
}

/// A separator: a regex (LLGuidance reads `item_separator` / `key_separator` as regexes);
/// plain text stays a literal.
fn sep(s: &str) -> Expr {
    if s.bytes().any(|b| b"\\.+*?()|[]{}^$".contains(&b)) {
        Expr::Lexeme(RegexSpec::Regex(s.to_string()))
    } else {
        lit(s)
    }
}

fn alt(mut v: Vec<Expr>) -> Expr {
    if v.len() == 1 {
        v.pop().unwrap_or(Expr::Empty)
    } else {
        Expr::Alt(v)
    }
}

impl<'c, 'a> Emitter<'c, 'a> {
    /// `"` (raw character | allowed named escape | `\uXXXX` of any character, a surrogate
    /// pair counting as one) repeated `len` times `"`.
    fn general_quote(&self, len: LengthBounds) -> RegexSpec {
        let (lo, hi) = (len.min, len.max);
        let count = match hi {
            Some(h) => format!("{{{lo},{h}}}"),
            None => format!("{{{lo},}}"),
        };
        RegexSpec::Regex(format!(r#""(?:{}){count}""#, self.general_unit()))
    }

    /// One character of a general-escape string: raw, a named escape, or `\uXXXX` (a
    /// surrogate pair counting as one), as a regex.
    fn general_unit(&self) -> String {
        let named: String = self
            .escapes
            .as_deref()
            .unwrap_or("nrbtf\\\"")
            .chars()
            .filter(|c| "nrbtf\\\"".contains(*c))
            .map(|c| if c == '\\' { "\\\\".to_string() } else { c.to_string() })
            .collect();
        let hex = "[0-9a-fA-F]";
        let mut unit = vec![if self.xgrammar_strings {
            r#"[^"\\\x00-\x1F]"#.to_string()
        } else {
            r#"[^"\\\x00-\x1F\x7F]"#.to_string()
        }];
        let named = if self.xgrammar_strings { format!("{named}/") } else { named };
        if !named.is_empty() {
            unit.push(format!(r"\\[{named}]"));
        }
        unit.push(format!(r"\\u(?:[0-9a-cA-Ce-fE-F]{hex}{{3}}|[dD][0-7]{hex}{{2}})"));
        unit.push(format!(r"\\u[dD][89abAB]{hex}{{2}}\\u[dD][c-fC-F]{hex}{{2}}"));
        unit.join("|")
    }

    /// A long string ([`long_string`]): a reference to its sub-grammar, made once per bound
    /// and quoting.
    fn long_string(&mut self, len: LengthBounds) -> Expr {
        let general = self.general_escapes;
        let quoting = format!(
            "{:?}{}{}",
            self.escapes,
            if general { self.general_unit() } else { String::new() },
            self.xgrammar_strings
        );
        // FNV-1a: a short tag naming the quoting, so equal sub-grammars share a name.
        let tag = quoting
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
        let hi = len.max.map_or_else(|| "inf".to_string(), |h| h.to_string());
        let name = format!("__json_str_{}_{hi}_{tag:016x}", len.min);
        if !self.subs.iter().any(|g| g.name.as_deref() == Some(name.as_str())) {
            let unit = general.then(|| self.general_unit());
            let escapes = self.escapes.clone();
            let body = |lo: u32, hi: u32| match &unit {
                Some(u) => RegexSpec::Regex(format!("(?:{u}){{{lo},{hi}}}")),
                None => RegexSpec::JsonQuote {
                    expr: Box::new(LengthBounds { min: lo, max: Some(hi) }.regex()),
                    raw: true,
                    allowed_escapes: escapes.clone(),
                },
            };
            self.subs.push(long_string::grammar(name.clone(), len, body));
        }
        Expr::Seq(vec![lit("\""), Expr::Grammar(name)])
    }

    pub fn new(
        ctx: &'c mut Ctx<'a>,
        item_sep: String,
        key_sep: String,
        escapes: Option<String>,
        general_escapes: bool,
    ) -> Self {
        Emitter {
            ctx,
            rules: vec![],
            names: HashMap::new(),
            queue: VecDeque::new(),
            item_sep,
            key_sep,
            escapes,
            general_escapes,
            any_order: false,
            excludes: Vec::new(),
            xgrammar_strings: false,
            subs: Vec::new(),
        }
    }

    fn key_lexeme(&self, content: RegexSpec, length_only: Option<LengthBounds>) -> Expr {
        Expr::Lexeme(self.key_spec(content, length_only))
    }

    /// A JSON string holding exactly the strings of `content`, quoted canonically (or, with
    /// general escapes and a content constrained by length only, any character escaped).
    /// `length_only`: the length bounds where `content` is nothing more.
    fn key_spec(&self, content: RegexSpec, length_only: Option<LengthBounds>) -> RegexSpec {
        let content = if self.excludes.is_empty() {
            content
        } else {
            let any = RegexSpec::Regex(STRING_ANY.to_string());
            let mut inner = vec![any.clone()];
            inner.push(RegexSpec::Or(
                self.excludes.iter().map(|x| RegexSpec::Literal(x.clone())).collect(),
            ));
            inner.push(any);
            RegexSpec::And(vec![content, RegexSpec::Not(Box::new(RegexSpec::Concat(inner)))])
        };
        if self.general_escapes && self.excludes.is_empty() {
            if let Some(len) = length_only {
                return self.general_quote(len);
            }
        }
        RegexSpec::JsonQuote {
            expr: Box::new(content),
            raw: false,
            allowed_escapes: self.escapes.clone(),
        }
    }

    /// Emits the rules for `root` and everything it reaches; returns the start rule.
    pub fn run(&mut self, root: SExpr) -> Result<String, Error> {
        let start = self.rule_for(&root);
        while let Some((e, name)) = self.queue.pop_front() {
            if self.rules.len() > MAX_RULES {
                return Err(Error::new(
                    ErrorKind::Limit,
                    format!("the schema needs more than {MAX_RULES} rules"),
                ));
            }
            let node = self.ctx.normalize(&e)?;
            let body = self.node(&name, &node)?;
            self.push(name, body);
        }
        Ok(start)
    }

    fn push(&mut self, name: String, body: Expr) {
        self.rules.push(Rule { name, body, attrs: RuleAttrs::default(), param: false });
    }

    fn rule_for(&mut self, e: &SExpr) -> String {
        let e = &self.ctx.canonical(e);
        if let Some(n) = self.names.get(e) {
            return n.clone();
        }
        let name = format!("j{}", self.names.len());
        self.names.insert(e.clone(), name.clone());
        self.queue.push_back((e.clone(), name.clone()));
        name
    }

    fn r(&mut self, e: &SExpr) -> Expr {
        Expr::Rule(self.rule_for(e))
    }

    fn node(&mut self, name: &str, n: &Node) -> Result<Expr, Error> {
        lexer::interrupt::check()?;
        let mut alts = Vec::new();
        if n.null {
            alts.push(lit("null"));
        }
        if n.t {
            alts.push(lit("true"));
        }
        if n.f {
            alts.push(lit("false"));
        }
        let mut num = Vec::new();
        let integer = RegexSpec::Regex(numbers::INTEGER.into());
        // Integers written without a fraction (`int_plain`) whose regex has INTEGER as a
        // conjunct: NUMBER_NOEXP & INTEGER & C & ~(x.0) is exactly INT_PLAIN & C, and one
        // plain regex costs the lexer one derivative per byte where the intersection cost
        // three plus a non-emptiness check.
        let plain_int = n.num.int_plain && n.num.rx.has_conjunct(&integer);
        match &n.num.rx {
            Rx::And(v) if plain_int => {
                let int_plain = RegexSpec::Regex(numbers::INT_PLAIN.into());
                num.push(if v.len() > 1 {
                    RegexSpec::And(
                        v.iter()
                            .map(|t| if t.is(&integer) { int_plain.clone() } else { t.spec() })
                            .collect(),
                    )
                } else {
                    RegexSpec::Regex(numbers::INT_PLAIN.into())
                });
            }
            Rx::Nothing => {}
            Rx::All => num.push(RegexSpec::Regex(numbers::NUMBER_NOEXP.into())),
            rx @ Rx::And(_) => num.push(RegexSpec::And(vec![
                RegexSpec::Regex(numbers::NUMBER_NOEXP.into()),
                rx.spec(numbers::NUMBER_NOEXP),
            ])),
        }
        if n.num.int_plain && !plain_int {
            if let Some(r) = num.pop() {
                num.push(numbers::without_zero_fraction(r));
            }
        }
        if n.num.exp == Exp::All {
            num.push(RegexSpec::Regex(numbers::NUMBER_EXP.into()));
        }
        match num.len() {
            0 => {}
            1 => alts.push(Expr::Lexeme(num.pop().unwrap_or(RegexSpec::NoMatch))),
            _ => alts.push(Expr::Lexeme(RegexSpec::Or(num))),
        }
        if !n.str_.is_nothing() {
            let len = n.str_.length_only();
            match len.filter(|&l| long_string::is_long(l) && self.excludes.is_empty()) {
                Some(l) => {
                    let e = self.long_string(l);
                    alts.push(e);
                }
                None => alts.push(self.key_lexeme(n.str_.spec(STRING_ANY), len)),
            }
        }
        for (i, a) in n.arr.iter().enumerate() {
            if let Some(e) = self.array(&format!("{name}_a{i}"), a)? {
                alts.push(e);
            }
        }
        for (i, o) in n.obj.iter().enumerate() {
            if let Some(e) = self.object(&format!("{name}_o{i}"), o)? {
                alts.push(e);
            }
        }
        Ok(alt(alts))
    }

    /// `o` with the patterns that every clause treats alike (schemas that normalize to the
    /// same constraint in each clause that has any of them, and none of them in the others)
    /// merged into one alternation, in `patterns` and in each clause.
    fn merge_patterns(&mut self, o: &Obj, patterns: &mut Vec<String>) -> Result<Obj, Error> {
        // Per pattern, its normalized schema in each clause.
        let mut sig: Vec<Vec<Option<std::rc::Rc<Node>>>> = Vec::with_capacity(patterns.len());
        for p in patterns.iter() {
            let mut v = Vec::with_capacity(o.clauses.len());
            for c in &o.clauses {
                v.push(match c.patterns.iter().find(|(q, _)| q == p) {
                    Some((_, s)) => Some(self.ctx.normalize(s)?),
                    None => None,
                });
            }
            sig.push(v);
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..patterns.len() {
            match groups.iter_mut().find(|g| sig[g[0]] == sig[i]) {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        if groups.len() == patterns.len() {
            return Ok(o.clone());
        }
        let merged: Vec<String> = groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => patterns[*one].clone(),
                _ => {
                    g.iter().map(|&i| format!("(?:{})", patterns[i])).collect::<Vec<_>>().join("|")
                }
            })
            .collect();
        let mut out = o.clone();
        for c in &mut out.clauses {
            let mut pats = Vec::new();
            for (g, m) in groups.iter().zip(&merged) {
                if let Some((_, s)) = c.patterns.iter().find(|(q, _)| *q == patterns[g[0]]) {
                    pats.push((m.clone(), s.clone()));
                }
            }
            c.patterns = pats;
        }
        *patterns = merged;
        Ok(out)
    }

    fn sep(&self, first: bool) -> Vec<Expr> {
        if first {
            vec![]
        } else {
            vec![sep(&self.item_sep)]
        }
    }

    fn check_states(&self, n: usize) -> Result<(), Error> {
        if n > MAX_RULES || self.rules.len() + n > MAX_RULES {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("the schema needs more than {MAX_RULES} rules"),
            ));
        }
        Ok(())
    }

    fn array(&mut self, base: &str, a: &Arr) -> Result<Option<Expr>, Error> {
        if a.max.is_some_and(|m| m < a.min) {
            return Ok(None);
        }
        if a.contains.len() > MAX_CONTAINS {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("contains: more than {MAX_CONTAINS} `contains` on one array"),
            ));
        }
        if a.unique && a.max.is_none_or(|m| m > 1) {
            return self.unique_array(base, a).map(Some);
        }
        let p = a.prefix.len() as u32;
        let body = if !a.contains.is_empty() {
            if a.contains.iter().any(|(_, lo, hi, _)| hi.is_some_and(|h| h < *lo)) {
                return Ok(None);
            }
            self.contains_array(base, a)?
        } else {
            // prefix states 0..p, then the tail as a counted repeat
            let tail = if a.max == Some(p) || a.items == SExpr::False {
                if a.min > p {
                    return Ok(None);
                }
                Expr::Empty
            } else {
                let lo = a.min.saturating_sub(p);
                let hi = a.max.map(|m| m - p);
                let e = self.r(&a.items.clone());
                let more = |lo: u32, hi: Option<u32>| Expr::Repeat {
                    expr: Box::new(Expr::Seq(vec![sep(&self.item_sep), e.clone()])),
                    min: lo,
                    max: hi,
                };
                if p == 0 {
                    let first = Expr::Seq(vec![
                        e.clone(),
                        more(lo.saturating_sub(1), hi.map(|h| h.saturating_sub(1))),
                    ]);
                    if lo == 0 {
                        Expr::Alt(vec![Expr::Empty, first])
                    } else {
                        first
                    }
                } else {
                    more(lo, hi)
                }
            };
            let mut next = tail;
            for n in (0..p).rev() {
                let name = format!("{base}_{n}");
                let mut alts = vec![];
                if n >= a.min {
                    alts.push(Expr::Empty);
                }
                let mut seq = self.sep(n == 0);
                seq.push(self.r(&a.prefix[n as usize].clone()));
                seq.push(next);
                alts.push(Expr::Seq(seq));
                self.push(name.clone(), alt(alts));
                next = Expr::Rule(name);
            }
            next
        };
        Ok(Some(Expr::Seq(vec![lit("["), body, lit("]")])))
    }

    /// An array with `contains` constraints (each a schema and a count range): states are
    /// (elements so far, the count of each `contains` so far, capped). Each element is
    /// counted or not by each `contains`: where the count has a maximum, counted means it
    /// matches and not counted that it does not (exact counts); where only a minimum is
    /// asked, counted means it matches and not counted asks nothing (ambiguous but exact).
    fn contains_array(&mut self, base: &str, a: &Arr) -> Result<Expr, Error> {
        let p = a.prefix.len() as u32;
        let cs = a.contains.clone();
        // uncapped counts must reach the first index each `contains` counts from
        let from = cs.iter().map(|c| c.3).max().unwrap_or(0);
        let ncap = match a.max {
            Some(m) => m,
            None => p.max(a.min).max(from).max(1),
        };
        let kcaps: Vec<u32> = cs.iter().map(|(_, lo, hi, _)| hi.unwrap_or(*lo)).collect();
        let states =
            kcaps.iter().fold(ncap as usize + 1, |acc, &k| acc.saturating_mul(k as usize + 1));
        self.check_states(states.saturating_mul(1 << cs.len()))?;
        let name = |n: u32, ks: &[u32]| {
            let ks: Vec<String> = ks.iter().map(u32::to_string).collect();
            format!("{base}_{n}_{}", ks.join("_"))
        };
        // Every count tuple.
        let mut tuples: Vec<Vec<u32>> = vec![vec![]];
        for &cap in &kcaps {
            tuples = tuples
                .into_iter()
                .flat_map(|t| (0..=cap).map(move |k| [t.clone(), vec![k]].concat()))
                .collect();
        }
        for n in 0..=ncap {
            for ks in &tuples {
                let mut alts = vec![];
                if n >= a.min && cs.iter().zip(ks).all(|((_, lo, _, _), k)| k >= lo) {
                    alts.push(Expr::Empty);
                }
                if a.max.is_none_or(|m| n < m) {
                    let n2 = if a.max.is_none() { (n + 1).min(ncap) } else { n + 1 };
                    let elem = a.at(n as usize).clone();
                    // Each subset of the `contains` counting this element.
                    for mask in 0u32..(1 << cs.len()) {
                        let mut parts = vec![elem.clone()];
                        let mut ks2 = ks.clone();
                        let mut ok = true;
                        for (i, (c, _, hi, from)) in cs.iter().enumerate() {
                            if n < *from {
                                // not counted before its first index
                                if mask & (1 << i) != 0 {
                                    ok = false;
                                    break;
                                }
                                continue;
                            }
                            if mask & (1 << i) != 0 {
                                if hi.is_some() && ks[i] >= kcaps[i] {
                                    ok = false;
                                    break;
                                }
                                ks2[i] = if hi.is_none() {
                                    (ks[i] + 1).min(kcaps[i])
                                } else {
                                    ks[i] + 1
                                };
                                parts.push(c.clone());
                            } else if hi.is_some() {
                                parts.push(SExpr::not(c));
                            }
                        }
                        if !ok {
                            continue;
                        }
                        let mut seq = self.sep(n == 0);
                        seq.push(self.r(&SExpr::all(parts)));
                        seq.push(Expr::Rule(name(n2, &ks2)));
                        alts.push(Expr::Seq(seq));
                    }
                }
                self.push(name(n, ks), alt(alts));
            }
        }
        Ok(Expr::Rule(name(0, &vec![0; cs.len()])))
    }

    /// The values of `n` when they are known and few: its listed values (`enum`, `const`),
    /// or objects closed over their keys (`additionalProperties: false`, no patterns) whose
    /// every value is known so (a discriminator and fixed fields): each combination, with
    /// optional keys present or not, up to [`MAX_FINITE_VALUES`]. `None` otherwise.
    fn finite_values(&mut self, n: &Node, depth: usize) -> Result<Option<Vec<Value>>, Error> {
        if let Some(v) = &n.values {
            return Ok(Some(v.clone()));
        }
        let open = !n.num.rx.is_nothing()
            || n.num.exp != Exp::None
            || !n.str_.is_nothing()
            || !n.arr.is_empty();
        if depth == 0 || open {
            return Ok(None);
        }
        let mut out: Vec<Value> = Vec::new();
        for (on, v) in [(n.null, Value::Null), (n.t, Value::Bool(true)), (n.f, Value::Bool(false))]
        {
            if on {
                out.push(v);
            }
        }
        for o in &n.obj {
            let closed =
                o.clauses.iter().find(|c| c.additional == SExpr::False && c.patterns.is_empty());
            let (Some(c), true) = (closed, o.some.is_empty()) else {
                return Ok(None);
            };
            let mut objs = vec![serde_json::Map::new()];
            for (k, _) in &c.props {
                let v = self.ctx.value_for(o, k)?;
                if v == SExpr::False {
                    continue; // never there (a required one leaves no object below)
                }
                let vn = self.ctx.normalize(&v)?;
                let Some(vals) = self.finite_values(&vn, depth - 1)? else {
                    return Ok(None);
                };
                let optional = !o.required.contains(k);
                let mut next = Vec::new();
                for m in &objs {
                    if optional {
                        next.push(m.clone());
                    }
                    for x in &vals {
                        let mut m2 = m.clone();
                        m2.insert(k.clone(), x.clone());
                        next.push(m2);
                    }
                }
                if next.len() > MAX_FINITE_VALUES {
                    return Ok(None);
                }
                objs = next;
            }
            for m in objs {
                let len = m.len() as u32;
                if o.required.iter().all(|r| m.contains_key(r))
                    && len >= o.min
                    && o.max.is_none_or(|x| len <= x)
                {
                    out.push(Value::Object(m));
                }
            }
            if out.len() > MAX_FINITE_VALUES {
                return Ok(None);
            }
        }
        Ok(Some(out))
    }

    fn unique_array(&mut self, base: &str, a: &Arr) -> Result<Expr, Error> {
        let err = |m: &str| Error::new(ErrorKind::Unsupported, format!("uniqueItems: {m}"));
        if !a.prefix.is_empty() || !a.contains.is_empty() {
            return Err(err("not supported with prefixItems or contains"));
        }
        let node = self.ctx.normalize(&a.items)?;
        let Some(vals) = self.finite_values(&node, 3)? else {
            if self.ctx.opts.lenient {
                self.ctx.warnings.push("uniqueItems ignored".into());
                let mut b = a.clone();
                b.unique = false;
                return Ok(self.array(base, &b)?.unwrap_or(Expr::Alt(vec![])));
            }
            return Err(err(
                "supported only when the items are a small finite set (enum, const, boolean, or \
                 objects closed over keys whose values are such sets)",
            ));
        };
        let mut dom: Vec<serde_json::Value> = Vec::new();
        for v in vals {
            if !dom.iter().any(|w| json_eq(&v, w)) {
                dom.push(v);
            }
        }
        let d = dom.len();
        let max = a.max.unwrap_or(u32::MAX);
        // States: the sets of values used so far (each value at most once), reachable from
        // the empty set while under `maxItems`: 2^d without a bound, fewer with a small one
        // (a larger domain is fine when `maxItems` is small).
        let mut states: Vec<Vec<usize>> = vec![vec![]];
        let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
        index.insert(vec![], 0);
        let mut i = 0;
        while i < states.len() {
            if (states[i].len() as u32) < max {
                for v in 0..d {
                    if !states[i].contains(&v) {
                        let mut t = states[i].clone();
                        t.push(v);
                        t.sort_unstable();
                        if !index.contains_key(&t) {
                            if states.len() >= MAX_UNIQUE_STATES {
                                return Err(err(&format!(
                                    "{d} distinct item values under maxItems {} need more than \
                                     {MAX_UNIQUE_STATES} states (sets of values used)",
                                    a.max.map_or("unbounded".to_string(), |m| m.to_string())
                                )));
                            }
                            index.insert(t.clone(), states.len());
                            states.push(t);
                        }
                    }
                }
            }
            i += 1;
        }
        self.check_states(states.len())?;
        let elems: Vec<Expr> = dom
            .iter()
            .map(|v| self.r(&SExpr::and(&a.items, &SExpr::Const(v.to_string()))))
            .collect();
        for (si, set) in states.iter().enumerate() {
            let cnt = set.len() as u32;
            let mut alts = vec![];
            if cnt >= a.min {
                alts.push(Expr::Empty);
            }
            if cnt < max {
                for (v, e) in elems.iter().enumerate() {
                    if !set.contains(&v) {
                        let mut t = set.clone();
                        t.push(v);
                        t.sort_unstable();
                        let mut seq = self.sep(set.is_empty());
                        seq.push(e.clone());
                        seq.push(Expr::Rule(format!("{base}_{}", index[&t])));
                        alts.push(Expr::Seq(seq));
                    }
                }
            }
            self.push(format!("{base}_{si}"), alt(alts));
        }
        Ok(Expr::Seq(vec![lit("["), Expr::Rule(format!("{base}_0")), lit("]")]))
    }

    /// An object whose named properties come in any order, each at most once, the
    /// required ones all present: one parametric rule whose parameter has a bit per named
    /// property (bit 63: an entry was written, so the next needs a separator). Instances are
    /// made as the parser reaches them: 30 properties cost no 2^30 rules. Other keys
    /// (`additionalProperties`, `patternProperties`) may come anywhere between them.
    fn object_any_order(
        &mut self,
        base: &str,
        named: &[(String, SExpr, bool)],
        extra: Option<Expr>,
    ) -> Expr {
        let rule = format!("{base}_any");
        const FIRST_DONE: u32 = 63;
        let mut alts = Vec::new();
        // The end: every required property there.
        let mut done = ParamCond::True;
        for (i, (_, _, req)) in named.iter().enumerate() {
            if *req {
                done = ParamCond::And(Box::new(done), Box::new(ParamCond::BitSet(i as u32)));
            }
        }
        alts.push(Expr::If { cond: done, expr: Box::new(Expr::Empty) });
        let entries = named
            .iter()
            .enumerate()
            .map(|(i, (k, v, _))| {
                let entry = vec![
                    self.key_lexeme(RegexSpec::Literal(k.clone()), None),
                    sep(&self.key_sep),
                    self.r(v),
                ];
                (Some(i as u32), entry)
            })
            .chain(extra.map(|x| (None, vec![x])))
            .collect::<Vec<_>>();
        for (bit, entry) in entries {
            for first in [true, false] {
                let mut seq = if first { vec![] } else { vec![sep(&self.item_sep)] };
                seq.extend(entry.iter().cloned());
                let mut set = 1u64 << FIRST_DONE;
                let mut cond = if first {
                    ParamCond::BitClear(FIRST_DONE)
                } else {
                    ParamCond::BitSet(FIRST_DONE)
                };
                if let Some(b) = bit {
                    set |= 1 << b;
                    cond = ParamCond::And(Box::new(cond), Box::new(ParamCond::BitClear(b)));
                }
                seq.push(Expr::Call { rule: rule.clone(), arg: ParamExpr::BitOr(set) });
                alts.push(Expr::If { cond, expr: Box::new(Expr::Seq(seq)) });
            }
        }
        self.rules.push(Rule {
            name: rule.clone(),
            body: Expr::Alt(alts),
            attrs: RuleAttrs::default(),
            param: true,
        });
        Expr::Seq(vec![lit("{"), Expr::Call { rule, arg: ParamExpr::Value(0) }, lit("}")])
    }

    /// A member's value alternatives in state `s` (the `some` constraints met so far):
    /// the value `v` alone (state unchanged), and for each set `t` of the not yet met
    /// constraints the member's key falls under (`app`), `v` with their values (state
    /// `s | t`). The alternatives overlap; the grammar is ambiguous there, not wrong.
    fn members(&mut self, some: &[Exists], v: &SExpr, app: u32, s: u32) -> Vec<(Expr, u32)> {
        let open = app & !s;
        let mut out = Vec::new();
        let mut t = 0u32;
        loop {
            let value = if t == 0 {
                v.clone()
            } else {
                let mut parts = vec![v.clone()];
                for (j, e) in some.iter().enumerate() {
                    if t & (1 << j) != 0 {
                        parts.push(e.value.clone());
                    }
                }
                SExpr::all(parts)
            };
            if value != SExpr::False {
                out.push((self.r(&value), s | t));
            }
            // next subset of `open`
            t = (t.wrapping_sub(open)) & open;
            if t == 0 {
                break;
            }
        }
        out
    }

    fn object(&mut self, base: &str, o: &Obj) -> Result<Option<Expr>, Error> {
        if o.max.is_some_and(|m| m < o.min) {
            return Ok(None);
        }
        // named keys: `properties` order, other required keys, then the keys `some` names
        let mut keys: Vec<String> = Vec::new();
        let mut add = |k: &String| {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        };
        for c in &o.clauses {
            for (k, _) in &c.props {
                add(k);
            }
        }
        o.required.iter().for_each(&mut add);
        for e in &o.some {
            match &e.key {
                KeyLang::Other { props, .. } => props.iter().for_each(&mut add),
                KeyLang::Pattern(_) | KeyLang::NotNames(_) => {}
            }
        }
        let mut named: Vec<(String, SExpr, bool)> = Vec::new();
        for k in &keys {
            let v = self.ctx.value_for(o, k)?;
            let req = o.required.contains(k);
            if v == SExpr::False {
                if req {
                    return Ok(None);
                }
                continue;
            }
            named.push((k.clone(), v, req));
        }
        // other keys, split into regions by the patterns they match
        let mut patterns: Vec<String> = Vec::new();
        for c in &o.clauses {
            for (p, _) in &c.patterns {
                if !patterns.contains(p) {
                    patterns.push(p.clone());
                }
            }
        }
        // Patterns that every clause gives the same schema (or none) are one pattern, their
        // alternation: a key matching either or both gets that schema either way. The
        // regions below are per subset of patterns (2^k), so this is what lets an object
        // with many patterns of a few schemas compile.
        let o = &self.merge_patterns(o, &mut patterns)?;
        // The patterns of `some`, each its own region bit (after the merge: no clause may
        // stand for them).
        for e in &o.some {
            let ps = match &e.key {
                KeyLang::Pattern(p) => std::slice::from_ref(p),
                KeyLang::Other { patterns, .. } => patterns.as_slice(),
                KeyLang::NotNames(_) => &[],
            };
            for p in ps {
                if !patterns.contains(p) {
                    patterns.push(p.clone());
                }
            }
        }
        // The complements of `propertyNames` among `some`: more region bits, after the
        // patterns'.
        let splits: Vec<RegexSpec> = o
            .some
            .iter()
            .filter_map(|e| match &e.key {
                KeyLang::NotNames(rx) => Some(rx.as_spec().unwrap_or(RegexSpec::NoMatch)),
                _ => None,
            })
            .collect();
        if patterns.len() + splits.len() > MAX_PATTERNS {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("patternProperties: more than {MAX_PATTERNS} patterns on one object"),
            ));
        }
        let m = o.some.len();
        if m > MAX_SOME {
            return Err(Error::new(
                ErrorKind::Limit,
                format!(
                    "not: more than {MAX_SOME} members required at once by complements of \
                     `patternProperties` / `additionalProperties`"
                ),
            ));
        }
        // Which `some` constraints each named key falls under (a bit each).
        let mut named_app = Vec::with_capacity(named.len());
        for (k, _, _) in &named {
            let mut bits = 0u32;
            for (j, e) in o.some.iter().enumerate() {
                let hit = match &e.key {
                    KeyLang::Pattern(p) => self.ctx.key_matches(p, k)?,
                    KeyLang::Other { props, patterns } => {
                        let mut any = props.contains(k);
                        for p in patterns {
                            any = any || self.ctx.key_matches(p, k)?;
                        }
                        !any
                    }
                    KeyLang::NotNames(rx) => !self.ctx.rx_matches(rx, k)?,
                };
                if hit {
                    bits |= 1 << j;
                }
            }
            named_app.push(bits);
        }
        let mut regions: Vec<(RegexSpec, SExpr, u32)> = Vec::new();
        // Named keys are excluded outside the quotes, as the very lexemes of the named keys
        // (the same canonical quoting, so the exclusion is exact): a key lexeme of the shape
        // `"body" & ~("k1"|"k2"|…)` is one the slicer's symbolic containment check proves
        // contains long string slices, where walking the lexer's DFA would have to tell
        // every prefix of every named key apart.
        let not_named = RegexSpec::Not(Box::new(RegexSpec::Or(
            keys.iter().map(|k| self.key_spec(RegexSpec::Literal(k.clone()), None)).collect(),
        )));
        let np = patterns.len();
        for mask in 0u32..(1 << (np + splits.len())) {
            let mut parts = Vec::new();
            for c in &o.clauses {
                let hit: Vec<SExpr> = c
                    .patterns
                    .iter()
                    .filter(|(p, _)| {
                        patterns.iter().position(|q| q == p).is_some_and(|i| mask & (1 << i) != 0)
                    })
                    .map(|(_, s)| s.clone())
                    .collect();
                if hit.is_empty() {
                    parts.push(c.additional.clone());
                } else {
                    parts.extend(hit);
                }
            }
            let v = SExpr::all(parts);
            if v == SExpr::False || o.names.is_nothing() {
                continue;
            }
            let mut key = vec![LengthBounds::ANY.regex()];
            if let Some(r) = o.names.as_spec() {
                key.push(r);
            }
            for (i, p) in patterns.iter().enumerate() {
                let r = RegexSpec::Regex(p.clone());
                key.push(if mask & (1 << i) != 0 { r } else { RegexSpec::Not(Box::new(r)) });
            }
            for (i, r) in splits.iter().enumerate() {
                let r = r.clone();
                key.push(if mask & (1 << (np + i)) != 0 { r } else { RegexSpec::Not(Box::new(r)) });
            }
            // Nothing asked of the key but to be another key: any length.
            let length_only = (key.len() == 1).then_some(LengthBounds::ANY);
            let body = if key.len() == 1 {
                key.pop().unwrap_or(RegexSpec::NoMatch)
            } else {
                RegexSpec::And(key)
            };
            let key = if keys.is_empty() {
                self.key_spec(body, length_only)
            } else {
                RegexSpec::And(vec![self.key_spec(body, length_only), not_named.clone()])
            };
            let bit = |p: &String| patterns.iter().position(|q| q == p).map_or(0, |i| 1 << i);
            let mut app = 0u32;
            let mut split = np;
            for (j, e) in o.some.iter().enumerate() {
                let hit = match &e.key {
                    KeyLang::Pattern(p) => mask & bit(p) != 0,
                    KeyLang::Other { patterns, .. } => patterns.iter().all(|p| mask & bit(p) == 0),
                    KeyLang::NotNames(_) => {
                        split += 1;
                        mask & (1 << (split - 1)) == 0
                    }
                };
                if hit {
                    app |= 1 << j;
                }
            }
            regions.push((key, v, app));
        }
        let full = (1u32 << m) - 1;
        // A `some` no key can meet: no object.
        let reachable = named_app.iter().chain(regions.iter().map(|r| &r.2)).fold(0, |a, b| a | b);
        if reachable & full != full {
            return Ok(None);
        }
        if m == 0 && self.any_order && o.min == 0 && o.max.is_none() && named.len() <= ANY_ORDER_MAX
        {
            let extras: Vec<Expr> = regions
                .iter()
                .map(|(k, v, _)| {
                    Expr::Seq(vec![Expr::Lexeme(k.clone()), sep(&self.key_sep), self.r(v)])
                })
                .collect();
            let extra = if extras.is_empty() { None } else { Some(alt(extras)) };
            return Ok(Some(self.object_any_order(base, &named, extra)));
        }
        // states (i, c, s): before named key i, c entries so far (capped), the `some`
        // constraints met so far (bits)
        let nk = named.len();
        let cap = match o.max {
            Some(m) => m,
            None => o.min.max(1),
        };
        self.check_states(((nk + 1) * (cap as usize + 1)) << m)?;
        let next = |c: u32| if o.max.is_none() { (c + 1).min(cap) } else { c + 1 };
        let name = |i: usize, c: u32, s: u32| {
            if m == 0 {
                format!("{base}_{i}_{c}")
            } else {
                format!("{base}_{i}_{c}_{s}")
            }
        };
        #[allow(clippy::needless_range_loop)] // i indexes states, named[i] only below nk
        for i in 0..=nk {
            for c in 0..=cap {
                for s in 0..=full {
                    let mut alts = vec![];
                    let can_add = o.max.is_none_or(|m| c < m);
                    if i < nk {
                        let (k, v, req) = &named[i];
                        if can_add {
                            for (val, s2) in self.members(&o.some, v, named_app[i], s) {
                                let mut seq = self.sep(c == 0);
                                seq.push(self.key_lexeme(RegexSpec::Literal(k.clone()), None));
                                seq.push(sep(&self.key_sep));
                                seq.push(val);
                                seq.push(Expr::Rule(name(i + 1, next(c), s2)));
                                alts.push(Expr::Seq(seq));
                            }
                        }
                        if !req {
                            alts.push(Expr::Rule(name(i + 1, c, s)));
                        }
                    } else {
                        if c >= o.min && s == full {
                            alts.push(Expr::Empty);
                        }
                        if can_add && !regions.is_empty() {
                            // the members by the state they lead to
                            let mut by_next: Vec<(u32, Vec<Expr>)> = Vec::new();
                            for (key, v, app) in &regions {
                                for (val, s2) in self.members(&o.some, v, *app, s) {
                                    let e = Expr::Seq(vec![
                                        Expr::Lexeme(key.clone()),
                                        sep(&self.key_sep),
                                        val,
                                    ]);
                                    match by_next.iter_mut().find(|(t, _)| *t == s2) {
                                        Some((_, v)) => v.push(e),
                                        None => by_next.push((s2, vec![e])),
                                    }
                                }
                            }
                            for (s2, es) in by_next {
                                let mut seq = self.sep(c == 0);
                                seq.push(alt(es));
                                seq.push(Expr::Rule(name(nk, next(c), s2)));
                                alts.push(Expr::Seq(seq));
                            }
                        }
                    }
                    self.push(name(i, c, s), alt(alts));
                }
            }
        }
        Ok(Some(Expr::Seq(vec![lit("{"), Expr::Rule(name(0, 0, 0)), lit("}")])))
    }
}
