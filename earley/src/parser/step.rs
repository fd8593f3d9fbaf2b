//! One byte pushed: the lexer's [`Step`] decides whether the pending lexeme goes on, ends
//! with or before the byte, or rejects it; a lexeme's end scans the accepting lexemes the row
//! allows into a new row, cached by `(row, lexer state)` so that the same lexeme ending again
//! at the same place reuses the row. Also the per-step item budget.

use std::sync::atomic::Ordering;

use lexer::{LexemeSet, Lexer, StateId, Step};

use super::{lexer_error, Parser, Pos};
use crate::{Error, ErrorKind};

const NO_ROW: u32 = u32::MAX;
/// Scan-cache flag: the lexeme that ended was a once-only skip lexeme (restart without them).
const AFTER_ONCE: u32 = 1 << 31;

impl<L: Lexer> Parser<L> {
    /// The row after ending, at row `row`, the lexeme read up to lexer state `state`, and
    /// whether it was a once-only skip lexeme. Scans the accepting lexemes the row allows; if
    /// only skip lexemes accept, stays in the row. `Ok(None)` if the lexeme cannot end here.
    pub(super) fn end_lexeme(
        &mut self,
        row: u32,
        state: StateId,
    ) -> Result<Option<(u32, bool)>, Error> {
        self.stats.lexemes_ended += 1;
        let hit = match self.last_scan {
            Some((k, r)) if k == (row, state) => Some(r),
            _ => self.scan_cache.get(&(row, state)).copied(),
        };
        if let Some(r) = hit {
            self.last_scan = Some(((row, state), r));
            self.stats.rows_reused += 1;
            return Ok((r != NO_ROW).then_some((r & !AFTER_ONCE, r & AFTER_ONCE != 0)));
        }
        let accepting = self.lexer.accepting(state);
        let mut lexemes = accepting.clone();
        lexemes.intersect_with(&self.chart.rows[row as usize].allowed);
        let result = if !lexemes.is_empty() {
            let next = self.chart.scan(&self.cfg, &self.opts.limits, row, &lexemes, None)?;
            if let Some(r) = next {
                self.after_new_row(r, Some(&lexemes))?;
            }
            next.map(|r| (r, false))
        } else if accepting.intersects(&self.opts.skip) {
            // A once-only skip lexeme when it is the only one that accepts (a byte string
            // both kinds match counts as the repeatable kind).
            let mut plain = accepting.clone();
            for l in self.opts.skip_once.iter() {
                plain.remove(l);
            }
            Some((row, !plain.intersects(&self.opts.skip)))
        } else {
            None
        };
        let v = match result {
            Some((r, once)) => r | if once { AFTER_ONCE } else { 0 },
            None => NO_ROW,
        };
        self.scan_cache.insert((row, state), v);
        self.last_scan = Some(((row, state), v));
        Ok(result)
    }

    pub(super) fn after_new_row(
        &mut self,
        r: u32,
        scanned: Option<&LexemeSet>,
    ) -> Result<(), Error> {
        self.stats.rows_computed += 1;
        let step_items = self.chart.items.len().saturating_sub(self.items_at_step_start);
        if step_items > self.opts.limits.max_items_in_step {
            return Err(Error::limit(
                "items per step",
                format!(
                    "more than {} Earley items for one token",
                    self.opts.limits.max_items_in_step
                ),
                "simplify the grammar (fewer ambiguous or right-recursive rules) or raise \
                 ParserLimits::max_items_in_step",
            ));
        }
        self.push_row_start(r, scanned)
    }

    /// Pushes one byte: the core of both consuming and the trie walk.
    #[inline(never)]
    pub(super) fn push_byte(&mut self, b: u8) -> Result<bool, Error> {
        if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::new(ErrorKind::Cancelled, "operation cancelled"));
        }
        self.stats.bytes_pushed += 1;
        let top = *self.stack.last().expect("the stack holds the start");
        let at = self.stack.len() - 1;
        let pos = match self.lexer.step(top.lexer, b).map_err(lexer_error)? {
            Step::Continue(s) => Pos { row: top.row, lexer: s },
            Step::EndWith(s) => match self.end_lexeme(top.row, s)? {
                Some((r, once)) => {
                    self.record(r, at + 1);
                    Pos { row: r, lexer: self.start_after(r, once) }
                }
                None => return Ok(false),
            },
            Step::EndBefore => {
                if self.at_row_start(top) {
                    // An empty lexeme: never ended, so no loop.
                    return Ok(false);
                }
                let Some((r, once)) = self.end_lexeme(top.row, top.lexer)? else {
                    return Ok(false);
                };
                let s0 = self.start_after(r, once);
                match self.lexer.step(s0, b).map_err(lexer_error)? {
                    Step::Continue(s) => {
                        self.record(r, at);
                        Pos { row: r, lexer: s }
                    }
                    Step::EndWith(s) => match self.end_lexeme(r, s)? {
                        Some((r2, once2)) => {
                            self.record(r, at);
                            self.record(r2, at + 1);
                            Pos { row: r2, lexer: self.start_after(r2, once2) }
                        }
                        None => return Ok(false),
                    },
                    Step::EndBefore | Step::Reject => return Ok(false),
                }
            }
            Step::Reject => return Ok(false),
        };
        self.stack.push(pos);
        Ok(true)
    }

    /// [`Parser::push_byte`] with the warm fast path first.
    #[inline(always)]
    pub(super) fn push_byte_fast(&mut self, b: u8) -> Result<bool, Error> {
        let top = *self.stack.last().expect("the stack holds the start");
        if let Some(s) = self.lexer.step_warm(top.lexer, b) {
            if s == StateId::DEAD {
                return Ok(false);
            }
            self.stats.bytes_pushed += 1;
            self.stack.push(Pos { row: top.row, lexer: s });
            return Ok(true);
        }
        self.push_byte(b)
    }

    #[inline(always)]
    fn record(&mut self, row: u32, at: usize) {
        if self.recording && self.entered.last().is_none_or(|e| e.0 != row) {
            self.entered.push((row, at));
        }
    }

    /// The row the parse is in if the current lexeme ends now (itself if no lexeme is
    /// pending), or `None` if the current bytes cannot end a lexeme.
    pub(super) fn row_if_ended(&mut self) -> Result<Option<u32>, Error> {
        let top = *self.stack.last().expect("the stack holds the start");
        if self.at_row_start(top) {
            Ok(Some(top.row))
        } else if self.lexer.flags(top.lexer).is_accepting() {
            Ok(self.end_lexeme(top.row, top.lexer)?.map(|(r, _)| r))
        } else {
            Ok(None)
        }
    }

    pub(super) fn start_step(&mut self) {
        self.items_at_step_start = self.chart.items.len();
    }
}
