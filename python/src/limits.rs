//! `LLParserLimits`: LLGuidance's resource limits. `max_grammar_size` and
//! `initial_lexer_fuel`, when set below their defaults, are checked on the compiled grammar
//! with LLGuidance's messages; the others are accepted and reported (this engine bounds its
//! per-step work with its own fixed limits).

use pyo3::prelude::*;

/// Resource limits for grammar compilation and parsing.
#[pyclass(frozen, module = "llg_rs._lib")]
#[derive(Clone)]
pub struct LLParserLimits {
    #[pyo3(get)]
    max_items_in_row: usize,
    #[pyo3(get)]
    initial_lexer_fuel: u64,
    #[pyo3(get)]
    step_lexer_fuel: u64,
    #[pyo3(get)]
    step_max_items: usize,
    #[pyo3(get)]
    max_lexer_states: usize,
    #[pyo3(get)]
    max_grammar_size: usize,
    #[pyo3(get)]
    precompute_large_lexemes: bool,
    #[pyo3(get)]
    verbose_errors: bool,
}

impl LLParserLimits {
    /// The limits this engine checks on a compiled grammar.
    pub(crate) fn compile_limits(&self) -> llguidance::served::CompileLimits {
        llguidance::served::CompileLimits {
            max_grammar_size: self.max_grammar_size,
            initial_lexer_fuel: self.initial_lexer_fuel,
        }
    }
}

#[pymethods]
impl LLParserLimits {
    #[new]
    #[pyo3(signature = (*, max_items_in_row = None, initial_lexer_fuel = None, step_lexer_fuel = None, step_max_items = None, max_lexer_states = None, max_grammar_size = None, precompute_large_lexemes = None, verbose_errors = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        max_items_in_row: Option<usize>,
        initial_lexer_fuel: Option<u64>,
        step_lexer_fuel: Option<u64>,
        step_max_items: Option<usize>,
        max_lexer_states: Option<usize>,
        max_grammar_size: Option<usize>,
        precompute_large_lexemes: Option<bool>,
        verbose_errors: Option<bool>,
    ) -> LLParserLimits {
        LLParserLimits {
            max_items_in_row: max_items_in_row.unwrap_or(2000),
            initial_lexer_fuel: initial_lexer_fuel.unwrap_or(1_000_000),
            step_lexer_fuel: step_lexer_fuel.unwrap_or(200_000),
            step_max_items: step_max_items.unwrap_or(50_000),
            max_lexer_states: max_lexer_states.unwrap_or(250_000),
            max_grammar_size: max_grammar_size.unwrap_or(500_000),
            precompute_large_lexemes: precompute_large_lexemes.unwrap_or(true),
            verbose_errors: verbose_errors.unwrap_or(true),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "ParserLimits {{ max_items_in_row: {}, initial_lexer_fuel: {}, step_lexer_fuel: {}, \
             step_max_items: {}, max_lexer_states: {}, max_grammar_size: {}, \
             precompute_large_lexemes: {}, verbose_errors: {} }}",
            self.max_items_in_row,
            self.initial_lexer_fuel,
            self.step_lexer_fuel,
            self.step_max_items,
            self.max_lexer_states,
            self.max_grammar_size,
            self.precompute_large_lexemes,
            self.verbose_errors
        )
    }

    fn __str__(&self) -> String {
        self.__repr__()
    }
}
