//! A loaded tokenizer (being written).
/// A tokenizer (being written).
pub struct Tokenizer;
