//! Earley rows: predict, complete, scan over the flat rule array.
//!
//! An item is `(dot position, origin row)` packed in a u64. Rows are ranges of one item
//! array; each row also records the lexemes the parser allows after it (the lexer is started
//! on exactly that set) and whether a special-token terminal or the end is allowed.

use hashbrown::HashSet;
use lexer::LexemeSet;

use crate::cfg::{Cfg, SymIdx, Terminal};
use crate::{Error, ParserLimits};

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
}

impl Chart {
    pub(crate) fn row_items(&self, r: u32) -> &[Item] {
        let row = &self.rows[r as usize];
        &self.items[row.start as usize..row.end as usize]
    }

    /// Drops rows from `n` on.
    pub(crate) fn truncate(&mut self, n: usize) {
        if n < self.rows.len() {
            self.items.truncate(self.rows[n].start as usize);
            self.rows.truncate(n);
        }
    }

    /// The first row: the rules of the start symbol, predicted.
    pub(crate) fn start(&mut self, cfg: &Cfg, limits: &ParserLimits) -> Result<u32, Error> {
        self.rows.clear();
        self.items.clear();
        self.kernel.clear();
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
            if let Ok(sym) = cfg.at_dot(it.dot()) {
                let hit = match &cfg.symbol(sym).terminal {
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
            && self.row_items(r).iter().any(|it| match cfg.at_dot(it.dot()) {
                Ok(sym) => matches!(&cfg.symbol(sym).terminal,
                    Some(Terminal::SpecialTokens(ranges)) if ranges.iter().any(|&(a, b)| a <= tok && tok <= b)),
                Err(_) => false,
            })
    }

    /// The token-id ranges the items of row `r` expect (token terminals), in item order.
    pub(crate) fn expected_token_ranges(&self, cfg: &Cfg, r: u32) -> Vec<(u32, u32)> {
        if !self.rows[r as usize].has_special {
            return Vec::new();
        }
        let mut out = Vec::new();
        for it in self.row_items(r) {
            if let Ok(sym) = cfg.at_dot(it.dot()) {
                if let Some(Terminal::SpecialTokens(ranges)) = &cfg.symbol(sym).terminal {
                    out.extend_from_slice(ranges);
                }
            }
        }
        out
    }

    /// The closure of the kernel: predict and complete (nullable symbols advanced at
    /// prediction, as Aycock and Horspool), then the lexemes allowed after the row.
    fn push_row(&mut self, cfg: &Cfg, limits: &ParserLimits) -> Result<u32, Error> {
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

    /// Completed items of row `r` whose left-hand side is `sym`, with their origins.
    pub(crate) fn completed<'a>(
        &'a self,
        cfg: &'a Cfg,
        r: u32,
    ) -> impl Iterator<Item = (SymIdx, u32)> + 'a {
        self.row_items(r).iter().filter_map(move |it| match cfg.at_dot(it.dot()) {
            Err(lhs) => Some((lhs, it.origin())),
            Ok(_) => None,
        })
    }

    pub(crate) fn num_bytes(&self) -> usize {
        self.items.capacity() * 8
            + self.rows.capacity() * std::mem::size_of::<Row>()
            + self.rows.iter().map(|r| r.allowed.num_bytes()).sum::<usize>()
            + self.seen.capacity() * 9
    }
}
