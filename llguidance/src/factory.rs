//! [`ParserFactory`]: one per tokenizer, shared; compiles grammars into matchers.

use std::sync::Arc;

use grammars::ir::GrammarSet;
use grammars::{CompileLimits, CompiledGrammar};
use lexer::interrupt::{scoped, Interrupt};
use toktrie::{TokTrie, Tokenizer};

use crate::cancel::CancellationHandle;
use crate::error::ErrorKind;
use crate::shared::Engine;
pub(crate) use crate::shared::Shared;
use crate::{Error, Matcher};

/// Stack of the thread grammars are compiled on (64 MiB, reserved, not committed).
const COMPILE_STACK_BYTES: usize = 64 << 20;
/// The most tokens [`ParserFactory::warm_up`] decodes in a pass.
const WARM_UP_TOKENS: usize = 96;
/// With fewer tags than this, [`ParserFactory::warm_up`] decodes every tag's call (not only
/// the first): a few lexer states each (~0.8 ms of compile per tag, ~3 µs more per new
/// matcher, which copies them). With more, none but the first: partly warmed sets were tried
/// (the tags in order until the lexer knew 1,500 states), and a tag warmed alone had later
/// decodes of it meet the same cold states (a matcher that learns fewer than
/// `TEMPLATE_MIN_GROWTH` states does not become the template), p99 not better with 100 or
/// 400 tools.
pub(crate) const WARM_UP_ALL_TAGS: usize = 32;
/// The free text [`ParserFactory::warm_up`] writes before a tag's begin (a free-text state
/// after a word is another lexer state than the first).
const WARM_UP_TEXT: &str = "Let me check that. ";

/// The budget of a token DFA build in [`Engine::Auto`]: past it the Earley parser is used.
pub const TOKEN_DFA_BUDGET: std::time::Duration = std::time::Duration::from_millis(200);

fn token_dfa_config() -> index::Config {
    // The byte DFA is bounded too: regex-automata's determinization does not watch the
    // clock, and 64 MiB of states take ~2 s for (a|b)*a(a|b){30}; 4 MiB bail out in ~0.1 s.
    index::Config::new().max_states(20_000).max_time(Some(TOKEN_DFA_BUDGET)).dfa_size_limit(4 << 20)
}

/// Whether a tokenizer name given as on the `llg` command line is meant as a file path.
fn looks_like_path(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    name.contains(['/', '\\'])
        || [".json", ".tiktoken", ".model"].iter().any(|ext| lower.ends_with(ext))
}

/// A compiled LLGuidance grammar string: the grammar, its `max_tokens`, and the warnings of
/// JSON Schema compilation ([`ParserFactory::compile_llguidance`]).
pub type LlGuidanceGrammar = (Arc<CompiledGrammar>, Option<usize>, Vec<String>);

/// Where a grammar comes from.
#[derive(Clone, Debug)]
pub enum GrammarSource {
    /// LLGuidance Lark dialect.
    Lark(String),
    /// A JSON Schema (text).
    JsonSchema(String),
    /// A regex, anchored at both ends.
    Regex(String),
    /// llama.cpp GBNF.
    Gbnf(String),
    /// A saved grammar IR (JSON).
    Ir(String),
    /// XGrammar's structural tag (JSON): `{"type": "structural_tag", "format": {...}}` or
    /// the legacy `structures` + `triggers` form.
    StructuralTag(String),
    /// LLGuidance's grammar string: its top-level grammar JSON (`{"grammars": [...],
    /// "max_tokens": n}`, [`grammars::top_level`]) when it starts with `{`, else Lark.
    LlGuidance(String),
}

/// The grammar cache's kind of LLGuidance's grammar string compiled with its `max_tokens`
/// ([`ParserFactory::compile_llguidance`]; [`ParserFactory::compile`] keeps none).
const LLGUIDANCE_KIND: u8 = 7;

impl GrammarSource {
    /// The variant (a small number) and the text: the grammar cache's key.
    fn kind_and_text(&self) -> (u8, &str) {
        match self {
            GrammarSource::Lark(t) => (0, t),
            GrammarSource::JsonSchema(t) => (1, t),
            GrammarSource::Regex(t) => (2, t),
            GrammarSource::Gbnf(t) => (3, t),
            GrammarSource::Ir(t) => (4, t),
            GrammarSource::StructuralTag(t) => (5, t),
            GrammarSource::LlGuidance(t) => (6, t),
        }
    }

