//! Predicates and rewrites on derivre expressions, each under a node budget (an
//! exhausted budget answers "don't know", never a guess): finiteness, "surely empty",
//! "surely infinite", "surely a superset", star heads, unbounded repeats, complement merges,
//! tail peeling, the finite relaxation and the hull used by containment and liveness.
//! Each is stated in regex algebra where it is defined; `witness_tests` checks them.

use super::*;

/// Expression nodes [`shortest_guess`] visits per step at most.
pub(super) const WITNESS_NODES: u32 = 256;
/// Fuel of the first relevance check of [`DerivreLexer::is_live`].
pub(super) const QUICK_FUEL: u64 = 5_000;
/// Expression nodes [`is_finite`] reads at most.
pub(super) const FINITE_NODES: u32 = 4_096;
/// Fuel of the relevance check of a [`hull`] (a small part of the step's: the full check
/// after it may need the rest).
pub(super) const HULL_FUEL: u64 = 200_000;
/// Expression nodes [`hull`] rebuilds at most.
pub(super) const HULL_NODES: u32 = 4_096;
/// The longest witness tried (derivatives along it).
pub(super) const WITNESS_MAX_LEN: usize = 64;

/// derivre's expression kinds (`ExprSet::get_tag`, a `repr(u8)` enum it does not name in
/// its public API; the values are derivre 0.3's, checked by the test
/// `expression_tags_are_derivres`).
pub(super) mod tag {
    pub const EMPTY_STRING: u8 = 1;
    pub const NO_MATCH: u8 = 2;
    pub const BYTE: u8 = 3;
    pub const BYTE_SET: u8 = 4;
    pub const BYTE_CONCAT: u8 = 5;
    pub const LOOKAHEAD: u8 = 7;
    pub const NOT: u8 = 8;
    pub const REPEAT: u8 = 9;
    pub const CONCAT: u8 = 10;
    pub const OR: u8 = 11;
    pub const AND: u8 = 12;
}

/// The length and first byte of a short string `e` may match, read off its structure: the
/// shortest of each alternative, the elements of a concatenation one after the other, one
/// copy of a repeat that cannot be empty, an intersection's positive element (else its
/// first element that gives one); nothing for a complement or a `multipleOf` remainder.
/// Only a guess, which an intersection or a complement may reject (lengths of byte strings
/// count their first byte): [`DerivreLexer::has_witness`] follows it with derivatives.
/// `None` past `budget` nodes.
///
/// `words` (for intersections with complements of infinite languages, such as
/// `X & ~(Y | Z)` with `Y`, `Z` unanchored patterns): a byte string counts its bytes (else the guess zigzags between two
/// words, each counted 2 long), and an intersection with a complement among its operands
/// takes the guess of its operand with the longest shortest string (the word a branch must
/// hold, not the nullable body beside it). Not used elsewhere: it cost +0.9 % instructions
/// on the first masks of the benchmark corpus (longer walks of the guesses).
pub(super) fn shortest_guess(
    exprs: &ExprSet,
    nb: &mut NextByteCache,
    e: ExprRef,
    memo: &mut HashMap<ExprRef, Option<(u32, Option<u8>)>>,
    budget: &mut u32,
    words: bool,
) -> Option<(u32, Option<u8>)> {
    if let Some(&g) = memo.get(&e) {
        return g;
    }
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let args = exprs.get_args(e).to_vec();
    let g = match exprs.get_tag(e) as u8 {
        tag::EMPTY_STRING => Some((0, None)),
        tag::BYTE | tag::BYTE_SET => first_byte(exprs, nb, e).map(|b| (1, Some(b))),
        tag::BYTE_CONCAT => {
            let tail = shortest_guess(exprs, nb, args[0], memo, budget, words)?;
            let len = if words {
                // The string's bytes are the iterator's first elements, all of one kind
                // (derivre does not name the element type; its discriminant tells them
                // apart from the tail's).
                let mut it = exprs.iter_concat_bytes(e);
                it.next().map_or(1, |first| {
                    let kind = std::mem::discriminant(&first);
                    1 + it.take_while(|x| std::mem::discriminant(x) == kind).count() as u32
                })
            } else {
                2
            };
            first_byte(exprs, nb, e).map(|b| (len + tail.0, Some(b)))
        }
        tag::LOOKAHEAD => shortest_guess(exprs, nb, args[0], memo, budget, words),
        tag::REPEAT if exprs.is_nullable(e) => Some((0, None)),
        tag::REPEAT => shortest_guess(exprs, nb, args[0], memo, budget, words),
        tag::CONCAT => {
            let a = shortest_guess(exprs, nb, args[0], memo, budget, words)?;
            let b = shortest_guess(exprs, nb, args[1], memo, budget, words)?;
            Some((a.0 + b.0, a.1.or(b.1)))
        }
        tag::OR => args
            .iter()
            .filter_map(|&a| shortest_guess(exprs, nb, a, memo, budget, words))
            .min_by_key(|g| g.0),
        tag::AND if words && args.iter().any(|&a| exprs.get_tag(a) as u8 == tag::NOT) => {
            let mut best: Option<(u32, Option<u8>)> = None;
            for &a in args.iter().filter(|&&a| exprs.get_tag(a) as u8 != tag::NOT) {
                let g = shortest_guess(exprs, nb, a, memo, budget, words)?;
                if best.is_none_or(|b| g.0 > b.0) {
                    best = Some(g);
                }
            }
            best
        }
        tag::AND => {
            let mut args = args;
            args.sort_by_key(|&a| !exprs.is_positive(a));
            args.into_iter().find_map(|a| shortest_guess(exprs, nb, a, memo, budget, words))
        }
        tag::NO_MATCH | tag::NOT => None,
        // The `multipleOf` remainder.
        _ => None,
    };
    memo.insert(e, g);
    g
}

