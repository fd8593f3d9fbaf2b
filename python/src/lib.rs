//! `llg_rs._lib`: LLGuidance's Python API (`LLTokenizer`, `LLMatcher`, `LLExecutor`,
//! `LLParserLimits`, the grammar helpers) over this engine. The pure-Python parts
//! (`llg_rs.torch`, `llg_rs.numpy`, `llg_rs.hf`, `grammar_from`, `StructTag`) are in
//! `python/python/llg_rs/`.
//!
//! Contract, as LLGuidance's: grammar errors, limits and rejected tokens never raise; they put
//! a matcher in its error state (`is_error()`, `get_error()`), where masks allow EOS only.
//! Misuse of the API (a bad pointer, a wrong buffer size, a bad batch) raises. The GIL is
//! released while grammars compile, masks are computed and tokens consumed.

use pyo3::prelude::*;

/// mimalloc for the extension's Rust allocations: a compile makes ~30,000 small ones, and
/// glibc's malloc and free were 40 % of its instructions (BENCHMARKS.md, "Allocator").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod executor;
mod limits;
mod matcher;
mod tokenizer;

/// Makes `regex` usable inside `/.../` in Lark (see `grammars::top_level::regex_to_lark`).
#[pyfunction]
#[pyo3(signature = (regex, use_ascii = ""))]
pub(crate) fn regex_to_lark(regex: &str, use_ascii: &str) -> String {
    grammars::top_level::regex_to_lark(regex, use_ascii)
}

/// The version of llg_rs and of its regex engine.
#[pyfunction]
fn get_version() -> String {
    format!("llg_rs@{} derivre@0.3", env!("CARGO_PKG_VERSION"))
}

#[pymodule]
fn _lib(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tokenizer::LLTokenizer>()?;
    m.add_class::<matcher::LLMatcher>()?;
    m.add_class::<matcher::CancellationHandle>()?;
    m.add_class::<executor::LLExecutor>()?;
    m.add_class::<limits::LLParserLimits>()?;
    m.add_class::<matcher::JsonCompiler>()?;
    m.add_class::<matcher::LarkCompiler>()?;
    m.add_class::<matcher::RegexCompiler>()?;
    m.add_function(wrap_pyfunction!(regex_to_lark, m)?)?;
    m.add_function(wrap_pyfunction!(get_version, m)?)?;
    Ok(())
}
