//! Slice planning for a mask: which vocabulary slices the lexer state provably allows whole
//! (OR-ed in from their precomputed masks), which are proven in part by first character
//! ([`part_proof`]), and which are walked; and the split trie walks kept per lexer state
//! ([`Walks`]), replayed by later masks at the same state. The containment proofs
//! themselves are the lexer's (`lexer::Lexer::check_prefixes`); the slices are the
//! `slicer` crate's. Every shortcut here is checked against the plain computation by
//! `tests/soundness.rs` and `tests/slicer.rs`.

use hashbrown::HashMap;
use std::sync::{Arc, RwLock};

use earley::Parser;
use lexer::DerivreLexer;
use toktrie::TokenSet;

use crate::Error;

/// A grammar template's split walks and the number of its states (walks at state ids
/// below it are shared by every matcher copied from the template).
#[derive(Clone, Copy)]
pub(crate) struct TemplateWalks<'a> {
    pub(crate) walks: &'a RwLock<Walks>,
    pub(crate) states: usize,
}

/// Slicer state of a matcher: on/off, containment answers cached by lexer state and slice,
/// counters.
#[derive(Clone, Default)]
pub(crate) struct Slicing {
    pub(crate) on: bool,
    pub(crate) cache: HashMap<(u32, usize), bool>,
    /// Slices proven in part (by first character) at a lexer state; `None`: not that way.
    pub(crate) parts: HashMap<(u32, usize), Option<Arc<PartProof>>>,
    /// Whether the state after a first character contains a slice's tail query, keyed by
    /// (state, 2 × slice + 1 for the cheap check's answer).
    pub(crate) tails: HashMap<(u32, usize), bool>,
    /// Whether a lexer state's lexeme ends within a run of slice characters
    /// ([`ends_within_run`]).
    pub(crate) boundary: HashMap<u32, bool>,
    /// Whether `boundary` holds a state that ends within a run.
    pub(crate) boundary_any: bool,
    /// Where a lexer state's lexeme ends, read with the slices' most common byte, and
    /// after how many bytes ([`run_end_within`]).
    pub(crate) run_ends: HashMap<u32, Option<(lexer::StateId, usize)>>,
    /// The length-split twins asked for, each with the state first asked at
    /// (`crate::near_bound::mask_state` takes a twin from another state's request on).
    pub(crate) split_twins: HashMap<u32, u32>,
    /// The shared lexer's split walks, while swapped in.
    pub(crate) walks: Walks,
    /// Trie walks replayed from a split walk.
    pub(crate) split: u64,
    pub(crate) partial: u64,
    pub(crate) applied: u64,
    pub(crate) walked: u64,
    /// Masks computed at a counter twin.
    pub(crate) twins: u64,
    /// Masks split by token length near a bound.
    pub(crate) splits: u64,
    /// Masks at a run twin.
    pub(crate) runs: u64,
    /// Of those, the masks narrowed from the last one.
    pub(crate) narrowed: u64,
    /// Masks whose walked slices' frontier subtrees may be proven whole (a lexeme ending
    /// within their runs).
    pub(crate) boundaries: u64,
    /// Masks at a long string's chunk end taken at the chunk middle's counter twin.
    pub(crate) chunk_ends: u64,
    /// The last run table used, by its automaton (the same `Arc` from the lexer each time:
    /// no lock and no hash of the automaton per mask).
    pub(crate) run_table: Option<(Arc<lexer::RunDfa>, Arc<slicer::RunTable>)>,
}

/// Most minority states (after a first character) a partial proof asks about.
const MAX_MINOR_STATES: usize = 4;

