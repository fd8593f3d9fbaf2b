//! [`TokTrie`]: all token byte strings in one flat prefix tree, and the mask walk.

use crate::node::TrieNode;
use crate::{Error, ErrorKind, Recognizer, TokenId, TokenSet, Vocabulary, SPECIAL_TOKEN_MARKER};

mod split;

pub use split::{FrontierKeys, PieceRef, SplitWalk};

/// Where tokens complete their first character: see [`TokTrie::first_char_nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstChar {
    /// The path from the root (the first `len` bytes).
    pub bytes: [u8; 4],
    /// The path's length.
    pub len: u8,
    /// The node at the end of the path.
    pub node: u32,
    /// The number of nodes at and below it (the walk a proof for it saves).
    pub size: u32,
}

/// What [`TokTrie::walk_subtree_or_whole`] did below a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubtreeWalk {
    /// The node's byte was not taken: nothing at or below it is allowed.
    Rejected,
    /// The node's children were walked.
    Walked,
    /// Every token at and below the node was allowed without a walk.
    Whole,
}

/// A prefix tree of all token byte strings, laid out flat in DFS order, 8 bytes per node.
///
/// Node 0 is the root; the children of a node follow it in increasing byte order, each
/// followed by its own subtree. Immutable once built: `Send + Sync`, share it across
/// threads and matchers.
#[derive(Clone, Debug)]
pub struct TokTrie {
    nodes: Vec<TrieNode>,
    /// `(node, subtree size, parents)` for nodes whose fields hold an escape, sorted by node.
    overflow: Vec<(u32, u32, u32)>,
    /// `(representative, duplicate)`: tokens whose bytes equal an earlier token's.
    dups: Vec<(TokenId, TokenId)>,
    /// The special tokens, never walked byte by byte.
    specials: Vec<TokenId>,
    /// Regular tokens of two or more bytes that start with 0xFF, walked on the slow path.
    ff_tokens: Vec<(TokenId, Vec<u8>)>,
    /// The first node of the root's 0xFF subtree (`nodes.len()` if none).
    ff_node: usize,
    /// The subtree sizes of the root's children before `ff_node`, in order: where the first
    /// level's nodes are without reading them ([`TokTrie::split_walk`]).
    root_children: Vec<u32>,
    vocab_size: usize,
    max_token_len: usize,
}

/// Size figures of a trie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrieStats {
    /// Ids in the vocabulary (mask width).
    pub vocab_size: usize,
    /// Tokens with bytes (holes excluded).
    pub num_tokens: usize,
    /// Special tokens among them.
    pub num_special: usize,
    /// Tokens whose bytes duplicate another token's.
    pub num_duplicates: usize,
    /// Trie nodes, root included.
    pub num_nodes: usize,
    /// Length in bytes of the longest token.
    pub max_token_len: usize,
    /// Memory of the trie, in bytes.
    pub num_bytes: usize,
}

impl std::fmt::Display for TrieStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ids, {} tokens ({} special, {} duplicates), {} nodes, longest token {} bytes, \
             {} KiB ({:.2} bytes/token)",
            self.vocab_size,
            self.num_tokens,
            self.num_special,
            self.num_duplicates,
            self.num_nodes,
            self.max_token_len,
            self.num_bytes / 1024,
            self.num_bytes as f64 / self.num_tokens.max(1) as f64
        )
    }
}

