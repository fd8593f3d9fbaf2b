//! `LLMatcher`: one sequence's state, with LLGuidance's error-state contract, and the static
//! grammar helpers (`grammar_from_*`, `validate_grammar*`).

use llguidance::{Matcher, ParserFactory, StopReason, TokenId, TokenSet};
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

/// A matcher: the engine's `Matcher` plus LLGuidance's stop and error conventions.
#[pyclass(module = "llg_rs._lib")]
pub struct LLMatcher {
    pub(crate) factory: ParserFactory,
    inner: Option<Matcher>,
    /// An error of this layer (grammar error, bad rollback, token after a stop).
    error: Option<String>,
    /// The grammar can take nothing but EOS here (LLGuidance's `NoExtension`).
    no_ext: bool,
    warnings: Vec<String>,
    log_level: i32,
    /// The grammar's `max_tokens`: one more token is an error (LLGuidance's rule).
    max_tokens: Option<usize>,
    /// Nanoseconds the last mask fill took inside the engine (for the overhead benchmark).
    last_fill_ns: u64,
}

fn token_text(v: &toktrie::Vocabulary, t: u32) -> String {
    let id = TokenId(t);
    if v.is_special(id) {
        return format!("\"\u{FFFD}[{t}]\"");
    }
    let s = String::from_utf8_lossy(v.token_bytes(id)).into_owned();
    serde_json::to_string(&s).unwrap_or_else(|_| format!("{s:?}"))
}

impl LLMatcher {
    pub(crate) fn words(&self) -> usize {
        self.factory.tokenizer().vocab().len().div_ceil(32)
    }

    fn vocab(&self) -> &toktrie::Vocabulary {
        self.factory.tokenizer().vocab()
    }

