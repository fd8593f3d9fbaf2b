//! Earley rows: predict, complete, scan over the flat rule array. A completion into a
//! large finished row reads only the row's items waiting for its symbol (an index built
//! on first use, [`Chart::waiting`]), not the whole row.
//!
//! An item is `(dot position, origin row)` packed in a u64. Rows are ranges of one item
//! array; each row also records the lexemes the parser allows after it (the lexer is started
//! on exactly that set) and whether a special-token terminal or the end is allowed.

use hashbrown::{HashMap, HashSet};
use lexer::LexemeSet;

use crate::cfg::{Cfg, SymIdx, TemplateIdx, TemplateSym, Terminal, END_MARKER};
use crate::{Error, ParserLimits};

/// Most template instances one parse makes (each a symbol with its rules).
const MAX_INSTANCES: usize = 200_000;

/// Items a row has at least for completions into it to go through [`Chart::waiting`]
/// rather than a scan of the row.
const INDEX_MIN_ITEMS: u32 = 48;

/// Rules made while parsing, for instances of templates (parametric rules). Positions in
/// `rule_data` come after the grammar's own rule array; symbols after its own symbols.
#[derive(Clone, Debug, Default)]
pub(crate) struct Instances {
    /// Right-hand sides and end markers, as in [`Cfg`].
    rule_data: Vec<u32>,
    /// (template, parameter) -> its symbol.
    syms: HashMap<(TemplateIdx, u64), SymIdx>,
    /// Each instance symbol made here: its template and parameter.
    made: Vec<(TemplateIdx, u64)>,
    /// Rule start positions of instances whose rules exist.
    rules: HashMap<SymIdx, Vec<u32>>,
}

impl Instances {
    #[inline(always)]
    fn at_dot(&self, cfg: &Cfg, pos: u32) -> Result<SymIdx, SymIdx> {
        let base = cfg.rule_array_len();
        if (pos as usize) < base {
            return cfg.at_dot(pos);
        }
        let v = self.rule_data[pos as usize - base];
        if v & END_MARKER == 0 {
            Ok(SymIdx(v))
        } else {
            Err(SymIdx(v & !END_MARKER))
        }
    }

    #[inline(always)]
    fn terminal<'a>(&self, cfg: &'a Cfg, s: SymIdx) -> Option<&'a Terminal> {
        if s.as_usize() < cfg.num_symbols() {
            cfg.symbol(s).terminal.as_ref()
        } else {
            None
        }
    }

    fn instance_of(&self, cfg: &Cfg, s: SymIdx) -> Option<(TemplateIdx, u64)> {
        let n = cfg.num_symbols();
        if s.as_usize() < n {
            cfg.symbol(s).instance
        } else {
            self.made.get(s.as_usize() - n).copied()
        }
    }

    fn sym_for(&mut self, cfg: &Cfg, t: TemplateIdx, v: u64) -> Result<SymIdx, Error> {
        if let Some(&s) = self.syms.get(&(t, v)) {
            return Ok(s);
        }
        if self.made.len() >= MAX_INSTANCES {
            return Err(Error::limit(
                "template instances",
                format!("more than {MAX_INSTANCES} instances of parametric rules"),
                "use fewer distinct parameter values",
            ));
        }
        let s = SymIdx((cfg.num_symbols() + self.made.len()) as u32);
        self.made.push((t, v));
        self.syms.insert((t, v), s);
        Ok(s)
    }

    /// The rule start positions of nonterminal `s`, making an instance's rules first.
    fn rules_of(&mut self, cfg: &Cfg, s: SymIdx) -> Result<Vec<u32>, Error> {
        let Some((t, v)) = self.instance_of(cfg, s) else {
            return Ok(cfg.rules_of(s).to_vec());
        };
        if let Some(r) = self.rules.get(&s) {
            return Ok(r.clone());
        }
        let base = cfg.rule_array_len();
        let mut starts = Vec::new();
        for alt in &cfg.templates()[t.0 as usize].alts {
            if alt.cond.as_ref().is_some_and(|c| !c(v)) {
                continue;
            }
            let mut rhs = Vec::with_capacity(alt.rhs.len());
            for x in &alt.rhs {
                rhs.push(match x {
                    TemplateSym::Sym(y) => *y,
                    TemplateSym::Call(t2, f) => self.sym_for(cfg, *t2, f(v))?,
                });
            }
            starts.push((base + self.rule_data.len()) as u32);
            self.rule_data.extend(rhs.iter().map(|y| y.0));
            self.rule_data.push(END_MARKER | s.0);
        }
        self.rules.insert(s, starts.clone());
        Ok(starts)
    }

    pub(crate) fn num_bytes(&self) -> usize {
        self.rule_data.capacity() * 4 + self.syms.capacity() * 24 + self.made.capacity() * 12
    }
}