impl TokTrie {
    /// Builds the trie of `vocab`. Fails only for vocabularies over [`TokenId::MAX_VOCAB`].
    pub fn from_vocab(vocab: &Vocabulary) -> Result<TokTrie, Error> {
        let vocab_size = vocab.len();
        if vocab_size > TokenId::MAX_VOCAB {
            return Err(Error::new(
                ErrorKind::Limit,
                format!(
                    "vocabulary of {vocab_size} ids is too large (at most {})",
                    TokenId::MAX_VOCAB
                ),
            ));
        }
        let mut order: Vec<(TokenId, &[u8])> = vocab.iter().collect();
        // Stable sort: among duplicates the lowest id becomes the representative.
        order.sort_by(|a, b| a.1.cmp(b.1));

        let mut nodes = vec![TrieNode::new(0, TrieNode::NO_TOKEN, 0, 0)];
        // (subtree size, parents) for every node, filled as nodes close; written at the end.
        let mut sizes: Vec<(u32, u32)> = vec![(0, 0)];
        // Open nodes below the root: stack[d] is the node at depth d + 1 on the current path.
        let mut stack: Vec<usize> = Vec::new();
        let mut dups = Vec::new();
        let mut prev: &[u8] = &[];
        let mut max_token_len = 0;

        let close =
            |stack: &mut Vec<usize>, keep: usize, sizes: &mut Vec<(u32, u32)>, end: usize| {
                // Every node popped now ends its subtree at `end`: the deepest closes
                // `stack.len() - keep` levels, the next one up one fewer, and so on.
                for (j, &n) in stack.iter().enumerate().skip(keep) {
                    sizes[n] = ((end - n) as u32, (j - keep + 1) as u32);
                }
                stack.truncate(keep);
            };

        for &(id, bytes) in &order {
            max_token_len = max_token_len.max(bytes.len());
            let lcp = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            if lcp == bytes.len() && lcp == prev.len() {
                let rep = nodes[*stack.last().expect("a duplicate follows its twin")].token_raw();
                dups.push((TokenId(rep), id));
                continue;
            }
            close(&mut stack, lcp, &mut sizes, nodes.len());
            for &b in &bytes[lcp..] {
                stack.push(nodes.len());
                nodes.push(TrieNode::new(b, TrieNode::NO_TOKEN, 0, 0));
                sizes.push((0, 0));
            }
            let last = *stack.last().expect("a token has at least one byte");
            nodes[last].set_token(id.0);
            prev = bytes;
        }
        close(&mut stack, 0, &mut sizes, nodes.len());
        sizes[0] = (nodes.len() as u32, 0);

        let mut overflow = Vec::new();
        for (i, &(size, parents)) in sizes.iter().enumerate() {
            let fits = size < TrieNode::SIZE_ESCAPE && parents < TrieNode::PARENTS_ESCAPE;
            if fits {
                nodes[i].set_size_parents(size, parents);
            } else {
                nodes[i].set_size_parents(
                    size.min(TrieNode::SIZE_ESCAPE),
                    parents.min(TrieNode::PARENTS_ESCAPE),
                );
                overflow.push((i as u32, size, parents));
            }
        }

        let specials: Vec<TokenId> = vocab.special_tokens().iter().collect();
        let ff_tokens = vocab
            .iter()
            .filter(|(t, b)| b.len() > 1 && b[0] == SPECIAL_TOKEN_MARKER && !vocab.is_special(*t))
            .map(|(t, b)| (t, b.to_vec()))
            .collect();
        let mut trie = TokTrie {
            nodes,
            overflow,
            dups,
            specials,
            ff_tokens,
            ff_node: 0,
            root_children: Vec::new(),
            vocab_size,
            max_token_len,
        };
        trie.ff_node = trie.child_at_byte(0, SPECIAL_TOKEN_MARKER).unwrap_or(trie.nodes.len());
        let mut p = 1;
        while p < trie.ff_node.min(trie.nodes.len()) {
            let size = trie.subtree_size(p);
            trie.root_children.push(size as u32);
            p += size;
        }
        Ok(trie)
    }

    /// The number of token ids (the mask width).
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The number of nodes, root included.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The node at `idx`.
    pub fn node(&self, idx: usize) -> TrieNode {
        self.nodes[idx]
    }