    pub(crate) fn error_message(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(e.clone());
        }
        self.inner.as_ref().and_then(|m| m.error()).map(|e| e.message().to_string())
    }

    /// Enters the error state with `msg` (the first error stays), with LLGuidance's warning
    /// on stderr at log level 1 and up.
    fn set_error(&mut self, msg: String) {
        if self.error.is_none() {
            if self.log_level >= 1 {
                eprintln!("Warning: {msg}; stopping");
            }
            self.error = Some(msg);
        }
    }

    fn eos_only(&self) -> TokenSet {
        let mut s = TokenSet::new(self.vocab().len());
        for &t in self.vocab().eos_tokens() {
            s.insert(t);
        }
        s
    }

    /// After the state moved: is the matcher where only EOS can follow?
    fn update_no_ext(&mut self) {
        self.no_ext = false;
        // After every consumed token: no 16 KB EOS set here (it cost ~0.3 µs a token).
        let eos = self.factory.tokenizer().vocab().eos_tokens();
        let Some(m) = self.inner.as_mut() else { return };
        if m.error().is_some() || m.is_stopped() {
            return;
        }
        if !m.is_accepting().unwrap_or(false) {
            return;
        }
        // The matcher keeps this mask for the next compute_mask at the same position.
        if let Ok(mask) = m.compute_mask() {
            self.no_ext = mask.iter().all(|t| eos.contains(&t));
        }
    }

    /// The mask now (EOS only in the error state or after a stop).
    pub(crate) fn mask(&mut self) -> TokenSet {
        if self.error_message().is_some() {
            return self.eos_only();
        }
        if self.no_ext {
            return self.eos_only();
        }
        let r = self.inner.as_mut().expect("no error: a matcher").compute_mask();
        match r {
            Ok(m) => m,
            Err(e) => {
                let msg = e.message().to_string();
                self.set_error(msg);
                self.eos_only()
            }
        }
    }

    pub(crate) fn fill(&mut self, out: &mut [u32]) {
        let t0 = std::time::Instant::now();
        let direct = self.error_message().is_none() && !self.no_ext;
        let r = match (direct, self.inner.as_mut()) {
            (true, Some(m)) => m.compute_mask_into(out).map_err(|e| e.message().to_string()),
            _ => Err(String::new()),
        };
        if let Err(msg) = r {
            if !msg.is_empty() {
                self.set_error(msg);
            }
            out.fill(0);
            for t in self.eos_only().iter() {
                out[t.as_usize() / 32] |= 1 << (t.as_usize() % 32);
            }
        }
        self.last_fill_ns = t0.elapsed().as_nanos() as u64;
    }

    /// Consumes one token (LLGuidance's rules); false puts the matcher in its error state.
    pub(crate) fn consume(&mut self, t: u32) -> bool {
        self.consume_one(t, true)
    }

    /// Consumes one token; `check_end`: then find out whether only EOS can follow
    /// (LLGuidance checks that after each `consume_token`, and once after a
    /// `consume_tokens` list, so an EOS ending the list makes it `EndOfSentence`).
    fn consume_one(&mut self, t: u32, check_end: bool) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        let n = self.vocab().len();
        if t as usize >= n {
            self.set_error(format!("token id {t} out of range"));
            return false;
        }
        let is_eos = self.vocab().eos_tokens().contains(&TokenId(t));
        if self.no_ext && !is_eos {
            self.set_error("parser stopped in consume_token; no error message".to_string());
            return false;
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        if self.max_tokens.is_some_and(|k| m.tokens().len() >= k) {
            self.set_error("max_tokens_total reached".to_string());
            return false;
        }
        if m.is_stopped() && !is_eos {
            self.set_error("parser stopped in consume_token; no error message".to_string());
            return false;
        }
        match m.consume_token(TokenId(t)) {
            Ok(()) => {
                if !is_eos && check_end {
                    self.update_no_ext();
                }
                true
            }
            Err(e) => {
                let msg = if matches!(e.kind(), llguidance::ErrorKind::Rejected) {
                    let detail = e.message().split(" rejected: ").nth(1).unwrap_or("").to_string();
                    let mut s = format!(
                        "Parser Error: token {} doesn't satisfy the grammar",
                        token_text(self.vocab(), t)
                    );
                    if !detail.is_empty() {
                        s.push_str("; ");
                        s.push_str(&detail);
                    }
                    s
                } else {
                    e.message().to_string()
                };
                // The inner matcher keeps its own (sticky) error; this one is reported.
                self.set_error(msg);
                false
            }
        }
    }

    /// How many of `tokens` are allowed in turn, state unchanged afterwards.
    fn count_valid(&mut self, tokens: &[u32], commit: bool) -> usize {
        let mut n = 0;
        let mut eos_seen = false;
        // A matcher already stopped validates nothing, not even EOS (as LLGuidance).
        if !commit && (self.no_ext || self.inner.as_ref().is_some_and(|m| m.is_stopped())) {
            return 0;
        }
        let start = self.inner.as_ref().map_or(0, |m| m.tokens().len());
        let no_ext0 = self.no_ext;
        for &t in tokens {
            if self.error_message().is_some() {
                break;
            }
            if t as usize >= self.vocab().len() {
                if commit {
                    self.set_error(format!("token id {t} out of range"));
                } else if self.log_level >= 1 {
                    eprintln!("Warning: token id {t} out of range; stopping");
                }
                break;
            }
            let is_eos = self.vocab().eos_tokens().contains(&TokenId(t));
            let m = self.inner.as_mut().expect("no error: a matcher");
            if self.max_tokens.is_some_and(|k| m.tokens().len() >= k) {
                if commit {
                    self.set_error("max_tokens_total reached".to_string());
                }
                break;
            }
            // After a stop: try_consume takes nothing more; validate counts one EOS (as
            // LLGuidance does).
            let stopped = self.no_ext || m.is_stopped();
            if (stopped && (commit || !is_eos)) || (is_eos && eos_seen) {
                break;
            }
            match m.try_consume_tokens(&[TokenId(t)]) {
                Ok(1) => {
                    n += 1;
                    if is_eos {
                        eos_seen = true;
                    } else {
                        self.update_no_ext();
                    }
                }
                Ok(_) => break,
                Err(e) => {
                    self.set_error(e.message().to_string());
                    break;
                }
            }
        }
        if !commit {
            self.restore(start, no_ext0);
        }
        n
    }

    /// Back to the state after `start` tokens, with its `no_ext` flag (after tokens taken
    /// only to look ahead), unless an error happened meanwhile.
    fn restore(&mut self, start: usize, no_ext: bool) {
        let clean = self.error.is_none();
        if let Some(m) = self.inner.as_mut() {
            if clean && m.error().is_none() {
                let k = m.tokens().len() - start;
                if let Err(e) = m.rollback(k) {
                    self.set_error(e.message().to_string());
                }
            }
        }
        self.no_ext = no_ext;
    }

    fn rollback_inner(&mut self, n: usize) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        let have = m.tokens().len();
        if n > have {
            self.set_error(format!("rollback: {n} > {have}"));
            return false;
        }
        if let Err(e) = m.rollback(n) {
            self.set_error(e.message().to_string());
            return false;
        }
        // As LLGuidance: a rollback leaves the matcher not stopped; whether only EOS can
        // follow is found out again at the next token.
        self.no_ext = false;
        true
    }

    /// Masks for the current position and along a draft, into rows `idx`, `idx + 1`, ...
    /// below `batch` (LLGuidance's draft-token layout); the state is unchanged afterwards.
    pub(crate) fn fill_draft(&mut self, rows: &[crate::matcher::Row], draft: &[u32]) {
        let Some((first, rest)) = rows.split_first() else { return };
        // SAFETY: rows come from the caller's checked buffer, one writer per row.
        self.fill(unsafe { first.slice() });
        if self.error_message().is_some() {
            return;
        }
        let start = self.inner.as_ref().map_or(0, |m| m.tokens().len());
        let no_ext0 = self.no_ext;
        for (i, &t) in draft.iter().enumerate() {
            let Some(row) = rest.get(i) else { break };
            if t as usize >= self.vocab().len() {
                self.set_error(format!("token id {t} out of range"));
                break;
            }
            if self.vocab().eos_tokens().contains(&TokenId(t)) {
                break;
            }
            if self.count_valid(&[t], true) != 1 {
                break;
            }
            // SAFETY: as above.
            self.fill(unsafe { row.slice() });
        }
        self.restore(start, no_ext0);
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
    serde_json::from_str(&text)
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

/// Compiles a grammar string for a tokenizer, GIL released: (matcher or error, its
/// `max_tokens`, warnings). The limits LLGuidance checks at compile time are applied to the
/// compiled grammar with its messages.
fn build(
    py: Python<'_>,
    factory: &ParserFactory,
    grammar: &str,
    limits: Option<&LLParserLimits>,
) -> (Result<Matcher, String>, Option<usize>, Vec<String>) {
    let f = factory.clone();
    let g = grammar.to_string();
    let limits = limits.cloned();
    py.detach(move || match f.compile_llguidance(&g) {
        Ok((compiled, max_tokens, warnings)) => {
            if let Some(e) = limits.as_ref().and_then(|l| l.check(&compiled)) {
                return (Err(e), None, Vec::new());
            }
            (f.matcher_for(compiled).map_err(|e| e.message().to_string()), max_tokens, warnings)
        }
        Err(e) => (Err(e.message().to_string()), None, Vec::new()),
    })
}

fn stop_name(s: StopReason) -> &'static str {
    match s {
        StopReason::NotStopped => "NotStopped",
        StopReason::EndOfSequence => "EndOfSentence",
        StopReason::MaxTokens => "MaxTokensTotal",
        StopReason::Error => "InternalError",
    }
}

