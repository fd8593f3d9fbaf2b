//! `LLMatcher`: one sequence's state, with LLGuidance's error-state contract, and the static
//! grammar helpers (`grammar_from_*`, `validate_grammar*`).

use llguidance::served::CompileLimits;
use llguidance::{ParserFactory, ServedMatcher, TokenSet};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use serde_json::Value;

use crate::limits::LLParserLimits;
use crate::tokenizer::LLTokenizer;

/// The tokenizer used by `validate_grammar` without one.
fn byte_factory() -> &'static ParserFactory {
    static F: std::sync::OnceLock<ParserFactory> = std::sync::OnceLock::new();
    F.get_or_init(|| ParserFactory::from_tokenizer_name("bytes").expect("the byte tokenizer loads"))
}

/// A writable mask buffer checked as LLGuidance checks it.
pub(crate) fn check_ptr(ptr: usize, nbytes: usize, words: usize) -> PyResult<()> {
    if ptr == 0 {
        return Err(PyValueError::new_err("Null pointer"));
    }
    if ptr % 4 != 0 {
        return Err(PyValueError::new_err("Pointer not aligned"));
    }
    if nbytes != words * 4 {
        return Err(PyValueError::new_err("Invalid buffer size"));
    }
    Ok(())
}

/// A raw mask row, sendable to the thread that fills it (the caller vouched for it).
#[derive(Clone, Copy)]
pub(crate) struct Row(pub(crate) *mut u32, pub(crate) usize);
// SAFETY: each row is written by one thread only; the caller owns the memory for the call.
unsafe impl Send for Row {}
unsafe impl Sync for Row {}

impl Row {
    /// # Safety
    /// The pointer must be valid for `self.1` aligned u32 words, written by no one else.
    pub(crate) unsafe fn slice<'a>(self) -> &'a mut [u32] {
        std::slice::from_raw_parts_mut(self.0, self.1)
    }
}

/// A matcher: [`ServedMatcher`] (LLGuidance's contract, in the engine crate) for Python.
#[pyclass(module = "llg_rs._lib")]
pub struct LLMatcher {
    pub(crate) s: ServedMatcher,
}

impl LLMatcher {
    pub(crate) fn words(&self) -> usize {
        self.s.words()
    }

    pub(crate) fn error_message(&self) -> Option<String> {
        self.s.error_message()
    }

    pub(crate) fn mask(&mut self) -> TokenSet {
        self.s.mask()
    }

    pub(crate) fn fill(&mut self, out: &mut [u32]) {
        self.s.fill(out)
    }

    pub(crate) fn consume(&mut self, t: u32) -> bool {
        self.s.consume_token(t)
    }

    /// Masks for the current position and along a draft, into rows `idx`, `idx + 1`, ...
    /// below `batch` (LLGuidance's draft-token layout); the state is unchanged afterwards.
    pub(crate) fn fill_draft(&mut self, rows: &[crate::matcher::Row], draft: &[u32]) {
        // SAFETY: rows come from the caller's checked buffer, one writer per row.
        let mut slices: Vec<&mut [u32]> = rows.iter().map(|r| unsafe { r.slice() }).collect();
        self.s.fill_draft(&mut slices, draft);
    }
}

/// JSON from a Python `str` or `dict` (via `json.dumps`).
fn json_arg(py: Python<'_>, v: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let text: String = if let Ok(s) = v.cast::<PyString>() {
        s.to_cow()?.to_string()
    } else if v.is_instance_of::<PyDict>() {
        let json = py.import("json")?;
        json.call_method1("dumps", (v,))?.extract()?
    } else {
        return Err(PyTypeError::new_err(format!("{what} must be a str or a dict")));
    };
    // Nested up to 1,000 levels (serde_json's own limit is 128).
    grammars::parse_json_deep(&text, what)
        .map_err(|e| PyValueError::new_err(format!("{what}: invalid JSON: {e}")))
}

fn options_arg(
    py: Python<'_>,
    v: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<serde_json::Map<String, Value>>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => match json_arg(py, v, what)? {
            Value::Object(o) => Ok(Some(o)),
            _ => Err(PyValueError::new_err(format!("{what} must be a JSON object"))),
        },
    }
}

