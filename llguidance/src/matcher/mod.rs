//! [`Matcher`]: the per-sequence state an inference server drives.

use hashbrown::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

use earley::Parser;
use grammars::CompiledGrammar;
use lexer::DerivreLexer;
use toktrie::{TokenId, TokenSet};

use crate::cancel::{CancelSlot, CancellationHandle};
use crate::error::ErrorKind;

use crate::shared::{Engine, LexerTemplate, Shared, ROW0_MASKS};
use crate::slicing::{Slicing, Walks};
use crate::Error;

mod mask;
use mask::LastAt;

/// The engine behind a matcher.
#[derive(Clone)]
enum Backend {
    /// The lazy Earley parser over the derivre lexer (any grammar).
    Earley(Box<Parser<DerivreLexer>>),
    /// A precomputed token DFA (`index` crate), for plain regexes that build within budget.
    TokenDfa(index::Guide),
}

/// Why a matcher stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Not stopped.
    NotStopped,
    /// An EOS token was consumed.
    EndOfSequence,
    /// The matcher's `max_tokens` was reached.
    MaxTokens,
    /// An error put the matcher in its error state.
    Error,
    /// A cancellation request was observed ([`crate::CancellationHandle`]).
    Cancelled,
}

/// The state of one sequence: compute the mask, consume the sampled token, repeat.
///
/// Any error (a rejected token, a limit, even a panic caught here) puts the matcher in a
/// sticky error state: every later call returns that error, never a mask.
#[derive(Clone)]
pub struct Matcher {
    shared: Arc<Shared>,
    grammar: Option<Arc<CompiledGrammar>>,
    backend: Backend,
    error: Option<Error>,
    stop: StopReason,
    tokens: Vec<TokenId>,
    max_tokens: Option<usize>,
    slicing: Slicing,
    /// The Earley backend's lexer, shared by the matcher and all its clones.
    lexer: Option<Arc<Mutex<SharedLexer>>>,
    /// The grammar's template this matcher's lexer was copied from (see [`LexerTemplate`]).
    template: Option<Arc<LexerTemplate>>,
    /// First-row masks at states the template does not know (this lexer's own numbering):
    /// they go with the lexer when it becomes the next template.
    row0_own: HashMap<lexer::StateId, TokenSet>,
    /// The next mask is computed, not taken from the first-row masks (after `set_slicing`).
    skip_row0: bool,
    /// The last mask of the Earley backend and the parser position it was computed at
    /// (`Parser::position_key`): inside a long lexeme (the body of a JSON string) the
    /// position often stays the same from token to token, and so does the mask. Cleared
    /// by a rollback.
    last_mask: Option<((u32, lexer::StateId), TokenSet)>,
    /// How `last_mask` was computed, where a later position may reuse it (`None`: a mask
    /// finished for its own state).
    last_at: Option<LastAt>,
    /// The counter twin of the last row whose masks took one (`near_bound::RowTwin`).
    /// Cleared by a rollback.
    row_twin: Option<crate::near_bound::RowTwin>,
    /// Masks answered from `last_mask`.
    mask_cache_hits: u64,
    /// The cancellation request, once enabled ([`Matcher::into_cancellable`]).
    cancel: CancelSlot,
    /// The request's stop tokens in place of the vocabulary's EOS ids
    /// ([`Matcher::with_stop_tokens`]).
    stop_tokens: Option<Arc<[TokenId]>>,
}

/// The lexer of an Earley matcher and its clones: a cache of one DFA, fixed by the grammar,
/// whose states and transitions are built on demand. Sharing it means a clone (a new
/// sequence of the same grammar) starts with every transition and slicer answer the others
/// learned. Each matcher operation locks it once and swaps it into the parser (whose own
/// lexer field holds an empty placeholder in between); the containment answers of the
/// slicer, keyed by lexer state, are shared the same way.
struct SharedLexer {
    lexer: DerivreLexer,
    contained: HashMap<(u32, usize), bool>,
    /// Split trie walks at the lexer's own states, those the template does not know (see
    /// [`Walks`]).
    walks: Walks,
    /// Set when a panic was caught while the lexer was swapped in (e.g. inside derivre): its
    /// state may be inconsistent, so every matcher sharing it reports an internal error.
    broken: Option<String>,
}

