//! JSON Schema front end (being written).

/// Compiles a JSON Schema into a grammar of the IR (being written).
pub fn compile_schema(_schema: &serde_json::Value) -> Result<crate::ir::Grammar, crate::Error> {
    Err(crate::Error::new(crate::ErrorKind::Unsupported, "JSON Schema is not supported yet"))
}
