//! [`Parser`]: the Earley parser driven byte by byte, and the [`toktrie::Recognizer`] for the
//! trie walk.
//!
//! The parse state is one stack entry `(row, lexer state)` per pushed byte over the chart's
//! rows. This file holds the state and its plain queries; the rest, in reading order:
//! - `row_start`: each row's lexer start states, i.e. which skip lexemes a row allows;
//! - `step`: one byte (the lexer step, a lexeme's end scanned into a row, the scan cache);
//! - `speculative`: the rows a trie walk pushes beyond the committed input, kept or dropped;
//! - `mask`: token masks (the `Recognizer` for the trie walk, token terminals, split walks);
//! - `consume`: consuming tokens, `max_tokens` lexemes, rollback;
//! - `forced`: forced bytes; `capture`: captures.

mod capture;
mod consume;
mod forced;
mod mask;
mod options;
mod row_start;
mod speculative;
mod step;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use hashbrown::HashMap;
use lexer::{Lexer, StateId};

use crate::cfg::{Cfg, SymIdx, Terminal};
use crate::chart::Chart;
use crate::{Error, ErrorKind};

pub use mask::SubtreeProof;
pub use options::{ParserLimits, ParserOptions, SkipClass};

/// Counters of the work done, for benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParserStats {
    /// Rows computed (closure run).
    pub rows_computed: u64,
    /// Rows reused: the same lexeme scanned again at the same place.
    pub rows_reused: u64,
    /// Bytes offered to the parser (trie nodes visited, plus consumed bytes).
    pub bytes_pushed: u64,
    /// Lexemes ended (the parser involved: a scan, computed or reused).
    pub lexemes_ended: u64,
    /// Completions that read, of a large origin row, only the items expecting their symbol.
    pub indexed_completions: u64,
}

/// Where the parse is after a byte: the chart row and the lexer state inside the lexeme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    row: u32,
    lexer: StateId,
}

/// An Earley parser over a [`Lexer`], fed bytes (and special tokens); implements
/// [`Recognizer`](toktrie::Recognizer) so that [`TokTrie::add_bias`](toktrie::TokTrie::add_bias)
/// computes its token mask.
///
/// Rows pushed while walking the trie are kept until the walk ends: when the same lexeme
/// ends again at the same row (same row, same lexer state), the row is reused.
#[derive(Clone, Debug)]
pub struct Parser<L> {
    cfg: Arc<Cfg>,
    lexer: L,
    opts: ParserOptions,
    chart: Chart,
    /// The lexer start state of each row (allowed lexemes of the row plus skip lexemes).
    row_start: Vec<StateId>,
    /// The start state of each row after a once-only skip lexeme (without those; the same
    /// as `row_start` when the grammar has none).
    row_start_once: Vec<StateId>,
    /// One entry per byte pushed, after the first (the start).
    stack: Vec<Pos>,
    /// Entries below this index are committed (consumed tokens); the walk starts here.
    base: usize,
    /// Committed bytes, one per stack entry after the first.
    bytes: Vec<u8>,
    /// Stack length at each token boundary (for rollback).
    token_ends: Vec<usize>,
    /// Rows entered by committed bytes, with the byte offset where each starts.
    entered: Vec<(u32, usize)>,
    /// Whether `push_byte` records the rows it enters (while consuming, not in walks).
    recording: bool,
    /// (row, lexer state) -> row after ending the lexeme there (`NO_ROW`: rejected).
    scan_cache: HashMap<(u32, StateId), u32>,
    /// The last `scan_cache` answer: a walk's frontier ends one lexeme at one row from
    /// hundreds of trie nodes (a string's closing quote inside every token that has one).
    last_scan: Option<((u32, StateId), u32)>,
    items_at_step_start: usize,
    error: Option<Error>,
    stats: ParserStats,
    /// Whether the grammar has token terminals (`<[id]>`): masks then add the tokens
    /// they expect, and a token they expect is scanned as one.
    token_terminals: bool,
    /// Set by another thread to cancel ([`Parser::set_cancel`]).
    cancel: Option<Arc<AtomicBool>>,
}