    /// The length of the longest token, in bytes.
    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// Memory owned by the trie, in bytes.
    pub fn num_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<TrieNode>()
            + self.overflow.len() * 12
            + self.dups.len() * 8
            + self.specials.len() * 4
            + self.ff_tokens.iter().map(|(_, b)| b.len() + 28).sum::<usize>()
            + self.root_children.len() * 4
    }

    /// Size figures.
    pub fn stats(&self) -> TrieStats {
        let num_tokens =
            self.nodes.iter().filter(|n| n.token().is_some()).count() + self.dups.len();
        TrieStats {
            vocab_size: self.vocab_size,
            num_tokens,
            num_special: self.specials.len(),
            num_duplicates: self.dups.len(),
            num_nodes: self.nodes.len(),
            max_token_len: self.max_token_len,
            num_bytes: self.num_bytes(),
        }
    }

    #[cold]
    #[inline(never)]
    fn overflow_entry(&self, idx: usize) -> (u32, u32) {
        let i = self
            .overflow
            .binary_search_by_key(&(idx as u32), |e| e.0)
            .expect("every escaped node has an overflow entry");
        (self.overflow[i].1, self.overflow[i].2)
    }

    /// The number of nodes in the subtree of node `idx`, itself included.
    #[inline(always)]
    pub fn subtree_size(&self, idx: usize) -> usize {
        let s = self.nodes[idx].subtree_raw();
        if s != TrieNode::SIZE_ESCAPE {
            s as usize
        } else {
            self.overflow_entry(idx).0 as usize
        }
    }

    /// The number of levels whose subtrees end with node `idx`'s subtree, itself included.
    #[inline(always)]
    fn num_parents(&self, idx: usize) -> usize {
        let p = self.nodes[idx].parents_raw();
        if p != TrieNode::PARENTS_ESCAPE {
            p as usize
        } else {
            self.overflow_entry(idx).1 as usize
        }
    }

    /// The child of node `idx` along `byte`.
    pub fn child_at_byte(&self, idx: usize, byte: u8) -> Option<usize> {
        let end = idx + self.subtree_size(idx);
        let mut p = idx + 1;
        while p < end {
            let b = self.nodes[p].byte();
            if b == byte {
                return Some(p);
            }
            if b > byte {
                return None;
            }
            p += self.subtree_size(p);
        }
        None
    }

    /// The node reached from the root along `bytes`.
    pub fn node_at_bytes(&self, bytes: &[u8]) -> Option<usize> {
        bytes.iter().try_fold(0, |n, &b| self.child_at_byte(n, b))
    }

    /// The token whose bytes are exactly `bytes` (the lowest id among duplicates).
    pub fn token_id(&self, bytes: &[u8]) -> Option<TokenId> {
        self.node_at_bytes(bytes).and_then(|n| self.nodes[n].token())
    }

    /// Whether some token is a strict extension of `bytes`.
    pub fn has_extensions(&self, bytes: &[u8]) -> bool {
        self.node_at_bytes(bytes).is_some_and(|n| self.subtree_size(n) > 1)
    }

    /// All tokens that are prefixes of `bytes` (shortest first).
    pub fn prefix_tokens(&self, bytes: &[u8]) -> Vec<TokenId> {
        let mut out = Vec::new();
        let mut n = 0;
        for &b in bytes {
            match self.child_at_byte(n, b) {
                Some(c) => n = c,
                None => break,
            }
            out.extend(self.nodes[n].token());
        }
        out
    }

    /// The longest token that is a prefix of `bytes`, with its length.
    pub fn longest_prefix_token(&self, bytes: &[u8]) -> Option<(TokenId, usize)> {
        let mut n = 0;
        let mut best = None;
        for (i, &b) in bytes.iter().enumerate() {
            match self.child_at_byte(n, b) {
                Some(c) => n = c,
                None => break,
            }
            if let Some(t) = self.nodes[n].token() {
                best = Some((t, i + 1));
            }
        }
        best
    }

    /// The token mask of `r`: adds to `mask` every token `r` allows next (a regular token
    /// iff `r` accepts all its bytes, a special token iff [`Recognizer::special_allowed`]).
    /// The same as [`TokTrie::add_bias`] with no prefix.
    ///
    /// # Panics
    ///
    /// If `mask` is not as wide as the vocabulary.
    pub fn compute_mask<R: Recognizer>(&self, r: &mut R, mask: &mut TokenSet) {
        self.add_bias(r, mask, &[]);
    }

    /// Tokenizes `bytes` by longest match from the left. Not the canonical tokenization of
    /// a BPE tokenizer (use [`crate::Tokenizer::tokenize`] for that); returns `None` if some
    /// byte has no token.
    pub fn greedy_tokenize(&self, bytes: &[u8]) -> Option<Vec<TokenId>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let (tok, len) = self.longest_prefix_token(&bytes[i..])?;
            out.push(tok);
            i += len;
        }
        Some(out)
    }

    /// Adds to `mask` every token allowed by `r`. With an empty `start_prefix` this is the
    /// plain mask: a regular token is allowed iff `r` accepts all its bytes, a special token
    /// iff [`Recognizer::special_allowed`] says so. With a non-empty `start_prefix` (token
    /// healing), `r` is assumed to have consumed the prefix already and the walk covers only
    /// the regular tokens that start with it, each allowed iff `r` accepts the rest of its
    /// bytes.
    ///
    /// The walk is one loop over the node array: a rejected byte skips the node's whole
    /// subtree; after a leaf or a skip it pops as many bytes as the levels that end there
    /// (see [`Recognizer`] for the calling contract). [`TokTrie::compute_mask`] is the plain
    /// mask without a prefix.
    ///
    /// # Panics
    ///
    /// If `mask` is not as wide as the vocabulary (`TokenSet::new(trie.vocab_size())`).
    pub fn add_bias<R: Recognizer>(&self, r: &mut R, mask: &mut TokenSet, start_prefix: &[u8]) {
        assert_eq!(mask.universe(), self.vocab_size, "mask width differs from the vocabulary");
        r.trie_started();
        if start_prefix.is_empty() {
            self.walk_root(r, mask);
            self.walk_ff(r, mask);
        } else if start_prefix[0] == SPECIAL_TOKEN_MARKER {
            // Special tokens live below 0xFF too; only regular tokens are walked here.
            if start_prefix.len() == 1 {
                if let Some(t) = self.nodes.get(self.ff_node).and_then(|n| n.token()) {
                    mask.insert(t);
                }
            }
            for (t, bytes) in &self.ff_tokens {
                if let Some(rest) = bytes.strip_prefix(start_prefix) {
                    if Self::push_all(r, rest) {
                        mask.insert(*t);
                    }
                }
            }
        } else if let Some(n) = self.node_at_bytes(start_prefix) {
            if let Some(t) = self.nodes[n].token() {
                mask.insert(t);
            }
            let end = n + self.subtree_size(n);
            self.walk_clamped(r, mask, n + 1, end);
        }
        self.add_duplicates(mask);
        r.trie_finished();
    }

    /// The nodes where this trie's regular tokens complete their first UTF-8 character
    /// (depth 1 for ASCII, 2 to 4 for longer characters), in trie order. Where a token ends
    /// inside a character, or bytes are not UTF-8, the entry is the first byte's node. For a
    /// mask assembled from parts (the slicer's slices proven in part).
    pub fn first_char_nodes(&self) -> Vec<FirstChar> {
        let mut out = Vec::new();
        let root_end = self.ff_node.min(self.nodes.len());
        let mut n = 1;
        while n < root_end {
            let b = self.nodes[n].byte();
            let len = match b {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            let size = self.subtree_size(n);
            let mut deeper = Vec::new();
            if len > 1 && self.chars_at(n, 1, len, [b, 0, 0, 0], &mut deeper) {
                out.extend(deeper);
            } else {
                out.push(FirstChar {
                    bytes: [b, 0, 0, 0],
                    len: 1,
                    node: n as u32,
                    size: size as u32,
                });
            }
            n += size;
        }
        out
    }

    /// The nodes `want - depth` levels below `n` (a path of `bytes`); false where a token
    /// ends above them.
    fn chars_at(
        &self,
        n: usize,
        depth: usize,
        want: usize,
        bytes: [u8; 4],
        out: &mut Vec<FirstChar>,
    ) -> bool {
        if depth == want {
            let size = self.subtree_size(n) as u32;
            out.push(FirstChar { bytes, len: want as u8, node: n as u32, size });
            return true;
        }
        if self.nodes[n].token().is_some() {
            return false;
        }
        let end = n + self.subtree_size(n);
        let mut c = n + 1;
        while c < end {
            let mut b2 = bytes;
            b2[depth] = self.nodes[c].byte();
            if !self.chars_at(c, depth + 1, want, b2, out) {
                return false;
            }
            c += self.subtree_size(c);
        }
        true
    }

    /// Removes from `mask` the tokens at and below each of `nodes` (from
    /// [`TokTrie::first_char_nodes`]), and the duplicates of removed tokens.
    pub fn remove_subtrees(&self, mask: &mut TokenSet, nodes: &[&FirstChar]) {
        for fc in nodes {
            let n = fc.node as usize;
            for node in &self.nodes[n..n + self.subtree_size(n)] {
                if let Some(t) = node.token() {
                    mask.remove(t);
                }
            }
        }
        for &(rep, dup) in &self.dups {
            if !mask.contains(rep) {
                mask.remove(dup);
            }
        }
    }

    /// [`TokTrie::add_bias`] restricted to the tokens at and below each of `nodes` (from
    /// [`TokTrie::first_char_nodes`]): `r` is asked for the node's path, then its subtree is
    /// walked.
    ///
    /// # Panics
    ///
    /// If `mask` is not as wide as the vocabulary.
    pub fn add_bias_subtrees<R: Recognizer>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
        nodes: &[&FirstChar],
    ) {
        assert_eq!(mask.universe(), self.vocab_size, "mask width differs from the vocabulary");
        r.trie_started();
        for fc in nodes {
            let path = &fc.bytes[..fc.len as usize];
            let mut pushed = 0;
            while pushed < path.len() && r.try_push_byte(path[pushed]) {
                pushed += 1;
            }
            if pushed == path.len() {
                let n = fc.node as usize;
                if let Some(t) = self.nodes[n].token() {
                    mask.insert(t);
                }
                self.walk_clamped(r, mask, n + 1, n + self.subtree_size(n));
            }
            if pushed > 0 {
                r.pop_bytes(pushed);
            }
        }
        self.add_duplicates(mask);
        r.trie_finished();
    }

    /// Whether `r`, after the bytes `before`, accepts some token that strictly extends the
    /// token spelled `token` (a longer token whose bytes start with it): the check behind
    /// forced tokens, whose last token is left out only when the grammar could take a
    /// longer one there. False when `r` does not take `before` and `token` themselves.
    pub fn has_allowed_extension<R: Recognizer>(
        &self,
        r: &mut R,
        before: &[u8],
        token: &[u8],
    ) -> bool {
        let Some(node) = self.node_at_bytes(token) else { return false };
        if self.subtree_size(node) <= 1 {
            return false;
        }
        r.trie_started();
        let mut pushed = 0;
        let path = before.iter().chain(token);
        let mut all = true;
        for &b in path {
            if !r.try_push_byte(b) {
                all = false;
                break;
            }
            pushed += 1;
        }
        let mut found = false;
        if all {
            let mut mask = TokenSet::new(self.vocab_size);
            self.walk_clamped(r, &mut mask, node + 1, node + self.subtree_size(node));
            found = !mask.is_empty();
        }
        if pushed > 0 {
            r.pop_bytes(pushed);
        }
        r.trie_finished();
        found
    }

    /// Walks node `node` and its subtree with `r` (from the state `r` is in, which must be
    /// the state after the node's parent), adding accepted tokens to `mask`; `r`'s stack is
    /// back where it was afterwards. Part of a walk between [`Recognizer::trie_started`] and
    /// [`Recognizer::trie_finished`], which the caller makes.
    pub fn walk_subtree<R: Recognizer>(&self, r: &mut R, mask: &mut TokenSet, node: usize) {
        self.walk_clamped(r, mask, node, node + self.subtree_size(node));
    }

    /// [`TokTrie::walk_subtree`] with a shortcut below the node: `r` takes the node's byte
    /// (else nothing below is allowed: [`SubtreeWalk::Rejected`]); then, where
    /// [`TokTrie::children_start_char`] and `whole(r)` answers that `r` now takes every
    /// string of whole characters below the node, every token below is added without a walk
    /// ([`SubtreeWalk::Whole`]); otherwise the children are walked. The caller's proof must
    /// cover the strings below the node (for a vocabulary slice's trie: the runs of its
    /// class).
    pub fn walk_subtree_or_whole<R: Recognizer>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
        node: usize,
        whole: impl FnOnce(&mut R) -> bool,
    ) -> SubtreeWalk {
        let n = self.nodes[node];
        if !r.try_push_byte(n.byte()) {
            return SubtreeWalk::Rejected;
        }
        let end = node + self.subtree_size(node);
        let outcome = if self.children_start_char(node) && whole(r) {
            self.add_subtree_tokens(mask, node);
            SubtreeWalk::Whole
        } else {
            if let Some(t) = n.token() {
                mask.insert(t);
            }
            self.walk_clamped(r, mask, node + 1, end);
            SubtreeWalk::Walked
        };
        r.pop_bytes(1);
        outcome
    }

    /// Whether node `node` has children and they begin a character (the first child's
    /// byte is ASCII or a UTF-8 lead byte, not a continuation byte): the node's path ends
    /// on a character boundary, in a vocabulary of valid UTF-8 tokens.
    pub fn children_start_char(&self, node: usize) -> bool {
        self.subtree_size(node) > 1 && !(0x80..0xC0).contains(&self.nodes[node + 1].byte())
    }

    /// The byte of node `node`.
    pub fn node_byte(&self, node: usize) -> u8 {
        self.nodes[node].byte()
    }

    /// Adds the tokens at and below node `node` to `mask`.
    pub fn add_subtree_tokens(&self, mask: &mut TokenSet, node: usize) {
        for c in &self.nodes[node..node + self.subtree_size(node)] {
            if let Some(t) = c.token() {
                mask.insert(t);
            }
        }
    }

    /// The part of [`TokTrie::add_bias`] after the walk of the regular tokens: tokens
    /// starting with 0xFF and special tokens. Inside a walk the caller starts and finishes.
    pub fn add_bias_specials<R: Recognizer>(&self, r: &mut R, mask: &mut TokenSet) {
        self.walk_ff(r, mask);
    }

    /// Adds to `mask` the duplicates (tokens with the same bytes as an earlier one) of the
    /// tokens in it: the last step of [`TokTrie::add_bias`].
    pub fn add_duplicates(&self, mask: &mut TokenSet) {
        for &(rep, dup) in &self.dups {
            if mask.contains(rep) {
                mask.insert(dup);
            }
        }
    }

    /// The walk over the root's subtree up to the 0xFF child. Levels counted in `parents`
    /// never include the root, so the pops stay within what was pushed.
    #[inline(never)]
    fn walk_root<R: Recognizer>(&self, r: &mut R, mask: &mut TokenSet) {
        // Two data-dependent branches per node were taken out of the loop (a third, accept
        // or reject, is the walk itself): the token bit is OR-ed in without a test (a node
        // without a token ORs 0 into word 0), and the pop after a node is deferred to the
        // next iteration as a count that is 0 inside a subtree. Measured on MaskBench full
        // walks (llama3): see BENCHMARKS.md.
        let nodes = &self.nodes[..self.ff_node];
        let words = mask.as_words_mut();
        let mut p = 1;
        let mut next_pop = 0usize;
        while p < nodes.len() {
            r.pop_bytes(next_pop);
            let n = nodes[p];
            let pop = n.parents_raw();
            let pop =
                if pop != TrieNode::PARENTS_ESCAPE { pop as usize } else { self.num_parents(p) };
            if r.try_push_byte(n.byte()) {
                let t = n.token_raw();
                let has = (t != TrieNode::NO_TOKEN) as u32;
                words[(t >> 5) as usize * has as usize] |= has << (t & 31);
                next_pop = if n.subtree_raw() == 1 { pop } else { 0 };
                p += 1;
            } else {
                next_pop = pop.saturating_sub(1);
                p += self.subtree_size(p);
            }
        }
        r.pop_bytes(next_pop);
    }

    /// The walk over nodes `start..end` (a subtree's descendants) with a depth count, so the
    /// pops at its end (which may count levels above the subtree) are clamped.
    fn walk_clamped<R: Recognizer>(
        &self,
        r: &mut R,
        mask: &mut TokenSet,
        start: usize,
        end: usize,
    ) {
        let mut depth = 0usize;
        let mut p = start;
        while p < end {
            let n = self.nodes[p];
            if r.try_push_byte(n.byte()) {
                depth += 1;
                if let Some(t) = n.token() {
                    mask.insert(t);
                }
                if self.subtree_size(p) == 1 {
                    let pop = self.num_parents(p).min(depth);
                    r.pop_bytes(pop);
                    depth -= pop;
                }
                p += 1;
            } else {
                let pop = (self.num_parents(p) - 1).min(depth);
                p += self.subtree_size(p);
                if pop > 0 {
                    r.pop_bytes(pop);
                    depth -= pop;
                }
            }
        }
        if depth > 0 {
            r.pop_bytes(depth);
        }
    }

    /// The slow path for the root's 0xFF subtree: the one-byte token 0xFF and other regular
    /// tokens starting with 0xFF through the bytes, special tokens through
    /// [`Recognizer::special_allowed`].
    fn walk_ff<R: Recognizer>(&self, r: &mut R, mask: &mut TokenSet) {
        if self.ff_node < self.nodes.len() {
            if let Some(t) = self.nodes[self.ff_node].token() {
                if r.try_push_byte(SPECIAL_TOKEN_MARKER) {
                    mask.insert(t);
                    r.pop_bytes(1);
                }
            }
        }
        for (t, bytes) in &self.ff_tokens {
            if Self::push_all(r, bytes) {
                mask.insert(*t);
            }
        }
        if !self.specials.is_empty() && r.any_special_allowed() {
            for &t in &self.specials {
                if r.special_allowed(t) {
                    mask.insert(t);
                }
            }
        }
    }

    /// Whether `r` accepts all of `bytes`; pops what it pushed.
    fn push_all<R: Recognizer>(r: &mut R, bytes: &[u8]) -> bool {
        let mut pushed = 0;
        while pushed < bytes.len() && r.try_push_byte(bytes[pushed]) {
            pushed += 1;
        }
        if pushed > 0 {
            r.pop_bytes(pushed);
        }
        pushed == bytes.len()
    }
}
