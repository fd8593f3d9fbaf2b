//! Draft masks for speculative decoding: the masks along a draft of tokens, or a draft tree,
//! in one call, with the matcher's state unchanged afterwards. Built on [`Matcher`]'s
//! public operations (compute, consume, roll back).

use toktrie::{TokenId, TokenSet};

use crate::error::ErrorKind;
use crate::{Error, Matcher};

impl Matcher {
    /// Masks for speculative decoding along a draft of k tokens, in one call: the mask now,
    /// then the mask after each draft token, stopping after the first draft token the
    /// previous mask does not allow (so k+1 masks when the whole draft is allowed, fewer
    /// otherwise). The matcher's state is unchanged afterwards (a refused draft token is
    /// never consumed, so it does not put the matcher in its error state).
    pub fn compute_masks_for_draft(&mut self, draft: &[TokenId]) -> Result<Vec<TokenSet>, Error> {
        let mut out = Vec::with_capacity(draft.len() + 1);
        let base = self.tokens().len();
        let r = (|| {
            out.push(self.compute_mask()?);
            for &t in draft {
                if !out.last().is_some_and(|m: &TokenSet| m.contains(t)) {
                    break;
                }
                self.consume_token(t)?;
                out.push(self.compute_mask()?);
            }
            Ok(())
        })();
        if self.error().is_none() {
            self.rollback(self.tokens().len() - base)?;
        }
        r.map(|()| out)
    }

    /// Masks for a draft tree: `tokens[i]` follows node `parents[i]` (`None`: the current
    /// position; a parent comes before its children). Returns the mask now, then for each
    /// node the mask after its path, or `None` when a token on its path is not allowed.
    /// Nodes are visited in order, rolling back only to the common prefix of consecutive
    /// paths. The matcher's state is unchanged afterwards.
    pub fn compute_masks_for_draft_tree(
        &mut self,
        tokens: &[TokenId],
        parents: &[Option<usize>],
    ) -> Result<(TokenSet, Vec<Option<TokenSet>>), Error> {
        if tokens.len() != parents.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("{} draft tokens but {} parent indices", tokens.len(), parents.len()),
            ));
        }
        if let Some(i) = parents.iter().enumerate().position(|(i, p)| p.is_some_and(|p| p >= i)) {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("draft node {i}: its parent must come before it"),
            ));
        }
        let root = self.compute_mask()?;
        let eos = self.eos().to_vec();
        let mut masks: Vec<Option<TokenSet>> = Vec::with_capacity(tokens.len());
        // Nodes at or below an EOS: the sequence has ended there, only EOS may follow (not
        // consumed: nothing changes after EOS).
        let mut ended = vec![false; tokens.len()];
        // The nodes whose tokens are consumed now, root first.
        let mut path: Vec<usize> = Vec::new();
        let r = (|| {
            for i in 0..tokens.len() {
                let parent_mask = match parents[i] {
                    None => Some(&root),
                    Some(p) => masks[p].as_ref(),
                };
                if !parent_mask.is_some_and(|m| m.contains(tokens[i])) {
                    masks.push(None);
                    continue;
                }
                if eos.contains(&tokens[i]) || parents[i].is_some_and(|p| ended[p]) {
                    ended[i] = true;
                    masks.push(Some(self.eos_only()));
                    continue;
                }
                // The parent's path: rewind `path` to it, then take this token.
                let mut want = Vec::new();
                let mut n = parents[i];
                while let Some(p) = n {
                    want.push(p);
                    n = parents[p];
                }
                want.reverse();
                let common = path.iter().zip(&want).take_while(|(a, b)| a == b).count();
                self.rollback(path.len() - common)?;
                path.truncate(common);
                for &p in &want[common..] {
                    self.consume_token(tokens[p])?;
                    path.push(p);
                }
                self.consume_token(tokens[i])?;
                path.push(i);
                masks.push(Some(self.compute_mask()?));
            }
            Ok(())
        })();
        if self.error().is_none() {
            self.rollback(path.len())?;
        }
        r.map(|()| (root, masks))
    }
}
