//! The context-free grammar on flat arrays: [`CfgBuilder`] (what front ends produce) and
//! [`Cfg`] (what the parser reads).
//!
//! All rules live in one array of u32: each rule is its right-hand-side symbols followed by
//! an end marker that holds the left-hand side. A dot position of an Earley item is an index
//! into that array, so "the symbol after the dot" is one load, and "is the item complete" is
//! one bit test.

use lexer::LexemeIdx;

use crate::{Error, ErrorKind};

/// A grammar symbol: a nonterminal or a terminal.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SymIdx(pub u32);

impl SymIdx {
    /// The index as a usize.
    #[inline(always)]
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
}

/// What a terminal matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// A lexeme of the lexer specification.
    Lexeme(LexemeIdx),
    /// One special token among inclusive id ranges (e.g. `<|eot_id|>`, `<[100-200]>`).
    SpecialTokens(Vec<(u32, u32)>),
}

/// Attributes of a nonterminal that front ends set (Lark `[capture]`, `[max_tokens=N]`, ...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SymbolProps {
    /// Name under which the text this symbol derives is captured.
    pub capture: Option<String>,
    /// At most this many tokens inside this symbol (informational here: the parser enforces
    /// it on the rule's lexeme, `ParserOptions::lexeme_max_tokens`).
    pub max_tokens: Option<usize>,
    /// Sampling temperature while inside this symbol (advisory).
    pub temperature: Option<f32>,
    /// The literal stop string that ends this symbol's text (Lark `[stop="..."]`): not part
    /// of the capture, captured under `stop_capture` when that is set.
    pub stop: Option<Vec<u8>>,
    /// Name under which the stop string is captured (Lark `[stop_capture="x"]`).
    pub stop_capture: Option<String>,
    /// A stop (or suffix) that is a regex: this lexeme of the spec matches it, and the
    /// shortest suffix of the symbol's text that it matches is the stop string.
    pub stop_lexeme: Option<LexemeIdx>,
    /// This symbol enters a sub-grammar whose lexemes are of this class (see
    /// `ParserOptions::skip_classes`): a `%json`, `%lark` or `@name` reference.
    pub enters_class: Option<usize>,
}

impl SymbolProps {
    fn is_plain(&self) -> bool {
        self.capture.is_none()
            && self.max_tokens.is_none()
            && self.temperature.is_none()
            && self.stop_capture.is_none()
            && self.enters_class.is_none()
    }
}

#[derive(Clone, Debug)]
struct SymbolDef {
    name: String,
    terminal: Option<Terminal>,
    props: SymbolProps,
    instance: Option<(TemplateIdx, u64)>,
}

/// A parametric rule family (LLGuidance's `name::_`): rules instantiated lazily, for each
/// 64-bit parameter value the parser reaches.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TemplateIdx(pub u32);

/// A condition on the parameter (`%if`), evaluated when an instance is made.
pub type ParamCond = std::sync::Arc<dyn Fn(u64) -> bool + Send + Sync + std::panic::RefUnwindSafe>;
/// The parameter passed to a call, from the caller's parameter (`set_bit(3)`, `_`, ...).
pub type ParamMap = std::sync::Arc<dyn Fn(u64) -> u64 + Send + Sync + std::panic::RefUnwindSafe>;

/// A symbol of a template alternative: a plain symbol, or a call of a template with a
/// parameter computed from the instance's own.
#[derive(Clone)]
pub enum TemplateSym {
    /// A symbol of the grammar (terminal or nonterminal), the same in every instance.
    Sym(SymIdx),
    /// A call `name::expr`.
    Call(TemplateIdx, ParamMap),
}

impl std::fmt::Debug for TemplateSym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateSym::Sym(s) => write!(f, "{s:?}"),
            TemplateSym::Call(t, _) => write!(f, "call {t:?}"),
        }
    }
}

/// One alternative of a template: taken by the instances whose parameter meets `cond`.
#[derive(Clone)]
pub struct TemplateAlt {
    /// `None`: always.
    pub cond: Option<ParamCond>,
    /// The right-hand side.
    pub rhs: Vec<TemplateSym>,
}

impl std::fmt::Debug for TemplateAlt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} if {}", self.rhs, if self.cond.is_some() { "cond" } else { "true" })
    }
}

/// A parametric rule family: its name and alternatives.
#[derive(Clone, Debug)]
pub struct Template {
    /// The name (instances are named `name::0x..`).
    pub name: String,
    /// The alternatives.
    pub alts: Vec<TemplateAlt>,
}