/// An empty lexer, the parser's placeholder while the shared one is not swapped in.
fn placeholder() -> DerivreLexer {
    static EMPTY: OnceLock<DerivreLexer> = OnceLock::new();
    EMPTY
        .get_or_init(|| {
            DerivreLexer::new(&lexer::LexerSpec::default()).expect("an empty lexer spec builds")
        })
        .clone()
}

/// Counters of the slicer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SliceStats {
    /// Slices allowed whole (mask OR-ed in, trie skipped).
    pub applied: u64,
    /// Slices whose trie was walked.
    pub walked: u64,
    /// Slices proven in part (by first character; the rest of their trie walked), counted
    /// in `applied` too.
    pub partial: u64,
    /// Trie walks (a slice's, the rest of the vocabulary's, or the whole trie's) done from a
    /// walk split at the lexer state (by this mask, or kept from an earlier one): the tokens
    /// the lexer decided alone, and the parser's walk below the places where a lexeme ends.
    pub split: u64,
    /// Masks computed at a lexer state's counter twin (a bounded repeat with more room than
    /// the longest token; see `lexer::DerivreLexer::mask_twin`).
    pub twins: u64,
    /// Masks nearer a bound than the longest token: the short tokens' part from a counter
    /// twin, the long tokens walked (see `lexer::DerivreLexer::mask_twin_at`).
    pub splits: u64,
    /// Masks within the longest token of a bound: a run twin's mask, less the tokens whose
    /// leading run does not fit (see `lexer::DerivreLexer::run_bound`).
    pub runs: u64,
    /// Of those, the masks narrowed from the last one in place (the same run twin, a
    /// smaller maximum).
    pub narrowed: u64,
    /// Masks where a lexeme must end within the slices' runs (a chunk of a long string
    /// near its end): the walked slices' subtrees past the end proven whole where the
    /// next lexeme contains the slice.
    pub boundaries: u64,
    /// Masks at a long string's chunk end taken at the counter twin of the chunk's middle,
    /// where the row the chunk ends into starts as the chunk's own did
    /// (`near_bound::chunk_twin`).
    pub chunk_ends: u64,
}

impl Drop for Matcher {
    /// The last of a matcher's clones offers its lexer to the grammar's later matchers (see
    /// [`ParserFactory::matcher_for`](crate::ParserFactory::matcher_for)).
    fn drop(&mut self) {
        if self.shared.plain {
            return;
        }
        let (Some(g), Some(t), Some(l)) = (&self.grammar, &self.template, self.lexer.take()) else {
            return;
        };
        let Ok(l) = Arc::try_unwrap(l) else { return };
        if Arc::strong_count(g) == 1 {
            // The grammar goes with this matcher (`create_matcher`): free its template now,
            // not in a later grammar's first matcher.
            self.shared.lexers.forget(g);
            return;
        }
        let l = l.into_inner().unwrap_or_else(|e| e.into_inner());
        if l.broken.is_none() {
            let own = std::mem::take(&mut self.row0_own);
            self.shared.lexers.offer(g, t, l.lexer, l.contained, l.walks, own);
        }
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("tokens", &self.tokens.len())
            .field("stop", &self.stop)
            .field("error", &self.error)
            .finish()
    }
}