/// The grammar JSON for a schema with options merged: defaults, then the schema's own
/// `x-guidance`, then overrides.
pub(crate) fn schema_grammar(
    mut schema: Value,
    defaults: Option<serde_json::Map<String, Value>>,
    overrides: Option<serde_json::Map<String, Value>>,
) -> PyResult<String> {
    if defaults.is_some() || overrides.is_some() {
        let obj = schema.as_object_mut().ok_or_else(|| {
            PyValueError::new_err("the JSON schema must be an object to take options")
        })?;
        let mut opts = defaults.unwrap_or_default();
        if let Some(Value::Object(own)) = obj.get("x-guidance") {
            for (k, v) in own {
                opts.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in overrides.unwrap_or_default() {
            opts.insert(k, v);
        }
        obj.insert("x-guidance".to_string(), Value::Object(opts));
    }
    let g = serde_json::json!({
        "grammars": [{"name": "json_schema", "json_schema": schema, "lark_grammar": null}],
        "max_tokens": null,
    });
    Ok(g.to_string())
}

/// Compiles a grammar string for a tokenizer, GIL released; `cancel` stops the compile
/// (and later the matcher), `deadline_ms` bounds it.
fn build(
    py: Python<'_>,
    factory: &ParserFactory,
    grammar: &str,
    limits: Option<&LLParserLimits>,
    cancel: Option<llguidance::CancellationHandle>,
    deadline_ms: Option<u64>,
) -> llguidance::served::Built {
    let f = factory.clone();
    let g = grammar.to_string();
    let limits = limits.map_or_else(CompileLimits::default, |l| l.compile_limits());
    let deadline = deadline_ms.map(std::time::Duration::from_millis);
    py.detach(move || llguidance::served::build_with(&f, &g, &limits, cancel.as_ref(), deadline))
}

/// A permanent cancellation request for a matcher and its compile (LLGuidance 1.9's
/// contract): `cancel()` from any thread; the matcher's calls then stop (a mask under way
/// within a few steps) and it stays stopped, `stop_reason()` `"Cancelled"`.
#[pyclass(frozen, module = "llg_rs._lib")]
#[derive(Clone)]
pub struct CancellationHandle {
    pub(crate) h: llguidance::CancellationHandle,
}

#[pymethods]
impl CancellationHandle {
    #[new]
    fn new() -> CancellationHandle {
        CancellationHandle { h: llguidance::CancellationHandle::new() }
    }

    /// Requests cancellation (permanent; returns at once).
    fn cancel(&self) {
        self.h.cancel()
    }

    /// Whether cancellation was requested.
    fn is_cancelled(&self) -> bool {
        self.h.is_cancelled()
    }
}

#[pymethods]
impl LLMatcher {
    #[new]
    #[pyo3(signature = (
        tokenizer, grammar, *, log_level = 1, limits = None, cancellation = None,
        compile_deadline_ms = None, stop_tokens = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tokenizer: &LLTokenizer,
        grammar: &Bound<'_, PyAny>,
        log_level: i32,
        limits: Option<&LLParserLimits>,
        cancellation: Option<&CancellationHandle>,
        compile_deadline_ms: Option<u64>,
        stop_tokens: Option<Vec<u32>>,
    ) -> LLMatcher {
        let factory = tokenizer.factory.clone();
        // Not even a wrong type raises: the matcher is in its error state.
        let grammar = match grammar.cast::<PyString>() {
            Ok(s) => s.to_cow().map(|c| c.into_owned()).map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "invalid type: {}, expected a grammar string (Lark or grammar JSON)",
                grammar.get_type().name().map_or_else(|_| "?".to_string(), |n| n.to_string())
            )),
        };
        let cancel = cancellation.map(|c| c.h.clone());
        let built = match &grammar {
            Ok(g) => build(py, &factory, g, limits, cancel, compile_deadline_ms),
            Err(e) => (Err(e.clone()), None, Vec::new()),
        };
        let mut s = ServedMatcher::new(factory, built, log_level);
        if let Some(ids) = stop_tokens {
            s.set_stop_tokens(&ids);
        }
        LLMatcher { s }
    }

    /// The matcher's cancellation handle (enabling cancellation: LLGuidance's
    /// `into_cancellable` and `cancellation_handle` in one). Call `cancel()` on it from any
    /// thread; the GIL is released while the matcher computes.
    fn cancellation_handle(&mut self) -> CancellationHandle {
        CancellationHandle { h: self.s.cancellation_handle() }
    }

    /// Whether cancellation was requested (and no other error stopped the matcher first).
    fn is_cancelled(&self) -> bool {
        self.s.is_cancelled()
    }

    /// Validates a grammar: `""` when it compiles, else the error.
    #[staticmethod]
    #[pyo3(signature = (grammar, tokenizer = None, *, limits = None))]
    fn validate_grammar(
        py: Python<'_>,
        grammar: &str,
        tokenizer: Option<&LLTokenizer>,
        limits: Option<&LLParserLimits>,
    ) -> String {
        let (is_err, msgs) = Self::validate_grammar_with_warnings(py, grammar, tokenizer, limits);
        if is_err {
            msgs.into_iter().next().unwrap_or_default()
        } else {
            String::new()
        }
    }

    /// Validates a grammar: (is_error, [the error] or the warnings).
    #[staticmethod]
    #[pyo3(signature = (grammar, tokenizer = None, *, limits = None))]
    fn validate_grammar_with_warnings(
        py: Python<'_>,
        grammar: &str,
        tokenizer: Option<&LLTokenizer>,
        limits: Option<&LLParserLimits>,
    ) -> (bool, Vec<String>) {
        let factory = tokenizer.map_or_else(|| byte_factory().clone(), |t| t.factory.clone());
        if tokenizer.is_none() {
            // Without the tokenizer, token references are counted, not resolved.
            let f = factory.clone();
            let g = grammar.to_string();
            return match py.detach(move || f.check_llguidance_without_tokenizer(&g)) {
                Ok(w) => (false, w),
                Err(e) => (true, vec![e.message().to_string()]),
            };
        }
        let (r, _, warnings) = build(py, &factory, grammar, limits, None, None);
        match r {
            Ok(_) => (false, warnings),
            Err(e) => (true, vec![e]),
        }
    }

    /// The grammar for a JSON Schema (a str or a dict), with compile options applied in
    /// order: `defaults`, the schema's `x-guidance`, `overrides`.
    #[staticmethod]
    #[pyo3(signature = (schema, defaults = None, overrides = None))]
    fn grammar_from_json_schema(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        defaults: Option<&Bound<'_, PyAny>>,
        overrides: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let d = options_arg(py, defaults, "defaults")?;
        let o = options_arg(py, overrides, "overrides")?;
        if d.is_none() && o.is_none() {
            // The schema as given (checked to be JSON, not compiled), as LLGuidance wraps it.
            // The schema text as given, unchecked, as LLGuidance wraps it (an invalid one is
            // the matcher's error).
            let text = match schema.cast::<PyString>() {
                Ok(s) => s.to_cow()?.to_string(),
                Err(_) => json_arg(py, schema, "schema")?.to_string(),
            };
            return Ok(format!("{{ \"grammars\": [{{ \"json_schema\": {text} }}] }}"));
        }
        let s = json_arg(py, schema, "schema")?;
        schema_grammar(s, d, o)
    }

    /// The grammar for Lark text (not checked).
    #[staticmethod]
    fn grammar_from_lark(lark: &str) -> String {
        lark.to_string()
    }

    /// The grammar for a regex (not checked).
    #[staticmethod]
    fn grammar_from_regex(regex: &str) -> String {
        grammars::top_level::regex_grammar(regex)
    }

    /// Nanoseconds the last mask fill took inside the engine, without the Python call
    /// (an llg_rs addition, for measuring the binding's overhead).
    #[getter]
    fn last_mask_ns(&self) -> u64 {
        self.s.last_fill_ns()
    }

    /// The width of this matcher's masks in tokens (an llg_rs addition).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.s.vocab_size()
    }

    /// Served masks (the default, as LLGuidance: where the grammar forces bytes, only the
    /// first forced token) or pure masks (every grammar-consistent token): an llg_rs
    /// addition.
    #[setter]
    fn set_pure_masks(&mut self, pure: bool) {
        self.s.set_forced_masks(!pure);
    }

    fn is_error(&self) -> bool {
        self.error_message().is_some()
    }

    fn get_error(&self) -> String {
        self.error_message().unwrap_or_default()
    }

    fn get_grammar_warnings(&self) -> Vec<String> {
        self.s.warnings().to_vec()
    }

    fn deep_copy(&self) -> LLMatcher {
        LLMatcher { s: self.s.deep_clone() }
    }

    fn __copy__(&self) -> LLMatcher {
        self.deep_copy()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> LLMatcher {
        self.deep_copy()
    }

    fn is_accepting(&mut self, py: Python<'_>) -> bool {
        py.detach(|| self.s.is_accepting())
    }

    fn is_stopped(&self) -> bool {
        self.s.is_stopped()
    }

    fn stop_reason(&self) -> &'static str {
        self.s.stop_reason()
    }

    fn rollback(&mut self, py: Python<'_>, num_tokens: usize) -> bool {
        py.detach(|| self.s.rollback(num_tokens))
    }

    fn reset(&mut self, py: Python<'_>) -> bool {
        py.detach(|| self.s.reset())
    }

    fn compute_ff_tokens(&mut self, py: Python<'_>) -> Vec<u32> {
        py.detach(|| self.s.compute_ff_tokens())
    }

    fn compute_ff_bytes<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let v = py.detach(|| self.s.compute_ff_bytes());
        PyBytes::new(py, &v)
    }

    fn try_consume_tokens(&mut self, py: Python<'_>, tokens: Vec<u32>) -> usize {
        py.detach(|| self.s.try_consume_tokens(&tokens))
    }

    fn consume_token(&mut self, py: Python<'_>, sampled_token: u32) -> bool {
        py.detach(|| self.s.consume_token(sampled_token))
    }

    fn consume_tokens(&mut self, py: Python<'_>, sampled_tokens: Vec<u32>) -> bool {
        py.detach(|| self.s.consume_tokens(&sampled_tokens))
    }

    fn validate_tokens(&mut self, py: Python<'_>, tokens: Vec<u32>) -> usize {
        py.detach(|| self.s.validate_tokens(&tokens))
    }

    fn compute_bitmask<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut words = vec![0u32; self.words()];
        py.detach(|| self.fill(&mut words));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        PyBytes::new(py, &bytes)
    }

    fn compute_logit_bias<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let n = self.s.vocab_size();
        let mask = py.detach(|| self.mask());
        let mut out = vec![0u8; n];
        for t in mask.iter() {
            out[t.as_usize()] = 200;
        }
        PyBytes::new(py, &out)
    }

    fn unsafe_compute_mask_ptr(
        &mut self,
        py: Python<'_>,
        trg_ptr: usize,
        trg_bytes: usize,
    ) -> PyResult<()> {
        let words = self.words();
        check_ptr(trg_ptr, trg_bytes, words)?;
        let row = Row(trg_ptr as *mut u32, words);
        // SAFETY: the caller passes a writable buffer of trg_bytes bytes (checked size,
        // alignment and null above; LLGuidance's contract for this "unsafe" call).
        let out = unsafe { row.slice() };
        // A mask answered from the last one is a copy: not worth releasing the GIL for.
        if self.s.fill_cached(out) {
            return Ok(());
        }
        py.detach(|| self.fill(out));
        Ok(())
    }

    /// Masks now and along `draft_tokens`, into `trg_ptr` rows 0, 1, ... (at most
    /// `trg_batch_size` rows of `one_mask_bytes`).
    fn unsafe_compute_mask_ptr_with_draft_token(
        &mut self,
        py: Python<'_>,
        trg_ptr: usize,
        one_mask_bytes: usize,
        trg_batch_size: usize,
        draft_tokens: Vec<u32>,
    ) -> PyResult<()> {
        let words = self.words();
        check_ptr(trg_ptr, one_mask_bytes, words)?;
        if trg_batch_size == 0 {
            return Err(PyValueError::new_err("Target index out of bounds"));
        }
        let rows: Vec<Row> = (0..trg_batch_size)
            .map(|k| Row((trg_ptr as *mut u32).wrapping_add(k * words), words))
            .collect();
        py.detach(|| self.fill_draft(&rows, &draft_tokens));
        Ok(())
    }

    /// The last capture named `name`, if any.
    fn get_capture<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyBytes>> {
        self.s
            .captures()
            .into_iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, b)| PyBytes::new(py, &b))
    }

    /// All captures in order, as (name, bytes).
    fn get_captures<'py>(&self, py: Python<'py>) -> Vec<(String, Bound<'py, PyBytes>)> {
        self.s.captures().into_iter().map(|(n, b)| (n, PyBytes::new(py, &b))).collect()
    }
}