/// Builds a grammar: add symbols and rules, then [`CfgBuilder::build`].
#[derive(Clone, Debug, Default)]
pub struct CfgBuilder {
    symbols: Vec<SymbolDef>,
    rules: Vec<(SymIdx, Vec<SymIdx>)>,
    templates: Vec<Template>,
}

/// Size limits of a grammar.
#[derive(Clone, Debug)]
pub struct CfgLimits {
    /// Most symbols, rules included in the count of the flat array (default 2,000,000).
    pub max_rule_array: usize,
}

impl Default for CfgLimits {
    fn default() -> Self {
        CfgLimits { max_rule_array: 2_000_000 }
    }
}

impl CfgBuilder {
    /// An empty grammar.
    pub fn new() -> CfgBuilder {
        CfgBuilder::default()
    }

    /// Adds a nonterminal.
    pub fn nonterminal(&mut self, name: &str) -> SymIdx {
        self.push(name, None)
    }

    /// Adds a terminal matching a lexeme.
    pub fn lexeme(&mut self, name: &str, lexeme: LexemeIdx) -> SymIdx {
        self.push(name, Some(Terminal::Lexeme(lexeme)))
    }

    /// Adds a terminal matching one special token among inclusive id ranges.
    pub fn special_tokens(&mut self, name: &str, ranges: Vec<(u32, u32)>) -> SymIdx {
        self.push(name, Some(Terminal::SpecialTokens(ranges)))
    }

    fn push(&mut self, name: &str, terminal: Option<Terminal>) -> SymIdx {
        self.symbols.push(SymbolDef {
            name: name.to_string(),
            terminal,
            props: Default::default(),
            instance: None,
        });
        SymIdx((self.symbols.len() - 1) as u32)
    }

    /// Adds a template (a parametric rule family) with no alternatives yet.
    pub fn template(&mut self, name: &str) -> TemplateIdx {
        self.templates.push(Template { name: name.to_string(), alts: Vec::new() });
        TemplateIdx((self.templates.len() - 1) as u32)
    }

    /// Adds an alternative to template `t`.
    pub fn template_alt(&mut self, t: TemplateIdx, alt: TemplateAlt) {
        self.templates[t.0 as usize].alts.push(alt);
    }

    /// A nonterminal standing for the instance of template `t` with parameter `value`
    /// (its rules are made by the parser when it first predicts it).
    pub fn instance(&mut self, t: TemplateIdx, value: u64) -> SymIdx {
        let name = format!("{}::{value:#x}", self.templates[t.0 as usize].name);
        let s = self.push(&name, None);
        self.symbols[s.as_usize()].instance = Some((t, value));
        s
    }

    /// Sets the attributes of a nonterminal.
    pub fn set_props(&mut self, sym: SymIdx, props: SymbolProps) {
        self.symbols[sym.as_usize()].props = props;
    }

    /// Adds the rule `lhs -> rhs` (an empty `rhs` is an epsilon rule).
    pub fn rule(&mut self, lhs: SymIdx, rhs: Vec<SymIdx>) {
        self.rules.push((lhs, rhs));
    }

    /// The number of symbols so far.
    pub fn num_symbols(&self) -> usize {
        self.symbols.len()
    }

    fn check(&self, start: SymIdx, limits: &CfgLimits) -> Result<(), Error> {
        let n = self.symbols.len();
        if start.as_usize() >= n {
            return Err(Error::new(ErrorKind::Grammar, "start symbol out of range"));
        }
        let size: usize = self.rules.iter().map(|(_, r)| r.len() + 1).sum();
        if size > limits.max_rule_array {
            return Err(Error::limit(
                "grammar size",
                format!("{size} rule entries, limit {}", limits.max_rule_array),
                "split the grammar or raise CfgLimits::max_rule_array",
            ));
        }
        for (lhs, rhs) in &self.rules {
            if lhs.as_usize() >= n || rhs.iter().any(|s| s.as_usize() >= n) {
                return Err(Error::new(ErrorKind::Grammar, "rule refers to a symbol out of range"));
            }
            if self.symbols[lhs.as_usize()].terminal.is_some() {
                return Err(Error::new(
                    ErrorKind::Grammar,
                    format!("terminal {} has a rule", self.symbols[lhs.as_usize()].name),
                ));
            }
        }
        Ok(())
    }