/// The least byte a byte, byte set or byte string `e` starts with: derivre's next-byte
/// answer (a byte set's two least bytes, in order), kept in its cache, where reading the
/// bytes in order until one matched cost 4 % of a first mask's instructions.
pub(super) fn first_byte(exprs: &ExprSet, nb: &mut NextByteCache, e: ExprRef) -> Option<u8> {
    nb.next_byte(exprs, e).some_bytes().first().copied()
}

/// Whether `e` matches finitely many strings, read off its structure: bytes, byte strings,
/// concatenations and unions of such, an intersection with such an operand (a repeat or a
/// complement: not known, `false`); `false` past `budget` nodes. `memo` keeps the answers
/// found within the budget.
pub(super) fn is_finite(
    x: &ExprSet,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> bool {
    budgeted(e, budget, memo, |budget, memo| match x.get_tag(e) as u8 {
        tag::EMPTY_STRING | tag::NO_MATCH | tag::BYTE | tag::BYTE_SET => true,
        tag::BYTE_CONCAT | tag::CONCAT | tag::OR => {
            x.get_args(e).iter().all(|&a| is_finite(x, a, budget, memo))
        }
        // A subset of each operand: finite where one of them is.
        tag::AND => x.get_args(e).iter().any(|&a| is_finite(x, a, budget, memo)),
        _ => false,
    })
}

/// A lower bound on the length in bytes of every string `e` matches, read off its
/// structure: a byte is 1, a byte string at least 1 before its tail, a concatenation the
/// sum, a union its least element, an intersection its greatest operand, a repeat that
/// cannot be empty one copy of its body; 0 for what may be empty or is not read (a
/// complement, a lookahead, the `multipleOf` remainder) and past `budget` nodes; `u32::MAX`
/// for the empty language.
pub(super) fn min_len(x: &ExprSet, e: ExprRef, budget: &mut u32) -> u32 {
    if *budget == 0 {
        return 0;
    }
    *budget -= 1;
    let args = x.get_args(e);
    match x.get_tag(e) as u8 {
        tag::NO_MATCH => u32::MAX,
        tag::BYTE | tag::BYTE_SET => 1,
        tag::BYTE_CONCAT => 1u32.saturating_add(min_len(x, args[0], budget)),
        tag::CONCAT => min_len(x, args[0], budget).saturating_add(min_len(x, args[1], budget)),
        tag::OR => args.iter().map(|&a| min_len(x, a, budget)).min().unwrap_or(u32::MAX),
        tag::AND => args.iter().map(|&a| min_len(x, a, budget)).max().unwrap_or(0),
        tag::REPEAT if !x.is_nullable(e) => min_len(x, args[0], budget),
        _ => 0,
    }
}

/// A structural predicate of `e` through `memo`: `false` (unknown) once `budget` nodes are
/// spent; an answer found with budget left is exact and kept (the same next time).
pub(super) fn budgeted(
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
    f: impl FnOnce(&mut u32, &mut HashMap<ExprRef, bool>) -> bool,
) -> bool {
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let r = f(budget, memo);
    if *budget > 0 {
        memo.insert(e, r);
    }
    r
}

/// Whether `e` holds the complement of an infinite language, read off its structure (under
/// intersections, unions and the head of concatenations); `false` past `budget` nodes.
/// `memo` keeps the answers found within the budget; `finite` is [`is_finite`]'s memo.
pub(super) fn infinite_complement(
    x: &ExprSet,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
    finite: &mut HashMap<ExprRef, bool>,
) -> bool {
    budgeted(e, budget, memo, |budget, memo| {
        let args = x.get_args(e);
        match x.get_tag(e) as u8 {
            tag::NOT => !finite_exclusion(x, e, budget, finite),
            tag::AND | tag::OR => {
                args.iter().any(|&a| infinite_complement(x, a, budget, memo, finite))
            }
            tag::CONCAT | tag::BYTE_CONCAT => infinite_complement(x, args[0], budget, memo, finite),
            _ => false,
        }
    })
}

/// Whether `a` is the complement of a finite language (`~("k1"|…)`), which removes finitely
/// many strings from an intersection.
pub(super) fn finite_exclusion(
    x: &ExprSet,
    a: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> bool {
    x.get_tag(a) as u8 == tag::NOT && is_finite(x, x.get_args(a)[0], budget, memo)
}

/// Whether `e` matches infinitely many strings (so some), read off its structure: an
/// unbounded repeat of a body with a non-empty string; an intersection of one such operand
/// with complements of finite languages (they remove finitely many strings); a
/// concatenation of such an expression with one that matches some string (derivre's
/// "positive" flag: an expression known to match some string); a union with such an
/// operand; a byte string before one. `false` says nothing.
pub(super) fn surely_infinite(
    x: &mut ExprSet,
    stars: &mut Stars,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let args = x.get_args(e).to_vec();
    match x.get_tag(e) as u8 {
        tag::AND => {
            let mut rest = None;
            for &a in &args {
                if finite_exclusion(x, a, budget, memo) {
                    continue;
                }
                if rest.replace(a).is_some() {
                    return false;
                }
            }
            rest.is_some_and(|a| surely_infinite(x, stars, a, budget, memo))
        }
        tag::BYTE_CONCAT => surely_infinite(x, stars, args[0], budget, memo),
        tag::REPEAT => {
            let body = args[0];
            let nonempty_string = x.is_positive(body) && !x.is_nullable(body);
            (nonempty_string && unbounded_min(x, stars, e).is_some())
                || surely_infinite(x, stars, body, budget, memo)
        }
        tag::CONCAT => {
            let [a, b] = [args[0], args[1]];
            (x.is_positive(b) && surely_infinite(x, stars, a, budget, memo))
                || (x.is_positive(a) && surely_infinite(x, stars, b, budget, memo))
        }
        tag::OR => args.iter().any(|&a| surely_infinite(x, stars, a, budget, memo)),
        _ => false,
    }
}

/// Whether `e` matches nothing, read off its structure: `NO_MATCH`; an intersection with an
/// operand that matches nothing or with the complement of a superset of another operand
/// ([`surely_superset`]); a union of such; a concatenation with such an element. `false`
/// says nothing (also past `budget` nodes).
pub(super) fn surely_empty(x: &ExprSet, e: ExprRef, budget: &mut u32) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let args = x.get_args(e);
    match x.get_tag(e) as u8 {
        tag::NO_MATCH => true,
        tag::AND => {
            args.iter().any(|&a| surely_empty(x, a, budget))
                || args.iter().any(|&n| {
                    x.get_tag(n) as u8 == tag::NOT && {
                        let b = x.get_args(n)[0];
                        args.iter().any(|&a| a != n && surely_superset(x, b, a, budget))
                    }
                })
        }
        tag::OR => args.iter().all(|&a| surely_empty(x, a, budget)),
        tag::CONCAT => args.iter().any(|&a| surely_empty(x, a, budget)),
        tag::BYTE_CONCAT => surely_empty(x, args[0], budget),
        _ => false,
    }
}

/// Whether `b` matches every string `a` matches, read off its structure: `b` is `a`, a union
/// with such an alternative, or a concatenation of such an element with a nullable one
/// (`a · (ε | …)` holds `a · ε`). `false` says nothing (also past `budget` nodes).
pub(super) fn surely_superset(x: &ExprSet, b: ExprRef, a: ExprRef, budget: &mut u32) -> bool {
    if b == a {
        return true;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let args = x.get_args(b);
    match x.get_tag(b) as u8 {
        tag::OR => args.iter().any(|&c| surely_superset(x, c, a, budget)),
        tag::CONCAT => {
            let [p, q] = [args[0], args[1]];
            (x.is_nullable(q) && surely_superset(x, p, a, budget))
                || (x.is_nullable(p) && surely_superset(x, q, a, budget))
        }
        _ => false,
    }
}

/// Whether `e` matches a non-empty string, read off its structure (`None`: not known).
/// Only nodes derivre knows to match some string ("positive") are read: a concatenation's
/// elements then both match some string.
pub(super) fn matches_nonempty(x: &ExprSet, e: ExprRef) -> Option<bool> {
    if !x.is_positive(e) {
        return None;
    }
    match x.get_tag(e) as u8 {
        tag::EMPTY_STRING => Some(false),
        tag::BYTE | tag::BYTE_SET | tag::BYTE_CONCAT => Some(true),
        tag::REPEAT => matches_nonempty(x, x.get_args(e)[0]),
        tag::CONCAT | tag::OR => {
            let mut all_known = true;
            for &a in x.get_args(e) {
                match matches_nonempty(x, a) {
                    Some(true) => return Some(true),
                    Some(false) => {}
                    None => all_known = false,
                }
            }
            all_known.then_some(false)
        }
        _ => None,
    }
}

/// The first head `B*` of [`star_heads_parts`] (tests).
#[cfg(test)]
pub(super) fn star_head(x: &mut ExprSet, stars: &mut Stars, e: ExprRef) -> Option<ExprRef> {
    star_heads_parts(x, stars, e).first().map(|&(b, _)| b)
}

/// Heads tried per member at most ([`star_heads_parts`]).
pub(super) const MAX_STAR_HEADS: usize = 8;

/// `(B*, R)` where `e` is `B* R` with `R` positive (so `R` matches some string: derivre's
/// invariant for a positive expression other than `NO_MATCH`), or of each alternative of a
/// union that is (at most [`MAX_STAR_HEADS`] distinct heads, in the union's order); every
/// string of such a `B*` is a prefix of a string of `e`. After a few bytes of an unanchored
/// pattern the union holds the partial matches too (`.*P.* | [0-9a-f]* "-" … .*`), whose
/// heads are narrower than the search's `.*` and come first in derivre's order.
pub(super) fn star_heads_parts(
    x: &mut ExprSet,
    stars: &mut Stars,
    e: ExprRef,
) -> Vec<(ExprRef, ExprRef)> {
    let mut head = |x: &mut ExprSet, c: ExprRef| {
        if x.get_tag(c) as u8 != tag::CONCAT {
            return None;
        }
        let [a, r] = [x.get_args(c)[0], x.get_args(c)[1]];
        let star = unbounded_min(x, stars, a) == Some(0);
        (star && x.is_positive(r) && r != ExprRef::NO_MATCH).then_some((a, r))
    };
    match x.get_tag(e) as u8 {
        tag::OR => {
            let alts = x.get_args(e).to_vec();
            let mut out = Vec::new();
            for c in alts {
                if let Some(h) = head(x, c).filter(|h| !out.iter().any(|o: &(_, _)| o.0 == h.0)) {
                    out.push(h);
                    if out.len() == MAX_STAR_HEADS {
                        break;
                    }
                }
            }
            out
        }
        _ => head(x, e).into_iter().collect(),
    }
}

/// derivre's `B*` and `B+` of each repeat body `B` met ([`unbounded_min`]).
pub(super) type Stars = HashMap<ExprRef, [ExprRef; 2]>;

/// `Some(m)` when `e` is the repeat `B{m,}` with `m` 0 or 1 (`B*`, `B+`); `None` otherwise
/// (not a repeat, bounded, or `B{m,}` with `m >= 2`, whose derivatives reach `B+` and `B*`).
/// derivre (0.3.13) keeps a repeat's bounds out of its API (its `Expr` enum is not
/// exported), but hash-conses its nodes and normalizes a repeat only by its body's
/// nullability: `e` is `B*` exactly when it is the node `mk_repeat(B, 0, ∞)` gives, and
/// `B+` likewise. The two nodes are made once per body and remembered in `stars`. Checked
/// by the test `unbounded_repeats_are_told_by_their_nodes`.
pub(super) fn unbounded_min(x: &mut ExprSet, stars: &mut Stars, e: ExprRef) -> Option<u32> {
    if x.get_tag(e) as u8 != tag::REPEAT {
        return None;
    }
    let body = x.get_args(e)[0];
    let [star, plus] = *stars
        .entry(body)
        .or_insert_with(|| [x.mk_repeat(body, 0, u32::MAX), x.mk_repeat(body, 1, u32::MAX)]);
    if e == star {
        Some(0)
    } else if e == plus {
        Some(1)
    } else {
        None
    }
}

/// Replaces each pair of members `A & P` and `A & ~P` (each behind the same tail `T`, as
/// `(…) T`) by one member `A` (`A T`): their union, the same strings. The first member's
/// lexeme stays (the state is only walked, for containment). The partners are found by
/// lookup, each member's `(tails, operands)` indexed once (a pair test per two members,
/// each peeling and copying both, took ~25 ms a key mask over the ~2,000 members of an
/// `anyOf` of 1,000 open objects); merged members are looked at again until none pairs.
pub(super) fn merge_complements(x: &mut ExprSet, members: &mut Vec<Member>) {
    loop {
        // (tails, sorted operands) of each intersection member -> its index.
        let shapes: Vec<Option<(Vec<ExprRef>, Vec<ExprRef>)>> = members
            .iter()
            .map(|m| {
                let (head, tails) = peel_tails(x, m.1);
                (x.get_tag(head) as u8 == tag::AND).then(|| {
                    let mut ops = x.get_args(head).to_vec();
                    ops.sort_unstable();
                    (tails, ops)
                })
            })
            .collect();
        let index: HashMap<(&[ExprRef], &[ExprRef]), usize> = shapes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|(t, o)| ((t.as_slice(), o.as_slice()), i)))
            .collect();
        let mut pairs: Vec<(usize, usize, Vec<ExprRef>)> = Vec::new();
        let mut taken = vec![false; members.len()];
        for (i, shape) in shapes.iter().enumerate() {
            let Some((tails, ops)) = shape else { continue };
            if taken[i] {
                continue;
            }
            for (k, &n) in ops.iter().enumerate() {
                if x.get_tag(n) as u8 != tag::NOT {
                    continue;
                }
                let p = x.get_args(n)[0];
                // The partner's operands: these with `~P` replaced by `P`.
                let mut want: Vec<ExprRef> = ops.clone();
                want[k] = p;
                want.sort_unstable();
                want.dedup();
                if want.len() != ops.len() {
                    continue;
                }
                let Some(&j) = index.get(&(tails.as_slice(), want.as_slice())) else { continue };
                if j == i || taken[j] {
                    continue;
                }
                let common: Vec<ExprRef> = ops.iter().copied().filter(|&e| e != n).collect();
                if common.is_empty() {
                    continue;
                }
                taken[i] = true;
                taken[j] = true;
                pairs.push((i.min(j), i.max(j), common));
                break;
            }
        }
        if pairs.is_empty() {
            return;
        }
        let mut gone = vec![false; members.len()];
        for (keep, drop, mut common) in pairs {
            let (_, tails) = peel_tails(x, members[keep].1);
            let head = match common.len() {
                1 => common[0],
                _ => x.mk_and(&mut common),
            };
            members[keep].1 = put_tails(x, head, &tails);
            gone[drop] = true;
        }
        let mut k = 0;
        members.retain(|_| {
            k += 1;
            !gone[k - 1]
        });
    }
}