/// An Earley item: dot position (low 32 bits) and origin row (high 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Item(u64);

impl Item {
    #[inline(always)]
    pub(crate) fn new(dot: u32, origin: u32) -> Item {
        Item(dot as u64 | (origin as u64) << 32)
    }
    #[inline(always)]
    pub(crate) fn dot(self) -> u32 {
        self.0 as u32
    }
    #[inline(always)]
    pub(crate) fn origin(self) -> u32 {
        (self.0 >> 32) as u32
    }
    #[inline(always)]
    pub(crate) fn advance(self) -> Item {
        Item(self.0 + 1)
    }
}

/// One row of the chart.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// Lexemes some item expects next.
    pub(crate) allowed: LexemeSet,
    /// Whether some item expects a special-token terminal.
    pub(crate) has_special: bool,
    /// Whether the start symbol is complete from row 0 here.
    pub(crate) accepting: bool,
}

/// The rows of one parse, computed on demand.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chart {
    pub(crate) items: Vec<Item>,
    pub(crate) rows: Vec<Row>,
    seen: HashSet<Item>,
    kernel: Vec<Item>,
    /// Rules of template instances made so far (kept across rollbacks: an instance's rules
    /// depend only on its template and parameter).
    pub(crate) inst: Instances,
    /// Nonterminals completed empty in the row being computed (template grammars).
    empty_done: HashSet<SymIdx>,
    /// For rows of at least [`INDEX_MIN_ITEMS`] items that a completion went back to: their
    /// items expecting a nonterminal, as (symbol, item index) in order (terminals never
    /// complete, so their items are left out). A completion into
    /// such a row reads only the items that expect its symbol, not the whole row: an object
    /// of many optional properties predicts all of them in a row, and each entry written
    /// nests one completion deeper, so scanning the rows cost entries × properties per row.
    waiting: HashMap<u32, Vec<(u32, u32)>>,
    /// Completions read their origin rows whole (`ParserOptions::scan_completions`).
    pub(crate) scan_all: bool,
    /// Completions that went through [`Chart::waiting`].
    pub(crate) indexed: u64,
}

/// The items of `items` (from index `start`) that expect a nonterminal (what completions
/// look for), as (symbol, index) sorted; `waiting` reads an item's dot and answers the
/// nonterminal after it.
fn waiting_items(
    items: &[Item],
    start: u32,
    waiting: impl Fn(u32) -> Option<SymIdx>,
) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> =
        (start..).zip(items).filter_map(|(j, it)| waiting(it.dot()).map(|s| (s.0, j))).collect();
    v.sort_unstable();
    v
}

/// The item indices among `waiting` (sorted by symbol) that expect `sym`, in item order.
fn waiting_for(waiting: &[(u32, u32)], sym: SymIdx) -> impl Iterator<Item = u32> + '_ {
    let from = waiting.partition_point(|&(s, _)| s < sym.0);
    waiting[from..].iter().take_while(move |&&(s, _)| s == sym.0).map(|&(_, j)| j)
}

impl Chart {
    pub(crate) fn row_items(&self, r: u32) -> &[Item] {
        let row = &self.rows[r as usize];
        &self.items[row.start as usize..row.end as usize]
    }

