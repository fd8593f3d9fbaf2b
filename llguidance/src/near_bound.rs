//! Masks inside and near bounded repeats (a JSON string's `maxLength`, a Lark `{m,n}`): the
//! lexer state a mask is computed at, and how that mask is finished for the state itself.
//!
//! - With more room than the longest token, the state's counter twin has the same mask
//!   (`lexer::DerivreLexer::mask_twin`): one state for all such positions, whose walks,
//!   proofs and first-row masks are kept.
//! - Nearer the bound, a single `B{m,n} R` member: the run twin's mask less the tokens whose
//!   leading run of `B` does not fit (`lexer::DerivreLexer::run_bound`, `slicer::RunTable`);
//!   from one position to the next, the last mask restricted in place ([`narrows`]).
//! - At a long string's chunk end, where the next row starts as this one did, the chunk
//!   middle's twin ([`RowTwin`], `chunk_twin`).
//! - Otherwise the twin for tokens of at most `h` bytes gives their part of the mask, and
//!   the longer ones are walked from the state itself (`slicer::LengthSplit`).
//!
//! (At a mask, the committed position is the current one.) Tests:
//! `tests/soundness.rs::counter_twins_equal_the_plain_walk`.

use std::sync::Arc;

use earley::Parser;
use lexer::{DerivreLexer, RunBound, StateId};
use slicer::RunTable;
use toktrie::TokenSet;

use crate::shared::Shared;
use crate::slicing::{walk_long, Slicing, TemplateWalks};
use crate::Error;

/// Length-split twins a matcher remembers the first state of (`Slicing::split_twins`).
const SPLIT_TWINS: usize = 4096;

/// How a mask computed at a twin is finished for the real state.
pub(crate) enum Near<'a> {
    /// The twin's mask is the state's.
    Same,
    /// Keep the tokens whose leading run fits the bound.
    Run(RunBound),
    /// Keep the short tokens, walk the long ones from the state.
    Split(&'a slicer::LengthSplit),
}

/// The counter twin the masks of a row were last computed at (the middle of a long
/// string's chunk), and, once asked, whether the row's lexeme ended at `repeats.0` leads to
/// a row with the same start state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowTwin {
    pub(crate) row: u32,
    pub(crate) twin: StateId,
    pub(crate) repeats: Option<(StateId, bool)>,
}

