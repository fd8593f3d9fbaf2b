//! [`TrieNode`]: one node of the flat trie, exactly 8 bytes.

/// One node of the token trie, laid out in DFS order; exactly 8 bytes.
///
/// - word 0: token id (low 24 bits; [`TrieNode::NO_TOKEN`] when no token ends here) and the
///   node's byte (high 8 bits);
/// - word 1: subtree size in nodes, this node included (low 21 bits), and the number of
///   levels that end together with this node's subtree, this node included (high 11 bits).
///
/// Values that do not fit (subtrees of more than 2^21 - 2 nodes, which only nodes near the
/// root of huge vocabularies have, and more than 2046 levels, i.e. tokens of over 2 KiB)
/// hold an escape value and are looked up in a small side table of the trie, so any
/// vocabulary of up to 2^24 - 1 tokens and any token length works; the hot walk only
/// checks for the escape.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TrieNode {
    tok_byte: u32,
    size_parents: u32,
}

const _: () = assert!(std::mem::size_of::<TrieNode>() == 8);

const TOKEN_BITS: u32 = 24;
const SIZE_BITS: u32 = 21;
const SIZE_MASK: u32 = (1 << SIZE_BITS) - 1;

impl TrieNode {
    /// The token-id value meaning "no token ends at this node".
    pub const NO_TOKEN: u32 = (1 << TOKEN_BITS) - 1;
    /// Escape value of the subtree size: look the size up in the side table.
    pub const SIZE_ESCAPE: u32 = SIZE_MASK;
    /// Escape value of the number of parents: look it up in the side table.
    pub const PARENTS_ESCAPE: u32 = (1 << (32 - SIZE_BITS)) - 1;

    pub(crate) fn new(byte: u8, token: u32, subtree: u32, parents: u32) -> TrieNode {
        debug_assert!(token <= Self::NO_TOKEN);
        debug_assert!(subtree <= Self::SIZE_ESCAPE && parents <= Self::PARENTS_ESCAPE);
        TrieNode {
            tok_byte: token | ((byte as u32) << TOKEN_BITS),
            size_parents: subtree | (parents << SIZE_BITS),
        }
    }

    /// The byte on the edge into this node.
    #[inline(always)]
    pub fn byte(self) -> u8 {
        (self.tok_byte >> TOKEN_BITS) as u8
    }

    /// The raw token id field ([`TrieNode::NO_TOKEN`] if none).
    #[inline(always)]
    pub fn token_raw(self) -> u32 {
        self.tok_byte & Self::NO_TOKEN
    }

    /// The token that ends at this node, if any.
    #[inline(always)]
    pub fn token(self) -> Option<crate::TokenId> {
        let t = self.token_raw();
        (t != Self::NO_TOKEN).then_some(crate::TokenId(t))
    }

    /// The raw subtree size field ([`TrieNode::SIZE_ESCAPE`] if in the side table).
    #[inline(always)]
    pub fn subtree_raw(self) -> u32 {
        self.size_parents & SIZE_MASK
    }

    /// The raw number-of-parents field ([`TrieNode::PARENTS_ESCAPE`] if in the side table).
    #[inline(always)]
    pub fn parents_raw(self) -> u32 {
        self.size_parents >> SIZE_BITS
    }

    pub(crate) fn set_size_parents(&mut self, subtree: u32, parents: u32) {
        debug_assert!(subtree <= Self::SIZE_ESCAPE && parents <= Self::PARENTS_ESCAPE);
        self.size_parents = subtree | (parents << SIZE_BITS);
    }

    pub(crate) fn set_token(&mut self, token: u32) {
        debug_assert!(token <= Self::NO_TOKEN);
        self.tok_byte = (self.tok_byte & !Self::NO_TOKEN) | token;
    }
}