    /// Completes `lhs` into row `o` (a finished row) through the row's index of waiting
    /// items (built on first use) when the row is large: the items expecting `lhs`,
    /// advanced, in item order, as a scan of the row would. False (nothing done) for a
    /// small row or with `scan_all`.
    fn complete_indexed(&mut self, cfg: &Cfg, o: u32, lhs: SymIdx) -> bool {
        let orow = &self.rows[o as usize];
        if orow.end - orow.start < INDEX_MIN_ITEMS || self.scan_all {
            return false;
        }
        let (from, to) = (orow.start, orow.end);
        let (items, inst) = (&self.items, &self.inst);
        let nonterminal = |d| inst.at_dot(cfg, d).ok().filter(|&s| inst.terminal(cfg, s).is_none());
        let waiting = self.waiting.entry(o).or_insert_with(|| {
            waiting_items(&items[from as usize..to as usize], from, nonterminal)
        });
        self.indexed += 1;
        for j in waiting_for(waiting, lhs) {
            let new = self.items[j as usize].advance();
            if self.seen.insert(new) {
                self.items.push(new);
            }
        }
        true
    }

    /// Drops rows from `n` on.
    pub(crate) fn truncate(&mut self, n: usize) {
        if n < self.rows.len() {
            self.items.truncate(self.rows[n].start as usize);
            self.rows.truncate(n);
            if !self.waiting.is_empty() {
                self.waiting.retain(|&r, _| (r as usize) < n);
            }
        }
    }

    /// The first row: the rules of the start symbol, predicted.
    pub(crate) fn start(&mut self, cfg: &Cfg, limits: &ParserLimits) -> Result<u32, Error> {
        self.rows.clear();
        self.items.clear();
        self.kernel.clear();
        self.waiting.clear();
        self.kernel.extend(cfg.rules_of(cfg.start()).iter().map(|&r| Item::new(r, 0)));
        self.push_row(cfg, limits)
    }

    /// Scans at row `r` every terminal matching a lexeme of `lexemes` (or the special token
    /// `special`); computes the next row from the advanced items. Returns `None` if no item
    /// of `r` expects them.
    pub(crate) fn scan(
        &mut self,
        cfg: &Cfg,
        limits: &ParserLimits,
        r: u32,
        lexemes: &LexemeSet,
        special: Option<u32>,
    ) -> Result<Option<u32>, Error> {
        self.kernel.clear();
        let row = &self.rows[r as usize];
        for &it in &self.items[row.start as usize..row.end as usize] {
            if let Ok(sym) = self.inst.at_dot(cfg, it.dot()) {
                let hit = match self.inst.terminal(cfg, sym) {
                    Some(Terminal::Lexeme(l)) => special.is_none() && lexemes.contains(*l),
                    Some(Terminal::SpecialTokens(ranges)) => {
                        special.is_some_and(|t| ranges.iter().any(|&(a, b)| a <= t && t <= b))
                    }
                    None => false,
                };
                if hit {
                    self.kernel.push(it.advance());
                }
            }
        }
        if self.kernel.is_empty() {
            return Ok(None);
        }
        self.push_row(cfg, limits).map(Some)
    }

    /// Whether some item of row `r` expects the special token `tok`.
    pub(crate) fn expects_special(&self, cfg: &Cfg, r: u32, tok: u32) -> bool {
        self.rows[r as usize].has_special
            && self.row_items(r).iter().any(|it| match self.inst.at_dot(cfg, it.dot()) {
                Ok(sym) => matches!(self.inst.terminal(cfg, sym),
                    Some(Terminal::SpecialTokens(ranges)) if ranges.iter().any(|&(a, b)| a <= tok && tok <= b)),
                Err(_) => false,
            })
    }

    /// The lexeme classes of the sub-grammars row `r` enters (an item with a symbol marked
    /// `enters_class` after the dot), in item order.
    pub(crate) fn entered_classes(&self, cfg: &Cfg, r: u32) -> Vec<usize> {
        let n = cfg.num_symbols();
        self.row_items(r)
            .iter()
            .filter_map(|it| match self.inst.at_dot(cfg, it.dot()) {
                Ok(sym) if sym.as_usize() < n => cfg.symbol(sym).props.enters_class,
                _ => None,
            })
            .collect()
    }