    /// The source for a file name's extension (`.lark`, `.json` = JSON Schema, `.regex`,
    /// `.gbnf`, `.ir` / `.ir.json` = IR) or an explicit format name.
    pub fn from_format(format: &str, text: String) -> Result<GrammarSource, Error> {
        Ok(match format {
            "lark" => GrammarSource::Lark(text),
            "json" | "json_schema" | "jsonschema" => GrammarSource::JsonSchema(text),
            "regex" | "re" => GrammarSource::Regex(text),
            "gbnf" => GrammarSource::Gbnf(text),
            "ir" => GrammarSource::Ir(text),
            "structural_tag" | "structural-tag" => GrammarSource::StructuralTag(text),
            "llguidance" => GrammarSource::LlGuidance(text),
            f => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!(
                        "unknown grammar format {f:?} (lark, json, regex, gbnf, ir, structural_tag, llguidance)"
                    ),
                ))
            }
        })
    }

    /// The format implied by a file name.
    pub fn format_of_path(path: &str) -> Option<&'static str> {
        let p = path.to_ascii_lowercase();
        if p.ends_with(".ir.json") || p.ends_with(".ir") {
            Some("ir")
        } else if p.ends_with(".lark") {
            Some("lark")
        } else if p.ends_with(".json") {
            Some("json")
        } else if p.ends_with(".regex") || p.ends_with(".re") {
            Some("regex")
        } else if p.ends_with(".gbnf") {
            Some("gbnf")
        } else {
            None
        }
    }

    /// Parses the source into the grammar IR.
    pub fn to_ir(&self) -> Result<GrammarSet, Error> {
        self.to_ir_with_warnings().map(|(set, _)| set)
    }

    /// Parses the source into the grammar IR, with the front end's warnings (a JSON
    /// Schema's unknown formats, what `lenient` ignored), one line each.
    pub fn to_ir_with_warnings(&self) -> Result<(GrammarSet, Vec<String>), Error> {
        let set = match self {
            GrammarSource::Lark(s) => grammars::lark::parse(s)?,
            GrammarSource::Regex(s) => grammars::regex::parse(s)?,
            GrammarSource::Gbnf(s) => grammars::gbnf::parse(s)?,
            GrammarSource::JsonSchema(s) => return json_schema_ir(s),
            GrammarSource::StructuralTag(s) => grammars::structural_tag::parse(s)?,
            GrammarSource::LlGuidance(s) => {
                let t = on_deep_stack(s, || Ok(grammars::top_level::parse_llguidance(s)?))?;
                return Ok((t.set, t.warnings));
            }
            GrammarSource::Ir(s) => serde_json::from_str(s)
                .map_err(|e| Error::new(ErrorKind::Grammar, format!("bad grammar IR: {e}")))?,
        };
        Ok((set, Vec::new()))
    }
}

/// Built once per tokenizer: the vocabulary and its trie, shared by every matcher
/// (`Send + Sync`; clone it cheaply, it is reference-counted inside).
#[derive(Clone)]
pub struct ParserFactory {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for ParserFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParserFactory({})", self.shared.tokenizer.vocab().name())
    }
}

impl ParserFactory {
    /// A factory for `tokenizer`: builds the token trie.
    pub fn new(tokenizer: Tokenizer) -> Result<ParserFactory, Error> {
        let trie = TokTrie::from_vocab(tokenizer.vocab())?;
        let slices = slicer::Slices::new(tokenizer.vocab(), &slicer::SliceSpec::standard())
            .map_err(|e| Error::new(ErrorKind::Tokenizer, format!("vocabulary slices: {e}")))?;
        let f = ParserFactory {
            shared: Arc::new(Shared {
                tokenizer,
                trie,
                limits: CompileLimits::default(),
                engine: Engine::Auto,
                slices: Some(Arc::new(slices)),
                lexers: Default::default(),
                plain: false,
                forced_memo: Default::default(),
                compile_deadline: None,
                length_splits: Default::default(),
                run_tables: Default::default(),
                iter_limits: Default::default(),
                grammar_cache: crate::grammar_cache::GrammarCache::new(
                    crate::grammar_cache::GRAMMAR_CACHE,
                ),
            }),
        };
        // Built with the trie and slices, not at a decode's first mask near a bound
        // (o200k: 24 ms beside the factory's 367 ms; llama3: 13 ms beside 469 ms).
        f.shared.length_splits();
        Ok(f)
    }

