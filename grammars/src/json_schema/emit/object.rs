//! Objects: named keys in `properties` order, other keys in regions by the patterns they
//! match, counts as states; `some` constraints (complements of object keywords) as state bits;
//! `any_order` objects as one parametric rule.

use hashbrown::{HashMap, HashSet};
use lexer::RegexSpec;

use super::{alt, lit, sep, Emitter, ANY_ORDER_MAX, MAX_PATTERNS, MAX_SOME};
use crate::ir::{Expr, Rule, RuleAttrs};
use crate::json_schema::schema::{Exists, KeyLang, LengthBounds, Node, Obj, SExpr};
use crate::param::{ParamCond, ParamExpr};
use crate::{Error, ErrorKind};

/// Objects naming more keys than this look their keys up by index, not by search.
const INDEXED_KEYS: usize = 32;

impl Emitter<'_, '_> {
    /// `o` with the patterns that every clause treats alike (schemas that normalize to the
    /// same constraint in each clause that has any of them, and none of them in the others)
    /// merged into one alternation, in `patterns` and in each clause.
    fn merge_patterns(&mut self, o: &Obj, patterns: &mut Vec<String>) -> Result<Obj, Error> {
        // Per pattern, its normalized schema in each clause.
        let mut sig: Vec<Vec<Option<std::rc::Rc<Node>>>> = Vec::with_capacity(patterns.len());
        for p in patterns.iter() {
            let mut v = Vec::with_capacity(o.clauses.len());
            for c in &o.clauses {
                v.push(match c.patterns.iter().find(|(q, _)| q == p) {
                    Some((_, s)) => Some(self.ctx.normalize(s)?),
                    None => None,
                });
            }
            sig.push(v);
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..patterns.len() {
            match groups.iter_mut().find(|g| sig[g[0]] == sig[i]) {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        if groups.len() == patterns.len() {
            return Ok(o.clone());
        }
        let merged: Vec<String> = groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => patterns[*one].clone(),
                _ => {
                    g.iter().map(|&i| format!("(?:{})", patterns[i])).collect::<Vec<_>>().join("|")
                }
            })
            .collect();
        let mut out = o.clone();
        for c in &mut out.clauses {
            let mut pats = Vec::new();
            for (g, m) in groups.iter().zip(&merged) {
                if let Some((_, s)) = c.patterns.iter().find(|(q, _)| *q == patterns[g[0]]) {
                    pats.push((m.clone(), s.clone()));
                }
            }
            c.patterns = pats;
        }
        *patterns = merged;
        Ok(out)
    }

    /// An object whose named properties come in any order, each at most once, the
    /// required ones all present: one parametric rule whose parameter has a bit per named
    /// property (bit 63: an entry was written, so the next needs a separator). Instances are
    /// made as the parser reaches them: 30 properties cost no 2^30 rules. Other keys
    /// (`additionalProperties`, `patternProperties`) may come anywhere between them.
    fn object_any_order(
        &mut self,
        base: &str,
        named: &[(String, SExpr, bool)],
        extra: Option<Expr>,
    ) -> Expr {
        let rule = format!("{base}_any");
        const FIRST_DONE: u32 = 63;
        let mut alts = Vec::new();
        // The end: every required property there.
        let mut done = ParamCond::True;
        for (i, (_, _, req)) in named.iter().enumerate() {
            if *req {
                done = ParamCond::And(Box::new(done), Box::new(ParamCond::BitSet(i as u32)));
            }
        }
        alts.push(Expr::If { cond: done, expr: Box::new(Expr::Empty) });
        let entries = named
            .iter()
            .enumerate()
            .map(|(i, (k, v, _))| {
                let entry = vec![
                    self.key_lexeme(RegexSpec::Literal(k.clone()), None),
                    sep(&self.key_sep),
                    self.r(v),
                ];
                (Some(i as u32), entry)
            })
            .chain(extra.map(|x| (None, vec![x])))
            .collect::<Vec<_>>();
        for (bit, entry) in entries {
            for first in [true, false] {
                let mut seq = if first { vec![] } else { vec![sep(&self.item_sep)] };
                seq.extend(entry.iter().cloned());
                let mut set = 1u64 << FIRST_DONE;
                let mut cond = if first {
                    ParamCond::BitClear(FIRST_DONE)
                } else {
                    ParamCond::BitSet(FIRST_DONE)
                };
                if let Some(b) = bit {
                    set |= 1 << b;
                    cond = ParamCond::And(Box::new(cond), Box::new(ParamCond::BitClear(b)));
                }
                seq.push(Expr::Call { rule: rule.clone(), arg: ParamExpr::BitOr(set) });
                alts.push(Expr::If { cond, expr: Box::new(Expr::Seq(seq)) });
            }
        }
        self.rules.push(Rule {
            name: rule.clone(),
            body: Expr::Alt(alts),
            attrs: RuleAttrs::default(),
            param: true,
        });
        Expr::Seq(vec![lit("{"), Expr::Call { rule, arg: ParamExpr::Value(0) }, lit("}")])
    }

    /// A member's value alternatives in state `s` (the `some` constraints met so far):
    /// the value `v` alone (state unchanged), and for each set `t` of the not yet met
    /// constraints the member's key falls under (`app`), `v` with their values (state
    /// `s | t`). The alternatives overlap; the grammar is ambiguous there, not wrong.
    fn members(&mut self, some: &[Exists], v: &SExpr, app: u32, s: u32) -> Vec<(Expr, u32)> {
        let open = app & !s;
        let mut out = Vec::new();
        let mut t = 0u32;
        loop {
            let value = if t == 0 {
                v.clone()
            } else {
                let mut parts = vec![v.clone()];
                for (j, e) in some.iter().enumerate() {
                    if t & (1 << j) != 0 {
                        parts.push(e.value.clone());
                    }
                }
                SExpr::all(parts)
            };
            if value != SExpr::False {
                out.push((self.r(&value), s | t));
            }
            // next subset of `open`
            t = (t.wrapping_sub(open)) & open;
            if t == 0 {
                break;
            }
        }
        out
    }

    pub(super) fn object(&mut self, base: &str, o: &Obj) -> Result<Option<Expr>, Error> {
        if o.max.is_some_and(|m| m < o.min) {
            return Ok(None);
        }
        // Dependencies are tracked in the states' parameter (`Deps`) where no count and no
        // `some` constraint could turn a key they force into a dead end; otherwise, and for
        // `any_order` objects (one parametric rule of their own), each becomes the union
        // "absent, or present with its list".
        let expand = o.max.is_some() || o.min > 0 || !o.some.is_empty() || self.any_order;
        if !o.deps.is_empty() && expand {
            let mut alts = vec![Obj { deps: vec![], ..o.clone() }];
            for (k, list) in &o.deps {
                let absent = Obj::without(k);
                let mut required = vec![k.clone()];
                required.extend(list.iter().cloned());
                let present = Obj { required, ..Obj::any() };
                let mut next = Vec::new();
                for a in &alts {
                    for b in [&absent, &present] {
                        let x = a.and(b);
                        if !x.surely_empty() && !next.contains(&x) {
                            next.push(x);
                        }
                    }
                }
                if next.len() > MAX_DEP_ALTS {
                    return Err(Error::new(
                        ErrorKind::Limit,
                        format!(
                            "dependentRequired beside minProperties, maxProperties or a `not`: \
                             more than {MAX_DEP_ALTS} combinations of present keys"
                        ),
                    ));
                }
                alts = next;
            }
            let mut exprs = Vec::new();
            for (j, a) in alts.iter().enumerate() {
                if let Some(e) = self.object(&format!("{base}_d{j}"), a)? {
                    exprs.push(e);
                }
            }
            return Ok((!exprs.is_empty()).then(|| alt(exprs)));
        }
        // named keys: `properties` order, other required keys, then the keys `some` names
        let mut keys: Vec<&String> = Vec::new();
        for c in &o.clauses {
            keys.extend(c.props.iter().map(|(k, _)| k));
        }
        keys.extend(&o.required);
        // The keys of `dependentRequired` are named too: the emitter tracks which are written.
        for (k, list) in &o.deps {
            keys.push(k);
            keys.extend(list);
        }
        for e in &o.some {
            match &e.key {
                KeyLang::Other { props, .. } => keys.extend(props),
                KeyLang::Pattern(_) | KeyLang::NotNames(_) => {}
            }
        }
        // Many keys are looked up by index (searched, objects with thousands of properties
        // compiled in time quadratic in their number: 10,000 in 0.3 s); a few are searched
        // (an index costs them more than it saves).
        let many = keys.len() > INDEXED_KEYS;
        let mut props: Vec<HashMap<&str, &SExpr>> = Vec::new();
        let mut required: HashSet<&str> = HashSet::new();
        if many {
            let mut seen: HashSet<&String> = HashSet::new();
            keys.retain(|k| seen.insert(k));
            // The first of a property named twice in a clause wins, as a search finds it.
            props = o
                .clauses
                .iter()
                .map(|c| c.props.iter().rev().map(|(k, s)| (k.as_str(), s)).collect())
                .collect();
            required = o.required.iter().map(String::as_str).collect();
        } else {
            let mut i = 0;
            while i < keys.len() {
                if keys[..i].contains(&keys[i]) {
                    keys.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        let mut named: Vec<(String, SExpr, bool)> = Vec::new();
        for &k in &keys {
            let (v, req) = if many {
                let v = self.ctx.value_in(o, k, |i, k| props[i].get(k).copied())?;
                (v, required.contains(k.as_str()))
            } else {
                (self.ctx.value_for(o, k)?, o.required.contains(k))
            };
            if v == SExpr::False {
                if req {
                    return Ok(None);
                }
                continue;
            }
            named.push((k.clone(), v, req));
        }
        // A row before named key `i` predicts every optional key up to the next required
        // one (each may come next): [`ROW_ITEMS_PER_KEY`] Earley items per key.
        let mut run = 0usize;
        for (_, _, req) in &named {
            run = if *req { 0 } else { run + 1 };
            self.row_items = self.row_items.max(ROW_ITEMS_PER_KEY * run + ROW_ITEMS_SLACK);
        }
        // other keys, split into regions by the patterns they match
        let mut patterns: Vec<String> = Vec::new();
        for c in &o.clauses {
            for (p, _) in &c.patterns {
                if !patterns.contains(p) {
                    patterns.push(p.clone());
                }
            }
        }
        // Patterns that every clause gives the same schema (or none) are one pattern, their
        // alternation: a key matching either or both gets that schema either way. The
        // regions below are per subset of patterns (2^k), so this is what lets an object
        // with many patterns of a few schemas compile.
        let o = &self.merge_patterns(o, &mut patterns)?;
        // The patterns of `some`, each its own region bit (after the merge: no clause may
        // stand for them).
        for e in &o.some {
            let ps = match &e.key {
                KeyLang::Pattern(p) => std::slice::from_ref(p),
                KeyLang::Other { patterns, .. } => patterns.as_slice(),
                KeyLang::NotNames(_) => &[],
            };
            for p in ps {
                if !patterns.contains(p) {
                    patterns.push(p.clone());
                }
            }
        }
        // The complements of `propertyNames` among `some`: more region bits, after the
        // patterns'.
        let splits: Vec<RegexSpec> = o
            .some
            .iter()
            .filter_map(|e| match &e.key {
                KeyLang::NotNames(rx) => Some(rx.as_spec().unwrap_or(RegexSpec::NoMatch)),
                _ => None,
            })
            .collect();
        if patterns.len() + splits.len() > MAX_PATTERNS {
            return Err(Error::new(
                ErrorKind::Limit,
                format!("patternProperties: more than {MAX_PATTERNS} patterns on one object"),
            ));
        }
        let m = o.some.len();
        if m > MAX_SOME {
            return Err(Error::new(
                ErrorKind::Limit,
                format!(
                    "not: more than {MAX_SOME} members required at once by complements of \
                     `patternProperties` / `additionalProperties`"
                ),
            ));
        }
        // Which `some` constraints each named key falls under (a bit each).
        let mut named_app = Vec::with_capacity(named.len());
        for (k, _, _) in &named {
            let mut bits = 0u32;
            for (j, e) in o.some.iter().enumerate() {
                let hit = match &e.key {
                    KeyLang::Pattern(p) => self.ctx.key_matches(p, k)?,
                    KeyLang::Other { props, patterns } => {
                        let mut any = props.contains(k);
                        for p in patterns {
                            any = any || self.ctx.key_matches(p, k)?;
                        }
                        !any
                    }
                    KeyLang::NotNames(rx) => !self.ctx.rx_matches(rx, k)?,
                };
                if hit {
                    bits |= 1 << j;
                }
            }
            named_app.push(bits);
        }
        let mut regions: Vec<(RegexSpec, SExpr, u32)> = Vec::new();
        // Named keys are excluded outside the quotes, as the very lexemes of the named keys
        // (the same canonical quoting, so the exclusion is exact): a key lexeme of the shape
        // `"body" & ~("k1"|"k2"|…)` is one the slicer's symbolic containment check proves
        // contains long string slices, where walking the lexer's DFA would have to tell
        // every prefix of every named key apart.
        let not_named = RegexSpec::Not(Box::new(RegexSpec::Or(
            keys.iter().map(|k| self.key_spec(RegexSpec::Literal((*k).clone()), None)).collect(),
        )));
        let np = patterns.len();
        for mask in 0u32..(1 << (np + splits.len())) {
            let mut parts = Vec::new();
            for c in &o.clauses {
                let hit: Vec<SExpr> = c
                    .patterns
                    .iter()
                    .filter(|(p, _)| {
                        patterns.iter().position(|q| q == p).is_some_and(|i| mask & (1 << i) != 0)
                    })
                    .map(|(_, s)| s.clone())
                    .collect();
                if hit.is_empty() {
                    parts.push(c.additional.clone());
                } else {
                    parts.extend(hit);
                }
            }
            let v = SExpr::all(parts);
            if v == SExpr::False || o.names.is_nothing() {
                continue;
            }
            let mut key = vec![LengthBounds::ANY.regex()];
            if let Some(r) = o.names.as_spec() {
                key.push(r);
            }
            for (i, p) in patterns.iter().enumerate() {
                let r = RegexSpec::Regex(p.clone());
                key.push(if mask & (1 << i) != 0 { r } else { RegexSpec::Not(Box::new(r)) });
            }
            for (i, r) in splits.iter().enumerate() {
                let r = r.clone();
                key.push(if mask & (1 << (np + i)) != 0 { r } else { RegexSpec::Not(Box::new(r)) });
            }
            // Nothing asked of the key but to be another key: any length.
            let length_only = (key.len() == 1).then_some(LengthBounds::ANY);
            let body = if key.len() == 1 {
                key.pop().unwrap_or(RegexSpec::NoMatch)
            } else {
                RegexSpec::And(key)
            };
            let key = if keys.is_empty() {
                self.key_spec(body, length_only)
            } else {
                RegexSpec::And(vec![self.key_spec(body, length_only), not_named.clone()])
            };
            let bit = |p: &String| patterns.iter().position(|q| q == p).map_or(0, |i| 1 << i);
            let mut app = 0u32;
            let mut split = np;
            for (j, e) in o.some.iter().enumerate() {
                let hit = match &e.key {
                    KeyLang::Pattern(p) => mask & bit(p) != 0,
                    KeyLang::Other { patterns, .. } => patterns.iter().all(|p| mask & bit(p) == 0),
                    KeyLang::NotNames(_) => {
                        split += 1;
                        mask & (1 << (split - 1)) == 0
                    }
                };
                if hit {
                    app |= 1 << j;
                }
            }
            regions.push((key, v, app));
        }
        let full = (1u32 << m) - 1;
        // A `some` no key can meet: no object.
        let reachable = named_app.iter().chain(regions.iter().map(|r| &r.2)).fold(0, |a, b| a | b);
        if reachable & full != full {
            return Ok(None);
        }
        if m == 0
            && self.any_order
            && o.min == 0
            && o.max.is_none()
            && o.deps.is_empty()
            && named.len() <= ANY_ORDER_MAX
        {
            let extras: Vec<Expr> = regions
                .iter()
                .map(|(k, v, _)| {
                    Expr::Seq(vec![Expr::Lexeme(k.clone()), sep(&self.key_sep), self.r(v)])
                })
                .collect();
            let extra = if extras.is_empty() { None } else { Some(alt(extras)) };
            return Ok(Some(self.object_any_order(base, &named, extra)));
        }
        // states (i, c, s): before named key i, c entries so far (capped), the `some`
        // constraints met so far (bits)
        let nk = named.len();
        let cap = match o.max {
            Some(m) => m,
            None => o.min.max(1),
        };
        self.check_states(((nk + 1) * (cap as usize + 1)) << m)?;
        let next = |c: u32| if o.max.is_none() { (c + 1).min(cap) } else { c + 1 };
        // Each state's rule name, made once (a state is named where it is defined and where
        // each of its predecessors refers to it).
        let (cs, ss) = (cap as usize + 1, full as usize + 1);
        let mut names = Vec::with_capacity((nk + 1) * cs * ss);
        for i in 0..=nk {
            for c in 0..=cap {
                for s in 0..=full {
                    let mut n = String::with_capacity(base.len() + 12);
                    n.push_str(base);
                    for (k, x) in [i as u64, u64::from(c), u64::from(s)].into_iter().enumerate() {
                        if k < 2 || m != 0 {
                            n.push('_');
                            push_decimal(&mut n, x);
                        }
                    }
                    names.push(n);
                }
            }
        }
        let name =
            |i: usize, c: u32, s: u32| names[(i * cs + c as usize) * ss + s as usize].clone();
        let deps = Deps::new(o, &named)?;
        // A state before named key `i`, entered with the parameter `arg` (the written keys'
        // bits) where states take one.
        let goto = |i: usize, c: u32, s: u32, arg: ParamExpr| {
            if deps.param && i < nk {
                Expr::Call { rule: name(i, c, s), arg }
            } else {
                Expr::Rule(name(i, c, s))
            }
        };
        #[allow(clippy::needless_range_loop)] // i indexes states, named[i] only below nk
        for i in 0..=nk {
            for c in 0..=cap {
                for s in 0..=full {
                    let mut alts = vec![];
                    let can_add = o.max.is_none_or(|m| c < m);
                    if i < nk {
                        let (k, v, req) = &named[i];
                        let (write, skip) = deps.at(i);
                        if can_add && write.is_some() {
                            for (val, s2) in self.members(&o.some, v, named_app[i], s) {
                                let mut seq = self.sep(c == 0);
                                seq.push(self.key_lexeme(RegexSpec::Literal(k.clone()), None));
                                seq.push(sep(&self.key_sep));
                                seq.push(val);
                                seq.push(goto(i + 1, next(c), s2, deps.arg(i, true)));
                                alts.push(when(write.clone(), Expr::Seq(seq)));
                            }
                        }
                        if !req && skip.is_some() {
                            alts.push(when(skip, goto(i + 1, c, s, deps.arg(i, false))));
                        }
                    } else {
                        // Past the named keys with the count capped and no `some` to meet
                        // (so this state is the end's), the other keys' entries lead back to
                        // this very state: `X → ε | , entry X`. Written `X → (, entry)*` (a
                        // left-recursive repeat), a value's end completes one item, not one
                        // per entry written before it (a map of 1,000 free keys: masks grew
                        // by ~5 µs per 1,000 tokens).
                        let loops = o.max.is_none() && c == cap && m == 0 && c >= o.min;
                        let mut looped = false;
                        if can_add && !regions.is_empty() {
                            // the members by the state they lead to
                            let mut by_next: Vec<(u32, Vec<Expr>)> = Vec::new();
                            for (key, v, app) in &regions {
                                for (val, s2) in self.members(&o.some, v, *app, s) {
                                    let e = Expr::Seq(vec![
                                        Expr::Lexeme(key.clone()),
                                        sep(&self.key_sep),
                                        val,
                                    ]);
                                    match by_next.iter_mut().find(|(t, _)| *t == s2) {
                                        Some((_, v)) => v.push(e),
                                        None => by_next.push((s2, vec![e])),
                                    }
                                }
                            }
                            for (s2, es) in by_next {
                                let mut seq = self.sep(c == 0);
                                seq.push(alt(es));
                                if loops && s2 == s {
                                    alts.push(Expr::Repeat {
                                        expr: Box::new(Expr::Seq(seq)),
                                        min: 0,
                                        max: None,
                                    });
                                    looped = true;
                                    continue;
                                }
                                seq.push(Expr::Rule(name(nk, next(c), s2)));
                                alts.push(Expr::Seq(seq));
                            }
                        }
                        // The end (the repeat holds it where the entries loop).
                        if c >= o.min && s == full && !looped {
                            alts.insert(0, Expr::Empty);
                        }
                    }
                    if deps.param && i < nk {
                        self.rules.push(Rule {
                            name: name(i, c, s),
                            body: alt(alts),
                            attrs: RuleAttrs::default(),
                            param: true,
                        });
                    } else {
                        self.push(name(i, c, s), alt(alts));
                    }
                }
            }
        }
        Ok(Some(Expr::Seq(vec![lit("{"), goto(0, 0, 0, ParamExpr::Value(0)), lit("}")])))
    }
}

/// The most alternatives `dependentRequired` expands to where it is not tracked in states.
const MAX_DEP_ALTS: usize = 256;
/// Earley items a row holds per optional named key it predicts (its entry, the skip, the
/// skip completed: 6,700 keys overflowed a 20,000-item row, 6,660 did not).
const ROW_ITEMS_PER_KEY: usize = 3;
/// The rest of such a row at most (the object's other states, the value around it).
const ROW_ITEMS_SLACK: usize = 1_000;

/// `e` where `cond` holds (`None`: never; `True`: always).
fn when(cond: Option<ParamCond>, e: Expr) -> Expr {
    match cond {
        Some(ParamCond::True) | None => e,
        Some(cond) => Expr::If { cond, expr: Box::new(e) },
    }
}

/// How an ordered object meets its `dependentRequired`: a bit of the states' parameter per
/// named key that a later position reads (the bits reused once no later position reads
/// them). A key may be written only if the keys it needs that come before it were written;
/// a key may be skipped only if no key written before it needs it. Keys needed by a key
/// that comes later are thereby required when that key is written (it cannot be written
/// without them), so no state is a dead end.
struct Deps {
    /// Whether the states before the last named key take the parameter.
    param: bool,
    /// Per named key: its bit, if a later position reads it.
    bit: Vec<Option<u32>>,
    /// Per named key: the condition to write it (`None`: never), and to skip it.
    write: Vec<Option<ParamCond>>,
    skip: Vec<Option<ParamCond>>,
}

impl Deps {
    fn new(o: &Obj, named: &[(String, SExpr, bool)]) -> Result<Deps, Error> {
        let nk = named.len();
        if o.deps.is_empty() {
            // Every key may be written and skipped (what the closure below gives without
            // dependencies; it cost 1.6 % of MaskBench's compile instructions, callgrind).
            let always = vec![Some(ParamCond::True); nk];
            return Ok(Deps {
                param: false,
                bit: vec![None; nk],
                write: always.clone(),
                skip: always,
            });
        }
        let pos = |k: &String| named.iter().position(|(x, _, _)| x == k);
        // reach[a][b]: key a needs key b, directly or through other keys; impossible[a]: it
        // needs a key that cannot be there (no value allowed).
        let mut reach = vec![vec![false; nk]; nk];
        let mut impossible = vec![false; nk];
        for (k, list) in &o.deps {
            let Some(a) = pos(k) else { continue };
            for t in list {
                match pos(t) {
                    Some(b) if b != a => reach[a][b] = true,
                    Some(_) => {}
                    None => impossible[a] = true,
                }
            }
        }
        // The closure through each key `m` in turn (row `m` is not changed while it is read:
        // no key reaches itself).
        for m in 0..nk {
            let via = reach[m].clone();
            for (a, row) in reach.iter_mut().enumerate() {
                if row[m] {
                    for (b, &r) in via.iter().enumerate() {
                        if r && b != a {
                            row[b] = true;
                        }
                    }
                }
            }
        }
        for a in 0..nk {
            impossible[a] = impossible[a] || (0..nk).any(|b| reach[a][b] && impossible[b]);
        }
        // A key may be written once the keys it needs before it are; one of them that
        // another such key needs is implied by that one. A key may be skipped unless a key
        // written before it needs it; one that forces a key between them which needs it is
        // implied by that key (it was written too).
        let mut write_reads: Vec<Vec<usize>> = vec![Vec::new(); nk];
        let mut skip_reads: Vec<Vec<usize>> = vec![Vec::new(); nk];
        for a in 0..nk {
            for b in 0..a {
                if reach[a][b] && !(b + 1..a).any(|y| reach[a][y] && reach[y][b]) {
                    write_reads[a].push(b);
                }
                if reach[b][a] && !(b + 1..a).any(|y| reach[b][y] && reach[y][a]) {
                    skip_reads[a].push(b);
                }
            }
        }
        let mut last_read: Vec<Option<usize>> = vec![None; nk];
        for a in 0..nk {
            for &b in write_reads[a].iter().chain(&skip_reads[a]) {
                last_read[b] = Some(last_read[b].map_or(a, |x| x.max(a)));
            }
        }
        let mut bit = vec![None; nk];
        let mut held: Vec<(u32, usize)> = Vec::new(); // (bit, last read)
        for i in 0..nk {
            held.retain(|&(_, last)| last >= i);
            if let Some(last) = last_read[i] {
                let Some(b) = (0..64u32).find(|b| held.iter().all(|h| h.0 != *b)) else {
                    return Err(Error::new(
                        ErrorKind::Limit,
                        "dependentRequired: more than 64 keys whose presence later keys \
                         depend on at once",
                    ));
                };
                bit[i] = Some(b);
                held.push((b, last));
            }
        }
        let cond = |reads: &[usize], f: fn(u32) -> ParamCond| {
            reads.iter().fold(ParamCond::True, |c, &b| {
                let t = f(bit[b].unwrap_or(0));
                match c {
                    ParamCond::True => t,
                    c => ParamCond::And(Box::new(c), Box::new(t)),
                }
            })
        };
        let write = (0..nk)
            .map(|a| (!impossible[a]).then(|| cond(&write_reads[a], ParamCond::BitSet)))
            .collect();
        // A key that a required key needs is never skipped.
        let needed = |b: usize| (0..nk).any(|r| named[r].2 && reach[r][b]);
        let skip = (0..nk)
            .map(|a| (!needed(a)).then(|| cond(&skip_reads[a], ParamCond::BitClear)))
            .collect();
        Ok(Deps { param: bit.iter().any(Option::is_some), bit, write, skip })
    }

    /// The conditions to write and to skip named key `i`.
    fn at(&self, i: usize) -> (Option<ParamCond>, Option<ParamCond>) {
        (self.write[i].clone(), self.skip[i].clone())
    }

    /// The parameter passed on after named key `i` is written or skipped.
    fn arg(&self, i: usize, written: bool) -> ParamExpr {
        match (self.bit[i], written) {
            (Some(b), true) => ParamExpr::SetBit(b),
            (Some(b), false) => ParamExpr::ClearBit(b),
            (None, _) => ParamExpr::SelfRef,
        }
    }
}

/// Appends `x` in decimal (`format!` for the state names instead: 669.5 -> 684.3 M
/// instructions of compile, callgrind over every 40th MaskBench file).
fn push_decimal(out: &mut String, x: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut x = x;
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}
