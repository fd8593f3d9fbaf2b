//! [`Matcher`]: the per-sequence state an inference server drives.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use earley::Parser;
use grammars::CompiledGrammar;
use lexer::DerivreLexer;
use toktrie::{TokenId, TokenSet};

use crate::error::ErrorKind;
use crate::factory::Shared;
use crate::Error;

/// The engine behind a matcher.
#[derive(Clone)]
enum Backend {
    /// The lazy Earley parser over the derivre lexer (any grammar).
    Earley(Box<Parser<DerivreLexer>>),
    /// A precomputed token DFA (`index` crate), for plain regexes that build within budget.
    TokenDfa(index::Guide),
}

/// Which engine computes a matcher's masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Token DFA for plain regexes when it builds within budget, else Earley.
    Auto,
    /// Always the lazy Earley parser.
    Earley,
    /// Always the token DFA (an error for grammars that are not a plain regex, or over budget).
    TokenDfa,
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
    /// Masks answered from `last_mask`.
    mask_cache_hits: u64,
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

/// A compiled grammar's lexer as a finished matcher of it left it, which new matchers of the
/// grammar copy: a new sequence (a server that caches compiled grammars starts one per
/// request) begins with the states, transitions and slicer answers the earlier ones built,
/// and then owns its copy (no lock between matchers, so a batch of one grammar's sequences
/// runs in parallel). State ids below the template's count mean the same state in every
/// copy, so the masks of the first row (no lexeme ended yet: the same row in every matcher,
/// e.g. free text before a tool call) are kept here by lexer state, for those ids.
pub(crate) struct LexerTemplate {
    /// `None` until a finished matcher offers its lexer (the first matcher builds its own).
    lexer: Option<DerivreLexer>,
    states: usize,
    contained: HashMap<(u32, usize), bool>,
    /// Split trie walks at the template's states, shared by the grammar's matchers.
    walks: RwLock<Walks>,
    row0: Mutex<HashMap<lexer::StateId, TokenSet>>,
}

impl LexerTemplate {
    /// A template without a lexer (the first matcher of a grammar builds its own).
    fn empty() -> LexerTemplate {
        LexerTemplate {
            lexer: None,
            states: 0,
            contained: HashMap::new(),
            walks: RwLock::default(),
            row0: Mutex::new(HashMap::new()),
        }
    }
}

/// First-row masks kept per template (16 KiB each with a 128k vocabulary).
const ROW0_MASKS: usize = 64;
/// A finished matcher's lexer with more states than this does not become the grammar's
/// template, so that a long-lived grammar cannot creep up to the lexer's limits.
const TEMPLATE_MAX_STATES: usize = 10_000;
/// A finished matcher's lexer becomes the grammar's template if it knows at least this many
/// states more (each new matcher copies the template: not for every state or two).
const TEMPLATE_MIN_GROWTH: usize = 8;

/// Each compiled grammar's [`LexerTemplate`], by the grammar's address. The `Weak` keeps that
/// address from being reused while the entry exists; entries of dropped grammars are purged
/// when a new one is added.
#[derive(Default)]
pub(crate) struct GrammarLexers(Mutex<HashMap<usize, GrammarLexer>>);

type GrammarLexer = (Weak<CompiledGrammar>, Arc<LexerTemplate>);

impl GrammarLexers {
    /// The grammar's template (without a lexer the first time).
    fn template(&self, grammar: &Arc<CompiledGrammar>) -> Arc<LexerTemplate> {
        let key = Arc::as_ptr(grammar) as usize;
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = map.get(&key) {
            return t.clone();
        }
        let t = Arc::new(LexerTemplate::empty());
        map.retain(|_, (w, _)| w.strong_count() > 0);
        map.insert(key, (Arc::downgrade(grammar), t.clone()));
        t
    }

    /// Drops the grammar's entry (its last matcher is going).
    fn forget(&self, grammar: &Arc<CompiledGrammar>) {
        let key = Arc::as_ptr(grammar) as usize;
        let entry = self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        drop(entry);
    }