/// Deprecated in LLGuidance; kept for code that still uses it.
#[pyclass(module = "llg_rs._lib")]
pub struct JsonCompiler {
    options: serde_json::Map<String, Value>,
}

#[pymethods]
impl JsonCompiler {
    #[new]
    #[pyo3(signature = (separators = None, whitespace_flexible = false, coerce_one_of = false, whitespace_pattern = None, json_allowed_escapes = None, json_allow_general_unicode_escapes = false))]
    fn new(
        separators: Option<(String, String)>,
        whitespace_flexible: bool,
        coerce_one_of: bool,
        whitespace_pattern: Option<String>,
        json_allowed_escapes: Option<String>,
        json_allow_general_unicode_escapes: bool,
    ) -> JsonCompiler {
        let (item, key) = separators.unwrap_or_else(|| {
            if whitespace_flexible {
                (",".to_string(), ":".to_string())
            } else {
                (", ".to_string(), ": ".to_string())
            }
        });
        let o = serde_json::json!({
            "item_separator": item,
            "key_separator": key,
            "whitespace_flexible": whitespace_flexible,
            "whitespace_pattern": whitespace_pattern,
            "coerce_one_of": coerce_one_of,
            "lenient": false,
            "json_allowed_escapes": json_allowed_escapes,
            "json_allow_general_unicode_escapes": json_allow_general_unicode_escapes,
        });
        let Value::Object(o) = o else { unreachable!("a JSON object literal") };
        JsonCompiler { options: o }
    }

