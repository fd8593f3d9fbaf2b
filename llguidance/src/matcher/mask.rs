//! A matcher's masks: the last mask answered again at the same position, reused at the
//! next position inside or near a bounded repeat (`crate::near_bound`), taken from the
//! grammar's first-row masks, or computed by the parser (sliced where the factory has
//! slices).

use toktrie::TokenSet;

use super::{Backend, Matcher, StopReason, ROW0_MASKS};
use crate::error::ErrorKind;
use crate::near_bound;
use crate::slicing::sliced_mask;
use crate::Error;

/// How the last mask was computed (`Matcher::last_at`).
#[derive(Clone)]
pub(super) enum LastAt {
    /// As the mask of the state (row, state), a counter twin: the positions of a bounded
    /// string with the same twin share it as an unbounded string's share its one state.
    Twin(u32, lexer::StateId),
    /// At the row, as a run twin's mask restricted to a bound (`near_bound::narrows`).
    Run(u32, lexer::RunBound),
}

impl Matcher {
    /// The set of tokens allowed next (EOS iff the grammar is accepting; after a stop,
    /// only EOS).
    pub fn compute_mask(&mut self) -> Result<TokenSet, Error> {
        // A repeated position is answered from the last mask without taking the shared
        // lexer's lock (matchers of one grammar on several threads do not wait for it).
        if let Some(mask) = self.cached_mask() {
            return Ok(mask.clone());
        }
        match self.compute_fresh()? {
            Some(mask) => Ok(mask),
            None => Ok(self.kept_mask().clone()),
        }
    }

    /// The last mask, where [`Matcher::compute_fresh`] kept the mask it computed.
    fn kept_mask(&self) -> &TokenSet {
        &self.last_mask.as_ref().expect("kept by compute_fresh").1
    }

