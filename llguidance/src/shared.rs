//! What every matcher of a tokenizer shares ([`Shared`]: vocabulary, trie, slices, limits)
//! and the policy by which matchers of one compiled grammar share a lexer: a finished
//! matcher's lexer becomes the grammar's template ([`LexerTemplate`]) when it learned
//! enough new states, and later matchers start from a copy of it, with its first-row masks
//! and split walks ([`GrammarLexers`]).

use hashbrown::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};

use grammars::{CompileLimits, CompiledGrammar};
use lexer::DerivreLexer;
use toktrie::{TokTrie, TokenSet, Tokenizer};

use crate::slicing::Walks;

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

/// Built once per tokenizer, shared by its factory and every matcher.
pub(crate) struct Shared {
    pub(crate) tokenizer: Tokenizer,
    pub(crate) trie: TokTrie,
    pub(crate) limits: CompileLimits,
    pub(crate) engine: Engine,
    /// Vocabulary slices for dense masks (`None`: slicing off).
    pub(crate) slices: Option<Arc<slicer::Slices>>,
    /// Each compiled grammar's lexer template and first-row masks (see
    /// [`ParserFactory::matcher_for`]).
    pub(crate) lexers: GrammarLexers,
    /// The plain computation ([`ParserFactory::plain`]): no proof, no shortcut, no cache.
    pub(crate) plain: bool,
    /// Tokenizations of forced bytes (the same keys and literals come back at every
    /// sequence of a grammar; one costs ~8 µs with a HF tokenizer). At most
    /// [`FORCED_MEMO`] entries, cleared when full.
    pub(crate) forced_memo: Mutex<HashMap<Vec<u8>, Arc<[toktrie::TokenId]>>>,
    /// Time a compile may take (front end, grammar compiler, lexer construction) before it
    /// fails ([`crate::ParserFactory::with_compile_deadline`]).
    pub(crate) compile_deadline: Option<std::time::Duration>,
    /// The vocabulary split by token length ([`Shared::length_splits`]), built on first use.
    pub(crate) length_splits: Arc<std::sync::OnceLock<Vec<slicer::LengthSplit>>>,
    /// The vocabulary read by each character automaton of a run near a bound
    /// ([`Shared::run_table`]), at most [`RUN_TABLES`], each with the tick of its last use
    /// (the clock is the second field).
    pub(crate) run_tables: Arc<Mutex<RunTables>>,
    /// The vocabulary's iteration limits for each repeat body's automaton
    /// ([`Shared::iteration_limits`]), at most [`ITER_LIMITS`], cleared when full.
    pub(crate) iter_limits: Arc<Mutex<HashMap<lexer::IterDfa, Arc<[u32]>>>>,
    /// Compiled grammars by source text ([`crate::grammar_cache`]).
    pub(crate) grammar_cache: crate::grammar_cache::GrammarCache,
}

/// The lengths (bytes) the vocabulary is split at for masks near a bound, largest first.
const SPLIT_LENGTHS: [u32; 4] = [64, 32, 16, 8];

/// Entries of [`Shared::forced_memo`].
const FORCED_MEMO: usize = 4096;

/// Entries of [`Shared::run_tables`] (each ~0.6 MB at a 128k vocabulary); the least recently
/// used goes when full. MaskBench's 7,959 schemas meet 30 automata: clearing all 16 when full
/// rebuilt tables 52 times (1-2.6 ms each, in the middle of a value).
const RUN_TABLES: usize = 16;

/// Entries of [`Shared::iter_limits`] (each ~0.5 KB of limits and its automaton's table,
/// at most 16 KB).
const ITER_LIMITS: usize = 256;

/// [`Shared::run_tables`]: the tables with their last use, and the use clock.
pub(crate) type RunTables = (HashMap<lexer::RunDfa, (Arc<slicer::RunTable>, u64)>, u64);