impl Matcher {
    pub(crate) fn new(
        shared: Arc<Shared>,
        grammar: Arc<CompiledGrammar>,
    ) -> Result<Matcher, Error> {
        let mut opts = grammar.parser_options(shared.tokenizer.vocab().eos_tokens().to_vec());
        opts.scan_completions = shared.plain;
        // The plain computation starts from no other matcher's lexer.
        let template = if shared.plain {
            Arc::new(LexerTemplate::empty())
        } else {
            shared.lexers.template(&grammar)
        };
        // A panic inside derivre while building the lexer or its start state is this
        // grammar's error, not the caller's crash (mask calls are guarded the same way).
        let built = catch_unwind(AssertUnwindSafe(|| -> Result<_, Error> {
            let mut lexer = match &template.lexer {
                Some(l) => l.clone(),
                None => DerivreLexer::new(&grammar.spec)?,
            };
            lexer.set_proofs(!shared.plain);
            lexer.set_token_horizon(if shared.plain { 0 } else { shared.trie.max_token_len() });
            Ok(Parser::new(grammar.cfg.clone(), lexer, opts)?)
        }));
        let mut parser = built.unwrap_or_else(|p| {
            Err(Error::new(
                ErrorKind::Internal,
                format!("internal error building the lexer: {}", crate::error::panic_message(&*p)),
            ))
        })?;
        let mut lexer = placeholder();
        std::mem::swap(parser.lexer_mut(), &mut lexer);
        let contained = template.contained.clone();
        let lexer = SharedLexer { lexer, contained, walks: Walks::default(), broken: None };
        let slicing = Slicing { on: shared.slices.is_some(), ..Default::default() };
        // (`Matcher` implements `Drop`: fields set on the fresh one, not moved out of it.)
        let mut m = Matcher::fresh(shared, Backend::Earley(Box::new(parser)));
        m.grammar = Some(grammar);
        m.slicing = slicing;
        m.lexer = Some(Arc::new(Mutex::new(lexer)));
        m.template = Some(template);
        Ok(m)
    }

    pub(crate) fn new_token_dfa(shared: Arc<Shared>, index: Arc<index::Index>) -> Matcher {
        Matcher::fresh(shared, Backend::TokenDfa(index::Guide::new(index, usize::MAX)))
    }

    /// A matcher at the start over `backend`: nothing consumed, no grammar lexer or
    /// template, no slicing, no cache.
    fn fresh(shared: Arc<Shared>, backend: Backend) -> Matcher {
        Matcher {
            shared,
            grammar: None,
            backend,
            error: None,
            stop: StopReason::NotStopped,
            tokens: Vec::new(),
            max_tokens: None,
            slicing: Slicing::default(),
            lexer: None,
            template: None,
            row0_own: HashMap::new(),
            skip_row0: false,
            last_mask: None,
            last_at: None,
            row_twin: None,
            mask_cache_hits: 0,
            cancel: CancelSlot::default(),
            stop_tokens: None,
        }
    }

    /// How many states the matcher's lexer knows (0 for the token DFA engine).
    #[cfg(test)]
    pub(crate) fn lexer_states(&self) -> usize {
        self.lexer.as_ref().map_or(0, |l| {
            lexer::Lexer::num_states(&l.lock().unwrap_or_else(|e| e.into_inner()).lexer)
        })
    }

    /// The engine this matcher uses (`Earley` or `TokenDfa`, never `Auto`).
    pub fn engine(&self) -> Engine {
        match self.backend {
            Backend::Earley(_) => Engine::Earley,
            Backend::TokenDfa(_) => Engine::TokenDfa,
        }
    }