/// A slice proven in part at a lexer state: its tokens are allowed except those under the
/// first-character nodes `dead` (none allowed) and `walk` (walked); indices into
/// [`slicer::Slice::first_chars`].
#[derive(Debug)]
pub(crate) struct PartProof {
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
pub(crate) struct Walks {
    map: HashMap<(u32, u32), Walk>,
    /// The kept walks' pieces by (trie, first-level node, state after it): a new state's
    /// walk takes each first-level subtree it enters in a state an earlier walk entered it
    /// in (`toktrie::TokTrie::split_walk_reusing`). A key's known prefix and the string
    /// after it leave the same state after most first bytes: in first instances 57 % of the
    /// nodes split walks visited were in such subtrees.
    pieces: HashMap<(u32, u32, u32), (Arc<toktrie::SplitWalk>, u32)>,
    /// Memory of the split walks, in bytes (at most [`WALK_MAX_BYTES`]).
    bytes: usize,
}

/// Memory of an entry of [`Walks::pieces`], in bytes.
const PIECE_ENTRY_BYTES: usize = 40;

#[derive(Clone)]
enum Walk {
    /// Split by this lexer (or the template's), not worth keeping: walked whole.
    Plain,
    Split(Arc<toktrie::SplitWalk>),
}

impl Walks {
    /// These walks and those of a lexer copied from their template, for the lexer as the
    /// next template (its split walks as memory allows, and its `Plain` marks).
    pub(crate) fn merged(&self, own: Walks) -> Walks {
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

    /// Keeps a split walk if it is worth it (and memory allows): it decided enough nodes,
    /// or `proving` (a walk whose frontier subtrees may be proven whole saves their walks
    /// however few nodes the lexer decided).
    fn keep(&mut self, key: (u32, u32), w: toktrie::SplitWalk, proving: bool) -> bool {
        (proving || w.decided() >= WALK_MIN_DECIDED) && self.keep_arc(key, Arc::new(w))
    }

    fn keep_arc(&mut self, key: (u32, u32), w: Arc<toktrie::SplitWalk>) -> bool {
        let bytes = w.num_bytes() + w.pieces().len() * PIECE_ENTRY_BYTES;
        let keep = self.bytes + bytes <= WALK_MAX_BYTES;
        if keep {
            self.bytes += bytes;
            for (node, state, i) in w.pieces() {
                self.pieces.entry((key.1, node, state)).or_insert_with(|| (w.clone(), i as u32));
            }
            self.map.insert(key, Walk::Split(w));
        }
        keep
    }

    /// The piece of trie `id`'s walks at first-level node `node` entered in `state`.
    fn piece(&self, id: u32, node: u32, state: u32) -> Option<toktrie::PieceRef<'_>> {
        let (walk, index) = self.pieces.get(&(id, node, state))?;
        Some(toktrie::PieceRef { walk, index: *index as usize })
    }
}

/// `Err(Cancelled)` when the parser's cancellation flag is set (between the slicer's steps:
/// containment checks and split walks run on the lexer, outside the parser's own checks).
fn check_cancel(p: &Parser<DerivreLexer>) -> Result<(), Error> {
    match p.cancel_flag() {
        Some(f) if f.load(std::sync::atomic::Ordering::Relaxed) => Err(crate::Cancelled.into()),
        _ => Ok(()),
    }
}

/// Whether `state` contains `slice` (its query; cheaply for a small slice, see
/// `lexer::Lexer::check_prefixes_cheap`).
fn contains(lx: &mut DerivreLexer, state: lexer::StateId, slice: &slicer::Slice) -> bool {
    contains_query(lx, state, slice, slice.query())
}

/// [`contains`] for `query`, one of the slice's queries.
fn contains_query(
    lx: &mut DerivreLexer,
    state: lexer::StateId,
    slice: &slicer::Slice,
    query: &lexer::RegexSpec,
) -> bool {
    use lexer::Lexer;
    let c = if slice.is_small() {
        lx.check_prefixes_cheap(state, query)
    } else {
        lx.check_prefixes(state, query)
    };
    c == lexer::Containment::Contained
}

/// Whether the next lexeme, starting in `state`, takes the rest of every token of `slice`
/// that crosses a lexeme's end: its containment of the slice's bounded query (cached with
/// the containment answers, under a key of its own where that query differs).
fn takes_rest(
    lx: &mut DerivreLexer,
    state: lexer::StateId,
    slice: &slicer::Slice,
    i: usize,
    cache: &mut HashMap<(u32, usize), bool>,
) -> bool {
    let q = slice.bounded_query();
    let key = if q == slice.query() { i } else { usize::MAX - i };
    *cache.entry((state.0, key)).or_insert_with(|| contains_query(lx, state, slice, q))
}

/// A slice whose containment may allow frontier subtrees of its trie whole (see
/// [`Parser::add_bias_split_proving`]): the slice and the containment cache.
type SliceProof<'a> = (&'a slicer::Slice, usize, &'a mut HashMap<(u32, usize), bool>);

/// Frontier subtrees of at most this many nodes are walked, not proven, once their byte
/// has a proof after another state (see [`earley::SubtreeProof::min_nodes`]).
const PROVE_MIN_NODES: usize = 16;

/// Walks `trie` (`id` in [`Walks`]) from the parser's position into `mask`, from a split
/// walk where the lexer state has one: the template's walks where it knows the state (split
/// through its states only, whose numbers every lexer copied from it shares), else `own`.
/// With `proof` (slice `i`'s trie), its frontier subtrees are allowed whole where the lexer
/// state after the subtree's first byte takes the rest of the slice's tokens
/// ([`takes_rest`]).
fn walk_trie(
    p: &mut Parser<DerivreLexer>,
    trie: &toktrie::TokTrie,
    id: u32,
    own: &mut Walks,
    template: Option<TemplateWalks<'_>>,
    mask: &mut TokenSet,
    proof: Option<SliceProof<'_>>,
) -> Result<bool, Error> {
    let key = (p.current_lexer_state().0, id);
    let shared = template.filter(|t| (key.0 as usize) < t.states);
    let limit = shared.map_or(u32::MAX, |t| t.states as u32);
    let shared = shared.map(|t| t.walks);
    let found = shared
        .and_then(|t| lexer::read_cache(t)?.map.get(&key).cloned())
        .or_else(|| own.map.get(&key).cloned());
    let proving = proof.is_some();
    // The slice's mask and its containment at the state after a frontier node's byte.
    let mut prove = proof.map(|(slice, i, cache)| {
        let contained = move |p: &mut Parser<DerivreLexer>| {
            let state = p.current_lexer_state();
            takes_rest(p.lexer_mut(), state, slice, i, cache)
        };
        (slice.mask(), contained)
    });
    let mut split = |p: &mut Parser<DerivreLexer>, w: &toktrie::SplitWalk, mask: &mut TokenSet| {
        let Some((all, f)) = prove.as_mut() else { return p.add_bias_split(trie, w, mask) };
        let proof = earley::SubtreeProof { min_nodes: PROVE_MIN_NODES, all, prove: f };
        p.add_bias_split_proving(trie, w, mask, proof)
    };
    let w = match found {
        Some(Walk::Split(w)) => return Ok(split(p, &w, mask).map(|()| true)?),
        Some(Walk::Plain) => return Ok(p.add_bias(trie, mask).map(|()| false)?),
        // The state's first walk in this lexer (or in the template's): split, and kept
        // (not when cancelled during it: the walk stops deciding, see `Parser::split_walk`).
        // Pieces of the template's walks (states below its count, numbered alike in every
        // lexer copied from it) for any walk; of this lexer's own only for a walk of its own.
        None => {
            let t = template.and_then(|t| lexer::read_cache(t.walks));
            let mine = (limit == u32::MAX).then_some(&*own);
            let w = p.split_walk(trie, limit, |node, state| {
                let t = t.as_deref().and_then(|t| t.piece(id, node, state));
                t.or_else(|| mine?.piece(id, node, state))
            });
            drop(t);
            check_cancel(p)?;
            w
        }
    };
    split(p, &w, mask)?;
    let kept = match shared {
        Some(t) => match lexer::write_cache(t) {
            Some(mut t) => t.keep(key, w, proving),
            None => own.keep(key, w, proving),
        },
        None => own.keep(key, w, proving),
    };
    if !kept {
        own.map.insert(key, Walk::Plain);
    }
    Ok(true)
}

/// [`Walks`] id of the long-token trie of the [`slicer::LengthSplit`] at `h` bytes (below
/// [`FULL_TRIE`], above any slice's index).
const LONG_TRIES: u32 = FULL_TRIE - 256;

/// Adds the long tokens of `split` allowed from the parser's position to `mask`, from a
/// split walk kept per lexer state as for the slices (the states near a bound come back at
/// every chunk of a long string, and at every instance).
pub(crate) fn walk_long(
    p: &mut Parser<DerivreLexer>,
    split: &slicer::LengthSplit,
    st: &mut Slicing,
    template: Option<TemplateWalks<'_>>,
    mask: &mut TokenSet,
) -> Result<(), Error> {
    let id = LONG_TRIES + split.h().min(255);
    st.split += walk_trie(p, split.long(), id, &mut st.walks, template, mask, None)? as u64;
    Ok(())
}

/// Whether every token of `slice` is allowed at `state`, where the lexeme must end within
/// its runs: every run of the slice's class of fewer than `r` characters continues the
/// lexeme and every run of `r` ends it in one state (`lexer::DerivreLexer::run_end`, cached
/// by the lexer), after which the row takes it and the next lexeme's start state takes the
/// rest of every token ([`takes_rest`]: the slice's bounded query). A token of at most `r`
/// characters then stays within the lexeme, a longer one ends it after `r` and its rest is
/// a run the next lexeme takes. `false` is always safe (the slice is walked).
fn past_end_whole(
    p: &mut Parser<DerivreLexer>,
    state: lexer::StateId,
    slice: &slicer::Slice,
    i: usize,
    st: &mut Slicing,
    after: &mut Option<(lexer::StateId, Option<lexer::StateId>)>,
) -> Result<bool, Error> {
    let limit = BOUNDARY_MAX_CHARS as u32;
    let Some((_, e)) = p.lexer_mut().run_end(state, slice.query(), limit) else {
        return Ok(false);
    };
    // Slices of one class end the lexeme in the same state: its next start once a mask.
    let next = match *after {
        Some((x, next)) if x == e => next,
        _ => {
            let next = p.start_after_end(e)?;
            *after = Some((e, next));
            next
        }
    };
    let Some(next) = next else { return Ok(false) };
    Ok(takes_rest(p.lexer_mut(), next, slice, i, &mut st.cache))
}

/// Whether slice `i` is allowed whole at `state` (its containment, cached per state and
/// slice); a slice whose necessary condition failed in `contained` (the answers for the
/// slices before it) is not asked (see `Slice::requires`).
fn whole_at(
    p: &mut Parser<DerivreLexer>,
    st: &mut Slicing,
    state: lexer::StateId,
    i: usize,
    slice: &slicer::Slice,
    contained: &[bool],
) -> bool {
    slice.requires().is_none_or(|r| contained[r])
        && *st.cache.entry((state.0, i)).or_insert_with(|| contains(p.lexer_mut(), state, slice))
}

/// Whether every slice but the last (the catch-all, free text in the standard set) is
/// allowed whole at `state` (their containment, cached with the answers [`sliced_mask`]
/// asks): the mask at the state itself then walks one slice, less than the long tokens of
/// a split by length (a `pattern` that searches for a UUID anywhere in a string: ~40 µs a
/// mask, where the split walked ~600). Where a run slice is walked too (a `maxLength: 32`
/// string 5 characters in allows only the short runs whole) the split costs less (0.5 ms,
/// where the state's own mask walked 1.5), and so may the containment checks that fail
/// (`near_bound::mask_state` asks at the smallest split only). Only where no lazy lexeme
/// may match (as `sliced_mask`'s whole checks); stops at the first slice not allowed
/// whole.
pub(crate) fn all_but_last_whole(
    p: &mut Parser<DerivreLexer>,
    state: lexer::StateId,
    slices: &slicer::Slices,
    st: &mut Slicing,
) -> bool {
    let n = slices.slices().len();
    if n < 2 || p.lexer_mut().lazy_possible(state) {
        return false;
    }
    let mut contained = Vec::with_capacity(n);
    for (i, slice) in slices.slices()[..n - 1].iter().enumerate() {
        if !whole_at(p, st, state, i, slice, &contained) {
            return false;
        }
        contained.push(true);
    }
    true
}

/// Where the lexeme at `state` ends when read with the slices' most common byte, and after
/// how many bytes: the last state before that byte is rejected, if it accepts (a chunk of
/// a long string near its end), read up to the longer of `longest` (the vocabulary's
/// longest token, the same at every call) and [`BOUNDARY_MAX_CHARS`]; `None` otherwise.
/// Cached by state. Read by [`ends_within_run`] and `near_bound::chunk_twin`.
pub(crate) fn run_end_within(
    p: &mut Parser<DerivreLexer>,
    state: lexer::StateId,
    slices: &slicer::Slices,
    st: &mut Slicing,
    longest: usize,
) -> Option<(lexer::StateId, usize)> {
    use lexer::{Lexer, StateId};
    if let Some(&e) = st.run_ends.get(&state.0) {
        return e;
    }
    let lx = p.lexer_mut();
    let mut end = None;
    if let Some(&b) = slices.common_bytes().first() {
        let mut s = state;
        for n in 0..(longest + 1).max(BOUNDARY_MAX_CHARS) {
            // A lexer limit: not read further (the walk meets it itself).
            let Ok(next) = lx.advance(s, b) else { break };
            if next == StateId::DEAD {
                end = (n > 0 && lx.flags(s).is_accepting()).then_some((s, n));
                break;
            }
            s = next;
        }
    }
    st.run_ends.insert(state.0, end);
    end
}

/// A lexeme ending within fewer characters than this is one [`ends_within_run`] answers.
const BOUNDARY_MAX_CHARS: usize = 48;

/// Whether the lexeme at `state` ends within a run of a string body's characters: read
/// with the slices' most common byte ([`slicer::Slices::common_bytes`]; the second one must
/// continue it too), it stays alive for at least one character and then dies where it may
/// end (a fixed-length chunk of a long string near its end). Only the mask's strategy
/// depends on it (cached by state): the proofs it enables are checked where they are made.
pub(crate) fn ends_within_run(
    p: &mut Parser<DerivreLexer>,
    state: lexer::StateId,
    slices: &slicer::Slices,
    st: &mut Slicing,
    longest: usize,
) -> bool {
    use lexer::{Lexer, StateId};
    if let Some(&b) = st.boundary.get(&state.0) {
        return b;
    }
    let common = slices.common_bytes();
    let lx = p.lexer_mut();
    // The other common characters continue the lexeme too (not a run of spaces alone,
    // such as a bounded whitespace lexeme, whose next lexeme takes none of the slices).
    let others_go_on =
        common.iter().skip(1).all(|&b| lx.advance(state, b).is_ok_and(|n| n != StateId::DEAD));
    let ends = others_go_on
        && run_end_within(p, state, slices, st, longest)
            .is_some_and(|(_, n)| n < BOUNDARY_MAX_CHARS);
    st.boundary.insert(state.0, ends);
    st.boundary_any |= ends;
    ends
}

/// The mask as the union of the slices: a slice the lexer proves allowed is OR-ed in whole,
/// the others (and the rest, with special tokens) are walked.
pub(crate) fn sliced_mask(
    p: &mut Parser<DerivreLexer>,
    slices: &slicer::Slices,
    full: &toktrie::TokTrie,
    st: &mut Slicing,
    template: Option<TemplateWalks<'_>>,
    scratch: Option<TokenSet>,
) -> Result<TokenSet, Error> {
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
        check_cancel(p)?;
        let whole = |p: &mut Parser<DerivreLexer>, st: &mut Slicing, contained: &[bool]| {
            whole_at(p, st, state, i, slice, contained)
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
    let nothing = !contained.contains(&true) && parts.iter().all(Option::is_none);
    // Where a lexeme must end within the slices' tokens (a chunk of a long string), its
    // tokens cross into the next lexeme: walked per slice, the subtrees below the end
    // proven by the next lexeme's containment of the slice. Asked where nothing is
    // contained, or known from `near_bound::mask_state` (which asks before splitting by
    // token length): not at every state where some slice is walked (free text in every
    // string).
    let walked_slice = contained.iter().zip(&parts).any(|(&c, part)| !c && part.is_none());
    let boundary = walked_slice
        && if nothing {
            ends_within_run(p, state, slices, st, full.max_token_len())
        } else {
            // (A lookup only once some state was found to end within a run.)
            st.boundary_any && st.boundary.get(&state.0) == Some(&true)
        };
    st.boundaries += u64::from(boundary);
    if nothing && !boundary {
        // Nothing to skip: one walk of the whole trie is cheaper than one per slice.
        st.walked += 1;
        let mut mask = match scratch {
            Some(mut s) => {
                s.clear();
                s
            }
            None => TokenSet::new(n),
        };
        st.split += walk_trie(p, full, FULL_TRIE, &mut st.walks, template, &mut mask, None)? as u64;
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
    // The next lexeme's start past the lexeme's end (`past_end_whole`), once a mask.
    let mut after = None;
    for (i, ((slice, &contained), part)) in
        slices.slices().iter().zip(&contained).zip(&parts).enumerate()
    {
        check_cancel(p)?;
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
        } else if boundary && past_end_whole(p, state, slice, i, st, &mut after)? {
            // Every token of the slice: within the lexeme, or across its end into the next.
            mask.union(slice.mask());
            st.applied += 1;
        } else {
            let proof = boundary.then_some((slice, i, &mut st.cache));
            st.split +=
                walk_trie(p, slice.trie(), i as u32, &mut st.walks, template, &mut mask, proof)?
                    as u64;
            st.walked += 1;
        }
    }
    let rest = slices.slices().len() as u32;
    st.split += walk_trie(p, slices.rest(), rest, &mut st.walks, template, &mut mask, None)? as u64;
    p.add_token_terminals(&mut mask)?;
    Ok(mask)
}