    /// The same factory choosing engines by `engine` (default [`Engine::Auto`]: a token DFA
    /// for plain regexes that build within [`TOKEN_DFA_BUDGET`], else the Earley parser).
    pub fn with_engine(&self, engine: Engine) -> ParserFactory {
        self.derived(engine, self.shared.slices.clone())
    }

    /// This factory's tokenizer, trie and limits with another engine and slices (and no
    /// grammar lexers yet: those follow the slices' containment answers).
    fn derived(&self, engine: Engine, slices: Option<Arc<slicer::Slices>>) -> ParserFactory {
        let shared = self.shared.derived(engine, slices, self.shared.plain);
        ParserFactory { shared: Arc::new(shared) }
    }

    /// The soundness oracle's factory: the same tokenizer and trie, computing every mask the
    /// plain way (each matcher with a lexer of its own, fresh from the grammar; no slices, so
    /// no containment proof, split walk or slice mask; the lexer's proof rules off; no mask
    /// answered from a cache: not the last mask, not a first-row mask of another matcher).
    /// Its masks must equal this factory's, token for token: `tests/soundness.rs`.
    pub fn plain(&self) -> ParserFactory {
        ParserFactory { shared: Arc::new(self.shared.derived(self.shared.engine, None, true)) }
    }

    /// The same factory with vocabulary slicing on or off (default on). Masks are the same
    /// either way; slicing only makes dense ones faster.
    pub fn with_slicer(&self, on: bool) -> ParserFactory {
        let s = &self.shared;
        let slices = if on {
            s.slices.clone().or_else(|| {
                slicer::Slices::new(s.tokenizer.vocab(), &slicer::SliceSpec::standard())
                    .ok()
                    .map(Arc::new)
            })
        } else {
            None
        };
        self.derived(s.engine, slices)
    }

    /// The same factory with these vocabulary slices (e.g. [`slicer::SliceSpec::general`]
    /// for code and text grammars; the default is [`slicer::SliceSpec::standard`]).
    pub fn with_slice_specs(&self, specs: &[slicer::SliceSpec]) -> Result<ParserFactory, Error> {
        let s = &self.shared;
        let slices = slicer::Slices::new(s.tokenizer.vocab(), specs)
            .map_err(|e| Error::new(ErrorKind::Tokenizer, format!("vocabulary slices: {e}")))?;
        Ok(self.derived(s.engine, Some(Arc::new(slices))))
    }

    /// The vocabulary slices, if slicing is on.
    pub fn slices(&self) -> Option<&slicer::Slices> {
        self.shared.slices.as_deref()
    }

    /// A factory for a tokenizer given as on the `llg` command line: `bytes`, a built-in
    /// name (`o200k`, `cl100k`), or a path to a tokenizer file.
    ///
    /// A name that is not a built-in one and looks like a path (it has a `/` or `\`, or ends
    /// in `.json`, `.tiktoken` or `.model`) but names no file is an error of kind
    /// [`ErrorKind::Tokenizer`] saying `no such file: NAME`; other unknown names are an error
    /// listing the built-in names.
    pub fn from_tokenizer_name(name: &str) -> Result<ParserFactory, Error> {
        let path = std::path::Path::new(name);
        let tok = if toktrie::load::BUILTIN_NAMES.contains(&name) {
            Tokenizer::builtin(name)?
        } else if path.exists() {
            Tokenizer::from_file(path)?
        } else if looks_like_path(name) {
            return Err(Error::new(ErrorKind::Tokenizer, format!("no such file: {name}")));
        } else {
            Tokenizer::builtin(name)?
        };
        ParserFactory::new(tok)
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.shared.tokenizer
    }

    /// The token trie.
    pub fn trie(&self) -> &TokTrie {
        &self.shared.trie
    }