    /// Compiles the grammar: removes unproductive and unreachable symbols, inlines
    /// nonterminals with a single rule used once (unless they carry attributes), computes
    /// nullable symbols, and lays the rules out flat.
    pub fn build(&self, start: SymIdx, limits: &CfgLimits) -> Result<Cfg, Error> {
        self.check(start, limits)?;
        let n = self.symbols.len();
        let is_term = |s: SymIdx| self.symbols[s.as_usize()].terminal.is_some();

        // Symbols used by templates are kept whole: instances are made while parsing.
        let mut pinned = vec![false; n];
        for t in &self.templates {
            for a in &t.alts {
                for x in &a.rhs {
                    if let TemplateSym::Sym(s) = x {
                        if s.as_usize() >= n {
                            return Err(Error::new(
                                ErrorKind::Grammar,
                                "template refers to a symbol out of range",
                            ));
                        }
                        pinned[s.as_usize()] = true;
                    }
                }
            }
        }
        // Productive symbols: terminals and instances (assumed), then to a fixpoint.
        let productive = closure(
            &self.rules,
            (0..n)
                .map(|i| self.symbols[i].terminal.is_some() || self.symbols[i].instance.is_some())
                .collect(),
        );
        if !productive[start.as_usize()] {
            let name = &self.symbols[start.as_usize()].name;
            // Front ends' internal names (`j0`, `group#3`) mean nothing to a user.
            let internal = name.contains('#')
                || (name.starts_with('j') && name[1..].bytes().all(|b| b.is_ascii_digit()));
            let what = if internal { "the start rule".to_string() } else { format!("rule {name}") };
            return Err(Error::new(
                ErrorKind::Grammar,
                format!(
                    "the grammar matches no string: {what} can never be completed (each of \
                     its alternatives needs something impossible, such as a rule that only \
                     recurses into itself)"
                ),
            ));
        }
        let mut rules: Vec<(SymIdx, Vec<SymIdx>)> = self
            .rules
            .iter()
            .filter(|(l, r)| productive[l.as_usize()] && r.iter().all(|s| productive[s.as_usize()]))
            .cloned()
            .collect();

        // Inline: a nonterminal (not the start, no attributes) with exactly one rule, used
        // exactly once in all right-hand sides, not in its own rule.
        let by_lhs = Groups::new(n, rules.iter().map(|(l, _)| l.as_usize()));
        let mut uses = vec![0usize; n];
        for (_, r) in &rules {
            for s in r {
                uses[s.as_usize()] += 1;
            }
        }
        let mut inline: Vec<Option<Vec<SymIdx>>> = vec![None; n];
        for s in 0..n {
            if s != start.as_usize()
                && !is_term(SymIdx(s as u32))
                && !pinned[s]
                && self.symbols[s].props.is_plain()
                && by_lhs.get(s).len() == 1
                && uses[s] == 1
            {
                let rhs = &rules[by_lhs.get(s)[0] as usize].1;
                if !rhs.contains(&SymIdx(s as u32)) {
                    inline[s] = Some(rhs.clone());
                }
            }
        }
        // Substitute with an explicit worklist (chains of inlined symbols, no recursion).
        for i in 0..rules.len() {
            if inline[rules[i].0.as_usize()].is_some() {
                continue;
            }
            let mut out = Vec::with_capacity(rules[i].1.len());
            let mut work: Vec<SymIdx> = rules[i].1.iter().rev().copied().collect();
            let mut steps = 0usize;
            while let Some(s) = work.pop() {
                steps += 1;
                match &inline[s.as_usize()] {
                    Some(rhs) if steps < limits.max_rule_array => work.extend(rhs.iter().rev()),
                    _ => out.push(s),
                }
            }
            rules[i].1 = out;
        }
        rules.retain(|(l, _)| inline[l.as_usize()].is_none());

        // Reachable symbols from the start.
        let by_lhs = Groups::new(n, rules.iter().map(|(l, _)| l.as_usize()));
        let mut reachable = pinned.clone();
        reachable[start.as_usize()] = true;
        let mut stack: Vec<SymIdx> =
            (0..n).filter(|&i| reachable[i]).map(|i| SymIdx(i as u32)).collect();
        while let Some(s) = stack.pop() {
            for &ri in by_lhs.get(s.as_usize()) {
                for &t in &rules[ri as usize].1 {
                    if !reachable[t.as_usize()] {
                        reachable[t.as_usize()] = true;
                        stack.push(t);
                    }
                }
            }
        }

        // Nullable to a fixpoint (instances: decided when the parser makes them; a rule
        // through one is not counted nullable here).
        let nullable = closure(&rules, vec![false; n]);

        // Flat layout, rules grouped by left-hand side.
        let mut rule_data = Vec::with_capacity(rules.iter().map(|(_, r)| r.len() + 1).sum());
        let mut rule_offsets = vec![0u32; n + 1];
        let mut rule_starts = Vec::with_capacity(rules.len());
        for s in 0..n {
            rule_offsets[s] = rule_starts.len() as u32;
            if !reachable[s] {
                continue;
            }
            for &ri in by_lhs.get(s) {
                rule_starts.push(rule_data.len() as u32);
                rule_data.extend(rules[ri as usize].1.iter().map(|x| x.0));
                rule_data.push(END_MARKER | s as u32);
            }
        }
        rule_offsets[n] = rule_starts.len() as u32;
        // The start item: a synthetic rule `S' -> start END(S')` at position 0 is not needed;
        // the parser predicts the start symbol's rules directly.
        let symbols = self
            .symbols
            .iter()
            .enumerate()
            .map(|(i, d)| CfgSymbol {
                name: d.name.clone(),
                terminal: d.terminal.clone(),
                props: d.props.clone(),
                nullable: nullable[i],
                used: reachable[i],
                instance: d.instance,
            })
            .collect();
        Ok(Cfg {
            symbols,
            rule_data,
            rule_offsets,
            rule_starts,
            start,
            templates: self.templates.clone(),
        })
    }
}

