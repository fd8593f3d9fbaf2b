//! Vocabulary loaders (being written).