    /// Compiles a grammar (to share between matchers with [`ParserFactory::matcher_for`]).
    pub fn compile(&self, source: &GrammarSource) -> Result<Arc<CompiledGrammar>, Error> {
        self.compile_with_warnings(source).map(|(g, _)| g)
    }

    /// [`ParserFactory::compile`], with the front end's warnings
    /// ([`GrammarSource::to_ir_with_warnings`]).
    pub fn compile_with_warnings(
        &self,
        source: &GrammarSource,
    ) -> Result<(Arc<CompiledGrammar>, Vec<String>), Error> {
        self.compile_interruptible(source, self.interrupt(None))
    }

    /// The same factory with a compile deadline: a compile (front end, grammar compiler, the
    /// matcher's lexer construction) that takes longer fails with a [`ErrorKind::Limit`]
    /// error naming it ("compile deadline of N ms exceeded"), read at each schema node, rule
    /// and lexeme. `None`: no deadline (the default; the compile limits still bound the
    /// work).
    pub fn with_compile_deadline(&self, deadline: Option<std::time::Duration>) -> ParserFactory {
        self.derived_with(|s| s.compile_deadline = deadline)
    }

    /// This factory's engine and slices (a derived factory: empty grammar caches) with one
    /// setting changed by `set`.
    fn derived_with(&self, set: impl FnOnce(&mut Shared)) -> ParserFactory {
        let s = &self.shared;
        let mut shared = s.derived(s.engine, s.slices.clone(), s.plain);
        set(&mut shared);
        ParserFactory { shared: Arc::new(shared) }
    }

    /// The compile deadline ([`ParserFactory::with_compile_deadline`]).
    pub fn compile_deadline(&self) -> Option<std::time::Duration> {
        self.shared.compile_deadline
    }

    /// The same factory keeping up to `entries` compiled grammars by source text (default
    /// [`GRAMMAR_CACHE`](crate::grammar_cache::GRAMMAR_CACHE); 0: every compile compiles):
    /// a grammar given again (a server building a matcher per request from the request's
    /// schema) gets the kept compiled grammar and the lexer its finished matchers left. See
    /// [`crate::grammar_cache`].
    pub fn with_grammar_cache(&self, entries: usize) -> ParserFactory {
        self.derived_with(|s| s.grammar_cache = crate::grammar_cache::GrammarCache::new(entries))
    }

    /// Compiled grammars kept now ([`ParserFactory::with_grammar_cache`]).
    pub fn cached_grammars(&self) -> usize {
        self.shared.grammar_cache.len()
    }

    /// What interrupts a compile starting now: `cancel` and the factory's deadline.
    fn interrupt(&self, cancel: Option<&CancellationHandle>) -> Option<Interrupt> {
        self.interrupt_with(cancel, None)
    }

    /// [`ParserFactory::interrupt`] with `deadline` in place of the factory's, if given.
    pub(crate) fn interrupt_with(
        &self,
        cancel: Option<&CancellationHandle>,
        deadline: Option<std::time::Duration>,
    ) -> Option<Interrupt> {
        let flag = cancel.map(|c| c.0.clone());
        let deadline = deadline.or(self.shared.compile_deadline);
        (flag.is_some() || deadline.is_some()).then(|| Interrupt::new(flag, deadline))
    }

    fn compile_interruptible(
        &self,
        source: &GrammarSource,
        interrupt: Option<Interrupt>,
    ) -> Result<(Arc<CompiledGrammar>, Vec<String>), Error> {
        // The front ends recurse over user input with depth limits; they run where the
        // stack has room for those limits (the caller's thread or a compile thread, see
        // `compile_thread`), so the limits, not the caller's stack size, decide; a panic
        // becomes an error.
        let (kind, text) = source.kind_and_text();
        if let Some((g, _, warnings)) = self.shared.grammar_cache.get(kind, text) {
            return Ok((g, warnings));
        }
        let warm = match source {
            GrammarSource::StructuralTag(json) => grammars::structural_tag::warm_up_texts(json),
            _ => Vec::new(),
        };
        let source = source.clone();
        let shared = Arc::clone(&self.shared);
        let run = move || -> Result<(Arc<CompiledGrammar>, Vec<String>), Error> {
            scoped(interrupt.clone(), || {
                let (ir, warnings) = source.to_ir_with_warnings()?;
                let vocab = shared.tokenizer.vocab();
                Ok((Arc::new(grammars::compile(&ir, Some(vocab), &shared.limits)?), warnings))
            })
        };
        let (g, warnings) = compile_thread::run(run)??;
        if let Some((first, more)) = warm.split_first() {
            self.warm_up(&g, first, more);
        }
        self.shared.grammar_cache.put(kind, text, &(g.clone(), None, warnings.clone()));
        Ok((g, warnings))
    }

