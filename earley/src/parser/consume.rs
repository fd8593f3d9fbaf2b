//! Consuming tokens: a regular token's bytes, a special token or a token a token terminal
//! expects, each committed at a token boundary; `max_tokens` lexemes ended after their last
//! token; rollback to an earlier token boundary.

use lexer::{LexemeIdx, LexemeSet, Lexer, StateId};
use toktrie::{TokenId, Vocabulary};

use super::{Parser, Pos};
use crate::{Error, ErrorKind};

impl<L: Lexer> Parser<L> {
    /// Consumes the bytes of one token (a regular token: its bytes; a special token: scanned
    /// as a special terminal; EOS: only checked to be allowed).
    pub fn consume_token(&mut self, vocab: &Vocabulary, tok: TokenId) -> Result<(), Error> {
        self.check_error()?;
        let bytes = vocab
            .try_token_bytes(tok)
            .map_err(|e| Error::new(ErrorKind::Rejected, e.to_string()))?;
        if bytes.is_empty() {
            return Err(Error::new(ErrorKind::Rejected, format!("token {tok} has no bytes")));
        }
        if vocab.is_special(tok) || self.token_terminal_expected(tok)? {
            // A regular token a token terminal expects is scanned as that terminal (one
            // whole token), also where its bytes would match lexemes too (as LLGuidance).
            self.consume_special(tok)
        } else {
            let bytes = bytes.to_vec();
            self.consume_bytes(&bytes)
        }
    }

    /// Whether a token terminal can take `tok` now (after the pending lexeme, if it can end).
    fn token_terminal_expected(&mut self, tok: TokenId) -> Result<bool, Error> {
        if !self.token_terminals || self.opts.eos.contains(&tok) {
            return Ok(false);
        }
        let Some(r) = self.row_if_ended()? else { return Ok(false) };
        let yes = self.chart.expects_special(&self.cfg, r, tok.0);
        self.drop_speculative();
        Ok(yes)
    }

