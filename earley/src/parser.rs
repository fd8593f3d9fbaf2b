//! [`Parser`]: the Earley parser driven byte by byte, and the [`Recognizer`] for the trie walk.

use std::sync::Arc;

use hashbrown::HashMap;
use lexer::{LexemeIdx, LexemeSet, Lexer, StateId, Step};
use toktrie::{Recognizer, TokTrie, TokenId, TokenSet, Vocabulary};

use crate::cfg::{Cfg, SymIdx, Terminal};
use crate::chart::Chart;
use crate::{Error, ErrorKind};

/// Limits of one parse; hitting one is an [`ErrorKind::Limit`] error naming it.
#[derive(Clone, Debug)]
pub struct ParserLimits {
    /// Earley items in one row (default 20,000).
    pub max_items_in_row: usize,
    /// Items computed in one step: one token consumed or one mask computed (default 2,000,000).
    pub max_items_in_step: usize,
    /// Rows (lexemes) in one sequence, committed or speculative (default 1,000,000).
    pub max_rows: usize,
}

impl Default for ParserLimits {
    fn default() -> Self {
        ParserLimits { max_items_in_row: 20_000, max_items_in_step: 2_000_000, max_rows: 1_000_000 }
    }
}

/// Options of a parser besides the grammar and the lexer.
#[derive(Clone, Debug, Default)]
pub struct ParserOptions {
    /// Lexemes allowed between any two lexemes and ignored (`%ignore`): all skip lexemes of
    /// the grammar. Without `skip_classes` they are allowed wherever a lexeme may follow.
    pub skip: LexemeSet,
    /// Skip lexemes by lexeme class (one class per sub-grammar with its own `%ignore` or
    /// JSON whitespace), as LLGuidance applies them: after a lexeme of class G, G's skip
    /// lexemes if G can take another lexeme next; otherwise those of the nearest ancestor
    /// class that can; otherwise none (no whitespace when entering a sub-grammar, none at
    /// the end). The first class is the top grammar's (special tokens count as its
    /// lexemes; `allow_initial_skip` applies to it). Empty: `skip` applies everywhere.
    pub skip_classes: Vec<SkipClass>,
    /// Skip lexemes that may occur at most once between two other lexemes (LLGuidance's
    /// `skip_repetition: "once"`, JSON `whitespace_pattern`): after one, the lexer restarts
    /// without them.
    pub skip_once: LexemeSet,
    /// The EOS tokens: allowed iff the grammar is accepting.
    pub eos: Vec<TokenId>,
    /// Whether skip lexemes may come before the first lexeme (LLGuidance's
    /// `allow_initial_skip`; default false).
    pub allow_initial_skip: bool,
    /// Lexemes of `[max_tokens=N]` rules: such a lexeme may hold bytes of at most N tokens;
    /// when it has used them it ends at the next token boundary if it can, else (not
    /// accepting) the parse cannot go on. Applied when every live lexeme of the pending
    /// lexer state is limited and out of tokens (LLGuidance's "gen with max_tokens").
    pub lexeme_max_tokens: Vec<(LexemeIdx, usize)>,
    /// Limits.
    pub limits: ParserLimits,
}

/// The lexemes of one lexeme class (a sub-grammar) and its skip lexemes.
#[derive(Clone, Debug, Default)]
pub struct SkipClass {
    /// The class's lexemes (skip lexemes not included).
    pub members: LexemeSet,
    /// Its skip lexemes (`%ignore`, JSON whitespace).
    pub skip: LexemeSet,
    /// The classes of the grammars that use this one (directly or not), nearest first.
    pub ancestors: Vec<usize>,
}

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
}

/// Where the parse is after a byte: the chart row and the lexer state inside the lexeme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    row: u32,
    lexer: StateId,
}

const NO_ROW: u32 = u32::MAX;
/// A walk's speculative rows are kept for the next walk up to this many rows
/// ([`Parser::end_walk`]).
const KEEP_SPECULATIVE_ROWS: usize = 256;
/// ... and up to this many Earley items in them (a matcher's clone copies them).
const KEEP_SPECULATIVE_ITEMS: usize = 1 << 14;
/// Scan-cache flag: the lexeme that ended was a once-only skip lexeme (restart without them).
const AFTER_ONCE: u32 = 1 << 31;

/// An Earley parser over a [`Lexer`], fed bytes (and special tokens); implements
/// [`Recognizer`] so that [`TokTrie::add_bias`] computes its token mask.
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
    items_at_step_start: usize,
    error: Option<Error>,
    stats: ParserStats,
    /// Whether the grammar has token terminals (`<[id]>`): masks then add the tokens
    /// they expect, and a token they expect is scanned as one.
    token_terminals: bool,
}

