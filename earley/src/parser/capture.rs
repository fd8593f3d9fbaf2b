//! Captures: the text of finished rules with a capture name, read off the rows the committed
//! bytes entered; a stop string (literal or regex) ends the text but is not part of it.

use hashbrown::HashMap;
use lexer::{LexemeIdx, LexemeSet, Lexer, StateId};

use super::Parser;

impl<L: Lexer> Parser<L> {
    /// Captures of finished rules on the committed input: `(name, bytes)` in the order their
    /// rules finished. A pending lexeme (one that could still grow) is not finished yet.
    pub fn captures(&self) -> Vec<(String, Vec<u8>)>
    where
        L: Clone,
    {
        self.captures_with(&mut self.lexer.clone())
    }

    /// [`Parser::captures`] with `lexer` (built from the same spec) for the regex stops: for
    /// callers whose parser holds a placeholder while the real lexer is shared.
    pub fn captures_with(&self, lexer: &mut L) -> Vec<(String, Vec<u8>)> {
        let pos: HashMap<u32, usize> = self.entered.iter().map(|&(r, at)| (r, at)).collect();
        let mut out = Vec::new();
        for &(r, end) in &self.entered {
            for (lhs, origin) in self.chart.completed(&self.cfg, r) {
                let props = &self.cfg.symbol(lhs).props;
                if props.capture.is_none() && props.stop_capture.is_none() {
                    continue;
                }
                let Some(&start) = pos.get(&origin) else { continue };
                if start > end || end > self.bytes.len() {
                    continue;
                }
                let text = &self.bytes[start..end];
                // A stop string ends the text but is not part of it: a literal one, or the
                // shortest suffix a regex stop matches.
                let stop_len = match (&props.stop, props.stop_lexeme) {
                    (Some(s), _) if text.ends_with(s) => s.len(),
                    (_, Some(lx)) => regex_suffix_len(lexer, text, lx),
                    _ => 0,
                };
                let (body, stop) = text.split_at(text.len() - stop_len);
                if let Some(name) = &props.capture {
                    out.push((name.clone(), body.to_vec()));
                }
                if let Some(name) = &props.stop_capture {
                    out.push((name.clone(), stop.to_vec()));
                }
            }
        }
        out
    }
}

/// The length of the shortest suffix of `text` that lexeme `lx` matches whole (0 if none).
fn regex_suffix_len<L: Lexer>(lexer: &mut L, text: &[u8], lx: LexemeIdx) -> usize {
    let mut only = LexemeSet::new();
    only.insert(lx);
    let Ok(s0) = lexer.start_state(&only) else { return 0 };
    for i in (0..text.len()).rev() {
        let mut s = s0;
        for &b in &text[i..] {
            match lexer.advance(s, b) {
                Ok(n) if n != StateId::DEAD => s = n,
                _ => {
                    s = StateId::DEAD;
                    break;
                }
            }
        }
        if s != StateId::DEAD && lexer.accepting(s).contains(lx) {
            return text.len() - i;
        }
    }
    0
}