    /// The token-id ranges the items of row `r` expect (token terminals), in item order.
    pub(crate) fn expected_token_ranges(&self, cfg: &Cfg, r: u32) -> Vec<(u32, u32)> {
        if !self.rows[r as usize].has_special {
            return Vec::new();
        }
        let mut out = Vec::new();
        for it in self.row_items(r) {
            if let Ok(sym) = self.inst.at_dot(cfg, it.dot()) {
                if let Some(Terminal::SpecialTokens(ranges)) = self.inst.terminal(cfg, sym) {
                    out.extend_from_slice(ranges);
                }
            }
        }
        out
    }

    /// The closure of the kernel: predict and complete (nullable symbols advanced at
    /// prediction, as Aycock and Horspool), then the lexemes allowed after the row.
    fn push_row(&mut self, cfg: &Cfg, limits: &ParserLimits) -> Result<u32, Error> {
        if cfg.has_templates() {
            return self.push_row_templates(cfg, limits);
        }
        let cur = self.rows.len() as u32;
        if self.rows.len() >= limits.max_rows {
            return Err(Error::limit(
                "rows",
                format!("more than {} lexemes in one sequence", limits.max_rows),
                "raise ParserLimits::max_rows",
            ));
        }
        let start = self.items.len();
        self.seen.clear();
        for &it in &self.kernel {
            if self.seen.insert(it) {
                self.items.push(it);
            }
        }
        let mut allowed = LexemeSet::new();
        let mut has_special = false;
        let mut accepting = false;
        let mut i = start;
        while i < self.items.len() {
            if self.items.len() - start > limits.max_items_in_row {
                self.items.truncate(start);
                return Err(Error::limit(
                    "items per row",
                    format!("more than {} Earley items in one row", limits.max_items_in_row),
                    "the grammar is too ambiguous here; make recursive rules left-recursive \
                     (a: a b | b) instead of right-recursive, or raise ParserLimits::max_items_in_row",
                ));
            }
            let it = self.items[i];
            i += 1;
            match cfg.at_dot(it.dot()) {
                Ok(sym) => match &cfg.symbol(sym).terminal {
                    Some(Terminal::Lexeme(l)) => {
                        allowed.insert(*l);
                    }
                    Some(Terminal::SpecialTokens(_)) => has_special = true,
                    None => {
                        for &r in cfg.rules_of(sym) {
                            let new = Item::new(r, cur);
                            if self.seen.insert(new) {
                                self.items.push(new);
                            }
                        }
                        if cfg.symbol(sym).nullable {
                            let new = it.advance();
                            if self.seen.insert(new) {
                                self.items.push(new);
                            }
                        }
                    }
                },
                Err(lhs) => {
                    let o = it.origin();
                    if o == 0 && lhs == cfg.start() {
                        accepting = true;
                    }
                    if o == cur {
                        // Covered by the nullable advance at prediction time.
                        continue;
                    }
                    if self.complete_indexed(cfg, o, lhs) {
                        continue;
                    }
                    let orow = &self.rows[o as usize];
                    for j in orow.start..orow.end {
                        let p = self.items[j as usize];
                        if cfg.at_dot(p.dot()) == Ok(lhs) {
                            let new = p.advance();
                            if self.seen.insert(new) {
                                self.items.push(new);
                            }
                        }
                    }
                }
            }
        }
        // The start symbol is complete at row 0 if it is nullable.
        if cur == 0 && cfg.symbol(cfg.start()).nullable {
            accepting = true;
        }
        self.rows.push(Row {
            start: start as u32,
            end: self.items.len() as u32,
            allowed,
            has_special,
            accepting,
        });
        Ok(cur)
    }

