//! [`TokTrie`]: all token byte strings in one flat prefix tree, and the mask walk.

use std::sync::OnceLock;

use crate::node::TrieNode;
use crate::{Error, ErrorKind, Recognizer, TokenId, TokenSet, Vocabulary, SPECIAL_TOKEN_MARKER};

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

/// A walk of a trie decided by a byte automaton alone, as far as it can decide it (see
/// [`TokTrie::split_walk`]): the tokens it accepts, and the nodes it left to the full
/// recognizer with the automaton's state before each.
#[derive(Clone, Debug)]
pub struct SplitWalk {
    /// The accepted tokens: ids when few, else a set.
    allowed: Allowed,
    /// `(node, state)`: the node's byte was not decided from `state` (the state after the
    /// node's parent); its subtree was not walked.
    frontier: Vec<(u32, u32)>,
    /// Nodes the automaton decided.
    decided: usize,
    /// Whether the automaton rejected a node (so some token is neither accepted nor below
    /// the frontier).
    rejected: bool,
    /// The first level's subtrees the automaton entered, of at least [`PIECE_MIN_NODES`]
    /// nodes walked, by node (none where the accepted ids spilled into a set): what a later
    /// walk that enters the same node in the same state takes from this one
    /// ([`TokTrie::split_walk_reusing`]).
    pieces: Vec<Piece>,
    /// The frontier's keys, built when first asked.
    keys: OnceLock<FrontierKeys>,
}

/// Nodes a first-level subtree's walk visits at least to be kept as a [`Piece`] (and the
/// nodes a subtree must hold to be looked up): below it the walk costs less than the lookup.
const PIECE_MIN_NODES: u32 = 16;

/// A first-level node's part of a [`SplitWalk`]: everything the walk did from the node
/// (accepted by the automaton into `state`) to the end of its subtree. The walk below a
/// node depends only on the node and the state after it, so a walk from another start that
/// enters the node in the same state does the same there.
#[derive(Clone, Copy, Debug)]
struct Piece {
    node: u32,
    state: u32,
    /// Ranges of the walk's accepted ids and of its frontier.
    allowed: (u32, u32),
    frontier: (u32, u32),
    /// Nodes decided, the first-level node included, and whether one was rejected.
    decided: u32,
    rejected: bool,
}

/// A part of an earlier split walk that a new one may take whole: its `index`-th piece
/// ([`SplitWalk::pieces`]).
#[derive(Clone, Copy, Debug)]
pub struct PieceRef<'a> {
    /// The earlier walk.
    pub walk: &'a SplitWalk,
    /// The piece's index, as [`SplitWalk::pieces`] gives it.
    pub index: usize,
}

/// What a proof about every frontier subtree of a split walk needs (see
/// [`SplitWalk::frontier_keys`]).
#[derive(Clone, Debug)]
pub struct FrontierKeys {
    /// The frontier's distinct (state, node byte, whether some such node has children),
    /// sorted.
    pub keys: Vec<(u32, u8, bool)>,
    /// Whether every frontier node with children has them begin a character (see
    /// [`TokTrie::children_start_char`]).
    pub starts_chars: bool,
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

#[derive(Clone, Debug)]
enum Allowed {
    Ids(Vec<TokenId>),
    Set(TokenSet),
}

impl SplitWalk {
    /// The nodes left to the full recognizer, with the automaton's state before each.
    pub fn frontier(&self) -> &[(u32, u32)] {
        &self.frontier
    }

    /// How many nodes the automaton decided (the walk a replay saves).
    pub fn decided(&self) -> usize {
        self.decided
    }

    /// Whether the automaton rejected some node: else every token of the trie is accepted
    /// or at or below a frontier node.
    pub fn rejected_any(&self) -> bool {
        self.rejected
    }

