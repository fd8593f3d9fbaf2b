//! IR → [`earley::Cfg`] + [`lexer::LexerSpec`]: EBNF lowered to plain rules (fresh
//! nonterminals for nested groups, left recursion for `*` and `+`, O(log n) rules for
//! counted repeats), lexemes deduplicated, special tokens resolved against the vocabulary.

use hashbrown::HashMap;
use std::sync::Arc;

use earley::{Cfg, CfgBuilder, CfgLimits, SkipClass, SymIdx, SymbolProps, TemplateIdx};
use lexer::{LexemeClass, LexemeIdx, LexemeKind, LexemeSet, LexemeSpec, LexerSpec, RegexSpec};
use toktrie::Vocabulary;

mod templates;

use crate::ir::{Expr, Grammar, GrammarOptions, GrammarSet, SpecialToken};
use crate::{Error, ErrorKind};

/// Limits of grammar compilation; each is an [`ErrorKind::Limit`] error when hit.
#[derive(Clone, Debug)]
pub struct CompileLimits {
    /// Nesting depth of rule bodies (default 150).
    pub max_depth: usize,
    /// Largest bound of a counted repeat `{m,n}` on rules (default 100,000).
    pub max_repeat: u32,
    /// Size of the flat rule array (default 2,000,000).
    pub max_rule_array: usize,
    /// Number of lexemes (default 100,000).
    pub max_lexemes: usize,
}

impl Default for CompileLimits {
    fn default() -> Self {
        CompileLimits {
            max_depth: 150,
            max_repeat: 100_000,
            max_rule_array: 2_000_000,
            max_lexemes: 100_000,
        }
    }
}

/// A compiled grammar: what a parser needs, immutable and shareable.
#[derive(Clone, Debug)]
pub struct CompiledGrammar {
    /// The context-free grammar.
    pub cfg: Arc<Cfg>,
    /// The lexemes.
    pub spec: Arc<LexerSpec>,
    /// Lexemes skipped between others (`%ignore`), of every class.
    pub skip: LexemeSet,
    /// The lexemes and skip lexemes of each lexeme class: grammars of the set with the
    /// same `%ignore` share a class; the first is the top grammar's.
    pub skip_classes: Vec<SkipClass>,
    /// Skip lexemes allowed at most once between two lexemes (`skip_repetition: "once"`,
    /// JSON `whitespace_pattern`).
    pub skip_once: LexemeSet,
    /// The top grammar's options.
    pub options: GrammarOptions,
    /// Lexemes of `[max_tokens=N]` rules and their N (see `earley::ParserOptions`).
    pub lexeme_max_tokens: Vec<(LexemeIdx, usize)>,
    /// What such lexemes may still read once their tokens are used (`RuleAttrs::finish`).
    pub lexeme_finish: Vec<(LexemeIdx, RegexSpec)>,
}

