//! [`ServedMatcher`]: LLGuidance's matcher contract, as its Python `LLMatcher` and its C
//! `LlgMatcher` keep it, over a [`Matcher`]. Both bindings (the `llg_rs` package and the C
//! API in [`crate::ffi`]) are thin layers over this type, so a server sees the same masks
//! and the same stops through either.
//!
//! What it adds to [`Matcher`]:
//! - **An error state that never raises.** A grammar error, a rejected token, a limit or a
//!   bad rollback puts the matcher in a sticky error state (`is_error`, `error_message`),
//!   where masks allow EOS only. The first error stays.
//! - **Stops as LLGuidance reports them.** After a token, a matcher at an accepting
//!   position where nothing but EOS can follow is stopped (`NoExtension`); a grammar's
//!   `max_tokens` is enforced as LLGuidance does (one token more is an error).
//! - **Served masks.** Where the grammar forces the next bytes, the mask holds only the
//!   first token of their canonical tokenization (the first of
//!   [`ServedMatcher::compute_ff_tokens`]), as LLGuidance's served masks do, so a model
//!   never spells forced text in a tokenization it did not see in training. The pure mask
//!   (every grammar-consistent token) stays available: [`ServedMatcher::set_forced_masks`]
//!   turns the narrowing off, and [`Matcher`] itself never narrows.

use crate::{ErrorKind, Matcher, ParserFactory, StopReason, TokenId, TokenSet};

/// LLGuidance's compile-time limits that this engine checks on a compiled grammar (the
/// others of LLGuidance's `ParserLimits` are accepted and not used: this engine bounds its
/// per-step work with its own limits). Values at or above LLGuidance's defaults check
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileLimits {
    /// Symbols in the grammar's rules (LLGuidance's `max_grammar_size`, default 500,000).
    pub max_grammar_size: usize,
    /// The serialized size of the grammar's lexemes, our measure of the initial lexer's
    /// work (LLGuidance's `initial_lexer_fuel`, default 1,000,000).
    pub initial_lexer_fuel: u64,
}

impl Default for CompileLimits {
    fn default() -> CompileLimits {
        CompileLimits { max_grammar_size: 500_000, initial_lexer_fuel: 1_000_000 }
    }
}

impl CompileLimits {
    /// The message (LLGuidance's words) if `g` exceeds a limit set below its default.
    pub fn check(&self, g: &grammars::CompiledGrammar) -> Option<String> {
        if self.max_grammar_size < 500_000 {
            let size = g.cfg.rule_array_len();
            if size > self.max_grammar_size {
                return Some(format!(
                    "grammar size (number of symbols) too big (limit for this grammar: {})",
                    self.max_grammar_size
                ));
            }
        }
        if self.initial_lexer_fuel < 1_000_000 {
            let mut cost = 0u64;
            for i in 0..g.spec.len() {
                if let Some(l) = g.spec.get(lexer::LexemeIdx::new(i)) {
                    cost += serde_json::to_string(&l.regex).map_or(0, |s| s.len() as u64);
                }
            }
            if cost > self.initial_lexer_fuel {
                return Some(format!(
                    "initial lexer configuration (grammar) too big (limit for this grammar: {})",
                    self.initial_lexer_fuel
                ));
            }
        }
        None
    }
}

/// A compiled grammar for a served matcher: the matcher (or the error), the grammar's
/// `max_tokens`, and the compile warnings.
pub type Built = (Result<Matcher, String>, Option<usize>, Vec<String>);

/// Compiles LLGuidance's grammar string (Lark text or grammar JSON) for `factory`, with
/// `limits` checked on the result.
pub fn build(factory: &ParserFactory, grammar: &str, limits: &CompileLimits) -> Built {
    build_with(factory, grammar, limits, None, None)
}