impl<L: Lexer> Parser<L> {
    /// A parser at the start of the grammar.
    pub fn new(cfg: Arc<Cfg>, lexer: L, opts: ParserOptions) -> Result<Parser<L>, Error> {
        let mut chart = Chart::default();
        chart.scan_all = opts.scan_completions;
        let mut p = Parser {
            cfg,
            lexer,
            opts,
            chart,
            row_start: Vec::new(),
            row_start_once: Vec::new(),
            stack: Vec::new(),
            base: 0,
            bytes: Vec::new(),
            token_ends: Vec::new(),
            entered: vec![(0, 0)],
            recording: false,
            scan_cache: HashMap::new(),
            last_scan: None,
            items_at_step_start: 0,
            error: None,
            stats: ParserStats::default(),
            token_terminals: false,
            cancel: None,
        };
        p.token_terminals = (0..p.cfg.num_symbols()).any(|i| {
            let s = p.cfg.symbol(SymIdx(i as u32));
            s.used && matches!(s.terminal, Some(Terminal::SpecialTokens(_)))
        });
        let r = p.chart.start(&p.cfg, &p.opts.limits)?;
        p.stats.rows_computed += 1;
        p.push_row_start(r, None)?;
        let s = p.row_start[r as usize];
        p.stack.push(Pos { row: r, lexer: s });
        Ok(p)
    }

    /// A flag another thread may set to cancel: the parser reads it on its slow path (each
    /// byte that is not a known transition inside a lexeme: lexer derivatives, lexeme ends,
    /// rows), and once it is set fails with a sticky [`ErrorKind::Cancelled`] error, so a
    /// trie walk under way ends within a few more bytes (its subtrees rejected) and
    /// [`Parser::compute_mask`] returns the error instead of a mask. Warm walks (known
    /// transitions only) finish without reading it.
    pub fn set_cancel(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.cancel = flag;
    }

    /// Replaces the stop tokens (EOS): each is allowed where the grammar accepts and ends the
    /// input when consumed; the others of the vocabulary's EOS ids are then ordinary special
    /// tokens (allowed only where the grammar names them). For a request's own stop set
    /// (XGrammar's `override_stop_tokens`).
    pub fn set_eos(&mut self, eos: Vec<toktrie::TokenId>) {
        self.opts.eos = eos;
    }

    /// The stop tokens ([`Parser::set_eos`]).
    pub fn eos(&self) -> &[toktrie::TokenId] {
        &self.opts.eos
    }

    /// The cancellation flag ([`Parser::set_cancel`]).
    pub fn cancel_flag(&self) -> Option<&Arc<AtomicBool>> {
        self.cancel.as_ref()
    }

    /// The grammar.
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    /// The lexer.
    pub fn lexer(&self) -> &L {
        &self.lexer
    }

    /// Replaces the lexer with another one built from the same specification, e.g. a clone
    /// with a warm transition table. Lexer states of the current position stay valid only if
    /// the new lexer numbers its states the same way, so this is meant for a fresh parser.
    pub fn replace_lexer(&mut self, lexer: L) {
        self.lexer = lexer;
    }

    /// Work counters.
    pub fn stats(&self) -> ParserStats {
        ParserStats { indexed_completions: self.chart.indexed, ..self.stats }
    }

    /// The sticky error, if a step failed.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    fn check_error(&self) -> Result<(), Error> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Whether the input so far is a complete string of the grammar.
    pub fn is_accepting(&mut self) -> Result<bool, Error> {
        self.check_error()?;
        let r = self.row_if_ended()?;
        Ok(r.is_some_and(|r| self.chart.rows[r as usize].accepting))
    }

    /// The lexer, mutable (e.g. for containment queries on [`Parser::current_lexer_state`]).
    pub fn lexer_mut(&mut self) -> &mut L {
        &mut self.lexer
    }

    /// The bytes consumed so far.
    pub fn consumed_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Memory owned by the parse (chart, stack, caches), excluding the grammar and lexer.
    pub fn num_bytes(&self) -> usize {
        self.chart.num_bytes()
            + self.stack.capacity() * 8
            + self.bytes.capacity()
            + self.row_start.capacity() * 4
            + self.row_start_once.capacity() * 4
            + self.scan_cache.capacity() * 16
    }
}

fn lexer_error(e: lexer::Error) -> Error {
    Error::new(ErrorKind::Lexer, e.to_string())
}