/// Compiles a grammar set. `vocab` resolves special tokens by name and checks ids; without
/// it, special tokens are an error.
pub fn compile(
    set: &GrammarSet,
    vocab: Option<&Vocabulary>,
    limits: &CompileLimits,
) -> Result<CompiledGrammar, Error> {
    if set.grammars.is_empty() {
        return Err(Error::new(ErrorKind::Name, "the grammar set is empty"));
    }
    // Lexeme classes: one per distinct (%ignore, once) among the grammars (LLGuidance
    // merges grammars whose skip is the same); the top grammar's is class 0.
    let mut class_keys: Vec<(Vec<RegexSpec>, bool)> = Vec::new();
    let mut grammar_class = Vec::with_capacity(set.grammars.len());
    for g in &set.grammars {
        let key = (g.ignore.iter().map(normalized).collect::<Vec<_>>(), g.options.ignore_once);
        let c = match class_keys.iter().position(|k| *k == key) {
            Some(c) => c,
            None => {
                class_keys.push(key);
                class_keys.len() - 1
            }
        };
        if c > u16::MAX as usize {
            return Err(Error::new(ErrorKind::Limit, "more than 65,536 lexeme classes"));
        }
        grammar_class.push(LexemeClass(c as u16));
    }
    let ancestors = class_ancestors(set, &grammar_class, class_keys.len());
    let mut l = Lowering {
        set,
        grammar_class,
        class: LexemeClass(0),
        vocab,
        limits,
        b: CfgBuilder::new(),
        spec: LexerSpec::new(),
        lexemes: HashMap::new(),
        max_tokens: Vec::new(),
        finish: Vec::new(),
        next_finish: None,
        next_limit: None,
        lexeme_syms: HashMap::new(),
        rule_syms: HashMap::new(),
        grammar_starts: HashMap::new(),
        templates: HashMap::new(),
        grammar_entries: HashMap::new(),
        powers: HashMap::new(),
        fresh: 0,
        empty: None,
    };
    // Symbols for all rules of all grammars first (rules may refer forward).
    for (gi, g) in set.grammars.iter().enumerate() {
        for r in &g.rules {
            let name = l.qualified(gi, &r.name);
            if l.rule_syms.contains_key(&NameKey(gi, &r.name))
                || l.templates.contains_key(&NameKey(gi, &r.name))
            {
                return Err(Error::new(ErrorKind::Name, format!("rule {name} is defined twice")));
            }
            if r.param {
                if r.name == g.start {
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!("the start rule {name} cannot be parametric"),
                    ));
                }
                let t = l.b.template(&name);
                l.templates.insert((gi, r.name.clone()), t);
                continue;
            }
            let s = l.b.nonterminal(&name);
            l.rule_syms.insert((gi, r.name.clone()), s);
        }
        let start = l.rule_syms.get(&NameKey(gi, &g.start)).copied().ok_or_else(|| {
            Error::new(
                ErrorKind::Name,
                format!("start rule {} is not defined", l.qualified(gi, &g.start)),
            )
        })?;
        if let Some(n) = &g.name {
            l.grammar_starts.insert(n.clone(), (gi, start));
        }
    }
    for (gi, g) in set.grammars.iter().enumerate() {
        l.class = l.grammar_class[gi];
        for r in &g.rules {
            lexer::interrupt::check()?;
            if r.param {
                let t = l.templates[&NameKey(gi, &r.name)];
                if let Err(e) = l.lower_template(gi, &r.body, t, 0) {
                    return Err(e.context(&format!("in rule {}", l.qualified(gi, &r.name))));
                }
                continue;
            }
            let lhs = l.rule_syms[&NameKey(gi, &r.name)];
            if let Err(e) = l.lower_rule(gi, g, r, lhs) {
                return Err(e.context(&format!("in rule {}", l.qualified(gi, &r.name))));
            }
        }
    }
    let top = &set.grammars[0];
    // Skip lexemes by class: each grammar's %ignore applies where its lexemes are allowed.
    let mut skip = LexemeSet::new();
    let mut skip_once = LexemeSet::new();
    let mut skip_classes = vec![SkipClass::default(); class_keys.len()];
    for (i, lx) in l.spec.lexemes.iter().enumerate() {
        skip_classes[lx.class.0 as usize].members.insert(LexemeIdx::new(i));
    }
    for (c, (ignore, once)) in class_keys.iter().enumerate() {
        skip_classes[c].ancestors = ancestors[c].clone();
        for (i, rx) in ignore.iter().enumerate() {
            let rx = if nullable(rx, 0) {
                RegexSpec::And(vec![rx.clone(), RegexSpec::Not(Box::new(RegexSpec::Empty))])
            } else {
                rx.clone()
            };
            let kind = if *once { LexemeKind::SkipOnce } else { LexemeKind::Skip };
            let name = if c == 0 { format!("%ignore{i}") } else { format!("%ignore{i}.{c}") };
            let idx =
                l.spec.push(LexemeSpec { name, regex: rx, kind, class: LexemeClass(c as u16) });
            skip.insert(idx);
            if *once {
                skip_once.insert(idx);
            }
            skip_classes[c].skip.insert(idx);
        }
    }
    if l.spec.len() > limits.max_lexemes {
        return Err(Error::new(
            ErrorKind::Limit,
            format!("{} lexemes, limit {}", l.spec.len(), limits.max_lexemes),
        ));
    }
    let start = l.rule_syms[&NameKey(0, &top.start)];
    let cfg =
        l.b.build(start, &CfgLimits { max_rule_array: limits.max_rule_array })
            .map_err(|e| Error::new(ErrorKind::Value, e.to_string()))?;
    Ok(CompiledGrammar {
        cfg: Arc::new(cfg),
        spec: Arc::new(l.spec),
        skip,
        skip_classes,
        skip_once,
        // A row may need what any of the grammars asks (a `%json` inside Lark).
        options: GrammarOptions {
            row_items: set.grammars.iter().filter_map(|g| g.options.row_items).max(),
            ..top.options.clone()
        },
        lexeme_max_tokens: l.max_tokens,
        lexeme_finish: l.finish,
    })
}

impl CompiledGrammar {
    /// Parser options for this grammar: its skip lexemes, `allow_initial_skip`, the token
    /// limits of `[max_tokens]` rules, and the given EOS tokens.
    pub fn parser_options(&self, eos: Vec<toktrie::TokenId>) -> earley::ParserOptions {
        earley::ParserOptions {
            skip: self.skip.clone(),
            skip_classes: self.skip_classes.clone(),
            skip_once: self.skip_once.clone(),
            eos,
            allow_initial_skip: self.options.allow_initial_skip,
            lexeme_max_tokens: self.lexeme_max_tokens.clone(),
            lexeme_finish: self.lexeme_finish.clone(),
            limits: self.parser_limits(),
            ..Default::default()
        }
    }