    /// A finished matcher's lexer, copied from `from`: the grammar's new template if it
    /// knows clearly more states than the current one (and not too many). The first-row
    /// masks of `from` carry over (the lexer extends `from`'s state numbering), with the
    /// matcher's own ones.
    fn offer(
        &self,
        grammar: &Arc<CompiledGrammar>,
        from: &LexerTemplate,
        lexer: DerivreLexer,
        contained: HashMap<(u32, usize), bool>,
        walks: Walks,
        own_row0: HashMap<lexer::StateId, TokenSet>,
    ) {
        let key = Arc::as_ptr(grammar) as usize;
        let states = lexer::Lexer::num_states(&lexer);
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some((_, cur)) = map.get_mut(&key) else { return };
        if states > TEMPLATE_MAX_STATES || states < cur.states + TEMPLATE_MIN_GROWTH {
            return;
        }
        let mut row0 = from.row0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for (k, v) in own_row0 {
            if row0.len() < ROW0_MASKS {
                row0.insert(k, v);
            }
        }
        *cur = Arc::new(LexerTemplate {
            lexer: Some(lexer),
            states,
            contained,
            walks: RwLock::new(from.walks.read().unwrap_or_else(|e| e.into_inner()).merged(walks)),
            row0: Mutex::new(row0),
        });
    }
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

/// Slicer state of a matcher: on/off, containment answers cached by lexer state and slice,
/// counters.
#[derive(Clone, Default)]
struct Slicing {
    on: bool,
    cache: HashMap<(u32, usize), bool>,
    /// Slices proven in part (by first character) at a lexer state; `None`: not that way.
    parts: HashMap<(u32, usize), Option<Arc<PartProof>>>,
    /// Whether the state after a first character contains a slice's tail query, keyed by
    /// (state, 2 × slice + 1 for the cheap check's answer).
    tails: HashMap<(u32, usize), bool>,
    /// The shared lexer's split walks, while swapped in.
    walks: Walks,
    /// Trie walks replayed from a split walk.
    split: u64,
    partial: u64,
    applied: u64,
    walked: u64,
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
        let opts = grammar.parser_options(shared.tokenizer.vocab().eos_tokens().to_vec());
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
        Ok(Matcher {
            shared,
            grammar: Some(grammar),
            backend: Backend::Earley(Box::new(parser)),
            error: None,
            stop: StopReason::NotStopped,
            tokens: Vec::new(),
            max_tokens: None,
            slicing,
            lexer: Some(Arc::new(Mutex::new(lexer))),
            template: Some(template),
            row0_own: HashMap::new(),
            skip_row0: false,
            last_mask: None,
            mask_cache_hits: 0,
        })
    }

    pub(crate) fn new_token_dfa(shared: Arc<Shared>, index: Arc<index::Index>) -> Matcher {
        Matcher {
            shared,
            grammar: None,
            backend: Backend::TokenDfa(index::Guide::new(index, usize::MAX)),
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
            mask_cache_hits: 0,
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
            if sticky || e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Limit {
                self.error = Some(e.clone());
                self.stop = StopReason::Error;
            }
        }
        r
    }

    fn vocab_size(&self) -> usize {
        self.shared.trie.vocab_size()
    }

    fn eos_only(&self) -> TokenSet {
        let mut m = TokenSet::new(self.vocab_size());
        for &t in self.shared.tokenizer.vocab().eos_tokens() {
            m.insert(t);
        }
        m
    }

    /// The set of tokens allowed next (EOS iff the grammar is accepting; after a stop,
    /// only EOS).
    pub fn compute_mask(&mut self) -> Result<TokenSet, Error> {
        // A repeated position is answered from the last mask without taking the shared
        // lexer's lock (matchers of one grammar on several threads do not wait for it).
        if let Some(mask) = self.cached_mask() {
            return Ok(mask.clone());
        }
        match self.compute_fresh()? {
            Some(mask) => Ok(mask),
            None => Ok(self.kept_mask().clone()),
        }
    }

    /// The last mask, where [`Matcher::compute_fresh`] kept the mask it computed.
    fn kept_mask(&self) -> &TokenSet {
        &self.last_mask.as_ref().expect("kept by compute_fresh").1
    }