    /// Decodes `text` ([`grammars::structural_tag::warm_up_texts`]: a tag's begin, `<tool_call>\n{"name": "f",
    /// "arguments": `, its arguments as far as their schema fixes them, and where it does,
    /// the end tag and a word after it), after a few words of free text where the grammar
    /// takes them, with a matcher of `g`, a mask before each token, twice, and drops the
    /// matchers: their lexer becomes the one the grammar's later matchers start from (see
    /// [`ParserFactory::matcher_for`]). The first masks of a tool-calling grammar are its
    /// coldest (free text, each prefix of the trigger, the tool-name state of a large tool
    /// set, a string value's start, the end tag: 0.1-2.9 ms each, where warm ones take 2-50
    /// µs); the second pass splits the trie walks there (see `Walks` in the matcher), which a
    /// state's second mask does. XGrammar pays for its states in its compile; so do we here,
    /// and a fresh tool set's first decode is warm too. The called tool's own states (its
    /// name after the first token, its keys) are warmed only with fewer than
    /// [`WARM_UP_ALL_TAGS`] tags, whose calls (`more`) are then decoded once each: each new
    /// matcher copies the lexer, and one with every tool's states took ~0.4 ms to copy with
    /// 400 tools (0.15 ms without). Best effort: a pass stops at the first token the grammar
    /// does not take (free text where a tag must come first: the text alone is then decoded;
    /// a begin the model writes with a special token; a value the schema refuses), after
    /// [`WARM_UP_TOKENS`] tokens, or on an error (which a real decode meets and reports).
    fn warm_up(&self, g: &Arc<CompiledGrammar>, text: &str, more: &[String]) {
        // The tokens the grammar took (the masks along them are a draft's); an error
        // mid-way counts as taken, so only a refused first token makes the text go alone.
        let decode = |toks: &[toktrie::TokenId]| -> usize {
            let Ok(mut m) = self.matcher_for(g.clone()) else { return 0 };
            let toks = &toks[..toks.len().min(WARM_UP_TOKENS)];
            m.compute_masks_for_draft(toks).map_or(1, |masks| masks.len() - 1)
        };
        // A special token's name in the begin (`<|python_tag|>`) is that token: models
        // write those as special tokens.
        let tok = |text: &str| self.tokenizer().tokenize_with_special(text).unwrap_or_default();
        let mut toks = tok(&format!("{WARM_UP_TEXT}{text}"));
        if decode(&toks) == 0 {
            // No free text before a call: the text alone.
            toks = tok(text);
            decode(&toks);
        }
        // The second pass splits the walks at the states the first one built.
        decode(&toks);
        // A small tool set: every other tag's call too, once each.
        if more.len() < WARM_UP_ALL_TAGS {
            for text in more {
                decode(&tok(text));
            }
        }
    }

    /// LLGuidance's grammar string ([`GrammarSource::LlGuidance`]) compiled, with its
    /// `max_tokens` and the warnings of JSON Schema compilation (parsed once).
    pub fn compile_llguidance(&self, text: &str) -> Result<LlGuidanceGrammar, Error> {
        self.compile_llguidance_interruptible(text, self.interrupt(None))
    }

    pub(crate) fn compile_llguidance_interruptible(
        &self,
        text: &str,
        interrupt: Option<Interrupt>,
    ) -> Result<LlGuidanceGrammar, Error> {
        if let Some(kept) = self.shared.grammar_cache.get(LLGUIDANCE_KIND, text) {
            return Ok(kept);
        }
        let key = text;
        let text = text.to_string();
        let shared = Arc::clone(&self.shared);
        let run = move || -> Result<LlGuidanceGrammar, Error> {
            scoped(interrupt.clone(), || {
                let t = grammars::top_level::parse_llguidance(&text)?;
                let vocab = shared.tokenizer.vocab();
                let g = Arc::new(grammars::compile(&t.set, Some(vocab), &shared.limits)?);
                Ok((g, t.max_tokens, t.warnings))
            })
        };
        let g = compile_thread::run(run)??;
        self.shared.grammar_cache.put(LLGUIDANCE_KIND, key, &g);
        Ok(g)
    }