    /// The frontier's distinct (state, node byte, whether some such node has children):
    /// what a proof about every frontier subtree needs to ask once each; built on the first
    /// call (`trie` is the trie walked), kept with the walk.
    pub fn frontier_keys(&self, trie: &TokTrie) -> &FrontierKeys {
        self.keys.get_or_init(|| trie.frontier_keys(&self.frontier))
    }

    /// The pieces a later walk may take ([`TokTrie::split_walk_reusing`]): `(node, state
    /// after it, index)` for each first-level node whose subtree the automaton entered.
    pub fn pieces(&self) -> impl ExactSizeIterator<Item = (u32, u32, usize)> + '_ {
        self.pieces.iter().enumerate().map(|(i, p)| (p.node, p.state, i))
    }

    /// Adds the accepted tokens to `mask`.
    pub fn add_allowed(&self, mask: &mut TokenSet) {
        match &self.allowed {
            Allowed::Ids(ids) => ids.iter().for_each(|&t| mask.insert(t)),
            Allowed::Set(s) => mask.union(s),
        }
    }

    /// Memory held, in bytes.
    pub fn num_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.frontier.len() * 8
            + self.pieces.len() * std::mem::size_of::<Piece>()
            + self.keys.get().map_or(0, |k| k.keys.len() * 8)
            + match &self.allowed {
                Allowed::Ids(ids) => ids.len() * 4,
                Allowed::Set(s) => s.num_bytes(),
            }
    }
}

/// A split walk's accepted ids: written to `buf` without a test (a node without a token
/// writes past the used part), spilled into `set` whenever more than `max` are held.
struct Ids {
    buf: Vec<u32>,
    len: usize,
    max: usize,
    set: Option<TokenSet>,
    spilled: bool,
}

impl Ids {
    #[inline(always)]
    fn push(&mut self, t: u32, vocab_size: usize) {
        self.buf[self.len] = t;
        self.len += (t != TrieNode::NO_TOKEN) as usize;
        if self.len > self.max {
            self.spill(vocab_size);
        }
    }

    /// Adds `ids` (all tokens).
    fn extend(&mut self, ids: &[TokenId], vocab_size: usize) {
        if self.len + ids.len() <= self.max {
            for (to, t) in self.buf[self.len..self.len + ids.len()].iter_mut().zip(ids) {
                *to = t.0;
            }
            self.len += ids.len();
        } else {
            ids.iter().for_each(|t| self.push(t.0, vocab_size));
        }
    }

    #[cold]
    fn spill(&mut self, vocab_size: usize) {
        let s = self.set.get_or_insert_with(|| TokenSet::new(vocab_size));
        self.buf[..self.len].iter().for_each(|&t| s.insert(TokenId(t)));
        self.len = 0;
        self.spilled = true;
    }

    /// The ids as a list, or as a set once spilled; and the buffer, to be kept.
    fn finish(mut self, vocab_size: usize) -> (Allowed, Vec<u32>) {
        let allowed = if self.set.is_some() {
            self.spill(vocab_size);
            Allowed::Set(self.set.take().expect("spilled into it"))
        } else {
            Allowed::Ids(self.buf[..self.len].iter().map(|&t| TokenId(t)).collect())
        };
        (allowed, self.buf)
    }
}