impl Shared {
    /// The vocabulary split by length at each of [`SPLIT_LENGTHS`] below the longest
    /// token, largest first (built on first use: a mask within the longest token's length
    /// of a bounded repeat's end takes the short tokens' part from a counter twin and
    /// walks only the long trie; see `Matcher::compute_fresh`).
    pub(crate) fn length_splits(&self) -> &[slicer::LengthSplit] {
        self.length_splits.get_or_init(|| {
            let longest = self.trie.max_token_len();
            SPLIT_LENGTHS
                .iter()
                .filter(|&&h| (h as usize) < longest)
                .filter_map(|&h| slicer::LengthSplit::new(self.tokenizer.vocab(), h).ok())
                .collect()
        })
    }

    /// The vocabulary read as characters of `dfa` (built on first use, ~2.5 ms at 128k
    /// tokens; see `slicer::RunTable`).
    pub(crate) fn run_table(&self, dfa: &lexer::RunDfa) -> Arc<slicer::RunTable> {
        if let Some(mut guard) = lexer::lock_cache(&self.run_tables) {
            let (map, clock) = &mut *guard;
            *clock += 1;
            if let Some((t, used)) = map.get_mut(dfa) {
                *used = *clock;
                return t.clone();
            }
        }
        let t = Arc::new(slicer::RunTable::new(self.tokenizer.vocab(), dfa));
        let Some(mut guard) = lexer::lock_cache(&self.run_tables) else { return t };
        let (map, clock) = &mut *guard;
        if map.len() >= RUN_TABLES {
            let oldest = map.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                map.remove(&k);
            }
        }
        map.insert(dfa.clone(), (t.clone(), *clock));
        t
    }

    /// The most iterations of a repeat body (automaton `dfa`) that a token of at most `h`
    /// bytes starts, by `h` (`slicer::iteration_limits`, computed on first use: ~7 ms at
    /// 128k tokens for a word's automaton).
    pub(crate) fn iteration_limits(&self, dfa: &lexer::IterDfa) -> Arc<[u32]> {
        if let Some(l) = lexer::lock_cache(&self.iter_limits).and_then(|m| m.get(dfa).cloned()) {
            return l;
        }
        let l: Arc<[u32]> = slicer::iteration_limits(self.tokenizer.vocab(), dfa).into();
        if let Some(mut map) = lexer::lock_cache(&self.iter_limits) {
            if map.len() >= ITER_LIMITS {
                map.clear();
            }
            map.insert(dfa.clone(), l.clone());
        }
        l
    }

    /// The canonical tokenization of forced bytes (greedy longest match without a canonical
    /// tokenizer), memoized per tokenizer.
    pub(crate) fn tokenize_forced(
        &self,
        bytes: &[u8],
    ) -> Result<Vec<toktrie::TokenId>, crate::Error> {
        if let Some(t) = lexer::lock_cache(&self.forced_memo).and_then(|m| m.get(bytes).cloned()) {
            return Ok(t.to_vec());
        }
        let tok = &self.tokenizer;
        let toks = if tok.has_canonical() {
            tok.tokenize_bytes(bytes).map_err(crate::Error::from)?
        } else {
            tok.tokenize_greedy(bytes).map_err(crate::Error::from)?
        };
        let Some(mut memo) = lexer::lock_cache(&self.forced_memo) else { return Ok(toks) };
        if memo.len() >= FORCED_MEMO {
            memo.clear();
        }
        memo.insert(bytes.to_vec(), toks.clone().into());
        Ok(toks)
    }

    /// The same tokenizer, trie and limits with another engine and slices, no grammar
    /// lexers yet, and `plain` (the soundness oracle's computation) as given.
    pub(crate) fn derived(
        &self,
        engine: Engine,
        slices: Option<Arc<slicer::Slices>>,
        plain: bool,
    ) -> Shared {
        Shared {
            tokenizer: self.tokenizer.clone(),
            trie: self.trie.clone(),
            limits: self.limits.clone(),
            engine,
            slices,
            lexers: Default::default(),
            plain,
            forced_memo: Default::default(),
            compile_deadline: self.compile_deadline,
            length_splits: self.length_splits.clone(),
            run_tables: self.run_tables.clone(),
            iter_limits: self.iter_limits.clone(),
            // Empty: a derived factory may compile differently. The oracle keeps none.
            grammar_cache: crate::grammar_cache::GrammarCache::new(if plain {
                0
            } else {
                self.grammar_cache.capacity()
            }),
        }
    }
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
    pub(crate) lexer: Option<DerivreLexer>,
    pub(crate) states: usize,
    pub(crate) contained: HashMap<(u32, usize), bool>,
    /// Split trie walks at the template's states, shared by the grammar's matchers.
    pub(crate) walks: RwLock<Walks>,
    pub(crate) row0: Mutex<HashMap<lexer::StateId, TokenSet>>,
}