    /// The parser's limits: the default ones, with as many items per row as the grammar
    /// asks ([`GrammarOptions::row_items`]), up to [`MAX_ROW_ITEMS`].
    pub fn parser_limits(&self) -> earley::ParserLimits {
        let mut limits = earley::ParserLimits::default();
        if let Some(n) = self.options.row_items {
            limits.max_items_in_row = limits.max_items_in_row.max(n.min(MAX_ROW_ITEMS));
        }
        limits
    }
}

/// The most items per parser row a grammar may ask for ([`GrammarOptions::row_items`]): an
/// object of ~33,000 optional properties (a row costs ~0.1 µs an item to build).
pub const MAX_ROW_ITEMS: usize = 100_000;

/// A lexeme is shared by every use of the same regex, kind, token limit (with its finish)
/// and class.
type LexemeKey = (RegexSpec, LexemeKind, Option<usize>, Option<RegexSpec>, LexemeClass);

/// A [`LexemeKey`] by reference: a lexeme is looked up without a copy of its regex (a
/// JSON Schema names the same lexemes again and again: ~9,000 lookups, ~1,100 lexemes in a
/// Kubernetes schema, whose copies and drops were ~5 % of its compile). Hashes as the
/// owned key does (a tuple and a tuple struct hash their fields in order; `&T` as `T`).
#[derive(Hash)]
struct LexemeKeyRef<'a>(
    &'a RegexSpec,
    LexemeKind,
    Option<usize>,
    Option<&'a RegexSpec>,
    LexemeClass,
);

impl hashbrown::Equivalent<LexemeKey> for LexemeKeyRef<'_> {
    fn equivalent(&self, k: &LexemeKey) -> bool {
        *self.0 == k.0 && self.1 == k.1 && self.2 == k.2 && self.3 == k.3.as_ref() && self.4 == k.4
    }
}

struct Lowering<'a> {
    set: &'a GrammarSet,
    /// The lexeme class of each grammar of the set.
    grammar_class: Vec<LexemeClass>,
    /// The class of the grammar being lowered: its lexemes belong to it.
    class: LexemeClass,
    vocab: Option<&'a Vocabulary>,
    limits: &'a CompileLimits,
    b: CfgBuilder,
    spec: LexerSpec,
    lexemes: HashMap<LexemeKey, LexemeIdx>,
    /// Lexemes limited to a number of tokens (`[max_tokens=N]` rules).
    max_tokens: Vec<(LexemeIdx, usize)>,
    /// What limited lexemes may still read once out of tokens (`RuleAttrs::finish`).
    finish: Vec<(LexemeIdx, RegexSpec)>,
    /// The finish the next limited lexeme created gets.
    next_finish: Option<RegexSpec>,
    /// The token limit the next lexeme created gets (its own lexeme, never shared with an
    /// unlimited one).
    next_limit: Option<usize>,
    lexeme_syms: HashMap<LexemeIdx, SymIdx>,
    rule_syms: HashMap<(usize, String), SymIdx>,
    grammar_starts: HashMap<String, (usize, SymIdx)>,
    /// The symbol entering each sub-grammar (`@name`), by name.
    grammar_entries: HashMap<String, SymIdx>,
    /// Parametric rules by (grammar, name).
    templates: HashMap<(usize, String), TemplateIdx>,
    /// For a symbol x: x, xx, xxxx, ... (exactly 2^i repetitions).
    powers: HashMap<SymIdx, Vec<SymIdx>>,
    fresh: usize,
    empty: Option<SymIdx>,
}

/// A (grammar, rule name) key borrowed: looks up the maps keyed by `(usize, String)`
/// without a copy of the name (hashed as the owned key is: the index, then the string).
#[derive(Hash)]
struct NameKey<'a>(usize, &'a str);