/// The end-of-rule marker bit in the flat rule array.
pub(crate) const END_MARKER: u32 = 1 << 31;

/// One symbol of a compiled grammar.
#[derive(Clone, Debug)]
pub struct CfgSymbol {
    /// The name (for messages).
    pub name: String,
    /// For terminals, what they match.
    pub terminal: Option<Terminal>,
    /// The attributes.
    pub props: SymbolProps,
    /// Whether it derives the empty string.
    pub nullable: bool,
    /// Whether it is reachable from the start after optimization.
    pub used: bool,
    /// For an instance of a template: which one, with which parameter.
    pub instance: Option<(TemplateIdx, u64)>,
}

/// A compiled grammar: immutable, `Send + Sync`, shared by all parsers of the grammar.
#[derive(Clone, Debug)]
pub struct Cfg {
    symbols: Vec<CfgSymbol>,
    rule_data: Vec<u32>,
    rule_offsets: Vec<u32>,
    rule_starts: Vec<u32>,
    start: SymIdx,
    templates: Vec<Template>,
}

impl Cfg {
    /// The templates (parametric rule families).
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// Whether the grammar has templates (its parser then makes rules while parsing).
    pub fn has_templates(&self) -> bool {
        !self.templates.is_empty()
    }

    /// The start symbol.
    pub fn start(&self) -> SymIdx {
        self.start
    }

    /// The symbol `s`.
    pub fn symbol(&self, s: SymIdx) -> &CfgSymbol {
        &self.symbols[s.as_usize()]
    }

    /// The number of symbols.
    pub fn num_symbols(&self) -> usize {
        self.symbols.len()
    }

    /// The number of rules after optimization.
    pub fn num_rules(&self) -> usize {
        self.rule_starts.len()
    }

    /// The flat rule array (right-hand sides and end markers).
    pub fn rule_array_len(&self) -> usize {
        self.rule_data.len()
    }

    /// The entry at dot position `pos`: `Ok(symbol after the dot)` or `Err(lhs)` when the
    /// dot is at the end of the rule.
    #[inline(always)]
    pub fn at_dot(&self, pos: u32) -> Result<SymIdx, SymIdx> {
        let v = self.rule_data[pos as usize];
        if v & END_MARKER == 0 {
            Ok(SymIdx(v))
        } else {
            Err(SymIdx(v & !END_MARKER))
        }
    }

    /// The start positions of the rules of nonterminal `s` (of the grammar as built: an
    /// instance of a template has none here; the parser makes them).
    #[inline]
    pub fn rules_of(&self, s: SymIdx) -> &[u32] {
        let i = s.as_usize();
        &self.rule_starts[self.rule_offsets[i] as usize..self.rule_offsets[i + 1] as usize]
    }