    /// Computes the mask at a position not answered from the last mask: `None` when the
    /// mask is kept as the last mask (the Earley engine; the caller copies it from there,
    /// the only copy), `Some` otherwise.
    fn compute_fresh(&mut self) -> Result<Option<TokenSet>, Error> {
        self.guarded(true, |m| {
            if m.stop != StopReason::NotStopped {
                return Ok(Some(m.eos_only()));
            }
            match &mut m.backend {
                Backend::Earley(p) => {
                    let key = p.position_key();
                    // Inside or near a bounded repeat, the mask is computed at a twin of the
                    // state and finished for the state itself (`crate::near_bound`).
                    let real = key.1;
                    let (at, near) =
                        near_bound::mask_state(p, &m.shared, &mut m.slicing, real, &mut m.row_twin);
                    let same = matches!(near, near_bound::Near::Same);
                    if let Some(last) = m.last_mask.as_mut().filter(|_| same) {
                        if matches!(m.last_at, Some(LastAt::Twin(r, s)) if (r, s) == (key.0, at)) {
                            last.0 = key;
                            m.mask_cache_hits += 1;
                            return Ok(None);
                        }
                    }
                    // Nearer the bound, the last mask restricted in place when it was this
                    // run twin's, whole or narrowed (no copy of the twin's mask;
                    // `near_bound::narrows`).
                    if let near_bound::Near::Run(rb) = &near {
                        let plain = !p.has_token_terminals();
                        let from = match m.last_at.take() {
                            Some(LastAt::Run(row, from))
                                if near_bound::narrows(row, &from, key.0, rb) =>
                            {
                                Some(Some(from))
                            }
                            Some(LastAt::Twin(row, s)) if plain && (row, s) == (key.0, rb.twin) => {
                                Some(None)
                            }
                            _ => None,
                        };
                        if let (Some(from), Some(last)) = (from, m.last_mask.as_mut()) {
                            let mask = &mut last.1;
                            near_bound::narrow(&m.shared, &mut m.slicing, from.as_ref(), rb, mask);
                            // Empty: computed in full below (which reports it).
                            if !mask.is_empty() {
                                last.0 = key;
                                m.last_at = Some(LastAt::Run(key.0, rb.clone()));
                                return Ok(None);
                            }
                        }
                    }
                    let walks = m.template.as_deref().map(|t| crate::slicing::TemplateWalks {
                        walks: &t.walks,
                        states: t.states,
                    });
                    // First row: a state the template knows is shared across the grammar's
                    // matchers, a newer one kept for the next template.
                    let template = m.template.as_ref().filter(|_| key.0 == 0);
                    let known = template.filter(|t| at.as_usize() < t.states);
                    // First-row masks are shared by the grammar's matchers, which stop on the
                    // vocabulary's EOS ids: a matcher with its own stop set keeps out.
                    let skip = std::mem::take(&mut m.skip_row0)
                        || m.shared.plain
                        || m.stop_tokens.is_some();
                    let mut hit = None;
                    if key.0 == 0 && !skip {
                        // Copied into the last mask's buffer (no allocation and free per hit).
                        let copy = |from: &TokenSet, last: &mut Option<(_, TokenSet)>| {
                            Some(match last.take() {
                                Some((_, mut s)) if s.universe() == from.universe() => {
                                    s.copy_from(from);
                                    s
                                }
                                _ => from.clone(),
                            })
                        };
                        hit = match known {
                            Some(t) => {
                                let r = lexer::lock_cache(&t.row0);
                                r.and_then(|r| copy(r.get(&at)?, &mut m.last_mask))
                            }
                            None => m.row0_own.get(&at).and_then(|x| copy(x, &mut m.last_mask)),
                        };
                        if hit.is_some() {
                            m.mask_cache_hits += 1;
                        }
                    }
                    let mask = match hit {
                        Some(mask) => mask,
                        None => {
                            // The last mask's buffer is reused (one 16 KB allocation and free
                            // less per mask at 128k tokens: a large allocation also
                            // consolidates glibc's fast bins).
                            let scratch = m.last_mask.take().map(|(_, s)| s);
                            p.replace_lexer_state(at);
                            m.slicing.twins += u64::from(at != real);
                            let mask = match (&m.shared.slices, m.slicing.on) {
                                (Some(slices), true) => sliced_mask(
                                    p,
                                    slices,
                                    &m.shared.trie,
                                    &mut m.slicing,
                                    walks,
                                    scratch,
                                ),
                                _ => p.compute_mask(&m.shared.trie).map_err(Error::from),
                            };
                            p.replace_lexer_state(real);
                            let mask = mask?;
                            let shared_row0 = m.stop_tokens.is_none() && !mask.is_empty();
                            if let Some(t) = known.filter(|_| shared_row0) {
                                if let Some(mut r) = lexer::lock_cache(&t.row0) {
                                    if r.len() < ROW0_MASKS {
                                        r.insert(at, mask.clone());
                                    }
                                }
                            } else if template.is_some()
                                && shared_row0
                                && m.row0_own.len() < ROW0_MASKS
                            {
                                m.row0_own.insert(at, mask.clone());
                            }
                            mask
                        }
                    };
                    let run = match &near {
                        near_bound::Near::Run(rb) if !p.has_token_terminals() => {
                            Some(LastAt::Run(key.0, rb.clone()))
                        }
                        _ => None,
                    };
                    let mask = near_bound::finish(near, p, &m.shared, &mut m.slicing, walks, mask)?;
                    if mask.is_empty() {
                        // Never an empty mask: a server cannot sample from one. The sticky
                        // error state allows EOS only.
                        return Err(Error::new(
                            ErrorKind::Grammar,
                            "no token can come next: the grammar matches nothing from here \
                             (a regex that matches nothing, or constraints that contradict \
                             each other)",
                        ));
                    }
                    m.last_mask = Some((key, mask));
                    m.last_at = if same { Some(LastAt::Twin(key.0, at)) } else { run };
                    Ok(None)
                }
                Backend::TokenDfa(g) => g
                    .index()
                    .mask(g.get_state())
                    .map(Some)
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string())),
            }
        })
    }

    /// [`Matcher::compute_mask`] into a caller's buffer of at least `(vocab + 31) / 32` words
    /// (a repeated position is copied from the last mask, with no allocation).
    pub fn compute_mask_into(&mut self, out: &mut [u32]) -> Result<(), Error> {
        if self.cached_mask_into(out) {
            return Ok(());
        }
        let fresh = self.compute_fresh()?;
        let mask = match &fresh {
            Some(mask) => mask,
            None => self.kept_mask(),
        };
        mask.write_to(out).map_err(|e| Error::new(ErrorKind::Usage, e.to_string()))
    }

    /// Writes the mask into `out` if it is the last one computed (the same parser position,
    /// no error, not stopped): a copy, no computation; `false` otherwise (`out` untouched).
    /// For callers that do cheap work inline and hand the rest to another thread.
    pub fn cached_mask_into(&mut self, out: &mut [u32]) -> bool {
        self.cached_mask().is_some_and(|mask| mask.write_to(out).is_ok())
    }

    /// The last mask, if the parser is still at its position (no error, not stopped);
    /// counted as a cache hit.
    fn cached_mask(&mut self) -> Option<&TokenSet> {
        if self.error.is_some()
            || self.stop != StopReason::NotStopped
            || self.shared.plain
            || self.cancel.is_cancelled()
        {
            return None;
        }
        let (Backend::Earley(p), Some((k, mask))) = (&self.backend, &self.last_mask) else {
            return None;
        };
        if *k != p.position_key() {
            return None;
        }
        self.mask_cache_hits += 1;
        Some(mask)
    }
}