impl hashbrown::Equivalent<(usize, String)> for NameKey<'_> {
    fn equivalent(&self, key: &(usize, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

impl Lowering<'_> {
    fn qualified(&self, gi: usize, name: &str) -> String {
        match (gi, &self.set.grammars[gi].name) {
            (0, _) | (_, None) => name.to_string(),
            (_, Some(g)) => format!("@{g}.{name}"),
        }
    }

    fn fresh_nt(&mut self, hint: &str) -> SymIdx {
        self.fresh += 1;
        let name = format!("{hint}#{}", self.fresh);
        self.b.nonterminal(&name)
    }

    /// The symbol for a lexeme. A lexeme never matches the empty string (the parser never
    /// ends one at its start), so a nullable regex R becomes `X -> ε | (R & non-empty)`.
    /// (`name` makes the lexeme's name: only a new lexeme or symbol needs it.)
    fn lexeme_sym(
        &mut self,
        name: &dyn Fn() -> String,
        rx: &RegexSpec,
        kind: LexemeKind,
    ) -> SymIdx {
        if nullable(rx, 0) {
            let non_empty =
                RegexSpec::And(vec![rx.clone(), RegexSpec::Not(Box::new(RegexSpec::Empty))]);
            let t = self.plain_lexeme_sym(name, &non_empty, kind);
            let x = self.fresh_nt("maybe");
            self.b.rule(x, vec![]);
            self.b.rule(x, vec![t]);
            return x;
        }
        self.plain_lexeme_sym(name, rx, kind)
    }

    fn plain_lexeme_sym(
        &mut self,
        name: &dyn Fn() -> String,
        rx: &RegexSpec,
        kind: LexemeKind,
    ) -> SymIdx {
        let found = self.lexemes.get(&LexemeKeyRef(
            rx,
            kind,
            self.next_limit,
            self.next_finish.as_ref(),
            self.class,
        ));
        let idx = match found {
            Some(&i) => i,
            None => {
                let key = (rx.clone(), kind, self.next_limit, self.next_finish.clone(), self.class);
                let i = self.spec.push(LexemeSpec {
                    name: name(),
                    regex: rx.clone(),
                    kind,
                    class: self.class,
                });
                if let Some(n) = self.next_limit {
                    self.max_tokens.push((i, n));
                    if let Some(f) = &self.next_finish {
                        self.finish.push((i, f.clone()));
                    }
                }
                self.lexemes.insert(key, i);
                i
            }
        };
        if let Some(&s) = self.lexeme_syms.get(&idx) {
            return s;
        }
        let s = self.b.lexeme(&name(), idx);
        self.lexeme_syms.insert(idx, s);
        s
    }

    fn lower_rule(
        &mut self,
        gi: usize,
        g: &Grammar,
        r: &crate::ir::Rule,
        lhs: SymIdx,
    ) -> Result<(), Error> {
        let a = &r.attrs;
        // The stop or suffix, for captures: a literal string, or a regex matched by a
        // lexeme of its own (never allowed by the parser; captures use it to split).
        let stop = a.stop.as_ref().or(a.suffix.as_ref());
        let stop_literal = match stop {
            Some(RegexSpec::Literal(s)) if !s.is_empty() => Some(s.as_bytes().to_vec()),
            _ => None,
        };
        if a.stop_capture.is_some() && stop.is_none() {
            return Err(Error::new(
                ErrorKind::Value,
                format!("rule {}: stop_capture requires stop= or suffix=", r.name),
            ));
        }
        let captured = a.capture.is_some() || a.stop_capture.is_some();
        let stop_lexeme = match stop {
            Some(RegexSpec::Literal(_)) | None => None,
            Some(rx) if captured => Some(self.spec.push(LexemeSpec {
                name: format!("{}%stop", r.name),
                regex: rx.clone(),
                kind: LexemeKind::Greedy,
                class: self.class,
            })),
            Some(_) => None,
        };
        let sub_grammar = matches!(r.body, Expr::Grammar(_));
        if a.max_tokens == Some(0) && a.stop.is_none() && a.suffix.is_none() {
            // No tokens at all: the empty string (as LLGuidance).
            self.b.rule(lhs, vec![]);
        } else if a.is_lexeme() && (!sub_grammar || a.is_lazy()) {
            let body = self.to_regex(g, &r.body, 0)?;
            let rx = match (&a.stop, &a.suffix) {
                (Some(_), Some(_)) => {
                    return Err(Error::new(
                        ErrorKind::Value,
                        "a rule cannot have both stop and suffix",
                    ))
                }
                (Some(RegexSpec::Literal(s)), None) | (None, Some(RegexSpec::Literal(s)))
                    if s.is_empty() =>
                {
                    body
                }
                (Some(s), None) | (None, Some(s)) => RegexSpec::Concat(vec![body, s.clone()]),
                (None, None) => body,
            };
            let kind = if a.is_lazy() { LexemeKind::Lazy } else { LexemeKind::Greedy };
            self.next_limit = a.max_tokens;
            self.next_finish = a.finish.clone().filter(|_| a.max_tokens.is_some());
            let t = self.lexeme_sym(&|| r.name.to_uppercase(), &rx, kind);
            self.next_limit = None;
            self.next_finish = None;
            self.b.rule(lhs, vec![t]);
        } else {
            let alts = self.alternatives(gi, &r.body, 0)?;
            for alt in alts {
                self.b.rule(lhs, alt);
            }
        }
        if a.capture.is_some()
            || a.max_tokens.is_some()
            || a.temperature.is_some()
            || a.stop_capture.is_some()
        {
            self.b.set_props(
                lhs,
                SymbolProps {
                    capture: a.capture.clone(),
                    max_tokens: a.max_tokens,
                    temperature: a.temperature,
                    stop: stop_literal,
                    stop_capture: a.stop_capture.clone(),
                    stop_lexeme,
                    enters_class: None,
                },
            );
        }
        Ok(())
    }

    fn check_depth(&self, depth: usize) -> Result<(), Error> {
        if depth > self.limits.max_depth {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("rule nesting deeper than {} levels", self.limits.max_depth),
            ));
        }
        Ok(())
    }

    fn alternatives(
        &mut self,
        gi: usize,
        e: &Expr,
        depth: usize,
    ) -> Result<Vec<Vec<SymIdx>>, Error> {
        let alts: Vec<&Expr> = match e {
            Expr::Alt(alts) => alts.iter().collect(),
            _ => vec![e],
        };
        let mut out = Vec::new();
        for a in alts {
            match a {
                // Outside a parametric rule the parameter is 0 (`%if true` is common).
                Expr::If { cond, expr } => {
                    if cond.eval(0) {
                        out.push(self.seq(gi, expr, depth + 1)?);
                    }
                }
                _ => out.push(self.seq(gi, a, depth + 1)?),
            }
        }
        Ok(out)
    }

    fn seq(&mut self, gi: usize, e: &Expr, depth: usize) -> Result<Vec<SymIdx>, Error> {
        self.flat_seq(gi, e, depth, Self::sym)
    }

    /// The items of `e` flattened out of nested sequences, each lowered by `one` (a plain
    /// symbol, or a template symbol).
    fn flat_seq<T>(
        &mut self,
        gi: usize,
        e: &Expr,
        depth: usize,
        one: fn(&mut Self, usize, &Expr, usize) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        self.flat_seq_into(gi, e, depth, one, &mut out)?;
        Ok(out)
    }

    fn flat_seq_into<T>(
        &mut self,
        gi: usize,
        e: &Expr,
        depth: usize,
        one: fn(&mut Self, usize, &Expr, usize) -> Result<T, Error>,
        out: &mut Vec<T>,
    ) -> Result<(), Error> {
        self.check_depth(depth)?;
        match e {
            Expr::Empty => {}
            Expr::Seq(xs) => {
                for x in xs {
                    self.flat_seq_into(gi, x, depth + 1, one, out)?;
                }
            }
            _ => out.push(one(self, gi, e, depth + 1)?),
        }
        Ok(())
    }

    fn sym(&mut self, gi: usize, e: &Expr, depth: usize) -> Result<SymIdx, Error> {
        self.check_depth(depth)?;
        let g = &self.set.grammars[gi];
        match e {
            Expr::Rule(name) => self
                .rule_syms
                .get(&NameKey(gi, name))
                .copied()
                .ok_or_else(|| Error::new(ErrorKind::Name, format!("unknown rule {name}"))),
            Expr::Terminal(name) => {
                let t = g.terminals.iter().find(|t| &t.name == name).ok_or_else(|| {
                    Error::new(ErrorKind::Name, format!("unknown terminal {name}"))
                })?;
                let kind = if t.lazy { LexemeKind::Lazy } else { LexemeKind::Greedy };
                Ok(self.lexeme_sym(&|| name.clone(), &t.regex, kind))
            }
            Expr::Lexeme(rx) => {
                let name = || match rx {
                    RegexSpec::Literal(s) => format!("{s:?}"),
                    RegexSpec::Regex(s) => format!("/{s}/"),
                    _ => "lexeme".to_string(),
                };
                Ok(self.lexeme_sym(&name, rx, LexemeKind::Greedy))
            }
            Expr::Special(sp) => {
                let ranges = self.special_ranges(sp)?;
                Ok(self.b.special_tokens(&format!("{sp:?}"), ranges))
            }
            Expr::Grammar(name) => {
                if let Some(&w) = self.grammar_entries.get(name) {
                    return Ok(w);
                }
                let &(gj, start) = self.grammar_starts.get(name).ok_or_else(|| {
                    Error::new(ErrorKind::Name, format!("unknown grammar @{name}"))
                })?;
                // A symbol that enters the sub-grammar, marked with its lexeme class (the
                // parser's skip rules look at the sub-grammars a row enters).
                let w = self.fresh_nt(&format!("@{name}"));
                self.b.rule(w, vec![start]);
                let class = self.grammar_class[gj].0 as usize;
                self.b
                    .set_props(w, SymbolProps { enters_class: Some(class), ..Default::default() });
                self.grammar_entries.insert(name.clone(), w);
                Ok(w)
            }
            Expr::Empty => Ok(self.empty_sym()),
            Expr::Text(t) => {
                let e = self.text_expr(t);
                self.sym(gi, &e, depth + 1)
            }
            Expr::Call { rule, arg } => {
                let t = self.template(gi, rule)?;
                if arg.uses_param() {
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!("{rule}::{arg:?} uses a parameter outside a parametric rule"),
                    ));
                }
                Ok(self.b.instance(t, arg.eval(0)))
            }
            Expr::Seq(_) | Expr::Alt(_) | Expr::If { .. } => {
                let alts = self.alternatives(gi, e, depth + 1)?;
                let x = self.fresh_nt("group");
                for alt in alts {
                    self.b.rule(x, alt);
                }
                Ok(x)
            }
            Expr::Repeat { expr, min, max } => {
                let x = self.sym(gi, expr, depth + 1)?;
                self.repeat(x, *min, *max)
            }
        }
    }

    /// [`Expr::Text`]: the text split at the names of the vocabulary's special tokens, each
    /// name either its text or the token (plain text without a vocabulary).
    fn text_expr(&self, t: &str) -> Expr {
        let lit = |s: &str| {
            if s.is_empty() {
                Expr::Empty
            } else {
                Expr::Lexeme(RegexSpec::Literal(s.to_string()))
            }
        };
        let Some(vocab) = self.vocab else { return lit(t) };
        let names: Vec<&str> = vocab
            .special_tokens()
            .iter()
            .filter_map(|id| vocab.special_name(id))
            .filter(|n| !n.is_empty() && t.contains(*n))
            .collect();
        if names.is_empty() {
            return lit(t);
        }
        let mut parts = Vec::new();
        let mut rest = t;
        let mut pending = String::new();
        while !rest.is_empty() {
            // The longest special name starting here.
            match names.iter().filter(|n| rest.starts_with(**n)).max_by_key(|n| n.len()) {
                Some(n) => {
                    parts.push(lit(&std::mem::take(&mut pending)));
                    parts.push(Expr::Alt(vec![
                        lit(n),
                        Expr::Special(SpecialToken::Name(n.to_string())),
                    ]));
                    rest = &rest[n.len()..];
                }
                None => {
                    let c = rest.chars().next().expect("non-empty");
                    pending.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        parts.push(lit(&pending));
        Expr::Seq(parts)
    }

    fn empty_sym(&mut self) -> SymIdx {
        if let Some(s) = self.empty {
            return s;
        }
        let s = self.fresh_nt("empty");
        self.b.rule(s, vec![]);
        self.empty = Some(s);
        s
    }

    /// `x{min,max}`.
    fn repeat(&mut self, x: SymIdx, min: u32, max: Option<u32>) -> Result<SymIdx, Error> {
        if let Some(max) = max {
            if max < min {
                return Err(Error::new(
                    ErrorKind::Value,
                    format!("bad repeat range {{{min},{max}}}"),
                ));
            }
        }
        let bound = max.unwrap_or(min);
        if bound > self.limits.max_repeat {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("repeat bound {bound} is above the limit {}", self.limits.max_repeat),
            ));
        }
        let r = self.fresh_nt("repeat");
        match (min, max) {
            (0, None) => {
                self.b.rule(r, vec![]);
                self.b.rule(r, vec![r, x]);
            }
            (1, None) => {
                self.b.rule(r, vec![x]);
                self.b.rule(r, vec![r, x]);
            }
            (m, None) => {
                let star = self.repeat(x, 0, None)?;
                let mut rhs = self.exactly(x, m);
                rhs.push(star);
                self.b.rule(r, rhs);
            }
            (m, Some(n)) => {
                let mut rhs = self.exactly(x, m);
                if n > m {
                    rhs.push(self.up_to(x, n - m));
                }
                self.b.rule(r, rhs);
            }
        }
        Ok(r)
    }

    /// The symbol for exactly 2^i copies of x.
    fn power(&mut self, x: SymIdx, i: usize) -> SymIdx {
        let mut p = self.powers.remove(&x).unwrap_or_else(|| vec![x]);
        while p.len() <= i {
            let prev = *p.last().expect("starts with x");
            let s = self.fresh_nt("pow");
            self.b.rule(s, vec![prev, prev]);
            p.push(s);
        }
        let s = p[i];
        self.powers.insert(x, p);
        s
    }

    /// Symbols whose concatenation is exactly k copies of x (binary decomposition).
    fn exactly(&mut self, x: SymIdx, k: u32) -> Vec<SymIdx> {
        (0..32).filter(|i| k >> i & 1 == 1).map(|i| self.power(x, i)).collect()
    }

    /// A symbol for 0..=k copies of x, unambiguous, O(log k) rules: with 2^t - 1 <= k,
    /// optional powers 2^0..2^(t-1) give every count 0..2^t-1 once; counts 2^t..k are
    /// x^(2^t) followed by 0..k-2^t more.
    fn up_to(&mut self, x: SymIdx, k: u32) -> SymIdx {
        let u = self.fresh_nt("upto");
        if k == 0 {
            self.b.rule(u, vec![]);
            return u;
        }
        let t = 31 - (k + 1).leading_zeros(); // 2^t <= k + 1
        let mut low = Vec::new();
        for i in 0..t as usize {
            let p = self.power(x, i);
            let opt = self.fresh_nt("opt");
            self.b.rule(opt, vec![]);
            self.b.rule(opt, vec![p]);
            low.push(opt);
        }
        self.b.rule(u, low);
        let full = (1u32 << t) - 1;
        if k > full {
            let p = self.power(x, t as usize);
            let rest = self.up_to(x, k - full - 1);
            self.b.rule(u, vec![p, rest]);
        }
        u
    }

    fn special_ranges(&self, sp: &SpecialToken) -> Result<Vec<(u32, u32)>, Error> {
        let vocab = self.vocab.ok_or_else(|| {
            Error::new(ErrorKind::Value, "special tokens in a grammar need a tokenizer")
        })?;
        let check = |ranges: &Vec<(u32, u32)>| -> Result<(), Error> {
            for &(a, b) in ranges {
                if a > b || b as usize >= vocab.len() {
                    return Err(Error::new(
                        ErrorKind::Value,
                        format!(
                            "token id range {a}-{b} is not within the vocabulary of {} ids",
                            vocab.len()
                        ),
                    ));
                }
            }
            Ok(())
        };
        match sp {
            SpecialToken::NameIfAny(n) => {
                Ok(vocab.special_token(n).map(|t| vec![(t.0, t.0)]).unwrap_or_default())
            }
            SpecialToken::Spelled(text) => Ok(vocab
                .iter()
                .filter(|&(t, b)| b == text.as_bytes() && !vocab.is_special(t))
                .map(|(t, _)| (t.0, t.0))
                .collect()),
            SpecialToken::Name(n) => vocab
                .special_token(n)
                .map(|t| vec![(t.0, t.0)])
                .ok_or_else(|| Error::new(ErrorKind::Name, format!("unknown special token {n}"))),
            SpecialToken::Ids(r) => {
                check(r)?;
                Ok(r.clone())
            }
            // As LLGuidance: `<[^...]>` and `<[*]>` range over every token, regular ones
            // included; EOS stays "allowed iff accepting" (DESIGN.md), never a terminal.
            SpecialToken::NotIds(r) => {
                check(r)?;
                Ok(all_tokens_but(r.clone(), vocab))
            }
            SpecialToken::Any => Ok(all_tokens_but(Vec::new(), vocab)),
            SpecialToken::AnyTokenExcept(inner) => {
                Ok(all_tokens_but(self.special_ranges(inner)?, vocab))
            }
            SpecialToken::AnyTokenExceptAll(list) => {
                let mut ranges = Vec::new();
                for t in list {
                    ranges.extend(self.special_ranges(t)?);
                }
                Ok(all_tokens_but(ranges, vocab))
            }
        }
    }

    /// A terminal-like body as one regex (for `[lazy]`, `[stop=...]` rules).
    fn to_regex(&self, g: &Grammar, e: &Expr, depth: usize) -> Result<RegexSpec, Error> {
        self.check_depth(depth)?;
        Ok(match e {
            Expr::Empty => RegexSpec::Empty,
            Expr::Text(t) => RegexSpec::Literal(t.clone()),
            Expr::Seq(xs) => RegexSpec::Concat(
                xs.iter().map(|x| self.to_regex(g, x, depth + 1)).collect::<Result<_, _>>()?,
            ),
            Expr::Alt(xs) => RegexSpec::Or(
                xs.iter().map(|x| self.to_regex(g, x, depth + 1)).collect::<Result<_, _>>()?,
            ),
            Expr::Repeat { expr, min, max } => RegexSpec::Repeat {
                expr: Box::new(self.to_regex(g, expr, depth + 1)?),
                min: *min,
                max: *max,
            },
            Expr::Lexeme(rx) => rx.clone(),
            Expr::Terminal(name) => {
                g.terminals.iter().find(|t| &t.name == name).map(|t| t.regex.clone()).ok_or_else(
                    || Error::new(ErrorKind::Name, format!("unknown terminal {name}")),
                )?
            }
            Expr::Rule(name) => {
                return Err(Error::new(
                    ErrorKind::Value,
                    format!(
                        "rule {name} inside a lazy/stop/max_tokens rule: its body must use terminals only"
                    ),
                ))
            }
            Expr::Special(_) | Expr::Grammar(_) | Expr::Call { .. } | Expr::If { .. } => {
                return Err(Error::new(
                    ErrorKind::Value,
                    "special tokens, @grammars and parametric rules cannot be inside a \
                     lazy/stop/max_tokens rule",
                ))
            }
        })
    }
}

