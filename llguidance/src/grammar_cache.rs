//! Compiled grammars by source text, per factory. vLLM's and SGLang's LLGuidance backends
//! build a matcher per request from the request's grammar string (`LLMatcher(tokenizer,
//! grammar)`, `llg_new_matcher`), and a server sees the same schema or tool set again and
//! again: here the second request of a grammar gets the first one's compiled grammar, and
//! with it the lexer its finished matchers left ([`crate::ParserFactory::matcher_for`]):
//! no compile, and masks as warm as a later instance's. XGrammar keeps compiled grammars
//! the same way (its compiler's cache).
//!
//! Bounded: at most the factory's capacity ([`GRAMMAR_CACHE`] by default, 0 turns it off:
//! [`crate::ParserFactory::with_grammar_cache`]), the least recently used dropped first;
//! sources longer than [`MAX_CACHED_TEXT`] bytes are compiled each time. Only successful
//! compiles are kept (an error, a cancellation or a deadline is met again by the next
//! compile). The key is the source's kind and its exact text; everything else a compile
//! reads (tokenizer, limits, engine, slices) belongs to the factory, and a derived factory
//! starts with an empty cache of its own. The plain factory (the soundness oracle) keeps
//! none.

use std::sync::Mutex;

use crate::LlGuidanceGrammar;

/// Compiled grammars a factory keeps by default.
pub const GRAMMAR_CACHE: usize = 16;
/// Longest source text kept (bytes).
pub const MAX_CACHED_TEXT: usize = 1 << 20;

struct Entry {
    kind: u8,
    text: String,
    value: LlGuidanceGrammar,
    used: u64,
}

/// The cache: a few entries, searched by kind and text (lengths differ first, mostly).
pub(crate) struct GrammarCache {
    capacity: usize,
    inner: Mutex<(Vec<Entry>, u64)>,
}

impl GrammarCache {
    pub(crate) fn new(capacity: usize) -> GrammarCache {
        GrammarCache { capacity, inner: Mutex::new((Vec::new(), 0)) }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The grammar compiled from `text` of kind `kind`, if kept.
    pub(crate) fn get(&self, kind: u8, text: &str) -> Option<LlGuidanceGrammar> {
        if self.capacity == 0 || text.len() > MAX_CACHED_TEXT {
            return None;
        }
        // A lock held by another thread at a fork is skipped (`lexer::lock_cache`).
        let mut guard = lexer::lock_cache(&self.inner)?;
        let (entries, clock) = &mut *guard;
        *clock += 1;
        let e = entries.iter_mut().find(|e| e.kind == kind && e.text == text)?;
        e.used = *clock;
        Some(e.value.clone())
    }

    /// Keeps `value`, compiled from `text` of kind `kind` (the least recently used entry
    /// makes room when full).
    pub(crate) fn put(&self, kind: u8, text: &str, value: &LlGuidanceGrammar) {
        if self.capacity == 0 || text.len() > MAX_CACHED_TEXT {
            return;
        }
        let Some(mut guard) = lexer::lock_cache(&self.inner) else { return };
        let (entries, clock) = &mut *guard;
        *clock += 1;
        let used = *clock;
        // Two threads compiling one new text: the first kept stays.
        if entries.iter().any(|e| e.kind == kind && e.text == text) {
            return;
        }
        if entries.len() >= self.capacity {
            if let Some(i) = (0..entries.len()).min_by_key(|&i| entries[i].used) {
                entries.swap_remove(i);
            }
        }
        entries.push(Entry { kind, text: text.to_string(), value: value.clone(), used });
    }

    /// Grammars kept now.
    pub(crate) fn len(&self) -> usize {
        lexer::lock_cache(&self.inner).map_or(0, |g| g.0.len())
    }
}