    /// Computes the mask at a position not answered from the last mask: `None` when the
    /// mask is kept as the last mask (the Earley engine; the caller copies it from there,
    /// the only copy), `Some` otherwise.
    fn compute_fresh(&mut self) -> Result<Option<TokenSet>, Error> {
        self.guarded(true, |m| {
            if m.stop != StopReason::NotStopped {
                return Ok(Some(m.eos_only()));
            }
            match &mut m.backend {
                Backend::Earley(p) => {
                    let key = p.position_key();
                    // First row: a state the template knows is shared across the grammar's
                    // matchers, a newer one kept for the next template.
                    let template = m.template.as_ref().filter(|_| key.0 == 0);
                    let known = template.filter(|t| key.1.as_usize() < t.states);
                    let skip = std::mem::take(&mut m.skip_row0) || m.shared.plain;
                    if key.0 == 0 && !skip {
                        let hit = match known {
                            Some(t) => t
                                .row0
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .get(&key.1)
                                .cloned(),
                            None => m.row0_own.get(&key.1).cloned(),
                        };
                        if let Some(mask) = hit {
                            m.mask_cache_hits += 1;
                            m.last_mask = Some((key, mask));
                            return Ok(None);
                        }
                    }
                    // The last mask's buffer is reused (one 16 KB allocation and free less
                    // per mask at 128k tokens: a large allocation also consolidates
                    // glibc's fast bins).
                    let scratch = m.last_mask.take().map(|(_, s)| s);
                    let mask = match (&m.shared.slices, m.slicing.on) {
                        (Some(slices), true) => sliced_mask(
                            p,
                            slices,
                            &m.shared.trie,
                            &mut m.slicing,
                            m.template.as_deref(),
                            scratch,
                        )?,
                        _ => p.compute_mask(&m.shared.trie)?,
                    };
                    if mask.is_empty() {
                        // Never an empty mask: a server cannot sample from one. The sticky
                        // error state allows EOS only.
                        return Err(Error::new(
                            ErrorKind::Grammar,
                            "no token can come next: the grammar matches nothing from here \
                             (a regex that matches nothing, or constraints that contradict \
                             each other)",
                        ));
                    }
                    if let Some(t) = known {
                        let mut r = t.row0.lock().unwrap_or_else(|e| e.into_inner());
                        if r.len() < ROW0_MASKS {
                            r.insert(key.1, mask.clone());
                        }
                    } else if template.is_some() && m.row0_own.len() < ROW0_MASKS {
                        m.row0_own.insert(key.1, mask.clone());
                    }
                    m.last_mask = Some((key, mask));
                    Ok(None)
                }
                Backend::TokenDfa(g) => g
                    .index()
                    .mask(g.get_state())
                    .map(Some)
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string())),
            }
        })
    }

    /// [`Matcher::compute_mask`] into a caller's buffer of at least `(vocab + 31) / 32` words
    /// (a repeated position is copied from the last mask, with no allocation).
    pub fn compute_mask_into(&mut self, out: &mut [u32]) -> Result<(), Error> {
        if self.cached_mask_into(out) {
            return Ok(());
        }
        let fresh = self.compute_fresh()?;
        let mask = match &fresh {
            Some(mask) => mask,
            None => self.kept_mask(),
        };
        mask.write_to(out).map_err(|e| Error::new(ErrorKind::Usage, e.to_string()))
    }

    /// Writes the mask into `out` if it is the last one computed (the same parser position,
    /// no error, not stopped): a copy, no computation; `false` otherwise (`out` untouched).
    /// For callers that do cheap work inline and hand the rest to another thread.
    pub fn cached_mask_into(&mut self, out: &mut [u32]) -> bool {
        self.cached_mask().is_some_and(|mask| mask.write_to(out).is_ok())
    }

    /// The last mask, if the parser is still at its position (no error, not stopped);
    /// counted as a cache hit.
    fn cached_mask(&mut self) -> Option<&TokenSet> {
        if self.error.is_some() || self.stop != StopReason::NotStopped || self.shared.plain {
            return None;
        }
        let (Backend::Earley(p), Some((k, mask))) = (&self.backend, &self.last_mask) else {
            return None;
        };
        if *k != p.position_key() {
            return None;
        }
        self.mask_cache_hits += 1;
        Some(mask)
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
        let is_eos = vocab.eos_tokens().contains(&t);
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
        self.guarded(true, |m| {
            match &mut m.backend {
                Backend::Earley(p) => p.rollback(n)?,
                Backend::TokenDfa(g) => g
                    .rollback_state(n)
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?,
            }
            m.tokens.truncate(m.tokens.len() - n);
            let eos = m.shared.tokenizer.vocab().eos_tokens();
            m.stop = if m.tokens.last().is_some_and(|t| eos.contains(t)) {
                StopReason::EndOfSequence
            } else if m.max_tokens.is_some_and(|k| m.tokens.len() >= k) {
                StopReason::MaxTokens
            } else {
                StopReason::NotStopped
            };
            Ok(())
        })
    }

    /// Masks for speculative decoding along a draft of k tokens, in one call: the mask now,
    /// then the mask after each draft token, stopping after the first draft token the
    /// previous mask does not allow (so k+1 masks when the whole draft is allowed, fewer
    /// otherwise). The matcher's state is unchanged afterwards (a refused draft token is
    /// never consumed, so it does not put the matcher in its error state).
    pub fn compute_masks_for_draft(&mut self, draft: &[TokenId]) -> Result<Vec<TokenSet>, Error> {
        let mut out = Vec::with_capacity(draft.len() + 1);
        let base = self.tokens.len();
        let r = (|| {
            out.push(self.compute_mask()?);
            for &t in draft {
                if !out.last().is_some_and(|m: &TokenSet| m.contains(t)) {
                    break;
                }
                self.consume_token(t)?;
                out.push(self.compute_mask()?);
            }
            Ok(())
        })();
        if self.error.is_none() {
            self.rollback(self.tokens.len() - base)?;
        }
        r.map(|()| out)
    }

    /// Masks for a draft tree: `tokens[i]` follows node `parents[i]` (`None`: the current
    /// position; a parent comes before its children). Returns the mask now, then for each
    /// node the mask after its path, or `None` when a token on its path is not allowed.
    /// Nodes are visited in order, rolling back only to the common prefix of consecutive
    /// paths. The matcher's state is unchanged afterwards.
    pub fn compute_masks_for_draft_tree(
        &mut self,
        tokens: &[TokenId],
        parents: &[Option<usize>],
    ) -> Result<(TokenSet, Vec<Option<TokenSet>>), Error> {
        if tokens.len() != parents.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("{} draft tokens but {} parent indices", tokens.len(), parents.len()),
            ));
        }
        if let Some(i) = parents.iter().enumerate().position(|(i, p)| p.is_some_and(|p| p >= i)) {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("draft node {i}: its parent must come before it"),
            ));
        }
        let root = self.compute_mask()?;
        let eos = self.shared.tokenizer.vocab().eos_tokens().to_vec();
        let mut masks: Vec<Option<TokenSet>> = Vec::with_capacity(tokens.len());
        // Nodes at or below an EOS: the sequence has ended there, only EOS may follow (not
        // consumed: nothing changes after EOS).
        let mut ended = vec![false; tokens.len()];
        // The nodes whose tokens are consumed now, root first.
        let mut path: Vec<usize> = Vec::new();
        let r = (|| {
            for i in 0..tokens.len() {
                let parent_mask = match parents[i] {
                    None => Some(&root),
                    Some(p) => masks[p].as_ref(),
                };
                if !parent_mask.is_some_and(|m| m.contains(tokens[i])) {
                    masks.push(None);
                    continue;
                }
                if eos.contains(&tokens[i]) || parents[i].is_some_and(|p| ended[p]) {
                    ended[i] = true;
                    masks.push(Some(self.eos_only()));
                    continue;
                }
                // The parent's path: rewind `path` to it, then take this token.
                let mut want = Vec::new();
                let mut n = parents[i];
                while let Some(p) = n {
                    want.push(p);
                    n = parents[p];
                }
                want.reverse();
                let common = path.iter().zip(&want).take_while(|(a, b)| a == b).count();
                self.rollback(path.len() - common)?;
                path.truncate(common);
                for &p in &want[common..] {
                    self.consume_token(tokens[p])?;
                    path.push(p);
                }
                self.consume_token(tokens[i])?;
                path.push(i);
                masks.push(Some(self.compute_mask()?));
            }
            Ok(())
        })();
        if self.error.is_none() {
            self.rollback(path.len())?;
        }
        r.map(|()| (root, masks))
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
        let tok = &self.shared.tokenizer;
        // Without a canonical tokenizer (a vocabulary given as bytes), longest match.
        let mut toks = if tok.has_canonical() {
            tok.tokenize_bytes(&bytes).map_err(Error::from)?
        } else {
            tok.tokenize_greedy(&bytes).map_err(Error::from)?
        };
        if let Some(&last) = toks.last() {
            if self.shared.trie.has_extensions(self.shared.tokenizer.vocab().token_bytes(last)) {
                toks.pop();
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
        let f = crate::ParserFactory { shared: self.shared.clone() }.plain();
        let mut m = f.matcher_for(g)?;
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

/// Most minority states (after a first character) a partial proof asks about.
const MAX_MINOR_STATES: usize = 4;

/// A slice proven in part at a lexer state: its tokens are allowed except those under the
/// first-character nodes `dead` (none allowed) and `walk` (walked); indices into
/// [`slicer::Slice::first_chars`].
#[derive(Debug)]
struct PartProof {
    dead: Vec<u32>,
    walk: Vec<u32>,
}

/// Proves a slice by first character, where its ASCII first characters lead to two to
/// [`MAX_MINOR_STATES`]` + 1` live lexer states (else `None`: the caller asks about the
/// whole slice). The state most of the slice's trie leads to must hold at least half of it
/// and contain the slice's tail query (what follows the first character; one check,
/// cached); the other states are asked cheaply (no new lexer states), and if all of them
/// pass, `None` too (the whole slice is then likely contained). In the proof, tokens whose
/// first character leads to a passing state are allowed; those whose first character kills
/// the lexeme are not (unless the lexeme may end before it: then they are walked); the
/// others are walked.
fn part_proof(
    lx: &mut DerivreLexer,
    state: lexer::StateId,
    slice_idx: usize,
    slice: &slicer::Slice,
    tails: &mut HashMap<(u32, usize), bool>,
) -> Option<PartProof> {
    use lexer::{Lexer, StateId};
    let trie = slice.trie();
    let fcs = slice.first_chars();
    let ascii = fcs.partition_point(|fc| fc.bytes[0].is_ascii());
    // The ASCII first characters' states and the trie nodes below each (no allocation, no
    // trie access: this runs at every new lexer state for every large slice).
    let mut groups = [(StateId::DEAD, 0usize); 1 + MAX_MINOR_STATES];
    let mut ngroups = 0;
    let mut next_of = [StateId::DEAD; 128];
    for (i, fc) in fcs[..ascii].iter().enumerate() {
        let next = lx.advance(state, fc.bytes[0]).ok()?;
        next_of[i] = next;
        if next != StateId::DEAD {
            match groups[..ngroups].iter_mut().find(|(s, _)| *s == next) {
                Some(g) => g.1 += fc.size as usize,
                None if ngroups == 1 + MAX_MINOR_STATES => return None,
                None => {
                    groups[ngroups] = (next, fc.size as usize);
                    ngroups += 1;
                }
            }
        }
    }
    let groups = &groups[..ngroups];
    if groups.len() < 2 {
        // One state: the whole slice is asked. Many: not a delimiter's prefix in text.
        return None;
    }
    let &(major, nodes) = groups.iter().max_by_key(|g| g.1)?;
    if nodes * 2 < trie.num_nodes() || lx.flags(major).must_end() {
        return None;
    }
    let ok = match slice.tail_query() {
        None => true,
        Some(q) => *tails
            .entry((major.0, 2 * slice_idx))
            .or_insert_with(|| lx.check_prefixes(major, q) == lexer::Containment::Contained),
    };
    if !ok {
        return None;
    }
    // The other states are asked too, cheaply (no new lexer states: a delimiter's next
    // character fails fast, a state that decoding built already may contain the tail).
    let mut good = vec![major];
    for &(g, _) in groups.iter().filter(|g| g.0 != major) {
        let ok = !lx.flags(g).must_end()
            && match slice.tail_query() {
                None => true,
                Some(q) => *tails.entry((g.0, 2 * slice_idx + 1)).or_insert_with(|| {
                    lx.check_prefixes_cheap(g, q) == lexer::Containment::Contained
                }),
            };
        if ok {
            good.push(g);
        }
    }
    if good.len() == groups.len() {
        // Every ASCII first character is fine: the whole slice is asked (likely contained,
        // and cheaper to say so than to go through every first character).
        return None;
    }
    // Where the lexeme may end here, a byte that cannot extend it may start the next one.
    let may_end = lx.flags(state).is_accepting();
    let (mut dead, mut walk) = (Vec::new(), Vec::new());
    for (i, fc) in fcs.iter().enumerate() {
        let next = match (i < ascii).then(|| next_of[i]) {
            Some(n) => n,
            None => {
                let mut n = state;
                for &b in &fc.bytes[..fc.len as usize] {
                    n = lx.advance(n, b).ok()?;
                    if n == StateId::DEAD {
                        break;
                    }
                }
                n
            }
        };
        // (An entry cut short of a character, `len` 1 on a non-ASCII byte, is walked.)
        let whole_char = fc.len > 1 || fc.bytes[0].is_ascii();
        if next == StateId::DEAD && !may_end {
            dead.push(i as u32);
        } else if !good.contains(&next) || !whole_char {
            walk.push(i as u32);
        }
    }
    Some(PartProof { dead, walk })
}

/// The key of a walk over the whole trie in [`Walks`] (slices use their index, the rest of
/// the vocabulary the number of slices).
const FULL_TRIE: u32 = u32::MAX;
/// A split walk is kept when the lexer decided at least this many nodes (smaller walks cost
/// less than the lookup and the replay's setup save). 256 before walks were split on a
/// state's first mask; with 64 (every 20th MaskBench file) later instances' p50 1.86 →
/// 1.71 µs and first instances' mean 20.0 → 19.6 µs; 16 measured the same as 64.
const WALK_MIN_DECIDED: usize = 64;
/// The memory the split walks of a lexer, or of a template, may take (beyond it, walks are
/// not kept; `Plain` marks, at most one per lexer state and trie, are not counted).
const WALK_MAX_BYTES: usize = 32 << 20;

/// The trie walks of a lexer split where the lexer decides alone ([`Parser::split_walk`]),
/// by (lexer state, trie): a mask adds the tokens the lexer decided and walks with the
/// parser only the subtrees where a lexeme ends (or a transition was not decided). At a
/// JSON string's start (any value), the lexer decides all but ~250 of the ~4,000 nodes the
/// slices leave to walk: the places where the string ends. A state's first walk splits
/// (building the transitions it meets: the same the walk with the parser would build, at
/// less cost per node) and later masks there replay the split. Splits at the template's
/// states are shared by the grammar's matchers (a lock per walk); the rest (a lexer's own
/// states) stays with the lexer and its clones.
#[derive(Clone, Default)]
struct Walks {
    map: HashMap<(u32, u32), Walk>,
    /// Memory of the split walks, in bytes (at most [`WALK_MAX_BYTES`]).
    bytes: usize,
}

#[derive(Clone)]
enum Walk {
    /// Split by this lexer (or the template's), not worth keeping: walked whole.
    Plain,
    Split(Arc<toktrie::SplitWalk>),
}

impl Walks {
    /// These walks and those of a lexer copied from their template, for the lexer as the
    /// next template (its split walks as memory allows, and its `Plain` marks).
    fn merged(&self, own: Walks) -> Walks {
        let mut m = self.clone();
        for (key, w) in own.map {
            match w {
                Walk::Split(w) => {
                    m.keep_arc(key, w);
                }
                w => {
                    m.map.insert(key, w);
                }
            }
        }
        m
    }

    /// Keeps a split walk if it is worth it (and memory allows).
    fn keep(&mut self, key: (u32, u32), w: toktrie::SplitWalk) -> bool {
        w.decided() >= WALK_MIN_DECIDED && self.keep_arc(key, Arc::new(w))
    }

    fn keep_arc(&mut self, key: (u32, u32), w: Arc<toktrie::SplitWalk>) -> bool {
        let bytes = w.num_bytes();
        let keep = self.bytes + bytes <= WALK_MAX_BYTES;
        if keep {
            self.bytes += bytes;
            self.map.insert(key, Walk::Split(w));
        }
        keep
    }
}

/// Walks `trie` (`id` in [`Walks`]) from the parser's position into `mask`, from a split
/// walk where the lexer state has one: the template's walks where it knows the state (split
/// through its states only, whose numbers every lexer copied from it shares), else `own`.
fn walk_trie(
    p: &mut Parser<DerivreLexer>,
    trie: &toktrie::TokTrie,
    id: u32,
    own: &mut Walks,
    template: Option<&LexerTemplate>,
    mask: &mut TokenSet,
) -> Result<bool, Error> {
    let key = (p.current_lexer_state().0, id);
    let shared = template.filter(|t| (key.0 as usize) < t.states);
    let limit = shared.map_or(u32::MAX, |t| t.states as u32);
    let shared = shared.map(|t| &t.walks);
    let found = shared
        .and_then(|t| t.read().unwrap_or_else(|e| e.into_inner()).map.get(&key).cloned())
        .or_else(|| own.map.get(&key).cloned());
    let w = match found {
        Some(Walk::Split(w)) => return Ok(p.add_bias_split(trie, &w, mask).map(|()| true)?),
        Some(Walk::Plain) => return Ok(p.add_bias(trie, mask).map(|()| false)?),
        // The state's first walk in this lexer (or in the template's): split, and kept.
        None => p.split_walk(trie, limit),
    };
    p.add_bias_split(trie, &w, mask)?;
    let kept = match shared {
        Some(t) => t.write().unwrap_or_else(|e| e.into_inner()).keep(key, w),
        None => own.keep(key, w),
    };
    if !kept {
        own.map.insert(key, Walk::Plain);
    }
    Ok(true)
}

/// The mask as the union of the slices: a slice the lexer proves allowed is OR-ed in whole,
/// the others (and the rest, with special tokens) are walked.
fn sliced_mask(
    p: &mut Parser<DerivreLexer>,
    slices: &slicer::Slices,
    full: &toktrie::TokTrie,
    st: &mut Slicing,
    template: Option<&LexerTemplate>,
    scratch: Option<TokenSet>,
) -> Result<TokenSet, Error> {
    use lexer::Lexer;
    let n = slices.rest().vocab_size();
    // `scratch` (a buffer of the vocabulary's width) holds the mask, whatever it held.
    let scratch = scratch.filter(|s| s.universe() == n);
    let state = p.current_lexer_state();
    let mut contained: Vec<bool> = Vec::with_capacity(slices.slices().len());
    let mut parts: Vec<Option<Arc<PartProof>>> = Vec::with_capacity(slices.slices().len());
    // Where no lazy lexeme may match, the whole check of a large slice comes first: it
    // costs less than a proof by first character and nearly always decides (at the states
    // of MaskBench's first instances where every first character passed, the whole slice
    // was contained every time: 14,872 of 14,872).
    let whole_first = !p.lexer_mut().lazy_possible(state);
    for (i, slice) in slices.slices().iter().enumerate() {
        let whole = |p: &mut Parser<DerivreLexer>, st: &mut Slicing, contained: &[bool]| {
            // A slice whose necessary condition failed is not asked (see `Slice::requires`).
            slice.requires().is_none_or(|r| contained[r])
                && *st.cache.entry((state.0, i)).or_insert_with(|| {
                    let lx = p.lexer_mut();
                    let c = if slice.is_small() {
                        lx.check_prefixes_cheap(state, slice.query())
                    } else {
                        lx.check_prefixes(state, slice.query())
                    };
                    c == lexer::Containment::Contained
                })
        };
        let asked_first = whole_first && !slice.is_small();
        if asked_first && whole(p, st, &contained) {
            contained.push(true);
            parts.push(None);
            continue;
        }
        // A large slice whose first characters lead to different states (free text right
        // after `<` of a trigger) is proven by first character: one containment check
        // where the whole check would explore the delimiter and fail.
        if !slice.is_small() {
            let part = st
                .parts
                .entry((state.0, i))
                .or_insert_with(|| {
                    part_proof(p.lexer_mut(), state, i, slice, &mut st.tails).map(Arc::new)
                })
                .clone();
            if part.is_some() {
                contained.push(false);
                parts.push(part);
                continue;
            }
        }
        // Asked first above: not contained (no second lookup).
        let c = !asked_first && whole(p, st, &contained);
        contained.push(c);
        parts.push(None);
    }
    if !contained.contains(&true) && parts.iter().all(Option::is_none) {
        // Nothing to skip: one walk of the whole trie is cheaper than one per slice.
        st.walked += 1;
        let mut mask = match scratch {
            Some(mut s) => {
                s.clear();
                s
            }
            None => TokenSet::new(n),
        };
        st.split += walk_trie(p, full, FULL_TRIE, &mut st.walks, template, &mut mask)? as u64;
        p.add_token_terminals(&mut mask)?;
        return Ok(mask);
    }
    // The slices allowed whole, in one copy of their union.
    let mut mask = match scratch {
        Some(mut s) => {
            slices.union_into(&contained, &mut s);
            s
        }
        None => slices.union_of(&contained),
    };
    for (i, ((slice, &contained), part)) in
        slices.slices().iter().zip(&contained).zip(&parts).enumerate()
    {
        if contained {
            // In `mask` from the start.
            st.applied += 1;
        } else if let Some(part) = part {
            let fcs = slice.first_chars();
            let walk: Vec<&toktrie::FirstChar> =
                part.walk.iter().map(|&i| &fcs[i as usize]).collect();
            let gone: Vec<&toktrie::FirstChar> =
                part.dead.iter().map(|&i| &fcs[i as usize]).chain(walk.iter().copied()).collect();
            mask.union(slice.mask());
            slice.trie().remove_subtrees(&mut mask, &gone);
            p.add_bias_subtrees(slice.trie(), &walk, &mut mask)?;
            st.applied += 1;
            st.partial += 1;
        } else {
            st.split +=
                walk_trie(p, slice.trie(), i as u32, &mut st.walks, template, &mut mask)? as u64;
            st.walked += 1;
        }
    }
    let rest = slices.slices().len() as u32;
    st.split += walk_trie(p, slices.rest(), rest, &mut st.walks, template, &mut mask)? as u64;
    p.add_token_terminals(&mut mask)?;
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GrammarSource, ParserFactory};

    /// The states of the grammar's current template (0 before one).
    fn template_states(f: &ParserFactory, g: &Arc<CompiledGrammar>) -> usize {
        let map = f.shared.lexers.0.lock().unwrap();
        map.get(&(Arc::as_ptr(g) as usize)).map_or(0, |(_, t)| t.states)
    }

    fn decode(f: &ParserFactory, g: &Arc<CompiledGrammar>, text: &str) -> usize {
        let mut m = f.matcher_for(g.clone()).unwrap();
        for t in f.tokenizer().tokenize(text).unwrap() {
            assert!(m.compute_mask().unwrap().contains(t), "{text:?}: token refused");
            m.consume_token(t).unwrap();
        }
        m.lexer_states()
    }

    /// The compile of a small tool set decodes every tool's call (a first call of any tool
    /// meets no new lexer state); a large one decodes only the first.
    #[test]
    fn a_small_tool_set_is_warmed_for_every_tool() {
        let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
        let tags = |n: usize| -> String {
            let tags: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        r#"{{"type": "tag", "begin": "<f=t{i}>", "end": "</f>", "content":
                        {{"type": "json_schema", "json_schema": {{"type": "object",
                        "properties": {{"zq{i}xw": {{"type": "string"}}}},
                        "required": ["zq{i}xw"]}}}}}}"#
                    )
                })
                .collect();
            format!(
                r#"{{"type": "structural_tag", "format": {{"type": "triggered_tags",
                "triggers": ["<f="], "tags": [{}]}}}}"#,
                tags.join(",")
            )
        };
        // States a first call of the third tool learns.
        let learned = |n: usize| {
            let g = f.compile(&GrammarSource::StructuralTag(tags(n))).unwrap();
            let before = template_states(&f, &g);
            decode(&f, &g, r#"Sure. <f=t2>{"zq2xw": "hello"}</f> Done."#) - before
        };
        let (small, large) = (learned(3), learned(crate::factory::WARM_UP_ALL_TAGS + 8));
        assert!(small == 0 && large >= 4, "{small} / {large}");
    }

    /// A finished matcher that learned a few states more than the template (each later
    /// matcher would derive them again) becomes the template, however large it is.
    #[test]
    fn a_few_new_states_renew_the_template() {
        let f = ParserFactory::from_tokenizer_name("o200k").unwrap();
        // Words with few common prefixes: each is a few lexer states of its own.
        let mut x = 12345u32;
        let mut letter = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (b'a' + (x >> 16) as u8 % 26) as char
        };
        let words: Vec<String> = (0..400)
            .map(|_| format!("\"{}\"", (0..7).map(|_| letter()).collect::<String>()))
            .collect();
        let schema = format!(r#"{{"type": "array", "items": {{"enum": [{}]}}}}"#, words.join(","));
        let g = f.compile(&GrammarSource::JsonSchema(schema)).unwrap();
        let long = format!("[{}]", words[..200].join(","));
        let big = decode(&f, &g, &long);
        assert_eq!(template_states(&f, &g), big);
        let short = format!("[{}]", words[300..330].join(","));
        let more = decode(&f, &g, &short);
        assert!(more >= big + TEMPLATE_MIN_GROWTH && more < big + big / 8, "{big} -> {more}");
        assert_eq!(template_states(&f, &g), more, "{big} -> {more}");
    }
}