impl LexerTemplate {
    /// A template without a lexer (the first matcher of a grammar builds its own).
    pub(crate) fn empty() -> LexerTemplate {
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
pub(crate) const ROW0_MASKS: usize = 64;
/// A finished matcher's lexer with more states than this does not become the grammar's
/// template, so that a long-lived grammar cannot creep up to the lexer's limits.
const TEMPLATE_MAX_STATES: usize = 10_000;
/// A finished matcher's lexer becomes the grammar's template if it knows at least this many
/// states more (each new matcher copies the template: not for every state or two).
pub(crate) const TEMPLATE_MIN_GROWTH: usize = 8;

/// Each compiled grammar's [`LexerTemplate`], by the grammar's address. The `Weak` keeps that
/// address from being reused while the entry exists; entries of dropped grammars are purged
/// when a new one is added.
#[derive(Default)]
pub(crate) struct GrammarLexers(pub(crate) Mutex<HashMap<usize, GrammarLexer>>);

type GrammarLexer = (Weak<CompiledGrammar>, Arc<LexerTemplate>);

impl GrammarLexers {
    /// The grammar's template (without a lexer the first time).
    pub(crate) fn template(&self, grammar: &Arc<CompiledGrammar>) -> Arc<LexerTemplate> {
        let key = Arc::as_ptr(grammar) as usize;
        // In a forked child with the map held by a thread of the parent: a template of the
        // matcher's own (`lexer::lock_cache`).
        let Some(mut map) = lexer::lock_cache(&self.0) else {
            return Arc::new(LexerTemplate::empty());
        };
        if let Some((_, t)) = map.get(&key) {
            return t.clone();
        }
        let t = Arc::new(LexerTemplate::empty());
        map.retain(|_, (w, _)| w.strong_count() > 0);
        map.insert(key, (Arc::downgrade(grammar), t.clone()));
        t
    }

    /// Drops the grammar's entry (its last matcher is going).
    pub(crate) fn forget(&self, grammar: &Arc<CompiledGrammar>) {
        let key = Arc::as_ptr(grammar) as usize;
        let entry = lexer::lock_cache(&self.0).and_then(|mut m| m.remove(&key));
        drop(entry);
    }

    /// A finished matcher's lexer, copied from `from`: the grammar's new template if it
    /// knows clearly more states than the current one (and not too many). The first-row
    /// masks of `from` carry over (the lexer extends `from`'s state numbering), with the
    /// matcher's own ones.
    pub(crate) fn offer(
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
        let Some(mut map) = lexer::lock_cache(&self.0) else { return };
        let Some((_, cur)) = map.get_mut(&key) else { return };
        if states > TEMPLATE_MAX_STATES || states < cur.states + TEMPLATE_MIN_GROWTH {
            return;
        }
        let Some(mut row0) = lexer::lock_cache(&from.row0).map(|r| r.clone()) else { return };
        for (k, v) in own_row0 {
            if row0.len() < ROW0_MASKS {
                row0.insert(k, v);
            }
        }
        *cur = Arc::new(LexerTemplate {
            lexer: Some(lexer),
            states,
            contained,
            walks: RwLock::new(match lexer::read_cache(&from.walks) {
                Some(w) => w.merged(walks),
                None => walks,
            }),
            row0: Mutex::new(row0),
        });
    }
}