    /// Consumes a special token (EOS: allowed iff accepting; changes nothing else).
    pub fn consume_special(&mut self, tok: TokenId) -> Result<(), Error> {
        self.check_error()?;
        // It commits a row: none speculative below it.
        self.drop_speculative();
        self.start_step();
        let Some(r) = self.row_if_ended()? else {
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("special token {tok} not allowed here"),
            ));
        };
        if self.opts.eos.contains(&tok) {
            if !self.chart.rows[r as usize].accepting {
                return Err(Error::new(
                    ErrorKind::Rejected,
                    "EOS not allowed: the grammar is not accepting",
                ));
            }
            self.token_ends.push(self.stack.len());
            return Ok(());
        }
        let next =
            self.chart.scan(&self.cfg, &self.opts.limits, r, &LexemeSet::new(), Some(tok.0))?;
        let Some(r2) = next else {
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("special token {tok} not allowed here"),
            ));
        };
        self.after_new_row(r2, None)?;
        // A special token takes the place of a byte on the stack; its byte is the marker.
        if r != self.stack.last().expect("the stack holds the start").row {
            self.entered.push((r, self.stack.len() - 1));
        }
        self.entered.push((r2, self.stack.len()));
        self.stack.push(Pos { row: r2, lexer: self.row_start[r2 as usize] });
        self.bytes.push(toktrie::SPECIAL_TOKEN_MARKER);
        self.commit()
    }

    /// Consumes `bytes` as one token. On rejection nothing changes and the error says at
    /// which byte.
    pub fn consume_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.check_error()?;
        // It may commit rows: none speculative below them (the bytes are checked only
        // when some are kept).
        self.stack.truncate(self.base + 1);
        if self.has_speculative() && !self.within_lexeme(bytes) {
            self.drop_speculative();
        }
        self.start_step();
        let len0 = self.stack.len();
        let entered0 = self.entered.len();
        self.recording = true;
        for (i, &b) in bytes.iter().enumerate() {
            match self.push_byte_fast(b) {
                Ok(true) => {}
                Ok(false) => {
                    self.recording = false;
                    self.stack.truncate(len0);
                    self.entered.truncate(entered0);
                    return Err(Error::new(
                        ErrorKind::Rejected,
                        format!("byte {i} ({:?}) of the token rejected", b as char),
                    ));
                }
                Err(e) => {
                    self.recording = false;
                    self.error = Some(e.clone());
                    return Err(e);
                }
            }
        }
        self.recording = false;
        self.bytes.extend_from_slice(bytes);
        self.commit()
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.base = self.stack.len() - 1;
        self.token_ends.push(self.stack.len());
        if self.opts.lexeme_max_tokens.is_empty() {
            return Ok(());
        }
        self.enforce_token_limits().inspect_err(|e| self.error = Some(e.clone()))
    }

    /// After a token: if the pending lexeme's live lexemes are all `max_tokens`-limited and
    /// have used their tokens, end the lexeme here (or, not accepting, kill the parse).
    fn enforce_token_limits(&mut self) -> Result<(), Error> {
        let top_i = self.stack.len() - 1;
        let top = self.stack[top_i];
        if self.at_row_start(top) || top.lexer == StateId::DEAD {
            return Ok(());
        }
        // The pending lexeme starts at the last stack entry of this row in its start state.
        let Some(p0) = (0..top_i)
            .rev()
            .find(|&i| self.stack[i].row == top.row && self.at_row_start(self.stack[i]))
        else {
            return Ok(());
        };
        // Tokens holding its bytes so far: the one holding byte p0 up to the last one.
        let first = self.token_ends.partition_point(|&e| e - 1 <= p0);
        let used = self.token_ends.len() - first;
        // Only when every live lexeme is limited and out of tokens.
        let live = self.lexer.possible(top.lexer);
        let mut exhausted = 0;
        for &(lx, n) in &self.opts.lexeme_max_tokens {
            if live.contains(lx) {
                if used < n {
                    return Ok(());
                }
                exhausted += 1;
            }
        }
        if exhausted == 0 || exhausted != live.len() {
            return Ok(());
        }
        let finishes = &self.opts.lexeme_finish;
        if finishes.iter().any(|&(lx, _)| live.contains(lx)) {
            // A lexeme with a finish goes on with only that (the rest of a tag's end); the
            // others must end here (their finish is the empty string).
            let finish: Vec<(LexemeIdx, Option<&lexer::RegexSpec>)> = self
                .opts
                .lexeme_max_tokens
                .iter()
                .filter(|&&(lx, _)| live.contains(lx))
                .map(|&(lx, _)| (lx, finishes.iter().find(|f| f.0 == lx).map(|f| &f.1)))
                .collect();
            let s = self.lexer.restrict(top.lexer, &finish).map_err(super::lexer_error)?;
            self.stack[top_i] = Pos { row: top.row, lexer: s };
            return Ok(());
        }
        let ended = if self.lexer.flags(top.lexer).is_accepting() {
            self.end_lexeme(top.row, top.lexer)?
        } else {
            None
        };
        self.stack[top_i] = match ended {
            Some((r, once)) => {
                self.entered.push((r, top_i));
                Pos { row: r, lexer: self.start_after(r, once) }
            }
            None => Pos { row: top.row, lexer: StateId::DEAD },
        };
        Ok(())
    }

    /// The number of tokens consumed.
    pub fn num_tokens(&self) -> usize {
        self.token_ends.len()
    }

    /// Undoes the last `n` tokens. Errors if fewer were consumed.
    pub fn rollback(&mut self, n: usize) -> Result<(), Error> {
        if n > self.token_ends.len() {
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("cannot roll back {n} tokens: only {} consumed", self.token_ends.len()),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let keep_tokens = self.token_ends.len() - n;
        self.token_ends.truncate(keep_tokens);
        let len = self.token_ends.last().copied().unwrap_or(1);
        self.stack.truncate(len);
        self.bytes.truncate(len - 1);
        self.base = len - 1;
        let last_row = self.stack[self.base].row;
        while self.entered.last().is_some_and(|&(r, at)| r > last_row || at > self.base) {
            self.entered.pop();
        }
        // Rows after the committed stack are dropped (the error, if any, stays: it may have
        // come from a limit that the same tokens would hit again).
        self.truncate_rows(self.committed_rows());
        Ok(())
    }
}