/// `e` without the operands of its intersection that hold another operand ([`surely_superset`]:
/// `A & A (ε | …)` is `A`), behind a tail (`(…) T`, [`peel_tails`]); `None` when none is
/// found.
pub(super) fn drop_supersets(x: &mut ExprSet, e: ExprRef, budget: &mut u32) -> Option<ExprRef> {
    let (head, tails) = peel_tails(x, e);
    if x.get_tag(head) as u8 != tag::AND {
        return None;
    }
    let args = x.get_args(head).to_vec();
    let mut kept = args.clone();
    for (i, &b) in args.iter().enumerate() {
        let holds_another = args
            .iter()
            .enumerate()
            .any(|(j, &a)| j != i && kept.contains(&a) && surely_superset(x, b, a, budget));
        if holds_another {
            kept.retain(|&k| k != b);
        }
    }
    if kept.len() == args.len() {
        return None;
    }
    let head = if kept.len() == 1 { kept[0] } else { x.mk_and(&mut kept) };
    Some(put_tails(x, head, &tails))
}

/// `e` as its head and the tails after it (`((H T1) T2)`: `H`, `[T1, T2]`), through the
/// heads of nested concatenations: the rules on a member's intersection see past the
/// closing quote (or key suffix) after it.
pub(super) fn peel_tails(x: &ExprSet, mut e: ExprRef) -> (ExprRef, Vec<ExprRef>) {
    let mut tails = Vec::new();
    while x.get_tag(e) as u8 == tag::CONCAT {
        let args = x.get_args(e);
        tails.push(args[1]);
        e = args[0];
    }
    tails.reverse();
    (e, tails)
}