    /// [`Chart::push_row`] for grammars with templates: rules of instances are made as they
    /// are predicted, and a nonterminal completed empty in this row advances the items
    /// that expect it, before and after (the classic Earley treatment of empty rules:
    /// instances have no precomputed nullability).
    fn push_row_templates(&mut self, cfg: &Cfg, limits: &ParserLimits) -> Result<u32, Error> {
        let cur = self.rows.len() as u32;
        if self.rows.len() >= limits.max_rows {
            return Err(Error::limit(
                "rows",
                format!("more than {} lexemes in one sequence", limits.max_rows),
                "raise ParserLimits::max_rows",
            ));
        }
        let start = self.items.len();
        self.seen.clear();
        self.empty_done.clear();
        for &it in &self.kernel {
            if self.seen.insert(it) {
                self.items.push(it);
            }
        }
        let mut allowed = LexemeSet::new();
        let mut has_special = false;
        let mut accepting = false;
        let mut i = start;
        while i < self.items.len() {
            if self.items.len() - start > limits.max_items_in_row {
                self.items.truncate(start);
                return Err(Error::limit(
                    "items per row",
                    format!("more than {} Earley items in one row", limits.max_items_in_row),
                    "the grammar is too ambiguous here, or raise ParserLimits::max_items_in_row",
                ));
            }
            let it = self.items[i];
            i += 1;
            match self.inst.at_dot(cfg, it.dot()) {
                Ok(sym) => match self.inst.terminal(cfg, sym) {
                    Some(Terminal::Lexeme(l)) => {
                        allowed.insert(*l);
                    }
                    Some(Terminal::SpecialTokens(_)) => has_special = true,
                    None => {
                        for r in self.inst.rules_of(cfg, sym)? {
                            let new = Item::new(r, cur);
                            if self.seen.insert(new) {
                                self.items.push(new);
                            }
                        }
                        let nullable =
                            sym.as_usize() < cfg.num_symbols() && cfg.symbol(sym).nullable;
                        if nullable || self.empty_done.contains(&sym) {
                            let new = it.advance();
                            if self.seen.insert(new) {
                                self.items.push(new);
                            }
                        }
                    }
                },
                Err(lhs) => {
                    let o = it.origin();
                    if o == 0 && lhs == cfg.start() {
                        accepting = true;
                    }
                    let (from, to) = if o == cur {
                        if !self.empty_done.insert(lhs) {
                            continue;
                        }
                        (start, self.items.len())
                    } else {
                        let orow = &self.rows[o as usize];
                        (orow.start as usize, orow.end as usize)
                    };
                    if o != cur && self.complete_indexed(cfg, o, lhs) {
                        continue;
                    }
                    for j in from..to {
                        let p = self.items[j];
                        if self.inst.at_dot(cfg, p.dot()) == Ok(lhs) {
                            let new = p.advance();
                            if self.seen.insert(new) {
                                self.items.push(new);
                            }
                        }
                    }
                }
            }
        }
        if cur == 0 && cfg.symbol(cfg.start()).nullable {
            accepting = true;
        }
        self.rows.push(Row {
            start: start as u32,
            end: self.items.len() as u32,
            allowed,
            has_special,
            accepting,
        });
        Ok(cur)
    }

    /// Completed items of row `r` whose left-hand side is `sym`, with their origins.
    pub(crate) fn completed<'a>(
        &'a self,
        cfg: &'a Cfg,
        r: u32,
    ) -> impl Iterator<Item = (SymIdx, u32)> + 'a {
        let n = cfg.num_symbols();
        self.row_items(r).iter().filter_map(move |it| match self.inst.at_dot(cfg, it.dot()) {
            // Instances made while parsing carry no attributes.
            Err(lhs) if lhs.as_usize() < n => Some((lhs, it.origin())),
            _ => None,
        })
    }

    pub(crate) fn num_bytes(&self) -> usize {
        self.items.capacity() * 8
            + self.rows.capacity() * std::mem::size_of::<Row>()
            + self.rows.iter().map(|r| r.allowed.num_bytes()).sum::<usize>()
            + self.seen.capacity() * 9
            + self.waiting.values().map(|w| w.capacity() * 8 + 32).sum::<usize>()
            + self.inst.num_bytes()
    }
}
