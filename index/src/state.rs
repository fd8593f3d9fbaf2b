//! The state id.

use serde::{Deserialize, Serialize};

/// A state of an [`crate::Index`]: an index into its tables. The initial state is
/// [`crate::Index::initial_state`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[repr(transparent)]
#[serde(transparent)]
pub struct StateId(pub u32);

impl StateId {
    /// The id as an index into state-sized arrays.
    #[inline]
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for StateId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}