/// [`peel_tails`] undone: `head` followed by `tails`, innermost first.
pub(super) fn put_tails(x: &mut ExprSet, head: ExprRef, tails: &[ExprRef]) -> ExprRef {
    tails.iter().fold(head, |h, &t| x.mk_concat(h, t))
}

/// A superset of `e` with finitely many more strings, complements of finite languages
/// left out where that adds finitely many: an intersection's operand `~F` (adds at most
/// F), inside an intersection's other operands and a union's operands, and inside one
/// element of a concatenation whose other element is finite (a quoted body that
/// excludes a literal, `(~"p" & body*) "\""`, adds at most `"p\""`). `None`: nothing
/// left out (or past `budget` nodes).
pub(super) fn relax_finite(
    x: &mut ExprSet,
    e: ExprRef,
    budget: &mut u32,
    memo: &mut HashMap<ExprRef, bool>,
) -> Option<ExprRef> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let args = x.get_args(e).to_vec();
    match x.get_tag(e) as u8 {
        tag::AND => {
            let mut changed = false;
            let mut kept = Vec::with_capacity(args.len());
            for a in args {
                if finite_exclusion(x, a, budget, memo) {
                    changed = true;
                } else if let Some(r) = relax_finite(x, a, budget, memo) {
                    changed = true;
                    kept.push(r);
                } else {
                    kept.push(a);
                }
            }
            // Every operand a finite exclusion: nothing positive left to walk.
            if !changed || kept.is_empty() {
                return None;
            }
            Some(if kept.len() == 1 { kept[0] } else { x.mk_and(&mut kept) })
        }
        tag::OR => {
            let mut changed = false;
            let rs: Vec<ExprRef> = args
                .iter()
                .map(|&a| match relax_finite(x, a, budget, memo) {
                    Some(r) => {
                        changed = true;
                        r
                    }
                    None => a,
                })
                .collect();
            changed.then(|| mk_union(x, &rs))
        }
        tag::CONCAT => {
            let (a, b) = (args[0], args[1]);
            if is_finite(x, b, budget, memo) {
                if let Some(r) = relax_finite(x, a, budget, memo) {
                    return Some(x.mk_concat(r, b));
                }
            }
            if is_finite(x, a, budget, memo) {
                if let Some(r) = relax_finite(x, b, budget, memo) {
                    return Some(x.mk_concat(a, r));
                }
            }
            None
        }
        _ => None,
    }
}