/// [`build`] whose compile (and the lexer's construction) `cancel` stops and `deadline`
/// (else the factory's) bounds; the matcher keeps `cancel` (see
/// [`crate::CancellationHandle`]).
pub fn build_with(
    factory: &ParserFactory,
    grammar: &str,
    limits: &CompileLimits,
    cancel: Option<&crate::CancellationHandle>,
    deadline: Option<std::time::Duration>,
) -> Built {
    let interrupt = factory.interrupt_with(cancel, deadline);
    if let Some(why) = interrupt.as_ref().and_then(|i| i.fired()) {
        return (Err(why.to_string()), None, Vec::new());
    }
    match factory.compile_llguidance_interruptible(grammar, interrupt.clone()) {
        Ok((compiled, max_tokens, warnings)) => {
            if let Some(e) = limits.check(&compiled) {
                return (Err(e), None, Vec::new());
            }
            let m = lexer::interrupt::scoped(interrupt, || factory.matcher_for(compiled));
            let m = m.map_err(|e| e.message().to_string());
            let m = match cancel {
                Some(h) => m.map(|m| m.with_cancellation(h.clone())),
                None => m,
            };
            (m, max_tokens, warnings)
        }
        Err(e) => (Err(e.message().to_string()), None, Vec::new()),
    }
}

/// Compiles a grammar given as LLGuidance's C API names its kinds (`llg_new_matcher`):
/// `"regex"` (Rust regex syntax), `"json"` / `"json_schema"` (a JSON Schema),
/// `"json_object"` (any JSON object; `data` is ignored), `"lark"` (LLGuidance's Lark),
/// `"llguidance"` / `"guidance"` (LLGuidance's grammar JSON, or Lark text); and ours:
/// `"gbnf"` (llama.cpp's GBNF), `"structural_tag"` (XGrammar's structural tags), `"ir"`
/// (the grammar IR as JSON).
pub fn build_kind(
    factory: &ParserFactory,
    kind: &str,
    data: &str,
    limits: &CompileLimits,
) -> Built {
    let wrap = |entry: serde_json::Value| {
        serde_json::json!({ "grammars": [entry], "max_tokens": null }).to_string()
    };
    let text = match kind {
        "regex" => grammars::top_level::regex_grammar(data),
        // A schema nested past serde_json's 128 levels is wrapped as text: the top-level
        // parse reads it (deep input on a thread with room) and reports invalid JSON.
        "json" | "json_schema" if grammars::json_deeper_than(data, 128) => {
            format!("{{\"grammars\": [{{\"json_schema\": {data}}}], \"max_tokens\": null}}")
        }
        "json" | "json_schema" => match serde_json::from_str::<serde_json::Value>(data) {
            Ok(schema) => wrap(serde_json::json!({ "json_schema": schema })),
            Err(e) => return (Err(format!("JSON schema: invalid JSON: {e}")), None, Vec::new()),
        },
        "json_object" => wrap(serde_json::json!({ "json_schema": { "type": "object" } })),
        "lark" => wrap(serde_json::json!({ "lark_grammar": data })),
        "llguidance" | "guidance" => data.to_string(),
        "gbnf" | "structural_tag" | "ir" => {
            let r = crate::GrammarSource::from_format(kind, data.to_string())
                .and_then(|src| factory.create_matcher(&src))
                .map_err(|e| e.message().to_string());
            return (r, None, Vec::new());
        }
        _ => {
            return (
                Err(format!(
                    "unknown constraint type {kind:?} (expected regex, json, json_schema, \
                     json_object, lark, llguidance, guidance, gbnf, structural_tag or ir)"
                )),
                None,
                Vec::new(),
            )
        }
    };
    build(factory, &text, limits)
}

/// LLGuidance's name of a stop reason (its `StopReason` enum).
pub fn stop_name(s: StopReason) -> &'static str {
    match s {
        StopReason::NotStopped => "NotStopped",
        StopReason::EndOfSequence => "EndOfSentence",
        StopReason::MaxTokens => "MaxTokensTotal",
        StopReason::Error => "InternalError",
        StopReason::Cancelled => "Cancelled",
    }
}

/// One sequence's state under LLGuidance's contract (see the module documentation).
pub struct ServedMatcher {
    factory: ParserFactory,
    inner: Option<Matcher>,
    /// An error of this layer (grammar error, bad rollback, token after a stop).
    error: Option<String>,
    /// The grammar can take nothing but EOS here (LLGuidance's `NoExtension`).
    no_ext: bool,
    warnings: Vec<String>,
    log_level: i32,
    /// The grammar's `max_tokens`: one more token is an error (LLGuidance's rule).
    max_tokens: Option<usize>,
    /// Served masks: the first forced token only, where the grammar forces bytes.
    forced_masks: bool,
    /// Bumped on every change of position; keys `forced`.
    generation: u64,
    /// The first forced token at `generation` (`None` inside: nothing forced).
    forced: Option<(u64, Option<TokenId>)>,
    /// Nanoseconds the last mask fill took.
    last_fill_ns: u64,
}