#[pymethods]
impl LLMatcher {
    #[new]
    #[pyo3(signature = (tokenizer, grammar, *, log_level = 1, limits = None))]
    fn new(
        py: Python<'_>,
        tokenizer: &LLTokenizer,
        grammar: &Bound<'_, PyAny>,
        log_level: i32,
        limits: Option<&LLParserLimits>,
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
        let (r, max_tokens, warnings) = match &grammar {
            Ok(g) => build(py, &factory, g, limits),
            Err(e) => (Err(e.clone()), None, Vec::new()),
        };
        let mut m = LLMatcher {
            factory,
            inner: None,
            error: None,
            no_ext: false,
            warnings,
            log_level,
            max_tokens: None,
            last_fill_ns: 0,
        };
        match r {
            Ok(inner) => {
                // LLGuidance's max_tokens is enforced here (one more token is an error), not
                // by the inner matcher's stop.
                m.max_tokens = max_tokens;
                m.inner = Some(inner);
                m.update_no_ext();
            }
            Err(e) => m.error = Some(e),
        }
        m
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
        let (r, _, warnings) = build(py, &factory, grammar, limits);
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
        let lark = format!("start: /{}/", crate::regex_to_lark(regex, ""));
        serde_json::json!({
            "grammars": [{"name": "regex", "json_schema": null, "lark_grammar": lark}],
            "max_tokens": null,
        })
        .to_string()
    }

    /// Nanoseconds the last mask fill took inside the engine, without the Python call
    /// (an llg_rs addition, for measuring the binding's overhead).
    #[getter]
    fn last_mask_ns(&self) -> u64 {
        self.last_fill_ns
    }

