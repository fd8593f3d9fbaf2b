//! Speculative rows: the rows a trie walk pushes beyond the committed input. They are kept
//! for the next walk while few (the next masks inside the same lexeme reuse them) and dropped
//! before anything that commits a row, so committed rows stay contiguous.

use lexer::{Lexer, StateId};

use super::Parser;

/// A walk's speculative rows are kept for the next walk up to this many rows
/// ([`Parser::end_walk`]).
const KEEP_SPECULATIVE_ROWS: usize = 256;
/// ... and up to this many Earley items in them (a matcher's clone copies them).
const KEEP_SPECULATIVE_ITEMS: usize = 1 << 14;

impl<L: Lexer> Parser<L> {
    /// The rows the committed stack reaches (the rows after them are speculative): its top
    /// entry's row, as rows along the stack never decrease (a lexeme's end scans into a row
    /// made after the one it ends in). One load, where the maximum over the stack cost a
    /// pass over every byte consumed at every mask.
    pub(super) fn committed_rows(&self) -> usize {
        debug_assert_eq!(
            self.stack[self.base].row,
            self.stack[..=self.base].iter().map(|p| p.row).max().unwrap_or(0),
            "rows along the committed stack never decrease"
        );
        self.stack[self.base].row as usize + 1
    }

    /// After a walk: the walk's stack entries go; its speculative rows and the scan cache
    /// stay for the next walk while they are few ([`KEEP_SPECULATIVE_ROWS`],
    /// [`KEEP_SPECULATIVE_ITEMS`]). They hold while no row is committed: the next masks
    /// inside the same lexeme (a string's body: the tokens that end the string there scan
    /// the same rows) reuse them, and a consume that may end a lexeme drops them first
    /// ([`Parser::consume_bytes`]), so committed rows stay contiguous.
    pub(super) fn end_walk(&mut self) {
        self.drop_speculative_over(KEEP_SPECULATIVE_ROWS, KEEP_SPECULATIVE_ITEMS);
    }

    /// Drops the stack entries above the committed ones, and the speculative rows (with the
    /// scan cache) when there are more than `rows` of them or more than `items` items in
    /// them.
    fn drop_speculative_over(&mut self, rows: usize, items: usize) {
        self.stack.truncate(self.base + 1);
        let keep = self.committed_rows();
        if keep < self.chart.rows.len()
            && (self.chart.rows.len() - keep > rows
                || self.chart.items.len() - self.chart.rows[keep].start as usize > items)
        {
            self.truncate_rows(keep);
        }
    }

    /// Whether rows beyond the committed ones are kept (from an earlier walk or query).
    pub(super) fn has_speculative(&self) -> bool {
        self.committed_rows() < self.chart.rows.len()
    }

    /// Whether `bytes` continue the pending lexeme on known transitions (no lexeme ends, no
    /// row is made: the speculative rows stay valid), as `push_byte_fast` takes them.
    pub(super) fn within_lexeme(&self, bytes: &[u8]) -> bool {
        if !self.opts.lexeme_max_tokens.is_empty() {
            // A token limit may end the lexeme after the token.
            return false;
        }
        let mut s = self.stack.last().expect("the stack holds the start").lexer;
        for &b in bytes {
            match self.lexer.step_warm(s, b) {
                Some(n) if n != StateId::DEAD => s = n,
                _ => return false,
            }
        }
        true
    }

    /// Drops speculative rows (those above the committed stack) and the scan cache.
    pub(super) fn drop_speculative(&mut self) {
        self.drop_speculative_over(0, 0);
    }

    /// Keeps the first `keep` rows (with their start states) and forgets the scan cache.
    pub(super) fn truncate_rows(&mut self, keep: usize) {
        self.chart.truncate(keep);
        self.row_start.truncate(keep);
        self.row_start_once.truncate(keep);
        self.scan_cache.clear();
        self.last_scan = None;
    }
}
