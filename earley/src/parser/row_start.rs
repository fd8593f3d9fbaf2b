//! The lexer start states of each row: the lexemes the row allows plus the skip lexemes
//! allowed there, which depend on the lexeme class of the lexeme that entered the row
//! (LLGuidance 1.9's rule, see [`super::SkipClass`]); once-only skip lexemes get a second
//! start state without them.

use lexer::{LexemeSet, Lexer, StateId};

use super::{lexer_error, Parser, Pos};
use crate::Error;

impl<L: Lexer> Parser<L> {
    /// The skip lexemes allowed at the start of row `r`, entered by scanning `scanned`
    /// (`None`: the first row, or a special token).
    fn row_skip(&self, r: u32, scanned: Option<&LexemeSet>) -> LexemeSet {
        let row = &self.chart.rows[r as usize];
        let mut skip = LexemeSet::new();
        // Skip lexemes go between lexemes: not before the first one (unless
        // allow_initial_skip), and not after the last one (when nothing can follow), as
        // LLGuidance (no trailing whitespace after a complete JSON value).
        let something_follows = !row.allowed.is_empty() || row.has_special;
        if !something_follows || (r == 0 && !self.opts.allow_initial_skip) {
            return skip;
        }
        let classes = &self.opts.skip_classes;
        if classes.is_empty() {
            return self.opts.skip.clone();
        }
        let can_follow =
            |c: usize| row.allowed.intersects(&classes[c].members) || (c == 0 && row.has_special);
        if r == 0 {
            if can_follow(0) {
                skip.union_with(&classes[0].skip);
            }
            return skip;
        }
        for (g, class) in classes.iter().enumerate() {
            let of_g = match scanned {
                Some(l) => l.intersects(&class.members),
                None => g == 0,
            };
            if !of_g {
                continue;
            }
            if can_follow(g) {
                skip.union_with(&class.skip);
                continue;
            }
            // As LLGuidance's grammar stack: the sub-grammars this row enters come first,
            // each the parent of the next, so when a row enters two or more, the one before
            // the last may lend its skip (`"<" (%json{A} | %json{B})` allows whitespace
            // after "<"; one %json alone does not); then the grammars around G.
            // With one class there is nothing else to lend a skip: no scan of the row.
            if classes.len() == 1 {
                continue;
            }
            let entered = self.chart.entered_classes(&self.cfg, r);
            let before_last = entered.len().saturating_sub(1);
            let found = entered[..before_last]
                .iter()
                .rev()
                .chain(class.ancestors.iter())
                .find(|&&a| can_follow(a));
            if let Some(&a) = found {
                skip.union_with(&classes[a].skip);
            }
        }
        skip
    }

    /// Computes the lexer start states of row `r` (which must be the next row to get them),
    /// entered by scanning `scanned` (`None`: the first row, or a special token).
    pub(super) fn push_row_start(
        &mut self,
        r: u32,
        scanned: Option<&LexemeSet>,
    ) -> Result<(), Error> {
        debug_assert_eq!(self.row_start.len(), r as usize);
        let skip = self.row_skip(r, scanned);
        let mut allowed = self.chart.rows[r as usize].allowed.clone();
        let once = !self.opts.skip_once.is_empty() && skip.intersects(&self.opts.skip_once);
        let s_once = if once {
            let mut a = allowed.clone();
            for l in skip.iter() {
                if !self.opts.skip_once.contains(l) {
                    a.insert(l);
                }
            }
            Some(self.lexer.start_state(&a).map_err(lexer_error)?)
        } else {
            None
        };
        allowed.union_with(&skip);
        let s = self.lexer.start_state(&allowed).map_err(lexer_error)?;
        self.row_start.push(s);
        self.row_start_once.push(s_once.unwrap_or(s));
        Ok(())
    }

    /// Whether the lexer at `pos` is at a start state of its row (no lexeme pending).
    #[inline(always)]
    pub(super) fn at_row_start(&self, pos: Pos) -> bool {
        let r = pos.row as usize;
        pos.lexer == self.row_start[r] || pos.lexer == self.row_start_once[r]
    }

    /// The lexer state in row `r` after a lexeme that ended there (`once`: it was a
    /// once-only skip lexeme).
    #[inline(always)]
    pub(super) fn start_after(&self, r: u32, once: bool) -> StateId {
        if once {
            self.row_start_once[r as usize]
        } else {
            self.row_start[r as usize]
        }
    }
}