impl ServedMatcher {
    /// A matcher from a compiled grammar (or its error). `log_level` 1 and up prints
    /// LLGuidance's warning on stderr when the matcher enters its error state.
    pub fn new(factory: ParserFactory, built: Built, log_level: i32) -> ServedMatcher {
        let (r, max_tokens, warnings) = built;
        let mut m = ServedMatcher {
            factory,
            inner: None,
            error: None,
            no_ext: false,
            warnings,
            log_level,
            max_tokens: None,
            forced_masks: true,
            generation: 0,
            forced: None,
            last_fill_ns: 0,
        };
        match r {
            Ok(inner) => {
                m.max_tokens = max_tokens;
                m.inner = Some(inner);
                m.update_no_ext();
            }
            Err(e) => m.error = Some(e),
        }
        m
    }

    /// Puts the matcher under `handle` (see [`crate::CancellationHandle`]); a matcher in its
    /// error state from the start (a grammar error) has nothing to cancel.
    pub fn set_cancellation(&mut self, handle: crate::CancellationHandle) {
        if let Some(m) = self.inner.take() {
            self.inner = Some(m.with_cancellation(handle));
        }
    }

    /// The cancellation handle, enabling cancellation first (LLGuidance's
    /// `into_cancellable` then `cancellation_handle`); a matcher in its error state from
    /// the start gets a handle that controls nothing.
    pub fn cancellation_handle(&mut self) -> crate::CancellationHandle {
        match self.inner.take() {
            Some(m) => {
                let m = m.into_cancellable();
                let h = m.cancellation_handle().expect("enabled");
                self.inner = Some(m);
                h
            }
            None => crate::CancellationHandle::new(),
        }
    }

    /// Whether cancellation was requested and no other error came first.
    pub fn is_cancelled(&self) -> bool {
        self.error.is_none()
            && self
                .inner
                .as_ref()
                .is_some_and(|m| m.is_cancelled() && m.error().is_none_or(|e| e.is_cancelled()))
    }

    /// Served masks on (the default: the first forced token only where bytes are forced)
    /// or off (every grammar-consistent token).
    pub fn set_forced_masks(&mut self, on: bool) {
        self.forced_masks = on;
    }

    /// The tokenizer's factory.
    pub fn factory(&self) -> &ParserFactory {
        &self.factory
    }

    /// The engine's matcher (none when the grammar did not compile).
    pub fn matcher(&self) -> Option<&Matcher> {
        self.inner.as_ref()
    }

    /// The width of the masks in tokens.
    pub fn vocab_size(&self) -> usize {
        self.factory.tokenizer().vocab().len()
    }

    /// The number of u32 words of a mask.
    pub fn words(&self) -> usize {
        self.vocab_size().div_ceil(32)
    }