    /// Checks LLGuidance's grammar string without the tokenizer it will run with: special
    /// tokens (`<[id]>`, `<|name|>`) are not resolved but counted, and the rest compiles as
    /// usual. Returns the warnings (JSON Schema's, and `no tokenizer - can't validate
    /// <[...]> (N times)` when there are special tokens).
    pub fn check_llguidance_without_tokenizer(&self, text: &str) -> Result<Vec<String>, Error> {
        let text = text.to_string();
        let shared = Arc::clone(&self.shared);
        let run = move || -> Result<Vec<String>, Error> {
            let t = grammars::top_level::parse_llguidance(&text)?;
            let (mut ir, mut warnings) = (t.set, t.warnings);
            let mut n = 0;
            for g in &mut ir.grammars {
                for r in &mut g.rules {
                    n += unresolve_specials(&mut r.body);
                }
            }
            grammars::compile(&ir, Some(shared.tokenizer.vocab()), &shared.limits)?;
            if n > 0 {
                warnings.push(format!("no tokenizer - can't validate <[...]> ({n} times)"));
            }
            Ok(warnings)
        };
        compile_thread::run(run)?
    }

    /// A matcher for a grammar source.
    pub fn create_matcher(&self, source: &GrammarSource) -> Result<Matcher, Error> {
        self.create_matcher_with_warnings(source).map(|(m, _)| m)
    }

    /// [`ParserFactory::create_matcher`], with the front end's warnings
    /// ([`GrammarSource::to_ir_with_warnings`]; none for a plain regex).
    pub fn create_matcher_with_warnings(
        &self,
        source: &GrammarSource,
    ) -> Result<(Matcher, Vec<String>), Error> {
        self.create_interruptible(source, None)
    }

    /// [`ParserFactory::create_matcher_with_warnings`] whose compile `cancel` stops (an
    /// [`ErrorKind::Cancelled`] error) and whose matcher it then controls (see
    /// [`CancellationHandle`]); the factory's compile deadline applies as well.
    pub fn create_matcher_cancellable(
        &self,
        source: &GrammarSource,
        cancel: &CancellationHandle,
    ) -> Result<(Matcher, Vec<String>), Error> {
        let (m, w) = self.create_interruptible(source, Some(cancel))?;
        Ok((m.with_cancellation(cancel.clone()), w))
    }