/// The state `real`'s mask is computed at, and how it is then finished. `row_twin` is the
/// matcher's [`RowTwin`] (cleared by a rollback, which may reuse a row's number).
pub(crate) fn mask_state<'a>(
    p: &mut Parser<DerivreLexer>,
    shared: &'a Shared,
    slicing: &mut Slicing,
    real: StateId,
    row_twin: &mut Option<RowTwin>,
) -> (StateId, Near<'a>) {
    let row = p.position_key().0;
    let at = p.lexer_mut().mask_twin(real).unwrap_or(real);
    if at != real && !shared.plain && row_twin.is_none_or(|t| (t.row, t.twin) != (row, at)) {
        *row_twin = Some(RowTwin { row, twin: at, repeats: None });
    }
    // A repeat that twin found (a body of 2 bytes or more): the vocabulary's iteration
    // limits for its body, by which the twins of the states after this one relax (this
    // one's, made without them, is sound).
    for dfa in p.lexer_mut().take_new_iter_dfas() {
        if !shared.plain {
            let limits = shared.iteration_limits(&dfa);
            p.lexer_mut().set_iteration_limits(&dfa, limits);
        }
    }
    // A repeat's character automaton is built where the repeat's counter twin is (its
    // start): its vocabulary table too, not at a mask deep into a long value.
    for dfa in p.lexer_mut().take_new_run_dfas() {
        if !shared.plain {
            shared.run_table(&dfa);
        }
    }
    if at != real || shared.plain {
        return (at, Near::Same);
    }
    if let Some(t) = chunk_twin(p, shared, slicing, real, row, row_twin) {
        slicing.chunk_ends += 1;
        return (t, Near::Same);
    }
    if let Ok(Some(rb)) = p.lexer_mut().run_bound(real) {
        return (rb.twin, Near::Run(rb));
    }
    // A smaller `h` relaxes whatever a larger one does: the smallest split first (most
    // states have no twin at any), then the largest that relaxes.
    let splits = shared.length_splits();
    let twin_at =
        |p: &mut Parser<DerivreLexer>, h| p.lexer_mut().mask_twin_at(real, h).unwrap_or(real);
    if splits.last().is_some_and(|s| twin_at(p, s.h()) != real) {
        // A lexeme that must end within the slices' runs (a chunk of a long string) takes
        // the mask at the state itself, its crossing tokens proven slice by slice
        // (`crate::slicing::sliced_mask`), which costs less than walking the long ones.
        if let Some(slices) = shared.slices.as_ref().filter(|_| slicing.on) {
            let longest = shared.trie.max_token_len();
            if crate::slicing::ends_within_run(p, real, slices, slicing, longest) {
                return (real, Near::Same);
            }
        }
        for s in splits {
            let g = twin_at(p, s.h());
            if g != real {
                // At the smallest split only (no twin at a larger one: a count of a few bytes,
                // such as a UUID's in a search, rather than a bound with 16 bytes of room),
                // the state's own mask where it allows every run slice whole.
                let smallest = splits.last().is_some_and(|l| l.h() == s.h());
                if let Some(slices) = shared.slices.as_ref().filter(|_| slicing.on && smallest) {
                    if crate::slicing::all_but_last_whole(p, real, slices, slicing) {
                        return (real, Near::Same);
                    }
                }
                // A twin met for the first time costs a walk of its own and the long tokens'
                // walk from the state, where the state's own mask costs one walk (and is
                // kept for the state's next masks): the twin pays only where another state
                // comes to it (the positions of one value nearing its bound), not in a union
                // whose fixed-length members make each position's twin new (a string of any
                // of several formats).
                if slicing.split_twins.len() >= SPLIT_TWINS {
                    // (Forgetting costs a state's own walk where a twin would have served.)
                    slicing.split_twins.clear();
                }
                if *slicing.split_twins.entry(g.0).or_insert(real.0) == real.0 {
                    return (real, Near::Same);
                }
                return (g, Near::Split(s));
            }
        }
    }
    (real, Near::Same)
}

/// At the last positions of a long string's chunk (a lexeme that ends within a run of the
/// slices' most common character, read up to the longest token), the counter twin of the
/// chunk's middle, where the row the chunk ends into has the row's own start state: the
/// same lexemes (another chunk, the tail) take every token's rest past the end as they take
/// it in the middle, where the twin's relaxed count never ends the chunk within a token.
/// A token of string characters lives on in the next chunk either way; one with the
/// closing quote ends the tail in this row or, past the end, in the next, whose completion
/// of the string is the same. The rows differ only in the number of chunks, which the same
/// start state says does not matter yet. Asked once per row and end state; `None` where it
/// does not hold (the last chunk before the tail must start, a minimum still to reach), and
/// the state's own mask is taken, its slices proven past the end
/// (`slicing::past_end_whole`).
fn chunk_twin(
    p: &mut Parser<DerivreLexer>,
    shared: &Shared,
    slicing: &mut Slicing,
    real: StateId,
    row: u32,
    row_twin: &mut Option<RowTwin>,
) -> Option<StateId> {
    let rt = row_twin.as_mut().filter(|t| t.row == row)?;
    let slices = shared.slices.as_ref().filter(|_| slicing.on)?;
    // A long string's chunk and tail lexemes only: the same lexemes at a row's start as in
    // its middle (a count of string characters, a count then the quote). A lexeme such as
    // Lark's `/x[a-z]{1000}/` begins otherwise than it goes on, and one allowed only after
    // the chunk (`A* B`) takes a rest that the middle's twin does not.
    let lx = p.lexer_mut();
    if !only_chunks(lx, real) || !only_chunks(lx, rt.twin) {
        return None;
    }
    // Past the longest token's length from the end the state has its own counter twin.
    let longest = shared.trie.max_token_len();
    let (end, _) = crate::slicing::run_end_within(p, real, slices, slicing, longest)?;
    let same = match rt.repeats {
        Some((e, same)) if e == end => same,
        _ => {
            let start = p.row_start_state();
            let same = only_chunks(p.lexer_mut(), start)
                && matches!(p.start_after_end(end), Ok(Some(s)) if s == start);
            rt.repeats = Some((end, same));
            same
        }
    };
    same.then_some(rt.twin)
}