    #[pyo3(signature = (schema, check = true))]
    fn compile(&self, py: Python<'_>, schema: &str, check: bool) -> PyResult<String> {
        let v: Value = grammars::parse_json_deep(schema, "schema")
            .map_err(|e| PyValueError::new_err(format!("schema: invalid JSON: {e}")))?;
        let g = schema_grammar(v, None, Some(self.options.clone()))?;
        checked(py, g, check)
    }
}

fn checked(py: Python<'_>, g: String, check: bool) -> PyResult<String> {
    if check {
        let e = LLMatcher::validate_grammar(py, &g, None, None);
        if !e.is_empty() {
            return Err(PyValueError::new_err(e));
        }
    }
    Ok(g)
}

/// Deprecated in LLGuidance; kept for code that still uses it.
#[pyclass(module = "llg_rs._lib")]
pub struct LarkCompiler {}

#[pymethods]
impl LarkCompiler {
    #[new]
    fn new() -> LarkCompiler {
        LarkCompiler {}
    }

    #[pyo3(signature = (lark, check = true))]
    fn compile(&self, py: Python<'_>, lark: &str, check: bool) -> PyResult<String> {
        let g = serde_json::json!({
            "grammars": [{"name": "lark_grammar", "json_schema": null, "lark_grammar": lark}],
            "max_tokens": null,
        });
        checked(py, g.to_string(), check)
    }
}

/// Deprecated in LLGuidance; kept for code that still uses it.
#[pyclass(module = "llg_rs._lib")]
pub struct RegexCompiler {}

#[pymethods]
impl RegexCompiler {
    #[new]
    fn new() -> RegexCompiler {
        RegexCompiler {}
    }

    #[pyo3(signature = (regex, check = true))]
    fn compile(&self, py: Python<'_>, regex: &str, check: bool) -> PyResult<String> {
        checked(py, LLMatcher::grammar_from_regex(regex), check)
    }
}