    /// The error message in the error state (after a cancellation, `operation cancelled`).
    pub fn error_message(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(e.clone());
        }
        if self.is_cancelled() {
            return Some(crate::Cancelled.to_string());
        }
        self.inner.as_ref().and_then(|m| m.error()).map(|e| e.message().to_string())
    }

    /// Whether the matcher is in its error state (cancelled included).
    pub fn is_error(&self) -> bool {
        self.error.is_some()
            || self.inner.as_ref().is_none_or(|m| m.error().is_some() || m.is_cancelled())
    }

    /// The compile warnings.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Nanoseconds the last [`ServedMatcher::fill`] took inside the engine.
    pub fn last_fill_ns(&self) -> u64 {
        self.last_fill_ns
    }

    /// Enters the error state with `msg` (the first error stays), with LLGuidance's warning
    /// on stderr at log level 1 and up.
    pub fn set_error(&mut self, msg: String) {
        if self.error.is_none() {
            if self.log_level >= 1 {
                eprintln!("Warning: {msg}; stopping");
            }
            self.error = Some(msg);
        }
    }

    /// The stop tokens: the matcher's stop set, else the vocabulary's EOS ids.
    pub fn eos(&self) -> &[TokenId] {
        match &self.inner {
            Some(m) => m.eos(),
            None => self.vocab().eos_tokens(),
        }
    }

    /// The request's own stop set in place of the vocabulary's EOS ids (see
    /// [`Matcher::with_stop_tokens`]); an error leaves the matcher in its error state.
    pub fn set_stop_tokens(&mut self, ids: &[u32]) {
        let Some(m) = self.inner.as_mut() else { return };
        let ids: Vec<TokenId> = ids.iter().map(|&t| TokenId(t)).collect();
        match m.set_stop_tokens(&ids) {
            Ok(()) => self.update_no_ext(),
            Err(e) => self.set_error(e.message().to_string()),
        }
    }

    fn vocab(&self) -> &toktrie::Vocabulary {
        self.factory.tokenizer().vocab()
    }

    fn moved(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// The EOS-only mask (the error state's, a stopped matcher's) into `out`.
    pub fn fill_eos_only(&self, out: &mut [u32]) {
        out.fill(0);
        for &t in self.eos() {
            out[t.as_usize() / 32] |= 1 << (t.as_usize() % 32);
        }
    }

    /// After the state moved: is the matcher where only EOS can follow?
    fn update_no_ext(&mut self) {
        self.no_ext = false;
        // After every consumed token: no 16 KB EOS set here (it cost ~0.3 µs a token).
        let Some(m) = self.inner.as_mut() else { return };
        if m.error().is_some() || m.is_stopped() {
            return;
        }
        if !m.is_accepting().unwrap_or(false) {
            return;
        }
        // The matcher keeps this mask for the next compute_mask at the same position.
        if let Ok(mask) = m.compute_mask() {
            let eos = m.eos();
            self.no_ext = mask.iter().all(|t| eos.contains(&t));
        }
    }

    /// The first forced token here, if bytes are forced and served masks are on.
    fn forced_token(&mut self) -> Option<TokenId> {
        if !self.forced_masks {
            return None;
        }
        if let Some((g, t)) = self.forced {
            if g == self.generation {
                return t;
            }
        }
        let m = self.inner.as_mut()?;
        // An error here (a tokenizer that fails) leaves the pure mask, which is never wrong.
        let t = m.compute_ff_tokens().ok().and_then(|v| v.first().copied());
        self.forced = Some((self.generation, t));
        t
    }

    fn servable(&self) -> bool {
        self.error_message().is_none() && !self.no_ext && !self.is_cancelled()
    }

    /// The mask now (EOS only in the error state or after a stop).
    pub fn mask(&mut self) -> TokenSet {
        let mut s = TokenSet::new(self.vocab().len());
        self.fill(s.as_words_mut());
        s
    }

    /// The mask into `out` (at least [`ServedMatcher::words`] words). The pure mask is
    /// computed first; bytes can be forced only where every allowed token starts with the
    /// same byte, and only there are the forced tokens computed (their tokenization costs
    /// more than the check: +5 µs at the median mask before it, llama3, MaskBench).
    pub fn fill(&mut self, out: &mut [u32]) {
        let t0 = std::time::Instant::now();
        // Cancelled: no mask at all (never EOS only; LLGuidance's contract).
        if self.is_cancelled() {
            out.fill(0);
            return;
        }
        let r = if !self.servable() {
            Err(String::new())
        } else {
            let m = self.inner.as_mut().expect("no error: a matcher");
            m.compute_mask_into(out).map_err(|e| e.message().to_string())
        };
        if r.is_ok() && self.forced_masks && self.one_first_byte(out) {
            if let Some(t) = self.forced_token() {
                out.fill(0);
                out[t.as_usize() / 32] |= 1 << (t.as_usize() % 32);
            }
        } else if r.is_ok() && self.forced_masks {
            // Nothing is forced at this position.
            self.forced = Some((self.generation, None));
        }
        if let Err(msg) = r {
            if self.is_cancelled() {
                // Cancelled during the mask: the error is the matcher's own.
                out.fill(0);
                return;
            }
            if !msg.is_empty() {
                self.set_error(msg);
            }
            self.fill_eos_only(out);
        }
        self.last_fill_ns = t0.elapsed().as_nanos() as u64;
    }

    /// Whether every token in `mask` starts with the same byte (a special token: its
    /// 0xFF marker), the necessary condition for forced bytes.
    fn one_first_byte(&self, mask: &[u32]) -> bool {
        let v = self.vocab();
        let mut first: Option<u8> = None;
        for (i, &w) in mask.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let t = TokenId::from_usize(i * 32 + w.trailing_zeros() as usize);
                w &= w - 1;
                let Some(&b) = v.token_bytes(t).first() else { continue };
                match first {
                    None => first = Some(b),
                    Some(f) if f != b => return false,
                    Some(_) => {}
                }
            }
        }
        first.is_some()
    }

    /// Writes the mask into `out` if it is known without computing (the same position as
    /// the last mask): a copy; `false` otherwise (`out` untouched).
    pub fn fill_cached(&mut self, out: &mut [u32]) -> bool {
        if !self.servable() {
            return false;
        }
        let t0 = std::time::Instant::now();
        let hit = if self.forced_masks {
            match self.forced {
                Some((g, Some(t))) if g == self.generation => {
                    out.fill(0);
                    out[t.as_usize() / 32] |= 1 << (t.as_usize() % 32);
                    true
                }
                Some((g, None)) if g == self.generation => {
                    self.inner.as_mut().is_some_and(|m| m.cached_mask_into(out))
                }
                _ => false,
            }
        } else {
            self.inner.as_mut().is_some_and(|m| m.cached_mask_into(out))
        };
        if hit {
            self.last_fill_ns = t0.elapsed().as_nanos() as u64;
        }
        hit
    }

    /// Consumes one token (LLGuidance's rules); false puts the matcher in its error state.
    pub fn consume_token(&mut self, t: u32) -> bool {
        self.consume_one(t, true)
    }

    /// Consumes tokens in order; false at the first failure (error state).
    pub fn consume_tokens(&mut self, tokens: &[u32]) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        if !tokens.iter().all(|&t| self.consume_one(t, false)) {
            return false;
        }
        let eos = self.eos();
        if tokens.iter().any(|t| !eos.contains(&TokenId(*t))) {
            self.update_no_ext();
        }
        true
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
        let is_eos = self.eos().contains(&TokenId(t));
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
        self.generation = self.generation.wrapping_add(1);
        match m.consume_token(TokenId(t)) {
            Ok(()) => {
                if !is_eos && check_end {
                    self.update_no_ext();
                }
                true
            }
            Err(e) => {
                let msg = if matches!(e.kind(), ErrorKind::Rejected) {
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

    /// Consumes the longest allowed prefix of `tokens`; returns its length.
    pub fn try_consume_tokens(&mut self, tokens: &[u32]) -> usize {
        self.count_valid(tokens, true)
    }

    /// How many leading tokens of `tokens` would be allowed; the state is unchanged. As
    /// LLGuidance: an id out of range anywhere in the list is an error, and nothing of the
    /// list is valid.
    pub fn validate_tokens(&mut self, tokens: &[u32]) -> usize {
        let n = self.vocab().len();
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= n) {
            if self.error_message().is_none() {
                self.set_error(format!("token id {bad} out of range"));
            }
            return 0;
        }
        self.count_valid(tokens, false)
    }

    /// How many of `tokens` are allowed in turn; with `commit` they stay consumed.
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
            let is_eos = self.eos().contains(&TokenId(t));
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
            self.generation = self.generation.wrapping_add(1);
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
        self.moved();
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

    /// Undoes the last `n` tokens; false (and the error state) when that is more than were
    /// consumed.
    pub fn rollback(&mut self, n: usize) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        // Nothing to undo: no change, a stop included (as LLGuidance; SGLang rolls back
        // `n - 1` tokens after an EOS it accepted past the stop).
        if n == 0 {
            return true;
        }
        self.moved();
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

    /// Back to the start of the grammar; false in the error state.
    pub fn reset(&mut self) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        let n = self.inner.as_ref().map_or(0, |m| m.tokens().len());
        self.rollback(n)
    }

    /// Whether the tokens so far form a complete string of the grammar.
    pub fn is_accepting(&mut self) -> bool {
        if self.error_message().is_some() {
            return false;
        }
        self.inner.as_mut().is_some_and(|m| m.is_accepting().unwrap_or(false))
    }

    /// Whether the matcher stopped (EOS, nothing but EOS can follow, max tokens, error).
    pub fn is_stopped(&self) -> bool {
        self.is_cancelled()
            || self.error_message().is_some()
            || self.no_ext
            || self.inner.as_ref().is_some_and(|m| m.is_stopped())
    }

    /// LLGuidance's name of why it stopped: `NotStopped`, `NoExtension`, `EndOfSentence`,
    /// `MaxTokensTotal`, `InternalError`, `Cancelled`.
    pub fn stop_reason(&self) -> &'static str {
        if self.is_cancelled() {
            return "Cancelled";
        }
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

    /// The forced tokens (see [`Matcher::compute_ff_tokens`]); empty after a stop or in
    /// the error state.
    pub fn compute_ff_tokens(&mut self) -> Vec<u32> {
        if self.error_message().is_some() || self.no_ext {
            return Vec::new();
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        match m.compute_ff_tokens() {
            Ok(v) => v.into_iter().map(|t| t.0).collect(),
            Err(e) => {
                self.set_error(e.message().to_string());
                Vec::new()
            }
        }
    }

    /// The forced bytes; empty after a stop or in the error state.
    pub fn compute_ff_bytes(&mut self) -> Vec<u8> {
        if self.error_message().is_some() || self.no_ext {
            return Vec::new();
        }
        let m = self.inner.as_mut().expect("no error: a matcher");
        match m.compute_ff_bytes() {
            Ok(v) => v,
            Err(e) => {
                self.set_error(e.message().to_string());
                Vec::new()
            }
        }
    }

    /// Masks for the current position and along a draft, into `rows[0]`, `rows[1]`, ...
    /// (LLGuidance's draft-token layout); the state is unchanged afterwards.
    pub fn fill_draft(&mut self, rows: &mut [&mut [u32]], draft: &[u32]) {
        let Some((first, rest)) = rows.split_first_mut() else { return };
        self.fill(first);
        if self.error_message().is_some() {
            return;
        }
        let start = self.inner.as_ref().map_or(0, |m| m.tokens().len());
        let no_ext0 = self.no_ext;
        for (i, &t) in draft.iter().enumerate() {
            let Some(row) = rest.get_mut(i) else { break };
            if t as usize >= self.vocab().len() {
                self.set_error(format!("token id {t} out of range"));
                break;
            }
            if self.eos().contains(&TokenId(t)) {
                break;
            }
            if self.count_valid(&[t], true) != 1 {
                break;
            }
            self.fill(row);
        }
        self.restore(start, no_ext0);
    }

    /// The captures so far, in order, as (name, bytes).
    pub fn captures(&self) -> Vec<(String, Vec<u8>)> {
        self.inner.as_ref().map_or_else(Vec::new, |m| m.captures())
    }

    /// An independent copy at the same position (error state included).
    pub fn deep_clone(&self) -> ServedMatcher {
        ServedMatcher {
            factory: self.factory.clone(),
            inner: self.inner.as_ref().map(|m| m.deep_clone()),
            error: self.error.clone(),
            no_ext: self.no_ext,
            warnings: self.warnings.clone(),
            log_level: self.log_level,
            max_tokens: self.max_tokens,
            forced_masks: self.forced_masks,
            generation: self.generation,
            forced: self.forced,
            last_fill_ns: 0,
        }
    }
}

/// A token as LLGuidance's error messages quote it.
fn token_text(v: &toktrie::Vocabulary, t: u32) -> String {
    let id = TokenId(t);
    if v.is_special(id) {
        return format!("\"\u{FFFD}[{t}]\"");
    }
    let s = String::from_utf8_lossy(v.token_bytes(id)).into_owned();
    serde_json::to_string(&s).unwrap_or_else(|_| format!("{s:?}"))
}

impl std::fmt::Debug for ServedMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedMatcher")
            .field("error", &self.error_message())
            .field("stop_reason", &self.stop_reason())
            .finish()
    }
}
