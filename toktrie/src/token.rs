//! Token ids.

/// A token id: an index into the vocabulary (and into the model's logits).
///
/// Ids fit in 24 bits inside the trie, so vocabularies hold at most
/// [`TokenId::MAX_VOCAB`] tokens.
#[repr(transparent)]
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct TokenId(pub u32);

impl TokenId {
    /// The largest vocabulary the trie supports: 2^24 - 1 ids (one 24-bit value is reserved
    /// to mean "no token" inside trie nodes).
    pub const MAX_VOCAB: usize = (1 << 24) - 1;

    /// The id as an index into vocabulary-sized arrays.
    #[inline(always)]
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }

    /// The id of an index; the caller guarantees it is below [`TokenId::MAX_VOCAB`].
    #[inline(always)]
    pub fn from_usize(idx: usize) -> TokenId {
        debug_assert!(idx <= u32::MAX as usize);
        TokenId(idx as u32)
    }
}

impl std::fmt::Display for TokenId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}