    fn create_interruptible(
        &self,
        source: &GrammarSource,
        cancel: Option<&CancellationHandle>,
    ) -> Result<(Matcher, Vec<String>), Error> {
        let interrupt = self.interrupt(cancel);
        if let Some(why) = interrupt.as_ref().and_then(Interrupt::fired) {
            return Err(grammars::Error::from(why).into());
        }
        let vocab = self.shared.tokenizer.vocab();
        match (self.shared.engine, source) {
            (Engine::Auto, GrammarSource::Regex(rx)) => {
                // Over budget or unsupported by the token DFA: fall back to Earley.
                if let Ok(ix) = index::Index::with_config(rx, vocab, &token_dfa_config()) {
                    let m = Matcher::new_token_dfa(self.shared.clone(), Arc::new(ix));
                    return Ok((m, Vec::new()));
                }
            }
            (Engine::TokenDfa, GrammarSource::Regex(rx)) => {
                // Forced: no time budget (states and work are still bounded).
                let ix = index::Index::with_config(rx, vocab, &token_dfa_config().max_time(None))
                    .map_err(|e| Error::new(ErrorKind::Grammar, format!("token DFA: {e}")))?;
                let m = Matcher::new_token_dfa(self.shared.clone(), Arc::new(ix));
                return Ok((m, Vec::new()));
            }
            (Engine::TokenDfa, _) => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "the token DFA engine takes plain regexes only",
                ))
            }
            _ => {}
        }
        if let GrammarSource::LlGuidance(text) = source {
            let (g, max_tokens, warnings) =
                self.compile_llguidance_interruptible(text, interrupt.clone())?;
            let mut m = scoped(interrupt, || self.matcher_for(g))?;
            m.set_max_tokens(max_tokens);
            return Ok((m, warnings));
        }
        let (g, warnings) = self.compile_interruptible(source, interrupt.clone())?;
        Ok((scoped(interrupt, || self.matcher_for(g))?, warnings))
    }

    /// A matcher for a compiled grammar. Matchers of one compiled grammar start from the
    /// lexer a finished one left (its states, transitions and slicer answers; each matcher
    /// then owns its copy, so they run in parallel without a lock between them) and share the
    /// masks of the grammar's first lexeme: a server that keeps compiled grammars (keyed by
    /// schema or tool set) gets warm masks from the second request on.
    pub fn matcher_for(&self, grammar: Arc<CompiledGrammar>) -> Result<Matcher, Error> {
        Matcher::new(self.shared.clone(), grammar)
    }

    /// Computes the masks of many matchers in parallel (rayon's global pool and the calling
    /// thread, see [`batch::for_each_split`](crate::batch::for_each_split)), into one
    /// caller-owned buffer of `matchers.len() * words_per_mask` u32 words. Each matcher's
    /// result (error or not) is returned in order; a failing matcher's mask words are zero.
    pub fn compute_masks(
        &self,
        matchers: &mut [Matcher],
        out: &mut [u32],
    ) -> Vec<Result<(), Error>> {
        let words = self.shared.trie.vocab_size().div_ceil(32);
        if out.len() < matchers.len() * words {
            let e = Error::new(ErrorKind::Usage, "mask buffer too small for the batch");
            return matchers.iter().map(|_| Err(e.clone())).collect();
        }
        let mut items: Vec<(&mut Matcher, &mut [u32], Result<(), Error>)> = matchers
            .iter_mut()
            .zip(out.chunks_mut(words))
            .map(|(m, chunk)| (m, chunk, Ok(())))
            .collect();
        crate::batch::for_each_split(None, &mut items, |(m, chunk, r)| {
            *r = m.compute_mask_into(chunk);
            if r.is_err() {
                chunk.iter_mut().for_each(|w| *w = 0);
            }
        });
        items.into_iter().map(|(_, _, r)| r).collect()
    }
}

/// Replaces the special tokens of `e` by a byte no text contains (for checking a grammar
/// without its tokenizer); returns how many there were.
fn unresolve_specials(e: &mut grammars::ir::Expr) -> usize {
    use grammars::ir::Expr;
    match e {
        Expr::Special(_) => {
            *e = Expr::Lexeme(lexer::RegexSpec::Bytes(vec![0xFF]));
            1
        }
        Expr::Seq(v) | Expr::Alt(v) => v.iter_mut().map(unresolve_specials).sum(),
        Expr::Repeat { expr, .. } | Expr::If { expr, .. } => unresolve_specials(expr),
        _ => 0,
    }
}

/// Where compiles run: on the calling thread when its stack has room ([`crate::stack`]),
/// else on compile threads with [`COMPILE_STACK_BYTES`] stacks, kept idle between compiles:
/// starting a thread per compile cost ~50 µs of a ~800 µs MaskBench compile (more on a busy
/// machine); handing a job to an idle one costs a wake-up (~15 µs), and the work then ran
/// at half speed on the other core. An idle thread keeps the stack pages its deepest compile
/// touched (bounded by the stack size).
mod compile_thread {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::mpsc;
    use std::sync::Mutex;

    use super::COMPILE_STACK_BYTES;
    use crate::{Error, ErrorKind};

    type Job = Box<dyn FnOnce() + Send>;

    /// Idle threads kept at most (more are let go after their job).
    const MAX_IDLE: usize = 4;

    /// The idle threads, with the id of the process that started them: after a `fork` the
    /// child has none of them (only their channels), so a child starts its own. The lock is
    /// only ever tried, never waited for (a lock held by a thread that did not survive a
    /// fork would otherwise block forever): when busy, a fresh thread is started and not
    /// kept.
    static IDLE: Mutex<(u32, Vec<mpsc::Sender<Job>>)> = Mutex::new((0, Vec::new()));