/// Whether every lexeme alive at `state` is a long string's chunk or tail.
fn only_chunks(lx: &DerivreLexer, state: StateId) -> bool {
    use lexer::Lexer;
    let specs = &lx.spec().lexemes;
    let chunky =
        |l: &lexer::LexemeSpec| l.name.starts_with(grammars::json_schema::LONG_STRING_LEXEMES);
    lx.possible(state).iter().all(|l| specs.get(l.as_usize()).is_some_and(chunky))
}

/// The vocabulary's table for the run automaton `dfa` (the last one used kept at hand).
fn run_table(shared: &Shared, slicing: &mut Slicing, dfa: &Arc<lexer::RunDfa>) -> Arc<RunTable> {
    match &slicing.run_table {
        Some((d, t)) if Arc::ptr_eq(d, dfa) => t.clone(),
        _ => {
            let t = shared.run_table(dfa);
            slicing.run_table = Some((dfa.clone(), t.clone()));
            t
        }
    }
}

/// Whether the last mask, a run twin's (at row `last_row`, restricted to `last`) in a
/// grammar without token terminals, narrows to the mask for `rb` at row `row`: the same
/// twin, automaton and minimum, a maximum no larger. Then the mask is the last one less the
/// tokens that read more than `rb.max` characters of the run
/// ([`slicer::RunTable::narrow`], in place): consecutive positions near the end of a
/// bounded string copy no mask. (The first such position restricts the mask of the
/// counter twin before it, where that is the run twin.) Without token terminals only,
/// which a finished mask adds at its position.
pub(crate) fn narrows(last_row: u32, last: &RunBound, row: u32, rb: &RunBound) -> bool {
    last_row == row
        && last.twin == rb.twin
        && last.min == rb.min
        && rb.max <= last.max
        && Arc::ptr_eq(&last.dfa, &rb.dfa)
}

/// `mask`, the last mask, restricted to `rb` in place: narrowed from `from` (see
/// [`narrows`]), or, the run twin's own mask (`None`), restricted.
pub(crate) fn narrow(
    shared: &Shared,
    slicing: &mut Slicing,
    from: Option<&RunBound>,
    rb: &RunBound,
    mask: &mut TokenSet,
) {
    slicing.runs += 1;
    slicing.narrowed += 1;
    let table = run_table(shared, slicing, &rb.dfa);
    match from {
        Some(from) => table.narrow(mask, from.max, rb.max),
        None => table.restrict(mask, rb.min, rb.max),
    }
}

/// The real state's mask from `mask`, the mask at the state [`mask_state`] answered (the
/// parser back at the real state).
pub(crate) fn finish(
    near: Near<'_>,
    p: &mut Parser<DerivreLexer>,
    shared: &Shared,
    slicing: &mut Slicing,
    walks: Option<TemplateWalks<'_>>,
    mut mask: TokenSet,
) -> Result<TokenSet, Error> {
    match near {
        Near::Same => return Ok(mask),
        Near::Run(rb) => {
            slicing.runs += 1;
            run_table(shared, slicing, &rb.dfa).restrict(&mut mask, rb.min, rb.max);
        }
        Near::Split(s) => {
            slicing.splits += 1;
            mask.intersect(s.short());
            walk_long(p, s, slicing, walks, &mut mask)?;
        }
    }
    // The token terminals the intersection may have dropped.
    p.add_token_terminals(&mut mask)?;
    Ok(mask)
}