thread_local! {
    /// [`TokTrie::split_walk`]'s buffer of accepted ids, reused by the thread's walks.
    static SPLIT_BUF: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
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

    /// Walks the regular tokens (the 0xFF subtree left out) with a byte automaton that
    /// decides what it can: `step(state, byte)` is `Some(Some(next))` (accepted),
    /// `Some(None)` (rejected) or `None` (undecided: the node goes to the frontier with
    /// `state` and its subtree is not walked). Starting from `start`, the result is the
    /// accepted tokens and the frontier; a recognizer that agrees with the automaton on the
    /// decided nodes computes the same mask as [`TokTrie::add_bias`] by adding the accepted
    /// tokens, walking each frontier node's subtree from its state
    /// ([`TokTrie::walk_subtree`]), then [`TokTrie::add_bias_specials`] and
    /// [`TokTrie::add_duplicates`].
    pub fn split_walk(
        &self,
        start: u32,
        step: impl FnMut(u32, u8) -> Option<Option<u32>>,
    ) -> SplitWalk {
        self.split_walk_reusing(start, step, |_, _| None)
    }

    /// [`TokTrie::split_walk`] taking parts of earlier walks of this trie by the same
    /// automaton: where the automaton accepts a first-level node into a state and
    /// `reuse(node, state)` gives an earlier walk's piece for them (see
    /// [`SplitWalk::pieces`]), that piece's accepted ids, frontier and counts are taken in
    /// place of walking the node's subtree. The result is the walk without reuse, id for id
    /// (the automaton's transitions must not have changed between the walks: a transition
    /// decided in the earlier walk is taken as decided).
    pub fn split_walk_reusing<'a>(
        &self,
        start: u32,
        mut step: impl FnMut(u32, u8) -> Option<Option<u32>>,
        mut reuse: impl FnMut(u32, u32) -> Option<PieceRef<'a>>,
    ) -> SplitWalk {
        let nodes = &self.nodes[..self.ff_node.min(self.nodes.len())];
        // As in [`TokTrie::walk_root`], no data-dependent branch per node but accept or
        // reject: the accepted ids are written to a buffer without a test (a node without a
        // token writes past the used part), the pop after a node is deferred to the next
        // iteration. A walk that accepts more than `max_ids` tokens is kept as a set, the
        // buffer spilled into it whenever it fills. (A 266k-node walk of a string body took
        // 1.8 ms with a branch per token where the walk with the parser took 1.0.)
        let max_ids = (self.vocab_size / 32).max(1);
        // The buffer is this thread's, kept from one walk to the next (zeroing it cost
        // each small walk more than it saved).
        let mut buf = SPLIT_BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if buf.len() < max_ids + 1 {
            buf.resize(max_ids + 1, 0);
        }
        let mut frontier = Vec::new();
        // The state after each node on the path, `stack[0]` the root's; `depth` entries are
        // in use (a path is at most the longest token, plus the root).
        let mut stack = vec![start; self.max_token_len + 2];
        // Decided nodes: accepted (`decided` in the loop) and rejected ones.
        let mut decided = 0;
        let mut rejected = 0;
        // The first level's nodes loaded up front: their places come from `root_children`,
        // so the loads go out together, where the walk's own reads of them wait on each
        // other (the next child's index is in the node): ~250 misses in a row at a cold
        // first mask, where the lexer rejects most first bytes.
        let mut q = 1;
        let mut x = 0u8;
        for &size in &self.root_children {
            x ^= nodes[q].byte();
            q += size as usize;
        }
        std::hint::black_box(x);
        let mut pieces = Vec::new();
        // A rejection inside a piece taken from an earlier walk.
        let mut taken_rejected = false;
        // The first level one node and its subtree at a time: a large subtree entered in a
        // state where `reuse` has an earlier walk's piece is taken from it, else walked and
        // kept as a piece; the walk below a node has no work added per node.
        let mut ids = Ids { buf, len: 0, max: max_ids, set: None, spilled: false };
        let mut top = 1;
        while top < nodes.len() {
            let n = nodes[top];
            let end = top + self.subtree_size(top);
            let next = match step(start, n.byte()) {
                Some(Some(next)) => next,
                r => {
                    if r.is_some() {
                        rejected += 1;
                    } else {
                        frontier.push((top as u32, start));
                    }
                    top = end;
                    continue;
                }
            };
            let piece = Piece {
                node: top as u32,
                state: next,
                allowed: (ids.len as u32, 0),
                frontier: (frontier.len() as u32, 0),
                decided: (decided + rejected) as u32,
                rejected: false,
            };
            let large = end - top >= PIECE_MIN_NODES as usize;
            if let Some(found) = large.then(|| reuse(top as u32, next)).flatten() {
                let q = found.walk.pieces[found.index];
                let Allowed::Ids(taken) = &found.walk.allowed else {
                    unreachable!("a walk with pieces keeps its ids")
                };
                ids.extend(&taken[q.allowed.0 as usize..q.allowed.1 as usize], self.vocab_size);
                let f = &found.walk.frontier[q.frontier.0 as usize..q.frontier.1 as usize];
                frontier.extend_from_slice(f);
                decided += q.decided as usize;
                taken_rejected |= q.rejected;
                pieces.push(Piece {
                    allowed: (piece.allowed.0, ids.len as u32),
                    frontier: (piece.frontier.0, frontier.len() as u32),
                    decided: q.decided,
                    rejected: q.rejected,
                    ..piece
                });
                top = end;
                continue;
            }
            // The node, then its subtree.
            let rejected_before = rejected;
            decided += 1;
            ids.push(n.token_raw(), self.vocab_size);
            stack[1] = next;
            let mut depth = 2usize;
            let mut next_pop = 0usize;
            let mut p = top + 1;
            while p < end {
                depth = depth.saturating_sub(next_pop).max(1);
                let n = nodes[p];
                let cur = stack[depth - 1];
                let pop = n.parents_raw();
                let pop = if pop != TrieNode::PARENTS_ESCAPE {
                    pop as usize
                } else {
                    self.num_parents(p)
                };
                match step(cur, n.byte()) {
                    Some(Some(next)) => {
                        decided += 1;
                        ids.push(n.token_raw(), self.vocab_size);
                        stack[depth] = next;
                        depth += 1;
                        next_pop = if n.subtree_raw() == 1 { pop } else { 0 };
                        p += 1;
                    }
                    r => {
                        if r.is_some() {
                            rejected += 1;
                        } else {
                            frontier.push((p as u32, cur));
                        }
                        next_pop = pop.saturating_sub(1);
                        p += self.subtree_size(p);
                    }
                }
            }
            // Kept when the walk visited enough nodes (each accepted, rejected or left to
            // the frontier).
            if large {
                let now = decided + rejected;
                let visited =
                    now + frontier.len() - piece.decided as usize - piece.frontier.0 as usize;
                if visited >= PIECE_MIN_NODES as usize {
                    pieces.push(Piece {
                        allowed: (piece.allowed.0, ids.len as u32),
                        frontier: (piece.frontier.0, frontier.len() as u32),
                        decided: (now - piece.decided as usize) as u32,
                        rejected: rejected > rejected_before,
                        ..piece
                    });
                }
            }
            top = end;
        }
        let spilled = ids.spilled;
        let (allowed, buf) = ids.finish(self.vocab_size);
        SPLIT_BUF.with(|b| *b.borrow_mut() = buf);
        if spilled {
            // The ids' places are lost in the set.
            pieces = Vec::new();
        }
        SplitWalk {
            allowed,
            frontier,
            decided: decided + rejected,
            rejected: rejected > 0 || taken_rejected,
            pieces,
            keys: OnceLock::new(),
        }
    }

    /// The distinct (state, byte, has children) of a split walk's frontier nodes, and
    /// whether every frontier node with children has them begin a character.
    fn frontier_keys(&self, frontier: &[(u32, u32)]) -> FrontierKeys {
        let mut starts_chars = true;
        let mut keys: Vec<(u32, u8, bool)> = frontier
            .iter()
            .map(|&(node, state)| {
                let node = node as usize;
                let inner = self.subtree_size(node) > 1;
                starts_chars &= !inner || self.children_start_char(node);
                (state, self.nodes[node].byte(), inner)
            })
            .collect();
        // A key with children covers its leaves (both need the byte taken).
        keys.sort_unstable_by_key(|k| (k.0, k.1, !k.2));
        keys.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        FrontierKeys { keys, starts_chars }
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