    fn idle() -> Option<std::sync::MutexGuard<'static, (u32, Vec<mpsc::Sender<Job>>)>> {
        let mut g = match IDLE.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        let pid = std::process::id();
        if g.0 != pid {
            g.0 = pid;
            g.1.clear();
        }
        Some(g)
    }

    fn start() -> Result<mpsc::Sender<Job>, Error> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("llg-compile".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            })
            .map_err(|e| {
                Error::new(ErrorKind::Internal, format!("cannot start the compile thread: {e}"))
            })?;
        Ok(tx)
    }

    /// Runs `f` on the calling thread when its stack has room for a compile
    /// ([`crate::stack`]), else (or when the compile reached the stack's floor) on a compile
    /// thread, and returns its result; a panic becomes an error.
    pub(super) fn run<T: Send + 'static>(
        f: impl Fn() -> T + Send + Sync + 'static,
    ) -> Result<T, Error> {
        if let Some(floor) = crate::stack::inline_floor() {
            let (r, low) =
                lexer::interrupt::with_stack_floor(floor, || catch_unwind(AssertUnwindSafe(&f)));
            if !low {
                return r.map_err(panicked);
            }
        }
        let kept = idle().and_then(|mut g| g.1.pop());
        let worker = match kept {
            Some(w) => w,
            None => start()?,
        };
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            let _ = tx.send(r);
        });
        let lost = || Error::new(ErrorKind::Internal, "the compile thread stopped");
        worker.send(job).map_err(|_| lost())?;
        let r = rx.recv().map_err(|_| lost())?;
        if let Some(mut g) = idle() {
            if g.1.len() < MAX_IDLE {
                g.1.push(worker);
            }
        }
        r.map_err(panicked)
    }

    fn panicked(p: Box<dyn std::any::Any + Send>) -> Error {
        let msg = crate::error::panic_message(&*p);
        Error::new(
            ErrorKind::Internal,
            format!("internal error while compiling (panic caught): {msg}"),
        )
    }
}

/// A JSON Schema's grammar IR.
fn json_schema_ir(s: &str) -> Result<(GrammarSet, Vec<String>), Error> {
    let compile = |v: &serde_json::Value| {
        let opts = grammars::json_schema::JsonCompileOptions::from_schema(v)?;
        let c = grammars::json_schema::compile_schema_with(v, &opts)?;
        let mut grammars = vec![c.grammar];
        grammars::json_schema::push_subs(&mut grammars, c.subs);
        Ok((GrammarSet { grammars }, c.warnings))
    };
    // serde_json's own parse stops past 128 levels, so a schema it parses nests at most
    // that deep and compiles here; anything else (deeper, or not JSON) is scanned and taken
    // on a deep stack (the scan of every schema with more than 128 brackets cost 2 % of
    // MaskBench's compile instructions).
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(s) {
        return compile(&v);
    }
    on_deep_stack(s, || {
        let v = grammars::parse_json_deep(s, "the JSON Schema")
            .map_err(|m| Error::new(ErrorKind::Grammar, m))?;
        compile(&v)
    })
}

/// `run` on the caller's thread, or, when `json` nests deeper than serde_json's default
/// limit (128), on a thread with [`DEEP_STACK`] of stack and the caller's interrupt: the
/// parse, compile and drop of such input recurse as deep as it nests, and no caller's stack
/// (2 MB for Rust's spawned threads) may overflow.
fn on_deep_stack<T: Send>(
    json: &str,
    run: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    if !grammars::json_deeper_than(json, 128) {
        return run();
    }
    let interrupt = lexer::interrupt::current();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("llg-deep-json".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, || lexer::interrupt::scoped(interrupt, run))
            .map_err(|e| Error::new(ErrorKind::Grammar, format!("a thread for deep JSON: {e}")))?
            .join()
            .unwrap_or_else(|_| {
                Err(Error::new(ErrorKind::Grammar, "the deep JSON's compile panicked"))
            })
    })
}

/// Stack of the thread deeply nested JSON input compiles on (reserved, not committed: only
/// the pages used count). Arrays nested 990 deep overflowed a 2 MB stack in a debug build.
/// A thread of its own, not the compile threads' pool: an idle pool thread would keep the
/// pages a deep compile touched.
const DEEP_STACK: usize = 256 << 20;