/// A superset of `e` with fewer intersections: below the outermost intersection on each
/// path (`keep`: none met yet), an intersection is replaced by its first positive operand
/// (else its first), which only adds strings; concatenations and unions are rebuilt; any
/// other node (a repeat or byte string around an intersection, a complement, a lookahead, a
/// remainder) is kept as it is: exact, so a superset too. `e` itself past `budget` nodes.
pub(super) fn hull(
    x: &mut ExprSet,
    e: ExprRef,
    keep: bool,
    memo: &mut HashMap<(ExprRef, bool), ExprRef>,
    budget: &mut u32,
) -> ExprRef {
    if x.get_args(e).is_empty() {
        return e;
    }
    if let Some(&h) = memo.get(&(e, keep)) {
        return h;
    }
    if *budget == 0 {
        return e;
    }
    *budget -= 1;
    let args = x.get_args(e).to_vec();
    let h = match x.get_tag(e) as u8 {
        tag::CONCAT => {
            let a = hull(x, args[0], keep, memo, budget);
            let b = hull(x, args[1], keep, memo, budget);
            x.mk_concat(a, b)
        }
        tag::OR => {
            let hs: Vec<ExprRef> = args.iter().map(|&a| hull(x, a, keep, memo, budget)).collect();
            mk_union(x, &hs)
        }
        tag::AND if keep => {
            let mut hs = args.iter().map(|&a| hull(x, a, false, memo, budget)).collect();
            x.mk_and(&mut hs)
        }
        tag::AND => {
            let first = args.iter().copied().find(|&a| x.is_positive(a)).unwrap_or(args[0]);
            hull(x, first, false, memo, budget)
        }
        _ => e,
    };
    memo.insert((e, keep), h);
    h
}