impl<L: Lexer> Parser<L> {
    /// A parser at the start of the grammar.
    pub fn new(cfg: Arc<Cfg>, lexer: L, opts: ParserOptions) -> Result<Parser<L>, Error> {
        let mut p = Parser {
            cfg,
            lexer,
            opts,
            chart: Chart::default(),
            row_start: Vec::new(),
            row_start_once: Vec::new(),
            stack: Vec::new(),
            base: 0,
            bytes: Vec::new(),
            token_ends: Vec::new(),
            entered: vec![(0, 0)],
            recording: false,
            scan_cache: HashMap::new(),
            items_at_step_start: 0,
            error: None,
            stats: ParserStats::default(),
            token_terminals: false,
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

    /// The skip lexemes allowed at the start of row `r`, entered by scanning `scanned`
    /// (`None`: the first row, or a special token).
    fn row_skip(&self, r: u32, scanned: Option<&LexemeSet>) -> LexemeSet {
        let row = &self.chart.rows[r as usize];
        let mut skip = LexemeSet::new();
        // Skip lexemes go between lexemes: not before the first one (unless
        // allow_initial_skip), and not after the last one (when nothing can follow), as
        // LLGuidance (no trailing whitespace after a complete JSON value).
        let something_follows = !row.allowed.is_empty() || row.has_special;
        if !something_follows || (r == 0 && !self.opts.allow_initial_skip) {
            return skip;
        }
        let classes = &self.opts.skip_classes;
        if classes.is_empty() {
            return self.opts.skip.clone();
        }
        let can_follow =
            |c: usize| row.allowed.intersects(&classes[c].members) || (c == 0 && row.has_special);
        if r == 0 {
            if can_follow(0) {
                skip.union_with(&classes[0].skip);
            }
            return skip;
        }
        for (g, class) in classes.iter().enumerate() {
            let of_g = match scanned {
                Some(l) => l.intersects(&class.members),
                None => g == 0,
            };
            if !of_g {
                continue;
            }
            if can_follow(g) {
                skip.union_with(&class.skip);
                continue;
            }
            // As LLGuidance's grammar stack: the sub-grammars this row enters come first,
            // each the parent of the next, so when a row enters two or more, the one before
            // the last may lend its skip (`"<" (%json{A} | %json{B})` allows whitespace
            // after "<"; one %json alone does not); then the grammars around G.
            // With one class there is nothing else to lend a skip: no scan of the row.
            if classes.len() == 1 {
                continue;
            }
            let entered = self.chart.entered_classes(&self.cfg, r);
            let before_last = entered.len().saturating_sub(1);
            let found = entered[..before_last]
                .iter()
                .rev()
                .chain(class.ancestors.iter())
                .find(|&&a| can_follow(a));
            if let Some(&a) = found {
                skip.union_with(&classes[a].skip);
            }
        }
        skip
    }

    /// Computes the lexer start states of row `r` (which must be the next row to get them),
    /// entered by scanning `scanned` (`None`: the first row, or a special token).
    fn push_row_start(&mut self, r: u32, scanned: Option<&LexemeSet>) -> Result<(), Error> {
        debug_assert_eq!(self.row_start.len(), r as usize);
        let skip = self.row_skip(r, scanned);
        let mut allowed = self.chart.rows[r as usize].allowed.clone();
        let once = !self.opts.skip_once.is_empty() && skip.intersects(&self.opts.skip_once);
        let s_once = if once {
            let mut a = allowed.clone();
            for l in skip.iter() {
                if !self.opts.skip_once.contains(l) {
                    a.insert(l);
                }
            }
            Some(self.lexer.start_state(&a).map_err(lexer_error)?)
        } else {
            None
        };
        allowed.union_with(&skip);
        let s = self.lexer.start_state(&allowed).map_err(lexer_error)?;
        self.row_start.push(s);
        self.row_start_once.push(s_once.unwrap_or(s));
        Ok(())
    }

    /// Whether the lexer at `pos` is at a start state of its row (no lexeme pending).
    #[inline(always)]
    fn at_row_start(&self, pos: Pos) -> bool {
        let r = pos.row as usize;
        pos.lexer == self.row_start[r] || pos.lexer == self.row_start_once[r]
    }

    /// The lexer state in row `r` after a lexeme that ended there (`once`: it was a
    /// once-only skip lexeme).
    #[inline(always)]
    fn start_after(&self, r: u32, once: bool) -> StateId {
        if once {
            self.row_start_once[r as usize]
        } else {
            self.row_start[r as usize]
        }
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
        self.stats
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

    /// The row after ending, at row `row`, the lexeme read up to lexer state `state`, and
    /// whether it was a once-only skip lexeme. Scans the accepting lexemes the row allows; if
    /// only skip lexemes accept, stays in the row. `Ok(None)` if the lexeme cannot end here.
    fn end_lexeme(&mut self, row: u32, state: StateId) -> Result<Option<(u32, bool)>, Error> {
        self.stats.lexemes_ended += 1;
        if let Some(&r) = self.scan_cache.get(&(row, state)) {
            self.stats.rows_reused += 1;
            return Ok((r != NO_ROW).then_some((r & !AFTER_ONCE, r & AFTER_ONCE != 0)));
        }
        let accepting = self.lexer.accepting(state);
        let mut lexemes = accepting.clone();
        lexemes.intersect_with(&self.chart.rows[row as usize].allowed);
        let result = if !lexemes.is_empty() {
            let next = self.chart.scan(&self.cfg, &self.opts.limits, row, &lexemes, None)?;
            if let Some(r) = next {
                self.after_new_row(r, Some(&lexemes))?;
            }
            next.map(|r| (r, false))
        } else if accepting.intersects(&self.opts.skip) {
            // A once-only skip lexeme when it is the only one that accepts (a byte string
            // both kinds match counts as the repeatable kind).
            let mut plain = accepting.clone();
            for l in self.opts.skip_once.iter() {
                plain.remove(l);
            }
            Some((row, !plain.intersects(&self.opts.skip)))
        } else {
            None
        };
        let v = match result {
            Some((r, once)) => r | if once { AFTER_ONCE } else { 0 },
            None => NO_ROW,
        };
        self.scan_cache.insert((row, state), v);
        Ok(result)
    }

    fn after_new_row(&mut self, r: u32, scanned: Option<&LexemeSet>) -> Result<(), Error> {
        self.stats.rows_computed += 1;
        let step_items = self.chart.items.len().saturating_sub(self.items_at_step_start);
        if step_items > self.opts.limits.max_items_in_step {
            return Err(Error::limit(
                "items per step",
                format!(
                    "more than {} Earley items for one token",
                    self.opts.limits.max_items_in_step
                ),
                "simplify the grammar (fewer ambiguous or right-recursive rules) or raise \
                 ParserLimits::max_items_in_step",
            ));
        }
        self.push_row_start(r, scanned)
    }

    /// Pushes one byte: the core of both consuming and the trie walk.
    #[inline(never)]
    fn push_byte(&mut self, b: u8) -> Result<bool, Error> {
        self.stats.bytes_pushed += 1;
        let top = *self.stack.last().expect("the stack holds the start");
        let at = self.stack.len() - 1;
        let pos = match self.lexer.step(top.lexer, b).map_err(lexer_error)? {
            Step::Continue(s) => Pos { row: top.row, lexer: s },
            Step::EndWith(s) => match self.end_lexeme(top.row, s)? {
                Some((r, once)) => {
                    self.record(r, at + 1);
                    Pos { row: r, lexer: self.start_after(r, once) }
                }
                None => return Ok(false),
            },
            Step::EndBefore => {
                if self.at_row_start(top) {
                    // An empty lexeme: never ended, so no loop.
                    return Ok(false);
                }
                let Some((r, once)) = self.end_lexeme(top.row, top.lexer)? else {
                    return Ok(false);
                };
                let s0 = self.start_after(r, once);
                match self.lexer.step(s0, b).map_err(lexer_error)? {
                    Step::Continue(s) => {
                        self.record(r, at);
                        Pos { row: r, lexer: s }
                    }
                    Step::EndWith(s) => match self.end_lexeme(r, s)? {
                        Some((r2, once2)) => {
                            self.record(r, at);
                            self.record(r2, at + 1);
                            Pos { row: r2, lexer: self.start_after(r2, once2) }
                        }
                        None => return Ok(false),
                    },
                    Step::EndBefore | Step::Reject => return Ok(false),
                }
            }
            Step::Reject => return Ok(false),
        };
        self.stack.push(pos);
        Ok(true)
    }

    /// [`Parser::push_byte`] with the warm fast path first.
    #[inline(always)]
    fn push_byte_fast(&mut self, b: u8) -> Result<bool, Error> {
        let top = *self.stack.last().expect("the stack holds the start");
        if let Some(s) = self.lexer.step_warm(top.lexer, b) {
            if s == StateId::DEAD {
                return Ok(false);
            }
            self.stats.bytes_pushed += 1;
            self.stack.push(Pos { row: top.row, lexer: s });
            return Ok(true);
        }
        self.push_byte(b)
    }

    #[inline(always)]
    fn record(&mut self, row: u32, at: usize) {
        if self.recording && self.entered.last().is_none_or(|e| e.0 != row) {
            self.entered.push((row, at));
        }
    }

    /// The row the parse is in if the current lexeme ends now (itself if no lexeme is
    /// pending), or `None` if the current bytes cannot end a lexeme.
    fn row_if_ended(&mut self) -> Result<Option<u32>, Error> {
        let top = *self.stack.last().expect("the stack holds the start");
        if self.at_row_start(top) {
            Ok(Some(top.row))
        } else if self.lexer.flags(top.lexer).is_accepting() {
            Ok(self.end_lexeme(top.row, top.lexer)?.map(|(r, _)| r))
        } else {
            Ok(None)
        }
    }

    /// Whether the input so far is a complete string of the grammar.
    pub fn is_accepting(&mut self) -> Result<bool, Error> {
        self.check_error()?;
        let r = self.row_if_ended()?;
        Ok(r.is_some_and(|r| self.chart.rows[r as usize].accepting))
    }

    fn special_ok(&mut self, tok: TokenId) -> Result<bool, Error> {
        let Some(r) = self.row_if_ended()? else { return Ok(false) };
        if self.opts.eos.contains(&tok) {
            return Ok(self.chart.rows[r as usize].accepting);
        }
        Ok(self.chart.expects_special(&self.cfg, r, tok.0))
    }

    fn start_step(&mut self) {
        self.items_at_step_start = self.chart.items.len();
    }

    /// The rows the committed stack reaches (the rows after them are speculative): its top
    /// entry's row, as rows along the stack never decrease (a lexeme's end scans into a row
    /// made after the one it ends in). One load, where the maximum over the stack cost a
    /// pass over every byte consumed at every mask.
    fn committed_rows(&self) -> usize {
        debug_assert_eq!(
            self.stack[self.base].row,
            self.stack[..=self.base].iter().map(|p| p.row).max().unwrap_or(0),
            "rows along the committed stack never decrease"
        );
        self.stack[self.base].row as usize + 1
    }

    /// After a walk: the walk's stack entries go; its speculative rows and the scan cache
    /// stay for the next walk while they are few ([`KEEP_SPECULATIVE_ROWS`],
    /// [`KEEP_SPECULATIVE_ITEMS`]). They hold while no row is committed: the next masks
    /// inside the same lexeme (a string's body: the tokens that end the string there scan
    /// the same rows) reuse them, and a consume that may end a lexeme drops them first
    /// ([`Parser::consume_bytes`]), so committed rows stay contiguous.
    fn end_walk(&mut self) {
        self.drop_speculative_over(KEEP_SPECULATIVE_ROWS, KEEP_SPECULATIVE_ITEMS);
    }

    /// Drops the stack entries above the committed ones, and the speculative rows (with the
    /// scan cache) when there are more than `rows` of them or more than `items` items in
    /// them.
    fn drop_speculative_over(&mut self, rows: usize, items: usize) {
        self.stack.truncate(self.base + 1);
        let keep = self.committed_rows();
        if keep < self.chart.rows.len()
            && (self.chart.rows.len() - keep > rows
                || self.chart.items.len() - self.chart.rows[keep].start as usize > items)
        {
            self.truncate_rows(keep);
        }
    }

    /// Whether rows beyond the committed ones are kept (from an earlier walk or query).
    fn has_speculative(&self) -> bool {
        self.committed_rows() < self.chart.rows.len()
    }

    /// Whether `bytes` continue the pending lexeme on known transitions (no lexeme ends, no
    /// row is made: the speculative rows stay valid), as `push_byte_fast` takes them.
    fn within_lexeme(&self, bytes: &[u8]) -> bool {
        if !self.opts.lexeme_max_tokens.is_empty() {
            // A token limit may end the lexeme after the token.
            return false;
        }
        let mut s = self.stack.last().expect("the stack holds the start").lexer;
        for &b in bytes {
            match self.lexer.step_warm(s, b) {
                Some(n) if n != StateId::DEAD => s = n,
                _ => return false,
            }
        }
        true
    }

    /// Drops speculative rows (those above the committed stack) and the scan cache.
    fn drop_speculative(&mut self) {
        self.drop_speculative_over(0, 0);
    }

    /// Keeps the first `keep` rows (with their start states) and forgets the scan cache.
    fn truncate_rows(&mut self, keep: usize) {
        self.chart.truncate(keep);
        self.row_start.truncate(keep);
        self.row_start_once.truncate(keep);
        self.scan_cache.clear();
    }

    /// Computes the token mask over `trie`: the tokens whose bytes extend the input so far
    /// to a prefix of a string of the grammar; EOS iff accepting; other special tokens iff
    /// the grammar expects them here.
    pub fn compute_mask(&mut self, trie: &TokTrie) -> Result<TokenSet, Error> {
        self.check_error()?;
        let mut mask = TokenSet::new(trie.vocab_size());
        trie.add_bias(self, &mut mask, &[]);
        self.check_error()?;
        self.add_token_terminals(&mut mask)?;
        Ok(mask)
    }

    /// Adds to `mask` the tokens a token terminal (`<[id]>`, `!<[id]>`) expected here
    /// allows, regular ones included: such a terminal is one whole token, so it can only
    /// start at the current position (after the pending lexeme, if that can end). EOS
    /// tokens are left to the accepting state. Part of [`Parser::compute_mask`]; callers
    /// assembling a mask from [`Parser::add_bias`] walks call it once at the end.
    pub fn add_token_terminals(&mut self, mask: &mut TokenSet) -> Result<(), Error> {
        self.check_error()?;
        if !self.token_terminals {
            return Ok(());
        }
        let Some(r) = self.row_if_ended()? else { return Ok(()) };
        let ranges = self.chart.expected_token_ranges(&self.cfg, r);
        if !ranges.is_empty() {
            let eos_before: Vec<bool> = self.opts.eos.iter().map(|&t| mask.contains(t)).collect();
            for (a, b) in ranges {
                mask.insert_range(TokenId(a), TokenId(b));
            }
            for (&t, &was) in self.opts.eos.iter().zip(&eos_before) {
                if !was {
                    mask.remove(t);
                }
            }
        }
        self.drop_speculative();
        Ok(())
    }

    /// Adds to `mask` the tokens of `trie` allowed now (a walk of one vocabulary slice; the
    /// trie must have the same vocabulary width as the mask). Speculative rows are dropped
    /// at the end, as after [`Parser::compute_mask`].
    pub fn add_bias(&mut self, trie: &TokTrie, mask: &mut TokenSet) -> Result<(), Error> {
        self.check_error()?;
        trie.add_bias(self, mask, &[]);
        self.check_error()
    }

    /// [`Parser::add_bias`] for the tokens at and below some first-character nodes of
    /// `trie` (see [`TokTrie::add_bias_subtrees`]).
    pub fn add_bias_subtrees(
        &mut self,
        trie: &TokTrie,
        nodes: &[&toktrie::FirstChar],
        mask: &mut TokenSet,
    ) -> Result<(), Error> {
        self.check_error()?;
        trie.add_bias_subtrees(self, mask, nodes);
        self.check_error()
    }

    /// The trie walk from the current position as far as the lexer decides it alone (inside
    /// the pending lexeme; see [`TokTrie::split_walk`]), building the transitions it meets:
    /// the nodes a walk with the parser would step the lexer through, without the parser at
    /// each. It depends only on the current lexer state and the lexer's transitions, which
    /// never change once built: it can be kept per lexer state and replayed with
    /// [`Parser::add_bias_split`] wherever the parse is in that state. Transitions to states
    /// numbered `limit` or above are left undecided (for a walk kept beside a lexer's
    /// copies, which number their newer states each their own way), and so is a transition
    /// that fails (a lexer limit): the parser's walk of that subtree meets the error itself.
    pub fn split_walk(&mut self, trie: &TokTrie, limit: u32) -> toktrie::SplitWalk {
        let start = self.stack.last().expect("the stack holds the start").lexer;
        let lexer = &mut self.lexer;
        trie.split_walk(start.0, |s, b| match lexer.step(StateId(s), b).ok()? {
            Step::Reject => Some(None),
            Step::Continue(n) if n.0 < limit => Some(Some(n.0)),
            _ => None,
        })
    }

    /// Adds to `mask` what [`Parser::add_bias`] would over `trie`, from a walk split at the
    /// current lexer state ([`Parser::split_walk`]): its accepted tokens, then the frontier
    /// subtrees walked from their lexer states (the row is the current one: the lexer
    /// decided the path there without ending a lexeme), then special tokens.
    pub fn add_bias_split(
        &mut self,
        trie: &TokTrie,
        walk: &toktrie::SplitWalk,
        mask: &mut TokenSet,
    ) -> Result<(), Error> {
        self.check_error()?;
        walk.add_allowed(mask);
        self.trie_started();
        let row = self.stack.last().expect("the stack holds the start").row;
        let len = self.stack.len();
        for &(node, state) in walk.frontier() {
            self.stack.push(Pos { row, lexer: StateId(state) });
            trie.walk_subtree(self, mask, node as usize);
            self.stack.truncate(len);
        }
        trie.add_bias_specials(self, mask);
        trie.add_duplicates(mask);
        self.trie_finished();
        self.check_error()
    }

    /// The lexer state at the current position (inside the pending lexeme, or the row's
    /// start state between lexemes).
    pub fn current_lexer_state(&self) -> StateId {
        self.stack.last().expect("the stack holds the start").lexer
    }

    /// The committed position as (row, lexer state). The mask is a function of it: two
    /// positions with the same key allow the same tokens, as long as no rollback happened
    /// in between (a rollback drops rows, and a row index may then be reused for another
    /// row). For mask caches.
    pub fn position_key(&self) -> (u32, StateId) {
        let p = self.stack[self.base];
        (p.row, p.lexer)
    }

    /// The lexer, mutable (e.g. for containment queries on [`Parser::current_lexer_state`]).
    pub fn lexer_mut(&mut self) -> &mut L {
        &mut self.lexer
    }

    /// Consumes the bytes of one token (a regular token: its bytes; a special token: scanned
    /// as a special terminal; EOS: only checked to be allowed).
    pub fn consume_token(&mut self, vocab: &Vocabulary, tok: TokenId) -> Result<(), Error> {
        self.check_error()?;
        let bytes = vocab
            .try_token_bytes(tok)
            .map_err(|e| Error::new(ErrorKind::Rejected, e.to_string()))?;
        if bytes.is_empty() {
            return Err(Error::new(ErrorKind::Rejected, format!("token {tok} has no bytes")));
        }
        if vocab.is_special(tok) || self.token_terminal_expected(tok)? {
            // A regular token a token terminal expects is scanned as that terminal (one
            // whole token), also where its bytes would match lexemes too (as LLGuidance).
            self.consume_special(tok)
        } else {
            let bytes = bytes.to_vec();
            self.consume_bytes(&bytes)
        }
    }

    /// Whether a token terminal can take `tok` now (after the pending lexeme, if it can end).
    fn token_terminal_expected(&mut self, tok: TokenId) -> Result<bool, Error> {
        if !self.token_terminals || self.opts.eos.contains(&tok) {
            return Ok(false);
        }
        let Some(r) = self.row_if_ended()? else { return Ok(false) };
        let yes = self.chart.expects_special(&self.cfg, r, tok.0);
        self.drop_speculative();
        Ok(yes)
    }

    /// Consumes a special token (EOS: allowed iff accepting; changes nothing else).
    pub fn consume_special(&mut self, tok: TokenId) -> Result<(), Error> {
        self.check_error()?;
        // It commits a row: none speculative below it.
        self.drop_speculative();
        self.start_step();
        let Some(r) = self.row_if_ended()? else {
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("special token {tok} not allowed here"),
            ));
        };
        if self.opts.eos.contains(&tok) {
            if !self.chart.rows[r as usize].accepting {
                return Err(Error::new(
                    ErrorKind::Rejected,
                    "EOS not allowed: the grammar is not accepting",
                ));
            }
            self.token_ends.push(self.stack.len());
            return Ok(());
        }
        let next =
            self.chart.scan(&self.cfg, &self.opts.limits, r, &LexemeSet::new(), Some(tok.0))?;
        let Some(r2) = next else {
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("special token {tok} not allowed here"),
            ));
        };
        self.after_new_row(r2, None)?;
        // A special token takes the place of a byte on the stack; its byte is the marker.
        if r != self.stack.last().expect("the stack holds the start").row {
            self.entered.push((r, self.stack.len() - 1));
        }
        self.entered.push((r2, self.stack.len()));
        self.stack.push(Pos { row: r2, lexer: self.row_start[r2 as usize] });
        self.bytes.push(toktrie::SPECIAL_TOKEN_MARKER);
        self.commit()
    }

    /// Consumes `bytes` as one token. On rejection nothing changes and the error says at
    /// which byte.
    pub fn consume_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.check_error()?;
        // It may commit rows: none speculative below them (the bytes are checked only
        // when some are kept).
        self.stack.truncate(self.base + 1);
        if self.has_speculative() && !self.within_lexeme(bytes) {
            self.drop_speculative();
        }
        self.start_step();
        let len0 = self.stack.len();
        let entered0 = self.entered.len();
        self.recording = true;
        for (i, &b) in bytes.iter().enumerate() {
            match self.push_byte_fast(b) {
                Ok(true) => {}
                Ok(false) => {
                    self.recording = false;
                    self.stack.truncate(len0);
                    self.entered.truncate(entered0);
                    return Err(Error::new(
                        ErrorKind::Rejected,
                        format!("byte {i} ({:?}) of the token rejected", b as char),
                    ));
                }
                Err(e) => {
                    self.recording = false;
                    self.error = Some(e.clone());
                    return Err(e);
                }
            }
        }
        self.recording = false;
        self.bytes.extend_from_slice(bytes);
        self.commit()
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.base = self.stack.len() - 1;
        self.token_ends.push(self.stack.len());
        if self.opts.lexeme_max_tokens.is_empty() {
            return Ok(());
        }
        self.enforce_token_limits().inspect_err(|e| self.error = Some(e.clone()))
    }

    /// After a token: if the pending lexeme's live lexemes are all `max_tokens`-limited and
    /// have used their tokens, end the lexeme here (or, not accepting, kill the parse).
    fn enforce_token_limits(&mut self) -> Result<(), Error> {
        let top_i = self.stack.len() - 1;
        let top = self.stack[top_i];
        if self.at_row_start(top) || top.lexer == StateId::DEAD {
            return Ok(());
        }
        // The pending lexeme starts at the last stack entry of this row in its start state.
        let Some(p0) = (0..top_i)
            .rev()
            .find(|&i| self.stack[i].row == top.row && self.at_row_start(self.stack[i]))
        else {
            return Ok(());
        };
        // Tokens holding its bytes so far: the one holding byte p0 up to the last one.
        let first = self.token_ends.partition_point(|&e| e - 1 <= p0);
        let used = self.token_ends.len() - first;
        // Only when every live lexeme is limited and out of tokens.
        let live = self.lexer.possible(top.lexer);
        let mut exhausted = 0;
        for &(lx, n) in &self.opts.lexeme_max_tokens {
            if live.contains(lx) {
                if used < n {
                    return Ok(());
                }
                exhausted += 1;
            }
        }
        if exhausted == 0 || exhausted != live.len() {
            return Ok(());
        }
        let ended = if self.lexer.flags(top.lexer).is_accepting() {
            self.end_lexeme(top.row, top.lexer)?
        } else {
            None
        };
        self.stack[top_i] = match ended {
            Some((r, once)) => {
                self.entered.push((r, top_i));
                Pos { row: r, lexer: self.start_after(r, once) }
            }
            None => Pos { row: top.row, lexer: StateId::DEAD },
        };
        Ok(())
    }

    /// The number of tokens consumed.
    pub fn num_tokens(&self) -> usize {
        self.token_ends.len()
    }

    /// Undoes the last `n` tokens. Errors if fewer were consumed.
    pub fn rollback(&mut self, n: usize) -> Result<(), Error> {
        if n > self.token_ends.len() {
            return Err(Error::new(
                ErrorKind::Rejected,
                format!("cannot roll back {n} tokens: only {} consumed", self.token_ends.len()),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let keep_tokens = self.token_ends.len() - n;
        self.token_ends.truncate(keep_tokens);
        let len = self.token_ends.last().copied().unwrap_or(1);
        self.stack.truncate(len);
        self.bytes.truncate(len - 1);
        self.base = len - 1;
        let last_row = self.stack[self.base].row;
        while self.entered.last().is_some_and(|&(r, at)| r > last_row || at > self.base) {
            self.entered.pop();
        }
        // Rows after the committed stack are dropped (the error, if any, stays: it may have
        // come from a limit that the same tokens would hit again).
        self.truncate_rows(self.committed_rows());
        Ok(())
    }

    /// The bytes every continuation must start with (empty if the grammar may end here or
    /// several bytes are possible). Exact: found by trying every byte.
    pub fn forced_bytes(&mut self) -> Result<Vec<u8>, Error> {
        self.check_error()?;
        let mut out = Vec::new();
        let len0 = self.stack.len();
        loop {
            if out.len() >= 4096 {
                break;
            }
            let r = self.row_if_ended()?;
            if r.is_some_and(|r| {
                let row = &self.chart.rows[r as usize];
                row.accepting || row.has_special
            }) {
                break;
            }
            let mut only = None;
            let mut count = 0;
            for b in 0..=255u8 {
                if self.push_byte(b)? {
                    self.stack.pop();
                    count += 1;
                    only = Some(b);
                    if count > 1 {
                        break;
                    }
                }
            }
            match (count, only) {
                (1, Some(b)) => {
                    self.push_byte(b)?;
                    out.push(b);
                }
                _ => break,
            }
        }
        self.stack.truncate(len0);
        Ok(out)
    }

    /// Captures of finished rules on the committed input: `(name, bytes)` in the order their
    /// rules finished. A pending lexeme (one that could still grow) is not finished yet.
    pub fn captures(&self) -> Vec<(String, Vec<u8>)>
    where
        L: Clone,
    {
        self.captures_with(&mut self.lexer.clone())
    }

    /// [`Parser::captures`] with `lexer` (built from the same spec) for the regex stops: for
    /// callers whose parser holds a placeholder while the real lexer is shared.
    pub fn captures_with(&self, lexer: &mut L) -> Vec<(String, Vec<u8>)> {
        let pos: HashMap<u32, usize> = self.entered.iter().map(|&(r, at)| (r, at)).collect();
        let mut out = Vec::new();
        for &(r, end) in &self.entered {
            for (lhs, origin) in self.chart.completed(&self.cfg, r) {
                let props = &self.cfg.symbol(lhs).props;
                if props.capture.is_none() && props.stop_capture.is_none() {
                    continue;
                }
                let Some(&start) = pos.get(&origin) else { continue };
                if start > end || end > self.bytes.len() {
                    continue;
                }
                let text = &self.bytes[start..end];
                // A stop string ends the text but is not part of it: a literal one, or the
                // shortest suffix a regex stop matches.
                let stop_len = match (&props.stop, props.stop_lexeme) {
                    (Some(s), _) if text.ends_with(s) => s.len(),
                    (_, Some(lx)) => regex_suffix_len(lexer, text, lx),
                    _ => 0,
                };
                let (body, stop) = text.split_at(text.len() - stop_len);
                if let Some(name) = &props.capture {
                    out.push((name.clone(), body.to_vec()));
                }
                if let Some(name) = &props.stop_capture {
                    out.push((name.clone(), stop.to_vec()));
                }
            }
        }
        out
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

/// The length of the shortest suffix of `text` that lexeme `lx` matches whole (0 if none).
fn regex_suffix_len<L: Lexer>(lexer: &mut L, text: &[u8], lx: LexemeIdx) -> usize {
    let mut only = LexemeSet::new();
    only.insert(lx);
    let Ok(s0) = lexer.start_state(&only) else { return 0 };
    for i in (0..text.len()).rev() {
        let mut s = s0;
        for &b in &text[i..] {
            match lexer.advance(s, b) {
                Ok(n) if n != StateId::DEAD => s = n,
                _ => {
                    s = StateId::DEAD;
                    break;
                }
            }
        }
        if s != StateId::DEAD && lexer.accepting(s).contains(lx) {
            return text.len() - i;
        }
    }
    0
}

fn lexer_error(e: lexer::Error) -> Error {
    Error::new(ErrorKind::Lexer, e.to_string())
}

impl<L: Lexer> Recognizer for Parser<L> {
    #[inline(always)]
    fn try_push_byte(&mut self, byte: u8) -> bool {
        // Hot path: a known transition inside the lexeme; the row stays.
        match self.push_byte_fast(byte) {
            Ok(ok) => ok,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
                false
            }
        }
    }

    #[inline]
    fn pop_bytes(&mut self, num: usize) {
        let len = self.stack.len() - num;
        debug_assert!(len > self.base);
        self.stack.truncate(len.max(self.base + 1));
    }

    fn collapse(&mut self) {
        self.base = self.stack.len() - 1;
    }

    fn any_special_allowed(&mut self) -> bool {
        // EOS needs an accepting row, other special tokens a row expecting one; with no
        // lexeme pending (or the pending one able to end) that is the row after it.
        match self.row_if_ended() {
            Ok(Some(r)) => {
                let row = &self.chart.rows[r as usize];
                row.accepting || row.has_special
            }
            Ok(None) => false,
            // Let the per-token path record the error.
            Err(_) => true,
        }
    }

    fn special_allowed(&mut self, tok: TokenId) -> bool {
        match self.special_ok(tok) {
            Ok(ok) => ok,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e);
                }
                false
            }
        }
    }

    fn trie_started(&mut self) {
        self.start_step();
    }

    fn trie_finished(&mut self) {
        self.end_walk();
    }
}