    /// The rule containing dot position `pos`, as `lhs -> rhs`, with the dot at `pos`
    /// (for debugging output).
    pub fn item_to_string(&self, pos: u32) -> String {
        let mut start = pos as usize;
        while start > 0 && self.rule_data[start - 1] & END_MARKER == 0 {
            start -= 1;
        }
        let mut end = pos as usize;
        while self.rule_data[end] & END_MARKER == 0 {
            end += 1;
        }
        let lhs = self.rule_data[end] & !END_MARKER;
        let mut s = format!("{} ->", self.symbols[lhs as usize].name);
        for i in start..=end {
            if i == pos as usize {
                s.push_str(" •");
            }
            if i < end {
                s.push(' ');
                s.push_str(&self.symbols[self.rule_data[i] as usize].name);
            }
        }
        s
    }

    /// Memory owned by the grammar, in bytes.
    pub fn num_bytes(&self) -> usize {
        (self.rule_data.len() + self.rule_offsets.len() + self.rule_starts.len()) * 4
            + self.symbols.len() * std::mem::size_of::<CfgSymbol>()
    }
}

/// The least fixpoint of "a left-hand side is marked when every symbol of one of its rules
/// is", starting from `marked` (productive symbols, nullable symbols): a worklist over the
/// uses of each symbol, linear in the grammar size (a chain of 10k rules listed in the
/// wrong order would take 10k passes of the naive loop).
fn closure(rules: &[(SymIdx, Vec<SymIdx>)], mut marked: Vec<bool>) -> Vec<bool> {
    let n = marked.len();
    let mut missing: Vec<usize> = rules.iter().map(|(_, r)| r.len()).collect();
    // A rule once per occurrence of a symbol in it (as the counts in `missing`).
    let uses = Groups::from_pairs(
        n,
        rules.iter().enumerate().flat_map(|(i, (_, r))| r.iter().map(move |s| (s.as_usize(), i))),
    );
    let mut work: Vec<usize> = (0..n).filter(|&s| marked[s]).collect();
    for (i, (l, _)) in rules.iter().enumerate() {
        if missing[i] == 0 && !marked[l.as_usize()] {
            marked[l.as_usize()] = true;
            work.push(l.as_usize());
        }
    }
    while let Some(s) = work.pop() {
        for &ri in uses.get(s) {
            let ri = ri as usize;
            missing[ri] -= 1;
            let l = rules[ri].0.as_usize();
            if missing[ri] == 0 && !marked[l] {
                marked[l] = true;
                work.push(l);
            }
        }
    }
    marked
}

/// Indices grouped by a key below `n`, in index order within each key: one array and its
/// offsets (a counting sort), where a `Vec` per key grew one push at a time (~2 % of a
/// MaskBench schema's compile in allocations and copies).
struct Groups {
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Groups {
    /// Index `i` under the key `keys[i]`.
    fn new(n: usize, keys: impl Iterator<Item = usize> + Clone) -> Groups {
        Groups::from_pairs(n, keys.enumerate().map(|(i, k)| (k, i)))
    }

    /// Each `(key, item)` pair, items in the order given.
    fn from_pairs(n: usize, pairs: impl Iterator<Item = (usize, usize)> + Clone) -> Groups {
        let mut starts = vec![0u32; n + 1];
        for (k, _) in pairs.clone() {
            starts[k + 1] += 1;
        }
        for k in 0..n {
            starts[k + 1] += starts[k];
        }
        let mut next = starts.clone();
        let mut items = vec![0u32; starts[n] as usize];
        for (k, i) in pairs {
            items[next[k] as usize] = i as u32;
            next[k] += 1;
        }
        Groups { starts, items }
    }

    /// The items under `key`.
    fn get(&self, key: usize) -> &[u32] {
        &self.items[self.starts[key] as usize..self.starts[key + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::Groups;

    /// The groups are what a `Vec` per key gets by pushing the pairs in order.
    #[test]
    fn groups_keep_each_keys_items_in_order() {
        let pairs = [(3, 0), (1, 1), (3, 2), (0, 3), (3, 4), (1, 5), (3, 2)];
        let g = Groups::from_pairs(5, pairs.iter().copied());
        let mut want: Vec<Vec<u32>> = vec![Vec::new(); 5];
        for (k, i) in pairs {
            want[k].push(i as u32);
        }
        for (k, w) in want.iter().enumerate() {
            assert_eq!(g.get(k), w.as_slice(), "key {k}");
        }
        let by_key = Groups::new(4, [2, 0, 2, 3].into_iter());
        assert_eq!((by_key.get(0), by_key.get(1), by_key.get(2)), (&[1][..], &[][..], &[0, 2][..]));
    }
}