    /// The width of this matcher's masks in tokens (an llg_rs addition).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab().len()
    }

    fn is_error(&self) -> bool {
        self.error_message().is_some()
    }

    fn get_error(&self) -> String {
        self.error_message().unwrap_or_default()
    }

    fn get_grammar_warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn deep_copy(&self) -> LLMatcher {
        LLMatcher {
            factory: self.factory.clone(),
            inner: self.inner.as_ref().map(|m| m.deep_clone()),
            error: self.error.clone(),
            no_ext: self.no_ext,
            warnings: self.warnings.clone(),
            log_level: self.log_level,
            max_tokens: self.max_tokens,
            last_fill_ns: 0,
        }
    }

    fn __copy__(&self) -> LLMatcher {
        self.deep_copy()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> LLMatcher {
        self.deep_copy()
    }

    fn is_accepting(&mut self, py: Python<'_>) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        py.detach(|| m.is_accepting().unwrap_or(false))
    }

    fn is_stopped(&self) -> bool {
        self.error_message().is_some()
            || self.no_ext
            || self.inner.as_ref().is_some_and(|m| m.is_stopped())
    }

    fn stop_reason(&self) -> &'static str {
        if self.error_message().is_some() {
            return "InternalError";
        }
        let inner = self.inner.as_ref().map_or(StopReason::Error, |m| m.stop_reason());
        if inner == StopReason::MaxTokens {
            return "MaxTokensTotal";
        }
        if self.no_ext {
            return "NoExtension";
        }
        stop_name(inner)
    }

    fn rollback(&mut self, py: Python<'_>, num_tokens: usize) -> bool {
        py.detach(|| self.rollback_inner(num_tokens))
    }

    fn reset(&mut self, py: Python<'_>) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        let n = self.inner.as_ref().map_or(0, |m| m.tokens().len());
        py.detach(|| self.rollback_inner(n))
    }

    fn compute_ff_tokens(&mut self, py: Python<'_>) -> Vec<u32> {
        if self.error_message().is_some() || self.no_ext {
            return Vec::new();
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        let r = py.detach(|| m.compute_ff_tokens());
        match r {
            Ok(v) => v.into_iter().map(|t| t.0).collect(),
            Err(e) => {
                self.set_error(e.message().to_string());
                Vec::new()
            }
        }
    }

    fn compute_ff_bytes<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        if self.error_message().is_some() || self.no_ext {
            return PyBytes::new(py, b"");
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        let r = py.detach(|| m.compute_ff_bytes());
        match r {
            Ok(v) => PyBytes::new(py, &v),
            Err(e) => {
                self.set_error(e.message().to_string());
                PyBytes::new(py, b"")
            }
        }
    }

    fn try_consume_tokens(&mut self, py: Python<'_>, tokens: Vec<u32>) -> usize {
        py.detach(|| self.count_valid(&tokens, true))
    }

    fn consume_token(&mut self, py: Python<'_>, sampled_token: u32) -> bool {
        py.detach(|| self.consume(sampled_token))
    }

    fn consume_tokens(&mut self, py: Python<'_>, sampled_tokens: Vec<u32>) -> bool {
        py.detach(|| {
            if self.error_message().is_some() {
                return false;
            }
            if !sampled_tokens.iter().all(|&t| self.consume_one(t, false)) {
                return false;
            }
            let eos = self.vocab().eos_tokens();
            if sampled_tokens.iter().any(|t| !eos.contains(&TokenId(*t))) {
                self.update_no_ext();
            }
            true
        })
    }

    fn validate_tokens(&mut self, py: Python<'_>, tokens: Vec<u32>) -> usize {
        // As LLGuidance: an id out of range anywhere in the list is an error, and nothing
        // of the list is valid.
        let n = self.vocab().len();
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= n) {
            if self.error_message().is_none() {
                self.set_error(format!("token id {bad} out of range"));
            }
            return 0;
        }
        py.detach(|| self.count_valid(&tokens, false))
    }

    fn compute_bitmask<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut words = vec![0u32; self.words()];
        py.detach(|| self.fill(&mut words));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        PyBytes::new(py, &bytes)
    }

    fn compute_logit_bias<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let n = self.vocab().len();
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
        if self.error.is_none() && !self.no_ext {
            let t0 = std::time::Instant::now();
            if self.inner.as_mut().is_some_and(|m| m.cached_mask_into(out)) {
                self.last_fill_ns = t0.elapsed().as_nanos() as u64;
                return Ok(());
            }
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
        let m = self.inner.as_ref()?;
        m.captures().into_iter().rev().find(|(n, _)| n == name).map(|(_, b)| PyBytes::new(py, &b))
    }

    /// All captures in order, as (name, bytes).
    fn get_captures<'py>(&self, py: Python<'py>) -> Vec<(String, Bound<'py, PyBytes>)> {
        let Some(m) = self.inner.as_ref() else { return Vec::new() };
        m.captures().into_iter().map(|(n, b)| (n, PyBytes::new(py, &b))).collect()
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
        let v: Value = serde_json::from_str(schema)
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
