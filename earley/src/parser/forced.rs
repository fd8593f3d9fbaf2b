//! Forced bytes: the bytes every continuation must start with, found exactly by trying
//! every byte at each position (the speculative stack entries are popped afterwards).

use lexer::Lexer;

use super::{lexer_error, Parser};
use crate::Error;

impl<L: Lexer> Parser<L> {
    /// The bytes every continuation must start with (empty if the grammar may end here or
    /// several bytes are possible). Exact: found by trying every byte.
    pub fn forced_bytes(&mut self) -> Result<Vec<u8>, Error> {
        self.check_error()?;
        let mut out = Vec::new();
        let len0 = self.stack.len();
        loop {
            if out.len() >= 4096 {
                break;
            }
            let r = self.row_if_ended()?;
            if r.is_some_and(|r| {
                let row = &self.chart.rows[r as usize];
                row.accepting || row.has_special
            }) {
                break;
            }
            // Inside a lexeme that cannot end here, the lexer alone decides the next byte:
            // one it forces is the grammar's (the trait's `forced_byte` is exact when it
            // answers), without trying all 256 (a forced key of 15 bytes tried 3,840 bytes,
            // ~40 µs, at every forced position of a JSON object).
            let st = self.current_lexer_state();
            if !self.lexer.flags(st).is_accepting() {
                if let Some(b) = self.lexer.forced_byte(st).map_err(lexer_error)? {
                    if self.push_byte(b)? {
                        out.push(b);
                        continue;
                    }
                }
            }
            let mut only = None;
            let mut count = 0;
            for b in 0..=255u8 {
                if self.push_byte(b)? {
                    self.stack.pop();
                    count += 1;
                    only = Some(b);
                    if count > 1 {
                        break;
                    }
                }
            }
            match (count, only) {
                (1, Some(b)) => {
                    self.push_byte(b)?;
                    out.push(b);
                }
                _ => break,
            }
        }
        self.stack.truncate(len0);
        Ok(out)
    }
}

impl<L: Lexer> Parser<L> {
    /// Whether the grammar, after the bytes `before`, takes a token of `trie` that strictly
    /// extends the token spelled `token` (see [`TokTrie::has_allowed_extension`]): forced
    /// tokens leave their last token out only then.
    ///
    /// [`TokTrie::has_allowed_extension`]: toktrie::TokTrie::has_allowed_extension
    pub fn has_allowed_extension(
        &mut self,
        trie: &toktrie::TokTrie,
        before: &[u8],
        token: &[u8],
    ) -> Result<bool, Error> {
        self.check_error()?;
        let r = trie.has_allowed_extension(self, before, token);
        self.check_error()?;
        Ok(r)
    }
}