/// A skip regex in a form where equal languages written alike compare equal (`[ \t]` and
/// `[\x20\x09]`): `/regex/` leaves printed back from their parsed form.
fn normalized(rx: &RegexSpec) -> RegexSpec {
    match rx {
        RegexSpec::Regex(s) => match regex_syntax::ParserBuilder::new().build().parse(s) {
            Ok(h) => RegexSpec::Regex(h.to_string()),
            Err(_) => rx.clone(),
        },
        _ => rx.clone(),
    }
}

/// For each lexeme class, the classes of grammars that use one of its grammars (`@name`,
/// directly or not), nearest first (breadth-first over the reversed use graph).
fn class_ancestors(set: &GrammarSet, class: &[LexemeClass], n: usize) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> = set
        .grammars
        .iter()
        .enumerate()
        .filter_map(|(i, g)| g.name.as_deref().map(|n| (n, i)))
        .collect();
    // users[c]: classes whose grammars refer to a grammar of class c.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (gi, g) in set.grammars.iter().enumerate() {
        let mut stack: Vec<&Expr> = g.rules.iter().map(|r| &r.body).collect();
        while let Some(e) = stack.pop() {
            match e {
                Expr::Seq(xs) | Expr::Alt(xs) => stack.extend(xs),
                Expr::Repeat { expr, .. } | Expr::If { expr, .. } => stack.push(expr),
                Expr::Grammar(name) => {
                    if let Some(&gj) = index.get(name.as_str()) {
                        let (from, to) = (class[gi].0 as usize, class[gj].0 as usize);
                        if from != to && !users[to].contains(&from) {
                            users[to].push(from);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (0..n)
        .map(|c| {
            let mut out: Vec<usize> = Vec::new();
            let mut queue = std::collections::VecDeque::from([c]);
            while let Some(x) = queue.pop_front() {
                for &u in &users[x] {
                    if u != c && !out.contains(&u) {
                        out.push(u);
                        queue.push_back(u);
                    }
                }
            }
            out
        })
        .collect()
}

/// The token id ranges of the vocabulary outside `except` and the EOS tokens.
fn all_tokens_but(mut except: Vec<(u32, u32)>, vocab: &toktrie::Vocabulary) -> Vec<(u32, u32)> {
    except.extend(vocab.eos_tokens().iter().map(|t| (t.0, t.0)));
    except.sort_unstable();
    let mut ranges = Vec::new();
    let mut next = 0u32;
    for (a, b) in except {
        if a > next {
            ranges.push((next, a - 1));
        }
        next = next.max(b.saturating_add(1));
    }
    if (next as usize) < vocab.len() {
        ranges.push((next, vocab.len() as u32 - 1));
    }
    ranges
}

/// Whether `rx` matches the empty string (conservative for deep specs: `false` past a
/// depth, which only loses the epsilon alternative, never adds strings).
fn nullable(rx: &RegexSpec, depth: usize) -> bool {
    if depth > 500 {
        return false;
    }
    let rec = |x: &RegexSpec| nullable(x, depth + 1);
    match rx {
        RegexSpec::Literal(s) => s.is_empty(),
        RegexSpec::Bytes(b) => b.is_empty(),
        RegexSpec::ByteSet(_) | RegexSpec::MultipleOf { .. } | RegexSpec::NoMatch => false,
        // Parsed once per process (`lexer::regex_nullable`): the same few regexes come back
        // in every grammar of a kind (JSON strings, numbers).
        RegexSpec::Regex(s) => lexer::regex_nullable(s),
        RegexSpec::Concat(xs) | RegexSpec::And(xs) => xs.iter().all(rec),
        RegexSpec::Or(xs) => xs.iter().any(rec),
        RegexSpec::Not(x) => !rec(x),
        RegexSpec::Repeat { expr, min, .. } => *min == 0 || rec(expr),
        RegexSpec::JsonQuote { expr, raw, .. } => *raw && rec(expr),
        RegexSpec::LookAhead(x) => rec(x),
        RegexSpec::Empty => true,
        #[allow(unreachable_patterns)]
        _ => false,
    }
}
