//! Lark (being written).
/// Parses Lark (being written).
pub fn parse(_src: &str) -> Result<crate::ir::GrammarSet, crate::Error> { Err(crate::Error::new(crate::ErrorKind::Unsupported, "lark")) }