    /// Runs `f` unless in the error state; an error or a panic in it becomes sticky.
    fn guarded<T>(
        &mut self,
        sticky: bool,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if let Some(h) = &self.cancel.0 {
            if h.is_cancelled() {
                return Err(self.cancelled());
            }
            // The parser reads the request during a mask (a clone's parser still holds the
            // original's flag until here).
            if let Backend::Earley(p) = &mut self.backend {
                if !p.cancel_flag().is_some_and(|f| h.same(f)) {
                    p.set_cancel(Some(h.0.clone()));
                }
            }
        }
        // Swap the shared lexer (and slicer answers) in for the call and back after it,
        // also after a panic (caught just below).
        let shared = self.lexer.clone();
        let mut guard = shared.as_ref().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()));
        let swap = |m: &mut Self, g: &mut Option<std::sync::MutexGuard<'_, SharedLexer>>| {
            if let (Some(g), Backend::Earley(p)) = (g.as_deref_mut(), &mut m.backend) {
                std::mem::swap(p.lexer_mut(), &mut g.lexer);
                std::mem::swap(&mut m.slicing.cache, &mut g.contained);
                std::mem::swap(&mut m.slicing.walks, &mut g.walks);
            }
        };
        if let Some(msg) = guard.as_deref().and_then(|g| g.broken.clone()) {
            let e = Error::new(
                ErrorKind::Internal,
                format!("internal error in a matcher sharing this one's lexer: {msg}"),
            );
            self.error = Some(e.clone());
            self.stop = StopReason::Error;
            return Err(e);
        }
        swap(self, &mut guard);
        let r = catch_unwind(AssertUnwindSafe(|| f(self)));
        swap(self, &mut guard);
        if let (Err(p), Some(g)) = (&r, guard.as_deref_mut()) {
            g.broken = Some(crate::error::panic_message(&**p));
        }
        drop(guard);
        let r = match r {
            Ok(r) => r,
            Err(p) => {
                let msg = crate::error::panic_message(&*p);
                Err(Error::new(
                    ErrorKind::Internal,
                    format!("internal error (panic caught): {msg}"),
                ))
            }
        };
        if let Err(e) = &r {
            if e.kind() == ErrorKind::Cancelled {
                return Err(self.cancelled());
            }
            if sticky || e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Limit {
                self.error = Some(e.clone());
                self.stop = StopReason::Error;
            }
        }
        r
    }

    /// Puts the matcher in its cancelled state (sticky) and returns the error.
    fn cancelled(&mut self) -> Error {
        let e = Error::from(crate::Cancelled);
        self.error = Some(e.clone());
        self.stop = StopReason::Cancelled;
        self.last_mask = None;
        e
    }

    /// Enables cancellation (LLGuidance's `into_cancellable`): the matcher gets a
    /// [`CancellationHandle`] ([`Matcher::cancellation_handle`]); a matcher that has one keeps
    /// it. Costs nothing measurable: the request is read when an operation starts and on the
    /// parser's slow path.
    pub fn into_cancellable(mut self) -> Self {
        if self.cancel.0.is_none() {
            self.cancel.0 = Some(CancellationHandle::new());
        }
        self
    }

    /// Puts the matcher under `handle` (a compile's handle, so that one request stops both).
    pub fn with_cancellation(mut self, handle: CancellationHandle) -> Self {
        self.cancel.0 = Some(handle);
        self
    }

    /// The cancellation handle, once enabled ([`Matcher::into_cancellable`]); `None` before.
    pub fn cancellation_handle(&self) -> Option<CancellationHandle> {
        self.cancel.0.clone()
    }

    /// Whether cancellation was requested (observed or not yet).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.stop == StopReason::Cancelled
    }

    fn vocab_size(&self) -> usize {
        self.shared.trie.vocab_size()
    }

    /// The mask of the stop tokens alone.
    pub(crate) fn eos_only(&self) -> TokenSet {
        let mut m = TokenSet::new(self.vocab_size());
        for &t in self.eos() {
            m.insert(t);
        }
        m
    }

    /// The stop tokens: the request's ([`Matcher::with_stop_tokens`]) or the vocabulary's
    /// EOS ids.
    pub fn eos(&self) -> &[TokenId] {
        match &self.stop_tokens {
            Some(s) => s,
            None => self.shared.tokenizer.vocab().eos_tokens(),
        }
    }

    /// The request's own stop set in place of the vocabulary's EOS ids (XGrammar's
    /// `override_stop_tokens`; vLLM's `stop_token_ids`): each id is masked until the grammar
    /// accepts and allowed once it does, and consuming one stops the matcher (several ids
    /// alike: Llama 3's `<|eot_id|>` and `<|end_of_text|>`). The vocabulary's EOS ids not in
    /// the set become ordinary special tokens (allowed where the grammar names them). The
    /// ids must be special tokens of the vocabulary (an error otherwise: a text token's
    /// bytes are the grammar's to allow), and the matcher must not have consumed tokens yet.
    /// Earley engine only (a token-DFA matcher is an error).
    pub fn with_stop_tokens(mut self, ids: &[TokenId]) -> Result<Matcher, Error> {
        self.set_stop_tokens(ids)?;
        Ok(self)
    }

    /// [`Matcher::with_stop_tokens`] in place; an error changes nothing.
    pub fn set_stop_tokens(&mut self, ids: &[TokenId]) -> Result<(), Error> {
        let vocab = self.shared.tokenizer.vocab();
        if ids.is_empty() {
            return Err(Error::new(ErrorKind::Usage, "an empty stop set: nothing could end"));
        }
        for &t in ids {
            if t.as_usize() >= vocab.len() || !vocab.is_special(t) {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!(
                        "stop token {t} is not a special token of the vocabulary (a text \
                         token's bytes are the grammar's to allow)"
                    ),
                ));
            }
        }
        if !self.tokens.is_empty() {
            return Err(Error::new(ErrorKind::Usage, "stop tokens are set before the first token"));
        }
        match &mut self.backend {
            Backend::Earley(p) => p.set_eos(ids.to_vec()),
            Backend::TokenDfa(_) => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "a stop set needs the Earley engine (this matcher is a token DFA)",
                ))
            }
        }
        self.stop_tokens = Some(ids.into());
        // Masks computed so far assumed the vocabulary's EOS ids.
        self.last_mask = None;
        Ok(())
    }

    /// Consumes one token; a token the grammar does not allow is an error (sticky).
    pub fn consume_token(&mut self, t: TokenId) -> Result<(), Error> {
        crate::batch::prewake();
        self.guarded(true, |m| m.consume_inner(t))
    }

    fn consume_inner(&mut self, t: TokenId) -> Result<(), Error> {
        let vocab = self.shared.tokenizer.vocab();
        if t.as_usize() >= vocab.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("token id {t} out of range (vocabulary has {} ids)", vocab.len()),
            ));
        }
        let is_eos = match &self.stop_tokens {
            Some(s) => s.contains(&t),
            None => vocab.eos_tokens().contains(&t),
        };
        if self.stop != StopReason::NotStopped {
            if is_eos {
                // EOS after a stop is allowed and changes nothing (as LLGuidance).
                return Ok(());
            }
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("token {t} after the matcher stopped"),
            ));
        }
        let r = match &mut self.backend {
            Backend::Earley(p) => p.consume_token(vocab, t).map_err(|e| e.to_string()),
            Backend::TokenDfa(g) => g.advance(t, false).map(|_| ()).map_err(|e| e.to_string()),
        };
        r.map_err(|e| {
            Error::new(
                ErrorKind::Rejected,
                format!("token {t} ({}) rejected: {e}", vocab.token_display(t)),
            )
        })?;
        self.tokens.push(t);
        if is_eos {
            self.stop = StopReason::EndOfSequence;
        } else if self.max_tokens.is_some_and(|n| self.tokens.len() >= n) {
            self.stop = StopReason::MaxTokens;
        }
        Ok(())
    }

    /// Consumes tokens in order; an error at any of them is sticky.
    pub fn consume_tokens(&mut self, toks: &[TokenId]) -> Result<(), Error> {
        toks.iter().try_for_each(|&t| self.consume_token(t))
    }

    /// Consumes tokens while they are allowed; returns how many were consumed (not an
    /// error when one is rejected).
    pub fn try_consume_tokens(&mut self, toks: &[TokenId]) -> Result<usize, Error> {
        self.guarded(false, |m| {
            let mut n = 0;
            for &t in toks {
                match m.consume_inner(t) {
                    Ok(()) => n += 1,
                    Err(e) if e.kind() == ErrorKind::Rejected || e.kind() == ErrorKind::Usage => {
                        break
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(n)
        })
    }

    /// How many tokens of a draft would be accepted, without changing the state (for
    /// speculative decoding).
    pub fn validate_tokens(&mut self, toks: &[TokenId]) -> Result<usize, Error> {
        let before = self.tokens.len();
        let n = self.try_consume_tokens(toks)?;
        // EOS after a stop is accepted without being recorded: roll back what was recorded.
        self.rollback(self.tokens.len() - before)?;
        Ok(n)
    }

    /// Undoes the last `n` consumed tokens.
    pub fn rollback(&mut self, n: usize) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if n > self.tokens.len() {
            // A usage error, not sticky (like a too-small mask buffer).
            return Err(Error::new(
                ErrorKind::Usage,
                format!("cannot roll back {n} tokens, {} consumed", self.tokens.len()),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        self.last_mask = None;
        self.row_twin = None;
        self.guarded(true, |m| {
            match &mut m.backend {
                Backend::Earley(p) => p.rollback(n)?,
                Backend::TokenDfa(g) => g
                    .rollback_state(n)
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?,
            }
            m.tokens.truncate(m.tokens.len() - n);
            let ended = m.tokens.last().is_some_and(|t| m.eos().contains(t));
            m.stop = if ended {
                StopReason::EndOfSequence
            } else if m.max_tokens.is_some_and(|k| m.tokens.len() >= k) {
                StopReason::MaxTokens
            } else {
                StopReason::NotStopped
            };
            Ok(())
        })
    }

    /// Back to the start of the grammar (the error state, if any, stays).
    pub fn reset(&mut self) -> Result<(), Error> {
        let n = self.tokens.len();
        self.rollback(n)
    }

    /// The bytes every continuation must start with (empty with `no_forcing`).
    pub fn compute_ff_bytes(&mut self) -> Result<Vec<u8>, Error> {
        self.guarded(true, |m| {
            if m.stop != StopReason::NotStopped {
                return Ok(Vec::new());
            }
            match (&mut m.backend, &m.grammar) {
                (Backend::Earley(_), Some(g)) if g.options.no_forcing => Ok(Vec::new()),
                (Backend::Earley(p), _) => Ok(p.forced_bytes()?),
                // The token DFA has no byte-level view; it forces nothing.
                (Backend::TokenDfa(_), _) => Ok(Vec::new()),
            }
        })
    }

    /// The forced continuation as tokens, tokenized canonically; the last token is left out
    /// when a longer token could start with it, so the boundary with what the model writes
    /// next is never tokenized non-canonically.
    pub fn compute_ff_tokens(&mut self) -> Result<Vec<TokenId>, Error> {
        let bytes = self.compute_ff_bytes()?;
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        let mut toks = self.shared.tokenize_forced(&bytes)?;
        // The last token is left out when the grammar could take a longer token that
        // starts with it (as LLGuidance: ` green` closing a choice stays, `-` stays where
        // no token `-…` fits, `"` before a free string goes): the model then picks the
        // boundary. Without a parser view (token DFA), any longer token counts.
        if let Some(&last) = toks.last() {
            let vocab = self.shared.tokenizer.vocab();
            let last_bytes = vocab.token_bytes(last).to_vec();
            if self.shared.trie.has_extensions(&last_bytes) {
                // The trie's bytes (a special token's with its 0xFF marker), as forced.
                let before: Vec<u8> = toks[..toks.len() - 1]
                    .iter()
                    .flat_map(|&t| vocab.token_bytes(t))
                    .copied()
                    .collect();
                let extend = self.guarded(true, |m| {
                    let shared = m.shared.clone();
                    match &mut m.backend {
                        Backend::Earley(p) => {
                            Ok(p.has_allowed_extension(&shared.trie, &before, &last_bytes)?)
                        }
                        Backend::TokenDfa(_) => Ok(true),
                    }
                })?;
                if extend {
                    toks.pop();
                }
            }
        }
        Ok(toks)
    }

    /// Whether the tokens so far form a complete string of the grammar.
    pub fn is_accepting(&mut self) -> Result<bool, Error> {
        self.guarded(true, |m| {
            Ok(m.stop == StopReason::EndOfSequence
                || match &mut m.backend {
                    Backend::Earley(p) => p.is_accepting()?,
                    Backend::TokenDfa(g) => g.is_finished(),
                })
        })
    }

    /// Whether the matcher stopped (EOS consumed, max tokens, or error).
    pub fn is_stopped(&self) -> bool {
        self.stop != StopReason::NotStopped
    }

    /// Why it stopped.
    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }

    /// The sticky error, if any.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Stops the matcher after `n` tokens (EOS only from then on).
    pub fn set_max_tokens(&mut self, n: Option<usize>) {
        self.max_tokens = n;
        if n.is_some_and(|k| self.tokens.len() >= k) && self.stop == StopReason::NotStopped {
            self.stop = StopReason::MaxTokens;
        }
    }

    /// Captured texts of finished `[capture]` rules, in order.
    pub fn captures(&self) -> Vec<(String, Vec<u8>)> {
        match &self.backend {
            // The parser holds a placeholder; regex stops need the real (shared) lexer.
            Backend::Earley(p) => match &self.lexer {
                Some(shared) => {
                    let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
                    p.captures_with(&mut g.lexer)
                }
                None => p.captures(),
            },
            Backend::TokenDfa(_) => Vec::new(),
        }
    }

    /// The tokens consumed so far.
    pub fn tokens(&self) -> &[TokenId] {
        &self.tokens
    }

    /// An independent copy (same grammar, same position, its own state).
    pub fn deep_clone(&self) -> Matcher {
        self.clone()
    }

    /// An independent matcher at the same position that computes masks the plain way
    /// ([`ParserFactory::plain`](crate::ParserFactory::plain)): the same compiled grammar,
    /// a lexer of its own built fresh, the tokens so far replayed. Its masks are the
    /// reference the proofs and caches of this one must equal (tests, the soundness oracle).
    pub fn plain_twin(&self) -> Result<Matcher, Error> {
        let g = self
            .grammar
            .clone()
            .ok_or_else(|| Error::new(ErrorKind::Usage, "a token-DFA matcher has no plain twin"))?;
        let plain = Arc::new(self.shared.derived(self.shared.engine, None, true));
        let mut m = Matcher::new(plain, g)?;
        m.set_max_tokens(self.max_tokens);
        for &t in &self.tokens {
            m.consume_token(t)?;
        }
        Ok(m)
    }

    /// Turns vocabulary slicing on or off for this matcher (masks are the same; on needs a
    /// factory with slices). The next mask is computed afresh, from no cache.
    pub fn set_slicing(&mut self, on: bool) {
        self.slicing.on = on && self.shared.slices.is_some();
        // The next mask is computed, not answered from the last one or the first-row masks.
        self.last_mask = None;
        self.skip_row0 = true;
    }

    /// Slicer counters.
    pub fn slice_stats(&self) -> SliceStats {
        SliceStats {
            applied: self.slicing.applied,
            walked: self.slicing.walked,
            partial: self.slicing.partial,
            split: self.slicing.split,
            twins: self.slicing.twins,
            splits: self.slicing.splits,
            runs: self.slicing.runs,
            narrowed: self.slicing.narrowed,
            boundaries: self.slicing.boundaries,
            chunk_ends: self.slicing.chunk_ends,
        }
    }

    /// Masks answered from a cache: the last mask, because the parser position had not
    /// changed, or a mask of the grammar's first lexeme that a matcher of the same compiled
    /// grammar computed (see [`ParserFactory::matcher_for`](crate::ParserFactory::matcher_for)).
    pub fn mask_cache_hits(&self) -> u64 {
        self.mask_cache_hits
    }

    /// Parser work counters (rows computed/reused, bytes pushed).
    pub fn parser_stats(&self) -> earley::ParserStats {
        match &self.backend {
            Backend::Earley(p) => p.stats(),
            Backend::TokenDfa(_) => earley::ParserStats::default(),
        }
    }
}

#[cfg(test)]
mod tests;
